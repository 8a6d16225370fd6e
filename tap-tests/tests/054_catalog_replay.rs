//! The catalog a standby replays equals the primary's, and DDL that rolls
//! back leaves nothing (issue 16's "catalog dump" test).
//!
//! One query dumps the catalog as users see it — relations, columns with
//! types and defaults, constraints and index definitions as
//! `pg_get_constraintdef` / `pg_get_indexdef` print them, views, sequences,
//! enums, schemas and comments — as sorted text. Every kind of DDL runs on
//! the primary; the dump must then be the same on the standby. The same DDL
//! run again inside a transaction that rolls back must leave the dump as it
//! was, on both nodes, also after a restart of the primary.
//!
//! * `standby_catalog_equals_primary_and_rollback_leaves_nothing`

use tap_tests::Node;

/// The catalog as text, one line per object, sorted (user objects only).
const DUMP: &str = "
SELECT string_agg(line, E'\\n' ORDER BY line) FROM (
  SELECT 'schema ' || nspname AS line FROM pg_namespace
    WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
  UNION ALL
  SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind || ' ' || c.relnatts
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL
  SELECT 'col ' || a.attrelid::regclass::text || ' ' || a.attnum || ' ' || a.attname || ' '
      || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || a.attidentity
      || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attnum > 0 AND NOT a.attisdropped
      AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL
  SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' ' || convalidated || ' '
      || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace NOT IN (11, 13183) AND conrelid <> 0
  UNION ALL
  SELECT 'idx ' || pg_get_indexdef(indexrelid) FROM pg_index i
    JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  UNION ALL
  SELECT 'view ' || schemaname || '.' || viewname || ' ' || definition FROM pg_views
    WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
  UNION ALL
  SELECT 'seq ' || schemaname || '.' || sequencename || ' ' || data_type || ' ' || start_value
      || ' ' || increment_by || ' ' || max_value FROM pg_sequences
  UNION ALL
  SELECT 'enum ' || enumtypid::regtype::text || ' ' || enumlabel || ' ' || enumsortorder FROM pg_enum
  UNION ALL
  SELECT 'comment ' || classoid::regclass::text || ' ' || objsubid || ' ' || description
    FROM pg_description WHERE objoid >= 16384
) d";

/// DDL of every kind (run once committed, once rolled back with names
/// suffixed `_rb`).
fn ddl(s: &str) -> String {
    format!(
        "CREATE SCHEMA cr_s{s};
         CREATE TYPE cr_mood{s} AS ENUM ('sad', 'ok');
         ALTER TYPE cr_mood{s} ADD VALUE 'happy';
         CREATE TABLE cr_p{s} (id serial PRIMARY KEY, name varchar(20) NOT NULL UNIQUE, n numeric(8,2) DEFAULT 0 CHECK (n >= 0), m cr_mood{s});
         CREATE TABLE cr_s{s}.c (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, p int REFERENCES cr_p{s} ON DELETE CASCADE, a int, b int);
         CREATE INDEX cr_c_expr{s} ON cr_s{s}.c ((a + b)) WHERE a > 0;
         CREATE SEQUENCE cr_seq{s} INCREMENT 3 START 7;
         ALTER TABLE cr_p{s} ADD COLUMN extra text DEFAULT 'x';
         ALTER TABLE cr_p{s} RENAME COLUMN extra TO more;
         ALTER TABLE cr_p{s} ALTER COLUMN n TYPE numeric(10,2);
         CREATE VIEW cr_v{s} AS SELECT id, name FROM cr_p{s} WHERE n > 1;
         ALTER TABLE cr_s{s}.c ADD CONSTRAINT cr_ab{s} CHECK (a < b) NOT VALID;
         ALTER TABLE cr_s{s}.c ADD CONSTRAINT cr_uab{s} UNIQUE (a, b);
         ALTER TABLE cr_s{s}.c ADD CONSTRAINT cr_pair{s} FOREIGN KEY (b, a) REFERENCES cr_s{s}.c (a, b) MATCH FULL NOT VALID;
         COMMENT ON TABLE cr_p{s} IS 'parents';
         COMMENT ON COLUMN cr_p{s}.name IS 'the name';
         COMMENT ON INDEX cr_s{s}.cr_c_expr{s} IS 'an expression index';
         ALTER SEQUENCE cr_seq{s} RENAME TO cr_seq2{s};
         ALTER TABLE cr_p{s} DROP COLUMN more;"
    )
}

#[test]
fn standby_catalog_equals_primary_and_rollback_leaves_nothing() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");

    let session = primary.background_session();
    for stmt in ddl("").split(';').map(str::trim).filter(|s| !s.is_empty()) {
        session.query_safe(stmt);
    }
    primary.wait_for_replay(&standby);
    let dump = primary.safe_sql(DUMP);
    assert!(
        dump.contains("rel cr_s.c r 4"),
        "the dump misses the DDL:\n{dump}"
    );
    assert!(dump.contains("MATCH FULL NOT VALID"), "{dump}");
    assert_eq!(
        standby.safe_sql(DUMP),
        dump,
        "the standby's catalog differs"
    );

    // The same DDL rolled back (ALTER SEQUENCE is not transactional: left out).
    let rolled: Vec<String> = ddl("_rb")
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with("ALTER SEQUENCE"))
        .map(String::from)
        .collect();
    session.query_safe("BEGIN");
    for stmt in &rolled {
        session.query_safe(stmt);
    }
    assert!(
        session.query_safe(DUMP).contains("cr_p_rb"),
        "the block sees its DDL"
    );
    session.query_safe("ROLLBACK");
    primary.wait_for_replay(&standby);
    assert_eq!(
        primary.safe_sql(DUMP),
        dump,
        "ROLLBACK left something on the primary"
    );
    assert_eq!(
        standby.safe_sql(DUMP),
        dump,
        "ROLLBACK left something on the standby"
    );

    drop(session);
    primary.restart();
    primary.wait_for_replay(&standby);
    assert_eq!(
        primary.safe_sql(DUMP),
        dump,
        "the primary's catalog after a restart"
    );
    assert_eq!(
        standby.safe_sql(DUMP),
        dump,
        "the standby's catalog after the restart"
    );
}
