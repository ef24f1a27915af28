/* SPDX-License-Identifier: MIT */
/*
 * What is in the claim directories below a base directory, for people:
 * the directories of this user (of all users, for root), their members
 * (processes alive, gone, or whose pid now belongs to another process, and
 * what each waits for) and every held claim, with its name as the
 * application wrote it and when it was taken: the listing of a store of
 * SCL_ADMIN_DIRECTORIES (store_admin.h).  Defined by inventory.c and the
 * files below, in libscl_admin: the filesystem store's tool side
 * (admin_fs.c), never the preloaded library's.
 */
#ifndef SCL_INVENTORY_H
#define SCL_INVENTORY_H

#include "budget.h"
#include "proc.h"
#include "store_admin.h"

#include <limits.h>
#include <sys/types.h>
#include <time.h>

struct inv_proc {
    pid_t pid;
    unsigned long long start;
    enum scl_proc_state state;
    int stopped;   /* alive, but stopped (SIGSTOP, a debugger) */
    int draining;  /* its page of times says it drains (swerve_claim_draining(3)) */
    uid_t uid;     /* its holder file's owner */
    char *command; /* its command line (when alive, else as it noted it), or "" */
    int execd;     /* its holder file says its image was exec'd after it was forked */
    dev_t dev;     /* its holder file */
    ino_t ino;
    size_t claim0; /* its claims: claims[claim0 .. claim0 + nheld - 1] */
    size_t nheld;
    char *waiting; /* the claim it waits for, as written, or NULL */
    char *waiting_fname;
    size_t waited; /* the claim it waits for, index into claims, or nclaims: one nobody holds */
    time_t waiting_since;
};

struct inv_claim {
    char *name;   /* as the application wrote it */
    char *fname;  /* as it is on disk */
    int holder;   /* index into procs, -1 if no member matches */
    time_t since; /* when its holder took it, or 0: not known */
    dev_t dev;
    ino_t ino;
};

struct inv_dir {
    char path[PATH_MAX];
    uid_t owner;
    int live;               /* a member is alive */
    int orphaned;           /* ... but its master (the first member) is not */
    int master;             /* index into procs of the first member, -1 if none */
    struct inv_proc *procs; /* by pid */
    size_t nprocs;
    struct inv_claim *claims; /* by holder, then by file name */
    size_t nclaims;
    size_t *waiters; /* indexes into procs of those that wait, by the claim they wait for */
    size_t nwaiters;
};

/* Opens the claim directory at PATH, never through a symlink: its claims
 * directory's descriptor, with its top's in *TOP_FD (what the top holds is
 * reached through that, never through "claims/..": attack 13 in
 * doc/security.md); -1 with errno. */
int inv_open_dir(const char *path, int *top_fd);

/* What one load of claim directories may still read (budget.h's
 * SCL_BUDGET_LOAD_*), shared by every directory of every base it looks
 * in; and how many directories it left out, each said: too big, or past
 * the load's bound. */
struct inv_budget {
    struct scl_budget entries, dirs, bytes;
    size_t unread;
};

void inv_budget_init(struct inv_budget *b);

/* Reads the claim directory at PATH, within B (NULL: a budget of its
 * own); 0, or -1 with errno, and then, said naming it and its owner:
 * E2BIG, it has more than SCL_BUDGET_DIR_ENTRIES entries; EDQUOT, it
 * would take B past its bound (which has then given up). */
int inv_load_dir(const char *path, struct inv_dir *d, struct inv_budget *b);

/* Reads every claim directory of this user (of every user, for root)
 * below BASE within B, sorted by path, and counts in *HIDDEN those it
 * left out (other users'), and in B's unread those it could not read
 * (said); 0, or -1 with errno.  Root's and this user's directories are
 * read before any other user's, so that none of theirs is left out for
 * what others planted. */
int inv_load(const char *base, struct inv_budget *b, struct inv_dir **dirs, size_t *n, size_t *hidden);

/* D's member of pid PID, or NULL. */
const struct inv_proc *inv_member(const struct inv_dir *d, pid_t pid);

/* "user NAME (uid N)", or "uid N" without a name, into OUT. */
void inv_owner_name(uid_t uid, char *out, size_t cap);

/* Frees what inv_load_dir() read into D (not D itself). */
void inv_free_dir(struct inv_dir *d);

void inv_free(struct inv_dir *dirs, size_t n);

/* "alive", "draining" (alive, and its page of times says so), "stopped",
 * "gone" or "pid-reused". */
const char *inv_proc_state(const struct inv_proc *p);

/* "live", "orphaned" (its master has ended) or "abandoned" (everybody has). */
const char *inv_dir_state(const struct inv_dir *d);

/* How `swerve-claim run`'s own namespaces are named: this, then the
 * machine's name (in the user's home) or the user's uid (in a base). */
#define INV_RUN_NAMESPACE_PREFIX "swerve-claim.run-"

/* 1 when the claim directory at PATH is a `run` namespace, else 0. */
int inv_is_run_namespace(const char *path);

/* What names the server of directory D (at PATH: D may be one read
 * without members, a kept history's) across its restarts, whose
 * directory's name is new at each: "run" for a `run` namespace, else its
 * master's systemd unit, else the first word of its master's command line
 * (its base name, a title's ':' dropped: "nginx: master process ..." is
 * nginx), else the directory's name; into OUT.  With its master's pid
 * when TITLE ("nginx[812]"): tables tell two servers of one name apart. */
void inv_server_name(const struct inv_dir *d, const char *path, int title, char *out, size_t cap);

/* What member P is to its server D: "master" (D's master: its first
 * member), "exec'd" (its image was exec'd after it was forked, as its
 * holder file says) or "worker" (any other: forked, as far as anybody
 * said).  A uWSGI worker's command line is its master's: only this tells
 * them apart. */
const char *inv_proc_role(const struct inv_dir *d, const struct inv_proc *p);

/* The directories a command works on (store_admin.h's opaque set). */
struct scl_admin_dirs {
    struct inv_dir *dir;
    size_t n;
};

/* The names the tools' messages give to a directory's claims directory
 * and its wake file. */
extern const char inv_claims_dir[], inv_wake_file[];

/* 1 when NAME (the last part of a path) is a claim directory's name. */
int inv_is_dir_name(const char *name);

/*
 * Which directories a command works on (select_fs.c, process_dirs.c):
 * what store_admin.h's scl_admin_directories says of load(), looked(),
 * select(), only_server() and run_namespace().
 */
int inv_load_selected(const char *server, long pid, struct scl_admin_dirs **dirs);
const char *inv_places_looked(void);
int inv_select_dir(const char *server, char *out, size_t cap);
int inv_only_server(const char *name, char *out, size_t cap, long *master);
int inv_run_namespace(char *base, size_t base_cap, char *name, size_t name_cap, int create);

/* Where process PID keeps its claims, as it shows them (process_dirs.c):
 * up to MAX absolute base directories into BASES, how many. */
size_t inv_process_bases(pid_t pid, char (*bases)[PATH_MAX], size_t max);

#endif
