#!/bin/bash
# SPDX-License-Identifier: MIT
# A pooler between the library and the database (doc/cluster.md): PgBouncer
# (pgbouncer.sh) in front of a private cluster (cluster.sh).  In
# transaction mode a client's statements run in whichever server session
# is free, which breaks session locks: every claim call must fail with
# EPROTO, in every client (the first one too), nobody may ever think it
# holds a name another holds, and a SIGKILLed client may leave no lock on
# the server.  In session mode claims work as without it, a killed holder's
# claim is freed, and a client that waits for a pool slot gets the
# acquire's timeout, not a hang.  `swerve-claim db check` says which of
# these it sees, as root and as an unprivileged user, with the status a
# script can trust: 0 claims work from here, 1 they do not (and what to
# set).
. "$(dirname "$0")/../real-servers/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/pgbouncer.sh"
trap 'pgb_stop; finish_servers; pg_cluster_stop' EXIT

need_packages pgbouncer
helper=$SCL_HELPERS/pg/pg_helper
tool=$SCL_HELPERS/../swerve-claim
ours() { pg_sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1398231638"; }

pg_cluster_start || exit 1

as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/nonexistent "$@"; }
# db check, as root and as nobody, with the environment given, straight to
# PostgreSQL (direct), to URL, or each time through a PgBouncer of its own
# in MODE (transaction mode hands one client's server session to the next,
# marked: a run there would be another's): it must exit with STATUS and
# print a line matching RE (grep -E) on its standard output.  The outputs
# are kept in $work/check.LABEL[.nobody][.err].
db_check() { # LABEL STATUS RE direct|transaction|session|URL [VAR=VALUE...]
    local label=$1 want=$2 re=$3 to=$4 who out store rc run
    shift 4
    for who in root nobody; do
        out=$work/check.$label
        [ $who = nobody ] && out=$out.nobody
        case $to in
        direct) store=$SCL_PG_URL ;;
        transaction | session) pgb_start "$to" 2 || return 1; store=$PGB_URL ;;
        *) store=$to ;;
        esac
        run=(timeout 60 env -u SWERVE_CLAIM_POOLER SWERVE_CLAIM_STORE="$store" "$@" "$tool" db check)
        [ $who = nobody ] && run=(as_nobody "${run[@]}")
        "${run[@]}" >"$out" 2>"$out.err"
        rc=$?
        [ $rc -eq "$want" ] || { echo "db check as $who: status $rc, not $want" >&2; cat "$out" "$out.err" >&2; return 1; }
        has "$re" "$out" || return 1
    done
}

# ---- db check, straight to PostgreSQL: claims work once db init ran, to
# a role of swerve_claim_user; no pooler
check "db check, direct, before db init: status 1, says to run db init" \
    db_check noschema 1 "^schema: missing: run 'swerve-claim db init'" direct
check "db init" pg_cluster_init "$tool"
pg_sql "CREATE ROLE outsider LOGIN PASSWORD 'outsider'; GRANT CONNECT ON DATABASE claims TO outsider"
check "db check, direct, a role outside swerve_claim_user: status 1, names the GRANT" \
    db_check outsider 1 '^role: outsider may not take claims: GRANT swerve_claim_user TO' \
    "postgresql://outsider:outsider@127.0.0.1:$PG_PORT/claims"
check "db check, direct: status 0, no pooler in between" \
    db_check direct 0 '^pooler: none' direct
check "db check, direct: names the database and the scope, and the schema ready" \
    bash -c "grep -q '^database: claims' '$work/check.direct' && grep -q '^scope: default' '$work/check.direct' &&
        grep -q '^schema: .*ready' '$work/check.direct'"
check "db check, direct: a wrong password is status 1, the server's words said" \
    db_check badpw 1 '^server: .*not reached' "postgresql://app:wrong@127.0.0.1:$PG_PORT/claims"
check "(and names the password)" grep -qi 'password' "$work/check.badpw.err"

# The holds that CLIENTS' outputs report ("held BEGIN END") never overlap
# between two clients; prints the overlaps it finds.
no_two_holders() { # OUTPUT...
    python3 - "$@" <<'PY'
import sys
holds = []
for f in sys.argv[1:]:
    for line in open(f):
        w = line.split()
        if w and w[0] == 'held' and len(w) == 3:
            holds.append((int(w[1]), int(w[2]), f))
holds.sort()
bad = [(a, b) for a, b in zip(holds, holds[1:]) if b[0] < a[1] and a[2] != b[2]]
for a, b in bad[:5]:
    print("two holders: %s held until %d, %s from %d" % (a[2], a[1], b[2], b[0]), file=sys.stderr)
print("%d holds by %d clients" % (len(holds), len({h[2] for h in holds})))
sys.exit(1 if bad else 0)
PY
}
# Every try in OUTPUT failed with ERRNO (and there was at least one);
# ERRNO is a basic regular expression.
all_failed_with() { # ERRNO OUTPUT
    local tries others
    tries=$(grep -c '^failed\|^held' "$2")
    others=$(grep '^failed\|^held' "$2" | grep -vcx "failed $1")
    [ "$tries" -gt 0 ] && [ "$others" -eq 0 ] ||
        { echo "$(basename "$2"): $tries tries, $others not 'failed $1': $(grep '^failed\|^held' "$2" | sort | uniq -c |
            sort -rn | head -3 | tr -s ' \n' ' ')" >&2; return 1; }
}

# ---- transaction mode: two server sessions shared by five clients
# db check first: refused, saying why, even declared a session pool.
check "db check, transaction mode: status 1, says transaction" db_check tx 1 '^pooler: .*transaction' transaction
check "(and says why on standard error)" grep -q 'transaction' "$work/check.tx.err"
check "db check, transaction mode declared a session pool: still status 1, says transaction" \
    db_check txd 1 '^pooler: .*transaction' transaction SWERVE_CLAIM_POOLER=session
check "pgbouncer (transaction mode) starts and proxies" pgb_start transaction 2
export SWERVE_CLAIM_STORE=$PGB_URL
# The first client of all, alone with a fresh pool; it is then SIGKILLed.
SWERVE_DEBUG=1 "${under_shim[@]}" "$helper" hold tx-first >"$work/tx.first" 2>"$work/tx.first.err" &
first=$!
server_pids+=($first)
for _ in $(seq 100); do grep -q 'held\|failed' "$work/tx.first" 2>/dev/null && break; sleep 0.05; done
check "transaction mode: the first client fails too, with EPROTO" grep -qx "failed EPROTO" "$work/tx.first"
check "transaction mode: SWERVE_DEBUG says a transaction-mode pooler is in between" \
    grep -qi "pooler" "$work/tx.first.err"
contenders=()
tx_wait=([1]=0 [2]=0 [3]=0.03 [4]=0.03) # two try once, two wait 30 ms in the server's queue
for i in 1 2 3 4; do
    "${under_shim[@]}" "$helper" contend tx-name 3 20 "${tx_wait[$i]}" >"$work/tx.$i" 2>&1 &
    contenders+=($!)
    server_pids+=($!)
done
# What the real server shows meanwhile, for the log: our locks, sampled.
most=0
for _ in $(seq 40); do
    n=$(ours)
    [ "${n:-0}" -gt $most ] && most=$n
    sleep 0.05
done
kill -9 "$first" "${contenders[0]}" 2>/dev/null # one of them mid-run
wait "$first" "${contenders[@]}" 2>/dev/null
echo "transaction mode: at most $most locks of ours seen on the server during the run"
for i in 1 2; do
    check "transaction mode: client $i's every try fails with EPROTO" all_failed_with EPROTO "$work/tx.$i"
done
# A wait of 30 ms may end while the session is still being set up (the
# pool has two server sessions for five clients): ETIMEDOUT, never a hold.
for i in 3 4; do
    check "transaction mode: client $i's every try fails with EPROTO (or times out first)" \
        all_failed_with 'EPROTO\|failed ETIMEDOUT' "$work/tx.$i"
    check "(client $i was told EPROTO)" grep -qx "failed EPROTO" "$work/tx.$i"
done
check "transaction mode: never two holders at once, by the clients' reports" \
    no_two_holders "$work"/tx.[1-4] "$work/tx.first"
sleep 0.3
left=$(ours)
check "transaction mode: after the SIGKILLs and the clients' ends, no lock of ours on the server (${left:-?} left)" \
    test "${left:-1}" = 0
[ "${left:-0}" = 0 ] || pg_sql "SELECT pid, objid, granted FROM pg_locks WHERE classid = 1398231638" | sed 's/^/left: /' >&2

# An operator who declares the transaction pooler a session pooler: the
# library then cannot tell, but eight clients started at once on two
# server sessions still never hold a name together (each statement checks
# the client's own mark on its server session, not only the backend).
pgb_stop
check "pgbouncer (transaction mode, again) starts and proxies" pgb_start transaction 2
export SWERVE_CLAIM_STORE=$PGB_URL
contenders=()
for i in 1 2 3 4 5 6 7 8; do
    SWERVE_CLAIM_POOLER=session "${under_shim[@]}" "$helper" contend tx-declared 2 5 >"$work/txd.$i" 2>&1 &
    contenders+=($!)
    server_pids+=($!)
done
wait "${contenders[@]}" 2>/dev/null
check "transaction mode declared a session pool: eight clients at once, never two holders" \
    no_two_holders "$work"/txd.[1-8]

# ---- session mode
check "db check, session mode undeclared: status 1, names SWERVE_CLAIM_POOLER=session" \
    db_check sess 1 '^pooler: .*SWERVE_CLAIM_POOLER=session' session
check "(and standard error names it too)" grep -q 'SWERVE_CLAIM_POOLER=session' "$work/check.sess.err"
check "db check, session mode declared: status 0, the pooler accepted" \
    db_check sessd 0 '^pooler: .*accepted' session SWERVE_CLAIM_POOLER=session
check "db check, session mode, SWERVE_CLAIM_POOLER=Session (mistyped): status 1, says it is ignored" \
    db_check sesst 1 'SWERVE_CLAIM_POOLER.*ignored' session SWERVE_CLAIM_POOLER=Session
check "pgbouncer (session mode) starts and proxies" pgb_start session 10
export SWERVE_CLAIM_STORE=$PGB_URL
SWERVE_DEBUG=1 "${under_shim[@]}" "$helper" take sess-undeclared 0 >"$work/sess.undeclared" 2>"$work/sess.undeclared.err"
check "session mode, not declared: refused with EPROTO (a pooler's mode cannot be told)" \
    grep -qx "failed EPROTO" "$work/sess.undeclared"
check "(and SWERVE_DEBUG names the setting that declares it)" grep -q "SWERVE_CLAIM_POOLER=session" \
    "$work/sess.undeclared.err"
export SWERVE_CLAIM_POOLER=session
contenders=()
for i in 1 2 3; do
    "${under_shim[@]}" "$helper" contend sess-name 2 20 >"$work/sess.$i" 2>&1 &
    contenders+=($!)
    server_pids+=($!)
done
wait "${contenders[@]}"
check "session mode: never two holders at once, by the clients' reports" no_two_holders "$work"/sess.[1-3]
check "session mode: the name was taken" grep -q '^held' "$work/sess.1" "$work/sess.2" "$work/sess.3"
check "session mode: every other try says EWOULDBLOCK" \
    bash -c "! grep -h '^failed' '$work'/sess.[1-3] | grep -vqx 'failed EAGAIN'"

"${under_shim[@]}" "$helper" hold sess-killed >"$work/sess.killed" &
holder=$!
server_pids+=($holder)
for _ in $(seq 100); do grep -q 'held\|failed' "$work/sess.killed" 2>/dev/null && break; sleep 0.05; done
check "session mode: a holder holds" grep -q '^held' "$work/sess.killed"
"${under_shim[@]}" "$helper" take sess-killed 5 >"$work/sess.killed.taker" &
taker=$!
sleep 0.3
killed_at=$(now_ns)
kill -9 "$holder"
wait "$holder" "$taker" 2>/dev/null
took_at=$(awk '/^took/ { print $3 }' "$work/sess.killed.taker")
echo "session mode: a SIGKILLed holder's claim was taken $(( (${took_at:-0} - killed_at) / 1000000 )) ms later"
check "session mode: a SIGKILLed holder's claim is free within 1 s" \
    test -n "$took_at" -a $(( ${took_at:-0} - killed_at )) -lt 1000000000

# A full pool: one client holds the only server session; another's
# acquire(2.0) must end with the timeout.
check "pgbouncer (session mode, pool of 1) starts and proxies" pgb_start session 1
export SWERVE_CLAIM_STORE=$PGB_URL
"${under_shim[@]}" "$helper" hold pool-slot >"$work/pool.holder" &
server_pids+=($!)
for _ in $(seq 100); do grep -q 'held\|failed' "$work/pool.holder" 2>/dev/null && break; sleep 0.05; done
check "full pool: the first client holds the slot" grep -q '^held' "$work/pool.holder"
start=$(now_ns)
timeout 8 "${under_shim[@]}" "$helper" take pool-other 2 >"$work/pool.taker" 2>&1
ms=$(( ($(now_ns) - start) / 1000000 ))
echo "full pool: acquire(2.0) ended after $ms ms: $(cat "$work/pool.taker")"
check "full pool: acquire(2.0) fails with ETIMEDOUT" grep -qx "failed ETIMEDOUT" "$work/pool.taker"
check "full pool: after 1.5 to 3.5 s ($ms ms)" test "$ms" -ge 1500 -a "$ms" -le 3500
kill -9 "${server_pids[-1]}"
wait "${server_pids[-1]}" 2>/dev/null
finish
