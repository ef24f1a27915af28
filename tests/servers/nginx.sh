#!/bin/bash
# Debian's nginx, unmodified, run by root (daemon on: a launcher that
# exits at once) with 4 workers that drop to www-data, under the shim: it
# serves as it does without it; a reload (SIGHUP) and a binary upgrade
# (SIGUSR2, then SIGQUIT to the old master) keep it serving in the same
# claim directory; a stop leaves no claim directory; its error log shows
# nothing of the shim and no crashed worker.
set -u
. "$(dirname "$0")/lib.sh"
need_packages nginx curl
nginx=$(command -v nginx || echo /usr/sbin/nginx)

port=$(free_port)
cat >"$work/nginx.conf" <<CONF
user www-data;
worker_processes 4;
pid $work/nginx.pid;
error_log $work/error.log info;
# nginx gives its workers and a binary upgrade a fresh environment:
env LD_PRELOAD;
env SWERVE_TMPDIR;
env ASAN_OPTIONS;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    server { listen 127.0.0.1:$port; location / { return 200 "ok\n"; } }
}
CONF

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
check "the master made one claim directory before forking" test "$(claim_dirs)" -eq 1
first=$(workers)
check "its workers dropped to www-data" bash -c "for w in $first; do [ \$(stat -c %U /proc/\$w) = www-data ] || exit 1; done"

kill -HUP "$(master)"
check "after a reload (SIGHUP): a new generation of workers" wait_for bash -c "[ -n \"\$(pgrep -P $(master))\" ] && ! kill -0 ${first%% *} 2>/dev/null"
check "and it still serves" serves

old=$(master)
kill -USR2 "$old"
check "a binary upgrade (SIGUSR2) starts a new master" wait_for bash -c "[ -s '$work/nginx.pid' ] && [ \"\$(cat '$work/nginx.pid')\" != $old ]"
server_pids+=("$(master)")
check "the new master joined the same claim directory" test "$(claim_dirs)" -eq 1
check "SIGQUIT ends the old master" stop_pid "$old" QUIT
check "the new master serves" serves
check "still one claim directory" test "$(claim_dirs)" -eq 1

check "a stop (SIGQUIT)" stop_pid "$(master)" QUIT
check "no claim directory left" wait_for no_claim_dir_left
check "the shim wrote nothing to nginx's log, no worker crashed" \
    bash -c "! grep -E 'swerve-claim\[|exited on signal|AddressSanitizer' '$work/error.log' >&2"
check "the log is nginx's (it saw the upgrade)" grep -q "start new binary" "$work/error.log"
finish
