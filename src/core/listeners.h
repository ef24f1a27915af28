/*
 * The listening sockets this process inherited from its master, and
 * whether it has closed them all: servers that drain a worker have it
 * close its listeners (nginx on its master's QUIT over its channel,
 * Apache in its graceful handler, php-fpm in its QUIT handler), so
 * drain.h counts that as being drained.
 *
 * A socket is a listener once listen() succeeded on it, and a copy that
 * dup(), dup2(), dup3() or fcntl(F_DUPFD) makes of one is one too (php-fpm's
 * children copy theirs, then close the original); close(), close_range(),
 * closefrom(), dup2() or dup3() over it, and shutdown() of its reading
 * side end it.  A process inherits its parent's listeners as they were
 * when it was forked (plain memory, copied by fork); the first of these
 * calls that touches one makes them its own set, where it counts those it
 * inherited.  The hooks report every call; one on a number above the
 * highest listener costs a compare, one on another number a bit test, and
 * nothing is written in a forked child until it touches a listener.
 *
 * Not seen: numbers from SCL_LISTENER_FDS on, sockets that came through an
 * exec (nginx's binary upgrade, php-fpm's reload) or through a call the
 * hooks miss (a raw system call, libc's own calls, fclose() of a stream
 * over one, a vfork child's closing in its parent's memory).  A copy
 * missed so makes closing the original look like closing the last.
 * Async-signal-safe; errno kept.
 */
#ifndef SCL_LISTENERS_H
#define SCL_LISTENERS_H

#include <sys/types.h>

#define SCL_LISTENER_FDS 1024

/* listen() succeeded on FD. */
void scl_listeners_listening(int fd);

/* Every number from LO to HI was closed (or replaced, or shut down for
 * reading). */
void scl_listeners_closed(unsigned lo, unsigned hi);

/* dup(), dup2(), dup3() or fcntl(F_DUPFD) made TO a copy of FROM (dup2's
 * and dup3's TO was closed first). */
void scl_listeners_copied(int from, int to);

/* 1 once process SELF (this one) has closed every listener it inherited,
 * having inherited at least one. */
int scl_listeners_all_closed(pid_t self);

#endif
