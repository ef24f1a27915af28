/* SPDX-License-Identifier: MIT */
/*
 * fork() and vfork(): the claim directory's place is reserved in the
 * parent before the child starts (lifecycle.c), by the fork handlers for
 * a fork (which also run for libc's internal forks; this hook installs
 * them first when another library's constructor forks before ours has
 * run), and by the vfork hook itself, since no handler runs for a vfork:
 * a master that starts its workers with vfork and execve, as CPython's
 * subprocess and multiprocessing's spawn do, hands its place on as a
 * master that forks does.  Each hook records the child, which just the
 * parent's side can name, for the drain signals (drain.h).
 *
 * clone() is hooked too, for the children it makes (not for threads:
 * CLONE_THREAD, as pthread_create makes them internally where no hook
 * sees it, passes through with a test), as vfork's.
 *
 * Not hooked: _Fork() and the raw system calls.  Their children are
 * handled by pid like any other: claims never rest on having seen the
 * fork.
 */
#include "config.h"

#include "export.h"
#include "image_env.h"
#include "lifecycle.h"
#include "real.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <unistd.h>

SCL_EXPORT pid_t fork(void)
{
    pid_t (*real_fork)(void);
    pid_t pid;

    scl_lifecycle_init();
    real_fork = scl_real()->fork;
    if (real_fork == NULL)
        return scl_real_missing();
    pid = real_fork();
    if (pid > 0)
        scl_forked(pid);
    return pid;
}

/*
 * clone(FN, STACK, FLAGS, ARG, [PARENT_TID, TLS, CHILD_TID]): a caller
 * passes the optional arguments up to the last one its flags make the
 * kernel read, and only those are read here (past them is the caller's
 * frame); the rest go on as NULL, which the kernel does not read.  The
 * child runs FN on STACK and never returns here.  A child whose parent is
 * ours (CLONE_PARENT) is not this process's to record.
 */
SCL_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    int (*real)(int (*)(void *), void *, int, void *, ...) = scl_real()->clone;
    int child_of_ours = !(flags & (CLONE_THREAD | CLONE_PARENT)), pid;
    int passed = flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID) ? 3
                 : flags & CLONE_SETTLS                              ? 2
                 : flags & (CLONE_PARENT_SETTID | CLONE_PIDFD)       ? 1
                                                                     : 0;
    pid_t *parent_tid = NULL, *child_tid = NULL;
    void *tls = NULL;
    va_list more;

    va_start(more, arg);
    if (passed >= 1)
        parent_tid = va_arg(more, pid_t *);
    if (passed >= 2)
        tls = va_arg(more, void *);
    if (passed >= 3)
        child_tid = va_arg(more, pid_t *);
    va_end(more);
    if (real == NULL)
        return scl_real_missing();
    if (child_of_ours)
        scl_starting_child();
    pid = real(fn, stack, flags, arg, parent_tid, tls, child_tid);
    if (pid > 0 && (flags & (CLONE_VM | CLONE_VFORK)) == (CLONE_VM | CLONE_VFORK))
        scl_rooms_left_by(pid); /* it has exec'd or ended: it shared our memory until then */
    if (pid > 0 && child_of_ours)
        scl_forked(pid);
    return pid;
}

#if defined(__x86_64__)
/*
 * vfork() cannot be a C function that calls libc's: the child returns
 * first, on the parent's stack, and its next calls overwrite the frame
 * the parent would return through.  So it is glibc's own instructions
 * (sysdeps/unix/sysv/linux/x86_64/vfork.S): the return address is held in
 * %rdi, which the system call keeps, not on the stack, and with a shadow
 * stack in use the child goes back by a jump, leaving the entry it shares
 * with its parent to the parent's return.  Before them, the parent
 * settles what its children share, with a call of its own that returns
 * before anything is shared; after them, only the parent, whose child has
 * exec'd or ended by then and so left the stack to it again, records the
 * child.  The child runs nothing of ours before it returns.  The three
 * helpers have external names (hidden): the assembly calls them by name.
 */
void scl_vfork_prepare(void);
pid_t scl_vfork_returned(pid_t child);
pid_t scl_vfork_failed(long error);

void scl_vfork_prepare(void)
{
    scl_starting_child();
}

pid_t scl_vfork_returned(pid_t child)
{
    scl_rooms_left_by(child);
    scl_forked(child);
    return child;
}

pid_t scl_vfork_failed(long error)
{
    errno = (int)error;
    return -1;
}

#if defined(__CET__) && (__CET__ & 1)
#define SCL_ENDBR "endbr64\n\t"
#else
#define SCL_ENDBR ""
#endif
/* In the child with a shadow stack in use (rdssp leaves 0 without one,
 * and is a no-op on a processor without CET): back by a jump. */
#if defined(__CET__) && (__CET__ & 2)
#define SCL_CHILD_SHSTK                                                                                                \
    "xorl %esi, %esi\n\t"                                                                                              \
    "rdsspq %rsi\n\t"                                                                                                  \
    "testq %rsi, %rsi\n\t"                                                                                             \
    "jz 1f\n\t"                                                                                                        \
    "popq %rdi\n\t"                                                                                                    \
    ".cfi_adjust_cfa_offset -8\n\t"                                                                                    \
    "jmp *%rdi\n\t"                                                                                                    \
    ".cfi_adjust_cfa_offset 8\n"
#else
#define SCL_CHILD_SHSTK
#endif

__asm__(".text\n\t"
        ".globl vfork\n\t"
        ".type vfork, @function\n"
        "vfork:\n\t"
        ".cfi_startproc\n\t" SCL_ENDBR "subq $8, %rsp\n\t" /* aligned for the call */
        ".cfi_adjust_cfa_offset 8\n\t"
        "call scl_vfork_prepare\n\t"
        "addq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "popq %rdi\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        ".cfi_register %rip, %rdi\n\t"
        "movl $58, %eax\n\t" /* SYS_vfork */
        "syscall\n\t"
        "pushq %rdi\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        ".cfi_rel_offset %rip, 0\n\t"
        "cmpq $-4095, %rax\n\t"
        "jae 2f\n\t"
        "testq %rax, %rax\n\t"
        "jnz 3f\n\t" SCL_CHILD_SHSTK /* the child: straight back */
        "1:\n\t"
        "ret\n"
        "3:\n\t" /* the parent */
        "movq %rax, %rdi\n\t"
        "subq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        "call scl_vfork_returned\n\t"
        "addq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "ret\n"
        "2:\n\t"
        "negq %rax\n\t"
        "movq %rax, %rdi\n\t"
        "subq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset 8\n\t"
        "call scl_vfork_failed\n\t"
        "addq $8, %rsp\n\t"
        ".cfi_adjust_cfa_offset -8\n\t"
        "ret\n\t"
        ".cfi_endproc\n\t"
        ".size vfork, .-vfork\n");
#endif
