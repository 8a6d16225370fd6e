//! Heap pruning and VACUUM's heap pass (PostgreSQL's `pruneheap.c` and
//! the heap half of `vacuumlazy.c`): versions dead to every snapshot leave
//! their page.
//!
//! * [`prune_hint`] — the test every page access pays: one load of
//!   `pd_prune_xid`, then the page's free space;
//! * `Heap::prune_opt` — heap_page_prune_opt after a fetch or scan of a
//!   page that passed it, if the page lock is free at once;
//! * `Heap::prune_block` / `Heap::prune_page` — one page, in three steps
//!   that never hold a page lock while touching an index: classify and
//!   copy the dead versions under the exclusive content lock; remove their
//!   index entries through the [`PruneIndexHook`] the heap was built with;
//!   re-lock, check each candidate is still the same version (a freed slot
//!   may have been reused), free the slots, defragment, log one PRUNE
//!   record;
//! * `Heap::vacuum_relation` — every page of a relation, then its free
//!   space into the FSM.
//!
//! Invariants: a live version's tid never changes; one pruner per page at a
//! time (striped mutex), so two prunes cannot both free a slot; an index
//! entry goes before its slot is freed, never after.

use std::sync::atomic::Ordering;

use super::{bad_header, item_error, Heap, PRUNE_STRIPES};
use crate::bufmgr::{BufferRef, ReadMode};
use crate::bufpage::{Page, PD_PAGE_FULL};
use crate::heapam_visibility::{satisfies_vacuum, VacuumState, VisibilityContext};
use crate::htup::{self, TupleHeader};
use crate::xloginsert;
use pgtypes::error::PgResult;
use pgtypes::{BlockNumber, ItemPointer, RelFileId, TransactionId};
use txn::old_snapshot::INDEX_BLOCK;
use wal::Lsn;

/// Pruning looks at a page only when its free space is below this
/// (heap_page_prune_opt: max(fillfactor target, BLCKSZ / 10); our fillfactor
/// is 100, so BLCKSZ / 10), or an update found it full.
pub const PRUNE_FREE_SPACE: usize = pgtypes::BLCKSZ / 10;

/// Removes the index entries of row versions pruning is about to remove:
/// `(rel, [(tid, tuple data)])`. Returns false if it cannot (an index of
/// the relation is being built): the versions then stay. Given to the heap
/// when it is built ([`Heap::with_smgr`]); the engine passes its index
/// maintenance, which knows the indexes.
pub type PruneIndexHook =
    dyn Fn(RelFileId, &[(ItemPointer, &[u8])]) -> PgResult<bool> + Send + Sync;

/// Who prunes, which decides how hard [`Heap::prune_page`] tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneMode {
    /// heap_page_prune_opt after a page access: only if the page still
    /// looks worth it (`prune_hint`) and its lock is free right now.
    Opportunistic,
    /// An index scan met a version dead to all: prune its page if the lock
    /// is free, whatever its free space (its index entries go with it).
    Requested,
    /// VACUUM: every page, waiting for its lock.
    Vacuum,
}

/// What one [`Heap::prune_page`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Dead versions removed (line pointers made unused).
    pub removed: usize,
    /// Versions deleted but still needed by some snapshot.
    pub recently_dead: usize,
}

/// A dead version found by pruning's first pass, checked again in the
/// last: a slot that was freed and reused meanwhile has other xids.
pub(super) struct PruneCandidate {
    offset: u16,
    xmin: TransactionId,
    xmax: TransactionId,
    removed_xid: TransactionId,
    /// (start, end) of its data in the candidates' shared buffer.
    data: (usize, usize),
}

/// The pruning test cheap enough for every page access: the page has a
/// prune xid (something was deleted since the last prune: one load, and
/// pages never updated stop here) and it is short of room.
#[inline]
pub(super) fn prune_hint(page: &Page) -> Option<TransactionId> {
    let px = page.prune_xid();
    if px == 0 {
        return None;
    }
    (page.flags() & PD_PAGE_FULL != 0 || page.free_space() < PRUNE_FREE_SPACE)
        .then_some(TransactionId(px))
}

impl Heap {
    /// heap_page_prune_opt: called after a page access (no lock held) that
    /// found [`prune_hint`] true. Prunes if the page's prune xid is below
    /// the removable horizon and the page can be locked at once.
    pub(super) fn prune_opt(
        &self,
        rel: RelFileId,
        buf: &BufferRef<'_>,
        prune_xid: TransactionId,
        cx: &VisibilityContext<'_>,
    ) -> PgResult<()> {
        if !self.pruning.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(horizon) = cx.procarray.prune_horizon_limited(prune_xid, cx.snapshot) else {
            return Ok(());
        };
        self.prune_page(
            rel,
            buf,
            horizon,
            cx.clog,
            cx.procarray,
            PruneMode::Opportunistic,
        )?;
        Ok(())
    }

    /// Prunes `block` of `rel` at an index scan's request
    /// ([`PruneMode::Requested`]): the scan found a version there dead to
    /// all under `horizon`. Pruning removes that version's index entries
    /// safely (under the unique-check stripe lock, before freeing its
    /// slot); an index scan removing the entry itself could race with the
    /// slot's reuse by the same key and drop the new version's entry.
    pub fn prune_block(
        &self,
        rel: RelFileId,
        block: BlockNumber,
        horizon: TransactionId,
        clog: &txn::clog::Clog,
        procarray: &txn::procarray::ProcArray,
    ) -> PgResult<PruneStats> {
        if !self.pruning.load(Ordering::Relaxed) {
            return Ok(PruneStats::default());
        }
        let Some(buf) = self.pin_block(rel, block)? else {
            return Ok(PruneStats::default());
        };
        self.prune_page(rel, &buf, horizon, clog, procarray, PruneMode::Requested)
    }

    /// heap_page_prune: removes from the page of `buf` every version dead
    /// to all ([`satisfies_vacuum`] against `horizon`). Their index entries
    /// go first, through the [`PruneIndexHook`]; then their line pointers
    /// become LP_UNUSED and the page is defragmented, WAL-logged as one
    /// `HeapRecord::Prune`. Live versions keep their tids and bytes.
    ///
    /// Three steps, never holding the page lock while touching an index:
    ///
    /// 1. exclusive content lock: classify the versions, copy the dead
    ///    ones' data (their keys), note the page's next prune xid; release;
    /// 2. no page lock: remove their index entries (the hook takes each
    ///    key's unique-check stripe, so a unique check that already read a
    ///    tid from the index finishes with it before the entry goes);
    /// 3. exclusive content lock again: every candidate still there with the
    ///    same xmin/xmax (a dead version never changes) becomes LP_UNUSED.
    ///
    /// One pruner per page at a time (a striped mutex held through the three
    /// steps): otherwise a second prune could free a candidate's slot between
    /// steps 1 and 2, an insert reuse it for a newer version of the same key
    /// (a hot row's next version lands in the first free slot), and step 2
    /// remove that version's fresh index entry.
    ///
    /// The exclusive content lock is our cleanup lock: nobody reads a page
    /// without its content lock (scans and fetches copy what they need
    /// before unlocking, and no one keeps a pointer into a page), so no pin
    /// count is needed. Only VACUUM waits for the lock; the others give up
    /// if it is taken ([`PruneMode`]). A prune overlapping an index build
    /// frees nothing: the build's heap scan may have seen the versions.
    pub fn prune_page(
        &self,
        rel: RelFileId,
        buf: &BufferRef<'_>,
        horizon: TransactionId,
        clog: &txn::clog::Clog,
        procarray: &txn::procarray::ProcArray,
        mode: PruneMode,
    ) -> PgResult<PruneStats> {
        let wait = mode == PruneMode::Vacuum;
        let mut stats = PruneStats::default();
        let builds = self.builds_started.load(Ordering::SeqCst);
        if self.builds_active.load(Ordering::SeqCst) != 0 {
            return Ok(stats);
        }
        let block = buf.block();
        let stripe = &self.prune_stripes[(rel.0 as usize)
            .wrapping_mul(31)
            .wrapping_add(block.0 as usize)
            % PRUNE_STRIPES];
        // Held through all three steps; only VACUUM waits for it.
        let _one_pruner = match mode {
            PruneMode::Vacuum => stripe.lock(),
            _ => match stripe.try_lock() {
                Some(g) => g,
                None => return Ok(stats),
            },
        };
        let lock = || {
            if wait {
                Some(buf.write())
            } else {
                buf.try_write()
            }
        };
        let mut cands: Vec<PruneCandidate> = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        // (1) Classify.
        {
            let Some(mut page) = lock() else {
                return Ok(stats);
            };
            if page.is_new() || (mode == PruneMode::Opportunistic && prune_hint(&page).is_none()) {
                return Ok(stats); // someone else pruned it meanwhile
            }
            let mut next_prune = u64::MAX;
            for off in 1..=page.max_offset() {
                let Ok(item) = page.item(off) else { continue };
                let tid = ItemPointer { block, offset: off };
                let h = TupleHeader::read(item).ok_or_else(|| bad_header(rel, tid))?;
                match satisfies_vacuum(&h, horizon, clog, procarray) {
                    VacuumState::Dead { removed_xid } => {
                        let start = data.len();
                        data.extend_from_slice(htup::tuple_data(item));
                        cands.push(PruneCandidate {
                            offset: off,
                            xmin: h.xmin,
                            xmax: h.xmax,
                            removed_xid,
                            data: (start, data.len()),
                        });
                    }
                    VacuumState::RecentlyDead { xmax } => {
                        stats.recently_dead += 1;
                        next_prune = next_prune.min(xmax.0);
                    }
                    VacuumState::Live => {}
                }
            }
            if cands.is_empty() {
                // Only the hint moves on (no WAL: like a hint bit).
                let next = if next_prune == u64::MAX {
                    0
                } else {
                    next_prune
                };
                if page.prune_xid() != next {
                    page.set_prune_xid(next);
                    self.mark_dirty_hint(&buf, &mut page);
                }
                return Ok(stats);
            }
        }
        // old_snapshot_threshold: the versions the ordinary horizon would
        // have kept (`horizon` may be the limited one) are recorded
        // relation-wide before their index entries go, and per page under
        // the page lock below, so a reader that misses them finds the
        // record (txn::old_snapshot).
        let early = if procarray.old_snapshot().enabled() {
            early_removals(&cands, procarray)
        } else {
            Vec::new()
        };
        if !early.is_empty() {
            procarray
                .old_snapshot()
                .record_early(rel.0, INDEX_BLOCK, &early, Lsn(u64::MAX));
        }
        // (2) Index entries.
        if let Some(hook) = &self.prune_hook {
            let items: Vec<(ItemPointer, &[u8])> = cands
                .iter()
                .map(|c| {
                    (
                        ItemPointer {
                            block,
                            offset: c.offset,
                        },
                        &data[c.data.0..c.data.1],
                    )
                })
                .collect();
            if !hook(rel, &items)? {
                return Ok(stats);
            }
        }
        // (3) Free the slots.
        let Some(mut page) = lock() else {
            return Ok(stats); // entries gone, versions stay: the next prune frees them
        };
        if self.builds_active.load(Ordering::SeqCst) != 0
            || self.builds_started.load(Ordering::SeqCst) != builds
        {
            return Ok(stats);
        }
        let mut unused = Vec::with_capacity(cands.len());
        let mut latest_removed = TransactionId::INVALID;
        for c in &cands {
            let same = page.item(c.offset).ok().and_then(TupleHeader::read);
            if same.is_some_and(|h| h.xmin == c.xmin && h.xmax == c.xmax) {
                unused.push(c.offset);
                latest_removed = latest_removed.max(c.removed_xid);
            }
        }
        if unused.is_empty() {
            return Ok(stats);
        }
        // The next prune xid, over what stays (deleters may have come since).
        let mut next_prune = 0u64;
        for off in 1..=page.max_offset() {
            // (ascending: candidates were collected in offset order)
            if unused.binary_search(&off).is_ok() {
                continue;
            }
            let Ok(item) = page.item(off) else { continue };
            if let Some(h) = TupleHeader::read(item) {
                if !h.xmax_is_invalid() && h.infomask & htup::XMAX_LOCK_ONLY == 0 {
                    next_prune = if next_prune == 0 {
                        h.xmax.0
                    } else {
                        next_prune.min(h.xmax.0)
                    };
                }
            }
        }
        let ins = self.xlog.begin_page_change();
        if let Some(ins) = &ins {
            ins.before_change(buf.tag(), &page, false)?;
        }
        page.prune_execute(&[], &unused)
            .map_err(|e| item_error(rel, ItemPointer { block, offset: 0 }, e))?;
        page.set_prune_xid(next_prune);
        page.clear_flags(PD_PAGE_FULL);
        buf.mark_dirty();
        // WAL: XLOG_HEAP2_PRUNE (unused line pointers, latest removed xid); PageSetLSN.
        if let Some(ins) = ins {
            let end = ins.insert(TransactionId::INVALID, |p| {
                xloginsert::encode_heap_prune(p, rel.0, block.0, latest_removed.0, &[], &unused)
            })?;
            page.set_lsn(end);
        }
        if !early.is_empty() {
            // Only what this step freed (a candidate may have changed).
            let freed: Vec<_> = cands
                .iter()
                .filter(|c| unused.binary_search(&c.offset).is_ok())
                .filter(|c| early.contains(&(c.xmin, c.xmax)))
                .map(|c| (c.xmin, c.xmax))
                .collect();
            procarray
                .old_snapshot()
                .record_early(rel.0, block.0, &freed, page.lsn());
        }
        let avail = page.heap_free_space();
        drop(page);
        self.fsm.record(rel, block, avail);
        stats.removed = unused.len();
        Ok(stats)
    }

    /// VACUUM's heap pass (lazy_scan_heap without a visibility map): prunes
    /// every page of `rel` against `horizon`, waiting for each page's lock,
    /// and records every page's free space in the FSM so inserts find it.
    /// Returns the totals. Does nothing on a node that may not prune.
    pub fn vacuum_relation(
        &self,
        rel: RelFileId,
        horizon: TransactionId,
        clog: &txn::clog::Clog,
        procarray: &txn::procarray::ProcArray,
    ) -> PgResult<PruneStats> {
        let mut total = PruneStats::default();
        if !self.pruning.load(Ordering::Relaxed) {
            return Ok(total);
        }
        let nblocks = self.nblocks(rel)?;
        let mut ring = self.scan_ring(nblocks);
        for b in 0..nblocks {
            let block = BlockNumber(b);
            let buf =
                self.bm
                    .read_buffer_mode(Self::tag(rel, block), ReadMode::Normal, ring.as_mut())?;
            let st = self.prune_page(rel, &buf, horizon, clog, procarray, PruneMode::Vacuum)?;
            total.removed += st.removed;
            total.recently_dead += st.recently_dead;
            let avail = {
                let page = buf.read();
                if page.is_new() {
                    continue;
                }
                page.heap_free_space()
            };
            self.fsm.record(rel, block, avail);
        }
        // The TOAST relation after the table: a removed version's index
        // keys are decoded from its data, which never needs its chunks
        // (indexed columns stay in line), so the order is only tidy.
        if let Some(t) = self.toast_relation_of(rel) {
            let st = self.vacuum_relation(t, horizon, clog, procarray)?;
            total.removed += st.removed;
            total.recently_dead += st.recently_dead;
        }
        Ok(total)
    }
}

/// The (xmin, xmax) of the candidates the ordinary horizon would have
/// kept: removed by a committed deleter at or above it (an aborted
/// inserter's version, or one its own inserter deleted, no snapshot sees).
#[cold]
fn early_removals(
    cands: &[PruneCandidate],
    procarray: &txn::procarray::ProcArray,
) -> Vec<(TransactionId, TransactionId)> {
    let mut out = Vec::new();
    let mut ordinary = None;
    for c in cands {
        if c.removed_xid != c.xmax || c.xmin == c.xmax {
            continue;
        }
        let o = *ordinary.get_or_insert_with(|| procarray.oldest_xmin());
        if c.xmax >= o {
            out.push((c.xmin, c.xmax));
        }
    }
    out
}
