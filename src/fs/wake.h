/* SPDX-License-Identifier: MIT */
/*
 * Wake-ups for waiters, across processes: futexes in a small shared file
 * of the claim directory ("wake", next to claims/), mapped once per
 * process.  Each claim name hashes to one slot; a release wakes only the
 * waiters of that slot, and costs a few loads from it when nobody waits
 * (the acquire too, for turns, below).  No descriptor stays open, and none is made or closed per wait:
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

/* Makes the wake file in the claim directory TOP_FD (at its creation). */
int scl_wake_create(int top_fd);

/* Maps the wake file of the claim directory TOP_FD for this process,
 * unless it is mapped already for directory generation GEN, and only when
 * it is this user's and nobody else may write it (a truncation would be a
 * SIGBUS).  Without it, waiters fall back on their 20 ms retries. */
void scl_wake_map(int top_fd, unsigned gen);

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
/* Bumps it, for the claim directory TOP_FD: 0, or -1 with errno (EACCES:
 * the caller may not write the file). */
int scl_wake_revoke(int top_fd);

/* Notes in the wake file of the claim directory TOP_FD that a user other
 * than its owner was let in (acl.h): that user's waiters cannot map the
 * file, so releases look for event-loop waiters' FIFOs (watch.h) always.
 * 0, or -1 with errno. */
int scl_wake_note_others(int top_fd);

/* An event-loop waiter on the name whose file name hashes to HASH counts
 * itself in (DELTA 1) as it begins to watch, before it looks at the claim,
 * and out (-1) as it stops: 1 when counted (the file is mapped here), 0
 * when not. */
int scl_wake_watching(size_t hash, int delta);

/* 0 when no event-loop waiter can be watching the name whose file name
 * hashes to HASH, so that its release need not look for its FIFO (one
 * fstatat, a third of an uncontended pair); 1 when one may. */
int scl_wake_may_be_watched(size_t hash);

/* Wakes whoever waits on claim FNAME of the claims directory CLAIMS_FD, in
 * acquire() or in an event loop (watch.h). */
void scl_wake(int claims_fd, const char *fname);

/*
 * Turns, on a hot name.  A thread that releases a name others wait for
 * and takes it again at once (a loop) would wake one of them for nothing
 * on every release, and take it again before that one ran: the wake-ups
 * cost it a third of its pace, and the others starve.  So a thread that
 * takes a name while others wait for it has a turn of 0.5 ms, in the
 * name's slot.  Once it has taken the name again within its turn, the
 * waiters keep off the name, and its releases wake nobody but, while
 * none does, a waiter to watch the turn: the watcher sleeps until the
 * turn ends, and 0.1 ms more, in case the holder does not come back.
 * Its first release or try after the turn hands the name to the watcher
 * (else to the first waiter asleep), and it keeps off the name for up to
 * 1 ms while others wait, until another has taken it; not when none was
 * asleep to take it.  A name nobody else waits for, or whose slot two
 * names' waiters have shared, has no turns, and there a release wakes
 * every waiter.
 *
 * Turns only order who tries when: the link alone decides who holds a
 * name.  A worker can write the slots, and so keep its server's threads
 * off the names of a slot for as long as it keeps rewriting them (as it
 * could by holding the names); every time read there is checked to be
 * no further off than a turn or a time off, and every sleep is capped by
 * the 20 ms retry.
 */

/* A thread's place in a name's turns: its id (0 until it is needed, a
 * system call once per thread), and until when the last
 * scl_wake_may_take() kept it off the name (0: it did not). */
struct scl_turn {
    pid_t tid;
    int64_t kept_off_until;
};

/* 0 when the thread is to keep off the name whose file name hashes to
 * HASH (scl_name_hash()) for now, else 1.  WAITING: it is one of the
 * name's waiters. */
int scl_wake_may_take(size_t hash, struct scl_turn *t, int waiting);

/* After the thread's link made it the name's holder: begins its turn, or
 * notes that it took the name again within it. */
void scl_wake_taken(size_t hash, struct scl_turn *t, int waiting);

/* After this thread unlinked its claim: wakes a waiter, unless its turn
 * goes on. */
void scl_wake_released(size_t hash);

/* A waiter's place: its slot, the count it saw there last, the name as
 * its slot tells it from the others, its turn. */
struct scl_wake_ticket {
    void *slot;
    unsigned seen;
    uint32_t fp;
    struct scl_turn turn;
};

/* Registers thread TID as a waiter on the name whose file name hashes to
 * HASH (0), or says wake-ups are not to be had (-1: the caller just
 * sleeps). */
int scl_wake_enter(struct scl_wake_ticket *t, size_t hash, pid_t tid);

/* Before each try: notes the slot's count (a wake-up after this ends the
 * next sleep), and forgets what kept the last try off. */
void scl_wake_arm(struct scl_wake_ticket *t);

/* Sleeps up to REL, less when woken or interrupted. */
void scl_wake_sleep(struct scl_wake_ticket *t, const struct timespec *rel);

/* Unregisters the waiter; TOOK: it has the name now (else a wake-up it
 * may have had goes on to another waiter). */
void scl_wake_leave(struct scl_wake_ticket *t, int took);

#endif
