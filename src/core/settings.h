/*
 * The library's settings, read from the environment once: nginx and
 * php-fpm replace their workers' environment after fork, so a hook must
 * never call getenv() (see real-servers.md §2.5).  A setuid or otherwise
 * secure-execution process reads none of them (secure_getenv): its
 * environment is its less privileged caller's.
 */
#ifndef SCL_SETTINGS_H
#define SCL_SETTINGS_H

#include <signal.h>
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
    const char *store;     /* SWERVE_CLAIM_STORE: a libpq connection URI or
                            * conninfo, for the PostgreSQL store; NULL for
                            * the filesystem one */
    const char *scope;     /* SWERVE_CLAIM_SCOPE: the PostgreSQL store's
                            * namespace, "default" unless set */
    int store_error;       /* ENAMETOOLONG: either was too long to keep (the
                            * PostgreSQL store is still the one in use) */
    long max_names;        /* SWERVE_CLAIM_MAX_NAMES: how many names one
                            * process may hold in the PostgreSQL store */
    const char *pg_env;    /* libpq's variables (PGPASSFILE...) as the
                            * master's environment set them, as connection
                            * keywords: keyword, value, keyword, value...
                            * each NUL-terminated, then an empty string.  A
                            * server that wipes its workers' environment
                            * (php-fpm's clear_env) must not lose them */
    const char *pooler;    /* SWERVE_CLAIM_POOLER: "session" when a pooler
                            * in between is declared a session pooler */
    /* SWERVE_CLAIM_DRAIN_SIGNALS: the signals (bit N-1 for signal N) by
     * which a master tells a child to drain (drain.h);
     * SCL_DRAIN_SIGNALS_DEFAULT unless set.  When it named something that
     * is no signal, the default is kept and its value is in
     * drain_signals_refused (else NULL), to be said. */
    uint64_t drain_signals;
    const char *drain_signals_refused;
};

/* The longest SWERVE_CLAIM_STORE and SWERVE_CLAIM_SCOPE taken. */
#define SCL_STORE_MAX 4096
#define SCL_SCOPE_MAX 255
/* SWERVE_CLAIM_MAX_NAMES unless set: far below the 6,400 locks a
 * PostgreSQL server with the default settings has room for (64 per
 * connection, 100 connections), past which it refuses every new
 * connection, superusers' too. */
#define SCL_MAX_NAMES_DEFAULT 1000
/* SIGHUP, SIGINT, SIGQUIT and SIGTERM: each ends a worker, gracefully in
 * some servers (php-fpm's QUIT, gunicorn's TERM, uWSGI's HUP), at once in
 * others; SIGUSR1 is left out, as nginx, gunicorn and unicorn reopen their
 * logs on it (Apache's graceful USR1 is seen as its children close their
 * listeners). */
#define SCL_SIGNAL_BIT(sig) (1ULL << ((sig)-1))
#define SCL_DRAIN_SIGNALS_DEFAULT                                                                                      \
    (SCL_SIGNAL_BIT(SIGHUP) | SCL_SIGNAL_BIT(SIGINT) | SCL_SIGNAL_BIT(SIGQUIT) | SCL_SIGNAL_BIT(SIGTERM))
/* Room for the copies of libpq's variables (more is ENAMETOOLONG). */
#define SCL_PG_ENV_MAX 8192

/* Reads the environment on the first call (the constructor makes that
 * early); later calls return the same settings. */
const struct scl_settings *scl_settings(void);

#endif
