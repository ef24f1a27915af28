/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the claim name codec (src/names.c).  For any name,
 * the encoding is one safe path component that decodes back to the name
 * (short form) or is the hashed form; any file name that decodes is the
 * canonical encoding of what it decodes to, so two names never share a
 * file.  Run by tests/fuzz/fuzz.sh.
 */
#include "config.h"

#include "names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void must(int cond)
{
    if (!cond)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char fname[SCL_FNAME_MAX], decoded[SCL_FNAME_MAX], again[SCL_FNAME_MAX], *input;
    size_t len;
    long n;

    if (size > 4096)
        return 0;
    /* As a claim name: encoded, then decoded. */
    len = scl_name_encode((const char *)data, size, fname);
    must(len == strlen(fname));
    must(size == 0 ? len == 0 : scl_name_is_fname(fname, len));
    must(memchr(fname, '/', len) == NULL);
    n = scl_name_decode(fname, decoded, sizeof decoded);
    if (scl_name_is_hashed(fname)) {
        must(n < 0);
    } else if (size > 0 && memchr(data, '\0', size) == NULL) {
        must(n == (long)size && memcmp(decoded, data, size) == 0);
    }
    /* As a file name found on disk: only canonical encodings decode. */
    input = malloc(size + 1);
    must(input != NULL);
    memcpy(input, data, size);
    input[size] = '\0';
    n = scl_name_decode(input, decoded, sizeof decoded);
    if (n >= 0) {
        must(scl_name_encode(decoded, (size_t)n, again) == strlen(input));
        must(strcmp(again, input) == 0);
        must(scl_name_is_fname(input, strlen(input)));
    }
    if (scl_name_is_fname(input, strlen(input)))
        must(strchr(input, '/') == NULL && input[0] != '.');
    free(input);
    return 0;
}
