//! What depends on a role (PostgreSQL's `pg_shdepend.c`): the objects it
//! owns and the access lists naming it, for `DROP OWNED BY` and
//! `REASSIGN OWNED BY` (`user.c`'s `DropOwnedObjects` /
//! `ReassignOwnedObjects`).
//!
//! PostgreSQL records these dependencies in `pg_shdepend`; here they are
//! read off the objects themselves — the owner and list of every entry in
//! the engine's privilege map ([`engine::acl`]), a schema's owner in its
//! row, and the `pg_default_acl` entries keyed by their role — so there is
//! nothing to keep in step.
//!
//! `REASSIGN OWNED` changes owners in place: a relation's or type's entry gets the
//! new owner, the old owner's items in its list moving to the new one
//! (`aclnewowner`), and a schema's row its new owner. Default-privilege
//! entries stay (PostgreSQL leaves them to DROP OWNED).
//!
//! `DROP OWNED` first revokes every right the roles were granted on
//! objects they do not own — with CASCADE, so rights they passed on go
//! too — and removes their default-privilege entries and their items in
//! other roles' entries; then the session drops what they own, views
//! before tables before sequences before schemas (so what depends on an
//! owned object is gone before it, as PostgreSQL's one multi-object
//! deletion achieves), each as an ordinary DROP of this transaction with
//! the statement's CASCADE / RESTRICT.
//!
//! Every change is a transactional catalog change of the current
//! transaction: ROLLBACK puts everything back.

use engine::acl::{acl_default, acl_revoke, AclItem, ObjType, PrivEntry, PG_DEFAULT_ACL};
use engine::catalog::CatalogView;
use engine::comment::{CommentKey, PG_CLASS, PG_NAMESPACE, PG_TYPE};
use pgtypes::error::PgResult;
use pgtypes::Oid;

use crate::ddl::DdlCtx;
use crate::privileges::relation_info;

/// What a set of roles owns, as DROP statements' names (quoted,
/// schema-qualified), each list newest first.
#[derive(Debug, Default)]
pub struct Owned {
    /// Views.
    pub views: Vec<String>,
    /// Tables.
    pub tables: Vec<String>,
    /// Sequences.
    pub sequences: Vec<String>,
    /// Types.
    pub types: Vec<String>,
    /// Schemas.
    pub schemas: Vec<String>,
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The objects `roles` own, as this transaction sees them.
pub fn owned_objects(cv: &CatalogView<'_>, roles: &[Oid]) -> Owned {
    let mut rels: Vec<(Oid, &'static str, String)> = Vec::new();
    let schemas = cv.schemas();
    let schema_name = |ns: Oid| -> String {
        engine::namespace::BUILTIN_SCHEMAS
            .iter()
            .find(|(o, _, _)| *o == ns)
            .map(|(_, n, _)| n.to_string())
            .or_else(|| schemas.iter().find(|s| s.oid == ns).map(|s| s.name.clone()))
            .unwrap_or_default()
    };
    let mut types: Vec<(Oid, String)> = Vec::new();
    for (key, _) in cv.catalog().privilege_list() {
        if key.classoid != PG_CLASS && key.classoid != PG_TYPE || key.subid != 0 {
            continue;
        }
        let Some(e) = cv.privileges(&key) else {
            continue;
        };
        if !roles.contains(&e.owner) {
            continue;
        }
        if key.classoid == PG_TYPE {
            if let Some(t) = cv.catalog().enum_type_by_oid(key.objoid) {
                types.push((key.objoid, quote(&t.spec.name)));
            }
            continue;
        }
        let Some(rel) = relation_info(cv, key.objoid) else {
            continue;
        };
        let name = format!(
            "{}.{}",
            quote(&schema_name(rel.namespace)),
            quote(&rel.name)
        );
        rels.push((rel.oid, rel.word, name));
    }
    rels.sort_by_key(|(oid, _, _)| std::cmp::Reverse(*oid));
    let mut out = Owned::default();
    for (_, word, name) in rels {
        match word {
            "view" => out.views.push(name),
            "sequence" => out.sequences.push(name),
            _ => out.tables.push(name),
        }
    }
    types.sort_by_key(|(oid, _)| std::cmp::Reverse(*oid));
    out.types = types.into_iter().map(|(_, n)| n).collect();
    let mut owned_schemas: Vec<(Oid, String)> = schemas
        .iter()
        .filter(|s| roles.contains(&s.owner))
        .map(|s| (s.oid, quote(&s.name)))
        .collect();
    owned_schemas.sort_by_key(|(oid, _)| std::cmp::Reverse(*oid));
    out.schemas = owned_schemas.into_iter().map(|(_, n)| n).collect();
    out
}

/// The owner of the object an entry belongs to (a column's: its
/// relation's; a schema's: its row's).
fn object_owner(cv: &CatalogView<'_>, key: &CommentKey, entry: &PrivEntry) -> Oid {
    match key.classoid {
        PG_CLASS if key.subid > 0 => crate::privileges::relation_owner(cv, key.objoid),
        PG_NAMESPACE => crate::privileges::schema_acl(cv, key.objoid).0,
        _ => entry.owner,
    }
}

/// DROP OWNED's first half: every right `roles` hold on objects they do
/// not own is revoked (CASCADE: what they passed on goes too), their
/// default-privilege entries are removed and their items in other roles'
/// entries dropped.
pub fn revoke_owned(cx: &mut DdlCtx<'_>, roles: &[Oid]) -> PgResult<()> {
    let mut changes: Vec<(CommentKey, PrivEntry)> = Vec::new();
    {
        let cv = cx.catalog();
        for (key, _) in cv.catalog().privilege_list() {
            let Some(e) = cv.privileges(&key) else {
                continue;
            };
            let Some(acl) = e.acl.clone() else {
                continue;
            };
            if key.classoid == PG_DEFAULT_ACL {
                if roles.contains(&key.objoid) {
                    changes.push((
                        key,
                        PrivEntry {
                            owner: 0,
                            acl: None,
                        },
                    ));
                    continue;
                }
                let new = without_roles(acl.clone(), roles)?;
                if new != acl {
                    // Back to the starting list: no entry, as ALTER
                    // DEFAULT PRIVILEGES leaves it.
                    let objtype = key.name.chars().next().unwrap_or('r');
                    let start = match ObjType::of_default(objtype) {
                        Some(kind) if key.subid == 0 => acl_default(kind, key.objoid),
                        _ => Vec::new(),
                    };
                    let acl = (new != start).then_some(new);
                    changes.push((key, PrivEntry { owner: 0, acl }));
                }
                continue;
            }
            if roles.contains(&object_owner(&cv, &key, &e)) {
                // Dropped with its owner.
                continue;
            }
            let new = without_roles(acl.clone(), roles)?;
            if new != acl {
                changes.push((
                    key,
                    PrivEntry {
                        owner: e.owner,
                        acl: Some(new),
                    },
                ));
            }
        }
    }
    for (key, entry) in changes {
        crate::aclchk::set_privileges(cx, key, entry)?;
    }
    Ok(())
}

/// `acl` with every item granted to `roles` revoked, CASCADE.
fn without_roles(mut acl: Vec<AclItem>, roles: &[Oid]) -> PgResult<Vec<AclItem>> {
    for &r in roles {
        let grantors: Vec<Oid> = acl
            .iter()
            .filter(|i| i.grantee == r)
            .map(|i| i.grantor)
            .collect();
        for g in grantors {
            acl_revoke(&mut acl, r, g, !0, false, true)?;
        }
    }
    Ok(acl)
}

/// REASSIGN OWNED: what `old` own becomes `new`'s (`new_name`).
pub fn reassign_owned(cx: &mut DdlCtx<'_>, old: &[Oid], new: Oid, new_name: &str) -> PgResult<()> {
    let mut changes: Vec<(CommentKey, PrivEntry)> = Vec::new();
    let mut schemas: Vec<String> = Vec::new();
    {
        let cv = cx.catalog();
        for (key, _) in cv.catalog().privilege_list() {
            if key.classoid != PG_CLASS && key.classoid != PG_TYPE || key.subid != 0 {
                continue;
            }
            let Some(e) = cv.privileges(&key) else {
                continue;
            };
            let exists = if key.classoid == PG_TYPE {
                cv.catalog().enum_type_by_oid(key.objoid).is_some()
            } else {
                relation_info(&cv, key.objoid).is_some()
            };
            if !old.contains(&e.owner) || e.owner == new || !exists {
                continue;
            }
            let acl = e.acl.map(|a| crate::aclchk::new_owner_acl(a, e.owner, new));
            changes.push((key, PrivEntry { owner: new, acl }));
        }
        for s in cv.schemas() {
            if !old.contains(&s.owner) || s.owner == new {
                continue;
            }
            let key = CommentKey::object(PG_NAMESPACE, s.oid);
            if let Some(PrivEntry {
                owner,
                acl: Some(acl),
            }) = cv.privileges(&key)
            {
                let acl = crate::aclchk::new_owner_acl(acl, s.owner, new);
                changes.push((
                    key,
                    PrivEntry {
                        owner,
                        acl: Some(acl),
                    },
                ));
            }
            schemas.push(s.name.clone());
        }
    }
    for (key, entry) in changes {
        crate::aclchk::set_privileges(cx, key, entry)?;
    }
    for name in schemas {
        crate::schemacmds::execute(
            cx,
            &crate::parser::schemastmt::SchemaStmt::Owner {
                name,
                role: new_name.to_string(),
            },
        )?;
    }
    Ok(())
}
