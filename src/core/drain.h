/* SPDX-License-Identifier: MIT */
/*
 * Whether this process is being drained (swerve_claim_draining(3)): its
 * server is stopping it gracefully, in a reload or a stop.  It learns it
 * without the host's help, from what the hooks see:
 *
 *   - its master (the process that forked it) sent it a drain signal
 *     (settings.h: SWERVE_CLAIM_DRAIN_SIGNALS) with kill, killpg, sigqueue
 *     or tgkill: the master's hooks mark it where it can see it, below;
 *   - it closed every listening socket it inherited (listeners.h);
 *   - its master is gone: the process that forked it (or, for an image
 *     exec'd by a process of its server, the one it started under) is no
 *     longer its parent.  Detaching is not draining: a session leader (a
 *     process that called setsid() or daemon(3), an image started by
 *     setsid(1) or start-stop-daemon --background) has no master, and a
 *     process that called setsid() itself and exits with one child it
 *     forked still there (the middle of a daemon's double fork) hands that
 *     child over to itself, through its page of marks; one killed, one
 *     that leaves several workers (php-cgi's parent), one that led its
 *     session from its start (systemd's), or one that leads no session,
 *     does not.  An
 *     image started otherwise than by a server (no SWERVE_CLAIM_DIR: a
 *     shell's, a supervisor's) is a master whatever its parent does;
 *   - an operator told it (swerve-claim drain), through the store
 *     (store.h: the filesystem store's page of times of the process).
 *
 * The store also keeps what the process found, and its master's mark,
 * where the tools read them (swerve-claim list's STATE draining).
 *
 * Marks.  A process maps a page at its first fork, MAP_SHARED and
 * anonymous, which every child it forks from then on shares (nothing is
 * written on either side of a fork for it, and no worker can truncate it:
 * it is no file); the page has a slot per slot of the table of children
 * (children.h), which holds the pid of the child marked there.  A mark is
 * cleared when its child is reaped, and when a child of its pid is born
 * (its child was reaped unseen, its pid reused), as the parent's fork()
 * returns: so it passes to another process only after a reap no hook saw
 * (SIGCHLD ignored, a raw wait4), to a child of its pid between its birth
 * and then, or for as long as the mark stays to one born of _Fork(),
 * which no hook sees.  A child looks for its pid in the page of the process
 * that forked it; one that forks keeps a pointer to that page as it maps
 * its own.  Workers can write the page too: a worker can make a sibling
 * believe it drains (it could unlink its claims anyway), or that its
 * master, once gone, handed it over (by writing the sibling's pid in the
 * hand-over word), never make its master do anything but store and clear
 * marks.
 *
 * Everything the hooks call here is async-signal-safe and keeps errno.
 */
#ifndef SCL_DRAIN_H
#define SCL_DRAIN_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* What says a process drains, as swerve_claim_draining() finds it. */
enum scl_drain_reason {
    SCL_DRAIN_SIGNALLED = 1, /* its master sent it a drain signal */
    SCL_DRAIN_LISTENERS = 2, /* it closed the listeners it inherited */
    SCL_DRAIN_ORPHANED = 4,  /* the process that forked it has ended */
    SCL_DRAIN_OPERATOR = 8,  /* swerve-claim drain told it (the store's) */
};

/* At load, in process SELF, with the master of the image that just
 * started (its parent when a process of its server started it), or 0. */
void scl_drain_at_load(pid_t self, pid_t master);

/* This process is exiting (not killed): when it leads its session and
 * one child it forked is still there, that child is handed over to
 * itself, not drained by its end.  Async-signal-safe. */
void scl_drain_process_exits(void);

/* The drain signals (settings.h), kept at load where the signal hooks
 * read them inline: 0 until then. */
extern _Atomic uint64_t scl_drain_signals;

/* Whether SIG is one of the drain signals: the signal hooks' compare. */
static inline int scl_drain_signal(int sig)
{
    return sig >= 1 && sig <= 64 &&
           (atomic_load_explicit(&scl_drain_signals, memory_order_relaxed) & 1ULL << (sig - 1)) != 0;
}

/* This process, SELF (its pid, which the caller has), sent a drain signal
 * to TARGET, as kill() takes it: a process, 0 (its own process group), -1
 * (every process it may signal) or -PGRP (a process group): every
 * recorded child of this process it reached is marked. */
void scl_drain_sent(pid_t self, pid_t target);

/* Before every fork, in the parent: its first maps the page its children
 * will be marked in. */
void scl_drain_before_fork(pid_t self);

/* Child PID was recorded in SLOT of the table of children (-1: not
 * recorded), or the child in SLOT is gone: no mark of an earlier process
 * stays on it.  Cheap while this process has marked nobody. */
void scl_drain_child_born(pid_t pid, int slot);
void scl_drain_child_gone(int slot);

/* swerve_claim_draining(): 1, 0, or -1 with errno (ENOMEM: its master
 * could not map the page it would be marked in, and nothing else says). */
int scl_drain_asked(void);

#endif
