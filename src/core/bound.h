/* SPDX-License-Identifier: MIT */
/*
 * libc functions that hook paths call before they switch to the own stack
 * (own_stack.h), through pointers the dynamic loader fills in as it loads
 * us.  Called through the PLT, the first call of each would bind it
 * lazily, and the resolver saves the whole vector register file on the
 * caller's stack (2.7 KiB on an AVX-512 machine): the host's stack, maybe
 * a small signal stack.  Binding the whole library at load (-z now) would
 * cost every program exec'd under the shim some 30 us.
 */
#ifndef SCL_BOUND_H
#define SCL_BOUND_H

#include <stdint.h>
#include <sys/types.h>

struct scl_bound {
    long (*sysconf)(int);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*mprotect)(void *, size_t, int);
    int (*madvise)(void *, size_t, int);
    int (*munmap)(void *, size_t);
    long (*syscall)(long, ...);
    int (*pthread_setcancelstate)(int, int *);
    int (*faccessat)(int, const char *, int, int);
};

/* Not const: the compiler would call the functions directly again. */
extern struct scl_bound scl_bound;

/* Blocks every signal but the two glibc keeps for itself (as its
 * pthread_sigmask() leaves them open) on this thread, through the bound
 * system call and an 8-byte mask, not sigset_t's 128 bytes: returns the
 * mask to give scl_unblock_signals(). */
uint64_t scl_block_signals(void);
void scl_unblock_signals(uint64_t old);

#endif
