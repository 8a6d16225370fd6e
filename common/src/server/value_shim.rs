//! TEMPORARY: value text/binary I/O until the SQL value module's
//! `Value::from_text` / `from_binary` / `write_text` / `write_binary` land
//! on main. Inherent methods win over these trait methods, so this file is
//! simply deleted at that merge.

use bytes::{BufMut, BytesMut};
use std::fmt::Write;

use crate::error::{sqlstate, PgError, PgResult};
use crate::sql::types::SqlType;
use crate::sql::value::Value;

pub(crate) trait ValueIo: Sized {
    fn from_text(ty: SqlType, s: &str) -> PgResult<Self>;
    fn from_binary(ty: SqlType, b: &[u8]) -> PgResult<Self>;
    fn write_text(&self, out: &mut BytesMut);
    fn write_binary(&self, out: &mut BytesMut);
}

fn bad(ty: SqlType, s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {ty:?}: \"{s}\""),
    )
}

fn bin() -> PgError {
    PgError::new(
        sqlstate::INVALID_BINARY_REPRESENTATION,
        "incorrect binary data format",
    )
}

impl ValueIo for Value {
    fn from_text(ty: SqlType, s: &str) -> PgResult<Value> {
        let t = s.trim();
        Ok(match ty {
            SqlType::Bool => Value::Bool(crate::config::parse_bool(t).ok_or_else(|| bad(ty, s))?),
            SqlType::Int2 => Value::Int2(t.parse().map_err(|_| bad(ty, s))?),
            SqlType::Int4 => Value::Int4(t.parse().map_err(|_| bad(ty, s))?),
            SqlType::Int8 => Value::Int8(t.parse().map_err(|_| bad(ty, s))?),
            SqlType::Float8 => Value::Float8(t.parse().map_err(|_| bad(ty, s))?),
            SqlType::Numeric => Value::Numeric(t.to_string()),
            _ => Value::Text(s.to_string()),
        })
    }
    fn from_binary(ty: SqlType, b: &[u8]) -> PgResult<Value> {
        Ok(match ty {
            SqlType::Bool => Value::Bool(*b.first().ok_or_else(bin)? != 0),
            SqlType::Int2 => Value::Int2(i16::from_be_bytes(b.try_into().map_err(|_| bin())?)),
            SqlType::Int4 => Value::Int4(i32::from_be_bytes(b.try_into().map_err(|_| bin())?)),
            SqlType::Int8 => Value::Int8(i64::from_be_bytes(b.try_into().map_err(|_| bin())?)),
            SqlType::Float8 => Value::Float8(f64::from_be_bytes(b.try_into().map_err(|_| bin())?)),
            _ => Value::Text(String::from_utf8(b.to_vec()).map_err(|_| bin())?),
        })
    }
    fn write_text(&self, out: &mut BytesMut) {
        let _ = match self {
            Value::Null | Value::Void => Ok(()),
            Value::Bool(b) => out.write_str(if *b { "t" } else { "f" }),
            Value::Int2(v) => write!(out, "{v}"),
            Value::Int4(v) => write!(out, "{v}"),
            Value::Int8(v) => write!(out, "{v}"),
            Value::Float8(v) => write!(out, "{v}"),
            Value::Numeric(v) | Value::Text(v) => out.write_str(v),
            Value::Timestamp(v) | Value::TimestampTz(v) => write!(out, "{v}"),
            Value::PgLsn(l) => write!(out, "{:X}/{:X}", l >> 32, l & 0xffff_ffff),
            Value::Snapshot { xmin, xmax, .. } => write!(out, "{xmin}:{xmax}:"),
        };
    }
    fn write_binary(&self, out: &mut BytesMut) {
        match self {
            Value::Null | Value::Void => {}
            Value::Bool(b) => out.put_u8(*b as u8),
            Value::Int2(v) => out.put_i16(*v),
            Value::Int4(v) => out.put_i32(*v),
            Value::Int8(v) => out.put_i64(*v),
            Value::Float8(v) => out.put_f64(*v),
            Value::Timestamp(v) | Value::TimestampTz(v) => out.put_i64(*v),
            Value::PgLsn(v) => out.put_u64(*v),
            other => other.write_text(out),
        }
    }
}
