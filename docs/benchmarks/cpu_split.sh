#!/bin/bash
# User and system CPU per select-only transaction of one server, from
# /proc (docs/benchmarks.md, "Point maps and huge pages"): the server's
# process and its children (PostgreSQL's backends, counted through the
# postmaster's reaped-children times once they exit).
#
#   cpu_split.sh PORT SERVER_PID CLIENTS SECONDS
#
# Runs `pgbench -S -M prepared -c CLIENTS -j CLIENTS -T SECONDS` over TCP
# to 127.0.0.1:PORT (user postgres, database postgres, pgbench tables in
# place) and prints tps and µs per transaction (user, system, total).
set -eu
port=$1; root=$2; c=$3; t=$4
tot() {
    local u=0 s=0 p uu ss cu cs
    for p in $root $(pgrep -P "$root"); do
        read -r uu ss cu cs < <(awk '{print $14, $15, $16, $17}' "/proc/$p/stat" 2>/dev/null) || continue
        u=$((u + uu)); s=$((s + ss))
        if [ "$p" = "$root" ]; then u=$((u + cu)); s=$((s + cs)); fi
    done
    echo "$u $s"
}
sleep 1 # backends of an earlier run reaped first
read -r u0 s0 < <(tot)
n=$(pgbench -h 127.0.0.1 -p "$port" -U postgres -S -M prepared -c "$c" -j "$c" -T "$t" postgres 2>&1 |
    awk '/actually processed/ {print $NF}')
sleep 0.5
read -r u1 s1 < <(tot)
hz=$(getconf CLK_TCK)
awk -v n="$n" -v du=$((u1 - u0)) -v ds=$((s1 - s0)) -v t="$t" -v hz="$hz" 'BEGIN {
    printf "txns=%d tps=%.0f user=%.2f sys=%.2f total=%.2f us/txn\n",
        n, n / t, du * 1e6 / hz / n, ds * 1e6 / hz / n, (du + ds) * 1e6 / hz / n }'
