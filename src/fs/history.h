/* SPDX-License-Identifier: MIT */
/*
 * The history of a claim directory ("history", beside wake): the last
 * SCL_HISTORY_RECORDS holds of each of up to SCL_HISTORY_NAMES names,
 * who took each (pid, command line), when, when it ended and how, for
 * `swerve-claim history`.
 *
 * It is written as wake is: one file per directory, the maker's, 0600,
 * mapped by every process that makes or joins the directory while it may
 * (its owner), and inherited by its forked children, which keep the
 * mapping as they drop root; nobody else may open it, so nobody can
 * truncate it under a mapping (a SIGBUS), and its blocks are allocated as
 * it is made (a store into a hole of a full filesystem would be one too).
 * So the holder records its own
 * holds with plain stores: a take and a release cost no system call (the
 * time of a take is the fencing token's reading of the monotonic clock,
 * a release's one more vDSO reading), and a record outlives its holder.
 * An exit and an exec record theirs as they clear the holder's claims;
 * so does whoever clears a dead holder (its reaper, with how it died; an
 * acquirer of one of its names; gc), `release --force` and the removal
 * of the directory.  A process that cannot map it (an image exec'd as
 * another user than the directory's) records nothing; a clearer that can
 * records the end of its holds, with when it took them from its page of
 * times (times.h) and its command line from its holder file, before they
 * go.
 *
 * Every forked worker can write the whole file: what is read back is for
 * people only, nothing here decides who holds what, and the tools check
 * every name and record they show (scl_history_parse()).  A full table
 * gives the slot of the name longest idle, none of whose holds is open,
 * to a new name.
 *
 * All of it is async-signal-safe (system calls and plain loops), and what
 * the hook paths call keeps errno.
 */
#ifndef SCL_HISTORY_H
#define SCL_HISTORY_H

#include "layout.h"
#include "names.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SCL_HISTORY_MAGIC   0x53434c48u /* "SCLH" */
#define SCL_HISTORY_NAMES   128         /* names a directory keeps holds of */
#define SCL_HISTORY_RECORDS 16          /* the last holds kept of each */
#define SCL_HISTORY_COMMAND 96          /* bytes of a holder's command line, NUL included */

/* How a hold ended: the record's `how`. */
enum scl_hold_how {
    SCL_HOLD_HELD,     /* not yet */
    SCL_HOLD_RELEASED, /* its holder released it */
    SCL_HOLD_EXITED,   /* its holder exited, and cleared it itself */
    SCL_HOLD_EXECD,    /* its holder exec'd another image */
    SCL_HOLD_KILLED,   /* its holder was killed by signal `detail`; its reaper cleared it */
    SCL_HOLD_ENDED,    /* its holder exited with status `detail` without clearing it (not under
                        * the shim: `run`'s command); its reaper cleared it */
    SCL_HOLD_CLEARED,  /* found with its holder dead and cleared: by an acquirer of one of its
                        * names, gc, or a reaper that could not tell how it died */
    SCL_HOLD_FORCED,   /* swerve-claim release --force */
    SCL_HOLD_RETIRED,  /* its holder dead, the directory was removed */
    SCL_HOLD_HOW_COUNT
};

/* One hold of a name.  A record is valid only while its hash is its
 * name's: a writer blanks it first and sets it last. */
struct scl_history_record {
    uint64_t hash;                     /* the name's, scl_times_hash() of its file name; 0: empty */
    int64_t taken;                     /* CLOCK_MONOTONIC nanoseconds: the hold's fencing token */
    int64_t ended;                     /* the same clock; 0 while held */
    int32_t pid;                       /* its holder */
    uint16_t how;                      /* enum scl_hold_how */
    uint16_t detail;                   /* SCL_HOLD_KILLED: the signal; SCL_HOLD_ENDED: the exit status */
    char command[SCL_HISTORY_COMMAND]; /* the holder's command line as it took a new name */
};

/* Whose a slot is, and when its name was last taken: side by side, so
 * that finding a name, or the one longest idle, reads 2 KiB, not the
 * whole file. */
struct scl_history_index {
    uint64_t hash; /* the name's; 0: a free slot */
    int64_t last;  /* CLOCK_MONOTONIC nanoseconds */
};

/* A name and its last holds, the next written at records[count % N]. */
struct scl_history_name {
    uint32_t count; /* holds recorded so far */
    uint32_t len;   /* of fname, written once fname is: 0 until then */
    char fname[SCL_FNAME_MAX];
    struct scl_history_record records[SCL_HISTORY_RECORDS];
};

/* The file: what to add to its times to make them CLOCK_REALTIME, as of
 * its making, and its names, each in the slot its hash chooses, or the
 * next free one, or the one longest idle. */
struct scl_history_file {
    uint32_t magic;
    uint32_t names; /* SCL_HISTORY_NAMES, for a reader of another build */
    int64_t realtime_offset;
    uint64_t reserved[6];
    struct scl_history_index index[SCL_HISTORY_NAMES];
    struct scl_history_name slots[SCL_HISTORY_NAMES];
};

/* How the holds a clearing ends end (holder.h), and where that is
 * written: HISTORY NULL, nowhere. */
struct scl_hold_end {
    struct scl_history_file *history;
    uint16_t how, detail;
};

/* Makes the history file in the claim directory TOP_FD (at its creation),
 * its blocks allocated: 0, or -1 with errno, and none made (a full
 * filesystem: the directory then has no history). */
int scl_history_create(int top_fd);

/* The history of the claim directory TOP_FD, mapped when this process may
 * (the file is its own, regular, of its size and one name, and nobody
 * else may open it), else NULL; scl_history_unmap() gives it back.  For
 * a clearing of another directory than this process's (the sweep of
 * abandoned ones, the tools). */
struct scl_history_file *scl_history_open(int top_fd);
void scl_history_unmap(struct scl_history_file *f);

/* Maps the history of the claim directory TOP_FD as this process's own,
 * for directory generation GEN, unless it is already (dir.c, as it makes
 * or joins the directory, beside wake). */
void scl_history_map(int top_fd, unsigned gen);

/* This process's history (its directory's), or NULL: not mapped here. */
struct scl_history_file *scl_history_mine(void);

/*
 * A named directory (not random: `swerve-claim run`'s namespace) is made
 * again where it was, by the next run that needs it, and removed as its
 * last run ends: its history waits beside it, as NAME.history in its base,
 * for the next one to take back.  A server's random one's goes with it.
 */
/* As the directory NAME of BASEFD (its top TOP_FD) is removed: its history
 * kept beside it, when NAME is named and the file is this user's own,
 * else removed.  0 once it is gone from the top, or -1 with errno. */
int scl_history_keep(int basefd, const char *name, int top_fd);
/* As the directory NAME of BASEFD is made (its top TOP_FD, not published
 * yet): the history kept beside it taken back, when it is this user's own
 * and whole (the base is sticky, or nobody else's to write: dir.c). */
void scl_history_take_back(int basefd, const char *name, int top_fd);

/* SELF's command line from now on, as its records give it (cut to fit):
 * as it takes a new name, off the pair's path. */
void scl_history_set_command(pid_t self, const char *command);

/* The slot of file name FNAME (HASH: scl_times_hash(fname)) in this
 * process's history, added when new: its index, or -1 (none mapped, or
 * every slot's name is being held). */
int scl_history_slot(const char *fname, uint64_t hash);

/* SELF took FNAME (slot SLOT, as scl_history_slot() gave it, looked up
 * again when another name has it now) at AT: the record's index, for
 * scl_history_released(), or -1. */
int scl_history_taken(int slot, const char *fname, uint64_t hash, pid_t self, int64_t at);

/* PID released the hold recorded at RECORD, taken at TAKEN: recorded
 * only while that record is still its open one. */
void scl_history_released(int record, uint64_t hash, pid_t pid, int64_t taken);

/* PID's open hold of FNAME in F ended as END says: 1 recorded, 0 when
 * PID has no open hold of it there (it recorded none: it could not map
 * the file), -1 when F is NULL or has no room for the name. */
int scl_history_end(struct scl_history_file *f, const char *fname, pid_t pid, const struct scl_hold_end *end);

/* Adds a hold of FNAME by PID (running COMMAND, "" unknown) from TAKEN
 * (0: unknown) that ended now as END says: for a holder that recorded
 * none itself. */
void scl_history_add(struct scl_history_file *f, const char *fname, pid_t pid, int64_t taken, const char *command,
                     const struct scl_hold_end *end);

/*
 * For the tools.
 */

/* Reads the history of the claim directory TOP_FD into F (a regular file
 * only, never through a link): 0, or -1 with errno (ENOENT: none;
 * EINVAL: not a history file). */
int scl_history_read(int top_fd, struct scl_history_file *f);

/* Reads the history kept beside the directory NAME of BASEFD, when it is
 * this user's own, as scl_history_read() does (EPERM: another's). */
int scl_history_read_kept(int basefd, const char *name, struct scl_history_file *f);

/* Checks the N bytes read into F (anybody of the server may have
 * written them): 0, every slot and record it leaves non-zero sound (a
 * slot's name is an encoded claim name of its hash, NUL-terminated; a
 * record is its slot's, with times that do not precede 1970 once made
 * CLOCK_REALTIME, a known `how`, a NUL-terminated command), or -1 with
 * errno EINVAL.  Fuzzed by tests/fuzz/fuzz_holder.c. */
int scl_history_parse(struct scl_history_file *f, size_t n);

/* A time T of F (a record's taken or ended) in seconds since the epoch,
 * or 0: none. */
time_t scl_history_when(const struct scl_history_file *f, int64_t t);

#endif
