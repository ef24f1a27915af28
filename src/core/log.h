/*
 * Debug logging, off unless SWERVE_DEBUG=1: a guest in someone else's
 * process prints nothing unasked.  Async-signal-safe (one write(2) per
 * line, no stdio) since it is called from the hooks.
 */
#ifndef SCL_LOG_H
#define SCL_LOG_H

/* Formats %s, %d, %ld, %lu, %llu, %#o (a mode: 0777) and %% only, and %m: errno as it was at
 * the call, named ("Not a directory (ENOTDIR)").  Keeps errno. */
void scl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
