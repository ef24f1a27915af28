#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's hypercorn 0.13, unmodified, --workers 2 on 127.0.0.1 under the
# shim, the ASGI app on the Python binding (asgi_app.py): one claim
# directory, the master's (its workers are multiprocessing Processes in
# Python's default context on Linux, fork: os.fork, no exec); exactly one
# of 8 concurrent requests runs the nightly report in each round; a
# SIGKILLed holder's claim is free (the master, blocked joining its first
# worker, may not reap it before it stops: a dead holder is nobody) and the
# report runs again in the other worker; a stop (SIGTERM, then SIGINT: the
# master sets a shared Event its workers look at every 100 ms, and sends
# them no signal; each then closes its listener) drains a leader, which
# sees it and lets go; the stop leaves no claim directory and no process;
# the shim writes nothing to hypercorn's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages python3-hypercorn curl

port=$(free_port)
# /usr/bin/python3: the python3 first in PATH may not be Debian's.  The app
# by its path: hypercorn imports it from that directory.
start() {
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload PYTHONPATH=$SCL_SRCDIR/bindings/python SCL_DRAIN_OUT=$work/drained \
        /usr/bin/python3 -m hypercorn --workers 2 --bind "127.0.0.1:$port" \
        "$SCL_SRCDIR/tests/real-servers/asgi_app:app" >>"$work/hypercorn.log" 2>&1 &
    master=$!
    server_pids+=("$master")
}
hold() { get "$port" "/hold?seconds=8"; }

start
check "hypercorn answers on 127.0.0.1" wait_port "$port" 30
check "2 workers" wait_workers "$master" 2
report_round "$port" "first round"
report_round "$port" "second round"
one_dir_while_running "$port" "$master"
killed_mid_report "$port"
report_round "$port" "one worker left"
# A worker looks at the master's Event every 100 ms: 300 ms in all.
drain_on_stop hold "$master" TERM 300
check "no claim directory left after the stop" no_claim_dir_left

start
check "hypercorn answers again" wait_port "$port" 30
check "2 workers again" wait_workers "$master" 2
report_round "$port" "after a restart"
drain_on_stop hold "$master" INT 300
check "no claim directory left after the stop (SIGINT)" no_claim_dir_left
check "no hypercorn process left" no_process_left "$SCL_SRCDIR/tests/real-servers/asgi_app:app"
check "hypercorn's log saw its workers start, twice" test "$(grep -c 'Running on http://127.0.0.1' "$work/hypercorn.log")" -eq 4
check "the shim wrote nothing to hypercorn's log, no worker crashed" log_is_clean "$work/hypercorn.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/hypercorn.log" >&2
finish
