/* SPDX-License-Identifier: MIT */
/*
 * Async-signal-safe building blocks: the fork, exit and wait hooks run in
 * signal handlers and in children of threaded forks (nginx and PostgreSQL
 * reap inside their SIGCHLD handler), so nothing here allocates, locks or
 * touches stdio.
 */
#ifndef SCL_SIGSAFE_H
#define SCL_SIGSAFE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
int64_t scl_monotonic_ns(void);

/* Reads up to N bytes, retrying EINTR and short reads; -1 with errno. */
ssize_t scl_read_full(int fd, void *buf, size_t n);

/* Writes all N bytes, retrying EINTR and short writes; -1 with errno. */
int scl_write_full(int fd, const void *buf, size_t n);

/* Writes V in decimal at OUT (at least 21 bytes); returns the length. */
size_t scl_fmt_ull(char *out, unsigned long long v);

/* Parses a decimal number at *P, moving *P past it; -1 when none. */
int scl_parse_ull(const char **p, unsigned long long *v);

/*
 * The string work of a child between fork() and exec is done by the
 * four below, in plain loops: a libc function that child called for the
 * first time would be faulted in and bound lazily in every child
 * (doc/HACKING.md, "Nothing written in a forked child").
 */

/* Joins the NULL-terminated list of strings into OUT (CAP bytes), NUL
 * included; -1 with errno ENAMETOOLONG when it does not fit. */
int scl_concat(char *out, size_t cap, ...) __attribute__((sentinel));

/* The length of S.  (GCC turns a plain counting loop into a call to
 * strlen(): this one is kept a loop.) */
size_t scl_length(const char *s);

/* What follows PREFIX at the start of S, or NULL. */
const char *scl_after_prefix(const char *s, const char *prefix);
/* 1 when NEEDLE occurs in S. */
int scl_contains(const char *s, const char *needle);

/* openat(2), retrying EINTR (a FIFO or a slow filesystem may block it
 * long enough for a signal to come); -1 with errno. */
int scl_openat(int dirfd, const char *path, int flags, mode_t mode);

/* Opens directory NAME of DIRFD, never through a symlink, close-on-exec,
 * retrying EINTR; -1 with errno. */
int scl_open_dir_at(int dirfd, const char *name);

/*
 * Opens NAME of DIRFD only if it is a regular file, and fills ST: never
 * through a symlink, never blocking on a FIFO, and never opening a device
 * (it is looked at before it is opened, and checked again after).  What a
 * less privileged process may have put in a claim directory is opened
 * this way alone (doc/security.md).  -1 with errno (EINVAL: not a regular
 * file).
 */
int scl_open_file_at(int dirfd, const char *name, int flags, struct stat *st);

/* The same for a file of TYPE (S_IFREG, S_IFIFO: a FIFO opened this way
 * never blocks, as O_NONBLOCK is always given); one of any other TYPE
 * than S_IFREG only when it has no other name (EINVAL): a FIFO of
 * somebody else's linked in is not even opened, which its reader would
 * see. */
int scl_open_typed_at(int dirfd, const char *name, int flags, struct stat *st, mode_t type);

/* Unlinks NAME of DIRFD only while it is still the inode DEV/INO (what
 * somebody put in its place in between stays): 0, or -1 with errno
 * (ESTALE: another inode stands there now).  Between the look and the
 * unlink the name may still change: callers that others race for it
 * hold a lock that orders them (holder.c's flock). */
int scl_unlink_if_same(int dirfd, const char *name, dev_t dev, ino_t ino);

/* Calls FN for every entry of the directory DIRFD, from getdents64 into a
 * scratch block (scratch.h: opendir() allocates, and a hook's stack has
 * no room) and a descriptor of its own (the shared one's offset is not
 * ours to move).  Stops at the first non-zero return and passes it on;
 * -1 with errno when the directory cannot be read. */
struct dirent64;
typedef int scl_entry_fn(const struct dirent64 *d, void *arg);
int scl_each_entry(int dirfd, scl_entry_fn *fn, void *arg);

/* 1 when FD is open on the inode DEV/INO, a file of TYPE (S_IFSOCK,
 * S_IFIFO, ...), else 0; errno kept.  A descriptor the library keeps is
 * checked so before each use: the host may have closed its number and
 * opened its own there. */
int scl_fd_is(int fd, mode_t type, dev_t dev, ino_t ino);

/* close() that keeps errno: used on paths that must not disturb it.
 * Like scl_kill(), the system call itself, never the shim's hook of the
 * same name (tests/packaging/own-calls.sh checks that the library calls
 * none of its own). */
void scl_close_quietly(int fd);

/* kill(2): 0, or -1 with errno. */
int scl_kill(pid_t pid, int sig);

/* Writes zeroes over the first SIZE bytes of the file open as FD, so that
 * each of its pages has its room: 0, or -1 with errno (ENOSPC).  For a
 * file the library maps: a store through a mapping into a hole that a
 * full filesystem cannot fill is a SIGBUS, in the host.  Written, not
 * fallocate()d: ext4 then only reserves the room until writeback, and a
 * short-lived file's unlink frees the reservation, where an allocated
 * block is discarded on a filesystem mounted with discard (a master's
 * reap of a worker, whose page of times goes, took twice as long).  A
 * scratch page, written several times in each call. */
int scl_file_allocate(int fd, off_t size);

#endif
