#!/bin/sh
# Regenerates expected.out from a real PostgreSQL 15: every line of
# queries.sql runs in a fresh database, in order, with hotpair's session
# defaults (TimeZone UTC, DateStyle ISO, MDY, IntervalStyle postgres).
# Each query is followed by its rows (NULL printed as NULL, columns joined
# by '|') or by "ERROR: <message>".
#
# Usage: PGHOST=/tmp PGPORT=55433 PGUSER=postgres ./regen.sh
set -eu
cd "$(dirname "$0")"
db=hotpair_report_functions
dropdb --if-exists "$db"
createdb -T template0 -E UTF8 --locale=C.UTF-8 "$db"
out=expected.out
: > "$out"
while IFS= read -r q; do
    [ -z "$q" ] && continue
    printf -- '-- %s\n' "$q" >> "$out"
    PGOPTIONS="-c timezone=UTC -c datestyle=ISO,MDY -c intervalstyle=postgres" \
        psql -X -q -A -t -d "$db" -v VERBOSITY=terse \
        -c '\pset null NULL' -c "$q" 2>&1 \
        | sed -e 's/^psql:[^E]*ERROR:  /ERROR: /' -e 's/^ERROR:  /ERROR: /' -e 's/ at character [0-9]*$//' >> "$out"
done < queries.sql
dropdb "$db"
