/* SPDX-License-Identifier: MIT */
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

#define SCL_FNAME_MAX       256 /* buffer size for a file name, NUL included */
#define SCL_FNAME_SHORT_MAX 200 /* longest encoding kept whole */

/* Encodes NAME (LEN bytes) into OUT; returns the file name's length. */
size_t scl_name_encode(const char *name, size_t len, char out[SCL_FNAME_MAX]);

/* Encodes NAME whole, never hashed, into OUT (3 * LEN + 1 bytes): what a
 * holder's journal records of a long name, so tools can show it. */
size_t scl_name_encode_full(const char *name, size_t len, char *out);

/*
 * 1 when FNAME could be an encoded claim name: 1 to SCL_FNAME_MAX - 1
 * bytes of the encoding's alphabet, not starting with '.'.  So it is one
 * path component, never "..", never a holder file: what a journal line
 * must be before anyone acts on it (doc/security.md).
 */
int scl_name_is_fname(const char *fname, size_t len);

/* FNV-1a of a file name: for hash tables and wake-up slots, not security. */
size_t scl_name_hash(const char *fname);

/* 1 when FNAME is the hashed form of a long name (not decodable). */
int scl_name_is_hashed(const char *fname);

/*
 * Decodes a short-form file name into OUT (CAP bytes, NUL added); returns
 * the name's length, or -1 when FNAME is not what scl_name_encode() makes
 * of any name (hashed, not canonical, or longer than SCL_FNAME_SHORT_MAX)
 * or OUT is too small.  So no file can pass for another name's.
 */
long scl_name_decode(const char *fname, char *out, size_t cap);

/* Decodes what scl_name_encode_full() made, of any length, likewise. */
long scl_name_decode_full(const char *encoded, char *out, size_t cap);

#endif
