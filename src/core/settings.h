/* SPDX-License-Identifier: MIT */
/*
 * The library's settings, read from the environment once: nginx and
 * php-fpm replace their workers' environment after fork, so a hook must
 * never call getenv() (see real-servers.md §2.5).  A setuid or otherwise
 * secure-execution process reads none of them (secure_getenv): its
 * environment is its less privileged caller's.  These are what every
 * store needs; a store's own are in its folder (src/pg/settings_pg.h).
 */
#ifndef SCL_SETTINGS_H
#define SCL_SETTINGS_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

/* The variable through which an exec'd process of a server finds the
 * server's claim directory (set by the exec hooks, read at load). */
#define SCL_DIR_ENV "SWERVE_CLAIM_DIR"

struct scl_settings {
    const char *base_dir;  /* absolute; below it live the claim directories;
                            * "" when the environment named an unusable one */
    int base_error;        /* then why (ENAMETOOLONG: longer than PATH_MAX) */
    const char *claim_dir; /* SWERVE_CLAIM_DIR, or "" */
    int debug;             /* SWERVE_DEBUG=1: log to standard error */
    /* SWERVE_CLAIM_DRAIN_SIGNALS: the signals (bit N-1 for signal N) by
     * which a master tells a child to drain (drain.h);
     * SCL_DRAIN_SIGNALS_DEFAULT unless set.  When it named something that
     * is no signal, the default is kept and its value is in
     * drain_signals_refused (else NULL), to be said. */
    uint64_t drain_signals;
    const char *drain_signals_refused;
};

/* SIGHUP, SIGINT, SIGQUIT and SIGTERM: each ends a worker, gracefully in
 * some servers (php-fpm's QUIT, gunicorn's TERM, uWSGI's HUP), at once in
 * others; SIGUSR1 is left out, as nginx, gunicorn and unicorn reopen their
 * logs on it (Apache's graceful USR1 is seen as its children close their
 * listeners). */
#define SCL_SIGNAL_BIT(sig) (1ULL << ((sig)-1))
#define SCL_DRAIN_SIGNALS_DEFAULT                                                                                      \
    (SCL_SIGNAL_BIT(SIGHUP) | SCL_SIGNAL_BIT(SIGINT) | SCL_SIGNAL_BIT(SIGQUIT) | SCL_SIGNAL_BIT(SIGTERM))
/* Reads the environment on the first call (the constructor makes that
 * early); later calls return the same settings. */
const struct scl_settings *scl_settings(void);

/* Runs LOAD_THEM once, on the first call for ONCE (0 until then): a
 * store's own settings (stores.h) are read the same way as these.  A
 * thread that finds another reading waits for it. */
void scl_settings_once(atomic_int *once, void (*load_them)(void));

#endif
