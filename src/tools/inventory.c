#include "config.h"

#include "holder.h"
#include "inventory.h"
#include "layout.h"
#include "proc.h"
#include "retire.h"
#include "sigsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

const char *inv_proc_state(const struct inv_proc *p)
{
    if (p->state == SCL_PROC_ALIVE)
        return p->stopped ? "stopped" : "alive";
    return p->state == SCL_PROC_GONE ? "gone" : "pid-reused";
}

const char *inv_dir_state(const struct inv_dir *d)
{
    return !d->live ? "abandoned" : d->orphaned ? "orphaned" : "live";
}

/* Whether PID is stopped: the state letter after the command's ')'. */
static int is_stopped(pid_t pid)
{
    char path[64], stat[512], *paren;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return 0;
    stat[n] = '\0';
    paren = strrchr(stat, ')');
    return paren != NULL && paren[1] == ' ' && (paren[2] == 'T' || paren[2] == 't');
}

static void read_command(pid_t pid, char *out, size_t cap)
{
    char path[64];
    ssize_t n;
    int fd;

    out[0] = '\0';
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    out[n] = '\0';
    for (ssize_t i = 0; i < n - 1; i++)
        if (out[i] == '\0')
            out[i] = ' ';
}

/* P's journal, as the library reads journals (a regular file only, its
 * first SCL_JOURNAL_MAX bytes), as a string cut after its last whole
 * line; NULL when there is none. */
static char *read_journal(int dirfd, const struct inv_proc *p)
{
    char holder[SCL_FNAME_MAX], *journal, *end;
    struct stat st;
    ssize_t n;
    int fd;

    scl_holder_path(holder, p->pid);
    fd = scl_open_file_at(dirfd, holder, O_RDONLY, &st);
    if (fd < 0)
        return NULL;
    journal = malloc(SCL_JOURNAL_MAX + 1);
    n = journal == NULL ? -1 : scl_read_full(fd, journal, SCL_JOURNAL_MAX);
    close(fd);
    if (n < 0) {
        free(journal);
        return NULL;
    }
    journal[n] = '\0';
    end = strrchr(journal, '\n'); /* a line without its end is not whole */
    *(end != NULL ? end + 1 : journal) = '\0';
    return journal;
}

/*
 * Calls FN for each line of P's journal after its header, the file name
 * and what follows its tab ("" for none) apart, until FN returns non-zero:
 * that value, or 0.
 */
typedef int journal_line_fn(const char *fname, const char *full, void *arg);
static int each_journal_line(int dirfd, const struct inv_proc *p, journal_line_fn *fn, void *arg)
{
    char *journal = read_journal(dirfd, p), *line, *next;
    int r = 0;

    if (journal == NULL)
        return 0;
    for (line = strchr(journal, '\n'); r == 0 && line != NULL && line[1] != '\0'; line = next) {
        char *tab;
        line++;
        next = strchr(line, '\n');
        *next = '\0';
        tab = strchr(line, '\t');
        if (tab != NULL)
            *tab = '\0';
        if (scl_name_is_fname(line, strlen(line)))
            r = fn(line, tab != NULL ? tab + 1 : "", arg);
    }
    free(journal);
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
static char *display_name(int dirfd, const struct inv_proc *p, const char *fname)
{
    size_t cap = strlen(fname) + 1;
    char *name;

    if (scl_name_is_hashed(fname)) {
        struct full_name f = { .fname = fname, .name = NULL };
        if (p != NULL)
            (void)each_journal_line(dirfd, p, find_full_name, &f);
        return f.name != NULL ? f.name : strdup(fname);
    }
    name = malloc(cap);
    if (name != NULL && scl_name_decode(fname, name, cap) < 0)
        strcpy(name, fname);
    return name;
}

/* The journal line of the name P waits for: a waiter journals its name
 * before its first try, as every claimant does. */
static int find_waited(const char *fname, const char *full, void *arg)
{
    struct inv_proc *p = arg;

    (void)full;
    if (scl_times_hash(fname) != p->times->waiting.hash)
        return 0;
    snprintf(p->waiting_fname, sizeof p->waiting_fname, "%s", fname);
    return 1;
}

/* Reads P's page of times, and what it waits for when it is alive. */
static void read_times(int topfd, int dirfd, struct inv_proc *p)
{
    struct scl_times_page page;

    if (scl_times_read(topfd, p->pid, &page) != 0 || (p->times = malloc(sizeof page)) == NULL)
        return;
    *p->times = page;
    p->waiting_since = scl_times_when(&page, &page.waiting);
    if (p->state != SCL_PROC_ALIVE || page.waiting.hash == 0 || p->waiting_since == 0 ||
        each_journal_line(dirfd, p, find_waited, p) == 0)
        return;
    p->waiting = display_name(dirfd, p, p->waiting_fname);
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

int inv_open_dir(const char *path, int *topfd)
{
    int claimsfd;

    /* Never through a symlink: root lists directories other users own. */
    *topfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*topfd < 0)
        return -1;
    claimsfd = scl_open_dir_at(*topfd, SCL_CLAIMS_DIR);
    if (claimsfd < 0) {
        int saved = errno;
        close(*topfd);
        *topfd = -1;
        errno = saved;
    }
    return claimsfd;
}

int inv_load_dir(const char *path, struct inv_dir *d)
{
    size_t pcap = 0, ccap = 0;
    struct dirent *e;
    DIR *dir;
    int topfd, claimsfd;

    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    claimsfd = inv_open_dir(path, &topfd);
    if (claimsfd < 0)
        return -1;
    if ((dir = fdopendir(claimsfd)) == NULL) {
        close(claimsfd);
        close(topfd);
        return -1;
    }
    /* First the members, so that claims can name their holder. */
    while ((e = readdir(dir)) != NULL) {
        struct inv_proc *p;
        struct scl_proc_id id;
        struct stat st;
        ssize_t n;
        int fd;
        if (strncmp(e->d_name, SCL_HOLDER_PREFIX, sizeof SCL_HOLDER_PREFIX - 1) != 0)
            continue;
        fd = scl_open_file_at(claimsfd, e->d_name, O_RDONLY, &st);
        if (fd < 0 || scl_holder_read_id(fd, &id) != 0 ||
            grow((void **)&d->procs, &pcap, d->nprocs, sizeof *d->procs) != 0) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        p = &d->procs[d->nprocs];
        /* What it said it was the last time it took a new name: all there
         * is to say of a dead one (the library's note, bounded, or nothing). */
        n = fgetxattr(fd, SCL_COMMAND_XATTR, p->command, sizeof p->command - 1);
        p->command[n > 0 ? n : 0] = '\0';
        close(fd);
        d->nprocs++;
        p->pid = id.pid;
        p->start = id.start;
        p->state = scl_proc_state(&id);
        p->dev = st.st_dev;
        p->ino = st.st_ino;
        p->stopped = 0;
        p->times = NULL;
        p->waiting = NULL;
        if (p->state == SCL_PROC_ALIVE) {
            read_command(p->pid, p->command, sizeof p->command);
            p->stopped = is_stopped(p->pid);
        }
        read_times(topfd, claimsfd, p);
        d->live |= p->state == SCL_PROC_ALIVE;
    }
    close(topfd);
    /* The master made the directory before its first fork: the first member
     * (start times count clock ticks: within one, the parent's pid is lower,
     * but for a wrap of the pid counter). */
    d->master = -1;
    for (size_t i = 0; i < d->nprocs; i++) {
        const struct inv_proc *p = &d->procs[i], *m = d->master >= 0 ? &d->procs[d->master] : NULL;
        if (m == NULL || p->start < m->start || (p->start == m->start && p->pid < m->pid))
            d->master = (int)i;
    }
    d->orphaned = d->live && d->master >= 0 && d->procs[d->master].state != SCL_PROC_ALIVE;
    rewinddir(dir);
    while ((e = readdir(dir)) != NULL) {
        const struct inv_proc *holder;
        struct inv_claim *c;
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(claimsfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            grow((void **)&d->claims, &ccap, d->nclaims, sizeof *d->claims) != 0)
            continue;
        c = &d->claims[d->nclaims++];
        snprintf(c->fname, sizeof c->fname, "%s", e->d_name);
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        c->holder = -1;
        for (size_t i = 0; i < d->nprocs; i++)
            if (d->procs[i].dev == st.st_dev && d->procs[i].ino == st.st_ino)
                c->holder = (int)i;
        holder = c->holder >= 0 ? &d->procs[c->holder] : NULL;
        c->since = holder != NULL && holder->times != NULL ? scl_times_of(holder->times, c->fname) : 0;
        c->name = display_name(claimsfd, holder, c->fname);
    }
    closedir(dir);
    return 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct inv_dir *)a)->path, ((const struct inv_dir *)b)->path);
}

int inv_load(const char *base, struct inv_dir **dirs, size_t *n, size_t *hidden)
{
    DIR *dir = opendir(base);
    struct dirent *e;
    size_t cap = 0;
    uid_t self = geteuid();

    *dirs = NULL;
    *n = 0;
    *hidden = 0;
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
         * others may write is nobody's to trust (tool_select_dir says so). */
        if (st.st_uid != self && (self != 0 || (st.st_mode & 022) != 0)) {
            (*hidden)++;
            continue;
        }
        if (grow((void **)dirs, &cap, *n, sizeof **dirs) != 0)
            continue;
        if (inv_load_dir(path, &(*dirs)[*n]) == 0)
            (*n)++;
    }
    closedir(dir);
    if (*n > 1) /* qsort's array may not be NULL, even empty */
        qsort(*dirs, *n, sizeof **dirs, by_path);
    return 0;
}

struct inv_dir *inv_find_member(struct inv_dir *dirs, size_t n, pid_t pid)
{
    struct inv_dir *was = NULL;

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < dirs[i].nprocs; j++)
            if (dirs[i].procs[j].pid == pid) {
                if (dirs[i].procs[j].state == SCL_PROC_ALIVE)
                    return &dirs[i];
                was = &dirs[i];
            }
    return was;
}

void inv_free_dir(struct inv_dir *d)
{
    for (size_t j = 0; j < d->nprocs; j++) {
        free(d->procs[j].times);
        free(d->procs[j].waiting);
    }
    for (size_t j = 0; j < d->nclaims; j++)
        free(d->claims[j].name);
    free(d->claims);
    free(d->procs);
}

void inv_free(struct inv_dir *dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        inv_free_dir(&dirs[i]);
    free(dirs);
}
