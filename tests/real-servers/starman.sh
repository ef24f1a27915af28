#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's Starman (Net::Server::PreFork), unmodified, 4 workers on
# 127.0.0.1 under the shim, the PSGI app using the Perl binding
# (starman_app.psgi): exactly one of 8 concurrent requests runs the nightly
# report in each round, through a SIGKILLed holder (its claim free once the
# master has reaped it) and a reload (HUP: the workers replaced, the master
# kept).  A stop (TERM: the master signals its workers and ends without
# waiting for them) leaves no claim directory and no process once they are
# gone, three times over: a master that registered its exiting workers as
# it ended left its directory behind in one stop of three or more.  The
# shim writes nothing to Starman's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages starman curl

port=$(free_port)
app=$SCL_SRCDIR/tests/real-servers/starman_app.psgi
master() { cat "$work/starman.pid" 2>/dev/null; }
start() {
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload PERL5LIB=$SCL_SRCDIR/bindings/perl \
        starman --workers 4 --listen "127.0.0.1:$port" --pid "$work/starman.pid" --error-log "$work/error.log" \
        "$app" >"$work/stdout.log" 2>&1 &
    first=$!
    server_pids+=("$first")
    check "Starman answers on 127.0.0.1" wait_port "$port"
    check "4 workers" workers_replaced "$first" 4 ""
}
stop() { # WHAT
    local workers
    workers=$(children_of "$first")
    check "$1: a stop (TERM)" stop_pid "$first" TERM
    check "$1: its workers are gone" all_gone $workers
    check "$1: no claim directory left" no_claim_dir_left
    check "$1: no Starman process left" no_process_left "$app"
}

start
check "the master wrote its pid" test "$(master)" = "$first"
report_round "$port" "first round"
killed_mid_report "$port"
# A leader in a request lets go once the master's HUP drains its worker.
hold() { get "$port" /hold; }
take() { get "$port" /take; }
drain_check hold take kill -HUP "$first"
check "4 workers after the reload" workers_replaced "$first" 4 ""
reload_replaces_workers "$first" HUP 4
report_round "$port" "after HUP"
check "one claim directory" test "$(claim_dirs)" -eq 1
stop "first stop"

for again in second third; do
    start
    report_round "$port" "$again start"
    stop "$again stop"
done
check "Starman's log saw the kill and the reload" \
    bash -c "grep -q 'signal was 9' '$work/error.log' && grep -q 'Sending children hup signal' '$work/error.log'"
check "the shim wrote nothing to Starman's log, no worker crashed" log_is_clean "$work/error.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/error.log" >&2
finish
