//! Heap access methods (PostgreSQL's heapam.c): the one place where heap
//! pages change — and therefore, from issue 3 on, where WAL is emitted.
//! Every such spot is marked `// WAL:` with the record it will log.
//!
//! ## Operations
//!
//! * `insert` / `multi_insert`: place tuples via [`hio`](super::hio)
//!   (target block, FSM, extension); multi-insert fills page after page and
//!   extends by as many pages as it still needs (`relation_extension=bulk`).
//! * `delete`: HeapTupleSatisfiesUpdate under the page's exclusive lock;
//!   on `Ok` sets xmax = xid, cmax = curcid, ctid = self.
//! * `update`: the same check; the new version goes on the same page if it
//!   fits (one critical section), else: (1) the old version gets xmax = xid
//!   with ctid = self, so no one else can take it; (2) the lock is released
//!   and the new version is inserted wherever hio finds room; (3) the old
//!   page is re-locked and old.ctid -> new. Each step alone is
//!   crash-consistent: until the transaction commits, an xmax or a new
//!   version of an uncommitted transaction means nothing to anyone else, and
//!   a concurrent updater waits on our xid before it follows ctid.
//! * `fetch` / `fetch_dirty` / `scan`: visibility via
//!   [`crate::visibility`], hint bits learnt under the share lock applied
//!   afterwards with a non-blocking exclusive try-lock.
//!
//! ## Locks and callbacks
//!
//! At most one content lock is held at a time, and only briefly; none is
//! held while calling back into the SQL layer. `fetch` copies the tuple
//! data into a per-thread reusable buffer before calling `f` (no allocation
//! once warm); `scan` copies the visible tuples of one page ("page-at-a-time"
//! like PostgreSQL's heapgetpage) and calls `f` for each with no lock held,
//! so `f` may itself update, delete, fetch or scan. The visibility checks
//! themselves run under the content lock and may take the procarray lock
//! and clog locks (never the other way round).
//!
//! TRUNCATE / DROP must be serialised against other access to the same
//! relation by the caller (the SQL layer's relation lock), as in PostgreSQL.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use super::bufmgr::{BufMgr, BufferRef, WalFlush};
use super::bufpage::{ItemError, Page, PD_PAGE_FULL};
use super::fsm::FreeSpaceMap;
use super::hio::{space_for, BulkInsertState, ExtensionMode, Hio, TargetBlocks};
use super::htup::{self, TupleHeader};
use super::smgr::Smgr;
use super::StorageError;
use crate::error::PgResult;
use crate::types::{
    BlockNumber, BufferTag, CommandId, ForkNumber, ItemPointer, RelFileId, TransactionId,
};
use crate::visibility::{satisfies_dirty, satisfies_mvcc, satisfies_update, VisibilityContext};

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

/// Reusable per-thread buffers for copying tuples out of locked pages.
#[derive(Default)]
struct CopyBufs {
    /// Tuple data of the visible tuples of one page, back to back.
    data: Vec<u8>,
    /// (offset number, start, end) into `data`.
    items: Vec<(u16, u32, u32)>,
    /// Hints learnt: (offset, xmin, xmax, bits).
    hints: Vec<(u16, TransactionId, TransactionId, u16)>,
}

thread_local! {
    static COPY_BUFS: RefCell<CopyBufs> = RefCell::new(CopyBufs::default());
}

/// Takes the thread's copy buffers (a nested call finds them empty and
/// uses fresh ones), runs `f`, puts them back.
fn with_copy_bufs<R>(f: impl FnOnce(&mut CopyBufs) -> R) -> R {
    let mut bufs = COPY_BUFS.with(|c| std::mem::take(&mut *c.borrow_mut()));
    let r = f(&mut bufs);
    bufs.data.clear();
    bufs.items.clear();
    bufs.hints.clear();
    // Do not keep a huge buffer around after one giant tuple page.
    if bufs.data.capacity() <= 64 * 1024 {
        COPY_BUFS.with(|c| *c.borrow_mut() = bufs);
    }
    r
}

/// The callback of [`Heap::scan`]: `f(tid, data)`, `Break` stops the scan.
pub type ScanCallback<'a> = dyn FnMut(ItemPointer, &[u8]) -> PgResult<ControlFlow<()>> + 'a;

/// The heap: relation files through the buffer pool.
pub struct Heap {
    smgr: Arc<Smgr>,
    bm: Arc<BufMgr>,
    fsm: FreeSpaceMap,
    targets: TargetBlocks,
    mode: ExtensionMode,
}

fn item_error(rel: RelFileId, tid: ItemPointer, e: ItemError) -> StorageError {
    match e {
        ItemError::NoSuchItem => StorageError::BadTid {
            rel,
            block: tid.block,
            offset: tid.offset,
        },
        ItemError::Corrupted => StorageError::CorruptedPage {
            rel,
            block: tid.block,
            detail: format!("line pointer {} points outside the page", tid.offset),
        },
    }
}

fn bad_header(rel: RelFileId, tid: ItemPointer) -> StorageError {
    StorageError::CorruptedPage {
        rel,
        block: tid.block,
        detail: format!("tuple {} shorter than its header", tid),
    }
}

/// Header of the tuple at `tid` on a locked page.
fn header_at(page: &Page, rel: RelFileId, tid: ItemPointer) -> Result<TupleHeader, StorageError> {
    let item = page.item(tid.offset).map_err(|e| item_error(rel, tid, e))?;
    TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))
}

/// Writes `h` over the header of the tuple at `tid` on a locked page.
fn put_header(
    page: &mut Page,
    rel: RelFileId,
    tid: ItemPointer,
    h: &TupleHeader,
) -> Result<(), StorageError> {
    let item = page
        .item_mut(tid.offset)
        .map_err(|e| item_error(rel, tid, e))?;
    h.write(item);
    Ok(())
}

/// The header of a version after `xid` deletes / updates it.
fn with_xmax(
    mut h: TupleHeader,
    xid: TransactionId,
    cid: CommandId,
    ctid: ItemPointer,
) -> TupleHeader {
    h.xmax = xid;
    h.cmax = cid;
    h.ctid = ctid;
    h.infomask &=
        !(htup::XMAX_COMMITTED | htup::XMAX_INVALID | htup::XMAX_LOCK_ONLY | htup::HOT_UPDATED);
    h
}

impl Heap {
    /// Opens the heap of `data_dir` with a pool of `shared_buffers_pages`
    /// buffers.
    pub fn open(
        data_dir: &Path,
        shared_buffers_pages: usize,
        mode: ExtensionMode,
    ) -> PgResult<Heap> {
        let smgr = Arc::new(Smgr::open(data_dir)?);
        let bm = Arc::new(BufMgr::new(smgr.clone(), shared_buffers_pages));
        Ok(Heap {
            smgr,
            bm,
            fsm: FreeSpaceMap::new(),
            targets: TargetBlocks::default(),
            mode,
        })
    }

    /// The buffer pool (checkpointer, tests).
    pub fn bufmgr(&self) -> &Arc<BufMgr> {
        &self.bm
    }

    /// The storage manager.
    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// Installs the WAL-before-data hook (issue 3).
    pub fn set_wal_flush(&self, hook: Arc<dyn WalFlush>) {
        self.bm.set_wal_flush(hook);
    }

    /// The `relation_extension` mode.
    pub fn extension_mode(&self) -> ExtensionMode {
        self.mode
    }

    fn hio(&self) -> Hio<'_> {
        Hio {
            bm: &self.bm,
            fsm: &self.fsm,
            targets: &self.targets,
            mode: self.mode,
        }
    }

    fn tag(rel: RelFileId, block: BlockNumber) -> BufferTag {
        BufferTag {
            rel,
            fork: ForkNumber::Main,
            block,
        }
    }

    /// Pins the page of `tid` if the block exists.
    fn pin_block(&self, rel: RelFileId, block: BlockNumber) -> PgResult<Option<BufferRef<'_>>> {
        if block.0 >= self.smgr.nblocks(rel, ForkNumber::Main)? {
            return Ok(None);
        }
        Ok(Some(self.bm.read_buffer(Self::tag(rel, block))?))
    }

    /// Number of blocks of the relation (a scan's extent).
    pub fn nblocks(&self, rel: RelFileId) -> PgResult<u32> {
        Ok(self.smgr.nblocks(rel, ForkNumber::Main)?)
    }

    /// Writes every dirty buffer and fsyncs the files (checkpoint); returns
    /// the number of buffers written.
    pub fn checkpoint(&self) -> PgResult<usize> {
        let n = self.bm.flush_all()?;
        self.smgr.sync_all()?;
        Ok(n)
    }

    /// Inserts one tuple, returning its address.
    pub fn insert(
        &self,
        rel: RelFileId,
        data: &[u8],
        xid: TransactionId,
        cid: CommandId,
    ) -> PgResult<ItemPointer> {
        let len = htup::HEADER_SIZE + data.len();
        let mut lb = self.hio().get_buffer_for_tuple(rel, len, None)?;
        let block = lb.buf.block();
        let tid = Self::place(
            rel,
            &mut lb.page,
            block,
            data,
            TupleHeader::new_insert(xid, cid),
        )?;
        // WAL: XLOG_HEAP_INSERT (with XLOG_HEAP_INIT_PAGE if the page was new); PageSetLSN.
        lb.buf.mark_dirty();
        Ok(tid)
    }

    /// Appends a tuple with header `h` (its ctid is set to the new address)
    /// to a locked page that has room.
    fn place(
        rel: RelFileId,
        page: &mut Page,
        block: BlockNumber,
        data: &[u8],
        mut h: TupleHeader,
    ) -> Result<ItemPointer, StorageError> {
        let len = htup::HEADER_SIZE + data.len();
        let tid = ItemPointer {
            block,
            offset: page.max_offset() + 1,
        };
        h.ctid = tid;
        let off = page.add_item_with(len, |b| {
            h.write(b);
            b[htup::HEADER_SIZE..].copy_from_slice(data);
        });
        match off {
            Some(o) if o == tid.offset => Ok(tid),
            _ => Err(StorageError::CorruptedPage {
                rel,
                block,
                detail: "page has no room for a tuple hio said fits".into(),
            }),
        }
    }

    /// Inserts many tuples (COPY, multi-row INSERT); `frozen` writes them
    /// with xmin FROZEN (COPY … FREEZE).
    pub fn multi_insert(
        &self,
        rel: RelFileId,
        rows: &[&[u8]],
        xid: TransactionId,
        cid: CommandId,
        frozen: bool,
    ) -> PgResult<Vec<ItemPointer>> {
        let mut tids = Vec::with_capacity(rows.len());
        let total: usize = rows
            .iter()
            .map(|r| space_for(htup::HEADER_SIZE + r.len()))
            .sum();
        let mut bulk = BulkInsertState::new(total);
        let mut header = TupleHeader::new_insert(xid, cid);
        if frozen {
            header.xmin = TransactionId::FROZEN;
            header.infomask |= htup::XMIN_COMMITTED;
        }
        let hio = self.hio();
        let mut i = 0;
        let result = (|| -> PgResult<()> {
            while i < rows.len() {
                let mut lb = hio.get_buffer_for_tuple(
                    rel,
                    htup::HEADER_SIZE + rows[i].len(),
                    Some(&mut bulk),
                )?;
                let block = lb.buf.block();
                while i < rows.len() && lb.page.fits(htup::HEADER_SIZE + rows[i].len()) {
                    tids.push(Self::place(rel, &mut lb.page, block, rows[i], header)?);
                    bulk.consumed(space_for(htup::HEADER_SIZE + rows[i].len()));
                    i += 1;
                }
                // WAL: XLOG_HEAP2_MULTI_INSERT for the tuples placed on this page; PageSetLSN.
                lb.buf.mark_dirty();
                if i < rows.len() {
                    bulk.mark_current_full();
                }
            }
            Ok(())
        })();
        bulk.finish(&self.bm, &self.fsm, rel);
        result.map(|()| tids)
    }

    /// Deletes the version at `tid` (sets xmax) if the context allows.
    pub fn delete(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        xid: TransactionId,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<TmResult> {
        let buf = self
            .pin_block(rel, tid.block)?
            .ok_or(StorageError::BadTid {
                rel,
                block: tid.block,
                offset: tid.offset,
            })?;
        let mut page = buf.write();
        let h = header_at(&page, rel, tid)?;
        let (res, hints) = satisfies_update(&h, tid, cx);
        if res != TmResult::Ok {
            if hints != 0 {
                TupleHeader::set_hint_bits_in(
                    page.item_mut(tid.offset)
                        .map_err(|e| item_error(rel, tid, e))?,
                    hints,
                );
                buf.mark_dirty();
            }
            return Ok(res);
        }
        let mut nh = with_xmax(h, xid, cx.own.curcid, tid);
        nh.infomask |= hints & (htup::XMIN_COMMITTED);
        put_header(&mut page, rel, tid, &nh)?;
        page.set_prunable(xid.0);
        // WAL: XLOG_HEAP_DELETE (tid, xmax, cmax); PageSetLSN.
        buf.mark_dirty();
        Ok(TmResult::Ok)
    }

    /// Replaces the version at `tid` by `data`; on Ok returns the new tid.
    pub fn update(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        data: &[u8],
        xid: TransactionId,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<(TmResult, Option<ItemPointer>)> {
        let len = htup::HEADER_SIZE + data.len();
        if len > super::bufpage::MAX_ITEM_SIZE {
            return Err(StorageError::TupleTooBig {
                size: len,
                max: super::bufpage::MAX_ITEM_SIZE,
            }
            .into());
        }
        let cid = cx.own.curcid;
        let buf = self
            .pin_block(rel, tid.block)?
            .ok_or(StorageError::BadTid {
                rel,
                block: tid.block,
                offset: tid.offset,
            })?;
        let mut page = buf.write();
        let h = header_at(&page, rel, tid)?;
        let (res, hints) = satisfies_update(&h, tid, cx);
        if res != TmResult::Ok {
            if hints != 0 {
                TupleHeader::set_hint_bits_in(
                    page.item_mut(tid.offset)
                        .map_err(|e| item_error(rel, tid, e))?,
                    hints,
                );
                buf.mark_dirty();
            }
            return Ok((res, None));
        }
        let keep_hints = hints & htup::XMIN_COMMITTED;
        let mut new_h = TupleHeader::new_insert(xid, cid);
        new_h.infomask |= htup::UPDATED;

        if page.fits(len) {
            // Same page: one critical section.
            let mut nh = new_h;
            nh.infomask |= htup::ONLY_TUPLE;
            let new_tid = Self::place(rel, &mut page, tid.block, data, nh)?;
            let mut oh = with_xmax(h, xid, cid, new_tid);
            oh.infomask |= keep_hints | htup::HOT_UPDATED;
            put_header(&mut page, rel, tid, &oh)?;
            page.set_prunable(xid.0);
            // WAL: XLOG_HEAP_UPDATE (old tid, new tuple, same page); PageSetLSN.
            buf.mark_dirty();
            return Ok((TmResult::Ok, Some(new_tid)));
        }

        // (1) Claim the old version: xmax = us, ctid = itself for now.
        let mut oh = with_xmax(h, xid, cid, tid);
        oh.infomask |= keep_hints;
        put_header(&mut page, rel, tid, &oh)?;
        page.set_prunable(xid.0);
        page.set_flags(PD_PAGE_FULL);
        let avail = page.heap_free_space();
        // WAL: XLOG_HEAP_LOCK-style record for the old tuple's new xmax (or
        // issue 3 logs the whole update once, holding both pages).
        buf.mark_dirty();
        drop(page);
        drop(buf);
        self.fsm.record(rel, tid.block, avail);

        // (2) The new version, wherever there is room.
        let new_tid = {
            let mut lb = self.hio().get_buffer_for_tuple(rel, len, None)?;
            let block = lb.buf.block();
            let t = Self::place(rel, &mut lb.page, block, data, new_h)?;
            // WAL: XLOG_HEAP_UPDATE, new-page half (new tuple); PageSetLSN.
            lb.buf.mark_dirty();
            t
        };

        // (3) Link old -> new.
        let buf = self.bm.read_buffer(Self::tag(rel, tid.block))?;
        let mut page = buf.write();
        let mut h = header_at(&page, rel, tid)?;
        if h.xmax == xid {
            h.ctid = new_tid;
            put_header(&mut page, rel, tid, &h)?;
            // WAL: XLOG_HEAP_UPDATE, old-page half (old ctid -> new); PageSetLSN.
            buf.mark_dirty();
        }
        Ok((TmResult::Ok, Some(new_tid)))
    }

    /// Applies hint bits learnt under a share lock, if the page can be
    /// locked exclusively right now and the tuple still has the xids that
    /// were checked. A hint not applied is simply learnt again later.
    fn apply_hints(buf: &BufferRef<'_>, hints: &[(u16, TransactionId, TransactionId, u16)]) {
        if hints.is_empty() {
            return;
        }
        let Some(mut page) = buf.try_write() else {
            return;
        };
        let mut changed = false;
        for &(off, xmin, xmax, bits) in hints {
            if let Ok(item) = page.item_mut(off) {
                if let Some(h) = TupleHeader::read(item) {
                    if h.xmin == xmin && h.xmax == xmax && h.infomask & bits != bits {
                        TupleHeader::set_hint_bits_in(item, bits);
                        changed = true;
                    }
                }
            }
        }
        if changed {
            // Hint-only change: no WAL (MarkBufferDirtyHint without checksums).
            buf.mark_dirty();
        }
    }

    /// Calls `f` with the data of the version at `tid` if visible. `f` runs
    /// with no lock held (on a copy), so it may access the heap itself.
    pub fn fetch<R>(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        cx: &VisibilityContext<'_>,
        f: impl FnOnce(&[u8]) -> R,
    ) -> PgResult<Option<R>> {
        let Some(buf) = self.pin_block(rel, tid.block)? else {
            return Ok(None);
        };
        with_copy_bufs(|cb| {
            let visible = {
                let page = buf.read();
                let item = match page.item(tid.offset) {
                    Ok(item) => item,
                    Err(ItemError::NoSuchItem) => return Ok(None),
                    Err(e) => return Err(item_error(rel, tid, e).into()),
                };
                let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
                let (visible, hints) = satisfies_mvcc(&h, cx);
                if visible {
                    cb.data.extend_from_slice(htup::tuple_data(item));
                }
                if hints != 0 {
                    cb.hints.push((tid.offset, h.xmin, h.xmax, hints));
                }
                visible
            };
            Self::apply_hints(&buf, &cb.hints);
            drop(buf);
            Ok(visible.then(|| f(&cb.data)))
        })
    }

    /// Calls `f` with the data of the version at `tid` whatever its
    /// visibility (SnapshotAny: re-checking an updated row, diagnostics),
    /// and its header. `None` if there is no tuple there.
    pub fn fetch_any<R>(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        f: impl FnOnce(&TupleHeader, &[u8]) -> R,
    ) -> PgResult<Option<R>> {
        let Some(buf) = self.pin_block(rel, tid.block)? else {
            return Ok(None);
        };
        with_copy_bufs(|cb| {
            let h = {
                let page = buf.read();
                let item = match page.item(tid.offset) {
                    Ok(item) => item,
                    Err(ItemError::NoSuchItem) => return Ok(None),
                    Err(e) => return Err(item_error(rel, tid, e).into()),
                };
                let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
                cb.data.extend_from_slice(htup::tuple_data(item));
                h
            };
            drop(buf);
            Ok(Some(f(&h, &cb.data)))
        })
    }

    /// SnapshotDirty check for unique constraints.
    pub fn fetch_dirty(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<DirtyState> {
        let Some(buf) = self.pin_block(rel, tid.block)? else {
            return Ok(DirtyState::Dead);
        };
        let (state, hint) = {
            let page = buf.read();
            let item = match page.item(tid.offset) {
                Ok(item) => item,
                Err(ItemError::NoSuchItem) => return Ok(DirtyState::Dead),
                Err(e) => return Err(item_error(rel, tid, e).into()),
            };
            let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
            let (state, hints) = satisfies_dirty(&h, cx);
            (state, (tid.offset, h.xmin, h.xmax, hints))
        };
        if hint.3 != 0 {
            Self::apply_hints(&buf, &[hint]);
        }
        Ok(state)
    }

    /// Copies the tuples of one page that `cx` sees (all tuples if `cx` is
    /// `None`) into `cb`, applying hints afterwards. Returns false if the
    /// block is past the end.
    fn collect_page(
        &self,
        rel: RelFileId,
        block: BlockNumber,
        cx: Option<&VisibilityContext<'_>>,
        cb: &mut CopyBufs,
    ) -> PgResult<()> {
        cb.data.clear();
        cb.items.clear();
        cb.hints.clear();
        let buf = self.bm.read_buffer(Self::tag(rel, block))?;
        {
            let page = buf.read();
            if page.is_new() {
                return Ok(()); // extended but not yet used: empty
            }
            for off in 1..=page.max_offset() {
                let tid = ItemPointer { block, offset: off };
                let item = match page.item(off) {
                    Ok(item) => item,
                    Err(ItemError::NoSuchItem) => continue,
                    Err(e) => return Err(item_error(rel, tid, e).into()),
                };
                let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
                let visible = match cx {
                    Some(cx) => {
                        let (v, hints) = satisfies_mvcc(&h, cx);
                        if hints != 0 {
                            cb.hints.push((off, h.xmin, h.xmax, hints));
                        }
                        v
                    }
                    None => true,
                };
                if visible {
                    let d = htup::tuple_data(item);
                    let start = cb.data.len() as u32;
                    cb.data.extend_from_slice(d);
                    cb.items.push((off, start, cb.data.len() as u32));
                }
            }
        }
        Self::apply_hints(&buf, &cb.hints);
        Ok(())
    }

    /// Sequential scan: `f(tid, data)` for each visible tuple, in block
    /// order. The relation's size is read once at the start (rows added to
    /// new pages later are not seen — they are invisible to `cx` anyway).
    pub fn scan(
        &self,
        rel: RelFileId,
        cx: &VisibilityContext<'_>,
        f: &mut ScanCallback<'_>,
    ) -> PgResult<()> {
        let nblocks = self.nblocks(rel)?;
        with_copy_bufs(|cb| {
            for b in 0..nblocks {
                let block = BlockNumber(b);
                self.collect_page(rel, block, Some(cx), cb)?;
                for &(off, s, e) in &cb.items {
                    let tid = ItemPointer { block, offset: off };
                    if let ControlFlow::Break(()) = f(tid, &cb.data[s as usize..e as usize])? {
                        return Ok(());
                    }
                }
            }
            Ok(())
        })
    }

    /// Scan of every tuple regardless of visibility (index rebuild at start).
    pub fn scan_all(
        &self,
        rel: RelFileId,
        f: &mut dyn FnMut(ItemPointer, &[u8]) -> PgResult<()>,
    ) -> PgResult<()> {
        let nblocks = self.nblocks(rel)?;
        with_copy_bufs(|cb| {
            for b in 0..nblocks {
                let block = BlockNumber(b);
                self.collect_page(rel, block, None, cb)?;
                for &(off, s, e) in &cb.items {
                    f(
                        ItemPointer { block, offset: off },
                        &cb.data[s as usize..e as usize],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// Creates an empty relation file.
    pub fn create_relation(&self, rel: RelFileId) -> PgResult<()> {
        // WAL: XLOG_SMGR_CREATE.
        self.smgr.create(rel, ForkNumber::Main)?;
        Ok(())
    }

    /// Truncates to zero blocks (TRUNCATE), dropping its buffers.
    pub fn truncate_relation(&self, rel: RelFileId) -> PgResult<()> {
        // WAL: XLOG_SMGR_TRUNCATE (logged and flushed before the file shrinks).
        self.bm.drop_relation_buffers(rel, 0);
        self.smgr.truncate(rel, ForkNumber::Main, 0)?;
        self.fsm.truncate(rel, 0);
        self.targets.forget(rel);
        Ok(())
    }

    /// Removes the relation's files and buffers.
    pub fn drop_relation(&self, rel: RelFileId) -> PgResult<()> {
        // WAL: XLOG_SMGR_DROP (at commit, in PostgreSQL; here at once).
        self.bm.drop_relation_buffers(rel, 0);
        self.fsm.truncate(rel, 0);
        self.targets.forget(rel);
        self.smgr.unlink(rel)?;
        Ok(())
    }

    /// Starts a page-at-a-time scan (for executors that pull rows, e.g. a
    /// portal fetching N rows at a time).
    pub fn begin_scan(&self, rel: RelFileId) -> PgResult<HeapScan> {
        Ok(HeapScan {
            rel,
            nblocks: self.nblocks(rel)?,
            next: 0,
            bufs: CopyBufs::default(),
            pos: 0,
            block: BlockNumber(0),
        })
    }
}

/// A pull-based sequential scan: [`HeapScan::next_tuple`] returns visible
/// tuples one by one, reading a page at a time (copied out, no lock held
/// between calls). Owns its buffers, so it can live across statements'
/// protocol messages.
pub struct HeapScan {
    rel: RelFileId,
    nblocks: u32,
    next: u32,
    bufs: CopyBufs,
    pos: usize,
    block: BlockNumber,
}

impl HeapScan {
    /// The next visible tuple, or `None` at the end.
    pub fn next_tuple(
        &mut self,
        heap: &Heap,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<Option<(ItemPointer, &[u8])>> {
        while self.pos >= self.bufs.items.len() {
            if self.next >= self.nblocks {
                return Ok(None);
            }
            self.block = BlockNumber(self.next);
            self.next += 1;
            self.pos = 0;
            heap.collect_page(self.rel, self.block, Some(cx), &mut self.bufs)?;
        }
        let (off, s, e) = self.bufs.items[self.pos];
        self.pos += 1;
        Ok(Some((
            ItemPointer {
                block: self.block,
                offset: off,
            },
            &self.bufs.data[s as usize..e as usize],
        )))
    }
}
