//! Privilege look-ups and checks (PostgreSQL's `aclchk.c` checks and
//! `acl.c`'s `has_*_privilege`): who the user is ([`AclUser`]: the current
//! role, superuser or not, the roles whose privileges it has through
//! INHERIT, PUBLIC), an object's owner and effective list (its entry in
//! the engine's side map, [`engine::acl`], or the kind's default), and
//! the checks statements make — USAGE on a relation's schema, then the
//! rights on the relation (column-level INSERT / UPDATE rights stand in
//! for the table's for the columns written), ownership for utility
//! statements, CREATE on a schema. Superusers skip every check. Missing
//! rights are PostgreSQL's 42501 `permission denied for table t`.
//!
//! What statements need and GRANT / REVOKE themselves are
//! `crate::aclchk`.

use engine::acl::{
    acl_default, acl_grant_options, acl_mask, AclItem, AclMode, ObjType, PrivEntry, ACL_CREATE,
    ACL_DELETE, ACL_ID_PUBLIC, ACL_INSERT, ACL_REFERENCES, ACL_SELECT, ACL_UPDATE, ACL_USAGE,
    PG_READ_ALL_DATA, PG_WRITE_ALL_DATA,
};
use engine::catalog::{CatalogChange, CatalogView, BOOTSTRAP_SUPERUSER_OID};
use engine::comment::{CommentKey, PG_CLASS, PG_NAMESPACE};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{Oid, TransactionId};

/// pg_read_all_settings.
pub const PG_READ_ALL_SETTINGS: Oid = 3374;

/// The settings PostgreSQL marks GUC_SUPERUSER_ONLY that hotpair has:
/// shown only to superusers and members of pg_read_all_settings (or
/// pg_monitor).
pub fn superuser_only_setting(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "hba_file" | "ident_file" | "config_file" | "data_directory"
    )
}

/// Whether `u` may see every setting.
pub fn reads_all_settings(u: &AclUser) -> bool {
    u.superuser
        || u.roles.contains(&PG_READ_ALL_SETTINGS)
        || u.roles.contains(&engine::acl::PG_MONITOR)
}

/// The database's OID.
pub const DATABASE_OID: Oid = 5;

/// pg_authid's OID: superusers only may read it (it holds the password
/// verifiers); pg_roles is its public face.
pub const PG_AUTHID_OID: Oid = 1260;

/// pg_hba_file_rules' OID.
pub const PG_HBA_FILE_RULES_OID: Oid = 12114;

/// pg_ident_file_mappings' OID.
pub const PG_IDENT_FILE_MAPPINGS_OID: Oid = 12118;

/// The system relations only superusers may read, as PostgreSQL's
/// initdb revokes them from PUBLIC: pg_authid (the password verifiers),
/// and the views of the authentication files. Their word and name for
/// the 42501 message.
pub fn superuser_only_relation(oid: Oid) -> Option<(&'static str, &'static str)> {
    match oid {
        PG_AUTHID_OID => Some(("table", "pg_authid")),
        PG_HBA_FILE_RULES_OID => Some(("view", "pg_hba_file_rules")),
        PG_IDENT_FILE_MAPPINGS_OID => Some(("view", "pg_ident_file_mappings")),
        _ => None,
    }
}

/// The user privileges are checked for.
#[derive(Clone, Debug)]
pub struct AclUser {
    /// The role's OID.
    pub oid: Oid,
    /// rolsuper.
    pub superuser: bool,
    /// The roles whose privileges it has: itself first, then its
    /// memberships through INHERIT, then PUBLIC (0).
    pub roles: Vec<Oid>,
}

impl AclUser {
    /// The user `name` (an unknown name, as on a node without roles: the
    /// bootstrap superuser it used to be).
    pub fn of(db: &Engine, name: &str) -> AclUser {
        let cat = db.catalog();
        match cat.role(name) {
            Some(r) => {
                let mut roles = cat.member_closure(r.oid, true);
                roles.push(ACL_ID_PUBLIC);
                AclUser {
                    oid: r.oid,
                    superuser: r.superuser,
                    roles,
                }
            }
            None => AclUser {
                oid: BOOTSTRAP_SUPERUSER_OID,
                superuser: cat.roles().is_empty()
                    || cat.role_by_oid(BOOTSTRAP_SUPERUSER_OID).is_none(),
                roles: vec![BOOTSTRAP_SUPERUSER_OID, ACL_ID_PUBLIC],
            },
        }
    }

    /// The user `r` among `roles` (a catalog snapshot's list).
    pub fn from_roles(
        roles: &[&engine::catalog::RoleSpec],
        r: &engine::catalog::RoleSpec,
    ) -> AclUser {
        let mut closure = engine::acl::member_closure(roles, r.oid, true);
        closure.push(ACL_ID_PUBLIC);
        AclUser {
            oid: r.oid,
            superuser: r.superuser,
            roles: closure,
        }
    }

    /// True if the user has the privileges of `role` (its owner rights).
    pub fn has_privs_of(&self, role: Oid) -> bool {
        self.superuser || self.roles.contains(&role)
    }
}

/// A relation as checks name it.
#[derive(Clone, Debug)]
pub struct RelInfo {
    /// OID.
    pub oid: Oid,
    /// Name.
    pub name: String,
    /// Schema.
    pub namespace: Oid,
    /// Table/view or sequence.
    pub kind: ObjType,
    /// "table", "view" or "sequence" (messages).
    pub word: &'static str,
}

/// The relation with OID `oid` as this session sees it.
pub fn relation_info(cv: &CatalogView<'_>, oid: Oid) -> Option<RelInfo> {
    let cat = cv.catalog();
    if let Some(t) = cat.by_oid(oid) {
        return Some(RelInfo {
            oid,
            name: t.name.clone(),
            namespace: t.namespace,
            kind: ObjType::Relation,
            word: "table",
        });
    }
    if let Some(q) = cat.sequence_by_oid(oid) {
        return Some(RelInfo {
            oid,
            name: q.spec.name.clone(),
            namespace: q.spec.namespace,
            kind: ObjType::Sequence,
            word: "sequence",
        });
    }
    cv.views()
        .into_iter()
        .find(|v| v.oid == oid)
        .map(|v| RelInfo {
            oid,
            name: v.name.clone(),
            namespace: v.namespace,
            kind: ObjType::Relation,
            word: "view",
        })
}

/// The table, view or sequence `q` names, as this session sees it.
pub fn relation_named(cv: &CatalogView<'_>, q: &crate::namespace::QualName) -> Option<RelInfo> {
    let oid = crate::namespace::find_table(cv, q)
        .map(|t| t.oid)
        .or_else(|| crate::namespace::find_view(cv, q).map(|v| v.oid))
        .or_else(|| crate::namespace::find_sequence(cv, q).map(|s| s.spec.oid))?;
    relation_info(cv, oid)
}

/// The owner and effective list of an object: its entry, or the bootstrap
/// superuser (`default_owner`) and the kind's default.
pub fn object_acl(
    cv: &CatalogView<'_>,
    key: &CommentKey,
    kind: ObjType,
    default_owner: Oid,
) -> (Oid, Vec<AclItem>) {
    let entry = cv.privileges(key);
    let owner = match &entry {
        Some(e) if e.owner != 0 => e.owner,
        _ => default_owner,
    };
    let acl = entry
        .and_then(|e| e.acl)
        .unwrap_or_else(|| acl_default(kind, owner));
    (owner, acl)
}

/// The owner of relation `oid`.
pub fn relation_owner(cv: &CatalogView<'_>, oid: Oid) -> Oid {
    match cv.privileges(&CommentKey::object(PG_CLASS, oid)) {
        Some(e) if e.owner != 0 => e.owner,
        _ => BOOTSTRAP_SUPERUSER_OID,
    }
}

/// The owner of type `oid`: its entry's, else the bootstrap superuser.
pub fn type_owner(cv: &CatalogView<'_>, oid: Oid) -> Oid {
    match cv.privileges(&CommentKey::object(engine::comment::PG_TYPE, oid)) {
        Some(e) if e.owner != 0 => e.owner,
        _ => BOOTSTRAP_SUPERUSER_OID,
    }
}

/// A schema's owner (its row's) and default owner for its entry.
fn schema_owner(cv: &CatalogView<'_>, ns: Oid) -> Oid {
    if let Some((_, _, owner)) = engine::namespace::BUILTIN_SCHEMAS
        .iter()
        .find(|(o, _, _)| *o == ns)
    {
        return *owner;
    }
    cv.schemas()
        .into_iter()
        .find(|s| s.oid == ns)
        .map(|s| s.owner)
        .unwrap_or(BOOTSTRAP_SUPERUSER_OID)
}

/// A schema's list: its entry's, or the default — built-in schemas have
/// PostgreSQL's initdb lists (`=U/owner` beside the owner's `UC`).
pub fn schema_acl(cv: &CatalogView<'_>, ns: Oid) -> (Oid, Vec<AclItem>) {
    let owner = schema_owner(cv, ns);
    if let Some(e) = cv.privileges(&CommentKey::object(PG_NAMESPACE, ns)) {
        if let Some(acl) = e.acl {
            return (owner, acl);
        }
    }
    let mut acl = acl_default(ObjType::Schema, owner);
    if builtin_schema(ns) && ns != engine::namespace::PG_TOAST_NAMESPACE {
        acl.push(AclItem {
            grantee: ACL_ID_PUBLIC,
            grantor: owner,
            privs: ACL_USAGE,
            goptions: 0,
        });
    }
    (owner, acl)
}

/// The list of a built-in schema has no entry until a GRANT: whether it
/// is shown as the initdb list (true) or NULL.
pub fn builtin_schema(ns: Oid) -> bool {
    engine::namespace::BUILTIN_SCHEMAS
        .iter()
        .any(|(o, _, _)| *o == ns)
}

/// The rights in `mask` the user holds on schema `ns`.
pub fn schema_privileges(cv: &CatalogView<'_>, u: &AclUser, ns: Oid, mask: AclMode) -> AclMode {
    if u.superuser {
        return mask;
    }
    let (owner, acl) = schema_acl(cv, ns);
    let mut have = acl_mask(&acl, &u.roles, mask);
    if owner == engine::namespace::PG_DATABASE_OWNER && u.roles.contains(&BOOTSTRAP_SUPERUSER_OID) {
        have |= mask;
    }
    if u.roles.contains(&PG_READ_ALL_DATA) || u.roles.contains(&PG_WRITE_ALL_DATA) {
        have |= mask & ACL_USAGE;
    }
    have
}

/// The rights in `mask` the user holds on a relation.
pub fn relation_privileges(
    cv: &CatalogView<'_>,
    u: &AclUser,
    rel: &RelInfo,
    mask: AclMode,
) -> AclMode {
    if u.superuser {
        return mask;
    }
    let (_, acl) = object_acl(
        cv,
        &CommentKey::object(PG_CLASS, rel.oid),
        rel.kind,
        BOOTSTRAP_SUPERUSER_OID,
    );
    let mut have = acl_mask(&acl, &u.roles, mask);
    if rel.kind == ObjType::Relation {
        if u.roles.contains(&PG_READ_ALL_DATA) {
            have |= mask & ACL_SELECT;
        }
        if u.roles.contains(&PG_WRITE_ALL_DATA) {
            have |= mask & (ACL_INSERT | ACL_UPDATE | ACL_DELETE);
        }
    } else if u.roles.contains(&PG_READ_ALL_DATA) {
        have |= mask & (ACL_SELECT | ACL_USAGE);
    }
    have
}

/// The rights in `mask` the user holds on column `attnum` of a table.
fn column_privileges(
    cv: &CatalogView<'_>,
    u: &AclUser,
    rel: Oid,
    attnum: i32,
    mask: AclMode,
) -> AclMode {
    let key = CommentKey {
        classoid: PG_CLASS,
        objoid: rel,
        subid: attnum,
        name: String::new(),
    };
    match cv.privileges(&key).and_then(|e| e.acl) {
        Some(acl) => acl_mask(&acl, &u.roles, mask),
        None => 0,
    }
}

/// 42501 `permission denied for <kind> <name>`.
pub fn denied(word: &str, name: &str) -> PgError {
    PgError::new(
        sqlstate::INSUFFICIENT_PRIVILEGE,
        format!("permission denied for {word} {name}"),
    )
}

/// 42501 `must be owner of <kind> <name>`.
pub fn not_owner(word: &str, name: &str) -> PgError {
    PgError::new(
        sqlstate::INSUFFICIENT_PRIVILEGE,
        format!("must be owner of {word} {name}"),
    )
}

fn schema_name(cv: &CatalogView<'_>, ns: Oid) -> String {
    cv.schema_name(ns).unwrap_or_else(|| ns.to_string())
}

/// The columns a check may use instead of a table-level right: those
/// written (INSERT / UPDATE) and those read (SELECT; None: unknown, so
/// only the table's right will do; empty: no column in particular, any
/// column's right will do, as `count(*)`).
#[derive(Clone, Copy, Default)]
pub struct ColumnUse<'a> {
    /// Columns written (0-based).
    pub written: &'a [usize],
    /// Columns read (0-based).
    pub read: Option<&'a [usize]>,
}

/// USAGE on the relation's schema, then `mask` on the relation; the
/// rights it lacks may be held on every column used (PostgreSQL's
/// column-level privileges).
pub fn check_relation(
    cv: &CatalogView<'_>,
    u: &AclUser,
    rel: &RelInfo,
    mask: AclMode,
    cols: ColumnUse<'_>,
) -> PgResult<()> {
    if u.superuser {
        return Ok(());
    }
    if schema_privileges(cv, u, rel.namespace, ACL_USAGE) == 0 {
        return Err(denied("schema", &schema_name(cv, rel.namespace)));
    }
    let have = relation_privileges(cv, u, rel, mask);
    let missing = mask & !have;
    if missing == 0 {
        return Ok(());
    }
    let col =
        |c: usize, right: AclMode| column_privileges(cv, u, rel.oid, c as i32 + 1, right) != 0;
    for bit in [ACL_INSERT, ACL_UPDATE, ACL_SELECT, ACL_REFERENCES] {
        if missing & bit == 0 {
            continue;
        }
        let ok = match (bit, cols.read) {
            (ACL_SELECT, Some([])) => {
                // No column in particular: any column's SELECT.
                let n = cv
                    .catalog()
                    .by_oid(rel.oid)
                    .map(|t| t.columns.len())
                    .unwrap_or(0);
                (0..n).any(|c| col(c, bit))
            }
            (ACL_SELECT, Some(read)) => read.iter().all(|&c| col(c, bit)),
            (ACL_SELECT, None) => false,
            (_, _) => !cols.written.is_empty() && cols.written.iter().all(|&c| col(c, bit)),
        };
        if !ok {
            return Err(denied(rel.word, &rel.name));
        }
    }
    if missing & !(ACL_INSERT | ACL_UPDATE | ACL_SELECT | ACL_REFERENCES) != 0 {
        return Err(denied(rel.word, &rel.name));
    }
    Ok(())
}

/// Ownership of relation `rel` (or the rights of its owner's role).
pub fn check_owner(cv: &CatalogView<'_>, u: &AclUser, rel: &RelInfo) -> PgResult<()> {
    if u.has_privs_of(relation_owner(cv, rel.oid)) {
        Ok(())
    } else {
        Err(not_owner(rel.word, &rel.name))
    }
}

/// CREATE on the schema an object is created in.
pub fn check_create_in(cv: &CatalogView<'_>, u: &AclUser, ns: Oid) -> PgResult<()> {
    if schema_privileges(cv, u, ns, ACL_CREATE) == 0 {
        return Err(denied("schema", &schema_name(cv, ns)));
    }
    Ok(())
}

/// The key of the pg_default_acl entry of (role, schema — 0: every
/// schema —, object type letter).
pub fn default_acl_key(role: Oid, ns: Oid, objtype: char) -> CommentKey {
    CommentKey {
        classoid: engine::acl::PG_DEFAULT_ACL,
        objoid: role,
        subid: ns as i32,
        name: objtype.to_string(),
    }
}

/// The list an object `owner` creates in schema `ns` starts with when
/// ALTER DEFAULT PRIVILEGES says so (None: the kind's default): the
/// role's global entry, or the default, with its schema entry's items
/// added (PostgreSQL's `get_user_default_acl`).
pub fn initial_acl(
    cv: &CatalogView<'_>,
    owner: Oid,
    ns: Oid,
    objtype: char,
) -> Option<Vec<AclItem>> {
    let kind = ObjType::of_default(objtype)?;
    let global = cv
        .privileges(&default_acl_key(owner, 0, objtype))
        .and_then(|e| e.acl);
    let schema = if objtype == 'n' {
        None
    } else {
        cv.privileges(&default_acl_key(owner, ns, objtype))
            .and_then(|e| e.acl)
    };
    if global.is_none() && schema.is_none() {
        return None;
    }
    let mut acl = global.unwrap_or_else(|| acl_default(kind, owner));
    for i in schema.into_iter().flatten() {
        engine::acl::acl_merge(&mut acl, i);
    }
    // PostgreSQL sorts the result (aclitemsort: grantee, grantor, rights).
    acl.sort_by_key(|i| (i.grantee, i.grantor, i.privs));
    Some(acl)
}

/// A new relation's entry: its owner when not the bootstrap superuser,
/// and the list ALTER DEFAULT PRIVILEGES gives it. Not transactional: the
/// entry goes with the object if its creation rolls back.
pub fn record_owner(db: &Engine, cv: &CatalogView<'_>, oid: Oid, owner: Oid) -> PgResult<()> {
    let Some(rel) = relation_info(cv, oid) else {
        return Ok(());
    };
    let objtype = if rel.kind == ObjType::Sequence {
        'S'
    } else {
        'r'
    };
    let acl = initial_acl(cv, owner, rel.namespace, objtype);
    if owner == BOOTSTRAP_SUPERUSER_OID && acl.is_none() {
        return Ok(());
    }
    set_initial(
        db,
        CommentKey::object(PG_CLASS, oid),
        PrivEntry { owner, acl },
    )
}

/// A new type's owner, when not the bootstrap superuser.
pub fn record_type(db: &Engine, oid: Oid, owner: Oid) -> PgResult<()> {
    if owner == BOOTSTRAP_SUPERUSER_OID {
        return Ok(());
    }
    set_initial(
        db,
        CommentKey::object(engine::comment::PG_TYPE, oid),
        PrivEntry { owner, acl: None },
    )
}

/// A new function's or procedure's list from ALTER DEFAULT PRIVILEGES …
/// ON FUNCTIONS | ROUTINES of its owner (its pg_proc row's), globally or
/// in its schema. Not transactional, as [`record_owner`].
pub fn record_function(db: &Engine, cv: &CatalogView<'_>, oid: Oid) -> PgResult<()> {
    let Some(f) = cv.functions().into_iter().find(|f| f.spec.oid == oid) else {
        return Ok(());
    };
    match initial_acl(cv, f.spec.owner, f.spec.namespace, 'f') {
        Some(acl) => set_initial(
            db,
            CommentKey::object(engine::comment::PG_PROC, oid),
            PrivEntry {
                owner: 0,
                acl: Some(acl),
            },
        ),
        None => Ok(()),
    }
}

/// A new schema's list from ALTER DEFAULT PRIVILEGES … ON SCHEMAS.
pub fn record_schema(db: &Engine, cv: &CatalogView<'_>, oid: Oid, owner: Oid) -> PgResult<()> {
    match initial_acl(cv, owner, 0, 'n') {
        Some(acl) => set_initial(
            db,
            CommentKey::object(PG_NAMESPACE, oid),
            PrivEntry {
                owner: 0,
                acl: Some(acl),
            },
        ),
        None => Ok(()),
    }
}

fn set_initial(db: &Engine, key: CommentKey, entry: PrivEntry) -> PgResult<()> {
    db.catalog()
        .apply_catalog_change(&CatalogChange::SetPrivileges {
            key,
            entry: Some(entry),
            by: TransactionId::INVALID,
            previous: None,
        })
        .map(|_| ())
}

/// DROP ROLE's dependency check: 2BP01 while the role owns objects or
/// appears in a list, with PostgreSQL's detail lines (one per object, in
/// OID order; names qualified when off the search path).
pub fn check_role_unused(cv: &CatalogView<'_>, oid: Oid, name: &str) -> PgResult<()> {
    let rel_name = |r: &RelInfo| -> String {
        if cv.path().contains(&r.namespace) {
            r.name.clone()
        } else {
            format!("{}.{}", schema_name(cv, r.namespace), r.name)
        }
    };
    let mut lines: Vec<(Oid, i32, String)> = Vec::new();
    for (key, _) in cv.catalog().privilege_list() {
        let Some(e) = cv.privileges(&key) else {
            continue;
        };
        let what = match key.classoid {
            PG_CLASS => {
                let Some(rel) = relation_info(cv, key.objoid) else {
                    continue;
                };
                if key.subid > 0 {
                    let col = cv
                        .catalog()
                        .by_oid(key.objoid)
                        .and_then(|t| {
                            t.columns
                                .get(key.subid as usize - 1)
                                .map(|c| c.name.clone())
                        })
                        .unwrap_or_default();
                    format!("column {col} of {} {}", rel.word, rel_name(&rel))
                } else {
                    format!("{} {}", rel.word, rel_name(&rel))
                }
            }
            PG_NAMESPACE => format!("schema {}", schema_name(cv, key.objoid)),
            engine::comment::PG_TYPE => match cv.catalog().enum_type_by_oid(key.objoid) {
                Some(t) => format!("type {}", t.spec.name),
                None => continue,
            },
            engine::acl::PG_DEFAULT_ACL => {
                if e.acl.is_none() {
                    continue;
                }
                let what = match key.name.as_str() {
                    "S" => "sequences",
                    "f" => "functions",
                    "T" => "types",
                    "n" => "schemas",
                    _ => "relations",
                };
                let role = cv
                    .catalog()
                    .role_by_oid(key.objoid)
                    .map(|r| r.name.clone())
                    .unwrap_or_default();
                let schema = if key.subid > 0 {
                    format!(" in schema {}", schema_name(cv, key.subid as Oid))
                } else {
                    String::new()
                };
                let text =
                    format!("default privileges on new {what} belonging to role {role}{schema}");
                if key.objoid == oid {
                    lines.push((key.objoid, key.subid, format!("owner of {text}")));
                } else if e.acl.iter().flatten().any(|i| i.grantee == oid) {
                    lines.push((key.objoid, key.subid, format!("privileges for {text}")));
                }
                continue;
            }
            engine::comment::PG_PROC => {
                let Some(f) = cv
                    .functions()
                    .into_iter()
                    .find(|f| f.spec.oid == key.objoid)
                else {
                    continue;
                };
                let word = if f.spec.kind == b'p' {
                    "procedure"
                } else {
                    "function"
                };
                format!("{word} {}", f.spec.signature())
            }
            _ => "database".to_string(),
        };
        if e.owner == oid {
            lines.push((key.objoid, key.subid, format!("owner of {what}")));
        } else if e
            .acl
            .iter()
            .flatten()
            .any(|i| i.grantee == oid || i.grantor == oid)
        {
            lines.push((key.objoid, key.subid, format!("privileges for {what}")));
        }
    }
    for s in cv.schemas() {
        if s.owner == oid {
            lines.push((s.oid, 0, format!("owner of schema {}", s.name)));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    lines.sort_by_key(|(o, sub, _)| (*o, *sub));
    let detail: Vec<String> = lines.into_iter().map(|(_, _, l)| l).collect();
    Err(PgError::new(
        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("role \"{name}\" cannot be dropped because some objects depend on it"),
    )
    .with_detail(detail.join("\n")))
}

/// An `aclitem[]` as text items, or NULL for no list.
pub fn acl_value(
    acl: Option<&[AclItem]>,
    name_of: &dyn Fn(Oid) -> Option<String>,
) -> pgtypes::value::Value {
    use pgtypes::value::Value;
    match acl {
        None => Value::Null,
        Some(items) => pgtypes::array::array_value(
            pgtypes::sqltype::ArrayElem::Text,
            items
                .iter()
                .map(|i| Value::Text(engine::acl::aclitem_text(i, name_of).into()))
                .collect(),
        ),
    }
}

/// Parses a `has_*_privilege` privilege string: comma-separated names,
/// each optionally `WITH GRANT OPTION`; 22023 for an unknown one.
pub fn parse_privilege_string(s: &str, kind: ObjType) -> PgResult<(AclMode, bool)> {
    let mut mask = 0;
    let mut option = false;
    for part in s.split(',') {
        let p = part.trim().to_ascii_lowercase();
        let (name, with) = match p.strip_suffix(" with grant option") {
            Some(n) => (n.trim().to_string(), true),
            None => (p.clone(), false),
        };
        let name = if name == "temp" {
            "temporary".to_string()
        } else {
            name
        };
        let bit = engine::acl::privilege_word(&name).unwrap_or(0);
        if bit == 0 || kind.all_rights() & bit == 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("unrecognized privilege type: \"{}\"", part.trim()),
            ));
        }
        mask |= bit;
        option |= with;
    }
    Ok((mask, option))
}

/// Whether `u` holds any right in `mask` on an object with this owner
/// and list (with grant option when `option`), as PostgreSQL's
/// `has_*_privilege` (ACLMASK_ANY).
pub fn holds(u: &AclUser, owner: Oid, acl: &[AclItem], mask: AclMode, option: bool) -> bool {
    if u.superuser {
        return true;
    }
    if option {
        return u.has_privs_of(owner) || acl_grant_options(acl, &u.roles, mask) != 0;
    }
    acl_mask(acl, &u.roles, mask) != 0
}
