//! Parsing: from a Query string to [`Stmt`]s.
//!
//! Three steps, as in PostgreSQL's `exec_simple_query` → `pg_parse_query`:
//!
//! 1. [`split_statements`] cuts the text at top-level `;`, skipping string
//!    literals (`'…'` with `''`, `E'…'` with backslash escapes), quoted
//!    identifiers, `--` and nested `/* */` comments and `$tag$…$tag$` dollar
//!    quotes. Empty pieces are dropped (an all-empty query is
//!    [`Stmt::Empty`], PostgreSQL's EmptyQueryResponse).
//! 2. A keyword pre-dispatch ([`parse_one`]) looks at the first words and
//!    parses by hand what `sqlparser` cannot parse or parses with the wrong
//!    meaning for PostgreSQL: transaction control (`BEGIN`, `START
//!    TRANSACTION … ISOLATION LEVEL …`, `COMMIT`/`END`, `ROLLBACK`/`ABORT`,
//!    the savepoint family, the two-phase statements), `SET`/`SHOW`/`RESET`,
//!    `COPY` in both the option-list and the pre-9.0 syntax pgbench uses,
//!    `VACUUM`, `ANALYZE` and `CHECKPOINT`; DDL sqlparser lacks has its
//!    own module ([`typestmt`], [`schemastmt`], [`seqstmt`]: ALTER
//!    SEQUENCE, [`commentstmt`]: COMMENT ON).
//! 3. Everything else goes to `sqlparser` with [`PostgreSqlDialect`] and is
//!    kept as its AST in [`Stmt::Sql`]; binding to the catalog happens later
//!    (planner), so a parse stays valid across DDL and can be cached.
//!
//! [`ParseCache`] holds two node-wide, bounded maps, each behind its own
//! mutex held only for a lookup or an insert (never while parsing); when
//! full a map is cleared, which is cheap and good enough for the workloads
//! we care about:
//!
//! * **texts**: a whole query text → its parsed statements (pgbench's
//!   handful of texts in prepared mode, anything not normalised);
//! * **shapes**: a statement's shape key ([`normalize`](mod@normalize):
//!   the text with its literals as `$1 … $n`, plus their kinds) → the
//!   parsed template, or None when the template is not one plannable
//!   statement.
//!   A simple-mode stream of texts that differ only in their literals
//!   (pgbench `-M simple`, ORMs that inline values) parses once per
//!   shape; the session binds each text's literals as the template's
//!   parameters and decides whether the template may stand in for the
//!   text (`session.rs`).

pub mod commentstmt;
pub mod ctasstmt;
pub mod cursorstmt;
pub mod dbstmt;
pub mod errpos;
pub mod funcstmt;
pub mod grantstmt;
pub mod normalize;
pub mod schemastmt;
pub mod seqstmt;
pub mod trigstmt;
pub mod typestmt;

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use engine::xact::IsolationLevel;
use normalize::{normalize, Normalized};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::Oid;

/// One parsed statement.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// Nothing but whitespace and comments.
    Empty,
    /// `BEGIN` / `START TRANSACTION` with optional modes.
    Begin {
        /// `ISOLATION LEVEL …` if given.
        isolation: Option<IsolationLevel>,
        /// `READ ONLY` (true) / `READ WRITE` (false) if given.
        read_only: Option<bool>,
        /// `DEFERRABLE` (true) / `NOT DEFERRABLE` (false) if given.
        deferrable: Option<bool>,
        /// True for `START TRANSACTION` (its command tag differs).
        start: bool,
    },
    /// `COMMIT` / `END`.
    Commit,
    /// `ROLLBACK` / `ABORT`.
    Rollback,
    /// `SAVEPOINT name`.
    Savepoint(String),
    /// `RELEASE [SAVEPOINT] name`.
    Release(String),
    /// `ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name`.
    RollbackTo(String),
    /// `SET TRANSACTION …` (or `SET SESSION CHARACTERISTICS AS TRANSACTION …`
    /// when `session` is true).
    SetTransaction {
        /// `ISOLATION LEVEL …` if given.
        isolation: Option<IsolationLevel>,
        /// `READ ONLY` / `READ WRITE` if given.
        read_only: Option<bool>,
        /// `[NOT] DEFERRABLE` if given.
        deferrable: Option<bool>,
        /// Session characteristics instead of the current transaction.
        session: bool,
    },
    /// `SET [SESSION|LOCAL] name {=|TO} value[, …]`; `value` None is DEFAULT.
    Set {
        /// Setting name as written (case-insensitive lookup later).
        name: String,
        /// The value text (list items joined by `, `), None for DEFAULT.
        value: Option<String>,
        /// `SET LOCAL`.
        local: bool,
    },
    /// `RESET name` or `RESET ALL` (None).
    Reset(Option<String>),
    /// `ALTER SYSTEM SET name {=|TO} value | DEFAULT` (`value` None),
    /// `ALTER SYSTEM RESET name`; `name` None: `ALTER SYSTEM RESET ALL`.
    AlterSystem {
        /// The setting, None for RESET ALL.
        name: Option<String>,
        /// The new value; None removes the setting from the file.
        value: Option<String>,
    },
    /// `SHOW name` or `SHOW ALL` (None).
    Show(Option<String>),
    /// `VACUUM …` (pruning is done by the heap on its own; `VACUUM
    /// ANALYZE` gathers statistics as ANALYZE does).
    Vacuum {
        /// Tables named (must exist), empty for all.
        tables: Vec<String>,
        /// Column lists, one per table (empty: every column).
        columns: Vec<Vec<String>>,
        /// `VACUUM ANALYZE`.
        analyze: bool,
    },
    /// `ANALYZE [t [(col, …)], …]`: planner statistics.
    Analyze {
        /// Tables named (must exist), empty for all.
        tables: Vec<String>,
        /// Column lists, one per table (empty: every column).
        columns: Vec<Vec<String>>,
    },
    /// `CHECKPOINT`.
    Checkpoint,
    /// `SET CONSTRAINTS { ALL | name, … } { DEFERRED | IMMEDIATE }`.
    SetConstraints {
        /// The constraints named; None for ALL.
        names: Option<Vec<String>>,
        /// DEFERRED (true) or IMMEDIATE.
        deferred: bool,
    },
    /// `COPY …`.
    Copy(CopyStmt),
    /// `PREPARE TRANSACTION 'gid'`.
    PrepareTransaction(String),
    /// `COMMIT PREPARED 'gid'`.
    CommitPrepared(String),
    /// `ROLLBACK PREPARED 'gid'`.
    RollbackPrepared(String),
    /// CREATE / ALTER / DROP ROLE or USER.
    Role(crate::roles::RoleStmt),
    /// CREATE TYPE … AS ENUM / ALTER TYPE.
    Type(typestmt::TypeStmt),
    /// ALTER SCHEMA, ALTER TABLE | VIEW … SET SCHEMA.
    Schema(schemastmt::SchemaStmt),
    /// ALTER SEQUENCE.
    Sequence(seqstmt::SeqStmt),
    /// COMMENT ON.
    Comment(commentstmt::CommentStmt),
    /// GRANT / REVOKE.
    Grant(grantstmt::GrantStmt),
    /// ALTER DATABASE … [WITH] options.
    AlterDatabase(dbstmt::AlterDatabaseStmt),
    /// CREATE / DROP FUNCTION or PROCEDURE, DO, CALL.
    Function(funcstmt::FuncStmt),
    /// CREATE / DROP TRIGGER, ALTER TABLE … ENABLE / DISABLE TRIGGER.
    Trigger(trigstmt::TrigStmt),
    /// DECLARE … CURSOR, FETCH, MOVE, CLOSE.
    Cursor(cursorstmt::CursorStmt),
    /// CREATE TABLE … AS query.
    CreateTableAs(ctasstmt::CreateTableAs),
    /// Anything `sqlparser` parsed (DML, DDL).
    Sql(Box<sqlparser::ast::Statement>),
}

impl Stmt {
    /// True for statements allowed in a failed transaction block
    /// (PostgreSQL's IsTransactionExitStmt): ROLLBACK, COMMIT and PREPARE
    /// TRANSACTION (both act as ROLLBACK), ROLLBACK TO SAVEPOINT. Not
    /// COMMIT/ROLLBACK PREPARED (25P02 there, as in PostgreSQL).
    pub fn is_transaction_exit(&self) -> bool {
        matches!(
            self,
            Stmt::Commit | Stmt::Rollback | Stmt::RollbackTo(_) | Stmt::PrepareTransaction(_)
        )
    }
}

/// Direction of a COPY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyDirection {
    /// `FROM STDIN`.
    FromStdin,
    /// `TO STDOUT`.
    ToStdout,
}

/// What a COPY reads from or writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopySource {
    /// A table with an optional column list.
    Table {
        /// Table name.
        name: String,
        /// Column list; empty means all columns in order.
        columns: Vec<String>,
    },
    /// `COPY (query) TO STDOUT`: the query's text.
    Query(String),
}

/// COPY data format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// PostgreSQL's text format (tab separated, `\N`, backslash escapes).
    Text,
    /// CSV.
    Csv,
    /// Binary (rejected: 0A000).
    Binary,
}

/// The options of a COPY statement, with PostgreSQL's defaults filled in
/// by [`CopyStmt::finish_options`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyStmt {
    /// Table or query.
    pub source: CopySource,
    /// FROM STDIN or TO STDOUT.
    pub direction: CopyDirection,
    /// Data format.
    pub format: CopyFormat,
    /// `FREEZE`.
    pub freeze: bool,
    /// Field delimiter (tab for text, comma for csv).
    pub delimiter: u8,
    /// The string that means NULL (`\N` for text, empty for csv).
    pub null: String,
    /// `HEADER`.
    pub header: bool,
    /// CSV quote character.
    pub quote: u8,
    /// CSV escape character (defaults to quote).
    pub escape: u8,
}

impl CopyStmt {
    fn new(source: CopySource, direction: CopyDirection) -> CopyStmt {
        CopyStmt {
            source,
            direction,
            format: CopyFormat::Text,
            freeze: false,
            delimiter: 0,
            null: String::new(),
            header: false,
            quote: b'"',
            escape: 0,
        }
    }
}

// ---------------------------------------------------------------------------
// Statement splitting
// ---------------------------------------------------------------------------

/// Splits a query string into statement texts at top-level semicolons.
/// Pieces that hold only whitespace/comments are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut depth = 0i32;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                // E'…' allows backslash escapes; detect the E prefix.
                let escapes = i > 0
                    && (b[i - 1] == b'e' || b[i - 1] == b'E')
                    && (i < 2 || !is_ident_byte(b[i - 2]));
                i = skip_quoted(b, i, b'\'', escapes);
            }
            b'"' => i = skip_quoted(b, i, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'$' if i == 0 || !is_ident_byte(b[i - 1]) => {
                if let Some(end) = skip_dollar_quote(b, i) {
                    i = end;
                } else {
                    i += 1;
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth -= 1;
                i += 1;
            }
            b';' if depth <= 0 => {
                push_piece(sql, start, i, &mut out);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    push_piece(sql, start, b.len(), &mut out);
    out
}

fn push_piece<'a>(sql: &'a str, start: usize, end: usize, out: &mut Vec<&'a str>) {
    let piece = sql.get(start..end).unwrap_or("").trim();
    if !is_blank(piece) {
        out.push(piece);
    }
}

/// True when `s` holds only whitespace and comments.
pub fn is_blank(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
        } else if b[i] == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
        } else {
            return false;
        }
    }
    true
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Returns the index just past the closing quote (or the end of input).
fn skip_quoted(b: &[u8], open: usize, q: u8, backslash: bool) -> usize {
    let mut i = open + 1;
    while i < b.len() {
        if backslash && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

fn skip_block_comment(b: &[u8], open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// `$tag$ … $tag$`: returns the index past the closing tag, or None when the
/// `$` does not open a dollar quote (e.g. a `$1` parameter).
fn skip_dollar_quote(b: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    while j < b.len() && b[j] != b'$' {
        let c = b[j];
        let ok = if j == open + 1 {
            c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
        } else {
            is_ident_byte(c)
        };
        if !ok {
            return None;
        }
        j += 1;
    }
    if j >= b.len() {
        return None;
    }
    let tag = &b[open..=j];
    let mut i = j + 1;
    while i + tag.len() <= b.len() {
        if &b[i..i + tag.len()] == tag {
            return Some(i + tag.len());
        }
        i += 1;
    }
    Some(b.len())
}

// ---------------------------------------------------------------------------
// A small lexer for the pre-dispatched statements
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An unquoted word, lower-cased.
    Word(String),
    /// A `"quoted"` identifier.
    Ident(String),
    /// A string literal's value.
    Str(String),
    /// A number as written.
    Num(String),
    /// One punctuation character.
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

/// The names a statement's text uses (words lower-cased, quoted
/// identifiers as written), and whether it has a `*` other than `(*)`
/// (a select-list or `t.*` wildcard, or a product): what column-level
/// SELECT checks read (`crate::aclchk`). None if the text does not lex.
pub fn names_and_star(sql: &str) -> Option<(Vec<String>, bool)> {
    let toks = lex(sql).ok()?;
    let mut names = Vec::new();
    let mut star = false;
    for (i, t) in toks.iter().enumerate() {
        match &t.tok {
            Tok::Word(w) | Tok::Ident(w) => names.push(w.clone()),
            Tok::Punct('*') => {
                let before = i.checked_sub(1).and_then(|j| toks.get(j)).map(|t| &t.tok);
                let after = toks.get(i + 1).map(|t| &t.tok);
                if !(before == Some(&Tok::Punct('(')) && after == Some(&Tok::Punct(')'))) {
                    star = true;
                }
            }
            _ => {}
        }
    }
    Some((names, star))
}

/// The error position (1-based, in characters) of the name a `CREATE
/// [OR REPLACE] … TABLE | VIEW | SEQUENCE [IF NOT EXISTS] name` creates.
pub fn created_name_position(sql: &str) -> Option<u32> {
    let toks = lex(sql).ok()?;
    let mut it = toks.iter().peekable();
    if !matches!(it.next().map(|t| &t.tok), Some(Tok::Word(w)) if w == "create") {
        return None;
    }
    for t in it.by_ref() {
        if matches!(&t.tok, Tok::Word(w) if matches!(w.as_str(), "table" | "view" | "sequence")) {
            break;
        }
    }
    let mut name = it.next()?;
    if matches!(&name.tok, Tok::Word(w) if w == "if") {
        name = it.nth(2)?;
    }
    Some(char_position(sql, name.start))
}

/// The tokens of `sql` with their byte ranges (the PL/pgSQL parser cuts
/// embedded SQL out of a body by them).
pub(crate) fn lex_spans(sql: &str) -> PgResult<Vec<(Tok, usize, usize)>> {
    Ok(lex(sql)?
        .into_iter()
        .map(|t| (t.tok, t.start, t.end))
        .collect())
}

fn lex(sql: &str) -> PgResult<Vec<Token>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && b.get(i + 1) == Some(&b'-') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
            continue;
        }
        if (c == b'e' || c == b'E') && b.get(i + 1) == Some(&b'\'') {
            let end = skip_quoted(b, i + 1, b'\'', true);
            let v = unescape_e_string(
                sql.get(i + 2..end.saturating_sub(1).max(i + 2))
                    .unwrap_or(""),
            );
            out.push(Token {
                tok: Tok::Str(v),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == b'\'' {
            let end = skip_quoted(b, i, b'\'', false);
            if end > b.len() || end < i + 2 || b[end - 1] != b'\'' {
                return Err(PgError::syntax("unterminated quoted string"));
            }
            let v = sql.get(i + 1..end - 1).unwrap_or("").replace("''", "'");
            out.push(Token {
                tok: Tok::Str(v),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c == b'"' {
            let end = skip_quoted(b, i, b'"', false);
            if end < i + 2 || b[end - 1] != b'"' {
                return Err(PgError::syntax("unterminated quoted identifier"));
            }
            let v = sql.get(i + 1..end - 1).unwrap_or("").replace("\"\"", "\"");
            out.push(Token {
                tok: Tok::Ident(v),
                start,
                end,
            });
            i = end;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Num(sql[start..i].to_string()),
                start,
                end: i,
            });
            continue;
        }
        if c == b'$' {
            if let Some(end) = skip_dollar_quote(b, i) {
                let tag_len = b[i + 1..]
                    .iter()
                    .position(|&x| x == b'$')
                    .map_or(0, |p| p + 2);
                if end < i + 2 * tag_len || b.get(end - tag_len..end) != b.get(i..i + tag_len) {
                    return Err(PgError::syntax(format!(
                        "unterminated dollar-quoted string at or near \"{}\"",
                        sql.get(i..).unwrap_or("")
                    ))
                    .with_position(char_position(sql, i)));
                }
                let v = sql
                    .get(i + tag_len..end - tag_len)
                    .unwrap_or("")
                    .to_string();
                out.push(Token {
                    tok: Tok::Str(v),
                    start,
                    end,
                });
                i = end;
                continue;
            }
        }
        if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (is_ident_byte(b[i]) || b[i] == b'$') {
                i += 1;
            }
            let w = sql.get(start..i).unwrap_or("").to_lowercase();
            out.push(Token {
                tok: Tok::Word(w),
                start,
                end: i,
            });
            continue;
        }
        // Multi-byte characters outside identifiers: take the whole char.
        let ch = sql[i..].chars().next().unwrap_or('?');
        i += ch.len_utf8();
        out.push(Token {
            tok: Tok::Punct(ch),
            start,
            end: i,
        });
    }
    Ok(out)
}

fn unescape_e_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('b') => out.push('\u{8}'),
                Some('f') => out.push('\u{c}'),
                Some(o) => out.push(o),
                None => {}
            }
        } else if c == '\'' && it.peek() == Some(&'\'') {
            it.next();
            out.push('\'');
        } else {
            out.push(c);
        }
    }
    out
}

/// One part of a name double-quoted, as [`Cur::relation_name`] writes
/// names for `namespace::QualName::parse_text`.
pub(crate) fn quote_part(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A cursor over tokens with the helpers a hand parser needs.
pub(crate) struct Cur<'a> {
    sql: &'a str,
    toks: Vec<Token>,
    pub(crate) pos: usize,
}

impl<'a> Cur<'a> {
    pub(crate) fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }
    pub(crate) fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w.as_str()),
            _ => None,
        }
    }
    pub(crate) fn peek_word_at(&self, off: usize) -> Option<&str> {
        match self.toks.get(self.pos + off).map(|t| &t.tok) {
            Some(Tok::Word(w)) => Some(w.as_str()),
            _ => None,
        }
    }
    pub(crate) fn eat_word(&mut self, w: &str) -> bool {
        if self.peek_word() == Some(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub(crate) fn eat_punct(&mut self, p: char) -> bool {
        if self.peek() == Some(&Tok::Punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    /// True if the statement's last tokens are the words `words`
    /// followed by `then` more tokens (a trailing `;` not counted).
    pub(crate) fn ends_with_words(&self, words: &[&str], then: usize) -> bool {
        let mut toks: &[Token] = &self.toks;
        if let [rest @ .., last] = toks {
            if last.tok == Tok::Punct(';') {
                toks = rest;
            }
        }
        let n = words.len() + then;
        if toks.len() < self.pos + n {
            return false;
        }
        let tail = &toks[toks.len() - n..];
        words
            .iter()
            .zip(tail)
            .all(|(w, t)| matches!(&t.tok, Tok::Word(x) if x == w))
    }
    /// The statement's text from token `from` up to (not including)
    /// token `to`.
    pub(crate) fn text_between(&self, from: usize, to: usize) -> &'a str {
        let (Some(a), Some(b)) = (
            self.toks.get(from),
            to.checked_sub(1).and_then(|i| self.toks.get(i)),
        ) else {
            return "";
        };
        self.sql.get(a.start..b.end.max(a.start)).unwrap_or("")
    }
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    /// `IF NOT EXISTS` if it comes next.
    pub(crate) fn eat_if_not_exists(&mut self) -> PgResult<bool> {
        if !self.eat_word("if") {
            return Ok(false);
        }
        self.expect_word("not")?;
        self.expect_word("exists")?;
        Ok(true)
    }

    /// `IF EXISTS` if it comes next.
    pub(crate) fn eat_if_exists(&mut self) -> PgResult<bool> {
        if !self.eat_word("if") {
            return Ok(false);
        }
        self.expect_word("exists")?;
        Ok(true)
    }

    /// `e` with the position of token `at` (PostgreSQL's error cursor).
    pub(crate) fn mark_at(&self, at: usize, e: PgError) -> PgError {
        match self.toks.get(at) {
            Some(t) => e.with_position(char_position(self.sql, t.start)),
            None => e,
        }
    }
    pub(crate) fn error_here(&self) -> PgError {
        match self.toks.get(self.pos) {
            Some(t) => PgError::syntax(format!(
                "syntax error at or near \"{}\"",
                self.sql.get(t.start..t.end).unwrap_or("")
            ))
            .with_position(char_position(self.sql, t.start)),
            None => PgError::syntax("syntax error at end of input")
                .with_position(char_position(self.sql, self.sql.len())),
        }
    }
    pub(crate) fn expect_word(&mut self, w: &str) -> PgResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    pub(crate) fn expect_end(&self) -> PgResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }
    /// An identifier (word or quoted), possibly schema-qualified; the schema
    /// is dropped (one schema).
    pub(crate) fn ident(&mut self) -> PgResult<String> {
        let mut name = self.one_ident()?;
        while self.eat_punct('.') {
            name = self.one_ident()?;
        }
        Ok(name)
    }
    /// A relation name, possibly schema-qualified, as text
    /// `namespace::QualName::parse_text` reads back: each part
    /// double-quoted, joined by dots.
    pub(crate) fn relation_name(&mut self) -> PgResult<String> {
        let mut name = quote_part(&self.one_ident()?);
        while self.eat_punct('.') {
            name.push('.');
            name.push_str(&quote_part(&self.one_ident()?));
        }
        Ok(name)
    }
    /// `(name, …)` if it comes next (column names); empty if not.
    pub(crate) fn column_names(&mut self) -> PgResult<Vec<String>> {
        let mut names = Vec::new();
        if self.eat_punct('(') {
            loop {
                names.push(self.one_ident()?);
                if self.eat_punct(')') {
                    break;
                }
                if !self.eat_punct(',') {
                    return Err(self.error_here());
                }
            }
        }
        Ok(names)
    }
    pub(crate) fn one_ident(&mut self) -> PgResult<String> {
        match self.peek().cloned() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(w)
            }
            Some(Tok::Ident(w)) => {
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error_here()),
        }
    }
    pub(crate) fn string(&mut self) -> PgResult<String> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.error_here()),
        }
    }
}

// ---------------------------------------------------------------------------
// Pre-dispatch
// ---------------------------------------------------------------------------

/// Parses a view's stored query text.
pub fn parse_view_query(text: &str) -> PgResult<sqlparser::ast::Query> {
    match parse_one(text)? {
        Stmt::Sql(s) => match *s {
            sqlparser::ast::Statement::Query(q) => Ok(*q),
            _ => Err(PgError::internal("view definition is not a query")),
        },
        _ => Err(PgError::internal("view definition is not a query")),
    }
}

/// The `on_cluster` of an ALTER TABLE statement that was written ALTER
/// VIEW (a ClickHouse clause PostgreSQL's dialect never produces).
pub const ALTER_VIEW_MARK: &str = "ALTER VIEW";

/// Parses one statement's text (no top-level `;`).
pub fn parse_one(sql: &str) -> PgResult<Stmt> {
    if is_blank(sql) {
        return Ok(Stmt::Empty);
    }
    let toks = lex(sql)?;
    let mut c = Cur { sql, toks, pos: 0 };
    let first = c.peek_word().unwrap_or("").to_string();
    let handled = match first.as_str() {
        "begin" => {
            c.pos += 1;
            let _ = c.eat_word("work") || c.eat_word("transaction");
            let (isolation, read_only, deferrable) = transaction_modes(&mut c)?;
            c.expect_end()?;
            Some(Stmt::Begin {
                isolation,
                read_only,
                deferrable,
                start: false,
            })
        }
        "start" => {
            c.pos += 1;
            c.expect_word("transaction")?;
            let (isolation, read_only, deferrable) = transaction_modes(&mut c)?;
            c.expect_end()?;
            Some(Stmt::Begin {
                isolation,
                read_only,
                deferrable,
                start: true,
            })
        }
        "commit" | "end" => {
            c.pos += 1;
            if first == "commit" && c.eat_word("prepared") {
                let gid = c.string()?;
                c.expect_end()?;
                Some(Stmt::CommitPrepared(gid))
            } else {
                let _ = c.eat_word("work") || c.eat_word("transaction");
                and_no_chain(&mut c)?;
                c.expect_end()?;
                Some(Stmt::Commit)
            }
        }
        "rollback" | "abort" => {
            c.pos += 1;
            if first == "rollback" && c.eat_word("prepared") {
                let gid = c.string()?;
                c.expect_end()?;
                Some(Stmt::RollbackPrepared(gid))
            } else {
                let _ = c.eat_word("work") || c.eat_word("transaction");
                if first == "rollback" && c.eat_word("to") {
                    let _ = c.eat_word("savepoint");
                    let name = c.one_ident()?;
                    c.expect_end()?;
                    Some(Stmt::RollbackTo(name))
                } else {
                    and_no_chain(&mut c)?;
                    c.expect_end()?;
                    Some(Stmt::Rollback)
                }
            }
        }
        "savepoint" => {
            c.pos += 1;
            let name = c.one_ident()?;
            c.expect_end()?;
            Some(Stmt::Savepoint(name))
        }
        "release" => {
            c.pos += 1;
            let _ = c.eat_word("savepoint");
            let name = c.one_ident()?;
            c.expect_end()?;
            Some(Stmt::Release(name))
        }
        "prepare" if c.peek_word_at(1) == Some("transaction") => {
            c.pos += 2;
            let gid = c.string()?;
            c.expect_end()?;
            Some(Stmt::PrepareTransaction(gid))
        }
        "alter" if c.peek_word_at(1) == Some("system") => {
            c.pos += 2;
            if c.eat_word("reset") {
                let name = if c.eat_word("all") {
                    None
                } else {
                    Some(setting_name(&mut c)?)
                };
                c.expect_end()?;
                Some(Stmt::AlterSystem { name, value: None })
            } else {
                // `SET name = value` as SET parses it.
                match parse_set(&mut c)? {
                    Stmt::Set {
                        name,
                        value,
                        local: false,
                    } => Some(Stmt::AlterSystem {
                        name: Some(name),
                        value,
                    }),
                    _ => return Err(c.error_here()),
                }
            }
        }
        "set" => Some(parse_set(&mut c)?),
        "reset" => {
            c.pos += 1;
            if c.eat_word("all") {
                c.expect_end()?;
                Some(Stmt::Reset(None))
            } else {
                let name = setting_name(&mut c)?;
                c.expect_end()?;
                Some(Stmt::Reset(Some(name)))
            }
        }
        "show" => {
            c.pos += 1;
            if c.eat_word("all") {
                c.expect_end()?;
                Some(Stmt::Show(None))
            } else {
                let name = setting_name(&mut c)?;
                c.expect_end()?;
                Some(Stmt::Show(Some(name)))
            }
        }
        "vacuum" => Some(parse_vacuum(&mut c)?),
        "analyze" | "analyse" => {
            c.pos += 1;
            let _ = c.eat_word("verbose");
            if c.eat_punct('(') {
                skip_paren_options(&mut c)?;
            }
            let (tables, columns) = table_list(&mut c)?;
            c.expect_end()?;
            Some(Stmt::Analyze { tables, columns })
        }
        "checkpoint" => {
            c.pos += 1;
            c.expect_end()?;
            Some(Stmt::Checkpoint)
        }
        "copy" => Some(parse_copy(&mut c)?),
        "alter"
            if c.peek_word_at(1) == Some("view")
                && c.peek_word_at(3) == Some("owner")
                && c.peek_word_at(4) == Some("to") =>
        {
            // sqlparser knows only `ALTER VIEW … AS query`: OWNER TO
            // becomes an ALTER TABLE … OWNER TO marked as ALTER VIEW.
            c.pos += 2;
            let view = c.one_ident()?;
            c.pos += 2;
            let owner = c.one_ident()?;
            c.expect_end()?;
            let name =
                sqlparser::ast::ObjectName(vec![sqlparser::ast::Ident::with_quote('"', view)]);
            let new_owner = match owner.as_str() {
                "current_user" => sqlparser::ast::Owner::CurrentUser,
                "current_role" => sqlparser::ast::Owner::CurrentRole,
                "session_user" => sqlparser::ast::Owner::SessionUser,
                _ => sqlparser::ast::Owner::Ident(sqlparser::ast::Ident::with_quote('"', owner)),
            };
            Some(Stmt::Sql(Box::new(sqlparser::ast::Statement::AlterTable {
                name,
                if_exists: false,
                only: false,
                operations: vec![sqlparser::ast::AlterTableOperation::OwnerTo { new_owner }],
                location: None,
                on_cluster: Some(sqlparser::ast::Ident::new(ALTER_VIEW_MARK)),
            })))
        }
        "alter" if c.peek_word_at(1) == Some("view") && c.peek_word_at(3) == Some("rename") => {
            // sqlparser knows only `ALTER VIEW … AS query`: RENAME TO becomes
            // an ALTER TABLE … RENAME marked as ALTER VIEW (its command tag).
            c.pos += 2;
            let old = c.one_ident()?;
            c.expect_word("rename")?;
            c.expect_word("to")?;
            let new = c.one_ident()?;
            c.expect_end()?;
            let name = |n: String| {
                sqlparser::ast::ObjectName(vec![sqlparser::ast::Ident::with_quote('"', n)])
            };
            Some(Stmt::Sql(Box::new(sqlparser::ast::Statement::AlterTable {
                name: name(old),
                if_exists: false,
                only: false,
                operations: vec![sqlparser::ast::AlterTableOperation::RenameTable {
                    table_name: name(new),
                }],
                location: None,
                on_cluster: Some(sqlparser::ast::Ident::new(ALTER_VIEW_MARK)),
            })))
        }
        _ if cursorstmt::is_cursor_statement(&c) => Some(Stmt::Cursor(cursorstmt::parse(&mut c)?)),
        "create" if ctasstmt::is_create_table_as(&c) => {
            Some(Stmt::CreateTableAs(ctasstmt::parse(&mut c)?))
        }
        _ if funcstmt::is_function_statement(&c) => Some(Stmt::Function(funcstmt::parse(&mut c)?)),
        _ if trigstmt::is_trigger_statement(&c) => Some(Stmt::Trigger(trigstmt::parse(&mut c)?)),
        "alter" if dbstmt::is_alter_database(&c) => {
            Some(Stmt::AlterDatabase(dbstmt::parse(&mut c)?))
        }
        w if typestmt::is_type_statement(w, c.peek_word_at(1)) => {
            Some(Stmt::Type(typestmt::parse(&mut c)?))
        }
        "alter" | "create" if seqstmt::is_sequence_statement(&c) => {
            Some(Stmt::Sequence(seqstmt::parse(&mut c)?))
        }
        "grant" | "revoke" | "alter" if grantstmt::is_grant_statement(&c) => {
            Some(Stmt::Grant(grantstmt::parse(&mut c)?))
        }
        "comment" if commentstmt::is_comment_statement(&c) => {
            Some(Stmt::Comment(commentstmt::parse(&mut c)?))
        }
        "alter" if schemastmt::is_schema_statement(&c) => {
            Some(Stmt::Schema(schemastmt::parse(&mut c)?))
        }
        w if crate::roles::is_role_statement(w, c.peek_word_at(1), c.peek_word_at(2)) => {
            Some(Stmt::Role(crate::roles::parse(&mut c)?))
        }
        _ => None,
    };
    if let Some(s) = handled {
        return Ok(s);
    }
    match parse_with_sqlparser(sql)? {
        Stmt::Sql(s) => Ok(match ctasstmt::from_select_into(&s) {
            Some(c) => Stmt::CreateTableAs(c),
            None => Stmt::Sql(s),
        }),
        other => Ok(other),
    }
}

/// PostgreSQL's error position: the 1-based character (not byte) index of
/// `byte` in `sql`, as psql expects for its `LINE n:` caret.
fn char_position(sql: &str, byte: usize) -> u32 {
    let prefix = sql.get(..byte).unwrap_or(sql);
    u32::try_from(prefix.chars().count())
        .unwrap_or(u32::MAX)
        .saturating_add(1)
}

/// The byte offset of sqlparser's "Line: L, Column: C" (both 1-based,
/// columns in characters) within `sql`, when the message carries one.
fn sqlparser_location(sql: &str, msg: &str) -> Option<usize> {
    let at = msg.rfind("Line: ")?;
    let rest = &msg[at + "Line: ".len()..];
    let (line, rest) = rest.split_once(", Column: ")?;
    let line: usize = line.trim().parse().ok()?;
    let column: usize = rest
        .trim_end()
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()?;
    let line_start = if line <= 1 {
        0
    } else {
        sql.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let line_text = sql.get(line_start..)?;
    let offset = line_text
        .char_indices()
        .nth(column.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(line_text.len());
    Some(line_start + offset)
}

/// `sqlparser` with its PostgreSQL dialect, over tokens where `TOP` is a
/// plain word: PostgreSQL has no `SELECT TOP n`, so `top` is an ordinary
/// name (`) top` as a derived table's alias, a column `top`), which
/// `sqlparser` would otherwise read as the MSSQL keyword.
fn sqlparser_statements(
    sql: &str,
) -> Result<Vec<sqlparser::ast::Statement>, sqlparser::parser::ParserError> {
    let dialect = PostgreSqlDialect {};
    let mut tokens =
        sqlparser::tokenizer::Tokenizer::new(&dialect, sql).tokenize_with_location()?;
    for t in &mut tokens {
        if let sqlparser::tokenizer::Token::Word(w) = &mut t.token {
            if w.keyword == sqlparser::keywords::Keyword::TOP && w.quote_style.is_none() {
                w.keyword = sqlparser::keywords::Keyword::NoKeyword;
            }
        }
    }
    mark_references_without_columns(&mut tokens);
    mark_overriding(&mut tokens);
    mark_not_valid(&mut tokens);
    mark_match(&mut tokens);
    mark_conflict_inference(&mut tokens);
    mark_typed_literals(&mut tokens);
    mark_order_using(&mut tokens);
    mark_variadic(&mut tokens);
    Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
}

/// The argument name a call's `VARIADIC arg` becomes (see
/// [`mark_variadic`]); the binder takes it as "this array is the
/// variadic parameter itself".
pub const VARIADIC_ARG: &str = "\u{1}variadic";

/// sqlparser 0.52 has no `f(…, VARIADIC array)`: an unquoted `VARIADIC`
/// right after a call's `(` or `,` becomes the named-argument prefix
/// `"`[`VARIADIC_ARG`]`" =>`. (CREATE / DROP FUNCTION, where VARIADIC
/// is a parameter mode, are parsed without sqlparser.)
fn mark_variadic(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let mut i = 0;
    while i < tokens.len() {
        let is_kw = matches!(&tokens[i].token, Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("variadic"));
        let after_open = tokens[..i]
            .iter()
            .rev()
            .find(|t| !matches!(t.token, Token::Whitespace(_)))
            .is_some_and(|t| matches!(t.token, Token::LParen | Token::Comma));
        if !is_kw || !after_open {
            i += 1;
            continue;
        }
        let location = tokens[i].location;
        let name = Token::Word(Word {
            value: VARIADIC_ARG.to_string(),
            quote_style: Some('"'),
            keyword: sqlparser::keywords::Keyword::NoKeyword,
        });
        tokens.splice(
            i..=i,
            [
                TokenWithLocation {
                    token: name,
                    location,
                },
                TokenWithLocation {
                    token: Token::RArrow,
                    location,
                },
            ],
        );
        i += 2;
    }
}

/// sqlparser 0.52 has no `ORDER BY x USING <` / `USING >`: the sort by
/// the default btree class's less-than or greater-than operator is ASC or
/// DESC, so the two tokens become that keyword. `USING` before anything
/// but `<` or `>` (JOIN … USING (…), DELETE … USING t, CREATE INDEX …
/// USING btree) is left alone.
fn mark_order_using(tokens: &mut [sqlparser::tokenizer::TokenWithLocation]) {
    use sqlparser::tokenizer::{Token, Whitespace};
    let mut i = 0;
    while i < tokens.len() {
        let using = matches!(&tokens[i].token, Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("using"));
        if !using {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len() && matches!(tokens[j].token, Token::Whitespace(_)) {
            j += 1;
        }
        let word = match tokens.get(j).map(|t| &t.token) {
            Some(Token::Lt) => "ASC",
            Some(Token::Gt) => "DESC",
            _ => {
                i += 1;
                continue;
            }
        };
        tokens[i].token = Token::make_keyword(word);
        tokens[j].token = Token::Whitespace(Whitespace::Space);
        i = j + 1;
    }
}

/// The column names standing for `OVERRIDING SYSTEM VALUE` / `OVERRIDING
/// USER VALUE` in an INSERT's column list (see [`mark_overriding`]); no
/// SQL identifier can be them.
pub const OVERRIDING_SYSTEM: &str = "\u{1}overriding system value";
/// See [`OVERRIDING_SYSTEM`].
pub const OVERRIDING_USER: &str = "\u{1}overriding user value";

/// sqlparser 0.52 has no `INSERT … OVERRIDING {SYSTEM | USER} VALUE`
/// (what pg_dump writes for identity columns): the three words become a
/// marker column ([`OVERRIDING_SYSTEM`], [`OVERRIDING_USER`]) at the end of
/// the column list, or a list of the marker alone, which the planner
/// takes off.
fn mark_overriding(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let word = |t: &Token, w: &str| matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let next = |tokens: &[TokenWithLocation], mut i: usize| {
        while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    while i < tokens.len() {
        if !word(&tokens[i].token, "overriding") {
            i += 1;
            continue;
        }
        let j = next(tokens, i + 1);
        let k = next(tokens, j + 1);
        let which = match tokens.get(j).map(|t| &t.token) {
            Some(t) if word(t, "system") => OVERRIDING_SYSTEM,
            Some(t) if word(t, "user") => OVERRIDING_USER,
            _ => {
                i += 1;
                continue;
            }
        };
        if !tokens.get(k).is_some_and(|t| word(&t.token, "value")) {
            i += 1;
            continue;
        }
        // The significant token before OVERRIDING: `)` ends a column list.
        let mut p = i;
        while p > 0 && matches!(tokens[p - 1].token, Token::Whitespace(_)) {
            p -= 1;
        }
        let location = tokens[i].location;
        let at = |token| TokenWithLocation { token, location };
        let marker = Token::Word(Word {
            value: which.to_string(),
            quote_style: Some('"'),
            keyword: Keyword::NoKeyword,
        });
        tokens.drain(i..=k);
        if p > 0 && matches!(tokens[p - 1].token, Token::RParen) {
            tokens.splice(p - 1..p - 1, [at(Token::Comma), at(marker)]);
        } else {
            tokens.splice(i..i, [at(Token::LParen), at(marker), at(Token::RParen)]);
        }
        i += 3;
    }
}

/// The first word of the statement holding token `i` (lower case): the
/// token passes below act only inside the statements they are for.
fn statement_verb(tokens: &[sqlparser::tokenizer::TokenWithLocation], i: usize) -> String {
    use sqlparser::tokenizer::Token;
    let start = tokens[..i.min(tokens.len())]
        .iter()
        .rposition(|t| matches!(t.token, Token::SemiColon))
        .map_or(0, |p| p + 1);
    tokens[start..]
        .iter()
        .find_map(|t| match &t.token {
            Token::Whitespace(_) => None,
            Token::Word(w) => Some(w.value.to_ascii_lowercase()),
            _ => Some(String::new()),
        })
        .unwrap_or_default()
}

/// The referenced-column name standing for `MATCH FULL` (and
/// [`MATCH_PARTIAL`]) at the end of a `REFERENCES t (…)` list; see
/// [`mark_match`].
pub const MATCH_FULL: &str = "\u{1}match full";
/// See [`MATCH_FULL`].
pub const MATCH_PARTIAL: &str = "\u{1}match partial";

/// sqlparser 0.52 has no `MATCH FULL | PARTIAL | SIMPLE` after `REFERENCES
/// t (cols)` (every REFERENCES has a column list by now, see
/// [`mark_references_without_columns`]): SIMPLE, the default, is taken
/// off; FULL and PARTIAL become a marker column at the end of the list.
fn mark_match(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let is = |t: Option<&TokenWithLocation>, w: &str| matches!(t.map(|t| &t.token), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let mut i = 0;
    while i < tokens.len() {
        if !is(tokens.get(i), "match")
            || !matches!(statement_verb(tokens, i).as_str(), "create" | "alter")
        {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len() && matches!(tokens[j].token, Token::Whitespace(_)) {
            j += 1;
        }
        let marker = if is(tokens.get(j), "full") {
            Some(MATCH_FULL)
        } else if is(tokens.get(j), "partial") {
            Some(MATCH_PARTIAL)
        } else if is(tokens.get(j), "simple") {
            None
        } else {
            i += 1;
            continue;
        };
        // The `)` closing the referenced columns.
        let mut p = i;
        while p > 0 && matches!(tokens[p - 1].token, Token::Whitespace(_)) {
            p -= 1;
        }
        if p == 0 || !matches!(tokens[p - 1].token, Token::RParen) {
            i += 1;
            continue;
        }
        tokens.drain(i..=j);
        if let Some(m) = marker {
            let location = tokens[p - 1].location;
            let at = |token| TokenWithLocation { token, location };
            let word = Token::Word(Word {
                value: m.to_string(),
                quote_style: Some('"'),
                keyword: Keyword::NoKeyword,
            });
            tokens.splice(p - 1..p - 1, [at(Token::Comma), at(word)]);
        }
        i = p;
    }
}

/// Type names whose `type 'string'` literal form sqlparser 0.52 does not
/// parse (it takes only its own data type keywords there).
const TYPED_LITERAL_TYPES: &[&str] = &["inet", "cidr"];

/// `inet '10.0.0.1'` (a type name before a string constant, PostgreSQL's
/// typed literal) becomes `'10.0.0.1'::inet` for the types in
/// [`TYPED_LITERAL_TYPES`]; the cast is what PostgreSQL makes of it too.
fn mark_typed_literals(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::tokenizer::{Token, TokenWithLocation};
    let mut i = 0;
    while i < tokens.len() {
        let typed = matches!(&tokens[i].token, Token::Word(w)
            if w.quote_style.is_none()
                && TYPED_LITERAL_TYPES.iter().any(|t| w.value.eq_ignore_ascii_case(t)));
        let mut j = i + 1;
        while j < tokens.len() && matches!(tokens[j].token, Token::Whitespace(_)) {
            j += 1;
        }
        let string = matches!(
            tokens.get(j).map(|t| &t.token),
            Some(Token::SingleQuotedString(_))
        );
        if !typed || !string {
            i += 1;
            continue;
        }
        let at = |t: &TokenWithLocation, token| TokenWithLocation {
            token,
            location: t.location,
        };
        let cast = [
            tokens[j].clone(),
            at(&tokens[j], Token::DoubleColon),
            at(&tokens[i], tokens[i].token.clone()),
        ];
        tokens.splice(i..=j, cast);
        i += 3;
    }
}

/// A constraint name starting with this was added `NOT VALID` (the rest
/// is its name, empty for none); see [`mark_not_valid`].
pub const NOT_VALID: &str = "\u{1}not valid\u{1}";
/// The new name `ALTER TABLE t VALIDATE CONSTRAINT c` renames `c` to
/// (see [`mark_not_valid`]).
pub const VALIDATE: &str = "\u{1}validate";

/// sqlparser 0.52 has neither `ADD CONSTRAINT … NOT VALID` nor `VALIDATE
/// CONSTRAINT`: `NOT VALID` after an ALTER TABLE's ADD is taken off and
/// the constraint's name marked ([`NOT_VALID`] + name, a name inserted
/// for an unnamed one); `VALIDATE CONSTRAINT c` becomes `RENAME
/// CONSTRAINT c TO` [`VALIDATE`], which `tablecmds` turns back.
fn mark_not_valid(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let is = |t: Option<&TokenWithLocation>, w: &str| matches!(t.map(|t| &t.token), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    let next = |tokens: &[TokenWithLocation], mut i: usize| {
        while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
            i += 1;
        }
        i
    };
    let marker = |value: String| {
        Token::Word(Word {
            value,
            quote_style: Some('"'),
            keyword: Keyword::NoKeyword,
        })
    };
    let mut i = 0;
    while i < tokens.len() {
        if !(is(tokens.get(i), "validate") || is(tokens.get(i), "not"))
            || statement_verb(tokens, i) != "alter"
        {
            i += 1;
            continue;
        }
        // VALIDATE CONSTRAINT c → RENAME CONSTRAINT c TO "<VALIDATE>".
        if is(tokens.get(i), "validate") {
            let j = next(tokens, i + 1);
            let k = next(tokens, j + 1);
            if is(tokens.get(j), "constraint")
                && matches!(tokens.get(k).map(|t| &t.token), Some(Token::Word(_)))
            {
                let location = tokens[i].location;
                let at = |token| TokenWithLocation { token, location };
                tokens[i] = at(Token::make_keyword("RENAME"));
                let rename = [
                    at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                    at(Token::make_keyword("TO")),
                    at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                    at(marker(VALIDATE.to_string())),
                ];
                tokens.splice(k + 1..k + 1, rename);
                i = k + 5;
                continue;
            }
        }
        if !(is(tokens.get(i), "not") && is(tokens.get(next(tokens, i + 1)), "valid")) {
            i += 1;
            continue;
        }
        let end = next(tokens, i + 1);
        // The ADD this NOT VALID ends.
        let start = tokens[..i]
            .iter()
            .rposition(|t| matches!(t.token, Token::SemiColon))
            .map_or(0, |p| p + 1);
        let Some(add) = (start..i).rev().find(|&p| is(tokens.get(p), "add")) else {
            i += 1;
            continue;
        };
        tokens.drain(i..=end);
        let c = next(tokens, add + 1);
        if is(tokens.get(c), "constraint") {
            let n = next(tokens, c + 1);
            if let Some(Token::Word(w)) = tokens.get(n).map(|t| t.token.clone()) {
                let name = if w.quote_style.is_some() {
                    w.value
                } else {
                    w.value.to_lowercase()
                };
                tokens[n].token = marker(format!("{NOT_VALID}{name}"));
            }
        } else {
            let location = tokens[add].location;
            let at = |token| TokenWithLocation { token, location };
            let ins = [
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                at(Token::make_keyword("CONSTRAINT")),
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                at(marker(NOT_VALID.to_string())),
            ];
            tokens.splice(add + 1..add + 1, ins);
        }
        i = add + 1;
    }
}

/// The column name standing for "the referenced table's primary key" in
/// `REFERENCES t` written without a column list (see
/// [`mark_references_without_columns`]); no SQL identifier can be it.
pub const PRIMARY_KEY_COLUMNS: &str = "\u{1}primary key";

/// sqlparser 0.52 requires a column list after `REFERENCES t` in a table
/// constraint, where PostgreSQL takes the primary key when there is none:
/// adds `("\u{1}primary key")` ([`PRIMARY_KEY_COLUMNS`]) after a
/// referenced table name not followed by `(`.
fn mark_references_without_columns(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let significant = |tokens: &[TokenWithLocation], mut i: usize| {
        while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    while i < tokens.len() {
        let is_ref = matches!(&tokens[i].token, Token::Word(w) if w.keyword == Keyword::REFERENCES);
        i += 1;
        if !is_ref {
            continue;
        }
        // The (possibly qualified) table name.
        let mut j = significant(tokens, i);
        if !matches!(tokens.get(j).map(|t| &t.token), Some(Token::Word(_))) {
            continue;
        }
        j += 1;
        while matches!(tokens.get(j).map(|t| &t.token), Some(Token::Period))
            && matches!(tokens.get(j + 1).map(|t| &t.token), Some(Token::Word(_)))
        {
            j += 2;
        }
        let k = significant(tokens, j);
        if matches!(tokens.get(k).map(|t| &t.token), Some(Token::LParen)) {
            continue;
        }
        let location = tokens[j - 1].location;
        let at = |token| TokenWithLocation { token, location };
        let word = Token::Word(Word {
            value: PRIMARY_KEY_COLUMNS.to_string(),
            quote_style: Some('"'),
            keyword: Keyword::NoKeyword,
        });
        tokens.splice(j..j, [at(Token::LParen), at(word), at(Token::RParen)]);
        i = j + 3;
    }
}

/// The start of the constraint name standing for an `ON CONFLICT`
/// inference with expressions or a `WHERE` (see
/// [`mark_conflict_inference`]); no SQL identifier can be it.
pub const CONFLICT_INFERENCE: &str = "\u{1}infer:";

/// What separates the elements from the `WHERE` text in a
/// [`CONFLICT_INFERENCE`] name.
pub const CONFLICT_INFERENCE_WHERE: &str = "\u{1}where:";

/// sqlparser 0.52 takes only column names in `ON CONFLICT (…)` and no
/// `WHERE` after them; PostgreSQL infers a unique index on expressions
/// (`ON CONFLICT (lower(email))`) or a partial one (`… WHERE deleted IS
/// NULL`). Such a target becomes `ON CONFLICT ON CONSTRAINT "<name>"`
/// whose name carries the text ([`CONFLICT_INFERENCE`]); the planner
/// matches it against the unique indexes.
fn mark_conflict_inference(tokens: &mut Vec<sqlparser::tokenizer::TokenWithLocation>) {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, TokenWithLocation, Word};
    let significant = |tokens: &[TokenWithLocation], mut i: usize| {
        while i < tokens.len() && matches!(tokens[i].token, Token::Whitespace(_)) {
            i += 1;
        }
        i
    };
    let is_kw = |t: Option<&TokenWithLocation>, k: Keyword| matches!(t.map(|t| &t.token), Some(Token::Word(w)) if w.keyword == k && w.quote_style.is_none());
    let text = |toks: &[TokenWithLocation]| -> String {
        toks.iter()
            .map(|t| match &t.token {
                Token::SingleQuotedString(s) => format!("'{}'", s.replace('\'', "''")),
                other => other.to_string(),
            })
            .collect::<String>()
    };
    let mut i = 0;
    while i < tokens.len() {
        if !is_kw(tokens.get(i), Keyword::ON) {
            i += 1;
            continue;
        }
        let c = significant(tokens, i + 1);
        if !is_kw(tokens.get(c), Keyword::CONFLICT) {
            i += 1;
            continue;
        }
        let open = significant(tokens, c + 1);
        if !matches!(tokens.get(open).map(|t| &t.token), Some(Token::LParen)) {
            i = open;
            continue;
        }
        // The matching parenthesis; anything but names and commas inside
        // is an expression.
        let mut depth = 0;
        let mut close = None;
        let mut plain = true;
        for (k, t) in tokens.iter().enumerate().skip(open) {
            match &t.token {
                Token::LParen => {
                    depth += 1;
                    if depth > 1 {
                        plain = false;
                    }
                }
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                Token::Word(_) | Token::Comma | Token::Whitespace(_) => {}
                _ => plain = false,
            }
        }
        let Some(close) = close else { return };
        // An optional WHERE up to DO.
        let after = significant(tokens, close + 1);
        let mut end = close + 1;
        let mut pred = None;
        if is_kw(tokens.get(after), Keyword::WHERE) {
            let mut k = after + 1;
            let mut depth = 0;
            while k < tokens.len() {
                match &tokens[k].token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth -= 1,
                    Token::Word(w) if depth == 0 && w.keyword == Keyword::DO => break,
                    _ => {}
                }
                k += 1;
            }
            pred = Some(text(&tokens[after + 1..k]).trim().to_string());
            end = k;
        }
        if plain && pred.is_none() {
            i = close + 1;
            continue;
        }
        let mut name = format!(
            "{CONFLICT_INFERENCE}{}",
            text(&tokens[open + 1..close]).trim()
        );
        if let Some(p) = pred {
            name.push_str(CONFLICT_INFERENCE_WHERE);
            name.push_str(&p);
        }
        let location = tokens[open].location;
        let at = |token| TokenWithLocation { token, location };
        let word = |value: &str, keyword, quote_style| {
            Token::Word(Word {
                value: value.to_string(),
                quote_style,
                keyword,
            })
        };
        let replacement = [
            at(word("ON", Keyword::ON, None)),
            at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            at(word("CONSTRAINT", Keyword::CONSTRAINT, None)),
            at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            at(word(&name, Keyword::NoKeyword, Some('"'))),
            at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
        ];
        tokens.splice(open..end, replacement);
        i = open + 6;
    }
}

fn parse_with_sqlparser(sql: &str) -> PgResult<Stmt> {
    let mut stmts = sqlparser_statements(sql).map_err(|e| {
        let msg = e.to_string();
        let position = |err: PgError, at_end: bool| {
            let byte = if at_end {
                Some(sql.trim_end().len())
            } else {
                sqlparser_location(sql, &msg)
            };
            match byte {
                Some(b) => err.with_position(char_position(sql, b)),
                None => err,
            }
        };
        // sqlparser's messages look like "sql parser error: Expected: …, found: x".
        let found = msg
            .rsplit("found: ")
            .next()
            .filter(|_| msg.contains("found: "))
            .map(|f| {
                let f = f.split(" at Line").next().unwrap_or(f).trim();
                f.to_string()
            });
        match found {
            Some(f) if f == "EOF" => position(
                PgError::syntax("syntax error at end of input").with_detail(msg.clone()),
                true,
            ),
            Some(f) => position(
                PgError::syntax(format!("syntax error at or near \"{f}\""))
                    .with_detail(msg.clone()),
                false,
            ),
            None => PgError::syntax(msg.clone()),
        }
    })?;
    for st in &mut stmts {
        let _ = sqlparser::ast::visit_expressions_mut(st, |e| {
            fix_is_precedence(e);
            std::ops::ControlFlow::<()>::Continue(())
        });
        if let Some(op) = chained_comparison(st) {
            let e = PgError::syntax(format!("syntax error at or near \"{op}\""));
            return Err(match chained_comparison_position(sql) {
                Some(b) => e.with_position(char_position(sql, b)),
                None => e,
            });
        }
    }
    match stmts.len() {
        0 => Ok(Stmt::Empty),
        1 => Ok(Stmt::Sql(Box::new(stmts.remove(0)))),
        _ => Err(PgError::syntax("cannot parse several statements here")),
    }
}

fn is_comparison(op: &sqlparser::ast::BinaryOperator) -> bool {
    use sqlparser::ast::BinaryOperator as B;
    matches!(op, B::Lt | B::Gt | B::LtEq | B::GtEq | B::Eq | B::NotEq)
}

/// The operator of a comparison whose left operand is an unparenthesised
/// comparison (`1 < 2 = true`): sqlparser chains them left to right,
/// PostgreSQL's grammar makes them non-associative — a syntax error at
/// the second operator.
fn chained_comparison(st: &sqlparser::ast::Statement) -> Option<String> {
    use sqlparser::ast::Expr;
    let mut found = None;
    let _ = sqlparser::ast::visit_expressions(st, |e| {
        if let Expr::BinaryOp { left, op, .. } = e {
            if is_comparison(op)
                && matches!(left.as_ref(), Expr::BinaryOp { op: l, .. } if is_comparison(l))
            {
                found = Some(op.to_string());
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    found
}

/// The byte offset of the second of two comparison operators in a row at
/// one nesting level (what [`chained_comparison`] found).
fn chained_comparison_position(sql: &str) -> Option<usize> {
    let toks = lex(sql).ok()?;
    let op_char = |t: &Token| matches!(t.tok, Tok::Punct('<' | '>' | '=' | '!'));
    // Per nesting depth: whether a comparison was seen since the last
    // boundary (a comma, a keyword that starts another operand).
    let mut seen: Vec<bool> = vec![false];
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        match &t.tok {
            Tok::Punct('(') => seen.push(false),
            Tok::Punct(')') => {
                seen.pop();
                if seen.is_empty() {
                    seen.push(false);
                }
            }
            Tok::Punct(',' | ';') => *seen.last_mut()? = false,
            Tok::Word(w)
                if matches!(
                    w.as_str(),
                    "and"
                        | "or"
                        | "not"
                        | "when"
                        | "then"
                        | "else"
                        | "case"
                        | "end"
                        | "where"
                        | "on"
                        | "having"
                        | "select"
                        | "from"
                        | "set"
                        | "between"
                        | "returning"
                ) =>
            {
                *seen.last_mut()? = false
            }
            _ if op_char(t) => {
                let start = t.start;
                while toks.get(i + 1).is_some_and(op_char) && toks[i + 1].start == toks[i].end {
                    i += 1;
                }
                let level = seen.last_mut()?;
                if *level {
                    return Some(start);
                }
                *level = true;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// sqlparser 0.52 parses the right operand of `IS [NOT] DISTINCT FROM`
/// as a whole expression, so `a IS DISTINCT FROM b AND c` comes back as
/// `a IS DISTINCT FROM (b AND c)`. In PostgreSQL IS binds tighter than
/// NOT / AND / OR and is left-associative with the other IS tests: the
/// operand ends at the first AND / OR / IS. A parenthesised operand is an
/// `Expr::Nested` and stays as written. Called on every expression after
/// its children (the visitor is post-order), it rotates
/// `a IS DISTINCT FROM (l op r)` into `(a IS DISTINCT FROM l) op r` and
/// repeats on the new left side.
fn fix_is_precedence(e: &mut sqlparser::ast::Expr) {
    use sqlparser::ast::{Expr, Value};
    let rhs = match e {
        Expr::IsDistinctFrom(_, r) | Expr::IsNotDistinctFrom(_, r) => r,
        _ => return,
    };
    if is_cut_slot(rhs).is_none() {
        return;
    }
    // a IS DISTINCT FROM (l op r): l becomes the test's right side, and the
    // test takes l's place in `op`.
    let mut outer = std::mem::replace(&mut **rhs, Expr::Value(Value::Null));
    let Some(slot) = is_cut_slot(&mut outer) else {
        **rhs = outer;
        return;
    };
    **rhs = std::mem::replace(&mut **slot, Expr::Value(Value::Null));
    **slot = std::mem::replace(e, Expr::Value(Value::Null));
    // Its new right side may need the same again.
    fix_is_precedence(slot);
    *e = outer;
}

/// Where [`fix_is_precedence`] cuts an IS test's right side: the leftmost
/// operand of an AND / OR or of another IS test, which bind looser.
fn is_cut_slot(e: &mut sqlparser::ast::Expr) -> Option<&mut Box<sqlparser::ast::Expr>> {
    use sqlparser::ast::{BinaryOperator, Expr};
    match e {
        Expr::BinaryOp {
            op: BinaryOperator::And | BinaryOperator::Or,
            left,
            ..
        } => Some(left),
        Expr::IsNull(x)
        | Expr::IsNotNull(x)
        | Expr::IsTrue(x)
        | Expr::IsNotTrue(x)
        | Expr::IsFalse(x)
        | Expr::IsNotFalse(x)
        | Expr::IsUnknown(x)
        | Expr::IsNotUnknown(x)
        | Expr::IsDistinctFrom(x, _)
        | Expr::IsNotDistinctFrom(x, _) => Some(x),
        _ => None,
    }
}

fn and_no_chain(c: &mut Cur<'_>) -> PgResult<()> {
    if c.eat_word("and") {
        if c.eat_word("no") {
            c.expect_word("chain")?;
        } else {
            return Err(PgError::unsupported("COMMIT AND CHAIN is not supported"));
        }
    }
    Ok(())
}

/// `[ISOLATION LEVEL …] [READ WRITE | READ ONLY] [[NOT] DEFERRABLE]`, comma
/// separated or not.
fn transaction_modes(c: &mut Cur<'_>) -> PgResult<TransactionModes> {
    let mut iso = None;
    let mut ro = None;
    let mut deferrable = None;
    loop {
        if c.eat_word("isolation") {
            c.expect_word("level")?;
            iso = Some(isolation_level(c)?);
        } else if c.eat_word("read") {
            if c.eat_word("only") {
                ro = Some(true);
            } else if c.eat_word("write") {
                ro = Some(false);
            } else {
                return Err(c.error_here());
            }
        } else if c.eat_word("not") {
            c.expect_word("deferrable")?;
            deferrable = Some(false);
        } else if c.eat_word("deferrable") {
            deferrable = Some(true);
        } else {
            break;
        }
        let _ = c.eat_punct(',');
    }
    Ok((iso, ro, deferrable))
}

/// Isolation level, READ ONLY / WRITE, [NOT] DEFERRABLE — each if given.
type TransactionModes = (Option<IsolationLevel>, Option<bool>, Option<bool>);

/// READ COMMITTED | READ UNCOMMITTED (→ RC, as PostgreSQL) | REPEATABLE READ
/// | SERIALIZABLE.
fn isolation_level(c: &mut Cur<'_>) -> PgResult<IsolationLevel> {
    if c.eat_word("read") {
        if c.eat_word("committed") || c.eat_word("uncommitted") {
            return Ok(IsolationLevel::ReadCommitted);
        }
        return Err(c.error_here());
    }
    if c.eat_word("repeatable") {
        c.expect_word("read")?;
        return Ok(IsolationLevel::RepeatableRead);
    }
    if c.eat_word("serializable") {
        return Ok(IsolationLevel::Serializable);
    }
    Err(c.error_here())
}

/// Parses an isolation level name as `SET transaction_isolation` /
/// `default_transaction_isolation` take it.
pub fn isolation_from_name(v: &str) -> Option<IsolationLevel> {
    match v.trim().to_ascii_lowercase().as_str() {
        "read committed" | "read uncommitted" | "default" => Some(IsolationLevel::ReadCommitted),
        "repeatable read" => Some(IsolationLevel::RepeatableRead),
        "serializable" => Some(IsolationLevel::Serializable),
        _ => None,
    }
}

/// The name `SHOW`/`SET`/`RESET` use for an isolation level.
pub fn isolation_name(l: IsolationLevel) -> &'static str {
    match l {
        IsolationLevel::ReadCommitted => "read committed",
        IsolationLevel::RepeatableRead => "repeatable read",
        IsolationLevel::Serializable => "serializable",
    }
}

/// A setting name, with PostgreSQL's multi-word aliases.
fn setting_name(c: &mut Cur<'_>) -> PgResult<String> {
    if c.eat_word("time") {
        c.expect_word("zone")?;
        return Ok("timezone".into());
    }
    if c.peek_word() == Some("transaction") && c.peek_word_at(1) == Some("isolation") {
        c.pos += 2;
        c.expect_word("level")?;
        return Ok("transaction_isolation".into());
    }
    if c.eat_word("session") {
        if c.eat_word("authorization") {
            return Ok("session_authorization".into());
        }
        c.pos -= 1;
    }
    let mut name = c.one_ident()?;
    while c.eat_punct('.') {
        name.push('.');
        name.push_str(&c.one_ident()?);
    }
    Ok(name)
}

fn parse_set(c: &mut Cur<'_>) -> PgResult<Stmt> {
    c.pos += 1; // SET
    let mut local = false;
    if c.eat_word("local") {
        local = true;
    } else if c.peek_word() == Some("session") && c.peek_word_at(1) != Some("authorization") {
        c.pos += 1;
        if c.eat_word("characteristics") {
            c.expect_word("as")?;
            c.expect_word("transaction")?;
            let (isolation, read_only, deferrable) = transaction_modes(c)?;
            c.expect_end()?;
            return Ok(Stmt::SetTransaction {
                isolation,
                read_only,
                deferrable,
                session: true,
            });
        }
    }
    if c.peek_word() == Some("constraints") {
        c.pos += 1;
        let names = if c.eat_word("all") {
            None
        } else {
            let mut v = vec![c.ident()?];
            while c.eat_punct(',') {
                v.push(c.ident()?);
            }
            Some(v)
        };
        let deferred = if c.eat_word("deferred") {
            true
        } else if c.eat_word("immediate") {
            false
        } else {
            return Err(c.error_here());
        };
        c.expect_end()?;
        return Ok(Stmt::SetConstraints { names, deferred });
    }
    // "SET TRANSACTION …" ("SET transaction_isolation" lexes as one word).
    if c.peek_word() == Some("transaction") {
        c.pos += 1;
        let (isolation, read_only, deferrable) = transaction_modes(c)?;
        c.expect_end()?;
        return Ok(Stmt::SetTransaction {
            isolation,
            read_only,
            deferrable,
            session: false,
        });
    }
    if c.eat_word("time") {
        c.expect_word("zone")?;
        let value = if c.eat_word("local") || c.eat_word("default") {
            None
        } else {
            Some(set_value_item(c)?)
        };
        c.expect_end()?;
        return Ok(Stmt::Set {
            name: "timezone".into(),
            value,
            local,
        });
    }
    let name = setting_name(c)?;
    // `SET ROLE r` / `SET SESSION AUTHORIZATION r` take the value without
    // TO (and accept it too, as the settings they are).
    let bare = matches!(name.as_str(), "role" | "session_authorization");
    if !(c.eat_word("to") || c.eat_punct('=') || bare) {
        return Err(c.error_here());
    }
    if c.eat_word("default") {
        c.expect_end()?;
        return Ok(Stmt::Set {
            name,
            value: None,
            local,
        });
    }
    let mut items = vec![set_value_item(c)?];
    while c.eat_punct(',') {
        items.push(set_value_item(c)?);
    }
    c.expect_end()?;
    Ok(Stmt::Set {
        name,
        value: Some(items.join(", ")),
        local,
    })
}

fn set_value_item(c: &mut Cur<'_>) -> PgResult<String> {
    let neg = c.eat_punct('-');
    let v = match c.peek().cloned() {
        Some(Tok::Word(w)) => {
            c.pos += 1;
            // `SET x = read committed`-style multi-word values (PostgreSQL
            // takes only one word; accept the isolation spellings).
            let mut w = w;
            while let Some(next) = c.peek_word() {
                if matches!(next, "committed" | "uncommitted" | "read") {
                    w.push(' ');
                    w.push_str(next);
                    c.pos += 1;
                } else {
                    break;
                }
            }
            w
        }
        Some(Tok::Ident(w)) | Some(Tok::Str(w)) => {
            c.pos += 1;
            w
        }
        Some(Tok::Num(n)) => {
            c.pos += 1;
            n
        }
        _ => return Err(c.error_here()),
    };
    Ok(if neg { format!("-{v}") } else { v })
}

fn skip_paren_options(c: &mut Cur<'_>) -> PgResult<()> {
    let mut depth = 1;
    while depth > 0 {
        match c.peek() {
            None => return Err(c.error_here()),
            Some(Tok::Punct('(')) => depth += 1,
            Some(Tok::Punct(')')) => depth -= 1,
            _ => {}
        }
        c.pos += 1;
    }
    Ok(())
}

/// `[t [(cols)] [, …]]` as VACUUM / ANALYZE take them: the tables and
/// each one's column list.
fn table_list(c: &mut Cur<'_>) -> PgResult<(Vec<String>, Vec<Vec<String>>)> {
    let mut tables = Vec::new();
    let mut columns = Vec::new();
    if c.at_end() {
        return Ok((tables, columns));
    }
    loop {
        tables.push(c.relation_name()?);
        let mut cols = Vec::new();
        if c.eat_punct('(') {
            loop {
                cols.push(c.ident()?);
                if !c.eat_punct(',') {
                    break;
                }
            }
            if !c.eat_punct(')') {
                return Err(c.error_here());
            }
        }
        columns.push(cols);
        if !c.eat_punct(',') {
            break;
        }
    }
    Ok((tables, columns))
}

fn parse_vacuum(c: &mut Cur<'_>) -> PgResult<Stmt> {
    c.pos += 1;
    let mut analyze = false;
    if c.eat_punct('(') {
        // (ANALYZE, VERBOSE, FULL, FREEZE, …): only ANALYZE changes anything.
        let start = c.pos;
        skip_paren_options(c)?;
        for t in &c.toks[start..c.pos] {
            if let Tok::Word(w) = &t.tok {
                if w == "analyze" || w == "analyse" {
                    analyze = true;
                }
            }
        }
    } else {
        loop {
            if c.eat_word("full") || c.eat_word("freeze") || c.eat_word("verbose") {
                continue;
            }
            if c.eat_word("analyze") || c.eat_word("analyse") {
                analyze = true;
                continue;
            }
            break;
        }
    }
    let (tables, columns) = table_list(c)?;
    c.expect_end()?;
    Ok(Stmt::Vacuum {
        tables,
        columns,
        analyze,
    })
}

fn single_byte_option(c: &Cur<'_>, what: &str, v: &str) -> PgResult<u8> {
    let b = v.as_bytes();
    if b.len() != 1 {
        let _ = c;
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("COPY {what} must be a single one-byte character"),
        ));
    }
    Ok(b[0])
}

fn bool_option(c: &mut Cur<'_>) -> PgResult<bool> {
    match c.peek().cloned() {
        Some(Tok::Word(w)) | Some(Tok::Str(w)) | Some(Tok::Num(w)) => {
            match pgtypes::config::parse_bool(&w) {
                Some(b) => {
                    c.pos += 1;
                    Ok(b)
                }
                None => Ok(true),
            }
        }
        _ => Ok(true),
    }
}

fn parse_copy(c: &mut Cur<'_>) -> PgResult<Stmt> {
    c.pos += 1; // COPY
    let _ = c.eat_word("binary");
    let source = if c.peek() == Some(&Tok::Punct('(')) {
        let open = c.toks[c.pos].end;
        c.pos += 1;
        skip_paren_options(c)?;
        let close = c.toks[c.pos - 1].start;
        CopySource::Query(c.sql.get(open..close).unwrap_or("").trim().to_string())
    } else {
        let name = c.relation_name()?;
        let columns = c.column_names()?;
        CopySource::Table { name, columns }
    };
    let direction = if c.eat_word("from") {
        if c.eat_word("stdin") {
            CopyDirection::FromStdin
        } else if c.eat_word("program") || matches!(c.peek(), Some(Tok::Str(_))) {
            return Err(PgError::new(
                "42501",
                "must be superuser or have privileges of the pg_read_server_files role to COPY from a file",
            )
            .with_hint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone."));
        } else {
            return Err(c.error_here());
        }
    } else if c.eat_word("to") {
        if c.eat_word("stdout") {
            CopyDirection::ToStdout
        } else if c.eat_word("program") || matches!(c.peek(), Some(Tok::Str(_))) {
            return Err(PgError::new(
                "42501",
                "must be superuser or have privileges of the pg_write_server_files role to COPY to a file",
            )
            .with_hint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone."));
        } else {
            return Err(c.error_here());
        }
    } else {
        return Err(c.error_here());
    };
    if matches!(source, CopySource::Query(_)) && direction == CopyDirection::FromStdin {
        return Err(PgError::syntax("syntax error at or near \"from\""));
    }
    let mut st = CopyStmt::new(source, direction);
    let _ = c.eat_word("with");
    let mut format_given = false;
    let mut null: Option<String> = None;
    if c.eat_punct('(') {
        // New-style option list.
        loop {
            let opt = c.one_ident()?;
            match opt.as_str() {
                "format" => {
                    let f = c.one_ident().or_else(|_| c.string())?;
                    st.format = copy_format(&f)?;
                    format_given = true;
                }
                "freeze" => st.freeze = bool_option(c)?,
                "delimiter" => {
                    let v = c.string()?;
                    st.delimiter = single_byte_option(c, "delimiter", &v)?;
                }
                "null" => null = Some(c.string()?),
                "header" => {
                    if c.eat_word("match") {
                        st.header = true;
                    } else {
                        st.header = bool_option(c)?;
                    }
                }
                "quote" => {
                    let v = c.string()?;
                    st.quote = single_byte_option(c, "quote", &v)?;
                }
                "escape" => {
                    let v = c.string()?;
                    st.escape = single_byte_option(c, "escape", &v)?;
                }
                "encoding" => {
                    let v = c.string()?;
                    let norm = v.to_ascii_lowercase().replace(['-', '_'], "");
                    if norm != "utf8" {
                        return Err(PgError::unsupported(format!(
                            "COPY encoding \"{v}\" is not supported"
                        )));
                    }
                }
                "oids" => {
                    if bool_option(c)? {
                        return Err(PgError::syntax("option \"oids\" not recognized"));
                    }
                }
                other => {
                    return Err(PgError::syntax(format!(
                        "option \"{other}\" not recognized"
                    )));
                }
            }
            if c.eat_punct(')') {
                break;
            }
            if !c.eat_punct(',') {
                return Err(c.error_here());
            }
        }
    } else {
        // Pre-9.0 syntax: BINARY, DELIMITER [AS] 'x', NULL [AS] 'x', CSV,
        // HEADER, QUOTE [AS] 'x', ESCAPE [AS] 'x', FREEZE, FORCE … (ignored).
        loop {
            if c.eat_word("binary") {
                st.format = CopyFormat::Binary;
                format_given = true;
            } else if c.eat_word("csv") {
                st.format = CopyFormat::Csv;
                format_given = true;
            } else if c.eat_word("freeze") {
                st.freeze = true;
            } else if c.eat_word("header") {
                st.header = true;
            } else if c.eat_word("delimiter") {
                let _ = c.eat_word("as");
                let v = c.string()?;
                st.delimiter = single_byte_option(c, "delimiter", &v)?;
            } else if c.eat_word("null") {
                let _ = c.eat_word("as");
                null = Some(c.string()?);
            } else if c.eat_word("quote") {
                let _ = c.eat_word("as");
                let v = c.string()?;
                st.quote = single_byte_option(c, "quote", &v)?;
            } else if c.eat_word("escape") {
                let _ = c.eat_word("as");
                let v = c.string()?;
                st.escape = single_byte_option(c, "escape", &v)?;
            } else if c.eat_word("force") {
                let _ = c.eat_word("not");
                let _ = c.eat_word("null") || c.eat_word("quote");
                if !c.eat_punct('*') {
                    let _ = c.one_ident()?;
                    while c.eat_punct(',') {
                        let _ = c.one_ident()?;
                    }
                }
            } else {
                break;
            }
        }
    }
    c.expect_end()?;
    let _ = format_given;
    finish_options(&mut st, null)?;
    Ok(Stmt::Copy(st))
}

fn copy_format(f: &str) -> PgResult<CopyFormat> {
    match f.to_ascii_lowercase().as_str() {
        "text" => Ok(CopyFormat::Text),
        "csv" => Ok(CopyFormat::Csv),
        "binary" => Ok(CopyFormat::Binary),
        other => Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("COPY format \"{other}\" not recognized"),
        )),
    }
}

/// Fills PostgreSQL's per-format defaults and checks option combinations.
fn finish_options(st: &mut CopyStmt, null: Option<String>) -> PgResult<()> {
    if st.delimiter == 0 {
        st.delimiter = if st.format == CopyFormat::Csv {
            b','
        } else {
            b'\t'
        };
    }
    st.null = match null {
        Some(n) => n,
        None if st.format == CopyFormat::Csv => String::new(),
        None => "\\N".into(),
    };
    if st.escape == 0 {
        st.escape = st.quote;
    }
    if st.delimiter == b'\n' || st.delimiter == b'\r' {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "COPY delimiter cannot be newline or carriage return",
        ));
    }
    if st.format == CopyFormat::Text && st.delimiter == b'\\' {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "COPY delimiter cannot be \"\\\"",
        ));
    }
    if st.freeze && st.direction == CopyDirection::ToStdout {
        return Err(PgError::unsupported(
            "COPY FREEZE cannot be used with COPY TO",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Whole query strings and the parse cache
// ---------------------------------------------------------------------------

/// One statement of a query string: its text and its parse.
#[derive(Debug)]
pub struct ParsedStmt {
    /// The statement's own text (trimmed, without `;`).
    pub text: String,
    /// The parse.
    pub stmt: Stmt,
}

impl AsRef<str> for ParsedStmt {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

/// Parses a whole query string into statements (empty vector for an empty
/// query).
pub fn parse_query(sql: &str) -> PgResult<Vec<Arc<ParsedStmt>>> {
    let mut out = Vec::new();
    for piece in split_statements(sql) {
        let stmt = parse_one(piece).map_err(|e| {
            // Pieces are slices of `sql`: count positions from its start.
            let before = (piece.as_ptr() as usize).saturating_sub(sql.as_ptr() as usize);
            e.shift_position(char_position(sql, before) - 1)
        })?;
        if matches!(stmt, Stmt::Empty) {
            continue;
        }
        out.push(Arc::new(ParsedStmt {
            text: piece.to_string(),
            stmt,
        }));
    }
    Ok(out)
}

/// The parsed template of a statement shape: one plannable statement whose
/// literals are parameters `$1 … $n` of fixed kinds.
#[derive(Debug)]
pub struct ShapeTemplate {
    /// The template statement (its text is the normalised text).
    pub parsed: Arc<ParsedStmt>,
    /// Parse's parameter types for planning it: each literal's type, 0
    /// (inferred from context) for strings.
    pub param_oids: Vec<Oid>,
}

impl ShapeTemplate {
    /// Parses the template of `norm`; None unless it is one SELECT,
    /// INSERT, UPDATE or DELETE.
    fn parse(norm: &Normalized) -> Option<ShapeTemplate> {
        let mut stmts = parse_query(norm.template()).ok()?;
        if stmts.len() != 1 {
            return None;
        }
        let parsed = stmts.pop()?;
        let Stmt::Sql(s) = &parsed.stmt else {
            return None;
        };
        if !matches!(
            **s,
            sqlparser::ast::Statement::Query(_)
                | sqlparser::ast::Statement::Insert(_)
                | sqlparser::ast::Statement::Update { .. }
                | sqlparser::ast::Statement::Delete(_)
        ) {
            return None;
        }
        Some(ShapeTemplate {
            parsed,
            param_oids: norm.kinds().map(|k| k.param_oid()).collect(),
        })
    }
}

/// Node-wide cache: query text → parsed statements, and statement shape →
/// parsed template. Errors are not cached.
pub struct ParseCache {
    map: Mutex<HashMap<String, Arc<Vec<Arc<ParsedStmt>>>>>,
    shapes: Mutex<HashMap<String, Option<Arc<ShapeTemplate>>>>,
    capacity: usize,
}

impl ParseCache {
    /// A cache holding at most `capacity` texts and `capacity` shapes.
    pub fn new(capacity: usize) -> ParseCache {
        ParseCache {
            map: Mutex::new(HashMap::new()),
            shapes: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// The shape of `sql` with its template, parsed once per shape and
    /// cached; None when the text is not normalised or its template is not
    /// one plannable statement (the caller takes [`ParseCache::parse`]).
    pub fn shape(&self, sql: &str) -> Option<(Arc<ShapeTemplate>, Normalized)> {
        let norm = normalize(sql)?;
        if let Some(hit) = self.shapes.lock().get(&norm.key) {
            return hit.clone().map(|t| (t, norm));
        }
        let template = ShapeTemplate::parse(&norm).map(Arc::new);
        let mut m = self.shapes.lock();
        if m.len() >= self.capacity {
            m.clear();
        }
        m.insert(norm.key.clone(), template.clone());
        drop(m);
        template.map(|t| (t, norm))
    }

    /// Number of cached shapes (templates and refused ones).
    pub fn shapes_len(&self) -> usize {
        self.shapes.lock().len()
    }

    /// The parse of `sql`, from the cache or freshly parsed (and cached).
    pub fn parse(&self, sql: &str) -> PgResult<Arc<Vec<Arc<ParsedStmt>>>> {
        if let Some(hit) = self.map.lock().get(sql) {
            return Ok(hit.clone());
        }
        let parsed = Arc::new(parse_query(sql)?);
        // Very long texts (COPY data pasted as SQL, huge INSERTs) are not
        // worth keeping.
        if sql.len() <= 8192 {
            let mut m = self.map.lock();
            if m.len() >= self.capacity {
                m.clear();
            }
            m.insert(sql.to_string(), parsed.clone());
        }
        Ok(parsed)
    }

    /// Number of cached texts.
    pub fn len(&self) -> usize {
        self.map.lock().len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Parses an expression held as text: a stored column DEFAULT, or a
/// row comparison the binder rewrites (`expr.rs`).
pub fn parse_expr_text(text: &str) -> PgResult<sqlparser::ast::Expr> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| PgError::syntax(format!("invalid expression \"{text}\": {e}")))
}

/// Parses a type name as written (`integer`, `varchar(10)`, `text[]`,
/// `double precision`); 42704 for a name that is no type.
pub fn parse_type_text(text: &str) -> PgResult<pgtypes::sqltype::SqlType> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let undefined = || {
        PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("type \"{}\" does not exist", text.trim()),
        )
    };
    let mut p = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|_| undefined())?;
    let dt = p.parse_data_type().map_err(|_| undefined())?;
    if p.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return Err(undefined());
    }
    pgtypes::sqltype::SqlType::from_data_type(&dt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_quotes_and_comments() {
        let s = "select 'a;b'; select \"x;y\" -- c;\n; /* a; /* b; */ c; */ select $$;$$; select $t$ ; $t$;select E'\\';'";
        let v = split_statements(s);
        assert_eq!(v.len(), 5, "{v:?}");
        assert_eq!(v[0], "select 'a;b'");
        assert_eq!(v[3], "select $t$ ; $t$");
        assert_eq!(v[4], "select E'\\';'");
        assert!(split_statements(" ; -- nothing\n ;").is_empty());
        assert_eq!(split_statements("select $1; select 2").len(), 2);
    }

    #[test]
    fn token_passes_stay_in_their_statements() {
        // Words the ALTER / CREATE passes look for, elsewhere.
        let sel = parse_one("SELECT add, valid, match FROM t WHERE NOT valid").unwrap();
        assert!(
            matches!(&sel, Stmt::Sql(s) if s.to_string() == "SELECT add, valid, match FROM t WHERE NOT valid"),
            "{sel:?}"
        );
        let alter = parse_one("ALTER TABLE t ADD CHECK (a > 0) NOT VALID").unwrap();
        assert!(
            matches!(&alter, Stmt::Sql(s) if s.to_string().contains(NOT_VALID)),
            "{alter:?}"
        );
        let fk = parse_one("CREATE TABLE c (a int REFERENCES p MATCH FULL)").unwrap();
        assert!(
            matches!(&fk, Stmt::Sql(s) if s.to_string().contains(MATCH_FULL)),
            "{fk:?}"
        );
    }

    #[test]
    fn transaction_control() {
        assert!(matches!(
            parse_one("BEGIN").unwrap(),
            Stmt::Begin {
                isolation: None,
                start: false,
                ..
            }
        ));
        assert!(matches!(
            parse_one("start transaction isolation level repeatable read, read only").unwrap(),
            Stmt::Begin {
                isolation: Some(IsolationLevel::RepeatableRead),
                read_only: Some(true),
                deferrable: None,
                start: true
            }
        ));
        assert!(matches!(
            parse_one("begin isolation level read committed").unwrap(),
            Stmt::Begin {
                isolation: Some(IsolationLevel::ReadCommitted),
                ..
            }
        ));
        assert!(matches!(
            parse_one("begin isolation level serializable, read only, deferrable").unwrap(),
            Stmt::Begin {
                isolation: Some(IsolationLevel::Serializable),
                read_only: Some(true),
                deferrable: Some(true),
                ..
            }
        ));
        assert!(matches!(
            parse_one("set transaction isolation level serializable not deferrable").unwrap(),
            Stmt::SetTransaction {
                isolation: Some(IsolationLevel::Serializable),
                deferrable: Some(false),
                ..
            }
        ));
        assert!(matches!(parse_one("END").unwrap(), Stmt::Commit));
        assert!(matches!(parse_one("abort work").unwrap(), Stmt::Rollback));
        assert!(
            matches!(parse_one("rollback to savepoint s1").unwrap(), Stmt::RollbackTo(n) if n == "s1")
        );
        assert!(matches!(parse_one("ROLLBACK TO s1").unwrap(), Stmt::RollbackTo(n) if n == "s1"));
        assert!(matches!(parse_one("release s1").unwrap(), Stmt::Release(n) if n == "s1"));
        assert!(matches!(parse_one("savepoint \"S\"").unwrap(), Stmt::Savepoint(n) if n == "S"));
        assert!(
            matches!(parse_one("prepare transaction 'g1'").unwrap(), Stmt::PrepareTransaction(g) if g == "g1")
        );
        assert!(
            matches!(parse_one("COMMIT PREPARED 'g1'").unwrap(), Stmt::CommitPrepared(g) if g == "g1")
        );
        assert!(
            matches!(parse_one("rollback prepared 'g''1'").unwrap(), Stmt::RollbackPrepared(g) if g == "g'1")
        );
        assert!(parse_one("begin foo").is_err());
    }

    #[test]
    fn set_show_reset() {
        match parse_one("SET application_name = 'x y'").unwrap() {
            Stmt::Set { name, value, local } => {
                assert_eq!(name, "application_name");
                assert_eq!(value.as_deref(), Some("x y"));
                assert!(!local);
            }
            o => panic!("{o:?}"),
        }
        assert!(matches!(
            parse_one("set local statement_timeout to 5000").unwrap(),
            Stmt::Set { local: true, .. }
        ));
        assert!(
            matches!(parse_one("set search_path = public, \"$user\"").unwrap(), Stmt::Set { value: Some(v), .. } if v == "public, $user")
        );
        assert!(matches!(
            parse_one("set x to default").unwrap(),
            Stmt::Set { value: None, .. }
        ));
        assert!(
            matches!(parse_one("SET TIME ZONE 'UTC'").unwrap(), Stmt::Set { name, .. } if name == "timezone")
        );
        assert!(matches!(
            parse_one("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").unwrap(),
            Stmt::SetTransaction {
                isolation: Some(IsolationLevel::RepeatableRead),
                session: false,
                ..
            }
        ));
        assert!(matches!(
            parse_one("set session characteristics as transaction isolation level repeatable read")
                .unwrap(),
            Stmt::SetTransaction { session: true, .. }
        ));
        assert!(
            matches!(parse_one("set transaction_isolation = 'repeatable read'").unwrap(), Stmt::Set { name, .. } if name == "transaction_isolation")
        );
        assert!(matches!(parse_one("SHOW ALL").unwrap(), Stmt::Show(None)));
        assert!(
            matches!(parse_one("show transaction isolation level").unwrap(), Stmt::Show(Some(n)) if n == "transaction_isolation")
        );
        assert!(matches!(parse_one("reset all").unwrap(), Stmt::Reset(None)));
        assert!(
            matches!(parse_one("RESET DateStyle").unwrap(), Stmt::Reset(Some(n)) if n == "datestyle")
        );
    }

    #[test]
    fn vacuum_analyze_checkpoint() {
        assert!(
            matches!(parse_one("vacuum analyze pgbench_branches").unwrap(), Stmt::Vacuum { analyze: true, tables, .. } if tables == ["\"pgbench_branches\""])
        );
        assert!(
            matches!(parse_one("VACUUM (VERBOSE, ANALYZE) a, b").unwrap(), Stmt::Vacuum { analyze: true, tables, .. } if tables.len() == 2)
        );
        assert!(
            matches!(parse_one("vacuum full").unwrap(), Stmt::Vacuum { analyze: false, tables, .. } if tables.is_empty())
        );
        assert!(
            matches!(parse_one("analyze t").unwrap(), Stmt::Analyze { tables, .. } if tables == ["\"t\""])
        );
        assert!(
            matches!(parse_one("analyze t (a, b), u").unwrap(), Stmt::Analyze { tables, columns } if tables == ["\"t\"", "\"u\""] && columns == vec![vec!["a".to_string(), "b".to_string()], vec![]])
        );
        assert!(matches!(parse_one("checkpoint").unwrap(), Stmt::Checkpoint));
    }

    #[test]
    fn copy_forms() {
        let Stmt::Copy(c) = parse_one("copy pgbench_accounts from stdin with (freeze on)").unwrap()
        else {
            panic!()
        };
        assert!(c.freeze);
        assert_eq!(c.format, CopyFormat::Text);
        assert_eq!(c.delimiter, b'\t');
        assert_eq!(c.null, "\\N");
        assert_eq!(
            c.source,
            CopySource::Table {
                name: "\"pgbench_accounts\"".into(),
                columns: vec![]
            }
        );
        let Stmt::Copy(c) = parse_one("copy pgbench_accounts from stdin").unwrap() else {
            panic!()
        };
        assert!(!c.freeze);
        let Stmt::Copy(c) = parse_one(
            "COPY t (a, b) FROM STDIN WITH (FORMAT csv, HEADER, NULL 'x', DELIMITER ';')",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.format, CopyFormat::Csv);
        assert!(c.header);
        assert_eq!(c.null, "x");
        assert_eq!(c.delimiter, b';');
        assert_eq!(
            c.source,
            CopySource::Table {
                name: "\"t\"".into(),
                columns: vec!["a".into(), "b".into()]
            }
        );
        let Stmt::Copy(c) = parse_one("copy t to stdout csv header").unwrap() else {
            panic!()
        };
        assert_eq!(c.format, CopyFormat::Csv);
        assert_eq!(c.null, "");
        assert_eq!(c.direction, CopyDirection::ToStdout);
        let Stmt::Copy(c) = parse_one("copy (select a, (b) from t) to stdout").unwrap() else {
            panic!()
        };
        assert_eq!(c.source, CopySource::Query("select a, (b) from t".into()));
        let Stmt::Copy(c) =
            parse_one("copy t from stdin with null as '' delimiter as ','").unwrap()
        else {
            panic!()
        };
        assert_eq!(c.null, "");
        assert_eq!(c.delimiter, b',');
        assert!(parse_one("copy t from '/etc/passwd'").is_err());
        assert!(parse_one("copy t from stdin (bogus 1)").is_err());
    }

    #[test]
    fn pgbench_statements_parse() {
        for s in [
            "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
            "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
            "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
            "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
            "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
            "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
            "insert into pgbench_branches(bid,bbalance) values(1,0)",
            "insert into pgbench_tellers(tid,bid,tbalance) values (1,1,0)",
            "alter table pgbench_branches add primary key (bid)",
            "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 100000) as aid",
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
            "select count(*) from pgbench_branches",
            "create unique index if not exists i on t (a, b)",
            "select x::int8, cast(y as text) from t order by 1 desc nulls last limit 3 offset 1",
        ] {
            let p = parse_one(s);
            assert!(matches!(p, Ok(Stmt::Sql(_))), "{s}: {p:?}");
        }
    }

    #[test]
    fn syntax_errors_are_42601() {
        let e = parse_one("selec 1").unwrap_err();
        assert_eq!(e.code, sqlstate::SYNTAX_ERROR);
        let e = parse_one("select (1").unwrap_err();
        assert_eq!(e.code, sqlstate::SYNTAX_ERROR);
    }

    #[test]
    fn syntax_errors_carry_postgres_positions() {
        // Positions as PostgreSQL 15 reports them (1-based characters).
        let e = parse_one("selec 1").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"selec\"");
        assert_eq!(e.position, Some(1));
        let e = parse_one("select 1 +").unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
        assert_eq!(e.position, Some(11));
        let e = parse_one("select * frm t").unwrap_err();
        assert_eq!(e.position, Some(10), "{e:?}");
        // Characters, not bytes, and counted from the whole query string.
        let e = parse_query("select 'é'; select 1 frm t").unwrap_err();
        assert_eq!(e.position, Some(26), "{e:?}");
        let e = parse_one("select 1,\n  2 frm t").unwrap_err();
        assert_eq!(e.position, Some(19), "{e:?}");
    }

    #[test]
    fn shape_cache_hits_across_literals() {
        let c = ParseCache::new(16);
        let (a, na) = c
            .shape("SELECT abalance FROM pgbench_accounts WHERE aid = 1;")
            .unwrap();
        let (b, nb) = c
            .shape("SELECT abalance FROM pgbench_accounts WHERE aid = 48213")
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one template for both texts");
        assert_eq!(na.key, nb.key);
        assert_eq!(a.param_oids, vec![23], "an int4 parameter");
        assert_eq!(
            a.parsed.text,
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
        );
        let (s, _) = c.shape("select * from t where name = 'x'").unwrap();
        assert_eq!(s.param_oids, vec![0], "a string's type is inferred");
        assert!(c.shape("select 1 -- x").is_none(), "comments: exact path");
        assert!(c.shape("create table t (a int)").is_none(), "DDL");
        // A template that does not parse is remembered as refused.
        assert!(c.shape("select 1 +").is_none());
        assert!(c.shape("select 2 +").is_none());
        assert_eq!(c.shapes_len(), 3);
    }

    /// Parse-level cost of pgbench's select-only text in simple mode:
    /// every text a miss of the text cache, against a shape hit (normalise,
    /// look up, convert the literal). Run with `cargo test --release -p sql
    /// --lib -- --ignored --nocapture shape_timing`.
    #[test]
    #[ignore]
    fn shape_timing() {
        let n = 200_000u32;
        let text = |i: u32| format!("SELECT abalance FROM pgbench_accounts WHERE aid = {i};");
        for round in 0..3 {
            let c = ParseCache::new(4096);
            let start = std::time::Instant::now();
            for i in 0..n {
                let _ = c.parse(&text(i)).unwrap();
            }
            let miss = start.elapsed().as_nanos() as f64 / f64::from(n);
            let start = std::time::Instant::now();
            for i in 0..n {
                let sql = text(i);
                let (_, norm) = c.shape(&sql).unwrap();
                let _ = norm.literals[0].value(&sql).unwrap();
            }
            let hit = start.elapsed().as_nanos() as f64 / f64::from(n);
            let start = std::time::Instant::now();
            for i in 0..n {
                let _ = parse_query(&text(i)).unwrap();
            }
            let bare = start.elapsed().as_nanos() as f64 / f64::from(n);
            let start = std::time::Instant::now();
            for i in 0..n {
                let _ = text(i);
            }
            let format = start.elapsed().as_nanos() as f64 / f64::from(n);
            println!(
                "round {round}: text miss {miss:.0} ns (parse_query alone {bare:.0} ns), shape hit {hit:.0} ns (formatting the text alone {format:.0} ns)"
            );
        }
    }

    #[test]
    fn cache_hits() {
        let c = ParseCache::new(2);
        let a = c.parse("select 1; select 2").unwrap();
        let b = c.parse("select 1; select 2").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.len(), 2);
        c.parse("select 3").unwrap();
        c.parse("select 4").unwrap();
        assert!(c.len() <= 2);
        assert!(c.parse("").unwrap().is_empty());
    }
}
