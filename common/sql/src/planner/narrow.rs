//! Which table columns a query reads (PostgreSQL's attr_needed, seen from
//! the finished plan): a table scan decodes only those.
//!
//! A heap row is decoded column by column, and a text or numeric column
//! costs an allocation; TPC-H's lineitem has sixteen columns, Q6 reads
//! four. After a SELECT is planned, one pass walks the tree from the root
//! — whose every output column is needed — down to the scans, at each
//! node adding the columns its own expressions read and mapping the
//! needed output columns to its inputs' columns (a join's row is outer ++
//! inner; a semi or anti join outputs the outer row only; a projection or
//! aggregation needs what its expressions read). A scan keeps the set as
//! [`NodeKind::SeqScan::needed`] / [`NodeKind::IndexScan::needed`], and the
//! executor leaves the other columns NULL without decoding them.
//!
//! Invariant: a column left out is never read — every expression of every
//! node counts (a Project's outputs no one reads included, so evaluating
//! them never sees a NULL the data does not hold). A node kind this pass
//! does not know needs all of its inputs' columns, so a new kind is
//! correct before it is narrowed. Only whole SELECT plans are narrowed
//! (`planner::plan_query`): DML reads the whole old row to write the new.

use super::plannodes::{FilterFirst, JoinKind, NodeKind, PlanNode, StatementPlans};
use crate::expr::Expr;

/// Narrows the scans of a whole statement: its root and every subplan and
/// CTE (each with all of its output columns needed).
pub fn narrow_statement(root: &mut PlanNode, shared: &mut StatementPlans) {
    narrow_all(root);
    for sp in &mut shared.subplans {
        narrow_all(&mut sp.plan);
    }
    for cte in &mut shared.ctes {
        narrow_all(&mut cte.plan);
    }
}

fn narrow_all(node: &mut PlanNode) {
    let need = vec![true; node.width];
    narrow(node, &need);
}

/// Marks in `need` (growing it as needed) every column `e` reads.
fn mark(e: &Expr, need: &mut Vec<bool>) {
    e.walk(&mut |x| {
        if let Expr::Column(i) = x {
            set(need, *i);
        }
    });
}

fn set(need: &mut Vec<bool>, i: usize) {
    if need.len() <= i {
        need.resize(i + 1, false);
    }
    need[i] = true;
}

/// `need` fitted to `width` columns.
fn fit(mut need: Vec<bool>, width: usize) -> Vec<bool> {
    need.resize(width, false);
    need
}

/// A scan filter's [`FilterFirst`] over a table whose columns `above`
/// are read above the scan and `own` are decoded; None when decoding the
/// filter's columns first would save nothing.
fn filter_first_split(filter: &Expr, above: &[bool], own: &[bool]) -> Option<FilterFirst> {
    let mut cols = Vec::new();
    mark(filter, &mut cols);
    let cols = fit(cols, own.len());
    let rest: Vec<bool> = own.iter().zip(&cols).map(|(&o, &f)| o && !f).collect();
    let drop: Vec<usize> = (0..own.len()).filter(|&c| cols[c] && !above[c]).collect();
    (rest.contains(&true) || !drop.is_empty()).then_some(FilterFirst {
        filter: cols,
        rest,
        drop,
    })
}

/// Splits a joined row's needed columns into the outer's and the inner's.
fn split(need: &[bool], outer_width: usize, inner_width: usize) -> (Vec<bool>, Vec<bool>) {
    let at = outer_width.min(need.len());
    (
        fit(need[..at].to_vec(), outer_width),
        fit(need[at..].to_vec(), inner_width),
    )
}

/// Narrows both inputs of a hash or merge join to what `need`, the
/// condition and the keys read; returns the inner columns kept.
fn narrow_equi_join(
    need: &[bool],
    kind: JoinKind,
    qual: &Option<Expr>,
    outer: &mut PlanNode,
    inner: &mut PlanNode,
    outer_keys: &[Expr],
    inner_keys: &[Expr],
) -> Vec<bool> {
    let (ow, iw) = (outer.width, inner.width);
    let (mut on, mut inn) = join_sides(need, kind, qual.as_ref(), ow, iw);
    outer_keys.iter().for_each(|e| mark(e, &mut on));
    inner_keys.iter().for_each(|e| mark(e, &mut inn));
    let inn = fit(inn, iw);
    narrow(outer, &fit(on, ow));
    narrow(inner, &inn);
    inn
}

/// A join's needed outer and inner columns: those read above (a semi or
/// anti join outputs the outer row only) and those its condition reads
/// over outer ++ inner.
fn join_sides(
    need: &[bool],
    kind: JoinKind,
    qual: Option<&Expr>,
    ow: usize,
    iw: usize,
) -> (Vec<bool>, Vec<bool>) {
    let mut joined = if kind.outer_only() {
        fit(need.to_vec(), ow)
    } else {
        fit(need.to_vec(), ow + iw)
    };
    qual.iter().for_each(|q| mark(q, &mut joined));
    split(&joined, ow, iw)
}

/// Narrows `node`, of which the columns `need` marks are read above.
fn narrow(node: &mut PlanNode, need: &[bool]) {
    let width = node.width;
    let mut own = fit(need.to_vec(), width);
    node.for_each_own_expr(&mut |e| mark(e, &mut own));
    match &mut node.kind {
        NodeKind::SeqScan {
            table,
            needed,
            filter,
            filter_first,
            ..
        } => {
            let n = table.columns.len();
            let own = fit(own, n);
            *filter_first = filter
                .as_ref()
                .and_then(|f| filter_first_split(f, &fit(need.to_vec(), n), &own));
            *needed = (!own.iter().all(|&b| b)).then_some(own);
        }
        NodeKind::IndexScan { table, needed, .. } => {
            let own = fit(own, table.columns.len());
            *needed = (!own.iter().all(|&b| b)).then_some(own);
        }
        NodeKind::Filter { input, .. } | NodeKind::Gather { input, .. } => {
            let w = input.width;
            narrow(input, &fit(own, w));
        }
        NodeKind::Limit { input, ties, .. } => {
            ties.iter().flatten().for_each(|&c| set(&mut own, c));
            let w = input.width;
            narrow(input, &fit(own, w));
        }
        NodeKind::Sort { input, keys } => {
            keys.iter().for_each(|k| set(&mut own, k.column));
            let w = input.width;
            narrow(input, &fit(own, w));
        }
        NodeKind::Unique { input, columns } | NodeKind::HashDistinct { input, columns } => {
            columns.iter().for_each(|&c| set(&mut own, c));
            let w = input.width;
            narrow(input, &fit(own, w));
        }
        NodeKind::Project { input, exprs } => {
            // Every expression counts, read or not (see the module doc),
            // but a bare column no one reads reads nothing (a join's
            // column permutation).
            let mut in_need = Vec::new();
            for (i, e) in exprs.iter().enumerate() {
                if !matches!(e, Expr::Column(_)) || need.get(i).copied().unwrap_or(true) {
                    mark(e, &mut in_need);
                }
            }
            let w = input.width;
            narrow(input, &fit(in_need, w));
        }
        NodeKind::Agg {
            input, grouping, ..
        } => {
            let mut in_need = Vec::new();
            grouping.group_by.iter().for_each(|e| mark(e, &mut in_need));
            grouping
                .aggs
                .iter()
                .flat_map(|a| a.exprs())
                .for_each(|e| mark(e, &mut in_need));
            let w = input.width;
            narrow(input, &fit(in_need, w));
        }
        NodeKind::WindowAgg {
            input,
            funcs,
            partition,
            order,
        } => {
            // The row is the input's, then one value per function; the
            // functions' own expressions read the input row.
            let w = input.width;
            let mut in_need = fit(own[..w.min(own.len())].to_vec(), w);
            for f in funcs.iter() {
                f.for_each_expr(&mut |e| mark(e, &mut in_need));
            }
            partition.iter().for_each(|&c| set(&mut in_need, c));
            order.iter().for_each(|k| set(&mut in_need, k.column));
            narrow(input, &fit(in_need, w));
        }
        NodeKind::NestLoop {
            outer,
            inner,
            kind,
            qual,
            params,
        } => {
            let (ow, iw) = (outer.width, inner.width);
            let (mut on, inn) = join_sides(need, *kind, qual.as_ref(), ow, iw);
            params.iter().for_each(|(_, e)| mark(e, &mut on));
            narrow(outer, &fit(on, ow));
            narrow(inner, &inn);
        }
        NodeKind::HashJoin {
            outer,
            inner,
            kind,
            outer_keys,
            inner_keys,
            qual,
            inner_needed,
        } => {
            // The keys are computed before a row is stored (and again from
            // the widened row when read back from a batch file).
            let inn = narrow_equi_join(need, *kind, qual, outer, inner, outer_keys, inner_keys);
            *inner_needed =
                (!inn.iter().all(|&b| b)).then(|| (0..inn.len()).filter(|&c| inn[c]).collect());
        }
        NodeKind::MergeJoin {
            outer,
            inner,
            kind,
            outer_keys,
            inner_keys,
            qual,
        } => {
            narrow_equi_join(need, *kind, qual, outer, inner, outer_keys, inner_keys);
        }
        NodeKind::Ordinality { input } => narrow_all(input),
        NodeKind::Zip { inputs } | NodeKind::Append { inputs } => {
            inputs.iter_mut().for_each(narrow_all);
        }
        NodeKind::SetOp { left, right, .. } => {
            narrow_all(left);
            narrow_all(right);
        }
        NodeKind::RecursiveUnion { nonrec, rec, .. } => {
            narrow_all(nonrec);
            narrow_all(rec);
        }
        NodeKind::ExplainAnalyze { .. }
        | NodeKind::Result
        | NodeKind::FunctionScan { .. }
        | NodeKind::Unnest { .. }
        | NodeKind::JsonSrf { .. }
        | NodeKind::UserFunction { .. }
        | NodeKind::SystemView(_)
        | NodeKind::SequenceScan { .. }
        | NodeKind::Values { .. }
        | NodeKind::KeyedView { .. }
        | NodeKind::CteScan { .. }
        | NodeKind::WorkTableScan { .. } => {}
    }
}
