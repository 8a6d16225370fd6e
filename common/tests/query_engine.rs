//! The query engine against PostgreSQL 15's own answers.
//!
//! `query_engine/queries.sql` holds one query a line over the tables of
//! `query_engine/setup.sql`: joins of every kind (with NULLs and empty
//! tables, ON against WHERE on outer joins, USING / NATURAL), subqueries
//! (scalar, correlated, IN / NOT IN with NULLs, EXISTS, ANY / ALL,
//! LATERAL, in FROM), CTEs (plain, materialized, recursive), set
//! operations with ALL, VALUES, DISTINCT ON, NULLS FIRST/LAST, FETCH
//! FIRST, GROUP BY forms, and the errors PostgreSQL raises for them.
//! `query_engine/expected.out` is what PostgreSQL 15 returned for each,
//! written by `query_engine/expected.sh` — never edited by hand. The
//! failure this guards against is any difference a client could see in
//! the rows or the SQLSTATE: a query without a top-level ORDER BY is
//! compared as a multiset, since its row order is not defined.

mod support;

use std::sync::Arc;

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use sql::session::Session;

/// Rows of a simple Query of one statement, or `ERROR <sqlstate>`.
fn run(s: &mut Session, sql: &str) -> Vec<String> {
    support::run(s, sql, |e| format!("ERROR {}", e.code))
}

fn open_node() -> (tempfile::TempDir, Arc<Node>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "4MB").unwrap();
    let node = Node::open(cfg, Role::Primary).unwrap();
    (dir, node)
}

/// (query, expected lines) from expected.out.
fn expected() -> Vec<(String, Vec<String>)> {
    support::parse_expected(include_str!("query_engine/expected.out"))
}

#[test]
fn queries_match_postgresql() {
    let (_dir, node) = open_node();
    let mut s = Session::new(node.clone(), &[("user".into(), "u".into())]).unwrap();

    // 1. The tables, as setup.sql makes them.
    for line in include_str!("query_engine/setup.sql").lines() {
        if line.trim().is_empty() {
            continue;
        }
        let r = run(&mut s, line);
        assert!(
            !r.first().is_some_and(|x| x.starts_with("ERROR")),
            "{line}: {r:?}"
        );
    }

    // 2. Every query: PostgreSQL's rows (or SQLSTATE).
    let cases = expected();
    assert!(cases.len() > 80, "expected.out has every query");
    let mut failures = Vec::new();
    for (q, want) in &cases {
        let mut got = run(&mut s, q);
        let mut want = want.clone();
        if !q.to_ascii_lowercase().contains("order by") {
            got.sort();
            want.sort();
        }
        if got != want {
            failures.push(format!("{q}\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} queries differ from PostgreSQL:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// EXPLAIN's lines for `sql`.
fn explain(s: &mut Session, sql: &str) -> Vec<String> {
    run(s, &format!("explain {sql}"))
}

#[track_caller]
fn has(lines: &[String], label: &str) -> bool {
    lines.iter().any(|l| l.contains(label))
}

#[test]
fn plan_shapes_and_cancellation() {
    let (_dir, node) = open_node();
    let mut s = Session::new(node.clone(), &[("user".into(), "u".into())]).unwrap();
    for line in include_str!("query_engine/setup.sql").lines() {
        if !line.trim().is_empty() {
            run(&mut s, line);
        }
    }

    // 1. pgbench -S: one index lookup, nothing else (its projection is
    //    the scan's own, as PostgreSQL shows it).
    let p = explain(&mut s, "select owner from accounts where id = 3");
    assert!(
        has(&p, "Index Scan using"),
        "point lookup uses the key: {p:?}"
    );
    assert_eq!(
        p.iter().filter(|l| l.contains("(cost=")).count(),
        1,
        "point lookup is one Index Scan: {p:?}"
    );

    // 2. Equi-joins hash; a small outer side looks the inner key up.
    let p = explain(
        &mut s,
        "select a.owner, count(o.id) from accounts a join orders o on o.account_id = a.id group by a.owner",
    );
    assert!(has(&p, "Hash Join"), "equi-join hashes: {p:?}");
    let p = explain(
        &mut s,
        "select o.amount from accounts a join orders o on o.account_id = a.id where a.id = 1",
    );
    assert!(
        has(&p, "Nested Loop") && has(&p, "Index Scan using orders_account"),
        "index nested loop: {p:?}"
    );
    let p = explain(&mut s, "select * from t1 full join t2 using (a)");
    assert!(has(&p, "Hash Full Join"), "full join hashes: {p:?}");

    // 3. Correlated EXISTS / NOT EXISTS are semi / anti joins, not subplans.
    let p = explain(
        &mut s,
        "select id from accounts a where exists (select 1 from orders o where o.account_id = a.id)",
    );
    // A hash semi join, or (PostgreSQL's JOIN_UNIQUE_INNER) a hash join
    // over the distinct keys of orders: its costs choose.
    let unique_inner = has(&p, "Hash Join") && has(&p, "HashAggregate");
    assert!(
        (has(&p, "Hash Semi Join") || unique_inner) && !has(&p, "SubPlan"),
        "semi join: {p:?}"
    );
    let p = explain(
        &mut s,
        "select id from accounts a where not exists (select 1 from orders o where o.account_id = a.id)",
    );
    assert!(has(&p, "Hash Anti Join"), "anti join: {p:?}");

    // 4. WHERE on the nullable side of a LEFT join stays above the join;
    //    an ON condition on it filters the inner input.
    let p = explain(
        &mut s,
        "select * from t1 left join t2 on t1.a = t2.a where t2.c = 'q'",
    );
    assert!(p[0].contains("filter"), "WHERE above the outer join: {p:?}");

    // 5. Recursive CTEs, set operations.
    let p = explain(
        &mut s,
        "with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r",
    );
    assert!(
        has(&p, "Recursive Union") && has(&p, "WorkTable Scan"),
        "{p:?}"
    );
    let p = explain(&mut s, "select a from t1 intersect all select a from t2");
    assert!(has(&p, "HashSetOp Intersect All"), "{p:?}");

    // 6. Column names: a scalar subquery is named after its column, a
    //    USING column appears once.
    let names = |s: &mut Session, sql: &str| -> Vec<String> {
        let st = s.prepare(sql, &[]).unwrap();
        st[0]
            .columns()
            .unwrap()
            .iter()
            .map(|f| f.name.clone())
            .collect()
    };
    assert_eq!(
        names(
            &mut s,
            "select (select sum(amount) from orders), (select 1), exists (select 1)"
        ),
        vec!["sum", "?column?", "exists"],
        "subquery column names"
    );
    assert_eq!(
        names(&mut s, "select * from t1 full join t2 using (a)"),
        vec!["a", "b", "c"],
        "USING column once, first"
    );

    // 7. A long cross join ends at statement_timeout (57014): the nested
    //    loop checks for interrupts.
    run(&mut s, "set statement_timeout = 200");
    let r = run(
        &mut s,
        "select count(*) from generate_series(1, 100000) a, generate_series(1, 100000) b",
    );
    assert_eq!(r, vec!["ERROR 57014".to_string()], "cross join cancellable");
    run(&mut s, "reset statement_timeout");
    assert_eq!(
        run(&mut s, "select 1"),
        vec!["1".to_string()],
        "session usable"
    );
}
