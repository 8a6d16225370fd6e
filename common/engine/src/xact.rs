//! # Per-session transaction state (xact.c)
//!
//! [`Xact`] is one session's transaction machine: its proc slot, the block
//! state the SQL layer drives, the subtransaction stack, the command counter
//! and the snapshot cache.
//!
//! ## Block states (xact.c's TBLOCK_*)
//!
//! ```text
//!            start_statement                 finish_statement(ok)
//!  Default ───────────────────► Started ─────────────────────────► Default
//!     │  (begin_implicit_block)    │ begin_implicit_block   (commit / abort)
//!     │                            ▼
//!     │                    ImplicitInProgress ── end_implicit_block ──► Default
//!     │ BEGIN                      │ BEGIN
//!     ▼                            ▼
//!  InProgress ◄──── ROLLBACK TO ── Failed  (error in a block; 25P02 until
//!     │  COMMIT/ROLLBACK              │     ROLLBACK / ROLLBACK TO)
//!     ▼                               ▼ COMMIT (tagged ROLLBACK) / ROLLBACK
//!  Default                          Default
//! ```
//!
//! An error inside a block aborts *now* what it must — the whole transaction
//! at top level, or only the current subtransaction inside a savepoint — so
//! its xids are marked aborted and leave the running set at once (waiters go
//! on); the block stays Failed until the user ends it.
//!
//! ## Subtransactions
//!
//! `levels[0]` is the top-level transaction, `levels[1..]` the open
//! savepoints. Xids are assigned lazily: a write in a subtransaction first
//! assigns any missing xid of its ancestors, top-down, recording each
//! subxid's parent in the subtrans map. RELEASE merges a level's xids (its own
//! and those of released children) into its parent; ROLLBACK TO aborts the
//! named level and everything above it (clog "aborted", removed from the
//! proc's subxid cache) and opens the savepoint afresh.
//!
//! ## Commit and abort
//!
//! Every end of a transaction tree — commit, abort, COMMIT/ROLLBACK
//! PREPARED, their redo — goes through [`end_transaction_tree`]: the WAL
//! record (commit: wait for its flush), the clog for the tree, then the
//! procarray completion (clear the dense entry, advance
//! latest_completed_xid, bump xact_completion_count), with checkpoints
//! delayed from record to clog. A transaction that never got an xid
//! touches neither WAL, clog nor the counter.
//!
//! ## Commit waits a session awaits
//!
//! In the session loop ([`Xact::set_async_commit_wait`],
//! [`Xact::set_can_await`]) a commit does not block its thread: it leaves
//! up to two waits, awaited one after the other through
//! [`Xact::commit_wait`] and ended by [`Xact::finish_commit`]:
//!
//! ```text
//!  COMMIT ─▶ record ─▶ joined a group flush? ─ yes ─▶ [flush wait] ─┐
//!                          │ no: flushed here                       │
//!                          ▼                                        ▼
//!            clog, checkpoint delay off ◀───────────────────────────┘
//!                          │ synchronous_standby_names set and
//!                          │ synchronous_commit ≥ remote_write?
//!                          ├─ yes ─▶ [standby wait] (crate::syncrep) ─┐
//!                          ▼                                          ▼
//!                   procarray end (visible to others) ◀───────────────┘
//! ```
//!
//! During either wait the xid is still running for every other session,
//! as in PostgreSQL. A cancelled standby wait ends the same way and leaves
//! a WARNING ([`Xact::take_wait_notice`]).
//!
//! ## Snapshots
//!
//! READ COMMITTED: [`Xact::statement_snapshot`] asks the procarray each
//! statement, passing the session's cached snapshot — reused while no
//! transaction completed. REPEATABLE READ: the transaction's first snapshot
//! is kept until it ends. After a READ COMMITTED statement the proc's xmin is
//! cleared so an idle-in-transaction session does not hold back horizons.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::twophase::TwoPhaseState;
use crate::{Engine, Role};
use pgtypes::blocking::run_blocking;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::txstatus::TxStatus;
use pgtypes::ProcNumber;
use pgtypes::{CommandId, TransactionId};
use storage::heapam_visibility::OwnXact;
use storage::xloginsert::SynchronousCommit;
use txn::clog::{Clog, XidStatus};
use txn::lmgr::WaitLimits;
use txn::predicate::{Registered, SnapshotSafety, SxactId};
use txn::procarray::{Finished, ProcArray};
use txn::snapshot::Snapshot;

/// SQLSTATE 3B001 invalid_savepoint_specification.
pub const INVALID_SAVEPOINT_SPECIFICATION: &str = "3B001";

/// Isolation level of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IsolationLevel {
    /// A new snapshot per statement (the default).
    #[default]
    ReadCommitted,
    /// One snapshot for the whole transaction; write conflicts raise 40001.
    RepeatableRead,
    /// REPEATABLE READ plus predicate locks and rw-conflict tracking
    /// (`txn::predicate`): dangerous structures raise 40001.
    Serializable,
}

impl IsolationLevel {
    /// The name `SHOW transaction_isolation` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
            IsolationLevel::Serializable => "serializable",
        }
    }

    /// IsolationUsesXactSnapshot: one snapshot for the whole transaction.
    pub fn uses_transaction_snapshot(self) -> bool {
        self != IsolationLevel::ReadCommitted
    }
}

/// check_XactIsoLevel's refusal during recovery.
pub fn serializable_in_hot_standby() -> PgError {
    PgError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "cannot use serializable mode in a hot standby",
    )
    .with_hint("You can use REPEATABLE READ instead.")
}

/// GetSerializableTransactionSnapshot's refusal during recovery (the
/// level came from `default_transaction_isolation`).
pub fn serializable_default_in_hot_standby() -> PgError {
    PgError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        "cannot use serializable mode in a hot standby",
    )
    .with_detail("\"default_transaction_isolation\" is set to \"serializable\".")
    .with_hint(
        "You can use \"SET default_transaction_isolation = 'repeatable read'\" to change the default.",
    )
}

/// What the transaction machine needs from the node: the database on a real
/// node, a small stand-in in tests.
pub trait XactShared: Send + Sync {
    /// Commit status.
    fn clog(&self) -> &Clog;
    /// Running transactions.
    fn procarray(&self) -> &ProcArray;
    /// `max_connections`.
    fn max_connections(&self) -> usize;
    /// `deadlock_timeout`.
    fn deadlock_timeout(&self) -> Duration;
    /// True on a standby (no xids may be assigned).
    fn in_recovery(&self) -> bool;
    /// The prepared-transaction registry (default: PREPARE disabled).
    fn twophase(&self) -> &TwoPhaseState {
        &crate::twophase::DISABLED
    }
    /// The WAL hook of two-phase commit: writes a Prepare / CommitPrepared /
    /// AbortPrepared record and, with `flush`, waits until WAL is durable
    /// past it. Default: through [`XactShared::xlog`] (nothing without WAL).
    fn log_twophase_record(&self, rec: wal::XactRecord, flush: bool) -> PgResult<()> {
        let Some(x) = self.xlog() else {
            return Ok(());
        };
        let xid = match &rec {
            wal::XactRecord::Commit { xid, .. }
            | wal::XactRecord::Abort { xid, .. }
            | wal::XactRecord::Prepare { xid, .. }
            | wal::XactRecord::CommitPrepared { xid, .. }
            | wal::XactRecord::AbortPrepared { xid, .. } => *xid,
        };
        let end = x.insert(xid, &wal::WalRecord::Xact(rec))?;
        if flush {
            x.flush(end)?;
        }
        Ok(())
    }
    /// WAL, if this node logs (commit and abort records).
    fn xlog(&self) -> Option<&storage::xloginsert::XLog> {
        None
    }
    /// Synchronous replication, if this node has standbys to wait for.
    fn syncrep(&self) -> Option<&crate::syncrep::SyncRep> {
        None
    }
}

impl XactShared for Engine {
    fn clog(&self) -> &Clog {
        &self.clog
    }
    fn procarray(&self) -> &ProcArray {
        &self.procarray
    }
    fn max_connections(&self) -> usize {
        self.config().max_connections()
    }
    fn deadlock_timeout(&self) -> Duration {
        Duration::from_millis(self.config().int("deadlock_timeout").max(1) as u64)
    }
    fn in_recovery(&self) -> bool {
        self.role() == Role::Standby
    }
    fn twophase(&self) -> &TwoPhaseState {
        &self.twophase
    }
    fn xlog(&self) -> Option<&storage::xloginsert::XLog> {
        let x = Engine::xlog(self);
        x.inserting().then_some(&**x)
    }
    fn syncrep(&self) -> Option<&crate::syncrep::SyncRep> {
        Some(&self.replication.syncrep)
    }
}

/// TBLOCK_* (the subtransaction states are folded into `levels`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// No transaction.
    Default,
    /// A single-statement implicit transaction.
    Started,
    /// An implicit transaction around a multi-statement Query.
    ImplicitInProgress,
    /// An explicit block (BEGIN).
    InProgress,
    /// A failed explicit block.
    Failed,
}

/// One (sub)transaction level.
#[derive(Debug)]
struct Level {
    /// Savepoint name (`None` for the top level).
    name: Option<String>,
    /// This level's own xid (INVALID until it writes).
    xid: TransactionId,
    /// Its xid plus the xids of released children: what aborting it aborts.
    xids: Vec<TransactionId>,
    /// Already aborted (an error inside this savepoint).
    aborted: bool,
}

impl Level {
    fn new(name: Option<String>) -> Level {
        Level {
            name,
            xid: TransactionId::INVALID,
            xids: Vec::new(),
            aborted: false,
        }
    }
}

/// One session's transaction machinery: its proc slot, the block state
/// (idle / implicit / explicit block / failed block), subtransactions, the
/// command counter and the snapshot cache.
pub struct Xact {
    shared: Arc<dyn XactShared>,
    proc: ProcNumber,
    block: Block,
    /// Inside begin_implicit_block .. end_implicit_block.
    implicit_query: bool,
    /// The current transaction's level (meaningful while one runs).
    iso: IsolationLevel,
    /// default_transaction_isolation.
    default_iso: IsolationLevel,
    /// `default_transaction_read_only`: a new transaction starts READ ONLY.
    default_read_only: bool,
    /// `default_transaction_deferrable`: a new transaction starts DEFERRABLE.
    default_deferrable: bool,
    /// Empty when no transaction runs; `[0]` is the top level.
    levels: Vec<Level>,
    /// Top xid and live subxids, sorted (xids are assigned increasing).
    own_xids: Vec<TransactionId>,
    curcid: CommandId,
    /// GetSnapshotData's cache (kept across transactions).
    snap_cache: Option<Arc<Snapshot>>,
    /// REPEATABLE READ: the transaction snapshot.
    xact_snapshot: Option<Arc<Snapshot>>,
    /// A snapshot was taken in this transaction (SET TRANSACTION is too late).
    snapshot_taken: bool,
    /// The session's `synchronous_commit` (None: the server's).
    synchronous_commit: Option<SynchronousCommit>,
    /// The caller awaits [`Xact::commit_wait`] after every call that may
    /// commit (the session loop): commits may wait for synchronous
    /// standbys ([`Xact::set_can_await`]).
    can_await: bool,
    /// A commit (or two-phase step) waiting for synchronous standbys
    /// before its result is sent (see [`SyncRepPending`]).
    syncrep: Option<SyncRepPending>,
    /// The WARNING of a synchronous-replication wait that was cancelled,
    /// for the session to send ([`Xact::take_wait_notice`]).
    wait_notice: Option<PgError>,
    /// This transaction took an xid to write ([`Xact::assign_xid`]). Only
    /// then must COMMIT wait for its record to be flushed: a transaction
    /// whose xid came from `txid_current()` alone changed nothing a crash
    /// could lose, so its commit is asynchronous, as PostgreSQL's
    /// RecordTransactionCommit does for a transaction that wrote no WAL.
    wrote_data: bool,
    /// The session can await a commit's flush instead of blocking its
    /// thread ([`Xact::set_async_commit_wait`]).
    async_commit_wait: bool,
    /// A commit waiting for its group flush (see [`PendingCommit`]).
    pending: Option<PendingCommit>,
    /// SERIALIZABLE: this transaction's predicate-lock record, from its
    /// snapshot to its end (`txn::predicate`).
    sxact: Option<SxactId>,
    /// The current transaction is READ ONLY (from the default at its
    /// start; BEGIN / SET TRANSACTION through the session).
    read_only: bool,
    /// The current transaction is DEFERRABLE (likewise).
    deferrable: bool,
    /// `sxact`'s top xid was handed to the predicate lock manager.
    sxact_xid_registered: bool,
    /// An open cursor still reads under an older snapshot of this
    /// transaction: its xmin stays published between statements
    /// ([`Xact::set_snapshot_registered`]).
    snapshot_registered: bool,
}

/// A wait for synchronous standbys (SyncRepWaitForLSN) the session awaits
/// before reporting the result. For a COMMIT the transaction is durable
/// and committed in the clog but still running in the procarray — no other
/// session sees it until the standbys confirm or the wait is cancelled, as
/// in PostgreSQL, whose backend waits before ProcArrayEndTransaction.
struct SyncRepPending {
    /// WAL up to here must be confirmed.
    lsn: wal::Lsn,
    mode: crate::syncrep::SyncRepMode,
    /// The latest xid of the tree whose proc ends after the wait (None:
    /// already ended — two-phase steps and commits with pending DDL).
    end_proc: Option<TransactionId>,
    /// Set by the wait when it was cancelled.
    cancelled: Arc<std::sync::atomic::AtomicBool>,
}

/// What [`Xact::commit_wait`] hands the session loop.
pub type CommitWait = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// PostgreSQL's WARNING when a synchronous-replication wait is cancelled.
pub fn syncrep_cancel_warning() -> PgError {
    PgError::warning(
        sqlstate::WARNING,
        "canceling wait for synchronous replication due to user request",
    )
    .with_detail(
        "The transaction has already committed locally, but might not have been replicated to the standby.",
    )
}

fn not_in_block(what: &str) -> PgError {
    PgError::new(
        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
        format!("{what} can only be used in transaction blocks"),
    )
}

fn in_failed_block() -> PgError {
    PgError::new(
        sqlstate::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

fn no_savepoint(name: &str) -> PgError {
    PgError::new(
        INVALID_SAVEPOINT_SPECIFICATION,
        format!("savepoint \"{name}\" does not exist"),
    )
}

/// How a transaction tree ends, and which WAL record says so.
#[derive(Clone, Copy, Debug)]
pub enum TreeEnd<'a> {
    /// COMMIT: a commit record; with `sync` (None: the server's
    /// `synchronous_commit`) the clog changes only once it is flushed —
    /// group commit through the WAL writer, in `block_in_place`.
    Commit {
        /// The session's `synchronous_commit`.
        sync: Option<bool>,
    },
    /// ROLLBACK, or an error: an abort record, never waited for (an abort
    /// lost in a crash is still an abort); failing to write it is logged
    /// and otherwise ignored — the transaction is aborted anyway.
    Abort,
    /// COMMIT PREPARED (`commit`) or ROLLBACK PREPARED of `gid`: the record,
    /// flushed either way (the state file is removed right after).
    Prepared {
        /// COMMIT PREPARED rather than ROLLBACK PREPARED.
        commit: bool,
        /// The transaction's gid, carried by the record.
        gid: &'a str,
    },
    /// Redo of any of those records: already in WAL, so only the clog and
    /// the procarray change.
    Replayed {
        /// A commit (Commit / CommitPrepared) rather than an abort.
        commit: bool,
    },
}

impl TreeEnd<'_> {
    fn commits(self) -> bool {
        match self {
            TreeEnd::Commit { .. } => true,
            TreeEnd::Abort => false,
            TreeEnd::Prepared { commit, .. } | TreeEnd::Replayed { commit } => commit,
        }
    }
}

/// The one way a transaction tree ends, for every path: COMMIT, ROLLBACK
/// and errors of a session, COMMIT/ROLLBACK PREPARED of a dummy proc, and
/// redo (PostgreSQL's RecordTransactionCommit / RecordTransactionAbort,
/// TransactionIdCommitTree and ProcArrayEndTransaction, in that order):
///
/// 1. write the WAL record (`end` says which; see [`TreeEnd`]) — before
///    the clog, so no session sees a commit that could be lost in a crash;
/// 2. the clog: committed or aborted, for `xid` and `subxids`;
/// 3. `while_delayed` (two-phase commit forgets its registry entry here);
/// 4. the procarray completion of `who` (None: a prepared transaction that
///    has no dummy proc yet), through `ProcArray::end_transaction` — the
///    completion counter and the snapshot caches depend on it.
///
/// From before the record until after step 3 a commit (or a two-phase
/// finish) delays checkpoints (PostgreSQL's DELAY_CHKPT_START). Otherwise
/// a checkpoint could take its redo point after the record but flush a
/// clog that does not have the outcome yet — and recovery, starting at that
/// redo point, would never replay it.
///
/// A tree without an xid (a read-only transaction) writes nothing and
/// touches no clog; its proc is only reset. On an error writing the record
/// (commit or two-phase) nothing else has changed: the caller aborts or
/// unlocks.
pub fn end_transaction_tree(
    shared: &dyn XactShared,
    who: Option<Finished>,
    xid: TransactionId,
    subxids: &[TransactionId],
    end: TreeEnd<'_>,
    while_delayed: impl FnOnce(),
) -> PgResult<()> {
    if !xid.is_valid() {
        if let Some(w) = who {
            shared
                .procarray()
                .end_transaction(w, TransactionId::INVALID);
        }
        return Ok(());
    }
    let delay = log_tree_end(shared, xid, subxids, end)?;
    apply_tree_end(
        shared,
        who,
        xid,
        subxids,
        end.commits(),
        while_delayed,
        delay,
    );
    Ok(())
}

/// Step 1 of [`end_transaction_tree`]: the WAL record (waited for as `end`
/// says). Returns the checkpoint delay a commit holds until its clog bits
/// are set.
fn log_tree_end(
    shared: &dyn XactShared,
    xid: TransactionId,
    subxids: &[TransactionId],
    end: TreeEnd<'_>,
) -> PgResult<Option<storage::xloginsert::DelayCheckpoint>> {
    let xlog = shared.xlog();
    let delay = match end {
        TreeEnd::Commit { .. } | TreeEnd::Prepared { .. } => xlog.map(|x| x.delay_checkpoint()),
        TreeEnd::Abort | TreeEnd::Replayed { .. } => None,
    };
    match (end, xlog) {
        (TreeEnd::Commit { sync }, Some(x)) => {
            x.log_commit(
                xid,
                subxids,
                sync.unwrap_or_else(|| x.synchronous_commit().waits_locally()),
            )?;
        }
        (TreeEnd::Abort, Some(x)) => {
            if let Err(e) = x.log_abort(xid, subxids) {
                tracing::warn!("could not log abort of transaction {xid}: {}", e.message);
            }
        }
        (TreeEnd::Prepared { commit, gid }, _) => {
            let xids = subxids.to_vec();
            let timestamp_us = pgtypes::datetime::now_usecs();
            let gid = gid.to_string();
            let rec = if commit {
                wal::XactRecord::CommitPrepared {
                    xid,
                    subxids: xids,
                    timestamp_us,
                    gid,
                }
            } else {
                wal::XactRecord::AbortPrepared {
                    xid,
                    subxids: xids,
                    timestamp_us,
                    gid,
                }
            };
            shared.log_twophase_record(rec, true)?;
        }
        (TreeEnd::Commit { .. } | TreeEnd::Abort, None) | (TreeEnd::Replayed { .. }, _) => {}
    }
    Ok(delay)
}

/// Steps 2–4 of [`end_transaction_tree`]: clog, `while_delayed`, the end
/// of the checkpoint delay, procarray.
fn apply_tree_end(
    shared: &dyn XactShared,
    who: Option<Finished>,
    xid: TransactionId,
    subxids: &[TransactionId],
    commits: bool,
    while_delayed: impl FnOnce(),
    delay: Option<storage::xloginsert::DelayCheckpoint>,
) {
    let status = if commits {
        XidStatus::Committed
    } else {
        XidStatus::Aborted
    };
    shared.clog().set_status(xid, subxids, status);
    while_delayed();
    // The clog holds the outcome: a checkpoint may flush it now.
    drop(delay);
    if let Some(w) = who {
        let latest = subxids.iter().copied().fold(xid, TransactionId::max);
        shared.procarray().end_transaction(w, latest);
    }
}

/// A commit whose record is written and whose flush a group round already
/// under way will make durable: the session awaits
/// [`Xact::commit_wait`], then [`Xact::finish_commit`] sets the clog and
/// ends the proc. Until then the transaction is still running for every
/// other session (its xid is in the procarray), as PostgreSQL's is while
/// its backend sleeps in XLogFlush.
struct PendingCommit {
    top: TransactionId,
    subs: Vec<TransactionId>,
    /// WAL must be durable up to here.
    target: wal::Lsn,
    /// The commit record's end and the synchronous-replication wait that
    /// follows the flush, if any.
    syncrep: Option<(wal::Lsn, crate::syncrep::SyncRepMode)>,
    /// Held from before the record until the clog is set.
    delay: storage::xloginsert::DelayCheckpoint,
}

impl Xact {
    /// A session's transaction machine: takes a proc slot (FATAL 53300
    /// "sorry, too many clients already" when `max_connections` are in use).
    pub fn new(db: Arc<Engine>) -> PgResult<Xact> {
        Xact::with_shared(db)
    }

    /// A parallel worker's machinery: a proc slot of its own on the same
    /// node, no transaction. It reads under its leader's snapshot (the
    /// executor's `Vis`) and never writes, so nothing else of it is used;
    /// too many clients already is its caller's cue to run without it.
    pub fn worker(&self) -> PgResult<Xact> {
        Xact::with_shared(self.shared.clone())
    }

    /// Like [`Xact::new`] over any [`XactShared`] (tests, tools).
    pub fn with_shared(shared: Arc<dyn XactShared>) -> PgResult<Xact> {
        let Some(proc) = shared.procarray().connect(shared.max_connections()) else {
            return Err(PgError::fatal(
                sqlstate::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
            ));
        };
        Ok(Xact {
            shared,
            proc,
            block: Block::Default,
            implicit_query: false,
            iso: IsolationLevel::default(),
            default_iso: IsolationLevel::default(),
            default_read_only: false,
            default_deferrable: false,
            levels: Vec::new(),
            own_xids: Vec::new(),
            curcid: CommandId::FIRST,
            snap_cache: None,
            xact_snapshot: None,
            snapshot_taken: false,
            synchronous_commit: None,
            can_await: false,
            syncrep: None,
            wait_notice: None,
            wrote_data: false,
            async_commit_wait: false,
            pending: None,
            sxact: None,
            read_only: false,
            deferrable: false,
            sxact_xid_registered: false,
            snapshot_registered: false,
        })
    }

    /// This session's proc slot.
    pub fn proc(&self) -> ProcNumber {
        self.proc
    }

    /// Sets the process id shown in deadlock reports (BackendKeyData pid).
    pub fn set_pid(&self, pid: i32) {
        self.shared.procarray().set_pid(self.proc, pid);
    }

    // ----- block state -------------------------------------------------------

    /// The ReadyForQuery status.
    pub fn status(&self) -> TxStatus {
        match self.block {
            Block::Default | Block::Started | Block::ImplicitInProgress => TxStatus::Idle,
            Block::InProgress => TxStatus::InBlock,
            Block::Failed => TxStatus::Failed,
        }
    }

    /// Subtransaction nesting: 1 in a transaction without savepoints, one
    /// more per open savepoint, 0 outside a transaction.
    pub fn nesting_depth(&self) -> usize {
        self.levels.len()
    }

    /// True while a transaction (implicit or explicit) is open.
    pub fn in_transaction(&self) -> bool {
        self.block != Block::Default
    }

    /// StartTransactionCommand: starts an implicit transaction when idle.
    pub fn start_statement(&mut self) {
        if self.block == Block::Default {
            self.start_transaction();
            self.block = if self.implicit_query {
                Block::ImplicitInProgress
            } else {
                Block::Started
            };
        }
    }

    /// CommitTransactionCommand / AbortCurrentTransaction after a statement:
    /// commits an implicit single-statement transaction on success, aborts
    /// any implicit one on failure; in a block, failure moves it to Failed.
    pub fn finish_statement(&mut self, ok: bool) -> PgResult<()> {
        match (self.block, ok) {
            (Block::Default, _) => Ok(()),
            (Block::Started, true) => self.commit_transaction(),
            (Block::Started | Block::ImplicitInProgress, false) => {
                self.abort_transaction();
                Ok(())
            }
            (Block::ImplicitInProgress | Block::InProgress, true) => {
                self.end_of_statement_snapshot();
                Ok(())
            }
            (Block::InProgress, false) => {
                self.fail_block();
                Ok(())
            }
            (Block::Failed, _) => Ok(()),
        }
    }

    /// True while a single statement runs in its own implicit
    /// transaction (TBLOCK_STARTED): not in a block, explicit or implicit.
    /// Only there may a procedure commit (PostgreSQL's non-atomic CALL).
    pub fn in_single_statement(&self) -> bool {
        self.block == Block::Started
    }

    /// COMMIT or ROLLBACK inside a procedure (SPI_commit / SPI_rollback):
    /// ends the statement's own transaction and starts the next one, with
    /// the same isolation level, read-only and deferrable setting when
    /// `chain` (AND CHAIN), else the defaults. The caller checks
    /// [`Xact::in_single_statement`] and that no subtransaction is open.
    /// A commit that fails has aborted the transaction; none is started.
    pub fn restart_in_procedure(&mut self, commit: bool, chain: bool) -> PgResult<()> {
        let kept = (self.iso, self.read_only, self.deferrable);
        if commit {
            self.commit_transaction()?;
        } else {
            self.abort_transaction();
        }
        self.start_transaction();
        self.block = Block::Started;
        if chain {
            (self.iso, self.read_only, self.deferrable) = kept;
        }
        Ok(())
    }

    /// BeginImplicitTransactionBlock: the statements of one multi-statement
    /// simple Query run in one implicit transaction.
    pub fn begin_implicit_block(&mut self) {
        self.implicit_query = true;
        if self.block == Block::Started {
            self.block = Block::ImplicitInProgress;
        }
    }

    /// End of a multi-statement Query: commits (ok) or aborts the implicit
    /// transaction if one is still open; an explicit block stays open.
    pub fn end_implicit_block(&mut self, ok: bool) -> PgResult<()> {
        self.implicit_query = false;
        match self.block {
            Block::ImplicitInProgress | Block::Started if ok => self.commit_transaction(),
            Block::ImplicitInProgress | Block::Started => {
                self.abort_transaction();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// BEGIN / START TRANSACTION. Returns WARNING 25001 "there is already a
    /// transaction in progress" inside a block.
    pub fn begin(&mut self, iso: Option<IsolationLevel>) -> Option<PgError> {
        match self.block {
            Block::InProgress | Block::Failed => {
                // PostgreSQL still applies BEGIN's options (as SET
                // TRANSACTION) before warning.
                if let Some(iso) = iso {
                    if !self.snapshot_taken && self.levels.len() <= 1 {
                        self.iso = iso;
                    }
                }
                return Some(PgError::warning(
                    sqlstate::ACTIVE_SQL_TRANSACTION,
                    "there is already a transaction in progress",
                ));
            }
            Block::Default => self.start_transaction(),
            Block::Started | Block::ImplicitInProgress => {}
        }
        self.block = Block::InProgress;
        if let Some(iso) = iso {
            if !self.snapshot_taken {
                self.iso = iso;
            }
        }
        None
    }

    /// COMMIT / END. Returns the command tag (`ROLLBACK` when the block had
    /// failed) and a WARNING 25P01 "there is no transaction in progress"
    /// outside a block.
    pub fn commit(&mut self) -> PgResult<(&'static str, Option<PgError>)> {
        match self.block {
            Block::InProgress => {
                self.commit_transaction()?;
                Ok(("COMMIT", None))
            }
            Block::Failed => {
                self.abort_transaction();
                Ok(("ROLLBACK", None))
            }
            Block::Default | Block::Started | Block::ImplicitInProgress => {
                let warn = PgError::warning(
                    sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                    "there is no transaction in progress",
                );
                if self.block != Block::Default {
                    self.commit_transaction()?;
                }
                Ok(("COMMIT", Some(warn)))
            }
        }
    }

    /// ROLLBACK / ABORT. Returns WARNING 25P01 outside a block.
    pub fn rollback(&mut self) -> Option<PgError> {
        let warn = match self.block {
            Block::InProgress | Block::Failed => None,
            _ => Some(PgError::warning(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "there is no transaction in progress",
            )),
        };
        if self.block != Block::Default {
            self.abort_transaction();
        }
        warn
    }

    /// PREPARE TRANSACTION 'gid' (PrepareTransactionBlock + PrepareTransaction).
    /// Returns the command tag and an optional warning:
    ///
    /// * in a block (or a multi-statement implicit one, with WARNING 25P01
    ///   "there is no transaction in progress"): assigns the top xid if none
    ///   was, hands the transaction to [`crate::twophase::prepare_transaction`]
    ///   (dummy proc, WAL) and ends the session's transaction —
    ///   `PREPARE TRANSACTION`;
    /// * in a failed block: rolls back — `ROLLBACK`;
    /// * outside a block: WARNING 25P01 and `ROLLBACK`; the statement's own
    ///   transaction goes on (and commits) as usual.
    ///
    /// An error (22023, 55000, 42710, 53200) aborts the transaction and
    /// leaves the session idle, as in PostgreSQL.
    pub fn prepare(
        &mut self,
        gid: &str,
        owner: &str,
        database: &str,
    ) -> PgResult<(&'static str, Option<PgError>)> {
        let no_xact = || {
            PgError::warning(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "there is no transaction in progress",
            )
        };
        let warn = match self.block {
            Block::Default | Block::Started => return Ok(("ROLLBACK", Some(no_xact()))),
            Block::Failed => {
                self.abort_transaction();
                return Ok(("ROLLBACK", None));
            }
            Block::ImplicitInProgress => Some(no_xact()),
            Block::InProgress => None,
        };
        if let Err(e) = self.top_xid_assign() {
            self.abort_transaction();
            return Err(e);
        }
        let mut predicate = None;
        if let Some(id) = self.sxact {
            // PrepareTransaction runs PreCommit_CheckForSerializationFailure,
            // then keeps the record's locks in the two-phase state
            // (AtPrepare_PredicateLocks) for a restart or a promotion.
            let pm = self.shared.procarray().predicate();
            if let Err(e) = pm.pre_commit(id) {
                self.abort_transaction();
                return Err(e);
            }
            predicate = pm.prepared_state(id);
        }
        let (top, subs) = self.live_xids();
        let r = crate::twophase::prepare_transaction(
            &*self.shared,
            self.proc,
            gid,
            top,
            &subs,
            owner,
            database,
            predicate,
        );
        match r {
            Ok(()) => {
                // The xids now belong to the dummy proc: nothing to finish
                // here. The predicate-lock record stays, prepared, until
                // COMMIT / ROLLBACK PREPARED (PostPrepare_PredicateLocks).
                self.sxact = None;
                self.sxact_xid_registered = false;
                self.end_transaction_state();
                Ok(("PREPARE TRANSACTION", warn))
            }
            Err(e) => {
                self.abort_transaction();
                Err(e)
            }
        }
    }

    /// True inside an explicit block or a multi-statement implicit one
    /// (PreventInTransactionBlock refuses both: COMMIT PREPARED, VACUUM).
    pub fn in_transaction_block(&self) -> bool {
        matches!(
            self.block,
            Block::InProgress | Block::Failed | Block::ImplicitInProgress
        )
    }

    /// SET TRANSACTION ISOLATION LEVEL (and BEGIN ISOLATION LEVEL). Outside
    /// a block it only affects the current implicit transaction; the caller
    /// sends PostgreSQL's WARNING 25P01 "SET TRANSACTION can only be used in
    /// transaction blocks" when [`Xact::status`] is Idle.
    pub fn set_isolation(&mut self, iso: IsolationLevel) -> PgResult<()> {
        if self.block == Block::Failed {
            return Err(in_failed_block());
        }
        if iso == self.iso && self.block != Block::Default {
            // Re-stating the current level is always allowed (check_XactIsoLevel).
            return Ok(());
        }
        if self.snapshot_taken {
            return Err(PgError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION ISOLATION LEVEL must be called before any query",
            ));
        }
        if self.levels.len() > 1 {
            return Err(PgError::new(
                sqlstate::ACTIVE_SQL_TRANSACTION,
                "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction",
            ));
        }
        if iso == IsolationLevel::Serializable && self.shared.in_recovery() {
            return Err(serializable_in_hot_standby());
        }
        self.iso = iso;
        Ok(())
    }

    /// READ ONLY or READ WRITE for the current transaction (a
    /// SERIALIZABLE READ ONLY transaction needs no conflict tracking once
    /// its snapshot is safe). Unchecked: the session's
    /// `set_transaction_read_only` checks a change as PostgreSQL's
    /// check_transaction_read_only does.
    pub fn set_read_only(&mut self, read_only: bool) {
        self.read_only = read_only;
    }

    /// DEFERRABLE for the current transaction (SERIALIZABLE READ ONLY
    /// DEFERRABLE waits for a safe snapshot). Unchecked, as
    /// [`Xact::set_read_only`].
    pub fn set_deferrable(&mut self, deferrable: bool) {
        self.deferrable = deferrable;
    }

    /// `transaction_read_only`: the current transaction's mode, or outside
    /// one the mode the next starts with.
    pub fn read_only(&self) -> bool {
        if self.block == Block::Default {
            self.default_read_only
        } else {
            self.read_only
        }
    }

    /// `transaction_deferrable`, as [`Xact::read_only`].
    pub fn deferrable(&self) -> bool {
        if self.block == Block::Default {
            self.default_deferrable
        } else {
            self.deferrable
        }
    }

    /// A snapshot was taken in this transaction: its isolation level,
    /// read-write mode and deferrability can no longer change.
    pub fn snapshot_taken(&self) -> bool {
        self.snapshot_taken
    }

    /// `default_transaction_read_only` and `default_transaction_deferrable`:
    /// the modes later transactions start with (the current one keeps its
    /// own, as in PostgreSQL).
    pub fn set_default_modes(&mut self, read_only: bool, deferrable: bool) {
        self.default_read_only = read_only;
        self.default_deferrable = deferrable;
    }

    /// This transaction's predicate-lock record (SERIALIZABLE, once its
    /// snapshot is taken; None when its read-only snapshot is safe).
    pub fn sxact(&self) -> Option<SxactId> {
        let id = self.sxact?;
        if self.read_only && self.shared.procarray().predicate().is_safe(id) {
            return None;
        }
        Some(id)
    }

    /// SET synchronous_commit: what this session's commits wait for
    /// (`None`: the server setting).
    pub fn set_synchronous_commit(&mut self, level: Option<SynchronousCommit>) {
        self.synchronous_commit = level;
    }

    /// SET default_transaction_isolation: the level of later transactions.
    pub fn set_default_isolation(&mut self, iso: IsolationLevel) {
        self.default_iso = iso;
    }

    /// The current transaction's isolation level (the default when none runs).
    pub fn isolation(&self) -> IsolationLevel {
        if self.block == Block::Default {
            self.default_iso
        } else {
            self.iso
        }
    }

    // ----- savepoints ----------------------------------------------------------

    /// SAVEPOINT name.
    pub fn savepoint(&mut self, name: &str) -> PgResult<()> {
        match self.block {
            Block::InProgress => {
                self.levels.push(Level::new(Some(name.to_string())));
                Ok(())
            }
            Block::Failed => Err(in_failed_block()),
            _ => Err(not_in_block("SAVEPOINT")),
        }
    }

    fn find_savepoint(&self, name: &str) -> Option<usize> {
        (1..self.levels.len())
            .rev()
            .find(|&i| self.levels[i].name.as_deref() == Some(name))
    }

    /// RELEASE [SAVEPOINT] name: the savepoint and all newer ones end; their
    /// xids become part of the enclosing level.
    pub fn release(&mut self, name: &str) -> PgResult<()> {
        match self.block {
            Block::InProgress => {}
            Block::Failed => return Err(in_failed_block()),
            _ => return Err(not_in_block("RELEASE SAVEPOINT")),
        }
        let Some(i) = self.find_savepoint(name) else {
            return Err(no_savepoint(name));
        };
        while self.levels.len() > i {
            let Some(level) = self.levels.pop() else {
                break;
            };
            if let Some(parent) = self.levels.last_mut() {
                parent.xids.extend(level.xids);
            }
        }
        Ok(())
    }

    /// ROLLBACK TO [SAVEPOINT] name: aborts the savepoint's subtree (clog
    /// "aborted", xids leave the running set) and opens it afresh. Also the
    /// way out of a failed block.
    pub fn rollback_to(&mut self, name: &str) -> PgResult<()> {
        match self.block {
            Block::InProgress | Block::Failed => {}
            _ => return Err(not_in_block("ROLLBACK TO SAVEPOINT")),
        }
        let Some(i) = self.find_savepoint(name) else {
            return Err(no_savepoint(name));
        };
        if self.levels.first().is_some_and(|l| l.aborted) {
            // The top level itself failed: only ROLLBACK gets out.
            return Err(no_savepoint(name));
        }
        let mut dead: Vec<TransactionId> = Vec::new();
        for level in self.levels.drain(i..) {
            if !level.aborted {
                dead.extend(level.xids);
            }
        }
        self.abort_subxids(&mut dead);
        self.levels.push(Level::new(Some(name.to_string())));
        self.block = Block::InProgress;
        Ok(())
    }

    /// BeginInternalSubTransaction: a subtransaction without a name for
    /// a PL/pgSQL block with an EXCEPTION clause, opened while a statement
    /// runs (in any block state but a failed one). Returns its depth, for
    /// [`Xact::release_internal`] / [`Xact::rollback_internal`].
    pub fn begin_internal(&mut self) -> PgResult<usize> {
        if self.block == Block::Failed {
            return Err(in_failed_block());
        }
        if self.levels.is_empty() {
            return Err(PgError::new(
                sqlstate::INVALID_TRANSACTION_STATE,
                "no transaction is in progress",
            ));
        }
        self.levels.push(Level::new(None));
        Ok(self.levels.len())
    }

    /// ReleaseCurrentSubTransaction: the internal subtransaction at
    /// `depth` (and anything left above it) ends; its xids join the
    /// enclosing level.
    pub fn release_internal(&mut self, depth: usize) {
        while self.levels.len() >= depth.max(2) {
            let Some(level) = self.levels.pop() else {
                break;
            };
            if let Some(parent) = self.levels.last_mut() {
                parent.xids.extend(level.xids);
            }
        }
    }

    /// RollbackAndReleaseCurrentSubTransaction: aborts the internal
    /// subtransaction at `depth` (and anything above it): clog "aborted",
    /// its xids leave the running set and the session's own set.
    pub fn rollback_internal(&mut self, depth: usize) {
        let from = depth.max(2) - 1;
        if self.levels.len() <= from {
            return;
        }
        let mut dead: Vec<TransactionId> = Vec::new();
        for level in self.levels.drain(from..) {
            if !level.aborted {
                dead.extend(level.xids);
            }
        }
        self.abort_subxids(&mut dead);
    }

    // ----- xids, command ids, snapshots --------------------------------------------

    /// The xid of the current (sub)transaction, assigning one on first write
    /// (and first any missing xid of its ancestors, top-down).
    pub fn assign_xid(&mut self) -> PgResult<TransactionId> {
        let xid = self.assign_up_to(self.levels.len())?;
        self.wrote_data = true;
        Ok(xid)
    }

    /// The top-level xid, assigning it if needed (txid_current()).
    pub fn top_xid_assign(&mut self) -> PgResult<TransactionId> {
        self.assign_up_to(1)
    }

    /// The top-level xid if one was assigned (INVALID otherwise).
    pub fn top_xid(&self) -> TransactionId {
        self.levels
            .first()
            .map_or(TransactionId::INVALID, |l| l.xid)
    }

    fn assign_up_to(&mut self, depth: usize) -> PgResult<TransactionId> {
        if self.block == Block::Failed {
            return Err(in_failed_block());
        }
        if self.levels.is_empty() || depth == 0 {
            return Err(PgError::new(
                sqlstate::INVALID_TRANSACTION_STATE,
                "no transaction is in progress",
            ));
        }
        if self.shared.in_recovery() {
            return Err(PgError::new(
                sqlstate::READ_ONLY_SQL_TRANSACTION,
                "cannot assign TransactionIds during recovery",
            ));
        }
        let pa = self.shared.procarray();
        let mut parent = TransactionId::INVALID;
        for level in self.levels.iter_mut().take(depth) {
            if !level.xid.is_valid() {
                level.xid = if parent.is_valid() {
                    pa.assign_subxid(self.proc, parent)
                } else {
                    pa.assign_xid(self.proc)
                };
                level.xids.push(level.xid);
                // Xids only grow, so pushing keeps `own_xids` sorted.
                self.own_xids.push(level.xid);
            }
            parent = level.xid;
        }
        if let (Some(id), Some(top)) = (self.sxact, self.levels.first()) {
            if top.xid.is_valid() && !self.sxact_xid_registered {
                self.sxact_xid_registered = true;
                pa.predicate().register_xid(id, top.xid);
            }
        }
        Ok(parent)
    }

    /// The own-transaction view for visibility checks.
    pub fn own(&self) -> OwnXact<'_> {
        OwnXact {
            xids: &self.own_xids,
            curcid: self.curcid,
        }
    }

    /// CommandCounterIncrement after a writing statement.
    pub fn command_counter_increment(&mut self) {
        // 2^32-1 commands in one transaction is not reachable in practice;
        // saturate rather than wrap.
        if self.curcid.0 < CommandId::INVALID.0 - 1 {
            self.curcid.0 += 1;
        }
    }

    /// The current command id.
    pub fn curcid(&self) -> CommandId {
        self.curcid
    }

    /// RegisterSnapshot for open cursors: while `on`, the proc's xmin (that
    /// of the oldest snapshot taken since it was last cleared, which is
    /// at most the cursor's) is not cleared at the end of a READ COMMITTED
    /// statement, so pruning keeps the row versions a cursor still reads.
    /// Cleared with the transaction.
    pub fn set_snapshot_registered(&mut self, on: bool) {
        self.snapshot_registered = on;
    }

    /// The snapshot for the statement starting now (RC: fresh or cached by
    /// completion count; RR: the transaction's first).
    pub fn statement_snapshot(&mut self) -> Arc<Snapshot> {
        if let Some(s) = &self.xact_snapshot {
            return Arc::clone(s);
        }
        let serializable = self.block != Block::Default
            && self.iso == IsolationLevel::Serializable
            && !self.shared.in_recovery();
        let pa = self.shared.procarray();
        // Read before the snapshot (txn::predicate, invariant 2).
        let seq = serializable.then(|| pa.predicate().last_commit_seq());
        let snap = pa.get_snapshot(self.proc, &mut self.snap_cache);
        if self.block != Block::Default {
            self.snapshot_taken = true;
            if self.iso.uses_transaction_snapshot() {
                self.xact_snapshot = Some(Arc::clone(&snap));
            }
        }
        if let Some(seq) = seq {
            let pid = pa.pid(self.proc);
            self.sxact = match pa.predicate().register(seq, self.read_only, pid) {
                Registered::Tracked(id) => Some(id),
                Registered::Safe => None,
            };
        }
        snap
    }

    /// True when [`checked_statement_snapshot`](Self::checked_statement_snapshot)
    /// may wait: the first snapshot of a SERIALIZABLE READ ONLY DEFERRABLE
    /// block on a primary.
    pub fn may_wait_for_safe_snapshot(&self) -> bool {
        self.xact_snapshot.is_none()
            && self.block != Block::Default
            && self.iso == IsolationLevel::Serializable
            && self.read_only
            && self.deferrable
            && !self.shared.in_recovery()
    }

    /// [`Xact::statement_snapshot`] with SERIALIZABLE's rules: refused
    /// during recovery (the level can only have come from
    /// `default_transaction_isolation`), and for READ ONLY DEFERRABLE the
    /// wait for a safe snapshot (GetSafeSnapshot): while read/write
    /// serializable transactions that overlap it run, it waits; if one of
    /// them makes it unsafe, it takes a new snapshot and waits again.
    /// `cancel` ends the wait with 57014.
    pub fn checked_statement_snapshot(&mut self, cancel: &AtomicBool) -> PgResult<Arc<Snapshot>> {
        if self.xact_snapshot.is_some() || self.block == Block::Default {
            return Ok(self.statement_snapshot());
        }
        if self.iso != IsolationLevel::Serializable {
            return Ok(self.statement_snapshot());
        }
        if self.shared.in_recovery() {
            return Err(serializable_default_in_hot_standby());
        }
        if !(self.read_only && self.deferrable) {
            return Ok(self.statement_snapshot());
        }
        loop {
            let snap = self.statement_snapshot();
            let Some(id) = self.sxact else {
                return Ok(snap);
            };
            let pm = self.shared.procarray().predicate();
            let safety = run_blocking(|| loop {
                match pm.wait_safe(id, Duration::from_millis(100)) {
                    SnapshotSafety::Pending => {
                        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                            return None;
                        }
                    }
                    s => return Some(s),
                }
            });
            match safety {
                None => {
                    return Err(PgError::new(
                        sqlstate::QUERY_CANCELED,
                        "canceling statement due to user request",
                    ))
                }
                Some(SnapshotSafety::Safe) => return Ok(snap),
                Some(_) => {
                    // Unsafe: start over with a new snapshot.
                    pm.release(id, false);
                    self.sxact = None;
                    self.xact_snapshot = None;
                }
            }
        }
    }

    /// The snapshot of the current statement (RC) or transaction (RR), if
    /// one was taken.
    pub fn current_snapshot(&self) -> Option<Arc<Snapshot>> {
        self.xact_snapshot.clone().or_else(|| {
            if self.snapshot_taken {
                self.snap_cache.clone()
            } else {
                None
            }
        })
    }

    /// XactLockTableWait: blocks until `xid` (or the transaction it belongs
    /// to) is no longer running. 40P01 on deadlock, 57014 on cancel or
    /// statement timeout, 55P03 on lock timeout (`limits`). Safe to call
    /// from a tokio worker (uses `block_in_place`).
    pub fn wait_for_xid(
        &self,
        xid: TransactionId,
        cancel: &AtomicBool,
        limits: WaitLimits,
    ) -> PgResult<()> {
        let pa = self.shared.procarray();
        let timeout = self.shared.deadlock_timeout();
        run_blocking(|| pa.wait_for_xid(self.proc, xid, timeout, cancel, limits))
    }

    // ----- internals ------------------------------------------------------------

    fn start_transaction(&mut self) {
        self.settle();
        self.levels.clear();
        self.levels.push(Level::new(None));
        self.own_xids.clear();
        self.curcid = CommandId::FIRST;
        self.iso = self.default_iso;
        self.xact_snapshot = None;
        self.snapshot_taken = false;
        self.read_only = self.default_read_only;
        self.deferrable = self.default_deferrable;
    }

    fn end_transaction_state(&mut self) {
        // A record still here was not committed: it ends rolled back.
        self.sxact_end(false);
        self.read_only = false;
        self.deferrable = false;
        self.wrote_data = false;
        self.levels.clear();
        self.own_xids.clear();
        self.curcid = CommandId::FIRST;
        self.xact_snapshot = None;
        self.snapshot_taken = false;
        self.snapshot_registered = false;
        self.block = Block::Default;
    }

    /// All live xids of the tree: (top, subxids, newest).
    fn live_xids(&self) -> (TransactionId, Vec<TransactionId>) {
        let top = self.top_xid();
        let subs = self
            .levels
            .iter()
            .filter(|l| !l.aborted)
            .flat_map(|l| l.xids.iter().copied())
            .filter(|x| *x != top)
            .collect();
        (top, subs)
    }

    /// CommitTransaction.
    fn commit_transaction(&mut self) -> PgResult<()> {
        if let Some(id) = self.sxact {
            if let Err(e) = self.shared.procarray().predicate().pre_commit(id) {
                self.abort_transaction();
                return Err(e);
            }
        }
        let (top, subs) = self.live_xids();
        let shared = Arc::clone(&self.shared);
        let level = if self.wrote_data {
            self.synchronous_commit
                .or_else(|| shared.xlog().map(|x| x.synchronous_commit()))
        } else {
            Some(SynchronousCommit::Off)
        };
        // A serializable transaction is marked committed for the predicate
        // lock manager only once the procarray shows it committed, so it
        // takes the path that ends its proc before returning.
        if self.async_commit_wait && top.is_valid() && self.sxact.is_none() {
            if let (Some(_), Some(l)) = (shared.xlog(), level) {
                if l.waits_locally() {
                    return self.commit_or_join(top, subs, l);
                }
            }
        }
        let end = TreeEnd::Commit {
            sync: level.map(SynchronousCommit::waits_locally),
        };
        if let Err(e) = end_transaction_tree(
            &*shared,
            Some(Finished::Proc(self.proc)),
            top,
            &subs,
            end,
            || {},
        ) {
            self.abort_transaction();
            return Err(e);
        }
        self.sxact_end(true);
        self.end_transaction_state();
        if top.is_valid() {
            if let Some(l) = level {
                // Visible already (pending DDL commits this way): only the
                // reply waits for the standbys.
                self.wait_for_sync_standbys_at(l);
            }
        }
        Ok(())
    }

    /// The standby wait a commit at `level` needs, if standbys are named.
    fn syncrep_mode(&self, level: SynchronousCommit) -> Option<crate::syncrep::SyncRepMode> {
        let mode = crate::syncrep::SyncRepMode::for_level(level)?;
        (self.can_await && self.shared.syncrep()?.defined()).then_some(mode)
    }

    /// After a step whose WAL was flushed on this thread and that is
    /// already visible (PREPARE TRANSACTION, COMMIT / ROLLBACK PREPARED, a
    /// commit with pending DDL): the reply waits for the synchronous
    /// standbys to confirm WAL up to the flushed position, as `level`
    /// asks. Nothing without standbys to wait for.
    fn wait_for_sync_standbys_at(&mut self, level: SynchronousCommit) {
        let Some(mode) = self.syncrep_mode(level) else {
            return;
        };
        let Some(lsn) = self
            .shared
            .xlog()
            .and_then(|x| x.writer())
            .map(|w| w.flushed_lsn())
        else {
            return;
        };
        self.syncrep = Some(SyncRepPending {
            lsn,
            mode,
            end_proc: None,
            cancelled: Arc::default(),
        });
    }

    /// PREPARE TRANSACTION and COMMIT / ROLLBACK PREPARED wait for the
    /// synchronous standbys too (the session's `synchronous_commit`).
    pub fn wait_for_sync_standbys(&mut self) {
        let level = self
            .synchronous_commit
            .or_else(|| self.shared.xlog().map(|x| x.synchronous_commit()));
        if let Some(l) = level {
            self.wait_for_sync_standbys_at(l);
        }
    }

    /// Lets commits wait for synchronous standbys: only for a caller that
    /// awaits [`Xact::commit_wait`] and calls [`Xact::finish_commit`] after
    /// every call that may commit (the session loop).
    pub fn set_can_await(&mut self, on: bool) {
        self.can_await = on;
    }

    /// True while the session waits for synchronous standbys
    /// (`pg_stat_activity` shows `IPC` / `SyncRep`).
    pub fn waits_for_sync_standbys(&self) -> bool {
        self.pending.is_none() && self.syncrep.is_some()
    }

    /// The WARNING of a cancelled standby wait, once.
    pub fn take_wait_notice(&mut self) -> Option<PgError> {
        self.wait_notice.take()
    }

    /// A synchronous commit for a session that can await: the record, then
    /// either the flush on this thread (leading a round, or already
    /// durable) and the rest of [`end_transaction_tree`], or — when a group
    /// flush is under way — a [`PendingCommit`] the session finishes after
    /// awaiting [`Xact::commit_wait`]. The session's own state ends either
    /// way; only the proc and the clog wait.
    fn commit_or_join(
        &mut self,
        top: TransactionId,
        subs: Vec<TransactionId>,
        level: SynchronousCommit,
    ) -> PgResult<()> {
        let shared = Arc::clone(&self.shared);
        let Some(x) = shared.xlog() else {
            return Ok(());
        };
        let mode = self.syncrep_mode(level);
        let delay = x.delay_checkpoint();
        match x.log_commit_or_join(top, &subs) {
            Err(e) => {
                drop(delay);
                self.abort_transaction();
                Err(e)
            }
            Ok((end, None)) => {
                // With a standby wait the proc ends after it (the commit
                // stays invisible until then); the clog and the
                // checkpoint delay are done with now.
                let who = match mode {
                    None => Some(Finished::Proc(self.proc)),
                    Some(_) => None,
                };
                apply_tree_end(&*shared, who, top, &subs, true, || {}, Some(delay));
                if let Some(mode) = mode {
                    self.syncrep = Some(SyncRepPending {
                        lsn: end,
                        mode,
                        end_proc: Some(subs.iter().copied().fold(top, TransactionId::max)),
                        cancelled: Arc::default(),
                    });
                }
                self.end_transaction_state();
                Ok(())
            }
            Ok((end, Some(target))) => {
                self.pending = Some(PendingCommit {
                    top,
                    subs,
                    target,
                    syncrep: mode.map(|m| (end, m)),
                    delay,
                });
                self.end_transaction_state();
                Ok(())
            }
        }
    }

    /// Lets commits await their group flush (see [`PendingCommit`]): only
    /// a caller that awaits [`Xact::commit_wait`] and then calls
    /// [`Xact::finish_commit`] after every call that may commit may set it
    /// (the session loop); others would leave commits unfinished until
    /// their next statement.
    pub fn set_async_commit_wait(&mut self, on: bool) {
        self.async_commit_wait = on;
    }

    /// What the last call left to wait for: the group flush a commit
    /// joined, or the synchronous standbys (ended early by `cancel`, a
    /// CancelRequest's flag). Await it, then call [`Xact::finish_commit`];
    /// repeat until this returns None (a flush may be followed by a
    /// standby wait).
    pub fn commit_wait(&self, cancel: &Arc<std::sync::atomic::AtomicBool>) -> Option<CommitWait> {
        if let Some(p) = self.pending.as_ref() {
            let x = self.shared.xlog()?;
            let w = x.wait_flushed(p.target);
            // The error, if any, comes back from `finish_commit`.
            return Some(Box::pin(async move {
                let _ = w.await;
            }));
        }
        let w = self.syncrep.as_ref()?;
        let queued = self.shared.syncrep().and_then(|r| r.wait(w.lsn, w.mode));
        let cancel = cancel.clone();
        let cancelled = w.cancelled.clone();
        Some(Box::pin(async move {
            if let Some(q) = queued {
                if q.wait(cancel).await == crate::syncrep::SyncRepOutcome::Cancelled {
                    cancelled.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }))
    }

    /// Finishes a commit that joined a group flush: waits (blocking, only
    /// if the caller did not await [`Xact::commit_wait`]) until its record
    /// is durable, then sets the clog and ends the proc. If the flush
    /// failed the transaction ends aborted and the error is returned, as
    /// when COMMIT itself fails to flush. Nothing to do without a pending
    /// commit.
    pub fn finish_commit(&mut self) -> PgResult<()> {
        let shared = Arc::clone(&self.shared);
        let Some(p) = self.pending.take() else {
            if let Some(w) = self.syncrep.take() {
                // The standbys confirmed, or the wait was cancelled (the
                // commit stands either way): the transaction ends for
                // everyone now.
                if let Some(latest) = w.end_proc {
                    shared
                        .procarray()
                        .end_transaction(Finished::Proc(self.proc), latest);
                }
                if w.cancelled.load(std::sync::atomic::Ordering::Relaxed) {
                    self.wait_notice = Some(syncrep_cancel_warning());
                }
            }
            return Ok(());
        };
        let flushed = match shared.xlog() {
            Some(x) => x.flush(p.target),
            None => Ok(()),
        };
        let ok = flushed.is_ok();
        let rep = p.syncrep.filter(|_| ok);
        let who = match rep {
            None => Some(Finished::Proc(self.proc)),
            Some(_) => None,
        };
        apply_tree_end(&*shared, who, p.top, &p.subs, ok, || {}, Some(p.delay));
        if let Some((lsn, mode)) = rep {
            self.syncrep = Some(SyncRepPending {
                lsn,
                mode,
                end_proc: Some(p.subs.iter().copied().fold(p.top, TransactionId::max)),
                cancelled: Arc::default(),
            });
        }
        flushed
    }

    /// A pending commit left by a caller that did not finish it: finish it
    /// now, before anything else this session does.
    fn settle(&mut self) {
        while self.pending.is_some() || self.syncrep.is_some() {
            if let Err(e) = self.finish_commit() {
                tracing::warn!("commit failed after its group flush: {}", e.message);
            }
        }
        self.wait_notice = None;
    }

    /// Ends the predicate-lock record, if any: ReleasePredicateLocks.
    fn sxact_end(&mut self, commit: bool) {
        if let Some(id) = self.sxact.take() {
            self.shared.procarray().predicate().release(id, commit);
        }
        self.sxact_xid_registered = false;
    }

    /// AbortTransaction + CleanupTransaction.
    fn abort_transaction(&mut self) {
        if self.levels.first().is_some_and(|l| l.aborted) {
            // Already aborted when the block failed.
            self.end_transaction_state();
            return;
        }
        self.abort_top_level();
        self.end_transaction_state();
    }

    /// Ends the whole tree as aborted (record, clog, procarray).
    fn abort_top_level(&mut self) {
        self.sxact_end(false);
        let (top, subs) = self.live_xids();
        // An abort never fails (a record it cannot write is logged).
        let _ = end_transaction_tree(
            &*self.shared,
            Some(Finished::Proc(self.proc)),
            top,
            &subs,
            TreeEnd::Abort,
            || {},
        );
    }

    /// An error inside an explicit block: abort the current subtransaction,
    /// or the whole transaction at top level, and wait for ROLLBACK.
    fn fail_block(&mut self) {
        self.block = Block::Failed;
        self.xact_snapshot_release_if_top();
        if self.levels.len() > 1 {
            let mut dead = match self.levels.last_mut() {
                Some(l) if !l.aborted => {
                    l.aborted = true;
                    std::mem::take(&mut l.xids)
                }
                _ => Vec::new(),
            };
            self.abort_subxids(&mut dead);
        } else {
            self.abort_top_level();
            self.own_xids.clear();
            if let Some(l) = self.levels.first_mut() {
                l.aborted = true;
                l.xids.clear();
            }
        }
    }

    /// A failed top-level transaction holds no snapshot.
    fn xact_snapshot_release_if_top(&mut self) {
        if self.levels.len() <= 1 {
            self.xact_snapshot = None;
        }
    }

    /// AbortSubTransaction for a set of subxids: clog aborted, out of the
    /// proc's cache, the subtrans map and `own_xids`.
    fn abort_subxids(&mut self, dead: &mut [TransactionId]) {
        if dead.is_empty() {
            return;
        }
        dead.sort_unstable();
        let latest = dead[dead.len() - 1];
        // Record and clog as for a whole tree; the proc stays in its
        // transaction, so instead of a completion its cache loses them.
        let _ = end_transaction_tree(
            &*self.shared,
            None,
            dead[0],
            &dead[1..],
            TreeEnd::Abort,
            || {},
        );
        self.shared
            .procarray()
            .remove_subxids(self.proc, dead, latest);
        self.own_xids.retain(|x| dead.binary_search(x).is_err());
    }

    /// End of a statement that leaves the transaction open: a READ
    /// COMMITTED transaction needs no snapshot between statements, so its
    /// xmin stops holding back horizons (SnapshotResetXmin).
    fn end_of_statement_snapshot(&mut self) {
        if self.xact_snapshot.is_none() && !self.snapshot_registered {
            self.shared.procarray().clear_xmin(self.proc);
        }
    }
}

impl Drop for Xact {
    fn drop(&mut self) {
        self.settle();
        if self.block != Block::Default {
            self.abort_transaction();
        }
        self.shared.procarray().disconnect(self.proc);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use pgtypes::testutil::wait_until;

    struct TestShared {
        clog: Clog,
        procarray: ProcArray,
        max_connections: usize,
        deadlock_timeout: Duration,
        _dir: tempfile::TempDir,
    }

    impl XactShared for TestShared {
        fn clog(&self) -> &Clog {
            &self.clog
        }
        fn procarray(&self) -> &ProcArray {
            &self.procarray
        }
        fn max_connections(&self) -> usize {
            self.max_connections
        }
        fn deadlock_timeout(&self) -> Duration {
            self.deadlock_timeout
        }
        fn in_recovery(&self) -> bool {
            false
        }
    }

    fn shared(max_connections: usize) -> Arc<TestShared> {
        let dir = tempfile::tempdir().unwrap();
        Arc::new(TestShared {
            clog: Clog::open(dir.path()).unwrap(),
            procarray: ProcArray::new(max_connections + 2, TransactionId::FIRST_NORMAL),
            max_connections,
            deadlock_timeout: Duration::from_millis(50),
            _dir: dir,
        })
    }

    fn session(sh: &Arc<TestShared>) -> Xact {
        Xact::with_shared(sh.clone()).unwrap()
    }

    #[test]
    fn too_many_clients() {
        let sh = shared(2);
        let a = session(&sh);
        let _b = session(&sh);
        let err = Xact::with_shared(sh.clone()).err().unwrap();
        assert_eq!(err.code, "53300");
        assert_eq!(err.severity, pgtypes::error::Severity::Fatal);
        assert_eq!(err.message, "sorry, too many clients already");
        drop(a);
        let _c = session(&sh);
    }

    #[test]
    fn implicit_statement_commits_or_aborts() {
        let sh = shared(4);
        let mut s = session(&sh);
        s.start_statement();
        assert_eq!(s.status(), TxStatus::Idle);
        let x = s.assign_xid().unwrap();
        assert!(s.own().is_current(x));
        s.finish_statement(true).unwrap();
        assert_eq!(sh.clog.get_status(x), XidStatus::Committed);
        assert!(!sh.procarray.xid_is_running(x));
        assert!(s.own().xids.is_empty());

        s.start_statement();
        let y = s.assign_xid().unwrap();
        s.finish_statement(false).unwrap();
        assert_eq!(sh.clog.get_status(y), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(y));

        // A read-only statement bumps nothing.
        let count = sh.procarray.xact_completion_count();
        s.start_statement();
        let _ = s.statement_snapshot();
        s.finish_statement(true).unwrap();
        assert_eq!(sh.procarray.xact_completion_count(), count);
        assert!(s.assign_xid().is_err(), "no transaction, no xid");
    }

    #[test]
    fn explicit_block_and_warnings() {
        let sh = shared(4);
        let mut s = session(&sh);
        // COMMIT / ROLLBACK outside a block warn.
        s.start_statement();
        let (tag, warn) = s.commit().unwrap();
        assert_eq!(tag, "COMMIT");
        assert_eq!(warn.unwrap().code, "25P01");
        s.finish_statement(true).unwrap();
        s.start_statement();
        assert_eq!(
            s.rollback().unwrap().message,
            "there is no transaction in progress"
        );
        s.finish_statement(true).unwrap();
        assert_eq!(s.status(), TxStatus::Idle);

        // BEGIN (as a statement) then a write, then COMMIT.
        s.start_statement();
        assert!(s.begin(None).is_none());
        s.finish_statement(true).unwrap();
        assert_eq!(s.status(), TxStatus::InBlock);
        let w = s.begin(None).unwrap();
        assert_eq!(
            (w.code, w.message.as_str()),
            ("25001", "there is already a transaction in progress")
        );
        s.start_statement();
        let x = s.assign_xid().unwrap();
        assert_eq!(s.curcid(), CommandId(0));
        s.command_counter_increment();
        s.finish_statement(true).unwrap();
        assert_eq!(s.curcid(), CommandId(1));
        assert!(
            sh.procarray.xid_is_running(x),
            "block keeps the xid running"
        );
        assert_eq!(s.status(), TxStatus::InBlock);
        s.start_statement();
        assert_eq!(s.commit().unwrap(), ("COMMIT", None));
        s.finish_statement(true).unwrap();
        assert_eq!(sh.clog.get_status(x), XidStatus::Committed);
        assert_eq!(s.status(), TxStatus::Idle);
        assert_eq!(s.curcid(), CommandId(0));
    }

    #[test]
    fn failed_block_rolls_back_on_commit() {
        let sh = shared(4);
        let mut s = session(&sh);
        s.begin(None);
        s.start_statement();
        let x = s.assign_xid().unwrap();
        s.finish_statement(false).unwrap();
        assert_eq!(s.status(), TxStatus::Failed);
        // Aborted at once: waiters need not wait for ROLLBACK.
        assert_eq!(sh.clog.get_status(x), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(x));
        assert_eq!(s.assign_xid().unwrap_err().code, "25P02");
        assert_eq!(s.savepoint("a").unwrap_err().code, "25P02");
        assert_eq!(s.commit().unwrap(), ("ROLLBACK", None));
        assert_eq!(s.status(), TxStatus::Idle);
        // ROLLBACK of a failed block: no warning.
        s.begin(None);
        s.finish_statement(false).unwrap();
        assert!(s.rollback().is_none());
        assert_eq!(s.status(), TxStatus::Idle);
    }

    #[test]
    fn implicit_multi_statement_block() {
        let sh = shared(4);
        let mut s = session(&sh);
        s.begin_implicit_block();
        s.start_statement();
        let x = s.assign_xid().unwrap();
        s.finish_statement(true).unwrap();
        s.start_statement();
        assert_eq!(
            s.assign_xid().unwrap(),
            x,
            "one transaction for the whole Query"
        );
        s.finish_statement(true).unwrap();
        assert!(sh.procarray.xid_is_running(x));
        s.end_implicit_block(true).unwrap();
        assert_eq!(sh.clog.get_status(x), XidStatus::Committed);

        // A failure aborts the implicit transaction.
        s.begin_implicit_block();
        s.start_statement();
        let y = s.assign_xid().unwrap();
        s.finish_statement(true).unwrap();
        s.start_statement();
        s.finish_statement(false).unwrap();
        s.end_implicit_block(false).unwrap();
        assert_eq!(sh.clog.get_status(y), XidStatus::Aborted);
        assert_eq!(s.status(), TxStatus::Idle);

        // BEGIN inside a multi-statement Query turns it into a real block.
        s.begin_implicit_block();
        s.start_statement();
        assert!(s.begin(None).is_none());
        s.finish_statement(true).unwrap();
        s.start_statement();
        let z = s.assign_xid().unwrap();
        s.finish_statement(true).unwrap();
        s.end_implicit_block(true).unwrap();
        assert_eq!(s.status(), TxStatus::InBlock);
        assert!(sh.procarray.xid_is_running(z));
        s.rollback();
        assert_eq!(sh.clog.get_status(z), XidStatus::Aborted);

        // SAVEPOINT is not allowed in an implicit block.
        s.begin_implicit_block();
        s.start_statement();
        let e = s.savepoint("a").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("25P01", "SAVEPOINT can only be used in transaction blocks")
        );
        s.finish_statement(false).unwrap();
        s.end_implicit_block(false).unwrap();
    }

    #[test]
    fn savepoints_release_and_rollback_to() {
        let sh = shared(4);
        let mut s = session(&sh);
        assert_eq!(s.savepoint("a").unwrap_err().code, "25P01");
        assert_eq!(
            s.release("a").unwrap_err().message,
            "RELEASE SAVEPOINT can only be used in transaction blocks"
        );
        assert_eq!(
            s.rollback_to("a").unwrap_err().message,
            "ROLLBACK TO SAVEPOINT can only be used in transaction blocks"
        );
        s.begin(None);
        s.savepoint("a").unwrap();
        // Lazy: the first write in a savepoint assigns the top xid first.
        let a1 = s.assign_xid().unwrap();
        let top = s.top_xid();
        assert!(top.is_valid() && top < a1);
        assert_eq!(sh.procarray.subtrans().parent(a1), Some(top));
        s.savepoint("b").unwrap();
        let b1 = s.assign_xid().unwrap();
        assert_eq!(sh.procarray.subtrans().parent(b1), Some(a1));
        assert_eq!(s.own().xids, &[top, a1, b1]);
        // RELEASE b: b1 now belongs to a.
        s.release("b").unwrap();
        assert_eq!(s.assign_xid().unwrap(), a1);
        let e = s.release("b").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("3B001", "savepoint \"b\" does not exist")
        );
        // ROLLBACK TO a aborts a1 and the released b1, keeps the savepoint.
        s.rollback_to("a").unwrap();
        assert_eq!(sh.clog.get_status(a1), XidStatus::Aborted);
        assert_eq!(sh.clog.get_status(b1), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(b1));
        assert!(sh.procarray.xid_is_running(top));
        assert_eq!(s.own().xids, &[top]);
        let a2 = s.assign_xid().unwrap();
        assert!(a2 > b1);
        s.rollback_to("a").unwrap();
        s.rollback_to("a").unwrap();
        // An error inside a savepoint aborts only it; ROLLBACK TO recovers.
        s.savepoint("c").unwrap();
        let c1 = s.assign_xid().unwrap();
        s.finish_statement(false).unwrap();
        assert_eq!(s.status(), TxStatus::Failed);
        assert_eq!(sh.clog.get_status(c1), XidStatus::Aborted);
        assert!(sh.procarray.xid_is_running(top));
        assert_eq!(s.rollback_to("nope").unwrap_err().code, "3B001");
        assert_eq!(s.status(), TxStatus::Failed);
        s.rollback_to("c").unwrap();
        assert_eq!(s.status(), TxStatus::InBlock);
        let c2 = s.assign_xid().unwrap();
        assert_eq!(s.commit().unwrap(), ("COMMIT", None));
        assert_eq!(sh.clog.get_status(top), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(c2), XidStatus::Committed);
        assert_eq!(sh.clog.get_status(a2), XidStatus::Aborted);
        assert_eq!(sh.clog.get_status(c1), XidStatus::Aborted);
    }

    #[test]
    fn many_savepoints_overflow() {
        let sh = shared(4);
        let mut s = session(&sh);
        let mut other = session(&sh);
        s.begin(None);
        let mut subs = Vec::new();
        for i in 0..80 {
            s.savepoint(&format!("s{i}")).unwrap();
            subs.push(s.assign_xid().unwrap());
        }
        s.rollback_to("s70").unwrap();
        other.start_statement();
        let snap = other.statement_snapshot();
        other.finish_statement(true).unwrap();
        assert!(snap.suboverflowed);
        let parent = |x| sh.procarray.subtrans().parent(x);
        for &x in &subs[..70] {
            assert!(snap.xid_in_snapshot(x, &parent));
            assert!(sh.procarray.xid_is_running(x));
        }
        for &x in &subs[70..] {
            assert!(!sh.procarray.xid_is_running(x));
            assert_eq!(sh.clog.get_status(x), XidStatus::Aborted);
        }
        s.commit().unwrap();
        assert_eq!(sh.clog.get_status(subs[69]), XidStatus::Committed);
    }

    #[test]
    fn read_committed_and_repeatable_read_snapshots() {
        let sh = shared(4);
        let mut w = session(&sh);
        let mut rc = session(&sh);
        let mut rr = session(&sh);
        rr.begin(Some(IsolationLevel::RepeatableRead));
        assert_eq!(rr.isolation(), IsolationLevel::RepeatableRead);
        rc.begin(None);
        let rr1 = rr.statement_snapshot();
        let rc1 = rc.statement_snapshot();
        rr.set_isolation(IsolationLevel::RepeatableRead).unwrap();
        let e = rr.set_isolation(IsolationLevel::ReadCommitted).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                "25001",
                "SET TRANSACTION ISOLATION LEVEL must be called before any query"
            )
        );
        w.start_statement();
        let x = w.assign_xid().unwrap();
        w.finish_statement(true).unwrap();
        let parent = |_| None;
        rc.finish_statement(true).unwrap();
        let rc2 = rc.statement_snapshot();
        let rr2 = rr.statement_snapshot();
        assert!(rc1.xid_in_snapshot(x, &parent));
        assert!(
            !rc2.xid_in_snapshot(x, &parent),
            "RC sees the commit in its next statement"
        );
        assert!(Arc::ptr_eq(&rr1, &rr2), "RR keeps its first snapshot");
        assert!(rr2.xid_in_snapshot(x, &parent));
        assert_eq!(rr.current_snapshot().unwrap(), rr2);
        rr.commit().unwrap();
        assert_eq!(rr.isolation(), IsolationLevel::ReadCommitted);
        rc.commit().unwrap();
        // An idle session re-uses its snapshot until something completes.
        let before = sh.procarray.stats();
        rc.start_statement();
        let _ = rc.statement_snapshot();
        rc.finish_statement(true).unwrap();
        rc.start_statement();
        let _ = rc.statement_snapshot();
        rc.finish_statement(true).unwrap();
        let after = sh.procarray.stats();
        // Nothing with an xid completed since rc2: both are reused.
        assert_eq!(after.snapshots_reused - before.snapshots_reused, 2);
        assert_eq!(after.snapshots_computed, before.snapshots_computed);
    }

    #[test]
    fn wait_for_commit_and_cancel() {
        let sh = shared(4);
        let mut holder = session(&sh);
        let waiter = session(&sh);
        holder.begin(None);
        let x = holder.assign_xid().unwrap();
        let cancel = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let t = sc.spawn(|| waiter.wait_for_xid(x, &cancel, WaitLimits::NONE));
            wait_until("waiter registered", || {
                sh.procarray.lmgr().waiting_for(waiter.proc()) == Some(x)
            });
            holder.commit().unwrap();
            assert!(t.join().unwrap().is_ok());
        });
        // Cancel.
        holder.begin(None);
        let y = holder.assign_xid().unwrap();
        std::thread::scope(|sc| {
            let t = sc.spawn(|| waiter.wait_for_xid(y, &cancel, WaitLimits::NONE));
            wait_until("waiter registered", || {
                sh.procarray.lmgr().waiting_for(waiter.proc()) == Some(y)
            });
            cancel.store(true, Ordering::Relaxed);
            sh.procarray.lmgr().interrupt(waiter.proc());
            assert_eq!(t.join().unwrap().unwrap_err().code, "57014");
        });
        cancel.store(false, Ordering::Relaxed);
        // Waiting on a subxid ends when it is rolled back.
        holder.savepoint("s").unwrap();
        let sub = holder.assign_xid().unwrap();
        std::thread::scope(|sc| {
            let t = sc.spawn(|| waiter.wait_for_xid(sub, &cancel, WaitLimits::NONE));
            wait_until("waiter registered", || {
                sh.procarray.lmgr().waiting_for(waiter.proc()) == Some(sub)
            });
            holder.rollback_to("s").unwrap();
            assert!(t.join().unwrap().is_ok());
        });
        assert!(sh.procarray.xid_is_running(y));
        holder.rollback();
        // Not running: returns at once.
        waiter.wait_for_xid(y, &cancel, WaitLimits::NONE).unwrap();
    }

    #[test]
    fn a_wait_ends_at_lock_timeout_or_statement_timeout() {
        let sh = shared(4);
        let mut holder = session(&sh);
        let waiter = session(&sh);
        holder.begin(None);
        let x = holder.assign_xid().unwrap();
        let cancel = AtomicBool::new(false);
        let lock = WaitLimits {
            statement: None,
            lock_timeout: Some(Duration::from_millis(20)),
        };
        let e = waiter.wait_for_xid(x, &cancel, lock).unwrap_err();
        assert_eq!(e.code, "55P03");
        assert_eq!(e.message, "canceling statement due to lock timeout");
        let stmt = WaitLimits {
            statement: Some(std::time::Instant::now() + Duration::from_millis(20)),
            lock_timeout: Some(Duration::from_secs(3600)),
        };
        let e = waiter.wait_for_xid(x, &cancel, stmt).unwrap_err();
        assert_eq!(e.code, "57014");
        assert_eq!(e.message, "canceling statement due to statement timeout");
        // The waiter left no edge behind, and the holder is unaffected.
        assert_eq!(sh.procarray.lmgr().waiting_for(waiter.proc()), None);
        assert!(sh.procarray.xid_is_running(x));
        holder.commit().unwrap();
        waiter.wait_for_xid(x, &cancel, lock).unwrap();
    }

    #[test]
    fn deadlock_detected_on_one_side() {
        let sh = shared(4);
        let mut a = session(&sh);
        let mut b = session(&sh);
        a.set_pid(1001);
        b.set_pid(1002);
        a.begin(None);
        b.begin(None);
        let xa = a.assign_xid().unwrap();
        let xb = b.assign_xid().unwrap();
        let cancel_a = AtomicBool::new(false);
        let cancel_b = AtomicBool::new(false);
        let (ra, rb) = std::thread::scope(|sc| {
            let ta = sc.spawn(|| {
                let r = a.wait_for_xid(xb, &cancel_a, WaitLimits::NONE);
                // The side that fails aborts, releasing the other.
                if r.is_err() {
                    a.finish_statement(false).unwrap();
                    a.rollback();
                }
                r
            });
            let tb = sc.spawn(|| {
                let r = b.wait_for_xid(xa, &cancel_b, WaitLimits::NONE);
                if r.is_err() {
                    b.finish_statement(false).unwrap();
                    b.rollback();
                }
                r
            });
            (ta.join().unwrap(), tb.join().unwrap())
        });
        let errs: Vec<_> = [&ra, &rb]
            .iter()
            .filter_map(|r| r.as_ref().err().cloned())
            .collect();
        assert_eq!(errs.len(), 1, "exactly one side gets 40P01: {ra:?} {rb:?}");
        let e = &errs[0];
        assert_eq!((e.code, e.message.as_str()), ("40P01", "deadlock detected"));
        let detail = e.detail.clone().unwrap();
        assert!(
            detail.contains("waits for ShareLock on transaction"),
            "{detail}"
        );
        assert!(
            detail.contains("1001") && detail.contains("1002"),
            "{detail}"
        );
    }

    #[test]
    fn three_way_deadlock() {
        let sh = shared(4);
        let mut s: Vec<Xact> = (0..3).map(|_| session(&sh)).collect();
        let xs: Vec<_> = s
            .iter_mut()
            .map(|x| {
                x.begin(None);
                x.assign_xid().unwrap()
            })
            .collect();
        let cancel = [
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        ];
        let results: Vec<PgResult<()>> = std::thread::scope(|sc| {
            let handles: Vec<_> = s
                .iter_mut()
                .enumerate()
                .map(|(i, x)| {
                    let target = xs[(i + 1) % 3];
                    let c = &cancel[i];
                    sc.spawn(move || {
                        let r = x.wait_for_xid(target, c, WaitLimits::NONE);
                        if r.is_err() {
                            x.rollback();
                        } else {
                            x.commit().unwrap();
                        }
                        r
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(
            results.iter().filter(|r| r.is_err()).count(),
            1,
            "{results:?}"
        );
    }

    #[test]
    fn drop_aborts_and_frees_slot() {
        let sh = shared(1);
        let mut s = session(&sh);
        s.begin(None);
        let x = s.assign_xid().unwrap();
        drop(s);
        assert_eq!(sh.clog.get_status(x), XidStatus::Aborted);
        assert!(!sh.procarray.xid_is_running(x));
        assert_eq!(sh.procarray.num_procs(), 0);
        let _again = session(&sh);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wait_inside_tokio_does_not_block_runtime() {
        let sh = shared(4);
        let mut holder = session(&sh);
        holder.begin(None);
        let x = holder.assign_xid().unwrap();
        let waiter = session(&sh);
        let wp = waiter.proc();
        let task = tokio::spawn(async move {
            let cancel = AtomicBool::new(false);
            waiter.wait_for_xid(x, &cancel, WaitLimits::NONE)
        });
        // This task keeps running while the other one blocks.
        let sh2 = sh.clone();
        tokio::task::spawn(async move {
            while sh2.procarray.lmgr().waiting_for(wp).is_none() {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        holder.commit().unwrap();
        task.await.unwrap().unwrap();
    }
}
