//! Index keys: order-preserving bytes. OWNER: sqlv.

use crate::sql::value::Value;

/// Appends the order-preserving encoding of a key (one or more columns):
/// `memcmp` order of the bytes equals SQL order of same-typed keys, NULLs
/// last. int2/int4/int8 all encode as int8, so keys of different integer
/// widths compare (and match) correctly.
pub fn encode_key(values: &[Value], out: &mut Vec<u8>) {
    for v in values {
        encode_key_value(v, out);
    }
}

/// Appends one key column.
pub fn encode_key_value(v: &Value, out: &mut Vec<u8>) {
    let _ = (v, out);
    todo!("sqlv")
}
