#!/bin/bash
# SPDX-License-Identifier: MIT
# tool.sh and run-server.sh again, as an unprivileged user (nobody): what
# an operator without root sees and can do.  Run as root; skipped otherwise.
here=$(cd "$(dirname "$0")" && pwd)
tool=${SCL_HELPERS:?run through make check}/../swerve-claim
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
    echo "SKIP: needs root, to become the user nobody"
    exit 77
fi
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent "$@"; }
if ! as_nobody test -x "$tool" -a -r "$here/tool.sh" -a -r "$here/run-server.sh"; then
    echo "SKIP: nobody cannot reach this build ($tool)"
    exit 77
fi
as_nobody bash "$here/tool.sh"
tool=$?
as_nobody bash "$here/run-server.sh" || exit
exit $tool
