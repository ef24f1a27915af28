/* What the filesystem store does for the tools (store_admin.h): they
 * read its claim directories (inventory.c) and act on them through the
 * functions below (inventory.h), the library's own clearing, forced
 * release and joining. */
#include "config.h"

#include "claim.h"
#include "dir.h"
#include "holder.h"
#include "inventory.h"
#include "layout.h"
#include "retire.h"
#include "sigsafe.h"
#include "store_admin.h"
#include "times.h"
#include "wake.h"

#include <stddef.h>

const char inv_claims_dir[] = SCL_CLAIMS_DIR, inv_wake_file[] = SCL_WAKE_FILE;

int inv_is_dir_name(const char *name)
{
    return scl_after_prefix(name, SCL_DIR_PREFIX) != NULL;
}

int inv_clear_dead(int claimsfd, int topfd, pid_t pid)
{
    return scl_holder_clear(claimsfd, topfd, pid, SCL_CLEAR_IF_DEAD) < 0 ? -1 : 0;
}

int inv_remove_dir(const char *path)
{
    return scl_retire_path(path, 0, 0);
}

int inv_release_forced(int claimsfd, int topfd, const struct inv_claim *c, int *told)
{
    /* The holder is told first (wake.h): its late release must then
     * check whose the name is. */
    *told = scl_wake_revoke(topfd) == 0;
    if (!*told)
        return -1;
    return scl_claim_remove_if_same(claimsfd, c->fname, c->dev, c->ino);
}

int inv_tell_draining(int topfd, pid_t pid)
{
    return scl_times_tell_draining(topfd, pid, SCL_TOLD_BY_OPERATOR);
}

int inv_use_named(const char *base, const char *name)
{
    return scl_dir_use_named(base, name);
}

/* A claim in a directory outlives an exec as it is: its holder file is
 * the process's, whatever image it runs. */
static int nothing_to_keep(void)
{
    return 0;
}

/* No server to have said anything. */
static const char *no_reason(void)
{
    return NULL;
}

extern const struct scl_admin_listing scl_fs_listing; /* listing_fs.c */

const struct scl_store_admin scl_store_fs_admin = {
    .name = "filesystem",
    .can = SCL_ADMIN_DIRECTORIES,
    .listing = &scl_fs_listing,
    .keep_across_exec = nothing_to_keep,
    .reason = no_reason,
};
