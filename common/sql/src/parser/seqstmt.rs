//! ALTER SEQUENCE as the parser's keyword pre-dispatch reads it
//! (sqlparser 0.52 has no ALTER SEQUENCE); `crate::sequence` runs it.

use super::{Cur, Tok};
use pgtypes::error::{sqlstate, PgError, PgResult};

/// ALTER SEQUENCE's options, each None when not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeqOptions {
    /// `AS type`: the type's name as written.
    pub as_type: Option<String>,
    /// `INCREMENT [BY] n`.
    pub increment: Option<i64>,
    /// `MINVALUE n` (Some(Some)) or `NO MINVALUE` (Some(None)).
    pub min: Option<Option<i64>>,
    /// `MAXVALUE n` or `NO MAXVALUE`.
    pub max: Option<Option<i64>>,
    /// `START [WITH] n`.
    pub start: Option<i64>,
    /// `RESTART [[WITH] n]`: Some(None) restarts at START.
    pub restart: Option<Option<i64>>,
    /// `CACHE n`.
    pub cache: Option<i64>,
    /// `CYCLE` / `NO CYCLE`.
    pub cycle: Option<bool>,
    /// `OWNED BY table.column` (the dotted parts) or `OWNED BY NONE`
    /// (Some(None)).
    pub owned_by: Option<Option<Vec<String>>>,
}

impl SeqOptions {
    /// True for `OWNED BY` alone: nothing about the counter changes.
    pub fn only_owned_by(&self) -> bool {
        let SeqOptions {
            as_type,
            increment,
            min,
            max,
            start,
            restart,
            cache,
            cycle,
            owned_by,
        } = self;
        owned_by.is_some()
            && as_type.is_none()
            && increment.is_none()
            && min.is_none()
            && max.is_none()
            && start.is_none()
            && restart.is_none()
            && cache.is_none()
            && cycle.is_none()
    }
}

/// An ALTER SEQUENCE statement, or a CREATE SEQUENCE (whose options come
/// in any order, as PostgreSQL's and pg_dump's do).
#[derive(Debug, Clone, PartialEq)]
pub enum SeqStmt {
    /// `CREATE SEQUENCE [IF NOT EXISTS] name option …`.
    Create {
        /// IF NOT EXISTS.
        if_not_exists: bool,
        /// The sequence, as `parser::Cur::relation_name` keeps it.
        name: String,
        /// The options (RESTART: the first value, as PostgreSQL).
        options: SeqOptions,
    },
    /// `ALTER SEQUENCE [IF EXISTS] name option …`.
    Alter {
        /// IF EXISTS.
        if_exists: bool,
        /// The sequence, as `parser::Cur::relation_name` keeps it.
        name: String,
        /// The options.
        options: SeqOptions,
    },
    /// `ALTER SEQUENCE [IF EXISTS] name RENAME TO new`.
    Rename {
        /// IF EXISTS.
        if_exists: bool,
        /// The sequence.
        name: String,
        /// Its new name.
        to: String,
    },
    /// `ALTER SEQUENCE [IF EXISTS] name SET SCHEMA s`.
    SetSchema {
        /// IF EXISTS.
        if_exists: bool,
        /// The sequence.
        name: String,
        /// The new schema.
        schema: String,
    },
    /// `ALTER SEQUENCE [IF EXISTS] name OWNER TO role`.
    OwnerTo {
        /// IF EXISTS.
        if_exists: bool,
        /// The sequence.
        name: String,
        /// The new owner (`current_user` … as written).
        owner: String,
    },
}

impl SeqStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            SeqStmt::Create { .. } => "CREATE SEQUENCE",
            _ => "ALTER SEQUENCE",
        }
    }
}

/// True if the statement starts `ALTER SEQUENCE` or `CREATE SEQUENCE`.
pub(crate) fn is_sequence_statement(c: &Cur<'_>) -> bool {
    matches!(c.peek_word(), Some("alter" | "create")) && c.peek_word_at(1) == Some("sequence")
}

fn redundant() -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, "conflicting or redundant options")
}

/// Sets `slot` once; a second time is PostgreSQL's 42601.
fn once<T>(slot: &mut Option<T>, v: T) -> PgResult<()> {
    if slot.is_some() {
        return Err(redundant());
    }
    *slot = Some(v);
    Ok(())
}

/// A signed integer (PostgreSQL's NumericOnly, integers only).
fn number(c: &mut Cur<'_>) -> PgResult<i64> {
    let neg = if c.eat_punct('-') {
        true
    } else {
        let _ = c.eat_punct('+');
        false
    };
    let Some(Tok::Num(text)) = c.peek().cloned() else {
        return Err(c.error_here());
    };
    let text = if neg { format!("-{text}") } else { text };
    let v = text.parse::<i64>().map_err(|_| {
        PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("invalid sequence option value: {text}"),
        )
    })?;
    c.pos += 1;
    Ok(v)
}

fn at_number(c: &Cur<'_>) -> bool {
    matches!(c.peek(), Some(Tok::Num(_)) | Some(Tok::Punct('-' | '+')))
}

/// Parses an ALTER or CREATE SEQUENCE ([`is_sequence_statement`] said it
/// is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<SeqStmt> {
    if c.eat_word("create") {
        c.expect_word("sequence")?;
        let if_not_exists = c.eat_if_not_exists()?;
        let name = c.relation_name()?;
        let options = parse_options(c, false)?;
        return Ok(SeqStmt::Create {
            if_not_exists,
            name,
            options,
        });
    }
    c.expect_word("alter")?;
    c.expect_word("sequence")?;
    let if_exists = c.eat_if_exists()?;
    let name = c.relation_name()?;
    if c.peek_word() == Some("owner") && c.peek_word_at(1) == Some("to") {
        c.pos += 2;
        let owner = c.one_ident()?;
        c.expect_end()?;
        return Ok(SeqStmt::OwnerTo {
            if_exists,
            name,
            owner,
        });
    }
    if c.eat_word("rename") {
        c.expect_word("to")?;
        let to = c.one_ident()?;
        c.expect_end()?;
        return Ok(SeqStmt::Rename {
            if_exists,
            name,
            to,
        });
    }
    if c.peek_word() == Some("set") && c.peek_word_at(1) == Some("schema") {
        c.pos += 2;
        let schema = c.one_ident()?;
        c.expect_end()?;
        return Ok(SeqStmt::SetSchema {
            if_exists,
            name,
            schema,
        });
    }
    let options = parse_options(c, true)?;
    Ok(SeqStmt::Alter {
        if_exists,
        name,
        options,
    })
}

/// The options of ALTER SEQUENCE (`alter`: at least one needed) or CREATE
/// SEQUENCE, in any order, each at most once.
fn parse_options(c: &mut Cur<'_>, alter: bool) -> PgResult<SeqOptions> {
    let mut o = SeqOptions::default();
    let mut any = false;
    while !c.at_end() {
        let at = c.pos;
        if c.eat_word("as") {
            let mut ty = c.one_ident()?;
            while c.eat_punct('.') {
                ty = format!("{ty}.{}", c.one_ident()?);
            }
            once(&mut o.as_type, ty).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("increment") {
            let _ = c.eat_word("by");
            let v = number(c)?;
            once(&mut o.increment, v).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("minvalue") {
            let v = number(c)?;
            once(&mut o.min, Some(v)).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("maxvalue") {
            let v = number(c)?;
            once(&mut o.max, Some(v)).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("start") {
            let _ = c.eat_word("with");
            let v = number(c)?;
            once(&mut o.start, v).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("restart") {
            let v = if c.eat_word("with") || at_number(c) {
                Some(number(c)?)
            } else {
                None
            };
            once(&mut o.restart, v).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("cache") {
            let v = number(c)?;
            once(&mut o.cache, v).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("cycle") {
            once(&mut o.cycle, true).map_err(|e| c.mark_at(at, e))?;
        } else if c.eat_word("no") {
            if c.eat_word("minvalue") {
                once(&mut o.min, None).map_err(|e| c.mark_at(at, e))?;
            } else if c.eat_word("maxvalue") {
                once(&mut o.max, None).map_err(|e| c.mark_at(at, e))?;
            } else {
                c.expect_word("cycle")?;
                once(&mut o.cycle, false).map_err(|e| c.mark_at(at, e))?;
            }
        } else if c.eat_word("owned") {
            c.expect_word("by")?;
            let mut parts = vec![c.one_ident()?];
            while c.eat_punct('.') {
                parts.push(c.one_ident()?);
            }
            let v = if parts.len() == 1 && parts[0] == "none" {
                None
            } else {
                Some(parts)
            };
            once(&mut o.owned_by, v).map_err(|e| c.mark_at(at, e))?;
        } else {
            return Err(c.error_here());
        }
        any = true;
    }
    if !any && alter {
        return Err(c.error_here());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse_one, Stmt};

    fn alter(sql: &str) -> SeqStmt {
        match parse_one(sql).unwrap() {
            Stmt::Sequence(s) => s,
            other => panic!("not ALTER SEQUENCE: {other:?}"),
        }
    }

    #[test]
    fn options() {
        let SeqStmt::Alter {
            if_exists,
            name,
            options,
        } = alter(
            "ALTER SEQUENCE IF EXISTS s.q AS int2 INCREMENT BY -2 NO MINVALUE MAXVALUE 9 \
             START WITH 3 RESTART CACHE 5 NO CYCLE OWNED BY NONE",
        )
        else {
            panic!("not an option list");
        };
        assert!(if_exists, "IF EXISTS");
        assert_eq!(name, "\"s\".\"q\"");
        assert_eq!(
            options,
            SeqOptions {
                as_type: Some("int2".into()),
                increment: Some(-2),
                min: Some(None),
                max: Some(Some(9)),
                start: Some(3),
                restart: Some(None),
                cache: Some(5),
                cycle: Some(false),
                owned_by: Some(None),
            }
        );
        let SeqStmt::Alter { options, .. } =
            alter("alter sequence q restart 7 owned by t.c cycle increment 4")
        else {
            panic!("not an option list");
        };
        assert_eq!(options.restart, Some(Some(7)));
        assert_eq!(options.owned_by, Some(Some(vec!["t".into(), "c".into()])));
        assert_eq!(options.cycle, Some(true));
        assert_eq!(options.increment, Some(4));
    }

    #[test]
    fn rename_and_set_schema() {
        assert_eq!(
            alter("ALTER SEQUENCE q RENAME TO r"),
            SeqStmt::Rename {
                if_exists: false,
                name: "\"q\"".into(),
                to: "r".into()
            }
        );
        assert_eq!(
            alter("ALTER SEQUENCE q SET SCHEMA s"),
            SeqStmt::SetSchema {
                if_exists: false,
                name: "\"q\"".into(),
                schema: "s".into()
            }
        );
    }

    #[test]
    fn errors() {
        assert!(parse_one("ALTER SEQUENCE q").is_err(), "no option");
        let e = parse_one("ALTER SEQUENCE q CACHE 2 CACHE 3").unwrap_err();
        assert_eq!(e.message, "conflicting or redundant options");
        assert!(parse_one("ALTER SEQUENCE q INCREMENT BY x").is_err());
    }
}
