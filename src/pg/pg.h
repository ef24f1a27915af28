/* SPDX-License-Identifier: MIT */
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

/*
 * For the tools (admin.c, in libscl_admin).
 */

/* Runs SQL as scl_pg_run_named() does, with NAME (or "") as $2, under a
 * tool's deadline, and gives FN the result: 0, or -1 with errno. */
typedef void scl_pg_result_fn(const struct scl_libpq *pq, PGresult *res, void *arg);
int scl_pg_tool_query(const char *sql, const char *name, scl_pg_result_fn *fn, void *arg);

/* HEX (encode(..., 'hex')) decoded into OUT, NUL-terminated (OUT has
 * room for strlen(HEX) / 2 + 1 bytes). */
void scl_pg_unhex(const char *hex, char *out);

/* The pid and host a library session says it is ("swerve-claim pid=P
 * host=H"), into *PID and HOST, when SAYS is that: its own word. */
void scl_pg_says_who(const char *says, long *pid, char *host, size_t cap);

#endif
