#include "config.h"

#include "names.h"
#include "proc.h"
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

/* How long a thread that takes a name others wait for may take it again
 * without waking them, and how long it then keeps off it (turns, in
 * wake.h). */
#define TURN_NS  (500 * 1000LL)
#define YIELD_NS (1000 * 1000LL)
/* How long past a turn's end its watcher sleeps. */
#define WATCH_GRACE_NS (100 * 1000LL)

struct slot {
    _Atomic uint32_t seq;      /* bumped by every wake-up: the futex word */
    _Atomic uint32_t waiters;  /* how many sleep on seq */
    _Atomic uint32_t name;     /* whose waiters they are (a fingerprint) */
    _Atomic uint32_t mixed;    /* 1 once two names' waiters met here */
    _Atomic int32_t owner;     /* the thread whose turn it is, 0: nobody's */
    _Atomic int32_t yielder;   /* the thread whose turn ended last */
    _Atomic uint32_t looping;  /* 1: the owner took it again in its turn */
    _Atomic int32_t watcher;   /* the waiter that sleeps until it ends */
    _Atomic int64_t turn_end;  /* monotonic nanoseconds */
    _Atomic int64_t yield_end; /* until then the yielder keeps off */
    _Atomic int64_t watched;   /* the turn_end a waiter sleeps until */
    char pad[8];               /* a cache line each */
};

_Static_assert(sizeof(struct slot) == 64, "a slot is a cache line");

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

/* FNAME's slot, and in *FP (when not NULL) a fingerprint of the name
 * that tells it from the others of its slot (never 0). */
static struct slot *slot_of_name(const char *fname, uint32_t *fp)
{
    struct slot *s = atomic_load(&slots);
    size_t hash;

    if (s == NULL)
        return NULL;
    hash = scl_name_hash(fname);
    if (fp != NULL)
        *fp = (uint32_t)(hash / REVOCATIONS) | 1u;
    return &s[hash % REVOCATIONS];
}

static struct slot *slot_of(const char *fname)
{
    return slot_of_name(fname, NULL);
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

/* Wakes one waiter, unless two names share the slot: one would not
 * know the wake-up was not its own.  How many it woke (0 when none
 * sleeps, or on an error). */
static long wake_slot(struct slot *s)
{
    int saved = errno;
    long woken;

    atomic_fetch_add(&s->seq, 1);
    woken = futex(&s->seq, FUTEX_WAKE, atomic_load(&s->mixed) ? INT_MAX : 1, NULL);
    errno = saved;
    return woken > 0 ? woken : 0;
}

void scl_wake(const char *fname)
{
    struct slot *s = slot_of(fname);

    /* The claim was unlinked before this load, and a waiter counts itself
     * in before it tries: either it sees the name free, or we see it. */
    if (s != NULL && atomic_load(&s->waiters) != 0)
        (void)wake_slot(s);
}

/* *TID, asked the first time it is needed: a name nobody else waits for
 * never needs it. */
static pid_t known_tid(pid_t *tid)
{
    if (*tid == 0)
        *tid = scl_proc_self_tid();
    return *tid;
}

/* 1 when END is after NOW, and no further off than LENGTH: a time any
 * process of the user may have written (a worker of the server), never
 * trusted to keep anybody off a name for longer than a turn does. */
static int ends_within(int64_t end, int64_t now, int64_t length)
{
    return now < end && end - now <= length;
}

/* Turns are kept in a slot only while its waiters are all one name's,
 * name FP's: they are the slot's, not a name's. */
static int turns_for(const struct slot *s, uint32_t fp)
{
    return atomic_load(&s->name) == fp && !atomic_load(&s->mixed);
}

/* 1 while a thread other than TID has a turn it takes the name FP again
 * in (its releases wake nobody then). */
static int others_turn(const struct slot *s, uint32_t fp, pid_t tid, int64_t now)
{
    int32_t owner = atomic_load(&s->owner);

    return owner != 0 && owner != tid && atomic_load(&s->looping) &&
           ends_within(atomic_load(&s->turn_end), now, TURN_NS) && turns_for(s, fp);
}

/* 1 when the yielder's time off the name goes on for thread TID. */
static int keeps_off(const struct slot *s, pid_t tid, int64_t now)
{
    return atomic_load(&s->yielder) == tid && ends_within(atomic_load(&s->yield_end), now, YIELD_NS);
}

int scl_wake_turn_take(const char *fname, pid_t *tid_known, int waiting)
{
    uint32_t fp, waiters;
    struct slot *s = slot_of_name(fname, &fp);
    int64_t now;
    pid_t tid;

    if (s == NULL)
        return 0;
    if ((waiters = atomic_load(&s->waiters)) == 0) {
        if (atomic_load(&s->owner) != 0)
            atomic_store(&s->owner, 0); /* nobody waits: no turns */
        return 0;
    }
    if (!turns_for(s, fp))
        return 0;
    tid = known_tid(tid_known);
    now = scl_monotonic_ns();
    /* A waiter leaves the name to the thread whose turn it is (its link
     * would only fail, and hold up the directory). */
    if (waiting && others_turn(s, fp, tid, now))
        return -1;
    if (waiters <= (uint32_t)(waiting != 0))
        return 0; /* nobody else waits: no turn to begin */
    /* A thread whose turn ended leaves it to the others. */
    if (keeps_off(s, tid, now))
        return -1;
    if (atomic_load(&s->owner) == tid && ends_within(atomic_load(&s->turn_end), now, TURN_NS)) {
        if (!atomic_load(&s->looping))
            atomic_store(&s->looping, 1); /* back within its turn: a loop */
        return 0;
    }
    /* Announced before the link: a waiter that finds the name taken
     * after this reads how long to sleep. */
    atomic_store(&s->looping, 0);
    atomic_store(&s->turn_end, now + TURN_NS);
    atomic_store(&s->owner, tid);
    return 1;
}

void scl_wake_turn_undo(const char *fname, pid_t tid)
{
    struct slot *s = slot_of(fname);
    int32_t mine = tid;

    if (s != NULL)
        atomic_compare_exchange_strong(&s->owner, &mine, 0);
}

void scl_wake_released(const char *fname)
{
    uint32_t fp;
    struct slot *s = slot_of_name(fname, &fp);
    int64_t now;
    pid_t tid = 0;

    if (s == NULL || atomic_load(&s->waiters) == 0)
        return;
    if (atomic_load(&s->owner) != known_tid(&tid) || !turns_for(s, fp)) {
        (void)wake_slot(s);
        return;
    }
    now = scl_monotonic_ns();
    if (ends_within(atomic_load(&s->turn_end), now, TURN_NS)) {
        /* Its first release wakes a waiter, as without turns: a holder
         * that does not take the name again at once costs nobody a
         * thing.  Once it has, the watcher (until_turn_ends()) sleeps
         * until the turn ends. */
        if (!atomic_load(&s->looping))
            (void)wake_slot(s);
        return;
    }
    /* The turn is over: a waiter gets the name, not this thread, unless
     * none was asleep to get it (one killed while it waited is counted
     * for good). */
    atomic_store(&s->owner, 0);
    atomic_store(&s->yield_end, now + YIELD_NS);
    atomic_store(&s->yielder, tid);
    if (wake_slot(s) == 0)
        atomic_store(&s->yielder, 0);
}

/* Names that share a slot make it wake all its waiters, and keep no
 * turns, for good. */
static void note_name(struct slot *s, uint32_t fp)
{
    uint32_t found = 0;

    if (!atomic_compare_exchange_strong(&s->name, &found, fp) && found != fp && !atomic_load(&s->mixed))
        atomic_store(&s->mixed, 1);
}

int scl_wake_enter(struct scl_wake_ticket *t, const char *fname, pid_t tid)
{
    struct slot *s = slot_of_name(fname, &t->fp);

    t->slot = s;
    t->tid = tid;
    if (s == NULL)
        return -1;
    note_name(s, t->fp);
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

/* REL, or less when nobody will wake this waiter sooner: once another
 * thread has taken the name again in its turn, its releases wake nobody,
 * so one waiter (the first to ask: the one its first release woke, which
 * found it taken again) sleeps until the turn ends, in case the holder
 * does not come back; the yielder sleeps until its time off the name
 * ends, unless somebody took the name. */
static struct timespec until_turn_ends(struct slot *s, uint32_t fp, pid_t tid, const struct timespec *rel)
{
    int64_t now = scl_monotonic_ns(), left = (int64_t)rel->tv_sec * 1000000000LL + rel->tv_nsec, end = 0;

    if (others_turn(s, fp, tid, now)) {
        int64_t turn_end = atomic_load(&s->turn_end), watched = atomic_load(&s->watched);
        /* A little past the end: a holder still at it has given the name
         * to the first waiter by then, whose turn this one then keeps
         * off; one that stopped leaves it to this one. */
        if (watched == turn_end ? atomic_load(&s->watcher) == tid
                                : atomic_compare_exchange_strong(&s->watched, &watched, turn_end)) {
            atomic_store(&s->watcher, tid);
            end = turn_end + WATCH_GRACE_NS;
        }
    } else if (keeps_off(s, tid, now) && atomic_load(&s->owner) == 0) {
        end = atomic_load(&s->yield_end); /* nobody took it yet */
    }
    if (end > now && end - now < left)
        left = end - now;
    return (struct timespec){ .tv_sec = (time_t)(left / 1000000000LL), .tv_nsec = (long)(left % 1000000000LL) };
}

void scl_wake_sleep(struct scl_wake_ticket *t, const struct timespec *rel)
{
    struct slot *s = t->slot;
    int saved = errno;

    if (s == NULL) {
        (void)nanosleep(rel, NULL);
    } else {
        struct timespec capped = until_turn_ends(s, t->fp, t->tid, rel);
        (void)futex(&s->seq, FUTEX_WAIT, t->seen, &capped); /* returns at once if seq moved */
    }
    errno = saved;
}

void scl_wake_leave(struct scl_wake_ticket *t, int took)
{
    struct slot *s = t->slot;

    if (s == NULL)
        return;
    atomic_fetch_sub(&s->waiters, 1);
    /* A wake-up this waiter may have had goes on to another. */
    if (!took && atomic_load(&s->seq) != t->seen && atomic_load(&s->waiters) != 0)
        (void)wake_slot(s);
    t->slot = NULL;
}
