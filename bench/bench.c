/*
 * bench - what claims cost, each figure next to a baseline measured in the
 * same run, on the same filesystem.  A program, not a test: it prints and
 * asserts nothing.  Run with `make bench`.
 *
 * It re-executes itself with the shim preloaded (SCL_PRELOAD) and a scratch
 * SWERVE_TMPDIR, then measures:
 *   1. an uncontended acquire+release pair, next to a bare linkat+unlinkat
 *      pair and a flock(2) lock/unlock pair, in alternating rounds;
 *   2. the hand-off latency from a release to a waiting acquire in another
 *      process, next to plain 20 ms polling;
 *   3. the CPU a waiter uses while it waits, next to a process that only
 *      sleeps in 20 ms steps (the floor the seed's 20 ms retries set).
 *
 * CPU time is read from /proc/self/schedstat (nanoseconds of run time):
 * getrusage() is sampled at the scheduler tick on many kernels, which
 * charges a process that wakes every 20 ms far more than it runs.
 */
#include <swerve/claim-loader.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 11
#define PAIRS 20000
#define HANDOFFS 200
#define POLLED_HANDOFFS 40

static struct swerve_claim_api api;
static const char *scratch;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
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
    printf("   ratio claim/link         %8.2f   (median of per-round ratios; target <= 1.30)\n",
           median(ratio, ROUNDS));
    api.free(c);
    close(fd);
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
    double *polled = mmap(NULL, sizeof(double) * POLLED_HANDOFFS, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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

/* Runs this program again with the shim preloaded and a scratch base,
 * then checks the library cleaned up after itself. */
static int run_preloaded(char **argv)
{
    const char *lib = getenv("SCL_PRELOAD"), *asan = getenv("SCL_ASAN_RUNTIME");
    char tmpl[] = "/tmp/scl-bench.XXXXXX", preload[8192];

    if (lib == NULL || *lib == '\0') {
        fprintf(stderr, "bench: set SCL_PRELOAD to libswerveclaim_preload.so (make bench does)\n");
        exit(2);
    }
    if (mkdtemp(tmpl) == NULL)
        die("mkdtemp");
    snprintf(preload, sizeof preload, "%s%s%s", asan && *asan ? asan : "", asan && *asan ? ":" : "", lib);
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
    if (rmdir(tmpl) != 0) {
        fprintf(stderr, "bench: %s not empty after the run: %s\n", tmpl, strerror(errno));
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (getenv("SCL_BENCH_CHILD") == NULL)
        return run_preloaded(argv);
    if (!swerve_claim_load(&api)) {
        fprintf(stderr, "bench: the shim did not load\n");
        return 1;
    }
    scratch = getenv("SWERVE_TMPDIR");
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("swerve-claim bench: %ld CPUs, base directory %s\n", sysconf(_SC_NPROCESSORS_ONLN), scratch);
    bench_pairs();
    bench_handoff();
    return 0;
}
