#!/bin/bash
# Builds swerve-claim in BUILD_DIR (default _build) from a fresh checkout:
# autoreconf when configure is missing or older than configure.ac, then
# configure with the given options (once, or again when Makefile.am or
# configure.ac changed since), then make.
#   scripts/build.sh [BUILD_DIR [CONFIGURE-OPTION...]]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-_build}
shift || true
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
fi
# A build directory configured before Makefile.am or configure.ac changed
# may hold dependency files for sources that have moved: start it afresh.
if [ -f "$build/config.status" ] && { [ Makefile.am -nt "$build/config.status" ] || [ configure.ac -nt "$build/config.status" ]; }; then
    rm -rf "$build"
fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
    "$top/configure" -q "$@"
fi
make -j"$(nproc)" >/dev/null
