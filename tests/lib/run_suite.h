/* SPDX-License-Identifier: MIT */
/* The main() every Check program here shares: run SUITE, exit 0 when
 * nothing failed. */
#ifndef SCL_RUN_SUITE_H
#define SCL_RUN_SUITE_H

#include <check.h>

static inline int run_suite(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    int failed;

    srunner_run_all(runner, CK_NORMAL);
    failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}

#endif
