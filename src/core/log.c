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

/* V in octal with a leading 0, as a file's mode is written ("%#o"). */
static void put_octal(struct line *l, unsigned v)
{
    char num[16];
    size_t n = sizeof num;

    do {
        num[--n] = (char)('0' + (v & 7));
        v >>= 3;
    } while (v != 0);
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

void scl_debug(const char *fmt, ...)
{
    struct line l = { .len = 0 };
    va_list ap;
    int saved = errno;

    if (!scl_settings()->debug)
        return;
    put(&l, "swerve-claim[", 13);
    put_signed(&l, getpid());
    put(&l, "]: ", 3);
    va_start(ap, fmt);
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(&l, p, 1);
            continue;
        }
        p++;
        if (*p == 's') {
            const char *s = va_arg(ap, const char *);
            s = s == NULL ? "(null)" : s;
            put(&l, s, strlen(s));
        } else if (*p == 'm') {
            put_error(&l, saved);
        } else if (*p == 'd') {
            put_signed(&l, va_arg(ap, int));
        } else if (p[0] == '#' && p[1] == 'o') {
            put_octal(&l, va_arg(ap, unsigned));
            p++;
        } else if (p[0] == 'l' && p[1] == 'd') {
            put_signed(&l, va_arg(ap, long));
            p++;
        } else if (p[0] == 'l' && p[1] == 'u') {
            put_unsigned(&l, va_arg(ap, unsigned long));
            p++;
        } else if (p[0] == 'l' && p[1] == 'l' && p[2] == 'u') {
            put_unsigned(&l, va_arg(ap, unsigned long long));
            p += 2;
        } else {
            put(&l, "%", 1);
            if (*p == '\0')
                break;
        }
    }
    va_end(ap);
    put(&l, "\n", 1);
    (void)scl_write_full(STDERR_FILENO, l.buf, l.len);
    errno = saved;
}
