//! Heap access methods: the one place where heap pages change (and, from
//! issue 3 on, where WAL is emitted). OWNER: storage helper (S).

use std::ops::ControlFlow;

use crate::error::PgResult;
use crate::types::{CommandId, ItemPointer, RelFileId, TransactionId};
use crate::visibility::VisibilityContext;

/// Outcome of an attempt to update, delete or lock a row version
/// (PostgreSQL's TM_Result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmResult {
    /// Done.
    Ok,
    /// The row version is not visible to the snapshot at all.
    Invisible,
    /// Already changed by this transaction's current command.
    SelfModified,
    /// A committed transaction updated it; the newer version is at `ctid`.
    Updated {
        /// The newer row version.
        ctid: ItemPointer,
    },
    /// A committed transaction deleted it.
    Deleted,
    /// A running transaction holds it: wait for `xmax`, then retry.
    BeingModified {
        /// The transaction to wait for.
        xmax: TransactionId,
    },
}

/// What a unique check sees of a row version (SnapshotDirty).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirtyState {
    /// Dead or invisible to everyone that matters: no conflict.
    Dead,
    /// Live (committed, or our own): a conflict.
    Live,
    /// Inserted or deleted by a running transaction: wait for it, re-check.
    InProgress(TransactionId),
}

/// The heap. Owns (or references) the buffer manager.
pub struct Heap {
    _private: (),
}

impl Heap {
    /// Inserts one tuple, returning its address.
    pub fn insert(&self, rel: RelFileId, data: &[u8], xid: TransactionId, cid: CommandId) -> PgResult<ItemPointer> {
        let _ = (rel, data, xid, cid);
        todo!("S")
    }
    /// Inserts many tuples (COPY, multi-row INSERT); `frozen` writes them
    /// with xmin FROZEN (COPY … FREEZE).
    pub fn multi_insert(&self, rel: RelFileId, rows: &[&[u8]], xid: TransactionId, cid: CommandId, frozen: bool) -> PgResult<Vec<ItemPointer>> {
        let _ = (rel, rows, xid, cid, frozen);
        todo!("S")
    }
    /// Deletes the version at `tid` (sets xmax) if the context allows.
    pub fn delete(&self, rel: RelFileId, tid: ItemPointer, xid: TransactionId, cx: &VisibilityContext<'_>) -> PgResult<TmResult> {
        let _ = (rel, tid, xid, cx);
        todo!("S")
    }
    /// Replaces the version at `tid` by `data`; on Ok returns the new tid.
    pub fn update(&self, rel: RelFileId, tid: ItemPointer, data: &[u8], xid: TransactionId, cx: &VisibilityContext<'_>) -> PgResult<(TmResult, Option<ItemPointer>)> {
        let _ = (rel, tid, data, xid, cx);
        todo!("S")
    }
    /// Calls `f` with the data of the version at `tid` if visible.
    pub fn fetch<R>(&self, rel: RelFileId, tid: ItemPointer, cx: &VisibilityContext<'_>, f: impl FnOnce(&[u8]) -> R) -> PgResult<Option<R>> {
        let _ = (rel, tid, cx, f);
        todo!("S")
    }
    /// SnapshotDirty check for unique constraints.
    pub fn fetch_dirty(&self, rel: RelFileId, tid: ItemPointer, cx: &VisibilityContext<'_>) -> PgResult<DirtyState> {
        let _ = (rel, tid, cx);
        todo!("S")
    }
    /// Sequential scan: `f(tid, data)` for each visible tuple, in block order.
    pub fn scan(&self, rel: RelFileId, cx: &VisibilityContext<'_>, f: &mut dyn FnMut(ItemPointer, &[u8]) -> PgResult<ControlFlow<()>>) -> PgResult<()> {
        let _ = (rel, cx, f);
        todo!("S")
    }
    /// Scan of every tuple regardless of visibility (index rebuild at start).
    pub fn scan_all(&self, rel: RelFileId, f: &mut dyn FnMut(ItemPointer, &[u8]) -> PgResult<()>) -> PgResult<()> {
        let _ = (rel, f);
        todo!("S")
    }
    /// Creates an empty relation file.
    pub fn create_relation(&self, rel: RelFileId) -> PgResult<()> {
        let _ = rel;
        todo!("S")
    }
    /// Truncates to zero blocks (TRUNCATE), dropping its buffers.
    pub fn truncate_relation(&self, rel: RelFileId) -> PgResult<()> {
        let _ = rel;
        todo!("S")
    }
    /// Removes the relation's files and buffers.
    pub fn drop_relation(&self, rel: RelFileId) -> PgResult<()> {
        let _ = rel;
        todo!("S")
    }
}
