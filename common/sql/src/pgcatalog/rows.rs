//! The rows of each catalog relation, built from a [`CatalogSnapshot`]
//! (see the module doc of [`crate::pgcatalog`]). Each builder fills the
//! columns hotpair knows by name; the rest keep PostgreSQL's value for a
//! plain heap table: `false`, 0, or NULL for the variable-width ones.

use std::sync::Arc;

use pgtypes::array::array_value;
use pgtypes::sqltype::{ArrayElem, SqlType as T};
use pgtypes::value::Value;

use super::*;

/// Rows of one relation, filled by column name.
pub(crate) struct Rows {
    cols: &'static [(&'static str, T)],
    pub(crate) out: Vec<Vec<Value>>,
}

impl Rows {
    pub(crate) fn new(cols: &'static [(&'static str, T)]) -> Rows {
        Rows {
            cols,
            out: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, vals: Vec<(&str, Value)>) {
        let mut row: Vec<Value> = self
            .cols
            .iter()
            .map(|(_, t)| match t {
                T::Bool => Value::Bool(false),
                T::Int2 => Value::Int2(0),
                T::Int4 => Value::Int4(0),
                T::Int8 => Value::Int8(0),
                T::Oid | T::Reg(_) => Value::Oid(0),
                T::Float8 => Value::Float8(0.0),
                _ => Value::Null,
            })
            .collect();
        for (name, v) in vals {
            if let Some(i) = self.cols.iter().position(|(n, _)| *n == name) {
                row[i] = v;
            } else {
                debug_assert!(false, "no column {name}");
            }
        }
        self.out.push(row);
    }
}

fn text(s: &str) -> Value {
    Value::text(s)
}

fn ch(c: &str) -> Value {
    Value::text(c)
}

fn oid(o: u32) -> Value {
    Value::Oid(o)
}

fn bool(b: bool) -> Value {
    Value::Bool(b)
}

/// An int2vector (subscripts from 0).
fn int2_vec(v: impl IntoIterator<Item = i16>) -> Value {
    vector(
        ArrayElem::Int2Vector,
        v.into_iter().map(Value::Int2).collect(),
    )
}

/// An oidvector (subscripts from 0).
pub(crate) fn oid_vec(v: impl IntoIterator<Item = u32>) -> Value {
    vector(
        ArrayElem::OidVector,
        v.into_iter().map(Value::Oid).collect(),
    )
}

fn vector(elem: ArrayElem, items: Vec<Value>) -> Value {
    Value::Array(Arc::new(pgtypes::array::ArrayValue {
        elem,
        lower: 0,
        items,
        inner: Vec::new(),
    }))
}

/// The collation a column of type `ty` has (the default for collatable types).
pub fn collation_of(ty: T) -> u32 {
    type_row(ty.oid()).map(|t| t.collation).unwrap_or(0)
}

/// The session's catalog snapshot.
fn snap(ec: &dyn ViewContext) -> Arc<CatalogSnapshot> {
    ec.pg_catalog()
}

/// pg_class.
pub fn pg_class(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let key = ec.relation_key();
    let name = ec.relation_name_key();
    let mut rows = Rows::new(defs::PG_CLASS);
    // Tables with a foreign key, or referenced by one: PostgreSQL's RI
    // triggers make relhastriggers true on both sides (psql's \d lists
    // the keys only then).
    let mut with_triggers = std::collections::HashSet::new();
    for c in s.constraints() {
        if let Some(f) = &c.spec.foreign {
            with_triggers.insert(c.table.oid);
            with_triggers.insert(f.table);
        }
    }
    for r in s.relations_keyed_by(key, name) {
        let (am, natts, hasindex, reltuples, relpages, relfilenode, options) = match r {
            RelRef::Table(t) => {
                let stats = ec.engine().catalog().statistics(t.oid);
                (
                    HEAP_AM,
                    t.columns.len(),
                    !t.indexes.is_empty(),
                    stats.as_ref().map(|st| st.table.reltuples).unwrap_or(-1.0),
                    stats
                        .as_ref()
                        .map(|st| st.table.relpages as i32)
                        .unwrap_or(0),
                    t.rel.0,
                    t.options
                        .iter()
                        .map(|(k, v)| Value::text(&format!("{k}={v}")))
                        .collect::<Vec<_>>(),
                )
            }
            RelRef::Sequence(q) => (0, 3, false, 1.0, 1, q.spec.oid, Vec::new()),
            RelRef::View(v) => (0, v.columns.len(), false, -1.0, 0, 0, Vec::new()),
            RelRef::Index(_, i) => (
                BTREE_AM,
                i.spec.columns.len(),
                false,
                -1.0,
                0,
                i.spec.oid,
                Vec::new(),
            ),
            RelRef::System(v) => (
                if v.relkind() == "r" { HEAP_AM } else { 0 },
                v.columns.len(),
                false,
                -1.0,
                0,
                0,
                Vec::new(),
            ),
        };
        rows.push(vec![
            ("oid", oid(r.oid())),
            ("relname", text(r.name())),
            ("relnamespace", oid(r.namespace())),
            (
                "relowner",
                oid(match r {
                    RelRef::Table(_) | RelRef::View(_) | RelRef::Sequence(_) => {
                        s.rel_owner(r.oid())
                    }
                    RelRef::Index(t, _) => s.rel_owner(t.oid),
                    RelRef::System(_) => BOOTSTRAP_SUPERUSER,
                }),
            ),
            ("relam", oid(am)),
            ("relfilenode", oid(relfilenode)),
            ("relpages", Value::Int4(relpages)),
            ("reltuples", Value::Float8(reltuples)),
            ("relhasindex", bool(hasindex)),
            (
                "relhastriggers",
                bool(
                    with_triggers.contains(&r.oid())
                        || r.trigger_rel().is_some_and(|t| !t.triggers.is_empty()),
                ),
            ),
            (
                "relchecks",
                Value::Int2(match r {
                    RelRef::Table(t) => t
                        .constraints
                        .iter()
                        .filter(|c| c.kind == engine::catalog::ConstraintKind::Check)
                        .count() as i16,
                    _ => 0,
                }),
            ),
            ("relpersistence", ch("p")),
            ("relhasrules", bool(matches!(r, RelRef::View(_)))),
            ("relkind", ch(r.relkind())),
            ("relnatts", Value::Int2(natts.min(i16::MAX as usize) as i16)),
            ("relispopulated", bool(true)),
            (
                "relreplident",
                ch(if r.relkind() == "r" { "d" } else { "n" }),
            ),
            ("relfrozenxid", Value::Xid(0)),
            ("relminmxid", Value::Xid(0)),
            (
                "reloptions",
                if options.is_empty() {
                    Value::Null
                } else {
                    array_value(ArrayElem::Text, options)
                },
            ),
            ("relacl", s.acl_of(engine::comment::PG_CLASS, r.oid(), 0)),
        ]);
    }
    rows.out
}

/// pg_namespace.
pub fn pg_namespace(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_NAMESPACE);
    for (o, name, owner) in &s.namespaces {
        rows.push(vec![
            ("oid", oid(*o)),
            ("nspname", text(name)),
            ("nspowner", oid(*owner)),
            ("nspacl", s.namespace_acl(*o, *owner)),
        ]);
    }
    rows.out
}

/// One pg_attribute row of a user column.
#[allow(clippy::too_many_arguments)]
fn attribute(
    rows: &mut Rows,
    rel: u32,
    num: i16,
    name: &str,
    ty: T,
    not_null: bool,
    has_def: bool,
    identity: &str,
    acl: Value,
) {
    let t = type_row(ty.oid());
    let t = t.as_ref();
    rows.push(vec![
        ("attrelid", oid(rel)),
        ("attname", text(name)),
        ("atttypid", oid(ty.oid())),
        ("attstattarget", Value::Int4(-1)),
        ("attlen", Value::Int2(t.map(|t| t.len).unwrap_or(-1))),
        ("attnum", Value::Int2(num)),
        ("attndims", Value::Int4(matches!(ty, T::Array(_)) as i32)),
        ("attcacheoff", Value::Int4(-1)),
        ("atttypmod", Value::Int4(ty.typmod())),
        ("attbyval", bool(t.is_some_and(|t| t.byval))),
        (
            "attalign",
            ch(&(t.map(|t| t.align).unwrap_or(b'i') as char).to_string()),
        ),
        (
            "attstorage",
            ch(&(t.map(|t| t.storage).unwrap_or(b'p') as char).to_string()),
        ),
        ("attcompression", ch("")),
        ("attnotnull", bool(not_null)),
        ("atthasdef", bool(has_def)),
        ("attidentity", ch(identity)),
        ("attgenerated", ch("")),
        ("attislocal", bool(true)),
        ("attcollation", oid(collation_of(ty))),
        ("attacl", acl),
    ]);
}

/// A sequence relation's columns.
const SEQUENCE_COLUMNS: [(&str, T); 3] = [
    ("last_value", T::Int8),
    ("log_cnt", T::Int8),
    ("is_called", T::Bool),
];

/// The system columns every table has: (name, attnum, type OID).
const SYSTEM_COLUMNS: [(&str, i16, u32); 6] = [
    ("tableoid", -6, 26),
    ("cmax", -5, 29),
    ("xmax", -4, 28),
    ("cmin", -3, 29),
    ("xmin", -2, 28),
    ("ctid", -1, 27),
];

/// pg_attribute.
pub fn pg_attribute(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_ATTRIBUTE);
    for r in s.relations_keyed(ec.relation_key()) {
        match r {
            RelRef::Table(t) => {
                for (name, num, typ) in SYSTEM_COLUMNS {
                    let tr = type_row(typ);
                    let tr = tr.as_ref();
                    rows.push(vec![
                        ("attrelid", oid(t.oid)),
                        ("attname", text(name)),
                        ("atttypid", oid(typ)),
                        ("attlen", Value::Int2(tr.map(|t| t.len).unwrap_or(4))),
                        ("attnum", Value::Int2(num)),
                        ("attcacheoff", Value::Int4(-1)),
                        ("atttypmod", Value::Int4(-1)),
                        ("attbyval", bool(tr.is_some_and(|t| t.byval))),
                        ("attalign", ch(if typ == 27 { "s" } else { "i" })),
                        ("attstorage", ch("p")),
                        ("attcompression", ch("")),
                        ("attnotnull", bool(true)),
                        ("attidentity", ch("")),
                        ("attgenerated", ch("")),
                        ("attislocal", bool(true)),
                    ]);
                }
                for (i, c) in t.columns.iter().enumerate() {
                    if c.dropped {
                        // PostgreSQL keeps a dropped column's row, renamed,
                        // with type 0.
                        rows.push(vec![
                            ("attrelid", oid(t.oid)),
                            ("attname", text(&c.name)),
                            ("attstattarget", Value::Int4(0)),
                            ("attlen", Value::Int2(-1)),
                            ("attnum", Value::Int2((i + 1) as i16)),
                            ("attcacheoff", Value::Int4(-1)),
                            ("atttypmod", Value::Int4(-1)),
                            ("attalign", ch("i")),
                            ("attstorage", ch("x")),
                            ("attcompression", ch("")),
                            ("attidentity", ch("")),
                            ("attgenerated", ch("")),
                            ("attisdropped", bool(true)),
                            ("attislocal", bool(true)),
                        ]);
                        continue;
                    }
                    attribute(
                        &mut rows,
                        t.oid,
                        (i + 1) as i16,
                        &c.name,
                        c.ty,
                        c.not_null,
                        // An identity column's nextval is not a default.
                        c.default.is_some() && c.identity.is_none(),
                        &c.identity.map(String::from).unwrap_or_default(),
                        s.acl_of(engine::comment::PG_CLASS, t.oid, i as i32 + 1),
                    );
                }
            }
            RelRef::Index(t, ix) => {
                // Expression keys are named as PostgreSQL names them
                // (`lower`, `expr`) and have the expression's type.
                let names = crate::indexcmds::key_names(t, &ix.spec);
                let bound = crate::indexcmds::bound(t, ix);
                for (i, &col) in ix.spec.columns.iter().enumerate() {
                    let ty = match (t.columns.get(col), &bound) {
                        (Some(c), _) => c.ty,
                        (None, Some(b)) => match b.key_types().get(i) {
                            Some(ty) => *ty,
                            None => continue,
                        },
                        (None, None) => continue,
                    };
                    attribute(
                        &mut rows,
                        ix.spec.oid,
                        (i + 1) as i16,
                        &names[i],
                        ty,
                        false,
                        false,
                        "",
                        Value::Null,
                    );
                }
            }
            RelRef::View(v) => {
                for (i, c) in v.columns.iter().enumerate() {
                    attribute(
                        &mut rows,
                        v.oid,
                        (i + 1) as i16,
                        &c.name,
                        c.ty,
                        false,
                        false,
                        "",
                        Value::Null,
                    );
                }
            }
            RelRef::Sequence(_) => {
                for (i, (name, ty)) in SEQUENCE_COLUMNS.iter().enumerate() {
                    attribute(
                        &mut rows,
                        r.oid(),
                        (i + 1) as i16,
                        name,
                        *ty,
                        true,
                        false,
                        "",
                        Value::Null,
                    );
                }
            }
            RelRef::System(v) => {
                for (i, (name, ty)) in v.columns.iter().enumerate() {
                    attribute(
                        &mut rows,
                        v.oid,
                        (i + 1) as i16,
                        name,
                        *ty,
                        false,
                        false,
                        "",
                        Value::Null,
                    );
                }
            }
        }
    }
    rows.out
}

/// pg_attrdef: one row per column with a DEFAULT. Its OID is unique
/// within pg_attrdef (table OID × 1600 + column number).
pub fn pg_attrdef(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_ATTRDEF);
    for t in s.tables_keyed(ec.relation_key()) {
        for (i, c) in t.columns.iter().enumerate() {
            if let (Some(d), None) = (&c.default, c.identity) {
                rows.push(vec![
                    ("oid", oid(attrdef_oid(t.oid, i + 1))),
                    ("adrelid", oid(t.oid)),
                    ("adnum", Value::Int2((i + 1) as i16)),
                    ("adbin", text(d)),
                ]);
            }
        }
    }
    rows.out
}

/// See [`pg_attrdef`].
pub fn attrdef_oid(table: u32, attnum: usize) -> u32 {
    table.wrapping_mul(1600).wrapping_add(attnum as u32)
}

/// pg_type: the built-in types, then each enum type and its array type.
pub fn pg_type(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_TYPE);
    for t in types::TYPES {
        type_row_values(&mut rows, t, PG_CATALOG, false);
    }
    for e in pgtypes::enumtype::all() {
        // The owner's entry (`engine::acl`), the enum's row only.
        let owner = ec
            .engine()
            .catalog()
            .privileges(&engine::comment::CommentKey::object(
                engine::comment::PG_TYPE,
                e.oid,
            ))
            .and_then(|d| d.entry.as_ref().map(|p| p.owner))
            .filter(|o| *o != 0)
            .unwrap_or(BOOTSTRAP_SUPERUSER);
        for t in types::enum_rows(&e) {
            let mark = rows.out.len();
            type_row_values(&mut rows, &t, PUBLIC, true);
            if let Some(row) = rows.out.get_mut(mark) {
                set_typowner(row, owner);
            }
        }
    }
    rows.out
}

/// Sets a pg_type row's typowner.
fn set_typowner(row: &mut [Value], owner: u32) {
    if let Some(i) = defs::PG_TYPE.iter().position(|(n, _)| *n == "typowner") {
        if let Some(v) = row.get_mut(i) {
            *v = oid(owner);
        }
    }
}

/// One pg_type row; `array_support`: fill typsubscript / typanalyze as
/// PostgreSQL does for an array type (the enum rows; the built-in rows
/// leave them at the column defaults).
fn type_row_values(rows: &mut Rows, t: &types::PgTypeRow, namespace: u32, array_support: bool) {
    let mut v = vec![
        ("oid", oid(t.oid)),
        ("typname", text(t.name)),
        ("typnamespace", oid(namespace)),
        ("typowner", oid(BOOTSTRAP_SUPERUSER)),
        ("typlen", Value::Int2(t.len)),
        ("typbyval", bool(t.byval)),
        ("typtype", ch(&(t.kind as char).to_string())),
        ("typcategory", ch(&(t.category as char).to_string())),
        ("typispreferred", bool(t.preferred)),
        ("typisdefined", bool(true)),
        ("typdelim", ch(",")),
        ("typelem", oid(t.elem)),
        ("typarray", oid(t.array)),
        ("typinput", oid(t.io[0])),
        ("typoutput", oid(t.io[1])),
        ("typreceive", oid(t.io[2])),
        ("typsend", oid(t.io[3])),
        ("typalign", ch(&(t.align as char).to_string())),
        ("typstorage", ch(&(t.storage as char).to_string())),
        ("typtypmod", Value::Int4(-1)),
        ("typcollation", oid(t.collation)),
    ];
    if array_support {
        let array = t.elem != 0;
        v.push(("typsubscript", oid(if array { 6179 } else { 0 })));
        v.push(("typanalyze", oid(if array { 3816 } else { 0 })));
    }
    rows.push(v);
}

/// pg_enum: every label of every enum type (from the type cache the
/// catalog publishes to, `pgtypes::enumtype`).
pub fn pg_enum(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_ENUM);
    for e in pgtypes::enumtype::all() {
        for l in &e.labels {
            rows.push(vec![
                ("oid", oid(l.oid)),
                ("enumtypid", oid(e.oid)),
                ("enumsortorder", Value::Float8(l.sort)),
                ("enumlabel", text(&l.label)),
            ]);
        }
    }
    rows.out
}

/// pg_proc: the built-in functions hotpair implements (`proc.rs`).
pub fn pg_proc(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = proc::pg_proc_rows().to_vec();
    let cat = ec.pg_catalog();
    let acl_col = super::defs::PG_PROC
        .iter()
        .position(|(n, _)| *n == "proacl");
    for f in &cat.functions {
        let mut row = proc::user_proc_row(&f.spec);
        if let Some(slot) = acl_col.and_then(|i| row.get_mut(i)) {
            *slot = cat.acl_of(engine::comment::PG_PROC, f.spec.oid, 0);
        }
        rows.push(row);
    }
    rows
}

/// pg_aggregate: the aggregates of pg_proc.
pub fn pg_aggregate(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    proc::pg_aggregate_rows()
}

/// pg_language.
pub fn pg_language(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    proc::pg_language_rows()
}

/// pg_operator: the built-in operators hotpair implements (`operator.rs`).
pub fn pg_operator(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    operator::pg_operator_rows(ec.relation_key())
}

/// pg_opclass: the operator classes of hotpair's index access methods.
pub fn pg_opclass(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    operator::pg_opclass_rows(ec.relation_key())
}

/// pg_opfamily: the families of those operator classes.
pub fn pg_opfamily(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    operator::pg_opfamily_rows(ec.relation_key())
}

/// pg_amop: the operators of those families.
pub fn pg_amop(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    operator::pg_amop_rows(ec.relation_key())
}

/// pg_amproc: the support functions of those families.
pub fn pg_amproc(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    operator::pg_amproc_rows(ec.relation_key())
}

/// pg_index.
pub fn pg_index(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_INDEX);
    for r in s.relations_keyed(ec.relation_key()) {
        let RelRef::Index(t, ix) = r else { continue };
        let n = ix.spec.columns.len() as i16;
        // Each key's type: its column's, or its expression's (bound once
        // per index version).
        let exprs = if ix.spec.columns.contains(&engine::catalog::EXPR_KEY) {
            ix.exprs(t).ok()
        } else {
            None
        };
        let key_types: Vec<Option<T>> = ix
            .spec
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                t.columns
                    .get(*c)
                    .map(|c| c.ty)
                    .or_else(|| exprs.as_ref().and_then(|e| e.key_types().get(i).copied()))
            })
            .collect();
        rows.push(vec![
            ("indexrelid", oid(ix.spec.oid)),
            ("indrelid", oid(t.oid)),
            ("indnatts", Value::Int2(n)),
            ("indnkeyatts", Value::Int2(n)),
            ("indisunique", bool(ix.spec.unique)),
            ("indisprimary", bool(ix.spec.primary)),
            ("indimmediate", bool(true)),
            ("indisvalid", bool(true)),
            ("indisready", bool(true)),
            ("indislive", bool(true)),
            (
                "indkey",
                int2_vec(ix.spec.columns.iter().map(|c| {
                    if *c == engine::catalog::EXPR_KEY {
                        0
                    } else {
                        (*c + 1) as i16
                    }
                })),
            ),
            (
                "indcollation",
                oid_vec(key_types.iter().map(|t| t.map(collation_of).unwrap_or(0))),
            ),
            (
                "indclass",
                oid_vec(key_types.iter().map(|t| {
                    t.map(|t| operator::default_opclass(BTREE_AM, t.oid()))
                        .unwrap_or(0)
                })),
            ),
            (
                "indoption",
                int2_vec(
                    (0..ix.spec.columns.len())
                        .map(|i| ix.spec.options.get(i).copied().unwrap_or(0)),
                ),
            ),
            (
                "indexprs",
                if ix.spec.exprs.is_empty() {
                    Value::Null
                } else {
                    text(&functions::index_node_tree_text(false, ix.spec.oid))
                },
            ),
            (
                "indpred",
                if ix.spec.predicate.is_none() {
                    Value::Null
                } else {
                    text(&functions::index_node_tree_text(true, ix.spec.oid))
                },
            ),
        ]);
    }
    rows.out
}

/// pg_constraint: primary keys, unique, CHECK and foreign key constraints.
pub fn pg_constraint(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_CONSTRAINT);
    let attnums = |cols: &[usize]| {
        array_value(
            ArrayElem::Int2,
            cols.iter().map(|k| Value::Int2((*k + 1) as i16)).collect(),
        )
    };
    for c in s.constraints_keyed(ec.relation_key()) {
        let contype = c.spec.kind.contype().to_string();
        let f = c.spec.foreign.as_ref();
        let (upd, del, matchtype) = match f {
            Some(f) => (
                f.on_update.letter().to_string(),
                f.on_delete.letter().to_string(),
                if c.spec.match_full { "f" } else { "s" }.to_string(),
            ),
            None => (" ".into(), " ".into(), " ".into()),
        };
        rows.push(vec![
            ("oid", oid(c.oid)),
            ("conname", text(&c.spec.name)),
            ("connamespace", oid(c.table.namespace)),
            ("contype", ch(&contype)),
            ("condeferrable", bool(c.spec.deferrable)),
            ("condeferred", bool(c.spec.initially_deferred)),
            ("convalidated", bool(!c.spec.not_valid)),
            ("conrelid", oid(c.table.oid)),
            ("conindid", oid(c.index)),
            ("confrelid", oid(f.map(|f| f.table).unwrap_or(0))),
            ("confupdtype", ch(&upd)),
            ("confdeltype", ch(&del)),
            ("confmatchtype", ch(&matchtype)),
            (
                "confkey",
                f.map(|f| attnums(&f.columns)).unwrap_or(Value::Null),
            ),
            ("conislocal", bool(true)),
            (
                "connoinherit",
                bool(c.spec.kind != engine::catalog::ConstraintKind::Check),
            ),
            ("conkey", attnums(&c.spec.columns)),
            (
                "conbin",
                c.spec.check.as_deref().map(text).unwrap_or(Value::Null),
            ),
        ]);
    }
    rows.out
}

/// pg_sequence.
pub fn pg_sequence(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_SEQUENCE);
    for r in s.relations() {
        let RelRef::Sequence(q) = r else { continue };
        let q = &q.spec;
        rows.push(vec![
            ("seqrelid", oid(q.oid)),
            ("seqtypid", oid(q.ty.oid())),
            ("seqstart", Value::Int8(q.start)),
            ("seqincrement", Value::Int8(q.increment)),
            ("seqmax", Value::Int8(q.max)),
            ("seqmin", Value::Int8(q.min)),
            ("seqcache", Value::Int8(q.cache)),
            ("seqcycle", bool(q.cycle)),
        ]);
    }
    rows.out
}

/// pg_sequences.
pub fn pg_sequences(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_SEQUENCES);
    for r in s.relations() {
        let RelRef::Sequence(q) = r else { continue };
        let called = q.state.is_called.load(std::sync::atomic::Ordering::Acquire);
        let last = q
            .state
            .last_value
            .load(std::sync::atomic::Ordering::Acquire);
        let q = &q.spec;
        rows.push(vec![
            (
                "schemaname",
                text(s.namespace_name(q.namespace).unwrap_or("")),
            ),
            ("sequencename", text(&q.name)),
            (
                "sequenceowner",
                text(&s.role_name(BOOTSTRAP_SUPERUSER).unwrap_or_default()),
            ),
            ("data_type", oid(q.ty.oid())),
            ("start_value", Value::Int8(q.start)),
            ("min_value", Value::Int8(q.min)),
            ("max_value", Value::Int8(q.max)),
            ("increment_by", Value::Int8(q.increment)),
            ("cycle", bool(q.cycle)),
            ("cache_size", Value::Int8(q.cache)),
            (
                "last_value",
                if called {
                    Value::Int8(last)
                } else {
                    Value::Null
                },
            ),
        ]);
    }
    rows.out
}

/// pg_rewrite: each view's `_RETURN` rule (its OID is the view's: OIDs
/// are unique per catalog). The rule's query trees are not kept.
pub fn pg_rewrite(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_REWRITE);
    for r in s.relations() {
        let RelRef::View(v) = r else { continue };
        rows.push(vec![
            ("oid", oid(v.oid)),
            ("rulename", text("_RETURN")),
            ("ev_class", oid(v.oid)),
            ("ev_type", ch("1")),
            ("ev_enabled", ch("O")),
            ("is_instead", bool(true)),
            ("ev_qual", text("<>")),
        ]);
    }
    rows.out
}

/// pg_depend: what psql and DROP read — a serial column's sequence is
/// owned by (auto-dependent on) its column; a view's `_RETURN` rule is
/// part of (internal to) the view and depends (normal) on each relation
/// the view reads.
pub fn pg_depend(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_DEPEND);
    for r in s.relations() {
        let RelRef::View(v) = r else { continue };
        let dep = |refobj: u32, deptype: &str| {
            vec![
                ("classid", oid(2618)),
                ("objid", oid(v.oid)),
                ("objsubid", Value::Int4(0)),
                ("refclassid", oid(1259)),
                ("refobjid", oid(refobj)),
                ("refobjsubid", Value::Int4(0)),
                ("deptype", ch(deptype)),
            ]
        };
        rows.push(dep(v.oid, "i"));
        // The rule's query names its own view too (as in PostgreSQL).
        rows.push(dep(v.oid, "n"));
        for &d in &v.depends {
            rows.push(dep(d, "n"));
        }
    }
    for r in s.relations() {
        let RelRef::Sequence(q) = r else { continue };
        let Some((t, attnum)) = s.sequence_owner(&q.spec) else {
            continue;
        };
        // An identity column's sequence is internal to it ('i'), a serial's
        // auto ('a').
        let deptype = if t.columns[attnum].identity.is_some() {
            "i"
        } else {
            "a"
        };
        rows.push(vec![
            ("classid", oid(1259)),
            ("objid", oid(q.spec.oid)),
            ("objsubid", Value::Int4(0)),
            ("refclassid", oid(1259)),
            ("refobjid", oid(t.oid)),
            ("refobjsubid", Value::Int4((attnum + 1) as i32)),
            ("deptype", ch(deptype)),
        ]);
    }
    // A foreign key depends on its own columns (auto) and on the
    // referenced columns and unique index (normal): what DROP … CASCADE
    // follows.
    for c in s.constraints() {
        let (Some(f), Some(r)) = (c.spec.foreign.as_ref(), c.referenced) else {
            continue;
        };
        let mut dep = |refclass: u32, refobj: u32, sub: i32, deptype: &str| {
            rows.push(vec![
                ("classid", oid(2606)),
                ("objid", oid(c.oid)),
                ("objsubid", Value::Int4(0)),
                ("refclassid", oid(refclass)),
                ("refobjid", oid(refobj)),
                ("refobjsubid", Value::Int4(sub)),
                ("deptype", ch(deptype)),
            ]);
        };
        for col in &c.spec.columns {
            dep(1259, c.table.oid, *col as i32 + 1, "a");
        }
        if c.index != 0 {
            dep(1259, c.index, 0, "n");
        }
        for col in &f.columns {
            dep(1259, r.oid, *col as i32 + 1, "n");
        }
    }
    rows.out
}

/// pg_description: COMMENT ON tables and columns, and the built-in
/// functions' descriptions (PostgreSQL's).
pub fn pg_description(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_DESCRIPTION);
    let builtin = proc::descriptions()
        .map(|(o, d)| (o, 1255, d))
        .chain(operator::descriptions().map(|(o, d)| (o, 2617, d)));
    for (o, class, d) in builtin {
        rows.push(vec![
            ("objoid", oid(o)),
            ("classoid", oid(class)),
            ("objsubid", Value::Int4(0)),
            ("description", text(d)),
        ]);
    }
    for d in &s.descriptions {
        rows.push(vec![
            ("objoid", oid(d.objoid)),
            ("classoid", oid(d.classoid)),
            ("objsubid", Value::Int4(d.subid)),
            ("description", Value::text(&d.text)),
        ]);
    }
    rows.out
}

/// pg_shdescription: comments on roles and the database.
pub fn pg_shdescription(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_SHDESCRIPTION);
    for d in &s.shdescriptions {
        rows.push(vec![
            ("objoid", oid(d.objoid)),
            ("classoid", oid(d.classoid)),
            ("description", Value::text(&d.text)),
        ]);
    }
    rows.out
}

/// pg_am.
pub fn pg_am(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_AM);
    for (o, name, kind) in [(HEAP_AM, "heap", "t"), (BTREE_AM, "btree", "i")] {
        rows.push(vec![
            ("oid", oid(o)),
            ("amname", text(name)),
            ("amtype", ch(kind)),
        ]);
    }
    rows.out
}

/// pg_collation: default, C and POSIX.
pub fn pg_collation(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_COLLATION);
    for (o, name, provider, c) in [
        (DEFAULT_COLLATION, "default", "d", None),
        (950, "C", "c", Some("C")),
        (951, "POSIX", "c", Some("POSIX")),
    ] {
        rows.push(vec![
            ("oid", oid(o)),
            ("collname", text(name)),
            ("collnamespace", oid(PG_CATALOG)),
            ("collowner", oid(BOOTSTRAP_SUPERUSER)),
            ("collprovider", ch(provider)),
            ("collisdeterministic", bool(true)),
            ("collencoding", Value::Int4(-1)),
            ("collcollate", c.map(text).unwrap_or(Value::Null)),
            ("collctype", c.map(text).unwrap_or(Value::Null)),
        ]);
    }
    rows.out
}

/// pg_database: the one database a node serves.
pub fn pg_database(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_DATABASE);
    let name = ec.database();
    rows.push(vec![
        ("oid", oid(DATABASE_OID)),
        ("datname", text(&name)),
        ("datdba", oid(BOOTSTRAP_SUPERUSER)),
        (
            "datacl",
            snap(ec).acl_of(engine::comment::PG_DATABASE, DATABASE_OID, 0),
        ),
        ("encoding", Value::Int4(6)),
        ("datlocprovider", ch("c")),
        ("datallowconn", bool(true)),
        (
            "datconnlimit",
            Value::Int4(ec.engine().catalog().database_connlimit()),
        ),
        ("datfrozenxid", Value::Xid(0)),
        ("datminmxid", Value::Xid(1)),
        ("dattablespace", oid(1663)),
        ("datcollate", text("C")),
        ("datctype", text("C")),
    ]);
    rows.out
}

/// pg_default_acl: ALTER DEFAULT PRIVILEGES' entries (OIDs made up from
/// the entry's place: the entries are not rows of their own).
pub fn pg_default_acl(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_DEFAULT_ACL);
    for (i, (role, ns, t, acl)) in s.default_acls.iter().enumerate() {
        rows.push(vec![
            ("oid", oid(engine::acl::PG_DEFAULT_ACL * 100 + i as u32)),
            ("defaclrole", oid(*role)),
            ("defaclnamespace", oid(*ns)),
            ("defaclobjtype", ch(&t.to_string())),
            ("defaclacl", s.acl_value(acl)),
        ]);
    }
    rows.out
}

/// pg_tablespace.
pub fn pg_tablespace(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_TABLESPACE);
    for (o, name) in [(1663, "pg_default"), (1664, "pg_global")] {
        rows.push(vec![
            ("oid", oid(o)),
            ("spcname", text(name)),
            ("spcowner", oid(BOOTSTRAP_SUPERUSER)),
        ]);
    }
    rows.out
}

/// pg_tables: every table with its schema.
pub fn pg_tables(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_TABLES);
    for r in s.relations() {
        if r.relkind() != "r" {
            continue;
        }
        let hasindex = matches!(r, RelRef::Table(t) if !t.indexes.is_empty());
        rows.push(vec![
            (
                "schemaname",
                text(s.namespace_name(r.namespace()).unwrap_or("")),
            ),
            ("tablename", text(r.name())),
            (
                "tableowner",
                text(&s.role_name(BOOTSTRAP_SUPERUSER).unwrap_or_default()),
            ),
            ("hasindexes", bool(hasindex)),
        ]);
    }
    rows.out
}

/// pg_indexes.
pub fn pg_indexes(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_INDEXES);
    for r in s.relations() {
        let RelRef::Index(t, ix) = r else { continue };
        rows.push(vec![
            (
                "schemaname",
                text(s.namespace_name(t.namespace).unwrap_or("")),
            ),
            ("tablename", text(&t.name)),
            ("indexname", text(&ix.spec.name)),
            ("indexdef", text(&functions::index_def(&s, t, ix, false))),
        ]);
    }
    rows.out
}

/// pg_views: user views with pg_get_viewdef's definition, and the system
/// views (their definitions are built in, not SQL: NULL).
pub fn pg_views(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_VIEWS);
    for r in s.relations() {
        if r.relkind() != "v" {
            continue;
        }
        rows.push(vec![
            (
                "schemaname",
                text(s.namespace_name(r.namespace()).unwrap_or("")),
            ),
            ("viewname", text(r.name())),
            (
                "viewowner",
                text(&s.role_name(BOOTSTRAP_SUPERUSER).unwrap_or_default()),
            ),
            (
                "definition",
                match r {
                    RelRef::View(v) => text(&super::ruleutils::view_definition(&s, v, false)),
                    _ => Value::Null,
                },
            ),
        ]);
    }
    rows.out
}

/// pg_user: the roles that can log in, as pg_roles shows them.
pub fn pg_user(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_USER);
    for r in s.roles.iter().filter(|r| r.login) {
        rows.push(vec![
            ("usename", text(&r.name)),
            ("usesysid", oid(r.oid)),
            ("usecreatedb", bool(r.createdb)),
            ("usesuper", bool(r.superuser)),
            ("userepl", bool(r.replication)),
            ("usebypassrls", bool(r.bypassrls)),
            ("passwd", text("********")),
        ]);
    }
    rows.out
}

/// pg_settings: the session's settings.
pub fn pg_settings(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_SETTINGS);
    let all = ec.current_user().is_none_or(|u| {
        crate::privileges::reads_all_settings(&crate::privileges::AclUser::of(ec.engine(), &u))
    });
    let server = ec.engine().config();
    for (name, value, doc) in ec.settings_all() {
        if !all && crate::privileges::superuser_only_setting(&name) {
            continue;
        }
        let def = pgtypes::config::find_setting(&name);
        let context = match def.map(|d| d.context) {
            Some(pgtypes::config::Context::Postmaster) => "postmaster",
            Some(pgtypes::config::Context::Sighup) => "sighup",
            Some(pgtypes::config::Context::Internal) => "internal",
            _ => "user",
        };
        let reset = def.and_then(|d| server.get(d.name)).unwrap_or(&value);
        let source = match def {
            Some(_) if value != reset => "session",
            Some(d) if reset != d.default => "configuration file",
            _ => "default",
        };
        rows.push(vec![
            ("name", text(&name)),
            ("setting", text(&value)),
            ("unit", def.map_or(Value::Null, setting_unit)),
            ("short_desc", text(&doc)),
            ("context", text(context)),
            ("vartype", text(def.map_or("string", setting_vartype))),
            ("source", text(source)),
            ("boot_val", def.map_or(Value::Null, |d| text(d.default))),
            ("reset_val", text(reset)),
            ("pending_restart", bool(server.pending_restart(&name))),
        ]);
    }
    rows.out
}

/// pg_settings.unit: shown for the settings in minutes (the others keep
/// their value's own unit in `setting`).
fn setting_unit(d: &pgtypes::config::SettingDef) -> Value {
    match d.unit {
        pgtypes::config::Unit::Minutes => text("min"),
        _ => Value::Null,
    }
}

/// pg_settings.vartype of a declared setting.
fn setting_vartype(d: &pgtypes::config::SettingDef) -> &'static str {
    use pgtypes::config::Unit;
    if matches!(d.default, "on" | "off") && d.name != "synchronous_commit" {
        "bool"
    } else if d.name == "hash_mem_multiplier" {
        "real"
    } else if d.unit != Unit::None || d.default.parse::<i64>().is_ok() {
        "integer"
    } else {
        "string"
    }
}

/// pg_stat_user_tables: the tables, with ANALYZE's row estimate as
/// `n_live_tup` (scan and tuple counters are not kept: 0).
pub fn pg_stat_user_tables(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_STAT_USER_TABLES);
    for t in &s.tables {
        let live = ec
            .engine()
            .catalog()
            .statistics(t.oid)
            .map(|st| st.table.reltuples.max(0.0) as i64)
            .unwrap_or(0);
        rows.push(vec![
            ("relid", oid(t.oid)),
            (
                "schemaname",
                text(s.namespace_name(t.namespace).unwrap_or("")),
            ),
            ("relname", text(&t.name)),
            ("n_live_tup", Value::Int8(live)),
        ]);
    }
    rows.out
}

/// pg_statio_user_tables: the tables (block counters are not kept: 0).
pub fn pg_statio_user_tables(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_STATIO_USER_TABLES);
    for t in &s.tables {
        rows.push(vec![
            ("relid", oid(t.oid)),
            (
                "schemaname",
                text(s.namespace_name(t.namespace).unwrap_or("")),
            ),
            ("relname", text(&t.name)),
        ]);
    }
    rows.out
}

/// pg_trigger: the user triggers of every table and view
/// (`crate::trigger`).
pub fn pg_trigger(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_TRIGGER);
    for r in s.relations() {
        let Some(t) = r.trigger_rel() else { continue };
        for tg in t.triggers {
            let opt = |o: &Option<String>| o.as_deref().map_or(Value::Null, Value::text);
            let mut args = String::new();
            for a in &tg.args {
                args.push_str(a);
                args.push_str("\\000");
            }
            rows.push(vec![
                ("oid", oid(tg.oid)),
                ("tgrelid", oid(t.oid)),
                ("tgname", Value::text(&tg.name)),
                ("tgfoid", oid(tg.func)),
                ("tgtype", Value::Int2(tg.tgtype as i16)),
                ("tgenabled", Value::text(&(tg.enabled as char).to_string())),
                ("tgconstraint", oid(tg.constraint.map_or(0, |c| c.oid))),
                (
                    "tgdeferrable",
                    Value::Bool(tg.constraint.is_some_and(|c| c.deferrable)),
                ),
                (
                    "tginitdeferred",
                    Value::Bool(tg.constraint.is_some_and(|c| c.initially_deferred)),
                ),
                ("tgnargs", Value::Int2(tg.args.len() as i16)),
                (
                    "tgattr",
                    int2_vec(tg.columns.iter().map(|c| (*c + 1) as i16)),
                ),
                ("tgargs", Value::text(&args)),
                ("tgqual", opt(&tg.when)),
                ("tgoldtable", opt(&tg.old_table)),
                ("tgnewtable", opt(&tg.new_table)),
            ]);
        }
    }
    rows.out
}

/// A catalog hotpair has no objects for (pg_policy, …).
pub fn empty(_ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    Vec::new()
}

/// pg_stat_activity: one row per client session of this node
/// (`engine::backend_status`), in the order they connected.
/// pg_stat_ssl: every client session; a TLS one with its version,
/// cipher, key bits and client certificate (subject, serial, issuer).
pub fn pg_stat_ssl(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_STAT_SSL);
    for b in ec.engine().backend_status().snapshot() {
        let Some(ssl) = &b.ssl else {
            rows.push(vec![
                ("pid", Value::Int4(b.pid)),
                ("ssl", Value::Bool(false)),
                ("bits", Value::Null),
            ]);
            continue;
        };
        let opt = |v: &Option<String>| v.as_deref().map_or(Value::Null, text);
        let serial = ssl
            .client_serial
            .as_deref()
            .and_then(|s| pgtypes::numeric::Numeric::parse(s).and_then(|r| r.ok()))
            .map_or(Value::Null, Value::Numeric);
        rows.push(vec![
            ("pid", Value::Int4(b.pid)),
            ("ssl", Value::Bool(true)),
            ("version", text(&ssl.version)),
            ("cipher", text(&ssl.cipher)),
            ("bits", Value::Int4(ssl.bits)),
            ("client_dn", opt(&ssl.client_dn)),
            ("client_serial", serial),
            ("issuer_dn", opt(&ssl.issuer_dn)),
        ]);
    }
    rows.out
}

/// pg_stat_gssapi: every client session, none authenticated or encrypted
/// by GSSAPI.
pub fn pg_stat_gssapi(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_STAT_GSSAPI);
    for b in ec.engine().backend_status().snapshot() {
        rows.push(vec![
            ("pid", Value::Int4(b.pid)),
            ("gss_authenticated", Value::Bool(false)),
            ("encrypted", Value::Bool(false)),
        ]);
    }
    rows.out
}

pub fn pg_stat_activity(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let s = snap(ec);
    let mut rows = Rows::new(defs::PG_STAT_ACTIVITY);
    let opt_ts = |t: Option<i64>| t.map_or(Value::Null, Value::TimestampTz);
    let locks = ec.engine().procarray().xact_locks();
    // HAS_PGSTAT_PERMISSIONS: the session's role's privileges, or
    // pg_read_all_stats (pg_monitor includes it); superusers see all.
    let viewer = ec
        .current_user()
        .map(|u| crate::privileges::AclUser::of(ec.engine(), &u));
    let sees_all = viewer.as_ref().is_none_or(|v| {
        v.superuser
            || v.roles.contains(&PG_READ_ALL_STATS)
            || v.roles.contains(&engine::acl::PG_MONITOR)
    });
    for b in ec.engine().backend_status().snapshot() {
        let hidden = !sees_all
            && viewer
                .as_ref()
                .is_some_and(|v| s.role_oid(&b.user).is_none_or(|r| !v.has_privs_of(r)));
        let idle = b.state != engine::backend_status::BackendState::Active;
        // The first lock a process holds is its top-level xid.
        let xid = locks
            .iter()
            .find(|l| l.granted && l.pid == Some(b.pid))
            .map_or(Value::Null, |l| Value::Xid(l.xid.0 as u32));
        let waiting = locks.iter().any(|l| !l.granted && l.pid == Some(b.pid));
        let usesysid = s.role_oid(&b.user).map_or(Value::Null, oid);
        rows.push(vec![
            ("datid", oid(DATABASE_OID)),
            ("datname", text(&b.database)),
            ("pid", Value::Int4(b.pid)),
            ("usesysid", usesysid),
            ("usename", text(&b.user)),
            ("application_name", text(&b.application_name)),
            (
                "client_addr",
                b.client.map_or(Value::Null, |a| {
                    Value::Inet(pgtypes::inet::Inet::from_ip(a.ip()))
                }),
            ),
            (
                "client_port",
                match b.client {
                    Some(a) => Value::Int4(i32::from(a.port())),
                    // PostgreSQL's value for a Unix-socket client.
                    None if b.unix_socket => Value::Int4(-1),
                    None => Value::Null,
                },
            ),
            ("backend_start", Value::TimestampTz(b.backend_start)),
            ("xact_start", opt_ts(b.xact_start)),
            ("query_start", opt_ts(b.query_start)),
            ("state_change", Value::TimestampTz(b.state_change)),
            (
                "wait_event_type",
                if let Some((ty, _)) = b.wait_event {
                    text(ty)
                } else if waiting {
                    text("Lock")
                } else if idle {
                    text("Client")
                } else {
                    Value::Null
                },
            ),
            (
                "wait_event",
                if let Some((_, ev)) = b.wait_event {
                    text(ev)
                } else if waiting {
                    text("transactionid")
                } else if idle {
                    text("ClientRead")
                } else {
                    Value::Null
                },
            ),
            ("backend_xid", xid),
            ("state", text(b.state.as_str())),
            ("query", text((*b.query).as_ref())),
            ("backend_type", text("client backend")),
        ]);
        if hidden {
            if let Some(row) = rows.out.last_mut() {
                hide_activity(row);
            }
        }
    }
    rows.out
}

/// pg_read_all_stats's role for [`pg_stat_activity`].
const PG_READ_ALL_STATS: u32 = 3375;

/// A pg_stat_activity row of a session the viewer may not see: who and
/// which database stay, the rest is NULL and the query
/// `<insufficient privilege>` (PostgreSQL's pg_stat_get_activity).
fn hide_activity(row: &mut [Value]) {
    const KEPT: &[&str] = &[
        "datid",
        "datname",
        "pid",
        "usesysid",
        "usename",
        "application_name",
        "backend_xid",
        "backend_xmin",
    ];
    for (i, (name, _)) in defs::PG_STAT_ACTIVITY.iter().enumerate() {
        let Some(v) = row.get_mut(i) else {
            continue;
        };
        if *name == "query" {
            *v = text("<insufficient privilege>");
        } else if !KEPT.contains(name) {
            *v = Value::Null;
        }
    }
}

/// pg_locks: the transaction locks — each running transaction holds an
/// ExclusiveLock on its xid (and its subtransactions'), a session waiting
/// for a row's writer to finish waits for a ShareLock on the writer's xid
/// (`txn::lmgr`). Relation locks and virtual transaction ids are not
/// listed: hotpair's relation locks do not record their holders.
pub fn pg_locks(ec: &dyn ViewContext) -> Vec<Vec<Value>> {
    let mut rows = Rows::new(defs::PG_LOCKS);
    for l in ec.engine().procarray().xact_locks() {
        rows.push(vec![
            ("locktype", text("transactionid")),
            ("transactionid", Value::Xid(l.xid.0 as u32)),
            ("pid", l.pid.map_or(Value::Null, Value::Int4)),
            (
                "mode",
                text(if l.granted {
                    "ExclusiveLock"
                } else {
                    "ShareLock"
                }),
            ),
            ("granted", bool(l.granted)),
            ("fastpath", bool(false)),
        ]);
    }
    // SIRead locks of serializable transactions (`txn::predicate`). An
    // index-key lock shows as a page lock of the index whose page number
    // is a hash of the key (hotpair's indexes have no pages).
    let catalog = ec.engine().catalog();
    for (t, pid, _) in ec.engine().procarray().predicate().locks_with_pids() {
        use txn::predicate::Target;
        let heap_oid = |rel| {
            catalog
                .by_rel(rel)
                .map_or(Value::Null, |d| Value::Oid(d.oid))
        };
        let (relation, page, tuple) = match t {
            Target::Relation(r) => (heap_oid(r), Value::Null, Value::Null),
            Target::Page(r, b) => (heap_oid(r), Value::Int4(b as i32), Value::Null),
            Target::Tuple(r, b, o) => (heap_oid(r), Value::Int4(b as i32), Value::Int2(o as i16)),
            Target::Index(i) => (Value::Oid(i), Value::Null, Value::Null),
            Target::IndexKey(i, h) => (
                Value::Oid(i),
                Value::Int4((h & 0x7fff_ffff) as i32),
                Value::Null,
            ),
        };
        rows.push(vec![
            ("locktype", text(t.locktype())),
            ("relation", relation),
            ("page", page),
            ("tuple", tuple),
            (
                "pid",
                if pid == 0 {
                    Value::Null
                } else {
                    Value::Int4(pid)
                },
            ),
            ("mode", text("SIReadLock")),
            ("granted", bool(true)),
            ("fastpath", bool(false)),
        ]);
    }
    rows.out
}
