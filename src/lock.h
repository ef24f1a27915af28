/*
 * The library's one mutex, for its slow paths only (making the claim
 * directory, registering this process, its journal).  Signals are blocked
 * while it is held, so a signal handler that forks or exits on the same
 * thread can never find it taken by the code it interrupted; the fork
 * handlers lock it around fork() and re-initialise it in the child.
 */
#ifndef SCL_LOCK_H
#define SCL_LOCK_H

void scl_lock(void);
void scl_unlock(void);

/* In a child after fork: a fresh, unlocked mutex and the signal mask the
 * parent had before scl_lock(). */
void scl_lock_reset_in_child(void);

#endif
