/* The swerve-claim tool's shared pieces (tool.c, tool_run.c). */
#ifndef SCL_TOOL_H
#define SCL_TOOL_H

#include <stdarg.h>
#include <stddef.h>

enum {
    TOOL_OK = 0,
    TOOL_FAILURE = 1,
    TOOL_USAGE = 2,
    TOOL_CONFLICT_DEFAULT = 75, /* EX_TEMPFAIL: try again later */
    TOOL_CANNOT_EXEC = 126,
    TOOL_NOT_FOUND = 127,
};

/* Where claim directories are (--base, else the library's default). */
extern const char *tool_base;

/* "swerve-claim: " and the message, on standard error. */
void tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The claim directory --server names (a member's pid, or a path), into
 * OUT; says why not and returns -1 when there is none. */
int tool_select_dir(const char *server, char *out, size_t cap);

int tool_run(int argc, char **argv);

#endif
