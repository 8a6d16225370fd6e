//! Join order of inner joins (`sql::planner::fromclause`,
//! `JoinPlanner::build_top`): a comma list whose textual order would join
//! two tables no condition connects is planned without that cross
//! product, on the primary and on the standby, and gives the rows and
//! columns of the textual order (the golden script `join_order` compares
//! them with PostgreSQL's).
//!
//! * `comma_lists_avoid_cross_products`
//! * `in_over_a_unique_key_starts_from_the_subquery`
//! * `presorted_inputs_merge_join`

use tap_tests::Node;

/// The relations the scans of an EXPLAIN (COSTS OFF) read (sequential
/// and index scans), top to bottom.
fn scans(plan: &str) -> Vec<String> {
    plan.lines()
        .filter(|l| l.contains("Scan "))
        .filter_map(|l| l.rsplit(" on ").next().filter(|_| l.contains(" on ")))
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn comma_lists_avoid_cross_products() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY, a_id int); \
         CREATE TABLE c (id int PRIMARY KEY, b_id int); \
         INSERT INTO a SELECT generate_series(1, 50); \
         INSERT INTO b SELECT g, g FROM generate_series(1, 50) g; \
         INSERT INTO c SELECT g, g FROM generate_series(1, 50) g",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let query = "SELECT * FROM a, c, b WHERE a.id = b.a_id AND b.id = c.b_id";
    for node in [&primary, &standby] {
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {query}"));
        // a and b join first (the deepest join's inputs come first in the
        // listing), c last: no join of a with c alone.
        assert_eq!(scans(&plan), ["a", "b", "c"], "{}: {plan}", node.name());
        assert_eq!(
            node.safe_sql(&format!("SELECT count(*) FROM ({query}) j")),
            "50"
        );
        // The row keeps the textual column order: a, then c, then b.
        assert_eq!(
            node.safe_sql(
                "SELECT * FROM a, c, b WHERE a.id = b.a_id AND b.id = c.b_id AND a.id = 3"
            ),
            "3|3|3|3|3"
        );
    }
    // psql's index query for \d: pg_class c, pg_class c2, pg_index i.
    let plan = primary.safe_sql(
        "EXPLAIN (COSTS OFF) SELECT c2.relname FROM pg_class c, pg_class c2, pg_index i \
         WHERE c.oid = 'b'::regclass AND c.oid = i.indrelid AND i.indexrelid = c2.oid",
    );
    assert_eq!(
        scans(&plan),
        ["pg_class", "pg_index", "pg_class"],
        "c joins i first: {plan}"
    );
}

/// With `ANALYZE`'s statistics (replicated, so the standby plans the
/// same way) the order and the method follow the estimates: a run of
/// joins written largest table first starts from the one row a filter
/// keeps and reaches the large table through its index; a hash join
/// hashes the smaller input, whichever side the text names it on.
#[test]
fn statistics_choose_the_join_order_and_method() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE fact (id int PRIMARY KEY, dim_id int, v int); \
         CREATE INDEX fact_dim ON fact (dim_id); \
         CREATE TABLE dim (id int PRIMARY KEY, name text); \
         CREATE TABLE tiny (id int PRIMARY KEY, tag text); \
         INSERT INTO fact SELECT g, g % 100, g % 1000 FROM generate_series(1, 20000) g; \
         INSERT INTO dim SELECT g, 'd' || g FROM generate_series(0, 99) g; \
         INSERT INTO tiny SELECT g, CASE WHEN g = 7 THEN 'x' ELSE 'y' END \
           FROM generate_series(0, 99) g; \
         ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let star = "SELECT count(*), sum(fact.v) FROM fact, dim, tiny \
                WHERE fact.dim_id = dim.id AND dim.id = tiny.id AND tiny.tag = 'x'";
    let hashed = "SELECT count(*) FROM dim JOIN fact ON fact.v = dim.id";
    // dim 3 has a fact row with v 303, dim 5 none with v 503; the
    // extra condition reads both sides.
    let few_exists = "SELECT count(*) FROM dim d WHERE d.id IN (3, 5, 700) \
                      AND EXISTS (SELECT 1 FROM fact f WHERE f.dim_id = d.id AND f.v <> d.id * 1000)";
    let few_not_exists = "SELECT count(*) FROM dim d WHERE d.id IN (3, 5) \
                          AND NOT EXISTS (SELECT 1 FROM fact f WHERE f.dim_id = d.id AND f.v = d.id * 100 + 3)";
    for node in [&primary, &standby] {
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {star}"));
        assert_eq!(
            scans(&plan),
            ["tiny", "dim", "fact"],
            "{}: the filtered row first: {plan}",
            node.name()
        );
        assert!(
            plan.contains("Index Scan using fact_dim on fact"),
            "{}: fact through its index: {plan}",
            node.name()
        );
        assert_eq!(node.safe_sql(star), "200|91400");
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {hashed}"));
        // The probe side is listed first, the hashed one second.
        assert_eq!(scans(&plan), ["fact", "dim"], "{}: {plan}", node.name());
        assert_eq!(node.safe_sql(hashed), "2000");
        // EXISTS / NOT EXISTS from a few outer rows: an index lookup per
        // row, not the whole of fact read into a hash table.
        for (q, want) in [(few_exists, "2"), (few_not_exists, "1")] {
            let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {q}"));
            assert!(
                plan.contains("Nested Loop Semi Join") || plan.contains("Nested Loop Anti Join"),
                "{}: {plan}",
                node.name()
            );
            assert!(
                plan.contains("Index Scan using fact_dim on fact"),
                "{}: {plan}",
                node.name()
            );
            assert_eq!(node.safe_sql(q), want, "{q}");
        }
        // An OR whose every arm restricts dim alone restricts dim's scan
        // (the OR itself still decides): two dims, then fact by its index.
        let ors = "SELECT count(*), sum(f.v) FROM fact f, dim d \
                   WHERE (f.dim_id = d.id AND d.name = 'd3' AND f.v < 500) \
                      OR (f.dim_id = d.id AND d.name = 'd5' AND f.v > 900)";
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {ors}"));
        assert_eq!(scans(&plan), ["dim", "fact"], "{}: {plan}", node.name());
        assert!(plan.contains("'d3'::text) OR"), "{}: {plan}", node.name());
        assert_eq!(node.safe_sql(ors), "120|38400", "{ors}");
    }
}

/// Equivalence classes (`EqClasses`): `c.nat = s.nat AND s.nat = n.nat`
/// implies `c.nat = n.nat`, so customers are reached from the one
/// region's nations without going through the suppliers (TPC-H Q5's
/// shape), and each join keeps one equality of the class.
#[test]
fn equivalence_classes_join_what_the_text_does_not() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE reg (r int PRIMARY KEY, name text); \
         CREATE TABLE nat (n int PRIMARY KEY, r int); CREATE INDEX ON nat (r); \
         CREATE TABLE cust (id int PRIMARY KEY, n int); CREATE INDEX ON cust (n); \
         CREATE TABLE supp (id int PRIMARY KEY, n int); \
         INSERT INTO reg SELECT g, 'r' || g FROM generate_series(1, 5) g; \
         INSERT INTO nat SELECT g, g % 5 + 1 FROM generate_series(1, 25) g; \
         INSERT INTO cust SELECT g, g % 25 + 1 FROM generate_series(1, 5000) g; \
         INSERT INTO supp SELECT g, g % 25 + 1 FROM generate_series(1, 2000) g; ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let query = "SELECT count(*) FROM supp s, cust c, nat n, reg r \
                 WHERE c.n = s.n AND s.n = n.n AND n.r = r.r AND r.name = 'r2'";
    for node in [&primary, &standby] {
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {query}"));
        // The implied `c.n = n.n` joins customers to the region's nations
        // before the suppliers come in: no join reads cust and supp alone.
        let order = scans(&plan);
        let pos = |t: &str| order.iter().position(|s| s == t);
        assert!(
            pos("supp") > pos("cust") && pos("cust") > pos("nat"),
            "{}: {plan}",
            node.name()
        );
        assert!(
            plan.contains("c.n = n.n") || plan.contains("n.n = c.n"),
            "{plan}"
        );
        // 5 nations of r2, 200 customers and 80 suppliers each.
        assert_eq!(node.safe_sql(query), "80000", "{}", node.name());
    }
}

/// More groups than a hash table holds in `work_mem` are made in an
/// index's order (GroupAggregate over an Index Scan of the primary key);
/// few groups stay hashed. The golden script `group_aggregate` checks
/// the rows against PostgreSQL's.
#[test]
fn many_groups_aggregate_in_index_order() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE big (k int PRIMARY KEY, v int); \
         INSERT INTO big SELECT g, g % 11 FROM generate_series(1, 60000) g; \
         CREATE TABLE small (k int PRIMARY KEY, v int); \
         INSERT INTO small SELECT g, g % 11 FROM generate_series(1, 500) g; \
         CREATE TABLE dup (k int NOT NULL, v int); CREATE INDEX dup_k ON dup (k); \
         INSERT INTO dup SELECT g / 3, g FROM generate_series(0, 299999) g; ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        let plan = node.safe_sql("EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM big GROUP BY k");
        assert!(plan.contains("GroupAggregate"), "{}: {plan}", node.name());
        assert!(plan.contains("Index Scan using big_pkey on big"), "{plan}");
        // Three entries per key: the index is read in batches cut at key
        // boundaries, so no group is split.
        let q = "SELECT count(*), min(c), max(c), sum(s) \
                 FROM (SELECT k, count(*) c, sum(v) s FROM dup GROUP BY k) q";
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {q}"));
        assert!(plan.contains("Index Scan using dup_k on dup"), "{plan}");
        assert_eq!(node.safe_sql(q), "100000|3|3|44999850000");
        let plan = node.safe_sql("EXPLAIN (COSTS OFF) SELECT k, sum(v) FROM small GROUP BY k");
        assert!(plan.contains("HashAggregate"), "{}: {plan}", node.name());
        assert_eq!(
            node.safe_sql(
                "SELECT count(*), sum(s), max(k) FROM (SELECT k, sum(v) s FROM big GROUP BY k) q"
            ),
            "60000|299991|60000",
            "{}",
            node.name()
        );
    }
}

/// `x IN (SELECT key FROM t WHERE …)` over t's unique key is an inner
/// join with t (`sublink_join::UniqueIn`): the few rows of t the
/// subquery's condition keeps drive index lookups into the big table,
/// instead of the big table read whole against a hashed list. The golden
/// script `in_unique_pullup` checks the rows against PostgreSQL's.
#[test]
fn in_over_a_unique_key_starts_from_the_subquery() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE part (id int PRIMARY KEY, name text); \
         CREATE TABLE supply (part int, supplier int, qty int, PRIMARY KEY (part, supplier)); \
         INSERT INTO part SELECT g, CASE WHEN g % 100 = 0 THEN 'forest ' ELSE 'plain ' END || g \
           FROM generate_series(1, 5000) g; \
         INSERT INTO supply SELECT p, s, p % 7 FROM generate_series(1, 5000) p, generate_series(1, 4) s; \
         ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let query = "SELECT count(*), sum(qty) FROM supply \
                 WHERE part IN (SELECT id FROM part WHERE name LIKE 'forest%')";
    for node in [&primary, &standby] {
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {query}"));
        assert!(!plan.contains("SubPlan"), "{}: {plan}", node.name());
        assert_eq!(scans(&plan), ["part", "supply"], "{}: {plan}", node.name());
        assert!(
            plan.contains("Index Scan using supply_pkey on supply"),
            "{plan}"
        );
        // 50 parts, 4 supply rows each; qty = part % 7 with part = 100k.
        let expected: i64 = (1..=50).map(|k| 4 * ((100 * k) % 7)).sum();
        assert_eq!(
            node.safe_sql(query),
            format!("200|{expected}"),
            "{}",
            node.name()
        );
    }
}

/// Inputs that arrive sorted on the join keys are merged, not hashed
/// (`fromclause::merge_order`, `executor::mergejoin`): two ordered
/// derived tables join with a Merge Join (inner, LEFT and FULL), on both
/// nodes, with the hash join's answer. The golden script `merge_join`
/// checks the rows against PostgreSQL's.
#[test]
fn presorted_inputs_merge_join() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE ma (k int, v text); CREATE TABLE mb (k int, w text); \
         INSERT INTO ma SELECT g % 500, 'a' || g FROM generate_series(1, 5000) g; \
         INSERT INTO mb SELECT g % 700, 'b' || g FROM generate_series(1, 2100) g; \
         INSERT INTO ma VALUES (NULL, 'n'); INSERT INTO mb VALUES (NULL, 'n'); ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let sorted = |join: &str| {
        format!(
            "SELECT count(*), count(a.v), count(b.w) FROM (SELECT * FROM ma ORDER BY k) a \
             {join} (SELECT * FROM mb ORDER BY k) b ON a.k = b.k"
        )
    };
    let hashed = |join: &str| {
        format!("SELECT count(*), count(a.v), count(b.w) FROM ma a {join} mb b ON a.k = b.k")
    };
    for node in [&primary, &standby] {
        for (join, label) in [
            ("JOIN", "Merge Join"),
            ("LEFT JOIN", "Merge Left Join"),
            ("FULL JOIN", "Merge Full Join"),
        ] {
            let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {}", sorted(join)));
            assert!(plan.contains(label), "{}: {plan}", node.name());
            assert!(plan.contains("Merge Cond: (a.k = b.k)"), "{plan}");
            let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {}", hashed(join)));
            assert!(plan.contains("Hash"), "unsorted inputs hash: {plan}");
            assert_eq!(
                node.safe_sql(&sorted(join)),
                node.safe_sql(&hashed(join)),
                "{}: {join}",
                node.name()
            );
        }
        assert_eq!(node.safe_sql(&sorted("JOIN")), "15000|15000|15000");
        assert_eq!(node.safe_sql(&sorted("FULL JOIN")), "15602|15001|15601");
    }
}
