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
                                                .scope = "default",
                                                .max_names = SCL_MAX_NAMES_DEFAULT,
                                                .pg_env = "",
                                                .pooler = "",
                                                .drain_signals = SCL_DRAIN_SIGNALS_DEFAULT };
SCL_HOT static atomic_int loaded; /* 0 not yet, 1 being read, 2 ready */
/* Copies of what the environment set (a host may overwrite its
 * environment to retitle itself), packed so a process touches one page. */
static char copies[2 * PATH_MAX];
static char store_copy[SCL_STORE_MAX + 1], scope_copy[SCL_SCOPE_MAX + 1];
static char pg_env_copy[SCL_PG_ENV_MAX];
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

/* libpq's environment variables and the connection keyword each stands
 * for (libpq's "Environment Variables"; those without a keyword, such as
 * PGSERVICEFILE, cannot be passed on).  A fixed table rather than libpq's
 * PQconndefaults(): that one takes a lock of libpq's, which the child of
 * a threaded fork may find held for ever. */
static const struct {
    const char *env, *keyword;
} pg_variables[] = {
    { "PGHOST", "host" },
    { "PGHOSTADDR", "hostaddr" },
    { "PGPORT", "port" },
    { "PGDATABASE", "dbname" },
    { "PGUSER", "user" },
    { "PGPASSWORD", "password" },
    { "PGPASSFILE", "passfile" },
    { "PGCHANNELBINDING", "channel_binding" },
    { "PGSERVICE", "service" },
    { "PGOPTIONS", "options" },
    { "PGAPPNAME", "application_name" },
    { "PGSSLMODE", "sslmode" },
    { "PGREQUIRESSL", "requiressl" },
    { "PGSSLCOMPRESSION", "sslcompression" },
    { "PGSSLCERT", "sslcert" },
    { "PGSSLKEY", "sslkey" },
    { "PGSSLROOTCERT", "sslrootcert" },
    { "PGSSLCRL", "sslcrl" },
    { "PGSSLCRLDIR", "sslcrldir" },
    { "PGSSLSNI", "sslsni" },
    { "PGREQUIREPEER", "requirepeer" },
    { "PGSSLMINPROTOCOLVERSION", "ssl_min_protocol_version" },
    { "PGSSLMAXPROTOCOLVERSION", "ssl_max_protocol_version" },
    { "PGGSSENCMODE", "gssencmode" },
    { "PGKRBSRVNAME", "krbsrvname" },
    { "PGGSSLIB", "gsslib" },
    { "PGCONNECT_TIMEOUT", "connect_timeout" },
    { "PGCLIENTENCODING", "client_encoding" },
    { "PGTARGETSESSIONATTRS", "target_session_attrs" },
};

/* libpq's own variables, which libpq would otherwise read from the
 * environment of whichever process connects: a worker's may have been
 * wiped.  Kept as keyword and value, one after the other. */
static void load_pg_env(void)
{
    size_t used = 0;

    for (size_t i = 0; i < sizeof pg_variables / sizeof pg_variables[0]; i++) {
        const char *value = secure_getenv(pg_variables[i].env);
        size_t klen = strlen(pg_variables[i].keyword), vlen;
        if (value == NULL)
            continue;
        vlen = strlen(value);
        if (used + klen + vlen + 3 > sizeof pg_env_copy) {
            settings.store_error = ENAMETOOLONG; /* never connect without it */
            break;
        }
        memcpy(pg_env_copy + used, pg_variables[i].keyword, klen + 1);
        memcpy(pg_env_copy + used + klen + 1, value, vlen + 1);
        used += klen + vlen + 2;
    }
    pg_env_copy[used] = '\0';
    settings.pg_env = pg_env_copy;
}

/* The PostgreSQL store's settings.  One too long to keep is an error of
 * that store, never the local store instead: that would split one fleet
 * into one claim space per machine. */
static void load_store(void)
{
    const char *store = secure_getenv("SWERVE_CLAIM_STORE"), *scope = secure_getenv("SWERVE_CLAIM_SCOPE");
    const char *max_names = secure_getenv("SWERVE_CLAIM_MAX_NAMES"), *pooler = secure_getenv("SWERVE_CLAIM_POOLER");

    if (store == NULL || *store == '\0')
        return;
    if (scl_concat(store_copy, sizeof store_copy, store, (char *)NULL) != 0)
        settings.store_error = ENAMETOOLONG;
    settings.store = store_copy;
    if (scope != NULL && *scope != '\0') {
        if (scl_concat(scope_copy, sizeof scope_copy, scope, (char *)NULL) != 0)
            settings.store_error = ENAMETOOLONG;
        settings.scope = scope_copy;
    }
    if (max_names != NULL && *max_names != '\0') {
        char *end;
        long n = strtol(max_names, &end, 10);
        /* A value that is not a positive number keeps the default. */
        if (*end == '\0' && n > 0)
            settings.max_names = n;
    }
    settings.pooler = pooler != NULL && strcmp(pooler, "session") == 0 ? "session" : "";
    load_pg_env();
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
    load_store();
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

const struct scl_settings *scl_settings(void)
{
    int expected = 0;

    if (atomic_load_explicit(&loaded, memory_order_acquire) == 2)
        return &settings;
    if (atomic_compare_exchange_strong(&loaded, &expected, 1)) {
        load();
        atomic_store_explicit(&loaded, 2, memory_order_release);
    } else {
        /* Another thread is reading the environment: it takes microseconds. */
        while (atomic_load_explicit(&loaded, memory_order_acquire) != 2)
            ;
    }
    return &settings;
}
