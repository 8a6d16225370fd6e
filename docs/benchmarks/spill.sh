#!/bin/bash
# work_mem spilling beside PostgreSQL 15 (docs/benchmarks.md, "Sorts, hash
# joins and aggregations past work_mem").
#
#   docs/benchmarks/spill.sh PRIMARY_BIN [ROUNDS]
#
# Starts a hotpair primary from PRIMARY_BIN (a release build) in a temp
# directory with shared_buffers = 128MB, PostgreSQL's default; PostgreSQL 15
# is the Debian cluster `15 main` at its defaults (started if needed, data in
# database `spillbench`). Loads the same two tables into both, then runs each
# query at work_mem 64kB and 4MB, ROUNDS interleaved rounds, printing one
# line per run: system work_mem query milliseconds (psql's \timing).
set -eu
BIN=${1:?primary binary}
ROUNDS=${2:-3}
PORT=25499
DIR=$(mktemp -d /tmp/spillbench.XXXX)
trap 'kill $(cat $DIR/pid) 2>/dev/null; rm -rf $DIR' EXIT
"$BIN" -D "$DIR/data" -p $PORT -c shared_buffers=128MB > "$DIR/log" 2>&1 &
echo $! > "$DIR/pid"
pg_ctlcluster 15 main start 2>/dev/null || true
for _ in $(seq 100); do psql -X -h 127.0.0.1 -p $PORT -U postgres -c 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
hp() { psql -X -q -h 127.0.0.1 -p $PORT -U postgres "$@"; }
pg() { su postgres -c "psql -X -q -p 5432 spillbench $(printf '%q ' "$@")"; }
su postgres -c "psql -X -q -p 5432 -c 'DROP DATABASE IF EXISTS spillbench' -c 'CREATE DATABASE spillbench'"
SETUP="CREATE TABLE wide (id int, g int, pad text);
INSERT INTO wide SELECT i, (i % 10007) * 7919 % 10007, repeat(chr(97 + i % 26), 200) FROM generate_series(1, 300000) i;
CREATE TABLE other (id int, v text);
INSERT INTO other SELECT i, repeat('v', 100 + i % 50) FROM generate_series(1, 300000, 3) i;"
hp -c "$SETUP" -c "VACUUM ANALYZE wide" -c "VACUUM ANALYZE other" >/dev/null
pg -c "$SETUP" -c "VACUUM ANALYZE wide" -c "VACUUM ANALYZE other" >/dev/null
QUERIES=(
  "sort|SELECT count(*), md5(string_agg(id::text, ',')) FROM (SELECT id, pad FROM wide ORDER BY g, pad DESC, id) s"
  "hashjoin|SELECT count(*), sum(w.id), sum(length(o.v)) FROM wide w JOIN other o ON o.id = w.id"
  "hashagg|SELECT count(*), sum(n), sum(m) FROM (SELECT id % 50000 AS k, count(*) AS n, max(length(pad)) AS m FROM wide GROUP BY 1) a"
  "distinct|SELECT count(*) FROM (SELECT DISTINCT pad, g FROM wide) d"
)
ms() { grep -o 'Time: [0-9.]*' | tail -1 | cut -d' ' -f2; }
for r in $(seq "$ROUNDS"); do
  for wm in 64kB 4MB; do
    for q in "${QUERIES[@]}"; do
      name=${q%%|*}; sql=${q#*|}
      a=$(hp -c "SET work_mem = '$wm'" -c '\timing on' -c "$sql" | ms)
      b=$(pg -c "SET work_mem = '$wm'" -c '\timing on' -c "$sql" | ms)
      echo "round $r hotpair $wm $name $a"
      echo "round $r postgres $wm $name $b"
    done
  done
done
