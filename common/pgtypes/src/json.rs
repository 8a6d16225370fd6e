//! json and jsonb: PostgreSQL's JSON types.
//!
//! * `json` (OID 114) is the input text, validated: a [`crate::value::Value::Json`]
//!   holds the string exactly as given (whitespace, key order and duplicate
//!   keys kept), and its operators re-parse it with [`parse`], whose nodes
//!   carry byte spans so `->` can return the original text of a member.
//! * `jsonb` (OID 3802) is parsed into a [`Jsonb`] tree in canonical form:
//!   object keys deduplicated (the last value wins) and sorted as
//!   PostgreSQL stores them — shorter keys first, equal lengths bytewise —,
//!   strings de-escaped, numbers kept as the text `numeric_out` would print
//!   (`1e2` → `100`, `1.50` stays `1.50`), so precision is never lost.
//!
//! One hand-written parser serves both, following PostgreSQL's `jsonapi.c`
//! token by token so errors match: 22P02 `invalid input syntax for type
//! json` with the same DETAIL (`Token "x" is invalid.`, `The input string
//! ended unexpectedly.`, …), and 22P05 for `\u0000` in jsonb.
//!
//! Output ([`Jsonb::write`], [`Jsonb::pretty`]) is a port of
//! `JsonbToCStringWorker`: `{"a": 1, "b": [1, 2]}`, and jsonb_pretty's
//! four-space indentation including its spelling of empty containers.
//!
//! Ordering ([`cmp_jsonb`]) is `compareJsonbContainers`: by type
//! (null < string < number < boolean < array < object), containers first by
//! their element count, then member by member; a top-level scalar sorts
//! below any non-empty array and above the empty array. The index key
//! encoding in `storage::keycodec` must agree with it (tested there).
//!
//! Next: the operators and functions over these trees live in the SQL
//! layer (`sql::jsonfuncs`); this module only knows values.

use std::cmp::Ordering;

use crate::error::{sqlstate, PgError, PgResult};

/// A jsonb value in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Jsonb {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number, as numeric's output text (canonical: `100`, `0.150`, `-2`).
    Number(String),
    /// A string (de-escaped).
    String(String),
    /// An array.
    Array(Vec<Jsonb>),
    /// An object: keys unique, sorted by [`cmp_keys`].
    Object(Vec<(String, Jsonb)>),
}

/// A parsed JSON value with the byte range of its text in the input.
#[derive(Clone, Debug)]
pub struct Node {
    /// Start of the value's text.
    pub start: usize,
    /// End (exclusive) of the value's text.
    pub end: usize,
    /// What it is.
    pub kind: NodeKind,
}

/// The kinds of [`Node`].
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number (its text is the node's span).
    Number,
    /// A string, de-escaped (when the parse de-escapes; else empty).
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object's members in input order (duplicates kept).
    Object(Vec<(String, Node)>),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok {
    ObjStart,
    ObjEnd,
    ArrStart,
    ArrEnd,
    Comma,
    Colon,
    Str,
    Num,
    True,
    False,
    Null,
    End,
}

/// PostgreSQL's JSON_ALPHANUMERIC_CHAR.
fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The input error kinds of jsonapi.c, with what their DETAIL needs.
enum LexErr {
    InvalidToken,
    EscapingInvalid,
    EscapingRequired(u8),
    UnicodeFormat,
    CodePointZero,
    HighSurrogate,
    LowSurrogate,
}

struct Lexer<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    tok: Tok,
    tok_start: usize,
    tok_end: usize,
    /// De-escape strings (jsonb, and json operators reading strings).
    unescape: bool,
    strval: String,
}

/// Error with PostgreSQL's message for json input.
fn syntax(detail: String) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        "invalid input syntax for type json",
    )
    .with_detail(detail)
}

impl<'a> Lexer<'a> {
    fn token_text(&self) -> String {
        let end = self.tok_end.min(self.s.len());
        let start = self.tok_start.min(end);
        String::from_utf8_lossy(&self.s[start..end]).into_owned()
    }

    fn lex_error(&self, e: LexErr) -> PgError {
        match e {
            LexErr::InvalidToken => syntax(format!("Token \"{}\" is invalid.", self.token_text())),
            LexErr::EscapingInvalid => syntax(format!(
                "Escape sequence \"\\{}\" is invalid.",
                self.token_text()
            )),
            LexErr::EscapingRequired(c) => {
                syntax(format!("Character with value 0x{c:02x} must be escaped."))
            }
            LexErr::UnicodeFormat => {
                syntax("\"\\u\" must be followed by four hexadecimal digits.".into())
            }
            LexErr::CodePointZero => PgError::new(
                sqlstate::UNTRANSLATABLE_CHARACTER,
                "unsupported Unicode escape sequence",
            )
            .with_detail("\\u0000 cannot be converted to text."),
            LexErr::HighSurrogate => {
                syntax("Unicode high surrogate must not follow a high surrogate.".into())
            }
            LexErr::LowSurrogate => {
                syntax("Unicode low surrogate must follow a high surrogate.".into())
            }
        }
    }

    /// Length of the (UTF-8) character at `i`, at least 1.
    fn char_len(&self, i: usize) -> usize {
        match self.s.get(i) {
            Some(&c) if c >= 0xF0 => 4,
            Some(&c) if c >= 0xE0 => 3,
            Some(&c) if c >= 0xC0 => 2,
            _ => 1,
        }
        .min(self.s.len().saturating_sub(i).max(1))
    }

    /// Advances to the next token.
    fn next(&mut self) -> PgResult<()> {
        let s = self.s;
        let mut p = self.pos;
        while p < s.len() && matches!(s[p], b' ' | b'\t' | b'\n' | b'\r') {
            p += 1;
        }
        self.tok_start = p;
        if p >= s.len() {
            self.tok = Tok::End;
            self.tok_end = p;
            self.pos = p;
            return Ok(());
        }
        let one = |me: &mut Self, t: Tok| {
            me.tok = t;
            me.tok_end = p + 1;
            me.pos = p + 1;
        };
        match s[p] {
            b'{' => one(self, Tok::ObjStart),
            b'}' => one(self, Tok::ObjEnd),
            b'[' => one(self, Tok::ArrStart),
            b']' => one(self, Tok::ArrEnd),
            b',' => one(self, Tok::Comma),
            b':' => one(self, Tok::Colon),
            b'"' => self.lex_string(p)?,
            b'-' => self.lex_number(p, p + 1)?,
            b'0'..=b'9' => self.lex_number(p, p)?,
            _ => {
                let mut q = p;
                while q < s.len() && alnum(s[q]) {
                    q += 1;
                }
                if q == p {
                    self.tok_end = p + self.char_len(p);
                    return Err(self.lex_error(LexErr::InvalidToken));
                }
                self.tok_end = q;
                self.pos = q;
                self.tok = match &s[p..q] {
                    b"true" => Tok::True,
                    b"false" => Tok::False,
                    b"null" => Tok::Null,
                    _ => return Err(self.lex_error(LexErr::InvalidToken)),
                };
            }
        }
        Ok(())
    }

    fn lex_number(&mut self, start: usize, mut p: usize) -> PgResult<()> {
        let s = self.s;
        let digit = |p: usize| p < s.len() && s[p].is_ascii_digit();
        let mut error = false;
        if p < s.len() && s[p] == b'0' {
            p += 1;
        } else if p < s.len() && (b'1'..=b'9').contains(&s[p]) {
            while digit(p) {
                p += 1;
            }
        } else {
            error = true;
        }
        if p < s.len() && s[p] == b'.' {
            p += 1;
            if !digit(p) {
                error = true;
            } else {
                while digit(p) {
                    p += 1;
                }
            }
        }
        if p < s.len() && (s[p] == b'e' || s[p] == b'E') {
            p += 1;
            if p < s.len() && (s[p] == b'+' || s[p] == b'-') {
                p += 1;
            }
            if !digit(p) {
                error = true;
            } else {
                while digit(p) {
                    p += 1;
                }
            }
        }
        while p < s.len() && alnum(s[p]) {
            error = true;
            p += 1;
        }
        self.tok_start = start;
        self.tok_end = p;
        self.pos = p;
        if error {
            return Err(self.lex_error(LexErr::InvalidToken));
        }
        self.tok = Tok::Num;
        Ok(())
    }

    fn lex_string(&mut self, start: usize) -> PgResult<()> {
        let s = self.s;
        let end = s.len();
        let mut p = start + 1;
        let mut hi: Option<u32> = None;
        let mut out = std::mem::take(&mut self.strval);
        out.clear();
        // Start of the current run of plain bytes (copied in one go).
        let mut run = p;
        loop {
            if p >= end {
                self.tok_end = p;
                return Err(self.lex_error(LexErr::InvalidToken));
            }
            let c = s[p];
            if c == b'"' {
                break;
            }
            if c < 0x20 {
                self.tok_end = p;
                return Err(self.lex_error(LexErr::EscapingRequired(c)));
            }
            if c != b'\\' {
                if self.unescape && hi.is_some() {
                    self.tok_end = p;
                    return Err(self.lex_error(LexErr::LowSurrogate));
                }
                p += 1;
                continue;
            }
            if self.unescape {
                out.push_str(&self.text[run..p]);
            }
            p += 1;
            if p >= end {
                self.tok_end = p;
                return Err(self.lex_error(LexErr::InvalidToken));
            }
            if s[p] == b'u' {
                let mut ch: u32 = 0;
                for _ in 0..4 {
                    p += 1;
                    if p >= end {
                        self.tok_end = p;
                        return Err(self.lex_error(LexErr::InvalidToken));
                    }
                    match (s[p] as char).to_digit(16) {
                        Some(d) if s[p].is_ascii() => ch = ch * 16 + d,
                        _ => {
                            self.tok_end = p + self.char_len(p);
                            return Err(self.lex_error(LexErr::UnicodeFormat));
                        }
                    }
                }
                if self.unescape {
                    if (0xD800..0xDC00).contains(&ch) {
                        if hi.is_some() {
                            self.tok_end = p + 1;
                            return Err(self.lex_error(LexErr::HighSurrogate));
                        }
                        hi = Some(ch);
                        p += 1;
                        run = p;
                        continue;
                    } else if (0xDC00..0xE000).contains(&ch) {
                        let Some(h) = hi.take() else {
                            self.tok_end = p + 1;
                            return Err(self.lex_error(LexErr::LowSurrogate));
                        };
                        ch = ((h & 0x3FF) << 10) + (ch & 0x3FF) + 0x10000;
                    }
                    if hi.is_some() {
                        self.tok_end = p + 1;
                        return Err(self.lex_error(LexErr::LowSurrogate));
                    }
                    if ch == 0 {
                        self.tok_end = p + 1;
                        return Err(self.lex_error(LexErr::CodePointZero));
                    }
                    out.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                }
            } else if self.unescape {
                if hi.is_some() {
                    self.tok_end = p;
                    return Err(self.lex_error(LexErr::LowSurrogate));
                }
                let c = match s[p] {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    _ => {
                        self.tok_start = p;
                        self.tok_end = p + self.char_len(p);
                        return Err(self.lex_error(LexErr::EscapingInvalid));
                    }
                };
                out.push(c);
            } else if !b"\"\\/bfnrt".contains(&s[p]) {
                self.tok_start = p;
                self.tok_end = p + self.char_len(p);
                return Err(self.lex_error(LexErr::EscapingInvalid));
            }
            p += 1;
            run = p;
        }
        if self.unescape {
            if hi.is_some() {
                self.tok_end = p;
                return Err(self.lex_error(LexErr::LowSurrogate));
            }
            out.push_str(&self.text[run..p]);
        }
        self.strval = out;
        self.tok = Tok::Str;
        self.tok_start = start;
        self.tok_end = p + 1;
        self.pos = p + 1;
        Ok(())
    }

    /// report_parse_error: the DETAIL for an unexpected token in `ctx`.
    fn parse_error(&self, ctx: &str) -> PgError {
        if self.tok == Tok::End {
            return syntax("The input string ended unexpectedly.".into());
        }
        let t = self.token_text();
        syntax(match ctx {
            "value" => format!("Expected JSON value, but found \"{t}\"."),
            "string" => format!("Expected string, but found \"{t}\"."),
            "object_start" => format!("Expected string or \"}}\", but found \"{t}\"."),
            "object_next" => format!("Expected \",\" or \"}}\", but found \"{t}\"."),
            "colon" => format!("Expected \":\", but found \"{t}\"."),
            "array_next" => format!("Expected \",\" or \"]\", but found \"{t}\"."),
            _ => format!("Expected end of input, but found \"{t}\"."),
        })
    }

    fn expect(&mut self, t: Tok, ctx: &str) -> PgResult<()> {
        if self.tok != t {
            return Err(self.parse_error(ctx));
        }
        self.next()
    }

    fn value(&mut self, depth: usize) -> PgResult<Node> {
        if depth > MAX_DEPTH {
            return Err(PgError::new(
                sqlstate::STATEMENT_TOO_COMPLEX,
                "stack depth limit exceeded",
            ));
        }
        let start = self.tok_start;
        let kind = match self.tok {
            Tok::ObjStart => return self.object(depth),
            Tok::ArrStart => return self.array(depth),
            Tok::Str => NodeKind::String(std::mem::take(&mut self.strval)),
            Tok::Num => NodeKind::Number,
            Tok::True => NodeKind::Bool(true),
            Tok::False => NodeKind::Bool(false),
            Tok::Null => NodeKind::Null,
            _ => return Err(self.parse_error("value")),
        };
        let end = self.tok_end;
        self.next()?;
        Ok(Node { start, end, kind })
    }

    fn object(&mut self, depth: usize) -> PgResult<Node> {
        let start = self.tok_start;
        self.next()?;
        let mut members = Vec::new();
        match self.tok {
            Tok::Str => loop {
                let key = std::mem::take(&mut self.strval);
                self.next()?;
                self.expect(Tok::Colon, "colon")?;
                let v = self.value(depth + 1)?;
                members.push((key, v));
                if self.tok != Tok::Comma {
                    break;
                }
                self.next()?;
                if self.tok != Tok::Str {
                    return Err(self.parse_error("string"));
                }
            },
            Tok::ObjEnd => {}
            _ => return Err(self.parse_error("object_start")),
        }
        if self.tok != Tok::ObjEnd {
            return Err(self.parse_error("object_next"));
        }
        let end = self.tok_end;
        self.next()?;
        Ok(Node {
            start,
            end,
            kind: NodeKind::Object(members),
        })
    }

    fn array(&mut self, depth: usize) -> PgResult<Node> {
        let start = self.tok_start;
        self.next()?;
        let mut items = Vec::new();
        if self.tok != Tok::ArrEnd {
            loop {
                items.push(self.value(depth + 1)?);
                if self.tok != Tok::Comma {
                    break;
                }
                self.next()?;
            }
        }
        if self.tok != Tok::ArrEnd {
            return Err(self.parse_error("array_next"));
        }
        let end = self.tok_end;
        self.next()?;
        Ok(Node {
            start,
            end,
            kind: NodeKind::Array(items),
        })
    }
}

/// Nesting limit (PostgreSQL's is the stack depth; this keeps recursion bounded).
const MAX_DEPTH: usize = 6400;

/// Parses JSON text. `unescape`: de-escape strings (and check `\u`
/// escapes as jsonb does); without it strings are only validated, as
/// `json_in` does.
pub fn parse(text: &str, unescape: bool) -> PgResult<Node> {
    let mut lx = Lexer {
        s: text.as_bytes(),
        text,
        pos: 0,
        tok: Tok::End,
        tok_start: 0,
        tok_end: 0,
        unescape,
        strval: String::new(),
    };
    lx.next()?;
    let v = lx.value(0)?;
    if lx.tok != Tok::End {
        return Err(lx.parse_error("end"));
    }
    Ok(v)
}

/// json_in: validates `text` (22P02 with PostgreSQL's DETAIL if invalid).
pub fn validate_json(text: &str) -> PgResult<()> {
    parse(text, false).map(drop)
}

/// jsonb_in.
pub fn parse_jsonb(text: &str) -> PgResult<Jsonb> {
    let n = parse(text, true)?;
    Jsonb::from_node(text, n)
}

/// PostgreSQL's storage order of object keys: shorter first, then bytewise.
pub fn cmp_keys(a: &str, b: &str) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Sorts object members into storage order, keeping the last of
/// duplicate keys (as jsonb input and jsonb_build_object do).
pub fn canonical_object(mut members: Vec<(String, Jsonb)>) -> Vec<(String, Jsonb)> {
    // Stable sort: duplicates stay in input order, so the last one wins.
    members.sort_by(|a, b| cmp_keys(&a.0, &b.0));
    let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(members.len());
    for (k, v) in members {
        match out.last_mut() {
            Some(last) if last.0 == k => last.1 = v,
            _ => out.push((k, v)),
        }
    }
    out
}

/// Significant digits of a canonical number (no leading or trailing
/// zeros), its sign (-1, 0, 1) and exponent: value = ±0.digits × 10^exp.
pub fn number_digits(s: &str) -> (i8, Vec<u8>, i64) {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let int = int.trim_start_matches('0');
    let mut digits: Vec<u8> = int.as_bytes().to_vec();
    digits.extend_from_slice(frac.as_bytes());
    let mut exp = int.len() as i64;
    let lead = digits.iter().take_while(|&&c| c == b'0').count();
    digits.drain(..lead);
    exp -= lead as i64;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return (0, digits, 0);
    }
    (if neg { -1 } else { 1 }, digits, exp)
}

/// Numeric comparison of two canonical number texts.
pub fn cmp_numbers(a: &str, b: &str) -> Ordering {
    let (sa, da, ea) = number_digits(a);
    let (sb, db, eb) = number_digits(b);
    if sa != sb {
        return sa.cmp(&sb);
    }
    if sa == 0 {
        return Ordering::Equal;
    }
    let mag = ea.cmp(&eb).then_with(|| da.cmp(&db));
    if sa < 0 {
        mag.reverse()
    } else {
        mag
    }
}

/// numeric_in then numeric_out of a JSON number token (`1e2` → `100`,
/// `-0.0` → `0.0`, `1.50e-1` → `0.150`).
pub fn canonical_number(tok: &str) -> PgResult<String> {
    let (neg, body) = match tok.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, tok),
    };
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => {
            let e: i64 = body[i + 1..].parse().unwrap_or(i64::MAX);
            (&body[..i], e)
        }
        None => (body, 0),
    };
    if exp.abs() > 1000 {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "value overflows numeric format",
        ));
    }
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut digits: String = String::with_capacity(int.len() + frac.len() + 8);
    digits.push_str(int);
    digits.push_str(frac);
    // value = digits × 10^(exp - frac.len()); dscale = max(0, frac.len() - exp)
    let shift = exp - frac.len() as i64;
    let scale = if shift >= 0 {
        digits.extend(std::iter::repeat_n('0', shift as usize));
        0usize
    } else {
        (-shift) as usize
    };
    let trimmed = digits.trim_start_matches('0');
    let mut d = trimmed.to_string();
    if d.len() <= scale {
        let pad = scale + 1 - d.len();
        d.insert_str(0, &"0".repeat(pad));
    }
    let zero = trimmed.bytes().all(|c| c == b'0');
    let mut out = String::with_capacity(d.len() + 2);
    if neg && !zero {
        out.push('-');
    }
    let ip = d.len() - scale;
    out.push_str(&d[..ip]);
    if scale > 0 {
        out.push('.');
        out.push_str(&d[ip..]);
    }
    Ok(out)
}

/// escape_json: a JSON string literal for `s`.
pub fn escape_json(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One token of the jsonb iterator (JsonbIteratorNext), for the printers.
enum Ev<'a> {
    BeginArray(bool),
    BeginObject,
    Key(&'a str),
    Value(&'a Jsonb),
    Elem(&'a Jsonb),
    EndArray,
    EndObject,
}

impl Jsonb {
    /// Builds the canonical tree from a parse of `text`.
    pub fn from_node(text: &str, n: Node) -> PgResult<Jsonb> {
        Ok(match n.kind {
            NodeKind::Null => Jsonb::Null,
            NodeKind::Bool(b) => Jsonb::Bool(b),
            NodeKind::Number => Jsonb::Number(canonical_number(&text[n.start..n.end])?),
            NodeKind::String(s) => Jsonb::String(s),
            NodeKind::Array(items) => Jsonb::Array(
                items
                    .into_iter()
                    .map(|i| Jsonb::from_node(text, i))
                    .collect::<PgResult<_>>()?,
            ),
            NodeKind::Object(m) => {
                let mut v = Vec::with_capacity(m.len());
                for (k, n) in m {
                    v.push((k, Jsonb::from_node(text, n)?));
                }
                Jsonb::Object(canonical_object(v))
            }
        })
    }

    /// True for null, strings, numbers and booleans.
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Jsonb::Array(_) | Jsonb::Object(_))
    }

    /// jsonb_typeof's name.
    pub fn type_name(&self) -> &'static str {
        match self {
            Jsonb::Null => "null",
            Jsonb::Bool(_) => "boolean",
            Jsonb::Number(_) => "number",
            Jsonb::String(_) => "string",
            Jsonb::Array(_) => "array",
            Jsonb::Object(_) => "object",
        }
    }

    /// An object member by key.
    pub fn get(&self, key: &str) -> Option<&Jsonb> {
        match self {
            Jsonb::Object(m) => m
                .binary_search_by(|(k, _)| cmp_keys(k, key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    fn events<'a>(&'a self, top: bool, out: &mut Vec<Ev<'a>>) {
        match self {
            Jsonb::Array(items) => {
                out.push(Ev::BeginArray(false));
                for i in items {
                    if i.is_scalar() {
                        out.push(Ev::Elem(i));
                    } else {
                        i.events(false, out);
                    }
                }
                out.push(Ev::EndArray);
            }
            Jsonb::Object(m) => {
                out.push(Ev::BeginObject);
                for (k, v) in m {
                    out.push(Ev::Key(k));
                    if v.is_scalar() {
                        out.push(Ev::Value(v));
                    } else {
                        v.events(false, out);
                    }
                }
                out.push(Ev::EndObject);
            }
            scalar => {
                debug_assert!(top);
                out.push(Ev::BeginArray(true));
                out.push(Ev::Elem(scalar));
                out.push(Ev::EndArray);
            }
        }
    }

    fn put_scalar(&self, out: &mut String) {
        match self {
            Jsonb::Null => out.push_str("null"),
            Jsonb::Bool(true) => out.push_str("true"),
            Jsonb::Bool(false) => out.push_str("false"),
            Jsonb::Number(n) => out.push_str(n),
            Jsonb::String(s) => escape_json(out, s),
            // Containers never reach here (the iterator opens them).
            Jsonb::Array(_) | Jsonb::Object(_) => {}
        }
    }

    /// JsonbToCStringWorker, ported token by token.
    fn to_cstring(&self, out: &mut String, indent: bool) {
        fn add_indent(out: &mut String, indent: bool, level: usize) {
            if indent {
                out.push('\n');
                for _ in 0..level * 4 {
                    out.push(' ');
                }
            }
        }
        let mut evs = Vec::new();
        self.events(true, &mut evs);
        let sep = if indent { "," } else { ", " };
        let mut first = true;
        let mut level = 0usize;
        let mut use_indent = false;
        let mut raw_scalar = false;
        let mut last_was_key = false;
        let mut i = 0;
        let mut redo = false;
        while i < evs.len() {
            let mut cur = i;
            let was_redo = redo;
            redo = false;
            if was_redo {
                cur = i - 1;
            } else {
                i += 1;
            }
            match &evs[cur] {
                Ev::BeginArray(raw) => {
                    if !first {
                        out.push_str(sep);
                    }
                    if !raw {
                        add_indent(out, use_indent && !last_was_key, level);
                        out.push('[');
                    } else {
                        raw_scalar = true;
                    }
                    first = true;
                    level += 1;
                }
                Ev::BeginObject => {
                    if !first {
                        out.push_str(sep);
                    }
                    add_indent(out, use_indent && !last_was_key, level);
                    out.push('{');
                    first = true;
                    level += 1;
                }
                Ev::Key(k) => {
                    if !first {
                        out.push_str(sep);
                    }
                    first = true;
                    add_indent(out, use_indent, level);
                    escape_json(out, k);
                    out.push_str(": ");
                    match evs.get(i) {
                        Some(Ev::Value(v)) => {
                            i += 1;
                            first = false;
                            v.put_scalar(out);
                        }
                        _ => {
                            // A container: print it before advancing.
                            i += 1;
                            redo = true;
                        }
                    }
                }
                Ev::Value(v) | Ev::Elem(v) => {
                    if !first {
                        out.push_str(sep);
                    }
                    first = false;
                    if !raw_scalar {
                        add_indent(out, use_indent, level);
                    }
                    v.put_scalar(out);
                }
                Ev::EndArray => {
                    level = level.saturating_sub(1);
                    if !raw_scalar {
                        add_indent(out, use_indent, level);
                        out.push(']');
                    }
                    first = false;
                }
                Ev::EndObject => {
                    level = level.saturating_sub(1);
                    add_indent(out, use_indent, level);
                    out.push('}');
                    first = false;
                }
            }
            use_indent = indent;
            last_was_key = redo;
        }
    }

    /// jsonb_out: `{"a": 1, "b": [1, 2]}`.
    pub fn write(&self, out: &mut String) {
        self.to_cstring(out, false)
    }

    /// The text form as a new string.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// jsonb_pretty.
    pub fn pretty(&self) -> String {
        let mut s = String::new();
        self.to_cstring(&mut s, true);
        s
    }

    /// The rank of a value's type in jsonb ordering (jbvNull < jbvString <
    /// jbvNumeric < jbvBool < jbvArray < jbvObject).
    pub fn type_rank(&self) -> u8 {
        match self {
            Jsonb::Null => 0,
            Jsonb::String(_) => 1,
            Jsonb::Number(_) => 2,
            Jsonb::Bool(_) => 3,
            Jsonb::Array(_) => 4,
            Jsonb::Object(_) => 5,
        }
    }
}

fn cmp_inner(a: &Jsonb, b: &Jsonb) -> Ordering {
    match (a, b) {
        (Jsonb::Null, Jsonb::Null) => Ordering::Equal,
        (Jsonb::String(x), Jsonb::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Jsonb::Number(x), Jsonb::Number(y)) => cmp_numbers(x, y),
        (Jsonb::Bool(x), Jsonb::Bool(y)) => x.cmp(y),
        (Jsonb::Array(x), Jsonb::Array(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|(p, q)| cmp_inner(p, q))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        (Jsonb::Object(x), Jsonb::Object(y)) => x.len().cmp(&y.len()).then_with(|| {
            x.iter()
                .zip(y)
                .map(|((ka, va), (kb, vb))| {
                    ka.as_bytes()
                        .cmp(kb.as_bytes())
                        .then_with(|| cmp_inner(va, vb))
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        }),
        _ => a.type_rank().cmp(&b.type_rank()),
    }
}

/// The top-level class of a value in jsonb ordering: the empty array, a
/// scalar (a "raw scalar" pseudo-array of one element), a non-empty
/// array, an object.
pub fn top_class(v: &Jsonb) -> u8 {
    match v {
        Jsonb::Array(a) if a.is_empty() => 0,
        Jsonb::Array(_) => 2,
        Jsonb::Object(_) => 3,
        _ => 1,
    }
}

/// compareJsonbContainers: jsonb's btree order.
pub fn cmp_jsonb(a: &Jsonb, b: &Jsonb) -> Ordering {
    let (ca, cb) = (top_class(a), top_class(b));
    if ca != cb {
        return ca.cmp(&cb);
    }
    cmp_inner(a, b)
}

/// jsonb @> (JsonbDeepContains at the top: a scalar only contains an
/// equal scalar, an array also contains a scalar it has as an element).
pub fn contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Array(_), s) if s.is_scalar() => deep_contains(a, &Jsonb::Array(vec![s.clone()])),
        (x, y) if x.is_scalar() && y.is_scalar() => cmp_inner(x, y).is_eq(),
        _ => deep_contains(a, b),
    }
}

fn deep_contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            if y.len() > x.len() {
                return false;
            }
            y.iter().all(|(k, vb)| match a.get(k) {
                None => false,
                Some(va) => {
                    if va.is_scalar() || vb.is_scalar() {
                        va.is_scalar() && vb.is_scalar() && cmp_inner(va, vb).is_eq()
                    } else if va.type_rank() != vb.type_rank() {
                        false
                    } else {
                        deep_contains(va, vb)
                    }
                }
            })
        }
        (Jsonb::Array(x), Jsonb::Array(y)) => y.iter().all(|vb| {
            if vb.is_scalar() {
                x.iter()
                    .any(|va| va.is_scalar() && cmp_inner(va, vb).is_eq())
            } else {
                x.iter()
                    .any(|va| va.type_rank() == vb.type_rank() && deep_contains(va, vb))
            }
        }),
        _ => false,
    }
}

/// jsonb `?`: a top-level key, a string array element, or an equal string scalar.
pub fn exists(a: &Jsonb, key: &str) -> bool {
    match a {
        Jsonb::Object(_) => a.get(key).is_some(),
        Jsonb::Array(items) => items
            .iter()
            .any(|i| matches!(i, Jsonb::String(s) if s == key)),
        Jsonb::String(s) => s == key,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jb(s: &str) -> Jsonb {
        parse_jsonb(s).unwrap()
    }

    #[test]
    fn canonical_form() {
        assert_eq!(
            jb(r#"{"bb": 1, "a": [1, 2.50, 1e2], "c": {"x": null}, "a": true}"#).to_text(),
            r#"{"a": true, "c": {"x": null}, "bb": 1}"#
        );
        assert_eq!(
            jb("[1e2, -0.0, 1.50e-1, 0e5, -12E-1]").to_text(),
            "[100, 0.0, 0.150, 0, -1.2]"
        );
        assert_eq!(jb(r#""a\u00e9\n\ud83d\ude00""#).to_text(), "\"aé\\n😀\"");
        assert_eq!(jb(" 7 ").to_text(), "7");
        assert_eq!(jb("{}").to_text(), "{}");
        assert_eq!(jb("[[],{}]").to_text(), "[[], {}]");
    }

    #[test]
    fn pretty() {
        assert_eq!(
            jb(r#"{"a":{},"b":[1,{"x":[]}]}"#).pretty(),
            "{\n    \"a\": {\n    },\n    \"b\": [\n        1,\n        {\n            \"x\": [\n            ]\n        }\n    ]\n}"
        );
        assert_eq!(jb("1").pretty(), "1");
    }

    #[test]
    fn errors() {
        let detail = |s: &str| {
            parse_jsonb(s)
                .unwrap_err()
                .into_fields()
                .detail
                .unwrap_or_default()
        };
        assert_eq!(detail("{\"a\":x}"), "Token \"x\" is invalid.");
        assert_eq!(detail("{\"a\":"), "The input string ended unexpectedly.");
        assert_eq!(detail("[1,]"), "Expected JSON value, but found \"]\".");
        assert_eq!(detail("{\"a\" 1}"), "Expected \":\", but found \"1\".");
        assert_eq!(detail("1 2"), "Expected end of input, but found \"2\".");
        assert_eq!(detail("01"), "Token \"01\" is invalid.");
        assert_eq!(detail("\"\\q\""), "Escape sequence \"\\q\" is invalid.");
        assert!(validate_json("\"\\u0000\"").is_ok());
        assert_eq!(parse_jsonb("\"\\u0000\"").unwrap_err().code, "22P05");
    }

    #[test]
    fn ordering() {
        let order = [
            "[]",
            "null",
            "\"\"",
            "\"a\"",
            "\"b\"",
            "-1",
            "0",
            "1.0",
            "2",
            "false",
            "true",
            "[null]",
            "[1]",
            "[[]]",
            "[1, 2]",
            "{}",
            "{\"a\": 1}",
            "{\"b\": 0}",
            "{\"a\": 1, \"b\": 1}",
        ];
        for (i, a) in order.iter().enumerate() {
            for (j, b) in order.iter().enumerate() {
                assert_eq!(cmp_jsonb(&jb(a), &jb(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert_eq!(cmp_jsonb(&jb("1.0"), &jb("1")), Ordering::Equal);
        assert_eq!(cmp_numbers("-10", "-9"), Ordering::Less);
        assert_eq!(cmp_numbers("0.01", "0.1"), Ordering::Less);
        assert_eq!(cmp_numbers("100", "99.5"), Ordering::Greater);
    }

    #[test]
    fn containment() {
        assert!(contains(
            &jb(r#"{"a": [1, 2], "b": 3}"#),
            &jb(r#"{"a": [2]}"#)
        ));
        assert!(!contains(&jb(r#"{"a": [1, 2]}"#), &jb(r#"{"a": 2}"#)));
        assert!(contains(&jb("[1, 2]"), &jb("1")));
        assert!(!contains(&jb("1"), &jb("[1]")));
        assert!(exists(&jb(r#"["a", 1]"#), "a"));
    }
}
