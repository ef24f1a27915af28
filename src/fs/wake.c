/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "names.h"
#include "proc.h"
#include "sigsafe.h"
#include "wake.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 1024
/* The last slot is not a name's: its seq counts forced releases, and its
 * name says whether users other than the file's owner were let in
 * (OTHERS_LET_IN). */
#define REVOCATIONS   (SLOTS - 1)
#define OTHERS_LET_IN 1u

/* How long a thread that takes a name others wait for may take it again
 * without waking them, and how long it then keeps off it (turns, in
 * wake.h). */
#define TURN_NS  (500 * 1000LL)
#define YIELD_NS (1000 * 1000LL)
/* How long past a turn's end its watcher sleeps. */
#define WATCH_GRACE_NS (100 * 1000LL)

struct slot {
    _Atomic uint32_t seq;       /* bumped by every wake-up: the futex word */
    _Atomic uint32_t waiters;   /* how many sleep on seq */
    _Atomic uint32_t name;      /* whose waiters they are (a fingerprint) */
    _Atomic uint32_t mixed;     /* 1 once two names' waiters met here */
    _Atomic int32_t owner;      /* the thread whose turn it is, 0: nobody's */
    _Atomic int32_t yielder;    /* the thread whose turn ended last */
    _Atomic uint32_t looping;   /* 1: the owner took it again in its turn */
    _Atomic int32_t watcher;    /* the waiter that sleeps until it ends */
    _Atomic int64_t turn_end;   /* monotonic nanoseconds */
    _Atomic int64_t yield_end;  /* until then the yielder keeps off */
    _Atomic int64_t watched;    /* the turn_end a waiter sleeps until */
    _Atomic uint32_t watch_seq; /* the watcher's futex word */
    _Atomic uint32_t in_loops;  /* waiters in event loops (watch.h); a cache line each */
};

_Static_assert(sizeof(struct slot) == 64, "a slot is a cache line");

#define MAP_SIZE (SLOTS * sizeof(struct slot))

static _Atomic(struct slot *) slots;
static atomic_uint mapped_gen;

int scl_wake_create(int top_fd)
{
    int fd, r;

    fd = scl_openat(top_fd, SCL_WAKE_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    r = scl_file_allocate(fd, (off_t)MAP_SIZE);
    scl_close_quietly(fd);
    if (r != 0) {
        int saved = errno;
        (void)unlinkat(top_fd, SCL_WAKE_FILE, 0); /* none, rather than a SIGBUS at the first wait */
        errno = saved;
    }
    return r;
}

int scl_wake_is_mapped(unsigned gen)
{
    return atomic_load(&slots) != NULL && atomic_load(&mapped_gen) == gen;
}

void scl_wake_map(int top_fd, unsigned gen)
{
    struct slot *old = atomic_load(&slots), *fresh;
    struct stat st;
    int fd;

    if (scl_wake_is_mapped(gen))
        return;
    fd = scl_open_file_at(top_fd, SCL_WAKE_FILE, O_RDWR, &st);
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

/* The slot of the name whose file name hashes to HASH (scl_name_hash()),
 * and in *FP (when not NULL) a fingerprint of the name that tells it from
 * the others of its slot (never 0). */
static struct slot *slot_at(size_t hash, uint32_t *fp)
{
    struct slot *s = atomic_load(&slots);

    if (s == NULL)
        return NULL;
    if (fp != NULL)
        *fp = (uint32_t)(hash / REVOCATIONS) | 1u;
    return &s[hash % REVOCATIONS];
}

int scl_wake_revocations(unsigned *count)
{
    struct slot *s = atomic_load(&slots);

    if (s == NULL)
        return -1;
    *count = atomic_load(&s[REVOCATIONS].seq);
    return 0;
}

/* Writes VALUE at byte AT of the wake file of the claim directory TOP_FD,
 * which only its owner maps (another user's process could truncate it
 * under the mapping): 0, or -1 with errno. */
static int write_word(int top_fd, off_t at, uint32_t (*value)(uint32_t was))
{
    struct stat st;
    uint32_t word;
    int fd, r = -1;

    fd = scl_open_file_at(top_fd, SCL_WAKE_FILE, O_RDWR, &st);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1; /* nobody can have it mapped */
    if (st.st_size != (off_t)MAP_SIZE || st.st_nlink != 1) {
        r = 0; /* nobody maps it: another size, or another file's link */
    } else if (pread(fd, &word, sizeof word, at) == (ssize_t)sizeof word) {
        word = value(word);
        r = pwrite(fd, &word, sizeof word, at) == (ssize_t)sizeof word ? 0 : -1;
    }
    scl_close_quietly(fd);
    return r;
}

/* Two forced releases at once may both write the same count: one change
 * is enough. */
static uint32_t bumped(uint32_t was)
{
    return was + 1;
}

static uint32_t let_in(uint32_t was)
{
    return was | OTHERS_LET_IN;
}

int scl_wake_revoke(int top_fd)
{
    return write_word(top_fd, (off_t)(REVOCATIONS * sizeof(struct slot) + offsetof(struct slot, seq)), bumped);
}

int scl_wake_note_others(int top_fd)
{
    return write_word(top_fd, (off_t)(REVOCATIONS * sizeof(struct slot) + offsetof(struct slot, name)), let_in);
}

int scl_wake_watching(size_t hash, int delta)
{
    struct slot *s = slot_at(hash, NULL);

    if (s == NULL)
        return 0;
    atomic_fetch_add(&s->in_loops, (uint32_t)delta);
    return 1;
}

int scl_wake_may_be_watched(size_t hash)
{
    struct slot *s = atomic_load(&slots);

    /* Waiters that cannot map the file cannot count themselves: a
     * release looks for the FIFO whenever they may be there. */
    if (s == NULL || (atomic_load(&s[REVOCATIONS].name) & OTHERS_LET_IN))
        return 1;
    return atomic_load(&s[hash % REVOCATIONS].in_loops) != 0;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *rel)
{
    /* Not FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    return syscall(SYS_futex, (uint32_t *)word, op, val, rel, NULL, 0);
}

/* Bumps WORD and wakes up to N of its sleepers: how many it woke (0 when
 * none sleeps, or on an error). */
static long wake_word(_Atomic uint32_t *word, int n)
{
    int saved = errno;
    long woken;

    atomic_fetch_add(word, 1);
    woken = futex(word, FUTEX_WAKE, (uint32_t)n, NULL);
    errno = saved;
    return woken > 0 ? woken : 0;
}

/* Wakes one waiter, unless two names share the slot: one would not
 * know the wake-up was not its own. */
static long wake_slot(struct slot *s)
{
    return wake_word(&s->seq, atomic_load(&s->mixed) ? INT_MAX : 1);
}

void scl_wake(int claims_fd, const char *fname)
{
    size_t hash = scl_name_hash(fname);
    struct slot *s = slot_at(hash, NULL);
    char watch_name[SCL_WATCH_NAME_MAX];

    /* As a release does: a reaper clearing a dead worker's claims (in the
     * host's wait) hashes and looks for no FIFO nobody may wait on. */
    if (scl_wake_may_be_watched(hash)) {
        scl_watch_name(fname, watch_name);
        scl_watch_notify(claims_fd, watch_name);
    }

    /* The claim was unlinked before this load, and a waiter counts itself
     * in before it tries: either it sees the name free, or we see it. */
    if (s != NULL && atomic_load(&s->waiters) != 0)
        (void)wake_slot(s);
}

/* Wakes the waiter that watched the turn that ended at TURN_END, if one
 * sleeps: 1, else 0. */
static int wake_watcher(struct slot *s, int64_t turn_end)
{
    return atomic_load(&s->watched) == turn_end && atomic_load(&s->watcher) != 0 && wake_word(&s->watch_seq, 1) > 0;
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

/* When the turn ends of a thread other than TID that took name FP again
 * in it (its releases wake nobody then): read once, and checked; 0 when
 * there is no such turn. */
static int64_t others_turn_end(const struct slot *s, uint32_t fp, pid_t tid, int64_t now)
{
    int32_t owner = atomic_load(&s->owner);
    int64_t end;

    if (owner == 0 || owner == tid || !atomic_load(&s->looping) || !turns_for(s, fp))
        return 0;
    end = atomic_load(&s->turn_end);
    return ends_within(end, now, TURN_NS) ? end : 0;
}

/* When thread TID's time off the name ends, after its turn: 0 when it has
 * none. */
static int64_t time_off_end(const struct slot *s, pid_t tid, int64_t now)
{
    int64_t end;

    if (atomic_load(&s->yielder) != tid)
        return 0;
    end = atomic_load(&s->yield_end);
    return ends_within(end, now, YIELD_NS) ? end : 0;
}

/*
 * Gives thread TID's turn up, the turn that ended at TURN_END: a waiter
 * gets the name, not this thread: the one that watched the turn (so the
 * waiters have turns in the order they came to watch), else the first
 * asleep.  1 when it did; 0 when another's turn began meanwhile, or none
 * was asleep to get it (one killed while it waited is counted for good).
 */
static int give_turn_up(struct slot *s, pid_t tid, int64_t now, int64_t turn_end)
{
    int32_t mine = tid;

    if (!atomic_compare_exchange_strong(&s->owner, &mine, 0))
        return 0;
    atomic_store(&s->yield_end, now + YIELD_NS);
    atomic_store(&s->yielder, tid);
    if (wake_watcher(s, turn_end) || wake_slot(s))
        return 1;
    atomic_store(&s->yielder, 0);
    return 0;
}

int scl_wake_may_take(size_t hash, struct scl_turn *t, int waiting)
{
    uint32_t fp, waiters;
    struct slot *s = slot_at(hash, &fp);
    int64_t now, end;
    pid_t tid;

    t->kept_off_until = 0;
    if (s == NULL || (waiters = atomic_load(&s->waiters)) == 0 || !turns_for(s, fp))
        return 1;
    tid = known_tid(&t->tid);
    now = scl_monotonic_ns();
    /* A waiter leaves the name to the thread whose turn it is (its link
     * would only fail, and hold up the directory). */
    if (waiting && (end = others_turn_end(s, fp, tid, now)) != 0) {
        t->kept_off_until = end + WATCH_GRACE_NS;
        return 0;
    }
    if (waiters <= (uint32_t)(waiting != 0))
        return 1; /* nobody else waits */
    /* A thread whose turn ended leaves the name to the others... */
    if ((end = time_off_end(s, tid, now)) != 0) {
        t->kept_off_until = end;
        return 0;
    }
    /* ...also when its last release came within its turn, and woke nobody. */
    if (atomic_load(&s->owner) == tid && atomic_load(&s->looping)) {
        end = atomic_load(&s->turn_end);
        if (end <= now && now - end <= YIELD_NS && give_turn_up(s, tid, now, end)) {
            t->kept_off_until = now + YIELD_NS;
            return 0;
        }
    }
    return 1;
}

void scl_wake_taken(size_t hash, struct scl_turn *t, int waiting)
{
    uint32_t fp, waiters;
    struct slot *s = slot_at(hash, &fp);
    int32_t yielder;
    int64_t now;
    pid_t tid;

    /* Written by the holder alone, once its link made it the holder. */
    if (s == NULL || !turns_for(s, fp))
        return;
    if ((waiters = atomic_load(&s->waiters)) != 0 && (yielder = atomic_load(&s->yielder)) != 0 &&
        yielder != known_tid(&t->tid))
        atomic_store(&s->yielder, 0); /* another has it: the time off ends */
    if (waiters <= (uint32_t)(waiting != 0)) {
        if (atomic_load(&s->owner) != 0)
            atomic_store(&s->owner, 0); /* nobody else waits: no turns */
        return;
    }
    tid = known_tid(&t->tid);
    now = scl_monotonic_ns();
    if (atomic_load(&s->owner) == tid && ends_within(atomic_load(&s->turn_end), now, TURN_NS)) {
        if (!atomic_load(&s->looping))
            atomic_store(&s->looping, 1); /* again within its turn: a loop */
        return;
    }
    atomic_store(&s->looping, 0);
    atomic_store(&s->turn_end, now + TURN_NS);
    atomic_store(&s->owner, tid);
}

void scl_wake_released(size_t hash)
{
    uint32_t fp;
    struct slot *s = slot_at(hash, &fp);
    int64_t now, turn_end;
    pid_t tid = 0;

    if (s == NULL || atomic_load(&s->waiters) == 0)
        return;
    if (!turns_for(s, fp) || atomic_load(&s->owner) != known_tid(&tid)) {
        (void)wake_slot(s);
        return;
    }
    now = scl_monotonic_ns();
    turn_end = atomic_load(&s->turn_end);
    if (ends_within(turn_end, now, TURN_NS)) {
        /* A release in its turn wakes a waiter, as without turns, unless
         * the holder took the name again in it and a waiter already
         * watches the turn (until_turn_ends()): a holder that does not
         * come back at once costs nobody a thing. */
        if (!atomic_load(&s->looping) || atomic_load(&s->watched) != turn_end)
            (void)wake_slot(s);
        return;
    }
    (void)give_turn_up(s, tid, now, turn_end);
}

/* Names that share a slot make it wake all its waiters, and keep no
 * turns, for good (the file lives as long as its server). */
static void note_name(struct slot *s, uint32_t fp)
{
    uint32_t found = atomic_load(&s->name);

    if (found == 0 && atomic_compare_exchange_strong(&s->name, &found, fp))
        return;
    if (found != fp && !atomic_load(&s->mixed))
        atomic_store(&s->mixed, 1);
}

int scl_wake_enter(struct scl_wake_ticket *t, size_t hash, pid_t tid)
{
    struct slot *s = slot_at(hash, &t->fp);

    t->slot = s;
    t->turn.tid = tid;
    t->turn.kept_off_until = 0;
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

    /* What kept the last try off is that try's: a try that does not get
     * as far as asking (a live holder seen again) must not sleep by it,
     * or it would retry at once, again and again, through a long hold. */
    t->turn.kept_off_until = 0;
    if (s != NULL)
        t->seen = atomic_load(&s->seq);
}

/* REL, or less when nobody will wake this waiter sooner: while another
 * thread takes the name again in its turn, its releases wake nobody once
 * one waiter (the first to ask) watches the turn: that one sleeps, on a
 * word of its own that the turn's end wakes, until the turn ends and a
 * little more, in case the holder does not come back.  A thread off the
 * name after its turn sleeps until that ends, unless somebody took the
 * name; one kept off by a turn that has ended since retries at once.
 * *WORD and *EXPECTED: what to sleep on. */
static struct timespec until_turn_ends(struct slot *s, const struct scl_wake_ticket *t, const struct timespec *rel,
                                       _Atomic uint32_t **word, uint32_t *expected)
{
    int64_t now = scl_monotonic_ns(), left = (int64_t)rel->tv_sec * 1000000000LL + rel->tv_nsec, cap = 0;
    int64_t turn_end = others_turn_end(s, t->fp, t->turn.tid, now);

    *word = &s->seq;
    *expected = t->seen;
    if (turn_end != 0) {
        int64_t watched = atomic_load(&s->watched);
        uint32_t watch_seq = atomic_load(&s->watch_seq); /* before the turn's end can bump it */
        if (watched == turn_end ? atomic_load(&s->watcher) == t->turn.tid
                                : atomic_compare_exchange_strong(&s->watched, &watched, turn_end)) {
            atomic_store(&s->watcher, t->turn.tid);
            cap = turn_end + WATCH_GRACE_NS; /* checked: no overflow */
            *word = &s->watch_seq;
            *expected = watch_seq;
        }
    } else {
        if (atomic_load(&s->owner) == 0)
            cap = time_off_end(s, t->turn.tid, now);
        /* What kept its try off (checked then) ended since, or ends soon:
         * nobody wakes it for that. */
        if (cap == 0 && t->turn.kept_off_until != 0)
            cap = t->turn.kept_off_until > now ? t->turn.kept_off_until : now;
    }
    if (cap != 0 && cap - now < left)
        left = cap - now;
    return (struct timespec){ .tv_sec = (time_t)(left / 1000000000LL), .tv_nsec = (long)(left % 1000000000LL) };
}

void scl_wake_sleep(struct scl_wake_ticket *t, const struct timespec *rel)
{
    struct slot *s = t->slot;
    int saved = errno;

    if (s == NULL) {
        (void)nanosleep(rel, NULL);
    } else {
        _Atomic uint32_t *word;
        uint32_t expected;
        struct timespec capped = until_turn_ends(s, t, rel, &word, &expected);
        (void)futex(word, FUTEX_WAIT, expected, &capped); /* returns at once if the word moved */
    }
    errno = saved;
}

void scl_wake_leave(struct scl_wake_ticket *t, int took)
{
    struct slot *s = t->slot;
    int32_t watcher = t->turn.tid;

    if (s == NULL)
        return;
    /* A watcher that leaves gives the turn up: the holder's next release
     * wakes another to watch it. */
    if (atomic_load(&s->watcher) == watcher && atomic_compare_exchange_strong(&s->watcher, &watcher, 0))
        atomic_store(&s->watched, 0);
    if (atomic_fetch_sub(&s->waiters, 1) != 1 && !took)
        (void)wake_slot(s); /* a wake-up it may have had goes on */
    t->slot = NULL;
}
