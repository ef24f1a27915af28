#!/bin/bash
# SPDX-License-Identifier: MIT
# Apache mpm_event + mod_wsgi (threaded children) under the shim: exactly-once reports, kills, a drained leader, a clean stop.
# Debian's Apache 2.4 with mpm_event and mod_wsgi (embedded: the WSGI app
# runs in Apache's own children, 8 threads each, as www-data), `-k start`
# (a launcher that exits at once), the app using the Python binding
# (gunicorn_app.py): exactly one of 8 concurrent requests runs the
# nightly report, threads of one child and children of the server alike;
# a SIGKILLed holder's claim is free (its holder is dead; Apache reaps it
# within its 1 s poll) and the report runs again; a graceful restart
# (SIGUSR1, what apache2 -k graceful sends) drains a leader, which lets go
# within 100 ms, and a child of the new generation takes its claim; one
# claim directory throughout; graceful-stop (SIGWINCH) leaves no claim
# directory; the error log shows nothing of the shim and no crashed child.
set -u
. "$(dirname "$0")/lib.sh"
need_packages apache2 libapache2-mod-wsgi-py3 curl

port=$(free_port)
# The app and the binding where www-data can read them.
app=$work/wsgi
mkdir "$app"
cp "$SCL_SRCDIR/tests/real-servers/gunicorn_app.py" "$SCL_SRCDIR/bindings/python/swerve_claim.py" "$app/"
chmod -R a+rX "$app"
{
    apache_conf_head error.log
    cat <<CONF
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule wsgi_module /usr/lib/apache2/modules/mod_wsgi.so
Listen 127.0.0.1:$port
StartServers 2
ServerLimit 4
ThreadsPerChild 8
ThreadLimit 8
MaxRequestWorkers 32
MinSpareThreads 8
MaxSpareThreads 24
WSGIPythonPath $app
WSGIScriptAlias / $app/gunicorn_app.py
WSGICallableObject app
# Without it a child that served Python hangs as it exits (a graceful
# restart or stop: its Python waits for the thread states of Apache's
# threads, GrahamDumpleton/mod_wsgi#730), with or without the shim, until
# the master SIGKILLs it at a hard stop.
WSGIDestroyInterpreter Off
<Directory $app>
    Require all granted
</Directory>
CONF
} >"$work/httpd.conf"

master() { cat "$work/apache2.pid" 2>/dev/null; }
status() { get "$port" /status; }

check "the configuration is valid" bash -c "apache2 -f '$work/httpd.conf' -t 2>/dev/null"
SWERVE_TMPDIR=$base LD_PRELOAD=$preload apache2 -f "$work/httpd.conf" -k start
check "the launcher exited and Apache answers" wait_port "$port"
server_pids+=("$(master)")
check "its children are threaded (8 threads or more), as www-data" bash -c "for c in \$(pgrep -P $(master)); do
    [ \$(ls /proc/\$c/task | wc -l) -ge 8 ] && [ \$(stat -c %U /proc/\$c) = www-data ] || exit 1; done"

report_round "$port" "first round"
check "(threads: one child answered two or more of the 8 at once)" \
    bash -c "cat '$work'/answer.* | awk '{ print \$2 }' | tr -d : | sort | uniq -c | awk '\$1 >= 2 { ok = 1 } END { exit !ok }'"
check "one claim directory" test "$(claim_dirs)" -eq 1
get "$port" "/report?seconds=30" >/dev/null &
kill_the_holder www-data status
check "the report runs again in another child" \
    bash -c "curl -s --max-time 10 'http://127.0.0.1:$port/report?seconds=0' | grep -q 'runs the report'"
report_round "$port" "after the kill"
hold() { get "$port" /hold; }
take() { get "$port" /take; }
drain_check hold take kill -USR1 "$(master)"
report_round "$port" "after the graceful restart"
check "still one claim directory" test "$(claim_dirs)" -eq 1
m=$(master)
children=$(children_of "$m")
check "graceful-stop (SIGWINCH)" stop_pid "$m" WINCH 20
if all_gone "$m" $children; then pass; forget_pids "$m"; else fail "its children are gone"; fi
check "no claim directory left" no_claim_dir_left
check "the log is Apache's, with mod_wsgi" \
    bash -c "grep -q 'resuming normal operations' '$work/error.log' && grep -q 'mod_wsgi' '$work/error.log'"
check "the shim wrote nothing to the log, no child crashed (but the one killed)" \
    bash -c "! grep -E 'swerve-claim\[|Segmentation|exit signal|Traceback|AddressSanitizer' '$work/error.log' | grep -v 'exit signal Killed' >&2"
[ "$failed" -eq 0 ] || tail -n 30 "$work/error.log" >&2
finish
