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

/* A waiter's place: its slot and the count it saw there last. */
struct scl_wake_ticket {
    void *slot;
    unsigned seen;
};

/* Registers a waiter on FNAME (0), or says wake-ups are not to be had
 * (-1: the caller just sleeps). */
int scl_wake_enter(struct scl_wake_ticket *t, const char *fname);

/* Notes the slot's count: a wake-up after this ends the next sleep. */
void scl_wake_arm(struct scl_wake_ticket *t);

/* Process SELF sleeps up to REL, less when woken or interrupted. */
void scl_wake_sleep(struct scl_wake_ticket *t, pid_t self, const struct timespec *rel);

void scl_wake_leave(struct scl_wake_ticket *t);

/*
 * Turns.  A process that takes a name in a loop, releasing it and taking
 * it again at once, would win it over waiters every time, and waking them
 * at each release would cost it a system call a pair.  So such a process
 * does not wake them; a waiter that has waited a turn (5 ms) asks for
 * its turn, which goes to the waiter that began first, and until it has
 * the name, other acquirers let it be, and releases wake again.  A try
 * never waits, so never gives way.
 */
enum scl_turn { SCL_TURN_NOBODYS, SCL_TURN_MINE, SCL_TURN_ANOTHERS };

/* Whose turn it is on FNAME at time NOW (monotonic ns), for process SELF. */
enum scl_turn scl_wake_turn(const char *fname, pid_t self, int64_t now);

/* Process SELF, waiting with ticket T on FNAME since SINCE, has waited a
 * turn at NOW: it asks for its turn, which goes to the waiter that began
 * first. */
void scl_wake_ask_turn(struct scl_wake_ticket *t, const char *fname, pid_t self, int64_t since, int64_t now);

/* Wakes the waiter whose turn it is on FNAME (and those that share its
 * futex bit): the others would only let it be. */
void scl_wake_turn_holder(const char *fname);

/* SELF has had its turn, or gives up waiting. */
void scl_wake_turn_taken(struct scl_wake_ticket *t, pid_t self);

/* A release of FNAME that woke nobody: counted, so that a waiter can
 * tell a name taken in a loop from one held all along. */
void scl_wake_count_release(const char *fname);

/* The count on the slot of ticket T. */
unsigned scl_wake_releases(const struct scl_wake_ticket *t);

#endif
