/* SPDX-License-Identifier: MIT */
/*
 * The prefork server (prefork_server.c) under the shim, in the ways
 * real servers run: daemonized or not, reaping in a SIGCHLD handler, in
 * the main loop or not at all, dropping privileges, closing every
 * descriptor, chrooting, exec'ing helpers, re-exec'ing itself.  Each test
 * checks what a user would: exactly one worker runs the nightly report, a
 * SIGKILLed holder's claim is free again as soon as its parent reaps it,
 * and a stopped server leaves no claim directory behind.  It listens on
 * 127.0.0.1 only, and every wait is bounded.
 */
#include "config.h"

#include "clock.h"
#include "harness.h"
#include "testdir.h"

#include "run_suite.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *base, *scratch;
static struct server srv;

static void setup(void)
{
    base = testdir_make();
    scratch = testdir_make();
    chmod(base, 0755); /* workers that drop privileges must reach it */
}

static void teardown(void)
{
    if (srv.master > 0)
        server_stop(&srv);
    memset(&srv, 0, sizeof srv);
    testdir_remove(base);
    testdir_remove(scratch);
}

static void start(const char *const *args)
{
    ck_assert_msg(server_start(&srv, base, scratch, args) == 0, "the server did not start");
}

/* Says on standard error what is in the base and in claim directory DIR,
 * and whose it is, for a failure to show. */
static void show_dir(const char *dir)
{
    char cmd[8400];

    snprintf(cmd, sizeof cmd,
             "ls -la %s %s %s/claims >&2; getfacl -p %s %s/claims >&2; head -v -n 1 %s/claims/.holder.* >&2", base, dir,
             dir, dir, dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "(ls, getfacl or head failed: the listing above is not all)\n");
}

static void stop_and_check_clean(void)
{
    char *dir;

    ck_assert_msg(server_stop(&srv) == 0, "the server did not stop on SIGTERM");
    srv.master = 0;
    dir = testdir_claim_dir(base);
    if (dir != NULL) {
        show_dir(dir); /* what was left, and whose it was */
        free(dir);
        ck_abort_msg("a claim directory was left behind");
    }
}

static void get(const char *path, char *body, size_t cap)
{
    ck_assert_msg(http_get(srv.port, path, body, cap) == 0, "GET %s failed", path);
}

struct request {
    int port;
    char body[256];
};

static void *request_report(void *arg)
{
    struct request *r = arg;

    if (http_get(r->port, "/report", r->body, sizeof r->body) != 0)
        snprintf(r->body, sizeof r->body, "request failed\n");
    return NULL;
}

/* 8 concurrent /report: exactly one runner, the others told so.
 * Returns the runner's pid. */
static int exactly_one_runs(const char *runner)
{
    enum { n = 8 };
    struct request req[n];
    pthread_t t[n];
    int runs = 0, others = 0, pid = 0;
    char runs_text[64];

    snprintf(runs_text, sizeof runs_text, "%s ", runner);
    for (int i = 0; i < n; i++) {
        req[i].port = srv.port;
        ck_assert_int_eq(pthread_create(&t[i], NULL, request_report, &req[i]), 0);
    }
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        if (strstr(req[i].body, "runs the report") != NULL && strncmp(req[i].body, runs_text, strlen(runs_text)) == 0) {
            runs++;
            pid = atoi(req[i].body + strlen(runs_text));
        } else if (strstr(req[i].body, "someone else is on it") != NULL)
            others++;
        else
            ck_abort_msg("unexpected answer: %s", req[i].body);
    }
    ck_assert_int_eq(runs, 1);
    ck_assert_int_eq(others, n - 1);
    return pid;
}

/* Waits (at most MS) until /status says WANT; returns how long it took. */
static double wait_status(const char *want, double ms)
{
    double t0 = now_s();
    char body[64];

    while ((now_s() - t0) * 1e3 < ms) {
        get("/status", body, sizeof body);
        if (strncmp(body, want, strlen(want)) == 0)
            return (now_s() - t0) * 1e3;
        usleep(5000);
    }
    ck_abort_msg("/status never said %s", want);
    return -1;
}

/* HOLDER, running a long report, is SIGKILLed: the claim is free again
 * once its parent reaps it (or, nobody reaping, as it is dead), and the
 * next /report runs. */
static void kill_and_see_freed(int holder, double within_ms)
{
    char body[256];

    (void)wait_status("held", 1000);
    ck_assert_int_eq(kill(holder, SIGKILL), 0);
    {
        double took = wait_status("free", within_ms);
        fprintf(stderr, "claim free %.1f ms after SIGKILL\n", took);
    }
    get("/report", body, sizeof body);
    ck_assert_msg(strstr(body, "runs the report") != NULL, "after the kill: %s", body);
}

static void killed_holder_frees_the_claim(double within_ms)
{
    char body[256];
    int holder;

    get("/report", body, sizeof body);
    ck_assert_msg(sscanf(body, "%*s %d runs the report", &holder) == 1, "no runner: %s", body);
    kill_and_see_freed(holder, within_ms);
}

START_TEST(test_nightly_report_runs_once)
{
    const char *args[] = { "--workers", "4", "--report-ms", "1500", NULL };

    start(args);
    (void)exactly_one_runs("worker");
    stop_and_check_clean();
}
END_TEST

static const char *const reap_modes[] = { "handler", "loop", "ignore" };

START_TEST(test_killed_holder_by_reap_mode)
{
    const char *args[] = { "--workers", "3", "--report-ms", "20000", "--reap", reap_modes[_i], NULL };

    start(args);
    /* Reaped in the handler or the 20 ms loop: at once.  Not reaped at
     * all: a dead holder counts as free all the same. */
    killed_holder_frees_the_claim(2000);
    stop_and_check_clean();
}
END_TEST

START_TEST(test_daemonized)
{
    const char *args[] = { "--daemonize", "--workers", "3", "--report-ms", "1500", NULL };
    int status;

    start(args);
    ck_assert_int_eq(waitpid(srv.launched, &status, 0), srv.launched); /* the launcher exited */
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    srv.launched = 0;
    ck_assert_int_ne(srv.master, 0);
    (void)exactly_one_runs("worker");
    stop_and_check_clean();
}
END_TEST

/* The uid a process runs as, from /proc. */
static long uid_of(int pid)
{
    char path[64], line[256];
    long uid = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", pid);
    f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Uid: %ld", &uid) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return uid;
}

/* Whether user UID can list the claims directory (in a child, as UID). */
static int can_list_as(uid_t uid, const char *claims)
{
    pid_t child = fork();
    int status;

    if (child == 0) {
        if (setgid(65534) != 0 || setuid(uid) != 0)
            _exit(2);
        _exit(opendir(claims) != NULL ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) != 2);
    return WEXITSTATUS(status) == 0;
}

START_TEST(test_workers_drop_privileges)
{
    const char *args[] = { "--workers", "3", "--report-ms", "20000", "--user", "nobody", NULL };
    struct passwd *nobody = getpwnam("nobody");
    char *dir, claims[4200];
    struct stat st;
    int holder;

    if (geteuid() != 0 || nobody == NULL) {
        fprintf(stderr, "SKIP test_workers_drop_privileges: needs root and a user nobody\n");
        return;
    }
    start(args);
    holder = exactly_one_runs("worker");
    ck_assert_int_eq(uid_of(holder), (long)nobody->pw_uid);
    /* The root master's directory: the workers' user is let in, nobody
     * else (uid 1, daemon) is. */
    dir = testdir_claim_dir(base);
    ck_assert_ptr_nonnull(dir);
    ck_assert_int_eq(stat(dir, &st), 0);
    ck_assert_int_eq(st.st_uid, 0);
    ck_assert_int_eq(st.st_mode & 0007, 0);
    snprintf(claims, sizeof claims, "%s/claims", dir);
    if (!can_list_as(nobody->pw_uid, claims) || can_list_as(1, claims)) {
        show_dir(dir);
        ck_abort_msg("%s: nobody (the workers' user) cannot list it, or uid 1 can", claims);
    }
    free(dir);
    kill_and_see_freed(holder, 2000);
    stop_and_check_clean();
}
END_TEST

static const char *const close_modes[] = { "range", "loop" };

START_TEST(test_workers_close_every_descriptor)
{
    const char *args[] = { "--workers", "3", "--report-ms", "20000", "--close-fds", close_modes[_i], NULL };

    start(args);
    killed_holder_frees_the_claim(2000);
    stop_and_check_clean();
}
END_TEST

START_TEST(test_workers_chroot)
{
    const char *args[] = { "--workers", "3", "--report-ms", "20000", "--chroot", scratch, NULL };

    if (geteuid() != 0) {
        fprintf(stderr, "SKIP test_workers_chroot: needs root\n");
        return;
    }
    start(args);
    killed_holder_frees_the_claim(2000);
    stop_and_check_clean();
}
END_TEST

START_TEST(test_exec_helpers_join_the_server)
{
    const char *args[] = { "--workers", "4", "--report-ms", "1500", "--exec-helper", NULL };

    start(args);
    (void)exactly_one_runs("helper");
    stop_and_check_clean();
}
END_TEST

START_TEST(test_master_reexecs_itself)
{
    /* A report long enough that every request of the round is answered
     * while it runs, however slowly the re-exec'd master's workers start
     * on a loaded machine (with 1.5 s, a request queued past the report's
     * end ran a second one). */
    const char *args[] = { "--workers", "3", "--report-ms", "20000", "--reexec", NULL };
    char body[64];
    int before, holder;

    start(args);
    get("/pid", body, sizeof body);
    before = atoi(body);
    ck_assert_int_eq(kill(srv.master, SIGHUP), 0);
    /* A new generation of workers, under the same master pid. */
    for (int i = 0; i < 500; i++) {
        if (http_get(srv.port, "/pid", body, sizeof body) == 0 && atoi(body) != before && kill(before, 0) != 0)
            break;
        usleep(10000);
    }
    ck_assert_int_ne(atoi(body), before);
    ck_assert_int_eq(kill(srv.master, 0), 0);
    holder = exactly_one_runs("worker");
    /* The re-exec'd master's workers share one directory: no second one,
     * and none left of the first image's. */
    ck_assert_int_eq(testdir_count_prefix(base, "swerve-claim."), 1);
    /* ... and the new image, which forked them, clears the one it reaps. */
    kill_and_see_freed(holder, 2000);
    stop_and_check_clean();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("prefork");

    tcase_add_unchecked_fixture(tc, harness_registry_begin, harness_registry_end);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_nightly_report_runs_once);
    tcase_add_loop_test(tc, test_killed_holder_by_reap_mode, 0, 3);
    tcase_add_test(tc, test_daemonized);
    tcase_add_test(tc, test_workers_drop_privileges);
    tcase_add_loop_test(tc, test_workers_close_every_descriptor, 0, 2);
    tcase_add_test(tc, test_workers_chroot);
    tcase_add_test(tc, test_exec_helpers_join_the_server);
    tcase_add_test(tc, test_master_reexecs_itself);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
