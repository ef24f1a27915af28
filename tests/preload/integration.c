/* SPDX-License-Identifier: MIT */
/*
 * Integration tests: helper programs run under LD_PRELOAD with an
 * explicit environment (this Check runner itself is never preloaded: its
 * own fork, wait and exit must not go through the hooks).  Every run is
 * bounded in time and killed, with its process group, when it overstays.
 *
 * Environment (set by `make check`): SCL_PRELOAD, the library; SCL_HELPERS,
 * where the helpers are; SCL_ASAN_RUNTIME, libasan to preload first in a
 * sanitizer build.
 */
#include "config.h"

#include "harness.h"
#include "clock.h"
#include "scenarios.h"
#include "testdir.h"

#include "run_suite.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run {
    int status; /* exit code, or 128 + signal */
    char out[16384], err[16384];
};

static void drain(int *fd, char *buf, size_t cap, size_t *len)
{
    ssize_t n = read(*fd, buf + *len, cap - 1 - *len);

    if (n > 0) {
        *len += (size_t)n;
        buf[*len] = '\0';
    } else if (n == 0 || errno != EINTR) {
        close(*fd);
        *fd = -1;
    }
}

/* Runs HELPER ARGS... preloaded (or not), for at most TIMEOUT seconds, in
 * a base directory of its own; EXTRA_ENV as harness_env() takes it. */
static void run_helper(struct run *r, int preload, const char *helper, const char *const *args,
                       const char *const *extra_env, double timeout)
{
    char path[4096];
    const char *argv[16];
    struct harness_env env;
    int out[2], err[2], n = 0;
    size_t out_len = 0, err_len = 0;
    double deadline = now_s() + timeout;
    pid_t pid;

    harness_program(path, sizeof path, helper);
    argv[n++] = path;
    for (int i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    harness_env(&env, testdir_base, preload, extra_env);

    ck_assert_int_eq(pipe(out), 0);
    ck_assert_int_eq(pipe(err), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0); /* so a timeout kills the helper's children too */
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        execve(path, (char *const *)argv, env.vars);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    memset(r, 0, sizeof *r);
    while (out[0] >= 0 || err[0] >= 0) {
        struct pollfd p[2] = { { .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN } };
        double left = deadline - now_s();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            break;
        }
        if (poll(p, 2, (int)(left * 1000) + 1) < 0)
            continue;
        if (p[0].revents)
            drain(&out[0], r->out, sizeof r->out, &out_len);
        if (p[1].revents)
            drain(&err[0], r->err, sizeof r->err, &err_len);
    }
    if (out[0] >= 0)
        close(out[0]);
    if (err[0] >= 0)
        close(err[0]);
    {
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    ck_assert_msg(now_s() < deadline, "%s %s: killed after %.0f s", helper, args[0], timeout);
}

/* A preloaded helper run that must succeed quietly, print EXPECTED, and
 * leave no claim directory behind. */
static void expect_run(const char *helper, const char *const *args, const char *expected, double timeout)
{
    static struct run r;

    run_helper(&r, 1, helper, args, NULL, timeout);
    ck_assert_msg(r.status == 0, "%s %s: status %d, stderr: %s", helper, args[0], r.status, r.err);
    ck_assert_msg(r.err[0] == '\0', "%s %s wrote to stderr: %s", helper, args[0], r.err);
    ck_assert_str_eq(r.out, expected);
    ck_assert_msg(testdir_count(testdir_base) == 0, "%s %s left %d entries in the base directory", helper, args[0],
                  testdir_count(testdir_base));
}

/* ---------------------------------------------------------- the seed */

#define SEED(example, output)                                                                                          \
    do {                                                                                                               \
        const char *args[] = { example, NULL };                                                                        \
        expect_run("preload/helper_seed", args, output, 30);                                                           \
    } while (0)

START_TEST(test_seed_guide_claims)
{
    SEED("guide-claims", "a runs the report\n"
                         "b: someone else is on it\n"
                         "c: someone else is on it\n"
                         "free again\n");
}
END_TEST

START_TEST(test_seed_guide_waiting)
{
    SEED("guide-waiting", "first: importing\n"
                          "second: waiting\n"
                          "first: done\n"
                          "second: importing\n");
}
END_TEST

START_TEST(test_seed_guide_releasing)
{
    SEED("guide-releasing", "held: true\n"
                            "held: false\n"
                            "available: true\n");
}
END_TEST

START_TEST(test_seed_class_example_1)
{
    SEED("class-1", "bool(true)\n"
                    "bool(true)\n"
                    "NULL\n"
                    "bool(true)\n"
                    "bool(false)\n"
                    "bool(true)\n");
}
END_TEST

START_TEST(test_seed_class_example_2)
{
    SEED("class-2", "report ran\n"
                    "released: true\n");
}
END_TEST

START_TEST(test_seed_class_example_3)
{
    SEED("class-3", "import_feed ran\n"
                    "held: false\n");
}
END_TEST

START_TEST(test_loader_reports_absent_shim)
{
    static struct run r;
    const char *args[] = { "guide-claims", NULL };

    run_helper(&r, 0, "preload/helper_seed", args, NULL, 30);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "helper_seed: libswerveclaim_preload.so is not loaded\n");
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* ----------------------------------------------------- scenarios */

#define SCENARIO(...)                                                                                                  \
    do {                                                                                                               \
        const char *args[] = { __VA_ARGS__, NULL };                                                                    \
        char expected[256];                                                                                            \
        snprintf(expected, sizeof expected, "ok %s\n", args[0]);                                                       \
        expect_run("preload/helper_scenarios", args, expected, 60);                                                    \
    } while (0)

/* The scenarios that check all they need themselves: each must print
 * "ok NAME" and exit 0. */
static const char *const self_checking[] = {
    SCN_FORK_RESERVES_DIR,  SCN_LAUNCHER,         SCN_SIGNALS_DURING_WAIT,    SCN_HOST_CLOBBERS_FD,
    SCN_EXEC_LARGE_VECTORS, SCN_THREADED_FORK,    SCN_FORK_IN_SIGNAL_HANDLER, SCN_ORPHANS,
    SCN_INHERITED_HANDLE,   SCN_RETURN_FROM_MAIN, SCN_UNREAPED_HOLDER,        SCN_ERRNO_KEPT,
    SCN_FORK_DURING_POPEN,  SCN_EXEC_MAKES_PLACE, SCN_UPGRADE_KEEPS_DIR,
};

START_TEST(test_self_checking_scenario)
{
    SCENARIO(self_checking[_i]);
}
END_TEST

/* A launcher whose child claims before it exits: registered as the
 * child's parent, it hands the directory on as it ends. */
START_TEST(test_launcher_after_claim)
{
    const char *args[] = { SCN_LAUNCHER, "claimed", NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_LAUNCHER "\n", 60);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* Every entry point of the exec family (doc/HACKING.md lists them). */
static const char *const exec_entries[] = { "execl",  "execle",  "execlp",  "execv",         "execve",
                                            "execvp", "execvpe", "fexecve", "execveat-path", "execveat-empty" };

START_TEST(test_exec_releases_and_joins)
{
    const char *args[] = { SCN_EXEC_RELEASES_AND_JOINS, exec_entries[_i], NULL };

    /* The exec'd image reports first: the parent waits for it. */
    expect_run("preload/helper_scenarios", args, "ok " SCN_EXEC_IMAGE "\nok " SCN_EXEC_RELEASES_AND_JOINS "\n", 60);
}
END_TEST

/* Every other way to start a new image or a child beside a holder. */
static const struct {
    const char *how;
    int probes; /* the child runs probe-busy */
} spawn_entries[] = {
    { "posix_spawn", 1 }, { "posix_spawnp", 1 }, { "system", 1 },      { "popen", 1 },
    { "vfork", 1 },       { "clone", 1 },        { "vfork-_exit", 0 }, { "clone-_exit", 0 },
};

START_TEST(test_spawn_keeps_holding)
{
    const char *args[] = { SCN_SPAWN_KEEPS_HOLDING, spawn_entries[_i].how, NULL };

    expect_run("preload/helper_scenarios", args,
               spawn_entries[_i].probes ? "ok " SCN_PROBE_BUSY "\nok " SCN_SPAWN_KEEPS_HOLDING "\n"
                                        : "ok " SCN_SPAWN_KEEPS_HOLDING "\n",
               60);
}
END_TEST

static const char *const start_entries[] = { "execve", "posix_spawn" };

START_TEST(test_exec_near_arg_max)
{
    const char *args[] = { SCN_EXEC_NEAR_ARG_MAX, start_entries[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_PROBE_BUSY "\nok " SCN_EXEC_NEAR_ARG_MAX "\n", 60);
}
END_TEST

START_TEST(test_exec_null_env)
{
    const char *args[] = { SCN_EXEC_NULL_ENV, start_entries[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_EXEC_NULL_ENV "\n", 30);
}
END_TEST

START_TEST(test_abandoned_directory_is_swept)
{
    const char *args[] = { SCN_SWEEP, NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_HOLD_AND_WAIT "\nok " SCN_SWEEP "\n", 60);
}
END_TEST

START_TEST(test_stress_sigkill)
{
    static struct run r;
    const char *soak = getenv("SCL_SOAK_SECONDS");
    const char *args[] = { SCN_STRESS, soak != NULL ? soak : "5", "10000", NULL };

    run_helper(&r, 1, "preload/helper_scenarios", args, NULL, soak != NULL ? atof(soak) * 6 + 60 : 120);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_ptr_nonnull(strstr(r.out, " 0 violations"));
    ck_assert_ptr_nonnull(strstr(r.out, " 0 stale claims left"));
    ck_assert_int_eq(testdir_count(testdir_base), 0);
    fprintf(stderr, "%s", r.out);
}
END_TEST

/* Runs the bad-base scenario into R with SWERVE_TMPDIR a file, where
 * nothing can be made, and DEBUG as SWERVE_DEBUG. */
static void run_with_file_as_base(struct run *r, const char *debug)
{
    static char tmpdir[4200], debug_env[32], file[4096];
    const char *args[] = { SCN_BAD_BASE, NULL };
    const char *env[] = { tmpdir, debug_env, NULL };
    FILE *f;

    snprintf(file, sizeof file, "%s/not-a-directory", testdir_base);
    f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(tmpdir, sizeof tmpdir, "SWERVE_TMPDIR=%s", file);
    snprintf(debug_env, sizeof debug_env, "SWERVE_DEBUG=%s", debug);
    run_helper(r, 1, "preload/helper_scenarios", args, env, 60);
    ck_assert_msg(r->status == 0, "status %d: %s", r->status, r->err);
    ck_assert_str_eq(r->out, "ok bad-base\n");
}

START_TEST(test_bad_base_is_an_error_not_a_crash)
{
    static struct run r;

    run_with_file_as_base(&r, "");
    ck_assert_str_eq(r.err, "");
    ck_assert_int_eq(testdir_count(testdir_base), 1); /* the file alone */
}
END_TEST

/* A debug line names an error as strerror(3) and errno(3) do, never by
 * its number alone: an operator reads it at 3 a.m. */
START_TEST(test_debug_names_errors)
{
    static struct run r;

    run_with_file_as_base(&r, "1");
    ck_assert_msg(strstr(r.err, "Not a directory (ENOTDIR)") != NULL, "%s", r.err);
    ck_assert_msg(strstr(r.err, "errno ") == NULL, "%s", r.err);
}
END_TEST

START_TEST(test_debug_logs_only_when_asked)
{
    static struct run r;
    const char *args[] = { SCN_INHERITED_HANDLE, NULL };
    const char *env[] = { "SWERVE_DEBUG=1", NULL };

    run_helper(&r, 1, "preload/helper_scenarios", args, env, 60);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "swerve-claim["));
    ck_assert_ptr_nonnull(strstr(r.err, "made claim directory"));
    ck_assert_ptr_nonnull(strstr(r.err, "removed claim directory"));
}
END_TEST

static const char *const exit_paths[] = { "exit", "_exit", "_Exit", "quick_exit", "exit-in-signal-handler" };

START_TEST(test_exit_path)
{
    const char *args[] = { SCN_EXIT_PATH, exit_paths[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok exit-path\n", 60);
}
END_TEST

START_TEST(test_exit_holding_many)
{
    const char *args[] = { SCN_EXIT_HOLDING_MANY, exit_paths[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok exit-holding-many\n", 60);
}
END_TEST

static const char *const reapers[] = { "waitpid", "wait", "wait3", "wait4", "waitid", "sigchld-handler" };

START_TEST(test_reap)
{
    const char *args[] = { SCN_REAP, reapers[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok reap\n", 60);
}
END_TEST

static const char *const fd_clobbers[] = { "close", "close_range", "closefrom", "dup2", "dup3", "raw-dup3" };

/* The host takes the number of the library's claims descriptor, by each
 * call that can, and once behind libc's back (noticed by a later check):
 * the library never links or unlinks in the host's directory
 * (doc/security.md, the host's descriptors). */
START_TEST(test_host_replaces_kept_fd)
{
    const char *args[] = { SCN_HOST_REPLACES_KEPT_FD, fd_clobbers[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_HOST_REPLACES_KEPT_FD "\n", 60);
}
END_TEST

static const char *const kernel_reapers[] = { "sig-ign", "nocldwait", "raw-wait4" };

/* Children none of whose ends a hook sees reaped: the master's claim
 * directory still goes with it. */
START_TEST(test_kernel_reaped_children)
{
    const char *args[] = { SCN_KERNEL_REAPED_CHILDREN, kernel_reapers[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_KERNEL_REAPED_CHILDREN "\n", 60);
}
END_TEST

static const char *const ending_modes[] = { "members", "idle" };

/* A master that ends while its workers, their own ends already run, still
 * linger (Starman on SIGTERM): nothing is left once they are all gone. */
START_TEST(test_master_ends_first)
{
    const char *args[] = { SCN_MASTER_ENDS_FIRST, ending_modes[_i], NULL };

    expect_run("preload/helper_scenarios", args, "ok " SCN_MASTER_ENDS_FIRST "\n", 60);
}
END_TEST

START_TEST(test_mutual_exclusion_processes)
{
    const char *args[] = { SCN_MUTEX_PROCESSES, "8", "1000", NULL };

    expect_run("preload/helper_scenarios", args, "processes: 8000 acquisitions, 0 violations\nok mutex-processes\n",
               240);
}
END_TEST

START_TEST(test_mutual_exclusion_threads)
{
    const char *args[] = { SCN_MUTEX_THREADS, "8", "1000", NULL };

    expect_run("preload/helper_scenarios", args, "threads: 8000 acquisitions, 0 violations\nok mutex-threads\n", 240);
}
END_TEST

/* Hand-offs: a release wakes a waiter (handoff); a holder that takes
 * its name again and again while one waits, then stops, leaves it to
 * that waiter within its turn (turn-ends-for-waiter); a waiter killed
 * in its wait never holds off a process that loops on the name
 * (killed-waiter); two processes that loop on a name take turns
 * (hot-name-shares). */
static const char *const handoffs[] = { SCN_HANDOFF, SCN_TURN_ENDS_FOR_WAITER, SCN_KILLED_WAITER, SCN_HOT_NAME_SHARES };

START_TEST(test_handoff_wakes_before_the_next_tick)
{
    static struct run r;
    char expected[64];
    const char *args[] = { handoffs[_i], NULL };

    run_helper(&r, 1, "preload/helper_scenarios", args, NULL, 60);
    fprintf(stderr, "%s", r.out);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    snprintf(expected, sizeof expected, "ok %s\n", handoffs[_i]);
    ck_assert_ptr_nonnull(strstr(r.out, expected));
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* ------------------------------------------- shapes of server (#38) */

#define SHAPE_SCENARIO(...)                                                                                            \
    do {                                                                                                               \
        const char *args[] = { __VA_ARGS__, NULL };                                                                    \
        char expected[256];                                                                                            \
        snprintf(expected, sizeof expected, "ok %s\n", args[0]);                                                       \
        expect_run("preload/helper_shapes", args, expected, 60);                                                       \
    } while (0)

/* Every way a master may start its workers without fork(). */
static const char *const spawners[] = { "posix_spawn", "posix_spawnp", "vfork", "clone", "system" };

START_TEST(test_spawn_master)
{
    SHAPE_SCENARIO(SCN_SPAWN_MASTER, spawners[_i]);
}
END_TEST

/* Every way a process detaches from the one that started it. */
static const char *const detachers[] = { "daemon", "setsid", "double-fork" };

START_TEST(test_detached_is_a_master)
{
    SHAPE_SCENARIO(SCN_DETACHED, detachers[_i]);
}
END_TEST

/* A master that leads its session and exits leaves its workers
 * draining. */
START_TEST(test_leader_master_exits)
{
    SHAPE_SCENARIO(SCN_LEADER_MASTER_EXITS);
}
END_TEST

/* A master that forks its successor and ends (php-fpm's reload in daemon
 * mode): nothing is left once the successor has ended. */
static const char *const new_master_ways[] = { "", "host-fd" };

START_TEST(test_new_master_keeps_the_directory)
{
    if (_i == 0)
        SHAPE_SCENARIO(SCN_NEW_MASTER);
    else
        SHAPE_SCENARIO(SCN_NEW_MASTER, new_master_ways[_i]);
}
END_TEST

/* The same, with a successor that leads its own session and a worker of
 * its that dropped root before the old master ended (root only). */
START_TEST(test_new_master_workers_dropped_root)
{
    if (geteuid() != 0) {
        fprintf(stderr, "new-master-dropped: not root, not run\n");
        return;
    }
    SHAPE_SCENARIO(SCN_NEW_MASTER_DROPPED);
}
END_TEST

/* vfork children that exec with a large environment leave their parent
 * no memory behind. */
START_TEST(test_vfork_env_leaks_nothing)
{
    SHAPE_SCENARIO(SCN_VFORK_ENV);
}
END_TEST

/* A master that led its session from its start is no daemon's middle
 * process: its one worker drains when it exits. */
START_TEST(test_leader_at_load)
{
    SHAPE_SCENARIO(SCN_LEADER_AT_LOAD);
}
END_TEST

/* Every way a process sends itself a fatal signal, and the signal. */
static const struct {
    const char *how;
    int sig;
} self_killers[] = {
    { "kill", SIGTERM },   { "raise", SIGTERM },    { "killpg", SIGTERM },
    { "tgkill", SIGTERM }, { "sigqueue", SIGTERM }, { "abort", SIGABRT },
};

START_TEST(test_self_kill_leaves_nothing)
{
    static struct run r;
    const char *args[] = { SCN_SELF_KILL, self_killers[_i].how, NULL };

    run_helper(&r, 1, "preload/helper_shapes", args, NULL, 60);
    ck_assert_msg(r.status == 128 + self_killers[_i].sig, "self-kill %s: status %d, stderr: %s", args[1], r.status,
                  r.err);
    ck_assert_msg(r.err[0] == '\0', "self-kill %s wrote to stderr: %s", args[1], r.err);
    ck_assert_msg(testdir_count(testdir_base) == 0, "self-kill %s left %d entries in the base directory", args[1],
                  testdir_count(testdir_base));
}
END_TEST

/* A signal to oneself that does not end the process changes nothing. */
static const char *const self_survivors[] = { "caught", "blocked", "sigchld" };

START_TEST(test_self_kill_survived_keeps_claims)
{
    SHAPE_SCENARIO(SCN_SELF_KILL_SURVIVED, self_survivors[_i]);
}
END_TEST

/* -------------------------------------------------------- draining */

#define DRAIN_SCENARIO(...)                                                                                            \
    do {                                                                                                               \
        const char *args[] = { __VA_ARGS__, NULL };                                                                    \
        char expected[256];                                                                                            \
        snprintf(expected, sizeof expected, "ok %s\n", args[0]);                                                       \
        expect_run("preload/helper_draining", args, expected, 60);                                                     \
    } while (0)

/* Every call by which a master sends a worker a drain signal. */
static const char *const drain_senders[] = { "kill", "kill-group", "killpg", "kill-own-group", "sigqueue", "tgkill" };

START_TEST(test_drain_signal)
{
    DRAIN_SCENARIO(SCN_DRAIN_SIGNAL, drain_senders[_i]);
}
END_TEST

/* A master that does nothing, probes, or sends a signal outside the set. */
static const char *const drain_non_senders[] = { "nothing", "probe", "usr1" };

START_TEST(test_drain_not_told)
{
    DRAIN_SCENARIO(SCN_DRAIN_NOT_TOLD, drain_non_senders[_i]);
}
END_TEST

START_TEST(test_drain_grandchild)
{
    DRAIN_SCENARIO(SCN_DRAIN_GRANDCHILD);
}
END_TEST

/* Where the tools read it: the worker's page of times. */
START_TEST(test_drain_noted)
{
    DRAIN_SCENARIO(SCN_DRAIN_NOTED);
}
END_TEST

/* SWERVE_CLAIM_DRAIN_SIGNALS replaces the set, however SIGUSR1 is spelt. */
static const char *const drain_sets[] = { "SWERVE_CLAIM_DRAIN_SIGNALS=usr1", "SWERVE_CLAIM_DRAIN_SIGNALS=SIGUSR1",
                                          "SWERVE_CLAIM_DRAIN_SIGNALS=10", "SWERVE_CLAIM_DRAIN_SIGNALS= sigusr1, " };

START_TEST(test_drain_signal_set)
{
    static struct run r;
    const char *args[] = { SCN_DRAIN_SIGNAL_SET, NULL }, *env[] = { drain_sets[_i], NULL };

    run_helper(&r, 1, "preload/helper_draining", args, env, 60);
    ck_assert_msg(r.status == 0, "%s: status %d: %s", drain_sets[_i], r.status, r.err);
    ck_assert_str_eq(r.out, "ok " SCN_DRAIN_SIGNAL_SET "\n");
    ck_assert_str_eq(r.err, "");
}
END_TEST

/* A value that names something that is no signal keeps the default
 * whole, and SWERVE_DEBUG says so. */
START_TEST(test_drain_signal_set_refused)
{
    static struct run r;
    const char *args[] = { SCN_DRAIN_SIGNAL, "kill", NULL };
    const char *env[] = { "SWERVE_CLAIM_DRAIN_SIGNALS=usr1,USR3", "SWERVE_DEBUG=1", NULL };

    run_helper(&r, 1, "preload/helper_draining", args, env, 60);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "ok " SCN_DRAIN_SIGNAL "\n");
    ck_assert_msg(strstr(r.err, "SWERVE_CLAIM_DRAIN_SIGNALS=usr1,USR3 names something that is no signal") != NULL, "%s",
                  r.err);
}
END_TEST

/* Every way a worker closes the listeners it inherited. */
static const char *const listener_closers[] = { "close",      "close_range",   "closefrom",        "dup2",
                                                "dup3",       "shutdown",      "dup2-copy",        "dup-copy",
                                                "fcntl-copy", "raw-copy",      "own-listener",     "close-after-vfork",
                                                "high-copy",  "high-listener", "listen-in-worker", "worker-binds" };

/* Each way, with /proc and (WITHOUT_PROC, as in a chroot) without.
 * high-copy and high-listener need a descriptor limit past 1100, and
 * hiding /proc needs root: a machine that cannot says so (SKIP, on the
 * test's log). */
static void drain_listeners_by(const char *how, int without_proc)
{
    static struct run r;
    const char *args[] = { SCN_DRAIN_LISTENERS, how, without_proc ? "without-proc" : NULL, NULL };

    run_helper(&r, 1, "preload/helper_draining", args, NULL, 60);
    if (r.status == 77 && (without_proc || strncmp(how, "high-", 5) == 0)) {
        fprintf(stderr, "%s %s%s: %s", args[0], how, without_proc ? " without-proc" : "", r.out);
        return;
    }
    ck_assert_msg(r.status == 0, "%s %s%s: status %d, stderr: %s", args[0], how, without_proc ? " without-proc" : "",
                  r.status, r.err);
    ck_assert_str_eq(r.err, "");
    ck_assert_str_eq(r.out, "ok " SCN_DRAIN_LISTENERS "\n");
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}

START_TEST(test_drain_listeners)
{
    drain_listeners_by(listener_closers[_i], 0);
}
END_TEST

START_TEST(test_drain_listeners_without_proc)
{
    drain_listeners_by(listener_closers[_i], 1);
}
END_TEST

/* closefrom() below 0 closes from 0 (glibc): the listeners too. */
static const char *const close_all_from[] = { "0", "-1" };

START_TEST(test_drain_close_all)
{
    DRAIN_SCENARIO(SCN_DRAIN_CLOSE_ALL, close_all_from[_i]);
}
END_TEST

/* A listener closed where no hook sees it, and its number taken by the
 * library's own descriptors as the worker claims. */
START_TEST(test_drain_unseen_close)
{
    DRAIN_SCENARIO(SCN_DRAIN_UNSEEN_CLOSE);
}
END_TEST

/* A worker forked, or exec'd after its fork, whose master ends. */
static const char *const orphans[] = { "fork", "exec" };

START_TEST(test_drain_orphan)
{
    DRAIN_SCENARIO(SCN_DRAIN_ORPHAN, orphans[_i]);
}
END_TEST

/* A drained worker reaped by the master's waitpid, or by the kernel
 * unseen, then its pid taken by a new worker: that one does not drain.
 * The pid comes round through ns_last_pid (root) or by forking through
 * pid_max; a machine where neither can be done says so. */
static const char *const drain_reapers[] = { "waitpid", "sigchld-ignored" };

START_TEST(test_drain_reused_pid)
{
    static struct run r;
    const char *args[] = { SCN_DRAIN_REUSED_PID, drain_reapers[_i], NULL };

    run_helper(&r, 1, "preload/helper_draining", args, NULL, 120);
    if (r.status == 77) {
        fprintf(stderr, "%s %s: %s", args[0], args[1], r.out);
        return;
    }
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, "ok " SCN_DRAIN_REUSED_PID "\n");
    ck_assert_str_eq(r.err, "");
}
END_TEST

/* ------------------------------------------------ guest manners */

/*
 * The same fork/exec/wait-heavy program with and without the shim: exit
 * statuses, wait results, errno, signal dispositions, its own descriptors
 * and its output must not change.
 */
START_TEST(test_transparent_to_the_host)
{
    static struct run with, without;
    const char *args[] = { NULL };

    run_helper(&without, 0, "preload/helper_transparency", args, NULL, 60);
    run_helper(&with, 1, "preload/helper_transparency", args, NULL, 60);
    ck_assert_int_eq(without.status, 42);
    ck_assert_int_eq(with.status, 42);
    ck_assert_str_eq(without.err, "");
    ck_assert_str_eq(with.err, "");
    ck_assert_ptr_nonnull(strstr(without.out, "fexecve: exec'd echo says hello"));
    ck_assert_str_eq(with.out, without.out);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* A library constructor that forks or exits, before or after ours. */
static const struct {
    const char *mode;
    int early_first, status;
} early_cases[] = {
    { "fork", 1, 0 }, { "fork", 0, 0 }, { "exit", 1, 5 }, { "exit", 0, 5 }, { "_exit", 1, 6 }, { "_exit", 0, 6 },
};

START_TEST(test_library_constructor_forks_or_exits)
{
    static struct run r;
    char preload[8192], mode[64];
    const char *asan = getenv("SCL_ASAN_RUNTIME"), *early = getenv("SCL_EARLY"), *shim = getenv("SCL_PRELOAD");
    const char *args[] = { "class-1", NULL }, *env[] = { preload, mode, NULL };

    ck_assert_ptr_nonnull(early);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s%s%s:%s", asan != NULL && *asan ? asan : "",
             asan != NULL && *asan ? ":" : "", early_cases[_i].early_first ? early : shim,
             early_cases[_i].early_first ? shim : early);
    snprintf(mode, sizeof mode, "EARLY_MODE=%s", early_cases[_i].mode);
    run_helper(&r, 1, "preload/helper_seed", args, env, 30);
    ck_assert_msg(r.status == early_cases[_i].status, "%s: status %d, stderr %s", preload, r.status, r.err);
    ck_assert_str_eq(r.err, "");
    if (early_cases[_i].status == 0)
        ck_assert_str_eq(r.out, "bool(true)\nbool(true)\nNULL\nbool(true)\nbool(false)\nbool(true)\n");
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/* ---------------------------------------------- a small signal stack */

/* The paths helper_guest runs in a handler on an alternate stack. */
static const char *const stack_paths[] = { "exit", "_exit", "worker-exit", "worker-_exit", "fault", "fork",      "reap",
                                           "exec", "kill",  "killpg",      "worker-close", "raise", "vfork-exec" };

/* How helper_guest ends on PATH: 7, or by the signal it raised. */
static int guest_status(const char *path)
{
    return strcmp(path, "raise") == 0 ? 128 + SIGTERM : 7;
}

/* The most the shim may add to the host's stack on any of them: the rest
 * of its work runs on a stack of its own (doc/HACKING.md, "A stack
 * budget"). */
#define STACK_BUDGET 512

/* Runs helper_guest PATH on an alternate stack of SIZE bytes, with or
 * without the shim; its status, and how many bytes of that stack it used
 * (the deepest byte that lost its paint, helper_guest.c). */
static int run_on_stack(const char *path, int preload, size_t size, size_t *used)
{
    static struct run r;
    char file[4200], size_arg[32];
    const char *args[] = { path, size_arg, file, NULL };
    unsigned char *stack = malloc(size);
    FILE *f;
    size_t i = 0;

    ck_assert_ptr_nonnull(stack);
    snprintf(file, sizeof file, "%s.stack", testdir_base);
    snprintf(size_arg, sizeof size_arg, "%zu", size);
    run_helper(&r, preload, "preload/helper_guest", args, NULL, 30);
    ck_assert_msg(strstr(r.err, "failed:") == NULL, "%s: %s", path, r.err);
    ck_assert_str_eq(r.out, preload ? "shim\n" : "");
    f = fopen(file, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, sysconf(_SC_PAGESIZE), SEEK_SET), 0);
    ck_assert_int_eq(fread(stack, 1, size, f), size);
    fclose(f);
    unlink(file);
    while (i < size && stack[i] == 0xa5)
        i++;
    *used = size - i;
    free(stack);
    return r.status;
}

static int sanitized(void)
{
    const char *asan = getenv("SCL_ASAN_RUNTIME");

    return asan != NULL && *asan != '\0';
}

/*
 * A forked child that execs a program preloading the shim (a shell's
 * pipeline) binds no libc function lazily on the way: a binding writes a
 * page of the library's GOT that the child shares with its parent, and
 * looks the symbol up through pages of every object (about ten page
 * faults in every such child).  The loader's log of the helper's
 * bindings (LD_DEBUG; the exec'd program is not asked for one) names the
 * process on each line.
 */
START_TEST(test_fork_child_binds_nothing)
{
    static struct run r;
    char output[4300], log_prefix[4200], line[8192], tag[32];
    const char *args[] = { SCN_FORK_THEN_EXEC, NULL };
    const char *env[] = { "LD_DEBUG=bindings", output, NULL };
    int child = 0, lazy = 0, logs = 0;
    struct dirent *e;
    DIR *d;

    snprintf(log_prefix, sizeof log_prefix, "%s/bindings", testdir_base);
    snprintf(output, sizeof output, "LD_DEBUG_OUTPUT=%s", log_prefix);
    run_helper(&r, 1, "preload/helper_scenarios", args, env, 60);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_int_eq(sscanf(r.out, "child %d", &child), 1);
    snprintf(tag, sizeof tag, "%d:", child);
    d = opendir(testdir_base);
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        char path[8192];
        FILE *f;
        if (strncmp(e->d_name, "bindings.", 9) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", testdir_base, e->d_name);
        f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        logs++;
        while (fgets(line, sizeof line, f) != NULL) {
            const char *start = line + strspn(line, " ");
            if (strncmp(start, tag, strlen(tag)) == 0 && strstr(line, "libswerveclaim_preload.so [0] to") != NULL) {
                fprintf(stderr, "bound lazily in the forked child: %s", line);
                lazy++;
            }
        }
        fclose(f);
        unlink(path);
    }
    closedir(d);
    ck_assert_msg(logs > 0, "the loader wrote no log to %s.*", log_prefix);
    if (sanitized()) /* instrumented code binds the sanitizer's functions as it goes */
        fprintf(stderr, "fork child: %d lazy bindings (sanitizer build: not checked)\n", lazy);
    else
        ck_assert_msg(lazy == 0, "the forked child bound %d functions lazily before its exec", lazy);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

/*
 * Each path, on a roomy stack, with the shim uses at most STACK_BUDGET
 * bytes more than without it, and ends the same way.  A sanitizer build's
 * frames are padded by design: there only the ending is compared.
 */
START_TEST(test_stack_budget)
{
    size_t with, without;
    int status_with = run_on_stack(stack_paths[_i], 1, 65536, &with);
    int status_without = run_on_stack(stack_paths[_i], 0, 65536, &without);

    fprintf(stderr, "stack %-13s without the shim %6zu bytes, with it %6zu (%+ld)\n", stack_paths[_i], without, with,
            (long)with - (long)without);
    ck_assert_int_eq(status_without, guest_status(stack_paths[_i]));
    ck_assert_int_eq(status_with, guest_status(stack_paths[_i]));
    ck_assert_int_eq(testdir_count(testdir_base), 0);
    if (!sanitized())
        ck_assert_msg(with <= without + STACK_BUDGET, "%s: %zu bytes of stack with the shim, %zu without",
                      stack_paths[_i], with, without);
}
END_TEST

/*
 * On a small alternate stack the host ends as it would without the shim:
 * MINSIGSTKSZ and SIGSTKSZ as glibc's constants and as this CPU's
 * sysconf() says, and just STACK_BUDGET more than the path needs without
 * the shim.  Where the host's own call leaves less than STACK_BUDGET
 * (on an AVX-512 machine sysconf's MINSIGSTKSZ is the kernel's signal frame
 * alone, and glibc's fork leaves 72 bytes of it), the shim is allowed to
 * differ, and the log says so.
 */
/* While the shim clears a reaped worker's 3,000 claims inside a handler
 * on the alternate stack, another SA_ONSTACK handler keeps interrupting:
 * it must nest below the first as it does without the shim, never start
 * over it at the top of the alternate stack. */
START_TEST(test_nested_handler_on_alternate_stack)
{
    size_t used;

    ck_assert_int_eq(run_on_stack("reap-nested", 0, 65536, &used), 7);
    ck_assert_int_eq(run_on_stack("reap-nested", 1, 65536, &used), 7);
    ck_assert_int_eq(testdir_count(testdir_base), 0);
}
END_TEST

START_TEST(test_small_alternate_stack)
{
    size_t sizes[] = { 2048, (size_t)sysconf(_SC_MINSIGSTKSZ), 8192, (size_t)sysconf(_SC_SIGSTKSZ), 0 }, used;
    const char *path = stack_paths[_i];

    if (sanitized())
        return; /* test_stack_budget's own runs compare the endings */
    run_on_stack(path, 0, 65536, &used);
    sizes[4] = ((used + STACK_BUDGET + 15) / 16) * 16;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t ignored;
        int without = run_on_stack(path, 0, sizes[s], &ignored), with = run_on_stack(path, 1, sizes[s], &ignored);
        int tight = without == guest_status(path) && sizes[s] < used + STACK_BUDGET;
        fprintf(stderr, "stack %-13s on %6zu bytes: status %d without the shim, %d with it%s\n", path, sizes[s],
                without, with, tight && with != without ? " (the host leaves less than the budget)" : "");
        ck_assert_msg(with == without || tight, "%s on a %zu-byte stack: status %d with the shim, %d without", path,
                      sizes[s], with, without);
        testdir_teardown();
        testdir_setup();
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("integration");
    TCase *seed = tcase_create("seed"), *life = tcase_create("lifecycle"), *excl = tcase_create("exclusion"),
          *guest = tcase_create("guest"), *drain = tcase_create("draining");

    tcase_add_checked_fixture(seed, testdir_setup, testdir_teardown);
    tcase_set_timeout(seed, 60);
    tcase_add_test(seed, test_seed_guide_claims);
    tcase_add_test(seed, test_seed_guide_waiting);
    tcase_add_test(seed, test_seed_guide_releasing);
    tcase_add_test(seed, test_seed_class_example_1);
    tcase_add_test(seed, test_seed_class_example_2);
    tcase_add_test(seed, test_seed_class_example_3);
    tcase_add_test(seed, test_loader_reports_absent_shim);
    suite_add_tcase(s, seed);

    tcase_add_checked_fixture(life, testdir_setup, testdir_teardown);
    tcase_set_timeout(life, 90);
    tcase_add_loop_test(life, test_self_checking_scenario, 0, sizeof self_checking / sizeof self_checking[0]);
    tcase_add_test(life, test_launcher_after_claim);
    tcase_add_loop_test(life, test_exec_releases_and_joins, 0, sizeof exec_entries / sizeof exec_entries[0]);
    tcase_add_loop_test(life, test_spawn_keeps_holding, 0, sizeof spawn_entries / sizeof spawn_entries[0]);
    tcase_add_loop_test(life, test_exec_near_arg_max, 0, 2);
    tcase_add_loop_test(life, test_exec_null_env, 0, 2);
    tcase_add_test(life, test_abandoned_directory_is_swept);
    tcase_add_test(life, test_transparent_to_the_host);
    tcase_add_loop_test(life, test_library_constructor_forks_or_exits, 0, sizeof early_cases / sizeof early_cases[0]);
    tcase_add_test(life, test_bad_base_is_an_error_not_a_crash);
    tcase_add_test(life, test_debug_logs_only_when_asked);
    tcase_add_test(life, test_debug_names_errors);
    tcase_add_loop_test(life, test_exit_path, 0, sizeof exit_paths / sizeof exit_paths[0]);
    tcase_add_loop_test(life, test_exit_holding_many, 0, 2); /* exit, _exit */
    tcase_add_loop_test(life, test_reap, 0, sizeof reapers / sizeof reapers[0]);
    tcase_add_loop_test(life, test_kernel_reaped_children, 0, sizeof kernel_reapers / sizeof kernel_reapers[0]);
    tcase_add_loop_test(life, test_master_ends_first, 0, sizeof ending_modes / sizeof ending_modes[0]);
    tcase_add_loop_test(life, test_host_replaces_kept_fd, 0, sizeof fd_clobbers / sizeof fd_clobbers[0]);
    tcase_add_loop_test(life, test_spawn_master, 0, sizeof spawners / sizeof spawners[0]);
    tcase_add_loop_test(life, test_detached_is_a_master, 0, sizeof detachers / sizeof detachers[0]);
    tcase_add_loop_test(life, test_new_master_keeps_the_directory, 0,
                        sizeof new_master_ways / sizeof new_master_ways[0]);
    tcase_add_test(life, test_vfork_env_leaks_nothing);
    tcase_add_test(life, test_new_master_workers_dropped_root);
    tcase_add_test(life, test_leader_at_load);
    tcase_add_test(life, test_leader_master_exits);
    tcase_add_loop_test(life, test_self_kill_leaves_nothing, 0, sizeof self_killers / sizeof self_killers[0]);
    tcase_add_loop_test(life, test_self_kill_survived_keeps_claims, 0,
                        sizeof self_survivors / sizeof self_survivors[0]);
    suite_add_tcase(s, life);

    tcase_add_checked_fixture(drain, testdir_setup, testdir_teardown);
    tcase_set_timeout(drain, 150);
    tcase_add_loop_test(drain, test_drain_signal, 0, sizeof drain_senders / sizeof drain_senders[0]);
    tcase_add_loop_test(drain, test_drain_not_told, 0, sizeof drain_non_senders / sizeof drain_non_senders[0]);
    tcase_add_loop_test(drain, test_drain_signal_set, 0, sizeof drain_sets / sizeof drain_sets[0]);
    tcase_add_test(drain, test_drain_signal_set_refused);
    tcase_add_test(drain, test_drain_grandchild);
    tcase_add_test(drain, test_drain_noted);
    tcase_add_loop_test(drain, test_drain_reused_pid, 0, sizeof drain_reapers / sizeof drain_reapers[0]);
    tcase_add_loop_test(drain, test_drain_orphan, 0, sizeof orphans / sizeof orphans[0]);
    tcase_add_loop_test(drain, test_drain_listeners, 0, sizeof listener_closers / sizeof listener_closers[0]);
    tcase_add_loop_test(drain, test_drain_listeners_without_proc, 0,
                        sizeof listener_closers / sizeof listener_closers[0]);
    tcase_add_loop_test(drain, test_drain_close_all, 0, sizeof close_all_from / sizeof close_all_from[0]);
    tcase_add_test(drain, test_drain_unseen_close);
    suite_add_tcase(s, drain);

    tcase_add_checked_fixture(excl, testdir_setup, testdir_teardown);
    tcase_set_timeout(excl, 300);
    tcase_add_test(excl, test_mutual_exclusion_processes);
    tcase_add_test(excl, test_mutual_exclusion_threads);
    tcase_add_loop_test(excl, test_handoff_wakes_before_the_next_tick, 0, sizeof handoffs / sizeof handoffs[0]);
    tcase_add_test(excl, test_stress_sigkill);
    suite_add_tcase(s, excl);

    tcase_add_checked_fixture(guest, testdir_setup, testdir_teardown);
    tcase_set_timeout(guest, 120);
    tcase_add_loop_test(guest, test_stack_budget, 0, sizeof stack_paths / sizeof stack_paths[0]);
    tcase_add_loop_test(guest, test_small_alternate_stack, 0, sizeof stack_paths / sizeof stack_paths[0]);
    tcase_add_test(guest, test_nested_handler_on_alternate_stack);
    tcase_add_test(guest, test_fork_child_binds_nothing);
    suite_add_tcase(s, guest);
    return s;
}

int main(void)
{
    return run_suite(suite());
}
