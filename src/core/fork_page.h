/*
 * The lock of the engine's slow paths (making the claim directory,
 * registering this process, its journal; the PostgreSQL session has a
 * lock of its own), which the fork handler takes in the parent while it
 * reserves the directory's place.
 *
 * Signals are blocked while the lock is held, so a signal handler that
 * forks or exits on the same thread never finds it taken by the code it
 * interrupted.  It is never held across fork(); a child whose parent had
 * another thread holding it resets it (scl_lock_reset_in_child).
 */
#ifndef SCL_FORK_PAGE_H
#define SCL_FORK_PAGE_H

void scl_lock(void);
void scl_unlock(void);

/* In a child after fork: the lock free again if a thread of the parent
 * held it (written only then: after a fork, the first write to each page
 * a process still shares with its child costs a copy-on-write fault, on
 * the host's hot path). */
void scl_lock_reset_in_child(void);

#endif
