//! pg_locks, pg_blocking_pids and pg_stat_activity's lock wait
//! (`txn::procarray::xact_locks`).
//!
//! Monitoring queries find who blocks whom through pg_locks: each running
//! transaction holds an ExclusiveLock on its xid, and a session waiting
//! for a row's writer waits for a ShareLock on the writer's xid. This test
//! makes one session wait for another's row lock and checks the rows
//! PostgreSQL would show for both, pg_blocking_pids, the waiter's
//! `wait_event_type = Lock`, `backend_xid`, and that everything clears
//! when the holder commits.
//!
//! * `a_row_lock_wait_shows_in_pg_locks`

use tap_tests::Node;

#[test]
fn a_row_lock_wait_shows_in_pg_locks() {
    let node = Node::new("primary");
    node.init(true);
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)");

    let holder = node.background_session();
    let waiter = node.background_session();
    let holder_pid = holder.query_safe("SELECT pg_backend_pid()");
    let waiter_pid = waiter.query_safe("SELECT pg_backend_pid()");
    holder.query_safe("BEGIN");
    holder.query_safe("UPDATE t SET v = 1 WHERE id = 1");
    let xid = holder.query_safe("SELECT pg_current_xact_id()");

    // The holder's own lock, before anyone waits.
    assert_eq!(
        node.safe_sql(&format!(
            "SELECT locktype, transactionid, mode, granted FROM pg_locks WHERE pid = {holder_pid}"
        )),
        format!("transactionid|{xid}|ExclusiveLock|t")
    );
    assert_eq!(
        node.safe_sql(&format!(
            "SELECT backend_xid FROM pg_stat_activity WHERE pid = {holder_pid}"
        )),
        xid
    );

    let pending = waiter.send("UPDATE t SET v = 2 WHERE id = 1");
    assert!(
        node.poll_query_until(
            &format!("SELECT count(*) FROM pg_locks WHERE pid = {waiter_pid} AND NOT granted"),
            "1"
        ),
        "the waiter's lock request shows"
    );
    assert_eq!(
        node.safe_sql(&format!(
            "SELECT locktype, transactionid, mode FROM pg_locks WHERE pid = {waiter_pid} AND NOT granted"
        )),
        format!("transactionid|{xid}|ShareLock")
    );
    assert_eq!(
        node.safe_sql(&format!("SELECT pg_blocking_pids({waiter_pid})")),
        format!("{{{holder_pid}}}")
    );
    assert_eq!(
        node.safe_sql(&format!("SELECT pg_blocking_pids({holder_pid})")),
        "{}"
    );
    assert_eq!(
        node.safe_sql(&format!(
            "SELECT wait_event_type, wait_event, state FROM pg_stat_activity WHERE pid = {waiter_pid}"
        )),
        "Lock|transactionid|active"
    );
    // The usual "who blocks whom" join.
    assert_eq!(
        node.safe_sql(
            "SELECT w.pid, h.pid FROM pg_locks w JOIN pg_locks h \
               ON h.transactionid = w.transactionid AND h.granted AND h.pid <> w.pid \
             WHERE NOT w.granted"
        ),
        format!("{waiter_pid}|{holder_pid}")
    );

    holder.query_safe("COMMIT");
    pending.wait_ok();
    assert_eq!(node.safe_sql("SELECT v FROM t"), "2");
    assert!(
        node.poll_query_until(
            &format!("SELECT count(*) FROM pg_locks WHERE pid IN ({holder_pid}, {waiter_pid})"),
            "0"
        ),
        "no locks once both transactions ended"
    );
}
