/*
 * The scenarios of helper_scenarios.c, by name.  The helper's table and
 * the tests that run them (integration.c) both spell them through these,
 * so neither can name one the other does not know.
 */
#ifndef SCL_TESTS_SCENARIOS_H
#define SCL_TESTS_SCENARIOS_H

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

#endif
