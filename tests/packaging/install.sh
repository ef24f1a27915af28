#!/bin/bash
# SPDX-License-Identifier: MIT
# make install, then make uninstall (both into a DESTDIR of the test's
# own), leave nothing of the package's: no file, no symbolic link (the
# completion's swerve-claim-preload), none of its own directories
# (share/swerve-claim and those below, include/swerve, share/doc/
# swerve-claim).  A file someone else put in one of those is kept, and
# its directory with it.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
build=${SCL_HELPERS:?run through make check}/..
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What the outer make passes on (its jobserver, TESTS=...) is not for these.
install_make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TESTS make -C "$build" -s "$@" >>"$work/make.out" 2>&1; }

stage=$work/stage
check "make install DESTDIR" install_make install DESTDIR="$stage"
prefix=$stage$(sed -n 's/^prefix = //p' "$build/Makefile")
check "(it installed the tool)" test -x "$prefix/bin/swerve-claim"
check "make uninstall DESTDIR" install_make uninstall DESTDIR="$stage"
# What is left below the stage of the package's: any file or link, any
# directory of its name but those on the way to the prefix
# (make distcheck's is below swerve-claim-VERSION/).
leftovers() {
    local on_the_way=./${prefix#"$stage"/}/ f
    (cd "$stage" && find . \( ! -type d -o -name '*swerve*' \) -print) | while IFS= read -r f; do
        case $on_the_way in "$f"/*) ;; *) echo "$f" ;; esac
    done
}
left=$(leftovers)
check "nothing of the package's is left: ${left:-nothing}" test -z "$left"
check "the shared directories stay (bin)" test -d "$prefix/bin"

# An administrator's file in one of the package's directories.
check "make install DESTDIR, again" install_make install DESTDIR="$stage"
echo 'local settings' >"$prefix/share/swerve-claim/systemd/local.conf"
check "make uninstall DESTDIR, again" install_make uninstall DESTDIR="$stage"
check "a file the package did not install is kept" test -f "$prefix/share/swerve-claim/systemd/local.conf"
check "make uninstall says why it left that directory" grep -q "systemd is not empty: left as it is" "$work/make.out"
left=$(cd "$prefix" && find . \( -name '*swerve*' -o -name local.conf \) -print | sort | tr '\n' ' ')
check "and removes the rest: $left" \
    test "$left" = "./share/swerve-claim ./share/swerve-claim/systemd/local.conf "
finish
