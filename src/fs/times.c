/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "drain.h"
#include "names.h"
#include "sigsafe.h"
#include "times.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct scl_times_page) == 4096, "a page of times is one page");

/* This process's page; PID and GEN say whose, and for which directory:
 * a forked child sees its parent's here (but not mapped: MADV_DONTFORK),
 * and never writes through it. */
static struct {
    struct scl_times_page *_Atomic page;
    _Atomic pid_t pid;
    atomic_uint gen;
    /* The page before: another thread may be writing through it still (it
     * loaded it before the change), so it is unmapped one change later. */
    struct scl_times_page *retired;
} mine;

void scl_times_path(char out[SCL_PID_NAME_MAX], pid_t pid)
{
    char num[24];

    scl_fmt_ull(num, (unsigned long long)pid);
    (void)scl_concat(out, SCL_PID_NAME_MAX, SCL_TIMES_PREFIX, num, (char *)NULL);
}

static struct scl_times_page *page_of(pid_t self)
{
    return atomic_load(&mine.pid) == self ? atomic_load(&mine.page) : NULL;
}

/* Makes and maps the page of SELF: NULL when it cannot be had safely. */
static struct scl_times_page *make_page(int top_fd, pid_t self)
{
    char path[SCL_PID_NAME_MAX];
    struct scl_times_page *page;
    struct stat st;
    int fd;

    /* A file of this pid is an ended process's, or was put there for us:
     * either way not one to use.  Removed, whatever it is, as the name is
     * ours; then made anew, never through a link somebody put back. */
    scl_times_path(path, self);
    if (top_fd < 0 || (unlinkat(top_fd, path, 0) != 0 && errno != ENOENT))
        return NULL;
    fd = scl_openat(top_fd, path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    page = MAP_FAILED;
    /* The checks wake.c makes: nobody else may write (or truncate) it.
     * Allocated whole (sigsafe.h says why), not a blank page written: that
     * would be a page on the stack. */
    if (scl_file_allocate(fd, (off_t)sizeof *page) == 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
        (st.st_mode & 077) == 0 && st.st_size == (off_t)sizeof *page)
        page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    scl_close_quietly(fd);
    if (page == MAP_FAILED)
        return NULL;
    page->realtime_offset = scl_times_realtime_offset();
    page->drain.pid = (int32_t)self;
    /* Last: a reader takes a page without its magic for no page at all. */
    __atomic_store_n(&page->magic, SCL_TIMES_MAGIC, __ATOMIC_RELEASE);
    if (madvise(page, sizeof *page, MADV_DONTFORK) != 0) {
        (void)munmap(page, sizeof *page);
        return NULL;
    }
    return page;
}

int scl_times_tried(pid_t self, unsigned gen)
{
    return atomic_load(&mine.pid) == self && atomic_load(&mine.gen) == gen;
}

void scl_times_map(int top_fd, pid_t self, unsigned gen)
{
    struct scl_times_page *old = page_of(self), *fresh;
    int saved = errno;

    if (scl_times_tried(self, gen))
        return;
    /* Only this process's own pages are unmapped: a parent's was never
     * mapped here (MADV_DONTFORK), and its address may be another's now. */
    if (atomic_load(&mine.pid) != self)
        mine.retired = NULL;
    fresh = make_page(top_fd, self);
    atomic_store(&mine.page, fresh);
    atomic_store(&mine.gen, gen);
    atomic_store(&mine.pid, self);
    if (old != NULL) {
        if (mine.retired != NULL)
            (void)munmap(mine.retired, sizeof *mine.retired);
        mine.retired = old;
    }
    errno = saved;
}

uint64_t scl_times_hash(const char *fname)
{
    uint64_t h = (uint64_t)scl_name_hash(fname);

    return h != 0 ? h : 1; /* 0 is no name */
}

int scl_times_entry(const char *fname, pid_t self, unsigned gen)
{
    struct scl_times_page *page = page_of(self);
    uint64_t h = scl_times_hash(fname);
    uint32_t used;

    if (page == NULL || atomic_load(&mine.gen) != gen)
        return -1;
    used = page->used < SCL_TIMES_SLOTS ? page->used : SCL_TIMES_SLOTS;
    for (uint32_t i = 0; i < used; i++)
        if (page->taken[i].hash == h)
            return (int)i;
    if (used == SCL_TIMES_SLOTS)
        return -1;
    page->taken[used].at = 0;
    __atomic_store_n(&page->taken[used].hash, h, __ATOMIC_RELAXED);
    __atomic_store_n(&page->used, used + 1, __ATOMIC_RELEASE);
    return (int)used;
}

void scl_times_taken(int index, pid_t self, int64_t at)
{
    struct scl_times_page *page = page_of(self);

    if (page != NULL && index >= 0 && index < SCL_TIMES_SLOTS)
        __atomic_store_n(&page->taken[index].at, at, __ATOMIC_RELAXED);
}

void scl_times_waiting(const char *fname, pid_t self)
{
    struct scl_times_page *page = page_of(self);

    if (page == NULL)
        return;
    __atomic_store_n(&page->waiting.hash, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&page->waiting.at, scl_monotonic_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&page->waiting.hash, scl_times_hash(fname), __ATOMIC_RELEASE);
}

void scl_times_done_waiting(const char *fname, pid_t self)
{
    struct scl_times_page *page = page_of(self);
    uint64_t h = scl_times_hash(fname);

    if (page != NULL)
        (void)__atomic_compare_exchange_n(&page->waiting.hash, &h, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void scl_times_forget_wait(pid_t self)
{
    struct scl_times_page *page = page_of(self);

    if (page != NULL)
        __atomic_store_n(&page->waiting.hash, 0, __ATOMIC_RELAXED);
}

unsigned scl_times_drain_told(pid_t self, unsigned found)
{
    struct scl_times_page *page = page_of(self);
    struct scl_times_drain *d;
    uint8_t noted;

    if (page == NULL)
        return 0;
    d = &page->drain;
    noted = __atomic_load_n(&d->by_self, __ATOMIC_RELAXED);
    if ((noted | found) != noted) {
        __atomic_store_n(&d->by_self, (uint8_t)(noted | found), __ATOMIC_RELAXED);
        __atomic_store_n(&d->magic, SCL_DRAIN_MAGIC, __ATOMIC_RELEASE);
    }
    if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) != SCL_DRAIN_MAGIC)
        return 0;
    return (__atomic_load_n(&d->by_master, __ATOMIC_RELAXED) ? SCL_DRAIN_SIGNALLED : 0u) |
           (__atomic_load_n(&d->by_operator, __ATOMIC_RELAXED) ? SCL_DRAIN_OPERATOR : 0u);
}

int scl_times_tell_draining(int top_fd, pid_t pid, enum scl_drain_teller who)
{
    const off_t at = (off_t)offsetof(struct scl_times_page, drain);
    const off_t byte = at + (off_t)(who == SCL_TOLD_BY_MASTER ? offsetof(struct scl_times_drain, by_master)
                                                              : offsetof(struct scl_times_drain, by_operator));
    const uint32_t magic = SCL_DRAIN_MAGIC;
    const uint8_t yes = 1;
    char path[SCL_PID_NAME_MAX];
    uint32_t found;
    int32_t maker;
    struct stat st;
    int fd, r = -1;

    scl_times_path(path, pid);
    /* Regular, never through a link, and checked once open: a worker may
     * put anything in that name, and the writer may be root. */
    fd = scl_open_file_at(top_fd, path, O_RDWR, &st);
    if (fd < 0)
        return -1;
    /* Not another file's link, a page, and PID's: a worker may write the
     * top, and so rename the writer's own page (root's) into its name. */
    if (st.st_nlink != 1 || st.st_size != (off_t)sizeof(struct scl_times_page) ||
        pread(fd, &found, sizeof found, 0) != (ssize_t)sizeof found || found != SCL_TIMES_MAGIC ||
        pread(fd, &maker, sizeof maker, at + (off_t)offsetof(struct scl_times_drain, pid)) != (ssize_t)sizeof maker ||
        maker != (int32_t)pid)
        errno = EINVAL;
    else if (pwrite(fd, &yes, 1, byte) == 1 && pwrite(fd, &magic, sizeof magic, at) == (ssize_t)sizeof magic)
        r = 0;
    scl_close_quietly(fd);
    return r;
}

int scl_times_draining(const struct scl_times_page *page)
{
    const struct scl_times_drain *d = &page->drain;

    return d->magic == SCL_DRAIN_MAGIC && (d->by_master != 0 || d->by_operator != 0 || d->by_self != 0);
}

int scl_times_read(int top_fd, pid_t pid, struct scl_times_page *page)
{
    char path[SCL_PID_NAME_MAX];
    struct stat st;
    ssize_t n;
    int fd;

    scl_times_path(path, pid);
    fd = scl_open_file_at(top_fd, path, O_RDONLY, &st);
    if (fd < 0)
        return -1;
    n = scl_read_full(fd, page, sizeof *page);
    scl_close_quietly(fd);
    return n < 0 ? -1 : scl_times_parse(page, (size_t)n);
}

int scl_times_parse(struct scl_times_page *page, size_t n)
{
    if (n != sizeof *page || page->magic != SCL_TIMES_MAGIC) {
        errno = EINVAL;
        return -1;
    }
    if (page->used > SCL_TIMES_SLOTS) /* written by somebody else: bound it */
        page->used = SCL_TIMES_SLOTS;
    return 0;
}

int64_t scl_times_realtime_offset(void)
{
    struct timespec now;

    (void)clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - scl_monotonic_ns();
}

time_t scl_times_epoch(int64_t at, int64_t realtime_offset)
{
    int64_t t;

    /* Written by somebody else, perhaps: no overflow, no time before 1970. */
    if (at <= 0 || realtime_offset <= 0 || __builtin_add_overflow(at, realtime_offset, &t))
        return 0;
    return (time_t)(t / 1000000000LL);
}

time_t scl_times_when(const struct scl_times_page *page, const struct scl_times_entry *e)
{
    return scl_times_epoch(e->at, page->realtime_offset);
}

int64_t scl_times_taken_at(const struct scl_times_page *page, const char *fname)
{
    uint64_t h = scl_times_hash(fname);

    for (uint32_t i = 0; i < page->used; i++)
        if (page->taken[i].hash == h)
            return page->taken[i].at;
    return 0;
}

time_t scl_times_of(const struct scl_times_page *page, const char *fname)
{
    return scl_times_epoch(scl_times_taken_at(page, fname), page->realtime_offset);
}

static int remove_if_page(const struct dirent64 *d, void *arg)
{
    int top_fd = *(int *)arg;

    if (scl_after_prefix(d->d_name, SCL_TIMES_PREFIX) != NULL)
        (void)unlinkat(top_fd, d->d_name, 0); /* a name only: never followed */
    return 0;
}

void scl_times_remove_left(int top_fd)
{
    (void)scl_each_entry(top_fd, remove_if_page, &top_fd);
}
