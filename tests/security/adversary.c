/* SPDX-License-Identifier: MIT */
/*
 * An adversary that never sleeps (issue 40): run as root under the shim,
 * this program is a root master whose workers drop privileges.  Three
 * honest workers (the user OTH) claim and release the names h0, h1 and
 * h2 through the public API and write, in LOG (O_APPEND, one line an
 * event, CLOCK_MONOTONIC nanoseconds), when they got a name and when
 * they let go of it.  Beside them, hostile workers (the user ATT), forked
 * again whenever they die, do seeded random operations on everything
 * they can reach: the claims directory, its top and the base (link,
 * rename, unlink, symlink, write, truncate, mkdir, fill with thousands of
 * entries, hold descriptors), the shared pages they have mapped, fork,
 * and death by SIGKILL at random points.  The master itself reaps them
 * (its reaps timed) and takes names the hostile workers plant on.
 * tests/security/adversary.sh drives it, runs root's tools beside it and
 * checks what tests/security/adversary.sh says.
 *
 *   adversary serve ATT_UID OTH_UID T SECONDS SEED
 *   adversary start-once      a new root server below the same base
 *
 * T holds the canaries (T/outside, T/base/rootfile), the log T/holds.log
 * and the hostile workers' own output T/hostile.log.  The master says
 * "master PID", then once a second "stats ..." (reaps and their slowest,
 * its own acquires and their slowest, the hostile workers forked so far,
 * the current one's pid), and "stopped" once SIGTERM has ended every
 * worker.  The seed decides every hostile worker's sequence of
 * operations (worker G of the run uses the seed and G); the timing, and
 * so where a SIGKILL lands, is the machine's.
 *
 * It plays what issue 40 found too: ".holder.N" names that are links of
 * a hostile worker's own holder file (they stalled the master's exit),
 * fake claim directories in the base past the tools' bound of 1,024 (they
 * read them all), descriptors of directories 2,000 levels deep (root's
 * --server PID resolved each).
 */
#include "config.h"

#include <swerve/claim-loader.h>

#include "require.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct swerve_claim_api api;

#define HONEST   3
#define HOSTILE  2    /* hostile workers alive at once */
#define MAX_FDS  384  /* descriptors a hostile process holds at most */
#define MAX_FILL 2500 /* entries a fill leaves a directory with at most */
#define MAX_BASE 1100 /* entries in the base: past the tools' SCL_BUDGET_LOAD_DIRS */

static const char *const honest_names[HONEST] = { "h0", "h1", "h2" };

/* ----------------------------------------------------------- random */

static uint64_t rng_state;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(uint64_t seed, uint64_t stream)
{
    uint64_t s = seed ^ (stream * 0xd1b54a32d192ed03ull);

    rng_state = splitmix(&s);
}

/* A number from 0 to N - 1. */
static unsigned rnd(unsigned n)
{
    return n == 0 ? 0 : (unsigned)(splitmix(&rng_state) % n);
}

static int one_in(unsigned n)
{
    return rnd(n) == 0;
}

static long long mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ----------------------------------------------------------- places */

static char test_dir[1024], base[1100], top[1200], claims[1300];
static pid_t master, honest[HONEST];
static uid_t att_uid, oth_uid;
static uint64_t seed;
/* SCL_ADVERSARY_UNPROTECTED=1: the hostile workers unlink and rename the
 * honest names too, as doc/security.md says a worker can: (a) must then
 * fail, which shows that it can. */
static int unprotected;

/* The claims directory and its top, of the one server in the base. */
static void find_dir(void)
{
    DIR *d = opendir(base);
    struct dirent *e;

    REQUIRE(d != NULL);
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "swerve-claim.", 13) == 0 && strlen(e->d_name) == 25 &&
            strchr(e->d_name + 13, '.') == NULL) {
            snprintf(top, sizeof top, "%s/%s", base, e->d_name);
            snprintf(claims, sizeof claims, "%s/claims", top);
        }
    closedir(d);
    REQUIRE(top[0] != '\0');
}

static void become(uid_t uid)
{
    REQUIRE(setgroups(0, NULL) == 0);
    REQUIRE(setgid((gid_t)uid) == 0);
    REQUIRE(setuid(uid) == 0);
}

/* Killed, as by another process: a raw system call, since the shim's
 * hooks end a process that kills itself as an exit would. */
__attribute__((noreturn)) static void die(void)
{
    (void)syscall(SYS_kill, getpid(), SIGKILL);
    _exit(99);
}

static void die_on_alarm(int sig)
{
    (void)sig;
    die();
}

/* ------------------------------------------------------ honest workers */

static volatile sig_atomic_t stopping;

static void on_term(int sig)
{
    (void)sig;
    stopping = 1;
}

static void log_line(int fd, const char *name, const char *what)
{
    char line[128];
    int len = snprintf(line, sizeof line, "%lld %s %d %s\n", mono_ns(), name, (int)getpid(), what);

    REQUIRE(write(fd, line, (size_t)len) == len);
}

/* Takes and lets go of the honest names until SIGTERM or DEADLINE,
 * logging to LOG; the errors it got (a denial is no failure) on its
 * last line. */
__attribute__((noreturn)) static void honest_worker(int n, int log, double deadline)
{
    long errors[8] = { 0 }, holds = 0;
    static const int watched[7] = { EWOULDBLOCK, ETIMEDOUT, ESTALE, EPERM, ENOENT, ENOTDIR, EACCES };
    char line[256];

    become(oth_uid);
    /* Set after the drop, which clears it: a master killed takes it along. */
    REQUIRE(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
    if (getppid() != master)
        _exit(1);
    rng_seed(seed, 100 + (uint64_t)n);
    while (!stopping && now_s() < deadline) {
        const char *name = honest_names[rnd(HONEST)];
        struct swerve_claim *c = api.new_claim(name);
        double timeout = one_in(2) ? 0 : 0.05 * rnd(5);
        REQUIRE(c != NULL);
        if (api.acquire(c, timeout) != NULL) {
            log_line(log, name, "got");
            holds++;
            usleep(rnd(3000));
            log_line(log, name, "rel");
            (void)api.release(c);
        } else {
            int k = 0;
            while (k < 7 && watched[k] != errno)
                k++;
            errors[k]++;
        }
        api.free(c);
        usleep(200 + rnd(1500));
    }
    snprintf(line, sizeof line,
             "honest %d: %ld holds; denied EWOULDBLOCK %ld ETIMEDOUT %ld ESTALE %ld EPERM %ld ENOENT %ld ENOTDIR %ld "
             "EACCES %ld other %ld\n",
             (int)getpid(), holds, errors[0], errors[1], errors[2], errors[3], errors[4], errors[5], errors[6],
             errors[7]);
    REQUIRE(write(log, line, strlen(line)) > 0);
    exit(0);
}

/* ----------------------------------------------------- hostile workers */

enum place { CLAIMS, TOP, BASE, PLACES };

static const char *place_path(enum place p)
{
    return p == CLAIMS ? claims : p == TOP ? top : base;
}

/* Names a hostile worker never unlinks, renames or replaces in claims/:
 * the honest names, and the honest workers' holder files.  Doing so is
 * the one way a worker breaks exclusion within its own server, which
 * doc/security.md does not promise against ("What is not promised":
 * a worker can unlink or plant entries in its server's claims/ with
 * plain system calls). */
static int is_protected(enum place p, const char *name)
{
    char holder[64];

    if (p != CLAIMS)
        return 0;
    for (int i = 0; i < HONEST; i++) {
        snprintf(holder, sizeof holder, ".holder.%d", (int)honest[i]);
        if (strcmp(name, honest_names[i]) == 0 || strcmp(name, holder) == 0)
            return 1;
    }
    return 0;
}

/* The canaries: root's, outside every claim directory. */
static void canary(char *out, size_t cap)
{
    static const char *const names[] = { "outside/file", "outside/secret", "outside/dir",   "outside/dir/inner",
                                         "outside/fifo", "outside/link",   "base/rootfile", "outside" };
    const char *name = names[rnd(sizeof names / sizeof names[0])];

    switch (rnd(3)) {
    case 0: snprintf(out, cap, "%s/%s", test_dir, name); break;
    case 1: /* from claims/, three levels below T */ snprintf(out, cap, "../../../%s", name); break;
    default: /* from the top or a fake directory */ snprintf(out, cap, "../../%s", name);
    }
}

/* An entry of DIR picked at random (among its first 512: a directory
 * read whole at every operation would be most of the run's work), or "". */
static void pick_entry(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned seen = 0;

    out[0] = '\0';
    if (d == NULL)
        return;
    while (seen < 512 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (rnd(++seen) == 0 && strlen(e->d_name) < cap)
            memcpy(out, e->d_name, strlen(e->d_name) + 1);
    }
    closedir(d);
}

/* How many entries DIR has, up to LIMIT. */
static unsigned count_entries(const char *dir, unsigned limit)
{
    DIR *d = opendir(dir);
    unsigned n = 0;

    if (d == NULL)
        return 0;
    while (n < limit && readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static pid_t some_pid(void)
{
    switch (rnd(6)) {
    case 0: return master;
    case 1: return getpid();
    case 2: return getppid();
    case 3: return honest[rnd(HONEST)];
    case 4: return 1;
    default: return (pid_t)(2 + rnd(4000000));
    }
}

/* A name to act on in P: one the library uses, one of its entries, or
 * anything. */
static void some_name(enum place p, char *out, size_t cap)
{
    switch (rnd(11)) {
    case 0: snprintf(out, cap, "h%u", rnd(4)); break;
    case 1: snprintf(out, cap, "a%u", rnd(10)); break;
    case 2: snprintf(out, cap, ".holder.%d", (int)some_pid()); break;
    case 3: snprintf(out, cap, ".new.%d.%d", (int)some_pid(), (int)some_pid()); break;
    case 4: snprintf(out, cap, ".wait.%016llx", (unsigned long long)splitmix(&rng_state)); break;
    case 5: snprintf(out, cap, ".times.%d", (int)some_pid()); break;
    case 6: {
        static const char *const fixed[] = { "wake", "history", "claims", "swerve-claim.aaaaaaaaaaaa", "x.new" };
        snprintf(out, cap, "%s", fixed[rnd(5)]);
        break;
    }
    case 7:
    case 8:
        pick_entry(place_path(p), out, cap);
        if (out[0] != '\0')
            break;
        /* fall through */
    default: snprintf(out, cap, "x%u", rnd(100000));
    }
}

static void path_of(enum place p, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", place_path(p), name);
}

/* Bytes a hostile worker writes: holder headers (live and dead pids,
 * its master's among them), journal lines naming paths and names, and
 * noise. */
static size_t junk(char *buf, size_t cap)
{
    char path[1200];
    size_t len = 0;

    switch (rnd(5)) {
    case 0: len = (size_t)snprintf(buf, cap, "%d %u\n", (int)some_pid(), rnd(1000000000)); break;
    case 1:
        canary(path, sizeof path);
        len = (size_t)snprintf(buf, cap, "%s\nh%u\n..\n/\n%s\n", path, rnd(4), path);
        break;
    case 2: len = (size_t)snprintf(buf, cap, "h%u\na%u\nh%u\n", rnd(4), rnd(10), rnd(4)); break;
    case 3:
        len = 1 + rnd((unsigned)cap - 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)rnd(256);
        break;
    default: len = 1 + rnd((unsigned)cap - 1); memset(buf, rnd(2) ? '\n' : 'a', len);
    }
    return len < cap ? len : cap;
}

static int fds[MAX_FDS], nfds;
static struct swerve_claim *held[8];

static void hold_fd(int fd)
{
    if (fd < 0)
        return;
    if (nfds < MAX_FDS)
        fds[nfds++] = fd;
    else
        close(fd);
}

/* Directories thousands of levels deep, a descriptor of each kept: issue 40, item 3. */
static void deep_dirs(void)
{
    int fd = open(base, O_RDONLY | O_DIRECTORY);
    for (int level = 0; level < 2000 && fd >= 0; level++) {
        int next;
        (void)mkdirat(fd, "swerve-claim.x", 0755);
        next = openat(fd, "swerve-claim.x", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        close(fd);
        fd = next;
    }
    for (int i = 0; i < 40 && fd >= 0; i++)
        hold_fd(dup(fd));
    if (fd >= 0)
        close(fd);
}

/* Fills P with up to a few thousand entries of every kind. */
static void fill(enum place p)
{
    char name[128], path[4400], target[1200], own[4400];
    unsigned n = count_entries(place_path(p), MAX_FILL + 1), want = 50 + rnd(800);

    snprintf(own, sizeof own, "%s/.holder.%d", claims, (int)getpid());
    for (unsigned i = 0; i < want && n < MAX_FILL; i++, n++) {
        unsigned kind = rnd(6);
        if (kind == 0)
            snprintf(name, sizeof name, ".holder.%d", (int)(4194304 + rnd(1000000)));
        else
            snprintf(name, sizeof name, "%s%u", kind == 1 ? ".wait." : kind == 2 ? ".new." : "z", rnd(1000000));
        path_of(p, name, path, sizeof path);
        /* Issue 40, item 1: ".holder.N" names are links of its own holder file. */
        switch (kind == 0 ? 2 : rnd(5)) {
        case 0: (void)mkfifo(path, 0666); break;
        case 1:
            canary(target, sizeof target);
            (void)symlink(target, path);
            break;
        case 2:
            (void)link(own, path); /* its own holder file, unjournaled */
            break;
        case 3: (void)mkdir(path, 0777); break;
        default: {
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
            if (fd >= 0) {
                char buf[256];
                (void)!write(fd, buf, junk(buf, sizeof buf));
                close(fd);
            }
        }
        }
    }
}

/* Writes into every shared page it has mapped: the wake file, the page of
 * drain marks, pages of times, a history. */
static void scribble(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];

    if (maps == NULL)
        return;
    while (fgets(line, sizeof line, maps) != NULL) {
        unsigned long from, to;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &from, &to, perms) != 3 || strcmp(perms, "rw-s") != 0 || one_in(2))
            continue;
        for (unsigned k = 0, words = 1 + rnd(16); k < words; k++) {
            size_t at = rnd((unsigned)((to - from) / 4)) * 4;
            uint32_t v = one_in(3) ? (uint32_t)some_pid() : one_in(2) ? 0xffffffffu : (uint32_t)rnd(100);
            /* A file mapped beyond its end (a truncated page) would end
             * us by SIGBUS: a death like any other. */
            memcpy((char *)from + at, &v, sizeof v);
        }
    }
    fclose(maps);
}

/* claims/ renamed aside in its top (a worker may write the top), and
 * something else put in its place for a while: a directory of its own,
 * a symlink to root's, nothing; put back, mostly. */
static void claims_games(void)
{
    char aside[4400], target[1200];
    unsigned what = rnd(3);

    snprintf(aside, sizeof aside, "%s/.c%u", top, rnd(20)); /* at most 20 left aside */
    if (rename(claims, aside) != 0)
        return;
    if (what == 0) {
        (void)mkdir(claims, 0777);
    } else if (what == 1) {
        canary(target, sizeof target);
        (void)symlink(target, claims);
    }
    usleep(rnd(50000)); /* a death here leaves it so */
    if (unlink(claims) != 0 && errno == EISDIR)
        (void)rmdir(claims);
    (void)rename(aside, claims);
}

/* Puts back a claims/ a dead hostile worker left aside: else root's
 * tools, which rightly refuse a claims/ out of its place, would have
 * little to read for the rest of the run. */
static void put_back(void)
{
    char name[256], aside[4400];
    struct stat st;

    if (lstat(claims, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0)
        return;
    pick_entry(top, name, sizeof name);
    if (strncmp(name, ".c", 2) != 0)
        return;
    snprintf(aside, sizeof aside, "%s/%s", top, name);
    if (lstat(aside, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0)
        return;
    if (unlink(claims) != 0 && errno == EISDIR)
        (void)rmdir(claims);
    (void)rename(aside, claims);
}

/* Root's wake or history renamed aside, a symlink or FIFO put there. */
static void top_games(void)
{
    char path[4400], aside[4400], target[1200];
    const char *which = one_in(2) ? "wake" : "history";

    snprintf(path, sizeof path, "%s/%s", top, which);
    snprintf(aside, sizeof aside, "%s/.%s%u", top, which, rnd(100));
    if (one_in(2))
        (void)rename(path, aside);
    canary(target, sizeof target);
    if (one_in(2))
        (void)symlink(target, path);
    else
        (void)mkfifo(path, 0666);
}

/* A fake claim directory in the base, the attacker's, or a symlink so named. */
static void base_games(void)
{
    char dir[4400], path[4500], target[1200];

    /* Issue 40, item 2: many directories for root's tools to read. */
    if (count_entries(base, MAX_BASE + 1) > MAX_BASE)
        return;

    snprintf(dir, sizeof dir, "%s/swerve-claim.%c%c%c%c%c%c%c%c%c%c%c%c", base, 'a' + rnd(26), 'a' + rnd(26),
             'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26),
             'a' + rnd(26), 'a' + rnd(26), 'a' + rnd(26));
    if (one_in(3)) {
        canary(target, sizeof target);
        (void)symlink(target, dir);
        return;
    }
    (void)mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/claims", dir);
    (void)mkdir(path, 0700);
    for (unsigned i = 0, n = rnd(40); i < n; i++) {
        int fd;
        snprintf(path, sizeof path, "%s/claims/%s", dir, one_in(2) ? "n" : ".holder.1");
        snprintf(path + strlen(path), sizeof path - strlen(path), "%u", rnd(1000));
        fd = open(path, O_WRONLY | O_CREAT, 0600);
        if (fd >= 0) {
            char buf[256];
            (void)!write(fd, buf, junk(buf, sizeof buf));
            close(fd);
        }
    }
    snprintf(path, sizeof path, "%s/wake", dir);
    canary(target, sizeof target);
    (void)symlink(target, path);
}

static void api_games(void)
{
    char name[128];
    unsigned slot = rnd(8);

    if (held[slot] != NULL) {
        if (one_in(2))
            (void)api.release(held[slot]);
        else
            api.free(held[slot]), held[slot] = NULL;
        return;
    }
    if (one_in(3))
        pick_entry(claims, name, sizeof name);
    else
        snprintf(name, sizeof name, one_in(4) ? "h3" : "a%u", rnd(10));
    if (name[0] == '\0' || is_protected(CLAIMS, name) || (name[0] == 'h' && name[1] != '3'))
        return;
    held[slot] = api.new_claim(name);
    if (held[slot] != NULL && api.acquire(held[slot], one_in(4) ? 0.01 * rnd(5) : 0) == NULL)
        api.free(held[slot]), held[slot] = NULL;
}

static void hostile_op(int *forks)
{
    char name[128], name2[128], path[4400], path2[4400], target[1200], buf[512];
    enum place p = rnd(10) < 6 ? CLAIMS : rnd(3) < 2 ? TOP : BASE, p2 = rnd(4) ? p : (enum place)rnd(PLACES);
    int fd;

    unsigned op = rnd(20);
    int own = one_in(2);

    some_name(p, name, sizeof name);
    /* At an honest name, only its own holder file is linked (a hold by a
     * plain system call, cleared when it dies): any other plant there
     * would deny the honest workers that name for the rest of the run,
     * and (a) would have little left to check. */
    if (is_protected(p, name) && !(op <= 1 && own) && !(unprotected && op >= 4 && op <= 5))
        snprintf(name, sizeof name, "h3");
    if (unprotected && p == CLAIMS && op >= 4 && op <= 5)
        snprintf(name, sizeof name, "%s", honest_names[rnd(HONEST)]);
    path_of(p, name, path, sizeof path);
    switch (op) {
    case 0:
    case 1: /* link: its own holder file, or an entry, under another name */
        if (own)
            snprintf(path2, sizeof path2, "%s/.holder.%d", claims, (int)getpid());
        else
            some_name(p2, name2, sizeof name2), path_of(p2, name2, path2, sizeof path2);
        (void)link(path2, path);
        break;
    case 2:
    case 3: { /* rename, three ways */
        static const unsigned flags[3] = { 0, RENAME_NOREPLACE, RENAME_EXCHANGE };
        some_name(p2, name2, sizeof name2);
        path_of(p2, name2, path2, sizeof path2);
        if (!is_protected(p, name) && !is_protected(p2, name2))
            (void)renameat2(AT_FDCWD, path2, AT_FDCWD, path, flags[rnd(3)]);
        break;
    }
    case 4:
    case 5: /* unlink */
        if ((unprotected || !is_protected(p, name)) && (unlink(path) != 0 && errno == EISDIR))
            (void)rmdir(path);
        break;
    case 6:
    case 7: /* symlink, to a canary mostly */
        canary(target, sizeof target);
        (void)symlink(one_in(5) ? name : target, path);
        break;
    case 8:
    case 9: /* write */
        fd = open(path, O_WRONLY | O_NONBLOCK | (one_in(2) ? O_APPEND : 0) | (one_in(3) ? O_CREAT : 0), 0666);
        if (fd >= 0) {
            (void)!pwrite(fd, buf, junk(buf, sizeof buf), one_in(2) ? 0 : rnd(8192));
            close(fd);
        }
        break;
    case 10: /* truncate */ (void)truncate(path, one_in(2) ? 0 : rnd(100000)); break;
    case 11: /* mkdir, some levels deep */
        for (int d = 0, depth = 1 + rnd(4); d < depth && mkdir(path, 0777) == 0; d++)
            snprintf(path + strlen(path), sizeof path - strlen(path), "/d%u", rnd(3));
        break;
    case 12:
        if (one_in(8))
            fill(p);
        break;
    case 13: /* hold descriptors */
        for (unsigned i = 0, n = 1 + rnd(32); i < n; i++) {
            some_name(p, name, sizeof name);
            path_of(p, name, path, sizeof path);
            hold_fd(open(path, (one_in(3) ? O_PATH : O_RDONLY) | O_NONBLOCK | O_NOCTTY));
        }
        hold_fd(open(place_path(p), O_RDONLY | O_DIRECTORY));
        break;
    case 14: scribble(); break;
    case 15: /* fork: the child goes on with a sequence of its own */
        if (*forks < 3) {
            pid_t pid;
            ++*forks;
            pid = fork();
            if (pid == 0) {
                struct itimerval life = { { 0, 0 }, { 0, 20000 + (long)rnd(980000) } };
                rng_seed(splitmix(&rng_state), (uint64_t)*forks);
                *forks = 3; /* a child does not fork again */
                REQUIRE(setitimer(ITIMER_REAL, &life, NULL) == 0);
            }
        }
        break;
    case 16: api_games(); break;
    case 17:
        if (one_in(20))
            claims_games();
        else if (one_in(4))
            top_games();
        break;
    case 18:
        if (one_in(4))
            base_games();
        break;
    default:
        if (one_in(40))
            die();
        /* Its own page of times, written over. */
        snprintf(path, sizeof path, "%s/.times.%d", top, (int)getpid());
        fd = open(path, O_WRONLY | O_NONBLOCK);
        if (fd >= 0) {
            (void)!pwrite(fd, buf, junk(buf, sizeof buf), rnd(4096));
            close(fd);
        }
    }
}

/* Hostile worker GEN: a sequence of its own (the seed and GEN), a life
 * of at most 3 s (then SIGKILL, wherever it is), at most 20,000
 * operations. */
__attribute__((noreturn)) static void hostile_worker(unsigned gen)
{
    struct itimerval life;
    int forks = 0;

    rng_seed(seed, 1000 + (uint64_t)gen);
    life = (struct itimerval){ { 0, 0 }, { (long)rnd(3), 50000 + (long)rnd(950000) } };
    REQUIRE(signal(SIGALRM, die_on_alarm) != SIG_ERR);
    REQUIRE(setitimer(ITIMER_REAL, &life, NULL) == 0);
    become(att_uid);
    for (int i = 0; i < 8; i++)
        put_back();
    if (one_in(2))
        deep_dirs();
    /* A claim first: its holder file and journal exist. */
    held[0] = api.new_claim(one_in(2) ? "a0" : "a1");
    if (held[0] != NULL && api.acquire(held[0], 0) == NULL)
        api.free(held[0]), held[0] = NULL;
    for (int op = 0; op < 20000; op++) {
        hostile_op(&forks);
        usleep(200 + rnd(1500)); /* two cores: leave the others some */
    }
    die();
}

/* -------------------------------------------------------------- master */

struct stats {
    long reaps, acquires;
    double reap_max, acquire_max;
};

/* Reaps every child (and orphan: the master is their subreaper) that
 * has ended, each reap timed. */
static int reap_ended(struct stats *st, pid_t *hostile)
{
    int status, n = 0;
    pid_t pid;

    for (;;) {
        double t0 = now_s(), ms;
        pid = waitpid(-1, &status, WNOHANG);
        ms = (now_s() - t0) * 1e3;
        if (pid <= 0)
            return n;
        n++;
        st->reaps++;
        if (ms > st->reap_max)
            st->reap_max = ms;
        if (ms > 1000) {
            printf("slow reap of %d: %.1f ms\n", (int)pid, ms);
            fflush(stdout);
        }
        for (int i = 0; i < HOSTILE; i++)
            if (hostile[i] == pid)
                hostile[i] = 0;
        for (int i = 0; i < HONEST; i++)
            if (honest[i] == pid) {
                if (!stopping)
                    printf("honest worker %d ended early: status %d\n", (int)pid, status);
                honest[i] = 0;
            }
    }
}

/* The master takes, and lets go of, a name the hostile workers plant on. */
static void master_acquire(struct stats *st)
{
    static const char *const names[] = { "h3", "a0", "a1", "a2", "a5", "a9", "m0", "x1" };
    struct swerve_claim *c = api.new_claim(names[rnd(8)]);
    double t0 = now_s(), ms;

    REQUIRE(c != NULL);
    (void)api.acquire(c, 0);
    api.free(c);
    ms = (now_s() - t0) * 1e3;
    st->acquires++;
    if (ms > st->acquire_max)
        st->acquire_max = ms;
}

static int serve(char **argv)
{
    double seconds = atof(argv[3]), start = now_s(), last_stats = start, stop_at;
    struct stats st = { 0, 0, 0, 0 };
    pid_t hostile[HOSTILE] = { 0 };
    unsigned gen = 0;
    char path[4400];
    int log, hostile_log, status;

    att_uid = (uid_t)atol(argv[0]);
    oth_uid = (uid_t)atol(argv[1]);
    snprintf(test_dir, sizeof test_dir, "%s", argv[2]);
    seed = strtoull(argv[4], NULL, 10);
    unprotected = getenv("SCL_ADVERSARY_UNPROTECTED") != NULL;
    snprintf(base, sizeof base, "%s/base", test_dir);
    master = getpid();
    rng_seed(seed, 1);
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    REQUIRE(signal(SIGTERM, on_term) != SIG_ERR);
    snprintf(path, sizeof path, "%s/holds.log", test_dir);
    log = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    snprintf(path, sizeof path, "%s/hostile.log", test_dir);
    hostile_log = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(log >= 0 && hostile_log >= 0);
    /* The master's claim makes the directory, root's. */
    {
        struct swerve_claim *c = api.new_claim("m0");
        REQUIRE(c != NULL && api.acquire(c, 0) != NULL);
        api.free(c);
    }
    find_dir();
    printf("master %d seed %llu dir %s\n", (int)master, (unsigned long long)seed, top);
    fflush(stdout);
    for (int i = 0; i < HONEST; i++) {
        honest[i] = fork();
        REQUIRE(honest[i] >= 0);
        if (honest[i] == 0) {
            close(hostile_log);
            honest_worker(i, log, start + seconds + 30);
        }
    }
    stop_at = start + seconds + 60; /* the driver stops it long before */
    while (!stopping && now_s() < stop_at) {
        (void)reap_ended(&st, hostile);
        for (int i = 0; i < HOSTILE; i++) {
            if (hostile[i] != 0)
                continue;
            gen++;
            hostile[i] = fork();
            REQUIRE(hostile[i] >= 0);
            if (hostile[i] == 0) {
                close(log);
                REQUIRE(dup2(hostile_log, 1) == 1 && dup2(hostile_log, 2) == 2);
                close(hostile_log);
                hostile_worker(gen);
            }
        }
        if (one_in(5))
            master_acquire(&st);
        if (now_s() - last_stats >= 1) {
            last_stats = now_s();
            printf("stats reaps %ld reap_max_ms %.1f acquires %ld acquire_max_ms %.1f hostile %u pid %d\n", st.reaps,
                   st.reap_max, st.acquires, st.acquire_max, gen, (int)hostile[0]);
            fflush(stdout);
        }
        usleep(20000);
    }
    /* Stopped: the honest end by SIGTERM, the hostile by their timers (a
     * SIGKILL to each group first); the master reaps them all. */
    for (int i = 0; i < HONEST; i++)
        if (honest[i] > 0)
            (void)kill(honest[i], SIGTERM);
    for (int i = 0; i < HOSTILE; i++)
        if (hostile[i] > 0)
            (void)kill(hostile[i], SIGKILL);
    for (int i = 0; i < 500; i++) {
        double t0 = now_s(), ms;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        ms = (now_s() - t0) * 1e3;
        if (pid < 0 && errno == ECHILD)
            break;
        if (pid > 0) {
            st.reaps++;
            st.reap_max = ms > st.reap_max ? ms : st.reap_max;
            continue;
        }
        usleep(20000);
    }
    printf("stats reaps %ld reap_max_ms %.1f acquires %ld acquire_max_ms %.1f hostile %u pid 0\n", st.reaps,
           st.reap_max, st.acquires, st.acquire_max, gen);
    printf("stopped %s\n", waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD ? "all reaped" : "children left");
    fflush(stdout);
    return 0;
}

/* start-once: a new root server below the same base: its first fork
 * reserves its place, its first claim sweeps the base. */
static int start_once(char **argv)
{
    double t0 = now_s();
    struct swerve_claim *c = api.new_claim("first");
    pid_t pid = fork();
    int status;

    (void)argv;
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(0);
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(c != NULL && api.acquire(c, 0) != NULL);
    api.free(c);
    printf("start %.1f ms\n", (now_s() - t0) * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (!swerve_claim_load(&api)) {
        fprintf(stderr, "adversary: libswerveclaim_preload.so is not loaded\n");
        return 2;
    }
    if (argc == 7 && strcmp(argv[1], "serve") == 0)
        return serve(argv + 2);
    if (argc == 2 && strcmp(argv[1], "start-once") == 0)
        return start_once(argv + 2);
    fprintf(stderr, "usage: adversary serve ATT_UID OTH_UID T SECONDS SEED | start-once\n");
    return 2;
}
