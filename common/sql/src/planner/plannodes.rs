//! The plan tree: what the planner hands the executor for a query.
//!
//! A query is a tree of [`PlanNode`]s, each producing rows of a fixed
//! width; a parent reads its children's rows by position (`Expr::Column`
//! indexes the child's row, or for a join the outer row followed by the
//! inner row). The tree for
//! `SELECT a.owner, count(o.id) FROM accounts a JOIN orders o ON o.account_id = a.id GROUP BY a.owner`
//! is
//!
//! ```text
//!   Project [Agg(0), Agg(1)]
//!     Agg  keys [Column(1)]  aggs [count(Column(3))]
//!       HashJoin inner  outer key Column(0) = inner key Column(1)
//!         SeqScan accounts            (columns 0..2 of the join row)
//!         SeqScan orders              (columns 2..5, hashed)
//! ```
//!
//! Besides the tree, a statement has [`StatementPlans`]: the subqueries
//! used as expressions (`Expr::SubPlan` points at one by index), the
//! materialized CTEs (`CteScan` reads one by index) and the number of
//! executor parameter slots (`Expr::ExecParam`). Plans are immutable and
//! shared (`Arc`); everything that changes while a query runs lives in the
//! executor (`executor::execnodes`).
//!
//! Every node carries a label and an estimated row count so EXPLAIN can
//! print the tree; the estimates are crude (no statistics yet) and only
//! steer the choice between a hash join and an index nested loop.

use std::sync::Arc;

use crate::expr::{Expr, Grouping, SubLinkKind};
use crate::planner::SortKey;
use engine::catalog::{IndexDef, TableDef};
use pgtypes::sqltype::SqlType;

/// Which part of an aggregation a node does (PostgreSQL's AggSplit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AggSplit {
    /// All of it.
    #[default]
    Simple,
    /// Each participant of a parallel plan aggregates the rows it read;
    /// its groups go to the `Final` node unfinished.
    Partial,
    /// Combines the participants' groups and finishes them.
    Final,
}

/// Join types, as PostgreSQL's JoinType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// Matching pairs.
    Inner,
    /// Every outer row, NULL-extended when nothing matches.
    Left,
    /// Every inner row, NULL-extended when nothing matches.
    Right,
    /// Both.
    Full,
    /// Outer rows with at least one match (EXISTS, IN); outer columns only.
    Semi,
    /// Outer rows without a match (NOT EXISTS); outer columns only.
    Anti,
}

impl JoinKind {
    /// The label EXPLAIN uses.
    pub fn label(self) -> &'static str {
        match self {
            JoinKind::Inner => "Inner",
            JoinKind::Left => "Left",
            JoinKind::Right => "Right",
            JoinKind::Full => "Full",
            JoinKind::Semi => "Semi",
            JoinKind::Anti => "Anti",
        }
    }
    /// True when the join's output is the outer row alone.
    pub fn outer_only(self) -> bool {
        matches!(self, JoinKind::Semi | JoinKind::Anti)
    }

    /// Columns of the joined row: the outer row's for a semi or anti
    /// join, both rows' otherwise.
    pub fn row_width(self, outer: usize, inner: usize) -> usize {
        if self.outer_only() {
            outer
        } else {
            outer + inner
        }
    }
}

/// INTERSECT or EXCEPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    /// Rows in both inputs.
    Intersect,
    /// Rows of the left input not in the right one.
    Except,
}

/// One node of the plan tree.
#[derive(Debug)]
pub struct PlanNode {
    /// What it does.
    pub kind: NodeKind,
    /// Width of its output rows.
    pub width: usize,
    /// Estimated output rows (`planner::selfuncs`).
    pub rows: f64,
    /// Estimated cost until the first row (`planner::costsize`).
    pub startup_cost: f64,
    /// Estimated cost of all rows, children included.
    pub total_cost: f64,
    /// Estimated average width of an output row, in bytes.
    pub byte_width: u32,
    /// The FROM item whose rows this node returns, for a scan or a
    /// planned FROM item (PostgreSQL's range table entry): EXPLAIN names
    /// the node's columns by it.
    pub rte: Option<Arc<RangeEntry>>,
}

/// A FROM item as EXPLAIN names it (PostgreSQL's `RangeTblEntry.eref`):
/// the name that qualifies its columns (its alias, else the relation's
/// name) and the names of its columns, in row order.
#[derive(Debug)]
pub struct RangeEntry {
    /// Alias or relation name.
    pub alias: String,
    /// Column names.
    pub columns: Vec<String>,
}

/// A sequential scan's filter run before the rest of the row is decoded
/// (PostgreSQL deforms a tuple only as far as its quals reach): the
/// columns the filter reads are decoded first, the rest of `needed` only
/// for a row that passes, and the columns only the filter reads are set
/// NULL after it, so a text column read by a LIKE is not copied into
/// every joined or aggregated row above.
#[derive(Clone, Debug)]
pub struct FilterFirst {
    /// The columns the filter reads.
    pub filter: Vec<bool>,
    /// The other needed columns, decoded for a passing row.
    pub rest: Vec<bool>,
    /// Columns the filter reads and nothing above does.
    pub drop: Vec<usize>,
}

/// The node kinds, named after PostgreSQL's.
#[derive(Debug)]
pub enum NodeKind {
    /// EXPLAIN ANALYZE: runs `plan`, measuring every node, and returns
    /// EXPLAIN's lines (one json value with FORMAT JSON).
    ExplainAnalyze {
        /// The query explained.
        plan: Box<super::QueryPlan>,
        /// Its options.
        opts: super::explain::ExplainOptions,
        /// Milliseconds its planning took.
        planning_ms: f64,
    },
    /// One empty row (SELECT without FROM).
    Result,
    /// Every visible row of a table that passes `filter`.
    SeqScan {
        /// The table.
        table: Arc<TableDef>,
        /// Condition over the table's row.
        filter: Option<Expr>,
        /// The columns decoded (None: all); the others read as NULL
        /// (`planner::narrow`).
        needed: Option<Vec<bool>>,
        /// Set by `planner::narrow` when the filter reads fewer columns
        /// than the scan decodes, or columns no one above reads: see
        /// [`FilterFirst`].
        filter_first: Option<FilterFirst>,
        /// Under a [`NodeKind::Gather`]: each participant reads the pages
        /// it claims from a shared counter (PostgreSQL's Parallel Seq
        /// Scan, `planner::parallel`).
        parallel: bool,
    },
    /// The visible rows under one key of an index that pass `filter`.
    IndexScan {
        /// The table.
        table: Arc<TableDef>,
        /// The index.
        index: Arc<IndexDef>,
        /// One expression per index column, without column references (it
        /// may read executor parameters: an inner side of a nested loop).
        key: Vec<Expr>,
        /// Each index column's type (keys are cast to it).
        key_types: Vec<SqlType>,
        /// Condition over the table's row (the whole WHERE part).
        filter: Option<Expr>,
        /// The columns decoded (None: all; `planner::narrow`).
        needed: Option<Vec<bool>>,
        /// The decode plan of `needed` over the table's rows, made at
        /// the first execution (when `needed` is final) and kept with
        /// the plan: each execution of a point lookup decodes with it
        /// as a sequential scan does with the one it makes when it
        /// starts. A change to the table makes a new plan.
        layout: std::sync::OnceLock<storage::rowcodec::RowLayout>,
    },
    /// `generate_series(start, stop[, step])`: one column.
    FunctionScan {
        /// Start (no column references; may read executor parameters).
        start: Expr,
        /// Stop.
        stop: Expr,
        /// Step (default 1).
        step: Option<Expr>,
        /// int4, int8, or timestamp / timestamptz (with an interval step).
        ty: SqlType,
    },
    /// `unnest(array)`: one row per element, one column.
    Unnest {
        /// The array (no column references; may read executor parameters).
        array: Expr,
        /// The element type.
        ty: SqlType,
    },
    /// A set-returning json function (`jsonb_each(x)` …): its rows.
    JsonSrf {
        /// The function.
        call: crate::jsonfuncs::SrfCall,
        /// The argument (no column references; may read executor parameters).
        arg: Expr,
    },
    /// A user-defined function in FROM (`crate::fmgr::call_rows`): its
    /// rows, materialised at the first row.
    UserFunction {
        /// The call: `Expr::Func` of a `Func::User` (no column
        /// references; may read executor parameters).
        call: Expr,
        /// Its name (EXPLAIN).
        name: String,
        /// Each row as one record value (a target list's `SELECT f()` of
        /// a function with several result columns).
        as_record: bool,
    },
    /// A system view's rows, as of the scan.
    SystemView(&'static crate::sysviews::SystemView),
    /// `FROM sequence`: its one row (last_value, log_cnt, is_called) as
    /// of the scan.
    SequenceScan {
        /// The sequence's OID.
        oid: pgtypes::Oid,
        /// Its name (EXPLAIN).
        name: String,
    },
    /// A VALUES list.
    Values {
        /// Rows of expressions without column references.
        rows: Vec<Vec<Expr>>,
    },
    /// Rows of `input` for which `pred` is true.
    Filter {
        /// Input.
        input: Box<PlanNode>,
        /// Condition.
        pred: Expr,
    },
    /// `WITH ORDINALITY`: each input row with its 1-based number (int8)
    /// appended; the count starts again when the input does.
    Ordinality {
        /// Input (a function scan).
        input: Box<PlanNode>,
    },
    /// A catalog's rows for one relation: `key` (evaluated once) is the
    /// OID its key column must equal (see `SystemView::key`); the filter
    /// above still checks every row.
    KeyedView {
        /// The catalog.
        view: &'static crate::sysviews::SystemView,
        /// The relation's OID.
        key: Expr,
    },
    /// `ROWS FROM (f(…), g(…))`, also how set-returning functions in a
    /// target list run: the inputs advance in lockstep, each row the
    /// concatenation of theirs, an exhausted input giving NULLs, until
    /// every input is exhausted.
    Zip {
        /// The function scans, left to right.
        inputs: Vec<PlanNode>,
    },
    /// One output row per input row, computed by `exprs`.
    Project {
        /// Input.
        input: Box<PlanNode>,
        /// Output expressions over the input row.
        exprs: Vec<Expr>,
    },
    /// For each outer row, the inner rows; `params` are set from the outer
    /// row before the inner side is (re)started, so an inner side that
    /// reads them (an index lookup on the join key, LATERAL) runs once per
    /// outer row; without parameters the inner rows are kept in memory.
    NestLoop {
        /// Outer input.
        outer: Box<PlanNode>,
        /// Inner input.
        inner: Box<PlanNode>,
        /// Join type.
        kind: JoinKind,
        /// Join condition over outer row ++ inner row.
        qual: Option<Expr>,
        /// (executor parameter slot, expression over the outer row).
        params: Vec<(usize, Expr)>,
    },
    /// Equi-join of two inputs sorted ascending (NULLs last) on their
    /// keys: walked together, each outer row meets the inner rows of its
    /// key (`executor::mergejoin`); `qual` decides among key matches.
    MergeJoin {
        /// Outer input, sorted on `outer_keys`.
        outer: Box<PlanNode>,
        /// Inner input, sorted on `inner_keys`.
        inner: Box<PlanNode>,
        /// Join type.
        kind: JoinKind,
        /// Keys over the outer row, in the inputs' sort order.
        outer_keys: Vec<Expr>,
        /// Keys over the inner row (same count, same order).
        inner_keys: Vec<Expr>,
        /// Other conditions over outer row ++ inner row.
        qual: Option<Expr>,
    },
    /// Equi-join: the inner rows are hashed on `inner_keys`, each outer
    /// row probes with `outer_keys`; `qual` decides among key matches.
    HashJoin {
        /// Outer (probing) input.
        outer: Box<PlanNode>,
        /// Inner (hashed) input.
        inner: Box<PlanNode>,
        /// Join type.
        kind: JoinKind,
        /// Keys over the outer row.
        outer_keys: Vec<Expr>,
        /// Keys over the inner row (same count).
        inner_keys: Vec<Expr>,
        /// Other conditions over outer row ++ inner row.
        qual: Option<Expr>,
        /// The inner columns anything reads (None: all): the hash table
        /// and its batch files hold only these (`planner::narrow`).
        inner_needed: Option<Vec<usize>>,
    },
    /// Hash aggregation: one row per group, `[keys…, aggregates…]`.
    Agg {
        /// Input.
        input: Box<PlanNode>,
        /// Group keys and aggregate calls over the input row.
        grouping: Grouping,
        /// The input arrives ordered by the group keys (an index's order):
        /// groups are made one at a time (PostgreSQL's GroupAggregate)
        /// rather than in a hash table.
        sorted: bool,
        /// Whole, or one half of a parallel aggregation
        /// (`planner::parallel`).
        split: AggSplit,
    },
    /// Runs its input in worker threads and in the session's own, each
    /// reading its share of the one parallel scan below (PostgreSQL's
    /// Gather). Only under a `Final` aggregation, over a `Partial` one:
    /// the executor merges the groups each participant made.
    Gather {
        /// The part each participant runs.
        input: Box<PlanNode>,
        /// Threads planned besides the session's own (capped at run time
        /// by `max_parallel_workers_per_gather`).
        workers: usize,
    },
    /// Window functions over input sorted by `partition` then `order`:
    /// each row followed by one value per function.
    WindowAgg {
        /// Input.
        input: Box<PlanNode>,
        /// The calls (their window's keys are `partition` / `order`).
        funcs: Vec<crate::expr::window::WindowCall>,
        /// PARTITION BY columns of the input row.
        partition: Vec<usize>,
        /// ORDER BY columns of the input row (peers, RANGE offsets).
        order: Vec<SortKey>,
    },
    /// Sorts its whole input.
    Sort {
        /// Input.
        input: Box<PlanNode>,
        /// Keys.
        keys: Vec<SortKey>,
    },
    /// Drops rows equal on `columns` to the row before (sorted input:
    /// DISTINCT ON).
    Unique {
        /// Input.
        input: Box<PlanNode>,
        /// Compared columns.
        columns: Vec<usize>,
    },
    /// Drops rows equal on `columns` to any earlier row (DISTINCT, UNION),
    /// streaming the first of each.
    HashDistinct {
        /// Input.
        input: Box<PlanNode>,
        /// Compared columns.
        columns: Vec<usize>,
    },
    /// LIMIT / OFFSET (int8 expressions without column references).
    Limit {
        /// Input.
        input: Box<PlanNode>,
        /// LIMIT (None: all).
        limit: Option<Expr>,
        /// OFFSET.
        offset: Option<Expr>,
        /// FETCH FIRST … WITH TIES: the ORDER BY columns; rows equal on
        /// them to the last row within the limit are returned too.
        ties: Option<Vec<usize>>,
    },
    /// The rows of each input in turn (UNION ALL).
    Append {
        /// Inputs, all of the same width.
        inputs: Vec<PlanNode>,
    },
    /// INTERSECT / EXCEPT [ALL], hashed on whole rows.
    SetOp {
        /// Which.
        op: SetOpKind,
        /// ALL (keep duplicates by count).
        all: bool,
        /// Left input.
        left: Box<PlanNode>,
        /// Right input.
        right: Box<PlanNode>,
    },
    /// The rows of a materialized CTE (computed once per execution).
    CteScan {
        /// Index into [`StatementPlans::ctes`].
        cte: usize,
        /// The CTE's name (EXPLAIN).
        name: String,
    },
    /// The rows the recursive term of CTE `cte` produced in the previous
    /// iteration.
    WorkTableScan {
        /// The recursive CTE.
        cte: usize,
    },
    /// WITH RECURSIVE: the non-recursive term, then the recursive term
    /// again and again over the previous iteration's rows until it
    /// returns none.
    RecursiveUnion {
        /// The non-recursive term.
        nonrec: Box<PlanNode>,
        /// The recursive term (reads a `WorkTableScan` of `cte`).
        rec: Box<PlanNode>,
        /// The CTE whose work table it fills.
        cte: usize,
        /// UNION (not UNION ALL): drop rows already produced.
        distinct: bool,
    },
}

impl PlanNode {
    /// A node of `kind` with `width` columns and `rows` estimated rows.
    pub fn new(kind: NodeKind, width: usize, rows: f64) -> PlanNode {
        let mut node = PlanNode {
            kind,
            width,
            rows,
            startup_cost: 0.0,
            total_cost: 0.0,
            byte_width: 0,
            rte: None,
        };
        node.estimate();
        node
    }

    /// The node, its columns named by `rte`.
    pub fn with_rte(mut self, rte: Arc<RangeEntry>) -> PlanNode {
        self.rte = Some(rte);
        self
    }

    /// The rows an aggregation's grouping reads: its input's, or for a
    /// Finalize aggregation those below its Gather and Partial
    /// aggregation (the two halves share one [`Grouping`]).
    pub fn agg_input(&self) -> Option<&PlanNode> {
        let NodeKind::Agg { input, split, .. } = &self.kind else {
            return None;
        };
        if *split == AggSplit::Final {
            if let NodeKind::Gather { input: partial, .. } = &input.kind {
                if let NodeKind::Agg { input: below, .. } = &partial.kind {
                    return Some(below);
                }
            }
        }
        Some(input)
    }

    /// The label EXPLAIN prints for the node.
    pub fn label(&self) -> String {
        // A table read under another name: `ex_a a`, as PostgreSQL prints.
        let table_as = |name: &str| match &self.rte {
            Some(r) if r.alias != name => format!("{name} {}", r.alias),
            _ => name.to_string(),
        };
        match &self.kind {
            NodeKind::Result => "Result".into(),
            NodeKind::ExplainAnalyze { .. } => "Explain".into(),
            NodeKind::SeqScan {
                table, parallel, ..
            } => format!(
                "{}Seq Scan on {}",
                if *parallel { "Parallel " } else { "" },
                table_as(&table.name)
            ),
            NodeKind::Gather { .. } => "Gather".into(),
            NodeKind::IndexScan { table, index, .. } => format!(
                "Index Scan using {} on {}",
                index.spec.name,
                table_as(&table.name)
            ),
            NodeKind::FunctionScan { .. } => "Function Scan on generate_series".into(),
            NodeKind::Unnest { .. } => "Function Scan on unnest".into(),
            NodeKind::JsonSrf { call, .. } => format!("Function Scan on {}", call.name),
            NodeKind::UserFunction { name, .. } => format!("Function Scan on {name}"),
            NodeKind::SystemView(v) | NodeKind::KeyedView { view: v, .. } => {
                format!("Function Scan on {}", v.name)
            }
            NodeKind::Values { .. } => "Values Scan".into(),
            NodeKind::SequenceScan { name, .. } => format!("Seq Scan on {name}"),
            NodeKind::Filter { .. } => "Result (filter)".into(),
            NodeKind::Project { .. } => "Result".into(),
            NodeKind::Ordinality { input } => input.label(),
            NodeKind::Zip { inputs } => match inputs.first() {
                Some(i) => i.label(),
                None => "Result".into(),
            },
            NodeKind::NestLoop { kind, .. } => match kind {
                JoinKind::Inner => "Nested Loop".into(),
                k => format!("Nested Loop {} Join", k.label()),
            },
            NodeKind::HashJoin { kind, inner, .. } => {
                let parallel = if inner.has_parallel_scan() {
                    "Parallel "
                } else {
                    ""
                };
                match kind {
                    JoinKind::Inner => format!("{parallel}Hash Join"),
                    k => format!("{parallel}Hash {} Join", k.label()),
                }
            }
            NodeKind::MergeJoin { kind, .. } => match kind {
                JoinKind::Inner => "Merge Join".into(),
                k => format!("Merge {} Join", k.label()),
            },
            NodeKind::Agg {
                grouping,
                sorted,
                split,
                ..
            } => {
                let kind = if grouping.group_by.is_empty() {
                    "Aggregate"
                } else if *sorted {
                    "GroupAggregate"
                } else {
                    "HashAggregate"
                };
                match split {
                    AggSplit::Simple => kind.into(),
                    AggSplit::Partial => format!("Partial {kind}"),
                    AggSplit::Final => format!("Finalize {kind}"),
                }
            }
            NodeKind::Sort { .. } => "Sort".into(),
            NodeKind::WindowAgg { .. } => "WindowAgg".into(),
            NodeKind::Unique { .. } => "Unique".into(),
            NodeKind::HashDistinct { .. } => "HashAggregate".into(),
            NodeKind::Limit { .. } => "Limit".into(),
            NodeKind::Append { .. } => "Append".into(),
            NodeKind::SetOp { op, all, .. } => format!(
                "HashSetOp {}{}",
                match op {
                    SetOpKind::Intersect => "Intersect",
                    SetOpKind::Except => "Except",
                },
                if *all { " All" } else { "" }
            ),
            NodeKind::CteScan { name, .. } => format!("CTE Scan on {name}"),
            NodeKind::WorkTableScan { .. } => "WorkTable Scan".into(),
            NodeKind::RecursiveUnion { .. } => "Recursive Union".into(),
        }
    }

    /// The node's children, outer (left) first.
    pub fn children(&self) -> Vec<&PlanNode> {
        match &self.kind {
            NodeKind::Filter { input, .. }
            | NodeKind::Project { input, .. }
            | NodeKind::Agg { input, .. }
            | NodeKind::Gather { input, .. }
            | NodeKind::WindowAgg { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Unique { input, .. }
            | NodeKind::HashDistinct { input, .. }
            | NodeKind::Limit { input, .. } => vec![input],
            NodeKind::Ordinality { input } => input.children(),
            NodeKind::NestLoop { outer, inner, .. }
            | NodeKind::HashJoin { outer, inner, .. }
            | NodeKind::MergeJoin { outer, inner, .. } => vec![outer, inner],
            NodeKind::SetOp { left, right, .. } => vec![left, right],
            NodeKind::RecursiveUnion { nonrec, rec, .. } => vec![nonrec, rec],
            NodeKind::Append { inputs } => inputs.iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Visits the root of every expression this node (not its children)
    /// evaluates.
    pub fn for_each_own_expr(&self, f: &mut dyn FnMut(&Expr)) {
        match &self.kind {
            NodeKind::SeqScan { filter, .. } => filter.iter().for_each(f),
            NodeKind::IndexScan { key, filter, .. } => {
                key.iter().for_each(&mut *f);
                filter.iter().for_each(f);
            }
            NodeKind::FunctionScan {
                start, stop, step, ..
            } => {
                f(start);
                f(stop);
                step.iter().for_each(f);
            }
            NodeKind::Unnest { array, .. } => f(array),
            NodeKind::JsonSrf { arg, .. } => f(arg),
            NodeKind::UserFunction { call, .. } => f(call),
            NodeKind::Values { rows } => rows.iter().flatten().for_each(f),
            NodeKind::Filter { pred, .. } => f(pred),
            NodeKind::Project { exprs, .. } => exprs.iter().for_each(f),
            NodeKind::Ordinality { input } => input.for_each_own_expr(f),
            NodeKind::Zip { inputs } => inputs.iter().for_each(|i| i.for_each_own_expr(&mut *f)),
            NodeKind::KeyedView { key, .. } => f(key),
            NodeKind::NestLoop { qual, params, .. } => {
                qual.iter().for_each(&mut *f);
                params.iter().for_each(|(_, e)| f(e));
            }
            NodeKind::HashJoin {
                outer_keys,
                inner_keys,
                qual,
                ..
            }
            | NodeKind::MergeJoin {
                outer_keys,
                inner_keys,
                qual,
                ..
            } => {
                outer_keys.iter().for_each(&mut *f);
                inner_keys.iter().for_each(&mut *f);
                qual.iter().for_each(f);
            }
            NodeKind::Agg { grouping, .. } => {
                grouping.group_by.iter().for_each(&mut *f);
                grouping.aggs.iter().flat_map(|a| a.exprs()).for_each(f);
            }
            NodeKind::WindowAgg { funcs, .. } => {
                for w in funcs {
                    w.for_each_expr(&mut *f);
                }
            }
            NodeKind::Limit { limit, offset, .. } => {
                limit.iter().for_each(&mut *f);
                offset.iter().for_each(f);
            }
            _ => {}
        }
    }

    /// The subtree reads a parallel scan's share (a hash join whose
    /// hashed side does builds its table together: Parallel Hash).
    pub fn has_parallel_scan(&self) -> bool {
        matches!(self.kind, NodeKind::SeqScan { parallel: true, .. })
            || self.children().into_iter().any(PlanNode::has_parallel_scan)
    }

    /// Visits every expression of the subtree.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        self.for_each_own_expr(f);
        for c in self.children() {
            c.for_each_expr(f);
        }
    }

    /// True if running the subtree is bounded by the statement's text, not
    /// by a table's size: no FROM, a system view, a VALUES list, one key of
    /// a unique index, or a scan of one of the `small` tables (read whole
    /// in place of such a key, while they have no more than these pages:
    /// `Planned::small_scans`), under per-row nodes.
    pub fn runs_briefly(&self, small: &[(pgtypes::RelFileId, u32)]) -> bool {
        match &self.kind {
            NodeKind::SeqScan { table, .. } => small.iter().any(|(rel, _)| *rel == table.rel),
            NodeKind::Result
            | NodeKind::SystemView(_)
            | NodeKind::SequenceScan { .. }
            | NodeKind::KeyedView { .. }
            | NodeKind::Values { .. } => true,
            NodeKind::IndexScan { index, .. } => index.spec.unique,
            NodeKind::Filter { input, .. }
            | NodeKind::Project { input, .. }
            | NodeKind::Ordinality { input }
            | NodeKind::Agg { input, .. }
            | NodeKind::Gather { input, .. }
            | NodeKind::WindowAgg { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Unique { input, .. }
            | NodeKind::HashDistinct { input, .. }
            | NodeKind::Limit { input, .. } => input.runs_briefly(small),
            _ => false,
        }
    }

    /// Writes the tree, one node a line, indented by depth (EXPLAIN's
    /// shape with estimated rows, no costs).
    pub fn explain(&self, depth: usize, out: &mut Vec<String>) {
        self.explain_with(depth, true, out)
    }

    /// [`Self::explain`]; `rows` false is `EXPLAIN (COSTS OFF)`.
    pub fn explain_with(&self, depth: usize, rows: bool, out: &mut Vec<String>) {
        let opts = super::explain::ExplainOptions {
            costs: rows,
            ..Default::default()
        };
        let dp = super::deparse::Deparser::new(self, None);
        self.explain_node(depth, &opts, None, &dp, out)
    }

    /// The node EXPLAIN shows for this one: a projection over a node that
    /// computes its own output columns in PostgreSQL (a scan, a join, an
    /// aggregation, a window, a Result — its "projection-capable" nodes)
    /// is that node's target list there, not a node of its own, so the
    /// node below stands in its place. Over a Sort, a Limit, an Append …
    /// PostgreSQL adds the Result node shown.
    pub fn shown(&self) -> &PlanNode {
        if let NodeKind::Project { input, .. } = &self.kind {
            let projects = matches!(
                input.kind,
                NodeKind::HashJoin { .. }
                    | NodeKind::NestLoop { .. }
                    | NodeKind::MergeJoin { .. }
                    | NodeKind::SeqScan { .. }
                    | NodeKind::IndexScan { .. }
                    | NodeKind::Agg { .. }
                    | NodeKind::WindowAgg { .. }
                    | NodeKind::Result
                    | NodeKind::Project { .. }
                    | NodeKind::Values { .. }
                    | NodeKind::FunctionScan { .. }
                    | NodeKind::CteScan { .. }
            );
            if projects {
                return input.shown();
            }
        }
        self
    }

    /// Writes the tree as EXPLAIN's text lines: each node with its
    /// estimated rows (COSTS) and with `stats` (ANALYZE) what it did,
    /// then its detail lines (`super::explain::details`); a hash join's
    /// inner input under the `Hash` node PostgreSQL shows there.
    pub fn explain_node(
        &self,
        depth: usize,
        opts: &super::explain::ExplainOptions,
        stats: Option<&super::explain::StatsMap>,
        dp: &super::deparse::Deparser<'_>,
        out: &mut Vec<String>,
    ) {
        let node = self.shown();
        // PostgreSQL's node line; the Hash node reports its input's rows.
        let line = |depth: usize, label: &str, n: &PlanNode| {
            let pad = if depth == 0 {
                String::new()
            } else {
                format!("{}->  ", " ".repeat(depth * 6 - 4))
            };
            let mut line = format!("{pad}{label}");
            if opts.costs {
                line.push_str(&format!(
                    "  (cost={:.2}..{:.2} rows={} width={})",
                    n.startup_cost,
                    n.total_cost,
                    n.rows.round().max(1.0),
                    n.byte_width
                ));
            }
            if let Some(stats) = stats {
                line.push_str(&super::explain::actual_text(n, opts, stats));
            }
            line
        };
        out.push(line(depth, &node.label(), node));
        let details = super::explain::details(node, dp, stats);
        let detail_pad = " ".repeat(if depth == 0 { 2 } else { depth * 6 + 2 });
        super::explain::detail_lines(&details, &detail_pad, out);
        let hash_join = matches!(node.kind, NodeKind::HashJoin { .. });
        for (i, c) in node.children().into_iter().enumerate() {
            if hash_join && i == 1 {
                let hash = if c.has_parallel_scan() {
                    "Parallel Hash"
                } else {
                    "Hash"
                };
                out.push(line(depth + 1, hash, c.shown()));
                c.explain_node(depth + 2, opts, stats, dp, out);
            } else {
                c.explain_node(depth + 1, opts, stats, dp, out);
            }
        }
    }
}

/// A subquery used as an expression.
#[derive(Debug)]
pub struct SubPlanDef {
    /// Its plan; its first column is the value (scalar, ANY/ALL).
    pub plan: PlanNode,
    /// What it answers.
    pub kind: SubLinkKind,
    /// The executor parameter slot of each correlation value
    /// (`SubPlanExpr::args` in the same order). Empty: uncorrelated, run
    /// once per execution and cached (PostgreSQL's initplan).
    pub slots: Vec<usize>,
    /// ANY/ALL: the comparison over `[lhs, subquery value]`.
    pub test: Option<Expr>,
    /// ANY/ALL with `=` on types whose key encoding matches equality:
    /// an uncorrelated one is answered from a hash set.
    pub hashable: bool,
}

/// A materialized CTE.
#[derive(Debug)]
pub struct CteDef {
    /// Its name.
    pub name: String,
    /// Its plan.
    pub plan: PlanNode,
}

/// What a statement's plan tree refers to by index.
#[derive(Debug, Default)]
pub struct StatementPlans {
    /// Subqueries used as expressions.
    pub subplans: Vec<SubPlanDef>,
    /// Materialized CTEs (and recursive ones).
    pub ctes: Vec<CteDef>,
    /// Executor parameter slots.
    pub exec_params: usize,
}

impl StatementPlans {
    /// True when running the statement needs per-execution state beyond
    /// the node tree (subplans, CTEs, parameter slots).
    pub fn needs_state(&self) -> bool {
        !self.subplans.is_empty() || !self.ctes.is_empty() || self.exec_params > 0
    }
}
