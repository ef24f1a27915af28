/* SPDX-License-Identifier: MIT */
/* swerve-claim list: the store's rows in the store's columns
 * (store_admin.h), as a tree, raw lines or JSON (table.h prints them):
 * which directories a filesystem store lists is the store's (its
 * directories' load()). */
#include "config.h"

#include "rows.h"
#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* What to list, and how (list's options). */
struct listing {
    const char *server, *name;
    pid_t pid;        /* -p: only this process's rows, or 0 */
    const char *host; /* -p PID@HOST: its host (a shared store's) */
    struct rows_style style;
    long long older_than; /* --older-than, in seconds, or -1 */
    int stale;            /* --stale */
};

/* Prints the listing once: the exit status. */
static int list_once(const struct listing *l)
{
    const struct scl_store_admin *store = scl_store_admin();
    struct scl_admin_select sel = {
        .name = l->name, .pid = l->pid, .host = l->host, .older_than = l->older_than, .stale = l->stale
    };
    int loaded, matched = rows_show(store->listing, &l->style, &sel, l->server, &loaded);

    if (matched == ROWS_USAGE)
        return TOOL_USAGE;
    if (matched == -1)
        tool_store_unread();
    if (matched < 0)
        return TOOL_FAILURE;
    if (l->older_than >= 0 || l->stale) /* for monitoring, as gc --dry-run: 1 when there is something to look at */
        return matched > 0 || loaded > 0 ? TOOL_FAILURE : TOOL_OK;
    if (l->name != NULL && matched == 0) { /* for scripts and monitoring, as grep(1) */
        if (store->can & SCL_ADMIN_SESSIONS)
            tool_error("no claim named '%s' in scope '%s'%s", scl_admin_shown_name(l->name), scl_store_admin()->scope(),
                       l->pid != 0 ? " held or waited for by that process" : "");
        else /* a row may be shown: its holder has ended, and holds nothing */
            tool_error("no claim named '%s' held by a live process", scl_admin_shown_name(l->name));
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
        { "watch", optional_argument, NULL, 'w' },
        ROWS_OPTIONS,
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    int c;
    char *end;

    while ((c = tool_getopt(argc, argv, "s:n:p:w::" ROWS_SHORTOPTS, opts)) != -1) {
        if (rows_option(c, optarg, &l->style))
            continue;
        switch (c) {
        case 's': l->server = optarg; break;
        case 'n':
            if (tool_check_name(optarg) != 0)
                return TOOL_USAGE;
            l->name = optarg;
            break;
        case 'p':
            if (tool_parse_pid(optarg, &l->pid, &l->host) != 0)
                return TOOL_USAGE;
            break;
        case 'A':
            if (tool_parse_duration(optarg, &l->older_than) != 0)
                return tool_usage_error(
                    "list: --older-than takes a duration: 90s, 2m, 1h, 1d (seconds without a unit)");
            break;
        case 'S': l->stale = 1; break;
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
    struct listing l = { .style = { .style = TABLE_TREE }, .older_than = -1 };
    unsigned can = scl_store_admin()->can;
    double period = 0;

    if (parse_options(argc, argv, &l, &period) != 0 || tool_check_store_options(l.server, l.host) != 0)
        return TOOL_USAGE;
    if ((can & SCL_ADMIN_SESSIONS) && l.stale)
        return tool_usage_error("list: --stale is for local claim directories: a session's claims end with it");
    if (period > 0)
        watch(&l, period);
    return list_once(&l);
}
