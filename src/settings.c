#include "config.h"

#include "settings.h"
#include "sigsafe.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct scl_settings settings;
static atomic_int loaded; /* 0 not yet, 1 being read, 2 ready */

static const char *first_set(const char *a, const char *b, const char *fallback)
{
    const char *v = getenv(a);

    if (v == NULL || *v == '\0')
        v = getenv(b);
    return v == NULL || *v == '\0' ? fallback : v;
}

static void load(void)
{
    const char *base = first_set("SWERVE_TMPDIR", "TMPDIR", "/tmp");
    const char *debug = getenv("SWERVE_DEBUG"), *dir = getenv(SCL_DIR_ENV);
    char cwd[PATH_MAX];

    settings.debug = debug != NULL && strcmp(debug, "1") == 0;
    if (dir != NULL && dir[0] == '/')
        (void)scl_concat(settings.claim_dir, sizeof settings.claim_dir, dir, (char *)NULL);
    /* A relative base would move with the host's chdir(). */
    if (base[0] != '/' && getcwd(cwd, sizeof cwd) != NULL &&
        scl_concat(settings.base_dir, sizeof settings.base_dir, cwd, "/", base, (char *)NULL) == 0)
        return;
    if (scl_concat(settings.base_dir, sizeof settings.base_dir, base, (char *)NULL) != 0)
        (void)scl_concat(settings.base_dir, sizeof settings.base_dir, "/tmp", (char *)NULL);
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
