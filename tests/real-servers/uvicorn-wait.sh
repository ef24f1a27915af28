#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's uvicorn 0.17, unmodified, --workers 2 on 127.0.0.1 under the
# shim, with uvloop's loop and then asyncio's own (#39): an ASGI app
# (asgi_wait_app.py) whose /report waits up to 5 s for a claim with
# `await claim.acquire_async(5.0)` and holds it 0.4 s.  Six concurrent
# /report all run, one at a time (their holds never overlap), and no /ping
# fired every 50 ms meanwhile takes more than 100 ms, though most find a
# coroutine of their worker waiting for the claim (wait_probe.py).  The
# control: the blocking `claim.acquire(5.0)` fails the same probe (a
# waiting request stops its worker: pings stall, reports give up).  Each
# stop leaves no claim directory and no process; the shim writes nothing
# to uvicorn's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages python3-uvicorn python3-uvloop curl

port=$(free_port)
# /usr/bin/python3: Debian's uvicorn has no script of its own, and the
# python3 first in PATH may not be Debian's.
start() { # LOOP [blocking]
    SCL_ACQUIRE=${2:-async} SWERVE_TMPDIR=$base LD_PRELOAD=$preload PYTHONPATH=$SCL_SRCDIR/bindings/python \
        /usr/bin/python3 -m uvicorn asgi_wait_app:app --app-dir "$SCL_SRCDIR/tests/real-servers" \
        --workers 2 --loop "$1" --host 127.0.0.1 --port "$port" --no-access-log >>"$work/uvicorn.log" 2>&1 &
    master=$!
    server_pids+=("$master")
    check "uvicorn ($1${2:+, $2}) answers on 127.0.0.1" wait_port "$port" 30
    check "2 workers" wait_workers "$master" 2 workers_of
    workers=$(workers_of "$master")
}
# The master's workers (its resource tracker, a child too, aside).
workers_of() { pgrep -P "$1" -f -- '--multiprocessing-fork' | sort; }
stop() {
    check "uvicorn stops on SIGTERM" stop_pid "$master" TERM 15
    check "its workers are gone" all_gone $workers
    forget_pids "$master" $workers
    check "no claim directory left after the stop" no_claim_dir_left
}

waiting_reports_in_loops uvicorn uvloop asyncio

check "no uvicorn process left" no_process_left "--app-dir $SCL_SRCDIR/tests/real-servers"
check "the shim wrote nothing to uvicorn's log, no worker crashed" log_is_clean "$work/uvicorn.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/uvicorn.log" >&2
finish
