/* SPDX-License-Identifier: MIT */
/*
 * This process's holder file in a claim directory, and the members it
 * registers for others (member.h).
 */
#include "config.h"

#include "bound.h"
#include "claim.h"
#include "history.h"
#include "member.h"
#include "hot.h"
#include "proc.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/xattr.h>
#include <unistd.h>

/* This process's own holder file, once registered: a claim is released
 * only while it is still a link to it (release --force may have given the
 * name to somebody else meanwhile). */
static dev_t own_holder_dev;
static ino_t own_holder_ino;
SCL_HOT static _Atomic pid_t member_pid;

pid_t scl_member_registered(void)
{
    return atomic_load(&member_pid);
}

void scl_member_set_registered(pid_t pid)
{
    atomic_store(&member_pid, pid);
}

int scl_member_register_self(int claims_fd, int execd)
{
    struct scl_proc_id self = scl_proc_self();
    char path[SCL_PID_NAME_MAX];
    struct stat st;

    if (scl_holder_register(claims_fd, &self, 1) != 0)
        return -1;
    scl_holder_path(path, self.pid);
    if (fstatat(claims_fd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    own_holder_dev = st.st_dev;
    own_holder_ino = st.st_ino;
    if (execd)
        scl_member_note_execd(claims_fd);
    return 0;
}

void scl_member_note_execd(int claims_fd)
{
    struct stat st;
    int saved = errno, fd = scl_member_open_own_holder(claims_fd, O_RDONLY, &st);

    if (fd >= 0) {
        (void)fsetxattr(fd, SCL_EXECD_XATTR, "1", 1, 0);
        scl_close_quietly(fd);
    }
    errno = saved;
}

int scl_member_is_execd(int fd)
{
    char flag[2];
    int saved = errno, execd = fgetxattr(fd, SCL_EXECD_XATTR, flag, sizeof flag) == 1 && flag[0] == '1';

    errno = saved;
    return execd;
}

int scl_member_register_parent(int claims_fd, pid_t parent)
{
    struct scl_proc_stat st;
    struct scl_proc_id id = { .pid = parent, .start = 0 };

    if (scl_proc_read_stat(parent, &st) == 0) {
        if (st.state == 'Z' || st.state == 'X')
            return 0;
        id.start = st.start;
    } else if (!scl_proc_alive(&id)) {
        return 0;
    }
    /* Still our parent after the read: what was read was its, not a
     * process that took its pid after it ended (we would have been
     * reparented first). */
    if (getppid() != parent)
        return 0;
    return scl_holder_register(claims_fd, &id, 0);
}

int scl_member_register_child(int claims_fd, pid_t child)
{
    struct scl_proc_stat st;
    struct scl_proc_id id = { .pid = child, .start = 0 };

    /* Alive, and ours: a child's pid is not reused before we reap it. */
    if (scl_proc_read_stat(child, &st) != 0 || st.state == 'Z' || st.state == 'X' || st.ppid != getpid())
        return -1;
    id.start = st.start;
    return scl_holder_register(claims_fd, &id, 0);
}

int scl_member_has_holder(int claims_fd, pid_t pid)
{
    char path[SCL_PID_NAME_MAX];

    /* No struct stat: this runs on every reap, on the host's stack. */
    scl_holder_path(path, pid);
    return scl_bound.faccessat(claims_fd, path, F_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
}

int scl_member_parent_is_live(int claims_fd)
{
    char path[SCL_PID_NAME_MAX];
    struct scl_proc_id id;
    struct stat st;
    pid_t parent = getppid();

    scl_holder_path(path, parent);
    return parent > 0 && scl_claim_holder(claims_fd, path, &id, &st) == 0 && id.pid == parent && scl_proc_alive(&id);
}

int scl_member_open_own_holder(int claims_fd, int flags, struct stat *st)
{
    char path[SCL_PID_NAME_MAX];
    int fd;

    scl_holder_path(path, getpid());
    fd = scl_open_file_at(claims_fd, path, flags, st);
    if (fd >= 0 && (st->st_dev != own_holder_dev || st->st_ino != own_holder_ino)) {
        scl_close_quietly(fd);
        errno = ESTALE;
        return -1;
    }
    return fd;
}

int scl_member_remove_own_claim(int claims_fd, const char *fname)
{
    return scl_claim_remove_if_same(claims_fd, fname, own_holder_dev, own_holder_ino);
}

int scl_member_clear_own(int claims_fd, int top_fd, enum scl_clear_mode mode)
{
    const struct scl_hold_end end = { scl_history_mine(), mode == SCL_CLEAR_OWN ? SCL_HOLD_EXITED : SCL_HOLD_EXECD, 0 };
    struct stat st;
    int fd = scl_member_open_own_holder(claims_fd, O_RDONLY, &st), r;

    if (fd < 0)
        return mode == SCL_CLEAR_OWN ? scl_holder_clear(claims_fd, top_fd, getpid(), SCL_CLEAR_ALWAYS, &end, NULL) : -1;
    r = scl_holder_clear_open(claims_fd, top_fd, fd, mode, NULL, &end);
    scl_close_quietly(fd); /* drops the flock */
    return r;
}
