#!/bin/bash
# SPDX-License-Identifier: MIT
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, checks that every C file is formatted, builds with -Wall
# -Wextra -Werror and runs `make check` (Check tests included, or fails),
# runs the README's first run on a copy of the tree, builds, installs,
# runs and purges the Debian packages, builds again with
# AddressSanitizer and UndefinedBehaviorSanitizer and runs `make check`
# again, then `make distcheck`.  Ends with "test.sh: N passed, N failed".
#
#   scripts/test.sh [--quick]    --quick: the plain build's `make check` only
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
for arg in "$@"; do
    case $arg in
    --quick) quick=1 ;;
    -h | --help)
        sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "test.sh: unknown option $arg (try --help)" >&2
        exit 2
        ;;
    esac
done

"$top/scripts/install-deps.sh" || exit 1
passed=0
failed=0

# Adds up the Check summaries ("100%: Checks: 26, Failures: 0, Errors: 0")
# and the script tests in LOGs, and prints them.
tally() {
    local label=$1 line checks bad
    shift
    for log in "$@"; do
        [ -f "$log" ] || continue
        line=$(grep -h "Checks:" "$log" | tail -1)
        script=$(grep -hE '^[a-z.-]+\.sh: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
        if [ -n "$script" ]; then
            line=${script#*: }
            checks=$(sed -E 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/' <<<"$line" | awk '{print $1 + $2}')
            bad=$(sed -E 's/^([0-9]+) passed, ([0-9]+) failed$/\2/' <<<"$line")
        elif [ -n "$line" ]; then
            checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
            bad=$(sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' <<<"$line" | awk '{print $1 + $2}')
        elif grep -q "^:test-result: PASS" "${log%.log}.trs" 2>/dev/null; then
            line="1 script test passed"
            checks=1 bad=0
        elif grep -q "^:test-result: SKIP" "${log%.log}.trs" 2>/dev/null; then
            echo "   $label $(basename "${log%.log}"): skipped: $(grep -h '^SKIP' "$log" | head -1)"
            continue
        else
            line="script test failed"
            checks=1 bad=1
        fi
        echo "   $label $(basename "${log%.log}"): $line"
        passed=$((passed + checks - bad))
        failed=$((failed + bad))
    done
}

# Shows the end of the log of each test whose result (TRS) failed, and
# what make check said (OUT).
report_failures() {
    local out=$1 trs
    shift
    for trs in "$@"; do
        grep -qE '^:test-result: (FAIL|ERROR)' "$trs" 2>/dev/null && tail -v -n 40 "${trs%.trs}.log" >&2
    done
    grep -E "^(FAIL|ERROR):" "$out" >&2
}

# Runs TEST, a test that takes minutes and that make check skips, as a
# step of its own in the plain build: VAR=1 lets it run.  Tallied as
# LABEL; its make check output is in _build/LABEL.out.
own_step() { # LABEL TEST VAR
    local label=$1 test=$2 var=$3 log=$top/_build/$2.log
    rm -f "$log" "${log%.log}.trs"
    if ! env "$var=1" make -C "$top/_build" -s check TESTS="$test" >"$top/_build/$label.out" 2>&1; then
        echo "test.sh: $label: make check failed; its log:" >&2
        report_failures "$top/_build/$label.out" "${log%.log}.trs"
        [ -f "$log" ] || failed=$((failed + 1)) # it never ran
    fi
    tally "$label" "$log"
}

# Builds in DIR with OPTIONS and runs make check there.
check_build() {
    local dir=$1 label=$2
    shift 2
    echo "== $label: build ($*) and make check"
    if ! "$top/scripts/build.sh" "$dir" "$@"; then
        echo "test.sh: $label: build failed" >&2
        failed=$((failed + 1))
        return
    fi
    rm -f "$dir"/tests/*.log "$dir"/tests/*.trs "$dir"/tests/*/*.log "$dir"/tests/*/*.trs
    if ! make -C "$dir" -s check >"$dir/check.out" 2>&1; then
        echo "test.sh: $label: make check failed; the failing logs:" >&2
        report_failures "$dir/check.out" "$dir"/tests/*/*.trs
    fi
    tally "$label" "$dir"/tests/*.log "$dir"/tests/*/*.log
}

cd "$top" || exit 1
echo "== style: scripts/format.sh --check"
if "$top/scripts/format.sh" --check; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi
# --with-check: without Check, configure fails rather than make check
# leaving out the unit, contract, integration and server tests.
check_build "$top/_build" plain --enable-werror --with-check
if [ $quick -eq 0 ]; then
    # The README's first run, on a copy of the tree: a whole plain make
    # check inside, so not in every make check (tests/packaging/first-run.sh).
    echo "== first run: scripts/demo.sh, then scripts/test.sh --quick, as the README says"
    own_step first-run tests/packaging/first-run.sh SCL_FIRST_RUN
    # The Debian packages: built, checked by lintian, installed, run,
    # purged (tests/packaging/deb.sh), after make check, whose tests it
    # would otherwise run beside an installed library.
    echo "== Debian packages: dpkg-buildpackage, lintian, install, the demo's server on the installed files, purge"
    own_step deb tests/packaging/deb.sh SCL_DEB
    check_build "$top/_build-sanitizers" sanitizers --enable-werror --with-check --enable-sanitizers=address,undefined
    echo "== make distcheck"
    if make -C "$top/_build" -s distcheck DISTCHECK_CONFIGURE_FLAGS='--enable-werror --with-check' >"$top/_build/distcheck.out" 2>&1; then
        tail -n 4 "$top/_build/distcheck.out" | sed 's/^/   /'
        passed=$((passed + 1))
    else
        echo "test.sh: make distcheck failed:" >&2
        tail -n 60 "$top/_build/distcheck.out" >&2
        failed=$((failed + 1))
    fi
fi
# No test may leave a server behind: a leak here is a failure.  Only this
# checkout's servers are looked for (and stopped): another checkout's
# tests may be running on the same machine.
sleep 1
leaked=()
for pid in $(pgrep -f tests/prefork/prefork_server); do
    case $(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null) in
    "$top"/*) leaked+=("$pid") ;;
    esac
done
if [ ${#leaked[@]} -gt 0 ]; then
    echo "test.sh: test servers were left running:" >&2
    for pid in "${leaked[@]}"; do tr '\0' ' ' </proc/"$pid"/cmdline >&2 && echo >&2; done
    kill -9 "${leaked[@]}"
    failed=$((failed + 1))
fi
echo "test.sh: $passed passed, $failed failed"
[ $failed -eq 0 ]
