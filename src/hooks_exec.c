/*
 * The exec family.  A process that execs has destroyed its handles, so
 * its claims are released first (it stays registered: the new image has
 * the same pid and start time, as uWSGI's re-exec of its master does).
 * When the new image will load this library too (LD_PRELOAD in its
 * environment names it), SWERVE_CLAIM_DIR is added to that environment so
 * that it joins the same claim directory; no other program's environment
 * is changed.  posix_spawn() and posix_spawnp() only get the environment:
 * the parent lives on with its claims.
 *
 * Each variant is hooked on its own: glibc's execl, execv and friends call
 * execve internally, where no PLT hook sees them.  Everything here is
 * async-signal-safe (execve may be called from a signal handler): the new
 * environment and argument vectors live on the stack.
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "real.h"
#include "serverdir.h"
#include "settings.h"
#include "sigsafe.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <unistd.h>

extern char **environ;

/* Larger vectors are passed on as they are, unchanged. */
#define VECTOR_MAX 65536

struct env_fix {
    char var[sizeof SCL_DIR_ENV + PATH_MAX];
};

static size_t count(char *const *v)
{
    size_t n = 0;

    while (v != NULL && v[n] != NULL)
        n++;
    return n;
}

static int preloads_us(char *const *envp)
{
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        const char *preload = scl_after_prefix(envp[i], "LD_PRELOAD=");
        if (preload != NULL && scl_contains(preload, "swerveclaim"))
            return 1;
    }
    return 0;
}

/*
 * ENVP (N entries) as the new image should get it: FIXED (room for N + 2)
 * filled with ENVP, SWERVE_CLAIM_DIR replaced or added, when this process
 * has a claim directory and ENVP preloads us; otherwise ENVP itself.
 */
static char *const *with_claim_dir(char *const *envp, size_t entries, char **fixed, struct env_fix *fix)
{
    size_t n = 0;

    if (!scl_dir_in_use() || entries > VECTOR_MAX || !preloads_us(envp) ||
        scl_concat(fix->var, sizeof fix->var, SCL_DIR_ENV "=", scl_dir_path(), (char *)NULL) != 0)
        return envp;
    for (size_t i = 0; envp[i] != NULL; i++)
        if (scl_after_prefix(envp[i], SCL_DIR_ENV "=") == NULL)
            fixed[n++] = envp[i];
    fixed[n++] = fix->var;
    fixed[n] = NULL;
    return fixed;
}

/* Declares USE: ENVP, or its copy with the claim directory, on the stack
 * (ENVP is counted once: this is the host's exec path). */
#define WITH_CLAIM_DIR(use, envp)                                                                  \
    struct env_fix use##_fix;                                                                      \
    size_t use##_entries = count(envp);                                                            \
    char *use##_room[use##_entries <= VECTOR_MAX ? use##_entries + 2 : 1];                         \
    char *const *use = with_claim_dir((envp), use##_entries, use##_room, &use##_fix)

/* The exec'd image is not going to release anything: do it now. */
static void before_exec(void)
{
    scl_lifecycle_init();
    scl_process_execs();
}

static int exec_failed(void)
{
    errno = ENOSYS;
    return -1;
}

typedef int exec_fn(const char *, char *const[], char *const[]);

/* Every variant funnels into this, with libc's execve (a path) or execvpe
 * (a PATH search); calling our exported names instead would go through
 * the PLT, to whatever defines them first. */
static int exec_with(exec_fn *real, const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    if (real == NULL)
        return exec_failed();
    WITH_CLAIM_DIR(env, envp);
    return real(file, argv, env);
}

SCL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_with(scl_real()->execve, path, argv, envp);
}

SCL_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_with(scl_real()->execve, path, argv, environ);
}

SCL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_with(scl_real()->execvpe, file, argv, envp);
}

SCL_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_with(scl_real()->execvpe, file, argv, environ);
}

SCL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    int (*real)(int, char *const[], char *const[]) = scl_real()->fexecve;

    before_exec();
    if (real == NULL)
        return exec_failed();
    WITH_CLAIM_DIR(env, envp);
    return real(fd, argv, env);
}

/* The arguments of execl, execlp and execle, counted up to their NULL. */
static size_t count_args(va_list ap)
{
    size_t n = 1;

    while (va_arg(ap, char *) != NULL && n <= VECTOR_MAX)
        n++;
    return n;
}

/* Declares ARGV on the stack from ARG0 and the variadic list AP; sets
 * ENVP to the list's trailing environment when WITH_ENV.  Too many
 * arguments: E2BIG, as the kernel would say. */
#define COLLECT_ARGS(argv, arg0, last, with_env, envp)                                             \
    va_list ap;                                                                                    \
    va_start(ap, last);                                                                            \
    va_list counting;                                                                              \
    va_copy(counting, ap);                                                                         \
    size_t argc = count_args(counting);                                                            \
    va_end(counting);                                                                              \
    if (argc > VECTOR_MAX) {                                                                       \
        va_end(ap);                                                                                \
        errno = E2BIG;                                                                             \
        return -1;                                                                                 \
    }                                                                                              \
    char *argv[argc + 1];                                                                          \
    argv[0] = (char *)(arg0);                                                                      \
    for (size_t i = 1; i <= argc; i++)                                                             \
        argv[i] = va_arg(ap, char *); /* the last one read is the NULL */                          \
    if (with_env)                                                                                  \
        envp = va_arg(ap, char *const *);                                                          \
    va_end(ap)

SCL_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *const *envp = environ;
    COLLECT_ARGS(argv, arg, arg, 0, envp);
    return exec_with(scl_real()->execve, path, argv, envp);
}

SCL_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *const *envp = NULL;
    COLLECT_ARGS(argv, arg, arg, 1, envp);
    return exec_with(scl_real()->execve, path, argv, envp);
}

SCL_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *const *envp = environ;
    COLLECT_ARGS(argv, arg, arg, 0, envp);
    return exec_with(scl_real()->execvpe, file, argv, envp);
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                     char *const[], char *const[]);

/* posix_spawn and posix_spawnp alike: only the environment changes. */
static int spawn(spawn_fn *real, pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    scl_lifecycle_init();
    if (real == NULL)
        return ENOSYS;
    WITH_CLAIM_DIR(env, envp);
    return real(pid, file, actions, attr, argv, env);
}

SCL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(scl_real()->posix_spawn, pid, path, actions, attr, argv, envp);
}

SCL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn(scl_real()->posix_spawnp, pid, file, actions, attr, argv, envp);
}
