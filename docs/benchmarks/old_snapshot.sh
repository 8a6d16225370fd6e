#!/bin/bash
# old_snapshot.sh — the cost of old_snapshot_threshold (docs/benchmarks.md,
# "old_snapshot_threshold"): the seed's method (the 2016 "snapshot too old"
# regression thread: saturate the server with trivial statements and look
# for the cost of a feature that is off).
#
#   docs/benchmarks/old_snapshot.sh ON_PRIMARY OFF_PRIMARY [ROUNDS]
#
# ON_PRIMARY: a release `primary` built with default features;
# OFF_PRIMARY: one built with `cargo build --release -p primary
# --no-default-features` (the feature compiled out). Three sides, each on its
# own data directory (pgbench -i -s 10 once), interleaved per round with the
# order rotating: on_-1 (the default build, threshold -1), compiled_out, and
# on_10 (the default build, threshold 10 minutes). Per side and round, for
# each client count (CLIENTS, default "1 8 64 256"): `SELECT 1` and
# `pgbench -S`, both -M prepared, DURATION seconds (default 5) each, after
# one untimed 2 s warm-up per start. Server CPU per transaction: utime +
# stime of the server process (/proc/PID/stat, all threads) around each
# pgbench run, divided by pgbench's transactions processed.
#
# Output: one line per point in $OUT/results.txt:
#   side round workload clients tps cpu_us_per_txn
set -euo pipefail
ON=$1
OFF=$2
ROUNDS=${3:-3}
DURATION=${DURATION:-5}
CLIENTS=${CLIENTS:-"1 8 64 256"}
OUT=${OUT:-/tmp/old_snapshot-$(date +%Y%m%d-%H%M)}
PORT=${PORT:-55433}
mkdir -p "$OUT"
echo "SELECT 1;" > "$OUT/select1.sql"
TICK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start() { # side bin threshold
    local dir="$OUT/data-$1"
    "$2" -D "$dir" -p "$PORT" -c max_connections=300 -c "old_snapshot_threshold=$3" \
        >"$OUT/$1.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 200); do
        psql -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -c "SELECT 1" >/dev/null 2>&1 && return
        sleep 0.1
    done
    echo "server $1 did not start" >&2
    exit 1
}

stop() { kill -INT "$PID"; wait "$PID" || true; }

point() { # side round workload clients args...
    local side=$1 round=$2 wl=$3 c=$4
    shift 4
    local j=$((c < 8 ? c : 8))
    local before after out tx tps
    before=$(cpu_ticks "$PID")
    out=$(pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -M prepared -c "$c" -j "$j" -T "$DURATION" "$@" postgres 2>&1)
    after=$(cpu_ticks "$PID")
    tx=$(echo "$out" | awk '/number of transactions actually processed/ {split($NF,a,"/"); print a[1]}')
    tps=$(echo "$out" | awk '/^tps = / {print $3; exit}')
    local us
    us=$(awk -v d=$((after - before)) -v t="$tx" -v k="$TICK" 'BEGIN {printf "%.2f", d * 1e6 / k / t}')
    echo "$side $round $wl $c $tps $us" | tee -a "$OUT/results.txt"
}

SIDES=("on_-1:$ON:-1" "compiled_out:$OFF:-1" "on_10:$ON:10")
for s in "${SIDES[@]}"; do
    IFS=: read -r side bin thr <<<"$s"
    start "$side" "$bin" "$thr"
    pgbench -h 127.0.0.1 -p "$PORT" -U postgres -i -s 10 -q postgres >"$OUT/$side-init.log" 2>&1
    stop
done
for r in $(seq 1 "$ROUNDS"); do
    n=${#SIDES[@]}
    for k in $(seq 0 $((n - 1))); do
        IFS=: read -r side bin thr <<<"${SIDES[$(((k + r - 1) % n))]}"
        start "$side" "$bin" "$thr"
        pgbench -h 127.0.0.1 -p "$PORT" -U postgres -n -S -M prepared -c 8 -j 8 -T 2 postgres >/dev/null 2>&1
        for c in $CLIENTS; do
            point "$side" "$r" select1 "$c" -f "$OUT/select1.sql"
            point "$side" "$r" select_only "$c" -S
        done
        stop
    done
done
echo "results: $OUT/results.txt"
