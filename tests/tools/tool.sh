#!/bin/bash
# SPDX-License-Identifier: MIT
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
# Each command's own help: its usage line and its options, nobody else's
# (every command the whole help lists, which completion.sh compares with
# the completion's).
commands=$(sc --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | tr '\n' ' ')
check "the whole help lists the commands" test "$(wc -w <<<"$commands")" -ge 8
for cmd in $commands; do
    check "$cmd --help prints $cmd's usage and exits 0" \
        bash -c "out=\$('$tool' $cmd --help) && grep -q '^Usage: swerve-claim \[--base DIR\] $cmd ' <<<\"\$out\""
    check "help $cmd prints the same" bash -c "out=\$('$tool' help $cmd) && [ \"\$out\" = \"\$('$tool' $cmd --help)\" ] && grep -q '^Usage' <<<\"\$out\""
done
check "list --help shows list's options only" bash -c "out=\$('$tool' list --help); grep -q -- '--output-all' <<<\"\$out\" && ! grep -q -- '--dry-run' <<<\"\$out\""
check "run -h, after other options, is run's help" bash -c "'$tool' run -v -h | grep -q -- '--conflict-exit-code'"
check "db init --help is db's help" bash -c "'$tool' db init --help | grep -q -- '--dedicated'"
check "db check --help is db's help, and names check" bash -c "'$tool' db check --help | grep -q '^ *swerve-claim \\[--base DIR\\] db check$'"
# Without SWERVE_CLAIM_STORE there is no database to check (#41): said, and
# status 2, as db init says it.
check "db check without SWERVE_CLAIM_STORE: status 2, says the claims need no database" \
    bash -c "out=\$(env -u SWERVE_CLAIM_STORE '$tool' db check 2>&1); [ \$? -eq 2 ] &&
        grep -q 'SWERVE_CLAIM_STORE is not set: .*no database' <<<\"\$out\""
check "db init -d is --dedicated, as its help says (not an unknown option)" \
    bash -c "env -u SWERVE_CLAIM_STORE '$tool' db init -d 2>&1 | grep -q 'SWERVE_CLAIM_STORE is not set'"
check "help with no command is the whole help" bash -c "out=\$('$tool' help) && [ \"\$out\" = \"\$('$tool' --help)\" ] && grep -q '^Commands:' <<<\"\$out\""
check "help of an unknown command is a usage error (2)" status_is 2 sc help frobnicate
check "run's command keeps its own --help" bash -c "[ \"\$('$tool' --base '$base' run helped -- printf '%s' --help)\" = --help ]"
check "a usage error names the command's help" bash -c "'$tool' gc --frob 2>&1 | grep -q \"try 'swerve-claim gc --help'\""
# Every usage error of every command, found by its own parsing or by the
# parsing it shares (columns, pids, the store), says so: status 2 and
# where that command's help is.
usage_errors=("history a b" "history -o NOPE" "history -o ''" "list -o NAME,NOPE" "list -p x"
    "drain -p x" "drain -p 1@elsewhere" "drain x" "metrics x" "run" "run name-only" "run -w x n -- true"
    "run -E 256 n -- true" "release --force" "gc x" "db" "db frob" "db check x" "db check --dedicated"
    "list --name ''" "history ''" "release --force ''" "run '' -- true") # an empty NAME, said so (#41)
for args in "${usage_errors[@]}"; do
    cmd=${args%% *}
    check "'$args' is a usage error (2) naming $cmd's help" \
        bash -c "out=\$(eval \"'$tool' --base '$base' $args\" 2>&1); [ \$? -eq 2 ] && grep -q \"(try 'swerve-claim $cmd --help')\$\" <<<\"\$out\""
done
# A 4 KB name in a message is cut to its first 64 characters and "…", as
# the bindings cut it (#41): the message stays one readable line.
long_name=$(printf 'n%.0s' $(seq 4096))
out=$(LANG=C.UTF-8 "$tool" --base "$base" list --name "$long_name" 2>&1 >/dev/null | grep 'no claim named')
check "a 4 KB name is cut in a message: ${out:0:120}" \
    bash -c '[ ${#1} -lt 200 ] && grep -q "named '"'"'$(printf "n%.0s" $(seq 64))…'"'"'" <<<"$1"' _ "$out"
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
# (its own process group, so that cleanup ends the sleep that holds the
# lock too; it says when it holds it: a loaded machine may take seconds)
setsid flock -n "$lockfile" sh -c 'touch "$0.held"; exec sleep 30' "$lockfile" &
pids+=($!)
for _ in $(seq 200); do [ -e "$lockfile.held" ] && break; sleep 0.05; done
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
# Options after NAME, as GNU tools take them (#41: "run NAME --wait 0 --
# true" ran "--wait" as the command after taking the claim), and a
# missing command's hold recorded with the status the shell sees.
check "run: options after NAME are run's" bash -c "[ \"\$('$tool' --base '$base' run after-name --wait 0 -E 9 -- echo ran)\" = ran ]"
check "run: options after NAME, without --" status_is 0 sc run after-name --wait 0 true
check "run: after --, NAME then the command" bash -c "[ \"\$('$tool' --base '$base' run -- after-name echo ran)\" = ran ]"
check "run: an option after the COMMAND is the command's" \
    bash -c "[ \"\$('$tool' --base '$base' run after-name printf '%s' --wait)\" = --wait ]"
check "history: a missing command's hold ended as the shell saw it (127)" \
    bash -c "'$tool' --base '$base' history other --noheadings -o HOW | sed 's/ *\$//' | tail -n 1 | grep -qx 'exited with status 127'"
check "history: options after NAME" bash -c "'$tool' --base '$base' history other -o NAME --noheadings | grep -qx other"
# run's own namespace stays in the home whatever SWERVE_TMPDIR says (#41:
# one rule; a login's SWERVE_TMPDIR is often /tmp, where another user
# could squat the name: attack 6), and --base moves it.  A user without
# a home of its own (nobody's is /nonexistent) falls back to the default
# base, SWERVE_TMPDIR's.
tmpdir_base=$(mktemp -d)
chmod 1777 "$tmpdir_base"
home=$(getent passwd "$(id -u)" | cut -d: -f6)
if [ -d "$home" ] && [ "$(stat -c %u "$home")" = "$(id -u)" ]; then
    check "run: SWERVE_TMPDIR does not move run's own namespace out of the home" bash -c \
        "SWERVE_TMPDIR='$tmpdir_base' '$tool' run in-tmpdir -- ls -A '$tmpdir_base' | grep -c . | grep -qx 0"
else
    check "run: without a home, run's own namespace is in the default base, SWERVE_TMPDIR's" bash -c \
        "SWERVE_TMPDIR='$tmpdir_base' '$tool' run in-tmpdir -- ls '$tmpdir_base' | grep -qx 'swerve-claim.run-$(id -u)'"
fi
check "run: --base does" bash -c \
    "'$tool' --base '$tmpdir_base' run in-base -- ls '$tmpdir_base' | grep -qx 'swerve-claim.run-$(id -u)'"
rm -rf "$tmpdir_base"

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
check "(and it shows nothing at all: no header, no directory row; #41)" \
    test -z "$("$tool" --base "$base" list --older-than 1h 2>/dev/null)"
sleep 2.1 # ages are whole seconds: held 2.1 s at least, its age is 2 or more
check "list --older-than 1s: the held claim, exit 1" status_is 1 sc list --older-than 1s
check "(and it shows it)" bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,NAME --older-than 1s | grep -qxF 'claim report/eu\x0a#1'"
check "--older-than takes 90s, 2m, 1h, 1d" bash -c "for d in 90s 2m 1h 1d 45; do '$tool' --base '$base' list --older-than \$d >/dev/null; [ \$? -le 1 ] || exit 1; done"
check "--older-than refuses what is not a duration (2)" status_is 2 sc list --older-than soon
check "list --stale: no dead, gone or stopped holder, exit 0" status_is 0 sc list --stale
check "(and it shows nothing at all; #41)" test -z "$("$tool" --base "$base" list --stale 2>/dev/null)"
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
out=$("$tool" --base "$base" release frozen --force 2>&1) # options after NAME too (#41)
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
# A dead holder holds nothing, as the library says (#41: list --name
# exited 0 for it): the row is shown, gone, and the status says nobody.
check "list --name of a dead holder's claim exits 1" status_is 1 sc list --name stale
check "(its row is shown, gone)" bash -c "'$tool' --base '$base' list --raw --noheadings -o TYPE,STATE --name stale 2>/dev/null | grep -qx 'claim gone'"
check "(and it says no live process holds it)" bash -c "'$tool' --base '$base' list --name stale 2>&1 >/dev/null | grep -q \"no claim named 'stale' held by a live process\""
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
    bash -c "'$tool' --base '$base' list --output-all | head -1 | grep -qE '^TYPE +NAME +PID +STATE +SINCE +SERVER +COMMAND +DIR'"
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
# (LD_PRELOAD on python, the server's master, never on timeout)
timeout 60 env SWERVE_TMPDIR="$base" LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 \
    PYTHONPATH="${SCL_SRCDIR:?}/bindings/python" /usr/bin/python3 "$SCL_SRCDIR/tests/tools/claims_over_time.py" "$timeline" &
pids+=($!)
for _ in $(seq 200); do grep -q '^ready' "$timeline" 2>/dev/null && break; sleep 0.05; done
fact() { awk -v k="$1" '$1 == k { print $2 }' "$timeline"; }
busy_holder=$(fact busy_holder) busy_waiter=$(fact busy_waiter) busy_loop_waiter=$(fact busy_loop_waiter)
pids+=(${busy_holder:-} ${busy_waiter:-} ${busy_loop_waiter:-})
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
check "a process waiting in an event loop (swerve_claim_wait_fd) is a waiter too" \
    bash -c "'$tool' --base '$base' list -p ${busy_loop_waiter:-0} --raw --noheadings -o TYPE,NAME | grep -qx 'waiter busy'"
# A process that execs while one of its threads waits waits no more.
exec_base=$lone/exec-base
mkdir "$exec_base"
timeout 60 env SWERVE_TMPDIR="$exec_base" LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 \
    PYTHONPATH="$SCL_SRCDIR/bindings/python" /usr/bin/python3 -c '
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
pids+=($!)
for _ in $(seq 100); do
    execer=$(pgrep -P $! | head -n 1) # python, until it execs sleep
    [ -n "$execer" ] && [ "$(cat /proc/"$execer"/comm 2>/dev/null)" = sleep ] && break
    sleep 0.05
done
pids+=($execer $(pgrep -P "$execer"))
check "the master exec'd sleep" test "$(cat /proc/"$execer"/comm 2>/dev/null)" = sleep
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
    bash -c "out=\$('$tool' --base '$base' list --raw --noheadings -o TYPE,NAME,PID); grep -qx 'claim busy $busy_waiter' <<<\"\$out\" && ! grep -qx 'waiter busy $busy_waiter' <<<\"\$out\""
check "the new holder's SINCE is when it took the name" test "$(since_of busy)" -ge "$forced_at"

# A refused base is said with its mode in octal, as ls and chmod write it
# (#41: "mode 511" for 0777).
open_base=$lone/open-base
mkdir -m 0777 "$open_base" && chmod 0777 "$open_base"
said=$(SWERVE_TMPDIR=$open_base SWERVE_DEBUG=1 LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 \
    PYTHONPATH=$SCL_SRCDIR/bindings/python /usr/bin/python3 -c \
    'import swerve_claim
try:
    swerve_claim.Claim("octal").acquire(0)
except OSError:
    pass' 2>&1)
check "a refused base's mode is said in octal ($(grep -o 'mode [0-9]*' <<<"$said"))" grep -q 'mode 0777)' <<<"$said"

# history: how each hold ended, whoever ended it (#22).  A server whose
# workers end their holds every way there is (holds_over_time.py), in a
# base of its own.
history_base=$lone/history-base
mkdir "$history_base"
facts=$lone/holds
# (LD_PRELOAD on python itself, the master: it ends by itself in 30 s.)
SWERVE_TMPDIR=$history_base LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 "$SCL_SRCDIR/tests/tools/holds_over_time.py" "$facts" &
history_master=$!
pids+=($history_master)
for _ in $(seq 200); do grep -q '^ready' "$facts" 2>/dev/null && break; sleep 0.05; done
check "holds_over_time.py got ready" grep -q '^ready' "$facts"
fact() { awk -v k="$1" '$1 == k { print $2 }' "$facts"; }
pids+=($(fact killed) $(fact forced))
hs() { "$tool" --base "$history_base" history "$@"; }
# NAME PID HOW of NAME's holds, raw (a space is \x20 there).
hows() { hs --raw --noheadings -o NAME,PID,HOW "$1"; }
check "history: a hold its holder released" test "$(hows h-released)" = "h-released $(fact released) released"
check "history: a hold whose holder exited holding it" test "$(hows h-exited)" = "h-exited $(fact exited) exited"
check "history: a hold whose holder exec'd" test "$(hows h-execd)" = "h-execd $(fact execd) exec'd"
check "history: a hold still held" test "$(hows h-killed)" = "h-killed $(fact killed) held"
kill -9 "$(fact killed)"
for _ in $(seq 100); do grep -qx "reaped $(fact killed)" "$facts" && break; sleep 0.05; done
check "history: a SIGKILLed holder, cleared by its master as it reaped it ($(hows h-killed))" \
    test "$(hows h-killed)" = 'h-killed '"$(fact killed)"' killed\x20by\x20signal\x209'
"$tool" --base "$history_base" release --force h-forced >/dev/null 2>&1
check "history: a hold release --force ended" test "$(hows h-forced)" = "h-forced $(fact forced) forced"
check "history: of 20 holds of a name, the last 16, oldest first" \
    test "$(hs --raw --noheadings -o TOKEN h-many | tr '\n' ' ')" = "$(fact many | tail -16 | tr '\n' ' ')"
# (a record keeps the first 95 bytes: the sources' path may be longer)
check "history: every hold names its holder's command line, as much as a record keeps" python3 -c '
import subprocess, sys
raw = subprocess.run([sys.argv[1], "--base", sys.argv[2], "history", "--raw", "--noheadings", "-o", "COMMAND",
                      "h-released"], capture_output=True).stdout.strip()
command, full = raw.decode("unicode_escape"), sys.argv[3]
assert command and full.startswith(command) and len(command) >= min(len(full), 95), (command, full)
' "$tool" "$history_base" "/usr/bin/python3 $SCL_SRCDIR/tests/tools/holds_over_time.py $facts"
check "history: TAKEN and ENDED are ISO 8601, the hold's DURATION in seconds" \
    bash -c "'$tool' --base '$history_base' history --raw --noheadings -o TAKEN,ENDED,DURATION h-exited | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[+-][0-9]{2}:[0-9]{2} [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[+-][0-9]{2}:[0-9]{2} [0-9]+s\$'"
check "history NAME shows that name's holds only" \
    bash -c "'$tool' --base '$history_base' history --raw --noheadings -o NAME h-many | sort -u | grep -qx h-many"
check "history NAME of a name with a history exits 0" status_is 0 hs h-released
check "history NAME of a name with no history exits 1" status_is 1 hs nope
check "(and says so)" bash -c "'$tool' --base '$history_base' history nope 2>&1 | grep -q \"no history of a claim named 'nope'\""
check "history -p PID shows that process's holds only" test "$(hs --raw --noheadings -o NAME -p "$(fact exited)")" = h-exited
check "history -s MASTER finds the server's directory" \
    bash -c "'$tool' --base '$base' history -s $history_master --raw --noheadings -o NAME h-released | grep -qx h-released"
check "history without a NAME shows every name's, by name" \
    test "$(hs --raw --noheadings -o NAME | uniq | tr '\n' ' ')" = "h-execd h-exited h-forced h-killed h-many h-released "
check "history takes at most one NAME (2)" status_is 2 hs a b
if sc list --json >/dev/null 2>&1; then
    check "history --json: holds under \"holds\", times in epoch seconds" python3 -c "
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], '--base', sys.argv[2], 'history', '--json', '-O', 'h-killed'], capture_output=True).stdout)
h = d['holds']
assert len(h) == 1 and h[0]['pid'] == int(sys.argv[3]) and h[0]['how'] == 'killed by signal 9', h
assert isinstance(h[0]['taken'], int) and h[0]['ended'] >= h[0]['taken'] > 1700000000 and isinstance(h[0]['token'], int), h
" "$tool" "$history_base" "$(fact killed)"
fi
# A command run's claim ends as its run saw it end (not under the shim,
# it cannot say it itself); run's namespace lives on while $runner runs.
sc run h-status -- sh -c 'exit 3'
check "history: run's command that exited 3 holding the claim" \
    test "$(sc history --raw --noheadings -o NAME,HOW h-status)" = 'h-status exited\x20with\x20status\x203'
kill_pids "$history_master" "$(fact forced)"
# run's own namespace is removed as its last run ends: its history waits
# beside it for the next run, and shows meanwhile.
runs=$lone/runs
mkdir "$runs"
"$tool" --base "$runs" run nightly -- true
"$tool" --base "$runs" run nightly -- sh -c 'exit 2'
check "history: run's namespace keeps its history from one run to the next (none runs now)" \
    test "$("$tool" --base "$runs" history --raw --noheadings -o HOW nightly | tr '\n' ' ')" = 'exited\x20with\x20status\x200 exited\x20with\x20status\x202 '
# A run whose tool and command were both SIGKILLed leaves its claim to a
# dead holder; the namespace's next last run clears it as it removes it.
"$tool" --base "$runs" run abandoned -- sleep 30 &
abandoning=$!
abandoned=$(command_of $abandoning)
kill -9 "$abandoning"
wait "$abandoning" 2>/dev/null
kill_pids "$abandoned"
for _ in $(seq 100); do kill -0 "$abandoned" 2>/dev/null || break; sleep 0.05; done
"$tool" --base "$runs" run nightly -- true
check "history: a dead holder's hold ends as its directory is removed ('directory retired')" \
    test "$("$tool" --base "$runs" history --raw --noheadings -o PID,HOW abandoned)" = "$abandoned directory\x20retired"
check "(and the namespace is gone, its history beside it)" \
    test "$(find "$runs" -mindepth 1 -maxdepth 1 -printf '%f %y\n' | sort | tr '\n' ' ')" = "swerve-claim.run-$(id -u).history f "

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
# systemd drop-in's /run/swerve-claim/UNIT): the tools find them from its pid,
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

# ROLE: a uWSGI worker's command line is its master's; the master, its
# forked workers and an exec'd worker are told apart (#22).
roles=$lone/roles
mkdir "$roles"
SWERVE_TMPDIR=$roles LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 -c '
import os, sys, time
import swerve_claim
for i in range(2):
    if os.fork() == 0:
        held = swerve_claim.Claim(b"forked-%d" % i)
        held.acquire()
        time.sleep(30)
        os._exit(0)
if os.fork() == 0:
    os.execv(sys.executable, [sys.executable, "-c",
        "import time, swerve_claim; held = swerve_claim.Claim(b\"execd\"); held.acquire(); time.sleep(30)"])
time.sleep(30)' &
roles_master=$!
pids+=($roles_master)
for _ in $(seq 100); do
    [ "$("$tool" --base "$roles" list --raw --noheadings -o TYPE | grep -c '^claim')" -eq 3 ] && break
    sleep 0.05
done
pids+=($(pgrep -P $roles_master))
role_of() { # PID: its ROLE, from its process row
    "$tool" --base "$roles" list --raw --noheadings -o TYPE,PID,ROLE | awk -v p="$1" '$1 == "process" && $2 == p { print $3 }'
}
claim_pid() { # NAME: its holder's pid
    "$tool" --base "$roles" list --raw --noheadings -o TYPE,NAME,PID | awk -v n="$1" '$1 == "claim" && $2 == n { print $3 }'
}
forked0=$(claim_pid forked-0) forked1=$(claim_pid forked-1) execd=$(claim_pid execd)
check "ROLE: the master is master ($(role_of $roles_master))" test "$(role_of $roles_master)" = master
check "ROLE: its forked workers are workers ($(role_of "$forked0"), $(role_of "$forked1"))" \
    test "$(role_of "$forked0")/$(role_of "$forked1")" = worker/worker
check "(whose command lines are the master's: COMMAND cannot tell them apart)" bash -c "
    '$tool' --base '$roles' list --raw --noheadings -o TYPE,PID,COMMAND | awk '\$1 == \"process\" { print \$2, \$3, \$4 }' |
        awk '{ c[\$1] = \$2 \" \" \$3 } END { exit !(c[$roles_master] != \"\" && c[$roles_master] == c[${forked0:-0}]) }'"
check "ROLE: a worker that exec'd is exec'd ($(role_of "$execd"))" test "$(role_of "$execd")" = "exec'd"
check "ROLE: a claim's row shows its holder's" bash -c "
    '$tool' --base '$roles' list --raw --noheadings -o TYPE,NAME,ROLE | grep -qx \"claim execd exec'd\""
check "--output-all shows ROLE" bash -c "'$tool' --base '$roles' list --output-all | head -1 | grep -qw ROLE"
if sc list --json >/dev/null 2>&1; then
    check "list --json: role" python3 -c "
import json, subprocess, sys
d = json.loads(subprocess.run([sys.argv[1], '--base', sys.argv[2], 'list', '--json', '-O'], capture_output=True).stdout)
roles = {p['pid']: p['role'] for dir in d['directories'] for p in dir['children'] if p['type'] == 'process'}
assert roles == {int(sys.argv[3]): 'master', int(sys.argv[4]): 'worker', int(sys.argv[5]): 'worker', int(sys.argv[6]): \"exec'd\"}, roles
" "$tool" "$roles" "$roles_master" "${forked0:-0}" "${forked1:-0}" "${execd:-0}"
fi
kill_pids "$roles_master" "$forked0" "$forked1" "$execd"
# (a namespace of its own: the first run of a namespace is its master)
mkdir "$lone/run-role"
check "ROLE: run's command is exec'd, run itself the master" "$tool" --base "$lone/run-role" run role-run -- bash -c '
    "$0" --base "$1" list --raw --noheadings -o TYPE,NAME,PID,ROLE | grep -qx "claim role-run $$ exec'"'"'d" &&
    "$0" --base "$1" list --raw --noheadings -o TYPE,PID,ROLE | grep -qx "process $PPID master"' "$tool" "$lone/run-role"
# The prefork server's worker forks and execs a helper, which makes the
# directory and registers its parent, the worker: the master never claims,
# so it is no member, and the worker must not pass for it.
helper_base=$lone/helper
mkdir "$helper_base"
SWERVE_TMPDIR=$helper_base LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 \
    "$SCL_HELPERS/prefork/prefork_server" --port 0 --port-file "$helper_base/port" --workers 2 --report-ms 20000 \
    --exec-helper &
prefork=$!
pids+=($prefork)
for _ in $(seq 100); do [ -s "$helper_base/port" ] && break; sleep 0.05; done
curl -s --max-time 30 "http://127.0.0.1:$(cat "$helper_base/port")/report" >/dev/null &
pids+=($!)
for _ in $(seq 100); do
    helper=$("$tool" --base "$helper_base" list --raw --noheadings -o TYPE,NAME,PID | awk '$1 == "claim" { print $3 }')
    [ -n "$helper" ] && break
    sleep 0.05
done
pids+=($(pgrep -P $prefork))
helper_worker=$(awk '{ print $4 }' "/proc/${helper:-0}/stat" 2>/dev/null)
check "ROLE: the prefork server's exec'd helper is exec'd" \
    bash -c "'$tool' --base '$helper_base' list --raw --noheadings -o TYPE,PID,ROLE | grep -qx \"claim ${helper:-none} exec'd\""
check "ROLE: the worker that forked it is a worker, not the master" \
    bash -c "'$tool' --base '$helper_base' list --raw --noheadings -o TYPE,PID,ROLE | grep -qx 'process ${helper_worker:-none} worker'"
check "(and no member passes for the master)" bash -c "! '$tool' --base '$helper_base' list --raw --noheadings -o ROLE | grep -qx master"
stop_pid "$prefork" TERM 10

# metrics: node_exporter's textfile collector format, parsed by a real
# parser of it (python3-prometheus-client) after a strict reading of the
# grammar (metrics_check.py), a sample per claim and per waiter (#22).
mcheck=(/usr/bin/python3 "$SCL_SRCDIR/tests/tools/metrics_check.py")
mbase=$lone/metrics
mkdir "$mbase" "$mbase/out"
# Names the format escapes (", \, a newline), one that is not UTF-8, a
# terminal's control, one alike the not-UTF-8 one once escaped, and 300
# more, for a long file (a page of times keeps SCL_TIMES_SLOTS: some have no time).
SWERVE_TMPDIR=$mbase LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 PYTHONPATH=$SCL_SRCDIR/bindings/python \
    /usr/bin/python3 -c '
import os, time
import swerve_claim
names = [b"held-long", b"q\"uo\\te\nnl", b"caf\xe9", b"caf\\xe9", b"\x1b[2J"] + [b"bulk-%03d" % i for i in range(300)]
if os.fork() == 0:
    held = [swerve_claim.Claim(n) for n in names]
    for c in held:
        c.acquire()
    time.sleep(60)
    os._exit(0)
while swerve_claim.Claim(b"held-long").available():
    time.sleep(0.02)
if os.fork() == 0:
    waiter = swerve_claim.Claim(b"held-long")
    waiter.acquire(timeout=60)
    os._exit(0)
time.sleep(60)' &
m_master=$!
pids+=($m_master)
for _ in $(seq 200); do
    "$tool" --base "$mbase" metrics 2>/dev/null | grep -q '^swerve_claim_waiting_seconds{name="held-long"' && break
    sleep 0.05
done
pids+=($(pgrep -P $m_master))
m_holder=$("$tool" --base "$mbase" list --raw --noheadings -o TYPE,NAME,PID | awk '$1 == "claim" && $2 == "held-long" { print $3 }')
m_waiter=$("$tool" --base "$mbase" list --raw --noheadings -o TYPE,PID | awk '$1 == "waiter" { print $2 }')
m_dir=$("$tool" --base "$mbase" list --raw --noheadings -o TYPE,DIR | awk '$1 == "dir" { print $2 }')
"$tool" --base "$mbase" metrics >"$mbase/first.prom" 2>"$mbase/first.err"
check "metrics exits 0" test $? -eq 0
check "metrics writes the collector's format, one gauge family each, no timestamps ($(head -c 300 "$mbase/first.prom" | tr '\n' ' '))" \
    "${mcheck[@]}" "$mbase/first.prom" "len(samples('swerve_claim_held_seconds')) == 304"
# Its server by what a restart keeps (#41: the random directory): its
# master's command name (here python3; a systemd unit where there is one),
# and the master's pid apart.
check "metrics: a claim's held seconds, with its server, its master's pid, pid, user and state" \
    env HOLDER="${m_holder:-none}" ME="$me" MASTER="$m_master" "${mcheck[@]}" "$mbase/first.prom" \
    "value('swerve_claim_held_seconds', name='held-long', server='python3', server_pid=env['MASTER'], pid=env['HOLDER'], user=env['ME'], state='alive') >= 0"
check "(the random directory is in no label)" test -n "$m_dir" -a -z "$(grep -F "$m_dir" "$mbase/first.prom")"
check "metrics: a live holder's claim is not stale" "${mcheck[@]}" "$mbase/first.prom" "value('swerve_claim_stale', name='held-long') == 0"
check "metrics: waiters counts the claim's waiter, and 0 for the others" "${mcheck[@]}" "$mbase/first.prom" \
    "value('swerve_claim_waiters', name='held-long') == 1" "value('swerve_claim_waiters', name='bulk-007') == 0"
check "metrics: a waiter's waiting seconds, with its pid" env WAITER="${m_waiter:-none}" "${mcheck[@]}" "$mbase/first.prom" \
    "value('swerve_claim_waiting_seconds', name='held-long', pid=env['WAITER']) >= 0"
check 'metrics: ", \ and a newline escaped as the format says, and parsed back whole' \
    env ODD=$'q"uo\\te\nnl' "${mcheck[@]}" "$mbase/first.prom" "value('swerve_claim_held_seconds', name=env['ODD']) >= 0"
check "(written \\\" \\\\ \\n)" grep -qF 'name="q\"uo\\te\nnl"' "$mbase/first.prom"
check "metrics: a byte that is not UTF-8, and ESC, as the text \\xHH" "${mcheck[@]}" "$mbase/first.prom" \
    "value('swerve_claim_held_seconds', name='caf\\\\xe9') >= 0" "value('swerve_claim_held_seconds', name='\\\\x1b[2J') >= 0"
check "(no ESC reaches the output)" bash -c "! grep -q $'\x1b' '$mbase/first.prom'"
check "metrics: two names alike once escaped are one sample, and said" \
    grep -q "2 samples left out: their labels were another's" "$mbase/first.err"
slots=$(awk '$2 == "SCL_TIMES_SLOTS" { print $3 }' "$SCL_SRCDIR/src/fs/times.h")
check "metrics: a claim with no time (past its holder's ${slots}th name) is NaN" "${mcheck[@]}" "$mbase/first.prom" \
    "sum(1 for l, v in samples('swerve_claim_held_seconds') if v != v) == 305 - ${slots:-0}"
before=$("${mcheck[@]}" "$mbase/first.prom" "print(value('swerve_claim_held_seconds', name='held-long')) or True")
sleep 1.1
"$tool" --base "$mbase" metrics >"$mbase/second.prom" 2>/dev/null
check "metrics: held seconds grow ($before, then more than a second later)" env BEFORE="${before:-x}" \
    "${mcheck[@]}" "$mbase/second.prom" "value('swerve_claim_held_seconds', name='held-long') >= float(env['BEFORE']) + 1"
check "metrics --server PID: that server's claims" \
    bash -c "'$tool' --base '$base' metrics --server ${m_holder:-0} | grep -q '^swerve_claim_held_seconds{name=\"held-long\"'"
check "metrics --server of no member: 1" status_is 1 sc metrics --server $$
check "metrics takes no arguments (2)" status_is 2 sc metrics extra
# --output: the collector's rules, and a reader that never sees a part.
prom=$mbase/out/swerve-claim.prom
(umask 077 && "$tool" --base "$mbase" metrics --output "$prom" 2>/dev/null)
check "metrics --output writes the file, mode 0644 whatever the umask ($(stat -c %a "$prom" 2>&1))" \
    test "$(stat -c %a "$prom" 2>&1)" = 644
check "(the collector's format)" "${mcheck[@]}" "$prom" "value('swerve_claim_waiters', name='held-long') == 1"
"${mcheck[@]}" --watch "$prom" "$mbase/stop" >"$mbase/readings" 2>&1 &
reader=$!
pids+=($reader)
rewrites=0
for _ in $(seq 40); do "$tool" --base "$mbase" metrics --output "$prom" 2>/dev/null && rewrites=$((rewrites + 1)); done
touch "$mbase/stop"
wait $reader
check "metrics --output: a reader never sees the file half-written ($rewrites rewrites, $(tr '\n' ' ' <"$mbase/readings") readings)" \
    bash -c "[ $rewrites -eq 40 ] && grep -qxE '[0-9]+' '$mbase/readings'"
check "(no temporary left)" test "$(ls -A "$mbase/out")" = swerve-claim.prom
mkdir -p "$mbase/out/busy/x"
check "metrics --output over a directory fails (1)" status_is 1 sc metrics --output "$mbase/out/busy"
check "(and its temporary is removed)" test -z "$(ls -A "$mbase/out" | grep -v -e '^swerve-claim.prom$' -e '^busy$')"
check "metrics --output in no directory fails (1)" status_is 1 sc metrics --output "$mbase/none/x.prom"
kill_pids "$m_master" $(pgrep -P $m_master)
# A SIGKILLed holder nobody reaps is stale until gc clears it.
"$tool" --base "$base" run doomed -- sleep 30 &
doomed_run=$!
pids+=($doomed_run)
check "a holder takes 'doomed'" wait_held doomed
doomed=$(command_of $doomed_run)
kill -9 $doomed_run
wait $doomed_run 2>/dev/null
kill -9 "$doomed"
for _ in $(seq 100); do kill -0 "$doomed" 2>/dev/null || break; sleep 0.05; done
check "metrics: a SIGKILLed holder's claim is stale, gone, before gc" \
    bash -c "'$tool' --base '$base' metrics | /usr/bin/python3 '$SCL_SRCDIR/tests/tools/metrics_check.py' - \"value('swerve_claim_stale', name='doomed', state='gone') == 1\""
sc gc >/dev/null
check "(and gone from the metrics after gc)" \
    bash -c "'$tool' --base '$base' metrics | /usr/bin/python3 '$SCL_SRCDIR/tests/tools/metrics_check.py' - \"samples('swerve_claim_stale', name='doomed') == []\""

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
