/*
 * pg_helper - what tests/pg/pg.sh runs under the shim with the PostgreSQL
 * store: an application that knows the API only through dlsym.  Each
 * command prints one line per event, with CLOCK_REALTIME in nanoseconds
 * where the test compares times across processes.  Every loop is bounded.
 *
 *   hold NAME           take NAME (or exit 1), say "held TOKEN", then watch
 *                       held() every millisecond; say "lost NS" when it
 *                       turns 0 (at most 120 s)
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
 */
#define _GNU_SOURCE 1 /* strerrorname_np */
#include <swerve/claim-loader.h>

#include <errno.h>
#include <fcntl.h>
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

static long long realtime_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

static int hold(const char *name)
{
    struct swerve_claim *c = claim(name);

    if (api.acquire(c, 0.0) == NULL) {
        say("failed %s", strerrorname_np(errno));
        return 1;
    }
    say("held %llu", (unsigned long long)api.token(c));
    for (int ms = 0; ms < 120000; ms++) {
        if (!api.held(c)) {
            say("lost %lld", realtime_ns());
            return 0;
        }
        usleep(1000);
    }
    say("still held");
    return 1;
}

static int take(const char *name, double seconds)
{
    struct swerve_claim *c = claim(name);

    int r = api.acquire(c, seconds) == NULL;

    if (r)
        say("failed %s", strerrorname_np(errno));
    else
        say("took %llu %lld", (unsigned long long)api.token(c), realtime_ns());
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

int main(int argc, char **argv)
{
    if (!swerve_claim_load(&api) || api.token == NULL) {
        fprintf(stderr, "pg_helper: the shim is not loaded\n");
        return 2;
    }
    if (argc == 3 && strcmp(argv[1], "hold") == 0)
        return hold(argv[2]);
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
    fprintf(stderr, "usage: pg_helper hold|take|fork-holder|close-fds|slip ...\n");
    return 2;
}
