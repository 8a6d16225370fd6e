//! The system views (`pg_stat_replication`, `pg_prepared_xacts`,
//! `pg_stat_io`, `hotpair_stat_snapshots`, …): one registry of name, columns and the
//! function that builds the rows from the engine's state. The planner
//! binds a name that no table shadows to its entry; the executor asks the
//! entry for its rows when the scan starts. Adding a view is one entry
//! here: the layers below only expose their counters and lists.
//!
//! Types follow PostgreSQL's where hotpair has them; lags are interval
//! text (`00:00:00.001234`), since there is no interval type; a 64-bit xid
//! is shown as PostgreSQL's 32-bit `xid` (its low half, as PostgreSQL shows
//! a FullTransactionId's xid).

use std::sync::Arc;

use engine::replication::{ReplicationState, LAG_UNKNOWN};
use engine::Engine;

use crate::pgcatalog::defs as d;
use crate::pgcatalog::information_schema as is;
use crate::pgcatalog::rows as r;
use crate::pgcatalog::ViewContext;
use pgtypes::lsn::Lsn;
use pgtypes::numeric::Numeric;
use pgtypes::sqltype::SqlType as T;
use pgtypes::value::Value;

/// One system relation: a view, or one of PostgreSQL's catalogs
/// (`crate::pgcatalog`).
#[derive(Debug)]
pub struct SystemView {
    /// Its name.
    pub name: &'static str,
    /// Its OID (PostgreSQL's for its catalogs and views; hotpair's own
    /// views from 12900 up).
    pub oid: u32,
    /// Its columns, in order.
    pub columns: &'static [(&'static str, T)],
    rows: fn(&dyn ViewContext) -> Vec<Vec<Value>>,
    /// The column holding a relation's OID by which the row builder can
    /// skip the other relations' rows (`pg_attribute.attrelid`): the
    /// planner turns `key = constant` into a keyed scan
    /// ([`ViewContext::relation_key`]).
    pub key: Option<&'static str>,
    /// The column holding a relation's name, by which the row builder can
    /// skip the other relations' rows: the planner turns `name = 'x'`, and
    /// psql's anchored literal `name ~ '^(x)$'`, into a keyed scan
    /// ([`ViewContext::relation_name_key`]).
    pub name_key: Option<&'static str>,
}

impl SystemView {
    /// The view's rows now.
    pub fn rows(&self, ec: &dyn ViewContext) -> Vec<Vec<Value>> {
        (self.rows)(ec)
    }

    /// Its schema: information_schema for the views in
    /// [`INFORMATION_SCHEMA`], pg_catalog for the rest.
    pub fn namespace(&self) -> u32 {
        if INFORMATION_SCHEMA.iter().any(|v| std::ptr::eq(v, self)) {
            crate::pgcatalog::INFORMATION_SCHEMA
        } else {
            crate::pgcatalog::PG_CATALOG
        }
    }

    /// pg_class.relkind: `r` for PostgreSQL's catalogs (OIDs below 10000
    /// are catalog tables), `v` for views.
    pub fn relkind(&self) -> &'static str {
        if self.oid < 10000 {
            "r"
        } else {
            "v"
        }
    }
}

/// The pg_catalog relation called `name`, if there is one.
pub fn lookup(name: &str) -> Option<&'static SystemView> {
    SYSTEM_VIEWS
        .iter()
        .chain(CATALOGS.iter())
        .find(|v| v.name == name)
}

/// The system relation `schema.name`: information_schema's views only
/// when qualified with it; pg_catalog's unqualified or qualified.
pub fn lookup_in(schema: Option<&str>, name: &str) -> Option<&'static SystemView> {
    match schema {
        Some("information_schema") => INFORMATION_SCHEMA.iter().find(|v| v.name == name),
        None | Some("pg_catalog") => lookup(name),
        Some(_) => None,
    }
}

/// Every system relation (views and catalogs, both schemas).
pub fn catalog_relations() -> impl Iterator<Item = &'static SystemView> {
    SYSTEM_VIEWS
        .iter()
        .chain(CATALOGS.iter())
        .chain(INFORMATION_SCHEMA.iter())
}

/// The information_schema views (`crate::pgcatalog::information_schema`).
pub static INFORMATION_SCHEMA: &[SystemView] = &[
    cat("schemata", 13300, d::IS_SCHEMATA, is::schemata),
    cat("tables", 13301, d::IS_TABLES, is::tables),
    cat("columns", 13302, d::IS_COLUMNS, is::columns),
    cat("views", 13303, d::IS_VIEWS, is::views),
    cat(
        "table_constraints",
        13304,
        d::IS_TABLE_CONSTRAINTS,
        is::table_constraints,
    ),
    cat(
        "key_column_usage",
        13305,
        d::IS_KEY_COLUMN_USAGE,
        is::key_column_usage,
    ),
    cat(
        "constraint_column_usage",
        13306,
        d::IS_CONSTRAINT_COLUMN_USAGE,
        is::constraint_column_usage,
    ),
    cat(
        "referential_constraints",
        13307,
        d::IS_REFERENTIAL_CONSTRAINTS,
        is::referential_constraints,
    ),
    cat(
        "check_constraints",
        13308,
        d::IS_CHECK_CONSTRAINTS,
        is::check_constraints,
    ),
    cat("sequences", 13309, d::IS_SEQUENCES, is::sequences),
    cat("routines", 13310, d::IS_ROUTINES, is::routines),
    cat("parameters", 13311, d::IS_PARAMETERS, is::parameters),
];

/// One catalog relation entry.
const fn cat(
    name: &'static str,
    oid: u32,
    columns: &'static [(&'static str, T)],
    rows: fn(&dyn ViewContext) -> Vec<Vec<Value>>,
) -> SystemView {
    SystemView {
        name,
        oid,
        columns,
        rows,
        key: None,
        name_key: None,
    }
}

/// A catalog whose rows can be built for one relation (see
/// [`SystemView::key`]).
const fn keyed(
    name: &'static str,
    oid: u32,
    columns: &'static [(&'static str, T)],
    rows: fn(&dyn ViewContext) -> Vec<Vec<Value>>,
    key: &'static str,
) -> SystemView {
    SystemView {
        key: Some(key),
        ..cat(name, oid, columns, rows)
    }
}

/// PostgreSQL's catalogs and catalog views (`crate::pgcatalog`).
pub static CATALOGS: &[SystemView] = &[
    SystemView {
        name_key: Some("relname"),
        ..keyed("pg_class", 1259, d::PG_CLASS, r::pg_class, "oid")
    },
    cat("pg_namespace", 2615, d::PG_NAMESPACE, r::pg_namespace),
    keyed(
        "pg_attribute",
        1249,
        d::PG_ATTRIBUTE,
        r::pg_attribute,
        "attrelid",
    ),
    cat("pg_type", 1247, d::PG_TYPE, r::pg_type),
    cat("pg_enum", 3501, d::PG_ENUM, r::pg_enum),
    keyed("pg_index", 2610, d::PG_INDEX, r::pg_index, "indrelid"),
    cat("pg_am", 2601, d::PG_AM, r::pg_am),
    keyed("pg_attrdef", 2604, d::PG_ATTRDEF, r::pg_attrdef, "adrelid"),
    keyed(
        "pg_constraint",
        2606,
        d::PG_CONSTRAINT,
        r::pg_constraint,
        "conrelid",
    ),
    cat("pg_collation", 3456, d::PG_COLLATION, r::pg_collation),
    cat("pg_policy", 3256, d::PG_POLICY, r::empty),
    cat("pg_statistic_ext", 3381, d::PG_STATISTIC_EXT, r::empty),
    cat("pg_publication", 6104, d::PG_PUBLICATION, r::empty),
    cat(
        "pg_publication_namespace",
        6237,
        d::PG_PUBLICATION_NAMESPACE,
        r::empty,
    ),
    cat("pg_publication_rel", 6106, d::PG_PUBLICATION_REL, r::empty),
    cat("pg_inherits", 2611, d::PG_INHERITS, r::empty),
    cat("pg_database", 1262, d::PG_DATABASE, r::pg_database),
    cat("pg_default_acl", 826, d::PG_DEFAULT_ACL, r::pg_default_acl),
    cat("pg_auth_members", 1261, d::PG_AUTH_MEMBERS, |c| {
        crate::roles::pg_auth_members(c.engine())
    }),
    cat("pg_description", 2609, d::PG_DESCRIPTION, r::pg_description),
    cat(
        "pg_shdescription",
        2396,
        d::PG_SHDESCRIPTION,
        r::pg_shdescription,
    ),
    cat("pg_trigger", 2620, d::PG_TRIGGER, r::pg_trigger),
    cat("pg_rewrite", 2618, d::PG_REWRITE, r::pg_rewrite),
    cat("pg_tablespace", 1213, d::PG_TABLESPACE, r::pg_tablespace),
    cat("pg_depend", 2608, d::PG_DEPEND, r::pg_depend),
    cat("pg_sequence", 2224, d::PG_SEQUENCE, r::pg_sequence),
    cat("pg_extension", 3079, d::PG_EXTENSION, r::empty),
    cat("pg_proc", 1255, d::PG_PROC, r::pg_proc),
    cat("pg_aggregate", 2600, d::PG_AGGREGATE, r::pg_aggregate),
    cat("pg_language", 2612, d::PG_LANGUAGE, r::pg_language),
    keyed("pg_operator", 2617, d::PG_OPERATOR, r::pg_operator, "oid"),
    keyed("pg_opclass", 2616, d::PG_OPCLASS, r::pg_opclass, "oid"),
    keyed("pg_opfamily", 2753, d::PG_OPFAMILY, r::pg_opfamily, "oid"),
    keyed("pg_amop", 2602, d::PG_AMOP, r::pg_amop, "oid"),
    keyed("pg_amproc", 2603, d::PG_AMPROC, r::pg_amproc, "oid"),
    cat("pg_foreign_table", 3118, d::PG_FOREIGN_TABLE, r::empty),
    cat(
        "pg_partitioned_table",
        3350,
        d::PG_PARTITIONED_TABLE,
        r::empty,
    ),
    cat("pg_event_trigger", 3466, d::PG_EVENT_TRIGGER, r::empty),
    cat("pg_tables", 12033, d::PG_TABLES, r::pg_tables),
    cat("pg_indexes", 12043, d::PG_INDEXES, r::pg_indexes),
    cat("pg_views", 12028, d::PG_VIEWS, r::pg_views),
    cat("pg_sequences", 12048, d::PG_SEQUENCES, r::pg_sequences),
    cat("pg_matviews", 12038, d::PG_MATVIEWS, r::empty),
    cat("pg_user", 12014, d::PG_USER, r::pg_user),
    cat("pg_settings", 12104, d::PG_SETTINGS, r::pg_settings),
    cat("pg_cursors", 12112, d::PG_CURSORS, |c| c.cursors()),
    cat(
        "pg_stat_user_tables",
        12161,
        d::PG_STAT_USER_TABLES,
        r::pg_stat_user_tables,
    ),
    cat(
        "pg_statio_user_tables",
        12179,
        d::PG_STATIO_USER_TABLES,
        r::pg_statio_user_tables,
    ),
    cat("pg_locks", 12073, d::PG_LOCKS, r::pg_locks),
    cat("pg_stat_ssl", 12249, d::PG_STAT_SSL, r::pg_stat_ssl),
    cat(
        "pg_stat_gssapi",
        12253,
        d::PG_STAT_GSSAPI,
        r::pg_stat_gssapi,
    ),
    cat(
        "pg_stat_activity",
        12222,
        d::PG_STAT_ACTIVITY,
        r::pg_stat_activity,
    ),
];

/// The set-returning functions without arguments that are views in all
/// but syntax (`SELECT … FROM pg_control_checkpoint()`).
pub fn lookup_function(name: &str) -> Option<&'static SystemView> {
    FUNCTION_VIEWS.iter().find(|v| v.name == name)
}

/// Views called as functions (see [`lookup_function`]).
pub static FUNCTION_VIEWS: &[SystemView] = &[SystemView {
    name: "pg_control_checkpoint",
    oid: 12902,
    // PostgreSQL's columns, as far as hotpair has them (no multixacts,
    // no commit timestamps, no xid epoch: 64-bit xids).
    columns: &[
        ("checkpoint_lsn", T::PgLsn),
        ("redo_lsn", T::PgLsn),
        ("redo_wal_file", T::Text),
        ("timeline_id", T::Int4),
        ("prev_timeline_id", T::Int4),
        ("full_page_writes", T::Bool),
        ("next_xid", T::Text),
        ("next_oid", T::Oid),
        ("checkpoint_time", T::TimestampTz),
    ],
    rows: |c| control_checkpoint(c.engine()),
    key: None,
    name_key: None,
}];

fn control_checkpoint(e: &Engine) -> Vec<Vec<Value>> {
    let Some(c) = e.replication().control_checkpoint() else {
        return Vec::new();
    };
    vec![vec![
        lsn(c.checkpoint_lsn),
        lsn(c.redo_lsn),
        text(&wal::segment::walfile_name_tli(
            c.timeline,
            c.redo_lsn,
            c.segment_size,
        )),
        Value::Int4(c.timeline.0 as i32),
        Value::Int4(c.prev_timeline.0 as i32),
        Value::Bool(true),
        text(&format!("0:{}", c.next_xid)),
        Value::Oid(c.next_oid),
        Value::TimestampTz(c.time_us),
    ]]
}

/// Every system view.
pub static SYSTEM_VIEWS: &[SystemView] = &[
    SystemView {
        name: "pg_stats",
        oid: 12053,
        columns: &[
            ("schemaname", T::Name),
            ("tablename", T::Name),
            ("attname", T::Name),
            ("inherited", T::Bool),
            ("null_frac", T::Numeric(None)),
            ("avg_width", T::Int4),
            ("n_distinct", T::Numeric(None)),
            ("most_common_vals", T::Text),
            (
                "most_common_freqs",
                T::Array(pgtypes::sqltype::ArrayElem::Numeric),
            ),
            ("histogram_bounds", T::Text),
            ("correlation", T::Numeric(None)),
            ("most_common_elems", T::Text),
            (
                "most_common_elem_freqs",
                T::Array(pgtypes::sqltype::ArrayElem::Numeric),
            ),
            (
                "elem_count_histogram",
                T::Array(pgtypes::sqltype::ArrayElem::Numeric),
            ),
        ],
        rows: |c| pg_stats(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_authid",
        oid: 1260,
        columns: &[
            ("oid", T::Oid),
            ("rolname", T::Name),
            ("rolsuper", T::Bool),
            ("rolinherit", T::Bool),
            ("rolcreaterole", T::Bool),
            ("rolcreatedb", T::Bool),
            ("rolcanlogin", T::Bool),
            ("rolreplication", T::Bool),
            ("rolbypassrls", T::Bool),
            ("rolconnlimit", T::Int4),
            ("rolpassword", T::Text),
            ("rolvaliduntil", T::TimestampTz),
        ],
        rows: |c| crate::roles::pg_authid(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_roles",
        oid: 12000,
        columns: &[
            ("rolname", T::Name),
            ("rolsuper", T::Bool),
            ("rolinherit", T::Bool),
            ("rolcreaterole", T::Bool),
            ("rolcreatedb", T::Bool),
            ("rolcanlogin", T::Bool),
            ("rolreplication", T::Bool),
            ("rolconnlimit", T::Int4),
            ("rolpassword", T::Text),
            ("rolvaliduntil", T::TimestampTz),
            ("rolbypassrls", T::Bool),
            ("rolconfig", T::Text),
            ("oid", T::Oid),
        ],
        rows: |c| crate::roles::pg_roles(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_hba_file_rules",
        oid: 12114,
        columns: &[
            ("line_number", T::Int4),
            ("type", T::Text),
            ("database", T::Text),
            ("user_name", T::Text),
            ("address", T::Text),
            ("netmask", T::Text),
            ("auth_method", T::Text),
            ("options", T::Text),
            ("error", T::Text),
        ],
        rows: |c| crate::roles::pg_hba_file_rules(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_ident_file_mappings",
        oid: 12118,
        columns: &[
            ("line_number", T::Int4),
            ("map_name", T::Text),
            ("sys_name", T::Text),
            ("pg_username", T::Text),
            ("error", T::Text),
        ],
        rows: |c| crate::roles::pg_ident_file_mappings(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "hotpair_stat_snapshots",
        oid: 12900,
        columns: &[
            ("snapshots_computed", T::Int8),
            ("snapshots_reused", T::Int8),
            ("xact_completion_count", T::Int8),
            ("horizon_recomputes", T::Int8),
            ("horizon_recomputes_avoided", T::Int8),
        ],
        rows: |c| stat_snapshots(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_prepared_xacts",
        oid: 12090,
        columns: &[
            ("transaction", T::Xid),
            ("gid", T::Text),
            ("prepared", T::TimestampTz),
            ("owner", T::Name),
            ("database", T::Name),
        ],
        rows: |c| prepared_xacts(c.engine()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_stat_replication",
        oid: 12227,
        columns: &[
            ("pid", T::Int4),
            ("application_name", T::Text),
            ("client_addr", T::Inet),
            ("backend_xmin", T::Xid),
            ("state", T::Text),
            ("sent_lsn", T::PgLsn),
            ("write_lsn", T::PgLsn),
            ("flush_lsn", T::PgLsn),
            ("replay_lsn", T::PgLsn),
            ("write_lag", T::Text),
            ("flush_lag", T::Text),
            ("replay_lag", T::Text),
            ("sync_priority", T::Int4),
            ("sync_state", T::Text),
        ],
        rows: |c| stat_replication(c.engine().replication()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_replication_slots",
        oid: 12257,
        columns: &[
            ("slot_name", T::Text),
            ("slot_type", T::Text),
            ("active", T::Bool),
            ("xmin", T::Xid),
            ("restart_lsn", T::PgLsn),
            ("wal_status", T::Text),
            ("safe_wal_size", T::Int8),
        ],
        rows: |c| replication_slots(c.engine().replication(), &c.engine().config()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_stat_wal_receiver",
        oid: 12236,
        columns: &[
            ("pid", T::Int4),
            ("status", T::Text),
            ("receive_start_lsn", T::PgLsn),
            ("receive_start_tli", T::Int4),
            ("written_lsn", T::PgLsn),
            ("flushed_lsn", T::PgLsn),
            ("received_tli", T::Int4),
            ("latest_end_lsn", T::PgLsn),
            ("slot_name", T::Text),
            ("sender_host", T::Text),
            ("sender_port", T::Int4),
            ("conninfo", T::Text),
        ],
        rows: |c| stat_wal_receiver(c.engine().replication()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "pg_stat_database_conflicts",
        oid: 12271,
        columns: &[
            ("datid", T::Oid),
            ("datname", T::Name),
            ("confl_tablespace", T::Int8),
            ("confl_lock", T::Int8),
            ("confl_snapshot", T::Int8),
            ("confl_bufferpin", T::Int8),
            ("confl_deadlock", T::Int8),
        ],
        rows: |c| stat_database_conflicts(c.engine().replication()),
        key: None,
        name_key: None,
    },
    SystemView {
        name: "hotpair_stat_wal",
        oid: 12901,
        columns: &[
            ("wal_records", T::Int8),
            ("wal_fpi", T::Int8),
            ("wal_bytes", T::Int8),
            ("wal_write", T::Int8),
            ("wal_sync", T::Int8),
            ("wal_flush_waits", T::Int8),
            ("checkpoints", T::Int8),
            ("wal_group_joins", T::Int8),
        ],
        rows: |c| stat_wal(c.engine()),
        key: None,
        name_key: None,
    },
    // PostgreSQL 16's pg_stat_io (storage::pgstat_io): one row per backend
    // type that does buffer IO here, object "relation", and context; NULL
    // where PostgreSQL tracks no such operation for the row, times 0 (no
    // track_io_timing, as PostgreSQL with it off).
    SystemView {
        name: "pg_stat_io",
        oid: 12903,
        columns: &[
            ("backend_type", T::Text),
            ("object", T::Text),
            ("context", T::Text),
            ("reads", T::Int8),
            ("read_time", T::Float8),
            ("writes", T::Int8),
            ("write_time", T::Float8),
            ("writebacks", T::Int8),
            ("writeback_time", T::Float8),
            ("extends", T::Int8),
            ("extend_time", T::Float8),
            ("op_bytes", T::Int8),
            ("hits", T::Int8),
            ("evictions", T::Int8),
            ("reuses", T::Int8),
            ("fsyncs", T::Int8),
            ("fsync_time", T::Float8),
            ("stats_reset", T::TimestampTz),
        ],
        rows: |c| pg_stat_io(c.engine()),
        key: None,
        name_key: None,
    },
    // PostgreSQL's pg_stat_wal: the same counters under PostgreSQL 15's
    // names and types (tools and the benchmark read `wal_sync`). The
    // times and `wal_buffers_full` are not measured: 0; `stats_reset`
    // NULL.
    SystemView {
        name: "pg_stat_wal",
        oid: 12293,
        columns: &[
            ("wal_records", T::Int8),
            ("wal_fpi", T::Int8),
            ("wal_bytes", T::NUMERIC),
            ("wal_buffers_full", T::Int8),
            ("wal_write", T::Int8),
            ("wal_sync", T::Int8),
            ("wal_write_time", T::Float8),
            ("wal_sync_time", T::Float8),
            ("stats_reset", T::TimestampTz),
        ],
        rows: |c| pg_stat_wal(c.engine()),
        key: None,
        name_key: None,
    },
];

fn int(v: u64) -> Value {
    Value::Int8(i64::try_from(v).unwrap_or(i64::MAX))
}

fn text(s: &str) -> Value {
    Value::Text(Arc::from(s))
}

/// An LSN, NULL when invalid.
fn lsn(v: Lsn) -> Value {
    if v.is_valid() {
        Value::PgLsn(v.0)
    } else {
        Value::Null
    }
}

/// A 64-bit xid as PostgreSQL's 32-bit `xid`, NULL when invalid.
fn xid(v: u64) -> Value {
    if v == 0 {
        Value::Null
    } else {
        Value::Xid(v as u32)
    }
}

/// A lag in µs as interval text, NULL when unknown.
fn lag(v: u64) -> Value {
    if v == LAG_UNKNOWN {
        Value::Null
    } else {
        text(&format_interval_us(v))
    }
}

/// Microseconds as PostgreSQL prints an interval below a day: `HH:MM:SS.ffffff`.
pub fn format_interval_us(us: u64) -> String {
    let secs = us / 1_000_000;
    let frac = us % 1_000_000;
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    if frac == 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}.{frac:06}")
    }
}

/// `pg_stats`: one row per analysed column. PostgreSQL's `real` columns
/// are numeric here holding the float4 value's shortest text (so they
/// print as PostgreSQL prints them); `anyarray` columns are the array's
/// text form.
fn pg_stats(e: &Engine) -> Vec<Vec<Value>> {
    let tables = e.catalog().tables();
    let mut rows = Vec::new();
    for st in e.catalog().all_statistics() {
        let Some(t) = tables.iter().find(|t| t.oid == st.oid) else {
            continue;
        };
        for c in &st.columns {
            let Some(col) = t.columns.get(c.column) else {
                continue;
            };
            let anyarray = |vals: &mut dyn Iterator<Item = &Value>| -> Value {
                let items: Vec<Value> = vals.cloned().collect();
                if items.is_empty() {
                    return Value::Null;
                }
                match c.ty.array_of() {
                    Some(T::Array(elem)) => text(
                        &Value::Array(Arc::new(pgtypes::array::ArrayValue::new(elem, items)))
                            .to_text_string(),
                    ),
                    _ => Value::Null,
                }
            };
            let freqs: Vec<Value> = c.mcv.iter().map(|(_, f)| real(*f)).collect();
            rows.push(vec![
                text("public"),
                text(&t.name),
                text(&col.name),
                Value::Bool(false),
                real(c.null_frac),
                Value::Int4(c.avg_width),
                real(c.n_distinct),
                anyarray(&mut c.mcv.iter().map(|(v, _)| v)),
                if freqs.is_empty() {
                    Value::Null
                } else {
                    Value::Array(Arc::new(pgtypes::array::ArrayValue::new(
                        pgtypes::sqltype::ArrayElem::Numeric,
                        freqs,
                    )))
                },
                anyarray(&mut c.histogram.iter()),
                c.correlation.map(real).unwrap_or(Value::Null),
                Value::Null,
                Value::Null,
                Value::Null,
            ]);
        }
    }
    rows
}

/// A `real` (float4) as PostgreSQL prints it: the float4's shortest text.
fn real(x: f64) -> Value {
    let s = (x as f32).to_string();
    match Numeric::parse(&s) {
        Some(Ok(n)) => Value::Numeric(n),
        _ => Value::Null,
    }
}

fn stat_snapshots(e: &Engine) -> Vec<Vec<Value>> {
    let s = e.procarray().stats();
    vec![vec![
        Value::Int8(s.snapshots_computed as i64),
        Value::Int8(s.snapshots_reused as i64),
        Value::Int8(s.xact_completion_count as i64),
        Value::Int8(s.horizon_recomputes as i64),
        Value::Int8(s.horizon_recomputes_avoided as i64),
    ]]
}

fn prepared_xacts(e: &Engine) -> Vec<Vec<Value>> {
    e.twophase()
        .list()
        .into_iter()
        .map(|p| {
            vec![
                Value::Xid(p.xid.0 as u32),
                text(&p.gid),
                Value::TimestampTz(p.prepared_at),
                text(&p.owner),
                text(&p.database),
            ]
        })
        .collect()
}

const RELAXED: std::sync::atomic::Ordering = std::sync::atomic::Ordering::Relaxed;

/// pg_stat_replication's rows from the replication state.
pub fn stat_replication(st: &ReplicationState) -> Vec<Vec<Value>> {
    let senders = st.walsenders();
    let sync = st.syncrep.states(&senders);
    senders
        .iter()
        .zip(sync)
        .map(|(s, sync)| {
            vec![
                Value::Int4(s.pid.load(RELAXED)),
                text(&s.application_name),
                pgtypes::inet::Inet::parse(&s.client_addr, false).map_or(Value::Null, Value::Inet),
                xid(s.feedback_xmin.load(RELAXED)),
                text(s.state().name()),
                lsn(s.sent_lsn.load(RELAXED)),
                lsn(s.write_lsn.load(RELAXED)),
                lsn(s.flush_lsn.load(RELAXED)),
                lsn(s.replay_lsn.load(RELAXED)),
                lag(s.write_lag_us.load(RELAXED)),
                lag(s.flush_lag_us.load(RELAXED)),
                lag(s.replay_lag_us.load(RELAXED)),
                Value::Int4(i32::try_from(sync.priority).unwrap_or(i32::MAX)),
                text(sync.state),
            ]
        })
        .collect()
}

fn replication_slots(st: &ReplicationState, config: &pgtypes::config::Config) -> Vec<Vec<Value>> {
    // Where WAL is written now (a standby: received), for wal_status.
    let current = st.wal_writer().map(|w| w.insert_lsn());
    let max_slot = config.int("max_slot_wal_keep_size");
    let max_wal = (config.int("max_wal_size").max(0) as u64) << 20;
    let keep = (config.int("wal_keep_size").max(0) as u64) << 20;
    st.slots
        .list()
        .into_iter()
        .map(|s| {
            let (status, safe) = slot_wal_status(&s, current, max_slot, max_wal, keep);
            vec![
                text(&s.name),
                text("physical"),
                Value::Bool(s.active),
                xid(s.xmin),
                lsn(s.restart_lsn),
                status.map_or(Value::Null, text),
                safe.map_or(Value::Null, Value::Int8),
            ]
        })
        .collect()
}

/// `wal_status` and `safe_wal_size` of slot `s` (GetWALAvailability):
/// `reserved` within `max_wal_size` of the current position, `extended`
/// beyond it but kept (by `wal_keep_size` or a slot limit not reached),
/// `unreserved` past `max_slot_wal_keep_size` (the next checkpoint
/// invalidates it), `lost` once invalidated; NULL for a slot that never
/// reserved WAL. `safe_wal_size`: bytes that may still be written before
/// the slot is past the limit (NULL without a limit).
fn slot_wal_status(
    s: &engine::replication::SlotInfo,
    current: Option<wal::Lsn>,
    max_slot: i64,
    max_wal: u64,
    keep: u64,
) -> (Option<&'static str>, Option<i64>) {
    if s.lost {
        return (Some("lost"), None);
    }
    let (Some(cur), true) = (current, s.restart_lsn.is_valid()) else {
        return (None, None);
    };
    let behind = cur.0.saturating_sub(s.restart_lsn.0);
    let limit = (max_slot >= 0).then_some((max_slot as u64) << 20);
    let status = if behind <= max_wal {
        "reserved"
    } else if behind <= keep || limit.is_none_or(|l| behind <= l) {
        "extended"
    } else {
        "unreserved"
    };
    let safe = limit.map(|l| l as i64 - behind as i64);
    (Some(status), safe)
}

/// One database: the row PostgreSQL shows for `postgres`. Only snapshot
/// conflicts exist here (no tablespaces, no replayed locks, no buffer-pin
/// or deadlock waits in replay).
fn stat_database_conflicts(st: &ReplicationState) -> Vec<Vec<Value>> {
    vec![vec![
        Value::Oid(5),
        text("postgres"),
        int(0),
        int(0),
        int(st.snapshot_conflicts()),
        int(0),
        int(0),
    ]]
}

fn stat_wal_receiver(st: &ReplicationState) -> Vec<Vec<Value>> {
    st.receiver()
        .iter()
        .map(|r| {
            vec![
                Value::Int4(r.pid),
                text(&r.status),
                lsn(Lsn(r.receive_start_lsn)),
                Value::Int4(r.receive_start_tli as i32),
                lsn(Lsn(r.written_lsn)),
                lsn(Lsn(r.flushed_lsn)),
                Value::Int4(r.received_tli as i32),
                lsn(Lsn(r.latest_end_lsn)),
                if r.slot_name.is_empty() {
                    Value::Null
                } else {
                    text(&r.slot_name)
                },
                text(&r.sender_host),
                Value::Int4(r.sender_port),
                text(&r.conninfo),
            ]
        })
        .collect()
}

/// Zeros in recovery mode (a standby before promotion).
fn stat_wal(e: &Engine) -> Vec<Vec<Value>> {
    vec![e.xlog().stat_row().iter().map(|v| int(*v)).collect()]
}

fn pg_stat_wal(e: &Engine) -> Vec<Vec<Value>> {
    // [records, fpi, bytes, writes, fsyncs, …] in PostgreSQL's order and
    // types.
    let s = e.xlog().stat_row();
    vec![vec![
        int(s[0]),
        int(s[1]),
        Value::Numeric(Numeric::from_i128(s[2] as i128)),
        Value::Int8(0),
        int(s[3]),
        int(s[4]),
        Value::Float8(0.0),
        Value::Float8(0.0),
        Value::Null,
    ]]
}

fn pg_stat_io(e: &Engine) -> Vec<Vec<Value>> {
    use storage::pgstat_io::{tracks, IoOp, BACKEND_TYPES, CONTEXTS};
    let io = e.heap().bufmgr().io_stats();
    let counts = io.snapshot();
    let reset = Value::TimestampTz(io.reset_at());
    let mut rows = Vec::new();
    for (b, bname) in BACKEND_TYPES {
        for (c, cname) in CONTEXTS {
            if tracks(b, c, IoOp::Read).is_none() {
                continue;
            }
            let n = |op: IoOp| match tracks(b, c, op) {
                Some(true) => int(counts[b as usize][c as usize][op as usize]),
                _ => Value::Null,
            };
            let t = |op: IoOp| match tracks(b, c, op) {
                Some(true) => Value::Float8(0.0),
                _ => Value::Null,
            };
            rows.push(vec![
                text(bname),
                text("relation"),
                text(cname),
                n(IoOp::Read),
                t(IoOp::Read),
                n(IoOp::Write),
                t(IoOp::Write),
                n(IoOp::Writeback),
                t(IoOp::Writeback),
                n(IoOp::Extend),
                t(IoOp::Extend),
                Value::Int8(pgtypes::BLCKSZ as i64),
                n(IoOp::Hit),
                n(IoOp::Evict),
                n(IoOp::Reuse),
                n(IoOp::Fsync),
                t(IoOp::Fsync),
                reset.clone(),
            ]);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::replication::{WalRcvStat, WalSndStat, WalSndState};

    #[test]
    fn replication_views_have_matching_columns() {
        let st = ReplicationState::open(None).unwrap();
        let w = Arc::new(WalSndStat::new(7, "standby1", "127.0.0.1"));
        w.set_state(WalSndState::Streaming);
        st.register_walsender(w.clone());
        st.slots.create("s", Lsn(5)).unwrap();
        st.set_receiver(Some(WalRcvStat::default()));
        for (name, rows) in [
            ("pg_stat_replication", stat_replication(&st)),
            (
                "pg_replication_slots",
                replication_slots(
                    &st,
                    &pgtypes::config::Config::new(std::path::Path::new("/nonexistent")),
                ),
            ),
            ("pg_stat_wal_receiver", stat_wal_receiver(&st)),
            ("pg_stat_database_conflicts", stat_database_conflicts(&st)),
        ] {
            assert_eq!(rows.len(), 1, "{name}");
            let view = lookup(name).expect("registered");
            assert_eq!(rows[0].len(), view.columns.len(), "{name}");
        }
        st.unregister_walsender(&w);
        assert!(stat_replication(&st).is_empty());
        assert_eq!(format_interval_us(1_500_000), "00:00:01.500000");
    }

    #[test]
    fn names_are_unique() {
        for (i, v) in SYSTEM_VIEWS.iter().enumerate() {
            assert!(
                SYSTEM_VIEWS[i + 1..].iter().all(|w| w.name != v.name),
                "{} twice",
                v.name
            );
        }
    }
}
