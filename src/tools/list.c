/* swerve-claim list: the store's rows in the store's columns
 * (store_admin.h), as a tree, raw lines or JSON (table.h prints them):
 * which directories a filesystem store lists is dirs.c's. */
#include "config.h"

#include "inventory.h"
#include "settings.h"
#include "store_admin.h"
#include "table.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* What to list, and how (list's options). */
struct listing {
    const char *server, *name, *output;
    pid_t pid;        /* -p: only this process's rows, or 0 */
    const char *host; /* -p PID@HOST: its host (a shared store's) */
    enum table_style style;
    int noheadings, notruncate, all_columns;
    long long older_than; /* --older-than, in seconds, or -1 */
    int stale;            /* --stale */
};

/* The table being filled: the store's rows go in under their parents. */
struct filling {
    struct table *table;
    const int *shown; /* the store's column of each of the table's */
    int nshown, json;
    const struct scl_admin_column *columns;
    struct table_row *last[4]; /* the last row at each depth */
};

/* Parses LIST, comma-separated names of the store's COLS (any case), into
 * SHOWN: how many, or says why not and returns -1. */
static int parse_columns(const char *list, const struct scl_admin_column *cols, int ncols, int *shown)
{
    char *copy = strdup(list), *tok, *save = NULL, names[256] = "";
    int n = 0;

    if (copy == NULL) {
        tool_error("out of memory");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < ncols; c++)
            if (strcasecmp(tok, cols[c].name) == 0)
                found = c;
        if (found < 0 || n == ncols) {
            for (int c = 0; c < ncols; c++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c ? "," : "", cols[c].name);
            tool_error("unknown column '%s' (columns: %s)", tok, names);
            free(copy);
            return -1;
        }
        shown[n++] = found;
    }
    free(copy);
    return n;
}

/* The table's columns for L, of the store's LS: how many, or -1 (said
 * why). */
static int choose_columns(const struct listing *l, const struct scl_admin_listing *ls, int *shown,
                          struct table_column *cols)
{
    int n = 0;

    if (l->output != NULL) {
        if ((n = parse_columns(l->output, ls->columns, ls->ncolumns, shown)) < 0)
            return -1;
    } else {
        for (int c = 0; c < ls->ncolumns; c++)
            if (l->all_columns || (ls->columns[c].flags & SCL_COLUMN_USUAL))
                shown[n++] = c;
    }
    for (int i = 0; i < n; i++) {
        const struct scl_admin_column *c = &ls->columns[shown[i]];
        cols[i] = (struct table_column){
            .name = c->name,
            .width = c->width,
            .tree = (c->flags & SCL_COLUMN_TREE) != 0,
            .right = (c->flags & SCL_COLUMN_RIGHT) != 0,
            .truncate = (c->flags & SCL_COLUMN_TRUNCATE) != 0 && !l->notruncate,
            .number = (c->flags & SCL_COLUMN_NUMBER) != 0 ||
                      (l->style == TABLE_JSON && (c->flags & (SCL_COLUMN_TIME | SCL_COLUMN_DURATION))), /* seconds */
        };
    }
    return n;
}

static void add_row(int depth, const char *const *values, void *arg)
{
    struct filling *f = arg;
    int max = (int)(sizeof f->last / sizeof f->last[0]) - 1;
    struct table_row *row;

    depth = depth < 0 ? 0 : depth > max ? max : depth;
    row = table_row(f->table, depth > 0 ? f->last[depth - 1] : NULL);
    f->last[depth] = row;
    for (int i = 0; i < f->nshown; i++) {
        const char *v = values[f->shown[i]];
        unsigned flags = f->columns[f->shown[i]].flags;
        char shown[40];
        if ((flags & SCL_COLUMN_TIME) && v[0] != '\0') {
            tool_format_time((time_t)strtoll(v, NULL, 10), f->json, shown, sizeof shown);
            v = shown;
        } else if ((flags & SCL_COLUMN_DURATION) && v[0] != '\0' && !f->json) {
            tool_format_duration(strtoll(v, NULL, 10), shown, sizeof shown);
            v = shown;
        }
        table_set(row, i, v);
    }
}

/* Prints the listing once: the exit status. */
static int list_once(const struct listing *l)
{
    const struct scl_store_admin *store = scl_store_admin();
    const struct scl_admin_listing *ls = store->listing;
    struct scl_admin_select sel = {
        .name = l->name, .pid = l->pid, .host = l->host, .older_than = l->older_than, .stale = l->stale
    };
    struct table_column cols[SCL_ADMIN_MAX_COLUMNS];
    int shown[SCL_ADMIN_MAX_COLUMNS];
    struct filling f = { .shown = shown, .json = l->style == TABLE_JSON, .columns = ls->columns };
    struct inv_dir *dirs = NULL;
    int loaded = 0, matched;

    if ((f.nshown = choose_columns(l, ls, shown, cols)) < 0)
        return TOOL_USAGE;
    if ((store->can & SCL_ADMIN_DIRECTORIES) && (loaded = tool_load_selected(l->server, l->pid, &dirs, &sel.ndirs)) < 0)
        return TOOL_FAILURE;
    sel.dirs = dirs;
    if ((store->can & SCL_ADMIN_DIRECTORIES) && sel.ndirs == 0 && loaded == 0)
        tool_error("note: no claim directory in %s (--base, or -s PID for a server's wherever it is)",
                   tool_places_looked());
    if ((f.table = table_new(ls->json_name, cols, f.nshown, l->style, l->noheadings)) == NULL) {
        inv_free(dirs, sel.ndirs);
        return TOOL_FAILURE;
    }
    matched = ls->rows(&sel, add_row, &f);
    if (matched < 0)
        tool_store_unread();
    table_print_and_free(f.table);
    inv_free(dirs, sel.ndirs);
    if (matched < 0)
        return TOOL_FAILURE;
    if (l->older_than >= 0 || l->stale) /* for monitoring, as gc --dry-run: 1 when there is something to look at */
        return matched > 0 || loaded > 0 ? TOOL_FAILURE : TOOL_OK;
    if (l->name != NULL && matched == 0) { /* for scripts and monitoring, as grep(1) */
        if (store->can & SCL_ADMIN_SESSIONS)
            tool_error("no claim named '%s' in scope '%s'%s", l->name, scl_settings()->scope,
                       l->pid != 0 ? " held or waited for by that process" : "");
        else
            tool_error("no claim named '%s'", l->name);
        return TOOL_FAILURE;
    }
    return loaded > 0 ? TOOL_FAILURE : TOOL_OK; /* a directory not read: said */
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
        (void)list_once(l);
        fflush(stdout);
        while (nanosleep(&left, &left) != 0 && errno == EINTR)
            ;
    }
}

/* -p PID or PID@HOST into L: 0, or the usage status (said). */
static int parse_pid(const char *arg, struct listing *l)
{
    char *end;
    long pid = strtol(arg, &end, 10);

    if (*end == '@' && end[1] != '\0') /* PID@HOST: a process of another machine (a shared store's) */
        l->host = end + 1;
    else if (*end != '\0')
        pid = 0;
    if (end == arg || pid <= 0 || pid > INT_MAX)
        return tool_usage_error("list: --pid takes a process ID (PID@HOST with SWERVE_CLAIM_STORE)");
    l->pid = (pid_t)pid;
    return 0;
}

/* Reads list's options into *L and *PERIOD (--watch's, or 0): 0, or the
 * usage status (said). */
static int parse_options(int argc, char **argv, struct listing *l, double *period)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "name", required_argument, NULL, 'n' },
        { "pid", required_argument, NULL, 'p' },
        { "older-than", required_argument, NULL, 'A' },
        { "stale", no_argument, NULL, 'S' },
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
    int c;
    char *end;

    while ((c = tool_getopt(argc, argv, "s:n:p:JrHuo:Ow::", opts)) != -1) {
        switch (c) {
        case 's': l->server = optarg; break;
        case 'n': l->name = optarg; break;
        case 'p':
            if (parse_pid(optarg, l) != 0)
                return TOOL_USAGE;
            break;
        case 'A':
            if (tool_parse_duration(optarg, &l->older_than) != 0)
                return tool_usage_error(
                    "list: --older-than takes a duration: 90s, 2m, 1h, 1d (seconds without a unit)");
            break;
        case 'S': l->stale = 1; break;
        case 'J': l->style = TABLE_JSON; break;
        case 'r': l->style = TABLE_RAW; break;
        case 'H': l->noheadings = 1; break;
        case 'u': l->notruncate = 1; break;
        case 'o': l->output = optarg; break;
        case 'O': l->all_columns = 1; break;
        case 'w':
            *period = optarg != NULL ? strtod(optarg, &end) : 2.0;
            if (optarg != NULL && (*end != '\0' || !(*period >= 0.1 && *period <= 86400)))
                return tool_usage_error("list: --watch takes seconds, 0.1 or more");
            break;
        default: return TOOL_USAGE;
        }
    }
    return optind != argc ? tool_usage_error("list takes no arguments") : 0;
}

int tool_list(int argc, char **argv)
{
    struct listing l = { .style = TABLE_TREE, .older_than = -1 };
    unsigned can = scl_store_admin()->can;
    double period = 0;

    if (parse_options(argc, argv, &l, &period) != 0)
        return TOOL_USAGE;
    if ((can & SCL_ADMIN_SESSIONS) && l.server != NULL)
        return tool_usage_error("list: --server is for local claim directories, not SWERVE_CLAIM_STORE");
    if ((can & SCL_ADMIN_SESSIONS) && l.stale)
        return tool_usage_error("list: --stale is for local claim directories: a session's claims end with it");
    if ((can & SCL_ADMIN_DIRECTORIES) && l.host != NULL)
        return tool_usage_error("list: --pid PID@HOST is for SWERVE_CLAIM_STORE: local claims are this host's");
    if (period > 0)
        watch(&l, period);
    return list_once(&l);
}
