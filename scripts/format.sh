#!/bin/bash
# SPDX-License-Identifier: MIT
# Formats every C file of the project with clang-format (.clang-format
# says the style), or with --check only lists the files it would change
# and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h')
if [ "${1:-}" = --check ]; then
    bad=0
    for f in "${files[@]}"; do
        if ! clang-format "$f" | cmp -s - "$f"; then
            echo "format.sh: $f is not formatted (run scripts/format.sh)"
            bad=1
        fi
    done
    exit $bad
fi
clang-format -i "${files[@]}"
