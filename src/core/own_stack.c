/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "bound.h"
#include "own_stack.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* The deepest path (a hook that makes the directory, sweeping abandoned
 * ones first) takes under 8 KiB; more is headroom.  A guard page below
 * it. */
#define OWN_STACK_SIZE (64 * 1024)

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(__SANITIZE_ADDRESS__)

/* The registers a call may change beyond the baseline's, when the
 * compiler may keep values in them. */
#if defined(__AVX512F__)
#define AVX512_CLOBBERS                                                                                                \
    , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27",      \
        "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#else
#define AVX512_CLOBBERS
#endif

/* Calls FN(ARG) with the stack pointer at TOP (16-byte aligned). */
static void call_at(char *top, void (*fn)(void *), void *arg)
{
#if defined(__x86_64__)
    register void *rdi __asm__("rdi") = arg;
    __asm__ volatile("mov %%rsp, %%rbx\n\t"
                     "mov %[top], %%rsp\n\t"
                     "call *%[fn]\n\t"
                     "mov %%rbx, %%rsp"
                     : "+r"(rdi)
                     : [top] "r"(top), [fn] "r"(fn)
                     : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
                       "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
                       "xmm15", "memory", "cc" AVX512_CLOBBERS);
#else
    register void *x0 __asm__("x0") = arg;
    __asm__ volatile("mov x19, sp\n\t"
                     "mov sp, %[top]\n\t"
                     "blr %[fn]\n\t"
                     "mov sp, x19"
                     : "+r"(x0)
                     : [top] "r"(top), [fn] "r"(fn)
                     : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
                       "x16", "x17", "x18", "x19", "x30", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9",
                       "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
                       "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc");
#endif
}

/*
 * The mapping: a guard page, the stack, and above it a page of its own
 * state.  All of it MADV_WIPEONFORK: a forked child has it too, but blank
 * (its own, at no copy-on-write cost to the parent), so it finds nobody on
 * it and nobody's stamp; a vfork child shares the parent's, stamped with
 * the parent's pid, and leaves it alone (a thread of the parent may be on
 * it).  The pointer to it is set once, by the process that maps it.
 */
struct own_state {
    _Atomic pid_t stamp; /* the process whose stack it is, or 0 */
    _Atomic pid_t user;  /* that process, while a thread of it is on it */
};

static _Atomic(char *) own_top; /* the stack's top; its state right above */

/* Set when the kernel would not map one (MADV_WIPEONFORK is Linux 4.14):
 * the work then runs where it is, without a mapping tried per call. */
static atomic_int own_unavailable;

static char *map_once(void)
{
    size_t page = (size_t)scl_bound.sysconf(_SC_PAGESIZE), size = page + OWN_STACK_SIZE + page;
    char *expected = NULL,
         *map = scl_bound.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (map == MAP_FAILED) {
        atomic_store(&own_unavailable, 1);
        return NULL;
    }
    if (scl_bound.mprotect(map, page, PROT_NONE) != 0 || scl_bound.madvise(map, size, MADV_WIPEONFORK) != 0) {
        (void)scl_bound.munmap(map, size);
        atomic_store(&own_unavailable, 1);
        return NULL;
    }
    if (!atomic_compare_exchange_strong(&own_top, &expected, map + page + OWN_STACK_SIZE)) {
        (void)scl_bound.munmap(map, size);
        return expected; /* another thread was first */
    }
    return map + page + OWN_STACK_SIZE;
}

/* The stack's top for SELF, taken: NULL when it cannot be had. */
static char *take(pid_t self)
{
    char *top = atomic_load(&own_top);
    struct own_state *state;
    pid_t stamp = 0, user = 0;

    if (top == NULL && (atomic_load(&own_unavailable) || (top = map_once()) == NULL))
        return NULL;
    state = (struct own_state *)(void *)top;
    if (!atomic_compare_exchange_strong(&state->stamp, &stamp, self) && stamp != self)
        return NULL; /* shared with the process that stamped it */
    return atomic_compare_exchange_strong(&state->user, &user, self) ? top : NULL;
}

static void give_back(char *top)
{
    atomic_store(&((struct own_state *)(void *)top)->user, 0);
}

/*
 * Signals are blocked while the work runs, on whichever stack: a handler
 * marked SA_ONSTACK arriving while this thread is on the own stack would
 * find it off the alternate stack and start its frame at the top of that,
 * over the frames of the handler this work runs in (scl_block_signals()
 * keeps this frame small).  Cancellation is held
 * off: nothing unwinds through the switch, and the work holds the stack,
 * scratch blocks and perhaps scl_lock().
 */
void scl_on_own_stack(void (*fn)(void *), void *arg)
{
    pid_t self = getpid();
    int saved = errno, cancel;
    uint64_t old = scl_block_signals();
    char *top;

    scl_bound.pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    top = take(self);
    errno = saved;
    if (top != NULL) {
        call_at(top, fn, arg);
        give_back(top);
    } else {
        fn(arg);
    }
    saved = errno;
    scl_bound.pthread_setcancelstate(cancel, NULL);
    scl_unblock_signals(old);
    errno = saved;
}

#else

void scl_on_own_stack(void (*fn)(void *), void *arg)
{
    fn(arg);
}

#endif
