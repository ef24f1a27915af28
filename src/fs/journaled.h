/* SPDX-License-Identifier: MIT */
/*
 * The file names this process has journaled in its holder file, so that
 * a worker making a new handle per request does not grow its journal per
 * request.  Guarded by scl_lock(); nothing allocated until the first 64
 * names are in (journaled.c says why).
 */
#ifndef SCL_JOURNALED_H
#define SCL_JOURNALED_H

#include <sys/types.h>

/* Makes the set process PID's for directory generation GEN: forgotten
 * when it was another's (a forked child's parent's) or another
 * directory's. */
void scl_journaled_for(pid_t pid, unsigned gen);

/* 1 when FNAME is in the set. */
int scl_journaled_has(const char *fname);

/* Adds FNAME: 0, or -1 with errno (ENOMEM). */
int scl_journaled_add(const char *fname);

#endif
