//! # Applying WAL records (PostgreSQL's rmgr redo routines)
//!
//! [`apply`] replays one decoded record against the node: heap pages
//! through the buffer manager, relation files, the catalog, the clog and
//! the procarray. Crash recovery ([`crate::xlog::startup`]) calls it for
//! every record from the checkpoint's redo point to the end of valid WAL;
//! a standby calls it for every record as it arrives, while
//! hot-standby sessions read — so it takes only the locks a normal writer
//! takes (a buffer's content lock, the catalog lock, clog and procarray
//! locks), one at a time.
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
//! The catalog is one "page" with an LSN of its own, stored in
//! `global/catalog` (see `Catalog::redo_catalog_change`).
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
//!
//! ## Transactions and the completion counter
//!
//! COMMIT and COMMIT PREPARED set the clog "committed" (ABORT and ABORT
//! PREPARED "aborted") for the xid and its subxids, then call
//! `ProcArray::end_transaction(Finished::Recovered { .. })`, which removes
//! the xids from KnownAssignedXids, advances `latest_completed_xid` **and
//! bumps `xact_completion_count`**. The bump is the standby's core
//! invariant: a hot-standby session's cached snapshot is reused only while
//! the counter is unchanged, so every replayed completion must bump it or
//! the session would keep seeing the transaction as running (PostgreSQL's
//! September 2020 bug). PREPARE completes nothing and bumps nothing
//! (twophase.rs rebuilds the prepared transaction).
//!
//! Every xid seen (record header, xact records, subxids) advances
//! `next_xid` past it on a primary in crash recovery; on a standby the
//! startup process (standby crate) owns KnownAssignedXids and routes only
//! non-transaction records here. Transactions that were running at a
//! crash have no completion record: their xids stay "in progress" in the
//! clog, and since no proc runs them after start-up, visibility treats
//! them as aborted (`XidFate::Gone`) — PostgreSQL does the same.

use wal::{DecodedRecord, HeapRecord, Lsn, SmgrRecord, StandbyRecord, WalRecord, XlogRecord};

use crate::node::Node;
use engine::Role;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{BlockNumber, CommandId, ForkNumber, ItemPointer, RelFileId, TransactionId};
use storage::bufmgr::ReadMode;
use storage::bufpage::Page;
use storage::htup::{self, TupleHeader};
use storage::xloginsert::infobits;

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

/// Replays one record (see the module docs).
pub fn apply(db: &Node, rec: &DecodedRecord) -> PgResult<()> {
    if rec.header.xid != 0 {
        note_xid(db, TransactionId(rec.header.xid));
    }
    let lsn = rec.end_lsn;
    match &rec.record {
        WalRecord::Heap(h) => redo_heap(db, lsn, h),
        WalRecord::Xlog(x) => match x {
            XlogRecord::FullPageImage {
                rel,
                fork,
                block,
                page,
            } => {
                if *fork == ForkNumber::Main as u8 {
                    redo_fpi(db, lsn, *rel, *block, page)?;
                }
                Ok(())
            }
            XlogRecord::Checkpoint {
                next_xid, next_oid, ..
            } => {
                if *next_xid > TransactionId(0) {
                    note_xid(db, TransactionId(next_xid.0 - 1));
                }
                db.catalog().advance_next_oid(*next_oid);
                Ok(())
            }
            XlogRecord::BackupEnd { .. } | XlogRecord::Switch | XlogRecord::Noop { .. } => Ok(()),
        },
        WalRecord::Xact(x) => {
            engine::xact_redo::redo(db, x, false);
            Ok(())
        }
        WalRecord::Smgr(s) => redo_smgr(db, s),
        WalRecord::Catalog { payload } => {
            db.catalog().redo_catalog_change(lsn, payload)?;
            if db.role() == engine::Role::Standby {
                engine::indexing::build_replayed_indexes(db)?;
            }
            Ok(())
        }
        // Running-xacts records matter to a standby's KnownAssignedXids;
        // crash recovery needs nothing from them.
        WalRecord::Standby(StandbyRecord::RunningXacts { next_xid, .. }) => {
            if *next_xid > TransactionId(0) {
                note_xid(db, TransactionId(next_xid.0 - 1));
            }
            Ok(())
        }
    }
}

/// Makes `xid` known as assigned on a primary in crash recovery (past
/// `next_xid`). On a standby the startup process owns KnownAssignedXids
/// (it adds xids only once a running-xacts record initialised it), so
/// nothing is done here.
fn note_xid(db: &Node, xid: TransactionId) {
    if xid.is_normal() && db.role() == Role::Primary {
        db.procarray().advance_next_xid(xid);
    }
}

fn redo_smgr(db: &Node, s: &SmgrRecord) -> PgResult<()> {
    match *s {
        SmgrRecord::RelCreate { rel } => {
            db.heap().smgr().create(rel, ForkNumber::Main)?;
            db.catalog().advance_next_oid(rel.0.saturating_add(1));
            Ok(())
        }
        SmgrRecord::RelTruncate { rel, nblocks } => {
            db.heap().truncate_relation_redo(rel, nblocks.0)
        }
        SmgrRecord::RelDrop { rel } => db.heap().drop_relation_redo(rel),
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
/// ([`BufMgr::extend_to`](storage::bufmgr::BufMgr::extend_to)): the
/// file never grows any other way, in recovery neither.
fn redo_buffer(
    db: &Node,
    lsn: Lsn,
    rel: RelFileId,
    block: BlockNumber,
    will_init: bool,
) -> PgResult<Option<storage::bufmgr::BufferRef<'_>>> {
    let smgr = db.heap().smgr();
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
    Ok(Some(db.heap().bufmgr().extend_to(
        rel,
        ForkNumber::Main,
        block,
        mode,
    )?))
}

/// Applies `f` to a page if the page LSN rule says so (see the module
/// docs); `will_init` re-initialises the page first without reading it.
pub fn redo_page(
    db: &Node,
    lsn: Lsn,
    rel: RelFileId,
    block: BlockNumber,
    will_init: bool,
    f: impl FnOnce(&mut Page) -> Result<(), String>,
) -> PgResult<PageOutcome> {
    let Some(buf) = redo_buffer(db, lsn, rel, block, will_init)? else {
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

fn redo_fpi(db: &Node, lsn: Lsn, rel: RelFileId, block: BlockNumber, image: &[u8]) -> PgResult<()> {
    // Overwrite mode: the page on disk may be torn and is not even read.
    let Some(buf) = redo_buffer(db, lsn, rel, block, true)? else {
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
    block: BlockNumber,
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
    let _ = block;
    Ok(())
}

/// On a standby, keeps the in-memory indexes in step with replayed row
/// versions; crash recovery rebuilds them after redo instead.
fn index_on_standby(db: &Node, rel: RelFileId, block: BlockNumber, offset: u16) -> PgResult<()> {
    if db.role() != engine::Role::Standby {
        return Ok(());
    }
    let tid = ItemPointer { block, offset };
    engine::indexing::index_replayed_tuple(db, rel, tid)
}

fn redo_heap(db: &Node, lsn: Lsn, h: &HeapRecord) -> PgResult<()> {
    match h {
        HeapRecord::Insert {
            rel,
            block,
            offset,
            tuple,
            init_page,
        } => {
            redo_page(db, lsn, *rel, *block, *init_page, |p| {
                add_at(p, *offset, tuple)
            })?;
            index_on_standby(db, *rel, *block, *offset)?;
        }
        HeapRecord::MultiInsert {
            rel,
            block,
            tuples,
            init_page,
        } => {
            redo_page(db, lsn, *rel, *block, *init_page, |p| {
                for (off, t) in tuples {
                    add_at(p, *off, t)?;
                }
                Ok(())
            })?;
            for (off, _) in tuples {
                index_on_standby(db, *rel, *block, *off)?;
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
            redo_page(db, lsn, *rel, *block, false, |p| {
                set_xmax(p, *block, *offset, *xmax, *infobits, me)
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
                redo_page(db, lsn, *rel, *old_block, false, |p| {
                    if !new_tuple.is_empty() {
                        add_at(p, *new_offset, new_tuple)?;
                    }
                    set_xmax(p, *old_block, *old_offset, *xmax, *old_infobits, new_tid)
                })?;
            } else {
                if !new_tuple.is_empty() {
                    redo_page(db, lsn, *rel, *new_block, *init_page, |p| {
                        add_at(p, *new_offset, new_tuple)
                    })?;
                }
                redo_page(db, lsn, *rel, *old_block, false, |p| {
                    set_xmax(p, *old_block, *old_offset, *xmax, *old_infobits, new_tid)
                })?;
            }
            if !new_tuple.is_empty() {
                index_on_standby(db, *rel, *new_block, *new_offset)?;
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
            db,
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
/// cancelled ([`Node::resolve_snapshot_conflict`]) before the page
/// changes. Then, under the page lock, the data of every version about to
/// go is copied (its index keys) and the page gets exactly the primary's
/// change ([`Page::prune_execute`]). Last, on a standby, those versions'
/// entries leave the standby's own indexes — before any later record can
/// reuse a freed slot, so no entry ever reaches a different row.
#[allow(clippy::too_many_arguments)]
fn redo_prune(
    db: &Node,
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
    let standby = db.role() == Role::Standby;
    if standby {
        db.resolve_snapshot_conflict(latest_removed_xid);
    }
    let mut removed: Vec<(u16, Vec<u8>)> = Vec::new();
    redo_page(db, lsn, rel, block, false, |p| {
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
        engine::indexing::unindex_pruned_tuples(db, rel, &items, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use wal::WalReader;

    use super::*;
    use pgtypes::config::Config;
    use pgtypes::error::PgResult;
    use pgtypes::value::Value;
    use pgtypes::BufferTag;
    use server::backend::{ExecOutcome, ResultSink};
    use sql::session::Session;

    #[derive(Default)]
    struct Rows(Vec<Vec<String>>);

    impl ResultSink for Rows {
        fn row(&mut self, values: &[Value]) -> PgResult<()> {
            self.0
                .push(values.iter().map(|v| v.to_text_string()).collect());
            Ok(())
        }
        fn notice(&mut self, _: PgError) {}
        fn parameter_status(&mut self, _: &str, _: &str) {}
        fn copy_out_start(&mut self, _: usize) {}
        fn copy_data(&mut self, _: &[u8]) {}
    }

    /// Runs each statement of `sql` (no multi-statement transaction).
    fn run(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
        let mut sink = Rows::default();
        for st in s.prepare(sql, &[]).unwrap() {
            match s.execute(&st, &[], &mut sink) {
                Ok(ExecOutcome::Complete(_)) | Ok(ExecOutcome::Empty) => {}
                Ok(_) => panic!("{sql}: COPY not expected"),
                Err(e) => panic!("{sql}: {}", e.message),
            }
        }
        sink.0
    }

    fn one(s: &mut Session, sql: &str) -> String {
        run(s, sql)[0][0].clone()
    }

    fn config(dir: &std::path::Path, fpw: bool) -> Config {
        let mut c = Config::new(dir);
        c.set("shared_buffers", "256kB").unwrap();
        // fsync off: these tests "crash" by dropping a Node and
        // replaying its files in the same process — the page cache is
        // never lost, so syncing would only slow them down.
        c.set("fsync", "off").unwrap();
        c.set("full_page_writes", if fpw { "on" } else { "off" })
            .unwrap();
        c
    }

    fn session(db: &Arc<Node>) -> Session {
        Session::new(db.clone(), &[("user".into(), "u".into())]).unwrap()
    }

    /// Inserts (single and multi-row), same-page and cross-page updates,
    /// deletes, a rollback, TRUNCATE and DROP, with a checkpoint between.
    fn workload(s: &mut Session) {
        run(s, "create table t (id int primary key, pad text)");
        run(s, "create table gone (x int)");
        run(s, "create table emptied (x int)");
        run(s, "insert into gone values (1), (2)");
        run(
            s,
            "insert into emptied select g from generate_series(1, 500) g",
        );
        run(
            s,
            "insert into t select g, repeat('x', 100) from generate_series(1, 1500) g",
        );
        for i in 1501..1600 {
            run(s, &format!("insert into t values ({i}, 'single')"));
        }
        run(s, "checkpoint");
        // Bigger rows move to other pages; small ones may stay (HOT).
        run(s, "update t set pad = repeat('y', 900) where id % 50 = 0");
        run(s, "update t set pad = 'short' where id % 7 = 0");
        run(s, "delete from t where id % 11 = 0");
        run(s, "begin");
        run(s, "insert into t values (100000, 'rolled back')");
        run(s, "delete from t where id < 20");
        run(s, "rollback");
        run(s, "truncate emptied");
        run(s, "insert into emptied values (42)");
        run(s, "drop table gone");
        run(s, "create index t_pad on t (pad)");
    }

    fn summary(s: &mut Session) -> Vec<String> {
        vec![
            one(s, "select count(*) from t"),
            one(s, "select sum(id) from t"),
            one(s, "select count(*) from t where pad = 'short'"),
            one(s, "select count(*) from t where length(pad) = 900"),
            one(s, "select count(*) from emptied"),
            one(s, "select pad from t where id = 700"),
            one(s, "select count(*) from t where id = 100000"),
        ]
    }

    /// A crash (the database dropped without a shutdown checkpoint: dirty
    /// buffers never written) followed by start-up replays WAL back to the
    /// same state, with and without full-page writes.
    #[test]
    fn crash_recovery_restores_every_change() {
        for fpw in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            workload(&mut s);
            let before = summary(&mut s);
            assert_eq!(before[0], (1599 - 1599 / 11).to_string());
            drop(s);
            drop(db);
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(summary(&mut s), before, "state after recovery (fpw {fpw})");
            assert!(db.catalog().get("gone").is_none(), "drop replayed");
            // The index on pad was rebuilt: ids 1501..1599 untouched by the
            // updates and the delete still say 'single'.
            let single = (1501..1600)
                .filter(|i| i % 7 != 0 && i % 11 != 0 && i % 50 != 0)
                .count();
            assert_eq!(
                one(&mut s, "select count(*) from t where pad = 'single'"),
                single.to_string()
            );
            // Writes and another crash after recovery still work.
            run(&mut s, "insert into t values (200000, 'after')");
            drop(s);
            drop(db);
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(one(&mut s, "select pad from t where id = 200000"), "after");
        }
    }

    /// Runs `COPY … FROM STDIN` with `data` as the whole input.
    fn copy_in(s: &mut Session, sql: &str, data: &[u8]) -> String {
        let mut sink = Rows::default();
        let st = s.prepare(sql, &[]).unwrap().remove(0);
        let Ok(ExecOutcome::CopyIn(mut c)) = s.execute(&st, &[], &mut sink) else {
            panic!("{sql}: no COPY IN");
        };
        // In pieces that split records, as a client's CopyData may.
        for chunk in data.chunks(7001) {
            s.copy_in_data(&mut c, chunk).unwrap();
        }
        s.copy_in_done(c).unwrap()
    }

    /// COPY FROM STDIN (text, csv, FREEZE) goes through the
    /// multi-insert path: one MULTI_INSERT record per page and batch, never
    /// one record per row; replay gives the same rows.
    #[test]
    fn copy_logs_one_record_per_page() {
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        let rows = 5000usize;
        let text: String = (0..rows).map(|i| format!("{i}\tline {i}\n")).collect();
        let csv: String = (0..rows).map(|i| format!("{i},\"csv, {i}\"\n")).collect();
        run(&mut s, "create table ct (id int, v text)");
        let writer = db.xlog().writer().unwrap().clone();
        let start = writer.insert_lsn();
        assert_eq!(
            copy_in(&mut s, "copy ct from stdin", text.as_bytes()),
            "COPY 5000"
        );
        run(&mut s, "begin");
        run(&mut s, "create table cf (id int, v text)");
        assert_eq!(
            copy_in(
                &mut s,
                "copy cf from stdin with (format csv, freeze)",
                csv.as_bytes()
            ),
            "COPY 5000"
        );
        run(&mut s, "commit");
        writer.flush(writer.insert_lsn()).unwrap();
        let rels: Vec<RelFileId> = ["ct", "cf"]
            .iter()
            .map(|t| db.catalog().get(t).unwrap().rel)
            .collect();
        let mut per_rel = [(0usize, 0usize, 0usize); 2]; // (multi records, tuples, single inserts)
        let mut reader = WalReader::new(writer.dir(), writer.segment_size()).unwrap();
        reader.seek(start, None);
        while let Ok(rec) = reader.next_record() {
            match &rec.record {
                WalRecord::Heap(HeapRecord::MultiInsert { rel, tuples, .. }) => {
                    if let Some(k) = rels.iter().position(|r| r == rel) {
                        per_rel[k].0 += 1;
                        per_rel[k].1 += tuples.len();
                    }
                }
                WalRecord::Heap(HeapRecord::Insert { rel, .. }) if rels.contains(rel) => {
                    per_rel[rels.iter().position(|r| r == rel).unwrap()].2 += 1;
                }
                _ => {}
            }
        }
        let batches = rows.div_ceil(sql::executor::BATCH_ROWS);
        for (k, (records, tuples, singles)) in per_rel.iter().enumerate() {
            let pages = db.heap().nblocks(rels[k]).unwrap() as usize;
            assert_eq!(*singles, 0, "rel {k}: no per-row records");
            assert_eq!(
                one(
                    &mut s,
                    &format!("select pg_relation_size('{}')", ["ct", "CF"][k])
                ),
                (pages * 8192).to_string(),
                "pg_relation_size"
            );
            assert_eq!(*tuples, rows, "rel {k}: every row logged once");
            // A page filled by one batch gets one record; a page a batch
            // boundary falls on gets one per batch.
            assert!(
                *records >= pages && *records < pages + batches,
                "rel {k}: {records} records for {pages} pages and {batches} batches"
            );
        }
        // Crash and replay: same rows.
        drop(s);
        drop(db);
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        assert_eq!(one(&mut s, "select count(*) from ct"), "5000");
        assert_eq!(one(&mut s, "select v from cf where id = 4321"), "csv, 4321");
        assert_eq!(one(&mut s, "select v from ct where id = 17"), "line 17");
    }

    /// WAL for inserts into relations that were truncated, or
    /// dropped, after the records were written. A crash before the next
    /// checkpoint replays the inserts onto a file that is already short (or
    /// gone): page-rebuilding records re-extend the truncated relation
    /// through the buffer manager, the others are skipped, the truncation
    /// record cuts it again; records of the dropped relation are skipped.
    /// Recovery ends without error and with the right contents.
    #[test]
    fn redo_into_truncated_and_dropped_relations() {
        for fpw in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            run(&mut s, "create table tr (x int, pad text)");
            run(&mut s, "create table dr (x int, pad text)");
            run(&mut s, "insert into tr values (0, 'before checkpoint')");
            run(&mut s, "checkpoint");
            // Several pages of each, single and multi-row inserts.
            run(
                &mut s,
                "insert into tr select g, repeat('t', 200) from generate_series(1, 2000) g",
            );
            for i in 0..20 {
                run(&mut s, &format!("insert into tr values ({i}, 'single')"));
            }
            run(
                &mut s,
                "insert into dr select g, repeat('d', 200) from generate_series(1, 2000) g",
            );
            run(&mut s, "create table late (x int)");
            run(&mut s, "insert into late values (1), (2), (3)");
            // Written out, so the file really is long before it shrinks.
            let bm = db.heap().bufmgr().clone();
            bm.flush_all().unwrap();
            run(&mut s, "truncate tr");
            run(&mut s, "insert into tr values (42, 'after truncate')");
            run(&mut s, "drop table dr");
            run(&mut s, "drop table late");
            drop(s);
            drop(bm);
            drop(db); // the crash: no shutdown checkpoint
            let db = Node::open(config(dir.path(), fpw), Role::Primary).unwrap();
            let mut s = session(&db);
            assert_eq!(
                run(&mut s, "select x, pad from tr"),
                vec![vec!["42".to_string(), "after truncate".to_string()]],
                "truncated relation after recovery (fpw {fpw})"
            );
            assert!(db.catalog().get("dr").is_none(), "drop replayed");
            assert!(db.catalog().get("late").is_none(), "drop replayed");
            run(&mut s, "insert into tr values (43, 'after recovery')");
            assert_eq!(one(&mut s, "select count(*) from tr"), "2");
        }
    }

    /// Commits racing with checkpoints: every commit acknowledged before the
    /// "crash" is back afterwards, whichever side of a redo point its
    /// record fell on (the delay-checkpoint guard keeps its clog bit in the
    /// clog the checkpoint flushes).
    #[test]
    fn commits_racing_checkpoints_survive_a_crash() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        run(&mut session(&db), "create table c (id int primary key)");
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (db, stop) = (db.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut s = session(&db);
                    let mut acked = Vec::new();
                    let mut i = w;
                    while !stop.load(Ordering::Relaxed) && acked.len() < 3000 {
                        run(&mut s, &format!("insert into c values ({i})"));
                        acked.push(i);
                        i += 2;
                    }
                    acked
                })
            })
            .collect();
        for _ in 0..30 {
            db.checkpoint().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<i32> = writers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        drop(db);
        let db = Node::open(config(dir.path(), true), Role::Primary).unwrap();
        let mut s = session(&db);
        assert_eq!(
            one(&mut s, "select count(*) from c"),
            acked.len().to_string(),
            "every acknowledged commit survives"
        );
    }

    /// Every heap page's bytes, with what is not WAL-logged masked: hint
    /// bits in tuple headers, pd_prune_xid and the page flags (a page rebuilt by an
    /// INIT_PAGE record has none — as in PostgreSQL's wal_consistency
    /// masking).
    fn pages(db: &Node) -> Vec<(u32, u32, Vec<u8>)> {
        let mut out = Vec::new();
        for rel in db.heap().list_relations().unwrap() {
            for b in 0..db.heap().nblocks(rel).unwrap() {
                let buf = db
                    .heap()
                    .bufmgr()
                    .read_buffer(BufferTag {
                        rel,
                        fork: ForkNumber::Main,
                        block: BlockNumber(b),
                    })
                    .unwrap();
                let mut p = Page::default();
                p.0.copy_from_slice(&buf.read().0);
                p.clear_flags(u16::MAX);
                p.set_prune_xid(0); // a hint, as in PostgreSQL's masking
                for off in 1..=p.max_offset() {
                    if let Ok(item) = p.item_mut(off) {
                        let mut h = TupleHeader::read(item).unwrap();
                        h.infomask &= !htup::HINT_BITS;
                        h.write(item);
                    }
                }
                out.push((rel.0, b, p.0.to_vec()));
            }
        }
        out
    }

    /// Page LSN idempotence: replaying the whole WAL again onto pages that
    /// already hold every change alters no byte (without full-page images,
    /// which are restored unconditionally by design).
    #[test]
    fn replaying_wal_twice_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = Node::open(config(dir.path(), false), Role::Primary).unwrap();
        let mut s = session(&db);
        run(&mut s, "create table t (id int primary key, pad text)");
        run(
            &mut s,
            "insert into t select g, repeat('x', 100) from generate_series(1, 800) g",
        );
        run(
            &mut s,
            "update t set pad = repeat('y', 900) where id % 50 = 0",
        );
        run(&mut s, "update t set pad = 'short' where id % 7 = 0");
        run(&mut s, "delete from t where id % 11 = 0");
        // The WAL position functions and the statistics view.
        assert_eq!(
            one(
                &mut s,
                "select pg_current_wal_insert_lsn() >= pg_current_wal_flush_lsn()"
            ),
            "t"
        );
        let lsn = one(&mut s, "select pg_current_wal_insert_lsn()");
        assert_eq!(lsn, db.xlog().writer().unwrap().insert_lsn().to_string());
        let stats = run(
            &mut s,
            "select wal_records, wal_bytes, wal_sync, checkpoints from hotpair_stat_wal",
        );
        let n: Vec<i64> = stats[0].iter().map(|v| v.parse().unwrap()).collect();
        assert!(
            n[0] > 100 && n[1] > n[0] * 28,
            "records and bytes counted: {n:?}"
        );
        assert!(n[3] >= 1, "the initial checkpoint counted: {n:?}");
        // pg_stat_wal: the same counters under PostgreSQL's names and types.
        assert_eq!(
            one(
                &mut s,
                "select pg_typeof(wal_bytes)::text || ' ' || pg_typeof(wal_sync_time)::text \
                 from pg_stat_wal where wal_records >= 100 and wal_bytes > 0 and wal_sync >= 0"
            ),
            "numeric double precision"
        );
        assert_eq!(
            one(
                &mut s,
                "select pg_current_wal_lsn() <= pg_current_wal_insert_lsn() \
                 and pg_typeof(pg_current_wal_lsn())::text = 'pg_lsn'"
            ),
            "t",
            "pg_lsn values compare"
        );
        let before = pages(&db);
        let writer = db.xlog().writer().unwrap().clone();
        writer.flush(writer.insert_lsn()).unwrap();
        let mut reader = WalReader::new(writer.dir(), writer.segment_size()).unwrap();
        reader.seek(wal::WalPosition::initial(writer.segment_size()).end, None);
        let mut heap_records = 0;
        let mut prunes = 0;
        let mut a_delete = None;
        while let Ok(rec) = reader.next_record() {
            if let WalRecord::Heap(h) = &rec.record {
                heap_records += 1;
                if matches!(h, HeapRecord::Prune { .. }) {
                    prunes += 1;
                }
                if matches!(h, HeapRecord::Delete { .. }) {
                    a_delete.get_or_insert(rec.clone());
                }
            }
            apply(&db, &rec).unwrap();
        }
        assert!(heap_records > 100, "{heap_records} heap records");
        assert!(prunes > 0, "the updates pruned pages: replayed too");
        let after = pages(&db);
        assert_eq!(after.len(), before.len(), "same number of pages");
        for ((rel, b, x), (_, _, y)) in before.iter().zip(&after) {
            let diff: Vec<usize> = (0..x.len()).filter(|&i| x[i] != y[i]).collect();
            assert!(
                diff.is_empty(),
                "page {b} of {rel} changed at {} bytes, first at {:?}",
                diff.len(),
                &diff[..diff.len().min(8)]
            );
        }
        // One record on its own: the page LSN says it is done.
        let rec = a_delete.expect("a delete record");
        if let WalRecord::Heap(HeapRecord::Delete { rel, block, .. }) = &rec.record {
            let r = redo_page(&db, rec.end_lsn, *rel, *block, false, |_| {
                panic!("applied twice")
            })
            .unwrap();
            assert_eq!(r, PageOutcome::AlreadyApplied);
        }
        assert_eq!(
            one(&mut s, "select count(*) from t"),
            (800 - 800 / 11).to_string()
        );
    }
}
