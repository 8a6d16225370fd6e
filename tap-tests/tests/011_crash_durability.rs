//! Acknowledged commits survive `kill -9`; nothing else does.
//!
//! Several clients insert rows in small transactions and remember, for
//! every transaction, how far it got: still open (COMMIT not sent), in
//! doubt (COMMIT sent, no answer yet), committed (COMMIT acknowledged) or
//! rolled back. The primary is killed with SIGKILL in the middle of the
//! load — five times, at different moments, once right after a CHECKPOINT
//! and once while one runs — and restarted. After each restart:
//!
//! * every row of an acknowledged commit is there (the commit record was
//!   flushed before the acknowledgement and redo replays it);
//! * no row of a rolled-back or still-open transaction is visible;
//! * rows of in-doubt transactions are all there or all absent, per
//!   transaction (atomicity across the crash);
//! * the table is consistent: a sequential count equals the number of
//!   primary-key lookups that find a row, there are no duplicate keys, and
//!   the unique index still refuses an existing key.
//!
//! A server that acknowledges before the WAL flush, replays half a
//! transaction, or rebuilds its indexes from the wrong row versions fails
//! here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use std::time::Instant;

use tap_tests::{timeout_default, Node};

/// Polls `cond` until true or the default timeout; false on timeout (the
/// caller cleans up before failing, so client threads never hang).
fn wait_for(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout_default();
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// How far a transaction got before the crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Open,
    InDoubt,
    Committed,
    RolledBack,
}

/// Rows per transaction (ids `base .. base + ROWS`).
const ROWS: u64 = 3;
const CLIENTS: usize = 4;

/// Every transaction's first id and fate, shared by the clients.
type Ledger = Mutex<BTreeMap<u64, Fate>>;

/// One client: transactions of ROWS single-row INSERTs until an error (the
/// crash) or `stop`. Every fourth transaction rolls back.
fn client(node: &Node, next_id: &AtomicU64, ledger: &Ledger, stop: &AtomicBool, acked: &AtomicU64) {
    let Ok(s) = tap_tests::Session::try_connect("client", &node.connstr()) else {
        return;
    };
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let base = next_id.fetch_add(ROWS, Ordering::Relaxed);
        ledger.lock().unwrap().insert(base, Fate::Open);
        if s.query("BEGIN").is_err() {
            return;
        }
        for id in base..base + ROWS {
            if s.query(&format!("INSERT INTO t VALUES ({id}, {base}, 'row {id}')"))
                .is_err()
            {
                return;
            }
        }
        n += 1;
        if n.is_multiple_of(4) {
            if s.query("ROLLBACK").is_err() {
                return;
            }
            ledger.lock().unwrap().insert(base, Fate::RolledBack);
            continue;
        }
        ledger.lock().unwrap().insert(base, Fate::InDoubt);
        if s.query("COMMIT").is_err() {
            return;
        }
        ledger.lock().unwrap().insert(base, Fate::Committed);
        acked.fetch_add(1, Ordering::Relaxed);
    }
}

/// Checks the table against the ledger after a restart.
fn verify(node: &Node, ledger: &Ledger, round: usize) {
    let ids: Vec<u64> = node
        .safe_sql("SELECT id FROM t")
        .lines()
        .map(|l| l.parse().expect("an id"))
        .collect();
    let present: BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(
        present.len(),
        ids.len(),
        "round {round}: no duplicate keys in a sequential scan"
    );
    let ledger = ledger.lock().unwrap();
    for (&base, &fate) in ledger.iter() {
        let have: Vec<bool> = (base..base + ROWS).map(|i| present.contains(&i)).collect();
        match fate {
            Fate::Committed => assert!(
                have.iter().all(|h| *h),
                "round {round}: acknowledged transaction {base} lost rows {have:?}"
            ),
            Fate::RolledBack | Fate::Open => assert!(
                have.iter().all(|h| !*h),
                "round {round}: {fate:?} transaction {base} visible {have:?}"
            ),
            Fate::InDoubt => assert!(
                have.iter().all(|h| *h) || have.iter().all(|h| !*h),
                "round {round}: in-doubt transaction {base} half there {have:?}"
            ),
        }
    }
    // Nothing visible that no client wrote.
    for id in &present {
        let known = ledger
            .range(..=*id)
            .next_back()
            .is_some_and(|(base, _)| *id < base + ROWS);
        assert!(known, "round {round}: stray row {id}");
    }
    // Index ↔ heap: every row found by its key, exactly once; the count of
    // the sequential scan equals the number of successful lookups.
    let s = node.background_session();
    let mut found = 0usize;
    for id in &present {
        let r = s.query_safe(&format!("SELECT id FROM t WHERE id = {id}"));
        assert_eq!(r, id.to_string(), "round {round}: key lookup of {id}");
        found += 1;
    }
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        found.to_string(),
        "round {round}: seq scan count equals key lookups"
    );
    if let Some(id) = present.iter().next() {
        let e = s
            .query(&format!("INSERT INTO t VALUES ({id}, 0, 'dup')"))
            .expect_err("duplicate key refused");
        assert_eq!(e.code(), "23505", "round {round}: unique index intact");
    }
}

#[test]
fn acknowledged_commits_survive_kill9() {
    // 1. A primary with a keyed table; small checkpoint distance so that
    //    segments are recycled and time checkpoints may run too.
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("shared_buffers = 1MB\ncheckpoint_timeout = 2s\nwal_segment_size = 1MB\n");
    node.start();
    node.safe_sql("CREATE TABLE t (id bigint PRIMARY KEY, txn bigint NOT NULL, note text)");

    let next_id = AtomicU64::new(1);
    let ledger: Ledger = Mutex::new(BTreeMap::new());
    let mut total_acked = 0u64;

    // 2. Five rounds: load, kill at a different moment each time, restart,
    //    verify.
    for round in 0..5usize {
        let stop = AtomicBool::new(false);
        let acked = AtomicU64::new(0);
        let target = 100 + 60 * round as u64;
        let mut loaded = true;
        std::thread::scope(|scope| {
            for _ in 0..CLIENTS {
                scope.spawn(|| client(&node, &next_id, &ledger, &stop, &acked));
            }
            loaded = wait_for(|| acked.load(Ordering::Relaxed) >= target);
            match round {
                // Right after a checkpoint: redo starts at its redo point.
                1 if loaded => {
                    node.safe_sql("CHECKPOINT");
                    let more = acked.load(Ordering::Relaxed) + 5;
                    loaded = wait_for(|| acked.load(Ordering::Relaxed) >= more);
                }
                // While a checkpoint runs.
                3 => {
                    scope.spawn(|| {
                        let _ = node.sql("CHECKPOINT");
                    });
                }
                _ => {}
            }
            // The crash; clients fail on their next statement.
            node.kill9();
            stop.store(true, Ordering::Relaxed);
        });
        assert!(
            loaded,
            "round {round}: clients committed {acked:?} (wanted {target})"
        );
        total_acked += acked.load(Ordering::Relaxed);

        node.start();
        assert!(
            node.log_contains("database system was interrupted"),
            "round {round}: crash noticed at start-up"
        );
        assert!(node.log_contains("redo done at"), "round {round}: redo ran");
        verify(&node, &ledger, round);
    }
    assert!(total_acked >= 5 * 100, "load ran: {total_acked} commits");

    // 3. A clean stop after all that needs no redo.
    let pos = node.log_position();
    node.restart();
    assert!(
        node.log_contains_after("database system was shut down at", pos),
        "clean shutdown recorded in the control file"
    );
    assert!(
        !node.log_contains_after("redo starts at", pos),
        "no redo after a clean shutdown"
    );
    verify(&node, &ledger, 5);
}
