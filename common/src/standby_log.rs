//! The running-xacts timer (part of PostgreSQL's bgwriter: LogStandbySnapshot
//! every LOG_SNAPSHOT_INTERVAL_MS while WAL is being written).
//!
//! A hot standby learns which transactions are running from running-xacts
//! records: the first one after its backup end makes it consistent, later
//! ones prune KnownAssignedXids of transactions that ended without a record
//! the standby saw. The timer logs one every [`LOG_SNAPSHOT_INTERVAL`]
//! provided WAL moved since the last one (an idle primary logs nothing, so
//! its WAL stays put). Checkpoints and base backups log one too.

use std::sync::Arc;
use std::time::Duration;

use crate::node::Node;

/// How often running-xacts records are logged while WAL is written.
pub const LOG_SNAPSHOT_INTERVAL: Duration = Duration::from_secs(2);

/// Runs the timer until `shutdown` becomes true.
pub async fn run(db: Arc<Node>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut last_end = wal::Lsn::INVALID;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(LOG_SNAPSHOT_INTERVAL) => {}
            _ = shutdown.changed() => return,
        }
        if *shutdown.borrow() {
            return;
        }
        let Some(w) = db.replication().wal_writer() else {
            continue;
        };
        if w.insert_lsn() == last_end {
            continue;
        }
        match engine::replication::log_running_xacts(&db) {
            Ok(Some(end)) => last_end = end,
            Ok(None) => {}
            Err(e) => tracing::warn!("could not log running transactions: {}", e.message),
        }
    }
}
