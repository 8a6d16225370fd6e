//! EXPLAIN ANALYZE and EXPLAIN (FORMAT JSON) (issue 15, item 7), on a
//! primary and its hot standby:
//!
//! 1. ANALYZE runs the query and shows each node's actual rows and loops:
//!    the scans' rows are the tables' filtered counts, the join's the
//!    join's, a LATERAL subquery's inner side runs once per outer row
//!    (`loops=5`), as does an index nested loop's restarted inner scan
//!    (`rows=1 loops=5`, not one loop of 5 rows), a subplan the query never reached is `(never
//!    executed)`;
//! 2. by default with times (`actual time=a..b`) and the summary lines
//!    (`Planning Time`, `Execution Time`); TIMING OFF and SUMMARY OFF drop
//!    them, as in PostgreSQL;
//! 3. FORMAT JSON is one json value whose `Plan` tree carries `Node Type`,
//!    `Relation Name`, `Plans`, and with ANALYZE `Actual Rows` / `Actual
//!    Loops`;
//! 4. options PostgreSQL rejects are rejected with its SQLSTATEs (42601 an
//!    unknown option or a non-Boolean value, 22023 TIMING without ANALYZE
//!    or an unknown format);
//! 5. the detail lines under each node are PostgreSQL 15's, word for
//!    word, for plans whose shape PostgreSQL shares (expected text taken
//!    from PostgreSQL 15's EXPLAIN (COSTS OFF) of the same queries):
//!    `Filter` on a scan (unqualified), `Index Cond` (a constant, or a
//!    nested loop's outer column `t2.t1id`) and the rest of the WHERE as
//!    `Filter`, `Hash Cond` / `Join Filter` and the `Hash` node, `Group
//!    Key`, `Sort Key` with a computed key in parentheses, and with
//!    ANALYZE `Rows Removed by Filter` / `Rows Removed by Join Filter`;
//!    in FORMAT JSON under PostgreSQL's keys (`"Sort Key"` an array).
//!
//! The failure this guards against: a plan that cannot be read — which
//! condition a node applies, which key a join or a sort uses — or one
//! printed in words tools written for PostgreSQL's EXPLAIN do not parse.

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
            // The select list's projection is the Aggregate's own, as in
            // PostgreSQL: no Result above it.
            "Aggregate (actual rows=1 loops=1)",
            "  ->  Hash Join (actual rows=50 loops=1)",
            // t2's filtered rows are estimated fewer than t1's: they
            // are hashed, t1 probes.
            "        Hash Cond: (t1.id = t2.t1id)",
            "        ->  Seq Scan on t1 (actual rows=1000 loops=1)",
            "        ->  Hash (actual rows=50 loops=1)",
            "              ->  Seq Scan on t2 (actual rows=50 loops=1)",
            "                    Filter: (id <= 50)",
            "                    Rows Removed by Filter: 450",
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
    // A plain join over five outer rows: an index nested loop whose inner
    // scan is restarted (not rebuilt) per outer row, each restart a loop.
    let nested = lines(
        node,
        &format!(
            "{OFF}SELECT t1.v FROM t2 JOIN t1 ON t1.id = t2.t1id WHERE t2.id IN (1, 2, 3, 4, 5)"
        ),
    );
    assert!(
        nested.iter().any(|l| l.starts_with("Nested Loop"))
            && nested
                .iter()
                .any(|l| l.ends_with("Index Scan using t1_pkey on t1 (actual rows=1 loops=5)")),
        "a restarted inner scan counts a loop per outer row: {nested:#?}"
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
                // Never analysed: PostgreSQL's estimate from the size,
                // ten pages at least of (8192 - 24) / (8 + 28) whole rows
                // (2260, as PostgreSQL estimates this table); count(*)
                // reads no column, so the rows handed up are 0 wide.
                && l.contains(" rows=2260 width=0) (actual time=")
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
    assert_eq!(plan["Node Type"], "Aggregate", "{json}");
    assert_eq!(plan["Actual Rows"], 1, "{json}");
    let join = &plan["Plans"][0];
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

    // 5. Detail lines.
    const PLAIN: &str = "EXPLAIN (COSTS OFF) ";
    assert_eq!(
        lines(
            node,
            &format!("{PLAIN}SELECT * FROM orders WHERE amount > 40 AND account_id < 50")
        ),
        [
            "Seq Scan on orders",
            "  Filter: ((amount > 40) AND (account_id < 50))",
        ],
        "a scan's filter, unqualified"
    );
    assert_eq!(
        lines(
            node,
            &format!("{OFF}SELECT * FROM orders WHERE amount > 40 AND account_id < 50")
        ),
        [
            "Seq Scan on orders (actual rows=80 loops=1)",
            "  Filter: ((amount > 40) AND (account_id < 50))",
            "  Rows Removed by Filter: 920",
        ],
        "rows removed by the filter"
    );
    assert_eq!(
        lines(
            node,
            &format!("{PLAIN}SELECT * FROM accounts WHERE id = 5 AND owner = 'owner5'")
        ),
        [
            "Index Scan using accounts_pkey on accounts",
            "  Index Cond: (id = 5)",
            "  Filter: (owner = 'owner5'::text)",
        ],
        "index condition, the rest as filter, constants labelled"
    );
    assert_eq!(
        lines(
            node,
            &format!(
                "{PLAIN}SELECT * FROM accounts WHERE opened > '2020-02-01' ORDER BY owner DESC, id"
            )
        ),
        [
            "Sort",
            "  Sort Key: owner DESC, id",
            "  ->  Seq Scan on accounts",
            "        Filter: (opened > '2020-02-01'::date)",
        ],
        "sort keys of one table"
    );
    assert_eq!(
        lines(node, &format!("{PLAIN}SELECT DISTINCT owner FROM accounts")),
        [
            "HashAggregate",
            "  Group Key: owner",
            "  ->  Seq Scan on accounts",
        ],
        "DISTINCT's group key"
    );
    assert_eq!(
        lines(
            node,
            &format!(
                "{PLAIN}SELECT a.owner, count(o.id) FROM accounts a \
                 JOIN orders o ON o.account_id = a.id WHERE o.amount > 10 \
                 GROUP BY a.owner ORDER BY a.owner, count(o.id) DESC"
            )
        ),
        [
            "Sort",
            "  Sort Key: a.owner, (count(o.id)) DESC",
            "  ->  HashAggregate",
            "        Group Key: a.owner",
            "        ->  Hash Join",
            "              Hash Cond: (a.id = o.account_id)",
            "              ->  Seq Scan on accounts a",
            "              ->  Hash",
            "                    ->  Seq Scan on orders o",
            "                          Filter: (amount > 10)",
        ],
        "join, aggregate and sort: qualified names, the aggregate in parentheses, \
         tables under their aliases"
    );
    assert_eq!(
        lines(
            node,
            &format!(
                "{OFF}SELECT t2.id FROM t2 JOIN t1 ON t1.id = t2.t1id AND t1.v < t2.id \
                 WHERE t2.id <= 50"
            )
        ),
        [
            "Hash Join (actual rows=42 loops=1)",
            "  Hash Cond: (t1.id = t2.t1id)",
            "  Join Filter: (t1.v < t2.id)",
            "  Rows Removed by Join Filter: 8",
            "  ->  Seq Scan on t1 (actual rows=1000 loops=1)",
            "  ->  Hash (actual rows=50 loops=1)",
            "        ->  Seq Scan on t2 (actual rows=50 loops=1)",
            "              Filter: (id <= 50)",
            "              Rows Removed by Filter: 450",
        ],
        "join filter and the rows it removed"
    );
    assert!(
        lateral.windows(2).any(|w| w[0]
            .ends_with("Index Scan using t1_pkey on t1 (actual rows=1 loops=5)")
            && w[1].trim_start() == "Index Cond: (id = t2.t1id)"),
        "the inner index scan's key is the outer column: {lateral:#?}"
    );
    let json = node.safe_sql(
        "EXPLAIN (FORMAT JSON, COSTS OFF) SELECT a.owner, count(o.id) FROM accounts a \
         JOIN orders o ON o.account_id = a.id WHERE o.amount > 10 \
         GROUP BY a.owner ORDER BY a.owner, count(o.id) DESC",
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("EXPLAIN's JSON parses");
    let sort = &v[0]["Plan"];
    assert_eq!(
        sort["Sort Key"],
        serde_json::json!(["a.owner", "(count(o.id)) DESC"]),
        "{json}"
    );
    let agg = &sort["Plans"][0];
    assert_eq!(agg["Group Key"], serde_json::json!(["a.owner"]), "{json}");
    let join = &agg["Plans"][0];
    assert_eq!(join["Hash Cond"], "(a.id = o.account_id)", "{json}");
    assert_eq!(join["Plans"][0]["Alias"], "a", "{json}");
    let hash = &join["Plans"][1];
    assert_eq!(hash["Node Type"], "Hash", "{json}");
    assert_eq!(hash["Parent Relationship"], "Inner", "{json}");
    assert_eq!(hash["Plans"][0]["Filter"], "(amount > 10)", "{json}");
    let analyzed: serde_json::Value = serde_json::from_str(&node.safe_sql(
        "EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) \
         SELECT * FROM orders WHERE amount > 40 AND account_id < 50",
    ))
    .expect("JSON with ANALYZE");
    let scan = &analyzed[0]["Plan"];
    assert_eq!(
        scan["Filter"], "((amount > 40) AND (account_id < 50))",
        "{analyzed}"
    );
    assert_eq!(scan["Rows Removed by Filter"], 920, "{analyzed}");
    let none_removed: serde_json::Value = serde_json::from_str(&node.safe_sql(
        "EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) \
         SELECT * FROM orders WHERE amount >= 0",
    ))
    .expect("JSON with ANALYZE");
    assert_eq!(
        none_removed[0]["Plan"]["Rows Removed by Filter"], 0,
        "JSON keeps a zero count: {none_removed}"
    );
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
        "CREATE TABLE accounts (id int PRIMARY KEY, owner text, opened date)",
        "INSERT INTO accounts SELECT i, 'owner' || (i % 7), date '2020-01-01' + i \
         FROM generate_series(1, 100) i",
        "CREATE TABLE orders (id int PRIMARY KEY, account_id int, amount int)",
        "INSERT INTO orders SELECT i, i % 100 + 1, i % 50 FROM generate_series(1, 1000) i",
    ] {
        primary.safe_sql(sql);
    }
    let standby = Node::standby_of(&primary, "standby");
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    check(&primary);
    check(&standby);
}
