/* swerve-claim db init: make the PostgreSQL store's schema in the
 * database SWERVE_CLAIM_STORE names (the schema is schema.sql). */
#include "config.h"

#include "settings.h"
#include "store.h"
#include "tool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int tool_db(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "init") != 0)
        return tool_usage_error("db takes one subcommand: init");
    if (scl_store()->init == NULL) {
        tool_error("db init: SWERVE_CLAIM_STORE is not set: the claims are in local directories, which need no set-up");
        return TOOL_USAGE;
    }
    if (scl_store()->init() != 0) {
        if (errno != EIO) /* init said what the server said */
            tool_error("db init: cannot use the database: %s%s", strerror(errno),
                       errno == ECONNREFUSED ? " (SWERVE_DEBUG=1 shows libpq's reason)" : "");
        return TOOL_FAILURE;
    }
    tool_say("swerve-claim: the schema swerve_claim is ready; let the servers' role in with:");
    tool_say("    GRANT swerve_claim_user TO <role>;");
    return TOOL_OK;
}
