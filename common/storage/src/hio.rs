//! Heap insertion: where does a new tuple go (PostgreSQL's hio.c,
//! RelationGetBufferForTuple)?
//!
//! 1. The operation's current page: a bulk insert's page in its
//!    [`BulkInsertState`] (or, once that is full, the next page the bulk
//!    insert extended for itself), otherwise the relation's shared *target
//!    block* (the last page a single insert used).
//! 2. Else a page the FSM says has room (a page found full is recorded with
//!    its real free space in the same FSM call).
//! 3. (bulk) Pages the insert extended for itself come before FSM pages.
//! 4. Else extend the relation through [`BufMgr::extend_by`] (which finds
//!    its victim buffers before taking the relation extension lock and
//!    holds that lock only to map the new blocks and grow the file). By how
//!    much (`relation_extension = bulk`, PostgreSQL 16's RelationAddBlocks):
//!    a single insert by one page, a bulk insert by the pages it still
//!    needs (estimated from the bytes left to insert) — either times one
//!    plus the number of sessions waiting for the extension lock at that
//!    moment (capped at [`MAX_EXTEND_BY`] beyond what the insert needs), so
//!    a queue of extenders is served by one extension; and a bulk insert
//!    by at least as many pages as it has extended by so far (up to
//!    [`MAX_EXTEND_BY`]), so a COPY quickly extends 64 pages at a time
//!    rather than one batch's 16. The first new page
//!    is initialised and returned; the others are let go uninitialised.
//!    A bulk insert keeps them in its [`BulkInsertState`] and fills them
//!    itself — *not* published in the FSM until the bulk insert ends, so
//!    concurrent inserters do not fight over them; a single insert records
//!    them in the FSM for the waiters, after letting go of its own page's
//!    content lock (then locks it again and re-checks its free space).
//!    `relation_extension = single` always extends by one page with the
//!    victim taken under the lock (PostgreSQL 15), for comparison.
//!
//! The page comes back pinned and exclusively locked ([`LockedBuffer`]).
//! The FSM is a hint: the real free space is always checked under the
//! content lock. A new (all-zero) page is initialised by whoever locks it
//! first (`// WAL:` the insert record carries the "init page" flag).
//!
//! Locks: no content lock is held on entry; at most one content lock is
//! held at any time here (the new pages `extend_by` returns locked are let
//! go at once, all but the first); the FSM is updated with no content lock
//! held.
//! The target-block table is a leaf lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::bufmgr::{BufMgr, BufferAccessStrategy, ExtendFlags, ReadMode, StrategyKind};
use super::bufpage::{maxalign, HEADER_SIZE as PAGE_HEADER_SIZE, ITEM_ID_SIZE, MAX_ITEM_SIZE};
use super::fsm::FreeSpaceMap;
use super::{StorageError, StorageResult};
use pgtypes::{BlockNumber, BufferTag, ForkNumber, RelFileId, BLCKSZ};

/// PostgreSQL 16's MAX_BUFFERS_TO_EXTEND_BY: the most pages one extension
/// adds on behalf of waiting sessions (a bulk insert may ask for more, up to
/// the buffer manager's pin limit, for the pages it will fill itself).
pub const MAX_EXTEND_BY: usize = 64;

/// The free space of a new (empty) page, as recorded in the FSM.
const EMPTY_PAGE_FREE: usize = BLCKSZ - PAGE_HEADER_SIZE - ITEM_ID_SIZE;

/// The `relation_extension` setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExtensionMode {
    /// PostgreSQL 16: victims found outside the extension lock; extend by
    /// as many pages as a bulk insert needs, or by more than one page when
    /// other sessions wait for the extension lock.
    #[default]
    Bulk,
    /// PostgreSQL 15: always one page at a time, the victim buffer found,
    /// written out if dirty and zeroed under the extension lock.
    Single,
}

impl ExtensionMode {
    /// Parses the setting's value.
    pub fn parse(s: &str) -> Option<ExtensionMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bulk" => Some(ExtensionMode::Bulk),
            "single" => Some(ExtensionMode::Single),
            _ => None,
        }
    }
}

/// A page pinned and locked exclusively (defined beside the buffer manager,
/// whose [`BufMgr::extend_by`] returns new pages already locked).
pub use super::bufmgr::LockedBuffer;

/// The shared per-relation target blocks (PostgreSQL keeps one per backend
/// in the relcache; here all sessions share one, which packs pages densely).
#[derive(Default)]
pub struct TargetBlocks {
    map: RwLock<HashMap<RelFileId, Arc<AtomicU32>>>,
}

impl TargetBlocks {
    fn slot(&self, rel: RelFileId) -> Option<Arc<AtomicU32>> {
        self.map.read().get(&rel).cloned()
    }
    /// The relation's target block, if any.
    pub fn get(&self, rel: RelFileId) -> Option<BlockNumber> {
        let b = self.slot(rel)?.load(Ordering::Relaxed);
        (b != BlockNumber::INVALID.0).then_some(BlockNumber(b))
    }
    /// Sets the target block.
    pub fn set(&self, rel: RelFileId, block: BlockNumber) {
        if let Some(s) = self.slot(rel) {
            s.store(block.0, Ordering::Relaxed);
            return;
        }
        self.map
            .write()
            .entry(rel)
            .or_insert_with(|| Arc::new(AtomicU32::new(block.0)))
            .store(block.0, Ordering::Relaxed);
    }
    /// Records that the relation was seen since start-up (without a target
    /// block of its own yet).
    pub fn mark_known(&self, rel: RelFileId) {
        if !self.known(rel) {
            self.map
                .write()
                .entry(rel)
                .or_insert_with(|| Arc::new(AtomicU32::new(BlockNumber::INVALID.0)));
        }
    }
    /// True once the relation was seen since start-up.
    pub fn known(&self, rel: RelFileId) -> bool {
        self.map.read().contains_key(&rel)
    }
    /// Forgets the relation (truncate, drop).
    pub fn forget(&self, rel: RelFileId) {
        self.map.write().remove(&rel);
    }
}

/// State of one bulk insert (GetBulkInsertState: COPY, INSERT … SELECT,
/// multi-row INSERT), kept for the whole statement: the
/// [`StrategyKind::BulkWrite`] ring its pages go through, the page being
/// filled and the pages it extended for itself. Batch after batch (one
/// `multi_insert` call each) the insert goes on filling its own pages; only
/// when the state is dropped, at the end of the statement (or its error),
/// do its unused pages and its last page's free space go to the FSM — so
/// concurrent bulk inserts never meet on each other's pages (PostgreSQL
/// 16's `next_free` / `last_free`).
pub struct BulkInsertState {
    /// The page being filled.
    current: Option<BlockNumber>,
    /// The current page was found full: skip it next time.
    current_full: bool,
    /// The current page's free space when this insert last let go of it.
    current_free: usize,
    /// Pages extended for this insert, not yet used, not in the FSM.
    pending: Vec<BlockNumber>,
    /// Bytes (with line pointers) still to be inserted in this batch.
    remaining_bytes: usize,
    /// Pages this insert has extended the relation by so far, over all its
    /// batches (PostgreSQL 16's `already_extended_by`).
    already_extended_by: usize,
    /// The ring every page of this insert is read and extended through
    /// (none for a multi-row INSERT … VALUES, as in PostgreSQL).
    strategy: Option<BufferAccessStrategy>,
    /// Where the unused pages are published when the insert ends, and the
    /// relation (known from the first page asked for).
    fsm: Arc<FreeSpaceMap>,
    rel: Option<RelFileId>,
}

impl std::fmt::Debug for BulkInsertState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BulkInsertState")
            .field("current", &self.current)
            .field("pending", &self.pending.len())
            .field("already_extended_by", &self.already_extended_by)
            .finish_non_exhaustive()
    }
}

impl BulkInsertState {
    /// A bulk insert through `bm`, with its own BULKWRITE ring, publishing
    /// its leftover pages in `fsm` when dropped.
    pub fn new(bm: &BufMgr, fsm: Arc<FreeSpaceMap>) -> BulkInsertState {
        let mut s = BulkInsertState::without_ring(fsm);
        s.strategy = Some(bm.access_strategy(StrategyKind::BulkWrite));
        s
    }
    /// A bulk insert through the shared pool like any single insert (a
    /// multi-row INSERT … VALUES).
    pub fn without_ring(fsm: Arc<FreeSpaceMap>) -> BulkInsertState {
        BulkInsertState {
            current: None,
            current_full: false,
            current_free: 0,
            pending: Vec::new(),
            remaining_bytes: 0,
            already_extended_by: 0,
            strategy: None,
            fsm,
            rel: None,
        }
    }
    /// Starts a batch of rows whose stored sizes (tuple header included)
    /// sum, MAXALIGNed plus one line pointer each, to `total_bytes`.
    pub fn begin_batch(&mut self, total_bytes: usize) {
        self.remaining_bytes = total_bytes;
    }
    /// The inserter used `bytes` (aligned tuple + line pointer).
    pub fn consumed(&mut self, bytes: usize) {
        self.remaining_bytes = self.remaining_bytes.saturating_sub(bytes);
    }
    /// The inserter let go of the current page with `free` bytes left.
    pub fn filled(&mut self, free: usize) {
        self.current_free = free;
    }
    /// The current page cannot take the next row.
    pub fn mark_current_full(&mut self) {
        self.current_full = true;
    }
    fn pages_needed(&self) -> usize {
        let per_page = BLCKSZ - PAGE_HEADER_SIZE;
        self.remaining_bytes.div_ceil(per_page).max(1)
    }
}

impl Drop for BulkInsertState {
    /// FreeBulkInsertState: the pages extended for this insert and never
    /// used, and the free space of the page it filled last, go to the FSM
    /// for everyone (an error mid-statement included: the rows there are
    /// dead, the space is not lost).
    fn drop(&mut self) {
        let Some(rel) = self.rel else {
            return;
        };
        for b in self.pending.drain(..) {
            self.fsm.record(rel, b, EMPTY_PAGE_FREE);
        }
        if let Some(cur) = self.current.take() {
            self.fsm.record(rel, cur, self.current_free);
        }
    }
}

/// Space a tuple of `len` bytes takes on a page, line pointer included.
pub fn space_for(len: usize) -> usize {
    maxalign(len) + ITEM_ID_SIZE
}

/// Everything hio needs from the heap.
pub struct Hio<'a> {
    /// The buffer pool.
    pub bm: &'a BufMgr,
    /// The free space map.
    pub fsm: &'a Arc<FreeSpaceMap>,
    /// Shared target blocks.
    pub targets: &'a TargetBlocks,
    /// `relation_extension`.
    pub mode: ExtensionMode,
}

impl<'a> Hio<'a> {
    fn lock(
        &self,
        rel: RelFileId,
        block: BlockNumber,
        strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<LockedBuffer<'a>> {
        let tag = BufferTag {
            rel,
            fork: ForkNumber::Main,
            block,
        };
        let buf = self.bm.read_buffer_mode(tag, ReadMode::Normal, strategy)?;
        let mut page = buf.write();
        if page.is_new() {
            // A block extended but never initialised (or zeroed by a crash
            // during extension).
            // WAL: the insert that follows is logged with XLOG_HEAP_INIT_PAGE.
            page.init();
            buf.mark_dirty();
        }
        Ok(LockedBuffer { page, buf })
    }

    /// RelationGetBufferForTuple: a page with room for a tuple of `len`
    /// bytes (header included), pinned and locked exclusively.
    pub fn get_buffer_for_tuple(
        &self,
        rel: RelFileId,
        len: usize,
        mut bulk: Option<&mut BulkInsertState>,
    ) -> StorageResult<LockedBuffer<'a>> {
        if len > MAX_ITEM_SIZE {
            return Err(StorageError::TupleTooBig {
                size: len,
                max: MAX_ITEM_SIZE,
            });
        }
        let nblocks = self.bm.smgr().nblocks(rel, ForkNumber::Main)?;
        // Step 1: the operation's current page, or (bulk) the next page it
        // extended for itself, or the relation's target block.
        let mut target = None;
        // A bulk insert past its first page never goes back to the shared
        // target or the last page: those are other inserters' pages (a
        // concurrent COPY's current or extended-for-itself page), where it
        // would only wait for their content lock.
        let mut shared_target = true;
        if let Some(b) = bulk.as_deref_mut() {
            shared_target = b.rel.replace(rel).is_none();
            if b.current.is_some() && !b.current_full {
                target = b.current;
            } else {
                b.current = None;
                b.current_full = false;
                target = b.pending.pop();
            }
        }
        if target.is_none() && shared_target {
            target = self.targets.get(rel);
            if target.is_none() {
                if !self.targets.known(rel) && nblocks > 0 {
                    // First insert since start-up: the FSM is empty (see
                    // fsm.rs), so try the last page as PostgreSQL does
                    // without an FSM.
                    target = Some(BlockNumber(nblocks - 1));
                }
                // From now on the FSM (which every insert feeds) knows better.
                self.targets.mark_known(rel);
            }
        }
        if target.is_none() {
            // Step 2: the FSM.
            target = self.fsm.search(rel, len);
        }

        let mut visited = 0u32;
        while let Some(t) = target {
            if t.0 >= nblocks {
                break; // truncated since recorded
            }
            let lb = self.lock(
                rel,
                t,
                bulk.as_deref_mut().and_then(|b| b.strategy.as_mut()),
            )?;
            if lb.page.fits(len) {
                self.adopt(rel, t, bulk.as_deref_mut());
                return Ok(lb);
            }
            let avail = lb.page.heap_free_space();
            drop(lb);
            visited += 1;
            // Step 3 (bulk): our own extended pages before anyone else's.
            target = match bulk.as_deref_mut().and_then(|b| b.pending.pop()) {
                Some(p) => {
                    self.fsm.record(rel, t, avail);
                    Some(p)
                }
                None => self.fsm.record_and_search(rel, t, avail, len),
            };
            // Never chase stale FSM entries for ever.
            if visited > 1000 {
                target = None;
            }
        }

        // Step 4: extend.
        let (n, flags) = match (self.mode, bulk.as_deref()) {
            // PostgreSQL 15: one page, victim found under the lock.
            (ExtensionMode::Single, _) => (1, ExtendFlags::VICTIMS_UNDER_LOCK),
            (ExtensionMode::Bulk, b) => {
                // RelationAddBlocks: what this insert needs (one page, or
                // what a bulk insert still has to place), times one plus
                // the sessions queued on the extension lock right now —
                // they would each extend next, so extend for them too.
                let needed = b.map_or(1, BulkInsertState::pages_needed);
                let waiters = self.bm.extension_lock_waiters(rel) as usize;
                let scaled = needed.saturating_mul(1 + waiters);
                // A bulk insert that extended before will very likely
                // extend again: at least by as much as it already has,
                // ramping up to MAX_EXTEND_BY (PostgreSQL 16). A COPY's
                // 1,000-row batch needs about 16 pages: without the ramp
                // every batch would take the extension lock and make a
                // fallocate call for 16 pages; with it, one call is for 64.
                let ramp = b.map_or(0, |b| b.already_extended_by.min(MAX_EXTEND_BY));
                (
                    scaled.max(ramp).min(MAX_EXTEND_BY.max(needed)),
                    ExtendFlags::NONE,
                )
            }
        };
        let strategy = bulk.as_deref_mut().and_then(|b| b.strategy.as_mut());
        let (first, bufs) = self
            .bm
            .extend_by(rel, ForkNumber::Main, n, flags, strategy)?;
        let mut bufs = bufs.into_iter();
        let Some(LockedBuffer { mut page, buf }) = bufs.next() else {
            return Err(StorageError::CorruptedPage {
                rel,
                block: first,
                detail: "extension returned no buffer".into(),
            });
        };
        // The other new pages are let go uninitialised: whoever locks one
        // first initialises it (`lock` above), and a scan skips new pages.
        let extra: Vec<BlockNumber> = bufs.map(|lb| lb.buf.block()).collect();
        // WAL: the first insert on the page is logged with XLOG_HEAP_INIT_PAGE.
        page.init();
        buf.mark_dirty();
        match bulk {
            Some(b) => {
                // Ours to fill, in ascending block order (popped from the
                // end); published in the FSM when the bulk insert ends.
                b.already_extended_by += 1 + extra.len();
                b.pending.extend(extra);
                b.pending.sort_unstable_by(|a, c| c.cmp(a));
                self.adopt(rel, first, Some(b));
                Ok(LockedBuffer { page, buf })
            }
            None if extra.is_empty() => {
                self.adopt(rel, first, None);
                Ok(LockedBuffer { page, buf })
            }
            None => {
                // Pages extended for the waiters go to the FSM — with no
                // content lock held, so let go of ours (keeping the pin),
                // record, lock again and re-check the free space.
                drop(page);
                for &blk in &extra {
                    self.fsm.record(rel, blk, EMPTY_PAGE_FREE);
                }
                let page = buf.write();
                if page.fits(len) {
                    self.adopt(rel, first, None);
                    return Ok(LockedBuffer { page, buf });
                }
                // Filled meanwhile (it was reachable as the relation's last
                // page... only by a session that never inserted before):
                // start over; the FSM now lists the other new pages.
                drop(page);
                drop(buf);
                self.get_buffer_for_tuple(rel, len, None)
            }
        }
    }

    fn adopt(&self, rel: RelFileId, block: BlockNumber, bulk: Option<&mut BulkInsertState>) {
        match bulk {
            Some(b) => {
                b.current = Some(block);
                b.current_full = false;
            }
            None => self.targets.set(rel, block),
        }
    }
}
