/* swerve-claim list: every claim directory, its processes and its claims,
 * as a tree, raw lines or JSON (table.h prints them). */
#include "config.h"

#include "inventory.h"
#include "store.h"
#include "table.h"
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum column { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND, COL_DIR, NCOLUMNS };

static const struct table_column columns[NCOLUMNS] = {
    [COL_TYPE] = { .name = "TYPE", .width = 7 },
    [COL_NAME] = { .name = "NAME", .width = 0.3, .tree = 1 },
    [COL_PID] = { .name = "PID", .width = 5, .right = 1, .number = 1 },
    [COL_STATE] = { .name = "STATE", .width = 9 },
    [COL_SINCE] = { .name = "SINCE", .width = 19 },
    [COL_COMMAND] = { .name = "COMMAND", .width = 0.3, .truncate = 1 },
    [COL_DIR] = { .name = "DIR", .width = 0.2 },
};

struct row {
    const char *type, *name, *state, *command, *dir;
    pid_t pid;
    time_t since;
};

static void add_row(struct table_row *ln, const int *shown, int nshown, const struct row *r, int json)
{
    char pid[24] = "", since[40] = "";

    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%d", (int)r->pid);
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
        }
        table_set(ln, i, v);
    }
}

int tool_list(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "name", required_argument, NULL, 'n' },
        { "json", no_argument, NULL, 'J' },
        { "raw", no_argument, NULL, 'r' },
        { "noheadings", no_argument, NULL, 'H' },
        { "output", required_argument, NULL, 'o' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *name = NULL, *output = NULL;
    int json = 0, raw = 0, noheadings = 0,
        shown[NCOLUMNS] = { COL_TYPE, COL_NAME, COL_PID, COL_STATE, COL_SINCE, COL_COMMAND };
    int nshown = 6, c, matched = 0;
    struct table *tb;
    struct inv_dir *dirs;
    size_t n;

    while ((c = tool_getopt(argc, argv, "s:n:JrHo:", opts)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'n': name = optarg; break;
        case 'J': json = 1; break;
        case 'r': raw = 1; break;
        case 'H': noheadings = 1; break;
        case 'o': output = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("list takes no arguments");
    if (scl_store()->list != NULL) {
        if (server != NULL)
            return tool_usage_error("list: --server is for local claim directories, not SWERVE_CLAIM_STORE");
        return tool_list_store(name, output, json ? TABLE_JSON : raw ? TABLE_RAW : TABLE_TREE, noheadings);
    }
    if (output != NULL && (nshown = tool_parse_columns(output, columns, NCOLUMNS, shown)) < 0)
        return TOOL_USAGE;
    if (tool_load_selected(server, &dirs, &n) != 0)
        return TOOL_FAILURE;
    {
        struct table_column cols[NCOLUMNS];
        for (int i = 0; i < nshown; i++)
            cols[i] = columns[shown[i]];
        if (json) /* epoch seconds */
            for (int i = 0; i < nshown; i++)
                cols[i].number |= shown[i] == COL_SINCE;
        tb = table_new("directories", cols, nshown, json ? TABLE_JSON : raw ? TABLE_RAW : TABLE_TREE, noheadings);
        if (tb == NULL) {
            inv_free(dirs, n);
            return TOOL_FAILURE;
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct inv_dir *d = &dirs[i];
        struct table_row *top = table_row(tb, NULL);
        struct row r = { .type = "dir", .name = d->path, .state = d->live ? "live" : "abandoned", .dir = d->path };
        add_row(top, shown, nshown, &r, json);
        for (size_t j = 0; j < d->nprocs && name == NULL; j++) {
            const struct inv_proc *p = &d->procs[j];
            struct row pr = { .type = "process",
                              .pid = p->pid,
                              .state = inv_state_name(p->state),
                              .command = p->command,
                              .dir = d->path };
            add_row(table_row(tb, top), shown, nshown, &pr, json);
        }
        for (size_t j = 0; j < d->nclaims; j++) {
            const struct inv_claim *cl = &d->claims[j];
            const struct inv_proc *p = cl->holder >= 0 ? &d->procs[cl->holder] : NULL;
            struct row cr = { .type = "claim",
                              .name = cl->name,
                              .pid = p ? p->pid : 0,
                              .state = p ? inv_state_name(p->state) : "no-holder",
                              .command = p ? p->command : "",
                              .since = cl->since,
                              .dir = d->path };
            if (name == NULL || strcmp(name, cl->name) == 0) {
                add_row(table_row(tb, top), shown, nshown, &cr, json);
                matched++;
            }
        }
    }
    table_print_and_free(tb);
    inv_free(dirs, n);
    if (name != NULL && matched == 0) { /* for scripts and monitoring, as grep(1) */
        tool_error("no claim named '%s'", name);
        return TOOL_FAILURE;
    }
    return TOOL_OK;
}
