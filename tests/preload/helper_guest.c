/* SPDX-License-Identifier: MIT */
/*
 * What a host notices of its guest on the paths a signal handler takes:
 * each PATH below runs in a handler on an alternate signal stack of a given
 * size, with a claim held where the shim is there to hold one.  tests/
 * preload/guest runs it with and without the shim and compares.
 *
 *   helper_guest PATH SIZE FILE
 *
 * The alternate stack is SIZE bytes of FILE from its second page on, mapped
 * shared, painted, with its first page, right below, inaccessible: so an overflow is a SIGSEGV, as on a host's
 * own small stack, and the test reads how deep the call went from FILE
 * once this process (and any worker) has ended, even when it ended inside
 * the handler.  PATHs:
 *
 *   exit, _exit                     the first process, holding a claim
 *   worker-exit, worker-_exit       a forked worker, holding a claim
 *   fault                           a worker whose SIGSEGV handler _exits
 *   fork                            the process's first fork
 *   reap                            waitpid reaping a worker that held a claim
 *   reap-nested                     the same, of a worker that held 3,000, while
 *                                   a SIGALRM handler, also SA_ONSTACK, fires
 *                                   every 50 us
 *   exec                            an execve that fails, in a holder
 *   vfork-exec                      the same, in a holder that has started a
 *                                   program with vfork and execve before (as
 *                                   Python's subprocess does)
 *   kill, killpg                    a master's SIGTERM to a worker that holds a
 *                                   claim (a drain signal: the worker is marked)
 *   worker-close                    a worker, holding a claim, closes the one
 *                                   listener it inherited (it drains, as Apache's
 *                                   and php-fpm's do in their handlers)
 *   raise                           a holder's handler raises SIGTERM again
 *                                   with its default action, to die by it
 *                                   (it ends by SIGTERM, not 7)
 *
 * It prints "shim" when the shim is loaded, and exits 7 when the handler got as far as it should (and then, for the
 * paths that return, 0 after the handler), or dies as the host would.
 */
#define _GNU_SOURCE 1
#include <swerve/claim-loader.h>

#include "require.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the test looks for to tell how much of the stack a call used. */
#define PAINT 0xa5

static struct swerve_claim_api api;
static int have_api;
static const char *path;
static pid_t worker;
static int listener = -1;

static void hold(const char *name)
{
    if (have_api)
        REQUIRE(api.acquire(api.new_claim(name), 0.0) != NULL);
}

/* The alternate stack: SIZE bytes of FILE after its first page, which
 * nobody may touch.  Shared with FILE when the process ends in the
 * handler; private when the handler forks (a child writing to a shared
 * stack would scribble on its parent's frames), and then written to FILE
 * once the handler has returned (save_alternate_stack). */
static struct {
    char *map;
    size_t len, page;
    int shared;
    const char *file;
} alt;

static void use_alternate_stack(const char *file, size_t size, int shared)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    stack_t ss;

    REQUIRE(fd >= 0);
    alt.len = page + (size + page - 1) / page * page;
    REQUIRE(ftruncate(fd, (off_t)alt.len) == 0);
    alt.page = page;
    alt.shared = shared;
    alt.file = file;
    alt.map = mmap(NULL, alt.len, PROT_READ | PROT_WRITE, shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    REQUIRE(alt.map != MAP_FAILED);
    close(fd);
    REQUIRE(mprotect(alt.map, page, PROT_NONE) == 0);
    memset(alt.map + page, PAINT, alt.len - page);
    ss.ss_sp = alt.map + page;
    ss.ss_size = size;
    ss.ss_flags = 0;
    REQUIRE(sigaltstack(&ss, NULL) == 0);
}

static void save_alternate_stack(void)
{
    int fd;

    if (alt.shared)
        return;
    fd = open(alt.file, O_WRONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, alt.map + alt.page, alt.len - alt.page, (off_t)alt.page) == (ssize_t)(alt.len - alt.page));
    close(fd);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static void on_signal(int sig)
{
    (void)sig;
    if (strcmp(path, "exit") == 0 || strcmp(path, "worker-exit") == 0)
        exit(7);
    if (strcmp(path, "raise") == 0) {
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
        _exit(1);
    }
    if (strcmp(path, "_exit") == 0 || strcmp(path, "worker-_exit") == 0 || strcmp(path, "fault") == 0)
        _exit(7);
    if (strcmp(path, "fork") == 0) {
        pid_t child = fork();
        if (child == 0)
            _exit(0);
        worker = child;
    } else if (strcmp(path, "reap") == 0 || strcmp(path, "reap-nested") == 0) {
        int status;
        if (waitpid(worker, &status, 0) != worker || !WIFSIGNALED(status))
            _exit(1);
    } else if (strcmp(path, "exec") == 0 || strcmp(path, "vfork-exec") == 0) {
        char *const argv[] = { "/nonexistent/program", NULL };
        if (execve(argv[0], argv, environ) == 0 || errno != ENOENT)
            _exit(1);
    } else if (strcmp(path, "worker-close") == 0) {
        if (close(listener) != 0)
            _exit(1);
    } else if (strcmp(path, "kill") == 0) {
        if (kill(worker, SIGTERM) != 0)
            _exit(1);
    } else if (strcmp(path, "killpg") == 0) {
        if (killpg(worker, SIGTERM) != 0)
            _exit(1);
    }
}

static void handle_on_alternate_stack(int sig)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(sig, &sa, NULL) == 0);
}

/* A worker that holds a claim (3,000 more for reap-nested) until a signal
 * ends it; in a process group of its own when OWN_GROUP (for killpg), and
 * then gone with this process should this one die on a stack too small. */
static pid_t holding_worker(int own_group)
{
    int ready[2];
    char c;
    pid_t pid;

    REQUIRE(pipe(ready) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (own_group)
            REQUIRE(setpgid(0, 0) == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
        hold("reap");
        for (int i = 0; strcmp(path, "reap-nested") == 0 && i < 3000; i++) {
            char name[32];
            snprintf(name, sizeof name, "reap-%d", i);
            hold(name);
        }
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    if (own_group)
        (void)setpgid(pid, pid);
    close(ready[1]);
    REQUIRE(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    return pid;
}

/* A worker that held a claim and was killed: a reaper's work to clear. */
static pid_t killed_holder(void)
{
    pid_t pid = holding_worker(0);

    REQUIRE(kill(pid, SIGKILL) == 0);
    /* Dead but not reaped, so that the handler's waitpid() does the reap. */
    for (int i = 0; i < 1000; i++) {
        siginfo_t si = { 0 };
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            return pid;
        usleep(1000);
    }
    REQUIRE(!"the killed worker died within a second");
}

int main(int argc, char **argv)
{
    size_t size;
    int worker_path, ends_in_handler, reaps, signals;

    if (argc != 4) {
        fprintf(stderr, "usage: helper_guest PATH SIZE FILE\n");
        return 2;
    }
    path = argv[1];
    size = (size_t)strtoul(argv[2], NULL, 10);
    have_api = swerve_claim_load(&api);
    /* So the test knows the shim was there: a preload that failed to load
     * is only a warning of the dynamic loader's. */
    if (have_api && write(1, "shim\n", 5) != 5)
        return 1;
    worker_path = strncmp(path, "worker-", 7) == 0 || strcmp(path, "fault") == 0;

    reaps = strcmp(path, "reap") == 0 || strcmp(path, "reap-nested") == 0;
    signals = strcmp(path, "kill") == 0 || strcmp(path, "killpg") == 0;
    if (reaps)
        worker = killed_holder();
    if (signals)
        worker = holding_worker(1);
    if (strcmp(path, "worker-close") == 0) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(listener >= 0 && bind(listener, (struct sockaddr *)&a, sizeof a) == 0 && listen(listener, 8) == 0);
    }
    if (worker_path) {
        int status;
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid > 0) {
            REQUIRE(waitpid(pid, &status, 0) == pid);
            if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
            return WEXITSTATUS(status);
        }
    }
    if (strcmp(path, "fork") != 0 && !reaps)
        hold("guest");
    if (strcmp(path, "vfork-exec") == 0) {
        char *const true_argv[] = { "true", NULL };
        int status;
        pid_t child = vfork();
        if (child == 0) {
            execve("/bin/true", true_argv, environ);
            _exit(127);
        }
        REQUIRE(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ends_in_handler = strcmp(path, "fork") != 0 && !reaps && !signals && strcmp(path, "exec") != 0 &&
                      strcmp(path, "vfork-exec") != 0 && strcmp(path, "worker-close") != 0;
    use_alternate_stack(argv[3], size, ends_in_handler);
    if (strcmp(path, "fault") == 0) {
        handle_on_alternate_stack(SIGSEGV);
        raise(SIGSEGV);
    }
    handle_on_alternate_stack(SIGUSR1);
    if (strcmp(path, "reap-nested") == 0) {
        struct itimerval every = { .it_interval = { 0, 50 }, .it_value = { 0, 50 } }, off = { 0 };
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_ONSTACK | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
        REQUIRE(setitimer(ITIMER_REAL, &every, NULL) == 0);
        raise(SIGUSR1);
        REQUIRE(setitimer(ITIMER_REAL, &off, NULL) == 0);
    } else {
        raise(SIGUSR1);
    }
    save_alternate_stack();
    if (strcmp(path, "worker-close") == 0)
        REQUIRE(!have_api || api.draining() == 1);
    if (strcmp(path, "fork") == 0 || signals) {
        int status;
        REQUIRE(waitpid(worker, &status, 0) == worker);
        REQUIRE(!signals || (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM));
    }
    return 7;
}
