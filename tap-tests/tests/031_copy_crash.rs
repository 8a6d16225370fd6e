//! SIGKILL in the middle of concurrent COPYs, restart, then a standby
//! catching up.
//!
//! Four sessions COPY batch after batch into one indexed table (bulk
//! extension: many pages per extension, pages kept in each COPY's
//! bulk-insert state) while a standby streams. The primary is killed while
//! COPYs are running. After crash recovery:
//!
//! * every COPY that reported completion is there in full, every other
//!   batch is there in full or not at all (a COPY is one transaction);
//! * no row twice, and the primary key agrees with the heap (first and last
//!   id of every batch found by the index exactly when the batch is there);
//! * the table takes more COPYs;
//! * the standby, after catching up with the restarted primary, returns
//!   the same contents.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::SinkExt;
use tap_tests::{block_on, Node};
use tokio_postgres::NoTls;

const SESSIONS: i64 = 4;
const ROWS_PER_BATCH: i64 = 3_000;
/// Batches each session may try before the kill (the kill comes first).
const MAX_BATCHES: i64 = 200;

/// Batch `b` holds ids `b * ROWS_PER_BATCH .. (b + 1) * ROWS_PER_BATCH`.
fn batch_data(b: i64) -> Bytes {
    let mut s = String::new();
    for id in b * ROWS_PER_BATCH..(b + 1) * ROWS_PER_BATCH {
        let pad = "p".repeat((id % 40) as usize);
        s.push_str(&format!("{id}\t{b}\trow {id} {pad}\n"));
    }
    Bytes::from(s)
}

/// `batch|count` lines, ordered, and the totals.
fn contents(node: &Node) -> String {
    let per = node.safe_sql("SELECT batch, count(*) FROM t GROUP BY batch ORDER BY batch");
    let all = node.safe_sql("SELECT count(*), count(DISTINCT id), sum(id) FROM t");
    format!("{per}\n{all}")
}

#[test]
fn kill9_during_concurrent_copy() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int8 PRIMARY KEY, batch int4 NOT NULL, data text)");
    primary.backup("b");
    let standby = Node::standby_of(&primary, "standby");

    let acked: Arc<Mutex<BTreeSet<i64>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicUsize::new(0));
    block_on(async {
        let mut copiers = Vec::new();
        for s in 0..SESSIONS {
            let (client, conn) = tokio_postgres::connect(&primary.connstr(), NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            let (acked, stop, committed) = (acked.clone(), stop.clone(), committed.clone());
            copiers.push(tokio::spawn(async move {
                for j in 0..MAX_BATCHES {
                    if stop.load(Ordering::Acquire) {
                        return;
                    }
                    let b = j * SESSIONS + s;
                    let data = batch_data(b);
                    let res = async {
                        let sink = client.copy_in("COPY t FROM STDIN").await?;
                        futures_util::pin_mut!(sink);
                        // In 64 kB pieces, so the kill can land mid-COPY.
                        let mut off = 0;
                        while off < data.len() {
                            let end = (off + 65536).min(data.len());
                            sink.send(data.slice(off..end)).await?;
                            off = end;
                        }
                        sink.finish().await
                    }
                    .await;
                    match res {
                        Ok(n) => {
                            assert_eq!(n, ROWS_PER_BATCH as u64, "COPY row count");
                            acked.lock().unwrap().insert(b);
                            committed.fetch_add(1, Ordering::AcqRel);
                        }
                        // The server went away: this COPY's fate is
                        // decided by recovery.
                        Err(_) => return,
                    }
                }
            }));
        }
        // Kill once several COPYs committed, while the others are running.
        let deadline = Instant::now() + Duration::from_secs(300);
        while committed.load(Ordering::Acquire) < 6 {
            assert!(Instant::now() < deadline, "COPYs made no progress");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        primary.kill9();
        stop.store(true, Ordering::Release);
        for c in copiers {
            c.await.unwrap();
        }
    });
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 6, "{} COPYs acknowledged", acked.len());

    // Crash recovery.
    primary.start();
    assert!(primary.log_contains("redo starts at"), "crash recovery ran");

    // Every batch all or nothing, every acknowledged one there.
    let per = primary.safe_sql("SELECT batch, count(*) FROM t GROUP BY batch ORDER BY batch");
    let mut present = BTreeSet::new();
    for line in per.lines() {
        let (b, n) = line.split_once('|').expect("batch|count");
        let (b, n): (i64, i64) = (b.parse().unwrap(), n.parse().unwrap());
        assert_eq!(n, ROWS_PER_BATCH, "batch {b} is partly there: {n} rows");
        present.insert(b);
    }
    for b in &acked {
        assert!(present.contains(b), "acknowledged COPY of batch {b} lost");
    }
    let total = primary.safe_sql("SELECT count(*), count(DISTINCT id) FROM t");
    let n = present.len() as i64 * ROWS_PER_BATCH;
    assert_eq!(total, format!("{n}|{n}"), "no row twice");

    // The primary key agrees with the heap: batches that are there are
    // found through the index, the others (started, maybe half-written
    // before the kill, then aborted) are not.
    let tried = (SESSIONS * MAX_BATCHES).min(acked.iter().max().unwrap() + 2 * SESSIONS);
    let s = primary.background_session();
    for b in 0..tried {
        let expect = if present.contains(&b) { "1" } else { "0" };
        for id in [b * ROWS_PER_BATCH, (b + 1) * ROWS_PER_BATCH - 1] {
            assert_eq!(
                s.query_safe(&format!("SELECT count(*) FROM t WHERE id = {id}")),
                expect,
                "index lookup of id {id} (batch {b})"
            );
        }
    }
    drop(s);

    // The table takes more COPYs after recovery.
    let next = tried + 1;
    block_on(async {
        let (client, conn) = tokio_postgres::connect(&primary.connstr(), NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let sink = client.copy_in("COPY t FROM STDIN").await.unwrap();
        futures_util::pin_mut!(sink);
        sink.send(batch_data(next)).await.unwrap();
        assert_eq!(sink.finish().await.unwrap(), ROWS_PER_BATCH as u64);
    });
    let expected = contents(&primary);

    // The standby, reconnected to the restarted primary, catches up to the
    // same contents.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_eq!(contents(&standby), expected, "standby has the same rows");
    assert_eq!(
        standby.safe_sql(&format!(
            "SELECT count(*) FROM t WHERE id = {}",
            next * ROWS_PER_BATCH
        )),
        "1",
        "standby index finds the new batch"
    );
}
