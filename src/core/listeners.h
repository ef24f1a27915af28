/* SPDX-License-Identifier: MIT */
/*
 * The listening sockets this process inherited from its master, and
 * whether it has closed them all: servers that drain a worker have it
 * close its listeners (nginx on its master's QUIT over its channel,
 * Apache in its graceful handler, php-fpm in its QUIT handler), so
 * drain.h counts that as being drained.
 *
 * A socket is a listener once listen() succeeded on it; the process
 * notes its inode, and the number it is at.  A stream socket bind()
 * succeeded on is noted by its inode alone: a child that inherits it and
 * listens on it (hypercorn's master binds, its workers listen) counts it
 * among the listeners it inherited.  A child inherits its
 * parent's notes as they were when it was forked (plain memory, copied by
 * fork), and the child's side of a fork makes them its own when there are
 * any (one store: a server's worker copies that page, a shell's child
 * writes nothing); the listeners it inherited are those it has not
 * listened on itself.  A process that shares its parent's memory (a vfork
 * child: CPython's subprocess closes descriptors in one) or was forked
 * without the fork handlers (_Fork, a raw clone) leaves the notes alone.
 * When a number that held a listener is closed (close(), close_range(),
 * closefrom(), dup2() or dup3() over it, shutdown() of its reading side),
 * the process looks at what it still has open (/proc/self/fd; without
 * it, every number up to its descriptor limit): a copy of an inherited listener that
 * still accepts (made by dup(), fcntl(F_DUPFD), a raw system call:
 * php-fpm's children copy theirs, then close the original) is noted at
 * its number, and when none is left, the process has closed them all.
 *
 * The close hooks report every call; one on a number above the highest
 * noted costs a compare, one below it a bit test.  No lock is taken: the
 * library closes its own descriptors through these hooks, under its lock.
 * Not seen: the closing of a listener at a number from SCL_LISTENER_FDS
 * on (one open there keeps its process from being taken for drained),
 * sockets that came through an exec (nginx's binary upgrade, php-fpm's
 * reload), the listeners of a process forked without the fork handlers,
 * more than SCL_LISTENERS listeners (then nobody is ever taken for
 * drained so; bound stream sockets share the table, and are left out
 * once it is full), a closing no hook sees (a raw system call, fclose() of a
 * stream over one).  Async-signal-safe (the look runs on the own stack);
 * errno kept.
 */
#ifndef SCL_LISTENERS_H
#define SCL_LISTENERS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define SCL_LISTENER_FDS 1024
#define SCL_LISTENERS    128

/* listen() succeeded on FD. */
void scl_listeners_listening(int fd);

/* bind() succeeded on FD: in a process that inherited no notes (a
 * master), a stream socket's inode is noted as a listener's, with no
 * number, so that a child that inherits it and listens on it itself
 * (hypercorn's workers on their master's socket) counts it as inherited;
 * when the table is full, it is not noted. */
void scl_listeners_bound(int fd);

/* The child's side of a fork: the notes, when there are any, are its own. */
void scl_listeners_child_forked(void);

/* Read by the close hooks, inline: the highest number a listener was
 * ever noted at (or -1), and a bit per number that holds one. */
extern atomic_int scl_listeners_highest;
extern _Atomic uint64_t scl_listeners_at[SCL_LISTENER_FDS / 64];

void scl_listeners_closed_any(unsigned lo, unsigned hi);

/* Every number from LO to HI was closed (or replaced, or shut down for
 * reading).  The host's hot path: a compare, and below the highest
 * listener a bit test, before any call. */
static inline void scl_listeners_closed(unsigned lo, unsigned hi)
{
    int top = atomic_load_explicit(&scl_listeners_highest, memory_order_relaxed);

    if (top < 0 || lo > (unsigned)top)
        return;
    if (lo == hi && !(atomic_load_explicit(&scl_listeners_at[lo / 64], memory_order_relaxed) & 1ULL << (lo % 64)))
        return;
    scl_listeners_closed_any(lo, hi);
}

/* 1 once process SELF (this one) has closed every listener it inherited,
 * having inherited at least one. */
int scl_listeners_all_closed(pid_t self);

#endif
