//! Planning one query level: WITH, set operations, VALUES and the SELECT
//! block (PostgreSQL's analyze.c transformSelectStmt / prepunion.c /
//! planner.c grouping_planner, in miniature).
//!
//! A SELECT block becomes, bottom up:
//!
//! ```text
//!   FROM tree (scans and joins, WHERE pushed down: fromclause.rs)
//!   → Agg (GROUP BY / aggregates) → Filter (HAVING)
//!   → Project (select list + hidden ORDER BY / DISTINCT ON columns)
//!   → HashDistinct (DISTINCT) | Sort → Unique (DISTINCT ON) | Sort
//!   → Limit → Project (drop hidden columns)
//! ```
//!
//! Every expression is bound against the block's [`Level`], so it may hold
//! subqueries and references to enclosing queries (`subselect.rs`).
//! Names follow PostgreSQL: ORDER BY prefers an output column name, then
//! an input expression; GROUP BY takes positions, input columns, then
//! output names. A set operation resolves each column's type over both
//! sides (`UNION types integer and text cannot be matched` otherwise) and
//! takes its names from the left side; its ORDER BY may name output
//! columns or positions only.

use std::cell::Cell;
use std::rc::Rc;

use sqlparser::ast;

use super::fromclause::{and_all, filter, read_from, JoinPlanner, JoinTree};
use super::plannodes::{NodeKind, PlanNode, SetOpKind};
use super::subselect::{CteBinding, Global, Hook, Level, Outer};
use super::{
    const_i64, ident_name, no_equality_for, no_ordering_for, object_name, output_expr, SortKey,
};
use crate::expr::{
    bind_expr, bind_expr_hooked, coerce, output_name, BoundExpr, Expr, Grouping, ParamTypes,
};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::Oid;

/// 42P10 invalid_column_reference.
const INVALID_COLUMN_REFERENCE: &str = "42P10";

/// One output column of a query level.
#[derive(Clone, Debug)]
pub struct OutCol {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: SqlType,
    /// (table oid, column number) when it is a table column as is.
    pub origin: Option<(Oid, i16)>,
    /// An untyped literal (shown as text): a set operation resolves it
    /// from the other side, as PostgreSQL resolves `unknown`.
    pub unknown: bool,
}

/// Plans a whole query (WITH, body, ORDER BY, LIMIT) below `cte_parent`,
/// inside the correlation boundary `outer` if it is a subquery.
pub fn plan_query_level(
    g: &Global<'_, '_>,
    q: &ast::Query,
    outer: Option<&Outer<'_>>,
    cte_parent: Option<&Level<'_>>,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<OutCol>)> {
    if !q.locks.is_empty() {
        return Err(PgError::unsupported(
            "SELECT FOR UPDATE/SHARE is not supported",
        ));
    }
    let level = Level::empty(outer, cte_parent);
    if let Some(with) = &q.with {
        plan_with(g, q, with, outer.is_none(), &level, params)?;
    }
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => plan_select(g, s, Some(q), &level, params),
        body => {
            let (node, cols) = plan_setexpr(g, body, &level, params)?;
            order_outputs(q, node, cols, params)
        }
    }
}

/// How many times `q` (its body and its CTEs) names a relation `name`
/// without a schema: the references a CTE of that name may have.
fn cte_references(q: &ast::Query, name: &str) -> usize {
    let mut n = 0;
    let _ = ast::visit_relations(q, |r: &ast::ObjectName| {
        if let [id] = r.0.as_slice() {
            if ident_name(id) == name {
                n += 1;
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    n
}

/// Binds the CTEs of `q`'s WITH clause. As in PostgreSQL, a CTE is
/// materialized (planned once, read by CteScan) when it says
/// `MATERIALIZED`, or when it is referenced more than once and does not
/// say `NOT MATERIALIZED` — then it is computed once (TPC-H Q15 reads its
/// revenue view twice; a volatile function in it gives one value); other
/// CTEs are planned where referenced, like derived tables. Only a query
/// outside any correlation boundary (`uncorrelated`) materializes one
/// unasked, as a materialized CTE's plan cannot read outer columns.
fn plan_with(
    g: &Global<'_, '_>,
    q: &ast::Query,
    with: &ast::With,
    uncorrelated: bool,
    level: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<()> {
    for cte in &with.cte_tables {
        let name = ident_name(&cte.alias.name);
        let aliases: Vec<String> = cte.alias.columns.iter().map(ident_name).collect();
        if level.ctes.borrow().iter().any(|(n, _)| *n == name) {
            return Err(PgError::new(
                "42712",
                format!("WITH query name \"{name}\" specified more than once"),
            ));
        }
        if with.recursive && try_recursive(g, cte, &name, &aliases, level, params)? {
            continue;
        }
        let materialize = match cte.materialized {
            Some(ast::CteAsMaterialized::Materialized) => true,
            Some(ast::CteAsMaterialized::NotMaterialized) => false,
            None => uncorrelated && cte_references(q, &name) > 1,
        };
        if materialize {
            let (node, mut cols) = plan_query_level(g, &cte.query, None, Some(level), params)?;
            rename(&mut cols, &aliases, &name)?;
            let mut ctes = g.ctes.borrow_mut();
            let id = ctes.len();
            ctes.push(super::plannodes::CteDef {
                name: name.clone(),
                plan: node,
            });
            level
                .ctes
                .borrow_mut()
                .push((name, Rc::new(CteBinding::Materialized { id, cols })));
        } else {
            level.ctes.borrow_mut().push((
                name,
                Rc::new(CteBinding::Inline {
                    query: cte.query.clone(),
                    columns: aliases,
                    busy: Cell::new(false),
                }),
            ));
        }
    }
    Ok(())
}

fn rename(cols: &mut [OutCol], aliases: &[String], name: &str) -> PgResult<()> {
    if aliases.len() > cols.len() {
        return Err(PgError::new(
            INVALID_COLUMN_REFERENCE,
            format!(
                "WITH query \"{name}\" has {} columns available but {} columns specified",
                cols.len(),
                aliases.len()
            ),
        ));
    }
    for (c, a) in cols.iter_mut().zip(aliases) {
        c.name = a.clone();
    }
    Ok(())
}

/// WITH RECURSIVE `name` AS (non-recursive UNION [ALL] recursive): true if
/// planned as a recursive CTE (the right side reads `name`).
fn try_recursive(
    g: &Global<'_, '_>,
    cte: &ast::Cte,
    name: &str,
    aliases: &[String],
    level: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<bool> {
    let q = &cte.query;
    let ast::SetExpr::SetOperation {
        op: ast::SetOperator::Union,
        set_quantifier,
        left,
        right,
    } = q.body.as_ref()
    else {
        return Ok(false);
    };
    if q.order_by.is_some() || q.limit.is_some() || q.offset.is_some() || q.with.is_some() {
        return Ok(false);
    }
    let (lnode, mut lcols) = plan_setexpr(g, left, level, params)?;
    rename(&mut lcols, aliases, name)?;
    let id = {
        let mut ctes = g.ctes.borrow_mut();
        ctes.push(super::plannodes::CteDef {
            name: name.to_string(),
            plan: PlanNode::new(NodeKind::Result, 0, 0.0),
        });
        ctes.len() - 1
    };
    let binding = Rc::new(CteBinding::WorkTable {
        id,
        cols: lcols.clone(),
        used: Cell::new(false),
    });
    level
        .ctes
        .borrow_mut()
        .push((name.to_string(), binding.clone()));
    let r = plan_setexpr(g, right, level, params);
    level.ctes.borrow_mut().pop();
    let (rnode, rcols) = r?;
    let CteBinding::WorkTable { used, .. } = binding.as_ref() else {
        return Ok(false);
    };
    if !used.get() {
        return Ok(false);
    }
    super::subselect::check_recursive_term(&rnode)?;
    if rcols.len() != lcols.len() {
        return Err(PgError::syntax(
            "each UNION query must have the same number of columns",
        ));
    }
    let mut casts = Vec::new();
    for (i, (l, r)) in lcols.iter().zip(&rcols).enumerate() {
        if l.ty != r.ty && !crate::functions::can_coerce_implicit(r.ty, l.ty) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                    i + 1,
                    l.ty.pg_name(),
                    r.ty.pg_name()
                ),
            )
            .with_hint("Cast the output of the non-recursive term to the correct type."));
        }
        casts.push(l.ty);
    }
    let from: Vec<SqlType> = rcols.iter().map(|c| c.ty).collect();
    let rnode = cast_project(rnode, &from, &casts, params)?;
    let width = lnode.width;
    let plan = PlanNode::new(
        NodeKind::RecursiveUnion {
            nonrec: Box::new(lnode),
            rec: Box::new(rnode),
            cte: id,
            distinct: !matches!(set_quantifier, ast::SetQuantifier::All),
        },
        width,
        100.0,
    );
    if let Some(c) = g.ctes.borrow_mut().get_mut(id) {
        c.plan = plan;
    }
    level.ctes.borrow_mut().push((
        name.to_string(),
        Rc::new(CteBinding::Materialized { id, cols: lcols }),
    ));
    Ok(true)
}

/// A Project casting column `i` from `from[i]` to `to[i]` where they differ.
fn cast_project(
    node: PlanNode,
    from: &[SqlType],
    to: &[SqlType],
    params: &mut ParamTypes,
) -> PgResult<PlanNode> {
    if from == to {
        return Ok(node);
    }
    let mut exprs = Vec::with_capacity(to.len());
    for (i, (f, t)) in from.iter().zip(to).enumerate() {
        exprs.push(if f == t {
            Expr::Column(i)
        } else {
            coerce(
                BoundExpr {
                    expr: Expr::Column(i),
                    ty: *f,
                },
                *t,
                params,
            )?
        });
    }
    Ok(project(node, exprs))
}

/// A Project node.
pub fn project(node: PlanNode, exprs: Vec<Expr>) -> PlanNode {
    let rows = node.rows;
    let w = exprs.len();
    PlanNode::new(
        NodeKind::Project {
            input: Box::new(node),
            exprs,
        },
        w,
        rows,
    )
}

/// Plans a query body that is not a plain SELECT with its own ORDER BY.
pub fn plan_setexpr(
    g: &Global<'_, '_>,
    body: &ast::SetExpr,
    level: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<OutCol>)> {
    match body {
        ast::SetExpr::Select(s) => plan_select(g, s, None, level, params),
        ast::SetExpr::Query(q) => plan_query_level(g, q, level.outer, Some(level), params),
        ast::SetExpr::Values(v) => plan_values(g, v, level, params),
        ast::SetExpr::SetOperation {
            op,
            set_quantifier,
            left,
            right,
        } => {
            let opname = match op {
                ast::SetOperator::Union => "UNION",
                ast::SetOperator::Intersect => "INTERSECT",
                ast::SetOperator::Except => "EXCEPT",
            };
            let all = match set_quantifier {
                ast::SetQuantifier::All => true,
                ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
                _ => {
                    return Err(PgError::unsupported(format!(
                        "{opname} BY NAME is not supported"
                    )))
                }
            };
            let (ln, lc) = plan_setexpr(g, left, level, params)?;
            let (rn, rc) = plan_setexpr(g, right, level, params)?;
            if lc.len() != rc.len() {
                return Err(PgError::syntax(format!(
                    "each {opname} query must have the same number of columns"
                )));
            }
            let declared = |c: &OutCol| if c.unknown { SqlType::Unknown } else { c.ty };
            let mut types = Vec::with_capacity(lc.len());
            for (l, r) in lc.iter().zip(&rc) {
                if l.unknown && r.unknown {
                    types.push(SqlType::Text);
                    continue;
                }
                let t = crate::functions::common_type(&[declared(l), declared(r)]).ok_or_else(
                    || {
                        PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            format!(
                                "{opname} types {} and {} cannot be matched",
                                l.ty.pg_name(),
                                r.ty.pg_name()
                            ),
                        )
                    },
                )?;
                types.push(if t == SqlType::Unknown {
                    SqlType::Text
                } else {
                    t
                });
            }
            let lt: Vec<SqlType> = lc.iter().map(declared).collect();
            let rt: Vec<SqlType> = rc.iter().map(declared).collect();
            let ln = cast_project(ln, &lt, &types, params)?;
            let rn = cast_project(rn, &rt, &types, params)?;
            let w = types.len();
            let rows = ln.rows + rn.rows;
            let node = match op {
                ast::SetOperator::Union => {
                    let app = PlanNode::new(
                        NodeKind::Append {
                            inputs: vec![ln, rn],
                        },
                        w,
                        rows,
                    );
                    if all {
                        app
                    } else {
                        PlanNode::new(
                            NodeKind::HashDistinct {
                                input: Box::new(app),
                                columns: (0..w).collect(),
                            },
                            w,
                            rows,
                        )
                    }
                }
                ast::SetOperator::Intersect | ast::SetOperator::Except => PlanNode::new(
                    NodeKind::SetOp {
                        op: if matches!(op, ast::SetOperator::Intersect) {
                            SetOpKind::Intersect
                        } else {
                            SetOpKind::Except
                        },
                        all,
                        left: Box::new(ln),
                        right: Box::new(rn),
                    },
                    w,
                    rows / 2.0,
                ),
            };
            let cols = lc
                .into_iter()
                .zip(types)
                .map(|(c, ty)| OutCol {
                    name: c.name,
                    ty,
                    origin: None,
                    unknown: false,
                })
                .collect();
            Ok((node, cols))
        }
        _ => Err(PgError::unsupported(
            "data-modifying statements in WITH or as subqueries are not supported",
        )),
    }
}

/// A VALUES list as a table: `column1 … columnN`, each column's type
/// resolved over its rows.
fn plan_values(
    g: &Global<'_, '_>,
    v: &ast::Values,
    level: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<OutCol>)> {
    let width = v.rows.first().map(|r| r.len()).unwrap_or(0);
    if v.rows.iter().any(|r| r.len() != width) {
        return Err(PgError::syntax("VALUES lists must all be the same length"));
    }
    let mut hook = Hook { g, level };
    let mut bound: Vec<Vec<BoundExpr>> = Vec::with_capacity(v.rows.len());
    for r in &v.rows {
        let mut row = Vec::with_capacity(width);
        for e in r {
            row.push(bind_expr_hooked(e, &level.scope, params, None, &mut hook)?);
        }
        bound.push(row);
    }
    let mut types = Vec::with_capacity(width);
    for c in 0..width {
        let col: Vec<SqlType> = bound.iter().map(|r| r[c].ty).collect();
        let t = crate::functions::common_type(&col).ok_or_else(|| {
            let a = col[0];
            let b = col.iter().copied().find(|t| *t != a).unwrap_or(a);
            PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "VALUES types {} and {} cannot be matched",
                    a.pg_name(),
                    b.pg_name()
                ),
            )
        })?;
        types.push(if t == SqlType::Unknown {
            SqlType::Text
        } else {
            t
        });
    }
    let n = bound.len();
    let mut rows = Vec::with_capacity(n);
    for r in bound {
        let mut out = Vec::with_capacity(width);
        for (b, t) in r.into_iter().zip(&types) {
            out.push(if b.ty == *t {
                b.expr
            } else {
                coerce(b, *t, params)?
            });
        }
        rows.push(out);
    }
    let cols = types
        .iter()
        .enumerate()
        .map(|(i, t)| OutCol {
            name: format!("column{}", i + 1),
            ty: *t,
            origin: None,
            unknown: false,
        })
        .collect();
    Ok((
        PlanNode::new(NodeKind::Values { rows }, width, n as f64),
        cols,
    ))
}

/// FETCH FIRST … WITH TIES: the ORDER BY columns of the sorted `node`
/// (the sort sits below a DISTINCT ON's Unique, if any).
fn ties_columns(q: &ast::Query, node: &PlanNode) -> PgResult<Option<Vec<usize>>> {
    if !q.fetch.as_ref().is_some_and(|f| f.with_ties) {
        return Ok(None);
    }
    let mut n = node;
    loop {
        match &n.kind {
            NodeKind::Sort { keys, .. } => {
                return Ok(Some(keys.iter().map(|k| k.column).collect()))
            }
            NodeKind::Unique { input, .. } => n = input,
            _ => {
                return Err(PgError::syntax(
                    "WITH TIES cannot be specified without ORDER BY clause",
                ))
            }
        }
    }
}

/// LIMIT / OFFSET / FETCH FIRST of a query.
fn limits(q: &ast::Query, params: &mut ParamTypes) -> PgResult<(Option<Expr>, Option<Expr>)> {
    let mut limit = match &q.limit {
        Some(ast::Expr::Value(ast::Value::Null)) | None => None,
        Some(l) => Some(bind_count(l, params)?),
    };
    if let Some(f) = &q.fetch {
        if f.with_ties && q.order_by.is_none() {
            return Err(PgError::syntax(
                "WITH TIES cannot be specified without ORDER BY clause",
            ));
        }
        if f.percent {
            return Err(PgError::unsupported(
                "FETCH FIRST … PERCENT is not supported",
            ));
        }
        limit = Some(match &f.quantity {
            Some(e) => bind_count(e, params)?,
            None => Expr::Const(pgtypes::value::Value::Int8(1)),
        });
    }
    let offset = match &q.offset {
        Some(o) => Some(bind_count(&o.value, params)?),
        None => None,
    };
    Ok((limit, offset))
}

fn bind_count(e: &ast::Expr, params: &mut ParamTypes) -> PgResult<Expr> {
    let b = bind_expr(e, &crate::expr::Scope::new(), params)?;
    coerce(b, SqlType::Int8, params)
}

fn limit_node(node: PlanNode, limit: Option<Expr>, offset: Option<Expr>) -> PlanNode {
    if limit.is_none() && offset.is_none() {
        return node;
    }
    let w = node.width;
    let rows = match &limit {
        Some(Expr::Const(v)) => v
            .as_i64()
            .map(|n| n as f64)
            .unwrap_or(node.rows)
            .min(node.rows),
        _ => node.rows,
    };
    PlanNode::new(
        NodeKind::Limit {
            input: Box::new(node),
            limit,
            offset,
            ties: None,
        },
        w,
        rows,
    )
}

fn sort_node(node: PlanNode, keys: Vec<SortKey>) -> PlanNode {
    let (w, rows) = (node.width, node.rows);
    PlanNode::new(
        NodeKind::Sort {
            input: Box::new(node),
            keys,
        },
        w,
        rows,
    )
}

/// ORDER BY / LIMIT over the output of a set operation or VALUES: output
/// names and positions only.
fn order_outputs(
    q: &ast::Query,
    node: PlanNode,
    cols: Vec<OutCol>,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<OutCol>)> {
    let mut keys = Vec::new();
    if let Some(ob) = &q.order_by {
        for o in &ob.exprs {
            let desc = o.asc == Some(false);
            let nulls_first = o.nulls_first.unwrap_or(desc);
            let column =
                if let Some(n) = const_i64(&o.expr) {
                    if n < 1 || n as usize > cols.len() {
                        return Err(PgError::new(
                            INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {n} is not in select list"),
                        ));
                    }
                    n as usize - 1
                } else {
                    let name = match &o.expr {
                        ast::Expr::Identifier(id) => Some(ident_name(id)),
                        _ => None,
                    };
                    match name.and_then(|n| cols.iter().position(|c| c.name == n)) {
                        Some(i) => i,
                        None => return Err(PgError::unsupported(
                            "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                        )
                        .with_detail(
                            "Only result column names can be used, not expressions or functions.",
                        )),
                    }
                };
            no_ordering_for(cols[column].ty)?;
            keys.push(SortKey {
                column,
                desc,
                nulls_first,
            });
        }
    }
    let mut node = node;
    if !keys.is_empty() {
        node = sort_node(node, keys);
    }
    let (limit, offset) = limits(q, params)?;
    Ok((limit_node(node, limit, offset), cols))
}

/// Plans one SELECT block; `q` carries its ORDER BY / LIMIT when it is
/// the body of a query.
pub fn plan_select(
    g: &Global<'_, '_>,
    select: &ast::Select,
    q: Option<&ast::Query>,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<OutCol>)> {
    if select.top.is_some() || select.into.is_some() || !select.lateral_views.is_empty() {
        return Err(PgError::unsupported("this SELECT form is not supported"));
    }
    let distinct_on: Option<&Vec<ast::Expr>> = match &select.distinct {
        Some(ast::Distinct::On(v)) => Some(v),
        _ => None,
    };
    let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));

    // Set-returning functions as whole target-list items run as PostgreSQL's
    // ProjectSet does: once per row of the FROM list, in lockstep. The
    // calls move to a last FROM item, `ROWS FROM (f(…), g(…))` (implicitly
    // LATERAL: its arguments read the other items), and each item reads
    // its column. Before grouping only: with GROUP BY, HAVING or aggregates
    // (checked once the select list is bound) PostgreSQL runs them after.
    let srfs = super::target_list_srfs(&select.projection, !select.from.is_empty())?;
    let srf_rewrite = !srfs.is_empty();
    if srf_rewrite
        && (select.having.is_some()
            || !matches!(&select.group_by, ast::GroupByExpr::Expressions(v, _) if v.is_empty()))
    {
        return Err(srf_after_grouping());
    }
    let rewritten;
    let select = if srf_rewrite {
        let mut s = select.clone();
        let qual = ast::Ident::with_quote('"', super::fromclause::ROWS_FROM);
        let mut columns = Vec::new();
        let mut calls = Vec::new();
        for (k, srf) in srfs.into_iter().enumerate() {
            let col =
                ast::Ident::with_quote('"', format!("{} {}", super::fromclause::ROWS_FROM, k + 1));
            let expr = ast::Expr::CompoundIdentifier(vec![qual.clone(), col.clone()]);
            s.projection[srf.item] = match &s.projection[srf.item] {
                ast::SelectItem::ExprWithAlias { alias, .. } => ast::SelectItem::ExprWithAlias {
                    expr,
                    alias: alias.clone(),
                },
                // The column is named after the function.
                _ => ast::SelectItem::ExprWithAlias {
                    expr,
                    alias: ast::Ident::with_quote('"', srf.name.as_str()),
                },
            };
            columns.push(col);
            calls.push(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                ast::Expr::Function(srf.call),
            )));
        }
        s.from.push(ast::TableWithJoins {
            relation: ast::TableFactor::Function {
                lateral: true,
                name: ast::ObjectName(vec![ast::Ident::new(super::fromclause::ROWS_FROM)]),
                args: calls,
                alias: Some(ast::TableAlias {
                    name: qual,
                    columns,
                }),
            },
            joins: Vec::new(),
        });
        rewritten = s;
        &rewritten
    } else {
        select
    };

    // FROM.
    let mut from = read_from(g, &select.from, ctx, params)?;

    // WHERE: `x IN (SELECT key FROM t …)` over a unique key joins `t` to
    // the FROM run (sublink_join::UniqueIn).
    let mut conj = Vec::new();
    if let Some(w) = &select.selection {
        split_and(w, &mut conj);
    }
    let mut pulled_up: Vec<Expr> = Vec::new();
    let mut consumed: Vec<*const ast::Expr> = Vec::new();
    if from.tree.is_some() {
        for &c in &conj {
            if let Some(u) = super::sublink_join::try_unique_in(g, c, &from, ctx, params)? {
                if let Some(start) = from.add_hidden(u.from) {
                    pulled_up.extend(u.cond.quals(start));
                    consumed.push(c as *const ast::Expr);
                }
            }
        }
    }
    let level = Level {
        scope: from.scope.clone(),
        base_width: from.base_width,
        merged: from.merged.clone(),
        outer: ctx.outer,
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: Some(ctx),
    };
    let scope = &level.scope;
    let mut hook = Hook { g, level: &level };

    // ON conditions, now that every name is known.
    if let Some(t) = from.tree.as_mut() {
        bind_on(t, &level, &mut hook, params)?;
    }

    // WHERE: EXISTS / NOT EXISTS conjuncts that correlate through their
    // WHERE clause become semi / anti joins; the rest are bound here.
    let mut quals = pulled_up;
    let mut semis = Vec::new();
    {
        for c in conj {
            if consumed.contains(&(c as *const ast::Expr)) {
                continue;
            }
            if let Some((sub, negated)) = as_exists(c) {
                if let Some(sj) =
                    super::sublink_join::try_semijoin(g, sub, negated, &level, params)?
                {
                    semis.push(sj);
                    continue;
                }
            }
            let b = bind_expr_hooked(c, scope, params, None, &mut hook)?;
            let e = require_bool(b, params, "WHERE")?;
            let e = level.subst(e);
            for c in e.conjuncts() {
                quals.extend(super::fromclause::factor_ors(c.clone()));
            }
        }
    }
    // GROUP BY (with GROUPING SETS / ROLLUP / CUBE: the distinct keys and
    // each set's keys).
    let mut group_sets: Option<Vec<Vec<usize>>> = None;
    let group_keys: Vec<Expr> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) => {
            if !mods.is_empty() {
                return Err(PgError::unsupported("GROUP BY modifiers are not supported"));
            }
            let mut keys: Vec<Expr> = Vec::new();
            let mut bind_key =
                |e: &ast::Expr, keys: &mut Vec<Expr>, params: &mut ParamTypes| -> PgResult<usize> {
                    let ast_e = match const_i64(e) {
                        Some(n) => match select.projection.get((n.max(1) - 1) as usize) {
                            Some(ast::SelectItem::UnnamedExpr(x))
                            | Some(ast::SelectItem::ExprWithAlias { expr: x, .. })
                                if n >= 1 =>
                            {
                                x
                            }
                            _ => {
                                return Err(PgError::new(
                                    INVALID_COLUMN_REFERENCE,
                                    format!("GROUP BY position {n} is not in select list"),
                                ))
                            }
                        },
                        None => group_by_alias(e, select, scope).unwrap_or(e),
                    };
                    let b = bind_expr_hooked(ast_e, scope, params, None, &mut hook)?;
                    no_equality_for(b.ty)?;
                    let k = level.subst(b.expr);
                    Ok(match keys.iter().position(|x| *x == k) {
                        Some(i) => i,
                        None => {
                            keys.push(k);
                            keys.len() - 1
                        }
                    })
                };
            let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
            let mut has_sets = false;
            for e in exprs {
                let item_sets = match e {
                    ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_) => {
                        has_sets = true;
                        super::window::expand_grouping_item(e, &mut |x| {
                            bind_key(x, &mut keys, params)
                        })?
                    }
                    // `GROUP BY ()`: the empty grouping set.
                    ast::Expr::Tuple(v) if v.is_empty() => vec![Vec::new()],
                    _ => vec![vec![bind_key(e, &mut keys, params)?]],
                };
                sets = super::window::cross_sets(&sets, &item_sets);
            }
            if has_sets {
                group_sets = Some(sets);
            }
            keys
        }
        ast::GroupByExpr::All(_) => {
            return Err(PgError::unsupported("GROUP BY ALL is not supported"))
        }
    };
    let mut grouping = Grouping::new(group_keys);
    grouping.sets = group_sets;
    grouping.named_windows = crate::expr::window::resolve_named_windows(&select.named_window)?;

    // Select list.
    let mut targets = Vec::new();
    let mut cols: Vec<OutCol> = Vec::new();
    let mut target_asts: Vec<Option<&ast::Expr>> = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_, _) => {
                let entries: Vec<usize> = match item {
                    ast::SelectItem::QualifiedWildcard(name, _) => {
                        let q = object_name(name);
                        let v: Vec<usize> = (0..from.base_width)
                            .filter(|&i| scope.columns[i].table.as_deref() == Some(q.as_str()))
                            .collect();
                        if v.is_empty() {
                            return Err(PgError::new(
                                sqlstate::UNDEFINED_TABLE,
                                format!("missing FROM-clause entry for table \"{q}\""),
                            ));
                        }
                        v
                    }
                    _ => {
                        if from.tree.is_none() {
                            return Err(PgError::syntax(
                                "SELECT * with no tables specified is not valid",
                            ));
                        }
                        from.star.clone()
                    }
                };
                for i in entries {
                    let c = &scope.columns[i];
                    targets.push(level.subst(Expr::Column(i)));
                    cols.push(OutCol {
                        name: c.name.clone(),
                        ty: c.ty,
                        origin: from.origins.get(i).copied().flatten(),
                        unknown: false,
                    });
                    target_asts.push(None);
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let b = bind_expr_hooked(e, scope, params, Some(&mut grouping), &mut hook)?;
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => output_name(e),
                };
                let unknown = b.ty == SqlType::Unknown;
                let (expr, ty) = output_expr(b, params)?;
                let origin = match &expr {
                    Expr::Column(i) => from.origins.get(*i).copied().flatten(),
                    _ => None,
                };
                targets.push(level.subst(expr));
                cols.push(OutCol {
                    name,
                    ty,
                    origin,
                    unknown,
                });
                target_asts.push(Some(e));
            }
        }
    }
    let visible = targets.len();
    if srf_rewrite && (!grouping.aggs.is_empty() || !grouping.windows.is_empty()) {
        return Err(srf_after_grouping());
    }
    if distinct {
        for c in &cols {
            no_equality_for(c.ty)?;
        }
    }

    // HAVING.
    let having = match &select.having {
        Some(h) => {
            grouping.no_windows = Some("HAVING");
            let b = bind_expr_hooked(h, scope, params, Some(&mut grouping), &mut hook);
            grouping.no_windows = None;
            Some(level.subst(coerce(b?, SqlType::Bool, params)?))
        }
        None => None,
    };

    // ORDER BY: output position, output name, or an expression (hidden
    // column).
    let mut sort = Vec::new();
    let order_by = q.and_then(|q| q.order_by.as_ref());
    let names: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    let mut resolve_item = |e: &ast::Expr,
                            targets: &mut Vec<Expr>,
                            grouping: &mut Grouping,
                            params: &mut ParamTypes,
                            what: &str|
     -> PgResult<usize> {
        if let Some(n) = const_i64(e) {
            if n < 1 || n as usize > visible {
                return Err(PgError::new(
                    INVALID_COLUMN_REFERENCE,
                    format!("{what} position {n} is not in select list"),
                ));
            }
            return Ok(n as usize - 1);
        }
        if let ast::Expr::Identifier(id) = e {
            let n = ident_name(id);
            if let Some(i) = names.iter().position(|x| *x == n) {
                return Ok(i);
            }
        }
        if let Some(i) = target_asts.iter().position(|t| *t == Some(e)) {
            return Ok(i);
        }
        if distinct && what == "ORDER BY" {
            return Err(PgError::new(
                INVALID_COLUMN_REFERENCE,
                "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
            ));
        }
        let b = bind_expr_hooked(e, scope, params, Some(grouping), &mut hook)?;
        no_ordering_for(b.ty)?;
        targets.push(level.subst(b.expr));
        Ok(targets.len() - 1)
    };
    if let Some(ob) = order_by {
        for o in &ob.exprs {
            let desc = o.asc == Some(false);
            let nulls_first = o.nulls_first.unwrap_or(desc);
            let column = resolve_item(&o.expr, &mut targets, &mut grouping, params, "ORDER BY")?;
            if let Some(c) = cols.get(column) {
                no_ordering_for(c.ty)?;
            }
            sort.push(SortKey {
                column,
                desc,
                nulls_first,
            });
        }
    }
    let mut on_cols = Vec::new();
    if let Some(on) = distinct_on {
        for e in on {
            on_cols.push(resolve_item(
                e,
                &mut targets,
                &mut grouping,
                params,
                "DISTINCT ON",
            )?);
        }
        if !sort.is_empty() {
            let n = on_cols.len().min(sort.len());
            let prefix: Vec<usize> = sort[..n].iter().map(|k| k.column).collect();
            let ok = sort.len() >= on_cols.len() && on_cols.iter().all(|c| prefix.contains(c));
            if !ok {
                return Err(PgError::new(
                    INVALID_COLUMN_REFERENCE,
                    "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
                ));
            }
        }
    }

    // Aggregation: everything above reads the post-aggregation row.
    let mut windows = Vec::with_capacity(grouping.windows.len());
    for w in std::mem::take(&mut grouping.windows) {
        windows.push(w.map_exprs(&mut |e| Ok(level.subst(e)))?);
    }

    // The FROM list's joins, planned once the whole statement is bound:
    // the columns read above them are known, so each table's estimated
    // row width is that of the columns it hands up (PostgreSQL's
    // reltarget).
    let mut needed = upper_needed(
        from.base_width,
        &targets,
        having.as_ref(),
        &grouping,
        &windows,
        &level,
    );
    for sj in &semis {
        sj.mark_outer(&mut needed);
    }
    let types: Vec<SqlType> = scope.columns[..from.base_width]
        .iter()
        .map(|c| c.ty)
        .collect();
    let types_outer = types.clone();
    let mut node = match &from.tree {
        Some(tree) => {
            let quals = super::fromclause::with_implied_equalities(quals, &[], &types);
            let mut jp = JoinPlanner::new(g, &mut from.rels, types).with_needed(needed);
            jp.build_top(tree, quals)?
        }
        None => {
            let n = PlanNode::new(NodeKind::Result, 0, 1.0);
            match and_all(quals) {
                Some(p) => filter(n, p),
                None => n,
            }
        }
    };

    for sj in semis {
        node = super::sublink_join::attach(g, node, sj, &types_outer)?;
    }

    let grouped = grouping.is_grouped() || having.is_some();
    let having = if grouped {
        let mut fin = Vec::with_capacity(targets.len());
        for t in targets.drain(..) {
            fin.push(grouping.finalize(t, &level.scope)?);
        }
        targets = fin;
        let mut fin = Vec::with_capacity(windows.len());
        for w in windows.drain(..) {
            fin.push(w.map_exprs(&mut |e| grouping.finalize(e, &level.scope))?);
        }
        windows = fin;
        let having = match having {
            Some(h) => Some(grouping.finalize(h, &level.scope)?),
            None => None,
        };
        for a in grouping.aggs.iter_mut() {
            if let Some(arg) = a.arg.take() {
                a.arg = Some(level.subst(arg));
            }
        }
        let w = grouping.group_by.len() + grouping.aggs.len() + grouping.grouping_calls.len();
        let rows = if grouping.group_by.is_empty() {
            1.0
        } else {
            estimate_groups(g, &node, &grouping.group_by)
        };
        // Groups past what a hash table holds in `work_mem` are made one
        // at a time from an index's order instead, as PostgreSQL's
        // GroupAggregate over an Index Scan (TPC-H Q18's 150,000 orders).
        let sorted = !grouping.group_by.is_empty()
            && grouping.sets.is_none()
            && rows * group_bytes(&grouping) > PLANNED_WORK_MEM
            && scan_in_key_order(&mut node, &grouping.group_by);
        node = PlanNode::new(
            NodeKind::Agg {
                input: Box::new(node),
                grouping,
                sorted,
                split: super::plannodes::AggSplit::Simple,
            },
            w,
            rows,
        );
        having
    } else {
        None
    };
    if let Some(h) = having {
        node = filter(node, h);
    }
    if !windows.is_empty() {
        node = super::window::plan_windows(node, windows, &mut targets)?;
    }
    let identity = targets.len() == node.width
        && targets
            .iter()
            .enumerate()
            .all(|(i, t)| *t == Expr::Column(i));
    let width = targets.len();
    if !identity {
        node = project(node, targets);
    }
    if distinct {
        let rows = node.rows;
        node = PlanNode::new(
            NodeKind::HashDistinct {
                input: Box::new(node),
                columns: (0..visible).collect(),
            },
            width,
            rows,
        );
    }
    if distinct_on.is_some() {
        if sort.is_empty() {
            sort = on_cols
                .iter()
                .map(|&column| SortKey {
                    column,
                    desc: false,
                    nulls_first: false,
                })
                .collect();
        }
        node = sort_node(node, sort);
        let rows = node.rows;
        node = PlanNode::new(
            NodeKind::Unique {
                input: Box::new(node),
                columns: on_cols,
            },
            width,
            rows,
        );
    } else if !sort.is_empty() {
        node = sort_node(node, sort);
    }
    if let Some(q) = q {
        let (limit, offset) = limits(q, params)?;
        let ties = ties_columns(q, &node)?;
        node = limit_node(node, limit, offset);
        if let (Some(t), NodeKind::Limit { ties: slot, .. }) = (ties, &mut node.kind) {
            *slot = Some(t);
        }
    }
    if width > visible {
        node = project(node, (0..visible).map(Expr::Column).collect());
    }
    Ok((node, cols))
}

/// The base columns (of `width`) a SELECT reads above its FROM list's
/// joins: its output and ORDER BY columns, grouping keys, aggregate and
/// window arguments and HAVING (merged USING columns read through to the
/// columns they merge).
fn upper_needed(
    width: usize,
    targets: &[Expr],
    having: Option<&Expr>,
    grouping: &Grouping,
    windows: &[crate::expr::window::WindowCall],
    level: &Level<'_>,
) -> Vec<bool> {
    let mut need = vec![false; width];
    let mut mark = |e: &Expr| {
        level.subst(e.clone()).walk(&mut |x| {
            if let Expr::Column(i) = x {
                if let Some(n) = need.get_mut(*i) {
                    *n = true;
                }
            }
        })
    };
    targets.iter().for_each(&mut mark);
    having.iter().for_each(|h| mark(h));
    grouping.group_by.iter().for_each(&mut mark);
    grouping
        .aggs
        .iter()
        .flat_map(|a| a.exprs())
        .for_each(&mut mark);
    for w in windows {
        w.for_each_expr(&mut mark);
    }
    need
}

/// Splits a condition on top-level AND (through parentheses).
/// The `work_mem` plans are made for (PostgreSQL's default, 4MB): plans
/// are cached across settings, so the choice between hashed and sorted
/// grouping does not follow a session's `work_mem` (the executor does:
/// a hash aggregation spills past it).
pub(super) const PLANNED_WORK_MEM: f64 = 4.0 * 1024.0 * 1024.0;

/// About what one group of a hash aggregation holds (its keys, key bytes
/// and accumulators; as `executor::agg` counts it).
fn group_bytes(grouping: &crate::expr::Grouping) -> f64 {
    (64 + 64 * grouping.aggs.len() + 48 * grouping.group_by.len()) as f64
}

/// Groups of `node`'s rows by `keys` (PostgreSQL's estimate_num_groups
/// for plain columns of one scanned table): the product of the keys'
/// distinct counts, at most the rows; a tenth of the rows otherwise.
fn estimate_groups(g: &Global<'_, '_>, node: &PlanNode, keys: &[Expr]) -> f64 {
    let fallback = (node.rows / 10.0).max(1.0);
    let table = match &node.kind {
        NodeKind::SeqScan { table, .. } | NodeKind::IndexScan { table, .. } => table,
        _ => return fallback,
    };
    let tc = super::selfuncs::TableColumns::new(g.catalog, table.clone());
    let mut groups = 1.0;
    for k in keys {
        let Some(c) = (match k {
            Expr::Column(i) => tc.column(*i),
            _ => None,
        }) else {
            return fallback;
        };
        groups *= super::selfuncs::ndistinct(&c);
    }
    groups.min(node.rows).max(1.0)
}

/// Turns a sequential scan into a scan of the whole of an index whose
/// leading columns are exactly the columns of `keys`, so its rows arrive
/// grouped; false (and `node` unchanged) when no index fits. Every index
/// column must be NOT NULL: a row with a NULL key column has no index
/// entry, and the scan must see every row.
fn scan_in_key_order(node: &mut PlanNode, keys: &[Expr]) -> bool {
    let NodeKind::SeqScan { table, .. } = &node.kind else {
        return false;
    };
    let mut cols: Vec<usize> = Vec::with_capacity(keys.len());
    for k in keys {
        match k {
            Expr::Column(i) if !cols.contains(i) => cols.push(*i),
            Expr::Column(_) => {}
            _ => return false,
        }
    }
    let not_null = |c: &usize| table.columns.get(*c).is_some_and(|d| d.not_null);
    let Some(index) = table.indexes.list().into_iter().find(|ix| {
        ix.is_ready()
            && ix.spec.is_plain()
            && ix.spec.predicate.is_none()
            && ix.spec.columns.len() >= cols.len()
            && ix.spec.columns.iter().all(not_null)
            && ix.spec.columns[..cols.len()]
                .iter()
                .all(|c| cols.contains(c))
    }) else {
        return false;
    };
    let kind = std::mem::replace(&mut node.kind, NodeKind::Values { rows: Vec::new() });
    let NodeKind::SeqScan {
        table,
        filter,
        needed,
        parallel: false,
        ..
    } = kind
    else {
        node.kind = kind;
        return false;
    };
    node.kind = NodeKind::IndexScan {
        table,
        index,
        key: Vec::new(),
        key_types: Vec::new(),
        filter,
        needed,
        layout: Default::default(),
    };
    true
}

fn split_and<'a>(e: &'a ast::Expr, out: &mut Vec<&'a ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

/// `EXISTS (q)` → (q, false); `NOT EXISTS (q)` → (q, true).
fn as_exists(e: &ast::Expr) -> Option<(&ast::Query, bool)> {
    match e {
        ast::Expr::Exists { subquery, negated } => Some((subquery, *negated)),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => as_exists(expr).map(|(q, n)| (q, !n)),
        ast::Expr::Nested(inner) => as_exists(inner),
        _ => None,
    }
}

/// GROUP BY `name` where `name` is no input column but an output alias.
fn group_by_alias<'a>(
    e: &ast::Expr,
    select: &'a ast::Select,
    scope: &crate::expr::Scope,
) -> Option<&'a ast::Expr> {
    let ast::Expr::Identifier(id) = e else {
        return None;
    };
    let n = ident_name(id);
    if scope.resolve(None, &n).is_ok() {
        return None;
    }
    select.projection.iter().find_map(|item| match item {
        ast::SelectItem::ExprWithAlias { expr, alias } if ident_name(alias) == n => Some(expr),
        _ => None,
    })
}

fn require_bool(b: BoundExpr, params: &mut ParamTypes, what: &str) -> PgResult<Expr> {
    if b.ty != SqlType::Bool && b.ty != SqlType::Unknown {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument of {what} must be type boolean, not type {}",
                b.ty.pg_base_name()
            ),
        ));
    }
    coerce(b, SqlType::Bool, params)
}

/// [`bind_on`] for the semi-join planner.
pub(crate) fn bind_on_pub(
    t: &mut JoinTree,
    level: &Level<'_>,
    hook: &mut Hook<'_, '_, '_, '_>,
    params: &mut ParamTypes,
) -> PgResult<()> {
    bind_on(t, level, hook, params)
}

fn bind_on(
    t: &mut JoinTree,
    level: &Level<'_>,
    hook: &mut Hook<'_, '_, '_, '_>,
    params: &mut ParamTypes,
) -> PgResult<()> {
    if let JoinTree::Join {
        left,
        right,
        on_ast,
        on,
        ..
    } = t
    {
        bind_on(left, level, hook, params)?;
        bind_on(right, level, hook, params)?;
        let mut conj: Vec<Expr> = on.drain(..).map(|e| level.subst(e)).collect();
        if let Some(a) = on_ast {
            let b = bind_expr_hooked(a, &level.scope, params, None, hook)?;
            let e = level.subst(require_bool(b, params, "JOIN/ON")?);
            conj.extend(e.conjuncts().into_iter().cloned());
        }
        *on = conj;
    }
    Ok(())
}

/// A target-list set-returning function in a grouped or windowed query.
fn srf_after_grouping() -> PgError {
    PgError::unsupported(
        "set-returning functions in the target list of a query with GROUP BY, HAVING, aggregates or window functions are not supported; call them in FROM",
    )
}
