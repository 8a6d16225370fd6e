//! Indexes on expressions and partial indexes: the SQL half of
//! PostgreSQL's `commands/indexcmds.c` (checking a key expression or a
//! predicate when the index is defined) and of `catalog/index.c`
//! (computing a row's key).
//!
//! ## Stored form
//!
//! An [`IndexSpec`] keeps each expression key, and the predicate, as SQL
//! text whose column references are *positional*: column 3 is written
//! `"#3"`. PostgreSQL stores attribute numbers in its node trees for the
//! same reason — `ALTER TABLE … RENAME COLUMN` leaves the index as it is,
//! and every display ([`key_texts`], [`predicate_text`]) puts the current
//! names back. The spec also lists every column the text uses
//! (`expr_columns`), so that `DROP COLUMN` and UPDATE's "does this change
//! a key" need no parsing.
//!
//! ## Evaluation
//!
//! [`BoundIndex`] is the text bound once over the table's row (the
//! engine caches it in the `IndexDef`): key expressions, their types and
//! the predicate. It implements the engine's [`IndexExprs`], so the
//! engine computes keys on every path without the SQL layer in it —
//! INSERT / UPDATE / COPY / ON CONFLICT here, and replay on a standby and
//! the start-up rebuild there. [`install`] registers the binder for the
//! process (the node does it before opening the database).
//!
//! ## Planning
//!
//! [`BoundIndex::keys`] are ordinary bound expressions over the table's
//! columns (a plain key is `Column(c)`), so the planner matches a WHERE
//! conjunct `expr = constant` by structural equality with a key, and a
//! partial index is usable when every conjunct of its predicate is also a
//! conjunct of the WHERE clause (PostgreSQL proves implication more
//! generally; `predtest.c`).

use std::ops::ControlFlow;
use std::sync::Arc;

use sqlparser::ast;

use crate::expr::{bind_expr, Expr, ParamTypes, Scope};
use crate::functions::StaticContext;
use engine::catalog::{IndexDef, IndexExprBinder, IndexExprs, IndexSpec, TableDef, EXPR_KEY};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

/// The positional name of column `c` in stored index text.
fn placeholder(c: usize) -> String {
    format!("#{c}")
}

/// The column a positional name stands for.
fn placeholder_column(name: &str) -> Option<usize> {
    name.strip_prefix('#')?.parse().ok()
}

/// An identifier as the binder names it (unquoted: lower case).
fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// Functions PostgreSQL does not mark IMMUTABLE in any of their forms,
/// by name (hotpair keeps no volatility per function; these are the ones
/// an index would meet). Functions immutable for some argument types only
/// (`date_trunc`, `date_part` of a timestamptz are STABLE) are let
/// through, as are casts PostgreSQL marks STABLE (`timestamptz::date`).
const NOT_IMMUTABLE: &[&str] = &[
    "now",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtime",
    "localtimestamp",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "random",
    "setseed",
    "nextval",
    "currval",
    "lastval",
    "setval",
    "gen_random_uuid",
    "uuid_generate_v4",
    "current_user",
    "session_user",
    "current_role",
    "user",
    "current_schema",
    "current_database",
    "current_setting",
    "txid_current",
    "pg_current_xact_id",
    "to_char",
    "to_date",
    "inet_client_addr",
    "inet_client_port",
    "inet_server_addr",
    "inet_server_port",
    "pg_backend_pid",
    "version",
];

// Aggregates are not allowed in an index expression or predicate.
use crate::parser::errpos::AGGREGATES;

/// What a key expression or predicate is, for messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ExprKind {
    /// A key expression.
    Expression,
    /// A `WHERE` predicate.
    Predicate,
}

impl ExprKind {
    fn noun(self) -> &'static str {
        match self {
            ExprKind::Expression => "expression",
            ExprKind::Predicate => "predicate",
        }
    }
    fn plural(self) -> &'static str {
        match self {
            ExprKind::Expression => "index expressions",
            ExprKind::Predicate => "index predicates",
        }
    }
}

/// Checks what PostgreSQL refuses in an index expression or predicate
/// (aggregates 42803, subqueries 0A000, functions not IMMUTABLE 42P17)
/// and turns the column names into positional references. Returns the
/// stored text and adds the columns used to `used`.
pub fn to_stored(
    table: &TableDef,
    e: &ast::Expr,
    kind: ExprKind,
    used: &mut Vec<usize>,
) -> PgResult<String> {
    let mut err: Option<PgError> = None;
    let _ = ast::visit_expressions(e, |x| {
        match x {
            ast::Expr::Function(f) => {
                let name = f.name.0.last().map(ident_name).unwrap_or_default();
                if AGGREGATES.contains(&name.as_str()) {
                    err = Some(PgError::new(
                        sqlstate::GROUPING_ERROR,
                        format!("aggregate functions are not allowed in {}", kind.plural()),
                    ));
                } else if NOT_IMMUTABLE.contains(&name.as_str()) {
                    err = Some(PgError::new(
                        sqlstate::INVALID_OBJECT_DEFINITION,
                        format!(
                            "functions in index {} must be marked IMMUTABLE",
                            kind.noun()
                        ),
                    ));
                }
            }
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
                err = Some(PgError::unsupported(format!(
                    "cannot use subquery in index {}",
                    kind.noun()
                )));
            }
            _ => {}
        }
        if err.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        let col = match x {
            ast::Expr::Identifier(i) => table.column_index(&ident_name(i)),
            ast::Expr::CompoundIdentifier(v) if v.len() == 2 && ident_name(&v[0]) == table.name => {
                table.column_index(&ident_name(&v[1]))
            }
            _ => None,
        };
        if let Some(c) = col {
            if !used.contains(&c) {
                used.push(c);
            }
            *x = ast::Expr::Identifier(ast::Ident::with_quote('"', placeholder(c)));
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(e.to_string())
}

/// The stored text with the table's current column names put back.
pub fn named_expr(table: &TableDef, text: &str) -> PgResult<ast::Expr> {
    let mut e = crate::parser::parse_expr_text(text)?;
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let ast::Expr::Identifier(i) = x {
            if i.quote_style.is_some() {
                if let Some(col) = placeholder_column(&i.value).and_then(|c| table.columns.get(c)) {
                    *i = ast::Ident::with_quote('"', col.name.clone());
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(e)
}

/// The scope binding stored text: column `c` is named `#c`.
fn positional_scope(table: &TableDef) -> Scope {
    let cols: Vec<(String, SqlType)> = table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| (placeholder(i), c.ty))
        .collect();
    Scope::for_table(&table.name, &cols)
}

/// Binds stored text over the table's row.
fn bind_stored(table: &TableDef, text: &str) -> PgResult<(Expr, SqlType)> {
    let ast = crate::parser::parse_expr_text(text)?;
    let b = bind_expr(&ast, &positional_scope(table), &mut ParamTypes::new())?;
    let ty = if b.ty == SqlType::Unknown {
        SqlType::Text
    } else {
        b.ty
    };
    Ok((b.expr, ty))
}

/// 42P17 for what PostgreSQL marks STABLE by argument type, visible on
/// the bound tree: a cast between timestamptz and a type without time
/// zone (or text), `date_trunc` / `date_part` / `extract` of a
/// timestamptz column (their results depend on the TimeZone setting).
pub fn check_stable_uses(table: &TableDef, e: &Expr, kind: ExprKind) -> PgResult<()> {
    let col_ty = |x: &Expr| match x {
        Expr::Column(c) => table.columns.get(*c).map(|c| c.ty),
        Expr::Cast { to, .. } => Some(*to),
        Expr::Const(v) if !v.is_null() => Some(v.sql_type()),
        _ => None,
    };
    let mut stable = false;
    e.walk(&mut |x| match x {
        Expr::Cast { arg, to, .. } => {
            let from = col_ty(arg);
            let tz = |t: Option<SqlType>| t == Some(SqlType::TimestampTz);
            let zoneless =
                |t: SqlType| matches!(t, SqlType::Date | SqlType::Timestamp) || t.is_text_like();
            if (tz(from) && zoneless(*to))
                || (*to == SqlType::TimestampTz && from.is_some_and(zoneless))
            {
                stable = true;
            }
        }
        Expr::Func {
            func: crate::functions::Func::DateTrunc | crate::functions::Func::DatePart { .. },
            args,
        } if args.iter().any(|a| col_ty(a) == Some(SqlType::TimestampTz)) => stable = true,
        _ => {}
    });
    if stable {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!(
                "functions in index {} must be marked IMMUTABLE",
                kind.noun()
            ),
        ));
    }
    Ok(())
}

/// An index's keys and predicate bound over its table's row.
pub struct BoundIndex {
    /// One per key column: `Column(c)` for a plain key.
    pub keys: Vec<Expr>,
    /// The type of each key.
    pub types: Vec<SqlType>,
    /// The predicate of a partial index.
    pub predicate: Option<Expr>,
}

impl BoundIndex {
    /// Binds `spec` over rows of `table`; a predicate must be boolean
    /// (42804, as PostgreSQL's "argument of WHERE must be type boolean").
    pub fn bind(table: &TableDef, spec: &IndexSpec) -> PgResult<BoundIndex> {
        let mut keys = Vec::with_capacity(spec.columns.len());
        let mut types = Vec::with_capacity(spec.columns.len());
        let mut exprs = spec.exprs.iter();
        for &c in &spec.columns {
            if c == EXPR_KEY {
                let text = exprs
                    .next()
                    .ok_or_else(|| PgError::internal("index expression missing"))?;
                let (e, ty) = bind_stored(table, text)?;
                keys.push(e);
                types.push(ty);
            } else {
                let col = table
                    .columns
                    .get(c)
                    .ok_or_else(|| PgError::internal("index column out of range"))?;
                keys.push(Expr::Column(c));
                types.push(col.ty);
            }
        }
        let predicate = match &spec.predicate {
            None => None,
            Some(text) => {
                let (e, ty) = bind_stored(table, text)?;
                if ty != SqlType::Bool {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!(
                            "argument of WHERE must be type boolean, not type {}",
                            ty.pg_name()
                        ),
                    ));
                }
                Some(e)
            }
        };
        Ok(BoundIndex {
            keys,
            types,
            predicate,
        })
    }

    /// The predicate's conjuncts (empty for a full index).
    pub fn predicate_conjuncts(&self) -> Vec<&Expr> {
        self.predicate
            .as_ref()
            .map(|p| p.conjuncts())
            .unwrap_or_default()
    }
}

impl IndexExprs for BoundIndex {
    fn key_values(&self, row: &[Value], out: &mut Vec<Value>) -> PgResult<bool> {
        let mut cx = StaticContext;
        if let Some(p) = &self.predicate {
            if !matches!(crate::expr::eval(p, row, &[], &mut cx)?, Value::Bool(true)) {
                return Ok(false);
            }
        }
        out.clear();
        for (k, ty) in self.keys.iter().zip(&self.types) {
            let v = crate::expr::eval(k, row, &[], &mut cx)?;
            // A key is stored in its declared type (`lower(x)` of a
            // varchar is text).
            let v = if v.is_null() || v.sql_type() == *ty {
                v
            } else {
                pgtypes::value::cast(&v, *ty)?
            };
            out.push(v);
        }
        Ok(true)
    }
    fn key_types(&self) -> &[SqlType] {
        &self.types
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The binder the node installs ([`install`]).
struct Binder;

impl IndexExprBinder for Binder {
    fn bind(&self, table: &TableDef, spec: &IndexSpec) -> PgResult<Arc<dyn IndexExprs>> {
        Ok(Arc::new(BoundIndex::bind(table, spec)?))
    }
}

/// Registers the SQL layer as the engine's binder of index expressions
/// (once per process, before the database opens).
pub fn install() {
    engine::catalog::set_index_expr_binder(Box::new(Binder));
}

/// The bound form of a non-plain index (None for a plain one, or when it
/// does not bind: then the planner does not use it).
pub fn bound(table: &TableDef, ix: &IndexDef) -> Option<Arc<dyn IndexExprs>> {
    if ix.spec.is_plain() {
        return None;
    }
    ix.exprs(table).ok()
}

/// Each key column as `pg_get_indexdef` prints it: a column's quoted
/// name, a function call as is, any other expression in parentheses
/// (pretty: without the operators' own parentheses).
pub fn key_texts(table: &TableDef, spec: &IndexSpec, pretty: bool) -> Vec<String> {
    let mut exprs = spec.exprs.iter();
    spec.columns
        .iter()
        .map(|&c| {
            if c != EXPR_KEY {
                return table
                    .columns
                    .get(c)
                    .map(|col| crate::pgcatalog::quote_ident(&col.name))
                    .unwrap_or_default();
            }
            let text = exprs.next().map(String::as_str).unwrap_or("");
            match named_expr(table, text) {
                Ok(e) => {
                    let s = crate::pgcatalog::ruleutils::expr_text(&e, pretty);
                    if looks_like_function(&e) {
                        s
                    } else {
                        format!("({s})")
                    }
                }
                Err(_) => text.to_string(),
            }
        })
        .collect()
}

/// One key column as `pg_get_indexdef(index, n, pretty)` prints it.
pub fn key_column_text(
    table: &TableDef,
    spec: &IndexSpec,
    n: usize,
    pretty: bool,
) -> Option<String> {
    let c = *spec.columns.get(n)?;
    if c != EXPR_KEY {
        return table
            .columns
            .get(c)
            .map(|col| crate::pgcatalog::quote_ident(&col.name));
    }
    let k = spec.columns[..n].iter().filter(|c| **c == EXPR_KEY).count();
    let e = named_expr(table, spec.exprs.get(k)?).ok()?;
    let s = crate::pgcatalog::ruleutils::expr_text(&e, pretty);
    Some(if looks_like_function(&e) {
        s
    } else {
        format!("({s})")
    })
}

/// PostgreSQL's `looks_like_function`: printed without extra parentheses.
fn looks_like_function(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Function(_))
        || matches!(e, ast::Expr::Nested(i) if looks_like_function(i))
}

/// The predicate as `pg_get_expr(indpred)` prints it.
pub fn predicate_text(table: &TableDef, spec: &IndexSpec, pretty: bool) -> Option<String> {
    let text = spec.predicate.as_ref()?;
    Some(match named_expr(table, text) {
        Ok(e) => crate::pgcatalog::ruleutils::expr_text(&e, pretty),
        Err(_) => text.clone(),
    })
}

/// The expression keys as `pg_get_expr(indexprs)` prints them.
pub fn exprs_text(table: &TableDef, spec: &IndexSpec, pretty: bool) -> Option<String> {
    if spec.exprs.is_empty() {
        return None;
    }
    let v: Vec<String> = spec
        .exprs
        .iter()
        .map(|t| match named_expr(table, t) {
            Ok(e) => crate::pgcatalog::ruleutils::expr_text(&e, pretty),
            Err(_) => t.clone(),
        })
        .collect();
    Some(v.join(", "))
}

/// The name PostgreSQL gives a key column of the index (pg_attribute of
/// the index; `FigureColname`): the column's, the called function's, or
/// `expr`; repeated names get a number (`expr1`).
pub fn key_names(table: &TableDef, spec: &IndexSpec) -> Vec<String> {
    let mut exprs = spec.exprs.iter();
    let mut out: Vec<String> = Vec::new();
    for &c in &spec.columns {
        let base = if c == EXPR_KEY {
            let text = exprs.next().map(String::as_str).unwrap_or("");
            match crate::parser::parse_expr_text(text) {
                Ok(e) => figure_colname(&e),
                Err(_) => "expr".into(),
            }
        } else {
            table
                .columns
                .get(c)
                .map(|col| col.name.clone())
                .unwrap_or_default()
        };
        let mut name = base.clone();
        let mut n = 1;
        while out.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        out.push(name);
    }
    out
}

fn figure_colname(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Function(f) => f
            .name
            .0
            .last()
            .map(ident_name)
            .unwrap_or_else(|| "expr".into()),
        ast::Expr::Nested(i) => figure_colname(i),
        ast::Expr::Cast { expr, .. } => match expr.as_ref() {
            ast::Expr::Function(_) | ast::Expr::Nested(_) => figure_colname(expr),
            _ => "expr".into(),
        },
        _ => "expr".into(),
    }
}

/// The key values of `row` in `ix` as a unique violation's DETAIL shows
/// them: `Key (lower(email))=(a@x)`.
pub fn key_description(table: &TableDef, ix: &IndexDef, row: &[Value]) -> String {
    let names = key_texts(table, &ix.spec, false);
    let vals: Vec<String> = if ix.spec.is_plain() {
        ix.spec
            .columns
            .iter()
            .map(|c| row.get(*c).map(text_of).unwrap_or_default())
            .collect()
    } else {
        let mut v = Vec::new();
        match ix.exprs(table).and_then(|b| b.key_values(row, &mut v)) {
            Ok(_) => v.iter().map(text_of).collect(),
            Err(_) => Vec::new(),
        }
    };
    format!("Key ({})=({})", names.join(", "), vals.join(", "))
}

fn text_of(v: &Value) -> String {
    if v.is_null() {
        "null".into()
    } else {
        v.to_text_string()
    }
}

/// An index scan's `Index Cond` as PostgreSQL's EXPLAIN prints it —
/// `(lower(email) = 'x'::text)`, `((a = 1) AND ((b + 1) = 2))` — given
/// the text of each key value (`crate::planner::deparse`).
pub fn index_cond_text(table: &TableDef, ix: &IndexDef, key: &[String]) -> Option<String> {
    let mut exprs = ix.spec.exprs.iter();
    let mut conds = Vec::new();
    for (&c, k) in ix.spec.columns.iter().zip(key) {
        let left = if c == EXPR_KEY {
            let e = named_expr(table, exprs.next()?).ok()?;
            crate::pgcatalog::ruleutils::expr_text(&e, false)
        } else {
            crate::pgcatalog::quote_ident(&table.columns.get(c)?.name)
        };
        conds.push(format!("({left} = {k})"));
    }
    Some(match conds.len() {
        0 => return None,
        1 => conds.remove(0),
        _ => format!("({})", conds.join(" AND ")),
    })
}

/// The unique indexes of `table` an `ON CONFLICT (elements) [WHERE
/// pred]` inference with expressions names (the parser's
/// [`crate::parser::CONFLICT_INFERENCE`] text, prefix removed): those
/// whose keys are, as a set, the bound elements, and whose predicate's
/// conjuncts are all conjuncts of `pred` (PostgreSQL's
/// `infer_arbiter_indexes`, with implication proven only verbatim).
/// 42P10 when there is none.
pub fn infer_arbiters(table: &TableDef, inference: &str) -> PgResult<Vec<String>> {
    let (elems, pred) = match inference.split_once(crate::parser::CONFLICT_INFERENCE_WHERE) {
        Some((e, p)) => (e, Some(p)),
        None => (inference, None),
    };
    let list = crate::parser::parse_expr_text(&format!("({elems})"))?;
    let items: Vec<ast::Expr> = match list {
        ast::Expr::Tuple(v) => v,
        ast::Expr::Nested(e) => vec![*e],
        other => vec![other],
    };
    let mut want = Vec::with_capacity(items.len());
    let mut used = Vec::new();
    for item in &items {
        let mut e = item;
        while let ast::Expr::Nested(inner) = e {
            e = inner;
        }
        if let ast::Expr::Identifier(i) = e {
            let n = ident_name(i);
            if table.column_index(&n).is_none() {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{n}\" does not exist"),
                ));
            }
        }
        let text = to_stored(table, e, ExprKind::Expression, &mut used)?;
        let (b, _) = bind_stored(table, &text)?;
        if !want.contains(&b) {
            want.push(b);
        }
    }
    let pred = match pred {
        Some(p) => {
            let ast = crate::parser::parse_expr_text(p)?;
            let text = to_stored(table, &ast, ExprKind::Predicate, &mut used)?;
            Some(bind_stored(table, &text)?.0)
        }
        None => None,
    };
    let given: Vec<&Expr> = pred.as_ref().map(|p| p.conjuncts()).unwrap_or_default();
    let mut found = Vec::new();
    for ix in table.indexes.list() {
        if !ix.spec.unique {
            continue;
        }
        let Ok(b) = BoundIndex::bind(table, &ix.spec) else {
            continue;
        };
        let mut keys: Vec<&Expr> = Vec::new();
        for k in &b.keys {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        if keys.len() != want.len() || !want.iter().all(|w| keys.contains(&w)) {
            continue;
        }
        if !b.predicate_conjuncts().iter().all(|p| given.contains(p)) {
            continue;
        }
        found.push(ix.spec.name.clone());
    }
    if found.is_empty() {
        return Err(PgError::new(
            sqlstate::INVALID_COLUMN_REFERENCE,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification",
        ));
    }
    Ok(found)
}
