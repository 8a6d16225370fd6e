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
//! | MULTI_INSERT (+INIT_PAGE) | add each tuple at its line pointer |
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
    /// or cancel standby queries that could still see them.
    fn resolve_snapshot_conflict(&self, latest_removed_xid: TransactionId);
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

/// Replays a heap record (rmgrs Heap and Heap2; see the module docs).
pub fn redo_heap(heap: &Heap, lsn: Lsn, h: &HeapRecord, hooks: &dyn HeapRedoHooks) -> PgResult<()> {
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
            tuples,
            init_page,
        } => {
            redo_page(heap, lsn, *rel, *block, *init_page, |p| {
                for (off, t) in tuples {
                    add_at(p, *off, t)?;
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
/// changes. Then, under the page lock, the data of every version about to
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
    if standby {
        hooks.resolve_snapshot_conflict(latest_removed_xid);
    }
    let mut removed: Vec<(u16, Vec<u8>)> = Vec::new();
    redo_page(heap, lsn, rel, block, false, |p| {
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
