# SPDX-License-Identifier: MIT
"""An ASGI app for tests/real-servers/uvicorn-wait.sh and hypercorn-wait.sh
(#39): a request that waits for a claim is one coroutine among the
worker's others, and must not keep them waiting.

/report waits up to 5 s for the claim "report" with
`await claim.acquire_async(5.0)`, holds it 0.4 s (`await
asyncio.sleep(0.4)`) and answers "ran PID START_NS END_NS" (when it had
taken it, and when it was about to let it go), or "gave up PID" if it
never took it.  /ping answers at once "pong PID WAITING": WAITING, how
many of this worker's coroutines were waiting for the claim then.  /loop
names the running event loop's class.

SCL_ACQUIRE=blocking takes the claim with the blocking
`claim.acquire(5.0)` instead, the form that stops every coroutine of the
worker while it waits (the tests' control)."""
import asyncio
import os
import time

import swerve_claim
from asgi_app import answer, lifespan  # beside it: both servers put its directory on sys.path

BLOCKING = os.environ.get("SCL_ACQUIRE") == "blocking"
_waiting = [0]


async def _report():
    claim = swerve_claim.claim("report")
    _waiting[0] += 1
    try:
        held = claim.acquire(5.0) if BLOCKING else await claim.acquire_async(5.0)
    finally:
        _waiting[0] -= 1
    if not held:
        return "gave up %d\n" % os.getpid()
    start = time.time_ns()
    await asyncio.sleep(0.4)  # the report, while holding the claim
    end = time.time_ns()
    claim.release()
    return "ran %d %d %d\n" % (os.getpid(), start, end)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/report":
        body = await _report()
    elif path == "/ping":
        body = "pong %d %d\n" % (os.getpid(), _waiting[0])
    elif path == "/loop":
        loop = type(asyncio.get_running_loop())
        body = "%s.%s\n" % (loop.__module__, loop.__name__)
    else:
        body = "%d\n" % os.getpid()
    await answer(send, body)
