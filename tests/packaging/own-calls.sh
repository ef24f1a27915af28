#!/bin/sh
# SPDX-License-Identifier: MIT
# The preloaded library never calls a symbol it defines itself: not a
# hook (its own close() would run the fd hooks, its kill() the drain
# marks: a call into its own hooks, which once hung a worker), nor its
# exported API (an application may define the same name).  Such a call
# goes through the library's PLT or GOT, so the dynamic relocations name
# it; each is listed.  The library's own calls go to the real functions
# (src/preload/real.h) or straight to the system call (src/core/sigsafe.h).
set -eu
lib=${SCL_PRELOAD:?run through make check}
defined=$(mktemp)
trap 'rm -f "$defined"' EXIT
nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | LC_ALL=C sort -u >"$defined"
own=$(objdump -R "$lib" | awk 'NR > 5 && NF >= 3 { print $3 }' | sed 's/@.*//' | LC_ALL=C sort -u |
    LC_ALL=C comm -12 - "$defined")
if [ -z "$own" ]; then
    echo "own-calls.sh: no call of the library's into any of the $(wc -l <"$defined") symbols it defines"
    exit 0
fi
echo "own-calls.sh: the library calls symbols it defines itself (relocations against them):" >&2
printf '  %s\n' $own >&2
exit 1
