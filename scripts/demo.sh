#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job: a small, unmodified prefork server of ours (tests/prefork/
# prefork_server.c) runs under the shim on 127.0.0.1, and concurrent
# requests show the seed's nightly-report behaviour: one worker runs the
# report, the others hear that someone else is on it; when it is done the
# name is free again; when the server stops, no claim directory is left.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh" --demo
"$top/scripts/build.sh" "$top/_build" --enable-werror

build=$top/_build
make -C "$build" -s tests/prefork/prefork_server >/dev/null
lib=$build/.libs/libswerveclaim_preload.so
work=$(mktemp -d /tmp/swerve-claim-demo.XXXXXX)
server_pid=
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# wait_for_file: the tests' own (tests/packaging/deb.sh runs this demo on
# the installed packages).
. "$top/tests/lib/prefork.sh"

mkdir "$work/base"
echo "== starting: LD_PRELOAD=libswerveclaim_preload.so prefork_server --workers 4 (127.0.0.1)"
SWERVE_TMPDIR=$work/base LD_PRELOAD=$lib \
    "$build/tests/prefork/prefork_server" --workers 4 --report-ms 1500 \
    --port-file "$work/port" --pid-file "$work/pid" &
server_pid=$!
wait_for_file "$work/pid"
port=$(cat "$work/port")
echo "   master pid $server_pid, port $port"

echo
echo "== 8 concurrent GET /report"
for i in $(seq 8); do
    curl -s --max-time 10 "http://127.0.0.1:$port/report" >"$work/reply.$i" &
done
wait $(jobs -p | grep -v "^$server_pid\$") 2>/dev/null || true
sort "$work"/reply.* | sed 's/^/   /'
runs=$(cat "$work"/reply.* | grep -c "runs the report" || true)

claims=$(ls -d "$work"/base/swerve-claim.*/claims)
echo
echo "== while the report runs, the claim directory (ls -l, cat):"
ls -l "$claims" | sed 's/^/   /'
echo "   \$ cat claims/nightly-report"
sed 's/^/   /' "$claims/nightly-report"
echo "   GET /status: $(curl -s --max-time 5 "http://127.0.0.1:$port/status")"
echo
echo "== the same, as an operator sees it: swerve-claim list"
"$build/swerve-claim" --base "$work/base" list | sed 's/^/   /'

for _ in $(seq 50); do
    [ "$(curl -s --max-time 5 "http://127.0.0.1:$port/status")" = "free" ] && break
    sleep 0.1
done
echo
echo "== after the report: GET /status: $(curl -s --max-time 5 "http://127.0.0.1:$port/status")"
echo "   GET /report: $(curl -s --max-time 10 "http://127.0.0.1:$port/report")"

echo
echo "== stopping the master (SIGTERM to pid $server_pid)"
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=
left=$(ls -A "$work/base")
echo "   claim directories left behind: ${left:-none}"

echo
if [ "$runs" -eq 1 ] && [ -z "$left" ]; then
    echo "demo: ok: exactly one worker ran the report, and the server left nothing behind"
else
    echo "demo: FAILED: $runs workers ran the report; left behind: ${left:-none}" >&2
    exit 1
fi
