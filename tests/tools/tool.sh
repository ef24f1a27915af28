#!/bin/bash
# The swerve-claim tool, end to end: its holders are `swerve-claim run ...
# -- sleep`, so no preloading is needed.  Every wait is bounded; every
# process started here is killed by pid at the end.
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
tool=${SCL_HELPERS:?run through make check}/../swerve-claim
base=$(mktemp -d)
pids=()
cleanup() {
    kill_pids "${pids[@]}"
    rm -rf "$base" ${lone:+"$lone"}
}
trap cleanup EXIT

status_is() { # EXPECTED COMMAND...
    local want=$1
    shift
    "$@" >/dev/null 2>&1
    [ $? -eq "$want" ]
}
sc() { "$tool" --base "$base" "$@"; }
# Waits (at most 5 s) until `list` shows claim NAME.
wait_held() {
    for _ in $(seq 100); do
        sc list --raw --noheadings -o TYPE,NAME | grep -qxF "claim $1" && return 0
        sleep 0.05
    done
    return 1
}

check "--help exits 0" status_is 0 sc --help
# Each command's own help: its usage line and its options, nobody else's.
for cmd in list gc release run drain db; do
    check "$cmd --help prints $cmd's usage and exits 0" \
        bash -c "out=\$('$tool' $cmd --help) && grep -q '^Usage: swerve-claim \[--base DIR\] $cmd ' <<<\"\$out\""
    check "help $cmd prints the same" bash -c "out=\$('$tool' help $cmd) && [ \"\$out\" = \"\$('$tool' $cmd --help)\" ] && grep -q '^Usage' <<<\"\$out\""
done
check "list --help shows list's options only" bash -c "out=\$('$tool' list --help); grep -q -- '--output-all' <<<\"\$out\" && ! grep -q -- '--dry-run' <<<\"\$out\""
check "run -h, after other options, is run's help" bash -c "'$tool' run -v -h | grep -q -- '--conflict-exit-code'"
check "db init --help is db's help" bash -c "'$tool' db init --help | grep -q -- '--dedicated'"
check "help with no command is the whole help" bash -c "out=\$('$tool' help) && [ \"\$out\" = \"\$('$tool' --help)\" ] && grep -q '^Commands:' <<<\"\$out\""
check "help of an unknown command is a usage error (2)" status_is 2 sc help frobnicate
check "run's command keeps its own --help" bash -c "[ \"\$('$tool' --base '$base' run helped -- printf '%s' --help)\" = --help ]"
check "a usage error names the command's help" bash -c "'$tool' gc --frob 2>&1 | grep -q \"try 'swerve-claim gc --help'\""
check "--version prints the version" bash -c "'$tool' --version | grep -q '^swerve-claim [0-9]'"
check "an unknown command is a usage error (2)" status_is 2 sc frobnicate
check "release without --force is a usage error (2)" status_is 2 sc release x

# The pid of the command that `run` (pid $1) started: the claim's holder.
command_of() {
    for _ in $(seq 100); do
        pgrep -P "$1" && return 0
        sleep 0.05
    done
    return 1
}

name=$'report/eu\n#1'
# Started directly, not through sc: $! must be the tool's own pid.
"$tool" --base "$base" run "$name" -- sleep 30 &
pids+=($!)
runner=$!
check "run holds the claim while its command runs" wait_held 'report/eu\x0a#1'
holder=$(command_of $runner)
pids+=($holder)
check "run: a held name exits 75, quietly" bash -c "out=\$('$tool' --base '$base' run '$name' -- true 2>&1); [ \$? -eq 75 ] && [ -z \"\$out\" ]"
check "run: -E sets that status" status_is 9 sc run -E 9 "$name" -- true
# A cron wrapper ported from flock(1) tests for flock's own status on a
# busy lock: the pages must say which it is, and -E gives it.
lockfile=$base/flock.lock
flock -n "$lockfile" sleep 5 &
pids+=($!)
for _ in $(seq 50); do flock -n "$lockfile" true || break; sleep 0.05; done
flock -n "$lockfile" true
flock_busy=$?
check "troubleshooting says what flock -n really exits on a busy lock ($flock_busy)" \
    grep -q "\`flock -n\` exits $flock_busy" "${SCL_SRCDIR:?run through make check}/doc/troubleshooting.md"
check "troubleshooting does not call 75 flock's status" bash -c '! grep -qF "flock'"'"'s \`EX_TEMPFAIL" "$1"' _ "$SCL_SRCDIR/doc/troubleshooting.md"
check "run: -E $flock_busy gives a held name flock's status" status_is "$flock_busy" sc run -E "$flock_busy" "$name" -- true
check "run: --wait gives up after its time" status_is 75 sc run --wait 0.2 "$name" -- true
first=$(sc run token -- sh -c 'echo "$SWERVE_CLAIM_TOKEN"')
second=$(sc run token -- sh -c 'echo "$SWERVE_CLAIM_TOKEN"')
check "run: SWERVE_CLAIM_TOKEN is the hold's token, greater with every run" \
    bash -c "[ '$first' -gt 0 ] 2>/dev/null && [ '$second' -gt '$first' ]"
check "run: the command's status passes through" status_is 3 sc run other -- sh -c 'exit 3'
check "run: a missing command is 127" status_is 127 sc run other -- /nonexistent/command

# Started by a parent that ignores SIGCHLD (a daemon that never reaps),
# with SIGHUP ignored (nohup) and SIGUSR1 blocked: perl hands them on
# through exec, which bash's `trap '' CHLD` does not promise.
inheriting() { perl -e 'use POSIX; $SIG{CHLD} = $SIG{HUP} = "IGNORE";
    sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGUSR1)) or die; exec @ARGV or die "exec: $!\n"' "$@"; }
plain=$(inheriting grep -E '^Sig(Ign|Blk):' /proc/self/status)
check "the helper really passes SIGCHLD ignored ($(grep SigIgn <<<"$plain"))" \
    test $((0x$(awk '/^SigIgn:/ { print $2 }' <<<"$plain") >> 16 & 1)) -eq 1
check "run under an ignored SIGCHLD: the command's status passes through" \
    status_is 3 inheriting "$tool" --base "$base" run other -- sh -c 'exit 3'
check "run under an ignored SIGCHLD: 0 is 0" status_is 0 inheriting "$tool" --base "$base" run other -- true
check "run under an ignored SIGCHLD: a command killed by SIGTERM is 143" \
    status_is 143 inheriting "$tool" --base "$base" run other -- sh -c 'kill -TERM $$'
seen=$(inheriting "$tool" --base "$base" run other -- grep -E '^Sig(Ign|Blk):' /proc/self/status)
check "run: the command gets the dispositions and the mask it would get without run ($(tr '\n' ' ' <<<"$seen"))" \
    test "$seen" = "$plain"
if sc list --json >/dev/null 2>&1; then
    check "list --json shows the holder's pid and the name as written" \
        bash -c "'$tool' --base '$base' list --json | grep -q '\"pid\": $holder'"
else
    echo "tool.sh: list --json is not checked: this swerve-claim was built without libsmartcols"
fi
check "list --name filters claims" bash -c "[ \$('$tool' --base '$base' list --raw --noheadings -o TYPE --name nope | grep -c claim) -eq 0 ]"

# Operators' monitoring and scripts (issue #12)
check "list --name with no such claim exits 1" status_is 1 sc list --name nope
check "list --name of a held claim exits 0" status_is 0 sc list --name "$name"
check "a missing argument says so, once, and nothing else" \
    bash -c "out=\$('$tool' --base '$base' list --name 2>&1); [ \$? -eq 2 ] && grep -q \"needs an argument\" <<<\"\$out\" && ! grep -q 'unknown option' <<<\"\$out\""
check "an unknown option names it" bash -c "'$tool' list --frob 2>&1 | grep -q \"unknown option '--frob'\""
check "--base is taken after the command too" bash -c "'$tool' list --base '$base' --raw --noheadings -o TYPE,NAME | grep -qxF 'claim report/eu\\x0a#1'"
check "SINCE is ISO 8601 with its offset" \
    bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,SINCE | awk '\$1 == \"claim\" { print \$2 }' | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}\$'"
if sc list --json >/dev/null 2>&1; then
    check "list --json: directories under \"directories\", since in epoch seconds" python3 -c "
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], '--base', sys.argv[2], 'list', '--json'], capture_output=True).stdout)
claims = [c for dir in d['directories'] for c in dir['children'] if c['type'] == 'claim']
assert claims and all(isinstance(c['since'], int) and c['since'] > 1700000000 for c in claims), claims
" "$tool" "$base"
fi
# Age and user at a glance, and a monitoring entry point (issue #22).
me=$(id -un)
check "AGE is how long the claim has been held, USER its holder's user" bash -c "
    '$tool' --base '$base' list --raw --noheadings -o TYPE,AGE,USER | awk '\$1 == \"claim\"' |
        grep -qE '^claim [0-9]+s $me\$'"
if sc list --json >/dev/null 2>&1; then
    check "list --json: age in seconds, user by name" python3 -c "
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], '--base', sys.argv[2], 'list', '--json', '-O'], capture_output=True).stdout)
claims = [c for dir in d['directories'] for c in dir['children'] if c['type'] == 'claim']
assert claims and all(isinstance(c['age'], int) and 0 <= c['age'] < 600 and c['user'] == sys.argv[3] for c in claims), claims
" "$tool" "$base" "$me"
fi
check "list --older-than 1h: nothing that old, exit 0" status_is 0 sc list --older-than 1h
check "(and it shows no claim)" bash -c "! '$tool' --base '$base' list --raw --noheadings -o TYPE --older-than 1h | grep -q claim"
sleep 2.1 # ages are whole seconds: held 2.1 s at least, its age is 2 or more
check "list --older-than 1s: the held claim, exit 1" status_is 1 sc list --older-than 1s
check "(and it shows it)" bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,NAME --older-than 1s | grep -qxF 'claim report/eu\x0a#1'"
check "--older-than takes 90s, 2m, 1h, 1d" bash -c "for d in 90s 2m 1h 1d 45; do '$tool' --base '$base' list --older-than \$d >/dev/null; [ \$? -le 1 ] || exit 1; done"
check "--older-than refuses what is not a duration (2)" status_is 2 sc list --older-than soon
check "list --stale: no dead, gone or stopped holder, exit 0" status_is 0 sc list --stale
stop_and_wait "$holder"
check "list --stale: a stopped holder's claim, exit 1" status_is 1 sc list --stale
check "(shown with its state)" bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,STATE --stale | grep -qx 'claim stopped'"
kill -CONT "$holder"
utf=$'r\xc3\xa9sum\xc3\xa9'
# (--raw escapes what is not ASCII, as lslocks --raw does: it is for scripts)
check "UTF-8 names show as UTF-8 in the table under a UTF-8 locale" sc run "$utf" -- \
    bash -c 'LANG=C.UTF-8 "$0" --base "$1" list --noheadings -o NAME | grep -qF "$2"' "$tool" "$base" "$utf"
# A name too long for a file name is hashed on disk; its holder's journal
# keeps it whole, and the list shows it so.
long=$(printf 'n%.0s' $(seq 300))/x
check "a name too long for a file name shows whole" sc run "$long" -- \
    bash -c '"$0" --base "$1" list --raw --noheadings -o TYPE,NAME | grep -qxF "claim $2"' "$tool" "$base" "$long"

# release --force on a stopped holder says stopped, not alive (#22).
"$tool" --base "$base" run frozen -- sleep 30 &
pids+=($!)
check "a holder takes 'frozen'" wait_held frozen
frozen=$(command_of $!)
pids+=($frozen)
stop_and_wait "$frozen"
out=$("$tool" --base "$base" release --force frozen 2>&1)
check "release --force on a SIGSTOPped holder says it is stopped" grep -q "WARNING: process $frozen (sleep 30) is stopped" <<<"$out"
check "(and not that it is alive)" bash -c '! grep -q "is alive" <<<"$1"' _ "$out"
check "(and how to let it go on)" grep -q "kill -CONT $frozen" <<<"$out"
kill -CONT "$frozen"
# release --force on a live holder: done, with a warning.
check "release --force removes a live holder's claim, loudly" \
    bash -c "'$tool' --base '$base' release --force '$name' 2>&1 | grep -q 'WARNING: process $holder'"
check "after release --force the name is free" status_is 0 sc run "$name" -- true

# A SIGKILLed holder nobody reaps (its `run` SIGKILLed first): gc
# --dry-run says, gc removes.
"$tool" --base "$base" run stale -- sleep 30 &
pids+=($!)
check "a second holder takes 'stale'" wait_held stale
stale=$(command_of $!)
kill -9 $!
wait $! 2>/dev/null
kill -9 "$stale"
for _ in $(seq 100); do kill -0 "$stale" 2>/dev/null || break; sleep 0.05; done
check "a dead holder keeps the command line it had when it took the name" \
    bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,NAME,STATE,COMMAND | grep -q '^claim stale gone .*run.x20stale'"
check "gc --dry-run names the dead holder's claim" bash -c "'$tool' --base '$base' gc --dry-run | grep -q 'would remove claim stale'"
check "gc --dry-run exits 1 when it would remove something" status_is 1 sc gc --dry-run
check "gc --dry-run removes nothing" bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,NAME | grep -qx 'claim stale'"
check "gc removes it" bash -c "'$tool' --base '$base' gc | grep -q 'removed claim stale'"
check "after gc, the live holder's claims are untouched" bash -c "! '$tool' --base '$base' gc | grep -q 'removed claim'"
check "gc --dry-run exits 0 when there is nothing to remove" status_is 0 sc gc --dry-run

# The table on an 80-column terminal, and what an operator looks for (#12)
"$tool" --base "$base" run operator-view -- sleep 30 &
pids+=($!)
check "a claim 'operator-view' is taken" wait_held operator-view
viewer=$(command_of $!)
pids+=($viewer)
wide=$(COLUMNS=80 script -qec "'$tool' --base '$base' list" /dev/null | tr -d '\r' | LC_ALL=C.UTF-8 wc -L)
check "on an 80-column terminal no line is wider than 80 ($wide)" test "${wide:-999}" -le 80
check "-u/--notruncate shows whole command lines" \
    bash -c "COLUMNS=80 script -qec \"'$tool' --base '$base' list -u\" /dev/null | grep -q 'sleep 30'"
check "--output-all shows every column" \
    bash -c "'$tool' --base '$base' list --output-all | head -1 | grep -qE '^TYPE +NAME +PID +STATE +SINCE +COMMAND +DIR'"
check "-p PID shows that process's claims only" \
    bash -c "out=\$('$tool' --base '$base' list -p $viewer --raw --noheadings -o TYPE,PID); grep -qx 'claim $viewer' <<<\"\$out\" && [ \$(grep -cE '^(claim|process) ' <<<\"\$out\") -eq \$(grep -cE '^(claim|process) $viewer\$' <<<\"\$out\") ]"
stop_and_wait "$viewer"
# (the kernel stops it a moment after kill returns: up to 5 s)
check "a stopped holder shows as stopped" \
    bash -c "for _ in \$(seq 100); do '$tool' --base '$base' list -p $viewer --raw --noheadings -o TYPE,STATE | grep -qx 'claim stopped' && exit 0; sleep 0.05; done; exit 1"
kill -CONT "$viewer"
lone=$(mktemp -d)
"$tool" --base "$lone" run orphan -- sleep 30 &
pids+=($!)
orphan_runner=$!
pids+=($(command_of $orphan_runner))
kill -9 "$orphan_runner"
wait "$orphan_runner" 2>/dev/null
check "a directory whose master died shows as orphaned, found by the dead master's pid" \
    bash -c "'$tool' --base '$lone' list --server $orphan_runner --raw --noheadings -o TYPE,STATE | grep -qx 'dir orphaned'"
server=$(mktemp -d)
"$tool" --base "$server" run served -- sleep 30 &
pids+=($!)
served_by=$!
pids+=($(command_of $served_by))
check "a directory's row shows its server: the master's pid and command line" \
    bash -c "'$tool' --base '$server' list --raw --noheadings -o TYPE,PID,COMMAND | grep -q '^dir $served_by .*run.x20served'"
rm -rf "$server"
check "--watch refreshes (at most 2 s here)" \
    bash -c "[ \$(timeout 2 '$tool' --base '$base' list --watch=0.4 | grep -c '^TYPE') -ge 2 ]"

"$tool" --base "$base" run verbose-held -- sleep 0.8 &
pids+=($!)
check "a claim 'verbose-held' is taken" wait_held verbose-held
verbose_holder=$(command_of $!)
"$tool" --base "$base" run --verbose -w 10 verbose-held -- true 2>"$lone/verbose" >/dev/null
check "run --verbose says what it waits for, and who holds it" \
    grep -q "waiting up to 10 s for 'verbose-held', held by process $verbose_holder (sleep 0.8)" "$lone/verbose"
check "run --verbose says when it took it" grep -q "took 'verbose-held' after [0-9.]* s" "$lone/verbose"

# SINCE is when each claim was taken, whatever its holder does next; and
# who waits for what, as lslocks shows blocked locks (#12).
preload=${SCL_PRELOAD:?run through make check}
[ -n "${SCL_ASAN_RUNTIME:-}" ] && preload=$SCL_ASAN_RUNTIME:$preload
timeline=$lone/timeline
SWERVE_TMPDIR=$base LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=${SCL_SRCDIR:?}/bindings/python \
    timeout 60 /usr/bin/python3 "$SCL_SRCDIR/tests/tools/claims_over_time.py" "$timeline" &
pids+=($!)
for _ in $(seq 200); do grep -q '^ready' "$timeline" 2>/dev/null && break; sleep 0.05; done
fact() { awk -v k="$1" '$1 == k { print $2 }' "$timeline"; }
busy_holder=$(fact busy_holder) busy_waiter=$(fact busy_waiter)
pids+=(${busy_holder:-} ${busy_waiter:-})
check "claims_over_time.py got ready" grep -q '^ready' "$timeline"
# The epoch seconds of claim $1's SINCE, from the raw table.
since_of() {
    sc list --raw --noheadings -o TYPE,NAME,SINCE | awk -v n="$1" '$1 == "claim" && $2 == n { print $3 }' |
        xargs -r -I{} date -d {} +%s
}
kept_since=$(since_of kept)
check "SINCE is when the claim was taken, not when its holder last did something ($kept_since, taken $(fact kept_at))" \
    awk -v s="${kept_since:-0}" -v t="$(fact kept_at)" 'BEGIN { exit !(s <= t && s > t - 2) }'
check "a waiter is listed under the claim it waits for, with the claim's holder as its BLOCKER" \
    bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,NAME,PID,STATE,BLOCKER | grep -qx 'waiter busy $busy_waiter waiting $busy_holder'"
check "the tree shows the waiter below the claim" \
    bash -c "'$tool' --base '$base' list --noheadings -o TYPE,NAME,PID | grep -A1 '^claim .*busy *$busy_holder\$' | grep -q '^waiter .*busy *$busy_waiter\$'"
check "a waiter's SINCE is when it began to wait" \
    bash -c "[ -n \"\$('$tool' --base '$base' list --raw --noheadings -o TYPE,SINCE | awk '\$1 == \"waiter\" { print \$2 }')\" ]"
check "list --name shows the name's waiters too" \
    bash -c "'$tool' --base '$base' list --name busy --raw --noheadings -o TYPE,PID | grep -qx 'waiter $busy_waiter'"
check "list -p shows what that process waits for" \
    bash -c "'$tool' --base '$base' list -p $busy_waiter --raw --noheadings -o TYPE,NAME | grep -qx 'waiter busy'"
# A process that execs while one of its threads waits waits no more.
exec_base=$lone/exec-base
mkdir "$exec_base"
SWERVE_TMPDIR=$exec_base LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    timeout 60 /usr/bin/python3 -c '
import os, sys, threading, time
import swerve_claim
holder = os.fork()
if holder == 0:
    busy = swerve_claim.Claim(b"busy")
    busy.acquire()
    time.sleep(30)
    os._exit(0)
while swerve_claim.Claim(b"busy").available():
    time.sleep(0.02)
threading.Thread(target=lambda: swerve_claim.Claim(b"busy").acquire(timeout=30), daemon=True).start()
time.sleep(0.3)
os.execv("/bin/sleep", ["sleep", "30"])' &
execer=$!
pids+=($execer)
for _ in $(seq 100); do [ "$(cat /proc/$execer/comm 2>/dev/null)" = sleep ] && break; sleep 0.05; done
pids+=($(pgrep -P $execer))
check "a process that exec'd while a thread of it waited is no waiter" \
    bash -c "out=\$('$tool' --base '$exec_base' list --raw --noheadings -o TYPE,PID); grep -qx 'claim [0-9]*' <<<\"\$out\" && ! grep -q '^waiter' <<<\"\$out\""

sleep 1 # a second after the holder's last activity: a re-dating would show
sc release --force spare >/dev/null 2>&1
check "a forced release re-dates none of the holder's other claims" test "$(since_of kept)" = "$kept_since"
forced_at=$(($(now_ns) / 1000000000))
sc release --force busy >/dev/null 2>&1
for _ in $(seq 100); do
    sc list --raw --noheadings -o TYPE,NAME,PID | grep -qx "claim busy $busy_waiter" && break
    sleep 0.05
done
check "after release --force the waiter holds the name, and waits no more" \
    bash -c "out=\$('$tool' --base '$base' list --raw --noheadings -o TYPE,NAME,PID); grep -qx 'claim busy $busy_waiter' <<<\"\$out\" && ! grep -q '^waiter' <<<\"\$out\""
check "the new holder's SINCE is when it took the name" test "$(since_of busy)" -ge "$forced_at"

# drain (#23): an operator tells a process, or a server's, that it is
# being drained; list shows it, and the process's draining() says 1.
"$tool" --base "$base" run drained -- sleep 30 &
pids+=($!)
check "a holder takes 'drained'" wait_held drained
drained=$(command_of $!)
pids+=($drained)
check "drain with neither --server nor --pid is a usage error (2)" status_is 2 sc drain
check "drain of a process that is no member fails, saying so" \
    bash -c "out=\$('$tool' --base '$base' drain -p $$ 2>&1); [ \$? -eq 1 ] && grep -q 'not a member' <<<\"\$out\""
check "drain -p PID tells it, and says so" \
    bash -c "'$tool' --base '$base' drain -p $drained | grep -q '^told process $drained (sleep 30) to drain'"
check "list: the process and its claim are draining" \
    bash -c "out=\$('$tool' --base '$base' list --raw --noheadings -o TYPE,PID,STATE); grep -qx 'process $drained draining' <<<\"\$out\" && grep -qx 'claim $drained draining' <<<\"\$out\""
check "list: its sibling (the run tool) is not" \
    bash -c "! '$tool' --base '$base' list --raw --noheadings -o TYPE,PID,STATE | grep -v ' $drained ' | grep -q draining"
if sc list --json >/dev/null 2>&1; then
    check "list --json: state draining" python3 -c "
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], '--base', sys.argv[2], 'list', '--json'], capture_output=True).stdout)
rows = [c for dir in d['directories'] for c in dir['children'] if c['pid'] == int(sys.argv[3])]
assert rows and all(r['state'] == 'draining' for r in rows), rows
" "$tool" "$base" "$drained"
fi
asker_out=$lone/asker
# (preloaded itself, no wrapper: its pid is the holder's; it ends by
# itself within a minute, and is killed by its pid before)
SWERVE_TMPDIR=$base LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 -c '
import ctypes, time
import swerve_claim
draining = ctypes.CDLL(None).swerve_claim_draining
held = swerve_claim.claim("asks").acquire()
print("ready", draining(), flush=True)
for _ in range(2000):
    if draining() == 1:
        held.release()
        print("drained", flush=True)
        break
    time.sleep(0.01)
time.sleep(30)' >"$asker_out" &
asker=$!
pids+=($asker)
for _ in $(seq 100); do grep -q '^ready' "$asker_out" && break; sleep 0.05; done
check "a holder that asks draining() is told 0 first" grep -qx 'ready 0' "$asker_out"
check "drain --server PID tells every member of its directory" \
    bash -c "'$tool' --base '$base' drain --server $asker | grep -q '^told process $asker '"
for _ in $(seq 100); do grep -q '^drained' "$asker_out" && break; sleep 0.05; done
check "the holder's draining() says 1, and it lets go" grep -qx drained "$asker_out"
check "(the claim is free)" status_is 0 sc run asks -- true

# A server whose claims are under another base (SWERVE_TMPDIR=/srv/x, the
# systemd drop-in's /run/swerve-claim): the tools find them from its pid,
# as the process itself shows them, without --base (#22).
elsewhere=$lone/elsewhere
mkdir "$elsewhere"
# (LD_PRELOAD on python itself: it is the master, it ends by itself in
# 30 s, and is killed by its pid before.)
SWERVE_TMPDIR=$elsewhere LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 -c '
import os, time
import swerve_claim
if os.fork() == 0:
    held = swerve_claim.Claim(b"far-report")
    held.acquire()
    time.sleep(30)
    os._exit(0)
time.sleep(30)' &
far_master=$!
pids+=($far_master)
for _ in $(seq 100); do
    far_worker=$(pgrep -P $far_master)
    [ -n "$far_worker" ] && "$tool" --base "$elsewhere" list --raw --noheadings -o TYPE,NAME | grep -qx 'claim far-report' && break
    sleep 0.05
done
pids+=($far_worker)
check "list -s MASTER finds a server under another base" \
    bash -c "'$tool' --base '$base' list -s $far_master --raw --noheadings -o TYPE,NAME | grep -qx 'claim far-report'"
check "list -s WORKER finds it too" \
    bash -c "'$tool' --base '$base' list -s $far_worker --raw --noheadings -o TYPE,NAME | grep -qx 'claim far-report'"
check "list -p WORKER shows its claim" \
    bash -c "'$tool' --base '$base' list -p $far_worker --raw --noheadings -o TYPE,NAME | grep -qx 'claim far-report'"
check "run --server MASTER: the server's held name is busy (75)" \
    status_is 75 "$tool" --base "$base" run --server "$far_master" far-report -- true
check "run --server MASTER runs in that server's namespace" \
    bash -c "'$tool' --base '$base' run --server $far_master far-other -- '$tool' --base '$elsewhere' list --raw --noheadings -o TYPE,NAME | grep -qx 'claim far-other'"
check "a process with no claim directory anywhere: said, with where it looked" \
    bash -c "'$tool' --base '$base' list -s $$ 2>&1 | grep -q 'not a member of any claim directory in $base'"
kill_pids "$far_master" "$far_worker"
empty=$(mktemp -d)
check "list finding nothing says where it looked" \
    bash -c "'$tool' --base '$empty' list 2>&1 >/dev/null | grep -q 'no claim directory in $empty'"
rmdir "$empty"

# Root sees every user's servers, as lslocks shows root every lock; another
# user is told how many it cannot see (#12).
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1; then
    chmod 1777 "$base"
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$tool" --base "$base" run nobodys-claim -- sleep 30 &
    pids+=($!)
    nobody_run=$!
    check "root's list shows another user's claim" wait_held nobodys-claim
    nobodys=$(command_of $nobody_run)
    pids+=($nobodys)
    check "root's list --server PID finds another user's server" \
        bash -c "'$tool' --base '$base' list --server $nobodys --raw --noheadings -o TYPE,NAME | grep -qx 'claim nobodys-claim'"
    check "another user is told how many directories it cannot see" \
        bash -c "setpriv --reuid=daemon --regid=daemon --clear-groups '$tool' --base '$base' list 2>&1 >/dev/null | grep -q 'of other users not shown'"
    check "... and does not see them" \
        bash -c "! setpriv --reuid=daemon --regid=daemon --clear-groups '$tool' --base '$base' list --raw 2>/dev/null | grep -q nobodys-claim"
    # Root's run --server on another user's server (uWSGI --uid www-data):
    # it runs there as that user, and exclusion holds across (#22).
    out=$("$tool" --base "$base" run --server "$nobodys" nightly-report -- id -un 2>"$base/run-as.err")
    check "root's run --server on nobody's server runs, as nobody ($out: $(tail -1 "$base/run-as.err"))" test "$out" = nobody
    check "(and says it runs as nobody)" grep -q "note: running as nobody" "$base/run-as.err"
    check "root's run --server: a name nobody's server holds is busy (75)" \
        status_is 75 "$tool" --base "$base" run --server "$nobodys" nobodys-claim -- true
    check "(and the server's claim is still its holder's)" \
        bash -c "'$tool' --base '$base' list --server $nobodys --raw --noheadings -o TYPE,NAME,PID | grep -qx 'claim nobodys-claim $nobodys'"
    check "root's drain tells another user's holder" \
        bash -c "'$tool' --base '$base' drain -p $nobodys | grep -q '^told process $nobodys '"
    check "another user cannot tell it (1)" \
        status_is 1 setpriv --reuid=daemon --regid=daemon --clear-groups "$tool" --base "$base" drain -p "$nobodys"
    kill "$nobody_run"
else
    echo "tool.sh: not root (or no users nobody and daemon): root's view of other users is not checked"
fi

kill $runner
wait $runner 2>/dev/null
finish
