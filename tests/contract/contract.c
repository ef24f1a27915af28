/* SPDX-License-Identifier: MIT */
/*
 * The public API's contract, whatever the store: this program runs once
 * against the filesystem store (make check) and once against PostgreSQL
 * (tests/pg/pg.sh sets SWERVE_CLAIM_STORE).  Linked directly, without
 * hooks: each test runs in its own forked child (Check's default), in a
 * fresh SWERVE_TMPDIR or a fresh SWERVE_CLAIM_SCOPE.
 */
#include "config.h"

#include "swerve/claim.h"
#include "clock.h"
#include "namespace.h"
#include "wait_child.h"

#include "run_suite.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

START_TEST(test_new_rejects_bad_names)
{
    char *big = malloc(SWERVE_CLAIM_NAME_MAX + 2);
    struct swerve_claim *c;

    errno = 0;
    ck_assert_ptr_null(swerve_claim_new(NULL));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(swerve_claim_new(""));
    ck_assert_int_eq(errno, EINVAL);
    memset(big, 'x', SWERVE_CLAIM_NAME_MAX + 1);
    big[SWERVE_CLAIM_NAME_MAX + 1] = '\0';
    errno = 0;
    ck_assert_ptr_null(swerve_claim_new(big));
    ck_assert_int_eq(errno, ENAMETOOLONG);
    big[SWERVE_CLAIM_NAME_MAX] = '\0';
    c = swerve_claim_new(big);
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(swerve_claim_name(c), big);
    ck_assert_ptr_ne(swerve_claim_name(c), big);
    swerve_claim_free(c);
    free(big);
}
END_TEST

/* The class reference's Example 1, as a contract. */
START_TEST(test_two_handles_conflict_in_one_process)
{
    struct swerve_claim *mine = swerve_claim_new("import");
    struct swerve_claim *yours = swerve_claim_new("import");

    ck_assert_int_eq(swerve_claim_available(mine), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(mine, 0.0), mine);
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(yours, 0.0));
    ck_assert_int_eq(errno, EWOULDBLOCK);
    ck_assert_int_eq(swerve_claim_held(mine), 1);
    ck_assert_int_eq(swerve_claim_held(yours), 0);
    ck_assert_int_eq(swerve_claim_available(mine), 0);
    ck_assert_int_eq(swerve_claim_available(yours), 0);
    ck_assert_ptr_eq(swerve_claim_acquire(mine, 0.0), mine); /* held already */
    ck_assert_int_eq(swerve_claim_release(mine), 0);
    ck_assert_int_eq(swerve_claim_held(mine), 0);
    ck_assert_int_eq(swerve_claim_release(mine), 0); /* not held: nothing */
    ck_assert_ptr_eq(swerve_claim_acquire(yours, 0.0), yours);
    swerve_claim_free(yours); /* releases */
    ck_assert_int_eq(swerve_claim_available(mine), 1);
    swerve_claim_free(mine);
    swerve_claim_free(NULL);
}
END_TEST

/* Fencing tokens: 0 unless held, fixed while held, and greater with every
 * hold of the name, by another handle, another process, or after a dead
 * holder is cleared. */
START_TEST(test_token_grows_with_every_hold)
{
    struct swerve_claim *a = swerve_claim_new("tok"), *b = swerve_claim_new("tok");
    uint64_t first, second, dead;
    int report[2], status;
    pid_t child;

    ck_assert(swerve_claim_token(a) == 0);
    ck_assert_ptr_eq(swerve_claim_acquire(a, 0.0), a);
    first = swerve_claim_token(a);
    ck_assert(first > 0);
    ck_assert(swerve_claim_token(a) == first);
    ck_assert(swerve_claim_token(b) == 0);
    ck_assert_int_eq(swerve_claim_release(a), 0);
    ck_assert(swerve_claim_token(a) == 0);
    ck_assert_ptr_eq(swerve_claim_acquire(b, 0.0), b);
    second = swerve_claim_token(b);
    ck_assert(second > first);
    ck_assert_int_eq(swerve_claim_release(b), 0);

    /* A child takes it, says its token, and dies holding it (no hooks
     * here: a stale claim on disk, a session the server ends). */
    ck_assert_int_eq(pipe(report), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        uint64_t mine;
        if (swerve_claim_token(a) != 0 || swerve_claim_acquire(a, 0.0) != a)
            _exit(1);
        mine = swerve_claim_token(a);
        _exit(write(report[1], &mine, sizeof mine) == (ssize_t)sizeof mine ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(read(report[0], &dead, sizeof dead), (ssize_t)sizeof dead);
    ck_assert(dead > second);
    /* Free at once on disk; within milliseconds in a database, which ends
     * the dead child's session on its own time. */
    ck_assert_ptr_eq(swerve_claim_acquire(b, namespace_shared_store() ? 5.0 : 0.0), b);
    ck_assert(swerve_claim_token(b) > dead);
    close(report[0]);
    close(report[1]);
    swerve_claim_free(a);
    swerve_claim_free(b);
}
END_TEST

START_TEST(test_acquire_rejects_bad_timeouts)
{
    struct swerve_claim *c = swerve_claim_new("t");

    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(c, -1.0));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(c, NAN));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(swerve_claim_held(c), 0);
    swerve_claim_free(c);
}
END_TEST

START_TEST(test_timeout_passes)
{
    struct swerve_claim *a = swerve_claim_new("busy"), *b = swerve_claim_new("busy");
    double t0;

    ck_assert_ptr_eq(swerve_claim_acquire(a, 0.0), a);
    t0 = now_s();
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(b, 0.15));
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert(now_s() - t0 >= 0.15);
    swerve_claim_free(a);
    swerve_claim_free(b);
}
END_TEST

START_TEST(test_success_keeps_errno)
{
    struct swerve_claim *c = swerve_claim_new("errno");

    errno = 4242;
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_int_eq(swerve_claim_available(c), 0);
    ck_assert_int_eq(swerve_claim_release(c), 0);
    swerve_claim_free(c);
    ck_assert_int_eq(errno, 4242);
}
END_TEST

START_TEST(test_long_names_differing_at_the_end)
{
    char a[SWERVE_CLAIM_NAME_MAX + 1];
    struct swerve_claim *x, *y;

    memset(a, 'n', SWERVE_CLAIM_NAME_MAX);
    a[SWERVE_CLAIM_NAME_MAX] = '\0';
    x = swerve_claim_new(a);
    a[SWERVE_CLAIM_NAME_MAX - 1] = 'm';
    y = swerve_claim_new(a);
    ck_assert_ptr_eq(swerve_claim_acquire(x, 0.0), x);
    ck_assert_ptr_eq(swerve_claim_acquire(y, 0.0), y);
    swerve_claim_free(x);
    swerve_claim_free(y);
}
END_TEST

START_TEST(test_forked_child_holds_nothing)
{
    struct swerve_claim *c = swerve_claim_new("leader");
    pid_t child;

    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c); /* makes the directory */
    child = fork();
    if (child == 0) {
        int ok = swerve_claim_held(c) == 0 && swerve_claim_release(c) == 0 && swerve_claim_acquire(c, 0.0) == NULL &&
                 errno == EWOULDBLOCK && swerve_claim_available(c) == 0;
        exit(ok ? 0 : 1);
    }
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(swerve_claim_held(c), 1); /* the parent keeps it */
    ck_assert_int_eq(swerve_claim_available(c), 0);
    swerve_claim_free(c);
}
END_TEST

/* A waiter takes the name as soon as its holder lets go, not at its next
 * poll or its deadline. */
START_TEST(test_wait_ends_when_the_holder_lets_go)
{
    struct swerve_claim *c = swerve_claim_new("hand-off");
    int ready[2];
    char byte;
    double t0;
    pid_t child;

    /* The parent uses the store first: without hooks, a local claim
     * directory is shared with the children forked after it was made. */
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_int_eq(swerve_claim_release(c), 0);
    ck_assert_int_eq(pipe(ready), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int ok = swerve_claim_acquire(c, 0.0) == c && write(ready[1], "x", 1) == 1;
        usleep(300 * 1000);
        _exit(ok && swerve_claim_release(c) == 0 ? 0 : 1);
    }
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    t0 = now_s();
    ck_assert_ptr_eq(swerve_claim_acquire(c, 30.0), c);
    ck_assert(now_s() - t0 >= 0.2);
    ck_assert_msg(now_s() - t0 < 10.0, "waited %.3f s for a claim released after 0.3 s", now_s() - t0);
    ck_assert_int_eq(wait_exit_code(child), 0);
    swerve_claim_free(c);
}
END_TEST

static void tick(int sig)
{
    (void)sig;
}

/* A signal the host handles does not end the wait, nor make it fail with
 * EINTR: the Swerve Claim waits out its timeout. */
START_TEST(test_signals_do_not_end_the_wait)
{
    struct swerve_claim *a = swerve_claim_new("busy"), *b = swerve_claim_new("busy");
    struct sigaction sa = { .sa_handler = tick }; /* no SA_RESTART */
    struct itimerval every_50ms = { { 0, 50000 }, { 0, 50000 } }, off = { { 0, 0 }, { 0, 0 } };
    double t0;

    ck_assert_ptr_eq(swerve_claim_acquire(a, 0.0), a);
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
    ck_assert_int_eq(setitimer(ITIMER_REAL, &every_50ms, NULL), 0);
    t0 = now_s();
    errno = 0;
    ck_assert_ptr_null(swerve_claim_acquire(b, 0.4));
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert(now_s() - t0 >= 0.4);
    ck_assert_int_eq(setitimer(ITIMER_REAL, &off, NULL), 0);
    swerve_claim_free(a);
    swerve_claim_free(b);
}
END_TEST

/* Names are bytes: not every name is UTF-8, and near names stay apart. */
START_TEST(test_names_are_bytes)
{
    struct swerve_claim *a = swerve_claim_new("caf\xe9"), *b = swerve_claim_new("caf\xe8"),
                        *c = swerve_claim_new("caf\xc3\xa9");

    ck_assert_ptr_eq(swerve_claim_acquire(a, 0.0), a);
    ck_assert_ptr_eq(swerve_claim_acquire(b, 0.0), b);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_str_eq(swerve_claim_name(a), "caf\xe9");
    swerve_claim_free(a);
    swerve_claim_free(b);
    swerve_claim_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create(namespace_shared_store() ? "contract (PostgreSQL store)" : "contract (filesystem store)");
    TCase *api = tcase_create("api");

    tcase_add_checked_fixture(api, namespace_setup, namespace_teardown);
    tcase_set_timeout(api, 60);
    tcase_add_test(api, test_new_rejects_bad_names);
    tcase_add_test(api, test_two_handles_conflict_in_one_process);
    tcase_add_test(api, test_acquire_rejects_bad_timeouts);
    tcase_add_test(api, test_token_grows_with_every_hold);
    tcase_add_test(api, test_timeout_passes);
    tcase_add_test(api, test_success_keeps_errno);
    tcase_add_test(api, test_long_names_differing_at_the_end);
    tcase_add_test(api, test_forked_child_holds_nothing);
    tcase_add_test(api, test_wait_ends_when_the_holder_lets_go);
    tcase_add_test(api, test_signals_do_not_end_the_wait);
    tcase_add_test(api, test_names_are_bytes);
    suite_add_tcase(s, api);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
