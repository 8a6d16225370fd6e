//! CREATE / DROP SEQUENCE, serial columns, and nextval / currval / setval /
//! lastval (PostgreSQL's `commands/sequence.c`; the counter and its WAL
//! logging are `engine::sequence`).
//!
//! A sequence created in a transaction is removed if it rolls back
//! ([`PendingDdl::CreateSequence`]; start-up removes one a crash left
//! uncommitted). DROP SEQUENCE happens at COMMIT. `nextval` is not
//! transactional: its values stay used after a ROLLBACK. `currval` and
//! `lastval` are per session ([`SessionSequences`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
use engine::catalog::CatalogChange;
use engine::sequence::{SequenceDef, SequenceSpec};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::Oid;

/// A session's `currval` values by sequence OID, and `lastval`'s sequence.
#[derive(Default, Debug)]
pub struct SessionSequences {
    /// The session's transaction is READ ONLY (nextval / setval refused).
    pub read_only: bool,
    currval: HashMap<Oid, i64>,
    last: Option<(Oid, String)>,
}

pub use crate::functions::SeqFunc;

fn undefined_sequence(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    )
}

/// Runs a sequence function for the session whose state is `ss`.
pub fn call(
    db: &Engine,
    ss: &mut SessionSequences,
    f: SeqFunc,
    name: Option<&str>,
    value: Option<(i64, bool)>,
    read_only: bool,
    view: &engine::catalog::CatalogView<'_>,
) -> PgResult<i64> {
    if f == SeqFunc::Lastval {
        let Some((oid, n)) = &ss.last else {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "lastval is not yet defined in this session",
            ));
        };
        if db.catalog().sequence(n).is_none_or(|s| s.spec.oid != *oid) {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "lastval is not yet defined in this session",
            ));
        }
        return ss.currval.get(oid).copied().ok_or_else(|| {
            PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "lastval is not yet defined in this session",
            )
        });
    }
    let q = crate::namespace::QualName::parse_text(name.unwrap_or_default())?;
    let seq = crate::namespace::find_sequence(view, &q)
        .ok_or_else(|| undefined_sequence(&q.display()))?;
    let name = q.name;
    match f {
        SeqFunc::Currval => ss.currval.get(&seq.spec.oid).copied().ok_or_else(|| {
            PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("currval of sequence \"{name}\" is not yet defined in this session"),
            )
        }),
        SeqFunc::Nextval => {
            if read_only {
                return Err(PgError::new(
                    sqlstate::READ_ONLY_SQL_TRANSACTION,
                    "cannot execute nextval() in a read-only transaction",
                ));
            }
            let v = nextval(db, &seq)?;
            ss.currval.insert(seq.spec.oid, v);
            ss.last = Some((seq.spec.oid, seq.spec.key()));
            Ok(v)
        }
        SeqFunc::Setval => {
            if read_only {
                return Err(PgError::new(
                    sqlstate::READ_ONLY_SQL_TRANSACTION,
                    "cannot execute setval() in a read-only transaction",
                ));
            }
            let (v, called) = value.unwrap_or((0, true));
            let s = &seq.spec;
            if v < s.min || v > s.max {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!(
                        "setval: value {v} is out of bounds for sequence \"{name}\" ({}..{})",
                        s.min, s.max
                    ),
                ));
            }
            let _g = seq.nextval_lock.lock();
            db.catalog()
                .apply_catalog_change(&CatalogChange::SetSequence {
                    name: seq.spec.key(),
                    value: v,
                    called,
                })?;
            if called {
                ss.currval.insert(seq.spec.oid, v);
                ss.last = Some((seq.spec.oid, name));
            }
            Ok(v)
        }
        SeqFunc::Lastval => Err(PgError::internal("unreachable")),
    }
}

/// Hands out the next value: WAL-logged ahead first when the logged
/// range is used up (engine::sequence).
fn nextval(db: &Engine, seq: &SequenceDef) -> PgResult<i64> {
    let _g = seq.nextval_lock.lock();
    let st = &seq.state;
    let last = st.last_value.load(Ordering::Acquire);
    let called = st.is_called.load(Ordering::Acquire);
    let next = seq.advance(last, called)?;
    let wrapped = called
        && ((seq.spec.increment > 0 && next < last) || (seq.spec.increment < 0 && next > last));
    if wrapped || seq.needs_log(next) {
        db.catalog()
            .apply_catalog_change(&CatalogChange::SetSequence {
                name: seq.spec.key(),
                value: seq.log_ahead(next),
                called: true,
            })?;
    }
    st.last_value.store(next, Ordering::Release);
    st.is_called.store(true, Ordering::Release);
    Ok(next)
}

fn const_i64(e: &ast::Expr) -> PgResult<i64> {
    let text = e.to_string();
    text.replace(' ', "").parse::<i64>().map_err(|_| {
        PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("invalid sequence option value: {text}"),
        )
    })
}

/// CREATE SEQUENCE.
pub fn create_sequence(
    cx: &mut DdlCtx<'_>,
    if_not_exists: bool,
    name: &ast::ObjectName,
    data_type: Option<&ast::DataType>,
    options: &[ast::SequenceOptions],
) -> PgResult<String> {
    let qname = crate::namespace::QualName::of(name)?;
    let ns = crate::namespace::creation_namespace(&cx.catalog(), &qname)?;
    let name = qname.name;
    if crate::ddl::relation_exists(cx.db, ns, &name) {
        let msg = format!("relation \"{name}\" already exists");
        if if_not_exists {
            cx.notices.push(PgError::notice(
                sqlstate::DUPLICATE_TABLE,
                format!("{msg}, skipping"),
            ));
            return Ok("CREATE SEQUENCE".into());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, msg));
    }
    let ty = match data_type {
        Some(t) => SqlType::from_data_type(t)?,
        None => SqlType::Int8,
    };
    let mut spec = sequence_spec(cx.db.catalog().allocate_oid(), &name, ty, options)?;
    spec.namespace = ns;
    add_sequence(cx, spec)?;
    Ok("CREATE SEQUENCE".into())
}

/// A sequence definition from CREATE SEQUENCE's (or an identity
/// column's) options, checked as PostgreSQL checks them.
pub fn sequence_spec(
    oid: Oid,
    name: &str,
    ty: SqlType,
    options: &[ast::SequenceOptions],
) -> PgResult<SequenceSpec> {
    if !matches!(ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8) {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "sequence type must be smallint, integer, or bigint",
        ));
    }
    let mut spec = SequenceSpec::new(oid, name, ty);
    let type_max = spec.max;
    let (mut min, mut max, mut start) = (None, None, None);
    for o in options {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => spec.increment = const_i64(e)?,
            ast::SequenceOptions::MinValue(e) => min = e.as_ref().map(const_i64).transpose()?,
            ast::SequenceOptions::MaxValue(e) => max = e.as_ref().map(const_i64).transpose()?,
            ast::SequenceOptions::StartWith(e, _) => start = Some(const_i64(e)?),
            ast::SequenceOptions::Cache(e) => spec.cache = const_i64(e)?,
            ast::SequenceOptions::Cycle(no) => spec.cycle = !*no,
        }
    }
    if spec.increment == 0 {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "INCREMENT must not be zero",
        ));
    }
    let type_min = -type_max - 1;
    if spec.increment > 0 {
        spec.min = min.unwrap_or(1);
        spec.max = max.unwrap_or(type_max);
    } else {
        spec.min = min.unwrap_or(type_min);
        spec.max = max.unwrap_or(-1);
    }
    if spec.min >= spec.max {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "MINVALUE ({}) must be less than MAXVALUE ({})",
                spec.min, spec.max
            ),
        ));
    }
    spec.start = start.unwrap_or(if spec.increment > 0 {
        spec.min
    } else {
        spec.max
    });
    if spec.start < spec.min {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "START value ({}) cannot be less than MINVALUE ({})",
                spec.start, spec.min
            ),
        ));
    }
    if spec.start > spec.max {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "START value ({}) cannot be greater than MAXVALUE ({})",
                spec.start, spec.max
            ),
        ));
    }
    Ok(spec)
}

/// Creates `spec` in the catalog as this transaction's (undone if it
/// rolls back).
pub fn add_sequence(cx: &mut DdlCtx<'_>, mut spec: SequenceSpec) -> PgResult<()> {
    spec.creator = cx.xact.assign_xid()?;
    let name = spec.key();
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateSequence(spec))?;
    cx.pending.push(PendingDdl::CreateSequence(name));
    Ok(())
}

/// DROP SEQUENCE: carried out at COMMIT.
pub fn drop_sequences(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> PgResult<String> {
    let mut found = Vec::new();
    for n in names {
        let q = crate::namespace::QualName::of(n)?;
        match crate::namespace::find_sequence(&cx.catalog(), &q) {
            Some(s) => found.push(s.spec.key()),
            None => cx.notices.push(crate::ddl::missing_to_drop(
                "sequence",
                sqlstate::UNDEFINED_TABLE,
                &q.display(),
                if_exists,
            )?),
        }
    }
    for name in found {
        cx.pending.push(PendingDdl::DropSequence(name));
    }
    Ok("DROP SEQUENCE".into())
}

/// True for `serial`, `bigserial`, `smallserial` and their aliases: the
/// column's integer type.
pub fn serial_type(t: &ast::DataType) -> Option<SqlType> {
    match t.to_string().to_lowercase().as_str() {
        "serial" | "serial4" => Some(SqlType::Int4),
        "bigserial" | "serial8" => Some(SqlType::Int8),
        "smallserial" | "serial2" => Some(SqlType::Int2),
        _ => None,
    }
}
