//! A standby whose first running-xacts record has an overflowed subxid
//! list.
//!
//! A running-xacts record lists at most 64 subxids of a transaction; with
//! more it only says `subxid_overflow`. A standby built from such a
//! record does not know the other subxids of a transaction still running
//! on the primary. Had it treated them as finished, a standby snapshot
//! taken while the transaction ran would — once the commit was replayed —
//! see the rows of those subtransactions but not the parent's: half a
//! transaction. The standby instead counts every unfinished xid from the
//! record's oldest running one as running, and marks its snapshots
//! suboverflowed until that transaction is gone.

use tap_tests::Node;

#[test]
fn overflowed_first_running_xacts_keeps_subxids_running() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    primary.safe_sql("CREATE TABLE adv (a int)");

    // 1. A transaction with 70 subtransactions that wrote (70 subxids:
    //    more than a running-xacts record lists), still open.
    let p = primary.background_session();
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (0)");
    for i in 1..=70 {
        p.query_safe(&format!("SAVEPOINT s{i}"));
        p.query_safe(&format!("INSERT INTO t VALUES ({i})"));
    }
    // A later commit: a standby snapshot's xmax passes every subxid.
    primary.safe_sql("INSERT INTO adv VALUES (1)");

    // 2. The standby starts from a running-xacts record logged now (base
    //    backup), its subxid list overflowed.
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let s = standby.background_session();
    assert_eq!(
        s.query_safe("SELECT count(*) FROM adv"),
        "1",
        "later commit visible"
    );
    s.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "0",
        "open transaction invisible"
    );

    // 3. The transaction commits; the snapshot taken before still sees
    //    none of it, a new one all of it.
    p.query_safe("COMMIT");
    primary.wait_for_replay(&standby);
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "0",
        "no subtransaction's rows in the older snapshot"
    );
    s.query_safe("COMMIT");
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "71",
        "the whole transaction in a new snapshot"
    );
}
