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
 * any other is (dirs.c checks whose it is).
 */
#include "config.h"

#include "proc.h"
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An environment is at most a few hundred kilobytes (ARG_MAX is shared
 * with the arguments); settings past this are not looked for. */
#define ENVIRON_MAX (256 * 1024)

const char *tool_untrusted_dir(const struct stat *st)
{
    if (!S_ISDIR(st->st_mode))
        return "not a directory";
    if (st->st_uid != 0 && st->st_uid != geteuid())
        return "it belongs to another user";
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
        return "its group or others may write it without the sticky bit";
    return NULL;
}

/* 0 when RESOLVED (absolute, without symlinks, "." or "..") and every
 * directory on the way to it are trusted; else -1, said. */
static int trusted_path(pid_t pid, const char *resolved)
{
    char prefix[PATH_MAX];
    const char *why = NULL;
    struct stat st;
    size_t at = 0;

    do {
        at += strcspn(resolved + at + 1, "/") + 1;
        memcpy(prefix, resolved, at);
        prefix[at] = '\0';
        /* A symlink here was put there since realpath(): not followed. */
        if (lstat(prefix, &st) != 0)
            why = strerror(errno);
        else if (S_ISLNK(st.st_mode))
            why = "it is a symlink";
        else
            why = tool_untrusted_dir(&st);
    } while (why == NULL && resolved[at] != '\0');
    if (why == NULL)
        return 0;
    tool_error("note: not looking in %s, where process %ld keeps claims: %s: %s", resolved, (long)pid, prefix, why);
    return -1;
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
    if (realpath(given, resolved) == NULL || trusted_path(pid, resolved) != 0)
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

static void bases_from_fds(pid_t pid, char (*bases)[PATH_MAX], size_t *n, size_t max)
{
    char dir[64], target[PATH_MAX];
    struct dirent *e;
    DIR *fds;
    int dfd;

    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    if ((fds = opendir(dir)) == NULL)
        return;
    dfd = dirfd(fds);
    while ((e = readdir(fds)) != NULL) {
        ssize_t len = readlinkat(dfd, e->d_name, target, sizeof target - 1);
        size_t base_len;
        if (len <= 0)
            continue;
        target[len] = '\0';
        if ((base_len = base_of_claim_dir(target)) > 0)
            add_base(pid, bases, n, max, target, base_len);
    }
    closedir(fds);
}

static void bases_from_environ(pid_t pid, char (*bases)[PATH_MAX], size_t *n, size_t max)
{
    static const char *const settings[] = { "SWERVE_TMPDIR", "TMPDIR" };
    char *env = malloc(ENVIRON_MAX);
    ssize_t len;
    const char *v;

    if (env == NULL || (len = scl_proc_read_environ(pid, env, ENVIRON_MAX)) <= 0) {
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

size_t tool_process_bases(pid_t pid, char (*bases)[PATH_MAX], size_t max)
{
    size_t n = 0;

    bases_from_fds(pid, bases, &n, max);
    bases_from_environ(pid, bases, &n, max);
    return n;
}
