//! The SQL-standard `information_schema` views ORMs and drivers reflect
//! through: schemata, tables, columns, views, table_constraints,
//! key_column_usage, constraint_column_usage (and the constraint and
//! sequence views, empty until those objects exist). Rows are built from
//! the same [`CatalogSnapshot`] as the pg_catalog relations, with
//! PostgreSQL 15's values for each column (its `information_schema.sql`
//! definitions applied to hotpair's types).

use pgtypes::sqltype::SqlType as T;
use pgtypes::value::Value;

use super::rows::Rows;
use super::*;
use crate::executor::Ectx;

fn text(s: &str) -> Value {
    Value::text(s)
}

fn yes_no(b: bool) -> Value {
    text(if b { "YES" } else { "NO" })
}

fn db(ec: &Ectx<'_>) -> Value {
    text(&crate::functions::EvalContext::current_database(ec))
}

/// A column of some relation: (name, type, NOT NULL, DEFAULT text).
type Col<'a> = (&'a str, T, bool, Option<&'a str>);

fn columns_of(r: &RelRef) -> Vec<Col<'_>> {
    match r {
        RelRef::Table(t) => t
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.not_null, c.default.as_deref()))
            .collect(),
        RelRef::System(v) => v
            .columns
            .iter()
            .map(|(n, t)| (*n, *t, false, None))
            .collect(),
        RelRef::Index(..) => Vec::new(),
    }
}

/// information_schema.schemata.
pub fn schemata(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_SCHEMATA);
    for (_, name, owner) in NAMESPACES {
        rows.push(vec![
            ("catalog_name", db(ec)),
            ("schema_name", text(name)),
            (
                "schema_owner",
                text(&s.role_name(owner).unwrap_or_default()),
            ),
        ]);
    }
    rows.out
}

/// information_schema.tables.
pub fn tables(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_TABLES);
    for r in s.relations() {
        let table = match r.relkind() {
            "r" => true,
            "v" => false,
            _ => continue,
        };
        rows.push(vec![
            ("table_catalog", db(ec)),
            (
                "table_schema",
                text(namespace_name(r.namespace()).unwrap_or("")),
            ),
            ("table_name", text(r.name())),
            (
                "table_type",
                text(if table { "BASE TABLE" } else { "VIEW" }),
            ),
            ("is_insertable_into", yes_no(matches!(r, RelRef::Table(_)))),
            ("is_typed", yes_no(false)),
        ]);
    }
    rows.out
}

/// The SQL-standard name of a type (`data_type`).
fn data_type(ty: T) -> String {
    match ty {
        T::Array(e) if !e.is_vector() => "ARRAY".to_string(),
        T::Char(0) => "character".to_string(),
        other => other.base().pg_base_name().to_string(),
    }
}

/// information_schema.columns.
pub fn columns(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_COLUMNS);
    for r in s.relations() {
        let nsp = namespace_name(r.namespace()).unwrap_or("");
        for (i, (name, ty, not_null, default)) in columns_of(r).into_iter().enumerate() {
            let pos = (i + 1) as i32;
            let int = |v: Option<i32>| v.map_or(Value::Null, Value::Int4);
            let char_len = match ty {
                T::Varchar(Some(n)) => Some(n as i32),
                T::Char(n) if n > 0 => Some(n as i32),
                _ => None,
            };
            let octets = match ty {
                T::Text | T::Varchar(None) | T::Char(0) => Some(1_073_741_824),
                T::Varchar(Some(n)) | T::Char(n) => Some(n as i32 * 4),
                _ => None,
            };
            let (precision, radix, scale) = match ty {
                T::Int2 => (Some(16), Some(2), Some(0)),
                T::Int4 => (Some(32), Some(2), Some(0)),
                T::Int8 => (Some(64), Some(2), Some(0)),
                T::Float8 => (Some(53), Some(2), None),
                T::Numeric(Some((p, sc))) => (Some(p as i32), Some(10), Some(sc as i32)),
                T::Numeric(None) => (None, Some(10), None),
                _ => (None, None, None),
            };
            let dt_precision = match ty {
                T::Timestamp | T::TimestampTz | T::Interval => Some(6),
                T::Date => Some(0),
                _ => None,
            };
            rows.push(vec![
                ("table_catalog", db(ec)),
                ("table_schema", text(nsp)),
                ("table_name", text(r.name())),
                ("column_name", text(name)),
                ("ordinal_position", Value::Int4(pos)),
                (
                    "column_default",
                    default.map_or(Value::Null, |d| text(&functions::deparse_default(d, ty))),
                ),
                ("is_nullable", yes_no(!not_null)),
                ("data_type", text(&data_type(ty))),
                ("character_maximum_length", int(char_len)),
                ("character_octet_length", int(octets)),
                ("numeric_precision", int(precision)),
                ("numeric_precision_radix", int(radix)),
                ("numeric_scale", int(scale)),
                ("datetime_precision", int(dt_precision)),
                (
                    "collation_name",
                    if ty == T::Name {
                        text("C")
                    } else {
                        Value::Null
                    },
                ),
                ("udt_catalog", db(ec)),
                ("udt_schema", text("pg_catalog")),
                ("udt_name", text(ty.typname())),
                ("dtd_identifier", text(&pos.to_string())),
                ("is_self_referencing", yes_no(false)),
                ("is_identity", yes_no(false)),
                ("identity_cycle", yes_no(false)),
                ("is_generated", text("NEVER")),
                ("is_updatable", yes_no(matches!(r, RelRef::Table(_)))),
            ]);
        }
    }
    rows.out
}

/// information_schema.views: the system views (built in: no SQL text).
pub fn views(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_VIEWS);
    for r in s.relations() {
        if r.relkind() != "v" {
            continue;
        }
        rows.push(vec![
            ("table_catalog", db(ec)),
            (
                "table_schema",
                text(namespace_name(r.namespace()).unwrap_or("")),
            ),
            ("table_name", text(r.name())),
            ("check_option", text("NONE")),
            ("is_updatable", yes_no(false)),
            ("is_insertable_into", yes_no(false)),
            ("is_trigger_updatable", yes_no(false)),
            ("is_trigger_deletable", yes_no(false)),
            ("is_trigger_insertable_into", yes_no(false)),
        ]);
    }
    rows.out
}

/// A table's primary key: (constraint name, key column names).
fn primary_keys(s: &CatalogSnapshot) -> Vec<(&engine::catalog::TableDef, String, Vec<String>)> {
    let mut out = Vec::new();
    for t in &s.tables {
        if let Some(pk) = t.primary_key() {
            let cols = pk
                .spec
                .columns
                .iter()
                .filter_map(|c| t.columns.get(*c))
                .map(|c| c.name.clone())
                .collect();
            out.push((&**t, pk.spec.name.clone(), cols));
        }
    }
    out
}

/// information_schema.table_constraints: primary keys, and NOT NULL
/// columns as PostgreSQL lists them (CHECK constraints named
/// `NSP_REL_ATTNUM_not_null`).
pub fn table_constraints(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_TABLE_CONSTRAINTS);
    let mut push = |name: &str, table: &str, kind: &str| {
        rows.push(vec![
            ("constraint_catalog", db(ec)),
            ("constraint_schema", text("public")),
            ("constraint_name", text(name)),
            ("table_catalog", db(ec)),
            ("table_schema", text("public")),
            ("table_name", text(table)),
            ("constraint_type", text(kind)),
            ("is_deferrable", yes_no(false)),
            ("initially_deferred", yes_no(false)),
            ("enforced", yes_no(true)),
            (
                "nulls_distinct",
                if kind == "CHECK" {
                    Value::Null
                } else {
                    yes_no(true)
                },
            ),
        ]);
    };
    for (t, name, _) in primary_keys(&s) {
        push(&name, &t.name, "PRIMARY KEY");
    }
    for t in &s.tables {
        for (i, c) in t.columns.iter().enumerate() {
            if c.not_null {
                push(
                    &format!("{PUBLIC}_{}_{}_not_null", t.oid, i + 1),
                    &t.name,
                    "CHECK",
                );
            }
        }
    }
    rows.out
}

/// information_schema.key_column_usage: the primary keys' columns.
pub fn key_column_usage(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_KEY_COLUMN_USAGE);
    for (t, name, cols) in primary_keys(&s) {
        for (i, c) in cols.iter().enumerate() {
            rows.push(vec![
                ("constraint_catalog", db(ec)),
                ("constraint_schema", text("public")),
                ("constraint_name", text(&name)),
                ("table_catalog", db(ec)),
                ("table_schema", text("public")),
                ("table_name", text(&t.name)),
                ("column_name", text(c)),
                ("ordinal_position", Value::Int4((i + 1) as i32)),
                ("position_in_unique_constraint", Value::Null),
            ]);
        }
    }
    rows.out
}

/// information_schema.constraint_column_usage: the primary keys' columns.
pub fn constraint_column_usage(ec: &Ectx<'_>) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_CONSTRAINT_COLUMN_USAGE);
    for (t, name, cols) in primary_keys(&s) {
        for c in &cols {
            rows.push(vec![
                ("table_catalog", db(ec)),
                ("table_schema", text("public")),
                ("table_name", text(&t.name)),
                ("column_name", text(c)),
                ("constraint_catalog", db(ec)),
                ("constraint_schema", text("public")),
                ("constraint_name", text(&name)),
            ]);
        }
    }
    rows.out
}
