#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's Mojolicious: hypnotoad, unmodified, 2 workers on 127.0.0.1 under
# the shim (in the foreground, -f; stopped by its pid), the app using the
# Perl binding (hypnotoad_app.pl).  A /report waits up to 5 s for the
# claim without blocking its worker (acquire_p: the worker's event loop
# watches the claim's descriptor) and holds it 0.4 s on a timer.  With six
# concurrent /report and a /ping every ~50 ms meanwhile
# (hypnotoad_probe.py), three rounds: the reports never overlap, all six
# run, and no /ping sent once the six are in their route (waiting for the
# claim or holding it) takes more than 100 ms, some of them answered by a
# worker while one of its own reports waited.  (A ping sent during the
# burst waits behind the routing of the reports its worker accepted with
# it: up to 113 ms on a loaded 2-core machine, printed, not bounded.)
# The control: a blocking acquire(5) in the same route stalls /ping past
# 100 ms.  A graceful stop (QUIT to the manager, which sends each worker
# QUIT): a leader in a request sees draining() within 100 ms of its
# worker's QUIT and lets go, and the stop leaves no claim directory and no
# process; the shim writes nothing to hypnotoad's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages libmojolicious-perl libffi-platypus-perl python3 curl

port=$(free_port)
app=$SCL_SRCDIR/tests/real-servers/hypnotoad_app.pl
probe=$SCL_SRCDIR/tests/real-servers/hypnotoad_probe.py
log=$work/hypnotoad.log
start() {
    SWERVE_TMPDIR=$base SCL_HYPNOTOAD_PORT=$port SCL_HYPNOTOAD_PID=$work/hypnotoad.pid \
        PERL5LIB=$SCL_SRCDIR/bindings/perl LD_PRELOAD=$preload hypnotoad -f "$app" >>"$log" 2>&1 &
    manager=$!
    server_pids+=("$manager")
    check "hypnotoad answers on 127.0.0.1" wait_port "$port"
    check "2 workers" wait_workers "$manager" 2
    check "both workers answered (and bound the library) before the rounds" warm_up
}
# A worker's first requests cost it more than the rest (Mojolicious' own,
# FFI::Platypus binding the library): until both workers have answered
# "/" (a connection each, at most 100).
warm_up() {
    local seen=""
    for _ in $(seq 100); do
        seen=$(printf '%s\n' $seen "$(get "$port" /)" | sort -u | grep .)
        [ "$(grep -c . <<<"$seen")" -ge 2 ] && return 0
    done
    echo "answered by: $seen" >&2
    return 1
}
# The probe's figure KEY in round WHAT.
figure() { sed -n "s/^$2=//p" "$work/probe.$1"; }
# Six concurrent /report?QUERY with /ping probes meanwhile; the figures
# are shown.
probe_round() { # WHAT QUERY
    timeout 90 python3 "$probe" "$port" 6 "$2" >"$work/probe.$1" 2>&1
    echo "$1: $(grep -c '^report ' "$work/probe.$1") reports;" \
        "$(grep -E '^(overlaps|pings|ping_max_ms|ping_median_ms|burst_pings|burst_ping_max_ms|all_ping_max_ms|ping_workers|pings_beside_waiter|gave_up)=' \
            "$work/probe.$1" | tr '\n' ' ')"
}

start
check "the manager wrote its pid" test "$(cat "$work/hypnotoad.pid" 2>/dev/null)" = "$manager"
for round in 1 2 3; do
    probe_round "round $round" ""
    what="round $round"
    check "$what: all six reports ran ($(figure "$what" ran))" test "$(figure "$what" ran)" = 6
    check "$what: none gave up, no error" test "$(figure "$what" gave_up)$(figure "$what" errors)" = 00
    check "$what: the reports never overlapped" test "$(figure "$what" overlaps)" = 0
    check "$what: some /ping probes ($(figure "$what" pings))" test "$(figure "$what" pings)" -ge 10
    check "$what: no /ping sent once the six were in took more than 100 ms (longest $(figure "$what" ping_max_ms) ms)" \
        test "$(figure "$what" ping_max_ms)" -le 100
    check "$what: a worker answered /ping while one of its reports waited ($(figure "$what" pings_beside_waiter))" \
        test "$(figure "$what" pings_beside_waiter)" -ge 1
    check "$what: the claim is free after" test "$(get "$port" /status)" = free
    [ "$failed" -eq 0 ] || sed "s/^/$what: /" "$work/probe.$what" >&2
done

# The control: the same route with a blocking acquire(5) stalls its worker
# (from the burst on: its routing waits too), and the probes see it.
probe_round "blocking" "blocking=1"
check "the control: a blocking acquire(5) stalls /ping past 100 ms (longest $(figure blocking all_ping_max_ms) ms)" \
    test "$(figure blocking all_ping_max_ms)" -gt 100
check "the claim is free after the blocking round" wait_status "$port" free 10 >/dev/null

# A graceful stop (QUIT): the manager sends each worker QUIT; a leader in a
# request sees draining() and lets go, and the manager and its workers end.
hold() { get "$port" /hold; }
drain_on_stop hold "$manager" QUIT 100
check "no claim directory left" no_claim_dir_left
check "no hypnotoad process left" no_process_left "$app"
check "the shim wrote nothing to hypnotoad's log, no worker crashed" log_is_clean "$log"
[ "$failed" -eq 0 ] || tail -n 40 "$log" >&2
finish
