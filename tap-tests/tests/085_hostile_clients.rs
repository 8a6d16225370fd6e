//! Clients that misbehave on purpose (issue 21 item 6); each must leave
//! the server and every other session as they were.
//!
//! 1. A client that sends a query with a huge result and stops reading:
//!    the statement blocks on its socket with its output buffer bounded
//!    (pg_stat_activity shows wait event `Client` / `ClientWrite`, as
//!    PostgreSQL does), the server's memory stays small, other sessions
//!    run, and `pg_terminate_backend` or closing that connection ends the
//!    statement.
//! 2. A message longer than `max_message_size`: FATAL 08P01 `invalid
//!    message length`, the connection closed.
//! 3. Slowloris: connections that never finish their startup packet are
//!    closed once `authentication_timeout` has passed, while a normal
//!    client connects and queries.
//! 4. A flood beyond `max_connections`: the extra connections get 53300
//!    `sorry, too many clients already`; the sessions already in run.
//! 5. Values past 1 GB (PostgreSQL's MaxAllocSize): `repeat` answers 54000
//!    `requested length too large`, `||` XX000 `invalid memory alloc
//!    request size N`, `string_agg` 54000 `out of memory` with
//!    enlargeStringInfo's DETAIL — the texts PostgreSQL 15 gives.

use std::io::{Read, Write};
use std::net::TcpStream;

use tap_tests::raw;
use tap_tests::{wait_until, Node};

#[test]
fn hostile_clients_leave_the_server_intact() {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf(
        "max_connections = 12\nsuperuser_reserved_connections = 0\n\
         authentication_timeout = 2s\nmax_message_size = 1MB",
    );
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)");
    let steady = node.background_session();
    let rss_before = node.rss_kib();

    // 1. A client that stops reading a result of about 100 GB.
    let mut reader = node.raw_connection();
    reader.startup();
    reader.send(&raw::query(
        b"SELECT repeat('x', 1000) FROM generate_series(1, 100000000)",
    ));
    wait_until("the statement waits for its client (ClientWrite)", || {
        steady
            .query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ClientWrite'")
            .ok()
            .as_deref()
            == Some("1")
    });
    assert_eq!(
        steady.query_safe(
            "SELECT wait_event_type || '/' || state FROM pg_stat_activity \
             WHERE wait_event = 'ClientWrite'"
        ),
        "Client/active"
    );
    let grown = node.rss_kib().saturating_sub(rss_before);
    assert!(
        grown < 256 * 1024,
        "server memory grew by {grown} KiB while a client did not read"
    );
    assert_eq!(steady.query_safe("SELECT count(*) FROM t"), "2");
    // pg_terminate_backend reaches a session blocked on its client.
    assert_eq!(
        steady.query_safe(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'ClientWrite'"
        ),
        "t"
    );
    wait_until("the terminated session is gone", || {
        steady
            .query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ClientWrite'")
            .ok()
            .as_deref()
            == Some("0")
    });
    drop(reader);
    // A client that closes its end ends the statement too.
    let mut reader = node.raw_connection();
    reader.startup();
    reader.send(&raw::query(
        b"SELECT repeat('x', 1000) FROM generate_series(1, 100000000)",
    ));
    wait_until("the second reader blocks the statement", || {
        steady
            .query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ClientWrite'")
            .ok()
            .as_deref()
            == Some("1")
    });
    drop(reader);
    wait_until("closing the connection ends the statement", || {
        steady
            .query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ClientWrite'")
            .ok()
            .as_deref()
            == Some("0")
    });

    // 2. A message longer than max_message_size (1 MB): a Query claiming
    //    2 MB is refused from its header.
    let mut big = node.raw_connection();
    big.startup();
    let mut header = vec![b'Q'];
    header.extend_from_slice(&(2u32 << 20).to_be_bytes());
    big.send(&header);
    match big.outcome() {
        raw::Outcome::Error(f) => {
            assert_eq!(f.code, "08P01", "{f:?}");
            assert!(f.message.contains("invalid message length"), "{f:?}");
        }
        other => panic!("an oversized message was not refused: {other:?}"),
    }
    assert!(big.wait_closed(), "the connection is closed after it");

    // 3. Slowloris: half a startup packet, then nothing.
    let mut slow: Vec<TcpStream> = (0..5)
        .map(|_| {
            let mut s = TcpStream::connect((node.host(), node.port())).expect("connect");
            s.write_all(&[0, 0, 0]).expect("half a length word");
            s
        })
        .collect();
    assert_eq!(
        steady.query_safe("SELECT 1"),
        "1",
        "sessions run while slow clients hold connections"
    );
    for s in &mut slow {
        // EOF (or a reset) once authentication_timeout ends it.
        s.set_read_timeout(Some(tap_tests::timeout_default()))
            .expect("read timeout");
        let mut buf = [0u8; 64];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    panic!("a slow client was not disconnected")
                }
                Err(_) => break,
            }
        }
    }

    // 4. A flood beyond max_connections (12; `steady` holds one).
    let mut held = Vec::new();
    let mut refused = None;
    for _ in 0..30 {
        match tap_tests::Session::try_connect("flood", &node.connstr()) {
            Ok(s) => held.push(s),
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let e = refused.expect("connections beyond max_connections are refused");
    assert_eq!(e.code(), "53300", "{e}");
    assert!(
        e.to_string().contains("sorry, too many clients already"),
        "{e}"
    );
    assert_eq!(held.len(), 11, "max_connections = 12 with one already in");
    assert_eq!(steady.query_safe("SELECT count(*) FROM t"), "2");
    for s in &held {
        assert_eq!(s.query_safe("SELECT 1"), "1");
    }
    drop(held);

    // 5. Values past 1 GB: PostgreSQL's errors, and the session goes on.
    let big = steady;
    for (sql, code, message, detail) in [
        (
            "SELECT length(repeat('x', 1100000000))",
            "54000",
            "requested length too large",
            None,
        ),
        (
            "SELECT length(repeat('x', 600000000) || repeat('x', 600000000))",
            "XX000",
            "invalid memory alloc request size 1200000004",
            None,
        ),
        (
            "SELECT length(string_agg(repeat('x', 300000000), '')) FROM generate_series(1, 4)",
            "54000",
            "out of memory",
            Some(
                "Cannot enlarge string buffer containing 900000000 bytes by 300000000 more bytes.",
            ),
        ),
    ] {
        let e = big.query_err(sql);
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (code, message),
            "{sql}"
        );
        assert_eq!(e.detail.as_deref(), detail, "{sql}");
        assert_eq!(big.query_safe("SELECT 1"), "1", "the session goes on");
    }
    node.stop("fast");
}
