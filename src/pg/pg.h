/*
 * What the PostgreSQL store's files share: the tools' operations
 * (admin.c), which store_pg.c puts in its table of store.h operations.
 */
#ifndef SCL_PG_H
#define SCL_PG_H

#include "libpq.h"
#include "store.h"

#include <stddef.h>

/* Runs SQL with $1 the scope in use and $2 NAME (both bytea), the session
 * locked and open: the result, or NULL with errno (session.h). */
PGresult *scl_pg_run_named(const char *sql, const char *name, size_t len);

int scl_pg_list(scl_listed_fn *each, void *arg);
int scl_pg_end_holder(const char *name, struct scl_listed *who);
int scl_pg_init(int dedicated, struct scl_store_access *access);

#endif
