//! Resolution of calls to functions users created (PostgreSQL's
//! `parser/parse_func.c`): the binder's half of the function manager,
//! below the executor; the call itself is `crate::fmgr`.
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
//! Schemas (namespace.c's FuncnameGetCandidates): a qualified call
//! `s.f(…)` considers the functions of schema `s` only; an unqualified one
//! those of every schema on the search path, where a function hides one
//! with the same argument types in a later schema. The path and the
//! schemas' names are published with the list.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast;

use crate::functions::{can_coerce_implicit, Func, FuncSig};
use engine::catalog::CatalogView;
use engine::pg_proc::{FunctionDef, FunctionSpec};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;

thread_local! {
    /// User functions the statement being planned may not inline: an
    /// explicit EXECUTE list without PUBLIC (the call's own check must
    /// stay).
    static NO_INLINE: RefCell<Vec<pgtypes::Oid>> = const { RefCell::new(Vec::new()) };
    /// The functions the statement being planned on this thread sees.
    static VISIBLE: RefCell<Option<Rc<[Arc<FunctionDef>]>>> = const { RefCell::new(None) };
    /// Its search path and (with functions to see) every schema by name.
    static SCHEMAS: RefCell<Option<Rc<Schemas>>> = const { RefCell::new(None) };
    /// Binding a CALL statement: procedures resolve, functions do not.
    static CALLING: Cell<bool> = const { Cell::new(false) };
    /// Binding a function call in FROM: set-returning functions resolve.
    static IN_FROM: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (binding the call of a FROM item, `FROM f(…)`) with
/// set-returning user functions callable.
pub fn with_set_functions<R>(f: impl FnOnce() -> R) -> R {
    let outer = IN_FROM.with(|c| c.replace(true));
    let r = f();
    IN_FROM.with(|c| c.set(outer));
    r
}

/// The visible user function `oid` (the statement being planned sees it).
pub fn visible(oid: pgtypes::Oid) -> Option<Arc<FunctionDef>> {
    VISIBLE.with(|v| {
        v.borrow()
            .as_ref()
            .and_then(|l| l.iter().find(|f| f.spec.oid == oid).cloned())
    })
}

/// True if a visible user function named `name` is set-returning (a
/// target list may call it: `SELECT f()`).
pub fn is_user_srf(name: &str, schema: Option<&str>) -> bool {
    VISIBLE.with(|v| {
        v.borrow()
            .as_ref()
            .is_some_and(|l| candidates(l, name, schema).is_ok_and(|c| c.iter().any(|f| f.retset)))
    })
}

/// Clears the CALL mark for the statements of a running function (they
/// bind as usual); returns the old mark for [`restore_calling`].
pub(crate) fn clear_calling() -> bool {
    CALLING.with(|c| c.replace(false))
}

/// Puts back a mark [`clear_calling`] returned.
pub(crate) fn restore_calling(calling: bool) {
    CALLING.with(|c| c.set(calling));
}

/// True while binding a CALL statement.
pub fn calling() -> bool {
    CALLING.with(Cell::get)
}

/// Runs `f` (a CALL statement) with procedures callable; the procedure's
/// own statements bind as usual ([`call`] clears the mark).
pub fn with_procedures<R>(f: impl FnOnce() -> R) -> R {
    let outer = CALLING.with(|c| c.replace(true));
    let r = f();
    CALLING.with(|c| c.set(outer));
    r
}

/// The schemas a statement resolves function names in.
struct Schemas {
    /// The search path (schema OIDs, in order).
    path: Vec<pgtypes::Oid>,
    /// Every schema: (name, OID).
    names: Vec<(String, pgtypes::Oid)>,
}

/// Puts the outer lists back when planning ends (also on unwinding).
struct Restore(
    Option<Rc<[Arc<FunctionDef>]>>,
    Vec<pgtypes::Oid>,
    Option<Rc<Schemas>>,
);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        VISIBLE.with(|v| *v.borrow_mut() = outer);
        let outer = std::mem::take(&mut self.1);
        NO_INLINE.with(|n| *n.borrow_mut() = outer);
        let outer = self.2.take();
        SCHEMAS.with(|s| *s.borrow_mut() = outer);
    }
}

/// Runs `f` (planning a statement) with the functions `catalog` sees
/// published to [`resolve_user`].
pub fn with_functions<R>(catalog: &CatalogView<'_>, f: impl FnOnce() -> R) -> R {
    let list = catalog.functions();
    // Inlining drops the call, and with it the EXECUTE check at the call:
    // a SQL function whose list does not grant EXECUTE to PUBLIC stays a
    // call (PostgreSQL's inline_function checks the caller's right; the
    // binder does not know the caller).
    // Nor is one outside `public`: the USAGE check on its schema
    // (`aclchk::check_planned`) needs the call.
    let no_inline: Vec<pgtypes::Oid> = list
        .iter()
        .filter(|f| f.spec.lang == engine::pg_proc::LANG_SQL)
        .filter(|f| {
            f.spec.namespace != engine::namespace::PUBLIC_NAMESPACE || {
                let key = engine::comment::CommentKey::object(engine::comment::PG_PROC, f.spec.oid);
                catalog
                    .privileges(&key)
                    .and_then(|e| e.acl)
                    .is_some_and(|acl| {
                        engine::acl::acl_mask(
                            &acl,
                            &[engine::acl::ACL_ID_PUBLIC],
                            engine::acl::ACL_EXECUTE,
                        ) == 0
                    })
            }
        })
        .map(|f| f.spec.oid)
        .collect();
    // Only a call of a user function needs them.
    let schemas = (!list.is_empty()).then(|| {
        Rc::new(Schemas {
            path: catalog.path().to_vec(),
            names: engine::namespace::BUILTIN_SCHEMAS
                .iter()
                .map(|(oid, name, _)| (name.to_string(), *oid))
                .chain(catalog.schemas().into_iter().map(|s| (s.name, s.oid)))
                .collect(),
        })
    });
    let new: Option<Rc<[Arc<FunctionDef>]>> = if list.is_empty() {
        None
    } else {
        Some(Rc::from(list))
    };
    let _restore = Restore(
        VISIBLE.with(|v| v.replace(new)),
        NO_INLINE.with(|n| n.replace(no_inline)),
        SCHEMAS.with(|s| s.replace(schemas)),
    );
    f()
}

/// The functions called `name` a call may bind to (`schema`: its
/// qualifier): those of that schema, or of the search path's schemas with
/// the later of two same-signature functions hidden. Err: the qualifier
/// names no schema.
fn candidates<'l>(
    list: &'l [Arc<FunctionDef>],
    name: &str,
    schema: Option<&str>,
) -> PgResult<Vec<&'l FunctionSpec>> {
    SCHEMAS.with(|sc| {
        let sc = sc.borrow();
        let Some(sc) = sc.as_deref() else {
            return Ok(Vec::new());
        };
        let named = list.iter().map(|f| &f.spec).filter(|f| f.name == name);
        match schema {
            Some(s) => {
                let Some(ns) = sc.names.iter().find(|(n, _)| n == s).map(|x| x.1) else {
                    return Err(engine::catalog::undefined_schema(s));
                };
                Ok(named.filter(|f| f.namespace == ns).collect())
            }
            None => {
                let mut out: Vec<&FunctionSpec> = Vec::new();
                for &ns in &sc.path {
                    for f in named.clone().filter(|f| f.namespace == ns) {
                        let types = f.arg_types();
                        if !out.iter().any(|o| o.arg_types() == types) {
                            out.push(f);
                        }
                    }
                }
                Ok(out)
            }
        }
    })
}

/// `text` with each name `lookup` knows (a word or quoted identifier not
/// after a `.` and not called as a function) and each `$n` replaced by
/// `$k` (k = index + 1): how LANGUAGE sql bodies reach their parameters
/// by name.
pub fn substitute_params(text: &str, lookup: &dyn Fn(&str) -> Option<usize>) -> PgResult<String> {
    let toks = crate::parser::lex_spans(text)?;
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for (i, (tok, start, end)) in toks.iter().enumerate() {
        let prev_dot = i > 0 && toks[i - 1].0 == crate::parser::Tok::Punct('.');
        let next_paren = toks
            .get(i + 1)
            .is_some_and(|t| t.0 == crate::parser::Tok::Punct('('));
        let next_dot = toks
            .get(i + 1)
            .is_some_and(|t| t.0 == crate::parser::Tok::Punct('.'));
        let name = match tok {
            crate::parser::Tok::Word(w) | crate::parser::Tok::Ident(w)
                if !prev_dot && !next_paren && !next_dot =>
            {
                w
            }
            _ => continue,
        };
        if let Some(k) = lookup(name) {
            out.push_str(text.get(last..*start).unwrap_or(""));
            out.push_str(&format!("${}", k + 1));
            last = *end;
        }
    }
    out.push_str(text.get(last..).unwrap_or(""));
    Ok(out)
}

/// True if `e` is NULL whenever one of its parameters is: built only of
/// parameters, constants, casts, unary operators, LIKE and the arithmetic,
/// `||` and comparison operators (not AND / OR / IS DISTINCT FROM, not
/// function calls, whose strictness the binder does not know).
fn strict_expr(e: &crate::expr::Expr) -> bool {
    use crate::expr::{BinOp, Expr};
    match e {
        Expr::Const(_) | Expr::Param(_) => true,
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => strict_expr(arg),
        Expr::Like { arg, pattern, .. } => strict_expr(arg) && strict_expr(pattern),
        Expr::Binary { op, left, right } => {
            !matches!(
                op,
                BinOp::And | BinOp::Or | BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom
            ) && strict_expr(left)
                && strict_expr(right)
        }
        _ => false,
    }
}

/// A bound call of `func` with `args` (coerced to its parameter types):
/// the body of a simple LANGUAGE sql function in its place, with the
/// arguments for its parameters (PostgreSQL's `inline_function`), else
/// the call.
///
/// Inlined: a function (not a procedure), not set-returning (STRICT only
/// when its body is strict by itself: [`strict_expr`]), without SECURITY DEFINER or SET clauses, returning one scalar, whose
/// EXECUTE is granted to PUBLIC, whose body is one `SELECT expression`
/// (no FROM, WHERE, grouping, sub-select, window, set operation …) that
/// binds on its parameters alone and coerces to the result type; a
/// parameter used more than once, or not at all, must be given a
/// constant, a parameter or a column (an expression is never evaluated
/// twice, nor dropped). Anything else stays a call, so inlining never
/// changes what a statement does, only the plan EXPLAIN shows and the
/// cost. Not in FROM: a function there is a function scan.
pub fn inline_or_call(func: Func, args: Vec<crate::expr::Expr>) -> crate::expr::Expr {
    let inlined = match func {
        Func::User(oid) if !IN_FROM.with(Cell::get) => inline(oid, &args),
        _ => None,
    };
    inlined.unwrap_or(crate::expr::Expr::Func { func, args })
}

fn inline(oid: pgtypes::Oid, args: &[crate::expr::Expr]) -> Option<crate::expr::Expr> {
    use crate::expr::Expr;
    use crate::parser::{lex_spans, Tok};
    let def = visible(oid)?;
    let s = &def.spec;
    if s.lang != engine::pg_proc::LANG_SQL
        || s.kind != b'f'
        || s.retset
        || s.secdef
        || !s.config.is_empty()
        || s.out.len() > 1
        || matches!(s.ret, SqlType::Void | SqlType::Record | SqlType::Trigger)
        || args.len() != s.args.len()
        || NO_INLINE.with(|n| n.borrow().contains(&oid))
    {
        return None;
    }
    let [stmt] = crate::parser::split_statements(&s.body)[..] else {
        return None;
    };
    let text = substitute_params(stmt, &|w| {
        s.args
            .iter()
            .position(|a| !a.name.is_empty() && a.name == w)
    })
    .ok()?;
    // `SELECT expression` and nothing else, by its words; each
    // parameter's uses counted.
    let toks = lex_spans(&text).ok()?;
    if !matches!(toks.first(), Some((Tok::Word(w), _, _)) if w == "select") {
        return None;
    }
    let mut uses = vec![0usize; args.len()];
    for (i, (t, _, _)) in toks.iter().enumerate().skip(1) {
        match t {
            Tok::Word(w)
                if matches!(
                    w.as_str(),
                    "select"
                        | "from"
                        | "where"
                        | "group"
                        | "having"
                        | "order"
                        | "limit"
                        | "offset"
                        | "fetch"
                        | "window"
                        | "over"
                        | "union"
                        | "intersect"
                        | "except"
                        | "distinct"
                        | "into"
                        | "with"
                        | "returning"
                        | "for"
                ) =>
            {
                return None
            }
            Tok::Punct('$') => {
                if let Some((Tok::Num(n), _, _)) = toks.get(i + 1) {
                    let k = n.parse::<usize>().ok()?.checked_sub(1)?;
                    *uses.get_mut(k)? += 1;
                }
            }
            _ => {}
        }
    }
    let simple = |e: &Expr| matches!(e, Expr::Const(_) | Expr::Param(_) | Expr::Column(_));
    if uses.iter().zip(args).any(|(u, a)| *u != 1 && !simple(a)) {
        return None;
    }
    let Ok(crate::parser::Stmt::Sql(stmt)) = crate::parser::parse_one(&text) else {
        return None;
    };
    let ast::Statement::Query(q) = &*stmt else {
        return None;
    };
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    let expr = match sel.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }] => e,
        _ => return None,
    };
    let oids: Vec<pgtypes::Oid> = s.args.iter().map(|a| a.ty.oid()).collect();
    let mut params = crate::expr::ParamTypes::from_oids(&oids).ok()?;
    let b = crate::expr::bind_expr(expr, &crate::expr::Scope::new(), &mut params).ok()?;
    let mut body = crate::expr::coerce(b, s.ret, &mut params).ok()?;
    // A STRICT function's body must give NULL for any NULL argument by
    // itself: every parameter used, under operators that are strict.
    if s.strict && (uses.contains(&0) || !strict_expr(&body)) {
        return None;
    }
    let mut ok = true;
    body.walk_mut(&mut |e| match e {
        Expr::Param(k) => match args.get(*k) {
            Some(a) => *e = a.clone(),
            None => ok = false,
        },
        Expr::Column(_)
        | Expr::Agg(_)
        | Expr::WindowFunc(_)
        | Expr::GroupingFunc(_)
        | Expr::ExecParam(_)
        | Expr::SubPlan(_) => ok = false,
        _ => {}
    });
    ok.then_some(body)
}

/// A call of a user function, resolved.
pub struct UserCall {
    /// What to call, with the parameter types to coerce to.
    pub sig: FuncSig,
    /// The DEFAULT expressions of the parameters the call leaves out.
    pub defaults: Vec<ast::Expr>,
    /// VARIADIC in expanded form (`f(1, 2, 3)` for `f(VARIADIC int[])`):
    /// the arguments from this position on, each of the array's element
    /// type, make the variadic parameter's array.
    pub variadic_from: Option<usize>,
}

/// The user function a call of `name` with arguments of `args` binds to;
/// None if no function of that name takes such arguments (the caller
/// reports the built-in resolution's error). A VARIADIC function matches
/// in expanded form, one argument or more for its variadic parameter
/// (or none, through its DEFAULT).
pub fn resolve_user(
    name: &str,
    schema: Option<&str>,
    args: &[SqlType],
) -> Option<PgResult<UserCall>> {
    VISIBLE.with(|v| {
        let v = v.borrow();
        let list = v.as_ref()?;
        let mut best: Vec<(&FunctionSpec, usize, Option<usize>)> = Vec::new();
        let found = match candidates(list, name, schema) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        for s in found {
            let params = call_params(s);
            // Expanded VARIADIC: the parameter types each argument meets.
            if let (Some(vi), Some(elem)) = (variadic_param(s), s.variadic_elem()) {
                if args.len() > vi {
                    let want = |k: usize| if k < vi { params[k].ty } else { elem };
                    if args
                        .iter()
                        .enumerate()
                        .all(|(k, a)| can_coerce_implicit(*a, want(k)))
                    {
                        let exact = args
                            .iter()
                            .enumerate()
                            .filter(|(k, a)| a.base() == want(*k).base())
                            .count();
                        best.push((s, exact, Some(vi)));
                    }
                    continue;
                }
            }
            let defaults = params.iter().rev().take_while(|a| a.default.is_some()).count();
            if args.len() > params.len() || args.len() + defaults < params.len() {
                continue;
            }
            if !args
                .iter()
                .zip(params.iter())
                .all(|(a, p)| can_coerce_implicit(*a, p.ty))
            {
                continue;
            }
            let exact = args
                .iter()
                .zip(params.iter())
                .filter(|(a, p)| a.base() == p.ty.base())
                .count();
            best.push((s, exact, None));
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
        let (s, _, variadic_from) = best[0];
        let given = variadic_from.map_or(args.len(), |vi| vi + 1);
        Some(bind_call(s, given).map(|(sig, defaults)| UserCall {
            sig,
            defaults,
            variadic_from,
        }))
    })
}

/// Where a parameter of a call in named notation gets its value.
pub enum ArgSource {
    /// The call's argument at this position.
    Given(usize),
    /// The parameter's DEFAULT expression.
    Default(ast::Expr),
}

/// The user function a call in named or mixed notation binds to (`args`:
/// each argument's name, None for a positional one, and type), with the
/// source of each parameter's value in parameter order; 42883 as
/// PostgreSQL words it when none matches.
///
/// `variadic_at`: the call passed its last argument, at this position, as
/// `VARIADIC array`; only a function whose variadic parameter takes it
/// matches (the array as the parameter, not expanded).
pub fn resolve_user_named(
    name: &str,
    schema: Option<&str>,
    args: &[(Option<String>, SqlType)],
    variadic_at: Option<usize>,
) -> PgResult<(FuncSig, Vec<ArgSource>)> {
    let found = VISIBLE.with(
        |v| -> PgResult<Option<Vec<(FunctionSpec, Vec<Option<usize>>)>>> {
            let v = v.borrow();
            let Some(list) = v.as_ref() else {
                return Ok(None);
            };
            let mut found = Vec::new();
            'f: for s in candidates(list, name, schema)? {
                let params = call_params(s);
                if variadic_at.is_some() && variadic_param(s) != variadic_at {
                    continue;
                }
                // The given argument for each parameter.
                let mut slot: Vec<Option<usize>> = vec![None; params.len()];
                for (i, (n, t)) in args.iter().enumerate() {
                    let k = match n {
                        None => i,
                        Some(n) => match params.iter().position(|a| a.name == *n) {
                            Some(k) => k,
                            None => continue 'f,
                        },
                    };
                    if k >= slot.len()
                        || slot[k].is_some()
                        || !can_coerce_implicit(*t, params[k].ty)
                    {
                        continue 'f;
                    }
                    slot[k] = Some(i);
                }
                if slot
                    .iter()
                    .zip(params.iter())
                    .any(|(g, a)| g.is_none() && a.default.is_none())
                {
                    continue;
                }
                found.push((s.clone(), slot));
            }
            Ok(Some(found))
        },
    )?;
    let shown = || {
        let list: Vec<String> = args
            .iter()
            .map(|(n, t)| match n {
                Some(n) => format!("{n} => {}", t.pg_base_name()),
                None => t.pg_base_name().to_string(),
            })
            .collect();
        format!("{}({})", qualified(schema, name), list.join(", "))
    };
    let mut found = found.unwrap_or_default();
    if found.len() > 1 {
        return Err(PgError::new(
            sqlstate::AMBIGUOUS_FUNCTION,
            format!("function {} is not unique", shown()),
        )
        .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."));
    }
    let Some((s, slot)) = found.pop() else {
        return Err(undefined_routine(&shown()));
    };
    let params = call_params(&s);
    let (sig, _) = bind_call(&s, params.len())?;
    let mut order = Vec::with_capacity(slot.len());
    for (g, a) in slot.into_iter().zip(params.iter()) {
        order.push(match g {
            Some(i) => ArgSource::Given(i),
            None => ArgSource::Default(crate::parser::parse_expr_text(
                a.default.as_deref().unwrap_or("NULL"),
            )?),
        });
    }
    Ok((sig, order))
}

/// The parameters a call of `s` gives arguments for: in a CALL a
/// procedure's OUT parameters too (`FunctionSpec::call_args`), elsewhere
/// the inputs only.
fn call_params(s: &FunctionSpec) -> std::borrow::Cow<'_, [engine::pg_proc::FunctionArg]> {
    if calling() {
        s.call_args()
    } else {
        std::borrow::Cow::Borrowed(&s.args)
    }
}

/// The position of `s`'s VARIADIC parameter among [`call_params`].
fn variadic_param(s: &FunctionSpec) -> Option<usize> {
    if calling() {
        s.call_variadic_arg()
    } else {
        s.variadic_arg()
    }
}

/// A function name as a message shows the call: `s.f` or `f`.
pub fn qualified(schema: Option<&str>, name: &str) -> String {
    match schema {
        Some(s) => format!("{s}.{name}"),
        None => name.to_string(),
    }
}

/// 42883 for a call `shown` (`name(types)`) that matches nothing: a
/// procedure's words when binding CALL, a function's otherwise.
pub fn undefined_routine(shown: &str) -> PgError {
    let what = if CALLING.with(Cell::get) {
        "procedure"
    } else {
        "function"
    };
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("{what} {shown} does not exist"),
    )
    .with_hint(format!("No {what} matches the given name and argument types. You might need to add explicit type casts."))
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
    if s.retset && !IN_FROM.with(Cell::get) {
        return Err(PgError::unsupported(format!(
            "set-returning function {} can only be called in FROM",
            s.name
        )));
    }
    let params = call_params(s);
    let mut defaults = Vec::new();
    for a in params.get(given..).unwrap_or_default() {
        let text = a.default.as_deref().unwrap_or("NULL");
        defaults.push(crate::parser::parse_expr_text(text)?);
    }
    Ok((
        FuncSig {
            func: Func::User(s.oid),
            arg_types: params.iter().map(|a| a.ty).collect(),
            ret: s.ret,
        },
        defaults,
    ))
}

/// The result columns a function in FROM yields: the OUT / TABLE
/// columns, or one column of the result type named `name`.
pub fn result_columns(spec: &FunctionSpec, name: &str) -> Vec<(String, SqlType)> {
    if spec.out.is_empty() {
        vec![(name.to_string(), spec.ret)]
    } else {
        spec.out.clone()
    }
}
