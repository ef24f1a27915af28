#!/bin/bash
# SPDX-License-Identifier: MIT
# The shipped systemd drop-in (doc/systemd/swerve-claim.conf) on two real
# units at once, as on a machine where nginx, php-fpm and apache2 all have
# it: each unit gets a runtime directory of its own, with its server's
# claims in it; stopping one unit removes its directory and leaves the
# other's, whose server keeps its claims (exactly one of 4 concurrent
# requests runs the report) and whose claims swerve-claim still finds
# from its pid.  (With one RuntimeDirectory=swerve-claim shared by both,
# systemd removed it, the other unit's claims included, when the first
# unit stopped.)
#
# The units run the prefork server (tests/prefork/prefork_server) under a
# systemd manager of the test's own (tests/lib/systemd.sh), with this
# build's library in place of the installed one the drop-in names.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
. "$(dirname "$0")/../lib/systemd.sh" || exit 99
. "$(dirname "$0")/../lib/prefork.sh" || exit 99
helpers=${SCL_HELPERS:?run through make check}
preload=$SCL_PRELOAD
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$preload
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
work=$(mktemp -d)
chmod 755 "$work"
trap 'systemd_stop; rm -rf "$work"' EXIT

units=$work/units
for unit in scl-a scl-b; do
    mkdir -p "$units/$unit.service.d"
    cat >"$units/$unit.service" <<UNIT
[Unit]
Description=the prefork server under the claim shim (tests/packaging/systemd-units.sh)
DefaultDependencies=no

[Service]
ExecStart=$helpers/prefork/prefork_server --workers 2 --report-ms 1500 --port-file $work/%N.port
Environment=ASAN_OPTIONS=detect_leaks=0
UNIT
    cp "$helpers/../doc/systemd/swerve-claim.conf" "$units/$unit.service.d/50-swerve-claim.conf"
    printf '[Service]\nEnvironment=LD_PRELOAD=%s\n' "$preload" >"$units/$unit.service.d/90-this-build.conf"
done
systemd_boot "$units" "$work/systemd.log" || { fail "systemd started"; finish; exit; }

# UNIT's server's port, once it wrote it (at most 10 s).
port_of() { wait_for_file "$work/$1.port" && cat "$work/$1.port"; }

main_pid() { in_systemd systemctl show -p MainPID --value "$1.service"; }

# swerve-claim list -s UNIT's main pid, in the manager's namespaces, shows
# its nightly-report held (at most 5 s after a request took it).
lists_its_claim() { # UNIT
    local pid
    pid=$(main_pid "$1")
    for _ in $(seq 50); do
        in_systemd "$helpers/../swerve-claim" list -s "$pid" 2>/dev/null | grep -q nightly-report && return 0
        sleep 0.1
    done
    in_systemd "$helpers/../swerve-claim" list -s "$pid" >&2
    return 1
}

check "systemctl start scl-a scl-b" in_systemd systemctl start scl-a.service scl-b.service
check "scl-a's server takes its claims: exactly one of 4 runs the report" exactly_one "$(port_of scl-a)" 4
check "scl-b's server takes its claims: exactly one of 4 runs the report" exactly_one "$(port_of scl-b)" 4
for unit in scl-a scl-b; do
    check "$unit's claim directory is in its own runtime directory /run/swerve-claim/$unit" \
        in_systemd sh -c "ls -d /run/swerve-claim/$unit/swerve-claim.*/claims >/dev/null"
    check "$unit's server has SWERVE_TMPDIR=/run/swerve-claim/$unit" \
        in_systemd sh -c "tr '\\0' '\\n' </proc/$(main_pid $unit)/environ | grep -qx SWERVE_TMPDIR=/run/swerve-claim/$unit"
done

check "systemctl stop scl-a" in_systemd systemctl stop scl-a.service
check "scl-a's runtime directory is gone" in_systemd sh -c '! test -e /run/swerve-claim/scl-a'
check "scl-b's runtime directory and claim directory are still there" \
    in_systemd sh -c 'ls -d /run/swerve-claim/scl-b/swerve-claim.*/claims >/dev/null'
check "scl-b's server still takes its claims: exactly one of 4 runs the report" exactly_one "$(port_of scl-b)" 4
hold_report "$(port_of scl-b)"
holding=$!
check "swerve-claim list -s finds scl-b's claim from its main pid" lists_its_claim scl-b
wait "$holding"

check "systemctl stop scl-b" in_systemd systemctl stop scl-b.service
check "scl-b's runtime directory is gone too" in_systemd sh -c '! test -e /run/swerve-claim/scl-b'
check "systemd said nothing about the drop-in" bash -c "! grep -i 'swerve-claim.conf' '$work/systemd.log' >&2"
finish
