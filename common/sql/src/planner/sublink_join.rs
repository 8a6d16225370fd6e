//! EXISTS and NOT EXISTS as semi and anti joins (PostgreSQL's
//! pull_up_sublinks / convert_EXISTS_sublink_to_join).
//!
//! A WHERE conjunct `[NOT] EXISTS (SELECT … FROM … WHERE …)` whose
//! subquery is a plain SELECT (no grouping, aggregates, DISTINCT, LIMIT,
//! WITH) and whose correlation is in its WHERE clause only is not run
//! once per outer row. Its FROM clause is planned as the inner side of a
//! join above the outer query's FROM tree; its WHERE conjuncts that do
//! not mention the outer query filter the inner side, and those that do
//! become the join condition over outer row ++ inner row — with `outer =
//! inner` equalities as hash keys, so
//!
//! ```text
//!   SELECT … FROM accounts a WHERE EXISTS (SELECT 1 FROM orders o WHERE o.account_id = a.id)
//!   → Hash Semi Join (a.id = o.account_id): accounts probing, orders hashed once
//! ```
//!
//! The output is the outer row alone (SEMI: on its first match; ANTI:
//! when none). Anything else stays a subplan (`subselect.rs`).

use sqlparser::ast;

use super::fromclause::{
    and_all, key_type, read_from, semi_or_unique_inner, shift, JoinPlanner, JoinTree, Rel,
};
use super::plannodes::{JoinKind, NodeKind, PlanNode};
use super::subselect::{hash_compatible, Global, Hook, Level, Outer};
use crate::expr::{bind_expr_hooked, coerce, BinOp, Expr, ParamTypes};
use pgtypes::error::PgResult;
use pgtypes::sqltype::SqlType;

/// A converted EXISTS, ready to sit above the outer FROM tree.
pub struct SemiJoin {
    kind: JoinKind,
    /// The subquery's FROM items and join tree, planned in [`attach`]
    /// (by then the outer side's rows are estimated).
    rels: Vec<Rel>,
    tree: JoinTree,
    /// Its WHERE conjuncts that read only its own rows.
    inner_quals: Vec<Expr>,
    /// Conditions over outer row ++ inner row (outer columns first).
    quals: Vec<Expr>,
    /// Types of the inner row.
    inner_types: Vec<SqlType>,
}

impl SemiJoin {
    /// Marks in `need` the outer columns the join's conditions read.
    pub fn mark_outer(&self, need: &mut [bool]) {
        for q in &self.quals {
            q.walk(&mut |x| {
                if let Expr::Column(i) = x {
                    if let Some(n) = need.get_mut(*i) {
                        *n = true;
                    }
                }
            });
        }
    }
}

/// The SELECT of `q` when it is a plain one: no WITH, ORDER BY, LIMIT,
/// OFFSET, FETCH, FOR UPDATE, set operation, grouping, HAVING or DISTINCT.
fn plain_select(q: &ast::Query) -> Option<&ast::Select> {
    if q.with.is_some()
        || q.order_by.is_some()
        || q.limit.is_some()
        || q.offset.is_some()
        || q.fetch.is_some()
        || !q.locks.is_empty()
    {
        return None;
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let grouped =
        !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    (s.distinct.is_none() && !grouped && s.having.is_none()).then_some(s.as_ref())
}

fn simple_item(item: &ast::SelectItem) -> bool {
    let simple = |e: &ast::Expr| {
        matches!(
            e,
            ast::Expr::Value(_) | ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
        )
    };
    match item {
        ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => true,
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            simple(e)
        }
    }
}

/// Plans `[NOT] EXISTS (q)` of the block `level` as a join, or None when
/// it does not have the shape (see the module doc).
pub fn try_semijoin(
    g: &Global<'_, '_>,
    q: &ast::Query,
    negated: bool,
    level: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<Option<SemiJoin>> {
    let Some(s) = plain_select(q) else {
        return Ok(None);
    };
    if s.from.is_empty() || s.selection.is_none() || !s.projection.iter().all(simple_item) {
        return Ok(None);
    }
    let outer = Outer::new(level, &g.next_param);
    let sub_ctx = Level::empty(Some(&outer), Some(level));
    let mut from = read_from(g, &s.from, &sub_ctx, params)?;
    if !outer.args.borrow().is_empty() {
        return Ok(None); // correlated FROM items (LATERAL): keep the subplan
    }
    let sub_level = Level {
        scope: from.scope.clone(),
        base_width: from.base_width,
        merged: from.merged.clone(),
        outer: Some(&outer),
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: Some(&sub_ctx),
    };
    let mut hook = Hook {
        g,
        level: &sub_level,
    };
    if let Some(t) = from.tree.as_mut() {
        super::select::bind_on_pub(t, &sub_level, &mut hook, params)?;
    }
    let mut quals = Vec::new();
    if let Some(w) = &s.selection {
        let b = bind_expr_hooked(w, &sub_level.scope, params, None, &mut hook)?;
        let e = coerce(b, SqlType::Bool, params)?;
        quals = sub_level
            .subst(e)
            .conjuncts()
            .into_iter()
            .cloned()
            .collect();
    }
    let args = outer.take_args();
    if args.is_empty() {
        return Ok(None); // uncorrelated: one cached run is cheaper
    }
    let slots: Vec<usize> = args.iter().map(|(s, _)| *s).collect();
    let reads_outer = |e: &Expr| {
        let mut hit = false;
        e.walk(&mut |x| {
            if let Expr::ExecParam(k) = x {
                if slots.contains(k) {
                    hit = true;
                }
            }
        });
        hit
    };
    let (join_quals, inner_quals): (Vec<Expr>, Vec<Expr>) =
        quals.into_iter().partition(|q| reads_outer(q));
    let inner_types: Vec<SqlType> = from.scope.columns[..from.base_width]
        .iter()
        .map(|c| c.ty)
        .collect();
    let Some(tree) = from.tree.take() else {
        return Ok(None);
    };
    Ok(Some(SemiJoin {
        kind: if negated {
            JoinKind::Anti
        } else {
            JoinKind::Semi
        },
        rels: std::mem::take(&mut from.rels),
        tree,
        inner_quals,
        quals: join_quals
            .into_iter()
            .map(|q| (q, args.clone()))
            .map(|(q, args)| Pending { q, args })
            .map(|p| p.resolve(level.base_width))
            .collect(),
        inner_types,
    }))
}

/// A join condition still reading the subquery's outer parameters.
struct Pending {
    q: Expr,
    args: Vec<(usize, Expr)>,
}

impl Pending {
    /// Inner columns move past the outer row's `ow` columns; the outer
    /// parameters become the outer expressions they stood for.
    fn resolve(self, ow: usize) -> Expr {
        fn go(e: Expr, ow: usize, args: &[(usize, Expr)]) -> PgResult<Expr> {
            match e {
                Expr::Column(i) => Ok(Expr::Column(i + ow)),
                Expr::ExecParam(k) => match args.iter().find(|(s, _)| *s == k) {
                    Some((_, a)) => Ok(a.clone()),
                    None => Ok(Expr::ExecParam(k)),
                },
                other => other.map_children(&mut |c| go(c, ow, args)),
            }
        }
        let q = self.q.clone();
        go(self.q, ow, &self.args).unwrap_or(q)
    }
}

/// Puts the semi / anti join above `node` (the outer FROM tree, whose row
/// has `outer_types`): an index lookup into the subquery's one table per
/// outer row where that is cheaper than reading the table into a hash
/// table (few outer rows, an index on the correlated columns), else a
/// hash join on the `outer = inner` equalities, else a nested loop.
pub fn attach(
    g: &Global<'_, '_>,
    node: PlanNode,
    mut sj: SemiJoin,
    outer_types: &[SqlType],
) -> PgResult<PlanNode> {
    let ow = node.width;
    let mut types = outer_types.to_vec();
    types.resize(ow, SqlType::Unknown);
    types.extend(sj.inner_types.iter().copied());
    let side = |e: &Expr| -> Option<bool> {
        let (mut lo, mut hi) = (false, false);
        e.walk(&mut |x| {
            if let Expr::Column(i) = x {
                if *i < ow {
                    lo = true;
                } else {
                    hi = true;
                }
            }
        });
        match (lo, hi) {
            (true, false) => Some(false),
            (false, true) => Some(true),
            _ => None,
        }
    };
    let mut okeys = Vec::new();
    let mut ikeys = Vec::new();
    let mut joined_keys = Vec::new();
    let mut rest = Vec::new();
    for q in sj.quals {
        if let Expr::Binary {
            op: BinOp::Eq,
            left,
            right,
        } = &q
        {
            let pair = match (side(left), side(right)) {
                (Some(false), Some(true)) => Some((left.as_ref(), right.as_ref())),
                (Some(true), Some(false)) => Some((right.as_ref(), left.as_ref())),
                _ => None,
            };
            if let Some((o, i)) = pair {
                let ok = matches!(
                    (key_type(o, &types), key_type(i, &types)),
                    (Some(a), Some(b)) if hash_compatible(a, b)
                );
                if ok {
                    okeys.push(o.clone());
                    ikeys.push(shift(i.clone(), ow));
                    joined_keys.push(q.clone());
                    continue;
                }
            }
        }
        rest.push(q);
    }
    let rows = node.rows * 0.5;
    let mut jp = JoinPlanner::new(g, &mut sj.rels, sj.inner_types);
    if !okeys.is_empty() {
        if let Some((inner, params)) =
            jp.index_nestloop(&node, &sj.tree, sj.kind, &okeys, &ikeys, &sj.inner_quals, 0)?
        {
            // Every key is checked again (the index may take only some).
            let mut qual = rest;
            qual.extend(joined_keys);
            let kind = NodeKind::NestLoop {
                outer: Box::new(node),
                inner: Box::new(inner),
                kind: sj.kind,
                qual: and_all(qual),
                params,
            };
            return Ok(PlanNode::new(kind, ow, rows));
        }
    }
    let inner = jp.build(&sj.tree, sj.inner_quals)?;
    if sj.kind == JoinKind::Semi && !okeys.is_empty() && rest.is_empty() {
        let groups = jp.distinct_rows(&ikeys, inner.rows);
        return Ok(semi_or_unique_inner(
            node, inner, okeys, ikeys, rows, groups,
        ));
    }
    let kind = if okeys.is_empty() {
        NodeKind::NestLoop {
            outer: Box::new(node),
            inner: Box::new(inner),
            kind: sj.kind,
            qual: and_all(rest),
            params: Vec::new(),
        }
    } else {
        NodeKind::HashJoin {
            outer: Box::new(node),
            inner: Box::new(inner),
            kind: sj.kind,
            outer_keys: okeys,
            inner_keys: ikeys,
            qual: and_all(rest),
            inner_needed: None,
        }
    };
    Ok(PlanNode::new(kind, ow, rows))
}

/// `lhs IN (SELECT col FROM t WHERE …)` pulled up into the FROM clause
/// (PostgreSQL's convert_ANY_sublink_to_join followed by
/// reduce_unique_semijoins): when `col` is the whole key of a unique
/// index of `t`, each outer row matches at most one row of `t`, so the
/// semi join is an inner join, and `t` joins the outer FROM run, where
/// the join order may start from it (TPC-H Q20 reads the few parts named
/// `forest%`, then their partsupp rows through the key, instead of
/// partsupp whole against a hashed list of parts).
///
/// The shape: a top-level WHERE conjunct, not negated; the left side a
/// column reference of this query; the subquery a plain SELECT of that
/// one column from one table (no WITH, grouping, DISTINCT, ORDER BY,
/// LIMIT, sublinks), reading nothing of any enclosing query; `lhs` and
/// `col` of the same type. A NULL `lhs` or `col` matches nothing either
/// way, and a false or NULL IN drops the row as a failed join does.
pub struct UniqueIn {
    /// The subquery's FROM clause (one table), for
    /// [`super::fromclause::From::add_hidden`].
    pub from: super::fromclause::From,
    /// What replaces the IN.
    pub cond: InCond,
}

/// The conditions of a [`UniqueIn`].
pub struct InCond {
    /// The subquery's WHERE conjuncts, over its own columns.
    quals: Vec<Expr>,
    /// The IN's left side, over the outer query's base columns.
    lhs: Expr,
    /// The projected column of `t`.
    col: usize,
}

impl InCond {
    /// The conditions that replace the IN once the table's columns start
    /// at `start` in the outer row.
    pub fn quals(self, start: usize) -> Vec<Expr> {
        let mut out: Vec<Expr> = self
            .quals
            .into_iter()
            .map(|q| super::fromclause::map_columns(q, &mut |i| Expr::Column(i + start)))
            .collect();
        out.push(Expr::Binary {
            op: BinOp::Eq,
            left: Box::new(self.lhs),
            right: Box::new(Expr::Column(start + self.col)),
        });
        out
    }
}

/// Recognises [`UniqueIn`]'s shape in the WHERE conjunct `e` of a block
/// whose FROM clause is `outer` (read, not yet given its level); None
/// when it does not have it (the IN stays a subplan).
pub fn try_unique_in(
    g: &Global<'_, '_>,
    e: &ast::Expr,
    outer: &super::fromclause::From,
    cte_parent: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<Option<UniqueIn>> {
    let ast::Expr::InSubquery {
        expr,
        subquery: q,
        negated: false,
    } = e
    else {
        return Ok(None);
    };
    if !matches!(
        expr.as_ref(),
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
    ) {
        return Ok(None);
    }
    let Some(s) = plain_select(q) else {
        return Ok(None);
    };
    let one_table = matches!(
        s.from.as_slice(),
        [ast::TableWithJoins { relation: ast::TableFactor::Table { args: None, .. }, joins }]
            if joins.is_empty()
    );
    let col_ast = match s.projection.as_slice() {
        [ast::SelectItem::UnnamedExpr(c)] | [ast::SelectItem::ExprWithAlias { expr: c, .. }]
            if matches!(
                c,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            ) =>
        {
            c
        }
        _ => return Ok(None),
    };
    if !one_table {
        return Ok(None);
    }
    // Only a table: reading a CTE or a view would plan it here.
    let [ast::TableWithJoins {
        relation: ast::TableFactor::Table { name, .. },
        ..
    }] = s.from.as_slice()
    else {
        return Ok(None);
    };
    let rel = super::object_name(name);
    if name.0.len() == 1
        && (cte_parent.find_cte(&rel).is_some()
            || crate::transition::transition_relation(&rel).is_some())
    {
        return Ok(None);
    }
    let Ok(qname) = crate::namespace::QualName::of(name) else {
        return Ok(None);
    };
    if crate::namespace::find_table(g.catalog, &qname).is_none() {
        return Ok(None);
    }
    // Name errors mean "not this shape": the normal path reports them.
    let mut p = params.clone();
    let sub_ctx = Level::empty(None, Some(cte_parent));
    let Ok(from) = read_from(g, &s.from, &sub_ctx, &mut p) else {
        return Ok(None);
    };
    let table = match from.rels.as_slice() {
        [r] if r.node.is_none() && r.lateral.is_empty() => match &r.table {
            Some(t) => t.clone(),
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let col = match crate::expr::bind_expr(col_ast, &from.scope, &mut p) {
        Ok(b) => match b.expr {
            Expr::Column(c) if c < from.base_width => c,
            _ => return Ok(None),
        },
        Err(_) => return Ok(None),
    };
    let unique = table.indexes.list().iter().any(|ix| {
        ix.is_ready() && ix.spec.unique && ix.spec.is_plain() && ix.spec.columns == [col]
    });
    if !unique {
        return Ok(None);
    }
    let lhs = match crate::expr::bind_expr(expr, &outer.scope, &mut p) {
        Ok(b) if b.ty == from.scope.columns[col].ty => {
            super::subselect::subst_merged(b.expr, outer.base_width, &outer.merged)
        }
        _ => return Ok(None),
    };
    if !matches!(lhs, Expr::Column(i) if i < outer.base_width) {
        return Ok(None);
    }
    let mut quals = Vec::new();
    if let Some(w) = &s.selection {
        let Ok(b) = crate::expr::bind_expr(w, &from.scope, &mut p) else {
            return Ok(None);
        };
        let Ok(e) = coerce(b, SqlType::Bool, &mut p) else {
            return Ok(None);
        };
        quals = e.conjuncts().into_iter().cloned().collect();
    }
    *params = p;
    Ok(Some(UniqueIn {
        from,
        cond: InCond { quals, lhs, col },
    }))
}
