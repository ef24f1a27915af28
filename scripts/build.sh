#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds swerve-claim in BUILD_DIR (default _build) from a fresh checkout:
# autoreconf when configure is missing or older than configure.ac, then
# configure with the given options (once, or again when they, Makefile.am
# or configure.ac changed since, or an optional dependency configure did
# not find has arrived), then make.
#   scripts/build.sh [BUILD_DIR [CONFIGURE-OPTION...]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-_build}
shift || true
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
fi
options=$(printf '%q ' "$@")
# Whether the build directory must start afresh: configured before
# Makefile.am or configure.ac changed, it may hold dependency files for
# sources that have moved; configured with other options, or before an
# optional dependency it looked for arrived (the demo's _build, before
# scripts/test.sh installed Check), it would build what was not asked.
stale() {
    local missing m
    [ -f "$build/config.status" ] || return 1
    if [ Makefile.am -nt "$build/config.status" ] || [ configure.ac -nt "$build/config.status" ]; then
        return 0
    fi
    [ "$(cat "$build/configure-options" 2>/dev/null)" = "$options" ] || return 0
    IFS=, read -ra missing < <(sed -n "s/^OPTIONAL_MISSING='\(.*\)'\$/\1/p" "$build/config.log")
    for m in "${missing[@]}"; do
        pkg-config --exists "$m" && return 0
    done
    return 1
}
if stale; then
    rm -rf "$build"
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
    "$top/configure" -q "$@"
    echo "$options" >configure-options
fi
make -j"$(nproc)" >/dev/null
