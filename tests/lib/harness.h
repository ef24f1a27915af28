/* SPDX-License-Identifier: MIT */
/*
 * Running helper programs and the prefork server under the shim, for the
 * Check tests: an explicit environment (LD_PRELOAD, SWERVE_TMPDIR), a
 * bound on every wait, loopback only, stopped by pid.
 */
#ifndef SCL_HARNESS_H
#define SCL_HARNESS_H

#include <sys/types.h>

/* The environment a preloaded program gets: PATH, SWERVE_TMPDIR=BASE,
 * LD_PRELOAD (libasan first in a sanitizer build) when PRELOAD, then
 * EXTRA (NULL or NULL-terminated "NAME=value", replacing a NAME). */
struct harness_env {
    char *vars[24];
    char storage[3][8192];
};
void harness_env(struct harness_env *env, const char *base, int preload, const char *const *extra);

/* The path of test program NAME (from SCL_HELPERS). */
void harness_program(char *out, size_t cap, const char *name);

struct server {
    pid_t launched; /* the process we started (gone early with --daemonize) */
    pid_t master;   /* from --pid-file */
    int port;       /* from --port-file */
    char dir[4096]; /* a scratch directory for its files */
};

/* In the Check runner, around a test case (an unchecked fixture): every
 * server a test started is killed at the end, even one whose test failed
 * and so never stopped it. */
void harness_registry_begin(void);
void harness_registry_end(void);

/* Starts prefork_server ARGS... under the shim with files in DIR, and
 * waits (at most 10 s) until it has written its pid and port.  0, or -1. */
int server_start(struct server *s, const char *base, const char *dir, const char *const *args);

/* GET PATH from 127.0.0.1:PORT; the body in BODY.  0, or -1. */
int http_get(int port, const char *path, char *body, size_t cap);

/* Sends SIGTERM to the master, waits (at most 10 s) until it is gone and
 * reaps what we launched.  0 when it stopped in time. */
int server_stop(struct server *s);

#endif
