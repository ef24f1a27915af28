/* SPDX-License-Identifier: MIT */
/*
 * Scenarios run under LD_PRELOAD by tests/integration.  The program knows
 * the shim only through dlsym, like an application; each scenario checks
 * what it must inside the preloaded process, prints "ok SCENARIO" and
 * exits 0, or says what failed on stderr and exits 1.  Every wait is
 * bounded.
 *
 * usage: helper_scenarios SCENARIO [ARG...]   (see the table in main)
 */
#define _GNU_SOURCE 1
#include <swerve/claim-loader.h>

#include "require.h"
#include "padded_env.h"
#include "scenarios.h"
#include "testdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static struct swerve_claim_api api;

static void *shared(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    REQUIRE(p != MAP_FAILED);
    return p;
}

static const char *base(void)
{
    const char *b = getenv("SWERVE_TMPDIR");

    REQUIRE(b != NULL);
    return b;
}

/* Entries in the base directory named swerve-claim.*, and the first. */
static int claim_dirs(char *first, size_t cap)
{
    DIR *d = opendir(base());
    struct dirent *e;
    int n = 0;

    REQUIRE(d != NULL);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "swerve-claim.", 13) != 0)
            continue;
        if (n++ == 0 && first != NULL)
            snprintf(first, cap, "%s/%s", base(), e->d_name);
    }
    closedir(d);
    return n;
}

/* Whether claims/NAME exists in the (single) claim directory. */
static int claim_file_exists(const char *name)
{
    int exists;

    REQUIRE(claim_dirs(NULL, 0) == 1);
    exists = testdir_claim_exists(base(), name);
    REQUIRE(exists >= 0);
    return exists;
}

/* A pipe used as a one-shot signal between processes. */
struct gate {
    int fd[2];
};

static void gate_open(struct gate *g)
{
    REQUIRE(pipe(g->fd) == 0);
}

static void gate_pass(struct gate *g)
{
    char byte = 1;

    REQUIRE(write(g->fd[1], &byte, 1) == 1);
}

/* Waits for gate_pass (or a byte written to the gate), at most 10 s, and
 * returns the byte. */
static char gate_wait(struct gate *g)
{
    char byte;
    struct timeval tv = { .tv_sec = 10 };
    fd_set set;

    FD_ZERO(&set);
    FD_SET(g->fd[0], &set);
    REQUIRE(select(g->fd[0] + 1, &set, NULL, NULL, &tv) == 1);
    REQUIRE(read(g->fd[0], &byte, 1) == 1);
    return byte;
}

/* Waits, without reaping, until CHILD has ended (a zombie). */
static void wait_zombie(pid_t child)
{
    siginfo_t info;

    memset(&info, 0, sizeof info);
    REQUIRE(waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) == 0);
    REQUIRE(info.si_pid == child);
}

static struct swerve_claim *take(const char *name)
{
    struct swerve_claim *c = api.new_claim(name);

    REQUIRE(c != NULL);
    REQUIRE(api.acquire(c, 0.0) == c);
    return c;
}

/* ------------------------------------------------------------------ fork */

/* Forks a child that, once GO passes, tries NAME: it exits 0 when
 * somebody holds it. */
static pid_t fork_finds_held(const char *name, struct gate *go)
{
    pid_t pid = fork();

    if (pid == 0) {
        struct swerve_claim *c = api.new_claim(name);
        gate_wait(go);
        errno = 0;
        _exit(c != NULL && api.acquire(c, 0.0) == NULL && errno == EWOULDBLOCK ? 0 : 1);
    }
    REQUIRE(pid > 0);
    return pid;
}

/*
 * A parent that never used a claim makes nothing at its first fork: it
 * reserves the directory's place.  The first child that claims makes the
 * directory there (published, not a ".new" being built); a sibling forked
 * before that shares it; and the parent, which never opened it, clears
 * the claim of a child killed holding it as it reaps that child.
 */
static int fork_reserves_dir(char **argv)
{
    struct gate go, held, done;
    char dir[4096];
    pid_t other, holder, killed;
    int status;

    (void)argv;
    REQUIRE(claim_dirs(NULL, 0) == 0);
    gate_open(&go);
    gate_open(&held);
    gate_open(&done);
    other = fork_finds_held("x", &go);
    killed = fork();
    if (killed == 0) {
        (void)take("y");
        gate_pass(&held);
        for (;;)
            pause();
    }
    REQUIRE(killed > 0);
    holder = fork();
    if (holder == 0) {
        gate_wait(&held); /* "y" is taken: the directory is made */
        struct swerve_claim *c = take("x");
        gate_pass(&held);
        gate_wait(&done);
        api.free(c);
        exit(0);
    }
    REQUIRE(holder > 0);
    gate_wait(&held);
    REQUIRE(claim_dirs(dir, sizeof dir) == 1);
    REQUIRE(strstr(dir, ".new") == NULL);
    gate_pass(&held); /* to the holder: take "x" */
    /* Until the holder answers, the byte just written may be read back by
     * this process: wait for "x" itself. */
    for (int i = 0; i < 1000 && !claim_file_exists("x"); i++)
        usleep(10000);
    REQUIRE(claim_file_exists("x"));
    gate_pass(&go);
    REQUIRE(waitpid(other, &status, 0) == other && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(claim_file_exists("y"));
    REQUIRE(kill(killed, SIGKILL) == 0);
    REQUIRE(waitpid(killed, &status, 0) == killed && WIFSIGNALED(status));
    REQUIRE(!claim_file_exists("y"));
    gate_pass(&done);
    REQUIRE(waitpid(holder, &status, 0) == holder && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

/* The parent keeps what it holds, whatever an inheriting child does. */
static int inherited_handle(char **argv)
{
    struct swerve_claim *c;
    pid_t child;
    int status;

    (void)argv;
    c = take("leader");
    child = fork();
    if (child == 0) {
        errno = 0;
        REQUIRE(api.held(c) == 0);
        REQUIRE(api.release(c) == 0);
        REQUIRE(api.acquire(c, 0.0) == NULL && errno == EWOULDBLOCK);
        api.free(c);
        exit(0);
    }
    REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(api.held(c) == 1);
    REQUIRE(claim_file_exists("leader"));
    child = fork();
    if (child == 0)
        _exit(api.available(c) == 0 ? 0 : 1);
    REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    api.free(c);
    REQUIRE(!claim_file_exists("leader"));
    return 0;
}

/*
 * A launcher that forks and exits at once (nginx, Apache, php-fpm do):
 * before the child claims, its exit finds nothing to do; after (ARGV[0]
 * "claimed"), the child registered it as its parent, and its exit hands
 * the directory on instead of removing it under the real server.  Either
 * way the server's claims live in the place the launcher reserved.
 */
static int launcher(char **argv)
{
    char before[4096], after[4096];
    int claim_first = argv[0] != NULL && strcmp(argv[0], "claimed") == 0;
    struct swerve_claim *first = NULL;
    pid_t launcher_pid = getpid(), child;
    struct gate claimed;

    fflush(stdout);
    gate_open(&claimed);
    child = fork();
    REQUIRE(child >= 0);
    if (child > 0) {
        if (claim_first)
            gate_wait(&claimed);
        exit(0); /* the launcher leaves; the child goes on as the server */
    }
    REQUIRE(claim_dirs(NULL, 0) == 0);
    if (claim_first) {
        first = take("first");
        gate_pass(&claimed);
    }
    REQUIRE(claim_dirs(before, sizeof before) == (claim_first ? 1 : 0));
    for (int i = 0; i < 1000 && getppid() == launcher_pid; i++)
        usleep(10000);
    REQUIRE(getppid() != launcher_pid);
    usleep(20000); /* the launcher's exit path has run by now */
    REQUIRE(claim_dirs(after, sizeof after) == (claim_first ? 1 : 0));
    REQUIRE(!claim_first || strcmp(before, after) == 0);
    api.free(take("x"));
    REQUIRE(claim_dirs(after, sizeof after) == 1);
    REQUIRE(!claim_first || strcmp(before, after) == 0);
    if (first != NULL)
        api.free(first);
    return 0; /* the last member: its exit removes the directory */
}

/* ------------------------------------------------------------ exit paths */

static void exit_in_handler(int sig)
{
    (void)sig;
    exit(7); /* as Apache and uWSGI do */
}

/* Returns the exit status the child must end with. */
static int end_child_by(const char *how)
{
    if (strcmp(how, "exit") == 0)
        exit(3);
    if (strcmp(how, "_exit") == 0)
        _exit(4);
    if (strcmp(how, "_Exit") == 0)
        _Exit(5);
    if (strcmp(how, "quick_exit") == 0)
        quick_exit(6);
    if (strcmp(how, "exit-in-signal-handler") == 0) {
        signal(SIGUSR1, exit_in_handler);
        raise(SIGUSR1);
    }
    require_failed(__LINE__, how);
    return -1;
}

static int expected_status(const char *how)
{
    static const char *const order[] = { "exit", "_exit", "_Exit", "quick_exit", "exit-in-signal-handler" };

    for (int i = 0; i < 5; i++)
        if (strcmp(how, order[i]) == 0)
            return 3 + i;
    return -1;
}

/* A child's claims are gone when it has ended, before anybody reaps it:
 * the exit path itself released them. */
static int exit_path(char **argv)
{
    const char *how = argv[0];
    pid_t child;
    int status;

    REQUIRE(how != NULL && expected_status(how) > 0);
    child = fork();
    if (child == 0) {
        take("x");
        end_child_by(how);
    }
    wait_zombie(child);
    REQUIRE(!claim_file_exists("x"));
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == expected_status(how));
    return 0;
}

/* A process that holds more names than its journal and the scan bound a
 * clearer of another process keeps to (holder.h) lets go of every one as
 * it ends by HOW: its own claims are searched for in full. */
static int exit_holding_many(char **argv)
{
    enum { names = 12000 }; /* about 6,000 journaled, the rest past 4,096 entries */
    const char *how = argv[0];
    char *dir, claims[4200];
    pid_t child;
    int status;

    REQUIRE(how != NULL && expected_status(how) > 0);
    child = fork();
    if (child == 0) {
        char name[32];
        for (int i = 0; i < names; i++) {
            snprintf(name, sizeof name, "many-%05d", i);
            take(name);
        }
        end_child_by(how);
    }
    wait_zombie(child);
    dir = testdir_claim_dir(base());
    REQUIRE(dir != NULL && snprintf(claims, sizeof claims, "%s/claims", dir) < (int)sizeof claims);
    REQUIRE(testdir_count_prefix(claims, "many-") == 0);
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == expected_status(how));
    free(dir);
    return 0;
}

/* ---------------------------------------------------------------- reaping */

static volatile sig_atomic_t reaped_pid;
static volatile sig_atomic_t reaped_status;

static void reap_in_handler(int sig)
{
    int status, saved = errno;
    pid_t pid;

    (void)sig;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) { /* as nginx does */
        reaped_status = status;
        reaped_pid = pid;
    }
    errno = saved;
}

/* Reaps CHILD the way HOW names; returns the status it reported. */
static int reap_by(const char *how, pid_t child)
{
    struct rusage ru;
    siginfo_t info;
    int status = -1;

    if (strcmp(how, "waitpid") == 0) {
        REQUIRE(waitpid(child, &status, 0) == child);
    } else if (strcmp(how, "wait") == 0) {
        REQUIRE(wait(&status) == child);
    } else if (strcmp(how, "wait3") == 0) {
        REQUIRE(wait3(&status, 0, &ru) == child);
    } else if (strcmp(how, "wait4") == 0) {
        REQUIRE(wait4(child, &status, 0, &ru) == child);
    } else if (strcmp(how, "waitid") == 0) {
        memset(&info, 0, sizeof info);
        REQUIRE(waitid(P_PID, (id_t)child, &info, WEXITED) == 0);
        REQUIRE(info.si_pid == child && info.si_code == CLD_KILLED && info.si_status == SIGKILL);
        status = SIGKILL; /* what WTERMSIG would give */
    } else if (strcmp(how, "sigchld-handler") == 0) {
        sigset_t none;
        sigemptyset(&none);
        for (int i = 0; i < 1000 && reaped_pid != child; i++) {
            struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
            nanosleep(&tick, NULL);
        }
        REQUIRE(reaped_pid == child);
        status = reaped_status;
    } else {
        require_failed(__LINE__, how);
    }
    return status;
}

/* A child that took NAME, SIGKILLed once it holds it: its pid. */
static pid_t killed_holder(const char *name)
{
    struct gate held;
    pid_t child;

    gate_open(&held);
    child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        take(name);
        gate_pass(&held);
        for (;;)
            pause();
    }
    gate_wait(&held);
    REQUIRE(kill(child, SIGKILL) == 0);
    return child;
}

/* The claim of a SIGKILLed holder is free as soon as its parent reaps it,
 * whichever wait call does it. */
static int reap(char **argv)
{
    const char *how = argv[0];
    pid_t child;
    int status;

    REQUIRE(how != NULL);
    if (strcmp(how, "sigchld-handler") == 0) {
        struct sigaction sa = { .sa_handler = reap_in_handler };
        sigemptyset(&sa.sa_mask);
        REQUIRE(sigaction(SIGCHLD, &sa, NULL) == 0);
    }
    child = killed_holder("x");
    if (strcmp(how, "sigchld-handler") != 0) {
        wait_zombie(child);
        REQUIRE(claim_file_exists("x")); /* nothing ran in the killed child */
    }
    status = reap_by(how, child);
    REQUIRE(!claim_file_exists("x"));
    REQUIRE(strcmp(how, "waitid") == 0 ? status == SIGKILL : WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    return 0;
}

/* Nobody reaps (SIGCHLD ignored): a dead holder's claim counts as free. */
static int unreaped_holder(char **argv)
{
    struct swerve_claim *c;
    pid_t child;
    char proc[64];
    struct stat st;

    (void)argv;
    REQUIRE(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
    child = killed_holder("x");
    snprintf(proc, sizeof proc, "/proc/%d", (int)child);
    for (int i = 0; i < 1000 && stat(proc, &st) == 0; i++)
        usleep(10000);
    c = api.new_claim("x");
    REQUIRE(api.available(c) == 1);
    REQUIRE(api.acquire(c, 0.0) == c);
    api.free(c);
    return 0;
}

/* The hooks leave errno as the real calls left it. */
static int errno_kept(char **argv)
{
    pid_t child;
    int status;

    (void)argv;
    errno = 777;
    child = fork();
    if (child == 0)
        _exit(errno == 777 ? 0 : 1);
    REQUIRE(errno == 777);
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(errno == 777);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    errno = 0;
    REQUIRE(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD);
    return 0;
}

/* ------------------------------------------------------------- waiting */

static volatile sig_atomic_t alarms;

static void count_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* Signals (no SA_RESTART) do not end a wait: it runs to its timeout; and
 * an INFINITY wait ends when the holder lets go. */
static int signals_during_wait(char **argv)
{
    struct sigaction sa = { .sa_handler = count_alarm };
    struct itimerval every_5ms = { { 0, 5000 }, { 0, 5000 } }, off = { { 0, 0 }, { 0, 0 } };
    struct swerve_claim *c;
    struct gate held, go;
    pid_t child;
    double t0;
    int status;

    (void)argv;
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
    gate_open(&held);
    gate_open(&go);
    child = fork();
    if (child == 0) {
        struct swerve_claim *mine = take("x");
        gate_pass(&held);
        gate_wait(&go);
        usleep(100 * 1000);
        api.free(mine);
        exit(0);
    }
    gate_wait(&held);
    c = api.new_claim("x");
    REQUIRE(setitimer(ITIMER_REAL, &every_5ms, NULL) == 0);
    t0 = now_s();
    errno = 0;
    REQUIRE(api.acquire(c, 0.3) == NULL && errno == ETIMEDOUT);
    REQUIRE(now_s() - t0 >= 0.3);
    REQUIRE(alarms > 10);
    gate_pass(&go);
    REQUIRE(api.acquire(c, INFINITY) == c);
    REQUIRE(setitimer(ITIMER_REAL, &off, NULL) == 0);
    api.free(c);
    REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

/* ------------------------------------------------------------ guest manners */

/* The descriptor the library keeps: the one open on a claims directory. */
static int library_fd(void)
{
    char link[64], target[4096];
    int found = -1;

    for (int fd = 3; fd < 4096 && found < 0; fd++) {
        ssize_t n;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (strstr(target, "/swerve-claim.") != NULL && strstr(target, "/claims") != NULL)
                found = fd;
        }
    }
    return found;
}

/* A host closes every descriptor, then puts a file of its own on the
 * number the library had: claims keep working, the library opens its
 * own again, and the host's file is never read or written. */
static int host_clobbers_fd(char **argv)
{
    char path[4096], content[64];
    struct swerve_claim *c = take("x");
    int fd = library_fd(), mine, again;
    struct stat before, after;

    (void)argv;
    REQUIRE(fd >= 3);
    REQUIRE(api.release(c) == 0);
    for (int i = 3; i < 4096; i++)
        close(i);
    snprintf(path, sizeof path, "%s/host-file", base());
    mine = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    REQUIRE(mine >= 0 && write(mine, "host data", 9) == 9);
    REQUIRE(dup2(mine, fd) == fd);
    REQUIRE(fstat(fd, &before) == 0);
    REQUIRE(api.acquire(c, 0.0) == c && api.available(c) == 0 && api.release(c) == 0);
    REQUIRE(fstat(fd, &after) == 0);
    REQUIRE(before.st_ino == after.st_ino && after.st_size == 9);
    REQUIRE(lseek(fd, 0, SEEK_CUR) == 9); /* its offset untouched */
    REQUIRE(pread(fd, content, sizeof content, 0) == 9 && memcmp(content, "host data", 9) == 0);
    again = library_fd();
    REQUIRE(again >= 3 && again != fd);
    api.free(c);
    close(fd);
    close(mine);
    REQUIRE(unlink(path) == 0);
    return 0;
}

/* Puts directory DIRFD at number FD the way HOW says: through libc's own
 * call (close, close_range, closefrom, dup2, dup3), as a host would, or
 * with a raw dup3 system call. */
static void put_at(int dirfd, int fd, const char *how)
{
    if (strcmp(how, "dup2") == 0) {
        REQUIRE(dup2(dirfd, fd) == fd);
        return;
    }
    if (strcmp(how, "dup3") == 0) {
        REQUIRE(dup3(dirfd, fd, O_CLOEXEC) == fd);
        return;
    }
    if (strcmp(how, "raw-dup3") == 0) { /* unseen by the hooks */
        REQUIRE(syscall(SYS_dup3, dirfd, fd, O_CLOEXEC) == fd);
        return;
    }
    if (strcmp(how, "close") == 0)
        REQUIRE(close(fd) == 0);
    else if (strcmp(how, "close_range") == 0)
        REQUIRE(close_range((unsigned)fd, (unsigned)fd, 0) == 0);
    else if (strcmp(how, "closefrom") == 0)
        closefrom(fd);
    else
        REQUIRE(!"a known way to clobber a descriptor");
    REQUIRE(fcntl(dirfd, F_DUPFD, fd) == fd); /* not hooked: lands on the freed number */
}

/* The claim's link count in the library's own claims/ (0: no claim). */
static nlink_t claim_links(const char *claims, const char *name)
{
    char path[8192];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", claims, name);
    return lstat(path, &st) == 0 ? st.st_nlink : 0;
}

/*
 * A host puts a directory of its own on the number of the library's
 * claims descriptor, by HOW (argv[0]), at the two worst moments: before an
 * acquire, with a planted holder file of ours in it (a link there would be
 * a false hold), and between an acquire and its release, with a file of
 * the claim's name (the release must not unlink it).  The claim is made
 * and given up in the library's own directory each time; the host's
 * directory is left as it was.  A raw dup3, which the hooks cannot see,
 * is found by the next call that checks the descriptor (available()),
 * and from then on the pair is not made through that number either.
 */
static int host_replaces_kept_fd(char **argv)
{
    const char *how = argv[0];
    int raw = strcmp(how, "raw-dup3") == 0;
    char host[4096], claims[4096], planted[8192], file[8192];
    struct swerve_claim *c = take("x");
    int fd = library_fd(), hostfd;
    ssize_t n;
    struct stat st;

    REQUIRE(fd >= 3);
    snprintf(planted, sizeof planted, "/proc/self/fd/%d", fd);
    REQUIRE((n = readlink(planted, claims, sizeof claims - 1)) > 0);
    claims[n] = '\0';
    REQUIRE(api.release(c) == 0 && api.acquire(c, 0.0) == c && api.release(c) == 0); /* its checks stand */

    snprintf(host, sizeof host, "%s/host-dir", base());
    REQUIRE(mkdir(host, 0700) == 0 && (hostfd = open(host, O_RDONLY | O_DIRECTORY)) >= 0);
    snprintf(planted, sizeof planted, "%s/.holder.%d", host, (int)getpid());
    REQUIRE(close(open(planted, O_WRONLY | O_CREAT | O_EXCL, 0600)) == 0);
    put_at(hostfd, fd, how);
    REQUIRE(!raw || api.available(c) == 1);
    REQUIRE(api.acquire(c, 0.0) == c);
    REQUIRE(claim_links(claims, "x") >= 2);
    REQUIRE(claim_links(host, "x") == 0);
    REQUIRE(stat(planted, &st) == 0 && st.st_nlink == 1);

    /* The descriptor opened anew is checked, and that check stands. */
    REQUIRE(api.release(c) == 0 && api.acquire(c, 0.0) == c);
    fd = library_fd();
    REQUIRE(fd >= 3);
    snprintf(file, sizeof file, "%s/x", host);
    REQUIRE(close(open(file, O_WRONLY | O_CREAT | O_EXCL, 0600)) == 0);
    put_at(hostfd, fd, how);
    REQUIRE(!raw || api.available(c) == 0);
    REQUIRE(api.release(c) == 0);
    REQUIRE(claim_links(claims, "x") == 0);
    REQUIRE(stat(file, &st) == 0 && st.st_nlink == 1);
    REQUIRE(api.acquire(c, 0.0) == c && api.release(c) == 0);

    api.free(c);
    REQUIRE(close(fd) == 0 && close(hostfd) == 0);
    REQUIRE(unlink(file) == 0 && unlink(planted) == 0 && rmdir(host) == 0);
    return 0;
}

/* When claims cannot work (a base that is no directory), the API says so
 * with errno and the host goes on: forking and reaping still work. */
static int bad_base(char **argv)
{
    struct swerve_claim *c = api.new_claim("x");
    pid_t child;
    int status;

    (void)argv;
    errno = 0;
    REQUIRE(api.acquire(c, 0.0) == NULL);
    REQUIRE(errno == ENOENT || errno == ENOTDIR);
    REQUIRE(api.held(c) == 0);
    REQUIRE(api.available(c) == 1); /* nothing can be claimed there */
    errno = 0;
    REQUIRE(api.acquire(c, 0.05) == NULL && (errno == ENOENT || errno == ENOTDIR));
    child = fork();
    if (child == 0)
        _exit(9);
    REQUIRE(child > 0 && waitpid(child, &status, 0) == child && WEXITSTATUS(status) == 9);
    api.free(c);
    return 0;
}

/* ------------------------------------------------------------------ exec */

/* The exec'd image: claims released before the exec, the same claim
 * directory joined through SWERVE_CLAIM_DIR.  FD tells the parent. */
static int exec_image(char **argv)
{
    struct gate told = { .fd = { atoi(argv[0]), atoi(argv[1]) } };
    struct gate done = { .fd = { atoi(argv[2]), atoi(argv[3]) } };
    struct swerve_claim *c = api.new_claim("x");

    REQUIRE(getenv("SWERVE_CLAIM_DIR") != NULL);
    REQUIRE(api.available(c) == 1); /* released before the exec */
    REQUIRE(api.acquire(c, 0.0) == c);
    gate_pass(&told);
    gate_wait(&done);
    api.free(c);
    return 0;
}

/* What a shell does: a first fork (this process reserves its place),
 * then a child that execs a program preloading the shim, whose pid is
 * printed for the test that reads the loader's log (integration.c). */
static int fork_then_exec(char **argv)
{
    char preload[4200];
    char *const child_argv[] = { "true", NULL };
    char *const child_env[] = { preload, NULL };
    pid_t first, second;

    (void)argv;
    REQUIRE(snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("LD_PRELOAD")) < (int)sizeof preload);
    first = fork();
    REQUIRE(first >= 0);
    if (first == 0)
        _exit(0);
    REQUIRE(waitpid(first, NULL, 0) == first);
    second = fork();
    REQUIRE(second >= 0);
    if (second == 0) {
        execve("/bin/true", child_argv, child_env);
        _exit(127);
    }
    printf("child %d\n", (int)second);
    {
        int status;
        REQUIRE(waitpid(second, &status, 0) == second);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
}

/* Vectors larger than the exec hooks keep on their stack (they map room
 * for them): 300 arguments through execle, and an environment of 300
 * entries that preloads the shim still gets SWERVE_CLAIM_DIR. */
#define ARGS10  "a", "a", "a", "a", "a", "a", "a", "a", "a", "a"
#define ARGS100 ARGS10, ARGS10, ARGS10, ARGS10, ARGS10, ARGS10, ARGS10, ARGS10, ARGS10, ARGS10
static int exec_large_vectors(char **argv)
{
    static char vars[300][16];
    char *env[303];
    int status;
    pid_t pid;

    (void)argv;
    for (int i = 0; i < 300; i++) {
        snprintf(vars[i], sizeof vars[i], "V%d=x", i);
        env[i] = vars[i];
    }
    env[300] = getenv("LD_PRELOAD") - strlen("LD_PRELOAD=");
    env[301] = "PATH=/usr/bin:/bin";
    env[302] = NULL;
    pid = fork(); /* the claim directory exists from here on */
    REQUIRE(pid >= 0);
    if (pid == 0) {
        execle("/bin/sh", "sh", "-c", "[ $# -eq 300 ] && [ -n \"$SWERVE_CLAIM_DIR\" ] && [ -n \"$V299\" ]", "sh",
               ARGS100, ARGS100, ARGS100, (char *)NULL, env);
        _exit(127);
    }
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

/* Execs PATH with ARGV (six entries and a NULL) the way HOW names: every
 * entry point of the exec family, each hooked on its own. */
static int exec_by(const char *how, const char *path, char *const argv[])
{
    int fd;

    if (strcmp(how, "execl") == 0)
        return execl(path, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], (char *)NULL);
    if (strcmp(how, "execle") == 0)
        return execle(path, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], (char *)NULL, environ);
    if (strcmp(how, "execlp") == 0)
        return execlp(path, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5], (char *)NULL);
    if (strcmp(how, "execv") == 0)
        return execv(path, argv);
    if (strcmp(how, "execve") == 0)
        return execve(path, argv, environ);
    if (strcmp(how, "execvp") == 0)
        return execvp(path, argv);
    if (strcmp(how, "execvpe") == 0)
        return execvpe(path, argv, environ);
    if (strcmp(how, "execveat-path") == 0)
        return execveat(AT_FDCWD, path, argv, environ, 0);
    /* The descriptor ones: a missing program is a descriptor of -1. */
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (strcmp(how, "fexecve") == 0)
        return fexecve(fd, argv, environ);
    if (strcmp(how, "execveat-empty") == 0)
        return execveat(fd, "", argv, environ, AT_EMPTY_PATH);
    require_failed(__LINE__, how);
}

/* What exec_by(HOW) of a missing program leaves in errno. */
static int missing_program_errno(const char *how)
{
    if (strcmp(how, "fexecve") == 0)
        return EINVAL;
    if (strcmp(how, "execveat-empty") == 0)
        return EBADF;
    return ENOENT;
}

/* A holder execs by HOW (argv[0]): its claims are released, and the new
 * image joins the claim directory. */
static int exec_releases_and_joins(char **argv)
{
    const char *how = argv[0];
    struct gate told, done;
    char fds[4][16];
    char *image[] = { "helper_scenarios", SCN_EXEC_IMAGE, fds[0], fds[1], fds[2], fds[3], NULL };
    char *missing[] = { "program", "a", "b", "c", "d", "e", NULL };
    struct swerve_claim *c, *y;
    pid_t child;
    int status;

    REQUIRE(how != NULL);
    gate_open(&told);
    gate_open(&done);
    child = fork();
    if (child == 0) {
        c = take("x");
        for (int i = 0; i < 2; i++) {
            snprintf(fds[i], sizeof fds[i], "%d", told.fd[i]);
            snprintf(fds[2 + i], sizeof fds[2 + i], "%d", done.fd[i]);
        }
        exec_by(how, "/proc/self/exe", image);
        _exit(127);
    }
    gate_wait(&told);
    c = api.new_claim("x");
    REQUIRE(api.available(c) == 0); /* the exec'd image holds it, in our directory */
    REQUIRE(claim_dirs(NULL, 0) == 1);
    gate_pass(&done);
    REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(api.available(c) == 1);

    /* A failed exec released too: no handle holds anything after it. */
    y = take("y");
    errno = 0;
    REQUIRE(exec_by(how, "/nonexistent/program", missing) == -1 && errno == missing_program_errno(how));
    REQUIRE(api.held(y) == 0);
    REQUIRE(!claim_file_exists("y"));
    REQUIRE(api.acquire(y, 0.0) == y);
    api.free(y);
    api.free(c);
    return 0;
}

/* This program, by a path a shell can run too. */
static void self_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);

    REQUIRE(n > 0 && (size_t)n < cap - 1);
    out[n] = '\0';
}

/* Run by exec-near-arg-max's bisection, through the raw system call: an
 * image that got no SWERVE_CLAIM_DIR.  Named as long as SCN_PROBE_BUSY,
 * so that the limit found is that image's too. */
static int exec_alone(char **argv)
{
    (void)argv;
    REQUIRE(getenv("SWERVE_CLAIM_DIR") == NULL);
    return 0;
}

_Static_assert(sizeof SCN_EXEC_ALONE == sizeof SCN_PROBE_BUSY, "the bisection's image is named as long");

/* Whether libc's execve, unhooked (the raw system call), takes PATH with
 * ARGV and the environment padded to LENGTH: what the host gets without
 * the shim. */
static int fits_without_shim(const char *path, char *const argv[], size_t length)
{
    char *vars[72];
    int status;
    pid_t pid;

    padded_env(vars, length);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        REQUIRE(null >= 0 && dup2(null, 1) == 1);
        syscall(SYS_execve, path, argv, vars);
        _exit(errno == E2BIG ? 99 : 98);
    }
    REQUIRE(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 99);
    return WEXITSTATUS(status) == 0;
}

/* Starts IMAGE by HOW (execve or posix_spawn) from a holder of x, the
 * environment padded to LENGTH: its exit status, or 99 when it could not
 * start (E2BIG). */
static int start_padded(const char *how, const char *self, char *const image[], size_t length)
{
    char *vars[72];
    int status, err;
    pid_t pid;

    padded_env(vars, length);
    fflush(stdout);
    if (strcmp(how, "execve") == 0) {
        pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            execve(self, image, vars);
            _exit(errno == E2BIG ? 99 : 98);
        }
    } else {
        REQUIRE(strcmp(how, "posix_spawn") == 0);
        if ((err = posix_spawn(&pid, self, NULL, NULL, image, vars)) != 0) {
            REQUIRE(err == E2BIG);
            return 99;
        }
    }
    REQUIRE(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    return WEXITSTATUS(status);
}

/*
 * The largest environment the kernel takes without the shim, found by
 * bisection, leaves no room for the variable the shim adds when a holder
 * starts an image by HOW (argv[0]: execve or posix_spawn): the start
 * fails with E2BIG, as it would with one more variable of the host's;
 * the image never starts outside its server (issue 40: retried without
 * the variable, it took names its server's members held).  With room
 * for it, the image joins: x is busy there.
 */
static int exec_near_arg_max(char **argv)
{
    const char *how = argv[0];
    char self[4096];
    char *image[] = { "helper_scenarios", SCN_PROBE_BUSY, NULL };
    char *alone[] = { "helper_scenarios", SCN_EXEC_ALONE, NULL };
    size_t fits = 4096, too_big = 6 * 1000 * 1000;

    REQUIRE(how != NULL);
    self_path(self, sizeof self);
    REQUIRE(fits_without_shim(self, alone, fits) && !fits_without_shim(self, alone, too_big));
    for (int i = 0; i < 40 && too_big - fits > 1; i++) {
        size_t mid = fits + (too_big - fits) / 2;
        *(fits_without_shim(self, alone, mid) ? &fits : &too_big) = mid;
    }
    REQUIRE(too_big - fits == 1);
    take("x"); /* a member, so that the shim has a directory to pass on */
    REQUIRE(start_padded(how, self, image, fits) == 99);
    REQUIRE(start_padded(how, self, image, fits - 4096) == 0);
    return 0;
}

/* A holder starts /bin/true by HOW (argv[0]: execve or posix_spawn) with
 * no environment at all (envp NULL, which Linux takes as an empty one):
 * it starts, as without the shim (a review found the shim taking NULL
 * for "no memory for the copy", ENOMEM). */
static int exec_null_env(char **argv)
{
    char *image[] = { "true", NULL };
    int status, err;
    pid_t pid;

    REQUIRE(argv[0] != NULL);
    take("x");
    fflush(stdout);
    if (strcmp(argv[0], "execve") == 0) {
        pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            execve("/bin/true", image, NULL);
            _exit(errno == ENOMEM ? 97 : 98);
        }
    } else {
        REQUIRE(strcmp(argv[0], "posix_spawn") == 0);
        err = posix_spawn(&pid, "/bin/true", NULL, NULL, image, NULL);
        REQUIRE(err == 0);
    }
    REQUIRE(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

/* ------------------------------------------ new images beside a holder */

/* Run by spawn-keeps-holding: its parent holds x in the claim directory
 * this image must have joined, so x is busy here. */
static int probe_busy(char **argv)
{
    struct swerve_claim *c = api.new_claim("x");

    (void)argv;
    REQUIRE(c != NULL);
    errno = 0;
    REQUIRE(api.acquire(c, 0.0) == NULL && errno == EWOULDBLOCK);
    REQUIRE(getenv("SWERVE_CLAIM_DIR") != NULL);
    api.free(c);
    return 0;
}

static char *const probe_argv[] = { "helper_scenarios", SCN_PROBE_BUSY, NULL };

static int clone_child(void *arg)
{
    if (arg != NULL)
        execv(arg, probe_argv);
    _exit(arg != NULL ? 127 : 0);
}

/* A raw clone(2) through libc's clone(), without CLONE_VM: no fork
 * handler runs in its child.  The child execs PATH, or with NULL just
 * _exits.  Its wait status.  The child's stack is a copy of a part of
 * ours, so that AddressSanitizer knows it for a stack. */
static int run_clone(const char *path)
{
    _Alignas(16) char stack[64 * 1024];
    int status;
    pid_t pid;

    pid = clone(clone_child, stack + sizeof stack, SIGCHLD, (void *)path);
    REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid);
    return status;
}

/* A vfork child shares its parent's memory and stack: it execs PATH, or
 * with NULL just _exits.  Its wait status. */
static int run_vfork(const char *path)
{
    int status;
    pid_t pid = vfork();

    if (pid == 0) {
        if (path != NULL)
            execv(path, probe_argv);
        _exit(path != NULL ? 127 : 0);
    }
    REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid);
    return status;
}

/* Runs the probe by HOW; its wait status. */
static int run_probe(const char *how, const char *self)
{
    char command[4200], line[256];
    int status = -1;
    pid_t pid;
    FILE *p;

    REQUIRE(snprintf(command, sizeof command, "'%s' %s", self, SCN_PROBE_BUSY) < (int)sizeof command);
    fflush(stdout);
    if (strcmp(how, "posix_spawn") == 0 || strcmp(how, "posix_spawnp") == 0) {
        int (*spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                     char *const[], char *const[]) = how[11] == 'p' ? posix_spawnp : posix_spawn;
        REQUIRE(spawn(&pid, self, NULL, NULL, probe_argv, environ) == 0);
        REQUIRE(waitpid(pid, &status, 0) == pid);
    } else if (strcmp(how, "system") == 0) {
        status = system(command);
    } else if (strcmp(how, "popen") == 0) {
        REQUIRE((p = popen(command, "r")) != NULL);
        while (fgets(line, sizeof line, p) != NULL)
            fputs(line, stdout); /* the probe's "ok" */
        status = pclose(p);
    } else if (strcmp(how, "vfork") == 0) {
        status = run_vfork(self);
    } else if (strcmp(how, "clone") == 0) {
        status = run_clone(self);
    } else if (strcmp(how, "vfork-_exit") == 0) {
        status = run_vfork(NULL);
    } else if (strcmp(how, "clone-_exit") == 0) {
        status = run_clone(NULL);
    } else {
        require_failed(__LINE__, how);
    }
    return status;
}

/*
 * A holder of x starts a new image beside itself by HOW (argv[0]): the
 * image is in the same claim directory and finds x busy, and the holder
 * still holds x whatever its child did (a vfork child shares its memory,
 * a clone child was never seen by a fork handler).
 */
static int spawn_keeps_holding(char **argv)
{
    const char *how = argv[0];
    struct swerve_claim *c;
    char self[4096];
    int status;

    REQUIRE(how != NULL);
    self_path(self, sizeof self);
    c = take("x");
    status = run_probe(how, self);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(api.held(c) == 1);
    REQUIRE(claim_dirs(NULL, 0) == 1);
    REQUIRE(claim_file_exists("x"));
    api.free(c);
    return 0;
}

/* ------------------------------------------------- forks in hard places */

struct churn {
    volatile int stop;
    int index;
};

static void *churn_claims(void *arg)
{
    struct churn *ch = arg;
    char name[32];

    /* New handles each round, so the library's lock and journal are busy
     * while the main thread forks. */
    for (long i = 0; !ch->stop; i++) {
        struct swerve_claim *c;
        snprintf(name, sizeof name, "thread-%d-%ld", ch->index, i % 64);
        c = api.new_claim(name);
        REQUIRE(c != NULL && api.acquire(c, 1.0) == c);
        api.free(c);
    }
    return NULL;
}

/* Forks from a process whose other threads are inside the library. */
static int threaded_fork(char **argv)
{
    enum { threads = 4, forks = 300 };
    struct churn ch[threads];
    pthread_t tids[threads];

    (void)argv;
    for (int i = 0; i < threads; i++) {
        ch[i] = (struct churn){ .stop = 0, .index = i };
        REQUIRE(pthread_create(&tids[i], NULL, churn_claims, &ch[i]) == 0);
    }
    struct swerve_claim *c = api.new_claim("child");
    REQUIRE(c != NULL);
    for (int i = 0; i < forks; i++) {
        pid_t child = fork();
        int status;
        if (child == 0) {
            /* The child of a threaded fork may only call what is
             * async-signal-safe; a handle made before the fork can take
             * and release without allocating, and the library must not
             * be stuck on a lock another thread held at the fork. */
            _exit(api.acquire(c, 5.0) == c && api.release(c) == 0 ? 0 : 1);
        }
        REQUIRE(child > 0 && waitpid(child, &status, 0) == child);
        REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    for (int i = 0; i < threads; i++) {
        ch[i].stop = 1;
        REQUIRE(pthread_join(tids[i], NULL) == 0);
    }
    api.free(c);
    return 0;
}

static volatile sig_atomic_t handler_forks, handler_reaps;

/* PostgreSQL's way: fork inside one signal handler, reap in another. */
static void fork_in_handler(int sig)
{
    int saved = errno;
    pid_t child;

    (void)sig;
    child = fork();
    if (child == 0)
        _exit(0);
    if (child > 0)
        handler_forks++;
    errno = saved;
}

static void reap_all_in_handler(int sig)
{
    int saved = errno;

    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        handler_reaps++;
    errno = saved;
}

static int fork_in_signal_handler(char **argv)
{
    struct sigaction alarm = { .sa_handler = fork_in_handler }, chld = { .sa_handler = reap_all_in_handler };
    struct itimerval every_2ms = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };
    struct swerve_claim *c = api.new_claim("main");
    double t0 = now_s();

    (void)argv;
    sigemptyset(&alarm.sa_mask);
    sigemptyset(&chld.sa_mask);
    alarm.sa_flags = chld.sa_flags = SA_RESTART;
    REQUIRE(sigaction(SIGALRM, &alarm, NULL) == 0 && sigaction(SIGCHLD, &chld, NULL) == 0);
    REQUIRE(setitimer(ITIMER_REAL, &every_2ms, NULL) == 0);
    /* Meanwhile the main line forks too, and takes claims. */
    while (now_s() - t0 < 1.0) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        REQUIRE(child > 0);
        REQUIRE(api.acquire(c, 1.0) == c && api.release(c) == 0);
    }
    REQUIRE(setitimer(ITIMER_REAL, &off, NULL) == 0);
    for (int i = 0; i < 500 && waitpid(-1, NULL, WNOHANG) >= 0; i++)
        usleep(2000); /* until every child is reaped (ECHILD) */
    REQUIRE(handler_forks > 0 && handler_reaps > 0);
    api.free(c);
    return 0;
}

/* ----------------------------------------------------------------- orphans */

/*
 * A master is SIGKILLed: its workers are orphans nobody of ours reaps.
 * One of them holds a claim and is killed too: another orphan takes the
 * claim all the same, as its holder is dead.
 */
static int orphans(char **argv)
{
    struct gate held, take_it, done;
    pid_t master;
    int status;

    (void)argv;
    gate_open(&held);
    gate_open(&take_it);
    gate_open(&done);
    master = fork();
    if (master == 0) {
        pid_t holder = fork();
        if (holder == 0) {
            take("x");
            gate_pass(&held);
            for (;;)
                pause();
        }
        if (fork() == 0) { /* the other orphan */
            struct swerve_claim *c = api.new_claim("x");
            char byte;
            gate_wait(&take_it);
            REQUIRE(kill(holder, SIGKILL) == 0);
            for (int i = 0; i < 500 && kill(holder, 0) == 0; i++)
                usleep(10000); /* until init has reaped it */
            byte = api.acquire(c, 2.0) == c ? 1 : 0;
            api.free(c);
            REQUIRE(write(done.fd[1], &byte, 1) == 1);
            exit(0);
        }
        gate_wait(&held);
        (void)syscall(SYS_kill, getpid(), SIGKILL); /* the master dies, unseen: nothing of it runs */
    }
    REQUIRE(waitpid(master, &status, 0) == master && WIFSIGNALED(status));
    gate_pass(&take_it);
    REQUIRE(gate_wait(&done) == 1); /* the other orphan got the claim */
    return 0;
}

/*
 * A master whose children the kernel reaps, so that no wait of the host's
 * (and no hook) sees them go: SIGCHLD ignored ("sig-ign"), SA_NOCLDWAIT
 * ("nocldwait"), or the host reaping by raw wait4 system calls
 * ("raw-wait4").  Then the master claims and exits, some of them perhaps
 * still exiting, and must take its claim directory with it (the test
 * checks the base is empty).
 */
#define KERNEL_REAPED 1500

static int kernel_reaped_children(char **argv)
{
    const char *how = argv[0];
    struct sigaction sa;

    REQUIRE(how != NULL);
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = strcmp(how, "sig-ign") == 0 ? SIG_IGN : SIG_DFL;
    sa.sa_flags = strcmp(how, "nocldwait") == 0 ? SA_NOCLDWAIT : 0;
    REQUIRE(strcmp(how, "sig-ign") == 0 || strcmp(how, "nocldwait") == 0 || strcmp(how, "raw-wait4") == 0);
    REQUIRE(sigaction(SIGCHLD, &sa, NULL) == 0);
    for (int i = 0; i < KERNEL_REAPED; i++) {
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
            _exit(0);
        if (strcmp(how, "raw-wait4") == 0)
            REQUIRE(syscall(SYS_wait4, pid, NULL, 0, NULL) == pid);
    }
    take("x");
    return 0;
}

/*
 * A thread opens and closes popen streams while the main thread forks:
 * each child, with a popen stream of its parent's still open, must be
 * able to fclose a file of its own (within 5 s, or SIGALRM fails it).
 */
static atomic_int popen_stop;

static void *popen_loop(void *unused)
{
    (void)unused;
    while (!atomic_load(&popen_stop)) {
        FILE *p = popen("true", "r");
        REQUIRE(p != NULL);
        REQUIRE(pclose(p) == 0);
    }
    return NULL;
}

static int fork_during_popen(char **argv)
{
    FILE *kept = popen("cat >/dev/null", "w");
    pthread_t thread;

    (void)argv;
    REQUIRE(kept != NULL);
    REQUIRE(pthread_create(&thread, NULL, popen_loop, NULL) == 0);
    for (int i = 0; i < 300; i++) {
        int status;
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            FILE *f;
            alarm(5);
            f = fopen("/dev/null", "r");
            _exit(f != NULL && fclose(f) == 0 ? 0 : 1);
        }
        REQUIRE(waitpid(pid, &status, 0) == pid);
        REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    atomic_store(&popen_stop, 1);
    REQUIRE(pthread_join(thread, NULL) == 0);
    REQUIRE(pclose(kept) == 0);
    return 0;
}

/* ------------------------------------------------- abandoned directories */

/* This program again, ARGS after it, with a claim directory of its own:
 * posix_spawn runs no fork handler, and we have no directory to pass on. */
/* Starts this program again with ARGS and the environment ENV; its
 * standard output goes to /dev/null when QUIET. */
static pid_t spawn_self_with(const char *const *args, char **env, int quiet)
{
    const char *argv[8] = { "helper_scenarios" };
    posix_spawn_file_actions_t actions;
    pid_t pid;

    for (int i = 0; args[i] != NULL && i < 6; i++)
        argv[i + 1] = args[i];
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    if (quiet)
        REQUIRE(posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) == 0);
    REQUIRE(posix_spawn(&pid, "/proc/self/exe", &actions, NULL, (char *const *)argv, env) == 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

/*
 * Starts this program with ARGS as a server of its own, not a worker of
 * this process's: a child this process starts (spawned too) shares its
 * claim directory, so it is started through env(1), which runs without
 * the shim (nothing names the directory to it) and puts LD_PRELOAD back
 * for the new server, as a supervisor outside the shim would.  QUIET:
 * its standard output goes to /dev/null.
 */
static pid_t spawn_server(const char *const *args, int quiet)
{
    static char self[4096], preload[8192];
    const char *argv[12] = { "env", preload, self };
    char *env[256];
    posix_spawn_file_actions_t actions;
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    int n = 0, a = 3;
    pid_t pid;

    REQUIRE(len > 0 && getenv("LD_PRELOAD") != NULL);
    self[len] = '\0';
    REQUIRE(snprintf(preload, sizeof preload, "LD_PRELOAD=%s", getenv("LD_PRELOAD")) < (int)sizeof preload);
    for (char **e = environ; *e != NULL && n < 255; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
            env[n++] = *e;
    env[n] = NULL;
    for (int i = 0; args[i] != NULL && a < 11; i++)
        argv[a++] = args[i];
    argv[a] = NULL;
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    if (quiet)
        REQUIRE(posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) == 0);
    REQUIRE(posix_spawnp(&pid, "env", &actions, NULL, (char *const *)argv, env) == 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

static int hold_and_die(char **argv)
{
    (void)argv;
    take("x");
    /* Nothing of ours runs: a server SIGKILLed whole, by another process
     * (the shim's hooks see a kill() or raise() of its own). */
    (void)syscall(SYS_kill, getpid(), SIGKILL);
    return 1;
}

/* Holds y, says so on fd argv[0], and lets go when fd argv[1] closes. */
static int hold_and_wait(char **argv)
{
    struct gate told = { .fd = { -1, atoi(argv[0]) } }, release = { .fd = { atoi(argv[1]), -1 } };
    struct swerve_claim *c = take("y");
    char byte;

    gate_pass(&told);
    (void)!read(release.fd[0], &byte, 1);
    api.free(c);
    return 0;
}

/*
 * A worker exec'd with a base of its own (another SWERVE_TMPDIR) before
 * any process of its server made the directory makes it at the place its
 * server reserved, not in its own base: a sibling forked before it finds
 * its claim there.
 */
static int exec_makes_place(char **argv)
{
    static char other[4200], tmpdir[4300];
    char fds[2][16], holder[64], *env[256];
    const char *wait_args[] = { SCN_HOLD_AND_WAIT, fds[0], fds[1], NULL };
    struct gate go, told, release;
    pid_t sibling, worker;
    size_t n = 0;
    int status;

    (void)argv;
    REQUIRE(claim_dirs(NULL, 0) == 0);
    snprintf(other, sizeof other, "%s/other", base());
    snprintf(tmpdir, sizeof tmpdir, "SWERVE_TMPDIR=%s", other);
    REQUIRE(mkdir(other, 0700) == 0);
    for (char **e = environ; *e != NULL && n < 254; e++)
        if (strncmp(*e, "SWERVE_TMPDIR=", 14) != 0)
            env[n++] = *e;
    env[n++] = tmpdir;
    env[n] = NULL;
    gate_open(&go);
    gate_open(&told);
    gate_open(&release);
    sibling = fork_finds_held("y", &go); /* the first fork: it reserves the place */
    REQUIRE(fcntl(told.fd[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(release.fd[1], F_SETFD, FD_CLOEXEC) == 0);
    snprintf(fds[0], sizeof fds[0], "%d", told.fd[1]);
    snprintf(fds[1], sizeof fds[1], "%d", release.fd[0]);
    worker = spawn_self_with(wait_args, env, 1);
    gate_wait(&told);
    REQUIRE(claim_dirs(NULL, 0) == 1);
    /* It registered this process, which forked it: the directory stays
     * while this process lives. */
    snprintf(holder, sizeof holder, ".holder.%d", (int)getpid());
    REQUIRE(claim_file_exists(holder));
    gate_pass(&go);
    REQUIRE(waitpid(sibling, &status, 0) == sibling && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(release.fd[1]);
    REQUIRE(waitpid(worker, &status, 0) == worker && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(rmdir(other) == 0); /* nothing was made in the worker's own base */
    return 0;
}

/* The next server to start removes an abandoned directory, not a live one. */
static int sweep(char **argv)
{
    const char *die[] = { SCN_HOLD_AND_DIE, NULL };
    char fds[2][16];
    const char *wait_args[] = { SCN_HOLD_AND_WAIT, fds[0], fds[1], NULL };
    struct gate told, release;
    pid_t dead, live;
    int status;

    (void)argv;
    REQUIRE(claim_dirs(NULL, 0) == 0);
    dead = spawn_server(die, 0);
    REQUIRE(waitpid(dead, &status, 0) == dead && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    REQUIRE(claim_dirs(NULL, 0) == 1); /* abandoned, with a dead holder's claim */
    gate_open(&told);
    gate_open(&release);
    /* The holder gets one end of each: with the other, it would never see
     * the release pipe close. */
    REQUIRE(fcntl(told.fd[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(release.fd[1], F_SETFD, FD_CLOEXEC) == 0);
    snprintf(fds[0], sizeof fds[0], "%d", told.fd[1]);
    snprintf(fds[1], sizeof fds[1], "%d", release.fd[0]);
    live = spawn_server(wait_args, 0);
    gate_wait(&told);
    /* Its start, beside the abandoned directory, swept that away. */
    REQUIRE(claim_dirs(NULL, 0) == 1);
    api.free(take("z")); /* our start sweeps too, and must leave the live one */
    REQUIRE(claim_dirs(NULL, 0) == 2);
    close(release.fd[1]);
    REQUIRE(waitpid(live, &status, 0) == live && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(claim_dirs(NULL, 0) == 1); /* the live one removed its own */
    return 0;
}

/*
 * Net::Server's way to stop (Starman on SIGTERM): the master signals its
 * workers and ends without waiting for them.  Each worker's end runs while
 * the master is still there, and the worker lingers a while after it (its
 * heap torn down, its other libraries' destructors); the master ends
 * meanwhile.  Once all of them are gone, nothing is left in the base.
 * ARGV[0]: "members" (the workers claimed: the first made the directory
 * and registered the master) or "idle" (the master claimed after forking
 * them, and they never used a claim).  The master is a server of its own
 * (spawn_server()), so that no process of this tree outlives it as a
 * member.
 */
#define ENDING_WORKERS 4

static int master_ends_first(char **argv)
{
    char fd[16];
    const char *args[] = { SCN_MASTER_ENDING, argv[0], fd, NULL };
    pid_t master, workers[ENDING_WORKERS];
    struct gate told;
    int status;

    REQUIRE(argv[0] != NULL);
    gate_open(&told);
    REQUIRE(fcntl(told.fd[0], F_SETFD, FD_CLOEXEC) == 0);
    snprintf(fd, sizeof fd, "%d", told.fd[1]);
    master = spawn_server(args, 1);
    close(told.fd[1]);
    REQUIRE(waitpid(master, &status, 0) == master && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(read(told.fd[0], workers, sizeof workers) == sizeof workers);
    for (int i = 0, waits = 0; i < ENDING_WORKERS; i++)
        while (kill(workers[i], 0) == 0) {
            REQUIRE(waits++ < 1000); /* 10 s, until init has reaped them all */
            usleep(10000);
        }
    if (claim_dirs(NULL, 0) != 0) {
        fprintf(stderr, "master-ends-first %s: a claim directory is left once master and workers are gone\n", argv[0]);
        return 1;
    }
    return 0;
}

static int ended_fd = -1;

/* What runs after the shim's end: the worker says its end has run, then
 * lingers as a large process tearing down does. */
static void linger(void)
{
    char byte = 1;

    (void)!write(ended_fd, &byte, 1);
    usleep(300 * 1000);
}

/* The master of master-ends-first: ARGV[0] the mode, ARGV[1] the
 * descriptor it writes its workers' pids to. */
static int master_ending(char **argv)
{
    struct gate ready, stop, ended;
    pid_t workers[ENDING_WORKERS];
    int members;

    REQUIRE(argv[0] != NULL && argv[1] != NULL);
    members = strcmp(argv[0], "members") == 0;
    REQUIRE(members || strcmp(argv[0], "idle") == 0);
    gate_open(&ready);
    gate_open(&stop);
    gate_open(&ended);
    for (int i = 0; i < ENDING_WORKERS; i++) {
        workers[i] = fork();
        REQUIRE(workers[i] >= 0);
        if (workers[i] == 0) {
            char byte;
            close(stop.fd[1]);
            if (members)
                api.free(api.acquire(api.new_claim("report"), 0.0)); /* one takes it, all are members */
            ended_fd = ended.fd[1];
            REQUIRE(at_quick_exit(linger) == 0);
            gate_pass(&ready);
            (void)!read(stop.fd[0], &byte, 1); /* until the master stops them */
            quick_exit(0);                     /* the shim's end runs, then linger() */
        }
    }
    for (int i = 0; i < ENDING_WORKERS; i++)
        gate_wait(&ready);
    if (!members)
        take("master");
    REQUIRE(claim_dirs(NULL, 0) == 1);
    REQUIRE(write(atoi(argv[1]), workers, sizeof workers) == sizeof workers);
    close(stop.fd[1]); /* the workers' signal to stop */
    for (int i = 0; i < ENDING_WORKERS; i++)
        gate_wait(&ended);
    return 0; /* ends at once, its workers still there */
}

/*
 * A binary upgrade (nginx, unicorn, gunicorn on SIGUSR2): the master
 * forks a child that execs a new master, which forks a worker; then the
 * old master ends.  Neither of the new generation has claimed, and the
 * directory outlives the old master all the same: the new master joined
 * it at its first fork.  The worker's claim goes there; once all are
 * gone, nothing is left.  The old master is a server of its own
 * (spawn_server()), so that no process of this tree outlives it as a
 * member.
 */
static int upgrade_keeps_dir(char **argv)
{
    char fds[2][16];
    const char *args[] = { SCN_UPGRADE_OLD, fds[0], fds[1], NULL };
    struct gate told, go;
    pid_t old, new[2];
    char worker_status;
    int status, kept;

    (void)argv;
    gate_open(&told);
    gate_open(&go);
    REQUIRE(fcntl(told.fd[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(go.fd[1], F_SETFD, FD_CLOEXEC) == 0);
    snprintf(fds[0], sizeof fds[0], "%d", told.fd[1]);
    snprintf(fds[1], sizeof fds[1], "%d", go.fd[0]);
    old = spawn_server(args, 1);
    close(told.fd[1]);
    close(go.fd[0]);
    REQUIRE(waitpid(old, &status, 0) == old && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(read(told.fd[0], new, sizeof new) == sizeof new);
    kept = claim_dirs(NULL, 0) == 1;
    close(go.fd[1]); /* the worker claims, then the new generation ends */
    REQUIRE(read(told.fd[0], &worker_status, 1) == 1);
    REQUIRE(worker_status == 0);
    for (int i = 0, waits = 0; i < 2; i++)
        while (kill(new[i], 0) == 0) {
            REQUIRE(waits++ < 1000); /* 10 s, until init has reaped them */
            usleep(10000);
        }
    REQUIRE(claim_dirs(NULL, 0) == 0);
    if (!kept)
        fprintf(stderr, "upgrade-keeps-dir: the directory went with the old master\n");
    return kept ? 0 : 1;
}

/* The old master of upgrade-keeps-dir: holds a claim, execs the new
 * master in a child, and ends once that has forked.  ARGV: the
 * descriptors the new master tells on and waits on. */
static int upgrade_old(char **argv)
{
    struct gate forked;
    char fd[16];
    pid_t child;

    REQUIRE(argv[0] != NULL && argv[1] != NULL);
    take("old");
    gate_open(&forked);
    snprintf(fd, sizeof fd, "%d", forked.fd[1]);
    child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        execl("/proc/self/exe", "helper_scenarios", SCN_UPGRADE_NEW, argv[0], argv[1], fd, (char *)NULL);
        _exit(127);
    }
    REQUIRE(gate_wait(&forked) == 1);
    return 0; /* ends, its claim released, the new generation there */
}

/* The new master: forks a worker, tells both pids and says it forked;
 * once the go pipe closes, the worker claims; tells the worker's exit
 * status and ends.  ARGV: the descriptors to tell on, to wait on, and to
 * say it forked on. */
static int upgrade_new(char **argv)
{
    int told, go, forked, status;
    pid_t pids[2];
    char byte = 1;

    REQUIRE(argv[0] != NULL && argv[1] != NULL && argv[2] != NULL);
    told = atoi(argv[0]), go = atoi(argv[1]), forked = atoi(argv[2]);
    pids[0] = getpid();
    pids[1] = fork();
    REQUIRE(pids[1] >= 0);
    if (pids[1] == 0) {
        (void)!read(go, &byte, 1); /* until the go pipe closes */
        api.free(take("new"));
        exit(0);
    }
    REQUIRE(write(told, pids, sizeof pids) == sizeof pids);
    REQUIRE(write(forked, &byte, 1) == 1);
    REQUIRE(waitpid(pids[1], &status, 0) == pids[1]);
    byte = WIFEXITED(status) ? (char)WEXITSTATUS(status) : 1;
    REQUIRE(write(told, &byte, 1) == 1);
    return 0;
}

/* ------------------------------------------------------ mutual exclusion */

struct tally {
    int inside, violations;
    long acquisitions;
};

static void contend(struct tally *t, int iterations, const char *name)
{
    struct swerve_claim *c = api.new_claim(name);

    REQUIRE(c != NULL);
    for (int i = 0; i < iterations; i++) {
        REQUIRE(api.acquire(c, 30.0) == c);
        if (__atomic_add_fetch(&t->inside, 1, __ATOMIC_SEQ_CST) != 1)
            __atomic_add_fetch(&t->violations, 1, __ATOMIC_SEQ_CST);
        sched_yield(); /* give a second holder every chance to show up */
        __atomic_sub_fetch(&t->inside, 1, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&t->acquisitions, 1, __ATOMIC_SEQ_CST);
        REQUIRE(api.release(c) == 0);
    }
    api.free(c);
}

static void report_tally(const char *what, const struct tally *t, long expected)
{
    printf("%s: %ld acquisitions, %d violations\n", what, t->acquisitions, t->violations);
    REQUIRE(t->violations == 0);
    REQUIRE(t->acquisitions == expected);
}

static int mutex_processes(char **argv)
{
    int workers = argv[0] ? atoi(argv[0]) : 8, iterations = argv[0] && argv[1] ? atoi(argv[1]) : 500;
    struct tally *t = shared(sizeof *t);
    pid_t pids[64];

    REQUIRE(workers > 0 && workers <= 64 && iterations > 0);
    for (int w = 0; w < workers; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            contend(t, iterations, "counter");
            exit(0);
        }
    }
    for (int w = 0; w < workers; w++) {
        int status;
        REQUIRE(waitpid(pids[w], &status, 0) == pids[w] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    report_tally("processes", t, (long)workers * iterations);
    return 0;
}

struct thread_job {
    struct tally *t;
    int iterations;
};

static void *thread_body(void *arg)
{
    struct thread_job *job = arg;

    contend(job->t, job->iterations, "counter");
    return NULL;
}

static int mutex_threads(char **argv)
{
    int threads = argv[0] ? atoi(argv[0]) : 8, iterations = argv[0] && argv[1] ? atoi(argv[1]) : 500;
    struct tally t = { 0 };
    struct thread_job job = { &t, iterations };
    pthread_t tids[64];

    REQUIRE(threads > 0 && threads <= 64 && iterations > 0);
    for (int i = 0; i < threads; i++)
        REQUIRE(pthread_create(&tids[i], NULL, thread_body, &job) == 0);
    for (int i = 0; i < threads; i++)
        REQUIRE(pthread_join(tids[i], NULL) == 0);
    report_tally("threads", &t, (long)threads * iterations);
    return 0;
}

/* ---------------------------------------------------------------- stress */

struct stress {
    _Atomic pid_t owner; /* who holds the name now, by the checker's book */
    _Atomic long acquisitions;
    _Atomic int violations;
    _Atomic int after_zombies; /* taken from a SIGKILLed holder not yet reaped */
    volatile int stop;
};

/* 'Z' when PID is a zombie, 'R', 'S'... when it runs, 0 when it is gone. */
static char proc_state(pid_t pid)
{
    char path[64], line[512], *paren;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    paren = fgets(line, sizeof line, f) != NULL ? strrchr(line, ')') : NULL;
    fclose(f);
    return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

static void stress_worker(struct stress *st)
{
    struct swerve_claim *c = api.new_claim("contended");
    pid_t self = getpid();

    REQUIRE(c != NULL);
    while (!st->stop) {
        pid_t before;
        if (api.acquire(c, 1.0) != c)
            continue;
        /* A previous owner still running means two holders at once.  One
         * SIGKILLed while holding is dead: a zombie its parent has not
         * reaped yet holds nothing (a contender may clear its claim before
         * the parent does), so it is counted apart. */
        before = atomic_exchange(&st->owner, self);
        if (before != 0) {
            char state = proc_state(before);
            if (state == 'Z' || state == 'X')
                atomic_fetch_add(&st->after_zombies, 1);
            else if (state != 0)
                atomic_fetch_add(&st->violations, 1);
        }
        atomic_fetch_add(&st->acquisitions, 1);
        for (volatile int spin = 0; spin < 2000; spin++)
            ;
        pid_t mine = self;
        atomic_compare_exchange_strong(&st->owner, &mine, 0);
        REQUIRE(api.release(c) == 0);
    }
    exit(0);
}

/*
 * 8 workers contend on one name while the master SIGKILLs one at random
 * every ~100 ms and forks a replacement: no moment with two holders, and
 * no stale claim left at the end.  usage: stress SECONDS MIN-ACQUISITIONS
 */
static int stress(char **argv)
{
    enum { workers = 8 };
    double seconds = argv[0] ? atof(argv[0]) : 5, t0 = now_s();
    long wanted = argv[0] && argv[1] ? atol(argv[1]) : 10000;
    struct stress *st = shared(sizeof *st);
    pid_t pids[workers];
    long kills = 0;

    srand((unsigned)getpid());
    for (int i = 0; i < workers; i++)
        if ((pids[i] = fork()) == 0)
            stress_worker(st);
    while (now_s() - t0 < seconds || atomic_load(&st->acquisitions) < wanted) {
        int victim = rand() % workers, status;
        usleep(100 * 1000);
        REQUIRE(now_s() - t0 < seconds * 6 + 30); /* bounded, however slow */
        REQUIRE(kill(pids[victim], SIGKILL) == 0);
        REQUIRE(waitpid(pids[victim], &status, 0) == pids[victim]);
        kills++;
        if ((pids[victim] = fork()) == 0)
            stress_worker(st);
    }
    st->stop = 1;
    for (int i = 0; i < workers; i++) {
        int status;
        REQUIRE(waitpid(pids[i], &status, 0) == pids[i]);
    }
    {
        char dir[4096], claims[8192];
        int left;
        REQUIRE(claim_dirs(dir, sizeof dir) == 1);
        snprintf(claims, sizeof claims, "%s/claims", dir);
        left = 0;
        for (DIR *d = opendir(claims); d != NULL;) {
            struct dirent *e = readdir(d);
            if (e == NULL) {
                closedir(d);
                break;
            }
            left += e->d_name[0] != '.';
        }
        printf("stress: %ld acquisitions, %d violations, %ld workers SIGKILLed, %d taken from unreaped zombies, "
               "%d stale claims left\n",
               atomic_load(&st->acquisitions), atomic_load(&st->violations), kills, atomic_load(&st->after_zombies),
               left);
        REQUIRE(atomic_load(&st->violations) == 0);
        REQUIRE(atomic_load(&st->acquisitions) >= wanted);
        REQUIRE(left == 0);
    }
    return 0;
}

/* ----------------------------------------------------------- timed wait */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* How a holder in a child lets go of NAME, which it holds: it stores in
 * *RELEASED_AT when it last let go, and stays alive a while after. */
typedef void letting_go(struct swerve_claim *mine, double *released_at);

/* The median of 7 times from a child's letting go (LET_GO) of NAME to
 * this process, waiting for it, having it; the times are printed after
 * WHAT. */
static double handoff_median(const char *what, const char *name, letting_go *let_go)
{
    enum { trials = 7 };
    double *released_at = shared(sizeof(double)), latency[trials];

    for (int i = 0; i < trials; i++) {
        struct gate held;
        struct swerve_claim *c;
        pid_t child;
        int status;

        gate_open(&held);
        child = fork();
        if (child == 0) {
            struct swerve_claim *mine = take(name);
            gate_pass(&held);
            let_go(mine, released_at);
            exit(0);
        }
        gate_wait(&held);
        c = api.new_claim(name);
        REQUIRE(api.acquire(c, 5.0) == c);
        latency[i] = now_s();
        api.free(c);
        REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        latency[i] -= *released_at; /* written before the release that let this process in */
    }
    qsort(latency, trials, sizeof latency[0], cmp_double);
    printf("%s ms: min %.3f median %.3f max %.3f\n", what, latency[0] * 1e3, latency[trials / 2] * 1e3,
           latency[trials - 1] * 1e3);
    return latency[trials / 2];
}

static void release_once(struct swerve_claim *mine, double *released_at)
{
    usleep(300 * 1000);
    *released_at = now_s();
    REQUIRE(api.release(mine) == 0);
    usleep(50 * 1000); /* stay alive: the wake-up must come from the release */
}

/*
 * A holder in another process releases after 300 ms; the waiter must have
 * the name well before the next 20 ms retry would have given it: by the
 * median of 7 hand-offs, under 2 ms (polling alone gives ~10 ms).
 */
static int handoff(char **argv)
{
    (void)argv;
    REQUIRE(handoff_median("handoff latency", "handoff", release_once) < 0.002);
    return 0;
}

/* Takes the name again and again, then stops mid-turn: it may lose the
 * name to the waiter on the way, and then stops there. */
static void loop_then_stop(struct swerve_claim *mine, double *released_at)
{
    int holding = 1;

    usleep(50 * 1000); /* the parent waits by then */
    for (int k = 0; k < 5 && holding; k++) {
        *released_at = now_s();
        REQUIRE(api.release(mine) == 0);
        holding = k < 4 && api.acquire(mine, 0.0) == mine;
    }
    usleep(100 * 1000); /* alive, and not coming back */
}

/*
 * Turns on a hot name (wake.h): a holder that takes its name again and
 * again while another process waits wakes nobody until its turn ends;
 * when it stops mid-turn, the waiter still has the name within the turn
 * (0.5 ms, and 0.1 ms of grace), not at its next 20 ms retry.
 */
static int turn_ends_for_waiter(char **argv)
{
    (void)argv;
    REQUIRE(handoff_median("after a loop: waiter's latency", "looped", loop_then_stop) < 0.005);
    return 0;
}

/*
 * Two processes take one name and let it go in loops for 500 ms: turns
 * (wake.h) hand it from one to the other, so neither makes fewer than a
 * third of the other's pairs (about 0.6 to 1 here; without the hand-over
 * at a turn's end, one makes a fifth of the other's, most runs).
 */
static int hot_name_shares(char **argv)
{
    long *pairs = shared(2 * sizeof(long));
    double *start = shared(sizeof(double));
    struct gate go;
    pid_t child[2];

    (void)argv;
    gate_open(&go);
    for (int i = 0; i < 2; i++) {
        child[i] = fork();
        REQUIRE(child[i] >= 0);
        if (child[i] == 0) {
            struct swerve_claim *c = api.new_claim("shared-hot");
            gate_wait(&go);
            while (now_s() < *start + 0.5) {
                REQUIRE(api.acquire(c, 5.0) == c);
                REQUIRE(api.release(c) == 0);
                pairs[i]++;
            }
            exit(0);
        }
    }
    *start = now_s();
    gate_pass(&go);
    gate_pass(&go);
    for (int i = 0; i < 2; i++) {
        int status;
        REQUIRE(waitpid(child[i], &status, 0) == child[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    printf("hot-name-shares: %ld and %ld pairs\n", pairs[0], pairs[1]);
    REQUIRE(pairs[0] * 3 >= pairs[1] && pairs[1] * 3 >= pairs[0]);
    return 0;
}

/*
 * A waiter SIGKILLed while it waited stays counted in its name's slot;
 * a process that then takes and releases the name thousands of times
 * (turns end every 0.5 ms) is never held off it: a turn's end wakes
 * nobody, so it keeps no time off the name.
 */
static int killed_waiter(char **argv)
{
    struct swerve_claim *c = take("phantom");
    double started;
    pid_t waiter;
    int pairs = 0;

    (void)argv;
    waiter = fork();
    REQUIRE(waiter >= 0);
    if (waiter == 0) {
        struct swerve_claim *w = api.new_claim("phantom");
        (void)api.acquire(w, INFINITY);
        _exit(1);
    }
    usleep(100 * 1000); /* it sleeps in its wait by then */
    REQUIRE(kill(waiter, SIGKILL) == 0);
    wait_zombie(waiter);
    REQUIRE(waitpid(waiter, NULL, 0) == waiter);
    REQUIRE(api.release(c) == 0);
    started = now_s();
    for (; pairs < 5000; pairs++) {
        if (api.acquire(c, 0.0) != c) {
            fprintf(stderr, "killed-waiter: refused after %d pairs, %.3f ms: %s\n", pairs, (now_s() - started) * 1e3,
                    strerror(errno));
            return 1;
        }
        REQUIRE(api.release(c) == 0);
    }
    printf("killed-waiter: %d pairs in %.1f ms\n", pairs, (now_s() - started) * 1e3);
    REQUIRE(now_s() - started > 0.002); /* so turns ended on the way */
    api.free(c);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct scenario scenarios[] = {
        { SCN_FORK_RESERVES_DIR, fork_reserves_dir },
        { SCN_INHERITED_HANDLE, inherited_handle },
        { SCN_LAUNCHER, launcher },
        { SCN_EXIT_PATH, exit_path },                 /* exit|_exit|_Exit|quick_exit|exit-in-signal-handler */
        { SCN_EXIT_HOLDING_MANY, exit_holding_many }, /* exit|_exit */
        { SCN_REAP, reap },                           /* waitpid|wait|wait3|wait4|waitid|sigchld-handler */
        { SCN_UNREAPED_HOLDER, unreaped_holder },
        { SCN_ERRNO_KEPT, errno_kept },
        { SCN_SIGNALS_DURING_WAIT, signals_during_wait },
        { SCN_HOST_CLOBBERS_FD, host_clobbers_fd },
        { SCN_HOST_REPLACES_KEPT_FD, host_replaces_kept_fd },
        { SCN_BAD_BASE, bad_base },                               /* run with SWERVE_TMPDIR not a directory */
        { SCN_EXEC_RELEASES_AND_JOINS, exec_releases_and_joins }, /* an exec_by() name */
        { SCN_EXEC_LARGE_VECTORS, exec_large_vectors },
        { SCN_FORK_THEN_EXEC, fork_then_exec },
        { SCN_EXEC_IMAGE, exec_image },                   /* run by exec-releases-and-joins */
        { SCN_SPAWN_KEEPS_HOLDING, spawn_keeps_holding }, /* a run_probe() name */
        { SCN_PROBE_BUSY, probe_busy },                   /* run by spawn-keeps-holding */
        { SCN_EXEC_ALONE, exec_alone },                   /* run by exec-near-arg-max */
        { SCN_EXEC_NEAR_ARG_MAX, exec_near_arg_max },     /* execve|posix_spawn */
        { SCN_EXEC_NULL_ENV, exec_null_env },             /* execve|posix_spawn */
        { SCN_THREADED_FORK, threaded_fork },
        { SCN_FORK_IN_SIGNAL_HANDLER, fork_in_signal_handler },
        { SCN_ORPHANS, orphans },
        { SCN_SWEEP, sweep },
        { SCN_EXEC_MAKES_PLACE, exec_makes_place },
        { SCN_HOLD_AND_DIE, hold_and_die },       /* run by sweep */
        { SCN_HOLD_AND_WAIT, hold_and_wait },     /* run by sweep */
        { SCN_STRESS, stress },                   /* [SECONDS [MIN-ACQUISITIONS]] */
        { SCN_MUTEX_PROCESSES, mutex_processes }, /* [WORKERS [ITERATIONS]] */
        { SCN_MUTEX_THREADS, mutex_threads },     /* [THREADS [ITERATIONS]] */
        { SCN_HANDOFF, handoff },
        { SCN_TURN_ENDS_FOR_WAITER, turn_ends_for_waiter },
        { SCN_KILLED_WAITER, killed_waiter },
        { SCN_HOT_NAME_SHARES, hot_name_shares },
        { SCN_KERNEL_REAPED_CHILDREN, kernel_reaped_children }, /* sig-ign|nocldwait|raw-wait4 */
        { SCN_FORK_DURING_POPEN, fork_during_popen },
        { SCN_MASTER_ENDS_FIRST, master_ends_first }, /* members|idle */
        { SCN_MASTER_ENDING, master_ending },         /* run by master-ends-first */
        { SCN_UPGRADE_KEEPS_DIR, upgrade_keeps_dir },
        { SCN_UPGRADE_OLD, upgrade_old }, /* run by upgrade-keeps-dir */
        { SCN_UPGRADE_NEW, upgrade_new }, /* exec'd by upgrade-old */
    };

    if (!swerve_claim_load(&api)) {
        fprintf(stderr, "helper_scenarios: libswerveclaim_preload.so is not loaded\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Returning from main is itself an exit path under test: a child
     * that holds a claim and returns from main must release it. */
    if (argc == 2 && strcmp(argv[1], SCN_RETURN_FROM_MAIN) == 0) {
        take("x");
        printf("ok return-from-main\n");
        return 0;
    }
    return SCENARIO_RUN(scenarios, argc, argv);
}
