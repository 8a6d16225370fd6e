//! KnownAssignedXids micro-benchmark (run by hand, release):
//!
//! ```text
//! cargo bench -p txn --bench known_assigned
//! ```
//!
//! What a standby's startup process pays, under ProcArrayLock exclusive, to
//! replay one short transaction (its xid recorded as assigned, then its
//! commit record: the xid leaves KnownAssignedXids and the completion
//! counter moves) while 64 or 1,000 long-running transactions of the
//! primary stay in KnownAssignedXids — and what a standby session then pays
//! to build a snapshot from it.
//!
//! Patterns:
//! * `newest`: each replayed transaction finishes before the next starts
//!   (the xid removed is the newest entry);
//! * `fifo`: a window of N transactions, each finishing N xids after it
//!   started (the xid removed is the oldest entry);
//! * `middle`: N long-running transactions at the front, a window of 64
//!   short ones behind them finishing oldest first (removals in the middle
//!   of the array, which must not shift the long-running entries).

use std::hint::black_box;
use std::time::{Duration, Instant};

use pgtypes::TransactionId;
use txn::procarray::ProcArray;

/// Runs `f` in batches of `batch` calls for about `total`; returns the best
/// batch's ns per call (the machine is shared: the minimum is the figure
/// that measures the code rather than the neighbours).
fn time_per_call(total: Duration, batch: u64, mut f: impl FnMut()) -> f64 {
    for _ in 0..batch {
        f();
    }
    let start = Instant::now();
    let mut best = f64::MAX;
    while start.elapsed() < total {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / batch as f64);
    }
    best
}

/// A standby procarray whose KnownAssignedXids hold `n` long-running xids
/// (3 … n+2); returns it with the next xid.
fn standby_with(n: u64) -> (ProcArray, u64) {
    let pa = ProcArray::new(4, TransactionId(3));
    pa.set_in_recovery(true);
    let running: Vec<TransactionId> = (3..3 + n).map(TransactionId).collect();
    pa.init_known_assigned(&running, false, TransactionId(3 + n), TransactionId(2));
    (pa, 3 + n)
}

/// Replay of one completion of `xid` (a commit record without subxids).
fn replay_completion(pa: &ProcArray, xid: u64) {
    pa.expire_tree_known_assigned(TransactionId(xid), &[], TransactionId(xid))
        .bump_completion_count();
}

fn main() {
    let min = Duration::from_millis(
        std::env::var("KAX_BENCH_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400),
    );
    println!(
        "KnownAssignedXids replay, ns per replayed transaction (record + completion; best batch, {} ms per cell)",
        min.as_millis()
    );
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>16}",
        "running", "newest", "fifo", "middle", "snapshot (ns)"
    );
    for &n in &[64u64, 1_000] {
        let (pa, mut next) = standby_with(n);
        let newest = time_per_call(min, 10_000, || {
            pa.record_known_assigned(TransactionId(next));
            replay_completion(&pa, next);
            next += 1;
        });
        black_box(&pa);

        // fifo: the window starts as the n long-running xids.
        let (pa, mut next) = standby_with(n);
        let fifo = time_per_call(min, 10_000, || {
            pa.record_known_assigned(TransactionId(next));
            replay_completion(&pa, next - n);
            next += 1;
        });

        // middle: n long-running, then a window of 64 short ones.
        let (pa, mut next) = standby_with(n);
        const W: u64 = 64;
        pa.record_known_assigned(TransactionId(next + W - 1));
        next += W;
        let middle = time_per_call(min, 10_000, || {
            pa.record_known_assigned(TransactionId(next));
            replay_completion(&pa, next - W);
            next += 1;
        });

        // A standby session's snapshot after a completion.
        let (pa, next) = standby_with(n);
        let me = pa.connect(4).expect("a proc");
        pa.record_known_assigned(TransactionId(next));
        replay_completion(&pa, next);
        let mut cache = None;
        let snap = pa.get_snapshot(me, &mut cache);
        assert_eq!(snap.xip.len() as u64, n);
        drop(snap);
        let snapshot = time_per_call(min, 2_000, || {
            if let Some(s) = cache.as_mut().and_then(std::sync::Arc::get_mut) {
                s.completion_count = u64::MAX;
            }
            black_box(pa.get_snapshot(me, &mut cache));
        });
        println!("{n:>8} {newest:>10.1} {fifo:>10.1} {middle:>10.1} {snapshot:>16.1}");
    }
}
