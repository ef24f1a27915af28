/* SPDX-License-Identifier: MIT */
/* swerve-claim release --force: remove one claim by hand, whoever holds
 * it, loudly when its holder is alive; its holder is told (wake.h). */
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

/* A claim of a shared store goes with its holder's session: every claim
 * that session holds goes too, and the holder is told only by held(). */
static int release_in_store(const char *name)
{
    struct scl_listed who;
    char session[200], says[300], what[100], token[40];
    int r = scl_store_admin()->end_holder(name, &who);

    if (r < 0) {
        snprintf(what, sizeof what, "releasing '%s'", scl_admin_shown_name(name));
        tool_store_error(what, errno == EACCES ? " (ending another role's session needs pg_signal_backend)" : "");
        return TOOL_FAILURE;
    }
    if (r == 0) {
        tool_error("no claim named '%s' in scope '%s'", scl_admin_shown_name(name), scl_store_admin()->scope());
        return TOOL_FAILURE;
    }
    tool_listed_session(&who, session, sizeof session);
    tool_listed_says(&who, says, sizeof says);
    /* The database knows a hold's token only once the holder asked for
     * it (swerve_claim_token()): never make one up. */
    if (who.token > 0)
        snprintf(token, sizeof token, "token %llu", (unsigned long long)who.token);
    else
        snprintf(token, sizeof token, "its token unknown");
    tool_error("WARNING: ended the database %s, which held '%s' (%s): every claim of that session is "
               "released; %s, and may still be running",
               session, scl_admin_shown_name(name), token, says);
    tool_say("released '%s' in scope '%s'", scl_admin_shown_name(name), scl_store_admin()->scope());
    return TOOL_OK;
}

int tool_release(int argc, char **argv)
{
    static const struct option opts[] = {
        { "force", no_argument, NULL, 'f' },
        { "server", required_argument, NULL, 's' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    const char *server = NULL, *name;
    const struct scl_admin_directories *dirs_of = scl_store_admin()->directories;
    struct scl_admin_dirs *dirs;
    int force = 0, c, r;

    while ((c = tool_getopt(argc, argv, "fs:", opts)) != -1) {
        switch (c) {
        case 'f': force = 1; break;
        case 's': server = optarg; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc - 1)
        return tool_usage_error("release takes one claim NAME");
    if (!force)
        return tool_usage_error("release removes a claim behind its holder's back: say --force");
    name = argv[optind];
    if (tool_check_name(name) != 0 || tool_check_store_options(server, NULL) != 0)
        return TOOL_USAGE;
    if (scl_store_admin()->can & SCL_ADMIN_SESSIONS)
        return release_in_store(name);
    if (dirs_of->load(server, 0, &dirs) < 0)
        return TOOL_FAILURE;
    r = dirs_of->release_forced(dirs, name, server) == 0 ? TOOL_OK : TOOL_FAILURE;
    dirs_of->free(dirs);
    return r;
}
