/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "budget.h"
#include "holder.h"
#include "inventory.h"
#include "layout.h"
#include "member.h"
#include "proc.h"
#include "retire.h"
#include "sigsafe.h"
#include "store_admin.h"
#include "times.h"
#include "names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *inv_proc_state(const struct inv_proc *p)
{
    if (p->state == SCL_PROC_ALIVE)
        return p->stopped ? "stopped" : p->draining ? "draining" : "alive";
    return p->state == SCL_PROC_GONE ? "gone" : "pid-reused";
}

const char *inv_dir_state(const struct inv_dir *d)
{
    return !d->live ? "abandoned" : d->orphaned ? "orphaned" : "live";
}

int inv_is_run_namespace(const char *path)
{
    const char *slash = strrchr(path, '/');

    return strncmp(slash != NULL ? slash + 1 : path, INV_RUN_NAMESPACE_PREFIX, strlen(INV_RUN_NAMESPACE_PREFIX)) == 0;
}

void inv_server_name(const struct inv_dir *d, const char *path, int title, char *out, size_t cap)
{
    const struct inv_proc *m = d->master >= 0 && (size_t)d->master < d->nprocs ? &d->procs[d->master] : NULL;
    const char *word, *slash;
    size_t len;

    if (inv_is_run_namespace(path)) {
        snprintf(out, cap, "run");
        return;
    }
    if (m == NULL || m->state != SCL_PROC_ALIVE || scl_proc_read_unit(m->pid, out, cap) != 0) {
        word = m != NULL && m->command[0] != '\0' ? m->command : path;
        len = strcspn(word, " ");
        for (slash = word; (slash = memchr(word, '/', len)) != NULL && (size_t)(slash - word) + 1 < len;) {
            len -= (size_t)(slash - word) + 1;
            word = slash + 1;
        }
        if (len > 1 && word[len - 1] == ':')
            len--;
        snprintf(out, cap, "%.*s", (int)len, word);
    }
    if (title && m != NULL && strlen(out) + 24 < cap)
        snprintf(out + strlen(out), cap - strlen(out), "[%ld]", (long)m->pid);
}

const char *inv_proc_role(const struct inv_dir *d, const struct inv_proc *p)
{
    if (d->master >= 0 && p == &d->procs[d->master])
        return "master";
    return p->execd ? "exec'd" : "worker";
}

/* Alive, but stopped (SIGSTOP, a debugger's trace stop). */
static int is_stopped(pid_t pid)
{
    struct scl_proc_stat st;

    return scl_proc_read_stat(pid, &st) == 0 && (st.state == 'T' || st.state == 't');
}

/*
 * Calls FN for each line of P's journal (its first SCL_BUDGET_JOURNAL_BYTES bytes,
 * read from a regular file only, as the library reads it), the file name
 * and what follows its tab ("" for none) apart, until FN returns non-zero:
 * that value, or 0.  The library's own reader parses it (holder.h).
 */
static int each_journal_line(int claims_fd, const struct inv_proc *p, scl_journal_visit *fn, void *arg)
{
    char holder[SCL_PID_NAME_MAX], *journal, *tail;
    struct scl_journal_reader reader;
    struct stat st;
    ssize_t n;
    int fd, r = 0;

    scl_holder_path(holder, p->pid);
    fd = scl_open_file_at(claims_fd, holder, O_RDONLY, &st);
    if (fd < 0)
        return 0;
    journal = malloc(SCL_BUDGET_JOURNAL_BYTES);
    tail = malloc(SCL_BUDGET_JOURNAL_BYTES);
    n = journal == NULL || tail == NULL ? -1 : scl_read_full(fd, journal, SCL_BUDGET_JOURNAL_BYTES);
    close(fd);
    if (n > 0) {
        scl_journal_begin(&reader, tail, SCL_BUDGET_JOURNAL_BYTES);
        r = scl_journal_feed(&reader, journal, (size_t)n, fn, arg);
    }
    free(journal);
    free(tail);
    return r;
}

struct full_name {
    const char *fname;
    char *name;
};

static int find_full_name(const char *fname, const char *full, void *arg)
{
    struct full_name *f = arg;
    size_t cap = strlen(full) + 1;

    if (strcmp(fname, f->fname) != 0 || *full == '\0' || (f->name = malloc(cap)) == NULL)
        return 0;
    if (scl_name_decode_full(full, f->name, cap) < 0) {
        free(f->name);
        f->name = NULL;
        return 0;
    }
    return 1;
}

/* File name FNAME as the application wrote it: decoded, or for a hashed
 * name, the whole name its holder P journaled (FNAME itself when P is
 * NULL or did not). */
static char *display_name(int claims_fd, const struct inv_proc *p, const char *fname)
{
    size_t cap = strlen(fname) + 1;
    char *name;

    if (scl_name_is_hashed(fname)) {
        struct full_name f = { .fname = fname, .name = NULL };
        if (p != NULL)
            (void)each_journal_line(claims_fd, p, find_full_name, &f);
        return f.name != NULL ? f.name : strdup(fname);
    }
    name = malloc(cap);
    if (name != NULL && scl_name_decode(fname, name, cap) < 0)
        strcpy(name, fname);
    return name;
}

/* The journal line of the name a process waits for (by its hash, in its
 * page of times): a waiter journals its name before its first try, as
 * every claimant does. */
struct waited {
    uint64_t hash;
    char fname[SCL_FNAME_MAX];
};

static int find_waited(const char *fname, const char *full, void *arg)
{
    struct waited *w = arg;

    (void)full;
    if (scl_times_hash(fname) != w->hash)
        return 0;
    snprintf(w->fname, sizeof w->fname, "%s", fname);
    return 1;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    void *bigger;

    if (n < *cap)
        return 0;
    *cap = *cap ? *cap * 2 : 16;
    bigger = realloc(*v, *cap * size);
    if (bigger == NULL)
        return -1;
    *v = bigger;
    return 0;
}

/* A directory being read, for the scans' callbacks, and the budget of
 * the load it is part of. */
struct loading {
    struct inv_dir *d;
    struct inv_budget *budget;
    int claims_fd;
    size_t cap, entries;
};

void inv_budget_init(struct inv_budget *b)
{
    b->entries = scl_budget_of("claims/ entries read", SCL_BUDGET_LOAD_ENTRIES);
    b->dirs = scl_budget_of("claim directories looked at", SCL_BUDGET_LOAD_DIRS);
    b->bytes = scl_budget_of("bytes kept", SCL_BUDGET_LOAD_BYTES);
    b->unread = 0;
}

static int spent(const struct inv_budget *b)
{
    return b->entries.gave_up || b->dirs.gave_up || b->bytes.gave_up;
}

/* Spends N entries read and BYTES kept of L's budget: 0, or -1 with errno
 * EDQUOT once either is spent.  Every read and every byte kept of a load
 * goes through here: the one place its bound is kept. */
static int spend(struct loading *l, unsigned long n, size_t bytes)
{
    if (scl_budget_spend(&l->budget->entries, n) == 0 && scl_budget_spend(&l->budget->bytes, bytes) == 0)
        return 0;
    errno = EDQUOT;
    return -1;
}

/* 1, with errno E2BIG, when D has as many members and claims as it may:
 * the count before reading is the cheap refusal, this keeps the bound
 * when the directory grows while it is read. */
static int full(const struct inv_dir *d)
{
    if (d->nprocs + d->nclaims < SCL_BUDGET_DIR_ENTRIES)
        return 0;
    errno = E2BIG;
    return 1;
}

static int count_entry(const struct dirent64 *e, void *arg)
{
    struct loading *l = arg;

    (void)e;
    if (spend(l, 1, 0) != 0)
        return 1;
    return ++l->entries > SCL_BUDGET_DIR_ENTRIES + 2; /* and "." and ".." */
}

/* Adds the member whose holder file is ENTRY, when it is one: a file of
 * another name ("PID START" of a pid not its own, as any link of it has)
 * is nobody's holder file, and not read further. */
static int add_member(int claims_fd, pid_t pid, const char *entry, void *arg)
{
    struct loading *l = arg;
    struct inv_dir *d = l->d;
    struct scl_proc_id id;
    struct inv_proc *p;
    struct stat st;
    char command[512];
    int fd, execd;

    if (spend(l, 1, 0) != 0)
        return -1;
    if (pid == 0)
        return 0; /* a registration in progress */
    if (full(d))
        return -1;
    fd = scl_open_file_at(claims_fd, entry, O_RDONLY, &st);
    if (fd < 0)
        return 0;
    if (scl_holder_read_id(fd, &id) != 0 || id.pid != pid) {
        close(fd);
        return 0;
    }
    /* What it said it was the last time it took a new name: all there is
     * to say of a dead one (the library's note, bounded, or nothing); and
     * whether its image was exec'd (a byte, "1", or nothing). */
    (void)scl_holder_read_command(fd, command, sizeof command);
    execd = scl_member_is_execd(fd);
    close(fd);
    if (grow((void **)&d->procs, &l->cap, d->nprocs, sizeof *d->procs) != 0)
        return -1;
    p = &d->procs[d->nprocs];
    memset(p, 0, sizeof *p);
    p->pid = id.pid;
    p->start = id.start;
    p->uid = st.st_uid;
    p->execd = execd;
    p->state = scl_proc_state(&id);
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    if (p->state == SCL_PROC_ALIVE) {
        if (scl_proc_read_cmdline(p->pid, command, sizeof command) < 0)
            command[0] = '\0';
        p->stopped = is_stopped(p->pid);
    }
    /* Its record twice (an array grows by doubling), and its line. */
    if (spend(l, 0, 2 * sizeof *p + strlen(command) + 1) != 0 || (p->command = strdup(command)) == NULL)
        return -1;
    d->nprocs++;
    d->live |= p->state == SCL_PROC_ALIVE;
    return 0;
}

static int add_claim(const struct dirent64 *e, void *arg)
{
    struct loading *l = arg;
    struct inv_dir *d = l->d;
    struct inv_claim *c;
    struct stat st;

    if (spend(l, 1, 0) != 0)
        return -1;
    if (e->d_name[0] == '.' || fstatat(l->claims_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return 0;
    if (full(d) || spend(l, 0, 2 * sizeof *c + strlen(e->d_name) + 1) != 0)
        return -1;
    if (grow((void **)&d->claims, &l->cap, d->nclaims, sizeof *d->claims) != 0)
        return -1;
    c = &d->claims[d->nclaims];
    memset(c, 0, sizeof *c);
    if ((c->fname = strdup(e->d_name)) == NULL)
        return -1;
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    d->nclaims++;
    return 0;
}

static int by_pid(const void *a, const void *b)
{
    const struct inv_proc *p = a, *q = b;

    return (p->pid > q->pid) - (p->pid < q->pid);
}

static int by_holder_and_fname(const void *a, const void *b)
{
    const struct inv_claim *c = a, *e = b;

    return c->holder != e->holder ? (c->holder > e->holder) - (c->holder < e->holder) : strcmp(c->fname, e->fname);
}

/* Lookups by a sorted copy and bsearch(): one a claim, never a loop over
 * the members for each (anybody can plant thousands of either). */
struct by_inode {
    dev_t dev;
    ino_t ino;
    size_t proc;
};

static int inode_order(const void *a, const void *b)
{
    const struct by_inode *x = a, *y = b;

    return x->dev != y->dev ? (x->dev > y->dev) - (x->dev < y->dev) : (x->ino > y->ino) - (x->ino < y->ino);
}

struct by_fname {
    const char *fname;
    size_t claim;
};

static int fname_order(const void *a, const void *b)
{
    return strcmp(((const struct by_fname *)a)->fname, ((const struct by_fname *)b)->fname);
}

/* The index of each claim's holder: the member whose holder file it links
 * to. */
static int match_holders(struct inv_dir *d)
{
    struct by_inode *index = malloc((d->nprocs + 1) * sizeof *index);

    if (index == NULL)
        return -1;
    for (size_t i = 0; i < d->nprocs; i++)
        index[i] = (struct by_inode){ d->procs[i].dev, d->procs[i].ino, i };
    qsort(index, d->nprocs, sizeof *index, inode_order);
    for (size_t j = 0; j < d->nclaims; j++) {
        struct inv_claim *c = &d->claims[j];
        struct by_inode key = { c->dev, c->ino, 0 };
        const struct by_inode *found = bsearch(&key, index, d->nprocs, sizeof *index, inode_order);
        c->holder = found != NULL ? (int)found->proc : -1;
    }
    free(index);
    /* Each member's claims side by side, so that its page of times and its
     * journal are read once for all of them. */
    if (d->nclaims > 1)
        qsort(d->claims, d->nclaims, sizeof *d->claims, by_holder_and_fname);
    for (size_t j = d->nclaims; j-- > 0;)
        if (d->claims[j].holder >= 0) {
            struct inv_proc *p = &d->procs[d->claims[j].holder];
            p->claim0 = j;
            p->nheld++;
        }
    return 0;
}

/* Reads P's page of times (once, in the top TOP_FD): when it took its
 * claims, whether it drains, and what it waits for when it is alive;
 * -1 (EDQUOT) when what it waits for is past L's budget, else 0. */
static int read_times(int top_fd, struct loading *l, struct inv_proc *p)
{
    struct inv_dir *d = l->d;
    int claims_fd = l->claims_fd;
    struct scl_times_page page;

    if ((p->nheld == 0 && p->state != SCL_PROC_ALIVE) || scl_times_read(top_fd, p->pid, &page) != 0)
        return 0;
    for (size_t j = p->claim0; j < p->claim0 + p->nheld; j++)
        d->claims[j].since = scl_times_of(&page, d->claims[j].fname);
    p->waiting_since = scl_times_when(&page, &page.waiting);
    p->draining = scl_times_draining(&page);
    if (p->state != SCL_PROC_ALIVE || page.waiting.hash == 0 || p->waiting_since == 0)
        return 0;
    {
        struct waited w = { .hash = page.waiting.hash };
        if (each_journal_line(claims_fd, p, find_waited, &w) == 0 || (p->waiting_fname = strdup(w.fname)) == NULL)
            return 0;
    }
    p->waiting = display_name(claims_fd, p, p->waiting_fname);
    return spend(l, 0, 2 * strlen(p->waiting_fname) + (p->waiting != NULL ? strlen(p->waiting) + 1 : 0));
}

/* Who waits for which claim: D's waiters, by the claim they wait for (the
 * claims' count for a name nobody holds), so that list walks them once. */
static int sort_waiters(struct inv_dir *d)
{
    struct by_fname *index = malloc((d->nclaims + 1) * sizeof *index);

    if (index == NULL)
        return -1;
    for (size_t j = 0; j < d->nclaims; j++)
        index[j] = (struct by_fname){ d->claims[j].fname, j };
    qsort(index, d->nclaims, sizeof *index, fname_order);
    for (size_t i = 0; i < d->nprocs; i++) {
        struct inv_proc *p = &d->procs[i];
        struct by_fname key = { p->waiting_fname, 0 };
        const struct by_fname *found;
        if (p->waiting == NULL)
            continue;
        found = bsearch(&key, index, d->nclaims, sizeof *index, fname_order);
        p->waited = found != NULL ? found->claim : d->nclaims;
        d->waiters[d->nwaiters++] = i;
    }
    free(index);
    /* By pid within a claim: procs are by pid already, and an insertion
     * sort keeps that order (waiters are live processes, each a pid of its
     * own and with its own start time: at most the machine's processes). */
    for (size_t a = 1; a < d->nwaiters; a++)
        for (size_t b = a; b > 0 && d->procs[d->waiters[b - 1]].waited > d->procs[d->waiters[b]].waited; b--) {
            size_t swap = d->waiters[b];
            d->waiters[b] = d->waiters[b - 1];
            d->waiters[b - 1] = swap;
        }
    return 0;
}

/* 1 when member P, alive, is a worker forked by a master that is no
 * member: its parent, alive and no member, runs its very command line.
 * A master that never claims is a member only once the worker that made
 * the directory registered it; a worker that forks an exec'd helper
 * first (which makes the directory, and registers the worker) would
 * otherwise pass for the master. */
static int forked_by_outsider(const struct inv_dir *d, const struct inv_proc *p)
{
    struct scl_proc_stat st;
    char command[512];

    if (p->state != SCL_PROC_ALIVE || p->command[0] == '\0' || scl_proc_read_stat(p->pid, &st) != 0 || st.ppid <= 1 ||
        inv_member(d, st.ppid) != NULL || scl_proc_read_cmdline(st.ppid, command, sizeof command) <= 0)
        return 0;
    return strcmp(command, p->command) == 0;
}

/* Says that D is not read, and why: -1 with errno E2BIG. */
static int refuse(const struct inv_dir *d)
{
    char owner[300];

    inv_owner_name(d->owner, owner, sizeof owner);
    scl_admin_report("%s, of %s: more than %d entries in its claims/ directory, not read; "
                     "its owner can remove what it does not know there",
                     d->path, owner, SCL_BUDGET_DIR_ENTRIES);
    errno = E2BIG;
    return -1;
}

/* Says that directory PATH, of OWNER, is not read, nor any after it,
 * because B is spent (naming the bound it reached): -1 with errno
 * EDQUOT. */
static int past_budget(const char *path, uid_t owner, const struct inv_budget *b)
{
    const struct scl_budget *reached = b->bytes.gave_up ? &b->bytes : b->dirs.gave_up ? &b->dirs : &b->entries;
    char name[300];

    inv_owner_name(owner, name, sizeof name);
    scl_admin_report("%s, of %s: not read: this command's reading of claim directories reached its bound of "
                     "%lu %s in all (what others planted may have spent it): what it shows is incomplete",
                     path, name, reached->limit, reached->walk);
    errno = EDQUOT;
    return -1;
}

/* -1 after L's scan that stopped with errno: said when it is a refusal. */
static int stopped(const struct loading *l)
{
    if (errno == E2BIG)
        return refuse(l->d);
    if (errno == EDQUOT)
        return past_budget(l->d->path, l->d->owner, l->budget);
    return -1;
}

static int read_dir(int top_fd, int claims_fd, struct inv_dir *d, struct inv_budget *b)
{
    struct loading l = { .d = d, .budget = b, .claims_fd = claims_fd };

    if (scl_each_entry(claims_fd, count_entry, &l) < 0)
        return -1;
    if (spent(b))
        return past_budget(d->path, d->owner, b);
    if (l.entries > SCL_BUDGET_DIR_ENTRIES + 2)
        return refuse(d);
    /* First the members, so that claims can name their holder. */
    if (scl_holders_scan(claims_fd, NULL, add_member, &l) != 0)
        return stopped(&l);
    if (d->nprocs > 1)
        qsort(d->procs, d->nprocs, sizeof *d->procs, by_pid);
    /* The master forked the others, and the worker that made the directory
     * registered its parent: the first member to start (start times count
     * clock ticks: within one, the parent's pid is lower, but for a wrap of
     * the pid counter). */
    d->master = -1;
    for (size_t i = 0; i < d->nprocs; i++) {
        const struct inv_proc *p = &d->procs[i], *m = d->master >= 0 ? &d->procs[d->master] : NULL;
        if (m == NULL || p->start < m->start)
            d->master = (int)i;
    }
    if (d->master >= 0 && forked_by_outsider(d, &d->procs[d->master]))
        d->master = -1;
    d->orphaned = d->live && d->master >= 0 && d->procs[d->master].state != SCL_PROC_ALIVE;
    l.cap = 0;
    if (scl_each_entry(claims_fd, add_claim, &l) != 0)
        return stopped(&l);
    if (match_holders(d) != 0)
        return -1;
    d->waiters = malloc((d->nprocs + 1) * sizeof *d->waiters);
    if (d->waiters == NULL || spend(&l, 0, (d->nprocs + 1) * sizeof *d->waiters) != 0)
        return stopped(&l);
    for (size_t i = 0; i < d->nprocs; i++)
        if (read_times(top_fd, &l, &d->procs[i]) != 0)
            return stopped(&l);
    for (size_t j = 0; j < d->nclaims; j++) {
        struct inv_claim *c = &d->claims[j];
        if ((c->name = display_name(claims_fd, c->holder >= 0 ? &d->procs[c->holder] : NULL, c->fname)) == NULL)
            return -1;
        if (spend(&l, 0, strlen(c->name) + 1) != 0)
            return stopped(&l);
    }
    return sort_waiters(d);
}

int inv_open_dir(const char *path, int *top_fd)
{
    int claims_fd;

    /* Never through a symlink: root lists directories other users own. */
    *top_fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*top_fd < 0)
        return -1;
    claims_fd = scl_open_dir_at(*top_fd, SCL_CLAIMS_DIR);
    if (claims_fd < 0) {
        int saved = errno;
        close(*top_fd);
        *top_fd = -1;
        errno = saved;
    }
    return claims_fd;
}

int inv_load_dir(const char *path, struct inv_dir *d, struct inv_budget *b)
{
    struct inv_budget own;
    struct stat st;
    int top_fd, claims_fd, r;

    if (b == NULL)
        inv_budget_init(b = &own);
    memset(d, 0, sizeof *d);
    d->master = -1;
    snprintf(d->path, sizeof d->path, "%s", path);
    claims_fd = inv_open_dir(path, &top_fd);
    if (claims_fd < 0)
        return -1;
    if (fstat(top_fd, &st) != 0) {
        close(claims_fd);
        close(top_fd);
        return -1;
    }
    d->owner = st.st_uid;
    r = spent(b) ? past_budget(path, d->owner, b) : read_dir(top_fd, claims_fd, d, b);
    close(claims_fd);
    close(top_fd);
    if (r != 0) {
        int saved = errno;
        inv_free_dir(d);
        b->unread += saved == E2BIG || saved == EDQUOT;
        errno = saved;
    }
    return r;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct inv_dir *)a)->path, ((const struct inv_dir *)b)->path);
}

const struct inv_proc *inv_member(const struct inv_dir *d, pid_t pid)
{
    struct inv_proc key = { .pid = pid };

    return d->nprocs > 0 ? bsearch(&key, d->procs, d->nprocs, sizeof *d->procs, by_pid) : NULL;
}

/* A claim directory found in a base, to be read. */
struct found {
    char name[NAME_MAX + 1];
    uid_t owner;
};

/* Root's and this user's first, then by name. */
static int trusted_first(const void *a, const void *b)
{
    const struct found *x = a, *y = b;
    uid_t self = geteuid();
    int ox = x->owner != 0 && x->owner != self, oy = y->owner != 0 && y->owner != self;

    return ox != oy ? ox - oy : strcmp(x->name, y->name);
}

/* The claim directories below BASE this user may read (all, for root),
 * at most as many as B lets it look at (past them: said), into *FOUND;
 * those of other users, in *HIDDEN.  How many, or -1 with errno. */
static long find_dirs(const char *base, struct inv_budget *b, struct found **found, size_t *hidden)
{
    DIR *dir = opendir(base);
    struct dirent *e;
    size_t n = 0, cap = 0;
    uid_t self = geteuid();

    *found = NULL;
    if (dir == NULL)
        return -1;
    while ((e = readdir(dir)) != NULL) {
        char path[PATH_MAX];
        struct stat st;
        if (strncmp(e->d_name, SCL_DIR_PREFIX, sizeof SCL_DIR_PREFIX - 1) != 0 || scl_layout_is_unfinished(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        /* Root sees every user's, as lslocks shows root every lock; one that
         * others may write is nobody's to trust (inv_select_dir() says so). */
        if (st.st_uid != self && (self != 0 || (st.st_mode & 022) != 0)) {
            (*hidden)++;
            continue;
        }
        if (scl_budget_spend(&b->dirs, 1) != 0) {
            scl_admin_report("%s: more than %lu claim directories: those past them are not read: "
                             "what this command shows is incomplete",
                             base, b->dirs.limit);
            b->unread++;
            break;
        }
        if (grow((void **)found, &cap, n, sizeof **found) != 0)
            break;
        snprintf((*found)[n].name, sizeof(*found)[n].name, "%s", e->d_name);
        (*found)[n++].owner = st.st_uid;
    }
    closedir(dir);
    if (n > 1) /* qsort's array may not be NULL, even empty */
        qsort(*found, n, sizeof **found, trusted_first);
    return (long)n;
}

int inv_load(const char *base, struct inv_budget *b, struct inv_dir **dirs, size_t *n, size_t *hidden)
{
    struct found *found;
    long nfound;

    *dirs = NULL;
    *n = 0;
    *hidden = 0;
    if ((nfound = find_dirs(base, b, &found, hidden)) < 0)
        return -1;
    if (nfound > 0 && (*dirs = calloc((size_t)nfound, sizeof **dirs)) == NULL)
        nfound = 0;
    for (long i = 0; i < nfound; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", base, found[i].name);
        if (!spent(b)) {
            *n += inv_load_dir(path, &(*dirs)[*n], b) == 0;
            continue;
        }
        (void)past_budget(path, found[i].owner, b);
        b->unread++;
    }
    free(found);
    if (*n > 1)
        qsort(*dirs, *n, sizeof **dirs, by_path);
    return 0;
}

void inv_owner_name(uid_t uid, char *out, size_t cap)
{
    struct passwd *pw = getpwuid(uid);

    if (pw != NULL)
        snprintf(out, cap, "user %s (uid %d)", pw->pw_name, (int)uid);
    else
        snprintf(out, cap, "uid %d", (int)uid);
}

void inv_free_dir(struct inv_dir *d)
{
    for (size_t j = 0; j < d->nprocs; j++) {
        free(d->procs[j].command);
        free(d->procs[j].waiting);
        free(d->procs[j].waiting_fname);
    }
    for (size_t j = 0; j < d->nclaims; j++) {
        free(d->claims[j].name);
        free(d->claims[j].fname);
    }
    free(d->claims);
    free(d->procs);
    free(d->waiters);
    d->claims = NULL;
    d->procs = NULL;
    d->waiters = NULL;
    d->nclaims = d->nprocs = d->nwaiters = 0;
}

void inv_free(struct inv_dir *dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        inv_free_dir(&dirs[i]);
    free(dirs);
}
