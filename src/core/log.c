/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "log.h"
#include "settings.h"
#include "sigsafe.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

struct line {
    char buf[512];
    size_t len;
};

static void put(struct line *l, const char *s, size_t n)
{
    size_t room = sizeof l->buf - 1 - l->len;

    if (n > room)
        n = room;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_signed(struct line *l, long long v)
{
    char num[24];
    unsigned long long mag = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

    if (v < 0)
        put(l, "-", 1);
    put(l, num, scl_fmt_ull(num, mag));
}

static void put_unsigned(struct line *l, unsigned long long v)
{
    char num[24];

    put(l, num, scl_fmt_ull(num, v));
}

/* V in octal, with a leading 0 when ALT, as a file's mode is written
 * ("%#o": 0750). */
static void put_octal(struct line *l, unsigned long long v, int alt)
{
    char num[32];
    size_t n = sizeof num;

    do {
        num[--n] = (char)('0' + (v & 7));
        v >>= 3;
    } while (v != 0);
    if (alt)
        num[--n] = '0';
    put(l, num + n, sizeof num - n);
}

/* ERR as strerror(3) and errno(3) name it: "Not a directory (ENOTDIR)".
 * Both are lookups in glibc's constant tables: no locale, no buffer,
 * safe in a signal handler, unlike strerror(). */
static void put_error(struct line *l, int err)
{
    const char *text = strerrordesc_np(err), *name = strerrorname_np(err);

    if (text == NULL || name == NULL) {
        put(l, "error ", 6);
        put_signed(l, err);
        return;
    }
    put(l, text, strlen(text));
    put(l, " (", 2);
    put(l, name, strlen(name));
    put(l, ")", 1);
}

/* Takes the integer argument of a conversion with LONGS 'l's (or a 'z'
 * when SIZE) from AP: signed or not, as the conversion says. */
static long long signed_arg(va_list *ap, int longs, int size)
{
    return size         ? (long long)va_arg(*ap, ssize_t)
           : longs >= 2 ? va_arg(*ap, long long)
           : longs == 1 ? (long long)va_arg(*ap, long)
                        : (long long)va_arg(*ap, int);
}

static unsigned long long unsigned_arg(va_list *ap, int longs, int size)
{
    return size         ? (unsigned long long)va_arg(*ap, size_t)
           : longs >= 2 ? va_arg(*ap, unsigned long long)
           : longs == 1 ? (unsigned long long)va_arg(*ap, unsigned long)
                        : (unsigned long long)va_arg(*ap, unsigned);
}

/* The conversion at P (past its '%') into L, its argument taken from AP;
 * SAVED is errno at the call (%m).  Where it ends, or NULL for one this
 * formatter does not know: its argument's size is unknown, so nothing
 * after it can be read safely. */
static const char *convert(struct line *l, const char *p, va_list *ap, int saved)
{
    int alt = 0, longs = 0, size = 0;

    if (*p == '#')
        alt = 1, p++;
    while (*p == 'l')
        longs++, p++;
    if (*p == 'z')
        size = 1, p++;
    switch (*p) {
    case 's': {
        const char *s = va_arg(*ap, const char *);
        s = s == NULL ? "(null)" : s;
        put(l, s, strlen(s));
        return p;
    }
    case 'm': put_error(l, saved); return p;
    case 'd':
    case 'i': put_signed(l, signed_arg(ap, longs, size)); return p;
    case 'u': put_unsigned(l, unsigned_arg(ap, longs, size)); return p;
    case 'o': put_octal(l, unsigned_arg(ap, longs, size), alt); return p;
    case '%': put(l, "%", 1); return p;
    default: put(l, "%?", 2); return NULL;
    }
}

/* FMT's text, after whatever L holds already; SAVED is errno at the call (%m). */
static void format(struct line *l, const char *fmt, va_list ap, int saved)
{
    va_list args;

    va_copy(args, ap);
    for (const char *p = fmt; p != NULL && *p != '\0'; p++) {
        if (*p == '%')
            p = convert(l, p + 1, &args, saved);
        else
            put(l, p, 1);
    }
    va_end(args);
}

/* FMT's line, after the prefix that names this process; returns where
 * its text starts. */
static size_t line(struct line *l, const char *fmt, va_list ap, int saved)
{
    size_t start;

    put(l, "swerve-claim[", 13);
    put_signed(l, getpid());
    put(l, "]: ", 3);
    start = l->len;
    format(l, fmt, ap, saved);
    return start;
}

static void emit(struct line *l)
{
    put(l, "\n", 1);
    (void)scl_write_full(STDERR_FILENO, l->buf, l->len);
}

void scl_debug(const char *fmt, ...)
{
    struct line l = { .len = 0 };
    va_list ap;
    int saved = errno;

    if (!scl_settings()->debug)
        return;
    va_start(ap, fmt);
    (void)line(&l, fmt, ap, saved);
    va_end(ap);
    emit(&l);
    errno = saved;
}

/* This thread's why (swerve_claim_why()): a plain store through %fs
 * (initial-exec: no __tls_get_addr, nothing bound lazily), so that a
 * path a hook shares with the API may reach it from a signal handler. */
static __thread char why[SCL_WHY_MAX] __attribute__((tls_model("initial-exec")));

/* FMT's line kept as this thread's why, and logged when LOG and SWERVE_DEBUG say so. */
static void keep(int log, const char *fmt, va_list ap)
{
    struct line l = { .len = 0 };
    int saved = errno;
    size_t start = line(&l, fmt, ap, saved);

    if (why[0] == '\0') { /* the first said is the cause; later ones are its consequences */
        memcpy(why, l.buf + start, l.len - start);
        why[l.len - start] = '\0';
    }
    if (log && scl_settings()->debug)
        emit(&l);
    errno = saved;
}

void scl_why(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    keep(1, fmt, ap);
    va_end(ap);
}

void scl_why_quiet(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    keep(0, fmt, ap);
    va_end(ap);
}

void scl_why_clear(void)
{
    why[0] = '\0';
}

const char *scl_why_said(void)
{
    return why[0] != '\0' ? why : NULL;
}
