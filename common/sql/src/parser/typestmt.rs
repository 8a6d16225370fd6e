//! CREATE TYPE … AS ENUM and ALTER TYPE as the parser's keyword
//! pre-dispatch reads them (`sqlparser` reads enum labels as identifiers
//! and has no ALTER TYPE); `crate::typecmds` runs them.

use super::{Cur, Tok};
use pgtypes::error::{PgError, PgResult};

/// A type statement the parser's pre-dispatch recognised.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeStmt {
    /// `CREATE TYPE name AS ENUM ('a', …)`.
    CreateEnum {
        /// Type name.
        name: String,
        /// The labels in order.
        labels: Vec<String>,
    },
    /// `ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'x' [BEFORE|AFTER 'y']`.
    AddValue {
        /// Type name.
        name: String,
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// The new label.
        label: String,
        /// `BEFORE` (true) / `AFTER` (false) this label.
        neighbor: Option<(bool, String)>,
    },
    /// `ALTER TYPE name RENAME VALUE 'a' TO 'b'`.
    RenameValue {
        /// Type name.
        name: String,
        /// The label now.
        from: String,
        /// Its new text.
        to: String,
    },
    /// `ALTER TYPE name RENAME TO new`.
    Rename {
        /// Type name.
        name: String,
        /// The new name.
        to: String,
    },
    /// `ALTER TYPE name OWNER TO role`.
    OwnerTo {
        /// Type name.
        name: String,
        /// The new owner (`current_user` … as written).
        owner: String,
    },
}

impl TypeStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            TypeStmt::CreateEnum { .. } => "CREATE TYPE",
            _ => "ALTER TYPE",
        }
    }
}

/// True if the words starting a statement make it one of ours.
pub fn is_type_statement(first: &str, second: Option<&str>) -> bool {
    matches!(first, "create" | "alter") && second == Some("type")
}

/// Parses `CREATE TYPE …` / `ALTER TYPE …` (the cursor at its first word).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<TypeStmt> {
    let create = c.eat_word("create");
    if !create {
        c.expect_word("alter")?;
    }
    c.expect_word("type")?;
    let name = c.ident()?;
    if create {
        c.expect_word("as")?;
        if !c.eat_word("enum") {
            return Err(PgError::unsupported(
                "CREATE TYPE is only supported for enum types",
            ));
        }
        if !c.eat_punct('(') {
            return Err(c.error_here());
        }
        let mut labels = Vec::new();
        if !c.eat_punct(')') {
            loop {
                labels.push(c.string()?);
                if c.eat_punct(')') {
                    break;
                }
                if !c.eat_punct(',') {
                    return Err(c.error_here());
                }
            }
        }
        c.expect_end()?;
        return Ok(TypeStmt::CreateEnum { name, labels });
    }
    let stmt = if c.eat_word("add") {
        c.expect_word("value")?;
        let if_not_exists = c.eat_if_not_exists()?;
        let label = c.string()?;
        let neighbor = if c.eat_word("before") {
            Some((true, c.string()?))
        } else if c.eat_word("after") {
            Some((false, c.string()?))
        } else {
            None
        };
        TypeStmt::AddValue {
            name,
            if_not_exists,
            label,
            neighbor,
        }
    } else if c.eat_word("rename") {
        if c.eat_word("value") {
            let from = c.string()?;
            c.expect_word("to")?;
            let to = c.string()?;
            TypeStmt::RenameValue { name, from, to }
        } else {
            c.expect_word("to")?;
            let to = c.one_ident()?;
            TypeStmt::Rename { name, to }
        }
    } else if c.eat_word("owner") {
        c.expect_word("to")?;
        let owner = c.one_ident()?;
        TypeStmt::OwnerTo { name, owner }
    } else {
        return Err(match c.peek() {
            Some(Tok::Word(_)) => PgError::unsupported(format!(
                "ALTER TYPE … {} is not supported",
                c.peek_word().unwrap_or("").to_uppercase()
            )),
            _ => c.error_here(),
        });
    };
    c.expect_end()?;
    Ok(stmt)
}
