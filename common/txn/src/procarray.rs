//! # The procarray (procarray.c, proc.c) — running transactions and snapshots
//!
//! Every session (and every prepared transaction, through a *dummy* proc)
//! occupies one slot of a fixed table of procs. Beside the table, **dense
//! arrays** hold only the procs in use, packed at the front, indexed by each
//! proc's `pgxactoff`:
//!
//! ```text
//!   procs (fixed, by ProcNumber)        dense arrays (by pgxactoff, len = n)
//!   ┌────┬────┬────┬────┬────┐          pgprocnos:     [ 0 ][ 3 ][ 1 ]
//!   │ p0 │ p1 │ p2 │ p3 │ p4 │          xids:          [ 0 ][812][807]
//!   └────┴────┴────┴────┴────┘          status_flags:  [ 0 ][ 0 ][ 0 ]
//!     ▲ used  ▲ used    ▲ used          subxid_states: [0,f][2,f][0,f]
//!     p0.pgxactoff = 0, p3.pgxactoff = 1, p1.pgxactoff = 2
//! ```
//!
//! GetSnapshotData ([`ProcArray::get_snapshot`]) scans only `xids[0..n]`:
//! contiguous memory, no pointer chasing per proc, and — the heart of the
//! design (Andres Freund, "Improving connection scalability:
//! GetSnapshotData()", 2020) — it never reads another proc's `xmin`, which
//! every backend rewrites all the time. Horizons that need xmins are computed
//! separately ([`ProcArray::oldest_xmin`]).
//!
//! ## Invariants
//!
//! 1. `pgprocnos[0..n]` are exactly the procs in use; for each,
//!    `procs[pgprocnos[i]].pgxactoff == i`.
//! 2. Each proc keeps a copy of its dense values (`xid`, `status_flags`,
//!    `subxid_state`), always equal to `xids[pgxactoff]` etc. They change
//!    together, under the same lock.
//! 3. A proc's subxids `subxids[0..count]` are running children of its xid;
//!    when more than [`PGPROC_MAX_CACHED_SUBXIDS`] were assigned the state is
//!    `overflowed` and the subtrans map must be consulted.
//! 4. `latest_completed_xid` only grows; `xact_completion_count` grows by one
//!    every time a transaction *with an xid* leaves the running set. Each
//!    kind of completion bumps it from its own line
//!    (`ProcArrayState::bump_completion_count`), under ProcArrayLock
//!    exclusive, after the running set changed:
//!
//!    | completion | where |
//!    |---|---|
//!    | primary COMMIT, ROLLBACK | [`ProcArray::end_transaction`] (`Finished::Proc`) |
//!    | ROLLBACK TO SAVEPOINT (subxact with an xid) | [`ProcArray::remove_subxids`] |
//!    | COMMIT / ROLLBACK PREPARED | `remove` (`Finished::DummyProc`) |
//!    | replayed COMMIT, ABORT (also a subxact's), COMMIT PREPARED, ROLLBACK PREPARED | one line each in `engine::xact_redo::redo`, on the [`known_assigned::ExpiredTree`] that [`ProcArray::expire_tree_known_assigned`] returns |
//!    | first running-xacts record (or shutdown checkpoint) | [`ProcArray::init_known_assigned`] |
//!    | expiry by a later running-xacts record | [`ProcArray::prune_known_assigned`] |
//!    | promotion | [`ProcArray::end_recovery`] |
//!
//!    A test per row (`tap-tests/tests/022_completion_counter.rs`,
//!    `070_counter_bumps.rs`, and for the first running-xacts record
//!    `known_assigned::tests::first_running_xacts_bumps`) fails when that
//!    line is removed.
//!
//! ## The snapshot-cache rule
//!
//! A snapshot is a function of the running set and `latest_completed_xid`.
//! Starting a transaction or assigning an xid adds only xids `>= xmax` of
//! every existing snapshot (they are invisible anyway), so the only event
//! that makes an old snapshot wrong is a completion — and every completion
//! bumps `xact_completion_count`. A session's cached snapshot stamped with the
//! current count is therefore exactly what a fresh scan would return: it is
//! reused in O(1), without allocating (an `Arc` clone).
//!
//! ## Reuse without ProcArrayLock
//!
//! The reuse check takes no lock: the count is mirrored in one atomic
//! (`completion_count`, stored by `bump_completion_count` under the
//! exclusive lock), and a session touches only that atomic and its own
//! proc. What needs an argument is the xmin. A session between
//! transactions has published no xmin (it was cleared), and reusing its
//! cached snapshot must publish `snap.xmin` again — without the lock a
//! horizon computation ([`ProcArray::oldest_xmin`]) may run at the same
//! time. The order is: **store our xmin, then load the count**; a
//! completion **stores the count**, and a horizon computation (after
//! acquiring ProcArrayLock, so after every completion that released it)
//! **loads the xmins**. All four are `SeqCst`, so they fall in one total
//! order consistent with happens-before:
//!
//! * If our load sees the count our snapshot was built at, it comes before
//!   the next completion's store in that order; our xmin store comes
//!   before our load; the completion's store happens-before any horizon
//!   computation that can see its effect. So every horizon computed after
//!   a completion we did not see reads our xmin — nothing our reused
//!   snapshot still needs is removed. A horizon computed with no
//!   completion since the snapshot cannot pass its xmin at all: the xids
//!   that made it are still running (or `latest_completed_xid` is where it
//!   was), and they are inputs of the horizon too.
//! * If our load sees a newer count, we build a new snapshot under the
//!   lock; the xmin we published is older than needed (only holding
//!   horizons back a moment), and is replaced under the lock, where no
//!   completion can intervene, by the new snapshot's.
//!
//! This is Dekker's pattern (store mine, load theirs), which is why plain
//! acquire/release would not do: it orders neither a store before a later
//! load of another location. On x86-64 the cost is one `xchg` for the xmin
//! store, paid once per transaction; the loads are plain moves.
//!
//! ## Horizons
//!
//! [`ProcArray::oldest_xmin`] is the removable horizon (ComputeXidHorizons)
//! for pruning and VACUUM. Pruning asks [`ProcArray::prune_horizon`]
//! (GlobalVis) instead, which answers from two bounds without touching the
//! procs: *maybe_needed*, the last accurate horizon cached in one atomic
//! (below it: removable), and *definitely_needed*, the asking scan's own
//! snapshot's xmin (at or above it: needed). Only an xid between them
//! recomputes, at most once per snapshot (identified by its completion
//! count); `hotpair_stat_snapshots` counts recomputes and the ones avoided
//! (docs/architecture/transactions.md, "Horizons"). There is one such
//! horizon: with one database, no logical slots (no catalog_xmin) and
//! hot-standby feedback folded into the replication xmin, PostgreSQL's
//! shared-catalog, catalog and data horizons would all be equal here.
//!
//! ## Locks, in order
//!
//! `lmgr` mutex → **ProcArrayLock** (`state`, RwLock) → **XidGenLock**
//! (`xid_gen`, Mutex) → subtrans map → free-list mutex (leaf).
//!
//! * Adding/removing a proc (and moving a prepared transaction to a dummy
//!   proc) takes ProcArrayLock then XidGenLock, both exclusive, so it excludes
//!   both snapshot builders and xid assignment while entries move.
//! * Xid assignment takes only XidGenLock: it takes `next_xid` and publishes
//!   the xid in `xids[pgxactoff]` before releasing it. `pgxactoff` is stable
//!   under XidGenLock because moving entries needs it too.
//! * Snapshots and running checks take ProcArrayLock shared — except the
//!   reuse of a cached snapshot, which takes no lock (above).
//! * Completion takes ProcArrayLock exclusive: clear the entry, advance
//!   `latest_completed_xid`, bump the counter ([`ProcArray::end_transaction`]
//!   for a session's or a prepared transaction; replay removes xids from
//!   KnownAssignedXids instead and bumps before the lock is released).
//!
//! On a standby, snapshots come from KnownAssignedXids instead of the
//! procs' xids; that half lives in the submodule [`known_assigned`]
//! (PostgreSQL's array with head, tail and validity flags: binary search,
//! O(1) amortised removal, compression when half of it is dead; recording,
//! expiring, initialising from running-xacts records — with their subxid
//! overflow —, ending at promotion), with the same lock and the same
//! counter. A standby snapshot is `suboverflowed` while a transaction that
//! was running at an overflowed running-xacts record may still run.
//!
//! The dense arrays are `AtomicU64`/`AtomicU8` only because xid assignment
//! writes them under XidGenLock while snapshot builders read them under
//! ProcArrayLock shared; all accesses are `Relaxed` (plain loads and stores
//! on x86-64 and ARM64), ordering comes from the locks: a running xid below a
//! snapshot's `xmax` was published before some later xid was assigned and
//! completed, and that completion happened-before the snapshot's lock
//! acquisition.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};

use crate::lmgr::LockManager;
use crate::old_snapshot::OldSnapshot;
use crate::predicate::PredicateLockManager;
use crate::snapshot::Snapshot;
use crate::subtrans::SubTrans;
use pgtypes::error::PgResult;
use pgtypes::{ProcNumber, TransactionId};

pub mod known_assigned;

use known_assigned::KnownAssignedXids;

/// Subxids a proc caches before its state overflows (PGPROC_MAX_CACHED_SUBXIDS).
pub const PGPROC_MAX_CACHED_SUBXIDS: usize = 64;

/// Status flag: the proc runs VACUUM; its xid is left out of snapshots.
pub const PROC_IN_VACUUM: u8 = 0x02;
/// Status flag: the proc is a dummy holding a prepared transaction.
pub const PROC_IS_DUMMY: u8 = 0x40;

const RELAXED: Ordering = Ordering::Relaxed;

/// Node-wide snapshot counters shown by `hotpair_stat_snapshots`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Snapshots built by scanning the dense arrays.
    pub snapshots_computed: u64,
    /// Snapshots served from a session's cache (completion count unchanged).
    pub snapshots_reused: u64,
    /// `xact_completion_count`.
    pub xact_completion_count: u64,
    /// Pruning horizon recomputes (an xid between GlobalVis's
    /// maybe_needed and definitely_needed, first time for its snapshot).
    pub horizon_recomputes: u64,
    /// Recomputes skipped: the snapshot asking had already had one.
    pub horizon_recomputes_avoided: u64,
}

/// Subxid cache state of one proc (XidCacheStatus): packed in one byte in
/// the dense array, `count` in the low 7 bits and `overflowed` in the top bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubxidState {
    /// Cached subxids (`<= 64`).
    pub count: u8,
    /// More subxids were assigned than fit: consult the subtrans map.
    pub overflowed: bool,
}

impl SubxidState {
    fn pack(self) -> u8 {
        self.count | ((self.overflowed as u8) << 7)
    }
    fn unpack(b: u8) -> SubxidState {
        SubxidState {
            count: b & 0x7f,
            overflowed: b & 0x80 != 0,
        }
    }
}

/// One proc slot (PGPROC). Only what other sessions need is here; the rest
/// of a session's transaction state lives in its `Xact`.
struct Proc {
    /// The slot is taken.
    in_use: AtomicBool,
    /// Position in the dense arrays; changed under both locks.
    pgxactoff: AtomicU32,
    /// Copy of `xids[pgxactoff]`.
    xid: AtomicU64,
    /// Oldest xid this proc's snapshots may still need; read only by horizon
    /// computations, written by the owner (this is the hot cache line that
    /// GetSnapshotData does not touch).
    xmin: AtomicU64,
    /// Copy of `status_flags[pgxactoff]`.
    status_flags: AtomicU8,
    /// Copy of `subxid_states[pgxactoff]`.
    subxid_state: AtomicU8,
    /// Cached running subxids, `[0..count]` valid.
    subxids: [AtomicU64; PGPROC_MAX_CACHED_SUBXIDS],
    /// Process id shown in messages (BackendKeyData pid).
    pid: AtomicI32,
    /// Per-proc counters (written only by the owner, summed by `stats`), so
    /// counting does not bounce a shared cache line between sessions.
    snapshots_computed: AtomicU64,
    snapshots_reused: AtomicU64,
}

impl Proc {
    fn new() -> Proc {
        Proc {
            in_use: AtomicBool::new(false),
            pgxactoff: AtomicU32::new(u32::MAX),
            xid: AtomicU64::new(0),
            xmin: AtomicU64::new(0),
            status_flags: AtomicU8::new(0),
            subxid_state: AtomicU8::new(0),
            subxids: std::array::from_fn(|_| AtomicU64::new(0)),
            pid: AtomicI32::new(0),
            snapshots_computed: AtomicU64::new(0),
            snapshots_reused: AtomicU64::new(0),
        }
    }
}

/// A counter bumped from many threads on a hot path: one cache line per
/// stripe, each thread on its own (`pgtypes::stripe`), summed when read.
#[derive(Default)]
struct StripedCounter {
    stripes: [CachePadded<AtomicU64>; COUNTER_STRIPES],
}

const COUNTER_STRIPES: usize = 16;

impl StripedCounter {
    fn add(&self, n: u64) {
        let i = pgtypes::stripe::thread_stripe(COUNTER_STRIPES);
        self.stripes[i].fetch_add(n, RELAXED);
    }

    fn sum(&self) -> u64 {
        self.stripes.iter().map(|s| s.load(RELAXED)).sum()
    }
}

/// What ProcArrayLock protects besides the dense arrays' contents.
struct ProcArrayState {
    /// Dense: proc number of each entry; `len()` is the number of procs in use.
    pgprocnos: Vec<u32>,
    /// Newest xid known finished; snapshots' `xmax` is one more.
    latest_completed_xid: TransactionId,
    /// Bumped by every completion of a transaction with an xid.
    xact_completion_count: u64,
    /// The same count, published for lock-free snapshot reuse
    /// ([`ProcArray::get_snapshot`]); stored (SeqCst) by
    /// `bump_completion_count` only, so it always equals the field above
    /// once the lock is released.
    published_count: Arc<CachePadded<AtomicU64>>,
    /// Standby mode: snapshots come from `known_assigned_xids`.
    in_recovery: bool,
    /// KnownAssignedXids: the xids the primary has running (standby only).
    known_assigned_xids: KnownAssignedXids,
}

impl ProcArrayState {
    /// Advances `latest_completed_xid` to `latest_xid` if that is newer.
    fn advance_latest_completed(&mut self, latest_xid: TransactionId) {
        if latest_xid > self.latest_completed_xid {
            self.latest_completed_xid = latest_xid;
        }
    }

    /// The completion counter's one increment. Every completion calls it
    /// from its own line (invariant 4), so a test per kind of completion
    /// fails when that line is removed.
    fn bump_completion_count(&mut self) {
        self.xact_completion_count += 1;
        // SeqCst: one half of the reuse argument (the essay, "Reuse
        // without ProcArrayLock").
        self.published_count
            .store(self.xact_completion_count, Ordering::SeqCst);
    }
}

/// Free proc slots (ProcStructLock's free lists).
struct FreeProcs {
    free: Vec<u32>,
    backends_in_use: usize,
}

/// A session's or prepared transaction leaving the running set; the
/// argument of [`ProcArray::end_transaction`]. (Replay removes xids from
/// KnownAssignedXids instead: [`ProcArray::expire_tree_known_assigned`].)
#[derive(Clone, Copy, Debug)]
pub enum Finished {
    /// The transaction run by this proc (a session) committed or aborted; its
    /// dense entry is cleared and the proc stays connected.
    Proc(ProcNumber),
    /// COMMIT/ROLLBACK PREPARED: the prepared transaction's dummy proc is
    /// removed from the dense arrays and its slot freed.
    DummyProc(ProcNumber),
}

/// The fixed proc table plus the dense arrays.
pub struct ProcArray {
    procs: Box<[CachePadded<Proc>]>,
    /// Dense `xids`, `[0..n]` valid (n = pgprocnos.len()).
    xids: Box<[AtomicU64]>,
    /// Dense status flags ([`PROC_IN_VACUUM`], [`PROC_IS_DUMMY`]).
    status_flags: Box<[AtomicU8]>,
    /// Dense packed [`SubxidState`]s.
    subxid_states: Box<[AtomicU8]>,
    /// ProcArrayLock.
    state: RwLock<ProcArrayState>,
    /// `ProcArrayState::published_count`: the completion count readable
    /// without ProcArrayLock.
    completion_count: Arc<CachePadded<AtomicU64>>,
    /// XidGenLock, guarding `next_xid`.
    xid_gen: Mutex<TransactionId>,
    /// Lock-free mirror of `next_xid` for readers.
    next_xid_hint: AtomicU64,
    free: Mutex<FreeProcs>,
    subtrans: SubTrans,
    lmgr: LockManager,
    /// procArray->replication_slot_xmin, widened to every xmin replication
    /// holds: the oldest of the standbys' hot-standby feedback xmins and the
    /// slots' xmins (0: none). Set by [`ProcArray::set_replication_xmin`];
    /// read only by [`ProcArray::oldest_xmin`].
    replication_xmin: AtomicU64,
    /// GlobalVis maybe_needed: the last [`ProcArray::oldest_xmin`]
    /// computed for pruning (see [`ProcArray::prune_horizon`]).
    vis_horizon: AtomicU64,
    /// The newest completion count of a snapshot a pruning recompute ran
    /// for (0: none): at most one recompute per snapshot generation.
    vis_recomputed_for: AtomicU64,
    /// Pruning recomputes of the horizon (ComputeXidHorizons runs).
    vis_recomputes: AtomicU64,
    /// Recomputes not done: the asking snapshot already had one (striped:
    /// counted on the hot path).
    vis_recomputes_avoided: StripedCounter,
    /// old_snapshot_threshold (see [`crate::old_snapshot`]).
    old_snapshot: OldSnapshot,
    /// SIRead locks and rw-conflicts of serializable transactions (see
    /// [`crate::predicate`]).
    predicate: PredicateLockManager,
}

impl ProcArray {
    /// A procarray with room for `max_procs` procs (max_connections +
    /// max_prepared_transactions + a few auxiliary).
    pub fn new(max_procs: usize, next_xid: TransactionId) -> ProcArray {
        let max_procs = max_procs.clamp(1, u32::MAX as usize - 1);
        let next_xid = next_xid.max(TransactionId::FIRST_NORMAL);
        let dense_u64 = |_| AtomicU64::new(0);
        let dense_u8 = |_| AtomicU8::new(0);
        let completion_count = Arc::new(CachePadded::new(AtomicU64::new(1)));
        ProcArray {
            procs: (0..max_procs)
                .map(|_| CachePadded::new(Proc::new()))
                .collect(),
            xids: (0..max_procs).map(dense_u64).collect(),
            status_flags: (0..max_procs).map(dense_u8).collect(),
            subxid_states: (0..max_procs).map(dense_u8).collect(),
            state: RwLock::new(ProcArrayState {
                pgprocnos: Vec::with_capacity(max_procs),
                latest_completed_xid: TransactionId(next_xid.0 - 1),
                xact_completion_count: 1,
                published_count: Arc::clone(&completion_count),
                in_recovery: false,
                known_assigned_xids: KnownAssignedXids::default(),
            }),
            completion_count,
            xid_gen: Mutex::new(next_xid),
            next_xid_hint: AtomicU64::new(next_xid.0),
            // Pop from the end: hand out low proc numbers first.
            free: Mutex::new(FreeProcs {
                free: (0..max_procs as u32).rev().collect(),
                backends_in_use: 0,
            }),
            subtrans: SubTrans::new(),
            lmgr: LockManager::new(max_procs),
            replication_xmin: AtomicU64::new(0),
            vis_horizon: AtomicU64::new(0),
            vis_recomputed_for: AtomicU64::new(0),
            vis_recomputes: AtomicU64::new(0),
            vis_recomputes_avoided: StripedCounter::default(),
            old_snapshot: OldSnapshot::default(),
            predicate: PredicateLockManager::new(),
        }
    }

    /// Size of the proc table.
    pub fn max_procs(&self) -> usize {
        self.procs.len()
    }

    fn proc(&self, p: ProcNumber) -> &Proc {
        &self.procs[p.0 as usize]
    }

    // ----- slots -----------------------------------------------------------

    /// InitProcess + ProcArrayAdd for a client session: takes a free slot
    /// unless `max_backends` sessions are already connected. `None` means
    /// "sorry, too many clients already".
    pub fn connect(&self, max_backends: usize) -> Option<ProcNumber> {
        let p = {
            let mut free = self.free.lock();
            if free.backends_in_use >= max_backends {
                return None;
            }
            let p = free.free.pop()?;
            free.backends_in_use += 1;
            p
        };
        self.add(ProcNumber(p), 0);
        Some(ProcNumber(p))
    }

    /// How many client sessions hold a slot.
    pub fn backends_in_use(&self) -> usize {
        self.free.lock().backends_in_use
    }

    /// ProcArrayRemove + free the slot of a session. A transaction still
    /// holding an xid is completed as aborted-and-forgotten (callers abort
    /// first; this only keeps the invariants if they did not).
    pub fn disconnect(&self, p: ProcNumber) {
        if !self.proc(p).in_use.load(RELAXED) {
            return;
        }
        let latest = TransactionId(self.proc(p).xid.load(RELAXED));
        self.remove(p, latest);
        let mut free = self.free.lock();
        free.backends_in_use = free.backends_in_use.saturating_sub(1);
        free.free.push(p.0);
    }

    /// Puts `p` at the end of the dense arrays (both locks exclusive).
    fn add(&self, p: ProcNumber, flags: u8) {
        let proc = self.proc(p);
        proc.xid.store(0, RELAXED);
        proc.xmin.store(0, RELAXED);
        proc.status_flags.store(flags, RELAXED);
        proc.subxid_state.store(0, RELAXED);
        let mut st = self.state.write();
        let _gen = self.xid_gen.lock();
        let off = st.pgprocnos.len();
        st.pgprocnos.push(p.0);
        self.xids[off].store(0, RELAXED);
        self.status_flags[off].store(flags, RELAXED);
        self.subxid_states[off].store(0, RELAXED);
        proc.pgxactoff.store(off as u32, RELAXED);
        proc.in_use.store(true, RELAXED);
    }

    /// Removes `p` from the dense arrays, moving the last entry into its hole
    /// (both locks exclusive). A valid `latest_xid` completes its transaction
    /// (advance + bump), as PostgreSQL's ProcArrayRemove does for prepared
    /// transactions.
    fn remove(&self, p: ProcNumber, latest_xid: TransactionId) {
        let proc = self.proc(p);
        {
            let mut st = self.state.write();
            let _gen = self.xid_gen.lock();
            let off = proc.pgxactoff.load(RELAXED) as usize;
            let last = st.pgprocnos.len().saturating_sub(1);
            if st.pgprocnos.get(off) != Some(&p.0) {
                tracing::error!("proc {} not found in procarray", p.0);
                return;
            }
            if latest_xid.is_valid() {
                // COMMIT/ROLLBACK PREPARED (and a session leaving with an xid).
                st.advance_latest_completed(latest_xid);
                st.bump_completion_count();
            }
            if off != last {
                let moved = st.pgprocnos[last];
                self.xids[off].store(self.xids[last].load(RELAXED), RELAXED);
                self.status_flags[off].store(self.status_flags[last].load(RELAXED), RELAXED);
                self.subxid_states[off].store(self.subxid_states[last].load(RELAXED), RELAXED);
                self.procs[moved as usize]
                    .pgxactoff
                    .store(off as u32, RELAXED);
            }
            st.pgprocnos.swap_remove(off);
            self.xids[last].store(0, RELAXED);
            self.status_flags[last].store(0, RELAXED);
            self.subxid_states[last].store(0, RELAXED);
            proc.pgxactoff.store(u32::MAX, RELAXED);
            proc.xid.store(0, RELAXED);
            proc.xmin.store(0, RELAXED);
            proc.subxid_state.store(0, RELAXED);
            proc.status_flags.store(0, RELAXED);
            proc.in_use.store(false, RELAXED);
        }
        if latest_xid.is_valid() {
            self.lmgr.wake_waiters_of(p);
        }
    }

    /// Sets the process id shown for `p` in deadlock reports.
    pub fn set_pid(&self, p: ProcNumber, pid: i32) {
        self.proc(p).pid.store(pid, RELAXED);
    }

    /// The process id of `p` (its proc number + 1 when none was set).
    pub fn pid(&self, p: ProcNumber) -> i32 {
        match self.proc(p).pid.load(RELAXED) {
            0 => p.0 as i32 + 1,
            pid => pid,
        }
    }

    /// Sets `p`'s status flags (e.g. [`PROC_IN_VACUUM`]), dense entry and copy.
    pub fn set_status_flags(&self, p: ProcNumber, flags: u8) {
        let _st = self.state.write();
        let proc = self.proc(p);
        let off = proc.pgxactoff.load(RELAXED) as usize;
        proc.status_flags.store(flags, RELAXED);
        if let Some(f) = self.status_flags.get(off) {
            f.store(flags, RELAXED);
        }
    }

    // ----- xid assignment ---------------------------------------------------

    /// GetNewTransactionId for a top-level transaction: takes `next_xid` and
    /// publishes it in the dense array before XidGenLock is released.
    pub fn assign_xid(&self, p: ProcNumber) -> TransactionId {
        let proc = self.proc(p);
        let mut gen = self.xid_gen.lock();
        let xid = *gen;
        *gen = xid.next();
        self.next_xid_hint.store(gen.0, Ordering::Release);
        let off = proc.pgxactoff.load(RELAXED) as usize;
        self.xids[off].store(xid.0, RELAXED);
        proc.xid.store(xid.0, RELAXED);
        xid
    }

    /// GetNewTransactionId for a subtransaction whose parent is `parent`:
    /// records the parent in subtrans and caches the subxid in the proc (or
    /// marks it overflowed), before XidGenLock is released.
    pub fn assign_subxid(&self, p: ProcNumber, parent: TransactionId) -> TransactionId {
        let proc = self.proc(p);
        let mut gen = self.xid_gen.lock();
        let xid = *gen;
        *gen = xid.next();
        self.next_xid_hint.store(gen.0, Ordering::Release);
        self.subtrans.set_parent(xid, parent);
        let off = proc.pgxactoff.load(RELAXED) as usize;
        let mut ss = SubxidState::unpack(proc.subxid_state.load(RELAXED));
        if (ss.count as usize) < PGPROC_MAX_CACHED_SUBXIDS {
            proc.subxids[ss.count as usize].store(xid.0, RELAXED);
            ss.count += 1;
        } else {
            ss.overflowed = true;
        }
        // Release: a reader that sees the new count sees the subxid.
        proc.subxid_state.store(ss.pack(), Ordering::Release);
        self.subxid_states[off].store(ss.pack(), Ordering::Release);
        xid
    }

    /// The next xid that will be assigned.
    pub fn next_xid(&self) -> TransactionId {
        TransactionId(self.next_xid_hint.load(Ordering::Acquire))
    }

    /// Makes sure `next_xid > xid` (redo, start-up from a checkpoint).
    pub fn advance_next_xid(&self, xid: TransactionId) {
        let mut gen = self.xid_gen.lock();
        if *gen <= xid {
            *gen = xid.next();
            self.next_xid_hint.store(gen.0, Ordering::Release);
        }
    }

    /// The xid currently published by `p` (INVALID when it has none).
    pub fn proc_xid(&self, p: ProcNumber) -> TransactionId {
        TransactionId(self.proc(p).xid.load(RELAXED))
    }

    /// The xmin currently published by `p`.
    pub fn proc_xmin(&self, p: ProcNumber) -> TransactionId {
        TransactionId(self.proc(p).xmin.load(RELAXED))
    }

    /// Forgets `p`'s xmin (end of a READ COMMITTED statement, end of
    /// transaction without xid): its old snapshots no longer hold back
    /// horizons.
    pub fn clear_xmin(&self, p: ProcNumber) {
        self.proc(p).xmin.store(0, RELAXED);
    }

    // ----- snapshots ---------------------------------------------------------

    /// GetSnapshotData for `p`. `cache` is the session's last snapshot: if
    /// its completion count is current it is returned as is (O(1), no
    /// allocation); otherwise a new one is computed — in place when the
    /// session holds the only reference — and stored in `cache`.
    ///
    /// Must be called only by the session owning `p`.
    pub fn get_snapshot(&self, p: ProcNumber, cache: &mut Option<Arc<Snapshot>>) -> Arc<Snapshot> {
        let proc = self.proc(p);
        let mut speculative = false;
        if let Some(snap) = cache.as_ref() {
            // GetSnapshotDataReuse without ProcArrayLock: publish the xmin
            // first, then check the count (SeqCst both; the essay's
            // "Reuse without ProcArrayLock" argues why a horizon computed
            // after a completion we did not see still sees this xmin).
            if proc.xmin.load(RELAXED) == 0 {
                proc.xmin.store(snap.xmin.0, Ordering::SeqCst);
                speculative = true;
            }
            if snap.completion_count == self.completion_count.load(Ordering::SeqCst) {
                let n = proc.snapshots_reused.load(RELAXED);
                proc.snapshots_reused.store(n + 1, RELAXED);
                return Arc::clone(snap);
            }
        }
        let st = self.state.read();
        if speculative {
            // The xmin published for a reuse that did not happen is older
            // than the snapshot about to be built: take it back under the
            // lock, where `fill_snapshot` publishes the right one (no
            // completion can run in between).
            proc.xmin.store(0, RELAXED);
        }
        // Reuse the cached allocation when nobody else holds it.
        if cache.as_mut().and_then(Arc::get_mut).is_none() {
            *cache = Some(Arc::new(Snapshot::with_capacity(st.pgprocnos.len().max(8))));
        }
        let Some(snap) = cache.as_mut().and_then(Arc::get_mut) else {
            // Unreachable: the Arc was just created. Degrade gracefully.
            return Arc::new(Snapshot::default());
        };
        self.fill_snapshot(&st, proc, snap);
        drop(st);
        // Sorting happens outside the lock: the snapshot is private until
        // returned.
        snap.xip.sort_unstable();
        snap.subxip.sort_unstable();
        let n = proc.snapshots_computed.load(RELAXED);
        proc.snapshots_computed.store(n + 1, RELAXED);
        match cache.as_ref() {
            Some(s) => Arc::clone(s),
            None => Arc::new(Snapshot::default()),
        }
    }

    /// The scan proper, under ProcArrayLock shared.
    fn fill_snapshot(&self, st: &ProcArrayState, me: &Proc, snap: &mut Snapshot) {
        // old_snapshot_threshold: the LSN is read before the xids, so any
        // change logged (or replayed) after them has a newer LSN.
        self.old_snapshot.stamp(snap, st.in_recovery);
        let xmax = st.latest_completed_xid.0 + 1;
        let mut xmin = xmax;
        let myxid = me.xid.load(RELAXED);
        if myxid >= TransactionId::FIRST_NORMAL.0 && myxid < xmin {
            xmin = myxid;
        }
        snap.xip.clear();
        snap.subxip.clear();
        let mut overflowed = false;
        if st.in_recovery {
            let kax = &st.known_assigned_xids;
            kax.copy_running(TransactionId(xmax), &mut snap.xip);
            if let Some(x) = snap.xip.first() {
                xmin = xmin.min(x.0);
            }
            // Some transaction running at an overflowed first running-xacts
            // record may still be running (known_assigned's essay).
            let over = kax.overflowed_xid();
            overflowed = over.is_valid() && xmin <= over.0;
        } else {
            let n = st.pgprocnos.len();
            let myoff = me.pgxactoff.load(RELAXED) as usize;
            // Eight entries at a time: most procs have no xid, so one OR and
            // one branch skip a whole chunk (the atomics keep the compiler
            // from vectorizing, but the loads are plain moves).
            const CHUNK: usize = 8;
            for (c, chunk) in self.xids[..n].chunks(CHUNK).enumerate() {
                let mut vals = [0u64; CHUNK];
                let mut any = 0u64;
                for (v, x) in vals.iter_mut().zip(chunk) {
                    *v = x.load(RELAXED);
                    any |= *v;
                }
                if any == 0 {
                    continue;
                }
                for (i, &xid) in vals[..chunk.len()].iter().enumerate() {
                    let off = c * CHUNK + i;
                    if xid == 0 || off == myoff || xid >= xmax {
                        continue;
                    }
                    if self.status_flags[off].load(RELAXED) & PROC_IN_VACUUM != 0 {
                        continue;
                    }
                    xmin = xmin.min(xid);
                    snap.xip.push(TransactionId(xid));
                    if !overflowed {
                        let ss =
                            SubxidState::unpack(self.subxid_states[off].load(Ordering::Acquire));
                        if ss.overflowed {
                            overflowed = true;
                        } else if ss.count > 0 {
                            let other = &self.procs[st.pgprocnos[off] as usize];
                            for s in &other.subxids[..ss.count as usize] {
                                snap.subxip.push(TransactionId(s.load(RELAXED)));
                            }
                        }
                    }
                }
            }
        }
        if overflowed && !st.in_recovery {
            snap.subxip.clear();
        }
        snap.xmin = TransactionId(xmin);
        snap.xmax = TransactionId(xmax);
        snap.suboverflowed = overflowed;
        snap.taken_during_recovery = st.in_recovery;
        snap.completion_count = st.xact_completion_count;
        if me.xmin.load(RELAXED) == 0 {
            me.xmin.store(xmin, RELAXED);
        }
    }

    // ----- completion --------------------------------------------------------

    /// ProcArrayEndTransaction / ProcArrayRemove — completion on a
    /// primary. Under ProcArrayLock
    /// exclusive: removes the transaction's xids from the running set, then
    /// advances `latest_completed_xid` to `latest_xid` (the newest xid of the
    /// tree) and bumps `xact_completion_count`. Then wakes sessions waiting
    /// for the transaction.
    ///
    /// For [`Finished::Proc`] with an INVALID `latest_xid` (a transaction that
    /// never got an xid) nothing is bumped: only the proc's xmin is cleared.
    pub fn end_transaction(&self, finished: Finished, latest_xid: TransactionId) {
        match finished {
            Finished::Proc(p) => {
                let proc = self.proc(p);
                if !latest_xid.is_valid() {
                    proc.xmin.store(0, RELAXED);
                    return;
                }
                {
                    let mut st = self.state.write();
                    let off = proc.pgxactoff.load(RELAXED) as usize;
                    if let Some(x) = self.xids.get(off) {
                        x.store(0, RELAXED);
                        self.subxid_states[off].store(0, RELAXED);
                    }
                    proc.xid.store(0, RELAXED);
                    proc.subxid_state.store(0, RELAXED);
                    proc.xmin.store(0, RELAXED);
                    st.advance_latest_completed(latest_xid);
                    // Primary COMMIT and ROLLBACK.
                    st.bump_completion_count();
                }
                self.lmgr.wake_waiters_of(p);
            }
            Finished::DummyProc(p) => {
                self.remove(p, latest_xid);
                let mut free = self.free.lock();
                free.free.push(p.0);
            }
        }
    }

    /// XidCacheRemoveRunningXids: ROLLBACK TO SAVEPOINT aborted `xids`
    /// (subxids of `p`'s transaction). They leave the proc's cache and the
    /// subtrans map; `latest_completed_xid` advances and the counter is bumped
    /// as for any completion.
    pub fn remove_subxids(&self, p: ProcNumber, xids: &[TransactionId], latest_xid: TransactionId) {
        if xids.is_empty() {
            return;
        }
        let proc = self.proc(p);
        {
            let mut st = self.state.write();
            let off = proc.pgxactoff.load(RELAXED) as usize;
            let mut ss = SubxidState::unpack(proc.subxid_state.load(RELAXED));
            let mut kept = 0usize;
            for i in 0..ss.count as usize {
                let s = proc.subxids[i].load(RELAXED);
                if !xids.contains(&TransactionId(s)) {
                    proc.subxids[kept].store(s, RELAXED);
                    kept += 1;
                }
            }
            ss.count = kept as u8;
            proc.subxid_state.store(ss.pack(), Ordering::Release);
            if let Some(d) = self.subxid_states.get(off) {
                d.store(ss.pack(), Ordering::Release);
            }
            self.subtrans.forget(xids);
            st.advance_latest_completed(latest_xid);
            // ROLLBACK TO SAVEPOINT.
            st.bump_completion_count();
        }
        self.lmgr.wake_waiters_of(p);
    }

    /// PREPARE TRANSACTION: moves `p`'s transaction (xid, subxids,
    /// subxid state) to a fresh dummy proc, which stays in the dense arrays
    /// so the xid keeps running; `p` is left without an xid. Nothing is
    /// bumped. `None` when no slot is free.
    pub fn transfer_to_dummy(&self, p: ProcNumber) -> Option<ProcNumber> {
        let d = self.free.lock().free.pop()?;
        let dummy = ProcNumber(d);
        self.add(dummy, PROC_IS_DUMMY);
        {
            let _st = self.state.write();
            let _gen = self.xid_gen.lock();
            let from = self.proc(p);
            let to = self.proc(dummy);
            let xid = from.xid.load(RELAXED);
            let ss = from.subxid_state.load(RELAXED);
            for i in 0..SubxidState::unpack(ss).count as usize {
                to.subxids[i].store(from.subxids[i].load(RELAXED), RELAXED);
            }
            let doff = to.pgxactoff.load(RELAXED) as usize;
            let foff = from.pgxactoff.load(RELAXED) as usize;
            to.xid.store(xid, RELAXED);
            to.xmin.store(from.xmin.load(RELAXED), RELAXED);
            to.subxid_state.store(ss, RELAXED);
            self.xids[doff].store(xid, RELAXED);
            self.subxid_states[doff].store(ss, RELAXED);
            from.xid.store(0, RELAXED);
            from.xmin.store(0, RELAXED);
            from.subxid_state.store(0, RELAXED);
            self.xids[foff].store(0, RELAXED);
            self.subxid_states[foff].store(0, RELAXED);
        }
        // Waiters registered on `p` must re-find the holder.
        self.lmgr.wake_waiters_of(p);
        Some(dummy)
    }

    /// RecoverPreparedTransactions: a dummy proc for a prepared transaction
    /// rebuilt at start-up, holding `xid` and its `subxids` as running (more
    /// than [`PGPROC_MAX_CACHED_SUBXIDS`] mark it overflowed, their parents
    /// go to the subtrans map). Advances `next_xid` past them. Nothing is
    /// bumped: no snapshot existed before. `None` when no slot is free.
    pub fn restore_dummy(
        &self,
        xid: TransactionId,
        subxids: &[TransactionId],
    ) -> Option<ProcNumber> {
        let d = self.free.lock().free.pop()?;
        let dummy = ProcNumber(d);
        let newest = subxids.iter().copied().max().unwrap_or(xid).max(xid);
        self.advance_next_xid(newest);
        self.add(dummy, PROC_IS_DUMMY);
        {
            let _st = self.state.write();
            let _gen = self.xid_gen.lock();
            let to = self.proc(dummy);
            let mut ss = SubxidState::default();
            for (i, s) in subxids.iter().enumerate() {
                if i < PGPROC_MAX_CACHED_SUBXIDS {
                    to.subxids[i].store(s.0, RELAXED);
                    ss.count += 1;
                } else {
                    ss.overflowed = true;
                }
            }
            if ss.overflowed {
                for s in subxids {
                    self.subtrans.set_parent(*s, xid);
                }
            }
            let off = to.pgxactoff.load(RELAXED) as usize;
            to.xid.store(xid.0, RELAXED);
            to.subxid_state.store(ss.pack(), RELAXED);
            self.xids[off].store(xid.0, RELAXED);
            self.subxid_states[off].store(ss.pack(), RELAXED);
        }
        Some(dummy)
    }

    /// The running transactions for a running-xacts WAL record
    /// (GetRunningTransactionData): `(next_xid, oldest_running_xid,
    /// latest_completed_xid, xids, subxids, subxid_overflow)`. Prepared
    /// transactions' dummy procs are included (their xids stay running).
    #[allow(clippy::type_complexity)]
    pub fn running_xacts(
        &self,
    ) -> (
        TransactionId,
        TransactionId,
        TransactionId,
        Vec<TransactionId>,
        Vec<TransactionId>,
        bool,
    ) {
        let st = self.state.read();
        let gen = self.xid_gen.lock();
        let next = *gen;
        let mut xids = Vec::new();
        let mut subxids = Vec::new();
        let mut overflow = false;
        for (off, &procno) in st.pgprocnos.iter().enumerate() {
            let x = self.xids[off].load(RELAXED);
            if x == 0 {
                continue;
            }
            xids.push(TransactionId(x));
            let ss = SubxidState::unpack(self.subxid_states[off].load(Ordering::Acquire));
            overflow |= ss.overflowed;
            let p = &self.procs[procno as usize];
            for s in &p.subxids[..ss.count as usize] {
                subxids.push(TransactionId(s.load(RELAXED)));
            }
        }
        drop(gen);
        let oldest = xids.iter().copied().min().unwrap_or(next);
        xids.sort_unstable();
        subxids.sort_unstable();
        (
            next,
            oldest,
            st.latest_completed_xid,
            xids,
            subxids,
            overflow,
        )
    }

    // ----- running checks ----------------------------------------------------

    /// Which proc runs `xid` (top-level or sub), and that proc's top-level
    /// xid. Consults subtrans only when some proc overflowed.
    pub fn holder_of(&self, xid: TransactionId) -> Option<(ProcNumber, TransactionId)> {
        if !xid.is_normal() || xid.0 >= self.next_xid_hint.load(Ordering::Acquire) {
            return None;
        }
        let st = self.state.read();
        let n = st.pgprocnos.len();
        let mut any_overflow = false;
        for off in 0..n {
            let x = self.xids[off].load(RELAXED);
            if x == 0 {
                continue;
            }
            let procno = st.pgprocnos[off];
            if x == xid.0 {
                return Some((ProcNumber(procno), TransactionId(x)));
            }
            let ss = SubxidState::unpack(self.subxid_states[off].load(Ordering::Acquire));
            let other = &self.procs[procno as usize];
            if other.subxids[..ss.count as usize]
                .iter()
                .any(|s| s.load(RELAXED) == xid.0)
            {
                return Some((ProcNumber(procno), TransactionId(x)));
            }
            any_overflow |= ss.overflowed;
        }
        if any_overflow {
            let top = self.subtrans.topmost(xid);
            if top != xid {
                for off in 0..n {
                    if self.xids[off].load(RELAXED) == top.0 {
                        return Some((ProcNumber(st.pgprocnos[off]), top));
                    }
                }
            }
        }
        None
    }

    /// The transaction locks for pg_locks: each running transaction's xid
    /// and cached subtransaction xids, held (granted) by its proc, then
    /// each wait for one (not granted). A proc without a process (a
    /// prepared transaction's) has no pid.
    pub fn xact_locks(&self) -> Vec<XactLock> {
        let mut out = Vec::new();
        {
            let st = self.state.read();
            for (off, &procno) in st.pgprocnos.iter().enumerate() {
                let x = self.xids[off].load(RELAXED);
                if x == 0 {
                    continue;
                }
                let proc = &self.procs[procno as usize];
                let pid = match proc.pid.load(RELAXED) {
                    0 => None,
                    pid => Some(pid),
                };
                out.push(XactLock {
                    pid,
                    xid: TransactionId(x),
                    granted: true,
                });
                let ss = SubxidState::unpack(self.subxid_states[off].load(Ordering::Acquire));
                for s in &proc.subxids[..ss.count as usize] {
                    out.push(XactLock {
                        pid,
                        xid: TransactionId(s.load(RELAXED)),
                        granted: true,
                    });
                }
            }
        }
        // The lmgr mutex is never taken under ProcArrayLock.
        for (waiter, xid, _) in self.lmgr.waits() {
            out.push(XactLock {
                pid: Some(self.pid(waiter)),
                xid,
                granted: false,
            });
        }
        out
    }

    /// pg_blocking_pids: the processes running the transaction the session
    /// with process id `pid` waits for.
    pub fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        self.lmgr
            .waits()
            .into_iter()
            .filter(|(w, _, _)| self.pid(*w) == pid)
            .map(|(_, _, holder)| self.pid(holder))
            .collect()
    }

    /// TransactionIdIsInProgress: is `xid` (top-level or sub) still running?
    pub fn xid_is_running(&self, xid: TransactionId) -> bool {
        if self.holder_of(xid).is_some() {
            return true;
        }
        let st = self.state.read();
        if !st.in_recovery {
            return false;
        }
        let kax = &st.known_assigned_xids;
        kax.contains(xid) || {
            // A subxid whose parent the standby knows (not one it holds).
            let top = self.subtrans.topmost(xid);
            top != xid && kax.contains(top)
        }
    }

    /// Oldest xid any running transaction or snapshot may still need — the
    /// one horizon (ComputeXidHorizons): the minimum over running xids,
    /// procs' xmins, KnownAssignedXids and the replication xmin (standbys'
    /// hot-standby feedback, slots), or `latest_completed_xid + 1`. Reads
    /// every proc's xmin — for vacuum and pruning, never for snapshots.
    pub fn oldest_xmin(&self) -> TransactionId {
        let st = self.state.read();
        let mut m = st.latest_completed_xid.0 + 1;
        let repl = self.replication_xmin.load(RELAXED);
        if repl != 0 {
            m = m.min(repl);
        }
        for (off, &procno) in st.pgprocnos.iter().enumerate() {
            let x = self.xids[off].load(RELAXED);
            if x != 0 {
                m = m.min(x);
            }
            let xm = self.procs[procno as usize].xmin.load(Ordering::SeqCst);
            if xm != 0 {
                m = m.min(xm);
            }
        }
        if let Some(x) = st.known_assigned_xids.oldest() {
            m = m.min(x.0);
        }
        TransactionId(m)
    }

    /// ProcArraySetReplicationSlotXmin: the oldest xmin replication holds
    /// (hot-standby feedback of the walsenders, slots' xmins; INVALID:
    /// none). Computed by `replication::update_replication_xmin`.
    pub fn set_replication_xmin(&self, xmin: TransactionId) {
        self.replication_xmin.store(xmin.0, Ordering::SeqCst);
        // Feedback may hold back more than the cached pruning bound
        // allows (a standby's snapshot older than what local snapshots
        // need): lower the bound now, or pruning would go on trusting it
        // until its next recompute. (SeqCst, paired with
        // `prune_horizon`'s store-then-reload: a recompute racing with
        // this cannot put the higher bound back.)
        if xmin.is_valid() {
            self.vis_horizon.fetch_min(xmin.0, Ordering::SeqCst);
        }
    }

    /// What [`ProcArray::set_replication_xmin`] last set.
    pub fn replication_xmin(&self) -> TransactionId {
        TransactionId(self.replication_xmin.load(RELAXED))
    }

    /// The oldest xmin of this node's sessions (INVALID: no session holds
    /// a snapshot) — what a standby's hot-standby feedback reports. Unlike
    /// [`ProcArray::oldest_xmin`] it leaves out KnownAssignedXids: the
    /// primary's horizon already holds its own running transactions.
    pub fn oldest_session_xmin(&self) -> TransactionId {
        let st = self.state.read();
        let mut m = 0u64;
        for &procno in &st.pgprocnos {
            let xm = self.procs[procno as usize].xmin.load(Ordering::SeqCst);
            if xm != 0 && (m == 0 || xm < m) {
                m = xm;
            }
        }
        TransactionId(m)
    }

    /// GetConflictingVirtualXIDs: the procs whose published xmin is valid
    /// and `<= limit` — their snapshots may still see row versions removed
    /// up to `limit` (standby_conflict.rs). Allocates only when some proc
    /// conflicts.
    pub fn conflicting_procs(&self, limit: TransactionId) -> Vec<ProcNumber> {
        let st = self.state.read();
        let mut out = Vec::new();
        for &procno in &st.pgprocnos {
            let xm = self.procs[procno as usize].xmin.load(Ordering::SeqCst);
            if xm != 0 && xm <= limit.0 {
                out.push(ProcNumber(procno));
            }
        }
        out
    }

    /// GlobalVisTestIsRemovableXid: the removable horizon for pruning a
    /// page whose oldest deleter is `xid`, asked by a scan that runs with
    /// `snapshot` (its own, live snapshot). `Some(horizon)` if `xid` is
    /// below it, `None` if some snapshot may still need `xid`'s versions.
    ///
    /// Two bounds answer without reading any proc's xmin (PostgreSQL 14's
    /// GlobalVisState):
    ///
    /// * **maybe_needed** — the last accurate horizon, one atomic load: an
    ///   xid below it is removable. It stays safe because the horizon of
    ///   local snapshots never moves back (a new snapshot's xmin is at least
    ///   the oldest xid running when it is taken, and every xid assigned
    ///   later is above `latest_completed_xid`); replication xmins that
    ///   move back lower it at once ([`ProcArray::set_replication_xmin`]).
    /// * **definitely_needed** — the caller's snapshot's `xmin`, set when
    ///   that snapshot was built: the caller's own xmin is published (at or
    ///   below it) while it scans, so the accurate horizon cannot be above
    ///   it, and an xid at or above it is not removable.
    ///
    /// Only an xid between the two triggers a recompute
    /// ([`ProcArray::oldest_xmin`], every proc's xmin under ProcArrayLock
    /// shared), and at most once per snapshot: a snapshot is identified by
    /// the completion count it was built at (every snapshot built at one
    /// count has the same contents), and once a recompute ran for it (or
    /// for a newer one), an xid still between the bounds is answered
    /// "needed" until a newer snapshot asks (counted in
    /// [`SnapshotStats::horizon_recomputes_avoided`]).
    /// So while one old snapshot holds the horizon back, pruning costs one
    /// scan of the procs per completion, not one per page access. The
    /// answer is never less safe than a recompute's: every shortcut answers
    /// "needed".
    pub fn prune_horizon(&self, xid: TransactionId, snapshot: &Snapshot) -> Option<TransactionId> {
        let maybe_needed = self.vis_horizon.load(RELAXED);
        if xid.0 < maybe_needed {
            return Some(TransactionId(maybe_needed));
        }
        let definitely_needed = snapshot.xmin;
        if definitely_needed.is_normal() && xid >= definitely_needed {
            return None;
        }
        // Recompute only for a snapshot newer than the last one that did:
        // an older one (or the same) would find nothing a completion could
        // have changed since, and two sessions of different generations
        // cannot take turns recomputing.
        // The check is a plain load first: while an old snapshot holds the
        // horizon back this path runs on every access to a recently
        // updated page (over a million a second in the horizon benchmark),
        // and a read-modify-write there would bounce the line between cores.
        let generation = snapshot.completion_count;
        if generation != 0
            && (self.vis_recomputed_for.load(RELAXED) >= generation
                || self.vis_recomputed_for.fetch_max(generation, RELAXED) >= generation)
        {
            self.vis_recomputes_avoided.add(1);
            return None;
        }
        self.vis_recomputes.fetch_add(1, RELAXED);
        let mut h = self.oldest_xmin();
        self.vis_horizon.store(h.0, Ordering::SeqCst);
        // A standby's feedback may have lowered the bound between our
        // reading of the replication xmin and our store: read it again
        // after the store, so the lower value wins either way.
        let r = self.replication_xmin.load(Ordering::SeqCst);
        if r != 0 && r < h.0 {
            self.vis_horizon.fetch_min(r, Ordering::SeqCst);
            h = TransactionId(r);
        }
        (xid < h).then_some(h)
    }

    /// GlobalVis's maybe_needed alone: the last accurate removable horizon,
    /// one atomic load (an xid below it is removable). Callers that find a
    /// version not dead below it ask [`ProcArray::prune_horizon`].
    pub fn removable_bound(&self) -> TransactionId {
        TransactionId(self.vis_horizon.load(RELAXED))
    }

    /// Drops subtrans entries no snapshot can ask about any more.
    pub fn truncate_subtrans(&self) {
        let oldest = self.oldest_xmin();
        self.subtrans.truncate(oldest);
    }

    /// Newest finished xid.
    pub fn latest_completed_xid(&self) -> TransactionId {
        self.state.read().latest_completed_xid
    }

    /// Current `xact_completion_count`.
    pub fn xact_completion_count(&self) -> u64 {
        self.completion_count.load(Ordering::SeqCst)
    }

    /// Number of procs in the dense arrays (sessions + dummy procs).
    pub fn num_procs(&self) -> usize {
        self.state.read().pgprocnos.len()
    }

    /// Counters for `hotpair_stat_snapshots`.
    pub fn stats(&self) -> SnapshotStats {
        let mut s = SnapshotStats {
            xact_completion_count: self.xact_completion_count(),
            horizon_recomputes: self.vis_recomputes.load(RELAXED),
            horizon_recomputes_avoided: self.vis_recomputes_avoided.sum(),
            ..Default::default()
        };
        for p in self.procs.iter() {
            s.snapshots_computed += p.snapshots_computed.load(RELAXED);
            s.snapshots_reused += p.snapshots_reused.load(RELAXED);
        }
        s
    }

    /// The subxid → parent map.
    pub fn subtrans(&self) -> &SubTrans {
        &self.subtrans
    }

    /// The transaction-lock manager (waits on xids, deadlock detection).
    pub fn lmgr(&self) -> &LockManager {
        &self.lmgr
    }

    /// The predicate lock manager (SERIALIZABLE).
    pub fn predicate(&self) -> &PredicateLockManager {
        &self.predicate
    }

    /// XactLockTableWait for session `me`: blocks until `xid` is no longer
    /// running; 40P01 on deadlock (checked after `deadlock_timeout`), 57014
    /// when `cancel` is set, a timeout error when `limits` says so.
    pub fn wait_for_xid(
        &self,
        me: ProcNumber,
        xid: TransactionId,
        deadlock_timeout: Duration,
        cancel: &AtomicBool,
        limits: crate::lmgr::WaitLimits,
    ) -> PgResult<()> {
        self.lmgr
            .wait_for_xid(self, me, xid, deadlock_timeout, cancel, limits)
    }

    /// Checks the dense-array invariants (tests, debugging): every proc in use
    /// appears once, its pgxactoff points at itself, its copies equal its
    /// dense entries, and entries past the end are clear.
    pub fn check_invariants(&self) -> Result<(), String> {
        let st = self.state.write();
        let _gen = self.xid_gen.lock();
        let n = st.pgprocnos.len();
        let mut seen = vec![false; self.procs.len()];
        for (off, &procno) in st.pgprocnos.iter().enumerate() {
            let p = self.procs.get(procno as usize).ok_or("bad procno")?;
            if std::mem::replace(&mut seen[procno as usize], true) {
                return Err(format!("proc {procno} twice in dense arrays"));
            }
            if !p.in_use.load(RELAXED) {
                return Err(format!("proc {procno} in dense arrays but not in use"));
            }
            if p.pgxactoff.load(RELAXED) as usize != off {
                return Err(format!(
                    "proc {procno} pgxactoff {} != {off}",
                    p.pgxactoff.load(RELAXED)
                ));
            }
            if p.xid.load(RELAXED) != self.xids[off].load(RELAXED) {
                return Err(format!("proc {procno} xid copy differs"));
            }
            if p.status_flags.load(RELAXED) != self.status_flags[off].load(RELAXED) {
                return Err(format!("proc {procno} flags copy differs"));
            }
            if p.subxid_state.load(RELAXED) != self.subxid_states[off].load(RELAXED) {
                return Err(format!("proc {procno} subxid state copy differs"));
            }
            let ss = SubxidState::unpack(p.subxid_state.load(RELAXED));
            if ss.count > 0 && p.xid.load(RELAXED) == 0 {
                return Err(format!("proc {procno} has subxids but no xid"));
            }
        }
        for off in n..self.procs.len() {
            if self.xids[off].load(RELAXED) != 0 || self.subxid_states[off].load(RELAXED) != 0 {
                return Err(format!("dense entry {off} past the end is not clear"));
            }
        }
        for (i, p) in self.procs.iter().enumerate() {
            if p.in_use.load(RELAXED) && !seen[i] {
                return Err(format!("proc {i} in use but not in dense arrays"));
            }
        }
        Ok(())
    }
}

/// old_snapshot_threshold's entry points (the state and the test live in
/// [`crate::old_snapshot`]; these need the procarray's own fields).
impl ProcArray {
    /// Sets `old_snapshot_threshold` (minutes, -1 off) before the procarray
    /// is shared: from then on `enabled` is a plain field every snapshot
    /// and page path branches on once.
    pub fn with_old_snapshot_threshold(mut self, minutes: i64) -> ProcArray {
        self.old_snapshot = OldSnapshot::new(minutes);
        self
    }

    /// The old-snapshot state.
    #[inline(always)]
    pub fn old_snapshot(&self) -> &OldSnapshot {
        &self.old_snapshot
    }

    /// bound(now): `min(latest_completed_xid + 1, every running xid)` —
    /// no snapshot taken from now on has an older xmin. Reads no proc's
    /// xmin (snapshots older than the threshold are what it overrides).
    pub fn xmin_bound_now(&self) -> TransactionId {
        let st = self.state.read();
        let mut m = st.latest_completed_xid.0 + 1;
        for x in &self.xids[..st.pgprocnos.len()] {
            let x = x.load(RELAXED);
            if x != 0 {
                m = m.min(x);
            }
        }
        if let Some(x) = st.known_assigned_xids.oldest() {
            m = m.min(x.0);
        }
        TransactionId(m)
    }

    /// TransactionIdLimitedForOldSnapshots: the horizon pruning and VACUUM
    /// may use instead of `ordinary` (the accurate one) — the time map's
    /// (bound(now) with threshold 0), never past the replication xmin
    /// (hot-standby feedback and slots keep their rows), never below
    /// `ordinary`. `ordinary` itself when off.
    pub fn limit_for_old_snapshots(&self, ordinary: TransactionId) -> TransactionId {
        let os = &self.old_snapshot;
        if !os.enabled() {
            return ordinary;
        }
        let mut l = if os.threshold() == 0 {
            self.xmin_bound_now()
        } else {
            os.map_limited()
        };
        if !l.is_valid() {
            return ordinary;
        }
        let repl = self.replication_xmin.load(Ordering::SeqCst);
        if repl != 0 {
            l = l.min(TransactionId(repl));
        }
        l.max(ordinary)
    }

    /// [`ProcArray::prune_horizon`], then, if that keeps `xid`'s versions
    /// and old_snapshot_threshold is on, the limited horizon.
    #[inline]
    pub fn prune_horizon_limited(
        &self,
        xid: TransactionId,
        snapshot: &Snapshot,
    ) -> Option<TransactionId> {
        let h = self.prune_horizon(xid, snapshot);
        if h.is_some() || !self.old_snapshot.enabled() {
            return h;
        }
        let l = self.limit_for_old_snapshots(TransactionId::INVALID);
        (l.is_valid() && xid < l).then_some(l)
    }

    /// Whether a snapshot with `xmin` is older than old_snapshot_threshold
    /// (false when off): with 0 every snapshot is; otherwise its xmin lies
    /// below the bound the time map recorded N minutes ago, so it was
    /// taken before then (conservative: an old snapshot with a newer xmin
    /// counts as young). A standby's replay asks it of each conflicting
    /// snapshot (engine's standby_conflict.rs).
    pub fn snapshot_is_old(&self, xmin: TransactionId) -> bool {
        let os = &self.old_snapshot;
        if !os.enabled() {
            return false;
        }
        if os.threshold() == 0 {
            return true;
        }
        let l = os.map_limited();
        l.is_valid() && xmin < l
    }

    /// The old-snapshot tick (once a second, off the snapshot path): clock,
    /// time → xid map, purge of early-removal records no snapshot needs.
    pub fn old_snapshot_tick(&self) {
        if !self.old_snapshot.enabled() {
            return;
        }
        let bound = self.xmin_bound_now();
        let ordinary = self.oldest_xmin();
        self.old_snapshot
            .tick(crate::old_snapshot::now_secs(), bound, ordinary);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// xorshift: deterministic per-thread randomness without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn in_snap(pa: &ProcArray, s: &Snapshot, x: TransactionId) -> bool {
        s.xid_in_snapshot(x, &|t| pa.subtrans().parent(t))
    }

    #[test]
    fn snapshot_sees_running_and_not_finished() {
        let pa = ProcArray::new(10, TransactionId(100));
        let a = pa.connect(10).unwrap();
        let b = pa.connect(10).unwrap();
        let mut cache_b = None;
        let xa = pa.assign_xid(a);
        assert_eq!(xa, TransactionId(100));
        assert!(pa.xid_is_running(xa));
        let s = pa.get_snapshot(b, &mut cache_b);
        // xa >= xmax: invisible because it started after latest_completed.
        assert!(in_snap(&pa, &s, xa));
        assert_eq!(s.xmax, TransactionId(100));
        // A second transaction completes: xmax moves past xa, which is in xip.
        let xb = pa.assign_xid(b);
        pa.end_transaction(Finished::Proc(b), xb);
        let s = pa.get_snapshot(b, &mut cache_b);
        assert_eq!(s.xmax, TransactionId(102));
        assert_eq!(s.xip, vec![xa]);
        assert_eq!(s.xmin, xa);
        assert!(in_snap(&pa, &s, xa));
        assert!(!in_snap(&pa, &s, xb));
        assert_eq!(pa.proc_xmin(b), xa);
        pa.end_transaction(Finished::Proc(a), xa);
        assert!(!pa.xid_is_running(xa));
        let s = pa.get_snapshot(b, &mut cache_b);
        assert!(!in_snap(&pa, &s, xa));
        assert!(s.xip.is_empty());
        pa.check_invariants().unwrap();
        pa.disconnect(a);
        pa.disconnect(b);
        assert_eq!(pa.num_procs(), 0);
        pa.check_invariants().unwrap();
    }

    #[test]
    fn own_xid_not_in_xip_but_lowers_xmin() {
        let pa = ProcArray::new(4, TransactionId(10));
        let a = pa.connect(4).unwrap();
        let b = pa.connect(4).unwrap();
        let xa = pa.assign_xid(a);
        let xb = pa.assign_xid(b);
        pa.end_transaction(Finished::Proc(b), xb);
        let mut c = None;
        let s = pa.get_snapshot(a, &mut c);
        assert!(s.xip.is_empty());
        assert_eq!(s.xmin, xa);
    }

    #[test]
    fn cache_reuse_and_invalidation() {
        let pa = ProcArray::new(8, TransactionId(3));
        let a = pa.connect(8).unwrap();
        let b = pa.connect(8).unwrap();
        let mut cache = None;
        let s1 = pa.get_snapshot(a, &mut cache);
        let s2 = pa.get_snapshot(a, &mut cache);
        assert!(Arc::ptr_eq(&s1, &s2), "reused snapshot is the same Arc");
        let st = pa.stats();
        assert_eq!((st.snapshots_computed, st.snapshots_reused), (1, 1));
        // Assigning an xid elsewhere does not invalidate.
        let xb = pa.assign_xid(b);
        let s3 = pa.get_snapshot(a, &mut cache);
        assert!(Arc::ptr_eq(&s1, &s3));
        // A transaction without an xid bumps nothing.
        let count = pa.xact_completion_count();
        pa.end_transaction(Finished::Proc(a), TransactionId::INVALID);
        assert_eq!(pa.xact_completion_count(), count);
        assert_eq!(pa.proc_xmin(a), TransactionId::INVALID);
        let _s4 = pa.get_snapshot(a, &mut cache);
        assert_eq!(pa.proc_xmin(a), s1.xmin, "reuse re-publishes xmin");
        // Completion invalidates.
        pa.end_transaction(Finished::Proc(b), xb);
        assert_eq!(pa.xact_completion_count(), count + 1);
        drop((s1, s2, s3, _s4));
        let s5 = pa.get_snapshot(a, &mut cache);
        assert_eq!(s5.completion_count, count + 1);
        assert_eq!(s5.xmax, xb.next());
        let st = pa.stats();
        assert_eq!(
            (
                st.snapshots_computed,
                st.snapshots_reused,
                st.xact_completion_count
            ),
            (2, 3, count + 1)
        );
    }

    #[test]
    fn subxids_cached_then_overflowed() {
        let pa = ProcArray::new(4, TransactionId(3));
        let a = pa.connect(4).unwrap();
        let b = pa.connect(4).unwrap();
        let top = pa.assign_xid(a);
        let subs: Vec<_> = (0..70).map(|_| pa.assign_subxid(a, top)).collect();
        // Bump so that all of them are below xmax.
        let xb = pa.assign_xid(b);
        pa.end_transaction(Finished::Proc(b), xb);
        let mut c = None;
        let s = pa.get_snapshot(b, &mut c);
        assert!(s.suboverflowed);
        for &x in &subs {
            assert!(pa.xid_is_running(x), "subxid {x} running");
            assert!(in_snap(&pa, &s, x), "subxid {x} in snapshot");
            assert_eq!(pa.holder_of(x), Some((a, top)));
        }
        // Roll back the last ten (some cached, none: overflowed ones).
        let dead = &subs[55..];
        pa.remove_subxids(a, dead, subs[69]);
        let s = pa.get_snapshot(b, &mut c);
        for &x in dead {
            assert!(!pa.xid_is_running(x), "aborted subxid {x} not running");
            assert!(!in_snap(&pa, &s, x), "aborted subxid {x} not in snapshot");
        }
        for &x in &subs[..55] {
            assert!(in_snap(&pa, &s, x));
        }
        pa.check_invariants().unwrap();

        // A fresh transaction with few subxids is not overflowed.
        pa.end_transaction(Finished::Proc(a), subs[69]);
        let top = pa.assign_xid(a);
        let s1 = pa.assign_subxid(a, top);
        let s2 = pa.assign_subxid(a, s1);
        let xb = pa.assign_xid(b);
        pa.end_transaction(Finished::Proc(b), xb);
        let s = pa.get_snapshot(b, &mut c);
        assert!(!s.suboverflowed);
        assert_eq!(s.subxip, vec![s1, s2]);
        assert_eq!(pa.subtrans().topmost(s2), top);
    }

    #[test]
    fn too_many_backends_and_dummy_procs() {
        let pa = ProcArray::new(3, TransactionId(3));
        let a = pa.connect(2).unwrap();
        let b = pa.connect(2).unwrap();
        assert!(pa.connect(2).is_none());
        let xa = pa.assign_xid(a);
        let sub = pa.assign_subxid(a, xa);
        // PREPARE: the xid moves to a dummy proc and keeps running.
        let d = pa.transfer_to_dummy(a).unwrap();
        pa.check_invariants().unwrap();
        assert_eq!(pa.proc_xid(a), TransactionId::INVALID);
        assert_eq!(pa.holder_of(sub), Some((d, xa)));
        let count = pa.xact_completion_count();
        pa.disconnect(a);
        assert_eq!(pa.xact_completion_count(), count, "prepare bumps nothing");
        assert!(pa.xid_is_running(xa));
        // COMMIT PREPARED from another session.
        pa.end_transaction(Finished::DummyProc(d), sub);
        assert!(!pa.xid_is_running(xa));
        assert_eq!(pa.xact_completion_count(), count + 1);
        assert_eq!(pa.latest_completed_xid(), sub);
        pa.check_invariants().unwrap();
        pa.disconnect(b);
        assert_eq!(pa.num_procs(), 0);
    }

    #[test]
    fn recovery_snapshots_from_known_assigned() {
        let pa = ProcArray::new(4, TransactionId(3));
        pa.set_in_recovery(true);
        let s1 = pa.connect(4).unwrap();
        pa.record_known_assigned(TransactionId(7)); // 3..=7 running
        pa.expire_tree_known_assigned(TransactionId(5), &[TransactionId(6)], TransactionId(6))
            .bump_completion_count();
        let mut c = None;
        let s = pa.get_snapshot(s1, &mut c);
        assert!(s.taken_during_recovery);
        assert_eq!(s.xmax, TransactionId(7));
        assert_eq!(s.xip, vec![TransactionId(3), TransactionId(4)]);
        assert!(pa.xid_is_running(TransactionId(7)));
        assert!(!pa.xid_is_running(TransactionId(5)));
        let before = pa.xact_completion_count();
        pa.expire_tree_known_assigned(TransactionId(3), &[], TransactionId(3))
            .bump_completion_count();
        assert_eq!(
            pa.xact_completion_count(),
            before + 1,
            "replayed commit bumps the counter"
        );
        let s = pa.get_snapshot(s1, &mut c);
        assert_eq!(s.xip, vec![TransactionId(4)]);
        assert_eq!(
            pa.oldest_xmin(),
            TransactionId(3),
            "the first snapshot's xmin"
        );
        pa.clear_xmin(s1);
        assert_eq!(pa.oldest_xmin(), TransactionId(4));
    }

    /// Promotion: a prepared transaction (dummy proc) stays running, the
    /// other KnownAssignedXids are orphans; leaving recovery drops them,
    /// bumps the counter (no cached recovery snapshot is reused) and
    /// snapshots come from the procs; new xids follow the replayed ones.
    #[test]
    fn end_recovery_keeps_prepared_and_drops_orphans() {
        let pa = ProcArray::new(8, TransactionId(3));
        pa.set_in_recovery(true);
        let s1 = pa.connect(8).unwrap();
        pa.init_known_assigned(
            &[TransactionId(4), TransactionId(5)],
            false,
            TransactionId(6),
            TransactionId(3),
        );
        pa.record_known_assigned(TransactionId(7)); // 6, 7 too
        let mut c = None;
        let s = pa.get_snapshot(s1, &mut c);
        assert!(s.taken_during_recovery);
        // xid 5 was prepared: promotion gives it a dummy proc first.
        pa.restore_dummy(TransactionId(5), &[TransactionId(7)])
            .expect("a free proc");
        let orphans = pa.orphaned_known_assigned();
        assert_eq!(orphans, vec![TransactionId(4), TransactionId(6)]);
        let before = pa.xact_completion_count();
        pa.end_recovery(TransactionId(6));
        assert_eq!(pa.xact_completion_count(), before + 1);
        assert!(pa.known_assigned().is_empty());
        assert_eq!(pa.latest_completed_xid(), TransactionId(6));
        let s = pa.get_snapshot(s1, &mut c);
        assert!(
            !s.taken_during_recovery,
            "the cached snapshot is not reused"
        );
        assert_eq!(s.xip, vec![TransactionId(5)]);
        assert!(pa.xid_is_running(TransactionId(5)));
        assert!(pa.xid_is_running(TransactionId(7)), "prepared subxid");
        assert!(!pa.xid_is_running(TransactionId(4)));
        assert!(!pa.xid_is_running(TransactionId(6)));
        let s2 = pa.connect(8).unwrap();
        assert_eq!(pa.assign_xid(s2), TransactionId(8));
        pa.check_invariants().unwrap();
    }

    /// GlobalVis: below maybe_needed removable without a recompute; at or
    /// above the asking snapshot's xmin needed without one; between them
    /// one recompute per snapshot, the next only for a newer snapshot.
    #[test]
    fn global_vis_two_bounds_recompute_once_per_snapshot() {
        let pa = ProcArray::new(4, TransactionId(3));
        let old = pa.connect(4).unwrap();
        let w = pa.connect(4).unwrap();
        let me = pa.connect(4).unwrap();
        // An old snapshot holds the horizon at 3.
        let mut old_cache = None;
        let _old_snap = pa.get_snapshot(old, &mut old_cache);
        assert_eq!(pa.proc_xmin(old), TransactionId(3));
        // Deleters 3..=12 commit.
        for _ in 0..10 {
            let x = pa.assign_xid(w);
            pa.end_transaction(Finished::Proc(w), x);
        }
        let mut c = None;
        let snap = pa.get_snapshot(me, &mut c);
        assert_eq!(snap.xmin, TransactionId(13));
        let recomputes = |pa: &ProcArray| pa.stats().horizon_recomputes;
        // At or above definitely_needed (13): needed, no recompute.
        assert_eq!(pa.prune_horizon(TransactionId(13), &snap), None);
        assert_eq!(recomputes(&pa), 0);
        // Between: one recompute (the old snapshot holds 3)…
        assert_eq!(pa.prune_horizon(TransactionId(7), &snap), None);
        assert_eq!(recomputes(&pa), 1);
        // …and not again for the same snapshot, page after page.
        for x in 4..13 {
            assert_eq!(pa.prune_horizon(TransactionId(x), &snap), None);
        }
        assert_eq!(recomputes(&pa), 1);
        assert_eq!(pa.stats().horizon_recomputes_avoided, 9);
        // An older snapshot (built before the last completions) does not
        // recompute either: the last recompute was for a newer one.
        let older = Snapshot {
            xmin: TransactionId(13),
            completion_count: snap.completion_count - 1,
            ..Default::default()
        };
        assert_eq!(pa.prune_horizon(TransactionId(4), &older), None);
        assert_eq!(recomputes(&pa), 1);
        assert_eq!(pa.stats().horizon_recomputes_avoided, 10);
        // The old snapshot goes; a completion gives a newer snapshot,
        // which may recompute once: now 7 is removable.
        pa.clear_xmin(old);
        let x = pa.assign_xid(w);
        pa.end_transaction(Finished::Proc(w), x);
        pa.clear_xmin(me);
        let snap = pa.get_snapshot(me, &mut c);
        assert_eq!(
            pa.prune_horizon(TransactionId(7), &snap),
            Some(TransactionId(14))
        );
        assert_eq!(recomputes(&pa), 2);
        // Below maybe_needed (14): removable on one load.
        assert_eq!(
            pa.prune_horizon(TransactionId(9), &snap),
            Some(TransactionId(14))
        );
        assert_eq!(recomputes(&pa), 2);
    }

    #[test]
    fn oldest_xmin_reads_xmins() {
        let pa = ProcArray::new(4, TransactionId(3));
        let a = pa.connect(4).unwrap();
        let b = pa.connect(4).unwrap();
        let xa = pa.assign_xid(a);
        let xb = pa.assign_xid(b);
        pa.end_transaction(Finished::Proc(b), xb);
        let mut c = None;
        let _ = pa.get_snapshot(b, &mut c); // b's xmin = xa
        pa.end_transaction(Finished::Proc(a), xa);
        assert_eq!(pa.oldest_xmin(), xa, "b's snapshot still needs xa");
        pa.clear_xmin(b);
        assert_eq!(pa.oldest_xmin(), xb.next());
    }

    /// Many threads connect, assign, take snapshots, complete and disconnect
    /// at once; invariant checks run meanwhile and at the end.
    #[test]
    fn stress_dense_arrays_stay_dense() {
        const THREADS: usize = 8;
        let pa = ProcArray::new(THREADS * 2 + 2, TransactionId(3));
        let stop = AtomicBool::new(false);
        let checks = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let mut workers = Vec::new();
            for t in 0..THREADS {
                let pa = &pa;
                workers.push(s.spawn(move || {
                    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((t as u64 + 1) * 0x1234_5677));
                    for _ in 0..300 {
                        let Some(p) = pa.connect(usize::MAX) else {
                            continue;
                        };
                        let mut cache = None;
                        for _ in 0..rng.below(5) + 1 {
                            let _ = pa.get_snapshot(p, &mut cache);
                            if rng.below(2) == 0 {
                                let top = pa.assign_xid(p);
                                let mut latest = top;
                                for _ in 0..rng.below(70) {
                                    latest = pa.assign_subxid(p, top);
                                }
                                if rng.below(4) == 0 && latest != top {
                                    pa.remove_subxids(p, &[latest], latest);
                                }
                                let _ = pa.get_snapshot(p, &mut cache);
                                pa.end_transaction(Finished::Proc(p), latest);
                            } else {
                                pa.end_transaction(Finished::Proc(p), TransactionId::INVALID);
                            }
                        }
                        pa.disconnect(p);
                    }
                }));
            }
            let (pa, stop, checks) = (&pa, &stop, &checks);
            let checker = s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    pa.check_invariants().unwrap();
                    checks.fetch_add(1, Ordering::Relaxed);
                    std::thread::yield_now();
                }
            });
            for w in workers {
                w.join().unwrap();
            }
            stop.store(true, Ordering::Relaxed);
            checker.join().unwrap();
        });
        pa.check_invariants().unwrap();
        assert_eq!(pa.num_procs(), 0);
        assert!(checks.load(Ordering::Relaxed) > 0);
        assert_eq!(pa.oldest_xmin(), pa.latest_completed_xid().next());
    }

    /// Snapshots taken concurrently with commits: an xid finished before a
    /// snapshot started is never "running" in it, and an xid (or subxid)
    /// running from before the snapshot until after it is never visible.
    #[test]
    fn concurrent_snapshots_are_correct() {
        const WRITERS: usize = 4;
        const READERS: usize = 3;
        #[derive(Default)]
        struct Book {
            running: BTreeSet<TransactionId>,
            /// Entered before the completion call: may have finished.
            finishing: BTreeSet<TransactionId>,
            /// Entered after the completion call returned: has finished.
            finished: BTreeSet<TransactionId>,
        }
        let pa = ProcArray::new(WRITERS + READERS + 1, TransactionId(3));
        let book = Mutex::new(Book::default());
        let stop = AtomicBool::new(false);
        let checked = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let mut writers = Vec::new();
            for t in 0..WRITERS {
                let (pa, book) = (&pa, &book);
                writers.push(s.spawn(move || {
                    let mut rng = Rng(0xdead_beef ^ ((t as u64 + 7) * 0x9999));
                    let p = pa.connect(usize::MAX).unwrap();
                    for _ in 0..200 {
                        let top = pa.assign_xid(p);
                        let mut mine = vec![top];
                        book.lock().running.insert(top);
                        let nsub = if rng.below(8) == 0 { 70 } else { rng.below(4) };
                        for _ in 0..nsub {
                            let sx = pa.assign_subxid(p, top);
                            book.lock().running.insert(sx);
                            mine.push(sx);
                        }
                        if mine.len() > 2 && rng.below(3) == 0 {
                            // ROLLBACK TO: the newest subxid finishes (aborted).
                            let Some(dead) = mine.pop() else {
                                unreachable!()
                            };
                            book.lock().finishing.insert(dead);
                            pa.remove_subxids(p, &[dead], dead);
                            let mut b = book.lock();
                            b.running.remove(&dead);
                            b.finished.insert(dead);
                        }
                        std::thread::yield_now();
                        let latest = *mine.iter().max().unwrap();
                        book.lock().finishing.extend(mine.iter().copied());
                        pa.end_transaction(Finished::Proc(p), latest);
                        let mut b = book.lock();
                        for x in mine {
                            b.running.remove(&x);
                            b.finished.insert(x);
                        }
                    }
                    pa.disconnect(p);
                }));
            }
            for _ in 0..READERS {
                let (pa, book, stop, checked) = (&pa, &book, &stop, &checked);
                s.spawn(move || {
                    let p = pa.connect(usize::MAX).unwrap();
                    let mut cache = None;
                    while !stop.load(Ordering::Relaxed) {
                        let (running_before, finished_before) = {
                            let b = book.lock();
                            (
                                b.running.clone(),
                                b.finished
                                    .iter()
                                    .rev()
                                    .take(200)
                                    .copied()
                                    .collect::<Vec<_>>(),
                            )
                        };
                        let snap = pa.get_snapshot(p, &mut cache);
                        // Evaluate before looking at `finishing`: an overflowed
                        // snapshot resolves subxids through subtrans *now*, and a
                        // rolled-back subxid is forgotten there (it is aborted
                        // in clog first, so it is invisible either way).
                        let verdicts: Vec<(TransactionId, bool)> = running_before
                            .iter()
                            .map(|x| (*x, in_snap(pa, &snap, *x)))
                            .collect();
                        let still_running: Vec<_> = {
                            let b = book.lock();
                            verdicts
                                .into_iter()
                                .filter(|(x, _)| !b.finishing.contains(x))
                                .collect()
                        };
                        for x in finished_before {
                            assert!(
                                !in_snap(pa, &snap, x),
                                "finished {x} seen running by {snap:?}"
                            );
                        }
                        for (x, seen_running) in still_running {
                            assert!(seen_running, "running {x} visible to {snap:?}");
                        }
                        checked.fetch_add(1, Ordering::Relaxed);
                        pa.end_transaction(Finished::Proc(p), TransactionId::INVALID);
                    }
                    pa.disconnect(p);
                });
            }
            for w in writers {
                w.join().unwrap();
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(checked.load(Ordering::Relaxed) > 0);
        pa.check_invariants().unwrap();
        let st = pa.stats();
        assert!(st.snapshots_computed > 0);
    }

    /// Lock-free reuse publishes the xmin before it checks the count: a
    /// horizon computed after a completion the reusing session did not see
    /// must count that session's xmin (the essay's "Reuse without
    /// ProcArrayLock"). Writers complete transactions in bursts so the
    /// reader often reuses; a horizon thread publishes every horizon it
    /// computes; the reader checks that no horizon it can see after a
    /// reuse is above the reused snapshot's xmin. Fails when the reuse
    /// checks the count before publishing the xmin.
    #[test]
    fn lock_free_reuse_publishes_xmin_before_horizons_pass_it() {
        let pa = ProcArray::new(8, TransactionId(3));
        let stop = AtomicBool::new(false);
        let latest_horizon = AtomicU64::new(0);
        let reuses = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let (pa, stop, latest_horizon) = (&pa, &stop, &latest_horizon);
            // Writers: one long transaction at a time holds the oldest xid
            // (the reader's xmin); it ends, and a new one starts.
            for t in 0..2u64 {
                s.spawn(move || {
                    let p = pa.connect(usize::MAX).unwrap();
                    let mut rng = Rng(0x5eed ^ (t + 1) * 0x1234_5678);
                    while !stop.load(RELAXED) {
                        let x = pa.assign_xid(p);
                        for _ in 0..rng.below(2_000) {
                            std::hint::spin_loop();
                        }
                        pa.end_transaction(Finished::Proc(p), x);
                    }
                    pa.disconnect(p);
                });
            }
            s.spawn(move || {
                while !stop.load(RELAXED) {
                    let h = pa.oldest_xmin();
                    latest_horizon.fetch_max(h.0, Ordering::SeqCst);
                }
            });
            let reader = s.spawn(|| {
                let p = pa.connect(usize::MAX).unwrap();
                let mut cache = None;
                for _ in 0..200_000 {
                    // End of the previous transaction: no xmin published.
                    pa.clear_xmin(p);
                    let before = pa.stats().snapshots_reused;
                    let snap = pa.get_snapshot(p, &mut cache);
                    if pa.stats().snapshots_reused > before {
                        reuses.fetch_add(1, RELAXED);
                    }
                    // The snapshot is in use: nothing it needs may be
                    // removable by any horizon computed from now on.
                    for _ in 0..4 {
                        let h = latest_horizon.load(Ordering::SeqCst);
                        assert!(
                            h <= snap.xmin.0,
                            "horizon {h} passed the xmin {} of a snapshot in use",
                            snap.xmin.0
                        );
                    }
                }
                pa.clear_xmin(p);
                pa.disconnect(p);
            });
            let r = reader.join();
            stop.store(true, RELAXED);
            if let Err(e) = r {
                std::panic::resume_unwind(e);
            }
        });
        assert!(
            reuses.load(RELAXED) > 0,
            "the reader never reused a snapshot"
        );
    }
}

/// A transaction lock as pg_locks shows it (see [`ProcArray::xact_locks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XactLock {
    /// The holder's or waiter's process id (None: a prepared transaction).
    pub pid: Option<i32>,
    /// The transaction.
    pub xid: TransactionId,
    /// Held (ExclusiveLock) or waited for (ShareLock).
    pub granted: bool,
}
