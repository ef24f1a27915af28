/* SPDX-License-Identifier: MIT */
/*
 * The process lifecycle, as the hooks see it: load, fork, reaping a child,
 * exec and the end of this process, each handed to the store in use as
 * its lifecycle operation (store.h says what each store must do there).
 * Everything called from a hook is async-signal-safe.
 */
#ifndef SCL_LIFECYCLE_H
#define SCL_LIFECYCLE_H

#include <sys/types.h>

/* Binds the real functions and installs the fork handlers, once.  The
 * fork, exec, privilege and chroot hooks call it first, since another
 * library's constructor may call them before ours runs.  The exit and
 * wait hooks need not: the real functions they call are bound by
 * scl_real() on demand, and a store that was never used has nothing
 * for them to do. */
void scl_lifecycle_init(void);

/* Before this process starts a child without fork(): a vfork, a clone,
 * a posix_spawn.  What fork's handlers settle before a fork is settled
 * (the place of the claim directory its children share, the page their
 * drain marks go to).  In the parent, before the call; keeps errno. */
void scl_starting_child(void);

/* The parent's side of a successful fork, vfork or spawn: CHILD is
 * recorded (children.h), so that a drain signal can mark it (drain.h). */
void scl_forked(pid_t child);

/* A child was reaped (exited or killed; STATUS as wait(2) gives it, -1
 * when the call could not tell): what it held is freed. */
void scl_child_reaped(pid_t child, int status);

/* waitpid() as its hook does it (hooks_wait.c): a child reaped has its
 * claims cleared.  The library's own reaping (system(), pclose()) calls
 * this, never the exported waitpid, which an application may define. */
pid_t scl_waitpid_reaping(pid_t pid, int *wstatus, int options);

/* This process is about to exec: what it holds is released; what the new
 * image needs to join the same claims is kept. */
void scl_process_execs(void);

/* How this process ends: by exit, _exit, _Exit, quick_exit or a return
 * from main, or by a signal it sends itself (hooks_signal.c). */
enum scl_ending { SCL_ENDS_BY_EXIT, SCL_ENDS_BY_OWN_SIGNAL };

/* This process is about to end, HOW: what it holds is released.  Runs
 * once per process.  An exit of a session leader also hands the one
 * child it leaves, if one, over to itself (drain.h). */
void scl_process_ending(enum scl_ending how);

/* Whether SIG's default action ends a process (signal(7)): all but those
 * it ignores and those that stop it.  A switch: no system call. */
int scl_signal_ends_by_default(int sig);

/* This process sends itself SIG (to itself, its thread, or its group):
 * when SIG will end it (its default action ends a process, nobody caught,
 * ignored or blocked it, and it is not the PID 1 of a namespace, which a
 * default action spares), the process ends now, as by an exit, but for
 * the hand-over.  Async-signal-safe; keeps errno. */
void scl_process_signals_itself(int sig);

/* This process calls abort(): it ends now, as by its own SIGABRT, unless
 * a handler of SIGABRT may keep it.  Async-signal-safe; keeps errno. */
void scl_process_aborts(void);

/* 1 when the host's close() is the shim's (hooks_fd.c): not when the
 * library was loaded with dlopen, where it interposes nothing. */
int scl_fd_hooks_in_place(void);

#endif
