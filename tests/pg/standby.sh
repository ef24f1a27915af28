#!/bin/bash
# SPDX-License-Identifier: MIT
# A synchronous standby (doc/cluster.md), made with pg_basebackup -R from a
# private cluster (cluster.sh), with synchronous_standby_names = '*' on the
# primary and the claims database's synchronous_commit = off, as a site
# may have it: while the standby is away every timeout is honoured (a
# commit waits for it; acquire and token() may not wait for ever), and
# after a failover to it no token goes back.
. "$(dirname "$0")/../real-servers/lib.sh"
. "$(dirname "$0")/cluster.sh"
standby=
standby_ctl() { pg_as_postgres "$pg_bin/pg_ctl" -D "$standby" -l "$PG_DIR/standby.log" -w -t 30 "$@" >/dev/null; }
stop_standby() { [ -n "$standby" ] && [ -f "$standby/postmaster.pid" ] && standby_ctl -m immediate stop 2>/dev/null; }
trap 'finish_servers; stop_standby; pg_cluster_stop' EXIT

helper=$SCL_HELPERS/pg/pg_helper

pg_cluster_start || exit 1
check "db init" pg_cluster_init "$SCL_HELPERS/../swerve-claim"
standby=$PG_DIR/standby
standby_port=$(free_port)
standby_url=${SCL_PG_URL/:$PG_PORT/:$standby_port}
on_standby() { "$pg_bin/psql" -qAtX -v ON_ERROR_STOP=1 "${SCL_PG_ADMIN_URL/:$PG_PORT/:$standby_port}" -c "$1"; }
start_standby() {
    standby_ctl -o "-p $standby_port -k $PG_DIR -c listen_addresses=127.0.0.1" start || return 1
    for _ in $(seq 200); do # synchronous, and caught up
        [ "$(pg_sql "SELECT sync_state FROM pg_stat_replication")" = sync ] && return 0
        sleep 0.05
    done
    return 1
}
# Made before the primary asks for a synchronous standby: once promoted, it
# has none of its own to wait for.
check "pg_basebackup -R makes a standby" pg_as_postgres env PGPASSWORD="$(cat "$PG_DIR/pw")" \
    "$pg_bin/pg_basebackup" -h 127.0.0.1 -p "$PG_PORT" -U postgres -D "$standby" -R -X stream -c fast
pg_sql "ALTER SYSTEM SET synchronous_standby_names = '*'" && pg_sql "SELECT pg_reload_conf()" >/dev/null
check "the standby starts and is synchronous" start_standby
SWERVE_CLAIM_STORE=$standby_url timeout 60 "$SCL_HELPERS/../swerve-claim" db check >"$work/check" 2>"$work/check.err"
check "db check on the standby: status 1, naming the primary" \
    bash -c "[ $? -eq 1 ] && grep -q 'standby: claims need the primary' '$work/check.err'"
export SWERVE_CLAIM_STORE=$SCL_PG_URL
check "a name is registered while the standby is there" "${under_shim[@]}" "$helper" take registered 2 >/dev/null
"${under_shim[@]}" "$helper" take cancelled-token 2 >/dev/null
# What threads.* below use, registered now: one thread's token() while
# the standby is there.
timeout 30 "${under_shim[@]}" "$helper" threads thread-busy thread 10 token >"$work/threads.there" 2>&1
check "threads: one thread's token() while the standby is there" has "^waiter took " "$work/threads.there"
timeout 30 "${under_shim[@]}" "$helper" threads thread-busy other-thread 10 token >"$work/threads.there" 2>&1
check "(and again, with names of their own for the run beside it below)" has "^waiter took " "$work/threads.there"

# ---- the standby away: every commit waits for it (the database's
# synchronous_commit is on, its default, here)
check "the standby stops" standby_ctl -m fast stop
# The token sequence logs 32 values ahead; after a checkpoint its next
# value is logged anew, and that commit waits for the standby.
pg_sql "CHECKPOINT"
said() { [ -s "$1" ] && tr '\n' ' ' <"$1" || echo "(nothing: still blocked after 14 s, killed)"; }
timeout 14 "${under_shim[@]}" "$helper" timed never-seen 2 >"$work/away.new" 2>&1 &
new=$!
timeout 14 "${under_shim[@]}" "$helper" timed registered 2 token >"$work/away.registered" 2>&1 &
registered=$!
# A token whose commit's wait someone else cancels (pg_cancel_backend:
# the server commits, here only, and says a WARNING) is no token.
timeout 14 "${under_shim[@]}" "$helper" timed cancelled-token 2 token >"$work/away.cancelled" 2>&1 &
cancelled=$!
for _ in $(seq 100); do
    taker=$(pgrep -P "$cancelled")
    [ -n "$taker" ] && [ "$(pg_sql "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity \
        WHERE wait_event = 'SyncRep' AND application_name LIKE 'swerve-claim pid=$taker %'")" -gt 0 ] && break
    sleep 0.05
done
wait "$new" "$registered" "$cancelled"
check "standby away: a token whose wait was cancelled by another is not handed out ($(said "$work/away.cancelled"))" \
    grep -q "^token-failed ETIMEDOUT" "$work/away.cancelled"
echo "standby away: a new name: $(said "$work/away.new")"
echo "standby away: a registered name: $(said "$work/away.registered")"
# The acquire's figure: "acquired MS" or "failed ERRNO MS".
acquire_ms() { awk '/^acquired/ { print $2 } /^failed/ { print $3 }' "$1"; }
within() { [ -n "$1" ] && [ "$1" -le "$2" ]; }
check "standby away: acquire(2) of a never-registered name returns within 2.5 s" \
    within "$(acquire_ms "$work/away.new")" 2500
check "standby away: acquire(2) of a registered name returns within 2.5 s" \
    within "$(acquire_ms "$work/away.registered")" 2500
check "standby away: token() fails with ETIMEDOUT" grep -q "^token-failed ETIMEDOUT" "$work/away.registered"
check "standby away: within 11 s" within "$(awk '/^token-failed/ { print $3 }' "$work/away.registered")" 11000

# One thread waits for the database (a token()'s commit, or a new name's
# registration, waits for the standby): the process's other threads'
# calls on registered names do not wait behind it.
timeout 30 "${under_shim[@]}" "$helper" threads thread-busy thread 10 token >"$work/threads.token" 2>&1 &
token_threads=$!
timeout 30 "${under_shim[@]}" "$helper" threads thread-never-seen other-thread 10 >"$work/threads.register" 2>&1 &
wait "$token_threads" $!
for what in token register; do
    echo "standby away: threads behind a $what: $(tr '\n' ' ' <"$work/threads.$what")"
    check "standby away, one thread's $what waits: 10 acquire+release pairs in the others" \
        has "^pairs 10 " "$work/threads.$what"
    check "(every call under 150 ms: the slowest $(awk '/^pairs/ { print $4 }' "$work/threads.$what") ms)" \
        awk '/^pairs/ { found = 1; slow = $4 >= 150 } END { exit !found || slow }' "$work/threads.$what"
done
check "(the token() still fails with ETIMEDOUT, within 11 s)" \
    awk '/^waiter ETIMEDOUT/ { found = $3 <= 11000 } END { exit !found }' "$work/threads.token"

# ---- failover: tokens go on growing on the promoted standby, also where
# the database says synchronous_commit = off.  The primary's WAL sender is
# stopped while tokens are taken, then the primary dies (the sender with
# it, by SIGKILL, before it sends another byte): what was handed out must
# have reached the standby first.
check "the standby is back, synchronous" start_standby
pg_sql "ALTER DATABASE claims SET synchronous_commit = off"
"${under_shim[@]}" "$helper" tokens failover 20 >"$work/tokens" 2>&1 &
taker=$!
server_pids+=($taker)
for _ in $(seq 200); do [ "$(grep -c '^token' "$work/tokens")" -ge 100 ] && break; sleep 0.02; done
check "100 tokens are taken" test "$(grep -c '^token' "$work/tokens")" -ge 100
sender=$(pg_sql "SELECT pid FROM pg_stat_replication")
check "the primary's WAL sender is there (pid ${sender:-none})" test -n "$sender"
[ -n "$sender" ] && kill -STOP "$sender"
before=$(grep -c '^token' "$work/tokens")
sleep 0.5
pg_ctl_ -m immediate stop &
stopping=$!
sleep 0.3 # the postmaster has its SIGQUIT: the sender's death is no crash to recover from
[ -n "$sender" ] && kill -KILL "$sender"
wait "$stopping"
check "the primary dies" test $? -eq 0
wait "$taker" 2>/dev/null
echo "failover: $before tokens before the WAL sender stopped, $(grep -c '^token' "$work/tokens") in all;" \
    "the taker's end: $(tail -1 "$work/tokens")"
check "the standby is promoted" standby_ctl promote
highest=$(awk '/^token/ { if ($2 > m) m = $2 } END { print m + 0 }' "$work/tokens")
# Each token's transaction records it (last_token): one handed out must
# have had its commit reach the standby, whatever the sequence logged ahead.
recorded=$(on_standby "SELECT max(token) FROM swerve_claim.last_token")
check "failover: every token handed out had reached the standby (it recorded ${recorded:-none}, the highest handed out $highest)" \
    test "${recorded:-0}" -ge "$highest"
SWERVE_CLAIM_STORE=$standby_url "${under_shim[@]}" "$helper" take failover 5 >"$work/promoted" 2>&1
after=$(awk '/^took/ { print $2 }' "$work/promoted")
check "failover: the promoted standby's token (${after:-none: $(cat "$work/promoted")}) is greater than every earlier one ($highest)" \
    test "${after:-0}" -gt "$highest"
finish
