//! Privilege checks, GRANT / REVOKE, role membership and owners
//! (PostgreSQL's `aclchk.c`, `acl.c`'s `has_*_privilege` functions and
//! `user.c`'s GrantRole).
//!
//! The data lives in the engine ([`engine::acl`]: the side map of owners
//! and access lists, [`engine::catalog::RoleSpec::member_of`]). This
//! module decides:
//!
//! - **Who the user is** ([`AclUser`]): the current role, whether it is a
//!   superuser (who skips every check), and the roles whose privileges it
//!   has (itself, the roles it is a member of through INHERIT, PUBLIC).
//!   The session caches it per (role, catalog version).
//! - **What a statement needs**: a planned statement carries the
//!   relations it reads and the one it writes ([`check_planned`]):
//!   SELECT on every table, view and sequence it names (a view's own
//!   query is checked as the view's owner, not as the caller — also when
//!   the caller is a superuser, unless the owner is one), and
//!   INSERT / UPDATE / DELETE on the target (with SELECT when WHERE or
//!   RETURNING reads it; column-level INSERT / UPDATE rights are enough
//!   for the columns written). Utility statements need ownership
//!   ([`check_owner`]) or TRUNCATE. A relation in a schema also needs
//!   USAGE on it. Missing rights are PostgreSQL's 42501 `permission
//!   denied for table t`.
//! - **GRANT / REVOKE** ([`execute`]): the new list is computed from the
//!   one the session sees (or the kind's default) and stored as a
//!   transactional `SetPrivileges` change; ROLLBACK restores it. The
//!   grantor is the owner when the user has the owner's privileges
//!   (superusers included), else the user, who must hold the grant
//!   options (PostgreSQL's warnings when it holds only some).
//! - **Owners**: an object a non-bootstrap role creates gets an entry
//!   naming it ([`record_owner`]); `ALTER … OWNER TO` changes it and
//!   moves the old owner's items to the new one (`aclnewowner`).
//!
//! - **Functions**: GRANT / REVOKE EXECUTE on functions and procedures
//!   keep their list under (pg_proc, oid), the owner staying in the
//!   function's row; `crate::fmgr::check_execute` checks it at each call.
//!
//! Not built: column-level SELECT (a user needs table-level SELECT to
//! read), privileges on types and languages, and ALTER DEFAULT
//! PRIVILEGES for functions.

use std::sync::atomic::Ordering;

use engine::acl::{
    acl_grant, acl_grant_options, acl_mask, acl_revoke, AclItem, AclMode, ObjType, PrivEntry,
    ACL_CREATE, ACL_DELETE, ACL_ID_PUBLIC, ACL_INSERT, ACL_SELECT, ACL_TRUNCATE, ACL_UPDATE,
};
use engine::catalog::{CatalogChange, CatalogView, RoleGrant, BOOTSTRAP_SUPERUSER_OID};
use engine::comment::{CommentKey, PG_CLASS, PG_DATABASE, PG_NAMESPACE};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{Oid, TransactionId};

use crate::ddl::{DdlCtx, PendingDdl};
use crate::parser::grantstmt::{GrantStmt, GrantTarget, PrivName};
use crate::privileges::{
    check_relation, denied, not_owner, object_acl, relation_info, schema_acl, AclUser, ColumnUse,
    RelInfo, DATABASE_OID,
};

/// The checks of a planned DML statement (see the module doc); `sql` is
/// its text, from which column-level SELECT rights learn the columns a
/// statement may read.
pub fn check_planned(
    cv: &CatalogView<'_>,
    u: &AclUser,
    planned: &crate::planner::Planned,
    sql: &str,
) -> PgResult<()> {
    if u.superuser {
        // A superuser skips its own checks, not those of the views it
        // reads: their owners' rights still apply (PostgreSQL checks a
        // view's relations as `checkAsUser`, whoever the caller is).
        if planned.reads_view {
            return check_view_owners(cv, &planned.reads);
        }
        return Ok(());
    }
    if planned.calls_functions {
        check_function_schemas(cv, u, planned)?;
    }
    use crate::planner::Plan;
    let (target, mode, written): (Option<Oid>, AclMode, Vec<usize>) = match &planned.plan {
        Plan::Query(_) => (None, 0, Vec::new()),
        Plan::Insert(p) => {
            let mut m = ACL_INSERT;
            if p.returning.is_some() {
                m |= ACL_SELECT;
            }
            if matches!(
                p.on_conflict,
                Some(crate::planner::OnConflictPlan {
                    action: crate::planner::ConflictAction::Update { .. },
                    ..
                })
            ) {
                m |= ACL_UPDATE | ACL_SELECT;
            }
            (Some(p.table.oid), m, p.target_cols.clone())
        }
        Plan::Update(p) => {
            let cols = p.assignments.iter().map(|(c, _)| *c).collect();
            (Some(p.table.oid), ACL_UPDATE, cols)
        }
        Plan::Delete(p) => (Some(p.table.oid), ACL_DELETE, Vec::new()),
        Plan::ViewDml(p) => {
            use engine::pg_trigger::{TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE};
            let mut m = match p.op {
                TRIGGER_TYPE_INSERT => ACL_INSERT,
                TRIGGER_TYPE_UPDATE => ACL_UPDATE,
                _ => ACL_DELETE,
            };
            if p.op == TRIGGER_TYPE_INSERT && p.returning.is_some() {
                m |= ACL_SELECT;
            }
            (Some(p.view.oid), m, p.set_columns())
        }
    };
    // Lexed only when a table-level right is missing (column fallback).
    let text = std::cell::OnceCell::new();
    // The columns of a table the text may read: all of them with a `*`,
    // else those it names (a name another table shares counts too: the
    // check errs on the side of asking more).
    let read_cols = |oid: Oid| -> Option<Vec<usize>> {
        let (names, star) = text
            .get_or_init(|| crate::parser::names_and_star(sql))
            .as_ref()?;
        let t = cv.catalog().by_oid(oid)?;
        Some(named_columns(&t, names, *star))
    };
    if let Some(t) = target {
        let mut mode = mode;
        if planned.reads_target {
            mode |= ACL_SELECT;
        }
        if let Some(rel) = relation_info(cv, t) {
            let table_level = ColumnUse {
                written: &written,
                read: None,
            };
            if check_relation(cv, u, &rel, mode, table_level).is_err() {
                let read = read_cols(t);
                let cols = ColumnUse {
                    written: &written,
                    read: read.as_deref(),
                };
                check_relation(cv, u, &rel, mode, cols)?;
            }
        }
    }
    for &oid in &planned.reads {
        if Some(oid) == target {
            continue;
        }
        if let Some((word, name)) = crate::privileges::superuser_only_relation(oid) {
            return Err(denied(word, name));
        }
        if let Some(rel) = relation_info(cv, oid) {
            if check_relation(cv, u, &rel, ACL_SELECT, ColumnUse::default()).is_err() {
                let read = read_cols(oid);
                let cols = ColumnUse {
                    written: &[],
                    read: read.as_deref(),
                };
                check_relation(cv, u, &rel, ACL_SELECT, cols)?;
            }
        }
    }
    let views: Vec<Oid> = planned.reads.iter().copied().chain(target).collect();
    check_view_owners(cv, &views)
}

/// USAGE on the schema of each user function outside `public` the
/// statement calls (PostgreSQL checks it when it looks the name up).
fn check_function_schemas(
    cv: &CatalogView<'_>,
    u: &AclUser,
    planned: &crate::planner::Planned,
) -> PgResult<()> {
    let mut called = Vec::new();
    planned.for_each_expr(&mut |e| {
        e.walk(&mut |n| {
            if let crate::expr::Expr::Func {
                func: crate::functions::Func::User(oid),
                ..
            } = n
            {
                called.push(*oid);
            }
        })
    });
    if called.is_empty() {
        return Ok(());
    }
    for f in cv.functions() {
        let ns = f.spec.namespace;
        if called.contains(&f.spec.oid)
            && ns != engine::namespace::PUBLIC_NAMESPACE
            && crate::privileges::schema_privileges(cv, u, ns, engine::acl::ACL_USAGE) == 0
        {
            return Err(denied(
                "schema",
                &cv.schema_name(ns).unwrap_or_else(|| ns.to_string()),
            ));
        }
    }
    Ok(())
}

/// A view reads its relations with its owner's rights, not the caller's
/// (PostgreSQL's `checkAsUser`): for every view among `oids`, what its
/// query reads is checked for SELECT as the view's owner, and so on down
/// nested views. A superuser owner skips the check of its own view, not
/// of the views that view reads.
fn check_view_owners(cv: &CatalogView<'_>, oids: &[Oid]) -> PgResult<()> {
    let views = cv.views();
    let mut todo: Vec<Oid> = oids.to_vec();
    let mut seen: Vec<Oid> = Vec::new();
    while let Some(oid) = todo.pop() {
        if seen.contains(&oid) {
            continue;
        }
        seen.push(oid);
        let Some(view) = views.iter().find(|v| v.oid == oid) else {
            continue;
        };
        let owner_oid = crate::privileges::relation_owner(cv, oid);
        let cat = cv.catalog();
        let Some(role) = cat.role_by_oid(owner_oid) else {
            continue;
        };
        if role.superuser {
            // No check at this level, but a view it reads may belong to
            // someone who needs one.
            todo.extend(view.depends.iter().copied());
            continue;
        }
        let mut roles = cat.member_closure(owner_oid, true);
        roles.push(ACL_ID_PUBLIC);
        let owner = AclUser {
            oid: owner_oid,
            superuser: false,
            roles,
        };
        let text = std::cell::OnceCell::new();
        for &dep in &view.depends {
            if let Some((word, name)) = crate::privileges::superuser_only_relation(dep) {
                return Err(denied(word, name));
            }
            let Some(rel) = relation_info(cv, dep) else {
                continue;
            };
            if check_relation(cv, &owner, &rel, ACL_SELECT, ColumnUse::default()).is_err() {
                // Column rights: the columns the view's query names.
                let read = text
                    .get_or_init(|| crate::parser::names_and_star(&view.query))
                    .as_ref()
                    .and_then(|(names, star)| {
                        let t = cat.by_oid(dep)?;
                        Some(named_columns(&t, names, *star))
                    });
                let cols = ColumnUse {
                    written: &[],
                    read: read.as_deref(),
                };
                check_relation(cv, &owner, &rel, ACL_SELECT, cols)?;
            }
            todo.push(dep);
        }
    }
    Ok(())
}

/// What a ROLLBACK puts back: (entry, by, previous) before the change.
pub type PrivBefore = (Option<PrivEntry>, TransactionId, Option<PrivEntry>);

/// Sets the entry of `key`, marked with this transaction's xid until it
/// ends (undone at ROLLBACK through [`PendingDdl::Privileges`]).
pub fn set_privileges(cx: &mut DdlCtx<'_>, key: CommentKey, entry: PrivEntry) -> PgResult<()> {
    change_privileges(cx, key, Some(entry))
}

/// A DROP takes the object's privilege entry with it (PostgreSQL deletes
/// its ACL with the catalog row, and its pg_shdepend rows): removed as
/// [`set_privileges`] changes one, so ROLLBACK brings it back.
pub fn drop_privileges(cx: &mut DdlCtx<'_>, key: CommentKey) -> PgResult<()> {
    if cx.catalog().privileges(&key).is_none() {
        return Ok(());
    }
    change_privileges(cx, key, None)
}

fn change_privileges(
    cx: &mut DdlCtx<'_>,
    key: CommentKey,
    entry: Option<PrivEntry>,
) -> PgResult<()> {
    let xid = cx.xact.assign_xid()?;
    let old = cx.db.catalog().privileges(&key);
    let mut before: PrivBefore = (None, TransactionId::INVALID, None);
    let mut previous = None;
    if let Some(p) = &old {
        let by = TransactionId(p.by.load(Ordering::Acquire));
        let own = cx.xact.own().xids;
        if by.is_valid() && own.binary_search(&by).is_err() {
            // Another transaction's uncommitted GRANT on the same object
            // (PostgreSQL would wait on the catalog row).
            let clog = cx.db.clog();
            if p.visible(own, clog).map(|e| e as *const _)
                != p.entry.as_ref().map(|e| e as *const _)
            {
                return Err(PgError::new(
                    sqlstate::SERIALIZATION_FAILURE,
                    "tuple concurrently updated",
                ));
            }
        }
        let by = TransactionId(p.by.load(Ordering::Acquire));
        before = (p.entry.clone(), by, p.previous.clone());
        previous = if by.is_valid() {
            p.previous.clone()
        } else {
            p.entry.clone()
        };
    }
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::SetPrivileges {
            key: key.clone(),
            entry,
            by: xid,
            previous,
        })?;
    cx.pending.push(PendingDdl::Privileges { key, before });
    Ok(())
}

/// COMMIT: the entry loses its mark.
pub(crate) fn commit_pending(db: &Engine, key: &CommentKey) {
    if let Some(p) = db.catalog().privileges(key) {
        p.by.store(0, Ordering::Release);
    }
}

/// ROLLBACK: the entry goes back to what it was.
pub(crate) fn abort_pending(db: &Engine, key: CommentKey, before: PrivBefore) {
    let (entry, by, previous) = before;
    if let Err(e) = db
        .catalog()
        .apply_catalog_change(&CatalogChange::SetPrivileges {
            key,
            entry,
            by,
            previous,
        })
    {
        tracing::warn!("could not undo a GRANT after rollback: {}", e.message);
    }
}

/// A privilege word's right, if the object kind has it (0LP01 otherwise,
/// as PostgreSQL's "invalid privilege type X for table").
fn privilege_bit(p: &str, kind: ObjType, kind_word: &str) -> PgResult<AclMode> {
    if p == "all" {
        return Ok(kind.all_rights());
    }
    let bit = engine::acl::privilege_word(p)
        .ok_or_else(|| PgError::syntax(format!("unrecognized privilege type \"{p}\"")))?;
    if kind.all_rights() & bit == 0 {
        return Err(PgError::new(
            sqlstate::INVALID_GRANT_OPERATION,
            format!(
                "invalid privilege type {} for {kind_word}",
                p.to_uppercase()
            ),
        ));
    }
    Ok(bit)
}

/// A grantee's OID (0 for PUBLIC); 42704 for an unknown role.
fn grantee_oid(cv: &CatalogView<'_>, name: &str, current: &str, session: &str) -> PgResult<Oid> {
    let name = match name {
        "public" => return Ok(ACL_ID_PUBLIC),
        "current_user" | "current_role" => current,
        "session_user" => session,
        n => n,
    };
    cv.catalog()
        .role(name)
        .map(|r| r.oid)
        .or_else(|| predefined_oid(name))
        .ok_or_else(|| engine::catalog::undefined_role(name))
}

fn predefined_oid(name: &str) -> Option<Oid> {
    engine::acl::PREDEFINED_ROLES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(o, _)| *o)
}

/// One object a GRANT names.
struct Object {
    key: CommentKey,
    kind: ObjType,
    word: &'static str,
    name: String,
    owner: Oid,
    acl: Vec<AclItem>,
    /// Keep in the entry (a schema's owner is in its row: 0).
    entry_owner: Oid,
}

/// The facts GRANT / REVOKE need from the session.
pub struct GrantCtx<'a> {
    /// current_user.
    pub current_user: &'a str,
    /// session_user.
    pub session_user: &'a str,
    /// current_database().
    pub database: &'a str,
}

/// Runs GRANT / REVOKE; returns the command tag.
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &GrantStmt, g: &GrantCtx<'_>) -> PgResult<String> {
    let u = AclUser::of(cx.db, g.current_user);
    match stmt {
        GrantStmt::Roles {
            grant,
            admin,
            roles,
            grantees,
        } => {
            grant_roles(cx, &u, *grant, *admin, roles, grantees, g)?;
        }
        GrantStmt::Default {
            roles,
            schemas,
            objtype,
            action,
        } => {
            default_privileges(cx, &u, roles, schemas, *objtype, action, g)?;
        }
        GrantStmt::Objects {
            grant,
            option,
            privileges,
            target,
            grantees,
            cascade,
        } => {
            let cv = cx.catalog();
            let objects = resolve_objects(&cv, target, g)?;
            let grantee_oids = grantees
                .iter()
                .map(|n| grantee_oid(&cv, n, g.current_user, g.session_user))
                .collect::<PgResult<Vec<Oid>>>()?;
            if *grant && *option && grantee_oids.contains(&ACL_ID_PUBLIC) {
                return Err(PgError::new(
                    sqlstate::INVALID_GRANT_OPERATION,
                    "grant options can only be granted to roles",
                ));
            }
            for obj in objects {
                grant_on(
                    cx,
                    &u,
                    &obj,
                    *grant,
                    *option,
                    privileges,
                    &grantee_oids,
                    *cascade,
                )?;
            }
        }
    }
    Ok(stmt.tag().into())
}

fn resolve_objects(
    cv: &CatalogView<'_>,
    target: &GrantTarget,
    g: &GrantCtx<'_>,
) -> PgResult<Vec<Object>> {
    let rel_object = |r: RelInfo| -> Object {
        let key = CommentKey::object(PG_CLASS, r.oid);
        let (owner, acl) = object_acl(cv, &key, r.kind, BOOTSTRAP_SUPERUSER_OID);
        Object {
            key,
            kind: r.kind,
            word: r.word,
            name: r.name,
            owner,
            acl,
            entry_owner: owner,
        }
    };
    let schema_object = |ns: Oid, name: &str| -> Object {
        let (owner, acl) = schema_acl(cv, ns);
        Object {
            key: CommentKey::object(PG_NAMESPACE, ns),
            kind: ObjType::Schema,
            word: "schema",
            name: name.to_string(),
            owner,
            acl,
            entry_owner: 0,
        }
    };
    let schema_oid = |name: &str| -> PgResult<Oid> {
        cv.schema_oid(name).ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_SCHEMA_NAME,
                format!("schema \"{name}\" does not exist"),
            )
        })
    };
    let mut out = Vec::new();
    match target {
        GrantTarget::Defaults(_) => {
            return Err(PgError::internal(
                "ALTER DEFAULT PRIVILEGES target in GRANT",
            ))
        }
        GrantTarget::Tables(names) | GrantTarget::Sequences(names) => {
            let seq = matches!(target, GrantTarget::Sequences(_));
            for parts in names {
                let q = qual(parts)?;
                let rel = if seq {
                    crate::namespace::find_sequence(cv, &q)
                        .and_then(|s| relation_info(cv, s.spec.oid))
                } else {
                    crate::privileges::relation_named(cv, &q)
                };
                let Some(rel) = rel else {
                    return Err(engine::catalog::undefined_table(&q.display()));
                };
                if seq && rel.kind != ObjType::Sequence {
                    return Err(PgError::new(
                        sqlstate::WRONG_OBJECT_TYPE,
                        format!("\"{}\" is not a sequence", rel.name),
                    ));
                }
                out.push(rel_object(rel));
            }
        }
        GrantTarget::AllTablesIn(schemas) | GrantTarget::AllSequencesIn(schemas) => {
            let seq = matches!(target, GrantTarget::AllSequencesIn(_));
            for s in schemas {
                let ns = schema_oid(s)?;
                let mut oids: Vec<Oid> = if seq {
                    cv.sequences()
                        .iter()
                        .filter(|q| q.spec.namespace == ns)
                        .map(|q| q.spec.oid)
                        .collect()
                } else {
                    let cat = cv.catalog();
                    let mut v: Vec<Oid> = cat
                        .tables()
                        .iter()
                        .filter(|t| t.namespace == ns && cv.get_in(ns, &t.name).is_some())
                        .map(|t| t.oid)
                        .collect();
                    v.extend(
                        cv.views()
                            .iter()
                            .filter(|w| w.namespace == ns)
                            .map(|w| w.oid),
                    );
                    v
                };
                oids.sort_unstable();
                for o in oids {
                    if let Some(rel) = relation_info(cv, o) {
                        out.push(rel_object(rel));
                    }
                }
            }
        }
        GrantTarget::Schemas(names) => {
            for s in names {
                let ns = schema_oid(s)?;
                out.push(schema_object(ns, s));
            }
        }
        GrantTarget::Functions(word, items) => {
            for item in items {
                let spec = crate::functioncmds::lookup_ref(cv, word, item)?;
                out.push(function_object(cv, &spec));
            }
        }
        GrantTarget::AllFunctionsIn(word, schemas) => {
            for s in schemas {
                let ns = schema_oid(s)?;
                let mut specs: Vec<_> = cv
                    .functions()
                    .into_iter()
                    .map(|f| f.current_spec())
                    .filter(|f| f.namespace == ns)
                    .filter(|f| match word.as_str() {
                        "function" => f.kind != b'p',
                        "procedure" => f.kind == b'p',
                        _ => true,
                    })
                    .collect();
                specs.sort_by_key(|f| f.oid);
                for spec in specs {
                    out.push(function_object(cv, &spec));
                }
            }
        }
        GrantTarget::Databases(names) => {
            for d in names {
                if d != g.database {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_DATABASE,
                        format!("database \"{d}\" does not exist"),
                    ));
                }
                let key = CommentKey::object(PG_DATABASE, DATABASE_OID);
                let (owner, acl) = object_acl(cv, &key, ObjType::Database, BOOTSTRAP_SUPERUSER_OID);
                out.push(Object {
                    key,
                    kind: ObjType::Database,
                    word: "database",
                    name: d.clone(),
                    owner,
                    acl,
                    entry_owner: owner,
                });
            }
        }
    }
    Ok(out)
}

/// A function as GRANT / REVOKE sees it: its owner is its row's, its
/// list the entry keyed (pg_proc, oid) or EXECUTE to PUBLIC and the owner.
fn function_object(cv: &CatalogView<'_>, spec: &engine::pg_proc::FunctionSpec) -> Object {
    let key = CommentKey::object(engine::comment::PG_PROC, spec.oid);
    let acl = cv
        .privileges(&key)
        .and_then(|e| e.acl)
        .unwrap_or_else(|| engine::acl::acl_default(ObjType::Function, spec.owner));
    Object {
        key,
        kind: ObjType::Function,
        word: if spec.kind == b'p' {
            "procedure"
        } else {
            "function"
        },
        name: spec.name.clone(),
        owner: spec.owner,
        acl,
        entry_owner: 0,
    }
}

fn qual(parts: &[String]) -> PgResult<crate::namespace::QualName> {
    match parts {
        [t] => Ok(crate::namespace::QualName {
            schema: None,
            name: t.clone(),
        }),
        [s, t] | [_, s, t] => Ok(crate::namespace::QualName {
            schema: Some(s.clone()),
            name: t.clone(),
        }),
        _ => Err(PgError::syntax(
            "improper qualified name (too many dotted names)",
        )),
    }
}

/// GRANT / REVOKE on one object (and its columns).
#[allow(clippy::too_many_arguments)]
fn grant_on(
    cx: &mut DdlCtx<'_>,
    u: &AclUser,
    obj: &Object,
    grant: bool,
    option: bool,
    privileges: &[PrivName],
    grantees: &[Oid],
    cascade: bool,
) -> PgResult<()> {
    let cv = cx.catalog();
    // Table-level rights, and per-column rights by attnum.
    let mut table_mask: AclMode = 0;
    let mut col_masks: Vec<(i32, AclMode)> = Vec::new();
    for p in privileges {
        if p.columns.is_empty() {
            table_mask |= privilege_bit(&p.name, obj.kind, obj.word)?;
            continue;
        }
        if obj.kind != ObjType::Relation {
            return Err(PgError::new(
                sqlstate::INVALID_GRANT_OPERATION,
                "column privileges are only valid for relations",
            ));
        }
        let bit = privilege_bit(&p.name, ObjType::Column, "column")?;
        let table = cv.catalog().by_oid(obj.key.objoid);
        for c in &p.columns {
            let attnum = table
                .as_ref()
                .and_then(|t| {
                    t.columns
                        .iter()
                        .position(|col| col.name == *c && !col.dropped)
                })
                .or_else(|| {
                    cv.views()
                        .into_iter()
                        .find(|v| v.oid == obj.key.objoid)
                        .and_then(|v| v.columns.iter().position(|col| col.name == *c))
                })
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{c}\" of relation \"{}\" does not exist", obj.name),
                    )
                })?;
            let attnum = attnum as i32 + 1;
            match col_masks.iter_mut().find(|(a, _)| *a == attnum) {
                Some((_, m)) => *m |= bit,
                None => col_masks.push((attnum, bit)),
            }
        }
    }
    // The grantor and the rights it may pass on.
    let (grantor, avail) = if u.has_privs_of(obj.owner) {
        (obj.owner, obj.kind.all_rights())
    } else {
        let opts = acl_grant_options(&obj.acl, &u.roles, obj.kind.all_rights());
        let held = acl_mask(&obj.acl, &u.roles, obj.kind.all_rights());
        if opts == 0 && held == 0 {
            return Err(denied(obj.word, &obj.name));
        }
        (u.oid, opts)
    };
    let wanted = table_mask | col_masks.iter().fold(0, |m, (_, b)| m | b);
    if wanted & !avail != 0 {
        let none = wanted & avail == 0;
        let (code, msg) = match (grant, none) {
            (true, true) => (
                sqlstate::WARNING_PRIVILEGE_NOT_GRANTED,
                "no privileges were granted for",
            ),
            (true, false) => (
                sqlstate::WARNING_PRIVILEGE_NOT_GRANTED,
                "not all privileges were granted for",
            ),
            (false, true) => (
                sqlstate::WARNING_PRIVILEGE_NOT_REVOKED,
                "no privileges could be revoked for",
            ),
            (false, false) => (
                sqlstate::WARNING_PRIVILEGE_NOT_REVOKED,
                "not all privileges could be revoked for",
            ),
        };
        let w = PgError::warning(code, format!("{msg} \"{}\"", obj.name));
        cx.notices.push(w);
    }
    let apply = |acl: &mut Vec<AclItem>, mask: AclMode| -> PgResult<()> {
        let mask = mask & avail;
        if mask == 0 {
            return Ok(());
        }
        for &g in grantees {
            if grant {
                acl_grant(acl, g, grantor, mask, option);
            } else {
                acl_revoke(acl, g, grantor, mask, option, cascade)?;
            }
        }
        Ok(())
    };
    if table_mask != 0 || col_masks.is_empty() {
        let mut acl = obj.acl.clone();
        apply(&mut acl, table_mask)?;
        if acl != obj.acl || table_mask != 0 {
            set_privileges(
                cx,
                obj.key.clone(),
                PrivEntry {
                    owner: obj.entry_owner,
                    acl: Some(acl),
                },
            )?;
        }
        // A table-level REVOKE takes the columns' rights too.
        if !grant && table_mask != 0 && obj.kind == ObjType::Relation {
            let cols: Vec<CommentKey> = cx
                .db
                .catalog()
                .privilege_list()
                .into_iter()
                .map(|(k, _)| k)
                .filter(|k| k.classoid == PG_CLASS && k.objoid == obj.key.objoid && k.subid > 0)
                .collect();
            for key in cols {
                revoke_column(cx, &key, &apply, table_mask & ObjType::Column.all_rights())?;
            }
        }
    }
    for (attnum, mask) in col_masks {
        let key = CommentKey {
            classoid: PG_CLASS,
            objoid: obj.key.objoid,
            subid: attnum,
            name: String::new(),
        };
        let mut acl = cx
            .catalog()
            .privileges(&key)
            .and_then(|e| e.acl)
            .unwrap_or_default();
        apply(&mut acl, mask)?;
        set_privileges(
            cx,
            key,
            PrivEntry {
                owner: 0,
                acl: Some(acl),
            },
        )?;
    }
    Ok(())
}

fn revoke_column(
    cx: &mut DdlCtx<'_>,
    key: &CommentKey,
    apply: &dyn Fn(&mut Vec<AclItem>, AclMode) -> PgResult<()>,
    mask: AclMode,
) -> PgResult<()> {
    let Some(mut acl) = cx.catalog().privileges(key).and_then(|e| e.acl) else {
        return Ok(());
    };
    let before = acl.clone();
    apply(&mut acl, mask)?;
    if acl != before {
        set_privileges(
            cx,
            key.clone(),
            PrivEntry {
                owner: 0,
                acl: Some(acl),
            },
        )?;
    }
    Ok(())
}

/// GRANT / REVOKE role membership (PostgreSQL's AddRoleMems /
/// DelRoleMems). Not transactional, as every role change here.
fn grant_roles(
    cx: &mut DdlCtx<'_>,
    u: &AclUser,
    grant: bool,
    admin: bool,
    roles: &[String],
    grantees: &[String],
    g: &GrantCtx<'_>,
) -> PgResult<()> {
    let cat = cx.db.catalog();
    let cv = cx.db.catalog().view(cx.xact.own().xids, cx.db.clog());
    let mut notices = Vec::new();
    let me = cat.role(g.current_user);
    let createrole = me.as_ref().is_some_and(|r| r.createrole);
    for rname in roles {
        let role_oid = grantee_oid(&cv, rname, g.current_user, g.session_user)?;
        if role_oid == ACL_ID_PUBLIC {
            return Err(engine::catalog::undefined_role("public"));
        }
        let role = cat
            .role_by_oid(role_oid)
            .ok_or_else(|| engine::catalog::undefined_role(rname))?;
        // Who may: superusers; CREATEROLE for non-superuser roles; members
        // WITH ADMIN OPTION.
        let has_admin = me
            .as_ref()
            .is_some_and(|m| m.member_of.iter().any(|x| x.role == role_oid && x.admin));
        if !u.superuser {
            if role.superuser {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    "must be superuser to alter superusers",
                ));
            }
            if !createrole && !has_admin {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    format!("must have admin option on role \"{}\"", role.name),
                ));
            }
        }
        for mname in grantees {
            let member_oid = grantee_oid(&cv, mname, g.current_user, g.session_user)?;
            if member_oid == ACL_ID_PUBLIC {
                return Err(engine::catalog::undefined_role("public"));
            }
            let Some(member) = cat.role_by_oid(member_oid) else {
                return Err(engine::catalog::undefined_role(mname));
            };
            if cat.role(&member.name).is_none() {
                return Err(PgError::new(
                    sqlstate::INVALID_GRANT_OPERATION,
                    format!("role \"{}\" cannot have explicit members", member.name),
                ));
            }
            let mut spec = (*member).clone();
            if grant {
                if cat.member_closure(role_oid, false).contains(&member_oid) {
                    return Err(PgError::new(
                        sqlstate::INVALID_GRANT_OPERATION,
                        format!(
                            "role \"{}\" is a member of role \"{}\"",
                            role.name, member.name
                        ),
                    ));
                }
                match spec.member_of.iter_mut().find(|x| x.role == role_oid) {
                    Some(x) if x.admin || !admin => {
                        notices.push(PgError::notice(
                            sqlstate::SUCCESSFUL_COMPLETION,
                            format!(
                                "role \"{}\" is already a member of role \"{}\"",
                                member.name, role.name
                            ),
                        ));
                        continue;
                    }
                    Some(x) => x.admin = true,
                    None => spec.member_of.push(RoleGrant {
                        role: role_oid,
                        grantor: u.oid,
                        admin,
                    }),
                }
            } else {
                match spec.member_of.iter().position(|x| x.role == role_oid) {
                    None => {
                        notices.push(PgError::warning(
                            sqlstate::WARNING,
                            format!(
                                "role \"{}\" is not a member of role \"{}\"",
                                member.name, role.name
                            ),
                        ));
                        continue;
                    }
                    Some(i) if admin => spec.member_of[i].admin = false,
                    Some(i) => {
                        spec.member_of.remove(i);
                    }
                }
            }
            cat.apply_catalog_change(&CatalogChange::AlterRole {
                old_name: member.name.clone(),
                spec,
            })?;
        }
    }
    cx.notices.extend(notices);
    Ok(())
}

/// `ALTER TABLE | VIEW | SEQUENCE … OWNER TO role`: the entry's owner,
/// with the old owner's items moved to the new one.
pub fn alter_owner(cx: &mut DdlCtx<'_>, rel: &RelInfo, new_owner: &str) -> PgResult<()> {
    let obj = OwnedObject {
        key: CommentKey::object(PG_CLASS, rel.oid),
        kind: rel.kind,
        word: rel.word,
        name: &rel.name,
        namespace: rel.namespace,
    };
    change_owner(cx, &obj, new_owner)
}

/// `ALTER TYPE name OWNER TO role` of the enum type `oid` (its array type
/// has no entry of its own: pg_type shows it with its element's owner).
pub fn alter_type_owner(
    cx: &mut DdlCtx<'_>,
    oid: Oid,
    name: &str,
    new_owner: &str,
) -> PgResult<()> {
    let obj = OwnedObject {
        key: CommentKey::object(engine::comment::PG_TYPE, oid),
        kind: ObjType::Type,
        word: "type",
        name,
        namespace: engine::namespace::PUBLIC_NAMESPACE,
    };
    change_owner(cx, &obj, new_owner)
}

/// An object whose owner is in its privilege entry.
struct OwnedObject<'a> {
    /// Its entry's key.
    key: CommentKey,
    /// The kind (its default list).
    kind: ObjType,
    /// "table", "type", … (messages).
    word: &'static str,
    /// Its name (messages).
    name: &'a str,
    /// Its schema: the new owner needs CREATE on it.
    namespace: Oid,
}

/// `ALTER … OWNER TO role` (PostgreSQL's `ATExecChangeOwner` /
/// `AlterTypeOwner`): nothing when the owner does not change; else,
/// unless a superuser, the user must have the owner's privileges, be a
/// member of the new owner, and the new owner must have CREATE on the
/// object's schema. The old owner's items in the list move to the new
/// one (`aclnewowner`).
fn change_owner(cx: &mut DdlCtx<'_>, obj: &OwnedObject<'_>, new_owner: &str) -> PgResult<()> {
    let u = AclUser::of(cx.db, cx.user);
    let cv = cx.catalog();
    let new = grantee_oid(&cv, new_owner, cx.user, cx.session_user)?;
    if new == ACL_ID_PUBLIC {
        return Err(engine::catalog::undefined_role("public"));
    }
    let (owner, acl) = object_acl(&cv, &obj.key, obj.kind, BOOTSTRAP_SUPERUSER_OID);
    let explicit = cv.privileges(&obj.key).and_then(|e| e.acl).is_some();
    if owner == new {
        return Ok(());
    }
    if !u.superuser {
        if !u.has_privs_of(owner) {
            return Err(not_owner(obj.word, obj.name));
        }
        let cat = cx.db.catalog();
        let new_role = cat.role_by_oid(new);
        if !cat.member_closure(u.oid, false).contains(&new) {
            let name = new_role
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_default();
            return Err(PgError::new(
                sqlstate::INSUFFICIENT_PRIVILEGE,
                format!("must be member of role \"{name}\""),
            ));
        }
        let mut roles = cat.member_closure(new, true);
        roles.push(ACL_ID_PUBLIC);
        let new_user = AclUser {
            oid: new,
            superuser: new_role.is_some_and(|r| r.superuser),
            roles,
        };
        crate::privileges::check_create_in(&cv, &new_user, obj.namespace)?;
    }
    let acl = explicit.then(|| new_owner_acl(acl, owner, new));
    set_privileges(cx, obj.key.clone(), PrivEntry { owner: new, acl })
}

/// PostgreSQL's `aclnewowner`: items of the old owner become the new
/// owner's, merged with any the new owner already had.
pub(crate) fn new_owner_acl(acl: Vec<AclItem>, old: Oid, new: Oid) -> Vec<AclItem> {
    let mut out: Vec<AclItem> = Vec::new();
    for mut i in acl {
        if i.grantee == old {
            i.grantee = new;
        }
        if i.grantor == old {
            i.grantor = new;
        }
        engine::acl::acl_merge(&mut out, i);
    }
    out
}

/// The checks of a utility statement sqlparser parsed, made before it
/// runs: TRUNCATE needs TRUNCATE; DROP, ALTER TABLE and CREATE INDEX need
/// ownership (an index: its table's); CREATE TABLE / VIEW / SEQUENCE
/// need CREATE on the schema, CREATE SCHEMA CREATE on the database.
/// Names that do not resolve are left to the statement's own error.
pub fn check_utility(
    cv: &CatalogView<'_>,
    u: &AclUser,
    stmt: &sqlparser::ast::Statement,
    database: &str,
) -> PgResult<()> {
    use sqlparser::ast::{ObjectType, Statement};
    if u.superuser {
        return Ok(());
    }
    let rel_named = |n: &sqlparser::ast::ObjectName| -> Option<RelInfo> {
        crate::privileges::relation_named(cv, &crate::namespace::QualName::of(n).ok()?)
    };
    let create_in = |n: &sqlparser::ast::ObjectName| -> PgResult<()> {
        let q = crate::namespace::QualName::of(n)?;
        match crate::namespace::creation_namespace(cv, &q) {
            Ok(ns) => crate::privileges::check_create_in(cv, u, ns),
            Err(_) => Ok(()),
        }
    };
    match stmt {
        Statement::Truncate { table_names, .. } => {
            for t in table_names {
                if let Some(rel) = rel_named(&t.name) {
                    check_relation(cv, u, &rel, ACL_TRUNCATE, ColumnUse::default())?;
                }
            }
        }
        Statement::Drop {
            object_type, names, ..
        } => {
            for n in names {
                match object_type {
                    ObjectType::Table | ObjectType::View | ObjectType::Sequence => {
                        if let Some(rel) = rel_named(n) {
                            crate::privileges::check_owner(cv, u, &rel)?;
                        }
                    }
                    ObjectType::Index => {
                        let q = crate::namespace::QualName::of(n)?;
                        let table = cv
                            .catalog()
                            .tables()
                            .into_iter()
                            .find(|t| t.indexes.list().iter().any(|i| i.spec.name == q.name));
                        if let Some(rel) = table.and_then(|t| relation_info(cv, t.oid)) {
                            if !u.has_privs_of(crate::privileges::relation_owner(cv, rel.oid)) {
                                return Err(not_owner("index", &q.name));
                            }
                        }
                    }
                    ObjectType::Schema => {
                        let q = crate::namespace::QualName::of(n)?;
                        if let Some(s) = cv.schemas().into_iter().find(|s| s.name == q.name) {
                            if !u.has_privs_of(s.owner) {
                                return Err(not_owner("schema", &s.name));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Statement::AlterTable { name, .. } => {
            if let Some(rel) = rel_named(name) {
                crate::privileges::check_owner(cv, u, &rel)?;
            }
        }
        Statement::CreateIndex(ci) => {
            if let Some(rel) = rel_named(&ci.table_name) {
                crate::privileges::check_owner(cv, u, &rel)?;
            }
        }
        Statement::CreateTable(ct) => create_in(&ct.name)?,
        Statement::CreateView {
            name, or_replace, ..
        } => {
            create_in(name)?;
            // Replacing a view: its owner only.
            if *or_replace {
                if let Some(rel) = rel_named(name).filter(|r| r.word == "view") {
                    crate::privileges::check_owner(cv, u, &rel)?;
                }
            }
        }
        Statement::CreateSequence { name, .. } => create_in(name)?,
        Statement::CreateSchema { schema_name, .. } => {
            let key = CommentKey::object(PG_DATABASE, DATABASE_OID);
            let (owner, acl) = object_acl(cv, &key, ObjType::Database, BOOTSTRAP_SUPERUSER_OID);
            if !u.has_privs_of(owner) && acl_mask(&acl, &u.roles, ACL_CREATE) == 0 {
                return Err(crate::privileges::denied("database", database));
            }
            // AUTHORIZATION role: the creator must be a member of it
            // (PostgreSQL 15's check_is_member_of_role).
            let role = match schema_name {
                sqlparser::ast::SchemaName::UnnamedAuthorization(r)
                | sqlparser::ast::SchemaName::NamedAuthorization(_, r) => {
                    Some(crate::planner::ident_name(r))
                }
                sqlparser::ast::SchemaName::Simple(_) => None,
            };
            if let Some(target) = role.and_then(|n| cv.catalog().role(&n)) {
                if !cv
                    .catalog()
                    .member_closure(u.oid, false)
                    .contains(&target.oid)
                {
                    return Err(PgError::new(
                        sqlstate::INSUFFICIENT_PRIVILEGE,
                        format!("must be member of role \"{}\"", target.name),
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// PostgreSQL points a `permission denied for schema s` at the name that
/// reached the schema: the first `s.` of the statement's text, or the
/// name a CREATE makes in it.
pub fn with_schema_position(e: PgError, sql: &str) -> PgError {
    let Some(schema) = e.message.strip_prefix("permission denied for schema ") else {
        return e;
    };
    if e.position.is_some() {
        return e;
    }
    let lower = sql.to_lowercase();
    let pat = format!("{}.", schema.to_lowercase());
    let found = lower.match_indices(&pat).map(|(i, _)| i).find(|&i| {
        i == 0
            || !lower[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    });
    match found {
        Some(i) if lower.len() == sql.len() => {
            let pos = sql[..i].chars().count() as u32 + 1;
            e.with_position(pos)
        }
        _ => match crate::parser::created_name_position(sql) {
            Some(pos) => e.with_position(pos),
            None => e,
        },
    }
}

/// `ALTER DEFAULT PRIVILEGES`: the pg_default_acl entry of each (role,
/// schema) — a global entry (schema 0) replaces the kind's default list,
/// a schema's adds to it; an entry equal to its starting point goes
/// (PostgreSQL's `SetDefaultACL`). Applied when the role creates an
/// object (`crate::privileges::initial_acl`).
fn default_privileges(
    cx: &mut DdlCtx<'_>,
    u: &AclUser,
    roles: &[String],
    schemas: &[String],
    objtype: char,
    action: &GrantStmt,
    g: &GrantCtx<'_>,
) -> PgResult<()> {
    let GrantStmt::Objects {
        grant,
        option,
        privileges,
        grantees,
        cascade,
        ..
    } = action
    else {
        return Err(PgError::internal(
            "ALTER DEFAULT PRIVILEGES without GRANT / REVOKE",
        ));
    };
    let kind = ObjType::of_default(objtype)
        .ok_or_else(|| PgError::internal("unknown default privilege object type"))?;
    let word = match objtype {
        'r' => "relation",
        'S' => "sequence",
        'f' => "function",
        'T' => "type",
        _ => "schema",
    };
    if objtype == 'n' && !schemas.is_empty() {
        return Err(PgError::new(
            sqlstate::INVALID_GRANT_OPERATION,
            "cannot use IN SCHEMA clause when using GRANT/REVOKE ON SCHEMAS",
        ));
    }
    let cv = cx.catalog();
    let role_oids = if roles.is_empty() {
        vec![u.oid]
    } else {
        roles
            .iter()
            .map(|r| grantee_oid(&cv, r, g.current_user, g.session_user))
            .collect::<PgResult<Vec<Oid>>>()?
    };
    for (i, &r) in role_oids.iter().enumerate() {
        if !u.has_privs_of(r) {
            let name = roles.get(i).cloned().unwrap_or_default();
            return Err(PgError::new(
                sqlstate::INSUFFICIENT_PRIVILEGE,
                format!("must be member of role \"{name}\""),
            ));
        }
    }
    let ns_oids: Vec<Oid> = if schemas.is_empty() {
        vec![0]
    } else {
        schemas
            .iter()
            .map(|s| {
                cv.schema_oid(s).ok_or_else(|| {
                    PgError::new(
                        sqlstate::INVALID_SCHEMA_NAME,
                        format!("schema \"{s}\" does not exist"),
                    )
                })
            })
            .collect::<PgResult<Vec<Oid>>>()?
    };
    let grantee_oids = grantees
        .iter()
        .map(|n| grantee_oid(&cv, n, g.current_user, g.session_user))
        .collect::<PgResult<Vec<Oid>>>()?;
    if *grant && *option && grantee_oids.contains(&ACL_ID_PUBLIC) {
        return Err(PgError::new(
            sqlstate::INVALID_GRANT_OPERATION,
            "grant options can only be granted to roles",
        ));
    }
    let mut mask = 0;
    for p in privileges {
        if !p.columns.is_empty() {
            return Err(PgError::syntax(
                "column privileges are only valid for relations",
            ));
        }
        mask |= privilege_bit(&p.name, kind, word)?;
    }
    let mut changes = Vec::new();
    for &r in &role_oids {
        for &ns in &ns_oids {
            let key = crate::privileges::default_acl_key(r, ns, objtype);
            let start = if ns == 0 {
                engine::acl::acl_default(kind, r)
            } else {
                Vec::new()
            };
            let current = cv.privileges(&key).and_then(|e| e.acl);
            let mut acl = current.clone().unwrap_or_else(|| start.clone());
            for &gr in &grantee_oids {
                if *grant {
                    acl_grant(&mut acl, gr, r, mask, *option);
                } else {
                    acl_revoke(&mut acl, gr, r, mask, *option, *cascade)?;
                }
            }
            // Equal to its starting point in any order: no entry.
            let sorted = |a: &[AclItem]| {
                let mut v = a.to_vec();
                v.sort_by_key(|i| (i.grantee, i.grantor, i.privs));
                v
            };
            let new = (sorted(&acl) != sorted(&start)).then_some(acl);
            if new != current {
                changes.push((key, new));
            }
        }
    }
    for (key, acl) in changes {
        set_privileges(cx, key, PrivEntry { owner: 0, acl })?;
    }
    Ok(())
}

/// The positions of `t`'s live columns a statement names (`names`), or all
/// of them when it says `*`: the columns whose SELECT right it needs.
fn named_columns(t: &engine::catalog::TableDef, names: &[String], star: bool) -> Vec<usize> {
    t.columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.dropped && (star || names.contains(&c.name)))
        .map(|(i, _)| i)
        .collect()
}
