#!/bin/bash
# SPDX-License-Identifier: MIT
# php-fpm 8.2 as a systemd service with the shipped drop-in
# (doc/systemd/swerve-claim.conf) and the claims in PostgreSQL: the unit's
# Environment= gives the URI without the password, its EnvironmentFile=
# gives PGPASSFILE, nothing else does (the pool's children wipe theirs:
# clear_env = yes).  Exactly one of 8 concurrent requests runs the report;
# a SIGKILLed holder's claim is free; after the unit's ExecReload (SIGUSR2:
# the master re-execs itself) exactly one runs again; a stop (SIGTERM, as
# systemd sends) leaves no claim held.
#
# systemd is not PID 1 in the test machines, and a user manager does not
# start there (tests/packaging/systemd-units.sh runs units under a manager
# of its own, tests/lib/systemd.sh): here the unit and its drop-ins pass
# systemd-analyze verify, and the test starts ExecStart itself with the
# environment those files give and nothing else (env -i; Environment=
# lines, then EnvironmentFile=, in drop-in order, %t as the runtime
# directory, %N as the unit's name; no HOME, as for a unit without
# User=), in a session of its own, stdin /dev/null.  What systemd adds beyond that (INVOCATION_ID,
# JOURNAL_STREAM, a cgroup) does not reach libpq.
set -u
. "$(dirname "$0")/lib.sh"
if [ -z "${SWERVE_CLAIM_STORE:-}" ]; then
    echo "SKIP: run as tests/pg/systemd-server.sh (the claims in PostgreSQL)"
    exit 77
fi
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
php_www # says SKIP in a sanitizer build
need_packages php8.2-fpm libfcgi-bin
workers_run_as www-data

port=$(free_port)
fpm_pool_conf "$work/php-fpm.conf" "$port"

units=$work/units
mkdir -p "$units/scl-fpm.service.d" "$work/run"
cat >"$units/scl-fpm.service" <<UNIT
[Unit]
Description=php-fpm under the claim shim (tests/real-servers/systemd.sh)

[Service]
Type=simple
ExecStart=/usr/sbin/php-fpm8.2 --nodaemonize --fpm-config $work/php-fpm.conf
ExecReload=/bin/kill -USR2 \$MAINPID
UNIT
cp "$SCL_HELPERS/../doc/systemd/swerve-claim.conf" "$units/scl-fpm.service.d/50-swerve-claim.conf"
# The claims across machines, as doc/cluster.md says: the URI without the
# password, the password file named in a file of the admin's.
echo "PGPASSFILE=$PGPASSFILE" >"$work/claims.env"
cat >"$units/scl-fpm.service.d/60-claims.conf" <<UNIT
[Service]
Environment=SWERVE_CLAIM_STORE=$SWERVE_CLAIM_STORE
EnvironmentFile=$work/claims.env
UNIT
# The shim of this build, not the installed one the shipped drop-in names.
printf '[Service]\nEnvironment=LD_PRELOAD=%s\n' "$preload" >"$units/scl-fpm.service.d/90-this-build.conf"

(cd "$units" && SYSTEMD_UNIT_PATH="$units:" systemd-analyze verify scl-fpm.service) >"$work/verify.out" 2>&1
check "the unit and its drop-ins pass systemd-analyze verify" bash -c "! grep -E 'scl-fpm|\\.conf' '$work/verify.out' >&2"

# The environment the unit gives, as "K=V" lines; and its ExecStart.
unit_env() {
    python3 - "$units" "$work/run" <<'PY'
import glob, os, shlex, sys
units, runtime = sys.argv[1], sys.argv[2]
files = [os.path.join(units, "scl-fpm.service")] + sorted(glob.glob(os.path.join(units, "scl-fpm.service.d", "*.conf")))
env, env_files = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, []
spec = lambda v: v.replace("%t", runtime).replace("%N", "scl-fpm").replace("%%", "%")
for f in files:
    for line in open(f):
        line = line.strip()
        if line.startswith("Environment="):
            for kv in shlex.split(spec(line[len("Environment="):])):
                k, _, v = kv.partition("=")
                env[k] = v
        elif line.startswith("EnvironmentFile="):
            env_files.append(spec(line[len("EnvironmentFile="):]))
for f in env_files:  # applied after Environment=, as systemd does
    optional = f.startswith("-")
    if optional and not os.path.exists(f[1:]):
        continue
    for line in open(f.lstrip("-")):
        line = line.strip()
        if line and not line.startswith(("#", ";")):
            k, _, v = line.partition("=")
            env[k.strip()] = v.strip().strip('"')
for k, v in env.items():
    print(f"{k}={v}")
PY
}
exec_start() { sed -n 's/^ExecStart=//p' "$units/scl-fpm.service"; }
mapfile -t environment < <(unit_env)
check "the unit gives the URI without a password and PGPASSFILE, no PGPASSWORD" bash -c '
    printf "%s\n" "$@" | grep -qx "SWERVE_CLAIM_STORE=$SWERVE_CLAIM_STORE" &&
    printf "%s\n" "$@" | grep -qx "PGPASSFILE=$PGPASSFILE" &&
    ! printf "%s\n" "$@" | grep -q "^PGPASSWORD=" && [[ $SWERVE_CLAIM_STORE != *:*:*@* ]]' - "${environment[@]}"
mkdir -p "$work/run/swerve-claim/scl-fpm" # RuntimeDirectory=swerve-claim/%N

exactly_one_fpm() {
    rm -f "$work"/answer.*
    for i in $(seq 8); do fcgi seconds=1.5 >"$work/answer.$i" & done
    wait $(jobs -p | grep -vx "$master") 2>/dev/null
    [ "$(cat "$work"/answer.* | grep -c 'runs the report')" -eq 1 ] &&
        [ "$(cat "$work"/answer.* | grep -c 'someone else is on it')" -eq 7 ] ||
        { echo "answers: $(cat "$work"/answer.*)" >&2; return 1; }
}

# shellcheck disable=SC2046
setsid env -i "${environment[@]}" $(exec_start) </dev/null >"$work/stdout.log" 2>&1 &
master=$!
server_pids+=("$master")
check "php-fpm answers on 127.0.0.1:$port" wait_fpm
check "exactly one of 8 concurrent requests runs the report" exactly_one_fpm

fcgi seconds=30 >/dev/null &
kill_the_holder www-data status
check "another request runs the report" bash -c "[ \"\$(SCRIPT_FILENAME='$www/fpm_report.php' REQUEST_METHOD=GET QUERY_STRING=seconds=0 timeout 20 cgi-fcgi -bind -connect 127.0.0.1:$port | grep -c 'runs the report')\" -eq 1 ]"

# systemctl reload: ExecReload's SIGUSR2 to $MAINPID.
kill -USR2 "$master"
check "after the reload (SIGUSR2: php-fpm re-execs itself) it answers" wait_fpm
check "the master kept its pid" kill -0 "$master"
check "after the reload exactly one of 8 runs the report" exactly_one_fpm

check "a stop (SIGTERM, as systemctl stop sends)" stop_pid "$master" TERM
check "no claim held in the database after the stop" test -z "$(holder_of nightly-report)"
check "php-fpm's log saw the kill" grep -q "signal 9" "$work/error.log"
check "php-fpm's log saw the reload" grep -qi "reloading" "$work/error.log"
check "the shim wrote nothing to php-fpm's log, no child crashed" \
    bash -c "! grep -E 'swerve-claim\\[|SIGSEGV|Segmentation|core dumped|AddressSanitizer' '$work/error.log' >&2"
finish
