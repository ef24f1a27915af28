/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "budget.h"
#include "history.h"
#include "holder.h"
#include "log.h"
#include "scratch.h"
#include "sigsafe.h"
#include "times.h"
#include "wake.h"
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

void scl_holder_path(char out[SCL_PID_NAME_MAX], pid_t pid)
{
    char num[24];

    scl_fmt_ull(num, (unsigned long long)pid);
    (void)scl_concat(out, SCL_PID_NAME_MAX, SCL_HOLDER_PREFIX, num, (char *)NULL);
}

int scl_holder_parse_id(const char *head, size_t n, struct scl_proc_id *id)
{
    char copy[64];
    const char *p = copy;
    unsigned long long pid, start;

    /* The header is short: what follows it in HEAD never matters. */
    if (n >= sizeof copy)
        n = sizeof copy - 1;
    memcpy(copy, head, n);
    copy[n] = '\0';
    if (scl_parse_ull(&p, &pid) != 0 || *p++ != ' ' || scl_parse_ull(&p, &start) != 0 || *p != '\n' || pid == 0 ||
        pid > (unsigned long long)SCL_PID_MAX) {
        errno = EINVAL;
        return -1;
    }
    id->pid = (pid_t)pid;
    id->start = start;
    return 0;
}

int scl_holder_read_id(int fd, struct scl_proc_id *id)
{
    char head[64];
    ssize_t n;

    do
        n = pread(fd, head, sizeof head, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    return scl_holder_parse_id(head, (size_t)n, id);
}

static size_t format_header(char out[64], const struct scl_proc_id *id)
{
    size_t n = scl_fmt_ull(out, (unsigned long long)id->pid);

    out[n++] = ' ';
    n += scl_fmt_ull(out + n, id->start);
    out[n++] = '\n';
    return n;
}

enum { IN_HEADER, IN_NAME, IN_TAIL, IN_JUNK };

/* A tail too long for the reader's room: it is then given as "". */
#define TAIL_OVERFLOW ((size_t)-1)

void scl_journal_begin(struct scl_journal_reader *r, char *tail, size_t tail_cap)
{
    r->len = 0;
    r->state = IN_HEADER;
    r->tail = tail_cap > 0 ? tail : NULL;
    r->tail_cap = tail_cap;
    r->tail_len = 0;
}

/* The tail of the line just ended, as scl_journal_visit gives it. */
static const char *line_tail(struct scl_journal_reader *r)
{
    if (r->tail == NULL || r->state != IN_TAIL || r->tail_len == TAIL_OVERFLOW)
        return "";
    r->tail[r->tail_len] = '\0';
    return r->tail;
}

int scl_journal_feed(struct scl_journal_reader *r, const char *buf, size_t n, scl_journal_visit *fn, void *arg)
{
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (c == '\n') {
            int named = (r->state == IN_NAME || r->state == IN_TAIL) && scl_name_is_fname(r->fname, r->len);
            const char *tail = line_tail(r);
            int stop = 0;
            r->fname[r->len] = '\0';
            r->state = IN_NAME;
            r->len = 0;
            r->tail_len = 0;
            if (named && (stop = fn(r->fname, tail, arg)) != 0)
                return stop;
        } else if (r->state == IN_NAME) {
            if (c == '\t')
                r->state = IN_TAIL;
            else if (r->len + 1 < SCL_FNAME_MAX)
                r->fname[r->len++] = c;
            else
                r->state = IN_JUNK; /* longer than any file name */
        } else if (r->state == IN_TAIL && r->tail != NULL && r->tail_len != TAIL_OVERFLOW) {
            if (r->tail_len + 1 < r->tail_cap)
                r->tail[r->tail_len++] = c;
            else
                r->tail_len = TAIL_OVERFLOW;
        }
    }
    return 0;
}

/* A holder inode being cleared, how many of its links are left to find
 * besides its holder file's own name, and how many more entries of the
 * claims directory its scan may read; how the holds it ends end, and what
 * of their holder a record of its own takes (read once, when needed). */
struct clearing {
    int claims_fd, top_fd, fd;
    const struct stat *st;
    nlink_t to_find;
    struct scl_budget scan;    /* its own search's */
    struct scl_budget *budget; /* of the walk this clearing is part of, or NULL */
    const struct scl_hold_end *end;
    pid_t pid;
    int holder_read;
    struct scl_times_page *page; /* a scratch block, or NULL */
    char command[SCL_HISTORY_COMMAND];
};

/* What a record of the holder's own needs (it recorded none: it could not
 * map the history): its command line, noted on its holder file, and its
 * page of times, while they are there. */
static void read_holder(struct clearing *c)
{
    char *buf = scl_scratch_take();
    size_t n;

    c->holder_read = 1;
    if (buf == NULL)
        return;
    /* Read whole, then cut: a record keeps the first bytes of a longer one. */
    n = scl_holder_read_command(c->fd, buf, SCL_SCRATCH_SIZE);
    n = n < sizeof c->command - 1 ? n : sizeof c->command - 1;
    memcpy(c->command, buf, n);
    c->command[n] = '\0';
    _Static_assert(sizeof(struct scl_times_page) <= SCL_SCRATCH_SIZE, "a page of times fits a scratch block");
    if (c->top_fd >= 0 && scl_times_read(c->top_fd, c->pid, (struct scl_times_page *)buf) == 0)
        c->page = (struct scl_times_page *)buf;
    else
        scl_scratch_give(buf);
}

/* Records how the hold of FNAME ended, in a record of the holder's own
 * when it has none open. */
static void record_end(struct clearing *c, const char *fname)
{
    struct scl_history_file *f = c->end != NULL ? c->end->history : NULL;

    if (f == NULL || scl_history_end(f, fname, c->pid, c->end) != 0)
        return;
    if (!c->holder_read)
        read_holder(c);
    scl_history_add(f, fname, c->pid, c->page != NULL ? scl_times_taken_at(c->page, fname) : 0, c->command, c->end);
}

/* Unlinks claim FNAME when it still links to the inode being cleared,
 * and wakes its waiters (claim.h's scl_claim_remove_if_same(), one level
 * down: claim.c calls this file, not the other way round). */
static int clear_claim(const char *fname, const char *tail, void *arg)
{
    struct clearing *c = arg;
    int saved = errno;

    (void)tail;
    if (scl_unlink_if_same(c->claims_fd, fname, c->st->st_dev, c->st->st_ino) == 0) {
        scl_wake(c->claims_fd, fname);
        record_end(c, fname);
        if (c->to_find > 0)
            c->to_find--;
    }
    errno = saved;
    return c->to_find == 0; /* all found: the rest of the journal is history */
}

/* A name of the journal: each costs the walk a look (an fstatat), as an
 * entry of a search does. */
static int clear_journaled(const char *fname, const char *tail, void *arg)
{
    struct clearing *c = arg;

    if (c->budget != NULL && scl_budget_spend(c->budget, 1) != 0)
        return 1;
    return clear_claim(fname, tail, c);
}

/* Clears the claims the journal of FD names, reading at most
 * SCL_BUDGET_JOURNAL_BYTES bytes of it. */
static void clear_journal(struct clearing *c, int fd)
{
    struct scl_journal_reader reader;
    char *buf = scl_scratch_take();
    off_t off = 0;

    scl_journal_begin(&reader, NULL, 0);
    while (buf != NULL && off < SCL_BUDGET_JOURNAL_BYTES && c->to_find > 0) {
        ssize_t n = pread(fd, buf, SCL_SCRATCH_SIZE, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || scl_journal_feed(&reader, buf, (size_t)n, clear_journaled, c) != 0)
            break;
        off += n;
    }
    scl_scratch_give(buf);
}

static int clear_if_link(const struct dirent64 *d, void *arg)
{
    struct clearing *c = arg;

    if (scl_budget_spend(&c->scan, 1) != 0 || (c->budget != NULL && scl_budget_spend(c->budget, 1) != 0))
        return 1;
    return d->d_ino == c->st->st_ino && d->d_name[0] != '.' ? clear_claim(d->d_name, "", c) : 0;
}

/* scl_holder_clear_open(), its scan spending from BUDGET too (NULL: none
 * but its own). */
static int clear_open_within(int claims_fd, int top_fd, int fd, enum scl_clear_mode mode, const char *also_claim,
                             const struct scl_hold_end *end, struct scl_budget *budget)
{
    struct stat st;
    struct scl_proc_id id;
    char path[SCL_PID_NAME_MAX];
    struct clearing c = { .claims_fd = claims_fd, .top_fd = top_fd, .fd = fd, .st = &st, .end = end, .budget = budget };

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
    c.to_find = st.st_nlink - 1;
    c.pid = id.pid;
    clear_journal(&c, fd);
    if (also_claim != NULL)
        (void)clear_claim(also_claim, "", &c);
    scl_holder_path(path, id.pid);
    if (mode != SCL_CLEAR_CLAIMS_ONLY && scl_unlink_if_same(claims_fd, path, st.st_dev, st.st_ino) == 0) {
        /* Its page of times goes with it (times.h): only the tools read it. */
        scl_times_path(path, id.pid);
        if (top_fd >= 0)
            (void)unlinkat(top_fd, path, 0);
    }
    /* Links the journal did not name (it was torn, or capped) are found
     * the slow way; a link outside the directory is nobody's claim.  A
     * clearer of another process reads at most SCL_BUDGET_CLEAR_SCAN entries: a
     * worker may plant any number, and the clearer is often its master,
     * in waitpid().  What is left past them is a dead holder's, free to
     * anybody (the next acquire() of the name clears it).  A holder
     * clearing its own searches it all: as it execs, its links would
     * still be its own afterwards; as it ends, a process that held more
     * names than its journal keeps would leave them to others. */
    if (fstat(fd, &st) == 0 && st.st_nlink > (mode == SCL_CLEAR_CLAIMS_ONLY ? 1u : 0u)) {
        int saved = errno;
        c.to_find = st.st_nlink - (mode == SCL_CLEAR_CLAIMS_ONLY ? 1u : 0u);
        c.scan = mode == SCL_CLEAR_OWN || mode == SCL_CLEAR_CLAIMS_ONLY
                     ? scl_budget_of("a holder's search for its own links", ULONG_MAX)
                     : scl_budget_of("a search for a dead holder's links", SCL_BUDGET_CLEAR_SCAN);
        (void)scl_each_entry(claims_fd, clear_if_link, &c);
        errno = saved;
    }
    scl_scratch_give(c.page);
    return 1;
}

int scl_holder_clear_open(int claims_fd, int top_fd, int fd, enum scl_clear_mode mode, const char *also_claim,
                          const struct scl_hold_end *end)
{
    return clear_open_within(claims_fd, top_fd, fd, mode, also_claim, end, NULL);
}

int scl_holder_open_named(int claims_fd, const char *entry, pid_t pid, struct scl_proc_id *id)
{
    struct stat st;
    int fd = scl_open_file_at(claims_fd, entry, O_RDONLY, &st);

    if (fd < 0)
        return -1;
    if (scl_holder_read_id(fd, id) != 0) {
        scl_close_quietly(fd);
        errno = EIO;
        return -1;
    }
    if (id->pid != pid) {
        /* Only its holder names a holder file, by its own pid: this is a
         * link a worker made of its own, and any number may be planted.
         * Taken out at once, it costs nobody a search for its claims. */
        (void)scl_unlink_if_same(claims_fd, entry, st.st_dev, st.st_ino);
        scl_close_quietly(fd);
        errno = ENOENT;
        return -1;
    }
    return fd;
}

int scl_holder_clear(int claims_fd, int top_fd, pid_t pid, enum scl_clear_mode mode, const struct scl_hold_end *end,
                     struct scl_budget *budget)
{
    char path[SCL_PID_NAME_MAX];
    struct scl_proc_id id;
    int fd, r;

    scl_holder_path(path, pid);
    fd = scl_holder_open_named(claims_fd, path, pid, &id);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    r = clear_open_within(claims_fd, top_fd, fd, mode, NULL, end, budget);
    scl_close_quietly(fd); /* drops the flock */
    return r;
}

/* Puts the holder file made at TMP in place as PATH, for ID. */
static int install(int claims_fd, const char *tmp, const char *path, const struct scl_proc_id *id, int self)
{
    const struct scl_hold_end cleared = { scl_history_mine(), SCL_HOLD_CLEARED, 0 };
    struct scl_proc_id there;
    struct stat st;
    int fd, r;

    if (linkat(claims_fd, tmp, claims_fd, path, 0) == 0)
        return 0;
    if (errno != EEXIST)
        return -1;
    fd = scl_holder_open_named(claims_fd, path, id->pid, &there);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1; /* cleared meanwhile, or planted: try again */
    if (fstat(fd, &st) != 0) {
        scl_close_quietly(fd);
        return -1;
    }
    if (there.start == id->start) {
        scl_close_quietly(fd);
        if (!self || st.st_uid == geteuid())
            return 0;
        return renameat(claims_fd, tmp, claims_fd, path);
    }
    /* The same pid with another start time: a process that has ended.  Its
     * page of times is left: the new process of that pid makes its own
     * anew (times.c), and the directory's removal takes any other. */
    r = scl_holder_clear_open(claims_fd, -1, fd, SCL_CLEAR_ALWAYS, NULL, &cleared);
    scl_close_quietly(fd);
    return r == 1 ? 1 : -1;
}

int scl_holder_register(int claims_fd, const struct scl_proc_id *id, int self)
{
    char path[SCL_PID_NAME_MAX], tmp[SCL_PID_NAME_MAX], head[64], num[2][24];
    size_t head_len = format_header(head, id);
    int fd, r = -1;

    scl_holder_path(path, id->pid);
    scl_fmt_ull(num[0], (unsigned long long)id->pid);
    scl_fmt_ull(num[1], (unsigned long long)getpid());
    (void)scl_concat(tmp, sizeof tmp, SCL_HOLDER_NEW_PREFIX, num[0], ".", num[1], (char *)NULL);

    /* Written in full under a temporary name, then linked: nobody ever
     * sees a holder file without its header. */
    (void)unlinkat(claims_fd, tmp, 0);
    /* Readable by whoever the directory lets in: a worker that dropped to
     * another user must read the root master's header to know who holds
     * a name.  The directory itself keeps everybody else out. */
    fd = scl_openat(claims_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -1;
    if (scl_write_full(fd, head, head_len) == 0) {
        for (int attempt = 0; attempt < 4; attempt++)
            if ((r = install(claims_fd, tmp, path, id, self)) != 1)
                break;
    }
    if (r == 1)
        errno = EBUSY; /* not EAGAIN: that is EWOULDBLOCK, "held" */
    scl_close_quietly(fd);
    /* After a rename the name is gone already; keep install()'s errno. */
    {
        int saved = errno;
        (void)unlinkat(claims_fd, tmp, 0);
        errno = saved;
    }
    return r == 0 ? 0 : -1;
}

void scl_holder_note_command(int fd, const char *command, size_t n)
{
    int saved = errno;

    (void)fsetxattr(fd, SCL_COMMAND_XATTR, command, n, 0);
    errno = saved;
}

size_t scl_holder_read_command(int fd, char *out, size_t cap)
{
    int saved = errno;
    ssize_t n = fgetxattr(fd, SCL_COMMAND_XATTR, out, cap - 1);

    out[n > 0 ? n : 0] = '\0';
    errno = saved;
    return n > 0 ? (size_t)n : 0;
}

int scl_holder_journal(int fd, const struct stat *st, const char *line, size_t len)
{
    if (st->st_size + (off_t)len > SCL_BUDGET_JOURNAL_BYTES || scl_write_full(fd, line, len) == 0)
        return 0;
    /* A torn line would hide the next one from every reader. */
    {
        int saved = errno;
        if (ftruncate(fd, st->st_size) != 0)
            scl_debug("a torn journal line stays: ftruncate: %m");
        errno = saved;
    }
    return -1;
}

struct holder_visit {
    scl_holder_visit *fn;
    int claims_fd;
    struct scl_budget *budget;
    void *arg;
};

static int visit_holder(const struct dirent64 *d, void *arg)
{
    const struct holder_visit *v = arg;
    const char *p = scl_after_prefix(d->d_name, SCL_HOLDER_PREFIX);
    unsigned long long pid = 0;

    if (v->budget != NULL && scl_budget_spend(v->budget, 1) != 0)
        return 1;
    if (p != NULL) {
        if (scl_parse_ull(&p, &pid) != 0 || *p != '\0' || pid == 0 || pid > (unsigned long long)SCL_PID_MAX)
            return 0; /* not a name of ours */
    } else if (scl_after_prefix(d->d_name, SCL_HOLDER_NEW_PREFIX) == NULL &&
               scl_after_prefix(d->d_name, SCL_WATCH_PREFIX) == NULL) {
        return 0; /* a claim, ".", ".." */
    }
    return v->fn(v->claims_fd, (pid_t)pid, d->d_name, v->arg);
}

int scl_holders_scan(int claims_fd, struct scl_budget *budget, scl_holder_visit *fn, void *arg)
{
    struct holder_visit v = { .fn = fn, .claims_fd = claims_fd, .budget = budget, .arg = arg };

    return scl_each_entry(claims_fd, visit_holder, &v);
}
