/* SPDX-License-Identifier: MIT */
/*
 * The session's turns among threads (session_turns.h).  libpq runs one
 * query at a time on a connection, so the threads of a process take turns
 * at its one session through a ticket lock: served in the order asked, so
 * that a thread giving the session back between the slices of a long wait
 * lets the others in, instead of taking it straight back.  A thread that
 * waits its turn does not wait without end behind a statement the server
 * keeps waiting: it cancels a wait for a lock at once and a claim
 * statement once its patience is spent (session_patience.c), through
 * session_cancel.c; the cancelled caller gives the session up and asks
 * again behind it.
 */
#include "config.h"

#include "session.h"
#include "session_cancel.h"
#include "session_patience.h"
#include "session_turns.h"
#include "sigsafe.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static unsigned long next_ticket, serving;
/* Threads inside the lock's code or holding it: a child forked while any
 * was resets the lock (that thread is not in the child). */
static atomic_int locked;
/* Under `lock`: what may be done to the statement running, and its
 * patience; which statement that is; whether a cancel is out for it; and
 * whether one reached it for another thread (the holder learns of it). */
static enum scl_pg_interruption interruptible;
static int64_t statement_patience;
static unsigned long statement_serial;
static int interrupted;
static int cancelled_for_another;

/* Cancels the statement the session runs; FOR_ANOTHER: another thread's
 * cancel, only while statement SERIAL still runs and may be (checked
 * under the cancel lock, which the cancelled thread takes before its next
 * statement: a cancel never lands on that one). */
static void interrupt_query(int for_another, unsigned long serial)
{
    int still;

    scl_pg_cancel_lock();
    pthread_mutex_lock(&lock);
    still = !for_another || (interruptible != SCL_PG_NOT_INTERRUPTIBLE && statement_serial == serial);
    if (still && for_another)
        cancelled_for_another = 1;
    pthread_mutex_unlock(&lock);
    if (still)
        scl_pg_cancel_send();
    scl_pg_cancel_unlock();
}

/* Whether a thread queued since QUEUED_AT cancels the statement running. */
static int may_interrupt(int64_t queued_at)
{
    return !interrupted && (interruptible == SCL_PG_AT_ONCE || (interruptible == SCL_PG_AFTER_PATIENCE &&
                                                                scl_monotonic_ns() - queued_at >= statement_patience));
}

void scl_pg_lock(void)
{
    int64_t queued_at = scl_monotonic_ns();
    unsigned long ticket;

    atomic_fetch_add(&locked, 1);
    pthread_mutex_lock(&lock);
    ticket = next_ticket++;
    while (serving != ticket) {
        struct timespec until;
        if (may_interrupt(queued_at)) {
            unsigned long serial = statement_serial;
            interrupted = 1;
            pthread_mutex_unlock(&lock);
            interrupt_query(1, serial);
            pthread_mutex_lock(&lock);
            continue;
        }
        clock_gettime(CLOCK_REALTIME, &until); /* the condition variable's clock */
        until.tv_nsec += SCL_PG_RECANCEL_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&turn, &lock, &until) == ETIMEDOUT)
            interrupted = 0;
    }
    pthread_mutex_unlock(&lock);
}

int scl_pg_trylock(void)
{
    int free;

    atomic_fetch_add(&locked, 1);
    pthread_mutex_lock(&lock);
    if ((free = serving == next_ticket))
        next_ticket++;
    pthread_mutex_unlock(&lock);
    if (!free)
        atomic_fetch_sub(&locked, 1);
    return free;
}

void scl_pg_unlock(void)
{
    scl_pg_patience_reset();
    pthread_mutex_lock(&lock);
    serving++;
    pthread_cond_broadcast(&turn);
    pthread_mutex_unlock(&lock);
    atomic_fetch_sub(&locked, 1);
}

/* Lets threads that want the session cancel the statement now sent as
 * KIND says; lock held. */
static void interruptible_from_now(enum scl_pg_interruption kind)
{
    interruptible = kind;
    statement_patience = scl_pg_patience_now();
    interrupted = 0;
    statement_serial++;
}

void scl_pg_turns_interruptible(enum scl_pg_interruption kind)
{
    pthread_mutex_lock(&lock);
    interruptible_from_now(kind);
    pthread_mutex_unlock(&lock);
}

int scl_pg_turns_begin_wait(void)
{
    int alone;

    pthread_mutex_lock(&lock);
    if ((alone = next_ticket == serving + 1))
        interruptible_from_now(SCL_PG_AT_ONCE);
    pthread_mutex_unlock(&lock);
    return alone;
}

int scl_pg_turns_statement_ended(void)
{
    int for_another;

    /* A cancel another thread is sending reaches the server before the
     * next statement does: the cancel lock orders them. */
    scl_pg_cancel_lock();
    pthread_mutex_lock(&lock);
    interruptible = SCL_PG_NOT_INTERRUPTIBLE;
    for_another = cancelled_for_another;
    cancelled_for_another = 0;
    pthread_mutex_unlock(&lock);
    scl_pg_cancel_unlock();
    return for_another;
}

void scl_pg_turns_cancel_own(void)
{
    interrupt_query(0, 0);
}

int scl_pg_turns_held(void)
{
    return atomic_load(&locked) != 0;
}

void scl_pg_turns_forget_inherited(void)
{
    lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    turn = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    scl_pg_cancel_forget_lock();
    next_ticket = serving = 0;
    interruptible = SCL_PG_NOT_INTERRUPTIBLE;
    statement_serial = 0;
    interrupted = cancelled_for_another = 0;
    atomic_store(&locked, 0);
}
