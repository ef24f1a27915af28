/* SPDX-License-Identifier: MIT */
/*
 * pg_helper - what tests/pg/pg.sh runs under the shim with the PostgreSQL
 * store: an application that knows the API only through dlsym.  Each
 * command prints one line per event, with CLOCK_REALTIME in nanoseconds
 * where the test compares times across processes.  Every loop is bounded.
 *
 *   hold NAME [notoken] take NAME (or exit 1), say "held TOKEN" (with
 *                       notoken, token() is never called: "held 0"), then
 *                       watch held() every millisecond; say "lost NS" when
 *                       it turns 0 (at most 120 s)
 *   let-go NAME         take NAME and token(), release; take it again, no
 *                       token(), release: say "released", then sleep 60 s
 *                       (the test kills it)
 *   take NAME SECONDS   say "took TOKEN NS", or "failed ERRNO-NAME"
 *   retake NAME         take NAME, say "held TOKEN"; once held() turns 0
 *                       (the test ends the session), take it again with
 *                       the same handle: say "retook TOKEN HELD"
 *   fork-holder NAME    take NAME; a forked child exits (through exit());
 *                       say "kept" if NAME is still ours and still taken;
 *                       fork a child that sleeps 60 s, say "sleeper PID",
 *                       and sleep (the test SIGKILLs this process)
 *   close-fds NAME      take NAME, then close every descriptor above 2, as
 *                       daemons do, and open sockets of its own at those
 *                       numbers; then release(), held() (must say 0) and a
 *                       new acquire must work without a byte sent to any of
 *                       them: says "ok"
 *   slip NAME ROUNDS    a holder (a child) lets go of NAME just as this
 *                       process's timed wait for it ends, ROUNDS times;
 *                       then a third process must find NAME free: says
 *                       "timeouts T grants G leaks L", exit 1 at the first
 *                       leak
 *   contend NAME SECONDS HOLD_MS [WAIT]
 *                       for SECONDS (at most 2,000 tries): acquire(NAME,
 *                       WAIT) (default 0: try once), and when taken say "held BEGIN_NS END_NS" (from
 *                       acquire's return to just before release, a part
 *                       of the real hold), holding it HOLD_MS; else say
 *                       "failed ERRNO-NAME"; 2 ms between tries; "done"
 *   many PREFIX COUNT   take PREFIX-0, PREFIX-1, ... until one fails or
 *                       COUNT are held: say "held N", then "failed
 *                       ERRNO-NAME" (or "failed none"), then "ready"; hold
 *                       them 60 s (the test SIGKILLs this process)
 *   hold-wait HELD WANTED
 *                       take HELD, say "held", then wait for WANTED for
 *                       ever: say "waiting" first (the test SIGKILLs it)
 *   threads BUSY PREFIX PAIRS [token]
 *                       take and release PREFIX-0 .. PREFIX-(PAIRS-1) once
 *                       (not timed); then one thread waits acquire(BUSY,
 *                       3.0) (another process holds BUSY, or the database
 *                       waits for something to register it) or, with
 *                       token, takes BUSY and asks for its token() (the
 *                       database may wait for a standby), while this one,
 *                       200 ms in, times each call of PAIRS acquire(0) +
 *                       release pairs on those names: say "pairs N max_ms
 *                       M" (M the slowest single call, in ms, 3 decimals),
 *                       then "waiter ERRNO-NAME MS" (or "waiter took MS")
 *   pairs NAME COUNT    COUNT acquire(0) + release pairs, token() never
 *                       called: say "pairs N" or "failed ERRNO-NAME at I"
 *   token-twice NAME    take NAME, token() twice, release, take it again,
 *                       token(): say "tokens A B C"
 *   tokens NAME SECONDS for SECONDS (at most 100,000 rounds): acquire(5),
 *                       token(), release; say "token T" as each is had
 *                       (0: "failed-token ERRNO-NAME", and stop; a failed
 *                       acquire: "failed ERRNO-NAME", and stop); "done N"
 *   timed NAME SECONDS [token]
 *                       acquire(NAME, SECONDS): say "acquired MS" or
 *                       "failed ERRNO-NAME MS"; then with "token" and held:
 *                       "token T MS" or "token-failed ERRNO-NAME MS" (MS:
 *                       that call's time, monotonic)
 */
#define _GNU_SOURCE 1 /* strerrorname_np */
#include "clock.h"

#include <swerve/claim-loader.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct swerve_claim_api api;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static struct swerve_claim *claim(const char *name)
{
    struct swerve_claim *c = api.new_claim(name);

    if (c == NULL) {
        say("failed new %s", strerror(errno));
        exit(1);
    }
    return c;
}

static int hold(const char *name, int with_token)
{
    struct swerve_claim *c = claim(name);

    if (api.acquire(c, 0.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    say("held %llu", with_token ? (unsigned long long)api.token(c) : 0ULL);
    for (int ms = 0; ms < 120000; ms++) {
        if (!api.held(c)) {
            say("lost %lld", wall_ns());
            return 0;
        }
        usleep(1000);
    }
    say("still held");
    return 1;
}

static int let_go(const char *name)
{
    struct swerve_claim *c = claim(name);

    for (int round = 0; round < 2; round++)
        if (api.acquire(c, 0.0) == NULL || (round == 0 && api.token(c) == 0) || api.release(c) != 0) {
            say("failed %s in round %d", strerrorname_np(errno), round);
            return 1;
        }
    say("released");
    sleep(60);
    return 0;
}

static int take(const char *name, double seconds)
{
    struct swerve_claim *c = claim(name);

    int r = api.acquire(c, seconds) == NULL;

    if (r)
        say("failed %s", strerrorname_np(errno));
    else
        say("took %llu %lld", (unsigned long long)api.token(c), wall_ns());
    api.free(c);
    return r;
}

static int retake(const char *name)
{
    struct swerve_claim *c = claim(name);
    int ms;

    if (api.acquire(c, 0.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    say("held %llu", (unsigned long long)api.token(c));
    for (ms = 0; ms < 60000 && api.held(c); ms++)
        usleep(1000);
    if (api.acquire(c, 5.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    say("retook %llu %d", (unsigned long long)api.token(c), api.held(c));
    api.free(c);
    return 0;
}

static int wait_for(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int fork_holder(const char *name)
{
    struct swerve_claim *c = claim(name), *other = claim(name);
    pid_t child;

    if (api.acquire(c, 0.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    if ((child = fork()) == 0)
        exit(0); /* through the exit hooks, with the handle and the session inherited */
    if (child < 0 || wait_for(child) != 0)
        return 1;
    /* Still ours, and nobody else's to take: the child's exit ended nothing. */
    if (fork() == 0)
        _exit(api.acquire(other, 0.0) == NULL && errno == EWOULDBLOCK ? 0 : 1);
    if (api.held(c) && wait(NULL) > 0)
        say("kept");
    if ((child = fork()) == 0) {
        sleep(60);
        _exit(0);
    }
    say("sleeper %d", (int)child);
    sleep(60);
    return 1;
}

static int close_fds(const char *name)
{
    struct swerve_claim *c = claim(name);
    int pairs[64][2], n = 0;
    char byte;

    if (api.acquire(c, 0.0) == NULL)
        return 1;
    for (int fd = 3; fd <= 64; fd++)
        close(fd);
    /* The host's own sockets, at every number the session's could have had. */
    while (n < 64 && socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[n]) == 0 && pairs[n][1] < 64)
        n++;
    if (api.release(c) != 0 || api.held(c) != 0 || api.acquire(c, 0.0) != c || api.release(c) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        for (int end = 0; end < 2; end++)
            if (recv(pairs[i][end], &byte, 1, MSG_DONTWAIT) >= 0) {
                say("the library wrote to the host's socket %d", pairs[i][1 - end]);
                return 1;
            }
    say("ok");
    return 0;
}

static int slip(const char *name, int rounds)
{
    struct swerve_claim *c = claim(name);
    int timeouts = 0, grants = 0, leaks = 0;

    for (int i = 0; i < rounds; i++) {
        int ready[2];
        char byte;
        /* The holder lets go 20 ms in, give or take 0.6 ms; the wait ends at 20 ms. */
        long hold_us = 19400 + (i * 37) % 1200;
        pid_t holder;

        if (pipe(ready) != 0)
            return 2;
        if ((holder = fork()) == 0) {
            int ok = api.acquire(c, 0.0) == c && write(ready[1], "x", 1) == 1;
            usleep((useconds_t)hold_us);
            _exit(ok && api.release(c) == 0 ? 0 : 1);
        }
        close(ready[1]);
        if (read(ready[0], &byte, 1) != 1) {
            say("round %d: the holder could not take %s", i, name);
            return 2;
        }
        close(ready[0]);
        if (api.acquire(c, 0.020) == c) {
            grants++;
            api.release(c);
        } else if (errno == ETIMEDOUT) {
            timeouts++;
        } else {
            say("failed %s", strerrorname_np(errno));
            return 2;
        }
        if (wait_for(holder) != 0)
            return 2;
        /* Whatever happened, nobody holds it now: a third process takes it. */
        pid_t third = fork();
        if (third == 0) /* and lets go before it ends: the next round starts at once */
            _exit(api.acquire(c, 0.0) == c && api.release(c) == 0 ? 0 : 1);
        if (wait_for(third) != 0 && ++leaks)
            break; /* this process's session keeps it: every later round would fail */
    }
    say("timeouts %d grants %d leaks %d", timeouts, grants, leaks);
    return leaks > 0;
}

static int contend(const char *name, double seconds, int hold_ms, double wait)
{
    struct swerve_claim *c = claim(name);
    double end = now_s() + seconds;

    for (int i = 0; i < 2000 && now_s() < end; i++) {
        if (api.acquire(c, wait) == c) {
            long long begin = wall_ns();
            usleep((useconds_t)hold_ms * 1000);
            say("held %lld %lld", begin, wall_ns());
            api.release(c);
        } else {
            say("failed %s", strerrorname_np(errno));
        }
        usleep(2000);
    }
    say("done");
    return 0;
}

static int many(const char *prefix, int count)
{
    int n = 0, err = 0;

    for (; n < count; n++) {
        char name[64];
        struct swerve_claim *c;

        snprintf(name, sizeof name, "%s-%d", prefix, n);
        c = claim(name);
        if (api.acquire(c, 0.0) == NULL) {
            err = errno;
            break;
        }
        /* never freed: the process holds them all until it is killed */
    }
    say("held %d", n);
    say("failed %s", n < count ? strerrorname_np(err) : "none");
    say("ready");
    sleep(60);
    return 1;
}

static int hold_wait(const char *held, const char *wanted)
{
    struct swerve_claim *c = claim(held), *w = claim(wanted);

    if (api.acquire(c, 0.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    say("held");
    say("waiting");
    if (api.acquire(w, INFINITY) == NULL)
        say("failed %s", strerrorname_np(errno));
    else
        say("took");
    return 1;
}

struct waiter {
    const char *name;
    int with_token;
    int err;
    double ms;
};

static void *wait_busy(void *arg)
{
    struct waiter *w = arg;
    struct swerve_claim *c = claim(w->name);
    double start = now_s();

    if (w->with_token)
        w->err = api.acquire(c, 0.0) == NULL || api.token(c) == 0 ? errno : 0;
    else
        w->err = api.acquire(c, 3.0) == NULL ? errno : 0;
    w->ms = (now_s() - start) * 1e3;
    api.free(c);
    return NULL;
}

static int threads(const char *busy, const char *prefix, int pairs, int with_token)
{
    struct swerve_claim *cs[64];
    struct waiter w = { busy, with_token, 0, 0 };
    pthread_t waiter;
    double slowest = 0;
    int n = 0;

    if (pairs > 64)
        pairs = 64;
    for (int i = 0; i < pairs; i++) {
        char name[64];

        snprintf(name, sizeof name, "%s-%d", prefix, i);
        cs[i] = claim(name);
        /* registered, and the session open, before anything is timed */
        if (api.acquire(cs[i], 0.0) != cs[i] || api.release(cs[i]) != 0) {
            say("failed %s", strerrorname_np(errno));
            return 1;
        }
    }
    if (pthread_create(&waiter, NULL, wait_busy, &w) != 0)
        return 1;
    usleep(200000);
    for (; n < pairs; n++) {
        double t0 = now_s(), t1, t2;
        int ok = api.acquire(cs[n], 0.0) == cs[n];

        t1 = now_s();
        ok = ok && api.release(cs[n]) == 0;
        t2 = now_s();
        slowest = fmax(slowest, 1e3 * fmax(t1 - t0, t2 - t1));
        if (!ok) {
            say("failed %s at %d", strerrorname_np(errno), n);
            break;
        }
    }
    say("pairs %d max_ms %.3f", n, slowest);
    pthread_join(waiter, NULL);
    if (w.err)
        say("waiter %s %.0f", strerrorname_np(w.err), w.ms);
    else
        say("waiter took %.0f", w.ms);
    return n < pairs;
}

static int pairs(const char *name, int count)
{
    struct swerve_claim *c = claim(name);

    for (int i = 0; i < count; i++)
        if (api.acquire(c, 0.0) != c || api.release(c) != 0) {
            say("failed %s at %d", strerrorname_np(errno), i);
            return 1;
        }
    say("pairs %d", count);
    return 0;
}

static int token_twice(const char *name)
{
    struct swerve_claim *c = claim(name);
    unsigned long long a, b, t;

    if (api.acquire(c, 0.0) != c) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    a = api.token(c);
    b = api.token(c);
    api.release(c);
    if (api.acquire(c, 0.0) != c) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    t = api.token(c);
    say("tokens %llu %llu %llu", a, b, t);
    return 0;
}

static int tokens(const char *name, double seconds)
{
    struct swerve_claim *c = claim(name);
    double end = now_s() + seconds;
    int n = 0;

    for (; n < 100000 && now_s() < end; n++) {
        unsigned long long t;

        if (api.acquire(c, 5.0) != c) {
            say("failed %s", strerrorname_np(errno));
            return 1;
        }
        if ((t = api.token(c)) == 0) {
            say("failed-token %s", strerrorname_np(errno));
            return 1;
        }
        say("token %llu", t);
        api.release(c);
    }
    say("done %d", n);
    return 0;
}

static int timed(const char *name, double seconds, int with_token)
{
    struct swerve_claim *c = claim(name);
    double start = now_s();
    unsigned long long t;

    if (api.acquire(c, seconds) != c) {
        say("failed %s %.0f", strerrorname_np(errno), (now_s() - start) * 1e3);
        return 1;
    }
    say("acquired %.0f", (now_s() - start) * 1e3);
    if (!with_token)
        return 0;
    start = now_s();
    if ((t = api.token(c)) == 0) {
        say("token-failed %s %.0f", strerrorname_np(errno), (now_s() - start) * 1e3);
        return 1;
    }
    say("token %llu %.0f", t, (now_s() - start) * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (!swerve_claim_load(&api) || api.token == NULL) {
        fprintf(stderr, "pg_helper: the shim is not loaded\n");
        return 2;
    }
    if ((argc == 3 || (argc == 4 && strcmp(argv[3], "notoken") == 0)) && strcmp(argv[1], "hold") == 0)
        return hold(argv[2], argc == 3);
    if (argc == 3 && strcmp(argv[1], "let-go") == 0)
        return let_go(argv[2]);
    if (argc == 4 && strcmp(argv[1], "take") == 0)
        return take(argv[2], atof(argv[3]));
    if (argc == 3 && strcmp(argv[1], "retake") == 0)
        return retake(argv[2]);
    if (argc == 3 && strcmp(argv[1], "fork-holder") == 0)
        return fork_holder(argv[2]);
    if (argc == 3 && strcmp(argv[1], "close-fds") == 0)
        return close_fds(argv[2]);
    if (argc == 4 && strcmp(argv[1], "slip") == 0)
        return slip(argv[2], atoi(argv[3]));
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "contend") == 0)
        return contend(argv[2], atof(argv[3]), atoi(argv[4]), argc == 6 ? atof(argv[5]) : 0.0);
    if (argc == 4 && strcmp(argv[1], "many") == 0)
        return many(argv[2], atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "hold-wait") == 0)
        return hold_wait(argv[2], argv[3]);
    if ((argc == 5 || (argc == 6 && strcmp(argv[5], "token") == 0)) && strcmp(argv[1], "threads") == 0)
        return threads(argv[2], argv[3], atoi(argv[4]), argc == 6);
    if (argc == 4 && strcmp(argv[1], "pairs") == 0)
        return pairs(argv[2], atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "token-twice") == 0)
        return token_twice(argv[2]);
    if (argc == 4 && strcmp(argv[1], "tokens") == 0)
        return tokens(argv[2], atof(argv[3]));
    if ((argc == 4 || (argc == 5 && strcmp(argv[4], "token") == 0)) && strcmp(argv[1], "timed") == 0)
        return timed(argv[2], atof(argv[3]), argc == 5);
    fprintf(stderr,
            "usage: pg_helper hold|let-go|take|retake|fork-holder|close-fds|slip|contend|many|hold-wait|threads|"
            "pairs|token-twice|tokens|timed ...\n");
    return 2;
}
