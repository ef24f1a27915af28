/* SPDX-License-Identifier: MIT */
/*
 * Debug logging, off unless SWERVE_DEBUG=1: a guest in someone else's
 * process prints nothing unasked.  Async-signal-safe (one write(2) per
 * line, no stdio) since it is called from the hooks.
 */
#ifndef SCL_LOG_H
#define SCL_LOG_H

/* Formats %s; %d, %i, %u and %o (%#o: a mode, 0777), each with l, ll or
 * z; %%; and %m: errno as it was at the call, named ("Not a directory
 * (ENOTDIR)").  Anything else ends the line with "%?": its argument could
 * not be read safely.  Keeps errno. */
void scl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The longest why kept, its NUL included. */
#define SCL_WHY_MAX 512

/* Why a call of the API fails, in scl_debug()'s format: logged as
 * scl_debug() logs, and kept as this thread's why, which
 * swerve_claim_why() returns until the next call clears it.  The first
 * since then is kept (the cause; what fails because of it says less).  For the
 * failure paths of the API (a path it shares with a hook may call it
 * too: async-signal-safe, no allocation, errno kept). */
void scl_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same, kept only: the caller has logged it already. */
void scl_why_quiet(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* No why: at the start of every call of the API that can fail. */
void scl_why_clear(void);

/* This thread's why, or NULL when the last call said none. */
const char *scl_why_said(void);

#endif
