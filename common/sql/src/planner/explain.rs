//! EXPLAIN's output: the plan tree as PostgreSQL's text or JSON layout,
//! with estimated rows, and with what EXPLAIN ANALYZE measured.
//!
//! The executor measures (`executor::execnodes::Instrumented`, which wraps
//! every node while an EXPLAIN ANALYZE runs) into a [`StatsMap`] keyed by
//! the plan node's address; this module only reads it. A node with no
//! entry never started: `(never executed)`, as in PostgreSQL. Times are
//! per loop, in milliseconds, rows per loop rounded, as PostgreSQL prints
//! them. Estimates are `(cost=S..T rows=N width=W)` in text and `"Startup
//! Cost"`, `"Total Cost"`, `"Plan Rows"`, `"Plan Width"` in JSON, as
//! PostgreSQL prints them, from `planner::costsize` and
//! `planner::selfuncs`; COSTS OFF leaves them out.
//!
//! Under each node come its detail lines ([`details`]): the conditions
//! and keys PostgreSQL prints there (`Hash Cond`, `Index Cond`, `Join
//! Filter`, `Filter`, `Sort Key`, `Group Key`), their expressions printed
//! by `super::deparse`, and with ANALYZE the rows each condition removed
//! (the executor counts them in `Ectx::removed`, the instrumentation
//! wrapper assigns them to the node). One list serves both formats: text
//! prints `Label: value` lines, JSON the same labels as keys. A hash join
//! shows PostgreSQL's `Hash` node above its inner input, carrying that
//! input's measurements.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::deparse::{order_suffix, Deparser};
use super::plannodes::{NodeKind, PlanNode};
use super::QueryPlan;
use crate::expr::{BinOp, Expr};

/// What one plan node did during an EXPLAIN ANALYZE.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStats {
    /// Times the node was started (a nested loop's inner side: once per
    /// outer row).
    pub loops: u64,
    /// Rows it returned, over all loops.
    pub rows: u64,
    /// Milliseconds to its first row (or to its end, if none), summed
    /// over loops.
    pub startup_ms: f64,
    /// Milliseconds inside the node, summed over loops.
    pub total_ms: f64,
    /// Rows its filter rejected, and rows its join condition rejected
    /// (a join's other conditions), over all loops.
    pub removed: [u64; 2],
}

/// Measurements by plan node address (`PlanNode as *const _ as usize`).
pub type StatsMap = HashMap<usize, NodeStats>;

/// The key of a plan node in a [`StatsMap`].
pub fn node_key(node: &PlanNode) -> usize {
    node as *const PlanNode as usize
}

/// EXPLAIN's options.
#[derive(Clone, Copy, Debug)]
pub struct ExplainOptions {
    /// Run the query and show what it did (ANALYZE).
    pub analyze: bool,
    /// Estimated rows (COSTS, on by default).
    pub costs: bool,
    /// Times with ANALYZE (TIMING, on by default).
    pub timing: bool,
    /// Planning and execution time with ANALYZE (SUMMARY).
    pub summary: bool,
    /// FORMAT JSON (else TEXT).
    pub json: bool,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            analyze: false,
            costs: true,
            timing: true,
            summary: true,
            json: false,
        }
    }
}

/// What a measured run adds to the plan: its measurements and times.
pub struct Measured<'a> {
    /// Per node.
    pub stats: &'a StatsMap,
    /// Planning time, ms.
    pub planning_ms: f64,
    /// Execution time, ms.
    pub execution_ms: f64,
}

/// EXPLAIN's text lines for `plan`.
pub fn text_lines(
    plan: &QueryPlan,
    opts: &ExplainOptions,
    m: Option<&Measured<'_>>,
) -> Vec<String> {
    let mut out = Vec::new();
    let stats = m.map(|m| m.stats);
    let dp = Deparser::new(&plan.root, Some(&plan.shared));
    plan.root.explain_node(0, opts, stats, &dp, &mut out);
    for (i, sp) in plan.shared.subplans.iter().enumerate() {
        out.push(format!("  SubPlan {}", i + 1));
        sp.plan.explain_node(2, opts, stats, &dp, &mut out);
    }
    for c in &plan.shared.ctes {
        out.push(format!("  CTE {}", c.name));
        c.plan.explain_node(2, opts, stats, &dp, &mut out);
    }
    if let Some(m) = m.filter(|_| opts.summary) {
        out.push(format!("Planning Time: {:.3} ms", m.planning_ms));
        out.push(format!("Execution Time: {:.3} ms", m.execution_ms));
    }
    out
}

/// The measurement part of a node's text line: ` (actual time=a..b
/// rows=N loops=L)`, ` (actual rows=N loops=L)` or ` (never executed)`.
pub fn actual_text(node: &PlanNode, opts: &ExplainOptions, stats: &StatsMap) -> String {
    match stats.get(&node_key(node)).filter(|s| s.loops > 0) {
        None => " (never executed)".into(),
        Some(s) => {
            let loops = s.loops as f64;
            let rows = (s.rows as f64 / loops).round();
            if opts.timing {
                format!(
                    " (actual time={:.3}..{:.3} rows={rows} loops={})",
                    s.startup_ms / loops,
                    s.total_ms / loops,
                    s.loops
                )
            } else {
                format!(" (actual rows={rows} loops={})", s.loops)
            }
        }
    }
}

/// The value of one of a node's detail lines.
#[derive(Clone, Debug, PartialEq)]
pub enum Detail {
    /// An expression (`Filter: (amount > 10)`).
    Text(String),
    /// A list (`Sort Key: a.owner, (count(o.id)) DESC`; a JSON array).
    List(Vec<String>),
    /// A count per loop (`Rows Removed by Filter: 3`); text leaves out
    /// a zero, as PostgreSQL does.
    Count(f64),
}

/// The detail lines PostgreSQL prints under a node, in its order: the
/// conditions (`Hash Cond`, `Index Cond`, `Join Filter`, `Filter`), the
/// keys (`Sort Key`, `Group Key`), and with ANALYZE the rows each
/// condition removed.
pub fn details(
    node: &PlanNode,
    dp: &Deparser<'_>,
    stats: Option<&StatsMap>,
) -> Vec<(&'static str, Detail)> {
    let mut out = Vec::new();
    let removed = |which: usize| {
        stats.map(|st| match st.get(&node_key(node)).filter(|s| s.loops > 0) {
            Some(s) => Detail::Count((s.removed[which] as f64 / s.loops as f64).round()),
            None => Detail::Count(0.0),
        })
    };
    let qual = |out: &mut Vec<(&'static str, Detail)>,
                label: &'static str,
                which: usize,
                conj: Vec<&Expr>,
                cols: &[super::deparse::Col],
                prefix: bool| {
        if conj.is_empty() {
            return;
        }
        out.push((label, Detail::Text(quals_text(dp, &conj, cols, prefix))));
        if let Some(r) = removed(which) {
            let label = if which == 0 {
                "Rows Removed by Filter"
            } else {
                "Rows Removed by Join Filter"
            };
            out.push((label, r));
        }
    };
    match &node.kind {
        NodeKind::SeqScan {
            filter: Some(f), ..
        } => {
            let cols = dp.columns(node);
            qual(&mut out, "Filter", 0, f.conjuncts(), &cols, false);
        }
        NodeKind::IndexScan {
            table,
            index,
            key,
            filter,
            ..
        } => {
            let cols = dp.columns(node);
            let keys: Vec<String> = key.iter().map(|k| dp.expr(k, &cols, false)).collect();
            if let Some(cond) = crate::indexcmds::index_cond_text(table, index, &keys) {
                out.push(("Index Cond", Detail::Text(cond)));
                if stats.is_some() {
                    out.push(("Rows Removed by Index Recheck", Detail::Count(0.0)));
                }
            }
            // A partial index's predicate holds for every row it has.
            let bound = crate::indexcmds::bound(table, index);
            let pred: Vec<&Expr> = bound
                .as_ref()
                .and_then(|b| b.as_any().downcast_ref::<crate::indexcmds::BoundIndex>())
                .map(|b| b.predicate_conjuncts())
                .unwrap_or_default();
            let rest: Vec<&Expr> = filter
                .iter()
                .flat_map(|f| f.conjuncts())
                .filter(|c| !index_qual(c, key) && !pred.contains(c))
                .collect();
            qual(&mut out, "Filter", 0, rest, &cols, false);
        }
        NodeKind::Filter { input, pred } => {
            let cols = dp.columns(input);
            qual(&mut out, "Filter", 0, pred.conjuncts(), &cols, dp.prefix);
        }
        NodeKind::NestLoop {
            outer,
            inner,
            qual: q,
            ..
        } => {
            let mut cols = dp.columns(outer);
            cols.extend(dp.columns(inner));
            let conj = q.iter().flat_map(|q| q.conjuncts()).collect();
            qual(&mut out, "Join Filter", 1, conj, &cols, dp.prefix);
        }
        NodeKind::HashJoin {
            outer,
            inner,
            outer_keys,
            inner_keys,
            qual: q,
            ..
        }
        | NodeKind::MergeJoin {
            outer,
            inner,
            outer_keys,
            inner_keys,
            qual: q,
            ..
        } => {
            let ocols = dp.columns(outer);
            let icols = dp.columns(inner);
            let conds: Vec<String> = outer_keys
                .iter()
                .zip(inner_keys)
                .map(|(o, i)| {
                    format!(
                        "({} = {})",
                        dp.expr(o, &ocols, dp.prefix),
                        dp.expr(i, &icols, dp.prefix)
                    )
                })
                .collect();
            let cond = match conds.len() {
                1 => conds.concat(),
                _ => format!("({})", conds.join(" AND ")),
            };
            let name = match node.kind {
                NodeKind::MergeJoin { .. } => "Merge Cond",
                _ => "Hash Cond",
            };
            out.push((name, Detail::Text(cond)));
            let mut cols = ocols;
            cols.extend(icols);
            let conj = q.iter().flat_map(|q| q.conjuncts()).collect();
            qual(&mut out, "Join Filter", 1, conj, &cols, dp.prefix);
        }
        NodeKind::Gather { workers, .. } => {
            out.push(("Workers Planned", Detail::Count(*workers as f64)));
            // EXPLAIN ANALYZE measures the session's thread alone.
            if stats.is_some() {
                out.push(("Workers Launched", Detail::Text("0".into())));
            }
        }
        NodeKind::Agg { grouping, .. }
            if !grouping.group_by.is_empty() && grouping.sets.is_none() =>
        {
            let cols = node.agg_input().map_or_else(Vec::new, |i| dp.columns(i));
            let keys = grouping
                .group_by
                .iter()
                .map(|k| key_text(dp, k, &cols))
                .collect();
            out.push(("Group Key", Detail::List(keys)));
        }
        NodeKind::HashDistinct { input, columns } => {
            let cols = dp.columns(input);
            let keys = columns
                .iter()
                .map(|c| key_text(dp, &Expr::Column(*c), &cols))
                .collect();
            out.push(("Group Key", Detail::List(keys)));
        }
        NodeKind::Sort { input, keys } => {
            let cols = dp.columns(input);
            let keys = keys
                .iter()
                .map(|k| {
                    // The sort's own column: a computed one in
                    // parentheses, as a reference to its input's.
                    let c = match cols.get(k.column) {
                        Some(c) => c.text(dp.prefix),
                        None => "?column?".into(),
                    };
                    format!("{c}{}", order_suffix(k.desc, k.nulls_first))
                })
                .collect();
            out.push(("Sort Key", Detail::List(keys)));
        }
        _ => {}
    }
    out
}

/// A condition's conjuncts as one expression: `(a = 1)` alone,
/// `((a = 1) AND (b = 2))` together (PostgreSQL's implicit-AND list).
fn quals_text(
    dp: &Deparser<'_>,
    conj: &[&Expr],
    cols: &[super::deparse::Col],
    prefix: bool,
) -> String {
    // PostgreSQL's qual list has BETWEEN's two comparisons as two items.
    let mut parts = Vec::new();
    for c in conj {
        match c {
            Expr::Between {
                arg,
                low,
                high,
                negated: false,
            } => {
                let a = dp.expr(arg, cols, prefix);
                parts.push(format!("({a} >= {})", dp.expr(low, cols, prefix)));
                parts.push(format!("({a} <= {})", dp.expr(high, cols, prefix)));
            }
            c => parts.push(dp.expr(c, cols, prefix)),
        }
    }
    match parts.len() {
        1 => parts.concat(),
        _ => format!("({})", parts.join(" AND ")),
    }
}

/// A group key: PostgreSQL prints the input's expression itself (a
/// computed column without the parentheses of a reference).
fn key_text(dp: &Deparser<'_>, e: &Expr, cols: &[super::deparse::Col]) -> String {
    match e {
        Expr::Column(i) | Expr::Agg(i) => match cols.get(*i) {
            Some(c) => c.key_text(dp.prefix),
            None => "?column?".into(),
        },
        e => dp.expr(e, cols, dp.prefix),
    }
}

/// True if conjunct `c` of an index scan's filter is one its index
/// lookup answers (`col = key value`): PostgreSQL shows those as the
/// `Index Cond`, not again as the `Filter`.
fn index_qual(c: &Expr, key: &[Expr]) -> bool {
    let Expr::Binary {
        op: BinOp::Eq,
        left,
        right,
    } = c
    else {
        return false;
    };
    key.iter().any(|k| {
        (k == right.as_ref() && left.references_columns())
            || (k == left.as_ref() && right.references_columns())
    })
}

/// The detail lines in text: `label: value`, a zero count left out.
pub fn detail_lines(details: &[(&'static str, Detail)], pad: &str, out: &mut Vec<String>) {
    for (label, d) in details {
        match d {
            Detail::Text(t) => out.push(format!("{pad}{label}: {t}")),
            Detail::List(v) => out.push(format!("{pad}{label}: {}", v.join(", "))),
            Detail::Count(n) if *n > 0.0 => out.push(format!("{pad}{label}: {n:.0}")),
            Detail::Count(_) => {}
        }
    }
}

fn json_detail(d: &Detail) -> String {
    match d {
        Detail::Text(t) => json_str(t),
        Detail::List(v) => {
            let items: Vec<String> = v.iter().map(|s| json_str(s)).collect();
            format!("[{}]", items.join(", "))
        }
        Detail::Count(n) => format!("{n:.0}"),
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    pgtypes::json::escape_json(&mut o, s);
    o
}

/// PostgreSQL's JSON fields naming a node: its type and what it reads.
fn node_fields(node: &PlanNode) -> Vec<(&'static str, String)> {
    let label = node.label();
    let mut f = Vec::new();
    let (ty, rest) = match label.split_once(" on ") {
        Some((t, r)) => (t.to_string(), Some(r.to_string())),
        None => (label.clone(), None),
    };
    let join = |f: &mut Vec<(&'static str, String)>, name: &str, kind: &str| {
        f.push(("Node Type", json_str(name)));
        f.push(("Join Type", json_str(kind)));
    };
    match &node.kind {
        NodeKind::HashJoin { kind, inner, .. } => {
            f.push(("Node Type", json_str("Hash Join")));
            if inner.has_parallel_scan() {
                f.push(("Parallel Aware", "true".to_string()));
            }
            f.push(("Join Type", json_str(kind.label())));
        }
        NodeKind::MergeJoin { kind, .. } => join(&mut f, "Merge Join", kind.label()),
        NodeKind::NestLoop { kind, .. } => join(&mut f, "Nested Loop", kind.label()),
        NodeKind::Agg {
            grouping,
            sorted,
            split,
            ..
        } => {
            f.push(("Node Type", json_str("Aggregate")));
            let strategy = if grouping.group_by.is_empty() {
                "Plain"
            } else if *sorted {
                "Sorted"
            } else {
                "Hashed"
            };
            f.push(("Strategy", json_str(strategy)));
            let mode = match split {
                super::plannodes::AggSplit::Simple => "Simple",
                super::plannodes::AggSplit::Partial => "Partial",
                super::plannodes::AggSplit::Final => "Finalize",
            };
            f.push(("Partial Mode", json_str(mode)));
        }
        NodeKind::SeqScan {
            table,
            parallel: true,
            ..
        } => {
            f.push(("Node Type", json_str("Seq Scan")));
            f.push(("Parallel Aware", "true".to_string()));
            f.push(("Relation Name", json_str(&table.name)));
        }
        NodeKind::SeqScan { table, .. } => {
            f.push(("Node Type", json_str("Seq Scan")));
            f.push(("Relation Name", json_str(&table.name)));
        }
        NodeKind::HashDistinct { .. } => {
            f.push(("Node Type", json_str("Aggregate")));
            f.push(("Strategy", json_str("Hashed")));
        }
        NodeKind::SetOp { .. } => {
            f.push(("Node Type", json_str("SetOp")));
            f.push(("Strategy", json_str("Hashed")));
            let command = label.trim_start_matches("HashSetOp ");
            f.push(("Command", json_str(command)));
        }
        NodeKind::Filter { .. } => f.push(("Node Type", json_str("Result"))),
        NodeKind::IndexScan { table, index, .. } => {
            f.push(("Node Type", json_str("Index Scan")));
            f.push(("Index Name", json_str(&index.spec.name)));
            f.push(("Relation Name", json_str(&table.name)));
        }
        NodeKind::CteScan { .. } => {
            f.push(("Node Type", json_str(&ty)));
            if let Some(r) = rest {
                f.push(("CTE Name", json_str(&r)));
            }
        }
        _ if ty == "Function Scan" => {
            f.push(("Node Type", json_str(&ty)));
            if let Some(r) = rest {
                f.push(("Function Name", json_str(&r)));
            }
        }
        _ => {
            f.push(("Node Type", json_str(&ty)));
            if let Some(r) = rest {
                f.push(("Relation Name", json_str(&r)));
            }
        }
    }
    // The FROM item's name (alias or relation name) after what it reads.
    let names_relation = f
        .iter()
        .any(|(k, _)| matches!(*k, "Relation Name" | "Function Name" | "CTE Name"));
    if let Some(rte) = node.rte.as_ref().filter(|_| names_relation) {
        f.push(("Alias", json_str(&rte.alias)));
    }
    f
}

/// What a JSON node is: a plan node, or the Hash node PostgreSQL shows
/// between a hash join and its inner input (hotpair's hash join hashes
/// its inner input itself).
#[derive(Clone, Copy)]
enum JsonNode<'p> {
    Plan(&'p PlanNode),
    Hash(&'p PlanNode),
}

#[allow(clippy::too_many_arguments)]
fn json_node(
    jn: JsonNode<'_>,
    opts: &ExplainOptions,
    stats: Option<&StatsMap>,
    dp: &Deparser<'_>,
    extra: &[(&'static str, String)],
    more: &[(String, &PlanNode)],
    indent: usize,
    out: &mut String,
) {
    let (node, hash) = match jn {
        JsonNode::Plan(n) => (n.shown(), false),
        JsonNode::Hash(n) => (n.shown(), true),
    };
    let pad = " ".repeat(indent + 2);
    let mut fields: Vec<(&str, String)> = extra.to_vec();
    if hash {
        fields.push(("Node Type", json_str("Hash")));
        if node.has_parallel_scan() {
            fields.push(("Parallel Aware", "true".to_string()));
        }
    } else {
        fields.extend(node_fields(node));
    }
    if opts.costs {
        fields.push(("Startup Cost", format!("{:.2}", node.startup_cost)));
        fields.push(("Total Cost", format!("{:.2}", node.total_cost)));
        fields.push(("Plan Rows", format!("{}", node.rows.round().max(1.0))));
        fields.push(("Plan Width", node.byte_width.to_string()));
    }
    if let Some(stats) = stats {
        match stats.get(&node_key(node)).filter(|s| s.loops > 0) {
            Some(s) => {
                let loops = s.loops as f64;
                if opts.timing {
                    fields.push((
                        "Actual Startup Time",
                        format!("{:.3}", s.startup_ms / loops),
                    ));
                    fields.push(("Actual Total Time", format!("{:.3}", s.total_ms / loops)));
                }
                fields.push((
                    "Actual Rows",
                    format!("{}", (s.rows as f64 / loops).round()),
                ));
                fields.push(("Actual Loops", s.loops.to_string()));
            }
            None => {
                if opts.timing {
                    fields.push(("Actual Startup Time", "0.000".into()));
                    fields.push(("Actual Total Time", "0.000".into()));
                }
                fields.push(("Actual Rows", "0".into()));
                fields.push(("Actual Loops", "0".into()));
            }
        }
    }
    if !hash {
        for (k, d) in details(node, dp, stats) {
            fields.push((k, json_detail(&d)));
        }
    }
    out.push_str("{\n");
    // Children, then (at the root) the subplans and CTEs, as PostgreSQL
    // nests them.
    let is_hash_join = matches!(node.kind, NodeKind::HashJoin { .. });
    let mut children: Vec<(Vec<(&'static str, String)>, JsonNode<'_>)> = if hash {
        vec![(
            vec![("Parent Relationship", json_str("Outer"))],
            JsonNode::Plan(node),
        )]
    } else {
        node.children()
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let rel = if i == 0 { "Outer" } else { "Inner" };
                let c = if i == 1 && is_hash_join {
                    JsonNode::Hash(c)
                } else {
                    JsonNode::Plan(c)
                };
                (vec![("Parent Relationship", json_str(rel))], c)
            })
            .collect()
    };
    for (name, p) in more {
        let rel = if name.starts_with("CTE") {
            "InitPlan"
        } else {
            "SubPlan"
        };
        children.push((
            vec![
                ("Parent Relationship", json_str(rel)),
                ("Subplan Name", json_str(name)),
            ],
            JsonNode::Plan(p),
        ));
    }
    for (i, (k, v)) in fields.iter().enumerate() {
        let comma = if i + 1 < fields.len() || !children.is_empty() {
            ","
        } else {
            ""
        };
        let _ = writeln!(out, "{pad}\"{k}\": {v}{comma}");
    }
    if !children.is_empty() {
        let _ = writeln!(out, "{pad}\"Plans\": [");
        for (i, (extra, c)) in children.iter().enumerate() {
            out.push_str(&" ".repeat(indent + 4));
            json_node(*c, opts, stats, dp, extra, &[], indent + 4, out);
            out.push_str(if i + 1 < children.len() { ",\n" } else { "\n" });
        }
        let _ = writeln!(out, "{pad}]");
    }
    out.push_str(&" ".repeat(indent));
    out.push('}');
}

/// EXPLAIN (FORMAT JSON)'s one value for `plan`.
pub fn json_text(plan: &QueryPlan, opts: &ExplainOptions, m: Option<&Measured<'_>>) -> String {
    let stats = m.map(|m| m.stats);
    let more: Vec<(String, &PlanNode)> = plan
        .shared
        .ctes
        .iter()
        .map(|c| (format!("CTE {}", c.name), &c.plan))
        .chain(
            plan.shared
                .subplans
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("SubPlan {}", i + 1), &s.plan)),
        )
        .collect();
    let dp = Deparser::new(&plan.root, Some(&plan.shared));
    let mut out = String::from("[\n  {\n    \"Plan\": ");
    json_node(
        JsonNode::Plan(&plan.root),
        opts,
        stats,
        &dp,
        &[],
        &more,
        4,
        &mut out,
    );
    if let Some(m) = m.filter(|_| opts.summary) {
        let _ = write!(
            out,
            ",\n    \"Planning Time\": {:.3},\n    \"Execution Time\": {:.3}",
            m.planning_ms, m.execution_ms
        );
    }
    out.push_str("\n  }\n]");
    out
}
