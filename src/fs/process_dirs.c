/* SPDX-License-Identifier: MIT */
/*
 * Where a process keeps its claims, as it shows them itself: the claim
 * directories it holds open (the library keeps two, close-on-exec) and the
 * settings in its environment (SWERVE_CLAIM_DIR, SWERVE_TMPDIR, TMPDIR).
 * /proc lets root look at every process, and a user at its own.
 *
 * Both are the process's to write, and the process may be a hostile
 * worker: a base it names is only a candidate.  It is used only when the
 * whole path to it, the base included, is such that nobody but root and
 * the caller can rename any part of it (doc/security.md): else the worker
 * could point the path elsewhere between the choice of a directory and
 * the work on it (release --force, run's joining), into another server's
 * base.  Every directory found below a base is then read and chosen as
 * any other is (select_fs.c checks whose it is).
 *
 * What the process holds is bounded only by its limit of descriptors, and
 * a path by PATH_MAX: the descriptors looked at, and the directories among
 * them whose paths are read, are counted (budget.h), each directory is
 * looked at once (by device and inode, before its path is read), and a
 * path is resolved and checked in one pass over its components.
 */
#include "config.h"

#include "budget.h"
#include "inventory.h"
#include "proc.h"
#include "store_admin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why the component NAME (LEN bytes) of directory PARENT_FD is not trusted,
 * or NULL; when it is and MORE, PARENT_FD is replaced by its descriptor. */
static const char *untrusted_at(int *parent_fd, const char *name, size_t len, int more)
{
    char part[NAME_MAX + 1];
    struct stat st;
    int next;

    if (len > NAME_MAX)
        return strerror(ENAMETOOLONG);
    memcpy(part, name, len);
    part[len] = '\0';
    /* A symlink here was put there since the path was resolved: not
     * followed. */
    if ((len == 0 ? fstat(*parent_fd, &st) : fstatat(*parent_fd, part, &st, AT_SYMLINK_NOFOLLOW)) != 0)
        return strerror(errno);
    if (S_ISLNK(st.st_mode))
        return "it is a symlink";
    if (scl_admin_untrusted_dir(&st) != NULL || !more)
        return scl_admin_untrusted_dir(&st);
    if ((next = openat(*parent_fd, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return strerror(errno);
    close(*parent_fd);
    *parent_fd = next;
    return NULL;
}

/* 0 when RESOLVED (absolute, without symlinks, "." or "..") and every
 * directory on the way to it are trusted; else -1, said.  One pass, each
 * component looked up in the one before it (a lookup of each prefix
 * from the root would cost the square of the depth). */
static int trusted_path(pid_t pid, const char *resolved)
{
    char prefix[PATH_MAX];
    const char *why = NULL;
    size_t at = 0, len;
    int parent_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

    if (parent_fd < 0)
        return -1;
    do {
        len = strcspn(resolved + at + 1, "/");
        why = untrusted_at(&parent_fd, resolved + at + 1, len, resolved[at + 1 + len] != '\0');
        at += len + 1;
    } while (why == NULL && resolved[at] != '\0');
    close(parent_fd);
    memcpy(prefix, resolved, at);
    prefix[at] = '\0';
    if (why == NULL)
        return 0;
    scl_admin_report("note: not looking in %s, where process %ld keeps claims: %s: %s", resolved, (long)pid, prefix,
                     why);
    return -1;
}

/* The directory GIVEN as the kernel names it, into OUT (PATH_MAX bytes):
 * what realpath() says, in one lookup of the path and one of its name
 * (realpath() looks up each prefix: the square of the depth).  0, or -1. */
static int resolve(const char *given, char *out)
{
    char self[64];
    ssize_t len;
    int fd = open(given, O_PATH | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    len = readlink(self, out, PATH_MAX - 1);
    close(fd);
    if (len <= 0 || len >= PATH_MAX - 1 || out[0] != '/')
        return -1;
    out[len] = '\0';
    return 0;
}

/* Adds base BASE (LEN bytes of it) of process PID to BASES (N of them, at
 * most MAX), resolved, once, when it is absolute and trusted. */
static void add_base(pid_t pid, char (*bases)[PATH_MAX], size_t *n, size_t max, const char *base, size_t len)
{
    char given[PATH_MAX], resolved[PATH_MAX];

    if (len == 0 || base[0] != '/' || len >= PATH_MAX || *n == max)
        return;
    memcpy(given, base, len);
    given[len] = '\0';
    if (resolve(given, resolved) != 0 || trusted_path(pid, resolved) != 0)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(bases[i], resolved) == 0)
            return;
    memcpy(bases[(*n)++], resolved, strlen(resolved) + 1);
}

/* PATH's base when it is a claim directory (BASE/swerve-claim.X) or its
 * claims directory (.../claims): the length of BASE in PATH, else 0. */
static size_t base_of_claim_dir(const char *path)
{
    size_t len = strlen(path);
    const char *slash;

    if (len > sizeof "/claims" - 1 && strcmp(path + len - (sizeof "/claims" - 1), "/claims") == 0)
        len -= sizeof "/claims" - 1;
    for (slash = path + len; slash > path && slash[-1] != '/'; slash--)
        ;
    if (slash == path || strncmp(slash, "swerve-claim.", sizeof "swerve-claim." - 1) != 0)
        return 0;
    return (size_t)(slash - 1 - path) > 0 ? (size_t)(slash - 1 - path) : 1; /* "/" for a directory at the root */
}

/* The directories among a process's descriptors looked at so far, and
 * what may still be looked at. */
struct fd_walk {
    pid_t pid;
    int dfd; /* its /proc/PID/fd */
    struct scl_budget fds, dirs;
    struct {
        dev_t dev;
        ino_t ino;
    } seen[SCL_BUDGET_PROCESS_DIRS];
    size_t nseen;
};

/* Looks at descriptor NAME of W's process: a directory not seen before,
 * named as a claim directory (or its claims/) is, adds its base.  0, or
 * -1 once W's budget is spent (said). */
static int look_at_fd(struct fd_walk *w, const char *name, char (*bases)[PATH_MAX], size_t *n, size_t max)
{
    char target[PATH_MAX];
    struct stat st;
    ssize_t len;
    size_t base_len;

    if (scl_budget_spend(&w->fds, 1) != 0) {
        scl_admin_report("note: process %ld has more than %lu descriptors: where it keeps claims was looked for "
                         "among the first of them only",
                         (long)w->pid, w->fds.limit);
        return -1;
    }
    /* Through /proc's link, to the directory itself: no path is walked. */
    if (fstatat(w->dfd, name, &st, 0) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    for (size_t i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st.st_dev && w->seen[i].ino == st.st_ino)
            return 0;
    if (scl_budget_spend(&w->dirs, 1) != 0) {
        scl_admin_report("note: process %ld holds descriptors of more than %lu directories: where it keeps claims was "
                         "looked for among the first of them only",
                         (long)w->pid, w->dirs.limit);
        return -1;
    }
    w->seen[w->nseen].dev = st.st_dev;
    w->seen[w->nseen++].ino = st.st_ino;
    len = readlinkat(w->dfd, name, target, sizeof target - 1);
    if (len <= 0 || len >= (ssize_t)sizeof target - 1)
        return 0;
    target[len] = '\0';
    if ((base_len = base_of_claim_dir(target)) > 0)
        add_base(w->pid, bases, n, max, target, base_len);
    return 0;
}

static void bases_from_fds(pid_t pid, char (*bases)[PATH_MAX], size_t *n, size_t max)
{
    struct fd_walk w = { .pid = pid };
    char dir[64];
    struct dirent *e;
    DIR *fds;

    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    if ((fds = opendir(dir)) == NULL)
        return;
    w.dfd = dirfd(fds);
    w.fds = scl_budget_of("descriptors looked at", SCL_BUDGET_PROCESS_FDS);
    w.dirs = scl_budget_of("directories among them", SCL_BUDGET_PROCESS_DIRS);
    /* First where the library keeps its two (src/fs/dir_fds.c), then the
     * others, in the order /proc gives them. */
    if (look_at_fd(&w, "63", bases, n, max) == 0 && look_at_fd(&w, "62", bases, n, max) == 0)
        while ((e = readdir(fds)) != NULL)
            if (e->d_name[0] != '.' && look_at_fd(&w, e->d_name, bases, n, max) != 0)
                break;
    closedir(fds);
}

static void bases_from_environ(pid_t pid, char (*bases)[PATH_MAX], size_t *n, size_t max)
{
    static const char *const settings[] = { "SWERVE_TMPDIR", "TMPDIR" };
    char *env = malloc(SCL_BUDGET_ENVIRON_BYTES);
    ssize_t len;
    const char *v;

    if (env == NULL || (len = scl_proc_read_environ(pid, env, SCL_BUDGET_ENVIRON_BYTES)) <= 0) {
        free(env);
        return;
    }
    if ((v = scl_env_block_value(env, (size_t)len, "SWERVE_CLAIM_DIR")) != NULL)
        add_base(pid, bases, n, max, v, base_of_claim_dir(v));
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if ((v = scl_env_block_value(env, (size_t)len, settings[i])) != NULL)
            add_base(pid, bases, n, max, v, strlen(v));
    free(env);
}

size_t inv_process_bases(pid_t pid, char (*bases)[PATH_MAX], size_t max)
{
    size_t n = 0;

    bases_from_fds(pid, bases, &n, max);
    bases_from_environ(pid, bases, &n, max);
    return n;
}
