/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "hot.h"
#include "settings.h"
#include "settings_pg.h"
#include "sigsafe.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

SCL_HOT static struct scl_pg_settings settings = {
    .scope = "default", .max_names = SCL_MAX_NAMES_DEFAULT, .pg_env = "", .pooler = ""
};
SCL_HOT static atomic_int loaded; /* 0 not yet, 1 being read, 2 ready */
/* Copies of what the environment set (a host may overwrite its
 * environment to retitle itself). */
static char store_copy[SCL_STORE_MAX + 1], scope_copy[SCL_SCOPE_MAX + 1];
static char pg_env_copy[SCL_PG_ENV_MAX];

/* libpq's environment variables and the connection keyword each stands
 * for (libpq's "Environment Variables"; those without a keyword, such as
 * PGSERVICEFILE, cannot be passed on).  A fixed table rather than libpq's
 * PQconndefaults(): that one takes a lock of libpq's, which the child of
 * a threaded fork may find held for ever. */
static const struct {
    const char *env, *keyword;
} pg_variables[] = {
    { "PGHOST", "host" },
    { "PGHOSTADDR", "hostaddr" },
    { "PGPORT", "port" },
    { "PGDATABASE", "dbname" },
    { "PGUSER", "user" },
    { "PGPASSWORD", "password" },
    { "PGPASSFILE", "passfile" },
    { "PGCHANNELBINDING", "channel_binding" },
    { "PGSERVICE", "service" },
    { "PGOPTIONS", "options" },
    { "PGAPPNAME", "application_name" },
    { "PGSSLMODE", "sslmode" },
    { "PGREQUIRESSL", "requiressl" },
    { "PGSSLCOMPRESSION", "sslcompression" },
    { "PGSSLCERT", "sslcert" },
    { "PGSSLKEY", "sslkey" },
    { "PGSSLROOTCERT", "sslrootcert" },
    { "PGSSLCRL", "sslcrl" },
    { "PGSSLCRLDIR", "sslcrldir" },
    { "PGSSLSNI", "sslsni" },
    { "PGREQUIREPEER", "requirepeer" },
    { "PGSSLMINPROTOCOLVERSION", "ssl_min_protocol_version" },
    { "PGSSLMAXPROTOCOLVERSION", "ssl_max_protocol_version" },
    { "PGGSSENCMODE", "gssencmode" },
    { "PGKRBSRVNAME", "krbsrvname" },
    { "PGGSSLIB", "gsslib" },
    { "PGCONNECT_TIMEOUT", "connect_timeout" },
    { "PGCLIENTENCODING", "client_encoding" },
    { "PGTARGETSESSIONATTRS", "target_session_attrs" },
};

/* libpq's own variables, which libpq would otherwise read from the
 * environment of whichever process connects: a worker's may have been
 * wiped.  Kept as keyword and value, one after the other. */
static void load_pg_env(void)
{
    size_t used = 0;

    for (size_t i = 0; i < sizeof pg_variables / sizeof pg_variables[0]; i++) {
        const char *value = secure_getenv(pg_variables[i].env);
        size_t klen = strlen(pg_variables[i].keyword), vlen;
        if (value == NULL)
            continue;
        vlen = strlen(value);
        if (used + klen + vlen + 3 > sizeof pg_env_copy) {
            settings.store_error = ENAMETOOLONG; /* never connect without it */
            break;
        }
        memcpy(pg_env_copy + used, pg_variables[i].keyword, klen + 1);
        memcpy(pg_env_copy + used + klen + 1, value, vlen + 1);
        used += klen + vlen + 2;
    }
    pg_env_copy[used] = '\0';
    settings.pg_env = pg_env_copy;
}

/* The PostgreSQL store's settings.  One too long to keep is an error of
 * that store, never the local store instead: that would split one fleet
 * into one claim space per machine. */
static void load(void)
{
    const char *store = secure_getenv("SWERVE_CLAIM_STORE"), *scope = secure_getenv("SWERVE_CLAIM_SCOPE");
    const char *max_names = secure_getenv("SWERVE_CLAIM_MAX_NAMES"), *pooler = secure_getenv("SWERVE_CLAIM_POOLER");

    if (store == NULL || *store == '\0')
        return;
    if (scl_concat(store_copy, sizeof store_copy, store, (char *)NULL) != 0)
        settings.store_error = ENAMETOOLONG;
    settings.store = store_copy;
    if (scope != NULL && *scope != '\0') {
        if (scl_concat(scope_copy, sizeof scope_copy, scope, (char *)NULL) != 0)
            settings.store_error = ENAMETOOLONG;
        settings.scope = scope_copy;
    }
    if (max_names != NULL && *max_names != '\0') {
        char *end;
        long n = strtol(max_names, &end, 10);
        /* A value that is not a positive number keeps the default. */
        if (*end == '\0' && n > 0)
            settings.max_names = n;
    }
    settings.pooler = pooler != NULL && strcmp(pooler, "session") == 0 ? "session" : "";
    load_pg_env();
}

const struct scl_pg_settings *scl_pg_settings(void)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire) != 2) /* read already: no call */
        scl_settings_once(&loaded, load);
    return &settings;
}

int scl_pg_chosen(void)
{
    return scl_pg_settings()->store != NULL;
}
