//! A standby refuses writes (25006) and, before it is consistent,
//! connections (57P03).

use tap_tests::Node;

#[test]
fn standby_refuses_writes() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    let standby = Node::standby_of(&primary, "standby");
    let s = standby.background_session();
    assert_eq!(s.query_safe("SELECT pg_is_in_recovery()"), "t");
    for sql in [
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 2",
        "DELETE FROM t",
        "CREATE TABLE u (a int)",
    ] {
        let e = s.query_err(sql);
        assert_eq!(e.code(), "25006", "{sql}: {e:?}");
    }
    // Sessions are accepted once replay is consistent, which may be before
    // the walreceiver has connected.
    assert!(standby.poll_query_until("SELECT status FROM pg_stat_wal_receiver", "streaming"));
    assert!(standby.log_contains("started streaming WAL from primary at"));
    assert!(standby.log_contains("consistent recovery state reached at"));
}
