/*
 * Wake-ups for waiters, across processes: futexes in a small shared file
 * of the claim directory ("wake", next to claims/), mapped once per
 * process.  Each claim name hashes to one slot; a release wakes only the
 * waiters of that slot, and costs nothing beyond one load when nobody
 * waits.  No descriptor stays open, and none is made or closed per wait:
 * closing an inotify instance waits for an SRCU grace period, which cost
 * a waiter up to 16 ms after it had already won the name.
 *
 * Everything but scl_wake_create() and scl_wake_map() is
 * async-signal-safe: a reaper clearing a dead child's claims wakes too.
 */
#ifndef SCL_WAKE_H
#define SCL_WAKE_H

#include "layout.h"

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Makes the wake file in the claim directory TOPFD (at its creation). */
int scl_wake_create(int topfd);

/* Maps the wake file of the claim directory TOPFD for this process,
 * unless it is mapped already for directory generation GEN, and only when
 * it is this user's and nobody else may write it (a truncation would be a
 * SIGBUS).  Without it, waiters fall back on their 20 ms retries. */
void scl_wake_map(int topfd, unsigned gen);

/* 1 when the wake file is mapped for directory generation GEN: the caller
 * need not find the top for scl_wake_map(). */
int scl_wake_is_mapped(unsigned gen);

/*
 * Forced releases (swerve-claim release --force) bump a counter in the
 * wake file, so that a holder can tell in one load whether a claim of its
 * may have been taken from it since it took it.
 */
/* The count, in *COUNT: 0, or -1 when the wake file is not mapped here. */
int scl_wake_revocations(unsigned *count);
/* Bumps it, for the claim directory TOPFD: 0, or -1 with errno (EACCES:
 * the caller may not write the file). */
int scl_wake_revoke(int topfd);

/* Wakes whoever waits on claim file name FNAME. */
void scl_wake(const char *fname);

/*
 * Turns, on a hot name.  A thread that releases a name others wait for
 * and takes it again at once (a loop) would wake them all for nothing on
 * every release, and take it again before any of them ran: the waiters'
 * wake-ups cost it half its pace, and they starve.  So a thread that
 * takes a name while others wait for it begins a turn of 200 us, in the
 * name's slot: until the turn ends its releases wake nobody, and the
 * waiters sleep until then (not longer: a holder that does not come back
 * costs a waiter at most the rest of the turn).  Its first release after
 * the turn wakes them, and it keeps off the name for up to 1 ms, until
 * one of them has it.  A name nobody else waits for has no turns.
 *
 * Turns only order who tries when: the link alone decides who holds a
 * name.  A worker can write the slots, and can make the others wait at
 * most a retry period (20 ms) each time, as it could by holding the
 * name; every sleep is capped by it.
 */

/* Before this thread links FNAME (WAITING: it is one of the name's
 * waiters): -1 when it has to keep off the name, 1 when it began a turn
 * (to undo with scl_wake_turn_undo() if the link fails), else 0.  *TID
 * is the thread's id, or 0 until it is needed (a system call), and then
 * filled in. */
int scl_wake_turn_take(const char *fname, pid_t *tid, int waiting);
void scl_wake_turn_undo(const char *fname, pid_t tid);

/* After this thread unlinked its claim FNAME: wakes the waiters, unless
 * its turn goes on. */
void scl_wake_released(const char *fname);

/* A waiter's place: its slot, the count it saw there last, its thread. */
struct scl_wake_ticket {
    void *slot;
    unsigned seen;
    pid_t tid;
    uint32_t fp; /* the name, as its slot tells it from the others */
};

/* Registers thread TID as a waiter on FNAME (0), or says wake-ups are not
 * to be had (-1: the caller just sleeps). */
int scl_wake_enter(struct scl_wake_ticket *t, const char *fname, pid_t tid);

/* Notes the slot's count: a wake-up after this ends the next sleep. */
void scl_wake_arm(struct scl_wake_ticket *t);

/* Sleeps up to REL, less when woken or interrupted. */
void scl_wake_sleep(struct scl_wake_ticket *t, const struct timespec *rel);

/* Unregisters the waiter; TOOK: it has the name now (else a wake-up it
 * may have had goes on to another waiter). */
void scl_wake_leave(struct scl_wake_ticket *t, int took);

#endif
