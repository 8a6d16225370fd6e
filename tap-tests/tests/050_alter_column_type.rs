//! ALTER TABLE … ALTER COLUMN … TYPE rewrites the table into a new heap
//! file (sql.md, "ALTER TABLE"; `sql::tablerewrite`). The failures guarded
//! against: a standby or a restarted node reading the new file with the
//! old types (or the old file with the new ones), indexes left describing
//! the wrong file, a cached standby plan still reading the old file, and
//! an ALTER that never committed — the primary killed, or the standby
//! promoted, while it was open — leaving the table half rewritten.
//!
//! * `rewrite_replays_and_survives_restart`
//! * `uncommitted_rewrite_is_undone_after_a_crash`
//! * `uncommitted_rewrite_is_undone_at_promotion`

use tap_tests::utils::wait_until;
use tap_tests::Node;

/// The path of heap file `filenode` (pg_class.relfilenode) on `node`.
fn file_of(node: &Node, filenode: &str) -> std::path::PathBuf {
    node.data_dir().join("base").join(filenode)
}

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE t (k int PRIMARY KEY, v text, n int); \
         INSERT INTO t SELECT g, 'v' || g, g % 7 FROM generate_series(1, 2000) g; \
         CREATE INDEX t_n ON t (n)",
    );
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

/// The table as created, on `node`: integer keys, its values, its indexes.
#[track_caller]
fn original(node: &Node) {
    assert_eq!(
        node.safe_sql("SELECT pg_typeof(k), count(*), sum(k) FROM t GROUP BY 1"),
        "integer|2000|2001000",
        "{}: original type and rows",
        node.name()
    );
    assert_eq!(
        node.safe_sql("SELECT v FROM t WHERE k = 1234"),
        "v1234",
        "{}: primary key lookup",
        node.name()
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t WHERE n = 3"),
        "286",
        "{}: index on n",
        node.name()
    );
}

/// The table after `ALTER k TYPE bigint USING k * 10, ALTER v TYPE
/// varchar(10)`, on `node`.
#[track_caller]
fn rewritten(node: &Node) {
    assert_eq!(
        node.safe_sql("SELECT pg_typeof(k), count(*), sum(k), max(length(v)) FROM t GROUP BY 1"),
        "bigint|2000|20010000|5",
        "{}: new types and values",
        node.name()
    );
    assert_eq!(
        node.safe_sql("SELECT v FROM t WHERE k = 12340"),
        "v1234",
        "{}: lookup by the converted key",
        node.name()
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t WHERE n = 3"),
        "286",
        "{}: index on an unchanged column",
        node.name()
    );
    let plan = node.safe_sql("EXPLAIN SELECT v FROM t WHERE k = 12340");
    assert!(
        plan.contains("Index"),
        "{}: the rebuilt primary key serves lookups:\n{plan}",
        node.name()
    );
    assert_eq!(
        node.safe_sql(
            "SELECT atttypid::regtype, atttypmod FROM pg_attribute \
             WHERE attrelid = 't'::regclass AND attname = 'v'"
        ),
        "character varying|14",
        "{}: pg_attribute",
        node.name()
    );
}

#[test]
fn rewrite_replays_and_survives_restart() {
    let (primary, standby) = pair();
    primary.wait_for_replay(&standby);
    // 1. A standby session reads the table before the rewrite (its plan
    //    of the old file must not survive the catalog change).
    let s = standby.background_session();
    assert_eq!(s.query_safe("SELECT v FROM t WHERE k = 1234"), "v1234");
    // 2. A rewrite that rolls back changes nothing, on either node.
    primary.safe_sql(
        "BEGIN; ALTER TABLE t ALTER k TYPE text USING 'x' || k; \
         INSERT INTO t VALUES ('y', 'new', 1); ROLLBACK",
    );
    primary.wait_for_replay(&standby);
    original(&primary);
    original(&standby);
    // 3. The committed rewrite replays; the old heap file goes on both.
    let old_file = primary.safe_sql("SELECT relfilenode FROM pg_class WHERE relname = 't'");
    primary.safe_sql("ALTER TABLE t ALTER k TYPE bigint USING k * 10, ALTER v TYPE varchar(10)");
    primary.wait_for_replay(&standby);
    rewritten(&primary);
    rewritten(&standby);
    let new_file = primary.safe_sql("SELECT relfilenode FROM pg_class WHERE relname = 't'");
    assert_ne!(old_file, new_file, "the rewrite made a new heap file");
    for node in [&primary, &standby] {
        assert!(
            !file_of(node, &old_file).exists(),
            "{}: old heap file removed",
            node.name()
        );
        assert!(
            file_of(node, &new_file).exists(),
            "{}: new heap file present",
            node.name()
        );
    }
    assert_eq!(
        s.query_safe("SELECT v FROM t WHERE k = 1234"),
        "",
        "standby session: the old key is gone"
    );
    assert_eq!(s.query_safe("SELECT v FROM t WHERE k = 12340"), "v1234");
    // 4. Writes after it replay into the new file and its indexes.
    primary.safe_sql("INSERT INTO t VALUES (5000000000, 'big', 3)");
    primary.expect_error("INSERT INTO t VALUES (12340, 'dup', 0)", "23505");
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql("SELECT v FROM t WHERE k = 5000000000"),
        "big",
        "standby: row written after the rewrite"
    );
    primary.safe_sql("DELETE FROM t WHERE k = 5000000000");
    // 5. Both nodes restart with the new definition and rebuilt indexes.
    primary.restart();
    standby.restart();
    primary.wait_for_replay(&standby);
    rewritten(&primary);
    rewritten(&standby);
    // 6. The standby refuses it.
    standby.expect_error("ALTER TABLE t ALTER n TYPE bigint", "25006");
    // 7. While a rewrite is open, readers see the old table and writers
    //    wait; the waiting INSERT then lands in the new file.
    let alter = primary.background_session();
    let writer = primary.background_session();
    alter.query_safe("BEGIN");
    alter.query_safe("ALTER TABLE t ALTER n TYPE bigint");
    assert_eq!(
        primary.safe_sql("SELECT pg_typeof(n), count(*) FROM t GROUP BY 1"),
        "integer|2000",
        "reader during the rewrite: the committed table"
    );
    let insert = writer.send("INSERT INTO t VALUES (30000, 'w', 5000000000)");
    std::thread::sleep(std::time::Duration::from_millis(500));
    if insert.is_finished() {
        panic!("writer did not wait for the rewrite: {:?}", insert.wait());
    }
    alter.query_safe("COMMIT");
    insert.wait().expect("writer after the rewrite");
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        assert_eq!(
            node.safe_sql("SELECT v, n, pg_typeof(n) FROM t WHERE k = 30000"),
            "w|5000000000|bigint",
            "{}: the waiting writer's row",
            node.name()
        );
        assert_eq!(
            node.safe_sql("SELECT count(*) FROM t"),
            "2001",
            "{}: no row lost",
            node.name()
        );
    }
    // 8. A rewrite waits for a transaction that wrote the table; if that
    //    transaction then writes again, one of the two is a deadlock
    //    victim (40P01) and the other completes: nothing hangs.
    writer.query_safe("BEGIN");
    writer.query_safe("INSERT INTO t VALUES (30001, 'w2', 1)");
    let rewrite = alter.send("ALTER TABLE t ALTER n TYPE numeric");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!rewrite.is_finished(), "the rewrite waits for the writer");
    let second = writer.query("INSERT INTO t VALUES (30002, 'w3', 1)");
    let first = rewrite.wait();
    match (&first, &second) {
        (Ok(_), Err(e)) | (Err(e), Ok(_)) => assert_eq!(e.code(), "40P01", "deadlock victim"),
        _ => panic!("expected one deadlock victim: {first:?} / {second:?}"),
    }
    writer.query_safe("ROLLBACK");
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t"),
        "2001",
        "the writer's rows rolled back"
    );
}

/// Starts, in a session of `primary`, an ALTER TYPE transaction that
/// also writes through the new definition, and returns the session.
fn open_rewrite(primary: &Node, standby: &Node) -> (tap_tests::session::Session, String) {
    let s = primary.background_session();
    s.query_safe("BEGIN");
    s.query_safe("ALTER TABLE t ALTER k TYPE text USING 'x' || k");
    let new_file = s.query_safe("SELECT relfilenode FROM pg_class WHERE relname = 't'");
    s.query_safe("INSERT INTO t VALUES ('fresh', 'f', 3)");
    assert_eq!(s.query_safe("SELECT v FROM t WHERE k = 'x1234'"), "v1234");
    // Another commit ships (and flushes) the WAL of the rewrite.
    primary.safe_sql("CREATE TABLE other (a int)");
    primary.wait_for_replay(standby);
    original(primary);
    original(standby);
    assert!(
        file_of(standby, &new_file).exists(),
        "standby: the rewrite's file replayed"
    );
    (s, new_file)
}

#[test]
fn uncommitted_rewrite_is_undone_after_a_crash() {
    let (primary, standby) = pair();
    let (s, new_file) = open_rewrite(&primary, &standby);
    primary.kill9();
    drop(s);
    primary.start();
    original(&primary);
    assert!(
        !file_of(&primary, &new_file).exists(),
        "primary: no orphan heap file after the crash"
    );
    // The table is writable and its key enforced.
    primary.expect_error("INSERT INTO t VALUES (1234, 'dup', 0)", "23505");
    primary.safe_sql("INSERT INTO t VALUES (2001, 'v2001', 6)");
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql("SELECT v, pg_typeof(k) FROM t WHERE k = 2001"),
        "v2001|integer",
        "standby follows the undo"
    );
    primary.safe_sql("DELETE FROM t WHERE k = 2001");
    primary.wait_for_replay(&standby);
    original(&standby);
    assert!(
        !file_of(&standby, &new_file).exists(),
        "standby: the undone rewrite's file removed"
    );
    // A second restart finds the same (the undo was persisted).
    primary.restart();
    original(&primary);
    // And the rewrite can be done again.
    primary.safe_sql("ALTER TABLE t ALTER k TYPE bigint USING k * 10, ALTER v TYPE varchar(10)");
    primary.wait_for_replay(&standby);
    rewritten(&primary);
    rewritten(&standby);
}

#[test]
fn uncommitted_rewrite_is_undone_at_promotion() {
    let (primary, standby) = pair();
    let (s, new_file) = open_rewrite(&primary, &standby);
    primary.kill9();
    drop(s);
    standby.promote();
    original(&standby);
    // Promotion removes the orphaned transactions' creations after the
    // role switch that lets sessions in (`Node::finish_recovery`, step 6):
    // wait for it rather than race it.
    wait_until("the promoted standby removed the orphan heap file", || {
        !file_of(&standby, &new_file).exists()
    });
    standby.expect_error("INSERT INTO t VALUES (1234, 'dup', 0)", "23505");
    standby.safe_sql("ALTER TABLE t ALTER k TYPE bigint USING k * 10, ALTER v TYPE varchar(10)");
    rewritten(&standby);
    standby.restart();
    rewritten(&standby);
}
