//! `ALTER DATABASE name [WITH] option [=] value …` (PostgreSQL's
//! `AlterDatabaseStmt` with `createdb_opt_list`), which sqlparser 0.52
//! does not parse. The options are checked as `dbcommands.c`'s
//! `AlterDatabase` does: `connection_limit` (`CONNECTION LIMIT`),
//! `allow_connections` and `is_template`; any other name is 42601
//! `option "…" not recognized`. Executed by the session
//! (`Session::alter_database`).

use super::{Cur, Tok};
use pgtypes::error::{sqlstate, PgError, PgResult};

/// `ALTER DATABASE … [WITH] options`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterDatabaseStmt {
    /// The database named.
    pub name: String,
    /// `CONNECTION LIMIT n` (-1: none).
    pub connlimit: Option<i32>,
    /// `ALLOW_CONNECTIONS b`.
    pub allow_connections: Option<bool>,
    /// `IS_TEMPLATE b`.
    pub is_template: Option<bool>,
}

/// An option's value as the grammar reads it.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// An integer constant (sign included) that fits an int4.
    Int(i32),
    /// Any other number (a fraction, an integer too big for int4).
    Num(String),
    /// A string literal or a bare word.
    Text(String),
    /// `DEFAULT`.
    Default,
}

/// True if the statement starts `ALTER DATABASE name` followed by an
/// option list (not `SET`, `RESET`, `RENAME TO`, `OWNER TO`, `REFRESH
/// COLLATION VERSION`).
pub(crate) fn is_alter_database(c: &Cur<'_>) -> bool {
    if c.peek_word() != Some("alter") || c.peek_word_at(1) != Some("database") {
        return false;
    }
    match c.peek_word_at(3) {
        Some("set" | "reset" | "rename" | "refresh") => false,
        Some("owner") => c.peek_word_at(4) != Some("to"),
        _ => true,
    }
}

/// The option name at the cursor: `CONNECTION LIMIT` is
/// `connection_limit`, other words are themselves.
fn option_name(c: &mut Cur<'_>) -> PgResult<String> {
    if c.peek_word() == Some("connection") && c.peek_word_at(1) == Some("limit") {
        c.pos += 2;
        return Ok("connection_limit".into());
    }
    match c.peek().cloned() {
        Some(Tok::Word(w)) => {
            c.pos += 1;
            Ok(w)
        }
        _ => Err(c.error_here()),
    }
}

fn value(c: &mut Cur<'_>) -> PgResult<Value> {
    let sign = if c.eat_punct('-') {
        "-"
    } else {
        let _ = c.eat_punct('+');
        ""
    };
    match c.peek().cloned() {
        Some(Tok::Num(n)) => {
            c.pos += 1;
            let text = format!("{sign}{n}");
            Ok(match text.parse::<i32>() {
                Ok(v) if n.bytes().all(|b| b.is_ascii_digit()) => Value::Int(v),
                _ => Value::Num(text),
            })
        }
        Some(Tok::Word(w)) if sign.is_empty() => {
            c.pos += 1;
            Ok(if w == "default" {
                Value::Default
            } else {
                Value::Text(w)
            })
        }
        Some(Tok::Str(s)) if sign.is_empty() => {
            c.pos += 1;
            Ok(Value::Text(s))
        }
        _ => Err(c.error_here()),
    }
}

/// PostgreSQL's `defGetBoolean`.
fn boolean(name: &str, v: &Value) -> PgResult<bool> {
    let word = match v {
        Value::Int(0) => return Ok(false),
        Value::Int(1) => return Ok(true),
        Value::Text(t) => t.to_ascii_lowercase(),
        _ => String::new(),
    };
    match word.as_str() {
        "true" | "on" | "yes" | "t" | "y" => Ok(true),
        "false" | "off" | "no" | "f" | "n" => Ok(false),
        _ => Err(PgError::new(
            sqlstate::SYNTAX_ERROR,
            format!("{name} requires a Boolean value"),
        )),
    }
}

/// Parses the statement ([`is_alter_database`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<AlterDatabaseStmt> {
    c.expect_word("alter")?;
    c.expect_word("database")?;
    let name = c.one_ident()?;
    let _ = c.eat_word("with");
    let mut opts: Vec<(String, Value, usize)> = Vec::new();
    while !c.at_end() && c.peek() != Some(&Tok::Punct(';')) {
        let at = c.pos;
        let n = option_name(c)?;
        let _ = c.eat_punct('=');
        let v = value(c)?;
        opts.push((n, v, at));
    }
    if c.eat_punct(';') {
        c.expect_end()?;
    }
    let mut stmt = AlterDatabaseStmt {
        name,
        connlimit: None,
        allow_connections: None,
        is_template: None,
    };
    // dbcommands.c's order: every name first, then the values.
    let mut limit: Option<&Value> = None;
    let mut allow: Option<&Value> = None;
    let mut template: Option<&Value> = None;
    for (n, v, at) in &opts {
        let slot = match n.as_str() {
            "connection_limit" => &mut limit,
            "allow_connections" => &mut allow,
            "is_template" => &mut template,
            "tablespace" => {
                return Err(c.mark_at(
                    *at,
                    PgError::unsupported("ALTER DATABASE … SET TABLESPACE is not supported"),
                ))
            }
            other => {
                return Err(c.mark_at(
                    *at,
                    PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        format!("option \"{other}\" not recognized"),
                    ),
                ))
            }
        };
        if slot.is_some() {
            return Err(c.mark_at(
                *at,
                PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options"),
            ));
        }
        *slot = Some(v);
    }
    // DEFAULT leaves a flag as it is (no argument: dbcommands.c skips it).
    if let Some(v) = allow.filter(|v| **v != Value::Default) {
        stmt.allow_connections = Some(boolean("allow_connections", v)?);
    }
    if let Some(v) = template.filter(|v| **v != Value::Default) {
        stmt.is_template = Some(boolean("is_template", v)?);
    }
    if let Some(v) = limit {
        // `CONNECTION LIMIT DEFAULT` is -1, as in dbcommands.c.
        let n = match v {
            Value::Default => &-1,
            Value::Int(n) => n,
            _ => {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "connection_limit requires an integer value",
                ))
            }
        };
        if *n < -1 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid connection limit: {n}"),
            ));
        }
        stmt.connlimit = Some(*n);
    }
    Ok(stmt)
}

#[cfg(test)]
mod tests {
    use crate::parser::{parse_one, Stmt};

    fn alter(sql: &str) -> Result<super::AlterDatabaseStmt, pgtypes::error::PgError> {
        match parse_one(sql)? {
            Stmt::AlterDatabase(s) => Ok(s),
            other => panic!("not ALTER DATABASE: {other:?}"),
        }
    }

    #[test]
    fn connection_limit_forms() {
        assert_eq!(
            alter("ALTER DATABASE postgres CONNECTION LIMIT 3")
                .unwrap()
                .connlimit,
            Some(3)
        );
        assert_eq!(
            alter("alter database \"postgres\" with connection limit = -1;")
                .unwrap()
                .connlimit,
            Some(-1)
        );
        assert_eq!(
            alter("ALTER DATABASE postgres connection_limit 2")
                .unwrap()
                .connlimit,
            Some(2)
        );
        let e = alter("ALTER DATABASE postgres CONNECTION LIMIT -2").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            ("22023", "invalid connection limit: -2")
        );
        assert_eq!(
            alter("ALTER DATABASE postgres CONNECTION LIMIT = DEFAULT")
                .unwrap()
                .connlimit,
            Some(-1)
        );
        assert_eq!(
            alter("ALTER DATABASE postgres CONNECTION LIMIT +3")
                .unwrap()
                .connlimit,
            Some(3)
        );
        assert_eq!(alter("ALTER DATABASE postgres").unwrap().connlimit, None);
        for bad in ["1.5", "'7'", "99999999999", "2147483648"] {
            let e = alter(&format!("ALTER DATABASE postgres CONNECTION LIMIT {bad}")).unwrap_err();
            assert_eq!(
                e.message, "connection_limit requires an integer value",
                "{bad}"
            );
        }
        let e = alter("ALTER DATABASE postgres CONNECTION LIMIT 1 CONNECTION LIMIT 2").unwrap_err();
        assert_eq!(e.message, "conflicting or redundant options");
        let e = alter("ALTER DATABASE postgres foo 1").unwrap_err();
        assert_eq!(e.message, "option \"foo\" not recognized");
        assert!(alter("ALTER DATABASE postgres CONNECTION LIMIT").is_err());
        assert_eq!(
            alter("ALTER DATABASE postgres ALLOW_CONNECTIONS false")
                .unwrap()
                .allow_connections,
            Some(false)
        );
    }
}
