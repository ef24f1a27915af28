/* SPDX-License-Identifier: MIT */
/*
 * Cancelling the statement the session runs (session_cancel.h).  A
 * statement past its caller's deadline is cancelled (what it waits for in
 * the server ends, and its answer is read, so the session stays in step),
 * and so is one another thread waits for (session_turns.c): PQcancel()
 * opens a connection of its own and asks the server to cancel whatever the
 * session's backend runs.  Sent from another thread than the session's,
 * so the handle lives under a lock of its own, which also orders a cancel
 * before the next statement of the thread it cancels.
 */
#include "config.h"

#include "log.h"
#include "session_cancel.h"

#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct scl_libpq *cancel_pq;
static PGcancel *cancel; /* cancel_lock */

void scl_pg_cancel_set(const struct scl_libpq *pq, PGcancel *handle)
{
    cancel_pq = pq;
    cancel = handle;
}

void scl_pg_cancel_free(void)
{
    pthread_mutex_lock(&cancel_lock);
    if (cancel != NULL)
        cancel_pq->freeCancel(cancel);
    cancel = NULL;
    pthread_mutex_unlock(&cancel_lock);
}

void scl_pg_cancel_lock(void)
{
    pthread_mutex_lock(&cancel_lock);
}

void scl_pg_cancel_unlock(void)
{
    pthread_mutex_unlock(&cancel_lock);
}

void scl_pg_cancel_send(void)
{
    char err[128];

    if (cancel != NULL && !cancel_pq->cancel(cancel, err, sizeof err))
        scl_debug("PostgreSQL store: cannot cancel the running statement: %s", err);
}

void scl_pg_cancel_forget(void)
{
    cancel = NULL;
}

void scl_pg_cancel_forget_lock(void)
{
    cancel_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}
