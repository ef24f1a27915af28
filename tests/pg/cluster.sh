# SPDX-License-Identifier: MIT
# A private PostgreSQL cluster for the tests (sourced): made with initdb as
# the postgres user in a temporary directory, listening on 127.0.0.1 only,
# on a free port, with password authentication; never the system's own
# cluster.  pg_cluster_start sets:
#   SCL_PG_URL        the servers' role 'app' (a member of swerve_claim_user),
#                     its password in the URI
#   SCL_PG_URL_NOPW   the same without the password, for a password file
#                     (doc/cluster.md: passwords belong in PGPASSFILE)
#   SCL_PG_PASSFILE   that password file: a pgpass line for 'app' only, mode
#                     0600, owned by root until pg_passfile_owner says whom
#   SCL_PG_ADMIN_URL  the superuser, for the tests' own looks and blows
#   PG_DIR PG_PORT
# and the caller's EXIT trap must call pg_cluster_stop.

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# Installs PostgreSQL when missing (without the system cluster Debian would
# make and start); SKIP (77) if it cannot be had.
pg_need() {
    if [ -z "$pg_bin" ] || ! [ -x "$pg_bin/initdb" ]; then
        mkdir -p /etc/postgresql-common/createcluster.d
        echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/50-swerve-claim-tests.conf
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 libpq5 \
            >/tmp/scl-pg-apt.log 2>&1; then
            echo "SKIP: cannot install postgresql-15: $(tail -2 /tmp/scl-pg-apt.log)"
            exit 77
        fi
        pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
}

pg_as_postgres() { runuser -u postgres -- "$@"; }

pg_ctl_() { pg_as_postgres "$pg_bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 "$@" >/dev/null; }

pg_cluster_start() { # [SERVER-SETTING...] as -c options
    local password extra=()
    pg_need
    PG_DIR=$(mktemp -d /tmp/scl-pg.XXXXXX)
    chown postgres "$PG_DIR"
    password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    echo "$password" >"$PG_DIR/pw"
    chown postgres "$PG_DIR/pw"
    pg_as_postgres "$pg_bin/initdb" -D "$PG_DIR/data" -U postgres -A scram-sha-256 --pwfile="$PG_DIR/pw" \
        >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; return 1; }
    PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    for s in "$@"; do extra+=(-c "$s"); done
    # The server's keepalives, paired with the client's (doc/cluster.md):
    # a silent peer is dropped after 4 + 3 x 1 s.
    PG_OPTS="-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c tcp_keepalives_idle=4 \
-c tcp_keepalives_interval=1 -c tcp_keepalives_count=3 ${extra[*]}"
    pg_ctl_ -o "$PG_OPTS" start || { cat "$PG_DIR/log" >&2; return 1; }
    SCL_PG_ADMIN_URL="postgresql://postgres:$password@127.0.0.1:$PG_PORT/claims"
    PGPASSWORD=$password "$pg_bin/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE DATABASE claims" -c "CREATE ROLE app LOGIN PASSWORD '$password'" >/dev/null
    SCL_PG_URL="postgresql://app:$password@127.0.0.1:$PG_PORT/claims"
    SCL_PG_URL_NOPW="postgresql://app@127.0.0.1:$PG_PORT/claims"
    # Not under PG_DIR (postgres's, 0700): whoever opens the session reads
    # it, and libpq ignores a password file that others may read.
    mkdir -m 0711 "$PG_DIR.pass"
    SCL_PG_PASSFILE=$PG_DIR.pass/pgpass
    (umask 077 && echo "127.0.0.1:$PG_PORT:claims:app:$password" >"$SCL_PG_PASSFILE")
    export SCL_PG_URL SCL_PG_URL_NOPW SCL_PG_PASSFILE SCL_PG_ADMIN_URL PG_DIR PG_PORT
}

# libpq reads the password file in the process that connects: in a server
# whose workers drop privileges, the workers' user must own it (root reads
# it anyway).
pg_passfile_owner() { chown "$1" "$SCL_PG_PASSFILE"; }

# The schema, made the way users make it in a database of the claims' own
# (PUBLIC may not connect), and the app role let in.
pg_cluster_init() { # SWERVE-CLAIM-TOOL
    SWERVE_CLAIM_STORE=$SCL_PG_ADMIN_URL "$1" db init --dedicated >/dev/null &&
        pg_sql "GRANT swerve_claim_user TO app"
}

pg_sql() { "$pg_bin/psql" -qAtX -v ON_ERROR_STOP=1 "$SCL_PG_ADMIN_URL" -c "$1"; }

pg_cluster_restart() { pg_ctl_ -m fast -o "$PG_OPTS" restart; }

pg_cluster_stop() {
    [ -n "${PG_DIR:-}" ] || return 0
    rm -rf "$PG_DIR.pass"
    [ -d "$PG_DIR/data" ] || return 0
    pg_ctl_ -m immediate stop 2>/dev/null
    rm -rf "$PG_DIR"
}
