/*
 * The process lifecycle, as the hooks see it: load, fork, reaping a child,
 * and the end of this process.  Everything called from a hook is
 * async-signal-safe.
 */
#ifndef SCL_LIFECYCLE_H
#define SCL_LIFECYCLE_H

#include <sys/types.h>

/* Binds the real functions and installs the fork handlers, once; every
 * hook calls it first, since it may run before our constructor. */
void scl_lifecycle_init(void);

/* The parent's side of a successful fork. */
void scl_forked(pid_t child);

/* A child was reaped (exited or killed): clears the claims it held. */
void scl_child_reaped(pid_t child);

/* This process is about to exec: releases its claims, keeping its
 * registration for the new image, which has the same pid. */
void scl_process_execs(void);

/* This process is about to end (exit, _exit, _Exit, quick_exit, return
 * from main): releases its claims; the last member removes the claim
 * directory.  Runs once per process. */
void scl_process_ending(void);

#endif
