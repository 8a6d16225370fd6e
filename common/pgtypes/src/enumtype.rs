//! Enum types (PostgreSQL's `pg_enum` and the enum part of its typcache):
//! the process-wide cache the catalog fills and every enum value's text
//! I/O, comparison and key encoding read.
//!
//! An enum value is a [`crate::value::Value::Enum`] holding its label's
//! `pg_enum` OID, as PostgreSQL stores it (4 bytes on disk, so a
//! `RENAME VALUE` rewrites nothing). Its column type is
//! [`crate::sqltype::SqlType::Enum`] with the type's OID.
//!
//! ## Why a cache here
//!
//! Turning `'happy'` into a label OID and back, and ordering two labels,
//! needs the type's definition, and those conversions happen everywhere a
//! value is read or written (literal folding in the binder, parameters,
//! COPY, error details, array output, index keys). Rather than threading
//! the catalog through each of them, the catalog (`engine::catalog`)
//! publishes every enum type here whenever it changes — at start-up, when
//! a change is applied and when one is replayed — and the conversions read
//! it, as PostgreSQL's backends read their typcache. This is the one piece
//! of global state in `pgtypes`: it only ever holds what the catalog
//! published, keyed by OIDs, which are unique per node (several nodes in
//! one test process publish the same definition under the same OID).
//!
//! ## Sort order
//!
//! Each label has a sort position (`enumsortorder`). CREATE TYPE gives
//! 1, 2, 3 …; `ADD VALUE` at the end the last + 1; `BEFORE` / `AFTER` the
//! midpoint of its neighbours (a position never changes afterwards, so
//! index keys built from it stay valid). PostgreSQL's trick keeps most
//! comparisons free of any lookup: the catalog hands out *even* label
//! OIDs in sort order when it can (CREATE TYPE, ADD VALUE at the end) and
//! an odd one when it cannot (BEFORE / AFTER); two even OIDs compare as
//! numbers, anything else compares the positions found here.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{sqlstate, PgError, PgResult};
use crate::Oid;

/// One label of an enum type (a `pg_enum` row).
#[derive(Clone, Debug, PartialEq)]
pub struct EnumLabel {
    /// pg_enum.oid: what a stored value holds.
    pub oid: Oid,
    /// enumsortorder.
    pub sort: f64,
    /// enumlabel.
    pub label: String,
}

/// An enum type as the cache holds it.
#[derive(Debug)]
pub struct EnumType {
    /// pg_type.oid.
    pub oid: Oid,
    /// The OID of its array type (`_mood`).
    pub array_oid: Oid,
    /// typname (`mood`).
    pub name: &'static str,
    /// format_type of the array type (`mood[]`).
    pub array_name: &'static str,
    /// The array type's typname (`_mood`).
    pub array_typname: &'static str,
    /// The labels in sort order.
    pub labels: Vec<EnumLabel>,
}

impl EnumType {
    /// The label named `label`.
    pub fn label(&self, label: &str) -> Option<&EnumLabel> {
        self.labels.iter().find(|l| l.label == label)
    }
}

#[derive(Default)]
struct Cache {
    types: HashMap<Oid, Arc<EnumType>>,
    /// Array type OID → element type OID.
    arrays: HashMap<Oid, Oid>,
    /// Label OID → (type OID, sort position, label).
    labels: HashMap<Oid, (Oid, f64, Arc<str>)>,
    /// Interned names: a type's names are `&'static str` like the built-in
    /// types' (one small allocation per distinct name ever used).
    names: HashMap<String, &'static str>,
}

fn cache() -> &'static RwLock<Cache> {
    static CACHE: OnceLock<RwLock<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| RwLock::new(Cache::default()))
}

/// The cache for reading (a writer that panicked left it consistent:
/// every update is a few map operations).
fn read() -> RwLockReadGuard<'static, Cache> {
    cache().read().unwrap_or_else(|e| e.into_inner())
}

fn write() -> RwLockWriteGuard<'static, Cache> {
    cache().write().unwrap_or_else(|e| e.into_inner())
}

fn intern(c: &mut Cache, s: String) -> &'static str {
    if let Some(n) = c.names.get(&s) {
        return n;
    }
    let leaked: &'static str = Box::leak(s.clone().into_boxed_str());
    c.names.insert(s, leaked);
    leaked
}

/// Publishes (or replaces) the type `oid` named `name` with `labels`
/// (any order). Called by the catalog only.
pub fn publish(oid: Oid, array_oid: Oid, name: &str, labels: &[EnumLabel]) {
    let mut c = write();
    remove_locked(&mut c, oid);
    let mut labels = labels.to_vec();
    labels.sort_by(|a, b| a.sort.total_cmp(&b.sort));
    for l in &labels {
        c.labels
            .insert(l.oid, (oid, l.sort, Arc::from(l.label.as_str())));
    }
    let t = EnumType {
        oid,
        array_oid,
        name: intern(&mut c, name.to_string()),
        array_name: intern(&mut c, format!("{name}[]")),
        array_typname: intern(&mut c, format!("_{name}")),
        labels,
    };
    c.arrays.insert(array_oid, oid);
    c.types.insert(oid, Arc::new(t));
}

/// Forgets the type `oid` (DROP TYPE). Called by the catalog only.
pub fn unpublish(oid: Oid) {
    remove_locked(&mut write(), oid);
}

fn remove_locked(c: &mut Cache, oid: Oid) {
    if let Some(t) = c.types.remove(&oid) {
        c.arrays.remove(&t.array_oid);
        for l in &t.labels {
            c.labels.remove(&l.oid);
        }
    }
}

/// The type with OID `oid`.
pub fn get(oid: Oid) -> Option<Arc<EnumType>> {
    read().types.get(&oid).cloned()
}

/// The enum type named `name`. The one place a type name is looked up;
/// every enum type is in schema `public`.
pub fn by_name(name: &str) -> Option<Arc<EnumType>> {
    read().types.values().find(|t| t.name == name).cloned()
}

/// The element type of the enum array type `array_oid`.
pub fn elem_of_array(array_oid: Oid) -> Option<Oid> {
    read().arrays.get(&array_oid).copied()
}

/// Every enum type, by OID.
pub fn all() -> Vec<Arc<EnumType>> {
    let mut v: Vec<_> = read().types.values().cloned().collect();
    v.sort_by_key(|t| t.oid);
    v
}

/// typname of the type `oid` (`???` if it is gone).
pub fn type_name(oid: Oid) -> &'static str {
    get(oid).map(|t| t.name).unwrap_or("???")
}

/// The label text of the value `label`.
pub fn label_text(label: Oid) -> PgResult<Arc<str>> {
    match read().labels.get(&label) {
        Some((_, _, l)) => Ok(l.clone()),
        None => Err(invalid_internal(label)),
    }
}

/// The type of the value `label`.
pub fn type_of_label(label: Oid) -> Option<Oid> {
    read().labels.get(&label).map(|(t, _, _)| *t)
}

/// The sort position of the value `label`.
pub fn sort_of(label: Oid) -> PgResult<f64> {
    match read().labels.get(&label) {
        Some((_, s, _)) => Ok(*s),
        None => Err(invalid_internal(label)),
    }
}

/// PostgreSQL's enum_cmp: even OIDs compare as numbers; otherwise by
/// sort position (a label the cache no longer has sorts by OID).
pub fn cmp_labels(a: Oid, b: Oid) -> std::cmp::Ordering {
    if a == b || (a.is_multiple_of(2) && b.is_multiple_of(2)) {
        return a.cmp(&b);
    }
    match (sort_of(a), sort_of(b)) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(&b),
    }
}

/// enum_in: the value of `text` in type `ty`; 22P02 `invalid input value
/// for enum mood: "x"`.
pub fn input(ty: Oid, text: &str) -> PgResult<Oid> {
    let t = get(ty).ok_or_else(|| {
        PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("type with OID {ty} does not exist"),
        )
    })?;
    match t.label(text) {
        Some(l) => Ok(l.oid),
        None => Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input value for enum {}: \"{}\"", t.name, text),
        )),
    }
}

fn invalid_internal(label: Oid) -> PgError {
    PgError::new(
        sqlstate::INVALID_BINARY_REPRESENTATION,
        format!("invalid internal value for enum: {label}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_lookup_compare() {
        let l = |oid, sort, s: &str| EnumLabel {
            oid,
            sort,
            label: s.into(),
        };
        publish(
            900_000,
            900_001,
            "t_enumtype_mood",
            &[
                l(900_002, 1.0, "sad"),
                l(900_004, 2.0, "happy"),
                l(900_005, 1.5, "ok"),
            ],
        );
        assert_eq!(input(900_000, "ok").unwrap(), 900_005);
        assert_eq!(
            input(900_000, "x").unwrap_err().message,
            "invalid input value for enum t_enumtype_mood: \"x\""
        );
        assert_eq!(&*label_text(900_004).unwrap(), "happy");
        use std::cmp::Ordering::*;
        assert_eq!(cmp_labels(900_002, 900_004), Less);
        assert_eq!(cmp_labels(900_005, 900_004), Less);
        assert_eq!(cmp_labels(900_005, 900_002), Greater);
        assert_eq!(by_name("t_enumtype_mood").unwrap().labels[1].label, "ok");
        assert_eq!(elem_of_array(900_001), Some(900_000));
        unpublish(900_000);
        assert!(get(900_000).is_none());
        assert!(label_text(900_004).is_err());
    }
}
