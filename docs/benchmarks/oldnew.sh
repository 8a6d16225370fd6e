#!/bin/bash
# oldnew.sh — hotpair OLD build against NEW build, interleaved, for a
# no-behaviour-change refactor ("behaviour and speed must not change").
#
#   docs/benchmarks/oldnew.sh OLD_DIR NEW_DIR [ROUNDS]
#
# OLD_DIR and NEW_DIR each hold release `primary` and `standby` (OLD_DIR also
# `bench`). Example:
#
#   docs/benchmarks/oldnew.sh /work/bench-old target/release 3
#
# One driver for both sides: OLD_DIR/bench (override with BENCH=path) with
# HOTPAIR_BIN_DIR pointed at OLD_DIR, then at NEW_DIR. hotpair only
# (`--skip-postgres`), primaries only (`--no-standby`, unless STANDBY=1),
# `--no-write` (nothing lands in docs/benchmarks). Per round and side:
#
#   1. bench select tpcb --clients 2,64 --duration $DURATION --rounds 1
#      scale 10: `pgbench -i -s 10` (timed, it is a COPY too), an untimed
#      3 s warm-up, select-only -M prepared at 2 and 64 clients, then the
#      tpcb workload's points (tpcb-like -M prepared at 1, 8, 32 clients;
#      two-phase commit at 8 and 32; 90 % select + 10 % tpcb at 64).
#   2. bench copy: concurrent COPY of 16 files x 100,000 rows (about 145 MB
#      of input per run) at 1, 2, 4 and 8 clients, relation_extension = bulk
#      and = single, 3 repetitions, then a timed `pgbench -i -s 20`.
#      COPY=quick: `bench copy --quick` instead (8 files x 25,000 rows, one
#      repetition, `pgbench -i -s 2`): ~4 min less, but each run is only
#      ~0.1 s of server CPU, so its figures are coarse.
#
# Interleaving: within a round, part 1 runs on both sides, then part 2 on
# both; the side that goes first alternates per round (ORDER=abba, the
# default: old new | new old | old new …) so neither build always runs
# after the other; ORDER=alternate keeps old first in every round.
#
# Where the figures come from:
#   * every pgbench point: this script stands in for pgbench
#     (HOTPAIR_BENCH_PGBENCH=this script, OLDNEW_WRAP set) and runs the real
#     pgbench unchanged, reading the listening server's utime + stime
#     (/proc/PID/stat, all threads, 10 ms ticks) just before and just after
#     it: server CPU µs per transaction = CPU delta / transactions processed
#     (pgbench's "number of transactions actually processed"); tps is
#     pgbench's own (without initial connection time). The same bracket as
#     bench's own `--rounds` figure (/proc around the point), but for every
#     point, tpcb included. Warm-up runs (the first -S run on each port) are
#     logged, not counted.
#   * COPY: bench's own per-run stderr line ("server cpu" = utime + stime of
#     the server during the timed COPYs, and wall seconds), summed over all
#     runs of a relation_extension mode (4 client counts x 3 repetitions),
#     recorded only when every run of the mode succeeded. `pgbench -i`
#     (a client-side COPY of 100,000 x scale rows plus the primary key) is
#     timed by the pgbench stand-in (wall and server CPU seconds).
#
# Environment: DURATION (s per pgbench point, default 5), CLIENTS (select
# client counts, default 2,64), COPY (full|quick), STANDBY=1 (start standbys
# too: select also runs on the standby, tpcb/COPY then stream to it), ORDER
# (abba|alternate), OUT (log directory, default /tmp/oldnew-DATE), BENCH
# (driver binary), PGBENCH (the real pgbench).
#
# Smoke run (about 1 min; COPY=quick):
#   OUT=/tmp/oldnew-smoke DURATION=1 COPY=quick docs/benchmarks/oldnew.sh /work/bench-old /work/bench-old 1
#
# Output in OUT: bench-ROUND-SIDE-PART.{out,err} (bench's full output),
# points.log (one line per pgbench run), samples.tsv (side, round,
# workload, metric, value), summary.md (the table, also printed).
#
# Duration with the defaults (3 rounds, 5 s points, COPY=full): about 10
# minutes on 2 quiet cores (per side and round: part 1 ~50 s — measured 20 s
# with 1 s points —, part 2 ~45-60 s, estimated); COPY=quick ~6 min. run.log
# shows each part's seconds as it goes.
set -u

# ---------------------------------------------------------------- pgbench stand-in
if [ -n "${OLDNEW_WRAP:-}" ]; then
    real=$OLDNEW_REAL_PGBENCH
    port='' clients=1 dur='' scale='' init=0 sel=0 files='' builtins='' prev=''
    for a in "$@"; do
        case $prev in
            -p) port=$a ;;
            -c) clients=$a ;;
            -T) dur=$a ;;
            -s) scale=$a ;;
            -f) files="$files ${a##*/}" ;;
            -b) builtins="$builtins $a" ;;
        esac
        case $a in
            -i) init=1 ;;
            -S) sel=1 ;;
        esac
        prev=$a
    done
    # --version and anything without a server: pass straight through.
    [ -z "$port" ] && exec "$real" "$@"

    listener_pid() { # PID listening on TCP port $1
        local hex inode p
        p=$(ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        hex=$(printf '%04X' "$1")
        inode=$(awk -v h=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == h { print $10; exit }' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null)
        [ -n "$inode" ] || return 1
        for p in /proc/[0-9]*; do
            if ls -l "$p/fd" 2>/dev/null | grep -q "socket:\[$inode\]"; then
                echo "${p#/proc/}"
                return 0
            fi
        done
        return 1
    }
    cpu_ticks() { # utime + stime of process $1, clock ticks
        local s f
        s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
        read -ra f <<<"${s##*) }"
        echo $((f[11] + f[12]))
    }

    pid=$(listener_pid "$port")
    node=$(cat "/proc/$pid/comm" 2>/dev/null || echo '?')
    if [ "$init" = 1 ]; then
        kind="pgbench -i -s ${scale:-1}"
    elif [ "$sel" = 1 ]; then
        warm="$OLDNEW_DIR/.warm-$OLDNEW_SIDE-$OLDNEW_ROUND-$OLDNEW_PART"
        if ! grep -qx "$port" "$warm" 2>/dev/null; then
            echo "$port" >>"$warm"
            kind="warm-up"
        else
            kind="select -S c=$clients $node"
        fi
    elif [ -n "$files" ]; then
        case $files in
            *2pc.sql*) kind="2PC c=$clients" ;;
            *) kind="script${files} c=$clients" ;;
        esac
    elif [ "$builtins" = " tpcb-like" ]; then
        kind="tpcb-like c=$clients"
    elif [ -n "$builtins" ]; then
        kind="mix${builtins// /,} c=$clients"
        kind=${kind/mix,select-only@9,tpcb-like@1/90% select + 10% tpcb}
    else
        kind="other c=$clients"
    fi

    tmp=$(mktemp -d)
    c0=$(cpu_ticks "$pid")
    t0=$(date +%s.%N)
    "$real" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    t1=$(date +%s.%N)
    c1=$(cpu_ticks "$pid")
    cat "$tmp/out"
    cat "$tmp/err" >&2
    processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$tmp/out" | head -1)
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$tmp/out" | head -1)
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial.*/\1/p' "$tmp/out" | head -1)
    [ -n "$tps" ] || tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$tmp/out" | head -1)
    rm -rf "$tmp"
    awk -v side="$OLDNEW_SIDE" -v round="$OLDNEW_ROUND" -v kind="$kind" -v rc="$rc" \
        -v c0="${c0:-}" -v c1="${c1:-}" -v t0="$t0" -v t1="$t1" -v n="${processed:-}" \
        -v tps="${tps:-}" -v failed="${failed:-0}" -v pid="${pid:-?}" -v port="$port" \
        -v dur="${dur:--}" -v samples="$OLDNEW_DIR/samples.tsv" '
    BEGIN {
        wall = t1 - t0
        cpu = (c0 != "" && c1 != "") ? (c1 - c0) / 100 : -1
        line = sprintf("%s round %s %-32s rc=%s pid=%s port=%s -T %s wall %.2f s server_cpu %s s",
            side, round, kind, rc, pid, port, dur, wall, cpu < 0 ? "?" : sprintf("%.2f", cpu))
        if (kind ~ /^pgbench -i/) {
            if (rc == 0) {
                print side "\t" round "\t" kind "\twall s\t" wall >> samples
                if (cpu >= 0) print side "\t" round "\t" kind "\tserver CPU s\t" cpu >> samples
            }
        } else if (n != "" && n > 0) {
            line = line sprintf(" tx %d failed %d tps %.1f", n, failed, tps)
            if (cpu >= 0) line = line sprintf(" cpu_us_per_tx %.2f", cpu * 1e6 / n)
            if (kind != "warm-up" && rc == 0) {
                if (cpu >= 0) print side "\t" round "\t" kind "\tserver CPU us/tx\t" cpu * 1e6 / n >> samples
                print side "\t" round "\t" kind "\ttps\t" tps >> samples
            }
        } else {
            line = line " NO RESULT"
        }
        print line
    }' >>"$OLDNEW_DIR/points.log"
    exit $rc
fi

# ---------------------------------------------------------------- driver
usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
[ $# -ge 2 ] || usage
OLD=$(cd "$1" && pwd) || exit 2
NEW=$(cd "$2" && pwd) || exit 2
ROUNDS=${3:-3}
DURATION=${DURATION:-5}
CLIENTS=${CLIENTS:-2,64}
ORDER=${ORDER:-abba}
COPY=${COPY:-full}
case $COPY in
    full) COPY_REPS=3 COPY_ROWS="16 files x 100k rows" ;;
    quick) COPY_REPS=1 COPY_ROWS="8 files x 25k rows" ;;
    *) echo "oldnew: COPY must be full or quick" >&2; exit 2 ;;
esac
BENCH=${BENCH:-$OLD/bench}
OUT=${OUT:-/tmp/oldnew-$(date +%Y%m%d-%H%M%S)}
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
for d in "$OLD" "$NEW"; do
    for b in primary standby; do
        [ -x "$d/$b" ] || { echo "oldnew: $d/$b missing" >&2; exit 2; }
    done
done
[ -x "$BENCH" ] || { echo "oldnew: bench driver $BENCH missing" >&2; exit 2; }
REAL_PGBENCH=${PGBENCH:-$(command -v pgbench || echo /usr/lib/postgresql/15/bin/pgbench)}
"$REAL_PGBENCH" --version >/dev/null 2>&1 || { echo "oldnew: no pgbench ($REAL_PGBENCH)" >&2; exit 2; }
mkdir -p "$OUT" || exit 2
: >"$OUT/samples.tsv"
: >"$OUT/points.log"
STANDBY_ARG=--no-standby
[ "${STANDBY:-0}" = 1 ] && STANDBY_ARG=''

log() { echo "$*" | tee -a "$OUT/run.log"; }
trap 'echo "oldnew: interrupted; logs in $OUT" >&2; exit 130' INT TERM

START=$(date +%s)
log "oldnew: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
log "  old: $OLD   primary $(sha256sum "$OLD/primary" | cut -c1-12), standby $(sha256sum "$OLD/standby" | cut -c1-12), $(date -r "$OLD/primary" '+%F %T')"
log "  new: $NEW   primary $(sha256sum "$NEW/primary" | cut -c1-12), standby $(sha256sum "$NEW/standby" | cut -c1-12), $(date -r "$NEW/primary" '+%F %T')"
log "  driver: $BENCH ($(sha256sum "$BENCH" | cut -c1-12)); $("$REAL_PGBENCH" --version)"
log "  rounds $ROUNDS, ${DURATION} s per point, select clients $CLIENTS, COPY $COPY ($COPY_ROWS per run), order $ORDER, ${STANDBY_ARG:-with standbys}; logs in $OUT"

# run_part SIDE ROUND PART: one bench invocation against SIDE's binaries.
run_part() {
    local side=$1 round=$2 part=$3 dir args t0 rc
    if [ "$side" = old ]; then dir=$OLD; else dir=$NEW; fi
    if [ "$part" = main ]; then
        args=(select tpcb --clients "$CLIENTS" --duration "$DURATION" --rounds 1)
    else
        args=(copy)
        [ "$COPY" = quick ] && args+=(--quick)
    fi
    args+=(--skip-postgres --no-write $STANDBY_ARG)
    local base="$OUT/bench-$round-$side-$part"
    t0=$(date +%s)
    (
        cd "$OUT" &&
            HOTPAIR_BIN_DIR=$dir HOTPAIR_BENCH_PGBENCH=$SELF OLDNEW_WRAP=1 \
                OLDNEW_REAL_PGBENCH=$REAL_PGBENCH OLDNEW_DIR=$OUT OLDNEW_SIDE=$side \
                OLDNEW_ROUND=$round OLDNEW_PART=$part \
                "$BENCH" "${args[@]}" >"$base.out" 2>"$base.err"
    )
    rc=$?
    if [ "$part" = copy ]; then
        # bench: copy rep 1 hotpair bulk 4 clients: 0.512 s, server cpu 0.800 s, ...
        sed -n 's/^bench: copy rep [0-9]* hotpair \([a-z]*\) \([0-9]*\) clients: \([0-9.]*\) s, server cpu \([0-9.]*\) s.*/\1 \2 \3 \4/p' \
            "$base.err" | awk -v side="$side" -v round="$round" -v samples="$OUT/samples.tsv" \
                -v want=$((4 * COPY_REPS)) -v reps="$COPY_REPS" '
            { w[$1] += $3; c[$1] += $4; n[$1]++
              printf "%s round %s copy %-6s c=%s wall %.3f s server_cpu %.3f s\n", side, round, $1, $2, $3, $4 }
            END { for (m in n) {
                if (n[m] != want) { printf "%s round %s copy %s: %d runs of %d, not counted\n", side, round, m, n[m], want; continue }
                k = "COPY " m ", " want " runs summed (c=1,2,4,8 x" reps ")"
                print side "\t" round "\t" k "\tserver CPU s\t" c[m] >> samples
                print side "\t" round "\t" k "\twall s\t" w[m] >> samples } }' >>"$OUT/points.log"
    fi
    log "  round $round $side $part: $(($(date +%s) - t0)) s, bench exit $rc"
    if grep -qiE 'failed|crash|gone after|panic' "$base.out" "$base.err"; then
        log "    note: bench reported failures; see $base.out / $base.err"
    fi
}

for round in $(seq 1 "$ROUNDS"); do
    if [ "$ORDER" = abba ] && [ $((round % 2)) = 0 ]; then sides="new old"; else sides="old new"; fi
    for part in main copy; do
        for side in $sides; do
            run_part "$side" "$round" "$part"
        done
    done
    el=$(($(date +%s) - START))
    log "  after round $round: $el s elapsed (about $(((el * ROUNDS / round + 30) / 60)) min for all $ROUNDS), load average $(cut -d' ' -f1-3 /proc/loadavg)"
done

# ---------------------------------------------------------------- summary
{
    echo
    echo "## old vs new: $ROUNDS interleaved rounds, ${DURATION} s points, COPY $COPY, hotpair primary${STANDBY_ARG:+ only}${STANDBY_ARG:- and standby} ($(date -u '+%Y-%m-%d'))"
    echo
    echo "old = $OLD, new = $NEW; median [min-max] over rounds; spread = (max-min)/median."
    echo "'in old range' = the new median lies within the old runs' min-max (the old-vs-old noise)."
    echo
    awk -F'\t' '
    function med(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function fmt(v) { return v >= 1000 ? sprintf("%.0f", v) : v >= 100 ? sprintf("%.1f", v) : sprintf("%.2f", v) }
    {
        k = $3 SUBSEP $4
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        cnt[k, $1]++; v[k, $1, cnt[k, $1]] = $5
    }
    END {
        print "| workload | metric | old median [min-max] (spread) | new median [min-max] (spread) | new/old | in old range |"
        print "|---|---|---|---|---:|---|"
        for (i = 1; i <= nk; i++) {
            k = order[i]; split(k, kk, SUBSEP)
            row = "| " kk[1] " | " kk[2]
            ok = 1
            for (s = 1; s <= 2; s++) {
                side = s == 1 ? "old" : "new"; n = cnt[k, side] + 0
                if (n == 0) { row = row " | -"; ok = 0; continue }
                delete a; lo = hi = v[k, side, 1]
                for (j = 1; j <= n; j++) { a[j] = v[k, side, j] + 0; if (a[j] < lo) lo = a[j]; if (a[j] > hi) hi = a[j] }
                m[side] = med(a, n); mn[side] = lo; mx[side] = hi
                row = row sprintf(" | %s [%s-%s] (%.1f%%, n=%d)", fmt(m[side]), fmt(lo), fmt(hi),
                    m[side] > 0 ? 100 * (hi - lo) / m[side] : 0, n)
            }
            if (ok && m["old"] > 0) {
                inr = (m["new"] >= mn["old"] && m["new"] <= mx["old"]) ? "yes" : "NO"
                row = row sprintf(" | %.3f | %s |", m["new"] / m["old"], inr)
            } else row = row " | - | - |"
            print row
        }
    }' "$OUT/samples.tsv"
    echo
    echo "whole run: $(( ($(date +%s) - START + 30) / 60 )) min ($(($(date +%s) - START)) s); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/summary.md"
echo "logs: $OUT (run.log, points.log, samples.tsv, summary.md, bench-*.out/err)"
