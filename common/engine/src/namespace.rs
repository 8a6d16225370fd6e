//! Schemas (PostgreSQL's namespaces, `pg_namespace`) and how a relation
//! name finds its schema.
//!
//! ## Keys
//!
//! Every relation (table, view, sequence) lives in one schema, named by the
//! schema's OID (`TableSpec::namespace` and its siblings). The catalog's
//! maps are keyed by [`rel_key`]: the bare name for a relation in `public`,
//! `"<schema oid>\0<name>"` elsewhere. NUL cannot occur in an SQL
//! identifier, so keys never collide; `public`, the common case, costs
//! nothing (no allocation on lookup); and a catalog file or a WAL record
//! written before schemas existed reads back unchanged, because the name
//! field of its lines *is* the key ([`split_key`] on reading).
//! `CatalogChange` variants that name a relation carry its key.
//!
//! ## Schemas
//!
//! `pg_catalog`, `public`, `information_schema` and `pg_toast` are built in
//! (fixed OIDs, PostgreSQL's). Schemas users create ([`SchemaSpec`]) are a
//! map of the catalog beside the relations, created and dropped through
//! the same change path, transactional like a table (a creator xid that
//! hides an uncommitted schema from other transactions).
//!
//! ## Search path
//!
//! The SQL layer turns the session's `search_path` setting into the OIDs
//! of the schemas that exist, in order (`"$user"` is the schema named like
//! the session user, if there is one); [`crate::catalog::CatalogView`]
//! looks unqualified names up along it. `pg_catalog` is searched first
//! unless the path names it (PostgreSQL's rule), which the SQL layer
//! applies for the system relations; user relations cannot be created in
//! `pg_catalog`.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use pgtypes::{Oid, TransactionId};

use crate::catalog::{esc, unesc};

/// pg_catalog's OID.
pub const PG_CATALOG_NAMESPACE: Oid = 11;
/// pg_toast's OID.
pub const PG_TOAST_NAMESPACE: Oid = 99;
/// public's OID.
pub const PUBLIC_NAMESPACE: Oid = 2200;
/// information_schema's OID (what PostgreSQL 15's initdb gives it).
pub const INFORMATION_SCHEMA_NAMESPACE: Oid = 13207;
/// pg_database_owner: public's owner.
pub const PG_DATABASE_OWNER: Oid = 6171;

/// The built-in schemas: (oid, name, owner).
pub const BUILTIN_SCHEMAS: [(Oid, &str, Oid); 4] = [
    (PG_CATALOG_NAMESPACE, "pg_catalog", 10),
    (PG_TOAST_NAMESPACE, "pg_toast", 10),
    (PUBLIC_NAMESPACE, "public", PG_DATABASE_OWNER),
    (INFORMATION_SCHEMA_NAMESPACE, "information_schema", 10),
];

/// The default search path when none was resolved: `public`.
pub const DEFAULT_PATH: &[Oid] = &[PUBLIC_NAMESPACE];

/// [`DEFAULT_PATH`] shared: every statement's executor context starts
/// from it, and building an `Arc` from the slice each time allocated.
pub fn default_path() -> std::sync::Arc<[Oid]> {
    static PATH: std::sync::LazyLock<std::sync::Arc<[Oid]>> =
        std::sync::LazyLock::new(|| std::sync::Arc::from(DEFAULT_PATH));
    PATH.clone()
}

/// A relation's key in the catalog maps (see the module docs).
pub fn rel_key(namespace: Oid, name: &str) -> Cow<'_, str> {
    if namespace == PUBLIC_NAMESPACE {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("{namespace}\0{name}"))
    }
}

/// The schema and bare name of a key made by [`rel_key`] (a key without a
/// schema part is in `public`).
pub fn split_key(key: &str) -> (Oid, &str) {
    match key.split_once('\0') {
        Some((ns, name)) => match ns.parse::<Oid>() {
            Ok(ns) => (ns, name),
            Err(_) => (PUBLIC_NAMESPACE, key),
        },
        None => (PUBLIC_NAMESPACE, key),
    }
}

/// A schema created with CREATE SCHEMA (a `pg_namespace` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaSpec {
    /// OID.
    pub oid: Oid,
    /// Name.
    pub name: String,
    /// nspowner: the owning role's OID.
    pub owner: Oid,
    /// The (sub)transaction that created it while that may still roll
    /// back (INVALID: committed).
    pub creator: TransactionId,
    /// The (sub)transaction of an ALTER SCHEMA (RENAME, OWNER TO) that may
    /// still roll back (INVALID: none).
    pub altered_by: TransactionId,
    /// With `altered_by`: the committed row before that ALTER, which other
    /// transactions see.
    pub previous: Option<Box<SchemaSpec>>,
}

impl SchemaSpec {
    /// The row without the uncommitted-ALTER marks.
    pub fn unmarked(&self) -> SchemaSpec {
        SchemaSpec {
            altered_by: TransactionId::INVALID,
            previous: None,
            ..self.clone()
        }
    }
}

/// A schema in the catalog: its row and the marks others check.
#[derive(Debug)]
pub struct SchemaDef {
    /// The row.
    pub spec: SchemaSpec,
    /// The creating xid until known committed (0 after).
    pub creator: AtomicU64,
    /// The altering xid ([`SchemaSpec::altered_by`]) until known
    /// committed (0 after).
    pub altered_by: AtomicU64,
}

impl SchemaDef {
    /// A schema as created or loaded.
    pub fn new(spec: SchemaSpec) -> SchemaDef {
        SchemaDef {
            creator: AtomicU64::new(spec.creator.0),
            altered_by: AtomicU64::new(spec.altered_by.0),
            spec,
        }
    }

    /// The row as it stands now: the marks only while they may matter.
    pub fn current_spec(&self) -> SchemaSpec {
        let mut s = self.spec.clone();
        s.creator = TransactionId(self.creator.load(Ordering::Acquire));
        if self.altered_by.load(Ordering::Acquire) == 0 {
            s.altered_by = TransactionId::INVALID;
            s.previous = None;
        }
        s
    }
}

/// The catalog-file / WAL line of a schema: `schema <oid> <name> <owner>
/// <creator>`, then for an uncommitted ALTER `<altered_by> <previous
/// line, escaped>`.
pub(crate) fn schema_line(s: &SchemaSpec, creator: u64) -> String {
    let mut line = format!("schema {} {} {} {creator}", s.oid, esc(&s.name), s.owner);
    if let Some(p) = s.previous.as_ref().filter(|_| s.altered_by.is_valid()) {
        let prev = schema_line(&p.unmarked(), p.creator.0);
        line.push_str(&format!(" {} {}", s.altered_by.0, esc(prev.trim_end())));
    }
    line.push('\n');
    line
}

/// Parses a [`schema_line`] (without its newline).
pub(crate) fn parse_schema(line: &str) -> Result<SchemaSpec, String> {
    let f: Vec<&str> = line.split(' ').collect();
    let (oid, name, owner, creator, marks) = match f.as_slice() {
        ["schema", oid, name, owner, creator, marks @ ..] => (oid, name, owner, creator, marks),
        _ => return Err(format!("bad schema line {line:?}")),
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let xid = |s: &str| {
        s.parse::<u64>()
            .map(TransactionId)
            .map_err(|_| format!("bad xid {s:?}"))
    };
    let (altered_by, previous) = match marks {
        [] => (TransactionId::INVALID, None),
        [by, prev] => (xid(by)?, Some(Box::new(parse_schema(&unesc(prev)?)?))),
        _ => return Err(format!("bad schema line {line:?}")),
    };
    Ok(SchemaSpec {
        oid: num(oid)?,
        name: unesc(name)?,
        owner: num(owner)?,
        creator: xid(creator)?,
        altered_by,
        previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        assert_eq!(rel_key(PUBLIC_NAMESPACE, "t"), "t");
        let k = rel_key(16400, "t");
        assert_eq!(split_key(&k), (16400, "t"));
        assert_eq!(split_key("t"), (PUBLIC_NAMESPACE, "t"));
        // A name that merely looks like a key part stays a public name.
        assert_eq!(split_key("x\0t"), (PUBLIC_NAMESPACE, "x\0t"));
    }

    #[test]
    fn schema_line_round_trips() {
        let s = SchemaSpec {
            oid: 16500,
            name: "my schema".into(),
            owner: 10,
            creator: TransactionId(7),
            altered_by: TransactionId::INVALID,
            previous: None,
        };
        let line = schema_line(&s, 7);
        assert_eq!(parse_schema(line.trim_end()).unwrap(), s);
        let renamed = SchemaSpec {
            name: "new name".into(),
            creator: TransactionId::INVALID,
            altered_by: TransactionId(9),
            previous: Some(Box::new(s.clone())),
            ..s.clone()
        };
        let line = schema_line(&renamed, 0);
        assert_eq!(parse_schema(line.trim_end()).unwrap(), renamed);
    }
}
