//! The schema statements sqlparser 0.52 does not parse: `ALTER SCHEMA …
//! RENAME TO / OWNER TO` and `ALTER TABLE | VIEW … SET SCHEMA`. Executed
//! by `crate::schemacmds`.

use super::Cur;
use pgtypes::error::PgResult;

/// The schema statements sqlparser does not parse.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaStmt {
    /// ALTER SCHEMA name RENAME TO new.
    Rename {
        /// The schema.
        name: String,
        /// Its new name.
        to: String,
    },
    /// ALTER SCHEMA name OWNER TO role.
    Owner {
        /// The schema.
        name: String,
        /// The new owner.
        role: String,
    },
    /// ALTER TABLE | VIEW [IF EXISTS] name SET SCHEMA s.
    SetSchema {
        /// "TABLE" or "VIEW" (the command tag's object).
        kind: String,
        /// IF EXISTS.
        if_exists: bool,
        /// The relation, as `parser::Cur::relation_name` keeps it.
        name: String,
        /// The new schema.
        schema: String,
    },
}

impl SchemaStmt {
    /// The command tag.
    pub fn tag(&self) -> String {
        match self {
            SchemaStmt::Rename { .. } | SchemaStmt::Owner { .. } => "ALTER SCHEMA".into(),
            SchemaStmt::SetSchema { kind, .. } => format!("ALTER {kind}"),
        }
    }
}

/// True if the statement starting with the parser's current words is one
/// of [`SchemaStmt`]'s.
pub(crate) fn is_schema_statement(c: &Cur<'_>) -> bool {
    if c.peek_word() != Some("alter") {
        return false;
    }
    match c.peek_word_at(1) {
        Some("schema") => true,
        Some("table" | "view") => c.ends_with_words(&["set", "schema"], 1),
        _ => false,
    }
}

/// Parses a [`SchemaStmt`] ([`is_schema_statement`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<SchemaStmt> {
    c.expect_word("alter")?;
    if c.eat_word("schema") {
        let name = c.one_ident()?;
        let stmt = if c.eat_word("rename") {
            c.expect_word("to")?;
            SchemaStmt::Rename {
                name,
                to: c.one_ident()?,
            }
        } else {
            c.expect_word("owner")?;
            c.expect_word("to")?;
            SchemaStmt::Owner {
                name,
                role: c.one_ident()?,
            }
        };
        c.expect_end()?;
        return Ok(stmt);
    }
    let kind = if c.eat_word("table") {
        "TABLE"
    } else {
        c.expect_word("view")?;
        "VIEW"
    };
    let if_exists = c.eat_if_exists()?;
    let _ = c.eat_word("only");
    let name = c.relation_name()?;
    c.expect_word("set")?;
    c.expect_word("schema")?;
    let schema = c.one_ident()?;
    c.expect_end()?;
    Ok(SchemaStmt::SetSchema {
        kind: kind.into(),
        if_exists,
        name,
        schema,
    })
}
