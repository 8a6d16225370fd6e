//! `has_table_privilege` and the other access privilege inquiry
//! functions (PostgreSQL's `acl.c`), answered from the statement's
//! catalog snapshot: the object's owner and list (or the kind's default),
//! the user's memberships, `crate::privileges::holds`.
//!
//! Each takes an optional user first (a name or an OID; without it the
//! current user), then the object (a name, or an OID — a missing OID
//! answers NULL, a missing name is an error), then the privilege string
//! (`'SELECT, INSERT WITH GRANT OPTION'`: true if any is held).

use engine::acl::{acl_default, AclItem, ObjType, ACL_ID_PUBLIC, ACL_SELECT, ACL_USAGE};
use engine::catalog::RoleSpec;
use engine::comment::{PG_CLASS, PG_DATABASE, PG_NAMESPACE};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::Value;

use super::functions::{oid_arg, snapshot};
use super::{CatalogSnapshot, RelRef, BOOTSTRAP_SUPERUSER, DATABASE_OID};
use crate::functions::EvalContext;
use crate::privileges::{holds, parse_privilege_string, AclUser};

/// Which inquiry function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrivFn {
    /// has_table_privilege.
    Table,
    /// has_sequence_privilege.
    Sequence,
    /// has_column_privilege.
    Column,
    /// has_any_column_privilege.
    AnyColumn,
    /// has_schema_privilege.
    Schema,
    /// has_database_privilege.
    Database,
    /// has_function_privilege.
    Function,
    /// has_tablespace_privilege.
    Tablespace,
    /// pg_has_role.
    Role,
}

impl PrivFn {
    /// The function `name` with `n` arguments, if it is one of these.
    pub fn of(name: &str, n: usize) -> Option<PrivFn> {
        let (f, base) = match name {
            "has_table_privilege" => (PrivFn::Table, 2),
            "has_sequence_privilege" => (PrivFn::Sequence, 2),
            "has_column_privilege" => (PrivFn::Column, 3),
            "has_any_column_privilege" => (PrivFn::AnyColumn, 2),
            "has_schema_privilege" => (PrivFn::Schema, 2),
            "has_database_privilege" => (PrivFn::Database, 2),
            "has_function_privilege" => (PrivFn::Function, 2),
            "has_tablespace_privilege" => (PrivFn::Tablespace, 2),
            "pg_has_role" => (PrivFn::Role, 2),
            _ => return None,
        };
        (n == base || n == base + 1).then_some(f)
    }

    fn base_args(self) -> usize {
        if self == PrivFn::Column {
            3
        } else {
            2
        }
    }
}

fn text_arg(v: &Value) -> Option<&str> {
    match v {
        Value::Text(t) => Some(t),
        _ => None,
    }
}

fn undefined_role(name: &str) -> PgError {
    engine::catalog::undefined_role(name)
}

/// The role a user argument names: its row (predefined roles included).
fn role_of(s: &CatalogSnapshot, v: &Value) -> PgResult<Option<RoleSpec>> {
    let oid = match text_arg(v) {
        Some(name) => match s.role_oid(name) {
            Some(o) => o,
            None if name == "public" => return Ok(Some(RoleSpec::new(ACL_ID_PUBLIC, "public"))),
            None => return Err(undefined_role(name)),
        },
        None => match oid_arg(v) {
            Some(o) => o,
            None => return Ok(None),
        },
    };
    if let Some(r) = s.roles.iter().find(|r| r.oid == oid) {
        return Ok(Some((**r).clone()));
    }
    Ok(s.role_name(oid).map(|n| RoleSpec::new(oid, &n)))
}

fn user_of(s: &CatalogSnapshot, r: &RoleSpec) -> AclUser {
    let roles: Vec<&RoleSpec> = s.roles.iter().map(|r| &**r).collect();
    if r.oid == ACL_ID_PUBLIC {
        return AclUser {
            oid: ACL_ID_PUBLIC,
            superuser: false,
            roles: vec![ACL_ID_PUBLIC],
        };
    }
    // A node without roles: every session is the superuser it was.
    let mut u = AclUser::from_roles(&roles, r);
    if s.roles.is_empty() {
        u.superuser = true;
    }
    u
}

/// Calls `f` with `args`.
pub fn call(f: PrivFn, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let s = snapshot(ctx)?;
    let (user_arg, rest) = if args.len() > f.base_args() {
        (args.first().cloned(), &args[1..])
    } else {
        (None, args)
    };
    let role = match user_arg {
        Some(v) => role_of(&s, &v)?,
        None => {
            let name = ctx.current_user();
            match s.roles.iter().find(|r| r.name == name) {
                Some(r) => Some((**r).clone()),
                None => Some(RoleSpec {
                    superuser: true,
                    ..RoleSpec::new(BOOTSTRAP_SUPERUSER, &name)
                }),
            }
        }
    };
    let Some(role) = role else {
        return Ok(Value::Null);
    };
    let u = user_of(&s, &role);
    let obj = rest.first().unwrap_or(&Value::Null);
    let privs = rest.last().and_then(text_arg).unwrap_or("");
    let answer = match f {
        PrivFn::Table | PrivFn::Sequence | PrivFn::AnyColumn | PrivFn::Column => {
            let rel = match text_arg(obj) {
                Some(name) => {
                    let (schema, n) = super::split_qualified(name)?;
                    Some(
                        s.relation_by_name(schema.as_deref(), &n)
                            .ok_or_else(|| engine::catalog::undefined_table(name))?,
                    )
                }
                None => oid_arg(obj).and_then(|o| s.relation(o)),
            };
            let Some(rel) = rel else {
                return Ok(Value::Null);
            };
            let is_seq = matches!(rel, RelRef::Sequence(_));
            if f == PrivFn::Sequence && !is_seq {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("\"{}\" is not a sequence", rel.name()),
                ));
            }
            let kind = match f {
                PrivFn::Sequence => ObjType::Sequence,
                PrivFn::Column | PrivFn::AnyColumn => ObjType::Column,
                _ => ObjType::Relation,
            };
            let (mask, option) = parse_privilege_string(privs, kind)?;
            let owner = s.rel_owner(rel.oid());
            let acl = rel_acl(&s, rel, owner);
            let mut yes = holds(&u, owner, &acl, mask, option);
            if !yes && !option && !is_seq {
                if u.roles.contains(&engine::acl::PG_READ_ALL_DATA) {
                    yes = mask & ACL_SELECT != 0;
                }
                if u.roles.contains(&engine::acl::PG_WRITE_ALL_DATA) {
                    yes |= mask
                        & (engine::acl::ACL_INSERT
                            | engine::acl::ACL_UPDATE
                            | engine::acl::ACL_DELETE)
                        != 0;
                }
            }
            if !yes && matches!(f, PrivFn::Column | PrivFn::AnyColumn) {
                let cols: Vec<i32> = match (f, rest.get(1)) {
                    (PrivFn::Column, Some(c)) => vec![column_number(rel, c)?],
                    _ => (1..=rel_columns(rel) as i32).collect(),
                };
                yes = cols.iter().any(|&c| {
                    s.privileges
                        .get(&(PG_CLASS, rel.oid(), c))
                        .and_then(|e| e.acl.as_ref())
                        .is_some_and(|acl| holds(&u, 0, acl, mask, option))
                });
            }
            yes
        }
        PrivFn::Schema => {
            let ns = match text_arg(obj) {
                Some(name) => s
                    .namespaces
                    .iter()
                    .find(|n| n.1 == name)
                    .map(|n| (n.0, n.2))
                    .ok_or_else(|| engine::catalog::undefined_schema(name))?,
                None => match oid_arg(obj).and_then(|o| s.namespaces.iter().find(|n| n.0 == o)) {
                    Some(n) => (n.0, n.2),
                    None => return Ok(Value::Null),
                },
            };
            let (mask, option) = parse_privilege_string(privs, ObjType::Schema)?;
            let acl = match s
                .privileges
                .get(&(PG_NAMESPACE, ns.0, 0))
                .and_then(|e| e.acl.clone())
            {
                Some(a) => a,
                None => schema_default(ns.0, ns.1),
            };
            holds(&u, ns.1, &acl, mask, option)
                || (!option
                    && mask & ACL_USAGE != 0
                    && (u.roles.contains(&engine::acl::PG_READ_ALL_DATA)
                        || u.roles.contains(&engine::acl::PG_WRITE_ALL_DATA)))
        }
        PrivFn::Database => {
            match text_arg(obj) {
                Some(name) if name != ctx.current_database() => {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_DATABASE,
                        format!("database \"{name}\" does not exist"),
                    ))
                }
                Some(_) => {}
                None if oid_arg(obj) != Some(DATABASE_OID) => return Ok(Value::Null),
                None => {}
            }
            let (mask, option) = parse_privilege_string(privs, ObjType::Database)?;
            let entry = s.privileges.get(&(PG_DATABASE, DATABASE_OID, 0));
            let owner = entry
                .map(|e| e.owner)
                .filter(|o| *o != 0)
                .unwrap_or(BOOTSTRAP_SUPERUSER);
            let acl = entry
                .and_then(|e| e.acl.clone())
                .unwrap_or_else(|| acl_default(ObjType::Database, owner));
            holds(&u, owner, &acl, mask, option)
        }
        PrivFn::Function => {
            let oid = match text_arg(obj) {
                Some(text) => super::reg_in(&s, pgtypes::sqltype::RegKind::Procedure, text)?,
                None => match oid_arg(obj) {
                    Some(o) => o,
                    None => return Ok(Value::Null),
                },
            };
            let (mask, option) = parse_privilege_string(privs, ObjType::Function)?;
            match s.function(oid) {
                // A function users created: its list, or EXECUTE to PUBLIC.
                Some(f) => {
                    let acl = s
                        .privileges
                        .get(&(engine::comment::PG_PROC, oid, 0))
                        .and_then(|e| e.acl.clone())
                        .unwrap_or_else(|| acl_default(ObjType::Function, f.owner));
                    holds(&u, f.owner, &acl, mask, option)
                }
                // Built-in functions: EXECUTE to PUBLIC.
                None if super::proc::by_oid(oid).is_some() => !option || u.superuser,
                None => return Ok(Value::Null),
            }
        }
        PrivFn::Tablespace => true,
        PrivFn::Role => {
            let Some(target) = role_of(&s, obj)? else {
                return Ok(Value::Null);
            };
            let p = privs.trim().to_ascii_lowercase();
            let roles: Vec<&RoleSpec> = s.roles.iter().map(|r| &**r).collect();
            let (p, option) = match p
                .strip_suffix(" with admin option")
                .or_else(|| p.strip_suffix(" with grant option"))
            {
                Some(x) => (x.trim().to_string(), true),
                None => (p, false),
            };
            if option {
                u.superuser
                    || role
                        .member_of
                        .iter()
                        .any(|g| g.role == target.oid && g.admin)
            } else {
                match p.as_str() {
                    "member" => {
                        u.superuser
                            || engine::acl::member_closure(&roles, role.oid, false)
                                .contains(&target.oid)
                    }
                    "usage" => u.has_privs_of(target.oid),
                    _ => {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("unrecognized privilege type: \"{}\"", privs.trim()),
                        ))
                    }
                }
            }
        }
    };
    Ok(Value::Bool(answer))
}

/// A relation's effective list: its entry's, the kind's default, or for
/// a catalog SELECT to PUBLIC (initdb grants it on every catalog).
fn rel_acl(s: &CatalogSnapshot, rel: &RelRef, owner: u32) -> Vec<AclItem> {
    if let Some(acl) = s
        .privileges
        .get(&(PG_CLASS, rel.oid(), 0))
        .and_then(|e| e.acl.clone())
    {
        return acl;
    }
    match rel {
        RelRef::Sequence(_) => acl_default(ObjType::Sequence, owner),
        RelRef::System(_) => {
            let mut acl = acl_default(ObjType::Relation, owner);
            acl.push(AclItem {
                grantee: ACL_ID_PUBLIC,
                grantor: owner,
                privs: ACL_SELECT,
                goptions: 0,
            });
            acl
        }
        _ => acl_default(ObjType::Relation, owner),
    }
}

fn schema_default(ns: u32, owner: u32) -> Vec<AclItem> {
    let mut acl = acl_default(ObjType::Schema, owner);
    if crate::privileges::builtin_schema(ns) && ns != super::PG_TOAST {
        acl.push(AclItem {
            grantee: ACL_ID_PUBLIC,
            grantor: owner,
            privs: ACL_USAGE,
            goptions: 0,
        });
    }
    acl
}

fn rel_columns(rel: &RelRef) -> usize {
    match rel {
        RelRef::Table(t) => t.columns.len(),
        RelRef::View(v) => v.columns.len(),
        _ => 0,
    }
}

/// A column argument (name or attnum) as an attnum; 42703 for a missing
/// name.
fn column_number(rel: &RelRef, v: &Value) -> PgResult<i32> {
    match text_arg(v) {
        Some(name) => {
            let pos = match rel {
                RelRef::Table(t) => t.columns.iter().position(|c| c.name == name && !c.dropped),
                RelRef::View(v) => v.columns.iter().position(|c| c.name == name),
                _ => None,
            };
            pos.map(|p| p as i32 + 1).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!(
                        "column \"{name}\" of relation \"{}\" does not exist",
                        rel.name()
                    ),
                )
            })
        }
        None => match v {
            Value::Int2(n) => Ok(*n as i32),
            Value::Int4(n) => Ok(*n),
            _ => Ok(0),
        },
    }
}
