/* What the filesystem store does for the tools (store_admin.h): they
 * read its claim directories (inventory.c) and act on them through the
 * functions below (inventory.h), the library's own clearing, forced
 * release and joining. */
#include "config.h"

#include "budget.h"
#include "claim.h"
#include "dir.h"
#include "history.h"
#include "holder.h"
#include "inventory.h"
#include "layout.h"
#include "member.h"
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

/* What one run of a tool reads, in all its clearings, searching for
 * links the journals did not name: a directory may hold any number of
 * dead holders, each with links planted outside it. */
static struct scl_budget tool_clearing = { "a tool's clearing of dead holders", SCL_BUDGET_REMOVAL_ENTRIES,
                                           SCL_BUDGET_REMOVAL_ENTRIES, 0 };

/* The tools write a directory's history only when it is their user's
 * own (history.h): another's owner could truncate it under the mapping. */
int inv_clear_dead(int claims_fd, int top_fd, pid_t pid)
{
    struct scl_hold_end end = { scl_history_open(top_fd), SCL_HOLD_CLEARED, 0 };
    int r = scl_holder_clear(claims_fd, top_fd, pid, SCL_CLEAR_IF_DEAD, &end, &tool_clearing);

    scl_history_unmap(end.history);
    return r < 0 ? -1 : tool_clearing.gave_up;
}

int inv_remove_dir(const char *path)
{
    return scl_retire_path(path, 0, 0, SCL_RETIRE_ALL);
}

int inv_release_forced(int claims_fd, int top_fd, const struct inv_claim *c, pid_t holder, int *told)
{
    struct scl_hold_end end = { NULL, SCL_HOLD_FORCED, 0 };

    /* The holder is told first (wake.h): its late release must then
     * check whose the name is. */
    *told = scl_wake_revoke(top_fd) == 0;
    if (!*told || scl_claim_remove_if_same(claims_fd, c->fname, c->dev, c->ino) != 0)
        return -1;
    if (holder > 0 && (end.history = scl_history_open(top_fd)) != NULL) {
        (void)scl_history_end(end.history, c->fname, holder, &end);
        scl_history_unmap(end.history);
    }
    return 0;
}

int inv_tell_draining(int top_fd, pid_t pid)
{
    return scl_times_tell_draining(top_fd, pid, SCL_TOLD_BY_OPERATOR);
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
    int claims_fd = scl_dir_claims_fd();

    if (claims_fd >= 0)
        scl_member_note_execd(claims_fd);
    return 0;
}

/* No server to have said anything. */
static const char *no_reason(void)
{
    return NULL;
}

extern const struct scl_admin_listing scl_fs_listing, scl_fs_history; /* listing_fs.c, history_fs.c */

const struct scl_store_admin scl_store_fs_admin = {
    .name = "filesystem",
    .can = SCL_ADMIN_DIRECTORIES,
    .listing = &scl_fs_listing,
    .history = &scl_fs_history,
    .keep_across_exec = keep_across_exec,
    .reason = no_reason,
};
