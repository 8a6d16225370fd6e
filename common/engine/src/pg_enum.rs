//! Enum types (PostgreSQL's `catalog/pg_enum.c` and the enum rows of
//! `pg_type`): a named, ordered list of labels.
//!
//! The catalog keeps each enum type as an [`EnumTypeSpec`] in a fourth map
//! beside tables, sequences and views, keyed by name (every type is in
//! schema `public`). It changes through the catalog's change path
//! (`CreateType`, `AlterType` carrying the whole new definition for ADD
//! VALUE, RENAME VALUE and RENAME TO, `DropType`): WAL-logged, replayed by
//! a standby, persisted in the catalog file. After every such change — and
//! when the file is loaded — the catalog publishes the definition to
//! [`pgtypes::enumtype`], the cache every enum value's I/O and comparison
//! reads.
//!
//! ## Invariants
//!
//! 1. A label's OID never changes and is what rows store, so RENAME VALUE
//!    and RENAME TO rewrite no data.
//! 2. A label's sort position never changes either (index keys are built
//!    from it); ADD VALUE … BEFORE / AFTER takes the midpoint of its
//!    neighbours ([`EnumTypeSpec::position_between`]).
//! 3. Labels created in sort order get even OIDs, others odd ones
//!    (PostgreSQL's rule; see `pgtypes::enumtype`), so comparing two even
//!    labels needs no lookup.
//! 4. A type created by a transaction that may still roll back carries
//!    its xid (`creator`) until that transaction is known committed; a
//!    rollback drops it again, and start-up drops one whose creator never
//!    committed (`crate::indexing::resolve_uncommitted_ddl`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::{esc, unesc};
use pgtypes::enumtype::EnumLabel;
use pgtypes::{Oid, TransactionId};

/// An enum type's definition (its pg_type rows and pg_enum rows).
#[derive(Clone, Debug, PartialEq)]
pub struct EnumTypeSpec {
    /// pg_type.oid.
    pub oid: Oid,
    /// The OID of the array type (`_name`).
    pub array_oid: Oid,
    /// typname.
    pub name: String,
    /// The labels, in sort order.
    pub labels: Vec<EnumLabel>,
    /// The (sub)transaction that created the type (INVALID: committed).
    pub creator: TransactionId,
}

/// What [`EnumTypeSpec::position_between`] found no room for.
#[derive(Debug, PartialEq)]
pub struct NoRoom;

impl EnumTypeSpec {
    /// The label named `label`.
    pub fn label(&self, label: &str) -> Option<&EnumLabel> {
        self.labels.iter().find(|l| l.label == label)
    }

    /// The sort position for a new label at index `at` of [`Self::labels`]
    /// (0: first, `len`: last): one past the end, one before the start, or
    /// the midpoint of the neighbours.
    pub fn position_between(&self, at: usize) -> Result<f64, NoRoom> {
        let before = at.checked_sub(1).and_then(|i| self.labels.get(i));
        let after = self.labels.get(at);
        let p = match (before, after) {
            (None, None) => 1.0,
            (Some(b), None) => b.sort + 1.0,
            (None, Some(a)) => a.sort - 1.0,
            (Some(b), Some(a)) => {
                let m = (b.sort + a.sort) / 2.0;
                if m <= b.sort || m >= a.sort {
                    return Err(NoRoom);
                }
                m
            }
        };
        Ok(p)
    }

    /// Publishes this definition to the value cache.
    pub(crate) fn publish(&self) {
        pgtypes::enumtype::publish(self.oid, self.array_oid, &self.name, &self.labels);
    }
}

/// An enum type in the catalog: its definition and the creation mark,
/// which clears once the clog says the transaction committed.
#[derive(Debug)]
pub struct EnumTypeDef {
    /// The definition.
    pub spec: EnumTypeSpec,
    /// The creating xid until known committed (0 after).
    pub creator: AtomicU64,
}

impl EnumTypeDef {
    /// The in-catalog form of `spec`.
    pub fn new(spec: EnumTypeSpec) -> EnumTypeDef {
        EnumTypeDef {
            creator: AtomicU64::new(spec.creator.0),
            spec,
        }
    }

    /// The definition with its current mark (what the file and WAL keep).
    pub fn current_spec(&self) -> EnumTypeSpec {
        let mut s = self.spec.clone();
        s.creator = TransactionId(self.creator.load(Ordering::Acquire));
        s
    }
}

/// One line of the catalog file and WAL: `enum_type <oid> <array oid>
/// <name> <creator> <label>…`, each label `<oid>:<sort>:<text>` (name and
/// text escaped; the sort position in Rust's shortest round-trip form).
pub(crate) fn push_enum_type(out: &mut String, t: &EnumTypeSpec) {
    out.push_str(&format!(
        "enum_type {} {} {} {}",
        t.oid,
        t.array_oid,
        esc(&t.name),
        t.creator.0
    ));
    for l in &t.labels {
        out.push_str(&format!(" {}:{}:{}", l.oid, l.sort, esc(&l.label)));
    }
    out.push('\n');
}

/// Parses [`push_enum_type`]'s line; never panics.
pub(crate) fn parse_enum_type(line: &str) -> Result<EnumTypeSpec, String> {
    let g: Vec<&str> = line.split(' ').collect();
    let ["enum_type", oid, array_oid, name, creator, labels @ ..] = g.as_slice() else {
        return Err(format!("unrecognized line {line:?}"));
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad oid {s:?}"));
    let mut out = Vec::with_capacity(labels.len());
    for l in labels {
        let mut p = l.splitn(3, ':');
        let (Some(o), Some(s), Some(t)) = (p.next(), p.next(), p.next()) else {
            return Err(format!("bad enum label {l:?}"));
        };
        let sort: f64 = s.parse().map_err(|_| format!("bad sort order {s:?}"))?;
        if !sort.is_finite() {
            return Err(format!("bad sort order {s:?}"));
        }
        out.push(EnumLabel {
            oid: num(o)?,
            sort,
            label: unesc(t)?,
        });
    }
    out.sort_by(|a, b| a.sort.total_cmp(&b.sort));
    Ok(EnumTypeSpec {
        oid: num(oid)?,
        array_oid: num(array_oid)?,
        name: unesc(name)?,
        labels: out,
        creator: TransactionId(
            creator
                .parse::<u64>()
                .map_err(|_| format!("bad xid {creator:?}"))?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> EnumTypeSpec {
        let l = |oid, sort, s: &str| EnumLabel {
            oid,
            sort,
            label: s.into(),
        };
        EnumTypeSpec {
            oid: 16400,
            array_oid: 16401,
            name: "my mood".into(),
            labels: vec![
                l(16402, 1.0, "sad"),
                l(16405, 1.5, "o:k %"),
                l(16404, 2.0, ""),
            ],
            creator: TransactionId(7),
        }
    }

    #[test]
    fn enum_line_round_trips() {
        let s = spec();
        let mut out = String::new();
        push_enum_type(&mut out, &s);
        assert_eq!(parse_enum_type(out.trim_end()).unwrap(), s);
        assert!(parse_enum_type("enum_type 1 2").is_err());
        assert!(parse_enum_type("enum_type 1 2 x 0 5:NaN:a").is_err());
    }

    #[test]
    fn positions() {
        let s = spec();
        assert_eq!(s.position_between(0), Ok(0.0));
        assert_eq!(s.position_between(1), Ok(1.25));
        assert_eq!(s.position_between(3), Ok(3.0));
        let mut tight = spec();
        tight.labels[1].sort = 1.0 + f64::EPSILON;
        assert_eq!(tight.position_between(1), Err(NoRoom));
    }
}
