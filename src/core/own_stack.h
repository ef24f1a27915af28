/* SPDX-License-Identifier: MIT */
/*
 * A stack of the library's own for the work the hooks do on the host's
 * behalf (clearing a holder's claims, making the claim directory): a host
 * may call fork, exit, wait or exec in a signal handler on a
 * MINSIGSTKSZ-sized alternate stack, where the kernel's signal frame
 * leaves a few hundred bytes, and that work takes a few kilobytes.
 *
 * Mapped once, when first needed, MADV_WIPEONFORK: a forked child gets a
 * blank one of its own, and a server's fork never shares those pages with
 * its workers (its next reap pays no copy-on-write fault).  One thread at
 * a time runs on it; another thread, or a vfork child, runs the work where
 * it is.  Signals are blocked and cancellation held off while the work runs.
 * Async-signal-safe.
 *
 * On a machine other than x86-64 and AArch64, in a sanitizer build (whose
 * bookkeeping follows the thread's stack), or when the mapping fails, the
 * work runs on the caller's stack.
 */
#ifndef SCL_OWN_STACK_H
#define SCL_OWN_STACK_H

/* Calls FN(ARG) on this process's own stack when it can be had. */
void scl_on_own_stack(void (*fn)(void *arg), void *arg);

#endif
