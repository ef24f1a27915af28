/* SPDX-License-Identifier: MIT */
/*
 * The process's one session with the PostgreSQL server that holds its
 * claims: opened on the first claim operation, never shared across fork()
 * (a child closes its copy of the socket without a word to the server:
 * libpq's PQfinish() would send Terminate and end the parent's session),
 * closed by exec (libpq sets FD_CLOEXEC), and ended by the server when the
 * process dies, which frees what it held.
 *
 * Every function but scl_pg_forget_inherited() is for the claim API, with
 * the session lock held (scl_pg_lock()): libpq allows one query at a time
 * on a connection.
 */
#ifndef SCL_PG_SESSION_H
#define SCL_PG_SESSION_H

#include "libpq.h"
#include "store_admin.h"

#include <stdint.h>
#include <sys/types.h>

/* How often the server checks, while a statement runs, that the client is
 * still there (client_connection_check_interval): a waiter that dies frees
 * what it holds within about this long. */
#define SCL_PG_CHECK_INTERVAL "20ms"

void scl_pg_lock(void);
/* 0 when another thread has the session (it is then busy with a query). */
int scl_pg_trylock(void);
void scl_pg_unlock(void);

/* Statements run (and a connection made) under the lock end by DEADLINE
 * (CLOCK_MONOTONIC nanoseconds; -1 for none, what scl_pg_unlock() sets):
 * past it a statement is cancelled, whatever the server waits for, and
 * fails with ETIMEDOUT while the session is still being set up. */
void scl_pg_deadline(int64_t deadline);

/* How long a queued thread waits for the statements run under the lock
 * before it cancels one (session_patience.c, PATIENCE_NS unless set; what
 * scl_pg_unlock() sets again): a caller asked again after such a cancel
 * lengthens it, so that a statement the server takes long over (a commit
 * waiting for a far standby) ends at last. */
void scl_pg_patience(int64_t ns);

/* 1 when the last statement was cancelled at its deadline: one that then
 * succeeded all the same (a commit whose wait for a synchronous standby
 * was cancelled) may not have reached the standby. */
int scl_pg_cancelled(void);

/* 1 when the last statement was cancelled for another thread that wanted
 * the session: as scl_pg_cancelled(), but the caller asks again, after
 * giving the session up (a failure says ECANCELED). */
/* Whether the server said WARNING during the last statement. */
int scl_pg_warned(void);
int scl_pg_interrupted(void);

/* 1 when the last statement reached the server (a wait that a queued
 * thread kept from starting did not). */
int scl_pg_sent(void);

/* The session's backend pid, as text: the parameter every claim
 * statement checks (statements[] in session.c). */
const char *scl_pg_backend(void);

/* This client's nonce, the mark it left on its server session at setup:
 * the third parameter of every claim statement. */
const char *scl_pg_nonce(void);

/* Ends the session from this side: when what it holds is in doubt (a
 * grant that could not be given back), the server frees it all. */
void scl_pg_abandon(void);

/* The server's server_version_num (scl_pg_open() succeeded before). */
int scl_pg_server_version(void);

/* The last failure's message, from the server or libpq, for the tools;
 * NULL when there was none. */
const char *scl_pg_reason(void);

/* Keeps MESSAGE's first line as that message (a failure of the tools'
 * own: a bound they gave up past). */
void scl_pg_remember_reason(const char *message);

/* 1 when this process has a usable session, else 0: one that is another
 * process's, or ended, or whose socket the host has closed is forgotten
 * (never written to), and nothing new is opened. */
int scl_pg_current(pid_t self);

/* Makes sure the session is this process's and usable, connecting when it
 * is not: 0, or -1 with errno (doc/cluster.md lists them: ELIBACC no
 * libpq, ECONNREFUSED no server, EKEYREJECTED authentication failed,
 * EUSERS too many clients, ETIMEDOUT the deadline passed, EROFS a
 * standby, EPROTO a pooler in transaction mode, ENAMETOOLONG settings too
 * long, EACCES refused, ENOMEM) and a SWERVE_DEBUG line. */
int scl_pg_open(pid_t self);

/* What the last attempt to open the session (scl_pg_open()) found, as far
 * as it got, for the tools (db check): its set-up's own decisions. */
const struct scl_store_reached *scl_pg_seen(void);

/* Counts the sessions this process has had: it changes whenever one is
 * lost or forgotten, so a hold taken in an older one is gone. */
unsigned scl_pg_generation(void);

/* Whether the server has ended the session, learnt without a round trip:
 * what already arrived on the socket is read, nothing is sent.  1 it is
 * (or may be) alive, 0 it ended (then it is closed).  Needs no lock: when
 * another thread has the session, that thread will notice. */
int scl_pg_alive(void);

/* Runs SQL with NPARAMS parameters (binary when FORMATS says 1) and returns
 * its result, or NULL with errno: ENOENT when the schema is missing (run
 * swerve-claim db init), EACCES without its grants, EPROTO when a pooler
 * moved the session, ECONNRESET when the session was lost (it is then
 * closed), ETIMEDOUT past the deadline, ECANCELED when another thread that
 * waited PATIENCE_NS (session_patience.c) for the session cancelled it (give the
 * session up and ask again), EIO for anything else.  The caller
 * PQclear()s the result. */
PGresult *scl_pg_run(const char *sql, int nparams, const unsigned *types, const char *const *values, const int *lengths,
                     const int *formats);

/* The statements run on every claim, prepared once per session: parsing
 * and planning them each time would cost a tenth of the claim. */
enum scl_pg_statement {
    SCL_PG_TRY,
    SCL_PG_WAIT,
    SCL_PG_RELEASE,
    SCL_PG_TOKEN,
    SCL_PG_RELEASE_RECORDED, /* a hold whose token was issued (and recorded) */
    SCL_PG_UNDO,             /* gives back a grant the statement that took it failed after */
    SCL_PG_NSTATEMENTS
};

/* Runs prepared statement WHICH with its text parameters VALUES (NULL
 * for SQL's): as scl_pg_run().  Parameter 1 is the claim's id, 2
 * scl_pg_backend() and 3 scl_pg_nonce(); the 4th SCL_PG_WAIT's
 * milliseconds to wait, SCL_PG_TOKEN's epoch seconds the hold began,
 * the releases' second its grant marked.  SCL_PG_TRY and SCL_PG_WAIT say
 * that mark's second when granted, 0 when not, -1 granted without a mark.
 * Every one of them says NULL when it ran in another session than the one
 * set up (a pooler): it then did nothing.  A wait fails with ECANCELED,
 * having perhaps not even started, as soon as another thread wants the
 * session. */
PGresult *scl_pg_run_prepared(enum scl_pg_statement which, const char *const *values);

/* Another connection to the same server, as the session's is made
 * (settings.h), ending its attempt by DEADLINE: for a statement that
 * waits while the session goes on (an event loop's wait, store_pg.c).
 * NULL with errno as scl_pg_open() says them.  Closed with the loaded
 * libpq's finish(). */
PGconn *scl_pg_connect_another(int64_t deadline);

/* The connection itself (scl_pg_open() succeeded before). */
PGconn *scl_pg_conn(void);

/* The loaded libpq (scl_pg_open() succeeded before). */
const struct scl_libpq *scl_pg_libpq(void);

/* Lets the session's socket through exec (clears FD_CLOEXEC): the exec'd
 * image keeps the session, and with it the claims, without knowing it. */
int scl_pg_keep_across_exec(void);

/* In the child of a fork, and async-signal-safe: forgets the parent's
 * session without ending it, and closes the child's copy of its socket so
 * that the child does not keep it alive either. */
void scl_pg_forget_inherited(void);

#endif
