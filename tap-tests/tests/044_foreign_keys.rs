//! FOREIGN KEY constraints under concurrency and replication
//! (`sql::ri_triggers`): a child row never outlives its parent, whichever
//! of two sessions writes first — a deleter waits for an uncommitted
//! insert of a referencing row and fails (or cascades to it) once that
//! commits; an inserter waits for an uncommitted delete of its parent and
//! fails once that commits. The constraints (and COMMENT ON, stored with
//! the table's definition) replay on the standby, survive a restart, and a
//! rolled-back ALTER TABLE … ADD FOREIGN KEY leaves nothing.
//!
//! * `writers_on_both_sides_never_leave_an_orphan`
//! * `constraints_replicate_and_survive_restart`

use tap_tests::Node;

fn primary() -> Node {
    let node = Node::new("primary");
    node.init(true);
    node.start();
    node.safe_sql(
        "CREATE TABLE p (id int PRIMARY KEY); \
         CREATE TABLE c (id int PRIMARY KEY, pid int REFERENCES p); \
         CREATE TABLE cc (id int PRIMARY KEY, pid int REFERENCES p ON DELETE CASCADE); \
         INSERT INTO p SELECT generate_series(1, 10)",
    );
    node
}

/// The referencing rows without a parent (must stay empty).
fn orphans(node: &Node) -> String {
    node.safe_sql(
        "SELECT 'c', id FROM c WHERE pid IS NOT NULL AND pid NOT IN (SELECT id FROM p) \
         UNION ALL \
         SELECT 'cc', id FROM cc WHERE pid IS NOT NULL AND pid NOT IN (SELECT id FROM p)",
    )
}

#[test]
fn writers_on_both_sides_never_leave_an_orphan() {
    let node = primary();
    let s1 = node.background_session();
    let s2 = node.background_session();

    // 1. A delete of the parent meets an uncommitted referencing insert:
    //    it fails once the insert commits.
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO c VALUES (1, 1)");
    let delete = s2.send("DELETE FROM p WHERE id = 1");
    s1.query_safe("COMMIT");
    let err = delete.wait().unwrap_err();
    assert_eq!(err.code(), "23503", "delete of a referenced parent: {err}");

    // 2. … and succeeds once the insert rolls back.
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO c VALUES (2, 2)");
    let delete = s2.send("DELETE FROM p WHERE id = 2");
    s1.query_safe("ROLLBACK");
    assert_eq!(
        delete.wait(),
        Ok(String::new()),
        "delete succeeds after the referencing insert rolls back"
    );

    // 3. An insert meets an uncommitted delete of its parent: it fails once
    //    the delete commits, succeeds once it rolls back.
    s1.query_safe("BEGIN");
    s1.query_safe("DELETE FROM p WHERE id = 3");
    let insert = s2.send("INSERT INTO c VALUES (3, 3)");
    s1.query_safe("COMMIT");
    let err = insert.wait().unwrap_err();
    assert_eq!(err.code(), "23503", "insert under a deleted parent: {err}");
    s1.query_safe("BEGIN");
    s1.query_safe("DELETE FROM p WHERE id = 4");
    let insert = s2.send("INSERT INTO c VALUES (4, 4)");
    s1.query_safe("ROLLBACK");
    assert_eq!(
        insert.wait(),
        Ok(String::new()),
        "insert succeeds after the parent's delete rolls back"
    );

    // 4. ON DELETE CASCADE reaches a referencing row inserted concurrently.
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO cc VALUES (5, 5)");
    let delete = s2.send("DELETE FROM p WHERE id = 5");
    s1.query_safe("COMMIT");
    assert_eq!(
        delete.wait(),
        Ok(String::new()),
        "cascading delete succeeds"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM cc WHERE pid = 5"),
        "0",
        "the concurrently inserted child went with its parent"
    );

    // 5. Many racing pairs leave no orphan.
    for k in 6..=10 {
        s1.query_safe("BEGIN");
        s1.query_safe(&format!("INSERT INTO c VALUES ({k}, {k})"));
        let delete = s2.send(&format!("DELETE FROM p WHERE id = {k}"));
        if k % 2 == 0 {
            s1.query_safe("COMMIT");
        } else {
            s1.query_safe("ROLLBACK");
        }
        let _ = delete.wait();
    }
    assert_eq!(orphans(&node), "", "no referencing row without its parent");
}

#[test]
fn constraints_replicate_and_survive_restart() {
    let node = primary();
    let standby = Node::standby_of(&node, "standby");

    // 1. ADD FOREIGN KEY rolled back leaves nothing; committed, it holds.
    node.safe_sql("CREATE TABLE d (id int PRIMARY KEY, pid int); INSERT INTO d VALUES (1, 1)");
    node.safe_sql(
        "BEGIN; ALTER TABLE d ADD CONSTRAINT d_fk FOREIGN KEY (pid) REFERENCES p; ROLLBACK",
    );
    node.safe_sql("INSERT INTO d VALUES (2, 99)");
    node.safe_sql("DELETE FROM d WHERE id = 2");
    node.safe_sql(
        "ALTER TABLE d ADD CONSTRAINT d_fk FOREIGN KEY (pid) REFERENCES p ON DELETE SET NULL",
    );
    node.safe_sql("DELETE FROM p WHERE id = 1");
    node.safe_sql("COMMENT ON TABLE d IS 'kept'; COMMENT ON COLUMN d.pid IS 'the parent'");

    // 2. The standby shows the same constraints and rows.
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    let constraints = "SELECT conname, confdeltype, pg_get_constraintdef(oid) FROM pg_constraint \
                       WHERE contype = 'f' ORDER BY conname";
    let expected = node.safe_sql(constraints);
    assert!(expected.contains("d_fk|n|FOREIGN KEY (pid) REFERENCES p(id) ON DELETE SET NULL"));
    assert_eq!(
        standby.safe_sql(constraints),
        expected,
        "standby's pg_constraint"
    );
    assert_eq!(
        standby.safe_sql("SELECT id, pid FROM d ORDER BY id"),
        "1|",
        "the SET NULL action replayed"
    );

    // 3. After a restart the keys are still enforced.
    node.restart();
    let err = node.sql("INSERT INTO c VALUES (100, 1000)").unwrap_err();
    assert_eq!(err.code(), "23503", "enforced after restart: {err}");
    node.safe_sql("INSERT INTO c VALUES (100, 2)");
    let err = node.sql("DELETE FROM p WHERE id = 2").unwrap_err();
    assert_eq!(err.code(), "23503", "referenced after restart: {err}");
    assert_eq!(
        node.safe_sql(constraints),
        expected,
        "constraints after restart"
    );
}
