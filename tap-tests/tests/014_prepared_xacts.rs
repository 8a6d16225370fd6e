//! Prepared transactions (two-phase commit) survive crash and restart.
//!
//! `PREPARE TRANSACTION` hands a transaction to the server: its session is
//! free, but the transaction keeps running — its rows invisible, its row
//! locks held — until any session says `COMMIT PREPARED` or `ROLLBACK
//! PREPARED`. A transaction manager relies on that promise across a crash:
//! a server that forgets a prepared transaction (or its locks) after
//! `kill -9`, or resurrects a finished one, silently breaks atomicity across
//! databases. The checks below hold for any interleaving: "still locked" is
//! shown by a writer that can only end by being cancelled while the
//! prepared transaction exists, and "waiters are released" by a writer that
//! must see the committed version once it ends.

use tap_tests::{Node, Session};

/// Sorted gids of `pg_prepared_xacts`, one per line.
const GIDS: &str = "SELECT gid FROM pg_prepared_xacts ORDER BY gid";
/// The whole table, in key order.
const ROWS: &str = "SELECT id, v FROM t ORDER BY id";

/// Shows that the row `id` is locked: an UPDATE of it from `s` blocks until
/// cancelled (57014); if the row were not locked the UPDATE would end by
/// itself, successfully.
fn assert_row_locked(s: &Session, id: i32) {
    let pending = s.send(&format!("UPDATE t SET v = v + 1000 WHERE id = {id}"));
    let err = s
        .cancel_until_finished(pending)
        .expect_err("UPDATE of a row of a prepared transaction must wait");
    assert_eq!(err.code(), "57014", "cancelled while waiting: {err}");
}

#[test]
fn prepared_transactions_survive_crash_and_restart() {
    // 1. A primary that allows prepared transactions, a table, two
    //    prepared transactions that insert, update and delete.
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("max_prepared_transactions = 5");
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)");
    node.safe_sql("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)");
    let s1 = node.background_session();
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO t VALUES (10, 10)");
    s1.query_safe("UPDATE t SET v = 20 WHERE id = 2");
    s1.query_safe("PREPARE TRANSACTION 'p_commit'");
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO t VALUES (11, 11)");
    s1.query_safe("DELETE FROM t WHERE id = 3");
    s1.query_safe("PREPARE TRANSACTION 'p_rollback'");
    // The session is free again and commits on its own.
    s1.query_safe("INSERT INTO t VALUES (4, 4)");
    assert_eq!(
        node.safe_sql(GIDS),
        "p_commit\np_rollback",
        "both transactions prepared"
    );
    assert_eq!(
        node.safe_sql(ROWS),
        "1|1\n2|2\n3|3\n4|4",
        "prepared changes are invisible"
    );
    let err = node
        .sql("BEGIN; PREPARE TRANSACTION 'p_commit'")
        .unwrap_err();
    assert_eq!(err.code(), "42710", "gid in use: {err}");
    drop(s1);

    // 2. Crash. After restart both are still prepared, their changes still
    //    invisible, their rows still locked.
    node.kill9();
    node.start();
    assert_eq!(
        node.safe_sql(GIDS),
        "p_commit\np_rollback",
        "prepared transactions survive a crash"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM pg_prepared_xacts WHERE prepared IS NOT NULL"),
        "2",
        "prepare time kept"
    );
    assert_eq!(
        node.safe_sql(ROWS),
        "1|1\n2|2\n3|3\n4|4",
        "still invisible after the crash"
    );
    let s2 = node.background_session();
    assert_row_locked(&s2, 2);
    assert_row_locked(&s2, 3);

    // 3. A writer waiting on the prepared update proceeds once another
    //    session commits it, and sees the committed version.
    let waiting = s2.send("UPDATE t SET v = v + 100 WHERE id = 2");
    assert_eq!(
        node.safe_sql("COMMIT PREPARED 'p_commit'"),
        "",
        "COMMIT PREPARED after the crash"
    );
    assert_eq!(
        waiting.wait(),
        Ok(String::new()),
        "waiting UPDATE completes"
    );
    assert_eq!(
        node.safe_sql(ROWS),
        "1|1\n2|120\n3|3\n4|4\n10|10",
        "committed prepared changes visible; the waiter saw them"
    );
    let err = node.sql("COMMIT PREPARED 'p_commit'").unwrap_err();
    assert_eq!(err.code(), "42704", "finished once only: {err}");

    // 4. ROLLBACK PREPARED discards the other one; its key is free.
    node.safe_sql("ROLLBACK PREPARED 'p_rollback'");
    assert_eq!(
        node.safe_sql(ROWS),
        "1|1\n2|120\n3|3\n4|4\n10|10",
        "rolled back prepared changes never appear"
    );
    node.safe_sql("UPDATE t SET v = 33 WHERE id = 3");
    node.safe_sql("INSERT INTO t VALUES (11, 111)");
    assert_eq!(node.safe_sql(GIDS), "", "nothing prepared");

    // 5. Clean restart with a prepared transaction (its state is written at
    //    the shutdown checkpoint), and a crash after a CHECKPOINT (the WAL
    //    holding its PREPARE may be gone; the state file is not).
    node.safe_sql("BEGIN; UPDATE t SET v = 40 WHERE id = 4; PREPARE TRANSACTION 'p_clean'");
    node.restart();
    assert_eq!(node.safe_sql(GIDS), "p_clean", "survives a clean restart");
    assert_row_locked(&s_new(&node), 4);
    node.safe_sql("BEGIN; DELETE FROM t WHERE id = 1; PREPARE TRANSACTION 'p_ckpt'");
    node.safe_sql("CHECKPOINT");
    node.safe_sql("INSERT INTO t VALUES (5, 5)");
    node.kill9();
    node.start();
    assert_eq!(
        node.safe_sql(GIDS),
        "p_ckpt\np_clean",
        "both survive checkpoint + crash"
    );
    assert_row_locked(&s_new(&node), 1);
    node.safe_sql("COMMIT PREPARED 'p_clean'");
    node.safe_sql("COMMIT PREPARED 'p_ckpt'");
    assert_eq!(
        node.safe_sql(ROWS),
        "2|120\n3|33\n4|40\n5|5\n10|10\n11|111",
        "final contents"
    );

    // 6. Finished transactions stay finished across another crash.
    node.kill9();
    node.start();
    assert_eq!(node.safe_sql(GIDS), "", "nothing resurrected");
    assert_eq!(
        node.safe_sql(ROWS),
        "2|120\n3|33\n4|40\n5|5\n10|10\n11|111",
        "contents after the last crash"
    );
    node.stop("fast");
}

/// A fresh session (the old ones died with the server).
fn s_new(node: &Node) -> Session {
    node.background_session()
}

#[test]
fn prepared_transaction_errors() {
    // PostgreSQL's messages and codes for the misuse cases.
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("max_prepared_transactions = 1");
    node.start();
    // PREPARE outside a transaction block: a WARNING, nothing prepared, the
    // command still succeeds (psql exits 0).
    let (status, _, stderr) = node.psql("PREPARE TRANSACTION 'outside'");
    assert_eq!(
        status, 0,
        "PREPARE outside a block is not an error: {stderr}"
    );
    assert!(
        stderr.contains("WARNING:  there is no transaction in progress"),
        "PREPARE outside a block warns: {stderr}"
    );
    assert_eq!(node.safe_sql(GIDS), "", "nothing prepared outside a block");
    let s = node.background_session();
    let err = s.query_err("COMMIT PREPARED 'nope'");
    assert_eq!(
        (err.code(), err.message.as_str()),
        (
            "42704",
            "prepared transaction with identifier \"nope\" does not exist"
        )
    );
    s.query_safe("BEGIN");
    let err = s.query_err("ROLLBACK PREPARED 'nope'");
    assert_eq!(
        (err.code(), err.message.as_str()),
        (
            "25001",
            "ROLLBACK PREPARED cannot run inside a transaction block"
        )
    );
    s.query_safe("ROLLBACK");
    s.query_safe("BEGIN");
    s.query_safe("PREPARE TRANSACTION 'one'");
    s.query_safe("BEGIN");
    let err = s.query_err("PREPARE TRANSACTION 'two'");
    assert_eq!(
        (err.code(), err.message.as_str()),
        ("53200", "maximum number of prepared transactions reached")
    );
    // The failed PREPARE rolled back: the session is idle, not in a block.
    assert_eq!(s.query_safe("SELECT 1"), "1");
    s.query_safe("ROLLBACK PREPARED 'one'");

    // Disabled (the default): 55000.
    node.stop("fast");
    node.append_conf("max_prepared_transactions = 0");
    node.start();
    let err = node.sql("BEGIN; PREPARE TRANSACTION 'x'").unwrap_err();
    assert_eq!(
        (err.code(), err.message.as_str()),
        ("55000", "prepared transactions are disabled")
    );
    let (_, _, stderr) = node.psql("BEGIN; PREPARE TRANSACTION 'x'");
    assert!(
        stderr.contains("HINT:  Set max_prepared_transactions to a nonzero value."),
        "PostgreSQL's hint: {stderr}"
    );
    node.stop("fast");
}
