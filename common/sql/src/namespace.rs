//! Schema-qualified relation names and the search path, as PostgreSQL's
//! namespace.c resolves them.
//!
//! A name as written ([`QualName`]) is either qualified (`s.t`: schema
//! `s` must exist) or not (`t`: the first schema of the session's search
//! path that has a relation called `t`). The session resolves its
//! `search_path` setting to schema OIDs once per catalog change
//! ([`resolve_search_path`]) and hands them to every
//! [`engine::catalog::CatalogView`] it makes; statements then look names up
//! through [`find_table`] and friends, and create objects in
//! [`creation_namespace`].
//!
//! Errors are PostgreSQL's: a lookup of `nosuch.t` reports
//! `relation "nosuch.t" does not exist` (42P01), a creation in a missing
//! schema `schema "nosuch" does not exist` (3F000), a creation with an
//! empty path `no schema has been selected to create in` (3F000).

use std::sync::Arc;

use engine::catalog::{CatalogView, TableDef};
use engine::namespace::{PG_CATALOG_NAMESPACE, PUBLIC_NAMESPACE};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::Oid;
use sqlparser::ast;

/// An identifier as PostgreSQL folds it: unquoted → lower case.
fn fold(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// A relation name as written: an optional schema and the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QualName {
    /// The schema, when qualified.
    pub schema: Option<String>,
    /// The relation's name.
    pub name: String,
}

impl QualName {
    /// The name of `n` (`t`, `s.t`, or `db.s.t` with the database part
    /// ignored); 42601 for more parts, as PostgreSQL.
    pub fn of(n: &ast::ObjectName) -> PgResult<QualName> {
        match n.0.as_slice() {
            [t] => Ok(QualName {
                schema: None,
                name: fold(t),
            }),
            [s, t] | [_, s, t] => Ok(QualName {
                schema: Some(fold(s)),
                name: fold(t),
            }),
            _ => Err(PgError::syntax(format!(
                "improper qualified name (too many dotted names): {n}"
            ))),
        }
    }

    /// A qualified name given as text (the argument of `nextval('s.q')`,
    /// `'s.t'::regclass`): dot-separated identifiers, double-quoted ones
    /// kept as written, others folded to lower case.
    pub fn parse_text(text: &str) -> PgResult<QualName> {
        let invalid = || PgError::new(sqlstate::INVALID_NAME, "invalid name syntax");
        let mut parts: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        let mut chars = text.trim().chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    cur.push('"');
                }
                '"' => quoted = !quoted,
                '.' if !quoted => parts.push(std::mem::take(&mut cur)),
                c if quoted => cur.push(c),
                c => cur.extend(c.to_lowercase()),
            }
        }
        if quoted {
            return Err(invalid());
        }
        parts.push(cur);
        if parts.iter().any(|p| p.is_empty()) {
            return Err(invalid());
        }
        let mut it = parts.into_iter().rev();
        let name = it.next().ok_or_else(invalid)?;
        let schema = it.next();
        if it.count() > 1 {
            return Err(PgError::syntax(format!(
                "improper qualified name (too many dotted names): {text}"
            )));
        }
        Ok(QualName { schema, name })
    }

    /// An unqualified name.
    pub fn bare(name: &str) -> QualName {
        QualName {
            schema: None,
            name: name.to_string(),
        }
    }

    /// The name as messages show it: `s.t` or `t`.
    pub fn display(&self) -> String {
        match &self.schema {
            Some(s) => format!("{s}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The schemas `search_path` (the setting's text) names that exist, in
/// order, without repeats; `"$user"` is the schema named like `user`.
pub fn resolve_search_path(view: &CatalogView<'_>, text: &str, user: &str) -> Arc<[Oid]> {
    let mut out: Vec<Oid> = Vec::new();
    for item in split_path(text) {
        let name = if item == "$user" {
            user.to_string()
        } else {
            item
        };
        if let Some(oid) = view.schema_oid(&name) {
            if !out.contains(&oid) {
                out.push(oid);
            }
        }
    }
    Arc::from(out)
}

/// The entries of a `search_path` value: comma-separated identifiers,
/// double-quoted ones kept as written, others folded to lower case.
pub fn split_path(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => {
                quoted = !quoted;
                was_quoted = true;
            }
            ',' if !quoted => {
                push_entry(&mut out, &mut cur, was_quoted);
                was_quoted = false;
            }
            c if !quoted && c.is_whitespace() => {}
            c => cur.push(c),
        }
    }
    push_entry(&mut out, &mut cur, was_quoted);
    out
}

fn push_entry(out: &mut Vec<String>, cur: &mut String, quoted: bool) {
    let s = std::mem::take(cur);
    if s.is_empty() && !quoted {
        return;
    }
    out.push(if quoted { s } else { s.to_lowercase() });
}

/// The schema a qualified name names (None: unqualified, look along the
/// path); 3F000 if it does not exist.
pub fn schema_of(view: &CatalogView<'_>, q: &QualName) -> PgResult<Option<Oid>> {
    match &q.schema {
        None => Ok(None),
        Some(s) => view
            .schema_oid(s)
            .map(Some)
            .ok_or_else(|| engine::catalog::undefined_schema(s)),
    }
}

/// The table `q` names as this session sees it (None: no such table, a
/// missing schema included).
pub fn find_table(view: &CatalogView<'_>, q: &QualName) -> Option<Arc<TableDef>> {
    match &q.schema {
        None => view.get(&q.name),
        Some(s) => view.get_in(view.schema_oid(s)?, &q.name),
    }
}

/// The table `q` names, or 42P01 naming it as written.
pub fn table(view: &CatalogView<'_>, q: &QualName) -> PgResult<Arc<TableDef>> {
    find_table(view, q).ok_or_else(|| engine::catalog::undefined_table(&q.display()))
}

/// The view `q` names as this session sees it.
pub fn find_view(view: &CatalogView<'_>, q: &QualName) -> Option<Arc<engine::view::ViewSpec>> {
    match &q.schema {
        None => view.view(&q.name),
        Some(s) => view.view_in(view.schema_oid(s)?, &q.name),
    }
}

/// The sequence `q` names (committed or not).
pub fn find_sequence(
    view: &CatalogView<'_>,
    q: &QualName,
) -> Option<Arc<engine::sequence::SequenceDef>> {
    match &q.schema {
        None => view.sequence(&q.name),
        Some(s) => {
            let ns = view.schema_oid(s)?;
            view.sequence_in(ns, &q.name)
        }
    }
}

/// The schema a new relation called `q` goes in: its qualifier (which
/// must exist, and not be a system schema), else the first schema of the
/// search path.
pub fn creation_namespace(view: &CatalogView<'_>, q: &QualName) -> PgResult<Oid> {
    let ns = match &q.schema {
        Some(s) => view
            .schema_oid(s)
            .ok_or_else(|| engine::catalog::undefined_schema(s))?,
        None => *view.path().first().ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_SCHEMA_NAME,
                "no schema has been selected to create in",
            )
        })?,
    };
    if ns != PUBLIC_NAMESPACE && ns < engine::catalog::FIRST_USER_OID {
        let schema = view.schema_name(ns).unwrap_or_default();
        let e = PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            format!("permission denied to create \"{schema}.{}\"", q.name),
        );
        return Err(if ns == PG_CATALOG_NAMESPACE {
            e.with_detail("System catalog modifications are currently disallowed.")
        } else {
            e
        });
    }
    Ok(ns)
}

/// How a relation in schema `ns` called `name` is written for this
/// session: bare when the search path finds it by that name
/// (`visible`), else `schema.name`; each part quoted as needed.
pub fn qualified_display(view: &CatalogView<'_>, ns: Oid, name: &str, visible: bool) -> String {
    let name_q = crate::pgcatalog::quote_ident(name);
    if visible {
        return name_q;
    }
    let schema = view.schema_name(ns).unwrap_or_else(|| ns.to_string());
    format!("{}.{name_q}", crate::pgcatalog::quote_ident(&schema))
}

/// A relation's name as text a function argument or a default takes
/// (`nextval('…')`): bare in `public`, `schema.name` elsewhere.
pub fn qualified_text(view: &CatalogView<'_>, ns: Oid, name: &str) -> String {
    let q = crate::pgcatalog::quote_ident(name);
    if ns == PUBLIC_NAMESPACE {
        return q;
    }
    let schema = view.schema_name(ns).unwrap_or_else(|| ns.to_string());
    format!("{}.{q}", crate::pgcatalog::quote_ident(&schema))
}

/// True if an unqualified `name` finds the relation with OID `oid` in
/// schema `ns` through the search path: no earlier schema of the path has
/// a relation (table, view, sequence) of that name.
pub fn relation_visible(view: &CatalogView<'_>, ns: Oid, name: &str) -> bool {
    for &p in view.path() {
        if p == ns {
            return true;
        }
        if view.get_in(p, name).is_some()
            || view.view_in(p, name).is_some()
            || view.sequence_in(p, name).is_some()
        {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_path_entries() {
        assert_eq!(split_path("\"$user\", public"), vec!["$user", "public"]);
        assert_eq!(split_path("A, \"B c\",d"), vec!["a", "B c", "d"]);
        assert_eq!(split_path(""), Vec::<String>::new());
        assert_eq!(split_path("\"\""), vec![""]);
    }
}
