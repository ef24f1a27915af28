/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "scratch.h"
#include "sigsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int64_t scl_monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

ssize_t scl_read_full(int fd, void *buf, size_t n)
{
    size_t done = 0;

    while (done < n) {
        ssize_t got = read(fd, (char *)buf + done, n - done);
        if (got == 0)
            break;
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)got;
    }
    return (ssize_t)done;
}

int scl_write_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;

    while (done < n) {
        ssize_t put = write(fd, (const char *)buf + done, n - done);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        done += (size_t)put;
    }
    return 0;
}

size_t scl_fmt_ull(char *out, unsigned long long v)
{
    char rev[21];
    size_t n = 0;

    do {
        rev[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
    return n;
}

int scl_parse_ull(const char **p, unsigned long long *v)
{
    const char *s = *p;
    unsigned long long acc = 0;

    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        unsigned digit = (unsigned)(*s - '0');
        if (acc > (~0ULL - digit) / 10)
            return -1;
        acc = acc * 10 + digit;
        s++;
    }
    *p = s;
    *v = acc;
    return 0;
}

int scl_concat(char *out, size_t cap, ...)
{
    va_list ap;
    size_t len = 0;
    const char *part;

    va_start(ap, cap);
    while ((part = va_arg(ap, const char *)) != NULL) {
        for (; *part != '\0'; part++) {
            if (len + 1 >= cap) {
                va_end(ap);
                errno = ENAMETOOLONG;
                return -1;
            }
            out[len++] = *part;
        }
    }
    va_end(ap);
    out[len] = '\0';
    return 0;
}

int scl_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    int fd;

    do
        fd = openat(dirfd, path, flags, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

int scl_open_dir_at(int dirfd, const char *name)
{
    int fd;

    fd = scl_openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    return fd;
}

int scl_unlink_if_same(int dirfd, const char *name, dev_t dev, ino_t ino)
{
    struct stat now;

    if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    if (now.st_dev != dev || now.st_ino != ino) {
        errno = ESTALE;
        return -1;
    }
    return unlinkat(dirfd, name, 0);
}

int scl_open_typed_at(int dirfd, const char *name, int flags, struct stat *st, mode_t type)
{
    struct stat before;
    int fd;

    if (fstatat(dirfd, name, &before, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    /* A FIFO (any TYPE but a regular file) with another name may be
     * somebody else's linked in (fs.protected_hardlinks = 0): even its
     * open is seen by its reader, so it is never opened. */
    if ((before.st_mode & S_IFMT) != type || (type != S_IFREG && before.st_nlink != 1)) {
        errno = EINVAL;
        return -1;
    }
    fd = scl_openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || (st->st_mode & S_IFMT) != type || st->st_dev != before.st_dev ||
        st->st_ino != before.st_ino) {
        scl_close_quietly(fd);
        errno = EINVAL; /* swapped between the look and the open */
        return -1;
    }
    return fd;
}

int scl_open_file_at(int dirfd, const char *name, int flags, struct stat *st)
{
    return scl_open_typed_at(dirfd, name, flags, st, S_IFREG);
}

int scl_fd_is(int fd, mode_t type, dev_t dev, ino_t ino)
{
    struct stat st;
    int saved = errno, same;

    same = fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_dev == dev && st.st_ino == ino;
    errno = saved;
    return same;
}

void scl_close_quietly(int fd)
{
    int saved = errno;

    /* Linux frees the descriptor even when close() reports EINTR.  The
     * system call itself: close() is the shim's own hook. */
    (void)scl_bound.syscall(SYS_close, fd);
    errno = saved;
}

int scl_kill(pid_t pid, int sig)
{
    return (int)scl_bound.syscall(SYS_kill, pid, sig);
}

size_t scl_length(const char *s)
{
    size_t n = 0;

    /* The empty asm hides the counting from the loop-idiom pass. */
    for (; s[n] != '\0'; n++)
        __asm__("" : "+r"(n));
    return n;
}

const char *scl_after_prefix(const char *s, const char *prefix)
{
    while (*prefix != '\0')
        if (*s++ != *prefix++)
            return NULL;
    return s;
}

int scl_contains(const char *s, const char *needle)
{
    for (; *s != '\0'; s++)
        if (scl_after_prefix(s, needle) != NULL)
            return 1;
    return *needle == '\0';
}

int scl_each_entry(int dirfd, scl_entry_fn *fn, void *arg)
{
    char *buf = scl_scratch_take();
    int fd = buf != NULL ? scl_open_dir_at(dirfd, ".") : -1, r = 0;

    if (fd < 0) {
        scl_scratch_give(buf);
        return -1;
    }
    while (r == 0) {
        ssize_t n = getdents64(fd, buf, SCL_SCRATCH_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = n < 0 ? -1 : 0;
            break;
        }
        for (ssize_t off = 0; off < n && r == 0;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf + off);
            off += d->d_reclen;
            r = fn(d, arg);
        }
    }
    scl_close_quietly(fd);
    scl_scratch_give(buf);
    return r;
}

int scl_file_allocate(int fd, off_t size)
{
    /* Up to 16 pages a call: a wake file in one, a history in five. */
    struct iovec pages[16];
    const off_t most = (off_t)(sizeof pages / sizeof pages[0]) * SCL_SCRATCH_SIZE;
    char *zeroes = scl_scratch_take();
    int r = 0;

    if (zeroes == NULL)
        return -1;
    memset(zeroes, 0, SCL_SCRATCH_SIZE);
    for (off_t at = 0; r == 0 && at < size;) {
        off_t chunk = size - at < most ? size - at : most;
        int n = 0;
        ssize_t done;
        for (off_t put = 0; put < chunk; put += (off_t)pages[n++].iov_len)
            pages[n] =
                (struct iovec){ zeroes, chunk - put < SCL_SCRATCH_SIZE ? (size_t)(chunk - put) : SCL_SCRATCH_SIZE };
        done = pwritev(fd, pages, n, at);
        if (done > 0)
            at += done; /* what a short write left is written next, or fails */
        else if (done == 0)
            errno = ENOSPC, r = -1;
        else if (errno != EINTR)
            r = -1;
    }
    scl_scratch_give(zeroes);
    return r;
}
