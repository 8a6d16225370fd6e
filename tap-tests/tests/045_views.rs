//! Views (sql.md, "Views"; `sql::view`, `engine::view`): CREATE [OR
//! REPLACE] VIEW, ALTER VIEW … RENAME and DROP VIEW are transactional —
//! a change whose transaction does not commit leaves nothing, after
//! ROLLBACK, ROLLBACK TO or a crash — and WAL-logged, so a hot standby
//! sees exactly the committed views; DROP TABLE … CASCADE takes the views
//! on the table with it on both nodes, and everything survives a restart.
//!
//! * `view_changes_replay_and_roll_back`
//! * `uncommitted_view_changes_are_private_and_undone_after_a_crash`
//! * `drop_cascade_replays_and_survives_restart`

use tap_tests::Node;

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE t (id int, v text); \
         INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'); \
         CREATE VIEW v AS SELECT id, v FROM t WHERE id > 1",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

/// The view as it was created, on `node`.
#[track_caller]
fn original(node: &Node) {
    assert_eq!(
        node.safe_sql("SELECT * FROM v ORDER BY id"),
        "2|b\n3|c",
        "{}: view unchanged",
        node.name()
    );
}

#[test]
fn view_changes_replay_and_roll_back() {
    let (primary, standby) = pair();
    // 1. Created, replaced, renamed and dropped, all rolled back.
    primary.safe_sql(
        "BEGIN; \
         CREATE VIEW w AS SELECT id FROM v; \
         CREATE OR REPLACE VIEW v AS SELECT id, v, id * 10 AS x FROM t; \
         ALTER VIEW v RENAME TO v2; \
         DROP VIEW w; \
         ROLLBACK",
    );
    // 2. ROLLBACK TO undoes only what followed the savepoint.
    primary.safe_sql(
        "BEGIN; CREATE VIEW keep AS SELECT 1 AS one; SAVEPOINT s; \
         CREATE VIEW gone AS SELECT 2 AS two; DROP VIEW v; ROLLBACK TO s; COMMIT",
    );
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        original(node);
        node.expect_error("SELECT * FROM w", "42P01");
        node.expect_error("SELECT * FROM v2", "42P01");
        node.expect_error("SELECT * FROM gone", "42P01");
        assert_eq!(
            node.safe_sql("SELECT one FROM keep"),
            "1",
            "{}",
            node.name()
        );
    }
    // 3. Committed changes replay; the standby reads the views.
    primary.safe_sql(
        "CREATE OR REPLACE VIEW v AS SELECT id, v, id * 10 AS x FROM t; \
         CREATE VIEW w AS SELECT x FROM v WHERE id = 3; \
         ALTER VIEW keep RENAME TO kept",
    );
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT * FROM v ORDER BY id"),
            "1|a|10\n2|b|20\n3|c|30",
            "{}: replaced view",
            node.name()
        );
        assert_eq!(node.safe_sql("SELECT * FROM w"), "30", "{}", node.name());
        assert_eq!(node.safe_sql("SELECT * FROM kept"), "1", "{}", node.name());
        node.expect_error("SELECT * FROM keep", "42P01");
    }
    // 4. A standby refuses DDL.
    standby.expect_error("CREATE VIEW s AS SELECT 1", "25006");
}

#[test]
fn uncommitted_view_changes_are_private_and_undone_after_a_crash() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE VIEW fresh AS SELECT id FROM t");
    s.query_safe("CREATE OR REPLACE VIEW v AS SELECT id, v, 0 AS z FROM t");
    assert_eq!(s.query_safe("SELECT count(*) FROM fresh"), "3");
    assert_eq!(s.query_safe("SELECT sum(z) FROM v"), "0");
    // Another commit ships (and flushes) the WAL of the changes.
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        original(node);
        node.expect_error("SELECT * FROM fresh", "42P01");
    }
    primary.kill9();
    drop(s);
    primary.start();
    original(&primary);
    primary.expect_error("SELECT * FROM fresh", "42P01");
    // The undo is WAL-logged: the standby follows, and the name is free.
    primary.safe_sql("CREATE VIEW fresh AS SELECT 7 AS seven");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT seven FROM fresh"), "7");
    original(&standby);
}

#[test]
fn drop_cascade_replays_and_survives_restart() {
    let (primary, standby) = pair();
    primary.safe_sql(
        "CREATE VIEW v2 AS SELECT id FROM v; CREATE TABLE u (k int); \
         CREATE VIEW vu AS SELECT k FROM u",
    );
    // 1. Without CASCADE the table stays.
    primary.expect_error("DROP TABLE t", "2BP01");
    primary.expect_error("BEGIN; DROP TABLE t; COMMIT", "2BP01");
    // 2. CASCADE in a block that rolls back keeps everything.
    primary.safe_sql("BEGIN; DROP TABLE t CASCADE; ROLLBACK");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        original(node);
        assert_eq!(node.safe_sql("SELECT count(*) FROM v2"), "2");
    }
    // 3. Committed, the views go with the table on both nodes.
    primary.safe_sql("DROP TABLE t CASCADE");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        node.expect_error("SELECT * FROM v", "42P01");
        node.expect_error("SELECT * FROM v2", "42P01");
        assert_eq!(
            node.safe_sql("SELECT count(*) FROM pg_views WHERE schemaname = 'public'"),
            "1",
            "{}: only vu left",
            node.name()
        );
    }
    // 4. What is left survives a restart of both.
    primary.restart();
    standby.restart();
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT viewname FROM pg_views WHERE schemaname = 'public'"),
            "vu"
        );
        node.expect_error("SELECT * FROM v", "42P01");
    }
    primary.expect_error("DROP TABLE u", "2BP01");
}
