/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "fork_page.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

struct scl_fork_page scl_fork_page __attribute__((aligned(64)));

_Static_assert(sizeof(struct scl_fork_page) <= 4096, "the fork page is a page long");

/* initial-exec: a preloaded library has static TLS, and the general model
 * may call malloc on first access, which a signal path must not. */
static __thread uint64_t saved_mask __attribute__((tls_model("initial-exec")));

/* Through scl_bound, as the mask is: the lock is taken on the host's
 * stack too (the fork hook's reservation), where nothing binds lazily. */
static void futex(uint32_t op, uint32_t val)
{
    (void)scl_bound.syscall(SYS_futex, (uint32_t *)&scl_fork_page.lock, op, val, NULL, NULL, 0);
}

/* Drepper's "Futexes are tricky", mutex 2. */
void scl_lock(void)
{
    uint64_t old = scl_block_signals();
    uint32_t c = 0;

    saved_mask = old;
    if (atomic_compare_exchange_strong(&scl_fork_page.lock, &c, 1))
        return;
    if (c != 2)
        c = atomic_exchange(&scl_fork_page.lock, 2);
    while (c != 0) {
        futex(FUTEX_WAIT_PRIVATE, 2);
        c = atomic_exchange(&scl_fork_page.lock, 2);
    }
}

void scl_unlock(void)
{
    if (atomic_fetch_sub(&scl_fork_page.lock, 1) != 1) {
        atomic_store(&scl_fork_page.lock, 0);
        futex(FUTEX_WAKE_PRIVATE, 1);
    }
    scl_unblock_signals(saved_mask);
}

void scl_lock_reset_in_child(void)
{
    if (atomic_load(&scl_fork_page.lock) != 0)
        atomic_store(&scl_fork_page.lock, 0);
}
