//! Views (PostgreSQL's `commands/view.c` and the `_RETURN` rule of
//! `pg_rewrite`): a named query, kept as SQL text with its output columns
//! and the relations it reads.
//!
//! A view holds no data. Its definition ([`ViewSpec`]) is what CREATE VIEW
//! stored: the query text (re-parsed and planned as a subquery wherever the
//! view is named), the output columns with their types as of CREATE (what
//! `SELECT *` and pg_attribute show; CREATE OR REPLACE may only append to
//! them), and the OIDs of the tables and views the query reads — PostgreSQL's
//! pg_depend rows from the view's rewrite rule, which make DROP of such a
//! relation fail without CASCADE.
//!
//! ## Invariants
//!
//! 1. Views share the relation namespace: a view's name is never the name
//!    of a table, sequence, index or other view (the catalog checks it for
//!    every creation and rename).
//! 2. A view changes only through the catalog's change path
//!    (`CreateView`, `AlterView`, `DropView`): WAL-logged, replayed by a
//!    standby, persisted in the catalog file.
//! 3. Like a table, a view carries the xid that created it (`creator`)
//!    until known committed, and a definition replaced by an uncommitted
//!    CREATE OR REPLACE / RENAME carries that xid (`altered_by`) and the
//!    committed definition before it (`previous`); other transactions see
//!    the previous one ([`crate::catalog::CatalogView::view`]), and
//!    rollback or start-up puts it back.
//!
//! Next: `sql::view` creates, replaces and drops views; the planner expands
//! them (`sql::planner::fromclause`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::{esc, type_from_catalog, type_to_catalog, unesc, ColumnDef};
use crate::pg_trigger::{parse_trigger, push_trigger, TriggerSpec};
use pgtypes::{Oid, TransactionId};

/// A view's definition (its pg_class, pg_attribute and pg_rewrite rows).
#[derive(Clone, Debug, PartialEq)]
pub struct ViewSpec {
    /// OID (pg_class.oid).
    pub oid: Oid,
    /// Name.
    pub name: String,
    /// The schema's OID.
    pub namespace: Oid,
    /// The defining query as SQL text.
    pub query: String,
    /// Output columns: names and types (no NOT NULL, no defaults).
    pub columns: Vec<ColumnDef>,
    /// OIDs of the tables and views the query reads, sorted, no duplicates.
    pub depends: Vec<Oid>,
    /// The (sub)transaction that created the view (INVALID: committed).
    pub creator: TransactionId,
    /// The (sub)transaction whose uncommitted CREATE OR REPLACE / RENAME
    /// made this definition (INVALID: none).
    pub altered_by: TransactionId,
    /// With `altered_by`: the committed definition before it.
    pub previous: Option<Box<ViewSpec>>,
    /// Triggers (pg_trigger rows whose tgrelid is the view): INSTEAD OF
    /// row triggers and BEFORE / AFTER statement triggers only
    /// (`sql::trigger` enforces it).
    pub triggers: Vec<TriggerSpec>,
}

impl ViewSpec {
    /// The view's key in the catalog ([`crate::namespace::rel_key`]).
    pub fn key(&self) -> String {
        crate::namespace::rel_key(self.namespace, &self.name).into_owned()
    }
    /// A committed view.
    pub fn new(oid: Oid, name: &str, query: &str, columns: Vec<ColumnDef>) -> ViewSpec {
        ViewSpec {
            oid,
            name: name.to_string(),
            namespace: crate::namespace::PUBLIC_NAMESPACE,
            query: query.to_string(),
            columns,
            depends: Vec::new(),
            creator: TransactionId::INVALID,
            altered_by: TransactionId::INVALID,
            previous: None,
            triggers: Vec::new(),
        }
    }

    /// True if an INSTEAD OF row trigger fires on `op` (a
    /// `TRIGGER_TYPE_*` event bit): INSERT / UPDATE / DELETE on the view
    /// then runs the triggers for each row.
    pub fn has_instead_trigger(&self, op: u16) -> bool {
        self.triggers
            .iter()
            .any(|t| t.instead() && t.row() && t.on(op) && t.is_enabled())
    }

    /// The definition without its uncommitted-change marks.
    pub fn committed(&self) -> ViewSpec {
        ViewSpec {
            creator: TransactionId::INVALID,
            altered_by: TransactionId::INVALID,
            previous: None,
            ..self.clone()
        }
    }
}

/// A view in the catalog: its definition and the uncommitted marks, which
/// clear once the clog says the transaction committed.
#[derive(Debug)]
pub struct ViewDef {
    /// The definition as created or last replaced.
    pub spec: ViewSpec,
    /// The creating xid until known committed (0 after).
    pub creator: AtomicU64,
    /// The replacing xid until known committed (0 after).
    pub altered_by: AtomicU64,
}

impl ViewDef {
    /// The in-catalog form of `spec`.
    pub fn new(spec: ViewSpec) -> ViewDef {
        ViewDef {
            creator: AtomicU64::new(spec.creator.0),
            altered_by: AtomicU64::new(spec.altered_by.0),
            spec,
        }
    }

    /// The definition with its current marks (what the file and WAL keep).
    pub fn current_spec(&self) -> ViewSpec {
        let mut s = self.spec.clone();
        s.creator = TransactionId(self.creator.load(Ordering::Acquire));
        s.altered_by = TransactionId(self.altered_by.load(Ordering::Acquire));
        if !s.altered_by.is_valid() {
            s.previous = None;
        }
        s
    }
}

/// One view line of the catalog file and WAL: `view <oid> <name> <creator>
/// <altered_by> <query> <deps or -> <col>:<type>;… <previous line or ->
/// [<trigger lines>]` (each field escaped; the trigger field, absent
/// when there are none, holds `push_trigger`'s lines — a file from before
/// view triggers still reads).
pub(crate) fn push_view(out: &mut String, v: &ViewSpec) {
    out.push_str(&view_line(v));
    out.push('\n');
}

fn view_line(v: &ViewSpec) -> String {
    let deps = if v.depends.is_empty() {
        "-".to_string()
    } else {
        v.depends
            .iter()
            .map(|o| o.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let cols: Vec<String> = v
        .columns
        .iter()
        .map(|c| {
            let n = esc(&c.name).replace(';', "%3b").replace(':', "%3a");
            format!("{n}:{}", type_to_catalog(c.ty))
        })
        .collect();
    let prev = match &v.previous {
        Some(p) => esc(&view_line(p)),
        None => "-".into(),
    };
    let mut line = format!(
        "view {} {} {} {} {} {deps} {} {prev}",
        v.oid,
        esc(&v.key()),
        v.creator.0,
        v.altered_by.0,
        esc(&v.query),
        esc(&cols.join(";")),
    );
    if !v.triggers.is_empty() {
        let mut trig = String::new();
        for t in &v.triggers {
            push_trigger(&mut trig, t);
        }
        line.push(' ');
        line.push_str(&esc(&trig));
    }
    line
}

/// Parses [`push_view`]'s line; never panics.
pub(crate) fn parse_view(line: &str) -> Result<ViewSpec, String> {
    let g: Vec<&str> = line.split(' ').collect();
    let (["view", oid, name, creator, altered, query, deps, cols, prev], trig) =
        (g.get(..9).unwrap_or(&[]), g.get(9..).unwrap_or(&[]))
    else {
        return Err(format!("unrecognized line {line:?}"));
    };
    let triggers = match trig {
        [] => Vec::new(),
        [t] => unesc(t)?
            .lines()
            .map(|l| parse_trigger(l, usize::MAX))
            .collect::<Result<_, _>>()?,
        _ => return Err(format!("unrecognized line {line:?}")),
    };
    let xid = |s: &str| {
        s.parse::<u64>()
            .map(TransactionId)
            .map_err(|_| format!("bad xid {s:?}"))
    };
    let depends = if *deps == "-" {
        Vec::new()
    } else {
        deps.split(',')
            .map(|d| d.parse::<u32>().map_err(|_| "bad dependency".to_string()))
            .collect::<Result<Vec<_>, _>>()?
    };
    let mut columns = Vec::new();
    let cols = unesc(cols)?;
    if !cols.is_empty() {
        for c in cols.split(';') {
            let (n, t) = c.split_once(':').ok_or("bad view column")?;
            let ty = type_from_catalog(t).ok_or("bad view column type")?;
            columns.push(ColumnDef::new(&unesc(n)?, ty));
        }
    }
    let previous = if *prev == "-" {
        None
    } else {
        Some(Box::new(parse_view(&unesc(prev)?)?))
    };
    let (namespace, name) = crate::catalog::parse_rel_key(name)?;
    Ok(ViewSpec {
        oid: oid.parse().map_err(|_| "bad oid")?,
        name,
        namespace,
        query: unesc(query)?,
        columns,
        depends,
        creator: xid(creator)?,
        altered_by: xid(altered)?,
        previous,
        triggers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::sqltype::SqlType;

    #[test]
    fn view_line_round_trips() {
        let mut v = ViewSpec::new(
            16400,
            "my view",
            "SELECT a, b FROM t WHERE a > 1",
            vec![
                ColumnDef::new("a", SqlType::Int4),
                ColumnDef::new("b;c:d", SqlType::Varchar(Some(10))),
                ColumnDef::new("n", SqlType::Numeric(Some((10, 2)))),
            ],
        );
        v.depends = vec![16384, 16390];
        let mut w = v.clone();
        w.name = "w".into();
        w.altered_by = TransactionId(7);
        w.previous = Some(Box::new(v.clone()));
        let mut t = w.clone();
        t.triggers = vec![TriggerSpec {
            oid: 16401,
            name: "v ins".into(),
            func: 16399,
            tgtype: crate::pg_trigger::TRIGGER_TYPE_ROW
                | crate::pg_trigger::TRIGGER_TYPE_INSTEAD
                | crate::pg_trigger::TRIGGER_TYPE_INSERT,
            enabled: b'O',
            columns: Vec::new(),
            args: vec!["a b".into()],
            when: None,
            old_table: None,
            new_table: None,
            constraint: None,
        }];
        t.triggers.push(TriggerSpec {
            oid: 16402,
            name: "v stmt".into(),
            tgtype: crate::pg_trigger::TRIGGER_TYPE_UPDATE,
            ..t.triggers[0].clone()
        });
        for s in [v, w, t] {
            let mut out = String::new();
            push_view(&mut out, &s);
            assert_eq!(parse_view(out.trim_end()).unwrap(), s);
        }
        assert!(parse_view("view 1 x").is_err());
    }
}
