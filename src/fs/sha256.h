/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4), for claim names too long to be a file name. */
#ifndef SCL_SHA256_H
#define SCL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SCL_SHA256_LEN 32

void scl_sha256(const void *data, size_t len, uint8_t out[SCL_SHA256_LEN]);

#endif
