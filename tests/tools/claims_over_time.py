# SPDX-License-Identifier: MIT
"""One holder doing more than holding, for tool.sh: what SINCE and the
waiters view must show.  Under the shim; writes "key value" lines to the
file named by its argument as it goes, "ready" last.  Every wait is
bounded; it ends by itself after 30 s (tool.sh kills it sooner, by pid).

  busy_holder PID   a child that holds 'busy'
  kept_at T         when this process had taken 'kept' and 'spare' (epoch
                    seconds)
  busy_waiter PID   a child waiting (up to 20 s) for 'busy'
  busy_loop_waiter PID  a child waiting for 'busy' as an event loop does,
                    on swerve_claim_wait_fd()'s descriptor
"""
import ctypes
import os
import sys
import time

import swerve_claim

out = open(sys.argv[1], "a", buffering=1)


def say(key, value):
    out.write(f"{key} {value}\n")


def child(then):
    """A child that runs THEN, keeps what it returned for 30 s, and ends."""
    pid = os.fork()
    if pid == 0:
        held = then()  # noqa: F841 (held, and so not let go, until the end)
        time.sleep(30)
        os._exit(0)
    return pid


def take(name, timeout=0.0):
    claim = swerve_claim.Claim(name)
    claim.acquire(timeout=timeout)
    return claim


say("busy_holder", child(lambda: take(b"busy")))
deadline = time.monotonic() + 10
while swerve_claim.Claim(b"busy").available() and time.monotonic() < deadline:
    time.sleep(0.02)
kept, spare = swerve_claim.Claim(b"kept"), swerve_claim.Claim(b"spare")
assert kept.acquire() and spare.acquire()
say("kept_at", time.time())
# The same process, more than a second later: what once re-dated 'kept'.
time.sleep(1.5)
assert not swerve_claim.Claim(b"busy").acquire()
other = swerve_claim.Claim(b"other")
assert other.acquire()
other.release()
say("busy_waiter", child(lambda: take(b"busy", timeout=20)))


def wait_in_a_loop(name):
    lib = ctypes.CDLL(None, use_errno=True)
    lib.swerve_claim_new.restype = ctypes.c_void_p
    lib.swerve_claim_acquire.restype = ctypes.c_void_p
    lib.swerve_claim_acquire.argtypes = [ctypes.c_void_p, ctypes.c_double]
    lib.swerve_claim_wait_fd.argtypes = [ctypes.c_void_p]
    claim = lib.swerve_claim_new(name)
    assert not lib.swerve_claim_acquire(claim, 0.0)
    assert lib.swerve_claim_wait_fd(claim) >= 0  # then its loop would sleep on it
    return claim


say("busy_loop_waiter", child(lambda: wait_in_a_loop(b"busy")))
time.sleep(0.3)
say("ready", 1)
time.sleep(30)
