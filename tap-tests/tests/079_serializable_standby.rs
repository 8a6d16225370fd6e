//! SERIALIZABLE on a hot standby is refused, as in PostgreSQL 15.
//!
//! A standby cannot track the rw-conflicts of the primary's transactions,
//! so PostgreSQL refuses serializable mode during recovery: asking for it
//! (`BEGIN ISOLATION LEVEL SERIALIZABLE`, `SET TRANSACTION …`, `SET
//! transaction_isolation`) fails with 0A000 "cannot use serializable mode
//! in a hot standby" and the hint to use REPEATABLE READ; a
//! `default_transaction_isolation` of serializable is accepted, shows in
//! `SHOW transaction_isolation`, and fails the first statement that needs
//! a snapshot, with a DETAIL naming the setting. The failure guarded
//! against: a standby silently running snapshot isolation for clients
//! that asked for serializability. (The harness has no PostgreSQL
//! standbys; the expectations were taken from a PostgreSQL 15 standby.)

use tap_tests::{Node, SqlError};

const REFUSED: &str = "cannot use serializable mode in a hot standby";
const HINT: &str = "You can use REPEATABLE READ instead.";

fn assert_refused(r: Result<String, SqlError>, what: &str) {
    let e = r.expect_err(what);
    assert_eq!(e.code(), "0A000", "{what}: SQLSTATE");
    assert_eq!(e.message, REFUSED, "{what}: message");
    assert_eq!(e.hint.as_deref(), Some(HINT), "{what}: hint");
    assert_eq!(e.detail, None, "{what}: no detail");
}

#[test]
fn serializable_refused_on_standby() {
    // 1. A primary with a table, and its standby.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY)");
    primary.safe_sql("INSERT INTO t VALUES (1)");
    primary.backup("backup");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "backup", true);
    standby.start();
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    let s = standby.background_session();

    // 2. BEGIN ISOLATION LEVEL SERIALIZABLE fails and leaves no block.
    assert_refused(
        s.query("BEGIN ISOLATION LEVEL SERIALIZABLE"),
        "BEGIN ISOLATION LEVEL SERIALIZABLE",
    );
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "no failed block left"
    );
    assert_refused(
        s.query("START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY"),
        "START TRANSACTION … SERIALIZABLE",
    );

    // 3. SET TRANSACTION in a block fails the block.
    s.query_safe("BEGIN");
    assert_refused(
        s.query("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    );
    assert_eq!(
        s.query("SELECT 1").expect_err("block failed").code(),
        "25P02",
        "the block failed"
    );
    s.query_safe("ROLLBACK");
    s.query_safe("BEGIN");
    assert_refused(
        s.query("SET transaction_isolation = 'serializable'"),
        "SET transaction_isolation",
    );
    s.query_safe("ROLLBACK");

    // Outside a block both forms still check (after SET TRANSACTION's
    // warning): the statement's own transaction would change level.
    assert_refused(
        s.query("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
        "SET TRANSACTION outside a block",
    );
    assert_refused(
        s.query("SET transaction_isolation = 'serializable'"),
        "SET transaction_isolation outside a block",
    );

    // 4. REPEATABLE READ is fine.
    s.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "repeatable read works"
    );
    s.query_safe("COMMIT");

    // 5. default_transaction_isolation = serializable is accepted; the
    //    first statement that needs a snapshot fails, naming the setting.
    s.query_safe("SET default_transaction_isolation = 'serializable'");
    assert_eq!(
        s.query_safe("SHOW transaction_isolation"),
        "serializable",
        "the default shows"
    );
    let e = s
        .query("SELECT count(*) FROM t")
        .expect_err("default refused");
    assert_eq!(e.code(), "0A000", "default: SQLSTATE");
    assert_eq!(e.message, REFUSED, "default: message");
    assert_eq!(
        e.detail.as_deref(),
        Some("\"default_transaction_isolation\" is set to \"serializable\"."),
        "default: detail"
    );
    assert_eq!(
        e.hint.as_deref(),
        Some("You can use \"SET default_transaction_isolation = 'repeatable read'\" to change the default."),
        "default: hint"
    );
    s.query_safe("BEGIN");
    assert_eq!(
        s.query_safe("SHOW transaction_isolation"),
        "serializable",
        "a block takes the default"
    );
    assert_eq!(
        s.query("SELECT count(*) FROM t")
            .expect_err("in a block")
            .code(),
        "0A000",
        "refused in a block too"
    );
    s.query_safe("ROLLBACK");
    // Asking for the level already in force is no change: BEGIN succeeds,
    // the snapshot is refused.
    s.query_safe("BEGIN ISOLATION LEVEL SERIALIZABLE");
    let e = s
        .query("SELECT count(*) FROM t")
        .expect_err("explicit = default");
    assert_eq!(
        (e.code(), e.detail.is_some()),
        ("0A000", true),
        "refused at the snapshot, naming the default"
    );
    s.query_safe("ROLLBACK");
    s.query_safe("SET default_transaction_isolation = 'repeatable read'");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "reset default works"
    );

    // 6. The primary runs serializable transactions.
    let p = primary.background_session();
    p.query_safe("BEGIN ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(
        p.query_safe("SELECT count(*) FROM t"),
        "1",
        "primary serializable read"
    );
    p.query_safe("COMMIT");
}
