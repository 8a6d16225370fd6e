//! Arrays of one or more dimensions: the value, its text form
//! (`{{1,2},{3,NULL}}`) and its binary form (array_send / array_recv).
//!
//! An [`ArrayValue`] holds its element kind, its dimensions and the
//! elements in row-major order (the last subscript varies fastest), each a
//! scalar [`Value`] or NULL. The first dimension is implicit — its lower
//! bound is `lower`, its length what the elements leave after the `inner`
//! dimensions — so code that only knows one dimension reads a
//! one-dimensional array (`inner` empty) exactly as before.
//! `Value::Array` keeps it behind an `Arc`, so a clone of an array value is
//! a reference-count increment.
//!
//! Invariants: an array with no elements has no dimensions (`{}`, `inner`
//! empty, `lower` 1), as in PostgreSQL; every dimension of a non-empty array
//! has at least one element; at most [`MAXDIM`] dimensions.
//!
//! Text form (PostgreSQL's array_out rules): elements separated by `,`,
//! each dimension in its own braces; NULL prints as `NULL`; an element is
//! double-quoted when it is empty, spells `NULL` in any case, or contains
//! `{ } " , \` or white space, and inside quotes `"` and `\` are
//! backslash-escaped. A lower bound other than 1 in any dimension prefixes
//! `[lb:ub]` per dimension and `=`. Input accepts the same, plus unquoted
//! backslash escapes and white space around elements; sub-arrays must have
//! matching dimensions.
//!
//! Ordering ([`cmp_arrays`]) is PostgreSQL's btree order: element by
//! element (NULL greater than any value), then the array with fewer
//! elements first, then fewer dimensions, then each dimension's length,
//! then each lower bound.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};
use crate::sqltype::{ArrayElem, SqlType};
use crate::value::{cmp_sql, Value};

/// PostgreSQL's limit on an array's dimensions.
pub const MAXDIM: usize = 6;

/// One dimension of an array: its length and the subscript of its first
/// element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim {
    /// Number of elements along this dimension.
    pub len: i32,
    /// Subscript of the first element.
    pub lower: i32,
}

/// An array value of any number of dimensions (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    /// Element kind.
    pub elem: ArrayElem,
    /// Subscript of the first element along the first dimension (1 by default).
    pub lower: i32,
    /// The elements (NULLs included), row-major.
    pub items: Vec<Value>,
    /// The dimensions after the first; empty for a one-dimensional or
    /// empty array.
    pub inner: Vec<Dim>,
}

fn too_many_dims(n: usize) -> PgError {
    PgError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAXDIM})"),
    )
}

impl ArrayValue {
    /// A one-dimensional array with lower bound 1.
    pub fn new(elem: ArrayElem, items: Vec<Value>) -> ArrayValue {
        ArrayValue {
            elem,
            lower: 1,
            items,
            inner: Vec::new(),
        }
    }

    /// An array of the given dimensions; `items` must number the product
    /// of their lengths (an empty `items` gives the empty array).
    pub fn with_dims(elem: ArrayElem, dims: &[Dim], items: Vec<Value>) -> ArrayValue {
        if items.is_empty() || dims.is_empty() {
            return ArrayValue::new(elem, items);
        }
        debug_assert_eq!(
            dims.iter().map(|d| d.len as usize).product::<usize>(),
            items.len()
        );
        ArrayValue {
            elem,
            lower: dims[0].lower,
            items,
            inner: dims[1..].to_vec(),
        }
    }

    /// This array's shape around other elements (a cast, array_replace):
    /// `items` must number as many as this array's.
    pub fn same_shape(&self, elem: ArrayElem, items: Vec<Value>) -> ArrayValue {
        debug_assert_eq!(items.len(), self.items.len());
        ArrayValue {
            elem,
            lower: self.lower,
            items,
            inner: self.inner.clone(),
        }
    }

    /// Number of dimensions (0 for the empty array).
    pub fn ndims(&self) -> usize {
        if self.items.is_empty() {
            0
        } else {
            1 + self.inner.len()
        }
    }

    /// Every dimension, the first included (none for the empty array).
    pub fn dims(&self) -> Vec<Dim> {
        if self.items.is_empty() {
            return Vec::new();
        }
        let rest: usize = self.inner.iter().map(|d| d.len as usize).product();
        let mut dims = Vec::with_capacity(1 + self.inner.len());
        dims.push(Dim {
            len: (self.items.len() / rest.max(1)) as i32,
            lower: self.lower,
        });
        dims.extend_from_slice(&self.inner);
        dims
    }

    /// The element at SQL subscript `i` of a one-dimensional array (NULL
    /// outside the bounds, and for an array of more dimensions).
    pub fn get(&self, i: i64) -> Value {
        self.get_at(&[i])
    }

    /// The element at `subs`, one subscript per dimension: NULL outside the
    /// bounds or when the count differs from the array's dimensions.
    pub fn get_at(&self, subs: &[i64]) -> Value {
        let dims = self.dims();
        if subs.len() != dims.len() {
            return Value::Null;
        }
        let mut at = 0usize;
        for (s, d) in subs.iter().zip(&dims) {
            let k = s - d.lower as i64;
            if k < 0 || k >= d.len as i64 {
                return Value::Null;
            }
            at = at * d.len as usize + k as usize;
        }
        self.items.get(at).cloned().unwrap_or(Value::Null)
    }

    /// The slice `[lo:hi]` per listed dimension (bounds clamped; dimensions
    /// not listed are taken whole), with lower bounds 1 — PostgreSQL's
    /// array slice. More bounds than dimensions, or any empty range, give
    /// the empty array.
    pub fn slice(&self, bounds: &[(i64, i64)]) -> ArrayValue {
        let dims = self.dims();
        if bounds.len() > dims.len() {
            return ArrayValue::new(self.elem, Vec::new());
        }
        // Per dimension, the kept range as offsets from its lower bound.
        let mut ranges = Vec::with_capacity(dims.len());
        for (k, d) in dims.iter().enumerate() {
            let (lo, hi) = match bounds.get(k) {
                Some(&(lo, hi)) => (
                    lo.max(d.lower as i64) - d.lower as i64,
                    hi.min(d.lower as i64 + d.len as i64 - 1) - d.lower as i64,
                ),
                None => (0, d.len as i64 - 1),
            };
            if lo > hi {
                return ArrayValue::new(self.elem, Vec::new());
            }
            ranges.push((lo as usize, hi as usize));
        }
        let mut items = Vec::new();
        let mut strides = vec![1usize; dims.len()];
        for k in (0..dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * dims[k + 1].len as usize;
        }
        let mut idx: Vec<usize> = ranges.iter().map(|r| r.0).collect();
        'outer: loop {
            let at: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
            items.push(self.items[at].clone());
            for k in (0..idx.len()).rev() {
                if idx[k] < ranges[k].1 {
                    idx[k] += 1;
                    continue 'outer;
                }
                idx[k] = ranges[k].0;
            }
            break;
        }
        let new_dims: Vec<Dim> = ranges
            .iter()
            .map(|r| Dim {
                len: (r.1 - r.0 + 1) as i32,
                lower: 1,
            })
            .collect();
        ArrayValue::with_dims(self.elem, &new_dims, items)
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
        let dims = self.dims();
        if dims.iter().any(|d| d.lower != 1) {
            for d in &dims {
                let upper = d.lower as i64 + d.len as i64 - 1;
                out.put_slice(format!("[{}:{}]", d.lower, upper).as_bytes());
            }
            out.put_u8(b'=');
        }
        if dims.is_empty() {
            out.put_slice(b"{}");
            return;
        }
        // Element k opens a brace for every dimension whose index restarts
        // at k and closes one for every dimension that ends after it.
        let mut spans = vec![1usize; dims.len()];
        for j in (0..dims.len()).rev() {
            spans[j] = dims[j].len as usize * spans.get(j + 1).copied().unwrap_or(1);
        }
        for (k, v) in self.items.iter().enumerate() {
            let opens = spans.iter().filter(|&&s| k % s == 0).count();
            if k > 0 {
                out.put_u8(b',');
            }
            for _ in 0..opens {
                out.put_u8(b'{');
            }
            write_element_text(v, out);
            let closes = spans.iter().filter(|&&s| (k + 1) % s == 0).count();
            for _ in 0..closes {
                out.put_u8(b'}');
            }
        }
    }

    /// Appends array_send's form: ndim, has-nulls flag, element OID, (size,
    /// lower bound) per dimension, then each element as length + bytes (-1
    /// for NULL).
    pub fn write_binary(&self, out: &mut BytesMut) {
        let dims = self.dims();
        out.put_i32(dims.len() as i32);
        out.put_i32(self.items.iter().any(Value::is_null) as i32);
        out.put_u32(self.elem.sql_type().oid());
        for d in &dims {
            out.put_i32(d.len);
            out.put_i32(d.lower);
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

/// One element of the text form: `NULL`, or its text, quoted when needed.
fn write_element_text(v: &Value, out: &mut BytesMut) {
    if v.is_null() {
        out.put_slice(b"NULL");
        return;
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
    let mut p = TextParser {
        s,
        b: s.as_bytes(),
        i: 0,
        elem_ty: elem.sql_type(),
        items: Vec::new(),
        lens: [None; MAXDIM],
        leaf_depth: None,
    };
    p.skip_ws();
    let declared = p.declared_dims()?;
    if p.b.get(p.i) != Some(&b'{') {
        return Err(malformed(
            s,
            "Array value must start with \"{\" or dimension information.",
        ));
    }
    p.level(0)?;
    p.skip_ws();
    if p.i < p.b.len() {
        return Err(malformed(s, "Junk after closing right brace."));
    }
    let items = p.items;
    if items.is_empty() {
        if declared.is_empty() {
            return Ok(ArrayValue::new(elem, items));
        }
        return Err(malformed(
            s,
            "Specified array dimensions do not match array contents.",
        ));
    }
    let lens: Vec<i32> = p.lens.iter().map_while(|n| *n).collect();
    let dims: Vec<Dim> = if declared.is_empty() {
        lens.iter().map(|&len| Dim { len, lower: 1 }).collect()
    } else {
        let matches =
            declared.len() == lens.len() && declared.iter().zip(&lens).all(|(d, &n)| d.len == n);
        if !matches {
            return Err(malformed(
                s,
                "Specified array dimensions do not match array contents.",
            ));
        }
        declared
    };
    Ok(ArrayValue::with_dims(elem, &dims, items))
}

/// The text form's reader: one pass, recursing per brace level.
struct TextParser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    elem_ty: SqlType,
    items: Vec<Value>,
    /// Per depth, the number of entries its first brace level held.
    lens: [Option<i32>; MAXDIM],
    /// The depth whose levels hold elements (all must agree).
    leaf_depth: Option<usize>,
}

impl TextParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.b.len() && is_array_space(self.b[self.i]) {
            self.i += 1;
        }
    }

    fn malformed(&self, detail: &str) -> PgError {
        malformed(self.s, detail)
    }

    /// `[lb:ub]` (or `[ub]`) per dimension, then `=`; none when the input
    /// starts with `{`.
    fn declared_dims(&mut self) -> PgResult<Vec<Dim>> {
        let mut dims = Vec::new();
        while self.b.get(self.i) == Some(&b'[') {
            if dims.len() == MAXDIM {
                return Err(too_many_dims(dims.len() + 1));
            }
            let close = self.s[self.i..]
                .find(']')
                .map(|p| p + self.i)
                .ok_or_else(|| self.malformed("Missing \"]\" after array dimensions."))?;
            let text = &self.s[self.i + 1..close];
            let (lo, hi) = match text.split_once(':') {
                Some((l, h)) => (l.trim(), h.trim()),
                None => ("1", text.trim()),
            };
            let bad =
                || self.malformed("\"[\" must introduce explicitly-specified array dimensions.");
            let lo: i32 = lo.parse().map_err(|_| bad())?;
            let hi: i32 = hi.parse().map_err(|_| bad())?;
            if hi < lo {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "upper bound cannot be less than lower bound",
                ));
            }
            let len = i32::try_from(hi as i64 - lo as i64 + 1).map_err(|_| bad())?;
            if lo.checked_add(len).is_none() {
                // PostgreSQL's ArrayCheckBounds: lower bound + length fits.
                return Err(PgError::new(
                    sqlstate::PROGRAM_LIMIT_EXCEEDED,
                    format!("array lower bound is too large: {lo}"),
                ));
            }
            dims.push(Dim { len, lower: lo });
            self.i = close + 1;
        }
        if !dims.is_empty() {
            self.skip_ws();
            if self.b.get(self.i) != Some(&b'=') {
                return Err(self.malformed("Missing \"=\" after array dimensions."));
            }
            self.i += 1;
            self.skip_ws();
        }
        Ok(dims)
    }

    /// One brace level at `depth`, `self.i` on its `{`: either elements or
    /// sub-arrays, never both; every level at one depth holds as many.
    fn level(&mut self, depth: usize) -> PgResult<()> {
        if depth == MAXDIM {
            return Err(too_many_dims(depth + 1));
        }
        self.i += 1;
        self.skip_ws();
        if self.b.get(self.i) == Some(&b'}') {
            if depth > 0 {
                return Err(self.malformed("Unexpected \"}\" character."));
            }
            self.i += 1;
            return Ok(());
        }
        let mut n = 0i32;
        let mut nested = None;
        loop {
            self.skip_ws();
            match self.b.get(self.i) {
                None => return Err(self.malformed("Unexpected end of input.")),
                Some(b'{') => {
                    if nested == Some(false) {
                        return Err(self.malformed("Unexpected \"{\" character."));
                    }
                    nested = Some(true);
                    self.level(depth + 1)?;
                    self.skip_ws();
                }
                Some(_) => {
                    if nested == Some(true) {
                        return Err(self.malformed("Unexpected array element."));
                    }
                    nested = Some(false);
                    let v = self.element()?;
                    self.items.push(v);
                }
            }
            n += 1;
            match self.b.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                None => return Err(self.malformed("Unexpected end of input.")),
                Some(_) => return Err(self.malformed("Unexpected array element.")),
            }
        }
        let src = self.s;
        let mismatch = || {
            malformed(
                src,
                "Multidimensional arrays must have sub-arrays with matching dimensions.",
            )
        };
        if nested == Some(false) {
            match self.leaf_depth {
                None => self.leaf_depth = Some(depth),
                Some(d) if d != depth => return Err(mismatch()),
                Some(_) => {}
            }
        }
        match self.lens[depth] {
            None => self.lens[depth] = Some(n),
            Some(m) if m != n => return Err(mismatch()),
            Some(_) => {}
        }
        Ok(())
    }

    /// A backslash at `self.i`: the next character taken as it is.
    fn escaped(&mut self, text: &mut Vec<u8>) -> PgResult<()> {
        let n = *self
            .b
            .get(self.i + 1)
            .ok_or_else(|| self.malformed("Unexpected end of input."))?;
        text.push(n);
        self.i += 2;
        Ok(())
    }

    /// One element, quoted or not, with backslash escapes; stops before the
    /// `,` or `}` that ends it.
    fn element(&mut self) -> PgResult<Value> {
        let b = self.b;
        let mut text: Vec<u8> = Vec::new();
        let mut quoted_any = false;
        let mut in_quotes = false;
        // Trailing unquoted white space is dropped; remember where real content ends.
        let mut content_end = 0;
        loop {
            let Some(&c) = b.get(self.i) else {
                return Err(self.malformed("Unexpected end of input."));
            };
            if in_quotes {
                match c {
                    b'"' => {
                        in_quotes = false;
                        self.i += 1;
                    }
                    b'\\' => self.escaped(&mut text)?,
                    _ => {
                        text.push(c);
                        self.i += 1;
                    }
                }
                content_end = text.len();
                continue;
            }
            match c {
                b',' | b'}' => break,
                b'"' => {
                    if !text.is_empty() && content_end == text.len() && !quoted_any {
                        return Err(self.malformed("Unexpected array element."));
                    }
                    quoted_any = true;
                    in_quotes = true;
                    self.i += 1;
                }
                b'\\' => {
                    self.escaped(&mut text)?;
                    content_end = text.len();
                }
                b'{' => {
                    return Err(self.malformed("Unexpected \"{\" character."));
                }
                c if is_array_space(c) => {
                    if !text.is_empty() || quoted_any {
                        text.push(c);
                    }
                    self.i += 1;
                }
                c => {
                    if quoted_any && content_end == text.len() {
                        return Err(self.malformed("Unexpected array element."));
                    }
                    text.push(c);
                    self.i += 1;
                    content_end = text.len();
                }
            }
        }
        text.truncate(content_end);
        let t = String::from_utf8(text).map_err(|_| self.malformed("Invalid UTF-8."))?;
        if !quoted_any && t.is_empty() {
            let c = if b.get(self.i) == Some(&b'}') {
                '}'
            } else {
                ','
            };
            return Err(self.malformed(&format!("Unexpected \"{c}\" character.")));
        }
        if !quoted_any && t.eq_ignore_ascii_case("null") {
            Ok(Value::Null)
        } else {
            Value::from_text(self.elem_ty, &t)
        }
    }
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
    if ndim < 0 {
        return Err(PgError::new(
            sqlstate::INVALID_BINARY_REPRESENTATION,
            format!("invalid number of dimensions: {ndim}"),
        ));
    }
    if ndim as usize > MAXDIM {
        return Err(too_many_dims(ndim as usize));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    let mut total: usize = 1;
    for _ in 0..ndim {
        let len = i32_at(&mut pos)?;
        let lower = i32_at(&mut pos)?;
        // Each element takes at least its 4-byte length.
        if len < 0 || lower.checked_add(len).is_none() {
            return Err(bad("bad dimension"));
        }
        total = total.saturating_mul(len as usize);
        dims.push(Dim { len, lower });
    }
    if ndim == 0 {
        total = 0;
    }
    if total > b.len() / 4 {
        return Err(bad("bad dimension"));
    }
    let mut items = Vec::with_capacity(total);
    for _ in 0..total {
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
    Ok(ArrayValue::with_dims(elem, &dims, items))
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
    let (da, db) = (a.dims(), b.dims());
    a.items
        .len()
        .cmp(&b.items.len())
        .then(da.len().cmp(&db.len()))
        .then_with(|| da.iter().map(|d| d.len).cmp(db.iter().map(|d| d.len)))
        .then_with(|| da.iter().map(|d| d.lower).cmp(db.iter().map(|d| d.lower)))
}

/// Stacks arrays of one shape as the elements of a new first dimension
/// (lower bound 1): `ARRAY[ARRAY[…], …]` and array_agg over arrays. None
/// when the parts' dimensions or lower bounds differ; every part must be a
/// non-empty array.
pub fn stack(elem: ArrayElem, parts: &[&ArrayValue]) -> PgResult<Option<ArrayValue>> {
    let Some(first) = parts.first() else {
        return Ok(Some(ArrayValue::new(elem, Vec::new())));
    };
    let dims = first.dims();
    if dims.len() + 1 > MAXDIM {
        return Err(too_many_dims(dims.len() + 1));
    }
    if dims.is_empty() || parts.iter().any(|p| p.dims() != dims) {
        return Ok(None);
    }
    let mut items = Vec::with_capacity(parts.len() * first.items.len());
    for p in parts {
        items.extend(p.items.iter().cloned());
    }
    let mut all = Vec::with_capacity(dims.len() + 1);
    all.push(Dim {
        len: parts.len() as i32,
        lower: 1,
    });
    all.extend(dims);
    Ok(Some(ArrayValue::with_dims(elem, &all, items)))
}

/// array_cat's rules for `a || b` of two arrays: an empty side gives the
/// other; arrays of equal dimensions join along the first (their other
/// dimensions must match); an array of one dimension fewer is added as one
/// more element of the other's first dimension.
pub fn concat(a: &ArrayValue, b: &ArrayValue) -> PgResult<ArrayValue> {
    if b.items.is_empty() {
        return Ok(a.clone());
    }
    if a.items.is_empty() {
        return Ok(b.clone());
    }
    let (da, db) = (a.dims(), b.dims());
    let incompatible = |detail: String| {
        PgError::new(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            "cannot concatenate incompatible arrays",
        )
        .with_detail(detail)
    };
    let mut dims = if da.len() == db.len() {
        if da[1..] != db[1..] {
            return Err(incompatible(
                "Arrays with differing element dimensions are not compatible for concatenation."
                    .into(),
            ));
        }
        let mut d = da.clone();
        d[0].len += db[0].len;
        d
    } else if da.len() == db.len() + 1 || da.len() + 1 == db.len() {
        let (big, small) = if da.len() > db.len() {
            (&da, &db)
        } else {
            (&db, &da)
        };
        if big[1..] != small[..] {
            return Err(incompatible(
                "Arrays with differing dimensions are not compatible for concatenation.".into(),
            ));
        }
        big.clone()
    } else {
        return Err(incompatible(format!(
            "Arrays of {} and {} dimensions are not compatible for concatenation.",
            da.len(),
            db.len()
        )));
    };
    if da.len() != db.len() {
        dims[0].len += 1;
    }
    if dims[0].lower.checked_add(dims[0].len).is_none() {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            "array size exceeds the maximum allowed",
        ));
    }
    let mut items = Vec::with_capacity(a.items.len() + b.items.len());
    items.extend(a.items.iter().cloned());
    items.extend(b.items.iter().cloned());
    Ok(ArrayValue::with_dims(a.elem, &dims, items))
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
    fn multidimensional_text_forms_match_postgres() {
        // From PostgreSQL 15: select '<input>'::int4[] / ::text[].
        assert_eq!(rt(ArrayElem::Int4, "{{1,2},{3,4}}"), "{{1,2},{3,4}}");
        assert_eq!(rt(ArrayElem::Int4, " { { 1 } , { 2 } } "), "{{1},{2}}");
        assert_eq!(
            rt(ArrayElem::Int4, "[0:1][-1:0]={{7,8},{9,NULL}}"),
            "[0:1][-1:0]={{7,8},{9,NULL}}"
        );
        assert_eq!(
            rt(ArrayElem::Int4, "{{{1,2}},{{3,4}}}"),
            "{{{1,2}},{{3,4}}}"
        );
        assert_eq!(
            rt(ArrayElem::Text, r#"{{"a,b","{x}"},{"",NULL}}"#),
            r#"{{"a,b","{x}"},{"",NULL}}"#
        );
        let a = parse_array(ArrayElem::Int4, "[0:1][2:4]={{1,2,3},{4,5,6}}").unwrap();
        assert_eq!(a.ndims(), 2);
        assert_eq!(a.get_at(&[1, 3]), Value::Int4(5));
        assert_eq!(a.get_at(&[1]), Value::Null);
        assert_eq!(a.get_at(&[2, 3]), Value::Null);
        let s = a.slice(&[(1, 1), (3, i64::MAX)]);
        assert_eq!(
            s.dims(),
            [Dim { len: 1, lower: 1 }, Dim { len: 2, lower: 1 }]
        );
        assert_eq!(s.items, [Value::Int4(5), Value::Int4(6)]);
        for (bad, detail) in [
            (
                "{{1,2},{3}}",
                "Multidimensional arrays must have sub-arrays with matching dimensions.",
            ),
            (
                "{{1},{{2}}}",
                "Multidimensional arrays must have sub-arrays with matching dimensions.",
            ),
            ("{{1,2},3}", "Unexpected array element."),
            ("{1,{2}}", "Unexpected \"{\" character."),
            ("{{},{}}", "Unexpected \"}\" character."),
            (
                "[1:2]={{1,2},{3,4}}",
                "Specified array dimensions do not match array contents.",
            ),
            ("{{1,2}", "Unexpected end of input."),
        ] {
            let e = parse_array(ArrayElem::Int4, bad).unwrap_err();
            assert_eq!(e.detail.as_deref(), Some(detail), "{bad}");
        }
        let e = parse_array(ArrayElem::Int4, "{{{{{{{1}}}}}}}").unwrap_err();
        assert_eq!(e.code, "54000");
        let e = parse_array(ArrayElem::Int4, "[2147483647:2147483647]={1}").unwrap_err();
        assert_eq!(e.message, "array lower bound is too large: 2147483647");
    }

    #[test]
    fn multidimensional_order_and_concatenation() {
        let p = |s: &str| parse_array(ArrayElem::Int4, s).unwrap();
        // Same elements: fewer dimensions first, then lengths, then bounds.
        assert_eq!(
            cmp_arrays(&p("{1,2,3,4}"), &p("{{1,2},{3,4}}")),
            Ordering::Less
        );
        assert_eq!(
            cmp_arrays(&p("{{1,2,3,4}}"), &p("{{1,2},{3,4}}")),
            Ordering::Less
        );
        assert_eq!(
            cmp_arrays(&p("[0:1][1:2]={{1,2},{3,4}}"), &p("{{1,2},{3,4}}")),
            Ordering::Less
        );
        let show = |a: &ArrayValue| {
            let mut b = BytesMut::new();
            a.write_text(&mut b);
            String::from_utf8(b.to_vec()).unwrap()
        };
        assert_eq!(
            show(&concat(&p("{{1,2}}"), &p("{{3,4}}")).unwrap()),
            "{{1,2},{3,4}}"
        );
        assert_eq!(
            show(&concat(&p("{{1,2}}"), &p("{3,4}")).unwrap()),
            "{{1,2},{3,4}}"
        );
        assert_eq!(
            show(&concat(&p("{3,4}"), &p("{{1,2}}")).unwrap()),
            "{{3,4},{1,2}}"
        );
        assert_eq!(show(&concat(&p("{}"), &p("{{1}}")).unwrap()), "{{1}}");
        assert!(concat(&p("{{1,2}}"), &p("{{3}}")).is_err());
        assert!(concat(&p("{{{1}}}"), &p("{1}")).is_err());
        let parts = [&p("{1,2}"), &p("{3,4}")];
        assert_eq!(
            show(&stack(ArrayElem::Int4, &parts).unwrap().unwrap()),
            "{{1,2},{3,4}}"
        );
        let ragged = [&p("{1,2}"), &p("{3}")];
        assert!(stack(ArrayElem::Int4, &ragged).unwrap().is_none());
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
        let m = parse_array(ArrayElem::Int4, "[0:1][2:3]={{1,NULL},{3,4}}").unwrap();
        let mut b = BytesMut::new();
        m.write_binary(&mut b);
        assert_eq!(&b[..4], [0, 0, 0, 2]);
        assert_eq!(parse_array_binary(ArrayElem::Int4, &b).unwrap(), m);
        // A dimension claiming more elements than the bytes could hold.
        let mut huge = b.to_vec();
        huge[12..16].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(parse_array_binary(ArrayElem::Int4, &huge).is_err());
    }
}
