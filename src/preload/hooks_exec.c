/* SPDX-License-Identifier: MIT */
/*
 * The exec family.  A process that execs has destroyed its handles, so
 * its claims are released first (it stays registered: the new image has
 * the same pid and start time, as uWSGI's re-exec of its master does),
 * and the new image gets SWERVE_CLAIM_DIR when it loads this library too
 * (image_env.h).
 *
 * Each variant is hooked on its own: glibc's execl, execv and friends call
 * execve internally, where no PLT hook sees them.  Everything here is
 * async-signal-safe (execve may be called from a signal handler, perhaps
 * on a small alternate stack): the new environment and argument vectors
 * take at most 1.5 KiB of stack, and larger ones are mapped.
 *
 * A vfork child or a clone(2) child runs these hooks without the fork
 * handlers having run in it: it is not a member of the claim directory
 * (its pid is not its parent's), so it releases nothing of its parent's.
 */
#include "config.h"

#include "export.h"
#include "image_env.h"
#include "lifecycle.h"
#include "real.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

extern char **environ;

/* The exec'd image is not going to release anything: do it now. */
static void before_exec(void)
{
    scl_lifecycle_init();
    scl_process_execs();
}

typedef int exec_fn(const char *, char *const[], char *const[]);

/* One exec, whichever its entry point: libc's function (one of the
 * three) and its arguments but the environment, so that
 * scl_start_image() can make it again. */
struct exec_call {
    exec_fn *by_path; /* execve (a path) or execvpe (a PATH search) */
    int (*by_fd)(int, char *const[], char *const[]);
    int (*at)(int, const char *, char *const[], char *const[], int);
    int fd, flags;
    const char *path;
    char *const *argv;
};

static int exec_call(void *arg, char *const envp[])
{
    const struct exec_call *c = arg;

    if (c->at != NULL)
        return c->at(c->fd, c->path, c->argv, envp, c->flags);
    if (c->by_fd != NULL)
        return c->by_fd(c->fd, c->argv, envp);
    return c->by_path(c->path, c->argv, envp);
}

/* Every variant funnels into this, with libc's own function; calling our
 * exported names instead would go through the PLT, to whatever defines
 * them first. */
static int exec_with(struct exec_call c, char *const envp[])
{
    before_exec();
    if (c.by_path == NULL && c.by_fd == NULL && c.at == NULL)
        return scl_real_missing();
    return scl_start_image(exec_call, &c, envp, 0);
}

/* REAL (execve or execvpe) of FILE. */
static int exec_path(exec_fn *real, const char *file, char *const argv[], char *const envp[])
{
    return exec_with((struct exec_call){ .by_path = real, .path = file, .argv = argv }, envp);
}

SCL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_path(scl_real()->execve, path, argv, envp);
}

SCL_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_path(scl_real()->execve, path, argv, environ);
}

SCL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_path(scl_real()->execvpe, file, argv, envp);
}

SCL_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_path(scl_real()->execvpe, file, argv, environ);
}

SCL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    return exec_with((struct exec_call){ .by_fd = scl_real()->fexecve, .fd = fd, .argv = argv }, envp);
}

/* glibc's fexecve makes the execveat system call itself, not this. */
SCL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    return exec_with(
        (struct exec_call){ .at = scl_real()->execveat, .fd = dirfd, .flags = flags, .path = path, .argv = argv },
        envp);
}

/*
 * execl, execle and execlp: the arguments after ARG0 in AP (and, when
 * WITH_ENV, the environment after their NULL) made into a vector in
 * ROOM, then as exec_path().
 */
static int exec_list_in(struct scl_room *room, exec_fn *real, const char *file, const char *arg0, va_list ap,
                        int with_env)
{
    char *const *envp = environ;
    char **argv, *unused;
    size_t argc = 1;
    va_list counting;
    int r;

    va_copy(counting, ap);
    while (va_arg(counting, char *) != NULL)
        argc++;
    va_end(counting);
    if (scl_room_take(room, argc + 1, 0, &argv, &unused) != 0) {
        scl_room_free(room);
        return -1; /* ENOMEM, as the kernel's own copy would fail */
    }
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= argc; i++)
        argv[i] = va_arg(ap, char *); /* the last one read is the NULL */
    if (with_env)
        envp = va_arg(ap, char *const *);
    r = exec_path(real, file, argv, envp);
    scl_room_free(room);
    return r;
}

/* Apart, so that only a caller who finds the static room taken has the
 * room in its frame. */
__attribute__((noinline)) static int exec_list_in_frame(exec_fn *real, const char *file, const char *arg0, va_list ap,
                                                        int with_env)
{
    struct scl_room room;

    scl_room_in_frame(&room);
    return exec_list_in(&room, real, file, arg0, ap, with_env);
}

static int exec_list(exec_fn *real, const char *file, const char *arg0, va_list ap, int with_env)
{
    struct scl_room *room = scl_room_claim(SCL_ROOM_ARGV);

    return room != NULL ? exec_list_in(room, real, file, arg0, ap, with_env)
                        : exec_list_in_frame(real, file, arg0, ap, with_env);
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
