/* SPDX-License-Identifier: MIT */
/*
 * swerve/claim-loader.h - use swerve claims when the shim is preloaded,
 * and keep running when it is not.  Header only; link with -ldl on glibc
 * older than 2.34.
 *
 *     #include <swerve/claim-loader.h>
 *
 *     struct swerve_claim_api api;
 *     if (swerve_claim_load(&api)) {
 *         SWERVE_CLAIM_AUTO struct swerve_claim *c = api.new_claim("nightly-report");
 *         if (c && api.acquire(c, 0.0))
 *             run_report();
 *     }                        // c is released and freed here
 *
 * swerve_claim_load() looks every function up with dlsym(RTLD_DEFAULT, ...).
 * It returns 1 and fills API when libswerveclaim_preload.so is loaded, or 0
 * and zeroes API when it is not (no LD_PRELOAD, a static or setuid binary):
 * the caller then decides what running without claims means for it.
 *
 * SWERVE_CLAIM_AUTO marks a `struct swerve_claim *` variable that is freed
 * (and so released) when it goes out of scope, like a claim held by a local
 * variable in Swerve.  It needs a successful swerve_claim_load() first.
 */
#ifndef SWERVE_CLAIM_LOADER_H
#define SWERVE_CLAIM_LOADER_H

#include <dlfcn.h>
#include <string.h>
#include <swerve/claim.h>

struct swerve_claim_api {
    struct swerve_claim *(*new_claim)(const char *name);
    const char *(*name)(const struct swerve_claim *claim);
    int (*available)(const struct swerve_claim *claim);
    struct swerve_claim *(*acquire)(struct swerve_claim *claim, double timeout);
    int (*held)(const struct swerve_claim *claim);
    int (*release)(struct swerve_claim *claim);
    void (*free)(struct swerve_claim *claim);
    /* Since SWERVECLAIM_1.1: NULL with an older library. */
    uint64_t (*token)(const struct swerve_claim *claim);
    /* Since SWERVECLAIM_1.2: NULL with an older library. */
    int (*draining)(void);
    /* Since SWERVECLAIM_1.3: NULL with an older library. */
    int (*wait_fd)(struct swerve_claim *claim);
    /* Since SWERVECLAIM_1.4: NULL with an older library. */
    const char *(*why)(void);
};

/* The free function of the last successful load, for SWERVE_CLAIM_AUTO. */
static void (*swerve_claim_loaded_free_)(struct swerve_claim *) __attribute__((unused));

static inline int swerve_claim_load(struct swerve_claim_api *api)
{
    struct swerve_claim_api found = { 0 };

    /* POSIX allows converting dlsym's void * to a function pointer. */
#define SWERVE_CLAIM_LOOKUP_(field, symbol) (*(void **)&found.field = dlsym(RTLD_DEFAULT, symbol)) != NULL
    if (SWERVE_CLAIM_LOOKUP_(new_claim, "swerve_claim_new") && SWERVE_CLAIM_LOOKUP_(name, "swerve_claim_name") &&
        SWERVE_CLAIM_LOOKUP_(available, "swerve_claim_available") &&
        SWERVE_CLAIM_LOOKUP_(acquire, "swerve_claim_acquire") && SWERVE_CLAIM_LOOKUP_(held, "swerve_claim_held") &&
        SWERVE_CLAIM_LOOKUP_(release, "swerve_claim_release") && SWERVE_CLAIM_LOOKUP_(free, "swerve_claim_free")) {
        *(void **)&found.token = dlsym(RTLD_DEFAULT, "swerve_claim_token");
        *(void **)&found.draining = dlsym(RTLD_DEFAULT, "swerve_claim_draining");
        *(void **)&found.wait_fd = dlsym(RTLD_DEFAULT, "swerve_claim_wait_fd");
        *(void **)&found.why = dlsym(RTLD_DEFAULT, "swerve_claim_why");
        *api = found;
        swerve_claim_loaded_free_ = found.free;
        return 1;
    }
#undef SWERVE_CLAIM_LOOKUP_
    memset(api, 0, sizeof *api);
    return 0;
}

static inline void swerve_claim_auto_free_(struct swerve_claim **claim)
{
    if (*claim != NULL && swerve_claim_loaded_free_ != NULL)
        swerve_claim_loaded_free_(*claim);
}

#define SWERVE_CLAIM_AUTO __attribute__((cleanup(swerve_claim_auto_free_)))

#endif /* SWERVE_CLAIM_LOADER_H */
