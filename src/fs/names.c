/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "names.h"
#include "sha256.h"

#include <string.h>

static const char hex[] = "0123456789ABCDEF";

static int kept(unsigned char c, size_t pos)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    if (c == '.')
        return pos > 0;
    return c != '\0' && strchr("-_,+=@:~", c) != NULL;
}

/* Encodes into OUT while it fits below LIMIT bytes; returns the length
 * the whole encoding would have. */
static size_t encode_into(const char *name, size_t len, char *out, size_t limit, size_t *written)
{
    size_t total = 0;

    *written = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        size_t w = kept(c, i) ? 1 : 3;

        if (total + w <= limit && total == *written) {
            if (w == 1) {
                out[total] = (char)c;
            } else {
                out[total] = '%';
                out[total + 1] = hex[c >> 4];
                out[total + 2] = hex[c & 15];
            }
            *written = total + w;
        }
        total += w;
    }
    return total;
}

size_t scl_name_encode(const char *name, size_t len, char out[SCL_FNAME_MAX])
{
    enum { prefix_max = SCL_FNAME_SHORT_MAX - 2 - 2 * SCL_SHA256_LEN };
    unsigned char digest[SCL_SHA256_LEN];
    size_t written;

    if (encode_into(name, len, out, SCL_FNAME_SHORT_MAX, &written) <= SCL_FNAME_SHORT_MAX) {
        out[written] = '\0';
        return written;
    }
    /* Too long: a readable prefix that never splits a %XX, then the hash. */
    (void)encode_into(name, len, out, prefix_max, &written);
    out[written++] = '%';
    out[written++] = '%';
    scl_sha256(name, len, digest);
    for (size_t i = 0; i < SCL_SHA256_LEN; i++) {
        out[written++] = hex[digest[i] >> 4];
        out[written++] = hex[digest[i] & 15];
    }
    out[written] = '\0';
    return written;
}

size_t scl_name_encode_full(const char *name, size_t len, char *out)
{
    size_t written;

    (void)encode_into(name, len, out, 3 * len, &written);
    out[written] = '\0';
    return written;
}

int scl_name_is_fname(const char *fname, size_t len)
{
    if (len == 0 || len >= SCL_FNAME_MAX || fname[0] == '.')
        return 0;
    for (size_t i = 0; i < len; i++)
        if (fname[i] != '%' && !kept((unsigned char)fname[i], i))
            return 0;
    return 1;
}

size_t scl_name_hash(const char *fname)
{
    size_t h = 14695981039346656037ULL;

    while (*fname != '\0')
        h = (h ^ (unsigned char)*fname++) * 1099511628211ULL;
    return h;
}

int scl_name_is_hashed(const char *fname)
{
    return strstr(fname, "%%") != NULL;
}

static int hex_value(char c)
{
    const char *p = c == '\0' ? NULL : strchr(hex, c);

    return p == NULL ? -1 : (int)(p - hex);
}

long scl_name_decode(const char *fname, char *out, size_t cap)
{
    return strlen(fname) > SCL_FNAME_SHORT_MAX ? -1 : scl_name_decode_full(fname, out, cap);
}

long scl_name_decode_full(const char *fname, char *out, size_t cap)
{
    size_t n = 0;

    if (*fname == '\0' || scl_name_is_hashed(fname))
        return -1;
    for (size_t i = 0; fname[i] != '\0'; i++) {
        unsigned char c = (unsigned char)fname[i];
        if (n + 1 >= cap)
            return -1;
        if (c == '%') {
            int hi = hex_value(fname[i + 1]), lo = hi < 0 ? -1 : hex_value(fname[i + 2]);
            if (lo < 0)
                return -1;
            c = (unsigned char)(hi << 4 | lo);
            i += 2;
            if (c == '\0' || kept(c, n))
                return -1; /* not canonical: never produced by the encoder */
        } else if (!kept(c, n)) {
            return -1;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return (long)n;
}
