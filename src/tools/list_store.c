/* swerve-claim list, when the store lists its claims itself (the
 * PostgreSQL store): one row per holder and per waiter, across every
 * machine that shares the database. */
#include "config.h"

#include "settings.h"
#include "store.h"
#include "table.h"
#include "tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
    const char *only;
    int shown[NCOLUMNS], nshown, rows;
};

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

    if (l->only != NULL && strcmp(l->only, r->name) != 0)
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
    row = table_row(l->table, r->held || l->holder == NULL ? NULL : l->holder);
    if (r->held)
        l->holder = row;
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

int tool_list_store(const char *name, const char *output, int style, int noheadings)
{
    struct listing l = { .only = name,
                         .shown = { COL_TYPE, COL_NAME, COL_ROLE, COL_HOST, COL_PID, COL_SINCE, COL_TOKEN } };
    struct table_column cols[NCOLUMNS];

    l.nshown = 7;
    l.json = style == TABLE_JSON;
    if (output != NULL && (l.nshown = tool_parse_columns(output, columns, NCOLUMNS, l.shown)) < 0)
        return TOOL_USAGE;
    for (int i = 0; i < l.nshown; i++) {
        cols[i] = columns[l.shown[i]];
        cols[i].number |= l.json && (l.shown[i] == COL_SINCE || l.shown[i] == COL_CONNECTED); /* epoch seconds */
    }
    if ((l.table = table_new("claims", cols, l.nshown, (enum table_style)style, noheadings)) == NULL)
        return TOOL_FAILURE;
    if (scl_store()->list(add, &l) != 0) {
        tool_error("cannot list the claims of scope '%s': %s%s", scl_settings()->scope, strerror(errno),
                   errno == ENOENT ? " (run 'swerve-claim db init')" : "");
        table_print_and_free(l.table);
        return TOOL_FAILURE;
    }
    table_print_and_free(l.table);
    if (name != NULL && l.rows == 0) { /* for scripts and monitoring, as grep(1) */
        tool_error("no claim named '%s' in scope '%s'", name, scl_settings()->scope);
        return TOOL_FAILURE;
    }
    return TOOL_OK;
}
