#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's Net::Server::PreFork, unmodified, 3 children on 127.0.0.1 under
# the shim, a small HTTP server using the Perl binding (netserver_app.pl):
# exactly one of 8 concurrent requests runs the nightly report in each
# round, through a SIGKILLed holder (its claim free once the master has
# reaped it) and reloads (HUP: with leave_children_open_on_hup the master
# sends each child SIGHUP and re-execs itself in the same pid, with new
# children and one claim directory throughout); a leader in a request sees
# draining() within 100 ms of its child's SIGHUP and a new child takes the
# claim (without that setting the master's HUP kills its children with
# SIGTERM at once, which a leader cannot see before it dies).  A stop
# (TERM: the master signals its children and ends without waiting for them)
# leaves no claim directory and no process once they are gone, three times
# over; the shim writes nothing to Net::Server's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages libnet-server-perl libffi-platypus-perl curl

port=$(free_port)
script=$SCL_SRCDIR/tests/real-servers/netserver_app.pl
master() { cat "$work/netserver.pid" 2>/dev/null; }
start() {
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload PERL5LIB=$SCL_SRCDIR/bindings/perl \
        perl "$script" --host=127.0.0.1 --port="$port" --ipv=4 --pid_file="$work/netserver.pid" \
        --log_file="$work/netserver.log" --log_level=4 --leave_children_open_on_hup=1 \
        --min_servers=3 --max_servers=3 --min_spare_servers=2 --max_spare_servers=2 \
        >>"$work/stdout.log" 2>&1 &
    first=$!
    server_pids+=("$first")
    check "Net::Server answers on 127.0.0.1" wait_port "$port"
    check "3 children" workers_replaced "$first" 3 ""
}
stop() { # WHAT
    local workers
    workers=$(children_of "$first")
    check "$1: a stop (TERM)" stop_pid "$first" TERM
    check "$1: its children are gone" all_gone $workers
    check "$1: no claim directory left" no_claim_dir_left
    check "$1: no Net::Server process left" no_process_left "--pid_file=$work/netserver.pid"
}
# A leader in a request lets go once the master's HUP drains its child.
hold() { get "$port" /hold; }
take() { get "$port" /take; }

start
check "the master wrote its pid" test "$(master)" = "$first"
report_round "$port" "first round"
killed_mid_report "$port"
check "3 children again" workers_replaced "$first" 3 ""
old=$(children_of "$first")
drain_check hold take kill -HUP "$first"
check "a reload (SIGHUP) replaces the 3 children" workers_replaced "$first" 3 "$old"
check "the master re-executed itself in the same pid" test "$(master)" = "$first"
reload_replaces_workers "$first" HUP 3
report_round "$port" "after HUP"
check "one claim directory" test "$(claim_dirs)" -eq 1
stop "first stop"

for again in second third; do
    start
    report_round "$port" "$again start"
    stop "$again stop"
done
check "Net::Server's log saw the reloads" \
    bash -c "grep -q 'Re-exec server during HUP' '$work/netserver.log' &&
        grep -q 'Sending children hup signal' '$work/netserver.log'"
check "the shim wrote nothing to Net::Server's log, no child crashed" log_is_clean "$work/netserver.log"
check "nor to the server's standard error" log_is_clean "$work/stdout.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/netserver.log" "$work/stdout.log" >&2
finish
