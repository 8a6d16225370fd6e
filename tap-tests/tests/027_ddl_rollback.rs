//! Transactional CREATE (sql.md, "Transactional DDL"): a table or index
//! whose transaction does not commit is gone — after ROLLBACK, ROLLBACK TO,
//! an error in a multi-statement string, and a primary crash — on the
//! primary and, through WAL, on its hot standby; until its transaction
//! commits no other session, on either node, can use it.
//!
//! * `rolled_back_creations_vanish_on_both_nodes`
//! * `uncommitted_creation_is_private_then_committed`
//! * `creation_running_at_a_crash_is_gone_after_restart`
//! * `creation_running_at_promotion_is_gone_on_the_new_primary`

use tap_tests::Node;

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY, v int)");
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

/// Asserts `sql` fails on `node` with 42P01 (undefined table).
#[track_caller]
fn undefined(node: &Node, sql: &str) {
    match node.sql(sql) {
        Ok(out) => panic!("{}: expected 42P01 from {sql}, got {out:?}", node.name()),
        Err(e) => assert_eq!(e.code(), "42P01", "{}: {sql}: {e}", node.name()),
    }
}

#[test]
fn rolled_back_creations_vanish_on_both_nodes() {
    let (primary, standby) = pair();
    primary.safe_sql(
        "BEGIN; CREATE TABLE r1 (id int PRIMARY KEY); INSERT INTO r1 VALUES (1); ROLLBACK",
    );
    assert!(primary
        .sql("CREATE TABLE r2 (a int); INSERT INTO r2 VALUES (1); SELECT 1/0")
        .is_err());
    primary.safe_sql(
        "BEGIN; SAVEPOINT s; CREATE TABLE r3 (a int); ROLLBACK TO s; \
         CREATE TABLE kept (a int); INSERT INTO kept VALUES (1); COMMIT",
    );
    primary
        .safe_sql("BEGIN; CREATE INDEX kept_a ON kept (a); ALTER TABLE t ADD UNIQUE (v); ROLLBACK");
    primary.safe_sql("INSERT INTO t VALUES (1, 5), (2, 5)");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        for r in ["r1", "r2", "r3"] {
            undefined(node, &format!("SELECT * FROM {r}"));
        }
        assert_eq!(node.safe_sql("SELECT count(*) FROM kept"), "1");
        assert_eq!(node.safe_sql("SELECT count(*) FROM t WHERE v = 5"), "2");
    }
    // The names are free again: the index names too.
    primary.safe_sql("CREATE TABLE r1 (b text); INSERT INTO r1 VALUES ('new')");
    primary.safe_sql("CREATE INDEX kept_a ON kept (a)");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT b FROM r1"), "new");
}

#[test]
fn uncommitted_creation_is_private_then_committed() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE TABLE p (a int)");
    s.query_safe("INSERT INTO p VALUES (1), (2)");
    assert_eq!(s.query_safe("SELECT count(*) FROM p"), "2");
    // Another commit ships (and flushes) the WAL of the creation.
    primary.safe_sql("INSERT INTO t VALUES (1, 1)");
    primary.wait_for_replay(&standby);
    undefined(&primary, "SELECT * FROM p");
    undefined(&standby, "SELECT * FROM p");
    s.query_safe("COMMIT");
    primary.wait_for_replay(&standby);
    assert_eq!(primary.safe_sql("SELECT count(*) FROM p"), "2");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM p"), "2");
}

#[test]
fn creation_running_at_a_crash_is_gone_after_restart() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t SELECT g, g FROM generate_series(1, 100) g");
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE TABLE lost (id int PRIMARY KEY, pad text)");
    s.query_safe("INSERT INTO lost SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g");
    s.query_safe("CREATE INDEX t_v ON t (v)");
    primary.safe_sql("INSERT INTO t VALUES (1000, 1000)");
    primary.wait_for_replay(&standby);
    undefined(&standby, "SELECT * FROM lost");
    primary.kill9();
    drop(s);
    primary.start();
    undefined(&primary, "SELECT * FROM lost");
    // Both names are free on the primary; on the standby the old table
    // went too (replaying the new CREATE would fail otherwise).
    primary.safe_sql("CREATE TABLE lost (b text); INSERT INTO lost VALUES ('after')");
    primary.safe_sql("CREATE INDEX t_v ON t (v)");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT b FROM lost"), "after");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "101");
    // And a second restart keeps it that way.
    primary.restart();
    assert_eq!(primary.safe_sql("SELECT b FROM lost"), "after");
}

#[test]
fn creation_running_at_promotion_is_gone_on_the_new_primary() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("CREATE TABLE orphan (a int)");
    s.query_safe("INSERT INTO orphan VALUES (1)");
    primary.safe_sql("INSERT INTO t VALUES (1, 1)");
    primary.wait_for_replay(&standby);
    primary.kill9();
    drop(s);
    standby.promote();
    undefined(&standby, "SELECT * FROM orphan");
    standby.safe_sql("CREATE TABLE orphan (b text); INSERT INTO orphan VALUES ('mine')");
    assert_eq!(standby.safe_sql("SELECT b FROM orphan"), "mine");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "1");
}
