#!/bin/sh
# SPDX-License-Identifier: MIT
# Every source file names its licence in one of its first three lines
# (SPDX-License-Identifier), the installed headers too: applications copy
# claim-loader.h.  What is not source is left out: data the tests compare
# or feed (expected outputs, fuzz corpora), prose (*.md), and the manual
# pages that are one .so line (man-db reads that line first).
set -eu
src=${SCL_SRCDIR:?run through make check}
missing=$(cd "$src" && find src include tests bindings scripts bench completion doc .ci configure.ac Makefile.am \
    swerve-claim.pc.in -type f \
    ! -path 'tests/fuzz/corpus/*' ! -path '*/expected/*' ! -path '*/__pycache__/*' \
    ! -name '*.md' ! -name '*.txt' ! -name '*.json' ! -name '*.expected' ! -name '*.pyc' 2>/dev/null |
    while read -r f; do
        head -n 1 "$f" | grep -q '^\.so ' && continue
        head -n 3 "$f" | grep -q 'SPDX-License-Identifier:' || echo "$f"
    done)
if [ -z "$missing" ]; then
    echo "spdx.sh: every source file names its licence"
    exit 0
fi
echo "spdx.sh: no SPDX-License-Identifier in the first three lines of:" >&2
printf '  %s\n' $missing >&2
exit 1
