/* SPDX-License-Identifier: MIT */
/*
 * Draining scenarios (swerve_claim_draining(3)), run under LD_PRELOAD by
 * tests/integration: a master and its workers, each worker a loop that
 * answers what it is asked through a pair of pipes (above all, what
 * draining() says now).  Each scenario prints "ok SCENARIO" and exits 0,
 * says what failed on stderr and exits 1, or, when this machine cannot
 * play it, prints "SKIP: why" and exits 77.  Every wait is bounded.
 *
 * usage: helper_draining SCENARIO [HOW]
 *   drain-signal HOW      the master sends SIGTERM by HOW (kill, kill-group,
 *                         killpg, kill-own-group, sigqueue, tgkill): the
 *                         worker reached drains, its sibling does not
 *   drain-not-told HOW    the master does nothing, probes (kill(pid, 0)),
 *                         or sends SIGUSR1: nobody drains
 *   drain-signal-set      run with SWERVE_CLAIM_DRAIN_SIGNALS=usr1: SIGTERM
 *                         is no drain signal, SIGUSR1 is
 *   drain-grandchild      a worker that forked still sees its master's
 *                         mark; its own child does not, until it is told
 *   drain-reused-pid HOW  a drained worker is reaped (HOW: waitpid, or by
 *                         the kernel: SIGCHLD ignored), and a new worker
 *                         that gets its pid does not drain
 *   drain-orphan HOW      a worker (HOW: fork, or exec: one exec'd after its
 *                         fork) whose master ends drains
 *   drain-noted           a worker that holds a claim is told by a drain
 *                         signal: its page of times says so (for
 *                         swerve-claim list) before it asks, and what it
 *                         found once it has
 *   drain-listeners HOW   a worker closes the master's two listeners by HOW
 *                         (close, close_range, closefrom, dup2, dup3,
 *                         shutdown; dup2-copy, dup-copy, fcntl-copy,
 *                         raw-copy: a copy it made of one is the last;
 *                         own-listener: one of its own stays;
 *                         close-after-vfork: a vfork child of the worker
 *                         closed every descriptor first; listen-in-worker:
 *                         the master only bound them, and each worker
 *                         listens on them itself, as hypercorn's do;
 *                         worker-binds: the worker binds 200 sockets of
 *                         its own first): it drains once
 *                         the last is closed, its sibling and the master
 *                         (which closes its own) do not; high-copy: its
 *                         copy is at a number no bit is kept for, and
 *                         high-listener: the master listened on the second
 *                         at such a number, so it never drains by its
 *                         listeners (SKIP when the descriptor limit cannot
 *                         be raised past that number)
 *   drain-listeners HOW without-proc
 *                         the same where /proc shows nothing (a tmpfs over
 *                         it, in a mount namespace of its own: root; else
 *                         SKIP), as in a chroot
 *   drain-close-all LOWFD a worker closes everything by closefrom(LOWFD):
 *                         it drains (glibc closes from 0 for a LOWFD below)
 *   drain-unseen-close    a worker closes the listener it inherited at the
 *                         lowest number by a raw system call, then claims:
 *                         the claim is had within 10 s (the library's own
 *                         descriptor lands at that number)
 */
#define _GNU_SOURCE 1
#include <swerve/claim-loader.h>

#include "drain.h"
#include "require.h"
#include "scenarios.h"
#include "testdir.h"
#include "times.h"

#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static struct swerve_claim_api api;

/* drain-listeners: the master's two listeners, a socket of its that is no
 * listener, /dev/null, and how its workers close the listeners. */
static int listeners[2] = { -1, -1 }, not_listening = -1, devnull = -1;
static const char *closing;
/* Where dup2-copy puts its copy of the first listener, where high-copy
 * puts it and high-listener the second (past listeners.h's
 * SCL_LISTENER_FDS); the copy. */
#define COPY_FD      900
#define HIGH_COPY_FD 1100
static int copy = -1;

/* The master's end and the worker's end of a worker's two pipes; EXECS:
 * the worker execs this program again (drain-orphan-image) to run. */
struct link {
    int ask[2], answer[2];
    pid_t pid;
    int execs;
};

static void link_open(struct link *l)
{
    memset(l, 0, sizeof *l);
    REQUIRE(pipe(l->ask) == 0 && pipe(l->answer) == 0);
}

/* Reads one byte from FD into *C within SECONDS, through EINTR: 0, or -1
 * when none came. */
static int read_byte_within(int fd, double seconds, char *c)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };

    for (double deadline = now_s() + seconds; now_s() < deadline;) {
        ssize_t n;
        if (poll(&p, 1, 100) <= 0)
            continue;
        n = read(fd, c, 1);
        if (n == 1)
            return 0;
        REQUIRE(n < 0 && errno == EINTR);
    }
    return -1;
}

/* Reads one byte from FD within 10 s: the byte. */
static char read_byte(int fd)
{
    char c;

    REQUIRE(read_byte_within(fd, 10, &c) == 0);
    return c;
}

static void write_byte(int fd, char c)
{
    while (write(fd, &c, 1) != 1)
        REQUIRE(errno == EINTR);
}

static void noted(int sig)
{
    (void)sig;
}

/* A worker survives the signals it is sent: the test asks it afterwards. */
static void survive_signals(void)
{
    static const int sigs[] = { SIGTERM, SIGUSR1, SIGHUP, SIGQUIT, SIGINT };
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = noted;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        REQUIRE(sigaction(sigs[i], &sa, NULL) == 0);
}

__attribute__((noreturn)) static void run_worker(struct link *self, struct link *child);

/* As CPython's subprocess does (close_fds, on glibc 2.34 and later): a
 * vfork child, which shares this process's memory, closes every
 * descriptor but stdio through close_range() before it would exec. */
static void close_all_in_vfork_child(void)
{
    int status;
    pid_t pid = vfork();

    if (pid == 0) {
        (void)close_range(3, ~0U, 0);
        _exit(0);
    }
    REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Forks a worker on link L (in a process group of its own when
 * OWN_GROUP), whose command 'f' forks one on CHILD. */
static void start_worker(struct link *l, int own_group, struct link *child)
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        char fds[4][16];
        if (own_group)
            REQUIRE(setpgid(0, 0) == 0);
        if (l->execs) {
            snprintf(fds[0], sizeof fds[0], "%d", l->ask[0]);
            snprintf(fds[1], sizeof fds[1], "%d", l->answer[1]);
            execl("/proc/self/exe", "helper_draining", SCN_DRAIN_ORPHAN_IMAGE, fds[0], fds[1], (char *)NULL);
            _exit(127);
        }
        run_worker(l, child);
    }
    if (own_group)
        (void)setpgid(pid, pid); /* whichever of the two comes first */
    l->pid = pid;
    REQUIRE(read_byte(l->answer[0]) == 'r'); /* ready: its handlers are in place */
}

/* A socket listening on 127.0.0.1, or (LISTENS 0) one that does not;
 * AT, when not -1, the number it is at when it listens. */
static int tcp_socket_at(int listens, int at)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    REQUIRE(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0);
    if (at != -1) {
        REQUIRE(dup3(fd, at, O_CLOEXEC) == at && close(fd) == 0);
        fd = at;
    }
    REQUIRE(!listens || listen(fd, 8) == 0);
    return fd;
}

static int tcp_socket(int listens)
{
    return tcp_socket_at(listens, -1);
}

/* Hides /proc from this process and its children, as a chroot does: 0, or
 * -1 when it cannot (said). */
static int hide_proc(void)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("none", "/proc", "tmpfs", 0, NULL) != 0) {
        printf("SKIP: /proc cannot be hidden (a mount namespace of its own is root's): %s\n", strerror(errno));
        return -1;
    }
    REQUIRE(access("/proc/self/fd", F_OK) != 0);
    return 0;
}

/* Raises this process's descriptor limit past HIGH_COPY_FD: 0, or -1 when
 * it cannot (said). */
static int allow_high_numbers(void)
{
    struct rlimit nofile;

    REQUIRE(getrlimit(RLIMIT_NOFILE, &nofile) == 0);
    if (nofile.rlim_max <= HIGH_COPY_FD)
        nofile.rlim_max = HIGH_COPY_FD + 1; /* root may */
    nofile.rlim_cur = nofile.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
        printf("SKIP: the descriptor limit cannot be raised past %d: %s\n", HIGH_COPY_FD, strerror(errno));
        return -1;
    }
    return 0;
}

/* A worker's 'a' (FIRST) or 'b': closes the first listener, or the
 * second, as `closing` says. */
static void close_listener(int first)
{
    int fd = listeners[first ? 0 : 1];

    if (strcmp(closing, "close") == 0 || (strcmp(closing, "closefrom") == 0 && first) ||
        strcmp(closing, "own-listener") == 0 || strcmp(closing, "close-after-vfork") == 0 ||
        strcmp(closing, "high-listener") == 0 || strcmp(closing, "listen-in-worker") == 0 ||
        strcmp(closing, "worker-binds") == 0) {
        REQUIRE(close(fd) == 0);
    } else if (strcmp(closing, "close_range") == 0) {
        REQUIRE(close_range((unsigned)fd, (unsigned)fd, 0) == 0);
    } else if (strcmp(closing, "closefrom") == 0) {
        closefrom(fd); /* the second is the highest number open */
    } else if (strcmp(closing, "dup2") == 0) {
        REQUIRE(dup2(devnull, fd) == fd);
    } else if (strcmp(closing, "dup3") == 0) {
        REQUIRE(dup3(devnull, fd, O_CLOEXEC) == fd);
    } else if (strcmp(closing, "shutdown") == 0) {
        REQUIRE(shutdown(fd, SHUT_RDWR) == 0);
    } else if (strstr(closing, "-copy") != NULL && first) {
        /* Both closed, but a copy of the first stays open. */
        if (strcmp(closing, "dup2-copy") == 0)
            copy = dup2(listeners[0], COPY_FD);
        else if (strcmp(closing, "dup-copy") == 0)
            copy = dup(listeners[0]);
        else if (strcmp(closing, "fcntl-copy") == 0)
            copy = fcntl(listeners[0], F_DUPFD_CLOEXEC, 100);
        else if (strcmp(closing, "raw-copy") == 0) /* no hook sees it */
            copy = (int)syscall(SYS_dup, listeners[0]);
        else if (strcmp(closing, "high-copy") == 0)
            copy = fcntl(listeners[0], F_DUPFD_CLOEXEC, HIGH_COPY_FD);
        REQUIRE(copy >= 0);
        REQUIRE(close(listeners[0]) == 0 && close(listeners[1]) == 0);
    } else if (strstr(closing, "-copy") != NULL) {
        REQUIRE(close(copy) == 0);
    } else {
        REQUIRE(!"a known way to close a listener");
    }
}

/* What a worker answers: 'd' what draining() says ('0', '1', 'e' for -1),
 * 'f' it forks a worker on CHILD ('f' once that one is ready), 't' it
 * sends that child SIGTERM ('t'), 'a' and 'b' it closes the first and the
 * second listener (then as 'd'), 'n' it closes the socket that is none,
 * 'l' it listens on one of its own, 'L' on the two its master bound, 'B'
 * it binds 200 sockets of its own (as a client that binds its source
 * address would) and closes them, 'c' it
 * takes a claim, 'u' it closes
 * the first listener by a raw system call, 'v' a vfork child of it closes
 * every descriptor, then ends, 'q' it ends (once that
 * child has), 'k' it ends at once, leaving its child an orphan. */
static void run_worker(struct link *self, struct link *child)
{
    survive_signals();
    write_byte(self->answer[1], 'r');
    for (;;) {
        char c = read_byte(self->ask[0]), out = c;
        if (c == 'q' && child != NULL && child->pid > 0)
            REQUIRE(waitpid(child->pid, NULL, 0) == child->pid);
        if (c == 'q' || c == 'k')
            _exit(0);
        if (c == 'd') {
            int d = api.draining();
            out = d == 1 ? '1' : d == 0 ? '0' : 'e';
        } else if (c == 'f') {
            start_worker(child, 0, NULL);
        } else if (c == 't') {
            REQUIRE(kill(child->pid, SIGTERM) == 0);
        } else if (c == 'c') {
            char name[32];
            struct swerve_claim *claim;
            snprintf(name, sizeof name, "held-by-%d", (int)getpid());
            REQUIRE((claim = api.new_claim(name)) != NULL && api.acquire(claim, 0.0) == claim);
        } else if (c == 'n') {
            REQUIRE(close(not_listening) == 0);
        } else if (c == 'l') {
            (void)tcp_socket(1); /* kept open, listening, to the end */
        } else if (c == 'L') {
            REQUIRE(listen(listeners[0], 8) == 0 && listen(listeners[1], 8) == 0);
        } else if (c == 'B') {
            for (int i = 0; i < 200; i++) /* more than listeners.h keeps inodes of */
                REQUIRE(close(tcp_socket(0)) == 0);
        } else if (c == 'u') {
            REQUIRE(syscall(SYS_close, listeners[0]) == 0);
        } else if (c == 'v') {
            close_all_in_vfork_child();
        } else if (c == 'a' || c == 'b') {
            int d;
            close_listener(c == 'a');
            d = api.draining();
            out = d == 1 ? '1' : d == 0 ? '0' : 'e';
        }
        write_byte(self->answer[1], out);
    }
}

/* Asks the worker on L to do C: its answer. */
static char ask(struct link *l, char c)
{
    write_byte(l->ask[1], c);
    return read_byte(l->answer[0]);
}

static int draining(struct link *l)
{
    char c = ask(l, 'd');

    REQUIRE(c == '0' || c == '1');
    return c == '1';
}

/* Ends the worker on L, and reaps it unless the kernel does (REAPED_BY_KERNEL: waits until its pid is gone). */
static void stop_worker(struct link *l, int reaped_by_kernel)
{
    int status;

    write_byte(l->ask[1], 'q');
    if (!reaped_by_kernel) {
        REQUIRE(waitpid(l->pid, &status, 0) == l->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return;
    }
    for (int i = 0; i < 1000 && kill(l->pid, 0) == 0; i++)
        usleep(1000);
    REQUIRE(kill(l->pid, 0) != 0 && errno == ESRCH);
}

/* Sends SIGTERM to the worker on L by HOW. */
static void send_term(const char *how, const struct link *l)
{
    union sigval value = { .sival_int = 7 };

    if (strcmp(how, "kill") == 0)
        REQUIRE(kill(l->pid, SIGTERM) == 0);
    else if (strcmp(how, "kill-group") == 0)
        REQUIRE(kill(-l->pid, SIGTERM) == 0);
    else if (strcmp(how, "killpg") == 0)
        REQUIRE(killpg(l->pid, SIGTERM) == 0);
    else if (strcmp(how, "kill-own-group") == 0)
        REQUIRE(kill(0, SIGTERM) == 0);
    else if (strcmp(how, "sigqueue") == 0)
        REQUIRE(sigqueue(l->pid, SIGTERM, value) == 0);
    else if (strcmp(how, "tgkill") == 0)
        REQUIRE(tgkill(l->pid, l->pid, SIGTERM) == 0);
    else
        REQUIRE(!"a known way to send a signal");
}

/* The worker SIGTERM reaches by HOW (argv[0]) drains, from then on; its
 * sibling, which it does not reach (another process, or outside the
 * group), does not.  The master itself is no worker. */
static int drain_signal(char **argv)
{
    const char *how = argv[0];
    int groups = how != NULL && (strcmp(how, "kill-group") == 0 || strcmp(how, "killpg") == 0);
    struct link reached, other;

    REQUIRE(how != NULL);
    survive_signals(); /* kill(0) reaches the master too */
    link_open(&reached);
    link_open(&other);
    /* kill(-PGRP) and killpg: the worker reached leads a group of its
     * own; kill(0): the other one does. */
    start_worker(&reached, groups, NULL);
    start_worker(&other, strcmp(how, "kill-own-group") == 0, NULL);
    REQUIRE(!draining(&reached) && !draining(&other));
    send_term(how, &reached);
    REQUIRE(draining(&reached));
    REQUIRE(!draining(&other));
    REQUIRE(draining(&reached)); /* and it stays so */
    REQUIRE(api.draining() == 0);
    stop_worker(&reached, 0);
    stop_worker(&other, 0);
    return 0;
}

/* A master that does nothing, probes its worker with signal 0, or sends
 * it a signal outside the set (HOW: nothing, probe, usr1): 0. */
static int drain_not_told(char **argv)
{
    const char *how = argv[0];
    struct link w;

    REQUIRE(how != NULL);
    link_open(&w);
    start_worker(&w, 0, NULL);
    if (strcmp(how, "probe") == 0)
        REQUIRE(kill(w.pid, 0) == 0);
    else if (strcmp(how, "usr1") == 0)
        REQUIRE(kill(w.pid, SIGUSR1) == 0);
    else
        REQUIRE(strcmp(how, "nothing") == 0);
    usleep(10000);
    REQUIRE(!draining(&w));
    stop_worker(&w, 0);
    return 0;
}

/* Run with SWERVE_CLAIM_DRAIN_SIGNALS=usr1: SIGTERM no longer drains,
 * SIGUSR1 does. */
static int drain_signal_set(char **argv)
{
    struct link w;

    (void)argv;
    link_open(&w);
    start_worker(&w, 0, NULL);
    REQUIRE(kill(w.pid, SIGTERM) == 0);
    REQUIRE(!draining(&w));
    REQUIRE(kill(w.pid, SIGUSR1) == 0);
    REQUIRE(draining(&w));
    stop_worker(&w, 0);
    return 0;
}

/* A worker that has forked a child of its own (and mapped the page its
 * child is marked in) still sees the mark its master sets; the child,
 * which its master never told, does not drain until its own parent tells
 * it. */
static int drain_grandchild(char **argv)
{
    struct link worker, child;

    (void)argv;
    link_open(&worker);
    link_open(&child);
    start_worker(&worker, 0, &child);
    REQUIRE(ask(&worker, 'f') == 'f');
    REQUIRE(kill(worker.pid, SIGTERM) == 0);
    REQUIRE(draining(&worker));
    REQUIRE(!draining(&child));
    REQUIRE(ask(&worker, 't') == 't');
    REQUIRE(draining(&child));
    write_byte(child.ask[1], 'q'); /* its parent reaps it as it ends */
    stop_worker(&worker, 0);
    return 0;
}

/* The largest pid: the most forks it may take for one to come back. */
static long pid_max(void)
{
    FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
    long n = -1;

    if (f != NULL) {
        if (fscanf(f, "%ld", &n) != 1)
            n = -1;
        fclose(f);
    }
    return n;
}

/* Forks a worker on L whose pid is WANT, by fork() or, UNSEEN, by _Fork()
 * (no fork handler, no hook): with root's ns_last_pid, at once (but for
 * another process's fork in between); else by forking children that end
 * at once until the pids come round (at most pid_max of them).  0, or -1
 * when this machine cannot (said). */
static int start_worker_at(struct link *l, pid_t want, int reaped_by_kernel, int unseen)
{
    int last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    long tries = last >= 0 ? 1000 : pid_max() + 1000;
    char text[24];

    if (last < 0 && (tries > 200000 || tries < 0)) {
        printf("SKIP: no ns_last_pid to write (not root) and pid_max %ld is too many forks\n", tries - 1000);
        return -1;
    }
    for (long i = 0; i < tries; i++) {
        pid_t pid;
        if (last >= 0)
            REQUIRE(pwrite(last, text, (size_t)snprintf(text, sizeof text, "%d", (int)want - 1), 0) > 0);
        pid = unseen ? _Fork() : fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            if (getpid() != want)
                _exit(0);
            run_worker(l, NULL);
        }
        if (pid == want) {
            l->pid = pid;
            REQUIRE(read_byte(l->answer[0]) == 'r');
            if (last >= 0)
                close(last);
            return 0;
        }
        if (!reaped_by_kernel)
            REQUIRE(waitpid(pid, NULL, 0) == pid);
    }
    REQUIRE(!"the pid came round");
}

/* A worker told to drain ends and is reaped, and a new worker that gets
 * its pid does not drain.  HOW: waitpid, the new worker forked by _Fork()
 * (no hook sees that birth: the reap cleared the mark); sigchld-ignored,
 * the kernel reaps (no hook sees that: the birth, by fork(), clears it). */
static int drain_reused_pid(char **argv)
{
    const char *how = argv[0];
    int by_kernel;
    struct link first, second;

    REQUIRE(how != NULL && (strcmp(how, "waitpid") == 0 || strcmp(how, "sigchld-ignored") == 0));
    by_kernel = strcmp(how, "sigchld-ignored") == 0;
    if (by_kernel)
        REQUIRE(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
    link_open(&first);
    link_open(&second);
    start_worker(&first, 0, NULL);
    REQUIRE(kill(first.pid, SIGTERM) == 0);
    REQUIRE(draining(&first));
    stop_worker(&first, by_kernel);
    if (start_worker_at(&second, first.pid, by_kernel, !by_kernel) != 0)
        return 77;
    REQUIRE(!draining(&second));
    stop_worker(&second, by_kernel);
    return 0;
}

/* The drain record of process PID's page of times (times.h), as a tool
 * reads it. */
static struct scl_times_drain drain_record(pid_t pid)
{
    char *dir = testdir_claim_dir(getenv("SWERVE_TMPDIR")), path[4200];
    struct scl_times_page page;
    int fd;

    REQUIRE(dir != NULL);
    snprintf(path, sizeof path, "%s/.times.%d", dir, (int)pid);
    free(dir);
    REQUIRE((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
    REQUIRE(read(fd, &page, sizeof page) == (ssize_t)sizeof page && page.magic == SCL_TIMES_MAGIC);
    close(fd);
    return page.drain;
}

/* A worker that holds a claim, told by its master's SIGTERM: its page of
 * times says so at once (the master wrote it), with nothing of its own;
 * once it has asked, what it found too.  One told nothing has no record. */
static int drain_noted(char **argv)
{
    struct link told, untold;
    struct scl_times_drain d;

    (void)argv;
    link_open(&told);
    link_open(&untold);
    start_worker(&told, 0, NULL);
    start_worker(&untold, 0, NULL);
    REQUIRE(ask(&told, 'c') == 'c' && ask(&untold, 'c') == 'c');
    REQUIRE(kill(told.pid, SIGTERM) == 0);
    d = drain_record(told.pid);
    REQUIRE(d.magic == SCL_DRAIN_MAGIC && d.by_master == 1 && d.by_operator == 0 && d.by_self == 0);
    REQUIRE(draining(&told));
    d = drain_record(told.pid);
    REQUIRE(d.by_self == SCL_DRAIN_SIGNALLED);
    REQUIRE(!draining(&untold));
    d = drain_record(untold.pid);
    REQUIRE(d.magic != SCL_DRAIN_MAGIC);
    stop_worker(&told, 0);
    stop_worker(&untold, 0);
    return 0;
}

/* A worker closes the two listeners it inherited by HOW (argv[0]), and a
 * socket that is none: it drains once the last listener is gone, not
 * before; its sibling, which closes none, does not; nor does the master
 * that closes its own. */
static int drain_listeners(char **argv)
{
    struct link closer, sibling;
    char last;          /* what the worker says once it closed the last */
    int worker_listens; /* the master binds them, each worker listens (hypercorn) */

    closing = argv[0];
    REQUIRE(closing != NULL);
    worker_listens = strcmp(closing, "listen-in-worker") == 0;
    last = strcmp(closing, "high-copy") == 0 || strcmp(closing, "high-listener") == 0 ? '0' : '1';
    if (last == '0' && allow_high_numbers() != 0)
        return 77;
    if (argv[1] != NULL) {
        REQUIRE(strcmp(argv[1], "without-proc") == 0);
        if (hide_proc() != 0)
            return 77;
    }
    link_open(&closer);
    link_open(&sibling);
    REQUIRE((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0);
    not_listening = tcp_socket(0);
    listeners[0] = tcp_socket(!worker_listens);
    listeners[1] = tcp_socket_at(!worker_listens, strcmp(closing, "high-listener") == 0 ? HIGH_COPY_FD : -1);
    start_worker(&closer, 0, NULL);
    start_worker(&sibling, 0, NULL);
    if (worker_listens)
        REQUIRE(ask(&closer, 'L') == 'L' && ask(&sibling, 'L') == 'L');
    if (strcmp(closing, "worker-binds") == 0)
        REQUIRE(ask(&closer, 'B') == 'B');
    if (strcmp(closing, "own-listener") == 0)
        REQUIRE(ask(&closer, 'l') == 'l');
    if (strcmp(closing, "close-after-vfork") == 0)
        REQUIRE(ask(&closer, 'v') == 'v');
    REQUIRE(ask(&closer, 'n') == 'n');
    REQUIRE(!draining(&closer));
    REQUIRE(ask(&closer, 'a') == '0');
    REQUIRE(ask(&closer, 'b') == last);
    REQUIRE(draining(&closer) == (last == '1'));
    REQUIRE(!draining(&sibling));
    REQUIRE(close(listeners[0]) == 0 && close(listeners[1]) == 0);
    REQUIRE(api.draining() == 0);
    stop_worker(&closer, 0);
    stop_worker(&sibling, 0);
    return 0;
}

/* A worker that closes every descriptor by closefrom(LOWFD) (argv[0]),
 * its listeners among them, drains; it says so by its exit status, having
 * no pipe left. */
static int drain_close_all(char **argv)
{
    int lowfd, status;
    pid_t pid;

    REQUIRE(argv[0] != NULL);
    lowfd = atoi(argv[0]);
    listeners[0] = tcp_socket(1);
    REQUIRE((pid = fork()) >= 0);
    if (pid == 0) {
        closefrom(lowfd);
        _exit(api.draining() == 1 ? 0 : 3);
    }
    REQUIRE(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) {
        fprintf(stderr, "closefrom(%d) closed the worker's listener, and draining() did not say 1\n", lowfd);
        return 1;
    }
    REQUIRE(api.draining() == 0);
    return 0;
}

/* The worker closes the listener it inherited at the lowest number by a
 * raw system call, which no hook sees, then takes a claim: the library's
 * own descriptors land at that number, and are closed through the hook.
 * The claim is had within 10 s (on failure the worker is killed: a worker
 * stuck in the library has all signals blocked).  Whether it then drains
 * is not asked: it did close every listener it inherited, and the library
 * may learn so when its own descriptor at that number is closed. */
static int drain_unseen_close(char **argv)
{
    struct link w;
    char answer;

    (void)argv;
    listeners[0] = tcp_socket(1); /* before the pipes: the lowest number */
    link_open(&w);
    start_worker(&w, 0, NULL);
    REQUIRE(ask(&w, 'u') == 'u');
    write_byte(w.ask[1], 'c');
    if (read_byte_within(w.answer[0], 10, &answer) != 0) {
        fprintf(stderr, "the worker did not take a claim within 10 s after a listener was closed unseen\n");
        (void)kill(w.pid, SIGKILL);
        (void)waitpid(w.pid, NULL, 0);
        return 1;
    }
    REQUIRE(answer == 'c');
    stop_worker(&w, 0);
    return 0;
}

/* A worker (forked, or HOW exec: exec'd after its fork) whose master
 * ends drains; before, it did not.  This process, their subreaper, is its
 * parent then. */
static int drain_orphan(char **argv)
{
    const char *how = argv[0];
    struct link master, worker;
    int status;

    REQUIRE(how != NULL && (strcmp(how, "fork") == 0 || strcmp(how, "exec") == 0));
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    link_open(&master);
    link_open(&worker);
    worker.execs = strcmp(how, "exec") == 0;
    start_worker(&master, 0, &worker);
    REQUIRE(ask(&master, 'f') == 'f');
    REQUIRE(!draining(&worker));
    write_byte(master.ask[1], 'k');
    REQUIRE(waitpid(master.pid, NULL, 0) == master.pid);
    REQUIRE(draining(&worker));
    REQUIRE(api.draining() == 0); /* its own parent lives */
    write_byte(worker.ask[1], 'q');
    REQUIRE(wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0); /* its pid was its master's to know */
    return 0;
}

/* drain-orphan's exec'd worker: its pipes' two ends are ARGV. */
static int drain_orphan_image(char **argv)
{
    struct link self = { .ask = { -1, -1 }, .answer = { -1, -1 } };

    REQUIRE(argv[0] != NULL && argv[1] != NULL);
    self.ask[0] = atoi(argv[0]);
    self.answer[1] = atoi(argv[1]);
    run_worker(&self, NULL);
}

int main(int argc, char **argv)
{
    static const struct scenario scenarios[] = {
        { SCN_DRAIN_SIGNAL, drain_signal },         /* kill|kill-group|killpg|kill-own-group|sigqueue|tgkill */
        { SCN_DRAIN_NOT_TOLD, drain_not_told },     /* nothing|probe|usr1 */
        { SCN_DRAIN_SIGNAL_SET, drain_signal_set }, /* with SWERVE_CLAIM_DRAIN_SIGNALS=usr1 */
        { SCN_DRAIN_GRANDCHILD, drain_grandchild },
        { SCN_DRAIN_REUSED_PID, drain_reused_pid },     /* waitpid|sigchld-ignored */
        { SCN_DRAIN_ORPHAN, drain_orphan },             /* fork|exec */
        { SCN_DRAIN_ORPHAN_IMAGE, drain_orphan_image }, /* run by drain-orphan exec */
        { SCN_DRAIN_NOTED, drain_noted },
        /* close|close_range|closefrom|dup2|dup3|shutdown|dup2-copy|dup-copy|fcntl-copy|raw-copy|own-listener|
         * close-after-vfork|high-copy|high-listener */
        { SCN_DRAIN_LISTENERS, drain_listeners },
        { SCN_DRAIN_CLOSE_ALL, drain_close_all }, /* -1|0 */
        { SCN_DRAIN_UNSEEN_CLOSE, drain_unseen_close },
    };

    if (!swerve_claim_load(&api) || api.draining == NULL) {
        fprintf(stderr, "helper_draining: libswerveclaim_preload.so (with swerve_claim_draining) is not loaded\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return SCENARIO_RUN(scenarios, argc, argv);
}
