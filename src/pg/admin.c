/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's operations for the tools (store_admin.h): list,
 * release --force, db init, db check.  Built into libscl_admin.la: they run in
 * swerve-claim, never in a host under the shim. */
#include "config.h"

#include "budget.h"
#include "pg.h"
#include "schema_sql.h"
#include "session.h"
#include "settings_pg.h"
#include "sigsafe.h"
#include "store_admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long db init waits for the schema's tables: any member may keep
 * one open in a transaction (its SELECT's share lock), and the
 * statements waiting behind db init's lock would queue behind that. */
static const char init_lock_timeout_sql[] = "SET lock_timeout = '5s'";

/* The columns read_row() reads, from swerve_claim.claims.  A time that is
 * no second (an infinity a member had an older token_for record as its
 * hold's since, before the view said NULL) is unknown, 0: it must not
 * fail the listing of every other hold. */
#define EPOCH_OR_0(t) "coalesce(CASE WHEN isfinite(" t ") THEN extract(epoch FROM " t ")::bigint END, 0)"
#define ROW_COLUMNS                                                                                                    \
    "encode(name, 'hex'), held, coalesce(application_name, ''), coalesce(host(client_addr), ''), backend, "            \
    "coalesce(token, 0), " EPOCH_OR_0("since") ", coalesce(role, ''), library, " EPOCH_OR_0("connected")

static const char list_sql[] = "SELECT " ROW_COLUMNS " FROM swerve_claim.claims WHERE scope = $1 "
                               "AND ($2 = ''::bytea OR name = $2) ORDER BY name, held DESC, since";

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
}

void scl_pg_unhex(const char *hex, char *out)
{
    size_t n = strlen(hex) / 2;

    for (size_t i = 0; i < n; i++)
        out[i] = (char)(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
    out[n] = '\0';
}

void scl_pg_says_who(const char *says, long *pid, char *host, size_t cap)
{
    const char *p;

    if (strncmp(says, "swerve-claim pid=", 17) != 0)
        return;
    *pid = strtol(says + 17, NULL, 10);
    if ((p = strstr(says, " host=")) != NULL)
        snprintf(host, cap, "%s", p + 6);
}

/* ROW's columns (ROW_COLUMNS) into *OUT; NAME holds the decoded name. */
static void read_row(const struct scl_libpq *pq, PGresult *res, int row, char *name, struct scl_listed *out)
{
    /* A role and an application_name are at most 63 bytes (NAMEDATALEN). */
    static char host[256], role[64], address[64], says[64];

    scl_pg_unhex(pq->getvalue(res, row, 0), name);
    out->name = name;
    out->held = strcmp(pq->getvalue(res, row, 1), "t") == 0;
    out->session = strtol(pq->getvalue(res, row, 4), NULL, 10);
    out->token = strtoull(pq->getvalue(res, row, 5), NULL, 10);
    out->since = (time_t)strtoll(pq->getvalue(res, row, 6), NULL, 10);
    snprintf(role, sizeof role, "%s", pq->getvalue(res, row, 7));
    out->role = role;
    out->connected = (time_t)strtoll(pq->getvalue(res, row, 9), NULL, 10);
    /* No client address is a local socket, when the server shows us the
     * session at all (its start): else it is another role's, unknown. */
    snprintf(address, sizeof address, "%s", pq->getvalue(res, row, 3));
    if (address[0] == '\0' && out->connected > 0)
        snprintf(address, sizeof address, "[local]");
    out->address = address;
    snprintf(says, sizeof says, "%s", pq->getvalue(res, row, 2));
    out->says = says;
    /* Any session can call itself 'swerve-claim pid=P host=H' (session.c):
     * only a member's is taken for the library's, and even then P and H
     * are what it says. */
    out->foreign = strcmp(pq->getvalue(res, row, 8), "t") != 0;
    out->pid = 0;
    snprintf(host, sizeof host, "%s", address);
    if (!out->foreign)
        scl_pg_says_who(says, &out->pid, host, sizeof host);
    out->host = host;
}

int scl_pg_tool_query(const char *sql, const char *only, scl_pg_result_fn *fn, void *arg)
{
    PGresult *res;
    int err;

    scl_pg_lock();
    scl_pg_deadline(scl_monotonic_ns() + SCL_BUDGET_PG_STATEMENT_NS);
    if (scl_pg_open(getpid()) != 0 || (res = scl_pg_run_named(sql, only, strlen(only))) == NULL) {
        err = errno;
        scl_pg_unlock();
        errno = err;
        return -1;
    }
    fn(scl_pg_libpq(), res, arg);
    scl_pg_libpq()->clear(res);
    scl_pg_unlock();
    return 0;
}

/* A listing's callback, for each_rows(). */
struct listed_each {
    scl_listed_fn *each;
    void *arg;
};

static void each_listed(const struct scl_libpq *pq, PGresult *res, void *arg)
{
    const struct listed_each *e = arg;
    char *name;

    for (int i = 0; i < pq->ntuples(res); i++) {
        struct scl_listed row;
        if ((name = malloc(strlen(pq->getvalue(res, i, 0)) / 2 + 1)) == NULL)
            break;
        read_row(pq, res, i, name, &row);
        e->each(&row, e->arg);
        free(name);
    }
}

/* Runs SQL (ROW_COLUMNS, $2 a name or '') and calls EACH per row. */
static int each_row(const char *sql, const char *only, scl_listed_fn *each, void *arg)
{
    struct listed_each e = { each, arg };

    return scl_pg_tool_query(sql, only, each_listed, &e);
}

static int scl_pg_list(scl_listed_fn *each, void *arg)
{
    return each_row(list_sql, "", each, arg);
}

struct ended {
    struct scl_listed *who;
    int found;
};

static void remember(const struct scl_listed *row, void *arg)
{
    struct ended *e = arg;

    if (row->held && !e->found) {
        *e->who = *row;
        e->who->name = NULL; /* freed when the row is done */
        e->found = 1;
    }
}

static int scl_pg_end_holder(const char *name, struct scl_listed *who)
{
    static const char end_sql[] =
        "SELECT " ROW_COLUMNS ", pg_terminate_backend(backend) "
        "FROM (SELECT * FROM swerve_claim.claims WHERE scope = $1 AND name = $2 AND held OFFSET 0) holder";
    struct ended e = { who, 0 };

    if (each_row(end_sql, name, remember, &e) != 0)
        return -1;
    return e.found;
}

/* Shuts every role out of the database but those with a grant of their
 * own (swerve_claim_user has one: schema.sql), the owner and superusers. */
static const char dedicate_sql[] =
    "DO $$ BEGIN EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', current_database()); END $$";
static const char access_sql[] =
    "SELECT current_database(), has_database_privilege('public', current_database(), 'CONNECT'), "
    "has_database_privilege('swerve_claim_user', current_database(), 'CONNECT'), "
    "(SELECT count(*) FROM swerve_claim.claims WHERE held AND NOT library)";

/* Runs SQL, a command, as db init: 0, or -1 with the server's words said. */
static int init_step(const struct scl_libpq *pq, const char *sql)
{
    PGresult *res = pq->exec(scl_pg_conn(), sql);
    int ok = res != NULL && pq->resultStatus(res) == SCL_PGRES_COMMAND_OK;
    const char *state = res != NULL ? pq->resultErrorField(res, SCL_PG_DIAG_SQLSTATE) : NULL;

    if (!ok)
        fprintf(stderr, "swerve-claim: db init: %s%s\n",
                res != NULL ? pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) : "out of memory",
                state != NULL && strcmp(state, "55P03") == 0
                    ? ": another session keeps a table of swerve_claim open in a transaction (pg_locks "
                      "says which); run db init again once it ends"
                    : "");
    if (res != NULL)
        pq->clear(res);
    return ok ? 0 : -1;
}

/* Who can connect now, into *ACCESS: 0, or -1 with errno. */
static int read_access(const struct scl_libpq *pq, struct scl_store_access *access)
{
    PGresult *res = scl_pg_run(access_sql, 0, NULL, NULL, NULL, NULL);

    if (res == NULL)
        return -1;
    snprintf(access->database, sizeof access->database, "%s", pq->getvalue(res, 0, 0));
    access->public_connects = strcmp(pq->getvalue(res, 0, 1), "t") == 0;
    access->members_connect = strcmp(pq->getvalue(res, 0, 2), "t") == 0;
    access->foreign_holders = strtol(pq->getvalue(res, 0, 3), NULL, 10);
    pq->clear(res);
    return 0;
}

static int scl_pg_init(int dedicated, struct scl_store_access *access)
{
    const struct scl_libpq *pq;
    int err = EIO, r = -1;

    scl_pg_lock();
    if (scl_pg_open(getpid()) != 0) {
        err = errno;
        scl_pg_unlock();
        errno = err;
        return -1;
    }
    pq = scl_pg_libpq();
    if (init_step(pq, init_lock_timeout_sql) == 0 && init_step(pq, scl_schema_sql) == 0 &&
        (!dedicated || init_step(pq, dedicate_sql) == 0)) {
        if ((r = read_access(pq, access)) != 0) {
            /* libpq's own words, on one line, when the session is still there to have them */
            const char *said = scl_pg_conn() != NULL ? pq->errorMessage(scl_pg_conn()) : "";
            int n = (int)strcspn(said, "\n");
            fprintf(stderr, "swerve-claim: db init: cannot see who may connect: %s%s%.*s\n", strerror(errno),
                    n > 0 ? ": " : "", n, said);
        }
    }
    scl_pg_unlock();
    errno = err;
    return r;
}

/* Where the server says it is; whether the schema is there, and open to
 * the session's role (a look inside a schema without USAGE is an error,
 * even one the planner makes to estimate); and whether the role may take
 * claims (the CASE keeps pg_has_role() from a role that does not exist). */
static const char check_sql[] =
    "SELECT coalesce(host(inet_server_addr()), ''), coalesce(inet_server_port()::text, ''), "
    "CASE WHEN to_regnamespace('swerve_claim') IS NULL THEN 'missing' "
    "WHEN NOT has_schema_privilege('swerve_claim', 'USAGE') THEN 'closed' ELSE 'open' END, "
    "CASE WHEN to_regrole('swerve_claim_user') IS NULL THEN false ELSE pg_has_role('swerve_claim_user', 'USAGE') END";
/* Then, in an open schema: whether it is as new as this code (the
 * functions the claim statements call, session.c, and the view's last
 * column). */
static const char current_sql[] =
    "SELECT to_regprocedure('swerve_claim.acquire_within(integer,integer,integer)') IS NOT NULL "
    "AND to_regprocedure('swerve_claim.token_for(integer,integer,double precision)') IS NOT NULL "
    "AND to_regprocedure('swerve_claim.release_recorded(integer,integer,integer)') IS NOT NULL "
    "AND to_regprocedure('swerve_claim.unlock_if_held(integer,integer)') IS NOT NULL "
    "AND to_regprocedure('swerve_claim.available(integer)') IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('swerve_claim.claims') "
    "AND attname = 'connected' AND NOT attisdropped)";

static int scl_pg_check(struct scl_store_check *out)
{
    const struct scl_libpq *pq;
    PGresult *res;
    int err, r = -1;

    memset(out, 0, sizeof *out);
    scl_pg_lock();
    scl_pg_deadline(scl_monotonic_ns() + SCL_BUDGET_PG_STATEMENT_NS);
    if (scl_pg_open(getpid()) != 0) {
        err = errno;
        out->seen = *scl_pg_seen();
        scl_pg_unlock();
        errno = err;
        return -1;
    }
    out->seen = *scl_pg_seen();
    out->accepted = 1;
    pq = scl_pg_libpq();
    if ((res = scl_pg_run(check_sql, 0, NULL, NULL, NULL, NULL)) == NULL)
        goto out;
    snprintf(out->behind, sizeof out->behind, "%s", pq->getvalue(res, 0, 0));
    snprintf(out->behind_port, sizeof out->behind_port, "%s", pq->getvalue(res, 0, 1));
    out->schema = strcmp(pq->getvalue(res, 0, 2), "missing") == 0  ? SCL_ADMIN_SCHEMA_MISSING
                  : strcmp(pq->getvalue(res, 0, 2), "closed") == 0 ? SCL_ADMIN_SCHEMA_CLOSED
                                                                   : SCL_ADMIN_SCHEMA_OLD;
    out->member = strcmp(pq->getvalue(res, 0, 3), "t") == 0;
    pq->clear(res);
    if (out->schema == SCL_ADMIN_SCHEMA_OLD) {
        if ((res = scl_pg_run(current_sql, 0, NULL, NULL, NULL, NULL)) == NULL)
            goto out;
        if (strcmp(pq->getvalue(res, 0, 0), "t") == 0)
            out->schema = SCL_ADMIN_SCHEMA_READY;
        pq->clear(res);
    }
    r = 0;
    /* The view is a member's to read: without it, who may connect is not ours to see. */
    if (out->schema == SCL_ADMIN_SCHEMA_READY && out->member)
        out->access_read = read_access(pq, &out->access) == 0;
out:
    err = errno;
    scl_pg_unlock();
    errno = err;
    return r;
}

extern const struct scl_admin_listing scl_pg_listing, scl_pg_history; /* listing_pg.c, history_pg.c */

/* The scope in use, for the tools' messages. */
static const char *scope(void)
{
    return scl_pg_settings()->scope;
}

const struct scl_store_admin scl_store_pg_admin = {
    .name = "PostgreSQL",
    .can = SCL_ADMIN_SESSIONS | SCL_ADMIN_SCHEMA,
    .listing = &scl_pg_listing,
    .history = &scl_pg_history,
    .list = scl_pg_list,
    .end_holder = scl_pg_end_holder,
    .init = scl_pg_init,
    .check = scl_pg_check,
    .keep_across_exec = scl_pg_keep_across_exec,
    .reason = scl_pg_reason,
    .scope = scope,
};
