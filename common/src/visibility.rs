//! Tuple visibility (heapam_visibility.c). OWNER: storage helper (S).
//! Skeleton: [`VisibilityContext`] is the contract — the SQL executor builds
//! one per statement and passes it to every heap access.

use crate::clog::Clog;
use crate::procarray::ProcArray;
use crate::snapshot::Snapshot;
use crate::types::{CommandId, TransactionId};

/// The session's own transaction as visibility sees it.
#[derive(Clone, Copy, Debug)]
pub struct OwnXact<'a> {
    /// The top-level xid and every live (not rolled back) subxid of this
    /// session, sorted ascending; empty if no xid was assigned yet.
    pub xids: &'a [TransactionId],
    /// The current command id: rows written with `cmin < curcid` are seen,
    /// rows deleted with `cmax < curcid` are gone.
    pub curcid: CommandId,
}

impl OwnXact<'_> {
    /// TransactionIdIsCurrentTransactionId.
    pub fn is_current(&self, xid: TransactionId) -> bool {
        self.xids.binary_search(&xid).is_ok()
    }
}

/// Everything a heap access needs to decide what a statement sees.
#[derive(Clone, Copy)]
pub struct VisibilityContext<'a> {
    /// The statement's (or transaction's) snapshot.
    pub snapshot: &'a Snapshot,
    /// The session's own transaction.
    pub own: OwnXact<'a>,
    /// Commit status.
    pub clog: &'a Clog,
    /// Running-xid checks (TransactionIdIsInProgress) for writers and
    /// unique checks.
    pub procarray: &'a ProcArray,
}
