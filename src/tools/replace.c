/* SPDX-License-Identifier: MIT */
/*
 * Replacing a file whole, as node_exporter's textfile collector asks of
 * what writes its files: a reader sees the old file or the new one, never
 * a part of either.
 *
 * The file's directory may be below one another user can write: Debian's
 * /var/lib/prometheus/node-exporter is root's, in /var/lib/prometheus,
 * which is the prometheus user's (the collector's own, a daemon on the
 * network).  That user can put a symlink in place of the collector's
 * directory, and a writer that resolves the path would make and rename
 * its file wherever the symlink points (attack 23 of doc/security.md).
 * So the directory is reached a component at a time, a symlink followed
 * only where nobody but root and the caller can have put it, and all
 * that follows is done through the descriptor reached.  A directory of
 * another user's on the way is entered: what it holds can be replaced,
 * but what is reached through a descriptor cannot, and a file made there
 * is the writer's own.
 */
#include "config.h"

#include "sigsafe.h"
#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Symlinks followed on the way, at most: the kernel's own bound. */
#define MAX_LINKS 40

/* The next component of *REST into NAME, *REST moved past it: 0, 1 when
 * there is none, -1 when it is too long. */
static int next_component(const char **rest, char name[NAME_MAX + 1])
{
    const char *p = *rest + strspn(*rest, "/");
    size_t len = strcspn(p, "/");

    if (len == 0)
        return 1;
    if (len > NAME_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    *rest = p + len;
    return 0;
}

/* Reads symlink NAME (LINK: its own status) of directory DIRFD into
 * TARGET, when nobody but root and the caller can have put it there: it
 * is theirs, and so is its directory, which nobody else may write (but
 * for the sticky bit).  Else says why not, on the way to PATH: -1. */
static int follow(int dirfd, const char *name, const struct stat *link, char target[PATH_MAX], const char *path)
{
    const char *why = "it belongs to another user", *where = "";
    struct stat st;
    ssize_t n;

    if (link->st_uid == 0 || link->st_uid == geteuid()) {
        where = "the directory it is in: ";
        why = fstat(dirfd, &st) != 0 ? strerror(errno) : scl_admin_untrusted_dir(&st);
    }
    if (why != NULL) {
        tool_error("cannot write %s: not following the symlink %s on the way to it: %s%s", path, name, where, why);
        return -1;
    }
    n = readlinkat(dirfd, name, target, PATH_MAX - 1);
    if (n < 0 || n == PATH_MAX - 1) {
        tool_error("cannot write %s: %s: %s", path, name, strerror(n < 0 ? errno : ENAMETOOLONG));
        return -1;
    }
    target[n] = '\0';
    return 0;
}

/* Directory DIR of file PATH, reached as this file says: its descriptor
 * (O_PATH), or -1 (said). */
static int open_dir(const char *dir, const char *path)
{
    char rests[2][PATH_MAX], name[NAME_MAX + 1], target[PATH_MAX];
    const char *rest = dir;
    int cur = open(dir[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC), links = 0, r = -1;
    struct stat st;

    while (cur >= 0 && (r = next_component(&rest, name)) == 0) {
        int next;
        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            if (follow(cur, name, &st, target, path) != 0) {
                close(cur);
                return -1;
            }
            /* The target, then what was left after the link. */
            links++;
            if (links > MAX_LINKS || snprintf(rests[links % 2], PATH_MAX, "%s/%s", target, rest) >= PATH_MAX) {
                errno = links > MAX_LINKS ? ELOOP : ENAMETOOLONG;
                break;
            }
            rest = rests[links % 2];
            if (target[0] != '/')
                continue;
            next = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        } else {
            /* Made a symlink since it was looked at: not followed. */
            next = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        close(cur);
        cur = next;
    }
    if (cur >= 0 && r == 1)
        return cur;
    tool_error("cannot write %s: %s", path, strerror(errno));
    if (cur >= 0)
        close(cur);
    return -1;
}

/* Writes TEXT (LEN bytes) to a new file in DIRFD named after BASE
 * (".BASE.XXXXXX": no collector takes it for one of its *.prom files),
 * mode 0644, on disk: its name in TMP, or -1 with errno (and nothing
 * left). */
static int write_temp(int dirfd, const char *base, const char *text, size_t len, char tmp[NAME_MAX + 1])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    int n = snprintf(tmp, NAME_MAX + 1, ".%s.XXXXXX", base), fd = -1, saved;
    unsigned char rnd[6];

    if (n > NAME_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
            return -1;
        for (size_t i = 0; i < sizeof rnd; i++)
            tmp[n - (int)sizeof rnd + (int)i] = alphabet[rnd[i] % (sizeof alphabet - 1)];
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    if (fd < 0)
        return -1;
    /* Readable by the collector, which seldom runs as the writer's user,
     * whatever the umask. */
    if (fchmod(fd, 0644) == 0 && scl_write_full(fd, text, len) == 0 && fsync(fd) == 0) {
        if (close(fd) == 0)
            return 0;
        fd = -1;
    }
    saved = errno;
    if (fd >= 0)
        close(fd);
    (void)unlinkat(dirfd, tmp, 0);
    errno = saved;
    return -1;
}

/* Replaces BASE in DIRFD with TEXT (LEN bytes): 0, or -1 with errno. */
static int replace_in(int dirfd, const char *base, const char *text, size_t len)
{
    char tmp[NAME_MAX + 1];
    int saved, fd;

    if (strchr(base, '/') != NULL || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        errno = EISDIR;
        return -1;
    }
    if (write_temp(dirfd, base, text, len, tmp) != 0)
        return -1;
    if (renameat(dirfd, tmp, dirfd, base) != 0) {
        saved = errno;
        (void)unlinkat(dirfd, tmp, 0);
        errno = saved;
        return -1;
    }
    if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        (void)fsync(fd); /* the rename on disk too: best effort */
        close(fd);
    }
    return 0;
}

int tool_replace_file(const char *path, const char *text, size_t len)
{
    char *copies[2] = { strdup(path), strdup(path) };
    sigset_t ending, was;
    int r = -1, dirfd;

    if (copies[0] == NULL || copies[1] == NULL) {
        tool_error("cannot write %s: %s", path, strerror(ENOMEM));
    } else if ((dirfd = open_dir(dirname(copies[0]), path)) >= 0) {
        /* An interrupt between the temporary's making and its renaming
         * would leave it: it waits until the file is one or the other. */
        sigemptyset(&ending);
        sigaddset(&ending, SIGINT);
        sigaddset(&ending, SIGTERM);
        sigaddset(&ending, SIGHUP);
        sigaddset(&ending, SIGQUIT);
        sigprocmask(SIG_BLOCK, &ending, &was);
        r = replace_in(dirfd, basename(copies[1]), text, len);
        sigprocmask(SIG_SETMASK, &was, NULL);
        if (r != 0)
            tool_error("cannot write %s: %s", path, strerror(errno));
        close(dirfd);
    }
    free(copies[0]);
    free(copies[1]);
    return r;
}
