//! COMMENT ON (PostgreSQL's `comment.c`): finds the object a
//! [`CommentStmt`] names, with PostgreSQL's errors, and sets or removes its
//! comment.
//!
//! A table's and its columns' comments belong to the table's definition
//! (`crate::tablecmds::comment_on`, an ALTER TABLE). Every other kind goes
//! to the catalog's comment map (`engine::comment`) through
//! `CatalogChange::SetComment`, marked with this transaction's xid and
//! the committed text before it so that other sessions keep seeing that
//! text until COMMIT; ROLLBACK puts the entry back as it was
//! ([`PendingDdl::Comment`]), start-up after a crash does the same for a
//! transaction the clog never saw commit.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
use crate::namespace::QualName;
pub use crate::parser::commentstmt::{CommentKind, CommentStmt};
use engine::catalog::{undefined_table, CatalogChange, TableDef};
use engine::comment::{
    CommentKey, PG_AUTHID, PG_CLASS, PG_CONSTRAINT, PG_DATABASE, PG_NAMESPACE, PG_TYPE,
};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::TransactionId;

/// The OID of the node's one database (pg_database.oid).
const DATABASE_OID: u32 = crate::pgcatalog::DATABASE_OID;

/// An entry of the comment map as it was before a change: text, the
/// uncommitted setter, the committed text before that.
pub type CommentBefore = (Option<String>, TransactionId, Option<String>);

/// Runs a COMMENT statement; `database` is the session's database name.
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &CommentStmt, database: &str) -> PgResult<String> {
    check_ownership(cx, stmt)?;
    let key = match stmt.kind {
        CommentKind::Table | CommentKind::Column => return relation_comment(cx, stmt),
        CommentKind::Index | CommentKind::View | CommentKind::Sequence => {
            let oid = relation_of_kind(cx, stmt.kind, &stmt.name)?;
            CommentKey::object(PG_CLASS, oid)
        }
        CommentKind::Schema => {
            let name = single(&stmt.name)?;
            let oid = cx
                .catalog()
                .schema_oid(&name)
                .ok_or_else(|| engine::catalog::undefined_schema(&name))?;
            CommentKey::object(PG_NAMESPACE, oid)
        }
        CommentKind::Type => {
            let q = qual(&stmt.name)?;
            let t = cx
                .db
                .catalog()
                .enum_type(&q.name)
                .ok_or_else(|| engine::catalog::undefined_type(&q.display()))?;
            CommentKey::object(PG_TYPE, t.spec.oid)
        }
        CommentKind::Constraint => {
            let con = stmt.constraint.clone().unwrap_or_default();
            let q = qual(&stmt.name)?;
            let t = crate::namespace::table(&cx.catalog(), &q)?;
            let exists = t.constraints.iter().any(|c| c.name == con)
                || t.indexes
                    .list()
                    .iter()
                    .any(|i| i.spec.primary && i.spec.name == con);
            if !exists {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!(
                        "constraint \"{con}\" for table \"{}\" does not exist",
                        t.name
                    ),
                ));
            }
            CommentKey {
                classoid: PG_CONSTRAINT,
                objoid: t.oid,
                subid: 0,
                name: con,
            }
        }
        CommentKind::Role => {
            let name = single(&stmt.name)?;
            let r = cx
                .db
                .catalog()
                .role(&name)
                .ok_or_else(|| engine::catalog::undefined_role(&name))?;
            CommentKey::object(PG_AUTHID, r.oid)
        }
        CommentKind::Database => {
            let name = single(&stmt.name)?;
            if name != database {
                // A WARNING, not an error: pg_dump output restored into
                // a database of another name must not fail here.
                cx.notices.push(PgError::warning(
                    sqlstate::UNDEFINED_DATABASE,
                    format!("database \"{name}\" does not exist"),
                ));
                return Ok("COMMENT".into());
            }
            CommentKey::object(PG_DATABASE, DATABASE_OID)
        }
    };
    set_comment(cx, key, stmt.text.as_deref())?;
    Ok("COMMENT".into())
}

/// Sets (or with None / '' removes) the comment of `key`, marked with
/// this transaction's xid until it ends.
pub fn set_comment(cx: &mut DdlCtx<'_>, key: CommentKey, text: Option<&str>) -> PgResult<()> {
    let xid = cx.xact.assign_xid()?;
    let text = text.filter(|t| !t.is_empty()).map(str::to_string);
    let old = cx.db.catalog().comment(&key);
    let before: CommentBefore = match &old {
        Some(c) => (
            c.text.clone(),
            TransactionId(c.by.load(Ordering::Acquire)),
            c.previous.clone(),
        ),
        None => (None, TransactionId::INVALID, None),
    };
    // The committed text others keep seeing: the entry's own if no
    // transaction holds it, else the one before that transaction's.
    let previous = match &old {
        Some(c) if c.by.load(Ordering::Acquire) != 0 => c.previous.clone(),
        Some(c) => c.text.clone(),
        None => None,
    };
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::SetComment {
            key: key.clone(),
            text,
            by: xid,
            previous,
        })?;
    cx.pending.push(PendingDdl::Comment { key, before });
    Ok(())
}

/// COMMIT: the entry loses its mark (the clog says the same to readers
/// and to start-up).
pub(crate) fn commit_pending(db: &Engine, key: &CommentKey) {
    if let Some(c) = db.catalog().comment(key) {
        c.by.store(0, Ordering::Release);
    }
}

/// ROLLBACK: the entry goes back to what it was.
pub(crate) fn abort_pending(db: &Engine, key: CommentKey, before: CommentBefore) {
    let (text, by, previous) = before;
    if let Err(e) = db
        .catalog()
        .apply_catalog_change(&CatalogChange::SetComment {
            key,
            text,
            by,
            previous,
        })
    {
        tracing::warn!("could not undo a comment after rollback: {}", e.message);
    }
}

/// COMMENT ON TABLE / COLUMN: a table's go to its definition; a view's
/// column to the comment map.
fn relation_comment(cx: &mut DdlCtx<'_>, stmt: &CommentStmt) -> PgResult<String> {
    let (rel, column) = match stmt.kind {
        CommentKind::Column => match stmt.name.split_last() {
            Some((c, rel)) if !rel.is_empty() => (rel, Some(c.clone())),
            _ => return Err(PgError::syntax("column name must be qualified")),
        },
        _ => (stmt.name.as_slice(), None),
    };
    let q = qual(rel)?;
    let view = crate::namespace::find_view(&cx.catalog(), &q);
    if let Some(v) = view {
        let Some(c) = column else {
            return Err(wrong_kind(&q.name, "a table"));
        };
        let pos = v
            .columns
            .iter()
            .position(|col| col.name == c)
            .ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{c}\" of relation \"{}\" does not exist", v.name),
                )
            })?;
        let key = CommentKey {
            classoid: PG_CLASS,
            objoid: v.oid,
            subid: pos as i32 + 1,
            name: String::new(),
        };
        set_comment(cx, key, stmt.text.as_deref())?;
        return Ok("COMMENT".into());
    }
    if let Some((_, what)) = find_relation(cx, rel)? {
        if what != "table" && column.is_none() {
            return Err(wrong_kind(&q.name, "a table"));
        }
    }
    let mut parts: Vec<ast::Ident> = rel.iter().map(|p| ast::Ident::with_quote('"', p)).collect();
    let kind = match &column {
        Some(c) => {
            parts.push(ast::Ident::with_quote('"', c));
            ast::CommentObject::Column
        }
        None => ast::CommentObject::Table,
    };
    crate::tablecmds::comment_on(cx, &kind, &ast::ObjectName(parts), stmt.text.as_deref())
}

/// The relation `name` names, which must be of `kind` (INDEX, VIEW,
/// SEQUENCE): its OID. 42P01 if there is no relation of that name, 42809
/// if it is of another kind.
fn relation_of_kind(cx: &DdlCtx<'_>, kind: CommentKind, name: &[String]) -> PgResult<u32> {
    let q = qual(name)?;
    let Some((oid, what)) = find_relation(cx, name)? else {
        return Err(undefined_table(&q.display()));
    };
    let wanted = match kind {
        CommentKind::Index => "index",
        CommentKind::View => "view",
        _ => "sequence",
    };
    if what != wanted {
        let article = if wanted == "index" { "an" } else { "a" };
        return Err(wrong_kind(&q.name, &format!("{article} {wanted}")));
    }
    Ok(oid)
}

/// The first relation along the path (or in the named schema) called
/// `name`: its OID and kind ("table", "view", "sequence", "index").
fn find_relation(cx: &DdlCtx<'_>, name: &[String]) -> PgResult<Option<(u32, &'static str)>> {
    let q = qual(name)?;
    let view = cx.catalog();
    let schemas: Vec<u32> = match crate::namespace::schema_of(&view, &q)? {
        Some(ns) => vec![ns],
        None => cx.path.to_vec(),
    };
    for ns in schemas {
        if let Some(t) = view.get_in(ns, &q.name) {
            return Ok(Some((t.oid, "table")));
        }
        if let Some(v) = view.view_in(ns, &q.name) {
            return Ok(Some((v.oid, "view")));
        }
        if let Some(s) = view.sequence_in(ns, &q.name) {
            return Ok(Some((s.spec.oid, "sequence")));
        }
        if let Some(i) = index_in(cx.db, ns, &q.name) {
            return Ok(Some((i, "index")));
        }
    }
    Ok(None)
}

/// PostgreSQL's `check_object_ownership` for COMMENT: the object's owner
/// (or a role whose privileges the user has) may comment on it; a role
/// needs CREATEROLE (a superuser role: SUPERUSER). Superusers skip it.
/// Names that do not resolve are left to the statement's own error.
fn check_ownership(cx: &DdlCtx<'_>, stmt: &CommentStmt) -> PgResult<()> {
    use crate::privileges::{not_owner, relation_owner, AclUser};
    let u = AclUser::of(cx.db, cx.user);
    if u.superuser {
        return Ok(());
    }
    let cv = cx.catalog();
    let owner_is_mine = |owner: u32| u.has_privs_of(owner);
    match stmt.kind {
        CommentKind::Table
        | CommentKind::Column
        | CommentKind::Index
        | CommentKind::View
        | CommentKind::Sequence
        | CommentKind::Constraint => {
            let rel = match stmt.kind {
                CommentKind::Column => match stmt.name.split_last() {
                    Some((_, rel)) if !rel.is_empty() => rel,
                    _ => return Ok(()),
                },
                _ => stmt.name.as_slice(),
            };
            let Some((oid, what)) = find_relation(cx, rel)? else {
                return Ok(());
            };
            // An index is its table's.
            let owner_oid = if what == "index" {
                cx.db
                    .catalog()
                    .tables()
                    .into_iter()
                    .find(|t| t.indexes.list().iter().any(|i| i.spec.oid == oid))
                    .map_or(oid, |t| t.oid)
            } else {
                oid
            };
            if owner_is_mine(relation_owner(&cv, owner_oid)) {
                return Ok(());
            }
            let name = qual(rel)?.name;
            // Columns and constraints name the relation as PostgreSQL's
            // OBJECT_COLUMN / OBJECT_TABCONSTRAINT do.
            let word = match stmt.kind {
                CommentKind::Column | CommentKind::Constraint => "relation",
                _ => what,
            };
            Err(not_owner(word, &name))
        }
        CommentKind::Schema => {
            let name = single(&stmt.name)?;
            let Some(ns) = cv.schema_oid(&name) else {
                return Ok(());
            };
            if owner_is_mine(crate::privileges::schema_acl(&cv, ns).0) {
                return Ok(());
            }
            Err(not_owner("schema", &name))
        }
        CommentKind::Type => {
            let name = qual(&stmt.name)?.name;
            let Some(t) = cx.db.catalog().enum_type(&name) else {
                return Ok(());
            };
            if owner_is_mine(crate::privileges::type_owner(&cv, t.spec.oid)) {
                return Ok(());
            }
            Err(not_owner("type", &name))
        }
        CommentKind::Role => {
            let name = single(&stmt.name)?;
            let cat = cx.db.catalog();
            let Some(target) = cat.role(&name) else {
                return Ok(());
            };
            if target.superuser {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    "must be superuser",
                ));
            }
            if !cat.role(cx.user).is_some_and(|r| r.createrole) {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    "must have CREATEROLE privilege",
                ));
            }
            Ok(())
        }
        CommentKind::Database => {
            let name = single(&stmt.name)?;
            let key = CommentKey::object(PG_DATABASE, DATABASE_OID);
            let (owner, _) = crate::privileges::object_acl(
                &cv,
                &key,
                engine::acl::ObjType::Database,
                engine::catalog::BOOTSTRAP_SUPERUSER_OID,
            );
            if owner_is_mine(owner) {
                return Ok(());
            }
            Err(not_owner("database", &name))
        }
    }
}

/// The OID of the index `name` in schema `ns`.
fn index_in(db: &Engine, ns: u32, name: &str) -> Option<u32> {
    db.catalog()
        .tables()
        .into_iter()
        .find_map(|t: Arc<TableDef>| {
            if t.namespace != ns {
                return None;
            }
            t.indexes
                .list()
                .iter()
                .find(|i| i.spec.name == name)
                .map(|i| i.spec.oid)
        })
}

/// 42809 `"x" is not a …`.
fn wrong_kind(name: &str, what: &str) -> PgError {
    PgError::new(
        sqlstate::WRONG_OBJECT_TYPE,
        format!("\"{name}\" is not {what}"),
    )
}

/// A possibly schema-qualified name.
fn qual(parts: &[String]) -> PgResult<QualName> {
    match parts {
        [n] => Ok(QualName::bare(n)),
        [s, n] => Ok(QualName {
            schema: Some(s.clone()),
            name: n.clone(),
        }),
        _ => Err(PgError::syntax(format!(
            "improper qualified name (too many dotted names): {}",
            parts.join(".")
        ))),
    }
}

/// A name that cannot be qualified (schema, role, database).
fn single(parts: &[String]) -> PgResult<String> {
    match parts {
        [n] => Ok(n.clone()),
        _ => Err(PgError::syntax(format!(
            "syntax error at or near \"{}\"",
            parts.get(1).map(String::as_str).unwrap_or(".")
        ))),
    }
}
