/* SPDX-License-Identifier: MIT */
/*
 * libc's own versions of the functions the shim hooks, looked up with
 * dlsym(RTLD_NEXT, ...).  Bound in the constructor and, since another
 * library's constructor may fork or exit before ours runs, again lazily
 * by every hook (binding is idempotent and allocates nothing of ours).
 */
#ifndef SCL_REAL_H
#define SCL_REAL_H

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

struct scl_real {
    pid_t (*fork)(void);
    int (*clone)(int (*)(void *), void *, int, void *, ...);
    void (*exit_)(int);
    void (*Exit)(int);
    void (*quick_exit)(int);
    pid_t (*wait)(int *);
    pid_t (*waitpid)(pid_t, int *, int);
    pid_t (*wait3)(int *, int, struct rusage *);
    pid_t (*wait4)(pid_t, int *, int, struct rusage *);
    int (*waitid)(idtype_t, id_t, siginfo_t *, int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                       char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
    int (*system)(const char *);
    int (*pclose)(FILE *);
    int (*fclose)(FILE *);
    int (*chroot)(const char *);
    int (*setuid)(uid_t);
    int (*setreuid)(uid_t, uid_t);
    int (*setresuid)(uid_t, uid_t, uid_t);
    int (*close)(int);
    int (*close_range)(unsigned, unsigned, int);
    void (*closefrom)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*kill)(pid_t, int);
    int (*killpg)(pid_t, int);
    int (*tgkill)(pid_t, pid_t, int);
    int (*sigqueue)(pid_t, int, const union sigval);
    int (*raise)(int);
    void (*abort)(void);
    int (*bind)(int, const struct sockaddr *, socklen_t);
    int (*listen)(int, int);
    int (*shutdown)(int, int);
};

/* Binds what is not bound yet and returns the table.  A symbol that
 * cannot be found stays NULL; each hook says what it does then. */
const struct scl_real *scl_real(void);

/* What a hook returns when libc's function could not be bound: -1 with
 * errno ENOSYS, as a libc without it would. */
int scl_real_missing(void);

#endif
