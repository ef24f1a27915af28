#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers of src/ (doc/HACKING.md has the picture): a folder includes
# only its own headers and core's, the tools call only core's functions
# and their own, a store is chosen only in core's table of stores
# (stores.h), and the tools' code (libscl_admin.la) is never linked into
# the preloaded library.  Every folder of src/ is a layer: a new one is
# checked without a word here.
set -eu
src=${SCL_SRCDIR:?run through make check}/src
lib=${SCL_PRELOAD:?run through make check}
admin=$(dirname "$lib")/libscl_admin.a

# Every folder of src/ but core, which every one may include.
layers=$(cd "$src" && for dir in */; do [ "$dir" = core/ ] || echo "${dir%/}"; done)

bad=0
complain() {
    echo "layers.sh: $*" >&2
    bad=1
}

# Every include of a header that lives in another folder than core's and
# the includer's own, as "FILE HEADER FOLDER".
reaches=$(cd "$src/.." && for file in src/*/*.[ch]; do
    folder=$(basename "$(dirname "$file")")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\([^">]*\)[">].*/\1/p' "$file" | while read -r header; do
        header=${header#../*/}
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
    bad=1
fi

# The build itself refuses a reach: each folder is compiled with only its
# own and core's include paths (Makefile.am), so no other folder's header
# is found from it, whatever the include says.
builddir=$(dirname "$(dirname "$lib")")
flags_of() { # VARIABLE: its value in the build's Makefile
    printf 'print-flags:\n\t@echo $(%s)\n' "$1" | make -s --no-print-directory -C "$builddir" -f Makefile -f - print-flags
}
for layer in $layers; do
    flags=$(flags_of "$(echo "$layer" | tr a-z A-Z)_CPPFLAGS")
    [ -n "$flags" ] || complain "no ${layer}'s include path in $builddir/Makefile"
    probe=$(for other in $layers; do
        [ "$other" = "$layer" ] && continue
        for header in "$src/$other"/*.h; do
            name=$(basename "$header")
            printf '#if __has_include("%s")\n#error %s of src/%s\n#endif\n' "$name" "$name" "$other"
        done
    done)
    found=$(echo "$probe" | ${CC:-cc} -fsyntax-only $flags -x c - 2>&1 | sed -n 's/.*#error \(.*\)/\1/p')
    [ -z "$found" ] || complain "src/$layer/ is built with an include path that finds $(echo $found)"
done

# The tools call only core's functions and their own: no symbol their
# objects leave undefined is one that only another folder's objects
# define (the C library's names, which the hooks define too, aside).
# A store's tool side is reached through store_admin.h's tables.
symbols_of() { # FOLDER: the global symbols its objects define
    find "$builddir/src/$1" -name '*.o' -exec nm --defined-only {} + 2>/dev/null |
        awk 'NF == 3 && $2 ~ /^[TDRBVW]$/ { print $3 }' | sort -u
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libc=$(${CC:-cc} -print-file-name=libc.so.6)
nm -D --defined-only "$libc" 2>/dev/null | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u >"$work/libc"
[ -s "$work/libc" ] || complain "cannot read the C library's symbols ($libc)"
find "$builddir/src/tools" -name '*.o' -exec nm -u {} + 2>/dev/null | awk '{ print $NF }' | sort -u >"$work/calls"
[ -s "$work/calls" ] || complain "no object of src/tools/ in $builddir/src/tools to look at"
for layer in $layers; do
    [ "$layer" = tools ] && continue
    reached=$(symbols_of "$layer" | comm -12 - "$work/calls" | comm -23 - "$work/libc")
    [ -z "$reached" ] || complain "src/tools/ calls what only src/$layer/ defines: $(echo $reached) (reach a store through store_admin.h)"
done

# A store is chosen in one place: src/core/stores.h's table.  Each row's
# names (the function that chooses it, its operations, its tool side)
# are named nowhere else but in one folder of src/ other than core (the
# store's own), and nothing but the table and its two readers says which
# store is in use.
table=$src/core/stores.h
if [ ! -f "$table" ]; then
    complain "no table of stores ($table): a store must be chosen in one place"
else
    rows=$(sed -n 's/^[[:space:]]*SCL_STORE(\([a-z_0-9]*\), *\([a-z_0-9]*\), *\([a-z_0-9]*\), *\([a-z_0-9]*\)).*/\1 \2 \3 \4/p' "$table")
    [ "$(echo "$rows" | grep -c .)" -ge 2 ] || complain "$table has fewer than two stores"
    echo "$rows" | while read -r store chosen ops admin; do
        for name in $chosen $ops $admin; do
            users=$(cd "$src/.." && grep -lw "$name" src/*/*.[ch] | grep -v '^src/core/stores.h$' || true)
            folders=$(for file in $users; do basename "$(dirname "$file")"; done | sort -u)
            if [ "$(echo "$folders" | grep -c .)" -ne 1 ] || [ "$folders" = core ]; then
                echo "layers.sh: store $store's $name is named outside its own folder and the table: $(echo $users)" >&2
                echo bad
            fi
        done
    done | grep -q bad && bad=1
fi
chooses=$(cd "$src/.." && grep -ln 'settings()->store\b\|scl_store_\(fs\|pg\)\(_admin\)\?\b' src/core/*.[ch] | grep -v '^src/core/stores.h$' || true)
[ -z "$chooses" ] || complain "a store is chosen outside the table of stores: $(echo $chooses)"

# The admin library's global symbols (its stores' tables for the tools)
# must not be in the preloaded library.
[ -f "$admin" ] || complain "no $admin to compare with"
leaked=$(nm --defined-only "$admin" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDRB]$/ { print $3 }' | sort -u |
    while read -r symbol; do
        nm --defined-only "$lib" | awk -v s="$symbol" '$3 == s { print s }'
    done)
[ -z "$leaked" ] || complain "the preloaded library carries the tools' code: $(echo $leaked)"

if [ "$bad" -ne 0 ]; then
    exit 1
fi
echo "layers.sh: every folder of src/ ($(echo $layers)) includes only its own headers and src/core/'s, and is built unable to find another's; src/tools/ calls only src/core/ and its own; stores are chosen only in src/core/stores.h; no tools' code in the preloaded library"
