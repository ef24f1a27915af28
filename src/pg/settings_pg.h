/* SPDX-License-Identifier: MIT */
/*
 * The PostgreSQL store's settings, read from the environment once, as
 * core's are (settings.h: with secure_getenv, copied, never read again
 * from a hook), the first time the store table asks whether this store is
 * the one in use (scl_pg_chosen(): at load, from the constructor).
 */
#ifndef SCL_SETTINGS_PG_H
#define SCL_SETTINGS_PG_H

struct scl_pg_settings {
    const char *store;  /* SWERVE_CLAIM_STORE: a libpq connection URI or
                         * conninfo; NULL when unset (another store is
                         * in use) */
    const char *scope;  /* SWERVE_CLAIM_SCOPE: the store's namespace,
                         * "default" unless set */
    int store_error;    /* ENAMETOOLONG: either was too long to keep (the
                         * PostgreSQL store is still the one in use) */
    long max_names;     /* SWERVE_CLAIM_MAX_NAMES: how many names one
                         * process may hold */
    const char *pg_env; /* libpq's variables (PGPASSFILE...) as the
                         * master's environment set them, as connection
                         * keywords: keyword, value, keyword, value...
                         * each NUL-terminated, then an empty string.  A
                         * server that wipes its workers' environment
                         * (php-fpm's clear_env) must not lose them */
    const char *pooler; /* SWERVE_CLAIM_POOLER: "session" when a pooler
                         * in between is declared a session pooler */
};

/* The longest SWERVE_CLAIM_STORE and SWERVE_CLAIM_SCOPE taken. */
#define SCL_STORE_MAX 4096
#define SCL_SCOPE_MAX 255
/* SWERVE_CLAIM_MAX_NAMES unless set: far below the 6,400 locks a
 * PostgreSQL server with the default settings has room for (64 per
 * connection, 100 connections), past which it refuses every new
 * connection, superusers' too. */
#define SCL_MAX_NAMES_DEFAULT 1000
/* Room for the copies of libpq's variables (more is ENAMETOOLONG). */
#define SCL_PG_ENV_MAX 8192

/* Reads the environment on the first call; later calls return the same
 * settings. */
const struct scl_pg_settings *scl_pg_settings(void);

/* The store table's question (stores.h): 1 when SWERVE_CLAIM_STORE is
 * set, else 0. */
int scl_pg_chosen(void);

#endif
