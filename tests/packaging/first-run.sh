#!/bin/bash
# SPDX-License-Identifier: MIT
# A newcomer's first run, in the README's order: scripts/demo.sh, which
# installs only what the demo uses and so configures _build without
# Check, then scripts/test.sh (--quick), which installs Check.  Every test
# of Makefile.am's TESTS must then run, none skipped for want of Check,
# and the report must show a failing test's log.
#
# On a copy of the working tree (as a fresh clone has it: nothing
# generated, nothing built), with Check hidden from configure during the
# demo, as on a machine that does not have it yet; one failure is planted
# (symbols.expected names a symbol the library does not export) for the
# report to show.
#
# A whole plain `make check` runs inside (about five minutes), so make
# check skips it: scripts/test.sh runs it as a step of its own with
# SCL_FIRST_RUN=1, and the nested test.sh, with SCL_FIRST_RUN=0, skips it.
set -u
if [ "${SCL_FIRST_RUN:-}" != 1 ]; then
    echo "SKIP: first-run.sh runs as a step of scripts/test.sh (SCL_FIRST_RUN=1): a whole make check inside"
    exit 77
fi
. "$(dirname "$0")/../lib/check.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "SKIP: first-run.sh: $src is no git checkout (scripts/format.sh needs one)"
    exit 77
fi
work=$(mktemp -d /tmp/swerve-claim-first-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # the tests' unprivileged users reach the copy's build

copy=$work/swerve-claim
copy_checkout "$src" "$copy"
git -C "$copy" init -q && git -C "$copy" add -A
planted=swerve_claim_planted_by_first_run
echo "$planted" >>"$copy/tests/packaging/symbols.expected"

# configure asks pkg-config; this one has no Check.
mkdir "$work/no-check"
cat >"$work/no-check/pkg-config" <<EOF
#!/bin/sh
for arg; do case \$arg in check | "check "*) exit 1 ;; esac; done
exec $(command -v pkg-config) "\$@"
EOF
chmod +x "$work/no-check/pkg-config"
check "the demo's pkg-config has no Check" bash -c "! PATH='$work/no-check':\$PATH pkg-config --exists check"

# What the outer make passes on (its TESTS=..., its jobserver) is not a
# newcomer's.
fresh=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TESTS -u PKG_CONFIG SCL_FIRST_RUN=0)
started=$(($(now_ns) / 1000000000))
"${fresh[@]}" PATH="$work/no-check:$PATH" timeout -k 10 600 "$copy/scripts/demo.sh" >"$work/demo.out" 2>&1
check "the demo ran: $(tail -1 "$work/demo.out")" grep -q '^demo: ok' "$work/demo.out"
demo_took=$(($(now_ns) / 1000000000 - started))
"${fresh[@]}" timeout -k 10 1800 "$copy/scripts/test.sh" --quick >"$work/test.out" 2>&1
took=$(($(now_ns) / 1000000000 - started - demo_took))
echo "first-run.sh: the demo took $demo_took s, test.sh --quick $took s"
sed 's/^/   | /' "$work/test.out"

# Every test Makefile.am names (TESTS is $(CHECK_TESTS) $(SCRIPT_TESTS)),
# the Check programs included (whatever configure found), ran: PASS, but
# for the planted failure and this test.
expected=$(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$copy/Makefile.am" | sed -n -E 's/^(CHECK_|SCRIPT_)?TESTS = //p' |
    tr -s ' \t' '\n\n' | grep -v '^\$(' | grep . | sort -u)
for t in tests/unit/unit tests/contract/contract tests/preload/integration tests/prefork/server tests/tools/tool.sh; do
    check "Makefile.am's TESTS names $t" grep -qxF "$t" <<<"$expected"
done
for t in $expected; do
    result=$(sed -n 's/^:test-result: //p' "$copy/_build/$t.trs" 2>/dev/null | sort -u | tr '\n' ' ')
    case $t in
    tests/packaging/first-run.sh | tests/packaging/deb.sh) want='SKIP ' ;;
    tests/packaging/symbols.sh) want='FAIL ' ;;
    *) want='PASS ' ;;
    esac
    check "test.sh ran $t: ${result:-not run}, not ${want% }" test "$result" = "$want"
done
check "test.sh counted the planted failure, and only it: $(tail -1 "$work/test.out")" \
    grep -qE '^test\.sh: [0-9]+ passed, 1 failed$' "$work/test.out"
check "the report shows the failing test's log" grep -q -- "-$planted" "$work/test.out"
check "the report finds its logs" bash -c "! grep -qE '^(grep|tail): ' '$work/test.out'"

finish
