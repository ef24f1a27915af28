/* SPDX-License-Identifier: MIT */
/* swerve-claim gc: remove the claims of dead holders and the claim
 * directories nobody uses any more, with the library's own race-free
 * clearing. */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tool_gc(int argc, char **argv)
{
    static const struct option opts[] = {
        { "dry-run", no_argument, NULL, 'd' },
        { "server", required_argument, NULL, 's' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL;
    const struct scl_admin_directories *dirs_of = scl_store_admin()->directories;
    int dry = 0, c, failed, loaded;
    struct scl_admin_dirs *dirs;
    size_t removed = 0;

    while ((c = tool_getopt(argc, argv, "ds:", opts)) != -1) {
        switch (c) {
        case 'd': dry = 1; break;
        case 's': server = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("gc takes no arguments");
    if (scl_store_admin()->can & SCL_ADMIN_SESSIONS) {
        tool_say(
            "nothing to collect: with SWERVE_CLAIM_STORE, the server frees a claim when its holder's session ends");
        return TOOL_OK;
    }
    if ((loaded = dirs_of->load(server, 0, &dirs)) < 0)
        return TOOL_FAILURE;
    failed = loaded > 0; /* a directory not read: said */
    failed |= dirs_of->collect(dirs, dry, &removed);
    if (removed == 0)
        tool_say("nothing to remove");
    dirs_of->free(dirs);
    /* --dry-run drives monitoring, as diff(1) does: 1 means "stale things found". */
    return failed || (dry && removed > 0) ? TOOL_FAILURE : TOOL_OK;
}
