#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's lighttpd with php-cgi backends it spawns itself, under the shim: one claim directory, exactly-once reports, drains.
# lighttpd 1.4 (root, drops to www-data) runs its FastCGI backends itself
# (mod_fastcgi's bin-path, max-procs 2: it forks and execs php-cgi, which
# calls setsid and forks PHP_FCGI_CHILDREN = 4 children of its own), and
# the PHP binding runs the seed's nightly-report pattern in them: the
# whole tree shares one claim directory; exactly one of 8 concurrent
# requests runs the report, before and after a graceful restart; a
# SIGKILLed holder's claim is free once its php-cgi parent has reaped it,
# and the report runs again; a graceful restart (SIGUSR1) drains a
# leader: lighttpd waits for its requests (server.graceful-shutdown-timeout,
# 8 s), cuts off those still running, then sends each php-cgi parent
# SIGTERM, which passes it on to its process group: the leader sees
# draining() say 1 then, lets go (it says so in a file, since its request
# was cut off), and a child of the new backends takes its claim; a
# graceful stop (SIGINT) leaves no process and no claim directory; the
# shim writes nothing to the logs.
set -u
. "$(dirname "$0")/lib.sh"
php_www # says SKIP in a sanitizer build
need_packages lighttpd php8.2-cgi curl

port=$(free_port)
# lighttpd drops to www-data before it opens its log or binds its backends'
# sockets: they live in a directory of www-data's.
run=$work/run
install -d -o www-data -g www-data "$run"
cat >"$work/lighttpd.conf" <<CONF
server.document-root = "$www"
server.bind = "127.0.0.1"
server.port = $port
server.pid-file = "$work/lighttpd.pid"
server.errorlog = "$run/error.log"
server.username = "www-data"
server.groupname = "www-data"
server.modules = ("mod_rewrite", "mod_setenv", "mod_fastcgi")
url.rewrite-once = (
    "^/report(?:\\?(.*))?\$" => "/fpm_report.php?\$1",
    "^/status" => "/fpm_report.php?status",
    "^/hold" => "/fpm_report.php?hold",
    "^/take" => "/fpm_report.php?take",
)
# Where ?hold says it drained: lighttpd has cut its request off by then.
setenv.add-environment = ("SCL_DRAIN_OUT" => "$run/drained")
fastcgi.server = (".php" => ((
    "bin-path" => "/usr/bin/php-cgi8.2 -d ffi.enable=1",
    "socket" => "$run/php.socket",
    "max-procs" => 2,
    "bin-environment" => ("PHP_FCGI_CHILDREN" => "4", "PHP_FCGI_MAX_REQUESTS" => "10000"),
)))
CONF

check "the configuration is valid" lighttpd -tt -f "$work/lighttpd.conf"
SWERVE_TMPDIR=$base LD_PRELOAD=$preload lighttpd -D -f "$work/lighttpd.conf" >"$work/stdout.log" 2>&1 &
master=$!
server_pids+=("$master")
check "lighttpd answers on 127.0.0.1" wait_port "$port"

# The php-cgi parents lead sessions of their own (setsid): they are added
# to server_pids, so that the cleanup at exit kills their groups too.
backends() { children_of "$master"; }
# Waits (at most 15 s) until lighttpd has 2 backends of 4 children each.
backends_up() {
    local b n
    for _ in $(seq 150); do
        b=$(backends)
        n=0
        for p in $b; do [ "$(children_of "$p" | grep -c .)" -eq 4 ] && n=$((n + 1)); done
        [ "$(grep -c . <<<"$b")" -eq 2 ] && [ "$n" -eq 2 ] && return 0
        sleep 0.1
    done
    ps -o pid,ppid,args --ppid "$master" >&2
    return 1
}
check "2 php-cgi backends of 4 children each" backends_up
first=$(backends)
server_pids+=($first)
check "the backends are lighttpd's own, php-cgi as www-data" bash -c "for b in $(echo $first); do
    [ \"\$(readlink /proc/\$b/exe)\" = /usr/bin/php-cgi8.2 ] && [ \$(stat -c %U /proc/\$b) = www-data ] || exit 1; done"

report_round "$port" "first round"
check "one claim directory for lighttpd and every php-cgi" test "$(claim_dirs)" -eq 1
killed_mid_report "$port"
check "the backends respawned the killed child" backends_up

# The leader: lighttpd tells a backend nothing until it has waited for the
# requests in flight (8 s) and cut them off, so ?hold's answer comes in
# $run/drained.  seen: when the holder saw draining() say 1; gone: when
# its php-cgi parent, which lighttpd told, was gone.
drained=$run/drained
old=$(for b in $first; do children_of "$b"; done)
get "$port" /hold >"$work/hold.out" &
holder=$(wait_holder leader)
check "a php-cgi child holds 'leader' and asks draining()" test -n "$holder"
parent=$(ps -o ppid= -p "$holder" | tr -d ' ')
sleep 0.5
check "(and it does not drain before the restart)" test ! -e "$drained"
start=$(now_ns)
kill -USR1 "$master"
gone=
for _ in $(seq 1000); do # 20 s at most
    [ -z "$gone" ] && ! kill -0 "$parent" 2>/dev/null && gone=$(now_ns)
    [ -s "$drained" ] && [ -n "$gone" ] && break
    sleep 0.02
done
if read -r _ seen_pid seen <"$drained" 2>/dev/null && [ -n "$seen" ]; then
    ms=$(((seen - start) / 1000000))
    [ -n "$gone" ] && gone="was gone $(((gone - start) / 1000000)) ms after it" || gone="was still there 20 s after it"
    echo "draining seen $ms ms after SIGUSR1; the holder's php-cgi parent $gone"
    check "the holder saw draining() say 1: worker $holder" test "$seen_pid" = "$holder"
    check "not before lighttpd tells its backends (after server.graceful-shutdown-timeout, 8 s)" test "$ms" -ge 7000
    check "within 3 s after that timeout" test "$ms" -le 11000
else
    fail "the holder never saw draining() say 1 after SIGUSR1: $(cat "$work/hold.out")"
fi
check "the graceful restart started 2 new backends" backends_up
second=$(backends)
server_pids+=($second)
check "(new ones)" test -z "$(comm -12 <(echo "$first") <(echo "$second"))"
# Gone pids are taken off server_pids: the cleanup then kills no process
# that got one of their numbers since.
if all_gone $first; then pass; forget_pids $first; else fail "the old backends are gone"; fi
take() { get "$port" /take; }
for _ in $(seq 100); do
    took=$(take 2>/dev/null)
    case $took in "took "*) break ;; esac
    sleep 0.1
done
check "a child of the new backends takes the claim ($took)" \
    bash -c "[ '${took%% *}' = took ] && [ '${took#took }' != '$holder' ] && [ -n '${took#took }' ]"
report_round "$port" "after the restart"
check "still one claim directory" test "$(claim_dirs)" -eq 1

every=$(echo $second $old; for b in $second; do children_of "$b"; done)
check "a graceful stop (SIGINT)" stop_pid "$master" INT 20
if all_gone $every; then pass; forget_pids "$master" $every; else fail "every php-cgi is gone"; fi
check "no claim directory left" no_claim_dir_left
check "lighttpd's log saw the restart and the stop" \
    bash -c "[ \$(grep -c 'graceful shutdown started' '$run/error.log') -eq 2 ] && grep -q 'server stopped' '$run/error.log'"
check "the shim wrote nothing to the logs, no process crashed" \
    bash -c "! grep -E 'swerve-claim\[|Segmentation|segfault|core dumped|AddressSanitizer' '$run/error.log' '$work/stdout.log' >&2"
[ "$failed" -eq 0 ] || tail -n 20 "$run/error.log" "$work/stdout.log" >&2
finish
