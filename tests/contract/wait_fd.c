/* SPDX-License-Identifier: MIT */
/*
 * swerve_claim_wait_fd() from an event loop of the test's own (epoll, with
 * a 10 ms timer ticking beside the claim's descriptor, as a coroutine's
 * loop has other work): a release in another process, the holder's death
 * before anybody reaps it, and a forced release each wake the loop; a
 * timeout and a cancel leave no descriptor open and nothing held.  Runs
 * once against the filesystem store (make check) and once against
 * PostgreSQL (tests/pg/pg.sh), as tests/contract/contract does.
 */
#include "config.h"

#include "swerve/claim.h"
#include "clock.h"
#include "namespace.h"
#include "testdir.h"
#include "wait_child.h"

#include "run_suite.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* The loop's other work: a timer every TICK_NS. */
#define TICK_NS (10 * 1000 * 1000L)

struct loop {
    int ep, timer;
    int ticks;
    double last_tick, longest_gap; /* seconds between two ticks seen */
};

static void loop_open(struct loop *l)
{
    struct itimerspec every = { { 0, TICK_NS }, { 0, TICK_NS } };
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };

    l->ep = epoll_create1(EPOLL_CLOEXEC);
    ck_assert_int_ge(l->ep, 0);
    l->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    ck_assert_int_ge(l->timer, 0);
    ck_assert_int_eq(timerfd_settime(l->timer, 0, &every, NULL), 0);
    ev.data.fd = l->timer;
    ck_assert_int_eq(epoll_ctl(l->ep, EPOLL_CTL_ADD, l->timer, &ev), 0);
    l->ticks = 0;
    l->last_tick = now_s();
    l->longest_gap = 0;
}

static void loop_close(struct loop *l)
{
    close(l->timer);
    close(l->ep);
}

/* Runs the loop until FD is readable (1) or DEADLINE passes (0); FD is
 * watched only meanwhile, as an event loop's reader is. */
static int loop_until_readable(struct loop *l, int fd, double deadline)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd }, got[2];
    int readable = 0;

    ck_assert_int_eq(epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev), 0);
    while (!readable && now_s() < deadline) {
        int n = epoll_wait(l->ep, got, 2, (int)((deadline - now_s()) * 1000) + 1);
        ck_assert_msg(n >= 0 || errno == EINTR, "epoll_wait: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            if (got[i].data.fd == fd) {
                readable = 1;
            } else {
                uint64_t expirations;
                double now = now_s();
                ck_assert_int_eq(read(l->timer, &expirations, sizeof expirations), (ssize_t)sizeof expirations);
                if (now - l->last_tick > l->longest_gap)
                    l->longest_gap = now - l->last_tick;
                l->last_tick = now;
                l->ticks++;
            }
        }
    }
    ck_assert_int_eq(epoll_ctl(l->ep, EPOLL_CTL_DEL, fd, NULL), 0);
    return readable;
}

/* The protocol of claim.h, in loop L: C, or NULL with errno ETIMEDOUT
 * once TIMEOUT seconds have passed (the wait is then given up). */
static struct swerve_claim *acquire_in_loop(struct loop *l, struct swerve_claim *c, double timeout, int *wakeups)
{
    double deadline = now_s() + timeout;

    *wakeups = 0;
    while (swerve_claim_acquire(c, 0.0) == NULL) {
        int fd;
        ck_assert_msg(errno == EWOULDBLOCK, "acquire: %s", strerror(errno));
        fd = swerve_claim_wait_fd(c);
        ck_assert_msg(fd >= 0, "swerve_claim_wait_fd: %s", strerror(errno));
        if (!loop_until_readable(l, fd, deadline)) {
            ck_assert_int_eq(swerve_claim_release(c), 0); /* gives the wait up */
            errno = ETIMEDOUT;
            return NULL;
        }
        (*wakeups)++;
    }
    return c;
}

/* Descriptors this process has open. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

enum ending { RELEASES, IS_KILLED, IS_FORCED };

/* A child that takes NAME, says so, and after HOLD_S seconds releases it
 * (then lives on a while: its end is not what wakes the waiter), is
 * killed (SIGKILL, by itself: nobody reaps it until the test does), or
 * holds it until an operator's release --force. */
static pid_t holder(const char *name, double hold_s, enum ending how)
{
    int ready[2];
    char byte;
    pid_t child;

    ck_assert_int_eq(pipe(ready), 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct swerve_claim *c = swerve_claim_new(name);
        if (swerve_claim_acquire(c, 0.0) != c || write(ready[1], "x", 1) != 1)
            _exit(1);
        usleep((useconds_t)(hold_s * 1e6));
        if (how == IS_KILLED)
            syscall(SYS_kill, getpid(), SIGKILL);
        if (how == RELEASES && swerve_claim_release(c) != 0)
            _exit(1);
        sleep(how == IS_FORCED ? 10 : 2);
        _exit(0);
    }
    ck_assert_int_eq(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    close(ready[1]);
    return child;
}

/* Without hooks, a local claim directory (or database session) is made
 * by the parent first, so that the children share it. */
static struct swerve_claim *handle_used_once(const char *name)
{
    struct swerve_claim *c = swerve_claim_new(name);

    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    ck_assert_int_eq(swerve_claim_release(c), 0);
    return c;
}

/* Runs swerve-claim release --force NAME after DELAY_S seconds, from a
 * child: the test's loop goes on meanwhile. */
static pid_t force_release_later(const char *name, double delay_s)
{
    const char *helpers = getenv("SCL_HELPERS");
    char tool[4096];
    pid_t child;

    ck_assert_msg(helpers != NULL, "SCL_HELPERS is unset: run through make check");
    snprintf(tool, sizeof tool, "%s/../swerve-claim", helpers);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int quiet = open("/dev/null", O_WRONLY);
        if (quiet < 0 || dup2(quiet, STDOUT_FILENO) < 0)
            _exit(126);
        usleep((useconds_t)(delay_s * 1e6));
        if (namespace_shared_store())
            execl(tool, tool, "release", "--force", name, (char *)NULL);
        else
            execl(tool, tool, "--base", getenv("SWERVE_TMPDIR"), "release", "--force", name, (char *)NULL);
        _exit(127);
    }
    return child;
}

/* Takes C in a loop of its own while what frees the name happens at
 * 0.3 s: within WITHIN_S seconds, with the loop ticking all along, woken
 * once or about (a wake-up another took, a holder that took the name
 * again), not at every tick. */
static void take_while_the_loop_runs(struct swerve_claim *c, double within_s)
{
    struct loop l;
    double t0 = now_s(), waited;
    int wakeups;

    loop_open(&l);
    ck_assert_ptr_eq(acquire_in_loop(&l, c, 10.0, &wakeups), c);
    waited = now_s() - t0;
    ck_assert_msg(waited >= 0.2 && waited < within_s, "took the name %.3f s after it came free at 0.3 s", waited);
    ck_assert_msg(l.ticks >= 15 && l.longest_gap < 0.1, "the loop ticked %d times in %.3f s, stalled %.3f s", l.ticks,
                  waited, l.longest_gap);
    ck_assert_msg(wakeups <= 3, "woke %d times for one release: it polls", wakeups);
    ck_assert_int_eq(swerve_claim_held(c), 1);
    loop_close(&l);
}

START_TEST(test_release_in_another_process_wakes_the_loop)
{
    struct swerve_claim *c = handle_used_once("report");
    pid_t child = holder("report", 0.3, RELEASES);

    take_while_the_loop_runs(c, 2.0);
    ck_assert_int_eq(wait_exit_code(child), 0);
    swerve_claim_free(c);
}
END_TEST

START_TEST(test_unreaped_death_wakes_the_loop)
{
    struct swerve_claim *c = handle_used_once("report");
    pid_t child = holder("report", 0.3, IS_KILLED);

    take_while_the_loop_runs(c, 2.0);
    /* Reaped only now: its death alone woke the loop. */
    ck_assert_int_eq(wait_exit_code(child), 128 + SIGKILL);
    swerve_claim_free(c);
}
END_TEST

START_TEST(test_forced_release_wakes_the_loop)
{
    struct swerve_claim *c = handle_used_once("report");
    pid_t child = holder("report", 0, IS_FORCED), tool = force_release_later("report", 0.3);

    take_while_the_loop_runs(c, 5.0);
    ck_assert_int_eq(wait_exit_code(tool), 0);
    kill(child, SIGKILL);
    (void)wait_exit_code(child);
    swerve_claim_free(c);
}
END_TEST

/* Two handles of one process, as two coroutines: one's release wakes the
 * other's descriptor. */
START_TEST(test_release_in_this_process_wakes_the_loop)
{
    struct swerve_claim *mine = swerve_claim_new("import"), *yours = swerve_claim_new("import");
    struct loop l;
    int fd;

    loop_open(&l);
    ck_assert_ptr_eq(swerve_claim_acquire(mine, 0.0), mine);
    ck_assert_ptr_null(swerve_claim_acquire(yours, 0.0));
    ck_assert_int_eq(errno, EWOULDBLOCK);
    fd = swerve_claim_wait_fd(yours);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(loop_until_readable(&l, fd, now_s() + 0.2), 0); /* held: quiet */
    ck_assert_int_eq(swerve_claim_release(mine), 0);
    ck_assert_int_eq(loop_until_readable(&l, fd, now_s() + 5.0), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(yours, 0.0), yours);
    errno = 0;
    ck_assert_int_eq(swerve_claim_wait_fd(yours), -1);
    ck_assert_int_eq(errno, EALREADY);
    loop_close(&l);
    swerve_claim_free(mine);
    swerve_claim_free(yours);
}
END_TEST

START_TEST(test_readable_at_once_when_free)
{
    struct swerve_claim *c = handle_used_once("free");
    struct loop l;
    int fd, before = open_fds();

    loop_open(&l);
    fd = swerve_claim_wait_fd(c);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(loop_until_readable(&l, fd, now_s() + 5.0), 1);
    ck_assert_ptr_eq(swerve_claim_acquire(c, 0.0), c);
    loop_close(&l);
    ck_assert_int_eq(open_fds(), before); /* the taking acquire closed it */
    swerve_claim_free(c);
}
END_TEST

/* The loop's deadline passes: giving up (release) closes every
 * descriptor, holds nothing, and the name is the holder's still, then
 * free once it lets go. */
START_TEST(test_timeout_leaves_nothing)
{
    struct swerve_claim *c = handle_used_once("report");
    struct loop l;
    pid_t child;
    int before, wakeups;

    loop_open(&l);
    before = open_fds();
    child = holder("report", 0.6, RELEASES);
    errno = 0;
    ck_assert_ptr_null(acquire_in_loop(&l, c, 0.2, &wakeups));
    ck_assert_int_eq(errno, ETIMEDOUT);
    ck_assert_int_eq(open_fds(), before);
    ck_assert_int_eq(swerve_claim_held(c), 0);
    ck_assert_int_eq(swerve_claim_available(c), 0);
    ck_assert_int_eq(wait_exit_code(child), 0);
    ck_assert_int_eq(swerve_claim_available(c), 1);
    loop_close(&l);
    swerve_claim_free(c);
}
END_TEST

/* A coroutine cancelled while it waits drops its handle: nothing stays
 * open, and nothing is held by it (its would-be name goes to another). */
START_TEST(test_cancel_leaves_nothing)
{
    struct swerve_claim *c = handle_used_once("report"), *other;
    pid_t child;
    int before = open_fds();

    child = holder("report", 0.3, RELEASES);
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    ck_assert_int_ge(swerve_claim_wait_fd(c), 0);
    ck_assert_int_gt(open_fds(), before);
    swerve_claim_free(c);
    ck_assert_int_eq(open_fds(), before);
    other = swerve_claim_new("report");
    ck_assert_ptr_eq(swerve_claim_acquire(other, 10.0), other);
    ck_assert_int_eq(wait_exit_code(child), 0);
    swerve_claim_free(other);
}
END_TEST

/* A forked child's handle makes a descriptor of its own; the parent's
 * still works. */
START_TEST(test_forked_child_waits_on_its_own)
{
    struct swerve_claim *c = handle_used_once("report");
    struct loop l;
    pid_t holding = holder("report", 0.4, RELEASES), child;
    int fd, wakeups;

    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    fd = swerve_claim_wait_fd(c);
    ck_assert_int_ge(fd, 0);
    child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int mine = swerve_claim_wait_fd(c);
        loop_open(&l);
        _exit(mine >= 0 && mine != fd && acquire_in_loop(&l, c, 10.0, &wakeups) == c ? 0 : 1);
    }
    ck_assert_int_eq(wait_exit_code(child), 0);
    loop_open(&l);
    ck_assert_int_eq(loop_until_readable(&l, fd, now_s() + 5.0), 1); /* the holder's release */
    /* Still the parent's own wait: the child's end (a database session
     * the server ends a moment later) may come after its try. */
    ck_assert_int_eq(swerve_claim_wait_fd(c), fd);
    ck_assert_ptr_eq(acquire_in_loop(&l, c, 10.0, &wakeups), c);
    ck_assert_int_eq(wait_exit_code(holding), 0);
    loop_close(&l);
    swerve_claim_free(c);
}
END_TEST

/* The numbers open in this process, as a bit set up to FDS_MAX. */
#define FDS_MAX 1024
static void open_set(unsigned char set[FDS_MAX])
{
    memset(set, 0, FDS_MAX);
    for (int fd = 0; fd < FDS_MAX; fd++)
        set[fd] = fcntl(fd, F_GETFD) != -1;
}

/* A host that closes every descriptor it did not open (a daemon's
 * closefrom()) and opens its own at those numbers: the library neither
 * reads what the host's descriptors carry nor closes them. */
/* Puts a pipe of the host's at the numbers the handle's wait opened (all
 * of them, or ONLY_LAST, the highest: a closefrom() above the rest),
 * then tries and frees the handle: the host's pipe keeps its bytes, and
 * each of those numbers is still the host's. */
static void host_takes_the_numbers(int only_last)
{
    struct swerve_claim *c = handle_used_once("report");
    pid_t child = holder("report", 0, IS_FORCED);
    unsigned char before[FDS_MAX], after[FDS_MAX];
    int host[2], taken = 0, waiting;
    struct stat pipe_st, st;

    ck_assert_int_eq(pipe(host), 0);
    ck_assert_int_eq(write(host[1], "host", 4), 4);
    ck_assert_int_eq(fstat(host[0], &pipe_st), 0);
    open_set(before);
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    ck_assert_int_ge(swerve_claim_wait_fd(c), 0);
    open_set(after);
    for (int fd = FDS_MAX - 1; fd >= 0 && !(only_last && taken > 0); fd--)
        if (after[fd] && !before[fd]) {
            ck_assert_int_eq(dup2(host[0], fd), fd);
            after[fd] = 2; /* the host's now */
            taken++;
        }
    ck_assert_int_ge(taken, 1);
    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0)); /* a try takes a waiter's wake-ups */
    ck_assert_int_eq(errno, EWOULDBLOCK);
    swerve_claim_free(c); /* ends the wait: closes what is the library's */
    ck_assert_int_eq(ioctl(host[0], FIONREAD, &waiting), 0);
    ck_assert_msg(waiting == 4, "the host's pipe holds %d bytes of its 4", waiting);
    for (int fd = 0; fd < FDS_MAX; fd++)
        if (after[fd] == 2) {
            ck_assert_msg(fstat(fd, &st) == 0, "descriptor %d, the host's, was closed", fd);
            ck_assert_int_eq(st.st_ino, pipe_st.st_ino);
            close(fd);
        }
    kill(child, SIGKILL);
    (void)wait_exit_code(child);
}

START_TEST(test_the_host_reusing_the_numbers_is_left_alone)
{
    host_takes_the_numbers(0);
}
END_TEST

/* The highest is the holder's pidfd, which fstat cannot tell from another
 * process's before Linux 6.9. */
START_TEST(test_the_host_reusing_the_last_number_is_left_alone)
{
    host_takes_the_numbers(1);
}
END_TEST

/* Two loop waiters, in two processes: the one that takes the name passes
 * a wake-up on, though it took the release's byte from the other, so the
 * other watches the new holder, whose death (unreaped) then wakes it. */
START_TEST(test_a_taker_passes_the_wake_up_on)
{
    struct swerve_claim *c = handle_used_once("report");
    pid_t first = holder("report", 0.3, RELEASES), taker;
    int took[2], fd, wakeups;
    char byte;
    struct loop l;

    ck_assert_ptr_null(swerve_claim_acquire(c, 0.0));
    fd = swerve_claim_wait_fd(c); /* armed on the first holder, then left alone */
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pipe(took), 0);
    taker = fork();
    ck_assert_int_ge(taker, 0);
    if (taker == 0) {
        struct swerve_claim *mine = swerve_claim_new("report");
        loop_open(&l);
        if (acquire_in_loop(&l, mine, 10.0, &wakeups) != mine || write(took[1], "x", 1) != 1)
            _exit(1);
        syscall(SYS_kill, getpid(), SIGKILL); /* holding it; nobody reaps it yet */
    }
    ck_assert_int_eq(read(took[0], &byte, 1), 1);
    loop_open(&l);
    /* Readable: the taker passed one on (else nothing wakes this waiter). */
    ck_assert_msg(loop_until_readable(&l, fd, now_s() + 1.0), "the taker kept the release's wake-up");
    ck_assert_ptr_eq(acquire_in_loop(&l, c, 5.0, &wakeups), c);
    ck_assert_int_eq(wait_exit_code(taker), 128 + SIGKILL);
    ck_assert_int_eq(wait_exit_code(first), 0);
    loop_close(&l);
    swerve_claim_free(c);
}
END_TEST

/* The waiters' FIFOs in the claims directory (the filesystem store). */
static int fifos(void)
{
    char *dir = testdir_claim_dir(testdir_base), claims[4096];
    int n;

    ck_assert_ptr_nonnull(dir);
    snprintf(claims, sizeof claims, "%s/claims", dir);
    free(dir);
    n = testdir_count_prefix(claims, ".wait.");
    ck_assert_int_ge(n, 0);
    return n;
}

/* A name's FIFO is made by its first waiter and goes with its last, so a
 * server that waits for ever new names does not fill its directory. */
START_TEST(test_the_last_waiter_removes_the_fifo)
{
    struct swerve_claim *holder_handle = handle_used_once("report"), *a = swerve_claim_new("report"),
                        *b = swerve_claim_new("report");

    ck_assert_ptr_eq(swerve_claim_acquire(holder_handle, 0.0), holder_handle);
    ck_assert_ptr_null(swerve_claim_acquire(a, 0.0));
    ck_assert_int_ge(swerve_claim_wait_fd(a), 0);
    ck_assert_ptr_null(swerve_claim_acquire(b, 0.0));
    ck_assert_int_ge(swerve_claim_wait_fd(b), 0);
    ck_assert_int_eq(fifos(), 1);
    swerve_claim_free(a); /* b still waits: the FIFO stays */
    ck_assert_int_eq(fifos(), 1);
    ck_assert_int_eq(swerve_claim_release(b), 0); /* b gives up: the last */
    ck_assert_int_eq(fifos(), 0);
    ck_assert_ptr_null(swerve_claim_acquire(b, 0.0)); /* and waits anew: made again */
    ck_assert_int_ge(swerve_claim_wait_fd(b), 0);
    ck_assert_int_eq(fifos(), 1);
    ck_assert_int_eq(swerve_claim_release(holder_handle), 0);
    ck_assert_ptr_eq(swerve_claim_acquire(b, 0.0), b); /* the taking acquire ends the wait */
    ck_assert_int_eq(fifos(), 0);
    swerve_claim_free(b);
    swerve_claim_free(holder_handle);
}
END_TEST

int main(void)
{
    Suite *s = suite_create(namespace_shared_store() ? "wait_fd (PostgreSQL store)" : "wait_fd (filesystem store)");
    TCase *loop = tcase_create("event loop");

    tcase_add_checked_fixture(loop, namespace_setup, namespace_teardown);
    tcase_set_timeout(loop, 30);
    tcase_add_test(loop, test_release_in_another_process_wakes_the_loop);
    tcase_add_test(loop, test_unreaped_death_wakes_the_loop);
    tcase_add_test(loop, test_forced_release_wakes_the_loop);
    tcase_add_test(loop, test_release_in_this_process_wakes_the_loop);
    tcase_add_test(loop, test_readable_at_once_when_free);
    tcase_add_test(loop, test_timeout_leaves_nothing);
    tcase_add_test(loop, test_cancel_leaves_nothing);
    tcase_add_test(loop, test_forked_child_waits_on_its_own);
    tcase_add_test(loop, test_the_host_reusing_the_numbers_is_left_alone);
    tcase_add_test(loop, test_the_host_reusing_the_last_number_is_left_alone);
    tcase_add_test(loop, test_a_taker_passes_the_wake_up_on);
    if (!namespace_shared_store()) /* no FIFO there: a connection per waiter */
        tcase_add_test(loop, test_the_last_waiter_removes_the_fifo);
    suite_add_tcase(s, loop);
    return run_suite(s);
}
