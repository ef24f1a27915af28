/* SPDX-License-Identifier: MIT */
/*
 * The attacks of doc/security.md, played from inside a server: run as root
 * under the shim, this program is the master, and the workers it forks
 * drop to the attacker's uid and then do what compromised application
 * code could.  tests/security/attacks.sh drives it and checks the damage.
 *
 *   attacker SCENARIO [ARG...]     (the table in main lists them)
 *
 * A scenario prints "ok SCENARIO" and exits 0 when the attack did no
 * harm, or says what happened on standard error and exits 1.  Every wait
 * is bounded; the driver adds a timeout of its own around each run.
 */
#include "config.h"

#include <swerve/claim-loader.h>

#include "require.h"
#include "padded_env.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static struct swerve_claim_api api;

/* The claims directory of the one server in $SWERVE_TMPDIR. */
static void claims_dir(char *out, size_t cap)
{
    const char *base = getenv("SWERVE_TMPDIR");
    DIR *d = opendir(base);
    struct dirent *e;
    int own = 0;

    REQUIRE(d != NULL);
    out[0] = '\0';
    /* The one this process is a member of, where others were abandoned
     * beside it; else any. */
    while (!own && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "swerve-claim.", 13) == 0 && strchr(e->d_name + 13, '.') == NULL) {
            char holder[4200];
            snprintf(out, cap, "%s/%s/claims", base, e->d_name);
            snprintf(holder, sizeof holder, "%s/.holder.%d", out, (int)getpid());
            own = access(holder, F_OK) == 0;
        }
    closedir(d);
    REQUIRE(out[0] != '\0');
}

static void holder_of(pid_t pid, char *out, size_t cap)
{
    char dir[4096];

    claims_dir(dir, sizeof dir);
    snprintf(out, cap, "%s/.holder.%d", dir, (int)pid);
}

static int claim_exists(const char *name)
{
    char dir[4096], path[4400];
    struct stat st;

    claims_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lstat(path, &st) == 0;
}

static struct swerve_claim *take(const char *name)
{
    struct swerve_claim *c = api.new_claim(name);

    REQUIRE(c != NULL);
    REQUIRE(api.acquire(c, 0) != NULL);
    return c;
}

/* 1 when NAME can be taken now (it is released again at once). */
static int free_now(const char *name)
{
    struct swerve_claim *c = api.new_claim(name);
    int ok;

    REQUIRE(c != NULL);
    ok = api.acquire(c, 0) != NULL;
    api.free(c);
    return ok;
}

static void become(uid_t uid)
{
    REQUIRE(setgid((gid_t)uid) == 0 || errno == EPERM);
    REQUIRE(setuid(uid) == 0);
}

/* A worker of UID, with a pipe that ends when it does (in *DEAD). */
static pid_t worker_with_pipe(uid_t uid, int *dead)
{
    int fds[2];
    pid_t pid;

    REQUIRE(pipe(fds) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        become(uid);
        return 0;
    }
    close(fds[1]);
    *dead = fds[0];
    return pid;
}

/* Waits (bounded) until PATH exists: how the driver says "go on". */
static void wait_for_file(const char *path)
{
    struct stat st;

    for (int i = 0; i < 3000 && stat(path, &st) != 0; i++)
        usleep(10000);
    REQUIRE(stat(path, &st) == 0);
}

static void say(const char *what)
{
    printf("%s\n", what);
    fflush(stdout);
}

/* Reaps PID, at most SECONDS later; its status. */
static int reap(pid_t pid, int seconds)
{
    int status;

    alarm((unsigned)seconds); /* a hook that blocks kills us: the driver sees it */
    REQUIRE(waitpid(pid, &status, 0) == pid);
    alarm(0);
    return status;
}

/* Killed, as by another process: a raw system call, since the shim's
 * hooks end a process that kills itself as an exit would. */
__attribute__((noreturn)) static void die(void)
{
    (void)syscall(SYS_kill, getpid(), SIGKILL);
    _exit(99);
}

/* ----------------------------------------------------------- attack 1 */

#define SLOW_PATH "/x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/../x/.."

/*
 * The compromised worker: links its holder file into the attacker's
 * directory (where `flip` keeps a second name for it), then journals
 * LINES absolute paths through the symlink that `flip` keeps swapping
 * between that directory and the victim's, and dies.  Whoever clears its
 * journal as root must never unlink through those paths.
 */
static void plant_journal(const char *t, long lines)
{
    static char block[64 * 1024];
    char holder[4200], keep[4200], line[4200];
    size_t len;
    long per_block = 0;
    int fd;

    (void)take("x");
    holder_of(getpid(), holder, sizeof holder);
    snprintf(keep, sizeof keep, "%s/att/d1/keep", t);
    (void)unlink(keep);
    REQUIRE(link(holder, keep) == 0);
    /* Each x/.. makes resolving the path slower, and the window between
     * the clearer's look and its unlink wider. */
    len = (size_t)snprintf(line, sizeof line, "%s/att%s/ln/target\n", t, SLOW_PATH);
    REQUIRE(len < 250);
    fd = open(holder, O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    /* In blocks of lines: the journal is written fast, the clearer is slow. */
    for (size_t at = 0; at + len <= sizeof block; at += len)
        memcpy(block + at, line, len), per_block++;
    for (long i = 0; i < lines; i += per_block)
        REQUIRE(write(fd, block, per_block * len) == (ssize_t)(per_block * len));
    close(fd);
}

static int victim_alive(const char *t)
{
    char victim[4200];
    struct stat st;

    snprintf(victim, sizeof victim, "%s/victim/target", t);
    return stat(victim, &st) == 0;
}

/* journal-race UID T ROUNDS LINES reap|gc: in reap mode the master's own
 * waitpid clears each dead worker; in gc mode the master leaves it a
 * zombie, says "planted N", and waits for T/go-N while the driver runs a
 * root `swerve-claim gc`. */
static int journal_race(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1];
    int rounds = atoi(argv[2]), by_gc = strcmp(argv[4], "gc") == 0;
    long lines = atol(argv[3]);

    for (int round = 0; round < rounds; round++) {
        char go[4200], said[64], byte;
        int dead;
        pid_t pid = worker_with_pipe(uid, &dead);
        if (pid == 0) {
            plant_journal(t, lines);
            die();
        }
        /* End of file: the worker has written its journal and died. */
        REQUIRE(read(dead, &byte, 1) == 0);
        close(dead);
        if (by_gc) {
            /* A zombie is a dead holder: gc clears it before we reap. */
            snprintf(said, sizeof said, "planted %d", round);
            say(said);
            snprintf(go, sizeof go, "%s/go-%d", t, round);
            wait_for_file(go);
        }
        REQUIRE(WIFSIGNALED(reap(pid, 60)));
        if (!victim_alive(t)) {
            fprintf(stderr, "attacker: round %d: the root master unlinked %s/victim/target\n", round, t);
            return 1;
        }
        /* Clearing must still work: the worker's real claim is gone. */
        REQUIRE(free_now("x"));
    }
    return 0;
}

/* flip T SECONDS: run as the attacker, not preloaded.  Swaps T/att/ln (to
 * d1) and T/att/ln2 (to the victim's directory) as fast as it can, and
 * keeps d1/target a link of the dead worker's holder file. */
static int flip(char **argv)
{
    char ln[4200], ln2[4200], keep[4200], target[4200];
    double end = now_s() + atof(argv[1]);
    long flips = 0, planted = 0;

    snprintf(ln, sizeof ln, "%s/att/ln", argv[0]);
    snprintf(ln2, sizeof ln2, "%s/att/ln2", argv[0]);
    snprintf(keep, sizeof keep, "%s/att/d1/keep", argv[0]);
    snprintf(target, sizeof target, "%s/att/d1/target", argv[0]);
    while (now_s() < end) {
        for (int i = 0; i < 256; i++, flips++) {
            (void)renameat2(AT_FDCWD, ln, AT_FDCWD, ln2, RENAME_EXCHANGE);
            /* Once the target is there, every link fails: counted only. */
            planted += link(keep, target) == 0;
        }
    }
    printf("flips %ld, targets planted %ld\n", flips, planted);
    return 0;
}

/* ----------------------------------------------------------- attack 2 */

/* fifo-holder UID T: a worker puts a FIFO where its holder file was, and
 * dies.  The master must reap it without blocking, say "reaped", and stay
 * a live member (with the FIFO in its directory) until T/go exists. */
static int fifo_holder(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    char go[4200];
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        char holder[4200];
        become(uid);
        (void)take("x");
        holder_of(getpid(), holder, sizeof holder);
        REQUIRE(unlink(holder) == 0);
        REQUIRE(mkfifo(holder, 0666) == 0);
        die();
    }
    (void)reap(pid, 10);
    say("reaped");
    snprintf(go, sizeof go, "%s/go", argv[1]);
    wait_for_file(go);
    return 0;
}

/* start-once: a new server starting below the base: it forks (which
 * reserves its directory's place), then claims. */
static int start_once(char **argv)
{
    pid_t pid = fork();

    (void)argv;
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(0);
    REQUIRE(WIFEXITED(reap(pid, 10)));
    /* Its first claim makes its claim directory, sweeping the base first. */
    api.free(take("first"));
    return 0;
}

/* ----------------------------------------------------------- attack 3 */

/* wake-truncate UID: a worker truncates the wake file the master has
 * mapped; the master then clears its claim and releases its own, both of
 * which touch the mapping. */
static int wake_truncate(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    struct swerve_claim *mine = take("m");
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        char dir[4096], wake[4200];
        become(uid);
        (void)take("x");
        claims_dir(dir, sizeof dir);
        snprintf(wake, sizeof wake, "%s/../wake", dir);
        if (truncate(wake, 0) == 0)
            fprintf(stderr, "attacker: the worker truncated %s\n", wake);
        die();
    }
    (void)reap(pid, 10);
    REQUIRE(api.release(mine) == 0);
    api.free(mine);
    REQUIRE(free_now("x"));
    return 0;
}

/* ----------------------------------------------------------- attack 4 */

/* temp-switch UID T: a root process with a claim directory switches its
 * effective uid to UID and back, three ways, as daemons do to write a
 * file.  It then says the claims directory's path and waits for T/go
 * while the driver checks that UID cannot get in. */
static int temp_switch(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    struct swerve_claim *mine = take("m");
    char dir[4096], go[4200];

    REQUIRE(seteuid(uid) == 0);
    REQUIRE(seteuid(0) == 0);
    REQUIRE(setreuid((uid_t)-1, uid) == 0);
    REQUIRE(setreuid((uid_t)-1, 0) == 0);
    REQUIRE(setresuid((uid_t)-1, uid, (uid_t)-1) == 0);
    REQUIRE(setresuid((uid_t)-1, 0, (uid_t)-1) == 0);
    claims_dir(dir, sizeof dir);
    say(dir);
    snprintf(go, sizeof go, "%s/go", argv[1]);
    wait_for_file(go);
    api.free(mine);
    return 0;
}

/* ----------------------------------------------------------- attack 5 */

/* release-after-force TOOL BASE free|release: A holds X and is stopped;
 * `swerve-claim release --force` takes X from it; B takes X; A resumes
 * and lets go of X (by release or free).  B must still hold X. */
static int release_after_force(char **argv)
{
    const char *tool = argv[0], *base = argv[1];
    int by_free = strcmp(argv[2], "free") == 0;
    int a_ready[2], b_ready[2], b_go[2], status;
    char byte, pidbuf[24];
    pid_t a, b, forced;

    REQUIRE(pipe(a_ready) == 0 && pipe(b_ready) == 0 && pipe(b_go) == 0);
    a = fork();
    REQUIRE(a >= 0);
    if (a == 0) {
        struct swerve_claim *x = take("X");
        REQUIRE(write(a_ready[1], "a", 1) == 1);
        raise(SIGSTOP);
        if (by_free)
            api.free(x);
        else
            REQUIRE(api.release(x) == 0);
        _exit(0);
    }
    REQUIRE(read(a_ready[0], &byte, 1) == 1);
    REQUIRE(waitpid(a, &status, WUNTRACED) == a && WIFSTOPPED(status));

    snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
    forced = fork();
    REQUIRE(forced >= 0);
    if (forced == 0) {
        char *const args[] = {
            (char *)tool, "--base", (char *)base, "release", "--force", "--server", pidbuf, "X", NULL
        };
        char *const env[] = { "PATH=/usr/bin:/bin", "ASAN_OPTIONS=detect_leaks=0", NULL };
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2); /* its warning that A is alive is expected */
        execve(tool, args, env);
        _exit(127);
    }
    status = reap(forced, 10);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    b = fork();
    REQUIRE(b >= 0);
    if (b == 0) {
        struct swerve_claim *x = take("X");
        REQUIRE(write(b_ready[1], "b", 1) == 1);
        REQUIRE(read(b_go[0], &byte, 1) == 1);
        REQUIRE(api.held(x));
        api.free(x);
        _exit(0);
    }
    REQUIRE(read(b_ready[0], &byte, 1) == 1);
    REQUIRE(kill(a, SIGCONT) == 0);
    REQUIRE(WIFEXITED(reap(a, 10)));
    if (!claim_exists("X") || free_now("X")) {
        fprintf(stderr, "attacker: A's late %s removed B's claim: X could be taken while B held it\n",
                by_free ? "free" : "release");
        kill(b, SIGKILL);
        return 1;
    }
    REQUIRE(write(b_go[1], "g", 1) == 1);
    status = reap(b, 10);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}

/* ----------------------------------------------------------- attack 7 */

/* drop-after-register UID: a root process that has claimed and forked
 * (so it is registered as root) drops to UID for good; claims must keep
 * working, and the directory must go when it ends. */
static int drop_after_register(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    struct swerve_claim *c = take("a");
    pid_t pid;

    api.free(c);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(0);
    REQUIRE(WIFEXITED(reap(pid, 10)));
    become(uid);
    c = take("b");
    REQUIRE(api.release(c) == 0);
    c = take("c");
    api.free(c);
    return 0;
}

/* ----------------------------------------------------------- attack 8 */

/* Fills the filesystem of DIR to the last byte. */
static void fill(const char *dir)
{
    static char block[4096];
    char path[4200];
    int fd;

    snprintf(path, sizeof path, "%s/filler", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    while (write(fd, block, sizeof block) > 0)
        ;
    while (write(fd, block, 1) > 0)
        ;
    close(fd);
}

/* torn-journal: on a full filesystem (the base is a small tmpfs), a
 * journal line that would straddle a page fails; a claim taken once there
 * is room again must still be cleared when its holder is SIGKILLed. */
static int torn_journal(char **argv)
{
    const char *base = getenv("SWERVE_TMPDIR");
    pid_t pid;
    int status, report[2];

    (void)argv;
    REQUIRE(pipe(report) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char holder[4200], name[64], filler[4200];
        struct stat st;
        struct swerve_claim *c;
        int n = 0, failed_with;

        (void)take("first");
        holder_of(getpid(), holder, sizeof holder);
        /* Journal lines up to six bytes short of the page's end. */
        for (;;) {
            REQUIRE(stat(holder, &st) == 0);
            if (4096 - st.st_size < 40)
                break;
            snprintf(name, sizeof name, "n%d", n++);
            api.free(take(name));
        }
        if (4096 - st.st_size > 8) {
            snprintf(name, sizeof name, "%.*s", (int)(4096 - st.st_size - 7),
                     "pppppppppppppppppppppppppppppppppppppppp");
            api.free(take(name));
        }
        fill(base);
        c = api.new_claim("a-name-whose-journal-line-needs-the-next-page");
        REQUIRE(c != NULL);
        failed_with = api.acquire(c, 0) == NULL ? errno : 0;
        snprintf(filler, sizeof filler, "%s/filler", base);
        REQUIRE(unlink(filler) == 0);
        if (failed_with != ENOSPC) {
            fprintf(stderr, "attacker: acquire on a full filesystem gave errno %d, not ENOSPC\n", failed_with);
            _exit(1);
        }
        (void)take("z");
        REQUIRE(write(report[1], "t", 1) == 1);
        die();
    }
    close(report[1]);
    status = reap(pid, 10);
    if (WIFEXITED(status))
        return 1; /* it said why */
    {
        char byte;
        REQUIRE(read(report[0], &byte, 1) == 1);
    }
    if (claim_exists("z")) {
        fprintf(stderr, "attacker: the SIGKILLed holder's claim z was not cleared when it was reaped\n");
        return 1;
    }
    return 0;
}

/* big-journal: a worker with a 4 MB journal dies; reaping it must not
 * block the master (bounded work). */
static int big_journal(char **argv)
{
    double t0;
    int dead[2];
    pid_t pid;

    (void)argv;
    REQUIRE(pipe(dead) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char holder[4200], line[64];
        int fd;
        (void)take("x");
        holder_of(getpid(), holder, sizeof holder);
        fd = open(holder, O_WRONLY | O_APPEND);
        REQUIRE(fd >= 0);
        for (long i = 0, written = 0; written < 4L << 20; i++) {
            int len = snprintf(line, sizeof line, "name-%09ld\n", i);
            REQUIRE(write(fd, line, (size_t)len) == len);
            written += len;
        }
        close(fd);
        die();
    }
    close(dead[1]);
    {
        char byte;
        int status;
        /* End of file: it has written its journal and died; only the
         * reaping is timed. */
        REQUIRE(read(dead[0], &byte, 1) == 0);
        t0 = now_s();
        REQUIRE(waitpid(pid, &status, 0) == pid);
    }
    t0 = now_s() - t0;
    printf("reaping took %.1f ms\n", t0 * 1e3);
    if (t0 > 0.5) {
        fprintf(stderr, "attacker: reaping a worker with a 4 MB journal blocked the master %.2f s\n", t0);
        return 1;
    }
    REQUIRE(free_now("x"));
    return 0;
}

/* ---------------------------------------------------------- attack 13 */

/*
 * move-claims UID DEST T: a worker of UID moves its server's claims/ to
 * DEST, outside the claim directory, so that its ".." is DEST's parent.
 * A second worker then becomes UID (the master lets that user in), takes
 * a name and is killed (the master clears it and its page of times, whose
 * name the driver plants as another user's file in DEST's parent once it
 * reads "victim PID" and T/bait exists); last, the master drops to UID for
 * good (it hands its directory over), says "done" and waits for T/go.
 * None of it may touch DEST's parent.
 */
static int move_claims(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *dest = argv[1], *t = argv[2];
    char claims[4096], path[4200];
    pid_t mover, victim;

    (void)take("m");
    claims_dir(claims, sizeof claims);
    mover = fork();
    REQUIRE(mover >= 0);
    if (mover == 0) {
        become(uid);
        (void)take("a");
        REQUIRE(rename(claims, dest) == 0);
        _exit(0);
    }
    REQUIRE(WIFEXITED(reap(mover, 10)));
    victim = fork();
    REQUIRE(victim >= 0);
    if (victim == 0) {
        snprintf(path, sizeof path, "%s/bait", t);
        wait_for_file(path);
        become(uid);
        (void)take("v");
        die();
    }
    printf("victim %d\n", (int)victim);
    fflush(stdout);
    (void)reap(victim, 10);
    become(uid);
    (void)take("d");
    say("done");
    snprintf(path, sizeof path, "%s/go", t);
    wait_for_file(path);
    return 0;
}

/* flip-dir A B SECONDS: renames A to B and back, for SECONDS. */
static int flip_dir(char **argv)
{
    double end = now_s() + atof(argv[2]);
    long flips = 0;

    while (now_s() < end)
        for (int i = 0; i < 256; i++, flips++)
            (void)rename((flips & 1) == 0 ? argv[0] : argv[1], (flips & 1) == 0 ? argv[1] : argv[0]);
    printf("flips %ld\n", flips);
    return 0;
}

/* ---------------------------------------------------------- attack 14 */

/* How long the master's waitpid() takes to reap PID once it has died
 * (DEAD: a pipe whose write end only PID held), in ms; its status in
 * *STATUS. */
static double time_reap(pid_t pid, int dead, int *status)
{
    double t0;
    char byte;

    REQUIRE(read(dead, &byte, 1) == 0);
    close(dead);
    t0 = now_s();
    alarm(10);
    REQUIRE(waitpid(pid, status, 0) == pid);
    alarm(0);
    return (now_s() - t0) * 1e3;
}

/* COUNT hard links of TARGET (in the claims directory) named PREFIX and
 * a number: unjournaled entries, as a worker can make them. */
static void plant_links(const char *target, const char *prefix, long count)
{
    char claims[4096], from[4200], to[4200];

    claims_dir(claims, sizeof claims);
    snprintf(from, sizeof from, "%s/%s", claims, target);
    for (long i = 0; i < count; i++) {
        snprintf(to, sizeof to, "%s/%s%07ld", claims, prefix, i);
        REQUIRE(link(from, to) == 0);
    }
}

/*
 * plant-entries UID N: a worker plants one unjournaled link of a second
 * worker's holder file and N entries in claims/ (links of files of its
 * own, 50,000 a file), and the master times reaping the second worker; then a third
 * worker takes a name, links its own holder file 60,000 times under
 * unjournaled names, and dies, and the master times reaping it too.
 * Every name either left behind must be free.
 */
static int plant_entries(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    long planted = atol(argv[1]);
    char name[64];
    int victim_dead, planter_dead, own_dead, ready[2], status;
    pid_t victim, planter, own;

    (void)take("m");
    REQUIRE(pipe(ready) == 0);
    victim = worker_with_pipe(uid, &victim_dead);
    if (victim == 0) {
        (void)take("b");
        REQUIRE(write(ready[1], "r", 1) == 1);
        pause();
        _exit(1);
    }
    REQUIRE(read(ready[0], name, 1) == 1);
    planter = worker_with_pipe(uid, &planter_dead);
    if (planter == 0) {
        char claims[4096], path[4200], prefix[32];
        /* Before the rest: tmpfs lists the newest entries first. */
        snprintf(name, sizeof name, ".holder.%d", (int)victim);
        plant_links(name, "extra", 1);
        claims_dir(claims, sizeof claims);
        for (long i = 0; i * 50000 < planted; i++) {
            long links = planted - i * 50000 < 50000 ? planted - i * 50000 : 50000;
            int fd;
            snprintf(name, sizeof name, "junk%ld", i);
            snprintf(path, sizeof path, "%s/%s", claims, name);
            REQUIRE((fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0);
            close(fd);
            snprintf(prefix, sizeof prefix, "p%ld.", i);
            plant_links(name, prefix, links);
        }
        _exit(0);
    }
    (void)time_reap(planter, planter_dead, &status);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(kill(victim, SIGKILL) == 0);
    printf("reaping a worker beside %ld planted entries took %.1f ms\n", planted,
           time_reap(victim, victim_dead, &status));
    own = worker_with_pipe(uid, &own_dead);
    if (own == 0) {
        (void)take("c");
        snprintf(name, sizeof name, ".holder.%d", (int)getpid());
        plant_links(name, "own", 60000);
        die();
    }
    printf("reaping a worker that left 60000 unjournaled links took %.1f ms\n", time_reap(own, own_dead, &status));
    fflush(stdout);
    REQUIRE(free_now("b") && free_now("extra0000000") && free_now("c"));
    REQUIRE(free_now("own0000000") && free_now("own0059999"));
    return 0;
}

/* ---------------------------------------------------------- attack 10 */

/* acquire NAME: prints "acquired" or "errno N". */
/* ---------------------------------------------------------- attack 12 */

/* The path of process PID's page of times (src/fs/times.h). */
static void times_of(pid_t pid, char *out, size_t cap)
{
    char dir[4096];

    claims_dir(dir, sizeof dir);
    snprintf(out, cap, "%s/../.times.%d", dir, (int)pid);
}

/* A worker of UID that takes NAME, then does TAMPER to its own page of
 * times and to its master's name for one, says "planted" in T/planted.N,
 * and stays alive until T/go. */
static pid_t tampering_worker(uid_t uid, const char *name, const char *t, int n, void (*tamper)(const char *t))
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        char path[4200];
        int fd;
        become(uid);
        (void)take(name);
        tamper(t);
        snprintf(path, sizeof path, "%s/planted.%d", t, n);
        REQUIRE((fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0);
        close(fd);
        snprintf(path, sizeof path, "%s/go", t);
        wait_for_file(path);
        _exit(0);
    }
    return pid;
}

/* Its own page scribbled on (a count past the end, a wait for no name);
 * the master's page, not made yet, planted as a symlink to T/victim. */
static void scribble(const char *t)
{
    char page[4200], victim[4200];
    unsigned char junk[4096];
    int fd;

    memset(junk, 0xff, sizeof junk);
    times_of(getpid(), page, sizeof page);
    REQUIRE((fd = open(page, O_WRONLY)) >= 0);
    REQUIRE(pwrite(fd, junk + 4, sizeof junk - 4, 4) == (ssize_t)sizeof junk - 4);
    close(fd);
    times_of(getppid(), page, sizeof page);
    snprintf(victim, sizeof victim, "%s/victim", t);
    REQUIRE(symlink(victim, page) == 0);
}

/* Its own page made a FIFO, for root's list to block on. */
static void fifo_page(const char *t)
{
    char page[4200];

    (void)t;
    times_of(getpid(), page, sizeof page);
    REQUIRE(unlink(page) == 0);
    REQUIRE(mkfifo(page, 0666) == 0);
}

/* Two workers of UID that take NAMES and do TAMPERS (tampering_worker()),
 * once both have planted: their pids in PIDS. */
static void two_tamperers(uid_t uid, const char *t, const char *const names[2], void (*const tampers[2])(const char *),
                          pid_t pids[2])
{
    char path[4200];

    for (int n = 1; n <= 2; n++)
        pids[n - 1] = tampering_worker(uid, names[n - 1], t, n, tampers[n - 1]);
    for (int n = 1; n <= 2; n++) {
        snprintf(path, sizeof path, "%s/planted.%d", t, n);
        wait_for_file(path);
    }
}

/* The master says WHAT, waits for T/go, and reaps the two workers PIDS. */
static void say_and_wait(const char *what, const char *t, const pid_t pids[2])
{
    char path[4200];

    say(what);
    snprintf(path, sizeof path, "%s/go", t);
    wait_for_file(path);
    REQUIRE(WIFEXITED(reap(pids[0], 10)) && WIFEXITED(reap(pids[1], 10)));
}

/* times-plant UID T: two workers tamper with pages of times (above); the
 * master then takes "m", which makes its own page, says "claimed", and
 * waits for T/go while the driver checks the damage and lists. */
static int times_plant(char **argv)
{
    static const char *const names[2] = { "w", "v" };
    static void (*const tampers[2])(const char *) = { scribble, fifo_page };
    pid_t pids[2];

    two_tamperers((uid_t)atol(argv[0]), argv[1], names, tampers, pids);
    (void)take("m");
    say_and_wait("claimed", argv[1], pids);
    return 0;
}

/* ---------------------------------------------------------- attack 20 */

/* SIGTERM ignored, so that the master's drain signal leaves it alive; its
 * page of times replaced by a symlink to T/victim. */
static void page_to_victim(const char *t)
{
    char page[4200], victim[4200];

    REQUIRE(signal(SIGTERM, SIG_IGN) != SIG_ERR);
    times_of(getpid(), page, sizeof page);
    snprintf(victim, sizeof victim, "%s/victim", t);
    REQUIRE(unlink(page) == 0 && symlink(victim, page) == 0);
}

/* The same, its page replaced by a FIFO. */
static void page_to_fifo(const char *t)
{
    REQUIRE(signal(SIGTERM, SIG_IGN) != SIG_ERR);
    fifo_page(t);
}

/* drain-plant UID T: two workers of UID take a claim each, then put a
 * symlink to T/victim and a FIFO in the place of their pages of times;
 * the root master sends both a drain signal (its hook notes it in their
 * pages), says "signalled", and waits for T/go while the driver runs
 * root's swerve-claim drain on them too. */
static int drain_plant(char **argv)
{
    static const char *const names[2] = { "d1", "d2" };
    static void (*const tampers[2])(const char *) = { page_to_victim, page_to_fifo };
    pid_t pids[2];

    two_tamperers((uid_t)atol(argv[0]), argv[1], names, tampers, pids);
    (void)take("m");
    REQUIRE(kill(pids[0], SIGTERM) == 0 && kill(pids[1], SIGTERM) == 0);
    say_and_wait("signalled", argv[1], pids);
    return 0;
}

/* SIGTERM ignored; its master's page of times (root's, a page's size,
 * one link) renamed into the place of its own: the worker may write the
 * directory's top. */
static void page_of_master(const char *t)
{
    char mine[4200], masters[4200];

    (void)t;
    REQUIRE(signal(SIGTERM, SIG_IGN) != SIG_ERR);
    times_of(getpid(), mine, sizeof mine);
    times_of(getppid(), masters, sizeof masters);
    REQUIRE(rename(masters, mine) == 0);
}

/* The master waits for T/NAME, then says WHAT and whether it drains
 * itself now. */
static void say_draining(const char *t, const char *name, const char *what)
{
    char path[4200];

    snprintf(path, sizeof path, "%s/%s", t, name);
    wait_for_file(path);
    printf("%s %d\n", what, api.draining());
    fflush(stdout);
}

/* drain-steal UID T: the root master takes "m" (its page of times is
 * made), then a worker of UID takes "w" and puts the master's page in the
 * place of its own (page_of_master); the master sends it a drain signal
 * and says whether it drains itself ("signalled 0"), then again once the
 * driver, which ran root's swerve-claim drain -p on the worker, made
 * T/told ("told 0"); it waits for T/go. */
static int drain_steal(char **argv)
{
    char go[4200];
    pid_t worker;

    REQUIRE(api.draining != NULL);
    (void)take("m");
    worker = tampering_worker((uid_t)atol(argv[0]), "w", argv[1], 1, page_of_master);
    printf("worker %d\n", (int)worker);
    say_draining(argv[1], "planted.1", "planted");
    REQUIRE(kill(worker, SIGTERM) == 0);
    say_draining(argv[1], "planted.1", "signalled");
    say_draining(argv[1], "told", "told");
    snprintf(go, sizeof go, "%s/go", argv[1]);
    wait_for_file(go);
    REQUIRE(WIFEXITED(reap(worker, 10)));
    return 0;
}

static int acquire_once(char **argv)
{
    struct swerve_claim *c = api.new_claim(argv[0]);

    REQUIRE(c != NULL);
    if (api.acquire(c, 0) != NULL)
        printf("acquired\n");
    else
        printf("errno %d\n", errno);
    api.free(c);
    return 0;
}

/* start-time: how long this process's start as a server takes (its
 * first fork, and its first claim, which makes the claim directory and
 * sweeps the base), in ms. */
static int start_time(char **argv)
{
    double t0 = now_s();
    pid_t pid = fork();

    (void)argv;
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(0);
    api.free(take("first"));
    printf("%.3f\n", (now_s() - t0) * 1e3);
    REQUIRE(WIFEXITED(reap(pid, 10)));
    return 0;
}

/* ---------------------------------------------------------- attack 15 */

/* The start time of PID in clock ticks, as /proc/PID/stat says: public. */
static unsigned long long start_of(pid_t pid)
{
    char path[64], stat[1024], *paren;
    unsigned long long start = 0;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    n = read(fd, stat, sizeof stat - 1);
    close(fd);
    REQUIRE(n > 0);
    stat[n] = '\0';
    paren = strrchr(stat, ')');
    REQUIRE(paren != NULL);
    /* The start time is field 22; field 3, the state, follows the ')'. */
    for (int field = 3; field <= 22 && paren != NULL; field++)
        paren = strchr(paren + 1, ' ');
    REQUIRE(paren != NULL && sscanf(paren + 1, "%llu", &start) == 1);
    return start;
}

/* plant-holders D N PIDS: in D (made here, the caller's: an outside
 * user's claim directory), a holder file and a page of times for each
 * live process of PIDS (comma-separated), and N more names ".holder.K"
 * that are hard links of them, in turn (ext4 allows 65,000 links an
 * inode).  Prints how long the planting took.  plant-claims D N PIDS:
 * the same, but the N names are claims, of 200 bytes each ("cK" and
 * zeros): held by those processes, as the tools see them. */
static int plant_named(char **argv, int claims_named);

static int plant_holders(char **argv)
{
    return plant_named(argv, 0);
}

static int plant_claims(char **argv)
{
    return plant_named(argv, 1);
}

static int plant_named(char **argv, int claims_named)
{
    const char *d = argv[0];
    long n = atol(argv[1]);
    char claims[4200], path[4400], *pids = strdup(argv[2]), *tok, *save = NULL;
    static char page[4096];
    pid_t planted[64];
    int files = 0, dirfd;
    double t0 = now_s();
    uint32_t magic = 0x53434c54u; /* times.h: SCL_TIMES_MAGIC */

    REQUIRE(pids != NULL && n >= 0);
    snprintf(claims, sizeof claims, "%s/claims", d);
    REQUIRE(mkdir(d, 0700) == 0 && mkdir(claims, 0700) == 0);
    snprintf(path, sizeof path, "%s/wake", d);
    REQUIRE(close(open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) == 0);
    memcpy(page, &magic, sizeof magic);
    dirfd = open(claims, O_RDONLY | O_DIRECTORY);
    REQUIRE(dirfd >= 0);
    for (tok = strtok_r(pids, ",", &save); tok != NULL && files < 64; tok = strtok_r(NULL, ",", &save)) {
        pid_t pid = (pid_t)atol(tok);
        char head[64];
        int fd, len = snprintf(head, sizeof head, "%d %llu\n", (int)pid, start_of(pid));
        snprintf(path, sizeof path, ".holder.%d", (int)pid);
        fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        REQUIRE(fd >= 0 && write(fd, head, (size_t)len) == len && close(fd) == 0);
        snprintf(path, sizeof path, "%s/.times.%d", d, (int)pid);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        REQUIRE(fd >= 0 && write(fd, page, sizeof page) == (ssize_t)sizeof page && close(fd) == 0);
        planted[files++] = pid;
    }
    REQUIRE(files > 0);
    for (long k = 0; k < n; k++) {
        char from[64], to[256];
        snprintf(from, sizeof from, ".holder.%d", (int)planted[k % files]);
        if (claims_named)
            snprintf(to, sizeof to, "c%ld%0190d", 10000000 + k, 0);
        else
            snprintf(to, sizeof to, ".holder.%ld", 10000000 + k);
        REQUIRE(linkat(dirfd, from, dirfd, to, 0) == 0);
    }
    close(dirfd);
    free(pids);
    printf("planted %ld names in %.1f s\n", n, now_s() - t0);
    return 0;
}

/* ---------------------------------------------------------- attack 18 */

/* plant-place KIND T: run as the attacker, exec'd by a worker, under the
 * shim: puts KIND (dir, symlink to T/victim, fifo) at the place its
 * server reserved for its claim directory, which SWERVE_CLAIM_DIR names,
 * before any process of the server made it. */
static int plant_place(char **argv)
{
    const char *place = getenv("SWERVE_CLAIM_DIR");
    char victim[4200];

    REQUIRE(place != NULL && place[0] == '/');
    snprintf(victim, sizeof victim, "%s/victim", argv[1]);
    if (strcmp(argv[0], "dir") == 0)
        REQUIRE(mkdir(place, 0700) == 0);
    else if (strcmp(argv[0], "symlink") == 0)
        REQUIRE(symlink(victim, place) == 0);
    else
        REQUIRE(strcmp(argv[0], "fifo") == 0 && mkfifo(place, 0600) == 0);
    return 0;
}

/* Takes "x", which must fail with an error other than "held": the place is
 * somebody else's, and no directory of one's own may stand in for it
 * (siblings would each have their own).  Prints WHO and the errno. */
static int refused_place(const char *who)
{
    struct swerve_claim *c = api.new_claim("x");
    int refused;

    REQUIRE(c != NULL);
    errno = 0;
    refused = api.acquire(c, 0) == NULL && errno != 0 && errno != EWOULDBLOCK;
    printf("%s errno %d\n", who, errno);
    fflush(stdout);
    api.free(c);
    return refused;
}

/* A worker that drops to UID (made the directory, as root, first), then
 * puts a directory of its own in place of claims/, with a holder file of
 * its own pid in it, and dies. */
__attribute__((noreturn)) static void replace_claims(uid_t uid)
{
    char claims[4200], old[4300], holder[4400];

    become(uid);
    claims_dir(claims, sizeof claims);
    snprintf(old, sizeof old, "%s.old", claims);
    snprintf(holder, sizeof holder, "%s/.holder.%d", claims, (int)getpid());
    REQUIRE(rename(claims, old) == 0 && mkdir(claims, 0700) == 0);
    REQUIRE(close(open(holder, O_WRONLY | O_CREAT | O_EXCL, 0600)) == 0);
    die();
}

/* squat-place KIND UID T: the master forks a worker that drops to UID by
 * raw system calls (no hook sees the drop, so nothing is made before it)
 * and execs plant-place; or, for KIND "claims", one that drops through
 * the hooks (which make the directory first) and replaces its claims/.
 * The master reaps it (and looks at the place), then a root worker and
 * the master itself try to claim: each fails, and nothing blocks (the
 * driver's timeout, reap()'s alarm). */
static int squat_place(char **argv)
{
    uid_t uid = (uid_t)atol(argv[1]);
    int replaces = strcmp(argv[0], "claims") == 0;
    pid_t pid = fork();
    int status;

    REQUIRE(pid >= 0);
    if (pid == 0 && replaces)
        replace_claims(uid);
    if (pid == 0) {
        REQUIRE(syscall(SYS_setresgid, uid, uid, uid) == 0 && syscall(SYS_setresuid, uid, uid, uid) == 0);
        execl("/proc/self/exe", "attacker", "plant-place", argv[0], argv[2], (char *)NULL);
        _exit(127);
    }
    status = reap(pid, 10);
    REQUIRE(replaces ? WIFSIGNALED(status) : WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(refused_place("worker") ? 0 : 1);
    status = reap(pid, 10);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    REQUIRE(refused_place("master"));
    return 0;
}

/* ---------------------------------------------------------- attack 20 */

/* The path of the server's history (src/fs/layout.h). */
static void history_of(char *out, size_t cap)
{
    char dir[4096];

    claims_dir(dir, sizeof dir);
    snprintf(out, cap, "%s/../history", dir);
}

/* Calls FN on each mapping of this process whose line of
 * /proc/self/maps (its newline cut) WANTED takes, with its bounds:
 * how many it found. */
static int each_mapping(int (*wanted)(const char *line, size_t len),
                        void (*fn)(unsigned char *lo, unsigned char *hi, void *arg), void *arg)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4600];
    int found = 0;

    REQUIRE(maps != NULL);
    while (fgets(line, sizeof line, maps) != NULL) {
        unsigned long lo, hi;
        size_t len = strcspn(line, "\n");
        line[len] = '\0';
        if (!wanted(line, len) || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
            continue;
        fn((unsigned char *)lo, (unsigned char *)hi, arg);
        found++;
    }
    fclose(maps);
    return found;
}

static int is_history(const char *line, size_t len)
{
    return len >= 8 && strcmp(line + len - 8, "/history") == 0;
}

static void scribble_history_at(unsigned char *lo, unsigned char *hi, void *arg)
{
    for (unsigned char *p = lo + 64; p < hi; p++)
        *p = (unsigned char)(0xf1 + (p - lo) % 13);
    *(size_t *)arg += (size_t)(hi - lo - 64);
}

/* Scribbles over what this process has mapped of the server's history
 * (a forked worker inherits its master's mapping, and finds it in its
 * /proc/self/maps), but for its head: names that are not names, huge
 * lengths and counts, records of no name with times past any clock and
 * no known end, commands without an end.  How many bytes it wrote. */
static size_t scribble_history(void)
{
    size_t done = 0;

    (void)each_mapping(is_history, scribble_history_at, &done);
    return done;
}

/* Puts what MAKE makes in place of the server's history, a worker's. */
static void replace_history(int (*make)(const char *path, const char *t), const char *t)
{
    char path[4200];

    history_of(path, sizeof path);
    REQUIRE(unlink(path) == 0 || errno == ENOENT);
    REQUIRE(make(path, t) == 0);
}

static int make_fifo(const char *path, const char *t)
{
    (void)t;
    return mkfifo(path, 0666);
}

static int make_link(const char *path, const char *t)
{
    char victim[4200];

    snprintf(victim, sizeof victim, "%s/victim", t);
    return symlink(victim, path);
}

/* A worker of UID that takes "w", tries to truncate the history its
 * master maps (SIGBUS for the master, had it worked), scribbles on it
 * through its own mapping, and dies holding "w" for its master to reap
 * and clear: both write through their mapping. */
static void scribbling_worker(uid_t uid)
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        char path[4200];
        become(uid);
        (void)take("w");
        history_of(path, sizeof path);
        if (truncate(path, 0) == 0)
            fprintf(stderr, "attacker: the worker truncated %s\n", path);
        if (scribble_history() == 0)
            fprintf(stderr, "attacker: the worker found no history mapped\n");
        die();
    }
    REQUIRE(WIFSIGNALED(reap(pid, 10)));
}

/* history-tamper UID T: the master (root) says its pid ("master PID") and
 * takes "m"; a worker scribbles
 * on the history and dies holding "w"; the master reaps it, takes and
 * releases "after", says "scribbled" and waits for T/fifo-go.  A worker
 * then puts a FIFO in place of the history ("fifo", then T/link-go), and
 * then a symlink to T/victim ("link", then T/go), while the driver runs
 * root's tools against each.  The master claims on all along. */
static int history_tamper(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1];
    int (*const makers[2])(const char *, const char *) = { make_fifo, make_link };
    static const char *const said[2] = { "fifo", "link" }, *const next[2] = { "link-go", "go" };
    struct swerve_claim *mine = take("m");
    char path[4200];

    printf("master %d\n", (int)getpid());
    scribbling_worker(uid);
    REQUIRE(api.release(mine) == 0);
    api.free(take("after"));
    say("scribbled");
    snprintf(path, sizeof path, "%s/fifo-go", t);
    wait_for_file(path);
    for (int i = 0; i < 2; i++) {
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            become(uid);
            replace_history(makers[i], t);
            _exit(0);
        }
        REQUIRE(WIFEXITED(reap(pid, 10)));
        api.free(take(said[i]));
        say(said[i]);
        snprintf(path, sizeof path, "%s/%s", t, next[i]);
        wait_for_file(path);
    }
    return 0;
}

/* ----------------------------------------------------- attacks 25 to 28 */

/* swerve_claim_wait_fd() (SWERVECLAIM_1.3): the loader has no field for
 * it yet. */
typedef int wait_fd_fn(struct swerve_claim *claim);

static wait_fd_fn *wait_fd_api(void)
{
    wait_fd_fn *f;

    *(void **)&f = dlsym(RTLD_DEFAULT, "swerve_claim_wait_fd");
    REQUIRE(f != NULL);
    return f;
}

/* The path of the waiters' FIFO of claim NAME: T/wait-names has a line
 * "NAME .wait.HASH" for it, which the driver computed with sha256sum from
 * the claim's file name, as any worker can. */
static void wait_path(const char *t, const char *name, char *out, size_t cap)
{
    char path[4200], line[256], claims[4096];
    size_t n = strlen(name);
    FILE *f;

    snprintf(path, sizeof path, "%s/wait-names", t);
    REQUIRE((f = fopen(path, "r")) != NULL);
    claims_dir(claims, sizeof claims);
    out[0] = '\0';
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, name, n) == 0 && line[n] == ' ')
            snprintf(out, cap, "%s/%s", claims, line + n + 1);
    }
    fclose(f);
    REQUIRE(out[0] != '\0');
}

/* Waits (at most 10 s) until a FIFO is at PATH: a waiter made it. */
static void wait_for_fifo(const char *path)
{
    struct stat st;

    for (int i = 0; i < 1000 && (lstat(path, &st) != 0 || !S_ISFIFO(st.st_mode)); i++)
        usleep(10000);
    REQUIRE(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode));
}

/* What an event loop's waiter saw: written by the waiter to its master. */
struct loop_result {
    int taken, overlap;
    long wakes, rounds;
    double taken_at, cpu, wall;
};

/* CPU seconds this process has used. */
static double cpu_s(void)
{
    struct rusage ru;

    REQUIRE(getrusage(RUSAGE_SELF, &ru) == 0);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* An event loop's wait for NAME, as the header's protocol says: a try,
 * then the descriptor of swerve_claim_wait_fd() polled for at most
 * ROUND_MS (the caller's own deadline: it then tries again), until the
 * name is taken or LIMIT seconds have passed.  R says how it went; the
 * handle holding the name, or NULL. */
static struct swerve_claim *loop_take(const char *name, int round_ms, double limit, struct loop_result *r)
{
    wait_fd_fn *wait_fd = wait_fd_api();
    struct swerve_claim *c = api.new_claim(name);
    double t0 = now_s(), c0 = cpu_s();

    REQUIRE(c != NULL);
    memset(r, 0, sizeof *r);
    while (api.acquire(c, 0) == NULL) {
        struct pollfd p = { .events = POLLIN };
        int n;
        REQUIRE(errno == EWOULDBLOCK);
        if (now_s() - t0 > limit) {
            api.free(c);
            c = NULL;
            break;
        }
        REQUIRE((p.fd = wait_fd(c)) >= 0);
        n = poll(&p, 1, round_ms);
        REQUIRE(n >= 0 || errno == EINTR);
        r->wakes += n > 0;
        r->rounds++;
    }
    r->taken = c != NULL;
    r->taken_at = now_s();
    r->wall = r->taken_at - t0;
    r->cpu = cpu_s() - c0;
    return c;
}

/* A worker that dropped to the attacker's uid (which clears the setting)
 * ends with its master: a master a check killed leaves none behind. */
static void tied_to_master(void)
{
    REQUIRE(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
    if (getppid() == 1)
        _exit(1);
}

/* What a worker plants in place of a name's FIFO. */
static const char *const plant_kinds[] = {
    "symlink-fifo", "symlink-file", "file", "hardlink-fifo", "dir", "socket", "fifo-noreader", "fifo-full",
};

/* T's outside object KIND points at. */
static void plant_target(const char *kind, const char *t, char *out, size_t cap)
{
    if (strcmp(kind, "symlink-fifo") == 0 || strcmp(kind, "hardlink-fifo") == 0)
        snprintf(out, cap, "%s/rootfifo", t);
    else if (strcmp(kind, "symlink-file") == 0)
        snprintf(out, cap, "%s/rootfile", t);
    else
        snprintf(out, cap, "%s/oth/fifo", t);
}

/* A worker's plant of KIND at P (the FIFO's name: no waiter has made it
 * yet).  fifo-full keeps the FIFO open and full: the caller stays. */
static void plant_at(const char *kind, const char *p, const char *t)
{
    char target[4200];

    plant_target(kind, t, target, sizeof target);
    (void)unlink(p);
    if (strncmp(kind, "symlink-", 8) == 0) {
        REQUIRE(symlink(target, p) == 0);
    } else if (strcmp(kind, "file") == 0) {
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
        REQUIRE(fd >= 0 && write(fd, "planted\n", 8) == 8);
        close(fd);
    } else if (strcmp(kind, "hardlink-fifo") == 0) {
        /* fs.protected_hardlinks lets nobody link a FIFO of another's,
         * root's or not: said, and where the link is refused the master
         * makes it, as a worker could where the setting is 0. */
        char other[4200];
        snprintf(other, sizeof other, "%s/oth/fifo", t);
        if (link(other, p) == 0) {
            say("foreign-fifo-link linked");
            REQUIRE(unlink(p) == 0);
        } else {
            printf("foreign-fifo-link refused %s\n", strerror(errno));
        }
        if (link(target, p) == 0) {
            say("root-fifo-link linked");
        } else {
            printf("root-fifo-link refused %s\n", strerror(errno));
        }
        fflush(stdout);
    } else if (strcmp(kind, "dir") == 0) {
        REQUIRE(mkdir(p, 0755) == 0);
    } else if (strcmp(kind, "socket") == 0) {
        struct sockaddr_un a = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        char dir[4200];
        /* Bound by its name in claims/: the path is longer than sun_path. */
        snprintf(dir, sizeof dir, "%s", p);
        *strrchr(dir, '/') = '\0';
        REQUIRE(chdir(dir) == 0);
        snprintf(a.sun_path, sizeof a.sun_path, "%s", strrchr(p, '/') + 1);
        REQUIRE(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0);
        close(fd);
    } else {
        REQUIRE(mkfifo(p, 0666) == 0);
        if (strcmp(kind, "fifo-full") == 0) {
            static char block[4096];
            int fd = open(p, O_RDWR | O_NONBLOCK);
            REQUIRE(fd >= 0);
            while (write(fd, block, sizeof block) > 0)
                ;
            REQUIRE(errno == EAGAIN); /* kept open, and full, by the caller */
        }
    }
}

/* 1 when what was planted at P is still as planted. */
static int plant_intact(const char *kind, const char *p, const char *t)
{
    char target[4200], buf[4200];
    struct stat st, outside;
    ssize_t n;
    int fd;

    plant_target(kind, t, target, sizeof target);
    if (lstat(p, &st) != 0)
        return 0;
    if (strncmp(kind, "symlink-", 8) == 0) {
        n = readlink(p, buf, sizeof buf - 1);
        return S_ISLNK(st.st_mode) && n > 0 && (buf[n] = '\0', strcmp(buf, target) == 0);
    }
    if (strcmp(kind, "file") == 0) {
        if (!S_ISREG(st.st_mode) || st.st_size != 8 || (fd = open(p, O_RDONLY | O_NOFOLLOW)) < 0)
            return 0;
        n = read(fd, buf, sizeof buf);
        close(fd);
        return n == 8 && memcmp(buf, "planted\n", 8) == 0;
    }
    if (strcmp(kind, "hardlink-fifo") == 0)
        return stat(target, &outside) == 0 && S_ISFIFO(st.st_mode) && st.st_ino == outside.st_ino && st.st_nlink == 2;
    if (strcmp(kind, "dir") == 0)
        return S_ISDIR(st.st_mode) && st.st_nlink == 2;
    if (strcmp(kind, "socket") == 0)
        return S_ISSOCK(st.st_mode);
    return S_ISFIFO(st.st_mode);
}

/* Runs root's `swerve-claim release --force` of NAME in the master's
 * server: its status; *MS how long it took. */
static int force_release(const char *tool, const char *base, const char *name, double *ms)
{
    char pidbuf[24];
    double t0 = now_s();
    pid_t pid;
    int status;

    snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char *const args[] = { (char *)tool, "--base", (char *)base, "release", "--force",
                               "--server",   pidbuf,   (char *)name, NULL };
        char *const env[] = { "PATH=/usr/bin:/bin", "ASAN_OPTIONS=detect_leaks=0", NULL };
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2); /* its warning that the holder is alive is expected */
        execve(tool, args, env);
        _exit(127);
    }
    status = reap(pid, 20);
    *ms = (now_s() - t0) * 1e3;
    return status;
}

/* A worker of UID that takes NAME and waits to be killed; returns once
 * it holds it, with *DEAD as worker_with_pipe() gives it.  RELEASE, when
 * not -1, is a pipe's read end: a byte there, and it releases the name
 * (then waits on). */
static pid_t holding_worker(uid_t uid, const char *name, int *dead, int release)
{
    int ready[2];
    char byte;
    pid_t pid;

    REQUIRE(pipe(ready) == 0);
    pid = worker_with_pipe(uid, dead);
    if (pid == 0) {
        struct swerve_claim *c = take(name);
        REQUIRE(write(ready[1], "h", 1) == 1);
        tied_to_master();
        if (release >= 0) {
            REQUIRE(read(release, &byte, 1) == 1);
            REQUIRE(api.release(c) == 0);
        }
        sleep(60);
        _exit(0);
    }
    close(ready[1]);
    REQUIRE(read(ready[0], &byte, 1) == 1);
    close(ready[0]);
    return pid;
}

/*
 * wait-plant UID T TOOL BASE KINDS: for each plant of KINDS (a comma
 * list of plant_kinds; the claim is named after it), a worker of UID
 * plants it in place of the claim's waiters' FIFO; a worker holding the
 * claim is killed and reaped (the root master clears it and wakes its
 * waiters), a second one loses it to root's `release --force`, and the
 * master takes and releases it.  Each writes into the name's FIFO when a
 * FIFO of its own is there.  The master says how long each took
 * ("reaped KIND MS", "forced KIND MS STATUS") and whether the plant is
 * as planted ("intact KIND 1"), then "ending WALL-NS" before it ends and
 * removes its directory.
 */
static int wait_plant(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1], *tool = argv[2], *base = argv[3];
    pid_t stays[sizeof plant_kinds / sizeof plant_kinds[0]];
    size_t n_stays = 0;
    char kinds[256], *save = NULL;
    struct swerve_claim *mine = take("m");

    snprintf(kinds, sizeof kinds, "%s", argv[4]);
    for (char *kind = strtok_r(kinds, ",", &save); kind != NULL; kind = strtok_r(NULL, ",", &save)) {
        char p[4200], byte;
        int ready[2], dead, status;
        double ms;
        pid_t planter, holder;

        wait_path(t, kind, p, sizeof p);
        REQUIRE(pipe(ready) == 0);
        planter = fork();
        REQUIRE(planter >= 0);
        if (planter == 0) {
            become(uid);
            tied_to_master();
            plant_at(kind, p, t);
            REQUIRE(write(ready[1], "p", 1) == 1);
            if (strcmp(kind, "fifo-full") == 0)
                sleep(60); /* keeps the FIFO full until the master kills it */
            _exit(0);
        }
        close(ready[1]);
        REQUIRE(read(ready[0], &byte, 1) == 1);
        close(ready[0]);
        if (strcmp(kind, "fifo-full") == 0)
            stays[n_stays++] = planter;
        else
            REQUIRE(WIFEXITED(reap(planter, 10)));
        if (strcmp(kind, "hardlink-fifo") == 0 && access(p, F_OK) != 0) {
            char target[4200];
            plant_target(kind, t, target, sizeof target);
            REQUIRE(link(target, p) == 0);
            say("root-fifo-link made by the master, as a worker could with fs.protected_hardlinks = 0");
        }

        holder = holding_worker(uid, kind, &dead, -1);
        REQUIRE(kill(holder, SIGKILL) == 0);
        printf("reaped %s %.1f ms\n", kind, time_reap(holder, dead, &status));
        fflush(stdout);
        REQUIRE(free_now(kind)); /* cleared; the master's own release wakes too */

        holder = holding_worker(uid, kind, &dead, -1);
        status = force_release(tool, base, kind, &ms);
        printf("forced %s %.1f ms %d\n", kind, ms, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        REQUIRE(kill(holder, SIGKILL) == 0);
        (void)time_reap(holder, dead, &status);
        REQUIRE(free_now(kind));
        printf("intact %s %d\n", kind, plant_intact(kind, p, t));
        fflush(stdout);
    }
    for (size_t i = 0; i < n_stays; i++) {
        REQUIRE(kill(stays[i], SIGKILL) == 0);
        (void)reap(stays[i], 10);
    }
    REQUIRE(api.release(mine) == 0);
    api.free(mine);
    printf("ending %lld\n", wall_ns());
    fflush(stdout);
    return 0;
}

/* fifo-watch GO PATH...: not preloaded.  Holds each FIFO PATH open for
 * reading (so that a writer's open of it succeeds), says "watching", and
 * once GO exists (at most 60 s) says "PATH bytes N hup H" of each: the
 * bytes written into it, and whether a writer opened and closed it. */
static int fifo_watch(char **argv)
{
    int fds[8], n = 0;

    for (char **p = argv + 1; *p != NULL && n < 8; p++, n++)
        REQUIRE((fds[n] = open(*p, O_RDONLY | O_NONBLOCK)) >= 0);
    say("watching");
    for (int i = 0; i < 6000 && access(argv[0], F_OK) != 0; i++)
        usleep(10000);
    for (int i = 0; i < n; i++) {
        struct pollfd p = { .fd = fds[i], .events = POLLIN };
        char buf[4096];
        long bytes = 0;
        ssize_t got;
        REQUIRE(poll(&p, 1, 0) >= 0);
        while ((got = read(fds[i], buf, sizeof buf)) > 0)
            bytes += got;
        printf("%s bytes %ld hup %d\n", argv[i + 1], bytes, (p.revents & POLLHUP) != 0);
    }
    fflush(stdout);
    return 0;
}

/*
 * wait-flood UID T SECONDS: a worker of UID holds "flooded"; another
 * waits for it from an event loop (wait_fd, polled 5 s at a time); a
 * third keeps the name's FIFO full (1 MiB when the pipe may grow so far)
 * for SECONDS, then the holder releases it while the flood goes on.  The
 * master says what the flooder wrote, what was left in the FIFO, how
 * often the waiter woke and tried, its CPU and the flooder's, and how
 * long after the release the waiter took the name.
 */
static int wait_flood(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1];
    double flood_s = atof(argv[2]), released_at;
    int go[2], got[2], stop[2], flood[2], dead, status;
    struct loop_result r;
    struct {
        long written, left, pipe_size;
        double cpu, wall;
    } f;
    char p[4200];
    pid_t holder, waiter, flooder;

    (void)take("m");
    wait_path(t, "flooded", p, sizeof p);
    REQUIRE(pipe(go) == 0 && pipe(got) == 0 && pipe(stop) == 0 && pipe(flood) == 0);
    holder = holding_worker(uid, "flooded", &dead, go[0]);
    waiter = fork();
    REQUIRE(waiter >= 0);
    if (waiter == 0) {
        struct swerve_claim *c;
        become(uid);
        tied_to_master();
        c = loop_take("flooded", 5000, 30, &r);
        REQUIRE(write(got[1], &r, sizeof r) == (ssize_t)sizeof r);
        if (c != NULL)
            api.free(c);
        _exit(0);
    }
    wait_for_fifo(p); /* the waiter made it */
    flooder = fork();
    REQUIRE(flooder >= 0);
    if (flooder == 0) {
        static char block[64 * 1024];
        double t0 = now_s(), c0;
        int fd;
        become(uid);
        tied_to_master();
        signal(SIGPIPE, SIG_IGN); /* the waiter closes the FIFO as it takes the name */
        c0 = cpu_s();
        memset(&f, 0, sizeof f);
        REQUIRE((fd = open(p, O_WRONLY | O_NONBLOCK)) >= 0);
        (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
        f.pipe_size = fcntl(fd, F_GETPIPE_SZ);
        while (now_s() - t0 < 60) {
            struct pollfd w[2] = { { .fd = fd, .events = POLLOUT }, { .fd = stop[0], .events = POLLIN } };
            ssize_t n = write(fd, block, sizeof block);
            if (n > 0) {
                f.written += n;
                continue;
            }
            if (errno == EPIPE) { /* no reader: nobody waits any more */
                REQUIRE(poll(w, 2, 100) >= 0 || errno == EINTR);
                if (w[1].revents != 0)
                    break;
                continue;
            }
            REQUIRE(errno == EAGAIN);
            REQUIRE(poll(w, 2, 100) >= 0 || errno == EINTR);
            if (w[1].revents != 0)
                break;
        }
        REQUIRE(ioctl(fd, FIONREAD, &status) == 0); /* left: nobody took it */
        f.left = status;
        f.cpu = cpu_s() - c0;
        f.wall = now_s() - t0;
        REQUIRE(write(flood[1], &f, sizeof f) == (ssize_t)sizeof f);
        _exit(0);
    }
    close(got[1]);
    close(flood[1]);
    usleep((useconds_t)(flood_s * 1e6));
    /* The holder's release, as the flood goes on. */
    released_at = now_s();
    REQUIRE(write(go[1], "r", 1) == 1);
    alarm(10);
    REQUIRE(read(got[0], &r, sizeof r) == (ssize_t)sizeof r);
    alarm(0);
    REQUIRE(write(stop[1], "s", 1) == 1);
    alarm(10);
    REQUIRE(read(flood[0], &f, sizeof f) == (ssize_t)sizeof f);
    alarm(0);
    REQUIRE(WIFEXITED(reap(waiter, 10)) && WIFEXITED(reap(flooder, 10)));
    REQUIRE(kill(holder, SIGKILL) == 0);
    (void)time_reap(holder, dead, &status);
    printf("flood wrote %ld bytes, %ld left, pipe %ld bytes, flooder cpu %.3f s over %.3f s\n", f.written, f.left,
           f.pipe_size, f.cpu, f.wall);
    printf("waiter taken %d, wakes %ld, tries %ld, cpu %.3f s over %.3f s\n", r.taken, r.wakes, r.rounds + 1, r.cpu,
           r.wall);
    printf("per try %.0f bytes\n", (double)(f.written - f.left) / (double)(r.rounds + 1));
    printf("taken after release %.1f ms\n", r.taken ? (r.taken_at - released_at) * 1e3 : -1.0);
    return 0;
}

/* A worker of UID that waits for NAME from an event loop (ROUND_MS at a
 * time), then holds it 200 ms, with T/inside-NAME made O_EXCL for the
 * while (so two holders at once are seen), releases it, writes its
 * loop_result to TO, and lives on for LINGER_MS (its end would wake the
 * next waiter, which watches it as the holder). */
static pid_t loop_worker(uid_t uid, const char *name, int round_ms, const char *t, int to, int linger_ms)
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        struct loop_result r;
        struct swerve_claim *c;
        char inside[4200];
        become(uid);
        tied_to_master();
        c = loop_take(name, round_ms, 30, &r);
        if (c != NULL) {
            int fd;
            snprintf(inside, sizeof inside, "%s/inside-%s", t, name);
            fd = open(inside, O_WRONLY | O_CREAT | O_EXCL, 0600);
            r.overlap = fd < 0;
            usleep(200000);
            if (fd >= 0) {
                close(fd);
                REQUIRE(unlink(inside) == 0);
            }
            REQUIRE(api.release(c) == 0);
            api.free(c);
        }
        REQUIRE(write(to, &r, sizeof r) == (ssize_t)sizeof r);
        usleep((useconds_t)linger_ms * 1000);
        _exit(0);
    }
    return pid;
}

/* A worker of UID that unlinks the FIFO P and makes another there. */
static void replace_fifo(uid_t uid, const char *p)
{
    pid_t pid = fork();

    REQUIRE(pid >= 0);
    if (pid == 0) {
        become(uid);
        REQUIRE(unlink(p) == 0 && mkfifo(p, 0666) == 0);
        _exit(0);
    }
    REQUIRE(WIFEXITED(reap(pid, 10)));
}

/* Reads a loop_result from FD (at most 40 s). */
static void read_result(int fd, struct loop_result *r)
{
    alarm(40);
    REQUIRE(read(fd, r, sizeof *r) == (ssize_t)sizeof *r);
    alarm(0);
}

/*
 * wait-replace UID T: a worker of UID holds "swapped", two more wait for
 * it from event loops (3 s rounds); a fourth replaces the name's FIFO
 * (unlink, mkfifo) under them; the holder releases.  Then a worker holds
 * "swapped2", another waits, the FIFO is replaced again, and the holder
 * is killed.  The master says after how long each waiter took its name
 * ("released: first MS wakes N, second MS wakes N"; "killed: MS wakes
 * N"), and "overlap" if two held one name at once.
 */
static int wait_replace(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1];
    int go[2], res[2], dead, status;
    struct loop_result a, b;
    double released_at;
    char p[4200];
    pid_t holder, w1, w2;

    (void)take("m");
    REQUIRE(pipe(go) == 0 && pipe(res) == 0);
    wait_path(t, "swapped", p, sizeof p);
    holder = holding_worker(uid, "swapped", &dead, go[0]);
    w1 = loop_worker(uid, "swapped", 3000, t, res[1], 4000);
    w2 = loop_worker(uid, "swapped", 3000, t, res[1], 4000);
    wait_for_fifo(p);
    usleep(300000); /* both wait */
    replace_fifo(uid, p);
    released_at = now_s();
    REQUIRE(write(go[1], "r", 1) == 1);
    read_result(res[0], &a);
    read_result(res[0], &b);
    if (b.taken_at < a.taken_at) {
        struct loop_result x = a;
        a = b;
        b = x;
    }
    printf("released: first %.0f ms wakes %ld, second %.0f ms wakes %ld\n", (a.taken_at - released_at) * 1e3, a.wakes,
           (b.taken_at - released_at) * 1e3, b.wakes);
    if (!a.taken || !b.taken || a.overlap || b.overlap)
        printf("overlap or not taken: %d %d %d %d\n", a.taken, b.taken, a.overlap, b.overlap);
    REQUIRE(WIFEXITED(reap(w1, 10)) && WIFEXITED(reap(w2, 10)));
    REQUIRE(kill(holder, SIGKILL) == 0);
    (void)time_reap(holder, dead, &status);

    wait_path(t, "swapped2", p, sizeof p);
    holder = holding_worker(uid, "swapped2", &dead, -1);
    w1 = loop_worker(uid, "swapped2", 3000, t, res[1], 0);
    wait_for_fifo(p);
    usleep(300000);
    replace_fifo(uid, p);
    released_at = now_s();
    REQUIRE(kill(holder, SIGKILL) == 0);
    (void)time_reap(holder, dead, &status);
    read_result(res[0], &a);
    printf("killed: %.0f ms wakes %ld\n", (a.taken_at - released_at) * 1e3, a.wakes);
    if (!a.taken || a.overlap)
        printf("overlap or not taken: %d %d\n", a.taken, a.overlap);
    REQUIRE(WIFEXITED(reap(w1, 10)));
    return 0;
}

/*
 * wait-entries UID N PREFIX: a worker of UID plants N entries named
 * PREFIX* in claims/ (".wait.", waiters' FIFOs, or ".new.", unfinished
 * holder files: both are the directory's to remove; hard
 * links of regular files of its own, 50,000 a file, and a thousand
 * FIFOs), and ends; the master says "ending WALL-NS" and ends, which
 * removes its directory.
 */
static int wait_entries(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    long planted = atol(argv[1]);
    const char *prefix = argv[2];
    pid_t pid;

    (void)take("m");
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char claims[4096], path[4200], name[64];
        become(uid);
        claims_dir(claims, sizeof claims);
        for (long i = 0; i < 1000 && i < planted; i++) {
            snprintf(path, sizeof path, "%s/%sfifo%07ld", claims, prefix, i);
            REQUIRE(mkfifo(path, 0666) == 0);
        }
        for (long i = 0; i * 50000 < planted - 1000; i++) {
            long links = planted - 1000 - i * 50000 < 50000 ? planted - 1000 - i * 50000 : 50000;
            int fd;
            snprintf(name, sizeof name, "%sfile%ld", prefix, i);
            snprintf(path, sizeof path, "%s/%s", claims, name);
            REQUIRE((fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0);
            close(fd);
            snprintf(path, sizeof path, "%sp%ld.", prefix, i);
            plant_links(name, path, links - 1);
        }
        _exit(0);
    }
    REQUIRE(WIFEXITED(reap(pid, 120)));
    printf("ending %lld\n", wall_ns());
    fflush(stdout);
    return 0;
}

/* Makes N holder files of dead processes in CLAIMS (pids past the
 * kernel's most), each with a journal of 32,000 names of nothing and,
 * last, the one claim it has: a clearer reads it all. */
static void plant_journals(const char *claims, long n)
{
    static char journal[64 * 1024];
    size_t len = 0;

    for (int i = 0; i < 32000; i++) {
        journal[len++] = 'a';
        journal[len++] = '\n';
    }
    for (long k = 0; k < n; k++) {
        char path[4200], claim[4200], head[64];
        long pid = 4200000 + k;
        size_t head_len = (size_t)snprintf(head, sizeof head, "%ld 1\n", pid);
        int fd, tail;
        snprintf(path, sizeof path, "%s/.holder.%ld", claims, pid);
        snprintf(claim, sizeof claim, "%s/z%ld", claims, pid);
        REQUIRE((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0);
        tail = snprintf(journal + len, 32, "z%ld\n", pid);
        REQUIRE(write(fd, head, head_len) == (ssize_t)head_len);
        REQUIRE(write(fd, journal, len + (size_t)tail) == (ssize_t)(len + (size_t)tail));
        close(fd);
        REQUIRE(link(path, claim) == 0);
    }
}

/* Links the holder file of this process under N holder names of other
 * pids (".holder.1" ..., skipping its own and its master's) in CLAIMS. */
static void plant_holder_names(const char *claims, long n)
{
    char from[4200], to[4200];

    snprintf(from, sizeof from, "%s/.holder.%ld", claims, (long)getpid());
    for (long pid = 1, made = 0; made < n; pid++) {
        if (pid == getpid())
            continue;
        snprintf(to, sizeof to, "%s/.holder.%ld", claims, pid);
        if (link(from, to) != 0) {
            REQUIRE(errno == EEXIST);
            continue; /* a member's own: its master's */
        }
        made++;
    }
}

/*
 * holder-names UID KIND N END: a worker of UID takes a name, plants N
 * holder files of KIND, and dies: "links", its own linked under other
 * pids' names; "journals", files of dead processes whose journals a
 * clearer reads whole.  The master reaps it, says "ending WALL-NS", and
 * either ends (END "exit", which removes its directory) or is killed as
 * by another process (END "kill": the directory is left to the next
 * server's sweep).
 */
static int holder_names(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    long planted = atol(argv[2]);
    pid_t pid;

    (void)take("m");
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char claims[4096];
        become(uid);
        (void)take("x");
        claims_dir(claims, sizeof claims);
        if (strcmp(argv[1], "journals") == 0)
            plant_journals(claims, planted);
        else
            plant_holder_names(claims, planted);
        _exit(0);
    }
    {
        int status = reap(pid, 120);
        REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    printf("ending %lld\n", wall_ns());
    fflush(stdout);
    if (strcmp(argv[3], "kill") == 0)
        die();
    return 0;
}

/* A shared anonymous mapping, writable: where parents mark their
 * children to drain. */
static int is_shared_anonymous(const char *line, size_t len)
{
    char perms[8];

    (void)len;
    return sscanf(line, "%*x-%*x %7s", perms) == 1 && strcmp(perms, "rw-s") == 0 &&
           strstr(line, "/dev/zero (deleted)") != NULL;
}

static void write_pid_over(unsigned char *lo, unsigned char *hi, void *arg)
{
    for (int *p = (int *)(void *)lo; p < (int *)(void *)hi; p++)
        *p = (int)*(pid_t *)arg;
}

/* Writes PID over every int of each shared anonymous page of this
 * process, and says how many pages it wrote. */
static void scribble_marks(pid_t pid)
{
    printf("scribbled %d\n", each_mapping(is_shared_anonymous, write_pid_over, &pid));
    fflush(stdout);
}

/*
 * drain-parent UID: this process (its server's master's parent, a shell
 * or a supervisor under the shim) forks the master, which takes "m" and
 * forks a worker of UID; the worker writes the master's pid over every
 * shared page it inherited and ends; the master says whether it drains
 * ("draining N").
 */
static int drain_parent(char **argv)
{
    pid_t master = fork();

    REQUIRE(master >= 0);
    if (master == 0) {
        pid_t worker;
        REQUIRE(api.draining != NULL);
        (void)take("m");
        worker = fork();
        REQUIRE(worker >= 0);
        if (worker == 0) {
            become((uid_t)atol(argv[0]));
            scribble_marks(getppid());
            _exit(0);
        }
        REQUIRE(WIFEXITED(reap(worker, 10)));
        printf("draining %d\n", api.draining());
        fflush(stdout);
        _exit(0);
    }
    REQUIRE(WIFEXITED(reap(master, 20)));
    return 0;
}

/* Execs IMAGE with the environment padded to LENGTH, through the raw
 * system call when RAW (the shim adds nothing), in a child whose output
 * goes to OUT: its exit status (99: E2BIG). */
static int exec_padded(char *const image[], size_t length, int raw, int out)
{
    char *vars[72];
    int status;
    pid_t pid;

    padded_env(vars, length);
    fflush(stdout);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        REQUIRE(dup2(out, 1) == 1);
        if (raw)
            syscall(SYS_execve, image[0], image, vars);
        else
            execve(image[0], image, vars);
        _exit(errno == E2BIG ? 99 : 98);
    }
    status = reap(pid, 30);
    REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) != 98);
    return WEXITSTATUS(status);
}

/*
 * exec-near-limit SELF: takes "x", finds by bisection the largest padding
 * the kernel takes for "SELF acquire x" without the shim's variable, then
 * execs that image, from a child of this holder, with the padding at 51
 * sizes up to that limit.  The image must join this server (x busy:
 * "errno") or the exec fail (E2BIG); it must never run outside it and
 * take x ("acquired": two holders).  Says "sizes 51 joined J refused R
 * outside K".
 */
static int exec_near_limit(char **argv)
{
    char *image[] = { argv[0], "acquire", "x", NULL };
    size_t fits = 4096, too_big = 6 * 1000 * 1000;
    int sink = open("/dev/null", O_WRONLY), joined = 0, refused = 0, outside = 0;

    REQUIRE(sink >= 0);
    REQUIRE(take("x") != NULL);
    for (int i = 0; i < 40 && too_big - fits > 1; i++) {
        size_t mid = fits + (too_big - fits) / 2;
        *(exec_padded(image, mid, 1, sink) == 0 ? &fits : &too_big) = mid;
    }
    REQUIRE(too_big - fits == 1);
    for (size_t size = fits - 100; size <= fits; size += 2) {
        char said[64] = "";
        int pipefd[2], status;
        ssize_t n;
        REQUIRE(pipe(pipefd) == 0);
        status = exec_padded(image, size, 0, pipefd[1]);
        close(pipefd[1]);
        n = read(pipefd[0], said, sizeof said - 1);
        close(pipefd[0]);
        said[n > 0 ? n : 0] = '\0';
        if (status == 99)
            refused++;
        else if (strncmp(said, "acquired", 8) == 0)
            outside++;
        else
            joined++;
    }
    close(sink);
    printf("sizes 51 joined %d refused %d outside %d\n", joined, refused, outside);
    return 0;
}

/* ---------------------------------------------------------- attack 31 */

/* deep-fds UID T DEPTH COUNT EACH: the master (root) takes a claim and
 * lets its descriptors reach COUNT and more (past its hard limit, as many
 * as that allows: root may lack CAP_SYS_RESOURCE in a container); a
 * worker that drops to UID takes a claim too (a member), makes
 * T/deep/x/x/.../swerve-claim.x, DEPTH levels of "x", and holds COUNT
 * descriptors of it (dup()s of one); with EACH 1, first one of a
 * directory swerve-claim.x beside each "x", the deepest first (distinct
 * directories, the deepest at the lowest numbers).  It says "worker PID
 * fds N" and waits (at most 150 s) for T/go; then both end. */
static int deep_fds(char **argv)
{
    uid_t uid = (uid_t)atol(argv[0]);
    const char *t = argv[1];
    long depth = atol(argv[2]), count = atol(argv[3]), each = atol(argv[4]);
    struct rlimit lim = { (rlim_t)count + 256, (rlim_t)count + 256 };
    pid_t pid;

    REQUIRE(depth > 0 && count > 0);
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
        REQUIRE(getrlimit(RLIMIT_NOFILE, &lim) == 0);
        lim.rlim_cur = lim.rlim_max;
        REQUIRE(setrlimit(RLIMIT_NOFILE, &lim) == 0);
    }
    (void)take("m");
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        char path[4200], line[64];
        long held = 0;
        struct stat st;
        int fd, up;
        become(uid);
        (void)take("w31");
        snprintf(path, sizeof path, "%s/deep", t);
        REQUIRE(mkdir(path, 0755) == 0 && (fd = open(path, O_RDONLY | O_DIRECTORY)) >= 0);
        for (long i = 0; i <= depth; i++) {
            int next;
            REQUIRE(mkdirat(fd, "swerve-claim.x", 0755) == 0);
            if (i == depth)
                break;
            REQUIRE(mkdirat(fd, "x", 0755) == 0 && (next = openat(fd, "x", O_RDONLY | O_DIRECTORY)) >= 0);
            close(fd);
            fd = next;
        }
        /* From the deepest up: one of each level's swerve-claim.x. */
        for (long i = depth; each && i >= 0 && held < count; i--) {
            REQUIRE(openat(fd, "swerve-claim.x", O_RDONLY | O_DIRECTORY) >= 0);
            held++;
            if (i > 0) {
                REQUIRE((up = openat(fd, "..", O_RDONLY | O_DIRECTORY)) >= 0);
                close(fd);
                fd = up;
            }
        }
        if (!each) {
            REQUIRE((up = openat(fd, "swerve-claim.x", O_RDONLY | O_DIRECTORY)) >= 0);
            close(fd);
            fd = up;
            held = 1;
        }
        for (; held < count && dup(fd) >= 0; held++)
            ;
        snprintf(line, sizeof line, "worker %d fds %ld", (int)getpid(), held);
        say(line);
        snprintf(path, sizeof path, "%s/go", t);
        for (int i = 0; i < 15000 && stat(path, &st) != 0; i++)
            usleep(10000);
        _exit(0);
    }
    REQUIRE(WIFEXITED(reap(pid, 200)));
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int args, needs_shim;
        int (*run)(char **argv);
    } scenarios[] = {
        { "journal-race", 5, 1, journal_race },
        { "flip", 2, 0, flip },
        { "fifo-holder", 2, 1, fifo_holder },
        { "start-once", 0, 1, start_once },
        { "wake-truncate", 1, 1, wake_truncate },
        { "temp-switch", 2, 1, temp_switch },
        { "release-after-force", 3, 1, release_after_force },
        { "drop-after-register", 1, 1, drop_after_register },
        { "torn-journal", 0, 1, torn_journal },
        { "big-journal", 0, 1, big_journal },
        { "acquire", 1, 1, acquire_once },
        { "start-time", 0, 1, start_time },
        { "times-plant", 2, 1, times_plant },
        { "drain-plant", 2, 1, drain_plant },
        { "drain-steal", 2, 1, drain_steal },
        { "move-claims", 3, 1, move_claims },
        { "flip-dir", 3, 0, flip_dir },
        { "plant-entries", 2, 1, plant_entries },
        { "plant-holders", 3, 0, plant_holders },
        { "plant-claims", 3, 0, plant_claims },
        { "plant-place", 2, 1, plant_place },
        { "squat-place", 3, 1, squat_place },
        { "history-tamper", 2, 1, history_tamper },
        { "wait-plant", 5, 1, wait_plant },
        { "fifo-watch", -1, 0, fifo_watch },
        { "wait-flood", 3, 1, wait_flood },
        { "wait-replace", 2, 1, wait_replace },
        { "wait-entries", 3, 1, wait_entries },
        { "holder-names", 4, 1, holder_names },
        { "drain-parent", 1, 1, drain_parent },
        { "exec-near-limit", 1, 1, exec_near_limit },
        { "deep-fds", 5, 1, deep_fds },
    };

    for (size_t i = 0; argc >= 2 && i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) != 0)
            continue;
        if (scenarios[i].args >= 0 ? argc - 2 != scenarios[i].args : argc - 2 < 2)
            break;
        if (scenarios[i].needs_shim && !swerve_claim_load(&api)) {
            fprintf(stderr, "attacker: libswerveclaim_preload.so is not loaded\n");
            return 2;
        }
        if (scenarios[i].run(argv + 2) != 0)
            return 1;
        printf("ok %s\n", argv[1]);
        return 0;
    }
    fprintf(stderr, "usage: attacker SCENARIO [ARG...]\n");
    return 2;
}
