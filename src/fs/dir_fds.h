/* SPDX-License-Identifier: MIT */
/*
 * The two descriptors the filesystem store keeps in its host, the claim
 * directory's claims/ and its top, and what each must be: the path it
 * was opened at, its device and inode, and the number it is kept at (63
 * and 62, or the first free one above).  Internal to src/fs: dir.c
 * decides when a directory is made, joined or joined again, and calls
 * down to these primitives; they call nothing of dir.c's.
 *
 * Each descriptor is named by its slot in kept_fds.h (SCL_KEPT_CLAIMS,
 * SCL_KEPT_TOP), where the hooks note a number the host closed or
 * replaced.  All of it is async-signal-safe and runs on hook paths: the
 * frames are small, the paths static (doc/HACKING.md, "A stack budget").
 */
#ifndef SCL_DIR_FDS_H
#define SCL_DIR_FDS_H

#include "kept_fds.h"

#include <sys/stat.h>
#include <sys/types.h>

/* What a descriptor turned out to be: the kept directory, something
 * else (closed by the host, or replaced), or the kept directory removed
 * (its last member left). */
enum scl_dir_fd_check { SCL_DIR_FD_OURS, SCL_DIR_FD_NOT_OURS, SCL_DIR_FD_REMOVED };

/* WHICH's descriptor as kept, unchecked (-1: none). */
int scl_dir_fds_get(enum scl_kept_fd which);

/* What FD is, against WHICH's identity (no check of it is noted). */
enum scl_dir_fd_check scl_dir_fds_check_fd(enum scl_kept_fd which, int fd);

/* Checks WHICH's kept descriptor, left in *FD, and notes the check in
 * kept_fds.h for scl_kept_fd_trusted(). */
enum scl_dir_fd_check scl_dir_fds_check(enum scl_kept_fd which, int *fd);

/* WHICH's descriptor WAS is not ours: opens its path again (refused
 * with ENOENT when something else stands there now) and keeps that in
 * its place, never touching the number WAS.  0 with the new descriptor
 * in *FD; 1 when another thread replaced WAS first (check again); -1
 * with errno. */
int scl_dir_fds_reopen(enum scl_kept_fd which, int was, int *fd);

/* Keeps the directory at BASE, SLASH and REST joined (its top TOP open
 * as TOP_OPENED, its claims/ CLAIMS as CLAIMS_OPENED): both moved to
 * their numbers.  The paths go straight to where they are kept: the fork
 * path has no room for a copy on its stack.  0, or -1 (a path too long:
 * nothing kept). */
int scl_dir_fds_keep(const char *base, const char *slash, const char *rest, const struct stat *top,
                     const struct stat *claims, int top_opened, int claims_opened);

/* The directory was made again at the same path (TOP, CLAIMS, open as
 * TOP_OPENED and CLAIMS_OPENED): its kept numbers now name the new one,
 * each where it is still ours (a number the host has taken since stays
 * the host's).  0, or -1. */
int scl_dir_fds_renew(const struct stat *top, const struct stat *claims, int top_opened, int claims_opened);

/* Keeps neither any more (the directory was removed): closes the claims
 * one when it is the removed directory's, the top's when it is still
 * the directory's, removed or not, and leaves any other number alone. */
void scl_dir_fds_forget(void);

/* The kept top's path ("" before any). */
const char *scl_dir_fds_top_path(void);

/* The kept top's identity. */
dev_t scl_dir_fds_top_dev(void);
ino_t scl_dir_fds_top_ino(void);

#endif
