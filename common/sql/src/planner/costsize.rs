//! Plan costs and row widths as EXPLAIN shows them, `(cost=S..T rows=N
//! width=W)` (PostgreSQL's costsize.c, in miniature).
//!
//! Every [`PlanNode`] gets its startup and total cost and its average row
//! width in bytes when it is made ([`PlanNode::new`]), from its own
//! estimated rows and its children's costs, in PostgreSQL's units (a
//! sequential page read is 1.0, a row handed up `cpu_tuple_cost` 0.01,
//! an operator `cpu_operator_cost` 0.0025, a random page 4.0). A scan of
//! a table knows more than its output rows — the table's rows and pages —
//! and is re-costed by the join planner with [`PlanNode::with_scan`].
//!
//! Invariants: `0 <= startup <= total`; a node's total includes its
//! children's (a nested loop's inner side once per outer row). The costs
//! are what EXPLAIN reports; the join planner's choices use its own
//! relative units (`fromclause::cost`) over the same row estimates, so
//! the two agree on which plan is cheaper, not on the numbers.

use super::plannodes::{NodeKind, PlanNode};
use pgtypes::sqltype::SqlType;

/// `seq_page_cost`.
pub const SEQ_PAGE_COST: f64 = 1.0;
/// `random_page_cost`.
pub const RANDOM_PAGE_COST: f64 = 4.0;
/// `cpu_tuple_cost`.
pub const CPU_TUPLE_COST: f64 = 0.01;
/// `cpu_index_tuple_cost`.
pub const CPU_INDEX_TUPLE_COST: f64 = 0.005;
/// `cpu_operator_cost`.
pub const CPU_OPERATOR_COST: f64 = 0.0025;
/// Bytes of a heap page.
const PAGE_BYTES: f64 = 8192.0;
/// A heap tuple's header and line pointer, beside its data.
const TUPLE_OVERHEAD: f64 = 28.0;

/// Average stored width of a value of `ty` (PostgreSQL's
/// get_typavgwidth: the fixed length, else 32 bytes).
pub fn type_width(ty: SqlType) -> u32 {
    match ty.typlen() {
        n if n > 0 => n as u32,
        _ => 32,
    }
}

/// `n log2 n` comparisons of a sort of `n` rows.
fn sort_comparisons(n: f64) -> f64 {
    let n = n.max(2.0);
    n * n.log2()
}

impl PlanNode {
    /// Sets the cost and width from the node's kind, rows and children.
    pub(super) fn estimate(&mut self) {
        let rows = self.rows.max(0.0);
        let (startup, total, width) = match &self.kind {
            NodeKind::SeqScan { table, filter, .. } => {
                let width = table.columns.iter().map(|c| type_width(c.ty)).sum();
                // Without the table's size: the rows handed up.
                let quals = filter.as_ref().map_or(0, |f| f.conjuncts().len());
                (
                    0.0,
                    rows * (CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64),
                    width,
                )
            }
            NodeKind::IndexScan { table, .. } => {
                let width = table.columns.iter().map(|c| type_width(c.ty)).sum();
                // A descent, then a random page and the tuple's CPU per row.
                let per_row = RANDOM_PAGE_COST + CPU_TUPLE_COST + CPU_INDEX_TUPLE_COST;
                (0.29, 0.29 + rows.max(1.0) * per_row + 4.0, width)
            }
            NodeKind::Sort { input, keys } => {
                let startup = input.total_cost
                    + 2.0
                        * CPU_OPERATOR_COST
                        * keys.len().max(1) as f64
                        * sort_comparisons(input.rows);
                (
                    startup,
                    startup + CPU_OPERATOR_COST * rows,
                    input.byte_width,
                )
            }
            NodeKind::Agg {
                input, grouping, ..
            } => {
                let per_input = CPU_OPERATOR_COST
                    * (grouping.group_by.len() + grouping.aggs.len()).max(1) as f64;
                let startup = input.total_cost + input.rows * per_input;
                let width = 8 * self.width as u32;
                (startup, startup + rows * CPU_TUPLE_COST, width)
            }
            NodeKind::HashDistinct { input, columns } | NodeKind::Unique { input, columns } => {
                let blocking = matches!(self.kind, NodeKind::HashDistinct { .. });
                let work = input.rows * CPU_OPERATOR_COST * columns.len().max(1) as f64;
                let startup = if blocking {
                    input.total_cost + work
                } else {
                    input.startup_cost
                };
                (
                    startup,
                    input.total_cost + work + rows * CPU_TUPLE_COST,
                    input.byte_width,
                )
            }
            NodeKind::SetOp { left, right, .. } => {
                let work = (left.rows + right.rows) * CPU_OPERATOR_COST * self.width.max(1) as f64;
                let startup = left.total_cost + right.total_cost + work;
                (startup, startup + rows * CPU_TUPLE_COST, left.byte_width)
            }
            NodeKind::HashJoin {
                outer,
                inner,
                outer_keys,
                ..
            } => {
                let nkeys = outer_keys.len().max(1) as f64;
                let build = inner.rows * (CPU_OPERATOR_COST * nkeys + CPU_TUPLE_COST);
                let startup = outer.startup_cost + inner.total_cost + build;
                let probe = outer.rows * CPU_OPERATOR_COST * nkeys;
                let total = startup
                    + (outer.total_cost - outer.startup_cost)
                    + probe
                    + rows * CPU_TUPLE_COST;
                (startup, total, self.join_width(outer, inner))
            }
            NodeKind::MergeJoin {
                outer,
                inner,
                outer_keys,
                ..
            } => {
                // Both inputs read once, one key comparison per row read.
                let nkeys = outer_keys.len().max(1) as f64;
                let startup = outer.startup_cost + inner.startup_cost;
                let merge = (outer.rows + inner.rows) * CPU_OPERATOR_COST * nkeys;
                let total = outer.total_cost + inner.total_cost + merge + rows * CPU_TUPLE_COST;
                (startup, total, self.join_width(outer, inner))
            }
            NodeKind::NestLoop { outer, inner, .. } => {
                let startup = outer.startup_cost + inner.startup_cost;
                let total = outer.total_cost
                    + outer.rows.max(1.0) * inner.total_cost
                    + rows * CPU_TUPLE_COST;
                (startup, total, self.join_width(outer, inner))
            }
            NodeKind::Limit { input, .. } => {
                let frac = if input.rows > 0.0 {
                    (rows / input.rows).min(1.0)
                } else {
                    1.0
                };
                let startup = input.startup_cost;
                (
                    startup,
                    startup + (input.total_cost - startup) * frac,
                    input.byte_width,
                )
            }
            NodeKind::Project { input, exprs } => {
                let per_col = if input.width > 0 {
                    input.byte_width / input.width as u32
                } else {
                    8
                };
                (
                    input.startup_cost,
                    input.total_cost + rows * CPU_OPERATOR_COST * exprs.len() as f64 / 4.0,
                    per_col.max(1) * exprs.len() as u32,
                )
            }
            NodeKind::Filter { input, pred } => {
                let quals = pred.conjuncts().len() as f64;
                (
                    input.startup_cost,
                    input.total_cost + input.rows * CPU_OPERATOR_COST * quals,
                    input.byte_width,
                )
            }
            _ => {
                let kids = self.children();
                let child_width: u32 = kids.iter().map(|c| c.byte_width).sum();
                let startup = kids.iter().map(|c| c.startup_cost).fold(0.0, f64::max);
                let total: f64 =
                    kids.iter().map(|c| c.total_cost).sum::<f64>() + rows * CPU_TUPLE_COST;
                let width = if kids.is_empty() {
                    8 * self.width as u32
                } else {
                    child_width
                };
                (startup, total, width)
            }
        };
        self.startup_cost = startup;
        self.total_cost = total.max(startup);
        self.byte_width = width;
    }

    /// A join's row width: the outer row's for a semi or anti join, both
    /// rows' otherwise.
    fn join_width(&self, outer: &PlanNode, inner: &PlanNode) -> u32 {
        let outer_only = match &self.kind {
            NodeKind::HashJoin { kind, .. }
            | NodeKind::NestLoop { kind, .. }
            | NodeKind::MergeJoin { kind, .. } => kind.outer_only(),
            _ => false,
        };
        if outer_only {
            outer.byte_width
        } else {
            outer.byte_width + inner.byte_width
        }
    }

    /// Re-costs a table scan that reads `table_rows` rows on `pages`
    /// pages (0: unknown, taken from the rows and the width), with
    /// `avg_width` the row width by statistics if known.
    pub fn with_scan(mut self, table_rows: f64, pages: u32, avg_width: Option<u32>) -> PlanNode {
        if let Some(w) = avg_width {
            self.byte_width = w;
        }
        if let NodeKind::SeqScan { filter, .. } = &self.kind {
            let pages = if pages > 0 {
                pages as f64
            } else {
                (table_rows * (self.byte_width as f64 + TUPLE_OVERHEAD) / PAGE_BYTES)
                    .ceil()
                    .max(1.0)
            };
            let quals = filter.as_ref().map_or(0, |f| f.conjuncts().len());
            self.startup_cost = 0.0;
            self.total_cost = seq_scan_cost(pages, table_rows, quals);
        }
        self
    }
}

/// What reading `pages` pages holding `table_rows` rows costs, `quals`
/// conditions checked on each row (PostgreSQL's cost_seqscan).
fn seq_scan_cost(pages: f64, table_rows: f64, quals: usize) -> f64 {
    pages * SEQ_PAGE_COST + table_rows * (CPU_TUPLE_COST + CPU_OPERATOR_COST * quals as f64)
}

/// Whether reading a table of `pages` pages and `table_rows` rows whole,
/// with `quals` conditions on each row, costs less than one lookup
/// through a unique index: an index page and a heap page read at random,
/// and the descent's comparisons, as PostgreSQL's btcostestimate prices a
/// one-row probe. True for a table of a few pages, where PostgreSQL's
/// plan is a Seq Scan with a Filter (a 50-row table: 1.6 against 8.2).
pub fn whole_scan_beats_unique_lookup(pages: u32, table_rows: f64, quals: usize) -> bool {
    let seq = seq_scan_cost(pages as f64, table_rows, quals);
    let descent = (table_rows.max(2.0).log2().ceil() + 50.0) * CPU_OPERATOR_COST;
    let lookup = 2.0 * RANDOM_PAGE_COST + CPU_INDEX_TUPLE_COST + CPU_TUPLE_COST + descent;
    pages > 0 && seq < lookup
}

/// What evaluating condition `e` once costs, in operator calls (the
/// shape of PostgreSQL's cost_qual_eval): each operator and function
/// one (`bpchar_strip`, which PostgreSQL's bpchar operators do not
/// need, and IS NULL nothing), `x op ANY (array)` and `IN (…)` half the
/// elements, a subquery far more than any of them.
pub fn qual_cost(e: &crate::expr::Expr) -> f64 {
    use crate::expr::Expr;
    use crate::functions::Func;
    let mut cost = 0.0;
    e.walk(&mut |x| {
        cost += match x {
            Expr::Binary { op, .. } => {
                if matches!(op, crate::expr::BinOp::And | crate::expr::BinOp::Or) {
                    0.0
                } else {
                    1.0
                }
            }
            Expr::Func {
                func: Func::BpcharStrip,
                ..
            } => 0.0,
            Expr::Func {
                func: Func::ArrayCmp { .. },
                args,
            } => match args.get(1) {
                Some(Expr::Const(pgtypes::value::Value::Array(a))) => {
                    (a.items.len() as f64 * 0.5).max(1.0)
                }
                _ => 50.0,
            },
            Expr::InList { list, .. } => (list.len() as f64 * 0.5).max(1.0),
            Expr::Between { .. } => 2.0,
            Expr::Unary { .. } | Expr::Func { .. } | Expr::Like { .. } | Expr::Cast { .. } => 1.0,
            Expr::SubPlan(_) => 1000.0,
            _ => 0.0,
        }
    });
    cost
}

/// PostgreSQL's order_qual_clauses: conditions cheapest first (a stable
/// sort, so equal costs keep their written order), so that cheap tests
/// reject most rows before a costly one runs.
pub fn order_quals(quals: &mut [crate::expr::Expr]) {
    quals.sort_by(|a, b| qual_cost(a).total_cmp(&qual_cost(b)));
}
