/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "claim.h"
#include "history.h"
#include "holder.h"
#include "sigsafe.h"
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int scl_claim_remove_if_same(int claims_fd, const char *fname, dev_t dev, ino_t ino)
{
    if (scl_unlink_if_same(claims_fd, fname, dev, ino) != 0)
        return -1;
    scl_wake(claims_fd, fname); /* its waiters may take it */
    return 0;
}

int scl_claim_holder(int claims_fd, const char *fname, struct scl_proc_id *id, struct stat *st)
{
    int fd, r;

    fd = scl_open_file_at(claims_fd, fname, O_RDONLY, st);
    if (fd < 0)
        return -1;
    r = scl_holder_read_id(fd, id);
    scl_close_quietly(fd);
    return r;
}

enum scl_claim_state scl_claim_clear_if_stale(int claims_fd, int (*top_fd)(void), const char *fname,
                                              struct scl_proc_id *holder, struct stat *st)
{
    const struct scl_hold_end cleared = { scl_history_mine(), SCL_HOLD_CLEARED, 0 };
    int fd, r;

    holder->pid = 0;
    fd = scl_open_file_at(claims_fd, fname, O_RDONLY, st);
    if (fd < 0) {
        if (errno == ENOENT)
            return SCL_CLAIM_FREE;
        /* Not a regular file: nobody's claim, but it holds the name. */
        return errno == EINVAL ? SCL_CLAIM_LIVE : SCL_CLAIM_ERROR;
    }
    if (scl_holder_read_id(fd, holder) != 0 || scl_proc_alive(holder)) {
        /* An unreadable header is somebody's: never taken for stale. */
        scl_close_quietly(fd);
        return SCL_CLAIM_LIVE;
    }
    r = scl_holder_clear_open(claims_fd, top_fd(), fd, SCL_CLEAR_IF_DEAD, fname, &cleared);
    scl_close_quietly(fd);
    holder->pid = 0; /* whoever holds it now, not the one just read */
    return r == 1 ? SCL_CLAIM_FREE : r == 0 ? SCL_CLAIM_LIVE : SCL_CLAIM_BUSY;
}
