#include "config.h"

#include "hot.h"
#include "real.h"

#include <dlfcn.h>
#include <spawn.h>
#include <unistd.h>
#include <stdatomic.h>

SCL_HOT static struct scl_real table;
SCL_HOT static atomic_int bound;

/* RTLD_NEXT finds the next definition after ours; should it ever find
 * ours (a broken link order), calling it would recurse for ever. */
static void *next(const char *name, void *ours)
{
    void *p = dlsym(RTLD_NEXT, name);

    return p == ours ? NULL : p;
}

/* Before glibc 2.36, dlsym(RTLD_NEXT) gave the oldest version of a
 * symbol; posix_spawn's current one is GLIBC_2.15 on x86_64. */
static void *next_version(const char *name, const char *version, void *ours)
{
    void *p = dlvsym(RTLD_NEXT, name, version);

    return p == NULL || p == ours ? next(name, ours) : p;
}

extern pid_t fork(void);
extern void _exit(int);
extern void _Exit(int);
extern void quick_exit(int);
extern int execvpe(const char *, char *const[], char *const[]);

const struct scl_real *scl_real(void)
{
    if (atomic_load_explicit(&bound, memory_order_acquire))
        return &table;
    /* Racing binders store the same values: harmless. */
#define BIND(field, name, ours) *(void **)&table.field = next(name, (void *)(ours))
    BIND(fork, "fork", fork);
    BIND(exit_, "_exit", _exit);
    BIND(Exit, "_Exit", _Exit);
    BIND(quick_exit, "quick_exit", quick_exit);
    BIND(wait, "wait", wait);
    BIND(waitpid, "waitpid", waitpid);
    BIND(wait3, "wait3", wait3);
    BIND(wait4, "wait4", wait4);
    BIND(waitid, "waitid", waitid);
    BIND(execve, "execve", execve);
    BIND(execvpe, "execvpe", execvpe);
    BIND(fexecve, "fexecve", fexecve);
    BIND(chroot, "chroot", chroot);
    BIND(setuid, "setuid", setuid);
    BIND(seteuid, "seteuid", seteuid);
    BIND(setreuid, "setreuid", setreuid);
    BIND(setresuid, "setresuid", setresuid);
#undef BIND
    *(void **)&table.posix_spawn = next_version("posix_spawn", "GLIBC_2.15", (void *)posix_spawn);
    *(void **)&table.posix_spawnp = next_version("posix_spawnp", "GLIBC_2.15", (void *)posix_spawnp);
    atomic_store_explicit(&bound, 1, memory_order_release);
    return &table;
}
