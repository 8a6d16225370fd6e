//! MVCC snapshots. OWNER: transactions helper (T). Skeleton: the struct is the
//! contract used by storage (visibility) and SQL; fill in the logic.

use crate::types::TransactionId;

/// What a statement (READ COMMITTED) or a transaction (REPEATABLE READ) sees:
/// every xid `< xmin` is finished, every xid `>= xmax` is invisible, and the
/// xids in `xip` / `subxip` were running when the snapshot was taken.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Oldest xid still running when taken (all older are finished).
    pub xmin: TransactionId,
    /// `latest_completed_xid + 1`: this xid and later are invisible.
    pub xmax: TransactionId,
    /// Running top-level xids, sorted ascending.
    pub xip: Vec<TransactionId>,
    /// Running subtransaction xids, sorted ascending (empty when overflowed).
    pub subxip: Vec<TransactionId>,
    /// Some proc had more than 64 subxids: consult the subtrans map.
    pub suboverflowed: bool,
    /// Built from KnownAssignedXids on a standby.
    pub taken_during_recovery: bool,
    /// `xact_completion_count` when computed; equal counter = still valid.
    pub completion_count: u64,
}

impl Snapshot {
    /// XidInMVCCSnapshot: true when `xid` must be treated as still running
    /// (not yet visible) by this snapshot. `parent_of` maps a subxid to its
    /// top-level xid (used only when `suboverflowed`).
    pub fn xid_in_snapshot(&self, xid: TransactionId, parent_of: &dyn Fn(TransactionId) -> Option<TransactionId>) -> bool {
        let _ = (xid, parent_of);
        todo!("T: XidInMVCCSnapshot")
    }
}
