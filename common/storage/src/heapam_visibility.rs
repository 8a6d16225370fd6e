//! Tuple visibility (heapam_visibility.c).
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
//!   must consider — live, dead, or in progress (wait for it). A version
//!   its own inserter deleted (a speculative insertion that lost its key,
//!   `Heap::kill_own_insert`) is dead whatever that transaction does, so
//!   nobody waits for it (PostgreSQL gets the same from super-delete).
//! * [`satisfies_vacuum`] (HeapTupleSatisfiesVacuum): is the version dead
//!   to every snapshot that exists or will exist, given the removable
//!   horizon (`ProcArray::prune_horizon`)? Pruning and VACUUM remove such
//!   versions; index cleanup drops entries pointing at them.
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

use crate::heapam::{DirtyState, TmResult};
use crate::htup::{
    TupleHeader, XMAX_COMMITTED, XMAX_INVALID, XMAX_LOCK_ONLY, XMIN_COMMITTED, XMIN_INVALID,
};
use pgtypes::{CommandId, ItemPointer, TransactionId};
use txn::clog::{Clog, XidStatus};
use txn::predicate::SxactId;
use txn::procarray::ProcArray;
use txn::snapshot::Snapshot;

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
    /// A SERIALIZABLE read: the reader's predicate-lock record. Heap reads
    /// then report the concurrent writers of the versions they meet
    /// ([`serializable_conflict_out`]) and index fetches lock the tuple
    /// they return. None for every other access.
    pub serializable: Option<SxactId>,
}

impl VisibilityContext<'_> {
    /// XidInMVCCSnapshot, resolving subxids of an overflowed snapshot
    /// through the procarray's subtrans map (the closure borrows; no
    /// allocation).
    fn in_snapshot(&self, xid: TransactionId) -> bool {
        let subtrans = self.procarray.subtrans();
        self.snapshot.xid_in_snapshot(xid, &|x| subtrans.parent(x))
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

/// HeapCheckForSerializableConflictOut: a SERIALIZABLE reader (`cx`
/// carries its record) met this version, `visible` or not. The writer
/// that matters is the deleter of a visible version, or the inserter of an
/// invisible one; if that transaction is concurrent with the reader's
/// snapshot (and not the reader, and not aborted), the predicate lock
/// manager records the rw-conflict — which may fail the reader with 40001.
/// Costs nothing for the common version: inserted before the snapshot and
/// never deleted; one branch for a reader that is not serializable.
#[inline]
pub fn serializable_conflict_out(
    h: &TupleHeader,
    visible: bool,
    cx: &VisibilityContext<'_>,
) -> pgtypes::error::PgResult<()> {
    let Some(me) = cx.serializable else {
        return Ok(());
    };
    let xid = if visible {
        if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
            return Ok(());
        }
        h.xmax
    } else {
        if h.infomask & XMIN_INVALID != 0 || h.xmin_frozen() {
            return Ok(());
        }
        h.xmin
    };
    if !xid.is_valid() || cx.own.is_current(xid) || !cx.in_snapshot(xid) {
        return Ok(());
    }
    if cx.clog.get_status(xid) == XidStatus::Aborted {
        return Ok(());
    }
    let top = cx.procarray.subtrans().topmost(xid);
    if cx.own.is_current(top) {
        return Ok(());
    }
    cx.procarray.predicate().check_conflict_out(me, top)
}

/// Outcome of a finished-or-not question about a foreign xid, asking the
/// procarray before clog.
enum XidFate {
    Running,
    Committed,
    /// Known aborted in clog: hint XMIN_INVALID / XMAX_INVALID.
    Aborted,
    /// Not running and not committed, but clog does not say "aborted"
    /// (crashed, or clog could not be read): treated as aborted, not hinted,
    /// so a transient clog read error never becomes a permanent hint.
    Gone,
}

fn fate(xid: TransactionId, cx: &VisibilityContext<'_>) -> XidFate {
    if cx.procarray.xid_is_running(xid) {
        return XidFate::Running;
    }
    match cx.clog.get_status(xid) {
        XidStatus::Committed => XidFate::Committed,
        // A subxid whose parent is finishing its commit right now.
        XidStatus::SubCommitted => XidFate::Running,
        XidStatus::Aborted => XidFate::Aborted,
        XidStatus::InProgress => XidFate::Gone,
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
            XidFate::Gone => return (TmResult::Invisible, 0),
        }
    }

    let gone = if h.ctid != self_tid {
        TmResult::Updated {
            ctid: h.ctid,
            xmax: h.xmax,
        }
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
        XidFate::Gone => (TmResult::Ok, hints),
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
        // Deleted by its own inserter (a killed speculative insertion, or
        // an INSERT then DELETE): dead whatever that transaction does.
        if h.xmax == h.xmin
            && h.xmax.is_valid()
            && h.infomask & (XMAX_INVALID | XMAX_LOCK_ONLY) == 0
        {
            return (DirtyState::Dead, 0);
        }
        match fate(h.xmin, cx) {
            XidFate::Running => return (DirtyState::InProgress(h.xmin), 0),
            XidFate::Committed => hints |= XMIN_COMMITTED,
            XidFate::Aborted => return (DirtyState::Dead, XMIN_INVALID),
            XidFate::Gone => return (DirtyState::Dead, 0),
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
        XidFate::Gone => (DirtyState::Live, hints),
        XidFate::Committed => (DirtyState::Dead, hints | XMAX_COMMITTED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::BlockNumber;

    fn x(n: u64) -> TransactionId {
        TransactionId(n)
    }

    const TID: ItemPointer = ItemPointer {
        block: BlockNumber(0),
        offset: 1,
    };

    fn tuple(xmin: u64, xmax: u64, infomask: u16) -> TupleHeader {
        TupleHeader {
            xmin: x(xmin),
            xmax: x(xmax),
            cmin: CommandId(0),
            cmax: if xmax == 0 {
                CommandId::INVALID
            } else {
                CommandId(0)
            },
            ctid: TID,
            infomask: if xmax == 0 {
                infomask | XMAX_INVALID
            } else {
                infomask
            },
        }
    }

    /// Clog with 10 committed, 11 aborted, 12 never finished (crashed); a
    /// procarray where nothing runs.
    fn env() -> (tempfile::TempDir, Clog, ProcArray) {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        clog.set_status(x(10), &[], XidStatus::Committed);
        clog.set_status(x(11), &[], XidStatus::Aborted);
        clog.set_status(x(20), &[], XidStatus::Committed);
        (dir, clog, ProcArray::new(4, x(30)))
    }

    fn snap(xmin: u64, xmax: u64, xip: &[u64]) -> Snapshot {
        Snapshot {
            xmin: x(xmin),
            xmax: x(xmax),
            xip: xip.iter().map(|&v| x(v)).collect(),
            ..Default::default()
        }
    }

    fn cx<'a>(
        s: &'a Snapshot,
        own: &'a [TransactionId],
        cid: u32,
        clog: &'a Clog,
        pa: &'a ProcArray,
    ) -> VisibilityContext<'a> {
        VisibilityContext {
            snapshot: s,
            own: OwnXact {
                xids: own,
                curcid: CommandId(cid),
            },
            clog,
            procarray: pa,
            serializable: None,
        }
    }

    #[test]
    fn mvcc_snapshot_rules() {
        let (_d, clog, pa) = env();
        let now = snap(30, 30, &[]);
        let old = snap(10, 10, &[]); // taken before 10 committed
        let c = cx(&now, &[], 0, &clog, &pa);
        let o = cx(&old, &[], 0, &clog, &pa);
        assert_eq!(
            satisfies_mvcc(&tuple(10, 0, 0), &c),
            (true, XMIN_COMMITTED),
            "committed insert, hint learnt"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(10, 0, XMIN_COMMITTED), &o),
            (false, 0),
            "hinted committed but after the snapshot"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(11, 0, 0), &c),
            (false, XMIN_INVALID),
            "aborted insert"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(12, 0, 0), &c),
            (false, 0),
            "crashed insert: invisible, not hinted"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(2, 0, 0), &o),
            (true, 0),
            "FROZEN visible to every snapshot"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(10, 20, XMIN_COMMITTED), &c),
            (false, XMAX_COMMITTED),
            "deleted by a committed xact"
        );
        let mid = snap(20, 21, &[20]); // 20 running when taken
        assert_eq!(
            satisfies_mvcc(
                &tuple(10, 20, XMIN_COMMITTED | XMAX_COMMITTED),
                &cx(&mid, &[], 0, &clog, &pa)
            ),
            (true, 0),
            "deleter committed after the snapshot: still visible"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(10, 11, XMIN_COMMITTED), &c),
            (true, XMAX_INVALID),
            "aborted deleter"
        );
        assert_eq!(
            satisfies_mvcc(&tuple(10, 20, XMIN_COMMITTED | XMAX_LOCK_ONLY), &c),
            (true, 0),
            "a lock hides nothing"
        );
    }

    #[test]
    fn own_transaction_rules() {
        let (_d, clog, pa) = env();
        let s = snap(25, 30, &[25]);
        let own = [x(25)];
        let mut t = tuple(25, 0, 0);
        t.cmin = CommandId(3);
        assert!(
            !satisfies_mvcc(&t, &cx(&s, &own, 3, &clog, &pa)).0,
            "inserted by this command"
        );
        assert!(
            satisfies_mvcc(&t, &cx(&s, &own, 4, &clog, &pa)).0,
            "inserted by an earlier command"
        );
        assert!(
            !satisfies_mvcc(&t, &cx(&s, &[], 4, &clog, &pa)).0,
            "others do not see it"
        );
        t.xmax = x(25);
        t.cmax = CommandId(5);
        t.infomask &= !XMAX_INVALID;
        assert!(
            satisfies_mvcc(&t, &cx(&s, &own, 5, &clog, &pa)).0,
            "deleted by this command: still seen"
        );
        assert!(
            !satisfies_mvcc(&t, &cx(&s, &own, 6, &clog, &pa)).0,
            "deleted by an earlier command"
        );
        assert_eq!(
            satisfies_update(&t, TID, &cx(&s, &own, 5, &clog, &pa)).0,
            TmResult::SelfModified
        );
        assert_eq!(
            satisfies_update(&t, TID, &cx(&s, &own, 6, &clog, &pa)).0,
            TmResult::Invisible
        );
        assert_eq!(
            satisfies_dirty(&t, &cx(&s, &own, 6, &clog, &pa)).0,
            DirtyState::Dead
        );
        // Deleted by a subtransaction that rolled back (not in own.xids).
        t.xmax = x(26);
        assert!(satisfies_mvcc(&t, &cx(&s, &own, 6, &clog, &pa)).0);
        assert_eq!(
            satisfies_update(&t, TID, &cx(&s, &own, 6, &clog, &pa)).0,
            TmResult::Ok
        );
        assert_eq!(
            satisfies_dirty(&t, &cx(&s, &own, 6, &clog, &pa)).0,
            DirtyState::Live
        );
    }

    #[test]
    fn update_and_dirty_ask_the_procarray() {
        let (_d, clog, pa) = env();
        let p = pa.connect(4).unwrap();
        let running = pa.assign_xid(p);
        let s = snap(30, 40, &[]);
        let c = cx(&s, &[], 0, &clog, &pa);
        let other = ItemPointer {
            block: BlockNumber(3),
            offset: 2,
        };
        assert_eq!(
            satisfies_update(&tuple(running.0, 0, 0), TID, &c),
            (TmResult::Invisible, 0),
            "insert in progress"
        );
        assert_eq!(
            satisfies_dirty(&tuple(running.0, 0, 0), &c),
            (DirtyState::InProgress(running), 0)
        );
        assert_eq!(
            satisfies_update(&tuple(10, running.0, XMIN_COMMITTED), TID, &c),
            (TmResult::BeingModified { xmax: running }, 0)
        );
        assert_eq!(
            satisfies_dirty(&tuple(10, running.0, XMIN_COMMITTED), &c),
            (DirtyState::InProgress(running), 0)
        );
        assert_eq!(
            satisfies_dirty(&tuple(running.0, running.0, 0), &c),
            (DirtyState::Dead, 0),
            "killed by its own running inserter: nothing to wait for"
        );
        let mut upd = tuple(10, 20, XMIN_COMMITTED);
        upd.ctid = other;
        assert_eq!(
            satisfies_update(&upd, TID, &c),
            (
                TmResult::Updated {
                    ctid: other,
                    xmax: TransactionId(20)
                },
                XMAX_COMMITTED
            )
        );
        assert_eq!(
            satisfies_update(&tuple(10, 20, 0), TID, &c),
            (TmResult::Deleted, XMIN_COMMITTED | XMAX_COMMITTED)
        );
        assert_eq!(
            satisfies_update(&tuple(10, 11, 0), TID, &c),
            (TmResult::Ok, XMIN_COMMITTED | XMAX_INVALID)
        );
        assert_eq!(
            satisfies_update(&tuple(10, 12, 0), TID, &c),
            (TmResult::Ok, XMIN_COMMITTED),
            "crashed deleter: live, no hint"
        );
        assert_eq!(
            satisfies_dirty(&tuple(12, 0, 0), &c),
            (DirtyState::Dead, 0),
            "crashed inserter: dead, no hint"
        );
        assert_eq!(
            satisfies_dirty(&tuple(10, 0, 0), &c),
            (DirtyState::Live, XMIN_COMMITTED)
        );
        // Clog says committed while the procarray still has it: running.
        clog.set_status(running, &[], XidStatus::Committed);
        assert_eq!(
            satisfies_update(&tuple(10, running.0, XMIN_COMMITTED), TID, &c).0,
            TmResult::BeingModified { xmax: running },
            "procarray is asked before clog"
        );
    }
}

/// What pruning may do with a version ([`satisfies_vacuum`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VacuumState {
    /// Dead to every snapshot, present and future: its inserter aborted,
    /// or its deleter committed before the horizon. `removed_xid` is that
    /// xid — what a standby's conflict check compares with its queries.
    Dead {
        /// The aborted xmin or the committed xmax.
        removed_xid: TransactionId,
    },
    /// Deleted by `xmax`, which is running or committed after the horizon:
    /// some snapshot may still see it; prunable later (the page's
    /// pd_prune_xid).
    RecentlyDead {
        /// The deleter.
        xmax: TransactionId,
    },
    /// Live, or its insert is still in progress.
    Live,
}

/// HeapTupleSatisfiesVacuum against `horizon` (every xid below it is
/// finished and seen as finished by every snapshot). Asks the procarray
/// before clog, like [`satisfies_update`]: an xid that clog already calls
/// committed or aborted may still be in the procarray, and snapshots taken
/// meanwhile see it as running. An inserter that is neither running nor
/// finished in clog (crashed) keeps its version: at start-up a prepared
/// transaction looks like that until it is restored. No hint bits.
pub fn satisfies_vacuum(
    h: &TupleHeader,
    horizon: TransactionId,
    clog: &Clog,
    procarray: &ProcArray,
) -> VacuumState {
    let fate = |xid: TransactionId| {
        if procarray.xid_is_running(xid) {
            return XidFate::Running;
        }
        match clog.get_status(xid) {
            XidStatus::Committed => XidFate::Committed,
            XidStatus::SubCommitted => XidFate::Running,
            XidStatus::Aborted => XidFate::Aborted,
            XidStatus::InProgress => XidFate::Gone,
        }
    };
    if h.infomask & XMIN_INVALID != 0 {
        return VacuumState::Dead {
            removed_xid: h.xmin,
        };
    }
    if h.infomask & XMIN_COMMITTED == 0 && !h.xmin_frozen() {
        match fate(h.xmin) {
            XidFate::Running => return VacuumState::Live,
            XidFate::Committed => {}
            XidFate::Aborted => {
                return VacuumState::Dead {
                    removed_xid: h.xmin,
                }
            }
            // Not running, clog says nothing: a crash victim — or, at
            // start-up before twophase restores them, a prepared
            // transaction. Kept: the second must not lose its rows.
            XidFate::Gone => return VacuumState::Live,
        }
    }
    if h.xmax_is_invalid() || h.infomask & XMAX_LOCK_ONLY != 0 {
        return VacuumState::Live;
    }
    if h.infomask & XMAX_COMMITTED == 0 {
        match fate(h.xmax) {
            XidFate::Running => return VacuumState::RecentlyDead { xmax: h.xmax },
            XidFate::Committed => {}
            XidFate::Aborted | XidFate::Gone => return VacuumState::Live,
        }
    }
    if h.xmax < horizon {
        VacuumState::Dead {
            removed_xid: h.xmax,
        }
    } else {
        VacuumState::RecentlyDead { xmax: h.xmax }
    }
}
