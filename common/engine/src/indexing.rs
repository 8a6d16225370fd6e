//! Index maintenance outside statements (PostgreSQL's `catalog/index.c`
//! and the index half of `executor/execIndexing.c`): what storage, redo
//! and start-up need to keep the in-memory indexes exact without going
//! through SQL.
//!
//! * [`index_key`] — a row's key in one index (none when a key column is
//!   NULL or a partial index's predicate is not true), the one encoding
//!   every insert, lookup and removal uses. Keys that are expressions, and
//!   predicates, are SQL: the engine calls the index's bound
//!   [`crate::catalog::IndexExprs`], which the SQL layer supplies through
//!   the process-wide [`crate::catalog::IndexExprBinder`] — the engine
//!   never depends on the SQL crate, yet replay on a standby keeps such an
//!   index exact. [`maintenance_key`] is its form for replay and start-up,
//!   where an expression error gives the version no entry instead of
//!   stopping the node;
//! * [`index_replayed_tuple`] / [`unindex_pruned_tuples`] — a standby's
//!   indexes follow replay; pruning (on a primary, the heap's prune hook)
//!   removes the entries of the versions it frees;
//! * [`build_replayed_indexes`] / [`rebuild_all_indexes`] — bottom-up
//!   builds from a heap scan ([`SortedBuild`]) for indexes created by
//!   replay and for every index at start-up;
//! * [`resolve_uncommitted_ddl`], [`drop_table`], [`truncate_table`] —
//!   relation-level changes that start-up, promotion and the end of a
//!   transaction carry out.
//!
//! Invariant: an index holds an entry for every heap version a snapshot
//! may still see (visibility is decided on the heap); an entry goes only
//! with, or after, its version.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::catalog::{CatalogChange, IndexDef, TableDef};
use crate::namespace::SchemaDef;
use crate::sequence::SequenceDef;
use crate::{Engine, Role};
use pgtypes::error::PgResult;
use pgtypes::lsn::Lsn;
use pgtypes::value::Value;
use pgtypes::{BlockNumber, ItemPointer, RelFileId, TransactionId};
use storage::heapam_xlog::HeapRedoHooks;
use storage::keycodec::encode_key_value;

/// Encodes the key of `row` (a decoded heap row of `table`) for `index`;
/// false when the row has no entry: a key column is NULL (NULLs never
/// conflict and never match an equality), or a partial index's predicate
/// is not true. An index with expressions computes them through its
/// bound [`crate::catalog::IndexExprs`]; their errors (a division by zero
/// in a key) are the caller's.
pub fn index_key(
    table: &TableDef,
    index: &IndexDef,
    row: &[Value],
    out: &mut Vec<u8>,
) -> PgResult<bool> {
    out.clear();
    if index.spec.is_plain() {
        for &c in &index.spec.columns {
            match row.get(c) {
                Some(Value::Null) | None => return Ok(false),
                Some(v) => encode_key_value(v, out),
            }
        }
        return Ok(true);
    }
    let mut vals = Vec::with_capacity(index.spec.columns.len());
    if !index.exprs(table)?.key_values(row, &mut vals)? {
        return Ok(false);
    }
    for v in &vals {
        if v.is_null() {
            return Ok(false);
        }
        encode_key_value(v, out);
    }
    Ok(true)
}

/// [`index_key`] for maintenance outside a statement (replay, start-up
/// builds, pruning): an expression that fails for a version gives it no
/// entry, logged. Such a version never became visible — the statement
/// that wrote it evaluated the same key and failed, aborting — so no
/// lookup can miss it; stopping replay or start-up over it would be worse.
pub fn maintenance_key(
    table: &TableDef,
    index: &IndexDef,
    row: &[Value],
    out: &mut Vec<u8>,
) -> bool {
    match index_key(table, index, row, out) {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(
                "index \"{}\": no entry for a row version of \"{}\": {}",
                index.spec.name,
                table.name,
                e.message
            );
            false
        }
    }
}

/// [`dead_to_all`] for a tuple header already in hand
/// ([`storage::heapam_visibility::satisfies_vacuum`] says Dead).
pub fn header_dead_to_all(
    db: &Engine,
    h: &storage::htup::TupleHeader,
    horizon: TransactionId,
) -> PgResult<bool> {
    Ok(matches!(
        storage::heapam_visibility::satisfies_vacuum(h, horizon, &db.clog, &db.procarray),
        storage::heapam_visibility::VacuumState::Dead { .. }
    ))
}

/// Start-up of a primary (after crash recovery) and the end of a
/// promotion: a table or index whose creating transaction did not commit —
/// it was running at the crash, or its session's clean-up after ROLLBACK
/// never ran — is removed (WAL-logged, so standbys follow); one whose
/// creator committed loses its mark. Prepared transactions never hold a
/// creation (PREPARE refuses), so "not committed" means "never will".
pub fn resolve_uncommitted_ddl(db: &Engine) -> PgResult<()> {
    // With no own xids, `visible_to` is "committed": it clears the mark of
    // a creator the clog calls committed, and says false for any other.
    for t in db.catalog.tables() {
        if let Some(prev) = &t.previous {
            if !creator_visible_alter(db, &t) {
                tracing::info!(
                    "restoring table \"{}\" altered by transaction {}, which did not commit",
                    prev.name,
                    t.altered_by.load(Ordering::Acquire)
                );
                undo_alter(db, &t)?;
            } else if prev.rel != t.rel {
                // A rewrite that committed, the crash before its old heap
                // file went.
                settle_rewrite(db, &t, prev.rel)?;
            }
        }
    }
    resolve_uncommitted_views(db)?;
    resolve_uncommitted_types(db)?;
    resolve_uncommitted_functions(db)?;
    for (key, c) in db.catalog.comments() {
        let by = c.by.load(Ordering::Acquire);
        if by == 0 {
            continue;
        }
        // Committed: the text stays, unmarked; else the text before it.
        let text = match db.clog.get_status(TransactionId(by)) {
            txn::clog::XidStatus::Committed => c.text.clone(),
            _ => {
                tracing::info!("restoring a comment set by transaction {by}, which did not commit");
                c.previous.clone()
            }
        };
        db.catalog
            .apply_catalog_change(&CatalogChange::SetComment {
                key,
                text,
                by: TransactionId::INVALID,
                previous: None,
            })?;
    }
    for (key, p) in db.catalog.privilege_list() {
        let by = p.by.load(Ordering::Acquire);
        if by == 0 {
            continue;
        }
        let entry = match db.clog.get_status(TransactionId(by)) {
            txn::clog::XidStatus::Committed => p.entry.clone(),
            _ => {
                tracing::info!(
                    "restoring privileges set by transaction {by}, which did not commit"
                );
                p.previous.clone()
            }
        };
        db.catalog
            .apply_catalog_change(&CatalogChange::SetPrivileges {
                key,
                entry,
                by: TransactionId::INVALID,
                previous: None,
            })?;
    }
    for s in db.catalog.schema_list() {
        if s.spec.previous.is_some() {
            if let Some(x) = uncommitted_creator(db, &s.altered_by) {
                tracing::info!(
                    "restoring schema \"{}\" altered by transaction {x}, which did not commit",
                    s.spec.name
                );
                undo_schema_alter(db, &s)?;
            }
        }
    }
    for s in db.catalog.sequences() {
        if s.previous.is_some() {
            if let Some(x) = uncommitted_creator(db, &s.altered_by) {
                tracing::info!(
                    "restoring sequence \"{}\" altered by transaction {x}, which did not commit",
                    s.spec.name
                );
                undo_sequence_alter(db, &s)?;
            }
        }
    }
    for s in db.catalog.sequences() {
        let Some(x) = uncommitted_creator(db, &s.creator) else {
            continue;
        };
        tracing::info!(
            "removing sequence \"{}\" created by transaction {x}, which did not commit",
            s.spec.name
        );
        db.catalog
            .apply_catalog_change(&CatalogChange::DropSequence { name: s.spec.key() })?;
    }
    for t in db.catalog.tables() {
        if !t.visible_to(&[], &db.clog) {
            tracing::info!(
                "removing table \"{}\" created by transaction {}, which did not commit",
                t.name,
                t.creator.load(Ordering::Acquire)
            );
            drop_table(db, &t, &AtomicBool::new(false))?;
            continue;
        }
        for ix in t.indexes.list() {
            if ix.visible_to(&[], &db.clog) {
                continue;
            }
            tracing::info!(
                "removing index \"{}\" created by transaction {}, which did not commit",
                ix.spec.name,
                ix.creator.load(Ordering::Acquire)
            );
            remove_index(db, &t.key(), &ix)?;
        }
    }
    for s in db.catalog.schema_list() {
        let Some(x) = uncommitted_creator(db, &s.creator) else {
            continue;
        };
        tracing::info!(
            "removing schema \"{}\" created by transaction {x}, which did not commit",
            s.spec.name
        );
        db.catalog
            .apply_catalog_change(&CatalogChange::DropSchema {
                name: s.spec.name.clone(),
            })?;
    }
    Ok(())
}

/// Start-up's part for views: a replacement or rename that never
/// committed goes back to the definition before it, a creation that never
/// committed goes.
fn resolve_uncommitted_views(db: &Engine) -> PgResult<()> {
    let committed =
        |x: u64| x == 0 || db.clog.get_status(TransactionId(x)) == txn::clog::XidStatus::Committed;
    for v in db.catalog.views() {
        let a = v.altered_by.load(Ordering::Acquire);
        if committed(a) {
            v.altered_by.store(0, Ordering::Release);
        } else if let Some(prev) = &v.spec.previous {
            tracing::info!(
                "restoring view \"{}\" replaced by transaction {a}, which did not commit",
                prev.name
            );
            db.catalog.apply_catalog_change(&CatalogChange::AlterView {
                name: v.spec.key(),
                spec: prev.committed(),
            })?;
        }
    }
    for v in db.catalog.views() {
        let x = v.creator.load(Ordering::Acquire);
        if committed(x) {
            v.creator.store(0, Ordering::Release);
            continue;
        }
        tracing::info!(
            "removing view \"{}\" created by transaction {x}, which did not commit",
            v.spec.name
        );
        db.catalog
            .apply_catalog_change(&CatalogChange::DropView { name: v.spec.key() })?;
    }
    Ok(())
}

/// Start-up's part for enum types: a creation that never committed goes
/// (an ALTER TYPE is undone only by its session's rollback).
fn resolve_uncommitted_types(db: &Engine) -> PgResult<()> {
    for t in db.catalog.enum_types() {
        let Some(x) = uncommitted_creator(db, &t.creator) else {
            continue;
        };
        tracing::info!(
            "removing type \"{}\" created by transaction {x}, which did not commit",
            t.spec.name
        );
        db.catalog.apply_catalog_change(&CatalogChange::DropType {
            name: t.spec.name.clone(),
        })?;
    }
    Ok(())
}

/// Start-up's part for functions: a creation that never committed goes
/// (CREATE OR REPLACE of a committed function carries no mark: its
/// session's rollback undoes it, a crash keeps the new body).
fn resolve_uncommitted_functions(db: &Engine) -> PgResult<()> {
    for f in db.catalog.functions() {
        let Some(x) = uncommitted_creator(db, &f.creator) else {
            continue;
        };
        tracing::info!(
            "removing function \"{}\" created by transaction {x}, which did not commit",
            f.spec.name
        );
        db.catalog
            .apply_catalog_change(&CatalogChange::DropFunction { oid: f.spec.oid })?;
    }
    Ok(())
}

/// The creating xid of an object whose creation never committed; None
/// once it did (the mark is cleared then) or for an object with no mark.
fn uncommitted_creator(db: &Engine, creator: &std::sync::atomic::AtomicU64) -> Option<u64> {
    let x = creator.load(Ordering::Acquire);
    if x == 0 {
        return None;
    }
    if db.clog.get_status(TransactionId(x)) == txn::clog::XidStatus::Committed {
        creator.store(0, Ordering::Release);
        return None;
    }
    Some(x)
}

/// Puts back the committed definition before the uncommitted ALTER TABLE
/// that made version `t` (WAL-logged), whose transaction ended without
/// committing; the heap file a rewrite made goes with it.
pub fn undo_alter(db: &Engine, t: &Arc<TableDef>) -> PgResult<()> {
    let Some(prev) = &t.previous else {
        return Ok(());
    };
    db.catalog
        .apply_catalog_change(&CatalogChange::AlterTable {
            name: t.key(),
            spec: prev.spec(),
        })?;
    if prev.rel != t.rel {
        db.heap.drop_relation(t.rel)?;
    }
    if let Some(now) = db.catalog.by_oid(t.oid) {
        build_unready_indexes(db, &now)?;
    }
    Ok(())
}

/// Puts back the committed definition before the uncommitted ALTER
/// SEQUENCE that made `s` (WAL-logged), whose transaction ended without
/// committing: with the counter before it if the ALTER replaced the
/// counter, else the counter as it runs.
pub fn undo_sequence_alter(db: &Engine, s: &SequenceDef) -> PgResult<()> {
    let Some(prev) = &s.spec.previous else {
        return Ok(());
    };
    let _g = s.nextval_lock.lock();
    if s.is_retired() {
        return Ok(());
    }
    let (value, called) = prev.counter.unwrap_or_else(|| s.counter());
    let mut spec = prev.spec.unmarked();
    spec.creator = TransactionId(s.creator.load(Ordering::Acquire));
    db.catalog
        .apply_catalog_change(&CatalogChange::AlterSequence {
            name: s.spec.key(),
            spec,
            value,
            called,
        })
        .map(|_| ())
}

/// Puts back the committed row before the uncommitted ALTER SCHEMA that
/// made `s` (WAL-logged), whose transaction ended without committing.
pub fn undo_schema_alter(db: &Engine, s: &SchemaDef) -> PgResult<()> {
    let Some(prev) = &s.spec.previous else {
        return Ok(());
    };
    let mut spec = prev.unmarked();
    spec.creator = TransactionId(s.creator.load(Ordering::Acquire));
    db.catalog
        .apply_catalog_change(&CatalogChange::AlterSchema {
            old_name: s.spec.name.clone(),
            spec,
        })
        .map(|_| ())
}

/// The end of a committed rewrite (ALTER COLUMN … TYPE): the definition
/// loses its previous version — a catalog change, so every node's
/// catalog version moves and cached plans of the old version are re-bound
/// — and the old heap file `old_rel` goes. Waits for the statements still
/// reading the old file (the relation lock).
pub fn settle_rewrite(db: &Engine, t: &TableDef, old_rel: RelFileId) -> PgResult<()> {
    let _x = t.lock.exclusive(&AtomicBool::new(false))?;
    if let Some(now) = db.catalog.by_oid(t.oid) {
        if now.previous.is_some() {
            let mut spec = now.spec();
            spec.altered_by = TransactionId::INVALID;
            spec.previous = None;
            db.catalog
                .apply_catalog_change(&CatalogChange::AlterTable {
                    name: now.key(),
                    spec,
                })?;
        }
        if now.rel == old_rel {
            return Ok(());
        }
    }
    db.heap.drop_relation(old_rel)
}

/// Builds, from the heap, the indexes of one table version that are not
/// ready: the index set a rewrite's undo gives a heap file whose own set
/// is gone (two rewrites in one transaction, the later one undone).
pub fn build_unready_indexes(db: &Engine, t: &TableDef) -> PgResult<()> {
    let pending: Vec<_> = t
        .indexes
        .list()
        .into_iter()
        .filter(|ix| !ix.is_ready())
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    let types = t.types();
    let mut row = Vec::with_capacity(types.len());
    let mut build = SortedBuild::new(t, &pending);
    db.heap.scan_all(t.rel, &mut |tid, data| {
        t.decode_into(data, &types, &mut row, &db.heap)?;
        build.add(&row, tid)
    })?;
    build.finish();
    for ix in &pending {
        ix.set_ready();
    }
    Ok(())
}

/// True if the ALTER TABLE that made version `t` committed (clears the
/// mark then).
fn creator_visible_alter(db: &Engine, t: &Arc<TableDef>) -> bool {
    Arc::ptr_eq(&t.version_for(&[], &db.clog), t)
}

/// Removes an index whose creation did not commit, and gives back the
/// NOT NULL its primary key set (WAL-logged).
pub fn remove_index(db: &Engine, table: &str, ix: &IndexDef) -> PgResult<()> {
    db.catalog.apply_catalog_change(&CatalogChange::DropIndex {
        table: table.to_string(),
        name: ix.spec.name.clone(),
    })?;
    ix.index.clear();
    if !ix.spec.sets_not_null.is_empty() {
        db.catalog
            .apply_catalog_change(&CatalogChange::DropNotNull {
                table: table.to_string(),
                columns: ix.spec.sets_not_null.clone(),
            })?;
    }
    Ok(())
}

/// Drops one table now: catalog entry (WAL-logged), indexes, relation
/// files. A table someone dropped meanwhile is left alone.
pub fn drop_table(db: &Engine, t: &TableDef, cancel: &AtomicBool) -> PgResult<()> {
    let _x = t.lock.exclusive(cancel)?;
    if t.check_not_dropped().is_err() {
        return Ok(());
    }
    db.catalog
        .apply_catalog_change(&CatalogChange::DropTable { name: t.key() })?;
    for ix in t.indexes.list() {
        ix.index.clear();
    }
    db.heap.drop_relation(t.rel)?;
    // The sequences of its serial columns go with it.
    for s in db.catalog.sequences() {
        if s.spec.owned_by.as_ref().is_some_and(|(o, _)| *o == t.key()) {
            db.catalog
                .apply_catalog_change(&CatalogChange::DropSequence { name: s.spec.key() })?;
        }
    }
    Ok(())
}

/// Empties one table (also used to undo an aborted COPY FREEZE).
pub fn truncate_table(db: &Engine, t: &TableDef, cancel: &AtomicBool) -> PgResult<()> {
    let _x = t.lock.exclusive(cancel)?;
    t.check_not_dropped()?;
    db.heap.truncate_relation(t.rel)?;
    for ix in t.indexes.list() {
        ix.index.clear();
    }
    Ok(())
}

/// Standby redo: adds the index entries of the row version just replayed at
/// `tid` of relation `rel`. Indexes live in memory, so a standby that keeps
/// replaying must maintain them as the primary did (crash recovery instead
/// rebuilds them once after redo). Adding an existing entry is a no-op, so
/// replaying a record twice is harmless.
pub fn index_replayed_tuple(db: &Engine, rel: RelFileId, tid: ItemPointer) -> PgResult<()> {
    let Some(t) = db.catalog.by_rel(rel) else {
        return Ok(());
    };
    let list = t.indexes.list();
    if list.is_empty() {
        return Ok(());
    }
    let types = t.types();
    let mut row = Vec::with_capacity(types.len());
    let mut kb = Vec::new();
    let decoded = db.heap.fetch_any(rel, tid, |_, data| {
        t.decode_into(data, &types, &mut row, &db.heap)
    })?;
    if let Some(res) = decoded {
        res?;
        for ix in &list {
            if maintenance_key(&t, ix, &row, &mut kb) {
                ix.index.insert(&kb, tid);
            }
        }
    }
    Ok(())
}

/// Removes the index entries of heap versions that pruning removes — the
/// heap's `PruneIndexHook` on a primary, and prune replay on a standby
/// (whose indexes follow replay). `items` are the versions' tids and row
/// data, read before their slots are freed: the keys come from the data.
///
/// Returns false — remove nothing, free nothing — if an index of the table
/// is not ready on a primary: CREATE INDEX is scanning the heap and may
/// already hold entries for these versions. A standby's replayed index is
/// built later from the heap, which no longer has them, so it is skipped.
///
/// A unique index's entry is removed under its key's stripe lock, the lock
/// a unique check holds from reading the index to checking each version
/// (`executor::unique_insert`): a check never fetches a tid whose entry
/// was removed — and whose slot may have been reused — under it.
pub fn unindex_pruned_tuples(
    db: &Engine,
    rel: RelFileId,
    items: &[(ItemPointer, &[u8])],
    replay: bool,
) -> PgResult<bool> {
    let Some(t) = db.catalog.by_rel(rel) else {
        return Ok(true); // no catalog entry, no indexes
    };
    let list = t.indexes.list();
    if list.is_empty() || items.is_empty() {
        return Ok(true);
    }
    if !replay && list.iter().any(|ix| !ix.is_ready()) {
        return Ok(false);
    }
    let types = t.types();
    let mut row = Vec::with_capacity(types.len());
    let mut kb = Vec::new();
    for (tid, data) in items {
        t.decode_into(data, &types, &mut row, &db.heap)?;
        for ix in list.iter().filter(|ix| ix.is_ready()) {
            if maintenance_key(&t, ix, &row, &mut kb) {
                let _stripe = ix.spec.unique.then(|| ix.stripe(&kb).lock());
                ix.index.remove(&kb, *tid);
            }
        }
    }
    Ok(true)
}

/// Standby redo of a catalog change: builds from the heap every index that
/// replay created (not ready yet), so standby queries can use it — bottom-up
/// from sorted entries ([`SortedBuild`]), the same tree CREATE INDEX gave
/// the primary.
pub fn build_replayed_indexes(db: &Engine) -> PgResult<()> {
    for t in db.catalog.tables() {
        build_unready_indexes(db, &t)?;
    }
    Ok(())
}

/// An index build from a heap scan: each index's (key, tid) entries are
/// gathered, sorted once and loaded bottom-up (`Index::load_sorted`), as
/// CREATE INDEX does on the primary.
///
/// Why not insert row by row: `BTreeMap` splits a full node in the middle,
/// so keys arriving in order (a heap scan of a table loaded in key order)
/// leave every node about half full — a tree with twice the nodes and up
/// to two more levels than the bulk-built one, each lookup paying more
/// cache misses. A standby whose pgbench_accounts key is built that way
/// spends measurably more CPU per select-only query than its primary
/// (docs/benchmarks.md, "Standby vs primary at 64-256 clients").
struct SortedBuild<'a> {
    table: &'a TableDef,
    indexes: &'a [Arc<IndexDef>],
    runs: Vec<Vec<(Vec<u8>, ItemPointer)>>,
    key: Vec<u8>,
}

impl<'a> SortedBuild<'a> {
    fn new(table: &'a TableDef, indexes: &'a [Arc<IndexDef>]) -> SortedBuild<'a> {
        SortedBuild {
            table,
            indexes,
            runs: vec![Vec::new(); indexes.len()],
            key: Vec::new(),
        }
    }

    /// Adds the entries of the decoded row at `tid` (none for an index
    /// whose key has a NULL or whose predicate the row fails).
    fn add(&mut self, row: &[Value], tid: ItemPointer) -> PgResult<()> {
        for (ix, run) in self.indexes.iter().zip(self.runs.iter_mut()) {
            if maintenance_key(self.table, ix, row, &mut self.key) {
                run.push((self.key.clone(), tid));
            }
        }
        Ok(())
    }

    /// Sorts each run and loads it into its index.
    fn finish(self) {
        for (ix, mut run) in self.indexes.iter().zip(self.runs) {
            run.sort_unstable();
            ix.index.load_sorted(run);
        }
    }
}

/// Rebuilds every index of every table from the heap (database open),
/// bottom-up from sorted entries ([`SortedBuild`]).
/// Also returns the largest xid found in any tuple header.
///
/// Versions already dead to every snapshot get no entry: no session
/// exists yet, so a version whose deleter committed (or whose inserter
/// aborted) can never be seen again. Without this, a restart put back every
/// dead version of a hot row (pgbench's branches after a 2PC run: tens of
/// thousands under one key), and the first lookups spent seconds removing
/// them again one by one.
pub fn rebuild_all_indexes(db: &Engine) -> PgResult<u64> {
    let mut max_xid = 0u64;
    // Past every xid: a committed deleter is older than any snapshot to come.
    let horizon = TransactionId(u64::MAX);
    let mut versions = Vec::new();
    for t in db.catalog.tables() {
        // The version before an uncommitted rewrite reads its own heap
        // file through its own indexes (see `catalog::indexes_for`).
        if let Some(p) = t
            .previous
            .as_ref()
            .filter(|p| !Arc::ptr_eq(&p.indexes, &t.indexes))
        {
            versions.push(p.clone());
        }
        versions.push(t);
    }
    for t in versions {
        let list = t.indexes.list();
        let types = t.types();
        let mut row = Vec::with_capacity(types.len());
        let mut build = SortedBuild::new(&t, &list);
        let mut scan = |tid: ItemPointer, data: &[u8]| {
            // One header read serves both the xid high-water mark and the
            // "dead to everyone" test.
            let Some(h) = db.heap.fetch_any(t.rel, tid, |h, _| *h)? else {
                return Ok(());
            };
            max_xid = max_xid.max(h.xmin.0).max(h.xmax.0);
            if list.is_empty() || header_dead_to_all(db, &h, horizon)? {
                return Ok(());
            }
            t.decode_into(data, &types, &mut row, &db.heap)?;
            build.add(&row, tid)
        };
        // A page that cannot be read (data_checksums, a corrupt header)
        // must not keep the node from starting: its rows stay out of the
        // indexes, and a scan that reaches the page reports it
        // (PostgreSQL, which need not read the heap at start-up, starts
        // too). next_xid does not depend on it: the checkpoint's covers it.
        db.heap.scan_all_skipping(t.rel, &mut scan, &mut |block, e| {
            tracing::warn!(
                "could not read block {block} of relation \"{}\" while rebuilding its indexes: {}; \
                 rows on that page are missing from its indexes until it is repaired and the server restarted",
                t.name,
                e.message
            );
            Ok(())
        })?;
        build.finish();
        for ix in &list {
            ix.set_ready();
        }
    }
    Ok(max_xid)
}

/// Replays a catalog change (rmgr Catalog): the catalog applies it at its
/// own LSN; a standby then builds, from the heap, every index the change
/// created, so standby queries can use it.
pub fn redo_catalog(engine: &Engine, lsn: wal::Lsn, payload: &[u8]) -> PgResult<()> {
    engine.catalog.redo_catalog_change(lsn, payload)?;
    if engine.role() == Role::Standby {
        build_replayed_indexes(engine)?;
    }
    Ok(())
}

/// What heap redo needs beyond pages and files (storage declares it,
/// the engine answers for the node): a standby keeps its indexes in step
/// and resolves snapshot conflicts; crash recovery does neither, and
/// rebuilds every index once after redo.
impl HeapRedoHooks for Engine {
    fn maintains_indexes(&self) -> bool {
        self.role() == Role::Standby
    }
    fn index_tuple(&self, rel: RelFileId, tid: ItemPointer) -> PgResult<()> {
        if !self.maintains_indexes() {
            return Ok(());
        }
        index_replayed_tuple(self, rel, tid)
    }
    fn resolve_snapshot_conflict(&self, latest_removed_xid: TransactionId) -> bool {
        Engine::resolve_snapshot_conflict(self, latest_removed_xid)
    }
    fn record_early_removal(
        &self,
        rel: RelFileId,
        block: BlockNumber,
        removed: &[(TransactionId, TransactionId)],
        lsn: Lsn,
    ) {
        self.record_replayed_early_removal(rel.0, block.0, removed, lsn)
    }
    fn unindex_pruned(&self, rel: RelFileId, items: &[(ItemPointer, &[u8])]) -> PgResult<()> {
        unindex_pruned_tuples(self, rel, items, true).map(|_| ())
    }
    fn relation_created(&self, rel: RelFileId) {
        self.catalog.advance_next_oid(rel.0.saturating_add(1));
    }
}
