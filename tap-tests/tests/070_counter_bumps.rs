//! Every bump of the completion counter, one check each.
//!
//! A session reuses its cached snapshot while `xact_completion_count` has
//! not moved. A completion that forgot to bump it leaves every session
//! that has been reusing its snapshot blind to the change — PostgreSQL's
//! September 2020 standby bug. Each step below first proves that an
//! observing session is reusing its cached snapshot
//! (`hotpair_stat_snapshots.snapshots_reused` rises while only it runs
//! statements), then performs one kind of completion and checks that the
//! observer's next statement sees it. Each check fails when the bump of
//! that kind of completion is removed, because the next statement then
//! reuses the stale snapshot:
//!
//! * primary: commit, abort, ROLLBACK TO SAVEPOINT (of a subtransaction
//!   with an xid), COMMIT PREPARED, ROLLBACK PREPARED;
//! * standby replay: a subtransaction's abort, the expiry of a transaction
//!   cut short by a crash of the primary (by a running-xacts record), and
//!   promotion.
//!
//! Replay of commit, abort, COMMIT PREPARED and ROLLBACK PREPARED is
//! covered by `022_completion_counter.rs`; the first running-xacts record
//! comes before any standby session can exist, so its bump is checked by a
//! unit test (`txn::procarray::known_assigned`, `first_running_xacts_bumps`).

use tap_tests::{Node, Session};

/// Makes `s` reuse its cached snapshot at least once; every other session
/// of the node is idle meanwhile, so the rise is `s`'s.
fn prove_reuse(s: &Session) {
    s.prove_snapshot_reuse("t", "session reuses its cached snapshot");
}

/// The next statement snapshot of `s` (`pg_current_snapshot()`):
/// `(xmin, xmax, xip)`.
fn snapshot(s: &Session) -> (u64, u64, Vec<u64>) {
    let snap = s.query_safe("SELECT pg_current_snapshot()");
    let mut parts = snap.split(':');
    let xmin: u64 = parts.next().and_then(|v| v.parse().ok()).expect("xmin");
    let xmax: u64 = parts.next().and_then(|v| v.parse().ok()).expect("xmax");
    let xip = parts
        .next()
        .unwrap_or("")
        .split(',')
        .filter_map(|v| v.parse().ok())
        .collect();
    (xmin, xmax, xip)
}

/// Whether `s`'s next statement snapshot treats `xid` as running.
fn running(s: &Session, xid: u64) -> bool {
    let (xmin, xmax, xip) = snapshot(s);
    xid >= xmin && (xid >= xmax || xip.contains(&xid))
}

fn xid_of(s: &Session) -> u64 {
    s.query_safe("SELECT pg_current_xact_id()")
        .parse()
        .expect("xid")
}

#[test]
fn primary_completions_invalidate_cached_snapshots() {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("max_prepared_transactions = 10");
    node.start();
    node.safe_sql("CREATE TABLE t (a int)");
    let s = node.background_session();
    let p = node.background_session();

    // 1. Commit.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (1)");
    let x = xid_of(&p);
    assert!(running(&s, x), "open transaction running");
    prove_reuse(&s);
    p.query_safe("COMMIT");
    assert!(!running(&s, x), "commit: {x} no longer running");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "commit visible"
    );

    // 2. Abort.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (2)");
    let x = xid_of(&p);
    assert!(running(&s, x), "open transaction running");
    prove_reuse(&s);
    p.query_safe("ROLLBACK");
    assert!(!running(&s, x), "abort: {x} no longer running");

    // 3. ROLLBACK TO SAVEPOINT of a subtransaction that wrote (has an
    //    xid): it is the newest finished xid, so the next snapshot's xmax
    //    passes it; a reused one keeps the old xmax.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (3)");
    p.query_safe("SAVEPOINT a");
    p.query_safe("INSERT INTO t VALUES (4)");
    let (_, xmax_before, _) = snapshot(&s);
    prove_reuse(&s);
    p.query_safe("ROLLBACK TO SAVEPOINT a");
    let (_, xmax_after, _) = snapshot(&s);
    assert!(
        xmax_after > xmax_before,
        "rollback to savepoint: xmax {xmax_after} passed {xmax_before}"
    );
    p.query_safe("COMMIT");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "2",
        "savepoint rolled back"
    );

    // 4. COMMIT PREPARED.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (5)");
    let x = xid_of(&p);
    p.query_safe("PREPARE TRANSACTION 'c'");
    assert!(running(&s, x), "prepared transaction running");
    prove_reuse(&s);
    p.query_safe("COMMIT PREPARED 'c'");
    assert!(!running(&s, x), "commit prepared: {x} no longer running");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "3",
        "commit prepared visible"
    );

    // 5. ROLLBACK PREPARED.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (6)");
    let x = xid_of(&p);
    p.query_safe("PREPARE TRANSACTION 'r'");
    assert!(running(&s, x), "prepared transaction running");
    prove_reuse(&s);
    p.query_safe("ROLLBACK PREPARED 'r'");
    assert!(!running(&s, x), "rollback prepared: {x} no longer running");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "3",
        "rollback prepared invisible"
    );
}

#[test]
fn standby_subxact_abort_expiry_and_promotion() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    primary.safe_sql("CREATE TABLE adv (a int)");
    let standby = Node::standby_of(&primary, "standby");
    let s = standby.background_session();
    let catchup = || primary.wait_for_replay(&standby);
    // A commit by a newer xid, then catch-up: the standby's snapshots'
    // xmax passes every xid assigned so far, so the running ones are
    // listed in xip (an xid at or above xmax runs anyway).
    let advance = || {
        primary.safe_sql("INSERT INTO adv VALUES (1)");
        catchup();
    };
    catchup();

    // 1. A subtransaction's abort (ROLLBACK TO SAVEPOINT) replayed: the
    //    subxid leaves KnownAssignedXids while its parent goes on.
    let p = primary.background_session();
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (1)");
    let top = xid_of(&p);
    advance();
    let (_, _, before) = snapshot(&s);
    assert!(
        before.contains(&top),
        "top-level xid running on the standby"
    );
    p.query_safe("SAVEPOINT a");
    p.query_safe("INSERT INTO t VALUES (2)");
    advance();
    let (_, _, after) = snapshot(&s);
    let sub: Vec<u64> = after
        .iter()
        .copied()
        .filter(|x| !before.contains(x))
        .collect();
    assert_eq!(sub.len(), 1, "one subxid appeared: {before:?} -> {after:?}");
    let sub = sub[0];
    prove_reuse(&s);
    p.query_safe("ROLLBACK TO SAVEPOINT a");
    catchup();
    assert!(
        !running(&s, sub),
        "subtransaction abort replayed: {sub} no longer running"
    );
    assert!(running(&s, top), "its parent still runs");
    p.query_safe("COMMIT");
    catchup();
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "parent committed"
    );

    // 2. Expiry by running-xacts: the primary crashes with a transaction
    //    open; no abort record is ever written for it. The restarted
    //    primary's running-xacts record (logged after the CHECKPOINT)
    //    says it is gone.
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (3)");
    let crashed = xid_of(&p);
    advance();
    assert!(
        snapshot(&s).2.contains(&crashed),
        "open transaction listed running on the standby"
    );
    prove_reuse(&s);
    drop(p);
    primary.kill9();
    primary.start();
    primary.safe_sql("CHECKPOINT");
    catchup();
    assert!(
        !running(&s, crashed),
        "running-xacts expiry replayed: {crashed} no longer running"
    );

    // 3. Promotion: a transaction open on the old primary is an orphan;
    //    the promoted node aborts it and leaves recovery.
    let p = primary.background_session();
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (4)");
    let orphan = xid_of(&p);
    advance();
    assert!(
        snapshot(&s).2.contains(&orphan),
        "open transaction listed running on the standby"
    );
    prove_reuse(&s);
    standby.promote();
    assert!(
        !running(&s, orphan),
        "promotion: orphan {orphan} no longer running"
    );
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "1",
        "orphan invisible"
    );
    drop(p);
}
