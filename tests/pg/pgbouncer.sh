# SPDX-License-Identifier: MIT
# A PgBouncer of the test's own (sourced by pooler.sh), in front of the
# private cluster (cluster.sh): Debian's pgbouncer, on 127.0.0.1 and a free
# port, its configuration, log and pid file in a temporary directory, run
# as the postgres user (-u: it will not run as root), stopped by its pid.
# Clients authenticate to it by trust; it logs in to the server as role app
# with the cluster's password.  pgb_start sets:
#   PGB_URL   the store's URI through this PgBouncer (role app)
#   PGB_PID PGB_PORT PGB_DIR
# and the caller's EXIT trap must call pgb_stop.

pgb_start() { # POOL-MODE DEFAULT-POOL-SIZE
    local mode=$1 size=$2
    pgb_stop
    PGB_DIR=$(mktemp -d /tmp/scl-pgbouncer.XXXXXX)
    PGB_PORT=$(free_port)
    echo '"app" ""' >"$PGB_DIR/userlist.txt"
    cat >"$PGB_DIR/pgbouncer.ini" <<INI
[databases]
claims = host=127.0.0.1 port=$PG_PORT dbname=claims user=app password=$(cat "$PG_DIR/pw")
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGB_PORT
unix_socket_dir =
auth_type = trust
auth_file = $PGB_DIR/userlist.txt
pool_mode = $mode
default_pool_size = $size
max_client_conn = 100
logfile = $PGB_DIR/pgbouncer.log
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
INI
    chown -R postgres "$PGB_DIR"
    /usr/sbin/pgbouncer -u postgres "$PGB_DIR/pgbouncer.ini" >"$PGB_DIR/stderr" 2>&1 &
    PGB_PID=$!
    server_pids+=($PGB_PID)
    PGB_URL="postgresql://app@127.0.0.1:$PGB_PORT/claims"
    for _ in $(seq 100); do
        [ "$("$pg_bin/psql" -qAtX "$PGB_URL" -c 'SELECT 1' 2>/dev/null)" = 1 ] && return 0
        kill -0 "$PGB_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "pgbouncer ($mode) does not answer on port $PGB_PORT:" >&2
    cat "$PGB_DIR/stderr" "$PGB_DIR/pgbouncer.log" >&2 2>/dev/null
    return 1
}

pgb_stop() {
    [ -n "${PGB_PID:-}" ] || return 0
    kill "$PGB_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$PGB_PID" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$PGB_PID" 2>/dev/null
    wait "$PGB_PID" 2>/dev/null
    rm -rf "$PGB_DIR"
    PGB_PID=
}
