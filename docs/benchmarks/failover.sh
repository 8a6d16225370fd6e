#!/usr/bin/env bash
# Failover times, hotpair beside PostgreSQL 15, interleaved (issue 18).
#
#   docs/benchmarks/failover.sh [ROUNDS]      (as root or as a user who can run both)
#
# Each round, for each system: a primary (pgbench scale 10), standby 1
# streaming from it and standby 2 streaming from standby 1 (cascading: it
# can never hold WAL standby 1 lacks, so it can always follow); tpcb-like
# load from 4 clients; after 3 s the primary is killed (SIGKILL) and at
# once `SELECT pg_promote(false)` is sent to standby 1. Defaults otherwise
# (PostgreSQL's wal_retrieve_retry_interval = 5 s included). Printed per
# round, in milliseconds from the kill:
#   writable  the first INSERT on standby 1 that commits;
#   followed  standby 2 shows that row (it followed standby 1 onto the
#             new timeline).
# hotpair binaries: target/release (cargo build --release -p primary -p standby).
set -euo pipefail
ROUNDS=${1:-5}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HP=${HOTPAIR_BIN:-$ROOT/target/release}
W=$(mktemp -d /tmp/failover.XXXXXX)
chmod 777 "$W"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    pkill -9 -f "$W/" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
q() { psql -XAtq -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2" 2>/dev/null; }
now() { date +%s%N; }
wait_for() { # port sql expected
    local i=0
    until [ "$(q "$1" "$2" || true)" = "$3" ]; do
        sleep 0.005; i=$((i + 1)); [ $i -lt 12000 ] || { echo "timeout: $2 on $1" >&2; exit 1; }
    done
}

# hotpair: primary on $1, standbys on $2 and $3; sets PRIMARY_PID.
start_hotpair() {
    local d=$W/hp$4
    mkdir -p "$d/p" "$d/s1" "$d/s2"
    "$HP/primary" -D "$d/p" -p "$1" >"$d/p.log" 2>&1 & PRIMARY_PID=$!; PIDS+=($!)
    wait_for "$1" "SELECT 1" 1
    pgbench -q -i -s 10 -h 127.0.0.1 -p "$1" -U postgres postgres >/dev/null 2>&1
    local n=1 up=$1
    for port in "$2" "$3"; do
        "$HP/standby" -D "$d/s$n" -p "$port" \
            --primary-conninfo "host=127.0.0.1 port=$up application_name=s$n" >"$d/s$n.log" 2>&1 &
        PIDS+=($!)
        wait_for "$port" "SELECT pg_is_in_recovery()" t
        n=$((n + 1)); up=$port
    done
}

start_postgres() {
    local d=$W/pg$4
    mkdir -p "$d"; chown postgres "$d" 2>/dev/null || true
    as_pg "$PGBIN/initdb" -D "$d/p" -A trust -U postgres >/dev/null
    cat >>"$d/p/postgresql.conf" <<EOF
port = $1
listen_addresses = '127.0.0.1'
unix_socket_directories = '$d'
shared_buffers = 128MB
EOF
    as_pg "$PGBIN/pg_ctl" -D "$d/p" -l "$d/p.log" -w start >/dev/null
    PRIMARY_PID=$(head -1 "$d/p/postmaster.pid")
    pgbench -q -i -s 10 -h 127.0.0.1 -p "$1" -U postgres postgres >/dev/null 2>&1
    local n=1 up=$1
    for port in "$2" "$3"; do
        as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$up" -U postgres -D "$d/s$n" -R -X stream -c fast
        echo "port = $port" >>"$d/s$n/postgresql.conf"
        as_pg "$PGBIN/pg_ctl" -D "$d/s$n" -l "$d/s$n.log" -w start >/dev/null
        wait_for "$port" "SELECT pg_is_in_recovery()" t
        n=$((n + 1)); up=$port
    done
}

# One failover of the system on ports $1 $2 $3; prints "writable followed".
failover() {
    pgbench -n -c 4 -j 2 -T 30 -h 127.0.0.1 -p "$1" -U postgres postgres >/dev/null 2>&1 &
    local bench=$!
    sleep 3
    kill -9 "$PRIMARY_PID"
    local t0; t0=$(now)
    q "$2" "SELECT pg_promote(false)" >/dev/null
    until q "$2" "CREATE TABLE IF NOT EXISTS marker (t text); INSERT INTO marker VALUES ('after')" >/dev/null; do
        sleep 0.005
    done
    local t1; t1=$(now)
    wait_for "$3" "SELECT count(*) FROM marker" 1
    local t2; t2=$(now)
    wait "$bench" 2>/dev/null || true
    echo "$(( (t1 - t0) / 1000000 )) $(( (t2 - t0) / 1000000 ))"
}

stop_all() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    PIDS=()
    pkill -9 -f "$W/" 2>/dev/null || true
    sleep 0.5
}

printf "%-6s %-9s %12s %12s\n" round system writable_ms followed_ms
for r in $(seq 1 "$ROUNDS"); do
    for sys in hotpair postgres; do
        base=$((20000 + r * 10))
        [ $sys = postgres ] && base=$((base + 5))
        "start_$sys" $base $((base + 1)) $((base + 2)) "$r"
        read -r w f < <(failover $base $((base + 1)) $((base + 2)))
        printf "%-6s %-9s %12s %12s\n" "$r" "$sys" "$w" "$f"
        stop_all
    done
done
