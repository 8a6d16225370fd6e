//! Error cursor positions for errors found after parsing (PostgreSQL's
//! `parser_errposition`): the `LINE 1: …` and caret psql prints under an
//! error that names a column, a function, an operator, a literal.
//!
//! PostgreSQL's parse nodes carry their location in the text; sqlparser's
//! do not, so the binder reports only the error, and [`locate`] finds the
//! token the message is about in the statement's text: the first
//! reference of the named column, the named function's call, the operator,
//! the literal, the clause the message names. It is applied to errors
//! from binding a statement (never to errors while it runs, which
//! PostgreSQL reports without a position), and only when the error has
//! no position yet. A message it does not know, or a token it cannot find,
//! leaves the error without one.

use pgtypes::error::PgError;

use super::{char_position, lex, Tok, Token};

/// `e` with PostgreSQL's error position in `sql`, when the message names
/// something [`locate`] can find. `columns` answers how many columns a
/// table (as named in the text) has, for an INSERT without a column list.
pub fn locate(e: PgError, sql: &str, columns: &dyn Fn(&str) -> Option<usize>) -> PgError {
    if e.position.is_some() {
        return e;
    }
    let Ok(toks) = lex(sql) else {
        return e;
    };
    let found = if e.message == "INSERT has more expressions than target columns" {
        extra_insert_value(&toks, columns)
    } else {
        find(&e.message, &toks)
    };
    match found {
        Some(i) => {
            let pos = char_position(sql, toks[i].start);
            e.with_position(pos)
        }
        None => e,
    }
}

/// The aggregate functions by name: what the messages about aggregates
/// point at, and what an index expression may not call.
pub(crate) const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "string_agg",
    "array_agg",
    "bool_and",
    "bool_or",
    "every",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
];

/// The first quoted part of a message: `x` of `column "x" does not exist`.
fn quoted(msg: &str) -> Option<&str> {
    let a = msg.find('"')?;
    let b = msg[a + 1..].find('"')?;
    Some(&msg[a + 1..a + 1 + b])
}

fn name_of(t: &Token) -> Option<&str> {
    match &t.tok {
        Tok::Word(w) | Tok::Ident(w) => Some(w),
        _ => None,
    }
}

fn is_word(t: Option<&Token>, w: &str) -> bool {
    matches!(t.map(|t| &t.tok), Some(Tok::Word(x)) if x == w)
}

fn is_punct(t: Option<&Token>, c: char) -> bool {
    matches!(t.map(|t| &t.tok), Some(Tok::Punct(x)) if *x == c)
}

/// The index of the token a message is about.
fn find(msg: &str, toks: &[Token]) -> Option<usize> {
    let prev = |i: usize| i.checked_sub(1).and_then(|j| toks.get(j));
    // A reference to `name` (not a qualifier, not a call); qualified
    // references point at their qualifier, as PostgreSQL's ColumnRef.
    let reference = |name: &str| {
        let i = (0..toks.len()).find(|&i| {
            name_of(&toks[i]) == Some(name)
                && !is_punct(toks.get(i + 1), '.')
                && !is_punct(toks.get(i + 1), '(')
        })?;
        if is_punct(prev(i), '.') && i >= 2 && name_of(&toks[i - 2]).is_some() {
            Some(i - 2)
        } else {
            Some(i)
        }
    };
    // `q.name`: the qualifier's index.
    let qualified = |q: &str, name: &str| {
        (0..toks.len().saturating_sub(2)).find(|&i| {
            name_of(&toks[i]) == Some(q)
                && is_punct(toks.get(i + 1), '.')
                && toks.get(i + 2).and_then(name_of) == Some(name)
        })
    };
    // The first call of a function in `names` at or after `from`.
    let call = |names: &[&str], from: usize| {
        (from..toks.len()).find(|&i| {
            name_of(&toks[i]).is_some_and(|n| names.contains(&n))
                && is_punct(toks.get(i + 1), '(')
                && !is_punct(prev(i), '.')
        })
    };
    // The first token after the keyword pair / keyword `w`.
    let after = |w: &[&str]| {
        (0..toks.len()).find_map(|i| {
            w.iter()
                .enumerate()
                .all(|(k, x)| is_word(toks.get(i + k), x))
                .then_some(i + w.len())
                .filter(|&j| j < toks.len())
        })
    };
    // A literal written in the text.
    let literal = |v: &str| {
        toks.iter()
            .position(|t| matches!(&t.tok, Tok::Str(s) | Tok::Num(s) if s == v))
    };
    if let Some(rest) = msg.strip_prefix("column ") {
        if let Some(name) = rest.strip_suffix(" does not exist") {
            // `column t.x does not exist` (qualified, unquoted) or
            // `column "x" does not exist`.
            if let Some((q, n)) = name.split_once('.').filter(|_| !name.starts_with('"')) {
                return qualified(q, n);
            }
            return reference(quoted(msg)?);
        }
        if rest.contains(" of relation ") || rest.starts_with("reference ") {
            return reference(quoted(msg)?);
        }
        if rest.contains("must appear in the GROUP BY clause") {
            let q = quoted(msg)?;
            let name = q.rsplit('.').next().unwrap_or(q);
            return reference(name);
        }
        return None;
    }
    if msg.starts_with("relation ") && msg.ends_with(" does not exist") {
        let q = quoted(msg)?;
        return match q.split_once('.') {
            Some((s, n)) => qualified(s, n),
            None => (0..toks.len()).find(|&i| name_of(&toks[i]) == Some(q)),
        };
    }
    if let Some(t) = msg
        .strip_prefix("missing FROM-clause entry for table ")
        .and_then(|_| quoted(msg))
    {
        return (0..toks.len())
            .find(|&i| name_of(&toks[i]) == Some(t) && is_punct(toks.get(i + 1), '.'));
    }
    if let Some(rest) = msg.strip_prefix("function ") {
        if !rest.ends_with(" does not exist") {
            return None;
        }
        let name = rest.split('(').next()?;
        return match name.split_once('.') {
            Some((s, n)) => qualified(s, n),
            None => call(&[name], 0),
        };
    }
    if let Some(rest) = msg.strip_prefix("operator does not exist: ") {
        // `a op b` or `op b` (prefix): the operator is the word before
        // the last type.
        let parts: Vec<&str> = rest.split(' ').collect();
        let op = match parts.as_slice() {
            [_, op, ..] if parts.len() >= 3 => *op,
            [op, _] => *op,
            _ => return None,
        };
        let chars: Vec<char> = op.chars().collect();
        return (0..toks.len()).find(|&i| {
            let run: Vec<char> = toks[i..]
                .iter()
                .map_while(|t| match t.tok {
                    Tok::Punct(c) if "+-*/<>=~!@#%^&|`?".contains(c) => Some(c),
                    _ => None,
                })
                .collect();
            run == chars && !matches!(prev(i).map(|t| &t.tok), Some(Tok::Punct(c)) if "+-*/<>=~!@#%^&|`?".contains(*c))
        });
    }
    if let Some(v) = msg
        .strip_prefix("malformed array literal: \"")
        .and_then(|r| r.strip_suffix('"'))
    {
        return literal(v);
    }
    if msg.starts_with("invalid input syntax for type ") || msg.starts_with("value \"") {
        let v = if msg.starts_with("value ") {
            quoted(msg)?
        } else {
            let q = msg.rsplit_once(": \"")?.1;
            q.strip_suffix('"')?
        };
        return literal(v);
    }
    if let Some(v) = msg
        .strip_prefix("date/time field value out of range: \"")
        .and_then(|r| r.strip_suffix('"'))
    {
        // Only a typed literal (`date '…'`, `'…'::date`) is checked at
        // parse time; a function's argument fails when it runs.
        return toks.iter().enumerate().position(|(i, t)| {
            matches!(&t.tok, Tok::Str(s) if s == v)
                && (matches!(prev(i).map(|p| &p.tok), Some(Tok::Word(w))
                    if matches!(w.as_str(), "date" | "timestamp" | "timestamptz" | "time" | "timetz" | "interval"))
                    || (is_punct(toks.get(i + 1), ':') && is_punct(toks.get(i + 2), ':')))
        });
    }
    if let Some(rest) = msg.strip_prefix("aggregate functions are not allowed in ") {
        let from = if rest.starts_with("a recursive query") {
            after(&["union", "all"]).or_else(|| after(&["union"]))?
        } else if let Some(clause) = rest.split(' ').next() {
            after(&[&clause.to_lowercase()]).unwrap_or(0)
        } else {
            0
        };
        return call(AGGREGATES, from);
    }
    if msg == "aggregate function calls cannot be nested" {
        let outer = call(AGGREGATES, 0)?;
        return call(AGGREGATES, outer + 1);
    }
    if let Some(rest) = msg.strip_prefix("window functions are not allowed in ") {
        let from = after(&[&rest.split(' ').next()?.to_lowercase()])?;
        // A call followed by OVER.
        return (from..toks.len()).find(|&i| {
            name_of(&toks[i]).is_some()
                && is_punct(toks.get(i + 1), '(')
                && close_of(toks, i + 1).is_some_and(|c| is_word(toks.get(c + 1), "over"))
        });
    }
    for clause in ["ORDER BY", "GROUP BY"] {
        if let Some(rest) = msg.strip_prefix(&format!("{clause} position ")) {
            let n = rest.split(' ').next()?;
            let words: Vec<String> = clause.split(' ').map(str::to_lowercase).collect();
            let w: Vec<&str> = words.iter().map(String::as_str).collect();
            let from = after(&w)?;
            return (from..toks.len()).find(|&i| matches!(&toks[i].tok, Tok::Num(x) if x == n));
        }
    }
    if let Some(rest) = msg.strip_prefix("argument of ") {
        let clause = rest.split(' ').next()?.to_lowercase();
        return after(&[&clause]);
    }
    if msg == "subquery must return only one column" {
        return (0..toks.len())
            .find(|&i| is_punct(toks.get(i), '(') && is_word(toks.get(i + 1), "select"));
    }
    if msg == "subquery has too many columns" {
        return (0..toks.len()).find(|&i| {
            is_word(toks.get(i), "in")
                && is_punct(toks.get(i + 1), '(')
                && is_word(toks.get(i + 2), "select")
        });
    }
    if let Some(rest) = msg.strip_prefix("each ") {
        // `each UNION query must have the same number of columns`: the
        // right query's select list.
        let op = rest.split(' ').next()?.to_lowercase();
        let at = (0..toks.len()).find(|&i| is_word(toks.get(i), &op))?;
        let sel = (at..toks.len()).find(|&i| is_word(toks.get(i), "select"))?;
        return Some(sel + 1).filter(|&j| j < toks.len());
    }
    if msg.contains(" types ") && msg.ends_with(" cannot be matched") {
        let op = msg.split(' ').next()?.to_lowercase();
        if !matches!(op.as_str(), "union" | "intersect" | "except") {
            return None;
        }
        let at = (0..toks.len()).find(|&i| is_word(toks.get(i), &op))?;
        let sel = (at..toks.len()).find(|&i| is_word(toks.get(i), "select"))?;
        let mut j = sel + 1;
        if is_word(toks.get(j), "all") || is_word(toks.get(j), "distinct") {
            j += 1;
        }
        return Some(j).filter(|&j| j < toks.len());
    }
    if msg == "SELECT DISTINCT ON expressions must match initial ORDER BY expressions" {
        return after(&["distinct", "on"])
            .map(|i| i + 1)
            .filter(|&i| i < toks.len());
    }
    None
}

/// The first value of a VALUES row beyond the INSERT's target columns
/// (its column list's, else the table's).
fn extra_insert_value(toks: &[Token], columns: &dyn Fn(&str) -> Option<usize>) -> Option<usize> {
    if !is_word(toks.first(), "insert") || !is_word(toks.get(1), "into") {
        return None;
    }
    // The table name, maybe qualified.
    let mut i = 2;
    let mut name = name_of(toks.get(i)?)?.to_string();
    while is_punct(toks.get(i + 1), '.') {
        i += 2;
        name = format!("{name}.{}", name_of(toks.get(i)?)?);
    }
    i += 1;
    if is_word(toks.get(i), "as") {
        i += 2;
    }
    let n = if is_punct(toks.get(i), '(') {
        let close = close_of(toks, i)?;
        let n = toks[i + 1..close]
            .iter()
            .filter(|t| t.tok == Tok::Punct(','))
            .count()
            + 1;
        i = close + 1;
        n
    } else {
        columns(&name)?
    };
    if !is_word(toks.get(i), "values") {
        return None;
    }
    // Each row: the n-th comma at depth 1 starts the extra value.
    let mut at = i + 1;
    while is_punct(toks.get(at), '(') {
        let close = close_of(toks, at)?;
        let mut depth = 0;
        let mut commas = 0;
        for j in at..close {
            match toks[j].tok {
                Tok::Punct('(') => depth += 1,
                Tok::Punct(')') => depth -= 1,
                Tok::Punct(',') if depth == 1 => {
                    commas += 1;
                    if commas == n {
                        return Some(j + 1);
                    }
                }
                _ => {}
            }
        }
        if !is_punct(toks.get(close + 1), ',') {
            return None;
        }
        at = close + 2;
    }
    None
}

/// The index of the `)` closing the `(` at `open`.
fn close_of(toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::error::sqlstate;

    fn pos(msg: &str, sql: &str) -> Option<u32> {
        locate(
            PgError::new(sqlstate::UNDEFINED_COLUMN, msg.to_string()),
            sql,
            &|_| Some(2),
        )
        .position
    }

    #[test]
    fn finds_what_the_message_names() {
        assert_eq!(
            pos("column \"y\" does not exist", "SELECT y FROM t"),
            Some(8)
        );
        assert_eq!(
            pos("column t.nosuch does not exist", "SELECT t.nosuch FROM t"),
            Some(8)
        );
        assert_eq!(
            pos(
                "operator does not exist: text > integer",
                "SELECT 1 WHERE a >= 1 OR b > 2"
            ),
            Some(28)
        );
        assert_eq!(
            pos(
                "invalid input syntax for type integer: \"x\"",
                "SELECT 'x'::int"
            ),
            Some(8)
        );
        assert_eq!(
            pos("function f(integer) does not exist", "SELECT f + f(1)"),
            Some(12)
        );
        assert_eq!(pos("something else", "SELECT 1"), None);
        let extra = "INSERT has more expressions than target columns";
        assert_eq!(pos(extra, "INSERT INTO t VALUES (1, 2, 3)"), Some(29));
        assert_eq!(
            pos(extra, "INSERT INTO t (a) VALUES (1, f(2, 3))"),
            Some(30)
        );
        assert_eq!(pos("column \"z\" does not exist", "SELECT y FROM t"), None);
    }
}
