//! Regular expressions: `~` `~*` `!~` `!~*`, `regexp_match`,
//! `regexp_replace`, `substring(… from pattern)`, `SIMILAR TO` and
//! `LIKE … ESCAPE` (PostgreSQL's `regexp.c` and `like.c`).
//!
//! Patterns are compiled with the `regex` crate and cached per thread
//! (keyed by pattern and flags), so a constant pattern compiles once per
//! session thread, not once per row.
//!
//! PostgreSQL's regular expressions are Henry Spencer's ARE; the `regex`
//! crate's syntax is close (Perl-like classes, `{m,n}`, non-greedy `*?`,
//! `(?:…)`, POSIX `[[:alpha:]]`), with these known differences:
//! * no back-references (`\1` in a pattern) and no look-around
//!   (`(?=…)`, `(?!…)`): 2201B `invalid regular expression`;
//! * `\m` / `\M` (start / end of word) are read as `\b`; `\y` as `\b`,
//!   `\Y` as `\B`; `\A` and `\Z` keep their meaning;
//! * matching is leftmost-first (Perl) rather than ARE's
//!   longest-leftmost for alternations, which can pick a different match
//!   among alternatives of different lengths;
//! * embedded options `(?i)` work, ARE's leading `***:` director does not.
//!
//! As in PostgreSQL, `.` matches a newline and `^`/`$` anchor the whole
//! string unless the `n` flag (newline-sensitive) is given.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use pgtypes::error::{sqlstate, PgError, PgResult};
use regex::{Regex, RegexBuilder};

/// Compile-time options from a flags string (`i`, `c`, `n`, `m`, `s`,
/// `x`, `g`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Case-insensitive.
    pub icase: bool,
    /// Newline-sensitive (`n`/`m`): `.` and `[^…]` stop at newlines, `^`/`$` match at lines.
    pub newline: bool,
    /// Expanded syntax (`x`): white space and `#` comments ignored.
    pub expanded: bool,
    /// Replace every match (`g`, regexp_replace only).
    pub global: bool,
}

/// Parses a flags argument; 22023 `invalid regular expression option: "z"`.
pub fn parse_flags(s: &str) -> PgResult<Flags> {
    let mut f = Flags::default();
    for c in s.chars() {
        match c {
            'i' => f.icase = true,
            'c' => f.icase = false,
            'n' | 'm' => f.newline = true,
            's' | 'p' | 'w' => f.newline = false,
            'x' => f.expanded = true,
            'g' => f.global = true,
            other => {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid regular expression option: \"{other}\""),
                ))
            }
        }
    }
    Ok(f)
}

/// Rewrites the ARE escapes the `regex` crate spells differently.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('m') | Some('M') | Some('y') => out.push_str("\\b"),
                Some('Y') => out.push_str("\\B"),
                Some('Z') => out.push_str("\\z"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A compiled pattern's identity: its text and compile-time flags.
type CacheKey = (String, Flags);

thread_local! {
    static CACHE: RefCell<HashMap<CacheKey, Arc<Regex>>> = RefCell::new(HashMap::new());
}

/// Compiles (or fetches from the per-thread cache) a pattern; 2201B on a
/// syntax error.
pub fn compile(pattern: &str, flags: Flags) -> PgResult<Arc<Regex>> {
    let key = (
        pattern.to_string(),
        Flags {
            global: false,
            ..flags
        },
    );
    if let Some(r) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    let re = RegexBuilder::new(&translate(pattern))
        .case_insensitive(flags.icase)
        .dot_matches_new_line(!flags.newline)
        .multi_line(flags.newline)
        .ignore_whitespace(flags.expanded)
        .build()
        .map_err(|e| {
            let msg = match e {
                regex::Error::Syntax(s) => {
                    let detail = s
                        .lines()
                        .rev()
                        .find(|l| l.starts_with("error:"))
                        .map(|l| l.trim_start_matches("error:").trim().to_string())
                        .unwrap_or(s);
                    // PostgreSQL's wording for the common mistakes.
                    match detail.as_str() {
                        "unclosed group" | "unopened group" => {
                            "parentheses () not balanced".to_string()
                        }
                        "unclosed character class" => "brackets [] not balanced".to_string(),
                        "repetition operator missing expression" => {
                            "quantifier operand invalid".to_string()
                        }
                        _ => detail,
                    }
                }
                other => other.to_string(),
            };
            PgError::new(
                sqlstate::INVALID_REGULAR_EXPRESSION,
                format!("invalid regular expression: {msg}"),
            )
        })?;
    let re = Arc::new(re);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 256 {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    Ok(re)
}

/// `s ~ pattern` (`~*` with `icase`).
pub fn is_match(s: &str, pattern: &str, icase: bool) -> PgResult<bool> {
    let re = compile(
        pattern,
        Flags {
            icase,
            ..Flags::default()
        },
    )?;
    Ok(re.is_match(s))
}

/// `regexp_match(s, pattern, flags)`: the capture groups of the first
/// match (the whole match when the pattern has none), None without a match.
/// Unmatched groups are NULL (None inside).
pub fn regexp_match(s: &str, pattern: &str, flags: &str) -> PgResult<Option<Vec<Option<String>>>> {
    let f = parse_flags(flags)?;
    if f.global {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "regexp_match() does not support the \"global\" option",
        )
        .with_hint("Use the regexp_matches function instead."));
    }
    let re = compile(pattern, f)?;
    let Some(caps) = re.captures(s) else {
        return Ok(None);
    };
    if caps.len() == 1 {
        return Ok(Some(vec![caps.get(0).map(|m| m.as_str().to_string())]));
    }
    Ok(Some(
        (1..caps.len())
            .map(|i| caps.get(i).map(|m| m.as_str().to_string()))
            .collect(),
    ))
}

/// `substring(s from pattern)`: the first parenthesised group of the first
/// match, or the whole match when there is no group.
pub fn substring(s: &str, pattern: &str) -> PgResult<Option<String>> {
    let re = compile(pattern, Flags::default())?;
    let Some(caps) = re.captures(s) else {
        return Ok(None);
    };
    let m = if caps.len() > 1 {
        caps.get(1)
    } else {
        caps.get(0)
    };
    Ok(m.map(|m| m.as_str().to_string()))
}

/// `regexp_replace(s, pattern, replacement, flags)`: `\1`…`\9` insert a
/// group, `\&` the whole match, `\\` a backslash; first match only unless
/// `g`.
pub fn regexp_replace(s: &str, pattern: &str, repl: &str, flags: &str) -> PgResult<String> {
    let f = parse_flags(flags)?;
    let re = compile(pattern, f)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in re.captures_iter(s) {
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&s[last..m.start()]);
        let mut chars = repl.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.peek().copied() {
                Some(d @ '1'..='9') => {
                    chars.next();
                    let i = d as usize - '0' as usize;
                    if let Some(g) = caps.get(i) {
                        out.push_str(g.as_str());
                    }
                }
                Some('&') => {
                    chars.next();
                    out.push_str(m.as_str());
                }
                Some('\\') => {
                    chars.next();
                    out.push('\\');
                }
                _ => out.push('\\'),
            }
        }
        last = m.end();
        if !f.global {
            break;
        }
    }
    out.push_str(&s[last..]);
    Ok(out)
}

fn escape_error() -> PgError {
    PgError::new(sqlstate::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
        .with_hint("Escape string must be empty or one character.")
}

/// The escape character of a `LIKE`/`SIMILAR TO … ESCAPE e` clause (None
/// for the empty string, which turns escaping off).
pub fn escape_char(e: &str) -> PgResult<Option<char>> {
    let mut it = e.chars();
    match (it.next(), it.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err(escape_error()),
    }
}

/// Translates a `SIMILAR TO` pattern into an anchored regular expression
/// (PostgreSQL's similar_to_escape): `%` → `.*`, `_` → `.`, the SQL regex
/// operators `| * + ? {m,n} ( ) [ ]` kept, other regex metacharacters
/// quoted, `escape` making the next character literal.
pub fn similar_to_regex(pattern: &str, escape: Option<char>) -> PgResult<String> {
    let mut out = String::from("^(?:");
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some(n) => out.push_str(&regex::escape(&n.to_string())),
                None => {
                    return Err(PgError::new(
                        sqlstate::INVALID_ESCAPE_SEQUENCE,
                        "invalid escape string",
                    )
                    .with_hint("Escape string must be empty or one character."))
                }
            }
            continue;
        }
        if in_class {
            if c == ']' {
                in_class = false;
            }
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
            continue;
        }
        match c {
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            '[' => {
                in_class = true;
                out.push('[');
            }
            '|' | '*' | '+' | '?' | '{' | '}' | '(' | ')' | ',' => out.push(c),
            '.' | '^' | '$' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            other => out.push(other),
        }
    }
    out.push_str(")$");
    Ok(out)
}

/// LIKE matching with an explicit escape character (None: no escapes);
/// `%` any run, `_` one character. The one LIKE matcher: `LIKE`,
/// `ILIKE` (escape `\\`), `LIKE … ESCAPE` and the planner's estimates.
/// A pattern ending in its escape character is 22025, as in PostgreSQL.
pub fn like_match(s: &str, p: &str, escape: Option<char>, icase: bool) -> PgResult<bool> {
    if let Some(e) = escape {
        let mut it = p.chars();
        while let Some(c) = it.next() {
            if c == e && it.next().is_none() {
                return Err(PgError::new(
                    sqlstate::INVALID_ESCAPE_SEQUENCE,
                    "LIKE pattern must not end with escape character",
                ));
            }
        }
    }
    if icase {
        return like_match(&s.to_lowercase(), &p.to_lowercase(), escape, false);
    }
    // ASCII text (one byte a character) matches on its bytes, without
    // collecting characters: the per-row path of `LIKE '%word%'`.
    if s.is_ascii() && p.is_ascii() && escape.is_none_or(|e| e.is_ascii()) {
        let esc = escape.map(|e| e as u8);
        return Ok(like_units(s.as_bytes(), p.as_bytes(), b'%', b'_', esc));
    }
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = p.chars().collect();
    Ok(like_units(&s, &p, '%', '_', escape))
}

/// The LIKE matcher over units of any kind (bytes of ASCII text, or
/// chars): iterative, backtracking to the last `%`. The pattern does not
/// end in `esc` (checked by the caller).
fn like_units<T: Copy + PartialEq>(s: &[T], p: &[T], any: T, one: T, esc: Option<T>) -> bool {
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if let Some(&c) = p.get(pi) {
            if Some(c) == esc {
                if p.get(pi + 1) == Some(&s[si]) {
                    si += 1;
                    pi += 2;
                    continue;
                }
            } else if c == any {
                star = Some((pi, si));
                pi += 1;
                continue;
            } else if c == one || c == s[si] {
                si += 1;
                pi += 1;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    while p.get(pi) == Some(&any) {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_and_match() {
        assert_eq!(
            regexp_replace("foobarbaz", "b(..)", "X\\1Y", "g").unwrap(),
            "fooXarYXazY"
        );
        assert_eq!(regexp_replace("Hello", "L", "_", "i").unwrap(), "He_lo");
        assert_eq!(
            regexp_match("foobarbequebaz", "(bar)(beque)", "").unwrap(),
            Some(vec![Some("bar".into()), Some("beque".into())])
        );
        assert_eq!(substring("foobar", "o.b").unwrap().as_deref(), Some("oob"));
        assert_eq!(substring("foobar", "o(.)b").unwrap().as_deref(), Some("o"));
        assert!(compile("(", Flags::default()).is_err());
        assert_eq!(compile("(", Flags::default()).unwrap_err().code, "2201B");
    }

    #[test]
    fn similar_and_like() {
        let sim = |s: &str, p: &str| {
            let re = similar_to_regex(p, Some('\\')).unwrap();
            compile(&re, Flags::default()).unwrap().is_match(s)
        };
        assert!(sim("abc", "abc"));
        assert!(sim("abc", "a%"));
        assert!(!sim("abc", "_b"));
        assert!(sim("abc", "%(b|d)%"));
        assert!(!sim("abc", "(b|c)%"));
        assert!(sim("a.c", "a.c"));
        assert!(!sim("abc", "a.c"));
        assert!(like_match("50%", "50#%", Some('#'), false).unwrap());
        assert!(!like_match("50x", "50#%", Some('#'), false).unwrap());
        assert!(like_match("a\\b", "a\\b", None, false).unwrap());
        assert!(like_match("ABC", "a%", None, true).unwrap());
    }
}
