#!/bin/bash
# SPDX-License-Identifier: MIT
# A silent partition between a holder and the database (nftables drops its
# packets both ways, in a network namespace of this test's own, with its
# own private cluster): the holder's held() must turn 0 before the server
# lets anyone else in.  The client's keepalive defaults (session.c, about
# 6 s) against the server's settings that doc/cluster.md pairs with them,
# scaled down (8 s idle + 4 probes x 1 s).
if [ "${SCL_IN_NETNS:-}" != 1 ]; then
    unshare -n true 2>/dev/null || { echo "SKIP: cannot make a network namespace (needs root)"; exit 77; }
    exec env SCL_IN_NETNS=1 unshare -n "$0" "$@"
fi
. "$(dirname "$0")/../real-servers/lib.sh"
. "$(dirname "$0")/cluster.sh"
trap 'finish_servers; pg_cluster_stop' EXIT
ip link set lo up
need_packages nftables
nft add table inet scl_partition 2>/dev/null || { echo "SKIP: nftables cannot filter in this kernel"; exit 77; }

helper=$SCL_HELPERS/pg/pg_helper
pg_cluster_start tcp_keepalives_idle=8 tcp_keepalives_interval=1 tcp_keepalives_count=4 || exit 1
check "db init" pg_cluster_init "$SCL_HELPERS/../swerve-claim"
export SWERVE_CLAIM_STORE=$SCL_PG_URL

env LD_PRELOAD="$preload" "$helper" hold cut >"$work/holder" &
holder=$!
server_pids+=($holder)
for _ in $(seq 100); do grep -q held "$work/holder" && break; sleep 0.05; done
port=$(pg_sql "SELECT client_port FROM pg_stat_activity WHERE application_name LIKE 'swerve-claim pid=$holder %'")
check "the holder holds, from port $port" test -n "$port"
env LD_PRELOAD="$preload" "$helper" take cut 40 >"$work/taker" &
taker=$!
server_pids+=($taker)
sleep 0.5

nft add chain inet scl_partition out '{ type filter hook output priority 0; }'
nft add rule inet scl_partition out tcp sport "$port" drop
nft add rule inet scl_partition out tcp dport "$port" drop
cut_at=$(now_ns)
for _ in $(seq 450); do grep -q took "$work/taker" && break; sleep 0.1; done
lost_at=$(awk '/^lost/ { print $2 }' "$work/holder")
took_at=$(awk '/^took/ { print $3 }' "$work/taker")
echo "partition: the holder saw the loss after $(( (${lost_at:-$cut_at} - cut_at) / 1000000 )) ms;" \
    "the server let the next one in after $(( (${took_at:-$cut_at} - cut_at) / 1000000 )) ms"
check "partition: the holder's held() turns 0" test -n "$lost_at"
check "partition: the server frees the claim in the end" test -n "$took_at"
check "partition: the holder knew before anyone else got in" test "${lost_at:-9000000000000000000}" -lt "${took_at:-0}"
finish
