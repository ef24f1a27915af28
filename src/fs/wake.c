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
    /* Whose turn it is (wake.h): a waiter that has waited a whole retry
     * period asks until TURN_UNTIL (the monotonic clock in ms, wrapping;
     * 0: nobody), for the name of TURN_HASH (slots are shared by names);
     * TURN is when it began waiting (ms) above its pid, so that the
     * waiter that began first has it. */
    _Atomic uint32_t turn_until;
    _Atomic uint32_t turn_hash;
    _Atomic uint64_t turn;
    _Atomic uint32_t releases; /* releases that woke nobody (a loop's) */
    uint32_t unused;
};

#define MAP_SIZE (SLOTS * sizeof(struct slot))

/* How long an asked turn lasts without being asked again. */
#define TURN_HELD_NS (40 * 1000 * 1000LL)

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

/* FUTEX_WAIT_BITSET or FUTEX_WAKE_BITSET on WORD, for the waiters of
 * BITS: a waiter sleeps under the bit of its pid, so that a turn wakes
 * its waiter alone.  Not FUTEX_PRIVATE_FLAG: the word is shared between
 * processes. */
static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *deadline, uint32_t bits)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, deadline, NULL, bits);
}

static uint32_t pid_bit(pid_t pid)
{
    return 1u << ((uint32_t)pid % 32);
}

/* Wakes the waiters of FNAME's slot: those under the bit of the waiter
 * whose turn it is when TURN_ONLY, else all. */
static void wake_bits(const char *fname, int turn_only)
{
    struct slot *s = slot_of(fname);
    int saved = errno;

    /* The claim was unlinked before this load, and a waiter counts itself
     * in before it tries: either it sees the name free, or we see it. */
    if (s == NULL || atomic_load(&s->waiters) == 0)
        return;
    atomic_fetch_add(&s->seq, 1);
    (void)futex(&s->seq, FUTEX_WAKE_BITSET, INT_MAX, NULL,
                turn_only ? pid_bit((pid_t)(uint32_t)atomic_load(&s->turn)) : FUTEX_BITSET_MATCH_ANY);
    errno = saved;
}

void scl_wake(const char *fname)
{
    wake_bits(fname, 0);
}

void scl_wake_turn_holder(const char *fname)
{
    wake_bits(fname, 1);
}

static uint32_t clock_ms(int64_t ns)
{
    uint32_t ms = (uint32_t)(ns / 1000000);

    return ms != 0 ? ms : 1; /* 0 is nobody */
}

/* The slot of FNAME when a turn is asked there for FNAME at NOW, else
 * NULL. */
static struct slot *turn_slot(const char *fname, int64_t now)
{
    struct slot *s = slot_of(fname);
    uint32_t until;

    if (s == NULL || atomic_load_explicit(&s->waiters, memory_order_relaxed) == 0)
        return NULL;
    until = atomic_load(&s->turn_until);
    if (until == 0 || (int32_t)(until - clock_ms(now)) <= 0 ||
        atomic_load(&s->turn_hash) != (uint32_t)scl_name_hash(fname))
        return NULL;
    return s;
}

void scl_wake_count_release(const char *fname)
{
    struct slot *s = slot_of(fname);

    if (s != NULL && atomic_load_explicit(&s->waiters, memory_order_relaxed) != 0)
        atomic_fetch_add_explicit(&s->releases, 1, memory_order_relaxed);
}

unsigned scl_wake_releases(const struct scl_wake_ticket *t)
{
    const struct slot *s = t->slot;

    return s == NULL ? 0 : atomic_load_explicit(&s->releases, memory_order_relaxed);
}

enum scl_turn scl_wake_turn(const char *fname, pid_t self, int64_t now)
{
    struct slot *s = turn_slot(fname, now);

    if (s == NULL)
        return SCL_TURN_NOBODYS;
    return (pid_t)(uint32_t)atomic_load(&s->turn) == self ? SCL_TURN_MINE : SCL_TURN_ANOTHERS;
}

void scl_wake_ask_turn(struct scl_wake_ticket *t, const char *fname, pid_t self, int64_t since, int64_t now)
{
    struct slot *s = t->slot;
    uint64_t mine = (uint64_t)clock_ms(since) << 32 | (uint32_t)self, theirs;

    if (s == NULL)
        return;
    if (turn_slot(fname, now) != NULL) {
        /* Asked already: it stays with whoever began waiting first. */
        theirs = atomic_load(&s->turn);
        while ((uint32_t)theirs != (uint32_t)self && (int32_t)((uint32_t)(theirs >> 32) - (uint32_t)(mine >> 32)) > 0)
            if (atomic_compare_exchange_weak(&s->turn, &theirs, mine))
                break;
        if ((uint32_t)atomic_load(&s->turn) != (uint32_t)self)
            return;
    } else {
        atomic_store(&s->turn, mine);
        atomic_store(&s->turn_hash, (uint32_t)scl_name_hash(fname));
    }
    /* Ours until two retry periods pass without our asking again (a
     * waiter that died leaves it so). */
    atomic_store(&s->turn_until, clock_ms(now + TURN_HELD_NS));
}

void scl_wake_turn_taken(struct scl_wake_ticket *t, pid_t self)
{
    struct slot *s = t->slot;

    if (s != NULL && (uint32_t)atomic_load(&s->turn) == (uint32_t)self)
        atomic_store(&s->turn_until, 0);
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

void scl_wake_sleep(struct scl_wake_ticket *t, pid_t self, const struct timespec *rel)
{
    struct slot *s = t->slot;
    struct timespec until;
    int saved = errno;

    if (s == NULL) {
        (void)nanosleep(rel, NULL);
    } else {
        /* FUTEX_WAIT_BITSET takes a deadline on the monotonic clock. */
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += rel->tv_sec;
        until.tv_nsec += rel->tv_nsec;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        (void)futex(&s->seq, FUTEX_WAIT_BITSET, t->seen, &until, pid_bit(self)); /* at once if seq moved */
    }
    errno = saved;
}

void scl_wake_leave(struct scl_wake_ticket *t)
{
    struct slot *s = t->slot;

    if (s != NULL)
        atomic_fetch_sub(&s->waiters, 1);
    t->slot = NULL;
}
