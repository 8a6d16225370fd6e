//! Completion-counter coverage on a hot standby: for commit, abort,
//! COMMIT PREPARED and ROLLBACK PREPARED, a standby
//! session that has been reusing a cached snapshot — proved by
//! `hotpair_stat_snapshots.snapshots_reused` rising — sees the effect in
//! its next statement after catch-up. If replay of that record did not
//! bump `xact_completion_count`, the session would keep its cached snapshot
//! and the check would fail.
//!
//! Each of the four checks fails if the bump is removed from replay: the
//! statement after catch-up then reuses the cached snapshot, which still
//! shows the transaction as running.

use tap_tests::{Node, Session};

/// Makes `s` reuse its cached snapshot at least once (no completion in
/// between is replayed: the primary is idle).
fn prove_reuse(s: &Session) {
    s.prove_snapshot_reuse("t", "standby session reuses its cached snapshot");
}

/// Whether the standby session's next statement snapshot
/// (`pg_current_snapshot()`, `xmin:xmax:xip,…`) shows `xid` as running. An
/// aborted transaction's rows are invisible either way, so this is how an
/// abort's effect on a cached snapshot shows.
fn running_in_snapshot(s: &Session, xid: &str) -> bool {
    let snap = s.query_safe("SELECT pg_current_snapshot()");
    let xid: u64 = xid.parse().expect("xid");
    let mut parts = snap.split(':');
    let xmin: u64 = parts.next().and_then(|v| v.parse().ok()).expect("xmin");
    let xmax: u64 = parts.next().and_then(|v| v.parse().ok()).expect("xmax");
    let xip: Vec<u64> = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    xid >= xmin && (xid >= xmax || xip.contains(&xid))
}

#[test]
fn replay_of_every_completion_invalidates_cached_snapshots() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 10");
    primary.start();
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
    let aborted = p.query_safe("SELECT pg_current_xact_id()");
    let other = primary.background_session();
    other.query_safe("INSERT INTO t VALUES (2)");
    catchup();
    assert!(
        running_in_snapshot(&s, &aborted),
        "in progress before abort"
    );
    prove_reuse(&s);
    p.query_safe("ROLLBACK");
    catchup();
    assert!(
        !running_in_snapshot(&s, &aborted),
        "abort replayed: the next statement's snapshot no longer lists {aborted}"
    );
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "2",
        "abort replayed"
    );

    // COMMIT PREPARED and ROLLBACK PREPARED.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (3)");
    p.query_safe("PREPARE TRANSACTION 'c'");
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (4)");
    let rolled_back = p.query_safe("SELECT pg_current_xact_id()");
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
    assert!(
        running_in_snapshot(&s, &rolled_back),
        "prepared transaction running on the standby"
    );
    prove_reuse(&s);
    primary.safe_sql("ROLLBACK PREPARED 'r'");
    catchup();
    assert!(
        !running_in_snapshot(&s, &rolled_back),
        "rollback prepared replayed: the next statement's snapshot no longer lists {rolled_back}"
    );
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "3",
        "rollback prepared replayed"
    );
}
