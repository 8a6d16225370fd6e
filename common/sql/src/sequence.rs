//! CREATE / DROP SEQUENCE, serial columns, and nextval / currval / setval /
//! lastval (PostgreSQL's `commands/sequence.c`; the counter and its WAL
//! logging are `engine::sequence`).
//!
//! A sequence created in a transaction is removed if it rolls back
//! ([`PendingDdl::CreateSequence`]; start-up removes one a crash left
//! uncommitted). DROP SEQUENCE happens at COMMIT. `nextval` is not
//! transactional: its values stay used after a ROLLBACK. `currval` and
//! `lastval` are per session ([`SessionSequences`]).
//!
//! ALTER SEQUENCE ([`alter_sequence`]) computes the new definition and
//! counter as PostgreSQL's `init_params` ([`altered_spec`]) and applies
//! them at once as one `CatalogChange::AlterSequence`, under the old
//! def's `nextval_lock`, as a version marked with the altering xid:
//! other transactions see the def before it, ROLLBACK puts that back
//! ([`PendingDdl::AlterSequence`]). `nextval` / `setval` / ALTER run
//! through `locked`, which waits for another transaction's uncommitted
//! ALTER and moves on to the catalog's current def if an ALTER replaced
//! the one they found.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
use engine::catalog::CatalogChange;
use engine::sequence::{SequenceDef, SequencePrevious, SequenceSpec};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::{Oid, TransactionId};
use txn::clog::XidStatus;

/// A session's `currval` values by sequence OID, and `lastval`'s sequence.
#[derive(Default, Debug)]
pub struct SessionSequences {
    /// The session's transaction is READ ONLY (nextval / setval refused).
    pub read_only: bool,
    /// The current user's privilege facts (None: no checks, the
    /// session's own statements).
    pub user: Option<std::sync::Arc<crate::privileges::AclUser>>,
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

/// How a caller of nextval / setval / ALTER SEQUENCE waits for another
/// transaction's uncommitted ALTER SEQUENCE of the same sequence: its own
/// xids (whose ALTERs it does not wait for) and the wait itself.
pub struct SeqWait<'a> {
    /// The caller's (sub)transaction ids, sorted.
    pub own: &'a [TransactionId],
    /// Waits until that transaction has ended.
    pub wait: &'a mut dyn FnMut(TransactionId) -> PgResult<()>,
}

/// Runs a sequence function for the session whose state is `ss`.
#[allow(clippy::too_many_arguments)]
pub fn call(
    db: &Engine,
    ss: &mut SessionSequences,
    f: SeqFunc,
    name: Option<&str>,
    value: Option<(i64, bool)>,
    read_only: bool,
    view: &engine::catalog::CatalogView<'_>,
    w: &mut SeqWait<'_>,
) -> PgResult<i64> {
    if f == SeqFunc::Lastval {
        let Some((oid, n)) = &ss.last else {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "lastval is not yet defined in this session",
            ));
        };
        // By key, else by OID (ALTER SEQUENCE may have renamed it).
        let exists = db.catalog().sequence(n).is_some_and(|s| s.spec.oid == *oid)
            || db.catalog().sequence_by_oid(*oid).is_some();
        if !exists {
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
    if let Some(u) = ss.user.as_deref().filter(|u| !u.superuser) {
        use engine::acl::{ACL_SELECT, ACL_UPDATE, ACL_USAGE};
        // Any one of these rights will do, as PostgreSQL's checks.
        let need = match f {
            SeqFunc::Nextval => ACL_USAGE | ACL_UPDATE,
            SeqFunc::Setval => ACL_UPDATE,
            _ => ACL_SELECT | ACL_USAGE,
        };
        let rel = crate::privileges::RelInfo {
            oid: seq.spec.oid,
            name: seq.spec.name.clone(),
            namespace: seq.spec.namespace,
            kind: engine::acl::ObjType::Sequence,
            word: "sequence",
        };
        if crate::privileges::relation_privileges(view, u, &rel, need) == 0 {
            return Err(crate::privileges::denied("sequence", &seq.spec.name));
        }
    }
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
            let v = locked(db, seq.clone(), w, |seq| nextval_locked(db, seq))?;
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
            locked(db, seq.clone(), w, |seq| {
                db.catalog()
                    .apply_catalog_change(&CatalogChange::SetSequence {
                        name: seq.spec.key(),
                        value: v,
                        called,
                    })
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

/// Runs `f` on `seq` with its `nextval_lock` held — on the catalog's
/// current def of the same sequence if ALTER SEQUENCE replaced `seq`
/// meanwhile, after waiting for another transaction's ALTER of it to end
/// (PostgreSQL's ALTER SEQUENCE lock conflicts with nextval's).
fn locked<R>(
    db: &Engine,
    mut seq: Arc<SequenceDef>,
    w: &mut SeqWait<'_>,
    f: impl FnOnce(&SequenceDef) -> PgResult<R>,
) -> PgResult<R> {
    loop {
        if !seq.is_retired() {
            let x = TransactionId(seq.altered_by.load(Ordering::Acquire));
            if x.is_valid()
                && w.own.binary_search(&x).is_err()
                && db.clog().get_status(x) != XidStatus::Committed
            {
                (w.wait)(x)?;
                // Ended without committing and its session did not undo
                // it (it went away): put the committed def back, as
                // start-up would.
                if seq.altered_by.load(Ordering::Acquire) == x.0
                    && !seq.is_retired()
                    && db.clog().get_status(x) != XidStatus::Committed
                {
                    engine::indexing::undo_sequence_alter(db, &seq)?;
                }
            } else {
                let _g = seq.nextval_lock.lock();
                if !seq.is_retired() {
                    return f(&seq);
                }
            }
        }
        let oid = seq.spec.oid;
        seq = db
            .catalog()
            .sequence_by_oid(oid)
            .ok_or_else(|| undefined_sequence(&seq.spec.name))?;
    }
}

fn nextval_locked(db: &Engine, seq: &SequenceDef) -> PgResult<i64> {
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

/// CREATE SEQUENCE as the hand parser reads it (options in any order,
/// `AS type`, `OWNED BY`): the same checks as [`create_sequence`].
fn create_with_options(
    cx: &mut DdlCtx<'_>,
    if_not_exists: bool,
    name: &str,
    o: &SeqOptions,
) -> PgResult<String> {
    let ty = match &o.as_type {
        Some(t) => SqlType::from_name(t).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{t}\" does not exist"),
            )
        })?,
        None => SqlType::Int8,
    };
    let num = |v: i64| ast::Expr::Value(ast::Value::Number(v.to_string(), false));
    let mut options = Vec::new();
    if let Some(v) = o.increment {
        options.push(ast::SequenceOptions::IncrementBy(num(v), true));
    }
    if let Some(v) = o.min {
        options.push(ast::SequenceOptions::MinValue(v.map(num)));
    }
    if let Some(v) = o.max {
        options.push(ast::SequenceOptions::MaxValue(v.map(num)));
    }
    if let Some(v) = o.start {
        options.push(ast::SequenceOptions::StartWith(num(v), true));
    }
    if let Some(v) = o.cache {
        options.push(ast::SequenceOptions::Cache(num(v)));
    }
    if let Some(c) = o.cycle {
        options.push(ast::SequenceOptions::Cycle(!c));
    }
    let q = crate::namespace::QualName::parse_text(name)?;
    let tag = create_typed(
        cx,
        if_not_exists,
        q.clone(),
        ty,
        &options,
        o.owned_by.as_ref(),
    )?;
    // RESTART in CREATE: the first value nextval hands out.
    if let Some(r) = o.restart {
        if let Some(seq) = crate::namespace::find_sequence(&cx.catalog(), &q) {
            let value = r.unwrap_or(seq.spec.start);
            let (min, max) = (seq.spec.min, seq.spec.max);
            let bound = if value < min {
                Some(format!("cannot be less than MINVALUE ({min})"))
            } else if value > max {
                Some(format!("cannot be greater than MAXVALUE ({max})"))
            } else {
                None
            };
            if let Some(b) = bound {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("RESTART value ({value}) {b}"),
                ));
            }
            cx.db
                .catalog()
                .apply_catalog_change(&CatalogChange::SetSequence {
                    name: seq.spec.key(),
                    value,
                    called: false,
                })?;
        }
    }
    Ok(tag)
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
    let ty = match data_type {
        Some(t) => SqlType::from_data_type(t)?,
        None => SqlType::Int8,
    };
    create_typed(cx, if_not_exists, qname, ty, options, None)
}

/// CREATE SEQUENCE of type `ty` with `options` (and OWNED BY).
fn create_typed(
    cx: &mut DdlCtx<'_>,
    if_not_exists: bool,
    qname: crate::namespace::QualName,
    ty: SqlType,
    options: &[ast::SequenceOptions],
    owner: Option<&Option<Vec<String>>>,
) -> PgResult<String> {
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
    let mut spec = sequence_spec(cx.db.catalog().allocate_oid(), &name, ty, options)?;
    spec.namespace = ns;
    if let Some(Some(parts)) = owner {
        spec.owned_by = Some(owned_by(cx, &spec, parts)?);
    }
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
    cascade: bool,
) -> PgResult<String> {
    let mut found = Vec::new();
    for n in names {
        let q = crate::namespace::QualName::of(n)?;
        match crate::namespace::find_sequence(&cx.catalog(), &q) {
            Some(s) => {
                drop_default_dependents(cx, &s, cascade)?;
                found.push(s.spec.key())
            }
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

/// The columns whose DEFAULT calls `nextval` on `seq`: an identity
/// column's refuses the DROP (2BP01, even with CASCADE, as PostgreSQL's
/// internal dependency); a default refuses it without CASCADE and is
/// removed with it (`drop cascades to default value for column …`).
fn drop_default_dependents(
    cx: &mut DdlCtx<'_>,
    seq: &engine::sequence::SequenceDef,
    cascade: bool,
) -> PgResult<()> {
    let view = cx.catalog();
    let mut users: Vec<(Arc<engine::catalog::TableDef>, usize)> = Vec::new();
    for t in cx.db.catalog().tables() {
        for (i, c) in t.columns.iter().enumerate() {
            let Some(d) = c.default.as_deref() else {
                continue;
            };
            let uses = nextval_targets(d).iter().any(|name| {
                crate::namespace::QualName::parse_text(name)
                    .ok()
                    .and_then(|q| crate::namespace::find_sequence(&view, &q))
                    .is_some_and(|s| s.spec.oid == seq.spec.oid)
            });
            if uses {
                users.push((t.clone(), i));
            }
        }
    }
    if users.is_empty() {
        return Ok(());
    }
    let name = &seq.spec.name;
    if let Some((t, i)) = users.iter().find(|(t, i)| t.columns[*i].identity.is_some()) {
        let col = &t.columns[*i].name;
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!(
                "cannot drop sequence {name} because column {col} of table {} requires it",
                t.name
            ),
        )
        .with_hint(format!(
            "You can drop column {col} of table {} instead.",
            t.name
        )));
    }
    let what: Vec<String> = users
        .iter()
        .map(|(t, i)| {
            format!(
                "default value for column {} of table {}",
                t.columns[*i].name, t.name
            )
        })
        .collect();
    if !cascade {
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop sequence {name} because other objects depend on it"),
        )
        .with_detail(
            what.iter()
                .map(|w| format!("{w} depends on sequence {name}"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    cx.notices.push(crate::ddl::cascade_notice(&what));
    for (t, i) in users {
        let t = crate::tablecmds::lock_for_alter(cx, t.oid)?;
        let mut spec = t.spec();
        if let Some(c) = spec.columns.get_mut(i) {
            c.default = None;
        }
        crate::tablecmds::alter_definition(cx, &t, spec)?;
    }
    Ok(())
}

/// The sequence names a DEFAULT's text passes to `nextval('…')`.
fn nextval_targets(default: &str) -> Vec<String> {
    use std::ops::ControlFlow;
    let Ok(e) = crate::parser::parse_expr_text(default) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let _ = ast::visit_expressions(&e, |x| {
        if let ast::Expr::Function(f) = x {
            if crate::planner::object_name(&f.name) == "nextval" {
                if let ast::FunctionArguments::List(l) = &f.args {
                    if let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))) =
                        l.args.first()
                    {
                        let mut a = a;
                        while let ast::Expr::Cast { expr, .. } = a {
                            a = expr;
                        }
                        if let ast::Expr::Value(ast::Value::SingleQuotedString(s)) = a {
                            out.push(s.clone());
                        }
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    out
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

pub use crate::parser::seqstmt::{SeqOptions, SeqStmt};

/// The name `format_type` gives a sequence's type in messages.
fn type_display(ty: SqlType) -> &'static str {
    match ty {
        SqlType::Int2 => "smallint",
        SqlType::Int4 => "integer",
        _ => "bigint",
    }
}

/// The bounds of a sequence type.
fn type_bounds(ty: SqlType) -> (i64, i64) {
    match ty {
        SqlType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        SqlType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (i64::MIN, i64::MAX),
    }
}

fn invalid(msg: String) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

/// ALTER SEQUENCE's options applied to the definition `spec` whose
/// counter is `(last, called)`, checked in the order and with the
/// messages of PostgreSQL's `init_params`: the new definition and counter.
pub fn altered_spec(
    spec: &SequenceSpec,
    (last, called): (i64, bool),
    o: &SeqOptions,
) -> PgResult<(SequenceSpec, i64, bool)> {
    let mut s = spec.clone();
    let (mut reset_min, mut reset_max) = (false, false);
    if let Some(name) = &o.as_type {
        let ty = SqlType::from_name(name).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{name}\" does not exist"),
            )
        })?;
        if !matches!(ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8) {
            return Err(invalid(
                "sequence type must be smallint, integer, or bigint".into(),
            ));
        }
        // Bounds that were the old type's own follow the new type;
        // explicit ones stay.
        let (old_min, old_max) = type_bounds(s.ty);
        reset_min = s.min == old_min;
        reset_max = s.max == old_max;
        s.ty = ty;
    }
    if let Some(i) = o.increment {
        if i == 0 {
            return Err(invalid("INCREMENT must not be zero".into()));
        }
        s.increment = i;
    }
    if let Some(c) = o.cycle {
        s.cycle = c;
    }
    let (type_min, type_max) = type_bounds(s.ty);
    match o.max {
        Some(Some(v)) => s.max = v,
        Some(None) => {
            s.max = if s.increment > 0 || reset_max {
                type_max
            } else {
                -1
            }
        }
        None if reset_max => s.max = type_max,
        None => {}
    }
    if s.max < type_min || s.max > type_max {
        return Err(invalid(format!(
            "MAXVALUE ({}) is out of range for sequence data type {}",
            s.max,
            type_display(s.ty)
        )));
    }
    match o.min {
        Some(Some(v)) => s.min = v,
        Some(None) => {
            s.min = if s.increment < 0 || reset_min {
                type_min
            } else {
                1
            }
        }
        None if reset_min => s.min = type_min,
        None => {}
    }
    if s.min < type_min || s.min > type_max {
        return Err(invalid(format!(
            "MINVALUE ({}) is out of range for sequence data type {}",
            s.min,
            type_display(s.ty)
        )));
    }
    if s.min >= s.max {
        return Err(invalid(format!(
            "MINVALUE ({}) must be less than MAXVALUE ({})",
            s.min, s.max
        )));
    }
    if let Some(v) = o.start {
        s.start = v;
    }
    if s.start < s.min {
        return Err(invalid(format!(
            "START value ({}) cannot be less than MINVALUE ({})",
            s.start, s.min
        )));
    }
    if s.start > s.max {
        return Err(invalid(format!(
            "START value ({}) cannot be greater than MAXVALUE ({})",
            s.start, s.max
        )));
    }
    let (value, called) = match o.restart {
        Some(v) => (v.unwrap_or(s.start), false),
        None => (last, called),
    };
    // PostgreSQL checks the current value too when only the bounds
    // change, with RESTART's words.
    if value < s.min {
        return Err(invalid(format!(
            "RESTART value ({value}) cannot be less than MINVALUE ({})",
            s.min
        )));
    }
    if value > s.max {
        return Err(invalid(format!(
            "RESTART value ({value}) cannot be greater than MAXVALUE ({})",
            s.max
        )));
    }
    if let Some(c) = o.cache {
        if c <= 0 {
            return Err(invalid(format!("CACHE ({c}) must be greater than zero")));
        }
        s.cache = c;
    }
    Ok((s, value, called))
}

/// `OWNED BY table.column`: the owning table's key and the column, as
/// PostgreSQL's `process_owned_by` checks them.
fn owned_by(cx: &DdlCtx<'_>, seq: &SequenceSpec, parts: &[String]) -> PgResult<(String, String)> {
    let [rel @ .., column] = parts else {
        return Err(PgError::internal("empty OWNED BY"));
    };
    if rel.is_empty() {
        return Err(
            PgError::new(sqlstate::SYNTAX_ERROR, "invalid OWNED BY option")
                .with_hint("Specify OWNED BY table.column or OWNED BY NONE."),
        );
    }
    let q = match rel {
        [t] => crate::namespace::QualName::bare(t),
        [.., s, t] => crate::namespace::QualName {
            schema: Some(s.clone()),
            name: t.clone(),
        },
        [] => return Err(PgError::internal("empty OWNED BY")),
    };
    let view = cx.catalog();
    let Some(t) = crate::namespace::find_table(&view, &q) else {
        if crate::namespace::find_view(&view, &q).is_some()
            || crate::namespace::find_sequence(&view, &q).is_some()
        {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("sequence cannot be owned by relation \"{}\"", q.name),
            )
            .with_detail(format!(
                "This operation is not supported for {}.",
                if crate::namespace::find_view(&view, &q).is_some() {
                    "views"
                } else {
                    "sequences"
                }
            )));
        }
        return Err(undefined_sequence(&q.display()));
    };
    if t.namespace != seq.namespace {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "sequence must be in same schema as table it is linked to",
        ));
    }
    if t.column_index(column).is_none() {
        return Err(PgError::new(
            sqlstate::UNDEFINED_COLUMN,
            format!(
                "column \"{column}\" of relation \"{}\" does not exist",
                t.name
            ),
        ));
    }
    Ok((t.key(), column.clone()))
}

/// True if `seq` belongs to an identity column (its ownership is fixed).
fn identity_owned(cx: &DdlCtx<'_>, seq: &SequenceSpec) -> Option<String> {
    let (table, column) = seq.owned_by.as_ref()?;
    let t = cx.db.catalog().table(table).ok()?;
    let c = t.columns.get(t.column_index(column)?)?;
    c.identity.is_some().then(|| t.name.clone())
}

/// ALTER SEQUENCE: applied at once through `CatalogChange::AlterSequence`
/// as an uncommitted version (`SequenceSpec::altered_by`); ROLLBACK puts
/// the definition before it back ([`PendingDdl::AlterSequence`]).
pub fn alter_sequence(cx: &mut DdlCtx<'_>, stmt: &SeqStmt) -> PgResult<String> {
    let (if_exists, name) = match stmt {
        SeqStmt::Create {
            if_not_exists,
            name,
            options,
        } => return create_with_options(cx, *if_not_exists, name, options),
        SeqStmt::Alter {
            if_exists, name, ..
        }
        | SeqStmt::Rename {
            if_exists, name, ..
        }
        | SeqStmt::SetSchema {
            if_exists, name, ..
        } => (*if_exists, name),
        SeqStmt::OwnerTo {
            if_exists,
            name,
            owner,
        } => {
            let q = crate::namespace::QualName::parse_text(name)?;
            let view = cx.catalog();
            let seq = crate::namespace::find_sequence(&view, &q)
                .and_then(|s| crate::privileges::relation_info(&view, s.spec.oid));
            let Some(rel) = seq else {
                if *if_exists {
                    cx.notices.push(PgError::notice(
                        sqlstate::SUCCESSFUL_COMPLETION,
                        format!("relation \"{}\" does not exist, skipping", q.name),
                    ));
                    return Ok("ALTER SEQUENCE".into());
                }
                return Err(undefined_sequence(&q.display()));
            };
            crate::aclchk::alter_owner(cx, &rel, owner)?;
            return Ok("ALTER SEQUENCE".into());
        }
    };
    let q = crate::namespace::QualName::parse_text(name)?;
    let Some(seq) = crate::namespace::find_sequence(&cx.catalog(), &q) else {
        let view = cx.catalog();
        if crate::namespace::find_table(&view, &q).is_some()
            || crate::namespace::find_view(&view, &q).is_some()
        {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a sequence", q.name),
            ));
        }
        if if_exists {
            cx.notices.push(PgError::notice(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{}\" does not exist, skipping", q.display()),
            ));
            return Ok(stmt.tag().into());
        }
        return Err(undefined_sequence(&q.display()));
    };
    // The definition's new form, decided with nextval held off.
    let xid = cx.xact.assign_xid()?;
    let own = cx.xact.own().xids.to_vec();
    let (cancel, limits) = (cx.cancel, cx.limits);
    let xact = &*cx.xact;
    let mut wait = |x: TransactionId| xact.wait_for_xid(x, cancel, limits);
    let mut w = SeqWait {
        own: &own,
        wait: &mut wait,
    };
    let cxr: &DdlCtx<'_> = cx;
    let (moved, undo) = locked(cx.db, seq, &mut w, |seq| alter_locked(cxr, seq, stmt, xid))?;
    cx.pending.push(undo);
    if let Some(key) = moved {
        // The creating transaction's commit or rollback finds it by its
        // new key.
        cx.pending.push(PendingDdl::CreateSequence(key));
    }
    Ok(stmt.tag().into())
}

/// ALTER SEQUENCE on `seq` (its `nextval_lock` held): the new key of a
/// sequence still uncommitted that RENAME or SET SCHEMA moved.
fn alter_locked(
    cx: &DdlCtx<'_>,
    seq: &SequenceDef,
    stmt: &SeqStmt,
    xid: TransactionId,
) -> PgResult<(Option<String>, PendingDdl)> {
    let before = seq.current_spec();
    let mut spec = before.unmarked();
    // As PostgreSQL, a change of the counter's rules rewrites the
    // sequence's data, and a ROLLBACK brings the old counter back; RENAME,
    // SET SCHEMA and OWNED BY alone keep the counter as it runs.
    let rewrites = match stmt {
        SeqStmt::Alter { options, .. } => !options.only_owned_by(),
        _ => false,
    };
    let (mut spec, value, called) = match stmt {
        SeqStmt::Create { .. } | SeqStmt::OwnerTo { .. } => {
            return Err(PgError::internal("CREATE SEQUENCE or OWNER TO as an ALTER"))
        }
        SeqStmt::Alter { options, .. } => {
            let (mut s, value, called) = altered_spec(&spec, seq.counter(), options)?;
            if let Some(owner) = &options.owned_by {
                if let Some(table) = identity_owned(cx, &spec) {
                    return Err(PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        "cannot change ownership of identity sequence",
                    )
                    .with_detail(format!(
                        "Sequence \"{}\" is linked to table \"{table}\".",
                        spec.name
                    )));
                }
                s.owned_by = match owner {
                    Some(parts) => Some(owned_by(cx, &s, parts)?),
                    None => None,
                };
            }
            (s, value, called)
        }
        SeqStmt::Rename { to, .. } => {
            spec.name = to.clone();
            let (v, c) = seq.counter();
            (spec, v, c)
        }
        SeqStmt::SetSchema { schema, .. } => {
            let ns = cx.catalog().schema_oid(schema).ok_or_else(|| {
                PgError::new(
                    sqlstate::INVALID_SCHEMA_NAME,
                    format!("schema \"{schema}\" does not exist"),
                )
            })?;
            if let Some((table, _)) = &spec.owned_by {
                let table = cx
                    .db
                    .catalog()
                    .table(table)
                    .map(|t| t.name.clone())
                    .unwrap_or_else(|_| table.clone());
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "cannot move an owned sequence into another schema",
                )
                .with_detail(format!(
                    "Sequence \"{}\" is linked to table \"{table}\".",
                    spec.name
                )));
            }
            if ns != spec.namespace && crate::ddl::relation_exists(cx.db, ns, &spec.name) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!(
                        "relation \"{}\" already exists in schema \"{schema}\"",
                        spec.name
                    ),
                ));
            }
            spec.namespace = ns;
            let (v, c) = seq.counter();
            (spec, v, c)
        }
    };
    let old_key = seq.spec.key();
    let new_key = spec.key();
    if new_key != old_key && crate::ddl::relation_exists(cx.db, spec.namespace, &spec.name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            format!("relation \"{}\" already exists", spec.name),
        ));
    }
    let uncommitted = spec.creator.is_valid();
    let counter = seq.counter();
    if uncommitted {
        // Created by this transaction: nobody else sees it anyway.
    } else if before.altered_by.is_valid() {
        // Already altered by this transaction: others still see the
        // committed def; a rewrite now needs the counter this one found
        // if the first ALTER kept it running.
        spec.altered_by = before.altered_by;
        spec.previous = before.previous.clone().map(|mut p| {
            if rewrites && p.counter.is_none() {
                p.counter = Some(counter);
            }
            p
        });
    } else {
        spec.altered_by = xid;
        spec.previous = Some(Box::new(SequencePrevious {
            spec: before.unmarked(),
            counter: rewrites.then_some(counter),
        }));
    }
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterSequence {
            name: old_key,
            spec,
            value,
            called,
        })?;
    let undo = PendingDdl::AlterSequence {
        oid: seq.spec.oid,
        before,
        counter: rewrites.then_some(counter),
    };
    Ok((
        (uncommitted && new_key != seq.spec.key()).then_some(new_key),
        undo,
    ))
}

/// COMMIT of a [`PendingDdl::AlterSequence`]: the mark goes.
pub(crate) fn commit_pending(db: &Engine, p: PendingDdl) {
    if let PendingDdl::AlterSequence { oid, .. } = p {
        if let Some(s) = db.catalog().sequence_by_oid(oid) {
            s.altered_by.store(0, Ordering::Release);
        }
    }
}

/// ROLLBACK of a [`PendingDdl::AlterSequence`]: the definition before it
/// comes back, with the counter before it if the ALTER replaced the
/// counter, else the counter as it runs.
pub(crate) fn abort_pending(db: &Engine, p: PendingDdl) {
    let PendingDdl::AlterSequence {
        oid,
        before,
        counter,
    } = p
    else {
        return;
    };
    let Some(s) = db.catalog().sequence_by_oid(oid) else {
        return;
    };
    let _g = s.nextval_lock.lock();
    // A committed sequence altered by this transaction is marked; unmarked,
    // a waiting session has already put it back (`locked`), and may have
    // handed out values since: nothing to undo.
    let creator = TransactionId(s.creator.load(Ordering::Acquire));
    let created_here = creator.is_valid() && db.clog().get_status(creator) != XidStatus::Committed;
    if s.is_retired() || (!created_here && s.altered_by.load(Ordering::Acquire) == 0) {
        return;
    }
    let (value, called) = counter.unwrap_or_else(|| s.counter());
    let r = db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterSequence {
            name: s.spec.key(),
            spec: before,
            value,
            called,
        });
    if let Err(e) = r {
        tracing::warn!(
            "could not undo ALTER SEQUENCE \"{}\" after its rollback: {}",
            s.spec.name,
            e.message
        );
    }
}
