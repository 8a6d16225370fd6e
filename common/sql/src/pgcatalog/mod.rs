//! PostgreSQL's system catalogs (`pg_class`, `pg_attribute`, `pg_type`,
//! `pg_index`, `pg_constraint`, …) as relations any query can read, and
//! the catalog functions tools call on them (`format_type`,
//! `pg_get_indexdef`, `pg_table_is_visible`, the `regclass` family).
//!
//! hotpair keeps its catalog as Rust structures (`engine::catalog`), not
//! as heap tables. These relations are *projections* of it: a statement
//! that reads one takes a [`CatalogSnapshot`] (the tables this session
//! may see, with their indexes, and the roles) once, and every catalog
//! relation and function of that statement answers from the same
//! snapshot, so a join of `pg_class` with `pg_attribute` is consistent.
//! Because the projection is computed from the catalog, it cannot drift
//! from it, and what a standby replays shows up here too.
//!
//! ## What the rows say
//! - OIDs are the catalog's: a table's and an index's OIDs are the ones
//!   RowDescription already reports; built-in types, namespaces, access
//!   methods and functions have PostgreSQL's fixed OIDs
//!   (`types.rs` is copied from PostgreSQL 15; `pg_proc` is the generated
//!   `proc_data.rs` filtered by what the dispatchers implement, see
//!   `proc.rs`; `pg_operator` and the btree operator classes likewise
//!   `operator_data.rs`, filtered by what the expression binder accepts,
//!   see `operator.rs`). OIDs are unique per
//!   catalog, as in PostgreSQL: a primary key's `pg_constraint.oid` is its
//!   index's OID.
//! - Relations are in the schema they were created in (`public`, 2200,
//!   or one CREATE SCHEMA made) and owned by the bootstrap superuser (10);
//!   the catalogs and views are in `pg_catalog` (11).
//! - Column layouts are PostgreSQL 15's (`defs.rs`); columns hotpair has
//!   nothing for hold PostgreSQL's value for a plain heap table (`false`,
//!   0, `'p'` …) or NULL where PostgreSQL has NULL.
//!
//! ## OID alias types
//! `regclass`, `regtype`, `regnamespace`, `regproc`, `regprocedure`,
//! `regoper`, `regoperator` and `regrole` values are `Value::Oid`s typed `SqlType::Reg`. Casting a
//! name to one ([`reg_in`]) and printing one ([`reg_out`]) look the
//! snapshot up; the executor prints result columns of these types by name
//! (`executor::output_reg_columns`).
//!
//! Where to go next: `crate::sysviews` is the registry the planner binds
//! relation names with; `rows.rs` builds each relation's rows;
//! `functions.rs` holds the catalog functions; `proc.rs` the built-in
//! functions' catalog rows and `regproc`; `operator.rs` the operators',
//! operator classes' and families' rows.

pub mod aclfuncs;
pub mod defs;
pub mod functions;
pub mod information_schema;
pub mod operator;
#[rustfmt::skip]
pub mod operator_data;
pub mod proc;
#[rustfmt::skip]
pub mod proc_data;
pub mod rows;
pub mod ruleutils;
pub mod types;

use std::collections::HashMap;
use std::sync::Arc;

use engine::catalog::{ConstraintKind, ConstraintSpec, IndexDef, RoleSpec, TableDef};
use engine::sequence::SequenceDef;
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::{RegKind, SqlType};
use pgtypes::TransactionId;
use txn::clog::Clog;

/// What building a system relation's rows needs from the running
/// statement (the executor's context implements it; a trait here keeps
/// this module below the executor in the crate's layers).
pub trait ViewContext {
    /// The node.
    fn engine(&self) -> &Engine;
    /// The statement's catalog snapshot.
    fn pg_catalog(&self) -> Arc<CatalogSnapshot>;
    /// Every setting: (name, value, description).
    fn settings_all(&self) -> Vec<(String, String, String)>;
    /// current_database().
    fn database(&self) -> String;
    /// Set while a keyed catalog scan builds its rows: only the rows of
    /// this relation (OID) are wanted — a table's, or its indexes' for
    /// pg_index (see `SystemView::key`). Builders may ignore it: the
    /// scan's filter still applies.
    fn relation_key(&self) -> Option<u32> {
        None
    }
    /// Like [`Self::relation_key`], by name: only the rows of relations
    /// with this name (in any schema) are wanted.
    fn relation_name_key(&self) -> Option<&str> {
        None
    }
    /// current_user, for views that show other sessions' details only to
    /// whoever may see them (None: no session, everything shown).
    fn current_user(&self) -> Option<String> {
        None
    }
    /// The session's open cursors, as pg_cursors rows (none without a
    /// session).
    fn cursors(&self) -> Vec<Vec<Value>> {
        Vec::new()
    }
}

pub use engine::namespace::{
    INFORMATION_SCHEMA_NAMESPACE as INFORMATION_SCHEMA, PG_CATALOG_NAMESPACE as PG_CATALOG,
    PG_TOAST_NAMESPACE as PG_TOAST, PUBLIC_NAMESPACE as PUBLIC,
};
/// The bootstrap superuser's OID.
pub const BOOTSTRAP_SUPERUSER: u32 = 10;
pub use engine::namespace::PG_DATABASE_OWNER;
/// The heap table access method.
pub const HEAP_AM: u32 = 2;
/// The btree index access method.
pub const BTREE_AM: u32 = 403;
/// The database's OID (PostgreSQL's `postgres` database after initdb).
pub const DATABASE_OID: u32 = 5;
/// The default collation.
pub const DEFAULT_COLLATION: u32 = 100;

/// The built-in namespaces: (oid, name, owner).
pub use engine::namespace::BUILTIN_SCHEMAS as NAMESPACES;

/// Built-in roles that are not rows of hotpair's role catalog
/// (PostgreSQL 15's predefined roles).
use engine::acl::PREDEFINED_ROLES;
use pgtypes::value::Value;

/// A relation as the catalogs list it.
#[derive(Clone)]
pub enum RelRef {
    /// A user table.
    Table(Arc<TableDef>),
    /// An index of a user table.
    Index(Arc<TableDef>, Arc<IndexDef>),
    /// A sequence.
    Sequence(Arc<SequenceDef>),
    /// A user view.
    View(Arc<engine::view::ViewSpec>),
    /// A catalog or system view.
    System(&'static crate::sysviews::SystemView),
}

impl RelRef {
    /// OID.
    pub fn oid(&self) -> u32 {
        match self {
            RelRef::Table(t) => t.oid,
            RelRef::Index(_, i) => i.spec.oid,
            RelRef::Sequence(s) => s.spec.oid,
            RelRef::View(v) => v.oid,
            RelRef::System(v) => v.oid,
        }
    }
    /// Name.
    pub fn name(&self) -> &str {
        match self {
            RelRef::Table(t) => &t.name,
            RelRef::Index(_, i) => &i.spec.name,
            RelRef::Sequence(s) => &s.spec.name,
            RelRef::View(v) => &v.name,
            RelRef::System(v) => v.name,
        }
    }
    /// Namespace OID.
    pub fn namespace(&self) -> u32 {
        match self {
            RelRef::System(v) => v.namespace(),
            RelRef::Table(t) | RelRef::Index(t, _) => t.namespace,
            RelRef::Sequence(s) => s.spec.namespace,
            RelRef::View(v) => v.namespace,
        }
    }
    /// The relation a trigger may belong to (a table or a view).
    pub fn trigger_rel(&self) -> Option<engine::pg_trigger::TriggerRel<'_>> {
        match self {
            RelRef::Table(t) => Some(engine::pg_trigger::TriggerRel::table(t)),
            RelRef::View(v) => Some(engine::pg_trigger::TriggerRel::view(v)),
            _ => None,
        }
    }
    /// pg_class.relkind.
    pub fn relkind(&self) -> &'static str {
        match self {
            RelRef::Table(_) => "r",
            RelRef::Index(..) => "i",
            RelRef::Sequence(_) => "S",
            RelRef::View(_) => "v",
            RelRef::System(v) => v.relkind(),
        }
    }
}

/// The catalog as one statement sees it (see the module doc).
pub struct CatalogSnapshot {
    /// Tables this session may see, by OID.
    pub tables: Vec<Arc<TableDef>>,
    /// Roles, by OID.
    pub roles: Vec<Arc<RoleSpec>>,
    rels: HashMap<u32, RelRef>,
    by_name: HashMap<(u32, String), u32>,
    /// Every schema this session sees: (oid, name, owner), built-in first.
    pub namespaces: Vec<(u32, String, u32)>,
    /// The session's search path (resolved schema OIDs).
    pub path: Vec<u32>,
    /// pg_description's rows other than functions': comments this
    /// session sees on objects it sees (see [`Description`]).
    pub descriptions: Vec<Description>,
    /// pg_shdescription's rows (roles, the database).
    pub shdescriptions: Vec<Description>,
    /// Owners and access lists this session sees, by (classoid, objoid,
    /// subid) ([`engine::acl`]).
    pub privileges: HashMap<(u32, u32, i32), engine::acl::PrivEntry>,
    /// pg_default_acl's rows: (role, schema or 0, object type, list).
    pub default_acls: Vec<(u32, u32, char, Vec<engine::acl::AclItem>)>,
    /// Functions users created that this session sees, by OID
    /// (`engine::pg_proc`).
    pub functions: Vec<Arc<engine::pg_proc::FunctionDef>>,
}

impl CatalogSnapshot {
    /// The user-created function with OID `oid`.
    pub fn function(&self, oid: u32) -> Option<&engine::pg_proc::FunctionSpec> {
        self.functions
            .iter()
            .find(|f| f.spec.oid == oid)
            .map(|f| &f.spec)
    }
}

/// One pg_description / pg_shdescription row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// objoid.
    pub objoid: u32,
    /// classoid.
    pub classoid: u32,
    /// objsubid (0 in pg_shdescription).
    pub subid: i32,
    /// description.
    pub text: String,
}

/// The comments PostgreSQL's initdb puts on built-in schemas.
const BUILTIN_SCHEMA_COMMENTS: &[(u32, &str)] = &[
    (11, "system catalog schema"),
    (99, "reserved schema for TOAST tables"),
    (2200, "standard public schema"),
];

impl CatalogSnapshot {
    /// Takes the snapshot for a session whose own xids are `own`.
    pub fn take(db: &Engine, own: &[TransactionId], clog: &Clog, path: &[u32]) -> CatalogSnapshot {
        // The version of each table this session sees: another
        // transaction's uncommitted ALTER is not (see CatalogView::get).
        let mut tables: Vec<Arc<TableDef>> = db
            .catalog()
            .tables()
            .into_iter()
            .filter(|t| t.visible_to(own, clog))
            .map(|t| {
                if t.previous.is_some() {
                    t.version_for(own, clog)
                } else {
                    t
                }
            })
            .collect();
        tables.sort_by_key(|t| t.oid);
        let mut roles = db.catalog().roles();
        roles.sort_by_key(|r| r.oid);
        let mut rels = HashMap::new();
        for v in crate::sysviews::catalog_relations() {
            rels.insert(v.oid, RelRef::System(v));
        }
        for t in &tables {
            rels.insert(t.oid, RelRef::Table(t.clone()));
            for i in t.indexes.list() {
                if i.visible_to(own, clog) {
                    rels.insert(i.spec.oid, RelRef::Index(t.clone(), i));
                }
            }
        }
        let view = db.catalog().view(own, clog);
        for q in view.sequences() {
            rels.insert(q.spec.oid, RelRef::Sequence(q));
        }
        for v in view.views() {
            rels.insert(v.oid, RelRef::View(v));
        }
        let namespaces = NAMESPACES
            .iter()
            .map(|(o, n, w)| (*o, n.to_string(), *w))
            .chain(view.schemas().into_iter().map(|s| (s.oid, s.name, s.owner)))
            .collect();
        let by_name = rels
            .values()
            .map(|r| ((r.namespace(), r.name().to_string()), r.oid()))
            .collect();
        let mut snap = CatalogSnapshot {
            tables,
            roles,
            rels,
            by_name,
            namespaces,
            path: path.to_vec(),
            descriptions: Vec::new(),
            shdescriptions: Vec::new(),
            privileges: HashMap::new(),
            default_acls: Vec::new(),
            functions: view.functions(),
        };
        for (k, p) in db.catalog().privilege_list() {
            let Some(e) = p.visible(own, clog) else {
                continue;
            };
            if k.classoid == engine::acl::PG_DEFAULT_ACL {
                if let (Some(acl), Some(t)) = (&e.acl, k.name.chars().next()) {
                    snap.default_acls
                        .push((k.objoid, k.subid as u32, t, acl.clone()));
                }
            } else {
                snap.privileges
                    .insert((k.classoid, k.objoid, k.subid), e.clone());
            }
        }
        snap.fill_descriptions(db, own, clog);
        snap
    }

    /// Resolves the comments this session sees into pg_description /
    /// pg_shdescription rows, dropping those whose object it does not see
    /// (an uncommitted creation of another session, a dropped constraint).
    fn fill_descriptions(&mut self, db: &Engine, own: &[TransactionId], clog: &Clog) {
        use engine::comment::{
            PG_AUTHID, PG_CLASS, PG_CONSTRAINT, PG_DATABASE, PG_NAMESPACE, PG_TYPE,
        };
        let mut local = Vec::new();
        let mut shared = Vec::new();
        for t in &self.tables {
            for (sub, text) in &t.comments {
                local.push(Description {
                    objoid: t.oid,
                    classoid: PG_CLASS,
                    subid: *sub as i32,
                    text: text.clone(),
                });
            }
        }
        let entries = db.catalog().comments();
        let has = |classoid: u32, objoid: u32| {
            entries
                .iter()
                .any(|(k, _)| k.classoid == classoid && k.objoid == objoid && k.subid == 0)
        };
        for (o, text) in BUILTIN_SCHEMA_COMMENTS {
            if !has(PG_NAMESPACE, *o) {
                local.push(Description {
                    objoid: *o,
                    classoid: PG_NAMESPACE,
                    subid: 0,
                    text: text.to_string(),
                });
            }
        }
        // Constraint OIDs are derived; resolve them only when needed.
        let constraints: Vec<(u32, String, u32)> =
            if entries.iter().any(|(k, _)| k.classoid == PG_CONSTRAINT) {
                self.constraints()
                    .iter()
                    .map(|c| (c.table.oid, c.spec.name.clone(), c.oid))
                    .collect()
            } else {
                Vec::new()
            };
        for (k, c) in &entries {
            let Some(text) = c.visible_text(own, clog) else {
                continue;
            };
            let objoid = match k.classoid {
                PG_CLASS => match self.rels.get(&k.objoid) {
                    Some(RelRef::View(v)) if k.subid > 0 => {
                        if k.subid as usize > v.columns.len() {
                            continue;
                        }
                        k.objoid
                    }
                    Some(RelRef::Index(..) | RelRef::View(_) | RelRef::Sequence(_))
                        if k.subid == 0 =>
                    {
                        k.objoid
                    }
                    _ => continue,
                },
                PG_NAMESPACE if self.namespaces.iter().any(|n| n.0 == k.objoid) => k.objoid,
                PG_TYPE if db.catalog().enum_type_by_oid(k.objoid).is_some() => k.objoid,
                PG_CONSTRAINT => match constraints
                    .iter()
                    .find(|(t, n, _)| *t == k.objoid && *n == k.name)
                {
                    Some((_, _, oid)) => *oid,
                    None => continue,
                },
                PG_AUTHID if self.roles.iter().any(|r| r.oid == k.objoid) => k.objoid,
                PG_DATABASE if k.objoid == DATABASE_OID => k.objoid,
                _ => continue,
            };
            let d = Description {
                objoid,
                classoid: k.classoid,
                subid: k.subid,
                text: text.to_string(),
            };
            if k.shared() {
                shared.push(d);
            } else {
                local.push(d);
            }
        }
        self.descriptions = local;
        self.shdescriptions = shared;
    }

    /// The comment on one object (obj_description / col_description /
    /// shobj_description); `classoid` None: any local catalog.
    pub fn description(&self, objoid: u32, classoid: Option<u32>, subid: i32) -> Option<&str> {
        self.descriptions
            .iter()
            .chain(&self.shdescriptions)
            .find(|d| {
                d.objoid == objoid
                    && d.subid == subid
                    && classoid.map_or(!matches!(d.classoid, 1260 | 1262), |c| c == d.classoid)
            })
            .map(|d| d.text.as_str())
    }

    /// A schema's OID by name.
    pub fn namespace_oid(&self, name: &str) -> Option<u32> {
        self.namespaces.iter().find(|n| n.1 == name).map(|n| n.0)
    }

    /// A schema's name by OID.
    pub fn namespace_name(&self, oid: u32) -> Option<&str> {
        self.namespaces
            .iter()
            .find(|n| n.0 == oid)
            .map(|n| n.1.as_str())
    }

    /// The schemas an unqualified name is looked up in: pg_catalog first
    /// unless the path names it (PostgreSQL's rule), then the path.
    pub fn search_order(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.path.len() + 1);
        if !self.path.contains(&PG_CATALOG) {
            v.push(PG_CATALOG);
        }
        v.extend(&self.path);
        v
    }

    /// True if relation `r` is found by its bare name (pg_table_is_visible).
    pub fn is_visible(&self, r: &RelRef) -> bool {
        self.relation_by_name(None, r.name())
            .is_some_and(|v| v.oid() == r.oid())
    }

    /// Every relation, by OID.
    pub fn relations(&self) -> Vec<&RelRef> {
        let mut v: Vec<&RelRef> = self.rels.values().collect();
        v.sort_by_key(|r| r.oid());
        v
    }

    /// [`Self::relations`], or with `key` the relation with that OID and
    /// the indexes of a table with it (what a keyed catalog scan needs).
    pub fn relations_keyed(&self, key: Option<u32>) -> Vec<&RelRef> {
        let Some(k) = key else {
            return self.relations();
        };
        let mut v: Vec<&RelRef> = self.rels.get(&k).into_iter().collect();
        if let Some(RelRef::Table(t)) = self.rels.get(&k) {
            for ix in t.indexes.list() {
                if let Some(r) = self.rels.get(&ix.spec.oid) {
                    v.push(r);
                }
            }
        }
        v.sort_by_key(|r| r.oid());
        v
    }

    /// [`Self::relations_keyed`], or with `name` the relations of that name
    /// in any schema.
    pub fn relations_keyed_by(&self, key: Option<u32>, name: Option<&str>) -> Vec<&RelRef> {
        let Some(name) = name else {
            return self.relations_keyed(key);
        };
        let mut v: Vec<&RelRef> = self
            .by_name
            .iter()
            .filter(|((_, n), _)| n == name)
            .filter_map(|(_, oid)| self.rels.get(oid))
            .filter(|r| key.is_none_or(|k| r.oid() == k))
            .collect();
        v.sort_by_key(|r| r.oid());
        v
    }

    /// The tables, or with `key` the one with that OID.
    pub fn tables_keyed(&self, key: Option<u32>) -> impl Iterator<Item = &Arc<TableDef>> {
        self.tables
            .iter()
            .filter(move |t| key.is_none_or(|k| t.oid == k))
    }

    /// The relation with OID `oid`.
    pub fn relation(&self, oid: u32) -> Option<&RelRef> {
        self.rels.get(&oid)
    }

    /// The relation a possibly qualified name means on the search path
    /// (`pg_catalog` first, then `public`, as PostgreSQL's default).
    pub fn relation_by_name(&self, schema: Option<&str>, name: &str) -> Option<&RelRef> {
        let spaces: Vec<u32> = match schema {
            Some(s) => vec![self.namespace_oid(s)?],
            None => self.search_order(),
        };
        spaces
            .iter()
            .find_map(|n| self.by_name.get(&(*n, name.to_string())))
            .and_then(|o| self.rels.get(o))
    }

    /// The table and column (position) a sequence is OWNED BY, if any.
    pub fn sequence_owner(
        &self,
        seq: &engine::sequence::SequenceSpec,
    ) -> Option<(&TableDef, usize)> {
        let (table, column) = seq.owned_by.as_ref()?;
        let t = self.tables.iter().find(|t| t.key() == *table)?;
        let pos = t.columns.iter().position(|c| &c.name == column)?;
        Some((t, pos))
    }

    /// True for the sequence of an identity column (pg_depend's 'i').
    pub fn is_identity_sequence(&self, seq: &engine::sequence::SequenceSpec) -> bool {
        self.sequence_owner(seq)
            .is_some_and(|(t, pos)| t.columns[pos].identity.is_some())
    }

    /// Every constraint with its pg_constraint OID: a primary key's or
    /// unique constraint's is its index's; a CHECK's is derived from the
    /// table's OID and its position (unique within pg_constraint, as
    /// PostgreSQL's OIDs are unique per catalog). Primary keys made before
    /// tables kept a constraint list are listed from their index.
    pub fn constraints(&self) -> Vec<Constraint<'_>> {
        self.constraints_keyed(None)
    }

    /// [`Self::constraints`], or with `key` those of the table with that
    /// OID.
    pub fn constraints_keyed(&self, key: Option<u32>) -> Vec<Constraint<'_>> {
        let mut out = Vec::new();
        for t in self.tables_keyed(key) {
            let indexes = t.indexes.list();
            let index_oid = |name: &str| {
                indexes
                    .iter()
                    .find(|i| i.spec.name == name)
                    .map(|i| i.spec.oid)
            };
            for (i, c) in t.constraints.iter().enumerate() {
                let derived = 0x4000_0000u32
                    .wrapping_add(t.oid.wrapping_mul(32))
                    .wrapping_add(i as u32);
                // A foreign key's index is the referenced table's unique
                // index (conindid); its own OID is derived like a CHECK's.
                let referenced = c
                    .foreign
                    .as_ref()
                    .and_then(|f| self.tables.iter().find(|r| r.oid == f.table));
                let (oid, index) = match referenced {
                    Some(r) => {
                        let ix = c.index.as_deref().and_then(|n| {
                            r.indexes
                                .list()
                                .iter()
                                .find(|i| i.spec.name == n)
                                .map(|i| i.spec.oid)
                        });
                        (derived, ix.unwrap_or(0))
                    }
                    None => {
                        let index = c.index.as_deref().and_then(index_oid);
                        (index.unwrap_or(derived), index.unwrap_or(0))
                    }
                };
                out.push(Constraint {
                    oid,
                    table: t,
                    index,
                    referenced,
                    spec: std::borrow::Cow::Borrowed(c),
                });
            }
            for ix in &indexes {
                let listed = t
                    .constraints
                    .iter()
                    .any(|c| c.index.as_deref() == Some(ix.spec.name.as_str()));
                if ix.spec.primary && !listed {
                    out.push(Constraint {
                        oid: ix.spec.oid,
                        table: t,
                        index: ix.spec.oid,
                        referenced: None,
                        spec: std::borrow::Cow::Owned(ConstraintSpec {
                            name: ix.spec.name.clone(),
                            kind: ConstraintKind::PrimaryKey,
                            columns: ix.spec.columns.clone(),
                            check: None,
                            index: Some(ix.spec.name.clone()),
                            foreign: None,
                            deferrable: false,
                            initially_deferred: false,
                            not_valid: false,
                            match_full: false,
                        }),
                    });
                }
            }
        }
        out
    }

    /// A relation's owner (relowner).
    pub fn rel_owner(&self, oid: u32) -> u32 {
        match self.privileges.get(&(engine::comment::PG_CLASS, oid, 0)) {
            Some(e) if e.owner != 0 => e.owner,
            _ => BOOTSTRAP_SUPERUSER,
        }
    }

    /// An `aclitem[]` value of `items`, role names resolved.
    pub fn acl_value(&self, items: &[engine::acl::AclItem]) -> Value {
        pgtypes::array::array_value(
            pgtypes::sqltype::ArrayElem::Text,
            items
                .iter()
                .map(|i| Value::Text(engine::acl::aclitem_text(i, &|o| self.role_name(o)).into()))
                .collect(),
        )
    }

    /// The explicit list of an object (NULL: none, the default applies).
    pub fn acl_of(&self, classoid: u32, oid: u32, subid: i32) -> Value {
        match self
            .privileges
            .get(&(classoid, oid, subid))
            .and_then(|e| e.acl.as_ref())
        {
            Some(items) => self.acl_value(items),
            None => Value::Null,
        }
    }

    /// A schema's nspacl: its list, or for a built-in schema initdb's.
    pub fn namespace_acl(&self, oid: u32, owner: u32) -> Value {
        use engine::acl::{acl_default, AclItem, ObjType, ACL_ID_PUBLIC, ACL_USAGE};
        match self
            .privileges
            .get(&(engine::comment::PG_NAMESPACE, oid, 0))
            .and_then(|e| e.acl.as_ref())
        {
            Some(items) => self.acl_value(items),
            None if NAMESPACES.iter().any(|(o, _, _)| *o == oid) => {
                let mut acl = acl_default(ObjType::Schema, owner);
                if oid != PG_TOAST {
                    acl.push(AclItem {
                        grantee: ACL_ID_PUBLIC,
                        grantor: owner,
                        privs: ACL_USAGE,
                        goptions: 0,
                    });
                }
                self.acl_value(&acl)
            }
            None => Value::Null,
        }
    }

    /// A role's name by OID (`pg_get_userbyid`).
    pub fn role_name(&self, oid: u32) -> Option<String> {
        self.roles
            .iter()
            .find(|r| r.oid == oid)
            .map(|r| r.name.clone())
            .or_else(|| {
                PREDEFINED_ROLES
                    .iter()
                    .find(|(o, _)| *o == oid)
                    .map(|(_, n)| n.to_string())
            })
    }

    /// A role's OID by name.
    pub fn role_oid(&self, name: &str) -> Option<u32> {
        self.roles
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.oid)
            .or_else(|| {
                PREDEFINED_ROLES
                    .iter()
                    .find(|(_, n)| *n == name)
                    .map(|(o, _)| *o)
            })
    }
}

/// A constraint as pg_constraint lists it.
pub struct Constraint<'a> {
    /// pg_constraint.oid.
    pub oid: u32,
    /// Its table.
    pub table: &'a Arc<TableDef>,
    /// conindid (0 without an index).
    pub index: u32,
    /// A foreign key's referenced table (confrelid), if this session sees it.
    pub referenced: Option<&'a Arc<TableDef>>,
    /// The definition.
    pub spec: std::borrow::Cow<'a, ConstraintSpec>,
}

impl Constraint<'_> {
    /// The key columns, quoted and comma-separated.
    fn column_list(&self) -> String {
        self.spec
            .columns
            .iter()
            .filter_map(|c| self.table.columns.get(*c))
            .map(|c| quote_ident(&c.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// pg_get_constraintdef (`pretty`: without the CHECK expression's
    /// extra parentheses, as psql asks for).
    pub fn definition(&self, snap: &CatalogSnapshot, pretty: bool) -> String {
        let mut def = match self.spec.kind {
            ConstraintKind::PrimaryKey => format!("PRIMARY KEY ({})", self.column_list()),
            ConstraintKind::Unique => format!("UNIQUE ({})", self.column_list()),
            // Not pretty, the deparser parenthesises the operator itself.
            ConstraintKind::Check => format!(
                "CHECK ({})",
                self.spec
                    .check
                    .as_deref()
                    .map(|t| functions::deparse_check(t, &self.table.columns, pretty))
                    .unwrap_or_default(),
            ),
            ConstraintKind::ForeignKey => {
                let mut d = format!("FOREIGN KEY ({}) REFERENCES ", self.column_list());
                let full = if self.spec.match_full {
                    " MATCH FULL"
                } else {
                    ""
                };
                if let (Some(f), Some(r)) = (self.spec.foreign.as_ref(), self.referenced) {
                    let cols: Vec<String> = f
                        .columns
                        .iter()
                        .filter_map(|c| r.columns.get(*c))
                        .map(|c| quote_ident(&c.name))
                        .collect();
                    // Qualified when the search path does not find it.
                    let name = reg_out(snap, RegKind::Class, r.oid);
                    d.push_str(&format!("{name}({}){full}", cols.join(", ")));
                    // PostgreSQL prints ON UPDATE before ON DELETE, and
                    // nothing for NO ACTION.
                    for (what, a) in [("UPDATE", f.on_update), ("DELETE", f.on_delete)] {
                        if let Some(a) = fk_action_sql(a) {
                            d.push_str(&format!(" ON {what} {a}"));
                        }
                    }
                }
                d
            }
        };
        if self.spec.deferrable {
            def.push_str(" DEFERRABLE");
            if self.spec.initially_deferred {
                def.push_str(" INITIALLY DEFERRED");
            }
        }
        if self.spec.not_valid {
            def.push_str(" NOT VALID");
        }
        def
    }
}

/// The SQL of a referential action as pg_get_constraintdef prints it
/// (None for NO ACTION, the default it leaves out).
pub fn fk_action_sql(a: engine::catalog::FkAction) -> Option<&'static str> {
    use engine::catalog::FkAction;
    match a {
        FkAction::NoAction => None,
        FkAction::Restrict => Some("RESTRICT"),
        FkAction::Cascade => Some("CASCADE"),
        FkAction::SetNull => Some("SET NULL"),
        FkAction::SetDefault => Some("SET DEFAULT"),
    }
}

/// The pg_type row of a type OID (a built-in type, an enum type or an
/// enum's array type).
pub fn type_row(oid: u32) -> Option<types::PgTypeRow> {
    if let Some(t) = types::TYPES.iter().find(|t| t.oid == oid) {
        return Some(t.clone());
    }
    let e = pgtypes::enumtype::elem_of_array(oid).unwrap_or(oid);
    let t = pgtypes::enumtype::get(e)?;
    types::enum_rows(&t).into_iter().find(|r| r.oid == oid)
}

/// Splits `a.b` / `"A".b` into (schema, name), folding unquoted parts to
/// lower case as PostgreSQL's identifier rules do.
pub fn split_qualified(text: &str) -> PgResult<(Option<String>, String)> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = text.trim().chars().peekable();
    let mut quoted_any = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted_any = true;
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            cur.push('"');
                        }
                        Some('"') => break,
                        Some(ch) => cur.push(ch),
                        None => {
                            return Err(PgError::new(
                                sqlstate::INVALID_TEXT_REPRESENTATION,
                                "invalid name syntax",
                            ))
                        }
                    }
                }
            }
            '.' => parts.push(std::mem::take(&mut cur)),
            c => cur.push(c.to_ascii_lowercase()),
        }
    }
    let _ = quoted_any;
    parts.push(cur);
    match parts.len() {
        1 => Ok((None, parts.pop().unwrap_or_default())),
        2 => {
            let name = parts.pop().unwrap_or_default();
            Ok((parts.pop(), name))
        }
        3 => {
            let name = parts.pop().unwrap_or_default();
            let schema = parts.pop();
            Ok((schema, name))
        }
        _ => Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            "invalid name syntax",
        )),
    }
}

/// Text → OID for an OID alias type (`'accounts'::regclass`). A number is
/// taken as the OID itself, as PostgreSQL does.
pub fn reg_in(snap: &CatalogSnapshot, kind: RegKind, text: &str) -> PgResult<u32> {
    let t = text.trim();
    // `-` is InvalidOid, except for an operator, where it is a name.
    if t == "-" && !matches!(kind, RegKind::Oper | RegKind::Operator) {
        return Ok(0);
    }
    if let Ok(n) = t.parse::<u32>() {
        return Ok(n);
    }
    match kind {
        RegKind::Class => {
            let (schema, name) = split_qualified(t)?;
            snap.relation_by_name(schema.as_deref(), &name)
                .map(|r| r.oid())
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!("relation \"{t}\" does not exist"),
                    )
                })
        }
        RegKind::Type => {
            let name = t.strip_prefix("pg_catalog.").unwrap_or(t);
            let found = SqlType::from_name(name).map(|ty| ty.oid()).or_else(|| {
                types::TYPES
                    .iter()
                    .find(|r| r.name == name || r.display == name)
                    .map(|r| r.oid)
            });
            found.ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("type \"{t}\" does not exist"),
                )
            })
        }
        RegKind::Namespace => {
            let (_, name) = split_qualified(t)?;
            snap.namespace_oid(&name)
                .ok_or_else(|| PgError::new("3F000", format!("schema \"{t}\" does not exist")))
        }
        RegKind::Role => {
            let (_, name) = split_qualified(t)?;
            snap.role_oid(&name).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("role \"{t}\" does not exist"),
                )
            })
        }
        RegKind::Proc | RegKind::Procedure => match user_proc_in(snap, kind, t)? {
            Some(oid) => Ok(oid),
            None if kind == RegKind::Proc => proc::regproc_in(t),
            None => proc::regprocedure_in(t),
        },
        RegKind::Oper => operator::regoper_in(t),
        RegKind::Operator => operator::regoperator_in(t),
    }
}

/// A function users created that `regproc` text (`f`, `s.f`) or
/// `regprocedure` text (`f(integer, text)`) names: in its schema, or in
/// the search path's; None to look among the built-ins.
fn user_proc_in(snap: &CatalogSnapshot, kind: RegKind, t: &str) -> PgResult<Option<u32>> {
    let (name_text, args) = match (kind, t.find('(')) {
        (RegKind::Procedure, Some(open)) if t.ends_with(')') => {
            (&t[..open], Some(&t[open + 1..t.len() - 1]))
        }
        (RegKind::Procedure, _) => return Ok(None),
        _ => (t, None),
    };
    let (schema, name) = split_qualified(name_text.trim())?;
    let schemas: Vec<u32> = match schema.as_deref() {
        Some("pg_catalog") => return Ok(None),
        Some(s) => match snap.namespaces.iter().find(|n| n.1 == s) {
            Some(n) => vec![n.0],
            None => return Ok(None),
        },
        None => snap.search_order(),
    };
    let types = match args {
        None => None,
        Some(a) if a.trim().is_empty() => Some(Vec::new()),
        Some(a) => {
            let mut v = Vec::new();
            let mut parts = Vec::new();
            let (mut depth, mut start) = (0i32, 0);
            for (i, c) in a.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&a[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&a[start..]);
            for part in parts {
                match crate::parser::parse_type_text(part.trim()) {
                    Ok(ty) => v.push(ty),
                    Err(_) => return Ok(None),
                }
            }
            Some(v)
        }
    };
    // The first schema (of the path) with a match hides the later ones.
    let found: Vec<u32> = schemas
        .iter()
        .map(|ns| {
            snap.functions
                .iter()
                .filter(|f| f.spec.name == name && f.spec.namespace == *ns)
                .filter(|f| types.as_ref().is_none_or(|t| f.spec.arg_types() == *t))
                .map(|f| f.spec.oid)
                .collect::<Vec<u32>>()
        })
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        _ => Err(PgError::new(
            "42725",
            format!("more than one function named \"{t}\""),
        )),
    }
}

/// Quotes an identifier when PostgreSQL's `quote_ident` would.
pub fn quote_ident(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !crate::pgcatalog::functions::is_reserved_keyword(s);
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// OID → text for an OID alias type; the number when nothing has that OID
/// (as PostgreSQL prints a dangling OID).
/// FunctionIsVisible: `f`'s schema is on the search path and no earlier
/// schema there has a function of its name and argument types.
pub fn function_visible(snap: &CatalogSnapshot, f: &engine::pg_proc::FunctionSpec) -> bool {
    let types = f.arg_types();
    for ns in snap.search_order() {
        if ns == f.namespace {
            return true;
        }
        if snap
            .functions
            .iter()
            .any(|g| g.spec.namespace == ns && g.spec.name == f.name && g.spec.arg_types() == types)
        {
            return false;
        }
    }
    false
}

/// regprocout / regprocedureout of a user function: its name (with
/// `signature`, its argument types too), schema-qualified unless the
/// search path finds it — for regproc, finds it alone by that name.
fn user_regproc_out(snap: &CatalogSnapshot, oid: u32, signature: bool) -> Option<String> {
    let f = snap.function(oid)?;
    let path = snap.search_order();
    let mut visible = function_visible(snap, f);
    if !signature {
        visible = visible
            && proc::by_name(&f.name).is_empty()
            && snap
                .functions
                .iter()
                .filter(|g| g.spec.name == f.name && path.contains(&g.spec.namespace))
                .count()
                == 1;
    }
    let name = if signature {
        let types: Vec<String> = f
            .args
            .iter()
            .map(|a| functions::format_type(a.ty.oid(), -1))
            .collect();
        format!("{}({})", quote_ident(&f.name), types.join(","))
    } else {
        quote_ident(&f.name)
    };
    Some(if visible {
        name
    } else {
        format!(
            "{}.{name}",
            quote_ident(snap.namespace_name(f.namespace).unwrap_or(""))
        )
    })
}

pub fn reg_out(snap: &CatalogSnapshot, kind: RegKind, oid: u32) -> String {
    if oid == 0 {
        // regoperout and regoperatorout print InvalidOid as 0.
        return match kind {
            RegKind::Oper | RegKind::Operator => "0",
            _ => "-",
        }
        .to_string();
    }
    let found = match kind {
        RegKind::Class => snap.relation(oid).map(|r| {
            // Qualified unless visible on the search path.
            let name = quote_ident(r.name());
            if snap.is_visible(r) {
                name
            } else {
                format!(
                    "{}.{}",
                    quote_ident(snap.namespace_name(r.namespace()).unwrap_or("")),
                    name
                )
            }
        }),
        RegKind::Type => type_row(oid).map(|t| t.display.to_string()),
        RegKind::Namespace => snap.namespace_name(oid).map(quote_ident),
        RegKind::Role => snap.role_name(oid).map(|n| quote_ident(&n)),
        RegKind::Proc => proc::regproc_out(oid).or_else(|| user_regproc_out(snap, oid, false)),
        RegKind::Procedure => {
            proc::regprocedure_out(oid).or_else(|| user_regproc_out(snap, oid, true))
        }
        RegKind::Oper => operator::regoper_out(oid),
        RegKind::Operator => operator::regoperator_out(oid),
    };
    found.unwrap_or_else(|| oid.to_string())
}
