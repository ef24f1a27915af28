#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's uvicorn 0.17, unmodified, --workers 2 on 127.0.0.1 under the
# shim, the ASGI app on the Python binding (asgi_app.py): a master that
# never forks (multiprocessing's spawn: vfork + execve from CPython's
# _posixsubprocess, for its resource tracker and each worker) still has
# one claim directory, its workers' and its own; exactly one of 8
# concurrent requests runs the nightly report in each round; a SIGKILLed
# holder's claim is free (the master reaps nobody before it stops: a dead
# holder is nobody) and the report runs again in the other worker; a stop
# (SIGTERM, then SIGINT: the master sends each worker SIGTERM, one after
# the other) drains a leader, which sees it within 100 ms of its worker's
# SIGTERM and lets go; the stop leaves no claim directory and no process;
# the shim writes nothing to uvicorn's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages python3-uvicorn curl

port=$(free_port)
# /usr/bin/python3: Debian's uvicorn has no script of its own, and the
# python3 first in PATH may not be Debian's.
start() {
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload PYTHONPATH=$SCL_SRCDIR/bindings/python SCL_DRAIN_OUT=$work/drained \
        /usr/bin/python3 -m uvicorn asgi_app:app --app-dir "$SCL_SRCDIR/tests/real-servers" \
        --workers 2 --host 127.0.0.1 --port "$port" --no-access-log >>"$work/uvicorn.log" 2>&1 &
    master=$!
    server_pids+=("$master")
}
# The master's workers (its resource tracker, a child too, aside).
workers_of() { pgrep -P "$1" -f -- '--multiprocessing-fork' | sort; }
hold() { get "$port" "/hold?seconds=8"; }

start
check "uvicorn answers on 127.0.0.1" wait_port "$port" 30
check "2 workers" wait_workers "$master" 2 workers_of
report_round "$port" "first round"
report_round "$port" "second round"
one_dir_while_running "$port" "$master"
killed_mid_report "$port"
report_round "$port" "one worker left"
drain_on_stop hold "$master" TERM 1000
check "no claim directory left after the stop" no_claim_dir_left

start
check "uvicorn answers again" wait_port "$port" 30
check "2 workers again" wait_workers "$master" 2 workers_of
report_round "$port" "after a restart"
drain_on_stop hold "$master" INT 1000
check "no claim directory left after the stop (SIGINT)" no_claim_dir_left
check "no uvicorn process left" no_process_left "--app-dir $SCL_SRCDIR/tests/real-servers"
check "uvicorn's log saw both stops" test "$(grep -c 'Stopping parent process' "$work/uvicorn.log")" -eq 2
check "the shim wrote nothing to uvicorn's log, no worker crashed" log_is_clean "$work/uvicorn.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/uvicorn.log" >&2
finish
