/*
 * swerve-claim list's columns and rows for the filesystem store
 * (store_admin.h): each claim directory a top row, with its processes and
 * its claims under it, and each claim's waiters under the claim (under
 * the directory when they wait for a name nobody holds).
 */
#include "config.h"

#include "inventory.h"
#include "store_admin.h"

#include <stdio.h>
#include <string.h>

enum column { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND, COL_DIR, COL_BLOCKER, NCOLUMNS };

_Static_assert(NCOLUMNS <= SCL_ADMIN_MAX_COLUMNS, "the tools have room for every column");

static const struct scl_admin_column columns[NCOLUMNS] = {
    [COL_TYPE] = { "TYPE", 7, SCL_COLUMN_USUAL },
    [COL_NAME] = { "NAME", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TREE },
    [COL_PID] = { "PID", 5, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER },
    [COL_STATE] = { "STATE", 9, SCL_COLUMN_USUAL },
    [COL_SINCE] = { "SINCE", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME },
    [COL_COMMAND] = { "COMMAND", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE },
    [COL_DIR] = { "DIR", 0.2, 0 },
    [COL_BLOCKER] = { "BLOCKER", 7, SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER },
};

struct row {
    const char *type, *name, *state, *command, *dir;
    pid_t pid, blocker; /* blocker: a waiter's, the holder of its name */
    time_t since;
};

struct emit {
    const struct scl_admin_select *sel;
    scl_admin_row_fn *each;
    void *arg;
};

static void emit_row(const struct emit *e, int depth, const struct row *r)
{
    char pid[24] = "", blocker[24] = "", since[24] = "";
    const char *values[NCOLUMNS];

    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%d", (int)r->pid);
    if (r->blocker > 0)
        snprintf(blocker, sizeof blocker, "%d", (int)r->blocker);
    if (r->since > 0)
        snprintf(since, sizeof since, "%lld", (long long)r->since);
    values[COL_TYPE] = r->type;
    values[COL_NAME] = r->name != NULL ? r->name : "";
    values[COL_PID] = pid;
    values[COL_STATE] = r->state;
    values[COL_SINCE] = since;
    values[COL_COMMAND] = r->command;
    values[COL_DIR] = r->dir;
    values[COL_BLOCKER] = blocker;
    e->each(depth, values, e->arg);
}

/* The rows of D's processes waiting for claim J, at DEPTH; with J D's
 * count of claims, of those waiting for a name nobody holds (just let
 * go).  *W walks D's waiters, which are in that order. */
static void emit_waiters(const struct emit *e, int depth, const struct inv_dir *d, size_t j, size_t *w)
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
                          .command = p->command,
                          .since = p->waiting_since,
                          .dir = d->path };
        if ((e->sel->name == NULL || strcmp(e->sel->name, p->waiting) == 0) &&
            (e->sel->pid == 0 || e->sel->pid == p->pid))
            emit_row(e, depth, &wr);
    }
}

/* The rows of directory D (its processes and its claims, with their
 * waiters) that E selects: how many claims matched. */
static int emit_dir(const struct emit *e, const struct inv_dir *d)
{
    const struct scl_admin_select *sel = e->sel;
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
                     .dir = d->path };

    emit_row(e, 0, &r);
    for (size_t j = 0; j < d->nprocs && sel->name == NULL; j++) {
        const struct inv_proc *p = &d->procs[j];
        struct row pr = {
            .type = "process", .pid = p->pid, .state = inv_proc_state(p), .command = p->command, .dir = d->path
        };
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
                          .command = p ? p->command : "",
                          .since = cl->since,
                          .dir = d->path };
        int shown =
            (sel->name == NULL || strcmp(sel->name, cl->name) == 0) && (sel->pid == 0 || (p && p->pid == sel->pid));
        if (shown) {
            emit_row(e, 1, &cr);
            matched++;
        }
        emit_waiters(e, shown ? 2 : 1, d, j, &w);
    }
    emit_waiters(e, 1, d, d->nclaims, &w);
    return matched;
}

static int fs_rows(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg)
{
    const struct emit e = { sel, each, arg };
    int matched = 0;

    for (size_t i = 0; i < sel->ndirs; i++)
        matched += emit_dir(&e, &sel->dirs[i]);
    return matched;
}

const struct scl_admin_listing scl_fs_listing = {
    .json_name = "directories",
    .columns = columns,
    .ncolumns = NCOLUMNS,
    .rows = fs_rows,
};
