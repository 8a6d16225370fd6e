//! PL/pgSQL (PostgreSQL's `src/pl/plpgsql`): functions and DO blocks
//! written in the procedural language, parsed to a tree ([`gram`],
//! `pl_gram.y`) and interpreted ([`exec`], `pl_exec.c`).
//!
//! ## Shape
//!
//! ```text
//!   CREATE FUNCTION … LANGUAGE plpgsql     DO $$ … $$
//!            │ validate (42601 at CREATE)      │
//!            ▼                                 ▼
//!   gram::compile(body, params) ──► Compiled { root block, variable slots }
//!            │ cached per session by OID and catalog version (spi::PlanCache)
//!            ▼
//!   exec::run: statements walk the tree; every expression and embedded
//!   statement is SQL run through crate::spi with the variables it names
//!   as parameters $1…$n
//! ```
//!
//! ## Variables and expressions
//!
//! The parser resolves every name at compile time to a *slot* (function
//! parameters first, then each DECLAREd variable, FOUND, loop variables,
//! and per handler SQLSTATE / SQLERRM), with block scoping and `label.name`
//! qualification. An expression (`x + 1`, an IF condition) is kept as the
//! SQL text `SELECT x + 1` with each variable reference replaced by `$n`
//! and the list of slots those parameters read (a `record.field` reference
//! reads one field). At run time the parameter types are the slots'
//! current types, so a statement is planned once per distinct type list
//! (the session's plan cache keys on them). An expression that is only a
//! parameter or a literal is evaluated without SQL.
//!
//! ## Snapshots
//!
//! Embedded statements (SQL statements, PERFORM, EXECUTE, FOR over a
//! query, RETURN QUERY) follow the function's volatility
//! (`crate::spi::SnapshotMode`): in a VOLATILE function or a DO block each
//! takes a new statement snapshot and, having written, bumps the command
//! counter. Simple expressions (no sub-SELECT) read with the current
//! snapshot and take none, as PostgreSQL's simple-expression path does; so
//! `FOR x IN 1..n LOOP EXECUTE 'SELECT 1'; END LOOP` takes n snapshots.
//!
//! ## Exceptions
//!
//! A block with an EXCEPTION clause runs its statements in an internal
//! subtransaction (`Xact::begin_internal`); an error rolls that back (its
//! rows vanish, its subxids are aborted and leave the procarray's cache)
//! and the first matching handler runs in the enclosing transaction.
//! Variables keep the values they had. OTHERS matches everything but
//! 57014 (cancel / statement_timeout) and P0004 (ASSERT), as in
//! PostgreSQL, so a timeout always reaches the client.
//!
//! ## Errors
//!
//! An error leaving a function gets PostgreSQL's CONTEXT line
//! `PL/pgSQL function f(integer) line N at STATEMENT` for the innermost
//! statement running; a body that does not parse fails CREATE FUNCTION
//! (and DO) with 42601 and the line. Loops check for cancel and
//! statement_timeout at every iteration.

pub mod exec;
pub mod gram;

use std::sync::Arc;

use crate::executor::Ectx;
use engine::pg_proc::FunctionSpec;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;

pub use gram::Compiled;

/// Parses a function body: the check CREATE FUNCTION runs (42601 with the
/// line on a syntax error).
pub fn validate(spec: &FunctionSpec) -> PgResult<()> {
    gram::compile(spec).map(|_| ())
}

/// The compiled body of `spec`, from the session's cache when there.
fn compiled(ec: &mut Ectx<'_>, spec: &FunctionSpec) -> PgResult<Arc<Compiled>> {
    let version = ec.db.catalog().version();
    if let Some(c) = ec
        .plans
        .as_deref_mut()
        .and_then(|p| p.function(spec.oid, version))
    {
        return Ok(c);
    }
    let c = Arc::new(gram::compile(spec)?);
    if let Some(p) = ec.plans.as_deref_mut() {
        p.keep_function(spec.oid, version, c.clone());
    }
    Ok(c)
}

/// Calls a LANGUAGE plpgsql function: its result rows (`crate::fmgr`).
pub fn call_function(
    ec: &mut Ectx<'_>,
    spec: &FunctionSpec,
    args: &[Value],
) -> PgResult<Vec<Vec<Value>>> {
    if spec.ret == pgtypes::sqltype::SqlType::Trigger {
        return Err(
            PgError::unsupported("trigger functions can only be called as triggers").with_context(
                format!(
                    "compilation of PL/pgSQL function \"{}\" near line 1",
                    spec.name
                ),
            ),
        );
    }
    let c = compiled(ec, spec)?;
    exec::run_rows(ec, &c, args)
}

/// Runs a DO block's source.
pub fn do_block(ec: &mut Ectx<'_>, body: &str) -> PgResult<()> {
    let c = gram::compile_inline(body)?;
    exec::run(ec, &c, &[]).map(|_| ())
}

/// Calls a LANGUAGE plpgsql trigger function with the trigger's data
/// (NEW, OLD and the TG_ variables, [`gram::TRIGGER_VARS`]): the row it
/// returned, None for NULL.
pub fn call_trigger(
    ec: &mut Ectx<'_>,
    spec: &FunctionSpec,
    td: &crate::trigger::TriggerData<'_>,
) -> PgResult<Option<Vec<Value>>> {
    use pgtypes::array::ArrayValue;
    use pgtypes::sqltype::ArrayElem;
    let c = compiled(ec, spec)?;
    let t = td.trigger;
    let args = vec![
        Value::Null, // new
        Value::Null, // old
        Value::text(&t.name),
        Value::text(td.when),
        Value::text(td.level),
        Value::text(td.op),
        Value::Oid(td.rel.oid),
        Value::text(td.rel.name),
        Value::text(td.rel.name),
        Value::text(&td.schema),
        Value::Int4(i32::try_from(t.args.len()).unwrap_or(i32::MAX)),
        // TG_ARGV's subscripts start at 0, as in PostgreSQL.
        Value::Array(Arc::new(ArrayValue {
            elem: ArrayElem::Text,
            lower: 0,
            items: t.args.iter().map(|a| Value::text(a)).collect(),
            inner: Vec::new(),
        })),
    ];
    let names: Vec<String> = td.rel.columns.iter().map(|c| c.name.clone()).collect();
    let types: Vec<pgtypes::sqltype::SqlType> = td.rel.columns.iter().map(|c| c.ty).collect();
    exec::run_trigger(
        ec,
        &c,
        &args,
        &names,
        &types,
        td.new.clone(),
        td.old.clone(),
        td.level == "ROW",
    )
}
