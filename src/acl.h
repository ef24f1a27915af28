/*
 * Letting a worker in.  Servers fork their workers as root and drop to
 * another user afterwards (nginx, Apache, php-fpm, gunicorn): before the
 * drop, that user is added to a POSIX access ACL of the claim directory,
 * its claims directory and its wake file, so the worker can take and
 * release claims while every other user still can neither read nor change
 * anything.  Written with fgetxattr/fsetxattr on a stack buffer (no
 * libacl): async-signal-safe.
 */
#ifndef SCL_ACL_H
#define SCL_ACL_H

#include <sys/types.h>

/* Grants UID read, write and search on the claim directory whose claims
 * directory is CLAIMSFD.  0, or -1 with errno (ENOTSUP: the filesystem
 * has no ACLs). */
int scl_acl_grant(int claimsfd, uid_t uid);

#endif
