#!/bin/sh
# The layers of src/ (doc/HACKING.md has the picture): a folder includes
# only its own headers and core's, and the tools' code (libscl_admin.la)
# is never linked into the preloaded library.
set -eu
src=${SCL_SRCDIR:?run through make check}/src
lib=${SCL_PRELOAD:?run through make check}
admin=$(dirname "$lib")/libscl_admin.a

failed=0
fail() {
    echo "layers.sh: $*" >&2
    failed=1
}

# Every include of a header that lives in another folder than core's and
# the includer's own, as "FILE HEADER FOLDER".
reaches=$(cd "$src/.." && for file in src/*/*.[ch]; do
    folder=$(basename "$(dirname "$file")")
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file" | while read -r header; do
        for other in src/*/; do
            other=$(basename "$other")
            if [ "$other" != core ] && [ "$other" != "$folder" ] && [ -f "src/$other/$header" ]; then
                echo "$file $header $other"
            fi
        done
    done
done)

if [ -n "$reaches" ]; then
    echo "$reaches" | while read -r file header other; do
        echo "layers.sh: $file includes $header of src/$other/: a layer may include only its own headers and src/core/'s" >&2
    done
    failed=1
fi

# The admin library's global symbols (its stores' tables for the tools)
# must not be in the preloaded library.
[ -f "$admin" ] || fail "no $admin to compare with"
leaked=$(nm --defined-only "$admin" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDRB]$/ { print $3 }' | sort -u |
    while read -r symbol; do
        nm --defined-only "$lib" | awk -v s="$symbol" '$3 == s { print s }'
    done)
[ -z "$leaked" ] || fail "the preloaded library carries the tools' code: $(echo $leaked)"

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "layers.sh: every folder includes only its own headers and src/core/'s; no tools' code in the preloaded library"
