#!/bin/sh
# The layers of src/ (doc/HACKING.md has the picture): a folder includes
# only its own headers and core's, and the tools' code (libscl_admin.la)
# is never linked into the preloaded library.
set -eu
src=${SCL_SRCDIR:?run through make check}/src
lib=${SCL_PRELOAD:?run through make check}
admin=$(dirname "$lib")/libscl_admin.a

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
for layer in fs pg preload tools; do
    flags=$(flags_of "$(echo "$layer" | tr a-z A-Z)_CPPFLAGS")
    [ -n "$flags" ] || complain "no ${layer}'s include path in $builddir/Makefile"
    probe=$(for other in fs pg preload tools; do
        [ "$other" = "$layer" ] && continue
        for header in "$src/$other"/*.h; do
            name=$(basename "$header")
            printf '#if __has_include("%s")\n#error %s of src/%s\n#endif\n' "$name" "$name" "$other"
        done
    done)
    found=$(echo "$probe" | ${CC:-cc} -fsyntax-only $flags -x c - 2>&1 | sed -n 's/.*#error \(.*\)/\1/p')
    [ -z "$found" ] || complain "src/$layer/ is built with an include path that finds $(echo $found)"
done

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
echo "layers.sh: every folder includes only its own headers and src/core/'s, and is built unable to find another's; no tools' code in the preloaded library"
