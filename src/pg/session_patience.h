/* SPDX-License-Identifier: MIT */
/*
 * The session's patience (internal to src/pg): the deadline of the
 * statements run under the session lock, and how long a thread queued for
 * the session waits for them before it cancels one.  Both are set by the
 * caller that holds the lock (scl_pg_deadline(), scl_pg_patience() in
 * session.h) and set back when it gives the session up.
 */
#ifndef SCL_PG_SESSION_PATIENCE_H
#define SCL_PG_SESSION_PATIENCE_H

#include <stdint.h>

/* The deadline of the statements now run (-1: none). */
int64_t scl_pg_deadline_now(void);

/* The patience a statement sent now is given. */
int64_t scl_pg_patience_now(void);

/* No deadline, and the usual patience: as the lock is given back. */
void scl_pg_patience_reset(void);

#endif
