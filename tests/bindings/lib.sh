# SPDX-License-Identifier: MIT
# What the Ruby and Perl binding tests share (sourced): the shim preloaded
# into the language's own interpreter (never into a wrapper), a base of
# their own, and the suite's results added to check.sh's tally: each test
# of the suite a check, and two more: the suite ran to its end (status 0),
# and it left no claim directory.  The interpreter and its FFI are needed
# (scripts/install-deps.sh installs them): their absence is a failure.

: "${SCL_PRELOAD:?run through make check}" "${SCL_SRCDIR:?run through make check}"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh" || exit 99
src=$SCL_SRCDIR
preload=$SCL_PRELOAD
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$SCL_PRELOAD
export ASAN_OPTIONS=detect_leaks=0
base=$(mktemp -d /tmp/scl-binding.XXXXXX)
out=$(mktemp /tmp/scl-binding-out.XXXXXX)
trap 'rm -rf "$base" "$out"' EXIT

# Fails the test at once unless COMMAND... runs: WHAT is then missing.
need() { # WHAT PACKAGES COMMAND...
    local what=$1 packages=$2
    shift 2
    "$@" >/dev/null 2>&1 && return 0
    fail "$what is missing (scripts/install-deps.sh installs $packages)"
    finish
    exit 1
}

# Runs the suite, COMMAND..., under the shim with SWERVE_TMPDIR=$base, for
# at most 5 minutes; shows its output; its status in $status.
run_suite() { # COMMAND...
    SWERVE_TMPDIR=$base timeout 300 env LD_PRELOAD="$preload" "$@" >"$out" 2>&1
    status=$?
    cat "$out"
}

# Adds the suite's PASSED and FAILED tests to the tally, then checks its
# status and the base.
count_suite() { # PASSED FAILED
    passed=$((passed + $1))
    failed=$((failed + $2))
    check "the suite ran to its end (status $status)" test "$status" -eq 0
    check "no claim directory left in the base" test -z "$(ls -A "$base")"
    finish
}
