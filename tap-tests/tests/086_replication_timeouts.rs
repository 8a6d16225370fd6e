//! A replication link that goes silent (issue 21 item 5, first part).
//!
//! The standby streams through a proxy. The proxy black-holes the link —
//! it stops forwarding in both directions but keeps both sockets open, so
//! neither end sees a reset, as when a network path dies. Then:
//!
//! 1. the standby gives up after `wal_receiver_timeout` (`terminating
//!    walreceiver due to timeout`) and the primary after
//!    `wal_sender_timeout` (`terminating walsender process due to
//!    replication timeout`) — neither waits forever on a dead peer;
//! 2. once the path is back the standby reconnects by itself and catches
//!    up: every row committed on the primary meanwhile is there.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tap_tests::{wait_until, Node};

/// Forwards `from` to `to` until either end closes; while `hole` is set
/// it forwards nothing (and stops reading, so the sender's buffers fill).
fn pump(mut from: TcpStream, mut to: TcpStream, hole: Arc<AtomicBool>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        if hole.load(Ordering::SeqCst) {
            // Black-holed for good: the connection is dead to both ends,
            // which keep their sockets until they time out.
            let _ = from.set_read_timeout(Some(std::time::Duration::from_millis(200)));
            loop {
                std::thread::park_timeout(std::time::Duration::from_millis(200));
                if from.peek(&mut buf[..1]).is_ok_and(|n| n == 0) {
                    return;
                }
            }
        }
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if hole.load(Ordering::SeqCst) {
            continue;
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// A TCP proxy to `target` on a free port; connections accepted while
/// `hole` is set are black-holed from the start.
fn proxy(target: u16, hole: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            if hole.load(Ordering::SeqCst) {
                // Accepted and never answered.
                std::thread::spawn(move || {
                    let _keep = client;
                    loop {
                        std::thread::park();
                    }
                });
                continue;
            }
            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                continue;
            };
            let (c2, s2) = (
                client.try_clone().expect("clone"),
                server.try_clone().expect("clone"),
            );
            let (h1, h2) = (hole.clone(), hole.clone());
            std::thread::spawn(move || pump(client, server, h1));
            std::thread::spawn(move || pump(s2, c2, h2));
        }
    });
    port
}

#[test]
fn silent_replication_links_time_out_and_recover() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("wal_sender_timeout = 2s");
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY)");
    primary.backup("b");

    let hole = Arc::new(AtomicBool::new(false));
    let port = proxy(primary.port(), hole.clone());
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
    hole.store(true, Ordering::SeqCst);
    primary.safe_sql("INSERT INTO t VALUES (2)");
    standby.wait_for_log("terminating walreceiver due to timeout", s_at);
    primary.wait_for_log(
        "terminating walsender process due to replication timeout",
        p_at,
    );

    // 2. The path comes back: the standby reconnects and catches up.
    hole.store(false, Ordering::SeqCst);
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
