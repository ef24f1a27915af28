/*
 * The calls that send a signal to another process: kill, killpg, sigqueue,
 * tgkill.  A master that tells a child to stop gracefully (a drain signal,
 * settings.h) marks it, once the call has succeeded, where the child finds
 * it (drain.h): swerve_claim_draining() says 1 there from then on.  The
 * signal itself, the result and errno are libc's; a probe (signal 0) or a
 * signal outside the set costs a compare, a target that is no child of
 * this process a look at the table of children.  Masters signal from
 * their handlers too: async-signal-safe.
 *
 * Not seen: glibc's own calls (raise, abort, pthread_kill), a raw system
 * call, pidfd_send_signal(2), and a signal another process sends (an
 * operator's kill(1), systemd's KillMode=control-group).
 */
#include "config.h"

#include "drain.h"
#include "export.h"
#include "real.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* After a call that sent SIG to TARGET (as kill() names it) and returned
 * R: R, with the children it reached marked when SIG drains them. */
static int sent(int r, pid_t target, int sig)
{
    if (r == 0 && scl_drain_signal(sig))
        scl_drain_sent(target);
    return r;
}

SCL_EXPORT int kill(pid_t pid, int sig)
{
    int (*real)(pid_t, int) = scl_real()->kill;

    return sent(real != NULL ? real(pid, sig) : (int)syscall(SYS_kill, pid, sig), pid, sig);
}

/* glibc's killpg calls its kill internally, where no hook sees it. */
SCL_EXPORT int killpg(pid_t pgrp, int sig)
{
    int (*real)(pid_t, int) = scl_real()->killpg;

    /* A negative group is EINVAL, so never a target taken for another;
     * group 1 is kill(-1): glibc's killpg signals every process then. */
    return sent(real != NULL ? real(pgrp, sig) : scl_real_missing(), -pgrp, sig);
}

SCL_EXPORT int sigqueue(pid_t pid, int sig, const union sigval value)
{
    int (*real)(pid_t, int, const union sigval) = scl_real()->sigqueue;

    int r = real != NULL ? real(pid, sig, value) : scl_real_missing();

    return pid > 0 ? sent(r, pid, sig) : r; /* the kernel takes no group here */
}

/* A thread of process TGID: that process is reached. */
SCL_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
    int (*real)(pid_t, pid_t, int) = scl_real()->tgkill;
    int r = real != NULL ? real(tgid, tid, sig) : (int)syscall(SYS_tgkill, tgid, tid, sig);

    return tgid > 0 ? sent(r, tgid, sig) : r;
}
