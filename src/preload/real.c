/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "hot.h"
#include "real.h"

#include <errno.h>

#include <dlfcn.h>
#include <stdatomic.h>

SCL_HOT static struct scl_real table;
SCL_HOT static atomic_int bound;

/* Before glibc 2.36, dlsym(RTLD_NEXT) gave the oldest version of a
 * symbol; posix_spawn's current one is GLIBC_2.15 on x86_64. */
static void *next_version(const char *name, const char *version)
{
    void *p = dlvsym(RTLD_NEXT, name, version);

    return p != NULL ? p : dlsym(RTLD_NEXT, name);
}

const struct scl_real *scl_real(void)
{
    if (atomic_load_explicit(&bound, memory_order_acquire))
        return &table;
        /* Racing binders store the same values: harmless.  RTLD_NEXT looks
     * only in the objects after this one, so it never finds our hooks (and
     * taking their addresses would cost a symbol lookup each at load). */
#define BIND(field, name) *(void **)&table.field = dlsym(RTLD_NEXT, name)
    BIND(fork, "fork");
    BIND(clone, "clone");
    BIND(exit_, "_exit");
    BIND(Exit, "_Exit");
    BIND(quick_exit, "quick_exit");
    BIND(wait, "wait");
    BIND(waitpid, "waitpid");
    BIND(wait3, "wait3");
    BIND(wait4, "wait4");
    BIND(waitid, "waitid");
    BIND(execve, "execve");
    BIND(execvpe, "execvpe");
    BIND(fexecve, "fexecve");
    BIND(execveat, "execveat");
    BIND(system, "system");
    BIND(pclose, "pclose");
    BIND(fclose, "fclose");
    BIND(chroot, "chroot");
    BIND(setuid, "setuid");
    BIND(setreuid, "setreuid");
    BIND(setresuid, "setresuid");
    BIND(close, "close");
    BIND(close_range, "close_range");
    BIND(closefrom, "closefrom");
    BIND(dup2, "dup2");
    BIND(dup3, "dup3");
    BIND(kill, "kill");
    BIND(killpg, "killpg");
    BIND(tgkill, "tgkill");
    BIND(sigqueue, "sigqueue");
    BIND(raise, "raise");
    BIND(abort, "abort");
    BIND(bind, "bind");
    BIND(listen, "listen");
    BIND(shutdown, "shutdown");
#undef BIND
    *(void **)&table.posix_spawn = next_version("posix_spawn", "GLIBC_2.15");
    *(void **)&table.posix_spawnp = next_version("posix_spawnp", "GLIBC_2.15");
    atomic_store_explicit(&bound, 1, memory_order_release);
    return &table;
}

int scl_real_missing(void)
{
    errno = ENOSYS;
    return -1;
}
