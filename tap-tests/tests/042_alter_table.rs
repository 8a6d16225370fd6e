//! Transactional ALTER TABLE (sql.md, "Transactional DDL"; `sql::tablecmds`):
//! an ALTER whose transaction does not commit leaves nothing — after
//! ROLLBACK, ROLLBACK TO, a primary crash and a promotion — on the primary
//! and, through WAL, on its hot standby; until it commits, other sessions
//! on either node see the table as it was.
//!
//! * `rolled_back_alters_leave_nothing_on_both_nodes`
//! * `uncommitted_alter_is_private_then_committed`
//! * `alter_running_at_a_crash_is_undone_after_restart`
//! * `alter_running_at_promotion_is_undone_on_the_new_primary`

use tap_tests::Node;

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE t (id int PRIMARY KEY, v int, w text CHECK (w <> 'bad')); \
         INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b')",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

/// The table as it was created, on `node`.
#[track_caller]
fn original(node: &Node) {
    assert_eq!(
        node.safe_sql("SELECT * FROM t ORDER BY id"),
        "1|10|a\n2|20|b",
        "{}: rows and columns unchanged",
        node.name()
    );
    node.expect_error("SELECT email FROM t", "42703");
}

#[test]
fn rolled_back_alters_leave_nothing_on_both_nodes() {
    let (primary, standby) = pair();
    // 1. Every kind of action, rolled back together.
    primary.safe_sql(
        "BEGIN; \
         ALTER TABLE t ADD COLUMN email text NOT NULL DEFAULT 'x@y'; \
         ALTER TABLE t DROP COLUMN v; \
         ALTER TABLE t RENAME COLUMN w TO ww; \
         ALTER TABLE t ALTER COLUMN ww SET DEFAULT 'd'; \
         ALTER TABLE t ADD CONSTRAINT t_small CHECK (id < 100); \
         ALTER TABLE t DROP CONSTRAINT t_w_check; \
         ALTER TABLE t ADD UNIQUE (id, email); \
         INSERT INTO t (id, ww) VALUES (3, 'bad'); \
         ALTER TABLE t RENAME TO t2; \
         ROLLBACK",
    );
    // 2. ROLLBACK TO undoes only what followed the savepoint.
    primary.safe_sql(
        "BEGIN; ALTER TABLE t ADD COLUMN keep int DEFAULT 7; SAVEPOINT s; \
         ALTER TABLE t DROP COLUMN keep; ALTER TABLE t RENAME TO gone; ROLLBACK TO s; \
         ALTER TABLE t DROP COLUMN keep; COMMIT",
    );
    // 3. An error in a multi-statement string undoes its ALTERs too.
    assert!(primary
        .sql("ALTER TABLE t ADD COLUMN email text; SELECT 1/0")
        .is_err());
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        original(node);
        node.expect_error("SELECT * FROM t2", "42P01");
        node.expect_error("SELECT * FROM gone", "42P01");
        node.expect_error("SELECT keep FROM t", "42703");
    }
    // The CHECK that was dropped and put back still holds; the indexes
    // dropped with the column are whole.
    primary.expect_error("INSERT INTO t VALUES (3, 30, 'bad')", "23514");
    primary.expect_error("INSERT INTO t VALUES (1, 30, 'c')", "23505");
    assert_eq!(primary.safe_sql("SELECT w FROM t WHERE id = 2"), "b");
    // 4. The same ALTERs committed, replayed on the standby.
    primary.safe_sql(
        "ALTER TABLE t ADD COLUMN email text NOT NULL DEFAULT 'x@y'; \
         ALTER TABLE t DROP COLUMN v; ALTER TABLE t RENAME COLUMN w TO ww; \
         INSERT INTO t (id, ww, email) VALUES (3, 'c', 'me')",
    );
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT * FROM t ORDER BY id"),
            "1|a|x@y\n2|b|x@y\n3|c|me",
            "{}: committed ALTERs replayed",
            node.name()
        );
    }
    // 5. And they survive a restart of both.
    primary.restart();
    standby.restart();
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql("SELECT ww, email FROM t WHERE id = 1"),
        "a|x@y"
    );
    primary.expect_error("INSERT INTO t (id, ww) VALUES (4, 'bad')", "23514");
}

#[test]
fn uncommitted_alter_is_private_then_committed() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("ALTER TABLE t ADD COLUMN email text DEFAULT 'e'");
    s.query_safe("ALTER TABLE t RENAME TO users");
    assert_eq!(s.query_safe("SELECT email FROM users WHERE id = 1"), "e");
    // Another commit ships (and flushes) the WAL of the ALTERs.
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        original(node);
        node.expect_error("SELECT * FROM users", "42P01");
    }
    // Others keep writing the committed version meanwhile.
    primary.safe_sql("INSERT INTO t VALUES (5, 50, 'z')");
    s.query_safe("COMMIT");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT id, email FROM users ORDER BY id"),
            "1|e\n2|e\n5|e",
            "{}: committed ALTER seen",
            node.name()
        );
        node.expect_error("SELECT * FROM t", "42P01");
    }
}

#[test]
fn alter_running_at_a_crash_is_undone_after_restart() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("ALTER TABLE t ADD COLUMN email text DEFAULT 'e'");
    s.query_safe("ALTER TABLE t DROP COLUMN v");
    s.query_safe("INSERT INTO t (id, w, email) VALUES (9, 'n', 'new')");
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    original(&standby);
    primary.kill9();
    drop(s);
    primary.start();
    original(&primary);
    // The undo is WAL-logged: the standby follows, and the column name is
    // free again.
    primary.safe_sql("ALTER TABLE t ADD COLUMN email int DEFAULT 4");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT sum(email) FROM t"), "8");
    primary.restart();
    assert_eq!(primary.safe_sql("SELECT v FROM t WHERE id = 2"), "20");
}

#[test]
fn alter_running_at_promotion_is_undone_on_the_new_primary() {
    let (primary, standby) = pair();
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("ALTER TABLE t RENAME COLUMN w TO renamed");
    s.query_safe("ALTER TABLE t ALTER COLUMN v SET NOT NULL");
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(&standby);
    primary.kill9();
    drop(s);
    standby.promote();
    original(&standby);
    standby.safe_sql("INSERT INTO t (id, v, w) VALUES (3, NULL, 'c')");
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM t WHERE v IS NULL"),
        "1"
    );
}
