//! # Standby snapshot conflicts (standby.c ResolveRecoveryConflictWithSnapshot)
//!
//! Replaying a prune record on a standby removes row versions that the
//! *primary's* horizon no longer needs — but a query on the standby may hold
//! a snapshot that still needs them. Removing them under it would give it
//! wrong answers, so before redo changes the page it calls
//! [`Engine::resolve_snapshot_conflict`] with the record's
//! `latest_removed_xid` (the newest xid whose row versions the prune
//! removed):
//!
//! ```text
//!  startup (replay)                          standby session
//!  ────────────────                          ───────────────
//!  prune record, latest_removed_xid = L
//!  conflicting = procs with 0 < xmin <= L    (its snapshot may need them)
//!  wait until each one's xmin clears or      statement runs, ends: xmin
//!   moves past L, or the deadline passes ─┐   clears (READ COMMITTED) …
//!                                         └▶ signal: pending + cancel flag
//!                                            + wake   ─▶ running statement:
//!                                              40001 "canceling statement
//!                                              due to conflict with recovery"
//!                                            ─▶ idle in a transaction:
//!                                              FATAL 40001 "terminating
//!                                              connection due to conflict
//!                                              with recovery"
//!  wait goes on until the xmin is gone, then the page is pruned
//! ```
//!
//! ## The deadline
//!
//! `max_standby_streaming_delay` (ms; `-1` waits for ever, `0` cancels at
//! once) counts, as in PostgreSQL (GetStandbyLimitTime), from the *WAL
//! receipt time*: the moment the startup process found the WAL it is
//! replaying newly arrived from the walreceiver
//! ([`StandbyConflicts::note_wal_received`]). When replay has fallen behind,
//! that moment lies in the past and the delay is already partly used up, so
//! one long query cannot make replay lag without bound. Without a receipt
//! time (crash recovery, or before the first wait) the wait counts from when
//! replay reached the record.
//!
//! ## Who conflicts
//!
//! A session whose published snapshot xmin is valid and `<= L`
//! (GetConflictingVirtualXIDs): a snapshot with `xmin <= L` may consider
//! `L` (or an older deleter) still running, so it would still see the
//! removed versions. A session with no xmin (between READ COMMITTED
//! statements, or a failed transaction block, which releases its snapshot)
//! needs nothing. In crash recovery there are no sessions and the call
//! returns at once; it never allocates when nobody conflicts.
//!
//! ## Signalling
//!
//! Each session registers a [`ConflictSignal`] (its proc number, its cancel
//! flag, a *pending* flag and a wake-up). Replay sets `pending`, then the
//! cancel flag, then wakes the session's protocol loop. A running statement
//! sees the cancel flag at its next interrupt check (every 256 rows, and in
//! every wait) and fails with 57014; the session turns that into the
//! conflict's 40001 because `pending` is set
//! ([`ConflictSignal::take_pending`]). A session idle inside a transaction
//! is woken and ends the connection, as PostgreSQL's ProcessInterrupts does
//! while it reads a command. Replay re-sends the signal on every poll until
//! the xmin is gone, so a signal that lands between two statements is not
//! lost. Each conflict a session acts on counts in
//! `pg_stat_database_conflicts.confl_snapshot`.
//!
//! ## Snapshots older than old_snapshot_threshold
//!
//! With `old_snapshot_threshold` on the standby, a conflicting snapshot
//! older than the threshold ([`txn::procarray::ProcArray::snapshot_is_old`])
//! is neither waited for nor cancelled: the call returns true, and replay
//! records the removed versions for the precise read-time test
//! (`txn::old_snapshot`, "On a standby"). A young snapshot that ages past
//! the threshold while replay waits for it is let go the same way.
//!
//! Locks: the registry mutex is a leaf, held to copy or change an entry;
//! the procarray is read with its own locks, never while holding it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::Engine;
use pgtypes::error::{sqlstate, PgError};
use pgtypes::ProcNumber;
use pgtypes::TransactionId;

/// First pause of replay's wait; it doubles up to [`WAIT_MAX`] (standby.c's
/// WaitExceedsMaxStandbyDelay backs off the same way).
const WAIT_MIN: Duration = Duration::from_millis(1);
/// Longest pause between two checks of a conflicting session.
const WAIT_MAX: Duration = Duration::from_millis(50);

/// errdetail_recovery_conflict for PROCSIG_RECOVERY_CONFLICT_SNAPSHOT.
pub const SNAPSHOT_CONFLICT_DETAIL: &str =
    "User query might have needed to see row versions that must be removed.";

/// The error a statement cancelled by a snapshot conflict fails with.
pub fn statement_conflict_error() -> PgError {
    PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "canceling statement due to conflict with recovery",
    )
    .with_detail(SNAPSHOT_CONFLICT_DETAIL)
}

/// The FATAL error that ends a session idle in a transaction whose
/// snapshot conflicts.
pub fn session_conflict_error() -> PgError {
    PgError::fatal(
        sqlstate::SERIALIZATION_FAILURE,
        "terminating connection due to conflict with recovery",
    )
    .with_detail(SNAPSHOT_CONFLICT_DETAIL)
    .with_hint(
        "In a moment you should be able to reconnect to the database and repeat your command.",
    )
}

/// One session's end of the conflict signalling (its PGPROC's
/// recoveryConflictPending plus its latch).
pub struct ConflictSignal {
    procno: ProcNumber,
    cancel: Arc<AtomicBool>,
    pending: AtomicBool,
    wake: Arc<tokio::sync::Notify>,
}

impl ConflictSignal {
    /// The proc this session occupies.
    pub fn procno(&self) -> ProcNumber {
        self.procno
    }

    /// Takes the pending conflict, if any: true once per signal the session
    /// acts on.
    pub fn take_pending(&self) -> bool {
        self.pending.swap(false, Ordering::SeqCst)
    }

    /// The latch replay sets: its `notified()` resolves when replay
    /// signals (a signal sent while nobody waited is kept, so the next
    /// wait returns at once).
    pub fn latch(&self) -> &Arc<tokio::sync::Notify> {
        &self.wake
    }

    fn signal(&self) {
        self.pending.store(true, Ordering::SeqCst);
        self.cancel.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }
}

/// The node's conflict state: registered sessions and the WAL receipt
/// time (the counter of `pg_stat_database_conflicts` lives in
/// [`crate::replication::ReplicationState`] with the other views' data).
#[derive(Default)]
pub struct StandbyConflicts {
    sessions: Mutex<HashMap<u32, Arc<ConflictSignal>>>,
    /// When the startup process last found newly received WAL.
    receipt: Mutex<Option<Instant>>,
}

impl StandbyConflicts {
    /// Registers the session running in `procno` with its cancel flag.
    pub fn register(&self, procno: ProcNumber, cancel: Arc<AtomicBool>) -> Arc<ConflictSignal> {
        let s = Arc::new(ConflictSignal {
            procno,
            cancel,
            pending: AtomicBool::new(false),
            wake: Arc::new(tokio::sync::Notify::new()),
        });
        self.sessions.lock().insert(procno.0, s.clone());
        s
    }

    /// Forgets a session (it is going away).
    pub fn unregister(&self, s: &Arc<ConflictSignal>) {
        let mut m = self.sessions.lock();
        if m.get(&s.procno.0).is_some_and(|x| Arc::ptr_eq(x, s)) {
            m.remove(&s.procno.0);
        }
    }

    fn get(&self, procno: ProcNumber) -> Option<Arc<ConflictSignal>> {
        self.sessions.lock().get(&procno.0).cloned()
    }

    fn is_registered(&self, s: &Arc<ConflictSignal>) -> bool {
        self.sessions
            .lock()
            .get(&s.procno.0)
            .is_some_and(|x| Arc::ptr_eq(x, s))
    }

    /// The startup process found newly received WAL to replay
    /// (XLogReceiptTime).
    pub fn note_wal_received(&self, at: Instant) {
        *self.receipt.lock() = Some(at);
    }
}

impl Engine {
    /// ResolveRecoveryConflictWithSnapshot: before replay removes row
    /// versions up to `latest_removed_xid`, waits for every standby session
    /// whose snapshot xmin is valid and `<= latest_removed_xid` to let go of
    /// it, cancelling those still holding on once
    /// `max_standby_streaming_delay` has passed (see the module doc).
    /// Returns at once when nobody conflicts (always in crash recovery,
    /// where there are no sessions) or `latest_removed_xid` is invalid.
    /// Returns true when a snapshot older than old_snapshot_threshold was
    /// left holding the versions: the caller records their removal (see
    /// the module doc).
    pub fn resolve_snapshot_conflict(&self, latest_removed_xid: TransactionId) -> bool {
        if !latest_removed_xid.is_valid() {
            return false;
        }
        let procs = self.procarray.conflicting_procs(latest_removed_xid);
        if procs.is_empty() {
            return false;
        }
        let mut kept_old = false;
        let started = Instant::now();
        let deadline = self.standby_limit_time(started);
        let mut waited_long = false;
        for p in procs {
            let Some(sig) = self.standby_conflicts.get(p) else {
                // Not a session (nothing else publishes an xmin on a
                // standby), or one that is just going away.
                continue;
            };
            let mut pause = WAIT_MIN;
            let mut signalled = false;
            loop {
                let xmin = self.procarray.proc_xmin(p);
                if !xmin.is_valid()
                    || xmin > latest_removed_xid
                    || !self.standby_conflicts.is_registered(&sig)
                {
                    break;
                }
                if self.procarray.snapshot_is_old(xmin) {
                    kept_old = true;
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    if !signalled {
                        waited_long = true;
                        tracing::info!(
                            "recovery still waiting after {:.3} ms: recovery conflict on snapshot",
                            started.elapsed().as_secs_f64() * 1000.0
                        );
                        tracing::debug!(
                            "cancelling standby session in proc {} holding xmin {} <= {}",
                            p.0,
                            xmin.0,
                            latest_removed_xid.0
                        );
                    }
                    // Re-sent on every poll: a signal that arrived between
                    // two statements of a transaction still holding its
                    // snapshot must reach the next one.
                    sig.signal();
                    signalled = true;
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(WAIT_MAX);
            }
            if signalled {
                // Acted on, or no longer needed: a stale signal must not
                // turn a later user cancel into a conflict.
                sig.pending.store(false, Ordering::SeqCst);
            }
        }
        if waited_long {
            tracing::info!(
                "recovery finished waiting after {:.3} ms: recovery conflict on snapshot",
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        kept_old
    }

    /// Replay is about to remove `removed` (xmin, xmax) from `block` of
    /// `rel` (record ending at `lsn`) under a snapshot older than
    /// old_snapshot_threshold: records the versions a snapshot could have
    /// seen — both xids committed, so the versions were live to someone —
    /// relation-wide (index scans) and for the page. Called under the
    /// page's lock before the page changes and before the index entries go.
    pub fn record_replayed_early_removal(
        &self,
        rel: u32,
        block: u32,
        removed: &[(TransactionId, TransactionId)],
        lsn: pgtypes::lsn::Lsn,
    ) {
        let committed =
            |x: TransactionId| self.clog.get_status(x) == txn::clog::XidStatus::Committed;
        let seen: Vec<_> = removed
            .iter()
            .copied()
            .filter(|&(xmin, xmax)| xmin != xmax && committed(xmin) && committed(xmax))
            .collect();
        let os = self.procarray.old_snapshot();
        os.record_early(
            rel,
            txn::old_snapshot::INDEX_BLOCK,
            &seen,
            pgtypes::lsn::Lsn(u64::MAX),
        );
        os.record_early(rel, block, &seen, lsn);
    }

    /// GetStandbyLimitTime: when replay stops waiting and cancels; `None`
    /// with `max_standby_streaming_delay = -1` (wait for ever).
    fn standby_limit_time(&self, now: Instant) -> Option<Instant> {
        let delay = self.config().int("max_standby_streaming_delay");
        if delay < 0 {
            return None;
        }
        let from = self
            .standby_conflicts
            .receipt
            .lock()
            .unwrap_or(now)
            .min(now);
        Some(from + Duration::from_millis(delay as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;
    use pgtypes::config::Config;
    use txn::clog::XidStatus;

    fn standby(delay: &str) -> (tempfile::TempDir, Arc<Engine>) {
        standby_with(delay, "-1")
    }

    fn standby_with(delay: &str, threshold: &str) -> (tempfile::TempDir, Arc<Engine>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = Config::new(dir.path());
        cfg.set("fsync", "off").expect("fsync");
        cfg.set("max_standby_streaming_delay", delay)
            .expect("delay");
        cfg.set("old_snapshot_threshold", threshold)
            .expect("threshold");
        let db =
            Engine::open(cfg, Role::Standby, TransactionId::FIRST_NORMAL).expect("open a standby");
        let t = TransactionId;
        db.procarray.init_known_assigned(&[], false, t(10), t(9));
        (dir, db)
    }

    /// A session with a snapshot (xmin 10) in its own proc.
    fn session_with_snapshot(db: &Engine) -> (ProcNumber, Arc<AtomicBool>, Arc<ConflictSignal>) {
        let p = db.procarray.connect(100).expect("a proc");
        let mut cache = None;
        let s = db.procarray.get_snapshot(p, &mut cache);
        assert_eq!(s.xmin, TransactionId(10));
        let cancel = Arc::new(AtomicBool::new(false));
        let sig = db.standby_conflicts.register(p, cancel.clone());
        (p, cancel, sig)
    }

    /// old_snapshot_threshold = 0 on the standby: every snapshot is old,
    /// so replay neither waits (the delay is infinite) nor cancels, and
    /// says the removal must be recorded; off, the same call would wait.
    #[test]
    fn old_snapshots_are_left_in_place() {
        let (_d, db) = standby_with("-1", "0");
        if !db.procarray.old_snapshot().enabled() {
            return; // txn built without the feature
        }
        let (p, cancel, sig) = session_with_snapshot(&db);
        assert!(db.procarray.snapshot_is_old(TransactionId(10)));
        assert!(db.resolve_snapshot_conflict(TransactionId(50)), "record it");
        assert!(!cancel.load(Ordering::SeqCst), "not cancelled");
        assert!(!sig.take_pending());
        assert_eq!(db.procarray.proc_xmin(p), TransactionId(10), "kept");
        // Nobody in conflict: nothing to record.
        assert!(!db.resolve_snapshot_conflict(TransactionId(9)));
        // The record keeps only versions someone saw: both xids committed.
        let t = TransactionId;
        let lsn = pgtypes::lsn::Lsn(40);
        db.record_replayed_early_removal(1, 2, &[(t(3), t(4))], lsn);
        assert_eq!(
            db.procarray.old_snapshot().early_records(),
            0,
            "never committed"
        );
        db.clog.set_status(t(7), &[], XidStatus::Committed);
        db.clog.set_status(t(8), &[], XidStatus::Committed);
        db.record_replayed_early_removal(1, 2, &[(t(3), t(4)), (t(7), t(8))], lsn);
        assert_eq!(
            db.procarray.old_snapshot().early_records(),
            2,
            "page and relation"
        );
    }

    /// Nobody conflicts: no session, a session without a snapshot, a
    /// snapshot newer than the removed xids — returns at once even with
    /// an infinite delay, and signals nothing.
    #[test]
    fn returns_at_once_without_conflict() {
        let (_d, db) = standby("-1");
        db.resolve_snapshot_conflict(TransactionId(50));
        let (p, cancel, sig) = session_with_snapshot(&db);
        db.resolve_snapshot_conflict(TransactionId(9)); // xmin 10 > 9
        db.resolve_snapshot_conflict(TransactionId::INVALID);
        db.procarray.clear_xmin(p);
        db.resolve_snapshot_conflict(TransactionId(50));
        assert!(!cancel.load(Ordering::SeqCst), "nobody cancelled");
        assert!(!sig.take_pending());
    }

    /// Delay 0: the conflicting session is signalled at once; replay goes
    /// on once its xmin is gone (the session's statement failed).
    #[test]
    fn delay_zero_cancels_at_once() {
        let (_d, db) = standby("0");
        let (p, cancel, sig) = session_with_snapshot(&db);
        let db2 = db.clone();
        let session = std::thread::spawn(move || {
            // The "statement": runs until cancelled, then releases its
            // snapshot as an aborted statement does.
            while !cancel.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
            let was_conflict = sig.take_pending();
            db2.procarray.clear_xmin(p);
            was_conflict
        });
        db.resolve_snapshot_conflict(TransactionId(10)); // xmin 10 <= 10
        assert!(session.join().expect("session"), "cancelled as a conflict");
        assert!(!db.procarray.proc_xmin(p).is_valid());
    }

    /// A small delay: nothing happens before it passes (a session that
    /// ends its snapshot in time is never cancelled), a session that holds
    /// on is cancelled after it.
    #[test]
    fn small_delay_waits_then_cancels() {
        let (_d, db) = standby("200ms");
        // In time: the xmin clears before the delay, no cancel.
        let (p, cancel, _sig) = session_with_snapshot(&db);
        let db2 = db.clone();
        let quick = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            db2.procarray.clear_xmin(p);
        });
        db.resolve_snapshot_conflict(TransactionId(10));
        quick.join().expect("quick");
        assert!(
            !cancel.load(Ordering::SeqCst),
            "ended in time: not cancelled"
        );

        // Holding on: cancelled, and not before the delay.
        let mut cache = None;
        let _ = db.procarray.get_snapshot(p, &mut cache);
        let started = Instant::now();
        let db3 = db.clone();
        let hold = std::thread::spawn(move || {
            while !cancel.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let waited = started.elapsed();
            db3.procarray.clear_xmin(p);
            waited
        });
        db.resolve_snapshot_conflict(TransactionId(10));
        let waited = hold.join().expect("hold");
        assert!(
            waited >= Duration::from_millis(200),
            "cancelled only after the delay"
        );
    }

    /// Delay -1: replay waits for ever — here until the session goes away,
    /// without ever cancelling it.
    #[test]
    fn infinite_delay_waits_for_the_session() {
        let (_d, db) = standby("-1");
        let (p, cancel, sig) = session_with_snapshot(&db);
        let done = Arc::new(AtomicBool::new(false));
        let (db2, done2) = (db.clone(), done.clone());
        let replay = std::thread::spawn(move || {
            db2.resolve_snapshot_conflict(TransactionId(10));
            done2.store(true, Ordering::SeqCst);
        });
        // Still waiting a while later (a condition, not a timing: it can
        // only end once the session does).
        std::thread::sleep(Duration::from_millis(100));
        assert!(!done.load(Ordering::SeqCst), "replay still waiting");
        // The session disconnects.
        db.standby_conflicts.unregister(&sig);
        db.procarray.disconnect(p);
        replay.join().expect("replay");
        assert!(done.load(Ordering::SeqCst));
        assert!(!cancel.load(Ordering::SeqCst), "never cancelled");
    }
}
