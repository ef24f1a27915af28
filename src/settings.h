/*
 * The library's settings, read from the environment once: nginx and
 * php-fpm replace their workers' environment after fork, so a hook must
 * never call getenv() (see real-servers.md §2.5).
 */
#ifndef SCL_SETTINGS_H
#define SCL_SETTINGS_H

#include <limits.h>

struct scl_settings {
    char base_dir[PATH_MAX]; /* absolute; below it live the claim directories */
    int debug;               /* SWERVE_DEBUG=1: log to standard error */
};

/* Reads the environment on the first call (the constructor makes that
 * early); later calls return the same settings. */
const struct scl_settings *scl_settings(void);

#endif
