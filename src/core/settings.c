/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "hot.h"
#include "settings.h"
#include "sigsafe.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

SCL_HOT static struct scl_settings settings = { .base_dir = "/tmp",
                                                .claim_dir = "",
                                                .drain_signals = SCL_DRAIN_SIGNALS_DEFAULT };
SCL_HOT static atomic_int loaded; /* 0 not yet, 1 being read, 2 ready */
/* Copies of what the environment set (a host may overwrite its
 * environment to retitle itself), packed so a process touches one page. */
static char copies[2 * PATH_MAX];
static char refused_copy[64];

static const char *first_set(const char *a, const char *b)
{
    const char *v = secure_getenv(a);

    if (v == NULL || *v == '\0')
        v = secure_getenv(b);
    return v == NULL || *v == '\0' ? NULL : v;
}

/* The copy just made at *free_space, which then moves past it. */
static const char *take(char **free_space)
{
    char *copy = *free_space;

    *free_space += strlen(copy) + 1;
    return copy;
}

/* One entry of SWERVE_CLAIM_DRAIN_SIGNALS, the LEN bytes at NAME: a
 * signal's name with or without SIG, in any case (TERM, SIGTERM, term), or
 * its number (a real-time one's too): its bit, or 0 when it is none. */
static uint64_t signal_bit(const char *name, size_t len)
{
    size_t digits;

    if (len > 3 && strncasecmp(name, "SIG", 3) == 0) {
        name += 3;
        len -= 3;
    }
    digits = strspn(name, "0123456789");
    if (digits == len && len > 0 && len <= 2) {
        int sig = atoi(name);
        return sig >= 1 && sig <= 64 && sig < NSIG ? SCL_SIGNAL_BIT(sig) : 0;
    }
    for (int sig = 1; sig < NSIG && sig <= 64; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev != NULL && strlen(abbrev) == len && strncasecmp(abbrev, name, len) == 0)
            return SCL_SIGNAL_BIT(sig);
    }
    return 0;
}

/* SWERVE_CLAIM_DRAIN_SIGNALS: signals separated by commas or spaces, or
 * "none".  One that names no signal keeps the whole default (a typo must
 * not silently drop the rest), and is kept to be said (drain.c). */
static void load_drain_signals(void)
{
    const char *value = secure_getenv("SWERVE_CLAIM_DRAIN_SIGNALS");
    uint64_t set = 0;

    if (value == NULL || *value == '\0')
        return;
    for (const char *p = value + strspn(value, ", \t"); *p != '\0'; p += strspn(p, ", \t")) {
        size_t len = strcspn(p, ", \t");
        int none = len == 4 && strncasecmp(p, "none", 4) == 0;
        uint64_t bit = none ? 0 : signal_bit(p, len);
        if (bit == 0 && !none) {
            strncpy(refused_copy, value, sizeof refused_copy - 1); /* cut short: it is only said */
            settings.drain_signals_refused = refused_copy;
            return;
        }
        set |= bit;
        p += len;
    }
    settings.drain_signals = set;
}

/* BASE made absolute in OUT (PATH_MAX bytes): the working directory is
 * read straight into OUT, as this may run in the first hook called, on
 * a small stack. */
static int copy_absolute(char *out, const char *base)
{
    size_t len;

    if (base[0] == '/')
        return scl_concat(out, PATH_MAX, base, (char *)NULL);
    if (getcwd(out, PATH_MAX) == NULL)
        return -1;
    len = strlen(out);
    return scl_concat(out + len, PATH_MAX - len, "/", base, (char *)NULL);
}

static void load(void)
{
    const char *base = first_set("SWERVE_TMPDIR", "TMPDIR");
    const char *debug = secure_getenv("SWERVE_DEBUG"), *dir = secure_getenv(SCL_DIR_ENV);
    char *free_space = copies;

    settings.debug = debug != NULL && strcmp(debug, "1") == 0;
    load_drain_signals();
    if (dir != NULL && dir[0] == '/' && scl_concat(free_space, PATH_MAX, dir, (char *)NULL) == 0)
        settings.claim_dir = take(&free_space);
    if (base == NULL)
        return;
    /* A relative base would move with the host's chdir().  One that
     * cannot be used is an error, never /tmp instead. */
    if (copy_absolute(free_space, base) == 0) {
        settings.base_dir = take(&free_space);
    } else {
        settings.base_dir = "";
        settings.base_error = errno;
    }
}

void scl_settings_once(atomic_int *once, void (*load_them)(void))
{
    int expected = 0;

    if (atomic_load_explicit(once, memory_order_acquire) == 2)
        return;
    if (atomic_compare_exchange_strong(once, &expected, 1)) {
        load_them();
        atomic_store_explicit(once, 2, memory_order_release);
    } else {
        /* Another thread is reading the environment: it takes microseconds. */
        while (atomic_load_explicit(once, memory_order_acquire) != 2)
            ;
    }
}

const struct scl_settings *scl_settings(void)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire) != 2) /* read already: no call */
        scl_settings_once(&loaded, load);
    return &settings;
}
