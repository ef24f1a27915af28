# SPDX-License-Identifier: MIT
"""A WSGI app for tests/real-servers/gunicorn.sh and uwsgi.sh: the seed's
nightly-report pattern through the Python binding (swerve_claim); /hold
and /take, a leader that lets go once its worker is drained (lib.sh's
drain_check)."""
import os
import signal
import sys
import time
from urllib.parse import parse_qs

import swerve_claim

# When gunicorn's master told this worker to stop (its SIGTERM reached the
# worker's handler), for /hold to say: gunicorn's reload itself may take
# tens of milliseconds before it does.  Chained to gunicorn's own handler,
# under gunicorn only (uWSGI's are C, and stay as they are).
_told = []
if "gunicorn" in sys.modules:
    _gunicorn_term = signal.getsignal(signal.SIGTERM)

    def _note_term(signum, frame):
        _told.append(time.time_ns())
        if callable(_gunicorn_term):
            _gunicorn_term(signum, frame)

    signal.signal(signal.SIGTERM, _note_term)


def app(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    if path == "/report":  # ?seconds=N: how long the report takes (1.5)
        seconds = float(parse_qs(environ.get("QUERY_STRING", "")).get("seconds", ["1.5"])[0])
        claim = swerve_claim.claim("nightly-report").acquire()
        if claim:
            time.sleep(seconds)  # the report, while holding the claim
            body = "worker %d runs the report\n" % os.getpid()
        else:
            body = "worker %d: someone else is on it\n" % os.getpid()
        del claim  # released when it goes
    elif path == "/hold":  # the leader: lets go once its worker drains
        leader = swerve_claim.claim("leader").acquire(timeout=5.0)
        body = "busy %d\n" % os.getpid()
        for _ in range(12000 if leader else 0):  # 60 s at most
            if swerve_claim.draining():
                seen = time.time_ns()
                leader.release()
                body = "drained %d %d %s\n" % (os.getpid(), seen, _told[0] if _told else "")
                break
            time.sleep(0.005)
    elif path == "/take":
        taken = swerve_claim.claim("leader").acquire(timeout=5.0)
        body = ("took %d\n" if taken else "busy %d\n") % os.getpid()
        del taken
    elif path == "/status":
        body = "free" if swerve_claim.claim("nightly-report").available() else "held"
    else:
        body = "%d\n" % os.getpid()
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]
