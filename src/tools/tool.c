/* SPDX-License-Identifier: MIT */
/*
 * What the swerve-claim commands share: the base directory and the
 * options every command takes, parsing, and the store's errors.  Messages
 * are output.c's; which claim directories a command works on, the
 * store's (store_admin.h).
 */
#include "config.h"

#include "store_admin.h"
#include "tool.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tool_command;

int tool_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    char spec[64];
    int c;

    opterr = 0;
    /* Options anywhere among the operands, as GNU tools take them ("history
     * NAME -o ..."), unless SHORTOPTS starts with '+': then they end at the
     * first operand (the command name, run's command). */
    if (shortopts[0] == '+')
        snprintf(spec, sizeof spec, "+:b:h%s", shortopts + 1);
    else
        snprintf(spec, sizeof spec, ":b:h%s", shortopts);
    while ((c = getopt_long(argc, argv, spec, longopts, NULL)) == 'b')
        scl_admin_set_base(optarg, 1);
    if (c == 'h') {
        int status = tool_help(tool_command);
        exit(fflush(stdout) == 0 ? status : TOOL_FAILURE);
    }
    if (c == ':') {
        tool_usage_error("option '%s' needs an argument", argv[optind - 1]);
        return TOOL_GETOPT_ERROR;
    }
    if (c == '?') {
        char opt[3] = { '-', (char)optopt, '\0' };
        tool_usage_error("unknown option '%s'", optopt != 0 ? opt : argv[optind - 1]);
        return TOOL_GETOPT_ERROR;
    }
    return c;
}

int tool_check_name(const char *name)
{
    return name[0] == '\0' ? tool_usage_error("%s: a claim NAME must not be empty", tool_command) : 0;
}

const char *tool_store_reason(char *out, size_t cap)
{
    const char *said = scl_store_admin()->reason();
    size_t n = 0;
    int gap = 0; /* 1 a space, 2 a line's end, before what comes next */

    if (said == NULL || cap < 4)
        return NULL;
    /* libpq's messages end in a newline and may run over several lines
     * (a FATAL, then a DETAIL or HINT): one line, in the words it used,
     * its lines apart by "; ". */
    for (; *said != '\0' && n + 3 < cap; said++) {
        if (*said == '\n' || *said == '\r') {
            gap = 2;
        } else if (*said == ' ' || *said == '\t') {
            gap = gap > 1 ? gap : 1;
        } else {
            if (gap == 2 && n > 0)
                out[n++] = ';';
            if (gap > 0 && n > 0)
                out[n++] = ' ';
            out[n++] = *said;
            gap = 0;
        }
    }
    out[n] = '\0';
    return n > 0 ? out : NULL;
}

void tool_store_error(const char *what, const char *hint)
{
    int err = errno;
    char said[1024];

    if (tool_store_reason(said, sizeof said) != NULL)
        tool_error("%s: %s: %s%s", what, strerror(err), said, hint);
    else
        tool_error("%s: %s%s", what, strerror(err), hint);
    errno = err;
}

void tool_store_unread(void)
{
    char what[300];

    snprintf(what, sizeof what, "cannot list the claims of scope '%s'", scl_store_admin()->scope());
    tool_store_error(what, errno == ENOENT ? " (run 'swerve-claim db init')" : "");
}

int tool_parse_exit_code(const char *s, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < 0 || v > 255)
        return tool_usage_error("%s: exit code out of range (expected 0 to 255): '%s'", tool_command, s);
    *out = (int)v;
    return 0;
}

void tool_listed_session(const struct scl_listed *r, char *out, size_t cap)
{
    snprintf(out, cap, "session %ld of role %s from %s", r->session, r->role[0] ? r->role : "(unknown)",
             r->address[0] ? r->address : "an unknown address (pg_read_all_stats shows it)");
}

void tool_listed_says(const struct scl_listed *r, char *out, size_t cap)
{
    if (!r->foreign)
        snprintf(out, cap, "it says it is process %ld on %s", r->pid, r->host[0] ? r->host : "an unnamed host");
    else
        snprintf(out, cap, "it is a foreign session, outside swerve-claim, that calls itself '%s'", r->says);
}

int tool_parse_pid(const char *arg, pid_t *pid, const char **host)
{
    char *end;
    long n = strtol(arg, &end, 10);

    if (*end == '@' && end[1] != '\0') /* PID@HOST: a process of another machine (a shared store's) */
        *host = end + 1;
    else if (*end != '\0')
        n = 0;
    if (end == arg || n <= 0 || n > INT_MAX)
        return tool_usage_error("%s: --pid takes a process ID (PID@HOST with SWERVE_CLAIM_STORE)", tool_command);
    *pid = (pid_t)n;
    return 0;
}

int tool_check_store_options(const char *server, const char *host)
{
    unsigned can = scl_store_admin()->can;

    if ((can & SCL_ADMIN_SESSIONS) && server != NULL)
        return tool_usage_error("%s: --server is for local claim directories, not SWERVE_CLAIM_STORE", tool_command);
    if ((can & SCL_ADMIN_DIRECTORIES) && host != NULL)
        return tool_usage_error("%s: --pid PID@HOST is for SWERVE_CLAIM_STORE: local claims are this host's",
                                tool_command);
    return 0;
}

int tool_parse_duration(const char *s, long long *seconds)
{
    static const struct {
        char unit;
        long long seconds;
    } units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
    char *end;
    long long n;

    errno = 0;
    n = strtoll(s, &end, 10);
    if (end == s || n < 0 || errno != 0 || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    if (*end == '\0') {
        *seconds = n;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (end[0] == units[i].unit && end[1] == '\0' && n <= LLONG_MAX / units[i].seconds) {
            *seconds = n * units[i].seconds;
            return 0;
        }
    return -1;
}
