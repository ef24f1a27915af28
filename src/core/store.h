/* SPDX-License-Identifier: MIT */
/*
 * The claim store: where claims live.  The public API (api.c) and the
 * process lifecycle (src/preload) talk only to this interface, so that a
 * second store (PostgreSQL advisory locks, for servers on several
 * machines) can plug in beside the filesystem one without touching them.
 * What a store does for the tools is in store_admin.h.
 *
 * Keys and wait state are the store's own: the callers only hold them.
 */
#ifndef SCL_STORE_H
#define SCL_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* A claim name as a store knows it: made by key_new(), once per handle. */
struct scl_key;

struct scl_store_ops {
    /* ---- claims: called by the API (never from a hook) */

    /* NULL with errno (ENOMEM) when it cannot be made. */
    struct scl_key *(*key_new)(const char *name, size_t len);
    void (*key_free)(struct scl_key *key);
    /* Takes the name once for process SELF (the caller's pid): 0, or -1
     * with errno EWOULDBLOCK when a live process holds it, or the system
     * error.  DEADLINE is when the acquire gives up (CLOCK_MONOTONIC
     * nanoseconds), 0 when it does not wait at all, -1 never: a store
     * whose try is a round trip to a server ends it by then (ETIMEDOUT),
     * whatever the server waits for. */
    int (*try_acquire)(struct scl_key *key, pid_t self, int64_t deadline);
    /* Gives up a name this process holds: 0 (also when it is no longer
     * this process's), or -1 with errno. */
    int (*release)(struct scl_key *key);
    /* 1 nobody holds the name, 0 somebody does, -1 with errno.  KEY may
     * keep what was seen (a live holder, a registered name). */
    int (*available)(struct scl_key *key);
    /* The fencing token of this process's hold of the name (the API has
     * checked that it holds it): greater than every earlier hold's in the
     * store's namespace, the same for the rest of the hold; 0 with errno
     * when a store that issues it on demand cannot (PostgreSQL). */
    uint64_t (*token)(const struct scl_key *key);
    /* Waits for the name until DEADLINE (CLOCK_MONOTONIC nanoseconds; -1
     * for ever), after try_acquire() said EWOULDBLOCK: 0 once it is this
     * process's, or -1 with errno ETIMEDOUT or the system error.  A
     * signal does not end the wait.  How to wait is the store's: the
     * filesystem sleeps on a futex, PostgreSQL queues in the server. */
    int (*acquire_wait)(struct scl_key *key, pid_t self, int64_t deadline);
    /* swerve_claim_wait_fd(): a descriptor that becomes readable once the
     * name may have come free since try_acquire() last said EWOULDBLOCK
     * for process SELF (at once when it is free now), or -1 with errno.
     * The store's next try_acquire() of KEY takes what woke it. */
    int (*wait_fd)(struct scl_key *key, pid_t self);
    /* Closes what wait_fd() opened for KEY, if anything: the wait is over
     * (the name was taken, or the waiter gave up). */
    void (*wait_end)(struct scl_key *key);
    /* 0 when a hold the API recorded has been lost behind its back (the
     * session that held it ended), else 1.  No round trip: it is called
     * as often as the application likes. */
    int (*held)(const struct scl_key *key);
    /* swerve_claim_draining() (drain.h): what the store was told of this
     * process, SELF (SCL_DRAIN_SIGNALLED: its master's mark,
     * SCL_DRAIN_OPERATOR: an operator's word), once it has kept FOUND,
     * the reasons the process found itself (0: none), for the tools to
     * show; 0 from a store that keeps none.  No system call: it is asked
     * as often as the application likes. */
    unsigned (*drain_told)(pid_t self, unsigned found);

    /* ---- the process lifecycle: called by the hooks.  Every one of these
     * may run in a signal handler, or in the child of a fork another thread
     * made: async-signal-safe (no allocation, no stdio, no lock but
     * scl_lock()), no network, and errno as it was (a store that has
     * nothing to do does not even touch errno: in a forked child, that
     * write would cost a page fault).  They never fail the host's call: a
     * failure is a SWERVE_DEBUG line at most. */

    /* At load, in the constructor or the first hook, of the image that
     * has just started in process SELF: reads what the environment named
     * (settings.h), opens nothing. */
    void (*at_load)(pid_t self);
    /* Before every fork, in the parent: what its children must share is
     * settled once this returns (made, or its place reserved for the first
     * of them that needs it).  Cheap once done: a server forks often. */
    void (*before_fork)(pid_t self);
    /* In the child, just after fork: writes nothing it need not (each page
     * written costs a copy-on-write fault, on the host's hot path). */
    void (*after_fork_in_child)(void);
    /* This process reaped CHILD (it exited or was killed): what CHILD held
     * is free before the host's wait call returns.  STATUS: how it ended,
     * as wait(2) gives it, or -1 when the call could not tell. */
    void (*child_reaped)(pid_t child, int status);
    /* This process is about to exec: what it holds is released; what the
     * new image needs to join the same claims is kept.  Called between fork
     * and exec too: touches nothing when this process holds nothing.  1
     * when this process may have held something, else 0. */
    int (*process_execs)(void);
    /* What the exec'd image's environment must carry so that it joins the
     * same claims: 1 with *NAME and *VALUE, or 0 when nothing. */
    int (*exec_env)(const char **name, const char **value);
    /* This process is about to end (once): what it holds is released.
     * PARENT is the parent it knew, or itself once it has forked: when
     * getppid() says otherwise it is an orphan.  Nothing is handed on to
     * the children that live on: one whose own end has run may still be
     * exiting, and would never clear what it was handed. */
    void (*process_ends)(pid_t parent);
    /* This root process is about to become UID for good (real, effective
     * and saved uid): UID must still reach what this process holds. */
    void (*becoming_user)(uid_t uid);
    /* This process is about to chroot: what it must reach afterwards is
     * opened (or made) now, while its paths still lead there. */
    void (*before_chroot)(void);
    /* This process sent its child CHILD a drain signal (drain.h): kept
     * where the tools show it, if the store keeps it. */
    void (*child_draining)(pid_t child);
};

/* The store in use: the first row of stores.h whose own settings choose
 * it (PostgreSQL when SWERVE_CLAIM_STORE is set), else the last (the
 * filesystem). */
const struct scl_store_ops *scl_store(void);

/* Its row in stores.h, which scl_store_admin() reads too. */
size_t scl_store_row(void);

#endif
