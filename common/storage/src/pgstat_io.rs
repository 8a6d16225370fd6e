//! Buffer IO statistics by backend type, context and operation
//! (PostgreSQL 16's pgstat_io.c, shown as `pg_stat_io`).
//!
//! ```text
//!  stripes[S] (cache-line aligned)   one counter per
//!  [backend type][context][op]       (client backend | checkpointer | startup)
//!     ^                            x (bulkread | bulkwrite | normal | vacuum)
//!     | thread's stripe, fixed      x (read write writeback extend hit evict
//!     | when the thread first counts        reuse fsync)
//! ```
//!
//! * **Who counts**: the buffer manager, at the place PostgreSQL 16 counts
//!   (`pgstat_count_io_op`): a hit or a read in `ReadBuffer`, a write in
//!   `FlushBuffer`, an eviction or a ring reuse once a valid victim is
//!   ours, an extension per new block, an fsync per relation file synced
//!   by a checkpoint.
//! * **Backend type** comes from a thread-local: "client backend" unless
//!   the thread (or the scope) says otherwise with [`as_backend`] — the
//!   checkpoint and restartpoint code (whoever runs it: PostgreSQL's
//!   CHECKPOINT also has the checkpointer do the work) and the startup
//!   thread that replays WAL.
//! * **Context**: the ring of the operation ([`IoContext::for_strategy`]),
//!   "normal" without one. As in PostgreSQL, everything a ring user does
//!   (its reads, hits, the writes of dirty victims) is counted in the
//!   ring's context; fsyncs only in "normal".
//! * **Cost**: one relaxed `fetch_add` on a counter in the calling thread's
//!   own stripe (threads are spread over [`STRIPES`] stripes round-robin),
//!   so concurrent sessions do not bounce one cache line; no lock, no
//!   allocation (the hit path pays this). A reader sums the stripes.
//! * **Reset** (`pg_stat_reset_shared('io')`) swaps every counter to zero
//!   and records the time; an increment racing with it lands on one side.
//!
//! Times (`read_time`, …) are not measured: hotpair has no
//! `track_io_timing`, and PostgreSQL shows 0 for them when it is off.

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// PostgreSQL's BackendType, the kinds that do buffer IO in hotpair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendType {
    /// A session (B_BACKEND).
    ClientBackend = 0,
    /// Checkpoints and restartpoints (B_CHECKPOINTER).
    Checkpointer = 1,
    /// WAL replay: crash recovery and a standby's replay (B_STARTUP).
    Startup = 2,
}

/// Buffer access contexts (IOContext), in PostgreSQL's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoContext {
    /// A sequential scan's ring.
    BulkRead = 0,
    /// A COPY's or INSERT … SELECT's ring.
    BulkWrite = 1,
    /// No ring.
    Normal = 2,
    /// VACUUM's ring.
    Vacuum = 3,
}

/// Buffer IO operations (IOOp), in `pg_stat_io`'s column order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// A block read from disk into a buffer.
    Read = 0,
    /// A dirty buffer written to disk.
    Write = 1,
    /// Writeback requests to the kernel (hotpair makes none).
    Writeback = 2,
    /// A block added to a relation.
    Extend = 3,
    /// A block found in shared buffers.
    Hit = 4,
    /// A valid buffer taken for another block (not from a ring).
    Evict = 5,
    /// A valid ring buffer taken again by its ring's owner.
    Reuse = 6,
    /// A relation file fsynced.
    Fsync = 7,
}

/// Backend types, in `pg_stat_io`'s row order, with their names.
pub const BACKEND_TYPES: [(BackendType, &str); 3] = [
    (BackendType::ClientBackend, "client backend"),
    (BackendType::Checkpointer, "checkpointer"),
    (BackendType::Startup, "startup"),
];

/// Contexts, in row order, with their names.
pub const CONTEXTS: [(IoContext, &str); 4] = [
    (IoContext::BulkRead, "bulkread"),
    (IoContext::BulkWrite, "bulkwrite"),
    (IoContext::Normal, "normal"),
    (IoContext::Vacuum, "vacuum"),
];

/// Operations, in column order.
pub const OPS: [IoOp; 8] = [
    IoOp::Read,
    IoOp::Write,
    IoOp::Writeback,
    IoOp::Extend,
    IoOp::Hit,
    IoOp::Evict,
    IoOp::Reuse,
    IoOp::Fsync,
];

const NB: usize = BACKEND_TYPES.len();
const NC: usize = CONTEXTS.len();
const NO: usize = OPS.len();
/// Counter stripes; threads are assigned one each, round-robin.
pub const STRIPES: usize = 16;

fn slot(b: BackendType, c: IoContext, o: IoOp) -> usize {
    (b as usize * NC + c as usize) * NO + o as usize
}

impl IoContext {
    /// IOContextForStrategy: the context of an operation with this ring.
    pub fn for_strategy(kind: Option<crate::bufmgr::StrategyKind>) -> IoContext {
        match kind {
            None => IoContext::Normal,
            Some(crate::bufmgr::StrategyKind::BulkRead) => IoContext::BulkRead,
            Some(crate::bufmgr::StrategyKind::BulkWrite) => IoContext::BulkWrite,
        }
    }
}

/// pgstat_tracks_io_op for the relation object: whether `pg_stat_io`
/// shows a number (else NULL) for `op` of backend type `b` in context
/// `c`. None when the row does not exist at all (pgstat_tracks_io_object).
pub fn tracks(b: BackendType, c: IoContext, op: IoOp) -> Option<bool> {
    let strategy = c != IoContext::Normal;
    if b == BackendType::Checkpointer && strategy {
        return None;
    }
    let tracked = match op {
        IoOp::Read | IoOp::Evict | IoOp::Hit => b != BackendType::Checkpointer,
        IoOp::Extend => b != BackendType::Checkpointer && c != IoContext::BulkRead,
        IoOp::Reuse => strategy,
        IoOp::Fsync => !strategy,
        IoOp::Write | IoOp::Writeback => true,
    };
    Some(tracked)
}

/// One stripe: every counter, on its own cache lines.
#[repr(align(128))]
struct Stripe([AtomicU64; NB * NC * NO]);

/// The shared counters (one per buffer pool).
pub struct IoStats {
    stripes: Box<[Stripe]>,
    /// When the counters were last reset (or created): microseconds since
    /// 2000-01-01 UTC, PostgreSQL's timestamp.
    reset_at: AtomicI64,
}

/// The counters at one moment: `[backend type][context][op]`.
pub type IoCounts = [[[u64; NO]; NC]; NB];

thread_local! {
    static BACKEND: Cell<BackendType> = const { Cell::new(BackendType::ClientBackend) };
}

fn my_stripe() -> usize {
    pgtypes::stripe::thread_stripe(STRIPES)
}

/// The backend type this thread counts as.
pub fn backend_type() -> BackendType {
    BACKEND.with(|b| b.get())
}

/// Counts this thread's IO as `b` until the guard is dropped (then as
/// before). For a thread that is one backend type for its whole life,
/// hold the guard for its whole life.
pub fn as_backend(b: BackendType) -> BackendTypeGuard {
    BackendTypeGuard(BACKEND.with(|c| c.replace(b)))
}

/// Restores the previous backend type on drop (see [`as_backend`]).
pub struct BackendTypeGuard(BackendType);

impl Drop for BackendTypeGuard {
    fn drop(&mut self) {
        BACKEND.with(|c| c.set(self.0));
    }
}

impl Default for IoStats {
    fn default() -> Self {
        IoStats {
            stripes: (0..STRIPES)
                .map(|_| Stripe(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
            reset_at: AtomicI64::new(pgtypes::datetime::now_usecs()),
        }
    }
}

impl IoStats {
    /// pgstat_count_io_op_n: `n` operations `op` in context `c` by this
    /// thread's backend type. One relaxed add; allocates nothing.
    #[inline]
    pub fn count(&self, c: IoContext, op: IoOp, n: u64) {
        let i = slot(backend_type(), c, op);
        self.stripes[my_stripe()].0[i].fetch_add(n, Ordering::Relaxed);
    }

    /// The sums over all stripes.
    pub fn snapshot(&self) -> IoCounts {
        let mut out = [[[0u64; NO]; NC]; NB];
        for (b, _) in BACKEND_TYPES {
            for (c, _) in CONTEXTS {
                for op in OPS {
                    let i = slot(b, c, op);
                    out[b as usize][c as usize][op as usize] = self
                        .stripes
                        .iter()
                        .map(|s| s.0[i].load(Ordering::Relaxed))
                        .sum();
                }
            }
        }
        out
    }

    /// pg_stat_reset_shared('io'): every counter back to zero.
    pub fn reset(&self) {
        for s in self.stripes.iter() {
            for a in s.0.iter() {
                a.store(0, Ordering::Relaxed);
            }
        }
        self.reset_at
            .store(pgtypes::datetime::now_usecs(), Ordering::Relaxed);
    }

    /// When the counters were last reset (PostgreSQL timestamp).
    pub fn reset_at(&self) -> i64 {
        self.reset_at.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_backend_type_and_context() {
        let s = IoStats::default();
        s.count(IoContext::Normal, IoOp::Hit, 2);
        {
            let _g = as_backend(BackendType::Checkpointer);
            s.count(IoContext::Normal, IoOp::Write, 3);
        }
        s.count(IoContext::BulkRead, IoOp::Read, 1);
        std::thread::scope(|sc| {
            sc.spawn(|| {
                let _g = as_backend(BackendType::Startup);
                s.count(IoContext::Normal, IoOp::Read, 5);
            });
        });
        let c = s.snapshot();
        assert_eq!(c[0][IoContext::Normal as usize][IoOp::Hit as usize], 2);
        assert_eq!(c[1][IoContext::Normal as usize][IoOp::Write as usize], 3);
        assert_eq!(c[0][IoContext::BulkRead as usize][IoOp::Read as usize], 1);
        assert_eq!(c[2][IoContext::Normal as usize][IoOp::Read as usize], 5);
        assert_eq!(backend_type(), BackendType::ClientBackend, "guard restored");
        s.reset();
        assert!(s.snapshot().iter().flatten().flatten().all(|&v| v == 0));
    }

    #[test]
    fn tracked_ops_follow_postgres() {
        use BackendType::*;
        assert_eq!(tracks(Checkpointer, IoContext::BulkRead, IoOp::Write), None);
        assert_eq!(
            tracks(Checkpointer, IoContext::Normal, IoOp::Hit),
            Some(false)
        );
        assert_eq!(
            tracks(Checkpointer, IoContext::Normal, IoOp::Fsync),
            Some(true)
        );
        assert_eq!(
            tracks(ClientBackend, IoContext::Normal, IoOp::Reuse),
            Some(false)
        );
        assert_eq!(
            tracks(ClientBackend, IoContext::BulkRead, IoOp::Extend),
            Some(false)
        );
        assert_eq!(
            tracks(ClientBackend, IoContext::Vacuum, IoOp::Fsync),
            Some(false)
        );
        assert_eq!(
            tracks(Startup, IoContext::BulkWrite, IoOp::Reuse),
            Some(true)
        );
    }
}
