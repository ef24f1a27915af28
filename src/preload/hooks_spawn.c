/* SPDX-License-Identifier: MIT */
/*
 * Starting a program beside this process: posix_spawn, posix_spawnp,
 * system and popen.  The parent lives on with its claims; only the new
 * image's environment changes (image_env.h).
 *
 * glibc's system() and popen() spawn /bin/sh through its internal
 * __posix_spawn with __environ, where no hook sees them: the shell would
 * start without SWERVE_CLAIM_DIR and claim in a directory of its own.  So
 * they are written again here over libc's posix_spawn, as glibc 2.36 has
 * them (sysdeps/posix/system.c, libio/iopopen.c).  Neither is
 * async-signal-safe in libc, so a mutex and malloc are fine in them;
 * posix_spawn is, and so is its hook.
 *
 * popen is written again rather than run with environ swapped for a copy
 * that names the directory: another thread's getenv, setenv or unsetenv
 * would see the copy or change it while it is there (an unsetenv lost,
 * the variable left in the host's own environment), and a copy a reader
 * may still hold could never be freed.  What that costs: the streams are
 * ours (fdopen'ed), so pclose, and fclose, which is glibc's pclose too,
 * are hooked to wait for their shell, and any other stream still goes to
 * libc's.
 */
#include "config.h"

#include "export.h"
#include "hot.h"
#include "image_env.h"
#include "lifecycle.h"
#include "real.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                     char *const[], char *const[]);

/* One posix_spawn or posix_spawnp but its environment, for
 * scl_start_image(). */
struct spawn_call {
    spawn_fn *real;
    pid_t *pid;
    const char *file;
    const posix_spawn_file_actions_t *actions;
    const posix_spawnattr_t *attr;
    char *const *argv;
};

static int spawn_call(void *arg, char *const envp[])
{
    const struct spawn_call *c = arg;

    return c->real(c->pid, c->file, c->actions, c->attr, c->argv, envp);
}

/* posix_spawn and posix_spawnp alike: only the environment changes.  A
 * master that spawns its workers hands them its place as one that forks
 * does (scl_starting_child()), and records them for its drain signals. */
static int spawn(spawn_fn *real, pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    pid_t child = -1;
    struct spawn_call c = { real, &child, file, actions, attr, argv };
    int r;

    if (real == NULL)
        return ENOSYS; /* posix_spawn returns its error */
    scl_starting_child();
    r = scl_start_image(spawn_call, &c, envp, 1);
    if (r == 0) {
        scl_forked(child);
        if (pid != NULL)
            *pid = child;
    }
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

/* /bin/sh -c COMMAND, as glibc 2.36 starts it (no "--").  Apart from
 * run_system(), whose frame holds a spawn attribute and three signal
 * sets already: together they would pass the stack budget. */
__attribute__((noinline)) static int spawn_shell(pid_t *pid, const posix_spawn_file_actions_t *actions,
                                                 const posix_spawnattr_t *attr, const char *command)
{
    char *argv[] = { "sh", "-c", (char *)command, NULL };

    return spawn(scl_real()->posix_spawn, pid, _PATH_BSHELL, actions, attr, argv, environ);
}

/* The calls to our system() under way, and the SIGINT and SIGQUIT
 * dispositions the first of them found: the last one to end puts them
 * back. */
static pthread_mutex_t system_lock = PTHREAD_MUTEX_INITIALIZER;
static int system_calls;
static struct sigaction system_intr, system_quit;

static void system_end(void)
{
    pthread_mutex_lock(&system_lock);
    if (--system_calls == 0) {
        (void)sigaction(SIGINT, &system_intr, NULL);
        (void)sigaction(SIGQUIT, &system_quit, NULL);
    }
    pthread_mutex_unlock(&system_lock);
}

/* A thread cancelled while it waits for its shell kills and reaps it,
 * as glibc's does. */
static void system_cancelled(void *arg)
{
    pid_t pid = *(pid_t *)arg;
    int state;

    (void)scl_kill(pid, SIGKILL);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
    while (scl_waitpid_reaping(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    pthread_setcancelstate(state, NULL);
    system_end();
}

/* The shell's status, or -1.  waitpid is a cancellation point, where
 * system_cancelled() takes over.  The shell is reaped as the waitpid hook
 * reaps (its claims cleared), as a host's own wait would reap it. */
static int wait_shell(pid_t pid)
{
    int status = -1;
    pid_t r;

    pthread_cleanup_push(system_cancelled, &pid);
    while ((r = scl_waitpid_reaping(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    pthread_cleanup_pop(0);
    return r == pid ? status : -1;
}

/* glibc's do_system(). */
static int run_system(const char *line)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN };
    sigset_t chld, omask, reset;
    posix_spawnattr_t attr;
    int status, ret;
    pid_t pid;

    sigemptyset(&ignore.sa_mask);
    sigemptyset(&reset);
    pthread_mutex_lock(&system_lock);
    if (system_calls++ == 0) {
        (void)sigaction(SIGINT, &ignore, &system_intr);
        (void)sigaction(SIGQUIT, &ignore, &system_quit);
    }
    if (system_intr.sa_handler != SIG_IGN)
        sigaddset(&reset, SIGINT);
    if (system_quit.sa_handler != SIG_IGN)
        sigaddset(&reset, SIGQUIT);
    pthread_mutex_unlock(&system_lock);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    (void)sigprocmask(SIG_BLOCK, &chld, &omask);

    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &omask);
    posix_spawnattr_setsigdefault(&attr, &reset);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    ret = spawn_shell(&pid, NULL, &attr, line);
    posix_spawnattr_destroy(&attr);
    status = ret == 0 ? wait_shell(pid) : W_EXITCODE(127, 0); /* POSIX: as if the shell had run _exit(127) */
    system_end();
    (void)sigprocmask(SIG_SETMASK, &omask, NULL);
    if (ret != 0)
        errno = ret;
    return status;
}

SCL_EXPORT int system(const char *line)
{
    int (*real)(const char *) = scl_real()->system;

    /* The place reserved first, as for any child: then the shell gets it
     * whenever it loads the shim. */
    scl_starting_child();
    if (real != NULL && !scl_image_env_differs(environ))
        return real(line);
    if (line == NULL)
        return run_system("exit 0") == 0; /* is there a shell (after a chroot, say)? */
    return run_system(line);
}

/* Our popen's streams, each with its descriptor and its shell: what a
 * new shell must close (POSIX), and how pclose tells ours from others. */
struct piped {
    FILE *stream;
    int fd;
    pid_t pid;
    struct piped *next;
};

static pthread_mutex_t piped_lock = PTHREAD_MUTEX_INITIALIZER;
static struct piped *piped_streams;
/* How many, read without the lock by every fclose: hot (hot.h), as a
 * program's last fclose at exit would otherwise fault in a .bss page. */
SCL_HOT static atomic_int piped_count;

/*
 * popen holds piped_lock across its posix_spawn, as glibc holds its own
 * (a stream opened meanwhile must be closed in the new shell too).  A fork
 * in another thread then would leave the child a lock nobody will give
 * back, and every fclose there would hang: so a child of a fork made while
 * it was held (only then: nothing is written in the others) starts with
 * it anew.
 */
static atomic_int piped_lock_held;
static pthread_once_t piped_atfork_once = PTHREAD_ONCE_INIT;

static void piped_after_fork_in_child(void)
{
    if (atomic_load(&piped_lock_held)) {
        pthread_mutex_init(&piped_lock, NULL);
        atomic_store(&piped_lock_held, 0);
    }
}

static void piped_register_atfork(void)
{
    (void)pthread_atfork(NULL, NULL, piped_after_fork_in_child);
}

static void piped_lock_take(void)
{
    pthread_mutex_lock(&piped_lock);
    atomic_store(&piped_lock_held, 1);
}

static void piped_lock_give(void)
{
    atomic_store(&piped_lock_held, 0);
    pthread_mutex_unlock(&piped_lock);
}

/* Under piped_lock: the other streams' descriptors closed in the child,
 * but CHILD_FD, which it gets anew. */
static int close_others(posix_spawn_file_actions_t *actions, int child_fd)
{
    for (struct piped *p = piped_streams; p != NULL; p = p->next)
        if (p->fd != child_fd && posix_spawn_file_actions_addclose(actions, p->fd) != 0)
            return -1;
    return 0;
}

/* glibc's _IO_new_proc_open(), over a stream of fdopen's. */
/* popen's MODE: "r" or "w", with "e" for close-on-exec.  0, *READING and
 * *CLOEXEC, or -1 with errno EINVAL (as glibc says of "rw" or "x"). */
static int parse_mode(const char *mode, int *reading, int *cloexec)
{
    int writing = 0;

    *reading = *cloexec = 0;
    for (const char *m = mode; *m != '\0'; m++) {
        if (*m == 'r')
            *reading = 1;
        else if (*m == 'w')
            writing = 1;
        else if (*m == 'e')
            *cloexec = 1;
        else
            *reading = writing = 1; /* refused below, as "rw" is */
    }
    if (*reading == writing) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Starts COMMAND's shell with CHILD_END (a descriptor of P's pipe) as its
 * CHILD_FD and no other stream of ours, and lists P: 1, or 0 when it
 * could not. */
static int start_piped(struct piped *p, int child_end, int child_fd, const char *command)
{
    posix_spawn_file_actions_t actions;
    int started;

    posix_spawn_file_actions_init(&actions);
    (void)pthread_once(&piped_atfork_once, piped_register_atfork);
    piped_lock_take();
    started = posix_spawn_file_actions_adddup2(&actions, child_end, child_fd) == 0 &&
              close_others(&actions, child_fd) == 0 && spawn_shell(&p->pid, &actions, NULL, command) == 0;
    if (started) {
        p->next = piped_streams;
        piped_streams = p;
        atomic_fetch_add(&piped_count, 1);
    }
    piped_lock_give();
    posix_spawn_file_actions_destroy(&actions);
    return started;
}

SCL_EXPORT FILE *popen(const char *command, const char *mode)
{
    int reading, cloexec, fds[2], parent_end, child_end, child_fd, started;
    struct piped *p;

    scl_lifecycle_init();
    if (parse_mode(mode, &reading, &cloexec) != 0)
        return NULL;
    if (scl_real()->fclose == NULL) {
        scl_real_missing();
        return NULL;
    }
    if ((p = malloc(sizeof *p)) == NULL)
        return NULL;
    /* Close-on-exec from the start, so that a fork in another thread does
     * not inherit the child's end. */
    if (pipe2(fds, O_CLOEXEC) < 0) {
        free(p);
        return NULL;
    }
    parent_end = reading ? 0 : 1;
    child_end = 1 - parent_end;
    child_fd = reading ? 1 : 0;
    /* Already on the number the child needs: dup2 onto itself would leave
     * it close-on-exec, so it moves. */
    if (fds[child_end] == child_fd) {
        int moved = fcntl(child_fd, F_DUPFD_CLOEXEC, 0);
        scl_close_quietly(child_fd);
        fds[child_end] = moved;
    }
    p->fd = fds[parent_end];
    p->stream = fds[child_end] >= 0 ? fdopen(p->fd, reading ? "r" : "w") : NULL;
    started = p->stream != NULL && start_piped(p, fds[child_end], child_fd, command);
    if (fds[child_end] >= 0)
        scl_close_quietly(fds[child_end]);
    if (!started) {
        if (p->stream != NULL)
            (void)scl_real()->fclose(p->stream);
        else
            scl_close_quietly(p->fd);
        free(p);
        errno = ENOMEM; /* what glibc says of any failure here */
        return NULL;
    }
    if (!cloexec)
        (void)fcntl(p->fd, F_SETFD, 0);
    return p->stream;
}

/* STREAM's entry, taken off the list: NULL when our popen did not open it. */
static struct piped *piped_take(FILE *stream)
{
    struct piped *found = NULL;

    if (atomic_load(&piped_count) == 0)
        return NULL; /* every fclose of a host with no popen stream open */
    piped_lock_take();
    for (struct piped **link = &piped_streams; *link != NULL; link = &(*link)->next) {
        if ((*link)->stream == stream) {
            found = *link;
            *link = found->next;
            atomic_fetch_sub(&piped_count, 1);
            break;
        }
    }
    piped_lock_give();
    return found;
}

/*
 * glibc's pclose(): the stream closed (its shell sees the end of its
 * input), then the shell's status, or -1.  Cancellation is held off while
 * it waits, as glibc's does.  REAL closes any other stream.
 */
static int close_stream(FILE *stream, int (*real)(FILE *))
{
    struct piped *p = piped_take(stream);
    pid_t pid, r;
    int closed, status = -1, state;

    if (real == NULL)
        return scl_real_missing();
    if (p == NULL)
        return real(stream);
    pid = p->pid;
    free(p);
    closed = scl_real()->fclose(stream);
    do {
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
        r = scl_waitpid_reaping(pid, &status, 0);
        pthread_setcancelstate(state, NULL);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return -1;
    return status != 0 || closed == 0 ? status : EOF;
}

SCL_EXPORT int pclose(FILE *stream)
{
    return close_stream(stream, scl_real()->pclose);
}

SCL_EXPORT int fclose(FILE *stream)
{
    return close_stream(stream, scl_real()->fclose);
}
