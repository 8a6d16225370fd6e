#!/usr/bin/env bash
# Standby replay throughput with long-running transactions on the primary
# (issue 19: KnownAssignedXids large), hotpair builds side by side,
# interleaved, and PostgreSQL 15 beside them.
#
#   docs/benchmarks/replay_kax.sh [ROUNDS] [LONG] [BIN_DIR ...]
#
# BIN_DIRs hold release `primary` and `standby` (default: target/release);
# give an old build's directory and a new one's to compare them. LONG is
# the number of long-running transactions (default 64).
#
# Each round, for each system: a primary (synchronous_commit = off, so WAL
# is produced fast) and a standby streaming from it through a physical slot;
# pgbench -i -s 10; the standby is stopped; LONG sessions on the primary
# each take an xid (BEGIN; SELECT txid_current()) and stay open; a running-
# xacts record follows (CHECKPOINT), then tpcb-like -c 4 -t TXNS short
# transactions; the primary's insert LSN is read; the standby is started
# again and must replay all of it, its KnownAssignedXids holding the LONG
# xids plus the short ones in flight. Printed: MB of WAL from the standby's
# replay position at start to the target, the seconds until
# pg_last_wal_replay_lsn() reached the target (polled every 5 ms, start-up
# included), and MB/s.
set -euo pipefail
ROUNDS=${1:-3}
LONG=${2:-64}
shift 2 2>/dev/null || shift $#
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$ROOT/target/release")
TXNS=${TXNS:-100000}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
W=$(mktemp -d /tmp/replay_kax.XXXXXX)
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
        sleep 0.005; i=$((i + 1)); [ $i -lt 24000 ] || { echo "timeout: $2 on $1" >&2; exit 1; }
    done
}
lsn_bytes() { # X/Y -> bytes
    local hi=${1%/*} lo=${1#*/}
    echo $(( (16#$hi << 32) + 16#$lo ))
}

# system-specific start/stop of the standby; set by start_*.
start_hotpair() { # bindir port sport dir
    local bin=$1 d=$4
    mkdir -p "$d/p" "$d/s"
    "$bin/primary" -D "$d/p" -p "$2" -c synchronous_commit=off >"$d/p.log" 2>&1 & PIDS+=($!)
    wait_for "$2" "SELECT 1" 1
    q "$2" "SELECT pg_create_physical_replication_slot('s1', true)" >/dev/null
    pgbench -q -i -s 10 -h 127.0.0.1 -p "$2" -U postgres postgres >/dev/null 2>&1
    STANDBY_CMD=("$bin/standby" -D "$d/s" -p "$3" --slot s1
        --primary-conninfo "host=127.0.0.1 port=$2 application_name=s1")
    "${STANDBY_CMD[@]}" >>"$d/s.log" 2>&1 & STANDBY_PID=$!; PIDS+=($!)
    wait_for "$3" "SELECT pg_is_in_recovery()" t
}

start_postgres() { # - port sport dir
    local d=$4
    mkdir -p "$d"; chown postgres "$d"
    as_pg "$PGBIN/initdb" -D "$d/p" -U postgres -A trust >/dev/null
    cat >>"$d/p/postgresql.conf" <<EOF
port = $2
synchronous_commit = off
listen_addresses = '127.0.0.1'
unix_socket_directories = '$d'
EOF
    as_pg "$PGBIN/pg_ctl" -D "$d/p" -l "$d/p.log" -w start >/dev/null
    q "$2" "SELECT pg_create_physical_replication_slot('s1', true)" >/dev/null
    pgbench -q -i -s 10 -h 127.0.0.1 -p "$2" -U postgres postgres >/dev/null 2>&1
    as_pg "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$2" -U postgres -D "$d/s" -R -S s1 -c fast >/dev/null
    cat >>"$d/s/postgresql.conf" <<EOF
port = $3
unix_socket_directories = '$d'
EOF
    STANDBY_CMD=(as_pg "$PGBIN/pg_ctl" -D "$d/s" -l "$d/s.log" start)
    "${STANDBY_CMD[@]}" >/dev/null
    wait_for "$3" "SELECT pg_is_in_recovery()" t
}

stop_standby() { # system dir
    if [ "$1" = postgres ]; then
        as_pg "$PGBIN/pg_ctl" -D "$2/s" -m fast -w stop >/dev/null
    else
        kill -TERM "$STANDBY_PID"; wait "$STANDBY_PID" 2>/dev/null || true
    fi
}

one() { # system bindir port sport dir -> "MB s MB/s"
    local sys=$1 bin=$2 port=$3 sport=$4 d=$5
    "start_$sys" "$bin" "$port" "$sport" "$d"
    local from; from=$(q "$sport" "SELECT pg_last_wal_replay_lsn()")
    stop_standby "$sys" "$d"
    local holders=()
    for _ in $(seq 1 "$LONG"); do
        psql -XAtq -h 127.0.0.1 -p "$port" -U postgres -d postgres \
            -c "BEGIN" -c "SELECT txid_current()" -c "SELECT pg_sleep(3600)" >/dev/null 2>&1 &
        holders+=($!)
    done
    wait_for "$port" "SELECT count(*) >= $LONG FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND query LIKE '%pg_sleep%'" t
    q "$port" "CHECKPOINT" >/dev/null
    pgbench -n -c 4 -j 2 -t $((TXNS / 4)) -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
    local target; target=$(q "$port" "SELECT pg_current_wal_insert_lsn()")
    local t0; t0=$(now)
    if [ "$sys" = postgres ]; then "${STANDBY_CMD[@]}" >/dev/null; else
        "${STANDBY_CMD[@]}" >>"$d/s.log" 2>&1 & STANDBY_PID=$!; PIDS+=($!); fi
    wait_for "$sport" "SELECT pg_last_wal_replay_lsn() >= '$target'" t
    local t1; t1=$(now)
    for h in "${holders[@]}"; do kill "$h" 2>/dev/null || true; done
    local bytes=$(( $(lsn_bytes "$target") - $(lsn_bytes "$from") ))
    awk -v b="$bytes" -v ns="$((t1 - t0))" 'BEGIN { mb = b / 1048576; s = ns / 1e9; printf "%8.1f %8.3f %8.1f\n", mb, s, mb / s }'
    if [ "$sys" = postgres ]; then
        as_pg "$PGBIN/pg_ctl" -D "$d/s" -m immediate stop >/dev/null 2>&1 || true
        as_pg "$PGBIN/pg_ctl" -D "$d/p" -m immediate stop >/dev/null 2>&1 || true
    fi
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    PIDS=()
    pkill -9 -f "$W/" 2>/dev/null || true
    sleep 0.5
}

printf "%-6s %-40s %8s %8s %8s\n" round system MB seconds MB/s
for r in $(seq 1 "$ROUNDS"); do
    i=0
    for bin in "${BINS[@]}"; do
        base=$((21000 + r * 20 + i * 2))
        printf "%-6s %-40s %s\n" "$r" "hotpair $bin" "$(one hotpair "$bin" $base $((base + 1)) "$W/hp$r-$i")"
        i=$((i + 1))
    done
    if [ -x "$PGBIN/postgres" ]; then
        base=$((21000 + r * 20 + 15))
        printf "%-6s %-40s %s\n" "$r" postgres "$(one postgres - $base $((base + 1)) "$W/pg$r")"
    fi
done
