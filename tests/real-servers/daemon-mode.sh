#!/bin/bash
# SPDX-License-Identifier: MIT
# Five servers in their default daemon mode: a master that daemonizes is still a master (one directory, no early drain).
# nginx (daemon on), php-fpm (daemonize = yes), Apache prefork with mod_php
# (-k start), unicorn -D and starman --daemonize, each under the shim with
# the configuration and app of its own test, started as an operator
# starts them: the command forks and exits, and its child calls setsid
# and is the master (unicorn -D: that child forks the master and exits;
# php-fpm's reload, SIGUSR2, re-execs the master, which daemonizes again:
# a new master, the old pid gone).  For each: the launcher returns and the
# master writes its pidfile, in a session not the test's; exactly one of
# 8 concurrent requests runs the nightly report, and the workers share
# one claim directory; a leader does not drain before the reload, sees
# draining() say 1 within 100 ms of it (drain_check), and a worker of the
# new generation takes its claim; the master's own draining() says 0
# where the app can ask it there (nginx: init_by_lua, at the reload;
# unicorn: before_fork, as it forks each worker); a stop of the pidfile's
# pid leaves no worker and no claim directory; the shim writes nothing to
# the server's log.  PHP cannot run with the ASan runtime: php-fpm and
# Apache are left out there (and said so).  Arguments: the servers to run
# (nginx php-fpm apache unicorn starman), all by default.
set -u
. "$(dirname "$0")/lib.sh"
need_packages nginx libnginx-mod-http-lua php8.2-fpm libfcgi-bin apache2 libapache2-mod-php8.2 unicorn starman curl
php=1
if [ -n "${SCL_ASAN_RUNTIME:-}" ]; then
    echo "php-fpm, Apache: left out: PHP cannot load its extensions with the ASan runtime preloaded (RTLD_DEEPBIND)"
    php=
fi
[ -z "$php" ] || php_www

wait_for() { # COMMAND...: until it succeeds, at most 10 s
    for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
    return 1
}
pid_of() { cat "$1" 2>/dev/null; }
hold() { get "$port" /hold; }
take() { get "$port" /take; }

# The master in PIDFILE (at most 10 s until it is there): not the process
# the test started, which has exited; it is in a session of its own.
daemon_master() { # WHAT PIDFILE
    local m
    check "$1: the launcher exited and the master wrote its pidfile" wait_for test -s "$2"
    m=$(pid_of "$2")
    server_pids+=("$m")
    check "$1: the master ($m) is detached: in a session that is not the test's" \
        bash -c "[ -n \"\$(ps -o sid= -p $m)\" ] && [ \$(ps -o sid= -p $m) != \$(ps -o sid= -p $$) ]"
}

# The stop of the pidfile's master by SIGNAL: its workers go, and no
# claim directory is left.
daemon_stop() { # WHAT PIDFILE SIGNAL
    local m workers
    m=$(pid_of "$2")
    workers=$(children_of "$m")
    check "$1: a stop (SIG$3) of the pidfile's pid $m" stop_pid "$m" "$3" 20
    # Gone, it is taken off server_pids: the cleanup then kills no process
    # that got its number since.
    if all_gone "$m" $workers; then pass; forget_pids "$m"; else fail "$1: its workers are gone"; fi
    check "$1: no claim directory left" dir_gone
    rm -rf "$base"/swerve-claim.* # what a failure left: the next server starts afresh
}

# $work/master-draining has COUNT lines, each "MASTER 0": the master's
# own draining() said 0 (within 10 s).
master_not_draining() { # COUNT MASTER
    wait_for bash -c "[ \$(grep -c . '$work/master-draining' 2>/dev/null) -ge $1 ]" &&
        [ "$(grep -cvx "$2 0" "$work/master-draining")" -eq 0 ] ||
        { sed 's/^/master-draining: /' "$work/master-draining" >&2; return 1; }
}
# No claim directory within 10 s; else what is there.
dir_gone() { wait_for no_claim_dir_left 2>/dev/null || no_claim_dir_left; }
one_dir() { check "$1: one claim directory" test "$(claim_dirs)" -eq 1; }

# nginx, daemon on (nginx.sh's configuration, without PostgreSQL).
run_nginx() {
    local nginx pidfile=$work/nginx.pid
    echo "== nginx (daemon on)"
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    port=$(free_port)
    cat >"$work/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ndk_http_module.so;
load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;
user www-data;
worker_processes 4;
pid $pidfile;
error_log $work/nginx-error.log info;
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
    lua_package_path '$SCL_SRCDIR/tests/real-servers/?.lua;;';
    # Also in the master at a reload: what its own draining() says then.
    init_by_lua_block {
        require 'nginx_report'
        local ffi = require 'ffi'
        ffi.cdef 'int getpid(void);'
        local f = io.open('$work/master-draining', 'a')
        f:write(ffi.C.getpid(), ' ', ffi.C.swerve_claim_draining(), '\n')
        f:close()
    }
$(nginx_report_server "$port")
}
CONF
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload "$nginx" -c "$work/nginx.conf"
    daemon_master nginx "$pidfile"
    check "nginx: answers" wait_port "$port"
    report_round "$port" "nginx"
    one_dir nginx
    drain_check hold take "$nginx" -c "$work/nginx.conf" -s reload
    check "nginx: the master's own draining() said 0 as it read its configuration again" \
        bash -c "grep -q '^$(pid_of "$pidfile") ' '$work/master-draining' && ! grep -v '^$(pid_of "$pidfile") 0\$' '$work/master-draining' | grep '^$(pid_of "$pidfile") ' >&2"
    rm -f "$work/master-draining"
    report_round "$port" "nginx after the reload"
    daemon_stop nginx "$pidfile" QUIT
    check "nginx: the shim wrote nothing to the log, no worker crashed" \
        bash -c "! grep -E 'swerve-claim\[|exited on signal|AddressSanitizer' '$work/nginx-error.log' >&2"
}

# Through cgi-fcgi to php-fpm: exactly one of 8 concurrent requests runs
# the report, and the claim is free once it is done.
fpm_round() { # WHAT
    for i in $(seq 8); do fcgi seconds=1.5 >"$work/answer.$i" & done
    wait $(jobs -p | grep -vxF -f <(printf '%s\n' "${server_pids[@]}")) 2>/dev/null
    check "$1: exactly one of 8 concurrent requests runs the report" \
        bash -c "[ \$(cat '$work'/answer.* | grep -c 'runs the report') -eq 1 ] && [ \$(cat '$work'/answer.* | grep -c 'someone else is on it') -eq 7 ]"
    check "$1: the claim is free once the report is done" wait_for fpm_free
}
fpm_free() { [ "$(status)" = free ]; }

# php-fpm, daemonize = yes (php-fpm.sh's pool), through cgi-fcgi.
run_php_fpm() {
    local pidfile=$work/php-fpm.pid
    echo "== php-fpm (daemonize = yes)"
    port=$(free_port)
    fpm_pool_conf "$work/php-fpm.conf" "$port"
    sed -i 's/^daemonize = no$/daemonize = yes/' "$work/php-fpm.conf"
    check "php-fpm: daemonize = yes" grep -q '^daemonize = yes$' "$work/php-fpm.conf"
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload php-fpm8.2 -R -y "$work/php-fpm.conf" >"$work/fpm-stdout.log" 2>&1
    daemon_master php-fpm "$pidfile"
    check "php-fpm: answers on 127.0.0.1:$port" wait_fpm
    fpm_round "php-fpm"
    one_dir php-fpm
    fhold() { fcgi hold; }
    ftake() { fcgi take; }
    first=$(pid_of "$pidfile")
    drain_check fhold ftake kill -USR2 "$first"
    check "php-fpm: the reload made a new master (it daemonized again)" \
        wait_for bash -c "m=\$(cat '$pidfile') && [ \"\$m\" != $first ] && [ -n \"\$(pgrep -P \$m)\" ]"
    server_pids+=("$(pid_of "$pidfile")")
    if all_gone "$first"; then pass; forget_pids "$first"; else fail "php-fpm: and the old one is gone"; fi
    fpm_round "php-fpm after the reload"
    one_dir "php-fpm after the reload"
    fcgi seconds=30 >/dev/null &
    kill_the_holder www-data status
    fpm_round "php-fpm after the kill"
    daemon_stop php-fpm "$pidfile" QUIT
    check "php-fpm: the shim wrote nothing to the log, no child crashed" \
        bash -c "! grep -E 'swerve-claim\[|SIGSEGV|Segmentation|core dumped|AddressSanitizer' '$work/error.log' '$work/fpm-stdout.log' >&2"
}

# Apache prefork with mod_php, -k start (apache.sh's configuration, with
# mod_rewrite for the common routes).
run_apache() {
    local pidfile=$work/apache2.pid
    echo "== Apache prefork (-k start)"
    port=$(free_port)
    {
        apache_php_conf "$port" apache-error.log rewrite
        cat <<CONF
RewriteEngine On
RewriteRule ^/report\$ /fpm_report.php [PT,QSA]
RewriteRule ^/(status|hold|take)\$ /fpm_report.php?\$1 [PT]
CONF
    } >"$work/httpd.conf"
    check "Apache: the configuration is valid" bash -c "apache2 -f '$work/httpd.conf' -t 2>/dev/null"
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload apache2 -f "$work/httpd.conf" -k start
    daemon_master Apache "$pidfile"
    check "Apache: answers" wait_port "$port"
    report_round "$port" "Apache"
    one_dir Apache
    drain_check hold take kill -USR1 "$(pid_of "$pidfile")"
    report_round "$port" "Apache after the graceful restart"
    daemon_stop Apache "$pidfile" WINCH
    check "Apache: the shim wrote nothing to the log, no child crashed" \
        bash -c "! grep -E 'swerve-claim\[|Segmentation|exit signal|AddressSanitizer' '$work/apache-error.log' >&2"
}

# unicorn -D (unicorn.sh's configuration and app).
run_unicorn() {
    local pidfile=$work/unicorn.pid
    echo "== unicorn -D"
    port=$(free_port)
    cat >"$work/unicorn.conf" <<CONF
worker_processes 4
listen "127.0.0.1:$port"
pid "$pidfile"
stderr_path "$work/unicorn.log"
timeout 60
# What the master's own draining() says as it forks each worker.
before_fork do |server, worker|
  require "swerve_claim"
  File.open("$work/master-draining", "a") { |f| f.puts "#{Process.pid} #{SwerveClaim.draining? ? 1 : 0}" }
end
CONF
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload RUBYLIB=$SCL_SRCDIR/bindings/ruby SCL_DRAIN_OUT=$work/drained \
        unicorn -D -c "$work/unicorn.conf" "$SCL_SRCDIR/tests/real-servers/unicorn_app.ru" >"$work/unicorn-stdout.log" 2>&1
    daemon_master unicorn "$pidfile"
    check "unicorn: answers" wait_port "$port"
    check "unicorn: 4 workers" workers_replaced "$(pid_of "$pidfile")" 4 ""
    check "unicorn: the master's own draining() said 0 as it forked them" master_not_draining 4 "$(pid_of "$pidfile")"
    report_round "$port" "unicorn"
    one_dir unicorn
    # A leader thread in a worker; it says when it let go in $work/drained.
    uhold() {
        get "$port" /hold >/dev/null
        for _ in $(seq 600); do
            [ -s "$work/drained" ] && cat "$work/drained" && return
            sleep 0.05
        done
    }
    drain_check uhold take kill -HUP "$(pid_of "$pidfile")"
    check "unicorn: 4 workers after the reload" workers_replaced "$(pid_of "$pidfile")" 4 ""
    check "unicorn: and as it forked the new ones" master_not_draining 8 "$(pid_of "$pidfile")"
    report_round "$port" "unicorn after HUP"
    daemon_stop unicorn "$pidfile" QUIT
    check "unicorn: the shim wrote nothing to the log, no worker crashed" log_is_clean "$work/unicorn.log"
}

# starman --daemonize (starman.sh's app).
run_starman() {
    local pidfile=$work/starman.pid
    echo "== starman --daemonize"
    port=$(free_port)
    SWERVE_TMPDIR=$base LD_PRELOAD=$preload PERL5LIB=$SCL_SRCDIR/bindings/perl \
        starman --daemonize --workers 4 --listen "127.0.0.1:$port" --pid "$pidfile" --error-log "$work/starman.log" \
        "$SCL_SRCDIR/tests/real-servers/starman_app.psgi" >"$work/starman-stdout.log" 2>&1
    daemon_master Starman "$pidfile"
    check "Starman: answers" wait_port "$port"
    check "Starman: 4 workers" workers_replaced "$(pid_of "$pidfile")" 4 ""
    report_round "$port" "Starman"
    one_dir Starman
    drain_check hold take kill -HUP "$(pid_of "$pidfile")"
    check "Starman: 4 workers after the reload" workers_replaced "$(pid_of "$pidfile")" 4 ""
    report_round "$port" "Starman after HUP"
    daemon_stop Starman "$pidfile" TERM
    check "Starman: the shim wrote nothing to the log, no worker crashed" log_is_clean "$work/starman.log"
}

[ $# -gt 0 ] || set -- nginx php-fpm apache unicorn starman
for server in "$@"; do
    case $server in
    php-fpm | apache) [ -z "$php" ] || "run_${server//-/_}" ;;
    *) "run_$server" ;;
    esac
done
finish
