//! SQL types with PostgreSQL's OIDs. OWNER: Q1.

use crate::types::Oid;

/// A column or expression type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// bool (16)
    Bool,
    /// int2 (21)
    Int2,
    /// int4 (23)
    Int4,
    /// int8 (20)
    Int8,
    /// float8 (701)
    Float8,
    /// numeric (1700)
    Numeric,
    /// text (25)
    Text,
    /// varchar(n) (1043); typmod n or none
    Varchar(Option<u32>),
    /// char(n) / bpchar (1042)
    Char(u32),
    /// timestamp (1114)
    Timestamp,
    /// timestamptz (1184)
    TimestampTz,
    /// pg_lsn (3220)
    PgLsn,
    /// pg_snapshot (5038) / txid_snapshot (2970), text form `xmin:xmax:xip,…`
    Snapshot,
    /// void (2278), e.g. pg_sleep()
    Void,
    /// name (19), for catalog-ish output
    Name,
    /// oid (26)
    Oid,
    /// A literal or parameter whose type is not known yet (705).
    Unknown,
}

impl SqlType {
    /// The type's OID.
    pub fn oid(self) -> Oid {
        match self {
            SqlType::Bool => 16,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Float8 => 701,
            SqlType::Numeric => 1700,
            SqlType::Text => 25,
            SqlType::Varchar(_) => 1043,
            SqlType::Char(_) => 1042,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::PgLsn => 3220,
            SqlType::Snapshot => 5038,
            SqlType::Void => 2278,
            SqlType::Name => 19,
            SqlType::Oid => 26,
            SqlType::Unknown => 705,
        }
    }
    /// RowDescription's type size (-1 variable).
    pub fn typlen(self) -> i16 {
        match self {
            SqlType::Bool => 1,
            SqlType::Int2 => 2,
            SqlType::Int4 | SqlType::Oid => 4,
            SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz | SqlType::PgLsn => 8,
            SqlType::Void => 4,
            SqlType::Name => 64,
            _ => -1,
        }
    }
    /// RowDescription's type modifier (-1 none; varchar(n)/char(n): n + 4).
    pub fn typmod(self) -> i32 {
        match self {
            SqlType::Varchar(Some(n)) | SqlType::Char(n) => n as i32 + 4,
            _ => -1,
        }
    }
}
