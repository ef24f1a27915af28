/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim's help: the whole of it (--help, help), or one command's
 * (COMMAND --help, help COMMAND), from one text per command so the two
 * never disagree.  doc/swerve-claim.1.in says the same at more length.
 */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command_help {
    const char *name;
    const char *usage;   /* after "swerve-claim [--base DIR] " */
    const char *summary; /* one line, for the list of commands */
    const char *options; /* its options, aligned as the others' */
    const char *status;  /* what its exit status says, beyond 0, 1 and 2 */
    /* list, history: the store in use's columns, whose names and help are
     * its table's (store_admin.h), or NULL. */
    const struct scl_admin_listing *(*listing)(const struct scl_store_admin *store);
};

static const struct scl_admin_listing *list_listing(const struct scl_store_admin *store)
{
    return store->listing;
}

static const struct scl_admin_listing *history_listing(const struct scl_store_admin *store)
{
    return store->history;
}

_Static_assert(TOOL_CONFLICT_DEFAULT == 75, "run's help says 75");

static const struct command_help commands[] = {
    { "list",
      "list [--server SERVER] [--name NAME] [--pid PID] [--older-than D] [--stale]\n"
      "              [--json|--raw] [--output LIST|--output-all] [--watch[=SECONDS]]",
      "every claim directory of yours, its processes and its claims",
      "  -s, --server SERVER      only that server's directory\n"
      "  -n, --name NAME          only claims named NAME, and their waiters\n"
      "  -p, --pid PID            only process PID, its claims and its wait\n"
      "      --older-than D       only claims held longer than D (90s, 2m, 1h, 1d)\n"
      "      --stale              only claims whose holder is gone, stopped or unknown\n"
      "  -J, --json               JSON output\n"
      "  -r, --raw                raw output\n"
      "  -H, --noheadings         no header line\n"
      "  -u, --notruncate         do not cut command lines to the terminal\n"
      "  -o, --output LIST        these columns (comma-separated; below)\n"
      "  -O, --output-all         every column\n"
      "  -w, --watch[=SECONDS]    list again every SECONDS (2), like watch(1)\n",
      "list --name: 1 when no claim has that name; list --older-than, --stale:\n"
      "1 when a claim is shown, 0 when none (for monitoring).\n",
      list_listing },
    { "history",
      "history [--server SERVER] [--pid PID] [--json|--raw]\n"
      "              [--output LIST|--output-all] [NAME]",
      "the last holds of each claim: who took it, when, and how it ended",
      "  -s, --server SERVER      only that server's directory\n"
      "  -p, --pid PID            only the holds of process PID\n"
      "  -J, --json               JSON output\n"
      "  -r, --raw                raw output\n"
      "  -H, --noheadings         no header line\n"
      "  -u, --notruncate         do not cut names and command lines to the terminal\n"
      "  -o, --output LIST        these columns (comma-separated; below)\n"
      "  -O, --output-all         every column\n",
      "history NAME: 1 when no hold of NAME is known.\n", history_listing },
    { "gc", "gc [--dry-run] [--server SERVER]", "remove the claims of dead holders and abandoned directories",
      "  -d, --dry-run            say what would be removed, remove nothing\n"
      "  -s, --server SERVER      only that server's directory\n",
      "gc --dry-run: 1 when something would be removed.\n", NULL },
    { "release", "release --force [--server SERVER] NAME", "remove one claim by hand (needs --force)",
      "  -f, --force              required: release NAME whoever holds it\n"
      "  -s, --server SERVER      that server's directory (needed if NAME is in several)\n",
      "", NULL },
    { "run",
      "run [--wait SECONDS] [--server SERVER|--own-namespace] [--verbose]\n"
      "              [--conflict-exit-code N] NAME [OPTION...] [--] COMMAND...",
      "run a command while holding a claim, like flock(1)",
      "  -w, --wait SECONDS       wait up to SECONDS for the claim (default: try once)\n"
      "  -s, --server SERVER      in that server's namespace (default: the server\n"
      "                           whose process started run, as SWERVE_CLAIM_DIR\n"
      "                           says; else your one live server's in the base;\n"
      "                           with several, say which)\n"
      "      --own-namespace      in a namespace of your own, apart from every server,\n"
      "                           shared by all your `run`s (the default when no\n"
      "                           server started run and none of yours lives in\n"
      "                           the base): in\n"
      "                           ~/.cache/swerve-claim, or in --base if given;\n"
      "                           SWERVE_TMPDIR does not move it out of a home\n"
      "  -v, --verbose            say what it waits for and who holds it (with a\n"
      "                           progress line on a terminal), and how it ended\n"
      "  -E, --conflict-exit-code N  exit status when the claim is not taken\n"
      "                           (default 75, EX_TEMPFAIL; flock -n's is 1)\n",
      "run: the command's status (128+N if killed by signal N), 75 (or -E) if\n"
      "the claim was not taken, 126 if the command cannot run, 127 if not found,\n"
      "2 without --server when several servers of yours live in the base.\n",
      NULL },
    { "drain", "drain --server SERVER [--pid PID] | --pid PID",
      "tell a server's processes (or one) that they are being drained",
      "  -s, --server SERVER      every live member of that server's directory\n"
      "  -p, --pid PID            only process PID (alone: in its own directory)\n",
      "drain: 1 when a process could not be told, or none was (only one that took\n"
      "a claim can be: its swerve_claim_draining() then says 1).\n",
      NULL },
    { "db", "db init [--dedicated]\n       swerve-claim [--base DIR] db check",
      "the PostgreSQL store: make its schema (init); check it from here (check)",
      "  -d, --dedicated          db init: the database is the claims' own: shut\n"
      "                           every other role out of it\n",
      "db check: 0 claims work from this environment; 1 they would not (why, and\n"
      "what to set: SWERVE_CLAIM_POOLER=session behind a session-mode pooler);\n"
      "db init, db check: 2 without SWERVE_CLAIM_STORE (local claims need no database).\n",
      NULL },
    { "metrics", "metrics [--server SERVER] [--output FILE]",
      "every claim and waiter for Prometheus (node_exporter's textfile collector)",
      "  -s, --server SERVER      only that server's directory\n"
      "  -o, --output FILE        replace FILE whole (a temporary beside it, renamed\n"
      "                           over it), mode 0644; default: standard output\n",
      "metrics: 1 also when a directory was not read (what was read is written,\n"
      "and swerve_claim_directories_unread counts it);\n"
      "when the store cannot be read, FILE is left as it was.\n",
      NULL },
};

static const char store_note[] = "With SWERVE_CLAIM_STORE set (doc/cluster.md), the claims are the fleet's,\n"
                                 "in PostgreSQL: list shows every holder and waiter of the scope, history\n"
                                 "the holds whose token was asked for, each with that store's columns;\n"
                                 "release --force ends the holder's session; metrics labels each sample\n"
                                 "with the scope (server) and the host; gc has nothing to do; --server and\n"
                                 "--stale do not apply; drain works on local claim directories only.\n";

/* How to see another store's columns: its setting before --help (which
 * never reaches a store's server). */
static const char other_store_note[] = "Another store's: SWERVE_CLAIM_STORE=postgresql://... swerve-claim %s --help\n"
                                       "(the PostgreSQL store's), SWERVE_CLAIM_STORE= swerve-claim %s --help\n"
                                       "(the filesystem store's).\n";

static const char global_options[] = "  -b, --base DIR           where claim directories are (default $SWERVE_TMPDIR,\n"
                                     "                           $TMPDIR, /tmp)\n"

                                     "  -h, --help               this help\n";

static const char server_note[] = "SERVER is a process's pid, a pidfile (a path: ./app.pid), a claim directory\n"
                                  "(a path), or a systemd service (nginx, nginx.service).\n\n";

static const char status_common[] = "Exit status: 0 done; 1 a failure, said on standard error; 2 wrong usage.\n";

static const struct command_help *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

const char *tool_command_names(void)
{
    static char names[128];

    if (names[0] == '\0')
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i > 0 ? ", " : "", commands[i].name);
    return names;
}

/* C's columns, as the store in use's table has them: a line each, '*'
 * before those shown when no columns are asked for, '+' before those
 * shown when the rows are of several servers. */
static void print_columns(const struct command_help *c)
{
    const struct scl_store_admin *store = scl_store_admin();
    const struct scl_admin_listing *ls = c->listing(store);

    int servers = 0;

    for (int i = 0; i < ls->ncolumns; i++)
        servers |= (ls->columns[i].flags & SCL_COLUMN_SERVERS) != 0;
    printf("\nColumns of %s, the %s store's (* shown by default%s):\n", c->name, store->name,
           servers ? ",\n+ shown when rows of several servers are" : "");
    for (int i = 0; i < ls->ncolumns; i++) {
        const struct scl_admin_column *col = &ls->columns[i];
        char mark = (col->flags & SCL_COLUMN_USUAL) ? '*' : (col->flags & SCL_COLUMN_SERVERS) ? '+' : ' ';

        printf("  %c %-14s %s\n", mark, col->name, col->help);
    }
}

static void help_all(void)
{
    printf("Usage: swerve-claim [--base DIR] COMMAND [OPTION...]\n"
           "\n"
           "See who holds which claim, clear stale claims, and run commands while\n"
           "holding a claim (libswerveclaim_preload.so).  'swerve-claim help COMMAND'\n"
           "or 'swerve-claim COMMAND --help' shows one command's help.\n"
           "\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        printf("  %-9s %s\n", commands[i].name, commands[i].summary);
    putchar('\n');
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        printf("Options of %s:\n%s", commands[i].name, commands[i].options);
        if (commands[i].listing != NULL) {
            print_columns(&commands[i]);
            putchar('\n');
        }
    }
    printf("\n%s%s", server_note, store_note);
    printf(other_store_note, "list", "list");
    printf("\nGlobal options:\n%s  -V, --version            the version\n\n%s", global_options, status_common);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fputs(commands[i].status, stdout);
}

int tool_help(const char *command)
{
    const struct command_help *c;

    if (command == NULL) {
        help_all();
        return TOOL_OK;
    }
    if ((c = find(command)) == NULL) {
        tool_error("no command '%s' (commands: %s)", command, tool_command_names());
        return TOOL_USAGE;
    }
    printf("Usage: swerve-claim [--base DIR] %s\n\n%s: %s.\n\nOptions:\n%s%s", c->usage, c->name, c->summary,
           c->options, global_options);
    if (c->listing != NULL) {
        print_columns(c);
        printf(other_store_note, c->name, c->name);
    }
    printf("\n%s%s%s", strstr(c->usage, "SERVER") != NULL ? server_note : "", status_common, c->status);
    return TOOL_OK;
}
