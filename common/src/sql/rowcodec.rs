//! Heap tuple data: the encoding of a row's column values (the part of a heap
//! tuple after its header). OWNER: sqlv.

use crate::error::PgResult;
use crate::sql::types::SqlType;
use crate::sql::value::Value;

/// Appends the encoding of a row. Values must already have their column's
/// type (the executor casts with [`crate::sql::value::cast_assign`] first).
pub fn encode_row(values: &[Value], out: &mut Vec<u8>) {
    let _ = (values, out);
    todo!("sqlv")
}

/// Decodes a whole row for columns of `types`. Rows shorter than `types`
/// (columns added later) yield NULL for the missing columns. Corrupted data
/// is XX001, never a panic.
pub fn decode_row(data: &[u8], types: &[SqlType]) -> PgResult<Vec<Value>> {
    let mut out = Vec::with_capacity(types.len());
    decode_row_into(data, types, &mut out)?;
    Ok(out)
}

/// As [`decode_row`], reusing `out` (cleared first).
pub fn decode_row_into(data: &[u8], types: &[SqlType], out: &mut Vec<Value>) -> PgResult<()> {
    let _ = (data, types, out);
    todo!("sqlv")
}

/// Decodes only column `idx` (a WHERE on one column need not decode the rest).
pub fn decode_column(data: &[u8], types: &[SqlType], idx: usize) -> PgResult<Value> {
    let _ = (data, types, idx);
    todo!("sqlv")
}
