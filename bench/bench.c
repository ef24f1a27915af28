/* SPDX-License-Identifier: MIT */
/*
 * bench - what claims cost, each figure next to a baseline measured in the
 * same run, on the same filesystem.  A program, not a test: it prints and
 * asserts nothing.  Run with `make bench`.
 *
 * It re-executes itself with the shim preloaded (SCL_PRELOAD) and a scratch
 * SWERVE_TMPDIR, then measures:
 *   1. an uncontended acquire+release pair, next to a bare linkat+unlinkat
 *      pair and a flock(2) lock/unlock pair, in alternating rounds;
 *   1b. a name a live process holds: a failing acquire(c, 0) next to a
 *      failing linkat, and available() next to an fstatat, each call
 *      timed (p50, p99);
 *   1c. one hot name: N = 1, 2, 4, 8 processes in acquire/release loops,
 *      their pairs a second against the bare pair's limit (timed after
 *      each round), and the
 *      fewest pairs one made over the most;
 *   2. the hand-off latency from a release to a waiting acquire in another
 *      process, next to plain 20 ms polling;
 *   3. the CPU a waiter uses while it waits, next to a process that only
 *      sleeps in 20 ms steps (the floor the seed's 20 ms retries set);
 *   4. reaping a dead worker: one that held nothing, one that held one
 *      claim, and one that held one claim while 100,000 others are held;
 *   5. fork()+_exit()+waitpid() (and again in a process that listens:
 *      its child makes the listener notes its own), fork+exec of /bin/true,
 *      vfork+exec and posix_spawn of /bin/true (a master that spawns its
 *      workers), a loop of
 *      dup()+close() (the close hooked), the same loop in a process that
 *      listens on a socket at a higher number than those it closes (each
 *      close then tests a bit), a loop of kill(child, 0) probes and one of drain signals
 *      (kill(child, SIGTERM), the child ignoring it: the mark, and the
 *      look for the child's page of times), and a shell that forks (its
 *      CPU), without the shim, with an empty library preloaded, and with
 *      the shim: three workers (this program again), asked in turn for one
 *      iteration each, thousands of times, and the medians (and p99) of
 *      each side compared.  The empty library shows what preloading any
 *      library costs; the shim's hooks are what it adds on top;
 *   6. waiting from an event loop (swerve_claim_wait_fd), each figure next
 *      to a coroutine of the same epoll loop that retries acquire(c, 0)
 *      every 20 ms on the loop's timer (the seed's retry): the wake-up
 *      after a release in another process (p50, p99, max); the CPU of a
 *      process whose loop has 100 and 1,000 coroutines waiting on names
 *      another process holds (one name, and as many names), the loop's
 *      longest stall meanwhile (a 10 ms timerfd ticks in it) and how long
 *      putting them to sleep took; the wake-up after the holder's
 *      SIGKILL, nobody reaping it; and a pair on a name waited on before
 *      next to one never waited on.
 *      It runs in the preloaded child, so it prints before 5.
 *
 * CPU time is read from /proc/self/schedstat (nanoseconds of run time):
 * getrusage() is sampled at the scheduler tick on many kernels, which
 * charges a process that wakes every 20 ms far more than it runs.
 */
#include "config.h"

#include "clock.h"

#include <swerve/claim-loader.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ROUNDS      11
#define FORK_STEPS  5000
#define EXEC_STEPS  2500
#define CLOSE_STEPS 2000
#define CLOSES      1000
#define KILL_STEPS  2000
#define KILLS       1000
#define TERM_STEPS  500
#define TERMS       100
/* Where the listener worker keeps its listener: above every number its
 * loop closes, so that each close is tested against the listeners. */
#define LISTENER_FD     900
#define SHELL_STEPS     300
#define REAPS           51
#define OTHER_CLAIMS    100000
#define PAIRS           20000
#define HANDOFFS        200
#define POLLED_HANDOFFS 40

static struct swerve_claim_api api;
static const char *scratch;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void wait_byte(int fd)
{
    char b;

    if (read(fd, &b, 1) != 1)
        die("read");
}

static void send_byte(int fd)
{
    char b = 0;

    if (write(fd, &b, 1) != 1)
        die("write");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static double percentile(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(p * (n - 1))];
}

/* ------------------------------------------------ 1. uncontended pairs */

static double claim_pairs(struct swerve_claim *c)
{
    double t0 = now_s();

    for (int i = 0; i < PAIRS; i++)
        if (api.acquire(c, 0.0) != c || api.release(c) != 0)
            die("claim pair");
    return (now_s() - t0) / PAIRS * 1e9;
}

static double link_pairs(int dirfd)
{
    double t0 = now_s();

    for (int i = 0; i < PAIRS; i++)
        if (linkat(dirfd, "holder", dirfd, "link", 0) != 0 || unlinkat(dirfd, "link", 0) != 0)
            die("link pair");
    return (now_s() - t0) / PAIRS * 1e9;
}

static double flock_pairs(int fd)
{
    double t0 = now_s();

    for (int i = 0; i < PAIRS; i++)
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 || flock(fd, LOCK_UN) != 0)
            die("flock pair");
    return (now_s() - t0) / PAIRS * 1e9;
}

static void bench_pairs(void)
{
    double claim[ROUNDS], link[ROUNDS], lock[ROUNDS], ratio[ROUNDS];
    struct swerve_claim *c = api.new_claim("bench-pair");
    char dir[4096];
    int dirfd, fd;

    snprintf(dir, sizeof dir, "%s/baseline", scratch);
    if (mkdir(dir, 0700) != 0 || (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        die(dir);
    fd = openat(dirfd, "holder", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        die("holder");
    claim_pairs(c); /* warm up: the claim directory, the journal, caches */
    link_pairs(dirfd);
    for (int r = 0; r < ROUNDS; r++) {
        /* Alternate the order so neither side always runs first. */
        if (r % 2 == 0) {
            claim[r] = claim_pairs(c);
            link[r] = link_pairs(dirfd);
        } else {
            link[r] = link_pairs(dirfd);
            claim[r] = claim_pairs(c);
        }
        lock[r] = flock_pairs(fd);
        ratio[r] = claim[r] / link[r];
    }
    printf("1. uncontended pair, median of %d rounds x %d pairs (same filesystem)\n", ROUNDS, PAIRS);
    printf("   acquire+release          %8.0f ns\n", median(claim, ROUNDS));
    printf("   bare linkat+unlinkat     %8.0f ns\n", median(link, ROUNDS));
    printf("   flock lock+unlock        %8.0f ns\n", median(lock, ROUNDS));
    printf("   ratio claim/link         %8.2f   (median of per-round ratios; target <= 1.15)\n", median(ratio, ROUNDS));
    api.free(c);
    close(fd);
    unlinkat(dirfd, "holder", 0);
    close(dirfd);
    rmdir(dir);
}

/* ------------------------------------------------- 1c. one hot name */

#define HOT_SECONDS 1.0
#define HOT_ROUNDS  3

/* N processes take and let go of one name in acquire(INFINITY)/release
 * loops for HOT_SECONDS: all their pairs a second, and the fewest one of
 * them made over the most (1: all alike; near 0: starved). */
static void hot_round(int n, double *per_s, double *share)
{
    struct hot {
        double start;
        long pairs[8];
    } *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int go[2], ready[2];
    long total = 0, least = -1, most = 0;

    if (sh == MAP_FAILED || pipe(go) != 0 || pipe(ready) != 0)
        die("hot name");
    for (int i = 0; i < n; i++) {
        pid_t child = fork();
        if (child < 0)
            die("fork");
        if (child == 0) {
            struct swerve_claim *c = api.new_claim("bench-hot");
            char byte;
            long pairs = 0;
            close(go[1]);
            send_byte(ready[1]);
            (void)read(go[0], &byte, 1); /* EOF: all start together */
            while (now_s() < sh->start + HOT_SECONDS) {
                if (api.acquire(c, INFINITY) != c || api.release(c) != 0)
                    die("hot pair");
                pairs++;
            }
            sh->pairs[i] = pairs;
            _exit(0);
        }
    }
    for (int i = 0; i < n; i++)
        wait_byte(ready[0]);
    sh->start = now_s();
    close(go[1]);
    for (int i = 0; i < n; i++)
        if (wait(NULL) < 0)
            die("wait");
    for (int i = 0; i < n; i++) {
        total += sh->pairs[i];
        least = least < 0 || sh->pairs[i] < least ? sh->pairs[i] : least;
        most = sh->pairs[i] > most ? sh->pairs[i] : most;
    }
    *per_s = (double)total / HOT_SECONDS;
    *share = most > 0 ? (double)least / (double)most : 0;
    close(go[0]);
    close(ready[0]);
    close(ready[1]);
    munmap(sh, sizeof *sh);
}

static void bench_hot(void)
{
    static const int processes[] = { 1, 2, 4, 8 };
    char dir[4096];
    int dirfd;

    snprintf(dir, sizeof dir, "%s/hot-baseline", scratch);
    if (mkdir(dir, 0700) != 0 || (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
        close(openat(dirfd, "holder", O_RDWR | O_CREAT | O_CLOEXEC, 0600)) != 0)
        die(dir);
    printf("1c. one hot name, N processes in acquire(INFINITY)/release loops, %d rounds of %.0f s, medians;\n"
           "    the limit is 1 / a bare linkat+unlinkat pair, timed after each round\n",
           HOT_ROUNDS, HOT_SECONDS);
    for (size_t k = 0; k < sizeof processes / sizeof processes[0]; k++) {
        double per_s[HOT_ROUNDS], share[HOT_ROUNDS], of_limit[HOT_ROUNDS];
        for (int r = 0; r < HOT_ROUNDS; r++) {
            hot_round(processes[k], &per_s[r], &share[r]);
            of_limit[r] = per_s[r] * link_pairs(dirfd) / 1e9;
        }
        printf("   N = %d   %8.0f pairs/s   %.2f of the limit (target >= 0.90)   fewest/most %.2f (target >= 0.80)\n",
               processes[k], median(per_s, HOT_ROUNDS), median(of_limit, HOT_ROUNDS), median(share, HOT_ROUNDS));
    }
    unlinkat(dirfd, "holder", 0);
    close(dirfd);
    rmdir(dir);
}

/* ------------------------------------------- 1b. a name somebody holds */

#define HELD_CALLS 20000

/* One call of a side of section 1b: 0 when it answered as it should. */
typedef int held_call(void *arg);

struct held_side {
    const char *label;
    held_call *call;
    void *arg;
    double *each; /* every call's time, ns: ROUNDS x HELD_CALLS */
    double round[ROUNDS];
};

static int failing_try(void *c)
{
    return api.acquire(c, 0.0) == NULL && errno == EWOULDBLOCK ? 0 : -1;
}

static int failing_link(void *dirfd)
{
    return linkat(*(int *)dirfd, "holder", *(int *)dirfd, "link", 0) != 0 && errno == EEXIST ? 0 : -1;
}

static int held_available(void *c)
{
    return api.available(c) == 0 ? 0 : -1;
}

static int bare_fstatat(void *dirfd)
{
    struct stat st;

    return fstatat(*(int *)dirfd, "link", &st, AT_SYMLINK_NOFOLLOW);
}

/* Round R of SIDE: each call timed on its own (the clock's ~20 ns are in
 * both sides), the round's median kept. */
static void held_round(struct held_side *side, int r)
{
    double *each = side->each + (size_t)r * HELD_CALLS;

    for (int i = 0; i < HELD_CALLS; i++) {
        double t0 = now_s();
        if (side->call(side->arg) != 0)
            die(side->label);
        each[i] = (now_s() - t0) * 1e9;
    }
    side->round[r] = percentile(each, HELD_CALLS, 0.5);
}

/* The claim's side against the bare system call's, in alternating rounds. */
static void held_compare(struct held_side *claim, struct held_side *bare)
{
    double ratio[ROUNDS];
    const size_t all = (size_t)ROUNDS * HELD_CALLS;

    for (int r = 0; r < ROUNDS; r++) {
        held_round(r % 2 ? bare : claim, r);
        held_round(r % 2 ? claim : bare, r);
        ratio[r] = claim->round[r] / bare->round[r];
    }
    for (struct held_side *side = claim; side != NULL; side = side == claim ? bare : NULL)
        printf("   %-24s p50 %7.0f ns   p99 %7.0f ns\n", side->label, percentile(side->each, (int)all, 0.5),
               percentile(side->each, (int)all, 0.99));
    printf("   ratio                    %8.2f   (median of per-round ratios of medians; target <= 1.50)\n",
           median(ratio, ROUNDS));
}

/* A child that holds NAME until FD's other end closes. */
static pid_t hold_in_child(const char *name, int *release_fd)
{
    int ready[2], release[2];
    pid_t child;
    char byte;

    if (pipe(ready) != 0 || pipe(release) != 0)
        die("pipe");
    if ((child = fork()) < 0)
        die("fork");
    if (child == 0) {
        struct swerve_claim *c = api.new_claim(name);
        close(release[1]);
        if (api.acquire(c, 0.0) != c)
            die("holder's acquire");
        send_byte(ready[1]);
        (void)read(release[0], &byte, 1);
        _exit(0);
    }
    close(ready[1]);
    close(release[0]);
    wait_byte(ready[0]);
    close(ready[0]);
    *release_fd = release[1];
    return child;
}

static void bench_held(void)
{
    const size_t all = (size_t)ROUNDS * HELD_CALLS;
    struct swerve_claim *c = api.new_claim("bench-held");
    double *each = malloc(4 * all * sizeof *each);
    char dir[4096];
    int dirfd, release, status;
    pid_t holder;

    if (each == NULL)
        die("malloc");
    snprintf(dir, sizeof dir, "%s/held-baseline", scratch);
    if (mkdir(dir, 0700) != 0 || (dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        die(dir);
    if (close(openat(dirfd, "holder", O_RDWR | O_CREAT | O_CLOEXEC, 0600)) != 0 ||
        linkat(dirfd, "holder", dirfd, "link", 0))
        die("held baseline");
    holder = hold_in_child("bench-held", &release);

    struct held_side try_side = { "acquire(c, 0) fails", failing_try, c, each, { 0 } };
    struct held_side link_side = { "bare failing linkat", failing_link, &dirfd, each + all, { 0 } };
    struct held_side available_side = { "available() (held)", held_available, c, each + 2 * all, { 0 } };
    struct held_side fstatat_side = { "bare fstatat", bare_fstatat, &dirfd, each + 3 * all, { 0 } };

    printf("1b. a name a live process holds, %d rounds x %d calls, each call timed\n", ROUNDS, HELD_CALLS);
    held_compare(&try_side, &link_side);
    held_compare(&available_side, &fstatat_side);
    close(release);
    if (waitpid(holder, &status, 0) != holder)
        die("waitpid");
    api.free(c);
    free(each);
    unlinkat(dirfd, "link", 0);
    unlinkat(dirfd, "holder", 0);
    close(dirfd);
    rmdir(dir);
}

/* --------------------------------------------------- 2. hand-off latency */

struct shared {
    double released_at;
    double waiter_cpu;
};

static double cpu_s(void)
{
    FILE *f = fopen("/proc/self/schedstat", "r");
    unsigned long long ns = 0;

    if (f == NULL || fscanf(f, "%llu", &ns) != 1)
        die("/proc/self/schedstat");
    fclose(f);
    return (double)ns / 1e9;
}

/* The floor: a process that sleeps in 20 ms steps and does nothing else. */
static double bare_sleeper_cpu_per_s(double seconds)
{
    double c0 = cpu_s(), t0 = now_s();
    struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };

    while (now_s() - t0 < seconds)
        nanosleep(&tick, NULL);
    return (cpu_s() - c0) / (now_s() - t0);
}

/* Takes C the way the waiter would: through the library, or by plain
 * polling every 20 ms. */
static void waiter_take(struct swerve_claim *c, int polled)
{
    if (!polled) {
        if (api.acquire(c, 10.0) != c)
            die("acquire");
        return;
    }
    while (api.acquire(c, 0.0) != c) {
        struct timespec tick = { .tv_nsec = 20 * 1000 * 1000 };
        nanosleep(&tick, NULL);
    }
}

/*
 * The holder takes the name, lets the waiter start waiting, releases after
 * HOLD_MS; the waiter notes how long after the release it got the name.
 */
static void handoffs(int n, int polled, double hold_s, double *latency, double *waiter_cpu_per_s)
{
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int to_waiter[2], to_holder[2];
    pid_t waiter;

    if (sh == MAP_FAILED || pipe(to_waiter) != 0 || pipe(to_holder) != 0)
        die("setup");
    waiter = fork();
    if (waiter == 0) {
        struct swerve_claim *c = api.new_claim("bench-handoff");
        double cpu = 0, waited = 0;
        for (int i = 0; i < n; i++) {
            double t0, c0;
            wait_byte(to_waiter[0]); /* the holder has it */
            t0 = now_s();
            c0 = cpu_s();
            waiter_take(c, polled);
            latency[i] = now_s() - sh->released_at;
            cpu += cpu_s() - c0;
            waited += now_s() - t0;
            api.release(c);
            send_byte(to_holder[1]);
        }
        sh->waiter_cpu = cpu / waited;
        _exit(0);
    }
    {
        struct swerve_claim *c = api.new_claim("bench-handoff");
        for (int i = 0; i < n; i++) {
            struct timespec hold = { .tv_sec = (time_t)hold_s,
                                     .tv_nsec = (long)((hold_s - (double)(time_t)hold_s) * 1e9) };
            if (api.acquire(c, 10.0) != c)
                die("holder acquire");
            send_byte(to_waiter[1]);
            nanosleep(&hold, NULL); /* the waiter is asleep in acquire() by now */
            sh->released_at = now_s();
            api.release(c);
            wait_byte(to_holder[0]);
        }
        api.free(c);
    }
    waitpid(waiter, NULL, 0);
    if (waiter_cpu_per_s != NULL)
        *waiter_cpu_per_s = sh->waiter_cpu;
    munmap(sh, sizeof *sh);
    close(to_waiter[0]);
    close(to_waiter[1]);
    close(to_holder[0]);
    close(to_holder[1]);
}

static void bench_handoff(void)
{
    double *lat = mmap(NULL, sizeof(double) * HANDOFFS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double *polled =
        mmap(NULL, sizeof(double) * POLLED_HANDOFFS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double cpu_long, cpu_poll_long, cpu_floor;

    if (lat == MAP_FAILED || polled == MAP_FAILED)
        die("mmap");
    handoffs(HANDOFFS, 0, 0.005, lat, NULL);
    handoffs(POLLED_HANDOFFS, 1, 0.005, polled, NULL);
    printf("2. hand-off from a release to a waiting acquire in another process\n");
    printf("   swerve_claim_acquire     p50 %7.3f ms   p99 %7.3f ms   (%d hand-offs; target p50 <= 0.2, p99 <= 2)\n",
           percentile(lat, HANDOFFS, 0.5) * 1e3, percentile(lat, HANDOFFS, 0.99) * 1e3, HANDOFFS);
    printf("   plain 20 ms polling      p50 %7.3f ms   p99 %7.3f ms   (%d hand-offs)\n",
           percentile(polled, POLLED_HANDOFFS, 0.5) * 1e3, percentile(polled, POLLED_HANDOFFS, 0.99) * 1e3,
           POLLED_HANDOFFS);
    /* A long wait shows the waiter's cost while it sleeps. */
    handoffs(2, 0, 1.0, lat, &cpu_long);
    handoffs(2, 1, 1.0, polled, &cpu_poll_long);
    cpu_floor = bare_sleeper_cpu_per_s(2.0);
    printf("3. CPU a waiter uses while it waits (run time per second waited; two waits of 1 s each)\n");
    printf("   swerve_claim_acquire     %8.1f us/s   (%.2f%% of a CPU)\n", cpu_long * 1e6, cpu_long * 100);
    printf("   plain 20 ms polling      %8.1f us/s\n", cpu_poll_long * 1e6);
    printf("   bare 20 ms sleeper       %8.1f us/s   (the floor: sleeping in 20 ms steps, nothing else)\n",
           cpu_floor * 1e6);
    munmap(lat, sizeof(double) * HANDOFFS);
    munmap(polled, sizeof(double) * POLLED_HANDOFFS);
}

/* ------------------------------------------------------ 4. reaping */

/* How long waitpid() takes to reap a child already dead (a zombie) that
 * took CLAIM (or nothing) and was SIGKILLed: the hook clears its claims. */
static double reap_ns(const char *claim)
{
    double t[REAPS];

    for (int i = 0; i < REAPS; i++) {
        siginfo_t info;
        double t0;
        pid_t child = fork();
        if (child == 0) {
            if (claim != NULL && api.acquire(api.new_claim(claim), 0.0) == NULL)
                _exit(1);
            (void)syscall(SYS_kill, getpid(), SIGKILL); /* unseen: the reaper clears its claim */
        }
        if (child < 0 || waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) != 0)
            die("reap child");
        t0 = now_s();
        if (waitpid(child, NULL, 0) != child)
            die("waitpid");
        t[i] = (now_s() - t0) * 1e9;
    }
    return median(t, REAPS);
}

/* A process holding claims FIRST..FIRST+N-1 until the pipe RELEASE
 * closes; says so on READY.  (One holder file takes at most 65,000 links
 * on ext4.) */
static pid_t hold_many(int first, int n, int ready, const int release[2])
{
    char name[32], byte = 0;
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    close(release[1]); /* or it would never see the pipe close */
    for (int i = first; i < first + n; i++) {
        snprintf(name, sizeof name, "other-%d", i);
        if (api.acquire(api.new_claim(name), 0.0) == NULL)
            die("holding the other claims");
    }
    send_byte(ready);
    (void)!read(release[0], &byte, 1);
    _exit(0); /* its exit releases them all */
}

static void bench_reaping(void)
{
    enum { holders = 2 };
    int ready[2], release[2];
    pid_t held_by[holders];
    double nothing, one, one_among;

    nothing = reap_ns(NULL);
    one = reap_ns("victim");
    if (pipe(ready) != 0 || pipe(release) != 0)
        die("pipe");
    for (int h = 0; h < holders; h++)
        held_by[h] = hold_many(h * (OTHER_CLAIMS / holders), OTHER_CLAIMS / holders, ready[1], release);
    for (int h = 0; h < holders; h++)
        wait_byte(ready[0]);
    one_among = reap_ns("victim");
    printf("4. reaping a SIGKILLed worker (waitpid of a zombie, median of %d)\n", REAPS);
    printf("   it held nothing          %8.0f ns\n", nothing);
    printf("   it held one claim        %8.0f ns\n", one);
    printf("   one claim, %d others held %8.0f ns   (ratio %.2f to the line above)\n", OTHER_CLAIMS, one_among,
           one_among / one);
    close(release[1]);
    for (int h = 0; h < holders; h++)
        waitpid(held_by[h], NULL, 0);
    close(release[0]);
    close(ready[0]);
    close(ready[1]);
}

/* ------------------------------------ 6. waiting from an event loop */

#define WAKE_ROUNDS    200
#define DEATH_ROUNDS   30
#define RETRY_S        0.020
#define TICK_S         0.010
#define STEADY_SECONDS 2.0
#define WAIT_BOUND_S   5.0
/* Descriptors a waiting handle has open (claim.h), and what else a
 * process of the bench keeps open. */
#define FDS_PER_WAITER 3
#define FDS_SPARE      64

/* A coroutine that waits for its claim: with wait_fd, or by retrying
 * acquire(c, 0) every 20 ms on the loop's timer, as the seed does. */
struct co {
    struct swerve_claim *c;
    int fd;          /* the descriptor the loop watches for it, or -1 */
    double due;      /* retrying: when it tries next */
    double taken_at; /* 0 until it has the name */
};

/* One epoll loop, as asyncio's or libuv's: descriptors, a queue of timers
 * (every retry waits the same 20 ms, so the queue is in due order), and
 * the loop's other work, a 10 ms timerfd whose largest gap between two
 * ticks shows how long the loop stalled. */
struct evloop {
    int ep, tick, retry;
    struct co *co;
    int n, waiting;
    int *queue, head, queued; /* a ring of N coroutine numbers */
    long tries;               /* acquire(c, 0) calls */
    double last_tick, worst_gap;
};

static void loop_open(struct evloop *l, int n, int retry)
{
    struct itimerspec every = { { 0, (long)(TICK_S * 1e9) }, { 0, (long)(TICK_S * 1e9) } };
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };

    memset(l, 0, sizeof *l);
    l->n = n;
    l->retry = retry;
    if ((l->co = calloc((size_t)n + 1, sizeof *l->co)) == NULL ||
        (l->queue = calloc((size_t)n + 1, sizeof(int))) == NULL)
        die("malloc");
    if ((l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
        (l->tick = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
        timerfd_settime(l->tick, 0, &every, NULL) != 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->tick, &ev) != 0)
        die("the event loop");
    for (int i = 0; i < n; i++)
        l->co[i].fd = -1;
    l->last_tick = now_s();
}

/* Gives up every wait still going (the loop stops watching first), frees
 * the handles, closes the loop. */
static void loop_close(struct evloop *l)
{
    for (int i = 0; i < l->n; i++) {
        if (l->co[i].fd >= 0 && epoll_ctl(l->ep, EPOLL_CTL_DEL, l->co[i].fd, NULL) != 0)
            die("epoll_ctl DEL");
        if (l->co[i].c != NULL && api.release(l->co[i].c) != 0)
            die("release");
        api.free(l->co[i].c);
    }
    close(l->tick);
    close(l->ep);
    free(l->co);
    free(l->queue);
}

/* Coroutine I runs: one try, then either it has the name, or it sleeps
 * until its descriptor is readable, or for 20 ms. */
static void co_step(struct evloop *l, int i)
{
    struct co *k = &l->co[i];
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)i + 1 };

    if (k->fd >= 0) { /* before the acquire, which may close it */
        if (epoll_ctl(l->ep, EPOLL_CTL_DEL, k->fd, NULL) != 0)
            die("epoll_ctl DEL");
        k->fd = -1;
    }
    l->tries++;
    if (api.acquire(k->c, 0.0) == k->c) {
        k->taken_at = now_s();
        l->waiting--;
        return;
    }
    if (errno != EWOULDBLOCK)
        die("acquire(c, 0)");
    if (l->retry) {
        k->due = now_s() + RETRY_S;
        l->queue[(l->head + l->queued++) % l->n] = i;
        return;
    }
    if ((k->fd = api.wait_fd(k->c)) < 0)
        die("swerve_claim_wait_fd");
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, k->fd, &ev) != 0)
        die("epoll_ctl ADD");
}

/* Starts coroutine I on handle C: its first try. */
static void co_start(struct evloop *l, int i, struct swerve_claim *c)
{
    l->co[i].c = c;
    l->co[i].taken_at = 0;
    l->waiting++;
    co_step(l, i);
}

/* Runs the loop until UNTIL, or (UNTIL_TAKEN) until every coroutine has
 * its name.  Timeouts in whole milliseconds, rounded up, as asyncio's. */
static void loop_run(struct evloop *l, double until, int until_taken)
{
    struct epoll_event ev[64];

    while (!(until_taken && l->waiting == 0)) {
        double now = now_s(), next = until;
        int n, ms;
        if (now >= until)
            return;
        if (l->queued > 0 && l->co[l->queue[l->head]].due < next)
            next = l->co[l->queue[l->head]].due;
        ms = next > now ? (int)((next - now) * 1e3) : 0;
        if (next > now && ms < (next - now) * 1e3)
            ms++; /* rounded up, without libm's ceil() */
        n = epoll_wait(l->ep, ev, 64, ms);
        if (n < 0 && errno != EINTR)
            die("epoll_wait");
        for (int e = 0; e < n; e++) {
            if (ev[e].data.u64 == 0) {
                uint64_t expirations;
                if (read(l->tick, &expirations, sizeof expirations) == (ssize_t)sizeof expirations) {
                    now = now_s();
                    if (now - l->last_tick > l->worst_gap)
                        l->worst_gap = now - l->last_tick;
                    l->last_tick = now;
                }
            } else {
                co_step(l, (int)(ev[e].data.u64 - 1));
            }
        }
        now = now_s();
        while (l->queued > 0 && l->co[l->queue[l->head]].due <= now) {
            int i = l->queue[l->head];
            l->head = (l->head + 1) % l->n;
            l->queued--;
            co_step(l, i);
        }
    }
}

/* What the holder process is told, and stamps. */
struct holder_page {
    double hold_s;   /* how long it holds once the waiter sleeps */
    double ended_at; /* just before its release, or its SIGKILL */
};

/* 5 to 25 ms, spread evenly over the rounds: the release falls anywhere
 * in a 20 ms retry's period. */
static double hold_time(int round)
{
    return 0.005 + 0.020 * (double)((round * 37) % 100) / 100.0;
}

/* A process that holds NAME when sent a byte (answering on READY), and
 * on 'r' waits the page's hold time, stamps and releases it; ends at EOF. */
static pid_t releasing_holder(const char *name, struct holder_page *page, int cmd[2], int ready[2])
{
    pid_t pid;

    if (pipe(cmd) != 0 || pipe(ready) != 0)
        die("pipe");
    if ((pid = fork()) < 0)
        die("fork");
    if (pid == 0) {
        struct swerve_claim *c = api.new_claim(name);
        char what;
        close(cmd[1]);
        close(ready[0]);
        while (read(cmd[0], &what, 1) == 1) {
            if (what != 'r') {
                if (api.acquire(c, 0.0) != c)
                    die("the holder's acquire");
                send_byte(ready[1]);
            } else {
                struct timespec hold = { 0, (long)(page->hold_s * 1e9) };
                nanosleep(&hold, NULL);
                page->ended_at = now_s();
                api.release(c);
            }
        }
        _exit(0);
    }
    close(cmd[0]);
    close(ready[1]);
    return pid;
}

/* A process that holds NAME, says so on READY, and after 'k' on CMD
 * waits the page's hold time, stamps and SIGKILLs itself: nobody reaps
 * it until the waiter has the name. */
static pid_t dying_holder(const char *name, struct holder_page *page, int cmd[2])
{
    int ready[2];
    pid_t pid;

    if (pipe(cmd) != 0 || pipe(ready) != 0)
        die("pipe");
    if ((pid = fork()) < 0)
        die("fork");
    if (pid == 0) {
        struct swerve_claim *c = api.new_claim(name);
        char what;
        close(cmd[1]);
        if (api.acquire(c, 0.0) != c)
            die("the holder's acquire");
        send_byte(ready[1]);
        if (read(cmd[0], &what, 1) == 1) {
            struct timespec hold = { 0, (long)(page->hold_s * 1e9) };
            nanosleep(&hold, NULL);
            page->ended_at = now_s();
            (void)syscall(SYS_kill, getpid(), SIGKILL); /* the kill hook sees nothing */
        }
        _exit(0);
    }
    close(cmd[0]);
    close(ready[1]);
    wait_byte(ready[0]);
    close(ready[0]);
    return pid;
}

/* One coroutine of a fresh loop waits for NAME (RETRY: by 20 ms retries)
 * while the holder is told to end it with CMD_BYTE; the seconds from the
 * holder's stamp to the waiter's acquire, or NAN when it never came. */
static double one_wake(const char *name, int retry, struct holder_page *page, int cmd, char cmd_byte)
{
    struct evloop l;
    double latency;

    loop_open(&l, 1, retry);
    co_start(&l, 0, api.new_claim(name));
    if (write(cmd, &cmd_byte, 1) != 1) /* the coroutine sleeps by now */
        die("write");
    loop_run(&l, now_s() + WAIT_BOUND_S, 1);
    latency = l.co[0].taken_at > 0 ? l.co[0].taken_at - page->ended_at : NAN;
    loop_close(&l);
    return latency;
}

/* The NAN of a wait that never ended sort last, as the longest. */
static void print_wakes(const char *label, double *v, int n, const char *target)
{
    int missed = 0;

    for (int i = 0; i < n; i++)
        if (isnan(v[i])) {
            v[i] = INFINITY;
            missed++;
        }
    printf("   %-22s p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms%s", label, percentile(v, n, 0.5) * 1e3,
           percentile(v, n, 0.99) * 1e3, percentile(v, n, 1.0) * 1e3, target);
    if (missed > 0)
        printf("   (%d of %d never woke within %.0f s)", missed, n, WAIT_BOUND_S);
    printf("\n");
}

static void bench_loop_wake(void)
{
    struct holder_page *page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double by_fd[WAKE_ROUNDS], by_retry[WAKE_ROUNDS];
    int cmd[2], ready[2];
    pid_t holder;

    if (page == MAP_FAILED)
        die("mmap");
    holder = releasing_holder("bench-loop-wake", page, cmd, ready);
    for (int r = 0; r < 2 * WAKE_ROUNDS; r++) {
        /* Alternate the order so neither side always runs first. */
        int retry = (r % 2) ^ ((r / 2) % 2);
        page->hold_s = hold_time(r / 2);
        send_byte(cmd[1]); /* hold it */
        wait_byte(ready[0]);
        (retry ? by_retry : by_fd)[r / 2] = one_wake("bench-loop-wake", retry, page, cmd[1], 'r');
    }
    close(cmd[1]);
    close(ready[0]);
    if (waitpid(holder, NULL, 0) != holder)
        die("waitpid");
    printf("6a. wake-up after a release in another process: from the holder's stamp just before its release to\n"
           "    the waiter's acquire, %d rounds a side, alternated, held 5-25 ms once the waiter sleeps\n",
           WAKE_ROUNDS);
    print_wakes("wait_fd", by_fd, WAKE_ROUNDS, "   (target p50 <= 1, p99 <= 5)");
    print_wakes("20 ms retry", by_retry, WAKE_ROUNDS, "");
    printf("   ratio retry / wait_fd  p50 %7.1f      p99 %7.1f\n",
           percentile(by_retry, WAKE_ROUNDS, 0.5) / percentile(by_fd, WAKE_ROUNDS, 0.5),
           percentile(by_retry, WAKE_ROUNDS, 0.99) / percentile(by_fd, WAKE_ROUNDS, 0.99));
    munmap(page, sizeof *page);
}

static void bench_loop_death(void)
{
    struct holder_page *page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double by_fd[DEATH_ROUNDS], by_retry[DEATH_ROUNDS];

    if (page == MAP_FAILED)
        die("mmap");
    for (int r = 0; r < 2 * DEATH_ROUNDS; r++) {
        int retry = (r % 2) ^ ((r / 2) % 2), cmd[2];
        pid_t holder;
        page->hold_s = hold_time(r / 2);
        holder = dying_holder("bench-loop-death", page, cmd);
        (retry ? by_retry : by_fd)[r / 2] = one_wake("bench-loop-death", retry, page, cmd[1], 'k');
        close(cmd[1]);
        if (waitpid(holder, NULL, 0) != holder) /* reaped only now */
            die("waitpid");
    }
    printf("6c. wake-up after the holder's SIGKILL, nobody reaping it: from its stamp just before the kill to\n"
           "    the waiter's acquire, %d rounds a side, alternated\n",
           DEATH_ROUNDS);
    print_wakes("wait_fd", by_fd, DEATH_ROUNDS, "   (target <= 100)");
    print_wakes("20 ms retry", by_retry, DEATH_ROUNDS, "");
    munmap(page, sizeof *page);
}

/* A process holding N names (NAMES of them distinct: 1 or N, named
 * PREFIX-i) until the pipe it returns closes. */
static pid_t hold_names(const char *prefix, int names, int *release_fd)
{
    int ready[2], release[2];
    char name[64], byte;
    pid_t pid;

    if (pipe(ready) != 0 || pipe(release) != 0)
        die("pipe");
    if ((pid = fork()) < 0)
        die("fork");
    if (pid == 0) {
        close(release[1]);
        for (int i = 0; i < names; i++) {
            snprintf(name, sizeof name, "%s-%d", prefix, i);
            if (api.acquire(api.new_claim(name), 0.0) == NULL)
                die("holding the names");
        }
        send_byte(ready[1]);
        (void)!read(release[0], &byte, 1);
        _exit(0); /* its exit releases them all */
    }
    close(ready[1]);
    close(release[0]);
    wait_byte(ready[0]);
    close(ready[0]);
    *release_fd = release[1];
    return pid;
}

/* The CPU of the loop alone, with nothing but its tick: the floor. */
static double loop_alone_cpu;

/* N coroutines of one loop wait for the names PREFIX-i (NAMES distinct,
 * 1 or N) another process holds; or none but the tick (N 0).  Prints
 * the CPU of this process over STEADY_SECONDS (run time per wall time),
 * the loop's longest stall, the tries meanwhile, and how long the N
 * first tries (and wait_fd calls) took. */
static void steady_row(const char *label, int n, int names, int retry)
{
    char prefix[32], name[64];
    struct evloop l;
    int release = -1;
    pid_t holder = 0;
    double t0, c0, put, cpu, wall;

    snprintf(prefix, sizeof prefix, "bench-many-%d-%d", n, names);
    if (n > 0)
        holder = hold_names(prefix, names, &release);
    loop_open(&l, n > 0 ? n : 1, retry);
    t0 = now_s();
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s-%d", prefix, i % names);
        co_start(&l, i, api.new_claim(name));
    }
    put = now_s() - t0;
    loop_run(&l, now_s() + 0.2, 0); /* settles */
    l.tries = 0;
    l.worst_gap = 0;
    c0 = cpu_s();
    t0 = now_s();
    loop_run(&l, t0 + STEADY_SECONDS, 0);
    wall = now_s() - t0;
    cpu = (cpu_s() - c0) / wall;
    if (n == 0)
        loop_alone_cpu = cpu;
    printf("   %-34s %6.2f%% of a core", label, cpu * 100);
    if (n > 0)
        printf(" (%+6.2f)", (cpu - loop_alone_cpu) * 100);
    else
        printf("          ");
    printf("   stall %6.2f ms   %6.0f tries/s", l.worst_gap > TICK_S ? (l.worst_gap - TICK_S) * 1e3 : 0.0,
           (double)l.tries / wall);
    if (n > 0)
        printf("   put to sleep in %.1f ms", put * 1e3);
    printf("\n");
    loop_close(&l);
    if (holder > 0) {
        close(release);
        if (waitpid(holder, NULL, 0) != holder)
            die("waitpid");
    }
}

static void bench_loop_many(void)
{
    static const int counts[] = { 100, 1000 };
    struct rlimit lim;
    char label[64];

    printf("6b. coroutines waiting in one epoll loop for names another process holds: this process's CPU\n"
           "    (run time / wall time over %.0f s), the loop's longest stall (largest gap between its 10 ms\n"
           "    ticks, less 10 ms; target: <= 1%% of a core, stall <= 5 ms), acquire tries a second meanwhile;\n"
           "    in parentheses, the CPU above the loop alone's\n",
           STEADY_SECONDS);
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        die("getrlimit");
    if (lim.rlim_cur < lim.rlim_max) {
        rlim_t was = lim.rlim_cur;
        lim.rlim_cur = lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &lim) == 0)
            printf("    (RLIMIT_NOFILE's soft limit raised from %llu to the hard one, %llu:\n"
                   "    a waiting handle keeps %d descriptors open)\n",
                   (unsigned long long)was, (unsigned long long)lim.rlim_max, FDS_PER_WAITER);
        else
            printf("    (RLIMIT_NOFILE's soft limit stays %llu: raising it to %llu failed: %s)\n",
                   (unsigned long long)was, (unsigned long long)lim.rlim_max, strerror(errno));
        (void)getrlimit(RLIMIT_NOFILE, &lim);
    } else {
        printf("    (RLIMIT_NOFILE's soft limit is the hard one already, %llu: a waiting handle keeps %d\n"
               "    descriptors open)\n",
               (unsigned long long)lim.rlim_cur, FDS_PER_WAITER);
    }
    steady_row("the loop alone (the tick)", 0, 1, 0);
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        for (int distinct = 0; distinct < 2; distinct++) {
            int n = counts[k], names = distinct ? n : 1;
            snprintf(label, sizeof label, "%d on %s, wait_fd", n, distinct ? "as many names" : "one name");
            if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < (rlim_t)(n * FDS_PER_WAITER + FDS_SPARE))
                printf("   %-34s skipped: needs about %d descriptors, RLIMIT_NOFILE allows %llu\n", label,
                       n * FDS_PER_WAITER + FDS_SPARE, (unsigned long long)lim.rlim_cur);
            else
                steady_row(label, n, names, 0);
            snprintf(label, sizeof label, "%d on %s, 20 ms retry", n, distinct ? "as many names" : "one name");
            steady_row(label, n, names, 1);
        }
    }
}

/* The pair of section 1 on a name waited on before (a FIFO was made for
 * its waiters, who have gone), next to a name never waited on: each
 * release looks for the FIFO, which should cost the same on both. */
static void bench_loop_pairs(void)
{
    double plain[ROUNDS], waited[ROUNDS], ratio[ROUNDS];
    struct swerve_claim *fresh = api.new_claim("bench-loop-pair"), *old = api.new_claim("bench-loop-wake");

    claim_pairs(fresh);
    claim_pairs(old);
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 2 == 0) {
            plain[r] = claim_pairs(fresh);
            waited[r] = claim_pairs(old);
        } else {
            waited[r] = claim_pairs(old);
            plain[r] = claim_pairs(fresh);
        }
        ratio[r] = waited[r] / plain[r];
    }
    printf("6d. uncontended pair, median of %d rounds x %d pairs, alternated\n", ROUNDS, PAIRS);
    printf("   a name never waited on   %8.0f ns\n", median(plain, ROUNDS));
    printf("   a name waited on before  %8.0f ns   (its waiters, and their FIFO, gone)\n", median(waited, ROUNDS));
    printf("   ratio                    %8.2f   (median of per-round ratios)\n", median(ratio, ROUNDS));
    api.free(fresh);
    api.free(old);
}

static void bench_loop(void)
{
    printf("6. waiting from an event loop (swerve_claim_wait_fd), beside a coroutine of the same epoll loop\n"
           "   that retries acquire(c, 0) every 20 ms on the loop's timer (the seed's retry)\n");
    if (api.wait_fd == NULL) {
        printf("   skipped: the library has no swerve_claim_wait_fd (older than SWERVECLAIM_1.3)\n");
        return;
    }
    bench_loop_wake();
    bench_loop_many();
    bench_loop_death();
    bench_loop_pairs();
}

/* ------------------------------------------- 5. fork and exec loops */

/* CLOSES dup()+close() pairs: a host closing its connections, under the
 * hook that watches for the library's descriptors. */
static void close_loop(void)
{
    for (int i = 0; i < CLOSES; i++)
        if (close(dup(STDERR_FILENO)) != 0)
            die("dup+close");
}

/* A child that ignores SIGTERM and lives until its parent ends. */
static pid_t ignoring_child(void)
{
    pid_t child = fork();

    if (child < 0)
        die("fork");
    if (child == 0) {
        signal(SIGTERM, SIG_IGN);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(1);
        for (;;)
            pause();
    }
    return child;
}

/* N kill(CHILD, SIG): probes (0), or drain signals it ignores. */
static void kill_loop(pid_t child, int sig, int n)
{
    for (int i = 0; i < n; i++)
        if (kill(child, sig) != 0)
            die("kill");
}

/* A listening socket on 127.0.0.1, moved to LISTENER_FD. */
static void listen_high(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
        dup2(fd, LISTENER_FD) != LISTENER_FD || close(fd) != 0)
        die("listener");
}

/* How a worker starts its child each iteration. */
enum start { START_FORK, START_FORK_EXEC, START_VFORK_EXEC, START_SPAWN };

/* One fork()+_exit()+waitpid(), or /bin/true started by HOW and reaped. */
static void start_once(enum start how)
{
    char *const argv[] = { "true", NULL };
    pid_t child;

    if (how == START_SPAWN) {
        if (posix_spawn(&child, "/bin/true", NULL, NULL, argv, environ) != 0)
            die("posix_spawn");
    } else {
        child = how == START_VFORK_EXEC ? vfork() : fork();
        if (child == 0) {
            if (how != START_FORK)
                execve("/bin/true", argv, environ);
            _exit(0);
        }
    }
    if (child < 0 || waitpid(child, NULL, 0) != child)
        die("fork");
}

/* The CPU (user and system) of every child reaped so far, and theirs:
 * the kernel adds up each one's exact run time at its end. */
static double children_cpu_ns(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        die("getrusage");
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* A fork-heavy host: a shell that forks a subshell and a pipeline, every
 * process of it under the worker's preload.  Returns their CPU time. */
static double shell_once(void)
{
    double before = children_cpu_ns();
    pid_t child = fork();

    if (child == 0) {
        execl("/bin/sh", "sh", "-c", "(true); echo x | cat >/dev/null", (char *)NULL);
        _exit(127);
    }
    if (child < 0 || waitpid(child, NULL, 0) != child)
        die("sh");
    return children_cpu_ns() - before;
}

/* A worker: for each byte on standard input, one iteration of WHAT (a
 * fork, a fork+exec, the close loop, with a listener above or not, a loop
 * of probes or of drain signals to a child of its own, or the shell);
 * writes back the nanoseconds it took (the shell's: the CPU its processes
 * used).  Under the shim, the close workers and the drain-signal worker
 * have taken a claim first, so that the library keeps its descriptors and
 * has its directory open, as in a worker (or a master) that claims. */
static int loop_worker(const char *what)
{
    int listens = strcmp(what, "--listener-close-worker") == 0 || strcmp(what, "--listener-fork-worker") == 0;
    int closes = strcmp(what, "--close-worker") == 0 || strcmp(what, "--listener-close-worker") == 0,
        shell = strcmp(what, "--shell-worker") == 0, probes = strcmp(what, "--kill-worker") == 0,
        terms = strcmp(what, "--term-worker") == 0;
    pid_t child = probes || terms ? ignoring_child() : 0;
    enum start how = strcmp(what, "--exec-worker") == 0    ? START_FORK_EXEC
                     : strcmp(what, "--vfork-worker") == 0 ? START_VFORK_EXEC
                     : strcmp(what, "--spawn-worker") == 0 ? START_SPAWN
                                                           : START_FORK;
    char go;

    if (listens)
        listen_high();
    if ((closes || terms) && swerve_claim_load(&api)) {
        struct swerve_claim *c = api.new_claim("close-worker");
        if (c == NULL || api.acquire(c, 0) != c || api.release(c) != 0)
            die("close-worker claim");
        api.free(c);
    }
    while (read(STDIN_FILENO, &go, 1) == 1) {
        double t0 = now_s(), ns;
        if (shell) {
            ns = shell_once();
        } else {
            if (closes)
                close_loop();
            else if (probes || terms)
                kill_loop(child, probes ? 0 : SIGTERM, probes ? KILLS : TERMS);
            else
                start_once(how);
            ns = (now_s() - t0) * 1e9;
        }
        if (write(STDOUT_FILENO, &ns, sizeof ns) != (ssize_t)sizeof ns)
            return 1;
    }
    /* Reaped before this worker ends: a child left alive would be handed
     * the claim directory, and take it with it unseen. */
    if (child > 0 && (kill(child, SIGKILL) != 0 || waitpid(child, NULL, 0) != child))
        die("the worker's child");
    return 0;
}

struct worker {
    pid_t pid;
    int to, from;
};

/* Starts this program as a worker (ARG), preloaded with PRELOAD or not. */
static void start_worker(struct worker *w, const char *self, const char *arg, const char *preload)
{
    int in[2], out[2];

    /* Close-on-exec (the copies dup2 makes are not), or the next worker
     * would keep this one's input open and it would never see its end. */
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
        die("pipe");
    w->pid = fork();
    if (w->pid < 0)
        die("fork");
    if (w->pid == 0) {
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
            _exit(127);
        if (preload != NULL)
            setenv("LD_PRELOAD", preload, 1);
        else
            unsetenv("LD_PRELOAD");
        execl(self, self, arg, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    w->to = in[1];
    w->from = out[0];
}

static double worker_step(const struct worker *w)
{
    char go = 1;
    double ns;

    if (write(w->to, &go, 1) != 1 || read(w->from, &ns, sizeof ns) != (ssize_t)sizeof ns)
        die("a loop worker stopped");
    return ns;
}

static void stop_worker(const struct worker *w)
{
    close(w->to);
    close(w->from);
    if (waitpid(w->pid, NULL, 0) != w->pid)
        die("waitpid");
}

/* The three sides as long-lived workers, asked in turn for one iteration
 * each, N times: all three medians come from the same stretch of time,
 * so the drift of a shared machine weighs on each alike. */
static void compare_loop(const char *self, const char *label, const char *arg, int n, double target, const char *shim,
                         const char *empty)
{
    const char *sides[3] = { NULL, empty, shim };
    struct worker workers[3];
    double *t[3], without, with_empty, with_shim;

    for (int k = 0; k < 3; k++) {
        if ((t[k] = malloc(n * sizeof(double))) == NULL)
            die("malloc");
        start_worker(&workers[k], self, arg, sides[k]);
    }
    for (int i = 0; i < n; i++) {
        /* Each round starts with another side. */
        for (int k = 0; k < 3; k++) {
            int side = (i + k) % 3;
            t[side][i] = worker_step(&workers[side]);
        }
    }
    for (int k = 0; k < 3; k++)
        stop_worker(&workers[k]);
    without = median(t[0], n);
    with_empty = median(t[1], n);
    with_shim = median(t[2], n);
    printf("   %s (%s per iteration, medians of %d alternated iterations)\n", label,
           strcmp(arg, "--shell-worker") == 0 ? "CPU ns" : "ns", n);
    printf("      without %8.0f   empty preload %8.0f   shim %8.0f\n", without, with_empty, with_shim);
    printf("      p99     %8.0f                 %8.0f        %8.0f\n", percentile(t[0], n, 0.99),
           percentile(t[1], n, 0.99), percentile(t[2], n, 0.99));
    if (target > 0)
        printf("      the hooks: shim / empty preload  %.3f   (target <= %.2f)\n", with_shim / with_empty, target);
    else
        printf("      the hooks: shim / empty preload  %.3f   (the slow path: no target)\n", with_shim / with_empty);
    printf("      any preload: empty / without     %.3f\n", with_empty / without);
    printf("      in all: shim / without           %.3f\n", with_shim / without);
    for (int k = 0; k < 3; k++)
        free(t[k]);
}

/* Runs this program again with the shim preloaded and a scratch base,
 * then checks the library cleaned up after itself. */
static int run_preloaded(char **argv)
{
    const char *lib = getenv("SCL_PRELOAD"), *asan = getenv("SCL_ASAN_RUNTIME"), *empty = getenv("SCL_EMPTY_PRELOAD");
    char tmpl[] = "/tmp/scl-bench.XXXXXX", preload[8192], empty_preload[8192];

    if (lib == NULL || *lib == '\0') {
        fprintf(stderr, "bench: set SCL_PRELOAD to libswerveclaim_preload.so (make bench does)\n");
        exit(2);
    }
    if (mkdtemp(tmpl) == NULL)
        die("mkdtemp");
    if (empty == NULL || *empty == '\0') {
        fprintf(stderr, "bench: set SCL_EMPTY_PRELOAD to bench/.libs/libempty.so (make bench does)\n");
        exit(2);
    }
    snprintf(preload, sizeof preload, "%s%s%s", asan && *asan ? asan : "", asan && *asan ? ":" : "", lib);
    snprintf(empty_preload, sizeof empty_preload, "%s%s%s", asan && *asan ? asan : "", asan && *asan ? ":" : "", empty);
    setenv("SWERVE_TMPDIR", tmpl, 1);
    setenv("SCL_BENCH_CHILD", "1", 1);
    pid_t child = fork();
    if (child == 0) {
        setenv("LD_PRELOAD", preload, 1);
        execv("/proc/self/exe", argv);
        die("execv");
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child)
        die("bench child");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;
    printf("5. the hooks on the host's hot paths: a worker per side, without, empty preload and shim\n");
    compare_loop("/proc/self/exe", "fork+_exit+waitpid", "--fork-worker", FORK_STEPS, 1.10, preload, empty_preload);
    compare_loop("/proc/self/exe", "fork+_exit+waitpid, a listener open", "--listener-fork-worker", FORK_STEPS, 1.10,
                 preload, empty_preload);
    compare_loop("/proc/self/exe", "fork+exec /bin/true", "--exec-worker", EXEC_STEPS, 1.10, preload, empty_preload);
    compare_loop("/proc/self/exe", "vfork+exec /bin/true", "--vfork-worker", EXEC_STEPS, 1.10, preload, empty_preload);
    compare_loop("/proc/self/exe", "posix_spawn /bin/true", "--spawn-worker", EXEC_STEPS, 1.10, preload, empty_preload);
    compare_loop("/proc/self/exe", "1000 x dup+close", "--close-worker", CLOSE_STEPS, 1.02, preload, empty_preload);
    compare_loop("/proc/self/exe", "1000 x dup+close, a listener at fd 900", "--listener-close-worker", CLOSE_STEPS,
                 1.02, preload, empty_preload);
    compare_loop("/proc/self/exe", "1000 x kill(child, 0)", "--kill-worker", KILL_STEPS, 1.02, preload, empty_preload);
    compare_loop("/proc/self/exe", "100 x kill(child, SIGTERM), a drain signal", "--term-worker", TERM_STEPS, 0,
                 preload, empty_preload);
    compare_loop("/proc/self/exe", "sh -c '(true); echo x | cat', CPU of all its processes", "--shell-worker",
                 SHELL_STEPS, 1.05, preload, empty_preload);
    if (rmdir(tmpl) != 0) {
        fprintf(stderr, "bench: %s not empty after the run: %s\n", tmpl, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && (strcmp(argv[1], "--fork-worker") == 0 || strcmp(argv[1], "--exec-worker") == 0 ||
                      strcmp(argv[1], "--close-worker") == 0 || strcmp(argv[1], "--shell-worker") == 0 ||
                      strcmp(argv[1], "--listener-close-worker") == 0 || strcmp(argv[1], "--kill-worker") == 0 ||
                      strcmp(argv[1], "--term-worker") == 0 || strcmp(argv[1], "--listener-fork-worker") == 0 ||
                      strcmp(argv[1], "--vfork-worker") == 0 || strcmp(argv[1], "--spawn-worker") == 0))
        return loop_worker(argv[1]);
    if (getenv("SCL_BENCH_CHILD") == NULL)
        return run_preloaded(argv);
    if (!swerve_claim_load(&api)) {
        fprintf(stderr, "bench: the shim did not load\n");
        return 1;
    }
    scratch = getenv("SWERVE_TMPDIR");
    printf("swerve-claim bench: %ld CPUs, base directory %s\n", sysconf(_SC_NPROCESSORS_ONLN), scratch);
    bench_pairs();
    bench_held();
    bench_hot();
    bench_handoff();
    bench_reaping();
    bench_loop();
    return 0;
}
