/* SPDX-License-Identifier: MIT */
/*
 * The calls that close or replace descriptors: close, close_range,
 * closefrom, dup2, dup3.  Each reports the numbers it touched once libc
 * has done its work, so that the library checks its kept descriptors
 * again only when the host may have taken one (kept_fds.h), instead of
 * before every claim, and follows the listening sockets the process
 * inherited (listeners.h: closing them all is being drained).  The host's
 * hot path: a compare with the lowest kept descriptor and one with the
 * highest listener, inline, no system call; errno and the result as libc
 * gave them.
 * Apache and php-fpm close in signal handlers: async-signal-safe.
 */
#include "config.h"

#include "export.h"
#include "kept_fds.h"
#include "lifecycle.h"
#include "listeners.h"
#include "real.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/close_range.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

SCL_EXPORT int close(int fd)
{
    int (*real)(int) = scl_real()->close;
    int r = real != NULL ? real(fd) : (int)syscall(SYS_close, fd);

    if (fd >= 0) {
        scl_kept_fds_touched((unsigned)fd, (unsigned)fd);
        /* Closed even when interrupted (Linux); not when it was none. */
        if (r == 0 || errno != EBADF)
            scl_listeners_closed((unsigned)fd, (unsigned)fd);
    }
    return r;
}

SCL_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    int (*real)(unsigned, unsigned, int) = scl_real()->close_range;
    int r = real != NULL ? real(first, last, flags) : (int)syscall(SYS_close_range, first, last, flags);

    if (!(flags & CLOSE_RANGE_CLOEXEC)) { /* that one only marks them */
        scl_kept_fds_touched(first, last);
        if (r == 0)
            scl_listeners_closed(first, last);
    }
    return r;
}

SCL_EXPORT void closefrom(int lowfd)
{
    void (*real)(int) = scl_real()->closefrom;
    unsigned from = lowfd > 0 ? (unsigned)lowfd : 0; /* glibc closes from 0 for a number below it */

    if (real != NULL) {
        real(lowfd);
    } else if (syscall(SYS_close_range, from, ~0U, 0) != 0) {
        /* A libc and a kernel older than closefrom and close_range: what
         * the program defined closefrom for is closing them all. */
        int saved = errno;
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = from; fd < max; fd++)
            (void)syscall(SYS_close, fd);
        errno = saved;
    }
    scl_kept_fds_touched(from, UINT_MAX);
    scl_listeners_closed(from, UINT_MAX);
}

/* After dup2 or dup3 made NEWFD a copy of OLDFD: what was at NEWFD is
 * closed (a copy of a listener is found when it matters: listeners.h). */
static int replaced(int r, int oldfd, int newfd)
{
    if (r >= 0 && oldfd != newfd)
        scl_listeners_closed((unsigned)newfd, (unsigned)newfd);
    return r;
}

SCL_EXPORT int dup2(int oldfd, int newfd)
{
    int (*real)(int, int) = scl_real()->dup2;
    int r = real != NULL ? real(oldfd, newfd) : scl_real_missing();

    if (newfd >= 0 && newfd != oldfd)
        scl_kept_fds_touched((unsigned)newfd, (unsigned)newfd);
    return replaced(r, oldfd, newfd);
}

SCL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    int (*real)(int, int, int) = scl_real()->dup3;
    int r = real != NULL ? real(oldfd, newfd, flags) : scl_real_missing();

    if (newfd >= 0)
        scl_kept_fds_touched((unsigned)newfd, (unsigned)newfd);
    return replaced(r, oldfd, newfd);
}

/* The close() above by its own name, which nothing can interpose. */
extern __typeof__(close) scl_own_close __attribute__((alias("close"), visibility("hidden")));

int scl_fd_hooks_in_place(void)
{
    void *found = dlsym(RTLD_DEFAULT, "close");
    int (*host_close)(int);

    memcpy(&host_close, &found, sizeof host_close);
    return host_close == scl_own_close;
}
