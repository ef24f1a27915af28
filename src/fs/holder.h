/* SPDX-License-Identifier: MIT */
/*
 * Holder files and the claims that link to them, side by side in the
 * claims directory (CLAIMS_FD), so that taking a claim is one linkat() between
 * two names of one directory:
 *
 *     .holder.PID      "PID START\n", then a journal: one line per claim
 *                      file name the process has taken (written before the
 *                      link, so a claim is never missing from it)
 *     NAME             a claim: a hard link to its holder's file
 *
 * No encoded name starts with '.', so the two never meet, and `ls -l`
 * shows the claims alone.
 *
 * Clearing what a dead holder held is serialized by flock() on the holder
 * file's inode, which every claim of it shares: two clearers never both
 * check-then-unlink the same name, so neither can remove a fresh claim a
 * third process took in between, and the kernel drops the lock if a
 * clearer dies half-way.  Everything here is async-signal-safe.
 *
 * A worker can write holder files and journals that a root master will
 * read (doc/security.md): journal lines are used only when they are
 * encoded claim names (one path component), always relative to the claims
 * directory; files are opened only when regular; reads are bounded.  The
 * journal only makes clearing fast: when a holder's inode still has links
 * after its journal was read (a torn or capped journal), the claims
 * directory is scanned for them.
 */
#ifndef SCL_HOLDER_H
#define SCL_HOLDER_H

#include "layout.h"

#include "names.h"
#include "proc.h"

#include <sys/stat.h>
#include <sys/types.h>

/* ".holder.PID", the holder file's name. */
void scl_holder_path(char out[SCL_PID_NAME_MAX], pid_t pid);

/* Parses the "PID START\n" header at the start of the N bytes at HEAD:
 * 0, or -1 with errno EINVAL. */
int scl_holder_parse_id(const char *head, size_t n, struct scl_proc_id *id);

/* Reads the "PID START" header of an open holder file or claim. */
int scl_holder_read_id(int fd, struct scl_proc_id *id);

/*
 * Reading a journal as it comes, in pieces of any size: the header line
 * is skipped, then each line "FNAME\n" or "FNAME\tFULL-NAME\n" whose FNAME
 * is an encoded claim name (scl_name_is_fname) is passed to FN, with what
 * followed its tab; anything else is skipped, and so is a last line
 * without its newline.  FN returns non-zero to stop; scl_journal_feed()
 * then returns that value.  The one journal parser: the library's
 * clearing and the tools' listing both read journals with it, and
 * tests/fuzz/fuzz_holder.c fuzzes it.
 */
struct scl_journal_reader {
    char fname[SCL_FNAME_MAX];
    size_t len;
    int state;
    char *tail; /* where a line's FULL-NAME is kept, or NULL: not kept */
    size_t tail_cap, tail_len;
};
/* TAIL: the line's FULL-NAME, or "" (none, not kept, or longer than the
 * reader's room for it). */
typedef int scl_journal_visit(const char *fname, const char *tail, void *arg);
/* TAIL (TAIL_CAP bytes) keeps each line's FULL-NAME, or NULL. */
void scl_journal_begin(struct scl_journal_reader *r, char *tail, size_t tail_cap);
int scl_journal_feed(struct scl_journal_reader *r, const char *buf, size_t n, scl_journal_visit *fn, void *arg);

/*
 * Makes the holder file of ID, complete with its header, unless it is
 * there already.  An older file of the same pid belongs to a process that
 * has ended; it is cleared first.  SELF: the caller is ID, and replaces a
 * file made for it by a parent of another uid, which it could neither
 * link nor append to.
 */
int scl_holder_register(int claims_fd, const struct scl_proc_id *id, int self);

/* Appends LINE (LEN bytes, newline included) to the journal open as FD
 * (ST its stat, O_APPEND), whole or not at all: 0, or -1 with errno
 * (ENOSPC, EDQUOT: the journal is as it was).  Past SCL_BUDGET_JOURNAL_BYTES
 * nothing is written, and that is success. */
int scl_holder_journal(int fd, const struct stat *st, const char *line, size_t len);

/* Notes COMMAND (N bytes), this process's command line, on its holder
 * file, open as FD (SCL_COMMAND_XATTR), for the tools; nothing when the
 * filesystem keeps no user attributes.  Async-signal-safe; keeps errno. */
void scl_holder_note_command(int fd, const char *command, size_t n);

/* What is noted on the holder file open as FD, as its command line, into
 * OUT (CAP bytes, NUL-terminated; "" when nothing is, or more than fits:
 * a worker may note anything on its own file): its length.  The one
 * reader of the note, the tools' and the library's.  Async-signal-safe;
 * keeps errno. */
size_t scl_holder_read_command(int fd, char *out, size_t cap);

/* The last two search all of the claims directory for links the journal
 * did not name; the others read at most SCL_BUDGET_CLEAR_SCAN of its entries.  The
 * caller of those is the holder, with the inode it registered open (a
 * worker may put a file of its own, with any number of links, in its
 * holder file's name): scl_member_clear_own(). */
enum scl_clear_mode {
    SCL_CLEAR_IF_DEAD,     /* only when the holder has ended */
    SCL_CLEAR_ALWAYS,      /* the caller knows the holder has ended */
    SCL_CLEAR_OWN,         /* the caller is the holder, and ends */
    SCL_CLEAR_CLAIMS_ONLY, /* the caller is the holder, about to exec: it
                            * keeps its holder file (same pid, same start) */
};

struct scl_hold_end;
struct scl_budget;

/*
 * Opens ENTRY of CLAIMS_FD, the holder file of PID by its name, and reads its
 * header into ID: its descriptor, or -1 with errno: ENOENT when it is
 * gone, or was a link of another holder file (its header names another
 * pid: planted by that holder, which it unlinks), EIO when its header
 * cannot be read.  Async-signal-safe.
 */
int scl_holder_open_named(int claims_fd, const char *entry, pid_t pid, struct scl_proc_id *id);

/* Clears every claim of PID's holder file and, but for
 * SCL_CLEAR_CLAIMS_ONLY, the file itself and its page of times (times.h)
 * in TOP_FD, the directory's top (-1: the page stays, for the directory's
 * removal to take).  The end of each hold it clears is recorded as END
 * says (history.h; NULL: nowhere), in a record of the holder's own when
 * it has none open.  Its search for links spends from BUDGET too, when
 * not NULL: the walk it is part of (a removal's, a tool's).  Returns 1
 * when done, 0 when the holder is alive, -1 when another clearer is at
 * work or a system call failed. */
int scl_holder_clear(int claims_fd, int top_fd, pid_t pid, enum scl_clear_mode mode, const struct scl_hold_end *end,
                     struct scl_budget *budget);

/* Clears the holder whose file (or one of its claims) FD is open on, as
 * scl_holder_clear() does; ALSO_CLAIM, when not NULL, is a claim of it
 * cleared too, in case the journal does not name it (claim.c). */
int scl_holder_clear_open(int claims_fd, int top_fd, int fd, enum scl_clear_mode mode, const char *also_claim,
                          const struct scl_hold_end *end);

/*
 * Calls FN for every holder file (PID > 0), and every registration left in
 * progress and every waiters' FIFO (watch.h) (PID 0) in the claims
 * directory; claims are skipped.  Each entry read spends one of BUDGET
 * (NULL: none), past which it stops and returns 1.  Stops at the first
 * non-zero return and passes it on; -1 with errno when the directory
 * cannot be read.
 */
typedef int scl_holder_visit(int claims_fd, pid_t pid, const char *entry, void *arg);
int scl_holders_scan(int claims_fd, struct scl_budget *budget, scl_holder_visit *fn, void *arg);

#endif
