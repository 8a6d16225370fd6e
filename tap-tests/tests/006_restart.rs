//! Data survives a clean stop and start.
//!
//! A fast shutdown must leave the data directory complete: every committed
//! row on disk (dirty buffers written), nothing rolled back resurrected, and
//! the unique indexes — which may live only in memory and be rebuilt from
//! the heap at start — enforcing the same keys as before. A server that
//! forgets to flush at shutdown, or rebuilds its indexes from the wrong
//! tuples, passes every single-run test and fails here.

use tap_tests::Node;

#[test]
fn restart_keeps_data() {
    // 1. A primary with a keyed table, more rows than fit on one page, some
    //    updated, some deleted, and a rolled-back transaction.
    let node = Node::new("primary");
    node.init(false);
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY, payload text NOT NULL, code text)");
    node.safe_sql("CREATE UNIQUE INDEX t_code ON t (code)");
    node.safe_sql(
        "INSERT INTO t SELECT g, repeat('x', 100), 'c' || g FROM generate_series(1, 2000) g",
    );
    node.safe_sql("UPDATE t SET payload = 'updated' WHERE id <= 10");
    node.safe_sql("DELETE FROM t WHERE id > 1990");
    node.safe_sql("BEGIN; INSERT INTO t VALUES (5000, 'rolled back', 'c5000'); ROLLBACK");
    let summary = "SELECT count(*), sum(id), min(id), max(id) FROM t";
    let before = node.safe_sql(summary);
    assert_eq!(
        before.split('|').next(),
        Some("1990"),
        "rows before the restart"
    );

    // 2. Fast stop: a shutdown checkpoint writes the dirty buffers and the
    //    log says it shut down cleanly; the next start-up needs no redo.
    node.stop("fast");
    assert!(
        node.log_contains("checkpoint complete: wrote"),
        "shutdown checkpoint logged"
    );
    assert!(
        node.log_contains("database system is shut down"),
        "clean shutdown logged"
    );
    let pos = node.log_position();
    node.start();
    assert!(
        node.log_contains_after("database system was shut down at", pos),
        "start-up reads a clean shutdown from the control file"
    );
    assert!(
        !node.log_contains_after("redo starts at", pos),
        "no redo after a shutdown checkpoint"
    );
    assert!(
        node.log_contains_after("database system is ready to accept connections", pos),
        "ready logged"
    );

    // 3. The same rows, with their updates and deletions, after the restart.
    assert_eq!(
        node.safe_sql(summary),
        before,
        "table summary survives the restart"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t WHERE payload = 'updated'"),
        "10",
        "updates survive"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t WHERE id > 1990"),
        "0",
        "deletions survive"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t WHERE id = 5000"),
        "0",
        "rolled back row stays absent"
    );
    assert_eq!(
        node.safe_sql("SELECT payload FROM t WHERE id = 1"),
        "updated",
        "row by key after restart"
    );

    // 4. The primary key and the unique index are still enforced, and freed
    //    keys are free.
    let err = node
        .sql("INSERT INTO t VALUES (1, 'dup', 'fresh')")
        .unwrap_err();
    assert_eq!(
        err.code(),
        "23505",
        "primary key enforced after restart: {err}"
    );
    let err = node
        .sql("INSERT INTO t VALUES (9999, 'dup', 'c1')")
        .unwrap_err();
    assert_eq!(
        err.code(),
        "23505",
        "unique index enforced after restart: {err}"
    );
    node.safe_sql("INSERT INTO t VALUES (1995, 'reinserted', 'c1995')");
    node.safe_sql("INSERT INTO t VALUES (5000, 'now committed', 'c5000')");

    // 5. A second cycle keeps what the first restarted server wrote.
    node.restart();
    assert_eq!(
        node.safe_sql("SELECT id, payload FROM t WHERE id IN (1995, 5000) ORDER BY id"),
        "1995|reinserted\n5000|now committed",
        "rows written after the first restart survive the second"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM t"),
        "1992",
        "row count after two restarts"
    );

    node.stop("fast");
}
