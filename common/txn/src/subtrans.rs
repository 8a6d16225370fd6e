//! # The subtransaction map (subtrans.c, pg_subtrans)
//!
//! Every subtransaction xid is recorded here with its immediate parent when it
//! is assigned. The map is consulted only when a proc's subxid cache
//! overflowed (more than [`crate::procarray::PGPROC_MAX_CACHED_SUBXIDS`]
//! subxids): a snapshot marked `suboverflowed`, or TransactionIdIsInProgress,
//! resolves a subxid to its top-level xid and looks for that instead.
//!
//! Like PostgreSQL's pg_subtrans it need not survive a restart: after a
//! restart no transaction from before is running, so nobody asks about their
//! subxids. It lives in memory, ordered by xid, and is truncated below the
//! oldest xmin of the node ([`SubTrans::truncate`]).
//!
//! A subtree rolled back by ROLLBACK TO SAVEPOINT is *forgotten*
//! ([`SubTrans::forget`]): its xids then resolve to themselves, which no proc
//! runs, so they read as "not running" while their parent goes on — the
//! answer PostgreSQL gets by checking the clog for "aborted" first.
//!
//! Lock: one RwLock, always a leaf (taken under ProcArrayLock / XidGenLock,
//! never the other way round).

use std::collections::BTreeMap;

use parking_lot::RwLock;

use pgtypes::TransactionId;

/// Subxid → parent xid.
#[derive(Default)]
pub struct SubTrans {
    parents: RwLock<BTreeMap<TransactionId, TransactionId>>,
}

/// Longest chain followed by [`SubTrans::topmost`].
const MAX_DEPTH: usize = 1 << 16;

impl SubTrans {
    /// An empty map.
    pub fn new() -> SubTrans {
        SubTrans::default()
    }
    /// SubTransSetParent: records `parent` as the parent of `subxid`.
    pub fn set_parent(&self, subxid: TransactionId, parent: TransactionId) {
        if subxid.is_valid() && parent.is_valid() && subxid != parent {
            self.parents.write().insert(subxid, parent);
        }
    }
    /// SubTransGetParent: the immediate parent, `None` for a top-level (or
    /// unknown, or forgotten) xid.
    pub fn parent(&self, xid: TransactionId) -> Option<TransactionId> {
        self.parents.read().get(&xid).copied()
    }
    /// SubTransGetTopmostTransaction: follows parents up to the top-level xid
    /// (`xid` itself when it has no parent).
    pub fn topmost(&self, xid: TransactionId) -> TransactionId {
        let map = self.parents.read();
        let mut cur = xid;
        for _ in 0..MAX_DEPTH {
            match map.get(&cur) {
                Some(&p) if p != cur => cur = p,
                _ => break,
            }
        }
        cur
    }
    /// Drops the entries of a rolled-back subtree (see the module docs).
    pub fn forget(&self, xids: &[TransactionId]) {
        if xids.is_empty() {
            return;
        }
        let mut map = self.parents.write();
        for x in xids {
            map.remove(x);
        }
    }
    /// Drops every entry for xids older than `oldest_xmin`: no snapshot or
    /// running check asks about them any more.
    pub fn truncate(&self, oldest_xmin: TransactionId) {
        let mut map = self.parents.write();
        let keep = map.split_off(&oldest_xmin);
        *map = keep;
    }
    /// Number of entries (tests, monitoring).
    pub fn len(&self) -> usize {
        self.parents.read().len()
    }
    /// True when no subxid is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_forget_truncate() {
        let st = SubTrans::new();
        let x = TransactionId;
        st.set_parent(x(11), x(10));
        st.set_parent(x(12), x(11));
        st.set_parent(x(13), x(10));
        assert_eq!(st.topmost(x(12)), x(10));
        assert_eq!(st.parent(x(12)), Some(x(11)));
        assert_eq!(st.topmost(x(10)), x(10));
        st.forget(&[x(12)]);
        assert_eq!(st.topmost(x(12)), x(12));
        st.truncate(x(13));
        assert_eq!(st.len(), 1);
        assert_eq!(st.topmost(x(13)), x(10));
    }
}
