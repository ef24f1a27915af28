/* SPDX-License-Identifier: MIT */
/* Which claim directories a command of the tools works on: every one
 * below the base (this user's, or every user's for root), the one
 * --server names, and run's own namespace (store_admin.h's
 * scl_admin_directories, for admin_fs.c). */
#include "config.h"

#include "inventory.h"
#include "sigsafe.h"
#include "store_admin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens directory NAME of PARENT_FD (made first when CREATE), which must be
 * this user's and writable by nobody else; its descriptor, or -1. */
static int private_dir_at(int parent_fd, const char *name, int create)
{
    struct stat st;
    int fd;

    if (create && mkdirat(parent_fd, name, 0700) != 0 && errno != EEXIST)
        return -1;
    fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_uid != getuid() || (st.st_mode & 022) != 0) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* $HOME/.cache/swerve-claim from the password database (not from the
 * environment, which cron and a login shell set differently), when the
 * home directory is this user's and nobody else can write it. */
static int home_base(char *out, size_t cap, int create)
{
    struct passwd *pw = getpwuid(getuid());
    struct stat st;
    int home, cache, mine;

    if (pw == NULL || pw->pw_dir[0] != '/' || stat(pw->pw_dir, &st) != 0 || st.st_uid != getuid() ||
        (st.st_mode & 022) != 0)
        return -1;
    home = open(pw->pw_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (home < 0)
        return -1;
    cache = private_dir_at(home, ".cache", create);
    close(home);
    if (cache < 0)
        return -1;
    mine = private_dir_at(cache, "swerve-claim", create);
    close(cache);
    if (mine < 0)
        return -1;
    close(mine);
    return snprintf(out, cap, "%s/.cache/swerve-claim", pw->pw_dir) < (int)cap ? 0 : -1;
}

int inv_run_namespace(char *base, size_t base_cap, char *name, size_t name_cap, int create)
{
    char host[256] = "localhost";

    /* In the user's home, named for the machine: a home shared over NFS
     * must not join two machines' claims (a live holder on one looks dead
     * from the other). */
    if (!scl_admin_base_explicit() && home_base(base, base_cap, create) == 0) {
        (void)gethostname(host, sizeof host - 1);
        snprintf(name, name_cap, INV_RUN_NAMESPACE_PREFIX "%s", host);
        return 0;
    }
    snprintf(base, base_cap, "%s", scl_admin_base());
    snprintf(name, name_cap, INV_RUN_NAMESPACE_PREFIX "%d", (int)getuid());
    return 0;
}

/* Where the last load looked, for a message ("/tmp, /srv/x"), and which
 * directories those were: one reached by two names (a symlink, a
 * trailing slash) is read once, or its claim directories would be
 * listed twice and a member of one would seem a member of two. */
static char looked[1024];
static struct {
    dev_t dev;
    ino_t ino;
} looked_ids[16];
static size_t nlooked;

const char *inv_places_looked(void)
{
    return looked;
}

/* 1 when BASE is a directory looked at already, else 0 (and it is
 * remembered as looked at, when it is one). */
static int looked_at(const char *base)
{
    struct stat st;

    if (stat(base, &st) != 0)
        return 0;
    for (size_t i = 0; i < nlooked; i++)
        if (looked_ids[i].dev == st.st_dev && looked_ids[i].ino == st.st_ino)
            return 1;
    if (nlooked < sizeof looked_ids / sizeof looked_ids[0]) {
        looked_ids[nlooked].dev = st.st_dev;
        looked_ids[nlooked++].ino = st.st_ino;
    }
    return 0;
}

/* Adds the claim directories below BASE to *DIRS within B, unless BASE
 * was looked at already (a base that cannot be read adds nothing). */
static void load_more(const char *base, struct inv_budget *b, struct inv_dir **dirs, size_t *n)
{
    struct inv_dir *more, *all;
    size_t nmore, ignored;

    if (looked_at(base))
        return;
    snprintf(looked + strlen(looked), sizeof looked - strlen(looked), ", %s", base);
    if (inv_load(base, b, &more, &nmore, &ignored) != 0)
        return;
    if (nmore == 0) { /* MORE may be NULL: nothing to copy from it */
        free(more);
        return;
    }
    all = realloc(*dirs, (*n + nmore) * sizeof **dirs);
    if (all == NULL) {
        inv_free(more, nmore);
        return;
    }
    memcpy(all + *n, more, nmore * sizeof *more);
    free(more);
    *dirs = all;
    *n += nmore;
}

/* Every claim directory below the base, and those of the user's own
 * `run` namespace when it lives elsewhere, within B: 0, or -1 (said). */
static int load_all(struct inv_budget *b, struct inv_dir **dirs, size_t *n)
{
    char base[PATH_MAX], name[NAME_MAX + 1];
    size_t hidden;

    snprintf(looked, sizeof looked, "%s", scl_admin_base());
    nlooked = 0;
    (void)looked_at(scl_admin_base());
    if (inv_load(scl_admin_base(), b, dirs, n, &hidden) != 0) {
        scl_admin_report("%s: %s", scl_admin_base(), strerror(errno));
        return -1;
    }
    if (hidden > 0)
        scl_admin_report("note: %zu claim %s of other users not shown (root sees them all)", hidden,
                         hidden == 1 ? "directory" : "directories");
    if (inv_run_namespace(base, sizeof base, name, sizeof name, 0) == 0)
        load_more(base, b, dirs, n);
    return 0;
}

/* load_all()'s directories, and those below where process PID keeps
 * its claims (process_dirs.c), wherever that is, all within one budget:
 * as inv_load_selected(). */
static int load_for(pid_t pid, struct inv_dir **dirs, size_t *n)
{
    char(*bases)[PATH_MAX] = malloc(8 * sizeof *bases);
    struct inv_budget b;
    size_t nbases;

    inv_budget_init(&b);
    if (load_all(&b, dirs, n) < 0) {
        free(bases);
        return -1;
    }
    nbases = pid > 0 && bases != NULL ? inv_process_bases(pid, bases, 8) : 0;
    for (size_t i = 0; i < nbases; i++)
        load_more(bases[i], &b, dirs, n);
    free(bases);
    return b.unread > INT_MAX ? INT_MAX : (int)b.unread;
}

/* PATH (resolved) is a claim directory the caller may work on: this
 * user's, or any user's for root, and writable by no other user. */
static int check_dir(const char *given, const char *path)
{
    const char *name = strrchr(path, '/');
    struct stat st;

    if (lstat(path, &st) != 0) {
        scl_admin_report("%s: %s", given, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || name == NULL || !inv_is_dir_name(name + 1)) {
        scl_admin_report("%s: not a claim directory", given);
        return -1;
    }
    if ((st.st_uid != geteuid() && geteuid() != 0) || (st.st_mode & S_IWOTH) != 0) {
        scl_admin_report("%s: not a claim directory of yours (owner uid %d, mode %o)", given, (int)st.st_uid,
                         (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

static int one_of(uid_t uid, const uid_t uids[4])
{
    return uid == 0 || uid == uids[0] || uid == uids[1] || uid == uids[2] || uid == uids[3];
}

/*
 * Whether D is a directory of process PID (UIDS its uids when it is alive,
 * else NULL).  Its pid and start time are public, so anybody can write
 * them in a holder file of a directory of their own: D and that holder
 * file must also be root's or one of the process's users' (a worker's
 * holder may be its root master's making).  A dead process's uids are
 * gone: then only directories of root and of the caller count.
 */
static int is_members(const struct inv_dir *d, pid_t pid, const uid_t *uids)
{
    const struct inv_proc *p = inv_member(d, pid);
    uid_t mine[4] = { geteuid(), geteuid(), geteuid(), geteuid() };

    if (p == NULL)
        return 0;
    if (uids == NULL)
        return p->state != SCL_PROC_ALIVE && one_of(d->owner, mine) && one_of(p->uid, mine);
    return p->state == SCL_PROC_ALIVE && p->start != 0 && one_of(d->owner, uids) && one_of(p->uid, uids);
}

/* The directory of DIRS that process PID is a member of (when it has
 * ended, one it was a member of: a dead master's directory, still there);
 * says why not and returns NULL when there is none, or more than one. */
static const struct inv_dir *choose_member(const struct inv_dir *dirs, size_t n, pid_t pid)
{
    uid_t uids[4];
    const uid_t *of = scl_proc_read_uids(pid, uids) == 0 ? uids : NULL;
    const struct inv_dir *chosen = NULL;
    size_t found = 0, named = 0;
    char owner[300];

    for (size_t i = 0; i < n; i++) {
        named += inv_member(&dirs[i], pid) != NULL;
        if (is_members(&dirs[i], pid, of) && found++ == 0)
            chosen = &dirs[i];
    }
    /* The uids read were those of the process its holder file names, not
     * of one that took its pid since. */
    if (of != NULL && found > 0) {
        struct scl_proc_id id = { .pid = pid, .start = inv_member(chosen, pid)->start };
        if (!scl_proc_alive(&id))
            found = 0;
    }
    if (found == 0) {
        scl_admin_report("process %ld is not a member of any claim directory in %s%s", (long)pid, looked,
                         named > 0 ? " (some name it, but are not its: another user's)" : "");
        return NULL;
    }
    if (found > 1) {
        scl_admin_report("process %ld is a member of %zu claim directories; name one with --server DIR:", (long)pid,
                         found);
        for (size_t i = 0; i < n; i++)
            if (is_members(&dirs[i], pid, of)) {
                inv_owner_name(dirs[i].owner, owner, sizeof owner);
                scl_admin_report("  %s, of %s", dirs[i].path, owner);
            }
        return NULL;
    }
    /* Never another user's without saying so: what it shows is theirs. */
    if (chosen->owner != 0 && chosen->owner != geteuid()) {
        inv_owner_name(chosen->owner, owner, sizeof owner);
        scl_admin_report("note: %s is the claim directory of %s", chosen->path, owner);
    }
    return chosen;
}

/* Reads the pid the pidfile GIVEN holds, into *PID: a regular file
 * (never a FIFO, whose reader would wait for a writer), its first bytes.
 * 0, or -1 (said). */
static int read_pidfile(const char *given, pid_t *pid)
{
    char text[64], *end;
    struct stat st;
    ssize_t n;
    long value;
    int fd;

    if (stat(given, &st) != 0) {
        scl_admin_report("%s: %s", given, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO's reader waits; a device's open may do something */
        scl_admin_report("%s: not a pidfile nor a claim directory", given);
        return -1;
    }
    fd = open(given, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        scl_admin_report("%s: %s", given, fd < 0 ? strerror(errno) : "not a pidfile nor a claim directory");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    do
        n = read(fd, text, sizeof text - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    text[n > 0 ? n : 0] = '\0';
    errno = 0;
    value = strtol(text, &end, 10);
    if (n <= 0 || end == text || value <= 0 || value > INT_MAX || errno != 0 || end[strspn(end, " \t\n")] != '\0') {
        scl_admin_report("%s: no pid in it", given);
        return -1;
    }
    *pid = (pid_t)value;
    return 0;
}

/* A line naming live server D, for a message: how to choose it. */
static void say_server(const struct inv_dir *d)
{
    char owner[300], server[300];

    inv_server_name(d, d->path, 0, server, sizeof server);
    inv_owner_name(d->owner, owner, sizeof owner);
    scl_admin_report("  --server %ld: %s, %s, of %s", (long)d->procs[d->master].pid, server, d->path, owner);
}

/* Whether D's master is alive and runs in the systemd service WANT. */
static int runs_in_unit(const struct inv_dir *d, const char *want)
{
    const struct inv_proc *m = d->master >= 0 ? &d->procs[d->master] : NULL;
    char have[256];

    return m != NULL && m->state == SCL_PROC_ALIVE && scl_proc_read_unit(m->pid, have, sizeof have) == 0 &&
           strcmp(have, want) == 0;
}

/* The master's pid of the live server in DIRS whose master runs in the
 * systemd service UNIT ("nginx" is nginx.service); says why not (none, or
 * several: named) and returns 0 when there is not exactly one. */
static pid_t unit_master(const char *unit, const struct inv_dir *dirs, size_t n)
{
    char want[256];
    size_t len = strlen(unit), found = 0;
    const struct inv_dir *one = NULL;

    snprintf(want, sizeof want, "%s%s", unit, len > 8 && strcmp(unit + len - 8, ".service") == 0 ? "" : ".service");
    for (size_t i = 0; i < n; i++)
        if (runs_in_unit(&dirs[i], want) && found++ == 0)
            one = &dirs[i];
    if (found == 1)
        return one->procs[one->master].pid;
    if (found == 0)
        scl_admin_report(
            "no live server runs in the systemd unit '%s' (looked in %s; a pidfile is named by a path: ./%s)", want,
            looked, unit);
    else
        scl_admin_report("%zu servers run in the systemd unit '%s': say which with --server PID:", found, want);
    for (size_t i = 0; i < n && found > 1; i++)
        if (runs_in_unit(&dirs[i], want))
            say_server(&dirs[i]);
    return 0;
}

/* The claim directory of process PID, of the unit UNIT's master when PID
 * is 0, into OUT: 0, or -1 (said). */
static int select_member(pid_t pid, const char *unit, char *out, size_t cap)
{
    const struct inv_dir *d = NULL;
    struct inv_dir *dirs;
    size_t n;

    if (load_for(pid, &dirs, &n) < 0)
        return -1;
    if (pid == 0)
        pid = unit_master(unit, dirs, n);
    if (pid != 0)
        d = choose_member(dirs, n, pid);
    if (d != NULL)
        snprintf(out, cap, "%s", d->path);
    inv_free(dirs, n);
    return d != NULL ? 0 : -1;
}

int inv_select_dir(const char *server, char *out, size_t cap)
{
    char *end, resolved[PATH_MAX];
    struct stat st;
    pid_t pid;
    long number;

    if (strchr(server, '/') != NULL) {
        if (stat(server, &st) == 0 && !S_ISDIR(st.st_mode))
            return read_pidfile(server, &pid) == 0 ? select_member(pid, NULL, out, cap) : -1;
        if (realpath(server, resolved) == NULL) {
            scl_admin_report("%s: %s", server, strerror(errno));
            return -1;
        }
        if (check_dir(server, resolved) != 0)
            return -1;
        if (snprintf(out, cap, "%s", resolved) >= (int)cap) {
            scl_admin_report("%s: %s", server, strerror(ENAMETOOLONG));
            return -1;
        }
        return 0;
    }
    errno = 0;
    number = strtol(server, &end, 10);
    if (*end == '\0' && end != server) {
        if (number <= 0 || number > INT_MAX || errno != 0) {
            scl_admin_report("--server %s: no process has that pid", server);
            return -1;
        }
        return select_member((pid_t)number, NULL, out, cap);
    }
    if (server[0] == '\0' || server[0] == '-') {
        scl_admin_report("--server takes a pid, a pidfile, a claim directory or a systemd unit, not '%s'", server);
        return -1;
    }
    return select_member(0, server, out, cap);
}

/* Whether D is a live server's: its master lives, and it forked (a
 * member besides it, or a child now); a process that never forked has a
 * directory of its own, which is no server's. */
static int is_live_server(const struct inv_dir *d)
{
    return d->live && !d->orphaned && d->master >= 0 && !inv_is_run_namespace(d->path) &&
           (d->nprocs > 1 || scl_proc_has_children(d->procs[d->master].pid) == 1);
}

/* Whether a live holder of D holds NAME. */
static int holds(const struct inv_dir *d, const char *name)
{
    for (size_t j = 0; j < d->nclaims; j++)
        if (d->claims[j].holder >= 0 && d->procs[d->claims[j].holder].state == SCL_PROC_ALIVE &&
            strcmp(d->claims[j].name, name) == 0)
            return 1;
    return 0;
}

int inv_only_server(const char *name, char *out, size_t cap, long *master)
{
    const struct inv_dir *one = NULL;
    struct inv_dir *dirs;
    struct inv_budget b;
    size_t n, found = 0, hidden;
    int r = 0;

    inv_budget_init(&b);
    if (inv_load(scl_admin_base(), &b, &dirs, &n, &hidden) != 0)
        return 0; /* no base, or none to read: no server to join */
    for (size_t i = 0; i < n; i++)
        if (dirs[i].owner == geteuid() && is_live_server(&dirs[i]) && found++ == 0)
            one = &dirs[i];
    if (found == 1) {
        snprintf(out, cap, "%s", one->path);
        *master = one->procs[one->master].pid;
        r = 1;
    } else if (found > 1) {
        scl_admin_report("%zu live servers of yours in %s: say which one run joins with --server, or keep the claim "
                         "to your own namespace with --own-namespace:",
                         found, scl_admin_base());
        r = -1;
    }
    /* Root sees every user's servers, and joins none of them unasked:
     * whoever starts a server in /tmp would otherwise stop root's jobs.
     * One that holds NAME now is named, for root to choose. */
    for (size_t i = 0; i < n; i++) {
        const struct inv_dir *d = &dirs[i];
        int mine = d->owner == geteuid();
        if (!is_live_server(d) || (mine && r >= 0) || (!mine && (r < 0 || !holds(d, name))))
            continue;
        if (!mine)
            scl_admin_report("note: a live server of another user's in %s holds '%s'; run joins it, as its user, "
                             "only when told to:",
                             scl_admin_base(), scl_admin_shown_name(name));
        say_server(d);
    }
    inv_free(dirs, n);
    return r;
}

/* The directories a command works on, into D: one (--server) or all of
 * ours; how many were left out (said: too big, or past the load's
 * bound), -1 when none can be read. */
static int load_into(const char *server, pid_t pid, struct scl_admin_dirs *d)
{
    char path[PATH_MAX];

    if (server == NULL)
        return load_for(pid, &d->dir, &d->n);
    if (inv_select_dir(server, path, sizeof path) != 0)
        return -1;
    d->dir = calloc(1, sizeof *d->dir);
    d->n = 1;
    if (d->dir == NULL || inv_load_dir(path, d->dir, NULL) != 0) {
        if (d->dir == NULL || (errno != E2BIG && errno != EDQUOT))
            scl_admin_report("%s: %s", path, strerror(d->dir == NULL ? ENOMEM : errno));
        free(d->dir);
        return -1;
    }
    return 0;
}

int inv_load_selected(const char *server, long pid, struct scl_admin_dirs **dirs)
{
    struct scl_admin_dirs *d = calloc(1, sizeof *d);
    int r;

    if (d == NULL) {
        scl_admin_report("%s", strerror(ENOMEM));
        return -1;
    }
    if ((r = load_into(server, (pid_t)pid, d)) < 0) {
        free(d);
        return -1;
    }
    *dirs = d;
    return r;
}
