/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "namespace.h"
#include "clock.h"
#include "testdir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int namespace_shared_store(void)
{
    const char *store = getenv("SWERVE_CLAIM_STORE");

    return store != NULL && *store != '\0';
}

void namespace_setup(void)
{
    char scope[64];

    if (!namespace_shared_store()) {
        testdir_setup();
        return;
    }
    snprintf(scope, sizeof scope, "contract-%d-%.0f", (int)getpid(), now_s() * 1e6);
    ck_assert_int_eq(setenv("SWERVE_CLAIM_SCOPE", scope, 1), 0);
}

void namespace_teardown(void)
{
    if (!namespace_shared_store())
        testdir_teardown();
}
