/* SPDX-License-Identifier: MIT */
/*
 * How to cancel the statement the session runs (internal to src/pg):
 * libpq's cancel handle, kept beside the connection, and the lock that
 * keeps it alive while a cancel is sent (PQcancel() may run in any
 * thread, while the session's own thread closes it).
 */
#ifndef SCL_PG_SESSION_CANCEL_H
#define SCL_PG_SESSION_CANCEL_H

#include "libpq.h"

/* The handle of a session just connected (PQgetCancel()), sent through
 * PQ's functions; NULL for none. */
void scl_pg_cancel_set(const struct scl_libpq *pq, PGcancel *cancel);

/* The session is closed: frees the handle, under the lock. */
void scl_pg_cancel_free(void);

/* Taken before and given back after a cancel is decided and sent, and
 * around what must come after any cancel another thread is sending. */
void scl_pg_cancel_lock(void);
void scl_pg_cancel_unlock(void);

/* Sends a cancel of the statement running, with the lock held. */
void scl_pg_cancel_send(void);

/* In a forked child: the parent's handle is left behind (nothing freed),
 * without a lock. */
void scl_pg_cancel_forget(void);

/* In a forked child: a thread of the parent may have held the lock. */
void scl_pg_cancel_forget_lock(void);

#endif
