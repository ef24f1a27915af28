/* SPDX-License-Identifier: MIT */
/*
 * Buffers of a page for the hook paths, off the stack: a host may run
 * them in a signal handler on a small alternate stack (doc/HACKING.md,
 * "A stack budget"), and a getdents64 or journal buffer nested three
 * deep would overflow it.
 *
 * Taken from a static pool with an atomic bitmap, so any thread, and any
 * signal handler that interrupts one holding a block, takes a block of its
 * own without a lock; when the pool is all taken, a page is mapped for the
 * while.  Async-signal-safe.  The pool's pages are touched only when used:
 * a process that never clears anything pays nothing for them, and a forked
 * child writes to them only on its slow paths.
 */
#ifndef SCL_SCRATCH_H
#define SCL_SCRATCH_H

#define SCL_SCRATCH_SIZE 4096 /* PATH_MAX fits */

/* A block of SCL_SCRATCH_SIZE bytes, aligned for a struct dirent64; NULL
 * with errno ENOMEM when none could be had. */
void *scl_scratch_take(void);

/* Gives BLOCK back (NULL is ignored); errno as it was. */
void scl_scratch_give(void *block);

#endif
