/*
 * Claim names to file names, injectively.
 *
 * Bytes in [A-Za-z0-9] and "-_.,+=@:~" stay as they are (a leading '.'
 * excepted, so no name is hidden, "." or ".."); every other byte becomes
 * %XX.  So "nightly-report" stays readable in ls, and '/', "..", newlines
 * and '%' itself are all safe.  An encoding longer than
 * SCL_FNAME_SHORT_MAX becomes its first bytes, then "%%", then the SHA-256
 * of the whole name in hex: "%%" never occurs in a short encoding, so the
 * two forms cannot meet, and long names differ unless SHA-256 collides.
 */
#ifndef SCL_NAMES_H
#define SCL_NAMES_H

#include <stddef.h>

#define SCL_FNAME_MAX 256        /* buffer size for a file name, NUL included */
#define SCL_FNAME_SHORT_MAX 200  /* longest encoding kept whole */

/* Encodes NAME (LEN bytes) into OUT; returns the file name's length. */
size_t scl_name_encode(const char *name, size_t len, char out[SCL_FNAME_MAX]);

/* Encodes NAME whole, never hashed, into OUT (3 * LEN + 1 bytes): what a
 * holder's journal records of a long name, so tools can show it. */
size_t scl_name_encode_full(const char *name, size_t len, char *out);

/* FNV-1a of a file name: for hash tables and wake-up slots, not security. */
size_t scl_name_hash(const char *fname);

/* 1 when FNAME is the hashed form of a long name (not decodable). */
int scl_name_is_hashed(const char *fname);

/*
 * Decodes a short-form file name into OUT (CAP bytes, NUL added); returns
 * the name's length, or -1 when FNAME is not a short encoding or OUT is too
 * small.
 */
long scl_name_decode(const char *fname, char *out, size_t cap);

#endif
