# SPDX-License-Identifier: MIT
"""The Swerve claim pages' examples over the Python binding, printing what
the seed prints.  EXAMPLE alone: the guide's coroutines become worker
processes; LOOP-EXAMPLE (LOOP: asyncio or uvloop): they are coroutines in
this one process, as the seed writes them (phasync::go: a task,
phasync::sleep: asyncio.sleep, acquire(timeout: T): await
acquire_async(T), a claim that goes out of scope: del), and no coroutine
may stall the loop 100 ms.
usage: seed_examples.py [LOOP-]EXAMPLE"""
import asyncio
import math
import os
import signal
import subprocess
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


# ---- the coroutine forms: one process, one event loop (LOOP)

def say(*args):
    print(*args, flush=True)  # before a forked holder's lines, or after


def complain(*args):
    print("seed_examples.py:", *args, file=sys.stderr, flush=True)


STALL = 0.1  # the longest a coroutine may keep the loop from the others


def run_coroutines(main, loop_name):
    """Runs the coroutine MAIN in a new LOOP_NAME loop beside a ticker that
    sleeps 10 ms at a time: a gap of more than STALL between its ticks is a
    coroutine that blocked the loop (a blocking acquire(5.0) blocks it 5 s)."""
    if loop_name == "uvloop":
        import uvloop  # Debian's python3-uvloop
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    elif loop_name != "asyncio":
        raise SystemExit("seed_examples.py: LOOP is asyncio or uvloop, not %r" % loop_name)

    async def watched():
        loop = asyncio.get_running_loop()
        kind = type(loop).__module__.split(".")[0]
        if kind != loop_name:
            complain("the loop is %s's, not %s's" % (kind, loop_name))
        gaps = []

        async def ticker():
            last = loop.time()
            while True:
                await asyncio.sleep(0.01)
                now = loop.time()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        try:
            await main
        finally:
            tick.cancel()
        if max(gaps, default=0) > STALL + 0.01:
            complain("the loop stalled %.0f ms" % (1000 * (max(gaps) - 0.01)))

    asyncio.run(watched())


async def guide_claims_coroutines():
    async def go(who):
        if c := await claim("nightly-report").acquire_async():
            say(f"{who} runs the report")
            await asyncio.sleep(0.1)
        else:
            say(f"{who}: someone else is on it")
        del c  # $claim is released when it goes out of scope

    await asyncio.gather(*[asyncio.create_task(go(who)) for who in ("a", "b", "c")])
    say("free again" if claim("nightly-report").available() else "still held")


async def guide_waiting_coroutines():
    async def first():
        c = await claim("import").acquire_async()
        say("first: importing")
        await asyncio.sleep(0.2)
        say("first: done")
        del c  # released as $claim goes

    async def second():
        say("second: waiting")
        if c := await claim("import").acquire_async(5.0):  # woken as the holder lets go
            say("second: importing")
        del c

    await asyncio.gather(asyncio.create_task(first()), asyncio.create_task(second()))


async def guide_releasing_coroutines():
    c = claim("leader")
    await c.acquire_async()
    say("held:", str(c.held()).lower())
    c.release()  # give it up while the handle lives on
    say("held:", str(c.held()).lower())
    say("available:", str(c.available()).lower())
    c.release()  # releasing what is not held does nothing


async def context_manager_coroutines():
    async with claim("cron") as held:
        say("inside: held" if held else "inside: not held")
        async with claim("cron", timeout=0.1) as again:  # waits 0.1 s for it
            say("nested: " + ("held" if again else "someone else is on it"))
    say("after:", "free" if claim("cron").available() else "held")


def holder_process(then):
    """A child that takes "import", says so, and does THEN(); its pid, once
    it holds it."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        first = claim("import").acquire()
        say("first: importing" if first else "first: not held")
        os.write(ready_w, b"x")
        then(first)
        os._exit(0)
    os.read(ready_r, 1)
    return pid


def waiting_other_process(loop_name):
    """Waiting for it, the holder another process: its release (it lives
    on) wakes the waiting coroutine, within 100 ms."""
    go_r, go_w = os.pipe()
    released_r, released_w = os.pipe()

    def first(c):
        os.read(go_r, 1)  # once the second waits
        time.sleep(0.2)
        say("first: done")
        os.write(released_w, b"%d" % time.monotonic_ns())
        c.release()
        os.read(go_r, 1)  # until the second is done: its release woke it, not its end

    pid = holder_process(first)

    async def second():
        say("second: waiting")
        os.write(go_w, b"x")
        if c := await claim("import").acquire_async(5.0):
            took = time.monotonic_ns()
            say("second: importing")
            woke = (took - int(os.read(released_r, 32))) / 1e6
            if woke > 100:
                complain("took the name %.0f ms after the release" % woke)
        del c

    run_coroutines(second(), loop_name)
    os.write(go_w, b"x")
    reap(pid)


def waiting_holder_killed(loop_name):
    """Waiting for it, the holder another process that is SIGKILLed: its
    death wakes the waiting coroutine within 1 s, with nobody to reap it
    (this process reaps it only after)."""
    pid = holder_process(lambda c: time.sleep(30))

    async def second():
        loop = asyncio.get_running_loop()
        say("second: waiting")
        waiter = asyncio.create_task(claim("import").acquire_async(5.0))
        await asyncio.sleep(0.2)
        say("first: killed")
        os.kill(pid, signal.SIGKILL)
        killed = loop.time()
        if c := await waiter:
            took = loop.time()
            with open("/proc/%d/stat" % pid) as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
            say("second: importing")
            if took - killed > 1.0:
                complain("took the name %.0f ms after the SIGKILL" % (1000 * (took - killed)))
            if state != "Z":
                complain("the holder is in state %s, not a zombie nobody reaped" % state)
        del c

    try:
        run_coroutines(second(), loop_name)
    finally:
        os.kill(pid, signal.SIGKILL)
        reap(pid)


def waiting_forced_release(loop_name):
    """Waiting for it, the holder another process that lives on: an
    operator's swerve-claim release --force wakes the waiting coroutine
    within 1 s of the tool's end.  The operator is a child forked before
    the loop runs, which starts the tool when told: spawning it from the
    loop's process would stall the loop in that process's fork."""
    go_r, go_w = os.pipe()
    pid = holder_process(lambda c: os.read(go_r, 1))
    order_r, order_w = os.pipe()
    done_r, done_w = os.pipe()
    operator = os.fork()
    if operator == 0:
        os.read(order_r, 1)
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        done = subprocess.run([os.environ["SCL_TOOL"], "release", "--force", "import"],
                              env=env, capture_output=True, text=True, timeout=20)
        os.write(done_w, ("%d %d %s" % (done.returncode, time.monotonic_ns(), done.stderr)).encode()[:4000])
        os._exit(0)
    took = []

    async def second():
        say("second: waiting")
        waiter = asyncio.create_task(claim("import").acquire_async(5.0))
        await asyncio.sleep(0.2)
        say("operator: swerve-claim release --force import")
        os.write(order_w, b"x")
        if c := await waiter:
            took.append(time.monotonic_ns())
            say("second: importing")
        del c

    try:
        run_coroutines(second(), loop_name)
    finally:
        os.write(order_w, b"x")  # (not told yet, if the loop failed)
        reap(operator)
        os.write(go_w, b"x")
        reap(pid)
    status, released, stderr = os.read(done_r, 4096).decode().split(" ", 2)
    if status != "0":
        complain("release --force: status %s: %s" % (status, stderr))
    elif took and (took[0] - int(released)) / 1e9 > 1.0:
        complain("took the name %.0f ms after release --force" % ((took[0] - int(released)) / 1e6))


def coroutine_cancel(loop_name):
    """A waiter that gives up, however: cancelled, timed out by
    asyncio.wait_for, by its own timeout, or by the loop's shutting down
    (asyncio.run cancels what is left).  It holds nothing after, has
    closed every descriptor it waited with, and the holder holds on."""
    holder = claim("import").acquire()
    waiter = claim("import")
    waiter.available()  # what the handle keeps open, opened before counting

    def fds():
        return len(os.listdir("/proc/self/fd"))

    def after(what, result, before):
        say("%s: %s, %s, %s, %s" % (
            what, result, "holds nothing" if not waiter.held() else "HOLDS",
            "descriptors as before" if fds() == before else "%+d descriptors" % (fds() - before),
            "the holder holds on" if holder.held() and not claim("import").available() else "the holder LOST it"))

    async def ways():
        loop = asyncio.get_running_loop()
        before = fds()
        task = asyncio.create_task(waiter.acquire_async(math.inf))
        await asyncio.sleep(0.1)
        if fds() <= before:
            complain("the waiter waits with no descriptor of its own")
        task.cancel()
        try:
            result = await task
        except asyncio.CancelledError:
            result = "CancelledError"
        after("cancelled", result, before)

        try:
            result = await asyncio.wait_for(waiter.acquire_async(math.inf), 0.1)
        except asyncio.TimeoutError:
            result = "TimeoutError"
        after("wait_for", result, before)

        start = loop.time()
        result = await waiter.acquire_async(0.2)
        waited = loop.time() - start  # uvloop's clock: milliseconds, as the iteration began
        after("timeout", "%s after %s" % (result, "0.2 s" if 0.19 <= waited < 0.5 else "%.3f s" % waited), before)

    run_coroutines(ways(), loop_name)

    async def left_waiting():
        asyncio.create_task(waiter.acquire_async(math.inf))
        await asyncio.sleep(0.1)  # then returns: asyncio.run cancels the waiter

    before = fds()
    run_coroutines(left_waiting(), loop_name)
    after("loop shut down", "cancelled", before)
    holder.release()


if __name__ == "__main__":
    try:
        loop, _, example = sys.argv[1].partition("-")
        if loop in ("asyncio", "uvloop"):  # the coroutine forms, in LOOP
            coroutines = {"guide-claims": guide_claims_coroutines, "guide-waiting": guide_waiting_coroutines,
                          "guide-releasing": guide_releasing_coroutines,
                          "context-manager": context_manager_coroutines}
            if example in coroutines:
                run_coroutines(coroutines[example](), loop)
            else:
                {"waiting-other-process": waiting_other_process, "waiting-holder-killed": waiting_holder_killed,
                 "waiting-forced-release": waiting_forced_release,
                 "coroutine-cancel": coroutine_cancel}[example](loop)
        else:
            {"guide-claims": guide_claims, "guide-waiting": guide_waiting, "guide-releasing": guide_releasing,
             "class-1": class_1, "class-2": class_2, "class-3": class_3,
             "context-manager": context_manager, "fencing-token": fencing_token, "draining": draining}[sys.argv[1]]()
    except swerve_claim.ShimNotLoaded as e:
        print(f"seed_examples.py: {e}", file=sys.stderr)
        sys.exit(2)
