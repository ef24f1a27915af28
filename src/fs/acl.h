/* SPDX-License-Identifier: MIT */
/*
 * Letting a worker in.  Servers fork their workers as root and drop to
 * another user afterwards (nginx, Apache, php-fpm, gunicorn): before the
 * drop, that user is added to a POSIX access ACL of the claim directory
 * and its claims directory, so the worker can take and release claims
 * while every other user still can neither read nor change anything.
 * Only a change of identity for good (real, effective and saved uid)
 * lets a user in: a root daemon that switches its effective uid for a
 * moment to write a file grants nothing (hooks_privileges.c).  Written with fgetxattr/fsetxattr on a stack buffer (no
 * libacl): async-signal-safe.
 */
#ifndef SCL_ACL_H
#define SCL_ACL_H

#include <sys/types.h>

/* Grants UID read, write and search on the claim directory, open as TOP_FD,
 * and its claims directory CLAIMS_FD (not on its wake file: acl.c says
 * why); both descriptors are checked ones (dir.h), never one reached from
 * the other.  0, or -1 with errno. */
int scl_acl_grant(int top_fd, int claims_fd, uid_t uid);

/* For a process that becomes UID for good: gives UID its holder file,
 * open as HOLDER_FD (when not -1; scl_member_open_own_holder() opened it),
 * which the process must still link and append to, and, when TOP_TOO, the
 * claim directory itself (TOP_FD), so that its last member may remove it from a
 * sticky base.  0, or -1 with errno. */
int scl_acl_give(int top_fd, uid_t uid, int holder_fd, int top_too);

#endif
