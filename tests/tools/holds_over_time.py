# SPDX-License-Identifier: MIT
"""A server whose workers end their holds every way there is, for
tool.sh's checks of history: this process, under the shim, is their
master, and reaps them as servers do (os.waitpid: the shim's hook).
Writes "key value" lines to the file named by its argument as it goes,
"ready" last.  Every wait is bounded; it ends by itself after 30 s
(tool.sh kills it sooner, by pid).

  released PID    took 'h-released' and released it, then exited
  exited PID      exited holding 'h-exited'
  execd PID       exec'd /bin/true holding 'h-execd'
  killed PID      holds 'h-killed' until tool.sh SIGKILLs it
  forced PID      holds 'h-forced' until tool.sh releases it by force
  many TOKEN      one line per hold of 'h-many' (20 of them, one worker),
                  its fencing token
  reaped PID      once this master reaped that worker
"""
import os
import sys
import time

import swerve_claim

out = open(sys.argv[1], "a", buffering=1)


def say(key, value):
    out.write(f"{key} {value}\n")


def worker(key, body):
    """A worker that runs BODY and exits, unless BODY left already."""
    pid = os.fork()
    if pid == 0:
        body()
        os._exit(0)
    say(key, pid)
    return pid


def take(name):
    claim = swerve_claim.Claim(name)
    assert claim.acquire()
    return claim


def released():
    take(b"h-released").release()


def exited():
    claim = take(b"h-exited")  # noqa: F841 (held, and so not let go, as it exits)
    os._exit(0)


def execd():
    claim = take(b"h-execd")  # noqa: F841
    os.execv("/bin/true", ["true"])


def held():
    claim = take(b"h-killed" if os.environ.get("HOLD") == "killed" else b"h-forced")  # noqa: F841
    time.sleep(30)


def many():
    for _ in range(20):
        claim = take(b"h-many")
        say("many", claim.token())
        claim.release()


for key, body in (("released", released), ("exited", exited), ("execd", execd), ("many", many)):
    os.waitpid(worker(key if key != "many" else "many_worker", body), 0)
os.environ["HOLD"] = "killed"
worker("killed", held)
os.environ["HOLD"] = "forced"
worker("forced", held)
say("ready", 1)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid > 0:
        say("reaped", pid)
    else:
        time.sleep(0.05)
time.sleep(max(0, deadline - time.monotonic()))
