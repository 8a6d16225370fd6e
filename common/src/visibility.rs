//! Tuple visibility (heapam_visibility.c). OWNER: storage helper (S).
//! [`VisibilityContext`] is the contract — the SQL executor builds one per
//! statement and passes it to every heap access.
//!
//! Three tests, each a pure function of a tuple header and the context:
//!
//! * [`satisfies_mvcc`] (HeapTupleSatisfiesMVCC): what a statement's
//!   snapshot sees. Order of questions, as in PostgreSQL: hint bits, then
//!   "is it my own transaction" (command-id rules), then the snapshot
//!   (`xid_in_snapshot`: running when the snapshot was taken), then clog.
//!   It never asks the procarray — the snapshot already answered "was it
//!   running", so a committed xid not in the snapshot is final in clog
//!   (commit sets clog before leaving the procarray).
//! * [`satisfies_update`] (HeapTupleSatisfiesUpdate): may a writer change
//!   this version now? Ignores the snapshot; asks the procarray
//!   (`xid_is_running`) before clog, because clog says "committed" a moment
//!   before the xid leaves the procarray.
//! * [`satisfies_dirty`] (HeapTupleSatisfiesDirty): what a unique check
//!   must consider — live, dead, or in progress (wait for it).
//!
//! Own-transaction rules (cmin/cmax are both stored, no combo cids): a row
//! inserted by the current transaction is visible iff `cmin < curcid` and it
//! is not deleted by us with `cmax < curcid`. A row whose xmax is an aborted
//! transaction (or an aborted subtransaction of ours: an xmax that is not
//! current on a row we inserted) is live.
//!
//! Hint bits: each function returns the bits it learnt from a *final* clog
//! answer (committed / aborted) as a `u16` mask of `htup::XMIN_COMMITTED`
//! etc. The caller (heapam) sets them on the page when it can take the
//! content lock exclusively without waiting; see htup.rs. FROZEN and
//! BOOTSTRAP xmins are committed for everyone. No allocation per call.

use crate::clog::{Clog, XidStatus};
use crate::procarray::ProcArray;
use crate::snapshot::Snapshot;
use crate::storage::heapam::{DirtyState, TmResult};
use crate::storage::htup::{
    TupleHeader, XMAX_COMMITTED, XMAX_INVALID, XMAX_LOCK_ONLY, XMIN_COMMITTED, XMIN_INVALID,
};
use crate::types::{CommandId, ItemPointer, TransactionId};

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

/// The subtrans lookup given to `xid_in_snapshot`: none yet (an overflowed
/// snapshot then treats an unknown subxid as its own top-level xid).
fn no_parent(_: TransactionId) -> Option<TransactionId> {
    None
}

impl VisibilityContext<'_> {
    fn in_snapshot(&self, xid: TransactionId) -> bool {
        self.snapshot.xid_in_snapshot(xid, &no_parent)
    }
}

/// HeapTupleSatisfiesMVCC: is the version visible to `cx`'s snapshot?
/// Returns (visible, hint bits learnt).
pub fn satisfies_mvcc(h: &TupleHeader, cx: &VisibilityContext<'_>) -> (bool, u16) {
    let mut hints = 0u16;
    if h.infomask & XMIN_COMMITTED == 0 && !h.xmin_frozen() {
        if h.infomask & XMIN_INVALID != 0 {
            return (false, 0);
        }
        if cx.own.is_current(h.xmin) {
            if h.cmin >= cx.own.curcid {
                return (false, 0); // inserted after the scan started
            }
            if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
                return (true, 0);
            }
            if !cx.own.is_current(h.xmax) {
                // Deleted by a subtransaction of ours that rolled back.
                return (true, 0);
            }
            return (h.cmax >= cx.own.curcid, 0); // deleted after scan started?
        }
        if cx.in_snapshot(h.xmin) {
            return (false, 0);
        }
        match cx.clog.get_status(h.xmin) {
            XidStatus::Committed => hints |= XMIN_COMMITTED,
            XidStatus::Aborted => return (false, XMIN_INVALID),
            // Crashed, or a subcommit racing its parent: not visible, and
            // not final enough to hint.
            XidStatus::InProgress | XidStatus::SubCommitted => return (false, 0),
        }
    } else if !h.xmin_frozen() && cx.in_snapshot(h.xmin) {
        // Committed, but after our snapshot was taken.
        return (false, 0);
    }

    // xmin is committed and visible: now the deleter.
    if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
        return (true, hints);
    }
    if h.infomask & XMAX_COMMITTED == 0 {
        if cx.own.is_current(h.xmax) {
            return (h.cmax >= cx.own.curcid, hints);
        }
        if cx.in_snapshot(h.xmax) {
            return (true, hints);
        }
        match cx.clog.get_status(h.xmax) {
            XidStatus::Committed => hints |= XMAX_COMMITTED,
            XidStatus::Aborted => return (true, hints | XMAX_INVALID),
            XidStatus::InProgress | XidStatus::SubCommitted => return (true, hints),
        }
    } else if cx.in_snapshot(h.xmax) {
        return (true, hints);
    }
    (false, hints)
}

/// Outcome of a finished-or-not question about a foreign xid, asking the
/// procarray before clog.
enum XidFate {
    Running,
    Committed,
    Aborted,
}

fn fate(xid: TransactionId, cx: &VisibilityContext<'_>) -> XidFate {
    if cx.procarray.xid_is_running(xid) {
        return XidFate::Running;
    }
    match cx.clog.get_status(xid) {
        XidStatus::Committed => XidFate::Committed,
        // A subxid whose parent is finishing its commit right now.
        XidStatus::SubCommitted => XidFate::Running,
        // Not running and never committed: aborted or crashed.
        XidStatus::Aborted | XidStatus::InProgress => XidFate::Aborted,
    }
}

/// HeapTupleSatisfiesUpdate: may the current command update / delete /
/// lock the version at `self_tid`? Returns the result and hint bits.
///
/// `Ok` also covers "xmax is an aborted transaction" (the row is live).
/// Callers in REPEATABLE READ turn `Updated` / `Deleted` into 40001; in
/// READ COMMITTED they follow `ctid` (Updated) after waiting, if needed,
/// on `BeingModified{xmax}`.
pub fn satisfies_update(
    h: &TupleHeader,
    self_tid: ItemPointer,
    cx: &VisibilityContext<'_>,
) -> (TmResult, u16) {
    let mut hints = 0u16;
    if h.infomask & XMIN_COMMITTED == 0 && !h.xmin_frozen() {
        if h.infomask & XMIN_INVALID != 0 {
            return (TmResult::Invisible, 0);
        }
        if cx.own.is_current(h.xmin) {
            if h.cmin >= cx.own.curcid {
                return (TmResult::Invisible, 0);
            }
            if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
                return (TmResult::Ok, 0);
            }
            if !cx.own.is_current(h.xmax) {
                // Deleting subtransaction aborted.
                return (TmResult::Ok, XMAX_INVALID);
            }
            return if h.cmax >= cx.own.curcid {
                (TmResult::SelfModified, 0)
            } else {
                (TmResult::Invisible, 0)
            };
        }
        match fate(h.xmin, cx) {
            XidFate::Running => return (TmResult::Invisible, 0),
            XidFate::Committed => hints |= XMIN_COMMITTED,
            XidFate::Aborted => return (TmResult::Invisible, XMIN_INVALID),
        }
    }

    let gone = if h.ctid != self_tid {
        TmResult::Updated { ctid: h.ctid }
    } else {
        TmResult::Deleted
    };
    if h.xmax_is_invalid() {
        return (TmResult::Ok, hints);
    }
    if h.infomask & XMAX_COMMITTED != 0 {
        if h.infomask & XMAX_LOCK_ONLY != 0 {
            return (TmResult::Ok, hints);
        }
        return (gone, hints);
    }
    if cx.own.is_current(h.xmax) {
        if h.infomask & XMAX_LOCK_ONLY != 0 {
            return (TmResult::Ok, hints);
        }
        return if h.cmax >= cx.own.curcid {
            (TmResult::SelfModified, hints)
        } else {
            (TmResult::Invisible, hints)
        };
    }
    match fate(h.xmax, cx) {
        XidFate::Running => (TmResult::BeingModified { xmax: h.xmax }, hints),
        XidFate::Aborted => (TmResult::Ok, hints | XMAX_INVALID),
        XidFate::Committed if h.infomask & XMAX_LOCK_ONLY != 0 => (TmResult::Ok, hints),
        XidFate::Committed => (gone, hints | XMAX_COMMITTED),
    }
}

/// HeapTupleSatisfiesDirty: what a unique check sees — `Live` (committed or
/// our own), `Dead`, or `InProgress(xid)` to wait for.
pub fn satisfies_dirty(h: &TupleHeader, cx: &VisibilityContext<'_>) -> (DirtyState, u16) {
    let mut hints = 0u16;
    if h.infomask & XMIN_COMMITTED == 0 && !h.xmin_frozen() {
        if h.infomask & XMIN_INVALID != 0 {
            return (DirtyState::Dead, 0);
        }
        if cx.own.is_current(h.xmin) {
            if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
                return (DirtyState::Live, 0);
            }
            if !cx.own.is_current(h.xmax) {
                return (DirtyState::Live, XMAX_INVALID);
            }
            return (DirtyState::Dead, 0);
        }
        match fate(h.xmin, cx) {
            XidFate::Running => return (DirtyState::InProgress(h.xmin), 0),
            XidFate::Committed => hints |= XMIN_COMMITTED,
            XidFate::Aborted => return (DirtyState::Dead, XMIN_INVALID),
        }
    }
    if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
        return (DirtyState::Live, hints);
    }
    if h.infomask & XMAX_COMMITTED != 0 || cx.own.is_current(h.xmax) {
        return (DirtyState::Dead, hints);
    }
    match fate(h.xmax, cx) {
        XidFate::Running => (DirtyState::InProgress(h.xmax), hints),
        XidFate::Aborted => (DirtyState::Live, hints | XMAX_INVALID),
        XidFate::Committed => (DirtyState::Dead, hints | XMAX_COMMITTED),
    }
}
