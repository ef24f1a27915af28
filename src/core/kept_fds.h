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
 * that number again.  Without the hooks (the tools, the unit tests)
 * nothing stands: every use is checked.
 *
 * A host that closes or replaces a number behind libc's back (a raw
 * system call, io_uring) is not seen: doc/security.md says what that can
 * and cannot lead to.
 *
 * Everything here is async-signal-safe: atomic loads and stores only.
 */
#ifndef SCL_KEPT_FDS_H
#define SCL_KEPT_FDS_H

enum scl_kept_fd { SCL_KEPT_CLAIMS, SCL_KEPT_TOP, SCL_KEPT_FDS };

/* The hooks are in place: checks may stand from now on (the preload's
 * constructor). */
void scl_kept_fds_watched(void);

/* A check of FD, kept in SLOT, begins: its number is watched from now
 * on.  Returns the ticket to pass to scl_kept_fd_checked(). */
unsigned scl_kept_fd_checking(enum scl_kept_fd slot, int fd);

/* The check that began with TICKET found FD to be the library's own. */
void scl_kept_fd_checked(enum scl_kept_fd slot, int fd, unsigned ticket);

/* SLOT's descriptor when its last check stands (nothing touched its
 * number since), else -1. */
int scl_kept_fd_trusted(enum scl_kept_fd slot);

/* The host closed or replaced (or tried to) every number from LO to HI. */
void scl_kept_fds_touched(unsigned lo, unsigned hi);

#endif
