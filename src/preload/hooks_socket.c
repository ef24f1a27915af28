/* SPDX-License-Identifier: MIT */
/*
 * The socket calls that make or end a listener: bind, listen and
 * shutdown.  A worker that has closed, or shut down, every listening
 * socket it inherited from its master is being drained (listeners.h):
 * nginx, Apache and php-fpm drain a worker so.  listen() is seen in the
 * master, which its workers then inherit, or bind() there and listen()
 * in the workers (hypercorn); no call changes anything else, and errno
 * and the result are libc's.  Async-signal-safe.
 */
#include "config.h"

#include "export.h"
#include "listeners.h"
#include "real.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A server binds a listener once, at its start: a getsockopt() and an
 * fstat() for a stream socket's inode cost nothing on a hot path. */
SCL_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    int (*real)(int, const struct sockaddr *, socklen_t) = scl_real()->bind;
    int r = real != NULL ? real(fd, addr, len) : (int)syscall(SYS_bind, fd, addr, len);

    if (r == 0)
        scl_listeners_bound(fd);
    return r;
}

SCL_EXPORT int listen(int fd, int backlog)
{
    int (*real)(int, int) = scl_real()->listen;
    int r = real != NULL ? real(fd, backlog) : (int)syscall(SYS_listen, fd, backlog);

    if (r == 0)
        scl_listeners_listening(fd);
    return r;
}

/* A listener shut down for reading accepts nothing more (uWSGI shuts its
 * sockets down before it closes them). */
SCL_EXPORT int shutdown(int fd, int how)
{
    int (*real)(int, int) = scl_real()->shutdown;
    int r = real != NULL ? real(fd, how) : (int)syscall(SYS_shutdown, fd, how);

    if (r == 0 && fd >= 0 && (how == SHUT_RD || how == SHUT_RDWR))
        scl_listeners_closed((unsigned)fd, (unsigned)fd);
    return r;
}
