#!/bin/bash
# SPDX-License-Identifier: MIT
# systemd-tmpfiles ages old entries out of /tmp; the shipped exclusion
# (doc/swerve-claim.conf, installed into tmpfiles.d) must keep a live
# server's claim directory however old its entries, while junk beside it
# goes.  The control run, without the exclusion, shows the test can fail.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
tool=${SCL_HELPERS:?run through make check}/../swerve-claim
if ! command -v systemd-tmpfiles >/dev/null; then
    echo "SKIP: systemd-tmpfiles is not installed, so there is nothing to exclude claims from"
    exit 77
fi
work=$(mktemp -d)
holder=
cleanup() { [ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# Holds 'nightly-report' in BASE until killed; waits until it is held.
hold() {
    "$tool" --base "$1" run nightly-report -- sleep 60 &
    holder=$!
    for _ in $(seq 100); do
        ls "$1"/swerve-claim.*/claims/nightly-report >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    return 1
}
# Ages everything below BASE well past the 1 s limit (a settle second
# for the claim's own timestamps first), then cleans it with CONFIG.
clean() {
    sleep 1
    echo junk >"$1/junk"
    sleep 1.5
    systemd-tmpfiles --clean "$2" 2>/dev/null
}
# The live holder's claim and its holder file, both there.  (Without the
# exclusion, tmpfiles removes the holder file, whose unlinking changes the
# shared inode's ctime, and then keeps or removes the claim depending on
# the order it meets them in: damaged either way.)
intact() {
    ls "$1"/swerve-claim.*/claims/nightly-report >/dev/null 2>&1 &&
        ls "$1"/swerve-claim.*/claims/.holder.* >/dev/null 2>&1
}

mkdir "$work/protected" "$work/control"
{
    echo "d $work/protected - - - 1s"
    sed -n "s|^x /tmp/|x $work/protected/|p" "$src/doc/swerve-claim.conf"
} >"$work/protected.conf"
echo "d $work/control - - - 1s" >"$work/control.conf"

check "with the exclusion: a holder holds nightly-report" hold "$work/protected"
clean "$work/protected" "$work/protected.conf"
check "with the exclusion: the live claim is intact" intact "$work/protected"
check "with the exclusion: the junk beside it is gone" test ! -e "$work/protected/junk"
kill "$holder"
wait "$holder" 2>/dev/null

check "control: a holder holds nightly-report" hold "$work/control"
clean "$work/control" "$work/control.conf"
check "control: the junk is gone" test ! -e "$work/control/junk"
if intact "$work/control"; then
    fail "the control run left the live claim intact: this test could not fail"
else
    pass
fi
# configure says so when the file would land where systemd-tmpfiles never
# reads (#12): --prefix=/opt/... does; --with-tmpfilesdir puts it right.
if [ -x "$src/configure" ]; then
    (cd "$work" && mkdir conf1 conf2 &&
        (cd conf1 && "$src/configure" --prefix=/opt/swerve-claim >out 2>&1) &&
        (cd conf2 && "$src/configure" --prefix=/opt/swerve-claim --with-tmpfilesdir=/usr/lib/tmpfiles.d >out 2>&1))
    check "configure --prefix=/opt/swerve-claim says systemd-tmpfiles does not read its tmpfiles.d" \
        grep -q "systemd-tmpfiles does not read /opt/swerve-claim/lib/tmpfiles.d" "$work/conf1/out"
    check "--with-tmpfilesdir=/usr/lib/tmpfiles.d puts the file there" \
        grep -q "^tmpfilesdir = /usr/lib/tmpfiles.d" "$work/conf2/Makefile"
    check "(and configure has nothing to say then)" bash -c "! grep -q 'systemd-tmpfiles does not read' '$work/conf2/out'"
fi
finish
