"""A WSGI app for tests/real-servers/gunicorn.sh: the seed's nightly-report
pattern through the Python binding (swerve_claim)."""
import os
import time
from urllib.parse import parse_qs

import swerve_claim


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
    elif path == "/status":
        body = "free" if swerve_claim.claim("nightly-report").available() else "held"
    else:
        body = "%d\n" % os.getpid()
    data = body.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(data)))])
    return [data]
