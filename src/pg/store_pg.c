/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store: a claim is a session advisory lock, named through
 * the registry of schema.sql, in the process's one session (session.h).
 * Claims go with the session: the server frees them when the process dies,
 * so the lifecycle hooks have almost nothing to do here.
 */
#include "config.h"

#include "log.h"
#include "pg.h"
#include "session.h"
#include "settings_pg.h"
#include "sigsafe.h"
#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A wait is one statement in the server's queue, so that pg_locks shows
 * when it began (its waitstart) and the server hands the lock over the
 * moment it is free; another thread that needs the session meanwhile
 * cancels it (session.c).  Before PostgreSQL 14, which cannot check a
 * waiting client (client_connection_check_interval), a wait is cut into
 * slices of WAIT_SLICE_MS, so that a dead waiter's claims are freed at the
 * end of one. */
#define WAIT_SLICE_MS       250
#define CHECKS_CLIENT_SINCE 140000
/* lock_timeout's largest value: a wait for ever is cut into these. */
#define WAIT_LONGEST_MS 2147483647LL
/* How long past the deadline the server's lock_timeout may answer before
 * the client cancels the wait itself: a cancel costs a connection. */
#define WAIT_GRACE_NS (100 * 1000000LL)
/* A try that does not wait still ends its round trips by then (a registry
 * insert waits for a synchronous standby). */
#define TRY_BOUND_NS (2 * 1000000000LL)
/* token() waits this long for the database (a synchronous standby that is
 * away), then fails with ETIMEDOUT. */
#define TOKEN_BOUND_NS (10 * 1000000000LL)
/* How long other threads first let token()'s commit run before they
 * cancel it (session.c), doubled after each cancel up to the longest
 * they are kept waiting. */
#define PATIENCE_START_NS   (40 * 1000000LL)
#define PATIENCE_LONGEST_NS (80 * 1000000LL)
/* release() waits this long for the database, then fails (the hold stays). */
#define RELEASE_BOUND_NS (10 * 1000000000LL)
/* How often a handle retries while another handle of this process holds
 * the name (advisory locks are re-entrant in a session: the server would
 * say yes). */
#define LOCAL_RETRY_NS (20 * 1000 * 1000LL)

/*
 * An event loop's wait (swerve_claim_wait_fd()): a connection of the
 * handle's own, whose one statement queues in the server for a shared
 * lock on the claim's key and gives it back at once.  Its answer comes
 * when the name is free: a release, a holder whose session ended (its
 * process died, release --force ended it), so the connection's socket is
 * what the loop watches.  Shared: the waiters of every process are let
 * through together, and an exclusive request queued before them (a
 * blocking acquire's) is served first.
 */
struct pg_watch {
    pid_t owner;  /* the process the connection is open in; 0: none */
    PGconn *conn; /* NULL: none */
    int waiting;  /* its statement has not answered yet */
    dev_t dev;    /* its socket's inode: the host may have closed the */
    ino_t ino;    /* number (closefrom) and opened its own there */
};

/* 1 when W's connection is open in process SELF, on its own socket. */
static int watch_is_ours(const struct pg_watch *w, pid_t self)
{
    return w->conn != NULL && w->owner == self && scl_fd_is(scl_pg_libpq()->socket(w->conn), S_IFSOCK, w->dev, w->ino);
}

static const char watch_sql[] = "SELECT pg_advisory_lock_shared(1398231638, $1::int4), "
                                "pg_advisory_unlock_shared(1398231638, $1::int4)";

struct scl_key {
    struct pg_watch watch;
    int32_t id;               /* in swerve_claim.names; 0 until known */
    unsigned id_generation;   /* the session it was looked up in: a failover
                               * may have lost the row, and given the id to
                               * another name since */
    unsigned held_generation; /* the session it holds the name in */
    uint64_t token;           /* that hold's, 0 until asked for */
    double since;             /* when the hold began, epoch seconds */
    char mark[12];            /* its grant's mark (session.h): the key's
                               * second, "" when it has none */
    size_t len;
    char name[];
};

/* The names this process holds, in the current session. */
static struct {
    int32_t *ids;
    size_t n, cap;
    unsigned generation;
} held;

static void held_sync(void)
{
    if (held.generation != scl_pg_generation()) {
        held.n = 0;
        held.generation = scl_pg_generation();
    }
}

static int held_here(int32_t id)
{
    held_sync();
    for (size_t i = 0; i < held.n; i++)
        if (held.ids[i] == id)
            return 1;
    return 0;
}

static int held_add(int32_t id)
{
    held_sync();
    if (held.n == held.cap) {
        size_t cap = held.cap ? 2 * held.cap : 16;
        int32_t *ids = realloc(held.ids, cap * sizeof *ids);
        if (ids == NULL)
            return -1;
        held.ids = ids;
        held.cap = cap;
    }
    held.ids[held.n++] = id;
    return 0;
}

static void held_remove(int32_t id)
{
    held_sync();
    for (size_t i = 0; i < held.n; i++)
        if (held.ids[i] == id) {
            held.ids[i] = held.ids[--held.n];
            return;
        }
}

static struct scl_key *pg_key_new(const char *name, size_t len)
{
    struct scl_key *key = calloc(1, sizeof *key + len + 1);

    if (key == NULL)
        return NULL;
    key->len = len;
    memcpy(key->name, name, len);
    return key;
}

static void close_watch(struct pg_watch *w)
{
    /* Another process's (a forked child's copy) is forgotten: its
     * finish() would end the parent's wait; so is one whose socket the
     * host closed (finish() would write to what it opened there): a few
     * kilobytes left behind. */
    if (w->conn != NULL && watch_is_ours(w, getpid()))
        scl_pg_libpq()->finish(w->conn);
    *w = (struct pg_watch){ .conn = NULL };
}

static void pg_key_free(struct scl_key *key)
{
    close_watch(&key->watch);
    free(key);
}

/* Before a try: takes the answer of the watch's statement, when it has
 * come, so that the next wait asks anew; a connection that failed is
 * closed (the next wait opens another). */
static void consume_watch(struct pg_watch *w, pid_t self)
{
    const struct scl_libpq *pq;
    PGresult *res;
    int failed = 0;

    if (w->owner != self || !w->waiting)
        return;
    if (!watch_is_ours(w, self)) {
        close_watch(w);
        return;
    }
    pq = scl_pg_libpq();
    if (pq->consumeInput(w->conn) == 0) {
        close_watch(w);
        return;
    }
    if (pq->isBusy(w->conn))
        return; /* not answered: woken for nothing, it waits on */
    while ((res = pq->getResult(w->conn)) != NULL) {
        failed |= pq->resultStatus(res) != SCL_PGRES_TUPLES_OK;
        pq->clear(res);
    }
    w->waiting = 0;
    /* A statement that failed may have failed between its lock and its
     * unlock (a cancel, a timeout of the role's): the session could hold
     * the shared lock, which keeps every exclusive one off the name.
     * Ended: the server frees whatever it held. */
    if (failed)
        close_watch(w);
}

/* Runs SQL on the scope and NAME (binary bytea): the result, or NULL. */
PGresult *scl_pg_run_named(const char *sql, const char *name, size_t len)
{
    const char *scope = scl_pg_settings()->scope;
    const unsigned types[2] = { SCL_BYTEAOID, SCL_BYTEAOID };
    const char *values[2] = { scope, name };
    const int lengths[2] = { (int)strlen(scope), (int)len }, formats[2] = { 1, 1 };

    return scl_pg_run(sql, 2, types, values, lengths, formats);
}

/* The value of the one-row RES as a number, 0 when NULL; RES is cleared. */
static long long single_value(PGresult *res)
{
    const struct scl_libpq *pq = scl_pg_libpq();
    long long v = 0;

    if (pq->ntuples(res) == 1 && !pq->getisnull(res, 0, 0))
        v = strtoll(pq->getvalue(res, 0, 0), NULL, 10);
    pq->clear(res);
    return v;
}

static const char lookup_sql[] = "SELECT id FROM swerve_claim.names "
                                 "WHERE digest = sha256($1 || '\\x00'::bytea || $2) AND scope = $1 AND name = $2";
static const char register_sql[] =
    "INSERT INTO swerve_claim.names (scope, name) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING RETURNING id";

/* Finds KEY's id, registering the name when CREATE says so: 0 (KEY->id
 * is 0 only when the name is unregistered and CREATE is 0), or -1. */
static int resolve(struct scl_key *key, int create)
{
    PGresult *res;

    if (key->id != 0 && key->id_generation == scl_pg_generation())
        return 0;
    key->id = 0;
    key->id_generation = scl_pg_generation();
    /* Looked up first: INSERT ... ON CONFLICT would spend an id of the
     * sequence on every call, and a worker may make a handle per request. */
    for (int round = 0; round < 2 && key->id == 0; round++) {
        if ((res = scl_pg_run_named(round == 0 ? lookup_sql : register_sql, key->name, key->len)) == NULL)
            return -1;
        key->id = (int32_t)single_value(res);
        if (!create)
            return 0;
    }
    if (key->id != 0)
        return 0;
    /* Lost the race to register it: the winner has committed by now. */
    if ((res = scl_pg_run_named(lookup_sql, key->name, key->len)) == NULL)
        return -1;
    if ((key->id = (int32_t)single_value(res)) == 0) {
        scl_debug("PostgreSQL store: the name registry has no row for a name it refused as a duplicate");
        errno = EIO;
        return -1;
    }
    return 0;
}

/* Runs the prepared statement WHICH on KEY in this session, with EXTRA
 * as its fourth parameter when it takes one: the result, or NULL. */
static PGresult *run_on_key(enum scl_pg_statement which, const struct scl_key *key, const char *extra)
{
    char id[16];
    const char *values[4] = { id, scl_pg_backend(), scl_pg_nonce(), extra };

    snprintf(id, sizeof id, "%d", (int)key->id);
    return scl_pg_run_prepared(which, values);
}

/* The release's fourth parameter: KEY's mark, NULL without one. */
static const char *mark_of(const struct scl_key *key)
{
    return key->mark[0] != '\0' ? key->mark : NULL;
}

/* Whether a call that failed asks again: another thread wanted the
 * session (ECANCELED) and had it first, and DEADLINE (-1 none) has not
 * passed (else ETIMEDOUT). */
static int again(int64_t deadline)
{
    if (errno != ECANCELED)
        return 0;
    if (deadline >= 0 && scl_monotonic_ns() >= deadline) {
        errno = ETIMEDOUT;
        return 0;
    }
    return 1;
}

/* Says that a statement ran in another server session: EPROTO. */
static int moved_session(void)
{
    scl_debug("PostgreSQL store: a statement ran in another server session than this one's: a pooler in "
              "transaction mode is in between (doc/cluster.md, PgBouncer)");
    errno = EPROTO;
    return -1;
}

/* The boolean the one-row RES says: 1 true, 0 false, -1 NULL (the
 * statement ran in another session: EPROTO); RES is cleared. */
static int single_boolean(PGresult *res)
{
    const struct scl_libpq *pq = scl_pg_libpq();
    int r = pq->ntuples(res) != 1 || pq->getisnull(res, 0, 0) ? -1 : strcmp(pq->getvalue(res, 0, 0), "t") == 0;

    pq->clear(res);
    return r < 0 ? moved_session() : r;
}

/* Gives the statement that undoes a slipped grant its own time: the
 * acquire's deadline may be what ended the statement that took it. */
#define UNDO_BOUND_NS (2 * 1000000000LL)

/* The statement that should have taken KEY failed: if it failed after the
 * grant, the session holds the lock all the same (session locks outlive a
 * rollback), and it can only have been this statement's (this process did
 * not hold KEY before it).  Gives it back, in this session only; when
 * that fails too, ends the session (the server then frees everything it
 * held) rather than keep a lock nobody knows of.  Keeps errno. */
static void undo_slipped_grant(const struct scl_key *key)
{
    int err = errno;
    PGresult *res;

    if (err != ECONNRESET && err != EPROTO && scl_pg_sent()) {
        scl_pg_deadline(scl_monotonic_ns() + UNDO_BOUND_NS);
        if ((res = run_on_key(SCL_PG_UNDO, key, NULL)) != NULL)
            scl_pg_libpq()->clear(res);
        else if (errno != ECONNRESET)
            scl_pg_abandon();
    }
    errno = err;
}

/* Ran a statement that says whether KEY was granted, and its mark: 0,
 * or -1 with EWOULDBLOCK (not granted), ECANCELED (another thread had the
 * session first: ask again) or the error.  Session locked. */
static int take(struct scl_key *key, PGresult *res)
{
    const struct scl_libpq *pq = scl_pg_libpq();
    struct timespec now;

    if (res == NULL) {
        undo_slipped_grant(key);
        return -1;
    }
    if (pq->ntuples(res) != 1 || pq->getisnull(res, 0, 0)) {
        pq->clear(res);
        return moved_session();
    }
    snprintf(key->mark, sizeof key->mark, "%s", pq->getvalue(res, 0, 0));
    pq->clear(res);
    if (strcmp(key->mark, "0") == 0) {
        key->mark[0] = '\0';
        errno = EWOULDBLOCK;
        return -1;
    }
    if (strcmp(key->mark, "-1") == 0)
        key->mark[0] = '\0';
    if (held_add(key->id) != 0) {
        undo_slipped_grant(key); /* one that cannot be cancelled, or the session ends */
        return -1;
    }
    /* The server's second, as the tools show it, where it was marked. */
    clock_gettime(CLOCK_REALTIME, &now);
    key->since =
        key->mark[0] != '\0' ? (double)(uint32_t)strtol(key->mark, NULL, 10) : (double)now.tv_sec + now.tv_nsec / 1e9;
    key->token = 0;
    key->held_generation = scl_pg_generation();
    return 0;
}

/* Unlocks the session, keeping errno: R. */
static int finish(int r)
{
    int err = errno;

    scl_pg_unlock();
    errno = err;
    return r;
}

/* The session, locked and open until DEADLINE, and KEY's id: 0, or -1
 * (unlocked). */
static int begin(struct scl_key *key, pid_t self, int create, int64_t deadline)
{
    do {
        scl_pg_lock();
        scl_pg_deadline(deadline);
        if (scl_pg_open(self) == 0 && resolve(key, create) == 0)
            return 0;
        finish(-1);
    } while (again(deadline));
    return -1;
}

/* Past the cap a grant would be given back at once: refused before it. */
static int room_for_one_more(void)
{
    if ((long)held.n < scl_pg_settings()->max_names || held.generation != scl_pg_generation())
        return 1;
    scl_why("PostgreSQL store: this process holds %zu names, SWERVE_CLAIM_MAX_NAMES: no more", held.n);
    errno = ENOLCK;
    return 0;
}

static int pg_try_acquire(struct scl_key *key, pid_t self, int64_t deadline)
{
    int64_t until = deadline == 0 ? scl_monotonic_ns() + TRY_BOUND_NS : deadline;
    int r;

    consume_watch(&key->watch, self);
    do {
        if (begin(key, self, 1, until) != 0)
            return -1;
        if (held_here(key->id)) {
            errno = EWOULDBLOCK;
            return finish(-1);
        }
        if (!room_for_one_more())
            return finish(-1);
        r = finish(take(key, run_on_key(SCL_PG_TRY, key, NULL)));
    } while (r != 0 && again(until));
    return r;
}

static int pg_acquire_wait(struct scl_key *key, pid_t self, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline < 0 ? INT64_MAX : deadline - scl_monotonic_ns(), slice_ms;
        char wait_ms[16];
        int r;

        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (begin(key, self, 1, deadline) != 0)
            return -1;
        if (held_here(key->id)) {
            /* Another handle of this process: only it can let go. */
            struct timespec pause = { 0, (long)(left < LOCAL_RETRY_NS ? left : LOCAL_RETRY_NS) };
            scl_pg_unlock();
            nanosleep(&pause, NULL);
            continue;
        }
        if (!room_for_one_more())
            return finish(-1);
        slice_ms = scl_pg_server_version() >= CHECKS_CLIENT_SINCE ? WAIT_LONGEST_MS : WAIT_SLICE_MS;
        /* Rounded up: a wait never ends before its deadline. */
        snprintf(wait_ms, sizeof wait_ms, "%lld",
                 (long long)(left / 1000000 >= slice_ms ? slice_ms : (left + 999999) / 1000000));
        scl_pg_deadline(deadline < 0 ? -1 : deadline + WAIT_GRACE_NS);
        /* Not granted in time, or cancelled for another thread: again,
         * behind it. */
        r = take(key, run_on_key(SCL_PG_WAIT, key, wait_ms));
        if (finish(r) == 0 || (errno != EWOULDBLOCK && !again(deadline)))
            return r;
    }
}

static int pg_release(struct scl_key *key)
{
    int64_t deadline = scl_monotonic_ns() + RELEASE_BOUND_NS;
    PGresult *res;

    for (;;) {
        scl_pg_lock();
        if (!scl_pg_current(getpid()) || key->held_generation != scl_pg_generation() || !held_here(key->id))
            return finish(0); /* its session ended: so did the hold */
        scl_pg_deadline(deadline);
        res = run_on_key(key->token != 0 ? SCL_PG_RELEASE_RECORDED : SCL_PG_RELEASE, key, mark_of(key));
        if (res != NULL || errno == ECONNRESET)
            break;
        if (finish(-1) != 0 && !again(deadline))
            return -1; /* still held: still in the table */
    }
    if (res != NULL && single_boolean(res) < 0)
        return finish(-1);
    held_remove(key->id);
    return finish(0);
}

static int pg_available(struct scl_key *key)
{
    char id[16];
    const char *values[1] = { id };
    PGresult *res;
    int r;

    for (;;) {
        if (begin(key, getpid(), 0, -1) != 0)
            return -1;
        if (key->id == 0)
            return finish(1); /* never registered: never claimed */
        if (held_here(key->id))
            return finish(0);
        snprintf(id, sizeof id, "%d", (int)key->id);
        if ((res = scl_pg_run("SELECT swerve_claim.available($1)", 1, NULL, values, NULL, NULL)) != NULL)
            break;
        if (finish(-1) != 0 && !again(-1))
            return -1;
    }
    r = strcmp(scl_pg_libpq()->getvalue(res, 0, 0), "t") == 0;
    scl_pg_libpq()->clear(res);
    return finish(r);
}

/* Issued on the first call of a hold, in the holding session: an
 * acquire that never asks for one pays no WAL flush (the sequence's, once
 * every 32 values) and never waits for a synchronous standby.  0 with
 * errno when it cannot be had (ECANCELED: another thread had the session
 * first, ask again); session locked. */
static uint64_t issue_token(struct scl_key *key)
{
    const struct scl_libpq *pq;
    char since[32];
    PGresult *res;
    long long token;

    if (!scl_pg_current(getpid()) || key->held_generation != scl_pg_generation() || !held_here(key->id)) {
        errno = ECONNRESET; /* its session ended: so did the hold */
        return 0;
    }
    snprintf(since, sizeof since, "%.6f", key->since);
    if ((res = run_on_key(SCL_PG_TOKEN, key, since)) == NULL)
        return 0;
    pq = scl_pg_libpq();
    if (pq->ntuples(res) != 1 || pq->getisnull(res, 0, 0)) {
        single_boolean(res); /* says why, and sets EPROTO */
        return 0;
    }
    token = single_value(res);
    if (scl_pg_cancelled() || scl_pg_interrupted() || scl_pg_warned()) {
        /* Committed here, but perhaps not on the synchronous standby: a
         * failover could hand it out again (a cancel from another
         * session says only a WARNING). */
        scl_debug("PostgreSQL store: a token dropped: its commit's wait for the synchronous standby was cancelled");
        errno = scl_pg_cancelled() ? ETIMEDOUT : ECANCELED;
        return 0;
    }
    return (uint64_t)token;
}

static uint64_t pg_token(const struct scl_key *ckey)
{
    struct scl_key *key = (struct scl_key *)ckey; /* the token is cached in it */
    int64_t deadline = scl_monotonic_ns() + TOKEN_BOUND_NS, patience = PATIENCE_START_NS;

    if (key->token != 0)
        return key->token;
    do {
        scl_pg_lock();
        scl_pg_deadline(deadline);
        /* Each commit cancelled for another thread is given twice as
         * long next time, up to 80 ms: a standby that answers within it
         * cannot be starved by the others, who never wait much longer. */
        scl_pg_patience(patience);
        patience = 2 * patience < PATIENCE_LONGEST_NS ? 2 * patience : PATIENCE_LONGEST_NS;
        key->token = issue_token(key);
        finish(0);
    } while (key->token == 0 && again(deadline));
    return key->token;
}

static int pg_wait_fd(struct scl_key *key, pid_t self)
{
    int64_t deadline = scl_monotonic_ns() + TRY_BOUND_NS;
    struct pg_watch *w = &key->watch;
    const struct scl_libpq *pq;
    char id[16];
    const char *values[1] = { id };

    if (w->conn != NULL && !watch_is_ours(w, self))
        close_watch(w);
    if (w->conn != NULL && w->waiting)
        return scl_pg_libpq()->socket(w->conn);
    /* The name's id, registered by the try that failed (or now). */
    if (begin(key, self, 1, deadline) != 0)
        return -1;
    snprintf(id, sizeof id, "%d", (int)key->id);
    finish(0);
    pq = scl_pg_libpq();
    if (w->conn != NULL && pq->status(w->conn) != SCL_CONNECTION_OK)
        close_watch(w);
    if (w->conn == NULL) {
        struct stat st;
        if ((w->conn = scl_pg_connect_another(deadline)) == NULL)
            return -1;
        if (fstat(pq->socket(w->conn), &st) != 0) {
            int err = errno;
            pq->finish(w->conn);
            w->conn = NULL;
            errno = err;
            return -1;
        }
        w->owner = self;
        w->dev = st.st_dev;
        w->ino = st.st_ino;
    }
    if (!pq->sendQueryParams(w->conn, watch_sql, 1, NULL, values, NULL, NULL, 0)) {
        scl_debug("PostgreSQL store: cannot wait for a claim: %s", pq->errorMessage(w->conn));
        close_watch(w);
        errno = ECONNRESET;
        return -1;
    }
    w->waiting = 1;
    return pq->socket(w->conn);
}

static void pg_wait_end(struct scl_key *key)
{
    close_watch(&key->watch);
}

static int pg_held(const struct scl_key *key)
{
    return scl_pg_alive() && key->held_generation == scl_pg_generation();
}

/* ------------------------------------------------------------ lifecycle */

static void pg_at_load(pid_t self)
{
    (void)self; /* the session is opened by the first claim */
}

static void pg_after_fork_in_child(void)
{
    scl_pg_forget_inherited();
}

static void pg_child_reaped(pid_t child, int status)
{
    (void)child; /* its session ended with it */
    (void)status;
}

static int pg_process_execs(void)
{
    /* libpq's socket is close-on-exec: the session ends with the image. */
    return held.n > 0 && held.generation == scl_pg_generation();
}

static int pg_exec_env(const char **name, const char **value)
{
    /* SWERVE_CLAIM_STORE may carry a password: an exec'd image gets it
     * from the host's environment, as the host decides, never from us. */
    (void)name;
    (void)value;
    return 0;
}

static void pg_process_ends(pid_t parent)
{
    (void)parent; /* the kernel closes the socket; the server frees the rest */
}

static void pg_becoming_user(uid_t uid)
{
    (void)uid; /* the session does not depend on the uid */
}

static void pg_before_fork(pid_t self)
{
    (void)self; /* a child opens a session of its own, when it claims */
}

static void pg_before_chroot(void)
{
    /* A session is a socket: it works inside a chroot as outside. */
}

/* A session has no place the tools read a worker's draining from: the
 * process finds it on its own (drain.h), and the tools do not show it. */
static unsigned pg_drain_told(pid_t self, unsigned found)
{
    (void)self;
    (void)found;
    return 0;
}

static void pg_child_draining(pid_t child)
{
    (void)child;
}

const struct scl_store_ops scl_store_pg = {
    .key_new = pg_key_new,
    .key_free = pg_key_free,
    .try_acquire = pg_try_acquire,
    .release = pg_release,
    .available = pg_available,
    .token = pg_token,
    .acquire_wait = pg_acquire_wait,
    .wait_fd = pg_wait_fd,
    .wait_end = pg_wait_end,
    .held = pg_held,
    .drain_told = pg_drain_told,
    .at_load = pg_at_load,
    .before_fork = pg_before_fork,
    .after_fork_in_child = pg_after_fork_in_child,
    .child_reaped = pg_child_reaped,
    .process_execs = pg_process_execs,
    .exec_env = pg_exec_env,
    .process_ends = pg_process_ends,
    .becoming_user = pg_becoming_user,
    .before_chroot = pg_before_chroot,
    .child_draining = pg_child_draining,
};
