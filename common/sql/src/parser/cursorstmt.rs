//! SQL-level cursors: `DECLARE name … CURSOR … FOR query`, `FETCH` /
//! `MOVE [direction] [FROM | IN] name`, `CLOSE name | ALL` (PostgreSQL's
//! DeclareCursorStmt, FetchStmt, ClosePortalStmt). sqlparser 0.52 parses
//! DECLARE and FETCH with other dialects' meanings, so the pre-dispatch
//! takes them here. Executed by `crate::portalcmds`.

use super::{Cur, Tok};
use pgtypes::error::PgResult;

/// `FETCH ALL`'s count (PostgreSQL's FETCH_ALL, LONG_MAX).
pub const FETCH_ALL: i64 = i64::MAX;

/// A parsed cursor statement.
#[derive(Debug, Clone, PartialEq)]
pub enum CursorStmt {
    /// DECLARE.
    Declare(DeclareStmt),
    /// FETCH or MOVE.
    Fetch(FetchStmt),
    /// `CLOSE name`, or `CLOSE ALL` (None).
    Close(Option<String>),
}

impl CursorStmt {
    /// The command tag of a statement that ends without a count.
    pub fn tag(&self) -> &'static str {
        match self {
            CursorStmt::Declare(_) => "DECLARE CURSOR",
            CursorStmt::Fetch(f) if f.is_move => "MOVE",
            CursorStmt::Fetch(_) => "FETCH",
            CursorStmt::Close(Some(_)) => "CLOSE CURSOR",
            CursorStmt::Close(None) => "CLOSE CURSOR ALL",
        }
    }
}

/// `DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
/// [{WITH | WITHOUT} HOLD] FOR query`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclareStmt {
    /// The portal name.
    pub name: String,
    /// BINARY.
    pub binary: bool,
    /// SCROLL (true), NO SCROLL (false), neither (None: the plan decides).
    pub scroll: Option<bool>,
    /// WITH HOLD.
    pub hold: bool,
    /// The query's text.
    pub query: String,
}

/// Which way a FETCH / MOVE goes (PostgreSQL's FetchDirection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchDirection {
    /// NEXT, FORWARD [n | ALL], n, ALL.
    Forward,
    /// PRIOR, BACKWARD [n | ALL].
    Backward,
    /// FIRST (1), LAST (-1), ABSOLUTE n.
    Absolute,
    /// RELATIVE n.
    Relative,
}

/// FETCH or MOVE.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchStmt {
    /// The portal name.
    pub name: String,
    /// Direction.
    pub direction: FetchDirection,
    /// Count (may be negative; [`FETCH_ALL`] for ALL).
    pub count: i64,
    /// MOVE: position only, no rows.
    pub is_move: bool,
}

/// True if the statement is DECLARE, FETCH, MOVE or CLOSE.
pub(crate) fn is_cursor_statement(c: &Cur<'_>) -> bool {
    matches!(c.peek_word(), Some("declare" | "fetch" | "move" | "close"))
}

/// Parses a [`CursorStmt`] ([`is_cursor_statement`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<CursorStmt> {
    match c.peek_word() {
        Some("declare") => {
            c.pos += 1;
            parse_declare(c).map(CursorStmt::Declare)
        }
        Some("close") => {
            c.pos += 1;
            let name = if c.peek_word() == Some("all") {
                c.pos += 1;
                None
            } else {
                Some(c.one_ident()?)
            };
            c.expect_end()?;
            Ok(CursorStmt::Close(name))
        }
        Some(w) => {
            let is_move = w == "move";
            c.pos += 1;
            parse_fetch(c, is_move).map(CursorStmt::Fetch)
        }
        None => Err(c.error_here()),
    }
}

fn parse_declare(c: &mut Cur<'_>) -> PgResult<DeclareStmt> {
    let name = c.one_ident()?;
    let mut binary = false;
    let mut scroll = None;
    loop {
        match c.peek_word() {
            Some("binary") => binary = true,
            Some("insensitive") | Some("asensitive") => {}
            Some("scroll") => scroll = Some(true),
            Some("no") if c.peek_word_at(1) == Some("scroll") => {
                c.pos += 1;
                scroll = Some(false);
            }
            _ => break,
        }
        c.pos += 1;
    }
    c.expect_word("cursor")?;
    let mut hold = false;
    if c.eat_word("with") {
        c.expect_word("hold")?;
        hold = true;
    } else if c.eat_word("without") {
        c.expect_word("hold")?;
    }
    c.expect_word("for")?;
    let from = c.pos;
    if c.at_end() {
        return Err(c.error_here());
    }
    let query = c.text_between(from, c.toks.len()).to_string();
    c.pos = c.toks.len();
    Ok(DeclareStmt {
        name,
        binary,
        scroll,
        hold,
        query,
    })
}

/// A SignedIconst, if one comes next.
fn signed_int(c: &mut Cur<'_>) -> PgResult<Option<i64>> {
    let neg = match c.peek() {
        Some(Tok::Punct('-')) => true,
        Some(Tok::Punct('+')) => false,
        Some(Tok::Num(_)) => false,
        _ => return Ok(None),
    };
    if !matches!(c.peek(), Some(Tok::Num(_))) {
        c.pos += 1;
    }
    match c.peek().cloned() {
        Some(Tok::Num(n)) => {
            let Ok(v) = n.parse::<i64>() else {
                return Err(c.error_here());
            };
            c.pos += 1;
            Ok(Some(if neg { -v } else { v }))
        }
        _ => Err(c.error_here()),
    }
}

fn parse_fetch(c: &mut Cur<'_>, is_move: bool) -> PgResult<FetchStmt> {
    use FetchDirection::*;
    let (direction, count) = match c.peek_word() {
        // A word followed by the end (or nothing else) is the name.
        Some(_) if c.toks.len() == c.pos + 1 => (Forward, 1),
        Some("next") => {
            c.pos += 1;
            (Forward, 1)
        }
        Some("prior") => {
            c.pos += 1;
            (Backward, 1)
        }
        Some("first") => {
            c.pos += 1;
            (Absolute, 1)
        }
        Some("last") => {
            c.pos += 1;
            (Absolute, -1)
        }
        Some("absolute") => {
            c.pos += 1;
            let Some(n) = signed_int(c)? else {
                return Err(c.error_here());
            };
            (Absolute, n)
        }
        Some("relative") => {
            c.pos += 1;
            let Some(n) = signed_int(c)? else {
                return Err(c.error_here());
            };
            (Relative, n)
        }
        Some("all") => {
            c.pos += 1;
            (Forward, FETCH_ALL)
        }
        Some(w @ ("forward" | "backward")) => {
            let dir = if w == "forward" { Forward } else { Backward };
            c.pos += 1;
            if c.eat_word("all") {
                (dir, FETCH_ALL)
            } else {
                (dir, signed_int(c)?.unwrap_or(1))
            }
        }
        Some(_) => (Forward, 1),
        None => match signed_int(c)? {
            Some(n) => (Forward, n),
            None => return Err(c.error_here()),
        },
    };
    let _ = c.eat_word("from") || c.eat_word("in");
    let name = c.one_ident()?;
    c.expect_end()?;
    Ok(FetchStmt {
        name,
        direction,
        count,
        is_move,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse_one, Stmt};

    fn fetch(sql: &str) -> FetchStmt {
        match parse_one(sql) {
            Ok(Stmt::Cursor(CursorStmt::Fetch(f))) => f,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn fetch_forms() {
        use FetchDirection::*;
        let f = fetch("FETCH c");
        assert_eq!((f.direction, f.count, f.name.as_str()), (Forward, 1, "c"));
        let f = fetch("fetch backward 3 from c");
        assert_eq!((f.direction, f.count), (Backward, 3));
        let f = fetch("FETCH -2 IN c");
        assert_eq!((f.direction, f.count), (Forward, -2));
        let f = fetch("FETCH ABSOLUTE -1 c");
        assert_eq!((f.direction, f.count), (Absolute, -1));
        let f = fetch("MOVE FORWARD ALL IN c");
        assert_eq!(
            (f.direction, f.count, f.is_move),
            (Forward, FETCH_ALL, true)
        );
        let f = fetch("FETCH PRIOR FROM \"C\"");
        assert_eq!((f.direction, f.count, f.name.as_str()), (Backward, 1, "C"));
        assert!(parse_one("FETCH").is_err());
        assert!(parse_one("FETCH ABSOLUTE c").is_err());
    }

    #[test]
    fn declare_forms() {
        match parse_one("DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT 1") {
            Ok(Stmt::Cursor(CursorStmt::Declare(d))) => {
                assert_eq!(d.scroll, Some(false));
                assert!(d.hold);
                assert_eq!(d.query, "SELECT 1");
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_one("DECLARE c CURSOR").is_err());
        assert!(matches!(
            parse_one("CLOSE ALL"),
            Ok(Stmt::Cursor(CursorStmt::Close(None)))
        ));
    }
}
