/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "budget.h"
#include "history.h"
#include "holder.h"
#include "log.h"
#include "retire.h"
#include "scratch.h"
#include "sigsafe.h"
#include "times.h"
#include "wake.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int visit_find_alive(int claims_fd, pid_t pid, const char *entry, void *arg)
{
    struct scl_budget *entries = arg;
    struct scl_proc_id id;
    int fd, alive;

    if (pid == 0)
        return 0;
    if (scl_budget_spend(entries, SCL_COST_OPENED_FILE) != 0)
        return 1;
    fd = scl_holder_open_named(claims_fd, entry, pid, &id);
    if (fd < 0) /* gone, planted, or nobody's holder file; a header we cannot read is somebody's */
        return errno == ENOENT || errno == EINVAL ? 0 : 1;
    alive = scl_proc_alive(&id);
    scl_close_quietly(fd);
    return alive;
}

/* A directory being removed: its top, where dead holders' pages of times
 * go, and how their holds end. */
struct removal {
    int top_fd;
    const struct scl_hold_end *end;
    struct scl_budget leftovers; /* of unlinks of leftovers */
    struct scl_budget *entries;  /* SCL_BUDGET_REMOVAL_ENTRIES, for all its reads */
};

static int visit_clear_dead(int claims_fd, pid_t pid, const char *entry, void *arg)
{
    struct removal *r = arg;
    struct stat st;

    if (pid > 0) {
        if (scl_budget_spend(r->entries, SCL_COST_OPENED_FILE) != 0)
            return 1;
        (void)scl_holder_clear(claims_fd, r->top_fd, pid, SCL_CLEAR_IF_DEAD, r->end, r->entries);
    } else if (fstatat(claims_fd, entry, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
        if (scl_budget_spend(&r->leftovers, 1) != 0)
            return 1;                        /* planted past the bound: the directory stays */
        (void)unlinkat(claims_fd, entry, 0); /* a registration its maker never finished, a waiters' FIFO */
    }
    return 0;
}

/* Removes NAME from PARENT_FD if it is still the directory DEV/INO. */
static int rmdir_if_same(int parent_fd, const char *name, dev_t dev, ino_t ino)
{
    struct stat st;

    if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev || st.st_ino != ino)
        return -1;
    return unlinkat(parent_fd, name, AT_REMOVEDIR);
}

/* Clears the dead holders of the directory TOP_FD, CLAIMS_FD, recording
 * their holds as ended by its removal, in its history if this process may
 * write it (mapped for the while: this may be another directory than its
 * own, swept). */
static void clear_dead_for_removal(int top_fd, int claims_fd, unsigned leftovers, struct scl_budget *entries)
{
    struct scl_hold_end end = { scl_history_open(top_fd), SCL_HOLD_RETIRED, 0 };
    struct removal r = { top_fd, &end, scl_budget_of("unlinks of a directory's leftovers", leftovers), entries };

    (void)scl_holders_scan(claims_fd, entries, visit_clear_dead, &r);
    scl_history_unmap(end.history);
}

int scl_retire(int basefd, const char *name, int top_fd, int claims_fd, unsigned leftovers, struct scl_budget *shared)
{
    int alive;
    struct stat st;
    /* Whatever was planted, a removal reads so many entries in all (its
     * caller may be a master in waitpid(), or ending): past them the
     * directory stays, as if a member were left. */
    struct scl_budget own = scl_budget_of("removal of a claim directory", SCL_BUDGET_REMOVAL_ENTRIES);
    struct scl_budget *entries = shared != NULL ? shared : &own;

    /* Only its owner (or root) can take the top out of a sticky base: a
     * worker that dropped root leaves it to its master rather than leave
     * it half removed. */
    if (fstat(top_fd, &st) != 0)
        return -1;
    if (st.st_uid != geteuid() && geteuid() != 0) {
        errno = EPERM;
        return -1;
    }
    alive = scl_holders_scan(claims_fd, entries, visit_find_alive, entries);
    if (alive == 0)
        clear_dead_for_removal(top_fd, claims_fd, leftovers, entries);
    if (entries->gave_up) {
        errno = ENOTEMPTY;
        return -1;
    }
    if (alive != 0) {
        if (alive > 0)
            errno = EBUSY;
        return -1;
    }
    /* Anything left in claims/ (a member that just joined) keeps it all. */
    if (fstat(claims_fd, &st) != 0 || rmdir_if_same(top_fd, SCL_CLAIMS_DIR, st.st_dev, st.st_ino) != 0)
        return -1;
    scl_times_remove_left(top_fd);
    if ((unlinkat(top_fd, SCL_WAKE_FILE, 0) != 0 && errno != ENOENT) || scl_history_keep(basefd, name, top_fd) != 0 ||
        fstat(top_fd, &st) != 0)
        return -1;
    return rmdir_if_same(basefd, name, st.st_dev, st.st_ino);
}

int scl_retire_named(int basefd, const char *name, dev_t dev, ino_t ino, unsigned leftovers, struct scl_budget *shared)
{
    struct stat st;
    int top_fd = scl_open_dir_at(basefd, name), claims_fd, r = -1;

    if (top_fd < 0)
        return -1;
    if (ino == 0 || (fstat(top_fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino)) {
        claims_fd = scl_open_dir_at(top_fd, SCL_CLAIMS_DIR);
        if (claims_fd >= 0) {
            r = scl_retire(basefd, name, top_fd, claims_fd, leftovers, shared);
            scl_close_quietly(claims_fd);
        }
    }
    scl_close_quietly(top_fd);
    return r;
}

int scl_retire_path(const char *path, dev_t dev, ino_t ino, unsigned leftovers)
{
    const char *name = strrchr(path, '/');
    char *parent;
    int basefd, r;

    if (name == NULL || (size_t)(name - path) >= SCL_SCRATCH_SIZE) {
        errno = EINVAL;
        return -1;
    }
    if ((parent = scl_scratch_take()) == NULL)
        return -1;
    memcpy(parent, path, (size_t)(name - path));
    parent[name - path] = '\0';
    basefd = scl_openat(AT_FDCWD, parent[0] != '\0' ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    scl_scratch_give(parent);
    if (basefd < 0)
        return -1;
    r = scl_retire_named(basefd, name + 1, dev, ino, leftovers, NULL);
    scl_close_quietly(basefd);
    return r;
}

/* A ".new" directory this old was left by a creator that died mid-way. */
#define STALE_NEW_SECONDS 3600

/* Removes a ".new" directory a dead creator left (its holder file, its
 * claims directory, its wake file), reading ENTRIES' worth of it. */
static void remove_unfinished(int basefd, const char *name, struct scl_budget *entries)
{
    int top_fd = scl_open_dir_at(basefd, name), claims_fd;

    if (top_fd < 0)
        return;
    claims_fd = scl_open_dir_at(top_fd, SCL_CLAIMS_DIR);
    if (claims_fd >= 0) {
        struct removal r = { top_fd, NULL,
                             scl_budget_of("unlinks of a directory's leftovers", SCL_BUDGET_RETIRE_LEFTOVERS),
                             entries };
        (void)scl_holders_scan(claims_fd, entries, visit_clear_dead, &r);
        scl_close_quietly(claims_fd);
    }
    (void)unlinkat(top_fd, SCL_CLAIMS_DIR, AT_REMOVEDIR);
    scl_times_remove_left(top_fd);
    (void)unlinkat(top_fd, SCL_WAKE_FILE, 0);
    (void)unlinkat(top_fd, SCL_HISTORY_FILE, 0);
    (void)unlinkat(basefd, name, AT_REMOVEDIR);
    scl_close_quietly(top_fd);
}

/* The sweep of a base: its descriptor, and how far it has gone: entries
 * of the base read, directories looked at closely, and what their
 * removals read in all (one removal's worth, for all of them: a server's
 * first claim is no place for 64 of them). */
struct sweep {
    int basefd;
    struct scl_budget entries, candidates, removals;
};

static void sweep_one(struct sweep *s, const char *name)
{
    struct stat st;
    struct timespec now;

    /* Our user's alone: never another user's, even for root. */
    if (fstatat(s->basefd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return;
    if (scl_layout_is_unfinished(name)) {
        clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec - st.st_mtime > STALE_NEW_SECONDS)
            remove_unfinished(s->basefd, name, &s->removals);
        return;
    }
    if (scl_retire_named(s->basefd, name, st.st_dev, st.st_ino, SCL_BUDGET_RETIRE_LEFTOVERS, &s->removals) == 0)
        scl_debug("removed abandoned claim directory %s", name);
}

static int sweep_entry(const struct dirent64 *d, void *arg)
{
    struct sweep *s = arg;

    if (scl_budget_spend(&s->entries, 1) != 0)
        return 1;
    /* d_type spares a stat of what is plainly not a directory. */
    if (scl_after_prefix(d->d_name, SCL_DIR_PREFIX) != NULL && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN)) {
        if (scl_budget_spend(&s->candidates, 1) != 0)
            return 1;
        sweep_one(s, d->d_name);
    }
    return s->removals.gave_up;
}

/*
 * Claim directories of this user below BASEFD that no live process uses
 * any more (a server SIGKILLed whole) are removed by the next one made
 * beside them.  This may run in a hook (a drop of root, a chroot), in a
 * signal handler: scl_each_entry() reads into a scratch block.
 */
void scl_sweep_abandoned(int basefd)
{
    struct sweep s = { basefd, scl_budget_of("sweep of the base", SCL_BUDGET_SWEEP_ENTRIES),
                       scl_budget_of("sweep's look at abandoned directories", SCL_BUDGET_SWEEP_CANDIDATES),
                       scl_budget_of("sweep's removals", SCL_BUDGET_REMOVAL_ENTRIES) };

    (void)scl_each_entry(basefd, sweep_entry, &s);
}
