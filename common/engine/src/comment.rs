//! Comments on catalog objects other than tables and their columns
//! (PostgreSQL's `comment.c`, the rows of `pg_description` and
//! `pg_shdescription`).
//!
//! A table's and its columns' comments live in the table's definition
//! (`TableSpec::comments`) and change with it. Every other object kind —
//! index, view (and its columns), sequence, schema, enum type,
//! constraint, role, database — has its comment in one node-wide map
//! beside the objects, keyed like PostgreSQL's rows:
//!
//! ```text
//!   CommentKey { classoid, objoid, subid, name }
//!     classoid  pg_class 1259 (index, view, sequence), pg_namespace 2615,
//!               pg_type 1247, pg_constraint 2606, pg_authid 1260 and
//!               pg_database 1262 (these two: pg_shdescription)
//!     objoid    the object's OID; for a constraint its table's OID
//!     subid     a view column's attnum, else 0
//!     name      a constraint's name (a CHECK's OID is derived from its
//!               position, so the name is the stable key), else ""
//! ```
//!
//! A comment changes through `CatalogChange::SetComment` (WAL-logged,
//! replayed on a standby, kept in the catalog file). Like an uncommitted
//! ALTER TABLE, the new entry carries the setting transaction's xid
//! (`by`) and the committed text before it (`previous`); readers other
//! than that transaction see `previous` until the clog says it committed.
//! Undo (ROLLBACK, or start-up finding `by` never committed) is another
//! `SetComment` back to `previous`. A comment whose object is gone is
//! never shown (readers join with the objects they see) and DROP of the
//! object removes it.

use std::sync::atomic::AtomicU64;

use pgtypes::TransactionId;
use txn::clog::Clog;

/// pg_class's OID: comments on indexes, views, sequences.
pub const PG_CLASS: u32 = 1259;
/// pg_namespace's OID: comments on schemas.
pub const PG_NAMESPACE: u32 = 2615;
/// pg_type's OID: comments on types.
pub const PG_TYPE: u32 = 1247;
/// pg_constraint's OID: comments on constraints.
pub const PG_CONSTRAINT: u32 = 2606;
/// pg_authid's OID: comments on roles (shared).
pub const PG_AUTHID: u32 = 1260;
/// pg_database's OID: comments on databases (shared).
pub const PG_DATABASE: u32 = 1262;
/// pg_proc's OID: privileges on functions and procedures.
pub const PG_PROC: u32 = 1255;

/// Which object a comment is on (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommentKey {
    /// The OID of the catalog holding the object.
    pub classoid: u32,
    /// The object's OID (a constraint: its table's).
    pub objoid: u32,
    /// A column's attnum, else 0.
    pub subid: i32,
    /// A constraint's name, else empty.
    pub name: String,
}

impl CommentKey {
    /// The key of an object with an OID of its own.
    pub fn object(classoid: u32, objoid: u32) -> CommentKey {
        CommentKey {
            classoid,
            objoid,
            subid: 0,
            name: String::new(),
        }
    }

    /// True for pg_shdescription's objects (roles, databases).
    pub fn shared(&self) -> bool {
        matches!(self.classoid, PG_AUTHID | PG_DATABASE)
    }
}

/// One comment as the map holds it.
#[derive(Debug)]
pub struct CommentDef {
    /// The text (None: the uncommitted change removed it).
    pub text: Option<String>,
    /// The xid of the uncommitted transaction that set it (0: committed).
    pub by: AtomicU64,
    /// With `by`: the committed text before it.
    pub previous: Option<String>,
}

impl CommentDef {
    /// The text a transaction whose own xids are `own` (sorted) sees.
    pub fn visible_text(&self, own: &[TransactionId], clog: &Clog) -> Option<&str> {
        if crate::catalog::creator_visible(&self.by, own, clog) {
            self.text.as_deref()
        } else {
            self.previous.as_deref()
        }
    }
}

/// The catalog file's / WAL record's line for a comment:
/// `comment_on <classoid> <objoid> <subid> <name> <by> <text or -> <previous or ->`,
/// `name` escaped by `esc`, the texts `+` and their escaped text, or `-`
/// for none.
pub(crate) fn comment_line(
    key: &CommentKey,
    text: Option<&str>,
    by: TransactionId,
    previous: Option<&str>,
) -> String {
    let opt = |s: Option<&str>| {
        s.map(|s| format!("+{}", crate::catalog::esc(s)))
            .unwrap_or_else(|| "-".into())
    };
    format!(
        "comment_on {} {} {} {} {} {} {}\n",
        key.classoid,
        key.objoid,
        key.subid,
        crate::catalog::esc(&key.name),
        by.0,
        opt(text),
        opt(previous)
    )
}

/// A parsed [`comment_line`]: key, text, by, previous.
pub(crate) type CommentLine = (CommentKey, Option<String>, TransactionId, Option<String>);

/// Parses [`comment_line`]'s output; never panics.
pub(crate) fn parse_comment_line(line: &str) -> Result<CommentLine, String> {
    let f: Vec<&str> = line.split(' ').collect();
    let [_, classoid, objoid, subid, name, by, text, previous] = f.as_slice() else {
        return Err("bad comment line".into());
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let opt = |s: &str| -> Result<Option<String>, String> {
        match s.strip_prefix('+') {
            Some(t) => crate::catalog::unesc(t).map(Some),
            None if s == "-" => Ok(None),
            None => Err(format!("bad comment text {s:?}")),
        }
    };
    Ok((
        CommentKey {
            classoid: num(classoid)?,
            objoid: num(objoid)?,
            subid: subid.parse::<i32>().map_err(|_| "bad subid")?,
            name: crate::catalog::unesc(name)?,
        },
        opt(text)?,
        TransactionId(by.parse::<u64>().map_err(|_| "bad xid")?),
        opt(previous)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_line_round_trips() {
        let key = CommentKey {
            classoid: PG_CONSTRAINT,
            objoid: 16400,
            subid: 0,
            name: "c 1".into(),
        };
        for (text, previous) in [
            (Some("-"), None),
            (None, Some("old % text\nwith a line")),
            (Some(""), Some("+")),
        ] {
            let line = comment_line(&key, text, TransactionId(7), previous);
            let (k, t, by, p) = parse_comment_line(line.trim_end()).expect("parses");
            assert_eq!(k, key);
            assert_eq!(t.as_deref(), text);
            assert_eq!(by, TransactionId(7));
            assert_eq!(p.as_deref(), previous);
        }
        assert!(parse_comment_line("comment_on 1 2").is_err());
        assert!(parse_comment_line("comment_on 1 2 0 % 0 text -").is_err());
    }
}
