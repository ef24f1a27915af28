#include "config.h"

#include "holder.h"
#include "sigsafe.h"
#include "wake.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define NEW_PREFIX ".new."

void scl_holder_path(char out[SCL_FNAME_MAX], pid_t pid)
{
    char num[24];

    scl_fmt_ull(num, (unsigned long long)pid);
    (void)scl_concat(out, SCL_FNAME_MAX, SCL_HOLDER_PREFIX, num, (char *)NULL);
}

static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
    int fd;

    do
        fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOFOLLOW, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

int scl_holder_read_id(int fd, struct scl_proc_id *id)
{
    char head[64];
    const char *p = head;
    unsigned long long pid, start;
    ssize_t n;

    do
        n = pread(fd, head, sizeof head - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    head[n] = '\0';
    if (scl_parse_ull(&p, &pid) != 0 || *p++ != ' ' || scl_parse_ull(&p, &start) != 0 ||
        *p != '\n' || pid == 0 || pid > (unsigned long long)(pid_t)-1 >> 1) {
        errno = EINVAL;
        return -1;
    }
    id->pid = (pid_t)pid;
    id->start = start;
    return 0;
}

static size_t format_header(char out[64], const struct scl_proc_id *id)
{
    size_t n = scl_fmt_ull(out, (unsigned long long)id->pid);

    out[n++] = ' ';
    n += scl_fmt_ull(out + n, id->start);
    out[n++] = '\n';
    return n;
}

int scl_claim_remove_if_same(int dirfd, const char *fname, dev_t dev, ino_t ino)
{
    struct stat now;

    if (fstatat(dirfd, fname, &now, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    if (now.st_dev != dev || now.st_ino != ino) {
        errno = ESTALE;
        return -1;
    }
    if (unlinkat(dirfd, fname, 0) != 0)
        return -1;
    if (fname[0] != '.')
        scl_wake(fname); /* a cleared claim: its waiters may take it */
    return 0;
}

/* Unlinks PATH only while it is still a link to ST's inode. */
static void unlink_if_same(int dirfd, const char *path, const struct stat *st)
{
    int saved = errno;

    (void)scl_claim_remove_if_same(dirfd, path, st->st_dev, st->st_ino);
    errno = saved;
}

/* Unlinks every claim named in the journal of FD that still links to it.
 * Lines are "FNAME\n" or "FNAME\tFULL-NAME\n"; only FNAME matters here. */
static void clear_journal(int dirfd, int fd, const struct stat *st)
{
    char buf[4096], fname[SCL_FNAME_MAX];
    size_t flen = 0;
    int in_header = 1, in_tail = 0;
    off_t off = 0;

    for (;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        off += n;
        for (ssize_t i = 0; i < n; i++) {
            char c = buf[i];
            if (c == '\n') {
                if (!in_header && flen > 0 && flen < SCL_FNAME_MAX) {
                    fname[flen] = '\0';
                    if (fname[0] != '.') /* never a holder file */
                        unlink_if_same(dirfd, fname, st);
                }
                in_header = in_tail = 0;
                flen = 0;
            } else if (in_header || in_tail) {
                continue;
            } else if (c == '\t') {
                in_tail = 1;
            } else if (flen < SCL_FNAME_MAX) {
                fname[flen++] = c;
            }
        }
    }
}

/*
 * Clears the holder whose file (or one of its claims) FD is open on.
 * ALSO_CLAIM, when set, is a claim path that is cleared too, in case it is
 * missing from the journal.  Returns as scl_holder_clear().
 */
static int clear_inode(int dirfd, int fd, enum scl_clear_mode mode, const char *also_claim)
{
    struct stat st;
    struct scl_proc_id id;
    char path[SCL_FNAME_MAX];

    while (flock(fd, LOCK_EX | LOCK_NB) != 0)
        if (errno != EINTR)
            return -1;
    if (fstat(fd, &st) != 0)
        return -1;
    if (st.st_nlink == 0)
        return 1; /* a clearer before us removed every link */
    if (scl_holder_read_id(fd, &id) != 0)
        return -1;
    if (mode == SCL_CLEAR_IF_DEAD && scl_proc_alive(&id))
        return 0;
    clear_journal(dirfd, fd, &st);
    if (also_claim != NULL)
        unlink_if_same(dirfd, also_claim, &st);
    if (mode != SCL_CLEAR_CLAIMS_ONLY) {
        scl_holder_path(path, id.pid);
        unlink_if_same(dirfd, path, &st);
    }
    return 1;
}

int scl_holder_clear(int dirfd, pid_t pid, enum scl_clear_mode mode)
{
    char path[SCL_FNAME_MAX];
    int fd, r;

    scl_holder_path(path, pid);
    fd = open_at(dirfd, path, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    r = clear_inode(dirfd, fd, mode, NULL);
    scl_close_quietly(fd); /* drops the flock */
    return r;
}

int scl_claim_holder(int dirfd, const char *fname, struct scl_proc_id *id)
{
    int fd, r;

    fd = open_at(dirfd, fname, O_RDONLY, 0);
    if (fd < 0)
        return -1;
    r = scl_holder_read_id(fd, id);
    scl_close_quietly(fd);
    return r;
}

enum scl_claim_state scl_claim_clear_if_stale(int dirfd, const char *fname)
{
    struct scl_proc_id id;
    int fd, r;

    fd = open_at(dirfd, fname, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? SCL_CLAIM_FREE : SCL_CLAIM_ERROR;
    if (scl_holder_read_id(fd, &id) != 0 || scl_proc_alive(&id)) {
        /* An unreadable header is somebody's: never taken for stale. */
        scl_close_quietly(fd);
        return SCL_CLAIM_LIVE;
    }
    r = clear_inode(dirfd, fd, SCL_CLEAR_IF_DEAD, fname);
    scl_close_quietly(fd);
    return r == 1 ? SCL_CLAIM_FREE : r == 0 ? SCL_CLAIM_LIVE : SCL_CLAIM_BUSY;
}

/* Puts the holder file made at TMP in place as PATH, for ID. */
static int install(int dirfd, const char *tmp, const char *path, const struct scl_proc_id *id, int self)
{
    struct scl_proc_id there;
    struct stat st;
    int fd, r;

    if (linkat(dirfd, tmp, dirfd, path, 0) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    fd = open_at(dirfd, path, O_RDONLY, 0);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1; /* cleared meanwhile: try again */
    if (fstat(fd, &st) != 0 || scl_holder_read_id(fd, &there) != 0) {
        scl_close_quietly(fd);
        return -1;
    }
    if (there.pid == id->pid && there.start == id->start) {
        scl_close_quietly(fd);
        if (!self || st.st_uid == geteuid())
            return 0;
        return renameat(dirfd, tmp, dirfd, path);
    }
    /* The same pid with another start time: a process that has ended. */
    r = clear_inode(dirfd, fd, SCL_CLEAR_ALWAYS, NULL);
    scl_close_quietly(fd);
    return r == 1 ? 1 : -1;
}

int scl_holder_register(int dirfd, const struct scl_proc_id *id, int self)
{
    char path[SCL_FNAME_MAX], tmp[SCL_FNAME_MAX], head[64], num[2][24];
    size_t head_len = format_header(head, id);
    int fd, r = -1;

    scl_holder_path(path, id->pid);
    scl_fmt_ull(num[0], (unsigned long long)id->pid);
    scl_fmt_ull(num[1], (unsigned long long)getpid());
    (void)scl_concat(tmp, sizeof tmp, NEW_PREFIX, num[0], ".", num[1], (char *)NULL);

    /* Written in full under a temporary name, then linked: nobody ever
     * sees a holder file without its header. */
    (void)unlinkat(dirfd, tmp, 0);
    /* Readable by whoever the directory lets in: a worker that dropped to
     * another user must read the root master's header to know who holds
     * a name.  The directory itself keeps everybody else out. */
    fd = open_at(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    if (scl_write_full(fd, head, head_len) == 0) {
        for (int attempt = 0; attempt < 4; attempt++)
            if ((r = install(dirfd, tmp, path, id, self)) != 1)
                break;
    }
    if (r == 1)
        errno = EAGAIN;
    scl_close_quietly(fd);
    /* After a rename the name is gone already; keep install()'s errno. */
    {
        int saved = errno;
        (void)unlinkat(dirfd, tmp, 0);
        errno = saved;
    }
    return r == 0 ? 0 : -1;
}

int scl_holder_journal(int dirfd, pid_t pid, const char *line, size_t len)
{
    char path[SCL_FNAME_MAX];
    int fd, r;

    scl_holder_path(path, pid);
    fd = open_at(dirfd, path, O_WRONLY | O_APPEND, 0);
    if (fd < 0)
        return -1;
    r = scl_write_full(fd, line, len);
    scl_close_quietly(fd);
    return r;
}

int scl_holders_scan(int dirfd, scl_holder_visit *fn, void *arg)
{
    /* getdents64 on a stack buffer: opendir() allocates. */
    char buf[4096] __attribute__((aligned(8)));
    /* A descriptor of our own: the shared one's offset is not ours to move. */
    int fd = open_at(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
    int r = 0;

    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t n = getdents64(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = n < 0 ? -1 : 0;
            break;
        }
        for (ssize_t off = 0; off < n && r == 0;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            const char *p = d->d_name + sizeof SCL_HOLDER_PREFIX - 1;
            unsigned long long pid = 0;
            off += d->d_reclen;
            if (strncmp(d->d_name, SCL_HOLDER_PREFIX, sizeof SCL_HOLDER_PREFIX - 1) == 0) {
                if (scl_parse_ull(&p, &pid) != 0 || *p != '\0' || pid == 0)
                    continue; /* not a name of ours */
            } else if (strncmp(d->d_name, NEW_PREFIX, sizeof NEW_PREFIX - 1) != 0) {
                continue; /* a claim, ".", ".." */
            }
            r = fn(dirfd, (pid_t)pid, d->d_name, arg);
        }
        if (r != 0)
            break;
    }
    scl_close_quietly(fd);
    return r;
}
