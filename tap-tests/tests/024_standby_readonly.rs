//! A standby refuses writes (25006), and refuses sessions (57P03) while it
//! cannot serve them (not yet consistent, or `hot_standby = off`).

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

/// A standby that is replaying but does not serve sessions refuses them
/// with 57P03 and PostgreSQL's message: deterministically with
/// `hot_standby = off` (a standby that is merely not yet consistent gives
/// the same SQLSTATE with "not yet accepting connections", see the factory
/// in standby/src/main.rs). Replication itself goes on, and the same data
/// directory serves sessions once `hot_standby` is back on.
#[test]
fn standby_refuses_connections_it_cannot_serve() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    primary.safe_sql("INSERT INTO t VALUES (1)");

    // The first start takes the base backup into the empty directory;
    // then restart with hot standby off.
    let standby = Node::standby_of(&primary, "standby");
    standby.stop("fast");
    standby.append_conf("hot_standby = off");
    let offset = standby.log_position();
    standby.start_until(&["consistent recovery state reached at"]);
    let err = match tap_tests::Session::try_connect("standby", &standby.connstr()) {
        Ok(_) => panic!("a standby with hot_standby = off accepted a session"),
        Err(e) => e,
    };
    assert_eq!(err.code(), "57P03", "{err:?}");
    assert_eq!(err.severity, "FATAL", "{err:?}");
    assert_eq!(
        err.message, "the database system is not accepting connections",
        "{err:?}"
    );
    assert!(!standby.log_contains_after("ready to accept read-only connections", offset));

    // It still streams and replays: the primary sees it streaming.
    assert!(primary.poll_query_until(
        "SELECT state FROM pg_stat_replication WHERE application_name = 'standby'",
        "streaming"
    ));
    primary.safe_sql("INSERT INTO t VALUES (2)");
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));

    // The same standby with hot standby on serves what it replayed.
    standby.stop("fast");
    standby.append_conf("hot_standby = on");
    standby.start();
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "2");
}
