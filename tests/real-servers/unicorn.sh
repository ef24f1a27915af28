#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's unicorn, unmodified, 4 workers on 127.0.0.1 under the shim, the
# Rack app using the Ruby binding (unicorn_app.ru): exactly one of 8
# concurrent requests runs the nightly report in each round, through a
# SIGKILLed holder (its claim free once the master has reaped it), a
# reload (HUP: the workers replaced, the master kept) and a binary upgrade
# (USR2: a new master, a child of the old one, re-exec'd with its own
# workers; both generations serve one round together, then the old one is
# stopped with QUIT); a graceful stop (QUIT) leaves no claim directory and
# no process; the shim writes nothing to unicorn's log.
set -u
. "$(dirname "$0")/lib.sh"
need_packages unicorn curl

port=$(free_port)
cat >"$work/unicorn.conf" <<CONF
worker_processes 4
listen "127.0.0.1:$port"
pid "$work/unicorn.pid"
stderr_path "$work/unicorn.log"
timeout 60
CONF
master() { cat "$work/unicorn.pid" 2>/dev/null; }

SWERVE_TMPDIR=$base LD_PRELOAD=$preload RUBYLIB=$SCL_SRCDIR/bindings/ruby SCL_DRAIN_OUT=$work/drained \
    unicorn -c "$work/unicorn.conf" "$SCL_SRCDIR/tests/real-servers/unicorn_app.ru" >"$work/stdout.log" 2>&1 &
first=$!
server_pids+=("$first")
check "unicorn answers on 127.0.0.1" wait_port "$port"
check "4 workers" workers_replaced "$first" 4 ""
report_round "$port" "first round"
killed_mid_report "$port"
# A leader thread in a worker lets go once a reload drains its worker (the
# worker closes its listeners as the master's soft QUIT reaches it).
hold() {
    get "$port" /hold >/dev/null
    for _ in $(seq 600); do
        [ -s "$work/drained" ] && cat "$work/drained" && return
        sleep 0.05
    done
}
take() { get "$port" /take; }
drain_check hold take kill -HUP "$first"
check "4 workers after the reload" workers_replaced "$first" 4 ""
reload_replaces_workers "$first" HUP 4
check "the master stays" test "$(master)" = "$first"
report_round "$port" "after HUP"
check "one claim directory" test "$(claim_dirs)" -eq 1

kill -USR2 "$first"
for _ in $(seq 300); do
    second=$(master)
    [ -n "$second" ] && [ "$second" != "$first" ] && break
    sleep 0.1
done
server_pids+=("$second")
check "a binary upgrade (USR2) starts a new master" test -n "$second" -a "$second" != "$first"
check "the new master is a child of the old one" test "$(ps -o ppid= -p "$second" | tr -d ' ')" = "$first"
check "the new master has 4 workers" workers_replaced "$second" 4 ""
report_round "$port" "old and new workers together"
old=$(children_of "$first" | grep -vx "$second")
check "the old master stops (QUIT)" stop_pid "$first" QUIT 20
check "its workers are gone" all_gone $old
report_round "$port" "after the upgrade"
check "one claim directory, the new master's too" test "$(claim_dirs)" -eq 1

old=$(children_of "$second")
check "a graceful stop (QUIT)" stop_pid "$second" QUIT 20
check "no worker left" all_gone $old
check "no claim directory left" no_claim_dir_left
check "no unicorn process left" no_process_left "$work/unicorn.conf"
check "unicorn's log saw the kill, the reload and the upgrade" \
    bash -c "grep -q 'SIGKILL' '$work/unicorn.log' && grep -q 'reloading config_file' '$work/unicorn.log' &&
        grep -q 'executing' '$work/unicorn.log'"
check "the shim wrote nothing to unicorn's log, no worker crashed" log_is_clean "$work/unicorn.log"
[ "$failed" -eq 0 ] || tail -n 40 "$work/unicorn.log" >&2
finish
