/* SPDX-License-Identifier: MIT */
/*
 * The session's turns among threads (internal to src/pg): the ticket lock
 * scl_pg_lock() takes (session.h), and what a thread waiting its turn may
 * do to the statement that keeps it waiting.
 */
#ifndef SCL_PG_SESSION_TURNS_H
#define SCL_PG_SESSION_TURNS_H

/* A cancel that reaches the server before the wait has begun there is
 * lost (the server ignores it between statements): it is sent again
 * after this long. */
#define SCL_PG_RECANCEL_NS (20 * 1000000L)

/* What a thread that wants the session may do to the statement running:
 * nothing (the session is being set up, or a grant undone); cancel it
 * once it has waited its patience for it (a claim statement: the server
 * may make it wait, for a synchronous standby or for another session's
 * row); or cancel it at once (a wait for a lock, which has nothing to
 * lose).  A cancelled statement fails with ECANCELED (or, a commit,
 * succeeds all the same), and its caller gives the session up and asks
 * again behind that thread. */
enum scl_pg_interruption { SCL_PG_NOT_INTERRUPTIBLE, SCL_PG_AFTER_PATIENCE, SCL_PG_AT_ONCE };

/* The statement just sent may be cancelled by threads that want the
 * session, as KIND says (the session's thread, lock held). */
void scl_pg_turns_interruptible(enum scl_pg_interruption kind);

/* Whether a wait may start: not while another thread is queued for the
 * session (it could not cancel what had not started yet).  If it may, it
 * may be cancelled at once from now on. */
int scl_pg_turns_begin_wait(void);

/* The statement sent is answered: no thread cancels it any more.  1 when
 * one did, for another thread that wanted the session. */
int scl_pg_turns_statement_ended(void);

/* Cancels the statement the session runs, for its own deadline. */
void scl_pg_turns_cancel_own(void);

/* 1 when a thread was inside the lock's code, or held it. */
int scl_pg_turns_held(void);

/* In a forked child: every turn forgotten (the threads that held or
 * waited for the lock are not in the child). */
void scl_pg_turns_forget_inherited(void);

#endif
