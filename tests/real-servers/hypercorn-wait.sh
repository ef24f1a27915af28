#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's hypercorn 0.13, unmodified, --workers 2 on 127.0.0.1 under the
# shim, with its asyncio workers and then its uvloop ones (#39): an ASGI
# app (asgi_wait_app.py) whose /report waits up to 5 s for a claim with
# `await claim.acquire_async(5.0)` and holds it 0.4 s.  Six concurrent
# /report all run, one at a time (their holds never overlap), and no /ping
# fired every 50 ms meanwhile takes more than 100 ms, though most find a
# coroutine of their worker waiting for the claim (wait_probe.py).  The
# control: the blocking `claim.acquire(5.0)` fails the same probe (a
# waiting request stops its worker: pings stall, reports give up).  Each
# stop leaves no claim directory and no process; the shim writes nothing
# to hypercorn's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages python3-hypercorn python3-uvloop curl

port=$(free_port)
# /usr/bin/python3: the python3 first in PATH may not be Debian's.  The app
# by its path: hypercorn imports it from that directory.
start() { # WORKER-CLASS [blocking]
    SCL_ACQUIRE=${2:-async} SWERVE_TMPDIR=$base LD_PRELOAD=$preload PYTHONPATH=$SCL_SRCDIR/bindings/python \
        /usr/bin/python3 -m hypercorn --workers 2 --worker-class "$1" --bind "127.0.0.1:$port" \
        "$SCL_SRCDIR/tests/real-servers/asgi_wait_app:app" >>"$work/hypercorn.log" 2>&1 &
    master=$!
    server_pids+=("$master")
    check "hypercorn ($1${2:+, $2}) answers on 127.0.0.1" wait_port "$port" 30
    check "2 workers" wait_workers "$master" 2
    workers=$(children_of "$master")
}
# The master sets a shared Event its workers look at every 100 ms.
stop() {
    check "hypercorn stops on SIGTERM" stop_pid "$master" TERM 15
    check "its workers are gone" all_gone $workers
    forget_pids "$master" $workers
    check "no claim directory left after the stop" no_claim_dir_left
}

waiting_reports_in_loops hypercorn asyncio uvloop

check "no hypercorn process left" no_process_left "$SCL_SRCDIR/tests/real-servers/asgi_wait_app:app"
check "the shim wrote nothing to hypercorn's log, no worker crashed" log_is_clean "$work/hypercorn.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/hypercorn.log" >&2
finish
