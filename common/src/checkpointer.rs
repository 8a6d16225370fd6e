//! # Checkpoints (PostgreSQL's CreateCheckPoint and the checkpointer process)
//!
//! A checkpoint bounds crash recovery: after it, replay may start at its
//! *redo point* because every change logged before that point is on disk.
//!
//! ```text
//!  1. redo = insert position        (XLog::advance_redo_ptr, redo-point lock X)
//!  2. wait for commits between their  (DELAY_CHKPT_START: their clog bits
//!     record and their clog update    must be in the clog we flush)
//!     flush WAL to redo, then clog  (an async commit's clog bit never
//!                                    reaches disk before its commit record)
//!  3. write every dirty buffer      (WAL first, via the bufmgr hook), fsync
//!                                    relation files and base/
//!  4. CHECKPOINT record             (redo, next_xid, oldest active xid,
//!                                    next OID, online | shutdown)
//!  5. flush WAL to its end
//!  6. pg_control ← checkpoint LSN, redo, state   (temp + fsync + rename)
//!  7. remove segments before redo − wal_keep_size (and before any
//!     replication slot's restart LSN: [`storage::xloginsert::XLog::set_slot_keep_lsn`])
//! ```
//!
//! Why step 3 covers every change before `redo`: heap code marks a buffer
//! dirty *before* inserting its record (see [`crate::xlog`]), so a record
//! before `redo` belongs to a buffer that is already dirty when step 3
//! scans the pool. A shutdown checkpoint runs with no sessions left: its
//! record directly follows `redo`, so the next start-up finds nothing to
//! replay.
//!
//! Checkpoints are requested by `CHECKPOINT` ([`CheckpointKind::Immediate`]),
//! by time (`checkpoint_timeout`), by WAL volume (half of `max_wal_size`
//! written since the last redo point — PostgreSQL's trigger with
//! `checkpoint_completion_target` 0.9), at the end of crash recovery and at
//! shutdown. One runs at a time (`CheckpointerState::lock`). The background
//! thread holds only a `Weak` reference to the database, so dropping the
//! last `Arc` ends it.
//!
//! Log lines follow PostgreSQL: `checkpoint starting: time` and
//! `checkpoint complete: wrote N buffers (P%); … distance=D kB, estimate=E kB`.
//!
//! ## Promotion
//!
//! A promotion does not wait for a checkpoint when the control file is one
//! of the standby's restartpoints ([`end_recovery_fast`], PostgreSQL's fast
//! promotion): the control file is rewritten in production state, still
//! pointing at that restartpoint, the role switches, and the new
//! timeline's first checkpoint is asked of the background thread
//! ("checkpoint starting: force"). A crash before it completes replays
//! from the restartpoint across the timeline switch — start-up reads each
//! WAL segment from its newest timeline's file, and the segment holding
//! the switch point exists under the new timeline's name. Otherwise (no
//! restartpoint yet) the end-of-recovery checkpoint runs before the switch.
//!
//! ## Restartpoints (a standby's checkpoints, CreateRestartPoint)
//!
//! A standby writes no WAL, so it cannot log checkpoints; it reuses the
//! primary's. The startup process hands every checkpoint record it replays
//! to [`CheckpointerState::note_replayed_checkpoint`]; once replay is
//! consistent, a *restartpoint* makes the newest such checkpoint the
//! standby's own restart position:
//!
//! ```text
//!  1. clog, prepared-transaction state files, then every dirty buffer and
//!     an fsync — every record before the checkpoint's redo point was
//!     replayed before the checkpoint record itself, so its changes are in
//!     buffers that are dirty now (or already written). No WAL flush is
//!     needed first: a standby replays only WAL it has flushed locally.
//!  2. pg_control ← that checkpoint (record, redo, next xid / OID), state
//!     InArchiveRecovery, minRecoveryPoint = replay position after step 1
//!  3. remove standby WAL segments before redo − wal_keep_size
//! ```
//!
//! Triggers are the primary's: `checkpoint_timeout` since the last
//! restartpoint, or half of `max_wal_size` replayed since its redo point —
//! checked by the same background thread — plus `CHECKPOINT` on the
//! standby and its clean shutdown. A replayed checkpoint whose redo point
//! is not newer than the last restartpoint's is skipped ("skipping
//! restartpoint"). A standby whose control file came with its base
//! backup (or is a former primary's) asks for its first restartpoint
//! as soon as it is consistent and has replayed a checkpoint past its
//! start ("restartpoint starting: force"): until then only backup_label
//! says where its crash recovery begins. Log lines: `restartpoint starting: time`,
//! `restartpoint complete: wrote N buffers …` and `recovery restart point
//! at X/Y`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use wal::{Lsn, WalRecord, XlogRecord};

use crate::node::Node;
use crate::xlog::{ControlFile, DbState};
use engine::Role;
use pgtypes::error::{PgError, PgResult};
use pgtypes::TransactionId;
use storage::xloginsert::wal_error;

/// Why a checkpoint runs (its words in the log).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointKind {
    /// The first checkpoint of a new cluster.
    Initial,
    /// Clean shutdown.
    Shutdown,
    /// After crash recovery, before accepting connections.
    EndOfRecovery,
    /// The `CHECKPOINT` command.
    Immediate,
    /// `checkpoint_timeout` elapsed.
    Time,
    /// `max_wal_size` worth of WAL written.
    Wal,
    /// Asked for in the background, not waited for: the first checkpoint
    /// after a fast promotion, and a standby's first restartpoint after
    /// its base backup (RequestCheckpoint with CHECKPOINT_FORCE).
    Force,
}

impl CheckpointKind {
    /// PostgreSQL's flags text in "checkpoint starting: …".
    pub fn reason(self) -> &'static str {
        match self {
            CheckpointKind::Initial => "initial",
            CheckpointKind::Shutdown => "shutdown immediate",
            CheckpointKind::EndOfRecovery => "end-of-recovery immediate wait",
            CheckpointKind::Immediate => "immediate force wait",
            CheckpointKind::Time => "time",
            CheckpointKind::Wal => "wal",
            CheckpointKind::Force => "force",
        }
    }

    /// Written with no transaction running (a shutdown checkpoint record).
    fn is_shutdown(self) -> bool {
        matches!(
            self,
            CheckpointKind::Initial | CheckpointKind::Shutdown | CheckpointKind::EndOfRecovery
        )
    }
}

/// What one checkpoint did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    /// Its redo point.
    pub redo: Lsn,
    /// Start of its checkpoint record.
    pub checkpoint_lsn: Lsn,
    /// Dirty buffers written.
    pub buffers_written: usize,
    /// WAL segment files removed.
    pub segments_removed: usize,
}

/// A checkpoint record a standby replayed: the candidate for its next
/// restartpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayedCheckpoint {
    /// Start of the checkpoint record.
    pub checkpoint_lsn: Lsn,
    /// Its redo point.
    pub redo: Lsn,
    /// next_xid it recorded.
    pub next_xid: u64,
    /// next OID it recorded.
    pub next_oid: u32,
}

/// Bookkeeping of the last checkpoint.
#[derive(Debug)]
struct Last {
    redo: Lsn,
    at: Instant,
    /// Set by the shutdown checkpoint: no more checkpoints.
    shut_down: bool,
    /// Set by the end-of-recovery checkpoint or a fast promotion: no more
    /// restartpoints (one started by the background thread just before a
    /// promotion's role switch would write a control file in recovery over
    /// it).
    recovery_ended: bool,
    /// Standby: the control file does not yet point at a restartpoint of
    /// this standby (it came with the base backup, or from the primary this
    /// directory used to be); the first replayed checkpoint asks for one.
    needs_restartpoint: bool,
}

/// What the background thread is told (under one mutex with its condvar).
#[derive(Debug, Default)]
struct Signals {
    /// Stop for good.
    stopped: bool,
    /// A checkpoint (restartpoint on a standby) asked for, not waited for.
    requested: Option<CheckpointKind>,
}

/// The checkpointer's shared state (one per database).
pub struct CheckpointerState {
    /// Held while a checkpoint runs.
    lock: Mutex<Last>,
    /// Stop request for the background thread (shared with it, so it can
    /// wait without holding the database).
    signals: Arc<(Mutex<Signals>, Condvar)>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Standby: the newest checkpoint record replayed (leaf lock).
    replayed: Mutex<Option<ReplayedCheckpoint>>,
}

impl Default for CheckpointerState {
    fn default() -> Self {
        CheckpointerState {
            lock: Mutex::new(Last {
                redo: Lsn::INVALID,
                at: Instant::now(),
                shut_down: false,
                recovery_ended: false,
                needs_restartpoint: false,
            }),
            signals: Arc::new((Mutex::new(Signals::default()), Condvar::new())),
            thread: Mutex::new(None),
            replayed: Mutex::new(None),
        }
    }
}

impl CheckpointerState {
    /// Start-up: the redo point of the checkpoint recovery started from
    /// (the base of the next checkpoint's "distance").
    pub fn set_last_redo(&self, redo: Lsn) {
        self.lock.lock().redo = redo;
    }

    /// The redo point of the last checkpoint or restartpoint (or of the
    /// one start-up began from): every change logged before it is in the
    /// data files.
    pub fn last_redo(&self) -> Lsn {
        self.lock.lock().redo
    }

    /// Standby: replay passed checkpoint `c` (the next restartpoint may use
    /// it).
    /// Replay may pass checkpoints before it is consistent: they are
    /// kept as candidates, used once it is. The first one past the base
    /// backup's start, on a standby whose control file is not yet its
    /// own, asks for a restartpoint at once (here if `consistent`, else
    /// from [`CheckpointerState::reached_consistency`]): from then on the
    /// control file alone says where crash recovery starts, which a fast
    /// promotion relies on.
    pub fn note_replayed_checkpoint(&self, c: ReplayedCheckpoint, consistent: bool) {
        *self.replayed.lock() = Some(c);
        if consistent {
            self.first_restartpoint(c);
        }
    }

    /// Standby: replay just became consistent.
    pub fn reached_consistency(&self) {
        let c = *self.replayed.lock();
        if let Some(c) = c {
            self.first_restartpoint(c);
        }
    }

    fn first_restartpoint(&self, c: ReplayedCheckpoint) {
        // At the backup's own start too (`>=`): the restartpoint is what
        // makes the control file say so.
        let ask = {
            let last = self.lock.lock();
            last.needs_restartpoint && (!last.redo.is_valid() || c.redo >= last.redo)
        };
        if ask {
            self.request(CheckpointKind::Force);
        }
    }

    /// Standby start-up: the control file is not one of this standby's
    /// restartpoints (see [`CheckpointerState::note_replayed_checkpoint`]).
    pub fn set_needs_restartpoint(&self) {
        self.lock.lock().needs_restartpoint = true;
    }

    /// Asks the background thread for a checkpoint (a restartpoint while
    /// the node is a standby) of `kind` without waiting for it
    /// (RequestCheckpoint without CHECKPOINT_WAIT).
    pub fn request(&self, kind: CheckpointKind) {
        let (m, cv) = &*self.signals;
        m.lock().requested = Some(kind);
        cv.notify_all();
    }

    /// Stops the background thread (if any) and waits for it.
    pub fn stop(&self) {
        self.signals.0.lock().stopped = true;
        self.signals.1.notify_all();
        let h = self.thread.lock().take();
        if let Some(h) = h {
            if h.thread().id() != std::thread::current().id() && h.join().is_err() {
                tracing::error!("checkpointer thread panicked");
            }
        }
    }
}

/// The oldest WAL a checkpoint (or restartpoint) with redo point `redo`
/// keeps: `wal_keep_size` before it, and whatever replication slots (WAL
/// their standby has not received) and running base backups still need.
/// With `max_slot_wal_keep_size` set, a slot holds at most that much WAL
/// behind the current position; slots left further behind are invalidated
/// here (PostgreSQL's KeepLogSeg and InvalidateObsoleteReplicationSlots,
/// with its log line).
fn keep_lsn(db: &Node, redo: Lsn, writer: &wal::WalWriter) -> PgResult<Lsn> {
    let keep_bytes = (db.config().int("wal_keep_size").max(0) as u64) << 20;
    let mut keep = Lsn(redo.0.saturating_sub(keep_bytes));
    let max_slot = db.config().int("max_slot_wal_keep_size");
    if let Some(slot) = db.replication().oldest_slot_lsn() {
        let slot = match max_slot_limit(max_slot, writer) {
            Some(limit) => slot.max(limit),
            None => slot,
        };
        keep = keep.min(slot);
    }
    if let Some(h) = db.replication().oldest_hold_lsn() {
        keep = keep.min(h);
    }
    if max_slot >= 0 {
        let seg = writer.segment_size();
        let oldest = Lsn(keep.segment_number(seg) * seg);
        for (name, lsn) in db.replication().slots.invalidate_before(oldest)? {
            tracing::info!(
                "invalidating slot \"{name}\" because its restart_lsn {lsn} exceeds max_slot_wal_keep_size"
            );
        }
    }
    Ok(keep)
}

/// The oldest WAL position a slot may hold with `max_slot_wal_keep_size`
/// = `max_slot` MB (None: -1, no limit).
pub fn max_slot_limit(max_slot: i64, writer: &wal::WalWriter) -> Option<Lsn> {
    (max_slot >= 0).then(|| {
        Lsn(writer
            .insert_lsn()
            .0
            .saturating_sub((max_slot as u64) << 20))
    })
}

/// CreateRestartPoint: a standby's checkpoint (see the module docs). `None`
/// when there is nothing to do: no checkpoint replayed since the last
/// restartpoint, or the standby has shut down.
pub fn create_restartpoint(db: &Node, kind: CheckpointKind) -> PgResult<Option<CheckpointStats>> {
    // Whoever asked (CHECKPOINT, the timer, shutdown), this is the
    // checkpointer's IO in pg_stat_io, as in PostgreSQL.
    let _io = storage::pgstat_io::as_backend(storage::pgstat_io::BackendType::Checkpointer);
    let state = &db.checkpointer();
    let mut last = state.lock.lock();
    if last.shut_down || last.recovery_ended {
        return Ok(None);
    }
    let Some(c) = *state.replayed.lock() else {
        tracing::debug!("skipping restartpoint, no checkpoint replayed yet");
        return Ok(None);
    };
    if !db.replication().consistent.load(Ordering::Acquire) {
        // The files may still hold changes replay has not reached.
        tracing::debug!("skipping restartpoint, recovery not yet consistent");
        return Ok(None);
    }
    if last.redo.is_valid()
        && (c.redo < last.redo || (c.redo == last.redo && !last.needs_restartpoint))
    {
        tracing::debug!("skipping restartpoint, already performed at {}", last.redo);
        if kind == CheckpointKind::Shutdown {
            last.shut_down = true;
        }
        return Ok(None);
    }
    let writer = db
        .replication()
        .wal_writer()
        .ok_or_else(|| PgError::internal("restartpoint before WAL is open"))?;
    let t0 = Instant::now();
    tracing::info!("restartpoint starting: {}", kind.reason());

    // 1: clog, state files, buffers, fsync.
    db.clog().flush()?;
    engine::twophase::checkpoint(db.engine().as_ref())?;
    let buffers = db.heap().bufmgr().flush_all()?;
    let t_write = t0.elapsed();
    db.heap().bufmgr().sync_relations()?;
    let fsync = db.config().bool("fsync");
    if fsync {
        fsync_base(&db.config().data_dir)?;
    }
    let t_sync = t0.elapsed() - t_write;

    // 2: the control file. Every buffer written above holds changes up to
    // at most the replay position now.
    let min_recovery_point = db.replication().replay_lsn.load(Ordering::Acquire);
    ControlFile {
        state: DbState::InArchiveRecovery,
        checkpoint: c.checkpoint_lsn,
        redo: c.redo,
        next_xid: c.next_xid,
        next_oid: c.next_oid,
        segment_size: writer.segment_size(),
        time_us: pgtypes::datetime::now_usecs(),
        min_recovery_point,
        timeline: writer.timeline(),
        prev_timeline: prev_timeline(db, writer.timeline()),
        data_checksums: db.xlog().data_checksums(),
    }
    .write(&db.config().data_dir, fsync)?;

    // 3: standby WAL before the redo point, but what cascaded standbys'
    // slots and base backups still need.
    let keep = keep_lsn(db, c.redo, &writer)?;
    let removed = writer.remove_segments_before(keep).map_err(wal_error)?;

    let distance_kb = if last.redo.is_valid() {
        c.redo.distance_from(last.redo) / 1024
    } else {
        0
    };
    last.redo = c.redo;
    last.at = Instant::now();
    last.needs_restartpoint = false;
    if kind == CheckpointKind::Shutdown {
        last.shut_down = true;
    }
    let nbuf = db.heap().bufmgr().nbuffers().max(1);
    tracing::info!(
        "restartpoint complete: wrote {buffers} buffers ({:.1}%); 0 WAL file(s) added, {removed} removed, 0 recycled; write={:.3} s, sync={:.3} s, total={:.3} s; distance={distance_kb} kB, estimate={distance_kb} kB",
        buffers as f64 * 100.0 / nbuf as f64,
        t_write.as_secs_f64(),
        t_sync.as_secs_f64(),
        t0.elapsed().as_secs_f64(),
    );
    tracing::info!("recovery restart point at {}", c.redo);
    Ok(Some(CheckpointStats {
        redo: c.redo,
        checkpoint_lsn: c.checkpoint_lsn,
        buffers_written: buffers,
        segments_removed: removed,
    }))
}

/// A fast promotion's control file (PostgreSQL's promotion without an
/// end-of-recovery checkpoint): if the control file is one of this
/// standby's restartpoints, it is rewritten in production state, pointing
/// at the same checkpoint, and no restartpoint may follow. Every change
/// replayed before that checkpoint's redo point is in the data files, and
/// the WAL from it on — across the switch to the new timeline — is in
/// `pg_wal`, so a crash before the first checkpoint of the new timeline
/// recovers by replaying from there, as any primary's crash does. False
/// (nothing written) when there is no such restartpoint: the caller then
/// checkpoints before the role switch.
pub fn end_recovery_fast(db: &Node) -> PgResult<bool> {
    let mut last = db.checkpointer().lock.lock();
    let data_dir = db.config().data_dir.clone();
    let Some(ctl) = ControlFile::read(&data_dir)? else {
        return Ok(false);
    };
    if ctl.state != DbState::InArchiveRecovery || last.shut_down {
        return Ok(false);
    }
    ControlFile {
        state: DbState::InProduction,
        min_recovery_point: Lsn::INVALID,
        time_us: pgtypes::datetime::now_usecs(),
        ..ctl
    }
    .write(&data_dir, db.config().bool("fsync"))?;
    last.recovery_ended = true;
    Ok(true)
}

/// CreateCheckPoint: see the module docs.
pub fn create_checkpoint(db: &Node, kind: CheckpointKind) -> PgResult<CheckpointStats> {
    // Whoever asked, this is the checkpointer's IO in pg_stat_io.
    let _io = storage::pgstat_io::as_backend(storage::pgstat_io::BackendType::Checkpointer);
    let xlog = db.xlog().clone();
    let Some(writer) = xlog.writer().cloned() else {
        return Err(PgError::internal("checkpoint before WAL is open"));
    };
    let state = &db.checkpointer();
    let mut last = state.lock.lock();
    if last.shut_down {
        return Ok(CheckpointStats::default());
    }
    let t0 = Instant::now();
    let quiet = kind == CheckpointKind::Initial;
    if !quiet {
        tracing::info!("checkpoint starting: {}", kind.reason());
    }
    let segs_before = writer.stats().segments_created;

    // 1-2: redo point; WAL then clog.
    let redo = xlog.advance_redo_ptr();
    // Commits whose record may precede `redo` must reach the clog before
    // it is flushed (DELAY_CHKPT_START, see xlog.rs).
    xlog.wait_for_delaying_commits();
    xlog.flush(redo)?;
    db.clog().flush()?;
    // State files of prepared transactions whose PREPARE record the WAL
    // removal below may recycle.
    engine::twophase::checkpoint(db.engine().as_ref())?;
    // 3: buffers, relation files, the directory entries of new files.
    let buffers = db.heap().bufmgr().flush_all()?;
    let t_write = t0.elapsed();
    db.heap().bufmgr().sync_relations()?;
    if db.config().bool("fsync") {
        fsync_base(&db.config().data_dir)?;
    }
    let t_sync = t0.elapsed() - t_write;

    // 4-5: the record.
    let next_xid = db.procarray().next_xid();
    let rec = WalRecord::Xlog(XlogRecord::Checkpoint {
        redo,
        next_xid,
        oldest_active_xid: db.procarray().oldest_xmin(),
        next_oid: db.catalog().next_oid(),
        online: !kind.is_shutdown(),
        timestamp_us: pgtypes::datetime::now_usecs(),
    });
    let (start, end) = writer
        .insert(TransactionId::INVALID, &rec)
        .map_err(wal_error)?;
    xlog.flush(end)?;

    // 6: the control file.
    ControlFile {
        state: if kind == CheckpointKind::Shutdown {
            DbState::ShutDown
        } else {
            DbState::InProduction
        },
        checkpoint: start,
        redo,
        next_xid: next_xid.0,
        next_oid: db.catalog().next_oid(),
        segment_size: writer.segment_size(),
        time_us: pgtypes::datetime::now_usecs(),
        min_recovery_point: Lsn::INVALID,
        timeline: writer.timeline(),
        prev_timeline: prev_timeline(db, writer.timeline()),
        data_checksums: db.xlog().data_checksums(),
    }
    .write(&db.config().data_dir, db.config().bool("fsync"))?;

    // 7: old segments.
    let mut keep = keep_lsn(db, redo, &writer)?;
    if let Some(slot) = xlog.slot_keep_lsn() {
        keep = keep.min(slot);
    }
    let removed = writer.remove_segments_before(keep).map_err(wal_error)?;

    let distance_kb = if last.redo.is_valid() {
        redo.distance_from(last.redo) / 1024
    } else {
        0
    };
    last.redo = redo;
    last.at = Instant::now();
    if kind == CheckpointKind::Shutdown {
        last.shut_down = true;
    }
    if kind == CheckpointKind::EndOfRecovery {
        last.recovery_ended = true;
    }
    xlog.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
    // A running-xacts record after every online checkpoint lets a standby
    // that starts from it reach a consistent state.
    if !kind.is_shutdown() && kind != CheckpointKind::Initial {
        if let Err(e) = engine::replication::log_running_xacts(db) {
            tracing::warn!("could not log running transactions: {}", e.message);
        }
    }
    let nbuf = db.heap().bufmgr().nbuffers().max(1);
    if !quiet {
        tracing::info!(
            "checkpoint complete: wrote {buffers} buffers ({:.1}%); {} WAL file(s) added, {removed} removed, 0 recycled; write={:.3} s, sync={:.3} s, total={:.3} s; distance={distance_kb} kB, estimate={distance_kb} kB",
            buffers as f64 * 100.0 / nbuf as f64,
            writer.stats().segments_created - segs_before,
            t_write.as_secs_f64(),
            t_sync.as_secs_f64(),
            t0.elapsed().as_secs_f64(),
        );
    }
    Ok(CheckpointStats {
        redo,
        checkpoint_lsn: start,
        buffers_written: buffers,
        segments_removed: removed,
    })
}

/// Starts the background checkpointer for `db` (time and WAL-volume
/// triggers).
pub fn start(db: &Arc<Node>) -> std::io::Result<()> {
    let weak: Weak<Node> = Arc::downgrade(db);
    let timeout =
        Duration::from_secs(db.config().int("checkpoint_timeout").clamp(1, 86_400) as u64);
    let max_wal = ((db.config().int("max_wal_size").max(2) as u64) << 20) / 2;
    {
        let mut last = db.checkpointer().lock.lock();
        last.at = Instant::now();
        if db.xlog().inserting() {
            last.redo = db.xlog().redo_ptr();
        }
    }
    let tick = timeout.min(Duration::from_millis(500));
    let signals = db.checkpointer().signals.clone();
    let h = std::thread::Builder::new()
        .name("checkpointer".into())
        .spawn(move || loop {
            let requested = {
                let (m, cv) = &*signals;
                let mut sig = m.lock();
                if !sig.stopped && sig.requested.is_none() {
                    cv.wait_for(&mut sig, tick);
                }
                if sig.stopped {
                    return;
                }
                sig.requested.take()
            };
            let Some(db) = weak.upgrade() else { return };
            let st = &db.checkpointer();
            let due = {
                let last = st.lock.lock();
                // WAL written (primary) or replayed (standby) since the
                // last redo point.
                let written = match db.xlog().writer() {
                    Some(w) => w.insert_lsn().distance_from(last.redo),
                    None => db
                        .replication()
                        .replay_lsn
                        .load(Ordering::Relaxed)
                        .distance_from(last.redo),
                };
                if last.shut_down {
                    None
                } else if requested.is_some() {
                    requested
                } else if last.at.elapsed() >= timeout {
                    Some(CheckpointKind::Time)
                } else if last.redo.is_valid() && written >= max_wal {
                    Some(CheckpointKind::Wal)
                } else {
                    None
                }
            };
            if let Some(kind) = due {
                if db.role() == Role::Standby {
                    match create_restartpoint(&db, kind) {
                        Ok(Some(_)) => {}
                        // Nothing replayed to restart from: look again soon.
                        Ok(None) => {}
                        Err(e) => {
                            tracing::error!("restartpoint failed: {}", e.message);
                            st.lock.lock().at = Instant::now();
                        }
                    }
                } else if let Err(e) = create_checkpoint(&db, kind) {
                    tracing::error!("checkpoint failed: {}", e.message);
                    // Do not retry in a tight loop.
                    st.lock.lock().at = Instant::now();
                }
            }
        })?;
    *db.checkpointer().thread.lock() = Some(h);
    Ok(())
}

/// fsyncs `base/`, so relation files created or removed since the last
/// checkpoint stay so after a crash. A failed fsync PANICs, as every failed
/// data fsync does (`fileutil::data_sync_failed`); failing to *open* the
/// directory (it was removed under a node being torn down, or permissions)
/// is an ordinary error that fails this checkpoint, as in PostgreSQL's
/// `fsync_fname`: nothing was handed to the kernel, so nothing was lost.
fn fsync_base(data_dir: &std::path::Path) -> PgResult<()> {
    let base = data_dir.join("base");
    let dir = std::fs::File::open(&base)
        .map_err(|e| pgtypes::fileutil::io_error("open directory", &base, e))?;
    if let Err(e) = dir.sync_all() {
        pgtypes::fileutil::data_sync_failed(&base, &e);
    }
    Ok(())
}

/// The timeline of the checkpoint before the one being written: the
/// control file's, which differs from `tli` only for the first checkpoint
/// after a promotion (`pg_control_checkpoint().prev_timeline_id`).
fn prev_timeline(db: &Node, tli: pgtypes::TimeLineId) -> pgtypes::TimeLineId {
    match ControlFile::read(&db.config().data_dir) {
        Ok(Some(c)) if c.timeline <= tli => c.timeline,
        _ => tli,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Role;
    use pgtypes::config::Config;
    use pgtypes::value::Value;
    use server::backend::{ExecOutcome, ResultSink};
    use sql::session::Session;

    struct Discard;
    impl ResultSink for Discard {
        fn row(&mut self, _: &[Value]) -> PgResult<()> {
            Ok(())
        }
        fn notice(&mut self, _: PgError) {}
        fn parameter_status(&mut self, _: &str, _: &str) {}
        fn copy_out_start(&mut self, _: usize) {}
        fn copy_data(&mut self, _: &[u8]) {}
    }

    fn run(s: &mut Session, sql: &str) {
        for st in s.prepare(sql, &[]).unwrap() {
            match s.execute(&st, &[], &mut Discard) {
                Ok(ExecOutcome::Complete(_)) | Ok(ExecOutcome::Empty) => {}
                Ok(_) => panic!("{sql}: COPY not expected"),
                Err(e) => panic!("{sql}: {}", e.message),
            }
        }
    }

    /// Segment numbers present in `pg_wal`, sorted.
    fn segments(db: &Node, seg: u64) -> Vec<u64> {
        let mut v: Vec<u64> = std::fs::read_dir(db.config().data_dir.join("pg_wal"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name();
                wal::segment::parse_segment_file_name(name.to_str()?, seg)
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// A checkpoint removes the segments wholly before its redo point —
    /// and keeps `wal_keep_size` more (for standbys without a slot). A
    /// server that kept everything would fill its disk; one that removed a
    /// segment its redo point still needs could not recover from a crash.
    #[test]
    fn checkpoint_removes_old_segments_and_keeps_wal_keep_size() {
        const SEG: u64 = 1 << 20;
        for keep_mb in [0u64, 3] {
            let dir = tempfile::tempdir().unwrap();
            let mut c = Config::new(dir.path());
            c.set("wal_segment_size", "1MB").unwrap();
            c.set("wal_keep_size", &format!("{keep_mb}MB")).unwrap();
            // fsync off: nothing here crashes; only file names are checked.
            c.set("fsync", "off").unwrap();
            let db = Node::open(c, Role::Primary).unwrap();
            let mut s = Session::new(db.clone(), &[("user".into(), "u".into())]).unwrap();
            run(&mut s, "create table t (id int, pad text)");
            // About 6 MB of WAL: several segments behind the next redo point.
            run(
                &mut s,
                "insert into t select g, repeat('x', 200) from generate_series(1, 24000) g",
            );
            let before = segments(&db, SEG);
            run(&mut s, "checkpoint");
            let ctl = ControlFile::read(&db.config().data_dir).unwrap().unwrap();
            let redo_seg = ctl.redo.0 / SEG;
            assert!(redo_seg >= 5, "the load filled segments: redo {}", ctl.redo);
            let kept = segments(&db, SEG);
            assert_eq!(
                kept[0],
                (ctl.redo.0 - (keep_mb << 20)) / SEG,
                "wal_keep_size = {keep_mb}MB: oldest segment left, redo at {}",
                ctl.redo
            );
            assert!(kept.contains(&redo_seg), "the redo point's segment stays");
            assert!(
                kept[0] > before[0],
                "old segments removed: {before:?} -> {kept:?}"
            );
        }
    }
}
