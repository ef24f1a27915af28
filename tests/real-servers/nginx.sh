#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's nginx, unmodified, run by root (daemon on: a launcher that
# exits at once) with 4 workers that drop to www-data, under the shim: it
# serves as it does without it; a reload (nginx -s reload) drains a leader
# (Lua, on the shim's API through LuaJIT's FFI: nginx tells its old worker
# over its channel, and the worker closes its listeners), which lets go
# within 100 ms of nginx's word to it, and a worker of the new generation
# takes its claim; the reload and a binary upgrade (SIGUSR2, then SIGQUIT
# to the old master) keep it serving in the same claim directory; a stop
# leaves no claim directory; its error log shows nothing of the shim and
# no crashed worker.
# With SCL_STORE=postgresql (tests/pg/nginx-server.sh) the workers also
# run the nightly-report pattern in Lua; nginx starts its workers with a fresh
# environment, so their libpq sees no PGPASSFILE of its own: exactly one of
# 8 concurrent requests runs it, a SIGKILLed holder's claim is free, and
# after a reload that lists the claim variables in `env` (for the binary
# upgrade's exec) the upgraded master's workers claim in the database too.
set -u
. "$(dirname "$0")/lib.sh"
need_packages nginx curl libnginx-mod-http-lua
nginx=$(command -v nginx || echo /usr/sbin/nginx)
pg=
if [ -n "${SWERVE_CLAIM_STORE:-}" ]; then
    pg=1
    workers_run_as www-data
fi

port=$(free_port)
# nginx.conf; with "pg-env": the claim variables listed in `env`.
write_conf() {
    local pgenv=''
    [ -n "$pg" ] && [ "${1:-}" = pg-env ] && pgenv='env SWERVE_CLAIM_STORE;
env PGPASSFILE;'
    cat >"$work/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
user www-data;
worker_processes 4;
pid $work/nginx.pid;
error_log $work/error.log info;
# nginx gives its workers and a binary upgrade a fresh environment:
env LD_PRELOAD;
env SWERVE_TMPDIR;
env ASAN_OPTIONS;
$pgenv
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    lua_package_path '$SCL_SRCDIR/tests/real-servers/?.lua;;';
    init_by_lua_block { require 'nginx_report' }
$(nginx_report_server "$port")
}
CONF
}
write_conf

master() { cat "$work/nginx.pid" 2>/dev/null; }
workers() { pgrep -P "$(master)" | sort | tr '\n' ' '; }
serves() { # 50 requests, every one answered "ok"
    for _ in $(seq 50); do [ "$(get "$port" /)" = ok ] || return 1; done
}
wait_for() { # COMMAND...: until it succeeds, at most 10 s
    for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
    return 1
}
claim_dirs() { ls -d "$base"/swerve-claim.* 2>/dev/null | wc -l; }

check "the configuration is valid" "$nginx" -t -q -c "$work/nginx.conf"
SWERVE_TMPDIR=$base LD_PRELOAD=$preload "$nginx" -c "$work/nginx.conf"
check "the launcher exited and the master started" wait_for test -s "$work/nginx.pid"
server_pids+=("$(master)")
check "nginx serves under the shim" wait_for serves
if [ -n "$pg" ]; then
    check "no claim directory: the claims are in the database" test "$(claim_dirs)" -eq 0
else
    check "one claim directory, made before the first worker dropped to www-data" test "$(claim_dirs)" -eq 1
fi
first=$(workers)
check "its workers dropped to www-data" bash -c "for w in $first; do [ \$(stat -c %U /proc/\$w) = www-data ] || exit 1; done"

killed=none
if [ -n "$pg" ]; then
    check "exactly one of 8 concurrent requests runs the report" exactly_one_runs "$port" "/report?seconds=1.5"
    get "$port" "/report?seconds=30" >/dev/null &
    killed=$(wait_holder nightly-report)
    check "a worker holds the claim in the database during a long report" test -n "$killed"
    check "the holder is an nginx worker, as www-data" bash -c "[ -n '$killed' ] && [ \$(ps -o ppid= -p '$killed') = $(master) ] && [ \$(stat -c %U /proc/$killed) = www-data ]"
    expect_freed_after_kill "$killed" get "$port" /status
    check "the report runs again in another worker" bash -c "curl -s --max-time 10 'http://127.0.0.1:$port/report?seconds=0' | grep -q 'runs the report'"
    write_conf pg-env # for the binary upgrade below: the exec keeps only what env lists
fi

first=$(workers)
hold() { get "$port" /hold; }
take() { get "$port" /take; }
drain_check hold take "$nginx" -c "$work/nginx.conf" -s reload
check "after the reload: a new generation of workers" wait_for bash -c "[ -n \"\$(pgrep -P $(master))\" ] && ! kill -0 ${first%% *} 2>/dev/null"
check "and it still serves" serves

old=$(master)
kill -USR2 "$old"
check "a binary upgrade (SIGUSR2) starts a new master" wait_for bash -c "[ -s '$work/nginx.pid' ] && [ \"\$(cat '$work/nginx.pid')\" != $old ]"
server_pids+=("$(master)")
[ -n "$pg" ] || check "the new master joined the same claim directory" test "$(claim_dirs)" -eq 1
check "SIGQUIT ends the old master" stop_pid "$old" QUIT
check "the new master serves" serves
if [ -n "$pg" ]; then
    check "the upgraded master's workers: exactly one of 8 runs the report" exactly_one_runs "$port" "/report?seconds=1.5"
    get "$port" "/report?seconds=3" >/dev/null &
    holder=$(wait_holder nightly-report)
    check "its holder is in the database, a worker of the new master" bash -c "[ -n '$holder' ] && [ \$(ps -o ppid= -p '$holder') = $(master) ]"
    check "still no claim directory" test "$(claim_dirs)" -eq 0
    wait_status "$port" free 10 >/dev/null
else
    check "still one claim directory" test "$(claim_dirs)" -eq 1
fi

check "a stop (SIGQUIT)" stop_pid "$(master)" QUIT
check "no claim directory left" wait_for no_claim_dir_left
check "the shim wrote nothing to nginx's log, no worker crashed (but the one killed)" \
    bash -c "! grep -E 'swerve-claim\[|exited on signal|AddressSanitizer' '$work/error.log' | grep -v ' $killed exited on signal 9' >&2"
check "the log is nginx's (it saw the upgrade)" grep -q "start new binary" "$work/error.log"
finish
