#!/bin/bash
# SPDX-License-Identifier: MIT
# The Python (ctypes) and PHP (FFI) bindings under the shim: every example
# of the Swerve claim pages prints the seed's output (draining: a leader
# that lets go once its master's SIGTERM drains it; the guide's PHP
# coroutines also as Fibers of one process), nothing goes to
# standard error, no claim directory is left; in Python, the guide's three
# examples also as coroutines in one process as the seed writes them, in
# asyncio's loop and uvloop's (acquire_async(): no coroutine stalls the
# loop 100 ms), a waiting coroutine woken by a holder in another process
# that releases, is SIGKILLed (reaped only after) or loses the name to
# release --force, and one that gives up leaving nothing behind (#39); a
# Python master that spawns its workers (multiprocessing, subprocess) runs
# its report once; without the shim, each says so and exits 2.  python3
# (with uvloop) and php (with FFI) are needed: scripts/
# install-deps.sh installs them, and their absence is a failure here.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
src=${SCL_SRCDIR:?run through make check}
lib=${SCL_PRELOAD:?run through make check}
tool=${SCL_HELPERS:?run through make check}/../swerve-claim
preload=$lib
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$lib
export ASAN_OPTIONS=detect_leaks=0

run_example() { # LANGUAGE EXAMPLE [EXPECTED: EXAMPLE's own by default]
    local base out err status expected=${3:-$2}
    base=$(mktemp -d)
    out=$(mktemp) err=$(mktemp)
    case $1 in
    # (LD_PRELOAD on the interpreter, not on timeout, which would be the
    # master of what it runs)
    python) timeout 60 env SWERVE_TMPDIR="$base" LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SCL_TOOL="$tool" \
                /usr/bin/python3 "$src/tests/bindings/seed_examples.py" "$2" >"$out" 2>"$err" ;;
    php) timeout 60 env SWERVE_TMPDIR="$base" LD_PRELOAD="$preload" \
             php -n -d extension=ffi -d ffi.enable=1 \
             "$src/tests/bindings/seed_examples.php" "$2" >"$out" 2>"$err" ;;
    esac
    status=$?
    if [ $status -ne 0 ]; then
        fail "$1 $2: status $status: $(cat "$err")"
    elif ! diff -u "$src/tests/bindings/expected/$expected.txt" "$out" >&2; then
        fail "$1 $2: not the seed's output"
    elif [ -s "$err" ]; then
        fail "$1 $2 wrote to stderr: $(cat "$err")"
    elif [ -n "$(ls -A "$base")" ]; then
        fail "$1 $2 left $(ls -A "$base")"
    else
        pass
    fi
    rm -rf "$base" "$out" "$err"
}

php=1
command -v php >/dev/null || { fail "php is not installed (scripts/install-deps.sh installs php8.2-cli)"; php=0; }
if [ -n "${SCL_ASAN_RUNTIME:-}" ]; then
    # PHP dlopens its FFI extension with RTLD_DEEPBIND, which the ASan
    # runtime refuses (google/sanitizers#611): PHP runs in the plain build.
    echo "note: the PHP examples run in the plain build only: ASan refuses PHP's RTLD_DEEPBIND dlopen"
    php=0
fi
for example in guide-claims guide-waiting guide-releasing class-1 class-2 class-3 fencing-token draining; do
    run_example python "$example"
    [ $php -eq 1 ] && run_example php "$example"
done
run_example python context-manager
# The guide's examples as written, Fibers of one process (issue 39): under
# phasync's API, Revolt's and Swerve::setWaiter(), each on the tests' own
# loop (fiber_loop.php); the first a process of its own that releases;
# a waiter that gives up, and one cancelled, while the loop runs on.
if [ $php -eq 1 ]; then
    for example in guide-claims guide-waiting guide-releasing; do
        run_example php "fibers-$example" "$example"
    done
    for how in revolt hook process; do
        run_example php "fibers-guide-waiting-$how" guide-waiting
    done
    run_example php fibers-timeout
    run_example php fibers-cancel
fi

# The coroutine forms (#39): one process, one loop (LOOP-EXAMPLE: asyncio's
# or uvloop's), acquire_async().
for loop in asyncio uvloop; do
    for example in guide-claims guide-waiting guide-releasing context-manager; do
        run_example python "$loop-$example" "$example"
    done
    run_example python "$loop-waiting-other-process" guide-waiting
    for example in waiting-holder-killed waiting-forced-release coroutine-cancel; do
        run_example python "$loop-$example" "$example"
    done
done

# A Python master that never forks (issue 38): its workers, started by
# multiprocessing's spawn and forkserver contexts or by subprocess (vfork
# and execve in CPython's _posixsubprocess), share one claim directory and
# take "report" once.  The base is empty once the master has ended and,
# with forkserver, its fork server too (it ends as its master's pipe
# closes, a moment later: at most 5 s).
# A worker that dropped root and exec'd waits in a loop while its root
# master holds the name: the master's release wakes it, though the worker
# cannot count itself in the master's wake file (#39).
if [ "$(id -u)" -eq 0 ]; then
    other=$(mktemp -d)
    chmod 755 "$other"
    out=$(timeout 30 env SWERVE_TMPDIR="$other" LD_PRELOAD="$preload" /usr/bin/python3 \
        "$src/tests/bindings/other_user_waits.py" 2>&1)
    status=$?
    if [ $status -eq 0 ]; then pass; else fail "an exec'd worker of another user waiting in a loop: status $status: $out"; fi
    echo "other user's loop waiter: $out"
    rm -rf "$other"
else
    echo "note: not root: the other user's loop waiter is not tried"
fi

for how in spawn forkserver subprocess; do
    spawned=$(mktemp -d) out=$(mktemp) err=$(mktemp)
    timeout 90 env SWERVE_TMPDIR="$spawned" LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" \
        /usr/bin/python3 "$src/tests/bindings/spawn_master.py" "$how" >"$out" 2>"$err"
    status=$?
    for _ in $(seq 50); do
        [ -z "$(ls -A "$spawned")" ] && break
        sleep 0.1
    done
    if [ $status -ne 0 ] || [ "$(cat "$out")" != "ok $how" ] || [ -s "$err" ]; then
        fail "python master starting its workers by $how: status $status: $(cat "$out" "$err")"
    elif [ -n "$(ls -A "$spawned")" ]; then
        fail "python master starting its workers by $how left $(ls -A "$spawned")"
    else
        pass
    fi
    rm -rf "$spawned" "$out" "$err"
done

# Without the shim: a clear error, exit status 2.
if out=$(PYTHONPATH=$src/bindings/python /usr/bin/python3 "$src/tests/bindings/seed_examples.py" class-1 2>&1) ||
    ! grep -q "libswerveclaim_preload.so is not loaded" <<<"$out"; then
    fail "python without the shim: $out"
else
    pass
fi
if [ $php -eq 1 ]; then
    if out=$(php -n -d extension=ffi -d ffi.enable=1 "$src/tests/bindings/seed_examples.php" class-1 2>&1) ||
        ! grep -q "libswerveclaim_preload.so is not loaded" <<<"$out"; then
        fail "php without the shim: $out"
    else
        pass
    fi
fi
# Names with a NUL byte are refused with the language's own error, not cut
# short (b"a\0b" and b"a\0c" would be one name), and PHP tells FFI switched
# off from the shim missing (#12).
expect() { # DESCRIPTION WANTED-OUTPUT COMMAND...
    local what=$1 want=$2 out
    shift 2
    out=$("$@" 2>&1)
    if [ "$out" = "$want" ]; then pass; else fail "$what: got '$out'"; fi
}
expect "python: a name with a NUL byte is a ValueError" ValueError \
    env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR=/tmp /usr/bin/python3 -c '
import swerve_claim
try:
    swerve_claim.claim(b"a\0b")
except ValueError:
    print("ValueError")'
# A name that is not one says what it is (#41: claim(42) said "contains
# a NUL byte", bytes(42) being 42 of them; an empty one a bare EINVAL).
expect "python: claim(42) is a TypeError that says why" \
    "TypeError: claim name must be str or bytes, not int" \
    env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR=/tmp /usr/bin/python3 -c '
import swerve_claim
try:
    swerve_claim.claim(42)
except TypeError as e:
    print("TypeError:", e)'
expect "python: an empty name is a ValueError that says why" \
    "ValueError: claim name must not be empty" \
    env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR=/tmp /usr/bin/python3 -c '
import swerve_claim
try:
    swerve_claim.claim("")
except ValueError as e:
    print("ValueError:", e)'
# Python lines that put the binding over an older library, one without
# FUNCTION (a later version node's).
older_library() { # FUNCTION
    printf '%s\n' 'class Older:' '    def __init__(self, lib): self.lib = lib' '    def __getattr__(self, name):' \
        "        if name == \"$1\": raise AttributeError(name)" '        return getattr(self.lib, name)' \
        'swerve_claim._lib = Older(swerve_claim._shim())'
}
# An error names what is wrong (#41: a base that does not exist was a bare
# "[Errno 2] No such file or directory"): swerve_claim_why(3) in its text,
# the exception's class as errno makes it.
missing=/nonexistent/scl-why-base
# Python's error for an acquire below the missing base, as DESCRIPTION
# expects it (EXPECTED), PRELUDE run after the import.
python_missing_base() { # DESCRIPTION EXPECTED [PRELUDE]
    expect "$1" "$2" env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR="$missing" \
        /usr/bin/python3 -c '
import swerve_claim
'"${3:-}"'
try:
    swerve_claim.claim("report").acquire()
except OSError as e:
    print(type(e).__name__ + ":", e)'
}
python_missing_base "python: a missing base's error names it" \
    "FileNotFoundError: [Errno 2] cannot open $missing for claim directories: No such file or directory (ENOENT)"
# A library without swerve_claim_why (before SWERVECLAIM_1.4): errno's text, as before.
python_missing_base "python: over a library without swerve_claim_why, errno's text" \
    "FileNotFoundError: [Errno 2] No such file or directory" "$(older_library swerve_claim_why)"
# acquire_async() needs swerve_claim_wait_fd (SWERVECLAIM_1.3): over an
# older library (here one that hides it) it says so, as token() does.
expect "python: acquire_async() over a library without wait_fd is a NotImplementedError" \
    "NotImplementedError: this libswerveclaim_preload.so has no swerve_claim_wait_fd" \
    env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR=/tmp /usr/bin/python3 -c '
import asyncio, swerve_claim
'"$(older_library swerve_claim_wait_fd)"'
try:
    asyncio.run(swerve_claim.claim("older").acquire_async(1.0))
except NotImplementedError as e:
    print("NotImplementedError:", e)'
# A copy of a handle would name the same C handle: whichever went first
# would free it, and release the claim, under the other (Python crashed,
# SIGSEGV, once the copy was collected; PHP's clone did the same).
copies=$(mktemp -d)
expect "python: a handle cannot be copied, and the original holds on" "TypeError TypeError held" \
    env LD_PRELOAD="$preload" PYTHONPATH="$src/bindings/python" SWERVE_TMPDIR="$copies" /usr/bin/python3 -c '
import copy, gc, swerve_claim
c = swerve_claim.claim(b"copied")
c.acquire()
for f in (copy.copy, copy.deepcopy):
    try:
        f(c)
        print("copied", end=" ")
    except TypeError:
        print("TypeError", end=" ")
gc.collect()
print("held" if c.held() and not swerve_claim.claim(b"copied").available() else "lost")'
if [ $php -eq 1 ]; then
    php_try() { # INI-OPTION... -- CODE: prints the class of what it throws
        local opts=()
        while [ "$1" != -- ]; do opts+=("$1"); shift; done
        env LD_PRELOAD="$preload" SWERVE_TMPDIR="$copies" php -n "${opts[@]}" -r "require '$src/bindings/php/Swerve.php';
            try { $2; echo 'nothing'; } catch (Throwable \$e) { echo get_class(\$e); }"
    }
    expect "php: a name with a NUL byte is a ValueError" ValueError \
        php_try -d extension=ffi -d ffi.enable=1 -- 'new Swerve\Claim("a\0b")'
    expect "php: ffi.enable=0 is FfiUnavailable, not ShimNotLoaded" 'Swerve\FfiUnavailable' \
        php_try -d extension=ffi -d ffi.enable=0 -- 'Swerve\Swerve::claim("x")'
    expect "php: no FFI extension is FfiUnavailable" 'Swerve\FfiUnavailable' php_try -- 'Swerve\Swerve::claim("x")'
    expect "php: a handle cannot be cloned, and the original holds on" "held Error" \
        php_try -d extension=ffi -d ffi.enable=1 -- '$c = Swerve\Swerve::claim("copied");
            $c->acquire(); try { $d = clone $c; unset($d); } finally { echo $c->held() ? "held " : "lost "; }'
    # #41: the error names the missing base, and a 4096-byte name is cut
    # to its first 64 characters and "…" (it was echoed whole).
    long=$(printf 'n%.0s' $(seq 4096))
    expect "php: a missing base's error names it, and cuts a long name" \
        "RuntimeException 2: acquire '$(printf 'n%.0s' $(seq 64))…': cannot open $missing for claim directories: No such file or directory (ENOENT)" \
        env LD_PRELOAD="$preload" SWERVE_TMPDIR="$missing" php -n -d extension=ffi -d ffi.enable=1 -r "require '$src/bindings/php/Swerve.php';
            try { Swerve\Swerve::claim('$long')->acquire(); } catch (Throwable \$e) { echo get_class(\$e), ' ', \$e->getCode(), ': ', \$e->getMessage(); }"
    expect "php: FfiUnavailable is not a ShimNotLoaded" nothing env php -n -r "require '$src/bindings/php/Swerve.php';
        if (!is_subclass_of('Swerve\FfiUnavailable', 'Swerve\ShimNotLoaded')) echo 'nothing';"
fi
rm -rf "$copies"
finish
