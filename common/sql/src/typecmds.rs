//! CREATE TYPE … AS ENUM, ALTER TYPE (ADD VALUE, RENAME VALUE, RENAME
//! TO, OWNER TO) and DROP TYPE (PostgreSQL's `commands/typecmds.c` and the enum part
//! of `catalog/pg_enum.c`).
//!
//! `sqlparser` cannot parse these statements with PostgreSQL's meaning
//! (labels are string literals, ALTER TYPE is missing), so the parser's
//! keyword pre-dispatch parses them into a [`TypeStmt`]
//! (`parser::typestmt`); DROP TYPE comes through `sqlparser`'s DROP.
//!
//! ## OIDs and sort positions
//!
//! CREATE TYPE takes an OID for the type, one for its array type (`_mood`)
//! and an even OID per label, in label order; ADD VALUE at the end takes
//! an even OID too, ADD VALUE BEFORE / AFTER an odd one (the rule
//! `pgtypes::enumtype` relies on to compare even labels without a lookup).
//! Sort positions: see [`engine::pg_enum`].
//!
//! ## Transactions
//!
//! Each statement changes the catalog at once (WAL-logged, so a standby
//! follows) and records how to undo it ([`PendingDdl::CreateType`],
//! [`PendingDdl::AlterType`], [`PendingDdl::DropType`]): ROLLBACK drops a
//! created type, puts an altered one back, re-creates a dropped one with
//! its OIDs (the columns that use it still name them). A type another
//! transaction created and has not committed is already visible, unlike
//! a table.
//!
//! ## Owners
//!
//! A type's owner is its privilege entry's (keyed by pg_type,
//! `crate::aclchk`); ALTER TYPE … OWNER TO changes that entry as a
//! transactional `SetPrivileges` change with the checks of
//! `crate::aclchk::alter_type_owner`, and `crate::shdepend` finds the
//! type by the entry for DROP OWNED / REASSIGN OWNED.
//!
//! ## Dependencies
//!
//! A column of the type (or of its array type) depends on it: DROP TYPE
//! fails with 2BP01 and PostgreSQL's DETAIL unless CASCADE, which drops
//! those columns first (ALTER TABLE … DROP COLUMN, with its own undo).

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
pub use crate::parser::typestmt::TypeStmt;
use crate::planner::object_name;
use engine::catalog::{undefined_type, CatalogChange};
use engine::pg_enum::EnumTypeSpec;
use engine::Engine;
use pgtypes::enumtype::EnumLabel;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::{ArrayElem, SqlType};
use pgtypes::{Oid, TransactionId};

/// PostgreSQL's NAMEDATALEN - 1: the longest label.
const MAX_LABEL_BYTES: usize = 63;

fn check_label(label: &str) -> PgResult<()> {
    if label.len() > MAX_LABEL_BYTES {
        return Err(PgError::new(
            sqlstate::INVALID_NAME,
            format!("invalid enum label \"{label}\""),
        )
        .with_detail(format!("Labels must be {MAX_LABEL_BYTES} bytes or less.")));
    }
    Ok(())
}

fn label_exists(label: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_OBJECT,
        format!("enum label \"{label}\" already exists"),
    )
}

fn not_a_label(label: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("\"{label}\" is not an existing enum label"),
    )
}

/// A fresh OID of the wanted parity (`even`).
fn oid_with_parity(db: &Engine, even: bool) -> Oid {
    loop {
        let o = db.catalog().allocate_oid();
        if o.is_multiple_of(2) == even {
            return o;
        }
    }
}

/// The enum type named `name` as DDL sees it, or 42704.
fn existing(db: &Engine, name: &str) -> PgResult<EnumTypeSpec> {
    db.catalog()
        .enum_type(name)
        .map(|t| t.current_spec())
        .ok_or_else(|| undefined_type(name))
}

/// Runs CREATE TYPE / ALTER TYPE.
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &TypeStmt) -> PgResult<String> {
    let db = cx.db;
    // ALTER TYPE: the owner only (or a role with its privileges).
    if let TypeStmt::AddValue { name, .. }
    | TypeStmt::RenameValue { name, .. }
    | TypeStmt::Rename { name, .. } = stmt
    {
        let u = crate::privileges::AclUser::of(db, cx.user);
        if let Some(t) = db.catalog().enum_type(name) {
            let owner = crate::privileges::type_owner(&cx.catalog(), t.spec.oid);
            if !u.superuser && !u.has_privs_of(owner) {
                return Err(crate::privileges::not_owner("type", name));
            }
        }
    }
    match stmt {
        TypeStmt::CreateEnum { name, labels } => {
            for l in labels {
                check_label(l)?;
            }
            if db.catalog().enum_type(name).is_some()
                || crate::ddl::relation_exists(db, engine::namespace::PUBLIC_NAMESPACE, name)
            {
                return Err(engine::catalog::type_exists(name));
            }
            let oid = db.catalog().allocate_oid();
            let array_oid = db.catalog().allocate_oid();
            let mut spec = EnumTypeSpec {
                oid,
                array_oid,
                name: name.clone(),
                labels: Vec::with_capacity(labels.len()),
                creator: TransactionId::INVALID,
            };
            for (i, l) in labels.iter().enumerate() {
                if spec.label(l).is_some() {
                    return Err(label_exists(l));
                }
                spec.labels.push(EnumLabel {
                    oid: oid_with_parity(db, true),
                    sort: (i + 1) as f64,
                    label: l.clone(),
                });
            }
            spec.creator = cx.xact.assign_xid()?;
            db.catalog()
                .apply_catalog_change(&CatalogChange::CreateType(spec))?;
            cx.pending.push(PendingDdl::CreateType(oid));
        }
        TypeStmt::AddValue {
            name,
            if_not_exists,
            label,
            neighbor,
        } => {
            let before = existing(db, name)?;
            check_label(label)?;
            if before.label(label).is_some() {
                if *if_not_exists {
                    cx.notices.push(PgError::notice(
                        sqlstate::DUPLICATE_OBJECT,
                        format!("enum label \"{label}\" already exists, skipping"),
                    ));
                    return Ok("ALTER TYPE".into());
                }
                return Err(label_exists(label));
            }
            let at = match neighbor {
                None => before.labels.len(),
                Some((is_before, n)) => {
                    let i = before
                        .labels
                        .iter()
                        .position(|l| &l.label == n)
                        .ok_or_else(|| not_a_label(n))?;
                    if *is_before {
                        i
                    } else {
                        i + 1
                    }
                }
            };
            let sort = before.position_between(at).map_err(|_| {
                PgError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!("no room left for a new label of enum {name} at this position"),
                )
            })?;
            // Even only if every even label sorts before it (see the
            // module doc); a new OID is above all existing ones.
            let even = before.labels[at..].iter().all(|l| !l.oid.is_multiple_of(2));
            let mut spec = before.clone();
            spec.labels.insert(
                at,
                EnumLabel {
                    oid: oid_with_parity(db, even),
                    sort,
                    label: label.clone(),
                },
            );
            alter(cx, name, before, spec)?;
        }
        TypeStmt::RenameValue { name, from, to } => {
            let before = existing(db, name)?;
            check_label(to)?;
            let i = before
                .labels
                .iter()
                .position(|l| &l.label == from)
                .ok_or_else(|| not_a_label(from))?;
            if from == to {
                return Ok("ALTER TYPE".into());
            }
            if before.label(to).is_some() {
                return Err(label_exists(to));
            }
            let mut spec = before.clone();
            spec.labels[i].label = to.clone();
            alter(cx, name, before, spec)?;
        }
        TypeStmt::Rename { name, to } => {
            let before = alterable(db, name)?;
            if db.catalog().enum_type(to).is_some()
                || crate::ddl::relation_exists(db, engine::namespace::PUBLIC_NAMESPACE, to)
            {
                return Err(engine::catalog::type_exists(to));
            }
            let mut spec = before.clone();
            spec.name = to.clone();
            alter(cx, name, before, spec)?;
        }
        TypeStmt::OwnerTo { name, owner } => {
            let t = alterable(db, name)?;
            crate::aclchk::alter_type_owner(cx, t.oid, name, owner)?;
        }
    }
    Ok(stmt.tag().into())
}

/// The enum type `name` names for ALTER TYPE … RENAME TO / OWNER TO;
/// PostgreSQL's refusals of the types that go with another object: a
/// table's row type (42809, use ALTER TABLE) and an enum's array type
/// (42809, alter the element type), else 42704.
fn alterable(db: &Engine, name: &str) -> PgResult<EnumTypeSpec> {
    if let Some(t) = db.catalog().enum_type(name) {
        return Ok(t.current_spec());
    }
    if crate::ddl::relation_exists(db, engine::namespace::PUBLIC_NAMESPACE, name) {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("{name} is a table's row type"),
        )
        .with_hint("Use ALTER TABLE instead."));
    }
    if let Some(elem) = name
        .strip_prefix('_')
        .and_then(|e| db.catalog().enum_type(e))
    {
        let elem = &elem.spec.name;
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("cannot alter array type {elem}[]"),
        )
        .with_hint(format!(
            "You can alter type {elem}, which will alter the array type as well."
        )));
    }
    Err(undefined_type(name))
}

fn alter(
    cx: &mut DdlCtx<'_>,
    name: &str,
    before: EnumTypeSpec,
    spec: EnumTypeSpec,
) -> PgResult<()> {
    cx.xact.assign_xid()?;
    let oid = spec.oid;
    // DEFAULTs are kept as SQL text naming the label and the type
    // (`'ok'::mood`); PostgreSQL's name the OIDs. Find the constant ones
    // first, to write them again with the new names.
    let defaults = enum_defaults(cx, oid);
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterType {
            name: name.to_string(),
            spec,
        })?;
    cx.pending.push(PendingDdl::AlterType { oid, before });
    rewrite_defaults(cx, defaults)
}

/// The columns of type `oid` (table OID, column position, label) whose
/// DEFAULT is a constant label.
fn enum_defaults(cx: &DdlCtx<'_>, oid: Oid) -> Vec<(Oid, usize, Oid)> {
    let mut out = Vec::new();
    for t in cx.db.catalog().tables() {
        for (i, c) in t.columns.iter().enumerate() {
            let (SqlType::Enum(o), Some(d), false) = (c.ty, &c.default, c.dropped) else {
                continue;
            };
            if o != oid {
                continue;
            }
            if let Ok(pgtypes::value::Value::Enum(l)) = crate::tablecmds::constant_default(d, c) {
                out.push((t.oid, i, l));
            }
        }
    }
    out
}

/// Writes each DEFAULT found by [`enum_defaults`] as `'label'::type` with
/// the current names (one ALTER TABLE per table, with its undo).
fn rewrite_defaults(cx: &mut DdlCtx<'_>, defaults: Vec<(Oid, usize, Oid)>) -> PgResult<()> {
    let mut tables: Vec<Oid> = defaults.iter().map(|d| d.0).collect();
    tables.dedup();
    for table in tables {
        let Some(t) = cx.db.catalog().by_oid(table) else {
            continue;
        };
        let mut spec = t.spec();
        let mut changed = false;
        for &(_, i, label) in defaults.iter().filter(|d| d.0 == table) {
            let Some(col) = spec.columns.get_mut(i) else {
                continue;
            };
            let (Ok(text), SqlType::Enum(ty)) = (pgtypes::enumtype::label_text(label), col.ty)
            else {
                continue;
            };
            let d = format!(
                "'{}'::{}",
                text.replace('\'', "''"),
                crate::pgcatalog::quote_ident(pgtypes::enumtype::type_name(ty))
            );
            if col.default.as_deref() != Some(d.as_str()) {
                col.default = Some(d);
                changed = true;
            }
        }
        if changed {
            crate::tablecmds::alter_definition(cx, &t, spec)?;
        }
    }
    Ok(())
}

/// True if `ty` is the enum type `oid` or its array type.
fn uses_type(ty: SqlType, oid: Oid) -> bool {
    matches!(ty, SqlType::Enum(o) | SqlType::Array(ArrayElem::Enum(o)) if o == oid)
}

/// The visible columns using the type `oid`: (table, column, type), in
/// the order PostgreSQL's dependency scan finds them.
fn dependent_columns(cx: &DdlCtx<'_>, oid: Oid) -> Vec<(String, String, SqlType)> {
    let view = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
    let mut out = Vec::new();
    let mut tables = cx.db.catalog().tables();
    tables.sort_by_key(|t| t.oid);
    for t in tables {
        let Some(t) = view.get(&t.name) else {
            continue;
        };
        for c in t.columns.iter().filter(|c| !c.dropped) {
            if uses_type(c.ty, oid) {
                out.push((t.name.clone(), c.name.clone(), c.ty));
            }
        }
    }
    // PostgreSQL reaches the array type's dependents first (the array
    // type depends on the type and was recorded before any column).
    out.sort_by_key(|(_, _, ty)| !matches!(ty, SqlType::Array(_)));
    out
}

/// DROP TYPE [IF EXISTS] name, … [CASCADE | RESTRICT].
pub fn drop_types(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> PgResult<String> {
    let mut found = Vec::new();
    for n in names {
        let name = object_name(n);
        match cx.db.catalog().enum_type(&name) {
            Some(t) => found.push(t.current_spec()),
            None => cx.notices.push(crate::ddl::missing_to_drop(
                "type",
                sqlstate::UNDEFINED_OBJECT,
                &name,
                if_exists,
            )?),
        }
    }
    for spec in found {
        let deps = dependent_columns(cx, spec.oid);
        if !deps.is_empty() {
            let lines: Vec<String> = deps
                .iter()
                .map(|(t, c, ty)| {
                    format!("column {c} of table {t} depends on type {}", ty.pg_name())
                })
                .collect();
            if !cascade {
                // The views reading those columns depend on the type too.
                let mut lines = lines;
                for (t, c, _) in &deps {
                    let Some(oid) = cx.catalog().get(t).map(|t| t.oid) else {
                        continue;
                    };
                    if let Err(e) = crate::view::check_column_dependents(cx, (oid, t), c, false) {
                        lines.extend(e.detail.iter().flat_map(|d| d.lines().map(str::to_string)));
                    }
                }
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop type {} because other objects depend on it",
                        spec.name
                    ),
                )
                .with_detail(lines.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            let cascades = |l: &String| l.split(" depends on").next().unwrap_or("").to_string();
            cx.notices.push(if lines.len() == 1 {
                PgError::notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    format!("drop cascades to {}", cascades(&lines[0])),
                )
            } else {
                let detail: Vec<String> = lines
                    .iter()
                    .map(|l| format!("drop cascades to {}", cascades(l)))
                    .collect();
                PgError::notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    format!("drop cascades to {} other objects", lines.len()),
                )
                .with_detail(detail.join("\n"))
            });
            for (t, c, _) in &deps {
                let table = ast::ObjectName(vec![ast::Ident::with_quote('"', t.clone())]);
                let op = ast::AlterTableOperation::DropColumn {
                    column_name: ast::Ident::with_quote('"', c.clone()),
                    if_exists: false,
                    cascade: true,
                };
                crate::tablecmds::alter_table(cx, &table, &[op], false)?;
            }
        }
        cx.xact.assign_xid()?;
        cx.db
            .catalog()
            .apply_catalog_change(&CatalogChange::DropType {
                name: spec.name.clone(),
            })?;
        cx.pending.push(PendingDdl::DropType(spec));
    }
    Ok("DROP TYPE".into())
}

/// PendingDdl for types: the transaction committed.
pub(crate) fn commit_pending(db: &Engine, p: &PendingDdl) {
    if let PendingDdl::CreateType(oid) = p {
        if let Some(t) = db.catalog().enum_type_by_oid(*oid) {
            t.creator.store(0, std::sync::atomic::Ordering::Release);
        }
    }
}

/// PendingDdl for types: the (sub)transaction rolled back.
pub(crate) fn abort_pending(db: &Engine, p: PendingDdl) {
    let change = match p {
        PendingDdl::CreateType(oid) => match db.catalog().enum_type_by_oid(oid) {
            Some(t) => CatalogChange::DropType {
                name: t.spec.name.clone(),
            },
            None => return,
        },
        PendingDdl::AlterType { oid, before } => match db.catalog().enum_type_by_oid(oid) {
            Some(t) => CatalogChange::AlterType {
                name: t.spec.name.clone(),
                spec: before,
            },
            None => return,
        },
        PendingDdl::DropType(mut spec) => {
            if db.catalog().enum_type_by_oid(spec.oid).is_some() {
                return;
            }
            spec.creator = TransactionId::INVALID;
            CatalogChange::CreateType(spec)
        }
        _ => return,
    };
    if let Err(e) = db.catalog().apply_catalog_change(&change) {
        tracing::warn!("could not undo a type change after rollback: {}", e.message);
    }
}
