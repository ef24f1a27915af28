/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim list's columns and rows for the filesystem store
 * (store_admin.h): each claim directory a top row, with its processes and
 * its claims under it, and each claim's waiters under the claim (under
 * the directory when they wait for a name nobody holds).
 */
#include "config.h"

#include "inventory.h"
#include "proc.h"
#include "store_admin.h"

#include <pwd.h>
#include <stdio.h>
#include <string.h>

enum column {
    COL_TYPE,
    COL_NAME,
    COL_PID,
    COL_STATE,
    COL_SINCE,
    COL_SERVER,
    COL_COMMAND,
    COL_DIR,
    COL_BLOCKER,
    COL_AGE,
    COL_USER,
    COL_ROLE,
    NCOLUMNS
};

_Static_assert(NCOLUMNS <= SCL_ADMIN_MAX_COLUMNS, "the tools have room for every column");

static const struct scl_admin_column columns[NCOLUMNS] = {
    [COL_TYPE] = { "TYPE", 7, SCL_COLUMN_USUAL, "dir, process, claim or waiter" },
    [COL_NAME] = { "NAME", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TREE, "the claim's name, or the directory's" },
    [COL_PID] = { "PID", 5, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER,
                  "its pid (a directory's: its master's)" },
    [COL_STATE] = { "STATE", 9, SCL_COLUMN_USUAL, "live, orphaned, abandoned; alive, stopped, gone, draining..." },
    [COL_SINCE] = { "SINCE", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when the claim was taken, or the wait began" },
    [COL_SERVER] = { "SERVER", 0.15, SCL_COLUMN_SERVERS | SCL_COLUMN_TRUNCATE,
                     "the server of the row, as its restarts keep it (nginx[812])" },
    [COL_COMMAND] = { "COMMAND", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE,
                      "the holder's or process's command line" },
    [COL_DIR] = { "DIR", 0.2, 0, "the claim directory's path" },
    [COL_BLOCKER] = { "BLOCKER", 7, SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER, "a waiter's: the pid holding its claim" },
    [COL_AGE] = { "AGE", 7, SCL_COLUMN_RIGHT | SCL_COLUMN_DURATION, "held or waiting for how long" },
    [COL_USER] = { "USER", 0.1, SCL_COLUMN_TRUNCATE, "the holder's, process's or directory's user" },
    [COL_ROLE] = { "ROLE", 6, 0, "master, worker or exec'd" },
};

struct row {
    const char *type, *name, *state, *command, *dir;
    const char *role;   /* a process's, its holder's or waiter's: inv_proc_role(), or NULL */
    pid_t pid, blocker; /* blocker: a waiter's, the holder of its name */
    time_t since;
    int has_user; /* uid is its holder file's owner (or the directory's) */
    uid_t uid;
};

struct emit {
    const struct scl_admin_select *sel;
    scl_admin_row_fn *each;
    void *arg;
    time_t now;
    /* Where a directory's row waits, not shown yet, when the selection is
     * of claims: shown before the first row under it (none, no row). */
    const struct row **pending;
    char *server; /* the directory's server, for the SERVER column (SERVER_MAX bytes) */
};

#define SERVER_MAX 300

/* UID's name, or its number when it has none.  The last answer is kept:
 * rows mostly share a user, and each getpwuid() opens and parses the
 * password database anew: under AddressSanitizer, whose quarantine keeps
 * what is freed, root's list of attack 15's 100,000 rows grew to 379 MB. */
static void user_name(uid_t uid, char *out, size_t cap)
{
    static char name[64];
    static uid_t cached;
    static int have;
    const struct passwd *pw;

    if (!have || cached != uid) {
        pw = getpwuid(uid);
        if (pw != NULL)
            snprintf(name, sizeof name, "%s", pw->pw_name);
        else
            snprintf(name, sizeof name, "%lu", (unsigned long)uid);
        cached = uid;
        have = 1;
    }
    snprintf(out, cap, "%s", name);
}

static void emit_row(const struct emit *e, int depth, const struct row *r)
{
    char pid[24] = "", blocker[24] = "", since[24] = "", age[24] = "", user[64] = "";
    const char *values[NCOLUMNS];

    if (e->pending != NULL && *e->pending != NULL) {
        const struct row *dir = *e->pending;
        *e->pending = NULL;
        emit_row(e, 0, dir);
    }

    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%d", (int)r->pid);
    if (r->blocker > 0)
        snprintf(blocker, sizeof blocker, "%d", (int)r->blocker);
    if (r->since > 0) {
        snprintf(since, sizeof since, "%lld", (long long)r->since);
        snprintf(age, sizeof age, "%lld", (long long)(e->now > r->since ? e->now - r->since : 0));
    }
    if (r->has_user)
        user_name(r->uid, user, sizeof user);
    values[COL_TYPE] = r->type;
    values[COL_NAME] = r->name != NULL ? r->name : "";
    values[COL_PID] = pid;
    values[COL_STATE] = r->state;
    values[COL_SINCE] = since;
    values[COL_COMMAND] = r->command;
    values[COL_AGE] = age;
    values[COL_USER] = user;
    values[COL_DIR] = r->dir;
    values[COL_SERVER] = e->server;
    values[COL_BLOCKER] = blocker;
    values[COL_ROLE] = r->role != NULL ? r->role : "";
    e->each(depth, values, e->arg);
}

/* The rows of D's processes waiting for claim J, at DEPTH, when SHOW;
 * with J D's count of claims, of those waiting for a name nobody holds
 * (just let go).  *W walks D's waiters, which are in that order. */
static void emit_waiters(const struct emit *e, int depth, const struct inv_dir *d, size_t j, size_t *w, int show)
{
    const struct inv_claim *cl = j < d->nclaims ? &d->claims[j] : NULL;
    const struct inv_proc *holder = cl != NULL && cl->holder >= 0 ? &d->procs[cl->holder] : NULL;

    for (; *w < d->nwaiters && d->procs[d->waiters[*w]].waited == j; (*w)++) {
        const struct inv_proc *p = &d->procs[d->waiters[*w]];
        struct row wr = { .type = "waiter",
                          .name = p->waiting,
                          .pid = p->pid,
                          .blocker = holder != NULL ? holder->pid : 0,
                          .state = "waiting",
                          .role = inv_proc_role(d, p),
                          .command = p->command,
                          .since = p->waiting_since,
                          .has_user = 1,
                          .uid = p->uid,
                          .dir = d->path };
        if (show && (e->sel->name == NULL || strcmp(e->sel->name, p->waiting) == 0) &&
            (e->sel->pid == 0 || e->sel->pid == p->pid))
            emit_row(e, depth, &wr);
    }
}

/* Whether a claim held by P (NULL: no member holds it) is stale: nobody
 * will release it (list --stale, metrics' swerve_claim_stale). */
static int held_by_stale(const struct inv_proc *p)
{
    return p == NULL || p->state != SCL_PROC_ALIVE || p->stopped;
}

/* Whether the claim held by P (NULL: no member holds it) since SINCE is
 * one SEL's --older-than and --stale select. */
static int selected_by_age_and_state(const struct emit *e, const struct inv_proc *p, time_t since)
{
    if (e->sel->older_than >= 0 && (since <= 0 || e->now - since <= e->sel->older_than))
        return 0;
    return !e->sel->stale || held_by_stale(p);
}

/* The rows of directory D (its processes and its claims, with their
 * waiters) that E selects: how many claims matched. */
static int emit_dir(const struct emit *e, const struct inv_dir *d)
{
    const struct scl_admin_select *sel = e->sel;
    /* Only claims: the processes are shown when nothing narrows the list
     * to claims, and the waiters of a claim not shown only when nothing
     * but a name or a pid does. */
    int claims_only = sel->name != NULL || sel->older_than >= 0 || sel->stale;
    int by_claim = sel->older_than >= 0 || sel->stale;
    int matched = 0;
    size_t w = 0;
    /* The path is the DIR column's: the tree stays narrow.  The row
     * names the server: its master's pid and command line. */
    const char *slash = strrchr(d->path, '/');
    const struct inv_proc *master = d->master >= 0 ? &d->procs[d->master] : NULL;
    struct row r = { .type = "dir",
                     .name = slash ? slash + 1 : d->path,
                     .pid = master ? master->pid : 0,
                     .state = inv_dir_state(d),
                     .command = master ? master->command : "",
                     .has_user = 1,
                     .uid = d->owner,
                     .dir = d->path };

    inv_server_name(d, d->path, 1, e->server, SERVER_MAX);
    *e->pending = claims_only ? &r : NULL;
    if (!claims_only)
        emit_row(e, 0, &r);
    for (size_t j = 0; j < d->nprocs && !claims_only; j++) {
        const struct inv_proc *p = &d->procs[j];
        struct row pr = { .type = "process",
                          .pid = p->pid,
                          .state = inv_proc_state(p),
                          .role = inv_proc_role(d, p),
                          .command = p->command,
                          .has_user = 1,
                          .uid = p->uid,
                          .dir = d->path };
        if (sel->pid == 0 || sel->pid == p->pid)
            emit_row(e, 1, &pr);
    }
    for (size_t j = 0; j < d->nclaims; j++) {
        const struct inv_claim *cl = &d->claims[j];
        const struct inv_proc *p = cl->holder >= 0 ? &d->procs[cl->holder] : NULL;
        struct row cr = { .type = "claim",
                          .name = cl->name,
                          .pid = p ? p->pid : 0,
                          .state = p ? inv_proc_state(p) : "no-holder",
                          .role = p ? inv_proc_role(d, p) : NULL,
                          .command = p ? p->command : "",
                          .since = cl->since,
                          .has_user = p != NULL,
                          .uid = p ? p->uid : 0,
                          .dir = d->path };
        int shown = (sel->name == NULL || strcmp(sel->name, cl->name) == 0) &&
                    (sel->pid == 0 || (p && p->pid == sel->pid)) && selected_by_age_and_state(e, p, cl->since);
        if (shown) {
            emit_row(e, 1, &cr);
            /* --name answers as the library does: a claim whose holder
             * has ended is nobody's (--stale and --older-than count it). */
            matched += sel->name == NULL || by_claim || (p != NULL && p->state == SCL_PROC_ALIVE);
        }
        emit_waiters(e, shown ? 2 : 1, d, j, &w, shown || !by_claim);
    }
    emit_waiters(e, 1, d, d->nclaims, &w, !by_claim);
    *e->pending = NULL; /* not shown: nothing under it was */
    return matched;
}

static int fs_rows(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg)
{
    const struct row *pending = NULL;
    char server[SERVER_MAX];
    const struct emit e = { sel, each, arg, time(NULL), &pending, server };
    int matched = 0;

    for (size_t i = 0; i < sel->dirs->n; i++)
        matched += emit_dir(&e, &sel->dirs->dir[i]);
    return matched;
}

/* EACH's sample of P (NULL: no member), with S's other fields. */
static void sample_of(const struct inv_proc *p, struct scl_admin_sample *s, scl_admin_sample_fn *each, void *arg)
{
    char user[64] = "";

    if (p != NULL) {
        user_name(p->uid, user, sizeof user);
        s->pid = p->pid;
    }
    s->user = user;
    each(s, arg);
}

static int fs_samples(const struct scl_admin_select *sel, scl_admin_sample_fn *each, void *arg)
{
    char server[256];

    for (size_t i = 0; i < sel->dirs->n; i++) {
        const struct inv_dir *d = &sel->dirs->dir[i];
        long master = d->master >= 0 ? (long)d->procs[d->master].pid : 0;
        inv_server_name(d, d->path, 0, server, sizeof server);
        for (size_t j = 0; j < d->nclaims; j++) {
            const struct inv_claim *cl = &d->claims[j];
            const struct inv_proc *p = cl->holder >= 0 ? &d->procs[cl->holder] : NULL;
            struct scl_admin_sample s = { .name = cl->name,
                                          .server = server,
                                          .server_pid = master,
                                          .state = p != NULL ? inv_proc_state(p) : "no-holder",
                                          .held = 1,
                                          .stale = held_by_stale(p),
                                          .since = cl->since };
            sample_of(p, &s, each, arg);
        }
        for (size_t w = 0; w < d->nwaiters; w++) {
            const struct inv_proc *p = &d->procs[d->waiters[w]];
            struct scl_admin_sample s = { .name = p->waiting,
                                          .server = server,
                                          .server_pid = master,
                                          .state = "waiting",
                                          .since = p->waiting_since };
            sample_of(p, &s, each, arg);
        }
    }
    return 0;
}

const struct scl_admin_listing scl_fs_listing = {
    .json_name = "directories",
    .columns = columns,
    .ncolumns = NCOLUMNS,
    .rows = fs_rows,
    .samples = fs_samples,
};
