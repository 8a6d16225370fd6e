//! UPDATE … FROM and DELETE … USING: the other FROM items as a join run
//! per target row (PostgreSQL plans these as a join under ModifyTable; this
//! is the nested-loop form of it).
//!
//! The target table's columns are the *outer* level of the FROM items:
//! a reference to them inside the WHERE clause or an assignment becomes an
//! executor parameter (`subselect.rs`), set from each target row before the
//! join runs. WHERE conjuncts that read only the target stay on the target
//! scan (and may pick its index); the others are pushed into the join, where
//! an equality with a target column is an index lookup when the key pins an
//! index. A target row with no joining row is left alone; with several,
//! the first one is used (PostgreSQL leaves which one unspecified).

use sqlparser::ast;

use super::fromclause::{and_all, read_from, JoinPlanner};
use super::plannodes::StatementPlans;
use super::subselect::{Global, Hook, Level, Outer};
use super::{table_scope, QueryPlan};
use crate::expr::{bind_expr_hooked, coerce, coerce_assign, Expr, ParamTypes};
use engine::catalog::{CatalogView, TableDef};
use pgtypes::error::{PgError, PgResult};
use pgtypes::sqltype::SqlType;
use std::sync::Arc;

/// The FROM / USING items of an UPDATE or DELETE.
#[derive(Debug)]
pub struct DmlJoin {
    /// The join of the items (its rows: their columns).
    pub plan: QueryPlan,
    /// (executor parameter slot, target column) set before each run.
    pub params: Vec<(usize, usize)>,
    /// UPDATE: (target column, value over the join's row).
    pub assignments: Vec<(usize, Expr)>,
}

/// Plans the items; returns the WHERE part that reads only the target
/// (over the target row) and the join.
pub fn plan_dml_join(
    catalog: &CatalogView<'_>,
    table: &TableDef,
    alias: &str,
    items: &[ast::TableWithJoins],
    selection: Option<&ast::Expr>,
    assignments: &[(usize, &ast::Expr)],
    params: &mut ParamTypes,
) -> PgResult<(Option<Expr>, DmlJoin)> {
    let g = Global::new(catalog);
    let target = Level {
        scope: table_scope(table, alias),
        base_width: table.columns.len(),
        merged: Vec::new(),
        outer: None,
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: None,
    };
    let outer = Outer::new(&target, &g.next_param);
    let ctx = Level::empty(Some(&outer), None);
    let mut from = read_from(&g, items, &ctx, params)?;
    let level = Level {
        scope: from.scope.clone(),
        base_width: from.base_width,
        merged: from.merged.clone(),
        outer: Some(&outer),
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: Some(&ctx),
    };
    let mut hook = Hook {
        g: &g,
        level: &level,
    };
    if let Some(t) = from.tree.as_mut() {
        super::select::bind_on_pub(t, &level, &mut hook, params)?;
    }
    let mut quals = Vec::new();
    if let Some(w) = selection {
        let b = bind_expr_hooked(w, &level.scope, params, None, &mut hook)?;
        let e = level.subst(coerce(b, SqlType::Bool, params)?);
        quals = e.conjuncts().into_iter().cloned().collect();
    }
    let mut assigns = Vec::new();
    for (c, e) in assignments {
        let col = &table.columns[*c];
        let b = bind_expr_hooked(e, &level.scope, params, None, &mut hook)?;
        assigns.push((
            *c,
            level.subst(coerce_assign(b, col.ty, params, &col.name)?),
        ));
    }
    let args = outer.take_args();
    let mut pairs = Vec::new();
    for (slot, e) in &args {
        match e {
            Expr::Column(c) => pairs.push((*slot, *c)),
            _ => return Err(PgError::internal("target reference is not a column")),
        }
    }
    // Conjuncts without a column of the items run on the target row.
    let (target_quals, join_quals): (Vec<Expr>, Vec<Expr>) =
        quals.into_iter().partition(|q| !q.references_columns());
    let to_target = |e: Expr| -> Expr {
        fn go(e: Expr, pairs: &[(usize, usize)]) -> PgResult<Expr> {
            match e {
                Expr::ExecParam(k) => Ok(match pairs.iter().find(|(s, _)| *s == k) {
                    Some((_, c)) => Expr::Column(*c),
                    None => Expr::ExecParam(k),
                }),
                other => other.map_children(&mut |x| go(x, pairs)),
            }
        }
        let keep = e.clone();
        go(e, &pairs).unwrap_or(keep)
    };
    let target_filter = and_all(target_quals.into_iter().map(to_target).collect());
    let types: Vec<SqlType> = from.scope.columns[..from.base_width]
        .iter()
        .map(|c| c.ty)
        .collect();
    let root = match &from.tree {
        Some(tree) => {
            let mut jp = JoinPlanner::new(&g, &mut from.rels, types);
            jp.build(tree, join_quals)?
        }
        None => return Err(PgError::syntax("syntax error at or near \"FROM\"")),
    };
    let shared = StatementPlans {
        subplans: g.subplans.take(),
        ctes: g.ctes.take(),
        exec_params: g.next_param.get(),
    };
    Ok((
        target_filter,
        DmlJoin {
            plan: QueryPlan {
                root,
                shared: Arc::new(shared),
                columns: Vec::new(),
            },
            params: pairs,
            assignments: assigns,
        },
    ))
}
