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

/* The whole name of a hashed claim, from its holder's journal line
 * "FNAME\tFULL-ENCODING" (read as the library reads journals: a regular
 * file only, its first SCL_JOURNAL_MAX bytes). */
static char *name_from_journal(int dirfd, const struct inv_proc *p, const char *fname)
{
    char holder[SCL_FNAME_MAX], *journal, *line, *name = NULL;
    size_t flen = strlen(fname);
    struct stat st;
    ssize_t n;
    int fd;

    if (p == NULL)
        return NULL;
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
    for (line = journal; name == NULL && line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (next == NULL)
            break; /* a line without its end is not whole */
        *next++ = '\0';
        if (strncmp(line, fname, flen) == 0 && line[flen] == '\t') {
            size_t cap = strlen(line + flen + 1) + 1;
            name = malloc(cap);
            if (name != NULL && scl_name_decode_full(line + flen + 1, name, cap) < 0) {
                free(name);
                name = NULL;
            }
        }
        line = next;
    }
    free(journal);
    return name;
}

static char *display_name(int dirfd, const struct inv_dir *d, const struct inv_claim *c)
{
    size_t cap = strlen(c->fname) + 1;
    char *name;

    if (scl_name_is_hashed(c->fname)) {
        name = name_from_journal(dirfd, c->holder >= 0 ? &d->procs[c->holder] : NULL, c->fname);
        return name != NULL ? name : strdup(c->fname);
    }
    name = malloc(cap);
    if (name != NULL && scl_name_decode(c->fname, name, cap) < 0)
        strcpy(name, c->fname);
    return name;
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

int inv_load_dir(const char *path, struct inv_dir *d)
{
    size_t pcap = 0, ccap = 0;
    struct dirent *e;
    DIR *dir;
    int topfd, claimsfd;

    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    /* Never through a symlink: root lists directories other users own. */
    topfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (topfd < 0)
        return -1;
    claimsfd = scl_open_dir_at(topfd, SCL_CLAIMS_DIR);
    close(topfd);
    if (claimsfd < 0 || (dir = fdopendir(claimsfd)) == NULL) {
        if (claimsfd >= 0)
            close(claimsfd);
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
        if (p->state == SCL_PROC_ALIVE) {
            read_command(p->pid, p->command, sizeof p->command);
            p->stopped = is_stopped(p->pid);
        }
        d->live |= p->state == SCL_PROC_ALIVE;
    }
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
        struct inv_claim *c;
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(claimsfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            grow((void **)&d->claims, &ccap, d->nclaims, sizeof *d->claims) != 0)
            continue;
        c = &d->claims[d->nclaims++];
        snprintf(c->fname, sizeof c->fname, "%s", e->d_name);
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        c->since = st.st_ctime;
        c->holder = -1;
        for (size_t i = 0; i < d->nprocs; i++)
            if (d->procs[i].dev == st.st_dev && d->procs[i].ino == st.st_ino)
                c->holder = (int)i;
        c->name = display_name(claimsfd, d, c);
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
