/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim history's columns and rows for the PostgreSQL store
 * (store_admin.h): the holds swerve_claim.history keeps (schema.sql), the
 * last 16 of each name whose token was asked for, by name, then by when
 * each was taken.  The server drops a session's locks without a word: a
 * hold not released through the library whose session no longer holds
 * it ended with its session.
 */
#include "config.h"

#include "budget.h"
#include "pg.h"
#include "session.h"
#include "store_admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the server knew of the holding session (ROLE, SESSION) comes
 * first; what it said of itself, its application_name, only under a
 * heading that says so (REPORTED-HOST, REPORTED-PID, SELF-REPORTED), as
 * in list (listing_pg.c). */
enum column {
    COL_NAME,
    COL_ROLE,
    COL_REPORTED_HOST,
    COL_REPORTED_PID,
    COL_TAKEN,
    COL_ENDED,
    COL_HOW,
    COL_TOKEN,
    COL_SESSION,
    COL_SELF_REPORTED,
    COL_DURATION,
    NCOLUMNS
};

_Static_assert(NCOLUMNS <= SCL_ADMIN_MAX_COLUMNS, "the tools have room for every column");

static const struct scl_admin_column columns[NCOLUMNS] = {
    [COL_NAME] = { "NAME", 0.2, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE, "the claim's name" },
    [COL_ROLE] = { "ROLE", 0.1, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE, "its session's role (the server's word)" },
    [COL_REPORTED_HOST] = { "REPORTED-HOST", 0.15, SCL_COLUMN_USUAL | SCL_COLUMN_TRUNCATE,
                            "the host its session said it ran on (its word)" },
    [COL_REPORTED_PID] = { "REPORTED-PID", 12, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER,
                           "the pid its session said it had (its word)" },
    [COL_TAKEN] = { "TAKEN", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when it was taken" },
    [COL_ENDED] = { "ENDED", 25, SCL_COLUMN_USUAL | SCL_COLUMN_TIME, "when it ended (empty while held or unknown)" },
    [COL_HOW] = { "HOW", 13, SCL_COLUMN_USUAL, "released, held, or session ended" },
    [COL_TOKEN] = { "TOKEN", 6, SCL_COLUMN_USUAL | SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER, "its fencing token" },
    [COL_SESSION] = { "SESSION", 7, SCL_COLUMN_RIGHT | SCL_COLUMN_NUMBER,
                      "its session's server process (the server's word)" },
    [COL_SELF_REPORTED] = { "SELF-REPORTED", 0.2, SCL_COLUMN_TRUNCATE, "what its session called itself, unverified" },
    [COL_DURATION] = { "DURATION", 8, SCL_COLUMN_RIGHT | SCL_COLUMN_DURATION, "held for how long" },
};

/* A hold is held while its session holds the name's lock and it is the
 * name's latest (a session's earlier hold ended with a release).  A time
 * that is no second (an infinity a member had an older token_for record
 * as its hold's since) is unknown, NULL (""), and so is a duration from
 * it: one row must not fail the history of every name, for as long as it
 * is kept.  The duration is a difference of seconds, which no two
 * timestamps overflow (an interval can). */
static const char history_sql[] =
    "SELECT encode(n.name, 'hex'), h.token, h.backend, h.role, h.says, "
    "CASE WHEN isfinite(h.since) THEN extract(epoch FROM h.since)::bigint END, "
    "coalesce(CASE WHEN isfinite(h.ended) THEN extract(epoch FROM h.ended)::bigint END, 0), "
    "CASE WHEN h.ended IS NOT NULL THEN 'released' "
    "WHEN h.seq = (SELECT max(k.seq) FROM swerve_claim.history k WHERE k.id = h.id) AND EXISTS ("
    "SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.classid = 1398231638 AND l.objid = h.id::oid "
    "AND l.objsubid = 2 AND l.pid = h.backend AND l.granted "
    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())) THEN 'held' "
    "ELSE 'session ended' END, "
    "CASE WHEN isfinite(h.since) AND isfinite(coalesce(h.ended, clock_timestamp())) "
    "THEN (extract(epoch FROM coalesce(h.ended, clock_timestamp())) - extract(epoch FROM h.since))::bigint END "
    "FROM swerve_claim.history h JOIN swerve_claim.names n ON n.id = h.id "
    "WHERE n.scope = $1 AND ($2 = ''::bytea OR n.name = $2) ORDER BY n.name, h.seq LIMIT ";

struct history {
    const struct scl_admin_select *sel;
    scl_admin_row_fn *each;
    void *arg;
    char host[256]; /* -p's host */
    int rows;
    int gave_up; /* the rows went past SCL_BUDGET_PG_HISTORY_ROWS */
};

/* Row I of RES, when H's -p selects it. */
static void emit(struct history *h, const struct scl_libpq *pq, PGresult *res, int i)
{
    const char *values[NCOLUMNS], *says = pq->getvalue(res, i, 4);
    char *name = malloc(strlen(pq->getvalue(res, i, 0)) / 2 + 1), host[256] = "", pid[24] = "";
    long said_pid = 0;

    if (name == NULL)
        return;
    scl_pg_unhex(pq->getvalue(res, i, 0), name);
    scl_pg_says_who(says, &said_pid, host, sizeof host);
    if (h->sel->pid == 0 || (said_pid == h->sel->pid && strcmp(host, h->host) == 0)) {
        if (said_pid > 0)
            snprintf(pid, sizeof pid, "%ld", said_pid);
        values[COL_NAME] = name;
        values[COL_REPORTED_HOST] = host;
        values[COL_REPORTED_PID] = pid;
        values[COL_TAKEN] = pq->getvalue(res, i, 5);
        values[COL_ENDED] = strcmp(pq->getvalue(res, i, 6), "0") != 0 ? pq->getvalue(res, i, 6) : "";
        values[COL_HOW] = pq->getvalue(res, i, 7);
        values[COL_TOKEN] = pq->getvalue(res, i, 1);
        values[COL_ROLE] = pq->getvalue(res, i, 3);
        values[COL_SESSION] = pq->getvalue(res, i, 2);
        values[COL_SELF_REPORTED] = says;
        values[COL_DURATION] = pq->getvalue(res, i, 8);
        h->each(0, values, h->arg);
        h->rows++;
    }
    free(name);
}

/* The rows, at most SCL_BUDGET_PG_HISTORY_ROWS (the statement asks for
 * one more, to know whether there were more). */
static void each_hold(const struct scl_libpq *pq, PGresult *res, void *arg)
{
    struct history *h = arg;
    int n = pq->ntuples(res);

    h->gave_up = n > (int)SCL_BUDGET_PG_HISTORY_ROWS;
    for (int i = 0; i < n && i < (int)SCL_BUDGET_PG_HISTORY_ROWS; i++)
        emit(h, pq, res, i);
}

static int pg_history_rows(const struct scl_admin_select *sel, scl_admin_row_fn *each, void *arg)
{
    struct history h = { .sel = sel, .each = each, .arg = arg };
    char sql[sizeof history_sql + 24], said[160];

    snprintf(sql, sizeof sql, "%s%u", history_sql, SCL_BUDGET_PG_HISTORY_ROWS + 1);
    if (sel->host != NULL)
        snprintf(h.host, sizeof h.host, "%s", sel->host);
    else /* as the library's sessions name it (src/pg/session.c) */
        (void)gethostname(h.host, sizeof h.host - 1);
    if (scl_pg_tool_query(sql, sel->name != NULL ? sel->name : "", each_hold, &h) != 0)
        return -1;
    if (h.gave_up) { /* what was read is shown; the tool says the rest was not */
        snprintf(said, sizeof said,
                 "gave up past its bound of %u rows (SCL_BUDGET_PG_HISTORY_ROWS): the first, by name, are shown",
                 SCL_BUDGET_PG_HISTORY_ROWS);
        scl_pg_remember_reason(said);
        errno = EFBIG;
        return -1;
    }
    return h.rows;
}

const struct scl_admin_listing scl_pg_history = {
    .json_name = "holds",
    .columns = columns,
    .ncolumns = NCOLUMNS,
    .rows = pg_history_rows,
};
