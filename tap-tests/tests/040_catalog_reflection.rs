//! A driver's reflection: the queries ORMs and drivers send to learn a
//! schema (information_schema columns and keys, pg_catalog tables,
//! attributes, indexes and defaults), sent through tokio-postgres with the
//! extended protocol and binary results, must return on a hotpair primary,
//! on its hot standby and on PostgreSQL 15 the same column names, the same
//! result type OIDs and the same rows.
//!
//! Skipped, with a message, when PostgreSQL 15 is not installed.

use tap_tests::bench::pg;
use tap_tests::{block_on, Node, Session};
use tokio_postgres::types::Type;
use tokio_postgres::Row;

const SCHEMA: &[&str] = &[
    "CREATE TABLE rf_accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0, created timestamptz, code varchar(8) DEFAULT 'x')",
    "CREATE TABLE rf_orders (id bigint PRIMARY KEY, account_id int NOT NULL, amount int, note varchar(20), tags text[])",
    "CREATE INDEX rf_orders_account ON rf_orders (account_id)",
    "CREATE UNIQUE INDEX rf_orders_note ON rf_orders (note, amount)",
];

/// Reflection queries (parameters: the table name).
const QUERIES: &[(&str, &[&str])] = &[
    // information_schema: tables, columns, keys (what SQLAlchemy, Django
    // and most ORMs' generic dialects read).
    (
        "SELECT table_schema, table_name, table_type FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name LIKE 'rf\\_%' ORDER BY table_name",
        &[],
    ),
    (
        "SELECT column_name, ordinal_position, column_default, is_nullable, data_type, \
         character_maximum_length, numeric_precision, numeric_scale, udt_name \
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 \
         ORDER BY ordinal_position",
        &["rf_accounts"],
    ),
    (
        "SELECT column_name, data_type, udt_name, is_nullable FROM information_schema.columns \
         WHERE table_name = $1 ORDER BY ordinal_position",
        &["rf_orders"],
    ),
    (
        "SELECT tc.table_name, tc.constraint_name, tc.constraint_type, kcu.column_name, kcu.ordinal_position \
         FROM information_schema.table_constraints tc \
         JOIN information_schema.key_column_usage kcu \
           ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema \
         WHERE tc.table_name LIKE 'rf\\_%' ORDER BY 1, 2, 5",
        &[],
    ),
    // pg_catalog: relations, attributes with format_type and defaults,
    // indexes with their definitions (psycopg / asyncpg style).
    (
        "SELECT c.relname, n.nspname, c.relhasindex, c.relnatts \
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relname LIKE 'rf\\_%' ORDER BY c.relname",
        &[],
    ),
    (
        "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attnum, \
         (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) FROM pg_catalog.pg_attrdef d \
           WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef) AS default \
         FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
         WHERE c.relname = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        &["rf_accounts"],
    ),
    (
        "SELECT i.relname, ix.indisunique, ix.indisprimary, ix.indkey, pg_catalog.pg_get_indexdef(ix.indexrelid) \
         FROM pg_catalog.pg_index ix \
         JOIN pg_catalog.pg_class i ON i.oid = ix.indexrelid \
         JOIN pg_catalog.pg_class t ON t.oid = ix.indrelid \
         WHERE t.relname = $1 ORDER BY i.relname",
        &["rf_orders"],
    ),
    (
        "SELECT conname, pg_catalog.pg_get_constraintdef(oid), conkey \
         FROM pg_catalog.pg_constraint WHERE conrelid = (SELECT oid FROM pg_catalog.pg_class WHERE relname = $1) \
         AND contype = 'p'",
        &["rf_orders"],
    ),
    (
        "SELECT t.typname, t.typlen, t.typarray FROM pg_catalog.pg_type t \
         WHERE t.typname IN ('int4', 'text', 'numeric', 'timestamptz', 'bool', 'int8') ORDER BY 1",
        &[],
    ),
];

/// One result: column names, type OIDs, rows as text.
type Answer = (Vec<(String, u32)>, Vec<Vec<String>>);

fn cell(row: &Row, i: usize) -> String {
    let ty = row.columns()[i].type_().clone();
    let shown = match ty {
        Type::BOOL => row.get::<_, Option<bool>>(i).map(|v| v.to_string()),
        Type::INT2 => row.get::<_, Option<i16>>(i).map(|v| v.to_string()),
        Type::INT4 => row.get::<_, Option<i32>>(i).map(|v| v.to_string()),
        Type::INT8 => row.get::<_, Option<i64>>(i).map(|v| v.to_string()),
        Type::OID => row.get::<_, Option<u32>>(i).map(|v| v.to_string()),
        Type::TEXT | Type::NAME | Type::VARCHAR | Type::BPCHAR => row.get::<_, Option<String>>(i),
        Type::INT2_VECTOR | Type::INT2_ARRAY => {
            row.get::<_, Option<Vec<i16>>>(i).map(|v| format!("{v:?}"))
        }
        other => panic!("reflection test: no decoder for result type {other}"),
    };
    shown.unwrap_or_else(|| "NULL".to_string())
}

fn ask(s: &Session, sql: &str, params: &[&str]) -> Answer {
    let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
        .iter()
        .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let rows = block_on(s.client().query(sql, &params)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let stmt = block_on(s.client().prepare(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let cols = stmt
        .columns()
        .iter()
        .map(|c| (c.name().to_string(), c.type_().oid()))
        .collect();
    let rows = rows
        .iter()
        .map(|r| (0..r.len()).map(|i| cell(r, i)).collect())
        .collect();
    (cols, rows)
}

#[test]
fn driver_reflection_matches_postgres() {
    let Some(bindir) = pg::find_bindir() else {
        eprintln!("040_catalog_reflection skipped: PostgreSQL 15 is not installed");
        return;
    };
    let node = Node::new("primary");
    node.init(true);
    node.start();
    let standby = Node::standby_of(&node, "standby");
    let (_work, pair) = pg::start_reference(&bindir, node.base_dir(), "reflect_pg_");
    let hotpair = node.background_session();
    let postgres = Session::connect("postgres", &pair.primary.connstr());
    for ddl in SCHEMA {
        hotpair.query_safe(ddl);
        postgres.query_safe(ddl);
    }
    let lsn = hotpair.query_safe("SELECT pg_current_wal_lsn()");
    node.wait_for_catchup(&standby, "replay", Some(lsn.trim()));
    let on_standby = standby.background_session();

    for (sql, params) in QUERIES {
        let want = ask(&postgres, sql, params);
        assert!(!want.1.is_empty(), "{sql}: PostgreSQL returned no rows");
        let got = ask(&hotpair, sql, params);
        assert_eq!(got, want, "primary differs from PostgreSQL 15 on:\n{sql}");
        let got = ask(&on_standby, sql, params);
        assert_eq!(got, want, "standby differs from PostgreSQL 15 on:\n{sql}");
    }
}
