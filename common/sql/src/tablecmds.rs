//! ALTER TABLE and table constraints (PostgreSQL's `commands/tablecmds.c`
//! and the CHECK half of `executor/execMain.c`).
//!
//! ## One change per step, undone as a whole
//!
//! Every ALTER TABLE action that changes the table's definition — ADD /
//! DROP / RENAME COLUMN, SET / DROP DEFAULT, SET / DROP NOT NULL, RENAME TO,
//! ADD / DROP CONSTRAINT — computes the table's whole new [`TableSpec`] and
//! applies it as one `CatalogChange::AlterTable` (WAL-logged, replayed by a
//! standby, persisted in the catalog file). The statement records a
//! [`PendingDdl::Alter`] holding the definition from before: ROLLBACK (or
//! ROLLBACK TO a savepoint before it) applies that definition again, newest
//! first, so several ALTERs in one block unwind in order.
//!
//! While the transaction runs, the new version carries its xid
//! (`TableDef::altered_by`) and the committed definition it started from
//! (`TableDef::previous`). Other sessions — on the primary and on a hot
//! standby — look names up through `CatalogView`, which hands them that
//! previous version until the clog says the ALTER committed: they never see
//! a column or a name that may vanish. A second ALTER TABLE of the same
//! table waits for the first transaction to end (PostgreSQL's
//! AccessExclusiveLock, for ALTER only). After a crash or a promotion,
//! `engine::indexing::resolve_uncommitted_ddl` puts back the previous
//! definition of every ALTER whose transaction never committed.
//!
//! ALTER COLUMN … TYPE is the one action that rewrites the table into a
//! new heap file: `crate::tablerewrite`, on the same undo machinery.
//!
//! ## The tuple format never shrinks
//!
//! A dropped column stays in `columns` with `dropped` set and PostgreSQL's
//! `........pg.dropped.N........` name (attisdropped): rows written before
//! keep decoding, statements never see it. ADD COLUMN with a DEFAULT stores
//! the default's value, evaluated once, as the column's missing value
//! (attmissingval): rows written before the column existed read it instead
//! of NULL (`TableDef::decode_into`); no row is rewritten. Indexes whose
//! key uses a dropped column go at COMMIT ([`PendingDdl::DropIndex`]), so
//! a ROLLBACK finds them complete.
//!
//! ## Constraints
//!
//! The table's constraints are a list of `ConstraintSpec` (pg_constraint
//! rows): PRIMARY KEY and UNIQUE name their index, CHECK keeps its
//! expression's SQL text. Writers evaluate the CHECKs of a descriptor
//! version bound once and cached on it ([`check_row`]); a CHECK that is
//! false (not NULL) fails with 23514. Adding a CHECK or SET NOT NULL
//! scans the table: every version that is live or may become live
//! (SnapshotDirty, waiting for in-progress writers) must pass.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::ddl::{dirty_live, DdlCtx, PendingDdl};
use crate::expr::{bind_assign, bind_expr, EvalContext, Expr, ParamTypes, Scope};
use crate::functions::StaticContext;
use crate::planner::{ident_name, object_name};
use engine::catalog::{
    dropped_column_name, CatalogChange, ColumnDef, ConstraintKind, ConstraintSpec, TableDef,
    TableSpec,
};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use pgtypes::TransactionId;

// ---------------------------------------------------------------------------
// CHECK constraints at write time
// ---------------------------------------------------------------------------

/// The bound CHECK expressions of one descriptor version.
struct BoundChecks(Vec<(String, Expr)>);

/// Binds a CHECK expression over the table's row.
fn bind_check(table: &TableDef, text: &str) -> PgResult<Expr> {
    let ast = crate::parser::parse_expr_text(text)?;
    let cols: Vec<(String, SqlType)> = table
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.ty))
        .collect();
    let scope = Scope::for_table(&table.name, &cols);
    let b = bind_expr(&ast, &scope, &mut ParamTypes::new())?;
    if b.ty != SqlType::Bool && b.ty != SqlType::Unknown {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument of CHECK must be type boolean, not type {}",
                b.ty.pg_name()
            ),
        ));
    }
    Ok(b.expr)
}

fn checks_of(table: &TableDef) -> PgResult<Option<Arc<BoundChecks>>> {
    if !table
        .constraints
        .iter()
        .any(|c| c.kind == ConstraintKind::Check)
    {
        return Ok(None);
    }
    if let Some(c) = table.sql_cache.get() {
        if let Ok(b) = c.clone().downcast::<BoundChecks>() {
            return Ok(Some(b));
        }
    }
    let mut v = Vec::new();
    for c in &table.constraints {
        if let (ConstraintKind::Check, Some(text)) = (c.kind, &c.check) {
            v.push((c.name.clone(), bind_check(table, text)?));
        }
    }
    let b = Arc::new(BoundChecks(v));
    let _ = table.sql_cache.set(b.clone());
    Ok(Some(b))
}

/// The name of the first CHECK constraint of `table` that is false for
/// `row` (conformed to the column types).
pub(crate) fn failing_check(
    table: &TableDef,
    row: &[Value],
    cx: &mut dyn EvalContext,
) -> PgResult<Option<String>> {
    let Some(checks) = checks_of(table)? else {
        return Ok(None);
    };
    for (name, e) in &checks.0 {
        if let Value::Bool(false) = crate::expr::eval(e, row, &[], cx)? {
            return Ok(Some(name.clone()));
        }
    }
    Ok(None)
}

/// Binds the table's CHECKs (errors for a bad expression).
pub fn checks_bind(table: &TableDef) -> PgResult<()> {
    checks_of(table).map(|_| ())
}

/// 23514 unless every CHECK constraint of `table` holds (or is NULL) for
/// `row` (conformed to the column types).
pub fn check_row(table: &TableDef, row: &[Value], cx: &mut dyn EvalContext) -> PgResult<()> {
    let Some(checks) = checks_of(table)? else {
        return Ok(());
    };
    for (name, e) in &checks.0 {
        if let Value::Bool(false) = crate::expr::eval(e, row, &[], cx)? {
            return Err(PgError::new(
                sqlstate::CHECK_VIOLATION,
                format!(
                    "new row for relation \"{}\" violates check constraint \"{name}\"",
                    table.name
                ),
            )
            .with_detail(format!(
                "Failing row contains ({}).",
                crate::executor::row_text(table, row)
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Constraint definitions
// ---------------------------------------------------------------------------

/// The columns of `table` an expression names, in order of first use.
fn referenced_columns(e: &ast::Expr, columns: &[ColumnDef]) -> Vec<usize> {
    use std::ops::ControlFlow;
    let mut out = Vec::new();
    let _ = ast::visit_expressions(e, |x| {
        let id = match x {
            ast::Expr::Identifier(i) => Some(i),
            ast::Expr::CompoundIdentifier(v) => v.last(),
            _ => None,
        };
        if let Some(i) = id {
            let n = ident_name(i);
            if let Some(c) = columns.iter().position(|c| c.name == n && !c.dropped) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// PostgreSQL's ChooseConstraintName: `table_col_suffix` (or `table_suffix`
/// for no single column), numbered until no constraint or relation has it.
pub fn choose_constraint_name(
    cx: &DdlCtx<'_>,
    ns: Option<pgtypes::Oid>,
    table: &str,
    cols: &[&str],
    suffix: &str,
    taken: &[ConstraintSpec],
) -> String {
    crate::ddl::choose_name(cx.db, ns, table, cols, suffix, taken)
}

/// A CHECK constraint for `columns` (the table's, as being defined):
/// column-level checks are named after their column, table-level ones
/// after the one column they use (or `table_check`).
pub fn check_constraint(
    cx: &DdlCtx<'_>,
    table: &str,
    name: Option<&ast::Ident>,
    column: Option<usize>,
    expr: &ast::Expr,
    columns: &[ColumnDef],
    taken: &[ConstraintSpec],
) -> PgResult<ConstraintSpec> {
    let used = referenced_columns(expr, columns);
    let name = match name {
        Some(n) => ident_name(n),
        None => {
            let col = column.or(if used.len() == 1 { Some(used[0]) } else { None });
            let cols: Vec<&str> = col.iter().map(|c| columns[*c].name.as_str()).collect();
            choose_constraint_name(cx, None, table, &cols, "check", taken)
        }
    };
    if taken.iter().any(|c| c.name == name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!("constraint \"{name}\" for relation \"{table}\" already exists"),
        ));
    }
    Ok(ConstraintSpec {
        name,
        kind: ConstraintKind::Check,
        columns: used,
        check: Some(expr.to_string()),
        index: None,
        foreign: None,
        deferrable: false,
        initially_deferred: false,
        not_valid: false,
        match_full: false,
    })
}

/// A PRIMARY KEY / UNIQUE constraint entry for index `index`.
pub fn key_constraint(name: &str, primary: bool, columns: Vec<usize>) -> ConstraintSpec {
    ConstraintSpec {
        name: name.to_string(),
        kind: if primary {
            ConstraintKind::PrimaryKey
        } else {
            ConstraintKind::Unique
        },
        columns,
        check: None,
        index: Some(name.to_string()),
        foreign: None,
        deferrable: false,
        initially_deferred: false,
        not_valid: false,
        match_full: false,
    }
}

// ---------------------------------------------------------------------------
// ALTER TABLE
// ---------------------------------------------------------------------------

/// The current descriptor of table `oid`, after waiting for any other
/// transaction's uncommitted ALTER of it to end.
pub(crate) fn lock_for_alter(cx: &mut DdlCtx<'_>, oid: pgtypes::Oid) -> PgResult<Arc<TableDef>> {
    loop {
        let t = cx
            .db
            .catalog()
            .by_oid(oid)
            .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_TABLE, "table was dropped"))?;
        let x = t.altered_by.load(Ordering::Acquire);
        if x == 0 {
            return Ok(t);
        }
        let seen = t.version_for(cx.xact.own().xids, cx.db.clog());
        if Arc::ptr_eq(&seen, &t) {
            return Ok(t);
        }
        cx.xact
            .wait_for_xid(TransactionId(x), cx.cancel, cx.limits)?;
        // Ended without committing and its session did not undo it (it
        // went away): put the committed definition back, as start-up would.
        if let Some(t) = cx.db.catalog().by_oid(oid) {
            if t.altered_by.load(Ordering::Acquire) == x
                && !Arc::ptr_eq(&t.version_for(&[], cx.db.clog()), &t)
                && t.previous.is_some()
                && cx.db.clog().get_status(TransactionId(x)) != txn::clog::XidStatus::Committed
            {
                // Its session may be undoing it at the same moment:
                // whichever comes second finds nothing left to undo.
                if let Err(e) = engine::indexing::undo_alter(cx.db, &t) {
                    tracing::debug!("ALTER TABLE undo raced with its session's: {}", e.message);
                }
            }
        }
    }
}

/// ALTER TABLE … RENAME CONSTRAINT: transactional like every ALTER TABLE
/// (a new definition with the constraint renamed); its comment moves with
/// it. A PRIMARY KEY / UNIQUE constraint is named like its index, and an
/// index cannot be renamed yet: 0A000.
fn rename_constraint(
    cx: &mut DdlCtx<'_>,
    seen: &Arc<TableDef>,
    old: &str,
    new: &str,
) -> PgResult<()> {
    let table = lock_for_alter(cx, seen.oid)?;
    let Some(c) = table.constraint(old).cloned() else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!(
                "constraint \"{old}\" for table \"{}\" does not exist",
                table.name
            ),
        ));
    };
    if table.constraint(new).is_some() {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!(
                "constraint \"{new}\" for relation \"{}\" already exists",
                table.name
            ),
        ));
    }
    if matches!(c.kind, ConstraintKind::PrimaryKey | ConstraintKind::Unique) {
        return Err(PgError::unsupported(
            "RENAME CONSTRAINT of a PRIMARY KEY or UNIQUE constraint (its index would be renamed) is not supported",
        ));
    }
    let mut spec = table.spec();
    for k in spec.constraints.iter_mut().filter(|k| k.name == old) {
        k.name = new.to_string();
    }
    alter_definition(cx, &table, spec)?;
    let key = |name: &str| engine::comment::CommentKey {
        classoid: engine::comment::PG_CONSTRAINT,
        objoid: table.oid,
        subid: 0,
        name: name.to_string(),
    };
    let text = cx
        .db
        .catalog()
        .comment(&key(old))
        .and_then(|c| c.text.clone());
    if let Some(text) = text {
        crate::comment::set_comment(cx, key(old), None)?;
        crate::comment::set_comment(cx, key(new), Some(&text))?;
    }
    Ok(())
}

/// ALTER TABLE … SET SCHEMA: the table (and its indexes, which live in
/// its schema) moves to schema `ns` (called `schema`).
pub fn set_table_schema(
    cx: &mut DdlCtx<'_>,
    seen: &Arc<TableDef>,
    ns: pgtypes::Oid,
    schema: &str,
) -> PgResult<()> {
    let table = lock_for_alter(cx, seen.oid)?;
    if table.namespace == ns {
        return Ok(());
    }
    let taken = crate::ddl::relation_exists(cx.db, ns, &table.name)
        || table
            .indexes
            .list()
            .iter()
            .any(|i| crate::ddl::relation_exists(cx.db, ns, &i.spec.name));
    if taken {
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            format!(
                "relation \"{}\" already exists in schema \"{schema}\"",
                table.name
            ),
        ));
    }
    let mut spec = table.spec();
    spec.namespace = ns;
    alter_definition(cx, &table, spec)?;
    Ok(())
}

/// Applies `spec` as the new definition of `table` and records the undo.
pub(crate) fn alter_definition(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    spec: TableSpec,
) -> PgResult<Arc<TableDef>> {
    let xid = cx.xact.assign_xid()?;
    apply_definition(cx, table, spec, xid, false)
}

/// [`alter_definition`] as transaction `xid`. `versioned`: keep the
/// committed definition as the previous version even for a table this
/// transaction created (a rewrite: ROLLBACK TO a savepoint needs the old
/// heap file and its indexes back; `crate::tablerewrite`).
pub(crate) fn apply_definition(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    mut spec: TableSpec,
    xid: TransactionId,
    versioned: bool,
) -> PgResult<Arc<TableDef>> {
    let before = table.spec();
    if !versioned && table.creator.load(Ordering::Acquire) != 0 {
        // Created by this transaction: nobody else sees it anyway.
        spec.altered_by = TransactionId::INVALID;
        spec.previous = None;
    } else if before.altered_by.is_valid() {
        // Already altered by this transaction: the committed version stays
        // the one others see.
        spec.altered_by = before.altered_by;
        spec.previous = before.previous.clone();
    } else {
        spec.altered_by = xid;
        spec.previous = Some(Box::new(TableSpec {
            previous: None,
            altered_by: TransactionId::INVALID,
            ..before.clone()
        }));
    }
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterTable {
            name: table.key(),
            spec,
        })?;
    cx.pending.push(PendingDdl::Alter {
        oid: table.oid,
        before,
    });
    cx.db
        .catalog()
        .by_oid(table.oid)
        .ok_or_else(|| PgError::internal("altered table vanished"))
}

pub(crate) fn undefined_column_of(col: &str, table: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{col}\" of relation \"{table}\" does not exist"),
    )
}

fn undefined_column(col: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{col}\" does not exist"),
    )
}

fn duplicate_column(col: &str, table: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_COLUMN,
        format!("column \"{col}\" of relation \"{table}\" already exists"),
    )
}

/// Evaluates a DEFAULT once (the missing value of an added column);
/// None for NULL.
fn default_value(text: &str, col: &ColumnDef) -> PgResult<Option<String>> {
    Ok(match constant_default(text, col)? {
        Value::Null => None,
        // An enum label by OID: it survives RENAME VALUE (see
        // `ColumnDef::missing`).
        Value::Enum(o) => Some(o.to_string()),
        v => Some(v.to_text_string()),
    })
}

/// The value of a DEFAULT expression that needs no row and no session
/// (a constant, a cast, arithmetic on them).
pub(crate) fn constant_default(text: &str, col: &ColumnDef) -> PgResult<Value> {
    let ast = crate::parser::parse_expr_text(text)?;
    let e = bind_assign(
        &ast,
        &Scope::new(),
        &mut ParamTypes::new(),
        col.ty,
        &col.name,
    )?;
    crate::expr::eval(&e, &[], &[], &mut StaticContext)
}

/// Checks a DEFAULT expression binds for the column's type.
fn check_default(text: &str, col: &ColumnDef) -> PgResult<()> {
    let ast = crate::parser::parse_expr_text(text)?;
    bind_assign(
        &ast,
        &Scope::new(),
        &mut ParamTypes::new(),
        col.ty,
        &col.name,
    )
    .map(|_| ())
}

/// Calls `bad` for the first version, live or possibly live, whose row
/// (decoded with `table`'s definition) fails `test`.
fn scan_live(
    cx: &mut DdlCtx<'_>,
    table: &TableDef,
    test: &mut dyn FnMut(&[Value]) -> PgResult<bool>,
) -> PgResult<bool> {
    let types = table.types();
    let mut row = Vec::with_capacity(types.len());
    let mut failing = Vec::new();
    cx.db.heap().scan_all(table.rel, &mut |tid, data| {
        table.decode_into(data, &types, &mut row, cx.db.heap())?;
        if !test(&row)? {
            failing.push(tid);
        }
        Ok(())
    })?;
    if failing.is_empty() {
        return Ok(false);
    }
    let vis = crate::executor::Vis::take(cx.xact);
    for tid in failing {
        if dirty_live(cx, &vis, table, tid)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn contains_nulls(col: &str, table: &str) -> PgError {
    PgError::new(
        sqlstate::NOT_NULL_VIOLATION,
        format!("column \"{col}\" of relation \"{table}\" contains null values"),
    )
}

/// Fails if an existing row violates CHECK `c` (bound over `table`).
fn validate_check(cx: &mut DdlCtx<'_>, table: &TableDef, c: &ConstraintSpec) -> PgResult<()> {
    let e = bind_check(table, c.check.as_deref().unwrap_or("true"))?;
    let mut ctx = StaticContext;
    let bad = scan_live(cx, table, &mut |row| {
        Ok(!matches!(
            crate::expr::eval(&e, row, &[], &mut ctx)?,
            Value::Bool(false)
        ))
    })?;
    if bad {
        return Err(PgError::new(
            sqlstate::CHECK_VIOLATION,
            format!(
                "check constraint \"{}\" of relation \"{}\" is violated by some row",
                c.name, table.name
            ),
        ));
    }
    Ok(())
}

/// ALTER TABLE: each action in turn, each its own catalog change.
pub fn alter_table(
    cx: &mut DdlCtx<'_>,
    name: &ast::ObjectName,
    ops: &[ast::AlterTableOperation],
    if_exists: bool,
) -> PgResult<String> {
    let qname = crate::namespace::QualName::of(name)?;
    let tname = qname.display();
    if let [ast::AlterTableOperation::RenameTable { table_name }] = ops {
        if let Some(v) = crate::namespace::find_view(&cx.catalog(), &qname) {
            crate::view::rename_view(cx, &v, &object_name(table_name))?;
            return Ok("ALTER TABLE".into());
        }
    }
    let Some(seen) = crate::namespace::find_table(&cx.catalog(), &qname) else {
        if if_exists {
            cx.notices.push(PgError::notice(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{tname}\" does not exist, skipping"),
            ));
            return Ok("ALTER TABLE".into());
        }
        return Err(engine::catalog::undefined_table(&tname));
    };
    let oid = seen.oid;
    // ALTER COLUMN … TYPE actions: one rewrite for the statement's run of
    // them (their USING expressions all read the row as it was).
    fn type_change(op: &ast::AlterTableOperation) -> Option<crate::tablerewrite::TypeChange<'_>> {
        match op {
            ast::AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDataType { data_type, using },
            } => Some(crate::tablerewrite::TypeChange {
                column: column_name,
                data_type,
                using: using.as_ref(),
            }),
            _ => None,
        }
    }
    let mut i = 0;
    while i < ops.len() {
        let mut changes = Vec::new();
        while let Some(c) = ops.get(i).and_then(type_change) {
            changes.push(c);
            i += 1;
        }
        if !changes.is_empty() {
            crate::tablerewrite::alter_column_types(cx, oid, &changes)?;
            continue;
        }
        let table = lock_for_alter(cx, oid)?;
        table.check_not_dropped()?;
        alter_one(cx, &table, &ops[i])?;
        i += 1;
    }
    Ok("ALTER TABLE".into())
}

fn alter_one(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    op: &ast::AlterTableOperation,
) -> PgResult<()> {
    use ast::AlterTableOperation as Op;
    let tname = table.name.clone();
    let mut spec = table.spec();
    match op {
        Op::AddColumn {
            if_not_exists,
            column_def,
            ..
        } => {
            let cname = ident_name(&column_def.name);
            if table.column_index(&cname).is_some() {
                if *if_not_exists {
                    cx.notices.push(PgError::notice(
                        sqlstate::DUPLICATE_COLUMN,
                        format!(
                            "column \"{cname}\" of relation \"{tname}\" already exists, skipping"
                        ),
                    ));
                    return Ok(());
                }
                return Err(duplicate_column(&cname, &tname));
            }
            if crate::sequence::serial_type(&column_def.data_type).is_some() {
                // PostgreSQL numbers the existing rows (a rewrite).
                return Err(PgError::unsupported(
                    "ALTER TABLE … ADD COLUMN of a serial column is not supported",
                ));
            }
            let ty = SqlType::from_data_type(&column_def.data_type)?;
            let mut col = ColumnDef::new(&cname, ty);
            let pos = spec.columns.len();
            let mut key: Option<(bool, Option<String>)> = None;
            let mut checks = Vec::new();
            let mut fks = Vec::new();
            for o in &column_def.options {
                match &o.option {
                    ast::ColumnOption::Null => col.not_null = false,
                    ast::ColumnOption::NotNull => col.not_null = true,
                    ast::ColumnOption::Default(e) => col.default = Some(e.to_string()),
                    ast::ColumnOption::Unique { is_primary, .. } => {
                        if *is_primary {
                            col.not_null = true;
                        }
                        key = Some((*is_primary, o.name.as_ref().map(ident_name)));
                    }
                    ast::ColumnOption::Check(e) => checks.push((o.name.clone(), e.clone())),
                    ast::ColumnOption::ForeignKey { .. } => {
                        fks.extend(FkClause::of_column(o, pos));
                    }
                    other => {
                        return Err(PgError::unsupported(format!(
                            "column option {other} is not supported"
                        )))
                    }
                }
            }
            if let Some(d) = &col.default {
                col.missing = default_value(d, &col)?;
            }
            if col.not_null && col.missing.is_none() && scan_live(cx, table, &mut |_| Ok(false))? {
                return Err(contains_nulls(&cname, &tname));
            }
            spec.columns.push(col);
            let mut new_checks = Vec::new();
            for (n, e) in checks {
                let c = check_constraint(
                    cx,
                    &tname,
                    n.as_ref(),
                    Some(pos),
                    &e,
                    &spec.columns,
                    &spec.constraints,
                )?;
                spec.constraints.push(c.clone());
                new_checks.push(c);
            }
            let t = alter_definition(cx, table, spec)?;
            for c in &new_checks {
                validate_check(cx, &t, c)?;
            }
            if let Some((primary, name)) = key {
                add_key(cx, &t, name, vec![pos], primary)?;
            }
            // REFERENCES on the new column: a constraint added after it,
            // checked against the rows' values (NULL, or the default).
            for clause in fks {
                let t = lock_for_alter(cx, table.oid)?;
                add_foreign_key(cx, &t, &clause)?;
            }
        }
        Op::DropColumn {
            column_name,
            if_exists,
            cascade,
        } => {
            let cname = ident_name(column_name);
            let Some(pos) = table.column_index(&cname) else {
                if *if_exists {
                    cx.notices.push(PgError::notice(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{cname}\" of relation \"{tname}\" does not exist, skipping"
                        ),
                    ));
                    return Ok(());
                }
                return Err(undefined_column_of(&cname, &tname));
            };
            drop_column_dependents(cx, table, pos, *cascade)?;
            crate::view::check_column_dependents(cx, (table.oid, &tname), &cname, *cascade)?;
            let col = &mut spec.columns[pos];
            col.dropped = true;
            col.name = dropped_column_name(pos);
            col.not_null = false;
            col.default = None;
            // Constraints, indexes and the comment of the column go with it.
            spec.constraints.retain(|c| !c.columns.contains(&pos));
            spec.comments.retain(|(sub, _)| *sub as usize != pos + 1);
            for ix in table.indexes.list() {
                if ix.spec.uses_column(pos) {
                    cx.pending.push(PendingDdl::DropIndex {
                        oid: table.oid,
                        index: ix.spec.name.clone(),
                    });
                }
            }
            alter_definition(cx, table, spec)?;
        }
        Op::RenameColumn {
            old_column_name,
            new_column_name,
        } => {
            let old = ident_name(old_column_name);
            let new = ident_name(new_column_name);
            let pos = table
                .column_index(&old)
                .ok_or_else(|| undefined_column(&old))?;
            if table.column_index(&new).is_some() {
                return Err(duplicate_column(&new, &tname));
            }
            spec.columns[pos].name = new.clone();
            for c in spec.constraints.iter_mut() {
                if let (Some(text), true) = (&c.check, c.columns.contains(&pos)) {
                    c.check = Some(rename_in_expr(text, &old, &new)?);
                }
            }
            alter_definition(cx, table, spec)?;
            crate::view::follow_rename(cx, table.oid, &tname, &tname, Some((&old, &new)))?;
        }
        Op::RenameTable { table_name } => {
            let new = object_name(table_name);
            if crate::ddl::relation_exists(cx.db, table.namespace, &new) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{new}\" already exists"),
                ));
            }
            spec.name = new.clone();
            alter_definition(cx, table, spec)?;
            crate::view::follow_rename(cx, table.oid, &tname, &new, None)?;
        }
        Op::AlterColumn { column_name, op } => {
            let cname = ident_name(column_name);
            let pos = table
                .column_index(&cname)
                .ok_or_else(|| undefined_column_of(&cname, &tname))?;
            match op {
                ast::AlterColumnOperation::SetDefault { value } => {
                    let text = value.to_string();
                    check_default(&text, &spec.columns[pos])?;
                    spec.columns[pos].default = Some(text);
                }
                ast::AlterColumnOperation::DropDefault => spec.columns[pos].default = None,
                ast::AlterColumnOperation::SetNotNull => {
                    if !spec.columns[pos].not_null
                        && scan_live(cx, table, &mut |row| Ok(!row[pos].is_null()))?
                    {
                        return Err(contains_nulls(&cname, &tname));
                    }
                    spec.columns[pos].not_null = true;
                }
                ast::AlterColumnOperation::DropNotNull => {
                    if table
                        .primary_key()
                        .is_some_and(|pk| pk.spec.columns.contains(&pos))
                    {
                        return Err(PgError::new(
                            sqlstate::INVALID_TABLE_DEFINITION,
                            format!("column \"{cname}\" is in a primary key"),
                        ));
                    }
                    spec.columns[pos].not_null = false;
                }
                other => {
                    return Err(PgError::unsupported(format!(
                        "ALTER TABLE … ALTER COLUMN {other} is not supported"
                    )))
                }
            }
            alter_definition(cx, table, spec)?;
        }
        Op::AddConstraint(tc) => add_constraint(cx, table, tc)?,
        Op::RenameConstraint { old_name, new_name }
            if new_name.value == crate::parser::VALIDATE =>
        {
            validate_constraint(cx, table, &ident_name(old_name))?
        }
        Op::RenameConstraint { old_name, new_name } => {
            rename_constraint(cx, table, &ident_name(old_name), &ident_name(new_name))?
        }
        Op::DropConstraint {
            if_exists, name, ..
        } => {
            let cname = ident_name(name);
            let Some(c) = table.constraint(&cname).cloned() else {
                let msg = format!("constraint \"{cname}\" of relation \"{tname}\" does not exist");
                if *if_exists {
                    cx.notices.push(PgError::notice(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("{msg}, skipping"),
                    ));
                    return Ok(());
                }
                return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, msg));
            };
            if c.index.is_some() && c.kind != ConstraintKind::ForeignKey {
                refuse_if_referenced(cx, table, &c, &cname)?;
            }
            spec.constraints.retain(|x| x.name != cname);
            if let (Some(ix), false) = (&c.index, c.kind == ConstraintKind::ForeignKey) {
                cx.pending.push(PendingDdl::DropIndex {
                    oid: table.oid,
                    index: ix.clone(),
                });
            }
            alter_definition(cx, table, spec)?;
        }
        other => {
            return Err(PgError::unsupported(format!(
                "ALTER TABLE {other} is not supported"
            )))
        }
    }
    Ok(())
}

/// Renames column references `old` → `new` in a CHECK expression's text.
fn rename_in_expr(text: &str, old: &str, new: &str) -> PgResult<String> {
    use std::ops::ControlFlow;
    let mut e = crate::parser::parse_expr_text(text)?;
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        let id = match x {
            ast::Expr::Identifier(i) => Some(i),
            ast::Expr::CompoundIdentifier(v) => v.last_mut(),
            _ => None,
        };
        if let Some(i) = id {
            if ident_name(i) == old {
                *i = ast::Ident::with_quote('"', new);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(e.to_string())
}

/// ALTER TABLE … ADD CONSTRAINT.
fn add_constraint(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    tc: &ast::TableConstraint,
) -> PgResult<()> {
    match tc {
        ast::TableConstraint::PrimaryKey { name, columns, .. } => {
            if table.primary_key().is_some() {
                return Err(PgError::new(
                    sqlstate::INVALID_TABLE_DEFINITION,
                    format!(
                        "multiple primary keys for table \"{}\" are not allowed",
                        table.name
                    ),
                ));
            }
            let cols = crate::ddl::key_columns(table, columns)?;
            add_key(cx, table, name.as_ref().map(ident_name), cols, true)
        }
        ast::TableConstraint::Unique { name, columns, .. } => {
            let cols = crate::ddl::key_columns(table, columns)?;
            add_key(cx, table, name.as_ref().map(ident_name), cols, false)
        }
        ast::TableConstraint::Check { name, expr } => {
            let (name, not_valid) = not_valid_name(name);
            let mut spec = table.spec();
            let mut c = check_constraint(
                cx,
                &table.name,
                name.as_ref(),
                None,
                expr,
                &table.columns,
                &table.constraints,
            )?;
            if not_valid {
                c.not_valid = true;
            } else {
                validate_check(cx, table, &c)?;
            }
            spec.constraints.push(c);
            alter_definition(cx, table, spec)?;
            Ok(())
        }
        ast::TableConstraint::ForeignKey { name, .. } => {
            let (name, not_valid) = not_valid_name(name);
            let mut tc = tc.clone();
            if let ast::TableConstraint::ForeignKey { name: n, .. } = &mut tc {
                *n = name;
            }
            let Some(clause) = FkClause::of_table_constraint(&tc, |n| table.column_index(n))?
            else {
                return Ok(());
            };
            add_foreign_key_checked(cx, table, &clause, !not_valid)
        }
        other => Err(PgError::unsupported(format!(
            "constraint {other} is not supported"
        ))),
    }
}

/// DROP COLUMN of a column other tables' foreign keys reference: 2BP01,
/// or with CASCADE those constraints go (PostgreSQL's NOTICE).
fn drop_column_dependents(
    cx: &mut DdlCtx<'_>,
    table: &TableDef,
    pos: usize,
    cascade: bool,
) -> PgResult<()> {
    let mut deps = Vec::new();
    {
        let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
        let mut children = view.referencing(table.oid);
        children.sort_by_key(|c| c.oid);
        for child in children {
            for c in &child.constraints {
                let uses = c
                    .foreign
                    .as_ref()
                    .is_some_and(|f| f.table == table.oid && f.columns.contains(&pos));
                if uses && child.oid != table.oid {
                    deps.push((child.oid, child.name.clone(), c.name.clone()));
                }
            }
        }
    }
    if deps.is_empty() {
        return Ok(());
    }
    let col = &table.columns[pos].name;
    if !cascade {
        let detail: Vec<String> = deps
            .iter()
            .map(|(_, t, c)| {
                format!(
                    "constraint {c} on table {t} depends on column {col} of table {}",
                    table.name
                )
            })
            .collect();
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!(
                "cannot drop column {col} of table {} because other objects depend on it",
                table.name
            ),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    let objects: Vec<String> = deps
        .iter()
        .map(|(_, t, c)| format!("constraint {c} on table {t}"))
        .collect();
    cx.notices.push(crate::ddl::cascade_notice(&objects));
    for (oid, _, c) in deps {
        remove_constraint(cx, oid, &c)?;
    }
    Ok(())
}

/// Removes constraint `name` from the table with OID `oid` (DROP …
/// CASCADE of what a foreign key references): an ALTER like any other.
pub(crate) fn remove_constraint(
    cx: &mut DdlCtx<'_>,
    oid: pgtypes::Oid,
    name: &str,
) -> PgResult<()> {
    let t = lock_for_alter(cx, oid)?;
    let mut spec = t.spec();
    spec.constraints.retain(|c| c.name != name);
    alter_definition(cx, &t, spec)?;
    Ok(())
}

/// ADD FOREIGN KEY (a table constraint, or REFERENCES on an added
/// column): resolves `clause`, checks the existing rows, records it.
fn add_foreign_key(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    clause: &FkClause<'_>,
) -> PgResult<()> {
    add_foreign_key_checked(cx, table, clause, true)
}

/// A constraint name marked `NOT VALID` by the parser
/// (`crate::parser::NOT_VALID`): the real name (None when there was
/// none) and whether it was marked.
fn not_valid_name(name: &Option<ast::Ident>) -> (Option<ast::Ident>, bool) {
    match name {
        Some(n) if n.value.starts_with(crate::parser::NOT_VALID) => {
            let rest = &n.value[crate::parser::NOT_VALID.len()..];
            let real = (!rest.is_empty()).then(|| ast::Ident::with_quote('"', rest));
            (real, true)
        }
        other => (other.clone(), false),
    }
}

/// `ALTER TABLE t VALIDATE CONSTRAINT c`: checks the existing rows of a
/// CHECK or FOREIGN KEY constraint added `NOT VALID` and marks it valid.
fn validate_constraint(cx: &mut DdlCtx<'_>, table: &Arc<TableDef>, name: &str) -> PgResult<()> {
    let Some(c) = table.constraint(name).cloned() else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!(
                "constraint \"{name}\" of relation \"{}\" does not exist",
                table.name
            ),
        ));
    };
    if !matches!(c.kind, ConstraintKind::Check | ConstraintKind::ForeignKey) {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!(
                "constraint \"{name}\" of relation \"{}\" is not a foreign key or check constraint",
                table.name
            ),
        ));
    }
    if !c.not_valid {
        return Ok(());
    }
    if c.kind == ConstraintKind::Check {
        validate_check(cx, table, &c)?;
    } else if let Some(f) = &c.foreign {
        let target = cx
            .db
            .catalog()
            .tables()
            .into_iter()
            .find(|t| t.oid == f.table)
            .ok_or_else(|| PgError::internal("foreign key target missing"))?;
        validate_foreign_key(cx, table, &target, &c)?;
    }
    let mut spec = table.spec();
    for x in spec.constraints.iter_mut().filter(|x| x.name == name) {
        x.not_valid = false;
    }
    alter_definition(cx, table, spec)?;
    Ok(())
}

fn add_foreign_key_checked(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    clause: &FkClause<'_>,
    check_rows: bool,
) -> PgResult<()> {
    let target = fk_referenced_table(cx, clause.target)?;
    let mut c = foreign_key_constraint(
        cx,
        &table.name,
        &table.columns,
        &table.constraints,
        clause,
        &FkTarget::of(&target),
    )?;
    if check_rows {
        validate_foreign_key(cx, table, &target, &c)?;
    } else {
        c.not_valid = true;
    }
    let mut spec = table.spec();
    spec.constraints.push(c);
    alter_definition(cx, table, spec)?;
    Ok(())
}

/// 2BP01 if a foreign key uses the unique index of constraint `c` of
/// `table` (DROP CONSTRAINT of a referenced key).
fn refuse_if_referenced(
    cx: &DdlCtx<'_>,
    table: &TableDef,
    c: &ConstraintSpec,
    cname: &str,
) -> PgResult<()> {
    let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
    let mut lines = Vec::new();
    let mut children = view.referencing(table.oid);
    children.sort_by_key(|c| c.oid);
    for child in children {
        for fk in &child.constraints {
            let uses =
                fk.foreign.as_ref().is_some_and(|f| f.table == table.oid) && fk.index == c.index;
            if uses {
                lines.push(format!(
                    "constraint {} on table {} depends on index {}",
                    fk.name,
                    child.name,
                    c.index.as_deref().unwrap_or(cname)
                ));
            }
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    Err(PgError::new(
        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
        format!(
            "cannot drop constraint {cname} on table {} because other objects depend on it",
            table.name
        ),
    )
    .with_detail(lines.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
}

/// ADD FOREIGN KEY: every row of `table` that is live or may become live
/// (SnapshotDirty) must have its key in `target`.
pub(crate) fn validate_foreign_key(
    cx: &mut DdlCtx<'_>,
    table: &TableDef,
    target: &TableDef,
    c: &ConstraintSpec,
) -> PgResult<()> {
    let Some(f) = &c.foreign else {
        return Ok(());
    };
    // The referenced keys, as text of the key values (present committed or
    // our own: the dirty check below waits for the rest).
    let mut keys = std::collections::HashSet::new();
    let ttypes = target.types();
    let ktypes: Vec<SqlType> = f.columns.iter().map(|i| ttypes[*i]).collect();
    let mut row = Vec::with_capacity(ttypes.len());
    let mut candidates = Vec::new();
    cx.db.heap().scan_all(target.rel, &mut |tid, data| {
        target.decode_into(data, &ttypes, &mut row, cx.db.heap())?;
        candidates.push((tid, key_text_of(&row, &f.columns, &ktypes)));
        Ok(())
    })?;
    let vis = crate::executor::Vis::take(cx.xact);
    for (tid, k) in candidates {
        if let Some(k) = k {
            if !keys.contains(&k) && dirty_live(cx, &vis, target, tid)? {
                keys.insert(k);
            }
        }
    }
    let mut bad: Option<Vec<Value>> = None;
    let violated = scan_live(cx, table, &mut |row| {
        let k = key_text_of(row, &c.columns, &ktypes);
        let ok = match k {
            None => true,
            Some(k) => keys.contains(&k),
        };
        if !ok && bad.is_none() {
            bad = Some(c.columns.iter().map(|i| row[*i].clone()).collect());
        }
        Ok(ok)
    })?;
    if c.match_full {
        let mixed = scan_live(cx, table, &mut |row| {
            Ok(!crate::ri_triggers::mixes_nulls(row, &c.columns))
        })?;
        if mixed {
            return Err(crate::ri_triggers::match_full_violation(
                &table.name,
                &c.name,
            ));
        }
    }
    if let (true, Some(key)) = (violated, bad) {
        let names: Vec<&str> = c
            .columns
            .iter()
            .map(|i| table.columns[*i].name.as_str())
            .collect();
        let vals: Vec<String> = key.iter().map(|v| v.to_text_string()).collect();
        return Err(PgError::new(
            sqlstate::FOREIGN_KEY_VIOLATION,
            format!(
                "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                table.name, c.name
            ),
        )
        .with_detail(format!(
            "Key ({})=({}) is not present in table \"{}\".",
            names.join(", "),
            vals.join(", "),
            target.name
        )));
    }
    Ok(())
}

/// The key at `cols` of `row` as comparable text, each value cast to the
/// referenced column's type (`types`, in key order); None when a key
/// column is NULL.
fn key_text_of(row: &[Value], cols: &[usize], types: &[SqlType]) -> Option<String> {
    let mut out = String::new();
    for (c, ty) in cols.iter().zip(types) {
        let v = row.get(*c)?;
        if v.is_null() {
            return None;
        }
        let v = pgtypes::value::cast_assign(v, *ty).ok()?;
        out.push_str(&v.to_text_string());
        out.push('\u{0}');
    }
    Some(out)
}

/// ADD PRIMARY KEY / UNIQUE: builds the index (its own pending creation),
/// then records the constraint.
fn add_key(
    cx: &mut DdlCtx<'_>,
    table: &Arc<TableDef>,
    name: Option<String>,
    cols: Vec<usize>,
    primary: bool,
) -> PgResult<()> {
    if primary && table.primary_key().is_some() {
        return Err(PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!(
                "multiple primary keys for table \"{}\" are not allowed",
                table.name
            ),
        ));
    }
    let iname = match name {
        Some(n) => n,
        None if primary => format!("{}_pkey", table.name),
        None => {
            let names: Vec<&str> = cols
                .iter()
                .map(|c| table.columns[*c].name.as_str())
                .collect();
            choose_constraint_name(
                cx,
                Some(table.namespace),
                &table.name,
                &names,
                "key",
                &table.constraints,
            )
        }
    };
    crate::ddl::build_new_index(cx, table, iname.clone(), cols.clone(), true, primary)?;
    // The index build may have set NOT NULL: start from the newest version.
    let t = lock_for_alter(cx, table.oid)?;
    let mut spec = t.spec();
    spec.constraints.push(key_constraint(&iname, primary, cols));
    alter_definition(cx, &t, spec)?;
    Ok(())
}

// ---------------------------------------------------------------------------
// FOREIGN KEY constraints
// ---------------------------------------------------------------------------

/// The referenced side of a FOREIGN KEY as its resolution needs it: an
/// existing table, or the table a CREATE TABLE is defining (a key to
/// itself).
pub struct FkTarget<'a> {
    /// The table's OID.
    pub oid: pgtypes::Oid,
    /// Its name (for messages).
    pub name: &'a str,
    /// Its columns.
    pub columns: &'a [ColumnDef],
    /// Its unique keys: (index name, key columns, primary).
    pub keys: Vec<(String, Vec<usize>, bool)>,
}

impl<'a> FkTarget<'a> {
    /// The target for an existing table: its unique indexes.
    pub fn of(t: &'a TableDef) -> FkTarget<'a> {
        FkTarget {
            oid: t.oid,
            name: &t.name,
            columns: &t.columns,
            keys: t
                .indexes
                .list()
                .iter()
                .filter(|i| i.spec.unique && i.spec.is_plain())
                .map(|i| (i.spec.name.clone(), i.spec.columns.clone(), i.spec.primary))
                .collect(),
        }
    }
}

/// The parts of a FOREIGN KEY clause (column or table constraint).
pub struct FkClause<'a> {
    /// CONSTRAINT name.
    pub name: Option<&'a ast::Ident>,
    /// The referenced table as written.
    pub target: &'a ast::ObjectName,
    /// The referencing columns' positions.
    pub columns: Vec<usize>,
    /// The referenced columns as written (empty: the primary key).
    pub referred: &'a [ast::Ident],
    /// ON DELETE.
    pub on_delete: Option<ast::ReferentialAction>,
    /// ON UPDATE.
    pub on_update: Option<ast::ReferentialAction>,
    /// [NOT] DEFERRABLE, INITIALLY DEFERRED / IMMEDIATE.
    pub characteristics: Option<&'a ast::ConstraintCharacteristics>,
}

impl<'a> FkClause<'a> {
    /// The clause of a column's `REFERENCES` option (`o`) on column `col`;
    /// None for other options.
    pub fn of_column(o: &'a ast::ColumnOptionDef, col: usize) -> Option<FkClause<'a>> {
        let ast::ColumnOption::ForeignKey {
            foreign_table,
            referred_columns,
            on_delete,
            on_update,
            characteristics,
        } = &o.option
        else {
            return None;
        };
        Some(FkClause {
            name: o.name.as_ref(),
            target: foreign_table,
            columns: vec![col],
            referred: referred_columns,
            on_delete: *on_delete,
            on_update: *on_update,
            characteristics: characteristics.as_ref(),
        })
    }

    /// The clause of a `FOREIGN KEY (…) REFERENCES …` table constraint,
    /// its columns found by `position`; None for other constraints.
    pub fn of_table_constraint(
        tc: &'a ast::TableConstraint,
        position: impl Fn(&str) -> Option<usize>,
    ) -> PgResult<Option<FkClause<'a>>> {
        let ast::TableConstraint::ForeignKey {
            name,
            columns,
            foreign_table,
            referred_columns,
            on_delete,
            on_update,
            characteristics,
        } = tc
        else {
            return Ok(None);
        };
        Ok(Some(FkClause {
            name: name.as_ref(),
            target: foreign_table,
            columns: fk_columns(columns, position)?,
            referred: referred_columns,
            on_delete: *on_delete,
            on_update: *on_update,
            characteristics: characteristics.as_ref(),
        }))
    }
}

fn fk_action(a: Option<ast::ReferentialAction>) -> engine::catalog::FkAction {
    use engine::catalog::FkAction;
    match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
    }
}

/// True if a key column of type `a` can reference one of type `b`: the
/// types have a common equality operator (PostgreSQL looks for one; these
/// are the families hotpair's types fall in).
pub(crate) fn fk_types_compatible(a: SqlType, b: SqlType) -> bool {
    a.base() == b.base()
        || (a.is_numeric_category() && b.is_numeric_category())
        || (a.is_text_like() && b.is_text_like())
        || matches!(
            (a, b),
            (SqlType::Timestamp, SqlType::TimestampTz) | (SqlType::TimestampTz, SqlType::Timestamp)
        )
}

/// Resolves a FOREIGN KEY of the table `table` (columns `columns`, its
/// constraints so far `taken`) to `target`, as PostgreSQL's
/// ATAddForeignKeyConstraint does: the referenced columns (the primary key
/// when none are named) must be exactly the columns of a unique index,
/// as many as the referencing ones, of comparable types.
pub fn foreign_key_constraint(
    cx: &DdlCtx<'_>,
    table: &str,
    columns: &[ColumnDef],
    taken: &[ConstraintSpec],
    fk: &FkClause<'_>,
    target: &FkTarget<'_>,
) -> PgResult<ConstraintSpec> {
    let invalid = |m: String| PgError::new(sqlstate::INVALID_FOREIGN_KEY, m);
    let names: Vec<&str> = fk
        .columns
        .iter()
        .map(|c| columns[*c].name.as_str())
        .collect();
    let name = match fk.name {
        Some(n) => ident_name(n),
        None => choose_constraint_name(cx, None, table, &names, "fkey", taken),
    };
    if taken.iter().any(|c| c.name == name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!("constraint \"{name}\" for relation \"{table}\" already exists"),
        ));
    }
    let marked = |m: &str| fk.referred.iter().any(|i| i.value == m);
    if marked(crate::parser::MATCH_PARTIAL) {
        return Err(PgError::unsupported("MATCH PARTIAL not yet implemented"));
    }
    let match_full = marked(crate::parser::MATCH_FULL);
    let referred_ids: Vec<&ast::Ident> = fk
        .referred
        .iter()
        .filter(|i| {
            ![
                crate::parser::PRIMARY_KEY_COLUMNS,
                crate::parser::MATCH_FULL,
            ]
            .contains(&i.value.as_str())
        })
        .collect();
    let (index, referred) = if referred_ids.is_empty() {
        let pk = target.keys.iter().find(|k| k.2).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!(
                    "there is no primary key for referenced table \"{}\"",
                    target.name
                ),
            )
        })?;
        (pk.0.clone(), pk.1.clone())
    } else {
        let mut cols = Vec::with_capacity(referred_ids.len());
        for i in referred_ids {
            let n = ident_name(i);
            let c = target
                .columns
                .iter()
                .position(|c| c.name == n && !c.dropped)
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{n}\" referenced in foreign key constraint does not exist"
                        ),
                    )
                })?;
            cols.push(c);
        }
        let mut sorted = cols.clone();
        sorted.sort_unstable();
        let key = target.keys.iter().find(|k| {
            let mut s = k.1.clone();
            s.sort_unstable();
            s == sorted && k.1.len() == cols.len()
        });
        let Some(key) = key else {
            return Err(invalid(format!(
                "there is no unique constraint matching given keys for referenced table \"{}\"",
                target.name
            )));
        };
        (key.0.clone(), cols)
    };
    if referred.len() != fk.columns.len() {
        return Err(invalid(
            "number of referencing and referenced columns for foreign key disagree".into(),
        ));
    }
    for (&a, &b) in fk.columns.iter().zip(&referred) {
        let (ta, tb) = (columns[a].ty, target.columns[b].ty);
        if !fk_types_compatible(ta, tb) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("foreign key constraint \"{name}\" cannot be implemented"),
            )
            .with_detail(format!(
                "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                columns[a].name,
                target.columns[b].name,
                ta.pg_base_name(),
                tb.pg_base_name()
            )));
        }
    }
    let ch = fk.characteristics;
    let initially_deferred = ch.and_then(|c| c.initially) == Some(ast::DeferrableInitial::Deferred);
    let deferrable = match ch.and_then(|c| c.deferrable) {
        Some(false) if initially_deferred => {
            return Err(PgError::syntax(
                "constraint declared INITIALLY DEFERRED must be DEFERRABLE",
            ))
        }
        Some(d) => d,
        None => initially_deferred,
    };
    Ok(ConstraintSpec {
        name,
        kind: ConstraintKind::ForeignKey,
        columns: fk.columns.clone(),
        check: None,
        index: Some(index),
        foreign: Some(engine::catalog::ForeignKeySpec {
            table: target.oid,
            columns: referred,
            on_delete: fk_action(fk.on_delete),
            on_update: fk_action(fk.on_update),
        }),
        deferrable,
        initially_deferred,
        not_valid: false,
        match_full,
    })
}

/// The positions of a FOREIGN KEY's referencing columns `ids`, found by
/// `position` (42703 for a name it does not know).
fn fk_columns(
    ids: &[ast::Ident],
    position: impl Fn(&str) -> Option<usize>,
) -> PgResult<Vec<usize>> {
    ids.iter()
        .map(|i| {
            let n = ident_name(i);
            position(&n).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                )
            })
        })
        .collect()
}

/// The table a FOREIGN KEY names, as the session sees it.
pub fn fk_referenced_table(cx: &DdlCtx<'_>, name: &ast::ObjectName) -> PgResult<Arc<TableDef>> {
    cx.table(name)
}

// ---------------------------------------------------------------------------
// COMMENT ON
// ---------------------------------------------------------------------------

/// `COMMENT ON TABLE t IS '…'` / `COMMENT ON COLUMN t.c IS '…'` (`IS
/// NULL` removes it): a change of the table's definition like any ALTER,
/// so it rolls back with the transaction and replays on the standby.
pub fn comment_on(
    cx: &mut DdlCtx<'_>,
    kind: &ast::CommentObject,
    name: &ast::ObjectName,
    text: Option<&str>,
) -> PgResult<String> {
    let parts = &name.0;
    let (table_name, column) = match (kind, parts.as_slice()) {
        (ast::CommentObject::Table, _) => (name.clone(), None),
        (ast::CommentObject::Column, [t @ .., c]) if !t.is_empty() => {
            (ast::ObjectName(t.to_vec()), Some(ident_name(c)))
        }
        (ast::CommentObject::Column, _) => {
            return Err(PgError::syntax("column name must be qualified"))
        }
        _ => {
            return Err(PgError::unsupported(format!(
                "COMMENT ON {kind} is not supported"
            )))
        }
    };
    let seen = cx.table(&table_name)?;
    let table = lock_for_alter(cx, seen.oid)?;
    let sub = match &column {
        None => 0,
        Some(c) => {
            let pos = table
                .column_index(c)
                .ok_or_else(|| undefined_column_of(c, &table.name))?;
            pos as u32 + 1
        }
    };
    let mut spec = table.spec();
    spec.comments.retain(|(s, _)| *s != sub);
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        spec.comments.push((sub, t.to_string()));
        spec.comments.sort_by_key(|(s, _)| *s);
    }
    alter_definition(cx, &table, spec)?;
    Ok("COMMENT".into())
}
