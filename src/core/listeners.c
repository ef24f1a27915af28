#include "config.h"

#include "bound.h"
#include "fork_page.h"
#include "hot.h"
#include "listeners.h"
#include "own_stack.h"
#include "sigsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORDS (SCL_LISTENER_FDS / 64)

/* What process OWNER knows of listeners: a process that finds another pid
 * there has them as its parent had them when it forked it. */
static struct {
    _Atomic pid_t owner;
    _Atomic uint64_t at[WORDS];             /* a bit per number that holds a listener */
    _Atomic ino_t socket[SCL_LISTENERS];    /* every listener's inode, this process's and its ancestors' */
    atomic_int nsockets;                    /* how many; past SCL_LISTENERS, -1: too many to tell */
    _Atomic ino_t inherited[SCL_LISTENERS]; /* those the owner inherited */
    atomic_int ninherited;
    _Atomic pid_t closed_all; /* the owner, once it closed the last it inherited */
} known;

SCL_HOT atomic_int scl_listeners_highest = -1;
/* Known to the owner too: a bit per number that holds a listener. */
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

/* Makes the notes this process SELF's: what it inherited is counted as
 * such.  Once per process (a forked child's first write to these pages is
 * here), under scl_lock(), which blocks signals: a handler that closes
 * cannot interrupt it on this thread. */
static void adopt(pid_t self)
{
    if (atomic_load(&known.owner) == self)
        return;
    scl_lock();
    if (atomic_load(&known.owner) != self) {
        int n = atomic_load(&known.nsockets);
        for (int i = 0; i < n; i++)
            atomic_store(&known.inherited[i], atomic_load(&known.socket[i]));
        atomic_store(&known.ninherited, n);
        atomic_store(&known.owner, self);
    }
    scl_unlock();
}

void scl_listeners_listening(int fd)
{
    int saved = errno, n;
    struct stat st;

    /* Bound at load, as the close path's calls: nothing binds lazily. */
    if (fd < 0 || fd >= SCL_LISTENER_FDS || scl_bound.syscall(SYS_fstat, fd, &st) != 0)
        goto out;
    adopt(getpid());
    n = atomic_load(&known.nsockets);
    for (int i = 0; i < n; i++)
        if (atomic_load(&known.socket[i]) == st.st_ino)
            goto at; /* listen() again, to change its backlog */
    if (n >= 0 && n < SCL_LISTENERS && atomic_compare_exchange_strong(&known.nsockets, &n, n + 1))
        atomic_store(&known.socket[n], st.st_ino);
    else
        atomic_store(&known.nsockets, -1); /* too many: nobody is ever taken for drained by them */
at:
    note_at(fd);
out:
    errno = saved;
}

/* 1 when FD is a socket that still accepts and that process inherited. */
static int inherited_listener(int fd)
{
    int n = atomic_load(&known.ninherited), accepts = 0;
    socklen_t len = sizeof accepts;
    struct stat st;

    if (scl_bound.syscall(SYS_fstat, fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return 0;
    for (int i = 0; i < n; i++)
        if (atomic_load(&known.inherited[i]) == st.st_ino)
            return scl_bound.syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_ACCEPTCONN, &accepts, &len) == 0 && accepts;
    return 0;
}

/* One open descriptor, as /proc/self/fd names it: noted when it is an
 * inherited listener (a copy); *ARG counts them. */
static int look_at(const struct dirent64 *d, void *arg)
{
    const char *name = d->d_name;
    unsigned long long fd;

    if (scl_parse_ull(&name, &fd) == 0 && *name == '\0' && fd < SCL_LISTENER_FDS && inherited_listener((int)fd)) {
        note_at((int)fd);
        ++*(int *)arg;
    }
    return 0;
}

/* On the own stack: whether an inherited listener is still open here. */
static void look_for_listeners(void *arg)
{
    int dir = scl_open_dir_at(AT_FDCWD, "/proc/self/fd"), *open = arg;

    if (dir < 0 || scl_each_entry(dir, look_at, open) != 0) {
        /* No /proc (a chroot): the numbers a listener can be noted at. */
        *open = 0;
        for (int fd = 0; fd < SCL_LISTENER_FDS; fd++)
            if (fd != dir && inherited_listener(fd)) {
                note_at(fd);
                ++*open;
            }
    }
    if (dir >= 0)
        scl_close_quietly(dir);
}

/* Listener FD was closed by this process. */
static void ended(int fd)
{
    pid_t self = getpid();
    int open = 0;

    adopt(self);
    atomic_fetch_and(&scl_listeners_at[fd / 64], ~bit_of(fd));
    if (atomic_load(&known.ninherited) <= 0 || atomic_load(&known.nsockets) < 0 ||
        atomic_load(&known.closed_all) == self)
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
