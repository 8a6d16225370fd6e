//! Privileges: owners and access control lists (PostgreSQL's `acl.c`,
//! the `aclitem` type, `relacl` / `nspacl` / `attacl` / `datacl`).
//!
//! An object's privileges are a list of [`AclItem`]s — "grantee holds
//! these rights, some with grant option, given by grantor" — or no list
//! at all, which means the object kind's default ([`acl_default`]: the
//! owner holds every right; PUBLIC holds CONNECT and TEMPORARY on a
//! database, EXECUTE on a function, USAGE on a type). The first GRANT or
//! REVOKE turns the default into an explicit list, as PostgreSQL does, so
//! `\dp` shows `{}` before and `owner=arwdDxt/owner,…` after.
//!
//! ## Where they live
//!
//! Owners and lists are kept in one node-wide map beside the objects,
//! keyed as comments are ([`crate::comment::CommentKey`], `name` empty):
//! pg_class 1259 for tables, views and sequences (`subid` > 0: a column's
//! `attacl`), pg_namespace 2615 for schemas, pg_database 1262 for the
//! database. An object without an entry is owned by the bootstrap
//! superuser and has the default list. A schema's owner stays in its own
//! row ([`crate::namespace::SchemaSpec::owner`]); its entry carries only
//! the list.
//!
//! An entry changes through `CatalogChange::SetPrivileges`: WAL-logged,
//! replayed on a standby, kept in the catalog file, and transactional the
//! way comments are — the new entry carries the granting transaction's
//! xid (`by`) and the committed entry before it (`previous`); everyone
//! else sees `previous` until the clog says `by` committed, and ROLLBACK
//! (or start-up, for a transaction that never committed) sets it back.
//! DROP of the object removes its entries.
//!
//! ## Checking
//!
//! A check asks which of the wanted rights the user holds
//! ([`acl_mask`]): the rights of every item whose grantee is PUBLIC, the
//! user, or a role whose privileges the user has (membership with
//! INHERIT, [`crate::catalog::Catalog::roles_with_privileges_of`]).
//! Superusers skip checks; the owner always holds every grant option.
//! The SQL layer (`sql::aclchk`) turns a missing right into PostgreSQL's
//! 42501 `permission denied for table …`.

use std::sync::atomic::{AtomicU64, Ordering};

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{Oid, TransactionId};
use txn::clog::Clog;

/// The right a privilege word names (`select`, …, `temporary`; lower
/// case; `temp` is not accepted here), as GRANT and `has_*_privilege`
/// spell them. None: not a privilege word.
pub fn privilege_word(word: &str) -> Option<AclMode> {
    Some(match word {
        "select" => ACL_SELECT,
        "insert" => ACL_INSERT,
        "update" => ACL_UPDATE,
        "delete" => ACL_DELETE,
        "truncate" => ACL_TRUNCATE,
        "references" => ACL_REFERENCES,
        "trigger" => ACL_TRIGGER,
        "execute" => ACL_EXECUTE,
        "usage" => ACL_USAGE,
        "create" => ACL_CREATE,
        "temporary" => ACL_CREATE_TEMP,
        "connect" => ACL_CONNECT,
        _ => return None,
    })
}

/// A set of rights, one bit each in PostgreSQL's order.
pub type AclMode = u32;
/// INSERT (`a`).
pub const ACL_INSERT: AclMode = 1 << 0;
/// SELECT (`r`).
pub const ACL_SELECT: AclMode = 1 << 1;
/// UPDATE (`w`).
pub const ACL_UPDATE: AclMode = 1 << 2;
/// DELETE (`d`).
pub const ACL_DELETE: AclMode = 1 << 3;
/// TRUNCATE (`D`).
pub const ACL_TRUNCATE: AclMode = 1 << 4;
/// REFERENCES (`x`).
pub const ACL_REFERENCES: AclMode = 1 << 5;
/// TRIGGER (`t`).
pub const ACL_TRIGGER: AclMode = 1 << 6;
/// EXECUTE (`X`).
pub const ACL_EXECUTE: AclMode = 1 << 7;
/// USAGE (`U`).
pub const ACL_USAGE: AclMode = 1 << 8;
/// CREATE (`C`).
pub const ACL_CREATE: AclMode = 1 << 9;
/// TEMPORARY (`T`).
pub const ACL_CREATE_TEMP: AclMode = 1 << 10;
/// CONNECT (`c`).
pub const ACL_CONNECT: AclMode = 1 << 11;
/// The rights' letters, bit 0 first (PostgreSQL's ACL_ALL_RIGHTS_STR up to
/// CONNECT).
pub const ACL_LETTERS: &str = "arwdDxtXUCTc";

/// pg_default_acl's OID: the class of ALTER DEFAULT PRIVILEGES entries,
/// keyed (role, schema — 0 for every schema — as `subid`, object type
/// letter as `name`).
pub const PG_DEFAULT_ACL: u32 = 826;

impl ObjType {
    /// The kind of a pg_default_acl object type letter.
    pub fn of_default(objtype: char) -> Option<ObjType> {
        Some(match objtype {
            'r' => ObjType::Relation,
            'S' => ObjType::Sequence,
            'f' => ObjType::Function,
            'T' => ObjType::Type,
            'n' => ObjType::Schema,
            _ => return None,
        })
    }
}

/// The grantee of PUBLIC's items.
pub const ACL_ID_PUBLIC: Oid = 0;

/// pg_read_all_data.
pub const PG_READ_ALL_DATA: Oid = 6181;
/// pg_write_all_data.
pub const PG_WRITE_ALL_DATA: Oid = 6182;
/// pg_signal_backend.
pub const PG_SIGNAL_BACKEND: Oid = 4200;
/// pg_monitor.
pub const PG_MONITOR: Oid = 3373;

/// PostgreSQL 15's predefined roles (NOLOGIN, not stored, not droppable).
pub const PREDEFINED_ROLES: [(Oid, &str); 12] = [
    (crate::namespace::PG_DATABASE_OWNER, "pg_database_owner"),
    (PG_READ_ALL_DATA, "pg_read_all_data"),
    (PG_WRITE_ALL_DATA, "pg_write_all_data"),
    (PG_MONITOR, "pg_monitor"),
    (3374, "pg_read_all_settings"),
    (3375, "pg_read_all_stats"),
    (3377, "pg_stat_scan_tables"),
    (4569, "pg_read_server_files"),
    (4570, "pg_write_server_files"),
    (4571, "pg_execute_server_program"),
    (PG_SIGNAL_BACKEND, "pg_signal_backend"),
    (4544, "pg_checkpoint"),
];

/// The roles `oid` is a member of among `roles`, itself first, then
/// transitively (PostgreSQL's `roles_is_member_of`); with `privileges`
/// only through members with INHERIT.
pub fn member_closure(roles: &[&crate::catalog::RoleSpec], oid: Oid, privileges: bool) -> Vec<Oid> {
    let mut out = vec![oid];
    let mut i = 0;
    while let Some(&cur) = out.get(i) {
        i += 1;
        let Some(r) = roles.iter().find(|r| r.oid == cur) else {
            continue;
        };
        if privileges && !r.inherit {
            continue;
        }
        for g in &r.member_of {
            if !out.contains(&g.role) {
                out.push(g.role);
            }
        }
    }
    out
}

/// One `aclitem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AclItem {
    /// The role holding the rights (0: PUBLIC).
    pub grantee: Oid,
    /// The role that gave them.
    pub grantor: Oid,
    /// The rights.
    pub privs: AclMode,
    /// Those of `privs` held WITH GRANT OPTION.
    pub goptions: AclMode,
}

/// The kinds of object with privileges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjType {
    /// Table or view.
    Relation,
    /// Sequence.
    Sequence,
    /// A table's column.
    Column,
    /// Schema.
    Schema,
    /// Database.
    Database,
    /// Function.
    Function,
    /// Type.
    Type,
}

impl ObjType {
    /// Every right the kind knows (ALL PRIVILEGES).
    pub fn all_rights(self) -> AclMode {
        match self {
            ObjType::Relation => {
                ACL_INSERT
                    | ACL_SELECT
                    | ACL_UPDATE
                    | ACL_DELETE
                    | ACL_TRUNCATE
                    | ACL_REFERENCES
                    | ACL_TRIGGER
            }
            ObjType::Sequence => ACL_USAGE | ACL_SELECT | ACL_UPDATE,
            ObjType::Column => ACL_INSERT | ACL_SELECT | ACL_UPDATE | ACL_REFERENCES,
            ObjType::Schema => ACL_USAGE | ACL_CREATE,
            ObjType::Database => ACL_CREATE | ACL_CREATE_TEMP | ACL_CONNECT,
            ObjType::Function => ACL_EXECUTE,
            ObjType::Type => ACL_USAGE,
        }
    }
}

/// The list an object without one has (PostgreSQL's `acldefault`).
pub fn acl_default(kind: ObjType, owner: Oid) -> Vec<AclItem> {
    let world = match kind {
        ObjType::Database => ACL_CREATE_TEMP | ACL_CONNECT,
        ObjType::Function => ACL_EXECUTE,
        ObjType::Type => ACL_USAGE,
        _ => 0,
    };
    let mut acl = Vec::new();
    if world != 0 {
        acl.push(AclItem {
            grantee: ACL_ID_PUBLIC,
            grantor: owner,
            privs: world,
            goptions: 0,
        });
    }
    if kind != ObjType::Column {
        acl.push(AclItem {
            grantee: owner,
            grantor: owner,
            privs: kind.all_rights(),
            goptions: 0,
        });
    }
    acl
}

/// The rights of `acl` in `mask` held by any of `roles` (the user's own
/// OID, the roles whose privileges it has, and [`ACL_ID_PUBLIC`]).
pub fn acl_mask(acl: &[AclItem], roles: &[Oid], mask: AclMode) -> AclMode {
    acl.iter()
        .filter(|i| roles.contains(&i.grantee))
        .fold(0, |m, i| m | i.privs)
        & mask
}

/// The grant options of `acl` in `mask` held by any of `roles`.
pub fn acl_grant_options(acl: &[AclItem], roles: &[Oid], mask: AclMode) -> AclMode {
    acl.iter()
        .filter(|i| roles.contains(&i.grantee))
        .fold(0, |m, i| m | i.goptions)
        & mask
}

/// GRANT: `grantee` gets `privs` (with grant option too when asked) from
/// `grantor`, merged into their item or appended as a new one.
pub fn acl_grant(acl: &mut Vec<AclItem>, grantee: Oid, grantor: Oid, privs: AclMode, option: bool) {
    acl_merge(
        acl,
        AclItem {
            grantee,
            grantor,
            privs,
            goptions: if option { privs } else { 0 },
        },
    );
}

/// Adds `item`'s rights to the item of the same grantee and grantor, or
/// appends it (PostgreSQL's `aclupdate` with ACL_MODECHG_ADD).
pub fn acl_merge(acl: &mut Vec<AclItem>, item: AclItem) {
    match acl
        .iter_mut()
        .find(|i| i.grantee == item.grantee && i.grantor == item.grantor)
    {
        Some(i) => {
            i.privs |= item.privs;
            i.goptions |= item.goptions;
        }
        None => acl.push(item),
    }
}

/// REVOKE [GRANT OPTION FOR] `privs` FROM `grantee` of what `grantor`
/// gave. Rights the grantee passed on with a grant option it loses go
/// too with `cascade`; without it, 2BP01 as PostgreSQL's
/// `check_circularity` / `recursive_revoke`.
pub fn acl_revoke(
    acl: &mut Vec<AclItem>,
    grantee: Oid,
    grantor: Oid,
    privs: AclMode,
    option_only: bool,
    cascade: bool,
) -> PgResult<()> {
    let mut lost_options = 0;
    if let Some(i) = acl
        .iter_mut()
        .find(|i| i.grantee == grantee && i.grantor == grantor)
    {
        lost_options = i.goptions & privs;
        i.goptions &= !privs;
        if !option_only {
            i.privs &= !privs;
        }
    }
    acl.retain(|i| i.privs != 0);
    if lost_options != 0 && grantee != ACL_ID_PUBLIC {
        // Options still held through another grantor keep what was given.
        let still = acl
            .iter()
            .filter(|i| i.grantee == grantee)
            .fold(0, |m, i| m | i.goptions);
        let lost = lost_options & !still;
        let dependents: Vec<Oid> = acl
            .iter()
            .filter(|i| i.grantor == grantee && i.privs & lost != 0)
            .map(|i| i.grantee)
            .collect();
        if !dependents.is_empty() {
            if !cascade {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    "dependent privileges exist",
                )
                .with_hint("Use CASCADE to revoke them too."));
            }
            for d in dependents {
                acl_revoke(acl, d, grantee, lost, false, true)?;
            }
        }
    }
    Ok(())
}

/// A role name as `aclitem` prints it (PostgreSQL's `putid`: quoted when
/// it holds anything but letters, digits and `_`).
fn put_id(out: &mut String, name: &str) {
    let plain = name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if plain {
        out.push_str(name);
    } else {
        out.push('"');
        for c in name.chars() {
            if c == '"' {
                out.push('"');
            }
            out.push(c);
        }
        out.push('"');
    }
}

/// The rights as letters, `*` after those with grant option.
pub fn privs_text(privs: AclMode, goptions: AclMode) -> String {
    let mut s = String::new();
    for (bit, letter) in ACL_LETTERS.chars().enumerate() {
        if privs & (1 << bit) != 0 {
            s.push(letter);
            if goptions & (1 << bit) != 0 {
                s.push('*');
            }
        }
    }
    s
}

/// `aclitemout`: `grantee=rights/grantor`, PUBLIC as an empty grantee, a
/// role that no longer exists by its OID.
pub fn aclitem_text(item: &AclItem, name_of: &dyn Fn(Oid) -> Option<String>) -> String {
    let mut s = String::new();
    let name = |s: &mut String, oid: Oid| match name_of(oid) {
        Some(n) => put_id(s, &n),
        None => s.push_str(&oid.to_string()),
    };
    if item.grantee != ACL_ID_PUBLIC {
        name(&mut s, item.grantee);
    }
    s.push('=');
    s.push_str(&privs_text(item.privs, item.goptions));
    s.push('/');
    name(&mut s, item.grantor);
    s
}

/// One object's owner and list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrivEntry {
    /// The owning role (0: keep the object's own — a schema's, a column's).
    pub owner: Oid,
    /// The list (None: the kind's default).
    pub acl: Option<Vec<AclItem>>,
}

/// One entry as the map holds it (see the module doc).
#[derive(Debug)]
pub struct PrivDef {
    /// The entry (None: the uncommitted change removed it).
    pub entry: Option<PrivEntry>,
    /// The xid of the uncommitted transaction that set it (0: committed).
    pub by: AtomicU64,
    /// With `by`: the committed entry before it.
    pub previous: Option<PrivEntry>,
}

impl PrivDef {
    /// The entry a transaction whose own xids are `own` (sorted) sees.
    pub fn visible(&self, own: &[TransactionId], clog: &Clog) -> Option<&PrivEntry> {
        if crate::catalog::creator_visible(&self.by, own, clog) {
            self.entry.as_ref()
        } else {
            self.previous.as_ref()
        }
    }
}

fn entry_text(e: Option<&PrivEntry>) -> String {
    let Some(e) = e else {
        return "-".into();
    };
    let acl = match &e.acl {
        None => "-".to_string(),
        Some(items) if items.is_empty() => "e".to_string(),
        Some(items) => items
            .iter()
            .map(|i| format!("{}/{}/{}/{}", i.grantee, i.grantor, i.privs, i.goptions))
            .collect::<Vec<_>>()
            .join(","),
    };
    format!("{}:{acl}", e.owner)
}

fn parse_entry(s: &str) -> Result<Option<PrivEntry>, String> {
    if s == "-" {
        return Ok(None);
    }
    let (owner, acl) = s.split_once(':').ok_or("bad privilege entry")?;
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let acl = match acl {
        "-" => None,
        "e" => Some(Vec::new()),
        l => Some(
            l.split(',')
                .map(|i| {
                    let f: Vec<&str> = i.split('/').collect();
                    let [g, r, p, o] = f.as_slice() else {
                        return Err(format!("bad aclitem {i:?}"));
                    };
                    Ok(AclItem {
                        grantee: num(g)?,
                        grantor: num(r)?,
                        privs: num(p)?,
                        goptions: num(o)?,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?,
        ),
    };
    Ok(Some(PrivEntry {
        owner: num(owner)?,
        acl,
    }))
}

/// The catalog file's / WAL record's line for an entry:
/// `acl_on <classoid> <objoid> <subid> <by> <entry or -> <previous or ->
/// [<name>]`, an entry as `<owner>:<items>` with items `-` (default), `e`
/// (empty) or `grantee/grantor/privs/goptions` joined by commas; the key's
/// name (escaped) only when it has one.
pub(crate) fn acl_line(
    key: &crate::comment::CommentKey,
    entry: Option<&PrivEntry>,
    by: TransactionId,
    previous: Option<&PrivEntry>,
) -> String {
    let name = if key.name.is_empty() {
        String::new()
    } else {
        format!(" {}", crate::catalog::esc(&key.name))
    };
    format!(
        "acl_on {} {} {} {} {} {}{name}\n",
        key.classoid,
        key.objoid,
        key.subid,
        by.0,
        entry_text(entry),
        entry_text(previous)
    )
}

/// A parsed [`acl_line`]: key, entry, by, previous.
pub(crate) type AclLine = (
    crate::comment::CommentKey,
    Option<PrivEntry>,
    TransactionId,
    Option<PrivEntry>,
);

/// Parses [`acl_line`]'s output; never panics.
pub(crate) fn parse_acl_line(line: &str) -> Result<AclLine, String> {
    let f: Vec<&str> = line.split(' ').collect();
    let (classoid, objoid, subid, by, entry, previous, name) = match f.as_slice() {
        ["acl_on", c, o, s, b, e, p] => (c, o, s, b, e, p, String::new()),
        ["acl_on", c, o, s, b, e, p, n] => (c, o, s, b, e, p, crate::catalog::unesc(n)?),
        _ => return Err("bad privilege line".into()),
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    Ok((
        crate::comment::CommentKey {
            classoid: num(classoid)?,
            objoid: num(objoid)?,
            subid: subid.parse::<i32>().map_err(|_| "bad subid")?,
            name,
        },
        parse_entry(entry)?,
        TransactionId(by.parse::<u64>().map_err(|_| "bad xid")?),
        parse_entry(previous)?,
    ))
}

/// A new map entry.
pub(crate) fn new_priv(
    entry: Option<PrivEntry>,
    by: TransactionId,
    previous: Option<PrivEntry>,
) -> PrivDef {
    PrivDef {
        entry,
        by: AtomicU64::new(by.0),
        previous,
    }
}

/// True once `by` (an entry's mark) no longer hides the entry.
pub fn committed(def: &PrivDef) -> bool {
    def.by.load(Ordering::Acquire) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: Oid) -> Option<String> {
        match o {
            10 => Some("postgres".into()),
            20 => Some("bob".into()),
            30 => Some("Carol x".into()),
            _ => None,
        }
    }

    #[test]
    fn grant_revoke_and_text() {
        let mut acl = acl_default(ObjType::Relation, 10);
        acl_grant(&mut acl, 20, 10, ACL_SELECT | ACL_INSERT, true);
        acl_grant(&mut acl, ACL_ID_PUBLIC, 10, ACL_SELECT, false);
        let t: Vec<String> = acl.iter().map(|i| aclitem_text(i, &names)).collect();
        assert_eq!(
            t,
            [
                "postgres=arwdDxt/postgres",
                "bob=a*r*/postgres",
                "=r/postgres"
            ]
        );
        // bob passes SELECT on; revoking bob's option needs CASCADE.
        acl_grant(&mut acl, 30, 20, ACL_SELECT, false);
        assert_eq!(aclitem_text(&acl[3], &names), "\"Carol x\"=r/bob");
        let mut copy = acl.clone();
        let e = acl_revoke(&mut copy, 20, 10, ACL_SELECT, true, false).unwrap_err();
        assert_eq!(e.code, sqlstate::DEPENDENT_OBJECTS_STILL_EXIST);
        acl_revoke(&mut acl, 20, 10, ACL_SELECT, true, true).unwrap();
        let t: Vec<String> = acl.iter().map(|i| aclitem_text(i, &names)).collect();
        assert_eq!(
            t,
            [
                "postgres=arwdDxt/postgres",
                "bob=a*r/postgres",
                "=r/postgres"
            ]
        );
        assert_eq!(
            acl_mask(&acl, &[20, 0], ACL_SELECT | ACL_UPDATE),
            ACL_SELECT
        );
        assert_eq!(acl_mask(&acl, &[99], ACL_SELECT), 0);
    }

    #[test]
    fn lines_round_trip() {
        let mut key = crate::comment::CommentKey::object(1259, 16400);
        key.name = "r x".into();
        let e = PrivEntry {
            owner: 20,
            acl: Some(acl_default(ObjType::Sequence, 20)),
        };
        for (entry, prev) in [
            (Some(&e), None),
            (None, Some(&e)),
            (
                Some(&PrivEntry {
                    owner: 0,
                    acl: Some(Vec::new()),
                }),
                Some(&PrivEntry {
                    owner: 5,
                    acl: None,
                }),
            ),
        ] {
            let line = acl_line(&key, entry, TransactionId(9), prev);
            let (k, en, by, p) = parse_acl_line(line.trim_end()).expect("parses");
            assert_eq!(k, key);
            assert_eq!(en.as_ref(), entry);
            assert_eq!(by, TransactionId(9));
            assert_eq!(p.as_ref(), prev);
        }
        assert!(parse_acl_line("acl_on 1 2 0 0 x -").is_err());
        assert!(parse_acl_line("acl_on 1 2 0 0 5:1/2/3 -").is_err());
    }
}
