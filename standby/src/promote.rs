//! Promotion: a standby becomes a primary (PostgreSQL's promote path
//! through xlogrecovery.c's CheckForStandbyTrigger and xlog.c's end of
//! StartupXLOG).
//!
//! ```text
//!  pg_promote() ─┐                      startup thread (startup::run)
//!  DIR/promote ──┴─▶ request_promote() ─▶ "received promote request"
//!                                          stop the walreceiver (and wait)
//!                                          replay the rest of pg_wal, up to
//!                                          the last valid record
//!                                          "redo done at X/Y …"
//!                   finish() ◀──────────── end of valid WAL
//!                    remove standby.signal and promote, backup_label
//!                    becomes backup_label.old
//!                    "archive recovery complete"
//!                    Node::finish_recovery: WAL writer at the end,
//!                    prepared xacts get dummy procs, orphans aborted,
//!                    procarray leaves recovery, control file in
//!                    production (fast promotion: from the last
//!                    restartpoint; else an end-of-recovery checkpoint),
//!                    role switch, "checkpoint starting: force" asked of
//!                    the checkpointer
//!                    "database system is ready to accept connections"
//! ```
//!
//! *Asking.* `pg_promote()` sets the request flag in the node's
//! replication state; `pg_ctl promote` (or an operator) creates the file
//! `promote` in the data directory, which the startup thread looks for
//! whenever it waits for WAL and at least every [`TRIGGER_CHECK`] while
//! busy. A request waits while [`blocker`] says so (not yet consistent,
//! too few `max_prepared_transactions`).
//!
//! *Why the walreceiver stops first:* the WAL to promote at must stop
//! moving. Whatever it had flushed is replayed; a record it had half
//! received is cut off by the new writer, which opens at the end of the
//! last valid record.
//!
//! *The signal files go before the switch:* once `standby.signal` is gone
//! a restart runs the node as a primary (crash recovery from the last
//! restartpoint replays what promotion wrote), which is right from the
//! moment promotion began; if promotion fails halfway the process exits and
//! that restart finishes the job.
//!
//! *Timelines:* promotion ends the standby's timeline N at the end of the
//! last valid record and starts N+1 there (`Node::finish_recovery` →
//! `common::xlog::open_after_recovery`): "selected new timeline ID", the
//! history file `0000000{N+1}.history` in `pg_wal`, the segment holding the
//! switch point copied under the new timeline's name, the new timeline's
//! first checkpoint recording it in the control file (in the background
//! after a fast promotion; `common::checkpointer`, "Promotion"). Other
//! standbys follow it through the walsender's end-of-timeline exchange
//! (docs/architecture/replication.md, "Timelines").

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::node::Node;
use pgtypes::error::PgResult;
use wal::{WalPosition, WalWriter};

/// The trigger file `pg_ctl promote` creates in the data directory.
pub const PROMOTE_SIGNAL_FILE: &str = "promote";

/// The file that makes a data directory a standby's.
pub const STANDBY_SIGNAL_FILE: &str = "standby.signal";

/// How often a busy startup thread looks for the trigger file.
pub const TRIGGER_CHECK: Duration = Duration::from_millis(200);

/// Path of the trigger file of `data_dir`.
pub fn trigger_path(data_dir: &Path) -> PathBuf {
    data_dir.join(PROMOTE_SIGNAL_FILE)
}

/// CheckPromoteSignal: if the trigger file exists, records the request
/// (the file itself is removed by [`finish`]). True if promotion is
/// requested by any means.
pub fn check_trigger(db: &Node) -> bool {
    if !db.replication().promote_requested() && trigger_path(&db.config().data_dir).exists() {
        db.replication().request_promote();
    }
    db.replication().promote_requested()
}

/// Why a promotion request must wait, if it must (the startup thread logs
/// it once and keeps replaying, looking again with every check):
///
/// * replay is not yet consistent — the data files may hold changes
///   replay has not reached;
/// * more prepared transactions than this node's
///   `max_prepared_transactions`: each needs a dummy proc and a registry
///   slot as a primary (PostgreSQL requires the standby's setting to be at
///   least the primary's; hotpair's standby does not inherit it). Promoting
///   would fail halfway — and so would every restart.
pub fn blocker(db: &Node) -> Option<String> {
    if !db
        .replication()
        .consistent
        .load(std::sync::atomic::Ordering::Acquire)
    {
        return Some(
            "promote request received before a consistent recovery state: promoting once consistent"
                .into(),
        );
    }
    let (n, max) = (db.twophase().len(), db.twophase().max_prepared());
    (n > max).then(|| {
        format!(
            "cannot promote yet: {n} prepared transaction(s) but max_prepared_transactions is {max}; set it to at least the primary's value and restart the standby"
        )
    })
}

/// The end of promotion, after replay stopped at `end` (the end of the
/// last valid record) and the walreceiver is gone: closes the standby's
/// WAL writer (`writer`, which the walreceiver filled), removes the signal
/// files and hands over to [`Node::finish_recovery`]. On success the
/// node is a primary.
pub fn finish(db: &Node, writer: &WalWriter, end: WalPosition) -> PgResult<()> {
    let seg = writer.segment_size();
    // Everything it holds was flushed by the walreceiver; the primary's
    // writer opens on the same files at `end`.
    let _ = writer.shutdown();
    let dir = &db.config().data_dir;
    for f in [STANDBY_SIGNAL_FILE, PROMOTE_SIGNAL_FILE] {
        match std::fs::remove_file(dir.join(f)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(pgtypes::error::PgError::new(
                    pgtypes::error::sqlstate::IO_ERROR,
                    format!("could not remove file \"{}\": {e}", dir.join(f).display()),
                ))
            }
        }
    }
    // As PostgreSQL renames it at the end of recovery: the directory no
    // longer is a fresh backup.
    let label = dir.join(crate::basebackup::BACKUP_LABEL);
    if label.exists() {
        let old = dir.join(format!("{}.old", crate::basebackup::BACKUP_LABEL));
        std::fs::rename(&label, &old)
            .map_err(|e| pgtypes::fileutil::io_error("rename file", &label, e))?;
    }
    if db.config().bool("fsync") {
        pgtypes::fileutil::fsync_dir(dir)
            .map_err(|e| pgtypes::fileutil::io_error("fsync directory", dir, e))?;
    }
    tracing::info!("archive recovery complete");
    db.finish_recovery(end, seg)?;
    tracing::info!("database system is ready to accept connections");
    Ok(())
}
