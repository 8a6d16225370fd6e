//! Index keys: order-preserving byte strings, so an ordered map of byte keys
//! (the in-memory indexes) orders and matches rows as SQL would.
//!
//! Each key column is a tag byte then a body:
//!
//! ```text
//! NULL          0x02                  (sorts after every value: NULLS LAST)
//! value         0x01 body
//!   bool        0x00 / 0x01
//!   int2/4/8,   i64 big-endian with the sign bit flipped (all widths alike,
//!   oid         so an int4 column looked up with an int8 value matches)
//!   float8      IEEE bits, flipped so memcmp orders them (-0 → 0, one NaN,
//!               NaN last as PostgreSQL sorts it)
//!   numeric     class 0x00 neg / 0x01 zero / 0x02 pos, then for nonzero the
//!               decimal exponent (i32, sign-flipped BE) and the digits
//!               ('0'..'9') ended by 0x00; negatives invert those bytes
//!   timestamp   i64 sign-flipped BE;  pg_lsn, xid8: u64 BE
//!   text,       bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x00
//!   bytea
//!   date        the day number as i64, sign-flipped BE (a column has one type,
//!               so date keys never meet timestamp keys)
//!   interval    the span (months×30 days + days, in µs) as i128, sign-flipped BE
//!   array       each element encoded as a key column, 0x00, the lower bound
//!   inet, cidr  family, the network bits as 2-bit symbols ended by 00,
//!               the whole address (`pgtypes::inet::Inet::key_bytes`:
//!               network_cmp order)
//! ```
//!
//! Invariant (property-tested): for two keys of the same column types,
//! `memcmp(encode(a), encode(b))` equals the SQL ordering of `a` and `b`
//! (byte-wise text ordering, i.e. the C collation), and equal values —
//! `1.0` and `1.00`, `0` and `-0` — encode to identical bytes. The encoding
//! is also what GROUP BY / DISTINCT hash on.

use pgtypes::value::Value;

/// Tag of a non-NULL key column.
const TAG_VALUE: u8 = 0x01;
/// Tag of a NULL key column.
const TAG_NULL: u8 = 0x02;

/// Appends the order-preserving encoding of a key (one or more columns):
/// `memcmp` order of the bytes equals SQL order of same-typed keys, NULLs
/// last. int2/int4/int8 all encode as int8, so keys of different integer
/// widths compare (and match) correctly.
pub fn encode_key(values: &[Value], out: &mut Vec<u8>) {
    for v in values {
        encode_key_value(v, out);
    }
}

/// The encoding of a key as a new vector.
pub fn key_bytes(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 9);
    encode_key(values, &mut out);
    out
}

fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
}

fn put_text(out: &mut Vec<u8>, b: &[u8]) {
    for &c in b {
        if c == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(c);
        }
    }
    out.extend_from_slice(&[0x00, 0x00]);
}

/// A float8 as 8 order-preserving bytes (-0 = 0, one NaN, greatest).
fn put_f64(out: &mut Vec<u8>, f: f64) {
    let f = if f == 0.0 {
        0.0
    } else if f.is_nan() {
        f64::NAN
    } else {
        f
    };
    let bits = f.to_bits();
    let k = if bits >> 63 == 1 {
        !bits
    } else {
        bits ^ (1 << 63)
    };
    out.extend_from_slice(&k.to_be_bytes());
}

/// Appends one key column.
pub fn encode_key_value(v: &Value, out: &mut Vec<u8>) {
    if v.is_null() {
        out.push(TAG_NULL);
        return;
    }
    out.push(TAG_VALUE);
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(*b as u8),
        Value::Bytea(b) => put_text(out, b),
        Value::Int2(x) => put_i64(out, *x as i64),
        Value::Int4(x) => put_i64(out, *x as i64),
        Value::Int8(x) => put_i64(out, *x),
        Value::Oid(x) | Value::Xid(x) => put_i64(out, *x as i64),
        Value::Timestamp(x) | Value::TimestampTz(x) => put_i64(out, *x),
        Value::PgLsn(x) | Value::Xid8(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::Float8(f) => put_f64(out, *f),
        // An enum label by its sort position (fixed once the label exists).
        Value::Enum(l) => put_f64(out, pgtypes::enumtype::sort_of(*l).unwrap_or(f64::from(*l))),
        Value::Numeric(n) => {
            let n = n.normalized();
            let m = n.mantissa();
            if m == 0 {
                out.push(0x01);
                return;
            }
            out.push(if m < 0 { 0x00 } else { 0x02 });
            let start = out.len();
            let mut digits = [0u8; 40];
            let mut u = m.unsigned_abs();
            let mut nd = 0;
            while u != 0 {
                digits[nd] = b'0' + (u % 10) as u8;
                u /= 10;
                nd += 1;
            }
            // value = 0.d1d2… × 10^exp, exp = number of integer digits
            let exp = nd as i32 - n.scale() as i32;
            out.extend_from_slice(&((exp as u32) ^ (1 << 31)).to_be_bytes());
            for i in (0..nd).rev() {
                out.push(digits[i]);
            }
            out.push(0x00);
            if m < 0 {
                for b in &mut out[start..] {
                    *b = !*b;
                }
            }
        }
        Value::Text(s) => put_text(out, s.as_bytes()),
        Value::Snapshot(_) | Value::Void => put_text(out, v.to_text_string().as_bytes()),
        Value::Date(d) => put_i64(out, *d as i64),
        Value::Interval(iv) => {
            // The span, so '1 mon' and '30 days' are one key (as they are equal).
            out.extend_from_slice(&((iv.span() as u128) ^ (1 << 127)).to_be_bytes());
        }
        Value::Array(a) => {
            // Each element with its own tag, then 0x00: a shorter array that
            // is a prefix of a longer one sorts first (0x00 < both tags).
            // Then the shape, in cmp_arrays' order: the number of
            // dimensions, each one's length, each one's lower bound.
            for item in &a.items {
                encode_key_value(item, out);
            }
            out.push(0x00);
            let dims = a.dims();
            put_i64(out, dims.len() as i64);
            for d in &dims {
                put_i64(out, d.len as i64);
            }
            for d in &dims {
                put_i64(out, d.lower as i64);
            }
        }
        Value::Json(s) => put_text(out, s.as_bytes()),
        Value::Uuid(u) => out.extend_from_slice(u),
        // inet and cidr alike (an inet column may be probed with a cidr).
        Value::Inet(a) | Value::Cidr(a) => a.key_bytes(out),
        Value::Jsonb(j) => {
            out.push(pgtypes::json::top_class(j));
            put_jsonb(out, j);
        }
    }
}

/// One jsonb value below the top: its type rank, then for a container its
/// element count (compared before any element, as compareJsonbContainers
/// does), then the members; each part is self-delimiting.
fn put_jsonb(out: &mut Vec<u8>, j: &pgtypes::json::Jsonb) {
    use pgtypes::json::Jsonb;
    out.push(j.type_rank());
    match j {
        Jsonb::Null => {}
        Jsonb::Bool(b) => out.push(*b as u8),
        Jsonb::String(s) => put_text(out, s.as_bytes()),
        Jsonb::Number(n) => {
            let (sign, digits, exp) = pgtypes::json::number_digits(n);
            if sign == 0 {
                out.push(0x01);
                return;
            }
            out.push(if sign < 0 { 0x00 } else { 0x02 });
            let start = out.len();
            let exp = exp.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            out.extend_from_slice(&((exp as u32) ^ (1 << 31)).to_be_bytes());
            out.extend_from_slice(&digits);
            out.push(0x00);
            if sign < 0 {
                for b in &mut out[start..] {
                    *b = !*b;
                }
            }
        }
        Jsonb::Array(items) => {
            out.extend_from_slice(&(items.len() as u32).to_be_bytes());
            for i in items {
                put_jsonb(out, i);
            }
        }
        Jsonb::Object(m) => {
            out.extend_from_slice(&(m.len() as u32).to_be_bytes());
            for (k, v) in m {
                put_text(out, k.as_bytes());
                put_jsonb(out, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgtypes::numeric::Numeric;
    use pgtypes::value::cmp_for_sort;
    use proptest::prelude::*;
    use std::sync::Arc;

    fn check_order(a: &Value, b: &Value) -> Result<(), TestCaseError> {
        let ka = key_bytes(std::slice::from_ref(a));
        let kb = key_bytes(std::slice::from_ref(b));
        prop_assert_eq!(ka.cmp(&kb), cmp_for_sort(a, b), "{:?} vs {:?}", a, b);
        Ok(())
    }

    fn arb_numeric() -> impl Strategy<Value = Value> {
        (any::<i64>(), 0u16..12)
            .prop_map(|(m, s)| Value::Numeric(Numeric::new(m as i128, s).unwrap()))
    }

    proptest! {
        #[test]
        fn ints(a in any::<i64>(), b in any::<i32>()) {
            check_order(&Value::Int8(a), &Value::Int4(b))?;
            check_order(&Value::Int4(b), &Value::Int8(a))?;
        }
        #[test]
        fn floats(a in any::<f64>(), b in any::<f64>()) {
            check_order(&Value::Float8(a), &Value::Float8(b))?;
        }
        #[test]
        fn numerics(a in arb_numeric(), b in arb_numeric()) {
            check_order(&a, &b)?;
        }
        #[test]
        fn texts(a in ".{0,8}", b in ".{0,8}") {
            check_order(&Value::Text(Arc::from(a.as_str())), &Value::Text(Arc::from(b.as_str())))?;
        }
        #[test]
        fn composite(a in any::<i16>(), s in "[a\\x00b]{0,3}", b in any::<i16>(), t in "[a\\x00b]{0,3}") {
            let ka = key_bytes(&[Value::Int2(a), Value::text(&s)]);
            let kb = key_bytes(&[Value::Int2(b), Value::text(&t)]);
            prop_assert_eq!(ka.cmp(&kb), (a, s.as_bytes()).cmp(&(b, t.as_bytes())));
        }
        #[test]
        fn dates(a in any::<i32>(), b in any::<i64>()) {
            check_order(&Value::Date(a), &Value::Date(b as i32))?;
        }
        #[test]
        fn intervals(a in (any::<i32>(), any::<i32>(), any::<i64>()), b in (any::<i32>(), any::<i32>(), any::<i64>())) {
            use pgtypes::interval::Interval;
            check_order(&Value::Interval(Interval::new(a.0, a.1, a.2)), &Value::Interval(Interval::new(b.0, b.1, b.2)))?;
            check_order(&Value::Interval(Interval::new(1, 0, 0)), &Value::Interval(Interval::new(0, 30, 0)))?;
        }
        #[test]
        fn arrays(a in proptest::collection::vec(proptest::option::of(-3i32..3), 0..4),
                  b in proptest::collection::vec(proptest::option::of(-3i32..3), 0..4)) {
            use pgtypes::sqltype::ArrayElem;
            use pgtypes::array::{ArrayValue, Dim};
            let items = |v: &Vec<Option<i32>>| -> Vec<Value> {
                v.iter().map(|x| x.map_or(Value::Null, Value::Int4)).collect()
            };
            let mk = |v: &Vec<Option<i32>>| pgtypes::array::array_value(ArrayElem::Int4, items(v));
            check_order(&mk(&a), &mk(&b))?;
            // The same elements in two dimensions (rows of two) and with
            // another lower bound: ordered by shape after the elements.
            let shaped = |v: &Vec<Option<i32>>, lower: i32| -> Value {
                let dims: Vec<Dim> = if v.len() % 2 == 0 && !v.is_empty() {
                    vec![Dim { len: v.len() as i32 / 2, lower }, Dim { len: 2, lower: 1 }]
                } else {
                    vec![Dim { len: v.len() as i32, lower }]
                };
                Value::Array(Arc::new(ArrayValue::with_dims(ArrayElem::Int4, &dims, items(v))))
            };
            check_order(&shaped(&a, 0), &mk(&b))?;
            check_order(&mk(&a), &shaped(&b, 1))?;
            check_order(&shaped(&a, 1), &shaped(&b, 0))?;
        }
        #[test]
        fn inets(a in (any::<bool>(), any::<[u8; 16]>(), 0u8..=128, any::<bool>()),
                 b in (any::<bool>(), any::<[u8; 16]>(), 0u8..=128, any::<bool>())) {
            // Addresses from few bit patterns, so shared prefixes are common;
            // inet against cidr too (an inet column probed with a cidr).
            let mk = |(v6, mut addr, bits, cidr): (bool, [u8; 16], u8, bool)| {
                for x in addr.iter_mut() {
                    *x &= 0x11;
                }
                if !v6 {
                    addr[4..].fill(0);
                }
                let a = pgtypes::inet::Inet { v6, bits: if v6 { bits } else { bits % 33 }, addr };
                if cidr { Value::Cidr(a.network()) } else { Value::Inet(a) }
            };
            check_order(&mk(a), &mk(b))?;
        }
        #[test]
        fn nulls_last(a in any::<i64>()) {
            check_order(&Value::Int8(a), &Value::Null)?;
        }
    }

    #[test]
    fn equal_values_equal_bytes() {
        let n1 = Value::Numeric(Numeric::parse("1.0").unwrap().unwrap());
        let n2 = Value::Numeric(Numeric::parse("1.000").unwrap().unwrap());
        assert_eq!(key_bytes(&[n1]), key_bytes(&[n2]));
        assert_eq!(
            key_bytes(&[Value::Float8(0.0)]),
            key_bytes(&[Value::Float8(-0.0)])
        );
        assert_eq!(key_bytes(&[Value::Int4(7)]), key_bytes(&[Value::Int8(7)]));
    }

    #[test]
    fn jsonb_keys_follow_jsonb_order() {
        let texts = [
            "[]",
            "null",
            "\"\"",
            "\"a\"",
            "\"a\\u0000b\"",
            "\"ab\"",
            "\"b\"",
            "-12.5",
            "-1",
            "-0.5",
            "0",
            "0.000",
            "0.01",
            "0.1",
            "1",
            "1.0",
            "10",
            "1e3",
            "false",
            "true",
            "[null]",
            "[\"x\"]",
            "[-1]",
            "[1]",
            "[true]",
            "[[]]",
            "[{}]",
            "[1, 2]",
            "[2, 1]",
            "{}",
            "{\"a\": null}",
            "{\"a\": 1}",
            "{\"b\": 0}",
            "{\"aa\": 0}",
            "{\"a\": 1, \"b\": 1}",
        ];
        let vals: Vec<Value> = texts
            .iter()
            .filter_map(|t| Value::from_text(pgtypes::sqltype::SqlType::Jsonb, t).ok())
            .collect();
        for a in &vals {
            for b in &vals {
                let ka = key_bytes(std::slice::from_ref(a));
                let kb = key_bytes(std::slice::from_ref(b));
                assert_eq!(ka.cmp(&kb), cmp_for_sort(a, b), "{a} vs {b}");
            }
        }
    }
}
