"""The Swerve claim pages' examples over the Python binding, printing what
the seed prints (the guide's coroutines become worker processes).
usage: seed_examples.py EXAMPLE"""
import os
import signal
import sys
import time

import swerve_claim
from swerve_claim import claim


def reap(pid):
    os.waitpid(pid, 0)


def guide_claims():
    ready_r, ready_w = os.pipe()
    finish_r, finish_w = os.pipe()

    def racer(who, holder):
        c = claim("nightly-report").acquire()
        if c:
            print(f"{who} runs the report", flush=True)
            os.write(ready_w, b"x")
            os.read(finish_r, 1)  # phasync::sleep(0.1)
        else:
            print(f"{who}: someone else is on it", flush=True)
        os._exit(0)  # c is released as the worker ends

    a = os.fork()
    if a == 0:
        racer("a", True)
    os.read(ready_r, 1)
    for who in ("b", "c"):
        pid = os.fork()
        if pid == 0:
            racer(who, False)
        reap(pid)
    os.write(finish_w, b"x")
    reap(a)
    print("free again" if claim("nightly-report").available() else "still held")


def guide_waiting():
    first = claim("import").acquire()
    print("first: importing", flush=True)
    pid = os.fork()
    if pid == 0:
        print("second: waiting", flush=True)
        if claim("import").acquire(timeout=5.0):  # tries every 20 ms
            print("second: importing", flush=True)
        os._exit(0)
    time.sleep(0.2)
    print("first: done", flush=True)
    first.release()
    reap(pid)


def guide_releasing():
    c = claim("leader")
    c.acquire()
    print("held:", str(c.held()).lower())
    c.release()  # give it up while the handle lives on
    print("held:", str(c.held()).lower())
    print("available:", str(c.available()).lower())
    c.release()  # releasing what is not held does nothing


def class_1():
    mine, yours = claim("import"), claim("import")
    dump = lambda v: "bool(true)" if v else "bool(false)"
    print(dump(mine.available()))
    print(dump(mine.acquire() is mine))
    print("NULL" if yours.acquire() is None else "handle")
    print(dump(mine.held()))
    print(dump(yours.held()))
    mine.release()
    print(dump(yours.acquire() is yours))


def class_2():
    def job():
        c = claim("nightly-report").acquire()
        if c:
            print("report ran")
    job()  # released when c goes out of scope
    print("released:", str(claim("nightly-report").available()).lower())


def class_3():
    c = claim("import")
    if c.acquire(timeout=5.0):  # tries every 20 ms for up to 5 s
        print("import_feed ran")
        c.release()
    print("held:", str(c.held()).lower())


def context_manager():
    with claim("cron") as held:
        print("inside: held" if held else "inside: not held")
        with claim("cron") as again:
            print("nested: " + ("held" if again else "someone else is on it"))
    print("after:", "free" if claim("cron").available() else "held")


def fencing_token():
    c = claim("report")
    print("not held:", c.token())
    c.acquire()
    first = c.token()
    print("held:", "positive" if first > 0 else first)
    print("same while held:", str(c.token() == first).lower())
    c.release()
    print("after release:", c.token())
    other = claim("report")
    other.acquire()
    print("next hold greater:", str(other.token() > first).lower())


def draining():
    """A leader that lets go once its master drains it (the guide's
    Swerve::draining()): the master's graceful SIGTERM, as gunicorn's."""
    print("master: draining:", str(swerve_claim.draining()).lower())
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, lambda *_: None)  # the worker's own graceful handler
        leader = claim("leader").acquire()
        print("worker: leads, draining:", str(swerve_claim.draining()).lower(), flush=True)
        os.write(ready_w, b"x")
        for _ in range(1000):  # 5 s at most
            if swerve_claim.draining():
                break
            time.sleep(0.005)
        print("worker: drained, lets go" if swerve_claim.draining() else "worker: never drained", flush=True)
        leader.release()
        os._exit(0)
    os.read(ready_r, 1)
    os.kill(pid, signal.SIGTERM)
    print("master: leads" if claim("leader").acquire(timeout=5.0) else "master: still held")
    reap(pid)


if __name__ == "__main__":
    try:
        {"guide-claims": guide_claims, "guide-waiting": guide_waiting, "guide-releasing": guide_releasing,
         "class-1": class_1, "class-2": class_2, "class-3": class_3,
         "context-manager": context_manager, "fencing-token": fencing_token, "draining": draining}[sys.argv[1]]()
    except swerve_claim.ShimNotLoaded as e:
        print(f"seed_examples.py: {e}", file=sys.stderr)
        sys.exit(2)
