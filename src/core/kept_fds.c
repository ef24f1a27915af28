#include "config.h"

#include "hot.h"
#include "kept_fds.h"

#include <stdatomic.h>
#include <stdint.h>

SCL_HOT static atomic_int watched;
/* Bumped after each touch of a watched number. */
SCL_HOT static atomic_uint epoch;
/* The number each slot keeps, watched from before its check began. */
SCL_HOT static atomic_int number[SCL_KEPT_FDS] = { -1, -1 };
/* The last check that found a slot's descriptor ours: the epoch it began
 * in, plus one, above the descriptor; one word, so that a reader never
 * pairs one check's epoch with another's descriptor.  0: none. */
SCL_HOT static _Atomic uint64_t standing[SCL_KEPT_FDS];

void scl_kept_fds_watched(void)
{
    atomic_store(&watched, 1);
}

unsigned scl_kept_fd_checking(enum scl_kept_fd slot, int fd)
{
    /* The number first: a touch after this either comes after the check's
     * epoch is read below (and voids the check) or before the check looks
     * (which then finds the host's file, or none). */
    if (atomic_load(&number[slot]) != fd)
        atomic_store(&number[slot], fd);
    return atomic_load(&epoch);
}

void scl_kept_fd_checked(enum scl_kept_fd slot, int fd, unsigned ticket)
{
    uint64_t word = ((uint64_t)ticket + 1) << 32 | (uint32_t)fd;

    if (atomic_load(&standing[slot]) != word)
        atomic_store(&standing[slot], word);
}

int scl_kept_fd_trusted(enum scl_kept_fd slot)
{
    uint64_t word;

    if (!atomic_load_explicit(&watched, memory_order_relaxed))
        return -1;
    word = atomic_load(&standing[slot]);
    if (word == 0 || (uint32_t)(word >> 32) != (uint32_t)(atomic_load(&epoch) + 1))
        return -1;
    return (int)(uint32_t)word;
}

void scl_kept_fds_touched(unsigned lo, unsigned hi)
{
    for (int i = 0; i < SCL_KEPT_FDS; i++) {
        int fd = atomic_load(&number[i]);
        if (fd >= 0 && (unsigned)fd >= lo && (unsigned)fd <= hi) {
            atomic_fetch_add(&epoch, 1);
            return;
        }
    }
}
