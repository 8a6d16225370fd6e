//! Indexes on expressions and partial indexes on a standby
//! (`sql::indexcmds`, `engine::indexing::index_key`): the standby has no
//! SQL layer on its replay path, yet its copy of such an index must
//! follow replay — a row inserted on the primary after the standby
//! started is found through the expression index there — and a restart,
//! which rebuilds every index from the heap, must compute the same keys.
//! The failure guarded against: a standby whose expression index misses
//! rows replayed after its build answers an index scan with too few rows.
//!
//! * `expression_index_follows_replay_and_restart`

use tap_tests::Node;

/// The rows the expression index finds for one key (the planner takes it:
/// `lower(email) = const` plus the predicate).
const LOOKUP: &str =
    "SELECT id FROM users WHERE lower(email) = 'late@x' AND deleted IS NULL ORDER BY id";

#[test]
fn expression_index_follows_replay_and_restart() {
    let node = Node::new("primary");
    node.init(true);
    node.start();
    node.safe_sql(
        "CREATE TABLE users (id int PRIMARY KEY, email text, deleted timestamptz); \
         CREATE UNIQUE INDEX users_email ON users (lower(email)) WHERE deleted IS NULL; \
         CREATE INDEX users_bucket ON users ((id % 7)); \
         INSERT INTO users SELECT g, 'user' || g || '@x', NULL FROM generate_series(1, 200) g",
    );
    let standby = Node::standby_of(&node, "standby");

    // 1. The plan on the standby uses the expression index.
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    let plan = standby.safe_sql(&format!("EXPLAIN (COSTS OFF) {LOOKUP}"));
    assert!(
        plan.contains("Index Scan using users_email on users"),
        "standby plan uses the expression index: {plan}"
    );

    // 2. Rows written on the primary after the standby started are found
    //    through the index on the standby; a soft-deleted duplicate is
    //    outside the partial index.
    node.safe_sql("INSERT INTO users VALUES (1001, 'Late@X', now())");
    node.safe_sql("UPDATE users SET deleted = now() WHERE id = 1001");
    node.safe_sql("INSERT INTO users VALUES (1002, 'LATE@x', NULL)");
    let err = node
        .sql("INSERT INTO users VALUES (1003, 'late@X', NULL)")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "partial unique index enforced: {err}");
    node.safe_sql("UPDATE users SET email = 'Renamed' || id || '@x' WHERE id = 5");
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(
        standby.safe_sql(LOOKUP),
        "1002",
        "replayed insert found by key"
    );
    assert_eq!(
        standby
            .safe_sql("SELECT id FROM users WHERE lower(email) = 'renamed5@x' AND deleted IS NULL"),
        "5",
        "replayed update found under its new key"
    );
    assert_eq!(
        standby.safe_sql("SELECT id FROM users WHERE lower(email) = 'user5@x' AND deleted IS NULL"),
        "",
        "no row under the updated row's old key"
    );
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM users WHERE id % 7 = 3"),
        node.safe_sql("SELECT count(*) FROM users WHERE id % 7 = 3"),
        "second expression index agrees with the primary"
    );

    // 3. A restart of each node rebuilds the indexes with the same keys.
    standby.restart();
    node.restart();
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(standby.safe_sql(LOOKUP), "1002", "standby after restart");
    assert_eq!(node.safe_sql(LOOKUP), "1002", "primary after restart");
    let err = node
        .sql("INSERT INTO users VALUES (1004, 'LATE@X', NULL)")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "uniqueness after restart: {err}");
    node.safe_sql("INSERT INTO users VALUES (1005, 'after@x', NULL)");
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(
        standby.safe_sql("SELECT id FROM users WHERE lower(email) = 'after@x' AND deleted IS NULL"),
        "1005",
        "replay after the restart maintains the index"
    );
}
