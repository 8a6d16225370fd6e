//! Parallel aggregation: PostgreSQL's parallel query for the plans where
//! it pays most, an aggregation over a big table's scan.
//!
//! ```text
//!   Finalize HashAggregate          merges the participants' groups
//!     ->  Gather (Workers Planned: 2)
//!           ->  Partial HashAggregate        one per participant
//!                 ->  Hash Join              rows of the claimed pages only
//!                       ->  Parallel Seq Scan on lineitem
//!                       ->  Hash  ->  Seq Scan on part   (built once, probed by all)
//! ```
//!
//! An aggregation (hashed or plain, no grouping sets, every aggregate
//! combinable — count, sum, avg, min, max, bool_and/or — without DISTINCT
//! or ORDER BY) is split when its input costs at least [`MIN_SCAN_COST`]
//! and is driven by a sequential scan of at least [`MIN_DRIVING_COST`]
//! (pages to share out): the scan reached from the input
//! through filters, projections and the outer side of inner, left, semi
//! and anti joins, whose output rows each depend on one outer row and the
//! whole inner side, and of right and full hash joins, whose inner rows
//! no participant matched are emitted once, by the last participant to
//! finish probing (`executor::hashjoin::ParallelJoins`; TPC-H Q13). That scan becomes parallel: each participant (the
//! session and up to `max_parallel_workers_per_gather` threads) reads the
//! pages it claims from a shared counter, runs its own copy of the rest of
//! the input (the hash tables of the joins on the driving path built once
//! and shared, `ParallelJoins`: by the first participant, or — when the
//! hashed side is driven by a big scan of its own, `build_together` —
//! by all, each hashing the rows of its pages) and aggregates what it
//! read; the
//! Finalize node combines the groups (`executor::agg`, `Accumulator::
//! combine`). Every row of the input is aggregated by exactly one
//! participant, so the result is the serial one (float sums up to the
//! order of additions, as in PostgreSQL).
//!
//! What a participant runs must give every participant the same answer
//! apart from the scan's share: no subplans, CTE scans, LIMIT, set-
//! returning or user functions, no executor parameter set outside it, and
//! every function PostgreSQL marks parallel safe (`proparallel = 's'`).
//! Few groups only ([`MAX_GROUPS`]): past it the Finalize step's merge,
//! serial, costs about what the participants saved (groups past
//! `work_mem` are written and merged partition by partition, memory
//! bounded either way: `executor::agg`).
//!
//! Invariants: a `Gather` sits only between a `Final` and a `Partial`
//! aggregation sharing one `Grouping`; below it one `parallel` SeqScan is
//! on the driving path, and any other is the driving scan of a hash
//! join's hashed side on that path, built together.

use super::plannodes::{AggSplit, JoinKind, NodeKind, PlanNode};
use crate::expr::Expr;
use crate::functions::{Accumulator, Func};

/// Threads a Gather plans for besides the session's own (PostgreSQL's
/// default `max_parallel_workers_per_gather`).
pub const PARALLEL_WORKERS: usize = 2;

/// The cost of the least work below an aggregation worth splitting: about
/// 4,000 pages or 160,000 rows (starting threads and merging groups costs
/// well under a millisecond; this several milliseconds).
pub const MIN_SCAN_COST: f64 = 4000.0;

/// The smallest driving scan split: its pages are what the participants
/// share, so a few hundred of them (a small table driving index lookups,
/// TPC-H Q3's customers, shares as well as a big one).
pub const MIN_DRIVING_COST: f64 = 300.0;

/// The most groups an aggregation may expect to be split (TPC-H Q13's
/// 150,000 customers at scale 1): each participant's groups go through
/// the serial Finalize step, so with many more the split saves little.
pub const MAX_GROUPS: f64 = 200_000.0;

/// Splits the aggregations of `node` that qualify (see the module doc):
/// the main tree, an uncorrelated subplan's or a materialized CTE's. Not
/// below a parameterized nested loop's inner side (it is run once per
/// outer row with parameters set outside it); a correlated subplan's
/// tree reads parameters set outside it, which `expr_safe` refuses.
pub fn parallelize(node: &mut PlanNode) -> bool {
    if try_split(node) {
        return true;
    }
    let changed = match &mut node.kind {
        NodeKind::NestLoop {
            outer,
            inner,
            params,
            ..
        } => parallelize(outer) | (params.is_empty() && parallelize(inner)),
        NodeKind::HashJoin { outer, inner, .. } | NodeKind::MergeJoin { outer, inner, .. } => {
            parallelize(outer) | parallelize(inner)
        }
        NodeKind::Filter { input, .. }
        | NodeKind::Project { input, .. }
        | NodeKind::Sort { input, .. }
        | NodeKind::Limit { input, .. }
        | NodeKind::Unique { input, .. }
        | NodeKind::HashDistinct { input, .. }
        | NodeKind::WindowAgg { input, .. }
        | NodeKind::Agg { input, .. } => parallelize(input),
        _ => false,
    };
    if changed {
        // Costs above a split aggregation follow its new ones.
        node.estimate();
    }
    changed
}

/// Splits `node` if it is an aggregation that qualifies.
fn try_split(node: &mut PlanNode) -> bool {
    if !qualifies(node) {
        return false;
    }
    let (w, rows) = (node.width, node.rows);
    let bw = node.byte_width;
    let kind = std::mem::replace(&mut node.kind, NodeKind::Result);
    let NodeKind::Agg {
        mut input,
        grouping,
        ..
    } = kind
    else {
        node.kind = kind;
        return false;
    };
    let participants = (PARALLEL_WORKERS + 1) as f64;
    share(&mut input, participants);
    build_together(&mut input, participants);
    // Final ← Gather ← Partial ← input: one Grouping for both halves.
    let part_rows = (rows * participants).max(1.0);
    let mut partial = PlanNode::new(
        NodeKind::Agg {
            input,
            grouping: grouping.clone(),
            sorted: false,
            split: AggSplit::Partial,
        },
        w,
        rows,
    );
    partial.byte_width = bw;
    let mut gather = PlanNode::new(
        NodeKind::Gather {
            input: Box::new(partial),
            workers: PARALLEL_WORKERS,
        },
        w,
        part_rows,
    );
    gather.startup_cost = gather_cost(&gather, true);
    gather.total_cost = gather_cost(&gather, false);
    gather.byte_width = bw;
    let gather_total = gather.total_cost;
    node.kind = NodeKind::Agg {
        input: Box::new(gather),
        grouping,
        sorted: false,
        split: AggSplit::Final,
    };
    // The groups are merged before the first one is emitted.
    node.startup_cost = gather_total + 0.0025 * part_rows;
    node.total_cost = node.startup_cost + 0.01 * rows;
    true
}

/// Turns an inner hash join on the driving path around when its hashed
/// side is driven by a much bigger scan than its probing side (TPC-H
/// Q14: lineitem's month hashed, every part probing): that scan becomes
/// the one the participants share, each hashing the small side whole. A
/// projection on top restores the row.
fn drive_from_bigger(n: &mut PlanNode) {
    let cost = |n: &mut PlanNode| driving_scan(n).map_or(0.0, |s| s.total_cost);
    match &mut n.kind {
        NodeKind::Filter { input, .. } | NodeKind::Project { input, .. } => {
            return drive_from_bigger(input)
        }
        NodeKind::NestLoop { outer, kind, .. } if kind_keeps_rows(*kind) => {
            return drive_from_bigger(outer)
        }
        NodeKind::HashJoin {
            outer,
            inner,
            kind: JoinKind::Inner,
            ..
        } => {
            let (o, i) = (cost(outer), cost(inner));
            // Hashing the probing side instead only pays if it fits the
            // participants' shared budget (TPC-H Q10's 150,000 customers
            // do not; probing with them, the lineitems of a quarter's
            // orders are hashed).
            let refit = fits_shared(outer) || !fits_shared(inner);
            if i < MIN_SCAN_COST || i < 4.0 * o || !refit {
                return drive_from_bigger(outer);
            }
        }
        NodeKind::HashJoin { outer, kind, .. } if hash_kind_keeps_rows(*kind) => {
            return drive_from_bigger(outer)
        }
        _ => return,
    }
    let (rows, bw) = (n.rows, n.byte_width);
    let kind = std::mem::replace(&mut n.kind, NodeKind::Result);
    let NodeKind::HashJoin {
        outer,
        inner,
        kind,
        outer_keys,
        inner_keys,
        qual,
        ..
    } = kind
    else {
        n.kind = kind;
        return;
    };
    *n = super::fromclause::swapped_hash_join(
        *outer, *inner, kind, outer_keys, inner_keys, qual, rows,
    );
    n.byte_width = bw;
    if let NodeKind::Project { input, .. } = &mut n.kind {
        input.byte_width = bw;
    }
}

/// The hash memory the participants of a split aggregation share (the
/// planned `work_mem` × `hash_mem_multiplier` 2, for each).
const SHARED_HASH_MEM: f64 = 2.0 * super::select::PLANNED_WORK_MEM * (PARALLEL_WORKERS + 1) as f64;

/// `n`'s rows are estimated to fit a hash table the participants share:
/// a held row takes about twice its data's width (each value a 32-byte
/// slot) and a vector's header.
fn fits_shared(n: &PlanNode) -> bool {
    n.rows * (2.0 * n.byte_width as f64 + 48.0) <= SHARED_HASH_MEM
}

fn kind_keeps_rows(k: JoinKind) -> bool {
    matches!(
        k,
        JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
    )
}

/// [`kind_keeps_rows`], and right and full joins: a hash join's
/// unmatched inner rows are emitted once, by the last participant to
/// finish its outer rows (`executor::hashjoin::ParallelJoins`).
fn hash_kind_keeps_rows(k: JoinKind) -> bool {
    kind_keeps_rows(k) || matches!(k, JoinKind::Right | JoinKind::Full)
}

/// `node` is an aggregation the module doc says may be split.
fn qualifies(node: &mut PlanNode) -> bool {
    let rows = node.rows;
    let mut exprs_safe = true;
    node.for_each_own_expr(&mut |e| exprs_safe &= expr_safe(e, &[]));
    let NodeKind::Agg {
        input,
        grouping,
        sorted: false,
        split: AggSplit::Simple,
    } = &mut node.kind
    else {
        return false;
    };
    let combinable = grouping.sets.is_none()
        && grouping
            .aggs
            .iter()
            .all(|a| Accumulator::combinable(a.func) && !a.distinct && a.order_by.is_empty());
    if !combinable || !exprs_safe || rows > MAX_GROUPS {
        return false;
    }
    let mut slots = Vec::new();
    nestloop_slots(input, &mut slots);
    if !subtree_safe(input, &slots) {
        return false;
    }
    drive_from_bigger(input);
    let work = input.total_cost;
    driving_scan(input).is_some_and(|s| s.total_cost >= MIN_DRIVING_COST && work >= MIN_SCAN_COST)
}

/// Gather's cost: its input's, plus starting the workers and passing
/// their groups (PostgreSQL's parallel_setup_cost 1000 and
/// parallel_tuple_cost 0.1).
fn gather_cost(g: &PlanNode, startup: bool) -> f64 {
    let c = g.children();
    let Some(input) = c.first() else { return 0.0 };
    let base = if startup {
        input.startup_cost
    } else {
        input.total_cost
    };
    base + 1000.0 + 0.1 * g.rows
}

/// Marks the driving scan of `n` parallel and makes the estimates on the
/// way to it one participant's: a share of the rows, at a share of the
/// cost (PostgreSQL divides by its parallel divisor likewise).
fn share(n: &mut PlanNode, participants: f64) {
    if let NodeKind::SeqScan { parallel, .. } = &mut n.kind {
        *parallel = true;
        n.rows = (n.rows / participants).max(1.0);
        n.startup_cost /= participants;
        n.total_cost /= participants;
        return;
    }
    match &mut n.kind {
        NodeKind::Filter { input, .. } | NodeKind::Project { input, .. } => {
            share(input, participants)
        }
        NodeKind::HashJoin { outer, .. } | NodeKind::NestLoop { outer, .. } => {
            share(outer, participants)
        }
        _ => return,
    }
    n.rows = (n.rows / participants).max(1.0);
    n.estimate();
}

/// Makes the hash joins on `n`'s driving path whose hashed side is
/// itself driven by a big enough scan build their table together
/// (PostgreSQL's Parallel Hash): that scan is shared out too, each
/// participant hashes the rows of its pages, and the parts become the
/// one table all probe (`executor::hashjoin`, `Build::Parts`). Only for a
/// hashed side estimated to fit the shared budget, and without a right
/// or full hash join inside it (whose unmatched rows are emitted by one
/// participant, which a table built again by each, should the parts not
/// fit, could not use). TPC-H Q10: the quarter's orders and their
/// lineitems, hashed by three participants instead of by one while two
/// wait.
fn build_together(n: &mut PlanNode, participants: f64) {
    match &mut n.kind {
        NodeKind::Filter { input, .. } | NodeKind::Project { input, .. } => {
            build_together(input, participants)
        }
        NodeKind::NestLoop { outer, kind, .. } if kind_keeps_rows(*kind) => {
            build_together(outer, participants)
        }
        NodeKind::HashJoin {
            outer, inner, kind, ..
        } if hash_kind_keeps_rows(*kind) => {
            build_together(outer, participants);
            let big = driving_scan(inner).is_some_and(|s| s.total_cost >= MIN_DRIVING_COST);
            if big && fits_shared(inner) && !keeps_unmatched_inside(inner) {
                share(inner, participants);
            }
        }
        _ => return,
    }
    n.estimate();
}

/// `n` holds a right or full hash join.
fn keeps_unmatched_inside(n: &PlanNode) -> bool {
    matches!(
        n.kind,
        NodeKind::HashJoin {
            kind: JoinKind::Right | JoinKind::Full,
            ..
        }
    ) || n.children().into_iter().any(keeps_unmatched_inside)
}

/// The scan whose rows drive `n`: through filters, projections and the
/// outer side of joins whose output for an outer row depends only on it
/// and the whole inner side.
fn driving_scan(n: &mut PlanNode) -> Option<&mut PlanNode> {
    if matches!(n.kind, NodeKind::SeqScan { .. }) {
        return Some(n);
    }
    match &mut n.kind {
        NodeKind::Filter { input, .. } | NodeKind::Project { input, .. } => driving_scan(input),
        NodeKind::HashJoin { outer, kind, .. } if hash_kind_keeps_rows(*kind) => {
            driving_scan(outer)
        }
        NodeKind::NestLoop { outer, kind, .. } if kind_keeps_rows(*kind) => driving_scan(outer),
        _ => None,
    }
}

/// The executor parameter slots nested loops inside `n` set.
fn nestloop_slots(n: &PlanNode, out: &mut Vec<usize>) {
    if let NodeKind::NestLoop { params, .. } = &n.kind {
        out.extend(params.iter().map(|(s, _)| *s));
    }
    for c in n.children() {
        nestloop_slots(c, out);
    }
}

/// Every node of `n` may run in several participants at once with the
/// same answer (see the module doc).
fn subtree_safe(n: &PlanNode, slots: &[usize]) -> bool {
    let kind_ok = match &n.kind {
        NodeKind::SeqScan { parallel, .. } => !parallel,
        NodeKind::IndexScan { .. }
        | NodeKind::Filter { .. }
        | NodeKind::Project { .. }
        | NodeKind::HashJoin { .. }
        | NodeKind::MergeJoin { .. }
        | NodeKind::NestLoop { .. }
        | NodeKind::Result
        | NodeKind::Values { .. }
        | NodeKind::Sort { .. }
        | NodeKind::Unique { .. }
        | NodeKind::HashDistinct { .. } => true,
        NodeKind::Agg {
            split: AggSplit::Simple,
            ..
        } => true,
        _ => false,
    };
    if !kind_ok {
        return false;
    }
    let mut safe = true;
    n.for_each_own_expr(&mut |e| safe &= expr_safe(e, slots));
    safe && n.children().into_iter().all(|c| subtree_safe(c, slots))
}

/// `e` gives the same value in a worker as in the session: no subplan,
/// no executor parameter but those of `slots`, no user function, only
/// built-in functions PostgreSQL marks parallel safe, no cast to a
/// catalog-reading type.
fn expr_safe(e: &Expr, slots: &[usize]) -> bool {
    let mut safe = true;
    e.walk(&mut |x| match x {
        Expr::SubPlan(_) | Expr::WindowFunc(_) | Expr::GroupingFunc(_) => safe = false,
        Expr::ExecParam(s) if !slots.contains(s) => safe = false,
        Expr::Func { func, .. } if !func_parallel_safe(*func) => safe = false,
        Expr::Cast {
            to: pgtypes::sqltype::SqlType::Reg(_),
            ..
        } => safe = false,
        _ => {}
    });
    safe
}

/// PostgreSQL's `proparallel` of every built-in of the function's name is
/// `s`; hotpair's own helpers that are pure are listed.
fn func_parallel_safe(f: Func) -> bool {
    if matches!(f, Func::User(_)) {
        return false;
    }
    if matches!(f, Func::BpcharStrip) {
        return true;
    }
    let name = super::deparse::func_name(f);
    let name = name.trim_matches('"');
    let rows = crate::pgcatalog::proc_data::PROC_ROWS;
    let mut any = false;
    for r in rows {
        if r.get(1).copied().flatten() == Some(name) {
            any = true;
            if r.get(15).copied().flatten() != Some("s") {
                return false;
            }
        }
    }
    any
}
