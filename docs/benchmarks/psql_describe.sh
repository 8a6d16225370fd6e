#!/bin/bash
# psql \d TABLE latency with N tables: hotpair (port $1) vs PostgreSQL (port $2).
N=${N:-1000}; R=${R:-50}
setup() { # port
  psql -X -q -h 127.0.0.1 -p $1 -U postgres postgres -c "select 1" >/dev/null
  for i in $(seq 1 $N); do echo "CREATE TABLE bt_$i (id int PRIMARY KEY, a text NOT NULL, b numeric(10,2) DEFAULT 0, c timestamptz);"; done | psql -X -q -h 127.0.0.1 -p $1 -U postgres postgres
}
run() { # port -> ms per \d
  local s=$(date +%s%N)
  for i in $(seq 1 $R); do psql -X -h 127.0.0.1 -p $1 -U postgres postgres -c "\\d bt_$((i*7 % N + 1))" >/dev/null; done
  local e=$(date +%s%N)
  echo "scale=2; ($e-$s)/1000000/$R" | bc
}
run_conn() { # the cost of connecting and \q alone
  local s=$(date +%s%N)
  for i in $(seq 1 $R); do psql -X -h 127.0.0.1 -p $1 -U postgres postgres -c "select 1" >/dev/null; done
  local e=$(date +%s%N)
  echo "scale=2; ($e-$s)/1000000/$R" | bc
}
[ "$SETUP" = 1 ] && { setup $1; setup $2; }
for round in 1 2 3; do
  echo "round $round: hotpair \\d ${R}x: $(run $1) ms (connect+select1 $(run_conn $1) ms); postgres: $(run $2) ms (connect+select1 $(run_conn $2) ms)"
done
