//! Runtime values. OWNER: Q1 (text/binary I/O, comparison, row encoding).

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
    /// numeric, kept as its canonical decimal text (Q1 decides the representation).
    Numeric(String),
    /// text, varchar, char, name
    Text(String),
    /// timestamp: microseconds since 2000-01-01 00:00:00
    Timestamp(i64),
    /// timestamptz: microseconds since 2000-01-01 00:00:00 UTC
    TimestampTz(i64),
    /// pg_lsn
    PgLsn(u64),
    /// pg_snapshot: xmin, xmax, running xids
    Snapshot {
        /// xmin
        xmin: u64,
        /// xmax
        xmax: u64,
        /// running xids
        xip: Vec<u64>,
    },
    /// void
    Void,
}
