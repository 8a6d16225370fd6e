#!/bin/bash
# Server instructions per select-only transaction, counted by callgrind
# (independent of what else the machine runs; docs/benchmarks.md,
# "Session 30").
#
#   callgrind_select.sh BIN_DIR DATA_DIR PORT CLIENTS TXNS_PER_CLIENT
#
# DATA_DIR: a hotpair data directory holding `pgbench -i` tables (start
# BIN_DIR/primary on it once, run `pgbench -i -s 1`, stop it). The
# server runs under valgrind with instrumentation off until the warm-up,
# counters are zeroed after 50 transactions per client, and dumped after
# `pgbench -S -M prepared -c CLIENTS -t TXNS_PER_CLIENT`; per_txn counts
# the session threads only (one file per thread).
set -eu
bin=$1; data=$2; port=$3; c=$4; t=$5
out=$(mktemp -d)/callgrind.out
valgrind --tool=callgrind --callgrind-out-file="$out" --instr-atstart=no --separate-threads=yes \
    "$bin/primary" -D "$data" -p "$port" -c unix_socket_directories=/tmp \
    > "$out.log" 2>&1 &
vp=$!
for _ in $(seq 1 120); do pg_isready -h /tmp -p "$port" -q && break; sleep 1; done
callgrind_control -i on "$vp" > /dev/null
pgbench -h /tmp -p "$port" -U postgres -S -M prepared -c "$c" -j 1 -t 50 postgres > /dev/null 2>&1
callgrind_control -z "$vp" > /dev/null
pgbench -h /tmp -p "$port" -U postgres -S -M prepared -c "$c" -j 1 -t "$t" postgres > /dev/null
callgrind_control -d "$vp" > /dev/null
kill -INT "$vp"; wait "$vp" || true
# One file per thread: the session threads' (those that ran a session
# loop) are the statements' cost; the others (WAL writer, checkpointer,
# the balancer's ticks) do time-driven work that grows with however long
# the run took under valgrind, so they are reported apart.
sessions=0; others=0
for f in "$out".1-*; do
    n_f=$(awk '/^summary:/ {print $2}' "$f")
    if grep -q SessionLoop "$f"; then sessions=$((sessions + n_f)); else others=$((others + n_f)); fi
done
n=$((c * t))
echo "clients=$c txns=$n session_threads=$sessions per_txn=$((sessions / n)) other_threads_per_txn=$((others / n)) files=$out.1-*"
