/* SPDX-License-Identifier: MIT */
/*
 * The children this process forked and has not reaped yet: the ones a
 * drain signal of its may mark (drain.h), by their slot here, so that a
 * pid reused after a reap is never taken for the child it was.
 * Lock-free and async-signal-safe: the fork hook adds, the wait hooks
 * remove, possibly inside a SIGCHLD handler.
 */
#ifndef SCL_CHILDREN_H
#define SCL_CHILDREN_H

#include <sys/types.h>

/* Records PID: its slot in the table, or -1 when the table is full. */
int scl_children_add(pid_t pid);
/* Forgets PID: the slot it had, or -1 when it was not recorded here. */
int scl_children_remove(pid_t pid);

/* PID's slot, when it is a recorded child of this process, else -1. */
int scl_children_slot(pid_t pid);

/* Calls FN for every recorded child.  Returns 0, or -1 when more children
 * were forked than the list holds, so some may be missing. */
int scl_children_each(void (*fn)(pid_t pid, void *arg), void *arg);

#endif
