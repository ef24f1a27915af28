/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "budget.h"
#include "sha256.h"
#include "sigsafe.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How often a waiter opens a name's FIFO again while its last waiter is
 * removing it. */
#define JOIN_ATTEMPTS 8

void scl_watch_name(const char *fname, char out[SCL_WATCH_NAME_MAX])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t digest[SCL_SHA256_LEN];
    size_t n = sizeof SCL_WATCH_PREFIX - 1;

    scl_sha256(fname, scl_length(fname), digest);
    for (size_t i = 0; i < n; i++)
        out[i] = SCL_WATCH_PREFIX[i];
    for (size_t i = 0; i < SCL_SHA256_LEN / 2; i++) {
        out[n++] = hex[digest[i] >> 4];
        out[n++] = hex[digest[i] & 15];
    }
    out[n] = '\0';
}

/* Opens FIFO NAME of CLAIMS_FD with FLAGS, never blocking, only when it is a
 * FIFO with no other name (scl_open_typed_at()): never a device, a socket
 * or a regular file somebody put there, nor another FIFO of the system
 * linked in (a root reaper writes to it).  -1 with errno (EEXIST:
 * something else stands there). */
static int open_fifo(int claims_fd, const char *name, int flags, struct stat *st)
{
    int fd = scl_open_typed_at(claims_fd, name, flags, st, S_IFIFO);

    if (fd < 0 && errno == EINVAL)
        errno = EEXIST;
    return fd;
}

void scl_watch_notify(int claims_fd, const char *watch_name)
{
    struct stat st;
    int saved = errno, fd;

    /* Read and write: a writer alone would get SIGPIPE, and die of it,
     * should the last waiter leave between the open and the write; a byte
     * nobody else reads goes with the close.  A full buffer: EAGAIN, and
     * a wake-up is there already. */
    fd = open_fifo(claims_fd, watch_name, O_RDWR, &st);
    if (fd >= 0) {
        (void)write(fd, "", 1);
        scl_close_quietly(fd);
    }
    errno = saved;
}

/* Forgets W's descriptors without closing them (another process's). */
static void forget(struct scl_watch *w)
{
    *w = (struct scl_watch)SCL_WATCH_NONE;
}

/* 1 when W's pidfd is still its own: the epoll instance watches the very
 * file open at that number (pidfds share one inode before Linux 6.9, so
 * the number's file is asked of epoll, not of fstat). */
static int pidfd_is_ours(const struct scl_watch *w)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->pidfd };
    int saved = errno, ours = epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->pidfd, &ev) == 0;

    errno = saved;
    return ours;
}

/* 1 when W's descriptors are open in process SELF and still its own: the
 * FIFO is the inode it opened, and the epoll instance watches it. */
static int still_ours(const struct scl_watch *w, pid_t self)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->fifo };
    int saved = errno, ours;

    ours = w->owner == self && scl_fd_is(w->fifo, S_IFIFO, w->fifo_dev, w->fifo_ino) &&
           epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->fifo, &ev) == 0;
    errno = saved;
    return ours;
}

/* Gives up the FIFO FD, WATCH_NAME of CLAIMS_FD (-1: another directory's, or
 * none to be had), removing it when no other waiter has it: its shared
 * lock turned exclusive (a waiter that comes meanwhile finds it locked so,
 * and opens the name again once it is gone). */
static void leave_fifo(int fd, int claims_fd, const char *watch_name, dev_t dev, ino_t ino)
{
    if (claims_fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        (void)scl_unlink_if_same(claims_fd, watch_name, dev, ino);
    scl_close_quietly(fd);
}

void scl_watch_close(struct scl_watch *w, int claims_fd, const char *watch_name, pid_t self)
{
    int saved = errno;

    if (still_ours(w, self)) {
        if (w->pidfd >= 0 && pidfd_is_ours(w))
            scl_close_quietly(w->pidfd);
        if (w->took_wakeups)
            scl_watch_ready(w); /* passed on: the others look again */
        leave_fifo(w->fifo, claims_fd, watch_name, w->fifo_dev, w->fifo_ino);
        scl_close_quietly(w->epfd);
    }
    forget(w);
    errno = saved;
}

static int watch_fd(int epfd, int fd)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The FIFO WATCH_NAME of CLAIMS_FD, made when missing, open for reading and
 * writing (so that it never reports a hang-up, and a waiter can wake
 * itself), never blocking, its inode in *ST: -1 with errno. */
static int fifo_at(int claims_fd, const char *watch_name, struct stat *st)
{
    int fd = open_fifo(claims_fd, watch_name, O_RDWR, st);

    if (fd >= 0 || errno != ENOENT)
        return fd;
    /* Any user who may reach the claims directory may wake its waiters
     * (doc/security.md): the directories keep everybody else out. */
    if (mkfifoat(claims_fd, watch_name, 0666) != 0 && errno != EEXIST)
        return -1;
    fd = open_fifo(claims_fd, watch_name, O_RDWR, st);
    if (fd >= 0 && st->st_uid == geteuid() && (st->st_mode & 0777) != 0666)
        (void)fchmod(fd, 0666);
    return fd;
}

/* 1 when WATCH_NAME of CLAIMS_FD is still the FIFO DEV/INO: its last waiter
 * removes it as it leaves, and a worker may have put another there. */
static int still_named(int claims_fd, const char *watch_name, dev_t dev, ino_t ino)
{
    struct stat st;

    return fstatat(claims_fd, watch_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* The FIFO WATCH_NAME of CLAIMS_FD, for a waiter: open (fifo_at()), with a
 * shared lock that tells its last waiter that others are there, and still
 * at its name once the lock is held (so not being removed).  A name being
 * removed is tried again, a few times: a worker that keeps the FIFO
 * locked can keep the name's waiters from waiting in a loop (EBUSY), as
 * holding the name keeps them from it.  -1 with errno. */
static int join_fifo(int claims_fd, const char *watch_name, struct stat *st)
{
    for (int attempt = 0; attempt < JOIN_ATTEMPTS; attempt++) {
        int fd = fifo_at(claims_fd, watch_name, st);
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_SH | LOCK_NB) == 0 && still_named(claims_fd, watch_name, st->st_dev, st->st_ino))
            return fd;
        scl_close_quietly(fd);
        sched_yield(); /* its last waiter is removing it: microseconds */
    }
    errno = EBUSY;
    return -1;
}

int scl_watch_open(struct scl_watch *w, int claims_fd, unsigned gen, const char *watch_name, pid_t self)
{
    struct stat st;
    int fifo;

    if (!still_ours(w, self))
        forget(w);
    else if (w->gen != gen)
        scl_watch_close(w, -1, watch_name, self); /* a directory this process left */
    if (w->owner == self && still_named(claims_fd, watch_name, w->fifo_dev, w->fifo_ino))
        return 0;
    /* None yet, or the FIFO at the name is another now (a worker put it
     * there): the releases write to that one. */
    if ((fifo = join_fifo(claims_fd, watch_name, &st)) < 0)
        return -1;
    if (w->owner != self) {
        if ((w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
            int saved = errno;
            scl_close_quietly(fifo);
            forget(w);
            errno = saved;
            return -1;
        }
        w->owner = self;
        w->gen = gen;
    } else {
        (void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->fifo, NULL);
        leave_fifo(w->fifo, -1, watch_name, 0, 0);
    }
    w->fifo = fifo;
    w->fifo_dev = st.st_dev;
    w->fifo_ino = st.st_ino;
    if (watch_fd(w->epfd, fifo) != 0) {
        int saved = errno;
        scl_watch_close(w, claims_fd, watch_name, self);
        errno = saved;
        return -1;
    }
    return 0;
}

void scl_watch_ready(struct scl_watch *w)
{
    int saved = errno;

    (void)write(w->fifo, "", 1); /* EAGAIN: it is readable already */
    errno = saved;
}

/* Stops watching the holder's end (a number the host took over is left
 * to it). */
static void unwatch_holder(struct scl_watch *w)
{
    if (w->pidfd < 0)
        return;
    if (pidfd_is_ours(w)) {
        (void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->pidfd, NULL);
        scl_close_quietly(w->pidfd);
    }
    w->pidfd = -1;
    w->holder.pid = 0;
}

int scl_watch_holder(struct scl_watch *w, const struct scl_proc_id *holder)
{
    int fd;

    if (w->pidfd >= 0 && w->holder.pid == holder->pid && w->holder.start == holder->start && pidfd_is_ours(w))
        return 0;
    unwatch_holder(w);
    if (holder->pid <= 0)
        return 0;
    fd = (int)syscall(SYS_pidfd_open, holder->pid, 0); /* close-on-exec, always */
    if (fd < 0) {
        if (errno != ESRCH)
            return -1;
        scl_watch_ready(w); /* gone, reaped already */
        return 0;
    }
    if (watch_fd(w->epfd, fd) != 0) {
        int saved = errno;
        scl_close_quietly(fd);
        errno = saved;
        return -1;
    }
    w->pidfd = fd;
    w->holder = *holder;
    /* The pid was read before the pidfd was opened: the process may have
     * ended in between, and another taken its pid. */
    if (!scl_proc_alive(holder))
        scl_watch_ready(w);
    return 0;
}

int scl_watch_consume(struct scl_watch *w, pid_t self)
{
    struct epoll_event ev[2];
    int saved = errno, n, ended = 0;

    if (w->owner != self)
        return 0;
    if (!still_ours(w, self)) {
        forget(w); /* the host closed them: the next wait opens others */
        return 1;
    }
    n = epoll_wait(w->epfd, ev, 2, 0);
    for (int i = 0; i < n; i++) {
        if (ev[i].data.fd == w->fifo) {
            char bytes[SCL_BUDGET_FIFO_CHUNK];
            ssize_t got;
            for (unsigned reads = 0; reads < SCL_BUDGET_FIFO_READS && (got = read(w->fifo, bytes, sizeof bytes)) > 0;
                 reads++) {
                w->took_wakeups = 1;
                if (got < (ssize_t)sizeof bytes)
                    break; /* all there was */
            }
        } else if (ev[i].data.fd == w->pidfd) {
            unwatch_holder(w);
            ended = 1;
        }
    }
    errno = saved;
    return ended;
}
