#!/bin/bash
# SPDX-License-Identifier: MIT
# The PostgreSQL store (doc/cluster.md) against a private PostgreSQL
# cluster this test starts (cluster.sh) and stops: the API contract, the
# failures a fleet meets (a holder SIGKILLed, its session terminated, the
# database restarted, a standby), fork without exec, two "machines" of
# prefork servers sharing one database, and the tools.  The silent
# partition is partition.sh, in a network namespace of its own.
. "$(dirname "$0")/../real-servers/lib.sh"
. "$(dirname "$0")/cluster.sh"
trap 'finish_servers; pg_cluster_stop' EXIT

helper=$SCL_HELPERS/pg/pg_helper
tool=$SCL_HELPERS/../swerve-claim

pg_cluster_start || exit 1
check "swerve-claim db init makes the schema" pg_cluster_init "$tool"
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$tool" db init >/dev/null 2>"$work/init-again.err"
check "db init again changes nothing and succeeds" test $? -eq 0
check "(and has nothing to warn about in a dedicated database)" test ! -s "$work/init-again.err"
public_connects() { pg_sql "SELECT has_database_privilege('public', '$1', 'CONNECT')"; }
check "db init --dedicated: PUBLIC may not connect" test "$(public_connects claims)" = f
check "db init --dedicated: swerve_claim_user may" \
    test "$(pg_sql "SELECT has_database_privilege('swerve_claim_user', 'claims', 'CONNECT')")" = t
export SWERVE_CLAIM_STORE=$SCL_PG_URL

# ---- the contract, and what loading libpq may not do to a host
check "the API contract holds (tests/contract, as role app)" "$SCL_HELPERS/contract/contract"
check "an event loop's wait (tests/contract/wait_fd, as role app)" "$SCL_HELPERS/contract/wait_fd"
check "the shim does not link libpq" bash -c "! ldd '$SCL_PRELOAD' | grep -q libpq"
check "a process that never claims never loads libpq" \
    bash -c "[ \$(env LD_PRELOAD='$preload' sh -c 'grep -c libpq /proc/\$\$/maps') = 0 ]"
"${under_shim[@]}" "$helper" hold loaded >"$work/loaded" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/loaded" && break; sleep 0.05; done
check "a process that claims has loaded libpq" grep -q libpq "/proc/${server_pids[-1]}/maps"
kill -9 "${server_pids[-1]}"

SWERVE_CLAIM_STORE=postgresql://app@127.0.0.1:1/claims SWERVE_DEBUG=1 "${under_shim[@]}" "$helper" take x 0 \
    >"$work/refused" 2>"$work/refused.err"
check "no server: ECONNREFUSED" grep -qx "failed ECONNREFUSED" "$work/refused"
check "no server: one SWERVE_DEBUG line says why" \
    bash -c "[ \$(grep -c 'cannot connect' '$work/refused.err') = 1 ]"
SWERVE_DEBUG= "${under_shim[@]}" "$helper" take x 0 >/dev/null 2>"$work/quiet.err"
check "without SWERVE_DEBUG the library prints nothing" test ! -s "$work/quiet.err"
# libpq hidden from the host in a mount namespace of its own
libpq=$(ldconfig -p | awk '/libpq.so.5 .*x86-64/ { print $NF; exit }')
if [ -n "$libpq" ] && unshare -m true 2>/dev/null; then
    unshare -m bash -c "mount --bind /dev/null '$(readlink -f "$libpq")' && \
        env LD_PRELOAD='$preload' '$helper' take x 0" >"$work/nolibpq" 2>&1
    check "no libpq: ELIBACC, and the host runs on" grep -qx "failed ELIBACC" "$work/nolibpq"
fi

# ---- what the database says reaches the caller: an errno for each
# reason, and the tools print the server's own words
password=$(cat "$PG_DIR/pw")
wrong_url=${SCL_PG_URL/:$password@/:wrong@}
SWERVE_CLAIM_STORE=$wrong_url "${under_shim[@]}" "$helper" take x 0 >"$work/wrong-password" 2>&1
check "a wrong password: EKEYREJECTED" has "^failed EKEYREJECTED$" "$work/wrong-password"
SWERVE_CLAIM_STORE=${SCL_PG_URL/:$password@/@} PGPASSFILE=$work/no-such-file \
    env -u PGPASSWORD "${under_shim[@]}" "$helper" take x 0 >"$work/no-password" 2>&1
check "no password: EKEYREJECTED" has "^failed EKEYREJECTED$" "$work/no-password"
pg_sql "CREATE ROLE limited LOGIN PASSWORD '$password' CONNECTION LIMIT 1" &&
    pg_sql "GRANT swerve_claim_user TO limited"
"$pg_bin/psql" -qAtX "${SCL_PG_URL/\/\/app:/\/\/limited:}" -c "SELECT 'in'" -c "SELECT pg_sleep(30)" \
    >"$work/limited.psql" 2>&1 &
server_pids+=($!)
for _ in $(seq 100); do grep -q in "$work/limited.psql" && break; sleep 0.05; done
SWERVE_CLAIM_STORE=${SCL_PG_URL/\/\/app:/\/\/limited:} "${under_shim[@]}" "$helper" take x 0 >"$work/too-many" 2>&1
check "a role at its CONNECTION LIMIT: EUSERS" has "^failed EUSERS$" "$work/too-many"
kill -9 "${server_pids[-1]}"
wait "${server_pids[-1]}" 2>/dev/null
SWERVE_CLAIM_STORE=$wrong_url "$tool" list >/dev/null 2>"$work/list-wrong-password"
check "list with a wrong password: exit status non-zero" test $? -ne 0
check "list with a wrong password: prints the server's message" \
    has "password authentication failed" "$work/list-wrong-password"

check "a host that closes every descriptor: the session is dropped, never written to; claims go on" \
    timeout 20 "${under_shim[@]}" "$helper" close-fds closer
check "a grant that slips in as a timed wait ends does not leak (200 races)" \
    "${under_shim[@]}" "$helper" slip slip 200

# ---- a worker with the claims role, turned hostile, through plain SQL:
# it may take names, never remap them, rewind tokens or free others' claims
as_app() { "$pg_bin/psql" -qAtX -v ON_ERROR_STOP=1 "$SCL_PG_URL" -c "$1" 2>>"$work/hostile.err"; }
"${under_shim[@]}" "$helper" hold guarded >"$work/guarded" &
guarded_holder=$!
server_pids+=($guarded_holder)
for _ in $(seq 100); do grep -q held "$work/guarded" && break; sleep 0.05; done
guarded_id=$(pg_sql "SELECT id FROM swerve_claim.names WHERE scope = 'default' AND name = 'guarded'")
refused() { ! as_app "$1"; }
check "hostile role: cannot rename a name" refused "UPDATE swerve_claim.names SET name = 'x'"
check "hostile role: cannot choose an id" refused "INSERT INTO swerve_claim.names (id, scope, name) \
    OVERRIDING SYSTEM VALUE VALUES (999999, 'default', 'planted')"
check "hostile role: cannot delete names" refused "DELETE FROM swerve_claim.names"
check "hostile role: cannot rewind tokens" refused "SELECT setval('swerve_claim.tokens', 1)"
# NULL arguments: an error, and no lock taken (nor a token handed out).
"${under_shim[@]}" "$helper" take nulls 0 >/dev/null
nulls_id=$(pg_sql "SELECT id FROM swerve_claim.names WHERE scope = 'default' AND name = 'nulls'")
check "acquire_within(claim, wait_ms, backend) exists" \
    test "$(pg_sql "SELECT to_regprocedure('swerve_claim.acquire_within(integer,integer,integer)') IS NOT NULL")" = t
"$pg_bin/psql" -AtX "$SCL_PG_URL" -c "SELECT swerve_claim.acquire_within(NULL, NULL, NULL)" \
    -c "SELECT swerve_claim.acquire_within($nulls_id, NULL, pg_backend_pid())" \
    -c "SELECT 'locks ' || count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1398231638 \
        AND pid = pg_backend_pid()" >"$work/nulls" 2>"$work/nulls.err"
check "hostile role: acquire_within with NULL arguments raises an error, twice" \
    test "$(grep -c ERROR "$work/nulls.err")" -eq 2
check "(not for want of the function)" lacks "does not exist" "$work/nulls.err"
check "(and takes no lock, nor returns anything)" bash -c "[ \"\$(cat '$work/nulls')\" = 'locks 0' ]"
check "hostile role: unlocking another session's claim does nothing" \
    test "$(as_app "SELECT pg_advisory_unlock(1398231638, $guarded_id)" 2>/dev/null)" = f
"${under_shim[@]}" "$helper" take guarded 0 >"$work/guarded.taker"
check "hostile role: the claim is still held by its holder" grep -qx "failed EAGAIN" "$work/guarded.taker"
check "(and the holder never saw it go)" bash -c "! grep -q lost '$work/guarded'"
# What list shows of a hold (holds) is written only by the holding session,
# and no member can lock a table of the schema against the tools, root's.
denied() { ! as_app "$1" && tail -1 "$work/hostile.err" | grep -q "permission denied"; }
# A psql killed leaves its backend running what it was sent (pg_sleep).
end_member_psql() { # PID
    kill -9 "$1"
    pg_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'app' \
        AND application_name = 'psql'" >/dev/null
}
for write in "INSERT INTO swerve_claim.holds VALUES ($guarded_id, 1, 1, now())" \
    "UPDATE swerve_claim.holds SET token = 1" "DELETE FROM swerve_claim.holds" "TRUNCATE swerve_claim.holds"; do
    check "hostile role: cannot write holds (${write%% *})" denied "$write"
done
# nor the history of holds (#22), which only token_for and release_recorded write
for write in "INSERT INTO swerve_claim.history VALUES ($guarded_id, 0, 0, 1, 1, 'x', 'x', now(), NULL)" \
    "UPDATE swerve_claim.history SET ended = now()" "DELETE FROM swerve_claim.history" \
    "TRUNCATE swerve_claim.history"; do
    check "hostile role: cannot write history (${write%% *})" denied "$write"
done
for table in holds names last_token history; do
    check "hostile role: cannot lock $table against the tools" denied \
        "BEGIN; LOCK TABLE swerve_claim.$table IN SHARE ROW EXCLUSIVE MODE; COMMIT"
done
guarded_backend=$(pg_sql "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 1398231638 \
    AND objid = $guarded_id AND granted")
check "hostile role: cannot record a token for a claim it does not hold" \
    refused "SELECT swerve_claim.token_for($guarded_id, pg_backend_pid(), 0)"
check "(the holder's record stays its own)" \
    test "$(pg_sql "SELECT backend FROM swerve_claim.holds WHERE id = $guarded_id")" = "$guarded_backend"
check "hostile role: cannot write last_token (the standby's word on tokens)" \
    denied "SELECT swerve_claim.fence_token(9223372036854775807)"
# A member that took a free name and recorded a token for it, in a
# transaction it keeps open, holds nothing up for the name's next holder.
"$pg_bin/psql" -qAtX "$SCL_PG_URL" -c "BEGIN" -c "SELECT pg_advisory_lock(1398231638, $nulls_id)" \
    -c "SELECT swerve_claim.token_for($nulls_id, pg_backend_pid(), 0)" \
    -c "SELECT pg_advisory_unlock(1398231638, $nulls_id)" -c "SELECT 'recorded'" -c "SELECT pg_sleep(30)" \
    >"$work/member.token" 2>&1 &
server_pids+=($!)
for _ in $(seq 100); do grep -q recorded "$work/member.token" && break; sleep 0.05; done
"${under_shim[@]}" "$helper" timed nulls 2 token >"$work/after.member" 2>&1
check "a member's open token record for a free name: the next holder's token() ($(tr '\n' ' ' <"$work/after.member"))" \
    awk '/^token / { found = $3 < 2000 } END { exit !found }' "$work/after.member"
end_member_psql "${server_pids[-1]}"
# A member may still keep a table of the schema open in a transaction (its
# SELECT's share lock): db init, which must lock them to replace what is
# there, gives up at its lock timeout, with the reason, instead of waiting.
"$pg_bin/psql" -qAtX "$SCL_PG_URL" -c "BEGIN" -c "SELECT count(*) FROM swerve_claim.holds" \
    -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
server_pids+=($!)
for _ in $(seq 100); do
    [ "$(pg_sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
        WHERE c.relname = 'holds' AND l.pid <> pg_backend_pid()")" -gt 0 ] && break
    sleep 0.05
done
started=$(now_ns)
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL timeout 30 "$tool" db init >/dev/null 2>"$work/init.blocked"
init_status=$?
check "db init behind a member's open table: fails (status $init_status)" test "$init_status" -eq 1
check "(within 7 s)" test $(($(now_ns) - started)) -lt 7000000000
check "(saying what it waited for)" has "lock timeout.*another session" "$work/init.blocked"
end_member_psql "${server_pids[-1]}"
kill -9 "$guarded_holder"

# ---- a role outside swerve_claim_user (doc/security.md): advisory locks
# need no privilege, so a session that can connect can take every id of
# the key space, those of names registered later too, and keep them; and
# it can name itself as the library names its sessions.
pg_sql "CREATE ROLE intruder LOGIN PASSWORD '$password'"
# Takes ids 1 to $2 in database URL $1 and keeps its session; $squatter is
# its pid, $work/squat.$3 says how many it took (nothing when it could not
# connect).
squat() { # URL COUNT TAG
    "$pg_bin/psql" -qAtX "$1" -c "SET application_name = 'swerve-claim pid=1 host=web1.prod'" \
        -c "SELECT count(pg_advisory_lock(1398231638, i)) FROM generate_series(1, $2) i" -c "SELECT pg_sleep(60)" \
        >"$work/squat.$3" 2>&1 &
    squatter=$!
    server_pids+=($squatter)
    for _ in $(seq 200); do
        grep -qx "$2" "$work/squat.$3" && return 0
        kill -0 "$squatter" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# Every id so far, and 100 names to come.
ids=$(( $(pg_sql "SELECT max(id) FROM swerve_claim.names") + 100 ))
squat "${SCL_PG_URL/\/\/app:/\/\/intruder:}" $ids dedicated
check "attack: a role outside swerve_claim_user cannot connect to a dedicated database" \
    bash -c "! grep -qx $ids '$work/squat.dedicated'"
"${under_shim[@]}" "$helper" take guarded 0 >"$work/squatted"
check "attack: the servers still take their names" grep -q "^took" "$work/squatted"
"${under_shim[@]}" "$helper" take registered-since 0 >"$work/squatted.new"
check "attack: and names registered since" grep -q "^took" "$work/squatted.new"
kill -9 "$squatter" 2>/dev/null

# A database shared with other roles: db init says who can get in, and
# leaves the database's grants alone.
pg_sql "CREATE DATABASE shared"
shared_admin=${SCL_PG_ADMIN_URL%/claims}/shared
shared_app=${SCL_PG_URL%/claims}/shared
SWERVE_CLAIM_STORE=$shared_admin "$tool" db init >/dev/null 2>"$work/shared.init"
check "db init where PUBLIC may connect: warns that any role can take every claim" \
    has "WARNING: .*PUBLIC.*every claim" "$work/shared.init"
check "(and leaves PUBLIC's CONNECT alone)" test "$(public_connects shared)" = t
SWERVE_CLAIM_STORE=$shared_app "${under_shim[@]}" "$helper" take forged 0 >/dev/null
squat "${shared_app/\/\/app:/\/\/intruder:}" 100 shared
squatter_session=$(pg_sql "SELECT pid FROM pg_stat_activity WHERE usename = 'intruder' AND datname = 'shared'")
SWERVE_CLAIM_STORE=$shared_app "${under_shim[@]}" "$helper" take forged 0 >"$work/forged.taker"
check "shared database: the intruder holds the name (what only CONNECT can keep out)" \
    grep -qx "failed EAGAIN" "$work/forged.taker"
SWERVE_CLAIM_STORE=$shared_admin "$tool" list --json -o TYPE,NAME,ROLE,ADDRESS,REPORTED-HOST,REPORTED-PID,SESSION,SELF-REPORTED \
    >"$work/foreign.json" 2>&1
check "list shows the intruder as a foreign holder, by what the server knows (role, address, session)" \
    python3 -c "import json,sys; rows=[r for r in json.load(open(sys.argv[1]))['claims'] if r['name']=='forged']
assert len(rows)==1, rows; r=rows[0]
assert (r['type'],r['role'],r['address'],r['reported-host'],r['reported-pid'],r['session'])==('foreign','intruder','127.0.0.1',None,None,int(sys.argv[2])),r
assert r['self-reported']=='swerve-claim pid=1 host=web1.prod', r" "$work/foreign.json" "${squatter_session:-0}"
SWERVE_CLAIM_STORE=$shared_admin "$tool" list --raw --noheadings >"$work/foreign.list" 2>&1
check "list's default columns show the intruder's role and address" \
    has '^foreign forged intruder 127\.0\.0\.1 ' "$work/foreign.list"
check "list's default columns never show the forged pid or host" lacks 'web1\.prod| 1 ' "$work/foreign.list"
SWERVE_CLAIM_STORE=$shared_admin "$tool" release --force forged >/dev/null 2>"$work/foreign.release"
check "release --force of a foreign holder: names its role, address and session" \
    has "session $squatter_session of role intruder from 127\.0\.0\.1" "$work/foreign.release"
check "release --force: says it is foreign, and quotes what it says of itself as such" \
    has "outside swerve-claim.*calls itself 'swerve-claim pid=1 host=web1\.prod'" "$work/foreign.release"
check "release --force: never presents the forged pid and host as the holder's" \
    lacks "process 1 on web1\.prod" "$work/foreign.release"
check "(the intruder's session is ended)" bash -c "for _ in \$(seq 100); do \
    kill -0 $squatter 2>/dev/null || exit 0; sleep 0.05; done; exit 1"
# A member of swerve_claim_user may say what it likes of itself too: its
# role is the server's word, its pid and host only its own.
"$pg_bin/psql" -qAtX "$SCL_PG_URL" -c "SET application_name = 'swerve-claim pid=1 host=web1.prod'" \
    -c "SELECT pg_advisory_lock(1398231638, $guarded_id)" -c "SELECT pg_sleep(60)" >"$work/member.forged" 2>&1 &
server_pids+=($!)
for _ in $(seq 100); do [ -s "$work/member.forged" ] && break; sleep 0.05; done
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$tool" release --force guarded >/dev/null 2>"$work/member.release"
check "release --force of a member: its pid and host as what it says" \
    has "of role app from 127\.0\.0\.1, which held 'guarded'.* says it is process 1 on web1\.prod" "$work/member.release"
check "(not as fact)" lacks "of process 1 on web1\.prod" "$work/member.release"
kill -9 "${server_pids[-1]}" 2>/dev/null

# ---- the cap on names one process holds: ENOLCK past it, and the
# database usable for everyone meanwhile
many() { # OUTPUT ENV... -- holds, as the helper's "many", until killed
    local out=$1
    shift
    env "$@" LD_PRELOAD="$preload" "$helper" many cap "$count" >"$out" &
    server_pids+=($!)
    for _ in $(seq 600); do grep -q ready "$out" && return 0; sleep 0.05; done
    return 1
}
count=1001 many "$work/cap.default" -u SWERVE_CLAIM_MAX_NAMES
echo "cap, by default: $(tr '\n' ' ' <"$work/cap.default")"
check "cap: 1000 names by default" has "^held 1000$" "$work/cap.default"
check "cap: the 1001st acquire fails with ENOLCK" has "^failed ENOLCK$" "$work/cap.default"
check "cap: a new superuser connection works while a holder holds all it can" test "$(pg_sql "SELECT 1")" = 1
kill -9 "${server_pids[-1]}"
wait "${server_pids[-1]}" 2>/dev/null
count=51 many "$work/cap.50" SWERVE_CLAIM_MAX_NAMES=50
check "cap: SWERVE_CLAIM_MAX_NAMES=50: 50 names" has "^held 50$" "$work/cap.50"
check "cap: SWERVE_CLAIM_MAX_NAMES=50: the 51st fails with ENOLCK" has "^failed ENOLCK$" "$work/cap.50"
kill -9 "${server_pids[-1]}"
wait "${server_pids[-1]}" 2>/dev/null

# ---- a dead waiter: a process holds X and waits for ever for Y, which
# another holds; SIGKILLed, its X is free for the next within 100 ms
"${under_shim[@]}" "$helper" hold dead-y >"$work/dead-y" &
y_holder=$!
server_pids+=($y_holder)
for _ in $(seq 100); do grep -q held "$work/dead-y" && break; sleep 0.05; done
figures=() slow=0
for round in 1 2 3 4 5; do
    "${under_shim[@]}" "$helper" hold-wait dead-x dead-y >"$work/dead.$round" &
    waiter=$!
    server_pids+=($waiter)
    for _ in $(seq 100); do grep -q waiting "$work/dead.$round" && break; sleep 0.05; done
    "${under_shim[@]}" "$helper" take dead-x 5 >"$work/dead.taker.$round" &
    taker=$!
    # anywhere in the server's wait, not at one point of it
    sleep "0.$((300 + round * 53 % 250))"
    killed_at=$(now_ns)
    kill -9 "$waiter"
    wait "$waiter" "$taker" 2>/dev/null
    took_at=$(awk '/^took/ { print $3 }' "$work/dead.taker.$round")
    ms=$(( (${took_at:-$((killed_at + 9999000000))} - killed_at) / 1000000 ))
    figures+=("$ms")
    [ "$ms" -lt 100 ] || slow=$((slow + 1))
done
kill -9 "$y_holder"
wait "$y_holder" 2>/dev/null
echo "dead waiter: its claim taken ${figures[*]} ms after the SIGKILL"
check "dead waiter: its claim free within 100 ms, 5 times in 5 (${figures[*]} ms)" test "$slow" -eq 0

# ---- threads: one waits in acquire(3.0) for a name another process
# holds; the other's calls on other names do not queue behind it
"${under_shim[@]}" "$helper" hold thread-busy >"$work/thread-busy" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/thread-busy" && break; sleep 0.05; done
timeout 30 "${under_shim[@]}" "$helper" threads thread-busy thread 20 >"$work/threads" 2>&1
echo "threads: $(tr '\n' ' ' <"$work/threads")"
check "threads: 20 acquire+release pairs while another thread waits" has "^pairs 20 " "$work/threads"
check "threads: every call under 150 ms (the slowest: $(awk '/^pairs/ { print $4 }' "$work/threads") ms)" \
    awk '/^pairs/ { found = 1; slow = $4 >= 150 } END { exit !found || slow }' "$work/threads"
check "threads: the waiting thread's acquire(3.0) ends with ETIMEDOUT" has "^waiter ETIMEDOUT " "$work/threads"
kill -9 "${server_pids[-1]}"
wait "${server_pids[-1]}" 2>/dev/null

# ---- tokens are taken when asked for, and only then
last_token() { pg_sql "SELECT last_value FROM swerve_claim.tokens"; }
before=$(last_token)
check "100 acquire+release pairs" "${under_shim[@]}" "$helper" pairs lazy 100
after=$(last_token)
check "lazy tokens: 100 pairs without token() leave the sequence alone ($before, then $after)" \
    test "$before" = "$after"
"${under_shim[@]}" "$helper" token-twice lazy >"$work/lazy"
read -r _ a b c <"$work/lazy"
check "lazy tokens: token() twice in one hold, the same ($a, $b)" test "${a:-0}" -gt 0 -a "${a:-0}" = "${b:-}"
check "lazy tokens: the next hold's is greater ($c)" test "${c:-0}" -gt "${a:-0}"

# ---- a holder's end
"${under_shim[@]}" "$helper" hold killed >"$work/killed" &
holder=$!
server_pids+=($holder)
for _ in $(seq 100); do grep -q held "$work/killed" && break; sleep 0.05; done
"${under_shim[@]}" "$helper" take killed 10 >"$work/killed.taker" &
taker=$!
sleep 0.3 # the taker waits in the server's queue
killed_at=$(now_ns)
kill -9 "$holder"
wait "$taker"
took_at=$(awk '/^took/ { print $3 }' "$work/killed.taker")
echo "SIGKILLed holder: a waiter took the claim $(( (took_at - killed_at) / 1000000 )) ms later"
check "SIGKILLed holder: free within 100 ms" test $(( took_at - killed_at )) -lt 100000000

"${under_shim[@]}" "$helper" hold terminated >"$work/terminated" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/terminated" && break; sleep 0.05; done
# When the server sent the signal, by its clock (this machine's): psql's own
# start, slow on a loaded machine, is no part of what is measured.
# (OFFSET 0 keeps the name's filter apart: the signal goes to its backend only.)
terminated_at=$(pg_sql "SELECT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint FROM (SELECT
    pg_terminate_backend(backend) AS sent FROM swerve_claim.claims WHERE name = 'terminated' OFFSET 0) AS t WHERE sent")
for _ in $(seq 100); do grep -q lost "$work/terminated" && break; sleep 0.02; done
lost_at=$(awk '/^lost/ { print $2 }' "$work/terminated")
echo "pg_terminate_backend: held() turned 0 after $(( (${lost_at:-0} - terminated_at) / 1000000 )) ms"
check "pg_terminate_backend: held() is 0 within 100 ms" \
    test -n "$lost_at" -a $(( ${lost_at:-0} - terminated_at )) -lt 100000000
check "pg_terminate_backend: someone else takes it" "${under_shim[@]}" "$helper" take terminated 0

# A handle whose session ended takes the name anew, in a new session:
# acquire() must not answer "held already" from what the process remembers.
"${under_shim[@]}" "$helper" retake retaken >"$work/retaken" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/retaken" && break; sleep 0.05; done
pg_sql "SELECT pg_terminate_backend(backend) FROM swerve_claim.claims WHERE name = 'retaken'" >/dev/null
for _ in $(seq 100); do grep -q retook "$work/retaken" && break; sleep 0.05; done
first=$(awk '/^held/ { print $2 }' "$work/retaken")
read -r _ again again_held < <(grep '^retook' "$work/retaken")
check "after its session ended, acquire() takes the name again, with a new token ($first, then ${again:-none})" \
    test "${again:-0}" -gt "${first:-0}" -a "${again_held:-0}" = 1

# ---- restart: holders learn it; new claims work once it is back; tokens go on growing
"${under_shim[@]}" "$helper" hold restarted >"$work/restarted" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/restarted" && break; sleep 0.05; done
before=$(awk '/^held/ { print $2 }' "$work/restarted")
check "the database restarts" pg_cluster_restart
for _ in $(seq 100); do grep -q lost "$work/restarted" && break; sleep 0.05; done
check "restart: the holder sees held() 0" grep -q lost "$work/restarted"
"${under_shim[@]}" "$helper" take restarted 5 >"$work/after-restart"
after=$(awk '/^took/ { print $2 }' "$work/after-restart")
check "restart: a new acquisition works once it is back" test -n "$after"
check "restart: the token still grows ($before, then $after)" test "${after:-0}" -gt "${before:-0}"

# ---- a standby grants advisory locks of its own: refused
standby=$PG_DIR/standby
standby_port=$(free_port)
if pg_as_postgres env PGPASSWORD="$(cat "$PG_DIR/pw")" "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$PG_PORT" \
        -U postgres -D "$standby" -R -X stream -c fast >/dev/null 2>&1 &&
    pg_as_postgres "$pg_bin/pg_ctl" -D "$standby" -l "$PG_DIR/standby.log" -w -t 30 \
        -o "-p $standby_port -k $PG_DIR -c listen_addresses=127.0.0.1" start >/dev/null; then
    SWERVE_CLAIM_STORE=${SCL_PG_URL/:$PG_PORT/:$standby_port}?target_session_attrs=any \
        "${under_shim[@]}" "$helper" take standby 0 >"$work/standby"
    check "a standby is refused: EROFS" grep -qx "failed EROFS" "$work/standby"
    pg_as_postgres "$pg_bin/pg_ctl" -D "$standby" -m immediate stop >/dev/null
else
    fail "cannot make a standby to test against"
fi

# ---- fork without exec in a holder: the child's exit ends nothing; nor
# does the child keep the parent's session alive after the parent dies
"${under_shim[@]}" "$helper" fork-holder forked >"$work/forked" &
parent=$!
server_pids+=($parent)
for _ in $(seq 100); do grep -q sleeper "$work/forked" && break; sleep 0.05; done
check "fork: the child's exit neither frees nor ends the parent's claim" grep -qx kept "$work/forked"
sleeper=$(awk '/^sleeper/ { print $2 }' "$work/forked")
server_pids+=($sleeper)
kill -9 "$parent"
check "fork: the parent's claim goes with it while its child lives on" "${under_shim[@]}" "$helper" take forked 2
check "(the child was alive)" kill -0 "$sleeper"
kill -9 "$sleeper"

# ---- two machines: two prefork servers, two SWERVE_TMPDIRs, one database
for m in 1 2; do
    mkdir -p "$work/machine$m"
    SWERVE_TMPDIR=$work/machine$m "${under_shim[@]}" "$SCL_HELPERS/prefork/prefork_server" --port 0 --workers 4 \
        --report-ms 1500 --port-file "$work/port$m" >"$work/server$m.log" 2>&1 &
    server_pids+=($!)
done
for _ in $(seq 100); do [ -s "$work/port1" ] && [ -s "$work/port2" ] && break; sleep 0.05; done
port1=$(cat "$work/port1") port2=$(cat "$work/port2")
wait_port "$port1" && wait_port "$port2"
fleet_round() {
    rm -f "$work"/answer.*
    for i in $(seq 6); do
        get "$port1" /report >"$work/answer.1.$i" &
        get "$port2" /report >"$work/answer.2.$i" &
    done
    wait $(jobs -p | grep -vxF -f <(printf '%s\n' "${server_pids[@]}")) 2>/dev/null
    [ "$(cat "$work"/answer.* | grep -c "runs the report")" -eq 1 ] &&
        [ "$(cat "$work"/answer.* | grep -c "someone else is on it")" -eq 11 ] ||
        { echo "answers: $(cat "$work"/answer.*)" >&2; return 1; }
}
for round in 1 2 3; do
    check "two machines, round $round: of 12 requests exactly one runs the report" fleet_round
    sleep 1.6
done
check "machine 1 stops" stop_pid "${server_pids[-2]}" TERM
check "machine 2 stops" stop_pid "${server_pids[-1]}" TERM
check "no local claim directory on either machine" \
    bash -c "[ -z \"\$(ls -A '$work/machine1' '$work/machine2' | grep swerve-claim)\" ]"

# ---- the tools: list shows the holder's token, and its waiter
SWERVE_TMPDIR=$work/machine1 "$tool" run -w 5 nightly -- sh -c 'echo "$SWERVE_CLAIM_TOKEN" >"$0"; sleep 1.5' \
    "$work/token1" &
runner=$!
sleep 0.5
SWERVE_TMPDIR=$work/machine2 "$tool" run nightly -- true
check "run: the fleet's claim is taken on the other machine: exit 75" test $? -eq 75
SWERVE_TMPDIR=$work/machine2 "$tool" run -w 5 nightly -- sh -c 'echo "$SWERVE_CLAIM_TOKEN" >"$0"' "$work/token2" &
waiter=$!
sleep 0.3
"$tool" list --raw --noheadings -o TYPE,NAME,REPORTED-PID,TOKEN >"$work/list"
check "list shows the holder with its pid and token" \
    grep -qx "holder nightly $(pgrep -P $runner) $(cat "$work/token1")" "$work/list"
check "list shows the waiter" grep -q "^waiter nightly [0-9]" "$work/list"
"$tool" list --json >"$work/list.json"
check "list --json parses, with a token" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert d['claims'][0]['token'] > 0" "$work/list.json"
wait "$runner" "$waiter"
check "run: the waiter ran next, with a greater token" test "$(cat "$work/token2")" -gt "$(cat "$work/token1")"

"${under_shim[@]}" "$helper" hold forced >"$work/forced" &
server_pids+=($!)
for _ in $(seq 100); do grep -q held "$work/forced" && break; sleep 0.05; done
SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$tool" release --force forced >"$work/release.out" 2>"$work/release.err"
check "release --force ends the holder's session" grep -q "released 'forced'" "$work/release.out"
check "release --force says so loudly" grep -q "WARNING: ended the database session" "$work/release.err"
for _ in $(seq 100); do grep -q lost "$work/forced" && break; sleep 0.02; done
check "release --force: the holder's held() turns 0" grep -q lost "$work/forced"
"$tool" release --force nobody-holds-this 2>/dev/null
check "release --force of a free name: exit 1" test $? -eq 1
check "gc has nothing to do" "$tool" gc

finish
