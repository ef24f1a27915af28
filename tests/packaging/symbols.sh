#!/bin/sh
# SPDX-License-Identifier: MIT
# The preloaded library exports exactly the public API (versioned
# SWERVECLAIM_1.0) and the libc names it hooks (unversioned, so that they
# interpose libc's versioned symbols): nothing else leaks out.
set -eu
lib=${SCL_PRELOAD:?run through make check}
expected=${SCL_SRCDIR:?run through make check}/tests/packaging/symbols.expected
actual=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | LC_ALL=C sort)
if [ "$actual" = "$(LC_ALL=C sort "$expected")" ]; then
    echo "symbols.sh: $(echo "$actual" | wc -l) exported symbols, as expected"
    exit 0
fi
echo "symbols.sh: exported symbols differ from tests/packaging/symbols.expected:" >&2
echo "$actual" | diff -u "$expected" - >&2 || true
exit 1
