/* swerve-claim list: every claim directory, its processes and its claims,
 * as a tree, raw lines or JSON (table.h prints them). */
#include "config.h"

#include "inventory.h"
#include "store_admin.h"
#include "table.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum column { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND, COL_DIR, COL_BLOCKER, NCOLUMNS };

static const struct table_column columns[NCOLUMNS] = {
    [COL_TYPE] = { .name = "TYPE", .width = 7 },
    [COL_NAME] = { .name = "NAME", .width = 0.3, .tree = 1 },
    [COL_PID] = { .name = "PID", .width = 5, .right = 1, .number = 1 },
    [COL_STATE] = { .name = "STATE", .width = 9 },
    [COL_SINCE] = { .name = "SINCE", .width = 25 },
    [COL_COMMAND] = { .name = "COMMAND", .width = 0.3, .truncate = 1 },
    [COL_DIR] = { .name = "DIR", .width = 0.2 },
    [COL_BLOCKER] = { .name = "BLOCKER", .width = 7, .right = 1, .number = 1 },
};

struct row {
    const char *type, *name, *state, *command, *dir;
    pid_t pid, blocker; /* blocker: a waiter's, the holder of its name */
    time_t since;
};

/* What to list, and how (list's options). */
struct listing {
    const char *server, *name, *output;
    pid_t pid;        /* -p: only this process's rows, or 0 */
    const char *host; /* -p PID@HOST: its host (a shared store's) */
    enum table_style style;
    int noheadings, notruncate, all_columns;
};

static void add_row(struct table_row *ln, const int *shown, int nshown, const struct row *r, int json)
{
    char pid[24] = "", blocker[24] = "", since[40] = "";

    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%d", (int)r->pid);
    if (r->blocker > 0)
        snprintf(blocker, sizeof blocker, "%d", (int)r->blocker);
    if (r->since > 0)
        tool_format_time(r->since, json, since, sizeof since);
    for (int i = 0; i < nshown; i++) {
        const char *v = "";
        switch (shown[i]) {
        case COL_TYPE: v = r->type; break;
        case COL_NAME: v = r->name; break;
        case COL_PID: v = pid; break;
        case COL_STATE: v = r->state; break;
        case COL_SINCE: v = since; break;
        case COL_COMMAND: v = r->command; break;
        case COL_DIR: v = r->dir; break;
        case COL_BLOCKER: v = blocker; break;
        }
        table_set(ln, i, v);
    }
}

/* The rows of D's processes waiting for claim J, under PARENT; with J
 * D's count of claims, of those waiting for a name nobody holds (just let
 * go).  *W walks D's waiters, which are in that order. */
static void add_waiters(struct table *tb, struct table_row *parent, const struct inv_dir *d, size_t j, size_t *w,
                        const int *shown, int nshown, const struct listing *l)
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
        if ((l->name == NULL || strcmp(l->name, p->waiting) == 0) && (l->pid == 0 || l->pid == p->pid))
            add_row(table_row(tb, parent), shown, nshown, &wr, l->style == TABLE_JSON);
    }
}

/* The table's columns for L; how many, or -1 (said why). */
static int choose_columns(const struct listing *l, int *shown, struct table_column *cols)
{
    static const int usual[] = { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND };
    int n = 0;

    if (l->output != NULL) {
        if ((n = tool_parse_columns(l->output, columns, NCOLUMNS, shown)) < 0)
            return -1;
    } else if (l->all_columns) {
        for (; n < NCOLUMNS; n++)
            shown[n] = n;
    } else {
        for (; n < (int)(sizeof usual / sizeof usual[0]); n++)
            shown[n] = usual[n];
    }
    for (int i = 0; i < n; i++) {
        cols[i] = columns[shown[i]];
        cols[i].number |= l->style == TABLE_JSON && shown[i] == COL_SINCE; /* epoch seconds */
        if (l->notruncate)
            cols[i].truncate = 0;
    }
    return n;
}

/* Prints the listing once: the exit status. */
/* The rows of directory D (its processes and its claims, with their
 * waiters) that L selects: how many claims matched. */
static int add_dir(struct table *tb, const struct inv_dir *d, const int *shown, int nshown, const struct listing *l)
{
    int json = l->style == TABLE_JSON, matched = 0;
    struct table_row *top = table_row(tb, NULL);
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

    add_row(top, shown, nshown, &r, json);
    for (size_t j = 0; j < d->nprocs && l->name == NULL; j++) {
        const struct inv_proc *p = &d->procs[j];
        struct row pr = {
            .type = "process", .pid = p->pid, .state = inv_proc_state(p), .command = p->command, .dir = d->path
        };
        if (l->pid == 0 || l->pid == p->pid)
            add_row(table_row(tb, top), shown, nshown, &pr, json);
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
        struct table_row *claim_row = NULL;
        if ((l->name == NULL || strcmp(l->name, cl->name) == 0) && (l->pid == 0 || (p && p->pid == l->pid))) {
            add_row(claim_row = table_row(tb, top), shown, nshown, &cr, json);
            matched++;
        }
        add_waiters(tb, claim_row != NULL ? claim_row : top, d, j, &w, shown, nshown, l);
    }
    add_waiters(tb, top, d, d->nclaims, &w, shown, nshown, l);
    return matched;
}

static int list_once(const struct listing *l)
{
    struct table_column cols[NCOLUMNS];
    int shown[NCOLUMNS], nshown, matched = 0, loaded;
    struct table *tb;
    struct inv_dir *dirs;
    size_t n;

    if ((nshown = choose_columns(l, shown, cols)) < 0)
        return TOOL_USAGE;
    if ((loaded = tool_load_selected(l->server, &dirs, &n)) < 0)
        return TOOL_FAILURE;
    if ((tb = table_new("directories", cols, nshown, l->style, l->noheadings)) == NULL) {
        inv_free(dirs, n);
        return TOOL_FAILURE;
    }
    for (size_t i = 0; i < n; i++)
        matched += add_dir(tb, &dirs[i], shown, nshown, l);
    table_print_and_free(tb);
    inv_free(dirs, n);
    if (l->name != NULL && matched == 0) { /* for scripts and monitoring, as grep(1) */
        tool_error("no claim named '%s'", l->name);
        return TOOL_FAILURE;
    }
    return loaded > 0 ? TOOL_FAILURE : TOOL_OK; /* a directory not read: said */
}

/* Lists once, from the claim directories or the store. */
static int list_any(const struct listing *l)
{
    struct tool_store_listing s = { .name = l->name,
                                    .output = l->output,
                                    .all_columns = l->all_columns,
                                    .style = (int)l->style,
                                    .noheadings = l->noheadings,
                                    .notruncate = l->notruncate,
                                    .pid = l->pid,
                                    .host = l->host };

    return scl_store_admin()->can & SCL_ADMIN_SESSIONS ? tool_list_store(&s) : list_once(l);
}

/* --watch: the listing again every PERIOD seconds, like watch(1), until
 * interrupted; the screen is cleared first when it is one.  A failure
 * (the store's server away) is said and the watch goes on. */
__attribute__((noreturn)) static void watch(const struct listing *l, double period)
{
    const struct timespec every = { (time_t)period, (long)((period - (double)(time_t)period) * 1e9) };

    for (;;) {
        struct timespec left = every;
        if (isatty(STDOUT_FILENO))
            fputs("\033[H\033[2J", stdout);
        (void)list_any(l);
        fflush(stdout);
        while (nanosleep(&left, &left) != 0 && errno == EINTR)
            ;
    }
}

int tool_list(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "name", required_argument, NULL, 'n' },
        { "pid", required_argument, NULL, 'p' },
        { "json", no_argument, NULL, 'J' },
        { "raw", no_argument, NULL, 'r' },
        { "noheadings", no_argument, NULL, 'H' },
        { "notruncate", no_argument, NULL, 'u' },
        { "output", required_argument, NULL, 'o' },
        { "output-all", no_argument, NULL, 'O' },
        { "watch", optional_argument, NULL, 'w' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    struct listing l = { .style = TABLE_TREE };
    double period = 0;
    int c;
    char *end;
    long pid;

    while ((c = tool_getopt(argc, argv, "s:n:p:JrHuo:Ow::", opts)) != -1) {
        switch (c) {
        case 's': l.server = optarg; break;
        case 'n': l.name = optarg; break;
        case 'p':
            pid = strtol(optarg, &end, 10);
            if (*end == '@' && end[1] != '\0') /* PID@HOST: a process of another machine (a shared store's) */
                l.host = end + 1;
            else if (*end != '\0')
                pid = 0;
            if (end == optarg || pid <= 0 || pid > INT_MAX)
                return tool_usage_error("list: --pid takes a process ID (PID@HOST with SWERVE_CLAIM_STORE)");
            l.pid = (pid_t)pid;
            break;
        case 'J': l.style = TABLE_JSON; break;
        case 'r': l.style = TABLE_RAW; break;
        case 'H': l.noheadings = 1; break;
        case 'u': l.notruncate = 1; break;
        case 'o': l.output = optarg; break;
        case 'O': l.all_columns = 1; break;
        case 'w':
            period = optarg != NULL ? strtod(optarg, &end) : 2.0;
            if (optarg != NULL && (*end != '\0' || !(period >= 0.1 && period <= 86400)))
                return tool_usage_error("list: --watch takes seconds, 0.1 or more");
            break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("list takes no arguments");
    if ((scl_store_admin()->can & SCL_ADMIN_SESSIONS) && l.server != NULL)
        return tool_usage_error("list: --server is for local claim directories, not SWERVE_CLAIM_STORE");
    if ((scl_store_admin()->can & SCL_ADMIN_DIRECTORIES) && l.host != NULL)
        return tool_usage_error("list: --pid PID@HOST is for SWERVE_CLAIM_STORE: local claims are this host's");
    if (period > 0)
        watch(&l, period);
    return list_any(&l);
}
