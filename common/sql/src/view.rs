//! CREATE [OR REPLACE] VIEW, DROP VIEW, ALTER VIEW … RENAME, and the
//! dependencies of views on the relations they read (PostgreSQL's
//! `commands/view.c` and the view part of `catalog/dependency.c`).
//!
//! CREATE VIEW binds the query once, as the planner will (so a view over
//! a missing table or column fails at once, with the planner's error),
//! and stores the query's SQL text, its output columns and the relations
//! it names ([`engine::view::ViewSpec`]). Wherever a statement names the
//! view, the planner re-parses that text (`parser::parse_view_query`) and plans
//! it as a subquery.
//!
//! ## Transactions
//!
//! As for tables ([`crate::ddl`]): a creation carries its xid and is undone
//! at ROLLBACK ([`PendingDdl::CreateView`]); CREATE OR REPLACE and RENAME
//! mark the new definition and keep the committed one for other sessions
//! and for the undo ([`PendingDdl::AlterView`]); DROP VIEW of a view from
//! before the transaction happens at COMMIT ([`PendingDdl::DropView`]).
//!
//! ## Dependencies
//!
//! A view depends on every table and view its query names directly.
//! [`view_dependents`] answers "which views must go with these relations"
//! (transitively); DROP TABLE / DROP VIEW call [`check_dependents`], which
//! fails with 2BP01 without CASCADE and otherwise drops them, with
//! PostgreSQL's NOTICE. Views whose DROP is pending in this transaction
//! no longer count.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
use crate::parser::parse_view_query;
use crate::planner::{ident_name, object_name};
use engine::catalog::{CatalogChange, ColumnDef};
use engine::view::ViewSpec;
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::{Oid, TransactionId};

/// PostgreSQL's name of a type in messages (`integer`, `character varying(10)`).
fn type_text(t: SqlType) -> String {
    crate::pgcatalog::functions::format_type(t.oid(), t.typmod())
}

/// CREATE [OR REPLACE] VIEW.
pub fn create_view(
    cx: &mut DdlCtx<'_>,
    or_replace: bool,
    name: &ast::ObjectName,
    aliases: &[ast::ViewColumnDef],
    query: &ast::Query,
) -> PgResult<String> {
    let db = cx.db;
    let qname = crate::namespace::QualName::of(name)?;
    let ns = crate::namespace::creation_namespace(&cx.catalog(), &qname)?;
    let name = qname.name;
    let (cols, depends) = crate::planner::describe_view_query(&cx.catalog(), query)?;
    if aliases.len() > cols.len() {
        return Err(PgError::syntax(
            "CREATE VIEW specifies more column names than columns",
        ));
    }
    let mut columns = Vec::with_capacity(cols.len());
    for (i, (n, ty)) in cols.into_iter().enumerate() {
        let n = aliases.get(i).map(|a| ident_name(&a.name)).unwrap_or(n);
        if columns.iter().any(|c: &ColumnDef| c.name == n) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{n}\" specified more than once"),
            ));
        }
        let ty = if ty == SqlType::Unknown {
            SqlType::Text
        } else {
            ty
        };
        columns.push(ColumnDef::new(&n, ty));
    }
    let mut spec = ViewSpec::new(
        db.catalog().allocate_oid(),
        &name,
        &query.to_string(),
        columns,
    );
    spec.depends = depends;
    spec.namespace = ns;
    let own = cx.catalog();
    if let Some(old) = own.view_in(ns, &name) {
        if !or_replace {
            return Err(relation_exists(&name));
        }
        return replace_view(cx, &old, spec);
    }
    if own.get_in(ns, &name).is_some() && or_replace {
        return Err(not_a_view(&name));
    }
    if crate::ddl::relation_exists(db, ns, &name) {
        return Err(relation_exists(&name));
    }
    spec.creator = cx.xact.assign_xid()?;
    let oid = spec.oid;
    db.catalog()
        .apply_catalog_change(&CatalogChange::CreateView(spec))?;
    cx.pending.push(PendingDdl::CreateView(oid));
    Ok("CREATE VIEW".into())
}

fn relation_exists(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_TABLE,
        format!("relation \"{name}\" already exists"),
    )
}

fn not_a_view(name: &str) -> PgError {
    PgError::new(
        sqlstate::WRONG_OBJECT_TYPE,
        format!("\"{name}\" is not a view"),
    )
}

/// CREATE OR REPLACE of an existing view: PostgreSQL's checkViewColumns —
/// the new query may only add columns at the end.
fn replace_view(cx: &mut DdlCtx<'_>, old: &ViewSpec, mut spec: ViewSpec) -> PgResult<String> {
    if spec.columns.len() < old.columns.len() {
        return Err(PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            "cannot drop columns from view",
        ));
    }
    for (o, n) in old.columns.iter().zip(&spec.columns) {
        if o.name != n.name {
            return Err(PgError::new(
                sqlstate::INVALID_TABLE_DEFINITION,
                format!(
                    "cannot change name of view column \"{}\" to \"{}\"",
                    o.name, n.name
                ),
            )
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if o.ty != n.ty {
            return Err(PgError::new(
                sqlstate::INVALID_TABLE_DEFINITION,
                format!(
                    "cannot change data type of view column \"{}\" from {} to {}",
                    o.name,
                    type_text(o.ty),
                    type_text(n.ty)
                ),
            ));
        }
    }
    spec.oid = old.oid;
    // The view's triggers stay (PostgreSQL replaces only the rule).
    spec.triggers = old.triggers.clone();
    alter_view(cx, old, spec)?;
    Ok("CREATE VIEW".into())
}

/// Gives view `old` the definition `spec` (replace, rename, its
/// triggers), marked as this transaction's until it ends.
pub(crate) fn alter_view(cx: &mut DdlCtx<'_>, old: &ViewSpec, mut spec: ViewSpec) -> PgResult<()> {
    let db = cx.db;
    let def = db
        .catalog()
        .views()
        .into_iter()
        .find(|v| v.spec.oid == old.oid)
        .ok_or_else(|| engine::catalog::undefined_table(&old.name))?;
    let created_here = def.creator.load(Ordering::Acquire) != 0;
    let before = def.current_spec();
    if !created_here {
        spec.altered_by = cx.xact.assign_xid()?;
        // An earlier change of this transaction already kept the
        // committed definition.
        spec.previous = match before.previous.clone() {
            Some(p) if before.altered_by.is_valid() => Some(p),
            _ => Some(Box::new(before.committed())),
        };
    }
    db.catalog()
        .apply_catalog_change(&CatalogChange::AlterView {
            name: def.spec.key(),
            spec,
        })?;
    cx.pending.push(PendingDdl::AlterView {
        oid: old.oid,
        before,
    });
    Ok(())
}

/// ALTER VIEW … SET SCHEMA: the view moves to schema `ns` (`schema`).
pub fn set_view_schema(
    cx: &mut DdlCtx<'_>,
    old: &Arc<ViewSpec>,
    ns: Oid,
    schema: &str,
) -> PgResult<()> {
    if old.namespace == ns {
        return Ok(());
    }
    if crate::ddl::relation_exists(cx.db, ns, &old.name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            format!(
                "relation \"{}\" already exists in schema \"{schema}\"",
                old.name
            ),
        ));
    }
    let mut spec = (**old).clone();
    spec.namespace = ns;
    alter_view(cx, old, spec)
}

/// ALTER VIEW name RENAME TO new_name (also ALTER TABLE … RENAME of a view).
pub fn rename_view(cx: &mut DdlCtx<'_>, old: &Arc<ViewSpec>, new_name: &str) -> PgResult<()> {
    let db = cx.db;
    let old = old.clone();
    let name = old.name.clone();
    let name = name.as_str();
    if crate::ddl::relation_exists(db, old.namespace, new_name) {
        return Err(relation_exists(new_name));
    }
    let mut spec = (*old).clone();
    spec.name = new_name.to_string();
    alter_view(cx, &old, spec)?;
    follow_rename(cx, old.oid, name, new_name, None)
}

/// DROP VIEW [IF EXISTS] name, … [CASCADE].
pub fn drop_views(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> PgResult<String> {
    let db = cx.db;
    let mut found: Vec<Arc<ViewSpec>> = Vec::new();
    {
        let seen = db.catalog().view(cx.xact.own().xids, db.clog());
        for n in names {
            let name = object_name(n);
            match seen.view(&name) {
                Some(v) if !cx.dropping_views.contains(&v.oid) => found.push(v),
                _ if seen.get(&name).is_some() => {
                    return Err(not_a_view(&name).with_hint("Use DROP TABLE to remove a table."))
                }
                _ => cx.notices.push(crate::ddl::missing_to_drop(
                    "view",
                    sqlstate::UNDEFINED_TABLE,
                    &name,
                    if_exists,
                )?),
            }
        }
    }
    let roots: Vec<(Oid, String, &str)> = found
        .iter()
        .map(|v| (v.oid, v.name.clone(), "view"))
        .collect();
    let mut all = check_dependents(db, &roots, cascade, &cx.dropping_views, &mut cx.notices)?;
    all.extend(found.iter().map(|v| v.oid));
    let pending = drop_view_oids(db, cx.xact.own().xids, &all);
    cx.dropping_views.extend(&all);
    cx.pending.extend(pending);
    Ok("DROP VIEW".into())
}

/// Drops the views with these OIDs for a transaction whose xids are `own`:
/// one it created goes now, any other at COMMIT (the returned entries).
pub fn drop_view_oids(db: &Engine, own: &[TransactionId], oids: &[Oid]) -> Vec<PendingDdl> {
    let mut pending = Vec::new();
    for def in db.catalog().views() {
        if !oids.contains(&def.spec.oid) {
            continue;
        }
        let creator = TransactionId(def.creator.load(Ordering::Acquire));
        if creator.is_valid() && own.binary_search(&creator).is_ok() {
            // Created by this transaction (the only one that sees it):
            // nothing to keep for a ROLLBACK, which drops it anyway.
            let r = db.catalog().apply_catalog_change(&CatalogChange::DropView {
                name: def.spec.key(),
            });
            if let Err(e) = r {
                tracing::warn!("could not drop view \"{}\": {}", def.spec.name, e.message);
            }
        } else {
            pending.push(PendingDdl::DropView(def.spec.oid));
        }
    }
    pending
}

/// The views that depend, directly or through other views, on the
/// relations `oids`, in the order PostgreSQL reports them (depth first),
/// leaving out `ignore` (views whose DROP is already pending).
pub fn view_dependents(db: &Engine, oids: &[Oid], ignore: &[Oid]) -> Vec<(Arc<ViewSpec>, Oid)> {
    let mut views: Vec<ViewSpec> = db
        .catalog()
        .views()
        .iter()
        .map(|v| v.spec.clone())
        .filter(|v| !ignore.contains(&v.oid))
        .collect();
    // PostgreSQL finds dependents in pg_depend order: creation order.
    views.sort_by_key(|v| v.oid);
    let mut out: Vec<(Arc<ViewSpec>, Oid)> = Vec::new();
    let mut seen: HashSet<Oid> = oids.iter().copied().collect();
    fn walk(
        views: &[ViewSpec],
        of: Oid,
        seen: &mut HashSet<Oid>,
        out: &mut Vec<(Arc<ViewSpec>, Oid)>,
    ) {
        for v in views.iter().filter(|v| v.depends.contains(&of)) {
            if seen.insert(v.oid) {
                out.push((Arc::new(v.clone()), of));
                walk(views, v.oid, seen, out);
            }
        }
    }
    for &o in oids {
        walk(&views, o, &mut seen, &mut out);
    }
    out
}

/// DROP of the relations `roots` (OID, name, kind as PostgreSQL names it:
/// "table", "view"): without CASCADE, 2BP01 if a view depends on one of
/// them; with CASCADE, the NOTICE and the OIDs of the views to drop too.
pub fn check_dependents(
    db: &Engine,
    roots: &[(Oid, String, &str)],
    cascade: bool,
    ignore: &[Oid],
    notices: &mut Vec<PgError>,
) -> PgResult<Vec<Oid>> {
    let oids: Vec<Oid> = roots.iter().map(|r| r.0).collect();
    let deps = view_dependents(db, &oids, ignore);
    let deps: Vec<_> = deps
        .into_iter()
        .filter(|(v, _)| !oids.contains(&v.oid))
        .collect();
    if deps.is_empty() {
        return Ok(Vec::new());
    }
    let describe = |o: Oid| -> String {
        if let Some((_, n, k)) = roots.iter().find(|r| r.0 == o) {
            return format!("{k} {n}");
        }
        match deps.iter().find(|(v, _)| v.oid == o) {
            Some((v, _)) => format!("view {}", v.name),
            None => format!("relation {o}"),
        }
    };
    if !cascade {
        let (_, n, k) = &roots[0];
        let detail: Vec<String> = deps
            .iter()
            .map(|(v, on)| format!("view {} depends on {}", v.name, describe(*on)))
            .collect();
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop {k} {n} because other objects depend on it"),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    if deps.len() == 1 {
        notices.push(PgError::notice(
            sqlstate::SUCCESSFUL_COMPLETION,
            format!("drop cascades to view {}", deps[0].0.name),
        ));
    } else {
        let detail: Vec<String> = deps
            .iter()
            .map(|(v, _)| format!("drop cascades to view {}", v.name))
            .collect();
        notices.push(
            PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("drop cascades to {} other objects", deps.len()),
            )
            .with_detail(detail.join("\n")),
        );
    }
    Ok(deps.iter().map(|(v, _)| v.oid).collect())
}

/// True if view query `q` (which reads the column's relation) names a
/// column `col` — names are matched, not bound, so a same-named column of
/// another relation counts too — or uses `SELECT *`.
fn reads_column(q: &ast::Query, col: &str) -> bool {
    use std::ops::ControlFlow;
    if let ast::SetExpr::Select(sel) = q.body.as_ref() {
        if sel.projection.iter().any(|p| {
            matches!(
                p,
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
            )
        }) {
            return true;
        }
    }
    let found = ast::visit_expressions(q, |e| {
        let hit = match e {
            ast::Expr::Identifier(i) => ident_name(i) == col,
            ast::Expr::CompoundIdentifier(v) => v.last().is_some_and(|i| ident_name(i) == col),
            _ => false,
        };
        if hit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found.is_break()
}

/// ALTER COLUMN … TYPE of a column a view reads: PostgreSQL 15 refuses
/// (0A000), naming the first such view's rewrite rule.
pub fn refuse_type_change(cx: &DdlCtx<'_>, table: Oid, column: &str) -> PgResult<()> {
    let mut direct: Vec<Arc<ViewSpec>> = view_dependents(cx.db, &[table], &cx.dropping_views)
        .into_iter()
        .filter(|(v, on)| {
            *on == table && parse_view_query(&v.query).is_ok_and(|q| reads_column(&q, column))
        })
        .map(|(v, _)| v)
        .collect();
    direct.sort_by_key(|v| v.oid);
    match direct.first() {
        None => Ok(()),
        Some(v) => Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "cannot alter type of a column used by a view or rule",
        )
        .with_detail(format!(
            "rule _RETURN on view {} depends on column \"{column}\"",
            v.name
        ))),
    }
}

/// ALTER TABLE … DROP COLUMN of a column views read: as
/// [`check_dependents`], with PostgreSQL's messages for a column. Returns
/// the views CASCADE drops.
pub fn check_column_dependents(
    cx: &mut DdlCtx<'_>,
    table: (Oid, &str),
    column: &str,
    cascade: bool,
) -> PgResult<Vec<Oid>> {
    let direct: Vec<Arc<ViewSpec>> = view_dependents(cx.db, &[table.0], &cx.dropping_views)
        .into_iter()
        .filter(|(v, on)| {
            *on == table.0 && parse_view_query(&v.query).is_ok_and(|q| reads_column(&q, column))
        })
        .map(|(v, _)| v)
        .collect();
    if direct.is_empty() {
        return Ok(Vec::new());
    }
    let roots: Vec<(Oid, String, &str)> = direct
        .iter()
        .map(|v| (v.oid, v.name.clone(), "view"))
        .collect();
    let oids: Vec<Oid> = roots.iter().map(|r| r.0).collect();
    let further = view_dependents(cx.db, &oids, &cx.dropping_views);
    let mut lines: Vec<String> = Vec::new();
    let mut all: Vec<Oid> = Vec::new();
    for v in &direct {
        lines.push(format!(
            "view {} depends on column {column} of table {}",
            v.name, table.1
        ));
        all.push(v.oid);
        for (w, on) in &further {
            if all.contains(&w.oid) {
                continue;
            }
            let on_name = direct
                .iter()
                .map(|d| (d.oid, d.name.clone()))
                .chain(further.iter().map(|(f, _)| (f.oid, f.name.clone())))
                .find(|(o, _)| o == on)
                .map(|(_, n)| n)
                .unwrap_or_default();
            lines.push(format!("view {} depends on view {on_name}", w.name));
            all.push(w.oid);
        }
    }
    if !cascade {
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!(
                "cannot drop column {column} of table {} because other objects depend on it",
                table.1
            ),
        )
        .with_detail(lines.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    let names: Vec<String> = all
        .iter()
        .filter_map(|o| {
            direct
                .iter()
                .chain(further.iter().map(|(f, _)| f))
                .find(|v| v.oid == *o)
                .map(|v| format!("drop cascades to view {}", v.name))
        })
        .collect();
    if names.len() == 1 {
        cx.notices.push(PgError::notice(
            sqlstate::SUCCESSFUL_COMPLETION,
            names[0].clone(),
        ));
    } else {
        cx.notices.push(
            PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("drop cascades to {} other objects", names.len()),
            )
            .with_detail(names.join("\n")),
        );
    }
    let pending = drop_view_oids(cx.db, cx.xact.own().xids, &all);
    cx.dropping_views.extend(&all);
    cx.pending.extend(pending);
    Ok(all)
}

/// A relation the views on it name was renamed, or one of its columns:
/// their stored queries follow (PostgreSQL's views refer to relations and
/// columns by number, so they never notice). `column`: (old, new) for a
/// column rename of relation `old_rel`.
pub fn follow_rename(
    cx: &mut DdlCtx<'_>,
    oid: Oid,
    old_rel: &str,
    new_rel: &str,
    column: Option<(&str, &str)>,
) -> PgResult<()> {
    use std::ops::ControlFlow;
    let views: Vec<Arc<ViewSpec>> = {
        let seen = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
        seen.views()
            .into_iter()
            .filter(|v| v.depends.contains(&oid) && !cx.dropping_views.contains(&v.oid))
            .collect()
    };
    let quoted = |n: &str| ast::Ident::with_quote('"', n);
    for v in views {
        let mut q = parse_view_query(&v.query)?;
        let _ = ast::visit_relations_mut(&mut q, |n| {
            if n.0.len() == 1 && object_name(n) == old_rel {
                *n = ast::ObjectName(vec![quoted(new_rel)]);
            }
            ControlFlow::<()>::Continue(())
        });
        let _ = ast::visit_expressions_mut(&mut q, |e| {
            match e {
                ast::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                    if ident_name(&parts[0]) == old_rel {
                        parts[0] = quoted(new_rel);
                    }
                    if let Some((oc, nc)) = column {
                        if ident_name(&parts[0]) == new_rel && ident_name(&parts[1]) == oc {
                            parts[1] = quoted(nc);
                        }
                    }
                }
                ast::Expr::Identifier(i) => {
                    if let Some((oc, nc)) = column {
                        if ident_name(i) == oc {
                            *i = quoted(nc);
                        }
                    }
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
        let text = q.to_string();
        if text != v.query {
            let mut spec = (*v).clone();
            spec.query = text;
            alter_view(cx, &v, spec)?;
        }
    }
    Ok(())
}

/// PendingDdl for views: the transaction committed.
pub(crate) fn commit_pending(db: &Engine, p: &PendingDdl) {
    match p {
        PendingDdl::CreateView(oid) => {
            if let Some(v) = view_by_oid(db, *oid) {
                v.creator.store(0, Ordering::Release);
            }
        }
        PendingDdl::AlterView { oid, .. } => {
            if let Some(v) = view_by_oid(db, *oid) {
                v.altered_by.store(0, Ordering::Release);
            }
        }
        PendingDdl::DropView(oid) => {
            if let Some(v) = view_by_oid(db, *oid) {
                let r = db
                    .catalog()
                    .apply_catalog_change(&CatalogChange::DropView { name: v.spec.key() });
                if let Err(e) = r {
                    tracing::warn!(
                        "could not drop view \"{}\" at commit: {}",
                        v.spec.name,
                        e.message
                    );
                }
            }
        }
        _ => {}
    }
}

/// PendingDdl for views: the (sub)transaction rolled back.
pub(crate) fn abort_pending(db: &Engine, p: PendingDdl) {
    let r = match p {
        PendingDdl::CreateView(oid) => match view_by_oid(db, oid) {
            Some(v) => db
                .catalog()
                .apply_catalog_change(&CatalogChange::DropView { name: v.spec.key() }),
            None => return,
        },
        PendingDdl::AlterView { oid, before } => match view_by_oid(db, oid) {
            Some(v) => db
                .catalog()
                .apply_catalog_change(&CatalogChange::AlterView {
                    name: v.spec.key(),
                    spec: before,
                }),
            None => return,
        },
        _ => return,
    };
    if let Err(e) = r {
        tracing::warn!("could not undo a view change after rollback: {}", e.message);
    }
}

fn view_by_oid(db: &Engine, oid: Oid) -> Option<Arc<engine::view::ViewDef>> {
    db.catalog().views().into_iter().find(|v| v.spec.oid == oid)
}
