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
 * async-signal-safe (execve may be called from a signal handler, perhaps
 * on a small alternate stack): the new environment and argument vectors
 * take at most 1.5 KiB of stack, and larger ones are mapped (mmap is
 * async-signal-safe; malloc is not).
 */
#include "config.h"

#include "export.h"
#include "lifecycle.h"
#include "real.h"
#include "sigsafe.h"
#include "store.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

/* What fits on the stack: more is mapped. */
#define ROOM_POINTERS 64
#define ROOM_TEXT     192

/* Room for one new vector (and, for an environment, its one new entry). */
struct room {
    char *pointers[ROOM_POINTERS];
    char text[ROOM_TEXT];
    void *mapped;
    size_t mapped_size;
};

/* Room in R for N pointers and TEXT bytes: 0, or -1 when it could not be
 * mapped (the caller then goes on without it). */
static int room_take(struct room *r, size_t n, size_t text, char ***pointers, char **buf)
{
    size_t size = n * sizeof(char *) + text;
    void *p;

    r->mapped = NULL;
    if (n <= ROOM_POINTERS && text <= ROOM_TEXT) {
        *pointers = r->pointers;
        *buf = r->text;
        return 0;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    r->mapped = p;
    r->mapped_size = size;
    *pointers = p;
    *buf = (char *)p + n * sizeof(char *);
    return 0;
}

/* After the call that used R returned (a successful exec never does). */
static void room_free(struct room *r)
{
    int saved = errno;

    if (r->mapped != NULL)
        (void)munmap(r->mapped, r->mapped_size);
    errno = saved;
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
 * ENVP as the new image should get it: when ENVP preloads us and the
 * store needs a variable passed on (SWERVE_CLAIM_DIR, for the filesystem
 * store), a copy in R with it replaced or added; otherwise (or without
 * room) ENVP itself.
 */
static char *const *with_claim_dir(char *const *envp, struct room *r)
{
    const char *name, *value;
    char **fixed, *var;
    size_t n = 0, entries = 0;

    r->mapped = NULL;
    if (!preloads_us(envp) || !scl_store()->exec_env(&name, &value))
        return envp;
    while (envp[entries] != NULL)
        entries++;
    for (const char *c = name; *c != '\0'; c++)
        n++;
    for (const char *c = value; *c != '\0'; c++)
        n++;
    n += 2; /* '=' and the NUL */
    if (room_take(r, entries + 2, n, &fixed, &var) != 0 || scl_concat(var, n, name, "=", value, (char *)NULL) != 0) {
        room_free(r);
        r->mapped = NULL;
        return envp;
    }
    n = 0;
    for (size_t i = 0; envp[i] != NULL; i++) {
        const char *rest = scl_after_prefix(envp[i], name);
        if (rest == NULL || *rest != '=')
            fixed[n++] = envp[i];
    }
    fixed[n++] = var;
    fixed[n] = NULL;
    return fixed;
}

/* The exec'd image is not going to release anything: do it now. */
static void before_exec(void)
{
    scl_lifecycle_init();
    scl_process_execs();
}

typedef int exec_fn(const char *, char *const[], char *const[]);

/* Every variant funnels into this, with libc's execve (a path) or execvpe
 * (a PATH search); calling our exported names instead would go through
 * the PLT, to whatever defines them first. */
static int exec_with(exec_fn *real, const char *file, char *const argv[], char *const envp[])
{
    struct room room;
    int r;

    before_exec();
    if (real == NULL)
        return scl_real_missing();
    r = real(file, argv, with_claim_dir(envp, &room));
    room_free(&room);
    return r;
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
    struct room room;
    int r;

    before_exec();
    if (real == NULL)
        return scl_real_missing();
    r = real(fd, argv, with_claim_dir(envp, &room));
    room_free(&room);
    return r;
}

/* glibc's fexecve calls the execveat system call itself, not this. */
SCL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    int (*real)(int, const char *, char *const[], char *const[], int) = scl_real()->execveat;
    struct room room;
    int r;

    before_exec();
    if (real == NULL)
        return scl_real_missing();
    r = real(dirfd, path, argv, with_claim_dir(envp, &room), flags);
    room_free(&room);
    return r;
}

/*
 * execl, execle and execlp: the arguments after ARG0 in AP (and, when
 * WITH_ENV, the environment after their NULL) made into a vector, in a
 * room of this frame, then as exec_with().
 */
static int exec_list(exec_fn *real, const char *file, const char *arg0, va_list ap, int with_env)
{
    char *const *envp = environ;
    char **argv, *unused;
    struct room room;
    size_t argc = 1;
    va_list counting;
    int r;

    va_copy(counting, ap);
    while (va_arg(counting, char *) != NULL)
        argc++;
    va_end(counting);
    if (room_take(&room, argc + 1, 0, &argv, &unused) != 0)
        return -1; /* ENOMEM, as the kernel's own copy would fail */
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= argc; i++)
        argv[i] = va_arg(ap, char *); /* the last one read is the NULL */
    if (with_env)
        envp = va_arg(ap, char *const *);
    r = exec_with(real, file, argv, envp);
    room_free(&room);
    return r;
}

SCL_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    int r;

    va_start(ap, arg);
    r = exec_list(scl_real()->execve, path, arg, ap, 0);
    va_end(ap);
    return r;
}

SCL_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    int r;

    va_start(ap, arg);
    r = exec_list(scl_real()->execve, path, arg, ap, 1);
    va_end(ap);
    return r;
}

SCL_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    int r;

    va_start(ap, arg);
    r = exec_list(scl_real()->execvpe, file, arg, ap, 0);
    va_end(ap);
    return r;
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                     char *const[], char *const[]);

/* posix_spawn and posix_spawnp alike: only the environment changes. */
static int spawn(spawn_fn *real, pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    struct room room;
    int r;

    scl_lifecycle_init();
    if (real == NULL)
        return ENOSYS; /* posix_spawn returns its error */
    r = real(pid, file, actions, attr, argv, with_claim_dir(envp, &room));
    room_free(&room);
    return r;
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
