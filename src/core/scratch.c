/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "scratch.h"

#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

/* The deepest hook path (the sweep of abandoned directories as a hook
 * makes the claim directory) nests four blocks: this is for four such
 * paths at once. */
#define POOL_BLOCKS 16

_Static_assert(POOL_BLOCKS <= 32, "the bitmap is 32 bits");

/* Not aligned to a page: that would start .bss on a page of its own
 * (tests/packaging/layout.sh).  A block spans two pages, touched once
 * per process. */
static struct {
    _Alignas(64) char blocks[POOL_BLOCKS][SCL_SCRATCH_SIZE];
    _Atomic uint32_t taken;
} pool;

void *scl_scratch_take(void)
{
    uint32_t taken = atomic_load(&pool.taken);
    void *mapped;

    while (taken != UINT32_MAX >> (32 - POOL_BLOCKS)) {
        unsigned i = (unsigned)__builtin_ctz(~taken);
        if (atomic_compare_exchange_weak(&pool.taken, &taken, taken | 1u << i))
            return pool.blocks[i];
    }
    mapped = mmap(NULL, SCL_SCRATCH_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    return mapped;
}

void scl_scratch_give(void *block)
{
    char *b = block;
    int saved = errno;

    char *first = (char *)pool.blocks;

    if (b >= first && b < first + sizeof pool.blocks)
        atomic_fetch_and(&pool.taken, ~(1u << (unsigned)((b - first) / SCL_SCRATCH_SIZE)));
    else if (b != NULL)
        (void)munmap(b, SCL_SCRATCH_SIZE);
    errno = saved;
}
