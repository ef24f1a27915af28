/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "api.h"
#include "bound.h"
#include "children.h"
#include "drain.h"
#include "hot.h"
#include "lifecycle.h"
#include "fork_page.h"
#include "kept_fds.h"
#include "listeners.h"
#include "log.h"
#include "real.h"
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

SCL_HOT static atomic_int initialised;
/* The parent this process had when its image started (set at load), or
 * itself once it forks: so a child knows its parent without writing
 * anything on its side of the fork (doc/HACKING.md says why that matters), and
 * an orphan notices it is one. */
SCL_HOT static _Atomic pid_t forking_parent;

/* Before every fork, hooked or libc-internal (daemon(3)), and before a
 * vfork or a posix_spawn (scl_starting_child()).  Once this process has
 * forked, this writes nothing: a server pays a few loads. */
static void before_fork(void)
{
    pid_t self = getpid();

    if (atomic_load(&forking_parent) != self)
        atomic_store(&forking_parent, self);
    scl_drain_before_fork(self);
    scl_store()->before_fork(self);
}

/* Only async-signal-safe work here: the parent may have had threads. */
static void after_fork_in_child(void)
{
    scl_lock_reset_in_child();
    scl_listeners_child_forked();
    scl_store()->after_fork_in_child();
}

/*
 * The master of the image that just started: its parent when the image
 * was started by a process of a server, to join it (the store hands it
 * on: SWERVE_CLAIM_DIR), or 0 (drain.h: a master whose parent ends is not
 * drained).
 */
static pid_t image_master(void)
{
    const char *name, *value;

    return scl_store()->exec_env(&name, &value) ? getppid() : 0;
}

void scl_lifecycle_init(void)
{
    int expected = 0;
    pid_t self;

    if (atomic_load_explicit(&initialised, memory_order_acquire) == 2)
        return;
    if (!atomic_compare_exchange_strong(&initialised, &expected, 1))
        return; /* another thread, or the code this signal interrupted, is at it */
    (void)scl_real();
    if (scl_fd_hooks_in_place())
        scl_kept_fds_watched(); /* hooks_fd.c reports what the host closes */
    else                        /* another library's close() comes first (dlopen, ASan, a preload before us) */
        scl_debug("close() is not the shim's: the claim directory's descriptor is checked before every use");
    /* getpid() binds it now, not on a hook path's first call, which may be
     * on a small signal stack (own_stack.h). */
    self = getpid();
    /* Calling getppid() here also binds it in the parent: a child that
     * binds a PLT slot itself writes a page it shares with its parent. */
    atomic_store(&forking_parent, getppid());
    scl_store()->at_load(self);
    scl_drain_at_load(self, image_master());
    if (pthread_atfork(before_fork, NULL, after_fork_in_child) != 0)
        scl_debug("pthread_atfork failed: claims will not be shared by children");
    atomic_store_explicit(&initialised, 2, memory_order_release);
}

void scl_starting_child(void)
{
    int saved = errno;

    scl_lifecycle_init();
    before_fork();
    errno = saved;
}

void scl_forked(pid_t child)
{
    scl_drain_child_born(child, scl_children_add(child));
}

void scl_child_reaped(pid_t child, int status)
{
    scl_drain_child_gone(scl_children_remove(child));
    scl_store()->child_reaped(child, status);
}

void scl_process_execs(void)
{
    if (scl_store()->process_execs())
        scl_api_forget_claims();
}

void scl_process_ending(enum scl_ending how)
{
    if (how == SCL_ENDS_BY_EXIT)
        scl_drain_process_exits();
    scl_store()->process_ends(atomic_load(&forking_parent));
}

int scl_signal_ends_by_default(int sig)
{
    switch (sig) {
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU: return 0;
    default: return sig >= 1 && sig < NSIG;
    }
}

/* The kernel's struct sigaction (x86-64, arm64 and the generic layout):
 * 32 bytes, where glibc's takes 152 of a stack that may be a small
 * signal stack (a handler that re-raises its signal). */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
};

/* SIG's disposition now, or SIG_ERR.  Through the bound system call:
 * nothing is bound lazily on the host's stack (bound.h). */
static void (*disposition(int sig))(int)
{
    struct kernel_sigaction action;

    if (scl_bound.syscall(SYS_rt_sigaction, sig, NULL, &action, sizeof action.mask) != 0)
        return SIG_ERR;
    return action.handler;
}

/* Whether this thread blocks SIG. */
static int blocked_here(int sig)
{
    uint64_t mask;

    return scl_bound.syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &mask, sizeof mask) != 0 ||
           (mask & 1ULL << (sig - 1)) != 0;
}

/* Whether SIG, sent to this process by itself now, ends it.  A handler
 * another thread installs after the look is not seen: that process then
 * lives on without its claims, as one whose holder file was removed. */
static int signal_ends_self(int sig)
{
    if (!scl_signal_ends_by_default(sig) || getpid() == 1) /* the init of a namespace: the kernel drops it */
        return 0;
    return sig == SIGKILL || (disposition(sig) == SIG_DFL && !blocked_here(sig));
}

void scl_process_signals_itself(int sig)
{
    int saved = errno;

    if (signal_ends_self(sig))
        scl_process_ending(SCL_ENDS_BY_OWN_SIGNAL);
    errno = saved;
}

void scl_process_aborts(void)
{
    int saved = errno;
    void (*handler)(int) = disposition(SIGABRT);

    /* abort() unblocks SIGABRT, and takes an ignored one back to its
     * default: only a handler can keep the process (by a longjmp). */
    if ((handler == SIG_DFL || handler == SIG_IGN) && getpid() != 1)
        scl_process_ending(SCL_ENDS_BY_OWN_SIGNAL);
    errno = saved;
}

__attribute__((constructor)) static void on_load(void)
{
    int saved = errno;

    scl_lifecycle_init();
    errno = saved;
}

/* exit() and returning from main() end here: libc calls exit internally,
 * where no PLT hook sees it, and the destructor runs after the host's own
 * atexit handlers, which may still use claims. */
__attribute__((destructor)) static void on_unload(void)
{
    scl_process_ending(SCL_ENDS_BY_EXIT);
}
