/* The PostgreSQL store's operations for the tools: list, release --force,
 * db init.  They run in swerve-claim, never in a host under the shim. */
#include "config.h"

#include "pg.h"
#include "schema_sql.h"
#include "session.h"
#include "settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char list_sql[] =
    "SELECT encode(name, 'hex'), held, coalesce(application_name, ''), coalesce(host(client_addr), ''), backend, "
    "coalesce(token, 0), coalesce(extract(epoch FROM since)::bigint, 0) FROM swerve_claim.claims WHERE scope = $1 "
    "AND ($2 = ''::bytea OR name = $2) ORDER BY name, held DESC, since";

static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
}

/* ROW's columns (list_sql's) into *OUT; NAME holds the decoded name. */
static void read_row(const struct scl_libpq *pq, PGresult *res, int row, char *name, struct scl_listed *out)
{
    const char *hex = pq->getvalue(res, row, 0), *application = pq->getvalue(res, row, 2), *p;
    size_t n = strlen(hex) / 2;
    static char host[256];

    for (size_t i = 0; i < n; i++)
        name[i] = (char)(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
    name[n] = '\0';
    out->name = name;
    out->held = strcmp(pq->getvalue(res, row, 1), "t") == 0;
    out->pid = 0;
    /* 'swerve-claim pid=P host=H' (session.c); another client shows its address. */
    snprintf(host, sizeof host, "%s", pq->getvalue(res, row, 3));
    if (strncmp(application, "swerve-claim pid=", 17) == 0) {
        out->pid = strtol(application + 17, NULL, 10);
        if ((p = strstr(application, " host=")) != NULL)
            snprintf(host, sizeof host, "%s", p + 6);
    }
    out->host = host;
    out->session = strtol(pq->getvalue(res, row, 4), NULL, 10);
    out->token = strtoull(pq->getvalue(res, row, 5), NULL, 10);
    out->since = (time_t)strtoll(pq->getvalue(res, row, 6), NULL, 10);
}

/* Runs SQL (list_sql's columns, $2 a name or '') and calls EACH per row. */
static int each_row(const char *sql, const char *only, scl_listed_fn *each, void *arg)
{
    const struct scl_libpq *pq;
    PGresult *res;
    char *name;
    int err;

    scl_pg_lock();
    if (scl_pg_open(getpid()) != 0 || (res = scl_pg_run_named(sql, only, strlen(only))) == NULL) {
        err = errno;
        scl_pg_unlock();
        errno = err;
        return -1;
    }
    pq = scl_pg_libpq();
    for (int i = 0; i < pq->ntuples(res); i++) {
        struct scl_listed row;
        if ((name = malloc(strlen(pq->getvalue(res, i, 0)) / 2 + 1)) == NULL)
            break;
        read_row(pq, res, i, name, &row);
        each(&row, arg);
        free(name);
    }
    pq->clear(res);
    scl_pg_unlock();
    return 0;
}

int scl_pg_list(scl_listed_fn *each, void *arg)
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

int scl_pg_end_holder(const char *name, struct scl_listed *who)
{
    static const char end_sql[] =
        "SELECT encode(name, 'hex'), held, coalesce(application_name, ''), coalesce(host(client_addr), ''), backend, "
        "coalesce(token, 0), coalesce(extract(epoch FROM since)::bigint, 0), pg_terminate_backend(backend) "
        "FROM (SELECT * FROM swerve_claim.claims WHERE scope = $1 AND name = $2 AND held OFFSET 0) holder";
    struct ended e = { who, 0 };

    if (each_row(end_sql, name, remember, &e) != 0)
        return -1;
    return e.found;
}

int scl_pg_init(void)
{
    const struct scl_libpq *pq;
    PGresult *res;
    int err, ok;

    scl_pg_lock();
    if (scl_pg_open(getpid()) != 0) {
        err = errno;
        scl_pg_unlock();
        errno = err;
        return -1;
    }
    pq = scl_pg_libpq();
    res = pq->exec(scl_pg_conn(), scl_schema_sql);
    ok = res != NULL && pq->resultStatus(res) == SCL_PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "swerve-claim: db init: %s\n",
                res != NULL ? pq->resultErrorField(res, SCL_PG_DIAG_MESSAGE_PRIMARY) : "out of memory");
    if (res != NULL)
        pq->clear(res);
    scl_pg_unlock();
    if (ok)
        return 0;
    errno = EIO;
    return -1;
}
