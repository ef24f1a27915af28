/* SPDX-License-Identifier: MIT */
/*
 * The claim directory this process uses, and its place in it.
 *
 * The directory is $base/swerve-claim.XXXXXXXXXXXX (0700).  A process
 * reserves its place at its first fork, in memory only; the first process
 * of the tree that needs it (a claim, a drop of root) makes it there, and
 * the others open it when they need it.  It is built under a ".new" name
 * of its own, with its maker registered in it, and only then renamed into
 * place, so it is never seen without a live member; the maker then
 * registers the parent that forked it.  A
 * member is a process with a holder file: one that has used a claim, or
 * that a member registered.  When a member ends it hands the directory on
 * to its live children, and the last live member removes it.
 *
 * Two descriptors are kept, the claims directory's at 63 and the top's at
 * 62 or above (move_high() in dir_fds.c says why), close-on-exec, and
 * checked (device and inode) before every use: hosts close every
 * descriptor or dup2() over them, and the library must never act on one
 * of theirs.  Neither is ever reached from the other (dir_fds.c says why).
 */
#ifndef SCL_DIR_H
#define SCL_DIR_H

#include <sys/stat.h>
#include <sys/types.h>

/* 1 when this process has a claim directory (made here or inherited). */
int scl_dir_in_use(void);

/* The directory's path; "" when there is none. */
const char *scl_dir_path(void);

/* Its checked descriptor (reopened by path when the host closed ours);
 * -1 with errno (ENOENT: there is none, or it has been removed). */
int scl_dir_claims_fd(void);

/* The same, without the check's system call while a check of it stands:
 * the shim's hooks saw the host close or replace nothing at its number
 * since (kept_fds.h).  For the claim pair's link and unlink (a failure
 * there is asked again through scl_dir_claims_fd()), and the reap's look
 * for a holder file (whose clearing is not done through it). */
int scl_dir_claims_fd_trusted(void);

/* The checked descriptor of the directory's top (wake, pages of times),
 * kept beside the claims directory's: never "claims/..", which a worker
 * that renames claims/ can make any directory.  -1 with errno. */
int scl_dir_top_fd(void);

/* Changes whenever this process starts using another directory. */
unsigned scl_dir_generation(void);

/* 1 when this process, whose pid is SELF, has registered its holder file
 * (the callers know their pid: each getpid() is a system call). */
int scl_dir_is_member(pid_t self);

/* The claims descriptor unchecked (the host may have closed or replaced
 * it), or -1 when there is none yet: only for a look whose own result
 * shows that it reached this directory (a claim's inode seen there before
 * found again); any other result is asked again through
 * scl_dir_claims_fd().  Never for a link or an unlink.  Saves the check's
 * system call on the hot path. */
int scl_dir_claims_fd_unchecked(void);

/* 1 once the directory is open here (made or joined), not only named. */
int scl_dir_is_open(void);

/* 1 when the directory this process will open on its first use (a place
 * reserved, or SWERVE_CLAIM_DIR) exists: one faccessat, nothing on the
 * stack, for the reap and the end of a process that has not opened it. */
int scl_dir_place_made(void);

/* Before each fork of SELF: its children will know it forked them (a
 * load and a compare once it has forked before). */
void scl_dir_forking(pid_t self);

/* In a child just forked (async-signal-safe, writes only when it must):
 * a directory another thread of the parent was opening is to be opened
 * again here. */
void scl_dir_after_fork_in_child(void);

/* At a process's first fork, when it uses no directory yet: reserves the
 * place of the one its children will share (a random name in the base)
 * and makes nothing.  The first of them that needs it (a claim, a drop of
 * privileges) makes it there, and this process joins it when it reaps or
 * ends: a host that never claims pays no file work. */
void scl_dir_reserve(void);

/* Uses the claim directory SWERVE_CLAIM_DIR names, made by another
 * process of the server (it execs us), from its first use on: accepted
 * then only when it is a claim directory owned by this user or by root.
 * When its last component is a place's name (swerve-claim. and 12
 * characters), it is made there if it does not exist yet (its server
 * reserved it, and nobody needed it before), and never swapped for a
 * directory of one's own; any other name this process cannot join, it
 * does without (a directory of its own).  Opens and registers nothing
 * now: an exec'd helper that never claims costs nothing.  SELF is the
 * process this image has just started in: registered there, it says on
 * its holder file that it was exec'd (member.h), and its forked children
 * do not. */
void scl_dir_attach_later(pid_t self);

/* 1 once, at the first fork of an image exec'd into its server's place
 * (scl_dir_attach_later()); 0 ever after, and in any other process. */
int scl_dir_first_fork_of_handed(void);

/* Uses the claim directory BASE/NAME, making it if it does not exist, for
 * processes that share no ancestor but must share a namespace
 * (`swerve-claim run`).  0, or -1 with errno (EPERM: it exists but is not
 * this user's). */
int scl_dir_use_named(const char *base, const char *name);

/* Uses the claim directory PATH that SWERVE_CLAIM_DIR names, on the terms
 * a preloaded program uses it (scl_dir_attach_later()): joined when it
 * stands there; made only when it does not and has a place's name, below
 * a base, so nothing is made or moved beside any other name
 * (`swerve-claim run` started by a server's process).  0, or -1 with
 * errno. */
int scl_dir_use_environment(const char *path);

/* Under scl_lock(): makes the directory if there is none (or it was
 * removed) and registers this process.  Returns the descriptor, or -1
 * with errno. */
int scl_dir_join_locked(void);

/* 1 when this process, whose pid is SELF, made its claim directory or
 * reserved its place (it was not handed it). */
int scl_dir_made_by(pid_t self);

/* As this process ends (async-signal-safe): clears its claims and holder
 * file, then removes the directory if no live member is left. */
void scl_dir_leave(int claims_fd);

#endif
