/* SPDX-License-Identifier: MIT */
/*
 * When each claim was taken, and what a process waits for: a page of
 * times per process (".times.PID" in the claim directory, beside claims/
 * and wake), that the process maps and writes with plain stores, and that
 * only the tools read.
 *
 * A claim is a hard link to its holder's file, so the claim has no time
 * of its own on disk, and a write per acquire would cost a tenth of an
 * uncontended pair (make bench).  A store to a mapped page costs nothing
 * measurable; the time stored is the fencing token's reading of the
 * monotonic clock, so not even a clock is read for it.  (The page is not
 * in claims/: a file more there measurably slowed every link and unlink.)
 *
 * The page is this process's own: made by it (0600, never through a
 * link), mapped only when nobody else may write it (a truncation would be
 * a SIGBUS), and not inherited by its children (MADV_DONTFORK: a forked
 * worker makes its own when it first claims).  It goes when its holder
 * file is cleared (holder.c), and with its directory (retire.c).
 *
 * What is read back is for people only: nothing here decides who holds
 * what, and a page that is missing, full or scribbled on just shows no
 * time.  Everything but scl_times_map() and scl_times_read() is
 * async-signal-safe.
 *
 * One exception to "only the tools read it": whether the process drains
 * (struct scl_times_drain), which its master and swerve-claim drain write,
 * and which the process reads back for swerve_claim_draining().
 */
#ifndef SCL_TIMES_H
#define SCL_TIMES_H

#include "layout.h"

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SCL_TIMES_MAGIC 0x53434c54u /* "SCLT" */
#define SCL_TIMES_SLOTS 253         /* the names a page has a time for */
#define SCL_DRAIN_MAGIC 0x53434c44u /* "SCLD": a drain record is there */

/* A name (by scl_name_hash() of its file name; 0 is no name) and a time,
 * CLOCK_MONOTONIC in nanoseconds (0: none). */
struct scl_times_entry {
    uint64_t hash;
    int64_t at;
};

/* Who said this process drains (swerve_claim_draining(3)), each in a
 * byte of its own, which nobody else writes (so no write undoes
 * another's): its master (through its hooks, when it sent it a drain
 * signal), an operator (swerve-claim drain), and the process itself (the
 * reasons it found, drain.h, when it asked).  A record without its magic
 * (a page that a library without it wrote: its 254th name was here) is
 * none.  PID is the process that made the page, written as it makes it:
 * a teller writes only into a page that says it is the process it tells
 * (a worker may rename its root master's page into the place of its
 * own). */
struct scl_times_drain {
    uint32_t magic;
    uint8_t by_master, by_operator, by_self, unused;
    int32_t pid;
    uint32_t spare;
};

/* Who tells another process it drains, by pwrite() into its page. */
enum scl_drain_teller { SCL_TOLD_BY_MASTER, SCL_TOLD_BY_OPERATOR };

/* The file, 4 KiB: the names this process has taken, in the order it
 * first took them, each with the time it last took it; the one name it
 * waits for (the latest, when several of its threads wait); what to add
 * to its times to make them CLOCK_REALTIME, as of the page's making; and
 * whether it drains. */
struct scl_times_page {
    uint32_t magic;
    uint32_t used;
    struct scl_times_entry waiting;
    int64_t realtime_offset;
    struct scl_times_entry taken[SCL_TIMES_SLOTS];
    struct scl_times_drain drain;
};

/* What an entry keeps of file name FNAME: never 0. */
uint64_t scl_times_hash(const char *fname);

/* ".times.PID": the page's name, in the directory's top. */
void scl_times_path(char out[SCL_PID_NAME_MAX], pid_t pid);

/* 1 when the page of SELF for directory generation GEN was tried already
 * (made or not): the caller need not find the top for scl_times_map(). */
int scl_times_tried(pid_t self, unsigned gen);

/* Under scl_lock(): maps the page of process SELF (this one) in the top
 * TOP_FD (-1: there is none to be had) of directory generation GEN, made
 * anew, unless it was tried for them already.  Without it, claims just
 * have no times. */
void scl_times_map(int top_fd, pid_t self, unsigned gen);

/* Under scl_lock(): the entry of file name FNAME in the page mapped for
 * SELF and GEN, added when new: its index, or -1 (no page, or it is full). */
int scl_times_entry(const char *fname, pid_t self, unsigned gen);

/* SELF (this process) took the name of entry INDEX at AT (the monotonic
 * clock in nanoseconds). */
void scl_times_taken(int index, pid_t self, int64_t at);

/* SELF waits for file name FNAME from now on; scl_times_done_waiting()
 * when it stops, which forgets FNAME unless another thread waits for a
 * name of its own since. */
void scl_times_waiting(const char *fname, pid_t self);
void scl_times_done_waiting(const char *fname, pid_t self);
/* SELF execs: whatever its threads waited for, they wait no more. */
void scl_times_forget_wait(pid_t self);

/* What others told SELF (this process) in its page, as drain.h's reasons
 * (SCL_DRAIN_SIGNALLED: its master, SCL_DRAIN_OPERATOR), once it has noted
 * FOUND (the reasons it found itself; 0: none) there for the tools.  0
 * without a page. */
unsigned scl_times_drain_told(pid_t self, unsigned found);

/* Tells process PID, through its page in the top TOP_FD, that it drains,
 * as WHO: written with pwrite(), never mapped (its owner could truncate
 * it), and only into its page: a regular file, one link, a page's size and
 * magic.  0, or -1 with errno (ENOENT: it has no page; EINVAL: what has
 * that name is no page; EACCES: not the caller's to write). */
int scl_times_tell_draining(int top_fd, pid_t pid, enum scl_drain_teller who);

/* Whether PAGE (as read by scl_times_read()) says its process drains. */
int scl_times_draining(const struct scl_times_page *page);

/* Removes the pages left in the claim directory TOP_FD (their holders
 * cleared, but not them: a clearer killed between the two). */
void scl_times_remove_left(int top_fd);

/* For the tools: reads the page of PID in the claim directory TOP_FD (a
 * regular file only, never through a link); 0, or -1 with errno (EINVAL:
 * not a page of times). */
int scl_times_read(int top_fd, pid_t pid, struct scl_times_page *page);

/* Checks the N bytes read into PAGE (anybody may have written them):
 * 0, its count of entries bounded, or -1 with errno EINVAL.  Fuzzed by
 * tests/fuzz/fuzz_holder.c. */
int scl_times_parse(struct scl_times_page *page, size_t n);

/* What to add to CLOCK_MONOTONIC to make it CLOCK_REALTIME, now. */
int64_t scl_times_realtime_offset(void);

/* AT (CLOCK_MONOTONIC nanoseconds) plus REALTIME_OFFSET, both as written
 * by somebody else perhaps, in seconds since the epoch, or 0: none (no
 * time, an overflow, or before 1970). */
time_t scl_times_epoch(int64_t at, int64_t realtime_offset);

/* Entry E's time in PAGE in seconds since the epoch, or 0: none. */
time_t scl_times_when(const struct scl_times_page *page, const struct scl_times_entry *e);

/* The time in PAGE of file name FNAME, as scl_times_when(). */
time_t scl_times_of(const struct scl_times_page *page, const char *fname);

/* When PAGE's process last took file name FNAME (CLOCK_MONOTONIC
 * nanoseconds, as written), or 0. */
int64_t scl_times_taken_at(const struct scl_times_page *page, const char *fname);

#endif
