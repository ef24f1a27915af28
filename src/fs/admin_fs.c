/* What the filesystem store does for the tools (store_admin.h): they
 * read its claim directories themselves. */
#include "config.h"

#include "store_admin.h"

#include <stddef.h>

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

const struct scl_store_admin scl_store_fs_admin = {
    .name = "filesystem",
    .can = SCL_ADMIN_DIRECTORIES,
    .keep_across_exec = nothing_to_keep,
    .reason = no_reason,
};
