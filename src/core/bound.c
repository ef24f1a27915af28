/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's own signals (nptl's SIGCANCEL and SIGSETXID). */
#define SIGCANCEL_NUMBER 32
#define SIGSETXID_NUMBER 33

struct scl_bound scl_bound = { sysconf, mmap, mprotect, madvise, munmap, syscall, pthread_setcancelstate, faccessat };

uint64_t scl_block_signals(void)
{
    const uint64_t all = ~((1ULL << (SIGCANCEL_NUMBER - 1)) | (1ULL << (SIGSETXID_NUMBER - 1)));
    uint64_t old = 0;

    (void)scl_bound.syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof old);
    return old;
}

void scl_unblock_signals(uint64_t old)
{
    (void)scl_bound.syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
}
