#!/bin/bash
# SPDX-License-Identifier: MIT
# swerve-claim-preload: runs a program with the shim in front of any
# LD_PRELOAD, passes its exit status through, and warns for static and
# setuid programs.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
launcher=${SCL_HELPERS:?run through make check}/../swerve-claim-preload
seed=$SCL_HELPERS/preload/helper_seed
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SWERVE_TMPDIR=$work
if [ -n "${SCL_ASAN_RUNTIME:-}" ]; then
    # A sanitizer build: the runtime must be loaded for the shim, and the
    # launcher rightly puts the shim in front of it.
    export LD_PRELOAD=$SCL_ASAN_RUNTIME ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
fi

check "the seed's example runs with the shim it preloads" \
    bash -c "[ \"\$('$launcher' '$seed' class-1 | head -1)\" = 'bool(true)' ]"
check "without it, the same program finds no shim" bash -c "env -u LD_PRELOAD '$seed' class-1 2>/dev/null; [ \$? -eq 2 ]"
check "the exit status passes through" bash -c "'$launcher' sh -c 'exit 5'; [ \$? -eq 5 ]"
check "it goes in front of an existing LD_PRELOAD" \
    bash -c "LD_PRELOAD=\${LD_PRELOAD:+\$LD_PRELOAD:}/lib/x86_64-linux-gnu/libc.so.6 '$launcher' sh -c 'echo \$LD_PRELOAD' | grep -q 'libswerveclaim_preload.so:.*/lib/x86_64-linux-gnu/libc.so.6'"
check "a missing program is 127" bash -c "'$launcher' /nonexistent/program 2>/dev/null; [ \$? -eq 127 ]"
check "a static program: a warning, and it still runs" \
    bash -c "out=\$('$launcher' '$SCL_HELPERS/tools/static_program' 2>&1); [ \$? -eq 4 ] && echo \"\$out\" | grep -q 'statically linked' && echo \"\$out\" | grep -q 'static program ran'"
cp /bin/true "$work/setuid-true" && chmod u+s "$work/setuid-true"
check "a setuid program: a warning" bash -c "'$launcher' '$work/setuid-true' 2>&1 | grep -q 'setuid/setgid'"
check "--help exits 0" bash -c "'$launcher' --help >/dev/null"

# Options end at --, and a staged or moved install is pointed at its library (#12)
# --print-library: the path a config file needs (#41: the docs said
# /usr/local/lib, Debian's packages install elsewhere).
printed=$("$launcher" --print-library)
check "--print-library prints the library it preloads ($printed)" \
    bash -c "[ -r '$printed' ] && [ \"\$('$launcher' sh -c 'echo \$LD_PRELOAD' | cut -d: -f1)\" = '$printed' ]"
check "--print-library follows --library" \
    bash -c "[ \"\$('$launcher' --library '$printed' -p)\" = '$printed' ]"
check "--print-library takes no COMMAND (2)" bash -c "'$launcher' --print-library true 2>/dev/null; [ \$? -eq 2 ]"
check "--print-library of a library not there: 125" \
    bash -c "'$launcher' --library /nonexistent/lib.so --print-library 2>/dev/null; [ \$? -eq 125 ]"

check "-- ends the options" bash -c "'$launcher' -- sh -c 'exit 5'; [ \$? -eq 5 ]"
mkdir "$work/moved"
cp "$launcher" "$work/moved/swerve-claim-preload"
moved=$work/moved/swerve-claim-preload
out=$("$moved" true 2>&1)
status=$?
if [ $status -eq 0 ]; then
    echo "launcher.sh: the moved launcher found an installed library: its not-found status is not checked"
else
    check "a moved launcher without its library: exit 125, not a missing command's 127" test $status -eq 125
    check "... and it says how to point at the library" grep -q -- '--library' <<<"$out"
fi
check "--library points a moved launcher at the library" \
    bash -c "[ \"\$('$moved' --library '$SCL_PRELOAD' '$seed' class-1 | head -1)\" = 'bool(true)' ]"
check "so does SWERVE_CLAIM_PRELOAD_LIBRARY" \
    bash -c "[ \"\$(SWERVE_CLAIM_PRELOAD_LIBRARY='$SCL_PRELOAD' '$moved' '$seed' class-1 | head -1)\" = 'bool(true)' ]"
check "a --library that is not there: exit 125" bash -c "'$launcher' --library /nonexistent/lib.so true 2>/dev/null; [ \$? -eq 125 ]"
finish
