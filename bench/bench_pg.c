/* SPDX-License-Identifier: MIT */
/*
 * bench_pg - what the PostgreSQL store costs, next to raw libpq on the same
 * server in the same run.  A program, not a test: it prints and asserts
 * nothing.  `make bench` runs it under the shim against a private cluster
 * (bench/pg.sh), with SWERVE_CLAIM_STORE set.
 *
 *   0. the server's fsync and synchronous_commit, which decide whether a
 *      commit that writes WAL waits for the disk;
 *   1. an uncontended acquire(c, 0)+release pair, and one with token() in
 *      between (what `swerve-claim run` pays), next to raw
 *      pg_try_advisory_lock + pg_advisory_unlock (prepared, as the store's
 *      statements are) on a connection of its own, in alternating rounds,
 *      every pair timed (p50, p90, p99 of all of them: a WAL flush every
 *      32 nextvals hides in a median of rounds); beside them, the disk's
 *      own flush, timed where the WAL is, and the server's WAL flushes per
 *      1000 pairs of each kind;
 *   2. the hand-off from a release to a waiter in another process, next to
 *      PostgreSQL's own queue (pg_advisory_unlock to a blocked
 *      pg_advisory_lock), in alternating hand-offs.
 */
#include "config.h" /* _GNU_SOURCE: sched_getaffinity */

#include "clock.h"

#include <swerve/claim-loader.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libpq-fe.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS    20
#define PAIRS     400
#define FLUSHES   10
#define WAL_PAIRS 1000
#define HANDOFFS  201

static struct swerve_claim_api api;

static void die(const char *what)
{
    fprintf(stderr, "bench_pg: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double percentile(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(p * (n - 1) + 0.5)];
}

/* The baseline at its best: raw libpq, its statements prepared once, as
 * the store prepares its own. */
static const char *const raw_sql[] = {
    "SELECT pg_try_advisory_lock(1, $1::int4)",
    "SELECT true FROM pg_advisory_lock(1, $1::int4)",
    "SELECT pg_advisory_unlock(1, $1::int4)",
};
static const char *const raw_try = "0", *const raw_wait = "1", *const raw_unlock = "2";

static PGconn *raw_connect(void)
{
    PGconn *conn = PQconnectdb(getenv("SWERVE_CLAIM_STORE"));

    if (PQstatus(conn) != CONNECTION_OK) {
        fprintf(stderr, "bench_pg: %s", PQerrorMessage(conn));
        exit(1);
    }
    for (int i = 0; i < 3; i++) {
        char name[2] = { (char)('0' + i), '\0' };
        PGresult *res = PQprepare(conn, name, raw_sql[i], 1, NULL);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            fprintf(stderr, "bench_pg: %s", PQerrorMessage(conn));
            exit(1);
        }
        PQclear(res);
    }
    return conn;
}

/* Runs prepared statement STMT with the key (1, KEY); dies unless it says
 * true. */
static void raw(PGconn *conn, const char *stmt, int key)
{
    char text[16];
    const char *values[1] = { text };
    PGresult *res;

    snprintf(text, sizeof text, "%d", key);
    res = PQexecPrepared(conn, stmt, 1, values, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK || strcmp(PQgetvalue(res, 0, 0), "f") == 0) {
        fprintf(stderr, "bench_pg: %s: %s", raw_sql[*stmt - '0'], PQerrorMessage(conn));
        exit(1);
    }
    PQclear(res);
}

/* Runs SQL on CONN, which must hand back one row of one value; that
 * value, in BUF. */
static const char *one_value(PGconn *conn, const char *sql, char *buf, size_t size)
{
    PGresult *res = PQexec(conn, sql);

    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        fprintf(stderr, "bench_pg: %s: %s", sql, PQerrorMessage(conn));
        exit(1);
    }
    snprintf(buf, size, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return buf;
}

/* What makes the figures honest or not: with fsync off a commit flushes
 * nothing, and the token's cost disappears from the pair. */
static void print_settings(PGconn *conn)
{
    char fsync[16], commit[16], method[32];
    cpu_set_t set;

    one_value(conn, "SHOW fsync", fsync, sizeof fsync);
    one_value(conn, "SHOW synchronous_commit", commit, sizeof commit);
    one_value(conn, "SHOW wal_sync_method", method, sizeof method);
    printf("0. the server: fsync %s, synchronous_commit %s, wal_sync_method %s (as a new session sees them)\n", fsync,
           commit, method);
    if (strcmp(fsync, "on") != 0)
        printf("   fsync is off: no commit waits for the disk, the figures below leave the flushes out\n");
    if (getenv("SCL_PG_CPU") != NULL && sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1)
        printf("   the server and this bench on CPU %s alone (bench/pg.sh says why)\n", getenv("SCL_PG_CPU"));
    else
        printf("   not pinned to one CPU: where the scheduler puts each backend moves the pair's figures\n");
}

/* The disk's flush, where the WAL is: an 8 KiB pwrite at the next offset
 * of a file written out and flushed beforehand, then fdatasync, as
 * PostgreSQL writes a page into a WAL segment it has preallocated and
 * flushes it at a commit (wal_sync_method fdatasync).  In the cluster's
 * data directory (SCL_PG_DATA; bench/pg.sh sets it), on pg_wal's
 * filesystem.  NULL when there is no such directory. */
#define FLUSH_FILE  (1 << 20)
#define FLUSH_BLOCK 8192

struct flusher {
    int fd;
    off_t at;
    char block[FLUSH_BLOCK];
    char path[4096];
};

static struct flusher *flusher_open(void)
{
    static struct flusher f;
    const char *data = getenv("SCL_PG_DATA");
    char wal[4096];
    struct stat here, there;

    if (data == NULL || *data == '\0')
        return NULL;
    snprintf(f.path, sizeof f.path, "%s/bench_pg-flush.tmp", data);
    snprintf(wal, sizeof wal, "%s/pg_wal", data);
    if ((f.fd = open(f.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
        die(f.path);
    memset(f.block, 'w', sizeof f.block);
    for (off_t off = 0; off < FLUSH_FILE; off += FLUSH_BLOCK)
        if (pwrite(f.fd, f.block, sizeof f.block, off) != (ssize_t)sizeof f.block)
            die("pwrite");
    if (fsync(f.fd) != 0)
        die("fsync");
    if (fstat(f.fd, &here) != 0 || stat(wal, &there) != 0)
        die(wal);
    if (here.st_dev != there.st_dev)
        fprintf(stderr, "bench_pg: %s is not on pg_wal's filesystem\n", f.path);
    return &f;
}

/* One flush: the seconds a pwrite + fdatasync took. */
static double flush_once(struct flusher *f)
{
    double t0 = now_s();

    if (pwrite(f->fd, f->block, sizeof f->block, f->at) != (ssize_t)sizeof f->block || fdatasync(f->fd) != 0)
        die("pwrite+fdatasync");
    f->at = (f->at + FLUSH_BLOCK) % FLUSH_FILE;
    return now_s() - t0;
}

static void flusher_close(struct flusher *f)
{
    if (f == NULL)
        return;
    close(f->fd);
    unlink(f->path);
}

/* The server's WAL flushes so far (pg_stat_wal.wal_sync, every backend's
 * and the WAL writer's), and where WAL insertion is. */
static long long wal_syncs(PGconn *conn, char *lsn, size_t size)
{
    char n[32];

    one_value(conn, "SELECT pg_current_wal_insert_lsn()", lsn, size);
    return atoll(one_value(conn, "SELECT wal_sync FROM pg_stat_wal", n, sizeof n));
}

enum pair_kind { PAIR_CLAIM, PAIR_TOKEN, PAIR_RAW, PAIR_KINDS };

static const char *const pair_label[PAIR_KINDS] = {
    "acquire(c, 0) + release",
    "acquire + token() + release",
    "raw try_advisory_lock + unlock",
};

/* One pair of KIND: the seconds it took. */
static double pair_once(enum pair_kind kind, struct swerve_claim *c, PGconn *conn)
{
    double t0 = now_s();

    if (kind == PAIR_RAW) {
        raw(conn, raw_try, 7);
        raw(conn, raw_unlock, 7);
        return now_s() - t0;
    }
    if (api.acquire(c, 0.0) == NULL)
        die("acquire");
    if (kind == PAIR_TOKEN && api.token(c) == 0)
        die("token");
    api.release(c);
    return now_s() - t0;
}

/* Has both sessions, the store's and the raw one, publish their
 * statistics.  A backend publishes them when a statement ends at least 1 s
 * after it last did (else only after 10 s idle): so a pause, then a
 * statement in each (a bare pair, no token, in the store's). */
static void settle_stats(struct swerve_claim *c, PGconn *conn)
{
    char one[8];

    usleep(1100 * 1000);
    pair_once(PAIR_CLAIM, c, conn);
    one_value(conn, "SELECT 1", one, sizeof one);
}

/* The server's WAL flushes for COUNT pairs of KIND alone (and the bare
 * pair settle_stats adds). */
static void wal_per_kind(enum pair_kind kind, struct swerve_claim *c, PGconn *conn, int count)
{
    char lsn0[32], lsn1[32], diff[64], sql[160];
    long long before, after;

    before = wal_syncs(conn, lsn0, sizeof lsn0);
    for (int i = 0; i < count; i++)
        pair_once(kind, c, conn);
    settle_stats(c, conn);
    after = wal_syncs(conn, lsn1, sizeof lsn1);
    snprintf(sql, sizeof sql, "SELECT pg_wal_lsn_diff('%s', '%s')::bigint", lsn1, lsn0);
    one_value(conn, sql, diff, sizeof diff);
    printf("   %-31s %5lld WAL flushes, %7s bytes of WAL per %d pairs\n", pair_label[kind], after - before, diff,
           count);
}

static void print_row(const char *label, double *v, int n, int ms)
{
    double unit = ms ? 1e3 : 1e6;
    int digits = ms ? 3 : 1;

    printf("   %-31s p50 %8.*f   p90 %8.*f   p99 %8.*f %s   (%d samples)\n", label, digits,
           percentile(v, n, 0.5) * unit, digits, percentile(v, n, 0.9) * unit, digits, percentile(v, n, 0.99) * unit,
           ms ? "ms" : "us", n);
}

static void bench_pairs(void)
{
    static double samples[PAIR_KINDS][ROUNDS * PAIRS], flushes[ROUNDS * FLUSHES];
    struct swerve_claim *c = api.new_claim("bench-pair");
    PGconn *conn = raw_connect();
    struct flusher *flusher = flusher_open();
    int kinds = api.token != NULL ? PAIR_KINDS : PAIR_TOKEN; /* token() since SWERVECLAIM_1.1 */
    int n = 0, nflush = 0;
    double claim50, raw50;

    print_settings(conn);
    /* Warm all up: the session, the registry row, the plans. */
    for (int i = 0; i < 50; i++)
        for (int k = 0; k < PAIR_KINDS; k++)
            if (k != PAIR_TOKEN || api.token != NULL)
                pair_once((enum pair_kind)k, c, conn);
    /* Each round runs a block of each kind, in an order that turns round
     * by round, and a few flushes: drift and the neighbours' load hit
     * every row alike.  Every pair is timed on its own. */
    for (int r = 0; r < ROUNDS; r++) {
        for (int j = 0; j < PAIR_KINDS; j++) {
            enum pair_kind k = (enum pair_kind)((r + j) % PAIR_KINDS);
            if (k == PAIR_TOKEN && api.token == NULL)
                continue;
            for (int i = 0; i < PAIRS; i++)
                samples[k][n + i] = pair_once(k, c, conn);
        }
        n += PAIRS;
        for (int i = 0; flusher != NULL && i < FLUSHES; i++)
            flushes[nflush++] = flush_once(flusher);
    }
    printf("1. uncontended pair over loopback, every pair timed: %d alternated rounds x %d pairs of each (us)\n",
           ROUNDS, PAIRS);
    claim50 = percentile(samples[PAIR_CLAIM], n, 0.5);
    raw50 = percentile(samples[PAIR_RAW], n, 0.5);
    for (int k = 0; k < PAIR_KINDS; k++)
        if (k != PAIR_TOKEN || kinds == PAIR_KINDS)
            print_row(pair_label[k], samples[k], n, 0);
        else
            printf("   %-31s (the library has no swerve_claim_token)\n", pair_label[k]);
    printf("   ratio acquire+release / raw     p50 %8.2f   (target <= 1.30)\n", claim50 / raw50);
    printf("   ratio acquire+release / raw     p99 %8.2f\n",
           percentile(samples[PAIR_CLAIM], n, 0.99) / percentile(samples[PAIR_RAW], n, 0.99));
    if (flusher != NULL)
        print_row("disk flush: 8 KiB + fdatasync", flushes, nflush, 1);
    else
        printf("   disk flush: not measured (SCL_PG_DATA unset)\n");
    if (flusher != NULL)
        printf("      (pwrite of 8 KiB into a flushed 1 MiB file + fdatasync, in the cluster's data directory,\n"
               "       on pg_wal's filesystem: what a commit that writes WAL waits for, at least)\n");
    flusher_close(flusher);
    printf("   the server's WAL flushes (pg_stat_wal.wal_sync) for pairs of one kind alone:\n");
    settle_stats(c, conn);
    for (int k = 0; k < PAIR_KINDS; k++)
        if (k != PAIR_TOKEN || kinds == PAIR_KINDS)
            wal_per_kind((enum pair_kind)k, c, conn, WAL_PAIRS);
    PQfinish(conn);
    api.free(c);
}

/* A waiter process for one side (CLAIM: the shim's API, else raw libpq):
 * each byte on GO, it waits for the name, and says on BACK when it got it. */
struct waiter {
    int claim, go, back;
    pid_t pid;
};

static void start_waiter(struct waiter *w, struct swerve_claim *c, int claim)
{
    int go[2], back[2];

    if (pipe(go) != 0 || pipe(back) != 0)
        die("pipe");
    w->claim = claim;
    if ((w->pid = fork()) == 0) {
        PGconn *mine = claim ? NULL : raw_connect();
        char byte;

        close(go[1]);
        close(back[0]);
        while (read(go[0], &byte, 1) == 1) {
            double t;
            if (claim && api.acquire(c, 30.0) == NULL) {
                fprintf(stderr, "bench_pg: waiter: %s\n", strerror(errno));
                _exit(1);
            }
            if (!claim)
                raw(mine, raw_wait, 8);
            t = now_s();
            if (claim)
                api.release(c);
            else
                raw(mine, raw_unlock, 8);
            if (write(back[1], &t, sizeof t) != sizeof t)
                _exit(1);
        }
        _exit(0);
    }
    if (w->pid < 0)
        die("fork");
    close(go[0]);
    close(back[1]);
    w->go = go[1];
    w->back = back[0];
}

/* One hand-off to W: this process holds the name, W queues for it, this
 * process lets go; the milliseconds from the release to W's grant. */
static double handoff(const struct waiter *w, struct swerve_claim *c, PGconn *conn)
{
    double released, taken;

    if (w->claim && api.acquire(c, 30.0) == NULL)
        die("acquire");
    if (!w->claim)
        raw(conn, raw_wait, 8);
    if (write(w->go, "x", 1) != 1)
        die("write");
    usleep(20000); /* the waiter queues in the server meanwhile */
    released = now_s();
    if (w->claim)
        api.release(c);
    else
        raw(conn, raw_unlock, 8);
    if (read(w->back, &taken, sizeof taken) != sizeof taken) {
        fprintf(stderr, "bench_pg: the waiter gave up\n");
        exit(1);
    }
    return (taken - released) * 1e3;
}

static void bench_handoff(void)
{
    double claim[HANDOFFS], bare[HANDOFFS], claim_p50, bare_p50;
    struct swerve_claim *c = api.new_claim("bench-handoff");
    PGconn *conn = raw_connect();
    struct waiter sides[2];

    start_waiter(&sides[0], c, 1);
    start_waiter(&sides[1], c, 0);
    for (int i = 0; i < HANDOFFS; i++) { /* alternated: drift hits both */
        claim[i] = handoff(&sides[0], c, conn);
        bare[i] = handoff(&sides[1], c, conn);
    }
    for (int i = 0; i < 2; i++) { /* each waiter has the other's pipes too: no EOF */
        kill(sides[i].pid, SIGTERM);
        waitpid(sides[i].pid, NULL, 0);
        close(sides[i].go);
        close(sides[i].back);
    }
    PQfinish(conn);
    api.free(c);
    claim_p50 = percentile(claim, HANDOFFS, 0.5);
    bare_p50 = percentile(bare, HANDOFFS, 0.5);
    printf("2. hand-off from a release to a waiter queued in the server, %d alternated hand-offs each\n", HANDOFFS);
    printf("   swerve_claim_acquire      p50 %6.3f ms   p99 %6.3f ms\n", claim_p50, percentile(claim, HANDOFFS, 0.99));
    printf("   raw pg_advisory_lock      p50 %6.3f ms   p99 %6.3f ms\n", bare_p50, percentile(bare, HANDOFFS, 0.99));
    printf("   ratio of p50s                %6.2f      (target <= 1.50)\n", claim_p50 / bare_p50);
}

int main(void)
{
    if (!swerve_claim_load(&api) || getenv("SWERVE_CLAIM_STORE") == NULL) {
        fprintf(stderr, "bench_pg: run under the shim with SWERVE_CLAIM_STORE set (make bench does)\n");
        return 1;
    }
    bench_pairs();
    bench_handoff();
    return 0;
}
