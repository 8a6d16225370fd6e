#!/bin/bash
# copy_wal.sh — WAL bytes written by one COPY of pgbench_accounts-like rows
# (int, int, int, char(84)), plain and FREEZE, on hotpair builds and on
# PostgreSQL 15.
#
#   docs/benchmarks/copy_wal.sh ROWS BIN_DIR...
#
# Each BIN_DIR holds a release `primary`; PG15=/usr/lib/postgresql/15/bin
# (default) is measured too unless PG15= is empty. Per server: a fresh data
# directory, then for each of "plain" (CREATE TABLE; COPY) and "freeze"
# (BEGIN; CREATE TABLE; COPY … FREEZE; COMMIT) the WAL between
# pg_current_wal_lsn() before and after, read in the same psql session.
# PostgreSQL runs with its defaults (wal_level = replica, full_page_writes
# on); checkpoints during the COPY would add full-page images to either
# side, so max_wal_size is raised where the server has it.
set -euo pipefail
ROWS=${1:?rows}; shift
PG15=${PG15-/usr/lib/postgresql/15/bin}
WORK=$(mktemp -d /tmp/copy_wal.XXXXXX)
DATA=$WORK/accounts.txt
# pgbench -i's rows: aid, bid, abalance 0, empty filler (blank-padded to 84).
awk -v n="$ROWS" 'BEGIN { for (i = 1; i <= n; i++) printf "%d\t%d\t0\t\n", i, int((i - 1) / 100000) + 1 }' > "$DATA"

measure() { # port label
    local port=$1 label=$2
    for kind in plain freeze; do
        local t=acc_$kind copyopt="" pre="" post=""
        if [ $kind = freeze ]; then copyopt=" with (freeze)"; pre="begin;"; post="commit;"; fi
        local out
        out=$(psql -XAtq -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 <<SQL
select pg_current_wal_lsn() as before \gset
$pre
create table $t (aid int not null, bid int, abalance int, filler char(84));
\copy $t from '$DATA'$copyopt
$post
select pg_wal_lsn_diff(pg_current_wal_lsn(), :'before');
select count(*) from $t;
SQL
)
        local bytes count
        bytes=$(echo "$out" | sed -n 1p); count=$(echo "$out" | sed -n 2p)
        printf '%-28s %-6s rows %9s  WAL %12s bytes  %7.1f bytes/row\n' "$label" $kind "$count" "$bytes" \
            "$(echo "$bytes / $count" | bc -l)"
    done
}

port=55432
for bin in "$@"; do
    d=$WORK/hp$port
    "$bin/primary" -D "$d" -p $port -c max_wal_size=4GB > "$d.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do psql -XAtq -h 127.0.0.1 -p $port -U postgres -d postgres -c 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
    measure $port "hotpair $bin"
    kill $pid; wait $pid 2>/dev/null || true
    port=$((port + 1))
done
if [ -n "$PG15" ]; then
    d=$WORK/pg15
    # PostgreSQL refuses to run as root.
    as_pg=()
    if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); chmod 777 "$WORK"; fi
    "${as_pg[@]}" "$PG15/initdb" -D "$d" -U postgres -A trust >/dev/null
    "${as_pg[@]}" "$PG15/pg_ctl" -D "$d" -o "-p $port -k $WORK -c max_wal_size=4GB -c listen_addresses=127.0.0.1" -l "$d.log" -w start >/dev/null
    measure $port "PostgreSQL $("$PG15/postgres" -V | awk '{print $3}')"
    "${as_pg[@]}" "$PG15/pg_ctl" -D "$d" -m fast -w stop >/dev/null
fi
rm -rf "$WORK"
