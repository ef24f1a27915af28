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
#include "member.h"
#include "retire.h"
#include "sigsafe.h"
#include "store_admin.h"
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

int inv_use_named(const char *base, const char *name)
{
    return scl_dir_use_named(base, name);
}

/* A claim in a directory outlives an exec as it is: its holder file is
 * the process's, whatever image it runs.  That file says the image is
 * exec'd (list's ROLE), as an image that loads the shim says it when it
 * registers: run's command seldom does. */
static int keep_across_exec(void)
{
    int claimsfd = scl_dir_claims_fd();

    if (claimsfd >= 0)
        scl_member_note_execd(claimsfd);
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
    .keep_across_exec = keep_across_exec,
    .reason = no_reason,
};
