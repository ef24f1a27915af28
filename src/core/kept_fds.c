/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "hot.h"
#include "kept_fds.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/mman.h>

/* What stands is one word per slot, so that a reader never pairs one
 * check's epoch with another's descriptor: the epoch the check began in,
 * plus one, above the descriptor; 0: nothing. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "a lock would not be async-signal-safe");

struct checks {
    atomic_uint epoch;                 /* bumped by each touch that may void a check */
    atomic_uint running[SCL_KEPT_FDS]; /* checks begun, not ended */
    _Atomic uint64_t standing[SCL_KEPT_FDS];
};

SCL_HOT static atomic_int watched;
/* The number each slot keeps, watched from before its check began. */
SCL_HOT static atomic_int number[SCL_KEPT_FDS] = { -1, -1 };
SCL_HOT atomic_int scl_kept_fds_lowest = INT_MAX;
/* A MADV_WIPEONFORK page (scl_kept_fds_prepare()); NULL: none yet. */
SCL_HOT static _Atomic(struct checks *) checks;

void scl_kept_fds_watched(void)
{
    atomic_store(&watched, 1);
}

void scl_kept_fds_prepare(void)
{
    /* The kernel rounds the size up to its page. */
    const size_t size = sizeof(struct checks);
    struct checks *page, *expected = NULL;
    int saved = errno;

    if (atomic_load(&checks) != NULL)
        return;
    /* Bound at load: a reap may get here on the host's stack. */
    page = scl_bound.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED && scl_bound.madvise(page, size, MADV_WIPEONFORK) != 0) {
        (void)scl_bound.munmap(page, size);
        page = MAP_FAILED;
    }
    if (page != MAP_FAILED && !atomic_compare_exchange_strong(&checks, &expected, page))
        (void)scl_bound.munmap(page, size); /* another thread mapped one first */
    errno = saved;                          /* no page: every use is checked */
}

unsigned scl_kept_fd_check_begins(enum scl_kept_fd slot, int fd)
{
    struct checks *c = atomic_load(&checks);

    if (c == NULL)
        return 0;
    /* The number and the running check first: a touch after this either
     * comes after the ticket is read below (and voids it) or before the
     * check looks (which then finds the host's file, or none). */
    if (fd >= 0 && fd < atomic_load(&scl_kept_fds_lowest)) /* -1 (none yet) would silence every touch */
        atomic_store(&scl_kept_fds_lowest, fd);
    if (atomic_load(&number[slot]) != fd)
        atomic_store(&number[slot], fd);
    atomic_fetch_add(&c->running[slot], 1);
    return atomic_load(&c->epoch);
}

void scl_kept_fd_check_ends(enum scl_kept_fd slot, int fd, unsigned ticket, int ours)
{
    struct checks *c = atomic_load(&checks);

    /* None running here: it began in the parent of this forked child,
     * whose page is blank.  It counts for nothing. */
    if (c == NULL || atomic_load(&c->running[slot]) == 0)
        return;
    if (ours) {
        uint64_t word = ((uint64_t)ticket + 1) << 32 | (uint32_t)fd;
        if (atomic_load(&c->standing[slot]) != word)
            atomic_store(&c->standing[slot], word);
    } else {
        /* Not ours: no check that began before this one stands either. */
        atomic_store(&c->standing[slot], 0);
        atomic_fetch_add(&c->epoch, 1);
    }
    /* Last: a touch that finds none running finds what this stored. */
    atomic_fetch_sub(&c->running[slot], 1);
}

int scl_kept_fd_trusted(enum scl_kept_fd slot)
{
    struct checks *c = atomic_load(&checks);
    uint64_t word;
    int fd;

    if (c == NULL || !atomic_load_explicit(&watched, memory_order_relaxed))
        return -1;
    word = atomic_load(&c->standing[slot]);
    fd = (int)(uint32_t)word;
    if (word == 0 || (uint32_t)(word >> 32) != (uint32_t)(atomic_load(&c->epoch) + 1) ||
        fd != atomic_load(&number[slot]))
        return -1;
    return fd;
}

static int within(int fd, unsigned lo, unsigned hi)
{
    return fd >= 0 && (unsigned)fd >= lo && (unsigned)fd <= hi;
}

void scl_kept_fds_touched_any(unsigned lo, unsigned hi)
{
    struct checks *c;

    /* Only what stands, or is being checked, needs voiding: a forked
     * child, whose page is blank, writes nothing. */
    if ((c = atomic_load(&checks)) == NULL)
        return;
    for (int i = 0; i < SCL_KEPT_FDS; i++) {
        /* Running first: a check that ended before this load stored its
         * word before, and the load below sees it. */
        unsigned running = atomic_load(&c->running[i]);
        uint64_t word = atomic_load(&c->standing[i]);
        if ((running == 0 && word == 0) ||
            !(within(atomic_load(&number[i]), lo, hi) || (word != 0 && within((int)(uint32_t)word, lo, hi))))
            continue;
        atomic_fetch_add(&c->epoch, 1);
        atomic_store(&c->standing[i], 0); /* void, and touched again at no cost */
    }
}
