//! Join order of inner joins (`sql::planner::fromclause`,
//! `JoinPlanner::build_top`): a comma list whose textual order would join
//! two tables no condition connects is planned without that cross
//! product, on the primary and on the standby, and gives the rows and
//! columns of the textual order (the golden script `join_order` compares
//! them with PostgreSQL's).
//!
//! * `comma_lists_avoid_cross_products`

use tap_tests::Node;

/// The scans of an EXPLAIN (COSTS OFF), top to bottom.
fn scans(plan: &str) -> Vec<String> {
    plan.lines()
        .filter_map(|l| l.split("Scan on ").nth(1))
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
