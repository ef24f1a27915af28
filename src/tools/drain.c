/* SPDX-License-Identifier: MIT */
/* swerve-claim drain: tells a server's processes, or one of them, that
 * they are being drained, as a reload would: their swerve_claim_draining()
 * says 1 from then on, and a holder that asks it lets go.  The word goes
 * into each one's page of times (the filesystem store's), which only a
 * process that took a claim has; nothing else of the server changes. */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tool_drain(int argc, char **argv)
{
    static const struct option opts[] = {
        { "server", required_argument, NULL, 's' },
        { "pid", required_argument, NULL, 'p' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *host = NULL;
    const struct scl_admin_directories *dirs_of = scl_store_admin()->directories;
    struct scl_admin_dirs *dirs;
    char member[24];
    pid_t pid = 0;
    int c, told;

    while ((c = tool_getopt(argc, argv, "s:p:", opts)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'p':
            if (tool_parse_pid(optarg, &pid, &host) != 0)
                return TOOL_USAGE;
            break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("drain takes no arguments but its options");
    if (server == NULL && pid == 0)
        return tool_usage_error("drain tells a server's processes to let go: say which with --server PID|DIR, "
                                "or one process with --pid PID");
    if (!(scl_store_admin()->can & SCL_ADMIN_DIRECTORIES))
        return tool_usage_error("drain works on local claim directories: with SWERVE_CLAIM_STORE, a worker learns "
                                "that it drains from its master alone");
    if (tool_check_store_options(server, host) != 0)
        return TOOL_USAGE;
    /* -p alone: the one directory PID is a member of, as --server PID
     * finds it (never one that merely names it). */
    snprintf(member, sizeof member, "%d", (int)pid);
    if (dirs_of->load(server != NULL ? server : member, 0, &dirs) < 0)
        return TOOL_FAILURE;
    told = dirs_of->tell_draining(dirs, pid);
    dirs_of->free(dirs);
    return told == 0 ? TOOL_OK : TOOL_FAILURE;
}
