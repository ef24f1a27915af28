/* SPDX-License-Identifier: MIT */
/*
 * The descriptors the library keeps open in its host (the claim
 * directory's claims/ and top), and whether each can be used as it is.
 *
 * The host owns its descriptor table: it may close any number, or dup2 a
 * file of its own over one.  So a kept descriptor is checked (fstat:
 * device, inode) before it is trusted.  A check is a system call, as
 * costly as the link or unlink it guards; under the shim the hooks on
 * close, close_range, closefrom, dup2 and dup3 report every number the
 * host closes or replaces, and a check then stands until the host touches
 * that number again.  Without the hooks (the tools, the unit tests, a
 * library loaded with dlopen) nothing stands: every use is checked.
 *
 * A host that closes or replaces a number behind libc's back (a raw
 * system call, io_uring) is not seen: doc/security.md says what that can
 * and cannot lead to.
 *
 * What stands lives in a MADV_WIPEONFORK page: a forked child trusts
 * nothing its parent checked, and its hooks write nothing until it checks
 * for itself.  All of it is async-signal-safe; all but
 * scl_kept_fds_prepare() is atomic loads and stores.
 */
#ifndef SCL_KEPT_FDS_H
#define SCL_KEPT_FDS_H

#include <stdatomic.h>

enum scl_kept_fd { SCL_KEPT_CLAIMS, SCL_KEPT_TOP, SCL_KEPT_FDS };

/* The hooks are in place: checks may stand from now on (the preload's
 * constructor, once it has seen that its close() is the one the host
 * calls). */
void scl_kept_fds_watched(void);

/* Maps the page where checks stand, once per process (a forked child
 * has its parent's, blank): until then nothing stands.  The claim
 * operations call it, and a master's reap once it opens the directory;
 * its libc calls are bound at load (bound.h), so any stack will do.
 * Three system calls, no lock (mmap is not on POSIX's list of
 * async-signal-safe functions, but is one system call on Linux). */
void scl_kept_fds_prepare(void);

/* A check of FD, kept in SLOT, begins: its number is watched from now
 * on.  Returns the ticket to pass to scl_kept_fd_check_ends(). */
unsigned scl_kept_fd_check_begins(enum scl_kept_fd slot, int fd);

/* The check that began with TICKET found FD to be the library's own
 * (OURS) or not. */
void scl_kept_fd_check_ends(enum scl_kept_fd slot, int fd, unsigned ticket, int ours);

/* SLOT's descriptor when the last check of it found it ours and nothing
 * touched its number since, else -1. */
int scl_kept_fd_trusted(enum scl_kept_fd slot);

/* The lowest number ever kept (INT_MAX: none), which the close hooks
 * compare inline: a host closes lower ones all day. */
extern atomic_int scl_kept_fds_lowest;

void scl_kept_fds_touched_any(unsigned lo, unsigned hi);

/* The host closed or replaced (or tried to) every number from LO to HI:
 * below every kept number, a compare and no call. */
static inline void scl_kept_fds_touched(unsigned lo, unsigned hi)
{
    if (hi >= (unsigned)atomic_load_explicit(&scl_kept_fds_lowest, memory_order_relaxed))
        scl_kept_fds_touched_any(lo, hi);
}

#endif
