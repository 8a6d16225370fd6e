//! Triggers (PostgreSQL's `pg_trigger` rows): which function runs when a
//! table is written, as part of the table's definition.
//!
//! A trigger belongs to its table: the table's [`crate::catalog::TableSpec`]
//! keeps the list ([`TriggerSpec`], one `trigger` line per trigger in the
//! table's block of the catalog file and of its WAL records). CREATE / DROP
//! TRIGGER and ALTER TABLE … ENABLE / DISABLE TRIGGER are therefore table
//! definition changes (`CatalogChange::AlterTable`), with everything that
//! path gives: WAL-logged and replayed by a standby, undone by ROLLBACK,
//! invisible to other sessions until commit, gone with DROP TABLE. A
//! catalog file from before triggers has no `trigger` lines and still reads.
//!
//! A view's triggers live the same way in its [`crate::view::ViewSpec`]
//! (`CatalogChange::AlterView`): INSTEAD OF row triggers and statement
//! triggers. [`TriggerRel`] is what firing and the catalog functions see
//! of either owner.
//!
//! The catalog stores the definition only; firing belongs to the SQL
//! layer (`sql::trigger`), which never runs during WAL replay: a standby
//! sees a trigger's effects as the primary's WAL records.

use crate::catalog::{esc, unesc};
use pgtypes::Oid;

/// tgtype bit: FOR EACH ROW (else STATEMENT).
pub const TRIGGER_TYPE_ROW: u16 = 1 << 0;
/// tgtype bit: BEFORE.
pub const TRIGGER_TYPE_BEFORE: u16 = 1 << 1;
/// tgtype bit: INSERT.
pub const TRIGGER_TYPE_INSERT: u16 = 1 << 2;
/// tgtype bit: DELETE.
pub const TRIGGER_TYPE_DELETE: u16 = 1 << 3;
/// tgtype bit: UPDATE.
pub const TRIGGER_TYPE_UPDATE: u16 = 1 << 4;
/// tgtype bit: TRUNCATE.
pub const TRIGGER_TYPE_TRUNCATE: u16 = 1 << 5;
/// tgtype bit: INSTEAD OF.
pub const TRIGGER_TYPE_INSTEAD: u16 = 1 << 6;

/// One trigger (its pg_trigger row).
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerSpec {
    /// pg_trigger.oid.
    pub oid: Oid,
    /// tgname (unique per table).
    pub name: String,
    /// tgfoid: the `RETURNS trigger` function.
    pub func: Oid,
    /// tgtype: the `TRIGGER_TYPE_*` bits.
    pub tgtype: u16,
    /// tgenabled: `O` (origin, enabled), `D` (disabled), `R` (replica),
    /// `A` (always).
    pub enabled: u8,
    /// tgattr: UPDATE OF's columns (0-based positions; empty: any).
    pub columns: Vec<usize>,
    /// tgargs: the arguments as written.
    pub args: Vec<String>,
    /// WHEN (…)'s SQL text over NEW / OLD (tgqual).
    pub when: Option<String>,
    /// tgoldtable: REFERENCING OLD TABLE AS name.
    pub old_table: Option<String>,
    /// tgnewtable: REFERENCING NEW TABLE AS name.
    pub new_table: Option<String>,
    /// CREATE CONSTRAINT TRIGGER's deferral (None: an ordinary trigger).
    pub constraint: Option<TriggerDeferral>,
}

/// A constraint trigger's pg_constraint side (contype `t`): what SET
/// CONSTRAINTS and the commit-time queue go by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerDeferral {
    /// tgconstraint: the OID of its pg_constraint row.
    pub oid: Oid,
    /// DEFERRABLE.
    pub deferrable: bool,
    /// INITIALLY DEFERRED.
    pub initially_deferred: bool,
}

impl TriggerSpec {
    /// FOR EACH ROW.
    pub fn row(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_ROW != 0
    }
    /// BEFORE.
    pub fn before(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_BEFORE != 0
    }
    /// INSTEAD OF.
    pub fn instead(&self) -> bool {
        self.tgtype & TRIGGER_TYPE_INSTEAD != 0
    }
    /// Fires on any of the events `bits` (`TRIGGER_TYPE_INSERT` …).
    pub fn on(&self, bits: u16) -> bool {
        self.tgtype & bits != 0
    }
    /// Not disabled (the session_replication_role is always `origin`).
    pub fn is_enabled(&self) -> bool {
        self.enabled != b'D' && self.enabled != b'R'
    }
}

/// The relation a trigger belongs to, table or view (the part of
/// PostgreSQL's relcache entry trigger code reads): TG_RELID,
/// TG_TABLE_NAME, TG_TABLE_SCHEMA, the row's columns, the triggers.
#[derive(Clone, Copy, Debug)]
pub struct TriggerRel<'a> {
    /// pg_class.oid.
    pub oid: Oid,
    /// Bare name.
    pub name: &'a str,
    /// The schema's OID.
    pub namespace: Oid,
    /// Columns of its rows (a table's dropped ones included, in place).
    pub columns: &'a [crate::catalog::ColumnDef],
    /// Its triggers.
    pub triggers: &'a [TriggerSpec],
    /// A view (else a table).
    pub is_view: bool,
}

impl<'a> TriggerRel<'a> {
    /// A table's.
    pub fn table(t: &'a crate::catalog::TableDef) -> Self {
        TriggerRel {
            oid: t.oid,
            name: &t.name,
            namespace: t.namespace,
            columns: &t.columns,
            triggers: &t.triggers,
            is_view: false,
        }
    }
    /// A view's.
    pub fn view(v: &'a crate::view::ViewSpec) -> Self {
        TriggerRel {
            oid: v.oid,
            name: &v.name,
            namespace: v.namespace,
            columns: &v.columns,
            triggers: &v.triggers,
            is_view: true,
        }
    }
}

fn opt(s: &Option<String>) -> String {
    s.as_deref()
        .map_or_else(|| "-".to_string(), |t| esc(&format!("={t}")))
}

fn parse_opt(s: &str) -> Result<Option<String>, String> {
    if s == "-" {
        return Ok(None);
    }
    Ok(Some(
        unesc(s)?
            .strip_prefix('=')
            .ok_or("bad optional text")?
            .to_string(),
    ))
}

/// One line of a table's block: `trigger <oid> <name> <func> <tgtype>
/// <enabled> <cols or -> <when> <old table> <new table> <nargs> <arg>…
/// [constraint <oid> <deferrable 0|1> <initially deferred 0|1>]`.
pub(crate) fn push_trigger(out: &mut String, t: &TriggerSpec) {
    let cols = if t.columns.is_empty() {
        "-".to_string()
    } else {
        t.columns
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    out.push_str(&format!(
        "trigger {} {} {} {} {} {cols} {} {} {} {}",
        t.oid,
        esc(&t.name),
        t.func,
        t.tgtype,
        t.enabled as char,
        opt(&t.when),
        opt(&t.old_table),
        opt(&t.new_table),
        t.args.len()
    ));
    for a in &t.args {
        out.push(' ');
        out.push_str(&esc(a));
    }
    if let Some(c) = &t.constraint {
        out.push_str(&format!(
            " constraint {} {} {}",
            c.oid, c.deferrable as u8, c.initially_deferred as u8
        ));
    }
    out.push('\n');
}

/// Parses [`push_trigger`]'s line (`ncols`: the table's column count);
/// never panics.
pub(crate) fn parse_trigger(line: &str, ncols: usize) -> Result<TriggerSpec, String> {
    let g: Vec<&str> = line.split(' ').collect();
    let ["trigger", oid, name, func, tgtype, enabled, cols, when, old, new, nargs, args @ ..] =
        g.as_slice()
    else {
        return Err(format!("unrecognized trigger line {line:?}"));
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let columns = if *cols == "-" {
        Vec::new()
    } else {
        let mut v = Vec::new();
        for c in cols.split(',') {
            let c: usize = c.parse().map_err(|_| "bad trigger column".to_string())?;
            if c >= ncols {
                return Err("trigger column out of range".into());
            }
            v.push(c);
        }
        v
    };
    let nargs: usize = nargs.parse().map_err(|_| "bad trigger argument count")?;
    let (args, constraint) = match args.len().checked_sub(nargs) {
        Some(0) => (args, None),
        Some(4) => {
            let (a, rest) = args.split_at(nargs);
            let flag = |s: &str| match s {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(format!("bad constraint trigger flag {s:?}")),
            };
            let ["constraint", oid, d, i] = rest else {
                return Err("bad trigger line".into());
            };
            (
                a,
                Some(TriggerDeferral {
                    oid: num(oid)?,
                    deferrable: flag(d)?,
                    initially_deferred: flag(i)?,
                }),
            )
        }
        _ => return Err("bad trigger line length".into()),
    };
    let enabled = match enabled.as_bytes() {
        [b @ (b'O' | b'D' | b'R' | b'A')] => *b,
        _ => return Err("bad tgenabled".into()),
    };
    Ok(TriggerSpec {
        oid: num(oid)?,
        name: unesc(name)?,
        func: num(func)?,
        tgtype: tgtype.parse().map_err(|_| "bad tgtype")?,
        enabled,
        columns,
        args: args.iter().map(|a| unesc(a)).collect::<Result<_, _>>()?,
        when: parse_opt(when)?,
        old_table: parse_opt(old)?,
        new_table: parse_opt(new)?,
        constraint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigger_line_round_trips() {
        let t = TriggerSpec {
            oid: 16400,
            name: "audit me".into(),
            func: 16390,
            tgtype: TRIGGER_TYPE_ROW | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_INSERT,
            enabled: b'O',
            columns: vec![1, 0],
            args: vec!["a b".into(), String::new()],
            when: Some("new.x <> old.x".into()),
            old_table: None,
            new_table: Some("newtab".into()),
            constraint: None,
        };
        let mut s = String::new();
        push_trigger(&mut s, &t);
        assert_eq!(parse_trigger(s.trim_end(), 2).unwrap(), t);
        let c = TriggerSpec {
            constraint: Some(TriggerDeferral {
                oid: 16401,
                deferrable: true,
                initially_deferred: false,
            }),
            ..t.clone()
        };
        let mut s = String::new();
        push_trigger(&mut s, &c);
        assert_eq!(parse_trigger(s.trim_end(), 2).unwrap(), c);
        assert!(parse_trigger(s.trim_end(), 1).is_err());
        assert!(parse_trigger("trigger 1 2", 2).is_err());
    }
}
