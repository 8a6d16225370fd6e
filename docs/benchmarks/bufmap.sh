#!/bin/bash
# bufmap.sh — select-only with a data set larger than shared_buffers:
# hotpair OLD build against NEW build against PostgreSQL 15, interleaved.
# Every query of pgbench -S at scale 100 (~1.5 GB) with a 128 MB pool is a
# buffer miss about 90 % of the time, so this measures the buffer manager's
# miss path (victim search, mapping-table update) more than anything else.
#
#   docs/benchmarks/bufmap.sh OLD_DIR NEW_DIR [ROUNDS]
#
# OLD_DIR / NEW_DIR hold release `primary` binaries. One hotpair data
# directory serves both builds (same on-disk format; loaded once, by OLD),
# each build started on it in turn with a cold pool and warmed by an
# untimed WARMUP-second run before its timed points. PostgreSQL 15
# (PGBIN, ports 5501) runs with the same shared_buffers and fsync.
# Per round: OLD (8, 32 clients), NEW (8, 32), PG (8, 32), the order of the
# three rotating per round. Each point: pgbench -S -M prepared -j 2
# -T DURATION; server CPU per transaction from /proc/PID/stat (utime +
# stime of the server process; for PostgreSQL the postmaster's own, its
# live children's and its reaped children's) around the point.
#
# Environment: DURATION (default 20), WARMUP (default 5), CLIENTS (default
# "8 32"), SB (shared_buffers, default 128MB), FSYNC (default off, both
# systems: the load is faster and select-only does not fsync), SCALE
# (default 100), WORK (default /work/bufio-bench/data), PGBIN
# (default /usr/lib/postgresql/15/bin), HPORT (hotpair port, default 5611).
# LOAD_ONLY=1: load both data sets and stop.
# Output: WORK/points.tsv (system, round, clients, tps, cpu_us_per_tx) and
# a summary of medians on stdout.
set -u
OLD=$1 NEW=$2 ROUNDS=${3:-3}
DURATION=${DURATION:-20} WARMUP=${WARMUP:-5} CLIENTS=${CLIENTS:-"8 32"}
SB=${SB:-128MB} FSYNC=${FSYNC:-off} SCALE=${SCALE:-100}
WORK=${WORK:-/work/bufio-bench/data} PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
HPORT=${HPORT:-5611} PPORT=5501
mkdir -p "$WORK"
HDIR=$WORK/hotpair PDIR=$WORK/pg
TSV=$WORK/points.tsv
HZ=$(getconf CLK_TCK)

cpu_ticks() { # sum of utime+stime of the pids given
    local t=0 p
    for p in "$@"; do
        [ -r /proc/$p/stat ] || continue
        t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat)))
    done
    echo $t
}
pg_pids() { pgrep -P "$(head -1 $PDIR/postmaster.pid)"; }
# PostgreSQL: the postmaster's own and reaped children's time (cutime,
# cstime: the pgbench backends once they exit) plus its live children's.
pg_ticks() {
    local pm=$(head -1 $PDIR/postmaster.pid)
    echo $(( $(awk '{print $14 + $15 + $16 + $17}' /proc/$pm/stat) + $(cpu_ticks $(pg_pids)) ))
}

HPID=
start_hotpair() { # $1 = binary dir
    "$1/primary" -D "$HDIR" -p $HPORT -c shared_buffers=$SB -c fsync=$FSYNC \
        -c unix_socket_directories=$WORK >"$WORK/hotpair-$(basename $1).log" 2>&1 &
    HPID=$!
    for _ in $(seq 600); do
        pg_isready -q -h 127.0.0.1 -p $HPORT && return 0
        sleep 0.1
    done
    echo "hotpair did not start"; tail "$WORK/hotpair-$(basename $1).log"; exit 1
}
stop_hotpair() { kill -INT $HPID; wait $HPID 2>/dev/null; HPID=; }

# PostgreSQL refuses to run as root: then as the `postgres` OS user, its
# socket and log in a directory of its own.
AS=()
[ "$(id -u)" = 0 ] && AS=(runuser -u postgres --)
PSOCK=$WORK/pgsock
start_pg() {
    "${AS[@]}" "$PGBIN/pg_ctl" -D "$PDIR" -l "$PSOCK/pg.log" -w -o "-p $PPORT -c shared_buffers=$SB -c fsync=$FSYNC -c unix_socket_directories=$PSOCK -c max_connections=100" start >/dev/null
}
stop_pg() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$PDIR" -m fast -w stop >/dev/null; }

point() { # system port clients round pids...
    local sys=$1 port=$2 c=$3 r=$4; shift 4
    local pids="$*" before after out tps tx
    ticks() { if [ "$sys" = pg15 ]; then pg_ticks; else cpu_ticks $pids; fi; }
    before=$(ticks)
    out=$(pgbench -h 127.0.0.1 -p $port -U postgres -S -M prepared -c $c -j 2 -T $DURATION postgres 2>&1)
    if [ "$sys" = pg15 ]; then # let the postmaster reap the backends
        for _ in $(seq 50); do [ "$(pg_pids | wc -l)" -le 8 ] && break; sleep 0.05; done
    fi
    after=$(ticks)
    tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    tx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    if [ -z "$tps" ] || [ -z "$tx" ] || [ "$tx" = 0 ]; then echo "pgbench failed: $out"; return; fi
    local us=$(( (after - before) * 1000000 / HZ / tx ))
    printf '%s\t%s\t%s\t%s\t%s\n' "$sys" "$r" "$c" "$tps" "$us" | tee -a "$TSV"
}
warm() { pgbench -h 127.0.0.1 -p $1 -U postgres -S -M prepared -c 8 -j 2 -T $WARMUP postgres >/dev/null 2>&1; }

# ---- load (once)
if [ ! -e "$HDIR/.loaded" ]; then
    rm -rf "$HDIR"; mkdir -p "$HDIR"
    printf "listen_addresses = '127.0.0.1'\nmax_wal_senders = 0\n" >"$HDIR/hotpair.conf"
    start_hotpair "$OLD"
    pgbench -h 127.0.0.1 -p $HPORT -U postgres -i -q -s $SCALE postgres || exit 1
    stop_hotpair
    touch "$HDIR/.loaded"
fi
if [ ! -e "$PDIR/.loaded" ]; then
    rm -rf "$PDIR" "$PSOCK"
    mkdir -p "$PDIR" "$PSOCK"
    [ ${#AS[@]} -gt 0 ] && chown postgres "$PDIR" "$PSOCK" && chmod 700 "$PDIR"
    "${AS[@]}" "$PGBIN/initdb" -D "$PDIR" -U postgres -A trust >/dev/null || exit 1
    start_pg
    pgbench -h 127.0.0.1 -p $PPORT -U postgres -i -q -s $SCALE postgres || exit 1
    psql -h 127.0.0.1 -p $PPORT -U postgres -qc 'VACUUM ANALYZE' postgres
    stop_pg
    touch "$PDIR/.loaded"
fi
[ -n "${LOAD_ONLY:-}" ] && exit 0

: >"$TSV"
run_old() { start_hotpair "$OLD"; warm $HPORT; for c in $CLIENTS; do point old $HPORT $c $1 $HPID; done; stop_hotpair; }
run_new() { start_hotpair "$NEW"; warm $HPORT; for c in $CLIENTS; do point new $HPORT $c $1 $HPID; done; stop_hotpair; }
run_pg() { start_pg; warm $PPORT; for c in $CLIENTS; do point pg15 $PPORT $c $1; done; stop_pg; }
for r in $(seq $ROUNDS); do
    case $((r % 3)) in
        1) run_old $r; run_new $r; run_pg $r ;;
        2) run_new $r; run_pg $r; run_old $r ;;
        0) run_pg $r; run_old $r; run_new $r ;;
    esac
done
echo
echo "medians (tps, server CPU µs/tx):"
for sys in old new pg15; do
    for c in $CLIENTS; do
        t=$(awk -v s=$sys -v c=$c '$1==s && $3==c {print $4}' "$TSV" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        u=$(awk -v s=$sys -v c=$c '$1==s && $3==c {print $5}' "$TSV" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        echo "$sys clients=$c tps=$t cpu_us_per_tx=$u"
    done
done
