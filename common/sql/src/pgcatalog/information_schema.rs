//! The SQL-standard `information_schema` views ORMs and drivers reflect
//! through: schemata, tables, columns, views, table_constraints,
//! key_column_usage, constraint_column_usage, referential_constraints,
//! check_constraints, sequences, and routines / parameters (the built-in
//! functions, PostgreSQL's rows from `proc_data.rs`). Rows are built from
//! the same [`CatalogSnapshot`] as the pg_catalog relations, with
//! PostgreSQL 15's values for each column (its `information_schema.sql`
//! definitions applied to hotpair's types).

use pgtypes::sqltype::SqlType as T;
use pgtypes::value::Value;

use super::rows::Rows;
use super::*;
use engine::catalog::ConstraintKind;

fn text(s: &str) -> Value {
    Value::text(s)
}

fn yes_no(b: bool) -> Value {
    text(if b { "YES" } else { "NO" })
}

fn db(ec: &dyn ViewContext) -> Value {
    text(&ec.database())
}

/// A column of some relation: (name, type, NOT NULL, DEFAULT text,
/// identity kind).
type Col<'a> = (&'a str, T, bool, Option<&'a str>, Option<char>);

fn columns_of(r: &RelRef) -> Vec<Col<'_>> {
    match r {
        RelRef::Table(t) => t
            .columns
            .iter()
            .filter(|c| !c.dropped)
            .map(|c| {
                // An identity column's nextval is not a default.
                let default = c.default.as_deref().filter(|_| c.identity.is_none());
                (c.name.as_str(), c.ty, c.not_null, default, c.identity)
            })
            .collect(),
        RelRef::System(v) => v
            .columns
            .iter()
            .map(|(n, t)| (*n, *t, false, None, None))
            .collect(),
        RelRef::View(v) => v
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.ty, false, None, None))
            .collect(),
        RelRef::Index(..) | RelRef::Sequence(_) => Vec::new(),
    }
}

/// information_schema.schemata.
pub fn schemata(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_SCHEMATA);
    for (_, name, owner) in &s.namespaces {
        rows.push(vec![
            ("catalog_name", db(ec)),
            ("schema_name", text(name)),
            (
                "schema_owner",
                text(&s.role_name(*owner).unwrap_or_default()),
            ),
        ]);
    }
    rows.out
}

/// information_schema.tables.
pub fn tables(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
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
                text(s.namespace_name(r.namespace()).unwrap_or("")),
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
        T::Enum(_) => "USER-DEFINED".to_string(),
        T::Char(0) => "character".to_string(),
        other => other.base().pg_base_name().to_string(),
    }
}

/// information_schema.columns.
pub fn columns(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_COLUMNS);
    for r in s.relations() {
        let nsp = s.namespace_name(r.namespace()).unwrap_or("");
        for (i, (name, ty, not_null, default, identity)) in columns_of(r).into_iter().enumerate() {
            // The sequence of an identity column gives its identity_* values.
            let seq = identity.and_then(|_| {
                s.relations().into_iter().find_map(|q| match q {
                    RelRef::Sequence(q)
                        if q.spec
                            .owned_by
                            .as_ref()
                            .is_some_and(|(t, c)| t.as_str() == r.name() && c.as_str() == name) =>
                    {
                        Some(q.spec.clone())
                    }
                    _ => None,
                })
            });
            let ident = |f: &dyn Fn(&engine::sequence::SequenceSpec) -> String| {
                seq.as_ref().map_or(Value::Null, |q| text(&f(q)))
            };
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
                    default.map_or(Value::Null, |d| {
                        text(&functions::deparse_default(d, ty, Some(&s)))
                    }),
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
                (
                    "udt_schema",
                    text(match ty {
                        T::Enum(_) | T::Array(pgtypes::sqltype::ArrayElem::Enum(_)) => "public",
                        _ => "pg_catalog",
                    }),
                ),
                ("udt_name", text(ty.typname())),
                ("dtd_identifier", text(&pos.to_string())),
                ("is_self_referencing", yes_no(false)),
                ("is_identity", yes_no(identity.is_some())),
                (
                    "identity_generation",
                    match identity {
                        Some('a') => text("ALWAYS"),
                        Some(_) => text("BY DEFAULT"),
                        None => Value::Null,
                    },
                ),
                ("identity_start", ident(&|q| q.start.to_string())),
                ("identity_increment", ident(&|q| q.increment.to_string())),
                ("identity_maximum", ident(&|q| q.max.to_string())),
                ("identity_minimum", ident(&|q| q.min.to_string())),
                (
                    "identity_cycle",
                    yes_no(seq.as_ref().is_some_and(|q| q.cycle)),
                ),
                ("is_generated", text("NEVER")),
                ("is_updatable", yes_no(matches!(r, RelRef::Table(_)))),
            ]);
        }
    }
    rows.out
}

/// information_schema.views: user views with their definitions, and the
/// system views (built in: no SQL text).
pub fn views(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
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
                text(s.namespace_name(r.namespace()).unwrap_or("")),
            ),
            ("table_name", text(r.name())),
            (
                "view_definition",
                match r {
                    RelRef::View(v) => text(&super::ruleutils::view_definition(&s, v, false)),
                    _ => Value::Null,
                },
            ),
            ("check_option", text("NONE")),
            ("is_updatable", yes_no(updatable(r))),
            ("is_insertable_into", yes_no(updatable(r))),
            ("is_trigger_updatable", yes_no(false)),
            ("is_trigger_deletable", yes_no(false)),
            ("is_trigger_insertable_into", yes_no(false)),
        ]);
    }
    rows.out
}

/// A user view PostgreSQL would update automatically.
fn updatable(r: &RelRef) -> bool {
    let RelRef::View(v) = r else { return false };
    crate::parser::parse_view_query(&v.query)
        .is_ok_and(|q| super::ruleutils::not_updatable_reason(&q).is_none())
}

fn kind_name(k: ConstraintKind) -> &'static str {
    match k {
        ConstraintKind::PrimaryKey => "PRIMARY KEY",
        ConstraintKind::Unique => "UNIQUE",
        ConstraintKind::Check => "CHECK",
        ConstraintKind::ForeignKey => "FOREIGN KEY",
    }
}

fn column_names(c: &Constraint<'_>) -> Vec<String> {
    c.spec
        .columns
        .iter()
        .filter_map(|i| c.table.columns.get(*i))
        .map(|col| col.name.clone())
        .collect()
}

/// information_schema.table_constraints: the constraints, and NOT NULL
/// columns as PostgreSQL lists them (CHECK constraints named
/// `NSP_REL_ATTNUM_not_null`).
pub fn table_constraints(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_TABLE_CONSTRAINTS);
    let mut push =
        |name: &str, ns: u32, table: &str, kind: &str, deferrable: bool, deferred: bool| {
            let schema = text(s.namespace_name(ns).unwrap_or(""));
            rows.push(vec![
                ("constraint_catalog", db(ec)),
                ("constraint_schema", schema.clone()),
                ("constraint_name", text(name)),
                ("table_catalog", db(ec)),
                ("table_schema", schema),
                ("table_name", text(table)),
                ("constraint_type", text(kind)),
                ("is_deferrable", yes_no(deferrable)),
                ("initially_deferred", yes_no(deferred)),
                ("enforced", yes_no(true)),
                (
                    "nulls_distinct",
                    if matches!(kind, "PRIMARY KEY" | "UNIQUE") {
                        yes_no(true)
                    } else {
                        Value::Null
                    },
                ),
            ]);
        };
    for c in s.constraints() {
        push(
            &c.spec.name,
            c.table.namespace,
            &c.table.name,
            kind_name(c.spec.kind),
            c.spec.deferrable,
            c.spec.initially_deferred,
        );
    }
    for t in &s.tables {
        for (i, c) in t.columns.iter().enumerate() {
            if c.not_null && !c.dropped {
                push(
                    &format!("{}_{}_{}_not_null", t.namespace, t.oid, i + 1),
                    t.namespace,
                    &t.name,
                    "CHECK",
                    false,
                    false,
                );
            }
        }
    }
    rows.out
}

/// information_schema.key_column_usage: the columns of primary keys,
/// unique constraints and foreign keys.
pub fn key_column_usage(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_KEY_COLUMN_USAGE);
    for c in s.constraints() {
        if c.spec.kind == ConstraintKind::Check {
            continue;
        }
        // A foreign key's column: its referenced column's place in the
        // referenced unique key.
        let unique_position = |i: usize| -> Value {
            let (Some(f), Some(r)) = (c.spec.foreign.as_ref(), c.referenced) else {
                return Value::Null;
            };
            let key = c
                .spec
                .index
                .as_deref()
                .and_then(|n| r.indexes.list().into_iter().find(|ix| ix.spec.name == n));
            match (key, f.columns.get(i)) {
                (Some(ix), Some(col)) => ix
                    .spec
                    .columns
                    .iter()
                    .position(|k| k == col)
                    .map(|p| Value::Int4(p as i32 + 1))
                    .unwrap_or(Value::Null),
                _ => Value::Null,
            }
        };
        let schema = text(s.namespace_name(c.table.namespace).unwrap_or(""));
        for (i, col) in column_names(&c).iter().enumerate() {
            rows.push(vec![
                ("constraint_catalog", db(ec)),
                ("constraint_schema", schema.clone()),
                ("constraint_name", text(&c.spec.name)),
                ("table_catalog", db(ec)),
                ("table_schema", schema.clone()),
                ("table_name", text(&c.table.name)),
                ("column_name", text(col)),
                ("ordinal_position", Value::Int4((i + 1) as i32)),
                ("position_in_unique_constraint", unique_position(i)),
            ]);
        }
    }
    rows.out
}

/// information_schema.constraint_column_usage: the columns each
/// constraint uses — for a foreign key, the referenced columns.
pub fn constraint_column_usage(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_CONSTRAINT_COLUMN_USAGE);
    for c in s.constraints() {
        let (table, cols) = match (c.spec.foreign.as_ref(), c.referenced) {
            (Some(f), Some(r)) => (
                r,
                f.columns
                    .iter()
                    .filter_map(|i| r.columns.get(*i))
                    .map(|col| col.name.clone())
                    .collect(),
            ),
            (Some(_), None) => continue,
            _ => (c.table, column_names(&c)),
        };
        for col in cols {
            rows.push(vec![
                ("table_catalog", db(ec)),
                (
                    "table_schema",
                    text(s.namespace_name(table.namespace).unwrap_or("")),
                ),
                ("table_name", text(&table.name)),
                ("column_name", text(&col)),
                ("constraint_catalog", db(ec)),
                (
                    "constraint_schema",
                    text(s.namespace_name(c.table.namespace).unwrap_or("")),
                ),
                ("constraint_name", text(&c.spec.name)),
            ]);
        }
    }
    rows.out
}

/// information_schema.referential_constraints: each foreign key with the
/// unique constraint it references and its actions.
pub fn referential_constraints(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_REFERENTIAL_CONSTRAINTS);
    let rule = |a: engine::catalog::FkAction| text(fk_action_sql(a).unwrap_or("NO ACTION"));
    for c in s.constraints() {
        let Some(f) = &c.spec.foreign else { continue };
        // The referenced key's constraint (PostgreSQL names the constraint
        // owning the index; a bare unique index has none).
        let unique = c.referenced.and_then(|r| {
            r.constraints
                .iter()
                .find(|k| k.foreign.is_none() && k.index.is_some() && k.index == c.spec.index)
                .map(|k| k.name.clone())
                .or_else(|| {
                    r.primary_key()
                        .filter(|pk| Some(&pk.spec.name) == c.spec.index.as_ref())
                        .map(|pk| pk.spec.name.clone())
                })
        });
        let (ucat, uschema) = match unique {
            Some(_) => (
                db(ec),
                text(
                    c.referenced
                        .and_then(|r| s.namespace_name(r.namespace))
                        .unwrap_or(""),
                ),
            ),
            None => (Value::Null, Value::Null),
        };
        rows.push(vec![
            ("constraint_catalog", db(ec)),
            (
                "constraint_schema",
                text(s.namespace_name(c.table.namespace).unwrap_or("")),
            ),
            ("constraint_name", text(&c.spec.name)),
            ("unique_constraint_catalog", ucat),
            ("unique_constraint_schema", uschema),
            (
                "unique_constraint_name",
                unique.as_deref().map(text).unwrap_or(Value::Null),
            ),
            (
                "match_option",
                text(if c.spec.match_full { "FULL" } else { "NONE" }),
            ),
            ("update_rule", rule(f.on_update)),
            ("delete_rule", rule(f.on_delete)),
        ]);
    }
    rows.out
}

/// information_schema.check_constraints: CHECK constraints and NOT NULL
/// columns.
pub fn check_constraints(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_CHECK_CONSTRAINTS);
    let mut push = |name: &str, ns: u32, clause: &str| {
        rows.push(vec![
            ("constraint_catalog", db(ec)),
            (
                "constraint_schema",
                text(s.namespace_name(ns).unwrap_or("")),
            ),
            ("constraint_name", text(name)),
            ("check_clause", text(clause)),
        ]);
    };
    for c in s.constraints() {
        if c.spec.kind == ConstraintKind::Check {
            let def = c.definition(&s, false);
            push(
                &c.spec.name,
                c.table.namespace,
                def.strip_prefix("CHECK ").unwrap_or(&def),
            );
        }
    }
    for t in &s.tables {
        for (i, c) in t.columns.iter().enumerate() {
            if c.not_null && !c.dropped {
                push(
                    &format!("{}_{}_{}_not_null", t.namespace, t.oid, i + 1),
                    t.namespace,
                    &format!("{} IS NOT NULL", c.name),
                );
            }
        }
    }
    rows.out
}

/// information_schema.sequences.
pub fn sequences(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = ec.pg_catalog();
    let mut rows = Rows::new(defs::IS_SEQUENCES);
    for r in s.relations() {
        let RelRef::Sequence(q) = r else { continue };
        let q = &q.spec;
        // PostgreSQL leaves out identity columns' sequences.
        if s.is_identity_sequence(q) {
            continue;
        }
        let bits = match q.ty {
            T::Int2 => 16,
            T::Int4 => 32,
            _ => 64,
        };
        rows.push(vec![
            ("sequence_catalog", db(ec)),
            (
                "sequence_schema",
                text(s.namespace_name(q.namespace).unwrap_or("")),
            ),
            ("sequence_name", text(&q.name)),
            ("data_type", text(q.ty.pg_base_name())),
            ("numeric_precision", Value::Int4(bits)),
            ("numeric_precision_radix", Value::Int4(2)),
            ("numeric_scale", Value::Int4(0)),
            ("start_value", text(&q.start.to_string())),
            ("minimum_value", text(&q.min.to_string())),
            ("maximum_value", text(&q.max.to_string())),
            ("increment", text(&q.increment.to_string())),
            ("cycle_option", yes_no(q.cycle)),
        ]);
    }
    rows.out
}

/// information_schema.routines: the built-in functions of pg_proc
/// (PostgreSQL's rows, `proc.rs`).
pub fn routines(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    super::proc::information_schema_rows(
        defs::IS_ROUTINES,
        super::proc_data::ROUTINES_COLUMNS,
        super::proc_data::ROUTINES_ROWS,
        &ec.database(),
    )
}

/// information_schema.parameters: the parameters of those functions.
pub fn parameters(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    super::proc::information_schema_rows(
        defs::IS_PARAMETERS,
        super::proc_data::PARAMETERS_COLUMNS,
        super::proc_data::PARAMETERS_ROWS,
        &ec.database(),
    )
}
