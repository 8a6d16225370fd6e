//! A replication link that goes silent (issue 21 item 5, first part).
//!
//! The standby streams through a proxy ([`tap_tests::netproxy`]). The
//! proxy black-holes the link — it stops forwarding in both directions but
//! keeps both sockets open, so neither end sees a reset, as when a network
//! path dies. Then:
//!
//! 1. the standby gives up after `wal_receiver_timeout` (`terminating
//!    walreceiver due to timeout`) and the primary after
//!    `wal_sender_timeout` (`terminating walsender process due to
//!    replication timeout`) — neither waits forever on a dead peer;
//! 2. once the path is back the standby reconnects by itself and catches
//!    up: every row committed on the primary meanwhile is there.

use tap_tests::netproxy::{FaultProxy, Mode};
use tap_tests::{wait_until, Node};

#[test]
fn silent_replication_links_time_out_and_recover() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("wal_sender_timeout = 2s");
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY)");
    primary.backup("b");

    let proxy = FaultProxy::start(primary.port());
    let port = proxy.port();
    let standby = Node::new("standby");
    standby.init_from_backup_with_conninfo(&primary, &format!("port={port}"));
    standby.start();
    // A reload brings it to the running walreceiver.
    standby.append_conf("wal_receiver_timeout = 2s");
    standby.safe_sql("SELECT pg_reload_conf()");
    wait_until("wal_receiver_timeout reloaded", || {
        standby.sql("SHOW wal_receiver_timeout").ok().as_deref() == Some("2s")
    });
    primary.safe_sql("INSERT INTO t VALUES (1)");
    primary.wait_for_catchup(&standby, "replay", None);
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "1");

    // 1. The path dies silently.
    let (p_at, s_at) = (primary.log_position(), standby.log_position());
    proxy.set_mode(Mode::BlackHole);
    primary.safe_sql("INSERT INTO t VALUES (2)");
    standby.wait_for_log("terminating walreceiver due to timeout", s_at);
    primary.wait_for_log(
        "terminating walsender process due to replication timeout",
        p_at,
    );

    // 2. The path comes back: the standby reconnects and catches up.
    proxy.set_mode(Mode::Pass);
    primary.safe_sql("INSERT INTO t VALUES (3)");
    wait_until("the standby streams again and has every row", || {
        standby.sql("SELECT count(*) FROM t").ok().as_deref() == Some("3")
    });
    assert_eq!(
        standby.safe_sql("SELECT status FROM pg_stat_wal_receiver"),
        "streaming"
    );
    standby.stop("fast");
    primary.stop("fast");
}
