/* SPDX-License-Identifier: MIT */
/*
 * For the helper programs the tests run under the shim: REQUIRE(cond)
 * says which check failed, where, and with what errno, then exits 1 at
 * once (no atexit handler, no exit hook of the library under test).
 */
#ifndef SCL_TESTS_REQUIRE_H
#define SCL_TESTS_REQUIRE_H

#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define REQUIRE(cond)                                                                                                  \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            require_failed(__LINE__, #cond);                                                                           \
    } while (0)

extern char *program_invocation_short_name;

__attribute__((noreturn, unused)) static void require_failed(int line, const char *what)
{
    fprintf(stderr, "%s:%d: failed: %s (errno %d: %s)\n", program_invocation_short_name, line, what, errno,
            strerror(errno));
    fflush(stderr);
    _exit(1);
}

#endif
