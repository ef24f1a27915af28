/* SPDX-License-Identifier: MIT */
/*
 * Removing claim directories: the last live member removes its own as it
 * ends, and a server starting below a base directory removes those of its
 * user that no live process uses any more (a tree SIGKILLed whole), never
 * a live one.  Async-signal-safe: a hook (a drop of root, a chroot) may
 * make a directory inside a signal handler, and ends run in them.
 */
#ifndef SCL_RETIRE_H
#define SCL_RETIRE_H

#include "layout.h"

#include <limits.h>
#include <sys/types.h>

struct scl_budget;

/* How many leftovers of claims/ (".new.*" holder files never finished,
 * ".wait.*" waiters' FIFOs) a removal unlinks at most: a worker may plant
 * any number of them, and the library removes as a master ends, or as a
 * server's first claim sweeps (SCL_BUDGET_RETIRE_LEFTOVERS).  Past them
 * the directory stays, as with any other file a worker plants; the tools
 * (`gc`) unlink them all. */
#define SCL_RETIRE_ALL UINT_MAX

/* Removes the claim directory NAME of BASEFD (its top open as TOP_FD, its
 * claims directory as CLAIMS_FD) unless a live member is left; dead
 * holders are cleared first.  It reads SCL_BUDGET_REMOVAL_ENTRIES entries
 * of claims/ in all, whatever was planted there, or spends from SHARED
 * when it is not NULL (the budget of several removals: a sweep's).  0 when removed, or -1
 * with errno (EBUSY: a live member is left; ENOTEMPTY: past its budget,
 * said on SWERVE_DEBUG; EPERM: the top is another user's, and this
 * process could not take it out of a sticky base). */
int scl_retire(int basefd, const char *name, int top_fd, int claims_fd, unsigned leftovers, struct scl_budget *shared);

/* The same, opening NAME and its claims directory: when INO is not 0,
 * only while NAME is still the directory DEV/INO. */
int scl_retire_named(int basefd, const char *name, dev_t dev, ino_t ino, unsigned leftovers, struct scl_budget *shared);

/* The same for the claim directory at PATH (its parent opened by path). */
int scl_retire_path(const char *path, dev_t dev, ino_t ino, unsigned leftovers);

/* Removes this user's claim directories below BASEFD with no live member
 * left, and ".new" ones their maker abandoned over an hour ago. */
void scl_sweep_abandoned(int basefd);

#endif
