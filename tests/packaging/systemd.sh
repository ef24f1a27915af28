#!/bin/bash
# SPDX-License-Identifier: MIT
# The shipped systemd drop-in (doc/systemd/swerve-claim.conf), as a unit's
# drop-in, passes systemd-analyze verify without a word about it, and
# names the installed library by its whole path.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
dropin=${SCL_HELPERS:?run through make check}/../doc/systemd/swerve-claim.conf
if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze is not installed"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/example.service.d"
printf '[Unit]\nDescription=a server under the claim shim\n[Service]\nExecStart=/bin/sleep 1\n' >"$work/example.service"
cp "$dropin" "$work/example.service.d/swerve-claim.conf"
(cd "$work" && SYSTEMD_UNIT_PATH="$work:" systemd-analyze verify example.service) >"$work/out" 2>&1
check "systemd-analyze verify passes with the drop-in" test $? -eq 0
check "(and says nothing about it)" bash -c "! grep -q 'swerve-claim.conf' '$work/out'"
check "the drop-in preloads the library by its whole path" \
    grep -qE '^Environment=LD_PRELOAD=/.+/libswerveclaim_preload.so$' "$work/example.service.d/swerve-claim.conf"
# A control: a drop-in with a mistake in it is reported, so the check above can fail.
printf '[Service]\nEnvironmen=LD_PRELOAD=x\n' >"$work/example.service.d/broken.conf"
(cd "$work" && SYSTEMD_UNIT_PATH="$work:" systemd-analyze verify example.service) >"$work/out" 2>&1
check "control: a drop-in with a mistake is reported" grep -q 'broken.conf' "$work/out"
finish
