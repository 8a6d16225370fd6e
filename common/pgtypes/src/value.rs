//! Runtime values: text and binary I/O in PostgreSQL's formats, comparison,
//! and casts.
//!
//! A [`Value`] is what expressions produce, rows hold and the protocol sends.
//! It is cheap to clone: scalars are inline (an interval too), text is an
//! `Arc<str>` (a clone is a reference-count increment), a snapshot and an
//! array are behind an `Arc`. `Value` is 32
//! bytes.
//!
//! Text-like types (text, varchar, char, name) share [`Value::Text`]; the
//! column type decides length checks and padding at cast time, and char(n)
//! values are stored blank-padded as PostgreSQL's bpchar does.
//!
//! I/O contracts (what psql, pgbench and tokio-postgres see):
//! * [`Value::write_text`] prints exactly what PostgreSQL 15 prints (bool
//!   `t`/`f`, float8 shortest round-trip with `Infinity`/`NaN`/`-0` and
//!   exponents from 1e15 / below 1e-4, numeric with its scale, timestamps
//!   trimming trailing fractional zeros, timestamptz in UTC with `+00`,
//!   pg_lsn `X/X`). Integers and floats are formatted on the stack.
//! * [`Value::from_text`] accepts PostgreSQL's input syntax and fails with
//!   its errors (22P02 `invalid input syntax for type integer: "abc"`, 22003
//!   `value "…" is out of range for type integer`).
//! * [`Value::write_binary`] / [`Value::from_binary`] use PostgreSQL's binary
//!   send/recv formats (big-endian ints, IEEE float8, µs since 2000-01-01,
//!   numeric's base-10000 digits).
//!
//! Comparison ([`cmp_sql`]) works across the numeric types (int2/4/8,
//! numeric, float8 with NaN greatest, as PostgreSQL sorts it), across date
//! and timestamp(tz), orders intervals by their span and arrays element by
//! element ([`crate::array::cmp_arrays`]), and returns None for NULL. Casts ([`cast`], [`cast_assign`]) follow PostgreSQL's explicit
//! and assignment rules.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};

use crate::array::{self, ArrayValue};
use crate::datetime;
use crate::error::{sqlstate, PgError, PgResult};
use crate::inet::Inet;
use crate::interval::{self, Interval};
use crate::json::{self, Jsonb};
use crate::numeric::Numeric;
use crate::sqltype::SqlType;

/// A pg_snapshot / txid_snapshot value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PgSnapshot {
    /// Oldest xid still running.
    pub xmin: u64,
    /// First xid not yet assigned at snapshot time.
    pub xmax: u64,
    /// Running xids (sorted, xmin <= x < xmax).
    pub xip: Vec<u64>,
}

/// One SQL value. Text-like types (text, varchar, char, name) share `Text`.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// bool
    Bool(bool),
    /// int2
    Int2(i16),
    /// int4
    Int4(i32),
    /// int8
    Int8(i64),
    /// float8
    Float8(f64),
    /// numeric
    Numeric(Numeric),
    /// text, varchar, char, name (and `unknown` literals)
    Text(Arc<str>),
    /// timestamp: microseconds since 2000-01-01 00:00:00 (i64::MIN/MAX = ∓infinity)
    Timestamp(i64),
    /// timestamptz: microseconds since 2000-01-01 00:00:00 UTC
    TimestampTz(i64),
    /// pg_lsn
    PgLsn(u64),
    /// oid
    Oid(u32),
    /// xid8
    Xid8(u64),
    /// xid (32 bits)
    Xid(u32),
    /// pg_snapshot
    Snapshot(Arc<PgSnapshot>),
    /// void
    Void,
    /// date: days since 2000-01-01 (i32::MIN/MAX = ∓infinity)
    Date(i32),
    /// interval: months, days, microseconds
    Interval(Interval),
    /// A one-dimensional array.
    Array(Arc<ArrayValue>),
    /// bytea
    Bytea(Arc<[u8]>),
    /// json: the validated input text, as given
    Json(Arc<str>),
    /// jsonb: the canonical tree
    Jsonb(Arc<Jsonb>),
    /// uuid
    Uuid([u8; 16]),
    /// inet
    Inet(Inet),
    /// cidr (host bits are zero)
    Cidr(Inet),
    /// A value of an enum type: its label's pg_enum OID
    /// ([`crate::enumtype`] has the text and the sort order).
    Enum(u32),
}

fn invalid_syntax(ty: SqlType, s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!(
            "invalid input syntax for type {}: \"{}\"",
            ty.pg_base_name(),
            s
        ),
    )
}

fn out_of_range_input(ty: SqlType, s: &str) -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        format!(
            "value \"{}\" is out of range for type {}",
            s,
            ty.pg_base_name()
        ),
    )
}

/// 22003 "integer out of range" / "smallint out of range" / "bigint out of range".
pub fn int_out_of_range(ty: SqlType) -> PgError {
    let msg = match ty {
        SqlType::Int2 => "smallint out of range",
        SqlType::Int8 => "bigint out of range",
        _ => "integer out of range",
    };
    PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, msg)
}

/// A fixed-size stack buffer implementing `fmt::Write` (for allocation-free
/// number formatting).
struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackBuf<N> {
    fn new() -> Self {
        StackBuf {
            buf: [0; N],
            len: 0,
        }
    }
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    fn push(&mut self, b: u8) {
        if self.len < N {
            self.buf[self.len] = b;
            self.len += 1;
        }
    }
}

impl<const N: usize> fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let b = s.as_bytes();
        if self.len + b.len() > N {
            return Err(fmt::Error);
        }
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        Ok(())
    }
}

/// Writes the decimal digits of `v` at the end of `buf` and returns
/// where they start (`&buf[start..]` is the number): the one digit loop
/// of every integer written without allocating.
pub fn decimal_digits(v: u64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    let mut u = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            return i;
        }
    }
}

/// Appends the decimal form of `v` without allocating.
pub fn write_i64(out: &mut BytesMut, v: i64) {
    let mut buf = [0u8; 20];
    let i = decimal_digits(v.unsigned_abs(), &mut buf);
    if v < 0 {
        out.put_u8(b'-');
    }
    out.put_slice(&buf[i..]);
}

/// Appends the decimal form of `v` without allocating.
pub fn write_u64(out: &mut BytesMut, v: u64) {
    let mut buf = [0u8; 20];
    let i = decimal_digits(v, &mut buf);
    out.put_slice(&buf[i..]);
}

/// Appends a float8 as PostgreSQL ≥ 12 prints it (extra_float_digits = 1):
/// the shortest string that reads back exactly, fixed notation for decimal
/// exponents -4 ..= 14, else `d.ddde+XX`; `Infinity`, `-Infinity`, `NaN`, `-0`.
pub fn write_f64(out: &mut BytesMut, v: f64) {
    use std::fmt::Write;
    if v.is_nan() {
        out.put_slice(b"NaN");
        return;
    }
    if v.is_infinite() {
        out.put_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" });
        return;
    }
    if v == 0.0 {
        out.put_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let mut sci = StackBuf::<40>::new();
    let _ = write!(sci, "{:e}", v);
    let s = sci.as_bytes();
    let (neg, s) = if s[0] == b'-' {
        (true, &s[1..])
    } else {
        (false, s)
    };
    let epos = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
    let mant = &s[..epos];
    let exp: i32 = std::str::from_utf8(s.get(epos + 1..).unwrap_or(b"0"))
        .ok()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    let mut digits = StackBuf::<24>::new();
    for &c in mant {
        if c != b'.' {
            digits.push(c);
        }
    }
    let d = digits.as_bytes();
    if neg {
        out.put_u8(b'-');
    }
    if (-4..15).contains(&exp) {
        if exp < 0 {
            out.put_slice(b"0.");
            for _ in 0..(-exp - 1) {
                out.put_u8(b'0');
            }
            out.put_slice(d);
        } else {
            let int_len = exp as usize + 1;
            if d.len() <= int_len {
                out.put_slice(d);
                for _ in d.len()..int_len {
                    out.put_u8(b'0');
                }
            } else {
                out.put_slice(&d[..int_len]);
                out.put_u8(b'.');
                out.put_slice(&d[int_len..]);
            }
        }
    } else {
        out.put_u8(d[0]);
        if d.len() > 1 {
            out.put_u8(b'.');
            out.put_slice(&d[1..]);
        }
        out.put_u8(b'e');
        out.put_u8(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.put_u8(b'0');
        }
        write_u64(out, a as u64);
    }
}

/// Parses an integer as PostgreSQL's int2in/int4in/int8in: optional
/// whitespace, sign, decimal digits.
fn parse_int(ty: SqlType, s: &str, min: i64, max: i64) -> PgResult<i64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let b = t.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || !digits.iter().all(|c| c.is_ascii_digit()) {
        return Err(invalid_syntax(ty, s));
    }
    // Accumulate negatively so i64::MIN parses.
    let mut acc: i64 = 0;
    for &c in digits {
        acc = match acc
            .checked_mul(10)
            .and_then(|a| a.checked_sub((c - b'0') as i64))
        {
            Some(a) => a,
            None => return Err(out_of_range_input(ty, s)),
        };
    }
    let v = if neg {
        acc
    } else {
        acc.checked_neg().ok_or_else(|| out_of_range_input(ty, s))?
    };
    if v < min || v > max {
        return Err(out_of_range_input(ty, s));
    }
    Ok(v)
}

/// Parses float8 input as PostgreSQL's float8in.
fn parse_f64(s: &str) -> PgResult<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let lower = t.to_ascii_lowercase();
    let special = match lower.as_str() {
        "nan" => Some(f64::NAN),
        "infinity" | "+infinity" | "inf" | "+inf" => Some(f64::INFINITY),
        "-infinity" | "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    };
    if let Some(v) = special {
        return Ok(v);
    }
    // Rust accepts "inf"/"nan" spellings handled above; reject other words.
    if t.is_empty()
        || !t
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return Err(invalid_syntax(SqlType::Float8, s));
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_infinite() => Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("\"{}\" is out of range for type double precision", t),
        )),
        Ok(v) => {
            if v == 0.0 && t.bytes().any(|c| (b'1'..=b'9').contains(&c)) {
                // Underflow: a nonzero mantissa that rounds to zero.
                let mant_nonzero = t
                    .split(['e', 'E'])
                    .next()
                    .map(|m| m.bytes().any(|c| (b'1'..=b'9').contains(&c)))
                    .unwrap_or(false);
                if mant_nonzero {
                    return Err(PgError::new(
                        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                        format!("\"{}\" is out of range for type double precision", t),
                    ));
                }
            }
            Ok(v)
        }
        Err(_) => Err(invalid_syntax(SqlType::Float8, s)),
    }
}

/// Parses bool input as PostgreSQL's boolin (t/f, true/false, yes/no, on/off,
/// 1/0 and unique prefixes, case-insensitive).
fn parse_bool(s: &str) -> PgResult<bool> {
    let t = s
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_ascii_lowercase();
    let r = match t.as_str() {
        "t" | "tr" | "tru" | "true" | "y" | "ye" | "yes" | "on" | "1" => Some(true),
        "f" | "fa" | "fal" | "fals" | "false" | "n" | "no" | "of" | "off" | "0" => Some(false),
        _ => None,
    };
    r.ok_or_else(|| invalid_syntax(SqlType::Bool, s))
}

/// Parses `xmin:xmax:xip,xip` as pg_snapshot_in.
fn parse_snapshot(s: &str) -> Option<PgSnapshot> {
    let mut parts = s.splitn(3, ':');
    let xmin: u64 = parts.next()?.parse().ok()?;
    let xmax: u64 = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let mut xip = Vec::new();
    if !rest.is_empty() {
        for x in rest.split(',') {
            xip.push(x.parse().ok()?);
        }
    }
    if xmin == 0 || xmax == 0 || xmin > xmax || xip.iter().any(|&x| x < xmin || x >= xmax) {
        return None;
    }
    if xip.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    xip.dedup();
    Some(PgSnapshot { xmin, xmax, xip })
}

/// Applies a varchar(n)/char(n) length in assignment context: 22001 when
/// non-space characters would be cut, else truncate trailing spaces; char(n)
/// is blank-padded to n.
fn fit_text_assign(s: &str, ty: SqlType) -> PgResult<Arc<str>> {
    match ty {
        SqlType::Varchar(Some(n)) | SqlType::Char(n) if n > 0 => {
            let n = n as usize;
            let count = s.chars().count();
            if count > n {
                let cut = s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len());
                if s[cut..].bytes().any(|c| c != b' ') {
                    return Err(PgError::new(
                        sqlstate::STRING_DATA_RIGHT_TRUNCATION,
                        format!("value too long for type {}", ty.pg_name()),
                    ));
                }
                return Ok(Arc::from(&s[..cut]));
            }
            if matches!(ty, SqlType::Char(_)) && count < n {
                let mut p = String::with_capacity(s.len() + n - count);
                p.push_str(s);
                p.extend(std::iter::repeat_n(' ', n - count));
                return Ok(Arc::from(p));
            }
            Ok(Arc::from(s))
        }
        SqlType::Name => {
            // NAMEDATALEN - 1 = 63 bytes, truncated at a character boundary.
            if s.len() > 63 {
                let mut cut = 63;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                return Ok(Arc::from(&s[..cut]));
            }
            Ok(Arc::from(s))
        }
        _ => Ok(Arc::from(s)),
    }
}

/// Explicit-cast variant: silently truncates to n characters, char(n) pads.
fn fit_text_explicit(s: &str, ty: SqlType) -> Arc<str> {
    match ty {
        SqlType::Varchar(Some(n)) | SqlType::Char(n) if n > 0 => {
            let n = n as usize;
            let cut = s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len());
            let t = &s[..cut];
            let count = t.chars().count();
            if matches!(ty, SqlType::Char(_)) && count < n {
                let mut p = String::with_capacity(t.len() + n - count);
                p.push_str(t);
                p.extend(std::iter::repeat_n(' ', n - count));
                return Arc::from(p);
            }
            Arc::from(t)
        }
        _ => fit_text_assign(s, ty).unwrap_or_else(|_| Arc::from(s)),
    }
}

impl Value {
    /// A text value.
    pub fn text(s: &str) -> Value {
        Value::Text(Arc::from(s))
    }

    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The natural type of this value (NULL and text-like values: see below).
    /// `Text` reports [`SqlType::Text`], `Null` reports [`SqlType::Unknown`].
    pub fn sql_type(&self) -> SqlType {
        match self {
            Value::Null => SqlType::Unknown,
            Value::Bool(_) => SqlType::Bool,
            Value::Int2(_) => SqlType::Int2,
            Value::Int4(_) => SqlType::Int4,
            Value::Int8(_) => SqlType::Int8,
            Value::Float8(_) => SqlType::Float8,
            Value::Numeric(_) => SqlType::Numeric(None),
            Value::Text(_) => SqlType::Text,
            Value::Timestamp(_) => SqlType::Timestamp,
            Value::TimestampTz(_) => SqlType::TimestampTz,
            Value::PgLsn(_) => SqlType::PgLsn,
            Value::Oid(_) => SqlType::Oid,
            Value::Xid8(_) => SqlType::Xid8,
            Value::Xid(_) => SqlType::Xid,
            Value::Snapshot(_) => SqlType::Snapshot,
            Value::Void => SqlType::Void,
            Value::Date(_) => SqlType::Date,
            Value::Interval(_) => SqlType::Interval,
            Value::Array(a) => a.sql_type(),
            Value::Bytea(_) => SqlType::Bytea,
            Value::Json(_) => SqlType::Json,
            Value::Jsonb(_) => SqlType::Jsonb,
            Value::Uuid(_) => SqlType::Uuid,
            Value::Inet(_) => SqlType::Inet,
            Value::Cidr(_) => SqlType::Cidr,
            Value::Enum(l) => SqlType::Enum(crate::enumtype::type_of_label(*l).unwrap_or(0)),
        }
    }

    /// The string of a text value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean of a bool value.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// Any integer value (int2/4/8, oid, xid8 ≤ i64::MAX) as i64.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int2(v) => Some(v as i64),
            Value::Int4(v) => Some(v as i64),
            Value::Int8(v) => Some(v),
            Value::Oid(v) => Some(v as i64),
            Value::Xid8(v) => i64::try_from(v).ok(),
            Value::Xid(v) => Some(v as i64),
            _ => None,
        }
    }

    /// Parses PostgreSQL text input for `ty`. varchar(n)/char(n) apply their
    /// length as an assignment would (22001; char pads). `Unknown` yields text.
    pub fn from_text(ty: SqlType, s: &str) -> PgResult<Value> {
        Ok(match ty {
            SqlType::Bool => Value::Bool(parse_bool(s)?),
            SqlType::Int2 => {
                Value::Int2(parse_int(ty, s, i16::MIN as i64, i16::MAX as i64)? as i16)
            }
            SqlType::Int4 => {
                Value::Int4(parse_int(ty, s, i32::MIN as i64, i32::MAX as i64)? as i32)
            }
            SqlType::Int8 => Value::Int8(parse_int(ty, s, i64::MIN, i64::MAX)?),
            SqlType::Reg(_) => {
                // Without the catalog only the numeric form and `-`
                // (InvalidOid); the SQL layer resolves names.
                let t = s.trim();
                if t == "-" {
                    Value::Oid(0)
                } else {
                    Value::Oid(t.parse::<u32>().map_err(|_| invalid_syntax(ty, s))?)
                }
            }
            SqlType::Oid => {
                // oidin accepts negative values (wrapping) like PostgreSQL.
                let v = parse_int(ty, s, i32::MIN as i64, u32::MAX as i64)?;
                Value::Oid(v as u32)
            }
            SqlType::Xid8 => {
                let t = s.trim();
                Value::Xid8(t.parse::<u64>().map_err(|_| invalid_syntax(ty, s))?)
            }
            SqlType::Xid => {
                let t = s.trim();
                Value::Xid(t.parse::<u32>().map_err(|_| invalid_syntax(ty, s))?)
            }
            SqlType::Float8 => Value::Float8(parse_f64(s)?),
            SqlType::Numeric(tm) => {
                let t = s
                    .trim_matches(|c: char| c.is_ascii_whitespace())
                    .to_ascii_lowercase();
                if matches!(
                    t.as_str(),
                    "nan" | "infinity" | "-infinity" | "+infinity" | "inf" | "-inf"
                ) {
                    return Err(PgError::unsupported(
                        "numeric NaN and infinity are not supported",
                    ));
                }
                let n = match Numeric::parse(s) {
                    Some(r) => r?,
                    None => return Err(invalid_syntax(ty, s)),
                };
                let n = match tm {
                    Some((p, sc)) => n.apply_typmod(p, sc)?,
                    None => n,
                };
                Value::Numeric(n)
            }
            SqlType::Text | SqlType::Unknown | SqlType::Refcursor => Value::Text(Arc::from(s)),
            // charin: the first character (PostgreSQL keeps its first byte).
            SqlType::InternalChar => Value::Text(Arc::from(
                s.chars().next().map(String::from).unwrap_or_default(),
            )),
            SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name => {
                Value::Text(fit_text_assign(s, ty)?)
            }
            SqlType::Timestamp => Value::Timestamp(datetime::parse_timestamp(s, false)?),
            SqlType::TimestampTz => Value::TimestampTz(datetime::parse_timestamp(s, true)?),
            SqlType::PgLsn => Value::PgLsn(
                s.trim()
                    .parse::<crate::lsn::Lsn>()
                    .map_err(|_| invalid_syntax(ty, s))?
                    .0,
            ),
            SqlType::Snapshot => Value::Snapshot(Arc::new(
                parse_snapshot(s).ok_or_else(|| invalid_syntax(ty, s))?,
            )),
            SqlType::Void | SqlType::Trigger => Value::Void,
            // record_in: PostgreSQL cannot read an anonymous row either.
            SqlType::Record => {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "input of anonymous composite types is not implemented",
                ))
            }
            SqlType::Date => Value::Date(datetime::parse_date(s)?),
            SqlType::Interval => Value::Interval(interval::parse_interval(s)?),
            SqlType::Array(e) => Value::Array(Arc::new(array::parse_array(e, s)?)),
            SqlType::Bytea => Value::Bytea(Arc::from(crate::bytea::parse(s)?)),
            SqlType::Json => {
                json::validate_json(s)?;
                Value::Json(Arc::from(s))
            }
            SqlType::Jsonb => Value::Jsonb(Arc::new(json::parse_jsonb(s)?)),
            SqlType::Uuid => Value::Uuid(crate::uuid::parse(s)?),
            SqlType::Inet => Value::Inet(Inet::parse(s, false)?),
            SqlType::Cidr => Value::Cidr(Inet::parse(s, true)?),
            SqlType::Enum(t) => Value::Enum(crate::enumtype::input(t, s)?),
        })
    }

    /// Parses PostgreSQL binary input (a Bind parameter in format 1) for `ty`.
    /// Wrong lengths: 22P03 "incorrect binary data format"; text must be UTF-8 (22021).
    pub fn from_binary(ty: SqlType, b: &[u8]) -> PgResult<Value> {
        fn fixed<const N: usize>(b: &[u8]) -> PgResult<[u8; N]> {
            b.try_into().map_err(|_| {
                PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    "incorrect binary data format",
                )
            })
        }
        Ok(match ty {
            SqlType::Bool => {
                let [v] = fixed::<1>(b)?;
                Value::Bool(v != 0)
            }
            SqlType::Int2 => Value::Int2(i16::from_be_bytes(fixed(b)?)),
            SqlType::Int4 => Value::Int4(i32::from_be_bytes(fixed(b)?)),
            SqlType::Int8 => Value::Int8(i64::from_be_bytes(fixed(b)?)),
            SqlType::Oid | SqlType::Reg(_) => Value::Oid(u32::from_be_bytes(fixed(b)?)),
            SqlType::Xid8 => Value::Xid8(u64::from_be_bytes(fixed(b)?)),
            SqlType::Xid => Value::Xid(u32::from_be_bytes(fixed(b)?)),
            SqlType::Float8 => {
                // float4 (4 bytes) arrives here too when a client binds a float4 OID.
                if b.len() == 4 {
                    Value::Float8(f32::from_be_bytes(fixed(b)?) as f64)
                } else {
                    Value::Float8(f64::from_be_bytes(fixed(b)?))
                }
            }
            SqlType::Numeric(tm) => {
                let n = Numeric::from_binary(b)?;
                let n = match tm {
                    Some((p, s)) => n.apply_typmod(p, s)?,
                    None => n,
                };
                Value::Numeric(n)
            }
            SqlType::Text
            | SqlType::Unknown
            | SqlType::Varchar(_)
            | SqlType::Char(_)
            | SqlType::Name
            | SqlType::Refcursor
            | SqlType::InternalChar => {
                let s = std::str::from_utf8(b).map_err(|e| {
                    let bad = b.get(e.valid_up_to()).copied().unwrap_or(0);
                    PgError::new(
                        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                        format!("invalid byte sequence for encoding \"UTF8\": 0x{:02x}", bad),
                    )
                })?;
                if s.contains('\0') {
                    return Err(PgError::new(
                        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                        "invalid byte sequence for encoding \"UTF8\": 0x00",
                    ));
                }
                Value::Text(fit_text_assign(s, ty)?)
            }
            SqlType::Timestamp => Value::Timestamp(i64::from_be_bytes(fixed(b)?)),
            SqlType::TimestampTz => Value::TimestampTz(i64::from_be_bytes(fixed(b)?)),
            SqlType::PgLsn => Value::PgLsn(u64::from_be_bytes(fixed(b)?)),
            SqlType::Snapshot => {
                let bad = || {
                    PgError::new(
                        sqlstate::INVALID_BINARY_REPRESENTATION,
                        "invalid external pg_snapshot data",
                    )
                };
                if b.len() < 20 {
                    return Err(bad());
                }
                let n = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                let xmin = u64::from_be_bytes(fixed(&b[4..12])?);
                let xmax = u64::from_be_bytes(fixed(&b[12..20])?);
                if n < 0 || b.len() != 20 + 8 * n as usize {
                    return Err(bad());
                }
                let xip = b[20..]
                    .chunks_exact(8)
                    .map(|c| u64::from_be_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect();
                Value::Snapshot(Arc::new(PgSnapshot { xmin, xmax, xip }))
            }
            SqlType::Void | SqlType::Trigger => Value::Void,
            // record_in: PostgreSQL cannot read an anonymous row either.
            SqlType::Record => {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "input of anonymous composite types is not implemented",
                ))
            }
            SqlType::Date => Value::Date(i32::from_be_bytes(fixed(b)?)),
            SqlType::Interval => {
                let b: [u8; 16] = fixed(b)?;
                let mut t = [0u8; 8];
                t.copy_from_slice(&b[..8]);
                Value::Interval(Interval::new(
                    i32::from_be_bytes([b[12], b[13], b[14], b[15]]),
                    i32::from_be_bytes([b[8], b[9], b[10], b[11]]),
                    i64::from_be_bytes(t),
                ))
            }
            SqlType::Array(e) => Value::Array(Arc::new(array::parse_array_binary(e, b)?)),
            SqlType::Bytea => Value::Bytea(Arc::from(b)),
            SqlType::Uuid => Value::Uuid(fixed(b)?),
            SqlType::Inet => Value::Inet(Inet::from_binary(b, false)?),
            SqlType::Cidr => Value::Cidr(Inet::from_binary(b, true)?),
            // enum_recv: the label's text, as in the text format.
            SqlType::Enum(t) => {
                let s = std::str::from_utf8(b).map_err(|_| {
                    PgError::new(
                        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                        "invalid byte sequence for encoding \"UTF8\"",
                    )
                })?;
                Value::Enum(crate::enumtype::input(t, s)?)
            }
            SqlType::Json | SqlType::Jsonb => {
                // jsonb_recv: a version byte (1), then the text.
                let body = if ty == SqlType::Jsonb {
                    match b.split_first() {
                        Some((1, rest)) => rest,
                        Some((v, _)) => {
                            return Err(PgError::new(
                                sqlstate::INVALID_BINARY_REPRESENTATION,
                                format!("unsupported jsonb version number {v}"),
                            ))
                        }
                        None => {
                            return Err(PgError::new(
                                sqlstate::INVALID_BINARY_REPRESENTATION,
                                "insufficient data left in message",
                            ))
                        }
                    }
                } else {
                    b
                };
                let s = std::str::from_utf8(body).map_err(|e| {
                    let bad = body.get(e.valid_up_to()).copied().unwrap_or(0);
                    PgError::new(
                        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                        format!("invalid byte sequence for encoding \"UTF8\": 0x{:02x}", bad),
                    )
                })?;
                Value::from_text(ty, s)?
            }
        })
    }

    /// Appends the text form (what a DataRow in text format carries). NULL
    /// writes nothing (the protocol sends length -1 for it).
    pub fn write_text(&self, out: &mut BytesMut) {
        match self {
            Value::Null | Value::Void => {}
            Value::Bool(b) => out.put_u8(if *b { b't' } else { b'f' }),
            Value::Int2(v) => write_i64(out, *v as i64),
            Value::Int4(v) => write_i64(out, *v as i64),
            Value::Int8(v) => write_i64(out, *v),
            Value::Oid(v) => write_u64(out, *v as u64),
            Value::Xid8(v) => write_u64(out, *v),
            Value::Xid(v) => write_u64(out, *v as u64),
            Value::Float8(v) => write_f64(out, *v),
            Value::Numeric(n) => {
                let mut buf = [0u8; 64];
                let len = n.write_to(&mut buf);
                out.put_slice(&buf[..len]);
            }
            Value::Text(s) => out.put_slice(s.as_bytes()),
            Value::Timestamp(t) => datetime::write_timestamp(out, *t, false),
            Value::Date(d) => datetime::write_date(out, *d),
            Value::Interval(iv) => iv.write_text(out),
            Value::Array(a) => a.write_text(out),
            Value::Bytea(b) => crate::bytea::write_text(out, b),
            Value::Json(s) => out.put_slice(s.as_bytes()),
            Value::Jsonb(j) => out.put_slice(j.to_text().as_bytes()),
            Value::Uuid(u) => crate::uuid::write_text(out, u),
            Value::Inet(a) => a.write_text(out, false),
            Value::Cidr(a) => a.write_text(out, true),
            Value::Enum(l) => match crate::enumtype::label_text(*l) {
                Ok(t) => out.put_slice(t.as_bytes()),
                // A label whose type is gone: its OID (never a panic).
                Err(_) => write_u64(out, *l as u64),
            },
            Value::TimestampTz(t) => datetime::write_timestamp(out, *t, true),
            Value::PgLsn(l) => {
                use std::fmt::Write;
                let mut b = StackBuf::<20>::new();
                let _ = write!(b, "{:X}/{:X}", l >> 32, l & 0xffff_ffff);
                out.put_slice(b.as_bytes());
            }
            Value::Snapshot(s) => {
                write_u64(out, s.xmin);
                out.put_u8(b':');
                write_u64(out, s.xmax);
                out.put_u8(b':');
                for (i, x) in s.xip.iter().enumerate() {
                    if i > 0 {
                        out.put_u8(b',');
                    }
                    write_u64(out, *x);
                }
            }
        }
    }

    /// Appends the binary form (PostgreSQL's typsend). NULL writes nothing.
    pub fn write_binary(&self, out: &mut BytesMut) {
        match self {
            Value::Null => {}
            Value::Void => {}
            Value::Bool(b) => out.put_u8(*b as u8),
            Value::Int2(v) => out.put_i16(*v),
            Value::Int4(v) => out.put_i32(*v),
            Value::Int8(v) => out.put_i64(*v),
            Value::Oid(v) => out.put_u32(*v),
            Value::Xid8(v) => out.put_u64(*v),
            Value::Xid(v) => out.put_u32(*v),
            Value::Float8(v) => out.put_f64(*v),
            Value::Numeric(n) => n.write_binary(out),
            Value::Text(s) => out.put_slice(s.as_bytes()),
            Value::Timestamp(t) | Value::TimestampTz(t) => out.put_i64(*t),
            Value::Date(d) => out.put_i32(*d),
            Value::Interval(iv) => {
                out.put_i64(iv.micros);
                out.put_i32(iv.days);
                out.put_i32(iv.months);
            }
            Value::Array(a) => a.write_binary(out),
            Value::Bytea(b) => out.put_slice(b),
            Value::Json(s) => out.put_slice(s.as_bytes()),
            Value::Jsonb(j) => {
                out.put_u8(1);
                out.put_slice(j.to_text().as_bytes());
            }
            Value::Uuid(u) => out.put_slice(u),
            Value::Inet(a) => a.write_binary(out, false),
            Value::Cidr(a) => a.write_binary(out, true),
            Value::Enum(_) => self.write_text(out),
            Value::PgLsn(l) => out.put_u64(*l),
            Value::Snapshot(s) => {
                out.put_i32(s.xip.len() as i32);
                out.put_u64(s.xmin);
                out.put_u64(s.xmax);
                for x in &s.xip {
                    out.put_u64(*x);
                }
            }
        }
    }

    /// The text form as a String (NULL gives an empty string; check
    /// [`Value::is_null`] first where it matters).
    pub fn to_text_string(&self) -> String {
        if let Value::Text(s) = self {
            return s.to_string();
        }
        let mut b = BytesMut::with_capacity(32);
        self.write_text(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    }
}

impl fmt::Display for Value {
    /// The PostgreSQL text form; NULL displays as `NULL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            return f.write_str("NULL");
        }
        f.write_str(&self.to_text_string())
    }
}

/// Total order used for float8, as PostgreSQL's float8_cmp: NaN is greater
/// than everything and equal to itself; -0 == 0.
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Compares an integer with a numeric exactly.
fn cmp_int_numeric(a: i64, b: Numeric) -> Ordering {
    Numeric::from_i64(a).cmp(&b)
}

/// Compares an integer with a float8 exactly (PostgreSQL casts the integer
/// to float8; for |a| < 2^53 that is exact, above we compare carefully).
fn cmp_int_f64(a: i64, b: f64) -> Ordering {
    if b.is_nan() {
        return Ordering::Less;
    }
    cmp_f64(a as f64, b)
}

/// Compares two text values as bpchar does (trailing spaces insignificant).
pub fn cmp_bpchar(a: &str, b: &str) -> Ordering {
    a.trim_end_matches(' ')
        .as_bytes()
        .cmp(b.trim_end_matches(' ').as_bytes())
}

/// SQL comparison: None if either side is NULL or the types are not
/// comparable. Works across int2/int4/int8/numeric/float8, timestamp vs
/// timestamptz (timestamp taken as UTC), oid/xid8 vs ints. Text compares
/// byte-wise (C collation).
pub fn cmp_sql(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    Some(match (a, b) {
        (Null, _) | (_, Null) => return None,
        (Int4(x), Int4(y)) => x.cmp(y),
        (Int8(x), Int8(y)) => x.cmp(y),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Float8(x), Float8(y)) => cmp_f64(*x, *y),
        (Numeric(x), Numeric(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y))
        | (TimestampTz(x), TimestampTz(y))
        | (Timestamp(x), TimestampTz(y))
        | (TimestampTz(x), Timestamp(y)) => x.cmp(y),
        (PgLsn(x), PgLsn(y)) => x.cmp(y),
        (Xid8(x), Xid8(y)) => x.cmp(y),
        (Xid(x), Xid(y)) => x.cmp(y),
        (Oid(x), Oid(y)) => x.cmp(y),
        (Void, Void) => Ordering::Equal,
        (Date(x), Date(y)) => x.cmp(y),
        (Date(d), Timestamp(t) | TimestampTz(t)) => datetime::date_to_timestamp(*d).cmp(t),
        (Timestamp(t) | TimestampTz(t), Date(d)) => t.cmp(&datetime::date_to_timestamp(*d)),
        (Interval(x), Interval(y)) => x.span().cmp(&y.span()),
        (Array(x), Array(y)) => array::cmp_arrays(x, y),
        (Bytea(x), Bytea(y)) => x.cmp(y),
        (Jsonb(x), Jsonb(y)) => json::cmp_jsonb(x, y),
        (Json(x), Json(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        // cidr is binary-coercible to inet: the two compare as inet.
        (Inet(x) | Cidr(x), Inet(y) | Cidr(y)) => x.cmp_net(y),
        (Enum(x), Enum(y)) => crate::enumtype::cmp_labels(*x, *y),
        (Snapshot(x), Snapshot(y)) => (x.xmin, x.xmax, &x.xip).cmp(&(y.xmin, y.xmax, &y.xip)),
        (Numeric(x), Float8(y)) => cmp_f64(x.to_f64(), *y),
        (Float8(x), Numeric(y)) => cmp_f64(*x, y.to_f64()),
        (x, y) => match (x.as_i64_lossless(), y.as_i64_lossless()) {
            (Some(i), Some(j)) => i.cmp(&j),
            (Some(i), None) => match y {
                Numeric(n) => cmp_int_numeric(i, *n),
                Float8(f) => cmp_int_f64(i, *f),
                Xid8(u) => (i as i128).cmp(&(*u as i128)),
                Xid(u) => i.cmp(&(*u as i64)),
                _ => return None,
            },
            (None, Some(j)) => match x {
                Numeric(n) => cmp_int_numeric(j, *n).reverse(),
                Float8(f) => cmp_int_f64(j, *f).reverse(),
                Xid8(u) => (*u as i128).cmp(&(j as i128)),
                Xid(u) => (*u as i64).cmp(&j),
                _ => return None,
            },
            (None, None) => return None,
        },
    })
}

impl Value {
    fn as_i64_lossless(&self) -> Option<i64> {
        match *self {
            Value::Int2(v) => Some(v as i64),
            Value::Int4(v) => Some(v as i64),
            Value::Int8(v) => Some(v),
            Value::Oid(v) => Some(v as i64),
            _ => None,
        }
    }
}

/// SQL equality: None if either side is NULL.
pub fn eq_sql(a: &Value, b: &Value) -> Option<bool> {
    cmp_sql(a, b).map(|o| o == Ordering::Equal)
}

/// Ordering for ORDER BY: NULLs sort last ascending (PostgreSQL's default
/// NULLS LAST for ASC); incomparable values compare equal.
pub fn cmp_for_sort(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => cmp_sql(a, b).unwrap_or(Ordering::Equal),
    }
}

/// How a cast is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastMode {
    /// `CAST(x AS t)` / `x::t`: varchar(n)/char(n) truncate silently.
    Explicit,
    /// INSERT/UPDATE/COPY into a column: too-long strings raise 22001.
    Assignment,
}

fn cannot_cast(from: SqlType, to: SqlType) -> PgError {
    PgError::new(
        sqlstate::DATATYPE_MISMATCH,
        format!("cannot cast type {} to {}", from.pg_name(), to.pg_name()),
    )
}

/// True if a cast from `from` to `to` exists (any context). Used by the
/// binder to report 42846 at bind time.
pub fn can_cast(from: SqlType, to: SqlType) -> bool {
    use SqlType::*;
    if from == to || from == Unknown || to.is_text_like() || from.is_text_like() {
        return true;
    }
    match (from, to) {
        (a, b) if a.is_numeric_category() && b.is_numeric_category() => true,
        (Bool, Int4) | (Int4, Bool) => true,
        (Timestamp, TimestampTz) | (TimestampTz, Timestamp) => true,
        (Int2 | Int4 | Int8, Oid) | (Oid, Int4 | Int8) => true,
        (Int2 | Int4 | Int8 | Oid | Reg(_), Reg(_)) | (Reg(_), Oid | Int4 | Int8) => true,
        (Xid8, Int8) => false,
        (Xid8, Xid) => true,
        (Numeric(_), PgLsn) => true,
        (Date, Timestamp | TimestampTz) | (Timestamp | TimestampTz, Date) => true,
        (Array(a), Array(b)) => can_cast(a.sql_type(), b.sql_type()),
        (Json, Jsonb) | (Jsonb, Json) => true,
        (Jsonb, Bool | Int2 | Int4 | Int8 | Float8 | Numeric(_)) => true,
        (Inet | Cidr, Inet | Cidr) => true,
        _ => false,
    }
}

/// Explicit cast (`CAST(x AS t)`, `x::t`) with PostgreSQL's rules.
pub fn cast(v: &Value, to: SqlType) -> PgResult<Value> {
    cast_with(v, to, CastMode::Explicit)
}

/// Assignment cast (INSERT/UPDATE target columns): as [`cast`] but
/// varchar(n)/char(n) raise 22001 "value too long for type character varying(n)".
pub fn cast_assign(v: &Value, to: SqlType) -> PgResult<Value> {
    cast_with(v, to, CastMode::Assignment)
}

fn check_i32(v: i64) -> PgResult<i32> {
    i32::try_from(v).map_err(|_| int_out_of_range(SqlType::Int4))
}

fn check_i16(v: i64) -> PgResult<i16> {
    i16::try_from(v).map_err(|_| int_out_of_range(SqlType::Int2))
}

/// float8 → integer as PostgreSQL: round half to even (rint), range check.
fn f64_to_int(f: f64, ty: SqlType) -> PgResult<i64> {
    let r = f.round_ties_even();
    let (min, max) = match ty {
        SqlType::Int2 => (i16::MIN as f64, i16::MAX as f64),
        SqlType::Int4 => (i32::MIN as f64, i32::MAX as f64),
        _ => (i64::MIN as f64, 9_223_372_036_854_775_807.0),
    };
    if r.is_nan()
        || r < min
        || r >= max + 1.0
        || (ty == SqlType::Int8 && r >= 9.223_372_036_854_776e18)
    {
        return Err(int_out_of_range(ty));
    }
    Ok(r as i64)
}

/// jsonb to bool / a number type (PostgreSQL 15's jsonb_int4 & co): the
/// scalar must be of the matching JSON type, else 22023 `cannot cast jsonb
/// string to type integer`.
fn jsonb_scalar_cast(j: &Jsonb, to: SqlType) -> PgResult<Value> {
    let wrong = || {
        let what = match j {
            Jsonb::Array(a) if a.is_empty() => "array",
            other => other.type_name(),
        };
        PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("cannot cast jsonb {what} to type {}", to.pg_base_name()),
        )
    };
    match (j, to) {
        (Jsonb::Bool(b), SqlType::Bool) => Ok(Value::Bool(*b)),
        (Jsonb::Number(n), SqlType::Float8) => Value::from_text(SqlType::Float8, n),
        (Jsonb::Number(n), t) if t != SqlType::Bool => {
            let num = match Numeric::parse(n) {
                Some(r) => r?,
                None => return Err(invalid_syntax(SqlType::NUMERIC, n)),
            };
            cast_with(&Value::Numeric(num), t, CastMode::Explicit)
        }
        _ => Err(wrong()),
    }
}

/// Cast with an explicit mode.
pub fn cast_with(v: &Value, to: SqlType, mode: CastMode) -> PgResult<Value> {
    use SqlType as T;
    if v.is_null() {
        return Ok(Value::Null);
    }
    // Text-like source (incl. unknown literals): parse the text input of the target.
    if let Value::Text(s) = v {
        return match to {
            T::Text | T::Unknown => Ok(v.clone()),
            T::Varchar(_) | T::Char(_) | T::Name => match mode {
                CastMode::Explicit => Ok(Value::Text(fit_text_explicit(s, to))),
                CastMode::Assignment => Ok(Value::Text(fit_text_assign(s, to)?)),
            },
            _ => Value::from_text(to, s),
        };
    }
    // Anything → text: its output form — except bool, whose cast to text
    // spells the word (PostgreSQL's booltext: `true::text` is 'true', while
    // the output function prints 't').
    if to.is_text_like() {
        let s = match v {
            Value::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
            // text(inet): always with the mask length (network_show).
            Value::Inet(a) | Value::Cidr(a) => a.show_text(),
            _ => v.to_text_string(),
        };
        return Ok(Value::Text(match mode {
            CastMode::Explicit => fit_text_explicit(&s, to),
            CastMode::Assignment => fit_text_assign(&s, to)?,
        }));
    }
    let from = v.sql_type();
    Ok(match (v, to) {
        (
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_),
            T::Int2 | T::Int4 | T::Int8 | T::Oid | T::Reg(_),
        ) => {
            let i = v.as_i64().unwrap_or(0);
            match to {
                T::Int2 => Value::Int2(check_i16(i)?),
                T::Int4 => Value::Int4(check_i32(i)?),
                T::Oid | T::Reg(_) => Value::Oid(
                    u32::try_from(i)
                        .or_else(|_| i32::try_from(i).map(|x| x as u32))
                        .map_err(|_| {
                            PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "OID out of range")
                        })?,
                ),
                _ => Value::Int8(i),
            }
        }
        (Value::Oid(o), T::Int4) => Value::Int4(*o as i32),
        (Value::Oid(o), T::Int8) => Value::Int8(*o as i64),
        (Value::Oid(_), T::Oid | T::Reg(_)) => v.clone(),
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), T::Float8) => {
            Value::Float8(v.as_i64().unwrap_or(0) as f64)
        }
        (Value::Int2(_) | Value::Int4(_) | Value::Int8(_), T::Numeric(tm)) => {
            let n = Numeric::from_i64(v.as_i64().unwrap_or(0));
            Value::Numeric(match tm {
                Some((p, s)) => n.apply_typmod(p, s)?,
                None => n,
            })
        }
        (Value::Float8(f), T::Int2 | T::Int4 | T::Int8) => {
            let i = f64_to_int(*f, to)?;
            match to {
                T::Int2 => Value::Int2(i as i16),
                T::Int4 => Value::Int4(i as i32),
                _ => Value::Int8(i),
            }
        }
        (Value::Float8(_), T::Float8) => v.clone(),
        (Value::Float8(f), T::Numeric(tm)) => {
            let n = Numeric::from_f64(*f)?;
            Value::Numeric(match tm {
                Some((p, s)) => n.apply_typmod(p, s)?,
                None => n,
            })
        }
        (Value::Numeric(n), T::Int2 | T::Int4 | T::Int8) => {
            let i = n.to_i64_round().ok_or_else(|| int_out_of_range(to))?;
            match to {
                T::Int2 => Value::Int2(check_i16(i)?),
                T::Int4 => Value::Int4(check_i32(i)?),
                _ => Value::Int8(i),
            }
        }
        (Value::Numeric(n), T::Float8) => Value::Float8(n.to_f64()),
        (Value::Numeric(n), T::Numeric(tm)) => Value::Numeric(match tm {
            Some((p, s)) => n.apply_typmod(p, s)?,
            None => *n,
        }),
        (Value::Numeric(n), T::PgLsn) => {
            if n.signum() < 0 || n.scale() > 0 && n.rescale(0)?.ne(n) {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "pg_lsn out of range",
                ));
            }
            let m = n.rescale(0)?.mantissa();
            Value::PgLsn(u64::try_from(m).map_err(|_| {
                PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "pg_lsn out of range")
            })?)
        }
        (Value::Bool(b), T::Int4) => Value::Int4(*b as i32),
        (Value::Int4(i), T::Bool) => Value::Bool(*i != 0),
        (Value::Bool(_), T::Bool) => v.clone(),
        (Value::Timestamp(t), T::TimestampTz) | (Value::TimestampTz(t), T::TimestampTz) => {
            Value::TimestampTz(*t)
        }
        (Value::TimestampTz(t), T::Timestamp) | (Value::Timestamp(t), T::Timestamp) => {
            Value::Timestamp(*t)
        }
        (Value::PgLsn(_), T::PgLsn)
        | (Value::Xid8(_), T::Xid8)
        | (Value::Xid(_), T::Xid)
        | (Value::Void, T::Void) => v.clone(),
        // xid(xid8): the low 32 bits, as PostgreSQL's cast.
        (Value::Xid8(x), T::Xid) => Value::Xid(*x as u32),
        (Value::Snapshot(_), T::Snapshot) => v.clone(),
        (Value::Date(_), T::Date) | (Value::Interval(_), T::Interval) => v.clone(),
        (Value::Bytea(_), T::Bytea)
        | (Value::Json(_), T::Json)
        | (Value::Jsonb(_), T::Jsonb)
        | (Value::Uuid(_), T::Uuid)
        | (Value::Inet(_), T::Inet)
        | (Value::Cidr(_), T::Cidr) => v.clone(),
        // cidr → inet is binary-coercible; inet → cidr is cidr(inet),
        // which clears the host bits.
        (Value::Cidr(a), T::Inet) => Value::Inet(*a),
        (Value::Inet(a), T::Cidr) => Value::Cidr(a.network()),
        (Value::Enum(l), T::Enum(t)) if crate::enumtype::type_of_label(*l) == Some(t) => v.clone(),
        (Value::Json(s), T::Jsonb) => Value::Jsonb(Arc::new(json::parse_jsonb(s)?)),
        (Value::Jsonb(j), T::Json) => Value::Json(Arc::from(j.to_text())),
        (Value::Jsonb(j), T::Bool | T::Int2 | T::Int4 | T::Int8 | T::Float8 | T::Numeric(_)) => {
            jsonb_scalar_cast(j, to)?
        }
        (Value::Date(d), T::Timestamp) => {
            Value::Timestamp(datetime::date_to_timestamp_checked(*d)?)
        }
        (Value::Date(d), T::TimestampTz) => {
            Value::TimestampTz(datetime::date_to_timestamp_checked(*d)?)
        }
        (Value::Timestamp(t) | Value::TimestampTz(t), T::Date) => {
            Value::Date(datetime::timestamp_to_date(*t))
        }
        (Value::Array(a), T::Array(e)) => {
            if a.elem == e {
                v.clone()
            } else {
                let et = e.sql_type();
                let items = a
                    .items
                    .iter()
                    .map(|x| cast_with(x, et, mode))
                    .collect::<PgResult<Vec<_>>>()?;
                Value::Array(Arc::new(a.same_shape(e, items)))
            }
        }
        _ => return Err(cannot_cast(from, to)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn out(v: &Value) -> String {
        v.to_text_string()
    }

    fn parse(ty: SqlType, s: &str) -> Value {
        Value::from_text(ty, s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(ty: SqlType, s: &str) -> (String, &'static str) {
        let e = Value::from_text(ty, s).unwrap_err();
        (e.message.clone(), e.code)
    }

    #[test]
    fn float8_output_matches_postgres() {
        // Each pair checked against PostgreSQL 15 (`select x::float8`).
        for (s, want) in [
            ("1e15", "1e+15"),
            ("123456789012345", "123456789012345"),
            ("1e14", "100000000000000"),
            ("0.0001", "0.0001"),
            ("0.00001", "1e-05"),
            ("1.5e300", "1.5e+300"),
            ("-0", "-0"),
            ("inf", "Infinity"),
            ("-Infinity", "-Infinity"),
            ("nan", "NaN"),
            ("1e-310", "1e-310"),
            ("2.5e-5", "2.5e-05"),
            ("100", "100"),
            ("1.5e-7", "1.5e-07"),
            ("123456789.123", "123456789.123"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("0.1", "0.1"),
            ("-12.5", "-12.5"),
        ] {
            assert_eq!(out(&parse(SqlType::Float8, s)), want, "{s}");
        }
        assert_eq!(out(&Value::Float8(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(out(&Value::Float8(1.0 / 3.0)), "0.3333333333333333");
    }

    #[test]
    fn scalar_output() {
        assert_eq!(out(&Value::Bool(true)), "t");
        assert_eq!(out(&Value::Bool(false)), "f");
        assert_eq!(out(&Value::Int2(-32768)), "-32768");
        assert_eq!(out(&Value::Int4(i32::MIN)), "-2147483648");
        assert_eq!(out(&Value::Int8(i64::MIN)), "-9223372036854775808");
        assert_eq!(out(&Value::Oid(4_000_000_000)), "4000000000");
        assert_eq!(out(&parse(SqlType::NUMERIC, "1.50")), "1.50");
        assert_eq!(out(&Value::PgLsn(0x16B3748)), "0/16B3748");
        assert_eq!(out(&Value::PgLsn(u64::MAX)), "FFFFFFFF/FFFFFFFF");
        assert_eq!(out(&parse(SqlType::Snapshot, "10:20:12,15")), "10:20:12,15");
        assert_eq!(out(&parse(SqlType::Snapshot, "736:736:")), "736:736:");
        assert_eq!(out(&Value::Xid8(736)), "736");
        assert_eq!(
            out(&parse(SqlType::Timestamp, "2024-01-02 03:04:05.120")),
            "2024-01-02 03:04:05.12"
        );
        assert_eq!(
            out(&parse(SqlType::TimestampTz, "2024-01-02 03:04:05+02")),
            "2024-01-02 01:04:05+00"
        );
        assert_eq!(out(&Value::Null), "");
        assert_eq!(Value::Null.to_string(), "NULL");
    }

    #[test]
    fn text_input() {
        assert_eq!(parse(SqlType::Int4, " 12 "), Value::Int4(12));
        assert_eq!(parse(SqlType::Int2, "+5"), Value::Int2(5));
        assert_eq!(
            parse(SqlType::Int8, "-9223372036854775808"),
            Value::Int8(i64::MIN)
        );
        assert_eq!(parse(SqlType::Bool, "  t "), Value::Bool(true));
        assert_eq!(parse(SqlType::Bool, "of"), Value::Bool(false));
        assert_eq!(parse(SqlType::Bool, "YES"), Value::Bool(true));
        assert_eq!(parse(SqlType::PgLsn, "0/16B3748"), Value::PgLsn(0x16B3748));
        assert_eq!(
            parse(SqlType::PgLsn, "16/b374d848"),
            Value::PgLsn(0x16_B374_D848)
        );
        assert!(Value::from_text(SqlType::PgLsn, "+1/0").is_err());
        assert_eq!(parse(SqlType::Char(4), "ab"), Value::text("ab  "));
        assert_eq!(parse(SqlType::Char(2), "ab   "), Value::text("ab"));
        assert_eq!(
            parse(SqlType::Varchar(Some(3)), "abc  "),
            Value::text("abc")
        );
        assert_eq!(
            parse(SqlType::Numeric(Some((5, 2))), "1.005"),
            Value::Numeric(Numeric::parse("1.01").unwrap().unwrap())
        );
    }

    #[test]
    fn text_input_errors_match_postgres() {
        assert_eq!(
            err(SqlType::Int4, "abc"),
            (
                "invalid input syntax for type integer: \"abc\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::Int4, ""),
            (
                "invalid input syntax for type integer: \"\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::Int4, "99999999999"),
            (
                "value \"99999999999\" is out of range for type integer".into(),
                "22003"
            )
        );
        assert_eq!(
            err(SqlType::Int2, "40000"),
            (
                "value \"40000\" is out of range for type smallint".into(),
                "22003"
            )
        );
        assert_eq!(
            err(SqlType::Int8, "9223372036854775808"),
            (
                "value \"9223372036854775808\" is out of range for type bigint".into(),
                "22003"
            )
        );
        assert_eq!(
            err(SqlType::Bool, "x"),
            (
                "invalid input syntax for type boolean: \"x\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::NUMERIC, "1.2.3"),
            (
                "invalid input syntax for type numeric: \"1.2.3\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::Float8, "abc"),
            (
                "invalid input syntax for type double precision: \"abc\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::Float8, "1e400"),
            (
                "\"1e400\" is out of range for type double precision".into(),
                "22003"
            )
        );
        assert_eq!(
            err(SqlType::PgLsn, "0/XYZ"),
            (
                "invalid input syntax for type pg_lsn: \"0/XYZ\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err(SqlType::Timestamp, "2023-02-29"),
            (
                "date/time field value out of range: \"2023-02-29\"".into(),
                "22008"
            )
        );
        assert_eq!(
            err(SqlType::Varchar(Some(3)), "abcd"),
            (
                "value too long for type character varying(3)".into(),
                "22001"
            )
        );
        assert_eq!(
            err(SqlType::Char(2), "abc"),
            ("value too long for type character(2)".into(), "22001")
        );
    }

    fn bin(v: &Value) -> Vec<u8> {
        let mut b = BytesMut::new();
        v.write_binary(&mut b);
        b.to_vec()
    }

    #[test]
    fn bool_casts_to_text_as_a_word() {
        // PostgreSQL 15: `true::text` = 'true', `false::varchar` = 'false'
        // (booltext), though bool's output function prints t / f.
        assert_eq!(
            cast(&Value::Bool(true), SqlType::Text).unwrap(),
            Value::text("true")
        );
        assert_eq!(
            cast(&Value::Bool(false), SqlType::Varchar(None)).unwrap(),
            Value::text("false")
        );
        assert_eq!(Value::Bool(true).to_text_string(), "t");
    }

    #[test]
    fn binary_formats_match_postgres() {
        assert_eq!(bin(&Value::Int4(1)), [0, 0, 0, 1]);
        assert_eq!(bin(&Value::Int2(-2)), [0xff, 0xfe]);
        assert_eq!(bin(&Value::Bool(true)), [1]);
        assert_eq!(bin(&Value::Timestamp(1)), [0, 0, 0, 0, 0, 0, 0, 1]);
        // numeric_send() output of PostgreSQL 15.
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        for (s, want) in [
            ("0", "0000000000000000"),
            ("1.50", "000200000000000200011388"),
            ("-0.0001", "0001ffff400000040001"),
            ("100000000", "00010002000000000001"),
            ("12345.6789", "0003000100000004000109291a85"),
            ("0.00001", "0001fffe0000000503e8"),
            ("10000.0000", "00010001000000040001"),
        ] {
            let v = parse(SqlType::NUMERIC, s);
            assert_eq!(bin(&v), hex(want), "{s}");
            assert_eq!(
                out(&Value::from_binary(SqlType::NUMERIC, &hex(want)).unwrap()),
                s
            );
        }
        let e = Value::from_binary(SqlType::Int4, &[0, 1]).unwrap_err();
        assert_eq!(e.code, "22P03");
        assert_eq!(
            Value::from_binary(SqlType::Text, &[0xff]).unwrap_err().code,
            "22021"
        );
    }

    fn arb_typed() -> impl Strategy<Value = (SqlType, Value)> {
        prop_oneof![
            any::<bool>().prop_map(|b| (SqlType::Bool, Value::Bool(b))),
            any::<i16>().prop_map(|v| (SqlType::Int2, Value::Int2(v))),
            any::<i32>().prop_map(|v| (SqlType::Int4, Value::Int4(v))),
            any::<i64>().prop_map(|v| (SqlType::Int8, Value::Int8(v))),
            any::<f64>()
                .prop_filter("nan", |f| !f.is_nan())
                .prop_map(|v| (SqlType::Float8, Value::Float8(v))),
            (any::<i128>(), 0u16..=38).prop_map(|(m, s)| (
                SqlType::NUMERIC,
                Value::Numeric(Numeric::new(m, s).unwrap())
            )),
            "[^\\x00]{0,20}".prop_map(|s| (SqlType::Text, Value::text(&s))),
            (-211_813_488_000_000_000i64..9_223_371_331_200_000_000)
                .prop_map(|t| (SqlType::Timestamp, Value::Timestamp(t))),
            (-211_813_488_000_000_000i64..9_223_371_331_200_000_000)
                .prop_map(|t| (SqlType::TimestampTz, Value::TimestampTz(t))),
            any::<u64>().prop_map(|v| (SqlType::PgLsn, Value::PgLsn(v))),
            any::<u32>().prop_map(|v| (SqlType::Oid, Value::Oid(v))),
            any::<u64>().prop_map(|v| (SqlType::Xid8, Value::Xid8(v))),
            any::<u32>().prop_map(|v| (SqlType::Xid, Value::Xid(v))),
            (datetime::MIN_DATE_DAYS..datetime::END_DATE_DAYS)
                .prop_map(|d| (SqlType::Date, Value::Date(d))),
            (any::<i32>(), any::<i32>(), any::<i64>())
                .prop_map(|(m, d, u)| (SqlType::Interval, Value::Interval(Interval::new(m, d, u)))),
            proptest::collection::vec(proptest::option::of(any::<i32>()), 0..5).prop_map(|v| (
                SqlType::Array(crate::sqltype::ArrayElem::Int4),
                array::array_value(
                    crate::sqltype::ArrayElem::Int4,
                    v.into_iter()
                        .map(|x| x.map_or(Value::Null, Value::Int4))
                        .collect()
                )
            )),
            proptest::collection::vec(proptest::option::of("[^\\x00]{0,6}"), 0..5).prop_map(|v| (
                SqlType::Array(crate::sqltype::ArrayElem::Text),
                array::array_value(
                    crate::sqltype::ArrayElem::Text,
                    v.into_iter()
                        .map(|x| x.map_or(Value::Null, |s| Value::text(&s)))
                        .collect()
                )
            )),
        ]
    }

    proptest! {
        #[test]
        fn binary_round_trip((ty, v) in arb_typed()) {
            let back = Value::from_binary(ty, &bin(&v)).unwrap();
            prop_assert_eq!(&back, &v);
            if let Value::Numeric(n) = &back { prop_assert_eq!(n.scale(), match &v { Value::Numeric(m) => m.scale(), _ => 0 }); }
        }

        #[test]
        fn text_round_trip((ty, v) in arb_typed()) {
            let s = v.to_text_string();
            let back = Value::from_text(ty, &s).unwrap();
            prop_assert_eq!(back.to_text_string(), s);
            prop_assert_eq!(cmp_sql(&back, &v), Some(Ordering::Equal));
        }

        #[test]
        fn binary_input_never_panics(data in proptest::collection::vec(any::<u8>(), 0..40), i in 0usize..17) {
            let tys = [SqlType::Date, SqlType::Interval, SqlType::Array(crate::sqltype::ArrayElem::Text), SqlType::Bool, SqlType::Int2, SqlType::Int4, SqlType::Int8, SqlType::Float8, SqlType::NUMERIC,
                SqlType::Text, SqlType::Timestamp, SqlType::PgLsn, SqlType::Oid, SqlType::Snapshot, SqlType::Char(3), SqlType::Xid8, SqlType::Xid];
            let _ = Value::from_binary(tys[i], &data);
        }

        #[test]
        fn text_input_never_panics(s in ".{0,30}", i in 0usize..13) {
            let tys = [SqlType::Date, SqlType::Interval, SqlType::Array(crate::sqltype::ArrayElem::Int4), SqlType::Bool, SqlType::Int2, SqlType::Int4, SqlType::Int8, SqlType::Float8, SqlType::NUMERIC,
                SqlType::Timestamp, SqlType::TimestampTz, SqlType::PgLsn, SqlType::Snapshot];
            let _ = Value::from_text(tys[i], &s);
        }

        #[test]
        fn int_comparisons_across_widths(a in any::<i32>(), b in any::<i64>()) {
            prop_assert_eq!(cmp_sql(&Value::Int4(a), &Value::Int8(b)), Some((a as i64).cmp(&b)));
            let n = Value::Numeric(Numeric::from_i64(b));
            prop_assert_eq!(cmp_sql(&Value::Int4(a), &n), Some((a as i64).cmp(&b)));
        }
    }

    #[test]
    fn dates_match_postgres() {
        // Each from PostgreSQL 15 (`select '…'::date`).
        for (s, want) in [
            ("2024-02-29", "2024-02-29"),
            ("infinity", "infinity"),
            ("-infinity", "-infinity"),
            ("0001-01-01 BC", "0001-01-01 BC"),
            ("2024-01-01 13:00", "2024-01-01"),
            ("20240105", "2024-01-05"),
            ("5874897-12-31", "5874897-12-31"),
            ("4714-11-24 BC", "4714-11-24 BC"),
        ] {
            assert_eq!(out(&parse(SqlType::Date, s)), want, "{s}");
        }
        assert_eq!(
            err(SqlType::Date, "2023-02-30"),
            (
                "date/time field value out of range: \"2023-02-30\"".into(),
                "22008"
            )
        );
        assert_eq!(
            err(SqlType::Date, "x"),
            ("invalid input syntax for type date: \"x\"".into(), "22007")
        );
        assert_eq!(
            err(SqlType::Date, "5874898-01-01"),
            ("date out of range: \"5874898-01-01\"".into(), "22008")
        );
        assert_eq!(bin(&parse(SqlType::Date, "2000-01-02")), [0, 0, 0, 1]);
        assert_eq!(
            cast(&parse(SqlType::Date, "2024-01-02"), SqlType::TimestampTz)
                .unwrap()
                .to_string(),
            "2024-01-02 00:00:00+00"
        );
        assert_eq!(
            cast(
                &parse(SqlType::Timestamp, "2024-01-01 12:00"),
                SqlType::Date
            )
            .unwrap()
            .to_string(),
            "2024-01-01"
        );
        assert_eq!(
            cmp_sql(
                &parse(SqlType::Date, "2024-01-15"),
                &parse(SqlType::Timestamp, "2024-01-15 00:00")
            ),
            Some(Ordering::Equal)
        );
        // interval_send: time (i64), day (i32), month (i32).
        assert_eq!(
            bin(&parse(SqlType::Interval, "1 mon 2 days 00:00:00.000003")),
            [0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1]
        );
    }

    #[test]
    fn casts_follow_postgres() {
        let c = |v: Value, t: SqlType| cast(&v, t).unwrap();
        assert_eq!(c(Value::Float8(2.5), SqlType::Int4), Value::Int4(2));
        assert_eq!(c(Value::Float8(3.5), SqlType::Int4), Value::Int4(4));
        assert_eq!(
            c(parse(SqlType::NUMERIC, "-2.5"), SqlType::Int4),
            Value::Int4(-3)
        );
        assert_eq!(
            c(Value::text("abcdef"), SqlType::Varchar(Some(3))),
            Value::text("abc")
        );
        assert_eq!(c(Value::text("ab"), SqlType::Char(4)), Value::text("ab  "));
        assert_eq!(c(Value::Int4(5), SqlType::Text), Value::text("5"));
        assert_eq!(c(Value::Int8(5), SqlType::Int2), Value::Int2(5));
        assert_eq!(c(Value::Null, SqlType::Int2), Value::Null);
        assert_eq!(
            cast(&Value::Int8(1 << 40), SqlType::Int4)
                .unwrap_err()
                .message,
            "integer out of range"
        );
        assert_eq!(
            cast(&Value::Float8(1e10), SqlType::Int4)
                .unwrap_err()
                .message,
            "integer out of range"
        );
        assert_eq!(
            cast(&Value::Float8(f64::NAN), SqlType::Int8)
                .unwrap_err()
                .message,
            "bigint out of range"
        );
        assert_eq!(
            cast_assign(&Value::text("abcdef"), SqlType::Varchar(Some(3)))
                .unwrap_err()
                .message,
            "value too long for type character varying(3)"
        );
        assert_eq!(
            cast(&Value::Bool(true), SqlType::Timestamp)
                .unwrap_err()
                .code,
            "42804"
        );
        assert_eq!(c(Value::Float8(0.1), SqlType::NUMERIC).to_string(), "0.1");
    }

    #[test]
    fn comparisons() {
        assert_eq!(cmp_sql(&Value::Int4(1), &Value::Null), None);
        assert_eq!(
            cmp_sql(&Value::Int2(1), &Value::Float8(1.5)),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp_sql(&Value::Float8(f64::NAN), &Value::Float8(f64::INFINITY)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            cmp_sql(&Value::Float8(-0.0), &Value::Float8(0.0)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            cmp_sql(&Value::text("a"), &Value::text("b")),
            Some(Ordering::Less)
        );
        assert_eq!(cmp_sql(&Value::text("a"), &Value::Int4(1)), None);
        assert_eq!(
            cmp_for_sort(&Value::Null, &Value::Int4(1)),
            Ordering::Greater
        );
        assert_eq!(std::mem::size_of::<Value>(), 32);
    }

    #[test]
    fn json_jsonb_uuid_io() {
        let jb = Value::from_text(SqlType::Jsonb, r#"{"b": 1, "a": [1.50, "x"]}"#).unwrap();
        assert_eq!(jb.to_text_string(), r#"{"a": [1.50, "x"], "b": 1}"#);
        let mut bin = BytesMut::new();
        jb.write_binary(&mut bin);
        assert_eq!(bin[0], 1, "jsonb binary starts with its version byte");
        assert_eq!(Value::from_binary(SqlType::Jsonb, &bin).unwrap(), jb);
        assert_eq!(
            Value::from_binary(SqlType::Jsonb, b"\x02{}")
                .unwrap_err()
                .code,
            sqlstate::INVALID_BINARY_REPRESENTATION
        );
        let j = Value::from_text(SqlType::Json, r#"{"b": 1,  "b": 2}"#).unwrap();
        assert_eq!(j.to_text_string(), r#"{"b": 1,  "b": 2}"#);
        let mut bin = BytesMut::new();
        j.write_binary(&mut bin);
        assert_eq!(Value::from_binary(SqlType::Json, &bin).unwrap(), j);
        let u = Value::from_text(SqlType::Uuid, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11").unwrap();
        assert_eq!(u.to_text_string(), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        let mut bin = BytesMut::new();
        u.write_binary(&mut bin);
        assert_eq!(bin.len(), 16);
        assert_eq!(Value::from_binary(SqlType::Uuid, &bin).unwrap(), u);
        assert!(Value::from_binary(SqlType::Uuid, &bin[..15]).is_err());
        // jsonb scalars cast to SQL types as PostgreSQL 15 does.
        let n = Value::from_text(SqlType::Jsonb, "2.5").unwrap();
        assert_eq!(cast(&n, SqlType::Int4).unwrap(), Value::Int4(3));
        let s = Value::from_text(SqlType::Jsonb, "\"x\"").unwrap();
        assert_eq!(
            cast(&s, SqlType::Int4).unwrap_err().message,
            "cannot cast jsonb string to type integer"
        );
    }
}
