/*
 * bench_pg - what the PostgreSQL store costs, next to raw libpq on the same
 * server in the same run.  A program, not a test: it prints and asserts
 * nothing.  `make bench` runs it under the shim against a private cluster
 * (bench/pg.sh), with SWERVE_CLAIM_STORE set.
 *
 *   1. an uncontended acquire+release pair, next to raw
 *      pg_try_advisory_lock + pg_advisory_unlock (prepared, as the store's
 *      statements are) on a connection of its own, in alternating rounds;
 *   2. the hand-off from a release to a waiter in another process, next to
 *      PostgreSQL's own queue (pg_advisory_unlock to a blocked
 *      pg_advisory_lock), in alternating hand-offs.
 */
#include <swerve/claim-loader.h>

#include <errno.h>
#include <signal.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS   15
#define PAIRS    300
#define HANDOFFS 201

static struct swerve_claim_api api;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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

static void bench_pairs(void)
{
    struct swerve_claim *c = api.new_claim("bench-pair");
    PGconn *conn = raw_connect();
    double claim[ROUNDS], bare[ROUNDS], ratio[ROUNDS];

    /* Warm both up: the session, the registry row, the plans. */
    for (int i = 0; i < 50; i++) {
        if (api.acquire(c, 0.0) == NULL)
            die("acquire");
        api.release(c);
        raw(conn, raw_try, 7);
        raw(conn, raw_unlock, 7);
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        for (int i = 0; i < PAIRS; i++) {
            if (api.acquire(c, 0.0) == NULL)
                die("acquire");
            api.release(c);
        }
        claim[r] = (now_s() - t0) / PAIRS * 1e6;
        t0 = now_s();
        for (int i = 0; i < PAIRS; i++) {
            raw(conn, raw_try, 7);
            raw(conn, raw_unlock, 7);
        }
        bare[r] = (now_s() - t0) / PAIRS * 1e6;
        ratio[r] = claim[r] / bare[r];
    }
    printf("1. uncontended pair over loopback, median of %d alternated rounds x %d pairs\n", ROUNDS, PAIRS);
    printf("   acquire+release (token included)       %7.1f us\n", percentile(claim, ROUNDS, 0.5));
    printf("   raw pg_try_advisory_lock+unlock         %7.1f us   (prepared)\n", percentile(bare, ROUNDS, 0.5));
    printf("   ratio                                   %7.2f    (median of per-round ratios; target <= 1.30)\n",
           percentile(ratio, ROUNDS, 0.5));
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
