//! The procarray. OWNER: transactions helper (T). Skeleton: the signatures
//! below are the contract other modules use; add what you need, keep these.

use crate::types::TransactionId;

/// Index of a proc slot in the fixed table (PostgreSQL's ProcNumber).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcNumber(pub u32);

/// Node-wide snapshot counters shown by `hotpair_stat_snapshots`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Snapshots built by scanning the dense arrays.
    pub snapshots_computed: u64,
    /// Snapshots served from a session's cache (completion count unchanged).
    pub snapshots_reused: u64,
    /// `xact_completion_count`.
    pub xact_completion_count: u64,
}

/// The fixed proc table plus the dense arrays.
pub struct ProcArray {
    _private: (),
}

impl ProcArray {
    /// A procarray with room for `max_procs` procs (max_connections +
    /// max_prepared_transactions + a few auxiliary).
    pub fn new(max_procs: usize, next_xid: TransactionId) -> ProcArray {
        let _ = (max_procs, next_xid);
        todo!("T")
    }
    /// TransactionIdIsInProgress: is `xid` (top-level or sub) still running?
    pub fn xid_is_running(&self, xid: TransactionId) -> bool {
        let _ = xid;
        todo!("T")
    }
    /// Counters for `hotpair_stat_snapshots`.
    pub fn stats(&self) -> SnapshotStats {
        todo!("T")
    }
    /// The next xid that will be assigned.
    pub fn next_xid(&self) -> TransactionId {
        todo!("T")
    }
}
