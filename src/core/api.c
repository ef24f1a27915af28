/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "api.h"
#include "drain.h"
#include "export.h"
#include "log.h"
#include "proc.h"
#include "sigsafe.h"
#include "store.h"
#include "swerve/claim.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Longer than this is for ever (and keeps the arithmetic in range). */
#define FOREVER_SECONDS 1e9

struct swerve_claim {
    char *name;
    struct scl_key *key;
    pid_t held_by;     /* the process in which this handle holds the name, */
    unsigned held_era; /* and the era of this process it took it in */
};

/* Bumped when the exec hooks release every claim of the process. */
static atomic_uint era;

void scl_api_forget_claims(void)
{
    atomic_fetch_add(&era, 1);
}

static int holds(const struct swerve_claim *claim, pid_t self)
{
    return claim->held_by == self && claim->held_era == atomic_load(&era);
}

/* Whether this process holds CLAIM now: what swerve_claim_held() says,
 * for the library's own use (a call of the exported name could reach an
 * application's function of that name: tests/packaging/own-calls.sh). */
static int held(const struct swerve_claim *claim, pid_t self)
{
    return holds(claim, self) && scl_store()->held(claim->key);
}

SCL_EXPORT struct swerve_claim *swerve_claim_new(const char *name)
{
    struct swerve_claim *claim;
    size_t len;

    scl_why_clear();
    if (name == NULL || *name == '\0') {
        errno = EINVAL;
        scl_why("a claim's name must not be empty");
        return NULL;
    }
    len = strnlen(name, SWERVE_CLAIM_NAME_MAX + 1);
    if (len > SWERVE_CLAIM_NAME_MAX) {
        errno = ENAMETOOLONG;
        scl_why("a claim's name must be at most %d bytes", SWERVE_CLAIM_NAME_MAX);
        return NULL;
    }
    claim = calloc(1, sizeof *claim);
    if (claim == NULL)
        return NULL;
    claim->name = strdup(name);
    if (claim->name == NULL || (claim->key = scl_store()->key_new(name, len)) == NULL) {
        free(claim->name);
        free(claim);
        errno = ENOMEM;
        return NULL;
    }
    return claim;
}

SCL_EXPORT const char *swerve_claim_name(const struct swerve_claim *claim)
{
    return claim->name;
}

SCL_EXPORT int swerve_claim_held(const struct swerve_claim *claim)
{
    /* A forked child inherits the handle, not the claim. */
    return held(claim, scl_proc_self_pid());
}

SCL_EXPORT uint64_t swerve_claim_token(const struct swerve_claim *claim)
{
    scl_why_clear();
    return held(claim, scl_proc_self_pid()) ? scl_store()->token(claim->key) : 0;
}

SCL_EXPORT int swerve_claim_available(const struct swerve_claim *claim)
{
    int saved = errno, r;

    scl_why_clear();
    r = scl_store()->available(claim->key);
    if (r >= 0)
        errno = saved;
    return r;
}

static struct swerve_claim *taken(struct swerve_claim *claim, pid_t self, int saved_errno)
{
    scl_store()->wait_end(claim->key); /* an event loop's wait is over */
    claim->held_by = self;
    claim->held_era = atomic_load(&era);
    errno = saved_errno;
    return claim;
}

SCL_EXPORT struct swerve_claim *swerve_claim_acquire(struct swerve_claim *claim, double timeout)
{
    int64_t deadline = -1;
    int saved = errno;
    pid_t self = scl_proc_self_pid(); /* no system call: it is on the fast path */

    scl_why_clear();
    if (isnan(timeout) || timeout < 0) {
        errno = EINVAL;
        scl_why("a timeout must be 0 or more seconds");
        return NULL;
    }
    /* Held already, unless the store lost it behind our back (a database
     * session that ended): then it is taken anew. */
    if (held(claim, self))
        return claim;
    if (timeout > 0 && timeout <= FOREVER_SECONDS)
        deadline = scl_monotonic_ns() + (int64_t)(timeout * 1e9);
    if (scl_store()->try_acquire(claim->key, self, timeout == 0 ? 0 : deadline) == 0)
        return taken(claim, self, saved);
    if (errno != EWOULDBLOCK || timeout == 0)
        return NULL;

    if (scl_store()->acquire_wait(claim->key, self, deadline) == 0)
        return taken(claim, self, saved);
    return NULL;
}

SCL_EXPORT int swerve_claim_wait_fd(struct swerve_claim *claim)
{
    int saved = errno, fd;
    pid_t self = scl_proc_self_pid();

    scl_why_clear();
    if (held(claim, self)) {
        errno = EALREADY;
        return -1;
    }
    fd = scl_store()->wait_fd(claim->key, self);
    if (fd >= 0)
        errno = saved;
    return fd;
}

/* swerve_claim_release() but for the why: swerve_claim_free() leaves it. */
static int release(struct swerve_claim *claim)
{
    int saved = errno;

    scl_store()->wait_end(claim->key); /* a waiter that gives up */
    errno = saved;
    if (!held(claim, scl_proc_self_pid()))
        return 0;
    if (scl_store()->release(claim->key) != 0)
        return -1;
    claim->held_by = 0;
    errno = saved;
    return 0;
}

SCL_EXPORT int swerve_claim_release(struct swerve_claim *claim)
{
    scl_why_clear();
    return release(claim);
}

SCL_EXPORT void swerve_claim_free(struct swerve_claim *claim)
{
    int saved = errno;

    if (claim == NULL)
        return;
    (void)release(claim);
    scl_store()->key_free(claim->key);
    free(claim->name);
    free(claim);
    errno = saved;
}

SCL_EXPORT int swerve_claim_draining(void)
{
    int saved = errno, r;

    scl_why_clear();
    r = scl_drain_asked();
    if (r >= 0)
        errno = saved;
    return r;
}

SCL_EXPORT const char *swerve_claim_why(void)
{
    return scl_why_said();
}
