#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's php-fpm 8.2, unmodified: a root master, pm = static with 4
# children that drop to www-data and wipe their environment (clear_env =
# yes, the default), FFI enabled for the pool only; requests through
# cgi-fcgi.  The PHP
# binding runs the seed's nightly-report pattern: exactly one of 8
# concurrent requests runs it; a SIGKILLed holder's claim is free once the
# master has reaped it and the report runs again; a reload (SIGUSR2:
# SIGQUIT to each child, then the master re-execs itself) drains a leader,
# which lets go within 100 ms, and a child of the new generation takes its
# claim; a graceful stop (SIGQUIT) leaves no claim directory; the shim
# writes nothing to the log.
set -u
. "$(dirname "$0")/lib.sh"
php_www # says SKIP in a sanitizer build
need_packages php8.2-fpm libfcgi-bin curl

port=$(free_port)
fpm_pool_conf "$work/php-fpm.conf" "$port"
workers_run_as www-data


SWERVE_TMPDIR=$base LD_PRELOAD=$preload php-fpm8.2 -R -F -y "$work/php-fpm.conf" >"$work/stdout.log" 2>&1 &
master=$!
server_pids+=("$master")
check "php-fpm answers on 127.0.0.1:$port" wait_fpm

for i in $(seq 8); do fcgi seconds=1.5 >"$work/answer.$i" & done
wait $(jobs -p | grep -vx "$master") 2>/dev/null
check "exactly one of 8 concurrent requests runs the report" \
    bash -c "[ \$(cat '$work'/answer.* | grep -c 'runs the report') -eq 1 ] && [ \$(cat '$work'/answer.* | grep -c 'someone else is on it') -eq 7 ]"

fcgi seconds=30 >/dev/null &
kill_the_holder www-data status
check "another request runs the report" bash -c "SCRIPT_FILENAME='$www/fpm_report.php' REQUEST_METHOD=GET QUERY_STRING=seconds=0 timeout 20 cgi-fcgi -bind -connect 127.0.0.1:$port | grep -q 'runs the report'"
hold() { fcgi hold; }
take() { fcgi take; }
drain_check hold take kill -USR2 "$master"
check "a graceful stop (SIGQUIT)" stop_pid "$master" QUIT
check "no claim directory left" no_claim_dir_left
check "php-fpm's log saw the kill" grep -q "signal 9" "$work/error.log"
check "the shim wrote nothing to php-fpm's log, no child crashed" \
    bash -c "! grep -E 'swerve-claim\[|SIGSEGV|Segmentation|core dumped|AddressSanitizer' '$work/error.log' >&2"
finish
