//! Idle sessions park their sockets outside the server's descriptor table
//! (issue 14 item 4; `server::park`, docs/operations.md "Many client
//! connections"), and come back whole: with `park_idle_sessions_above =
//! 0` every session idle for 100 ms parks.
//!
//! 1. 150 idle sessions leave the node's descriptor table (its socket
//!    count falls back to what it was before they connected) and each
//!    answers its next query.
//! 2. A parked session keeps what it had: its open transaction (committed
//!    after the park, seen by others), its `tcp_keepalives_idle` (SHOW
//!    reads the socket through its new descriptor).
//! 3. What reaches a session while parked: `pg_terminate_backend` (FATAL
//!    57P01 then close), `idle_in_transaction_session_timeout` (FATAL
//!    25P03), the client hanging up (the session ends), a fast shutdown
//!    (FATAL 57P01 to every parked client, and the node stops).
//! 4. Sessions idle since before parking became due park once the node
//!    reaches `park_idle_sessions_above` client sockets.

use tap_tests::raw::{self, Outcome, RawConnection};
use tap_tests::{wait_until, Node};

fn startup(node: &Node) -> RawConnection {
    let mut c = RawConnection::connect(node.host(), node.port());
    c.startup();
    c
}

fn query_one(c: &mut RawConnection, sql: &str) -> String {
    c.send(&raw::query(sql.as_bytes()));
    let mut value = None;
    loop {
        let m = c
            .read_message()
            .expect("an answer")
            .expect("the connection stays open");
        match m.tag {
            b'D' => {
                // One column: count(2) len(4) bytes.
                let len = i32::from_be_bytes([m.body[2], m.body[3], m.body[4], m.body[5]]);
                value = Some(String::from_utf8_lossy(&m.body[6..6 + len as usize]).into_owned());
            }
            b'E' => panic!("{sql}: {:?}", m.error_fields()),
            b'Z' => return value.unwrap_or_default(),
            _ => {}
        }
    }
}

fn wait_parked(node: &Node, at_most: usize, what: &str) {
    wait_until(what, || node.open_sockets() <= at_most);
}

#[test]
fn idle_sessions_park_and_come_back() {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("max_connections = 250\npark_idle_sessions_above = 0");
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY)");
    let base = node.open_sockets();

    // 1. Many idle sessions: the table holds none of them once parked.
    let mut idle: Vec<RawConnection> = (0..150).map(|_| startup(&node)).collect();
    wait_parked(&node, base, "150 idle sessions park");
    for (i, c) in idle.iter_mut().enumerate() {
        assert_eq!(
            query_one(c, &format!("SELECT {i} + 1")),
            (i + 1).to_string()
        );
    }

    // 2. What a parked session holds stays.
    let mut tx = startup(&node);
    assert_eq!(query_one(&mut tx, "SET tcp_keepalives_idle = 77"), "");
    assert_eq!(query_one(&mut tx, "BEGIN"), "");
    assert_eq!(query_one(&mut tx, "INSERT INTO t VALUES (1)"), "");
    wait_parked(&node, base, "every session parks again");
    assert_eq!(query_one(&mut tx, "SHOW tcp_keepalives_idle"), "77");
    assert_eq!(query_one(&mut tx, "COMMIT"), "");
    assert_eq!(node.safe_sql("SELECT count(*) FROM t"), "1");

    // 3a. pg_terminate_backend reaches a parked session.
    let mut victim = startup(&node);
    let pid = query_one(&mut victim, "SELECT pg_backend_pid()");
    wait_parked(&node, base, "the victim parks");
    assert_eq!(
        node.safe_sql(&format!("SELECT pg_terminate_backend({pid})")),
        "t"
    );
    match victim.outcome() {
        Outcome::Error(e) => assert_eq!((e.severity.as_str(), e.code.as_str()), ("FATAL", "57P01")),
        other => panic!("terminated parked session: {other:?}"),
    }
    assert!(victim.wait_closed());

    // 3b. So does idle_in_transaction_session_timeout.
    let mut slow = startup(&node);
    assert_eq!(
        query_one(&mut slow, "SET idle_in_transaction_session_timeout = '1s'"),
        ""
    );
    assert_eq!(query_one(&mut slow, "BEGIN"), "");
    match slow.outcome() {
        Outcome::Error(e) => assert_eq!((e.severity.as_str(), e.code.as_str()), ("FATAL", "25P03")),
        other => panic!("idle-in-transaction parked session: {other:?}"),
    }

    // 3c. Clients that hang up while parked end their sessions.
    let sessions = |n: &Node| {
        n.safe_sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            .parse::<usize>()
            .expect("count")
    };
    let before = sessions(&node);
    wait_parked(&node, base, "all parked before the hang-ups");
    idle.truncate(100);
    wait_until("50 hung-up parked sessions end", || {
        sessions(&node) == before - 50
    });

    // 3d. A fast shutdown tells every parked client and stops.
    wait_parked(&node, base, "all parked before the shutdown");
    node.stop("fast");
    for c in idle.iter_mut().take(10) {
        match c.outcome() {
            Outcome::Error(e) => assert_eq!(e.code, "57P01"),
            other => panic!("parked session at shutdown: {other:?}"),
        }
    }
}

/// Sessions that went idle while the node held few sockets park too once
/// it holds many: reaching `park_idle_sessions_above` nudges them.
#[test]
fn sessions_idle_from_before_park_when_it_becomes_due() {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("max_connections = 50\npark_idle_sessions_above = 20");
    node.start();
    let base = node.open_sockets();
    // 19 sessions: below the threshold, nothing parks.
    let mut early: Vec<RawConnection> = (0..19).map(|_| startup(&node)).collect();
    assert!(node.open_sockets() >= base + 19);
    // The 20th reaches it: all of them park, the early ones included.
    let mut last = startup(&node);
    wait_parked(&node, base, "the 19 early sessions and the 20th park");
    for c in early.iter_mut().chain(std::iter::once(&mut last)) {
        assert_eq!(query_one(c, "SELECT 1"), "1");
    }
}
