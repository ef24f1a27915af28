/* SPDX-License-Identifier: MIT */
/* swerve-claim db init: make the PostgreSQL store's schema in the
 * database SWERVE_CLAIM_STORE names (the schema is schema.sql), and say
 * who else can get in: any role that can connect can take every claim.
 * swerve-claim db check: open the store's session as a claim would, and
 * say what it sees, a fact a line, for a person woken at night: the
 * server, the scope, the pooler in between and its mode, the schema, who
 * may connect; and whether claims work from this environment. */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One of say_access()'s lines: a warning on standard error (db init), or
 * a fact among db check's. */
static void say_line(int as_fact, const char *line)
{
    if (as_fact)
        tool_say("access: %s", line);
    else
        tool_error("%s", line);
}

/* What ACCESS leaves open, said as AS_FACT says; 0 when nothing, else
 * TOOL_FAILURE when the claims' role may not connect, or DEDICATED asked
 * for PUBLIC to be shut out and it is not. */
static int say_access(const struct scl_store_access *access, int dedicated, int as_fact)
{
    const char *db = access->database;
    char line[1024];
    int r = TOOL_OK;

    if (!access->members_connect) {
        snprintf(line, sizeof line,
                 "WARNING: swerve_claim_user may not connect to database \"%s\": as its owner, "
                 "GRANT CONNECT ON DATABASE \"%s\" TO swerve_claim_user",
                 db, db);
        say_line(as_fact, line);
        r = TOOL_FAILURE;
    }
    if (access->public_connects) {
        snprintf(line, sizeof line,
                 "WARNING: every role may connect to database \"%s\" (PUBLIC has CONNECT), and a session that "
                 "can connect can take and keep every claim: advisory locks need no privilege",
                 db);
        say_line(as_fact, line);
        if (dedicated) {
            say_line(as_fact,
                     "db init --dedicated: PUBLIC's CONNECT could not be revoked: run it as the database's owner");
            r = TOOL_FAILURE;
        } else {
            snprintf(line, sizeof line,
                     "keep the claims in a database of their own and run 'swerve-claim db init --dedicated' there, "
                     "or REVOKE CONNECT ON DATABASE \"%s\" FROM PUBLIC and grant it to the roles that need it; "
                     "'swerve-claim list' shows such a session's claims as foreign",
                     db);
            say_line(as_fact, line);
        }
    }
    if (access->foreign_holders > 0) {
        snprintf(line, sizeof line,
                 "WARNING: %ld claim(s) of database \"%s\" are held by sessions that are not swerve-claim's "
                 "(TYPE foreign in 'swerve-claim list'): revoking CONNECT keeps new ones out, not these; "
                 "'swerve-claim release --force NAME' ends them",
                 access->foreign_holders, db);
        say_line(as_fact, line);
    }
    return r;
}

static int db_init(int dedicated)
{
    struct scl_store_access access;

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
    return say_access(&access, dedicated, 0);
}

/* The store's last words, on one line, or what ERR says. */
static const char *store_words(char *out, size_t cap, int err)
{
    if (tool_store_reason(out, cap) == NULL)
        snprintf(out, cap, "%s", strerror(err));
    return out;
}

/* What the session's set-up decided of a pooler, and what to do. */
static void say_pooler(enum scl_admin_pooler pooler, const char *declared)
{
    switch (pooler) {
    case SCL_ADMIN_POOLER_UNSEEN: break;
    case SCL_ADMIN_POOLER_NONE:
        tool_say("pooler: none: the session is PostgreSQL's own%s",
                 declared != NULL && strcmp(declared, "session") == 0
                     ? " (SWERVE_CLAIM_POOLER=session is set, and not needed here)"
                     : "");
        break;
    case SCL_ADMIN_POOLER_NOT_PROBED:
        tool_say("pooler: one is in between (BackendKeyData is not the backend's); its mode was not probed");
        break;
    case SCL_ADMIN_POOLER_HANDED_ON:
        tool_say("pooler: one is in between, and handed on a server session another client used (transaction or "
                 "statement mode, or a pool that does not reset sessions: PgBouncer's server_reset_query): refused");
        break;
    case SCL_ADMIN_POOLER_TRANSACTION:
        tool_say("pooler: one is in between, in transaction or statement mode (server sessions changed hands): "
                 "refused, whatever SWERVE_CLAIM_POOLER says: a session lock would stay in a server session other "
                 "clients get; point SWERVE_CLAIM_STORE at PostgreSQL itself or at a session-mode pool");
        break;
    case SCL_ADMIN_POOLER_UNTOLD:
        tool_say("pooler: one is in between, in a mode that cannot be told from here: refused; set "
                 "SWERVE_CLAIM_POOLER=session if it pools sessions (PgBouncer pool_mode = session)");
        break;
    case SCL_ADMIN_POOLER_DECLARED:
        tool_say("pooler: one is in between, declared a session pooler (SWERVE_CLAIM_POOLER=session): accepted");
        break;
    }
    if (declared != NULL && strcmp(declared, "session") != 0)
        tool_say("pooler: SWERVE_CLAIM_POOLER='%s' is ignored: its one value is session", declared);
}

static int db_check(void)
{
    const char *declared = secure_getenv("SWERVE_CLAIM_POOLER");
    const struct scl_store_reached *seen;
    struct scl_store_check c;
    char said[1024];
    int r = scl_store_admin()->check(&c), err = errno, works;

    seen = &c.seen;
    if (!seen->reached) {
        tool_say("server: not reached: %s", store_words(said, sizeof said, err));
        tool_say("scope: %s", scl_store_admin()->scope());
        fflush(stdout); /* the facts before the verdict, when both go to one file */
        tool_error("db check: claims would fail from this environment: the server was not reached (%s)",
                   err == EKEYREJECTED ? "the role's password: in PGPASSFILE, doc/cluster.md"
                   : err == EROFS      ? "a standby: claims need the primary, point SWERVE_CLAIM_STORE at it"
                   : err == ELIBACC    ? "libpq.so.5 cannot be loaded: install libpq5"
                                       : "check SWERVE_CLAIM_STORE; SWERVE_DEBUG=1 shows libpq's words");
        return TOOL_FAILURE;
    }
    tool_say("server: %s port %s, as role %s: reached", seen->host, seen->port, seen->role);
    if (seen->server_version > 0) {
        int v = seen->server_version; /* 150018: 15.18; 90624: 9.6.24 */
        char version[32], where[128] = "";
        if (v >= 100000)
            snprintf(version, sizeof version, "%d.%d", v / 10000, v % 10000);
        else
            snprintf(version, sizeof version, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
        if (c.accepted && c.behind[0] != '\0')
            snprintf(where, sizeof where, ", at %s port %s", c.behind, c.behind_port);
        tool_say("postgresql: version %s%s", version, where);
    }
    if (seen->standby)
        tool_say("postgresql: a standby (pg_is_in_recovery): refused: claims need the primary");
    tool_say("database: %s", seen->database);
    tool_say("scope: %s", scl_store_admin()->scope());
    say_pooler(seen->pooler, declared);
    fflush(stdout);
    if (!c.accepted) {
        tool_error("db check: claims would fail from this environment: %s", store_words(said, sizeof said, err));
        return TOOL_FAILURE;
    }
    if (r != 0) {
        tool_say("schema: not looked at: %s", store_words(said, sizeof said, err));
        fflush(stdout);
        tool_error("db check: cannot tell whether claims would work: %s", said);
        return TOOL_FAILURE;
    }
    switch (c.schema) {
    case SCL_ADMIN_SCHEMA_READY: tool_say("schema: swerve_claim is ready (db init done)"); break;
    case SCL_ADMIN_SCHEMA_OLD:
        tool_say("schema: swerve_claim is older than this swerve-claim: run 'swerve-claim db init' again");
        break;
    case SCL_ADMIN_SCHEMA_CLOSED: tool_say("schema: swerve_claim is there (db init done), closed to this role"); break;
    default:
        tool_say("schema: missing: run 'swerve-claim db init' in database \"%s\" (as a role that may create "
                 "schemas and roles)",
                 seen->database);
        break;
    }
    if (c.schema != SCL_ADMIN_SCHEMA_MISSING && c.member)
        tool_say("role: %s may take claims (swerve_claim_user's privileges)", seen->role);
    else if (c.schema != SCL_ADMIN_SCHEMA_MISSING)
        tool_say("role: %s may not take claims: GRANT swerve_claim_user TO \"%s\"", seen->role, seen->role);
    if (c.access_read) {
        if (!c.access.public_connects && c.access.members_connect)
            tool_say("access: only swerve_claim_user, the owner and superusers may connect to database \"%s\"",
                     c.access.database);
        (void)say_access(&c.access, 0, 1);
    }
    works = c.schema == SCL_ADMIN_SCHEMA_READY && c.member;
    if (!works) {
        fflush(stdout);
        tool_error("db check: claims would fail from this environment: %s",
                   c.schema == SCL_ADMIN_SCHEMA_MISSING || c.schema == SCL_ADMIN_SCHEMA_OLD
                       ? "run 'swerve-claim db init'"
                       : "the role is not a member of swerve_claim_user");
        return TOOL_FAILURE;
    }
    tool_say("claims: work from this environment");
    return TOOL_OK;
}

int tool_db(int argc, char **argv)
{
    static const struct option init_opts[] = {
        { "dedicated", no_argument, NULL, 'd' },
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    static const struct option check_opts[] = {
        TOOL_BASE_OPTION,
        { NULL, 0, NULL, 0 },
    };
    int dedicated = 0, check, c;

    if (argc < 2 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "check") != 0))
        return tool_usage_error("db takes a subcommand: init or check");
    check = strcmp(argv[1], "check") == 0;
    argc--;
    argv++;
    while ((c = tool_getopt(argc, argv, check ? "" : "d", check ? check_opts : init_opts)) != -1) {
        switch (c) {
        case 'd': dedicated = 1; break;
        default: return TOOL_USAGE;
        }
    }
    if (optind != argc)
        return tool_usage_error("db %s takes no arguments", argv[0]);
    if (!(scl_store_admin()->can & SCL_ADMIN_SCHEMA)) {
        tool_error("db %s: SWERVE_CLAIM_STORE is not set: the claims are in local directories, which need no "
                   "database and no set-up%s",
                   argv[0], check ? " (set SWERVE_CLAIM_STORE as the servers have it, to check their database)" : "");
        return TOOL_USAGE;
    }
    return check ? db_check() : db_init(dedicated);
}
