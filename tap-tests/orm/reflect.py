"""Reflects tap-tests/orm/schema.sql the way ORMs and tools do and prints
it as JSON: SQLAlchemy's PostgreSQL inspector (pg_catalog queries with
bound parameters, sent by psycopg 3), then the information_schema queries
generic tools send through psycopg. Usage: reflect.py CONNINFO."""

import json
import sys

import psycopg
import sqlalchemy as sa


def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in sorted(v.items())}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, sa.types.TypeEngine):
        return repr(v)
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    return repr(v)


def by_name(items):
    return norm(sorted(items, key=lambda i: str(i.get("name"))))


def sqlalchemy_part(conninfo):
    eng = sa.create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(conninfo))
    insp = sa.inspect(eng)
    out = {"schemas": sorted(s for s in insp.get_schema_names() if s.startswith(("orm", "public")))}
    for schema in ("public", "orm_s"):
        s = out.setdefault(schema, {})
        s["tables"] = sorted(t for t in insp.get_table_names(schema=schema) if t.startswith(("orm", "other")))
        s["views"] = sorted(v for v in insp.get_view_names(schema=schema) if v.startswith("orm"))
        s["sequences"] = sorted(q for q in insp.get_sequence_names(schema=schema) if q.startswith("orm"))
        for t in s["tables"]:
            s[t] = {
                "columns": norm(insp.get_columns(t, schema=schema)),
                "pk": norm(insp.get_pk_constraint(t, schema=schema)),
                "fks": by_name(insp.get_foreign_keys(t, schema=schema)),
                "indexes": by_name(insp.get_indexes(t, schema=schema)),
                "unique": by_name(insp.get_unique_constraints(t, schema=schema)),
                "checks": by_name(insp.get_check_constraints(t, schema=schema)),
                "comment": norm(insp.get_table_comment(t, schema=schema)),
            }
        for v in s["views"]:
            s[v] = {
                "definition": insp.get_view_definition(v, schema=schema),
                "columns": norm(insp.get_columns(v, schema=schema)),
            }
    out["enums"] = norm([e for e in insp.get_enums(schema="*") if e["name"].startswith("orm")])
    # A table built from the reflection, as an application would use it.
    md = sa.MetaData()
    orders = sa.Table("orm_orders", md, autoload_with=eng)
    out["autoload"] = {
        "columns": [c.name for c in orders.columns],
        "primary_key": [c.name for c in orders.primary_key.columns],
        "foreign_keys": sorted(str(f.target_fullname) for f in orders.foreign_keys),
    }
    eng.dispose()
    return out


INFORMATION_SCHEMA = [
    """SELECT table_schema, table_name, table_type, is_insertable_into
       FROM information_schema.tables
       WHERE table_name LIKE 'orm%%' OR table_schema = 'orm_s' ORDER BY 1, 2""",
    """SELECT table_schema, table_name, column_name, ordinal_position, column_default,
              is_nullable, data_type, character_maximum_length, numeric_precision,
              numeric_scale, datetime_precision, udt_name, is_identity, identity_generation
       FROM information_schema.columns
       WHERE table_name LIKE 'orm%%' OR table_schema = 'orm_s' ORDER BY 1, 2, 4""",
    """SELECT tc.table_schema, tc.table_name, tc.constraint_name, tc.constraint_type,
              tc.is_deferrable, tc.initially_deferred, kcu.column_name, kcu.ordinal_position,
              kcu.position_in_unique_constraint
       FROM information_schema.table_constraints tc
       LEFT JOIN information_schema.key_column_usage kcu
         ON kcu.constraint_schema = tc.constraint_schema AND kcu.constraint_name = tc.constraint_name
       WHERE (tc.table_name LIKE 'orm%%' OR tc.table_schema = 'orm_s') AND tc.constraint_type <> 'CHECK'
       ORDER BY 1, 2, 3, 8""",
    """SELECT rc.constraint_name, rc.unique_constraint_name, rc.match_option, rc.update_rule,
              rc.delete_rule, ccu.table_name AS referenced_table, ccu.column_name AS referenced_column
       FROM information_schema.referential_constraints rc
       JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = rc.constraint_name
       WHERE rc.constraint_name LIKE 'orm%%' OR rc.constraint_schema = 'orm_s' ORDER BY 1, 7""",
    """SELECT cc.constraint_name, cc.check_clause
       FROM information_schema.check_constraints cc
       JOIN information_schema.table_constraints tc USING (constraint_schema, constraint_name)
       WHERE (tc.table_name LIKE 'orm%%' OR tc.table_schema = 'orm_s') AND cc.check_clause NOT LIKE '%%IS NOT NULL'
       ORDER BY 1""",
    """SELECT table_name, view_definition, is_updatable
       FROM information_schema.views WHERE table_name LIKE 'orm%%' ORDER BY 1""",
    """SELECT sequence_name, data_type, start_value, minimum_value, maximum_value, increment
       FROM information_schema.sequences WHERE sequence_name LIKE 'orm%%' ORDER BY 1""",
    """SELECT schema_name FROM information_schema.schemata
       WHERE schema_name LIKE 'orm%%' OR schema_name = 'public' ORDER BY 1""",
]


def information_schema_part(conninfo):
    out = []
    with psycopg.connect(conninfo) as conn:
        for sql in INFORMATION_SCHEMA:
            cur = conn.execute(sql)
            out.append({
                "columns": [d.name for d in cur.description],
                "rows": [[None if v is None else str(v) for v in row] for row in cur.fetchall()],
            })
    return out


if __name__ == "__main__":
    conninfo = sys.argv[1]
    print(json.dumps({
        "sqlalchemy": sqlalchemy_part(conninfo),
        "information_schema": information_schema_part(conninfo),
    }, indent=1, sort_keys=True))
