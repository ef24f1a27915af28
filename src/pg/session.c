/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "log.h"
#include "session.h"
#include "session_cancel.h"
#include "session_patience.h"
#include "session_turns.h"
#include "settings_pg.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

/* Once connected, in one round trip: a standby grants advisory locks of
 * its own, so it is refused; the backend's pid, and a nonce of this
 * client's ($1) in a setting of the session, are what every claim
 * statement checks; a session that is not new (prepared statements,
 * advisory locks or a nonce of its own) was another client's, handed on
 * by a pooler;
 * the session must never be ended by an idle timeout of the role or
 * database (a holder is idle by nature); the tokens' sequence's WAL must be
 * flushed at commit (local), and reach a synchronous standby where there
 * is one (on), before a token is used; and the server checks the client
 * while a query runs, so that a waiter's death frees its claims at once
 * (PostgreSQL 14 and later). */
static const char setup_sql[] =
    "WITH fresh AS (SELECT NOT EXISTS (SELECT 1 FROM pg_prepared_statements) AND "
    "NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AND "
    "coalesce(current_setting('swerve_claim.session', true), '') = '' AS yes) "
    "SELECT pg_is_in_recovery(), pg_backend_pid(), yes, "
    "set_config('idle_session_timeout', '0', false), "
    "set_config('idle_in_transaction_session_timeout', '0', false), set_config('statement_timeout', '0', false), "
    "CASE WHEN current_setting('synchronous_standby_names') <> '' "
    "AND current_setting('synchronous_commit') IN ('off', 'local', 'remote_write') "
    "THEN set_config('synchronous_commit', 'on', false) "
    "WHEN current_setting('synchronous_commit') = 'off' THEN set_config('synchronous_commit', 'local', false) END, "
    "CASE WHEN current_setting('server_version_num')::int >= 140000 "
    "THEN set_config('client_connection_check_interval', '" SCL_PG_CHECK_INTERVAL "', false) END, "

    "current_setting('server_version_num')::int, "
    "CASE WHEN yes THEN set_config('swerve_claim.session', $1, false) END FROM fresh";

/* The claim's own statements.  Each runs only in the session set up ($2
 * the backend's pid, $3 the client's nonce): in any other, which only a
 * pooler in transaction mode can hand it to, it does nothing and says
 * NULL.  The key (1398231638, id) and the schema's functions are
 * schema.sql's.  A grant also marks when it began, for the tools, without
 * a write: a shared lock (-id, S), S the server's second at the grant
 * (schema.sql, swerve_claim.claims).  The grant's statement says S, or 0
 * not granted, -1 granted without a mark (another session holds that
 * key); S is neither before 2106.  A release takes S as $4 and drops the
 * mark with the claim. */
#define IN_OURS  "pg_backend_pid() = $2::int4 AND current_setting('swerve_claim.session', true) = $3"
#define NOT_OURS "pg_backend_pid() <> $2::int4 OR current_setting('swerve_claim.session', true) IS DISTINCT FROM $3"
/* The second of timestamp AT as an int4 key: pg_locks shows it unsigned
 * (objid), the epoch second itself until 2106. */
#define SINCE_KEY(at) "((floor(date_part('epoch', " at "))::int8 + 2147483648) % 4294967296 - 2147483648)::int4"
#define MARK(s)       "pg_try_advisory_lock_shared(-$1::int4, " s ")"
static const struct {
    const char *name, *sql;
    int nparams;
} statements[SCL_PG_NSTATEMENTS] = {
    /* now() is the statement's start: the try takes no time. */
    [SCL_PG_TRY] = { "swerve_claim_try",
                     "SELECT CASE WHEN " NOT_OURS " THEN NULL WHEN NOT pg_try_advisory_lock(1398231638, $1::int4) "
                     "THEN 0 WHEN " MARK(SINCE_KEY("now()")) " THEN " SINCE_KEY("now()") " ELSE -1 END",
                     3 },
    /* The mark's second is read once the wait has been granted. */
    [SCL_PG_WAIT] = { "swerve_claim_wait",
                      "SELECT CASE WHEN g THEN (SELECT CASE WHEN " MARK(
                          "k.s") " THEN k.s ELSE -1 END FROM (SELECT " SINCE_KEY("clock_timestamp()") " AS s WHERE g) "
                                                                                                      "k) WHEN NOT g "
                                                                                                      "THEN 0 END "
                                                                                                      "FROM (SELECT "
                                                                                                      "CASE "
                                                                                                      "WHEN " IN_OURS
                                                                                                      " THEN "
                                                                                                      "swerve_claim."
                                                                                                      "acquire_within($"
                                                                                                      "1::int4, "
                                                                                                      "$4::int4, "
                                                                                                      "$2::int4) "
                                                                                                      "END AS g OFFSET "
                                                                                                      "0) w",
                      4 },
    /* The mark goes first, in the condition: CASE says when it runs. */
    [SCL_PG_RELEASE] = { "swerve_claim_release",
                         "SELECT CASE WHEN " NOT_OURS " THEN NULL "
                         "WHEN $4::int4 IS NOT NULL AND NOT pg_advisory_unlock_shared(-$1::int4, $4::int4) "
                         "THEN pg_advisory_unlock(1398231638, $1::int4) ELSE pg_advisory_unlock(1398231638, $1::int4) "
                         "END",
                         4 },
    [SCL_PG_TOKEN] = { "swerve_claim_token",
                       "SELECT CASE WHEN " IN_OURS " THEN swerve_claim.token_for($1::int4, $2::int4, $4::float8) END",
                       4 },
    [SCL_PG_RELEASE_RECORDED] = { "swerve_claim_release_recorded",
                                  "SELECT CASE WHEN " IN_OURS
                                  " THEN swerve_claim.release_recorded($1::int4, $2::int4, $4::int4) END",
                                  4 },
    [SCL_PG_UNDO] = { "swerve_claim_undo",
                      "SELECT CASE WHEN " IN_OURS " THEN swerve_claim.unlock_if_held($1::int4, $2::int4) END", 3 },
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
    int ended;          /* the server said FATAL: it is ending the session */
    int warned;         /* it said WARNING during the last statement */
    int backend;        /* its pid in the server, as the server says */
    int server_version; /* server_version_num */
    char backend_text[16];
    char nonce[24];  /* this client's mark on its server session */
    int cancelled;   /* the last statement was cancelled at the deadline */
    int interrupted; /* or by another thread that wanted the session */
    int sent;        /* the last statement reached the server */
} session = { .fd = -1 };

static char reason[256];              /* the last failure's message, for the tools */
static struct scl_store_reached seen; /* what the last connect_session() found, for the tools */

int scl_pg_cancelled(void)
{
    return session.cancelled;
}

int scl_pg_warned(void)
{
    return session.warned;
}

int scl_pg_interrupted(void)
{
    return session.interrupted;
}

int scl_pg_sent(void)
{
    return session.sent;
}

int scl_pg_server_version(void)
{
    return session.server_version;
}

const char *scl_pg_backend(void)
{
    return session.backend_text;
}

const char *scl_pg_nonce(void)
{
    return session.nonce;
}

const struct scl_store_reached *scl_pg_seen(void)
{
    return &seen;
}

const char *scl_pg_reason(void)
{
    return reason[0] != '\0' ? reason : NULL;
}

void scl_pg_remember_reason(const char *message)
{
    size_t n = strcspn(message, "\n");

    snprintf(reason, sizeof reason, "%.*s", (int)(n < sizeof reason ? n : sizeof reason - 1), message);
    scl_why_quiet("PostgreSQL store: %s", reason); /* swerve_claim_why(); logged by the caller */
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
    return scl_fd_is(session.fd, S_IFSOCK, session.dev, session.ino);
}

/* Also in a forked child, where nothing may be freed or locked: what the
 * parent's session had is left behind there. */
static void forget(void)
{
    scl_pg_cancel_forget();
    session.backend = 0;
    session.backend_text[0] = '\0';
    session.nonce[0] = '\0';
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
    scl_pg_cancel_free();
    if (socket_is_ours())
        session.pq->finish(session.conn);
    else
        scl_debug("PostgreSQL store: descriptor %d is no longer the session's socket: left alone", session.fd);
    forget();
}

void scl_pg_abandon(void)
{
    scl_debug("PostgreSQL store: the session is ended: what it may hold is in doubt");
    close_session();
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
        scl_close_quietly(session.fd);
    forget();
}

void scl_pg_forget_inherited(void)
{
    int saved = errno;

    if (session.conn == NULL && !scl_pg_turns_held())
        return; /* nothing to write: no copy-on-write fault */
    drop_inherited();
    /* A thread of the parent had the lock as it forked: that thread is not here. */
    scl_pg_turns_forget_inherited();
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
    /* Such as a commit's wait for the synchronous standby cancelled by
     * another session (pg_cancel_backend): committed here only. */
    if (severity != NULL && strcmp(severity, "WARNING") == 0)
        session.warned = 1;
    scl_debug("PostgreSQL store: server says: %s",
              session.pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) ?: "(no message)");
}

static int fail(int err, const char *what)
{
    scl_debug("PostgreSQL store: %s", what);
    scl_pg_remember_reason(what);
    errno = err;
    return -1;
}

/* What to connect with: our defaults, then libpq's variables as the
 * master's environment set them (settings_pg.h), then the connection string,
 * then what only we decide.  Allocated: a worker's stack is not ours. */
struct connect_params {
    const char **keywords, **values;
    char application[64], timeout[16];
};

static void params_free(struct connect_params *p)
{
    free(p->keywords);
    free(p->values);
}

static int params_make(struct connect_params *p, int64_t deadline)
{
    const struct scl_pg_settings *settings = scl_pg_settings();
    size_t n = 0, cap = NDEFAULTS + 4;
    char host[64] = "";

    memset(p, 0, sizeof *p);
    for (const char *e = settings->pg_env; *e != '\0'; e += strlen(e) + 1, e += strlen(e) + 1)
        cap++;
    p->keywords = calloc(cap, sizeof *p->keywords);
    p->values = calloc(cap, sizeof *p->values);
    if (p->keywords == NULL || p->values == NULL) {
        params_free(p);
        return fail(ENOMEM, "out of memory for a connection");
    }
    for (; n < NDEFAULTS; n++) {
        p->keywords[n] = default_keywords[n];
        p->values[n] = default_values[n];
    }
    for (const char *e = settings->pg_env; *e != '\0'; e += strlen(e) + 1, e += strlen(e) + 1) {
        p->keywords[n] = e;
        p->values[n++] = e + strlen(e) + 1;
    }
    /* Keywords after dbname override what its connection string says. */
    p->keywords[n] = "dbname";
    p->values[n++] = settings->store;
    (void)gethostname(host, sizeof host - 1);
    /* The tools find holders by this name (pid first: the server keeps 63 bytes). */
    snprintf(p->application, sizeof p->application, "swerve-claim pid=%d host=%s", (int)getpid(), host);
    p->keywords[n] = "application_name";
    p->values[n++] = p->application;
    if (deadline >= 0) {
        /* libpq counts whole seconds, and takes 1 for 2. */
        int64_t left = (deadline - scl_monotonic_ns() + 999999999) / 1000000000;
        if (left < 10) {
            snprintf(p->timeout, sizeof p->timeout, "%d", left < 2 ? 2 : (int)left);
            p->keywords[n] = "connect_timeout";
            p->values[n++] = p->timeout;
        }
    }
    p->keywords[n] = NULL;
    p->values[n] = NULL;
    return 0;
}

/* Why CONN could not connect, as an errno: libpq says it only in words
 * (the server's FATAL message is in them). */
static int connect_errno(PGconn *conn, const char *message)
{
    static const struct {
        const char *words;
        int err;
    } causes[] = {
        { "too many clients", EUSERS },
        { "too many connections", EUSERS }, /* for role "x": before "role" */
        { "connection slots are reserved", EUSERS },
        { "password authentication failed", EKEYREJECTED },
        { "authentication failed", EKEYREJECTED },
        { "no password supplied", EKEYREJECTED },
        { "pg_hba.conf", EKEYREJECTED },
        { "role \"", EKEYREJECTED },     /* role "x" does not exist */
        { "permission denied", EACCES }, /* no CONNECT on the database */
        { "read-only", EROFS },          /* target_session_attrs=read-write */
        { "hot standby", EROFS },
        { "timeout expired", ETIMEDOUT },
        { "does not exist", ENOENT },
    };

    if (session.pq->connectionNeedsPassword(conn))
        return EKEYREJECTED;
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++)
        if (strstr(message, causes[i].words) != NULL)
            return causes[i].err;
    return ECONNREFUSED;
}

static PGconn *connect_with(const struct connect_params *p)
{
    PGconn *conn = session.pq->connectdbParams(p->keywords, p->values, 1);
    const char *message, *line;

    if (conn == NULL) {
        fail(ENOMEM, "out of memory for a connection");
        return NULL;
    }
    if (session.pq->status(conn) == SCL_CONNECTION_OK)
        return conn;
    message = session.pq->errorMessage(conn);
    errno = connect_errno(conn, message);
    scl_debug("PostgreSQL store: cannot connect: %s", message);
    /* libpq's first line names the server; the server's words follow. */
    line = strstr(message, "FATAL:");
    scl_pg_remember_reason(line != NULL ? line : message);
    session.pq->finish(conn);
    return NULL;
}

/* Waits until CONN has a whole result, or DEADLINE passes: 1, 0 when it
 * passed, -1 when the connection failed. */
static int wait_result(PGconn *conn, int fd, int64_t deadline)
{
    const struct scl_libpq *pq = session.pq;

    while (pq->isBusy(conn)) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int timeout = -1, r;
        if (deadline >= 0) {
            int64_t left = deadline - scl_monotonic_ns();
            if (left <= 0)
                return 0;
            timeout = left / 1000000 >= INT_MAX ? INT_MAX : (int)((left + 999999) / 1000000);
        }
        r = poll(&pfd, 1, timeout);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0 && pq->consumeInput(conn) == 0)
            return -1;
    }
    return 1;
}

/* The backend pid CONN's QUERY says (its last result's first column), or
 * 0 when it does not say it by DEADLINE. */
static int backend_of(PGconn *conn, const char *query, int64_t deadline)
{
    const struct scl_libpq *pq = session.pq;
    PGresult *res;
    int pid = 0, r;

    if (!pq->sendQuery(conn, query))
        return 0;
    r = wait_result(conn, pq->socket(conn), deadline);
    while (r == 1 && (res = pq->getResult(conn)) != NULL) {
        if (pq->resultStatus(res) == SCL_PGRES_TUPLES_OK && pq->ntuples(res) == 1)
            pid = atoi(pq->getvalue(res, 0, 0));
        pq->clear(res);
    }
    return r == 1 ? pid : 0;
}

/* A pooler in transaction (or statement) mode hands each transaction of a
 * client to whichever server session is free, so a session lock stays
 * with a server session the client may never see again, even after the
 * client dies.  It shows itself when server sessions change hands: a
 * second client's transaction lands in the session this one has just
 * left, or this one's next statement in the one the second client has just
 * left (a pooler reuses the session freed last).  In session mode neither
 * can happen; the second client gets a session of its own, or none while
 * the pool is full (then it gives up after PROBE_WAIT_NS). */
#define PROBE_WAIT_NS (200 * 1000000LL)
#define PROBE_ROUNDS  3
static int pooled_by_transaction(const struct connect_params *p)
{
    const struct scl_libpq *pq = session.pq;
    int64_t deadline = scl_monotonic_ns() + PROBE_WAIT_NS;
    PGconn *second = connect_with(p);
    int moved = 0;

    if (second == NULL)
        return 0;
    for (int round = 0; round < PROBE_ROUNDS && !moved; round++) {
        int theirs = backend_of(second, "BEGIN; SELECT pg_backend_pid()", deadline);
        if (theirs == 0)
            break;
        int ours;
        moved = theirs == session.backend;
        if (moved || backend_of(second, "COMMIT; SELECT 1", deadline) != 1)
            break;
        ours = backend_of(session.conn, "SELECT pg_backend_pid()", deadline);
        moved = ours != 0 && ours != session.backend;
    }
    pq->finish(second);
    return moved;
}

/* A nonce for this client's mark on its server session: unpredictable, so
 * that no other client can wear it. */
static void make_nonce(void)
{
    unsigned char raw[8];

    if (getrandom(raw, sizeof raw, GRND_NONBLOCK) != (ssize_t)sizeof raw) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        memcpy(raw, &now.tv_nsec, 4);
        memcpy(raw + 4, &(int){ getpid() }, 4);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(session.nonce + 2 * i, 3, "%02x", raw[i]);
}

static int setup(const struct connect_params *p)
{
    const char *values[1] = { session.nonce };
    PGresult *res;
    int standby, fresh, backend, pooled;

    make_nonce();
    if ((res = scl_pg_run(setup_sql, 1, NULL, values, NULL, NULL)) == NULL)
        return -1;
    standby = strcmp(session.pq->getvalue(res, 0, 0), "t") == 0;
    backend = atoi(session.pq->getvalue(res, 0, 1));
    fresh = strcmp(session.pq->getvalue(res, 0, 2), "t") == 0;
    session.server_version = atoi(session.pq->getvalue(res, 0, 8));
    session.pq->clear(res);
    /* Its BackendKeyData is not the backend's: a pooler is in between. */
    pooled = backend != session.pq->backendPID(session.conn);
    seen.standby = standby;
    seen.server_version = session.server_version;
    seen.pooler = pooled ? SCL_ADMIN_POOLER_NOT_PROBED : SCL_ADMIN_POOLER_NONE;
    if (standby)
        return fail(EROFS, "the server is a standby (pg_is_in_recovery): claims need the primary");
    if (!fresh) {
        seen.pooler = SCL_ADMIN_POOLER_HANDED_ON;
        return fail(EPROTO, "the server session is not new (prepared statements, advisory locks or another "
                            "client's mark): a pooler hands out sessions other clients used; session locks need "
                            "a session of their own (doc/cluster.md, PgBouncer)");
    }
    session.backend = backend;
    if (pooled) {
        if (pooled_by_transaction(p)) {
            seen.pooler = SCL_ADMIN_POOLER_TRANSACTION;
            return fail(EPROTO, "a pooler in transaction or statement mode is in between: session locks would "
                                "stay in server sessions other clients get; connect to PostgreSQL itself or to a "
                                "session-mode pool (doc/cluster.md, PgBouncer)");
        }
        seen.pooler = SCL_ADMIN_POOLER_UNTOLD;
        if (strcmp(scl_pg_settings()->pooler, "session") != 0)
            return fail(EPROTO, "a pooler is in between, in a mode that cannot be told from here: if it pools "
                                "sessions (PgBouncer's pool_mode = session), say so with "
                                "SWERVE_CLAIM_POOLER=session (doc/cluster.md, PgBouncer)");
        seen.pooler = SCL_ADMIN_POOLER_DECLARED;
    }
    snprintf(session.backend_text, sizeof session.backend_text, "%d", session.backend);
    return 0;
}

/* Where CONN reached, for the tools (seen): libpq's own words, no
 * password among them. */
static void note_reached(PGconn *conn)
{
    const struct scl_libpq *pq = session.pq;

    seen.reached = 1;
    snprintf(seen.host, sizeof seen.host, "%s", pq->host(conn) ?: "");
    snprintf(seen.port, sizeof seen.port, "%s", pq->port(conn) ?: "");
    snprintf(seen.database, sizeof seen.database, "%s", pq->db(conn) ?: "");
    snprintf(seen.role, sizeof seen.role, "%s", pq->user(conn) ?: "");
}

static int connect_session(void)
{
    const struct scl_pg_settings *settings = scl_pg_settings();
    struct connect_params params;
    struct stat st;
    int err;

    memset(&seen, 0, sizeof seen);
    if (settings->store_error != 0)
        return fail(settings->store_error, "SWERVE_CLAIM_STORE or SWERVE_CLAIM_SCOPE is too long");
    if ((session.pq = scl_libpq()) == NULL)
        return -1;
    if (params_make(&params, scl_pg_deadline_now()) != 0)
        return -1;
    if ((session.conn = connect_with(&params)) == NULL) {
        err = errno;
        params_free(&params);
        errno = err;
        return -1;
    }
    note_reached(session.conn);
    session.fd = session.pq->socket(session.conn);
    if (fstat(session.fd, &st) != 0) {
        err = errno;
        session.pq->finish(session.conn);
        forget();
        params_free(&params);
        errno = err;
        return -1;
    }
    session.dev = st.st_dev;
    session.ino = st.st_ino;
    session.owner = getpid();
    session.ended = 0;
    scl_pg_cancel_set(session.pq, session.pq->getCancel(session.conn));
    session.pq->setNoticeReceiver(session.conn, on_notice, NULL);
    if (setup(&params) != 0) {
        err = errno;
        close_session();
        params_free(&params);
        errno = err;
        return -1;
    }
    params_free(&params);
    return 0;
}

/* Server messages on another connection: nothing to remember, nothing
 * printed (the host's standard error is not ours). */
static void ignore_notice(void *arg, const PGresult *res)
{
    (void)arg;
    (void)res;
}

/* Another session waits as long as its statement does: no timeout of the
 * role's or the database's ends it (nor its idleness between two). */
static const char another_setup_sql[] =
    "SELECT set_config('statement_timeout', '0', false), set_config('lock_timeout', '0', false), "
    "CASE WHEN current_setting('server_version_num')::int >= 140000 "
    "THEN set_config('idle_session_timeout', '0', false) END, "
    "CASE WHEN current_setting('server_version_num')::int >= 170000 "
    "THEN set_config('transaction_timeout', '0', false) END";

PGconn *scl_pg_connect_another(int64_t deadline)
{
    const struct scl_libpq *pq;
    struct connect_params params;
    PGconn *conn;
    PGresult *res;
    int answered;

    if (session.pq == NULL && (session.pq = scl_libpq()) == NULL)
        return NULL;
    pq = session.pq;
    if (params_make(&params, deadline) != 0)
        return NULL;
    conn = connect_with(&params);
    params_free(&params);
    if (conn == NULL)
        return NULL;
    pq->setNoticeReceiver(conn, ignore_notice, NULL);
    answered = pq->sendQuery(conn, another_setup_sql) ? wait_result(conn, pq->socket(conn), deadline) : -1;
    while (answered == 1 && (res = pq->getResult(conn)) != NULL) {
        if (pq->resultStatus(res) != SCL_PGRES_TUPLES_OK)
            answered = -2;
        pq->clear(res);
    }
    if (answered != 1) {
        pq->finish(conn);
        fail(answered == 0    ? ETIMEDOUT
             : answered == -1 ? ECONNRESET
                              : EIO,
             "another session for a wait could not be set up (its timeouts turned off)");
        return NULL;
    }
    return conn;
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
    static const struct {
        const char *state;
        int err;
    } errnos[] = {
        /* undefined_table, undefined_function, invalid_schema_name, and
         * undefined_column: a view of an older schema */
        { "42P01", ENOENT },
        { "42883", ENOENT },
        { "3F000", ENOENT },
        { "42703", ENOENT },
        { "42501", EACCES },
        { "25006", EROFS },
        /* duplicate_prepared_statement, invalid_sql_statement_name: a
         * statement prepared in this session is, or is not, in another's */
        { "42P05", EPROTO },
        { "26000", EPROTO },
        { "53300", EUSERS },
        { "57014", ECANCELED }, /* query_canceled: before the next line */
        { "53200", ENOLCK },    /* out_of_memory: the lock table is full */
        { "08", ECONNRESET },
        { "57P", ECONNRESET },
    };

    if (state == NULL)
        return EIO;
    for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
        if (strncmp(state, errnos[i].state, strlen(errnos[i].state)) == 0)
            return errnos[i].err;
    return EIO;
}

static int succeeded(const PGresult *res)
{
    int status = session.pq->resultStatus(res);

    return status == SCL_PGRES_TUPLES_OK || status == SCL_PGRES_COMMAND_OK;
}

/* RES, when it is a success; else NULL with errno, the session closed if
 * it is lost. */
static PGresult *checked(PGresult *res)
{
    const struct scl_libpq *pq = session.pq;
    const char *message;
    int err;

    if (res != NULL && succeeded(res))
        return res;
    err = res != NULL ? errno_of(pq->resultErrorField(res, SCL_PG_DIAG_SQLSTATE)) : ENOMEM;
    message = res != NULL ? pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) ?: "error"
                          : pq->errorMessage(session.conn);
    scl_debug("PostgreSQL store: %s", message);
    scl_pg_remember_reason(message);
    if (err == ENOENT)
        scl_debug("PostgreSQL store: the schema is missing or old: run 'swerve-claim db init'");
    if (err == EPROTO)
        scl_debug("PostgreSQL store: a pooler in transaction mode is in between (doc/cluster.md, PgBouncer)");
    if (res != NULL)
        pq->clear(res);
    if (pq->status(session.conn) != SCL_CONNECTION_OK || session.ended) {
        close_session();
        err = ECONNRESET;
    }
    errno = err;
    return NULL;
}

/* The result of the statement just sent, waiting no later than the
 * deadline (scl_pg_deadline()): past it, the statement is cancelled (what
 * it waits for in the server, a lock, a synchronous standby, a pool slot,
 * ends) and its answer read, so the session stays in step; in a session
 * that holds nothing yet it is simply closed (a pooler may ignore a
 * cancel for a client that has no server).
 *
 * A statement has succeeded only once the server says it is ready for
 * the next: a prepared statement's rows come before its transaction
 * commits (at Sync), and they reach us early whenever the server flushes
 * before that, as a backend killed in the commit's wait for a synchronous
 * standby does (its shutdown notice).  So an error after the rows, or a
 * connection lost, is the answer: a token whose commit did not end is no
 * token.  Every wait, between results too, keeps to the deadline. */
static PGresult *receive(void)
{
    const struct scl_libpq *pq = session.pq;
    PGresult *res, *kept = NULL;
    int64_t until = scl_pg_deadline_now();
    int r;

    for (;;) {
        r = wait_result(session.conn, session.fd, until);
        if (r == 0 && session.backend_text[0] == '\0') {
            if (kept != NULL)
                pq->clear(kept);
            close_session(); /* still being set up: holds nothing */
            errno = ETIMEDOUT;
            return NULL;
        }
        if (r == 0) {
            /* Sent again until the answer comes: a cancel that reached
             * the server before the statement had begun there was lost. */
            session.cancelled = 1;
            scl_pg_turns_cancel_own();
            until = scl_monotonic_ns() + SCL_PG_RECANCEL_NS;
            continue;
        }
        if (r < 0 || (res = pq->getResult(session.conn)) == NULL)
            break;
        if (kept == NULL || (succeeded(kept) && !succeeded(res))) {
            if (kept != NULL)
                pq->clear(kept);
            kept = res;
        } else {
            pq->clear(res);
        }
    }
    if (r < 0 && kept != NULL) {
        pq->clear(kept); /* the connection failed before the end */
        kept = NULL;
    }
    return checked(kept);
}

/* The answer to a statement sent (SENT), which other threads may
 * interrupt as KIND says: NULL with ETIMEDOUT when it was cancelled at the
 * deadline, ECANCELED when for another thread. */
static PGresult *answer(int sent, enum scl_pg_interruption kind)
{
    PGresult *res;

    session.cancelled = 0;
    session.interrupted = 0;
    session.warned = 0;
    session.sent = sent;
    if (sent && kind == SCL_PG_AFTER_PATIENCE)
        scl_pg_turns_interruptible(kind);
    res = sent ? receive() : checked(NULL);
    if (kind != SCL_PG_NOT_INTERRUPTIBLE)
        session.interrupted = scl_pg_turns_statement_ended();
    if (res == NULL && errno == ECANCELED && session.cancelled)
        errno = ETIMEDOUT;
    return res;
}

/* Whether a wait may start: not while another thread is queued for the
 * session (it could not cancel what had not started yet).  Then ECANCELED,
 * and nothing is sent. */
static int begin_interruptible(void)
{
    int alone = scl_pg_turns_begin_wait();

    if (!alone)
        errno = ECANCELED;
    return alone;
}

PGresult *scl_pg_run(const char *sql, int nparams, const unsigned *types, const char *const *values, const int *lengths,
                     const int *formats)
{
    return answer(session.pq->sendQueryParams(session.conn, sql, nparams, types, values, lengths, formats, 0),
                  session.backend_text[0] != '\0' ? SCL_PG_AFTER_PATIENCE : SCL_PG_NOT_INTERRUPTIBLE);
}

PGresult *scl_pg_run_prepared(enum scl_pg_statement which, const char *const *values)
{
    const struct scl_libpq *pq = session.pq;
    enum scl_pg_interruption kind = which == SCL_PG_WAIT   ? SCL_PG_AT_ONCE
                                    : which == SCL_PG_UNDO ? SCL_PG_NOT_INTERRUPTIBLE
                                                           : SCL_PG_AFTER_PATIENCE;

    if (!(session.prepared & 1u << which)) {
        /* Not at once: a wait's prepare has not begun to wait. */
        PGresult *res = answer(pq->sendPrepare(session.conn, statements[which].name, statements[which].sql,
                                               statements[which].nparams, NULL),
                               kind == SCL_PG_AT_ONCE ? SCL_PG_AFTER_PATIENCE : kind);
        if (res == NULL)
            return NULL;
        pq->clear(res);
        session.prepared |= 1u << which;
    }
    if (which == SCL_PG_WAIT && !begin_interruptible()) {
        session.sent = 0;
        return NULL;
    }
    return answer(
        pq->sendQueryPrepared(session.conn, statements[which].name, statements[which].nparams, values, NULL, NULL, 0),
        kind);
}
