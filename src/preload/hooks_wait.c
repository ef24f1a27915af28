/* SPDX-License-Identifier: MIT */
/*
 * The wait family: when a call reaps a child (it exited or was killed),
 * that child's claims are cleared before the call returns, so whoever
 * reaps clears.  What the call returns (status, rusage, siginfo, errno) is
 * left exactly as libc gave it.  Nothing is reaped here that the host did
 * not ask for.  nginx and PostgreSQL reap inside their SIGCHLD handler:
 * this path is async-signal-safe.
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "real.h"
#include "sigsafe.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * After a wait that was given STATUS (the host's own pointer, or ours
 * when the host gave none, so that we learn how the child ended): R is
 * what libc returned for PID.  The kernel wrote STATUS itself, so the
 * shim writes nothing through the host's pointers, and a pointer the
 * kernel could not write fails as it would without the shim: with EFAULT,
 * the child reaped all the same (its claims are cleared when it is dead).
 */
static pid_t after_wait(pid_t r, pid_t pid, const int *status)
{
    int saved = errno;

    if (r > 0 && (WIFEXITED(*status) || WIFSIGNALED(*status)))
        scl_child_reaped(r, *status);
    else if (r < 0 && saved == EFAULT && pid > 0 && scl_kill(pid, 0) != 0 && errno == ESRCH)
        scl_child_reaped(pid, -1); /* gone: reaped, not stopped (WUNTRACED) */
    errno = saved;
    return r;
}

/* Every variant of wait comes down to wait4(2) or waitid(2); the
 * fallbacks are for a libc whose symbol could not be bound. */
SCL_EXPORT pid_t wait4(pid_t pid, int *wstatus, int options, struct rusage *rusage)
{
    pid_t (*real)(pid_t, int *, int, struct rusage *) = scl_real()->wait4;
    int ours = 0, *status = wstatus != NULL ? wstatus : &ours;
    pid_t r =
        real != NULL ? real(pid, status, options, rusage) : (pid_t)syscall(SYS_wait4, pid, status, options, rusage);

    return after_wait(r, pid, status);
}

pid_t scl_waitpid_reaping(pid_t pid, int *wstatus, int options)
{
    pid_t (*real)(pid_t, int *, int) = scl_real()->waitpid;
    int ours = 0, *status = wstatus != NULL ? wstatus : &ours;
    pid_t r = real != NULL ? real(pid, status, options) : (pid_t)syscall(SYS_wait4, pid, status, options, NULL);

    return after_wait(r, pid, status);
}

SCL_EXPORT pid_t waitpid(pid_t pid, int *wstatus, int options)
{
    return scl_waitpid_reaping(pid, wstatus, options);
}

SCL_EXPORT pid_t wait(int *wstatus)
{
    pid_t (*real)(int *) = scl_real()->wait;
    int ours = 0, *status = wstatus != NULL ? wstatus : &ours;
    pid_t r = real != NULL ? real(status) : (pid_t)syscall(SYS_wait4, -1, status, 0, NULL);

    return after_wait(r, -1, status);
}

SCL_EXPORT pid_t wait3(int *wstatus, int options, struct rusage *rusage)
{
    pid_t (*real)(int *, int, struct rusage *) = scl_real()->wait3;
    int ours = 0, *status = wstatus != NULL ? wstatus : &ours;
    pid_t r = real != NULL ? real(status, options, rusage) : (pid_t)syscall(SYS_wait4, -1, status, options, rusage);

    return after_wait(r, -1, status);
}

SCL_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *infop, int options)
{
    int (*real)(idtype_t, id_t, siginfo_t *, int) = scl_real()->waitid;
    /* A NULL INFOP is allowed, but then we could not tell whom the
     * call reaped; Linux fills a given one in full, si_pid 0 when WNOHANG
     * found nothing. */
    siginfo_t local = { 0 };
    siginfo_t *info = infop != NULL ? infop : &local;
    int r;

    r = real != NULL ? real(idtype, id, info, options) : (int)syscall(SYS_waitid, idtype, id, info, options, NULL);
    if (r == 0 && !(options & WNOWAIT) && info->si_pid > 0 &&
        (info->si_code == CLD_EXITED || info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED)) {
        int saved = errno;
        /* As wait(2) would have said it: an exit code, or a signal. */
        scl_child_reaped(info->si_pid,
                         info->si_code == CLD_EXITED ? (info->si_status & 0xff) << 8 : info->si_status & 0x7f);
        errno = saved;
    }
    return r;
}
