#include "config.h"

#include "fork_page.h"
#include "hot.h"
#include "listeners.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#define WORDS (SCL_LISTENER_FDS / 64)

/* The listeners as process OWNER knows them: a process that finds another
 * pid there has them as its parent had them when it forked it. */
static struct {
    _Atomic pid_t owner;
    _Atomic uint64_t listening[WORDS]; /* a bit per listener, by number */
    _Atomic uint64_t inherited[WORDS]; /* of those, the ones the owner inherited */
    atomic_int inherited_open;         /* how many of those are still open */
    _Atomic pid_t closed_all;          /* the owner, once it closed the last */
} known;

/* The highest number that ever was a listener here, or -1: a close above
 * it is none (the host's hot path: a compare). */
SCL_HOT static atomic_int highest = -1;

static uint64_t bit_of(int fd)
{
    return 1ULL << (fd % 64);
}

static int is_set(_Atomic uint64_t *words, int fd)
{
    return (atomic_load(&words[fd / 64]) & bit_of(fd)) != 0;
}

static void raise_highest(int fd)
{
    int top = atomic_load(&highest);

    while (fd > top && !atomic_compare_exchange_weak(&highest, &top, fd))
        ;
}

/* Makes the set this process SELF's: what it inherited is counted as
 * such.  Once per process (a forked child's first write to these pages is
 * here), under scl_lock(), which blocks signals: a handler that closes
 * cannot interrupt it on this thread. */
static void adopt(pid_t self)
{
    int n = 0;

    if (atomic_load(&known.owner) == self)
        return;
    scl_lock();
    if (atomic_load(&known.owner) != self) {
        for (int w = 0; w < WORDS; w++) {
            uint64_t bits = atomic_load(&known.listening[w]);
            atomic_store(&known.inherited[w], bits);
            for (; bits != 0; bits &= bits - 1)
                n++;
        }
        atomic_store(&known.inherited_open, n);
        atomic_store(&known.owner, self);
    }
    scl_unlock();
}

void scl_listeners_listening(int fd)
{
    int saved = errno;

    if (fd < 0 || fd >= SCL_LISTENER_FDS)
        return;
    adopt(getpid());
    atomic_fetch_or(&known.listening[fd / 64], bit_of(fd));
    raise_highest(fd);
    errno = saved;
}

/* Listener FD was closed. */
static void ended(int fd)
{
    pid_t self = getpid();

    adopt(self);
    atomic_fetch_and(&known.listening[fd / 64], ~bit_of(fd));
    if ((atomic_fetch_and(&known.inherited[fd / 64], ~bit_of(fd)) & bit_of(fd)) != 0 &&
        atomic_fetch_sub(&known.inherited_open, 1) == 1)
        atomic_store(&known.closed_all, self);
}

void scl_listeners_closed(unsigned lo, unsigned hi)
{
    int top = atomic_load_explicit(&highest, memory_order_relaxed), saved;

    if (top < 0 || lo > (unsigned)top)
        return;
    if (hi > (unsigned)top)
        hi = (unsigned)top;
    saved = errno;
    for (unsigned fd = lo; fd <= hi; fd++) {
        if (atomic_load(&known.listening[fd / 64]) == 0)
            fd |= 63; /* none in this word */
        else if (is_set(known.listening, (int)fd))
            ended((int)fd);
    }
    errno = saved;
}

void scl_listeners_copied(int from, int to)
{
    int saved = errno;

    if (from < 0 || from > atomic_load(&highest) || to < 0 || to >= SCL_LISTENER_FDS || !is_set(known.listening, from))
        return;
    adopt(getpid());
    atomic_fetch_or(&known.listening[to / 64], bit_of(to));
    /* A copy of an inherited listener is inherited: the master's socket. */
    if (is_set(known.inherited, from) && (atomic_fetch_or(&known.inherited[to / 64], bit_of(to)) & bit_of(to)) == 0)
        atomic_fetch_add(&known.inherited_open, 1);
    raise_highest(to);
    errno = saved;
}

int scl_listeners_all_closed(pid_t self)
{
    return atomic_load(&known.closed_all) == self;
}
