//! The startup process of a standby: continuous redo (xlogrecovery.c's
//! main loop plus the hot-standby parts of procarray.c / standby.c).
//!
//! A thread reads WAL with a [`WalReader`] whose read limit is the
//! walreceiver's *written* LSN, applies each record and publishes
//! `replay_lsn`. At the limit it waits for the written LSN to move. The
//! walreceiver's fsync runs meanwhile: WAL-before-data keeps that safe —
//! a page carrying a change from WAL not yet durable flushes that WAL
//! before it is written (`XLog::set_recovery_wal`), so after a crash no
//! page on disk is ahead of the WAL on disk. What the primary is told is
//! applied never passes what is flushed (`walreceiver::reply`).
//!
//! ## Hot standby
//!
//! * Before the first running-xacts record KnownAssignedXids is unknown:
//!   xids in records are not tracked (a range from a stale `next_xid` would
//!   fill it with finished transactions).
//! * The first running-xacts record sets KnownAssignedXids to the running
//!   set ([`ProcArray::init_known_assigned`]) minus the xids whose commit
//!   or abort was already replayed (the record is built before it is
//!   inserted); later ones prune it below their oldest running xid.
//! * Every record's xid then adds the range of xids up to it
//!   (`record_known_assigned`): an xid is running on the standby from its
//!   first record until its commit or abort record.
//! * **Commit, abort, COMMIT PREPARED, ROLLBACK PREPARED** set clog, then
//!   [`ProcArray::end_transaction`]`(Finished::Recovered)` removes the xid and
//!   its subxids from KnownAssignedXids, advances `latest_completed_xid` and
//!   bumps `xact_completion_count` under ProcArrayLock — the September 2020
//!   bug was a standby replay path that did not bump it, so cached snapshots
//!   of long-lived sessions never saw new rows. PREPARE completes nothing.
//!   After any transaction record (and its bump) the replay LSN is
//!   published and `applied_xact_end` wakes the walreceiver, whose reply
//!   then releases `remote_apply` commits on the primary: a commit returns
//!   only once a standby snapshot would see it.
//! * A **shutdown checkpoint** record (the primary stopped cleanly) also
//!   initializes KnownAssignedXids if no running-xacts record did: nothing
//!   runs at a clean stop but prepared transactions, which the twophase
//!   registry holds (replayed PREPAREs and the state files restartpoints
//!   wrote). Otherwise a standby restarted at such a checkpoint would wait
//!   for the primary's next running-xacts record — forever, if it is idle.
//! * Consistency: replay passed the *minimum recovery point* **and**
//!   KnownAssignedXids is initialized → "consistent recovery state
//!   reached", read-only connections are accepted from then on. The
//!   minimum recovery point is the backup's end on the first start; on a
//!   restart, the end of the WAL the standby had already received (the
//!   caller computes it): pages written since the last restartpoint may
//!   hold any change replayed from that WAL, and a session must not see
//!   such a page beside a clog or KnownAssignedXids that is older.
//! * Once consistent, every checkpoint record replayed is offered to the
//!   checkpointer as the next restartpoint
//!   ([`common::checkpointer::CheckpointerState::note_replayed_checkpoint`]).
//! * COMMIT PREPARED and ROLLBACK PREPARED also forget the prepared
//!   transaction in the twophase registry (and its state file), so a
//!   restartpoint does not write it out again.
//!
//! * **Promotion** ([`crate::promote`]): once consistent, a request
//!   (`pg_promote()`, the `promote` file, looked for at least every
//!   [`TRIGGER_CHECK`]) stops the walreceiver, replays the rest of the
//!   flushed WAL up to the last valid record and ends [`run`] with
//!   [`Ended::Promote`]. What keeps a request waiting (logged once) is
//!   [`crate::promote::blocker`].
//!
//! * **Timeline switch** (the walreceiver followed a promotion of its
//!   primary, [`crate::walreceiver`]): the writer's timeline changes at
//!   the switch point; the loop notices it, reopens the segment it reads
//!   (the same number is now the new timeline's file) and goes on with the
//!   same replay state — KnownAssignedXids, clog and the completion
//!   counter carry over, and commits replayed after the switch bump the
//!   counter like any other, so long-lived sessions' cached snapshots see
//!   them.
//!
//! Records other than transaction and standby records go to the node's
//! redo (heap, catalog, smgr, full-page images) through [`RedoHook`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use common::checkpointer::ReplayedCheckpoint;
use common::node::Node;
use pgtypes::error::PgResult;
use pgtypes::TransactionId;
use txn::clog::XidStatus;

use wal::{
    DecodedRecord, EndReason, Lsn, StandbyRecord, WalPosition, WalReader, WalRecord, WalWriter,
    XlogRecord,
};

use crate::promote::TRIGGER_CHECK;

/// Applies records this module does not handle itself (heap, catalog, …).
pub type RedoHook = Arc<dyn Fn(&Node, &DecodedRecord) -> PgResult<()> + Send + Sync>;

/// The replay state carried from record to record.
pub struct Replay {
    db: Arc<Node>,
    /// KnownAssignedXids valid (a running-xacts record was replayed).
    initialized: bool,
    /// Consistent once replay passed here (see the module docs).
    min_recovery_point: Lsn,
    redo: Option<RedoHook>,
    /// Records applied.
    pub records: u64,
}

impl Replay {
    /// Replay state for `db`, consistent after `min_recovery_point`.
    pub fn new(db: Arc<Node>, min_recovery_point: Lsn, redo: Option<RedoHook>) -> Replay {
        Replay {
            db,
            initialized: false,
            min_recovery_point,
            redo,
            records: 0,
        }
    }

    /// Applies one record (see the module docs) and publishes the replay LSN.
    pub fn apply(&mut self, rec: &DecodedRecord) -> PgResult<()> {
        let db = self.db.clone();
        let pa = &db.procarray();
        if self.initialized && rec.header.xid.is_valid() {
            pa.record_known_assigned(rec.header.xid);
        }
        match &rec.record {
            WalRecord::Xact(x) => engine::xact_redo::redo(&db, x, self.initialized),
            WalRecord::Standby(StandbyRecord::RunningXacts {
                next_xid,
                oldest_running_xid,
                latest_completed_xid,
                xids,
                subxids,
                ..
            }) => {
                if !self.initialized {
                    // The primary builds the record from its procarray and
                    // inserts it afterwards: a transaction may commit in
                    // between, its commit record (already replayed) before
                    // this one. Such xids are not running (ProcArrayApply-
                    // RecoveryInfo skips them too); kept, they would hide
                    // committed rows until a later record pruned them —
                    // never, on an idle primary.
                    let running: Vec<TransactionId> = xids
                        .iter()
                        .chain(subxids.iter())
                        .copied()
                        .filter(|x| db.clog().get_status(*x) == XidStatus::InProgress)
                        .collect();
                    pa.init_known_assigned(&running, *next_xid, *latest_completed_xid);
                    self.initialized = true;
                } else {
                    pa.prune_known_assigned(*oldest_running_xid);
                }
            }
            WalRecord::Xlog(XlogRecord::Checkpoint {
                redo,
                next_xid,
                next_oid,
                online,
                ..
            }) => {
                self.redo_other(rec)?;
                if !*online && !self.initialized {
                    // A clean stop: only prepared transactions run.
                    pa.init_known_assigned(
                        &db.twophase().all_xids(),
                        *next_xid,
                        TransactionId(next_xid.0.saturating_sub(1)),
                    );
                    self.initialized = true;
                }
                db.checkpointer().note_replayed_checkpoint(
                    ReplayedCheckpoint {
                        checkpoint_lsn: rec.start_lsn,
                        redo: *redo,
                        next_xid: next_xid.0,
                        next_oid: *next_oid,
                    },
                    db.replication().consistent.load(Ordering::Relaxed),
                );
            }
            _ => self.redo_other(rec)?,
        }
        self.records += 1;
        db.replication()
            .replay_lsn
            .store(rec.end_lsn, Ordering::Release);
        if matches!(rec.record, WalRecord::Xact(_)) {
            // After the completion counter moved (xact_redo): a
            // `remote_apply` commit on the primary may return as soon as
            // the walreceiver reports this position.
            db.replication().applied_xact_end.notify_one();
        }
        if self.initialized
            && rec.end_lsn >= self.min_recovery_point
            && !db.replication().consistent.load(Ordering::Relaxed)
        {
            db.replication().consistent.store(true, Ordering::Release);
            tracing::info!("consistent recovery state reached at {}", rec.end_lsn);
            db.checkpointer().reached_consistency();
            if db.config().bool("hot_standby") {
                tracing::info!("database system is ready to accept read-only connections");
            }
        }
        Ok(())
    }

    fn redo_other(&self, rec: &DecodedRecord) -> PgResult<()> {
        match &self.redo {
            Some(f) => f(&self.db, rec),
            None => Ok(()),
        }
    }
}

/// How continuous redo ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `stop` was set (shutdown) or a record could not be replayed.
    Stopped,
    /// Promotion was requested: the walreceiver was stopped and every
    /// valid record in `pg_wal` replayed; the WAL ends at `end`.
    Promote {
        /// End of the last valid record (where the primary's writer opens).
        end: WalPosition,
    },
}

/// Runs continuous redo from `start` until `stop` is set or promotion is
/// requested (see [`crate::promote`]); blocking (run it on its own
/// thread). `rt` is a runtime handle used to wait for the walreceiver's
/// flushes; `stop_receiver` stops the walreceiver and returns once it has
/// ended (called at promotion).
pub fn run(
    mut replay: Replay,
    writer: Arc<WalWriter>,
    start: Lsn,
    stop: Arc<AtomicBool>,
    rt: tokio::runtime::Handle,
    stop_receiver: &dyn Fn(),
) -> Ended {
    let seg = writer.segment_size();
    let mut reader = match WalReader::new(writer.dir(), seg) {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("could not open WAL for replay: {e}");
            return Ended::Stopped;
        }
    };
    reader.seek(start, None);
    tracing::info!("redo starts at {start}");
    let started = Instant::now();
    let mut last_start = start;
    let mut written = writer.subscribe_written();
    let mut last_bad: Option<Lsn> = None;
    let mut last_trigger_check = Instant::now();
    let mut deferred_logged = false;
    let db = replay.db.clone();
    let mut tli = writer.timeline();
    while !stop.load(Ordering::Relaxed) {
        let now = writer.timeline();
        if now != tli {
            // The walreceiver switched timelines: the segment being read
            // is now the new timeline's file (wal::segment).
            reader.forget_file();
            tli = now;
            tracing::info!("new target timeline is {now}");
        }
        if db.replication().promote_requested() || last_trigger_check.elapsed() >= TRIGGER_CHECK {
            last_trigger_check = Instant::now();
            if crate::promote::check_trigger(&db) {
                let blocker = crate::promote::blocker(&db);
                if let Some(why) = blocker {
                    if !deferred_logged {
                        deferred_logged = true;
                        tracing::error!("{why}");
                    }
                } else {
                    tracing::info!("received promote request");
                    stop_receiver();
                    // Replay what the walreceiver flushed, to the last
                    // valid record: a torn tail ends the WAL there.
                    reader.set_read_limit(writer.flushed_lsn());
                    loop {
                        match reader.next_record() {
                            Ok(rec) => {
                                if !replay_one(&mut replay, &rec, &mut last_start, &stop) {
                                    return Ended::Stopped;
                                }
                            }
                            Err(end) => {
                                tracing::debug!("end of WAL to promote at: {end}");
                                break;
                            }
                        }
                    }
                    tracing::info!(
                        "redo done at {last_start} system usage: elapsed: {:.2} s",
                        started.elapsed().as_secs_f64()
                    );
                    return Ended::Promote {
                        end: reader.position(),
                    };
                }
            }
        }
        // WAL the walreceiver has written, fsync'd or not: applying it while
        // the fsync runs takes the fsync out of commit-to-visible; page
        // writes flush it first (`XLog::set_recovery_wal`).
        reader.set_read_limit(writer.write_lsn());
        match reader.next_record() {
            Ok(rec) => {
                if !replay_one(&mut replay, &rec, &mut last_start, &stop) {
                    return Ended::Stopped;
                }
            }
            Err(end) => {
                if !matches!(end.reason, EndReason::ReadLimit { .. }) && last_bad != Some(end.lsn) {
                    tracing::debug!("replay waiting at {}: {end}", end.lsn);
                    last_bad = Some(end.lsn);
                }
                let arrived = rt.block_on(async {
                    tokio::select! {
                        _ = written.changed() => true,
                        _ = db.replication().promote_wakeup() => false,
                        _ = tokio::time::sleep(TRIGGER_CHECK) => false,
                    }
                });
                if arrived {
                    // XLogReceiptTime: replay had caught up and new WAL
                    // came in now; max_standby_streaming_delay counts from
                    // here for the records it brings.
                    db.standby_conflicts().note_wal_received(Instant::now());
                }
            }
        }
    }
    Ended::Stopped
}

/// Applies `rec`; false (after logging the FATAL line) if redo failed.
/// Applies one record and advances `last_start`; on failure logs it
/// (FATAL), sets `stop` and returns false — replay cannot go past a record
/// it could not apply.
fn replay_one(
    replay: &mut Replay,
    rec: &DecodedRecord,
    last_start: &mut Lsn,
    stop: &AtomicBool,
) -> bool {
    match replay.apply(rec) {
        Ok(()) => {
            *last_start = rec.start_lsn;
            true
        }
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            tracing::error!(
                fatal = true,
                "WAL redo at {} for {} failed: {}",
                rec.start_lsn,
                rec.record,
                e.message
            );
            false
        }
    }
}
