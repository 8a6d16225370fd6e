//! The function manager for functions users created (PostgreSQL's
//! `parser/parse_func.c` for their resolution, `utils/fmgr` for the call,
//! `executor/functions.c` for LANGUAGE sql bodies).
//!
//! ## Resolution
//!
//! The binder resolves a call by name and argument types against the
//! built-in table first (`functions::resolve_function`): a built-in wins,
//! as `pg_catalog` comes first on PostgreSQL's search path. Otherwise it
//! asks [`resolve_user`], which looks through the functions the planning
//! statement's catalog view sees. The planner publishes that list for the
//! duration of one `plan_statement` in a thread-local ([`with_functions`]):
//! planning is synchronous, so the list cannot leak into another
//! session's statement, and a catalog without functions costs one read
//! lock per plan. A call binds to `Func::User(oid)` with the parameter
//! types to coerce to; missing trailing arguments take the parameters'
//! DEFAULT expressions, bound in the caller's statement.
//!
//! ## Calls
//!
//! Evaluation reaches [`call`] through `EvalContext::call_user_function`
//! (the executor's [`Ectx`] implements it). STRICT functions return NULL
//! for a NULL argument without running. LANGUAGE sql bodies run their
//! statements in order through SPI (`crate::spi`), parameter names
//! replaced by `$n`, and return the first column of the last statement's
//! first row; LANGUAGE plpgsql bodies go to `crate::plpgsql`. Nesting is
//! bounded ([`MAX_DEPTH`], 54001 like PostgreSQL's stack depth limit).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast;

use crate::executor::Ectx;
use crate::functions::{can_coerce_implicit, Func, FuncSig};
use crate::spi::{self, SnapshotMode};
use engine::catalog::CatalogView;
use engine::pg_proc::{FunctionDef, FunctionSpec, LANG_PLPGSQL, LANG_SQL};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cast_assign, Value};
use pgtypes::Oid;

/// Nested user-function calls before 54001.
pub const MAX_DEPTH: u32 = 100;

thread_local! {
    /// The functions the statement being planned on this thread sees.
    static VISIBLE: RefCell<Option<Rc<[Arc<FunctionDef>]>>> = const { RefCell::new(None) };
    /// User-function calls running on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Binding a CALL statement: procedures resolve, functions do not.
    static CALLING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a CALL statement) with procedures callable; the procedure's
/// own statements bind as usual ([`call`] clears the mark).
pub fn with_procedures<R>(f: impl FnOnce() -> R) -> R {
    let outer = CALLING.with(|c| c.replace(true));
    let r = f();
    CALLING.with(|c| c.set(outer));
    r
}

/// Puts the outer list back when planning ends (also on unwinding).
struct Restore(Option<Rc<[Arc<FunctionDef>]>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        VISIBLE.with(|v| *v.borrow_mut() = outer);
    }
}

/// Runs `f` (planning a statement) with the functions `catalog` sees
/// published to [`resolve_user`].
pub fn with_functions<R>(catalog: &CatalogView<'_>, f: impl FnOnce() -> R) -> R {
    let list = catalog.functions();
    let new: Option<Rc<[Arc<FunctionDef>]>> = if list.is_empty() {
        None
    } else {
        Some(Rc::from(list))
    };
    let _restore = Restore(VISIBLE.with(|v| v.replace(new)));
    f()
}

/// The user function a call of `name` with arguments of `args` binds to,
/// with the DEFAULT expressions of the parameters it leaves out; None if
/// no function of that name takes such arguments (the caller reports the
/// built-in resolution's error).
pub fn resolve_user(name: &str, args: &[SqlType]) -> Option<PgResult<(FuncSig, Vec<ast::Expr>)>> {
    VISIBLE.with(|v| {
        let v = v.borrow();
        let list = v.as_ref()?;
        let mut best: Vec<(&FunctionSpec, usize)> = Vec::new();
        for f in list.iter().filter(|f| f.spec.name == name) {
            let s = &f.spec;
            let defaults = s.args.iter().rev().take_while(|a| a.default.is_some()).count();
            if args.len() > s.args.len() || args.len() + defaults < s.args.len() {
                continue;
            }
            if !args
                .iter()
                .zip(&s.args)
                .all(|(a, p)| can_coerce_implicit(*a, p.ty))
            {
                continue;
            }
            let exact = args
                .iter()
                .zip(&s.args)
                .filter(|(a, p)| a.base() == p.ty.base())
                .count();
            best.push((s, exact));
        }
        let top = best.iter().map(|b| b.1).max()?;
        best.retain(|b| b.1 == top);
        if best.len() > 1 {
            let list: Vec<String> = args.iter().map(|t| t.pg_base_name().to_string()).collect();
            return Some(Err(PgError::new(
                sqlstate::AMBIGUOUS_FUNCTION,
                format!("function {name}({}) is not unique", list.join(", ")),
            )
            .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")));
        }
        let s = best[0].0;
        Some(bind_call(s, args.len()))
    })
}

fn bind_call(s: &FunctionSpec, given: usize) -> PgResult<(FuncSig, Vec<ast::Expr>)> {
    let calling = CALLING.with(Cell::get);
    if calling && s.kind != b'p' {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("{} is not a procedure", s.signature()),
        )
        .with_hint("To call a function, use SELECT."));
    }
    if s.kind == b'p' && !calling {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("{} is a procedure", s.signature()),
        )
        .with_hint("To call a procedure, use CALL."));
    }
    if s.retset {
        return Err(PgError::unsupported(format!(
            "set-returning function {} can only be called in FROM",
            s.name
        )));
    }
    let mut defaults = Vec::new();
    for a in &s.args[given..] {
        let text = a.default.as_deref().unwrap_or("NULL");
        defaults.push(crate::parser::parse_expr_text(text)?);
    }
    Ok((
        FuncSig {
            func: Func::User(s.oid),
            arg_types: s.arg_types(),
            ret: s.ret,
        },
        defaults,
    ))
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
/// its parameter types).
pub fn call(ec: &mut Ectx<'_>, oid: Oid, args: &[Value]) -> PgResult<Value> {
    let def = lookup(ec, oid)?;
    let spec = &def.spec;
    if spec.strict && args.iter().any(|a| matches!(a, Value::Null)) {
        return Ok(Value::Null);
    }
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
    let calling = CALLING.with(|c| c.replace(false));
    let r = match spec.lang {
        LANG_SQL => sql_function(ec, spec, args),
        LANG_PLPGSQL => crate::plpgsql::call_function(ec, spec, args),
        _ => Err(PgError::unsupported(
            "only LANGUAGE sql and plpgsql functions run",
        )),
    };
    DEPTH.with(|d| d.set(depth));
    CALLING.with(|c| c.set(calling));
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
/// first column of the last one's first row (NULL without rows).
fn sql_function(ec: &mut Ectx<'_>, spec: &FunctionSpec, args: &[Value]) -> PgResult<Value> {
    let types = spec.arg_types();
    let names: Vec<&str> = spec.args.iter().map(|a| a.name.as_str()).collect();
    let stmts = crate::parser::split_statements(&spec.body);
    let mut last = Value::Null;
    let n = stmts.len();
    for (i, text) in stmts.into_iter().enumerate() {
        let sql = crate::plpgsql::substitute_params(text, &|w| {
            names.iter().position(|n| !n.is_empty() && *n == w)
        })?;
        let r =
            spi::execute(ec, &sql, args, &types, snapshot_mode(spec), Some(1)).map_err(|e| {
                e.with_context(format!(
                    "SQL function \"{}\" statement {}",
                    spec.name,
                    i + 1
                ))
            })?;
        if i + 1 == n {
            last = r
                .rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .unwrap_or(Value::Null);
        }
    }
    if spec.ret == SqlType::Void {
        return Ok(Value::Void);
    }
    cast_assign(&last, spec.ret)
}
