/* SPDX-License-Identifier: MIT */
/* The library is built with -fvisibility=hidden: only what is marked
 * here is exported (the public API, and the libc names it hooks). */
#ifndef SCL_EXPORT_H
#define SCL_EXPORT_H

#define SCL_EXPORT __attribute__((visibility("default")))

#endif
