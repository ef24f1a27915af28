/* SPDX-License-Identifier: MIT */
/*
 * This process as a member of a claim directory: its holder file there,
 * which inode it is (a worker may put a hard link to another file in its
 * name), and its parent, which a maker registers.  Each call is given the claims directory's descriptor: this
 * file knows nothing of where the directory is or how it is kept (dir.h,
 * which calls down to it).
 */
#ifndef SCL_MEMBER_H
#define SCL_MEMBER_H

#include "holder.h"

#include <sys/stat.h>
#include <sys/types.h>

/* Registers this process's holder file in the claims directory CLAIMS_FD
 * and remembers which inode it is; when EXECD (its image was exec'd
 * after it was forked), says so on it too (scl_member_note_execd()).
 * 0, or -1 with errno. */
int scl_member_register_self(int claims_fd, int execd);

/* Notes on this process's own holder file, registered in CLAIMS_FD, that
 * its image was exec'd (SCL_EXECD_XATTR), for the tools' ROLE; nothing
 * when the filesystem keeps no user attributes (the tools then say
 * "worker").  Once per image, never on the claim pair's path.  Keeps
 * errno. */
void scl_member_note_execd(int claims_fd);

/* 1 when the holder file open as FD says so (the byte "1", and nothing
 * else), else 0: the one reader of that note, the tools'.  Keeps errno. */
int scl_member_is_execd(int fd);

/* The pid that is a registered member of the directory in use (set by
 * dir.c as it publishes or joins one; 0 when none). */
pid_t scl_member_registered(void);
void scl_member_set_registered(pid_t pid);

/* Registers PARENT, this process's parent while it still is and alive, in
 * the claims directory CLAIMS_FD.  0 when registered or not alive (or no
 * longer the parent), -1 with errno. */
int scl_member_register_parent(int claims_fd, pid_t parent);

/* Registers CHILD, a live child of this process, in the claims directory
 * CLAIMS_FD: 0, or -1 (not alive, not ours, or errno). */
int scl_member_register_child(int claims_fd, pid_t child);

/* 1 when PID's holder file exists: somebody registered PID.  One
 * faccessat, nothing big on the stack: it runs on every reap. */
int scl_member_has_holder(int claims_fd, pid_t pid);

/* 1 when this process's parent is a live member: it keeps the directory,
 * and removes it or hands it on as it ends. */
int scl_member_parent_is_live(int claims_fd);

/* Opens this process's own holder file with FLAGS, filling ST: only the
 * inode it registered.  -1 with errno (ESTALE: something else stands
 * there). */
int scl_member_open_own_holder(int claims_fd, int flags, struct stat *st);

/* Unlinks claim FNAME only while it is a link to this process's own
 * holder file: 0, or -1 with errno (ENOENT: it is gone; ESTALE: somebody
 * else holds it now). */
int scl_member_remove_own_claim(int claims_fd, const char *fname);

/* Clears this process's own claims, with MODE SCL_CLEAR_OWN (it ends) or
 * SCL_CLEAR_CLAIMS_ONLY (it execs), through the holder inode it
 * registered, whose links are searched for in all of the claims
 * directory, recording each hold as exited or exec'd in its history
 * (history.h); its page of times goes in TOP_FD.  When that inode is not in
 * its name (never registered here, or a worker put a file in its place),
 * an ending process clears that name as another's would, and one that
 * execs nothing.  As scl_holder_clear() returns; async-signal-safe. */
int scl_member_clear_own(int claims_fd, int top_fd, enum scl_clear_mode mode);

#endif
