/* SPDX-License-Identifier: MIT */
/*
 * The shapes of server that do not fork their workers and stay in the
 * foreground (issue 38), run under LD_PRELOAD by tests/integration.
 * Each scenario prints "ok SCENARIO" and exits 0, or says what failed on
 * stderr and exits 1; every wait is bounded.
 *
 * usage: helper_shapes SCENARIO [HOW]
 *   spawn-master HOW   a master that never forks starts three workers of
 *                      this program by HOW (posix_spawn, posix_spawnp,
 *                      vfork: vfork and execve, as CPython's subprocess
 *                      does; clone: libc's clone(), without CLONE_VM, and
 *                      execve; system: system() of a shell that starts it
 *                      in the background): they share one claim directory,
 *                      exactly one of them takes "report", and the
 *                      master's SIGTERM drains the one that holds it (but
 *                      a shell's child, no child of the master's)
 *   spawn-worker FD [IN]
 *                      one of them: says on FD whether it took the claim
 *                      (then, unless IN is given, once SIGTERM came, what
 *                      draining() says), and ends at the end of IN
 *                      (standard input by default)
 *   detached HOW       a process that detaches by HOW (daemon: daemon(3);
 *                      setsid: fork, the parent exits, the child calls
 *                      setsid(); double-fork: fork, setsid, fork, the
 *                      middle one exits) is a master: draining() says 0
 *                      there, and in the worker it forks, until that
 *                      master is SIGKILLed; then the worker drains
 *   new-master-dropped the same, the successor leading a session of its own
 *                      and its worker dropping root (to nobody) before the
 *                      old master ends, claiming after (php-fpm's reload
 *                      with daemonize = yes); root only
 *   vfork-env          200 vfork+execve with 90 environment entries: this
 *                      process's memory does not grow with them
 *   leader-at-load     a master that led its session from its start (as
 *                      setsid(1) or systemd start one) forks one worker and
 *                      exits: the worker drains
 *   leader-master-exits
 *                      a master that leads its session (php-cgi's parent
 *                      under lighttpd) forks two workers and exits: both
 *                      drain, as when any master ends (only the middle of
 *                      a double fork, which leaves one child, hands it over)
 *   new-master [host-fd]
 *                      a master, a member of its claim directory (a worker
 *                      that claimed registered it), forks a new master and
 *                      exits (php-fpm's reload in daemon mode): the new
 *                      master's worker claims, is SIGKILLed and reaped by
 *                      it (its claim is free then), and once the new master
 *                      has ended too, nothing is left; host-fd: the
 *                      successor puts a pipe of its own at the number the
 *                      library kept the removed directory's top at, and
 *                      the pipe stays its
 *   self-kill HOW      a master holding a claim, whose worker made the
 *                      directory, kills itself by HOW (kill, raise,
 *                      killpg, tgkill, sigqueue: SIGTERM; abort): the
 *                      signal ends it, and nothing is left behind
 *   self-kill-survived HOW
 *                      the same signal, caught or blocked (HOW: caught,
 *                      blocked), or SIGCHLD, whose default is to ignore
 *                      it: the process lives on and still holds its claim
 */
#define _GNU_SOURCE 1
#include <swerve/claim-loader.h>

#include "require.h"
#include "scenarios.h"
#include "testdir.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static struct swerve_claim_api api;

static const char *base(void)
{
    const char *b = getenv("SWERVE_TMPDIR");

    REQUIRE(b != NULL);
    return b;
}

/* One byte from FD within 10 s. */
static char read_byte(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    ssize_t n;
    char c;

    for (int tries = 0; tries < 100; tries++) { /* a caught SIGTERM interrupts them */
        int ready = poll(&p, 1, 10000);
        REQUIRE(ready == 1 || (ready < 0 && errno == EINTR));
        if (ready < 0)
            continue;
        if ((n = read(fd, &c, 1)) == 1)
            return c;
        REQUIRE(n == 0 || errno == EINTR);
        if (n == 0)
            return '\0'; /* the end: the writer closed it */
    }
    REQUIRE(!"a byte within 100 interruptions");
    return '\0';
}

static void write_byte(int fd, char c)
{
    REQUIRE(write(fd, &c, 1) == 1);
}

/* ------------------------------------------------------------ spawning */

enum { WORKERS = 3 };

/* What a clone() child runs: the worker's image, with IN as its input. */
struct cloned {
    char **argv;
    int in;
};

static int exec_cloned(void *arg)
{
    const struct cloned *c = arg;

    if (dup2(c->in, 0) < 0)
        _exit(126);
    execve("/proc/self/exe", c->argv, environ);
    _exit(127);
}

/* Starts "helper_shapes spawn-worker FD" by HOW, its standard input the
 * read end IN (closed when the master wants it to end). */
static pid_t spawn_worker(const char *how, int fd, int in)
{
    char fdarg[16], *argv[] = { "helper_shapes", SCN_SPAWN_WORKER, fdarg, NULL };
    posix_spawn_file_actions_t actions;
    pid_t pid;

    snprintf(fdarg, sizeof fdarg, "%d", fd);
    if (strcmp(how, "system") == 0) {
        char self[4096], line[4200];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        int shared = fcntl(in, F_DUPFD, 3); /* IN is close-on-exec */
        REQUIRE(len > 0 && shared >= 0);
        self[len] = '\0';
        REQUIRE(snprintf(line, sizeof line, "'%s' %s %d %d &", self, SCN_SPAWN_WORKER, fd, shared) < (int)sizeof line);
        REQUIRE(system(line) == 0);
        REQUIRE(close(shared) == 0);
        return 0; /* the shell's child: its pid is in its answer */
    }
    if (strcmp(how, "clone") == 0) {
        static _Alignas(16) char stack[64 * 1024]; /* the child's own copy: no CLONE_VM */
        struct cloned c = { argv, in };
        pid = clone(exec_cloned, stack + sizeof stack, SIGCHLD, &c);
        REQUIRE(pid > 0);
        return pid;
    }
    if (strcmp(how, "vfork") == 0) {
        pid = vfork();
        if (pid == 0) {
            if (dup2(in, 0) < 0)
                _exit(126);
            execve("/proc/self/exe", argv, environ);
            _exit(127);
        }
        REQUIRE(pid > 0);
        return pid;
    }
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    REQUIRE(posix_spawn_file_actions_adddup2(&actions, in, 0) == 0);
    if (strcmp(how, "posix_spawn") == 0)
        REQUIRE(posix_spawn(&pid, "/proc/self/exe", &actions, NULL, argv, environ) == 0);
    else if (strcmp(how, "posix_spawnp") == 0)
        REQUIRE(posix_spawnp(&pid, "/proc/self/exe", &actions, NULL, argv, environ) == 0);
    else
        REQUIRE(!"a known way to spawn");
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

static int count_claim_dirs(void)
{
    return testdir_count_prefix(base(), "swerve-claim.");
}

/* Nobody in this process ever calls fork(): each worker is a new image
 * of this program, started by HOW. */
static int spawn_master(char **argv)
{
    const char *how = argv[0];
    int answers[2], stop[2], took = 0, holder = -1, status;
    pid_t pids[WORKERS];
    char said[WORKERS];

    REQUIRE(how != NULL);
    REQUIRE(pipe(answers) == 0 && pipe2(stop, O_CLOEXEC) == 0);
    for (int i = 0; i < WORKERS; i++)
        pids[i] = spawn_worker(how, answers[1], stop[0]);
    /* Each answers once it has tried: 't' took it, 'b' busy. */
    for (int i = 0; i < WORKERS; i++) {
        char line[32];
        REQUIRE(read_byte(answers[0]) == 'w');
        for (int n = 0; n < (int)sizeof line - 1; n++) {
            line[n] = read_byte(answers[0]);
            line[n + 1] = '\0';
            if (line[n] == ' ')
                break;
        }
        said[i] = read_byte(answers[0]);
        if (strcmp(how, "system") == 0)
            pids[i] = (pid_t)atoi(line);
        for (int j = 0; j < WORKERS; j++)
            if (pids[j] == (pid_t)atoi(line) && said[i] == 't')
                holder = j;
        took += said[i] == 't';
    }
    if (took != 1 || count_claim_dirs() != 1) {
        fprintf(stderr, "spawn-master %s: %d of %d workers took the claim, %d claim directories\n", how, took, WORKERS,
                count_claim_dirs());
        return 1;
    }
    REQUIRE(holder >= 0);
    if (strcmp(how, "system") == 0) {
        close(stop[1]); /* every worker ends, reaped by whoever adopted it */
        for (int i = 0; i < WORKERS; i++)
            for (int waits = 0; kill(pids[i], 0) == 0; waits++) {
                REQUIRE(waits < 1000); /* 10 s */
                usleep(10000);
            }
        return 0;
    }
    /* A drain signal reaches the holder, recorded though never forked. */
    REQUIRE(kill(pids[holder], SIGTERM) == 0);
    if (read_byte(answers[0]) != '1') {
        fprintf(stderr, "spawn-master %s: the holder's draining() did not say 1 after its master's SIGTERM\n", how);
        return 1;
    }
    close(stop[1]); /* every worker ends */
    for (int i = 0; i < WORKERS; i++)
        REQUIRE(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

static volatile sig_atomic_t terminated;

static void note_term(int sig)
{
    (void)sig;
    terminated = 1;
}

/* Tries "report" once; says "wPID t" or "wPID b" on FD; the holder then
 * waits for SIGTERM and says what draining() says ('1', '0', 'e').  Ends
 * when standard input does. */
static int spawn_worker_run(char **argv)
{
    struct sigaction sa = { .sa_handler = note_term };
    struct swerve_claim *c;
    char line[32];
    int fd, took;

    REQUIRE(argv[0] != NULL);
    fd = atoi(argv[0]);
    sigemptyset(&sa.sa_mask);
    REQUIRE(sigaction(SIGTERM, &sa, NULL) == 0);
    REQUIRE((c = api.new_claim("report")) != NULL);
    took = api.acquire(c, 0.0) == c;
    snprintf(line, sizeof line, "w%d %c", (int)getpid(), took ? 't' : 'b');
    REQUIRE(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
    if (took && argv[1] == NULL) {
        int d = 0;
        for (int i = 0; i < 1000 && !terminated; i++)
            usleep(10000);
        /* The master marks it once its kill() has returned: as a leader
         * would, it asks again a while. */
        for (int i = 0; i < 500 && terminated && (d = api.draining()) == 0; i++)
            usleep(10000);
        write_byte(fd, d == 1 ? '1' : d == 0 ? '0' : 'e');
    }
    (void)read_byte(argv[1] != NULL ? atoi(argv[1]) : 0); /* EOF: the master is done */
    api.free(c);
    exit(0); /* quietly: the master's "ok" is the scenario's */
}

/* ----------------------------------------------------------- detaching */

/* What draining() says here: '1', '0', or 'e'. */
static char draining_now(void)
{
    int d = api.draining();

    return d == 1 ? '1' : d == 0 ? '0' : 'e';
}

/* Waits (at most 10 s) until this process's parent is no longer PARENT. */
static void wait_reparented(pid_t parent)
{
    for (int i = 0; i < 1000 && getppid() == parent; i++)
        usleep(10000);
    REQUIRE(getppid() != parent);
}

/* In the detached master: a worker of its own says draining() 0 while it
 * lives, and 1 once it is SIGKILLed. */
static int master_and_worker(const char *how)
{
    int ask[2], answer[2];
    pid_t worker, self = getpid();

    if (draining_now() != '0') {
        fprintf(stderr, "detached %s: the master's draining() says %c after its parent ended\n", how, draining_now());
        return 1;
    }
    REQUIRE(pipe(ask) == 0 && pipe(answer) == 0);
    worker = fork();
    REQUIRE(worker >= 0);
    if (worker == 0) {
        write_byte(answer[1], draining_now());
        REQUIRE(read_byte(ask[0]) == 'k'); /* its master is about to die */
        wait_reparented(self);
        write_byte(answer[1], draining_now());
        _exit(0);
    }
    if (read_byte(answer[0]) != '0') {
        fprintf(stderr, "detached %s: its worker drains while its master lives\n", how);
        return 1;
    }
    /* The master dies, unseen: the worker says the rest.  This process's
     * answer is its worker's, through a pipe the runner reads. */
    if (fork() == 0) {
        char after;
        write_byte(ask[1], 'k');
        after = read_byte(answer[0]);
        if (after != '1') {
            fprintf(stderr, "detached %s: a worker whose master was SIGKILLed says %c\n", how, after);
            _exit(1);
        }
        printf("ok %s\n", SCN_DETACHED);
        _exit(0);
    }
    (void)kill(self, SIGKILL);
    return 1; /* not reached */
}

static int detached(char **argv)
{
    const char *how = argv[0];
    pid_t first = getpid(), middle;

    REQUIRE(how != NULL);
    if (strcmp(how, "daemon") == 0) {
        REQUIRE(daemon(1, 1) == 0); /* keeps the runner's pipes as its output */
        wait_reparented(first);
        _exit(master_and_worker(how));
    }
    if (strcmp(how, "setsid") == 0) {
        if (fork() != 0)
            _exit(0);
        REQUIRE(setsid() > 0);
        wait_reparented(first);
        _exit(master_and_worker(how));
    }
    REQUIRE(strcmp(how, "double-fork") == 0);
    if (fork() != 0)
        _exit(0);
    REQUIRE(setsid() > 0);
    middle = getpid();
    if (fork() != 0)
        _exit(0);
    wait_reparented(middle);
    _exit(master_and_worker(how));
}

/* A worker of the master that forks it: says what draining() says once
 * its master is gone. */
static pid_t orphan_to_be(pid_t master, int answer)
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        wait_reparented(master);
        write_byte(answer, draining_now());
        _exit(0);
    }
    return pid;
}

static int leader_master_exits(char **argv)
{
    int answers[2];
    pid_t first = getpid();

    (void)argv;
    REQUIRE(pipe(answers) == 0);
    if (fork() != 0)
        _exit(0);
    REQUIRE(setsid() > 0);
    wait_reparented(first);
    if (fork() == 0) { /* says what the workers say, once their master has exited */
        char said[2];
        close(answers[1]);
        said[0] = read_byte(answers[0]);
        said[1] = read_byte(answers[0]);
        if (said[0] != '1' || said[1] != '1') {
            fprintf(stderr, "leader-master-exits: its workers' draining() said %c and %c\n", said[0], said[1]);
            _exit(1);
        }
        printf("ok %s\n", SCN_LEADER_MASTER_EXITS);
        _exit(0);
    }
    (void)orphan_to_be(getpid(), answers[1]);
    (void)orphan_to_be(getpid(), answers[1]);
    exit(0); /* an exit, not a kill: no hand-over all the same */
}

/* ------------------------------------------------------ a new master */

/* Forks a worker that takes NAME (and says so on a pipe), then lingers
 * until it is killed, or with LINGER 0 ends at once; its pid. */
static pid_t claiming_worker(const char *name, int linger)
{
    int told[2];
    pid_t pid;

    REQUIRE(pipe(told) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        struct swerve_claim *c = api.new_claim(name);
        REQUIRE(c != NULL && api.acquire(c, 0.0) == c);
        write_byte(told[1], 't');
        for (int i = 0; linger && i < 1000; i++)
            usleep(10000);
        _exit(0);
    }
    close(told[1]);
    REQUIRE(read_byte(told[0]) == 't');
    close(told[0]);
    return pid;
}

/* Where new-master's successor puts a descriptor of its own (host-fd):
 * the number the library keeps the directory's top at. */
#define TOP_FD 62

static int new_master(char **argv)
{
    pid_t old = getpid(), worker, fresh;
    int status, host_fd = argv[0] != NULL && strcmp(argv[0], "host-fd") == 0, mine[2];

    worker = claiming_worker("old-report", 0); /* it makes the directory, and registers this master */
    REQUIRE(waitpid(worker, &status, 0) == worker && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fresh = fork();
    REQUIRE(fresh >= 0);
    if (fresh != 0)
        _exit(0); /* the old master ends while the new one runs */
    wait_reparented(old);
    if (host_fd) { /* a pipe of the host's at the removed top's number */
        REQUIRE(pipe(mine) == 0 && dup2(mine[1], TOP_FD) == TOP_FD);
        close(mine[1]);
    }
    worker = claiming_worker("x", 1);
    REQUIRE(kill(worker, SIGKILL) == 0 && waitpid(worker, &status, 0) == worker);
    if (testdir_claim_exists(base(), "x") != 0 || count_claim_dirs() != 1) {
        fprintf(stderr, "new-master: its reaped worker's claim is %s, in %d claim directories\n",
                testdir_claim_exists(base(), "x") ? "still there" : "gone", count_claim_dirs());
        _exit(1);
    }
    if (host_fd && (write(TOP_FD, "h", 1) != 1 || read_byte(mine[0]) != 'h')) {
        fprintf(stderr, "new-master host-fd: the host's descriptor %d is no longer its pipe (errno %d)\n", TOP_FD,
                errno);
        _exit(1);
    }
    printf("ok %s\n", SCN_NEW_MASTER);
    exit(0); /* the runner finds the base empty once this has ended */
}

/* new-master-dropped: the successor's worker drops root (to nobody)
 * before the old master ends, and claims after, as php-fpm's new
 * workers do in its reload in daemon mode.  Root only (77 else). */
static int new_master_dropped(char **argv)
{
    int to_old[2], to_worker[2], from_worker[2], status;
    pid_t old = getpid(), successor, worker;

    (void)argv;
    if (geteuid() != 0) {
        printf("SKIP: new-master-dropped drops root, and this is not root\n");
        return 77;
    }
    REQUIRE(chmod(base(), 01777) == 0); /* as /tmp: a worker that dropped root may make a directory there */
    worker = claiming_worker("old-report", 0);
    REQUIRE(waitpid(worker, &status, 0) == worker && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(pipe(to_old) == 0 && pipe(to_worker) == 0 && pipe(from_worker) == 0);
    successor = fork();
    REQUIRE(successor >= 0);
    if (successor != 0) {
        (void)read_byte(to_old[0]); /* once the successor's worker has dropped root */
        _exit(0);
    }
    REQUIRE(setsid() > 0);
    worker = fork();
    REQUIRE(worker >= 0);
    if (worker == 0) {
        struct swerve_claim *c;
        REQUIRE(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0);
        write_byte(from_worker[1], 'd');
        REQUIRE(read_byte(to_worker[0]) == 'c');
        REQUIRE((c = api.new_claim("x")) != NULL && api.acquire(c, 0.0) == c);
        write_byte(from_worker[1], 't');
        for (int i = 0; i < 1000; i++)
            usleep(10000);
        _exit(0);
    }
    REQUIRE(read_byte(from_worker[0]) == 'd');
    write_byte(to_old[1], 'e'); /* the old master ends now */
    wait_reparented(old);
    write_byte(to_worker[1], 'c');
    REQUIRE(read_byte(from_worker[0]) == 't');
    REQUIRE(kill(worker, SIGKILL) == 0 && waitpid(worker, &status, 0) == worker);
    if (testdir_claim_exists(base(), "x") != 0 || count_claim_dirs() != 1) {
        fprintf(stderr, "new-master-dropped: its reaped worker's claim is %s, in %d claim directories\n",
                testdir_claim_exists(base(), "x") ? "still there" : "gone", count_claim_dirs());
        _exit(1);
    }
    printf("ok %s\n", SCN_NEW_MASTER_DROPPED);
    exit(0); /* the runner finds the base empty once this has ended */
}

/* Anonymous memory of this process, in kB (smaps_rollup), or -1. */
static long anonymous_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;

    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Anonymous: %ld kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kb;
}

/* 200 vfork+execve of /bin/true, under the shim, with an environment of 90
 * entries (more than the library's static room holds): the memory of
 * this process does not grow with them. */
static int vfork_env(char **argv)
{
    enum { SPAWNS = 200, ENTRIES = 90 };
    char *env[ENTRIES + 1], *const true_argv[] = { "true", NULL };
    long before, after;
    int n = 0;

    (void)argv;
    for (char **e = environ; *e != NULL && n < 10; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) == 0 || strncmp(*e, "SWERVE_", 7) == 0)
            env[n++] = *e;
    while (n < ENTRIES) {
        REQUIRE((env[n] = malloc(16)) != NULL);
        snprintf(env[n], 16, "PAD%d=x", n);
        n++;
    }
    env[n] = NULL;
    before = anonymous_kb();
    for (int i = 0; i < SPAWNS; i++) {
        int status;
        pid_t pid = vfork();
        if (pid == 0) {
            execve("/bin/true", true_argv, env);
            _exit(127);
        }
        REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    after = anonymous_kb();
    REQUIRE(before > 0 && after > 0);
    if (after - before > 256) {
        fprintf(stderr, "vfork-env: %d vfork+execve took this process from %ld kB to %ld kB of anonymous memory\n",
                SPAWNS, before, after);
        return 1;
    }
    return 0;
}

/* A master started as a session leader (by setsid(1), by systemd) that
 * forks one worker and exits: the worker drains, as any whose master
 * ended; the middle of a double fork, which calls setsid() itself, is no
 * such master. */
static int leader_at_load(char **argv)
{
    pid_t child;
    int status;

    (void)argv;
    child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        REQUIRE(setsid() > 0);
        execl("/proc/self/exe", "helper_shapes", SCN_LEADER_AT_LOAD_IMAGE, (char *)NULL);
        _exit(127);
    }
    REQUIRE(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    exit(0); /* the worker says the rest, on the runner's pipe */
}

/* leader-at-load's master: a session leader since its image started. */
static int leader_at_load_image(char **argv)
{
    pid_t self = getpid(), worker;

    (void)argv;
    REQUIRE(getsid(0) == self);
    worker = fork();
    REQUIRE(worker >= 0);
    if (worker == 0) {
        char said;
        wait_reparented(self);
        said = draining_now();
        if (said != '1') {
            fprintf(stderr, "leader-at-load: the worker of a master that led its session from its start says %c\n",
                    said);
            _exit(1);
        }
        printf("ok %s\n", SCN_LEADER_AT_LOAD);
        _exit(0);
    }
    exit(0);
}

/* --------------------------------------------------------- killing self */

/* This process becomes a master whose worker made the claim directory,
 * and holds "x" itself. */
static void master_holding(void)
{
    pid_t worker = fork();
    int status;

    REQUIRE(worker >= 0);
    if (worker == 0) {
        struct swerve_claim *c = api.new_claim("made-by-worker");
        REQUIRE(c != NULL && api.acquire(c, 0.0) == c);
        _exit(0);
    }
    REQUIRE(waitpid(worker, &status, 0) == worker && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(api.acquire(api.new_claim("x"), 0.0) != NULL);
    REQUIRE(count_claim_dirs() == 1);
}

/* Sends SIGNAL to this process by HOW. */
static void send_self(const char *how, int sig)
{
    if (strcmp(how, "kill") == 0)
        REQUIRE(kill(getpid(), sig) == 0);
    else if (strcmp(how, "raise") == 0)
        REQUIRE(raise(sig) == 0);
    else if (strcmp(how, "killpg") == 0)
        REQUIRE(killpg(getpgrp(), sig) == 0);
    else if (strcmp(how, "tgkill") == 0)
        REQUIRE(tgkill(getpid(), gettid(), sig) == 0);
    else if (strcmp(how, "sigqueue") == 0)
        REQUIRE(sigqueue(getpid(), sig, (union sigval){ 0 }) == 0);
    else if (strcmp(how, "abort") == 0)
        abort();
    else
        REQUIRE(!"a known way to signal oneself");
}

/* Ends by its own signal: the runner sees the signal and an empty base. */
static int self_kill(char **argv)
{
    const char *how = argv[0];

    REQUIRE(how != NULL);
    /* abort() dumps no core, and killpg reaches nobody else. */
    REQUIRE(setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 }) == 0);
    setpgid(0, 0);
    master_holding();
    send_self(how, SIGTERM);
    sleep(5); /* a signal sent to oneself is delivered before kill returns */
    fprintf(stderr, "self-kill %s: still alive\n", how);
    return 1;
}

static volatile sig_atomic_t caught;

static void catch_signal(int sig)
{
    (void)sig;
    caught = 1;
}

/* The host's own disposition stands: a caught or blocked SIGTERM, or a
 * SIGCHLD (ignored by default), leaves the process with its claim. */
static int self_kill_survived(char **argv)
{
    const char *how = argv[0];
    int sig = SIGTERM;

    REQUIRE(how != NULL);
    master_holding();
    if (strcmp(how, "caught") == 0) {
        struct sigaction sa = { .sa_handler = catch_signal };
        sigemptyset(&sa.sa_mask);
        REQUIRE(sigaction(SIGTERM, &sa, NULL) == 0);
    } else if (strcmp(how, "blocked") == 0) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        REQUIRE(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    } else {
        REQUIRE(strcmp(how, "sigchld") == 0);
        sig = SIGCHLD;
    }
    REQUIRE(kill(getpid(), sig) == 0);
    REQUIRE(strcmp(how, "caught") != 0 || caught);
    if (testdir_claim_exists(base(), "x") != 1 || count_claim_dirs() != 1) {
        fprintf(stderr, "self-kill-survived %s: the claim was let go, though the process lives on\n", how);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct scenario scenarios[] = {
        { SCN_SPAWN_MASTER, spawn_master }, /* posix_spawn|posix_spawnp|vfork|clone */
        { SCN_SPAWN_WORKER, spawn_worker_run },
        { SCN_DETACHED, detached },     /* daemon|setsid|double-fork */
        { SCN_NEW_MASTER, new_master }, /* [host-fd] */
        { SCN_VFORK_ENV, vfork_env },
        { SCN_NEW_MASTER_DROPPED, new_master_dropped },
        { SCN_LEADER_AT_LOAD, leader_at_load },
        { SCN_LEADER_AT_LOAD_IMAGE, leader_at_load_image },
        { SCN_LEADER_MASTER_EXITS, leader_master_exits },
        { SCN_SELF_KILL, self_kill },                   /* kill|raise|killpg|tgkill|sigqueue|abort */
        { SCN_SELF_KILL_SURVIVED, self_kill_survived }, /* caught|blocked|sigchld */
    };

    if (!swerve_claim_load(&api) || api.draining == NULL) {
        fprintf(stderr, "helper_shapes: libswerveclaim_preload.so (with swerve_claim_draining) is not loaded\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return SCENARIO_RUN(scenarios, argc, argv);
}
