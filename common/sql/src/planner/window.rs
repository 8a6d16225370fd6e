//! Planning window functions and grouping sets (PostgreSQL's
//! `planner.c` make_window_input_target / expand_grouping_sets, in
//! miniature).
//!
//! Windows: the binder leaves each window call as an `Expr::WindowFunc(i)`
//! placeholder and the call (function, arguments, PARTITION BY, ORDER BY,
//! frame) over the row below the select list — the FROM row, or the
//! post-aggregation row of a grouped query (windows run after GROUP BY and
//! HAVING). Here calls with the same PARTITION BY and ORDER BY share one
//! WindowAgg node; each node gets a Sort on its partition keys (ascending)
//! then its order keys, and appends one column per call. Keys that are
//! not plain columns are first computed by a Project that appends them to
//! the row. The placeholders in the select list (and ORDER BY's hidden
//! columns) then become those appended columns:
//!
//! ```text
//!  SELECT id, rank() OVER (PARTITION BY dept ORDER BY amount) FROM t
//!    Result [Column(0), Column(4)]
//!      WindowAgg partition [1] order [2] → appends rank (column 4)
//!        Sort [1, 2]
//!          Seq Scan t (id, dept, amount, day)
//! ```
//!
//! Grouping sets: `GROUP BY a, ROLLUP (b, c)` becomes the distinct keys
//! `[a, b, c]` and the sets `{a,b,c}, {a,b}, {a}` (the cross product of
//! each item's sets); the Agg node groups every input row once per set.

use sqlparser::ast;

use super::plannodes::{NodeKind, PlanNode};
use super::select::project;
use super::SortKey;
use crate::expr::window::WindowCall;
use crate::expr::Expr;
use pgtypes::error::PgResult;

/// The sets of one GROUP BY item that is ROLLUP, CUBE or GROUPING SETS;
/// `key` binds a key expression and returns its index.
pub fn expand_grouping_item(
    e: &ast::Expr,
    key: &mut dyn FnMut(&ast::Expr) -> PgResult<usize>,
) -> PgResult<Vec<Vec<usize>>> {
    let lists = |ls: &Vec<Vec<ast::Expr>>,
                 key: &mut dyn FnMut(&ast::Expr) -> PgResult<usize>|
     -> PgResult<Vec<Vec<Vec<usize>>>> {
        // Each list: the cross product of its elements' sets.
        let mut out = Vec::with_capacity(ls.len());
        for l in ls {
            let mut sets = vec![Vec::new()];
            for x in l {
                let item = match x {
                    ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_) => {
                        expand_grouping_item(x, key)?
                    }
                    ast::Expr::Tuple(xs) => {
                        let mut s = Vec::new();
                        for y in xs {
                            s.push(key(y)?);
                        }
                        vec![s]
                    }
                    _ => vec![vec![key(x)?]],
                };
                sets = cross_sets(&sets, &item);
            }
            out.push(sets);
        }
        Ok(out)
    };
    Ok(match e {
        ast::Expr::GroupingSets(ls) => lists(ls, key)?.into_iter().flatten().collect(),
        ast::Expr::Rollup(ls) => {
            let parts: Vec<Vec<usize>> = lists(ls, key)?
                .into_iter()
                .map(|s| s.into_iter().flatten().collect())
                .collect();
            (0..=parts.len())
                .rev()
                .map(|n| parts[..n].concat())
                .map(dedup)
                .collect()
        }
        ast::Expr::Cube(ls) => {
            let parts: Vec<Vec<usize>> = lists(ls, key)?
                .into_iter()
                .map(|s| s.into_iter().flatten().collect())
                .collect();
            let n = parts.len();
            (0..(1usize << n))
                .rev()
                .map(|mask| {
                    dedup(
                        (0..n)
                            .filter(|i| mask & (1 << (n - 1 - i)) != 0)
                            .flat_map(|i| parts[i].clone())
                            .collect(),
                    )
                })
                .collect()
        }
        _ => vec![vec![key(e)?]],
    })
}

fn dedup(mut v: Vec<usize>) -> Vec<usize> {
    let mut seen = Vec::with_capacity(v.len());
    v.retain(|k| {
        if seen.contains(k) {
            false
        } else {
            seen.push(*k);
            true
        }
    });
    v
}

/// Every union of a set of `a` with a set of `b`.
pub fn cross_sets(a: &[Vec<usize>], b: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            out.push(dedup(x.iter().chain(y.iter()).copied().collect()));
        }
    }
    out
}

/// Puts WindowAgg nodes (with their Sorts) over `node` and rewrites the
/// placeholders in `targets` to the columns the nodes append.
pub fn plan_windows(
    mut node: PlanNode,
    windows: Vec<WindowCall>,
    targets: &mut [Expr],
) -> PgResult<PlanNode> {
    let base = node.width;
    let mut extra: Vec<Expr> = Vec::new();
    let mut col_of = |e: &Expr| -> usize {
        match e {
            Expr::Column(c) | Expr::Agg(c) => *c,
            _ => match extra.iter().position(|x| x == e) {
                Some(p) => base + p,
                None => {
                    extra.push(e.clone());
                    base + extra.len() - 1
                }
            },
        }
    };
    // (partition columns, order keys, calls)
    type Spec = (Vec<usize>, Vec<(usize, bool, bool)>, Vec<usize>);
    let mut specs: Vec<Spec> = Vec::new();
    for (i, w) in windows.iter().enumerate() {
        let part: Vec<usize> = w.partition.iter().map(&mut col_of).collect();
        let order: Vec<(usize, bool, bool)> = w
            .order
            .iter()
            .map(|o| (col_of(&o.expr), o.desc, o.nulls_first))
            .collect();
        match specs.iter_mut().find(|s| s.0 == part && s.1 == order) {
            Some(s) => s.2.push(i),
            None => specs.push((part, order, vec![i])),
        }
    }
    if !extra.is_empty() {
        let mut exprs: Vec<Expr> = (0..base).map(Expr::Column).collect();
        exprs.extend(extra);
        node = project(node, exprs);
    }
    let mut pos = vec![0usize; windows.len()];
    let mut prev_keys: Option<Vec<(usize, bool, bool)>> = None;
    for (part, order, calls) in specs {
        let keys: Vec<(usize, bool, bool)> = part
            .iter()
            .map(|&c| (c, false, false))
            .chain(order.iter().copied())
            .collect();
        if !keys.is_empty() && prev_keys.as_ref() != Some(&keys) {
            let (w, rows) = (node.width, node.rows);
            node = PlanNode::new(
                NodeKind::Sort {
                    input: Box::new(node),
                    keys: keys
                        .iter()
                        .map(|&(column, desc, nulls_first)| SortKey {
                            column,
                            desc,
                            nulls_first,
                        })
                        .collect(),
                },
                w,
                rows,
            );
        }
        prev_keys = Some(keys);
        let start = node.width;
        for (j, &c) in calls.iter().enumerate() {
            pos[c] = start + j;
        }
        let funcs: Vec<WindowCall> = calls.iter().map(|&c| windows[c].clone()).collect();
        let rows = node.rows;
        node = PlanNode::new(
            NodeKind::WindowAgg {
                input: Box::new(node),
                funcs,
                partition: part,
                order: order
                    .iter()
                    .map(|&(column, desc, nulls_first)| SortKey {
                        column,
                        desc,
                        nulls_first,
                    })
                    .collect(),
            },
            start + calls.len(),
            rows,
        );
    }
    fn place(e: Expr, pos: &[usize]) -> PgResult<Expr> {
        match e {
            Expr::WindowFunc(i) => Ok(Expr::Column(pos[i])),
            other => other.map_children(&mut |c| place(c, pos)),
        }
    }
    for t in targets.iter_mut() {
        let e = std::mem::replace(t, Expr::Const(pgtypes::value::Value::Null));
        *t = place(e, &pos)?;
    }
    Ok(node)
}
