/* SPDX-License-Identifier: MIT */
/* The swerve-claim tool: its commands (list.c, history.c, gc.c,
 * release.c, run.c, drain.c, db.c, metrics.c), and what they share:
 * options and parsing (tool.c), messages (output.c), help (help.c);
 * the claim directories a command works on are the store's
 * (store_admin.h). */
#ifndef SCL_TOOL_H
#define SCL_TOOL_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum {
    TOOL_OK = 0,
    TOOL_FAILURE = 1,
    TOOL_USAGE = 2,
    TOOL_CONFLICT_DEFAULT = 75, /* EX_TEMPFAIL: try again later */
    TOOL_CANNOT_EXEC = 126,
    TOOL_NOT_FOUND = 127,
};

/* Every message goes through these, escaped as tool_put_escaped() does
 * (root's tools print what any user can write): "swerve-claim: " and the
 * message, on standard error; the message alone, on standard output; a
 * progress line, which the next one overwrites, on standard error. */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tool_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes S to TO with what is not printable as \xHH a byte, and '\' too,
 * so that the escapes are unambiguous: in messages, what is no printable
 * character in the locale; RAW (list --raw, as libsmartcols' raw output),
 * also spaces and every byte past ASCII. */
void tool_put_escaped(FILE *to, const char *s, int raw);

/* Says what is wrong (FMT, as printf) and where the help of the command
 * in use (tool_command) is; returns TOOL_USAGE. */
int tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every command's getopt: -b/--base (TOOL_BASE_OPTION in LONGOPTS) is
 * taken before or after the command, and -h/--help prints tool_command's
 * help and exits 0; a missing argument or an unknown option is said once,
 * with where to find help, and TOOL_GETOPT_ERROR returned.  Options are
 * taken anywhere among the operands, as GNU tools take them, unless
 * SHORTOPTS starts with '+': then they end at the first operand (the
 * command's name; run's COMMAND).  SHORTOPTS as for getopt, without ':'. */
#define TOOL_BASE_OPTION                                                                                               \
    { "base", required_argument, NULL, 'b' },                                                                          \
    {                                                                                                                  \
        "help", no_argument, NULL, 'h'                                                                                 \
    }
#define TOOL_GETOPT_ERROR (-2)
/* The command being run ("list"...), or NULL before one is chosen. */
extern const char *tool_command;
struct option;
int tool_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* The usage status (said: "a claim NAME must not be empty") when NAME,
 * given on the command line, is empty, else 0: no claim has that name,
 * and "no claim named ''" would blame a claim, not the call. */
int tool_check_name(const char *name);

/* Parses -p's PID, or PID@HOST, into *PID and *HOST: 0, or the usage
 * status (said). */
int tool_parse_pid(const char *arg, pid_t *pid, const char **host);

/* The usage status (said) when --server (SERVER not NULL) or -p's
 * PID@HOST (HOST not NULL) is not for the store in use, else 0. */
int tool_check_store_options(const char *server, const char *host);

/* Parses a duration, "90s", "2m", "1h", "1d" or plain seconds, into
 * *SECONDS: 0, or -1 (not one). */
int tool_parse_duration(const char *s, long long *seconds);

/* Parses an exit status for -E: 0 to 255, into *OUT: 0, or the usage
 * status (said). */
int tool_parse_exit_code(const char *s, int *out);

/* Prints COMMAND's help (NULL: the whole help): the exit status (2 and
 * said when there is no such command). */
int tool_help(const char *command);

/* The commands' names, "list, history, ...", for a message. */
const char *tool_command_names(void);

/* The commands: each takes its own options; returns the exit status. */
int tool_list(int argc, char **argv);
int tool_history(int argc, char **argv);
int tool_gc(int argc, char **argv);
int tool_release(int argc, char **argv);
int tool_run(int argc, char **argv);
int tool_drain(int argc, char **argv);
int tool_db(int argc, char **argv);
int tool_metrics(int argc, char **argv);

/* Replaces the file at PATH with TEXT (LEN bytes) whole, as
 * node_exporter's textfile collector asks (replace.c): written beside it
 * under a temporary name (removed on failure), mode 0644, synced, renamed
 * over it, all in its directory as the path led to it once, through no
 * symlink that another user could have put there.  0, or says why not
 * and returns -1. */
int tool_replace_file(const char *path, const char *text, size_t len);

/* What the store's server last said to this process (the store's
 * reason()), on one line, into OUT: OUT, or NULL when it said nothing. */
const char *tool_store_reason(char *out, size_t cap);

/* Says on standard error that WHAT failed (errno), with the server's
 * words when it gave some, and HINT after them ("" none). */
void tool_store_error(const char *what, const char *hint);

/* Says that the store could not list the claims of the scope in use
 * (errno), as tool_store_error() does. */
void tool_store_unread(void);

struct scl_listed;

/* What the store's server knows of the session of R, into OUT: "session
 * S of role R from ADDRESS". */
void tool_listed_session(const struct scl_listed *r, char *out, size_t cap);

/* What that session says of itself, into OUT, as its word and never as
 * fact: "it says it is process P on HOST", or, for a foreign session,
 * that it is one and what it calls itself. */
void tool_listed_says(const struct scl_listed *r, char *out, size_t cap);

#endif
