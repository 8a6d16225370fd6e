//! `CREATE [TEMP | TEMPORARY | UNLOGGED] TABLE [IF NOT EXISTS] name
//! [(column, …)] AS query [WITH [NO] DATA]` (PostgreSQL's
//! CreateTableAsStmt). sqlparser 0.52 reads neither a column list without
//! types nor `WITH [NO] DATA`, so the pre-dispatch takes the statement and
//! keeps the query as text; `SELECT … INTO name` becomes the same statement
//! when it runs. Executed by `Session::create_table_as`: the query is
//! planned for its columns, the table is created with their names and
//! types, then filled by `INSERT INTO name query`, all in the statement's
//! transaction.

use super::{Cur, Tok};
use pgtypes::error::PgResult;
use sqlparser::ast;

/// A parsed CREATE TABLE AS (or SELECT INTO).
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTableAs {
    /// The new table, as `Cur::relation_name` gives it (quoted parts).
    pub name: String,
    /// TEMP / TEMPORARY.
    pub temporary: bool,
    /// UNLOGGED.
    pub unlogged: bool,
    /// IF NOT EXISTS.
    pub if_not_exists: bool,
    /// Names for the first columns (the query's own names for the rest).
    pub columns: Vec<String>,
    /// The query's text.
    pub query: String,
    /// Where the query starts in the statement (bytes), for error
    /// positions.
    pub query_start: usize,
    /// False for WITH NO DATA: the table is created empty.
    pub with_data: bool,
    /// Written as `SELECT … INTO` (its command name in errors).
    pub select_into: bool,
}

impl CreateTableAs {
    /// The command's name in errors ("cannot execute … in a read-only
    /// transaction").
    pub fn command(&self) -> &'static str {
        if self.select_into {
            "SELECT INTO"
        } else {
            "CREATE TABLE AS"
        }
    }
}

/// True if the statement is a CREATE TABLE … AS.
pub(crate) fn is_create_table_as(c: &Cur<'_>) -> bool {
    let mut t = Cur {
        sql: c.sql,
        toks: c.toks.clone(),
        pos: c.pos,
    };
    header(&mut t).is_ok()
}

/// What comes before the query: (temporary, unlogged, if not exists,
/// name, columns), the cursor left after AS.
fn header(c: &mut Cur<'_>) -> PgResult<(bool, bool, bool, String, Vec<String>)> {
    c.expect_word("create")?;
    let (mut temporary, mut unlogged) = (false, false);
    if c.eat_word("local") || c.eat_word("global") {
        if !(c.eat_word("temp") || c.eat_word("temporary")) {
            return Err(c.error_here());
        }
        temporary = true;
    } else if c.eat_word("temp") || c.eat_word("temporary") {
        temporary = true;
    } else if c.eat_word("unlogged") {
        unlogged = true;
    }
    c.expect_word("table")?;
    let if_not_exists = c.eat_if_not_exists()?;
    let name = c.relation_name()?;
    let columns = c.column_names()?;
    c.expect_word("as")?;
    Ok((temporary, unlogged, if_not_exists, name, columns))
}

/// Parses a [`CreateTableAs`] ([`is_create_table_as`] said it is one).
pub(crate) fn parse(c: &mut Cur<'_>) -> PgResult<CreateTableAs> {
    let (temporary, unlogged, if_not_exists, name, columns) = header(c)?;
    let from = c.pos;
    let mut end = c.toks.len();
    if matches!(c.toks.last(), Some(t) if t.tok == Tok::Punct(';')) {
        end -= 1;
    }
    let word = |i: usize| match c.toks.get(i).map(|t| &t.tok) {
        Some(Tok::Word(w)) => w.as_str(),
        _ => "",
    };
    let mut with_data = true;
    if end >= from + 3 && [word(end - 3), word(end - 2), word(end - 1)] == ["with", "no", "data"] {
        with_data = false;
        end -= 3;
    } else if end >= from + 2 && [word(end - 2), word(end - 1)] == ["with", "data"] {
        end -= 2;
    }
    if from >= end {
        c.pos = end;
        return Err(c.error_here());
    }
    // `TABLE name` (which sqlparser does not read as a query) is
    // `SELECT * FROM name`.
    let query = match (c.toks.get(from).map(|t| &t.tok), end - from) {
        (Some(Tok::Word(w)), 2 | 4) if w == "table" => {
            format!("SELECT * FROM {}", c.text_between(from + 1, end))
        }
        _ => c.text_between(from, end).to_string(),
    };
    let query_start = c.toks[from].start;
    c.pos = c.toks.len();
    Ok(CreateTableAs {
        name,
        temporary,
        unlogged,
        if_not_exists,
        columns,
        query,
        query_start,
        with_data,
        select_into: false,
    })
}

/// `SELECT … INTO name …` as the CREATE TABLE AS it means (the query
/// without its INTO, reprinted); None for any other statement.
pub(crate) fn from_select_into(s: &ast::Statement) -> Option<CreateTableAs> {
    let ast::Statement::Query(q) = s else {
        return None;
    };
    let ast::SetExpr::Select(sel) = &*q.body else {
        return None;
    };
    let into = sel.into.as_ref()?;
    // Each part as `Cur::relation_name` writes it: quoted, an unquoted
    // name folded to lower case.
    let name = into
        .name
        .0
        .iter()
        .map(|i| match i.quote_style {
            Some(_) => super::quote_part(&i.value),
            None => super::quote_part(&i.value.to_lowercase()),
        })
        .collect::<Vec<_>>()
        .join(".");
    let mut query = q.clone();
    if let ast::SetExpr::Select(sel) = &mut *query.body {
        sel.into = None;
    }
    Some(CreateTableAs {
        name,
        temporary: into.temporary,
        unlogged: into.unlogged,
        if_not_exists: false,
        columns: Vec::new(),
        query: query.to_string(),
        query_start: 0,
        with_data: true,
        select_into: true,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{parse_one, Stmt};
    use super::*;

    fn ctas(sql: &str) -> CreateTableAs {
        match parse_one(sql) {
            Ok(Stmt::CreateTableAs(c)) => c,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn create_table_as_forms() {
        let c = ctas("CREATE TABLE t AS SELECT 1");
        assert_eq!((c.name.as_str(), c.query.as_str()), ("\"t\"", "SELECT 1"));
        assert!(c.with_data && !c.temporary && !c.if_not_exists && c.columns.is_empty());
        let c =
            ctas("create temp table if not exists s.\"T\" (a, \"B\") as select 1, 2 with no data;");
        assert_eq!(c.name, "\"s\".\"T\"");
        assert_eq!(c.columns, ["a", "B"]);
        assert_eq!(c.query, "select 1, 2");
        assert!(c.temporary && c.if_not_exists && !c.with_data);
        let c = ctas("CREATE UNLOGGED TABLE t AS TABLE src WITH DATA");
        assert!(c.unlogged && c.with_data);
        assert_eq!(c.query, "SELECT * FROM src");
        let c = ctas("CREATE TABLE t AS SELECT 1 AS a");
        assert_eq!(
            &"CREATE TABLE t AS SELECT 1 AS a"[c.query_start..],
            "SELECT 1 AS a"
        );
        // SELECT … INTO is the same statement.
        let c = ctas("SELECT a, b INTO TEMP new_t FROM src WHERE a > 1");
        assert_eq!(c.name, "\"new_t\"");
        assert!(c.select_into && c.temporary && c.with_data);
        assert_eq!(c.query, "SELECT a, b FROM src WHERE a > 1");
        // Not CREATE TABLE AS: plain CREATE TABLE goes to sqlparser.
        assert!(matches!(
            parse_one("CREATE TABLE t (a int)"),
            Ok(Stmt::Sql(_))
        ));
        assert!(parse_one("CREATE TABLE t AS").is_err());
        assert!(parse_one("CREATE TABLE t AS WITH NO DATA").is_err());
    }
}
