#include "config.h"

#include "log.h"
#include "session.h"
#include "settings.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Client-side defaults that a connection string may override: keepalives
 * and tcp_user_timeout well inside the server's own keepalive budget
 * (doc/cluster.md), so that a holder cut off from the server notices the
 * loss (held() turns 0) before the server frees its claims for others. */
static const char *const default_keywords[] = {
    "connect_timeout",  "keepalives",       "keepalives_idle",      "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "target_session_attrs",
};
static const char *const default_values[] = { "10", "1", "3", "1", "3", "6000", "read-write" };
#define NDEFAULTS (sizeof default_keywords / sizeof default_keywords[0])

/* Once connected: a standby grants advisory locks of its own, so it is
 * refused; and the session must never be ended by an idle timeout of the
 * role or database (a holder is idle by nature), nor have its tokens'
 * sequence WAL left unflushed at commit. */
static const char setup_sql[] =
    "SELECT pg_is_in_recovery(), set_config('idle_session_timeout', '0', false), "
    "set_config('idle_in_transaction_session_timeout', '0', false), set_config('statement_timeout', '0', false), "
    "CASE WHEN current_setting('synchronous_commit') = 'off' THEN set_config('synchronous_commit', 'local', false) "
    "END";

/* The claim's own statements: a grant and its token in one round trip
 * (the token only when the lock was granted), and the release.  The key
 * (1398231638, id) and the schema's objects are schema.sql's. */
static const struct {
    const char *name, *sql;
    int nparams;
} statements[SCL_PG_NSTATEMENTS] = {
    [SCL_PG_TRY] = { "swerve_claim_try",
                     "SELECT CASE WHEN pg_try_advisory_lock(1398231638, $1::int4) THEN "
                     "CASE WHEN current_setting('swerve_claim.record_holds', true) = 'on' "
                     "THEN swerve_claim.recorded_token($1::int4) ELSE nextval('swerve_claim.tokens') END END",
                     1 },
    [SCL_PG_WAIT] = { "swerve_claim_wait", "SELECT swerve_claim.acquire_within($1, $2)", 2 },
    [SCL_PG_RELEASE] = { "swerve_claim_release", "SELECT pg_advisory_unlock(1398231638, $1::int4)", 1 },
};

static struct {
    PGconn *conn;
    unsigned prepared; /* bit N: statements[N] is, in this session */
    const struct scl_libpq *pq;
    pid_t owner; /* the process that opened it */
    int fd;      /* its socket, and what that socket is: a host that */
    dev_t dev;   /* closes every descriptor may have put something */
    ino_t ino;   /* else at that number since */
    unsigned generation;
    int ended; /* the server said FATAL: it is ending the session */
} session;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int locked; /* set while a thread holds the lock: a forked child resets it */

void scl_pg_lock(void)
{
    pthread_mutex_lock(&lock);
    atomic_store(&locked, 1);
}

int scl_pg_trylock(void)
{
    if (pthread_mutex_trylock(&lock) != 0)
        return 0;
    atomic_store(&locked, 1);
    return 1;
}

void scl_pg_unlock(void)
{
    atomic_store(&locked, 0);
    pthread_mutex_unlock(&lock);
}

unsigned scl_pg_generation(void)
{
    return session.generation;
}

PGconn *scl_pg_conn(void)
{
    return session.conn;
}

const struct scl_libpq *scl_pg_libpq(void)
{
    return session.pq;
}

/* Whether descriptor session.fd is still the socket libpq opened. */
static int socket_is_ours(void)
{
    struct stat st;

    return session.fd >= 0 && fstat(session.fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == session.dev &&
           st.st_ino == session.ino;
}

static void forget(void)
{
    session.conn = NULL;
    session.prepared = 0;
    session.ended = 0;
    session.fd = -1;
    session.generation++;
}

/* Ends the session from this side.  PQfinish() writes Terminate to the
 * socket: only when the socket is still ours; otherwise the PGconn is
 * left behind (a few kilobytes, once) rather than write to the host's. */
static void close_session(void)
{
    if (session.conn == NULL)
        return;
    if (socket_is_ours())
        session.pq->finish(session.conn);
    else
        scl_debug("PostgreSQL store: descriptor %d is no longer the session's socket: left alone", session.fd);
    forget();
}

int scl_pg_keep_across_exec(void)
{
    int flags;

    if (session.conn == NULL || !socket_is_ours())
        return 0;
    flags = fcntl(session.fd, F_GETFD);
    return flags < 0 ? -1 : fcntl(session.fd, F_SETFD, flags & ~FD_CLOEXEC);
}

/* Drops a session this process inherited, without a word to the server:
 * closing our copy of the socket ends nothing for the parent, and keeps
 * nothing alive for it either. */
static void drop_inherited(void)
{
    if (session.conn == NULL)
        return;
    if (socket_is_ours())
        (void)close(session.fd);
    forget();
}

void scl_pg_forget_inherited(void)
{
    int saved = errno;

    if (session.conn == NULL && !atomic_load(&locked))
        return; /* nothing to write: no copy-on-write fault */
    drop_inherited();
    /* A thread of the parent had the lock as it forked: that thread is not here. */
    lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    atomic_store(&locked, 0);
    errno = saved;
}

static void on_notice(void *arg, const PGresult *res)
{
    const char *severity = session.pq->resultErrorField(res, SCL_PG_DIAG_SEVERITY_NONLOCALIZED);

    (void)arg;
    /* A FATAL message outside a query is the server ending the session
     * (pg_terminate_backend, shutdown); the close follows.  Nothing is
     * printed: the host's standard error is not ours. */
    if (severity != NULL && (strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0))
        session.ended = 1;
    scl_debug("PostgreSQL store: server says: %s",
              session.pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) ?: "(no message)");
}

static int fail(int err, const char *what)
{
    scl_debug("PostgreSQL store: %s", what);
    errno = err;
    return -1;
}

static int setup(void)
{
    PGresult *res = scl_pg_run(setup_sql, 0, NULL, NULL, NULL, NULL);
    int standby;

    if (res == NULL)
        return -1;
    standby = strcmp(session.pq->getvalue(res, 0, 0), "t") == 0;
    session.pq->clear(res);
    if (standby)
        return fail(EROFS, "the server is a standby (pg_is_in_recovery): claims need the primary");
    return 0;
}

static int connect_session(void)
{
    const struct scl_settings *settings = scl_settings();
    const char *keywords[NDEFAULTS + 3], *values[NDEFAULTS + 3];
    char host[64] = "", application[64];
    struct stat st;
    size_t n = 0;

    if (settings->store_error != 0)
        return fail(settings->store_error, "SWERVE_CLAIM_STORE or SWERVE_CLAIM_SCOPE is too long");
    if ((session.pq = scl_libpq()) == NULL)
        return -1;
    (void)gethostname(host, sizeof host - 1);
    /* The tools find holders by this name (pid first: the server keeps 63 bytes). */
    snprintf(application, sizeof application, "swerve-claim pid=%d host=%s", (int)getpid(), host);
    for (; n < NDEFAULTS; n++) {
        keywords[n] = default_keywords[n];
        values[n] = default_values[n];
    }
    /* Keywords after dbname override what its connection string says. */
    keywords[n] = "dbname";
    values[n++] = settings->store;
    keywords[n] = "application_name";
    values[n++] = application;
    keywords[n] = NULL;
    values[n] = NULL;

    session.conn = session.pq->connectdbParams(keywords, values, 1);
    if (session.conn == NULL)
        return fail(ENOMEM, "out of memory for a connection");
    if (session.pq->status(session.conn) != SCL_CONNECTION_OK) {
        scl_debug("PostgreSQL store: cannot connect: %s", session.pq->errorMessage(session.conn));
        session.pq->finish(session.conn);
        session.conn = NULL;
        errno = ECONNREFUSED;
        return -1;
    }
    session.fd = session.pq->socket(session.conn);
    if (fstat(session.fd, &st) != 0) {
        session.pq->finish(session.conn);
        forget();
        return -1;
    }
    session.dev = st.st_dev;
    session.ino = st.st_ino;
    session.owner = getpid();
    session.ended = 0;
    session.pq->setNoticeReceiver(session.conn, on_notice, NULL);
    if (setup() != 0) {
        int err = errno;
        close_session();
        errno = err;
        return -1;
    }
    return 0;
}

int scl_pg_current(pid_t self)
{
    if (session.conn != NULL && session.owner != self) {
        /* Forked without the fork hook (a raw clone, or no shim at all):
         * the parent's session.  The lock is this thread's: it stays. */
        drop_inherited();
    }
    if (session.conn != NULL &&
        (session.ended || session.pq->status(session.conn) != SCL_CONNECTION_OK || !socket_is_ours()))
        close_session();
    return session.conn != NULL;
}

int scl_pg_open(pid_t self)
{
    return scl_pg_current(self) ? 0 : connect_session();
}

int scl_pg_alive(void)
{
    struct pollfd pfd;

    if (session.conn == NULL)
        return 0;
    if (session.ended)
        return 0;
    pfd.fd = session.fd;
    pfd.events = POLLIN | POLLRDHUP;
    pfd.revents = 0;
    /* Nothing to read: the common case, one system call. */
    if (poll(&pfd, 1, 0) == 0)
        return 1;
    if (!scl_pg_trylock())
        return 1;
    if (session.conn != NULL && (!socket_is_ours() || session.pq->consumeInput(session.conn) == 0 || session.ended ||
                                 session.pq->status(session.conn) != SCL_CONNECTION_OK)) {
        scl_debug("PostgreSQL store: the session ended: every claim it held is gone");
        close_session();
    }
    scl_pg_unlock();
    return session.conn != NULL;
}

/* errno for an SQLSTATE. */
static int errno_of(const char *state)
{
    if (state == NULL)
        return EIO;
    /* undefined_table, undefined_function, invalid_schema_name, and
     * undefined_column: a view of an older schema */
    if (strcmp(state, "42P01") == 0 || strcmp(state, "42883") == 0 || strcmp(state, "3F000") == 0 ||
        strcmp(state, "42703") == 0)
        return ENOENT;
    if (strcmp(state, "42501") == 0)
        return EACCES;
    if (strcmp(state, "25006") == 0)
        return EROFS;
    if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P", 3) == 0)
        return ECONNRESET;
    return EIO;
}

/* RES, when it is a success; else NULL with errno, the session closed if
 * it is lost. */
static PGresult *checked(PGresult *res)
{
    const struct scl_libpq *pq = session.pq;
    int status = res != NULL ? pq->resultStatus(res) : -1, err;

    if (status == SCL_PGRES_TUPLES_OK || status == SCL_PGRES_COMMAND_OK)
        return res;
    err = res != NULL ? errno_of(pq->resultErrorField(res, SCL_PG_DIAG_SQLSTATE)) : ENOMEM;
    scl_debug("PostgreSQL store: %s", res != NULL ? pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) ?: "error"
                                                  : pq->errorMessage(session.conn));
    if (err == ENOENT)
        scl_debug("PostgreSQL store: the schema is missing or old: run 'swerve-claim db init'");
    if (res != NULL)
        pq->clear(res);
    if (pq->status(session.conn) != SCL_CONNECTION_OK || session.ended) {
        close_session();
        err = ECONNRESET;
    }
    errno = err;
    return NULL;
}

PGresult *scl_pg_run(const char *sql, int nparams, const unsigned *types, const char *const *values, const int *lengths,
                     const int *formats)
{
    return checked(session.pq->execParams(session.conn, sql, nparams, types, values, lengths, formats, 0));
}

PGresult *scl_pg_run_prepared(enum scl_pg_statement which, int nparams, const char *const *values)
{
    const struct scl_libpq *pq = session.pq;

    if (!(session.prepared & 1u << which)) {
        PGresult *res = checked(
            pq->prepare(session.conn, statements[which].name, statements[which].sql, statements[which].nparams, NULL));
        if (res == NULL)
            return NULL;
        pq->clear(res);
        session.prepared |= 1u << which;
    }
    return checked(pq->execPrepared(session.conn, statements[which].name, nparams, values, NULL, NULL, 0));
}
