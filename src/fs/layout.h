/* SPDX-License-Identifier: MIT */
/*
 * The filesystem store on disk: every name it makes, in one place.
 *
 *     BASE/                          $SWERVE_TMPDIR, $TMPDIR or /tmp (checked: dir.c)
 *     ├── swerve-claim.run-HOST.history  a named directory's history, kept while it is not
 *     │                              there (history.h)
 *     └── swerve-claim.XXXXXXXXXXXX/ a claim directory, 0700 (.new while it is built)
 *         ├── wake                   futex words for waiters (wake.h), 0600
 *         ├── history                the last holds of each name (history.h), 0600
 *         ├── .times.PID             when it took each claim, what it waits for (times.h)
 *         └── claims/
 *             ├── NAME               a claim: a hard link to its holder's file (names.h)
 *             ├── .holder.PID        "PID START\n", then the journal (holder.h)
 *             └── .new.PID.MAKER     a holder file being written
 *
 * No encoded name starts with '.', so claims and the rest never meet.
 */
#ifndef SCL_LAYOUT_H
#define SCL_LAYOUT_H

#include "sigsafe.h"

#include <string.h>

#define SCL_DIR_PREFIX "swerve-claim." /* a claim directory's name */
#define SCL_NEW_SUFFIX ".new"          /* ... while it is built, before it is renamed */
/* ... then, for a server's, random characters: */
#define SCL_RANDOM_CHARS    12
#define SCL_RANDOM_ALPHABET "abcdefghijklmnopqrstuvwxyz234567" /* base32's letters */
/* ... and beside a named one (not random: `swerve-claim run`'s), its
 * history while it is not there. */
#define SCL_KEPT_HISTORY_SUFFIX ".history"
#define SCL_WAKE_FILE           "wake"
#define SCL_HISTORY_FILE        "history"
#define SCL_CLAIMS_DIR          "claims"
#define SCL_HOLDER_PREFIX       ".holder." /* then the pid */
/* A holder file's extended attribute: its process's command line when it
 * last took a new name, so that the tools can say who a dead holder was. */
#define SCL_COMMAND_XATTR "user.swerve-claim.command"
/* Another, "1" when its process runs an image exec'd after it was forked
 * (SWERVE_CLAIM_DIR at load, or swerve-claim run's command): a uWSGI
 * worker's command line is its master's, so only this tells the tools'
 * ROLE an exec'd worker from a forked one. */
#define SCL_EXECD_XATTR       "user.swerve-claim.execd"
#define SCL_HOLDER_NEW_PREFIX ".new."   /* then the pid, '.', and the pid of its maker */
#define SCL_TIMES_PREFIX      ".times." /* then the pid */
/* Room for any of the three names above, NUL included; small, as these
 * live on the stack of hook paths. */
#define SCL_PID_NAME_MAX 48
_Static_assert(sizeof SCL_HOLDER_NEW_PREFIX + 20 + 1 + 20 <= SCL_PID_NAME_MAX, "two pids fit");

/* 1 when NAME (a path's last component) is a claim directory's random
 * name: a server's, never made again once its server has ended. */
static inline int scl_layout_is_random(const char *name)
{
    const char *rest = scl_after_prefix(name, SCL_DIR_PREFIX);

    return rest != NULL && strlen(rest) == SCL_RANDOM_CHARS && strspn(rest, SCL_RANDOM_ALPHABET) == SCL_RANDOM_CHARS;
}

/* 1 when NAME is a claim directory still being built (or abandoned so). */
static inline int scl_layout_is_unfinished(const char *name)
{
    size_t len = strlen(name);

    return len > sizeof SCL_NEW_SUFFIX - 1 && strcmp(name + len - (sizeof SCL_NEW_SUFFIX - 1), SCL_NEW_SUFFIX) == 0;
}

#endif
