//! Hostile and broken clients cannot take the server down.
//!
//! Every byte a client sends is outside input: a length word can claim 2 GB,
//! a type byte can be anything, a startup packet can name a protocol we do
//! not speak, a query can be invalid UTF-8, a Bind can carry the wrong
//! number of parameters. A decoder that trusts any of it panics, allocates
//! gigabytes, or waits forever for bytes that never come. Here each such
//! input must get an ErrorResponse or a closed connection — never a hang —
//! while the server process keeps running (its log shows no panic; the
//! harness fails the test if it does) and a session opened beforehand keeps
//! working.
//!
//! Bad start-up input (settings, environment) gets a FATAL line and a
//! failing exit status, never a panic.

use tap_tests::raw::{self, Outcome, RawConnection};
use tap_tests::{Node, Session};

/// Reads answers until an ErrorResponse or the connection closes; a
/// ReadyForQuery in between means some bytes formed valid messages, so keep
/// reading (the caller has half-closed the connection or sent an invalid
/// message, so an end comes).
fn error_or_close(conn: &mut RawConnection) -> Outcome {
    loop {
        match conn.outcome() {
            Outcome::Ready => continue,
            other => return other,
        }
    }
}

/// The server process is alive and an old session still works.
fn check_alive(node: &Node, watcher: &Session, after: &str) {
    assert!(
        node.is_running(),
        "server process still running after {after}"
    );
    assert_eq!(
        watcher.query_safe("SELECT count(*) FROM canary"),
        "1",
        "existing session works after {after}"
    );
}

#[test]
fn bad_input() {
    // 1. A primary, and a session held open throughout as a canary.
    let node = Node::new("primary");
    node.init(false);
    node.start();
    node.safe_sql("CREATE TABLE canary (a int)");
    node.safe_sql("INSERT INTO canary VALUES (1)");
    let watcher = node.background_session();

    // 2. Random bytes instead of a startup packet (several seeds).
    for seed in 1..=8u64 {
        let mut conn = node.raw_connection();
        conn.send(&raw::pseudo_random_bytes(seed, 512));
        conn.finish_sending();
        let outcome = error_or_close(&mut conn);
        assert!(
            matches!(outcome, Outcome::Error(_) | Outcome::Closed),
            "random startup bytes (seed {seed}) refused: {outcome:?}"
        );
        check_alive(
            &node,
            &watcher,
            &format!("random startup bytes (seed {seed})"),
        );
    }

    // 3. Random bytes after a good startup (several seeds).
    for seed in 100..=107u64 {
        let mut conn = node.raw_connection();
        conn.startup();
        conn.send(&raw::pseudo_random_bytes(seed, 512));
        conn.finish_sending();
        let outcome = error_or_close(&mut conn);
        assert!(
            matches!(outcome, Outcome::Error(_) | Outcome::Closed),
            "random message bytes (seed {seed}) refused: {outcome:?}"
        );
        check_alive(
            &node,
            &watcher,
            &format!("random message bytes (seed {seed})"),
        );
    }

    // 4. A 2 GB length prefix, on a startup packet and on a Query; the server
    //    must refuse without waiting for (or allocating) 2 GB.
    let mut conn = node.raw_connection();
    let mut packet = 0x7FFF_FFF0i32.to_be_bytes().to_vec();
    packet.extend_from_slice(&raw::PROTOCOL_3_0.to_be_bytes());
    conn.send(&packet);
    let outcome = conn.outcome();
    assert!(
        matches!(outcome, Outcome::Error(_) | Outcome::Closed),
        "2 GB startup packet refused: {outcome:?}"
    );
    check_alive(&node, &watcher, "a 2 GB startup packet");

    let mut conn = node.raw_connection();
    conn.startup();
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&0x7FFF_FFF0i32.to_be_bytes());
    msg.extend_from_slice(b"SELECT 1");
    conn.send(&msg);
    let outcome = conn.outcome();
    assert!(
        matches!(outcome, Outcome::Error(_) | Outcome::Closed),
        "2 GB Query message refused: {outcome:?}"
    );
    check_alive(&node, &watcher, "a 2 GB Query message");

    // 5. A length word below the minimum (a message must count its own 4 bytes).
    let mut conn = node.raw_connection();
    conn.startup();
    conn.send(&[b'Q', 0, 0, 0, 2]);
    let outcome = conn.outcome();
    assert!(
        matches!(outcome, Outcome::Error(_) | Outcome::Closed),
        "length below 4 refused: {outcome:?}"
    );
    check_alive(&node, &watcher, "a length word below 4");

    // 6. An unknown message type after startup.
    let mut conn = node.raw_connection();
    conn.startup();
    conn.send(&raw::message(b'@', b"whatever"));
    let outcome = conn.outcome();
    assert!(
        matches!(outcome, Outcome::Error(_) | Outcome::Closed),
        "unknown message type refused: {outcome:?}"
    );
    check_alive(&node, &watcher, "an unknown message type");

    // 7. Startup packets with protocol versions we do not speak. The answer
    //    to a pre-3.0 version may use that version's framing (PostgreSQL
    //    sends a 2.0-style error), so only its first byte is checked there.
    for (major, minor) in [(2, 0), (1, 0)] {
        let mut conn = node.raw_connection();
        conn.send(&raw::startup(
            (major << 16) | minor,
            &[("user", "postgres"), ("database", "postgres")],
        ));
        let answer = conn.read_to_end();
        assert!(
            answer.is_empty() || answer[0] == b'E',
            "protocol {major}.{minor}: an error or a closed connection, got {answer:?}"
        );
        check_alive(
            &node,
            &watcher,
            &format!("protocol version {major}.{minor}"),
        );
    }
    let mut conn = node.raw_connection();
    conn.send(&raw::startup(
        (9 << 16) | 9,
        &[("user", "postgres"), ("database", "postgres")],
    ));
    match conn.outcome() {
        Outcome::Error(e) => assert_eq!(
            e.code, "0A000",
            "protocol 9.9: feature_not_supported ({})",
            e.message
        ),
        Outcome::Closed => {}
        Outcome::Ready => panic!("protocol 9.9 accepted"),
    }
    check_alive(&node, &watcher, "protocol version 9.9");

    // 8. A truncated message followed by EOF.
    let mut conn = node.raw_connection();
    conn.startup();
    let full = raw::query(b"SELECT 'this message is cut short'");
    conn.send(&full[..10]);
    conn.finish_sending();
    assert!(conn.wait_closed(), "truncated message: connection closed");
    check_alive(&node, &watcher, "a truncated message");

    // 9. A query that is not valid UTF-8: an error (22021), and if the
    //    connection stays open it still works.
    let mut conn = node.raw_connection();
    conn.startup();
    conn.send(&raw::query(b"SELECT '\xc3\x28'"));
    match conn.outcome() {
        Outcome::Error(e) => {
            assert_eq!(
                e.code, "22021",
                "invalid UTF-8: character_not_in_repertoire"
            );
            assert_eq!(
                conn.outcome(),
                Outcome::Ready,
                "ReadyForQuery after the UTF-8 error"
            );
            conn.send(&raw::query(b"SELECT 1"));
            assert_eq!(
                conn.outcome(),
                Outcome::Ready,
                "connection works after the UTF-8 error"
            );
        }
        Outcome::Closed => {}
        Outcome::Ready => panic!("invalid UTF-8 query accepted"),
    }
    check_alive(&node, &watcher, "an invalid UTF-8 query");

    // 10. A Bind with the wrong number of parameters (and one naming a
    //     statement that does not exist): an error, then ReadyForQuery at
    //     Sync, and the connection keeps working.
    let mut conn = node.raw_connection();
    conn.startup();
    let mut batch = raw::parse("", "SELECT $1::int4", &[23]);
    batch.extend(raw::bind("", "", &[]));
    batch.extend(raw::execute(""));
    batch.extend(raw::sync());
    conn.send(&batch);
    match conn.outcome() {
        Outcome::Error(e) => assert_eq!(
            e.code, "08P01",
            "Bind parameter count: protocol_violation ({})",
            e.message
        ),
        other => panic!("Bind with the wrong parameter count accepted: {other:?}"),
    }
    assert_eq!(
        conn.outcome(),
        Outcome::Ready,
        "ReadyForQuery after the Bind error"
    );
    let mut batch = raw::bind("", "no_such_statement", &[]);
    batch.extend(raw::sync());
    conn.send(&batch);
    match conn.outcome() {
        Outcome::Error(e) => assert_eq!(
            e.code, "26000",
            "Bind of an unknown statement ({})",
            e.message
        ),
        other => panic!("Bind of an unknown statement accepted: {other:?}"),
    }
    assert_eq!(
        conn.outcome(),
        Outcome::Ready,
        "ReadyForQuery after the unknown statement"
    );
    let mut batch = raw::parse("", "SELECT $1::int4", &[23]);
    batch.extend(raw::bind("", "", &[Some("41")]));
    batch.extend(raw::execute(""));
    batch.extend(raw::sync());
    conn.send(&batch);
    assert_eq!(
        conn.outcome(),
        Outcome::Ready,
        "a correct Bind works on the same connection"
    );
    conn.send(&raw::terminate());
    check_alive(&node, &watcher, "malformed Bind messages");

    // 11. New connections are still accepted and served.
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM canary"),
        "1",
        "new connection works at the end"
    );

    node.stop("fast");
}

/// Bad settings and a bad `TOKIO_WORKER_THREADS` (tokio itself would panic
/// on an empty one) stop both binaries with a FATAL message.
#[test]
fn bad_startup_input_is_a_fatal_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8 path");
    let cases: [(&str, Vec<&str>, Option<&str>, &str); 4] = [
        (
            "primary",
            vec!["-c", "shared_buffers=banana"],
            None,
            "invalid value for parameter \"shared_buffers\": \"banana\"",
        ),
        (
            "primary",
            vec!["-c", "no_such_setting=1"],
            None,
            "unrecognized configuration parameter \"no_such_setting\"",
        ),
        (
            "primary",
            vec![],
            Some(""),
            "invalid value for environment variable TOKIO_WORKER_THREADS: \"\"",
        ),
        (
            "standby",
            vec!["--primary-conninfo", "host=127.0.0.1 port=1"],
            Some("two"),
            "invalid value for environment variable TOKIO_WORKER_THREADS: \"two\"",
        ),
    ];
    for (bin, extra, workers, expected) in cases {
        let mut cmd = std::process::Command::new(tap_tests::binaries::bin_path(bin));
        cmd.args(["-D", data, "-p", "1"]).args(&extra);
        match workers {
            Some(v) => cmd.env("TOKIO_WORKER_THREADS", v),
            None => cmd.env_remove("TOKIO_WORKER_THREADS"),
        };
        let out = cmd.output().expect("run the binary");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{bin} {extra:?} must fail: {text}");
        assert!(
            !text.contains("panicked"),
            "{bin} {extra:?} panicked: {text}"
        );
        assert!(
            text.contains("FATAL:") && text.contains(expected),
            "{bin} {extra:?}: expected FATAL {expected}, got: {text}"
        );
    }
}
