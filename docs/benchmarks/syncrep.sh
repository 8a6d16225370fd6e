#!/usr/bin/env bash
# Commit latency and tpcb-like throughput per synchronous_commit level with
# one synchronous standby, hotpair beside PostgreSQL 15 (issue 18).
#
#   docs/benchmarks/syncrep.sh [SECONDS] [CLIENTS...]     (default: 8 s; 1 8)
#
# Each system: a primary (pgbench scale 10) and one streaming standby
# named s1, `synchronous_standby_names = 's1'`; per level (local,
# remote_write, on, remote_apply) and client count, `pgbench -n -M prepared
# -T SECONDS` with `synchronous_commit` set through PGOPTIONS, hotpair and
# PostgreSQL alternating. Prints tps and pgbench's average latency (ms).
# hotpair binaries: target/release (cargo build --release -p primary -p standby).
set -euo pipefail
SECS=${1:-8}
shift || true
CLIENTS=("${@:-1 8}")
read -r -a CLIENTS <<<"${CLIENTS[*]}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HP=${HOTPAIR_BIN:-$ROOT/target/release}
W=$(mktemp -d /tmp/syncrep.XXXXXX)
chmod 777 "$W"
cleanup() {
    pkill -9 -f "$W/" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
q() { psql -XAtq -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2" 2>/dev/null; }
wait_for() {
    local i=0
    until [ "$(q "$1" "$2" || true)" = "$3" ]; do
        sleep 0.05; i=$((i + 1)); [ $i -lt 2400 ] || { echo "timeout: $2 on $1" >&2; exit 1; }
    done
}

HPP=21432 HPS=21433 PGP=21442 PGS=21443
mkdir -p "$W/hp/p" "$W/hp/s1"
"$HP/primary" -D "$W/hp/p" -p $HPP >"$W/hp/p.log" 2>&1 &
wait_for $HPP "SELECT 1" 1
pgbench -q -i -s 10 -h 127.0.0.1 -p $HPP -U postgres postgres >/dev/null 2>&1
"$HP/standby" -D "$W/hp/s1" -p $HPS \
    --primary-conninfo "host=127.0.0.1 port=$HPP application_name=s1" >"$W/hp/s1.log" 2>&1 &
wait_for $HPS "SELECT pg_is_in_recovery()" t

mkdir -p "$W/pg"; chown postgres "$W/pg" 2>/dev/null || true
as_pg "$PGBIN/initdb" -D "$W/pg/p" -A trust -U postgres >/dev/null
cat >>"$W/pg/p/postgresql.conf" <<EOF
port = $PGP
listen_addresses = '127.0.0.1'
unix_socket_directories = '$W/pg'
EOF
as_pg "$PGBIN/pg_ctl" -D "$W/pg/p" -l "$W/pg/p.log" -w start >/dev/null
pgbench -q -i -s 10 -h 127.0.0.1 -p $PGP -U postgres postgres >/dev/null 2>&1
as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p $PGP -U postgres -D "$W/pg/s1" -R -X stream -c fast
echo "port = $PGS" >>"$W/pg/s1/postgresql.conf"
sed -i "s/^primary_conninfo = '/primary_conninfo = 'application_name=s1 /" "$W/pg/s1/postgresql.auto.conf"
as_pg "$PGBIN/pg_ctl" -D "$W/pg/s1" -l "$W/pg/s1.log" -w start >/dev/null

for port in $HPP $PGP; do
    q $port "ALTER SYSTEM SET synchronous_standby_names = 's1'" >/dev/null
    q $port "SELECT pg_reload_conf()" >/dev/null
    wait_for $port "SELECT sync_state FROM pg_stat_replication WHERE application_name = 's1'" sync
done

run() { # port level clients -> "tps latency_ms"
    PGOPTIONS="-c synchronous_commit=$2" pgbench -n -M prepared -c "$3" -j "$(( $3 < 2 ? 1 : 2 ))" \
        -T "$SECS" -h 127.0.0.1 -p "$1" -U postgres postgres 2>/dev/null |
        awk '/^latency average/ {l=$4} /^tps/ {t=$3} END {printf "%.0f %.2f\n", t, l}'
}

printf "%-13s %7s %12s %12s %12s %12s\n" synchronous_commit clients hotpair_tps hotpair_ms pg_tps pg_ms
for level in local remote_write on remote_apply; do
    for c in "${CLIENTS[@]}"; do
        read -r ht hl < <(run $HPP $level "$c")
        read -r pt pl < <(run $PGP $level "$c")
        printf "%-13s %7s %12s %12s %12s %12s\n" "$level" "$c" "$ht" "$hl" "$pt" "$pl"
    done
done
