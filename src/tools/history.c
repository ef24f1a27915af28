/* SPDX-License-Identifier: MIT */
/* swerve-claim history: the last holds of each claim name, who took each,
 * when, and how it ended, in the store's columns (store_admin.h), printed
 * as list prints them (rows.h). */
#include "config.h"

#include "rows.h"
#include "store_admin.h"
#include "tool.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

/* What to show, and how (history's options). */
struct history {
    const char *server, *name;
    pid_t pid;        /* -p: only this process's holds, or 0 */
    const char *host; /* -p PID@HOST: its host (a shared store's) */
    struct rows_style style;
};

/* Reads history's options and its NAME into *H: 0, or the usage status
 * (said). */
static int parse_options(int argc, char **argv, struct history *h)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "pid", required_argument, NULL, 'p' },
        ROWS_OPTIONS,
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = tool_getopt(argc, argv, "s:p:" ROWS_SHORTOPTS, opts)) != -1) {
        if (rows_option(c, optarg, &h->style))
            continue;
        switch (c) {
        case 's': h->server = optarg; break;
        case 'p':
            if (tool_parse_pid(optarg, &h->pid, &h->host) != 0)
                return TOOL_USAGE;
            break;
        default: return TOOL_USAGE;
        }
    }
    if (argc - optind > 1)
        return tool_usage_error("history takes at most one claim NAME");
    h->name = optind < argc ? argv[optind] : NULL;
    return h->name != NULL ? tool_check_name(h->name) : 0;
}

/* Prints the holds H selects: the exit status. */
static int show(const struct history *h, const struct scl_store_admin *store)
{
    struct scl_admin_select sel = { .name = h->name, .pid = h->pid, .host = h->host, .older_than = -1 };
    char base[PATH_MAX], name[NAME_MAX + 1], kept[PATH_MAX + NAME_MAX + 2];
    int loaded, shown;

    /* The user's own run namespace is removed as its last run ends: its
     * history waits beside it (history.h). */
    if (h->server == NULL && (store->can & SCL_ADMIN_DIRECTORIES) &&
        store->directories->run_namespace(base, sizeof base, name, sizeof name, 0) == 0) {
        snprintf(kept, sizeof kept, "%s/%s", base, name);
        sel.kept = kept;
    }
    shown = rows_show(store->history, &h->style, &sel, h->server, &loaded);

    if (shown == ROWS_USAGE)
        return TOOL_USAGE;
    if (shown == -1)
        tool_store_error("cannot read the history", "");
    if (shown < 0)
        return TOOL_FAILURE;
    if (h->name != NULL && shown == 0) { /* for scripts, as list --name */
        if (store->can & SCL_ADMIN_SESSIONS)
            tool_error("no history of a claim named '%s' in scope '%s'", scl_admin_shown_name(h->name),
                       scl_store_admin()->scope());
        else
            tool_error("no history of a claim named '%s'", scl_admin_shown_name(h->name));
        return TOOL_FAILURE;
    }
    return loaded > 0 ? TOOL_FAILURE : TOOL_OK; /* a directory not read: said */
}

int tool_history(int argc, char **argv)
{
    struct history h = { .style = { .style = TABLE_TREE } };

    if (parse_options(argc, argv, &h) != 0 || tool_check_store_options(h.server, h.host) != 0)
        return TOOL_USAGE;
    return show(&h, scl_store_admin());
}
