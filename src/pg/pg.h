/*
 * What the PostgreSQL store's files share: the library's (store_pg.c)
 * and the tools' (admin.c).
 */
#ifndef SCL_PG_H
#define SCL_PG_H

#include "libpq.h"
#include "store.h"

#include <stddef.h>

/* Runs SQL with $1 the scope in use and $2 NAME (both bytea), the session
 * locked and open: the result, or NULL with errno (session.h). */
PGresult *scl_pg_run_named(const char *sql, const char *name, size_t len);

#endif
