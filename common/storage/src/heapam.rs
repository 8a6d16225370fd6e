//! Heap access methods (PostgreSQL's heapam.c): the one place where heap
//! pages change — and therefore where WAL is emitted. Every such spot is
//! marked `// WAL:` with the record it logs, following the protocol in
//! [`crate::xloginsert`]: full-page image of the page before the change if
//! needed, change, mark dirty, insert the record, set the page LSN — all
//! under the page's exclusive content lock. While the WAL handle is in
//! recovery mode (replay; unit tests and tools that never start inserting)
//! nothing is logged.
//!
//! ## WAL records
//!
//! * insert: `XLOG_HEAP_INSERT`, with `XLOG_HEAP_INIT_PAGE` when the tuple
//!   is the first on its page (redo rebuilds the page; no image needed);
//! * multi-insert: one `XLOG_HEAP2_MULTI_INSERT` per page filled;
//! * delete: `XLOG_HEAP_DELETE`;
//! * update on the same page: one `XLOG_HEAP_HOT_UPDATE` carrying the new
//!   version;
//! * update to another page: its three steps are logged one by one — step
//!   (1) as a DELETE (xmax claimed, ctid = itself), step (2) as an INSERT of
//!   the new version, step (3) as an UPDATE with an empty tuple ("link
//!   only": old ctid → new). Each step alone is crash-consistent (below),
//!   so each record alone is too, and no two page locks are ever held;
//! * prune: `XLOG_HEAP2_PRUNE` — the line pointers made unused and the
//!   newest xid whose outcome made a removed version dead;
//! * relation create / truncate / drop: `XLOG_SMGR_*`; truncate and drop
//!   are flushed before the file changes.
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
//!   [`crate::heapam_visibility`], hint bits learnt under the share lock applied
//!   afterwards with a non-blocking exclusive try-lock.
//! * pruning (`prune_opt` after a `fetch` or a scanned page, `prune_page`,
//!   VACUUM's `vacuum_relation`): versions dead to all leave the page —
//!   their index entries first, through the engine's
//!   [`PruneIndexHook`], then their line pointers become LP_UNUSED and the
//!   page is defragmented. The test on every access is one load of
//!   `pd_prune_xid` (see `prune_hint`); docs/architecture/storage.md,
//!   "Pruning and VACUUM", has the whole story. Inserts reuse the freed
//!   line pointers, so a tuple's offset is whatever
//!   `Page::next_item_offset` gives, and WAL names it.
//!
//! ## Locks and callbacks
//!
//! At most one content lock is held at a time, and only briefly; none is
//! held while calling back into the caller. `fetch` copies the tuple
//! data into a per-thread reusable buffer before calling `f` (no allocation
//! once warm); `scan` copies the visible tuples of one page ("page-at-a-time"
//! like PostgreSQL's heapgetpage) and calls `f` for each with no lock held,
//! so `f` may itself update, delete, fetch or scan. The visibility checks
//! themselves run under the content lock and may take the procarray lock
//! and clog locks (never the other way round).
//!
//! TRUNCATE / DROP must be serialised against other access to the same
//! relation by the caller (the table's relation lock), as in PostgreSQL.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::bufmgr::{
    BufMgr, BufferAccessStrategy, BufferRef, LockedBuffer, ReadMode, StrategyKind,
};
use super::bufpage::{ItemError, Page, PD_PAGE_FULL};
use super::fsm::FreeSpaceMap;
use super::hio::{space_for, BulkInsertState, ExtensionMode, Hio, TargetBlocks};
use super::htup::{self, TupleHeader};
use super::smgr::Smgr;
use super::StorageError;
use crate::heapam_visibility::{
    satisfies_dirty, satisfies_mvcc, satisfies_update, serializable_conflict_out, VisibilityContext,
};
use crate::xloginsert::{self, infobits, XLog};
use pgtypes::error::{PgError, PgResult};
use pgtypes::{
    BlockNumber, BufferTag, CommandId, ForkNumber, ItemPointer, RelFileId, TransactionId,
};
use txn::predicate::Target;

pub mod pruneheap;

use pruneheap::{prune_hint, PruneIndexHook};

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
        /// The updater: the newer version's xmin. Whoever follows `ctid`
        /// checks it (PostgreSQL's priorXmax): pruning may have freed that
        /// slot and an insert reused it for another row.
        xmax: TransactionId,
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
    fsm: Arc<FreeSpaceMap>,
    targets: TargetBlocks,
    mode: ExtensionMode,
    /// WAL, once start-up has opened it (unset: nothing is logged).
    xlog: Arc<XLog>,
    /// Opportunistic pruning and VACUUM may change pages: a primary (not a
    /// standby, whose pages change only by replay).
    pruning: AtomicBool,
    /// See [`PruneIndexHook`].
    prune_hook: Option<Box<PruneIndexHook>>,
    /// Index builds (CREATE INDEX, ADD PRIMARY KEY) begun so far, and those
    /// running: a prune that overlaps a build must not free a slot the
    /// build may have seen as a version ([`Heap::index_build`]).
    builds_started: AtomicU64,
    builds_active: AtomicU64,
    /// One pruner per page at a time (striped by block): between its
    /// first and last step a prune relies on its candidates' slots not
    /// being freed — and reused by a newer version of the same key, whose
    /// index entry step 2 would then remove — by anyone else.
    prune_stripes: Box<[parking_lot::Mutex<()>]>,
}

/// Stripes of [`Heap`]'s per-page pruning lock.
const PRUNE_STRIPES: usize = 64;

/// Held by an index build for its whole heap scan and load
/// ([`Heap::index_build`]).
pub struct IndexBuildGuard<'a>(&'a Heap);

impl Drop for IndexBuildGuard<'_> {
    fn drop(&mut self) {
        self.0.builds_active.fetch_sub(1, Ordering::SeqCst);
    }
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

/// The infobits a DELETE / UPDATE record carries for the old version.
fn old_infobits(h: &TupleHeader) -> u8 {
    let mut b = 0;
    if h.infomask & htup::XMIN_COMMITTED != 0 {
        b |= infobits::XMIN_COMMITTED;
    }
    if h.infomask & htup::HOT_UPDATED != 0 {
        b |= infobits::HOT_UPDATED;
    }
    b
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
    /// Without a prune hook: pruning assumes there are no indexes (tests,
    /// tools).
    pub fn open(
        data_dir: &Path,
        shared_buffers_pages: usize,
        mode: ExtensionMode,
        xlog: Arc<XLog>,
    ) -> PgResult<Heap> {
        let smgr = Arc::new(Smgr::open(data_dir)?);
        Ok(Heap::with_smgr(
            smgr,
            shared_buffers_pages,
            mode,
            xlog,
            None,
        ))
    }

    /// The heap over an opened storage manager, with the index cleanup
    /// pruning calls (see [`PruneIndexHook`]; `None`: no indexes).
    pub fn with_smgr(
        smgr: Arc<Smgr>,
        shared_buffers_pages: usize,
        mode: ExtensionMode,
        xlog: Arc<XLog>,
        prune_hook: Option<Box<PruneIndexHook>>,
    ) -> Heap {
        let bm = Arc::new(BufMgr::new(smgr.clone(), shared_buffers_pages));
        bm.set_checksums(xlog.data_checksums());
        // WAL before data: a no-op until the handle leaves recovery mode.
        bm.set_wal_flush(xlog.clone());
        Heap {
            smgr,
            bm,
            fsm: Arc::new(FreeSpaceMap::new()),
            targets: TargetBlocks::default(),
            mode,
            xlog,
            pruning: AtomicBool::new(false),
            prune_hook,
            builds_started: AtomicU64::new(0),
            builds_active: AtomicU64::new(0),
            prune_stripes: (0..PRUNE_STRIPES)
                .map(|_| parking_lot::Mutex::new(()))
                .collect(),
        }
    }

    /// Lets page accesses prune and VACUUM remove versions (a primary, once
    /// it writes WAL; a standby at promotion). Off at open.
    pub fn enable_pruning(&self) {
        self.pruning.store(true, Ordering::Relaxed);
    }

    /// Marks an index build under way until the guard is dropped. Take it
    /// before the index is published and keep it until the index holds
    /// every entry of its scan.
    pub fn index_build(&self) -> IndexBuildGuard<'_> {
        self.builds_active.fetch_add(1, Ordering::SeqCst);
        self.builds_started.fetch_add(1, Ordering::SeqCst);
        IndexBuildGuard(self)
    }

    /// Opens the heap as configured: `config.data_dir`, `shared_buffers`,
    /// `relation_extension`.
    pub fn from_config(config: &pgtypes::config::Config) -> PgResult<Heap> {
        let mode = config
            .get("relation_extension")
            .and_then(ExtensionMode::parse)
            .unwrap_or_default();
        Heap::open(
            &config.data_dir,
            config.shared_buffers_pages(),
            mode,
            Arc::new(XLog::new(config)),
        )
    }

    /// Every relation that has a file (start-up index rebuild).
    pub fn list_relations(&self) -> PgResult<Vec<RelFileId>> {
        Ok(self.smgr.list_relations()?)
    }

    /// The buffer pool (checkpointer, tests).
    pub fn bufmgr(&self) -> &Arc<BufMgr> {
        &self.bm
    }

    /// The storage manager.
    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// The WAL handle page changes are logged through.
    pub fn xlog(&self) -> &Arc<XLog> {
        &self.xlog
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
        // A cached block exists: the file's length is asked on a miss only
        // (a shared lock on the file map every row fetch would take).
        if let Some(buf) = self.bm.read_buffer_cached(Self::tag(rel, block)) {
            return Ok(Some(buf));
        }
        if block.0 >= self.smgr.nblocks(rel, ForkNumber::Main)? {
            return Ok(None);
        }
        Ok(Some(self.bm.read_buffer(Self::tag(rel, block))?))
    }

    /// The BULKREAD ring for a sequential scan of `nblocks` blocks: only
    /// for a relation larger than a quarter of the pool (initscan), so that
    /// reading it does not evict everyone else's pages; a smaller one is
    /// read through the pool as usual.
    fn scan_ring(&self, nblocks: u32) -> Option<BufferAccessStrategy> {
        self.bm
            .scan_wants_ring(nblocks)
            .then(|| self.bm.access_strategy(StrategyKind::BulkRead))
    }

    /// Number of blocks of the relation (a scan's extent).
    pub fn nblocks(&self, rel: RelFileId) -> PgResult<u32> {
        Ok(self.smgr.nblocks(rel, ForkNumber::Main)?)
    }

    /// Writes every dirty buffer and fsyncs the files (checkpoint); returns
    /// the number of buffers written.
    pub fn checkpoint(&self) -> PgResult<usize> {
        let n = self.bm.flush_all()?;
        self.bm.sync_relations()?;
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
        let ins = self.xlog.begin_page_change();
        let init = lb.page.max_offset() == 0;
        if let Some(ins) = &ins {
            ins.before_change(lb.buf.tag(), &lb.page, init)?;
        }
        let tid = Self::place(
            rel,
            &mut lb.page,
            block,
            data,
            TupleHeader::new_insert(xid, cid),
        )?;
        lb.buf.mark_dirty();
        // WAL: XLOG_HEAP_INSERT (with XLOG_HEAP_INIT_PAGE if the page was new); PageSetLSN.
        if let Some(ins) = ins {
            let item = lb
                .page
                .item(tid.offset)
                .map_err(|e| item_error(rel, tid, e))?;
            let end = ins.insert(xid, |p| {
                xloginsert::encode_heap_insert(p, rel.0, block.0, tid.offset, item, init)
            })?;
            lb.page.set_lsn(end);
        }
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
        // The slot first: the header carries its own ctid.
        let tid = ItemPointer {
            block,
            offset: page.next_item_offset(),
        };
        h.ctid = tid;
        let off = page.add_item_at(tid.offset, len, |b| {
            h.write(b);
            b[htup::HEADER_SIZE..].copy_from_slice(data);
        });
        match off {
            Some(_) => Ok(tid),
            None => Err(StorageError::CorruptedPage {
                rel,
                block,
                detail: "page has no room for a tuple hio said fits".into(),
            }),
        }
    }

    /// Inserts many tuples (a multi-row INSERT … VALUES: through the shared
    /// pool, no ring); `frozen` writes them with xmin FROZEN (COPY …
    /// FREEZE). COPY and INSERT … SELECT use [`Heap::multi_insert_bulk`].
    pub fn multi_insert(
        &self,
        rel: RelFileId,
        rows: &[&[u8]],
        xid: TransactionId,
        cid: CommandId,
        frozen: bool,
    ) -> PgResult<Vec<ItemPointer>> {
        let mut bulk = BulkInsertState::without_ring(Arc::clone(&self.fsm));
        self.multi_insert_bulk(rel, rows, xid, cid, frozen, &mut bulk)
    }

    /// GetBulkInsertState: what a statement that inserts batch after batch
    /// (COPY, INSERT … SELECT) keeps between its [`Heap::multi_insert_bulk`]
    /// calls — above all its BULKWRITE ring of buffers.
    pub fn bulk_insert_state(&self) -> BulkInsertState {
        BulkInsertState::new(&self.bm, Arc::clone(&self.fsm))
    }

    /// [`Heap::multi_insert`] for one batch of a longer bulk insert, through
    /// `bulk`'s ring.
    pub fn multi_insert_bulk(
        &self,
        rel: RelFileId,
        rows: &[&[u8]],
        xid: TransactionId,
        cid: CommandId,
        frozen: bool,
        bulk: &mut BulkInsertState,
    ) -> PgResult<Vec<ItemPointer>> {
        let mut tids = Vec::with_capacity(rows.len());
        let total: usize = rows
            .iter()
            .map(|r| space_for(htup::HEADER_SIZE + r.len()))
            .sum();
        bulk.begin_batch(total);
        let mut header = TupleHeader::new_insert(xid, cid);
        if frozen {
            header.xmin = TransactionId::FROZEN;
            header.infomask |= htup::XMIN_COMMITTED;
        }
        // Redo rebuilds the header from the record: the two must agree.
        debug_assert_eq!(
            header,
            crate::heapam_xlog::multi_insert_header(header.xmin, cid, header.infomask)
        );
        let shared = xloginsert::MultiInsertHeader {
            frozen,
            cmin: cid.0,
            infomask: header.infomask,
        };
        let hio = self.hio();
        let mut i = 0;
        let result = (|| -> PgResult<()> {
            while i < rows.len() {
                let mut lb = hio.get_buffer_for_tuple(
                    rel,
                    htup::HEADER_SIZE + rows[i].len(),
                    Some(&mut *bulk),
                )?;
                let block = lb.buf.block();
                let ins = self.xlog.begin_page_change();
                let init = lb.page.max_offset() == 0;
                if let Some(ins) = &ins {
                    ins.before_change(lb.buf.tag(), &lb.page, init)?;
                }
                // Offsets need not be consecutive: pruning may have left
                // unused line pointers to reuse.
                let placed_from = tids.len();
                while i < rows.len() && lb.page.fits(htup::HEADER_SIZE + rows[i].len()) {
                    tids.push(Self::place(rel, &mut lb.page, block, rows[i], header)?);
                    bulk.consumed(space_for(htup::HEADER_SIZE + rows[i].len()));
                    i += 1;
                }
                lb.buf.mark_dirty();
                bulk.filled(lb.page.heap_free_space());
                // WAL: XLOG_HEAP2_MULTI_INSERT for the tuples placed on this page (the
                // shared header once, then each row's data); PageSetLSN.
                if let Some(ins) = ins {
                    let placed = tids[placed_from..]
                        .iter()
                        .map(|t| t.offset)
                        .zip(rows[placed_from..i].iter().copied());
                    let end = ins.insert(xid, |p| {
                        xloginsert::encode_multi_insert(p, rel.0, block.0, shared, init, placed)
                    })?;
                    lb.page.set_lsn(end);
                }
                if i < rows.len() {
                    bulk.mark_current_full();
                }
            }
            Ok(())
        })();
        result.map(|()| tids)
    }

    /// The first step of delete and update (and of PostgreSQL's
    /// heap_delete / heap_update alike): pin the block of `tid`, lock it
    /// exclusively and run HeapTupleSatisfiesUpdate on the version there.
    /// `Ok(Ok(..))`: the caller may change it — the locked page, the
    /// version's header and the hint bits learnt (for the caller to keep in
    /// its new header). `Ok(Err(result))`: it may not — the hint bits learnt
    /// are already set on the page, the lock released, and `result` is for
    /// the caller to return.
    fn lock_for_update(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<Result<(LockedBuffer<'_>, TupleHeader, u16), TmResult>> {
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
        if res == TmResult::Ok {
            return Ok(Ok((LockedBuffer { page, buf }, h, hints)));
        }
        if hints != 0 {
            TupleHeader::set_hint_bits_in(
                page.item_mut(tid.offset)
                    .map_err(|e| item_error(rel, tid, e))?,
                hints,
            );
            self.mark_dirty_hint(&buf, &mut page);
        }
        Ok(Err(res))
    }

    /// Deletes the version at `tid` (sets xmax) if the context allows.
    pub fn delete(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        xid: TransactionId,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<TmResult> {
        let (lb, h, hints) = match self.lock_for_update(rel, tid, cx)? {
            Ok(t) => t,
            Err(res) => return Ok(res),
        };
        self.delete_locked(rel, tid, lb, h, hints, xid, cx.own.curcid)?;
        Ok(TmResult::Ok)
    }

    /// Kills a version this command inserted a moment ago (INSERT … ON
    /// CONFLICT lost the race for its key: PostgreSQL's super-delete). It
    /// gets xmax = its own xmin, so it is dead to this transaction's later
    /// commands, to a standby, and — SnapshotDirty treats a version deleted
    /// by its inserter as dead — to other inserters, who need not wait for
    /// this transaction. WAL-logged as an ordinary delete.
    pub fn kill_own_insert(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        xid: TransactionId,
        cid: CommandId,
    ) -> PgResult<()> {
        let buf = self
            .pin_block(rel, tid.block)?
            .ok_or(StorageError::BadTid {
                rel,
                block: tid.block,
                offset: tid.offset,
            })?;
        let page = buf.write();
        let h = header_at(&page, rel, tid)?;
        if h.xmin != xid || !h.xmax_is_invalid() {
            return Err(pgtypes::error::PgError::internal(
                "speculative insertion: the version to kill is not this command's",
            ));
        }
        self.delete_locked(rel, tid, LockedBuffer { page, buf }, h, 0, xid, cid)
    }

    /// Sets xmax of the version at `tid` under its buffer's exclusive lock
    /// and WAL-logs the delete.
    #[allow(clippy::too_many_arguments)]
    fn delete_locked(
        &self,
        rel: RelFileId,
        tid: ItemPointer,
        lb: LockedBuffer<'_>,
        h: TupleHeader,
        hints: u16,
        xid: TransactionId,
        cid: CommandId,
    ) -> PgResult<()> {
        let LockedBuffer { mut page, buf } = lb;
        let mut nh = with_xmax(h, xid, cid, tid);
        nh.infomask |= hints & (htup::XMIN_COMMITTED);
        let ins = self.xlog.begin_page_change();
        if let Some(ins) = &ins {
            ins.before_change(buf.tag(), &page, false)?;
        }
        put_header(&mut page, rel, tid, &nh)?;
        page.set_prunable(xid.0);
        buf.mark_dirty();
        // WAL: XLOG_HEAP_DELETE (tid, xmax, infobits); PageSetLSN.
        if let Some(ins) = ins {
            let bits = old_infobits(&nh);
            let end = ins.insert(xid, |p| {
                xloginsert::encode_heap_delete(p, rel.0, tid.block.0, tid.offset, xid.0, bits)
            })?;
            page.set_lsn(end);
        }
        Ok(())
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
        let (LockedBuffer { mut page, buf }, h, hints) = match self.lock_for_update(rel, tid, cx)? {
            Ok(t) => t,
            Err(res) => return Ok((res, None)),
        };
        let keep_hints = hints & htup::XMIN_COMMITTED;
        let mut new_h = TupleHeader::new_insert(xid, cid);
        new_h.infomask |= htup::UPDATED;

        if page.fits(len) {
            // Same page: one critical section.
            let ins = self.xlog.begin_page_change();
            if let Some(ins) = &ins {
                ins.before_change(buf.tag(), &page, false)?;
            }
            let mut nh = new_h;
            nh.infomask |= htup::ONLY_TUPLE;
            let new_tid = Self::place(rel, &mut page, tid.block, data, nh)?;
            let mut oh = with_xmax(h, xid, cid, new_tid);
            oh.infomask |= keep_hints | htup::HOT_UPDATED;
            put_header(&mut page, rel, tid, &oh)?;
            page.set_prunable(xid.0);
            buf.mark_dirty();
            // WAL: XLOG_HEAP_HOT_UPDATE (old tid, new tuple, same page); PageSetLSN.
            if let Some(ins) = ins {
                let bits = old_infobits(&oh);
                let item = page
                    .item(new_tid.offset)
                    .map_err(|e| item_error(rel, new_tid, e))?;
                let end = ins.insert(xid, |p| {
                    xloginsert::encode_heap_update(
                        p,
                        rel.0,
                        (tid.block.0, tid.offset),
                        (new_tid.block.0, new_tid.offset),
                        xid.0,
                        bits,
                        true,
                        item,
                    )
                })?;
                page.set_lsn(end);
            }
            return Ok((TmResult::Ok, Some(new_tid)));
        }

        // (1) Claim the old version: xmax = us, ctid = itself for now.
        let ins = self.xlog.begin_page_change();
        if let Some(ins) = &ins {
            ins.before_change(buf.tag(), &page, false)?;
        }
        let mut oh = with_xmax(h, xid, cid, tid);
        oh.infomask |= keep_hints;
        put_header(&mut page, rel, tid, &oh)?;
        page.set_prunable(xid.0);
        page.set_flags(PD_PAGE_FULL);
        let avail = page.heap_free_space();
        buf.mark_dirty();
        // WAL: step (1) as XLOG_HEAP_DELETE (xmax, ctid = itself); PageSetLSN.
        if let Some(ins) = ins {
            let bits = old_infobits(&oh);
            let end = ins.insert(xid, |p| {
                xloginsert::encode_heap_delete(p, rel.0, tid.block.0, tid.offset, xid.0, bits)
            })?;
            page.set_lsn(end);
        }
        drop(page);
        drop(buf);
        self.fsm.record(rel, tid.block, avail);

        // (2) The new version, wherever there is room.
        let new_tid = {
            let mut lb = self.hio().get_buffer_for_tuple(rel, len, None)?;
            let block = lb.buf.block();
            let ins = self.xlog.begin_page_change();
            let init = lb.page.max_offset() == 0;
            if let Some(ins) = &ins {
                ins.before_change(lb.buf.tag(), &lb.page, init)?;
            }
            let t = Self::place(rel, &mut lb.page, block, data, new_h)?;
            lb.buf.mark_dirty();
            // WAL: step (2) as XLOG_HEAP_INSERT of the new version; PageSetLSN.
            if let Some(ins) = ins {
                let item = lb.page.item(t.offset).map_err(|e| item_error(rel, t, e))?;
                let end = ins.insert(xid, |p| {
                    xloginsert::encode_heap_insert(p, rel.0, block.0, t.offset, item, init)
                })?;
                lb.page.set_lsn(end);
            }
            t
        };

        // (3) Link old -> new.
        let buf = self.bm.read_buffer(Self::tag(rel, tid.block))?;
        let mut page = buf.write();
        let mut h = header_at(&page, rel, tid)?;
        if h.xmax == xid {
            let ins = self.xlog.begin_page_change();
            if let Some(ins) = &ins {
                ins.before_change(buf.tag(), &page, false)?;
            }
            h.ctid = new_tid;
            put_header(&mut page, rel, tid, &h)?;
            buf.mark_dirty();
            // WAL: step (3) as XLOG_HEAP_UPDATE with no tuple (old ctid -> new); PageSetLSN.
            if let Some(ins) = ins {
                let bits = old_infobits(&h);
                let end = ins.insert(xid, |p| {
                    xloginsert::encode_heap_update(
                        p,
                        rel.0,
                        (tid.block.0, tid.offset),
                        (new_tid.block.0, new_tid.offset),
                        xid.0,
                        bits,
                        false,
                        &[],
                    )
                })?;
                page.set_lsn(end);
            }
        }
        Ok((TmResult::Ok, Some(new_tid)))
    }

    /// Applies hint bits learnt under a share lock, if the page can be
    /// locked exclusively right now and the tuple still has the xids that
    /// were checked. A hint not applied is simply learnt again later.
    fn apply_hints(&self, buf: &BufferRef<'_>, hints: &[(u16, TransactionId, TransactionId, u16)]) {
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
            self.mark_dirty_hint(buf, &mut page);
        }
    }

    /// MarkBufferDirtyHint: `page` (locked exclusively) changed in hint bits
    /// only. Without checksums the buffer is simply dirtied, no WAL. With
    /// checksums a torn write of it would fail its checksum after a crash,
    /// so its first change since the redo point logs a full-page image
    /// first ([`xloginsert::PageInsert::image_for_hint`]); in recovery (no WAL may be
    /// written) the hint stays in memory and the buffer is not dirtied, as
    /// in PostgreSQL — it is learnt again after the page is evicted.
    pub(crate) fn mark_dirty_hint(&self, buf: &BufferRef<'_>, page: &mut Page) {
        if !self.xlog.data_checksums() {
            buf.mark_dirty();
            return;
        }
        let Some(ins) = self.xlog.begin_page_change() else {
            return;
        };
        match ins.image_for_hint(buf.tag(), page) {
            Ok(lsn) => {
                buf.mark_dirty();
                if let Some(lsn) = lsn {
                    page.set_lsn(lsn);
                }
            }
            // Not logged (WAL unwritable): not dirtied either; the hint is
            // only an optimisation.
            Err(e) => tracing::debug!("hint bits not kept: {}", e.message),
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
            let (visible, prune) = {
                let page = buf.read();
                cx.procarray.old_snapshot().test_page(
                    cx.snapshot,
                    rel.0,
                    tid.block.0,
                    page.lsn(),
                    cx.procarray.subtrans(),
                )?;
                let prune = prune_hint(&page);
                let item = match page.item(tid.offset) {
                    Ok(item) => item,
                    Err(ItemError::NoSuchItem) => return Ok(None),
                    Err(e) => return Err(item_error(rel, tid, e).into()),
                };
                let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
                let (visible, hints) = satisfies_mvcc(&h, cx);
                if let Some(me) = cx.serializable {
                    // PredicateLockTID, then the conflict-out check.
                    if visible && !cx.own.is_current(h.xmin) {
                        cx.procarray
                            .predicate()
                            .lock(me, Target::Tuple(rel, tid.block.0, tid.offset));
                    }
                    serializable_conflict_out(&h, visible, cx)?;
                }
                if visible {
                    cb.data.extend_from_slice(htup::tuple_data(item));
                }
                if hints != 0 {
                    cb.hints.push((tid.offset, h.xmin, h.xmax, hints));
                }
                (visible, prune)
            };
            self.apply_hints(&buf, &cb.hints);
            if let Some(px) = prune {
                self.prune_opt(rel, &buf, px, cx)?;
            }
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
            self.apply_hints(&buf, &[hint]);
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
        ring: Option<&mut BufferAccessStrategy>,
    ) -> PgResult<()> {
        cb.data.clear();
        cb.items.clear();
        cb.hints.clear();
        let buf = self
            .bm
            .read_buffer_mode(Self::tag(rel, block), ReadMode::Normal, ring)?;
        let prune = {
            let page = buf.read();
            if page.is_new() {
                return Ok(()); // extended but not yet used: empty
            }
            if let Some(cx) = cx {
                // TestForOldSnapshot (one branch when off).
                cx.procarray.old_snapshot().test_page(
                    cx.snapshot,
                    rel.0,
                    block.0,
                    page.lsn(),
                    cx.procarray.subtrans(),
                )?;
            }
            let prune = cx.and_then(|_| prune_hint(&page));
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
                        // The scan itself holds a relation SIRead lock.
                        serializable_conflict_out(&h, v, cx)?;
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
            prune
        };
        self.apply_hints(&buf, &cb.hints);
        if let (Some(px), Some(cx)) = (prune, cx) {
            self.prune_opt(rel, &buf, px, cx)?;
        }
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
        let mut ring = self.scan_ring(nblocks);
        with_copy_bufs(|cb| {
            for b in 0..nblocks {
                let block = BlockNumber(b);
                self.collect_page(rel, block, Some(cx), cb, ring.as_mut())?;
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
        self.scan_all_skipping(rel, f, &mut |_, e| Err(e))
    }

    /// [`Heap::scan_all`], where a page that cannot be read (a checksum
    /// failure, a corrupt header, an I/O error) goes to `bad` instead of
    /// ending the scan: `bad` returns `Ok` to go on with the next block.
    /// The start-up index rebuild uses it, so that one damaged page does
    /// not keep the node from starting.
    pub fn scan_all_skipping(
        &self,
        rel: RelFileId,
        f: &mut dyn FnMut(ItemPointer, &[u8]) -> PgResult<()>,
        bad: &mut dyn FnMut(BlockNumber, PgError) -> PgResult<()>,
    ) -> PgResult<()> {
        let nblocks = self.nblocks(rel)?;
        let mut ring = self.scan_ring(nblocks);
        with_copy_bufs(|cb| {
            for b in 0..nblocks {
                let block = BlockNumber(b);
                if let Err(e) = self.collect_page(rel, block, None, cb, ring.as_mut()) {
                    bad(block, e)?;
                    continue;
                }
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

    /// Logs an smgr record; with `flush`, waits until it is durable.
    fn log_smgr(&self, rec: wal::SmgrRecord, flush: bool) -> PgResult<()> {
        if self.xlog.inserting() {
            let end = self
                .xlog
                .insert(TransactionId::INVALID, &wal::WalRecord::Smgr(rec))?;
            if flush {
                self.xlog.flush(end)?;
            }
        }
        Ok(())
    }

    /// Creates an empty relation file.
    pub fn create_relation(&self, rel: RelFileId) -> PgResult<()> {
        // File first, then XLOG_SMGR_CREATE: a record before a checkpoint's
        // redo point then always has its file covered by that checkpoint's
        // fsync of base/ (redo creates the file if it is missing; a crash
        // in between leaves an empty orphan file).
        self.smgr.create(rel, ForkNumber::Main)?;
        self.log_smgr(wal::SmgrRecord::RelCreate { rel }, false)?;
        Ok(())
    }

    /// Creates the relation file unless it exists (a table's TOAST
    /// relation, made when its first value goes out of line).
    pub fn ensure_relation(&self, rel: RelFileId) -> PgResult<()> {
        static CREATE: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
        if self.smgr.exists(rel, ForkNumber::Main) {
            return Ok(());
        }
        let _g = CREATE.lock();
        if !self.smgr.exists(rel, ForkNumber::Main) {
            self.create_relation(rel)?;
        }
        Ok(())
    }

    /// The table's TOAST relation, if it has one (none for a TOAST
    /// relation itself).
    pub fn toast_relation_of(&self, rel: RelFileId) -> Option<RelFileId> {
        let t = crate::toast::toast_rel(rel);
        (!crate::toast::is_toast_rel(rel) && self.smgr.exists(t, ForkNumber::Main)).then_some(t)
    }

    /// Truncates to zero blocks (TRUNCATE), dropping its buffers; the
    /// table's TOAST relation too.
    pub fn truncate_relation(&self, rel: RelFileId) -> PgResult<()> {
        if let Some(t) = self.toast_relation_of(rel) {
            self.truncate_relation(t)?;
        }
        // WAL: XLOG_SMGR_TRUNCATE (logged and flushed before the file shrinks).
        self.log_smgr(
            wal::SmgrRecord::RelTruncate {
                rel,
                nblocks: BlockNumber(0),
            },
            true,
        )?;
        self.truncate_relation_redo(rel, 0)
    }

    /// Truncates to `nblocks` without logging (redo of XLOG_SMGR_TRUNCATE).
    pub fn truncate_relation_redo(&self, rel: RelFileId, nblocks: u32) -> PgResult<()> {
        self.bm.drop_relation_buffers(rel, nblocks);
        self.smgr.truncate(rel, ForkNumber::Main, nblocks)?;
        self.fsm.truncate(rel, nblocks);
        self.targets.forget(rel);
        Ok(())
    }

    /// Removes the relation's files and buffers (and its TOAST relation's).
    pub fn drop_relation(&self, rel: RelFileId) -> PgResult<()> {
        if let Some(t) = self.toast_relation_of(rel) {
            self.drop_relation(t)?;
        }
        // WAL: XLOG_SMGR_DROP (at commit, in PostgreSQL; here at once),
        // flushed before the file goes.
        self.log_smgr(wal::SmgrRecord::RelDrop { rel }, true)?;
        self.drop_relation_redo(rel)
    }

    /// Removes the relation without logging (redo of XLOG_SMGR_DROP).
    pub fn drop_relation_redo(&self, rel: RelFileId) -> PgResult<()> {
        self.bm.drop_relation_buffers(rel, 0);
        self.fsm.truncate(rel, 0);
        self.targets.forget(rel);
        self.smgr.unlink(rel)?;
        Ok(())
    }

    /// Starts a page-at-a-time scan (for executors that pull rows, e.g. a
    /// portal fetching N rows at a time).
    pub fn begin_scan(&self, rel: RelFileId) -> PgResult<HeapScan> {
        let nblocks = self.nblocks(rel)?;
        Ok(HeapScan {
            rel,
            nblocks,
            ring: self.scan_ring(nblocks),
            next: 0,
            bufs: CopyBufs::default(),
            pos: 0,
            block: BlockNumber(0),
            shared: None,
        })
    }

    /// The block counter of a parallel scan of `rel` (PostgreSQL's
    /// ParallelBlockTableScanDesc): its length is fixed now, so every
    /// participant reads the same pages.
    pub fn parallel_blocks(&self, rel: RelFileId) -> PgResult<Arc<ParallelBlocks>> {
        Ok(Arc::new(ParallelBlocks {
            rel,
            nblocks: self.nblocks(rel)?,
            next: std::sync::atomic::AtomicU32::new(0),
        }))
    }

    /// One participant's share of a parallel scan: each page goes to the
    /// participant that claims it first.
    pub fn begin_parallel_scan(&self, shared: Arc<ParallelBlocks>) -> HeapScan {
        HeapScan {
            rel: shared.rel,
            nblocks: shared.nblocks,
            ring: self.scan_ring(shared.nblocks),
            next: 0,
            bufs: CopyBufs::default(),
            pos: 0,
            block: BlockNumber(0),
            shared: Some(shared),
        }
    }
}

/// The pages of a parallel sequential scan, handed out one at a time to
/// whichever participant asks next (an atomic counter: no lock).
#[derive(Debug)]
pub struct ParallelBlocks {
    rel: RelFileId,
    nblocks: u32,
    next: std::sync::atomic::AtomicU32,
}

impl ParallelBlocks {
    /// The relation scanned.
    pub fn rel(&self) -> RelFileId {
        self.rel
    }

    fn claim(&self) -> Option<u32> {
        let b = self.next.fetch_add(1, Ordering::Relaxed);
        (b < self.nblocks).then_some(b)
    }

    /// Hands out no more pages: every participant's scan ends after the
    /// page it holds (a participant failed, the others' work is moot).
    pub fn finish(&self) {
        self.next.store(self.nblocks, Ordering::Relaxed);
    }
}

/// A pull-based sequential scan: [`HeapScan::next_tuple`] returns visible
/// tuples one by one, reading a page at a time (copied out, no lock held
/// between calls). Owns its buffers, so it can live across statements'
/// protocol messages.
pub struct HeapScan {
    rel: RelFileId,
    nblocks: u32,
    /// The BULKREAD ring of a scan of a big relation.
    ring: Option<BufferAccessStrategy>,
    next: u32,
    bufs: CopyBufs,
    pos: usize,
    block: BlockNumber,
    /// A parallel scan's shared counter: pages come from it, not `next`.
    shared: Option<Arc<ParallelBlocks>>,
}

impl HeapScan {
    /// The next visible tuple, or `None` at the end.
    pub fn next_tuple(
        &mut self,
        heap: &Heap,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<Option<(ItemPointer, &[u8])>> {
        while self.pos >= self.bufs.items.len() {
            match &self.shared {
                Some(sh) => match sh.claim() {
                    Some(b) => self.block = BlockNumber(b),
                    None => return Ok(None),
                },
                None => {
                    if self.next >= self.nblocks {
                        return Ok(None);
                    }
                    self.block = BlockNumber(self.next);
                    self.next += 1;
                }
            }
            self.pos = 0;
            heap.collect_page(
                self.rel,
                self.block,
                Some(cx),
                &mut self.bufs,
                self.ring.as_mut(),
            )?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heapam::pruneheap::{PruneMode, PruneStats};

    /// A WAL handle that never leaves recovery mode: page changes are not
    /// logged (these tests exercise the heap alone).
    pub(super) fn no_wal() -> Arc<XLog> {
        Arc::new(XLog::with_settings(true, true))
    }
    use crate::bufmgr::ExtendFlags;
    use crate::heapam_visibility::OwnXact;
    use pgtypes::ProcNumber;
    use txn::clog::{Clog, XidStatus};
    use txn::procarray::{Finished, ProcArray};
    use txn::snapshot::Snapshot;

    /// Pages are handed out once each, in order, and none after `finish`.
    #[test]
    fn parallel_blocks_hand_out_each_page_once_until_finished() {
        let pb = ParallelBlocks {
            rel: RelFileId(7),
            nblocks: 5,
            next: std::sync::atomic::AtomicU32::new(0),
        };
        assert_eq!((pb.claim(), pb.claim()), (Some(0), Some(1)));
        pb.finish();
        assert_eq!(pb.claim(), None, "a failed participant ends the scan");
        assert_eq!(pb.claim(), None);
    }

    /// A heap plus clog and procarray, with transactions driven by hand.
    struct Env {
        _dir: tempfile::TempDir,
        heap: Heap,
        clog: Clog,
        pa: ProcArray,
    }

    /// One session's transaction.
    struct Tx {
        p: ProcNumber,
        xids: Vec<TransactionId>,
    }

    impl Tx {
        fn xid(&self) -> TransactionId {
            self.xids[0]
        }
    }

    impl Env {
        fn new(buffers: usize) -> Env {
            let dir = tempfile::tempdir().unwrap();
            let heap = Heap::open(dir.path(), buffers, ExtensionMode::Bulk, no_wal()).unwrap();
            let clog = Clog::open(dir.path()).unwrap();
            let pa = ProcArray::new(16, TransactionId::FIRST_NORMAL);
            Env {
                _dir: dir,
                heap,
                clog,
                pa,
            }
        }
        fn begin(&self) -> Tx {
            let p = self.pa.connect(16).unwrap();
            let xid = self.pa.assign_xid(p);
            Tx { p, xids: vec![xid] }
        }
        fn finish(&self, tx: &Tx, status: XidStatus) {
            self.clog.set_status(tx.xid(), &[], status);
            self.pa.end_transaction(Finished::Proc(tx.p), tx.xid());
            self.pa.disconnect(tx.p);
        }
        fn commit(&self, tx: Tx) {
            self.finish(&tx, XidStatus::Committed);
        }
        fn abort(&self, tx: Tx) {
            self.finish(&tx, XidStatus::Aborted);
        }
        /// A snapshot taken now (by a throwaway proc).
        fn snapshot(&self) -> Snapshot {
            let p = self.pa.connect(16).unwrap();
            let s = (*self.pa.get_snapshot(p, &mut None)).clone();
            self.pa
                .end_transaction(Finished::Proc(p), TransactionId::INVALID);
            self.pa.disconnect(p);
            s
        }
        fn cx<'a>(
            &'a self,
            snap: &'a Snapshot,
            own: &'a [TransactionId],
            curcid: u32,
        ) -> VisibilityContext<'a> {
            VisibilityContext {
                snapshot: snap,
                own: OwnXact {
                    xids: own,
                    curcid: CommandId(curcid),
                },
                clog: &self.clog,
                procarray: &self.pa,
                serializable: None,
            }
        }
        fn rows(&self, rel: RelFileId, cx: &VisibilityContext<'_>) -> Vec<Vec<u8>> {
            let mut out = Vec::new();
            self.heap
                .scan(rel, cx, &mut |_, d| {
                    out.push(d.to_vec());
                    Ok(ControlFlow::Continue(()))
                })
                .unwrap();
            out.sort();
            out
        }
        fn header(&self, rel: RelFileId, tid: ItemPointer) -> TupleHeader {
            self.heap.fetch_any(rel, tid, |h, _| *h).unwrap().unwrap()
        }
    }

    const REL: RelFileId = RelFileId(16384);

    #[test]
    fn insert_visible_after_commit_only() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let t1 = env.begin();
        let tid = env
            .heap
            .insert(REL, b"row1", t1.xid(), CommandId(0))
            .unwrap();
        let before = env.snapshot();
        assert!(
            env.rows(REL, &env.cx(&before, &[], 0)).is_empty(),
            "uncommitted insert invisible to others"
        );
        assert!(
            env.rows(REL, &env.cx(&before, &t1.xids, 0)).is_empty(),
            "own insert invisible to the same command"
        );
        assert_eq!(
            env.rows(REL, &env.cx(&before, &t1.xids, 1)),
            vec![b"row1".to_vec()],
            "own insert visible to the next command"
        );
        env.commit(t1);
        let after = env.snapshot();
        assert_eq!(
            env.rows(REL, &env.cx(&after, &[], 0)),
            vec![b"row1".to_vec()],
            "visible after commit"
        );
        assert!(
            env.rows(REL, &env.cx(&before, &[], 0)).is_empty(),
            "still invisible to the older (RR) snapshot"
        );
        let got = env
            .heap
            .fetch(REL, tid, &env.cx(&after, &[], 0), |d| d.to_vec())
            .unwrap();
        assert_eq!(got, Some(b"row1".to_vec()));
        assert_eq!(
            env.header(REL, tid).infomask & htup::XMIN_COMMITTED,
            htup::XMIN_COMMITTED,
            "hint bit set by the visibility check"
        );
    }

    #[test]
    fn aborted_insert_invisible_and_hinted() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let t1 = env.begin();
        let tid = env
            .heap
            .insert(REL, b"gone", t1.xid(), CommandId(0))
            .unwrap();
        env.abort(t1);
        let s = env.snapshot();
        assert!(
            env.rows(REL, &env.cx(&s, &[], 0)).is_empty(),
            "rolled back insert invisible"
        );
        assert_eq!(
            env.header(REL, tid).infomask & htup::XMIN_INVALID,
            htup::XMIN_INVALID
        );
        assert_eq!(
            env.heap.fetch_dirty(REL, tid, &env.cx(&s, &[], 0)).unwrap(),
            DirtyState::Dead
        );
    }

    #[test]
    fn own_transaction_cid_rules() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        let s = env.snapshot();
        let tid = env.heap.insert(REL, b"a", t.xid(), CommandId(0)).unwrap();
        // Command 1 deletes it.
        assert_eq!(
            env.heap
                .delete(REL, tid, t.xid(), &env.cx(&s, &t.xids, 1))
                .unwrap(),
            TmResult::Ok
        );
        assert_eq!(
            env.rows(REL, &env.cx(&s, &t.xids, 1)).len(),
            1,
            "deleted by the current command: still seen by it"
        );
        assert!(
            env.rows(REL, &env.cx(&s, &t.xids, 2)).is_empty(),
            "deleted by an earlier command: gone"
        );
        assert_eq!(
            env.heap
                .delete(REL, tid, t.xid(), &env.cx(&s, &t.xids, 1))
                .unwrap(),
            TmResult::SelfModified,
            "second delete in the same command"
        );
        assert_eq!(
            env.heap
                .delete(REL, tid, t.xid(), &env.cx(&s, &t.xids, 2))
                .unwrap(),
            TmResult::Invisible
        );
        // A subtransaction's delete that rolled back leaves the row live.
        let sub = env.pa.assign_subxid(t.p, t.xid());
        let tid2 = env.heap.insert(REL, b"b", t.xid(), CommandId(2)).unwrap();
        let with_sub = [t.xid(), sub];
        assert_eq!(
            env.heap
                .delete(REL, tid2, sub, &env.cx(&s, &with_sub, 3))
                .unwrap(),
            TmResult::Ok
        );
        assert!(env.rows(REL, &env.cx(&s, &with_sub, 4)).is_empty());
        env.clog.set_status(sub, &[], XidStatus::Aborted);
        assert_eq!(
            env.rows(REL, &env.cx(&s, &t.xids, 4)),
            vec![b"b".to_vec()],
            "delete by rolled-back subxact undone"
        );
        env.commit(t);
    }

    #[test]
    fn update_chain_and_concurrent_writer_results() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let t0 = env.begin();
        let v1 = env.heap.insert(REL, b"v1", t0.xid(), CommandId(0)).unwrap();
        env.commit(t0);

        let t1 = env.begin();
        let s1 = env.snapshot();
        let (r, v2) = env
            .heap
            .update(REL, v1, b"v2", t1.xid(), &env.cx(&s1, &t1.xids, 0))
            .unwrap();
        assert_eq!(r, TmResult::Ok);
        let v2 = v2.unwrap();
        assert_eq!(v2.block, v1.block, "fits on the same page");
        assert_eq!(
            env.header(REL, v1).ctid,
            v2,
            "old ctid points at the new version"
        );
        assert_eq!(
            env.rows(REL, &env.cx(&s1, &t1.xids, 1)),
            vec![b"v2".to_vec()],
            "updater sees its new version"
        );

        // A second writer sees BeingModified, and nothing changes.
        let t2 = env.begin();
        let s2 = env.snapshot();
        let cx2 = env.cx(&s2, &t2.xids, 0);
        assert_eq!(
            env.rows(REL, &cx2),
            vec![b"v1".to_vec()],
            "others see the old version meanwhile"
        );
        assert_eq!(
            env.heap.delete(REL, v1, t2.xid(), &cx2).unwrap(),
            TmResult::BeingModified { xmax: t1.xid() }
        );
        assert_eq!(
            env.heap.fetch_dirty(REL, v2, &cx2).unwrap(),
            DirtyState::InProgress(t1.xid())
        );
        let x1 = t1.xid();
        env.commit(t1);
        // After the commit: Updated{ctid}, and the (RR) snapshot still sees v1.
        assert_eq!(
            env.heap.update(REL, v1, b"x", t2.xid(), &cx2).unwrap(),
            (TmResult::Updated { ctid: v2, xmax: x1 }, None)
        );
        assert_eq!(env.rows(REL, &cx2), vec![b"v1".to_vec()]);
        // READ COMMITTED: a new snapshot, follow ctid and update v2.
        let s2b = env.snapshot();
        let cx2b = env.cx(&s2b, &t2.xids, 0);
        assert_eq!(env.rows(REL, &cx2b), vec![b"v2".to_vec()]);
        let (r, v3) = env.heap.update(REL, v2, b"v3", t2.xid(), &cx2b).unwrap();
        assert_eq!(r, TmResult::Ok);
        env.abort(t2);
        // The aborted update leaves v2 live, and it can be deleted.
        let s3 = env.snapshot();
        assert_eq!(
            env.rows(REL, &env.cx(&s3, &[], 0)),
            vec![b"v2".to_vec()],
            "aborted update undone"
        );
        let t3 = env.begin();
        assert_eq!(
            env.heap
                .delete(REL, v2, t3.xid(), &env.cx(&s3, &t3.xids, 0))
                .unwrap(),
            TmResult::Ok
        );
        assert_eq!(env.header(REL, v2).ctid, v2, "a delete resets ctid to self");
        env.commit(t3);
        let t4 = env.begin();
        let s4 = env.snapshot();
        assert_eq!(
            env.heap
                .delete(REL, v2, t4.xid(), &env.cx(&s4, &t4.xids, 0))
                .unwrap(),
            TmResult::Deleted
        );
        assert_eq!(
            env.heap
                .fetch_dirty(REL, v2, &env.cx(&s4, &t4.xids, 0))
                .unwrap(),
            DirtyState::Dead
        );
        assert_eq!(
            env.heap
                .fetch_dirty(REL, v3.unwrap(), &env.cx(&s4, &t4.xids, 0))
                .unwrap(),
            DirtyState::Dead
        );
        assert!(env.rows(REL, &env.cx(&s4, &[], 0)).is_empty());
    }

    #[test]
    fn update_to_another_page_when_full() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let t0 = env.begin();
        let big = vec![7u8; 1000];
        let mut tids = Vec::new();
        for _ in 0..7 {
            tids.push(env.heap.insert(REL, &big, t0.xid(), CommandId(0)).unwrap());
        }
        assert!(
            tids.iter().all(|t| t.block == BlockNumber(0)),
            "7 rows of 1 KB on one page"
        );
        env.commit(t0);
        let t1 = env.begin();
        let s = env.snapshot();
        let (r, new) = env
            .heap
            .update(
                REL,
                tids[3],
                &[8u8; 1000],
                t1.xid(),
                &env.cx(&s, &t1.xids, 0),
            )
            .unwrap();
        assert_eq!(r, TmResult::Ok);
        let new = new.unwrap();
        assert_ne!(
            new.block,
            BlockNumber(0),
            "no room: new version on another page"
        );
        assert_eq!(env.header(REL, tids[3]).ctid, new, "linked across pages");
        assert_eq!(env.header(REL, tids[3]).xmax, t1.xid());
        env.commit(t1);
        let s = env.snapshot();
        let rows = env.rows(REL, &env.cx(&s, &[], 0));
        assert_eq!(rows.len(), 7);
        assert_eq!(rows.iter().filter(|r| r[0] == 8).count(), 1);
    }

    #[test]
    fn copy_through_its_ring_leaves_the_pool_cached() {
        for mode in [ExtensionMode::Bulk, ExtensionMode::Single] {
            let dir = tempfile::tempdir().unwrap();
            // 256 buffers: a BULKWRITE ring of 32.
            let heap = Heap::open(dir.path(), 256, mode, no_wal()).unwrap();
            let (a, b) = (RelFileId(1), RelFileId(2));
            heap.create_relation(a).unwrap();
            heap.create_relation(b).unwrap();
            let rows: Vec<Vec<u8>> = (0..1000u32)
                .map(|i| format!("{i:0>100}").into_bytes())
                .collect();
            let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
            // Somebody's table, cached: ~18 pages.
            for _ in 0..4 {
                heap.multi_insert(a, &refs, TransactionId(3), CommandId(0), false)
                    .unwrap();
            }
            let na = heap.nblocks(a).unwrap();
            // A COPY of about three times the pool, batch after batch
            // through one bulk-insert state.
            let mut bulk = heap.bulk_insert_state();
            for _ in 0..40 {
                heap.multi_insert_bulk(b, &refs, TransactionId(4), CommandId(0), false, &mut bulk)
                    .unwrap();
            }
            assert!(
                heap.nblocks(b).unwrap() > 512,
                "{mode:?}: COPY bigger than the pool"
            );
            let reads = heap.bm.stats().reads;
            for blk in 0..na {
                drop(heap.bm.read_buffer(Heap::tag(a, BlockNumber(blk))).unwrap());
            }
            assert!(
                heap.bm.stats().reads - reads <= u64::from(na) / 10,
                "{mode:?}: the COPY left the other table cached"
            );
            let mut n = 0;
            heap.scan_all(b, &mut |_, _| {
                n += 1;
                Ok(())
            })
            .unwrap();
            assert_eq!(n, 40_000, "{mode:?}: every COPY row stored");
        }
    }

    #[test]
    fn concurrent_bulk_inserts_keep_to_their_own_pages() {
        for mode in [ExtensionMode::Bulk, ExtensionMode::Single] {
            let dir = tempfile::tempdir().unwrap();
            let heap = Heap::open(dir.path(), 1024, mode, no_wal()).unwrap();
            let rel = RelFileId(1);
            heap.create_relation(rel).unwrap();
            let rows: Vec<Vec<u8>> = (0..1000u32)
                .map(|i| format!("{i:0>90}").into_bytes())
                .collect();
            let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
            // Two COPYs taking turns batch by batch, as two sessions do.
            let (mut a, mut b) = (heap.bulk_insert_state(), heap.bulk_insert_state());
            let (mut pages_a, mut pages_b) = (Vec::new(), Vec::new());
            for _ in 0..6 {
                for (bulk, pages, xid) in [(&mut a, &mut pages_a, 3), (&mut b, &mut pages_b, 4)] {
                    let tids = heap
                        .multi_insert_bulk(
                            rel,
                            &refs,
                            TransactionId(xid),
                            CommandId(0),
                            false,
                            bulk,
                        )
                        .unwrap();
                    pages.extend(tids.iter().map(|t| t.block.0));
                }
            }
            pages_a.sort_unstable();
            pages_a.dedup();
            pages_b.sort_unstable();
            pages_b.dedup();
            let shared: Vec<u32> = pages_a
                .iter()
                .filter(|p| pages_b.binary_search(p).is_ok())
                .copied()
                .collect();
            assert!(
                shared.is_empty(),
                "{mode:?}: the two loads met on pages {shared:?}"
            );
            // Once both end, what they extended and left unused is
            // everyone's: the next load fills it before extending.
            drop((a, b));
            let before = heap.nblocks(rel).unwrap();
            let used = pages_a.len() + pages_b.len();
            let spare = before as usize - used;
            let mut c = heap.bulk_insert_state();
            let tids = heap
                .multi_insert_bulk(
                    rel,
                    &refs[..100],
                    TransactionId(5),
                    CommandId(0),
                    false,
                    &mut c,
                )
                .unwrap();
            // (single extends page by page: nothing is left over)
            if spare >= 2 {
                assert_eq!(heap.nblocks(rel).unwrap(), before, "{mode:?}: no extension");
                assert!(
                    tids.iter()
                        .any(|t| pages_a.binary_search(&t.block.0).is_err()
                            && pages_b.binary_search(&t.block.0).is_err()),
                    "{mode:?}: the pages nobody used were filled"
                );
            }
        }
    }

    #[test]
    fn frozen_multi_insert_is_visible_to_everyone() {
        let env = Env::new(64);
        env.heap.create_relation(REL).unwrap();
        let old = env.snapshot();
        let t = env.begin();
        let rows: Vec<Vec<u8>> = (0..2000u32).map(|i| i.to_be_bytes().repeat(10)).collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let tids = env
            .heap
            .multi_insert(REL, &refs, t.xid(), CommandId(0), true)
            .unwrap();
        assert_eq!(tids.len(), 2000);
        let mut sorted = tids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 2000, "distinct tids");
        assert_eq!(
            env.rows(REL, &env.cx(&old, &[], 0)).len(),
            2000,
            "frozen rows visible even to an older snapshot"
        );
        // Not frozen: a second batch is invisible until commit.
        let more = env
            .heap
            .multi_insert(REL, &refs[..100], t.xid(), CommandId(1), false)
            .unwrap();
        assert_eq!(more.len(), 100);
        assert_eq!(env.rows(REL, &env.cx(&env.snapshot(), &[], 0)).len(), 2000);
        env.commit(t);
        assert_eq!(env.rows(REL, &env.cx(&env.snapshot(), &[], 0)).len(), 2100);
        // 2100 rows of 72 bytes (32+40) = 76 bytes/row -> ~107 per page.
        let mut used: Vec<u32> = tids.iter().chain(&more).map(|t| t.block.0).collect();
        used.sort_unstable();
        used.dedup();
        assert!(used.len() <= 21, "pages filled densely: {}", used.len());
        // A bulk insert that had to extend again extends by at least as
        // much as it already had (PostgreSQL 16): the pages it did not
        // fill are in the FSM for the next insert.
        let nblocks = env.heap.nblocks(REL).unwrap();
        assert!(
            nblocks as usize <= 21 + crate::hio::MAX_EXTEND_BY,
            "{nblocks} blocks"
        );
    }

    /// A table four times bigger than shared_buffers, written then read back
    /// (also after a checkpoint and a fresh buffer pool).
    #[test]
    fn table_bigger_than_shared_buffers() {
        let env = Env::new(16);
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        let row = |i: u32| {
            let mut r = i.to_be_bytes().to_vec();
            r.resize(500, (i % 251) as u8);
            r
        };
        let mut tids = Vec::new();
        for i in 0..600u32 {
            tids.push(
                env.heap
                    .insert(REL, &row(i), t.xid(), CommandId(0))
                    .unwrap(),
            );
        }
        let batch: Vec<Vec<u8>> = (600..1200u32).map(row).collect();
        let refs: Vec<&[u8]> = batch.iter().map(|r| r.as_slice()).collect();
        tids.extend(
            env.heap
                .multi_insert(REL, &refs, t.xid(), CommandId(0), false)
                .unwrap(),
        );
        env.commit(t);
        let nblocks = env.heap.nblocks(REL).unwrap();
        assert!(
            nblocks as usize >= 4 * 16,
            "table of {nblocks} blocks vs 16 buffers"
        );
        assert!(env.heap.bufmgr().stats().evictions > 0);
        let s = env.snapshot();
        let cx = env.cx(&s, &[], 0);
        let expect: Vec<Vec<u8>> = {
            let mut v: Vec<_> = (0..1200u32).map(row).collect();
            v.sort();
            v
        };
        assert_eq!(env.rows(REL, &cx), expect, "every row back after eviction");
        for (i, tid) in tids.iter().enumerate().step_by(37) {
            assert_eq!(
                env.heap.fetch(REL, *tid, &cx, |d| d.to_vec()).unwrap(),
                Some(row(i as u32))
            );
        }
        env.heap.checkpoint().unwrap();
        let heap2 = Heap::open(env._dir.path(), 16, ExtensionMode::Single, no_wal()).unwrap();
        let mut n = 0;
        heap2
            .scan_all(REL, &mut |_, d| {
                assert_eq!(d.len(), 500);
                n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 1200, "all rows on disk after checkpoint");
    }

    #[test]
    fn concurrent_inserters_and_scanners() {
        let env = std::sync::Arc::new(Env::new(32));
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        let xid = t.xid();
        let handles: Vec<_> = (0..4u32)
            .map(|th| {
                let env = env.clone();
                std::thread::spawn(move || {
                    let s = env.snapshot();
                    let own = [xid];
                    for i in 0..500u32 {
                        let mut r = (th * 1000 + i).to_be_bytes().to_vec();
                        r.resize(100, 1);
                        if i % 50 == 0 {
                            let rows: Vec<Vec<u8>> = (0..10).map(|_| r.clone()).collect();
                            let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
                            env.heap
                                .multi_insert(REL, &refs, xid, CommandId(0), false)
                                .unwrap();
                        } else {
                            env.heap.insert(REL, &r, xid, CommandId(0)).unwrap();
                        }
                        if i % 100 == 0 {
                            // A scanner at the same time: never an error.
                            env.rows(REL, &env.cx(&s, &own, 1));
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        env.commit(t);
        let s = env.snapshot();
        let rows = env.rows(REL, &env.cx(&s, &[], 0));
        assert_eq!(rows.len(), 4 * (490 + 10 * 10), "every row exactly once");
    }

    /// Sessions bulk-inserting (COPY) and single-inserting into one
    /// relation at once, through a pool much smaller than the table, in both
    /// extension modes, while a scanner reads it: every row is there exactly
    /// once, and every page a scan reads is either new or valid.
    #[test]
    fn concurrent_bulk_inserters_lose_no_rows() {
        // The race window is small: several fresh relations per mode.
        let modes = [ExtensionMode::Bulk, ExtensionMode::Single];
        for mode in modes.into_iter().cycle().take(10) {
            let dir = tempfile::tempdir().unwrap();
            let heap = Arc::new(Heap::open(dir.path(), 16, mode, no_wal()).unwrap());
            heap.create_relation(REL).unwrap();
            let threads = 4u32;
            let per_thread = 6000u32;
            let batch = 250u32;
            let xid = TransactionId::FROZEN;
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let scanner = {
                let (heap, done) = (heap.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut last = 0usize;
                    while !done.load(std::sync::atomic::Ordering::Acquire) {
                        let mut n = 0usize;
                        heap.scan_all(REL, &mut |_, _| {
                            n += 1;
                            Ok(())
                        })
                        .unwrap();
                        assert!(n >= last, "{mode:?}: scan saw {n} rows after {last}");
                        last = n;
                    }
                })
            };
            let handles: Vec<_> = (0..threads)
                .map(|th| {
                    let heap = heap.clone();
                    std::thread::spawn(move || {
                        let row = |i: u32| {
                            let mut r = (th * per_thread + i).to_be_bytes().to_vec();
                            r.resize(60 + (i % 7) as usize * 10, th as u8);
                            r
                        };
                        let mut i = 0;
                        while i < per_thread {
                            if th == 3 && i % (2 * batch) == 0 {
                                // One session mixes in single-row inserts.
                                for j in i..i + batch {
                                    heap.insert(REL, &row(j), xid, CommandId(0)).unwrap();
                                }
                            } else {
                                let rows: Vec<Vec<u8>> = (i..i + batch).map(row).collect();
                                let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
                                heap.multi_insert(REL, &refs, xid, CommandId(0), true)
                                    .unwrap();
                            }
                            i += batch;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Release);
            scanner.join().unwrap();
            let mut seen = vec![0u8; (threads * per_thread) as usize];
            heap.scan_all(REL, &mut |_, d| {
                let id = u32::from_be_bytes(d[..4].try_into().unwrap());
                seen[id as usize] += 1;
                Ok(())
            })
            .unwrap();
            let missing = seen.iter().filter(|&&c| c == 0).count();
            let dup = seen.iter().filter(|&&c| c > 1).count();
            assert_eq!(
                (missing, dup),
                (0, 0),
                "{mode:?}: rows missing / duplicated"
            );
        }
    }

    /// Several sessions increment one counter row in READ COMMITTED style:
    /// on BeingModified wait for the holder, on Updated re-read the newest
    /// version. Rows are big, so updates often move to another page. No
    /// increment may be lost and exactly one version may be visible.
    #[test]
    fn concurrent_updates_of_one_row_lose_nothing() {
        let env = std::sync::Arc::new(Env::new(32));
        env.heap.create_relation(REL).unwrap();
        let t0 = env.begin();
        let mut row = 0u64.to_be_bytes().to_vec();
        row.resize(1500, 0);
        env.heap.insert(REL, &row, t0.xid(), CommandId(0)).unwrap();
        env.commit(t0);
        let threads = 4;
        let per_thread = 25;
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let env = env.clone();
                std::thread::spawn(move || {
                    let cancel = std::sync::atomic::AtomicBool::new(false);
                    for _ in 0..per_thread {
                        let tx = env.begin();
                        loop {
                            let s = env.snapshot();
                            let cx = env.cx(&s, &tx.xids, 0);
                            let mut cur = None;
                            env.heap
                                .scan(REL, &cx, &mut |tid, d| {
                                    cur =
                                        Some((tid, u64::from_be_bytes(d[..8].try_into().unwrap())));
                                    Ok(ControlFlow::Break(()))
                                })
                                .unwrap();
                            let (tid, v) = cur.expect("one version visible");
                            let mut row = (v + 1).to_be_bytes().to_vec();
                            row.resize(1500, 0);
                            match env.heap.update(REL, tid, &row, tx.xid(), &cx).unwrap().0 {
                                TmResult::Ok => break,
                                TmResult::BeingModified { xmax } => {
                                    env.pa
                                        .wait_for_xid(
                                            tx.p,
                                            xmax,
                                            std::time::Duration::from_secs(1),
                                            &cancel,
                                            txn::lmgr::WaitLimits::NONE,
                                        )
                                        .unwrap();
                                }
                                TmResult::Updated { .. } | TmResult::Deleted => {}
                                other => panic!("unexpected {other:?}"),
                            }
                        }
                        env.commit(tx);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let s = env.snapshot();
        let rows = env.rows(REL, &env.cx(&s, &[], 0));
        assert_eq!(rows.len(), 1, "exactly one live version");
        assert_eq!(
            u64::from_be_bytes(rows[0][..8].try_into().unwrap()),
            (threads * per_thread) as u64,
            "no lost update"
        );
        assert!(
            env.heap.nblocks(REL).unwrap() > 2,
            "updates moved across pages"
        );
    }

    /// hio (PostgreSQL 16's RelationAddBlocks): a single insert
    /// that must extend while others queue on the extension lock extends
    /// by one page per session (its own plus one per waiter), and the pages
    /// beyond its own go to the FSM, where the next inserters find them
    /// without extending again.
    #[test]
    fn single_insert_extends_for_the_waiters() {
        let env = Arc::new(Env::new(64));
        let rel = RelFileId(16390);
        env.heap.create_relation(rel).unwrap();
        let bm = env.heap.bufmgr().clone();
        let wait_for_waiters = |n: u32| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while bm.extension_lock_waiters(rel) < n {
                assert!(std::time::Instant::now() < deadline, "waiters never queued");
                std::thread::yield_now();
            }
        };
        let held = bm.lock_extension(rel);
        // Two sessions queue on the lock, each extending by one page.
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let env = env.clone();
                std::thread::spawn(move || {
                    let (_, bufs) = env
                        .heap
                        .bufmgr()
                        .extend_by(rel, ForkNumber::Main, 1, ExtendFlags::NONE, None)
                        .unwrap();
                    bufs.len()
                })
            })
            .collect();
        wait_for_waiters(2);
        // An insert into the empty relation must extend: it sees two
        // waiters, so it asks for three pages, then queues itself.
        let inserter = {
            let env = env.clone();
            std::thread::spawn(move || {
                let t = env.begin();
                let tid = env
                    .heap
                    .insert(rel, b"first", t.xid(), CommandId(0))
                    .unwrap();
                env.commit(t);
                tid
            })
        };
        wait_for_waiters(3);
        drop(held);
        for w in waiters {
            assert_eq!(w.join().unwrap(), 1);
        }
        let tid = inserter.join().unwrap();
        assert_eq!(
            env.heap.nblocks(rel).unwrap(),
            2 + 3,
            "the insert extended by 1 + 2 waiters"
        );
        // The two pages it extended for others are in the FSM: two rows
        // too big for the first page (but each fitting an empty one) land
        // there, without extending.
        let t = env.begin();
        let big = vec![7u8; 8090];
        let a = env.heap.insert(rel, &big, t.xid(), CommandId(0)).unwrap();
        let b = env.heap.insert(rel, &big, t.xid(), CommandId(1)).unwrap();
        env.commit(t);
        assert_eq!(env.heap.nblocks(rel).unwrap(), 5, "no further extension");
        assert_ne!(a.block, b.block);
        assert!(
            a.block.0 > tid.block.0 && b.block.0 > tid.block.0,
            "{a:?} {b:?} {tid:?}"
        );
    }

    #[test]
    fn truncate_and_drop() {
        let env = Env::new(16);
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        for i in 0..300u32 {
            env.heap
                .insert(REL, &[i as u8; 300], t.xid(), CommandId(0))
                .unwrap();
        }
        env.commit(t);
        env.heap.truncate_relation(REL).unwrap();
        assert_eq!(env.heap.nblocks(REL).unwrap(), 0);
        let s = env.snapshot();
        assert!(env.rows(REL, &env.cx(&s, &[], 0)).is_empty());
        let t = env.begin();
        let tid = env
            .heap
            .insert(REL, b"after", t.xid(), CommandId(0))
            .unwrap();
        assert_eq!(
            tid,
            ItemPointer {
                block: BlockNumber(0),
                offset: 1
            },
            "starts over at block 0"
        );
        env.commit(t);
        env.heap.drop_relation(REL).unwrap();
        assert!(!env.heap.smgr().exists(REL, ForkNumber::Main));
        assert_eq!(
            env.heap
                .fetch(REL, tid, &env.cx(&s, &[], 0), |_| ())
                .unwrap(),
            None,
            "no block, no row"
        );
    }

    #[test]
    fn corrupted_page_on_disk_is_an_error() {
        let env = Env::new(16);
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        env.heap.insert(REL, b"x", t.xid(), CommandId(0)).unwrap();
        env.commit(t);
        env.heap.checkpoint().unwrap();
        // Scribble over the header on disk, then read through a fresh pool.
        let mut p = Page::default();
        env.heap
            .smgr()
            .read(REL, ForkNumber::Main, BlockNumber(0), &mut p.0)
            .unwrap();
        p.0[14] = 0x01; // pd_upper below pd_lower
        p.0[15] = 0x00;
        env.heap
            .smgr()
            .write(REL, ForkNumber::Main, BlockNumber(0), &p.0)
            .unwrap();
        let heap2 = Heap::open(env._dir.path(), 16, ExtensionMode::Bulk, no_wal()).unwrap();
        let s = env.snapshot();
        let err = heap2
            .scan(REL, &env.cx(&s, &[], 0), &mut |_, _| {
                Ok(ControlFlow::Continue(()))
            })
            .unwrap_err();
        assert_eq!(err.code, pgtypes::error::sqlstate::DATA_CORRUPTED, "{err}");
        assert!(
            err.message.contains("invalid page in block 0"),
            "{}",
            err.message
        );
    }

    #[test]
    fn oversized_row_is_rejected() {
        let env = Env::new(16);
        env.heap.create_relation(REL).unwrap();
        let err = env
            .heap
            .insert(REL, &vec![0u8; 9000], TransactionId(3), CommandId(0))
            .unwrap_err();
        assert_eq!(err.code, "54000", "{err}");
    }

    #[test]
    fn pull_scan_matches_push_scan() {
        let env = Env::new(16);
        env.heap.create_relation(REL).unwrap();
        let t = env.begin();
        for i in 0..500u32 {
            env.heap
                .insert(REL, &i.to_be_bytes().repeat(30), t.xid(), CommandId(0))
                .unwrap();
        }
        env.commit(t);
        let s = env.snapshot();
        let cx = env.cx(&s, &[], 0);
        let mut scan = env.heap.begin_scan(REL).unwrap();
        let mut pulled = Vec::new();
        while let Some((_, d)) = scan.next_tuple(&env.heap, &cx).unwrap() {
            pulled.push(d.to_vec());
        }
        pulled.sort();
        assert_eq!(pulled, env.rows(REL, &cx));
        assert_eq!(pulled.len(), 500);
    }
    /// The free space of a block, read under its lock.
    fn free_of(env: &Env, block: u32) -> usize {
        let buf = env
            .heap
            .bm
            .read_buffer(Heap::tag(REL, BlockNumber(block)))
            .unwrap();
        let page = buf.read();
        page.heap_free_space()
    }

    /// Prunes block 0 with the current horizon (as VACUUM does).
    fn prune0(env: &Env) -> PruneStats {
        let buf = env
            .heap
            .bm
            .read_buffer(Heap::tag(REL, BlockNumber(0)))
            .unwrap();
        let horizon = env.pa.oldest_xmin();
        env.heap
            .prune_page(REL, &buf, horizon, &env.clog, &env.pa, PruneMode::Vacuum)
            .unwrap()
    }

    /// Pruning removes exactly the versions dead to everyone: an aborted
    /// insert and a committed delete older than every snapshot — not a
    /// delete an old snapshot still sees, not a live row, not a delete in
    /// progress. Live rows keep their tids and bytes; free space grows; a
    /// freed slot is reused by the next insert, after which the line
    /// pointer count has not grown.
    #[test]
    fn prune_removes_only_what_is_dead_to_all() {
        let env = Env::new(64);
        env.heap.enable_pruning();
        env.heap.create_relation(REL).unwrap();
        let t0 = env.begin();
        let row = |c: u8| vec![c; 400];
        let tids: Vec<ItemPointer> = (0..8u8)
            .map(|i| {
                env.heap
                    .insert(REL, &row(i), t0.xid(), CommandId(0))
                    .unwrap()
            })
            .collect();
        env.commit(t0);
        // An aborted insert.
        let ta = env.begin();
        let aborted = env
            .heap
            .insert(REL, &row(100), ta.xid(), CommandId(0))
            .unwrap();
        env.abort(ta);
        // A committed delete of row 1, seen by nobody.
        let del = |tid: ItemPointer| {
            let t = env.begin();
            let s = env.snapshot();
            assert_eq!(
                env.heap
                    .delete(REL, tid, t.xid(), &env.cx(&s, &t.xids, 0))
                    .unwrap(),
                TmResult::Ok
            );
            t
        };
        let t1 = del(tids[1]);
        env.commit(t1);
        // An old snapshot (a proc holding its xmin) that still sees row 2.
        let old = env.pa.connect(16).unwrap();
        let _old_snap = env.pa.get_snapshot(old, &mut None);
        let t2 = del(tids[2]);
        env.commit(t2);
        // A delete in progress of row 3.
        let t3 = del(tids[3]);

        let free_before = free_of(&env, 0);
        let st = prune0(&env);
        assert_eq!(st.removed, 2, "the aborted insert and row 1");
        assert_eq!(st.recently_dead, 2, "rows 2 and 3 are kept");
        assert!(free_of(&env, 0) >= free_before + 2 * 400, "free space grew");
        assert!(env
            .heap
            .fetch_any(REL, aborted, |_, _| ())
            .unwrap()
            .is_none());
        assert!(env
            .heap
            .fetch_any(REL, tids[1], |_, _| ())
            .unwrap()
            .is_none());
        for (i, tid) in tids.iter().enumerate().filter(|(i, _)| *i != 1) {
            assert_eq!(
                env.heap.fetch_any(REL, *tid, |_, d| d.to_vec()).unwrap(),
                Some(row(i as u8)),
                "row {i} keeps its tid and bytes"
            );
        }
        // Once the old snapshot and the deleter of row 3 are gone, the rest goes too.
        env.pa
            .end_transaction(Finished::Proc(old), TransactionId::INVALID);
        env.pa.disconnect(old);
        env.commit(t3);
        assert_eq!(prune0(&env).removed, 2, "rows 2 and 3 now");
        // Freed slots are reused: no new line pointer.
        let nlp = {
            let buf = env
                .heap
                .bm
                .read_buffer(Heap::tag(REL, BlockNumber(0)))
                .unwrap();
            let n = buf.read().max_offset();
            n
        };
        let t4 = env.begin();
        let again = env
            .heap
            .insert(REL, &row(200), t4.xid(), CommandId(0))
            .unwrap();
        env.commit(t4);
        assert_eq!(again.block, BlockNumber(0));
        assert!(again.offset <= nlp, "a freed line pointer was reused");
        let s = env.snapshot();
        let mut want: Vec<Vec<u8>> = [0u8, 4, 5, 6, 7, 200].iter().map(|&c| row(c)).collect();
        want.sort();
        assert_eq!(env.rows(REL, &env.cx(&s, &[], 0)), want);
    }

    /// A line pointer marked dead (LP_DEAD) is not reused by inserts; an
    /// unused one is.
    #[test]
    fn dead_line_pointers_are_not_reused() {
        let mut p = Page::default();
        p.init();
        for i in 0..4u8 {
            p.add_item(&[i; 64]).unwrap();
        }
        p.prune_execute(&[2], &[]).unwrap();
        assert_eq!(p.add_item(&[9; 64]), Some(5), "LP_DEAD stays taken");
        p.prune_execute(&[], &[3]).unwrap();
        assert_eq!(p.add_item(&[8; 64]), Some(3), "LP_UNUSED is reused");
        assert_eq!(p.add_item(&[7; 64]), Some(6), "then the array grows");
        assert_eq!(p.item(2), Err(ItemError::NoSuchItem));
        assert_eq!(p.item(1).unwrap(), &[0u8; 64][..]);
        assert_eq!(p.item(4).unwrap(), &[3u8; 64][..]);
        assert_eq!(p.item(3).unwrap(), &[8u8; 64][..]);
        assert!(p.verify().is_ok());
        // Redo's explicit placement: only an unused slot or the next one.
        assert_eq!(p.add_item_at(2, 10, |_| {}), None, "dead slot");
        assert_eq!(p.add_item_at(1, 10, |_| {}), None, "taken slot");
        assert_eq!(p.add_item_at(9, 10, |_| {}), None, "a gap");
        assert_eq!(p.add_item_at(7, 10, |b| b.fill(1)), Some(7));
    }

    /// Opportunistic pruning: a thousand updates of one row, each by a
    /// committed transaction with no other snapshot, keep the table to a
    /// page or two; with pruning off the same work needs many pages.
    #[test]
    fn hot_row_updates_stay_small_with_pruning() {
        for pruning in [true, false] {
            let env = Env::new(64);
            if pruning {
                env.heap.enable_pruning();
            }
            env.heap.create_relation(REL).unwrap();
            let t0 = env.begin();
            let mut tid = env
                .heap
                .insert(REL, &[0u8; 100], t0.xid(), CommandId(0))
                .unwrap();
            env.commit(t0);
            for i in 0..1000u32 {
                let t = env.begin();
                let s = env.snapshot();
                let cx = env.cx(&s, &t.xids, 0);
                // The read that finds the row prunes its page (as an index
                // fetch does in the executor).
                assert!(env.heap.fetch(REL, tid, &cx, |_| ()).unwrap().is_some());
                let mut data = vec![0u8; 100];
                data[..4].copy_from_slice(&i.to_le_bytes());
                let (r, new) = env.heap.update(REL, tid, &data, t.xid(), &cx).unwrap();
                assert_eq!(r, TmResult::Ok);
                tid = new.unwrap();
                env.commit(t);
            }
            let n = env.heap.nblocks(REL).unwrap();
            if pruning {
                assert!(n <= 2, "{n} blocks with pruning");
            } else {
                assert!(n >= 10, "{n} blocks without pruning");
            }
            let s = env.snapshot();
            let rows = env.rows(REL, &env.cx(&s, &[], 0));
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0][..4], 999u32.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod throughput {
    use super::*;

    /// CPU seconds used by this process so far (utime + stime from
    /// /proc/self/stat): on a loaded machine, ops per CPU-second is a steadier
    /// measure than wall-clock throughput.
    fn cpu_secs() -> f64 {
        let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after = s.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
            + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        ticks / 100.0
    }
    use crate::heapam_visibility::OwnXact;
    use txn::clog::Clog;
    use txn::procarray::ProcArray;
    use txn::snapshot::Snapshot;

    /// The storage half of the COPY experiment, without parsing or the
    /// network: `threads` sessions multi-insert 1000-row batches of ~90-byte
    /// rows into one relation, each through its own bulk-insert state (a
    /// COPY's BULKWRITE ring), `relation_extension` bulk vs single, with a
    /// pool smaller than the table (so ring victims are dirty and written
    /// out, WAL-less here). Run by hand:
    /// `cargo test --release -p common --lib storage::heapam::throughput::bulk_vs_single -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn bulk_vs_single_extension() {
        let rows: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| {
                format!("{:.17}", f64::from(i) / 997.0)
                    .repeat(5)
                    .into_bytes()
            })
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let batches_total = 960usize; // 960k rows, ~120 MB of table
        for threads in [1usize, 2, 4, 8] {
            let mut line = format!("{threads} threads:");
            let mut secs_of = Vec::new();
            for mode in [ExtensionMode::Single, ExtensionMode::Bulk] {
                let dir = tempfile::tempdir().unwrap();
                let heap = Arc::new(Heap::open(dir.path(), 4096, mode, tests::no_wal()).unwrap());
                let rel = RelFileId(1);
                heap.create_relation(rel).unwrap();
                let start = std::time::Instant::now();
                let cpu0 = cpu_secs();
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        let heap = heap.clone();
                        let refs: Vec<Vec<u8>> = refs.iter().map(|r| r.to_vec()).collect();
                        std::thread::spawn(move || {
                            let refs: Vec<&[u8]> = refs.iter().map(|r| r.as_slice()).collect();
                            // One COPY per thread: its batches share a
                            // bulk-insert state and its BULKWRITE ring.
                            let mut bulk = heap.bulk_insert_state();
                            for _ in 0..batches_total / threads {
                                heap.multi_insert_bulk(
                                    rel,
                                    &refs,
                                    TransactionId(3 + t as u64),
                                    CommandId(0),
                                    false,
                                    &mut bulk,
                                )
                                .unwrap();
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                let secs = start.elapsed().as_secs_f64();
                let cpu = cpu_secs() - cpu0;
                let mb = heap.nblocks(rel).unwrap() as f64 * 8192.0 / 1e6;
                line += &format!(
                    " {mode:?} {secs:.3} s ({cpu:.2} cpu-s) {:.0} MB/s;",
                    mb / secs
                );
                secs_of.push(secs);
            }
            println!("{line} bulk/single {:.2}x", secs_of[0] / secs_of[1]);
        }
    }

    /// Rough measurement of the fetch path (pin, share lock, visibility,
    /// copy, unpin), run by hand:
    /// `cargo test -p common --lib storage::heapam::throughput -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn fetch_throughput() {
        let dir = tempfile::tempdir().unwrap();
        let heap =
            Arc::new(Heap::open(dir.path(), 1024, ExtensionMode::Bulk, tests::no_wal()).unwrap());
        let clog = Arc::new(Clog::open(dir.path()).unwrap());
        let pa = Arc::new(ProcArray::new(8, TransactionId(10)));
        let rel = RelFileId(1);
        heap.create_relation(rel).unwrap();
        let rows: Vec<Vec<u8>> = (0..100_000u32)
            .map(|i| i.to_be_bytes().repeat(22))
            .collect();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let tids = Arc::new(
            heap.multi_insert(rel, &refs, TransactionId(3), CommandId(0), false)
                .unwrap(),
        );
        clog.set_status(TransactionId(3), &[], txn::clog::XidStatus::Committed);
        let per_thread = 1_000_000usize;
        let start = std::time::Instant::now();
        let cpu0 = cpu_secs();
        let hs: Vec<_> = (0..2)
            .map(|t| {
                let (heap, clog, pa, tids) = (heap.clone(), clog.clone(), pa.clone(), tids.clone());
                std::thread::spawn(move || {
                    let snap = Snapshot {
                        xmin: TransactionId(10),
                        xmax: TransactionId(10),
                        ..Default::default()
                    };
                    let cx = VisibilityContext {
                        snapshot: &snap,
                        own: OwnXact {
                            xids: &[],
                            curcid: CommandId(0),
                        },
                        clog: &clog,
                        procarray: &pa,
                        serializable: None,
                    };
                    let mut x = t as u64 + 1;
                    let mut sum = 0u64;
                    for _ in 0..per_thread {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        let tid = tids[(x >> 33) as usize % tids.len()];
                        sum += heap.fetch(rel, tid, &cx, |d| d[0] as u64).unwrap().unwrap();
                    }
                    sum
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu0;
        println!(
            "heap fetches: {:.2} M/s wall, {:.0} ns CPU per fetch, 2 threads",
            2.0 * per_thread as f64 / secs / 1e6,
            cpu * 1e9 / (2.0 * per_thread as f64)
        );
    }
}
