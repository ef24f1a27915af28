/* SPDX-License-Identifier: MIT */
/* Every message of every command, escaped: what it prints may be
 * anybody's (names, paths, command lines), and root's tools print it. */
#include "config.h"

#include "tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

void tool_put_escaped(FILE *to, const char *s, int raw)
{
    size_t left = strlen(s);
    mbstate_t state;

    memset(&state, 0, sizeof state);
    while (left > 0) {
        unsigned char c = (unsigned char)*s;
        wchar_t wc;
        size_t n = raw ? 1 : mbrtowc(&wc, s, left, &state);
        int plain = raw ? c > ' ' && c != '\\' && c < 0x7f
                        : n != (size_t)-1 && n != (size_t)-2 && n != 0 && iswprint((wint_t)wc) && wc != L'\\';
        if (!plain) {
            /* Byte by byte, the state afresh: a bad sequence hides nothing after it. */
            fprintf(to, "\\x%02x", c);
            memset(&state, 0, sizeof state);
            n = 1;
        } else {
            fwrite(s, 1, n, to);
        }
        s += n;
        left -= n;
    }
}

/* Every message of every command: LEAD (ours, as it is), then FMT with AP
 * escaped (what it says may be others': names, paths, command lines),
 * then END. */
static void message(FILE *to, const char *lead, const char *end, const char *fmt, va_list ap)
{
    char *text;

    fputs(lead, to);
    if (vasprintf(&text, fmt, ap) < 0) {
        fputs("(out of memory)", to);
    } else {
        tool_put_escaped(to, text, 0);
        free(text);
    }
    fputs(end, to);
}

void tool_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    message(stderr, "swerve-claim: ", "\n", fmt, ap);
    va_end(ap);
}

void tool_say(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    message(stdout, "", "\n", fmt, ap);
    va_end(ap);
}

void tool_progress(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    message(stderr, "\rswerve-claim: ", "", fmt, ap);
    va_end(ap);
}

int tool_usage_error(const char *fmt, ...)
{
    char end[64];
    va_list ap;

    snprintf(end, sizeof end, " (try 'swerve-claim %s%s--help')\n", tool_command != NULL ? tool_command : "",
             tool_command != NULL ? " " : "");
    va_start(ap, fmt);
    message(stderr, "swerve-claim: ", end, fmt, ap);
    va_end(ap);
    return TOOL_USAGE;
}
