//! CREATE [OR REPLACE] [CONSTRAINT] TRIGGER, DROP TRIGGER and ALTER TABLE
//! … ENABLE / DISABLE TRIGGER as the parser's keyword pre-dispatch reads
//! them (sqlparser 0.52 does not know PostgreSQL's trigger syntax);
//! `crate::trigger` runs them. The WHEN condition is kept as its SQL text.

use super::{Cur, Tok};
use pgtypes::error::{PgError, PgResult};

/// CREATE TRIGGER as written.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    /// OR REPLACE.
    pub or_replace: bool,
    /// CONSTRAINT TRIGGER.
    pub constraint: bool,
    /// The trigger's name.
    pub name: String,
    /// `BEFORE`, `AFTER` or `INSTEAD OF` as tgtype bits (0 for AFTER).
    pub timing: u16,
    /// The events as tgtype bits.
    pub events: u16,
    /// UPDATE OF's column names.
    pub columns: Vec<String>,
    /// The table (as [`Cur::relation_name`] text).
    pub table: String,
    /// FOR EACH ROW.
    pub row: bool,
    /// WHEN (…)'s text.
    pub when: Option<String>,
    /// 1-based character position of that text in the statement (error
    /// cursors point into it).
    pub when_at: u32,
    /// REFERENCING OLD TABLE AS.
    pub old_table: Option<String>,
    /// REFERENCING NEW TABLE AS.
    pub new_table: Option<String>,
    /// DEFERRABLE.
    pub deferrable: bool,
    /// INITIALLY DEFERRED.
    pub initially_deferred: bool,
    /// The function (its name; no arguments of its own).
    pub func: String,
    /// The function's schema, when qualified.
    pub func_schema: Option<String>,
    /// The trigger's arguments, as text.
    pub args: Vec<String>,
}

/// A statement of this module.
#[derive(Debug, Clone, PartialEq)]
pub enum TrigStmt {
    /// CREATE TRIGGER.
    Create(Box<CreateTrigger>),
    /// DROP TRIGGER [IF EXISTS] name ON table [CASCADE | RESTRICT].
    Drop {
        /// IF EXISTS.
        if_exists: bool,
        /// The trigger.
        name: String,
        /// The table.
        table: String,
    },
    /// ALTER TABLE t ENABLE [REPLICA | ALWAYS] / DISABLE TRIGGER name | ALL | USER.
    Enable {
        /// The table.
        table: String,
        /// The new tgenabled (`O`, `D`, `R`, `A`).
        enabled: u8,
        /// None: ALL / USER (hotpair has no internal triggers to tell apart).
        name: Option<String>,
    },
}

impl TrigStmt {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self {
            TrigStmt::Create(_) => "CREATE TRIGGER",
            TrigStmt::Drop { .. } => "DROP TRIGGER",
            TrigStmt::Enable { .. } => "ALTER TABLE",
        }
    }
}

/// True if the statement is one of this module's.
pub(crate) fn is_trigger_statement(c: &Cur<'_>) -> bool {
    let w = |i| c.peek_word_at(i);
    match w(0) {
        Some("create") => {
            let mut i = 1;
            if w(1) == Some("or") && w(2) == Some("replace") {
                i = 3;
            }
            if w(i) == Some("constraint") {
                i += 1;
            }
            w(i) == Some("trigger")
        }
        Some("drop") => w(1) == Some("trigger"),
        Some("alter") if w(1) == Some("table") => {
            // ALTER TABLE [IF EXISTS] [ONLY] name ENABLE|DISABLE ... TRIGGER.
            let mut i = 2;
            if w(i) == Some("if") {
                i += 2;
            }
            if w(i) == Some("only") {
                i += 1;
            }
            // The name: one identifier, maybe qualified.
            i += 1;
            while c.toks.get(c.pos + i).map(|t| &t.tok) == Some(&Tok::Punct('.')) {
                i += 2;
            }
            match w(i) {
                Some("enable") => {
                    w(i + 1) == Some("trigger")
                        || (matches!(w(i + 1), Some("replica" | "always"))
                            && w(i + 2) == Some("trigger"))
                }
                Some("disable") => w(i + 1) == Some("trigger"),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Parses one of this module's statements.
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<TrigStmt> {
    match c.peek_word() {
        Some("drop") => {
            c.pos += 2;
            let if_exists = c.eat_if_exists()?;
            let name = c.one_ident()?;
            c.expect_word("on")?;
            let table = c.relation_name()?;
            let _ = c.eat_word("cascade") || c.eat_word("restrict");
            c.expect_end()?;
            Ok(TrigStmt::Drop {
                if_exists,
                name,
                table,
            })
        }
        Some("alter") => {
            c.pos += 2;
            let _ = c.eat_if_exists()?;
            let _ = c.eat_word("only");
            let table = c.relation_name()?;
            let enabled = if c.eat_word("disable") {
                b'D'
            } else {
                c.expect_word("enable")?;
                if c.eat_word("replica") {
                    b'R'
                } else if c.eat_word("always") {
                    b'A'
                } else {
                    b'O'
                }
            };
            c.expect_word("trigger")?;
            let name = if c.eat_word("all") || c.eat_word("user") {
                None
            } else {
                Some(c.one_ident()?)
            };
            c.expect_end()?;
            Ok(TrigStmt::Enable {
                table,
                enabled,
                name,
            })
        }
        _ => create(c).map(|t| TrigStmt::Create(Box::new(t))),
    }
}

fn create(c: &mut Cur<'_>) -> PgResult<CreateTrigger> {
    use engine::pg_trigger::*;
    c.expect_word("create")?;
    let or_replace = c.eat_word("or");
    if or_replace {
        c.expect_word("replace")?;
    }
    let constraint = c.eat_word("constraint");
    c.expect_word("trigger")?;
    let name = c.one_ident()?;
    // A constraint trigger is AFTER … FOR EACH ROW (the grammar's rule).
    if constraint && c.peek_word() != Some("after") {
        return Err(c.error_here());
    }
    let timing = if c.eat_word("before") {
        TRIGGER_TYPE_BEFORE
    } else if c.eat_word("after") {
        0
    } else if c.eat_word("instead") {
        c.expect_word("of")?;
        TRIGGER_TYPE_INSTEAD
    } else {
        return Err(c.error_here());
    };
    let mut events = 0u16;
    let mut columns = Vec::new();
    loop {
        let bit = match c.peek_word() {
            Some("insert") => TRIGGER_TYPE_INSERT,
            Some("update") => TRIGGER_TYPE_UPDATE,
            Some("delete") => TRIGGER_TYPE_DELETE,
            Some("truncate") => TRIGGER_TYPE_TRUNCATE,
            _ => return Err(c.error_here()),
        };
        c.pos += 1;
        if events & bit != 0 {
            return Err(c.error_here());
        }
        events |= bit;
        if bit == TRIGGER_TYPE_UPDATE && c.eat_word("of") {
            loop {
                columns.push(c.one_ident()?);
                if !c.eat_punct(',') {
                    break;
                }
            }
        }
        if !c.eat_word("or") {
            break;
        }
    }
    c.expect_word("on")?;
    let table = c.relation_name()?;
    let mut t = CreateTrigger {
        or_replace,
        constraint,
        name,
        timing,
        events,
        columns,
        table,
        row: false,
        when: None,
        when_at: 0,
        old_table: None,
        new_table: None,
        deferrable: false,
        initially_deferred: false,
        func: String::new(),
        func_schema: None,
        args: Vec::new(),
    };
    loop {
        if c.eat_word("from") {
            c.relation_name()?;
        } else if c.eat_word("not") {
            c.expect_word("deferrable")?;
            t.deferrable = false;
        } else if c.eat_word("deferrable") {
            t.deferrable = true;
        } else if c.eat_word("initially") {
            if c.eat_word("deferred") {
                t.initially_deferred = true;
            } else {
                c.expect_word("immediate")?;
            }
        } else if c.eat_word("referencing") {
            loop {
                let old = if c.eat_word("old") {
                    true
                } else if c.eat_word("new") {
                    false
                } else {
                    break;
                };
                if !c.eat_word("table") {
                    c.expect_word("row")?;
                    return Err(PgError::unsupported(
                        "ROW variable naming in the REFERENCING clause is not supported",
                    )
                    .with_hint("Use OLD TABLE or NEW TABLE for naming transition tables."));
                }
                let _ = c.eat_word("as");
                let n = c.one_ident()?;
                if old {
                    t.old_table = Some(n);
                } else {
                    t.new_table = Some(n);
                }
            }
        } else {
            break;
        }
    }
    if constraint {
        c.expect_word("for")?;
        c.expect_word("each")?;
        c.expect_word("row")?;
        t.row = true;
    } else if c.eat_word("for") {
        let _ = c.eat_word("each");
        if c.eat_word("row") {
            t.row = true;
        } else {
            c.expect_word("statement")?;
        }
    }
    if c.eat_word("when") {
        let open = c.pos;
        if !c.eat_punct('(') {
            return Err(c.error_here());
        }
        let close = super::funcstmt::skip_to_close(c)?;
        t.when = Some(c.text_between(open + 1, close).trim().to_string());
        if let Some(tok) = c.toks.get(open + 1) {
            t.when_at = super::char_position(c.sql, tok.start);
        }
        c.pos = close + 1;
    }
    c.expect_word("execute")?;
    if !c.eat_word("function") {
        c.expect_word("procedure")?;
    }
    let mut name = c.one_ident()?;
    if c.eat_punct('.') {
        t.func_schema = Some(std::mem::replace(&mut name, c.one_ident()?));
    }
    t.func = name;
    if !c.eat_punct('(') {
        return Err(c.error_here());
    }
    if !c.eat_punct(')') {
        loop {
            let arg = match c.peek().cloned() {
                Some(Tok::Str(s)) => s,
                Some(Tok::Word(w)) | Some(Tok::Ident(w)) => w,
                Some(Tok::Num(n)) => n,
                _ => return Err(c.error_here()),
            };
            c.pos += 1;
            t.args.push(arg);
            if c.eat_punct(')') {
                break;
            }
            if !c.eat_punct(',') {
                return Err(c.error_here());
            }
        }
    }
    c.expect_end()?;
    Ok(t)
}
