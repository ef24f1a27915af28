/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "hot.h"
#include "listeners.h"
#include "own_stack.h"
#include "sigsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORDS (SCL_LISTENER_FDS / 64)

/* What this process knows of listeners.  SOCKET only grows (listen() adds
 * to it), so what a process inherited is the start of it: ADOPTED holds
 * the process whose notes these are (high half) and how many of SOCKET it
 * inherited (low half), in one word, so that no lock is needed to take
 * them: a close hook may run in a signal handler. */
static struct {
    _Atomic uint64_t adopted;
    _Atomic ino_t socket[SCL_LISTENERS]; /* every listener's inode, this process's and its ancestors' */
    atomic_int nsockets;                 /* how many; past SCL_LISTENERS, -1: too many to tell */
    _Atomic pid_t closed_all;            /* this process, once it closed the last it inherited */
} known;

static uint64_t adoption(pid_t self, int inherited)
{
    return (uint64_t)(uint32_t)self << 32 | (uint32_t)inherited;
}

static pid_t adopter(uint64_t adopted)
{
    return (pid_t)(uint32_t)(adopted >> 32);
}

/* How many of SOCKET the adopter inherited; -1 when they were too many. */
static int inherited_count(void)
{
    return (int)(uint32_t)atomic_load(&known.adopted);
}

SCL_HOT atomic_int scl_listeners_highest = -1;
/* A bit per number that holds a listener, as the adopter knows them. */
_Atomic uint64_t scl_listeners_at[WORDS];

static uint64_t bit_of(int fd)
{
    return 1ULL << (fd % 64);
}

static void note_at(int fd)
{
    int top = atomic_load(&scl_listeners_highest);

    atomic_fetch_or(&scl_listeners_at[fd / 64], bit_of(fd));
    while (fd > top && !atomic_compare_exchange_weak(&scl_listeners_highest, &top, fd))
        ;
}

/* Whether the notes are this process SELF's: they are once it has made
 * them so at fork (scl_listeners_child_forked()), or, when nobody
 * had any (a process that starts its image), at its first listen().  Any
 * other process on these pages shares its parent's memory (a vfork child,
 * CPython's subprocess closing descriptors before its exec) or was forked
 * with no fork handler (_Fork, a raw clone): it leaves them alone. */
static int adopted_by(pid_t self)
{
    uint64_t none = 0;

    return adopter(atomic_load(&known.adopted)) == self ||
           atomic_compare_exchange_strong(&known.adopted, &none, adoption(self, 0)) || adopter(none) == self;
}

void scl_listeners_child_forked(void)
{
    /* getpid() only then: a shell's child pays a load, no system call. */
    if (atomic_load_explicit(&known.nsockets, memory_order_relaxed) != 0)
        atomic_store(&known.adopted, adoption(getpid(), atomic_load(&known.nsockets)));
}

/* Notes INO among the sockets, unless it is there already (listen()
 * again, to change its backlog; listen() on a socket bound before).  A
 * listener that finds no room turns listener draining off (TOO_MANY_OFF):
 * a worker could not tell it had closed them all; a bound socket that
 * finds none is only not noted. */
static void remember(ino_t ino, int too_many_off)
{
    int n = atomic_load(&known.nsockets);

    for (int i = 0; i < n; i++)
        if (atomic_load(&known.socket[i]) == ino)
            return;
    /* Another thread's may take slot N first: then the next. */
    while (n >= 0 && n < SCL_LISTENERS && !atomic_compare_exchange_weak(&known.nsockets, &n, n + 1))
        ;
    if (n >= 0 && n < SCL_LISTENERS)
        atomic_store(&known.socket[n], ino);
    else if (too_many_off)
        atomic_store(&known.nsockets, -1); /* too many: nobody is ever taken for drained by them */
}

void scl_listeners_listening(int fd)
{
    int saved = errno;
    struct stat st;

    /* Bound at load, as the close path's calls: nothing binds lazily. */
    if (fd >= 0 && scl_bound.syscall(SYS_fstat, fd, &st) == 0 && adopted_by(getpid())) {
        remember(st.st_ino, 1);
        /* One at a number no bit is kept for is known by its inode: its
         * copies count as open (look_at), though its closing is not seen. */
        if (fd < SCL_LISTENER_FDS)
            note_at(fd);
    }
    errno = saved;
}

void scl_listeners_bound(int fd)
{
    int saved = errno, type = 0;
    socklen_t len = sizeof type;
    struct stat st;

    /* A stream socket only: one that can listen.  No bit: closing it is
     * nothing until a listen() in this process or a child.  Only in a
     * process that inherited no notes (a master): a worker's own binds
     * (a client binding its source address) are nothing to its children,
     * and would only fill the table. */
    if (fd >= 0 && scl_bound.syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
        (type == SOCK_STREAM || type == SOCK_SEQPACKET) && scl_bound.syscall(SYS_fstat, fd, &st) == 0 &&
        adopted_by(getpid()) && inherited_count() == 0)
        remember(st.st_ino, 0);
    errno = saved;
}

/* 1 when FD is a socket that still accepts and that process inherited. */
static int inherited_listener(int fd)
{
    int n = inherited_count(), accepts = 0;
    socklen_t len = sizeof accepts;
    struct stat st;

    if (scl_bound.syscall(SYS_fstat, fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return 0;
    for (int i = 0; i < n; i++)
        if (atomic_load(&known.socket[i]) == st.st_ino)
            return scl_bound.syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ACCEPTCONN, &accepts, &len) == 0 && accepts;
    return 0;
}

/* One open descriptor, as /proc/self/fd names it: noted when it is an
 * inherited listener (a copy); *ARG counts them.  A copy at a number no
 * bit is kept for counts as open, and its closing is never seen: such a
 * process is never taken for drained by its listeners, rather than taken
 * for drained while it accepts. */
static int look_at(const struct dirent64 *d, void *arg)
{
    const char *name = d->d_name;
    unsigned long long fd;

    if (scl_parse_ull(&name, &fd) == 0 && *name == '\0' && fd <= INT_MAX && inherited_listener((int)fd)) {
        if (fd < SCL_LISTENER_FDS)
            note_at((int)fd);
        ++*(int *)arg;
    }
    return 0;
}

/* Without /proc: whether an inherited listener is open at a number no bit
 * is kept for, up to the descriptor limit (at most the kernel's default
 * nr_open), found PAST_NOTED_BATCH numbers at a time by ppoll(), which
 * flags a number not open POLLNVAL.  When it cannot tell, it says so. */
#define PAST_NOTED_BATCH 32
static int open_past_noted(void)
{
    static const struct timespec at_once = { 0, 0 };
    struct pollfd batch[PAST_NOTED_BATCH];
    struct rlimit lim;
    rlim_t end;

    if (scl_bound.syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) != 0)
        return 1;
    end = lim.rlim_cur < (rlim_t)1 << 20 ? lim.rlim_cur : (rlim_t)1 << 20;
    for (rlim_t from = SCL_LISTENER_FDS; from < end; from += PAST_NOTED_BATCH) {
        int n = end - from < PAST_NOTED_BATCH ? (int)(end - from) : PAST_NOTED_BATCH;
        for (int i = 0; i < n; i++)
            batch[i] = (struct pollfd){ .fd = (int)(from + (rlim_t)i) };
        if (scl_bound.syscall(SYS_ppoll, batch, n, &at_once, NULL, 0) < 0)
            return 1;
        for (int i = 0; i < n; i++)
            if (!(batch[i].revents & POLLNVAL) && inherited_listener(batch[i].fd))
                return 1;
    }
    return 0;
}

/* On the own stack: whether an inherited listener is still open here. */
static void look_for_listeners(void *arg)
{
    int dir = scl_open_dir_at(AT_FDCWD, "/proc/self/fd"), *open = arg;

    if (dir < 0 || scl_each_entry(dir, look_at, open) != 0) {
        /* No /proc (a chroot): the numbers a listener can be noted at,
         * then those past them. */
        *open = 0;
        for (int fd = 0; fd < SCL_LISTENER_FDS; fd++)
            if (fd != dir && inherited_listener(fd)) {
                note_at(fd);
                ++*open;
            }
        if (*open == 0)
            *open = open_past_noted();
    }
    if (dir >= 0)
        scl_close_quietly(dir);
}

/* Listener FD was closed by this process. */
static void ended(int fd)
{
    pid_t self = getpid();
    int open = 0;

    if (adopter(atomic_load(&known.adopted)) != self)
        return;
    atomic_fetch_and(&scl_listeners_at[fd / 64], ~bit_of(fd));
    if (inherited_count() <= 0 || atomic_load(&known.nsockets) < 0 || atomic_load(&known.closed_all) == self)
        return;
    scl_on_own_stack(look_for_listeners, &open);
    if (open == 0)
        atomic_store(&known.closed_all, self);
}

void scl_listeners_closed_any(unsigned lo, unsigned hi)
{
    unsigned top = (unsigned)atomic_load(&scl_listeners_highest);

    for (unsigned fd = lo; fd <= (hi < top ? hi : top); fd++) {
        uint64_t word = atomic_load(&scl_listeners_at[fd / 64]);
        if (word == 0) {
            fd |= 63; /* none in this word */
        } else if (word & bit_of((int)fd)) {
            int saved = errno;
            ended((int)fd);
            errno = saved;
        }
    }
}

int scl_listeners_all_closed(pid_t self)
{
    return atomic_load(&known.closed_all) == self;
}
