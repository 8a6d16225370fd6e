//! # MVCC snapshots (snapmgr.c, XidInMVCCSnapshot)
//!
//! A snapshot is what a statement (READ COMMITTED) or a whole transaction
//! (REPEATABLE READ) sees: every xid `< xmin` had finished when it was taken,
//! every xid `>= xmax` had not started (or not finished — `xmax` is
//! `latest_completed_xid + 1`), and the xids in `xip` / `subxip` were running.
//! Whether a finished xid committed is the clog's business, not the
//! snapshot's.
//!
//! Snapshots are built by [`crate::procarray::ProcArray::get_snapshot`] and
//! shared as `Arc<Snapshot>`: a session keeps its last one and reuses it as
//! long as `completion_count` still equals the node's
//! `xact_completion_count` (no transaction with an xid finished since).
//!
//! Invariants: `xmin <= xmax`; `xip` and `subxip` are sorted ascending and hold
//! only xids in `[xmin, xmax)` (xip) resp. `< xmax` (subxip); when
//! `suboverflowed`, `subxip` may be incomplete and subxids are resolved to
//! their top-level xid through the subtrans map before looking in `xip`.

use pgtypes::lsn::Lsn;
use pgtypes::TransactionId;

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
    /// WAL insert position when built (old_snapshot_threshold on; else 0).
    pub lsn: Lsn,
    /// Seconds since the Unix epoch when built, from the old-snapshot
    /// clock (old_snapshot_threshold on; else 0: never tested).
    pub when: u64,
}

/// Longest parent chain followed when resolving a subxid (guards against a
/// corrupt map looping forever; real chains are as deep as savepoint nesting).
const MAX_PARENT_CHAIN: usize = 1 << 16;

impl Snapshot {
    /// XidInMVCCSnapshot: true when `xid` must be treated as still running
    /// (not yet visible) by this snapshot. `parent_of` maps a subxid to its
    /// parent or top-level xid (used only when `suboverflowed`; it is followed
    /// until it answers `None`).
    pub fn xid_in_snapshot(
        &self,
        xid: TransactionId,
        parent_of: &dyn Fn(TransactionId) -> Option<TransactionId>,
    ) -> bool {
        if xid < self.xmin {
            return false;
        }
        if xid >= self.xmax {
            return true;
        }
        if !self.suboverflowed {
            // Every running subxid is in subxip: no subtrans lookup needed.
            return self.subxip.binary_search(&xid).is_ok() || self.xip.binary_search(&xid).is_ok();
        }
        if self.subxip.binary_search(&xid).is_ok() {
            return true;
        }
        // Overflowed: resolve to the top-level xid (SubTransGetTopmostTransaction).
        let mut top = xid;
        for _ in 0..MAX_PARENT_CHAIN {
            match parent_of(top) {
                Some(p) if p.is_valid() && p != top => top = p,
                _ => break,
            }
        }
        if top < self.xmin {
            return false;
        }
        self.xip.binary_search(&top).is_ok()
    }

    /// An empty snapshot with room for `n` running xids (no allocation later
    /// as long as at most `n` are running).
    pub fn with_capacity(n: usize) -> Snapshot {
        Snapshot {
            xip: Vec::with_capacity(n),
            subxip: Vec::with_capacity(n),
            ..Snapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(n: u64) -> TransactionId {
        TransactionId(n)
    }

    #[test]
    fn bounds_and_lists() {
        let s = Snapshot {
            xmin: x(10),
            xmax: x(20),
            xip: vec![x(10), x(15)],
            subxip: vec![x(17)],
            ..Default::default()
        };
        let none = |_: TransactionId| None;
        assert!(!s.xid_in_snapshot(x(5), &none));
        assert!(s.xid_in_snapshot(x(10), &none));
        assert!(!s.xid_in_snapshot(x(11), &none));
        assert!(s.xid_in_snapshot(x(15), &none));
        assert!(s.xid_in_snapshot(x(17), &none));
        assert!(!s.xid_in_snapshot(x(19), &none));
        assert!(s.xid_in_snapshot(x(20), &none));
        assert!(s.xid_in_snapshot(x(99), &none));
    }

    #[test]
    fn overflowed_uses_parent() {
        let s = Snapshot {
            xmin: x(10),
            xmax: x(30),
            xip: vec![x(12)],
            suboverflowed: true,
            ..Default::default()
        };
        // 25 -> 20 -> 12 (running), 26 -> 5 (old, finished), 27 unknown.
        let parent = |t: TransactionId| match t.0 {
            25 => Some(x(20)),
            20 => Some(x(12)),
            26 => Some(x(5)),
            _ => None,
        };
        assert!(s.xid_in_snapshot(x(25), &parent));
        assert!(!s.xid_in_snapshot(x(26), &parent));
        assert!(!s.xid_in_snapshot(x(27), &parent));
    }
}
