//! # Standby snapshot conflicts (standby.c ResolveRecoveryConflictWithSnapshot)
//!
//! Replaying a prune record on a standby removes row versions that the
//! primary's horizon no longer needs — but a standby query's snapshot may
//! still need them. Before the record changes a page, redo calls
//! [`Database::resolve_snapshot_conflict`] with the record's
//! `latest_removed_xid`. (Work in progress: the full resolution lands in
//! the next commit of branch `conflict`.)

use crate::database::Database;
use crate::types::TransactionId;

impl Database {
    /// Waits for, then cancels, every standby session whose snapshot xmin is
    /// valid and `<= latest_removed_xid` (ResolveRecoveryConflictWithSnapshot).
    /// Returns at once when no session conflicts (always in crash recovery,
    /// where there are no sessions).
    pub fn resolve_snapshot_conflict(&self, latest_removed_xid: TransactionId) {
        let _ = latest_removed_xid;
    }
}
