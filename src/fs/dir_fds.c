/* SPDX-License-Identifier: MIT */
/*
 * The claim directory's two kept descriptors (dir_fds.h): where each is,
 * what it must be, and the primitives that check, move, reopen and
 * renumber them.  Hosts close every descriptor or dup2() over ours, and
 * the library must never act on one of theirs: each is checked against
 * the inode it was when the directory was made or joined.  When to make,
 * join or join again is dir.c's.
 */
#include "config.h"

#include "bound.h"
#include "dir_fds.h"
#include "hot.h"
#include "layout.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Written before dir.c sets its `ready` (release) and read after
 * (acquire).  The claims directory's (claims and holder files are side
 * by side there: the hot path) and the top's (wake, pages of times, the
 * ACL).  Neither is ever reached from the other: a worker may write the
 * top, so it can rename claims/ anywhere, and "claims/.." would then be
 * that place (doc/security.md, attack 13). */
static char top_path[PATH_MAX], claims_path[PATH_MAX];
static dev_t top_dev, claims_dev;
static ino_t top_ino, claims_ino;
static atomic_int top_fd = -1;
SCL_HOT static atomic_int claims_fd = -1;

/* One of the two kept descriptors: where it is, what it must be, and the
 * number it is kept at; indexed by its slot in kept_fds.h. */
struct kept_dir {
    atomic_int *fd;
    const char *path;
    const dev_t *dev;
    const ino_t *ino;
    int at;
};

static const struct kept_dir kept[SCL_KEPT_FDS] = {
    [SCL_KEPT_CLAIMS] = { &claims_fd, claims_path, &claims_dev, &claims_ino, 63 },
    [SCL_KEPT_TOP] = { &top_fd, top_path, &top_dev, &top_ino, 62 },
};

static enum scl_dir_fd_check check_dir_fd(int fd, dev_t dev, ino_t ino)
{
    struct stat st;

    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_dev != dev || st.st_ino != ino)
        return SCL_DIR_FD_NOT_OURS;
    return st.st_nlink == 0 ? SCL_DIR_FD_REMOVED : SCL_DIR_FD_OURS;
}

int scl_dir_fds_get(enum scl_kept_fd which)
{
    return atomic_load(kept[which].fd);
}

enum scl_dir_fd_check scl_dir_fds_check_fd(enum scl_kept_fd which, int fd)
{
    return check_dir_fd(fd, *kept[which].dev, *kept[which].ino);
}

enum scl_dir_fd_check scl_dir_fds_check(enum scl_kept_fd which, int *fd)
{
    unsigned ticket;
    enum scl_dir_fd_check found;

    *fd = atomic_load(kept[which].fd);
    ticket = scl_kept_fd_check_begins(which, *fd);
    found = scl_dir_fds_check_fd(which, *fd);
    scl_kept_fd_check_ends(which, *fd, ticket, found == SCL_DIR_FD_OURS);
    return found;
}

/*
 * Moves FD to AT (63 for the claims directory, 62 for the top), or the
 * first free number above, close-on-exec.  Hosts
 * take the lowest free number, so they seldom get that far; and 63 is the
 * last slot of the 64-entry table a process starts with: one descriptor
 * past it would make every fork() copy a table of 1024 (perf put that at
 * ~8 us of CPU a fork on a VM).  FD stays where it is when the limit
 * leaves no room.
 */
static int move_high(int fd, int at)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, at);

    if (high < 0)
        return fd;
    scl_close_quietly(fd);
    return high;
}

static int reopen(const struct kept_dir *k)
{
    int fd;

    fd = scl_openat(AT_FDCWD, k->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (check_dir_fd(fd, *k->dev, *k->ino) != SCL_DIR_FD_OURS) {
        scl_close_quietly(fd);
        errno = ENOENT; /* something else stands at our path now */
        return -1;
    }
    return move_high(fd, k->at);
}

int scl_dir_fds_reopen(enum scl_kept_fd which, int was, int *fd)
{
    int fresh = reopen(&kept[which]);

    if (fresh < 0)
        return -1;
    if (atomic_compare_exchange_strong(kept[which].fd, &was, fresh)) {
        *fd = fresh;
        return 0;
    }
    scl_close_quietly(fresh); /* another thread reopened it first */
    return 1;
}

/* Gives FRESH the kept descriptor K's number when that number is still
 * ours (OURS: it was checked before the identities changed), by dup3,
 * which no hook sees, so that the host never finds the number free;
 * else keeps FRESH where move_high() puts it.  FRESH is closed or kept:
 * 0, or -1. */
static int renumber(const struct kept_dir *k, int fresh, int ours)
{
    int at = atomic_load(k->fd);

    if (!ours || at < 0) {
        atomic_store(k->fd, move_high(fresh, k->at)); /* the host's number stays the host's */
        return 0;
    }
    if (scl_bound.syscall(SYS_dup3, fresh, at, O_CLOEXEC) != at) {
        scl_close_quietly(fresh);
        return -1;
    }
    scl_close_quietly(fresh);
    return 0;
}

int scl_dir_fds_keep(const char *base, const char *slash, const char *rest, const struct stat *top,
                     const struct stat *claims, int top_opened, int claims_opened)
{
    if (scl_concat(top_path, sizeof top_path, base, slash, rest, (char *)NULL) != 0 ||
        scl_concat(claims_path, sizeof claims_path, base, slash, rest, "/" SCL_CLAIMS_DIR, (char *)NULL) != 0)
        return -1;
    top_dev = top->st_dev;
    top_ino = top->st_ino;
    claims_dev = claims->st_dev;
    claims_ino = claims->st_ino;
    atomic_store(&claims_fd, move_high(claims_opened, kept[SCL_KEPT_CLAIMS].at));
    atomic_store(&top_fd, move_high(top_opened, kept[SCL_KEPT_TOP].at));
    return 0;
}

int scl_dir_fds_renew(const struct stat *top, const struct stat *claims, int top_opened, int claims_opened)
{
    int top_ours = check_dir_fd(atomic_load(&top_fd), top_dev, top_ino) != SCL_DIR_FD_NOT_OURS;

    top_dev = top->st_dev;
    top_ino = top->st_ino;
    claims_dev = claims->st_dev;
    claims_ino = claims->st_ino;
    return renumber(&kept[SCL_KEPT_CLAIMS], claims_opened, 1) | renumber(&kept[SCL_KEPT_TOP], top_opened, top_ours);
}

void scl_dir_fds_forget(void)
{
    int old = atomic_exchange(&claims_fd, -1), old_top = atomic_exchange(&top_fd, -1);

    if (check_dir_fd(old, claims_dev, claims_ino) == SCL_DIR_FD_REMOVED)
        scl_close_quietly(old);
    if (check_dir_fd(old_top, top_dev, top_ino) != SCL_DIR_FD_NOT_OURS)
        scl_close_quietly(old_top);
}

const char *scl_dir_fds_top_path(void)
{
    return top_path;
}

dev_t scl_dir_fds_top_dev(void)
{
    return top_dev;
}

ino_t scl_dir_fds_top_ino(void)
{
    return top_ino;
}
