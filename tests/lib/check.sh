# SPDX-License-Identifier: MIT
# What every script test shares (sourced): the tally, its checks, the
# closing line that scripts/test.sh adds up, and the ending of the
# processes a test started, by pid.  A script sources it by its path
# beside the script's own folder, and fails hard (99) without it:
#
#   . "$(dirname "$0")/../lib/check.sh" || exit 99
#
# and ends with `finish`, whose status is the script's: 0 when every check
# passed, 1 when one failed (a test that cannot run exits 77 with a SKIP
# line saying why, or fails; never quietly).

passed=0 failed=0 failures=()

# One check that passed.
pass() { passed=$((passed + 1)); }

# One check that failed: MESSAGE... goes to standard error after "FAIL: ",
# and again before the closing line (a log's tail is what test.sh shows).
fail() {
    echo "FAIL: $*" >&2
    failures+=("$*")
    failed=$((failed + 1))
}

# One check: COMMAND... must succeed; else "FAIL: DESCRIPTION".
check() { # DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then pass; else fail "$what"; fi
}

# A check's command: 0 when COMMAND exits with status EXPECTED (its output
# dropped).
status_is() { # EXPECTED COMMAND...
    local want=$1
    shift
    "$@" >/dev/null 2>&1
    [ $? -eq "$want" ]
}

# The closing line, "NAME.sh: N passed, N failed" (NAME.sh the script run,
# $0); its status is the script's.
finish() {
    local f
    for f in "${failures[@]}"; do
        echo "FAIL (again, for the log's tail): $f" >&2
    done
    echo "$(basename "$0"): $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

# The scripts' clock: nanoseconds since the epoch, comparable with the
# wall_ns() timestamps the C helpers print (tests/lib/clock.h).
now_ns() { date +%s%N; }

# SIGKILL to each PID, and to the process group it leads if it leads one (a
# background job started with setsid: its children too).  For the cleanup
# at exit: pids that are gone already are no error.
kill_pids() { # PID...
    local p
    for p; do
        kill -9 -- -"$p" 2>/dev/null
        kill -9 "$p" 2>/dev/null
    done
}

# Sends SIGSTOP to PID and waits (at most 5 s) until the kernel shows it
# stopped: the signal is only queued when kill returns, and a process
# that is asleep stops once it is scheduled to take it.
stop_and_wait() { # PID
    local pid=$1 state
    kill -STOP "$pid" || return 1
    for _ in $(seq 100); do
        state=$(sed -E 's/^.*\) (.).*$/\1/' /proc/"$pid"/stat 2>/dev/null)
        [ "$state" = T ] && return 0
        sleep 0.05
    done
    echo "process $pid not stopped 5 s after SIGSTOP (state '$state')" >&2
    return 1
}

# Sends SIGNAL to PID and waits (at most SECONDS) until it is gone; SIGKILL
# after that.  Fails if it had to, and shows where PID and its children
# were waiting.
stop_pid() { # PID SIGNAL [SECONDS]
    local pid=$1 signal=$2 seconds=${3:-15}
    kill -"$signal" "$pid" 2>/dev/null || return 0
    for _ in $(seq $((seconds * 10))); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    echo "still running ${seconds} s after SIG$signal:" >&2
    ps -o pid,ppid,stat,wchan:24,etime,args -p "$pid" --ppid "$pid" >&2
    kill -9 "$pid" 2>/dev/null
    return 1
}

# Copies the working tree of the git checkout SRC into DEST (made here) as
# a fresh clone of it would have it: what git tracks or would track, not
# what it ignores (nothing built or generated), not what was deleted.
copy_checkout() { # SRC DEST
    local src=$1 dest=$2
    mkdir "$dest" || return 1
    git -C "$src" ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [ -e "$src/$f" ] && printf '%s\0' "$f"; done |
        tar -C "$src" --null -T - -cf - | tar -C "$dest" -xf -
}
