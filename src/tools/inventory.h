/*
 * What is in the claim directories below a base directory, for people:
 * the directories of this user (of all users, for root), their members
 * (processes alive, gone, or whose pid now belongs to another process, and
 * what each waits for) and every held claim, with its name as the
 * application wrote it and when it was taken.  Used by the swerve-claim
 * tool, never by the preloaded library.
 */
#ifndef SCL_INVENTORY_H
#define SCL_INVENTORY_H

#include "names.h"
#include "proc.h"
#include "times.h"

#include <limits.h>
#include <sys/types.h>
#include <time.h>

struct inv_proc {
    pid_t pid;
    unsigned long long start;
    enum scl_proc_state state;
    int stopped;       /* alive, but stopped (SIGSTOP, a debugger) */
    char command[512]; /* its command line, when alive */
    dev_t dev;         /* its holder file */
    ino_t ino;
    struct scl_times_page *times; /* when it took its claims (times.h), or NULL */
    char *waiting;                /* the claim it waits for, as written, or NULL */
    char waiting_fname[SCL_FNAME_MAX];
    time_t waiting_since;
};

struct inv_claim {
    char *name;                /* as the application wrote it */
    char fname[SCL_FNAME_MAX]; /* as it is on disk */
    int holder;                /* index into procs, -1 if no member matches */
    time_t since;              /* when its holder took it, or 0: not known */
    dev_t dev;
    ino_t ino;
};

struct inv_dir {
    char path[PATH_MAX];
    int live;     /* a member is alive */
    int orphaned; /* ... but its master (the first member) is not */
    int master;   /* index into procs of the first member, -1 if none */
    struct inv_proc *procs;
    size_t nprocs;
    struct inv_claim *claims;
    size_t nclaims;
};

/* Opens the claim directory at PATH, never through a symlink: its claims
 * directory's descriptor, with its top's in *TOPFD (what the top holds is
 * reached through that, never through "claims/..": attack 13 in
 * doc/security.md); -1 with errno. */
int inv_open_dir(const char *path, int *topfd);

/* Reads the claim directory at PATH; 0, or -1 with errno. */
int inv_load_dir(const char *path, struct inv_dir *d);

/* Reads every claim directory of this user (of every user, for root)
 * below BASE, sorted by path, and counts in *HIDDEN those it left out
 * (other users'); 0, or -1 with errno. */
int inv_load(const char *base, struct inv_dir **dirs, size_t *n, size_t *hidden);

/* The directory of DIRS that process PID is a live member of, else one it
 * was a member of (a dead master's directory, still there), or NULL. */
struct inv_dir *inv_find_member(struct inv_dir *dirs, size_t n, pid_t pid);

/* Frees what inv_load_dir() read into D (not D itself). */
void inv_free_dir(struct inv_dir *d);

void inv_free(struct inv_dir *dirs, size_t n);

/* "alive", "stopped", "gone" or "pid-reused". */
const char *inv_proc_state(const struct inv_proc *p);

/* "live", "orphaned" (its master has ended) or "abandoned" (everybody has). */
const char *inv_dir_state(const struct inv_dir *d);

#endif
