//! The function manager for functions users created: the call
//! (PostgreSQL's `utils/fmgr`, and `executor/functions.c` for LANGUAGE
//! sql bodies). Resolution, the binder's half, is `crate::parse_func`.
//!
//! Evaluation reaches [`call`] through `EvalContext::call_user_function`
//! (the executor's [`Ectx`] implements it). STRICT functions return NULL
//! for a NULL argument without running. LANGUAGE sql bodies run their
//! statements in order through SPI (`crate::spi`), parameter names
//! replaced by `$n`, and return the first column of the last statement's
//! first row; LANGUAGE plpgsql bodies go to `crate::plpgsql`. Nesting is
//! bounded ([`MAX_DEPTH`], 54001 like PostgreSQL's stack depth limit).

use std::cell::Cell;
use std::sync::Arc;

use crate::executor::Ectx;
use crate::functions::EvalContext;
use crate::spi::{self, SnapshotMode};
use engine::pg_proc::{FunctionDef, FunctionSpec, LANG_PLPGSQL, LANG_SQL};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cast_assign, Value};
use pgtypes::Oid;

/// Nested user-function calls before 54001.
pub const MAX_DEPTH: u32 = 100;

thread_local! {
    /// User-function calls running on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The function `oid`'s definition, or XX000 (it went between binding
/// and the call).
pub fn lookup(ec: &Ectx<'_>, oid: Oid) -> PgResult<Arc<FunctionDef>> {
    ec.db
        .catalog()
        .function(oid)
        .ok_or_else(|| PgError::internal(format!("cache lookup failed for function {oid}")))
}

/// Calls the user-defined function `oid` with `args` (already coerced to
/// its parameter types) for its value: a scalar function's result, or
/// the row of one with several OUT parameters in the record text form
/// PostgreSQL prints (`(1,a)`).
pub fn call(ec: &mut Ectx<'_>, oid: Oid, args: &[Value]) -> PgResult<Value> {
    let def = lookup(ec, oid)?;
    let spec = &def.spec;
    if spec.retset {
        return Err(PgError::internal(format!(
            "set-valued function {} called in context that cannot accept a set",
            spec.name
        )));
    }
    let row = invoke(ec, spec, args)?
        .into_iter()
        .next()
        .unwrap_or_default();
    Ok(row_value(spec, row))
}

/// Calls the user-defined function `oid` for its rows (a function in
/// FROM): a set-returning function's rows, materialised as PostgreSQL's
/// tuplestore does; one row otherwise. Each row has one value per
/// result column (`crate::parse_func::result_columns`).
pub fn call_rows(ec: &mut Ectx<'_>, oid: Oid, args: &[Value]) -> PgResult<Vec<Vec<Value>>> {
    let def = lookup(ec, oid)?;
    invoke(ec, &def.spec, args)
}

/// A result row as one value: the single column's, or the record text
/// form of several (NULL when every column is NULL, as PostgreSQL's
/// `SELECT f()` prints an all-NULL row of a STRICT call).
pub fn row_value(spec: &FunctionSpec, row: Vec<Value>) -> Value {
    if spec.out.len() <= 1 {
        return row.into_iter().next().unwrap_or(Value::Null);
    }
    record_value(&row)
}

/// `(a,b)`: a row's record text form.
pub fn record_value(row: &[Value]) -> Value {
    let texts: Vec<Option<String>> = row
        .iter()
        .map(|v| (!v.is_null()).then(|| v.to_text_string()))
        .collect();
    let fields: Vec<Option<&str>> = texts.iter().map(|t| t.as_deref()).collect();
    Value::Text(pgtypes::sqltype::record_out(&fields).into())
}

/// 42501 `permission denied for function f` unless the current user may
/// EXECUTE the function (PostgreSQL's `pg_proc_aclcheck` at the call):
/// a function without a list of its own grants EXECUTE to PUBLIC;
/// superusers may call anything.
pub fn check_execute(ec: &Ectx<'_>, spec: &FunctionSpec) -> PgResult<()> {
    let own = ec.xact.own();
    may_execute(ec.db, own.xids, &EvalContext::current_user(ec), spec)
}

/// [`check_execute`] for role `user` in the transaction whose xids are
/// `own` (CREATE TRIGGER checks its function this way).
pub fn may_execute(
    db: &engine::Engine,
    own: &[pgtypes::TransactionId],
    user: &str,
    spec: &FunctionSpec,
) -> PgResult<()> {
    let key = engine::comment::CommentKey::object(engine::comment::PG_PROC, spec.oid);
    let cat = db.catalog();
    let Some(def) = cat.privileges(&key) else {
        return Ok(());
    };
    let Some(acl) = def.visible(own, db.clog()).and_then(|e| e.acl.clone()) else {
        return Ok(());
    };
    let u = crate::privileges::AclUser::of(db, user);
    if u.superuser || engine::acl::acl_mask(&acl, &u.roles, engine::acl::ACL_EXECUTE) != 0 {
        return Ok(());
    }
    Err(crate::privileges::denied(
        if spec.kind == b'p' {
            "procedure"
        } else {
            "function"
        },
        &spec.name,
    ))
}

/// Runs the function: its result rows (one for a non-set function).
fn invoke(ec: &mut Ectx<'_>, spec: &FunctionSpec, args: &[Value]) -> PgResult<Vec<Vec<Value>>> {
    check_execute(ec, spec)?;
    let args = &*spec.inputs_of(args);
    if spec.strict && args.iter().any(|a| matches!(a, Value::Null)) {
        if spec.retset {
            return Ok(Vec::new());
        }
        return Ok(vec![vec![Value::Null; spec.out.len().max(1)]]);
    }
    // A procedure CALLed where transaction control is allowed keeps it,
    // unless SECURITY DEFINER or a SET clause holds settings for the
    // call (PostgreSQL refuses COMMIT there too); functions never have it.
    let nonatomic = ec.nonatomic && spec.kind == b'p' && !spec.secdef && spec.config.is_empty();
    nested(ec, nonatomic, |ec| {
        with_function_settings(ec, spec, |ec| match spec.lang {
            LANG_SQL => sql_function(ec, spec, args),
            LANG_PLPGSQL => crate::plpgsql::call_function(ec, spec, args),
            _ => Err(PgError::unsupported(
                "only LANGUAGE sql and plpgsql functions run",
            )),
        })
    })
}

/// Runs `f` as the function's call runs (PostgreSQL's `fmgr_security_definer`):
/// with SECURITY DEFINER the owner is current_user, so every privilege
/// check of its statements (and of the calls they make) is the owner's;
/// the SET clauses hold as SET LOCAL would, search_path re-resolved. The
/// caller's identity, settings and path come back when `f` returns,
/// error or not (an EXCEPTION block catching the error sees the caller's
/// again). session_user does not change.
fn with_function_settings<T>(
    ec: &mut Ectx<'_>,
    spec: &FunctionSpec,
    f: impl FnOnce(&mut Ectx<'_>) -> PgResult<T>,
) -> PgResult<T> {
    if !spec.secdef && spec.config.is_empty() {
        return f(ec);
    }
    let depth = ec.function_settings.len();
    let path = ec.path.clone();
    // nextval / setval check the sequence user's rights (`crate::sequence`).
    let mut seq_user = None;
    if spec.secdef {
        if let Some(owner) = ec.db.catalog().role_by_oid(spec.owner) {
            ec.function_settings
                .push(("role".to_string(), owner.name.clone()));
            if let Some(ss) = ec.sequences.as_deref_mut() {
                let u = crate::privileges::AclUser::of(ec.db, &owner.name);
                seq_user = Some(std::mem::replace(&mut ss.user, Some(Arc::new(u))));
            }
        }
    }
    let mut new_path = spec.secdef;
    for entry in &spec.config {
        let (name, value) = entry.split_once('=').unwrap_or((entry.as_str(), ""));
        let name = crate::utility::canonical_name(name);
        new_path |= name == "search_path";
        ec.function_settings.push((name, value.to_string()));
    }
    if new_path {
        let text = EvalContext::setting(ec, "search_path").unwrap_or_default();
        let user = EvalContext::current_user(ec);
        let own = ec.xact.own();
        let view = ec.db.catalog().view(own.xids, ec.db.clog());
        ec.path = crate::namespace::resolve_search_path(&view, &text, &user);
    }
    let r = f(ec);
    ec.function_settings.truncate(depth);
    ec.path = path;
    if let (Some(prev), Some(ss)) = (seq_user, ec.sequences.as_deref_mut()) {
        ss.user = prev;
    }
    r
}

/// Runs `f` one function call deeper: interrupts checked, the nesting
/// limit (54001, PostgreSQL's max_stack_depth error) enforced, the
/// caller's function-resolution context set aside meanwhile, and
/// transaction control allowed inside only when `nonatomic`.
fn nested<T>(
    ec: &mut Ectx<'_>,
    nonatomic: bool,
    f: impl FnOnce(&mut Ectx<'_>) -> PgResult<T>,
) -> PgResult<T> {
    ec.check_interrupts()?;
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_DEPTH {
        return Err(PgError::new(
            sqlstate::STATEMENT_TOO_COMPLEX,
            "stack depth limit exceeded",
        )
        .with_hint("Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate."));
    }
    DEPTH.with(|d| d.set(depth + 1));
    let calling = crate::parse_func::clear_calling();
    let outer = std::mem::replace(&mut ec.nonatomic, nonatomic);
    let r = f(ec);
    ec.nonatomic = outer;
    DEPTH.with(|d| d.set(depth));
    crate::parse_func::restore_calling(calling);
    r
}

/// How the function's statements take snapshots (`crate::spi`).
pub fn snapshot_mode(spec: &FunctionSpec) -> SnapshotMode {
    if spec.volatility == b'v' {
        SnapshotMode::Fresh
    } else {
        SnapshotMode::Caller
    }
}

/// A LANGUAGE sql function: its statements in order; the result is the
/// last one's first row (NULLs without rows), all its rows for a
/// set-returning function.
fn sql_function(
    ec: &mut Ectx<'_>,
    spec: &FunctionSpec,
    args: &[Value],
) -> PgResult<Vec<Vec<Value>>> {
    let types = spec.arg_types();
    let names: Vec<&str> = spec.args.iter().map(|a| a.name.as_str()).collect();
    let stmts = crate::parser::split_statements(&spec.body);
    let mut last = Vec::new();
    let n = stmts.len();
    let limit = if spec.retset { None } else { Some(1) };
    for (i, text) in stmts.into_iter().enumerate() {
        let sql = crate::parse_func::substitute_params(text, &|w| {
            names.iter().position(|n| !n.is_empty() && *n == w)
        })?;
        let r = spi::execute(ec, &sql, args, &types, snapshot_mode(spec), limit).map_err(|e| {
            e.with_context(format!(
                "SQL function \"{}\" statement {}",
                spec.name,
                i + 1
            ))
        })?;
        if i + 1 == n {
            last = r.rows;
        }
    }
    if spec.ret == SqlType::Void {
        return Ok(vec![vec![Value::Void]]);
    }
    let cols = crate::parse_func::result_columns(spec, &spec.name);
    if !spec.retset && last.is_empty() {
        return Ok(vec![vec![Value::Null; cols.len()]]);
    }
    last.into_iter()
        .map(|row| {
            cols.iter()
                .enumerate()
                .map(|(i, (_, t))| cast_assign(row.get(i).unwrap_or(&Value::Null), *t))
                .collect()
        })
        .collect()
}

/// Calls a trigger's function (`crate::trigger`): the row it returns
/// (None: NULL). Shares the nesting limit of [`call`], so a trigger that
/// fires itself ends in 54001.
pub fn call_trigger(
    ec: &mut Ectx<'_>,
    td: &crate::trigger::TriggerData<'_>,
) -> PgResult<Option<Vec<Value>>> {
    let def = lookup(ec, td.trigger.func)?;
    nested(ec, false, |ec| {
        with_function_settings(ec, &def.spec, |ec| match def.spec.lang {
            LANG_PLPGSQL => crate::plpgsql::call_trigger(ec, &def.spec, td),
            _ => Err(PgError::unsupported(
                "only LANGUAGE plpgsql trigger functions run",
            )),
        })
    })
}
