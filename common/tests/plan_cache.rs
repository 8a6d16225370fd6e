//! Cached plans follow a small table's growth.
//!
//! A unique key pinned on a table of a few pages is read by a Seq Scan
//! with a Filter (PostgreSQL's costs choose the same: a 50-row table
//! costs 1.6 to read against 8.2 for the index), and such a plan is kept
//! only while the table stays that small: after the table grows, the
//! same prepared statement runs through the primary key index. The
//! failure this guards against is a plan made for a one-page table
//! scanning it whole for ever after it grew.

#[allow(dead_code)] // parse_expected is the golden tests'
mod support;

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::value::Value;
use sql::planner::Plan;
use sql::session::{PreparedStatement, Session};

fn run(s: &mut Session, sql: &str) -> Vec<String> {
    support::run(s, sql, |e| format!("ERROR {}: {}", e.code, e.message))
}

/// Runs `st` with `id` and returns its rows and its plan's lines.
fn execute(s: &mut Session, st: &PreparedStatement, id: i32) -> (Vec<String>, String) {
    let mut sink = support::Sink::default();
    s.execute(st, &[Value::Int4(id)], &mut sink)
        .expect("execute");
    let plan = match st.plan().as_deref().map(|p| &p.plan) {
        Some(Plan::Query(q)) => q.explain_with(false).join("\n"),
        _ => panic!("a query plan"),
    };
    (sink.rows, plan)
}

#[test]
fn a_small_tables_plan_is_made_again_after_it_grows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "4MB").expect("config");
    let node = Node::open(cfg, Role::Primary).expect("node");
    let mut s = Session::new(node.clone(), &[("user".into(), "u".into())]).expect("session");
    for sql in [
        "CREATE TABLE small (id int PRIMARY KEY, w text)",
        "INSERT INTO small SELECT g, 'w' || g FROM generate_series(1, 50) g",
        "ANALYZE small",
    ] {
        assert!(
            !run(&mut s, sql).iter().any(|l| l.starts_with("ERROR")),
            "{sql}"
        );
    }
    let st = s
        .prepare("SELECT w FROM small WHERE id = $1", &[23])
        .expect("prepare")
        .pop()
        .expect("one statement");
    let (rows, plan) = execute(&mut s, &st, 3);
    assert_eq!(rows, ["w3"]);
    assert!(plan.contains("Seq Scan on small"), "{plan}");
    let (rows, plan) = execute(&mut s, &st, 7);
    assert_eq!(rows, ["w7"]);
    assert!(
        plan.contains("Seq Scan on small"),
        "kept while small: {plan}"
    );

    // No ANALYZE: the table's pages tell.
    run(
        &mut s,
        "INSERT INTO small SELECT g, 'w' || g FROM generate_series(51, 20000) g",
    );
    let (rows, plan) = execute(&mut s, &st, 19999);
    assert_eq!(rows, ["w19999"]);
    assert!(
        plan.contains("Index Scan using small_pkey on small"),
        "{plan}"
    );

    // A simple-mode text of the same shape, and EXPLAIN, plan anew too.
    assert_eq!(run(&mut s, "SELECT w FROM small WHERE id = 4"), ["w4"]);
    let explain = run(
        &mut s,
        "EXPLAIN (COSTS OFF) SELECT w FROM small WHERE id = 4",
    )
    .join("\n");
    assert!(explain.contains("Index Scan using small_pkey"), "{explain}");
}
