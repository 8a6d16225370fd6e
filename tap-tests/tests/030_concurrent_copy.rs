//! Four sessions `COPY … FROM STDIN` into one table at once while a fifth
//! scans it repeatedly.
//!
//! Concurrent bulk inserters extend the same relation and race for its last
//! pages: were a new page reachable by another session before its extender
//! has it locked, that session could initialise and fill it and the
//! extender then zero it again — committed rows silently gone.
//! This test asserts the end result (exact row count, every id exactly
//! once) and that a concurrent scan never fails and never sees the count go
//! down (every COPY commits as a whole, so the committed count only grows).

use bytes::Bytes;
use futures_util::SinkExt;
use tap_tests::{block_on, Node};
use tokio_postgres::NoTls;

const SESSIONS: i64 = 4;
const ROWS_PER_SESSION: i64 = 20_000;
const ROWS_PER_CHUNK: i64 = 1_000;

async fn connect(node: &Node) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&node.connstr(), NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

#[test]
fn concurrent_copy_into_one_table() {
    let node = Node::new("primary");
    node.init(false);
    node.start();

    block_on(async {
        let admin = connect(&node).await;
        admin
            .batch_execute("CREATE TABLE t (id int8 NOT NULL, session int4, data text)")
            .await
            .unwrap();

        // The scanner: runs until every copier is done.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let scanner = {
            let client = connect(&node).await;
            let done = done.clone();
            tokio::spawn(async move {
                let mut last = 0i64;
                let mut scans = 0u32;
                loop {
                    let finished = done.load(std::sync::atomic::Ordering::Acquire);
                    let n: i64 = client
                        .query_one("SELECT count(*) FROM t", &[])
                        .await
                        .expect("a scan during concurrent COPY must not fail")
                        .get(0);
                    assert!(n >= last, "count went down from {last} to {n}");
                    assert_eq!(
                        n % ROWS_PER_SESSION,
                        0,
                        "a COPY is visible whole or not at all"
                    );
                    last = n;
                    scans += 1;
                    if finished {
                        return scans;
                    }
                }
            })
        };

        let mut copiers = Vec::new();
        for s in 0..SESSIONS {
            let client = connect(&node).await;
            copiers.push(tokio::spawn(async move {
                let sink = client.copy_in("COPY t FROM STDIN").await.unwrap();
                futures_util::pin_mut!(sink);
                let base = s * ROWS_PER_SESSION;
                let mut i = 0;
                while i < ROWS_PER_SESSION {
                    let mut chunk = String::new();
                    for id in base + i..base + (i + ROWS_PER_CHUNK).min(ROWS_PER_SESSION) {
                        // Rows of varying width so pages fill unevenly.
                        let pad = "x".repeat((id % 50) as usize);
                        chunk.push_str(&format!("{id}\t{s}\trow {id} {pad}\n"));
                    }
                    sink.send(Bytes::from(chunk)).await.unwrap();
                    i += ROWS_PER_CHUNK;
                }
                sink.finish().await.unwrap()
            }));
        }
        for c in copiers {
            assert_eq!(
                c.await.unwrap(),
                ROWS_PER_SESSION as u64,
                "COPY reports its row count"
            );
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        let scans = scanner.await.unwrap();
        assert!(scans >= 1);

        let row = admin
            .query_one(
                "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t",
                &[],
            )
            .await
            .unwrap();
        let total = SESSIONS * ROWS_PER_SESSION;
        assert_eq!(
            (
                row.get::<_, i64>(0),
                row.get::<_, i64>(1),
                row.get::<_, i64>(2),
                row.get::<_, i64>(3)
            ),
            (total, total, 0, total - 1),
            "every copied row exactly once"
        );
        for s in 0..SESSIONS {
            let n: i64 = admin
                .query_one("SELECT count(*) FROM t WHERE session = $1", &[&(s as i32)])
                .await
                .unwrap()
                .get(0);
            assert_eq!(n, ROWS_PER_SESSION, "rows of session {s}");
        }
    });
}
