//! `synchronous_standby_names` (PostgreSQL's syncrep_scanner.l and
//! syncrep_gram.y): which standbys a commit waits for.
//!
//! ```text
//!   standby_config := standby_list                     FIRST 1
//!                   | NUM '(' standby_list ')'         FIRST NUM
//!                   | FIRST NUM '(' standby_list ')'   priority
//!                   | ANY NUM '(' standby_list ')'     quorum
//!   standby_list   := standby_name (',' standby_name)*
//!   standby_name   := identifier | "quoted ""name""" | NUM | '*'
//! ```
//!
//! `ANY` and `FIRST` are keywords (case-insensitive) only as whole words:
//! `anyone` is a name, `any` alone is a syntax error, as in PostgreSQL.
//! Names are kept as written; matching an `application_name` is
//! case-insensitive ([`SyncStandbyNames::priority`]). An empty value means
//! no synchronous standbys. Errors carry PostgreSQL's text: the caller
//! (configuration validation) reports `invalid value for parameter
//! "synchronous_standby_names"` with [`SyncRepParseError::Syntax`] as the
//! detail, or the message of [`SyncRepParseError::NumSync`] alone.

/// How the listed standbys are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncRepMethod {
    /// `FIRST n (…)`: the `n` connected standbys earliest in the list.
    Priority,
    /// `ANY n (…)`: any `n` of the listed connected standbys.
    Quorum,
}

/// A parsed, non-empty `synchronous_standby_names`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncStandbyNames {
    /// FIRST or ANY.
    pub method: SyncRepMethod,
    /// How many standbys must confirm (> 0).
    pub num_sync: usize,
    /// The names in order (`*` matches every standby).
    pub names: Vec<String>,
}

/// Why a value does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncRepParseError {
    /// The DETAIL line: `syntax error at or near "x"` / `… at end of input`.
    Syntax(String),
    /// `FIRST 0 (…)`: the whole message.
    NumSync(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Any,
    First,
    Name(String),
    Num(String),
    Comma,
    Open,
    Close,
    Junk,
}

/// The scanner: tokens with the text an error shows for each.
fn scan(s: &str) -> Result<Vec<(Tok, String)>, SyncRepParseError> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |c: char| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii();
    let ident_cont = |c: char| ident_start(c) || c.is_ascii_digit() || c == '$';
    while i < b.len() {
        let c = b[i];
        if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') {
            i += 1;
        } else if c == '"' {
            let mut name = String::new();
            i += 1;
            loop {
                match b.get(i) {
                    None => {
                        return Err(SyncRepParseError::Syntax(
                            "unterminated quoted identifier at end of input".into(),
                        ))
                    }
                    Some('"') if b.get(i + 1) == Some(&'"') => {
                        name.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        name.push(ch);
                        i += 1;
                    }
                }
            }
            out.push((Tok::Name(name), "\"".to_string()));
        } else if ident_start(c) {
            let st = i;
            while i < b.len() && ident_cont(b[i]) {
                i += 1;
            }
            let w: String = b[st..i].iter().collect();
            let t = if w.eq_ignore_ascii_case("any") {
                Tok::Any
            } else if w.eq_ignore_ascii_case("first") {
                Tok::First
            } else {
                Tok::Name(w.clone())
            };
            out.push((t, w));
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let w: String = b[st..i].iter().collect();
            out.push((Tok::Num(w.clone()), w));
        } else {
            let t = match c {
                '*' => Tok::Name("*".into()),
                ',' => Tok::Comma,
                '(' => Tok::Open,
                ')' => Tok::Close,
                _ => Tok::Junk,
            };
            out.push((t, c.to_string()));
            i += 1;
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, String)>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }
    fn error(&self) -> SyncRepParseError {
        SyncRepParseError::Syntax(match self.toks.get(self.pos) {
            Some((_, text)) => format!("syntax error at or near \"{text}\""),
            None => "syntax error at end of input".into(),
        })
    }
    fn expect(&mut self, t: Tok) -> Result<(), SyncRepParseError> {
        if self.peek() == Some(&t) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error())
        }
    }
    fn num(&mut self) -> Result<String, SyncRepParseError> {
        match self.peek() {
            Some(Tok::Num(n)) => {
                let n = n.clone();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.error()),
        }
    }
    fn list(&mut self) -> Result<Vec<String>, SyncRepParseError> {
        let mut names = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Name(n) | Tok::Num(n)) => {
                    names.push(n.clone());
                    self.pos += 1;
                }
                _ => return Err(self.error()),
            }
            if self.peek() == Some(&Tok::Comma) {
                self.pos += 1;
            } else {
                return Ok(names);
            }
        }
    }
    fn parenthesized(&mut self) -> Result<Vec<String>, SyncRepParseError> {
        self.expect(Tok::Open)?;
        let l = self.list()?;
        self.expect(Tok::Close)?;
        Ok(l)
    }
}

/// Parses a `synchronous_standby_names` value: `Ok(None)` for the empty
/// value (no synchronous standbys).
pub fn parse_sync_standby_names(s: &str) -> Result<Option<SyncStandbyNames>, SyncRepParseError> {
    if s.is_empty() {
        return Ok(None);
    }
    let mut p = Parser {
        toks: scan(s)?,
        pos: 0,
    };
    let (method, num, names) = match p.peek() {
        Some(Tok::Any) => {
            p.pos += 1;
            let n = p.num()?;
            (SyncRepMethod::Quorum, n, p.parenthesized()?)
        }
        Some(Tok::First) => {
            p.pos += 1;
            let n = p.num()?;
            (SyncRepMethod::Priority, n, p.parenthesized()?)
        }
        Some(Tok::Num(n)) if p.toks.get(1).map(|(t, _)| t) == Some(&Tok::Open) => {
            let n = n.clone();
            p.pos += 1;
            (SyncRepMethod::Priority, n, p.parenthesized()?)
        }
        _ => (SyncRepMethod::Priority, "1".to_string(), p.list()?),
    };
    if p.pos < p.toks.len() {
        return Err(p.error());
    }
    // atoi: digits only, so the value is non-negative; huge values clamp.
    let num_sync = num.parse::<usize>().unwrap_or(usize::MAX);
    if num_sync == 0 {
        return Err(SyncRepParseError::NumSync(format!(
            "number of synchronous standbys ({num}) must be greater than zero"
        )));
    }
    Ok(Some(SyncStandbyNames {
        method,
        num_sync,
        names,
    }))
}

impl SyncStandbyNames {
    /// SyncRepGetStandbyPriority: the priority of a standby connecting as
    /// `application_name` — its 1-based position in the list (`FIRST`),
    /// 1 if listed at all (`ANY`), 0 if not listed (asynchronous). Names
    /// match case-insensitively; `*` matches every name.
    pub fn priority(&self, application_name: &str) -> u32 {
        let pos = self
            .names
            .iter()
            .position(|n| n == "*" || n.eq_ignore_ascii_case(application_name));
        match (pos, self.method) {
            (None, _) => 0,
            (Some(_), SyncRepMethod::Quorum) => 1,
            (Some(i), SyncRepMethod::Priority) => u32::try_from(i + 1).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> SyncStandbyNames {
        parse_sync_standby_names(s).unwrap().unwrap()
    }
    fn syntax(s: &str) -> String {
        match parse_sync_standby_names(s) {
            Err(SyncRepParseError::Syntax(d)) => d,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn forms() {
        assert_eq!(parse_sync_standby_names("").unwrap(), None);
        let a = ok("a, b");
        assert_eq!(a.method, SyncRepMethod::Priority);
        assert_eq!(a.num_sync, 1);
        assert_eq!(a.names, vec!["a", "b"]);
        let f = ok("FIRST 2 (s1, \"S 2\", *)");
        assert_eq!((f.method, f.num_sync), (SyncRepMethod::Priority, 2));
        assert_eq!(f.names, vec!["s1", "S 2", "*"]);
        let q = ok("any 1 (x,y)");
        assert_eq!((q.method, q.num_sync), (SyncRepMethod::Quorum, 1));
        let n = ok("2 (a, b)");
        assert_eq!((n.method, n.num_sync), (SyncRepMethod::Priority, 2));
        assert_eq!(ok("2").names, vec!["2"]);
        assert_eq!(ok("anyone").names, vec!["anyone"]);
        assert_eq!(ok("\"a\"\"b\"").names, vec!["a\"b"]);
    }

    #[test]
    fn errors_as_postgres() {
        assert_eq!(syntax("FIRST (a"), "syntax error at or near \"(\"");
        assert_eq!(syntax("a b"), "syntax error at or near \"b\"");
        assert_eq!(syntax("any"), "syntax error at end of input");
        assert_eq!(syntax("a,"), "syntax error at end of input");
        assert_eq!(syntax("a-b"), "syntax error at or near \"-\"");
        assert_eq!(
            syntax("\"abc"),
            "unterminated quoted identifier at end of input"
        );
        assert_eq!(
            parse_sync_standby_names("FIRST 0 (a)"),
            Err(SyncRepParseError::NumSync(
                "number of synchronous standbys (0) must be greater than zero".into()
            ))
        );
    }

    proptest::proptest! {
        /// Any text parses or is refused; nothing panics, and a parsed
        /// value always names at least one standby and waits for one.
        #[test]
        fn never_panics(s in "[ a-zA-Z0-9_,()*\"$.-]{0,24}|\\PC{0,24}") {
            if let Ok(Some(n)) = parse_sync_standby_names(&s) {
                proptest::prop_assert!(!n.names.is_empty());
                proptest::prop_assert!(n.num_sync > 0);
            }
        }
    }

    #[test]
    fn priorities() {
        let f = ok("FIRST 1 (s1, S2, *)");
        assert_eq!(f.priority("s1"), 1);
        assert_eq!(f.priority("s2"), 2);
        assert_eq!(f.priority("other"), 3);
        let q = ok("ANY 2 (s1, s2)");
        assert_eq!(q.priority("s2"), 1);
        assert_eq!(q.priority("s3"), 0);
    }
}
