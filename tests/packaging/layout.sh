#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's .bss starts on the page that ends its .data: the loader
# writes that page at load anyway (it relocates the GOT before .data and
# zeroes the start of .bss after it), so what lives there (crtstuff's
# completed.0, which every exit() reads then writes, and the hot state of
# src/core/hot.h) costs no page fault of its own.  One object in .bss
# aligned to a page (or to half of one, once .data ends past the middle of
# its last page) would start .bss on a page of its own: two faults in
# every process that calls exit(), and one in every exec'd image.  What
# must be aligned more goes to .lbss, after .bss (image_env.c).
set -eu
lib=${SCL_PRELOAD:?run through make check}
sections=$(readelf -SW "$lib" | sed -n 's/^ *\[ *[0-9]*\] *//p')
field() { # the field $2 of section $1 (2 type, 3 address, 5 size, 10 alignment)
    echo "$sections" | awk -v name="$1" -v n="$2" '$1 == name { print $n }'
}
data_end=$(($(printf '%d' "0x$(field .data 3)") + $(printf '%d' "0x$(field .data 5)") - 1))
bss_start=$(printf '%d' "0x$(field .bss 3)")
page=$(getconf PAGESIZE)
if [ $((data_end / page)) -eq $((bss_start / page)) ]; then
    echo "layout.sh: .bss starts on .data's last page (alignment $(field .bss 10))"
    exit 0
fi
printf 'layout.sh: .bss starts at 0x%x, past the page of .data'\''s end 0x%x (.bss aligned to %s: an object there is aligned to a page)\n' \
    "$bss_start" "$data_end" "$(field .bss 10)" >&2
exit 1
