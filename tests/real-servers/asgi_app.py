# SPDX-License-Identifier: MIT
"""An ASGI app for tests/real-servers/uvicorn.sh and hypercorn.sh: the
seed's nightly-report pattern through the Python binding (swerve_claim),
in an event loop: the claim is tried once (acquire() with no timeout does
not block), the report awaits while it holds it, and a leader (/hold)
polls swerve_claim.draining() every 5 ms between awaits and lets go once
its worker is drained (a stop: neither server starts new workers)."""
import asyncio
import os
import signal
import time
from urllib.parse import parse_qs

import swerve_claim

# When this worker's own SIGTERM reached its event loop (uvicorn's master
# sends it one as it stops), for /hold to say: the master stops its workers
# one after the other, so the second is told only once the first is gone.
# uvicorn takes SIGTERM with loop.add_signal_handler; /hold chains that
# handler (asyncio's own loop only; under hypercorn there is none: its
# master tells its workers through a shared Event, not a signal).
_told = []
_noting = []


def _note_sigterm():
    loop = asyncio.get_running_loop()
    handle = getattr(loop, "_signal_handlers", {}).get(signal.SIGTERM)
    if handle is None or _noting:
        return

    def noted():
        _told.append(time.time_ns())
        handle._callback(*handle._args)

    loop.add_signal_handler(signal.SIGTERM, noted)
    _noting.append(handle)


async def _acquire(name, seconds):
    """The claim NAME, tried every 20 ms for up to SECONDS without blocking
    the loop; None if another holds it all that time."""
    claim = swerve_claim.claim(name)
    for _ in range(max(1, int(seconds / 0.02))):
        if claim.acquire():
            return claim
        await asyncio.sleep(0.02)
    return None


async def answer(send, body):
    data = body.encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def serving(route):
    """An ASGI app that serves HTTP with ROUTE (awaited with the scope: the
    body to answer), and answers the lifespan protocol, so that neither
    server logs its absence."""
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "http":
            await answer(send, await route(scope))
    return app


async def _route(scope):
    path = scope["path"]
    query = parse_qs(scope.get("query_string", b"").decode())
    if path == "/report":  # ?seconds=N: how long the report takes (1.5)
        seconds = float(query.get("seconds", ["1.5"])[0])
        claim = swerve_claim.claim("nightly-report").acquire()
        if claim:
            await asyncio.sleep(seconds)  # the report, while holding the claim
            body = "worker %d runs the report\n" % os.getpid()
        else:
            body = "worker %d: someone else is on it\n" % os.getpid()
        del claim  # released when it goes
    elif path == "/hold":  # ?seconds=N: the leader, for N s at most (60)
        _note_sigterm()
        leader = await _acquire("leader", 5.0)
        body = "busy %d\n" % os.getpid()
        try:
            for _ in range(int(float(query.get("seconds", ["60"])[0]) / 0.005) if leader else 0):
                if swerve_claim.draining():
                    seen = time.time_ns()
                    leader.release()
                    # The library may say so before the loop has run the
                    # handler of the SIGTERM that told it: wait for that.
                    for _ in range(40 if _noting else 0):
                        if _told:
                            break
                        await asyncio.sleep(0.005)
                    body = "drained %d %d %s\n" % (os.getpid(), seen, _told[0] if _told else "")
                    break
                await asyncio.sleep(0.005)
            else:
                if leader:
                    body = "never drained %d\n" % os.getpid()
        except asyncio.CancelledError:  # the server ended the request first
            body = "cancelled %d before draining() said 1\n" % os.getpid()
            raise
        finally:
            # Also to a file: a stopping server may close the connection first.
            if os.environ.get("SCL_DRAIN_OUT"):
                with open(os.environ["SCL_DRAIN_OUT"], "a") as out:
                    out.write(body)
    elif path == "/status":
        body = "free" if swerve_claim.claim("nightly-report").available() else "held"
    else:
        body = "%d\n" % os.getpid()
    return body


app = serving(_route)
