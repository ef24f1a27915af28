#include "config.h"

#include "fork_page.h"
#include "own_stack.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* The deepest path (a first fork sweeping abandoned directories) takes
 * under 8 KiB; more is headroom.  A guard page below it. */
#define OWN_STACK_SIZE (64 * 1024)

#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(__SANITIZE_ADDRESS__)

/* What is called before the switch, through pointers the loader fills
 * in as it loads us: bound lazily on first use, a call would save the
 * vector registers on the caller's stack (2.7 KiB on an AVX-512 machine),
 * the very stack this spares.  (getpid is bound at load too: the
 * constructor calls it.)  Volatile, or the compiler, seeing them never
 * change, calls the functions directly again. */
static struct {
    long (*volatile sysconf)(int);
    void *(*volatile mmap)(void *, size_t, int, int, int, off_t);
    int (*volatile mprotect)(void *, size_t, int);
    int (*volatile madvise)(void *, size_t, int);
    int (*volatile munmap)(void *, size_t);
} libc = { sysconf, mmap, mprotect, madvise, munmap };

/* On the fork page: own_stack_user is the process whose thread is on
 * it (or 0), own_stack_owner the process that mapped it. */
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
                       "xmm15", "memory", "cc");
#else
    register void *x0 __asm__("x0") = arg;
    __asm__ volatile("mov x19, sp\n\t"
                     "mov sp, %[top]\n\t"
                     "blr %[fn]\n\t"
                     "mov sp, x19"
                     : "+r"(x0)
                     : [top] "r"(top), [fn] "r"(fn)
                     : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
                       "x16", "x17", "x18", "x19", "x30", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17",
                       "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
                       "memory", "cc");
#endif
}

/* This process's stack: mapped on first use, here as in a forked child
 * (whose parent's was not inherited).  NULL when it cannot be. */
static char *own_top(pid_t self)
{
    size_t page;
    char *map;

    if (atomic_load(&scl_fork_page.own_stack_owner) == self)
        return scl_fork_page.own_stack_top;
    page = (size_t)libc.sysconf(_SC_PAGESIZE);
    map =
        libc.mmap(NULL, page + OWN_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    if (libc.mprotect(map, page, PROT_NONE) != 0 || libc.madvise(map, page + OWN_STACK_SIZE, MADV_DONTFORK) != 0) {
        (void)libc.munmap(map, page + OWN_STACK_SIZE);
        return NULL;
    }
    scl_fork_page.own_stack_top = map + page + OWN_STACK_SIZE;
    atomic_store(&scl_fork_page.own_stack_owner, self);
    return scl_fork_page.own_stack_top;
}

void scl_on_own_stack(void (*fn)(void *), void *arg)
{
    pid_t self = getpid(), user = atomic_load(&scl_fork_page.own_stack_user);
    int saved = errno;
    char *top;

    /* Taken by this process (another thread, or the code this handler
     * interrupted), or free; a parent's taking does not count. */
    if (user == self || !atomic_compare_exchange_strong(&scl_fork_page.own_stack_user, &user, self)) {
        fn(arg);
        return;
    }
    top = own_top(self);
    errno = saved;
    if (top != NULL)
        call_at(top, fn, arg);
    else
        fn(arg);
    atomic_store(&scl_fork_page.own_stack_user, 0);
}

#else

void scl_on_own_stack(void (*fn)(void *), void *arg)
{
    fn(arg);
}

#endif
