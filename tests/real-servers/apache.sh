#!/bin/bash
# SPDX-License-Identifier: MIT
# Debian's Apache 2.4, prefork with mod_php, unmodified: `-k start` (a
# launcher that exits at once), children that drop to www-data, FFI on
# for PHP: the PHP binding runs the seed's nightly-report pattern, exactly
# one of 8 concurrent requests runs it; a SIGKILLed holder's claim is free
# at once (its holder is dead, and Apache reaps it within its 1 s poll);
# a graceful restart (SIGUSR1, what apache2 -k graceful sends: each child
# is sent SIGUSR1 and closes its listeners) drains a leader, which lets go
# within 100 ms, and a child of the new generation takes its claim;
# graceful-stop leaves no claim directory; the error log shows nothing of
# the shim and no crashed child.
set -u
. "$(dirname "$0")/lib.sh"
php_www # says SKIP in a sanitizer build
need_packages apache2 libapache2-mod-php8.2 curl

port=$(free_port)
apache_php_conf "$port" error.log >"$work/httpd.conf"

master() { cat "$work/apache2.pid" 2>/dev/null; }
status() { get "$port" "/fpm_report.php?status"; }

check "the configuration is valid" bash -c "apache2 -f '$work/httpd.conf' -t 2>/dev/null"
SWERVE_TMPDIR=$base LD_PRELOAD=$preload apache2 -f "$work/httpd.conf" -k start
check "the launcher exited and Apache answers" wait_port "$port"
server_pids+=("$(master)")

check "exactly one of 8 concurrent requests runs the report" exactly_one_runs "$port" "/fpm_report.php?seconds=1.5"
get "$port" "/fpm_report.php?seconds=30" >/dev/null &
kill_the_holder www-data status
check "another request runs the report" bash -c "curl -s --max-time 10 'http://127.0.0.1:$port/fpm_report.php?seconds=0' | grep -q 'runs the report'"
hold() { get "$port" "/fpm_report.php?hold"; }
take() { get "$port" "/fpm_report.php?take"; }
drain_check hold take kill -USR1 "$(master)"
check "graceful-stop (SIGWINCH)" stop_pid "$(master)" WINCH 20
check "no claim directory left" no_claim_dir_left
check "the log is Apache's" grep -q "resuming normal operations" "$work/error.log"
check "the shim wrote nothing to the log, no child crashed" \
    bash -c "! grep -E 'swerve-claim\[|Segmentation|exit signal|AddressSanitizer' '$work/error.log' >&2"
finish
