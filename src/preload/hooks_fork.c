/*
 * fork(): the claim directory's place is reserved in the parent by the
 * fork handlers (lifecycle.c), which also run for libc's internal forks
 * (this hook installs them first when another library's constructor
 * forks before ours has run); the hook records the child, which just the
 * parent's side of fork() can name, for the drain signals (drain.h).
 *
 * Not hooked: vfork() (a C wrapper cannot return twice on a shared
 * stack), posix_spawn() and _Fork().  Their children are handled by pid
 * like any other: claims never rest on having seen the fork.
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "real.h"

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
