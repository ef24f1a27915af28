#!/bin/bash
# SPDX-License-Identifier: MIT
# The tools on the PostgreSQL store (issue #19, item 9), against a private
# cluster (cluster.sh): list -O shows every column (SESSION too), --pid and
# --watch work, every library holder's SINCE shows (without a write on the
# acquire's path), its TOKEN once it asked for it, and both are left
# blank, never made up, when nobody knows them; a release leaves no lock of
# the library's behind; release --force names the token only when known;
# and every failure of the store says the server's words.
. "$(dirname "$0")/../real-servers/lib.sh"
. "$(dirname "$0")/cluster.sh"
trap 'finish_servers; pg_cluster_stop' EXIT

helper=$SCL_HELPERS/pg/pg_helper
tool=$SCL_HELPERS/../swerve-claim
# Waits (at most 5 s) until FILE has a line matching RE.
wait_line() { for _ in $(seq 100); do grep -Eq "$2" "$1" && return 0; sleep 0.05; done; return 1; }
# Waits (at most 5 s) until SQL (a count) says N.
wait_sql() { for _ in $(seq 100); do [ "$(pg_sql "$1")" = "$2" ] && return 0; sleep 0.05; done; return 1; }
here=$(hostname)

pg_cluster_start || exit 1
check "db init" pg_cluster_init "$tool"
export SWERVE_CLAIM_STORE=$SCL_PG_URL
password=$(cat "$PG_DIR/pw")

# ---- the holders and waiters every check below looks at
# holder 1, of the library: it asks for its token (pg_helper prints it)
started=$(($(now_ns) / 1000000000))
"${under_shim[@]}" "$helper" hold alpha >"$work/h1" &
h1=$!
server_pids+=("$h1")
check "a library holder of alpha" wait_line "$work/h1" '^held [0-9]+$'
h1_token=$(awk '/^held/ { print $2 }' "$work/h1")
# a tokenless holder of beta: a session of the servers' role, named as the
# library names its sessions, that never asked for a token (as a process
# that acquires and never calls swerve_claim_token() leaves it)
"${under_shim[@]}" "$helper" take beta 0 >/dev/null # beta into the registry
(exec env PGAPPNAME="swerve-claim pid=$BASHPID host=$here" "$pg_bin/psql" -qAtX "$SCL_PG_URL" \
    -c "SELECT pg_advisory_lock(1398231638, (SELECT id FROM swerve_claim.names WHERE scope = 'default' AND name = 'beta'))" \
    -c "SELECT pg_sleep(60)" >/dev/null 2>&1) &
tokenless=$!
server_pids+=("$tokenless")
# a library holder of gamma that never asks for its token
gamma_from=$(($(now_ns) / 1000000000))
"${under_shim[@]}" "$helper" hold gamma notoken >"$work/h3" &
h3=$!
server_pids+=("$h3")
check "a library holder of gamma, without a token" wait_line "$work/h3" '^held 0$'
lock_count() { # NAME HELD
    echo "SELECT count(*) FROM swerve_claim.claims WHERE scope = 'default' AND name = '$1' AND held = $2"
}
check "a tokenless holder of beta" wait_sql "$(lock_count beta true)" 1
# a waiter for alpha, of the library
waited_from=$(($(now_ns) / 1000000000))
"${under_shim[@]}" "$helper" take alpha 30 >"$work/w1" &
w1=$!
server_pids+=("$w1")
# a waiter for alpha on another machine whose process has holder 1's pid
(exec env PGAPPNAME="swerve-claim pid=$h1 host=elsewhere.example" "$pg_bin/psql" -qAtX "$SCL_PG_URL" \
    -c "SELECT pg_advisory_lock(1398231638, (SELECT id FROM swerve_claim.names WHERE scope = 'default' AND name = 'alpha'))" \
    >/dev/null 2>&1) &
server_pids+=($!)
check "two waiters for alpha" wait_sql "$(lock_count alpha false)" 2
h1_session=$(pg_sql "SELECT backend FROM swerve_claim.claims WHERE name = 'alpha' AND held")

# ---- 1. -O: every column, SESSION among them
"$tool" list -O --raw >"$work/all" 2>&1
check "list -O: the SESSION column is there" \
    bash -c "head -1 '$work/all' | grep -qw SESSION && head -1 '$work/all' | grep -qw SELF-REPORTED"
check "list -O: holder 1's row has its session" has "^holder alpha .* $h1_session " "$work/all"
"$tool" list -O --json >"$work/all.json" 2>&1
check "list -O --json: session and self-reported in every row, holder 1's its own" \
    python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['claims']
def rows(rs):
    for r in rs:
        yield r
        yield from rows(r.get('children', []))
rs = list(rows(d))
assert rs and all('session' in r and 'self-reported' in r for r in rs), rs
assert [r['session'] for r in rs if r['type'] == 'holder' and r['name'] == 'alpha'] == [int(sys.argv[2])], rs" \
    "$work/all.json" "$h1_session"
"$tool" list -o NAME,SESSION --raw --noheadings --notruncate >"$work/some" 2>&1
check "list -o NAME,SESSION (as before)" has "^alpha $h1_session$" "$work/some"

# ---- 2. --pid and --watch
"$tool" list -p "$h1" --raw --noheadings -o TYPE,NAME,REPORTED-HOST,REPORTED-PID >"$work/pid" 2>&1
check "list -p PID: that process of this host, holding alpha" test "$(cat "$work/pid")" = "holder alpha $here $h1"
"$tool" list -p "$h1@elsewhere.example" --raw --noheadings -o TYPE,NAME,REPORTED-HOST,REPORTED-PID >"$work/pid-there" 2>&1
check "list -p PID@HOST: that host's process of that pid, waiting for alpha" \
    test "$(cat "$work/pid-there")" = "waiter alpha elsewhere.example $h1"
"$tool" list -p "$w1" --raw --noheadings -o TYPE,NAME,REPORTED-PID >"$work/pid-waiter" 2>&1
check "list -p PID of a waiter: its wait alone" test "$(cat "$work/pid-waiter")" = "waiter alpha $w1"
"$tool" list -p "$tokenless" --raw --noheadings -o TYPE,NAME >"$work/pid-tokenless" 2>&1
check "list -p: the tokenless holder" test "$(cat "$work/pid-tokenless")" = "holder beta"
"$tool" list -p "$h1" -n beta >/dev/null 2>&1
check "list -p PID -n NAME, none: exit 1" test $? -eq 1
"$tool" list -p 12x >/dev/null 2>&1
check "list -p 12x: usage, exit 2" test $? -eq 2
env -u SWERVE_CLAIM_STORE "$tool" list -b "$work" -p "$h1@elsewhere.example" >/dev/null 2>&1
check "list -p PID@HOST without SWERVE_CLAIM_STORE: usage, exit 2" test $? -eq 2
# drain works on local claim directories: with the claims in PostgreSQL a
# worker learns it drains from its master alone (#23).
"$tool" drain -p "$h1" >"$work/drain.out" 2>&1
check "drain with SWERVE_CLAIM_STORE: usage, exit 2, saying why" \
    bash -c "[ $? -eq 2 ] && grep -q 'works on local claim directories' '$work/drain.out'"

"$tool" list --watch=0.2 --raw --noheadings -o NAME,TYPE >"$work/watch" 2>"$work/watch.err" &
watcher=$!
server_pids+=("$watcher")
sleep 1.5
kill -0 "$watcher" 2>/dev/null
check "list --watch keeps running" test $? -eq 0
check "(and stops by its pid)" stop_pid "$watcher" TERM 5
check "list --watch lists again and again (at least 4 times in 1.5 s)" \
    test "$(grep -c '^beta holder$' "$work/watch")" -ge 4
check "(and says nothing on standard error)" test ! -s "$work/watch.err"

# ---- 3. TOKEN and SINCE
now=$(($(now_ns) / 1000000000))
"$tool" list --json -o TYPE,NAME,REPORTED-PID,SINCE,TOKEN,SESSION,AGE >"$work/since.json" 2>&1
check "list: AGE is how long alpha has been held, in seconds in JSON" \
    python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['claims']
h = [r for r in d if r['name'] == 'alpha' and r['type'] == 'holder']
assert len(h) == 1 and 0 <= h[0]['age'] <= int(sys.argv[2]) - int(sys.argv[3]) + 1, (h, sys.argv[2:])" \
    "$work/since.json" "$(($(now_ns) / 1000000000))" "$started"
check "list --older-than 1h: no holder that old, exit 0" bash -c "! '$tool' list --raw --noheadings -o TYPE --older-than 1h | grep -q holder"
"$tool" list --older-than 1h >/dev/null 2>&1
check "(exit 0)" test $? -eq 0
"$tool" list --raw --noheadings -o TYPE,NAME --older-than 0 >"$work/older" 2>&1
older_status=$?
check "list --older-than 0: the holders held a second or more, with their waiters; exit 1" \
    bash -c "[ $older_status -eq 1 ] && grep -qx 'holder alpha' '$work/older' && grep -qx 'waiter alpha' '$work/older'"
check "list --stale is refused with the store (2)" bash -c "'$tool' list --stale >/dev/null 2>&1; [ \$? -eq 2 ]"
check "list: holder 1 (it asked for its token) shows its token and since" \
    python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['claims']
h = [r for r in d if r['name'] == 'alpha' and r['type'] == 'holder']
assert len(h) == 1 and h[0]['token'] == int(sys.argv[2]), h
assert int(sys.argv[3]) - 1 <= h[0]['since'] <= int(sys.argv[4]), h" \
    "$work/since.json" "$h1_token" "$started" "$now"
check "list: the library holder that never asked for a token shows when it took gamma; TOKEN blank" \
    python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['claims']
h = [r for r in d if r['name'] == 'gamma' and r['type'] == 'holder']
assert len(h) == 1 and h[0]['reported-pid'] == int(sys.argv[2]) and h[0]['token'] is None, h
assert int(sys.argv[3]) - 1 <= h[0]['since'] <= int(sys.argv[4]), (h, sys.argv[3:])" \
    "$work/since.json" "$h3" "$gamma_from" "$now"
check "list: a session that took beta's lock itself: TOKEN and SINCE blank, never made up" \
    python3 -c "import json, sys; d = json.load(open(sys.argv[1]))['claims']
h = [r for r in d if r['name'] == 'beta']
assert len(h) == 1 and h[0]['token'] is None and h[0]['since'] is None, h" "$work/since.json"
"${under_shim[@]}" "$helper" let-go delta >"$work/let-go" &
let_go=$!
server_pids+=("$let_go")
check "a library process took delta twice (once with a token) and let go" wait_line "$work/let-go" '^released$'
check "(its session, still there, holds no advisory lock at all)" \
    test "$(pg_sql "SELECT count(*) || ' ' || count(l.pid) FROM pg_stat_activity a
                    LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory'
                    WHERE a.application_name = 'swerve-claim pid=$let_go host=$here'")" = "1 0"
check "(and list shows no delta)" bash -c "! '$tool' list -n delta >/dev/null 2>&1"
sleep 1.5 # a waiter's SINCE is when it began to wait, not when its latest try began
"$tool" list --json -o TYPE,NAME,REPORTED-PID,SINCE >"$work/waiter.json" 2>&1
check "list: the waiter's SINCE is when it began to wait" \
    python3 -c "import json, sys, time; d = json.load(open(sys.argv[1]))['claims']
w = [c for r in d for c in r.get('children', []) if c.get('reported-pid') == int(sys.argv[2])]
assert len(w) == 1 and int(sys.argv[3]) - 1 <= w[0]['since'] <= int(sys.argv[3]) + 1, (w, d)" \
    "$work/waiter.json" "$w1" "$waited_from"

# ---- 3b. metrics: the same holders and waiters, for Prometheus (#22)
mcheck=(/usr/bin/python3 "${SCL_SRCDIR:?run through make check}/tests/tools/metrics_check.py")
"$tool" metrics >"$work/metrics.prom" 2>"$work/metrics.err"
check "metrics exits 0 ($(head -c 200 "$work/metrics.err"))" test $? -eq 0
alpha_role=$(pg_sql "SELECT role FROM swerve_claim.claims WHERE name = 'alpha' AND held")
check "metrics: the collector's format; alpha's holder by the scope, its host, pid and role, held for seconds" \
    env H1="$h1" HERE="$here" ROLE="$alpha_role" "${mcheck[@]}" "$work/metrics.prom" \
    "value('swerve_claim_held_seconds', name='alpha', server='default', host=env['HERE'], pid=env['H1'], user=env['ROLE'], state='holder') >= 1"
check "metrics: a session's claim is never stale" "${mcheck[@]}" "$work/metrics.prom" \
    "value('swerve_claim_stale', name='alpha') == 0" "value('swerve_claim_stale', name='gamma') == 0"
check "metrics: alpha's two waiters, each with its host and pid" \
    env W1="$w1" H1="$h1" HERE="$here" "${mcheck[@]}" "$work/metrics.prom" "value('swerve_claim_waiters', name='alpha') == 2" \
    "value('swerve_claim_waiting_seconds', name='alpha', host=env['HERE'], pid=env['W1']) >= 1" \
    "value('swerve_claim_waiting_seconds', name='alpha', host='elsewhere.example', pid=env['H1']) >= 1"
check "metrics: beta's holder, whose since nobody knows, is NaN, not made up" "${mcheck[@]}" "$work/metrics.prom" \
    "value('swerve_claim_held_seconds', name='beta') != value('swerve_claim_held_seconds', name='beta')"
check "metrics --server is for local claim directories (2)" \
    bash -c "'$tool' metrics --server 1 >/dev/null 2>&1; [ \$? -eq 2 ]"
cp "$work/metrics.prom" "$work/kept.prom"
SWERVE_CLAIM_STORE=postgresql://app:wrong-$password@127.0.0.1:$PG_PORT/claims \
    "$tool" metrics --output "$work/kept.prom" >/dev/null 2>"$work/metrics-wrong.err"
check "metrics on a store it cannot read fails (1), saying why" \
    bash -c "[ $? -eq 1 ] && grep -q 'password authentication failed' '$work/metrics-wrong.err'"
check "(and leaves --output's file as it was, for its age to tell)" cmp -s "$work/metrics.prom" "$work/kept.prom"
check "(no temporary beside it)" bash -c "! ls -A '$work' | grep -q '^\.kept\.prom\.'"

# ---- 4. release --force: the token only when known
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$tool" release --force beta >"$work/rel-beta.out" 2>"$work/rel-beta.err"
check "release --force of the tokenless holder: done" has "released 'beta'" "$work/rel-beta.out"
check "(its warning never says token 0)" lacks "token 0" "$work/rel-beta.err"
check "(it says the token is unknown)" has "WARNING: ended the database session .*'beta' \(its token unknown\)" \
    "$work/rel-beta.err"
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$tool" release --force alpha >"$work/rel-alpha.out" 2>"$work/rel-alpha.err"
check "release --force of holder 1: its token, as it was handed out" \
    has "WARNING: ended the database session .*'alpha' \(token $h1_token\)" "$work/rel-alpha.err"
check "(holder 1 learns it)" wait_line "$work/h1" '^lost'
kill -9 "$w1" 2>/dev/null

# ---- 5. history: the holds whose token was asked for (#22)
"$tool" history --raw --noheadings -o NAME,REPORTED-PID,HOW,TOKEN alpha >"$work/h-alpha" 2>&1
# (its waiter, killed as it got alpha, may have a hold after it)
check "history: holder 1's hold of alpha, which asked for its token, ended with its session (release --force)" \
    test "$(head -1 "$work/h-alpha")" = "alpha $h1 session\\x20ended $h1_token"
"$tool" history --raw --noheadings -o NAME,REPORTED-PID,HOW delta >"$work/h-delta" 2>&1
check "history: the hold of delta with a token, released; the one without, not there" \
    test "$(cat "$work/h-delta")" = "delta $let_go released"
"$tool" history gamma >/dev/null 2>"$work/h-gamma"
check "history NAME of a name never held with a token: exit 1" test $? -eq 1
check "(and it says so, in its scope)" has "no history of a claim named 'gamma' in scope 'default'" "$work/h-gamma"
"$tool" run h-held -- sleep 30 &
server_pids+=($!)
h_runner=$!
for _ in $(seq 100); do "$tool" history h-held >/dev/null 2>&1 && break; sleep 0.05; done
h_holder=$(pgrep -P "$h_runner")
server_pids+=($h_holder)
check "history: run's command holds h-held, on this host" \
    bash -c "'$tool' history --raw --noheadings -o NAME,REPORTED-HOST,REPORTED-PID,HOW h-held | grep -qx 'h-held $here $h_holder held'"
check "history -p PID: that process's holds only" \
    test "$("$tool" history -p "$h_holder" --raw --noheadings -o NAME)" = h-held
for _ in $(seq 18); do "$tool" run h-many -- sh -c 'echo "$SWERVE_CLAIM_TOKEN"'; done >"$work/h-many-tokens"
check "history: of 18 runs of a name, the last 16 tokens, oldest first" \
    test "$("$tool" history --raw --noheadings -o TOKEN h-many | tr '\n' ' ')" = "$(tail -16 "$work/h-many-tokens" | tr '\n' ' ')"
check "history: TAKEN and ENDED of a run's hold, in epoch seconds in JSON" \
    python3 -c "import json, subprocess, sys
h = json.loads(subprocess.run([sys.argv[1], 'history', '--json', '-O', 'h-many'], capture_output=True).stdout)['holds']
assert len(h) == 16 and all(r['how'] == 'session ended' and r['taken'] > 1700000000 and r['ended'] is None for r in h), h
assert all(r['session'] > 0 and r['role'] == 'app' for r in h), h" "$tool"
"$tool" history --server 1 x >/dev/null 2>&1
check "history --server is refused with the store (2)" test $? -eq 2
stop_pid "$h_runner" TERM 5

# ---- 6. the server's words, when the store fails
wrong=postgresql://app:wrong-$password@127.0.0.1:$PG_PORT/claims
for cmd in "list" "release --force alpha" "db init"; do
    # shellcheck disable=SC2086 # the command's words
    SWERVE_CLAIM_STORE=$wrong "$tool" $cmd >/dev/null 2>"$work/wrong.err"
    check "wrong password: $cmd fails" test $? -ne 0
    check "wrong password: $cmd says libpq's reason" has "^swerve-claim: .*password authentication failed" \
        "$work/wrong.err"
    check "(on one line)" test "$(wc -l <"$work/wrong.err")" = 1
done
SWERVE_CLAIM_STORE=postgresql://app@127.0.0.1:$PG_PORT/claims PGPASSWORD= PGPASSFILE=/nonexistent \
    "$tool" list >/dev/null 2>"$work/nopw.err"
check "no password: list says libpq's reason" has "^swerve-claim: .*(no password supplied|password authentication)" \
    "$work/nopw.err"
pg_sql "CREATE ROLE limited LOGIN PASSWORD '$password' CONNECTION LIMIT 0; GRANT swerve_claim_user TO limited"
SWERVE_CLAIM_STORE=postgresql://limited:$password@127.0.0.1:$PG_PORT/claims "$tool" list >/dev/null \
    2>"$work/limit.err"
check "a role's connection limit: list says the server's reason" \
    has "^swerve-claim: .*too many connections for role" "$work/limit.err"
SWERVE_CLAIM_STORE=postgresql://app:$password@127.0.0.1:1/claims "$tool" list >/dev/null 2>"$work/down.err"
check "no server: list says where it tried (libpq's words)" \
    has '^swerve-claim: .*connection to server at "127\.0\.0\.1", port 1 failed' "$work/down.err"
SWERVE_CLAIM_STORE=${SCL_PG_URL%/claims}/nosuchdb "$tool" release --force x >/dev/null 2>"$work/nodb.err"
check "no such database: release says the server's reason" has '^swerve-claim: .*database "nosuchdb" does not exist' \
    "$work/nodb.err"

finish
