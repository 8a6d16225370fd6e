#!/bin/bash
# Per-transaction round-trip counts of a server under pgbench select-only
# (docs/benchmarks.md, "Select-only at 2 clients: the round trip").
#
#   roundtrip.sh hotpair PORT CLIENTS    # PID from $HP_PID (the primary's pid)
#   roundtrip.sh pg PORT CLIENTS         # backends of $PG_DATA/postmaster.pid
#
# Runs `pgbench -S -M prepared` for 8 s against 127.0.0.1:PORT (database
# postgres, user postgres, already initialised with pgbench -i), attaches
# `perf stat` to the server and to pgbench for 5 s in the middle, and prints
# every count divided by the server's sendto calls: one per transaction for
# both servers in -M prepared, so no window has to be matched to pgbench's
# progress lines. cpu_us is task-clock (user + sys) per transaction.
set -eu
KIND=$1; PORT=$2; C=$3
OUT=$(mktemp -d)
pgbench -h 127.0.0.1 -p "$PORT" -U postgres -S -M prepared -c "$C" -j "$C" -T 8 postgres > "$OUT/pgbench" 2>&1 &
PB=$!
sleep 2
if [ "$KIND" = pg ]; then
  PIDS=$(pgrep -P "$(head -1 "$PG_DATA/postmaster.pid")" -f "postgres: postgres postgres" | paste -sd,)
else
  PIDS=$HP_PID
fi
EV=task-clock,context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_write
perf stat -x, -e "$EV" -p "$PIDS" -- sleep 5 2> "$OUT/server.csv" &
PS=$!
perf stat -x, -e task-clock,context-switches -p "$PB" -- sleep 5 2> "$OUT/client.csv"
wait $PS
wait $PB
awk -F, -v kind="$KIND" -v c="$C" '
  FNR == NR { if ($3 == "syscalls:sys_enter_sendto") tx = $1; sv[$3] = $1; next }
  { cl[$3] = $1 }
  END {
    printf "%s c=%s", kind, c
    for (k in sv) { n = k; sub(/.*sys_enter_?/, "", n); if (n == "") n = "syscalls"; if (k == "task-clock") n = "cpu_us";
      v = sv[k] / tx; if (k == "task-clock") v *= 1000; printf " %s=%.2f", n, v }
    printf " client_cpu_us=%.2f client_cs=%.2f\n", cl["task-clock"] * 1000 / tx, cl["context-switches"] / tx
  }' "$OUT/server.csv" "$OUT/client.csv"
grep '^tps' "$OUT/pgbench" | head -1
rm -rf "$OUT"
