//! EXPLAIN ANALYZE and EXPLAIN (FORMAT JSON) (issue 15, item 7), on a
//! primary and its hot standby:
//!
//! 1. ANALYZE runs the query and shows each node's actual rows and loops:
//!    the scans' rows are the tables' filtered counts, the join's the
//!    join's, a LATERAL subquery's inner side runs once per outer row
//!    (`loops=5`), a subplan the query never reached is `(never
//!    executed)`;
//! 2. by default with times (`actual time=a..b`) and the summary lines
//!    (`Planning Time`, `Execution Time`); TIMING OFF and SUMMARY OFF drop
//!    them, as in PostgreSQL;
//! 3. FORMAT JSON is one json value whose `Plan` tree carries `Node Type`,
//!    `Relation Name`, `Plans`, and with ANALYZE `Actual Rows` / `Actual
//!    Loops`;
//! 4. options PostgreSQL rejects are rejected with its SQLSTATEs (42601 an
//!    unknown option or a non-Boolean value, 22023 TIMING without ANALYZE
//!    or an unknown format).

use tap_tests::Node;

const OFF: &str = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ";

fn lines(node: &Node, sql: &str) -> Vec<String> {
    node.safe_sql(sql).lines().map(str::to_string).collect()
}

fn check(node: &Node) {
    // 1. Actual rows and loops.
    assert_eq!(
        lines(
            node,
            &format!("{OFF}SELECT count(*) FROM t2 JOIN t1 ON t1.id = t2.t1id WHERE t2.id <= 50")
        ),
        [
            "Result (actual rows=1 loops=1)",
            "  ->  Aggregate (actual rows=1 loops=1)",
            "        ->  Hash Join (actual rows=50 loops=1)",
            // t2's filtered rows are estimated fewer than t1's: they
            // are hashed, t1 probes.
            "              ->  Seq Scan on t1 (actual rows=1000 loops=1)",
            "              ->  Seq Scan on t2 (actual rows=50 loops=1)",
        ]
    );
    let lateral = lines(
        node,
        &format!(
            "{OFF}SELECT s.v FROM t2, LATERAL (SELECT v FROM t1 WHERE t1.id = t2.t1id OFFSET 0) s \
             WHERE t2.id <= 5"
        ),
    );
    assert!(
        lateral
            .iter()
            .any(|l| l.ends_with("Index Scan using t1_pkey on t1 (actual rows=1 loops=5)")),
        "the inner side ran once per outer row: {lateral:#?}"
    );
    let never = lines(
        node,
        &format!(
            "{OFF}SELECT CASE WHEN v < 0 THEN (SELECT count(*) FROM t2) END FROM t1 WHERE id = 5"
        ),
    );
    assert!(
        never
            .iter()
            .any(|l| l.ends_with("Seq Scan on t2 (never executed)")),
        "{never:#?}"
    );

    // 2. Times and summary by default.
    let timed = lines(node, "EXPLAIN ANALYZE SELECT count(*) FROM t1");
    let first = &timed[0];
    assert!(
        first.contains("(actual time=") && first.ends_with("rows=1 loops=1)"),
        "{timed:#?}"
    );
    assert!(timed
        .iter()
        .any(|l| l.starts_with("Planning Time: ") && l.ends_with(" ms")));
    assert!(timed
        .iter()
        .any(|l| l.starts_with("Execution Time: ") && l.ends_with(" ms")));
    assert!(
        timed
            .iter()
            .any(|l| l.contains("Seq Scan on t1  (cost=0.00..")
                && l.contains(" rows=1000 width=8) (actual time=")
                && l.contains(" rows=1000 loops=1)")),
        "estimate, then the actual rows: {timed:#?}"
    );

    // 3. JSON.
    let json = node.safe_sql(
        "EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) \
         SELECT count(*) FROM t2 JOIN t1 ON t1.id = t2.t1id",
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("EXPLAIN's JSON parses");
    let plan = &v[0]["Plan"];
    assert_eq!(plan["Actual Rows"], 1, "{json}");
    let join = &plan["Plans"][0]["Plans"][0];
    assert_eq!(join["Node Type"], "Hash Join", "{json}");
    assert_eq!(join["Join Type"], "Inner", "{json}");
    assert_eq!(join["Actual Rows"], 500, "{json}");
    assert_eq!(join["Plans"][0]["Relation Name"], "t2", "{json}");
    assert_eq!(join["Plans"][1]["Actual Loops"], 1, "{json}");
    let plain: serde_json::Value =
        serde_json::from_str(&node.safe_sql("EXPLAIN (FORMAT JSON) SELECT * FROM t1 WHERE id = 3"))
            .expect("JSON without ANALYZE");
    assert!(plain[0]["Plan"]["Plan Rows"].is_number(), "{plain}");
    assert!(plain[0]["Plan"].get("Actual Rows").is_none(), "{plain}");

    // 4. Options.
    node.expect_error("EXPLAIN (foo) SELECT 1", "42601");
    node.expect_error("EXPLAIN (costs maybe) SELECT 1", "42601");
    node.expect_error("EXPLAIN (timing) SELECT 1", "22023");
    node.expect_error("EXPLAIN (format xml2) SELECT 1", "22023");
}

#[test]
fn explain_analyze_measures_each_node() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    for sql in [
        "CREATE TABLE t1 (id int PRIMARY KEY, v int)",
        "INSERT INTO t1 SELECT i, i % 10 FROM generate_series(1, 1000) i",
        "CREATE TABLE t2 (id int, t1id int)",
        "INSERT INTO t2 SELECT i, i % 100 + 1 FROM generate_series(1, 500) i",
    ] {
        primary.safe_sql(sql);
    }
    let standby = Node::standby_of(&primary, "standby");
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    check(&primary);
    check(&standby);
}
