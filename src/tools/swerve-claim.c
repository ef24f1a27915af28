/* SPDX-License-Identifier: MIT */
/*
 * swerve-claim - see who holds what, clear stale claims, run a command
 * while holding a claim, tell a server's processes to let go.  The manual is doc/swerve-claim.1.
 *
 * Each command's usage and options are help.c's; this file chooses the
 * command.
 */
#include "store_admin.h"
#include "config.h"

#include "settings.h"
#include "tool.h"

#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

/* The commands, by name. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    { "list", tool_list }, { "history", tool_history }, { "gc", tool_gc }, { "release", tool_release },
    { "run", tool_run },   { "drain", tool_drain },     { "db", tool_db }, { "metrics", tool_metrics },
};

/* swerve-claim help [COMMAND]. */
static int help_command(int argc, char **argv)
{
    if (argc > 2)
        return tool_usage_error("help takes at most one command");
    if (argc == 1 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return tool_help(NULL);
    return tool_help(argv[1]);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        TOOL_BASE_OPTION,
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *command;
    int c;

    /* Names in the application's bytes: shown as the terminal's characters. */
    setlocale(LC_ALL, "");
    scl_admin_set_report(tool_error);
    scl_admin_set_say(tool_say);
    scl_admin_set_base(scl_settings()->base_dir, 0);
    while ((c = tool_getopt(argc, argv, "+V", opts)) != -1) {
        switch (c) {
        case 'V': printf("swerve-claim %s\n", PACKAGE_VERSION); return TOOL_OK;
        default: return TOOL_USAGE;
        }
    }
    if (optind >= argc)
        return tool_usage_error("no command given");
    command = argv[optind];
    argc -= optind;
    argv += optind;
    /* 0, not 1: glibc's getopt starts afresh, and takes the command's
     * options in its own order (anywhere, or up to run's COMMAND). */
    optind = 0;
    if (strcmp(command, "help") == 0)
        return help_command(argc, argv);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(command, commands[i].name) != 0)
            continue;
        tool_command = commands[i].name;
        /* Before the command's own parsing: "db --help" has no subcommand. */
        if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
            return tool_help(tool_command);
        return commands[i].run(argc, argv);
    }
    tool_error("unknown command '%s' (commands: %s; try 'swerve-claim --help')", command, tool_command_names());
    return TOOL_USAGE;
}
