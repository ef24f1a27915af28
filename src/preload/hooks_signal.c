/* SPDX-License-Identifier: MIT */
/*
 * The calls that send a signal: kill, killpg, sigqueue, tgkill, and raise
 * and abort.  A master that tells a child to stop gracefully (a drain
 * signal, settings.h) marks it, once the call has succeeded, where the
 * child finds it (drain.h): swerve_claim_draining() says 1 there from
 * then on.  A process that sends itself a signal that will end it (Puma's
 * master re-raises SIGTERM with its default action to die by it) ends as
 * by an exit first (lifecycle.h), since no exit path of its runs after.
 * The signal itself, the result and errno are libc's; a probe (signal 0)
 * or a signal outside the set costs a compare, a target that is no child
 * of this process a look at the table of children.  Masters signal from
 * their handlers too: async-signal-safe.
 *
 * Not seen: glibc's own calls (pthread_kill, abort on a failed assertion
 * or a corrupt heap), a raw system call, pidfd_send_signal(2), and a
 * signal another process sends (an operator's kill(1), systemd's
 * KillMode=control-group).
 */
#include "config.h"

#include "bound.h"
#include "drain.h"
#include "export.h"
#include "lifecycle.h"
#include "real.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* This process's pid when SIG concerns the library (it would end this
 * process, or it drains a child), else 0: one getpid() serves both
 * looks, and a probe or a SIGCHLD costs a compare. */
static pid_t self_if_concerned(int sig)
{
    return scl_signal_ends_by_default(sig) || scl_drain_signal(sig) ? getpid() : 0;
}

/* Before a call by process SELF that sends SIG to TARGET (as kill() names
 * it): this process ends first when it is among those reached and SIG
 * ends it. */
static void sending(pid_t self, pid_t target, int sig)
{
    if (scl_signal_ends_by_default(sig) &&
        (target == 0 || target == self || (target < -1 && -target == scl_bound.syscall(SYS_getpgid, 0))))
        scl_process_signals_itself(sig);
}

/* After a call by process SELF that sent SIG to TARGET and returned R: R,
 * with the children it reached marked when SIG drains them. */
static int sent(int r, pid_t self, pid_t target, int sig)
{
    if (r == 0 && scl_drain_signal(sig))
        scl_drain_sent(self, target);
    return r;
}

SCL_EXPORT int kill(pid_t pid, int sig)
{
    int (*real)(pid_t, int) = scl_real()->kill;
    pid_t self = self_if_concerned(sig);

    sending(self, pid, sig);
    return sent(real != NULL ? real(pid, sig) : (int)syscall(SYS_kill, pid, sig), self, pid, sig);
}

/* glibc's killpg calls its kill internally, where no hook sees it. */
SCL_EXPORT int killpg(pid_t pgrp, int sig)
{
    int (*real)(pid_t, int) = scl_real()->killpg;
    pid_t self = self_if_concerned(sig);

    /* A negative group is EINVAL, so never a target taken for another;
     * group 1 is kill(-1): glibc's killpg signals every process then. */
    if (pgrp >= 0)
        sending(self, pgrp == 0 ? 0 : -pgrp, sig);
    return sent(real != NULL ? real(pgrp, sig) : scl_real_missing(), self, -pgrp, sig);
}

SCL_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
    int (*real)(pid_t, int, const union sigval) = scl_real()->sigqueue;
    pid_t self = self_if_concerned(sig);
    int r;

    if (pid > 0)
        sending(self, pid, sig);
    r = real != NULL ? real(pid, sig, value) : scl_real_missing();
    return pid > 0 ? sent(r, self, pid, sig) : r; /* the kernel takes no group here */
}

/* A thread of process TGID: that process is reached. */
SCL_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
    int (*real)(pid_t, pid_t, int) = scl_real()->tgkill;
    pid_t self = self_if_concerned(sig);
    int r;

    /* Only this very thread's mask is known here. */
    if (scl_signal_ends_by_default(sig) && tgid == self && tid == scl_bound.syscall(SYS_gettid))
        scl_process_signals_itself(sig);
    r = real != NULL ? real(tgid, tid, sig) : (int)syscall(SYS_tgkill, tgid, tid, sig);
    return tgid > 0 ? sent(r, self, tgid, sig) : r;
}

/* glibc's raise is a tgkill of its own thread, made internally. */
SCL_EXPORT int raise(int sig)
{
    int (*real)(int) = scl_real()->raise;

    scl_process_signals_itself(sig);
    return real != NULL ? real(sig) : scl_real_missing();
}

/* abort() ends the process whatever SIGABRT's mask, and whether it was
 * ignored: only a handler may keep it (by a longjmp out of it). */
SCL_EXPORT void abort(void)
{
    void (*real)(void) = scl_real()->abort;

    scl_process_aborts();
    if (real != NULL)
        real();
    for (;;)
        (void)syscall(SYS_kill, getpid(), SIGKILL);
}
