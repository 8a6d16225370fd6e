//! `COMMENT ON object IS 'text' | NULL` for every object kind hotpair has
//! (sqlparser 0.52 knows only TABLE, COLUMN and EXTENSION). Executed by
//! `crate::comment`.

use super::Cur;
use pgtypes::error::PgResult;

/// The kind of object a COMMENT names (PostgreSQL's ObjectType).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentKind {
    /// TABLE.
    Table,
    /// COLUMN rel.col (of a table or a view).
    Column,
    /// INDEX.
    Index,
    /// VIEW.
    View,
    /// SEQUENCE.
    Sequence,
    /// SCHEMA.
    Schema,
    /// TYPE.
    Type,
    /// CONSTRAINT c ON t.
    Constraint,
    /// ROLE.
    Role,
    /// DATABASE.
    Database,
}

/// A parsed COMMENT statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CommentStmt {
    /// What kind of object.
    pub kind: CommentKind,
    /// The object's name parts as written (schema-qualified, or
    /// `rel.col` for a column, `[schema.]table` for a constraint's table).
    pub name: Vec<String>,
    /// A constraint's own name.
    pub constraint: Option<String>,
    /// The text (None: IS NULL).
    pub text: Option<String>,
}

/// True if the statement is a COMMENT.
pub(crate) fn is_comment_statement(c: &Cur<'_>) -> bool {
    c.peek_word() == Some("comment") && c.peek_word_at(1) == Some("on")
}

/// Parses a [`CommentStmt`] ([`is_comment_statement`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<CommentStmt> {
    c.expect_word("comment")?;
    c.expect_word("on")?;
    let kind = match c.peek_word() {
        Some("table") => CommentKind::Table,
        Some("column") => CommentKind::Column,
        Some("index") => CommentKind::Index,
        Some("view") => CommentKind::View,
        Some("sequence") => CommentKind::Sequence,
        Some("schema") => CommentKind::Schema,
        Some("type") => CommentKind::Type,
        Some("constraint") => CommentKind::Constraint,
        Some("role") => CommentKind::Role,
        Some("database") => CommentKind::Database,
        _ => return Err(c.error_here()),
    };
    c.pos += 1;
    let mut constraint = None;
    if kind == CommentKind::Constraint {
        constraint = Some(c.one_ident()?);
        c.expect_word("on")?;
    }
    let mut name = vec![c.one_ident()?];
    while c.eat_punct('.') {
        name.push(c.one_ident()?);
    }
    c.expect_word("is")?;
    let text = if c.eat_word("null") {
        None
    } else {
        Some(c.string()?)
    };
    let _ = c.eat_punct(';');
    c.expect_end()?;
    Ok(CommentStmt {
        kind,
        name,
        constraint,
        text,
    })
}
