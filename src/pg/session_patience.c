/* SPDX-License-Identifier: MIT */
/*
 * The session's patience (session_patience.h): a claim statement may wait
 * in the server (for a synchronous standby, for another session's row), and
 * a thread that wants the session meanwhile should not wait behind it
 * without end, nor cancel it at once (a token's commit would never get
 * through): it cancels it once it has waited PATIENCE_NS, and the caller
 * asked again after such a cancel lengthens the patience (store_pg.c).
 * The deadline is the caller's own bound on what it runs.
 */
#include "config.h"

#include "session.h"
#include "session_patience.h"

/* How long a queued thread waits for a claim statement before it cancels
 * it, unless scl_pg_patience() says otherwise. */
#define PATIENCE_NS (40 * 1000000LL)

static int64_t deadline = -1, patience = PATIENCE_NS;

void scl_pg_deadline(int64_t at)
{
    deadline = at;
}

void scl_pg_patience(int64_t ns)
{
    patience = ns;
}

int64_t scl_pg_deadline_now(void)
{
    return deadline;
}

int64_t scl_pg_patience_now(void)
{
    return patience;
}

void scl_pg_patience_reset(void)
{
    deadline = -1;
    patience = PATIENCE_NS;
}
