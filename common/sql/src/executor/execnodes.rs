//! The pull-based (Volcano) executor: one [`ExecNode`] per plan node.
//!
//! A parent asks a child for its next row with [`ExecNode::next`] and
//! reads it with [`ExecNode::row`], borrowed until the next call; a node
//! that passes rows through (Filter, Limit) hands its child's row on
//! without copying it. Rows stream: only Sort, Agg, WindowAgg (one
//! partition), the hashed side of a hash join, the inner side of a plain
//! nested loop, SetOp and CTE materialization hold rows, each up to
//! `work_mem` and then in temporary files (`spill.rs`). While an EXPLAIN
//! ANALYZE runs, [`build`] wraps every node to measure it.
//!
//! A node is built from its plan node when its parent starts it
//! ([`build`]); a nested loop whose inner side depends on the outer row
//! builds that side again per outer row. A projection over an index scan
//! is made by the scan node itself (no node of its own), and a node's
//! buffers go back to the session's pool when its statement is done
//! ([`ExecNode::recycle`]).
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

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use crate::executor::{hashjoin, scan, Ectx, ExecBuffers, Vis};
use crate::planner::explain::{self, node_key, ExplainOptions, Measured, StatsMap};
use crate::planner::plannodes::{AggSplit, NodeKind, PlanNode};
use crate::planner::QueryPlan;
use pgtypes::error::PgResult;
use pgtypes::value::Value;

/// A running plan node.
pub trait ExecNode {
    /// Advances to the next row; false at the end (and on every later call).
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool>;
    /// The current row (valid after `next` returned true).
    fn row(&self) -> &[Value];
    /// ExecReScan for a node whose only input is the executor parameters
    /// (a parameterized nested loop's inner index scan): starts over, to
    /// read its parameters afresh at the next `next`, keeping what it
    /// allocated. False (the default) when the node cannot, and the caller
    /// builds a new one.
    fn rescan(&mut self) -> bool {
        false
    }
    /// Hands the node's buffers, and its inputs', to the session's pool
    /// for the next statement's nodes once the statement is done with it
    /// (`run_query`). The default keeps them: they are freed with the
    /// node.
    fn recycle(&mut self, _pool: &mut ExecBuffers) {}
}

/// A boxed running node borrowing its plan.
pub type Node<'p> = Box<dyn ExecNode + 'p>;

/// Starts the executor for a plan subtree. While an EXPLAIN ANALYZE runs
/// its query on this thread, every node is wrapped to measure it.
pub fn build<'p>(plan: &'p PlanNode, vis: &'p Vis) -> Node<'p> {
    let node = build_node(plan, vis);
    match INSTRUMENT.with(|i| i.borrow().clone()) {
        None => node,
        Some((stats, timing)) => Box::new(Instrumented {
            inner: node,
            key: node_key(plan),
            stats,
            timing,
            started: false,
            first_done: false,
        }),
    }
}

/// An EXPLAIN ANALYZE is measuring the nodes built on this thread.
pub fn instrumenting() -> bool {
    INSTRUMENT.with(|i| i.borrow().is_some())
}

/// Records one run of `plan`, a node no executor node stands for (the
/// Gather and Partial aggregation a Finalize aggregation runs itself),
/// for the EXPLAIN ANALYZE measuring this thread.
pub fn record_run(plan: &PlanNode, rows: u64, ms: f64) {
    INSTRUMENT.with(|i| {
        if let Some((stats, _)) = i.borrow().as_ref() {
            let mut stats = stats.borrow_mut();
            let s = stats.entry(node_key(plan)).or_default();
            s.loops += 1;
            s.rows += rows;
            s.total_ms += ms;
            s.startup_ms += ms;
        }
    });
}

type SharedStats = Rc<RefCell<StatsMap>>;

thread_local! {
    /// The measurements of the EXPLAIN ANALYZE running on this thread, and
    /// whether it times nodes. A statement runs start to end on one
    /// thread, so nodes built while it is set belong to it.
    static INSTRUMENT: RefCell<Option<(SharedStats, bool)>> = const { RefCell::new(None) };
}

/// A node measured for EXPLAIN ANALYZE: loops (each build is one), rows,
/// time to the first row and in all (inclusive of its children, as in
/// PostgreSQL).
struct Instrumented<'p> {
    inner: Node<'p>,
    key: usize,
    stats: SharedStats,
    timing: bool,
    started: bool,
    first_done: bool,
}

impl ExecNode for Instrumented<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        let t = self.timing.then(Instant::now);
        if !self.started {
            self.started = true;
            self.stats.borrow_mut().entry(self.key).or_default().loops += 1;
        }
        // What the node's children remove is theirs: count from zero and
        // give the parent's count back after.
        let outer_removed = std::mem::take(&mut ec.removed);
        let r = self.inner.next(ec);
        let removed = std::mem::replace(&mut ec.removed, outer_removed);
        let ms = t.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
        let mut stats = self.stats.borrow_mut();
        let s = stats.entry(self.key).or_default();
        s.total_ms += ms;
        s.removed[0] += removed[0];
        s.removed[1] += removed[1];
        if !self.first_done {
            s.startup_ms += ms;
            self.first_done = true;
        }
        if matches!(r, Ok(true)) {
            s.rows += 1;
        }
        r
    }
    fn row(&self) -> &[Value] {
        self.inner.row()
    }
    fn rescan(&mut self) -> bool {
        // A new loop, counted at its first `next` as a new node's is.
        self.started = false;
        self.inner.rescan()
    }
    fn recycle(&mut self, pool: &mut ExecBuffers) {
        self.inner.recycle(pool);
    }
}

/// Puts back the measurements that were on the thread before (none, or
/// an outer EXPLAIN ANALYZE's), on every way out.
struct InstrumentGuard(Option<(SharedStats, bool)>);

impl Drop for InstrumentGuard {
    fn drop(&mut self) {
        let prev = self.0.take();
        INSTRUMENT.with(|i| *i.borrow_mut() = prev);
    }
}

/// EXPLAIN ANALYZE: runs its query to the end (rows discarded) with every
/// node measured, then returns EXPLAIN's lines.
struct ExplainAnalyzeNode<'p> {
    plan: &'p QueryPlan,
    opts: &'p ExplainOptions,
    planning_ms: f64,
    vis: &'p Vis,
    lines: Option<std::vec::IntoIter<Value>>,
    row: Vec<Value>,
}

impl ExecNode for ExplainAnalyzeNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if self.lines.is_none() {
            let stats = SharedStats::default();
            let prev = INSTRUMENT.with(|i| i.replace(Some((stats.clone(), self.opts.timing))));
            let guard = InstrumentGuard(prev);
            let started = Instant::now();
            super::run_query(ec, self.vis, self.plan, &mut |ec, _| ec.tick())?;
            let execution_ms = started.elapsed().as_secs_f64() * 1000.0;
            drop(guard);
            let map = stats.borrow();
            let m = Measured {
                stats: &map,
                planning_ms: self.planning_ms,
                execution_ms,
            };
            let lines: Vec<Value> = if self.opts.json {
                vec![Value::Json(
                    explain::json_text(self.plan, self.opts, Some(&m)).into(),
                )]
            } else {
                explain::text_lines(self.plan, self.opts, Some(&m))
                    .iter()
                    .map(|l| Value::text(l))
                    .collect()
            };
            self.lines = Some(lines.into_iter());
        }
        match self.lines.as_mut().and_then(Iterator::next) {
            Some(v) => {
                self.row = vec![v];
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn row(&self) -> &[Value] {
        &self.row
    }
}

/// The executor node of a hash join plan node (None for another kind).
fn hash_join_node<'p>(plan: &'p PlanNode, vis: &'p Vis) -> Option<hashjoin::HashJoinNode<'p>> {
    let NodeKind::HashJoin {
        outer,
        inner,
        kind,
        outer_keys,
        inner_keys,
        qual,
        inner_needed,
    } = &plan.kind
    else {
        return None;
    };
    Some(
        hashjoin::HashJoinNode::new(
            build(outer, vis),
            build(inner, vis),
            *kind,
            outer_keys,
            inner_keys,
            qual.as_ref(),
            outer.width,
            inner.width,
            inner_needed.as_deref(),
        )
        .parallel(plan, vis, super::agg::parallel_rel(outer).is_some()),
    )
}

/// The executor node of an index scan plan node, making the projection
/// `project` of its rows if given (an empty Result for another kind).
fn index_scan_node<'p>(
    plan: &'p PlanNode,
    vis: &'p Vis,
    project: Option<&'p [crate::expr::Expr]>,
) -> Node<'p> {
    match scan::IndexScanNode::from_plan(plan, vis, project) {
        Some(n) => Box::new(n),
        None => Box::new(scan::ResultNode::new()),
    }
}

/// `exprs` over `input`'s row is the permutation
/// `fromclause::swapped_hash_join` puts above a hash join it turned
/// around: the join's inner columns, then its outer ones.
fn swap_permutation(input: &PlanNode, exprs: &[crate::expr::Expr]) -> bool {
    let NodeKind::HashJoin { outer, inner, .. } = &input.kind else {
        return false;
    };
    let (ow, iw) = (outer.width, inner.width);
    exprs.len() == ow + iw
        && exprs.iter().enumerate().all(|(k, e)| {
            let want = if k < iw { ow + k } else { k - iw };
            matches!(e, crate::expr::Expr::Column(c) if *c == want)
        })
}

fn build_node<'p>(plan: &'p PlanNode, vis: &'p Vis) -> Node<'p> {
    use super::{agg, ctescan, nestloop, setop, sort};
    match &plan.kind {
        NodeKind::Result => Box::new(scan::ResultNode::new()),
        NodeKind::ExplainAnalyze {
            plan: query,
            opts,
            planning_ms,
        } => Box::new(ExplainAnalyzeNode {
            plan: query,
            opts,
            planning_ms: *planning_ms,
            vis,
            lines: None,
            row: Vec::new(),
        }),
        NodeKind::SeqScan {
            table,
            filter,
            needed,
            filter_first,
            parallel,
        } => Box::new(scan::SeqScanNode::new(
            table,
            filter.as_ref(),
            needed.as_deref(),
            vis,
            parallel.then_some(plan as *const PlanNode as usize),
            filter_first.as_ref(),
        )),
        NodeKind::IndexScan { .. } => index_scan_node(plan, vis, None),
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
        NodeKind::Project { input, exprs } => {
            // The permutation above a turned-around hash join: the join
            // makes its rows in this order itself (not while EXPLAIN
            // ANALYZE measures each node).
            if swap_permutation(input, exprs) && !instrumenting() {
                if let Some(j) = hash_join_node(input, vis).map(|j| j.emit_swapped()) {
                    if j.swapped() {
                        return Box::new(j);
                    }
                    return Box::new(ProjectNode {
                        input: Box::new(j),
                        exprs,
                        out: Vec::new(),
                    });
                }
            }
            // A projection over an index scan is made by the scan, as
            // PostgreSQL's scan nodes project their own rows: one node
            // less per execution of a point query (not while EXPLAIN
            // ANALYZE measures each node).
            if let (NodeKind::IndexScan { .. }, false) = (&input.kind, instrumenting()) {
                return index_scan_node(input, vis, Some(exprs));
            }
            Box::new(ProjectNode {
                input: build(input, vis),
                exprs,
                out: Vec::new(),
            })
        }
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
        NodeKind::HashJoin { .. } => match hash_join_node(plan, vis) {
            Some(j) => Box::new(j),
            None => Box::new(scan::ResultNode::new()),
        },
        NodeKind::MergeJoin {
            outer,
            inner,
            kind,
            outer_keys,
            inner_keys,
            qual,
        } => Box::new(super::mergejoin::MergeJoinNode::new(
            outer,
            inner,
            *kind,
            outer_keys,
            inner_keys,
            qual.as_ref(),
            vis,
        )),
        NodeKind::Agg {
            input,
            grouping,
            split: AggSplit::Final,
            ..
        } => match agg::Parallel::of(input, vis) {
            // Gather over the Partial aggregation: the session runs the
            // partial's input too, the workers run copies of it.
            Some(par) => Box::new(agg::AggNode::parallel(build(par.input, vis), grouping, par)),
            None => Box::new(agg::AggNode::new(build(input, vis), grouping, false)),
        },
        NodeKind::Agg {
            input,
            grouping,
            sorted,
            ..
        } => Box::new(agg::AggNode::new(build(input, vis), grouping, *sorted)),
        // Only under a Final aggregation, which runs what is below it.
        NodeKind::Gather { input, .. } => build(input, vis),
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
            ec.removed[0] += 1;
        }
    }
    fn row(&self) -> &[Value] {
        self.input.row()
    }
    fn recycle(&mut self, pool: &mut ExecBuffers) {
        self.input.recycle(pool);
    }
}

/// Computes output expressions per input row into a reused buffer (the
/// session's, see [`ExecBuffers`]).
struct ProjectNode<'p> {
    input: Node<'p>,
    exprs: &'p [crate::expr::Expr],
    out: Vec<Value>,
}

/// Computes `exprs` over `row` into `out`, a buffer the caller keeps
/// (taken from the session's pool at the first row): the one way a
/// projection is made, by [`ProjectNode`] and by a scan it was folded
/// into (`scan::IndexScanNode`).
pub fn project_into(
    exprs: &[crate::expr::Expr],
    row: &[Value],
    out: &mut Vec<Value>,
    ec: &mut Ectx<'_>,
) -> PgResult<()> {
    if out.capacity() == 0 {
        if let Some(pool) = ec.buffers.as_deref_mut() {
            *out = pool.row();
        }
        out.reserve(exprs.len());
    }
    out.clear();
    let p = ec.params;
    for e in exprs {
        // A column (most of a projection: a join's permutation, a
        // subquery's outputs) is copied without the evaluator.
        let v = match e {
            crate::expr::Expr::Column(i) if *i < row.len() => row[*i].clone(),
            _ => crate::expr::eval(e, row, p, ec)?,
        };
        out.push(v);
    }
    Ok(())
}

impl ExecNode for ProjectNode<'_> {
    fn next(&mut self, ec: &mut Ectx<'_>) -> PgResult<bool> {
        if !self.input.next(ec)? {
            return Ok(false);
        }
        project_into(self.exprs, self.input.row(), &mut self.out, ec)?;
        Ok(true)
    }
    fn row(&self) -> &[Value] {
        &self.out
    }
    fn recycle(&mut self, pool: &mut ExecBuffers) {
        self.input.recycle(pool);
        pool.put_row(std::mem::take(&mut self.out));
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
