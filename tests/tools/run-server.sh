#!/bin/bash
# SPDX-License-Identifier: MIT
# Which server `swerve-claim run` joins, and how --server names one (#41):
# without --server, a worker's run joins the worker's server; any other
# joins the one live server under the base (a cron job then excludes the
# server's workers), refuses when there are several (naming them) and
# keeps to the user's own namespace with --own-namespace; --server takes
# a master's pid, a pidfile or a systemd unit; history and list name each
# row's server when rows of more than one are shown.  Run as root by `make check`, and as nobody by
# tool-unprivileged.sh; what needs root (a cgroup, another user's server)
# is root's only.  Every process started here is killed by pid at the end.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
tool=${SCL_HELPERS:?run through make check}/../swerve-claim
preload=${SCL_PRELOAD:?run through make check}
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$preload
work=$(mktemp -d)
chmod 755 "$work"
pids=()
unit_dir=
cleanup() {
    kill_pids "${pids[@]}"
    if [ -n "$unit_dir" ]; then
        cat "$unit_dir/cgroup.procs" 2>/dev/null >/sys/fs/cgroup/systemd/cgroup.procs
        rmdir "$unit_dir" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# A server under BASE: a preloaded python3 master (LD_PRELOAD on python
# itself) whose worker holds NAME; both end by themselves in 60 s.  Prints
# the master's pid once the claim is listed.
start_server() { # BASE NAME
    local master
    SWERVE_TMPDIR=$1 LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
        /usr/bin/python3 -c '
import os, sys, time
import swerve_claim
if os.fork() == 0:
    held = swerve_claim.Claim(sys.argv[1].encode())
    held.acquire()
    time.sleep(60)
    os._exit(0)
time.sleep(60)' "$2" >/dev/null 2>&1 &
    master=$!
    for _ in $(seq 100); do
        "$tool" --base "$1" list --server "$master" --raw --noheadings -o TYPE,NAME 2>/dev/null |
            grep -qx "claim $2" && break
        sleep 0.05
    done
    echo "$master"
}

name=nightly-$$
one=$work/one
mkdir "$one"
m1=$(start_server "$one" "$name")
pids+=("$m1" $(pgrep -P "$m1"))
sc() { "$tool" --base "$one" "$@"; }
check "the server under the base holds $name" \
    bash -c "'$tool' --base '$one' list --raw --noheadings -o TYPE,NAME | grep -qx 'claim $name'"
check "run without --server joins the one live server: its worker's name is busy (75)" \
    status_is 75 sc run "$name" -- true
check "... and the command's claim is the server's (list --server MASTER shows it)" \
    bash -c "'$tool' --base '$one' run $name-other -- '$tool' --base '$one' list --server $m1 --raw --noheadings -o TYPE,NAME | grep -qx 'claim $name-other'"
check "run --verbose says which server it joined" \
    bash -c "'$tool' --base '$one' run --verbose $name-v -- true 2>&1 | grep -q 'joined the server of process $m1, the one live server in $one'"
check "run --own-namespace keeps to the user's own namespace: the name is free there (0)" \
    status_is 0 sc run --own-namespace "$name" -- true
check "--own-namespace with --server is a usage error (2)" \
    status_is 2 sc run --own-namespace --server "$m1" "$name" -- true

# history and list: which server each row is from, once rows of more
# than one are shown (the server's worker's hold, and run's own one).
check "history NAME, rows of two servers: a SERVER column" \
    bash -c "'$tool' --base '$one' history $name | head -1 | grep -qw SERVER"
check "... naming the server by its master ($(sc history --raw --noheadings -o NAME,SERVER "$name" | tr '\n' ' '))" \
    bash -c "'$tool' --base '$one' history --raw --noheadings -o NAME,SERVER $name | grep -qx '$name python3\[$m1\]'"
check "... and run's own namespace as run" \
    bash -c "'$tool' --base '$one' history --raw --noheadings -o NAME,SERVER $name | grep -qx '$name run'"
check "history of a name one server holds: no SERVER column" \
    bash -c "out=\$('$tool' --base '$one' history $name-other) && grep -q '$name-other' <<<\"\$out\" && ! head -1 <<<\"\$out\" | grep -qw SERVER"
check "list --server MASTER, one server: no SERVER column" \
    bash -c "out=\$('$tool' --base '$one' list --server $m1) && [ -n \"\$out\" ] && ! head -1 <<<\"\$out\" | grep -qw SERVER"
check "-o chooses the columns: no SERVER unless asked" \
    bash -c "! '$tool' --base '$one' history -o NAME,PID $name | head -1 | grep -qw SERVER"

# --server PIDFILE: a path to a regular file holding a pid.
echo "$m1" >"$work/server.pid"
check "run --server PIDFILE joins the server its pid names: the name is busy (75)" \
    status_is 75 sc run --server "$work/server.pid" "$name" -- true
check "list --server ./PIDFILE, a relative path" \
    bash -c "cd '$work' && '$tool' --base '$one' list --server ./server.pid --raw --noheadings -o TYPE,NAME | grep -qx 'claim $name'"
echo "not a pid" >"$work/bad.pid"
check "a pidfile with no pid in it: said, naming the file (1)" \
    bash -c "out=\$('$tool' --base '$one' list --server '$work/bad.pid' 2>&1); [ \$? -eq 1 ] && grep -q '$work/bad.pid: no pid in it' <<<\"\$out\""
mkfifo "$work/fifo.pid"
check "a FIFO as a pidfile: refused at once, never waited on" \
    bash -c "out=\$(timeout -s KILL 10 '$tool' --base '$one' list --server '$work/fifo.pid' 2>&1); [ \$? -eq 1 ] && grep -q 'not a pidfile' <<<\"\$out\""
check "a name that is no pid, path or unit of a live server: said (1)" \
    bash -c "out=\$('$tool' --base '$one' list --server no-such-unit 2>&1); [ \$? -eq 1 ] && grep -q \"no live server runs in the systemd unit 'no-such-unit.service'\" <<<\"\$out\""

# Two live servers under one base: run refuses, naming both.
two=$work/two
mkdir "$two"
m2=$(start_server "$two" "$name")
pids+=("$m2" $(pgrep -P "$m2"))
m3=$(start_server "$two" "$name-3")
pids+=("$m3" $(pgrep -P "$m3"))
"$tool" --base "$two" run "$name-x" -- true >"$work/out" 2>&1
rc=$?
check "run without --server among two live servers refuses (2): $(cat "$work/out")" test $rc -eq 2
check "... naming both masters" bash -c "grep -q -- '--server $m2' '$work/out' && grep -q -- '--server $m3' '$work/out'"
check "list of two servers: a SERVER column" bash -c "'$tool' --base '$two' list | head -1 | grep -qw SERVER"
check "... and run --server MASTER chooses one (0)" status_is 0 "$tool" --base "$two" run --server "$m3" "$name" -- true

# A worker that runs a job through run (a Node cluster worker has no FFI):
# its environment names its server (SWERVE_CLAIM_DIR, which the shim gives
# every image a server's process starts), and run joins that server,
# making its directory at the place the server reserved when none of its
# processes needed it yet; never the base's other live server (m1), and
# never its own namespace.  Another worker of the server then finds the
# name busy.  A preloaded python3 master; its first worker starts the job
# and its second tries the name through the binding once the job runs.
descendants() { # PID
    local p
    for p in $(pgrep -P "$1"); do
        echo "$p"
        descendants "$p"
    done
}
job=$work/job
SWERVE_TMPDIR=$one LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 -c '
import os, subprocess, sys, time
import swerve_claim
tool, base, name, job = sys.argv[1:5]
if os.fork() == 0:
    with open(job + ".err", "w") as err:
        subprocess.run([tool, "--base", base, "run", "--verbose", name, "--", "sh", "-c", "echo $$ >\"$0\"; sleep 30", job],
                       stderr=err)
    os._exit(0)
for _ in range(200):
    if os.path.exists(job) and os.path.getsize(job) > 0:
        break
    time.sleep(0.05)
if os.fork() == 0:
    with open(job + ".api", "w") as out:
        out.write("busy" if swerve_claim.Claim(name.encode()).acquire() is None else "taken")
    os._exit(0)
time.sleep(60)' "$tool" "$one" "$name-job" "$job" >/dev/null 2>&1 &
m5=$!
disown "$m5" # killed by pid at the end, without bash's word on it
for _ in $(seq 200); do
    [ -s "$job.api" ] && break
    sleep 0.05
done
pids+=("$m5" $(descendants "$m5"))
check "a worker's run started its job ($(cat "$job.err" 2>/dev/null))" test -s "$job"
check "... and another worker of its server finds the name busy: $(cat "$job.api" 2>/dev/null)" \
    grep -qx busy "$job.api"
job_pid=$(cat "$job" 2>/dev/null)
place=$(tr '\0' '\n' <"/proc/$(ps -o ppid= -p "${job_pid:-0}" | tr -d ' ')/environ" 2>/dev/null | sed -n 's/^SWERVE_CLAIM_DIR=//p')
check "... the job holds it in its worker's server, at the place the server reserved (${place:-no place})" \
    bash -c "'$tool' --base '$one' list --server '${place:-none}' --raw --noheadings -o TYPE,NAME,PID | grep -qx 'claim $name-job ${job_pid:-none}'"
check "... not in the base's other live server" \
    bash -c "names=\$('$tool' --base '$one' list --server $m1 --raw --noheadings -o NAME) && grep -qx '$name' <<<\"\$names\" && ! grep -qx '$name-job' <<<\"\$names\""
check "... and run --verbose said which server it joined" \
    grep -q "joined the server that started it" "$job.err"
SWERVE_CLAIM_DIR=$one/not-a-place "$tool" --base "$one" run "$name-gone" -- touch "$work/gone.ran" >"$work/out" 2>&1
rc=$?
check "SWERVE_CLAIM_DIR naming nothing, and no place's name: said, the command not run ($rc, $(cat "$work/out"))" \
    bash -c "[ $rc -eq 1 ] && grep -q 'SWERVE_CLAIM_DIR' '$work/out' && [ ! -e '$work/gone.ran' ] && [ ! -e '$one/not-a-place' ]"
# What stands at a name that is no place is only joined: nothing is made
# or moved beside it (a file, a FIFO, a directory named with a '/' after
# it), nor in / (a user's environment in root's run: sudo -E).
mkdir "$work/beside" && touch "$work/beside/plain" && mkfifo "$work/beside/fifo"
root_before=$(ls -A /)
for named in "$work/beside/plain" "$work/beside/fifo" "$work/beside/" /; do
    SWERVE_CLAIM_DIR=$named timeout -s KILL 10 "$tool" --base "$one" run "$name-beside" -- touch "$work/beside.ran" >"$work/out" 2>&1
    rc=$?
    check "SWERVE_CLAIM_DIR=$named: refused at once, not run ($rc, $(cat "$work/out"))" \
        bash -c "[ $rc -eq 1 ] && [ ! -e '$work/beside.ran' ]"
done
check "... nothing made beside them: $(ls -A "$work/beside" | tr '\n' ' ')" \
    bash -c "[ \"\$(ls -A '$work/beside' | sort | tr '\n' ' ')\" = 'fifo plain ' ]"
check "... nor in /: $(diff <(echo "$root_before") <(ls -A /) | tr '\n' ' ')" test "$(ls -A /)" = "$root_before"
check "... --own-namespace keeps to the user's own namespace whatever it names (0)" \
    env SWERVE_CLAIM_DIR="$one/not-a-place" "$tool" --base "$one" run --own-namespace "$name-gone" -- true

if [ "$(id -u)" -eq 0 ]; then
    # --server UNIT: a master in a systemd unit's cgroup (made here in
    # the name=systemd hierarchy when there is no systemd).
    cg=/sys/fs/cgroup/systemd
    if [ -w "$cg" ] && mkdir -p "$cg/system.slice" && mkdir "$cg/system.slice/scl-test-$$.service"; then
        unit_dir=$cg/system.slice/scl-test-$$.service
        echo "$m1" >"$unit_dir/cgroup.procs"
        check "list --server UNIT.service: the server whose master runs in it" \
            bash -c "'$tool' --base '$one' list --server scl-test-$$.service --raw --noheadings -o TYPE,NAME | grep -qx 'claim $name'"
        check "run --server UNIT, without .service: the name is busy (75)" \
            status_is 75 sc run --server "scl-test-$$" "$name" -- true
        check "the SERVER column names it by its unit" \
            bash -c "'$tool' --base '$one' history --raw --noheadings -o NAME,SERVER $name | grep -qx '$name scl-test-$$.service\[$m1\]'"
    else
        echo "SKIP: --server UNIT: no writable name=systemd cgroup hierarchy here"
    fi
    # A place that stands is joined before anything is made: nobody's
    # run joins its server's directory in a base only root may write (a
    # worker that dropped root), as the preloaded library does.  The place
    # is made by nobody's first run in a base of nobody's, then moved.
    as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent)
    mkdir "$work/nobodys" "$work/roots" && chown nobody "$work/nobodys"
    place=swerve-claim.abcdefghjkmn
    SWERVE_CLAIM_DIR=$work/nobodys/$place "${as_nobody[@]}" "$tool" run hold -- sleep 30 &
    holding=$!
    disown "$holding"
    pids+=("$holding")
    for _ in $(seq 100); do
        "$tool" list --server "$work/nobodys/$place" --raw --noheadings -o TYPE,NAME 2>/dev/null | grep -qx 'claim hold' && break
        sleep 0.05
    done
    pids+=($(descendants "$holding"))
    mv "$work/nobodys/$place" "$work/roots/"
    SWERVE_CLAIM_DIR=$work/roots/$place "${as_nobody[@]}" "$tool" run hold -- true >"$work/out" 2>&1
    rc=$?
    check "nobody's run joins a place standing in a base only root writes: the name is busy (75; $rc, $(cat "$work/out"))" \
        test "$rc" -eq 75
    # Attack: another user's live server in the base (any user can start
    # one in /tmp) neither stops root's run nor is joined by it (root
    # would become that user); root is told of it when it holds the name.
    theirs=$work/theirs
    mkdir "$theirs" && chmod 1777 "$theirs"
    m4=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent \
        bash -c "$(declare -f start_server); tool='$tool' preload='$preload' SCL_SRCDIR='$SCL_SRCDIR' start_server '$theirs' '$name'")
    pids+=("$m4" $(pgrep -P "$m4"))
    "$tool" --base "$theirs" run "$name" -- id -un >"$work/out" 2>"$work/err"
    rc=$?
    check "root, nobody's live server holding the name: root's run still runs, as root ($rc, $(cat "$work/out"))" \
        bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$work/out')\" = root ]"
    check "... and says whose server holds it and how to join it ($(cat "$work/err"))" \
        bash -c "grep -q 'nobody' '$work/err' && grep -q -- '--server $m4' '$work/err'"
    check "... nothing said of it for a name it does not hold" \
        bash -c "'$tool' --base '$theirs' run $name-free -- true 2>&1 | wc -c | grep -qx 0"
fi
finish
