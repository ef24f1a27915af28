#!/bin/bash
# SPDX-License-Identifier: MIT
# make bench, part 2: bench_pg against a private PostgreSQL cluster
# (tests/pg/cluster.sh), under the shim.
#
# fsync and synchronous_commit are on, as by default, and said so on the
# command line: a commit that writes WAL waits for the disk, as on a real
# server, so the pair's figures include what a token costs in flushes.
# SCL_PG_DATA tells the bench where to time the disk's own flush.
#
# The server (its postmaster, so every backend it forks) and the bench
# share one CPU.  Over loopback a round trip costs 25-35 us when client and
# backend run on the same CPU and 100-200 us when the scheduler puts them
# on two (a wake-up across vCPUs): unpinned, which of the two each
# connection got decided the ratio (1.06 to 7.4 in consecutive runs of the
# same build), not the library.  One CPU is the strict case: the smallest
# round trip, next to which the store's own work shows most.
set -u
. "$SCL_SRCDIR/tests/pg/cluster.sh"
trap pg_cluster_stop EXIT
pg_cluster_start fsync=on synchronous_commit=on >/dev/null && pg_cluster_init "$SCL_TOOL" || exit 1
cpu=$(($(nproc) - 1))
pin=()
if taskset -pc "$cpu" "$(head -1 "$PG_DIR/data/postmaster.pid")" >/dev/null; then
    pin=(taskset -c "$cpu")
    export SCL_PG_CPU=$cpu
fi
SCL_PG_DATA=$PG_DIR/data SWERVE_CLAIM_STORE=$SCL_PG_URL "${pin[@]}" env LD_PRELOAD="$SCL_PRELOAD" "$1"
