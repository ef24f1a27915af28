/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim history's columns and rows for the filesystem store
 * (store_admin.h): the holds each claim directory's history keeps
 * (history.h), a row a hold, by name, then by when it was taken.  A
 * hold whose end is not recorded is looked up in claims/ as it is now.
 */
#include "config.h"

#include "claim.h"
#include "history.h"
#include "inventory.h"
#include "names.h"
#include "proc.h"
#include "sigsafe.h"
#include "store_admin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum column {
    COL_NAME,
    COL_PID,
    COL_TAKEN,
    COL_ENDED,
    COL_HOW,
    COL_SERVER,
    COL_COMMAND,
    COL_DURATION,
    COL_TOKEN,
    COL_DIR,
    NCOLUMNS
};

_Static_assert(NCOLUMNS <= SCL_ADMIN_MAX_COLUMNS, "the tools have room for every column");

static const struct scl_admin_column columns[NCOLUMNS] = {
    [COL_NAME] = { "NAME", 0.2, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE, "the claim's name" },
    [COL_PID] = { "PID", 7, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER, "its holder's pid" },
    [COL_TAKEN] = { "TAKEN", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when it was taken" },
    [COL_ENDED] = { "ENDED", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when it ended (empty while held)" },
    [COL_HOW] = { "HOW", 18, SCL_COLUMN_USUAL, "how it ended: released, exited, killed by signal N, ..." },
    [COL_SERVER] = { "SERVER", 0.15, SCL_COLUMN_SERVERS | SCL_COLUMN_TRUNCATE,
                     "the server of its directory (nginx[812])" },
    [COL_COMMAND] = { "COMMAND", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE, "its holder's command line" },
    [COL_DURATION] = { "DURATION", 8, SCL_COLUMN_RIGHT | SCL_COLUMN_DURATION, "held for how long" },
    [COL_TOKEN] = { "TOKEN", 20, SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER, "its fencing token" },
    [COL_DIR] = { "DIR", 0.2, 0, "the claim directory" },
};

/* A hold a history keeps: its name's slot, and its record. */
struct hold {
    const struct scl_history_name *name;
    const struct scl_history_record *rec;
};

/* When a hold began, as far as it is known: for order. */
static int64_t start_of(const struct scl_history_record *r)
{
    return r->taken != 0 ? r->taken : r->ended;
}

static int by_name_then_start(const void *a, const void *b)
{
    const struct hold *x = a, *y = b;
    int c = strcmp(x->name->fname, y->name->fname);
    int64_t s = start_of(x->rec), t = start_of(y->rec);

    return c != 0 ? c : (s > t) - (s < t);
}

/* The rows of one directory being made. */
struct emit {
    const struct scl_admin_select *sel;
    scl_admin_row_fn *each;
    void *arg;
    const struct inv_dir *d;
    const struct scl_history_file *f;
    int claims_fd;
    int64_t now;      /* CLOCK_MONOTONIC nanoseconds */
    const char *path; /* the directory's */
    char server[300]; /* its server, for the SERVER column */
};

/* The name of file name FNAME as the application wrote it, into OUT: a
 * long (hashed) one as a claim of D has it whole, else as it is. */
static void display_name(const struct inv_dir *d, const char *fname, char *out, size_t cap)
{
    if (!scl_name_is_hashed(fname)) {
        if (scl_name_decode(fname, out, cap) < 0)
            snprintf(out, cap, "%s", fname);
        return;
    }
    for (size_t j = 0; j < d->nclaims; j++)
        if (strcmp(d->claims[j].fname, fname) == 0) {
            snprintf(out, cap, "%s", d->claims[j].name);
            return;
        }
    snprintf(out, cap, "%s", fname);
}

/* What an open hold of FNAME by PID is now: held (by a live holder, or a
 * dead one not cleared yet), or ended without its end recorded (by a
 * process that could not write the history). */
static const char *open_hold(const struct emit *e, const char *fname, pid_t pid)
{
    struct scl_proc_id id;
    struct stat st;

    if (e->claims_fd < 0 || scl_claim_holder(e->claims_fd, fname, &id, &st) != 0 || id.pid != pid)
        return "ended, not recorded";
    return scl_proc_state(&id) == SCL_PROC_ALIVE ? "held" : "held, holder gone";
}

/* How hold H ended, for people, into OUT. */
static void how_text(const struct emit *e, const struct hold *h, char *out, size_t cap)
{
    static const char *const words[SCL_HOLD_HOW_COUNT] = {
        [SCL_HOLD_RELEASED] = "released", [SCL_HOLD_EXITED] = "exited",
        [SCL_HOLD_EXECD] = "exec'd",      [SCL_HOLD_CLEARED] = "cleared after death",
        [SCL_HOLD_FORCED] = "forced",     [SCL_HOLD_RETIRED] = "directory retired",
    };
    const struct scl_history_record *r = h->rec;

    if (r->how == SCL_HOLD_HELD)
        snprintf(out, cap, "%s", open_hold(e, h->name->fname, r->pid));
    else if (r->how == SCL_HOLD_KILLED)
        snprintf(out, cap, "killed by signal %u", (unsigned)r->detail);
    else if (r->how == SCL_HOLD_ENDED)
        snprintf(out, cap, "exited with status %u", (unsigned)r->detail);
    else
        snprintf(out, cap, "%s", words[r->how]);
}

static void emit_hold(const struct emit *e, const struct hold *h, const char *name)
{
    const struct scl_history_record *r = h->rec;
    char pid[24], taken[24] = "", ended[24] = "", how[48], duration[24] = "", token[24] = "";
    const char *values[NCOLUMNS];
    time_t t;
    int64_t end = r->ended != 0 ? r->ended : e->now;

    snprintf(pid, sizeof pid, "%d", (int)r->pid);
    if ((t = scl_history_when(e->f, r->taken)) > 0)
        snprintf(taken, sizeof taken, "%lld", (long long)t);
    if ((t = scl_history_when(e->f, r->ended)) > 0)
        snprintf(ended, sizeof ended, "%lld", (long long)t);
    if (r->taken > 0) {
        snprintf(duration, sizeof duration, "%lld", (long long)((end > r->taken ? end - r->taken : 0) / 1000000000LL));
        snprintf(token, sizeof token, "%lld", (long long)r->taken); /* the hold's fencing token */
    }
    how_text(e, h, how, sizeof how);
    values[COL_NAME] = name;
    values[COL_PID] = pid;
    values[COL_TAKEN] = taken;
    values[COL_ENDED] = ended;
    values[COL_HOW] = how;
    values[COL_COMMAND] = r->command;
    values[COL_DURATION] = duration;
    values[COL_TOKEN] = token;
    values[COL_DIR] = e->path;
    values[COL_SERVER] = e->server;
    e->each(0, values, e->arg);
}

/* The holds of F, by name and then by start, into *HOLDS: how many, or -1. */
static long collect(const struct scl_history_file *f, struct hold **holds)
{
    long n = 0;

    *holds = malloc(SCL_HISTORY_NAMES * SCL_HISTORY_RECORDS * sizeof **holds);
    if (*holds == NULL)
        return -1;
    for (unsigned s = 0; s < SCL_HISTORY_NAMES; s++)
        for (unsigned i = 0; f->index[s].hash != 0 && i < SCL_HISTORY_RECORDS; i++)
            if (f->slots[s].records[i].hash != 0) /* what scl_history_parse() kept */
                (*holds)[n++] = (struct hold){ &f->slots[s], &f->slots[s].records[i] };
    qsort(*holds, (size_t)n, sizeof **holds, by_name_then_start);
    return n;
}

/* The rows of E's directory's holds SEL selects, the last
 * SCL_HISTORY_RECORDS of each name (a name may have had two slots, given
 * to it by two processes at once): how many. */
static int emit_holds(const struct emit *e, const struct hold *holds, long n)
{
    char name[8192];
    int shown = 0;

    for (long first = 0, next; first < n; first = next) {
        for (next = first + 1; next < n && strcmp(holds[next].name->fname, holds[first].name->fname) == 0; next++)
            ;
        display_name(e->d, holds[first].name->fname, name, sizeof name);
        if (e->sel->name != NULL && strcmp(e->sel->name, name) != 0)
            continue;
        for (long i = next - first > SCL_HISTORY_RECORDS ? next - SCL_HISTORY_RECORDS : first; i < next; i++)
            if (e->sel->pid == 0 || e->sel->pid == holds[i].rec->pid) {
                emit_hold(e, &holds[i], name);
                shown++;
            }
    }
    return shown;
}

/* The rows of the history of the directory at PATH (D, as the tool read
 * it), or when D is NULL, of the one kept beside it (history.h): how many. */
static int emit_history(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg, const char *path,
                        const struct inv_dir *d)
{
    static const struct inv_dir none;
    struct scl_history_file *f = malloc(sizeof *f);
    struct emit e = { sel, each, arg, d != NULL ? d : &none, f, -1, scl_monotonic_ns(), path, "" };
    struct hold *holds = NULL;
    const char *slash = strrchr(path, '/');
    char *parent = NULL;
    int parent_fd = -1, loaded = -1, shown = 0;
    long n;

    inv_server_name(e.d, path, 1, e.server, sizeof e.server);
    if (f != NULL && d != NULL) {
        e.claims_fd = inv_open_dir(path, &parent_fd);
        loaded = e.claims_fd >= 0 ? scl_history_read(parent_fd, f) : -1;
    } else if (f != NULL && slash != NULL && (parent = strndup(path, (size_t)(slash - path))) != NULL) {
        parent_fd = open(parent[0] != '\0' ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        loaded = parent_fd >= 0 ? scl_history_read_kept(parent_fd, slash + 1, f) : -1;
    }
    /* None (a directory of a library before history), or none to read:
     * nothing to show. */
    if (loaded == 0 && (n = collect(f, &holds)) > 0)
        shown = emit_holds(&e, holds, n);
    if (e.claims_fd >= 0)
        close(e.claims_fd);
    if (parent_fd >= 0)
        close(parent_fd);
    free(parent);
    free(holds);
    free(f);
    return shown;
}

static int fs_history_rows(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg)
{
    int shown = 0, kept = sel->kept != NULL;

    for (size_t i = 0; i < sel->dirs->n; i++) {
        shown += emit_history(sel, each, arg, sel->dirs->dir[i].path, &sel->dirs->dir[i]);
        kept &= strcmp(sel->dirs->dir[i].path, sel->kept != NULL ? sel->kept : "") != 0;
    }
    return kept ? shown + emit_history(sel, each, arg, sel->kept, NULL) : shown;
}

const struct scl_admin_listing scl_fs_history = {
    .json_name = "holds",
    .columns = columns,
    .ncolumns = NCOLUMNS,
    .rows = fs_history_rows,
};
