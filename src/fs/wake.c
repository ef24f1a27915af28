#include "config.h"

#include "names.h"
#include "sigsafe.h"
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 1024
/* The last slot's counter is not a name's: it counts forced releases. */
#define REVOCATIONS (SLOTS - 1)

struct slot {
    _Atomic uint32_t seq;     /* bumped by every wake-up: the futex word */
    _Atomic uint32_t waiters; /* how many sleep on seq */
};

#define MAP_SIZE (SLOTS * sizeof(struct slot))

static _Atomic(struct slot *) slots;
static atomic_uint mapped_gen;

int scl_wake_create(int topfd)
{
    int fd, r;

    fd = scl_openat(topfd, SCL_WAKE_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    r = ftruncate(fd, (off_t)MAP_SIZE);
    scl_close_quietly(fd);
    return r;
}

int scl_wake_is_mapped(unsigned gen)
{
    return atomic_load(&slots) != NULL && atomic_load(&mapped_gen) == gen;
}

void scl_wake_map(int topfd, unsigned gen)
{
    struct slot *old = atomic_load(&slots), *fresh;
    struct stat st;
    int fd;

    if (scl_wake_is_mapped(gen))
        return;
    fd = scl_open_file_at(topfd, SCL_WAKE_FILE, O_RDWR, &st);
    if (fd < 0)
        return;
    /* Mapped only when nobody else can write it (truncated under a
     * mapping, it would kill this process with SIGBUS at its next wake-up),
     * and only when it has no other name (a hard link to another file put
     * in its place would be written to). */
    if (st.st_size != (off_t)MAP_SIZE || st.st_uid != geteuid() || (st.st_mode & 077) != 0 || st.st_nlink != 1) {
        scl_close_quietly(fd);
        return;
    }
    fresh = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    scl_close_quietly(fd); /* the mapping is all we keep */
    if (fresh == MAP_FAILED)
        return;
    atomic_store(&mapped_gen, gen);
    atomic_store(&slots, fresh);
    if (old != NULL)
        (void)munmap(old, MAP_SIZE); /* a directory this process no longer uses */
}

static struct slot *slot_of(const char *fname)
{
    struct slot *s = atomic_load(&slots);

    return s == NULL ? NULL : &s[scl_name_hash(fname) % REVOCATIONS];
}

int scl_wake_revocations(unsigned *count)
{
    struct slot *s = atomic_load(&slots);

    if (s == NULL)
        return -1;
    *count = atomic_load(&s[REVOCATIONS].seq);
    return 0;
}

int scl_wake_revoke(int topfd)
{
    const off_t at = (off_t)(REVOCATIONS * sizeof(struct slot));
    struct stat st;
    uint32_t count;
    int fd, r = -1;

    fd = scl_open_file_at(topfd, SCL_WAKE_FILE, O_RDWR, &st);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1; /* nobody can have it mapped */
    if (st.st_size != (off_t)MAP_SIZE || st.st_nlink != 1) {
        r = 0; /* nobody maps it: another size, or another file's link */
    } else if (pread(fd, &count, sizeof count, at) == (ssize_t)sizeof count) {
        /* Written, not mapped: the file is not the caller's to map (its
         * owner could truncate it under the mapping).  Two forced releases
         * at once may both write the same count: one change is enough. */
        count++;
        r = pwrite(fd, &count, sizeof count, at) == (ssize_t)sizeof count ? 0 : -1;
    }
    scl_close_quietly(fd);
    return r;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *rel)
{
    /* Not FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    return syscall(SYS_futex, (uint32_t *)word, op, val, rel, NULL, 0);
}

void scl_wake(const char *fname)
{
    struct slot *s = slot_of(fname);
    int saved = errno;

    /* The claim was unlinked before this load, and a waiter counts itself
     * in before it tries: either it sees the name free, or we see it. */
    if (s == NULL || atomic_load(&s->waiters) == 0)
        return;
    atomic_fetch_add(&s->seq, 1);
    (void)futex(&s->seq, FUTEX_WAKE, INT_MAX, NULL);
    errno = saved;
}

int scl_wake_enter(struct scl_wake_ticket *t, const char *fname)
{
    struct slot *s = slot_of(fname);

    t->slot = s;
    if (s == NULL)
        return -1;
    atomic_fetch_add(&s->waiters, 1);
    t->seen = atomic_load(&s->seq);
    return 0;
}

void scl_wake_arm(struct scl_wake_ticket *t)
{
    struct slot *s = t->slot;

    if (s != NULL)
        t->seen = atomic_load(&s->seq);
}

void scl_wake_sleep(struct scl_wake_ticket *t, const struct timespec *rel)
{
    struct slot *s = t->slot;
    int saved = errno;

    if (s == NULL)
        (void)nanosleep(rel, NULL);
    else
        (void)futex(&s->seq, FUTEX_WAIT, t->seen, rel); /* returns at once if seq moved */
    errno = saved;
}

void scl_wake_leave(struct scl_wake_ticket *t)
{
    struct slot *s = t->slot;

    if (s != NULL)
        atomic_fetch_sub(&s->waiters, 1);
    t->slot = NULL;
}
