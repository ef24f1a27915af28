/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim list's columns and rows for the PostgreSQL store
 * (store_admin.h): one row per holder and per waiter, across every
 * machine that shares the database, each waiter under its name's holder.
 */
#include "config.h"

#include "settings_pg.h"
#include "store_admin.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the server knows of a session (ROLE, ADDRESS, SESSION: its backend
 * pid) comes first; what a session says of itself, its application_name,
 * which any session sets as it likes, only under a heading that says so:
 * REPORTED-HOST and REPORTED-PID (a library session's "swerve-claim pid=P
 * host=H"), SELF-REPORTED (the whole of it).  A member of
 * swerve_claim_user may name itself as another machine's process. */
enum column {
    COL_TYPE,
    COL_NAME,
    COL_ROLE,
    COL_ADDRESS,
    COL_SESSION,
    COL_REPORTED_HOST,
    COL_REPORTED_PID,
    COL_SINCE,
    COL_TOKEN,
    COL_CONNECTED,
    COL_SELF_REPORTED,
    COL_AGE,
    NCOLUMNS
};

_Static_assert(NCOLUMNS <= SCL_ADMIN_MAX_COLUMNS, "the tools have room for every column");

static const struct scl_admin_column columns[NCOLUMNS] = {
    [COL_TYPE] = { "TYPE", 7, SCL_COLUMN_USUAL, "holder or waiter; foreign: a session not the library's" },
    [COL_NAME] = { "NAME", 0.3, SCL_COLUMN_USUAL | SCL_COLUMN_TREE, "the claim's name" },
    [COL_ROLE] = { "ROLE", 0.1, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE, "the session's role (the server's word)" },
    [COL_ADDRESS] = { "ADDRESS", 0.15, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE,
                      "where the session connects from (the server's word)" },
    [COL_SESSION] = { "SESSION", 7, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER,
                      "the session's server process (the server's word)" },
    [COL_REPORTED_HOST] = { "REPORTED-HOST", 0.2, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE,
                            "the host the session says it runs on (its word)" },
    [COL_REPORTED_PID] = { "REPORTED-PID", 12, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER,
                           "the pid the session says it has (its word)" },
    [COL_SINCE] = { "SINCE", 19, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when the claim was taken, or the wait began" },
    [COL_TOKEN] = { "TOKEN", 6, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER, "the hold's fencing token" },
    [COL_CONNECTED] = { "CONNECTED", 19, SCL_COLUMN_TIME, "when the session began" },
    [COL_SELF_REPORTED] = { "SELF-REPORTED", 0.2, SCL_COLUMN_TRUNCATE, "what the session calls itself, unverified" },
    [COL_AGE] = { "AGE", 7, SCL_COLUMN_RIGHT | SCL_COLUMN_DURATION, "held or waiting for how long" },
};

struct listing {
    const struct scl_admin_select *sel;
    scl_admin_row_fn *each;
    void *arg;
    char *holder_name; /* the last holder row's name, its waiters go under it (malloc'ed) */
    char host[256];    /* -p's host */
    time_t now;
    int rows;
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
    if (l->sel->name != NULL && strcmp(l->sel->name, r->name) != 0)
        return 0;
    /* --older-than: holders held that long, and the waiters under them */
    if (l->sel->older_than >= 0 && (r->held ? r->since <= 0 || l->now - r->since <= l->sel->older_than
                                            : l->holder_name == NULL || strcmp(l->holder_name, r->name) != 0))
        return 0;
    return l->sel->pid == 0 || (!r->foreign && r->pid == l->sel->pid && on_host(r, l->host));
}

/* TYPE says first whether a row is the library's: a foreign session's
 * word is not parsed at all (REPORTED-HOST and REPORTED-PID empty). */
static const char *type_of(const struct scl_listed *r)
{
    if (r->foreign)
        return r->held ? "foreign" : "foreign-waiter";
    return r->held ? "holder" : "waiter";
}

static void number(char *out, size_t cap, long long v)
{
    if (v > 0)
        snprintf(out, cap, "%lld", v);
}

static void add(const struct scl_listed *r, void *arg)
{
    struct listing *l = arg;
    char pid[24] = "", since[24] = "", token[24] = "", session[24] = "", connected[24] = "", age[24] = "";
    const char *values[NCOLUMNS];
    int under_holder;

    if (!wanted(l, r))
        return;
    number(pid, sizeof pid, r->pid);
    number(since, sizeof since, (long long)r->since);
    number(connected, sizeof connected, (long long)r->connected);
    number(session, sizeof session, r->session);
    if (r->since > 0)
        snprintf(age, sizeof age, "%lld", (long long)(l->now > r->since ? l->now - r->since : 0));
    if (r->token > 0)
        snprintf(token, sizeof token, "%" PRIu64, r->token);
    /* Rows come by name, holder first: a waiter whose holder is not
     * shown (-p, or let go as we read) stands alone. */
    under_holder = !r->held && l->holder_name != NULL && strcmp(l->holder_name, r->name) == 0;
    if (!under_holder) {
        free(l->holder_name);
        l->holder_name = r->held ? strdup(r->name) : NULL;
    }
    values[COL_TYPE] = type_of(r);
    values[COL_NAME] = r->name;
    values[COL_ROLE] = r->role;
    values[COL_ADDRESS] = r->address;
    values[COL_SESSION] = session;
    values[COL_REPORTED_HOST] = r->foreign ? "" : r->host; /* a foreign one's is its address */
    values[COL_REPORTED_PID] = pid;
    values[COL_SINCE] = since;
    values[COL_TOKEN] = token;
    values[COL_CONNECTED] = connected;
    values[COL_SELF_REPORTED] = r->says;
    values[COL_AGE] = age;
    l->each(under_holder ? 1 : 0, values, l->arg);
    l->rows += l->sel->older_than < 0 || r->held; /* what the exit status counts */
}

static int pg_rows(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg)
{
    struct listing l = { .sel = sel, .each = each, .arg = arg, .now = time(NULL) };
    int r;

    if (sel->host != NULL)
        snprintf(l.host, sizeof l.host, "%s", sel->host);
    else /* as the library's sessions name it (src/pg/session.c) */
        (void)gethostname(l.host, sizeof l.host - 1);
    r = scl_store_admin()->list(add, &l);
    free(l.holder_name);
    return r != 0 ? -1 : l.rows;
}

struct sampling {
    scl_admin_sample_fn *each;
    void *arg;
};

static void add_sample(const struct scl_listed *r, void *arg)
{
    const struct sampling *s = arg;
    /* A claim is the scope's, whichever host holds it; a session's claims
     * end with it, so none is ever stale. */
    const struct scl_admin_sample sample = { .name = r->name,
                                             .server = scl_pg_settings()->scope,
                                             .host = r->host,
                                             .pid = r->pid,
                                             .user = r->role,
                                             .state = type_of(r),
                                             .held = r->held,
                                             .since = r->since };

    s->each(&sample, s->arg);
}

static int pg_samples(const struct scl_admin_select *sel, scl_admin_sample_fn *each, void *arg)
{
    struct sampling s = { each, arg };

    (void)sel;
    return scl_store_admin()->list(add_sample, &s) != 0 ? -1 : 0;
}

const struct scl_admin_listing scl_pg_listing = {
    .json_name = "claims",
    .columns = columns,
    .ncolumns = NCOLUMNS,
    .rows = pg_rows,
    .samples = pg_samples,
};
