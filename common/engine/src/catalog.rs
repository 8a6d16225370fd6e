//! The catalog: tables, their columns, and their indexes.
//!
//! One node-wide [`Catalog`] holds a map from table name to an
//! `Arc<TableDef>` behind a `RwLock`. A statement looks its tables up once
//! (read lock, a clone of the `Arc`) and then works on that immutable
//! descriptor without holding the catalog lock; a bound plan remembers the
//! catalog [`Catalog::version`] it was made under and is re-bound when the
//! version moved.
//!
//! ## Roles
//!
//! The catalog also holds the node's roles ([`RoleSpec`], PostgreSQL's
//! `pg_authid` rows) by name. They change through the same
//! [`CatalogChange`] path (`CreateRole`, `AlterRole` carrying the whole
//! new row, `DropRole`), so a standby replays them and they persist in
//! the same file; authentication reads them with [`Catalog::role`]. Role
//! changes take effect at once, not at commit: a `CREATE ROLE` inside a
//! transaction block that rolls back keeps the role. Passwords are kept
//! only as the verifier text (`SCRAM-SHA-256$…` or `md5…`).
//!
//! ## Changes
//!
//! Every change goes through [`Catalog::apply_catalog_change`] with a
//! [`CatalogChange`] value. Under the catalog write lock it validates the
//! change, writes it to WAL as a `Catalog` record (payload:
//! [`encode_change`]) and flushes it, applies it to the map (`apply_locked`,
//! the one function used both when executing and in redo), bumps the
//! version and rewrites `DIR/global/catalog` (temp file, fsync, rename,
//! fsync of the directory) stamped with the record's end LSN.
//!
//! That LSN makes the catalog behave like a page under WAL: the file is
//! written only after its WAL is durable, and redo
//! ([`Catalog::redo_catalog_change`]) applies a record only if its end LSN
//! is newer than the file's — so replaying from any checkpoint is
//! idempotent. Indexes created by redo stay "not ready" until the start-up
//! index rebuild fills them.
//!
//! ## Uncommitted creations
//!
//! A table or index carries the xid of the (sub)transaction that created
//! it (`creator`, logged in the change and kept in the file) until that
//! transaction is known committed. Statements look names up through
//! [`Catalog::view`], which hides a marked table from everyone but its
//! creator until the clog says it committed; the session undoes the
//! creation if it rolls back, and start-up removes any the clog never saw
//! commit ([`crate::indexing::resolve_uncommitted_ddl`]; docs/architecture/sql.md,
//! "Transactional DDL"). The session defers a `DROP TABLE` in a
//! transaction block to COMMIT and turns a `TRUNCATE` there into an MVCC
//! delete, so that neither loses data on a ROLLBACK.
//!
//! ## Uncommitted ALTER TABLE
//!
//! `AlterTable` replaces a table's whole definition (its name too). While
//! the altering transaction may roll back, the new version carries its
//! xid (`TableDef::altered_by`) and the committed definition before it
//! (`TableDef::previous`), both logged and persisted; [`Catalog::view`]
//! gives every other transaction that previous version. Undo is another
//! `AlterTable` back to it (the session at ROLLBACK, start-up after a
//! crash). Physical columns never go away: a dropped column stays,
//! marked ([`ColumnDef::dropped`]), and a column added with a DEFAULT
//! keeps that value for older rows ([`ColumnDef::missing`],
//! [`TableDef::decode_into`]).
//!
//! A rewrite (ALTER COLUMN … TYPE, `sql::tablerewrite`) changes `rel`
//! too: the new version reads a new heap file with the new column types,
//! the previous version keeps the old file and the old types, and
//! [`Catalog::by_rel`] finds the version a file belongs to — rows of one
//! file are only ever decoded with that file's definition. When the ALTER
//! commits, one more `AlterTable` drops the previous version (every
//! node's catalog version moves) and the old file goes.
//!
//! ## Constraints and sequences
//!
//! A table's constraints are a list of [`ConstraintSpec`] (pg_constraint
//! rows) in its definition. Sequences ([`crate::sequence`]) are a second
//! map beside the tables, created, dropped and advanced
//! (`SetSequence`, logged ahead of use) through the same change path.
//!
//! ## Views
//!
//! Views ([`crate::view`]) are a third map, beside tables and sequences,
//! in the same relation namespace (a creation or rename checks all of
//! them and the indexes). `CreateView`, `AlterView` (CREATE OR REPLACE,
//! RENAME: the whole new definition, marked like an uncommitted ALTER
//! TABLE) and `DropView` go through the same change path;
//! [`CatalogView::view`] applies the creator / alterer visibility rules.
//!
//! ## Indexes
//!
//! Indexes are in memory ([`storage::index::Index`]): order-preserving
//! key bytes → every heap row version with that key. They are rebuilt from
//! the heap (`Heap::scan_all`) when the database opens. The index list of a
//! table lives in a [`TableIndexes`] shared by every version of the table's
//! descriptor that reads the same heap file, so a writer that picked up the
//! descriptor before `CREATE INDEX` still sees the new index. Entries
//! name tuples of one file, so a version with another file (a rewrite)
//! has its own set — copies of the definitions, filled from its file — and
//! undoing the rewrite gets the previous version's set back untouched
//! (`indexes_for`). Writers read the list *after* inserting
//! the heap tuple; an index build publishes the (empty) index first and then
//! scans the heap, so every tuple ends up in the index one way or the other.
//!
//! A key may be an expression and an index may be partial
//! ([`IndexSpec::exprs`], [`IndexSpec::predicate`]: SQL text with
//! positional column references). The engine cannot evaluate SQL: the
//! layer above installs an [`IndexExprBinder`] once per process
//! ([`set_index_expr_binder`]), and each [`IndexDef`] keeps the
//! [`IndexExprs`] it binds at first use, through which
//! [`crate::indexing::index_key`] computes keys on every path, replay
//! included.
//!
//! ## Statistics
//!
//! ANALYZE's results ([`crate::statistics::RelationStats`]) live beside the
//! table map, keyed by table OID, and change through the same path
//! (`SetStatistics`): logged, replayed by standbys, persisted in the file
//! after the tables, and removed by `DropTable`.
//!
//! ## Relation locks
//!
//! [`RelLock`] serialises TRUNCATE and DROP against statements using the
//! table (the storage layer requires it). A TRUNCATE/DROP waiting for the
//! statements using the table stops new ones from starting (as PostgreSQL's
//! lock queue does), so a stream of readers cannot starve it. A thread that
//! already holds the lock shared re-enters it without queueing (PostgreSQL
//! lets a backend that holds a lock on the object jump ahead of conflicting
//! waiters): a statement reading one table twice — a self-join, a subquery
//! over its own table — would otherwise wait for the TRUNCATE that waits
//! for it. Re-entry is safe whatever the bookkeeping says because it only
//! happens while some reader holds the lock, when no TRUNCATE/DROP can.
//!
//! Lock order: catalog `RwLock` → `TableIndexes` → `RelLock`; none of them is
//! held while waiting for a transaction.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::acl::{acl_line, new_priv, parse_acl_line, PrivDef, PrivEntry};
use crate::comment::{comment_line, parse_comment_line, CommentDef, CommentKey};
use crate::namespace::{
    parse_schema, rel_key, schema_line, split_key, SchemaDef, SchemaSpec, BUILTIN_SCHEMAS,
    DEFAULT_PATH, PUBLIC_NAMESPACE,
};
use crate::pg_enum::{parse_enum_type, push_enum_type, EnumTypeDef, EnumTypeSpec};
use crate::pg_proc::{parse_function, push_function, FunctionDef, FunctionSpec};
use crate::pg_trigger::TriggerSpec;
use crate::sequence::{SequenceDef, SequencePrevious, SequenceSpec};
use crate::statistics::{decode_stats, encode_stats, RelationStats};
use crate::view::{parse_view, push_view, ViewDef, ViewSpec};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::fileutil::{io_error, write_atomic};
use pgtypes::sqltype::SqlType;
use pgtypes::{Oid, RelFileId, TransactionId};
use storage::index::Index;
use storage::xloginsert::XLog;
use txn::clog::{Clog, XidStatus};
use wal::Lsn;

/// First OID handed to user objects (PostgreSQL's FirstNormalObjectId).
pub const FIRST_USER_OID: u32 = 16384;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    /// Column name.
    pub name: String,
    /// Type.
    pub ty: SqlType,
    /// NOT NULL.
    pub not_null: bool,
    /// DEFAULT expression as SQL text (bound when a statement needs it).
    pub default: Option<String>,
    /// Dropped by `ALTER TABLE … DROP COLUMN` (PostgreSQL's attisdropped):
    /// the column keeps its place in the tuple format, so rows written
    /// before stay readable, but no statement sees it. Its name is then
    /// PostgreSQL's `........pg.dropped.N........` (see [`dropped_column_name`]).
    pub dropped: bool,
    /// The value rows written before `ALTER TABLE … ADD COLUMN … DEFAULT`
    /// have for this column (PostgreSQL's attmissingval), as text in the
    /// column's type (an enum label: its OID); None: NULL. Applied by [`TableDef::decode_into`].
    pub missing: Option<String>,
    /// An identity column (attidentity): `'a'` GENERATED ALWAYS, `'d'`
    /// GENERATED BY DEFAULT; its `default` is the `nextval` of the
    /// sequence it owns, which the catalogs do not show as a default.
    pub identity: Option<char>,
}

impl ColumnDef {
    /// A visible column without default or missing value.
    pub fn new(name: &str, ty: SqlType) -> ColumnDef {
        ColumnDef {
            name: name.to_string(),
            ty,
            not_null: false,
            default: None,
            dropped: false,
            missing: None,
            identity: None,
        }
    }
}

/// The name a dropped column takes (PostgreSQL's, with its 1-based
/// attribute number): no user query can name it by accident.
pub fn dropped_column_name(position: usize) -> String {
    format!("........pg.dropped.{}........", position + 1)
}

/// True for the name of a dropped column ([`dropped_column_name`]).
pub fn is_dropped_name(name: &str) -> bool {
    name.starts_with("........pg.dropped.")
}

/// The kind of a table constraint (pg_constraint.contype).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    /// `p`: PRIMARY KEY (backed by the index [`ConstraintSpec::index`]).
    PrimaryKey,
    /// `u`: UNIQUE (backed by an index).
    Unique,
    /// `c`: CHECK (expression [`ConstraintSpec::check`]).
    Check,
    /// `f`: FOREIGN KEY ([`ConstraintSpec::foreign`]).
    ForeignKey,
}

impl ConstraintKind {
    /// pg_constraint.contype.
    pub fn contype(self) -> char {
        match self {
            ConstraintKind::PrimaryKey => 'p',
            ConstraintKind::Unique => 'u',
            ConstraintKind::Check => 'c',
            ConstraintKind::ForeignKey => 'f',
        }
    }
    /// Parses [`ConstraintKind::contype`].
    pub fn from_contype(c: char) -> Option<ConstraintKind> {
        Some(match c {
            'p' => ConstraintKind::PrimaryKey,
            'u' => ConstraintKind::Unique,
            'c' => ConstraintKind::Check,
            'f' => ConstraintKind::ForeignKey,
            _ => return None,
        })
    }
}

/// A foreign key's referential action (pg_constraint.confdeltype /
/// confupdtype letters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    /// `a`: NO ACTION.
    NoAction,
    /// `r`: RESTRICT.
    Restrict,
    /// `c`: CASCADE.
    Cascade,
    /// `n`: SET NULL.
    SetNull,
    /// `d`: SET DEFAULT.
    SetDefault,
}

impl FkAction {
    /// The pg_constraint letter.
    pub fn letter(self) -> char {
        match self {
            FkAction::NoAction => 'a',
            FkAction::Restrict => 'r',
            FkAction::Cascade => 'c',
            FkAction::SetNull => 'n',
            FkAction::SetDefault => 'd',
        }
    }
    /// Parses [`FkAction::letter`].
    pub fn from_letter(c: char) -> Option<FkAction> {
        Some(match c {
            'a' => FkAction::NoAction,
            'r' => FkAction::Restrict,
            'c' => FkAction::Cascade,
            'n' => FkAction::SetNull,
            'd' => FkAction::SetDefault,
            _ => return None,
        })
    }
}

/// The referencing side of a FOREIGN KEY constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKeySpec {
    /// The referenced table's OID (confrelid): a rename of either table
    /// leaves the constraint intact.
    pub table: Oid,
    /// The referenced columns' positions in that table (confkey).
    pub columns: Vec<usize>,
    /// ON DELETE (confdeltype).
    pub on_delete: FkAction,
    /// ON UPDATE (confupdtype).
    pub on_update: FkAction,
}

/// One constraint of a table — PostgreSQL's pg_constraint row, kept as a
/// list on the table ([`TableSpec::constraints`]). NOT NULL is not here (it
/// is [`ColumnDef::not_null`], as in PostgreSQL 15's attnotnull).
///
/// | kind | `columns` | `check` | `index` | `foreign` |
/// |---|---|---|---|---|
/// | p / u | key columns (conkey) | – | the index enforcing it | – |
/// | c | columns the expression uses | expression text (consrc) | – | – |
/// | f | referencing columns | – | – | target and actions |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintSpec {
    /// conname: `t_a_check`, `t_pkey`, `t_a_key`, `t_a_fkey` by default.
    pub name: String,
    /// contype.
    pub kind: ConstraintKind,
    /// conkey: column positions in the table.
    pub columns: Vec<usize>,
    /// A CHECK constraint's expression as SQL text.
    pub check: Option<String>,
    /// The index of a PRIMARY KEY / UNIQUE constraint (conindid).
    pub index: Option<String>,
    /// A FOREIGN KEY's target and actions.
    pub foreign: Option<ForeignKeySpec>,
    /// condeferrable.
    pub deferrable: bool,
    /// condeferred (INITIALLY DEFERRED).
    pub initially_deferred: bool,
    /// Added `NOT VALID` and not validated since (`convalidated` false):
    /// existing rows were not checked; new ones are.
    pub not_valid: bool,
    /// A FOREIGN KEY's `MATCH FULL` (confmatchtype 'f'): all key columns
    /// NULL or none; otherwise MATCH SIMPLE.
    pub match_full: bool,
}

/// What defines an index (persisted; the in-memory [`Index`] is rebuilt).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct IndexSpec {
    /// Index name (`t_pkey` for a primary key).
    pub name: String,
    /// OID (for messages and future views).
    pub oid: Oid,
    /// Column positions in the table, in key order; [`EXPR_KEY`] for a
    /// key that is an expression (PostgreSQL's indkey 0), whose text is
    /// the next one of [`Self::exprs`].
    pub columns: Vec<usize>,
    /// The expression keys in key order, as SQL text whose column
    /// references are positional (`"#3"` is column 3, see
    /// [`IndexExprs`]): renaming a column leaves them valid.
    pub exprs: Vec<String>,
    /// A partial index's predicate (`WHERE …`), SQL text like
    /// [`Self::exprs`]: only rows for which it is true have an entry.
    pub predicate: Option<String>,
    /// Every column the expressions and the predicate use (sorted):
    /// dropping one drops the index; an UPDATE of one changes the key.
    pub expr_columns: Vec<usize>,
    /// Per key column, PostgreSQL's indoption bits (1 DESC, 2 NULLS
    /// FIRST); empty when every key is plain ASC. Shown, not used: lookups
    /// are equality only.
    pub options: Vec<i16>,
    /// UNIQUE (primary keys are unique).
    pub unique: bool,
    /// PRIMARY KEY.
    pub primary: bool,
    /// The (sub)transaction that created the index, as logged; see
    /// [`TableSpec::creator`].
    pub creator: TransactionId,
    /// Columns an `ADD PRIMARY KEY` makes NOT NULL (they were nullable):
    /// what removing the index again, uncommitted, gives back.
    pub sets_not_null: Vec<usize>,
}

/// The key column position standing for an expression key in
/// [`IndexSpec::columns`].
pub const EXPR_KEY: usize = usize::MAX;

impl IndexSpec {
    /// A plain index: every key a column, no predicate.
    pub fn is_plain(&self) -> bool {
        self.exprs.is_empty() && self.predicate.is_none()
    }
    /// True if the index depends on column `c` (as a key column, in an
    /// expression or in the predicate).
    pub fn uses_column(&self, c: usize) -> bool {
        self.columns.contains(&c) || self.expr_columns.contains(&c)
    }
}

/// What the layer above computes for an index with expressions or a
/// predicate (the SQL layer binds the stored text once per index): the
/// engine keeps such an index exact — on a standby's replay, at start-up
/// — without knowing SQL.
pub trait IndexExprs: Send + Sync {
    /// The key values of `row` (a decoded heap row of the table), one per
    /// key column, into `out`; false when the row has no entry (the
    /// predicate is not true). Errors are evaluation errors (division by
    /// zero in a key expression …).
    fn key_values(
        &self,
        row: &[pgtypes::value::Value],
        out: &mut Vec<pgtypes::value::Value>,
    ) -> PgResult<bool>;
    /// The type of each key column.
    fn key_types(&self) -> &[SqlType];
    /// The layer above's own view of itself (its bound expressions, for
    /// its planner).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Binds an index's expressions for [`IndexExprs`]: installed once per
/// process by the layer above ([`set_index_expr_binder`]).
pub trait IndexExprBinder: Send + Sync {
    /// The evaluator of `spec`'s expressions and predicate over rows of
    /// `table`.
    fn bind(&self, table: &TableDef, spec: &IndexSpec) -> PgResult<Arc<dyn IndexExprs>>;
}

static INDEX_EXPR_BINDER: std::sync::OnceLock<Box<dyn IndexExprBinder>> =
    std::sync::OnceLock::new();

/// Installs the binder of index expressions (first call wins; primary and
/// standby call it before opening the database).
pub fn set_index_expr_binder(b: Box<dyn IndexExprBinder>) {
    let _ = INDEX_EXPR_BINDER.set(b);
}

/// An index of a table: its definition and its in-memory entries.
pub struct IndexDef {
    /// The definition.
    pub spec: IndexSpec,
    /// The entries.
    pub index: Index,
    /// Stripes serialising "check for a conflicting key, then insert the
    /// entry" of unique indexes (PostgreSQL holds the btree page lock).
    stripes: Vec<Mutex<()>>,
    /// False while the index is being built (not usable for lookups yet).
    ready: AtomicBool,
    /// The creating xid until that transaction is known committed (0
    /// after); see [`TableDef::creator`].
    pub creator: AtomicU64,
    /// The bound expressions of a non-plain index, made at first use.
    exprs: std::sync::OnceLock<Arc<dyn IndexExprs>>,
}

impl std::fmt::Debug for IndexDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexDef")
            .field("spec", &self.spec)
            .finish()
    }
}

const STRIPES: usize = 64;

impl IndexDef {
    fn new(spec: IndexSpec, ready: bool) -> IndexDef {
        let index = Index::new(spec.unique);
        let creator = AtomicU64::new(spec.creator.0);
        IndexDef {
            spec,
            index,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            ready: AtomicBool::new(ready),
            creator,
            exprs: std::sync::OnceLock::new(),
        }
    }

    /// The evaluator of this (non-plain) index's expressions over rows of
    /// `table`, bound at first use through the installed
    /// [`IndexExprBinder`]. Column positions never change for a table, and
    /// column types change only with a rewrite, which gives the new heap
    /// file new `IndexDef`s: one binding serves every version that reads
    /// this index.
    pub fn exprs(&self, table: &TableDef) -> PgResult<Arc<dyn IndexExprs>> {
        if let Some(e) = self.exprs.get() {
            return Ok(e.clone());
        }
        let binder = INDEX_EXPR_BINDER.get().ok_or_else(|| {
            PgError::internal(format!(
                "index \"{}\" has expressions, but no binder is installed",
                self.spec.name
            ))
        })?;
        let e = binder.bind(table, &self.spec)?;
        Ok(self.exprs.get_or_init(|| e).clone())
    }

    /// True if the index's creating transaction committed or is one of
    /// `own`; see [`TableDef::visible_to`].
    pub fn visible_to(&self, own: &[TransactionId], clog: &Clog) -> bool {
        creator_visible(&self.creator, own, clog)
    }

    /// The stripe lock for a key (unique check + insert run under it).
    pub fn stripe(&self, key: &[u8]) -> &Mutex<()> {
        // FNV-1a: cheap, good enough to spread keys.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x1000_0000_01b3);
        }
        &self.stripes[(h as usize) % STRIPES]
    }

    /// True once built: planners may use it for lookups.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Marks the build finished.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }
}

/// The indexes of one heap file of a table, shared by every descriptor
/// version that reads that file (see `indexes_for`).
#[derive(Default, Debug)]
pub struct TableIndexes {
    list: RwLock<Vec<Arc<IndexDef>>>,
}

impl TableIndexes {
    /// A snapshot of the list (cheap: `Arc` clones).
    pub fn list(&self) -> Vec<Arc<IndexDef>> {
        self.list.read().clone()
    }
    /// Calls `f` for each index without cloning the list.
    pub fn for_each(&self, f: &mut dyn FnMut(&Arc<IndexDef>) -> PgResult<()>) -> PgResult<()> {
        let l = self.list.read();
        for i in l.iter() {
            f(i)?;
        }
        Ok(())
    }
    /// True if the table has no index.
    pub fn is_empty(&self) -> bool {
        self.list.read().is_empty()
    }
}

/// A relation lock: shared for statements, exclusive for TRUNCATE/DROP (see
/// the module doc).
#[derive(Default, Debug)]
pub struct RelLock {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
}

/// A held shared [`RelLock`].
pub struct RelShared<'a>(&'a RelLock);

thread_local! {
    /// The shared [`RelLock`]s this thread holds, by address, with counts
    /// (a handful: the tables of the statement running here).
    static HELD_SHARED: std::cell::RefCell<Vec<(usize, usize)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Adds `delta` (±1) to this thread's count for the lock at `addr`.
fn note_held(addr: usize, delta: isize) {
    HELD_SHARED.with(|h| {
        let mut h = h.borrow_mut();
        match h.iter().position(|&(a, _)| a == addr) {
            Some(i) => {
                let n = h[i].1 as isize + delta;
                if n <= 0 {
                    h.swap_remove(i);
                } else {
                    h[i].1 = n as usize;
                }
            }
            None if delta > 0 => h.push((addr, delta as usize)),
            // Released on another thread than it was taken on (a portal's
            // scan): nothing was counted here.
            None => {}
        }
    });
}

fn held_here(addr: usize) -> bool {
    HELD_SHARED.with(|h| h.borrow().iter().any(|&(a, _)| a == addr))
}

impl Drop for RelShared<'_> {
    fn drop(&mut self) {
        note_held(self.0 as *const RelLock as usize, -1);
        let mut s = self.0.state.lock();
        s.0 -= 1;
        if s.0 == 0 {
            self.0.cv.notify_all();
        }
    }
}

/// A held exclusive [`RelLock`].
pub struct RelExclusive<'a>(&'a RelLock);

impl Drop for RelExclusive<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock();
        s.1 = false;
        self.0.cv.notify_all();
    }
}

impl RelLock {
    /// Shared: waits while a TRUNCATE/DROP holds the lock or waits for it —
    /// unless this thread already holds it shared (see the module doc).
    pub fn shared(&self) -> RelShared<'_> {
        let addr = self as *const RelLock as usize;
        let mut s = self.state.lock();
        // Re-entry: readers are in (s.0 > 0), so an exclusive request can
        // only be waiting — for us among others.
        let reenter = s.0 > 0 && held_here(addr);
        if s.1 && !reenter {
            // A real wait (TRUNCATE/DROP running): leave the runtime worker
            // to others meanwhile, as every wait of a statement does.
            pgtypes::blocking::run_blocking(|| {
                while s.1 {
                    self.cv.wait(&mut s);
                }
            });
        }
        s.0 += 1;
        drop(s);
        note_held(addr, 1);
        RelShared(self)
    }

    /// Exclusive: waits until no statement uses the table. Polls `cancel`
    /// (57014). A session that itself holds the lock shared must not call it.
    pub fn exclusive(&self, cancel: &AtomicBool) -> PgResult<RelExclusive<'_>> {
        let mut s = self.state.lock();
        while s.1 {
            self.cv
                .wait_for(&mut s, std::time::Duration::from_millis(50));
            if cancel.load(Ordering::Relaxed) {
                return Err(PgError::query_canceled());
            }
        }
        s.1 = true;
        // Now wait for the readers to leave (new ones wait for us).
        while s.0 > 0 {
            self.cv
                .wait_for(&mut s, std::time::Duration::from_millis(50));
            if cancel.load(Ordering::Relaxed) {
                s.1 = false;
                self.cv.notify_all();
                return Err(PgError::query_canceled());
            }
        }
        Ok(RelExclusive(self))
    }
}

/// A table.
#[derive(Debug)]
pub struct TableDef {
    /// OID (RowDescription's table OID).
    pub oid: Oid,
    /// Name (bare; see [`TableDef::key`]).
    pub name: String,
    /// The schema's OID (`public`: [`PUBLIC_NAMESPACE`]).
    pub namespace: Oid,
    /// The heap relation file.
    pub rel: RelFileId,
    /// Columns in order.
    pub columns: Vec<ColumnDef>,
    /// `WITH (…)` options as given (fillfactor accepted, not used).
    pub options: Vec<(String, String)>,
    /// Indexes (shared by every descriptor version of this table that
    /// reads the same heap file `rel`).
    pub indexes: Arc<TableIndexes>,
    /// TRUNCATE/DROP vs. statements (shared by every descriptor version).
    pub lock: Arc<RelLock>,
    /// Set when the table is dropped (a statement holding an old `Arc`
    /// checks it after taking the relation lock).
    pub dropped: Arc<AtomicBool>,
    /// The xid of the transaction rewriting the table's heap (ALTER
    /// COLUMN … TYPE) while it runs, 0 otherwise (shared by every
    /// descriptor version; in memory only): other writers wait for it, as
    /// PostgreSQL's AccessExclusiveLock makes them.
    pub rewriting: Arc<AtomicU64>,
    /// The xid of the (sub)transaction that created the table while that
    /// transaction may still roll back; 0 once it is known committed
    /// (shared by every descriptor version). See [`CatalogView`].
    pub creator: Arc<AtomicU64>,
    /// Constraints (pg_constraint rows of the table).
    pub constraints: Vec<ConstraintSpec>,
    /// Comments on the table and its columns ([`TableSpec::comments`]).
    pub comments: Vec<(u32, String)>,
    /// Triggers ([`TableSpec::triggers`]).
    pub triggers: Vec<TriggerSpec>,
    /// The (sub)transaction whose `ALTER TABLE` made this version, while it
    /// may still roll back; 0 once committed. Others see [`Self::previous`]
    /// meanwhile (see [`CatalogView`]).
    pub altered_by: AtomicU64,
    /// The committed version this uncommitted ALTER started from.
    pub previous: Option<Arc<TableDef>>,
    /// Per column, the decoded [`ColumnDef::missing`] value (empty when no
    /// column has one: the common case costs nothing).
    missing: Vec<Option<pgtypes::value::Value>>,
    /// Each column's type as rows are decoded ([`Self::types`]).
    row_types: Box<[SqlType]>,
    /// What the SQL layer derives once per descriptor version (its bound
    /// CHECK expressions); the engine never looks inside.
    pub sql_cache: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
}

impl TableDef {
    /// The table's key in the catalog (its name in `public`; see
    /// [`crate::namespace::rel_key`]): what [`CatalogChange`]s name it by.
    pub fn key(&self) -> String {
        rel_key(self.namespace, &self.name).into_owned()
    }
    /// Position of a (visible) column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name == name && !c.dropped)
    }
    /// Positions of the columns statements see (all but dropped ones).
    pub fn visible_columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.dropped)
            .map(|(i, _)| i)
    }
    /// Decodes a heap row of this table into `row` (`types` is
    /// [`Self::types`]): rows written before an `ADD COLUMN … DEFAULT` get
    /// the column's missing value instead of NULL.
    /// TOAST pointers are read back through `toast` (the heap).
    pub fn decode_into(
        &self,
        data: &[u8],
        types: &[SqlType],
        row: &mut Vec<pgtypes::value::Value>,
        toast: &dyn storage::rowcodec::ToastFetch,
    ) -> PgResult<()> {
        self.decode_needed(data, types, None, row, toast)
    }
    /// As [`Self::decode_into`], decoding only the columns `needed` marks
    /// (None: all); the others are NULL. With a mask `row` is reused as
    /// [`storage::rowcodec::decode_row_needed`] says: keep one buffer per
    /// table and mask.
    pub fn decode_needed(
        &self,
        data: &[u8],
        types: &[SqlType],
        needed: Option<&[bool]>,
        row: &mut Vec<pgtypes::value::Value>,
        toast: &dyn storage::rowcodec::ToastFetch,
    ) -> PgResult<()> {
        storage::rowcodec::decode_row_needed(data, types, needed, row, toast)?;
        self.fill_missing(data, row)
    }
    /// As [`Self::decode_needed`] with the types and mask `layout` was
    /// built from ([`storage::rowcodec::RowLayout::new`]), the same result:
    /// a scan builds its layout once and decodes each row with it.
    pub fn decode_layout(
        &self,
        data: &[u8],
        layout: &storage::rowcodec::RowLayout,
        row: &mut Vec<pgtypes::value::Value>,
        toast: &dyn storage::rowcodec::ToastFetch,
    ) -> PgResult<()> {
        storage::rowcodec::decode_row_layout(data, layout, row, toast)?;
        self.fill_missing(data, row)
    }
    /// The missing values (attmissingval) of the columns added after the
    /// row `data` was written, into `row`.
    fn fill_missing(&self, data: &[u8], row: &mut [pgtypes::value::Value]) -> PgResult<()> {
        if self.missing.is_empty() {
            return Ok(());
        }
        let natts = storage::rowcodec::stored_natts(data)?;
        for (i, m) in self.missing.iter().enumerate().skip(natts) {
            if let (Some(v), Some(slot)) = (m, row.get_mut(i)) {
                *slot = v.clone();
            }
        }
        Ok(())
    }
    /// The persisted definition of this version.
    pub fn spec(&self) -> TableSpec {
        let altered_by = self.altered_by.load(Ordering::Acquire);
        TableSpec {
            oid: self.oid,
            name: self.name.clone(),
            namespace: self.namespace,
            rel: self.rel,
            columns: self.columns.clone(),
            options: self.options.clone(),
            creator: TransactionId(self.creator.load(Ordering::Acquire)),
            constraints: self.constraints.clone(),
            comments: self.comments.clone(),
            triggers: self.triggers.clone(),
            altered_by: TransactionId(altered_by),
            // Once the ALTER committed, the previous version is history.
            previous: self
                .previous
                .as_ref()
                .filter(|_| altered_by != 0)
                .map(|p| Box::new(p.spec())),
        }
    }
    /// The version of the table a session whose own xids are `own` sees:
    /// this one, or the committed one before another transaction's
    /// uncommitted ALTER TABLE.
    pub fn version_for(self: &Arc<Self>, own: &[TransactionId], clog: &Clog) -> Arc<TableDef> {
        match &self.previous {
            Some(p) if !creator_visible(&self.altered_by, own, clog) => p.clone(),
            _ => self.clone(),
        }
    }
    /// The constraint named `name`.
    pub fn constraint(&self, name: &str) -> Option<&ConstraintSpec> {
        self.constraints.iter().find(|c| c.name == name)
    }
    /// The column types, in order.
    ///
    /// A dropped array column decodes as bytea (the same stored form):
    /// its element type may be gone (`DROP TYPE … CASCADE`), and nobody
    /// reads its value.
    pub fn types(&self) -> Vec<SqlType> {
        self.row_types.to_vec()
    }
    /// [`Self::types`] without a copy (a scan borrows it for its rows).
    pub fn row_types(&self) -> &[SqlType] {
        &self.row_types
    }
    /// The primary key index, if any.
    pub fn primary_key(&self) -> Option<Arc<IndexDef>> {
        self.indexes.list().into_iter().find(|i| i.spec.primary)
    }
    /// True if a session whose own xids are `own` (sorted) may use the
    /// table: it is committed, or created by one of `own`. A committed
    /// creator found through the clog is cleared, so the next lookup is one
    /// atomic load again.
    pub fn visible_to(&self, own: &[TransactionId], clog: &Clog) -> bool {
        creator_visible(&self.creator, own, clog)
    }

    /// 42P01 if the table was dropped after this descriptor was taken.
    pub fn check_not_dropped(&self) -> PgResult<()> {
        if self.dropped.load(Ordering::Acquire) {
            return Err(undefined_table(&self.name));
        }
        Ok(())
    }
}

/// Whether a transaction whose own xids are `own` (sorted) sees what the
/// mark `creator` stands for: 0 (committed), one of its own xids, or an
/// xid the clog says committed (the mark is then cleared). The one rule
/// for uncommitted creations ([`TableDef::visible_to`]) and for the side
/// maps' entries (comments, privileges).
pub(crate) fn creator_visible(creator: &AtomicU64, own: &[TransactionId], clog: &Clog) -> bool {
    let x = creator.load(Ordering::Acquire);
    if x == 0 {
        return true;
    }
    let xid = TransactionId(x);
    if own.binary_search(&xid).is_ok() {
        return true;
    }
    if clog.get_status(xid) == XidStatus::Committed {
        creator.store(0, Ordering::Release);
        return true;
    }
    false
}

/// The catalog as one session sees it: tables whose creating transaction
/// has not committed exist only for that transaction (PostgreSQL's pg_class
/// rows are MVCC). Every name lookup of a statement goes through here; for
/// a committed table it costs one atomic load more than the raw map.
pub struct CatalogView<'a> {
    catalog: &'a Catalog,
    own: &'a [TransactionId],
    clog: &'a Clog,
    /// The schemas unqualified names are looked up in, in order (the
    /// session's resolved `search_path`; see [`crate::namespace`]).
    path: &'a [Oid],
}

impl<'a> CatalogView<'a> {
    /// The same view looking unqualified names up along `path`.
    pub fn with_path(self, path: &'a [Oid]) -> CatalogView<'a> {
        CatalogView { path, ..self }
    }

    /// The catalog behind the view.
    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    /// The schemas unqualified names are looked up in.
    pub fn path(&self) -> &[Oid] {
        self.path
    }

    /// The functions users created that this session sees (their creating
    /// transaction committed, or is this session's), sorted by OID; empty
    /// without touching the map's entries when there are none.
    pub fn functions(&self) -> Vec<Arc<FunctionDef>> {
        let st = self.catalog.state.read();
        if st.functions.is_empty() {
            return Vec::new();
        }
        let mut v: Vec<_> = st
            .functions
            .values()
            .filter(|f| creator_visible(&f.creator, self.own, self.clog))
            .cloned()
            .collect();
        v.sort_by_key(|f| f.spec.oid);
        v
    }

    /// The owner and list of `key` this session sees (None: no entry —
    /// the bootstrap superuser's object with the default list).
    pub fn privileges(&self, key: &CommentKey) -> Option<PrivEntry> {
        let def = self.catalog.privileges(key)?;
        def.visible(self.own, self.clog).cloned()
    }

    /// The table called `name` (unqualified: the first schema of the
    /// search path that has one), if this session may see it.
    pub fn get(&self, name: &str) -> Option<Arc<TableDef>> {
        if let [ns] = self.path {
            return self.get_in(*ns, name);
        }
        self.path.iter().find_map(|&ns| self.get_in(ns, name))
    }

    /// The table `name` of schema `ns`, if this session may see it.
    pub fn get_in(&self, ns: Oid, name: &str) -> Option<Arc<TableDef>> {
        let key = rel_key(ns, name);
        let name = &*key;
        match self.catalog.get(name) {
            Some(t) => {
                if !t.visible_to(self.own, self.clog) {
                    return None;
                }
                if t.previous.is_none() {
                    // The common case: no ALTER in flight, no extra clone.
                    return Some(t);
                }
                // Another transaction's uncommitted ALTER (a RENAME among
                // them) is not seen: the name must be the seen version's.
                Some(t.version_for(self.own, self.clog)).filter(|v| v.key() == name)
            }
            // The old name of a table another transaction renamed and has
            // not committed yet.
            None => {
                let t = self.catalog.renamed_from(name)?;
                if creator_visible(&t.altered_by, self.own, self.clog) {
                    return None;
                }
                t.previous.clone()
            }
        }
        .filter(|t| t.visible_to(self.own, self.clog))
    }

    /// The table named `name` or 42P01.
    pub fn table(&self, name: &str) -> PgResult<Arc<TableDef>> {
        self.get(name).ok_or_else(|| undefined_table(name))
    }

    /// The table `name` of schema `ns` (None: along the search path), or
    /// 42P01 naming it as written.
    pub fn table_in(&self, ns: Option<Oid>, name: &str) -> PgResult<Arc<TableDef>> {
        match ns {
            Some(ns) => self.get_in(ns, name),
            None => self.get(name),
        }
        .ok_or_else(|| undefined_table(name))
    }

    /// The view called `name` (unqualified, along the search path) as
    /// this session sees it.
    pub fn view(&self, name: &str) -> Option<Arc<ViewSpec>> {
        self.path.iter().find_map(|&ns| self.view_in(ns, name))
    }

    /// The view `name` of schema `ns` as this session sees it: another
    /// transaction's uncommitted creation is absent, its uncommitted
    /// replacement or rename shows the committed definition before it.
    pub fn view_in(&self, ns: Oid, name: &str) -> Option<Arc<ViewSpec>> {
        let key = rel_key(ns, name);
        let name = &*key;
        // The clog is read with the catalog lock released (catalog locks
        // are leaves).
        let found = self.catalog.state.read().views.get(name).cloned();
        if let Some(v) = found {
            if !creator_visible(&v.creator, self.own, self.clog) {
                return None;
            }
            if v.spec.previous.is_none() || creator_visible(&v.altered_by, self.own, self.clog) {
                return Some(Arc::new(v.spec.committed()));
            }
            return v
                .spec
                .previous
                .as_ref()
                .filter(|p| p.key() == name)
                .map(|p| Arc::new(p.committed()));
        }
        // The old name of a view another transaction renamed.
        let renamed: Vec<Arc<ViewDef>> = self
            .catalog
            .state
            .read()
            .views
            .values()
            .filter(|v| v.spec.previous.as_ref().is_some_and(|p| p.key() == name))
            .cloned()
            .collect();
        renamed
            .into_iter()
            .find(|v| !creator_visible(&v.altered_by, self.own, self.clog))
            .and_then(|v| v.spec.previous.as_ref().map(|p| Arc::new(p.committed())))
    }

    /// Every view this session sees, sorted by name.
    pub fn views(&self) -> Vec<Arc<ViewSpec>> {
        let mut names: Vec<(String, Oid)> = {
            let st = self.catalog.state.read();
            st.views
                .values()
                .flat_map(|v| {
                    std::iter::once((v.spec.name.clone(), v.spec.namespace)).chain(
                        v.spec
                            .previous
                            .as_ref()
                            .map(|p| (p.name.clone(), p.namespace)),
                    )
                })
                .collect()
        };
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter_map(|(n, ns)| self.view_in(ns, &n))
            .collect()
    }

    /// The sequence called `name` (unqualified, along the search path) as
    /// this session sees it.
    pub fn sequence(&self, name: &str) -> Option<Arc<SequenceDef>> {
        self.path.iter().find_map(|&ns| self.sequence_in(ns, name))
    }

    /// The sequence `name` of schema `ns` as this session sees it: another
    /// transaction's uncommitted creation is absent; its uncommitted ALTER
    /// (a RENAME among them) shows the committed def before it.
    pub fn sequence_in(&self, ns: Oid, name: &str) -> Option<Arc<SequenceDef>> {
        let key = rel_key(ns, name);
        let name = &*key;
        // The clog is read with the catalog lock released.
        let found = self.catalog.state.read().sequences.get(name).cloned();
        if let Some(s) = found {
            if !creator_visible(&s.creator, self.own, self.clog) {
                return None;
            }
            if s.previous.is_none() || creator_visible(&s.altered_by, self.own, self.clog) {
                return Some(s);
            }
            return s.previous.clone().filter(|p| p.spec.key() == name);
        }
        // The old name of a sequence another transaction renamed.
        let renamed: Vec<Arc<SequenceDef>> = self
            .catalog
            .state
            .read()
            .sequences
            .values()
            .filter(|s| s.previous.as_ref().is_some_and(|p| p.spec.key() == name))
            .cloned()
            .collect();
        renamed
            .into_iter()
            .find(|s| !creator_visible(&s.altered_by, self.own, self.clog))
            .and_then(|s| s.previous.clone())
    }

    /// Every sequence this session sees (the committed def of another
    /// transaction's uncommitted ALTER), sorted by name.
    pub fn sequences(&self) -> Vec<Arc<SequenceDef>> {
        let mut v: Vec<Arc<SequenceDef>> = self
            .catalog
            .sequences()
            .into_iter()
            .filter(|s| creator_visible(&s.creator, self.own, self.clog))
            .map(|s| match &s.previous {
                Some(p) if !creator_visible(&s.altered_by, self.own, self.clog) => p.clone(),
                _ => s,
            })
            .collect();
        v.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        v
    }

    /// The OID of the schema called `name`, if this session sees it
    /// (built-in, or created and committed or its own; under its old name
    /// while another transaction's RENAME is uncommitted).
    pub fn schema_oid(&self, name: &str) -> Option<Oid> {
        if let Some(b) = BUILTIN_SCHEMAS.iter().find(|s| s.1 == name) {
            return Some(b.0);
        }
        if let Some(s) = self.catalog.state.read().schemas.get(name).cloned() {
            return self
                .schema_version(&s)
                .filter(|v| v.name == name)
                .map(|v| v.oid);
        }
        // The old name of a schema another transaction renamed.
        let renamed: Vec<Arc<SchemaDef>> = self
            .catalog
            .state
            .read()
            .schemas
            .values()
            .filter(|s| s.spec.previous.as_ref().is_some_and(|p| p.name == name))
            .cloned()
            .collect();
        renamed
            .iter()
            .filter_map(|s| self.schema_version(s))
            .find(|v| v.name == name)
            .map(|v| v.oid)
    }

    /// The row of schema `s` this session sees: none for another
    /// transaction's uncommitted creation, the committed row before
    /// another transaction's uncommitted ALTER.
    fn schema_version(&self, s: &SchemaDef) -> Option<SchemaSpec> {
        if !creator_visible(&s.creator, self.own, self.clog) {
            return None;
        }
        match &s.spec.previous {
            Some(p) if !creator_visible(&s.altered_by, self.own, self.clog) => Some(p.unmarked()),
            _ => Some(s.spec.unmarked()),
        }
    }

    /// The schemas users created that this session sees, by OID.
    pub fn schemas(&self) -> Vec<SchemaSpec> {
        let all: Vec<Arc<SchemaDef>> = self
            .catalog
            .state
            .read()
            .schemas
            .values()
            .cloned()
            .collect();
        let mut v: Vec<SchemaSpec> = all.iter().filter_map(|s| self.schema_version(s)).collect();
        v.sort_by_key(|s| s.oid);
        v
    }

    /// The name of the schema with OID `oid` (built-in or created) as this
    /// session sees it.
    pub fn schema_name(&self, oid: Oid) -> Option<String> {
        if let Some(b) = BUILTIN_SCHEMAS.iter().find(|s| s.0 == oid) {
            return Some(b.1.to_string());
        }
        let s = self
            .catalog
            .state
            .read()
            .schemas
            .values()
            .find(|s| s.spec.oid == oid)
            .cloned()?;
        // An uncommitted creation still has a name for its OID (a table
        // its creator made in it is only visible to the creator anyway).
        match &s.spec.previous {
            Some(p) if !creator_visible(&s.altered_by, self.own, self.clog) => Some(p.name.clone()),
            _ => Some(s.spec.name.clone()),
        }
    }

    /// [`Catalog::version`], told apart by the search path: a plan bound
    /// through this view is valid while this stays the same (the default
    /// path adds nothing).
    pub fn version(&self) -> u64 {
        let v = self.catalog.version();
        if self.path == DEFAULT_PATH {
            return v;
        }
        let tag = self.path.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &o| {
            (h ^ u64::from(o)).wrapping_mul(0x100_0000_01b3)
        });
        v ^ (tag << 40) ^ (1 << 63)
    }

    /// The tables this session sees with a FOREIGN KEY to the table with
    /// OID `oid` (their versions as this session sees them).
    pub fn referencing(&self, oid: Oid) -> Vec<Arc<TableDef>> {
        self.catalog
            .referencing(oid)
            .into_iter()
            .filter(|t| t.visible_to(self.own, self.clog))
            .map(|t| t.version_for(self.own, self.clog))
            .filter(|t| {
                t.constraints
                    .iter()
                    .any(|c| c.foreign.as_ref().is_some_and(|f| f.table == oid))
            })
            .collect()
    }

    /// The planner statistics of the table with OID `oid`, if it was
    /// analysed (see [`crate::statistics`]).
    pub fn statistics(&self, oid: Oid) -> Option<Arc<RelationStats>> {
        self.catalog.statistics(oid)
    }
}

/// 42P01 `relation "x" does not exist`.
pub fn undefined_table(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    )
}

/// A table as created (no in-memory parts).
#[derive(Clone, Debug, PartialEq)]
pub struct TableSpec {
    /// OID.
    pub oid: Oid,
    /// Name.
    pub name: String,
    /// The schema's OID.
    pub namespace: Oid,
    /// Heap relation file.
    pub rel: RelFileId,
    /// Columns.
    pub columns: Vec<ColumnDef>,
    /// `WITH (…)` options.
    pub options: Vec<(String, String)>,
    /// The (sub)transaction that created the table (INVALID: committed
    /// long ago). Logged with the change and kept in the catalog file, so
    /// redo and start-up can tell a creation that never committed.
    pub creator: TransactionId,
    /// Constraints (see [`ConstraintSpec`]).
    pub constraints: Vec<ConstraintSpec>,
    /// The (sub)transaction whose uncommitted ALTER TABLE made this
    /// definition (INVALID: none); see [`TableDef::altered_by`].
    pub altered_by: TransactionId,
    /// With `altered_by`: the committed definition before that ALTER —
    /// what start-up puts back if the transaction never committed.
    pub previous: Option<Box<TableSpec>>,
    /// `COMMENT ON TABLE / COLUMN` (pg_description rows): (objsubid — 0
    /// for the table, else the column's 1-based number —, text).
    pub comments: Vec<(u32, String)>,
    /// Triggers (pg_trigger rows; see [`crate::pg_trigger`]).
    pub triggers: Vec<TriggerSpec>,
}

impl TableSpec {
    /// The table's key (see [`TableDef::key`]).
    pub fn key(&self) -> String {
        rel_key(self.namespace, &self.name).into_owned()
    }
    /// A committed table with no constraints.
    pub fn new(oid: Oid, name: &str, rel: RelFileId, columns: Vec<ColumnDef>) -> TableSpec {
        TableSpec {
            oid,
            name: name.to_string(),
            namespace: PUBLIC_NAMESPACE,
            rel,
            columns,
            options: Vec::new(),
            creator: TransactionId::INVALID,
            constraints: Vec::new(),
            altered_by: TransactionId::INVALID,
            previous: None,
            comments: Vec::new(),
            triggers: Vec::new(),
        }
    }
}

/// One catalog change: what the catalog WAL-logs and redo applies.
#[derive(Clone, Debug, PartialEq)]
pub enum CatalogChange {
    /// CREATE TABLE (its indexes follow as CreateIndex changes).
    CreateTable(TableSpec),
    /// DROP TABLE.
    DropTable {
        /// Table name.
        name: String,
    },
    /// ALTER TABLE: table `name` gets the definition `spec` (its name may
    /// differ: RENAME). The physical columns only grow (a dropped column
    /// stays, marked); `spec.altered_by` / `spec.previous` make it an
    /// uncommitted version (see [`TableDef::altered_by`]), and undoing it
    /// is another `AlterTable` back to the previous definition.
    AlterTable {
        /// The table's name before the change.
        name: String,
        /// The new definition.
        spec: TableSpec,
    },
    /// CREATE INDEX / ADD PRIMARY KEY: adds an index, not yet ready (the
    /// caller builds it and marks it ready).
    CreateIndex {
        /// Table name.
        table: String,
        /// The index.
        spec: IndexSpec,
    },
    /// Removes an index (a failed build).
    DropIndex {
        /// Table name.
        table: String,
        /// Index name.
        name: String,
    },
    /// ALTER TABLE … ADD PRIMARY KEY marks the key columns NOT NULL.
    SetNotNull {
        /// Table name.
        table: String,
        /// Column positions.
        columns: Vec<usize>,
    },
    /// Undoes a `SetNotNull` whose transaction rolled back.
    DropNotNull {
        /// Table name.
        table: String,
        /// Column positions.
        columns: Vec<usize>,
    },
    /// ANALYZE: new statistics for a table (`stats.oid` must be the
    /// table's). Columns `stats` does not describe keep their old entries.
    SetStatistics {
        /// Table name.
        table: String,
        /// What was gathered.
        stats: RelationStats,
    },
    /// CREATE SEQUENCE (and the sequence of a serial column).
    CreateSequence(SequenceSpec),
    /// DROP SEQUENCE.
    DropSequence {
        /// Sequence name.
        name: String,
    },
    /// A sequence's counter as logged ahead by nextval, or set by setval
    /// (see [`crate::sequence`]).
    SetSequence {
        /// Sequence name.
        name: String,
        /// last_value.
        value: i64,
        /// is_called.
        called: bool,
    },
    /// ALTER SEQUENCE: the whole new definition and the counter it
    /// starts from (RESTART's value, else the counter as it was), logged
    /// as the sequence's new logged-ahead point (see [`crate::sequence`]).
    /// `name` is the key before the change (RENAME / SET SCHEMA move it
    /// to `spec.key()`).
    AlterSequence {
        /// The sequence's key before the change.
        name: String,
        /// The new definition.
        spec: SequenceSpec,
        /// last_value.
        value: i64,
        /// is_called.
        called: bool,
    },
    /// CREATE ROLE / CREATE USER.
    CreateRole(RoleSpec),
    /// ALTER ROLE: the role's whole new row (`old_name` differs from the
    /// row's name on RENAME).
    AlterRole {
        /// The role's name before the change.
        old_name: String,
        /// The new row.
        spec: RoleSpec,
    },
    /// DROP ROLE.
    DropRole {
        /// Role name.
        name: String,
    },
    /// CREATE VIEW.
    CreateView(ViewSpec),
    /// CREATE OR REPLACE VIEW / ALTER VIEW … RENAME: view `name` gets the
    /// definition `spec` (its name may differ); `spec.altered_by` /
    /// `spec.previous` mark it uncommitted, undone by another `AlterView`.
    AlterView {
        /// The view's name before the change.
        name: String,
        /// The new definition.
        spec: ViewSpec,
    },
    /// DROP VIEW.
    DropView {
        /// View key.
        name: String,
    },
    /// CREATE SCHEMA.
    CreateSchema(SchemaSpec),
    /// ALTER SCHEMA … RENAME TO / OWNER TO: the schema's whole new row.
    AlterSchema {
        /// The schema's name before the change.
        old_name: String,
        /// The new row (same OID).
        spec: SchemaSpec,
    },
    /// DROP SCHEMA (its relations were dropped first).
    DropSchema {
        /// Schema name.
        name: String,
    },
    /// CREATE TYPE … AS ENUM (see [`crate::pg_enum`]).
    CreateType(EnumTypeSpec),
    /// ALTER TYPE (ADD VALUE, RENAME VALUE, RENAME TO): type `name` gets
    /// the definition `spec` (its name may differ); undone by another
    /// `AlterType` back to the definition before.
    AlterType {
        /// The type's name before the change.
        name: String,
        /// The new definition.
        spec: EnumTypeSpec,
    },
    /// DROP TYPE.
    DropType {
        /// Type name.
        name: String,
    },
    /// CREATE FUNCTION, and CREATE OR REPLACE with the existing OID (the
    /// new definition takes the old one's place; see [`crate::pg_proc`]).
    CreateFunction(FunctionSpec),
    /// DROP FUNCTION.
    DropFunction {
        /// The function's OID.
        oid: Oid,
    },
    /// COMMENT ON an object other than a table or its column (see
    /// [`crate::comment`]): `text` None with `by` unset removes the entry.
    /// GRANT / REVOKE / ALTER … OWNER TO (see [`crate::acl`]): `entry`
    /// None with `by` unset removes the entry.
    SetPrivileges {
        /// The object (`name` empty).
        key: CommentKey,
        /// The new owner and list.
        entry: Option<PrivEntry>,
        /// The setting transaction while it may roll back (INVALID: a
        /// committed or undone value).
        by: TransactionId,
        /// With `by`: the committed entry before it.
        previous: Option<PrivEntry>,
    },
    SetComment {
        /// The object.
        key: CommentKey,
        /// The new text (None: no comment).
        text: Option<String>,
        /// The setting transaction while it may roll back (INVALID: a
        /// committed or undone value).
        by: TransactionId,
        /// With `by`: the committed text before it.
        previous: Option<String>,
    },
    /// ALTER DATABASE … CONNECTION LIMIT: the database's `datconnlimit`
    /// (-1: no limit). Like role changes, not transactional.
    AlterDatabase {
        /// The new limit.
        connlimit: i32,
    },
}

/// A role (PostgreSQL's `pg_authid` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleSpec {
    /// OID (10 for the bootstrap superuser).
    pub oid: Oid,
    /// Role name.
    pub name: String,
    /// rolsuper.
    pub superuser: bool,
    /// rolinherit.
    pub inherit: bool,
    /// rolcreaterole.
    pub createrole: bool,
    /// rolcreatedb.
    pub createdb: bool,
    /// rolcanlogin.
    pub login: bool,
    /// rolreplication.
    pub replication: bool,
    /// rolbypassrls.
    pub bypassrls: bool,
    /// rolconnlimit (-1: no limit).
    pub connlimit: i32,
    /// rolpassword: a SCRAM-SHA-256 or md5 verifier, never a password.
    pub password: Option<String>,
    /// rolvaliduntil (PostgreSQL microseconds since 2000-01-01 UTC).
    pub valid_until: Option<i64>,
    /// The roles this one is a member of (its pg_auth_members rows as
    /// `member`), in the order granted.
    pub member_of: Vec<RoleGrant>,
}

/// One role membership (a pg_auth_members row, seen from the member).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoleGrant {
    /// The role granted (`roleid`).
    pub role: Oid,
    /// Who granted it.
    pub grantor: Oid,
    /// WITH ADMIN OPTION.
    pub admin: bool,
}

impl RoleSpec {
    /// A role with PostgreSQL's CREATE ROLE defaults (NOLOGIN, INHERIT …).
    pub fn new(oid: Oid, name: &str) -> RoleSpec {
        RoleSpec {
            oid,
            name: name.to_string(),
            superuser: false,
            inherit: true,
            createrole: false,
            createdb: false,
            login: false,
            replication: false,
            bypassrls: false,
            connlimit: -1,
            password: None,
            valid_until: None,
            member_of: Vec::new(),
        }
    }
}

/// The OID of the bootstrap superuser (PostgreSQL's BOOTSTRAP_SUPERUSERID).
pub const BOOTSTRAP_SUPERUSER_OID: u32 = 10;

fn role_exists(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_OBJECT,
        format!("role \"{name}\" already exists"),
    )
}

/// 42704 role "…" does not exist.
pub fn undefined_role(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("role \"{name}\" does not exist"),
    )
}

struct CatalogState {
    tables: HashMap<String, Arc<TableDef>>,
    views: HashMap<String, Arc<ViewDef>>,
    sequences: HashMap<String, Arc<SequenceDef>>,
    /// Enum types by name ([`crate::pg_enum`]).
    types: HashMap<String, Arc<EnumTypeDef>>,
    /// Functions users created, by OID ([`crate::pg_proc`]).
    functions: HashMap<Oid, Arc<FunctionDef>>,
    /// Planner statistics by table OID (see [`crate::statistics`]).
    stats: HashMap<Oid, Arc<RelationStats>>,
    roles: HashMap<String, Arc<RoleSpec>>,
    /// Schemas users created, by name (see [`crate::namespace`]).
    schemas: HashMap<String, Arc<SchemaDef>>,
    /// Comments on objects other than tables and their columns
    /// ([`crate::comment`]).
    comments: BTreeMap<CommentKey, Arc<CommentDef>>,
    /// Owners and access lists ([`crate::acl`]).
    privileges: BTreeMap<CommentKey, Arc<PrivDef>>,
    /// Referenced table OID → the names of the tables with a FOREIGN KEY
    /// to it (derived from the table definitions by [`index_foreign_keys`]
    /// after every change that can alter it).
    referenced_by: HashMap<Oid, Vec<String>>,
    /// The database's `datconnlimit` (-1: no limit).
    db_connlimit: i32,
    next_oid: u32,
    /// End LSN of the last catalog record applied (0: none).
    lsn: Lsn,
}

/// The node's catalog.
pub struct Catalog {
    state: RwLock<CatalogState>,
    version: AtomicU64,
    /// `DIR/global/catalog`; None for an in-memory catalog (tests, standby
    /// before its base backup).
    path: Option<PathBuf>,
    /// WAL, once start-up has opened it (unset: changes are not logged).
    xlog: Arc<XLog>,
    /// The current size in pages of a relation file (the planner's
    /// estimate for tables never analysed, or grown since), set by the
    /// engine that owns the heap.
    sizes: std::sync::OnceLock<RelationSizes>,
}

/// Where [`Catalog::relation_pages`] asks.
pub type RelationSizes = Box<dyn Fn(RelFileId) -> Option<u32> + Send + Sync>;

impl Catalog {
    /// Sets where relation sizes come from (once).
    pub fn set_relation_sizes(&self, f: RelationSizes) {
        let _ = self.sizes.set(f);
    }

    /// The current number of pages of `rel` (None: unknown).
    pub fn relation_pages(&self, rel: RelFileId) -> Option<u32> {
        self.sizes.get().and_then(|f| f(rel))
    }

    /// An empty catalog that is neither persisted nor logged.
    pub fn in_memory() -> Catalog {
        Catalog {
            state: RwLock::new(CatalogState {
                tables: HashMap::new(),
                views: HashMap::new(),
                sequences: HashMap::new(),
                types: HashMap::new(),
                functions: HashMap::new(),
                stats: HashMap::new(),
                roles: HashMap::new(),
                schemas: HashMap::new(),
                comments: BTreeMap::new(),
                privileges: BTreeMap::new(),
                referenced_by: HashMap::new(),
                db_connlimit: -1,
                next_oid: FIRST_USER_OID,
                lsn: Lsn::INVALID,
            }),
            version: AtomicU64::new(1),
            path: None,
            xlog: Arc::new(XLog::with_settings(true, true)),
            sizes: std::sync::OnceLock::new(),
        }
    }

    /// Loads `DIR/global/catalog` (an absent file is an empty catalog),
    /// logging changes through `xlog` once it leaves recovery mode.
    /// Indexes come back empty and ready; the caller rebuilds them.
    pub fn open(data_dir: &Path, xlog: Arc<XLog>) -> PgResult<Catalog> {
        let path = data_dir.join("global").join("catalog");
        let mut cat = Catalog::in_memory();
        cat.path = Some(path.clone());
        cat.xlog = xlog;
        match fs::read_to_string(&path) {
            Ok(text) => {
                let Decoded {
                    tables,
                    views,
                    stats,
                    roles,
                    sequences,
                    types,
                    functions,
                    schemas,
                    comments,
                    privileges,
                    db_connlimit,
                    next_oid,
                    lsn,
                } = decode_catalog(&text).map_err(|e| {
                    PgError::new(
                        sqlstate::DATA_CORRUPTED,
                        format!("invalid catalog file \"{}\": {e}", path.display()),
                    )
                })?;
                let mut st = cat.state.write();
                for (key, text, by, previous) in comments {
                    st.comments
                        .insert(key, Arc::new(new_comment(text, by, previous)));
                }
                for (key, entry, by, previous) in privileges {
                    st.privileges
                        .insert(key, Arc::new(new_priv(entry, by, previous)));
                }
                st.next_oid = next_oid;
                st.lsn = lsn;
                st.db_connlimit = db_connlimit;
                st.stats = stats.into_iter().map(|s| (s.oid, Arc::new(s))).collect();
                for r in roles {
                    st.roles.insert(r.name.clone(), Arc::new(r));
                }
                for v in views {
                    st.views.insert(v.key(), Arc::new(ViewDef::new(v)));
                }
                for s in schemas {
                    st.schemas
                        .insert(s.name.clone(), Arc::new(SchemaDef::new(s)));
                }
                for t in types {
                    t.publish();
                    st.types
                        .insert(t.name.clone(), Arc::new(EnumTypeDef::new(t)));
                }
                for f in functions {
                    st.functions.insert(f.oid, Arc::new(FunctionDef::new(f)));
                }
                for (spec, value, called) in sequences {
                    let s = SequenceDef::new(spec, value, called);
                    st.sequences.insert(s.spec.key(), Arc::new(s));
                }
                for (spec, indexes) in tables {
                    let t = new_table(spec);
                    {
                        // A version before an uncommitted rewrite has its
                        // own heap file, so its own index set (same
                        // definitions): start-up fills both.
                        let prev = t
                            .previous
                            .as_ref()
                            .filter(|p| !Arc::ptr_eq(&p.indexes, &t.indexes));
                        let mut l = t.indexes.list.write();
                        for ix in indexes {
                            if let Some(p) = prev {
                                p.indexes
                                    .list
                                    .write()
                                    .push(Arc::new(IndexDef::new(ix.clone(), true)));
                            }
                            l.push(Arc::new(IndexDef::new(ix, true)));
                        }
                    }
                    st.tables.insert(t.key(), Arc::new(t));
                }
                index_foreign_keys(&mut st);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(PgError::new(
                    sqlstate::IO_ERROR,
                    format!("could not read file \"{}\": {e}", path.display()),
                ))
            }
        }
        Ok(cat)
    }

    /// Bumped by every change; bound plans compare it.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The session view of the catalog (see [`CatalogView`]): `own` are the
    /// session's xids, sorted (`Xact::own().xids`).
    pub fn view<'a>(&'a self, own: &'a [TransactionId], clog: &'a Clog) -> CatalogView<'a> {
        CatalogView {
            catalog: self,
            own,
            clog,
            path: DEFAULT_PATH,
        }
    }

    /// Every schema users created, committed or not (start-up, DDL).
    pub fn schema_list(&self) -> Vec<Arc<SchemaDef>> {
        let mut v: Vec<_> = self.state.read().schemas.values().cloned().collect();
        v.sort_by_key(|s| s.spec.oid);
        v
    }

    /// The schema with OID `oid` (created, committed or not).
    pub fn schema_by_oid(&self, oid: Oid) -> Option<Arc<SchemaDef>> {
        self.state
            .read()
            .schemas
            .values()
            .find(|s| s.spec.oid == oid)
            .cloned()
    }

    /// The sequence with OID `oid`, committed or not (whatever its name:
    /// RENAME and SET SCHEMA move its key).
    pub fn sequence_by_oid(&self, oid: Oid) -> Option<Arc<SequenceDef>> {
        self.state
            .read()
            .sequences
            .values()
            .find(|s| s.spec.oid == oid)
            .cloned()
    }

    /// The schema called `name` (created, committed or not), for DDL.
    pub fn schema(&self, name: &str) -> Option<Arc<SchemaDef>> {
        self.state.read().schemas.get(name).cloned()
    }

    /// The table named `name`, committed or not (name conflicts, redo,
    /// DDL bookkeeping); statements look names up through [`Catalog::view`].
    pub fn get(&self, name: &str) -> Option<Arc<TableDef>> {
        self.state.read().tables.get(name).cloned()
    }

    /// The table named `name` or 42P01.
    pub fn table(&self, name: &str) -> PgResult<Arc<TableDef>> {
        self.get(name).ok_or_else(|| undefined_table(name))
    }

    /// The table version whose heap is `rel`, committed or not (redo and
    /// pruning, which know a relation by its file): no copy of the table
    /// list. While a rewrite (ALTER COLUMN … TYPE) has not committed, the
    /// old file belongs to the previous version: its rows decode with that
    /// version's column types and index into that version's indexes.
    pub fn by_rel(&self, rel: RelFileId) -> Option<Arc<TableDef>> {
        let st = self.state.read();
        st.tables.values().find_map(|t| {
            if t.rel == rel {
                Some(t.clone())
            } else {
                t.previous.as_ref().filter(|p| p.rel == rel).cloned()
            }
        })
    }

    /// Every table, sorted by name.
    pub fn tables(&self) -> Vec<Arc<TableDef>> {
        let mut v: Vec<_> = self.state.read().tables.values().cloned().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// The planner statistics of the table with OID `oid`, if analysed.
    pub fn statistics(&self, oid: Oid) -> Option<Arc<RelationStats>> {
        self.state.read().stats.get(&oid).cloned()
    }

    /// Every table's statistics (the `pg_stats` view), by table OID.
    pub fn all_statistics(&self) -> Vec<Arc<RelationStats>> {
        let mut v: Vec<_> = self.state.read().stats.values().cloned().collect();
        v.sort_by_key(|s| s.oid);
        v
    }

    /// The role named `name`.
    pub fn role(&self, name: &str) -> Option<Arc<RoleSpec>> {
        self.state.read().roles.get(name).cloned()
    }

    /// The database's `datconnlimit` (-1: no limit; ALTER DATABASE …
    /// CONNECTION LIMIT).
    pub fn database_connlimit(&self) -> i32 {
        self.state.read().db_connlimit
    }

    /// Every role, sorted by OID.
    pub fn roles(&self) -> Vec<Arc<RoleSpec>> {
        let mut v: Vec<_> = self.state.read().roles.values().cloned().collect();
        v.sort_by_key(|r| r.oid);
        v
    }

    /// The role with OID `oid` (predefined roles included).
    pub fn role_by_oid(&self, oid: Oid) -> Option<Arc<RoleSpec>> {
        if let Some(r) = self.state.read().roles.values().find(|r| r.oid == oid) {
            return Some(r.clone());
        }
        crate::acl::PREDEFINED_ROLES
            .iter()
            .find(|(o, _)| *o == oid)
            .map(|(o, n)| Arc::new(RoleSpec::new(*o, n)))
    }

    /// The roles `oid` is a member of, itself first, then transitively
    /// (PostgreSQL's `roles_is_member_of`). With `privileges`, only through
    /// roles with INHERIT — the roles whose privileges `oid` has; without,
    /// every membership (what SET ROLE may switch to).
    pub fn member_closure(&self, oid: Oid, privileges: bool) -> Vec<Oid> {
        let st = self.state.read();
        let roles: Vec<&RoleSpec> = st.roles.values().map(|r| &**r).collect();
        crate::acl::member_closure(&roles, oid, privileges)
    }

    /// Every privilege entry ([`crate::acl`]), in key order.
    pub fn privilege_list(&self) -> Vec<(CommentKey, Arc<PrivDef>)> {
        let st = self.state.read();
        st.privileges
            .iter()
            .map(|(k, c)| (k.clone(), c.clone()))
            .collect()
    }

    /// The privilege entry of `key`, marks and all.
    pub fn privileges(&self, key: &CommentKey) -> Option<Arc<PrivDef>> {
        self.state.read().privileges.get(key).cloned()
    }

    /// Every comment entry ([`crate::comment`]), in key order.
    pub fn comments(&self) -> Vec<(CommentKey, Arc<CommentDef>)> {
        let st = self.state.read();
        st.comments
            .iter()
            .map(|(k, c)| (k.clone(), c.clone()))
            .collect()
    }

    /// The entry for one object, if any.
    pub fn comment(&self, key: &CommentKey) -> Option<Arc<CommentDef>> {
        self.state.read().comments.get(key).cloned()
    }

    /// The next OID to hand out (checkpoint records carry it).
    pub fn next_oid(&self) -> u32 {
        self.state.read().next_oid
    }

    /// Makes sure OIDs below `oid` are never handed out again (redo of
    /// checkpoint and relation-create records).
    pub fn advance_next_oid(&self, oid: u32) {
        let mut st = self.state.write();
        st.next_oid = st.next_oid.max(oid);
    }

    /// End LSN of the last change the catalog holds.
    pub fn lsn(&self) -> Lsn {
        self.state.read().lsn
    }

    /// Hands out a fresh OID (also used as the relation file number).
    pub fn allocate_oid(&self) -> u32 {
        let mut st = self.state.write();
        let o = st.next_oid;
        st.next_oid += 1;
        o
    }

    /// The sequence named `name`, committed or not.
    pub fn sequence(&self, name: &str) -> Option<Arc<SequenceDef>> {
        self.state.read().sequences.get(name).cloned()
    }

    /// Clean shutdown: logs each sequence's real counter in place of the
    /// value its last record logged ahead (`crate::sequence`), so the next
    /// start continues where this one stopped, as PostgreSQL's shutdown
    /// checkpoint writes the sequence page. Only when no session can call
    /// nextval any more.
    pub fn settle_sequences(&self) -> PgResult<()> {
        for s in self.sequences() {
            let value = s.state.last_value.load(Ordering::Acquire);
            let called = s.state.is_called.load(Ordering::Acquire);
            let logged = s.state.logged.load(Ordering::Acquire);
            let logged_called = s.state.logged_called.load(Ordering::Acquire);
            if (value, called) != (logged, logged_called) {
                self.apply_catalog_change(&CatalogChange::SetSequence {
                    name: s.spec.key(),
                    value,
                    called,
                })?;
            }
        }
        Ok(())
    }

    /// Every sequence, sorted by name.
    pub fn sequences(&self) -> Vec<Arc<SequenceDef>> {
        let mut v: Vec<_> = self.state.read().sequences.values().cloned().collect();
        v.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        v
    }

    /// The table with OID `oid`, committed or not.
    pub fn by_oid(&self, oid: Oid) -> Option<Arc<TableDef>> {
        self.state
            .read()
            .tables
            .values()
            .find(|t| t.oid == oid)
            .cloned()
    }

    /// The tables (any version, committed or not) with a FOREIGN KEY to
    /// the table with OID `oid`; empty — one hash lookup — for the tables
    /// no key references.
    pub fn referencing(&self, oid: Oid) -> Vec<Arc<TableDef>> {
        let st = self.state.read();
        match st.referenced_by.get(&oid) {
            None => Vec::new(),
            Some(names) => names
                .iter()
                .filter_map(|n| st.tables.get(n).cloned())
                .collect(),
        }
    }

    /// The table whose uncommitted ALTER renamed it from `name`.
    pub fn renamed_from(&self, name: &str) -> Option<Arc<TableDef>> {
        self.state
            .read()
            .tables
            .values()
            .find(|t| t.previous.as_ref().is_some_and(|p| p.key() == name))
            .cloned()
    }

    /// Every view, committed or not, sorted by name (start-up, DDL
    /// bookkeeping); statements use [`CatalogView::view`].
    pub fn views(&self) -> Vec<Arc<ViewDef>> {
        let mut v: Vec<_> = self.state.read().views.values().cloned().collect();
        v.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        v
    }

    /// The enum type named `name`, committed or not: the one lookup of a
    /// type by name (every type is in schema `public`).
    pub fn enum_type(&self, name: &str) -> Option<Arc<EnumTypeDef>> {
        self.state.read().types.get(name).cloned()
    }

    /// The enum type with OID `oid`, committed or not.
    pub fn enum_type_by_oid(&self, oid: Oid) -> Option<Arc<EnumTypeDef>> {
        self.state
            .read()
            .types
            .values()
            .find(|t| t.spec.oid == oid)
            .cloned()
    }

    /// Every enum type, committed or not, sorted by OID.
    pub fn enum_types(&self) -> Vec<Arc<EnumTypeDef>> {
        let mut v: Vec<_> = self.state.read().types.values().cloned().collect();
        v.sort_by_key(|t| t.spec.oid);
        v
    }

    /// The function with OID `oid`, committed or not.
    pub fn function(&self, oid: Oid) -> Option<Arc<FunctionDef>> {
        self.state.read().functions.get(&oid).cloned()
    }

    /// Every function users created, committed or not, sorted by OID.
    pub fn functions(&self) -> Vec<Arc<FunctionDef>> {
        let mut v: Vec<_> = self.state.read().functions.values().cloned().collect();
        v.sort_by_key(|f| f.spec.oid);
        v
    }

    /// The view named `name`, committed or not.
    pub fn view_def(&self, name: &str) -> Option<Arc<ViewDef>> {
        self.state.read().views.get(name).cloned()
    }

    /// True if an index, a sequence or a view has the key `key`
    /// ([`crate::namespace::rel_key`]).
    pub fn index_exists(&self, key: &str) -> bool {
        let st = self.state.read();
        st.sequences.contains_key(key) || st.views.contains_key(key) || index_key_taken(&st, key)
    }

    /// Applies one change: the single entry point for catalog writes.
    /// Validates, logs and flushes the change, applies it, persists the
    /// catalog (see the module docs). Returns the new index for
    /// `CreateIndex` (empty, not ready).
    pub fn apply_catalog_change(&self, change: &CatalogChange) -> PgResult<Option<Arc<IndexDef>>> {
        let mut st = self.state.write();
        validate(&st, change)?;
        if self.xlog.inserting() {
            let payload = bytes::Bytes::from(encode_change(change));
            let end = self
                .xlog
                .insert(TransactionId::INVALID, &wal::WalRecord::Catalog { payload })?;
            // WAL before data: the file written below must never describe
            // a change the log could lose.
            self.xlog.flush(end)?;
            st.lsn = end;
        }
        let created = apply_locked(&mut st, change);
        self.version.fetch_add(1, Ordering::AcqRel);
        self.persist(&st)?;
        Ok(created)
    }

    /// Redo of a `Catalog` record ending at `lsn`: applies the change if the
    /// catalog does not hold it yet. A change that no longer validates is
    /// logged and skipped (never a panic).
    pub fn redo_catalog_change(&self, lsn: Lsn, payload: &[u8]) -> PgResult<()> {
        let change = decode_change(payload).map_err(|e| {
            PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("invalid catalog record at {lsn}: {e}"),
            )
        })?;
        let mut st = self.state.write();
        if lsn <= st.lsn {
            return Ok(());
        }
        if let Err(e) = validate(&st, &change) {
            tracing::warn!("catalog record at {lsn} skipped: {}", e.message);
        } else {
            apply_locked(&mut st, &change);
        }
        st.lsn = lsn;
        self.version.fetch_add(1, Ordering::AcqRel);
        self.persist(&st)
    }

    /// Rewrites the catalog file atomically (temp + fsync + rename + fsync
    /// of the directory).
    fn persist(&self, st: &CatalogState) -> PgResult<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let text = encode_catalog(st);
        let dir = path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| io_error("create directory for file", dir, e))?;
        write_atomic(path, text.as_bytes(), true)
    }
}

/// 42P07 `relation "x" already exists`.
fn relation_exists(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_TABLE,
        format!("relation \"{name}\" already exists"),
    )
}

/// True if a table, sequence, view or index has the key `key` (one
/// namespace per schema; an index is in its table's schema).
fn relation_name_taken(st: &CatalogState, key: &str) -> bool {
    st.tables.contains_key(key)
        || st.sequences.contains_key(key)
        || st.views.contains_key(key)
        || index_key_taken(st, key)
}

/// True if an index has the key `key`.
fn index_key_taken(st: &CatalogState, key: &str) -> bool {
    let (ns, name) = split_key(key);
    st.tables
        .values()
        .any(|t| t.namespace == ns && t.indexes.list.read().iter().any(|i| i.spec.name == name))
}

/// True if a built-in or created schema is named `name`.
fn schema_taken(st: &CatalogState, name: &str) -> bool {
    st.schemas.contains_key(name) || BUILTIN_SCHEMAS.iter().any(|s| s.1 == name)
}

/// 42P06 `schema "x" already exists`.
fn schema_exists(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_SCHEMA,
        format!("schema \"{name}\" already exists"),
    )
}

/// 3F000 `schema "x" does not exist`.
pub fn undefined_schema(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_SCHEMA_NAME,
        format!("schema \"{name}\" does not exist"),
    )
}

/// 42710 `type "x" already exists`.
pub fn type_exists(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_OBJECT,
        format!("type \"{name}\" already exists"),
    )
}

/// 42704 `type "x" does not exist`.
pub fn undefined_type(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("type \"{name}\" does not exist"),
    )
}

/// True if a type of this name exists: an enum type, or the row type of
/// a table, view or sequence.
fn type_name_taken(st: &CatalogState, name: &str) -> bool {
    st.types.contains_key(name)
        || st.tables.contains_key(name)
        || st.views.contains_key(name)
        || st.sequences.contains_key(name)
}

/// Checks that `change` can be applied to `st` (the errors a statement gets).
fn validate(st: &CatalogState, change: &CatalogChange) -> PgResult<()> {
    match change {
        CatalogChange::CreateTable(spec) => {
            let key = spec.key();
            if st.tables.contains_key(&key) || st.views.contains_key(&key) {
                return Err(relation_exists(&spec.name));
            }
            if st.types.contains_key(&spec.name) {
                // The table's row type would take the name.
                return Err(type_exists(&spec.name).with_hint(
                    "A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type.",
                ));
            }
        }
        CatalogChange::CreateType(spec) => {
            if type_name_taken(st, &spec.name) {
                return Err(type_exists(&spec.name));
            }
        }
        CatalogChange::AlterType { name, spec } => {
            let t = st.types.get(name).ok_or_else(|| undefined_type(name))?;
            if spec.name != *name && type_name_taken(st, &spec.name) {
                return Err(type_exists(&spec.name));
            }
            if spec.oid != t.spec.oid {
                return Err(PgError::internal("ALTER TYPE does not match its type"));
            }
        }
        CatalogChange::DropType { name } => {
            if !st.types.contains_key(name) {
                return Err(undefined_type(name));
            }
        }
        CatalogChange::CreateFunction(spec) => {
            let types = spec.arg_types();
            let clash = st.functions.values().any(|f| {
                f.spec.oid != spec.oid
                    && f.spec.name == spec.name
                    && f.spec.namespace == spec.namespace
                    && f.spec.arg_types() == types
            });
            if clash {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_FUNCTION,
                    format!(
                        "function \"{}\" already exists with same argument types",
                        spec.name
                    ),
                ));
            }
        }
        CatalogChange::DropFunction { oid } => {
            if !st.functions.contains_key(oid) {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("function with OID {oid} does not exist"),
                ));
            }
        }
        CatalogChange::CreateView(spec) => {
            if relation_name_taken(st, &spec.key()) {
                return Err(relation_exists(&spec.name));
            }
        }
        CatalogChange::AlterView { name, spec } => {
            let v = st.views.get(name).ok_or_else(|| undefined_table(name))?;
            if spec.key() != *name && relation_name_taken(st, &spec.key()) {
                return Err(relation_exists(&spec.name));
            }
            if spec.oid != v.spec.oid {
                return Err(PgError::internal("ALTER VIEW does not match its view"));
            }
        }
        CatalogChange::DropView { name } => {
            if !st.views.contains_key(name) {
                return Err(undefined_table(name));
            }
        }
        CatalogChange::DropTable { name } => {
            if !st.tables.contains_key(name) {
                return Err(undefined_table(name));
            }
        }
        CatalogChange::AlterTable { name, spec } => {
            let t = st.tables.get(name).ok_or_else(|| undefined_table(name))?;
            let key = spec.key();
            if key != *name && (st.tables.contains_key(&key) || st.views.contains_key(&key)) {
                return Err(relation_exists(&spec.name));
            }
            if spec.oid != t.oid {
                return Err(PgError::internal("ALTER TABLE does not match its table"));
            }
            let n = spec.columns.len();
            if spec
                .constraints
                .iter()
                .any(|c| c.columns.iter().any(|&i| i >= n))
            {
                return Err(PgError::internal("constraint column out of range"));
            }
        }
        CatalogChange::CreateIndex { table, spec } => {
            let t = st.tables.get(table).ok_or_else(|| undefined_table(table))?;
            if spec
                .columns
                .iter()
                .filter(|c| **c != EXPR_KEY)
                .chain(&spec.sets_not_null)
                .chain(&spec.expr_columns)
                .any(|c| *c >= t.columns.len())
                || spec.columns.iter().filter(|c| **c == EXPR_KEY).count() != spec.exprs.len()
            {
                return Err(PgError::internal("index column out of range"));
            }
        }
        CatalogChange::SetStatistics { table, stats } => {
            let t = st.tables.get(table).ok_or_else(|| undefined_table(table))?;
            if t.oid != stats.oid || stats.columns.iter().any(|c| c.column >= t.columns.len()) {
                return Err(PgError::internal("statistics do not match their table"));
            }
        }
        CatalogChange::DropIndex { table, .. }
        | CatalogChange::SetNotNull { table, .. }
        | CatalogChange::DropNotNull { table, .. } => {
            if !st.tables.contains_key(table) {
                return Err(undefined_table(table));
            }
        }
        CatalogChange::CreateRole(spec) => {
            if st.roles.contains_key(&spec.name) {
                return Err(role_exists(&spec.name));
            }
        }
        CatalogChange::CreateSequence(spec) => {
            let key = spec.key();
            if st.sequences.contains_key(&key)
                || st.tables.contains_key(&key)
                || st.views.contains_key(&key)
            {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists", spec.name),
                ));
            }
            if spec.increment == 0 || spec.min > spec.max {
                return Err(PgError::internal("invalid sequence definition"));
            }
        }
        CatalogChange::DropSequence { name } | CatalogChange::SetSequence { name, .. } => {
            if !st.sequences.contains_key(name) {
                return Err(undefined_table(name));
            }
        }
        CatalogChange::AlterSequence { name, spec, .. } => {
            if !st.sequences.contains_key(name) {
                return Err(undefined_table(name));
            }
            let key = spec.key();
            if key != *name
                && (st.sequences.contains_key(&key)
                    || st.tables.contains_key(&key)
                    || st.views.contains_key(&key))
            {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists", spec.name),
                ));
            }
            if spec.increment == 0 || spec.min > spec.max {
                return Err(PgError::internal("invalid sequence definition"));
            }
        }
        CatalogChange::AlterRole { old_name, spec } => {
            if !st.roles.contains_key(old_name) {
                return Err(undefined_role(old_name));
            }
            if *old_name != spec.name && st.roles.contains_key(&spec.name) {
                return Err(role_exists(&spec.name));
            }
        }
        CatalogChange::DropRole { name } => {
            if !st.roles.contains_key(name) {
                return Err(undefined_role(name));
            }
        }
        CatalogChange::CreateSchema(spec) => {
            if schema_taken(st, &spec.name) {
                return Err(schema_exists(&spec.name));
            }
        }
        CatalogChange::AlterSchema { old_name, spec } => {
            let s = st
                .schemas
                .get(old_name)
                .ok_or_else(|| undefined_schema(old_name))?;
            if s.spec.oid != spec.oid {
                return Err(PgError::internal("ALTER SCHEMA does not match its schema"));
            }
            if *old_name != spec.name && schema_taken(st, &spec.name) {
                return Err(schema_exists(&spec.name));
            }
        }
        CatalogChange::SetComment { .. } | CatalogChange::SetPrivileges { .. } => {}
        CatalogChange::AlterDatabase { connlimit } => {
            if *connlimit < -1 {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid connection limit: {connlimit}"),
                ));
            }
        }
        CatalogChange::DropSchema { name } => {
            let s = st.schemas.get(name).ok_or_else(|| undefined_schema(name))?;
            let ns = s.spec.oid;
            if st.tables.values().any(|t| t.namespace == ns)
                || st.views.values().any(|v| v.spec.namespace == ns)
                || st.sequences.values().any(|q| q.spec.namespace == ns)
            {
                return Err(PgError::internal(
                    "DROP SCHEMA of a schema that is not empty",
                ));
            }
        }
    }
    Ok(())
}

/// Applies a validated change to the map: the one function both execution
/// and redo use. Returns the new index of `CreateIndex` (not ready).
fn apply_locked(st: &mut CatalogState, change: &CatalogChange) -> Option<Arc<IndexDef>> {
    let mut created = None;
    forget_comments_of_dropped(st, change);
    match change {
        CatalogChange::AlterDatabase { connlimit } => st.db_connlimit = *connlimit,
        CatalogChange::SetPrivileges {
            key,
            entry,
            by,
            previous,
        } => {
            if entry.is_none() && !by.is_valid() {
                st.privileges.remove(key);
            } else {
                st.privileges.insert(
                    key.clone(),
                    Arc::new(new_priv(entry.clone(), *by, previous.clone())),
                );
            }
        }
        CatalogChange::SetComment {
            key,
            text,
            by,
            previous,
        } => {
            if text.is_none() && !by.is_valid() {
                st.comments.remove(key);
            } else {
                st.comments.insert(
                    key.clone(),
                    Arc::new(new_comment(text.clone(), *by, previous.clone())),
                );
            }
        }
        CatalogChange::CreateTable(spec) => {
            st.next_oid = st.next_oid.max(spec.oid + 1).max(spec.rel.0 + 1);
            let t = new_table(spec.clone());
            st.tables.insert(spec.key(), Arc::new(t));
        }
        CatalogChange::DropTable { name } => {
            if let Some(t) = st.tables.remove(name) {
                t.dropped.store(true, Ordering::Release);
                st.stats.remove(&t.oid);
            }
        }
        CatalogChange::AlterTable { name, spec } => {
            if let Some(t) = st.tables.remove(name) {
                // The tuple format never shrinks: undoing an ADD COLUMN
                // keeps the column, dropped (rows the aborted transaction
                // wrote still have it).
                let mut spec = spec.clone();
                pad_columns(&mut spec.columns, &t.columns);
                let nt = table_version(&t, spec);
                st.tables.insert(nt.key(), Arc::new(nt));
            }
        }
        CatalogChange::CreateIndex { table, spec } => {
            if let Some(t) = st.tables.get(table) {
                let ix = Arc::new(IndexDef::new(spec.clone(), false));
                t.indexes.list.write().push(ix.clone());
                created = Some(ix);
            }
            st.next_oid = st.next_oid.max(spec.oid + 1);
        }
        CatalogChange::DropIndex { table, name } => {
            if let Some(t) = st.tables.get(table) {
                t.indexes.list.write().retain(|i| &i.spec.name != name);
            }
        }
        CatalogChange::SetNotNull { table, columns }
        | CatalogChange::DropNotNull { table, columns } => {
            let not_null = matches!(change, CatalogChange::SetNotNull { .. });
            if let Some(t) = st.tables.get(table) {
                let mut cols = t.columns.clone();
                for &c in columns {
                    if let Some(col) = cols.get_mut(c) {
                        col.not_null = not_null;
                    }
                }
                let mut spec = t.spec();
                spec.columns = cols;
                let nt = table_version(t, spec);
                st.tables.insert(table.clone(), Arc::new(nt));
            }
        }
        CatalogChange::SetStatistics { stats, .. } => {
            let merged = match st.stats.get(&stats.oid) {
                Some(old) => old.merged(stats),
                None => stats.clone(),
            };
            st.stats.insert(stats.oid, Arc::new(merged));
        }
        CatalogChange::CreateSequence(spec) => {
            st.next_oid = st.next_oid.max(spec.oid.saturating_add(1));
            let s = SequenceDef::new(spec.clone(), spec.start, false);
            st.sequences.insert(spec.key(), Arc::new(s));
        }
        CatalogChange::DropSequence { name } => {
            st.sequences.remove(name);
        }
        CatalogChange::SetSequence {
            name,
            value,
            called,
        } => {
            if let Some(s) = st.sequences.get(name) {
                s.set_logged(*value, *called);
            }
        }
        CatalogChange::AlterSequence {
            name,
            spec,
            value,
            called,
        } => {
            let s = SequenceDef::new(spec.clone(), *value, *called);
            if let Some(old) = st.sequences.remove(name) {
                // This node's view of the creator (cleared at commit)
                // wins over the one the record carries.
                s.creator
                    .store(old.creator.load(Ordering::Acquire), Ordering::Release);
                old.retire();
            }
            st.sequences.insert(spec.key(), Arc::new(s));
        }
        CatalogChange::CreateRole(spec) => {
            st.next_oid = st.next_oid.max(spec.oid + 1);
            st.roles.insert(spec.name.clone(), Arc::new(spec.clone()));
        }
        CatalogChange::AlterRole { old_name, spec } => {
            st.roles.remove(old_name);
            st.roles.insert(spec.name.clone(), Arc::new(spec.clone()));
        }
        CatalogChange::DropRole { name } => {
            if let Some(gone) = st.roles.remove(name) {
                // Its memberships go with it (pg_auth_members rows).
                for r in st.roles.values_mut() {
                    if r.member_of.iter().any(|g| g.role == gone.oid) {
                        Arc::make_mut(r).member_of.retain(|g| g.role != gone.oid);
                    }
                }
            }
        }
        CatalogChange::CreateView(spec) => {
            st.next_oid = st.next_oid.max(spec.oid.saturating_add(1));
            st.views
                .insert(spec.key(), Arc::new(ViewDef::new(spec.clone())));
        }
        CatalogChange::AlterView { name, spec } => {
            if let Some(old) = st.views.remove(name) {
                let mut spec = spec.clone();
                // The creation's mark stays until that transaction ends.
                spec.creator = TransactionId(old.creator.load(Ordering::Acquire));
                st.views.insert(spec.key(), Arc::new(ViewDef::new(spec)));
            }
        }
        CatalogChange::DropView { name } => {
            st.views.remove(name);
        }
        CatalogChange::CreateType(spec) => {
            let top = spec
                .labels
                .iter()
                .map(|l| l.oid)
                .chain([spec.oid, spec.array_oid]);
            st.next_oid = st.next_oid.max(top.max().unwrap_or(0).saturating_add(1));
            spec.publish();
            st.types
                .insert(spec.name.clone(), Arc::new(EnumTypeDef::new(spec.clone())));
        }
        CatalogChange::AlterType { name, spec } => {
            if let Some(old) = st.types.remove(name) {
                let mut spec = spec.clone();
                // The creation's mark stays until that transaction ends.
                spec.creator = TransactionId(old.creator.load(Ordering::Acquire));
                let top = spec.labels.iter().map(|l| l.oid).max().unwrap_or(0);
                st.next_oid = st.next_oid.max(top.saturating_add(1));
                spec.publish();
                st.types
                    .insert(spec.name.clone(), Arc::new(EnumTypeDef::new(spec)));
            }
        }
        CatalogChange::DropType { name } => {
            if let Some(t) = st.types.remove(name) {
                pgtypes::enumtype::unpublish(t.spec.oid);
            }
        }
        CatalogChange::CreateFunction(spec) => {
            st.next_oid = st.next_oid.max(spec.oid.saturating_add(1));
            let mut spec = spec.clone();
            if let Some(old) = st.functions.get(&spec.oid) {
                // A replacement keeps the creation's mark until that
                // transaction ends.
                let mark = old.creator.load(Ordering::Acquire);
                if mark != 0 && !spec.creator.is_valid() {
                    spec.creator = TransactionId(mark);
                }
            }
            st.functions
                .insert(spec.oid, Arc::new(FunctionDef::new(spec)));
        }
        CatalogChange::DropFunction { oid } => {
            st.functions.remove(oid);
        }
        CatalogChange::CreateSchema(spec) => {
            st.next_oid = st.next_oid.max(spec.oid.saturating_add(1));
            st.schemas
                .insert(spec.name.clone(), Arc::new(SchemaDef::new(spec.clone())));
        }
        CatalogChange::AlterSchema { old_name, spec } => {
            if let Some(old) = st.schemas.remove(old_name) {
                // This node's view of the creator (cleared at commit)
                // wins over the one the record carries.
                let mut spec = spec.clone();
                spec.creator = TransactionId(old.creator.load(Ordering::Acquire));
                st.schemas
                    .insert(spec.name.clone(), Arc::new(SchemaDef::new(spec)));
            }
        }
        CatalogChange::DropSchema { name } => {
            st.schemas.remove(name);
        }
    }
    if matches!(
        change,
        CatalogChange::CreateTable(_)
            | CatalogChange::AlterTable { .. }
            | CatalogChange::DropTable { .. }
    ) {
        index_foreign_keys(st);
    }
    created
}

fn new_comment(text: Option<String>, by: TransactionId, previous: Option<String>) -> CommentDef {
    CommentDef {
        text,
        by: AtomicU64::new(by.0),
        previous,
    }
}

/// A DROP takes its object's comments with it (PostgreSQL's
/// DeleteComments): the object's OID is looked up before the change.
fn forget_comments_of_dropped(st: &mut CatalogState, change: &CatalogChange) {
    use crate::comment::{PG_AUTHID, PG_CLASS, PG_CONSTRAINT, PG_NAMESPACE, PG_TYPE};
    let mut gone: Vec<(u32, Oid)> = Vec::new();
    match change {
        CatalogChange::DropTable { name } => {
            if let Some(t) = st.tables.get(name) {
                gone.push((PG_CONSTRAINT, t.oid));
                gone.push((PG_CLASS, t.oid));
                for i in t.indexes.list.read().iter() {
                    gone.push((PG_CLASS, i.spec.oid));
                }
            }
        }
        CatalogChange::DropIndex { table, name } => {
            if let Some(t) = st.tables.get(table) {
                for i in t
                    .indexes
                    .list
                    .read()
                    .iter()
                    .filter(|i| i.spec.name == *name)
                {
                    gone.push((PG_CLASS, i.spec.oid));
                }
            }
        }
        CatalogChange::DropView { name } => {
            if let Some(v) = st.views.get(name) {
                gone.push((PG_CLASS, v.spec.oid));
            }
        }
        CatalogChange::DropSequence { name } => {
            if let Some(q) = st.sequences.get(name) {
                gone.push((PG_CLASS, q.spec.oid));
            }
        }
        CatalogChange::DropSchema { name } => {
            if let Some(s) = st.schemas.get(name) {
                gone.push((PG_NAMESPACE, s.spec.oid));
            }
        }
        CatalogChange::DropType { name } => {
            if let Some(t) = st.types.get(name) {
                gone.push((PG_TYPE, t.spec.oid));
            }
        }
        CatalogChange::DropRole { name } => {
            if let Some(r) = st.roles.get(name) {
                gone.push((PG_AUTHID, r.oid));
            }
        }
        _ => return,
    }
    let kept = |k: &CommentKey| !gone.iter().any(|(c, o)| k.classoid == *c && k.objoid == *o);
    st.comments.retain(|k, _| kept(k));
    st.privileges.retain(|k, _| kept(k));
}

/// Rebuilds [`CatalogState::referenced_by`] from the tables' FOREIGN KEY
/// constraints (every version's: an uncommitted ADD CONSTRAINT counts, so
/// does the committed version before it).
fn index_foreign_keys(st: &mut CatalogState) {
    let mut map: HashMap<Oid, Vec<String>> = HashMap::new();
    for t in st.tables.values() {
        let versions = std::iter::once(&**t).chain(t.previous.as_deref());
        for v in versions {
            for c in &v.constraints {
                if let Some(f) = &c.foreign {
                    let e = map.entry(f.table).or_default();
                    let key = t.key();
                    if !e.contains(&key) {
                        e.push(key);
                    }
                }
            }
        }
    }
    st.referenced_by = map;
}

/// Encodes a change as the payload of a `Catalog` WAL record: one line
/// naming the change, then the lines of the catalog file format.
///
/// ```text
///   create_table <oid> <relfile> <name> <creator xid>  + option / column lines
///   drop_table <name>
///   create_index <table>                  + one index line
///   drop_index <table> <index>
///   set_not_null <table> <col,col,…>
///   drop_not_null <table> <col,col,…>
///   set_statistics <table>                + the statistics lines
///   create_role                           + one role line
///   alter_role <old name>                 + one role line
///   drop_role <name>
///   create_view                           + one view line
///   alter_view <old name>                 + one view line
///   drop_view <name>
///   create_type                           + one enum_type line
///   alter_type <old name>                 + one enum_type line
///   drop_type <name>
/// ```
pub fn encode_change(change: &CatalogChange) -> Vec<u8> {
    let mut out = String::new();
    match change {
        CatalogChange::CreateTable(t) => out.push_str(&spec_text(t)),
        CatalogChange::DropTable { name } => out.push_str(&format!("drop_table {}\n", esc(name))),
        CatalogChange::AlterTable { name, spec } => {
            out.push_str(&format!("alter_table {}\n", esc(name)));
            out.push_str(&spec_text(spec));
        }
        CatalogChange::CreateIndex { table, spec } => {
            out.push_str(&format!("create_index {}\n", esc(table)));
            push_index(&mut out, spec, spec.creator.0);
        }
        CatalogChange::DropIndex { table, name } => {
            out.push_str(&format!("drop_index {} {}\n", esc(table), esc(name)))
        }
        CatalogChange::SetNotNull { table, columns }
        | CatalogChange::DropNotNull { table, columns } => {
            let what = if matches!(change, CatalogChange::SetNotNull { .. }) {
                "set_not_null"
            } else {
                "drop_not_null"
            };
            let cols: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
            out.push_str(&format!("{what} {} {}\n", esc(table), cols.join(",")));
        }
        CatalogChange::SetStatistics { table, stats } => {
            out.push_str(&format!("set_statistics {}\n", esc(table)));
            encode_stats(&mut out, stats);
        }
        CatalogChange::CreateRole(spec) => {
            out.push_str("create_role\n");
            push_role(&mut out, spec);
        }
        CatalogChange::AlterRole { old_name, spec } => {
            out.push_str(&format!("alter_role {}\n", esc(old_name)));
            push_role(&mut out, spec);
        }
        CatalogChange::DropRole { name } => out.push_str(&format!("drop_role {}\n", esc(name))),
        CatalogChange::CreateView(spec) => {
            out.push_str("create_view\n");
            push_view(&mut out, spec);
        }
        CatalogChange::AlterView { name, spec } => {
            out.push_str(&format!("alter_view {}\n", esc(name)));
            push_view(&mut out, spec);
        }
        CatalogChange::DropView { name } => out.push_str(&format!("drop_view {}\n", esc(name))),
        CatalogChange::CreateType(spec) => {
            out.push_str("create_type\n");
            push_enum_type(&mut out, spec);
        }
        CatalogChange::AlterType { name, spec } => {
            out.push_str(&format!("alter_type {}\n", esc(name)));
            push_enum_type(&mut out, spec);
        }
        CatalogChange::DropType { name } => out.push_str(&format!("drop_type {}\n", esc(name))),
        CatalogChange::CreateFunction(spec) => {
            out.push_str("create_function\n");
            push_function(&mut out, spec);
        }
        CatalogChange::DropFunction { oid } => out.push_str(&format!("drop_function {oid}\n")),
        CatalogChange::SetPrivileges {
            key,
            entry,
            by,
            previous,
        } => {
            out.push_str("set_privileges\n");
            out.push_str(&acl_line(key, entry.as_ref(), *by, previous.as_ref()));
        }
        CatalogChange::SetComment {
            key,
            text,
            by,
            previous,
        } => {
            out.push_str("set_comment\n");
            out.push_str(&comment_line(
                key,
                text.as_deref(),
                *by,
                previous.as_deref(),
            ));
        }
        CatalogChange::AlterDatabase { connlimit } => {
            out.push_str(&format!("alter_database {connlimit}\n"))
        }
        CatalogChange::CreateSchema(spec) => {
            out.push_str("create_schema\n");
            out.push_str(&schema_line(spec, spec.creator.0));
        }
        CatalogChange::AlterSchema { old_name, spec } => {
            out.push_str(&format!("alter_schema {}\n", esc(old_name)));
            out.push_str(&schema_line(spec, spec.creator.0));
        }
        CatalogChange::DropSchema { name } => out.push_str(&format!("drop_schema {}\n", esc(name))),
        CatalogChange::CreateSequence(spec) => {
            out.push_str("create_sequence\n");
            push_sequence(&mut out, spec, spec.start, false, spec.creator.0);
        }
        CatalogChange::DropSequence { name } => {
            out.push_str(&format!("drop_sequence {}\n", esc(name)))
        }
        CatalogChange::AlterSequence {
            name,
            spec,
            value,
            called,
        } => {
            out.push_str(&format!("alter_sequence {}\n", esc(name)));
            push_sequence(&mut out, spec, *value, *called, spec.creator.0);
        }
        CatalogChange::SetSequence {
            name,
            value,
            called,
        } => out.push_str(&format!(
            "set_sequence {} {value} {}\n",
            esc(name),
            u8::from(*called)
        )),
    }
    out.into_bytes()
}

/// Decodes [`encode_change`]'s output; never panics.
pub fn decode_change(payload: &[u8]) -> Result<CatalogChange, String> {
    let text = std::str::from_utf8(payload).map_err(|_| "not UTF-8".to_string())?;
    let mut lines = text.lines();
    let first = lines.next().ok_or("empty catalog record")?;
    let f: Vec<&str> = first.split(' ').collect();
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let xid = |s: &str| {
        s.parse::<u64>()
            .map(TransactionId)
            .map_err(|_| format!("bad xid {s:?}"))
    };
    let cols = |s: &str| -> Result<Vec<usize>, String> {
        s.split(',')
            .map(|c| c.parse::<usize>().map_err(|_| "bad column".to_string()))
            .collect()
    };
    let change = match f.as_slice() {
        ["create_table", ..] => {
            // The whole payload is the definition.
            lines = "".lines();
            CatalogChange::CreateTable(parse_spec_text(text)?)
        }
        ["alter_table", name] => {
            let rest = text.split_once('\n').map(|x| x.1).unwrap_or("");
            let spec = parse_spec_text(rest)?;
            // The rest of the payload is the definition.
            lines = "".lines();
            CatalogChange::AlterTable {
                name: unesc(name)?,
                spec,
            }
        }
        ["drop_table", name] => CatalogChange::DropTable { name: unesc(name)? },
        ["create_index", table] => {
            let line = lines.next().ok_or("missing index line")?;
            let g: Vec<&str> = line.split(' ').collect();
            let spec = match g.as_slice() {
                ["index", oid, name, uniq, prim, c, creator, nn, extra @ ..] => {
                    let mut spec = IndexSpec {
                        name: unesc(name)?,
                        oid: num(oid)?,
                        columns: key_list(c, usize::MAX)?,
                        unique: *uniq == "1",
                        primary: *prim == "1",
                        creator: xid(creator)?,
                        sets_not_null: if *nn == "-" { Vec::new() } else { cols(nn)? },
                        ..IndexSpec::default()
                    };
                    parse_index_extras(&mut spec, extra, usize::MAX)?;
                    spec
                }
                _ => return Err(format!("unrecognized line {line:?}")),
            };
            CatalogChange::CreateIndex {
                table: unesc(table)?,
                spec,
            }
        }
        ["drop_index", table, name] => CatalogChange::DropIndex {
            table: unesc(table)?,
            name: unesc(name)?,
        },
        ["set_not_null", table, c] => CatalogChange::SetNotNull {
            table: unesc(table)?,
            columns: cols(c)?,
        },
        ["drop_not_null", table, c] => CatalogChange::DropNotNull {
            table: unesc(table)?,
            columns: cols(c)?,
        },
        ["set_statistics", table] => {
            let first = lines.next().ok_or("missing statistics")?;
            CatalogChange::SetStatistics {
                table: unesc(table)?,
                stats: decode_stats(first, &mut lines)?,
            }
        }
        ["create_role"] => {
            let line = lines.next().ok_or("missing role line")?;
            CatalogChange::CreateRole(parse_role(line)?)
        }
        ["alter_role", old] => {
            let line = lines.next().ok_or("missing role line")?;
            CatalogChange::AlterRole {
                old_name: unesc(old)?,
                spec: parse_role(line)?,
            }
        }
        ["drop_role", name] => CatalogChange::DropRole { name: unesc(name)? },
        ["create_view"] => {
            let line = lines.next().ok_or("missing view line")?;
            CatalogChange::CreateView(parse_view(line)?)
        }
        ["alter_view", name] => {
            let line = lines.next().ok_or("missing view line")?;
            CatalogChange::AlterView {
                name: unesc(name)?,
                spec: parse_view(line)?,
            }
        }
        ["drop_view", name] => CatalogChange::DropView { name: unesc(name)? },
        ["create_type"] => {
            let line = lines.next().ok_or("missing enum_type line")?;
            CatalogChange::CreateType(parse_enum_type(line)?)
        }
        ["alter_type", name] => {
            let line = lines.next().ok_or("missing enum_type line")?;
            CatalogChange::AlterType {
                name: unesc(name)?,
                spec: parse_enum_type(line)?,
            }
        }
        ["drop_type", name] => CatalogChange::DropType { name: unesc(name)? },
        ["create_function"] => {
            let line = lines.next().ok_or("missing function line")?;
            CatalogChange::CreateFunction(parse_function(line)?)
        }
        ["drop_function", oid] => CatalogChange::DropFunction {
            oid: oid.parse().map_err(|_| format!("bad oid {oid:?}"))?,
        },
        ["set_privileges"] => {
            let line = lines.next().ok_or("missing privilege line")?;
            let (key, entry, by, previous) = parse_acl_line(line)?;
            CatalogChange::SetPrivileges {
                key,
                entry,
                by,
                previous,
            }
        }
        ["set_comment"] => {
            let line = lines.next().ok_or("missing comment line")?;
            let (key, text, by, previous) = parse_comment_line(line)?;
            CatalogChange::SetComment {
                key,
                text,
                by,
                previous,
            }
        }
        ["alter_database", limit] => CatalogChange::AlterDatabase {
            connlimit: limit.parse().map_err(|_| "bad connection limit")?,
        },
        ["create_schema"] => {
            let line = lines.next().ok_or("missing schema line")?;
            CatalogChange::CreateSchema(parse_schema(line)?)
        }
        ["alter_schema", name] => {
            let line = lines.next().ok_or("missing schema line")?;
            CatalogChange::AlterSchema {
                old_name: unesc(name)?,
                spec: parse_schema(line)?,
            }
        }
        ["drop_schema", name] => CatalogChange::DropSchema { name: unesc(name)? },
        ["create_sequence"] => {
            let line = lines.next().ok_or("missing sequence line")?;
            CatalogChange::CreateSequence(parse_sequence(line)?.0)
        }
        ["drop_sequence", name] => CatalogChange::DropSequence { name: unesc(name)? },
        ["alter_sequence", name] => {
            let line = lines.next().ok_or("missing sequence line")?;
            let (spec, value, called) = parse_sequence(line)?;
            CatalogChange::AlterSequence {
                name: unesc(name)?,
                spec,
                value,
                called,
            }
        }
        ["set_sequence", name, value, called] => CatalogChange::SetSequence {
            name: unesc(name)?,
            value: value.parse().map_err(|_| "bad sequence value")?,
            called: *called == "1",
        },
        _ => return Err(format!("unrecognized catalog change {first:?}")),
    };
    if lines.next().is_some_and(|l| !l.is_empty()) {
        return Err("trailing lines".into());
    }
    Ok(change)
}

/// One role line: `role <oid> <name> <flags> <connlimit> <password or -> <valid until or ->`,
/// flags as PostgreSQL's column order of single letters (s i r d l p b: super,
/// inherit, createrole, createdb, login, replication, bypassrls), `-` when off.
fn push_role(out: &mut String, r: &RoleSpec) {
    let flag = |on: bool, c: char| if on { c } else { '-' };
    let flags: String = [
        flag(r.superuser, 's'),
        flag(r.inherit, 'i'),
        flag(r.createrole, 'r'),
        flag(r.createdb, 'd'),
        flag(r.login, 'l'),
        flag(r.replication, 'p'),
        flag(r.bypassrls, 'b'),
    ]
    .iter()
    .collect();
    let pw = r.password.as_deref().map(esc).unwrap_or_else(|| "-".into());
    let until = r
        .valid_until
        .map(|t| t.to_string())
        .unwrap_or_else(|| "-".into());
    let members = if r.member_of.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = r
            .member_of
            .iter()
            .map(|g| format!("{}/{}/{}", g.role, g.grantor, u8::from(g.admin)))
            .collect();
        format!(" {}", list.join(","))
    };
    out.push_str(&format!(
        "role {} {} {flags} {} {pw} {until}{members}\n",
        r.oid,
        esc(&r.name),
        r.connlimit
    ));
}

/// `role/grantor/admin` items joined by commas.
fn parse_role_grants(s: &str) -> Result<Vec<RoleGrant>, String> {
    s.split(',')
        .map(|i| {
            let f: Vec<&str> = i.split('/').collect();
            let [role, grantor, admin] = f.as_slice() else {
                return Err(format!("bad role membership {i:?}"));
            };
            Ok(RoleGrant {
                role: role.parse().map_err(|_| "bad role oid")?,
                grantor: grantor.parse().map_err(|_| "bad grantor oid")?,
                admin: *admin == "1",
            })
        })
        .collect()
}

fn parse_role(line: &str) -> Result<RoleSpec, String> {
    let g: Vec<&str> = line.split(' ').collect();
    let (oid, name, flags, connlimit, pw, until, member_of) = match g.as_slice() {
        ["role", oid, name, flags, connlimit, pw, until] => {
            (oid, name, flags, connlimit, pw, until, Vec::new())
        }
        ["role", oid, name, flags, connlimit, pw, until, m] => (
            oid,
            name,
            flags,
            connlimit,
            pw,
            until,
            parse_role_grants(m)?,
        ),
        _ => return Err(format!("unrecognized line {line:?}")),
    };
    let f = flags.as_bytes();
    if f.len() != 7 {
        return Err("bad role flags".into());
    }
    Ok(RoleSpec {
        oid: oid.parse().map_err(|_| "bad oid")?,
        name: unesc(name)?,
        superuser: f[0] == b's',
        inherit: f[1] == b'i',
        createrole: f[2] == b'r',
        createdb: f[3] == b'd',
        login: f[4] == b'l',
        replication: f[5] == b'p',
        bypassrls: f[6] == b'b',
        connlimit: connlimit.parse().map_err(|_| "bad connection limit")?,
        password: if *pw == "-" { None } else { Some(unesc(pw)?) },
        valid_until: if *until == "-" {
            None
        } else {
            Some(until.parse().map_err(|_| "bad valid until")?)
        },
        member_of,
    })
}

/// One sequence line: `sequence <oid> <name> <type> <increment> <min> <max>
/// <start> <cache> <cycle 0|1> <owner table or -> <owner column or ->
/// <last value> <is_called 0|1> <creator xid>`, then for an uncommitted
/// ALTER `<altered_by xid> <counter kept 0|1> <previous line, escaped>`
/// (the previous line's counter fields are the counter a ROLLBACK puts
/// back, when kept).
fn push_sequence(out: &mut String, s: &SequenceSpec, value: i64, called: bool, creator: u64) {
    out.push_str(&sequence_line(s, value, called, creator));
    out.push('\n');
}

fn sequence_line(s: &SequenceSpec, value: i64, called: bool, creator: u64) -> String {
    let (ot, oc) = match &s.owned_by {
        Some((t, c)) => (esc(t), esc(c)),
        None => ("-".into(), "-".into()),
    };
    let mut line = format!(
        "sequence {} {} {} {} {} {} {} {} {} {ot} {oc} {value} {} {creator}",
        s.oid,
        esc(&s.key()),
        type_to_catalog(s.ty),
        s.increment,
        s.min,
        s.max,
        s.start,
        s.cache,
        u8::from(s.cycle),
        u8::from(called),
    );
    if let Some(p) = s.previous.as_ref().filter(|_| s.altered_by.is_valid()) {
        let (v, c) = p.counter.unwrap_or((0, false));
        let prev = sequence_line(&p.spec.unmarked(), v, c, p.spec.creator.0);
        line.push_str(&format!(
            " {} {} {}",
            s.altered_by.0,
            u8::from(p.counter.is_some()),
            esc(&prev)
        ));
    }
    line
}

/// Parses [`push_sequence`]'s line: the spec and the counter.
fn parse_sequence(line: &str) -> Result<(SequenceSpec, i64, bool), String> {
    let g: Vec<&str> = line.split(' ').collect();
    let (fields, marks) = if g.len() > 15 {
        g.split_at(15)
    } else {
        (g.as_slice(), &[][..])
    };
    let ["sequence", oid, name, ty, inc, min, max, start, cache, cycle, ot, oc, value, called, creator] =
        fields
    else {
        return Err(format!("unrecognized line {line:?}"));
    };
    let n = |s: &str| s.parse::<i64>().map_err(|_| format!("bad number {s:?}"));
    let (namespace, name) = parse_rel_key(name)?;
    let (altered_by, previous) = match marks {
        [] => (TransactionId::INVALID, None),
        [by, kept, prev] => {
            let (spec, v, c) = parse_sequence(&unesc(prev)?)?;
            let by = TransactionId(by.parse::<u64>().map_err(|_| "bad xid")?);
            let counter = (*kept == "1").then_some((v, c));
            (by, Some(Box::new(SequencePrevious { spec, counter })))
        }
        _ => return Err(format!("unrecognized line {line:?}")),
    };
    let spec = SequenceSpec {
        oid: oid.parse().map_err(|_| "bad oid")?,
        name,
        namespace,
        ty: type_from_catalog(ty).ok_or("bad type")?,
        increment: n(inc)?,
        min: n(min)?,
        max: n(max)?,
        start: n(start)?,
        cache: n(cache)?,
        cycle: *cycle == "1",
        owned_by: if *ot == "-" {
            None
        } else {
            Some((unesc(ot)?, unesc(oc)?))
        },
        creator: TransactionId(creator.parse::<u64>().map_err(|_| "bad xid")?),
        altered_by,
        previous,
    };
    if spec.increment == 0 || spec.min > spec.max {
        return Err("invalid sequence definition".into());
    }
    Ok((spec, n(value)?, *called == "1"))
}

fn push_column(out: &mut String, c: &ColumnDef) {
    let opt = |s: &Option<String>| s.as_deref().map(esc).unwrap_or_else(|| "-".into());
    out.push_str(&format!(
        "column {} {} {} {} {} {}{}\n",
        esc(&c.name),
        type_to_catalog(c.ty),
        u8::from(c.not_null),
        opt(&c.default),
        u8::from(c.dropped),
        opt(&c.missing),
        c.identity.map(|i| format!(" {i}")).unwrap_or_default()
    ));
}

fn list_text(v: &[usize]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_list(s: &str) -> Result<Vec<usize>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|c| c.parse::<usize>().map_err(|_| "bad column".to_string()))
        .collect()
}

fn opt_text(s: Option<&str>) -> String {
    s.map(esc).unwrap_or_else(|| "-".into())
}

fn parse_opt(s: &str) -> Result<Option<String>, String> {
    if s == "-" {
        Ok(None)
    } else {
        unesc(s).map(Some)
    }
}

/// One constraint line: `constraint <name> <contype> <cols> <check> <index>
/// <deferrable 0|1><deferred 0|1>[<not valid 0|1>[<match full 0|1>]] <fk table> <fk cols> <on
/// delete><on update>`
/// (`-` for an absent field).
fn push_constraint(out: &mut String, c: &ConstraintSpec) {
    let (ft, fc, acts) = match &c.foreign {
        Some(f) => (
            f.table.to_string(),
            list_text(&f.columns),
            format!("{}{}", f.on_delete.letter(), f.on_update.letter()),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    out.push_str(&format!(
        "constraint {} {} {} {} {} {}{}{}{} {ft} {fc} {acts}\n",
        esc(&c.name),
        c.kind.contype(),
        list_text(&c.columns),
        opt_text(c.check.as_deref()),
        opt_text(c.index.as_deref()),
        u8::from(c.deferrable),
        u8::from(c.initially_deferred),
        u8::from(c.not_valid),
        u8::from(c.match_full),
    ));
}

/// A table definition as text: the header line, then options, columns,
/// constraints and the uncommitted-ALTER mark (catalog WAL records).
fn spec_text(t: &TableSpec) -> String {
    let mut out = format!(
        "create_table {} {} {} {}\n",
        t.oid,
        t.rel.0,
        esc(&t.key()),
        t.creator.0
    );
    push_spec_body(&mut out, t);
    out
}

/// The lines of a table definition after its header line (shared by the
/// catalog file and WAL records).
fn push_spec_body(out: &mut String, t: &TableSpec) {
    for (k, v) in &t.options {
        out.push_str(&format!("option {} {}\n", esc(k), esc(v)));
    }
    for c in &t.columns {
        push_column(out, c);
    }
    for c in &t.constraints {
        push_constraint(out, c);
    }
    for (sub, text) in &t.comments {
        out.push_str(&format!("comment {sub} {}\n", esc(text)));
    }
    for tg in &t.triggers {
        crate::pg_trigger::push_trigger(out, tg);
    }
    if t.altered_by.is_valid() {
        out.push_str(&format!("altered_by {}\n", t.altered_by.0));
    }
    if let Some(p) = &t.previous {
        out.push_str(&format!("previous {}\n", esc(&spec_text(p))));
    }
}

/// Parses one line of [`push_spec_body`] into `spec`; false if the line is
/// not one of them.
fn parse_spec_line(spec: &mut TableSpec, line: &str) -> Result<bool, String> {
    let g: Vec<&str> = line.split(' ').collect();
    match g.as_slice() {
        ["option", k, v] => spec.options.push((unesc(k)?, unesc(v)?)),
        ["column", name, ty, nn, def, rest @ ..] => {
            let (dropped, missing, identity) = match rest {
                [] => (false, None, None),
                [d, m] => (*d == "1", parse_opt(m)?, None),
                [d, m, i] if matches!(*i, "a" | "d") => {
                    (*d == "1", parse_opt(m)?, i.chars().next())
                }
                _ => return Err(format!("bad column line {line:?}")),
            };
            spec.columns.push(ColumnDef {
                name: unesc(name)?,
                ty: type_from_catalog(ty).ok_or("bad type")?,
                not_null: *nn == "1",
                default: parse_opt(def)?,
                dropped,
                missing,
                identity,
            })
        }
        ["constraint", name, kind, cols, check, index, flags, ft, fc, acts] => {
            let n = spec.columns.len();
            let columns = parse_list(cols)?;
            if columns.iter().any(|&c| c >= n) {
                return Err("constraint column out of range".into());
            }
            let kind = kind
                .chars()
                .next()
                .and_then(ConstraintKind::from_contype)
                .ok_or("bad constraint kind")?;
            let f = flags.as_bytes();
            let foreign = if *ft == "-" {
                None
            } else {
                let a: Vec<char> = acts.chars().collect();
                let act = |i: usize| {
                    a.get(i)
                        .copied()
                        .and_then(FkAction::from_letter)
                        .ok_or("bad foreign key action")
                };
                Some(ForeignKeySpec {
                    table: ft.parse().map_err(|_| "bad foreign key table")?,
                    columns: parse_list(fc)?,
                    on_delete: act(0)?,
                    on_update: act(1)?,
                })
            };
            spec.constraints.push(ConstraintSpec {
                name: unesc(name)?,
                kind,
                columns,
                check: parse_opt(check)?,
                index: parse_opt(index)?,
                foreign,
                deferrable: f.first() == Some(&b'1'),
                initially_deferred: f.get(1) == Some(&b'1'),
                not_valid: f.get(2) == Some(&b'1'),
                match_full: f.get(3) == Some(&b'1'),
            });
        }
        ["trigger", ..] => {
            let n = spec.columns.len();
            spec.triggers
                .push(crate::pg_trigger::parse_trigger(line, n)?)
        }
        ["comment", sub, text] => spec
            .comments
            .push((sub.parse().map_err(|_| "bad comment")?, unesc(text)?)),
        ["altered_by", x] => {
            spec.altered_by = TransactionId(x.parse::<u64>().map_err(|_| "bad xid")?);
        }
        ["previous", text] => {
            let p = parse_spec_text(&unesc(text)?)?;
            if p.previous.is_some() {
                return Err("nested previous definition".into());
            }
            spec.previous = Some(Box::new(p));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Parses [`spec_text`]'s output.
fn parse_spec_text(text: &str) -> Result<TableSpec, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("missing table line")?;
    let f: Vec<&str> = first.split(' ').collect();
    let ["create_table", oid, rel, name, creator] = f.as_slice() else {
        return Err(format!("unrecognized line {first:?}"));
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let (namespace, name) = parse_rel_key(name)?;
    let mut spec = TableSpec::new(num(oid)?, &name, RelFileId(num(rel)?), Vec::new());
    spec.namespace = namespace;
    spec.creator = TransactionId(creator.parse::<u64>().map_err(|_| "bad xid")?);
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if !parse_spec_line(&mut spec, line)? {
            return Err(format!("unrecognized line {line:?}"));
        }
    }
    Ok(spec)
}

/// One index line; `creator` is the spec's in a WAL record and the
/// current (possibly cleared) value in the catalog file.
fn push_index(out: &mut String, i: &IndexSpec, creator: u64) {
    let list = |v: &[usize]| -> String {
        if v.is_empty() {
            return "-".into();
        }
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let keys = i
        .columns
        .iter()
        .map(|c| {
            if *c == EXPR_KEY {
                "x".to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    out.push_str(&format!(
        "index {} {} {} {} {} {} {}",
        i.oid,
        esc(&i.name),
        u8::from(i.unique),
        u8::from(i.primary),
        keys,
        creator,
        list(&i.sets_not_null)
    ));
    // Optional trailing fields (absent for a plain index).
    for e in &i.exprs {
        out.push_str(&format!(" x:{}", esc(e)));
    }
    if let Some(p) = &i.predicate {
        out.push_str(&format!(" p:{}", esc(p)));
    }
    if !i.expr_columns.is_empty() {
        out.push_str(&format!(" u:{}", list(&i.expr_columns)));
    }
    if !i.options.is_empty() {
        let o: Vec<String> = i.options.iter().map(|o| o.to_string()).collect();
        out.push_str(&format!(" o:{}", o.join(",")));
    }
    out.push('\n');
}

/// Parses the optional trailing fields of an index line into `spec`
/// (see [`push_index`]); `ncols` bounds the column numbers.
fn parse_index_extras(spec: &mut IndexSpec, fields: &[&str], ncols: usize) -> Result<(), String> {
    let list = |s: &str| -> Result<Vec<usize>, String> {
        let mut v = Vec::new();
        for c in s.split(',').filter(|c| !c.is_empty() && *c != "-") {
            let c: usize = c.parse().map_err(|_| "bad index column".to_string())?;
            if c >= ncols {
                return Err("index column out of range".into());
            }
            v.push(c);
        }
        Ok(v)
    };
    for f in fields {
        if let Some(x) = f.strip_prefix("x:") {
            spec.exprs.push(unesc(x)?);
        } else if let Some(p) = f.strip_prefix("p:") {
            spec.predicate = Some(unesc(p)?);
        } else if let Some(u) = f.strip_prefix("u:") {
            spec.expr_columns = list(u)?;
        } else if let Some(o) = f.strip_prefix("o:") {
            spec.options = o
                .split(',')
                .map(|x| x.parse::<i16>().map_err(|_| "bad index option".to_string()))
                .collect::<Result<_, _>>()?;
        } else {
            return Err(format!("unrecognized index field {f:?}"));
        }
    }
    let nexpr = spec.columns.iter().filter(|c| **c == EXPR_KEY).count();
    if nexpr != spec.exprs.len() {
        return Err("index expressions do not match their keys".into());
    }
    Ok(())
}

/// An index key list: column numbers, `x` for an expression key.
fn key_list(s: &str, ncols: usize) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for c in s.split(',') {
        if c == "x" {
            v.push(EXPR_KEY);
            continue;
        }
        let c: usize = c.parse().map_err(|_| "bad index column".to_string())?;
        if c >= ncols {
            return Err("index column out of range".into());
        }
        v.push(c);
    }
    Ok(v)
}

fn new_table(spec: TableSpec) -> TableDef {
    let shared = TableDef {
        creator: Arc::new(AtomicU64::new(spec.creator.0)),
        oid: spec.oid,
        name: String::new(),
        namespace: spec.namespace,
        rel: spec.rel,
        columns: Vec::new(),
        row_types: Box::new([]),
        options: Vec::new(),
        indexes: Arc::new(TableIndexes::default()),
        lock: Arc::new(RelLock::default()),
        dropped: Arc::new(AtomicBool::new(false)),
        rewriting: Arc::new(AtomicU64::new(0)),
        constraints: Vec::new(),
        comments: Vec::new(),
        triggers: Vec::new(),
        altered_by: AtomicU64::new(0),
        previous: None,
        missing: Vec::new(),
        sql_cache: std::sync::OnceLock::new(),
    };
    table_version(&shared, spec)
}

/// Appends to `cols` the columns of `wider` beyond its length, as dropped
/// columns.
fn pad_columns(cols: &mut Vec<ColumnDef>, wider: &[ColumnDef]) {
    for (i, c) in wider.iter().enumerate().skip(cols.len()) {
        let mut c = c.clone();
        if !c.dropped {
            c.name = dropped_column_name(i);
            c.dropped = true;
        }
        c.not_null = false;
        c.default = None;
        c.missing = None;
        cols.push(c);
    }
}

/// The index set of a version of table `t` whose heap is `rel`: indexes
/// belong to a heap relation file. The same file keeps `t`'s; going back
/// to the file of `t`'s previous version (undoing a rewrite) takes that
/// version's, intact; a new file (a rewrite) gets copies of the
/// definitions, empty and not ready, which the rewrite — or a standby's
/// replay, or start-up — fills from that file.
fn indexes_for(t: &TableDef, rel: RelFileId) -> Arc<TableIndexes> {
    if rel == t.rel {
        return t.indexes.clone();
    }
    if let Some(p) = t.previous.as_ref().filter(|p| p.rel == rel) {
        if !Arc::ptr_eq(&p.indexes, &t.indexes) {
            return p.indexes.clone();
        }
    }
    Arc::new(TableIndexes {
        list: RwLock::new(
            t.indexes
                .list()
                .iter()
                .map(|i| Arc::new(IndexDef::new(i.spec.clone(), false)))
                .collect(),
        ),
    })
}

/// A new descriptor version of table `t` (its shared parts — lock, dropped
/// flag, creator mark, and the indexes while the heap file stays the
/// same, see [`indexes_for`] — are kept) with definition `spec`.
fn table_version(t: &TableDef, spec: TableSpec) -> TableDef {
    let missing: Vec<Option<pgtypes::value::Value>> = spec
        .columns
        .iter()
        .map(|c| {
            let text = c.missing.as_deref()?;
            if let (SqlType::Enum(_), Ok(o)) = (c.ty, text.parse::<u32>()) {
                return Some(pgtypes::value::Value::Enum(o));
            }
            match pgtypes::value::Value::from_text(c.ty, text) {
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::warn!(
                        "missing value {text:?} of column \"{}\" ignored: {}",
                        c.name,
                        e.message
                    );
                    None
                }
            }
        })
        .collect();
    let missing = if missing.iter().any(|m| m.is_some()) {
        missing
    } else {
        Vec::new()
    };
    // The committed version others see writes rows of its own width: an
    // added column then reads its missing value there, as for any row
    // from before the ALTER.
    let previous = spec.previous.map(|p| {
        Arc::new(table_version(
            t,
            TableSpec {
                previous: None,
                ..*p
            },
        ))
    });
    TableDef {
        creator: t.creator.clone(),
        oid: spec.oid,
        name: spec.name,
        namespace: spec.namespace,
        rel: spec.rel,
        row_types: spec
            .columns
            .iter()
            .map(|c| match c.ty {
                SqlType::Array(_) if c.dropped => SqlType::Bytea,
                t => t,
            })
            .collect(),
        columns: spec.columns,
        options: spec.options,
        indexes: indexes_for(t, spec.rel),
        lock: t.lock.clone(),
        dropped: t.dropped.clone(),
        rewriting: t.rewriting.clone(),
        constraints: spec.constraints,
        comments: spec.comments,
        triggers: spec.triggers,
        altered_by: AtomicU64::new(spec.altered_by.0),
        previous,
        missing,
        sql_cache: std::sync::OnceLock::new(),
    }
}

// ---------------------------------------------------------------------------
// The catalog file: a line-oriented text format, every string field
// percent-escaped so names with spaces, tabs or newlines survive.
//
//   hotpair-catalog 2            (1: the same without statistics)
//   next_oid 16390
//   table <oid> <relfile> <name> <creator xid, 0: committed>
//   option <name> <value>
//   column <name> <type> <notnull 0|1> <default or ->
//   index <oid> <name> <unique 0|1> <primary 0|1> <col,col,…> <creator xid>
//         <columns it made NOT NULL, col,col,… or ->
//         [x:<expression>]… [p:<predicate>] [u:<col,…>] [o:<indoption,…>]
//         (a key column `x` is the next x: expression; see IndexSpec)
//   end
//   relstats … end               statistics of one table, after all tables
//                                (statistics::encode_stats)
//   role <oid> <name> <flags sirdlpb> <connlimit> <verifier or -> <valid until or ->
// ---------------------------------------------------------------------------

pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        // Bytes of multi-byte characters are escaped too: pushing one as
        // a char would re-encode it.
        if b <= b' ' || b == b'%' || b >= 0x7f {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push(b as char);
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    out
}

/// Unescapes a relation-name field of the file or a WAL record: the
/// relation's schema and bare name ([`crate::namespace::split_key`]).
pub(crate) fn parse_rel_key(s: &str) -> Result<(Oid, String), String> {
    let key = unesc(s)?;
    let (ns, name) = split_key(&key);
    Ok((ns, name.to_string()))
}

pub(crate) fn unesc(s: &str) -> Result<String, String> {
    if s == "%" {
        return Ok(String::new());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = s.get(i + 1..i + 3).ok_or("bad escape")?;
            out.push(u8::from_str_radix(h, 16).map_err(|_| "bad escape")?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "invalid UTF-8".to_string())
}

/// The catalog spelling of a type: `int4`, `varchar:10`, `bpchar:22`,
/// `numeric:10,2`.
pub fn type_to_catalog(t: SqlType) -> String {
    match t {
        SqlType::Enum(o) => format!("enum:{o}"),
        SqlType::Array(pgtypes::sqltype::ArrayElem::Enum(o)) => format!("enum[]:{o}"),
        SqlType::Varchar(Some(n)) => format!("varchar:{n}"),
        SqlType::Char(n) => format!("bpchar:{n}"),
        SqlType::Numeric(Some((p, s))) => format!("numeric:{p},{s}"),
        other => other.typname().to_string(),
    }
}

/// Parses [`type_to_catalog`]'s output.
pub fn type_from_catalog(s: &str) -> Option<SqlType> {
    let (base, m) = match s.split_once(':') {
        Some((b, m)) => (b, Some(m)),
        None => (s, None),
    };
    match (base, m) {
        ("enum", Some(o)) => return Some(SqlType::Enum(o.parse().ok()?)),
        ("enum[]", Some(o)) => {
            return Some(SqlType::Array(pgtypes::sqltype::ArrayElem::Enum(
                o.parse().ok()?,
            )))
        }
        _ => {}
    }
    let t = SqlType::from_name(base)?;
    Some(match (t, m) {
        (SqlType::Varchar(_), Some(n)) => SqlType::Varchar(Some(n.parse().ok()?)),
        (SqlType::Char(_), Some(n)) => SqlType::Char(n.parse().ok()?),
        (SqlType::Numeric(_), Some(ps)) => {
            let (p, s) = ps.split_once(',')?;
            SqlType::Numeric(Some((p.parse().ok()?, s.parse().ok()?)))
        }
        (t, None) => t,
        _ => return None,
    })
}

fn encode_catalog(st: &CatalogState) -> String {
    let mut out = String::from("hotpair-catalog 2\n");
    out.push_str(&format!("next_oid {}\n", st.next_oid));
    out.push_str(&format!("lsn {}\n", st.lsn.0));
    if st.db_connlimit != -1 {
        out.push_str(&format!("database {}\n", st.db_connlimit));
    }
    let mut types: Vec<_> = st.types.values().collect();
    types.sort_by_key(|t| t.spec.oid);
    for t in types {
        push_enum_type(&mut out, &t.current_spec());
    }
    let mut functions: Vec<_> = st.functions.values().collect();
    functions.sort_by_key(|f| f.spec.oid);
    for f in functions {
        push_function(&mut out, &f.current_spec());
    }
    let mut tables: Vec<_> = st.tables.values().collect();
    tables.sort_by_key(|t| t.oid);
    for t in tables {
        out.push_str(&format!(
            "table {} {} {} {}\n",
            t.oid,
            t.rel.0,
            esc(&t.key()),
            t.creator.load(Ordering::Acquire)
        ));
        push_spec_body(&mut out, &t.spec());
        for i in t.indexes.list.read().iter() {
            push_index(&mut out, &i.spec, i.creator.load(Ordering::Acquire));
        }
        out.push_str("end\n");
    }
    let mut stats: Vec<_> = st.stats.values().collect();
    stats.sort_by_key(|s| s.oid);
    for s in stats {
        encode_stats(&mut out, s);
    }
    let mut seqs: Vec<_> = st.sequences.values().collect();
    seqs.sort_by_key(|s| s.spec.oid);
    for s in seqs {
        // The logged counter, never the in-memory one (crate::sequence).
        push_sequence(
            &mut out,
            &s.current_spec(),
            s.state.logged.load(Ordering::Acquire),
            s.state.logged_called.load(Ordering::Acquire),
            s.creator.load(Ordering::Acquire),
        );
    }
    let mut roles: Vec<_> = st.roles.values().collect();
    roles.sort_by_key(|r| r.oid);
    for r in roles {
        push_role(&mut out, r);
    }
    let mut views: Vec<_> = st.views.values().collect();
    views.sort_by_key(|v| v.spec.oid);
    for v in views {
        push_view(&mut out, &v.current_spec());
    }
    let mut schemas: Vec<_> = st.schemas.values().collect();
    schemas.sort_by_key(|s| s.spec.oid);
    for s in schemas {
        out.push_str(&schema_line(
            &s.current_spec(),
            s.creator.load(Ordering::Acquire),
        ));
    }
    for (k, c) in &st.comments {
        out.push_str(&comment_line(
            k,
            c.text.as_deref(),
            TransactionId(c.by.load(Ordering::Acquire)),
            c.previous.as_deref(),
        ));
    }
    for (k, p) in &st.privileges {
        out.push_str(&acl_line(
            k,
            p.entry.as_ref(),
            TransactionId(p.by.load(Ordering::Acquire)),
            p.previous.as_ref(),
        ));
    }
    out
}

struct Decoded {
    tables: Vec<(TableSpec, Vec<IndexSpec>)>,
    views: Vec<ViewSpec>,
    stats: Vec<RelationStats>,
    roles: Vec<RoleSpec>,
    sequences: Vec<(SequenceSpec, i64, bool)>,
    types: Vec<EnumTypeSpec>,
    functions: Vec<FunctionSpec>,
    schemas: Vec<SchemaSpec>,
    comments: Vec<crate::comment::CommentLine>,
    privileges: Vec<crate::acl::AclLine>,
    db_connlimit: i32,
    next_oid: u32,
    lsn: Lsn,
}

fn decode_catalog(text: &str) -> Result<Decoded, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, "hotpair-catalog 1" | "hotpair-catalog 2")) => {}
        _ => return Err("missing header".into()),
    }
    let mut next_oid = FIRST_USER_OID;
    let mut lsn = Lsn::INVALID;
    let mut db_connlimit = -1;
    let mut tables = Vec::new();
    let mut stats = Vec::new();
    let mut roles = Vec::new();
    let mut sequences = Vec::new();
    let mut views = Vec::new();
    let mut types = Vec::new();
    let mut functions = Vec::new();
    let mut schemas = Vec::new();
    let mut comments = Vec::new();
    let mut privileges = Vec::new();
    let mut cur: Option<(TableSpec, Vec<IndexSpec>)> = None;
    while let Some((n, line)) = lines.next() {
        let bad = |what: &str| format!("line {}: {what}", n + 1);
        let f: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| s.parse::<u32>().map_err(|_| bad("bad number"));
        match f.as_slice() {
            ["next_oid", o] => next_oid = num(o)?,
            ["lsn", l] => lsn = Lsn(l.parse::<u64>().map_err(|_| bad("bad lsn"))?),
            ["database", l] => {
                db_connlimit = l.parse::<i32>().map_err(|_| bad("bad connection limit"))?
            }
            ["table", oid, rel, name, creator] => {
                if cur.is_some() {
                    return Err(bad("table inside table"));
                }
                let (namespace, name) = parse_rel_key(name).map_err(|e| bad(&e))?;
                let mut spec = TableSpec::new(num(oid)?, &name, RelFileId(num(rel)?), Vec::new());
                spec.namespace = namespace;
                spec.creator = TransactionId(creator.parse::<u64>().map_err(|_| bad("bad xid"))?);
                cur = Some((spec, Vec::new()));
            }
            ["option" | "column" | "constraint" | "comment" | "trigger" | "altered_by"
            | "previous", ..] => {
                let t = cur
                    .as_mut()
                    .ok_or_else(|| bad("definition outside table"))?;
                if !parse_spec_line(&mut t.0, line).map_err(|e| bad(&e))? {
                    return Err(bad("unrecognized line"));
                }
            }
            ["index", oid, name, uniq, prim, cols, creator, nn, extra @ ..] => {
                let t = cur.as_mut().ok_or_else(|| bad("index outside table"))?;
                let ncols = t.0.columns.len();
                let list = |s: &str| -> Result<Vec<usize>, String> {
                    if s == "-" {
                        return Ok(Vec::new());
                    }
                    let mut v = Vec::new();
                    for c in s.split(',') {
                        let c: usize = c.parse().map_err(|_| bad("bad index column"))?;
                        if c >= ncols {
                            return Err(bad("index column out of range"));
                        }
                        v.push(c);
                    }
                    Ok(v)
                };
                let columns = key_list(cols, ncols).map_err(|e| bad(&e))?;
                let sets_not_null = list(nn)?;
                let mut spec = IndexSpec {
                    name: unesc(name).map_err(|e| bad(&e))?,
                    oid: num(oid)?,
                    columns,
                    unique: *uniq == "1",
                    primary: *prim == "1",
                    creator: TransactionId(creator.parse::<u64>().map_err(|_| bad("bad xid"))?),
                    sets_not_null,
                    ..IndexSpec::default()
                };
                parse_index_extras(&mut spec, extra, ncols).map_err(|e| bad(&e))?;
                t.1.push(spec);
            }
            ["end"] => tables.push(cur.take().ok_or_else(|| bad("end outside table"))?),
            ["relstats", ..] if cur.is_none() => {
                let mut rest = lines.by_ref().map(|(_, l)| l);
                stats.push(decode_stats(line, &mut rest).map_err(|e| bad(&e))?);
            }
            ["role", ..] => roles.push(parse_role(line).map_err(|e| bad(&e))?),
            ["view", ..] if cur.is_none() => views.push(parse_view(line).map_err(|e| bad(&e))?),
            ["enum_type", ..] if cur.is_none() => {
                types.push(parse_enum_type(line).map_err(|e| bad(&e))?)
            }
            ["function", ..] if cur.is_none() => {
                functions.push(parse_function(line).map_err(|e| bad(&e))?)
            }
            ["sequence", ..] if cur.is_none() => {
                sequences.push(parse_sequence(line).map_err(|e| bad(&e))?)
            }
            ["schema", ..] if cur.is_none() => {
                schemas.push(parse_schema(line).map_err(|e| bad(&e))?)
            }
            ["comment_on", ..] if cur.is_none() => {
                comments.push(parse_comment_line(line).map_err(|e| bad(&e))?)
            }
            ["acl_on", ..] if cur.is_none() => {
                privileges.push(parse_acl_line(line).map_err(|e| bad(&e))?)
            }
            [""] => {}
            _ => return Err(bad("unrecognized line")),
        }
    }
    if cur.is_some() {
        return Err("truncated file".into());
    }
    Ok(Decoded {
        tables,
        views,
        stats,
        roles,
        sequences,
        types,
        functions,
        schemas,
        comments,
        privileges,
        db_connlimit,
        next_oid,
        lsn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, oid: u32) -> TableSpec {
        TableSpec {
            constraints: vec![ConstraintSpec {
                name: "c 1".into(),
                kind: ConstraintKind::ForeignKey,
                columns: vec![0, 1],
                check: None,
                index: None,
                foreign: Some(ForeignKeySpec {
                    table: 16400,
                    columns: vec![2, 0],
                    on_delete: FkAction::Cascade,
                    on_update: FkAction::SetDefault,
                }),
                deferrable: true,
                initially_deferred: false,
                not_valid: false,
                match_full: false,
            }],
            altered_by: TransactionId::INVALID,
            previous: None,
            comments: vec![(0, "a table".into()), (2, "its %\n second".into())],
            triggers: vec![crate::pg_trigger::TriggerSpec {
                oid: 16500,
                name: "tg 1".into(),
                func: 16390,
                tgtype: crate::pg_trigger::TRIGGER_TYPE_ROW
                    | crate::pg_trigger::TRIGGER_TYPE_INSERT,
                enabled: b'D',
                columns: vec![1],
                args: vec!["x".into()],
                when: None,
                old_table: None,
                new_table: None,
                constraint: None,
            }],
            oid,
            name: name.into(),
            namespace: PUBLIC_NAMESPACE,
            rel: RelFileId(oid),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: SqlType::Int4,
                    not_null: true,
                    default: None,
                    dropped: false,
                    missing: None,
                    identity: Some('a'),
                },
                ColumnDef {
                    name: "odd name\n%".into(),
                    ty: SqlType::Varchar(Some(10)),
                    not_null: false,
                    default: Some("'a b'".into()),
                    dropped: false,
                    missing: Some("x y".into()),
                    identity: None,
                },
                ColumnDef {
                    name: "c".into(),
                    ty: SqlType::Char(22),
                    not_null: false,
                    default: None,
                    dropped: false,
                    missing: None,
                    identity: None,
                },
                ColumnDef {
                    name: "n".into(),
                    ty: SqlType::Numeric(Some((10, 2))),
                    not_null: false,
                    default: Some("".into()),
                    dropped: true,
                    missing: None,
                    identity: None,
                },
            ],
            options: vec![("fillfactor".into(), "100".into())],
            creator: TransactionId::INVALID,
        }
    }

    #[test]
    fn roles_persist_and_replay() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        let mut r = RoleSpec::new(BOOTSTRAP_SUPERUSER_OID, "postgres");
        r.superuser = true;
        r.login = true;
        r.password = Some("SCRAM-SHA-256$4096:c2FsdA==$a b:%c".into());
        r.valid_until = Some(-5);
        c.apply_catalog_change(&CatalogChange::CreateRole(r.clone()))
            .unwrap();
        let dup = c.apply_catalog_change(&CatalogChange::CreateRole(r.clone()));
        assert_eq!(dup.unwrap_err().code, sqlstate::DUPLICATE_OBJECT);
        let mut r2 = RoleSpec::new(16400, "odd name");
        r2.connlimit = 3;
        let change = CatalogChange::CreateRole(r2.clone());
        assert_eq!(decode_change(&encode_change(&change)).unwrap(), change);
        c.apply_catalog_change(&change).unwrap();
        let alter = CatalogChange::AlterRole {
            old_name: "odd name".into(),
            spec: RoleSpec {
                name: "renamed".into(),
                ..r2
            },
        };
        assert_eq!(decode_change(&encode_change(&alter)).unwrap(), alter);
        c.apply_catalog_change(&alter).unwrap();
        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        assert_eq!(*c2.role("postgres").unwrap(), r);
        assert!(c2.role("odd name").is_none());
        assert_eq!(c2.role("renamed").unwrap().connlimit, 3);
        c2.apply_catalog_change(&CatalogChange::DropRole {
            name: "renamed".into(),
        })
        .unwrap();
        let gone = c2.apply_catalog_change(&CatalogChange::DropRole {
            name: "renamed".into(),
        });
        assert_eq!(gone.unwrap_err().code, sqlstate::UNDEFINED_OBJECT);
        assert_eq!(c2.roles().len(), 1);
    }

    #[test]
    fn database_connlimit_persists_and_replays() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        assert_eq!(c.database_connlimit(), -1);
        let change = CatalogChange::AlterDatabase { connlimit: 7 };
        assert_eq!(decode_change(&encode_change(&change)).unwrap(), change);
        c.apply_catalog_change(&change).unwrap();
        let bad = c.apply_catalog_change(&CatalogChange::AlterDatabase { connlimit: -2 });
        assert_eq!(bad.unwrap_err().code, sqlstate::INVALID_PARAMETER_VALUE);
        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        assert_eq!(c2.database_connlimit(), 7);
        // Redo on a catalog that has not seen it (a standby).
        let dir3 = tempfile::tempdir().unwrap();
        let c3 = Catalog::open(dir3.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        c3.redo_catalog_change(Lsn(100), &encode_change(&change))
            .unwrap();
        assert_eq!(c3.database_connlimit(), 7);
        c3.redo_catalog_change(
            Lsn(200),
            &encode_change(&CatalogChange::AlterDatabase { connlimit: -1 }),
        )
        .unwrap();
        let c4 = Catalog::open(dir3.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        assert_eq!(c4.database_connlimit(), -1);
    }

    #[test]
    fn expression_index_persists_and_replays() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        c.apply_catalog_change(&CatalogChange::CreateTable(spec("t", 16384)))
            .unwrap();
        let ix = IndexSpec {
            name: "t_lower".into(),
            oid: 16385,
            columns: vec![EXPR_KEY, 0],
            exprs: vec!["lower(\"#1\" || ' %x')".into()],
            predicate: Some("\"#2\" IS NULL".into()),
            expr_columns: vec![1, 2],
            options: vec![3, 0],
            unique: true,
            creator: TransactionId(7),
            ..IndexSpec::default()
        };
        let change = CatalogChange::CreateIndex {
            table: "t".into(),
            spec: ix.clone(),
        };
        match decode_change(&encode_change(&change)).unwrap() {
            CatalogChange::CreateIndex { spec, .. } => assert_eq!(spec, ix),
            other => panic!("decoded {other:?}"),
        }
        c.apply_catalog_change(&change).unwrap();
        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        let t = c2.table("t").unwrap();
        let l = t.indexes.list();
        assert_eq!(l[0].spec, ix);
        assert!(!l[0].spec.is_plain() && l[0].spec.uses_column(2));
        // An expression key without its text is refused.
        let bad = CatalogChange::CreateIndex {
            table: "t".into(),
            spec: IndexSpec {
                name: "t_bad".into(),
                oid: 16386,
                columns: vec![EXPR_KEY],
                ..IndexSpec::default()
            },
        };
        assert!(c2.apply_catalog_change(&bad).is_err());
    }

    #[test]
    fn persist_and_reload() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        assert!(c.tables().is_empty());
        let v0 = c.version();
        c.apply_catalog_change(&CatalogChange::CreateTable(spec("t", 16384)))
            .unwrap();
        let ix = c
            .apply_catalog_change(&CatalogChange::CreateIndex {
                table: "t".into(),
                spec: IndexSpec {
                    name: "t_pkey".into(),
                    oid: 16385,
                    columns: vec![0],
                    unique: true,
                    primary: true,
                    creator: TransactionId(7),
                    sets_not_null: vec![0],
                    ..IndexSpec::default()
                },
            })
            .unwrap()
            .unwrap();
        assert!(!ix.is_ready());
        c.apply_catalog_change(&CatalogChange::CreateTable(spec("u v", 16386)))
            .unwrap();
        c.apply_catalog_change(&CatalogChange::SetNotNull {
            table: "t".into(),
            columns: vec![2],
        })
        .unwrap();
        assert!(c.version() > v0);
        let e = c
            .apply_catalog_change(&CatalogChange::CreateTable(spec("t", 1)))
            .unwrap_err();
        assert_eq!(e.code, sqlstate::DUPLICATE_TABLE);
        let old = c.table("u v").unwrap();
        c.apply_catalog_change(&CatalogChange::DropTable { name: "u v".into() })
            .unwrap();
        assert!(old.check_not_dropped().is_err());

        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        let t = c2.table("t").unwrap();
        assert_eq!(t.columns, {
            let mut cols = spec("t", 16384).columns;
            cols[2].not_null = true;
            cols
        });
        assert_eq!(
            t.options,
            vec![("fillfactor".to_string(), "100".to_string())]
        );
        let pk = t.primary_key().unwrap();
        assert_eq!(pk.spec.name, "t_pkey");
        assert!(pk.is_ready());
        assert!(c2.get("u v").is_none());
        assert!(c2.allocate_oid() >= 16387);
    }

    #[test]
    fn alter_and_sequences_persist_and_replay() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        c.apply_catalog_change(&CatalogChange::CreateTable(spec("t", 16384)))
            .unwrap();
        // An uncommitted ALTER: renamed, a column added with a missing value.
        let before = c.table("t").unwrap().spec();
        let mut new = before.clone();
        new.name = "u".into();
        let mut col = ColumnDef::new("e", SqlType::Int4);
        col.missing = Some("7".into());
        new.columns.push(col);
        new.altered_by = TransactionId(42);
        new.previous = Some(Box::new(before.clone()));
        let change = CatalogChange::AlterTable {
            name: "t".into(),
            spec: new.clone(),
        };
        assert_eq!(decode_change(&encode_change(&change)).unwrap(), change);
        c.apply_catalog_change(&change).unwrap();
        assert!(c.get("t").is_none());
        assert_eq!(c.renamed_from("t").unwrap().name, "u");
        let seq = SequenceSpec::new(16390, "s q", SqlType::Int4);
        let create = CatalogChange::CreateSequence(seq.clone());
        assert_eq!(decode_change(&encode_change(&create)).unwrap(), create);
        c.apply_catalog_change(&create).unwrap();
        let set = CatalogChange::SetSequence {
            name: "s q".into(),
            value: 33,
            called: true,
        };
        assert_eq!(decode_change(&encode_change(&set)).unwrap(), set);
        c.apply_catalog_change(&set).unwrap();
        let mut altered = seq.clone();
        altered.increment = -3;
        altered.min = -50;
        altered.cycle = true;
        altered.owned_by = Some(("t".into(), "a b".into()));
        let alter = CatalogChange::AlterSequence {
            name: "s q".into(),
            spec: altered.clone(),
            value: 40,
            called: false,
        };
        assert_eq!(decode_change(&encode_change(&alter)).unwrap(), alter);
        // An uncommitted ALTER carries its xid and the def before it.
        let mut marked = altered.clone();
        marked.altered_by = TransactionId(77);
        marked.previous = Some(Box::new(SequencePrevious {
            spec: seq.clone(),
            counter: Some((9, true)),
        }));
        let marked = CatalogChange::AlterSequence {
            name: "s q".into(),
            spec: marked,
            value: 40,
            called: false,
        };
        assert_eq!(decode_change(&encode_change(&marked)).unwrap(), marked);
        let old_def = c.sequence("s q").unwrap();
        c.apply_catalog_change(&alter).unwrap();
        assert!(old_def.is_retired(), "the replaced definition is retired");
        assert_eq!(c.sequence("s q").unwrap().spec, altered);
        c.apply_catalog_change(&CatalogChange::AlterSequence {
            name: "s q".into(),
            spec: seq.clone(),
            value: 40,
            called: false,
        })
        .unwrap();
        c.apply_catalog_change(&set).unwrap();
        // Handed out in memory only: the file keeps the logged value.
        c.sequence("s q")
            .unwrap()
            .state
            .last_value
            .store(5, Ordering::Release);

        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        let u = c2.table("u").unwrap();
        assert_eq!(u.spec(), new);
        assert_eq!(u.previous.as_ref().unwrap().name, "t");
        let s = c2.sequence("s q").unwrap();
        assert_eq!(s.spec, seq);
        assert_eq!(s.state.last_value.load(Ordering::Acquire), 33);
        // Undo: back to the definition before, the added column kept as a
        // dropped one.
        c2.apply_catalog_change(&CatalogChange::AlterTable {
            name: "u".into(),
            spec: before,
        })
        .unwrap();
        let t = c2.table("t").unwrap();
        assert_eq!(t.columns.len(), 5);
        assert!(t.columns[4].dropped);
        assert_eq!(t.column_index("e"), None);
        assert_eq!(t.altered_by.load(Ordering::Acquire), 0);
    }

    #[test]
    fn rewrite_has_its_own_indexes_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let c = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        c.apply_catalog_change(&CatalogChange::CreateTable(spec("t", 16384)))
            .unwrap();
        let ix = IndexSpec {
            name: "t_pkey".into(),
            oid: 16385,
            columns: vec![0],
            unique: true,
            primary: true,
            ..IndexSpec::default()
        };
        c.apply_catalog_change(&CatalogChange::CreateIndex {
            table: "t".into(),
            spec: ix.clone(),
        })
        .unwrap()
        .unwrap()
        .set_ready();
        let old = c.table("t").unwrap();
        let old_set = old.indexes.clone();
        // An uncommitted rewrite: new file, new column type.
        let before = old.spec();
        let mut new = before.clone();
        new.rel = RelFileId(16500);
        new.columns[0].ty = SqlType::Int8;
        new.altered_by = TransactionId(42);
        new.previous = Some(Box::new(before.clone()));
        c.apply_catalog_change(&CatalogChange::AlterTable {
            name: "t".into(),
            spec: new.clone(),
        })
        .unwrap();
        let t = c.table("t").unwrap();
        assert!(!Arc::ptr_eq(&t.indexes, &old_set), "the new file's own set");
        let copies = t.indexes.list();
        assert_eq!(copies.len(), 1);
        assert_eq!(copies[0].spec, ix);
        assert!(!copies[0].is_ready(), "filled by the rewrite");
        let prev = t.previous.as_ref().unwrap();
        assert!(
            Arc::ptr_eq(&prev.indexes, &old_set),
            "previous keeps its set"
        );
        // Each file maps to its own version.
        assert_eq!(
            c.by_rel(RelFileId(16500)).unwrap().columns[0].ty,
            SqlType::Int8
        );
        assert_eq!(
            c.by_rel(RelFileId(16384)).unwrap().columns[0].ty,
            SqlType::Int4
        );
        // Reloaded: both versions, each with its own copy of the index.
        let c2 = Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).unwrap();
        let t2 = c2.table("t").unwrap();
        let p2 = t2.previous.as_ref().unwrap();
        assert_eq!(t2.rel, RelFileId(16500));
        assert_eq!(p2.rel, RelFileId(16384));
        assert!(!Arc::ptr_eq(&t2.indexes, &p2.indexes));
        assert_eq!(p2.indexes.list()[0].spec, ix);
        assert_eq!(t2.indexes.list()[0].spec, ix);
        // Undo: back to the old file and its untouched index set.
        c.apply_catalog_change(&CatalogChange::AlterTable {
            name: "t".into(),
            spec: before,
        })
        .unwrap();
        let back = c.table("t").unwrap();
        assert_eq!(back.rel, RelFileId(16384));
        assert!(Arc::ptr_eq(&back.indexes, &old_set));
        assert!(back.indexes.list()[0].is_ready());
    }

    #[test]
    fn corrupt_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("global")).unwrap();
        for bad in [
            "",
            "hotpair-catalog 1\ntable x",
            "hotpair-catalog 1\ntable 1 1 t 0\ncolumn a nosuchtype 0 -\nend\n",
            "hotpair-catalog 1\ntable 1 1 t 0\nindex 2 i 1 1 5 0 -\nend\n",
            "\u{0}\u{1}",
        ] {
            fs::write(dir.path().join("global/catalog"), bad).unwrap();
            assert!(
                Catalog::open(dir.path(), Arc::new(XLog::with_settings(true, true))).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn type_spelling_round_trips() {
        for t in [
            SqlType::Int2,
            SqlType::Int4,
            SqlType::Int8,
            SqlType::Float8,
            SqlType::Text,
            SqlType::Bool,
            SqlType::Varchar(None),
            SqlType::Varchar(Some(3)),
            SqlType::Char(1),
            SqlType::Char(0),
            SqlType::Numeric(None),
            SqlType::Numeric(Some((5, 1))),
            SqlType::Timestamp,
            SqlType::TimestampTz,
        ] {
            assert_eq!(type_from_catalog(&type_to_catalog(t)), Some(t), "{t:?}");
        }
    }

    #[test]
    fn rel_lock_prefers_readers() {
        let l = RelLock::default();
        let cancel = AtomicBool::new(false);
        let a = l.shared();
        let b = l.shared();
        drop(a);
        drop(b);
        let x = l.exclusive(&cancel).unwrap();
        drop(x);
        let _c = l.shared();
        cancel.store(true, Ordering::Relaxed);
        assert!(l.exclusive(&cancel).is_err());
        // The canceled exclusive attempt must not block readers.
        let _d = l.shared();
    }

    /// A thread holding the lock shared takes it again while a TRUNCATE
    /// waits for it (which waits for that thread); another thread queues
    /// behind the TRUNCATE.
    #[test]
    fn rel_lock_reenters_past_a_waiting_exclusive() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let l = Arc::new(RelLock::default());
        // The statement's thread: takes the lock, then again on request.
        let (took_tx, took_rx) = channel();
        let (go_tx, go_rx) = channel::<()>();
        let (done_tx, done_rx) = channel();
        let reader = {
            let l = l.clone();
            std::thread::spawn(move || {
                let first = l.shared();
                took_tx.send(()).ok();
                go_rx.recv().ok();
                let second = l.shared(); // waited for ever before re-entry
                let balanced =
                    HELD_SHARED.with(|h| h.borrow().clone()) == vec![(Arc::as_ptr(&l) as usize, 2)];
                drop(second);
                drop(first);
                let empty = HELD_SHARED.with(|h| h.borrow().is_empty());
                done_tx.send(balanced && empty).ok();
            })
        };
        took_rx.recv().expect("first shared");
        let w = {
            let l = l.clone();
            std::thread::spawn(move || l.exclusive(&AtomicBool::new(false)).map(|_| ()))
        };
        // Wait until the exclusive request is queued.
        while !l.state.lock().1 {
            std::thread::yield_now();
        }
        go_tx.send(()).ok();
        let counted = done_rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the second shared lock of the same thread did not wait");
        assert!(counted, "per-thread counts: 2 while held, none after");
        reader.join().expect("reader");
        assert!(w.join().expect("exclusive").is_ok());
        // Another thread queues behind a waiting exclusive.
        let _first = l.shared();
        let w = {
            let l = l.clone();
            std::thread::spawn(move || l.exclusive(&AtomicBool::new(false)).map(|_| ()))
        };
        while !l.state.lock().1 {
            std::thread::yield_now();
        }
        let (tx, rx) = channel();
        let other = {
            let l = l.clone();
            std::thread::spawn(move || {
                let _s = l.shared();
                tx.send(()).ok();
            })
        };
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "a new reader waits behind the exclusive request"
        );
        drop(_first);
        assert!(w.join().expect("exclusive").is_ok());
        rx.recv().expect("then the reader");
        other.join().expect("other");
    }
}
