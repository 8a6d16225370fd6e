#!/bin/sh
# Regenerates expected.out from a real PostgreSQL 15: runs setup.sql in a
# fresh database, then each line of queries.sql alone, and records its rows
# (psql unaligned, '|' between columns, NULL as NULL) or its SQLSTATE.
#
# Usage: PGHOST=/tmp PGPORT=55432 PGUSER=postgres sh expected.sh
set -eu
cd "$(dirname "$0")"
db=hotpair_query_engine
dropdb --if-exists "$db" 2>/dev/null
createdb "$db"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f setup.sql >/dev/null
: > expected.out
while IFS= read -r q; do
    [ -z "$q" ] && continue
    printf -- '-- %s\n' "$q" >> expected.out
    if out=$(psql -X -q -At -F '|' -P null=NULL -v VERBOSITY=sqlstate -d "$db" -c "$q" 2>&1); then
        [ -n "$out" ] && printf '%s\n' "$out" >> expected.out
    else
        printf '%s\n' "$out" | sed -n 's/^ERROR: *\([0-9A-Z]\{5\}\).*/ERROR \1/p' >> expected.out
    fi
done < queries.sql
dropdb "$db"
