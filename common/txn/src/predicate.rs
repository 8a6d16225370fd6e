//! # Predicate locks for SERIALIZABLE (predicate.c, README-SSI)
//!
//! Serializable Snapshot Isolation as PostgreSQL builds it (Ports and
//! Grittner, VLDB 2012): a SERIALIZABLE transaction runs on one snapshot,
//! like REPEATABLE READ, and this module watches for the one pattern of
//! read/write dependencies that snapshot isolation lets through and a
//! serial order would not — the *dangerous structure*:
//!
//! ```text
//!        rw              rw
//!  Tin ──────► Tpivot ──────► Tout        Tout commits first
//! ```
//!
//! An **rw-antidependency** `R ─rw─► W` means R read a version W's write
//! replaced (or would have read a row W inserted): in any serial order R
//! comes before W. Two such edges in a row, with Tout committed before the
//! other two, cannot be serialised; one transaction of the structure —
//! normally the pivot — fails with 40001 "could not serialize access due
//! to read/write dependencies among transactions".
//!
//! ## Records
//!
//! * [`Sxact`] (SERIALIZABLEXACT): one per serializable transaction, from
//!   its first snapshot until no transaction that overlapped it runs. It
//!   holds the flags (committed, prepared, doomed, read-only, the summary
//!   flags), the commit sequence numbers, the edges (`in_conflicts`: who
//!   read before I wrote; `out_conflicts`: whose writes I did not see) and
//!   the SIRead locks it owns.
//! * **SIRead locks** on [`Target`]s: a tuple (relation, block, offset), a
//!   page, a relation, an index key, an index. They block nothing; they
//!   record what a transaction read, so that a later write into that range
//!   finds its readers (CheckForSerializableConflictIn). A write that comes
//!   first is found by the reader instead, from MVCC data: the version it
//!   reads has a concurrent xmax, or the version it skips a concurrent xmin
//!   (CheckForSerializableConflictOut, called by the heap with the xid).
//!
//! ## Granularity
//!
//! A sequential scan locks its relation. A heap fetch (index scan) locks
//! the tuple it returns. hotpair's indexes are in memory with no leaf
//! pages, so an index lookup locks the *key* it searched (a hash of the
//! encoded key, [`Target::IndexKey`]) — this covers the absent key too, so
//! a later insert of that key is a conflict (phantom protection); inserts
//! check the key of every index entry they make. A transaction's locks are
//! promoted to a coarser target as PostgreSQL does: more than
//! `max_pred_locks_per_page` tuples of one page become the page, more
//! than the per-relation threshold of one relation (or index) become the
//! relation (`max_pred_locks_per_relation`, negative: per-transaction
//! limit divided by its magnitude, minus one), and a transaction holding
//! more than `max_pred_locks_per_transaction` locks has its most locked
//! relation promoted. A coarser lock replaces the finer ones it covers.
//!
//! ## Invariants
//!
//! 1. Only serializable transactions take SIRead locks and check for
//!    conflicts; the writes of other transactions are invisible here (as
//!    in PostgreSQL: SERIALIZABLE protects serializable transactions from
//!    each other).
//! 2. `last_commit_seq` is read *before* a transaction's snapshot is
//!    taken, and a transaction is marked committed (gets its
//!    `commit_seq`) only after the procarray shows it committed. So
//!    `W.last_commit_before_snapshot < R.commit_seq` whenever W's snapshot
//!    might not see R: the overlap test errs only on the side of a
//!    conflict.
//! 3. A committed transaction's locks and record stay until no active
//!    serializable transaction overlaps it (`last_commit_before_snapshot <
//!    commit_seq` for none of them); then it is dropped. At commit, edges
//!    between two committed transactions are folded into the flags
//!    (`conflict_out` with `earliest_out_conflict_commit`), as
//!    ReleasePredicateLocks does, so dropping never loses a rule's input;
//!    any edge left to a dropped record becomes a summary flag.
//! 4. A rolled-back transaction is dropped at once, edges and locks.
//!
//! ## Read-only transactions
//!
//! A READ ONLY serializable transaction started while no read/write
//! serializable transaction runs has a safe snapshot: it registers
//! nothing. Otherwise it remembers the read/write transactions it
//! overlapped (`possible_unsafe`); when the last of them ends without a
//! conflict out to a transaction committed before the read-only one's
//! snapshot, its snapshot is safe: its locks are released and it stops
//! tracking. If one ends with such a conflict, it is unsafe and keeps
//! tracking. READ ONLY DEFERRABLE waits ([`PredicateLockManager::wait_safe`])
//! until one of the two is known, and takes a new snapshot when unsafe.
//!
//! ## Locking
//!
//! One mutex guards everything (the records, the target table, the
//! sequence numbers). It is a leaf: callers may hold a buffer content
//! lock, and nothing here takes another lock. Sessions that are not
//! serializable never take it.
//!
//! ## Summarising (bounded memory)
//!
//! A long-running serializable transaction keeps every record that
//! committed while it ran, with its locks. At most `max_sxacts` records
//! are kept (PostgreSQL's pool: ten per connection slot); registering one
//! more first *summarises* the oldest committed one
//! (SummarizeOldestCommittedSxact): its SIRead locks join the "old
//! committed" locks (`old_locks`, each target with the newest commit
//! sequence number summarised onto it), its xid and earliest conflict out
//! go to the summary map ([`serial`], spilled to `DIR/pg_serial`), and its
//! edges become summary flags on both sides. A writer into an old
//! committed lock newer than its snapshot gets `summary_conflict_in`; a
//! reader of a version a summarised xid wrote finds it in the map and
//! fails, or takes `summary_conflict_out`, as CheckForSerializableConflictOut
//! does. Both only err towards a conflict. Old committed locks beyond the
//! cap are merged into their relation's lock, and both structures are
//! forgotten once no active transaction overlaps them.
//!
//! Next: partition the target table by hash as predicate.c does.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{Oid, RelFileId, TransactionId};

pub mod serial;

use serial::{Serial, Summary};

/// Identifies a serializable transaction's record ([`Sxact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SxactId(pub u64);

/// What an SIRead lock covers (PREDICATELOCKTARGETTAG).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// A whole heap relation (sequential scans, promotion).
    Relation(RelFileId),
    /// One heap page.
    Page(RelFileId, u32),
    /// One tuple version: relation, block, offset.
    Tuple(RelFileId, u32, u16),
    /// A whole index (promotion of its key locks).
    Index(Oid),
    /// One key of an index, by a hash of its encoded bytes (a collision
    /// only adds a conflict).
    IndexKey(Oid, u64),
}

impl Target {
    /// The next coarser target, if any.
    fn parent(self) -> Option<Target> {
        match self {
            Target::Tuple(r, b, _) => Some(Target::Page(r, b)),
            Target::Page(r, _) => Some(Target::Relation(r)),
            Target::IndexKey(i, _) => Some(Target::Index(i)),
            Target::Relation(_) | Target::Index(_) => None,
        }
    }

    /// The relation-level target this one belongs to.
    fn relation(self) -> Target {
        match self {
            Target::Tuple(r, _, _) | Target::Page(r, _) | Target::Relation(r) => {
                Target::Relation(r)
            }
            Target::IndexKey(i, _) | Target::Index(i) => Target::Index(i),
        }
    }

    /// True if `self` lies inside `coarser` (and is not equal to it).
    fn covered_by(self, coarser: Target) -> bool {
        let mut t = self;
        while let Some(p) = t.parent() {
            if p == coarser {
                return true;
            }
            t = p;
        }
        false
    }

    /// `pg_locks.locktype` of an SIRead lock on this target.
    pub fn locktype(self) -> &'static str {
        match self {
            Target::Relation(_) | Target::Index(_) => "relation",
            Target::Page(..) | Target::IndexKey(..) => "page",
            Target::Tuple(..) => "tuple",
        }
    }
}

/// The message of every serialization failure found here.
pub const FAILURE_MESSAGE: &str =
    "could not serialize access due to read/write dependencies among transactions";

/// A 40001 with PostgreSQL's message, `detail` and hint.
pub fn failure(detail: impl Into<String>) -> PgError {
    PgError::new(sqlstate::SERIALIZATION_FAILURE, FAILURE_MESSAGE)
        .with_detail(detail)
        .with_hint("The transaction might succeed if retried.")
}

/// [`failure`] of a transaction doomed as the pivot of a dangerous
/// structure, found `during` one of its checks.
fn pivot_failure(during: &str) -> PgError {
    failure(format!(
        "Reason code: Canceled on identification as a pivot, during {during}."
    ))
}

/// The prologue of `me`'s own checks: None when there is nothing to check
/// (it is gone, or READ ONLY and proven safe); its pivot failure once it
/// was doomed; else its record.
fn checked<'g>(g: &'g Inner, me: SxactId, during: &str) -> PgResult<Option<&'g Sxact>> {
    match g.sxacts.get(&me) {
        Some(my) if my.ro_safe => Ok(None),
        Some(my) if my.doomed => Err(pivot_failure(during)),
        my => Ok(my),
    }
}

/// The promotion limits (`max_pred_locks_per_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `max_pred_locks_per_transaction`.
    pub per_transaction: i64,
    /// `max_pred_locks_per_relation` (negative: see the module doc).
    pub per_relation: i64,
    /// `max_pred_locks_per_page`.
    pub per_page: i64,
    /// Records kept before the oldest committed one is summarised
    /// (PostgreSQL: ten per connection slot).
    pub max_sxacts: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            per_transaction: 64,
            per_relation: -2,
            per_page: 2,
            max_sxacts: 1000,
        }
    }
}

impl Limits {
    /// Old committed locks kept before they are merged by relation: the
    /// pool × `max_pred_locks_per_transaction` (PostgreSQL's lock table).
    fn old_lock_cap(&self) -> usize {
        self.max_sxacts
            .saturating_mul(self.per_transaction.max(1) as usize)
    }

    /// PredicateLockPromotionThreshold for the children of `parent`.
    fn threshold(&self, parent: Target) -> i64 {
        match parent {
            Target::Relation(_) | Target::Index(_) => {
                if self.per_relation < 0 {
                    self.per_transaction / -self.per_relation - 1
                } else {
                    self.per_relation
                }
            }
            Target::Page(..) => self.per_page,
            Target::Tuple(..) | Target::IndexKey(..) => i64::MAX,
        }
    }
}

/// One serializable transaction (SERIALIZABLEXACT).
#[derive(Debug, Default)]
struct Sxact {
    /// The top-level xid once it wrote (INVALID before).
    top_xid: TransactionId,
    /// The session's process id (pg_locks).
    pid: i32,
    /// Committed (implies `prepared`).
    committed: bool,
    /// Passed PreCommit: can no longer be doomed, only fail itself.
    prepared: bool,
    /// Must fail at its next check (chosen as a pivot by another).
    doomed: bool,
    /// Declared READ ONLY, or committed without writing.
    read_only: bool,
    /// Wrote (a conflict-in check ran for it).
    did_write: bool,
    /// Has a conflict out to a transaction that committed before it.
    conflict_out: bool,
    /// Had an edge in from a dropped record.
    summary_conflict_in: bool,
    /// Had an edge out to a dropped record.
    summary_conflict_out: bool,
    /// Read-only: its snapshot is known safe (tracking stopped).
    ro_safe: bool,
    /// Read-only: its snapshot is known unsafe.
    ro_unsafe: bool,
    /// Sequence number at PreCommit.
    prepare_seq: u64,
    /// Sequence number at commit (0 while not committed).
    commit_seq: u64,
    /// `last_commit_seq` read just before its snapshot.
    last_commit_before_snapshot: u64,
    /// With `conflict_out`: the earliest prepare_seq of such a transaction.
    earliest_out_conflict_commit: u64,
    /// Readers with an edge into this transaction (`R ─rw─► me`).
    in_conflicts: Vec<SxactId>,
    /// Writers this transaction has an edge to (`me ─rw─► W`).
    out_conflicts: Vec<SxactId>,
    /// Read-only: the read/write transactions it overlapped that have not
    /// ended; read/write: the read-only transactions that wait on it.
    possible_unsafe: Vec<SxactId>,
    /// SIRead locks held.
    locks: HashSet<Target>,
}

impl Sxact {
    fn active(&self) -> bool {
        !self.committed
    }
}

/// The shared state under the one mutex.
#[derive(Default)]
struct Inner {
    sxacts: HashMap<SxactId, Sxact>,
    /// Top-level xid → record, for conflict-out checks.
    by_xid: HashMap<TransactionId, SxactId>,
    /// Target → holders.
    targets: HashMap<Target, Vec<SxactId>>,
    next_id: u64,
    /// LastSxactCommitSeqNo.
    last_commit_seq: u64,
    /// Active read/write serializable transactions (WritableSxactCount).
    writable: usize,
    limits: Limits,
    /// Committed records in commit order (ids may be gone: skipped).
    committed_order: VecDeque<SxactId>,
    /// SIRead locks of summarised transactions: target → the newest
    /// commit sequence number summarised onto it (OldCommittedSxact).
    old_locks: HashMap<Target, u64>,
    /// The newest commit sequence number in `old_locks`.
    old_locks_max_seq: u64,
    /// Summarised xids (pg_serial).
    serial: Serial,
    /// Records summarised since start.
    summarised_total: u64,
}

/// How [`PredicateLockManager::register`] answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registered {
    /// Track reads and writes under this record.
    Tracked(SxactId),
    /// A read-only transaction whose snapshot is already safe: nothing to
    /// track.
    Safe,
}

/// A read-only record's state for [`PredicateLockManager::wait_safe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotSafety {
    /// Not known yet: read/write transactions it overlapped still run.
    Pending,
    /// Safe: no serialization failure can involve it.
    Safe,
    /// Unsafe: take a new snapshot (DEFERRABLE) or keep tracking.
    Unsafe,
}

/// Counts for tests and monitoring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PredicateStats {
    /// Records kept (active, prepared and committed-but-overlapped).
    pub sxacts: usize,
    /// SIRead locks held, all records.
    pub locks: usize,
    /// Distinct targets locked.
    pub targets: usize,
    /// Locks of summarised transactions (the old committed ones).
    pub old_locks: usize,
    /// Summary pages in memory.
    pub serial_pages: usize,
    /// Records summarised since start.
    pub summarised: u64,
}

/// What PREPARE TRANSACTION keeps of a serializable transaction's record
/// in its two-phase state (TwoPhasePredicateRecord), so that a restart —
/// or a standby promoted while it is prepared — rebuilds it: its mode and
/// its SIRead locks. Its edges are not kept; the rebuilt record assumes it
/// had a conflict in and out (the summary flags), as PostgreSQL does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreparedPredicate {
    /// Declared READ ONLY.
    pub read_only: bool,
    /// Its SIRead locks at PREPARE.
    pub locks: Vec<Target>,
}

impl PreparedPredicate {
    /// Appends the encoding: mode byte, count, then per lock a tag and its
    /// fields (little-endian).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.read_only));
        out.extend_from_slice(&(self.locks.len() as u32).to_le_bytes());
        for t in &self.locks {
            match *t {
                Target::Relation(r) => {
                    out.push(0);
                    out.extend_from_slice(&r.0.to_le_bytes());
                }
                Target::Page(r, b) => {
                    out.push(1);
                    out.extend_from_slice(&r.0.to_le_bytes());
                    out.extend_from_slice(&b.to_le_bytes());
                }
                Target::Tuple(r, b, o) => {
                    out.push(2);
                    out.extend_from_slice(&r.0.to_le_bytes());
                    out.extend_from_slice(&b.to_le_bytes());
                    out.extend_from_slice(&o.to_le_bytes());
                }
                Target::Index(i) => {
                    out.push(3);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Target::IndexKey(i, h) => {
                    out.push(4);
                    out.extend_from_slice(&i.to_le_bytes());
                    out.extend_from_slice(&h.to_le_bytes());
                }
            }
        }
    }

    /// Inverse of [`encode`](Self::encode), consuming exactly `b`; `None`
    /// on any malformed bytes (never panics).
    pub fn decode(b: &[u8]) -> Option<PreparedPredicate> {
        fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (head, rest) = (b.get(..n)?, b.get(n..)?);
            *b = rest;
            Some(head)
        }
        fn u32_(b: &mut &[u8]) -> Option<u32> {
            Some(u32::from_le_bytes(take(b, 4)?.try_into().ok()?))
        }
        let mut b = b;
        let read_only = match take(&mut b, 1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let n = u32_(&mut b)? as usize;
        // Each lock takes at least 5 bytes: a count beyond that is corrupt.
        if n > b.len() / 5 {
            return None;
        }
        let mut locks = Vec::with_capacity(n);
        for _ in 0..n {
            let t = match take(&mut b, 1)?[0] {
                0 => Target::Relation(RelFileId(u32_(&mut b)?)),
                1 => Target::Page(RelFileId(u32_(&mut b)?), u32_(&mut b)?),
                2 => {
                    let r = RelFileId(u32_(&mut b)?);
                    let blk = u32_(&mut b)?;
                    let off = u16::from_le_bytes(take(&mut b, 2)?.try_into().ok()?);
                    Target::Tuple(r, blk, off)
                }
                3 => Target::Index(u32_(&mut b)?),
                4 => {
                    let i = u32_(&mut b)?;
                    Target::IndexKey(i, u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?))
                }
                _ => return None,
            };
            locks.push(t);
        }
        b.is_empty()
            .then_some(PreparedPredicate { read_only, locks })
    }
}

/// The predicate lock manager: one per node (held by the procarray).
#[derive(Default)]
pub struct PredicateLockManager {
    inner: Mutex<Inner>,
    /// Wakes READ ONLY DEFERRABLE waiters when a read/write record ends.
    safety: Condvar,
}

impl PredicateLockManager {
    /// An empty manager with the default limits.
    pub fn new() -> PredicateLockManager {
        PredicateLockManager::default()
    }

    /// Sets the promotion limits (from the configuration).
    pub fn set_limits(&self, limits: Limits) {
        let mut l = limits;
        l.per_transaction = l.per_transaction.max(10);
        l.per_page = l.per_page.max(0);
        l.max_sxacts = l.max_sxacts.max(10);
        self.inner.lock().limits = l;
    }

    /// Spills the summary of old committed transactions to `dir`
    /// (`DIR/pg_serial`), emptied now.
    pub fn set_serial_dir(&self, dir: PathBuf) {
        self.inner.lock().serial = Serial::with_dir(dir);
    }

    /// LastSxactCommitSeqNo, to be read *before* taking the snapshot a
    /// [`register`](Self::register) call will be for.
    pub fn last_commit_seq(&self) -> u64 {
        self.inner.lock().last_commit_seq
    }

    /// GetSerializableTransactionSnapshotInt: a new record for a
    /// transaction whose snapshot was taken after reading
    /// `last_commit_before_snapshot`.
    pub fn register(
        &self,
        last_commit_before_snapshot: u64,
        read_only: bool,
        pid: i32,
    ) -> Registered {
        let mut g = self.inner.lock();
        if read_only && g.writable == 0 {
            return Registered::Safe;
        }
        while g.sxacts.len() >= g.limits.max_sxacts && summarize_oldest(&mut g) {}
        g.next_id += 1;
        let id = SxactId(g.next_id);
        let mut sx = Sxact {
            read_only,
            pid,
            last_commit_before_snapshot,
            ..Sxact::default()
        };
        if read_only {
            let writers: Vec<SxactId> = g
                .sxacts
                .iter()
                .filter(|(_, s)| s.active() && !s.read_only)
                .map(|(i, _)| *i)
                .collect();
            for w in &writers {
                if let Some(ws) = g.sxacts.get_mut(w) {
                    ws.possible_unsafe.push(id);
                }
            }
            sx.possible_unsafe = writers;
        } else {
            g.writable += 1;
        }
        g.sxacts.insert(id, sx);
        Registered::Tracked(id)
    }

    /// RegisterPredicateLockingXid: `xid` is the top-level xid of `id`.
    pub fn register_xid(&self, id: SxactId, xid: TransactionId) {
        let mut g = self.inner.lock();
        if let Some(s) = g.sxacts.get_mut(&id) {
            s.top_xid = xid;
            g.by_xid.insert(xid, id);
        }
    }

    /// True when `id` is a read-only record whose snapshot turned out safe
    /// (the session drops it and stops tracking), or was dropped.
    pub fn is_safe(&self, id: SxactId) -> bool {
        let g = self.inner.lock();
        g.sxacts.get(&id).is_none_or(|s| s.ro_safe)
    }

    /// PredicateLockAcquire: an SIRead lock for `id` on `target`, unless a
    /// coarser one it holds covers it; promotes as the limits say.
    pub fn lock(&self, id: SxactId, target: Target) {
        let mut g = self.inner.lock();
        acquire(&mut g, id, target);
    }

    /// CheckForSerializableConflictOut: reader `me` met a version written
    /// (inserted, or deleted/updated) by top-level transaction `xid`, which
    /// the caller found concurrent with `me`'s snapshot.
    pub fn check_conflict_out(&self, me: SxactId, xid: TransactionId) -> PgResult<()> {
        let mut g = self.inner.lock();
        let Some(my) = checked(&g, me, "conflict out checking")? else {
            return Ok(());
        };
        let my_ro = my.read_only;
        let my_lcbs = my.last_commit_before_snapshot;
        let Some(&w) = g.by_xid.get(&xid) else {
            // Not serializable, rolled back — or summarised.
            return conflict_out_to_summarised(&mut g, me, xid, my_ro, my_lcbs);
        };
        if w == me {
            return Ok(());
        }
        let Some(ws) = g.sxacts.get_mut(&w) else {
            return Ok(());
        };
        if ws.doomed {
            return Ok(());
        }
        if ws.summary_conflict_out {
            if !ws.prepared {
                ws.doomed = true;
                return Ok(());
            }
            return Err(failure(
                "Reason code: Canceled on conflict out to old pivot.",
            ));
        }
        if my_ro && ws.committed && (!ws.conflict_out || my_lcbs < ws.earliest_out_conflict_commit)
        {
            // The read-only transaction appears to run first.
            return Ok(());
        }
        if edge_exists(&g, me, w) {
            return Ok(());
        }
        flag_rw_conflict(&mut g, me, w, me)
    }

    /// CheckForSerializableConflictIn: writer `me` writes into each of
    /// `targets` (finest first); every concurrent holder of an SIRead lock
    /// on one of them gets an edge to `me`.
    pub fn check_conflict_in(&self, me: SxactId, targets: &[Target]) -> PgResult<()> {
        let mut g = self.inner.lock();
        let Some(my) = g.sxacts.get_mut(&me) else {
            return Ok(());
        };
        if my.doomed {
            return Err(pivot_failure("conflict in checking"));
        }
        my.did_write = true;
        let my_lcbs = my.last_commit_before_snapshot;
        // A summarised reader newer than my snapshot: its edge into me is
        // the summary flag (FlagRWConflict with OldCommittedSxact).
        let old_reader = !g.old_locks.is_empty()
            && targets
                .iter()
                .any(|t| g.old_locks.get(t).is_some_and(|seq| *seq > my_lcbs));
        if old_reader {
            if let Some(my) = g.sxacts.get_mut(&me) {
                if my.summary_conflict_out {
                    // OldCommitted ─rw─► me ─rw─► (committed earlier).
                    return Err(pivot_failure("write"));
                }
                my.summary_conflict_in = true;
            }
        }
        let mut readers: Vec<SxactId> = Vec::new();
        for t in targets {
            if let Some(holders) = g.targets.get(t) {
                readers.extend(holders.iter().copied().filter(|h| *h != me));
            }
        }
        for r in readers {
            let Some(rs) = g.sxacts.get(&r) else {
                continue;
            };
            let overlaps = !rs.committed || rs.commit_seq > my_lcbs;
            if rs.doomed || rs.ro_safe || !overlaps || edge_exists(&g, r, me) {
                continue;
            }
            flag_rw_conflict(&mut g, r, me, me)?;
        }
        Ok(())
    }

    /// PreCommit_CheckForSerializationFailure (also at PREPARE): fails if
    /// `me` was doomed; dooms the pivot of a structure `me` would complete
    /// as Tout; marks `me` prepared.
    pub fn pre_commit(&self, me: SxactId) -> PgResult<()> {
        let mut g = self.inner.lock();
        let Some(my) = checked(&g, me, "commit attempt")? else {
            return Ok(());
        };
        let near: Vec<SxactId> = my.in_conflicts.clone();
        for n in near {
            let Some(ns) = g.sxacts.get(&n) else {
                continue;
            };
            if ns.committed || ns.doomed {
                continue;
            }
            let dangerous = ns.in_conflicts.iter().any(|f| {
                *f == me
                    || g.sxacts
                        .get(f)
                        .is_some_and(|fs| !fs.committed && !fs.read_only && !fs.doomed)
            });
            if dangerous {
                if ns.prepared {
                    return Err(failure(
                        "Reason code: Canceled on commit attempt with conflict in from prepared pivot.",
                    ));
                }
                if let Some(ns) = g.sxacts.get_mut(&n) {
                    ns.doomed = true;
                }
            }
        }
        g.last_commit_seq += 1;
        let seq = g.last_commit_seq;
        if let Some(my) = g.sxacts.get_mut(&me) {
            my.prepare_seq = seq;
            my.prepared = true;
        }
        Ok(())
    }

    /// ReleasePredicateLocks: `me` ended — committed (after the procarray
    /// shows it) or rolled back. Then drops records no active transaction
    /// overlaps any more.
    pub fn release(&self, me: SxactId, commit: bool) {
        let mut g = self.inner.lock();
        release_locked(&mut g, me, commit);
        clear_old(&mut g);
        drop(g);
        self.safety.notify_all();
    }

    /// PredicateLockTwoPhaseFinish: COMMIT / ROLLBACK PREPARED of the
    /// transaction whose top-level xid is `xid`.
    pub fn two_phase_finish(&self, xid: TransactionId, commit: bool) {
        let mut g = self.inner.lock();
        let Some(&id) = g.by_xid.get(&xid) else {
            return;
        };
        release_locked(&mut g, id, commit);
        clear_old(&mut g);
        drop(g);
        self.safety.notify_all();
    }

    /// AtPrepare_PredicateLocks: what the two-phase state keeps of `id`
    /// (after [`pre_commit`](Self::pre_commit) passed); `None` for a record
    /// already dropped or a read-only one known safe (nothing to keep).
    pub fn prepared_state(&self, id: SxactId) -> Option<PreparedPredicate> {
        let g = self.inner.lock();
        let s = g.sxacts.get(&id).filter(|s| !s.ro_safe)?;
        let mut locks: Vec<Target> = s.locks.iter().copied().collect();
        locks.sort();
        Some(PreparedPredicate {
            read_only: s.read_only,
            locks,
        })
    }

    /// predicatelock_twophase_recover: rebuilds the record of prepared
    /// transaction `xid` from its two-phase state at start-up or
    /// promotion, before any session runs. It is prepared, precedes every
    /// transaction that starts from now on (sequence number 1), holds its
    /// SIRead locks again, and — its edges being lost — counts as having
    /// had a conflict in and a conflict out. COMMIT / ROLLBACK PREPARED
    /// end it through [`two_phase_finish`](Self::two_phase_finish).
    pub fn recover_prepared(&self, xid: TransactionId, state: &PreparedPredicate) {
        let mut g = self.inner.lock();
        if g.by_xid.contains_key(&xid) {
            return;
        }
        g.last_commit_seq = g.last_commit_seq.max(1);
        g.next_id += 1;
        let id = SxactId(g.next_id);
        g.sxacts.insert(
            id,
            Sxact {
                top_xid: xid,
                prepared: true,
                read_only: state.read_only,
                did_write: !state.read_only,
                summary_conflict_in: true,
                summary_conflict_out: true,
                prepare_seq: 1,
                last_commit_before_snapshot: 1,
                ..Sxact::default()
            },
        );
        g.by_xid.insert(xid, id);
        if !state.read_only {
            g.writable += 1;
        }
        for t in &state.locks {
            if let Some(s) = g.sxacts.get_mut(&id) {
                s.locks.insert(*t);
            }
            g.targets.entry(*t).or_default().push(id);
        }
    }

    /// The safety of a read-only record's snapshot.
    pub fn safety(&self, id: SxactId) -> SnapshotSafety {
        let g = self.inner.lock();
        match g.sxacts.get(&id) {
            None => SnapshotSafety::Safe,
            Some(s) if s.ro_safe => SnapshotSafety::Safe,
            Some(s) if s.ro_unsafe => SnapshotSafety::Unsafe,
            Some(_) => SnapshotSafety::Pending,
        }
    }

    /// Waits up to `step` for a read-only record's safety to be decided
    /// (GetSafeSnapshot's sleep); the caller loops, checking its cancel
    /// flag between steps.
    pub fn wait_safe(&self, id: SxactId, step: Duration) -> SnapshotSafety {
        let mut g = self.inner.lock();
        let state = |g: &Inner| match g.sxacts.get(&id) {
            None => SnapshotSafety::Safe,
            Some(s) if s.ro_safe => SnapshotSafety::Safe,
            Some(s) if s.ro_unsafe => SnapshotSafety::Unsafe,
            Some(_) => SnapshotSafety::Pending,
        };
        if state(&g) == SnapshotSafety::Pending {
            let _ = self.safety.wait_for(&mut g, step);
        }
        state(&g)
    }

    /// Every SIRead lock: (target, top-level xid of its holder — INVALID
    /// for a transaction that never wrote).
    pub fn lock_status(&self) -> Vec<(Target, TransactionId)> {
        let mut out: Vec<(Target, TransactionId)> = self
            .locks_with_pids()
            .into_iter()
            .map(|(t, _, x)| (t, x))
            .collect();
        out.sort();
        out
    }

    /// Every SIRead lock with its holder's process id and top-level xid
    /// (`pg_locks`), sorted.
    pub fn locks_with_pids(&self) -> Vec<(Target, i32, TransactionId)> {
        let g = self.inner.lock();
        let mut out: Vec<(Target, i32, TransactionId)> = g
            .sxacts
            .values()
            .flat_map(|s| s.locks.iter().map(move |t| (*t, s.pid, s.top_xid)))
            .collect();
        out.sort();
        out
    }

    /// Counts (tests, monitoring).
    pub fn stats(&self) -> PredicateStats {
        let g = self.inner.lock();
        PredicateStats {
            sxacts: g.sxacts.len(),
            locks: g.sxacts.values().map(|s| s.locks.len()).sum(),
            targets: g.targets.len(),
            old_locks: g.old_locks.len(),
            serial_pages: g.serial.usage().0,
            summarised: g.summarised_total,
        }
    }
}

/// RWConflictExists.
fn edge_exists(g: &Inner, reader: SxactId, writer: SxactId) -> bool {
    g.sxacts
        .get(&reader)
        .is_some_and(|r| r.out_conflicts.contains(&writer))
}

/// FlagRWConflict: check for a dangerous structure, then add the edge
/// `reader ─rw─► writer`. `me` is the caller's record.
fn flag_rw_conflict(g: &mut Inner, reader: SxactId, writer: SxactId, me: SxactId) -> PgResult<()> {
    on_conflict_check(g, reader, writer, me)?;
    if let Some(r) = g.sxacts.get_mut(&reader) {
        if !r.out_conflicts.contains(&writer) {
            r.out_conflicts.push(writer);
        }
    }
    if let Some(w) = g.sxacts.get_mut(&writer) {
        if !w.in_conflicts.contains(&reader) {
            w.in_conflicts.push(reader);
        }
    }
    Ok(())
}

/// OnConflict_CheckForSerializationFailure: would `reader ─rw─► writer`
/// complete a dangerous structure? If so, fail `me` when it is the writer
/// (or the writer is prepared and cannot be failed any more), otherwise
/// doom the writer.
fn on_conflict_check(g: &mut Inner, reader: SxactId, writer: SxactId, me: SxactId) -> PgResult<()> {
    let (Some(r), Some(w)) = (g.sxacts.get(&reader), g.sxacts.get(&writer)) else {
        return Ok(());
    };
    // R ─► W ─► T2 with W committed and a conflict out to a transaction
    // committed before it.
    let mut failure_found = w.committed && (w.conflict_out || w.summary_conflict_out);
    // W a pivot whose out-transaction T2 prepared first.
    if !failure_found && w.summary_conflict_out {
        failure_found = true;
    } else if !failure_found {
        failure_found = w.out_conflicts.iter().any(|t| {
            g.sxacts.get(t).is_some_and(|t2| {
                t2.prepared
                    && (!r.committed || t2.prepare_seq <= r.commit_seq)
                    && (!w.committed || t2.prepare_seq <= w.commit_seq)
                    && (!r.read_only || t2.prepare_seq <= r.last_commit_before_snapshot)
            })
        });
    }
    // R a pivot: T0 ─► R ─► W with W prepared.
    if !failure_found && w.prepared && !r.read_only {
        if r.summary_conflict_in {
            failure_found = true;
        } else {
            failure_found = r.in_conflicts.iter().any(|t| {
                g.sxacts.get(t).is_some_and(|t0| {
                    !t0.doomed
                        && (!t0.committed || t0.commit_seq >= w.prepare_seq)
                        && (!t0.read_only || t0.last_commit_before_snapshot >= w.prepare_seq)
                })
            });
        }
    }
    if !failure_found {
        return Ok(());
    }
    if writer == me {
        return Err(pivot_failure("write"));
    }
    if w.prepared {
        return Err(failure(format!(
            "Reason code: Canceled on conflict out to pivot {}, during read.",
            w.top_xid.0
        )));
    }
    if let Some(w) = g.sxacts.get_mut(&writer) {
        w.doomed = true;
    }
    Ok(())
}

/// Adds `target` to `id`'s locks (and the holders of `target`), removing
/// the finer locks it covers, then promotes if a limit is passed.
fn acquire(g: &mut Inner, id: SxactId, target: Target) {
    let limits = g.limits;
    let Some(sx) = g.sxacts.get_mut(&id) else {
        return;
    };
    if sx.ro_safe || sx.locks.contains(&target) {
        return;
    }
    let mut p = target.parent();
    while let Some(t) = p {
        if sx.locks.contains(&t) {
            return;
        }
        p = t.parent();
    }
    sx.locks.insert(target);
    let covered: Vec<Target> = sx
        .locks
        .iter()
        .copied()
        .filter(|t| t.covered_by(target))
        .collect();
    for t in &covered {
        sx.locks.remove(t);
    }
    for t in covered {
        unhold(g, id, t);
    }
    g.targets.entry(target).or_default().push(id);
    // Promotion: the parent of the new lock, then its relation.
    if let Some(parent) = target.parent() {
        let children = count_under(g, id, parent);
        if children as i64 > limits.threshold(parent) {
            acquire(g, id, parent);
            return;
        }
        let rel = target.relation();
        if rel != parent {
            let n = count_under(g, id, rel);
            if n as i64 > limits.threshold(rel) {
                acquire(g, id, rel);
                return;
            }
        }
    }
    // Per transaction: the relation holding most locks becomes one lock.
    let total = g.sxacts.get(&id).map_or(0, |s| s.locks.len());
    if total as i64 > limits.per_transaction {
        let mut per_rel: HashMap<Target, usize> = HashMap::new();
        if let Some(s) = g.sxacts.get(&id) {
            for t in &s.locks {
                if t.relation() != *t {
                    *per_rel.entry(t.relation()).or_default() += 1;
                }
            }
        }
        if let Some((rel, _)) = per_rel.into_iter().max_by_key(|(t, n)| (*n, *t)) {
            acquire(g, id, rel);
        }
    }
}

/// How many of `id`'s locks lie inside `parent`.
fn count_under(g: &Inner, id: SxactId, parent: Target) -> usize {
    g.sxacts.get(&id).map_or(0, |s| {
        s.locks.iter().filter(|t| t.covered_by(parent)).count()
    })
}

/// Removes `id` from the holders of `target`.
fn unhold(g: &mut Inner, id: SxactId, target: Target) {
    if let Entry::Occupied(mut e) = g.targets.entry(target) {
        e.get_mut().retain(|h| *h != id);
        if e.get().is_empty() {
            e.remove();
        }
    }
}

/// Drops every lock of `id`.
fn release_all_locks(g: &mut Inner, id: SxactId) {
    let locks: Vec<Target> = match g.sxacts.get_mut(&id) {
        Some(s) => s.locks.drain().collect(),
        None => return,
    };
    for t in locks {
        unhold(g, id, t);
    }
}

/// Removes the edge `reader ─rw─► writer` from both sides.
fn remove_edge(g: &mut Inner, reader: SxactId, writer: SxactId) {
    if let Some(r) = g.sxacts.get_mut(&reader) {
        r.out_conflicts.retain(|w| *w != writer);
    }
    if let Some(w) = g.sxacts.get_mut(&writer) {
        w.in_conflicts.retain(|r| *r != reader);
    }
}

/// The body of [`PredicateLockManager::release`], under the mutex.
fn release_locked(g: &mut Inner, me: SxactId, commit: bool) {
    let Some(my) = g.sxacts.get(&me) else {
        return;
    };
    if my.committed {
        return;
    }
    let was_writable = !my.read_only;
    if was_writable {
        g.writable = g.writable.saturating_sub(1);
    }
    if !commit {
        // Rolled back: nothing it did matters any more.
        let (outs, ins, unsafe_list) = match g.sxacts.get(&me) {
            Some(s) => (
                s.out_conflicts.clone(),
                s.in_conflicts.clone(),
                s.possible_unsafe.clone(),
            ),
            None => return,
        };
        for w in outs {
            remove_edge(g, me, w);
        }
        for r in ins {
            remove_edge(g, r, me);
        }
        if was_writable {
            for ro in unsafe_list {
                writer_gone(g, ro, me, false);
            }
        } else {
            for w in unsafe_list {
                if let Some(ws) = g.sxacts.get_mut(&w) {
                    ws.possible_unsafe.retain(|x| *x != me);
                }
            }
        }
        drop_record(g, me);
        return;
    }
    g.last_commit_seq += 1;
    let seq = g.last_commit_seq;
    let last = g.last_commit_seq;
    let (outs, ins, unsafe_list, read_only) = {
        let Some(my) = g.sxacts.get_mut(&me) else {
            return;
        };
        my.committed = true;
        my.prepared = true;
        if my.prepare_seq == 0 {
            my.prepare_seq = seq;
        }
        my.commit_seq = seq;
        if !my.did_write {
            my.read_only = true;
        }
        g.committed_order.push_back(me);
        (
            my.out_conflicts.clone(),
            my.in_conflicts.clone(),
            my.possible_unsafe.clone(),
            my.read_only,
        )
    };
    // Out-conflicts to committed transactions become the conflict_out
    // flag (with the earliest such commit).
    for w in outs {
        let Some(ws) = g.sxacts.get(&w) else {
            continue;
        };
        let (w_committed, w_prepare, w_lcbs) =
            (ws.committed, ws.prepare_seq, ws.last_commit_before_snapshot);
        if !read_only && w_committed {
            if let Some(my) = g.sxacts.get_mut(&me) {
                if !my.conflict_out || w_prepare < my.earliest_out_conflict_commit {
                    my.earliest_out_conflict_commit = w_prepare;
                }
                my.conflict_out = true;
            }
        }
        if w_committed || w_lcbs >= last {
            remove_edge(g, me, w);
        }
    }
    // In-conflicts from committed or read-only transactions are done.
    for r in ins {
        let done = g
            .sxacts
            .get(&r)
            .is_none_or(|rs| rs.committed || rs.read_only);
        if done {
            remove_edge(g, r, me);
        }
    }
    if was_writable {
        for ro in unsafe_list {
            writer_gone(g, ro, me, true);
        }
    } else {
        for w in unsafe_list {
            if let Some(ws) = g.sxacts.get_mut(&w) {
                ws.possible_unsafe.retain(|x| *x != me);
            }
        }
        if let Some(my) = g.sxacts.get_mut(&me) {
            my.possible_unsafe.clear();
        }
    }
}

/// Read/write `w` ended (committed or not); read-only `ro` overlapped it.
/// A commit with a conflict out to a transaction committed before `ro`'s
/// snapshot makes `ro` unsafe; the last such writer ending otherwise
/// makes it safe (its locks go at once).
fn writer_gone(g: &mut Inner, ro: SxactId, w: SxactId, committed: bool) {
    let makes_unsafe = committed
        && g.sxacts.get(&w).is_some_and(|ws| {
            ws.conflict_out
                && g.sxacts.get(&ro).is_some_and(|r| {
                    ws.earliest_out_conflict_commit <= r.last_commit_before_snapshot
                })
        });
    let Some(r) = g.sxacts.get_mut(&ro) else {
        return;
    };
    if r.ro_safe || r.ro_unsafe {
        return;
    }
    if makes_unsafe {
        r.ro_unsafe = true;
        let rest = std::mem::take(&mut r.possible_unsafe);
        for other in rest {
            if let Some(os) = g.sxacts.get_mut(&other) {
                os.possible_unsafe.retain(|x| *x != ro);
            }
        }
        return;
    }
    r.possible_unsafe.retain(|x| *x != w);
    if r.possible_unsafe.is_empty() {
        r.ro_safe = true;
        release_all_locks(g, ro);
        let (outs, ins) = match g.sxacts.get(&ro) {
            Some(s) => (s.out_conflicts.clone(), s.in_conflicts.clone()),
            None => return,
        };
        for x in outs {
            remove_edge(g, ro, x);
        }
        for x in ins {
            remove_edge(g, x, ro);
        }
    }
}

/// Removes a record entirely (its locks, its xid; any edge left to it
/// becomes a summary flag on the other side).
fn drop_record(g: &mut Inner, id: SxactId) {
    release_all_locks(g, id);
    let Some(s) = g.sxacts.remove(&id) else {
        return;
    };
    if s.top_xid.is_valid() {
        g.by_xid.remove(&s.top_xid);
    }
    for w in s.out_conflicts {
        if let Some(ws) = g.sxacts.get_mut(&w) {
            ws.in_conflicts.retain(|x| *x != id);
            if s.committed {
                ws.summary_conflict_in = true;
            }
        }
    }
    for r in s.in_conflicts {
        if let Some(rs) = g.sxacts.get_mut(&r) {
            rs.out_conflicts.retain(|x| *x != id);
            if s.committed {
                rs.summary_conflict_out = true;
            }
        }
    }
    for o in s.possible_unsafe {
        if let Some(os) = g.sxacts.get_mut(&o) {
            os.possible_unsafe.retain(|x| *x != id);
        }
    }
}

/// CheckForSerializableConflictOut for an xid with no record: if it was
/// summarised, the reader `me` (`my_ro`, `my_lcbs`) has an edge out to an
/// old committed transaction — a failure if that one had a conflict out
/// itself (an old pivot) or `me` has an edge in, else the summary flag.
fn conflict_out_to_summarised(
    g: &mut Inner,
    me: SxactId,
    xid: TransactionId,
    my_ro: bool,
    my_lcbs: u64,
) -> PgResult<()> {
    let earliest = match g.serial.lookup(xid) {
        Summary::Absent => return Ok(()),
        Summary::NoConflictOut => None,
        Summary::ConflictOut(c) => Some(c),
    };
    if earliest.is_some_and(|c| !my_ro || c <= my_lcbs) {
        return Err(failure(format!(
            "Reason code: Canceled on conflict out to old pivot {}.",
            xid.0
        )));
    }
    let Some(my) = g.sxacts.get_mut(&me) else {
        return Ok(());
    };
    if my.summary_conflict_in || !my.in_conflicts.is_empty() {
        return Err(failure(format!(
            "Reason code: Canceled on identification as a pivot, with conflict out to old committed transaction {}.",
            xid.0
        )));
    }
    my.summary_conflict_out = true;
    Ok(())
}

/// SummarizeOldestCommittedSxact: folds the oldest committed record into
/// the old committed locks and the summary map, then drops it (its edges
/// become summary flags). False when no committed record is left.
fn summarize_oldest(g: &mut Inner) -> bool {
    let id = loop {
        let Some(id) = g.committed_order.pop_front() else {
            return false;
        };
        if g.sxacts.get(&id).is_some_and(|s| s.committed) {
            break id;
        }
    };
    let Some(s) = g.sxacts.get(&id) else {
        return false;
    };
    let seq = s.commit_seq;
    let locks: Vec<Target> = s.locks.iter().copied().collect();
    if s.top_xid.is_valid() {
        let conflict = s.conflict_out.then_some(s.earliest_out_conflict_commit);
        let xid = s.top_xid;
        g.serial.add(xid, seq, conflict);
    }
    for t in locks {
        let e = g.old_locks.entry(t).or_insert(0);
        *e = (*e).max(seq);
    }
    g.old_locks_max_seq = g.old_locks_max_seq.max(seq);
    drop_record(g, id);
    g.summarised_total += 1;
    if g.old_locks.len() > g.limits.old_lock_cap() {
        merge_old_locks(g);
    }
    true
}

/// Keeps the old committed locks bounded: forgets those no active record
/// overlaps, and if still too many, replaces each relation's finer locks
/// by the relation (or index) itself with their newest sequence number —
/// coarser only ever adds conflicts.
fn merge_old_locks(g: &mut Inner) {
    let horizon = active_horizon(g);
    g.old_locks
        .retain(|_, seq| horizon.is_some_and(|h| *seq > h));
    if g.old_locks.len() <= g.limits.old_lock_cap() {
        return;
    }
    let mut merged: HashMap<Target, u64> = HashMap::new();
    for (t, seq) in g.old_locks.drain() {
        let e = merged.entry(t.relation()).or_insert(0);
        *e = (*e).max(seq);
    }
    g.old_locks = merged;
}

/// The oldest `last_commit_before_snapshot` of an active record: committed
/// transactions with a sequence number at or below it overlap nothing
/// that runs. None when no serializable transaction runs.
fn active_horizon(g: &Inner) -> Option<u64> {
    g.sxacts
        .values()
        .filter(|s| s.active())
        .map(|s| s.last_commit_before_snapshot)
        .min()
}

/// ClearOldPredicateLocks: drops committed records that no active record
/// overlaps, and read-only records found safe once they commit.
fn clear_old(g: &mut Inner) {
    let horizon = active_horizon(g);
    let old: Vec<SxactId> = g
        .sxacts
        .iter()
        .filter(|(_, s)| s.committed && (horizon.is_none_or(|h| s.commit_seq <= h) || s.ro_safe))
        .map(|(i, _)| *i)
        .collect();
    for id in old {
        drop_record(g, id);
    }
    if g.committed_order.len() > 2 * g.sxacts.len() + 64 {
        let live = &g.sxacts;
        g.committed_order
            .retain(|id| live.get(id).is_some_and(|s| s.committed));
    }
    // The summaries: forgotten once nothing active overlaps them.
    if !g.old_locks.is_empty() && horizon.is_none_or(|h| g.old_locks_max_seq <= h) {
        g.old_locks = HashMap::new();
    }
    g.serial.forget_before(horizon);
    if g.sxacts.is_empty() {
        // Nothing overlaps anything: start the maps afresh (bounded memory
        // after a burst).
        g.by_xid = HashMap::new();
        g.targets = HashMap::new();
        g.committed_order.clear();
        g.writable = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(r: Registered) -> SxactId {
        match r {
            Registered::Tracked(id) => id,
            Registered::Safe => panic!("expected a tracked record"),
        }
    }

    fn rel(n: u32) -> RelFileId {
        RelFileId(n)
    }

    #[test]
    fn tuple_locks_promote_to_page_then_relation() {
        let m = PredicateLockManager::new();
        let a = tracked(m.register(m.last_commit_seq(), false, 0));
        m.lock(a, Target::Tuple(rel(1), 0, 1));
        m.lock(a, Target::Tuple(rel(1), 0, 2));
        assert_eq!(m.stats().locks, 2, "two tuple locks kept");
        m.lock(a, Target::Tuple(rel(1), 0, 3));
        assert_eq!(
            m.lock_status(),
            vec![(Target::Page(rel(1), 0), TransactionId::INVALID)],
            "third tuple of a page promotes to the page"
        );
        m.lock(a, Target::Tuple(rel(1), 0, 9));
        assert_eq!(m.stats().locks, 1, "a tuple under a held page is covered");
        // 31 pages are allowed (64 / 2 - 1), the 32nd makes it the relation.
        for b in 1..31 {
            m.lock(a, Target::Page(rel(1), b));
        }
        assert_eq!(m.stats().locks, 31, "pages up to the relation threshold");
        m.lock(a, Target::Page(rel(1), 40));
        assert_eq!(
            m.lock_status(),
            vec![(Target::Relation(rel(1)), TransactionId::INVALID)],
            "relation threshold promotes to the relation"
        );
        assert_eq!(m.stats().targets, 1, "finer targets released");
    }

    #[test]
    fn per_transaction_limit_promotes_busiest_relation() {
        let m = PredicateLockManager::new();
        m.set_limits(Limits {
            per_transaction: 10,
            per_relation: 100,
            per_page: 100,
            ..Limits::default()
        });
        let a = tracked(m.register(0, false, 0));
        for o in 1..=6 {
            m.lock(a, Target::Tuple(rel(1), 0, o));
        }
        for o in 1..=5 {
            m.lock(a, Target::Tuple(rel(2), 0, o));
        }
        let status = m.lock_status();
        assert!(
            status.contains(&(Target::Relation(rel(1)), TransactionId::INVALID)),
            "busiest relation promoted: {status:?}"
        );
        assert_eq!(m.stats().locks, 6, "relation lock plus the other five");
    }

    #[test]
    fn index_keys_promote_to_index() {
        let m = PredicateLockManager::new();
        let a = tracked(m.register(0, false, 0));
        for k in 0..32 {
            m.lock(a, Target::IndexKey(7, k));
        }
        assert_eq!(
            m.lock_status(),
            vec![(Target::Index(7), TransactionId::INVALID)],
            "index keys promote to the index"
        );
    }

    /// Hermitage G2-item: both read both rows, each writes one; the first
    /// committer dooms the other, which fails at commit.
    #[test]
    fn write_skew_fails_second_committer() {
        let m = PredicateLockManager::new();
        let t1 = tracked(m.register(m.last_commit_seq(), false, 0));
        let t2 = tracked(m.register(m.last_commit_seq(), false, 0));
        m.register_xid(t1, TransactionId(100));
        m.register_xid(t2, TransactionId(101));
        for t in [t1, t2] {
            m.lock(t, Target::Tuple(rel(1), 0, 1));
            m.lock(t, Target::Tuple(rel(1), 0, 2));
        }
        m.check_conflict_in(t1, &[Target::Tuple(rel(1), 0, 1)])
            .unwrap();
        m.check_conflict_in(t2, &[Target::Tuple(rel(1), 0, 2)])
            .unwrap();
        m.pre_commit(t1).unwrap();
        m.release(t1, true);
        let e = m.pre_commit(t2).unwrap_err();
        assert_eq!(e.code, sqlstate::SERIALIZATION_FAILURE, "40001");
        assert_eq!(
            e.detail.as_deref(),
            Some("Reason code: Canceled on identification as a pivot, during commit attempt."),
            "pivot detail"
        );
        m.release(t2, false);
        assert_eq!(m.stats(), PredicateStats::default(), "all released");
    }

    /// A committed record stays while an overlapping transaction runs,
    /// and goes when it ends.
    #[test]
    fn committed_locks_kept_until_overlap_ends() {
        let m = PredicateLockManager::new();
        let t1 = tracked(m.register(m.last_commit_seq(), false, 0));
        let t2 = tracked(m.register(m.last_commit_seq(), false, 0));
        m.lock(t1, Target::Relation(rel(1)));
        m.pre_commit(t1).unwrap();
        m.release(t1, true);
        assert_eq!(m.stats().sxacts, 2, "t1 kept while t2 overlaps it");
        let t3 = tracked(m.register(m.last_commit_seq(), false, 0));
        m.pre_commit(t2).unwrap();
        m.release(t2, true);
        assert_eq!(m.stats().sxacts, 2, "t1 dropped; t2 kept, t3 overlaps it");
        m.release(t3, false);
        assert_eq!(m.stats(), PredicateStats::default(), "empty");
    }

    #[test]
    fn read_only_without_writers_is_safe() {
        let m = PredicateLockManager::new();
        assert_eq!(m.register(0, true, 0), Registered::Safe, "no writers: safe");
        let w = tracked(m.register(0, false, 0));
        let ro = tracked(m.register(0, true, 0));
        assert_eq!(m.safety(ro), SnapshotSafety::Pending, "a writer runs");
        m.lock(ro, Target::Relation(rel(1)));
        m.pre_commit(w).unwrap();
        m.release(w, true);
        assert_eq!(m.safety(ro), SnapshotSafety::Safe, "writer ended cleanly");
        assert_eq!(m.stats().locks, 0, "safe read-only drops its locks");
    }

    /// Registers and commits `n` read/write records that each read one
    /// tuple of relation 5 and wrote one (xids from `first_xid`).
    fn commit_fillers(m: &PredicateLockManager, n: u64, first_xid: u64) {
        for i in 0..n {
            let t = tracked(m.register(m.last_commit_seq(), false, 0));
            m.register_xid(t, TransactionId(first_xid + i));
            m.lock(t, Target::Tuple(rel(5), (i / 100) as u32, (i % 100) as u16));
            m.check_conflict_in(t, &[Target::Tuple(rel(6), i as u32, 1)])
                .unwrap();
            m.pre_commit(t).unwrap();
            m.release(t, true);
        }
    }

    fn small_pool() -> PredicateLockManager {
        let m = PredicateLockManager::new();
        m.set_limits(Limits {
            max_sxacts: 10,
            ..Limits::default()
        });
        m
    }

    /// One transaction held open while 100,000 others commit (the long
    /// run of the randomised check, compressed): records, locks and
    /// summary pages stay bounded, then everything goes when it ends.
    #[test]
    fn memory_stays_bounded_behind_a_long_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let m = small_pool();
        m.set_serial_dir(dir.path().join("pg_serial"));
        let long = tracked(m.register(m.last_commit_seq(), false, 0));
        m.lock(long, Target::Relation(rel(9)));
        let mut peak = PredicateStats::default();
        for round in 0..100u64 {
            commit_fillers(&m, 1000, 1000 + round * 1000);
            let s = m.stats();
            peak.sxacts = peak.sxacts.max(s.sxacts);
            peak.locks = peak.locks.max(s.locks);
            peak.old_locks = peak.old_locks.max(s.old_locks);
            peak.serial_pages = peak.serial_pages.max(s.serial_pages);
        }
        let s = m.stats();
        assert!(s.summarised >= 99_990, "summarised: {s:?}");
        assert!(peak.sxacts <= 10, "records bounded: {peak:?}");
        assert!(peak.locks <= 10 * 64, "live locks bounded: {peak:?}");
        assert!(peak.old_locks <= 10 * 64, "old locks bounded: {peak:?}");
        assert!(
            peak.serial_pages <= serial::CACHED_PAGES,
            "pages bounded: {peak:?}"
        );
        m.release(long, false);
        let s = m.stats();
        assert_eq!(
            (s.sxacts, s.locks, s.old_locks, s.serial_pages),
            (0, 0, 0, 0),
            "all forgotten once nothing overlaps: {s:?}"
        );
    }

    /// W had a conflict out to T2 (committed first) and was summarised; a
    /// concurrent reader of W's write still fails, now against the
    /// summary ("old pivot") instead of W's record.
    #[test]
    fn summarised_pivot_fails_its_reader() {
        for summarise in [false, true] {
            let m = if summarise {
                small_pool()
            } else {
                PredicateLockManager::new()
            };
            let long = tracked(m.register(m.last_commit_seq(), false, 0));
            let r = tracked(m.register(m.last_commit_seq(), false, 0));
            let w = tracked(m.register(m.last_commit_seq(), false, 0));
            let t2 = tracked(m.register(m.last_commit_seq(), false, 0));
            m.register_xid(w, TransactionId(100));
            m.register_xid(t2, TransactionId(200));
            m.lock(w, Target::Tuple(rel(1), 0, 2));
            m.check_conflict_in(t2, &[Target::Tuple(rel(1), 0, 2)])
                .unwrap();
            m.pre_commit(t2).unwrap();
            m.release(t2, true);
            m.check_conflict_in(w, &[Target::Tuple(rel(1), 0, 1)])
                .unwrap();
            m.pre_commit(w).unwrap();
            m.release(w, true);
            commit_fillers(&m, 12, 1000);
            assert_eq!(
                m.stats().summarised > 0,
                summarise,
                "summarised: {summarise}"
            );
            let e = m.check_conflict_out(r, TransactionId(100)).unwrap_err();
            assert_eq!(e.code, sqlstate::SERIALIZATION_FAILURE, "40001");
            let want = if summarise {
                "Reason code: Canceled on conflict out to old pivot 100."
            } else {
                "Reason code: Canceled on conflict out to pivot 100, during read."
            };
            assert_eq!(e.detail.as_deref(), Some(want), "summarised: {summarise}");
            m.release(r, false);
            m.release(long, false);
        }
    }

    /// A summarised reader's lock still makes a later overlapping writer
    /// its rw-successor: a writer that also read a summarised
    /// transaction's write is a pivot and fails during the write.
    #[test]
    fn summarised_reader_and_writer_make_a_pivot() {
        let m = small_pool();
        let long = tracked(m.register(m.last_commit_seq(), false, 0));
        let me = tracked(m.register(m.last_commit_seq(), false, 0));
        // A reader of z and a writer of x commit while `me` runs.
        let r0 = tracked(m.register(m.last_commit_seq(), false, 0));
        m.lock(r0, Target::Tuple(rel(1), 3, 3));
        m.pre_commit(r0).unwrap();
        m.release(r0, true);
        let w0 = tracked(m.register(m.last_commit_seq(), false, 0));
        m.register_xid(w0, TransactionId(300));
        m.check_conflict_in(w0, &[Target::Tuple(rel(1), 4, 4)])
            .unwrap();
        m.pre_commit(w0).unwrap();
        m.release(w0, true);
        commit_fillers(&m, 12, 1000);
        assert!(m.stats().old_locks > 0, "r0's lock summarised");
        // me reads w0's version of x: an edge out to an old committed one.
        m.check_conflict_out(me, TransactionId(300)).unwrap();
        let e = m
            .check_conflict_in(me, &[Target::Tuple(rel(1), 3, 3)])
            .unwrap_err();
        assert_eq!(
            e.detail.as_deref(),
            Some("Reason code: Canceled on identification as a pivot, during write."),
            "pivot between two summarised transactions"
        );
        m.release(me, false);
        m.release(long, false);
    }
}
