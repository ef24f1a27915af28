/* swerve-claim list, when the store lists its claims itself (the
 * PostgreSQL store): one row per holder and per waiter, across every
 * machine that shares the database. */
#include "config.h"

#include "settings.h"
#include "store_admin.h"
#include "table.h"
#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum column {
    COL_TYPE,
    COL_NAME,
    COL_ROLE,
    COL_HOST,
    COL_PID,
    COL_SINCE,
    COL_TOKEN,
    COL_SESSION,
    COL_ADDRESS,
    COL_CONNECTED,
    COL_SELF_REPORTED,
    NCOLUMNS
};

static const struct table_column columns[NCOLUMNS] = {
    [COL_TYPE] = { .name = "TYPE", .width = 7 },
    [COL_NAME] = { .name = "NAME", .width = 0.3, .tree = 1 },
    [COL_ROLE] = { .name = "ROLE", .width = 0.1, .truncate = 1 },
    [COL_HOST] = { .name = "HOST", .width = 0.2, .truncate = 1 },
    [COL_PID] = { .name = "PID", .width = 7, .right = 1, .number = 1 },
    [COL_SINCE] = { .name = "SINCE", .width = 19 },
    [COL_TOKEN] = { .name = "TOKEN", .width = 6, .right = 1, .number = 1 },
    [COL_SESSION] = { .name = "SESSION", .width = 7, .right = 1, .number = 1 },
    [COL_ADDRESS] = { .name = "ADDRESS", .width = 0.15, .truncate = 1 },
    [COL_CONNECTED] = { .name = "CONNECTED", .width = 19 },
    [COL_SELF_REPORTED] = { .name = "SELF-REPORTED", .width = 0.2, .truncate = 1 },
};

struct listing {
    struct table *table;
    int json;
    struct table_row *holder; /* the last holder row: its waiters go under it */
    char *holder_name;        /* ... when they wait for this name (malloc'ed) */
    const struct tool_store_listing *want;
    char host[256]; /* -p's host */
    int shown[NCOLUMNS], nshown, rows;
};

/* Whether R's session says it runs on HOST.  The server keeps 63 bytes
 * of what a session calls itself (NAMEDATALEN): a long host name may be
 * cut, so a cut one matches the names it begins. */
static int on_host(const struct scl_listed *r, const char *host)
{
    size_t n = strlen(r->host);

    return strcmp(r->host, host) == 0 || (strlen(r->says) >= 63 && n > 0 && strncmp(r->host, host, n) == 0);
}

/* Whether L shows R: -n, and -p, which only the library's sessions can
 * match (a foreign session's pid is nobody's word). */
static int wanted(const struct listing *l, const struct scl_listed *r)
{
    if (l->want->name != NULL && strcmp(l->want->name, r->name) != 0)
        return 0;
    return l->want->pid == 0 || (!r->foreign && r->pid == l->want->pid && on_host(r, l->host));
}

/* TYPE says first whether a row is the library's: a foreign session's
 * HOST and PID are then the server's word, not what it calls itself. */
static const char *type_of(const struct scl_listed *r)
{
    if (r->foreign)
        return r->held ? "foreign" : "foreign-waiter";
    return r->held ? "holder" : "waiter";
}

static void add(const struct scl_listed *r, void *arg)
{
    struct listing *l = arg;
    char pid[24] = "", since[40] = "", token[24] = "", session[24] = "", connected[40] = "";
    struct table_row *row;

    if (!wanted(l, r))
        return;
    if (r->pid > 0)
        snprintf(pid, sizeof pid, "%ld", r->pid);
    if (r->since > 0)
        tool_format_time(r->since, l->json, since, sizeof since);
    if (r->connected > 0)
        tool_format_time(r->connected, l->json, connected, sizeof connected);
    if (r->token > 0)
        snprintf(token, sizeof token, "%" PRIu64, r->token);
    if (r->session > 0)
        snprintf(session, sizeof session, "%ld", r->session);
    /* Rows come by name, holder first: a waiter whose holder is not
     * shown (-p, or let go as we read) stands alone. */
    if (!r->held && l->holder != NULL && strcmp(l->holder_name, r->name) == 0) {
        row = table_row(l->table, l->holder);
    } else {
        row = table_row(l->table, NULL);
        free(l->holder_name);
        l->holder_name = r->held ? strdup(r->name) : NULL;
        l->holder = l->holder_name != NULL ? row : NULL;
    }
    for (int i = 0; i < l->nshown; i++) {
        const char *v = "";
        switch (l->shown[i]) {
        case COL_TYPE: v = type_of(r); break;
        case COL_NAME: v = r->name; break;
        case COL_ROLE: v = r->role; break;
        case COL_HOST: v = r->host; break;
        case COL_PID: v = pid; break;
        case COL_SINCE: v = since; break;
        case COL_TOKEN: v = token; break;
        case COL_SESSION: v = session; break;
        case COL_ADDRESS: v = r->address; break;
        case COL_CONNECTED: v = connected; break;
        case COL_SELF_REPORTED: v = r->says; break;
        }
        table_set(row, i, v);
    }
    l->rows++;
}

void tool_listed_session(const struct scl_listed *r, char *out, size_t cap)
{
    snprintf(out, cap, "session %ld of role %s from %s", r->session, r->role[0] ? r->role : "(unknown)",
             r->address[0] ? r->address : "an unknown address (pg_read_all_stats shows it)");
}

void tool_listed_says(const struct scl_listed *r, char *out, size_t cap)
{
    if (!r->foreign)
        snprintf(out, cap, "it says it is process %ld on %s", r->pid, r->host[0] ? r->host : "an unnamed host");
    else
        snprintf(out, cap, "it is a foreign session, outside swerve-claim, that calls itself '%s'", r->says);
}

int tool_list_store(const struct tool_store_listing *want)
{
    static const int usual[] = { COL_TYPE, COL_NAME, COL_ROLE, COL_HOST, COL_PID, COL_SINCE, COL_TOKEN };
    struct listing l = { .want = want };
    struct table_column cols[NCOLUMNS];
    char what[300];
    int r = TOOL_OK;

    l.json = want->style == TABLE_JSON;
    if (want->output != NULL) {
        if ((l.nshown = tool_parse_columns(want->output, columns, NCOLUMNS, l.shown)) < 0)
            return TOOL_USAGE;
    } else if (want->all_columns) {
        for (; l.nshown < NCOLUMNS; l.nshown++)
            l.shown[l.nshown] = l.nshown;
    } else {
        for (; l.nshown < (int)(sizeof usual / sizeof usual[0]); l.nshown++)
            l.shown[l.nshown] = usual[l.nshown];
    }
    if (want->host != NULL)
        snprintf(l.host, sizeof l.host, "%s", want->host);
    else /* as the library's sessions name it (src/pg/session.c) */
        (void)gethostname(l.host, sizeof l.host - 1);
    for (int i = 0; i < l.nshown; i++) {
        cols[i] = columns[l.shown[i]];
        cols[i].number |= l.json && (l.shown[i] == COL_SINCE || l.shown[i] == COL_CONNECTED); /* epoch seconds */
        if (want->notruncate)
            cols[i].truncate = 0;
    }
    if ((l.table = table_new("claims", cols, l.nshown, (enum table_style)want->style, want->noheadings)) == NULL)
        return TOOL_FAILURE;
    if (scl_store_admin()->list(add, &l) != 0) {
        snprintf(what, sizeof what, "cannot list the claims of scope '%s'", scl_settings()->scope);
        tool_store_error(what, errno == ENOENT ? " (run 'swerve-claim db init')" : "");
        r = TOOL_FAILURE;
    }
    table_print_and_free(l.table);
    free(l.holder_name);
    if (r == TOOL_OK && want->name != NULL && l.rows == 0) { /* for scripts and monitoring, as grep(1) */
        tool_error("no claim named '%s' in scope '%s'%s", want->name, scl_settings()->scope,
                   want->pid != 0 ? " held or waited for by that process" : "");
        r = TOOL_FAILURE;
    }
    return r;
}
