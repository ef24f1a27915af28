#!/bin/bash
# SPDX-License-Identifier: MIT
# An adversary that never sleeps (issue 40).  A root master under the
# shim (tests/security/adversary.c) keeps hostile workers of a throwaway
# user busy with seeded random operations on everything they can reach,
# forked again as they die, beside three honest workers of another
# throwaway user that claim and release h0, h1, h2 and log when they got
# and let go of each; root's tools run against it every round.  After
# every round (about 1 s) one line says, and the test checks:
#   (a) no two honest workers held one name at the same time (from the
#       log's intervals: each "got" is written after acquire() returned,
#       each "rel" before release() is called, so logged intervals lie
#       inside the real holds);
#   (b) nothing of root's outside the claim directory changed: the
#       canaries in T/outside (0600 files, 0711 directories, a FIFO, a
#       symlink, which the hostile workers cannot read but can name by
#       symlinks and journal lines) and T/base/rootfile keep their mode,
#       owner, size, inode, links, and their access, change and
#       modification times (atime since 2001: any read by root shows);
#   (c) every root operation ends within its bound: each tool within
#       5 s, each of the master's reaps and claims within 2 s;
# and once the master is stopped (SIGTERM to its pid): it ends within
# 15 s, (d) no worker is left, and the server's directory is gone (or,
# as doc/security.md says of what a worker can leave behind, kept by the
# hostile workers' plants, and a new root server's start sweeps beside it
# within 5 s).
#
# Excluded, and why: doc/security.md's "What is not promised" says a
# worker may unlink or plant entries in its own server's claims/ and so
# break exclusion within that server.  The hostile workers therefore
# never unlink, rename or replace the honest names h0-h2 nor the honest
# workers' holder files (adversary.c's is_protected()); everything else
# they reach (h3, their names, root's files in the top, claims/ itself)
# is fair game.
#
# SCL_ADVERSARY_SEED=N replays a run's operations (its seed is printed
# first and in every failure); SCL_ADVERSARY_SECONDS, else
# SCL_SOAK_SECONDS, else 60, is how long it runs.
# SCL_ADVERSARY_UNPROTECTED=1 lifts
# the exclusion above: (a) must then fail, as it does.  The tally line is
# "adversary.sh: N passed, N failed".
set -u
. "$(dirname "$0")/../lib/check.sh" || exit 99
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the adversary needs root (throwaway users, a root master)" && exit 77; }
adversary=${SCL_HELPERS:?run through make check}/security/adversary
tool=$SCL_HELPERS/../swerve-claim
preload=${SCL_ASAN_RUNTIME:+$SCL_ASAN_RUNTIME:}${SCL_PRELOAD:?}
seconds=${SCL_ADVERSARY_SECONDS:-${SCL_SOAK_SECONDS:-60}}
seconds=${seconds%.*}
seed=${SCL_ADVERSARY_SEED:-$(($(date +%s%N) % 4294967296))}
# The whole test under a hard timeout: SIGTERM (the cleanup runs), then
# SIGKILL a minute later.
if [ -z "${SCL_ADVERSARY_TIMED:-}" ]; then
    SCL_ADVERSARY_TIMED=1 SCL_ADVERSARY_SEED=$seed exec timeout -k 60 $((seconds * 3 + 300)) "$0" "$@"
fi
trap 'exit 1' TERM
echo "adversary.sh: seed $seed (SCL_ADVERSARY_SEED=$seed replays it), $seconds s"
said_seed="seed $seed"

t=$(mktemp -d /tmp/scl-adversary.XXXXXX)
chmod 755 "$t"
att=scl-x$$
oth=scl-h$$
master_job=
cleanup() {
    [ -n "$master_job" ] && kill_pids "$master_job"
    for p in $(pgrep -u "$att,$oth"); do kill -9 "$p" 2>/dev/null; done
    userdel "$att" 2>/dev/null
    userdel "$oth" 2>/dev/null
    rm -rf "$t"
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin -d /nonexistent "$att" || exit 1
useradd -M -N -s /usr/sbin/nologin -d /nonexistent "$oth" || exit 1

# The canaries: root's, which the hostile workers may name but not read.
install -d -m 711 "$t/outside" "$t/outside/dir"
install -d -m 1777 "$t/base"
for f in outside/file outside/secret outside/dir/inner base/rootfile; do
    printf 'canary %s\n' "$f" >"$t/$f"
    chmod 600 "$t/$f"
done
mkfifo -m 600 "$t/outside/fifo"
ln -s file "$t/outside/link"
canaries=(outside outside/dir outside/file outside/secret outside/dir/inner outside/fifo outside/link base/rootfile)
hashes=$(cd "$t" && sha256sum outside/file outside/secret outside/dir/inner base/rootfile)
for f in "${canaries[@]}"; do touch -h -d '2001-01-01 00:00:00' "$t/$f"; done
# A symlink's atime is left out: whoever follows it reads it, the hostile
# workers too.
snapshot() {
    (cd "$t" && stat -c '%n %F %a %U %G %s %i %h atime=%X mtime=%Y ctime=%Z' "${canaries[@]}" 2>&1) |
        sed '/^outside\/link /s/ atime=[0-9]*//'
}
before=$(snapshot)
canaries_changed() { # prints what changed, if anything
    diff <(echo "$before") <(snapshot) | sed -n 's/^> /now: /p'
}

# (a): "HOLDS OVERLAPS FIRST-OVERLAP" of the honest log.  An interval not
# closed yet ends never.
check_holds() {
    awk 'NF == 4 && $4 == "got" { start[$3] = $1; name[$3] = $2; next }
         NF == 4 && $4 == "rel" && ($3 in start) { print $2, start[$3], $1, $3; delete start[$3] }
         END { for (p in start) print name[p], start[p], "9000000000000000000", p }' "$t/holds.log" 2>/dev/null |
        sort -k1,1 -k2,2n |
        awk '$1 != cur { cur = $1; end = 0; who = "" }
             { n++
               if ($2 + 0 < end + 0 && $4 != who) { bad++; if (first == "") first = $1 " held by " who " until " end " and by " $4 " from " $2 }
               if ($3 + 0 > end + 0) { end = $3; who = $4 } }
             END { print n + 0, bad + 0, first }'
}

stat_of() { # WORD: the last "stats" line's number after WORD
    grep '^stats ' "$t/master.out" | tail -n 1 | sed -n "s/.* $1 \([0-9.]*\).*/\1/p"
}
over() { # VALUE BOUND: VALUE is missing or above BOUND
    awk -v v="$1" -v b="$2" 'BEGIN { exit !(v == "" || v + 0 > b + 0) }'
}

: >"$t/master.out"
setsid timeout -s KILL $((seconds + 120)) env -i PATH=/usr/bin:/bin SWERVE_TMPDIR="$t/base" \
    ASAN_OPTIONS=detect_leaks=0\
    ${SCL_ADVERSARY_UNPROTECTED:+SCL_ADVERSARY_UNPROTECTED=1} LD_PRELOAD="$preload" \
    "$adversary" serve "$(id -u "$att")" "$(id -u "$oth")" "$t" "$seconds" "$seed" >"$t/master.out" 2>&1 &
master_job=$!
master=
for _ in $(seq 200); do
    master=$(sed -n 's/^master \([0-9]*\) .*/\1/p' "$t/master.out")
    [ -n "$master" ] && break
    sleep 0.05
done
if [ -z "$master" ]; then
    fail "$said_seed: the master did not start: $(head -c 2000 "$t/master.out")"
    finish
    exit
fi
dir=$(sed -n 's/^master [0-9]* seed [0-9]* dir //p' "$t/master.out")
echo "master $master, its directory $dir"

# Root's tools, each under a KILL timeout of 10 s; the bound is 5 s.
tool_ms() { # ARG...: runs the tool, prints "MS STATUS"
    local t0 rc
    t0=$(now_ns)
    timeout -s KILL 10 "$tool" --base "$t/base" "$@" >/dev/null 2>>"$t/tools.err"
    rc=$?
    echo "$((($(now_ns) - t0) / 1000000)) $rc"
}

round=0 rounds_failed=0 overlaps_said=0 changed_said=
deadline=$((SECONDS + seconds))
while [ $SECONDS -lt $deadline ] && [ $round -lt $((seconds * 2 + 10)) ]; do
    round=$((round + 1))
    sleep 1
    bad=()
    if ! kill -0 "$master" 2>/dev/null; then
        fail "$said_seed round $round: the master is gone: $(tail -n 5 "$t/master.out")"
        break
    fi
    hostile=$(stat_of pid)
    times=""
    # In turn: through the master's descriptors, through the current
    # hostile worker's, and the directory named (a hostile worker may
    # unlink root's holder file, and root's tools then rightly say the
    # master is no member).
    case $((round % 3)) in
    1) server=$master ;;
    2) server=${hostile:-$master} && [ "$server" = 0 ] && server=$master ;;
    *) server=$dir ;;
    esac
    for cmd in list metrics history gc; do
        read -r ms rc < <(tool_ms "$cmd" --server "$server")
        times+=" $cmd ${ms}ms"
        [ "$rc" -eq 137 ] || [ "$ms" -gt 5000 ] && bad+=("root's $cmd --server $server took $ms ms (status $rc; the bound is 5 s)")
    done
    changed=$(canaries_changed)
    [ "$changed" != "$changed_said" ] && bad+=("root changed something outside the claim directory: $changed")
    changed_said=$changed
    read -r holds overlaps first < <(check_holds)
    [ "$overlaps" -eq "$overlaps_said" ] ||
        bad+=("two honest workers held one name at once ($overlaps times so far): $first")
    overlaps_said=$overlaps
    reap_max=$(stat_of reap_max_ms) acquire_max=$(stat_of acquire_max_ms)
    over "$reap_max" 2000 && bad+=("the master's slowest reap took ${reap_max:-?} ms (the bound is 2 s)")
    over "$acquire_max" 2000 && bad+=("the master's slowest claim took ${acquire_max:-?} ms (the bound is 2 s)")
    echo "round $round:$times; reaps $(stat_of reaps) (slowest ${reap_max:-?} ms), master's claims" \
        "$(stat_of acquires) (slowest ${acquire_max:-?} ms); honest holds $holds, overlaps $overlaps;" \
        "canaries ${changed:+CHANGED}${changed:-untouched}; hostile workers $(stat_of hostile)"
    if [ ${#bad[@]} -eq 0 ]; then
        pass
    else
        for b in "${bad[@]}"; do fail "$said_seed round $round: $b"; done
        rounds_failed=$((rounds_failed + 1))
        [ $rounds_failed -ge 5 ] && break
    fi
done
grep -v '^stats \|^master ' "$t/master.out" | head -n 20

# (d) Stopped by its pid: the master ends, reaps every worker, and
# nothing of the server is left running.
t0=$(now_ns)
kill -TERM "$master"
for _ in $(seq 300); do
    kill -0 "$master" 2>/dev/null || break
    sleep 0.05
done
ms=$((($(now_ns) - t0) / 1000000))
if kill -0 "$master" 2>/dev/null; then
    fail "$said_seed: the master still runs 15 s after SIGTERM"
else
    echo "the master ended $ms ms after SIGTERM: $(grep '^stopped' "$t/master.out")"
    grep -qx 'stopped all reaped' "$t/master.out" && pass || fail "$said_seed: the master did not reap every worker"
fi
wait "$master_job" 2>/dev/null
master_job=
left=
for _ in $(seq 50); do
    left=$(pgrep -u "$att,$oth" -a)
    [ -z "$left" ] && break
    sleep 0.1
done
[ -z "$left" ] && pass || fail "$said_seed: processes left after the master ended: $left"
over "$(stat_of reap_max_ms)" 2000 && fail "$said_seed: the master's slowest reap took $(stat_of reap_max_ms) ms"
grep honest "$t/holds.log" | sed 's/^/  /'

# What is left of the server's directory: nothing, or the plants of the
# hostile workers (doc/security.md: "What a worker can leave behind").
# A new root server's first claim sweeps the base beside it.
if [ -e "$dir" ]; then
    planted=$(find "$dir" -maxdepth 2 -mindepth 1 ! -user root ! -user "$oth" 2>/dev/null | wc -l)
    echo "the directory stayed, with $(find "$dir" -mindepth 1 2>/dev/null | wc -l) entries, $planted of them the hostile workers'"
    [ -d "$dir/claims" ] && [ ! -L "$dir/claims" ] && [ "$(stat -c %U "$dir/claims")" = root ] || planted=$((planted + 1))
    [ "$planted" -gt 0 ] && pass || fail "$said_seed: the directory stayed with nothing of the hostile workers' in it: $(ls -la "$dir" "$dir/claims" 2>&1 | head -n 20)"
fi
out=$(timeout -s KILL 60 env -i PATH=/usr/bin:/bin SWERVE_TMPDIR="$t/base" ASAN_OPTIONS=detect_leaks=0 \
    LD_PRELOAD="$preload" "$adversary" start-once 2>&1)
ms=$(sed -n 's/^start \([0-9]*\).*/\1/p' <<<"$out")
echo "a new root server's start beside what was left: ${ms:-?} ms"
[ -n "$ms" ] && ! over "$ms" 5000 && pass || fail "$said_seed: a new root server's start took ${ms:-?} ms: $out"
read -r ms rc < <(tool_ms gc)
echo "root's gc of the base afterwards: $ms ms, status $rc"
[ "$rc" -ne 137 ] && [ "$ms" -le 5000 ] && pass || fail "$said_seed: root's gc of the base took $ms ms (status $rc)"

# (b) once more, the canaries' bytes too (read last: it changes atime).
changed=$(canaries_changed)
[ -z "$changed" ] && pass || fail "$said_seed: root changed something outside the claim directory: $changed"
[ "$(cd "$t" && sha256sum outside/file outside/secret outside/dir/inner base/rootfile)" = "$hashes" ] && pass ||
    fail "$said_seed: a canary's bytes changed"
[ -s "$t/tools.err" ] && echo "what root's tools said (first lines):" && sort "$t/tools.err" | uniq -c | sort -rn | head -n 8
echo "adversary.sh: $said_seed"
finish
