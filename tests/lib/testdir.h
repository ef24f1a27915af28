/* SPDX-License-Identifier: MIT */
/* Scratch base directories for tests: one per test, removed after. */
#ifndef SCL_TESTDIR_H
#define SCL_TESTDIR_H

/* Makes a fresh directory under $TMPDIR or /tmp; its path, malloc'ed. */
char *testdir_make(void);

/* Number of entries in DIR (not counting "." and ".."); -1 on error. */
int testdir_count(const char *dir);

/* Number of entries in DIR whose name starts with PREFIX; -1 on error. */
int testdir_count_prefix(const char *dir, const char *prefix);

/* The first claim directory (swerve-claim.*) in BASE, malloc'ed, or NULL. */
char *testdir_claim_dir(const char *base);

/* 1 when claims/NAME exists in the first claim directory of BASE, 0 when
 * it does not, -1 when BASE has no claim directory. */
int testdir_claim_exists(const char *base, const char *name);

/* A Check fixture: testdir_base, a fresh directory, is SWERVE_TMPDIR for
 * the test; it is removed after. */
extern char *testdir_base;
void testdir_setup(void);
void testdir_teardown(void);

/* rm -rf DIR, then frees it. */
void testdir_remove(char *dir);

#endif
