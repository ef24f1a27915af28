# SPDX-License-Identifier: MIT
"""Swerve claims for Python: a name one process at a time can hold across a
whole prefork server (gunicorn, uWSGI, ...).

The functions come from libswerveclaim_preload.so, found through
ctypes.CDLL(None) when the server runs under the shim:

    LD_PRELOAD=libswerveclaim_preload.so gunicorn app:app

    import swerve_claim

    claim = swerve_claim.claim("nightly-report").acquire()
    if claim:                       # None: someone else is on it
        run_report()
    # released when claim is released, collected, or the worker ends

    with swerve_claim.claim("import") as held:   # tries once; waits with
        if held:                                 # claim(..., timeout=5.0)
            import_feed()

    leader = swerve_claim.claim("leader").acquire(timeout=math.inf)
    while not swerve_claim.draining():           # a reload or a stop: let go,
        lead_one_round()                         # so a new worker takes it
    leader.release()

In a coroutine (asyncio, uvloop; an ASGI app under uvicorn or hypercorn),
acquire(timeout) would block the thread, and every other coroutine of the
loop with it, the holder's too if it is one of them.  acquire_async(timeout)
waits without blocking: it watches the descriptor swerve_claim_wait_fd(3)
gives with the running loop's add_reader, and the loop's own timer ends
the wait:

    async def report():
        claim = await swerve_claim.claim("import").acquire_async(timeout=5.0)
        if claim:                   # None: still held by another after 5 s
            await import_feed()
            claim.release()

    async with swerve_claim.claim("import", timeout=5.0) as held:
        if held:                    # released as the block ends
            await import_feed()

A cancelled wait (task.cancel(), asyncio.wait_for's timeout, the loop
shutting its tasks down) leaves nothing held and no descriptor open.

A failed call raises OSError (FileNotFoundError, PermissionError, ...)
whose message says why, as swerve_claim_why(3) says it (since
SWERVECLAIM_1.4): "[Errno 2] cannot open /srv/x for claim directories: No
such file or directory (ENOENT)".

Without the shim, claim() raises ShimNotLoaded: the caller decides what
running without claims means.
"""

import asyncio
import ctypes
import errno
import math
import os

__all__ = ["Claim", "claim", "draining", "ShimNotLoaded"]


class ShimNotLoaded(RuntimeError):
    """libswerveclaim_preload.so is not preloaded into this process."""


_SIGNATURES = {
    "swerve_claim_new": (ctypes.c_void_p, [ctypes.c_char_p]),
    "swerve_claim_name": (ctypes.c_char_p, [ctypes.c_void_p]),
    "swerve_claim_available": (ctypes.c_int, [ctypes.c_void_p]),
    "swerve_claim_acquire": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_double]),
    "swerve_claim_held": (ctypes.c_int, [ctypes.c_void_p]),
    "swerve_claim_release": (ctypes.c_int, [ctypes.c_void_p]),
    "swerve_claim_free": (None, [ctypes.c_void_p]),
}

_lib = None


def _shim():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(None, use_errno=True)  # dlopen(NULL): preloaded libraries included
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise ShimNotLoaded(
                    "libswerveclaim_preload.so is not loaded: run under "
                    "LD_PRELOAD=libswerveclaim_preload.so (or swerve-claim-preload)") from None
            fn.restype, fn.argtypes = restype, argtypes
        # Since SWERVECLAIM_1.1 and 1.2; an older library has none.
        token = getattr(lib, "swerve_claim_token", None)
        if token is not None:
            token.restype, token.argtypes = ctypes.c_uint64, [ctypes.c_void_p]
        drains = getattr(lib, "swerve_claim_draining", None)
        if drains is not None:
            drains.restype, drains.argtypes = ctypes.c_int, []
        # Since SWERVECLAIM_1.3.
        wait_fd = getattr(lib, "swerve_claim_wait_fd", None)
        if wait_fd is not None:
            wait_fd.restype, wait_fd.argtypes = ctypes.c_int, [ctypes.c_void_p]
        # Since SWERVECLAIM_1.4.
        why = getattr(lib, "swerve_claim_why", None)
        if why is not None:
            why.restype, why.argtypes = ctypes.c_char_p, []
        _lib = lib
    return _lib


def _os_error(code=None):
    """OSError for the call that just failed: errno's text, and the
    library's why (swerve_claim_why(3)) when it has one."""
    if code is None:
        code = ctypes.get_errno()
    text = os.strerror(code)
    why = _lib.swerve_claim_why() if hasattr(_lib, "swerve_claim_why") else None
    if why:
        why = why.decode(errors="backslashreplace")
        text = why if text in why else f"{why}: {text}"
    return OSError(code, text)


class Claim:
    """A handle on a name; it claims nothing until acquire().  TIMEOUT is
    what a `with` or `async with` block waits for it."""

    def __init__(self, name, timeout=0.0):
        lib = _shim()
        if isinstance(name, str):
            raw = name.encode()
        elif isinstance(name, (bytes, bytearray, memoryview)):
            raw = bytes(name)
        else:
            # bytes(42) would be 42 NUL bytes.
            raise TypeError(f"claim name must be str or bytes, not {type(name).__name__}")
        if not raw:
            raise ValueError("claim name must not be empty")
        if b"\0" in raw:
            # C would cut the name there, and "a\0b" would be "a\0c".
            raise ValueError("claim name contains a NUL byte")
        self._handle = lib.swerve_claim_new(raw)
        if not self._handle:
            raise _os_error()
        self.name = name
        self.timeout = timeout

    def available(self):
        """Whether nobody holds the name now; claims nothing."""
        r = _lib.swerve_claim_available(self._handle)
        if r < 0:
            raise _os_error()
        return bool(r)

    def acquire(self, timeout=0.0):
        """Takes the name, trying every 20 ms for up to TIMEOUT seconds (0:
        once; math.inf: for ever).  Returns self, or None when another
        holds it."""
        if _lib.swerve_claim_acquire(self._handle, float(timeout)):
            return self
        code = ctypes.get_errno()
        if code in (errno.EWOULDBLOCK, errno.ETIMEDOUT):
            return None
        raise _os_error(code)

    async def acquire_async(self, timeout=0.0):
        """acquire() for a coroutine: takes the name, waiting for up to
        TIMEOUT seconds (0: tries once; math.inf: for ever) without blocking
        the running event loop.  Returns self, or None when another holds
        it.  It waits on swerve_claim_wait_fd(3)'s descriptor with the
        loop's add_reader, woken when the holder lets go (a release in any
        process, its death, a forced release), and tries again; the loop's
        timer ends the wait.  Cancelled (or timed out), it stops watching
        the descriptor and releases, which ends the wait and closes it; a
        cancellation is raised again."""
        if not hasattr(_lib, "swerve_claim_wait_fd"):
            raise NotImplementedError("this libswerveclaim_preload.so has no swerve_claim_wait_fd")
        timeout = float(timeout)
        if not timeout >= 0.0:  # negative, or NaN: as acquire() says
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        done = expired = False
        try:
            while True:
                if _lib.swerve_claim_acquire(self._handle, 0.0):
                    done = True
                    return self
                code = ctypes.get_errno()
                if code == errno.ETIMEDOUT:  # the database's round trips: as acquire() says
                    return None
                if code != errno.EWOULDBLOCK:
                    raise _os_error(code)
                if expired or loop.time() >= deadline:
                    return None
                fd = _lib.swerve_claim_wait_fd(self._handle)
                if fd < 0:
                    raise _os_error()
                woken = loop.create_future()
                loop.add_reader(fd, _wake, woken, True)
                timer = None if math.isinf(deadline) else loop.call_at(deadline, _wake, woken, False)
                try:
                    expired = not await woken  # the timer's: one last try
                finally:
                    # Before any acquire, release or free: they may close it.
                    loop.remove_reader(fd)  # a closed loop's too: asyncio's and uvloop's say nothing
                    if timer is not None:
                        timer.cancel()
        finally:
            if not done:
                # Holds nothing: ends the wait, closes the descriptor.
                _lib.swerve_claim_release(self._handle)

    def held(self):
        """Whether this handle holds the name: acquired and not released."""
        return bool(_lib.swerve_claim_held(self._handle))

    def token(self):
        """A fencing token for this hold of the name, 0 when nothing is held:
        greater than every earlier hold's.  Send it with what the holder
        writes elsewhere, and have that system refuse a smaller one than the
        largest it has seen (swerve_claim_token(3))."""
        if not hasattr(_lib, "swerve_claim_token"):
            raise NotImplementedError("this libswerveclaim_preload.so has no swerve_claim_token")
        return _lib.swerve_claim_token(self._handle)

    def release(self):
        """Gives the name up; does nothing when nothing is held."""
        if _lib.swerve_claim_release(self._handle) != 0:
            raise _os_error()

    def __reduce_ex__(self, protocol):
        # copy, deepcopy and pickle: a copy would name the same C handle,
        # and whichever went first would free it under the other.
        raise TypeError("a claim handle cannot be copied: take another with claim(name)")

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle and _lib is not None:
            _lib.swerve_claim_free(handle)  # releases

    def __enter__(self):
        return self.acquire(self.timeout)

    def __exit__(self, *exc):
        self.release()
        return False

    async def __aenter__(self):
        return await self.acquire_async(self.timeout)

    async def __aexit__(self, *exc):
        self.release()
        return False

    def __repr__(self):
        return "Claim(%r, held=%s)" % (self.name, self.held())


def _wake(woken, readable):
    if not woken.done():
        woken.set_result(readable)


def draining():
    """Swerve::draining(): whether this worker is being drained, its server
    stopping it gracefully (a reload, a stop): True once its master told it
    (a drain signal), it closed the listeners it inherited, its master
    ended, or an operator ran `swerve-claim drain` on it
    (swerve_claim_draining(3)).  Draining releases nothing: a long-lived
    holder asks this now and then and releases its claim itself, so that
    the reload does not wait for it.  Cheap enough to ask every few
    milliseconds."""
    lib = _shim()
    if not hasattr(lib, "swerve_claim_draining"):
        raise NotImplementedError("this libswerveclaim_preload.so has no swerve_claim_draining")
    r = lib.swerve_claim_draining()
    if r < 0:
        raise _os_error()
    return bool(r)


def claim(name, timeout=0.0):
    """Swerve::claim($name): a handle on NAME.  With TIMEOUT, a `with`
    block (or an `async with` block, without blocking its loop) waits that
    long for it."""
    return Claim(name, timeout)
