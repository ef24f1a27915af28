#!/bin/bash
# make bench, part 2: bench_pg against a private PostgreSQL cluster
# (tests/pg/cluster.sh), under the shim.
set -u
. "$SCL_SRCDIR/tests/pg/cluster.sh"
trap pg_cluster_stop EXIT
pg_cluster_start >/dev/null && pg_cluster_init "$SCL_TOOL" || exit 1
SWERVE_CLAIM_STORE=$SCL_PG_URL LD_PRELOAD=$SCL_PRELOAD "$1"
