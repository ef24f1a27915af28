/*
 * swerve-claim - see who holds what, clear stale claims, run a command
 * while holding a claim.  The manual is doc/swerve-claim.1.
 *
 *   swerve-claim [--base DIR] list [--server PID|DIR] [--name NAME] [--pid PID]
 *                                  [--json] [--raw] [--noheadings] [--notruncate]
 *                                  [--output COLUMNS] [--output-all] [--watch[=S]]
 *   swerve-claim [--base DIR] gc [--dry-run] [--server PID|DIR]
 *   swerve-claim [--base DIR] release --force [--server PID|DIR] NAME
 *   swerve-claim [--base DIR] run [--wait SECONDS] [--server PID|DIR] [--verbose]
 *                                 [--conflict-exit-code N] NAME -- COMMAND...
 *   swerve-claim db init [--dedicated]
 */
#include "store_admin.h"
#include "config.h"

#include "settings.h"
#include "tool.h"

#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

/* One string, the whole --help text: long as the text is, not as code. */
static void help(void)
{
    printf("Usage: swerve-claim [--base DIR] COMMAND [OPTION...]\n"
           "\n"
           "See who holds which claim, clear stale claims, and run commands while\n"
           "holding a claim (libswerveclaim_preload.so).\n"
           "\n"
           "Commands:\n"
           "  list      every claim directory of yours, its processes and its claims\n"
           "  gc        remove the claims of dead holders and abandoned directories\n"
           "  release   remove one claim by hand (needs --force)\n"
           "  run       run a command while holding a claim, like flock(1)\n"
           "  db init   make the PostgreSQL store's schema (SWERVE_CLAIM_STORE); with\n"
           "            --dedicated, a database of the claims' own: PUBLIC may not connect\n"
           "\n"
           "Options of list:\n"
           "  -s, --server PID|DIR     only the directory PID is (or was) a member of, or DIR\n"
           "  -n, --name NAME          only claims named NAME, and their waiters\n"
           "  -p, --pid PID            only process PID, its claims and its wait\n"
           "  -J, --json               JSON output\n"
           "  -r, --raw                raw output\n"
           "  -H, --noheadings         no header line\n"
           "  -u, --notruncate         do not cut command lines to the terminal\n"
           "  -o, --output LIST        columns: TYPE,NAME,PID,STATE,SINCE,COMMAND,DIR,\n"
           "                           BLOCKER (a waiter's: the pid holding its claim)\n"
           "  -O, --output-all         every column\n"
           "  -w, --watch[=SECONDS]    list again every SECONDS (2), like watch(1)\n"
           "Options of gc:\n"
           "  -d, --dry-run            say what would be removed, remove nothing\n"
           "  -s, --server PID|DIR     only that directory\n"
           "Options of release:\n"
           "  -f, --force              required: release NAME whoever holds it\n"
           "  -s, --server PID|DIR     the directory (needed if NAME is in several)\n"
           "Options of run:\n"
           "  -w, --wait SECONDS       wait up to SECONDS for the claim (default: try once)\n"
           "  -s, --server PID|DIR     in that server's namespace (default: a namespace\n"
           "                           of your own, shared by all your `run`s)\n"
           "  -v, --verbose            say what it waits for and who holds it (with a\n"
           "                           progress line on a terminal), and how it ended\n"
           "  -E, --conflict-exit-code N  exit status when the claim is not taken\n"
           "                           (default %d)\n"
           "\n"
           "With SWERVE_CLAIM_STORE set (doc/cluster.md), the claims are the fleet's,\n"
           "in PostgreSQL: list shows TYPE,NAME,ROLE,HOST,PID,SINCE,TOKEN, and with -o\n"
           "SESSION,ADDRESS,CONNECTED,SELF-REPORTED, of every holder and waiter (TYPE\n"
           "foreign: a session that is not the library's); release --force ends the\n"
           "holder's session; gc has nothing to do; --server does not apply.\n"
           "\n"
           "Global options:\n"
           "  -b, --base DIR           where claim directories are (default $SWERVE_TMPDIR,\n"
           "                           $TMPDIR, /tmp)\n"
           "  -h, --help               this help\n"
           "  -V, --version            the version\n"
           "\n"
           "Exit status: 0 done; 1 a failure, said on standard error; 2 wrong usage;\n"
           "list --name: 1 when no claim has that name; gc --dry-run: 1 when something\n"
           "would be removed;\n"
           "run: the command's status (128+N if killed by signal N), %d (or -E) if\n"
           "the claim was not taken, 126 if the command cannot run, 127 if not found.\n",
           TOOL_CONFLICT_DEFAULT, TOOL_CONFLICT_DEFAULT);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        TOOL_BASE_OPTION,
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *command;
    int c;

    /* Names in the application's bytes: shown as the terminal's characters. */
    setlocale(LC_ALL, "");
    scl_admin_set_report(tool_error);
    tool_base = scl_settings()->base_dir;
    while ((c = tool_getopt(argc, argv, "hV", opts)) != -1) {
        switch (c) {
        case 'h': help(); return TOOL_OK;
        case 'V': printf("swerve-claim %s\n", PACKAGE_VERSION); return TOOL_OK;
        default: return TOOL_USAGE;
        }
    }
    if (optind >= argc)
        return tool_usage_error("no command given");
    command = argv[optind];
    argc -= optind;
    argv += optind;
    optind = 1;
    if (strcmp(command, "list") == 0)
        return tool_list(argc, argv);
    if (strcmp(command, "gc") == 0)
        return tool_gc(argc, argv);
    if (strcmp(command, "release") == 0)
        return tool_release(argc, argv);
    if (strcmp(command, "run") == 0)
        return tool_run(argc, argv);
    if (strcmp(command, "db") == 0)
        return tool_db(argc, argv);
    tool_error("unknown command '%s' (commands: list, gc, release, run, db)", command);
    return TOOL_USAGE;
}
