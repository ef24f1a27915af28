/* SPDX-License-Identifier: MIT */
/*
 * A namespace of a test's own, whatever the store: a fresh SWERVE_TMPDIR
 * for the filesystem's, a fresh SWERVE_CLAIM_SCOPE in the database when
 * SWERVE_CLAIM_STORE names one (tests/pg/pg.sh).  A Check fixture; the
 * library reads the variable on its first call, after it.
 */
#ifndef SCL_TESTS_NAMESPACE_H
#define SCL_TESTS_NAMESPACE_H

/* 1 when the tests run against PostgreSQL. */
int namespace_shared_store(void);

void namespace_setup(void);
void namespace_teardown(void);

#endif
