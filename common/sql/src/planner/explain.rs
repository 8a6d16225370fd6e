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

use std::collections::HashMap;
use std::fmt::Write as _;

use super::plannodes::{NodeKind, PlanNode};
use super::QueryPlan;

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
    plan.root.explain_node(0, opts, stats, &mut out);
    for (i, sp) in plan.shared.subplans.iter().enumerate() {
        out.push(format!("  SubPlan {}", i + 1));
        sp.plan.explain_node(2, opts, stats, &mut out);
    }
    for c in &plan.shared.ctes {
        out.push(format!("  CTE {}", c.name));
        c.plan.explain_node(2, opts, stats, &mut out);
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
        NodeKind::HashJoin { kind, .. } => join(&mut f, "Hash Join", kind.label()),
        NodeKind::NestLoop { kind, .. } => join(&mut f, "Nested Loop", kind.label()),
        NodeKind::Agg { grouping, .. } => {
            f.push(("Node Type", json_str("Aggregate")));
            let strategy = if grouping.group_by.is_empty() {
                "Plain"
            } else {
                "Hashed"
            };
            f.push(("Strategy", json_str(strategy)));
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
    f
}

fn json_node(
    node: &PlanNode,
    opts: &ExplainOptions,
    stats: Option<&StatsMap>,
    extra: &[(&'static str, String)],
    more: &[(String, &PlanNode)],
    indent: usize,
    out: &mut String,
) {
    let node = node.shown();
    let pad = " ".repeat(indent + 2);
    let mut fields: Vec<(&str, String)> = extra.to_vec();
    fields.extend(node_fields(node));
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
    out.push_str("{\n");
    // Children, then (at the root) the subplans and CTEs, as PostgreSQL
    // nests them.
    let mut children: Vec<(Vec<(&'static str, String)>, &PlanNode)> = node
        .children()
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let rel = if i == 0 { "Outer" } else { "Inner" };
            (vec![("Parent Relationship", json_str(rel))], c)
        })
        .collect();
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
            p,
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
            json_node(c, opts, stats, extra, &[], indent + 4, out);
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
    let mut out = String::from("[\n  {\n    \"Plan\": ");
    json_node(&plan.root, opts, stats, &[], &more, 4, &mut out);
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
