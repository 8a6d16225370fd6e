//! Completion-counter coverage on a hot standby: for commit and abort (and
//! COMMIT PREPARED / ROLLBACK PREPARED once 2PC is available), a standby
//! session that has been reusing a cached snapshot — proved by
//! `hotpair_stat_snapshots.snapshots_reused` rising — sees the effect in
//! its next statement after catch-up. If replay of that record did not
//! bump `xact_completion_count`, the session would keep its cached snapshot
//! and the check would fail.
//!
//! Skipped while the primary writes no WAL.

use tap_tests::{Node, Session};

fn reused(s: &Session) -> u64 {
    s.query_safe("SELECT snapshots_reused FROM hotpair_stat_snapshots")
        .parse()
        .expect("counter")
}

/// Makes `s` reuse its cached snapshot at least once (no completion in
/// between is replayed: the primary is idle).
fn prove_reuse(s: &Session) {
    let before = reused(s);
    s.query_safe("SELECT count(*) FROM t");
    s.query_safe("SELECT count(*) FROM t");
    assert!(
        reused(s) > before,
        "standby session reuses its cached snapshot"
    );
}

#[test]
fn replay_of_every_completion_invalidates_cached_snapshots() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 10");
    primary.start();
    if primary.lsn("flush").is_empty() {
        eprintln!("# SKIP: the primary writes no WAL yet");
        return;
    }
    primary.safe_sql("CREATE TABLE t (a int)");
    let standby = Node::standby_of(&primary, "standby");
    let s = standby.background_session();
    let catchup = || {
        let lsn = primary.lsn("insert");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    };
    catchup();

    // Commit.
    prove_reuse(&s);
    primary.safe_sql("INSERT INTO t VALUES (1)");
    catchup();
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "commit visible"
    );

    // Abort: the aborted xid leaves KnownAssignedXids; a later commit by a
    // newer xid must not be hidden behind it.
    let p = primary.background_session();
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (100)");
    let other = primary.background_session();
    other.query_safe("INSERT INTO t VALUES (2)");
    catchup();
    prove_reuse(&s);
    p.query_safe("ROLLBACK");
    catchup();
    let snap_after_abort = s.query_safe("SELECT pg_current_snapshot()");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "2",
        "abort replayed"
    );
    assert!(
        !snap_after_abort.is_empty(),
        "pg_current_snapshot works on the standby"
    );

    // COMMIT PREPARED and ROLLBACK PREPARED.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (3)");
    if p.query("PREPARE TRANSACTION 'c'").is_err() {
        eprintln!("# SKIP: prepared transactions not available");
        let _ = p.query("ROLLBACK");
        return;
    }
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (4)");
    p.query_safe("PREPARE TRANSACTION 'r'");
    catchup();
    prove_reuse(&s);
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "2",
        "prepared invisible"
    );
    primary.safe_sql("COMMIT PREPARED 'c'");
    catchup();
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "3",
        "commit prepared visible"
    );
    prove_reuse(&s);
    primary.safe_sql("ROLLBACK PREPARED 'r'");
    catchup();
    let before = s.query_safe("SELECT xact_completion_count FROM hotpair_stat_snapshots");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "3",
        "rollback prepared replayed"
    );
    assert!(!before.is_empty());
}
