/* SPDX-License-Identifier: MIT */
/* What the process lifecycle tells the public API (api.c). */
#ifndef SCL_API_H
#define SCL_API_H

/* This process's claims were all released behind the handles' backs (it
 * is about to exec): no handle holds anything any more, should the exec
 * fail.  Async-signal-safe. */
void scl_api_forget_claims(void);

#endif
