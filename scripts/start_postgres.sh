#!/usr/bin/env bash
# Start (or reuse) a throwaway PostgreSQL cluster for trajcheck's SQLAlchemy sandbox tests.
#
#   scripts/start_postgres.sh          start if needed; print the connection URL on stdout
#   scripts/start_postgres.sh stop     stop the cluster (the data folder is kept)
#   scripts/start_postgres.sh destroy  stop it and delete its folder
#
# Idempotent: a second run finds the running cluster and prints the same URL. The cluster
# lives in $TRAJCHECK_PG_DIR (default: <repo>/.cache/postgres), listens on 127.0.0.1 only,
# on a free port chosen at first start, with scram-sha-256 password authentication for every
# role, over TCP and the socket alike (no trust: an agent under test cannot log in as the
# admin). The admin's password is in $DIR/admin.pass and the URL (with its role's password) in
# $DIR/url, both mode 0600. The URL printed is for the role `trajcheck`, which is NOT a
# superuser and has no CREATEROLE (before PostgreSQL 16 a CREATEROLE role may grant itself
# pg_execute_server_program and so run shell commands: it equals superuser). It owns the
# database `trajcheck`. Each sandbox trial's role is made by two SECURITY DEFINER functions,
# trajcheck_trials.open_trial / close_trial, owned by the NOLOGIN role `trajcheck_trials`
# (the only role with CREATEROLE besides the superuser): they create a login role with fixed
# attributes (no superuser, CREATEDB, CREATEROLE, membership or replication) owning only the
# trial's schema, and drop only roles they made. So trajcheck's sandbox runs each trial's
# fixture and tools as a fresh role that owns nothing but the trial's schema (no COPY ...
# PROGRAM, no server files, no other schema), and the handed-out role cannot become more.
# The bootstrap superuser `trajcheck_admin` is used only by this script.
# Everything but the URL goes to stderr, so `export TRAJCHECK_PG_URL=$(scripts/start_postgres.sh)`
# works. A cluster made by an older version of this script (whose `trajcheck` role was the
# superuser) is recreated.
#
# initdb/pg_ctl are found on PATH or under /usr/lib/postgresql/*/bin (newest version); if
# absent and we are root on a Debian-like system, `apt-get install -y postgresql` is run.
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user
# (created with useradd if missing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${TRAJCHECK_PG_DIR:-$ROOT/.cache/postgres}"
DATA="$DIR/data"
SOCK="$DIR/run"
LOG="$DIR/server.log"
URLFILE="$DIR/url"
PGUSER_NAME=trajcheck
ADMIN_NAME=trajcheck_admin
LAYOUT=4  # 4: as 3 (superuser trajcheck_admin, non-superuser trajcheck owning database trajcheck, scram
          # passwords), trajcheck without CREATEROLE, trial roles made by trajcheck_trials' functions

log() { echo "start_postgres: $*" >&2; }

find_bindir() {
    local d
    if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return 0
    fi
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$d" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ]; then
        echo "$d"
        return 0
    fi
    return 1
}

BINDIR=$(find_bindir || true)
if [ -z "$BINDIR" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "PostgreSQL not found; installing it with apt-get"
        (apt-get install -y -q postgresql >&2 || { apt-get update -q >&2 && apt-get install -y -q postgresql >&2; })
        BINDIR=$(find_bindir || true)
    fi
fi
if [ -z "$BINDIR" ]; then
    log "cannot find initdb/pg_ctl (looked on PATH and in /usr/lib/postgresql/*/bin) and cannot install them"
    exit 2
fi

# Run a command as the cluster's owner: ourselves, or `postgres` when we are root.
RUNAS=()
if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin postgres >&2
    fi
    if command -v runuser >/dev/null 2>&1; then
        RUNAS=(runuser -u postgres --)
    else
        RUNAS=(setpriv --reuid=postgres --regid=postgres --init-groups)
    fi
fi
as_owner() { "${RUNAS[@]}" "$@"; }

is_running() { [ -f "$DATA/PG_VERSION" ] && as_owner "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

case "${1:-start}" in
    stop)
        if is_running; then as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2; fi
        exit 0 ;;
    destroy)
        if is_running; then as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2; fi
        rm -rf "$DIR"
        exit 0 ;;
    start) ;;
    *) log "usage: $0 [start|stop|destroy]"; exit 64 ;;
esac

if [ -f "$DATA/PG_VERSION" ] && [ "$(cat "$DIR/layout" 2>/dev/null)" != "$LAYOUT" ]; then
    log "recreating the cluster in $DIR (made by an older script, with a superuser URL)"
    if is_running; then as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >&2; fi
    rm -rf "$DATA" "$URLFILE"
fi

if is_running && [ -s "$URLFILE" ]; then
    cat "$URLFILE"
    exit 0
fi

mkdir -p "$DIR" "$SOCK"
if [ "$(id -u)" = 0 ]; then chown -R postgres: "$DIR"; fi

if [ ! -f "$DATA/PG_VERSION" ]; then
    log "initdb in $DATA"
    umask 077
    python3 -c 'import secrets; print(secrets.token_hex(24))' >"$DIR/admin.pass"
    python3 -c 'import secrets; print(secrets.token_hex(24))' >"$DIR/user.pass"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$DIR/admin.pass"; fi
    as_owner "$BINDIR/initdb" -D "$DATA" -U "$ADMIN_NAME" --auth=scram-sha-256 --pwfile="$DIR/admin.pass" \
        -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
    if [ "$(id -u)" = 0 ]; then chown root: "$DIR/admin.pass"; fi
    chmod 600 "$DIR/admin.pass" "$DIR/user.pass"
    umask 022
    rm -f "$DIR/roles_done"
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
PORT=""
if [ -s "$DIR/port" ]; then
    PORT=$(cat "$DIR/port")
    # reuse the old port only if it is free now
    if ! python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1])))' "$PORT" 2>/dev/null; then
        PORT=""
    fi
fi
[ -n "$PORT" ] || PORT=$(free_port)
echo "$PORT" >"$DIR/port"

# A stale pid file from a killed server would make pg_ctl refuse to start.
if [ -f "$DATA/postmaster.pid" ] && ! is_running; then rm -f "$DATA/postmaster.pid"; fi

log "starting PostgreSQL ($BINDIR) on 127.0.0.1:$PORT"
if ! as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
        -o "-p $PORT -k $SOCK -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off" start >&2; then
    log "pg_ctl start failed; server log follows"
    tail -n 30 "$LOG" >&2 || true
    exit 1
fi

if [ ! -f "$DIR/roles_done" ]; then
    PSQL="$BINDIR/psql"
    [ -x "$PSQL" ] || PSQL=$(command -v psql)
    PGPASSWORD="$(cat "$DIR/admin.pass")" "$PSQL" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" \
        -U "$ADMIN_NAME" -d postgres >&2 <<SQL
CREATE ROLE $PGUSER_NAME LOGIN PASSWORD '$(cat "$DIR/user.pass")' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
CREATE DATABASE $PGUSER_NAME OWNER $PGUSER_NAME;
SQL
    # The trial-role functions, in the database the URL names (quoted heredoc: $$ is SQL's).
    PGPASSWORD="$(cat "$DIR/admin.pass")" "$PSQL" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" \
        -U "$ADMIN_NAME" -d "$PGUSER_NAME" -v app_role="$PGUSER_NAME" -v db="$PGUSER_NAME" \
        -f "$ROOT/scripts/postgres_trial_roles.sql" >&2
    touch "$DIR/roles_done"
    echo "$LAYOUT" >"$DIR/layout"
fi

URL="postgresql://$PGUSER_NAME:$(cat "$DIR/user.pass")@127.0.0.1:$PORT/$PGUSER_NAME"
(umask 077; echo "$URL" >"$URLFILE")
chmod 600 "$URLFILE"
echo "$URL"
