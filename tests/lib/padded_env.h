/* SPDX-License-Identifier: MIT */
/*
 * An environment near the kernel's limit, for the tests of a start that
 * the variable the shim adds would make too big (E2BIG).
 */
#ifndef SCL_TESTS_PADDED_ENV_H
#define SCL_TESTS_PADDED_ENV_H

#include "require.h"

#include <stdlib.h>
#include <string.h>

/* An environment that preloads the shim (as this process's does), padded
 * with "P=ppp..." strings to LENGTH bytes, in VARS (room for 72
 * pointers). */
__attribute__((unused)) static void padded_env(char **vars, size_t length)
{
    enum { chunk = 100000 }; /* under MAX_ARG_STRLEN */
    static char *pad;
    size_t n = 0;

    if (pad == NULL) {
        REQUIRE((pad = malloc(chunk + 1)) != NULL);
        memset(pad, 'p', chunk);
        memcpy(pad, "P=", 2);
        pad[chunk] = '\0';
    }
    vars[n++] = getenv("LD_PRELOAD") - strlen("LD_PRELOAD=");
    vars[n++] = getenv("SWERVE_TMPDIR") - strlen("SWERVE_TMPDIR=");
    for (; length > chunk; length -= chunk)
        vars[n++] = pad;
    REQUIRE(n < 70);
    vars[n++] = pad + chunk - length; /* the tail: "p...", no '=' but a string all the same */
    vars[n] = NULL;
}

#endif
