#!/bin/sh
# The layers of src/ (doc/HACKING.md has the picture): a folder includes
# only its own headers and core's, and the tools' code (libscl_admin.la)
# is never linked into the preloaded library.
#
# REACHES lists the tools' includes of the filesystem store's headers
# that are still to go behind store_admin.h: a reach not listed fails, and
# so does a listed one that is gone (strike it from the list).
set -eu
src=${SCL_SRCDIR:?run through make check}/src
lib=${SCL_PRELOAD:?run through make check}
admin=$(dirname "$lib")/libscl_admin.a

REACHES='src/tools/gc.c holder.h
src/tools/gc.c retire.h
src/tools/release.c claim.h
src/tools/release.c holder.h
src/tools/release.c wake.h
src/tools/run.c holder.h
src/tools/run.c dir.h
src/tools/tool.c layout.h'

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

echo "$reaches" | while read -r file header other; do
    [ -n "$file" ] || continue
    if ! echo "$REACHES" | grep -qx "$file $header"; then
        echo "layers.sh: $file includes $header of src/$other/: a layer may include only its own headers and src/core/'s" >&2
        echo unlisted
    fi
done | grep -q unlisted && failed=1

echo "$REACHES" | while read -r file header; do
    if ! echo "$reaches" | grep -q "^$file $header "; then
        echo "layers.sh: $file no longer includes $header: strike it from REACHES" >&2
        echo gone
    fi
done | grep -q gone && failed=1

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
echo "layers.sh: $(echo "$REACHES" | wc -l) reaches of src/tools/ into src/fs/ left, none new; no tools' code in the preloaded library"
