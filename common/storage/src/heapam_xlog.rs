//! Heap, full-page-image and relation-file redo (PostgreSQL's
//! `heapam_xlog.c` with the page part of `xlog_redo` and `smgr_redo`): the
//! storage half of replaying WAL. `common::redo::apply` dispatches each
//! record here; what replay must do beyond pages and files — a standby's
//! indexes and its snapshot conflicts, the catalog's OID counter — goes
//! through [`HeapRedoHooks`], which the engine implements.
//!
//! ## Idempotence: the page LSN rule
//!
//! A record changes a page only if the page's LSN is older than the
//! record's end LSN; afterwards the page carries that end LSN. Replaying a
//! record twice, or replaying it onto a page written to disk after the
//! change, therefore changes nothing. Two kinds of record ignore the page's
//! LSN on purpose:
//!
//! * a **full-page image** replaces the page whatever is on disk (it may be
//!   torn) and stamps it with the image record's end LSN; every later
//!   change of the page follows in WAL and is replayed on top;
//! * a record with **INIT_PAGE** rebuilds its page from empty (the first
//!   tuple of a page), so the old contents are never read.
//!
//! ## Relations that grew, shrank or went away later in the WAL
//!
//! A record that rebuilds its page (INIT_PAGE, full-page image) for a block
//! past the end of its relation extends the relation through
//! `BufMgr::extend_to` first (the file never grows outside the buffer
//! manager's extension path). A record that only changes an existing page
//! of a block past the end is skipped: the relation was truncated later in
//! the WAL, and replaying that truncation cuts the block off again. A
//! record for a relation whose file no longer exists — dropped later in the
//! WAL — is skipped: nothing can read that relation again.
//!
//! ## Heap records
//!
//! | record | change |
//! |---|---|
//! | INSERT (+INIT_PAGE) | add the tuple at its line pointer |
//! | MULTI_INSERT (+INIT_PAGE) | rebuild each tuple's header (xmin = the record's xid or frozen, the logged cmin and infomask, ctid = itself) in front of its logged data, at its line pointer |
//! | DELETE | xmax, cmax = 0, ctid = itself, infobits; also step 1 of a cross-page update |
//! | UPDATE / HOT_UPDATE with a tuple | same page: add the new version, old xmax + ctid → new |
//! | UPDATE with an empty tuple | step 3 of a cross-page update: old ctid → new (the new version came as an INSERT) |
//! | PRUNE | line pointers → LP_DEAD / LP_UNUSED, page defragmented (the primary's `Page::prune_execute`); on a standby, snapshot conflicts resolved first and the removed versions' index entries dropped after |
//!
//! An INSERT (or the new version of an UPDATE) names its line pointer, and
//! redo puts the tuple exactly there — a slot a prune freed, or the next
//! new one.

use wal::{HeapRecord, Lsn, SmgrRecord};

use crate::bufmgr::{BufferRef, ReadMode};
use crate::bufpage::Page;
use crate::heapam::Heap;
use crate::htup::{self, TupleHeader};
use crate::xloginsert::infobits;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{BlockNumber, CommandId, ForkNumber, ItemPointer, RelFileId, TransactionId};

/// What replay must do beyond pages and files: the node's engine
/// implements it (crash recovery and a standby differ only here).
pub trait HeapRedoHooks {
    /// True on a standby, whose in-memory indexes follow replay (crash
    /// recovery rebuilds them once after redo instead).
    fn maintains_indexes(&self) -> bool;
    /// A replayed row version at `tid` of `rel`: add its index entries
    /// (a standby; nothing in crash recovery).
    fn index_tuple(&self, rel: RelFileId, tid: ItemPointer) -> PgResult<()>;
    /// Before a prune removes versions up to `latest_removed_xid`: wait for
    /// or cancel standby queries that could still see them. True when a
    /// snapshot older than old_snapshot_threshold was left holding them:
    /// the removal is then recorded ([`Self::record_early_removal`]).
    fn resolve_snapshot_conflict(&self, latest_removed_xid: TransactionId) -> bool;
    /// A prune replayed under an old snapshot removes the versions
    /// `removed` (xmin, xmax) from `block` (record ending at `lsn`); called
    /// under the page lock before the page changes.
    fn record_early_removal(
        &self,
        rel: RelFileId,
        block: BlockNumber,
        removed: &[(TransactionId, TransactionId)],
        lsn: Lsn,
    );
    /// After a prune: the removed versions' index entries go (their tids and
    /// row data, copied before the slots were freed).
    fn unindex_pruned(&self, rel: RelFileId, items: &[(ItemPointer, &[u8])]) -> PgResult<()>;
    /// A relation file was created: OIDs up to it are taken.
    fn relation_created(&self, rel: RelFileId);
}

/// What happened to one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageOutcome {
    /// The change was applied.
    Applied,
    /// The page already had it (page LSN ≥ record end).
    AlreadyApplied,
    /// The relation no longer exists (dropped later in WAL), the block lies
    /// past the end of a relation truncated later in WAL, or the page was
    /// never initialised; nothing done.
    Skipped,
}

fn corrupt(rel: RelFileId, block: BlockNumber, what: impl std::fmt::Display) -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        format!("WAL redo of block {block} of relation base/{rel}: {what}"),
    )
}

/// Replays a relation-file record (rmgr Smgr).
pub fn redo_smgr(heap: &Heap, s: &SmgrRecord, hooks: &dyn HeapRedoHooks) -> PgResult<()> {
    match *s {
        SmgrRecord::RelCreate { rel } => {
            heap.smgr().create(rel, ForkNumber::Main)?;
            hooks.relation_created(rel);
            Ok(())
        }
        SmgrRecord::RelTruncate { rel, nblocks } => heap.truncate_relation_redo(rel, nblocks.0),
        SmgrRecord::RelDrop { rel } => heap.drop_relation_redo(rel),
    }
}

/// The buffer of block `block` of `rel` for a record that touches it, or
/// None if the record is to be skipped:
///
/// * the relation's file does not exist: dropped later in the WAL (or the
///   drop record was replayed already) — nothing can read it again;
/// * the block is past the end of the file and the record does not rebuild
///   the page (`will_init` false): the relation was truncated later in the
///   WAL, and the truncation record will cut the block off again anyway
///   (PostgreSQL's "invalid page" that a later truncate or drop forgets).
///
/// A record that rebuilds the page (INIT_PAGE or a full-page image) on a
/// block past the end re-extends the relation through the buffer manager
/// ([`BufMgr::extend_to`](crate::bufmgr::BufMgr::extend_to)): the
/// file never grows any other way, in recovery neither.
fn redo_buffer(
    heap: &Heap,
    lsn: Lsn,
    rel: RelFileId,
    block: BlockNumber,
    will_init: bool,
) -> PgResult<Option<BufferRef<'_>>> {
    let smgr = heap.smgr();
    if !smgr.exists(rel, ForkNumber::Main) {
        tracing::debug!("WAL record at {lsn} for dropped relation base/{rel}: skipped");
        return Ok(None);
    }
    if !will_init && block.0 >= smgr.nblocks(rel, ForkNumber::Main)? {
        tracing::debug!(
            "WAL record at {lsn} for block {block} beyond the end of relation base/{rel} (truncated later): skipped"
        );
        return Ok(None);
    }
    let mode = if will_init {
        ReadMode::Overwrite
    } else {
        ReadMode::Normal
    };
    Ok(Some(heap.bufmgr().extend_to(
        rel,
        ForkNumber::Main,
        block,
        mode,
    )?))
}

/// Applies `f` to a page if the page LSN rule says so (see the module
/// docs); `will_init` re-initialises the page first without reading it.
pub fn redo_page(
    heap: &Heap,
    lsn: Lsn,
    rel: RelFileId,
    block: BlockNumber,
    will_init: bool,
    f: impl FnOnce(&mut Page) -> Result<(), String>,
) -> PgResult<PageOutcome> {
    let Some(buf) = redo_buffer(heap, lsn, rel, block, will_init)? else {
        return Ok(PageOutcome::Skipped);
    };
    let mut page = buf.write();
    if will_init {
        page.init();
    } else if page.lsn() >= lsn {
        return Ok(PageOutcome::AlreadyApplied);
    } else if page.is_new() {
        // Only possible with full_page_writes off after a torn extension,
        // or WAL that does not belong to this data directory.
        tracing::warn!(
            "WAL record at {lsn} references uninitialized page {block} of relation base/{rel}; skipped"
        );
        return Ok(PageOutcome::Skipped);
    }
    f(&mut page).map_err(|e| corrupt(rel, block, e))?;
    page.set_lsn(lsn);
    buf.mark_dirty();
    Ok(PageOutcome::Applied)
}

/// Restores a full-page image (torn-page protection): whatever is on
/// disk is overwritten, and later changes follow in WAL. Only the main
/// fork has pages here; an image of another fork is ignored.
pub fn redo_fpi(
    heap: &Heap,
    lsn: Lsn,
    rel: RelFileId,
    fork: u8,
    block: BlockNumber,
    image: &[u8],
) -> PgResult<()> {
    if fork != ForkNumber::Main as u8 {
        return Ok(());
    }
    // Overwrite mode: the page on disk may be torn and is not even read.
    let Some(buf) = redo_buffer(heap, lsn, rel, block, true)? else {
        return Ok(());
    };
    let mut page = buf.write();
    if image.len() != page.0.len() {
        return Err(corrupt(rel, block, "full-page image of the wrong size"));
    }
    page.0.copy_from_slice(image);
    page.set_lsn(lsn);
    buf.mark_dirty();
    Ok(())
}

/// Puts `tuple` at `offset`: a line pointer pruning left unused, or the
/// next new one — exactly where the primary put it.
fn add_at(page: &mut Page, offset: u16, tuple: &[u8]) -> Result<(), String> {
    match page.add_item_at(offset, tuple.len(), |b| b.copy_from_slice(tuple)) {
        Some(_) => Ok(()),
        None => Err(format!(
            "no room for a tuple of {} bytes at offset {offset} (page has {} line pointers)",
            tuple.len(),
            page.max_offset()
        )),
    }
}

/// The header every tuple of a multi-insert gets, on the primary and in
/// redo alike (the ctid is each tuple's own address).
pub fn multi_insert_header(xmin: TransactionId, cmin: CommandId, infomask: u16) -> TupleHeader {
    TupleHeader {
        infomask,
        ..TupleHeader::new_insert(xmin, cmin)
    }
}

/// Puts a tuple made of header `h` and `data` at `offset`, as
/// [`add_at`] does a logged tuple.
fn add_tuple_at(page: &mut Page, offset: u16, h: &TupleHeader, data: &[u8]) -> Result<(), String> {
    let len = htup::HEADER_SIZE + data.len();
    match page.add_item_at(offset, len, |b| {
        h.write(b);
        b[htup::HEADER_SIZE..].copy_from_slice(data);
    }) {
        Some(_) => Ok(()),
        None => Err(format!(
            "no room for a tuple of {len} bytes at offset {offset} (page has {} line pointers)",
            page.max_offset()
        )),
    }
}

/// Sets the deleter/updater fields of the tuple at `offset`.
fn set_xmax(
    page: &mut Page,
    offset: u16,
    xmax: TransactionId,
    bits: u8,
    ctid: ItemPointer,
) -> Result<(), String> {
    let item = page
        .item_mut(offset)
        .map_err(|e| format!("no tuple at offset {offset}: {e:?}"))?;
    let mut h = TupleHeader::read(item).ok_or("tuple shorter than its header")?;
    h.xmax = xmax;
    h.cmax = CommandId::FIRST;
    h.ctid = ctid;
    h.infomask &=
        !(htup::XMAX_COMMITTED | htup::XMAX_INVALID | htup::XMAX_LOCK_ONLY | htup::HOT_UPDATED);
    if bits & infobits::XMIN_COMMITTED != 0 {
        h.infomask |= htup::XMIN_COMMITTED;
    }
    if bits & infobits::HOT_UPDATED != 0 {
        h.infomask |= htup::HOT_UPDATED;
    }
    h.write(item);
    page.set_prunable(xmax.0);
    Ok(())
}

/// Replays a heap record (rmgrs Heap and Heap2; see the module docs)
/// written by transaction `xid` (the record header's).
pub fn redo_heap(
    heap: &Heap,
    lsn: Lsn,
    xid: TransactionId,
    h: &HeapRecord,
    hooks: &dyn HeapRedoHooks,
) -> PgResult<()> {
    match h {
        HeapRecord::Insert {
            rel,
            block,
            offset,
            tuple,
            init_page,
        } => {
            redo_page(heap, lsn, *rel, *block, *init_page, |p| {
                add_at(p, *offset, tuple)
            })?;
            hooks.index_tuple(
                *rel,
                ItemPointer {
                    block: *block,
                    offset: *offset,
                },
            )?;
        }
        HeapRecord::MultiInsert {
            rel,
            block,
            frozen,
            cmin,
            infomask,
            tuples,
            init_page,
        } => {
            let xmin = if *frozen {
                TransactionId::FROZEN
            } else if xid.is_valid() {
                xid
            } else {
                return Err(corrupt(*rel, *block, "multi-insert record without an xid"));
            };
            let mut h = multi_insert_header(xmin, *cmin, *infomask);
            redo_page(heap, lsn, *rel, *block, *init_page, |p| {
                for (off, data) in tuples {
                    h.ctid = ItemPointer {
                        block: *block,
                        offset: *off,
                    };
                    add_tuple_at(p, *off, &h, data)?;
                }
                Ok(())
            })?;
            for (off, _) in tuples {
                hooks.index_tuple(
                    *rel,
                    ItemPointer {
                        block: *block,
                        offset: *off,
                    },
                )?;
            }
        }
        HeapRecord::Delete {
            rel,
            block,
            offset,
            xmax,
            infobits,
        } => {
            let me = ItemPointer {
                block: *block,
                offset: *offset,
            };
            redo_page(heap, lsn, *rel, *block, false, |p| {
                set_xmax(p, *offset, *xmax, *infobits, me)
            })?;
        }
        HeapRecord::Update {
            rel,
            old_block,
            old_offset,
            new_block,
            new_offset,
            xmax,
            old_infobits,
            init_page,
            new_tuple,
            ..
        } => {
            let new_tid = ItemPointer {
                block: *new_block,
                offset: *new_offset,
            };
            if old_block == new_block {
                redo_page(heap, lsn, *rel, *old_block, false, |p| {
                    if !new_tuple.is_empty() {
                        add_at(p, *new_offset, new_tuple)?;
                    }
                    set_xmax(p, *old_offset, *xmax, *old_infobits, new_tid)
                })?;
            } else {
                if !new_tuple.is_empty() {
                    redo_page(heap, lsn, *rel, *new_block, *init_page, |p| {
                        add_at(p, *new_offset, new_tuple)
                    })?;
                }
                redo_page(heap, lsn, *rel, *old_block, false, |p| {
                    set_xmax(p, *old_offset, *xmax, *old_infobits, new_tid)
                })?;
            }
            if !new_tuple.is_empty() {
                hooks.index_tuple(
                    *rel,
                    ItemPointer {
                        block: *new_block,
                        offset: *new_offset,
                    },
                )?;
            }
        }
        HeapRecord::Prune {
            rel,
            block,
            latest_removed_xid,
            redirected,
            dead,
            unused,
        } => redo_prune(
            heap,
            hooks,
            lsn,
            *rel,
            *block,
            *latest_removed_xid,
            redirected,
            dead,
            unused,
        )?,
    }
    Ok(())
}

/// Replays a prune. On a standby, first the snapshot conflict: queries
/// whose snapshots could still see the removed versions are waited for or
/// cancelled ([`HeapRedoHooks::resolve_snapshot_conflict`]) before the page
/// changes — or, older than old_snapshot_threshold, left in place with the
/// removal recorded under the page lock for their reads' exact test. Then, under the page lock, the data of every version about to
/// go is copied (its index keys) and the page gets exactly the primary's
/// change ([`Page::prune_execute`]). Last, on a standby, those versions'
/// entries leave the standby's own indexes — before any later record can
/// reuse a freed slot, so no entry ever reaches a different row.
#[allow(clippy::too_many_arguments)]
fn redo_prune(
    heap: &Heap,
    hooks: &dyn HeapRedoHooks,
    lsn: Lsn,
    rel: RelFileId,
    block: BlockNumber,
    latest_removed_xid: TransactionId,
    redirected: &[(u16, u16)],
    dead: &[u16],
    unused: &[u16],
) -> PgResult<()> {
    if !redirected.is_empty() {
        // Not emitted (no HOT chains); refuse rather than guess.
        return Err(corrupt(
            rel,
            block,
            "prune records with redirects are not supported",
        ));
    }
    let standby = hooks.maintains_indexes();
    let record_early = standby && hooks.resolve_snapshot_conflict(latest_removed_xid);
    let mut removed: Vec<(u16, Vec<u8>)> = Vec::new();
    redo_page(heap, lsn, rel, block, false, |p| {
        if record_early {
            // old_snapshot_threshold: what an old snapshot left in place
            // loses, recorded before the page changes (a deleter, not a
            // row lock, ended these versions).
            let pairs: Vec<_> = dead
                .iter()
                .chain(unused)
                .filter_map(|&o| p.item(o).ok().and_then(TupleHeader::read))
                .filter(|h| !h.xmax_is_invalid() && h.infomask & htup::XMAX_LOCK_ONLY == 0)
                .map(|h| (h.xmin, h.xmax))
                .collect();
            hooks.record_early_removal(rel, block, &pairs, lsn);
        }
        if standby {
            for &o in dead.iter().chain(unused) {
                if let Ok(item) = p.item(o) {
                    removed.push((o, htup::tuple_data(item).to_vec()));
                }
            }
        }
        p.prune_execute(dead, unused)
            .map_err(|e| format!("bad line pointer in prune record: {e:?}"))
    })?;
    if standby && !removed.is_empty() {
        let items: Vec<(ItemPointer, &[u8])> = removed
            .iter()
            .map(|(o, d)| (ItemPointer { block, offset: *o }, d.as_slice()))
            .collect();
        hooks.unindex_pruned(rel, &items)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! A multi-insert record carries the tuples' data and their shared
    //! header fields, not the tuples: these tests guard against redo
    //! rebuilding a header that differs in any byte from the primary's
    //! (a standby or a recovered primary would then disagree about who
    //! sees a row).

    use std::sync::Arc;

    use super::*;
    use crate::hio::ExtensionMode;
    use crate::xloginsert::XLog;
    use pgtypes::BufferTag;
    use txn::clog::{Clog, XidStatus};
    use txn::procarray::ProcArray;
    use wal::{WalPosition, WalReader, WalRecord, WalWriter, WalWriterOptions, XlogRecord};

    const SEG: u64 = 1 << 24;

    struct NoHooks;

    impl HeapRedoHooks for NoHooks {
        fn maintains_indexes(&self) -> bool {
            false
        }
        fn index_tuple(&self, _: RelFileId, _: ItemPointer) -> PgResult<()> {
            Ok(())
        }
        fn resolve_snapshot_conflict(&self, _: TransactionId) -> bool {
            false
        }
        fn record_early_removal(
            &self,
            _: RelFileId,
            _: BlockNumber,
            _: &[(TransactionId, TransactionId)],
            _: Lsn,
        ) {
        }
        fn unindex_pruned(&self, _: RelFileId, _: &[(ItemPointer, &[u8])]) -> PgResult<()> {
            Ok(())
        }
        fn relation_created(&self, _: RelFileId) {}
    }

    fn page_bytes(heap: &Heap, rel: RelFileId, block: u32) -> Vec<u8> {
        let buf = heap
            .bufmgr()
            .read_buffer(BufferTag {
                rel,
                fork: ForkNumber::Main,
                block: BlockNumber(block),
            })
            .unwrap();
        let page = buf.read();
        page.0.to_vec()
    }

    /// Replays all WAL in `wal_dir` into `replica`; returns the multi-insert
    /// records seen.
    fn replay(wal_dir: &std::path::Path, replica: &Heap) -> Vec<HeapRecord> {
        let mut reader = WalReader::new(wal_dir, SEG).unwrap();
        let mut multi = Vec::new();
        while let Ok(rec) = reader.next_record() {
            let lsn = rec.end_lsn;
            match &rec.record {
                WalRecord::Heap(h) => {
                    redo_heap(replica, lsn, rec.header.xid, h, &NoHooks).unwrap();
                    if matches!(h, HeapRecord::MultiInsert { .. }) {
                        multi.push(h.clone());
                    }
                }
                WalRecord::Smgr(s) => redo_smgr(replica, s, &NoHooks).unwrap(),
                WalRecord::Xlog(XlogRecord::FullPageImage {
                    rel,
                    fork,
                    block,
                    page,
                }) => redo_fpi(replica, lsn, *rel, *fork, *block, page).unwrap(),
                _ => {}
            }
        }
        multi
    }

    /// Rows of varying length (a multi-insert logs each one's length).
    fn rows(n: u32, salt: u32) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{salt}:{i}:{}", "x".repeat((i % 97) as usize)).into_bytes())
            .collect()
    }

    #[test]
    fn multi_insert_replays_to_byte_identical_pages() {
        for mode in [ExtensionMode::Bulk, ExtensionMode::Single] {
            let dir = tempfile::tempdir().unwrap();
            let wal_dir = dir.path().join("pg_wal");
            let writer = WalWriter::open(
                &wal_dir,
                WalWriterOptions::new(SEG, false),
                WalPosition::initial(SEG),
            )
            .unwrap();
            let xlog = Arc::new(XLog::with_settings(true, true));
            xlog.start_inserting(writer, Lsn::INVALID);
            let primary = Heap::open(&dir.path().join("p"), 256, mode, xlog.clone()).unwrap();
            primary.enable_pruning();
            let clog = Clog::open(dir.path()).unwrap();
            let pa = ProcArray::new(16, TransactionId(100));
            let (plain, frozen) = (RelFileId(1), RelFileId(2));
            primary.create_relation(plain).unwrap();
            primary.create_relation(frozen).unwrap();

            // 1. Plain rows, batch after batch: pages initialised by a
            //    record and pages a later batch appends to.
            let mut bulk = primary.bulk_insert_state();
            for (k, cid) in [(0u32, 0u32), (1, 0), (2, 3)] {
                let rs = rows(700, k);
                let refs: Vec<&[u8]> = rs.iter().map(|r| r.as_slice()).collect();
                primary
                    .multi_insert_bulk(
                        plain,
                        &refs,
                        TransactionId(10),
                        CommandId(cid),
                        false,
                        &mut bulk,
                    )
                    .unwrap();
            }
            drop(bulk);
            // 2. COPY FREEZE-style rows into the other relation.
            let rs = rows(900, 9);
            let refs: Vec<&[u8]> = rs.iter().map(|r| r.as_slice()).collect();
            primary
                .multi_insert(frozen, &refs, TransactionId(11), CommandId(1), true)
                .unwrap();
            // 3. Rows of an aborted and a committed transaction taking
            //    turns, vacuumed: the next batch reuses every other line
            //    pointer, offsets with gaps.
            let mut aborted = Vec::new();
            for (i, r) in rows(120, 12).iter().enumerate() {
                let xid = TransactionId(12 + (i % 2) as u64);
                let tid = primary.insert(plain, r, xid, CommandId(0)).unwrap();
                if i % 2 == 0 {
                    aborted.push(tid);
                }
            }
            clog.set_status(TransactionId(12), &[], XidStatus::Aborted);
            clog.set_status(TransactionId(13), &[], XidStatus::Committed);
            primary
                .vacuum_relation(plain, TransactionId(100), &clog, &pa)
                .unwrap();
            let rs = rows(40, 14);
            let refs: Vec<&[u8]> = rs.iter().map(|r| r.as_slice()).collect();
            let reused = primary
                .multi_insert(plain, &refs, TransactionId(14), CommandId(0), false)
                .unwrap();
            assert!(
                reused.iter().any(|t| aborted.contains(t)),
                "{mode:?}: freed line pointers reused"
            );

            xlog.flush(xlog.writer().unwrap().insert_lsn()).unwrap();
            let replica = Heap::open(
                &dir.path().join("r"),
                256,
                mode,
                Arc::new(XLog::with_settings(true, true)),
            )
            .unwrap();
            let multi = replay(&wal_dir, &replica);
            let consecutive = |h: &HeapRecord| match h {
                HeapRecord::MultiInsert { tuples, .. } => {
                    wal::records::offsets_consecutive(tuples.iter().map(|(o, _)| *o))
                }
                _ => false,
            };
            assert!(
                multi.iter().any(|h| !consecutive(h)),
                "{mode:?}: a record with offset gaps"
            );
            assert!(
                multi.iter().any(|h| matches!(
                    h,
                    HeapRecord::MultiInsert {
                        init_page: false,
                        ..
                    }
                ) && consecutive(h)),
                "{mode:?}: a record appending to a page"
            );
            for rel in [plain, frozen] {
                let (np, nr) = (primary.nblocks(rel).unwrap(), replica.nblocks(rel).unwrap());
                assert!(
                    nr > 1 && nr <= np,
                    "{mode:?}: rel {rel}: {nr} of {np} blocks"
                );
                for b in 0..np {
                    let p = page_bytes(&primary, rel, b);
                    if b >= nr {
                        let spare = Page(p.try_into().unwrap());
                        assert_eq!(spare.max_offset(), 0, "{mode:?}: spare block {b} empty");
                        continue;
                    }
                    let (mut p, mut r) = (
                        Page(p.try_into().unwrap()),
                        Page(page_bytes(&replica, rel, b).try_into().unwrap()),
                    );
                    // PD_HAS_FREE_LINES is a hint the primary drops when a
                    // search for a free line pointer comes back empty, and
                    // redo (told the offsets) never searches; PostgreSQL's
                    // wal_consistency_checking masks it too.
                    for page in [&mut p, &mut r] {
                        page.clear_flags(crate::bufpage::PD_HAS_FREE_LINES);
                    }
                    let diff: Vec<usize> = (0..p.0.len())
                        .filter(|&i| p.0[i] != r.0[i])
                        .take(20)
                        .collect();
                    assert!(
                        diff.is_empty(),
                        "{mode:?}: rel {rel} block {b} differs after replay at bytes {diff:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn non_frozen_multi_insert_without_xid_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let heap = Heap::open(
            dir.path(),
            16,
            ExtensionMode::Single,
            Arc::new(XLog::with_settings(true, true)),
        )
        .unwrap();
        heap.smgr().create(RelFileId(1), ForkNumber::Main).unwrap();
        let rec = HeapRecord::MultiInsert {
            rel: RelFileId(1),
            block: BlockNumber(0),
            frozen: false,
            cmin: CommandId(0),
            infomask: htup::XMAX_INVALID,
            tuples: vec![(1, bytes::Bytes::from_static(b"row"))],
            init_page: true,
        };
        let err = redo_heap(&heap, Lsn(1 << 24), TransactionId(0), &rec, &NoHooks).unwrap_err();
        assert!(err.message.contains("without an xid"), "{}", err.message);
    }
}
