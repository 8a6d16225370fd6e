//! DDL: CREATE / DROP TABLE (with constraints and serial columns),
//! TRUNCATE, CREATE [UNIQUE] INDEX, CREATE / DROP SEQUENCE — and index
//! builds. ALTER TABLE and CHECK constraints are `crate::tablecmds`,
//! sequences `crate::sequence`; both record their undo here, in
//! [`PendingDdl`].
//!
//! Every catalog change goes through `Catalog::apply_catalog_change`.
//! Storage side effects (create / truncate / drop of relation files) happen
//! next to it, under the table's exclusive relation lock for TRUNCATE and
//! DROP. Creations are marked with the creating xid and listed as
//! [`PendingDdl`]: the session keeps or undoes them when the
//! (sub)transaction ends, and `engine::indexing::resolve_uncommitted_ddl`
//! removes those a
//! crash interrupted. A TRUNCATE run here (outside a block, or of a table
//! with no rows of anyone else) cannot be rolled back; the session routes
//! the other TRUNCATEs and DROP TABLEs of a block around this module.
//!
//! Index build (CREATE INDEX, ADD PRIMARY KEY): the index is published
//! first (empty, not ready — writers start adding entries for their new
//! rows), then the heap is scanned with `scan_all` adding every version.
//! The build holds `Heap::index_build` from before it publishes the index
//! until the index holds its entries: pruning frees no line pointer
//! meanwhile (a slot the scan saw as a version must not name another row
//! when the entry lands). A unique build then checks each key held by more than one version with
//! SnapshotDirty, waiting for in-progress transactions, and fails with
//! 23505 "could not create unique index" (the index is removed again).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sqlparser::ast;

use crate::executor::Vis;
use crate::planner::{ident_name, object_name};
use engine::catalog::{CatalogChange, ColumnDef, IndexDef, IndexSpec, TableDef, TableSpec};
use engine::indexing::{drop_table, index_key, remove_index, truncate_table};
use engine::xact::Xact;
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::{ItemPointer, RelFileId, TransactionId};
use storage::heapam::DirtyState;
use txn::lmgr::WaitLimits;

/// What DDL needs from the session.
pub struct DdlCtx<'a> {
    /// The node.
    pub db: &'a Engine,
    /// The session's transaction (waits during unique builds).
    pub xact: &'a mut Xact,
    /// CancelRequest flag.
    pub cancel: &'a AtomicBool,
    /// Relations created or truncated in the current transaction (COPY
    /// FREEZE is allowed into them).
    pub created: &'a mut HashSet<RelFileId>,
    /// Notices to send.
    pub notices: Vec<PgError>,
    /// statement_timeout / lock_timeout for row waits.
    pub limits: WaitLimits,
    /// What the statement created, to keep or undo when its
    /// (sub)transaction ends — filled even when the statement then fails
    /// (the session adds it to its [`PendingDdl`] list either way).
    pub pending: Vec<PendingDdl>,
    /// Views whose DROP this transaction has made (pending until COMMIT):
    /// no longer dependents of anything, no longer droppable.
    pub dropping_views: Vec<pgtypes::Oid>,
    /// Tables whose DROP this transaction has made (pending until COMMIT):
    /// their triggers no longer use their functions.
    pub dropping_tables: Vec<pgtypes::Oid>,
    /// The session's resolved search path (`crate::namespace`).
    pub path: &'a [pgtypes::Oid],
    /// The current role (the owner of what CREATE SCHEMA makes).
    pub user: &'a str,
    /// The session user (`SESSION_USER` in `OWNER TO`).
    pub session_user: &'a str,
}

impl DdlCtx<'_> {
    /// The catalog as this session sees it: tables other transactions
    /// created and have not committed do not exist; unqualified names
    /// resolve along the search path.
    pub(crate) fn catalog(&self) -> engine::catalog::CatalogView<'_> {
        self.db
            .catalog()
            .view(self.xact.own().xids, self.db.clog())
            .with_path(self.path)
    }

    /// The table `n` names as this session sees it.
    pub(crate) fn find(&self, n: &ast::ObjectName) -> PgResult<Option<Arc<TableDef>>> {
        Ok(crate::namespace::find_table(
            &self.catalog(),
            &crate::namespace::QualName::of(n)?,
        ))
    }

    /// The table `n` names, or 42P01.
    pub(crate) fn table(&self, n: &ast::ObjectName) -> PgResult<Arc<TableDef>> {
        crate::namespace::table(&self.catalog(), &crate::namespace::QualName::of(n)?)
    }
}

/// DDL whose outcome is decided when its (sub)transaction ends: the one
/// mechanism for "DDL decided at transaction end". The session keeps a
/// [`PendingDdlList`]; see docs/architecture/sql.md, "Transactional DDL".
pub enum PendingDdl {
    /// DROP TABLE inside a block of a table from before the transaction:
    /// carried out at COMMIT, forgotten at ROLLBACK.
    Drop(Arc<TableDef>),
    /// CREATE TABLE (with the indexes of its constraints): kept at COMMIT,
    /// dropped at ROLLBACK.
    CreateTable(Arc<TableDef>),
    /// CREATE INDEX / ADD PRIMARY KEY / ADD UNIQUE: kept at COMMIT; at
    /// ROLLBACK the index goes, and so does the NOT NULL a primary key set
    /// (`IndexSpec::sets_not_null`).
    CreateIndex {
        /// The indexed table.
        table: Arc<TableDef>,
        /// The index.
        index: Arc<IndexDef>,
    },
    /// ALTER COLUMN … TYPE wrote the table's rows into the new heap file
    /// `new_rel` (`crate::tablerewrite`; listed before the `Alter` that
    /// switches to it, so a ROLLBACK switches back first): at COMMIT the
    /// old file `old_rel` goes, at ROLLBACK the new one.
    Rewrite {
        /// The table's OID.
        oid: pgtypes::Oid,
        /// The heap file the rows were read from.
        old_rel: RelFileId,
        /// The heap file the converted rows were written to.
        new_rel: RelFileId,
        /// This rewrite set `TableDef::rewriting` (the first of its
        /// transaction): it clears it.
        marked: bool,
    },
    /// ALTER TABLE (one action): at COMMIT the new definition loses its
    /// uncommitted mark; at ROLLBACK `before` is applied again
    /// (`crate::tablecmds`).
    Alter {
        /// The table's OID (its name may have changed).
        oid: pgtypes::Oid,
        /// The definition before the action.
        before: TableSpec,
    },
    /// CREATE SEQUENCE (or a serial column's): kept at COMMIT, dropped at
    /// ROLLBACK.
    CreateSequence(String),
    /// DROP SEQUENCE: carried out at COMMIT.
    DropSequence(String),
    /// ALTER SEQUENCE: at COMMIT the new definition loses its uncommitted
    /// mark; at ROLLBACK `before` is applied again, with `counter` if the
    /// ALTER replaced the counter (`crate::sequence`).
    AlterSequence {
        /// The sequence's OID (its name may have changed).
        oid: pgtypes::Oid,
        /// The definition before the ALTER (marks included).
        before: engine::sequence::SequenceSpec,
        /// The counter before the ALTER, if it replaced the counter.
        counter: Option<(i64, bool)>,
    },
    /// An index whose key column or constraint ALTER TABLE dropped: removed
    /// at COMMIT, kept (complete) at ROLLBACK.
    DropIndex {
        /// The table's OID.
        oid: pgtypes::Oid,
        /// The index name.
        index: String,
    },
    /// CREATE VIEW (by OID: a RENAME may follow): kept at COMMIT, dropped
    /// at ROLLBACK.
    CreateView(pgtypes::Oid),
    /// CREATE OR REPLACE VIEW / RENAME: at COMMIT the mark goes; at
    /// ROLLBACK `before` is put back.
    AlterView {
        /// The view's OID.
        oid: pgtypes::Oid,
        /// The definition before the change.
        before: engine::view::ViewSpec,
    },
    /// DROP VIEW of a view from before the transaction: at COMMIT.
    DropView(pgtypes::Oid),
    /// CREATE TYPE (by OID): the mark goes at COMMIT, the type at
    /// ROLLBACK (`crate::typecmds`).
    CreateType(pgtypes::Oid),
    /// ALTER TYPE: at ROLLBACK `before` is put back.
    AlterType {
        /// The type's OID.
        oid: pgtypes::Oid,
        /// The definition before the change.
        before: engine::pg_enum::EnumTypeSpec,
    },
    /// DROP TYPE (done at once): at ROLLBACK the type comes back.
    DropType(engine::pg_enum::EnumTypeSpec),
    /// CREATE FUNCTION (by OID): the mark goes at COMMIT, the function at
    /// ROLLBACK (`crate::functioncmds`).
    CreateFunction(pgtypes::Oid),
    /// CREATE OR REPLACE of an existing function: at ROLLBACK the
    /// definition before comes back.
    ReplaceFunction(Box<engine::pg_proc::FunctionSpec>),
    /// DROP FUNCTION (done at once): at ROLLBACK the function comes back.
    DropFunction(Box<engine::pg_proc::FunctionSpec>),
    /// CREATE SCHEMA (by name): kept at COMMIT, dropped at ROLLBACK.
    CreateSchema(String),
    /// DROP SCHEMA (by name; its contents' drops are queued before it):
    /// at COMMIT.
    DropSchema(String),
    /// ALTER SCHEMA (RENAME, OWNER TO): at COMMIT the mark goes; at
    /// ROLLBACK `before` is put back (`crate::schemacmds`).
    AlterSchema {
        /// The schema's OID.
        oid: pgtypes::Oid,
        /// The row before the change (marks included).
        before: engine::namespace::SchemaSpec,
    },
    /// GRANT / REVOKE / OWNER TO: at COMMIT the mark goes, at ROLLBACK the
    /// entry is put back as `before` (`crate::aclchk`).
    Privileges {
        /// The object.
        key: engine::comment::CommentKey,
        /// The entry before the change.
        before: crate::aclchk::PrivBefore,
    },
    /// COMMENT ON an object of the comment map: at COMMIT the mark goes,
    /// at ROLLBACK the entry is put back as `before` (`crate::comment`).
    Comment {
        /// The object.
        key: engine::comment::CommentKey,
        /// The entry before the change.
        before: crate::comment::CommentBefore,
    },
}

impl PendingDdl {
    /// The transaction committed: drops happen, creations become
    /// everyone's (the creator mark is cleared; the clog says the same to
    /// anyone who looks before this runs, and to start-up after a crash).
    fn commit(self, db: &Engine) {
        match self {
            PendingDdl::Comment { key, .. } => crate::comment::commit_pending(db, &key),
            PendingDdl::Privileges { key, .. } => crate::aclchk::commit_pending(db, &key),
            PendingDdl::CreateSchema(name) => {
                if let Some(s) = db.catalog().schema(&name) {
                    s.creator.store(0, Ordering::Release);
                }
            }
            PendingDdl::AlterSchema { oid, .. } => crate::schemacmds::commit_pending(db, oid),
            PendingDdl::DropSchema(name) => {
                if let Err(e) = db
                    .catalog()
                    .apply_catalog_change(&CatalogChange::DropSchema { name: name.clone() })
                {
                    tracing::warn!("could not drop schema \"{name}\" at commit: {}", e.message);
                }
            }
            PendingDdl::CreateView(_) | PendingDdl::AlterView { .. } | PendingDdl::DropView(_) => {
                crate::view::commit_pending(db, &self)
            }
            PendingDdl::CreateType(_) | PendingDdl::AlterType { .. } | PendingDdl::DropType(_) => {
                crate::typecmds::commit_pending(db, &self)
            }
            PendingDdl::CreateFunction(_)
            | PendingDdl::ReplaceFunction(_)
            | PendingDdl::DropFunction(_) => crate::functioncmds::commit_pending(db, &self),
            PendingDdl::Drop(t) => {
                // PostgreSQL removes the relation files at commit too. A
                // crash before this point leaves the table in place: never
                // data lost, at worst a table to drop again.
                if let Err(e) = drop_table(db, &t, &AtomicBool::new(false)) {
                    tracing::warn!("could not drop \"{}\" at commit: {}", t.name, e.message);
                }
            }
            PendingDdl::CreateTable(t) => {
                t.creator.store(0, Ordering::Release);
                for ix in t.indexes.list() {
                    ix.creator.store(0, Ordering::Release);
                }
            }
            PendingDdl::CreateIndex { index, .. } => index.creator.store(0, Ordering::Release),
            PendingDdl::Rewrite { .. } => crate::tablerewrite::commit_pending(db, self),
            PendingDdl::Alter { oid, .. } => {
                if let Some(t) = db.catalog().by_oid(oid) {
                    t.altered_by.store(0, Ordering::Release);
                }
            }
            PendingDdl::CreateSequence(name) => {
                if let Some(s) = db.catalog().sequence(&name) {
                    s.creator.store(0, Ordering::Release);
                }
            }
            PendingDdl::DropSequence(name) => {
                if db.catalog().sequence(&name).is_some() {
                    if let Err(e) = db
                        .catalog()
                        .apply_catalog_change(&CatalogChange::DropSequence { name: name.clone() })
                    {
                        tracing::warn!(
                            "could not drop sequence \"{name}\" at commit: {}",
                            e.message
                        );
                    }
                }
            }
            PendingDdl::AlterSequence { .. } => crate::sequence::commit_pending(db, self),
            PendingDdl::DropIndex { oid, index } => {
                let Some(t) = db.catalog().by_oid(oid) else {
                    return;
                };
                let Some(ix) = t.indexes.list().into_iter().find(|i| i.spec.name == index) else {
                    return;
                };
                let r = db
                    .catalog()
                    .apply_catalog_change(&CatalogChange::DropIndex {
                        table: t.key(),
                        name: index.clone(),
                    });
                match r {
                    Ok(_) => ix.index.clear(),
                    Err(e) => {
                        tracing::warn!("could not drop index \"{index}\" at commit: {}", e.message)
                    }
                }
            }
        }
    }

    /// The (sub)transaction rolled back: creations are removed (catalog
    /// entry and files, WAL-logged, so a standby follows), drops forgotten.
    fn abort(self, db: &Engine) {
        match self {
            PendingDdl::DropSchema(_) => {}
            PendingDdl::AlterSchema { oid, before } => {
                crate::schemacmds::abort_pending(db, oid, before)
            }
            PendingDdl::Comment { key, before } => crate::comment::abort_pending(db, key, before),
            PendingDdl::Privileges { key, before } => crate::aclchk::abort_pending(db, key, before),
            PendingDdl::CreateSchema(name) => {
                if let Err(e) = db
                    .catalog()
                    .apply_catalog_change(&CatalogChange::DropSchema { name: name.clone() })
                {
                    tracing::warn!(
                        "could not remove schema \"{name}\" after its creation rolled back: {}",
                        e.message
                    );
                }
            }
            PendingDdl::CreateView(_) | PendingDdl::AlterView { .. } => {
                crate::view::abort_pending(db, self)
            }
            PendingDdl::DropView(_) => {}
            PendingDdl::CreateType(_) | PendingDdl::AlterType { .. } | PendingDdl::DropType(_) => {
                crate::typecmds::abort_pending(db, self)
            }
            PendingDdl::CreateFunction(_)
            | PendingDdl::ReplaceFunction(_)
            | PendingDdl::DropFunction(_) => crate::functioncmds::abort_pending(db, self),
            PendingDdl::Drop(_) => {}
            PendingDdl::CreateTable(t) => {
                if let Err(e) = drop_table(db, &t, &AtomicBool::new(false)) {
                    tracing::warn!(
                        "could not remove \"{}\" after its creation rolled back: {}",
                        t.name,
                        e.message
                    );
                }
            }
            PendingDdl::DropIndex { .. } | PendingDdl::DropSequence(_) => {}
            PendingDdl::AlterSequence { .. } => crate::sequence::abort_pending(db, self),
            PendingDdl::CreateSequence(name) => {
                if db.catalog().sequence(&name).is_some() {
                    if let Err(e) = db
                        .catalog()
                        .apply_catalog_change(&CatalogChange::DropSequence { name: name.clone() })
                    {
                        tracing::warn!(
                            "could not remove sequence \"{name}\" after its creation rolled back: {}",
                            e.message
                        );
                    }
                }
            }
            PendingDdl::Rewrite { .. } => crate::tablerewrite::abort_pending(db, self),
            PendingDdl::Alter { oid, before } => {
                let Some(t) = db.catalog().by_oid(oid) else {
                    return;
                };
                let r = db
                    .catalog()
                    .apply_catalog_change(&CatalogChange::AlterTable {
                        name: t.key(),
                        spec: before,
                    });
                if let Err(e) = r {
                    tracing::warn!(
                        "could not undo ALTER TABLE \"{}\" after its rollback: {}",
                        t.name,
                        e.message
                    );
                }
            }
            PendingDdl::CreateIndex { table, index } => {
                if table.dropped.load(Ordering::Acquire) {
                    return;
                }
                if let Err(e) = remove_index(db, &table.key(), &index) {
                    tracing::warn!(
                        "could not remove index \"{}\" after its creation rolled back: {}",
                        index.spec.name,
                        e.message
                    );
                }
            }
        }
    }
}

/// A session's pending DDL, each entry with the subtransaction depth
/// (`Xact::nesting_depth`) of the statement that made it.
#[derive(Default)]
pub struct PendingDdlList {
    items: Vec<(PendingDdl, usize)>,
}

impl PendingDdlList {
    /// Adds what a statement at `depth` did.
    pub fn push(&mut self, p: PendingDdl, depth: usize) {
        self.items.push((p, depth));
    }

    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The views with a pending DROP.
    pub fn dropped_views(&self) -> Vec<pgtypes::Oid> {
        self.items
            .iter()
            .filter_map(|(p, _)| match p {
                PendingDdl::DropView(o) => Some(*o),
                _ => None,
            })
            .collect()
    }

    /// The OIDs of the tables with a pending DROP.
    pub fn dropped_tables(&self) -> Vec<pgtypes::Oid> {
        self.items
            .iter()
            .filter_map(|(p, _)| match p {
                PendingDdl::Drop(t) => Some(t.oid),
                _ => None,
            })
            .collect()
    }

    /// True if `name` has a pending DROP.
    pub fn drops(&self, key: &str) -> bool {
        self.drop_of(key).is_some()
    }

    /// Where the pending DROP of the table with key `key` is in the list.
    fn drop_of(&self, key: &str) -> Option<usize> {
        self.items
            .iter()
            .position(|(p, _)| matches!(p, PendingDdl::Drop(t) if t.key() == key))
    }

    /// Takes the pending DROP of the table with key `key` out of the list.
    pub fn take_drop(&mut self, name: &str) -> Option<Arc<TableDef>> {
        let i = self.drop_of(name)?;
        match self.items.remove(i).0 {
            PendingDdl::Drop(t) => Some(t),
            _ => None,
        }
    }

    /// RELEASE: what the released savepoints did now belongs to the
    /// enclosing level `depth`.
    pub fn release(&mut self, depth: usize) {
        for d in self.items.iter_mut() {
            d.1 = d.1.min(depth);
        }
    }

    /// ROLLBACK TO: the savepoint stays open at `depth`; what was done at
    /// that depth or deeper is undone, newest first.
    pub fn rollback_to(&mut self, db: &Engine, depth: usize) {
        let mut keep = Vec::with_capacity(self.items.len());
        for (p, d) in std::mem::take(&mut self.items).into_iter().rev() {
            if d >= depth {
                p.abort(db);
            } else {
                keep.push((p, d));
            }
        }
        keep.reverse();
        self.items = keep;
    }

    /// The transaction ended: commit or abort everything, aborts newest
    /// first (an index before its table).
    pub fn end(&mut self, db: &Engine, committed: bool) {
        let items = std::mem::take(&mut self.items);
        if committed {
            for (p, _) in items {
                p.commit(db);
            }
        } else {
            for (p, _) in items.into_iter().rev() {
                p.abort(db);
            }
        }
    }
}

/// Executes a DDL statement; returns its command tag.
pub fn execute_ddl(cx: &mut DdlCtx<'_>, stmt: &ast::Statement) -> PgResult<String> {
    match stmt {
        ast::Statement::CreateTable(ct) => create_table(cx, ct),
        ast::Statement::CreateSchema {
            schema_name,
            if_not_exists,
        } => crate::schemacmds::create_schema(cx, schema_name, *if_not_exists),
        ast::Statement::Drop {
            object_type,
            if_exists,
            names,
            cascade,
            ..
        } => {
            let first = cx.notices.len();
            let r = drop_objects(cx, object_type, names, *if_exists, *cascade);
            merge_cascade_notices(&mut cx.notices, first);
            r
        }
        ast::Statement::Truncate {
            table_names,
            cascade,
            ..
        } => {
            let names: Vec<ast::ObjectName> = table_names.iter().map(|t| t.name.clone()).collect();
            truncate(cx, &names, truncate_cascades(cascade))
        }
        ast::Statement::AlterTable {
            name,
            operations,
            if_exists,
            on_cluster,
            ..
        } => {
            let tag = crate::tablecmds::alter_table(cx, name, operations, *if_exists)?;
            match on_cluster {
                Some(m) if m.value == crate::parser::ALTER_VIEW_MARK => Ok("ALTER VIEW".into()),
                _ => Ok(tag),
            }
        }
        ast::Statement::CreateIndex(ci) => create_index(cx, ci),
        ast::Statement::Comment {
            object_type,
            object_name,
            comment,
            ..
        } => crate::tablecmds::comment_on(cx, object_type, object_name, comment.as_deref()),
        ast::Statement::CreateView {
            or_replace,
            materialized: false,
            name,
            columns,
            query,
            temporary: false,
            if_not_exists: false,
            to: None,
            ..
        } => crate::view::create_view(cx, *or_replace, name, columns, query),
        ast::Statement::CreateSequence {
            if_not_exists,
            name,
            data_type,
            sequence_options,
            temporary: false,
            owned_by: None,
        } => crate::sequence::create_sequence(
            cx,
            *if_not_exists,
            name,
            data_type.as_ref(),
            sequence_options,
        ),
        _ => Err(PgError::unsupported(format!(
            "statement not supported: {}",
            first_words(stmt)
        ))),
    }
}

fn first_words(stmt: &ast::Statement) -> String {
    let s = stmt.to_string();
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// True for the statements [`execute_ddl`] handles.
pub fn is_ddl(stmt: &ast::Statement) -> bool {
    matches!(
        stmt,
        ast::Statement::CreateTable(_)
            | ast::Statement::Drop { .. }
            | ast::Statement::Truncate { .. }
            | ast::Statement::AlterTable { .. }
            | ast::Statement::CreateIndex(_)
            | ast::Statement::Comment { .. }
            | ast::Statement::CreateSequence { .. }
            | ast::Statement::CreateView { .. }
            | ast::Statement::CreateSchema { .. }
    )
}

/// True if schema `ns` has a table, index, sequence or view called `name`.
pub(crate) fn relation_exists(db: &Engine, ns: pgtypes::Oid, name: &str) -> bool {
    let key = engine::namespace::rel_key(ns, name);
    db.catalog().get(&key).is_some() || db.catalog().index_exists(&key)
}

fn create_table(cx: &mut DdlCtx<'_>, ct: &ast::CreateTable) -> PgResult<String> {
    create_table_typed(cx, ct, &[])
}

/// CREATE TABLE with the first columns' types given (`types`, by
/// position) instead of read from the statement: CREATE TABLE AS, whose
/// types come from its query (an enum, a typmod) and are not written.
pub(crate) fn create_table_typed(
    cx: &mut DdlCtx<'_>,
    ct: &ast::CreateTable,
    types: &[SqlType],
) -> PgResult<String> {
    let db = cx.db;
    let qname = crate::namespace::QualName::of(&ct.name)?;
    let ns = crate::namespace::creation_namespace(&cx.catalog(), &qname)?;
    let name = qname.name;
    if ct.query.is_some() || ct.like.is_some() || ct.clone.is_some() {
        return Err(PgError::unsupported(
            "CREATE TABLE AS / LIKE is not supported",
        ));
    }
    if relation_exists(db, ns, &name) {
        let msg = format!("relation \"{name}\" already exists");
        if ct.if_not_exists {
            cx.notices.push(PgError::notice(
                sqlstate::DUPLICATE_TABLE,
                format!("{msg}, skipping"),
            ));
            return Ok("CREATE TABLE".into());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, msg));
    }
    let mut columns: Vec<ColumnDef> = Vec::new();
    let mut serials: Vec<(String, String, SqlType)> = Vec::new();
    let mut identities: Vec<(engine::sequence::SequenceSpec, String)> = Vec::new();
    let mut pk: Option<(Vec<usize>, Option<String>)> = None;
    let mut uniques: Vec<(Vec<usize>, Option<String>)> = Vec::new();
    // CHECKs: (name, column of a column constraint, expression).
    let mut checks: Vec<(Option<ast::Ident>, Option<usize>, ast::Expr)> = Vec::new();
    let mut fks: Vec<crate::tablecmds::FkClause<'_>> = Vec::new();
    let multiple_pk = || {
        PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!("multiple primary keys for table \"{name}\" are not allowed"),
        )
    };
    for (i, c) in ct.columns.iter().enumerate() {
        let cname = ident_name(&c.name);
        if columns.iter().any(|x| x.name == cname) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{cname}\" specified more than once"),
            ));
        }
        let serial = crate::sequence::serial_type(&c.data_type);
        let ty = match (types.get(i), serial) {
            (Some(&t), _) => t,
            (None, Some(t)) => t,
            (None, None) => SqlType::from_data_type(&c.data_type)?,
        };
        let mut col = ColumnDef::new(&cname, ty);
        if let Some(t) = serial {
            // serial: a sequence owned by the column, its nextval the
            // default, NOT NULL (PostgreSQL's expansion).
            let seq = crate::tablecmds::choose_constraint_name(
                cx,
                Some(ns),
                &name,
                &[&cname],
                "seq",
                &[],
            );
            col.default = Some(format!(
                "nextval('{}')",
                crate::namespace::qualified_text(&cx.catalog(), ns, &seq)
            ));
            col.not_null = true;
            serials.push((seq, cname.clone(), t));
        }
        let idx = columns.len();
        for o in &c.options {
            match &o.option {
                ast::ColumnOption::Null => col.not_null = false,
                ast::ColumnOption::NotNull => col.not_null = true,
                ast::ColumnOption::Default(e) => col.default = Some(e.to_string()),
                ast::ColumnOption::Unique {
                    is_primary: true, ..
                } => {
                    if pk.is_some() {
                        return Err(multiple_pk());
                    }
                    pk = Some((vec![idx], o.name.as_ref().map(ident_name)));
                    col.not_null = true;
                }
                ast::ColumnOption::Unique {
                    is_primary: false, ..
                } => uniques.push((vec![idx], o.name.as_ref().map(ident_name))),
                ast::ColumnOption::Check(e) => checks.push((o.name.clone(), Some(idx), e.clone())),
                ast::ColumnOption::ForeignKey { .. } => {
                    fks.extend(crate::tablecmds::FkClause::of_column(o, idx));
                }
                ast::ColumnOption::Generated {
                    generated_as:
                        generated @ (ast::GeneratedAs::ByDefault | ast::GeneratedAs::Always),
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    if col.identity.is_some() {
                        return Err(PgError::syntax(format!(
                            "multiple identity specifications for column \"{}\" of table \"{name}\"",
                            col.name
                        )));
                    }
                    col.identity = Some(if matches!(generated, ast::GeneratedAs::Always) {
                        'a'
                    } else {
                        'd'
                    });
                    // GENERATED BY DEFAULT AS IDENTITY: a sequence as for
                    // serial, with the given options.
                    let seq = crate::tablecmds::choose_constraint_name(
                        cx,
                        Some(ns),
                        &name,
                        &[&col.name],
                        "seq",
                        &[],
                    );
                    let spec = crate::sequence::sequence_spec(
                        0,
                        &seq,
                        col.ty,
                        sequence_options.as_deref().unwrap_or(&[]),
                    )?;
                    col.default = Some(format!("nextval('{seq}')"));
                    col.not_null = true;
                    identities.push((spec, col.name.clone()));
                }
                other => {
                    return Err(PgError::unsupported(format!(
                        "column option {other} is not supported"
                    )));
                }
            }
        }
        columns.push(col);
    }
    let col_list = |ids: &[ast::Ident], columns: &[ColumnDef]| -> PgResult<Vec<usize>> {
        let mut v = Vec::new();
        for i in ids {
            let n = ident_name(i);
            let c = columns.iter().position(|c| c.name == n).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{n}\" named in key does not exist"),
                )
            })?;
            v.push(c);
        }
        Ok(v)
    };
    for tc in &ct.constraints {
        match tc {
            ast::TableConstraint::PrimaryKey {
                columns: cols,
                name: cname,
                ..
            } => {
                if pk.is_some() {
                    return Err(multiple_pk());
                }
                let v = col_list(cols, &columns)?;
                for &c in &v {
                    columns[c].not_null = true;
                }
                pk = Some((v, cname.as_ref().map(ident_name)));
            }
            ast::TableConstraint::Unique {
                columns: cols,
                name: cname,
                ..
            } => uniques.push((col_list(cols, &columns)?, cname.as_ref().map(ident_name))),
            ast::TableConstraint::Check { name: cname, expr } => {
                checks.push((cname.clone(), None, (**expr).clone()))
            }
            ast::TableConstraint::ForeignKey { .. } => {
                let clause = crate::tablecmds::FkClause::of_table_constraint(tc, |n| {
                    columns.iter().position(|c| c.name == n && !c.dropped)
                })?;
                fks.extend(clause);
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "constraint {other} is not supported"
                )))
            }
        }
    }
    let mut options = Vec::new();
    for o in &ct.with_options {
        match o {
            ast::SqlOption::KeyValue { key, value } => {
                let k = ident_name(key);
                match k.as_str() {
                    "fillfactor" | "autovacuum_enabled" | "toast_tuple_target"
                    | "parallel_workers" => {}
                    _ => {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("unrecognized parameter \"{k}\""),
                        ))
                    }
                }
                options.push((k, value.to_string()));
            }
            other => options.push((other.to_string(), String::new())),
        }
    }
    // Constraints, named as PostgreSQL names them: the key indexes first,
    // then the CHECKs.
    let mut constraints = Vec::new();
    let mut keys = Vec::new();
    if let Some((cols, cname)) = pk {
        let iname = cname.unwrap_or_else(|| format!("{name}_pkey"));
        constraints.push(crate::tablecmds::key_constraint(&iname, true, cols.clone()));
        keys.push((iname, cols, true));
    }
    for (cols, cname) in uniques {
        let iname = match cname {
            Some(n) => n,
            None => {
                let names: Vec<&str> = cols.iter().map(|c| columns[*c].name.as_str()).collect();
                crate::tablecmds::choose_constraint_name(
                    cx,
                    Some(ns),
                    &name,
                    &names,
                    "key",
                    &constraints,
                )
            }
        };
        if constraints.iter().any(|c| c.name == iname) || relation_exists(db, ns, &iname) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{iname}\" already exists"),
            ));
        }
        constraints.push(crate::tablecmds::key_constraint(
            &iname,
            false,
            cols.clone(),
        ));
        keys.push((iname, cols, false));
    }
    for (cname, col, e) in &checks {
        let c = crate::tablecmds::check_constraint(
            cx,
            &name,
            cname.as_ref(),
            *col,
            e,
            &columns,
            &constraints,
        )?;
        constraints.push(c);
    }
    let oid = db.catalog().allocate_oid();
    for clause in fks {
        let tq = crate::namespace::QualName::of(clause.target)?;
        let same_schema = match crate::namespace::schema_of(&cx.catalog(), &tq) {
            Ok(Some(s)) => s == ns,
            _ => tq.schema.is_none() && cx.catalog().get(&tq.name).is_none(),
        };
        let existing;
        let target = if tq.name == name && same_schema {
            // A key to the table being created.
            crate::tablecmds::FkTarget {
                oid,
                name: &name,
                columns: &columns,
                keys: keys.clone(),
            }
        } else {
            existing = crate::tablecmds::fk_referenced_table(cx, clause.target)?;
            crate::tablecmds::FkTarget::of(&existing)
        };
        let c = crate::tablecmds::foreign_key_constraint(
            cx,
            &name,
            &columns,
            &constraints,
            &clause,
            &target,
        )?;
        constraints.push(c);
    }
    // The creation belongs to this (sub)transaction: logged with its xid,
    // invisible to others until it commits, removed if it rolls back.
    let creator = cx.xact.assign_xid()?;
    let rel = RelFileId(oid);
    db.heap().create_relation(rel)?;
    let created = db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateTable(TableSpec {
            options,
            creator,
            constraints,
            namespace: ns,
            ..TableSpec::new(oid, &name, rel, columns.clone())
        }));
    if let Err(e) = created {
        let _ = db.heap().drop_relation(rel);
        return Err(e);
    }
    let table = db.catalog().table(&engine::namespace::rel_key(ns, &name))?;
    cx.pending.push(PendingDdl::CreateTable(table.clone()));
    cx.created.insert(rel);
    // A CHECK that does not bind (unknown column, not boolean) fails the
    // statement now, not every later INSERT.
    crate::tablecmds::checks_bind(&table)?;
    for (iname, cols, primary) in keys {
        add_index(cx.db, &table.key(), iname, cols, true, primary, creator)?;
    }
    for (seq, col, ty) in serials {
        let mut spec = engine::sequence::SequenceSpec::new(db.catalog().allocate_oid(), &seq, ty);
        spec.namespace = ns;
        spec.owned_by = Some((table.key(), col));
        crate::sequence::add_sequence(cx, spec)?;
    }
    for (mut spec, col) in identities {
        spec.oid = db.catalog().allocate_oid();
        spec.namespace = ns;
        spec.owned_by = Some((table.key(), col));
        crate::sequence::add_sequence(cx, spec)?;
    }
    Ok("CREATE TABLE".into())
}

/// Adds an index to a table that is empty (just created): ready at once.
fn add_index(
    db: &Engine,
    table: &str,
    name: String,
    columns: Vec<usize>,
    unique: bool,
    primary: bool,
    creator: TransactionId,
) -> PgResult<()> {
    let oid = db.catalog().allocate_oid();
    let spec = IndexSpec {
        name,
        oid,
        columns,
        unique,
        primary,
        creator,
        // A new table's key columns are NOT NULL in its definition.
        sets_not_null: Vec::new(),
        ..IndexSpec::default()
    };
    if let Some(ix) = db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateIndex {
            table: table.to_string(),
            spec,
        })?
    {
        ix.set_ready();
    }
    Ok(())
}

fn drop_tables(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> PgResult<String> {
    let db = cx.db;
    let mut tables = Vec::new();
    for n in names {
        let mut found = cx.find(n)?;
        while let Some(t) = &found {
            if !crate::tablerewrite::wait_for_rewrite(cx.xact, t, cx.cancel, cx.limits)? {
                break;
            }
            found = cx.find(n)?;
        }
        match found {
            Some(t) => tables.push(t),
            None => cx.notices.push(missing_table_to_drop(
                &crate::namespace::QualName::of(n)?.display(),
                if_exists,
            )?),
        }
    }
    drop_table_dependents(cx, &tables, cascade)?;
    let roots: Vec<_> = tables
        .iter()
        .map(|t| (t.oid, t.name.clone(), "table"))
        .collect();
    let views =
        crate::view::check_dependents(db, &roots, cascade, &cx.dropping_views, &mut cx.notices)?;
    let pending = crate::view::drop_view_oids(db, cx.xact.own().xids, &views);
    cx.dropping_views.extend(&views);
    cx.pending.extend(pending);
    for t in tables {
        drop_table(db, &t, cx.cancel)?;
        cx.created.remove(&t.rel);
    }
    Ok("DROP TABLE".into())
}

/// DROP TABLE's dependency rule for the tables `dropping`: a FOREIGN KEY
/// of another table to one of them fails the drop with 2BP01 (RESTRICT),
/// or goes with it (CASCADE, with PostgreSQL's NOTICE).
pub(crate) fn drop_table_dependents(
    cx: &mut DdlCtx<'_>,
    dropping: &[Arc<TableDef>],
    cascade: bool,
) -> PgResult<()> {
    // (referencing table OID, its name, constraint, referenced table).
    let mut deps: Vec<(pgtypes::Oid, String, String, String)> = Vec::new();
    {
        let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
        for t in dropping {
            for child in view.referencing(t.oid) {
                if dropping.iter().any(|d| d.oid == child.oid) {
                    continue; // goes too
                }
                for c in &child.constraints {
                    if c.foreign.as_ref().is_some_and(|f| f.table == t.oid) {
                        deps.push((
                            child.oid,
                            child.name.clone(),
                            c.name.clone(),
                            t.name.clone(),
                        ));
                    }
                }
            }
        }
    }
    if deps.is_empty() {
        return Ok(());
    }
    deps.sort_by_key(|d| d.0);
    if !cascade {
        let detail: Vec<String> = deps
            .iter()
            .map(|(_, child, con, parent)| {
                format!("constraint {con} on table {child} depends on table {parent}")
            })
            .collect();
        let first = &deps[0].3;
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop table {first} because other objects depend on it"),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    let lines: Vec<String> = deps
        .iter()
        .map(|(_, child, con, _)| format!("constraint {con} on table {child}"))
        .collect();
    cx.notices.push(cascade_notice(&lines));
    for (oid, _, con, _) in deps {
        crate::tablecmds::remove_constraint(cx, oid, &con)?;
    }
    Ok(())
}

/// True for `TRUNCATE … CASCADE`.
pub fn truncate_cascades(c: &Option<ast::TruncateCascadeOption>) -> bool {
    matches!(c, Some(ast::TruncateCascadeOption::Cascade))
}

/// DROP of one object kind.
fn drop_objects(
    cx: &mut DdlCtx<'_>,
    object_type: &ast::ObjectType,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> PgResult<String> {
    match object_type {
        ast::ObjectType::Table => drop_tables(cx, names, if_exists, cascade),
        ast::ObjectType::View => crate::view::drop_views(cx, names, if_exists, cascade),
        ast::ObjectType::Index => drop_indexes(cx, names, if_exists),
        ast::ObjectType::Sequence => crate::sequence::drop_sequences(cx, names, if_exists, cascade),
        ast::ObjectType::Type => crate::typecmds::drop_types(cx, names, if_exists, cascade),
        ast::ObjectType::Schema => crate::schemacmds::drop_schemas(cx, names, if_exists, cascade),
        other => Err(PgError::unsupported(format!(
            "DROP {other} is not supported"
        ))),
    }
}

/// One DROP statement's "drop cascades to …" notices from `first` on, as
/// PostgreSQL sends them: a single notice listing every object (`drop
/// cascades to N other objects` with one DETAIL line each), wherever
/// the objects were found (column and view dependents of a type, foreign
/// keys and views of a table, …).
fn merge_cascade_notices(notices: &mut Vec<PgError>, first: usize) {
    const PREFIX: &str = "drop cascades to ";
    let Some(tail) = notices.get(first..) else {
        return;
    };
    let is_cascade = |n: &PgError| n.message.starts_with(PREFIX);
    if tail.iter().filter(|n| is_cascade(n)).count() < 2 {
        return;
    }
    let mut objects = Vec::new();
    let mut at = None;
    let mut kept = Vec::new();
    for (i, n) in notices.drain(first..).enumerate() {
        if !is_cascade(&n) {
            kept.push(n);
            continue;
        }
        at.get_or_insert(i.min(kept.len()));
        match &n.detail {
            Some(d) if n.message.ends_with(" other objects") => objects.extend(
                d.lines()
                    .map(|l| l.strip_prefix(PREFIX).unwrap_or(l).to_string()),
            ),
            _ => objects.push(n.message[PREFIX.len()..].to_string()),
        }
    }
    let at = at.unwrap_or(0).min(kept.len());
    kept.insert(at, cascade_notice(&objects));
    notices.extend(kept);
}

/// PostgreSQL's NOTICE for objects a DROP … CASCADE takes along
/// (`objects`: "constraint c on table t", …).
pub(crate) fn cascade_notice(objects: &[String]) -> PgError {
    match objects {
        [one] => PgError::notice(
            sqlstate::SUCCESSFUL_COMPLETION,
            format!("drop cascades to {one}"),
        ),
        _ => {
            let lines: Vec<String> = objects
                .iter()
                .map(|o| format!("drop cascades to {o}"))
                .collect();
            PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("drop cascades to {} other objects", objects.len()),
            )
            .with_detail(lines.join("\n"))
        }
    }
}

/// TRUNCATE's foreign key rule: a table referenced by a table not being
/// truncated fails with 0A000, unless CASCADE adds the referencing tables
/// (transitively) with a NOTICE each. Returns the tables to truncate.
pub fn truncate_targets(
    db: &Engine,
    own: &[TransactionId],
    tables: Vec<Arc<TableDef>>,
    cascade: bool,
    notices: &mut Vec<PgError>,
) -> PgResult<Vec<Arc<TableDef>>> {
    let view = db.catalog().view(own, db.clog());
    let mut out = tables;
    let mut i = 0;
    while i < out.len() {
        let t = out[i].clone();
        let mut children = view.referencing(t.oid);
        children.sort_by_key(|c| c.oid);
        for child in children {
            if out.iter().any(|o| o.oid == child.oid) {
                continue;
            }
            if !cascade {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "cannot truncate a table referenced in a foreign key constraint",
                )
                .with_detail(format!(
                    "Table \"{}\" references \"{}\".",
                    child.name, t.name
                ))
                .with_hint(format!(
                    "Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.",
                    child.name
                )));
            }
            notices.push(PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("truncate cascades to table \"{}\"", child.name),
            ));
            out.push(child);
        }
        i += 1;
    }
    Ok(out)
}

/// DROP TABLE of a table that does not exist: 42P01, or with IF EXISTS
/// the NOTICE to send instead.
pub fn missing_table_to_drop(name: &str, if_exists: bool) -> PgResult<PgError> {
    missing_to_drop("table", sqlstate::UNDEFINED_TABLE, name, if_exists)
}

/// DROP of a `kind` ("table", "index", "view", …) named `name` that does
/// not exist: the error `code`, or with IF EXISTS the NOTICE to send
/// instead (PostgreSQL's `… does not exist, skipping`).
pub(crate) fn missing_to_drop(
    kind: &str,
    code: &'static str,
    name: &str,
    if_exists: bool,
) -> PgResult<PgError> {
    if if_exists {
        Ok(PgError::notice(
            code,
            format!("{kind} \"{name}\" does not exist, skipping"),
        ))
    } else {
        Err(PgError::new(
            code,
            format!("{kind} \"{name}\" does not exist"),
        ))
    }
}

fn drop_indexes(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> PgResult<String> {
    let db = cx.db;
    for n in names {
        let q = crate::namespace::QualName::of(n)?;
        let name = q.name.clone();
        let schemas: Vec<pgtypes::Oid> = match crate::namespace::schema_of(&cx.catalog(), &q) {
            Ok(Some(ns)) => vec![ns],
            Ok(None) => cx.path.to_vec(),
            Err(_) => Vec::new(),
        };
        let owner = schemas.iter().find_map(|ns| {
            db.catalog().tables().into_iter().find(|t| {
                t.namespace == *ns && t.indexes.list().iter().any(|i| i.spec.name == name)
            })
        });
        match owner {
            Some(t) => {
                // The index of a PRIMARY KEY or UNIQUE constraint goes with
                // its constraint only.
                let constraint = t
                    .constraints
                    .iter()
                    .find(|c| {
                        c.kind != engine::catalog::ConstraintKind::ForeignKey
                            && c.index.as_deref() == Some(name.as_str())
                    })
                    .map(|c| c.name.clone())
                    .or_else(|| {
                        t.indexes
                            .list()
                            .iter()
                            .find(|i| i.spec.name == name && i.spec.primary)
                            .map(|i| i.spec.name.clone())
                    });
                if let Some(c) = constraint {
                    return Err(PgError::new(
                        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!(
                            "cannot drop index {name} because constraint {c} on table {} requires it",
                            t.name
                        ),
                    )
                    .with_hint(format!(
                        "You can drop constraint {c} on table {} instead.",
                        t.name
                    )));
                }
                db.catalog()
                    .apply_catalog_change(&CatalogChange::DropIndex {
                        table: t.key(),
                        name,
                    })?;
            }
            None => cx.notices.push(missing_to_drop(
                "index",
                sqlstate::UNDEFINED_OBJECT,
                &name,
                if_exists,
            )?),
        }
    }
    Ok("DROP INDEX".into())
}

/// TRUNCATE: empties the heap file and the indexes at once (not
/// transactional).
pub fn truncate(cx: &mut DdlCtx<'_>, names: &[ast::ObjectName], cascade: bool) -> PgResult<String> {
    let db = cx.db;
    let mut tables = Vec::new();
    for name in names {
        let mut t = cx.table(name)?;
        while crate::tablerewrite::wait_for_rewrite(cx.xact, &t, cx.cancel, cx.limits)? {
            t = cx.table(name)?;
        }
        tables.push(t);
    }
    let tables = truncate_targets(db, cx.xact.own().xids, tables, cascade, &mut cx.notices)?;
    for t in tables {
        truncate_table(db, &t, cx.cancel)?;
        cx.created.insert(t.rel);
    }
    Ok("TRUNCATE TABLE".into())
}

pub(crate) fn key_columns(table: &TableDef, ids: &[ast::Ident]) -> PgResult<Vec<usize>> {
    let mut v = Vec::new();
    for i in ids {
        let n = ident_name(i);
        let c = table.column_index(&n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{n}\" named in key does not exist"),
            )
        })?;
        v.push(c);
    }
    Ok(v)
}

fn create_index(cx: &mut DdlCtx<'_>, ci: &ast::CreateIndex) -> PgResult<String> {
    let table = cx.table(&ci.table_name)?;
    let tname = table.name.clone();
    if !ci.include.is_empty() {
        return Err(PgError::unsupported("INCLUDE is not supported"));
    }
    if let Some(u) = &ci.using {
        if !u.value.eq_ignore_ascii_case("btree") {
            return Err(PgError::unsupported(format!(
                "access method \"{}\" is not supported",
                u.value
            )));
        }
    }
    // CONCURRENTLY is accepted and builds the ordinary way: the build
    // scans the heap once while writers go on (an index is published
    // before its scan, so no row is missed), without PostgreSQL's
    // three-phase wait.
    use crate::indexcmds::{to_stored, ExprKind};
    let mut cols = Vec::new();
    let mut exprs = Vec::new();
    let mut used = Vec::new();
    let mut options = Vec::new();
    for o in &ci.columns {
        let mut e = &o.expr;
        while let ast::Expr::Nested(inner) = e {
            if matches!(**inner, ast::Expr::Identifier(_)) {
                e = inner;
            } else {
                break;
            }
        }
        match e {
            ast::Expr::Identifier(id) => {
                let n = ident_name(id);
                cols.push(table.column_index(&n).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{n}\" does not exist"),
                    )
                })?);
            }
            other => {
                exprs.push(to_stored(&table, other, ExprKind::Expression, &mut used)?);
                cols.push(engine::catalog::EXPR_KEY);
            }
        }
        let desc = o.asc == Some(false);
        let nulls_first = o.nulls_first.unwrap_or(desc);
        options.push(i16::from(desc) | (i16::from(nulls_first) << 1));
    }
    let predicate = match &ci.predicate {
        Some(p) => Some(to_stored(&table, p, ExprKind::Predicate, &mut used)?),
        None => None,
    };
    used.sort_unstable();
    if options.iter().all(|o| *o == 0) {
        options.clear();
    }
    let mut spec = IndexSpec {
        columns: cols,
        exprs,
        predicate,
        expr_columns: used,
        options,
        unique: ci.unique,
        ..IndexSpec::default()
    };
    // Bind now: an unknown column or function, or a predicate that is
    // not boolean, fails the statement, not every later write.
    if !spec.is_plain() {
        let b = crate::indexcmds::BoundIndex::bind(&table, &spec)?;
        for k in &b.keys {
            crate::indexcmds::check_stable_uses(&table, k, ExprKind::Expression)?;
        }
        if let Some(p) = &b.predicate {
            crate::indexcmds::check_stable_uses(&table, p, ExprKind::Predicate)?;
        }
    }
    let iname = match &ci.name {
        Some(n) => object_name(n),
        None => {
            let names = crate::indexcmds::key_names(&table, &spec);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            choose_index_name(cx.db, table.namespace, &tname, &names, "idx")
        }
    };
    if relation_exists(cx.db, table.namespace, &iname) {
        let msg = format!("relation \"{iname}\" already exists");
        if ci.if_not_exists {
            cx.notices.push(PgError::notice(
                sqlstate::DUPLICATE_TABLE,
                format!("{msg}, skipping"),
            ));
            return Ok("CREATE INDEX".into());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_TABLE, msg));
    }
    spec.name = iname;
    build_index(cx, &table, spec)?;
    Ok("CREATE INDEX".into())
}

/// PostgreSQL's ChooseRelationName for an index: `table_col_col_idx`,
/// numbered until free.
fn choose_index_name(
    db: &Engine,
    ns: pgtypes::Oid,
    table: &str,
    cols: &[&str],
    suffix: &str,
) -> String {
    choose_name(db, Some(ns), table, cols, suffix, &[])
}

/// PostgreSQL's ChooseRelationName / ChooseConstraintName:
/// `table_col1_col2_suffix`, numbered until no constraint of `taken` and
/// (with `ns`) no relation of that schema has the name.
pub(crate) fn choose_name(
    db: &Engine,
    ns: Option<pgtypes::Oid>,
    table: &str,
    cols: &[&str],
    suffix: &str,
    taken: &[engine::catalog::ConstraintSpec],
) -> String {
    let mut base = table.to_string();
    for c in cols {
        base.push('_');
        base.push_str(c);
    }
    let mut name = format!("{base}_{suffix}");
    let mut n = 1;
    while taken.iter().any(|c| c.name == name)
        || ns.is_some_and(|ns| relation_exists(db, ns, &name))
    {
        name = format!("{base}_{suffix}{n}");
        n += 1;
    }
    name
}

pub(crate) fn build_new_index(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    name: String,
    cols: Vec<usize>,
    unique: bool,
    primary: bool,
) -> PgResult<()> {
    build_index(
        cx,
        table,
        IndexSpec {
            name,
            columns: cols,
            unique,
            primary,
            ..IndexSpec::default()
        },
    )
}

/// Creates the index `template` describes (its oid, creator and the
/// columns a primary key makes NOT NULL are filled in here) and fills it
/// from the heap.
fn build_index(cx: &mut DdlCtx<'_>, table: &Arc<TableDef>, template: IndexSpec) -> PgResult<()> {
    let db = cx.db;
    let name = template.name.clone();
    let cols = template.columns.clone();
    let primary = template.primary;
    if relation_exists(db, table.namespace, &name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            format!("relation \"{name}\" already exists"),
        ));
    }
    if crate::tablerewrite::wait_for_rewrite(cx.xact, table, cx.cancel, cx.limits)? {
        return Err(PgError::new(
            sqlstate::SERIALIZATION_FAILURE,
            format!(
                "could not serialize access: table \"{}\" was rewritten concurrently",
                table.name
            ),
        ));
    }
    let creator = cx.xact.assign_xid()?;
    let _lock = table.lock.shared();
    table.check_not_dropped()?;
    let oid = db.catalog().allocate_oid();
    // Only the columns this key makes NOT NULL: removing the key again
    // (ROLLBACK, or start-up after a crash) gives back exactly these.
    let sets_not_null: Vec<usize> = if primary {
        cols.iter()
            .copied()
            .filter(|c| table.columns.get(*c).is_some_and(|col| !col.not_null))
            .collect()
    } else {
        Vec::new()
    };
    let spec = IndexSpec {
        oid,
        creator,
        sets_not_null: sets_not_null.clone(),
        ..template
    };
    // From before the index is published until it holds its scan's
    // entries: pruning frees no slot meanwhile (Heap::index_build).
    let _build = db.heap().index_build();
    let ix = db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateIndex {
            table: table.key(),
            spec,
        })?
        .ok_or_else(|| PgError::internal("index not created"))?;
    let result = fill_and_check(cx, table, &ix, primary);
    match result {
        Ok(()) => {
            cx.pending.push(PendingDdl::CreateIndex {
                table: table.clone(),
                index: ix.clone(),
            });
            if !sets_not_null.is_empty() {
                db.catalog()
                    .apply_catalog_change(&CatalogChange::SetNotNull {
                        table: table.key(),
                        columns: sets_not_null,
                    })?;
            }
            ix.set_ready();
            Ok(())
        }
        Err(e) => {
            let _ = db
                .catalog()
                .apply_catalog_change(&CatalogChange::DropIndex {
                    table: table.key(),
                    name,
                });
            Err(e)
        }
    }
}

pub(crate) fn fill_and_check(
    cx: &mut DdlCtx<'_>,
    table: &TableDef,
    ix: &IndexDef,
    primary: bool,
) -> PgResult<()> {
    let db = cx.db;
    let types = table.types();
    let mut row = Vec::with_capacity(types.len());
    let mut entries: Vec<(Vec<u8>, ItemPointer)> = Vec::new();
    let mut null_keys: Vec<(ItemPointer, usize)> = Vec::new();
    let mut kb = Vec::new();
    let mut failed: Vec<(ItemPointer, PgError)> = Vec::new();
    db.heap().scan_all(table.rel, &mut |tid, data| {
        table.decode_into(data, &types, &mut row, db.heap())?;
        let has_key = match index_key(table, ix, &row, &mut kb) {
            Ok(b) => b,
            Err(e) => {
                // Only a version that may be seen counts (below).
                failed.push((tid, e));
                return Ok(());
            }
        };
        if has_key {
            entries.push((kb.clone(), tid));
        } else if primary {
            let c = ix
                .spec
                .columns
                .iter()
                .copied()
                .find(|c| row[*c].is_null())
                .unwrap_or(0);
            null_keys.push((tid, c));
        }
        Ok(())
    })?;
    if !failed.is_empty() {
        let vis = Vis::take(cx.xact);
        for (tid, e) in failed {
            if dirty_live(cx, &vis, table, tid)? {
                return Err(e);
            }
        }
    }
    // Sorted once, the entries serve the uniqueness check and then build
    // the tree bottom-up (Index::load_sorted) — one sort instead of a
    // descent per row.
    entries.sort_unstable();
    if !ix.spec.unique {
        ix.index.load_sorted(entries);
        return Ok(());
    }
    let vis = Vis::take(cx.xact);
    // NOT NULL for a primary key: only versions that are (or may become) live count.
    for (tid, c) in null_keys {
        if dirty_live(cx, &vis, table, tid)? {
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!(
                    "column \"{}\" of relation \"{}\" contains null values",
                    table.columns[c].name, table.name
                ),
            ));
        }
    }
    let mut i = 0;
    while i < entries.len() {
        let mut j = i + 1;
        while j < entries.len() && entries[j].0 == entries[i].0 {
            j += 1;
        }
        if j - i > 1 {
            let mut live = 0;
            let mut live_tid = None;
            for (_, tid) in &entries[i..j] {
                if dirty_live(cx, &vis, table, *tid)? {
                    live += 1;
                    live_tid = Some(*tid);
                }
            }
            if live > 1 {
                let mut detail = String::from("Key is duplicated.");
                if let Some(t) = live_tid {
                    let vals = db.heap().fetch_any(table.rel, t, |_h, data| {
                        let mut r = Vec::new();
                        table
                            .decode_into(data, &types, &mut r, db.heap())
                            .map(|_| r)
                    })?;
                    if let Some(Ok(r)) = vals {
                        detail = format!(
                            "{} is duplicated.",
                            crate::indexcmds::key_description(table, ix, &r)
                        );
                    }
                }
                return Err(PgError::new(
                    sqlstate::UNIQUE_VIOLATION,
                    format!("could not create unique index \"{}\"", ix.spec.name),
                )
                .with_detail(detail));
            }
        }
        i = j;
    }
    ix.index.load_sorted(entries);
    Ok(())
}

/// Live or in progress (after waiting for it) under SnapshotDirty.
pub(crate) fn dirty_live(
    cx: &mut DdlCtx<'_>,
    vis: &Vis,
    table: &TableDef,
    tid: ItemPointer,
) -> PgResult<bool> {
    loop {
        let state = {
            let c = vis.cx(cx.db);
            let own = cx.xact.own();
            let c = storage::heapam_visibility::VisibilityContext { own, ..c };
            cx.db.heap().fetch_dirty(table.rel, tid, &c)?
        };
        match state {
            DirtyState::Dead => return Ok(false),
            DirtyState::Live => return Ok(true),
            DirtyState::InProgress(x) => cx.xact.wait_for_xid(x, cx.cancel, cx.limits)?,
        }
    }
}
