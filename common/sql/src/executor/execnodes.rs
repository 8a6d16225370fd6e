//! The pull-based (Volcano) executor: one [`ExecNode`] per plan node.
//!
//! A parent asks a child for its next row with [`ExecNode::next`] and
//! reads it with [`ExecNode::row`], borrowed until the next call; a node
//! that passes rows through (Filter, Limit) hands its child's row on
//! without copying it. Rows stream: only Sort, Agg, WindowAgg, the hashed
//! side of a hash join, the inner side of a plain nested loop, SetOp and
//! CTE materialization hold rows. A node is built from its plan node when
//! its parent starts it ([`build`]); a nested loop whose inner side
//! depends on the outer row builds that side again per outer row.
//!
//! Every loop that may run long calls `Ectx::tick` (cancel and
//! statement_timeout every 256 rows), including hash builds and the inner
//! loop of a nested loop, so any query is cancellable.
//!
//! State that outlives one node — subplan results, materialized CTEs, work
//! tables of recursive CTEs, executor parameters — lives in the statement's
//! `QueryState` on the `Ectx` (see `subplan.rs`).
//!
//! Next: `scan.rs` (leaves), `nestloop.rs`, `hashjoin.rs`, `agg.rs`,
//! `window.rs`, `sort.rs`, `setop.rs`, `ctescan.rs`, `subplan.rs`.

use crate::executor::{Ectx, Vis};
use crate::planner::plannodes::{NodeKind, PlanNode};
use pgtypes::error::PgResult;
use pgtypes::value::Value;

/// A running plan node.
pub trait ExecNode {
    /// Advances to the next row; false at the end (and on every later call).
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool>;
    /// The current row (valid after `next` returned true).
    fn row(&self) -> &[Value];
}

/// A boxed running node borrowing its plan.
pub type Node<'p> = Box<dyn ExecNode + 'p>;

/// Starts the executor for a plan subtree.
pub fn build<'p>(plan: &'p PlanNode, vis: &'p Vis) -> Node<'p> {
    use super::{agg, ctescan, hashjoin, nestloop, scan, setop, sort};
    match &plan.kind {
        NodeKind::Result => Box::new(scan::ResultNode::new()),
        NodeKind::SeqScan { table, filter } => {
            Box::new(scan::SeqScanNode::new(table, filter.as_ref(), vis))
        }
        NodeKind::IndexScan {
            table,
            index,
            key,
            key_types,
            filter,
        } => Box::new(scan::IndexScanNode::new(
            table,
            index,
            key,
            key_types,
            filter.as_ref(),
            vis,
        )),
        NodeKind::FunctionScan {
            start,
            stop,
            step,
            ty,
        } => Box::new(scan::FunctionScanNode::new(start, stop, step.as_ref(), *ty)),
        NodeKind::Unnest { array, .. } => Box::new(scan::UnnestNode::new(array)),
        NodeKind::JsonSrf { call, arg } => Box::new(scan::JsonSrfNode::new(call, arg)),
        NodeKind::UserFunction {
            call, as_record, ..
        } => Box::new(scan::UserFunctionNode::new(call, *as_record)),
        NodeKind::SystemView(v) => Box::new(scan::SystemViewNode::new(v, None)),
        NodeKind::KeyedView { view, key } => Box::new(scan::SystemViewNode::new(view, Some(key))),
        NodeKind::Values { rows } => Box::new(scan::ValuesNode::new(rows)),
        NodeKind::SequenceScan { oid, .. } => Box::new(scan::SequenceNode::new(*oid)),
        NodeKind::Filter { input, pred } => Box::new(FilterNode {
            input: build(input, vis),
            pred,
        }),
        NodeKind::Ordinality { input } => Box::new(OrdinalityNode {
            input: build(input, vis),
            n: 0,
            out: Vec::new(),
        }),
        NodeKind::Zip { inputs } => Box::new(ZipNode {
            inputs: inputs
                .iter()
                .map(|i| (build(i, vis), i.width, true))
                .collect(),
            out: Vec::new(),
        }),
        NodeKind::Project { input, exprs } => Box::new(ProjectNode {
            input: build(input, vis),
            exprs,
            out: Vec::with_capacity(exprs.len()),
        }),
        NodeKind::NestLoop {
            outer,
            inner,
            kind,
            qual,
            params,
        } => Box::new(nestloop::NestLoopNode::new(
            build(outer, vis),
            inner,
            *kind,
            qual.as_ref(),
            params,
            vis,
            outer.width,
        )),
        NodeKind::HashJoin {
            outer,
            inner,
            kind,
            outer_keys,
            inner_keys,
            qual,
        } => Box::new(hashjoin::HashJoinNode::new(
            build(outer, vis),
            build(inner, vis),
            *kind,
            outer_keys,
            inner_keys,
            qual.as_ref(),
            outer.width,
            inner.width,
        )),
        NodeKind::Agg { input, grouping } => {
            Box::new(agg::AggNode::new(build(input, vis), grouping))
        }
        NodeKind::Sort { input, keys } => Box::new(sort::SortNode::new(build(input, vis), keys)),
        NodeKind::WindowAgg {
            input,
            funcs,
            partition,
            order,
        } => Box::new(super::window::WindowAggNode::new(
            build(input, vis),
            funcs,
            partition,
            order,
        )),
        NodeKind::Unique { input, columns } => {
            Box::new(sort::UniqueNode::new(build(input, vis), columns))
        }
        NodeKind::HashDistinct { input, columns } => {
            Box::new(sort::HashDistinctNode::new(build(input, vis), columns))
        }
        NodeKind::Limit {
            input,
            limit,
            offset,
            ties,
        } => Box::new(sort::LimitNode::new(
            build(input, vis),
            limit.as_ref(),
            offset.as_ref(),
            ties.as_deref(),
        )),
        NodeKind::Append { inputs } => Box::new(setop::AppendNode::new(inputs, vis)),
        NodeKind::SetOp {
            op,
            all,
            left,
            right,
        } => Box::new(setop::SetOpNode::new(
            build(left, vis),
            build(right, vis),
            *op,
            *all,
        )),
        NodeKind::CteScan { cte, .. } => Box::new(ctescan::CteScanNode::new(*cte, vis)),
        NodeKind::WorkTableScan { cte } => Box::new(ctescan::WorkTableScanNode::new(*cte)),
        NodeKind::RecursiveUnion {
            nonrec,
            rec,
            cte,
            distinct,
        } => Box::new(ctescan::RecursiveUnionNode::new(
            build(nonrec, vis),
            rec,
            *cte,
            *distinct,
            vis,
        )),
    }
}

/// Passes the input rows for which the predicate is true.
struct FilterNode<'p> {
    input: Node<'p>,
    pred: &'p crate::expr::Expr,
}

impl ExecNode for FilterNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        loop {
            if !self.input.next(ec)? {
                return Ok(false);
            }
            let p = ec.params;
            if crate::expr::eval_filter(self.pred, self.input.row(), p, ec)? {
                return Ok(true);
            }
        }
    }
    fn row(&self) -> &[Value] {
        self.input.row()
    }
}

/// Computes output expressions per input row into a reused buffer.
struct ProjectNode<'p> {
    input: Node<'p>,
    exprs: &'p [crate::expr::Expr],
    out: Vec<Value>,
}

impl ExecNode for ProjectNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.input.next(ec)? {
            return Ok(false);
        }
        self.out.clear();
        let row = self.input.row();
        let p = ec.params;
        for e in self.exprs {
            let v = crate::expr::eval(e, row, p, ec)?;
            self.out.push(v);
        }
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

struct OrdinalityNode<'p> {
    input: Node<'p>,
    n: i64,
    out: Vec<Value>,
}

impl ExecNode for OrdinalityNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.input.next(ec)? {
            self.n = 0; // rescanned under a nested loop: count again
            return Ok(false);
        }
        self.n += 1;
        self.out.clear();
        self.out.extend_from_slice(self.input.row());
        self.out.push(Value::Int8(self.n));
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

/// [`NodeKind::Zip`]: each input with its width and whether it may still
/// give rows.
struct ZipNode<'p> {
    inputs: Vec<(Node<'p>, usize, bool)>,
    out: Vec<Value>,
}

impl ExecNode for ZipNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        self.out.clear();
        let mut any = false;
        for (node, width, live) in &mut self.inputs {
            if *live && node.next(ec)? {
                any = true;
                self.out.extend_from_slice(node.row());
            } else {
                *live = false;
                self.out.extend(std::iter::repeat_n(Value::Null, *width));
            }
        }
        if !any {
            // Rescanned under a nested loop: the inputs start again.
            for (_, _, live) in &mut self.inputs {
                *live = true;
            }
        }
        Ok(any)
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
}

/// Drains a subtree into memory (CTEs, subplans, a nested loop's inner
/// side).
pub fn collect(node: &mut Node<'_>, ec: &mut Ectx<'_>) -> PgResult<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    while node.next(ec)? {
        ec.tick()?;
        rows.push(node.row().to_vec());
    }
    Ok(rows)
}
