//! The session loop's view of value I/O: Bind parameters in, DataRow
//! values out, in text (0) or binary (1) format. The conversions themselves
//! belong to the SQL value module (`Value::from_text`, `from_binary`,
//! `write_text`, `write_binary`); this file only picks one by format code
//! and checks the format code.

use bytes::BytesMut;

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;
use protocol::messages::invalid_utf8_error;

/// Checks a format code from Bind.
pub(crate) fn check_format(code: i16) -> PgResult<()> {
    match code {
        0 | 1 => Ok(()),
        _ => Err(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            format!("unsupported format code: {code}"),
        )),
    }
}

/// Decodes Bind parameter `index` (0-based) of type `ty`.
pub(crate) fn decode_param(
    ty: SqlType,
    data: Option<&[u8]>,
    format: i16,
    index: usize,
) -> PgResult<Value> {
    let Some(data) = data else {
        return Ok(Value::Null);
    };
    if format == 1 {
        return Value::from_binary(ty, data).map_err(|e| {
            if e.code == sqlstate::INVALID_BINARY_REPRESENTATION {
                PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    format!(
                        "incorrect binary data format in bind parameter {}",
                        index + 1
                    ),
                )
            } else {
                e
            }
        });
    }
    let s = std::str::from_utf8(data).map_err(|e| invalid_utf8_error(data, &e))?;
    Value::from_text(ty, s)
}

/// Appends `v` in the given format (NULL is handled by the caller).
#[inline]
pub(crate) fn write_value(out: &mut BytesMut, v: &Value, binary: bool) {
    if binary {
        v.write_binary(out)
    } else {
        v.write_text(out)
    }
}
