/* swerve-claim db init: make the PostgreSQL store's schema in the
 * database SWERVE_CLAIM_STORE names (the schema is schema.sql), and say
 * who else can get in: any role that can connect can take every claim. */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* What ACCESS leaves open; 0 when nothing, else TOOL_FAILURE when
 * DEDICATED asked for it to be shut and it is not. */
static int say_access(const struct scl_store_access *access, int dedicated)
{
    const char *db = access->database;
    int r = TOOL_OK;

    if (!access->members_connect) {
        tool_error("WARNING: swerve_claim_user may not connect to database \"%s\": as its owner, "
                   "GRANT CONNECT ON DATABASE \"%s\" TO swerve_claim_user",
                   db, db);
        r = TOOL_FAILURE;
    }
    if (access->public_connects) {
        tool_error("WARNING: every role may connect to database \"%s\" (PUBLIC has CONNECT), and a session that can "
                   "connect can take and keep every claim: advisory locks need no privilege",
                   db);
        if (dedicated) {
            tool_error("db init --dedicated: PUBLIC's CONNECT could not be revoked: run it as the database's owner");
            r = TOOL_FAILURE;
        } else {
            tool_error("keep the claims in a database of their own and run 'swerve-claim db init --dedicated' there, "
                       "or REVOKE CONNECT ON DATABASE \"%s\" FROM PUBLIC and grant it to the roles that need it; "
                       "'swerve-claim list' shows such a session's claims as foreign",
                       db);
        }
    }
    if (access->foreign_holders > 0)
        tool_error("WARNING: %ld claim(s) of database \"%s\" are held by sessions that are not swerve-claim's "
                   "(TYPE foreign in 'swerve-claim list'): revoking CONNECT keeps new ones out, not these; "
                   "'swerve-claim release --force NAME' ends them",
                   access->foreign_holders, db);
    return r;
}

int tool_db(int argc, char **argv)
{
    static const struct option opts[] = {
        { "dedicated", no_argument, NULL, 'd' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    struct scl_store_access access;
    int dedicated = 0, c;

    if (argc < 2 || strcmp(argv[1], "init") != 0)
        return tool_usage_error("db takes one subcommand: init");
    argc--;
    argv++;
    while ((c = tool_getopt(argc, argv, "", opts)) != -1) {
        switch (c) {
        case 'd': dedicated = 1; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("db init takes no arguments");
    if (!(scl_store_admin()->can & SCL_ADMIN_SCHEMA)) {
        tool_error("db init: SWERVE_CLAIM_STORE is not set: the claims are in local directories, which need no set-up");
        return TOOL_USAGE;
    }
    if (scl_store_admin()->init(dedicated, &access) != 0) {
        char said[8];
        int err = errno, unsaid = tool_store_reason(said, sizeof said) == NULL;
        errno = err;
        if (err != EIO) /* init said what the server said */
            tool_store_error("db init: cannot use the database",
                             err == ECONNREFUSED && unsaid ? " (SWERVE_DEBUG=1 shows libpq's reason)" : "");
        return TOOL_FAILURE;
    }
    tool_say("swerve-claim: the schema swerve_claim is ready; let the servers' role in with:");
    tool_say("    GRANT swerve_claim_user TO <role>;");
    fflush(stdout); /* before the warnings, when both go to one file */
    return say_access(&access, dedicated);
}
