/* SPDX-License-Identifier: MIT */
/*
 * The fork page: the one page the fork path writes, which holds the lock
 * of the engine's slow paths (making the claim directory, registering
 * this process, its journal; the PostgreSQL session has its own) and the
 * table of children (children.c).
 *
 * After every fork, the first write to each page a process still shares
 * with its child costs a copy-on-write fault (several microseconds on a
 * VM, on a host's hot path): so the state fork writes (the table of
 * children in children.c) lives in one place beside this lock, a fork
 * writes one slot of it in the parent, and nothing is written at all on
 * the child's side.  It is not page-aligned: that would start .bss on a
 * page of its own, where crtstuff's completed.0 costs every process two
 * faults at exit (hot.h).
 *
 * Signals are blocked while the lock is held, so a signal handler that
 * forks or exits on the same thread never finds it taken by the code it
 * interrupted.  It is never held across fork(); a child whose parent had
 * another thread holding it resets it (scl_lock_reset_in_child).
 */
#ifndef SCL_FORK_PAGE_H
#define SCL_FORK_PAGE_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#define SCL_CHILD_SLOTS 1020 /* with the header, 4096 bytes */

struct scl_fork_page {
    _Atomic uint32_t lock; /* 0 free, 1 held, 2 held with waiters */
    _Atomic pid_t children_owner;
    atomic_int children_overflowed;
    _Atomic pid_t children[SCL_CHILD_SLOTS];
};

extern struct scl_fork_page scl_fork_page;

void scl_lock(void);
void scl_unlock(void);

/* In a child after fork: the lock free again if a thread of the parent
 * held it (written only then, so the page stays shared). */
void scl_lock_reset_in_child(void);

#endif
