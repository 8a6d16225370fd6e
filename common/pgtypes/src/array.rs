//! One-dimensional arrays: the value, its text form (`{1,2,NULL}`) and its
//! binary form (array_send / array_recv).
//!
//! An [`ArrayValue`] holds its element kind, its lower bound (1 unless the
//! text input said otherwise) and the elements, each a scalar
//! [`Value`] or NULL. `Value::Array` keeps it behind an `Arc`, so a clone of
//! an array value is a reference-count increment.
//!
//! Text form (PostgreSQL's array_out rules): elements separated by `,`;
//! NULL prints as `NULL`; an element is double-quoted when it is empty,
//! spells `NULL` in any case, or contains `{ } " , \` or white space, and
//! inside quotes `"` and `\` are backslash-escaped. A lower bound other
//! than 1 prefixes `[lb:ub]=`. Input accepts the same, plus unquoted
//! backslash escapes and white space around elements.
//!
//! Limits: one dimension. Multi-dimensional input is 0A000; an empty array
//! has no dimensions (`{}`), as in PostgreSQL.
//!
//! Ordering ([`cmp_arrays`]) is PostgreSQL's btree order: element by
//! element (NULL greater than any value), then the shorter array first.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};
use crate::sqltype::{ArrayElem, SqlType};
use crate::value::{cmp_sql, Value};

/// A one-dimensional array value.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    /// Element kind.
    pub elem: ArrayElem,
    /// Subscript of the first element (1 by default).
    pub lower: i32,
    /// The elements (NULLs included).
    pub items: Vec<Value>,
}

impl ArrayValue {
    /// An array with lower bound 1.
    pub fn new(elem: ArrayElem, items: Vec<Value>) -> ArrayValue {
        ArrayValue {
            elem,
            lower: 1,
            items,
        }
    }

    /// The element at SQL subscript `i` (NULL outside the bounds).
    pub fn get(&self, i: i64) -> Value {
        let idx = i - self.lower as i64;
        if idx < 0 {
            return Value::Null;
        }
        self.items.get(idx as usize).cloned().unwrap_or(Value::Null)
    }

    /// The array's type.
    pub fn sql_type(&self) -> SqlType {
        SqlType::Array(self.elem)
    }

    /// Appends the text form.
    pub fn write_text(&self, out: &mut BytesMut) {
        if self.elem.is_vector() {
            for (i, v) in self.items.iter().enumerate() {
                if i > 0 {
                    out.put_u8(b' ');
                }
                v.write_text(out);
            }
            return;
        }
        if self.lower != 1 && !self.items.is_empty() {
            let upper = self.lower as i64 + self.items.len() as i64 - 1;
            out.put_slice(format!("[{}:{}]=", self.lower, upper).as_bytes());
        }
        out.put_u8(b'{');
        for (i, v) in self.items.iter().enumerate() {
            if i > 0 {
                out.put_u8(b',');
            }
            if v.is_null() {
                out.put_slice(b"NULL");
                continue;
            }
            let s = v.to_text_string();
            if needs_quotes(&s) {
                out.put_u8(b'"');
                for c in s.bytes() {
                    if c == b'"' || c == b'\\' {
                        out.put_u8(b'\\');
                    }
                    out.put_u8(c);
                }
                out.put_u8(b'"');
            } else {
                out.put_slice(s.as_bytes());
            }
        }
        out.put_u8(b'}');
    }

    /// Appends array_send's form: ndim, has-nulls flag, element OID, (size,
    /// lower bound) per dimension, then each element as length + bytes (-1
    /// for NULL).
    pub fn write_binary(&self, out: &mut BytesMut) {
        let ndim = if self.items.is_empty() { 0 } else { 1 };
        out.put_i32(ndim);
        out.put_i32(self.items.iter().any(Value::is_null) as i32);
        out.put_u32(self.elem.sql_type().oid());
        if ndim == 1 {
            out.put_i32(self.items.len() as i32);
            out.put_i32(self.lower);
        }
        for v in &self.items {
            if v.is_null() {
                out.put_i32(-1);
                continue;
            }
            let len_at = out.len();
            out.put_i32(0);
            v.write_binary(out);
            let len = (out.len() - len_at - 4) as i32;
            out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
}

fn is_array_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.eq_ignore_ascii_case("null")
        || s.bytes()
            .any(|c| matches!(c, b'{' | b'}' | b'"' | b',' | b'\\') || is_array_space(c))
}

fn malformed(s: &str, detail: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{s}\""),
    )
    .with_detail(detail.to_string())
}

/// Parses array text input for arrays of `elem`.
pub fn parse_array(elem: ArrayElem, s: &str) -> PgResult<ArrayValue> {
    let b = s.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && is_array_space(b[*i]) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    let mut lower = 1i32;
    let mut declared_len: Option<i64> = None;
    if b.get(i) == Some(&b'[') {
        let close = s[i..]
            .find(']')
            .map(|p| p + i)
            .ok_or_else(|| malformed(s, "Missing \"]\" after array dimensions."))?;
        let dims = &s[i + 1..close];
        let (lo, hi) = match dims.split_once(':') {
            Some((l, h)) => (l.trim(), h.trim()),
            None => ("1", dims.trim()),
        };
        let lo: i32 = lo.parse().map_err(|_| {
            malformed(
                s,
                "\"[\" must introduce explicitly-specified array dimensions.",
            )
        })?;
        let hi: i32 = hi.parse().map_err(|_| {
            malformed(
                s,
                "\"[\" must introduce explicitly-specified array dimensions.",
            )
        })?;
        if hi < lo {
            return Err(PgError::new(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                "upper bound cannot be less than lower bound",
            ));
        }
        lower = lo;
        declared_len = Some(hi as i64 - lo as i64 + 1);
        i = close + 1;
        if b.get(i) == Some(&b'[') {
            return Err(PgError::unsupported(
                "multidimensional arrays are not supported",
            ));
        }
        skip_ws(&mut i);
        if b.get(i) != Some(&b'=') {
            return Err(malformed(s, "Missing \"=\" after array dimensions."));
        }
        i += 1;
        skip_ws(&mut i);
    }
    if b.get(i) != Some(&b'{') {
        return Err(malformed(
            s,
            "Array value must start with \"{\" or dimension information.",
        ));
    }
    i += 1;
    let elem_ty = elem.sql_type();
    let mut items = Vec::new();
    skip_ws(&mut i);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            skip_ws(&mut i);
            match b.get(i) {
                Some(b'{') => {
                    return Err(PgError::unsupported(
                        "multidimensional arrays are not supported",
                    ))
                }
                None => return Err(malformed(s, "Unexpected end of input.")),
                _ => {}
            }
            // One element: quoted or not, with backslash escapes.
            let mut text: Vec<u8> = Vec::new();
            let mut quoted_any = false;
            let mut in_quotes = false;
            // Trailing unquoted white space is dropped; remember where real content ends.
            let mut content_end = 0;
            loop {
                let Some(&c) = b.get(i) else {
                    return Err(malformed(s, "Unexpected end of input."));
                };
                if in_quotes {
                    match c {
                        b'"' => {
                            in_quotes = false;
                            i += 1;
                        }
                        b'\\' => {
                            let n = *b
                                .get(i + 1)
                                .ok_or_else(|| malformed(s, "Unexpected end of input."))?;
                            text.push(n);
                            i += 2;
                        }
                        _ => {
                            text.push(c);
                            i += 1;
                        }
                    }
                    content_end = text.len();
                    continue;
                }
                match c {
                    b',' | b'}' => break,
                    b'"' => {
                        if !text.is_empty() && content_end == text.len() && !quoted_any {
                            return Err(malformed(s, "Unexpected array element."));
                        }
                        quoted_any = true;
                        in_quotes = true;
                        i += 1;
                    }
                    b'\\' => {
                        let n = *b
                            .get(i + 1)
                            .ok_or_else(|| malformed(s, "Unexpected end of input."))?;
                        text.push(n);
                        i += 2;
                        content_end = text.len();
                    }
                    b'{' => {
                        return Err(malformed(s, "Unexpected \"{\" character."));
                    }
                    c if is_array_space(c) => {
                        if !text.is_empty() || quoted_any {
                            text.push(c);
                        }
                        i += 1;
                    }
                    c => {
                        if quoted_any && content_end == text.len() {
                            return Err(malformed(s, "Unexpected array element."));
                        }
                        text.push(c);
                        i += 1;
                        content_end = text.len();
                    }
                }
            }
            text.truncate(content_end);
            let t = String::from_utf8(text).map_err(|_| malformed(s, "Invalid UTF-8."))?;
            if !quoted_any && t.is_empty() {
                return Err(malformed(s, "Unexpected \",\" character."));
            }
            if !quoted_any && t.eq_ignore_ascii_case("null") {
                items.push(Value::Null);
            } else {
                items.push(Value::from_text(elem_ty, &t)?);
            }
            let c = b[i];
            i += 1;
            if c == b'}' {
                break;
            }
        }
    }
    skip_ws(&mut i);
    if i < b.len() {
        return Err(malformed(s, "Junk after closing right brace."));
    }
    if let Some(n) = declared_len {
        if n != items.len() as i64 {
            return Err(malformed(
                s,
                "Specified array dimensions do not match array contents.",
            ));
        }
    }
    Ok(ArrayValue {
        elem,
        lower: if items.is_empty() { 1 } else { lower },
        items,
    })
}

/// Parses array_recv's binary form for arrays of `elem` (22P03 on a bad
/// layout or an element OID that is not `elem`'s).
pub fn parse_array_binary(elem: ArrayElem, b: &[u8]) -> PgResult<ArrayValue> {
    let bad = |what: &str| {
        PgError::new(
            sqlstate::INVALID_BINARY_REPRESENTATION,
            format!("invalid array binary data: {what}"),
        )
    };
    let mut pos = 0usize;
    let i32_at = |pos: &mut usize| -> PgResult<i32> {
        let v = b.get(*pos..*pos + 4).ok_or_else(|| bad("truncated"))?;
        *pos += 4;
        Ok(i32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    };
    let ndim = i32_at(&mut pos)?;
    let _flags = i32_at(&mut pos)?;
    let oid = i32_at(&mut pos)? as u32;
    let elem_ty = elem.sql_type();
    let expected = elem_ty.oid();
    // float4 elements are accepted for float8[] (read as float8).
    if oid != expected && !(elem == ArrayElem::Float8 && oid == 700) {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "binary data has array element type {} instead of expected {}",
                oid, expected
            ),
        ));
    }
    if ndim == 0 {
        return Ok(ArrayValue::new(elem, Vec::new()));
    }
    if ndim != 1 {
        return Err(PgError::unsupported(
            "multidimensional arrays are not supported",
        ));
    }
    let n = i32_at(&mut pos)?;
    let lower = i32_at(&mut pos)?;
    if n < 0 || n as usize > b.len() {
        return Err(bad("bad dimension"));
    }
    let mut items = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let len = i32_at(&mut pos)?;
        if len == -1 {
            items.push(Value::Null);
            continue;
        }
        if len < 0 {
            return Err(bad("bad element length"));
        }
        let data = b
            .get(pos..pos + len as usize)
            .ok_or_else(|| bad("truncated element"))?;
        pos += len as usize;
        items.push(Value::from_binary(elem_ty, data)?);
    }
    if pos != b.len() {
        return Err(bad("trailing bytes"));
    }
    Ok(ArrayValue { elem, lower, items })
}

/// PostgreSQL's btree order of arrays (see the module doc).
pub fn cmp_arrays(a: &ArrayValue, b: &ArrayValue) -> Ordering {
    for (x, y) in a.items.iter().zip(&b.items) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => cmp_sql(x, y).unwrap_or(Ordering::Equal),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.items
        .len()
        .cmp(&b.items.len())
        .then(a.lower.cmp(&b.lower))
}

/// Wraps an [`ArrayValue`] as a [`Value`].
pub fn array_value(elem: ArrayElem, items: Vec<Value>) -> Value {
    Value::Array(Arc::new(ArrayValue::new(elem, items)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(elem: ArrayElem, s: &str) -> String {
        let a = parse_array(elem, s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let mut b = BytesMut::new();
        a.write_text(&mut b);
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn text_forms_match_postgres() {
        // From PostgreSQL 15: select '<input>'::text[] / ::int4[].
        assert_eq!(rt(ArrayElem::Int4, "{1,2,NULL}"), "{1,2,NULL}");
        assert_eq!(rt(ArrayElem::Int4, " { 1 , 2 } "), "{1,2}");
        assert_eq!(rt(ArrayElem::Int4, "{}"), "{}");
        assert_eq!(
            rt(
                ArrayElem::Text,
                r#"{"",NULL,"NULL",null,"a,b","a\"b","a\\b"," x ",y z}"#
            ),
            r#"{"",NULL,"NULL",NULL,"a,b","a\"b","a\\b"," x ","y z"}"#
        );
        assert_eq!(rt(ArrayElem::Text, r#"{a\,b,"{}"}"#), r#"{"a,b","{}"}"#);
        assert_eq!(rt(ArrayElem::Int4, "[0:1]={5,6}"), "[0:1]={5,6}");
        let e = parse_array(ArrayElem::Int4, "{1,2").unwrap_err();
        assert_eq!(e.message, "malformed array literal: \"{1,2\"");
        assert_eq!(e.code, "22P02");
        let e = parse_array(ArrayElem::Int4, "1,2").unwrap_err();
        assert_eq!(e.message, "malformed array literal: \"1,2\"");
        let e = parse_array(ArrayElem::Int4, "{a}").unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type integer: \"a\"");
    }

    #[test]
    fn binary_round_trip() {
        let a = parse_array(ArrayElem::Text, "{a,NULL,\"\"}").unwrap();
        let mut b = BytesMut::new();
        a.write_binary(&mut b);
        assert_eq!(parse_array_binary(ArrayElem::Text, &b).unwrap(), a);
        let e = ArrayValue::new(ArrayElem::Int4, Vec::new());
        let mut b = BytesMut::new();
        e.write_binary(&mut b);
        assert_eq!(b.to_vec(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 23]);
        assert!(parse_array_binary(ArrayElem::Int4, &[0, 0, 0, 1]).is_err());
    }
}
