# SPDX-License-Identifier: MIT
# Common parts of the real-server tests (sourced): install what is missing,
# pick a free loopback port, wait for it, drive the server with curl, stop
# it by pid, read its logs.  Every wait is bounded; servers listen on
# 127.0.0.1 only and are stopped by pid at the end, whatever happens.  The
# checks, the closing line and the stopping by pid are tests/lib/check.sh's.

: "${SCL_PRELOAD:?run through make check}" "${SCL_SRCDIR:?run through make check}"
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh" || exit 99
server_pids=()
work=$(mktemp -d /tmp/scl-server.XXXXXX)
chmod 755 "$work"
base=$work/base
mkdir "$base" && chmod 1777 "$base" # like /tmp: a master that already dropped privileges makes its own
preload=$SCL_PRELOAD
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$SCL_PRELOAD
# An array, not a function: "${under_shim[@]}" CMD & makes $! CMD's own pid.
under_shim=(env LD_PRELOAD="$preload")
# grep -Eq, and the file shown when it does not match (or, lacks, does).
has() { grep -Eq "$1" "$2" || { sed "s|^|$(basename "$2"): |" "$2" >&2; return 1; }; }
lacks() { ! grep -Eq "$1" "$2" || { sed "s|^|$(basename "$2"): |" "$2" >&2; return 1; }; }
export ASAN_OPTIONS=detect_leaks=0

finish_servers() {
    kill_pids "${server_pids[@]}"
    rm -rf "$work"
}
trap finish_servers EXIT

# SCL_STORE=postgresql (tests/pg/*-server.sh): the same test with the claims
# in a private PostgreSQL cluster (tests/pg/cluster.sh) instead of $base,
# its credentials passed as doc/cluster.md says: a URI without the password
# and PGPASSFILE, both in the master's environment only.
if [ "${SCL_STORE:-}" = postgresql ]; then
    . "$SCL_SRCDIR/tests/pg/cluster.sh"
    trap 'finish_servers; pg_cluster_stop' EXIT
    pg_cluster_start && pg_cluster_init "$SCL_HELPERS/../swerve-claim" || exit 1
    unset PGPASSWORD PGSERVICE PGSERVICEFILE
    export SWERVE_CLAIM_STORE=$SCL_PG_URL_NOPW PGPASSFILE=$SCL_PG_PASSFILE
    # A control: the URI alone does not get in (so a worker that lost
    # PGPASSFILE fails), and the password file does.
    check "without PGPASSFILE the URI alone is refused" \
        bash -c '! env -u PGPASSFILE HOME=/nonexistent "$SCL_HELPERS/../swerve-claim" list >/dev/null 2>&1'
    check "with PGPASSFILE it gets in" bash -c '"$SCL_HELPERS/../swerve-claim" list >/dev/null'
fi

# The user the server's claiming processes run as: with the claims in
# PostgreSQL they read the password file, so it must be theirs.
workers_run_as() { # USER
    [ -z "${SCL_PG_PASSFILE:-}" ] || pg_passfile_owner "$1"
}

# Installs the Debian packages that are missing; SKIP (77) with apt's own
# words if one truly cannot be had.
need_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >"$work/apt.log" 2>&1; then
        echo "SKIP: cannot install ${missing[*]}: $(tail -2 "$work/apt.log")"
        exit 77
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (at most SECONDS) until 127.0.0.1:PORT answers HTTP.
wait_port() {
    local port=$1 seconds=${2:-20}
    for _ in $(seq $((seconds * 10))); do
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/" && return 0
        sleep 0.1
    done
    echo "server on port $port never answered" >&2
    return 1
}

get() { curl -s --max-time 10 "http://127.0.0.1:$1$2"; }

# 8 concurrent GET PATH: exactly one answer contains "runs the report".
exactly_one_runs() {
    local port=$1 path=$2 runs
    for i in $(seq 8); do get "$port" "$path" >"$work/answer.$i" & done
    wait $(jobs -p | grep -vxF -f <(printf '%s\n' "${server_pids[@]}")) 2>/dev/null
    runs=$(cat "$work"/answer.* | grep -c "runs the report")
    [ "$(cat "$work"/answer.* | grep -c "someone else is on it")" -eq 7 ] && [ "$runs" -eq 1 ] ||
        { echo "answers: $(cat "$work"/answer.*)" >&2; return 1; }
}

# The pid holding NAME, from the swerve-claim tool: in the server's one
# claim directory, named, since `list` alone shows only the invoking user's
# and a master that dropped privileges makes its own; or in the database.
holder_of() {
    local dir
    if [ -n "${SWERVE_CLAIM_STORE:-}" ]; then
        "$SCL_HELPERS/../swerve-claim" list --raw --noheadings -o TYPE,NAME,REPORTED-PID |
            awk -v n="$1" '$1 == "holder" && $2 == n { print $3 }'
        return
    fi
    dir=$(ls -d "$base"/swerve-claim.* 2>/dev/null | head -1)
    [ -n "$dir" ] || return 0
    "$SCL_HELPERS/../swerve-claim" list --server "$dir" --raw --noheadings -o TYPE,NAME,PID |
        awk -v n="$1" '$1 == "claim" && $2 == n { print $3 }'
}

# The pid holding NAME, once somebody does (at most 5 s); "" if nobody.
wait_holder() {
    local holder
    for _ in $(seq 100); do
        holder=$(holder_of "$1")
        [ -n "$holder" ] && break
        sleep 0.05
    done
    echo "$holder"
}

# Waits (at most SECONDS) until /status on PORT says WANT; prints how long.
wait_status() {
    local port=$1 want=$2 seconds=${3:-5} start=$(now_ns)
    for _ in $(seq $((seconds * 50))); do
        if [ "$(get "$port" /status)" = "$want" ]; then
            echo "$(( ($(now_ns) - start) / 1000000 )) ms"
            return 0
        fi
        sleep 0.02
    done
    return 1
}

# Kills HOLDER with SIGKILL; then STATUS-COMMAND... (which prints "free"
# or "held") must say free within 5 s, once its parent has reaped it.
expect_freed_after_kill() {
    local holder=$1 start
    shift
    kill -9 "$holder"
    start=$(now_ns)
    for _ in $(seq 250); do
        if [ "$("$@")" = free ]; then
            echo "claim free $(( ($(now_ns) - start) / 1000000 )) ms after SIGKILL of worker $holder"
            pass
            return 0
        fi
        sleep 0.02
    done
    fail "the SIGKILLed holder's claim was not freed"
}

# The long report's holder, once there: its user is USER (or "-": not
# checked); then it is SIGKILLed and STATUS-COMMAND... must say free.
kill_the_holder() {
    local user=$1 holder
    shift
    holder=$(wait_holder nightly-report)
    check "a worker holds the claim during a long report" test -n "$holder"
    [ "$user" = - ] || check "the holder runs as $user" bash -c "[ \$(stat -c %U /proc/$holder) = $user ]"
    expect_freed_after_kill "$holder" "$@"
}

# The PHP tests' document root: the binding and the report script.  PHP
# dlopens its extensions with RTLD_DEEPBIND, which the ASan runtime refuses
# (google/sanitizers#611): PHP servers run in the plain build only.
php_www() {
    if [ -n "${SCL_ASAN_RUNTIME:-}" ]; then
        echo "SKIP: PHP cannot load its extensions with the ASan runtime preloaded (RTLD_DEEPBIND)"
        exit 77
    fi
    www=$work/www
    mkdir "$www"
    cp "$SCL_SRCDIR/bindings/php/Swerve.php" "$SCL_SRCDIR/tests/real-servers/fpm_report.php" "$www/"
    chmod -R a+rX "$www"
}

# How many claim directories the base holds.
claim_dirs() { ls -d "$base"/swerve-claim.* 2>/dev/null | wc -l; }

# A round on PORT: exactly one of 8 concurrent /report requests runs the
# report, and the claim is free once it is done.
report_round() { # PORT WHAT
    check "$2: exactly one of 8 concurrent requests runs the report" exactly_one_runs "$1" /report
    check "$2: the claim is free once the report is done" wait_status "$1" free 5 >/dev/null
}

# A long report on PORT whose holder is SIGKILLed: its claim is free once
# the master has reaped it, and the report runs again in another worker.
killed_mid_report() { # PORT
    get "$1" "/report?seconds=30" >/dev/null &
    kill_the_holder - get "$1" /status
    check "the report runs again in another worker" \
        bash -c "curl -s --max-time 10 'http://127.0.0.1:$1/report?seconds=0' | grep -q 'runs the report'"
}

no_claim_dir_left() { [ -z "$(ls -A "$base")" ] || { ls -laR "$base" >&2; return 1; }; }

# The pids of PID's children (its workers), one a line, sorted.
children_of() { pgrep -P "$1" | sort; }

# Waits (at most 30 s) until MASTER has COUNT children, none of them one of
# OLD (a list of pids, one a line): its workers replaced after a reload.
workers_replaced() { # MASTER COUNT OLD
    local now
    for _ in $(seq 300); do
        now=$(children_of "$1")
        [ "$(grep -c . <<<"$now")" -eq "$2" ] && [ -z "$(comm -12 <(echo "$now") <(echo "$3"))" ] && return 0
        sleep 0.1
    done
    echo "workers of $1 not replaced: before $(echo $3), now $(echo $now)" >&2
    return 1
}

# SIGNAL to MASTER, a reload: its COUNT workers are replaced.
reload_replaces_workers() { # MASTER SIGNAL COUNT
    local old
    old=$(children_of "$1")
    kill -"$2" "$1"
    check "a reload (SIG$2) replaces the $3 workers" workers_replaced "$1" "$3" "$old"
}

# Waits (at most 15 s) until none of PIDS is left, once a stopped master's
# workers are nobody's children to wait for.
all_gone() { # PID...
    for _ in $(seq 150); do
        kill -0 "$@" 2>/dev/null || return 0
        sleep 0.1
    done
    ps -o pid,ppid,stat,args -p "$(echo "$@" | tr ' ' ,)" >&2
    return 1
}

# No process left whose command line has PATTERN (fixed) in it.
no_process_left() { # PATTERN
    ! pgrep -a -f -- "$1" >&2
}

# The shim wrote nothing and no worker crashed, by the server's error log
# (the worker we SIGKILLed on purpose aside).
log_is_clean() {
    local log=$1
    ! grep -E "swerve-claim\[|Traceback|Segmentation|segfault|core dumped|AddressSanitizer" "$log" >&2
}

# A php-fpm pool of four www-data workers on 127.0.0.1:PORT, with FFI (the
# claims' binding) and clear_env = yes, php-fpm's default, said: the
# children's environment is wiped (with the claims in PostgreSQL,
# PGPASSFILE and SWERVE_CLAIM_STORE reach them only through what the
# library read in the master).  A reload or a stop gives its children 10 s
# to finish (process_control_timeout; by default none: SIGTERM follows
# SIGQUIT at once, and no worker drains).  Written to FILE.
fpm_pool_conf() { # FILE PORT
    cat >"$1" <<CONF
[global]
pid = $work/php-fpm.pid
error_log = $work/error.log
daemonize = no
process_control_timeout = 10s

[claims]
user = www-data
group = www-data
listen = 127.0.0.1:$2
pm = static
pm.max_children = 4
catch_workers_output = yes
php_admin_value[ffi.enable] = 1
clear_env = yes
CONF
}

# Through FastCGI to the pool on $port: QUERY is fpm_report.php's query
# string (in $www).
fcgi() { # QUERY
    SCRIPT_FILENAME=$www/fpm_report.php REQUEST_METHOD=GET QUERY_STRING=$1 \
        timeout 40 cgi-fcgi -bind -connect "127.0.0.1:$port" 2>/dev/null | sed '1,/^\r\{0,1\}$/d'
}
status() { fcgi status; }
wait_fpm() {
    for _ in $(seq 200); do [ -n "$(status)" ] && return 0; sleep 0.1; done
    return 1
}

# Draining (#23): HOLD (a command: a request to the server's route that
# takes the claim "leader" and asks swerve_claim_draining() every 5 ms;
# it answers "drained PID NS [TOLD_NS]" once it is 1: when it saw it, and
# when the server itself told the worker, where the app can tell) runs in
# the background; once a worker holds the claim, RELOAD... reloads the
# server.  The holder must see it within 100 ms (of the server's own word
# to it when given, else of the reload) and let go, and TAKE (a command: a
# request that takes the claim and answers "took PID") must find it in
# another worker.  The latency is printed.
drain_check() { # HOLD TAKE RELOAD...
    local hold=$1 take=$2 holder start answer seen_pid seen told ms took
    shift 2
    "$hold" >"$work/hold.out" 2>&1 &
    holder=$(wait_holder leader)
    check "a worker holds 'leader' and asks draining()" test -n "$holder"
    check "(and it does not drain before the reload)" bash -c "! grep -q . '$work/hold.out'"
    start=$(now_ns)
    "$@"
    for _ in $(seq 400); do
        grep -q '^drained ' "$work/hold.out" && break
        sleep 0.05
    done
    answer=$(grep '^drained ' "$work/hold.out")
    if [ -z "$answer" ]; then
        fail "the holder never saw draining() say 1 after the reload: $(cat "$work/hold.out")"
        return
    fi
    read -r _ seen_pid seen told <<<"$answer"
    check "the holder saw draining() say 1: worker $holder" test "$seen_pid" = "$holder"
    ms=$(( (seen - start) / 1000000 ))
    if [ -n "$told" ]; then
        echo "draining seen $(( (seen - told) / 1000000 )) ms after the server told the worker, $ms ms after the reload"
        check "within 100 ms of the server's word to the worker" test $(( (seen - told) / 1000000 )) -le 100
    else
        echo "draining seen $ms ms after the reload"
        check "within 100 ms of the reload" test "$ms" -le 100
    fi
    for _ in $(seq 100); do
        took=$("$take" 2>/dev/null)
        case $took in "took "*) break ;; esac
        sleep 0.1
    done
    check "a new worker takes the claim once it let go ($took)" \
        bash -c "[ '${took%% *}' = took ] && [ '${took#took }' != '$holder' ] && [ -n '${took#took }' ]"
}

# Takes PIDS off server_pids once they are gone: the cleanup at exit then
# sends nothing to a number that may have been given to another process.
forget_pids() { # PID...
    local keep=() p q
    for p in "${server_pids[@]}"; do
        for q; do [ "$p" = "$q" ] && continue 2; done
        keep+=("$p")
    done
    server_pids=("${keep[@]}")
}

# PID's parent, or nothing (no such process, no PID).
parent_of() { [ -n "$1" ] && ps -o ppid= -p "$1" | tr -d ' '; }

# Draining on a stop, for masters that start no new workers (uvicorn,
# hypercorn): HOLD (a command: a request that takes the claim "leader",
# asks swerve_claim_draining() every 5 ms and says "drained PID NS
# [TOLD_NS]" once it is 1, on its standard output or in $work/drained, as
# a stopping server may drop the answer) runs in the background; once a
# worker holds the claim, SIGNAL goes to MASTER.  The holder must see it
# within 100 ms of the server's own word to the worker where the app can
# tell (before it, when the library learns it from the master's kill()),
# else within LIMIT ms of the signal, and the master and every child it
# had must be gone within 15 s.  The latencies are printed.
drain_on_stop() { # HOLD MASTER SIGNAL LIMIT
    local hold=$1 master=$2 signal=$3 limit=$4 holder children start answer seen_pid seen told ms
    : >"$work/drained"
    "$hold" >"$work/hold.out" 2>&1 &
    holder=$(wait_holder leader)
    check "a worker holds 'leader' and asks draining()" test -n "$holder"
    check "(a worker of this master)" test "$(parent_of "$holder")" = "$master"
    check "(and it does not drain before the stop)" bash -c "! grep -q . '$work/hold.out' '$work/drained'"
    children=$(children_of "$master")
    start=$(now_ns)
    kill -"$signal" "$master"
    for _ in $(seq 100); do
        grep -q '^drained ' "$work/hold.out" "$work/drained" && break
        sleep 0.05
    done
    answer=$(cat "$work/hold.out" "$work/drained" | grep -m1 '^drained ')
    if [ -z "$answer" ]; then
        fail "the holder never saw draining() say 1 after SIG$signal to the master: $(cat "$work/hold.out" "$work/drained")"
    else
        read -r _ seen_pid seen told <<<"$answer"
        check "the holder saw draining() say 1: worker $holder" test "$seen_pid" = "$holder"
        ms=$(( (seen - start) / 1000000 ))
        if [ -n "$told" ]; then
            echo "draining seen $(( (seen - told) / 1000000 )) ms after the worker's SIGTERM reached its app, $ms ms after SIG$signal to the master"
            check "within 100 ms of the server's word to the worker" test $(( (seen - told) / 1000000 )) -le 100
        else
            echo "draining seen $ms ms after SIG$signal to the master"
            check "within $limit ms of SIG$signal to the master" test "$ms" -le "$limit"
        fi
    fi
    if all_gone "$master"; then pass; forget_pids "$master"; else fail "the master stops (SIG$signal)"; fi
    if all_gone $children; then pass; forget_pids $children; else fail "no worker left"; fi
}

# Waits (at most 20 s) until MASTER has N workers as LISTER lists its
# children (children_of by default); they are stopped at exit too, should
# the master not stop them.
wait_workers() { # MASTER N [LISTER]
    local lister=${3:-children_of}
    for _ in $(seq 200); do
        if [ "$("$lister" "$1" | grep -c .)" -eq "$2" ]; then
            server_pids+=($(children_of "$1"))
            return 0
        fi
        sleep 0.1
    done
    ps -o pid,ppid,args --ppid "$1" >&2
    return 1
}

# How many claim directories `swerve-claim list` shows under $base.
listed_dirs() {
    "$SCL_HELPERS/../swerve-claim" --base "$base" list --raw --noheadings -o TYPE | grep -cx dir
}

# While a long report runs on PORT: one claim directory, by the tool and
# under the base, and the report's holder is a worker of MASTER.
one_dir_while_running() { # PORT MASTER
    local holder
    get "$1" "/report?seconds=3" >/dev/null &
    holder=$(wait_holder nightly-report)
    check "a worker of the master holds the report's claim" \
        test -n "$holder" -a "$(parent_of "$holder")" = "$2"
    check "swerve-claim list shows one claim directory while the server runs ($(listed_dirs))" \
        test "$(listed_dirs)" -eq 1
    check "one claim directory under the base ($(claim_dirs))" test "$(claim_dirs)" -eq 1
    check "the claim is free once the report is done" wait_status "$1" free 6 >/dev/null
}

# The start of a private Apache configuration: its pid file, mutexes and
# runtime files in $work, its error log $work/LOG, www-data's children.
apache_conf_head() { # LOG
    cat <<CONF
ServerRoot /etc/apache2
ServerName localhost
PidFile $work/apache2.pid
Mutex file:$work default
DefaultRuntimeDir $work
User www-data
Group www-data
ErrorLog $work/$1
LogLevel info
CONF
}

# Apache prefork with mod_php, 8 to 10 children, on 127.0.0.1:PORT,
# serving $www (php_www), its error log $work/LOG; the modules named
# after, from Apache's modules folder, too.
apache_php_conf() { # PORT LOG [MODULE...]
    local port=$1 log=$2 module
    shift 2
    apache_conf_head "$log"
    echo "LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so"
    for module in authz_core mime "$@"; do
        echo "LoadModule ${module}_module /usr/lib/apache2/modules/mod_$module.so"
    done
    cat <<CONF
LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so
TypesConfig /etc/mime.types
Listen 127.0.0.1:$port
StartServers 8
MinSpareServers 8
MaxSpareServers 10
MaxRequestWorkers 10
DocumentRoot $www
<Directory $www>
    Require all granted
</Directory>
<FilesMatch "\.php$">
    SetHandler application/x-httpd-php
</FilesMatch>
php_admin_value ffi.enable 1
CONF
}

# nginx's server block on 127.0.0.1:PORT for nginx_report.lua's routes.
nginx_report_server() { # PORT
    cat <<CONF
    server {
        listen 127.0.0.1:$1;
        location = /report { content_by_lua_block { report() } }
        location = /status { content_by_lua_block { status() } }
        location = /hold { content_by_lua_block { hold() } }
        location = /take { content_by_lua_block { take() } }
        location / { return 200 "ok\n"; }
    }
CONF
}

# Coroutines that wait for a claim (#39, asgi_wait_app.py and
# wait_probe.py): six concurrent /report on PORT, each waiting up to 5 s
# for the claim and holding it 0.4 s, and a /ping every 50 ms meanwhile:
# every report runs, no two overlap, no ping takes more than 100 ms.  The
# probe's figures are printed.
waiting_reports() { # PORT WHAT
    local status
    /usr/bin/python3 "$SCL_SRCDIR/tests/real-servers/wait_probe.py" "$1" >"$work/probe.out" 2>"$work/probe.err"
    status=$?
    echo "$2: $(tr '\n' ' ' <"$work/probe.out")"
    check "$2: six waiting reports run one at a time, and no ping waits behind them (>100 ms)$(sed 's/^/; /' "$work/probe.err" | tr -d '\n')" \
        test $status -eq 0
}

# Every answer of 8 to /loop on PORT names LOOP's loop (uvloop's, or
# asyncio's own).
runs_loop() { # PORT LOOP
    local answers
    answers=$(for _ in $(seq 8); do get "$1" /loop; done)
    case $2 in
    uvloop) [ "$(grep -c '^uvloop\.' <<<"$answers")" -eq 8 ] ;;
    asyncio) [ "$(grep -c '^asyncio\.' <<<"$answers")" -eq 8 ] ;;
    esac || { echo "loops: $answers" >&2; return 1; }
}

# uvicorn-wait.sh's and hypercorn-wait.sh's rounds, with the caller's
# start LOOP [blocking] and stop: waiting_reports under the loops FIRST and
# SECOND, then the control, the same probe against the blocking
# acquire(5.0) under FIRST, which must fail it.
waiting_reports_in_loops() { # SERVER FIRST SECOND
    local server=$1 loop
    for loop in "$2" "$3"; do
        start "$loop"
        check "the workers run $loop's loop" runs_loop "$port" "$loop"
        waiting_reports "$port" "$server, $loop"
        stop
    done
    start "$2" blocking
    /usr/bin/python3 "$SCL_SRCDIR/tests/real-servers/wait_probe.py" "$port" >"$work/probe.out" 2>"$work/probe.err"
    echo "control, blocking acquire(5.0): $(tr '\n' ' ' <"$work/probe.out")"
    sed 's/^/control: /' "$work/probe.err"
    check "control: the blocking acquire(5.0) stalls the pings or gives reports up" \
        grep -Eq 'pings took more than|reports ran' "$work/probe.err"
    stop
}
