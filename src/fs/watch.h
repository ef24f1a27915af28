/* SPDX-License-Identifier: MIT */
/*
 * Waiting from an event loop (swerve_claim_wait_fd()): a descriptor per
 * waiting handle that becomes readable when the name may have come free,
 * with no thread, timer or polling behind it.  It is an epoll instance
 * holding two sources, each readable for as long as what it says holds,
 * so a loop may look at it as often and as late as it likes:
 *
 *   - the name's FIFO, claims/.wait.HASH (HASH: the first half of the
 *     SHA-256 of the claim's file name, in hex), open for reading and
 *     writing, made by the name's first waiter, removed by its last (a
 *     shared flock() per waiter, which the last one can turn exclusive;
 *     each wait looks again that it is still the FIFO at the name).  Whoever removes the claim (its release, its dead holder's
 *     clearing, release --force) writes a byte into it, which stays until
 *     a waiter takes it: every waiter of the name, in every process,
 *     shares the FIFO's one buffer, and whichever takes the bytes tries
 *     the name after taking them.  So a wake-up one waiter took from
 *     another is never lost: either that try took the name, or somebody
 *     held it then, whose release writes again.  And a waiter that took
 *     bytes writes one back as it leaves (it took the name, or gave up):
 *     the others look again, and watch the new holder's end;
 *   - a pidfd of the holder the last try found (Linux 5.3), readable once
 *     it has ended, killed or not, reaped or not: nobody else writes the
 *     FIFO for a holder that died with nobody to clear it.
 *
 * The host may close the numbers behind the library's back (a daemon's
 * closefrom()) and open its own there: each use checks first that they
 * are still the watch's, and forgets them, never closing or reading what
 * the host opened, when they are not.
 *
 * Only the waiter side allocates; scl_watch_notify() is async-signal-safe
 * (a reaper clearing a dead child's claims calls it) and keeps errno.
 */
#ifndef SCL_WATCH_H
#define SCL_WATCH_H

#include "proc.h"

#include <sys/types.h>

/* ".wait." and 32 hex digits, NUL included. */
#define SCL_WATCH_NAME_MAX 40
#define SCL_WATCH_PREFIX   ".wait."

/* The FIFO's name of claim file name FNAME. */
void scl_watch_name(const char *fname, char out[SCL_WATCH_NAME_MAX]);

/* Writes a byte into FIFO WATCH_NAME of the claims directory CLAIMS_FD, when
 * such a FIFO is there (another file there is left alone): its waiters
 * try again.  One fstatat when there is none. */
void scl_watch_notify(int claims_fd, const char *watch_name);

/* What one waiting handle has open: every descriptor -1 when closed. */
struct scl_watch {
    pid_t owner;  /* the process they are open in; 0: none */
    unsigned gen; /* the claim directory generation of the FIFO */
    int epfd, fifo, pidfd;
    int took_wakeups;          /* it took bytes from the FIFO since it last left */
    dev_t fifo_dev;            /* the FIFO's inode: the host may have closed the */
    ino_t fifo_ino;            /* numbers (closefrom) and opened its own there */
    struct scl_proc_id holder; /* the pidfd's process */
};

/* A watch with nothing open. */
#define SCL_WATCH_NONE                                                                                                 \
    {                                                                                                                  \
        .epfd = -1, .fifo = -1, .pidfd = -1                                                                            \
    }

/* Opens (or keeps) the epoll instance and FIFO WATCH_NAME of the claims
 * directory CLAIMS_FD of generation GEN, for process SELF (a watch another
 * process opened is forgotten, never closed: its numbers are the
 * child's copies, which the host may have reused).  The FIFO is made
 * when missing.  0, or -1 with errno (EEXIST: something else stands at
 * its name). */
int scl_watch_open(struct scl_watch *w, int claims_fd, unsigned gen, const char *watch_name, pid_t self);

/* Watches HOLDER's end (keeping the pidfd while it is the same process);
 * pid 0: none to watch.  Makes the watch readable at once when HOLDER
 * has ended already.  0, or -1 with errno. */
int scl_watch_holder(struct scl_watch *w, const struct scl_proc_id *holder);

/* Makes the watch readable at once: the name may be free now. */
void scl_watch_ready(struct scl_watch *w);

/* Before a try of a handle watched in process SELF: takes the wake-ups
 * the watch has had, so that the next come anew.  1 when the holder it
 * watched has ended (what the caller remembers of it is stale), else 0.
 * errno kept. */
int scl_watch_consume(struct scl_watch *w, pid_t self);

/* Closes what the watch has open in process SELF (forgets another's),
 * and removes its FIFO, WATCH_NAME of CLAIMS_FD, when no other waiter has it
 * open (CLAIMS_FD -1: left where it is).  errno kept. */
void scl_watch_close(struct scl_watch *w, int claims_fd, const char *watch_name, pid_t self);

#endif
