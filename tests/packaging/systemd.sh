#!/bin/bash
# The shipped systemd drop-in (doc/systemd/swerve-claim.conf), as a unit's
# drop-in, passes systemd-analyze verify without a word about it, and
# names the installed library by its whole path.
set -u
dropin=${SCL_HELPERS:?run through make check}/../doc/systemd/swerve-claim.conf
if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze is not installed"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { if "$@"; then passed=$((passed + 1)); else echo "FAIL: $*" >&2; failed=$((failed + 1)); fi; }

mkdir "$work/example.service.d"
printf '[Unit]\nDescription=a server under the claim shim\n[Service]\nExecStart=/bin/sleep 1\n' >"$work/example.service"
cp "$dropin" "$work/example.service.d/swerve-claim.conf"
(cd "$work" && SYSTEMD_UNIT_PATH="$work:" systemd-analyze verify example.service) >"$work/out" 2>&1
check test $? -eq 0
check bash -c "! grep -q 'swerve-claim.conf' '$work/out'"
check grep -qE '^Environment=LD_PRELOAD=/.+/libswerveclaim_preload.so$' "$work/example.service.d/swerve-claim.conf"
# A control: a drop-in with a mistake in it is reported, so the check above can fail.
printf '[Service]\nEnvironmen=LD_PRELOAD=x\n' >"$work/example.service.d/broken.conf"
(cd "$work" && SYSTEMD_UNIT_PATH="$work:" systemd-analyze verify example.service) >"$work/out" 2>&1
check grep -q 'broken.conf' "$work/out"
echo "systemd.sh: $passed passed, $failed failed"
[ $failed -eq 0 ]
