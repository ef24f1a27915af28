#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's Puma, unmodified, in cluster mode (2 workers) on 127.0.0.1 under
# the shim, the Rack app using the Ruby binding (puma_app.ru): exactly one
# of 8 concurrent requests runs the nightly report in each round, through
# a SIGKILLed holder (its claim free once the master has reaped it), a
# phased restart (USR1: the workers replaced one by one, the master kept)
# and a hot restart (USR2: the master stops its workers and re-execs itself
# in the same pid, with new workers), each with one claim directory
# throughout; a leader in a request sees draining() within 100 ms of its
# worker's SIGTERM in both, and a new worker takes the claim.  A log reopen
# (SIGHUP with stdout_redirect, which the master passes on to its workers)
# drains nobody with HUP left out of SWERVE_CLAIM_DRAIN_SIGNALS.  A stop by
# SIGTERM (systemd's default: the master stops its workers, then kills
# itself with SIGTERM, SIG_DFL, so that no exit path runs) leaves no claim
# directory and no process, twice, and so does a stop by SIGINT; the shim
# writes nothing to Puma's logs.
set -u
. "$(dirname "$0")/lib.sh"
need_packages puma curl

port=$(free_port)
app=$SCL_SRCDIR/tests/real-servers/puma_app.ru
tag=$(basename "$work") # in every process title of this server, for no_process_left
cat >"$work/puma.rb" <<CONF
workers 2
threads 0, 16
bind "tcp://127.0.0.1:$port"
pidfile "$work/puma.pid"
tag "$tag"
worker_shutdown_timeout 30
CONF
# The same, its output redirected (a log file that SIGHUP reopens).
cat "$work/puma.rb" - >"$work/redirect.rb" <<CONF
stdout_redirect "$work/redirected.log", "$work/redirected.log", true
CONF
master() { cat "$work/puma.pid" 2>/dev/null; }
start() { # CONF [VAR=VALUE...]: more of the master's environment
    local conf=$1
    shift
    env "$@" SWERVE_TMPDIR="$base" LD_PRELOAD="$preload" RUBYLIB="$SCL_SRCDIR/bindings/ruby" \
        puma -C "$conf" "$app" >>"$work/puma.log" 2>&1 &
    first=$!
    server_pids+=("$first")
    check "Puma answers on 127.0.0.1" wait_port "$port"
    check "2 workers" workers_replaced "$first" 2 ""
}
stop() { # SIGNAL WHAT
    local workers
    workers=$(children_of "$first")
    check "$2: a stop (SIG$1)" stop_pid "$first" "$1" 40
    check "$2: its workers are gone" all_gone $workers
    check "$2: no claim directory left" no_claim_dir_left
    check "$2: no Puma process left" no_process_left "$tag"
}
# A leader in a request lets go once its worker is told to stop (SIGTERM).
hold() { get "$port" /hold; }
take() { get "$port" /take; }
# Each of MASTER's workers answers /draining (at most 40 requests): all 0.
none_draining() { # MASTER
    local workers answers=""
    workers=$(children_of "$1")
    for _ in $(seq 40); do
        answers=$(printf '%s\n%s\n' "$answers" "$(get "$port" /draining)" | grep . | sort -u)
        [ "$(cut -d' ' -f1 <<<"$answers" | sort -u)" = "$workers" ] && break
    done
    [ "$(cut -d' ' -f1 <<<"$answers" | sort -u)" = "$workers" ] && ! grep -qv ' 0$' <<<"$answers" ||
        { echo "workers $(echo $workers); draining() said: $(echo $answers)" >&2; return 1; }
}
# Waits (at most 5 s) until every one of MASTER's workers writes to FILE.
workers_write_to() { # MASTER FILE
    local w ok
    for _ in $(seq 50); do
        ok=1
        for w in $(children_of "$1"); do [ "$(readlink /proc/"$w"/fd/1)" = "$2" ] || ok=; done
        [ -n "$ok" ] && return 0
        sleep 0.1
    done
    return 1
}

start "$work/puma.rb"
check "the master wrote its pid" test "$(master)" = "$first"
report_round "$port" "first round"
killed_mid_report "$port"
check "2 workers again" workers_replaced "$first" 2 ""

# Phased restart: the master sends SIGTERM to one old worker at a time and
# starts its replacement before it stops the next.
old=$(children_of "$first")
drain_check hold take kill -USR1 "$first"
check "a phased restart (SIGUSR1) replaces the 2 workers" workers_replaced "$first" 2 "$old"
check "the master stays" test "$(master)" = "$first"
report_round "$port" "after the phased restart"
check "one claim directory after the phased restart" test "$(claim_dirs)" -eq 1

# Hot restart: the master sends SIGTERM to every worker, waits for them,
# and execs itself (the same pid), which forks new workers.
old=$(children_of "$first")
drain_check hold take kill -USR2 "$first"
check "a hot restart (SIGUSR2) replaces the 2 workers" workers_replaced "$first" 2 "$old"
check "the master re-executed itself in the same pid" test "$(master)" = "$first"
report_round "$port" "after the hot restart"
check "one claim directory after the hot restart" test "$(claim_dirs)" -eq 1
stop TERM "first stop"

# With stdout_redirect, SIGHUP makes the master reopen its log and send
# each worker SIGHUP, which only reopens its log too: HUP, a drain signal by
# default, is left out of SWERVE_CLAIM_DRAIN_SIGNALS for Puma.
start "$work/redirect.rb" SWERVE_CLAIM_DRAIN_SIGNALS=INT,QUIT,TERM
old=$(children_of "$first")
check "no worker is draining" none_draining "$first"
mv "$work/redirected.log" "$work/redirected.log.1"
kill -HUP "$first"
check "a log reopen (SIGHUP) reaches the workers" workers_write_to "$first" "$work/redirected.log"
check "the workers stay" test "$(children_of "$first")" = "$old"
check "and none of them is draining" none_draining "$first"
report_round "$port" "second start, after the log reopen"
stop INT "second stop"
start "$work/puma.rb"
report_round "$port" "third start"
stop TERM "third stop"

check "Puma's log saw the phased and the hot restart" \
    bash -c "grep -q 'Starting phased worker restart' '$work/puma.log' && grep -q 'Restarting' '$work/puma.log'"
check "the shim wrote nothing to Puma's logs, no worker crashed" \
    log_is_clean <(cat "$work/puma.log" "$work/redirected.log.1" "$work/redirected.log")
[ "$failed" -eq 0 ] || tail -n 40 "$work/puma.log" >&2
finish
