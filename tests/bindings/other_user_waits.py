# SPDX-License-Identifier: MIT
"""A root master whose worker drops to nobody and execs, then waits for a
claim in a loop (swerve_claim_wait_fd) while the master holds it: the
master's release must wake it.  The exec'd worker cannot map the claim
directory's wake file (root's, 0600), so it cannot count itself in as a
loop waiter; the release must look for its FIFO all the same (the shim
notes, as it lets the worker's user in, that such waiters may exist).
Run as root under the shim; prints "woke after N ms" and exits 0 when the
worker woke within 2 s of the release and took the name.
usage: other_user_waits.py   (the worker: other_user_waits.py worker R W)"""
import ctypes
import os
import select
import sys
import time

lib = ctypes.CDLL(None, use_errno=True)
lib.swerve_claim_new.restype = ctypes.c_void_p
lib.swerve_claim_new.argtypes = [ctypes.c_char_p]
lib.swerve_claim_acquire.restype = ctypes.c_void_p
lib.swerve_claim_acquire.argtypes = [ctypes.c_void_p, ctypes.c_double]
lib.swerve_claim_wait_fd.argtypes = [ctypes.c_void_p]
lib.swerve_claim_release.argtypes = [ctypes.c_void_p]


def worker(go, waiting):
    os.read(go, 1)  # the master holds the name now
    claim = lib.swerve_claim_new(b"report")
    assert not lib.swerve_claim_acquire(claim, 0.0)
    fd = lib.swerve_claim_wait_fd(claim)
    assert fd >= 0, os.strerror(ctypes.get_errno())
    os.write(waiting, b"x")
    started = time.monotonic()
    woke = select.select([fd], [], [], 5.0)[0]
    waited = (time.monotonic() - started) * 1e3
    took = bool(lib.swerve_claim_acquire(claim, 0.0))
    print("woke after %.0f ms" % waited if woke and took else "not woken in %.0f ms (took: %s)" % (waited, took))
    sys.exit(0 if woke and took and waited < 2300 else 1)


def master():
    go_r, go_w = os.pipe()
    waiting_r, waiting_w = os.pipe()
    os.set_inheritable(go_r, True)
    os.set_inheritable(waiting_w, True)
    pid = os.fork()  # before any claim, as a server forks its workers
    if pid == 0:
        os.setgid(65534)
        os.setuid(65534)  # for good: the shim lets nobody in first
        os.execv("/usr/bin/python3", ["/usr/bin/python3", __file__, "worker", str(go_r), str(waiting_w)])
    held = lib.swerve_claim_new(b"report")
    assert lib.swerve_claim_acquire(held, 0.0)
    os.write(go_w, b"x")
    os.read(waiting_r, 1)
    time.sleep(0.3)
    lib.swerve_claim_release(held)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


if len(sys.argv) > 1:
    worker(int(sys.argv[2]), int(sys.argv[3]))
else:
    master()
