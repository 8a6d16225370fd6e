//! The old-snapshot tick (PostgreSQL's MaintainOldSnapshotTimeMapping,
//! which ran on every snapshot; here once a second on its own task, off the
//! snapshot path): advances the clock snapshots are stamped with, records
//! the time → xid map and drops early-removal records no snapshot needs
//! any more (`txn::old_snapshot`). Runs only with old_snapshot_threshold
//! on, on a primary and on a standby (whose replay asks the time map which
//! snapshots are old).

use std::sync::Arc;
use std::time::Duration;

use crate::node::Node;

/// How often the tick runs.
pub const TICK_INTERVAL: Duration = Duration::from_secs(1);

/// Runs the tick until `shutdown` becomes true (returns at once when
/// old_snapshot_threshold is off).
pub async fn run(db: Arc<Node>, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    if !db.procarray().old_snapshot().enabled() {
        return;
    }
    loop {
        db.procarray().old_snapshot_tick();
        tokio::select! {
            _ = tokio::time::sleep(TICK_INTERVAL) => {}
            _ = shutdown.changed() => return,
        }
        if *shutdown.borrow() {
            return;
        }
    }
}
