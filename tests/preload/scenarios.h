/* SPDX-License-Identifier: MIT */
/*
 * The scenarios of helper_scenarios.c and helper_draining.c, by name.  The helper's table and
 * the tests that run them (integration.c) both spell them through these,
 * so neither can name one the other does not know.
 */
#ifndef SCL_TESTS_SCENARIOS_H
#define SCL_TESTS_SCENARIOS_H

#include <stdio.h>
#include <string.h>

#define SCN_FORK_RESERVES_DIR       "fork-reserves-dir"
#define SCN_EXEC_MAKES_PLACE        "exec-makes-place"
#define SCN_INHERITED_HANDLE        "inherited-handle"
#define SCN_LAUNCHER                "launcher"
#define SCN_EXIT_PATH               "exit-path"
#define SCN_EXIT_HOLDING_MANY       "exit-holding-many"
#define SCN_REAP                    "reap"
#define SCN_UNREAPED_HOLDER         "unreaped-holder"
#define SCN_ERRNO_KEPT              "errno-kept"
#define SCN_SIGNALS_DURING_WAIT     "signals-during-wait"
#define SCN_HOST_CLOBBERS_FD        "host-clobbers-fd"
#define SCN_HOST_REPLACES_KEPT_FD   "host-replaces-kept-fd"
#define SCN_BAD_BASE                "bad-base"
#define SCN_EXEC_RELEASES_AND_JOINS "exec-releases-and-joins"
#define SCN_EXEC_LARGE_VECTORS      "exec-large-vectors"
#define SCN_EXEC_IMAGE              "exec-image"
#define SCN_FORK_THEN_EXEC          "fork-then-exec"
#define SCN_SPAWN_KEEPS_HOLDING     "spawn-keeps-holding"
#define SCN_PROBE_BUSY              "probe-busy"
#define SCN_EXEC_NEAR_ARG_MAX       "exec-near-arg-max"
#define SCN_EXEC_NULL_ENV           "exec-null-env"
#define SCN_EXEC_ALONE              "exec-alone"
#define SCN_THREADED_FORK           "threaded-fork"
#define SCN_FORK_IN_SIGNAL_HANDLER  "fork-in-signal-handler"
#define SCN_ORPHANS                 "orphans"
#define SCN_SWEEP                   "sweep"
#define SCN_HOLD_AND_DIE            "hold-and-die"
#define SCN_HOLD_AND_WAIT           "hold-and-wait"
#define SCN_STRESS                  "stress"
#define SCN_MUTEX_PROCESSES         "mutex-processes"
#define SCN_MUTEX_THREADS           "mutex-threads"
#define SCN_HANDOFF                 "handoff"
#define SCN_TURN_ENDS_FOR_WAITER    "turn-ends-for-waiter"
#define SCN_KILLED_WAITER           "killed-waiter"
#define SCN_HOT_NAME_SHARES         "hot-name-shares"
#define SCN_RETURN_FROM_MAIN        "return-from-main"
#define SCN_KERNEL_REAPED_CHILDREN  "kernel-reaped-children"
#define SCN_FORK_DURING_POPEN       "fork-during-popen"
#define SCN_MASTER_ENDS_FIRST       "master-ends-first"
#define SCN_MASTER_ENDING           "master-ending"
#define SCN_UPGRADE_KEEPS_DIR       "upgrade-keeps-dir"
#define SCN_UPGRADE_OLD             "upgrade-old"
#define SCN_UPGRADE_NEW             "upgrade-new"

/* helper_draining's */
#define SCN_DRAIN_SIGNAL       "drain-signal"
#define SCN_DRAIN_NOT_TOLD     "drain-not-told"
#define SCN_DRAIN_SIGNAL_SET   "drain-signal-set"
#define SCN_DRAIN_GRANDCHILD   "drain-grandchild"
#define SCN_DRAIN_REUSED_PID   "drain-reused-pid"
#define SCN_DRAIN_LISTENERS    "drain-listeners"
#define SCN_DRAIN_ORPHAN       "drain-orphan"
#define SCN_DRAIN_ORPHAN_IMAGE "drain-orphan-image"
#define SCN_DRAIN_NOTED        "drain-noted"
#define SCN_DRAIN_CLOSE_ALL    "drain-close-all"
#define SCN_DRAIN_UNSEEN_CLOSE "drain-unseen-close"

/* helper_shapes' */
#define SCN_SPAWN_MASTER         "spawn-master"
#define SCN_SPAWN_WORKER         "spawn-worker"
#define SCN_DETACHED             "detached"
#define SCN_NEW_MASTER           "new-master"
#define SCN_LEADER_MASTER_EXITS  "leader-master-exits"
#define SCN_VFORK_ENV            "vfork-env"
#define SCN_NEW_MASTER_DROPPED   "new-master-dropped"
#define SCN_LEADER_AT_LOAD       "leader-at-load"
#define SCN_LEADER_AT_LOAD_IMAGE "leader-at-load-image"
#define SCN_SELF_KILL            "self-kill"
#define SCN_SELF_KILL_SURVIVED   "self-kill-survived"

/* A helper's table: each scenario by name, run with the arguments after
 * its name: 0 (then "ok NAME" is printed), or its exit status. */
struct scenario {
    const char *name;
    int (*run)(char **argv);
};

/* Runs the scenario ARGV[1] names, of the N in TABLE: its exit status (2
 * and the usage when there is none). */
#define SCENARIO_RUN(table, argc, argv) scenario_run(table, sizeof table / sizeof table[0], argc, argv)
static inline int scenario_run(const struct scenario *table, size_t n, int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < n; i++) {
        if (strcmp(argv[1], table[i].name) == 0) {
            int r = table[i].run(argv + 2);
            if (r == 0)
                printf("ok %s\n", argv[1]);
            return r;
        }
    }
    fprintf(stderr, "usage: %s SCENARIO [ARG...]\n", argv[0]);
    return 2;
}

#endif
