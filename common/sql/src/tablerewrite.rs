//! ALTER TABLE … ALTER COLUMN … [SET DATA] TYPE … [USING …]: the table
//! rewrite (PostgreSQL's ATPrepAlterColumnType, ATExecAlterColumnType and
//! ATRewriteTable in `commands/tablecmds.c`).
//!
//! ## A new heap file, written by the altering transaction
//!
//! Rows of the old type cannot be read with the new one, so the table gets
//! a new heap relation file, as PostgreSQL's rewrite does:
//!
//! ```text
//!   prep      bind each conversion over the old row: USING, else the
//!             column itself, assignment-cast to the new type (42804)
//!   exec      the default must cast too (42804); no view may read the
//!             column (0A000); foreign keys stay of comparable types
//!   switch    create file N, list PendingDdl::Rewrite, then one
//!             AlterTable: rel = N, the new column types, previous = the
//!             committed definition (rel = O) — the CHECKs bind here
//!   copy      every row of O that is live (SnapshotDirty, waiting for
//!             writers) is converted, checked (NOT NULL, CHECK) and
//!             inserted into N by this transaction: ordinary WAL-logged
//!             heap inserts
//!   indexes   the new version's indexes (copies of the definitions, see
//!             `engine::catalog`) are filled from N; a duplicate key is
//!             23505 "could not create unique index"
//! ```
//!
//! Until the transaction commits every other session (and a hot standby)
//! sees the previous version: file O, the old types, the old indexes —
//! each heap file has its own index set. Rows in N carry the altering
//! xid, so a snapshot from before the ALTER sees the table empty once it
//! uses the new version: PostgreSQL's documented behaviour for rewrites.
//!
//! ## Ending
//!
//! COMMIT: the definition loses its previous version (one more
//! `AlterTable`: every node's catalog version moves, cached plans are
//! re-bound) and file O is dropped, after the statements still reading it
//! (the relation lock). ROLLBACK (or ROLLBACK TO a savepoint before it):
//! the `Alter` undo switches back to O and its untouched indexes, then
//! file N is dropped. A crash before either: start-up
//! (`engine::indexing::resolve_uncommitted_ddl`) does the same from the
//! catalog file, which records both versions.
//!
//! ## Writers wait
//!
//! PostgreSQL's AccessExclusiveLock keeps every other statement off the
//! table. Here readers keep reading the previous version (file O stays
//! until COMMIT), but a write to O would be lost, so the table carries
//! the rewriting xid (`TableDef::rewriting`) from before the copy until
//! the transaction ends: another session's INSERT / UPDATE / DELETE,
//! COPY FROM, TRUNCATE, DROP TABLE or CREATE INDEX of the table waits for
//! that transaction and binds its statement again ([`wait_for_rewrite`];
//! a statement that fails to bind first waits for any rewrite in
//! progress, then binds once more: it may have been bound against the
//! definition being replaced). The rewrite first waits for statements
//! that are writing (the relation lock), then for their transactions
//! (SnapshotDirty). A CREATE INDEX that waited fails with 40001 instead
//! of binding again.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::ddl::{dirty_live, DdlCtx, PendingDdl};
use crate::executor::Vis;
use crate::expr::{bind_expr, eval, try_coerce_assign, BoundExpr, Expr, ParamTypes, Scope};
use crate::functions::StaticContext;
use crate::planner::ident_name;
use engine::catalog::{ConstraintKind, TableDef};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cast_assign, Value};
use pgtypes::{Oid, RelFileId, TransactionId};
use storage::toast::{ToastCompression, Toaster};

/// One `ALTER COLUMN … TYPE` of the statement.
pub struct TypeChange<'a> {
    /// The column as written.
    pub column: &'a ast::Ident,
    /// The new type as written.
    pub data_type: &'a ast::DataType,
    /// USING.
    pub using: Option<&'a ast::Expr>,
}

/// A change resolved against the table.
struct Resolved {
    pos: usize,
    name: String,
    ty: SqlType,
    /// The new value, over the old row.
    expr: Expr,
    using: bool,
}

fn cannot_cast(what: String, ty: SqlType) -> PgError {
    PgError::new(
        sqlstate::DATATYPE_MISMATCH,
        format!(
            "{what} cannot be cast automatically to type {}",
            ty.pg_base_name()
        ),
    )
}

/// ALTER TABLE … ALTER COLUMN … TYPE, every such action of one statement
/// in one rewrite of the table with OID `oid`.
pub fn alter_column_types(
    cx: &mut DdlCtx<'_>,
    oid: Oid,
    changes: &[TypeChange<'_>],
) -> PgResult<()> {
    let table = crate::tablecmds::lock_for_alter(cx, oid)?;
    table.check_not_dropped()?;
    let tname = table.name.clone();
    // Prep: the conversions, bound over the old row.
    let cols: Vec<(String, SqlType)> = table
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.ty))
        .collect();
    let scope = Scope::for_table(&tname, &cols);
    let mut resolved: Vec<Resolved> = Vec::with_capacity(changes.len());
    for ch in changes {
        let name = ident_name(ch.column);
        let pos = table
            .column_index(&name)
            .ok_or_else(|| crate::tablecmds::undefined_column_of(&name, &tname))?;
        if resolved.iter().any(|r| r.pos == pos) {
            return Err(PgError::unsupported(format!(
                "cannot alter type of column \"{name}\" twice"
            )));
        }
        let ty = SqlType::from_data_type(ch.data_type)?;
        let column_ref = ast::Expr::Identifier(ast::Ident::with_quote('"', name.clone()));
        let ast_expr = ch.using.unwrap_or(&column_ref);
        let mut params = ParamTypes::new();
        let b = bind_expr(ast_expr, &scope, &mut params)?;
        let expr = match try_coerce_assign(b, ty, &mut params)? {
            Some(e) => e,
            None if ch.using.is_some() => {
                return Err(cannot_cast(
                    format!("result of USING clause for column \"{name}\""),
                    ty,
                )
                .with_hint("You might need to add an explicit cast."))
            }
            None => {
                return Err(
                    cannot_cast(format!("column \"{name}\""), ty).with_hint(format!(
                        "You might need to specify \"USING {}::{}\".",
                        quote_ident(&name),
                        ty.pg_name()
                    )),
                )
            }
        };
        resolved.push(Resolved {
            pos,
            name,
            ty,
            expr,
            using: ch.using.is_some(),
        });
    }
    // Exec: the default, the views, the foreign keys.
    for r in &resolved {
        let col = &table.columns[r.pos];
        if let (Some(d), None) = (&col.default, col.identity) {
            let ast = crate::parser::parse_expr_text(d)?;
            let mut params = ParamTypes::new();
            // PostgreSQL strips the implicit cast to the old type first
            // (strip_implicit_coercions): the expression's own type
            // counts; a literal's is the old column type.
            let b = bind_expr(&ast, &Scope::new(), &mut params)?;
            let typed = if b.ty == SqlType::Unknown {
                BoundExpr {
                    expr: crate::expr::coerce_assign(b, col.ty, &mut params, &col.name)?,
                    ty: col.ty,
                }
            } else {
                b
            };
            if try_coerce_assign(typed, r.ty, &mut params)?.is_none() {
                return Err(cannot_cast(
                    format!("default for column \"{}\"", r.name),
                    r.ty,
                ));
            }
        }
        if col.identity.is_some() && !matches!(r.ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
        {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "identity column type must be smallint, integer, or bigint",
            ));
        }
        crate::view::refuse_type_change(cx, table.oid, &r.name)?;
    }
    check_foreign_keys(cx, &table, &resolved)?;
    // Switch: a new heap file and the definition that reads it.
    let mut spec = table.spec();
    for r in &resolved {
        spec.columns[r.pos].ty = r.ty;
    }
    // Every row of the new file has every column: no missing values.
    for c in spec.columns.iter_mut() {
        c.missing = None;
    }
    let new_rel = RelFileId(cx.db.catalog().allocate_oid());
    cx.db.heap().create_relation(new_rel)?;
    let xid = cx.xact.assign_xid()?;
    let marked = table
        .rewriting
        .compare_exchange(0, xid.0, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    cx.pending.push(PendingDdl::Rewrite {
        oid: table.oid,
        old_rel: table.rel,
        new_rel,
        marked,
    });
    // Statements writing the table now finish (later ones wait for us).
    drop(table.lock.exclusive(cx.cancel)?);
    spec.rel = new_rel;
    let new = crate::tablecmds::apply_definition(cx, &table, spec, xid, true)?;
    crate::tablecmds::checks_bind(&new)?;
    // Copy.
    copy_rows(cx, &table, &new, &resolved, xid)?;
    cx.xact.command_counter_increment();
    // Indexes.
    for ix in new.indexes.list() {
        if ix.is_ready() {
            continue;
        }
        crate::ddl::fill_and_check(cx, &new, &ix, ix.spec.primary)?;
        ix.set_ready();
    }
    // Foreign keys whose values a USING may have changed are checked again.
    if resolved.iter().any(|r| r.using) {
        revalidate_foreign_keys(cx, &new, &resolved)?;
    }
    // An identity column's sequence follows the type (ALTER SEQUENCE …
    // AS: bounds that were the old type's follow the new one).
    for r in &resolved {
        if table.columns[r.pos].identity.is_some() && table.columns[r.pos].ty != r.ty {
            identity_sequence_as(cx, &new, &r.name, r.ty)?;
        }
    }
    Ok(())
}

/// ALTER SEQUENCE … AS `ty` of the sequence of identity column `column`.
fn identity_sequence_as(
    cx: &mut DdlCtx<'_>,
    table: &TableDef,
    column: &str,
    ty: SqlType,
) -> PgResult<()> {
    let key = table.key();
    let Some(seq) = cx.db.catalog().sequences().into_iter().find(|s| {
        s.spec
            .owned_by
            .as_ref()
            .is_some_and(|(t, c)| *t == key && c == column)
    }) else {
        return Ok(());
    };
    let schema = cx
        .catalog()
        .schema_name(seq.spec.namespace)
        .unwrap_or_else(|| "public".to_string());
    let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let text = format!(
        "ALTER SEQUENCE {}.{} AS {}",
        quoted(&schema),
        quoted(&seq.spec.name),
        ty.pg_base_name()
    );
    match crate::parser::parse_one(&text)? {
        crate::parser::Stmt::Sequence(st) => {
            crate::sequence::alter_sequence(cx, &st)?;
            Ok(())
        }
        _ => Err(PgError::internal("ALTER SEQUENCE did not parse")),
    }
}

/// `quote_identifier`: double quotes unless the name is a plain lower-case
/// identifier.
fn quote_ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// Foreign keys on the changed columns, either side, must keep
/// comparable types (42804, PostgreSQL's re-added constraint's message).
fn check_foreign_keys(cx: &DdlCtx<'_>, table: &TableDef, changes: &[Resolved]) -> PgResult<()> {
    let new_ty = |pos: usize| {
        changes
            .iter()
            .find(|r| r.pos == pos)
            .map(|r| r.ty)
            .unwrap_or(table.columns[pos].ty)
    };
    let changed = |pos: usize| changes.iter().any(|r| r.pos == pos);
    let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
    let incompatible = |name: &str, a: (&str, SqlType), b: (&str, SqlType)| {
        PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!("foreign key constraint \"{name}\" cannot be implemented"),
        )
        .with_detail(format!(
            "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
            a.0,
            b.0,
            a.1.pg_base_name(),
            b.1.pg_base_name()
        ))
    };
    // This table's keys.
    for c in &table.constraints {
        let (ConstraintKind::ForeignKey, Some(f)) = (c.kind, &c.foreign) else {
            continue;
        };
        let target = if f.table == table.oid {
            None
        } else {
            cx.db
                .catalog()
                .by_oid(f.table)
                .map(|t| t.version_for(cx.xact.own().xids, cx.db.clog()))
        };
        for (&a, &b) in c.columns.iter().zip(&f.columns) {
            let (bname, bty, bchanged) = match &target {
                None => (table.columns[b].name.as_str(), new_ty(b), changed(b)),
                Some(t) => (t.columns[b].name.as_str(), t.columns[b].ty, false),
            };
            if !(changed(a) || bchanged) {
                continue;
            }
            let aty = new_ty(a);
            if !crate::tablecmds::fk_types_compatible(aty, bty) {
                return Err(incompatible(
                    &c.name,
                    (&table.columns[a].name, aty),
                    (bname, bty),
                ));
            }
        }
    }
    // Other tables' keys to this one.
    let mut children = view.referencing(table.oid);
    children.sort_by_key(|c| c.oid);
    for child in children.iter().filter(|c| c.oid != table.oid) {
        for c in &child.constraints {
            let Some(f) = c.foreign.as_ref().filter(|f| f.table == table.oid) else {
                continue;
            };
            for (&a, &b) in c.columns.iter().zip(&f.columns) {
                if !changed(b) {
                    continue;
                }
                let (aty, bty) = (child.columns[a].ty, new_ty(b));
                if !crate::tablecmds::fk_types_compatible(aty, bty) {
                    return Err(incompatible(
                        &c.name,
                        (&child.columns[a].name, aty),
                        (&table.columns[b].name, bty),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// After a USING: the foreign keys over changed columns hold again
/// (either side), as PostgreSQL's re-added constraints are validated.
fn revalidate_foreign_keys(
    cx: &mut DdlCtx<'_>,
    new: &Arc<TableDef>,
    changes: &[Resolved],
) -> PgResult<()> {
    let changed = |pos: &usize| changes.iter().any(|r| r.using && r.pos == *pos);
    for c in &new.constraints {
        let Some(f) = &c.foreign else { continue };
        if !(c.columns.iter().any(changed) || (f.table == new.oid && f.columns.iter().any(changed)))
        {
            continue;
        }
        let target = if f.table == new.oid {
            new.clone()
        } else {
            match cx.db.catalog().by_oid(f.table) {
                Some(t) => t.version_for(cx.xact.own().xids, cx.db.clog()),
                None => continue,
            }
        };
        crate::tablecmds::validate_foreign_key(cx, new, &target, c)?;
    }
    let children = {
        let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
        view.referencing(new.oid)
    };
    for child in children.iter().filter(|c| c.oid != new.oid) {
        for c in &child.constraints {
            let uses = c
                .foreign
                .as_ref()
                .is_some_and(|f| f.table == new.oid && f.columns.iter().any(changed));
            if uses {
                crate::tablecmds::validate_foreign_key(cx, child, new, c)?;
            }
        }
    }
    Ok(())
}

/// Converts every live row of `old`'s file into `new`'s, inserted by `xid`.
fn copy_rows(
    cx: &mut DdlCtx<'_>,
    old: &TableDef,
    new: &TableDef,
    changes: &[Resolved],
    xid: TransactionId,
) -> PgResult<()> {
    let db = cx.db;
    let mut tids = Vec::new();
    db.heap().scan_all(old.rel, &mut |tid, _| {
        tids.push(tid);
        Ok(())
    })?;
    let vis = Vis::take(cx.xact);
    let old_types = old.types();
    let indexes = new.indexes.list();
    let keep_inline = |c: usize| indexes.iter().any(|ix| ix.spec.uses_column(c));
    let mut row = Vec::with_capacity(old_types.len());
    let mut out = Vec::new();
    for (n, tid) in tids.into_iter().enumerate() {
        if n % 256 == 0 && cx.cancel.load(Ordering::Relaxed) {
            return Err(PgError::query_canceled());
        }
        if !dirty_live(cx, &vis, old, tid)? {
            continue;
        }
        let found = db.heap().fetch_any(old.rel, tid, |_, data| {
            old.decode_into(data, &old_types, &mut row, db.heap())
        })?;
        match found {
            None => continue,
            Some(r) => r?,
        }
        let mut new_row = row.clone();
        for (v, c) in new_row.iter_mut().zip(&new.columns) {
            if c.dropped {
                *v = Value::Null;
            }
        }
        for r in changes {
            let v = eval(&r.expr, &row, &[], &mut StaticContext)?;
            new_row[r.pos] = conform(v, r.ty)?;
        }
        check_new_row(new, &new_row)?;
        let toaster = Toaster {
            heap: db.heap(),
            rel: new.rel,
            xid,
            cid: cx.xact.curcid(),
            compression: ToastCompression::default(),
        };
        toaster.form_tuple(&new_row, &[], &keep_inline, &mut out)?;
        db.heap().insert(new.rel, &out, xid, cx.xact.curcid())?;
    }
    Ok(())
}

/// `v` carrying exactly type `ty` (what the row encoding requires).
fn conform(v: Value, ty: SqlType) -> PgResult<Value> {
    if v.is_null() {
        return Ok(v);
    }
    let vt = v.sql_type();
    let same = vt == ty
        || (vt.is_text_like() && matches!(ty, SqlType::Text | SqlType::Varchar(None)))
        || (vt == SqlType::Numeric(None) && matches!(ty, SqlType::Numeric(None)));
    if same {
        Ok(v)
    } else {
        cast_assign(&v, ty)
    }
}

/// NOT NULL and CHECK over a converted row, with the messages of
/// PostgreSQL's rewrite (ATRewriteTable).
fn check_new_row(table: &TableDef, row: &[Value]) -> PgResult<()> {
    for (c, v) in table.columns.iter().zip(row) {
        if c.not_null && v.is_null() {
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!(
                    "column \"{}\" of relation \"{}\" contains null values",
                    c.name, table.name
                ),
            ));
        }
    }
    if let Some(name) = crate::tablecmds::failing_check(table, row, &mut StaticContext)? {
        return Err(PgError::new(
            sqlstate::CHECK_VIOLATION,
            format!(
                "check constraint \"{name}\" of relation \"{}\" is violated by some row",
                table.name
            ),
        ));
    }
    Ok(())
}

/// The xid of another transaction rewriting `table` (not one of `own`,
/// sorted), if any.
pub fn rewriting_xid(own: &[TransactionId], table: &TableDef) -> Option<TransactionId> {
    let x = table.rewriting.load(Ordering::Acquire);
    if x == 0 {
        return None;
    }
    let x = TransactionId(x);
    (own.binary_search(&x).is_err()).then_some(x)
}

/// A writer holding `table`'s relation lock: 40001 if another
/// transaction began rewriting the table after the writer bound its
/// statement (it would write to the file being replaced). The rewrite
/// sets its mark before it waits for the relation lock, so a writer
/// either finishes before the rewrite reads the file or sees the mark.
pub fn check_not_rewriting(own: &[TransactionId], table: &TableDef) -> PgResult<()> {
    match rewriting_xid(own, table) {
        None => Ok(()),
        Some(_) => Err(PgError::new(
            sqlstate::SERIALIZATION_FAILURE,
            format!(
                "could not serialize access: table \"{}\" is being rewritten by a concurrent ALTER TABLE",
                table.name
            ),
        )),
    }
}

/// A writer of `table` (a descriptor version it looked up): if another
/// transaction is rewriting the table, waits for it to end and returns
/// true — the caller binds its statement again, against whatever that
/// transaction left.
pub fn wait_for_rewrite(
    xact: &engine::xact::Xact,
    table: &TableDef,
    cancel: &std::sync::atomic::AtomicBool,
    limits: txn::lmgr::WaitLimits,
) -> PgResult<bool> {
    let Some(x) = rewriting_xid(xact.own().xids, table) else {
        return Ok(false);
    };
    xact.wait_for_xid(x, cancel, limits)?;
    // Its session clears the mark when the transaction ends; if that
    // session is gone, the mark is stale.
    let _ = table
        .rewriting
        .compare_exchange(x.0, 0, Ordering::AcqRel, Ordering::Acquire);
    Ok(true)
}

/// A statement that failed to bind: if other transactions are rewriting
/// tables, waits for them (true) — the statement may have been bound
/// against a definition they replace. Scans the table list, on the error
/// path only.
pub fn wait_for_any_rewrite(
    db: &Engine,
    xact: &engine::xact::Xact,
    cancel: &std::sync::atomic::AtomicBool,
    limits: txn::lmgr::WaitLimits,
) -> PgResult<bool> {
    let mut waited = false;
    for t in db.catalog().tables() {
        waited |= wait_for_rewrite(xact, &t, cancel, limits)?;
    }
    Ok(waited)
}

/// COMMIT of a rewrite: the old heap file goes (see the module doc).
pub(crate) fn commit_pending(db: &Engine, p: PendingDdl) {
    let PendingDdl::Rewrite {
        oid,
        old_rel,
        marked,
        ..
    } = p
    else {
        return;
    };
    let Some(t) = db.catalog().by_oid(oid) else {
        // Dropped later in the transaction: its current file went with it.
        if let Err(e) = db.heap().drop_relation(old_rel) {
            tracing::warn!("could not drop rewritten relation {old_rel}: {}", e.message);
        }
        return;
    };
    if marked {
        t.rewriting.store(0, Ordering::Release);
    }
    if t.rel == old_rel {
        return;
    }
    if let Err(e) = engine::indexing::settle_rewrite(db, &t, old_rel) {
        tracing::warn!(
            "could not finish the rewrite of \"{}\" at commit: {}",
            t.name,
            e.message
        );
    }
}

/// ROLLBACK of a rewrite: the `Alter` undo (newer, so run first) went
/// back to the old file; the new one goes.
pub(crate) fn abort_pending(db: &Engine, p: PendingDdl) {
    let PendingDdl::Rewrite {
        oid,
        new_rel,
        marked,
        ..
    } = p
    else {
        return;
    };
    let t = db.catalog().by_oid(oid);
    if let Some(t) = &t {
        if t.rel == new_rel {
            tracing::warn!(
                "relation {new_rel} of \"{}\" kept: the table still uses it",
                t.name
            );
            return;
        }
    }
    if let Err(e) = db.heap().drop_relation(new_rel) {
        tracing::warn!("could not drop relation {new_rel}: {}", e.message);
    }
    if let Some(t) = t {
        // Going back to a file whose index set was not kept (a second
        // rewrite undone) gives empty copies: fill them.
        if let Err(e) = engine::indexing::build_unready_indexes(db, &t) {
            tracing::warn!(
                "could not rebuild the indexes of \"{}\": {}",
                t.name,
                e.message
            );
        }
        if marked {
            t.rewriting.store(0, Ordering::Release);
        }
    }
}
