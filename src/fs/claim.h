/* SPDX-License-Identifier: MIT */
/*
 * Claims: the names in claims/, each a hard link to its holder's file
 * (holder.h).  Who holds one, clearing one whose holder is dead, and
 * removing one only while it is the link it was.  Async-signal-safe.
 */
#ifndef SCL_CLAIM_H
#define SCL_CLAIM_H

#include "proc.h"

#include <sys/types.h>

#include <sys/stat.h>

/* Who holds claim FNAME: 0, *ID and the claim's *ST, or -1 with errno
 * (ENOENT: free). */
int scl_claim_holder(int claims_fd, const char *fname, struct scl_proc_id *id, struct stat *st);

/* Unlinks claim FNAME only while it is still the inode DEV/INO (a claim
 * somebody took in between stays), waking its waiters: 0, or -1 with
 * errno (ESTALE: another inode stands there now). */
int scl_claim_remove_if_same(int claims_fd, const char *fname, dev_t dev, ino_t ino);

enum scl_claim_state {
    SCL_CLAIM_FREE,  /* nobody holds it now (a dead holder was cleared) */
    SCL_CLAIM_LIVE,  /* a live process holds it */
    SCL_CLAIM_BUSY,  /* another process is clearing its dead holder */
    SCL_CLAIM_ERROR, /* errno says why */
};

/* Looks at claim FNAME and clears it, with all of its holder's claims and
 * its page of times in the top TOP_FD() returns (asked only then: a
 * failing try on a live holder's name stays as cheap as it was), when
 * that holder has ended; this process's history records them cleared.  SCL_CLAIM_LIVE fills *HOLDER and the claim's
 * *ST when it could read them (HOLDER->pid 0 when not). */
enum scl_claim_state scl_claim_clear_if_stale(int claims_fd, int (*top_fd)(void), const char *fname,
                                              struct scl_proc_id *holder, struct stat *st);

#endif
