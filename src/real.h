/*
 * libc's own versions of the functions the shim hooks, looked up with
 * dlsym(RTLD_NEXT, ...).  Bound in the constructor and, since another
 * library's constructor may fork or exit before ours runs, again lazily
 * by every hook (binding is idempotent and allocates nothing of ours).
 */
#ifndef SCL_REAL_H
#define SCL_REAL_H

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

struct scl_real {
    pid_t (*fork)(void);
    void (*exit_)(int);
    void (*Exit)(int);
    void (*quick_exit)(int);
    pid_t (*wait)(int *);
    pid_t (*waitpid)(pid_t, int *, int);
    pid_t (*wait3)(int *, int, struct rusage *);
    pid_t (*wait4)(pid_t, int *, int, struct rusage *);
    int (*waitid)(idtype_t, id_t, siginfo_t *, int);
};

/* Binds what is not bound yet and returns the table.  A symbol that
 * cannot be found stays NULL; each hook says what it does then. */
const struct scl_real *scl_real(void);

#endif
