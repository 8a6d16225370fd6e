//! SQL types with PostgreSQL's OIDs, names and type modifiers.
//!
//! A [`SqlType`] is what a column, parameter or expression has. It carries the
//! type modifier where PostgreSQL keeps one that changes behaviour
//! (`varchar(n)`, `char(n)`, `numeric(p,s)`), so casts can check lengths and
//! round scales. The OIDs are PostgreSQL's own, so clients (psql,
//! tokio-postgres) decode our RowDescriptions with their built-in tables.
//!
//! Names: [`SqlType::pg_name`] prints what PostgreSQL's `format_type` prints in
//! error messages (`integer`, `character varying(10)`, `timestamp with time
//! zone`); [`SqlType::from_data_type`] maps sqlparser's `DataType` (what
//! `CREATE TABLE` and `::type` give us) and [`SqlType::from_name`] maps a bare
//! type name (`int4`, `bpchar`, `pg_lsn`).
//!
//! Arrays are `SqlType::Array(ArrayElem)`: one dimension of a scalar type,
//! with PostgreSQL's array OIDs (`int4[]` 1007) and typnames (`_int4`);
//! `int4[]` and `_int4` both parse with [`SqlType::from_name`].
//!
//! Text-like types (text, varchar, char, name) share one runtime
//! representation ([`crate::value::Value::Text`]); char(n) values are
//! stored blank-padded, as PostgreSQL stores bpchar.

use std::fmt;

use sqlparser::ast::{CharacterLength, DataType, ExactNumberInfo, TimezoneInfo};

use crate::error::{sqlstate, PgError, PgResult};
use crate::Oid;

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
    /// numeric (1700); typmod `(precision, scale)` or none
    Numeric(Option<(u16, u16)>),
    /// text (25)
    Text,
    /// varchar(n) (1043); typmod n or none
    Varchar(Option<u32>),
    /// char(n) / bpchar (1042); n (1 for plain `char`; 0 = `bpchar` without
    /// a length, which neither pads nor truncates)
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
    /// trigger (2279): the pseudo-type `RETURNS trigger` functions return;
    /// no value has it (a trigger function's result is a row or NULL,
    /// handed to the trigger manager, `sql::trigger`).
    Trigger,
    /// record (2249): an anonymous row a function returns
    /// (`pg_create_physical_replication_slot`), carried as its text form
    /// `(a,b)` ([`record_out`]).
    Record,
    /// name (19), for catalog-ish output
    Name,
    /// refcursor (1790): a cursor's (portal's) name, what a PL/pgSQL
    /// function returns for its caller to FETCH from; a text value.
    Refcursor,
    /// `"char"` (18): the catalogs' one-byte code (`pg_type.typtype`),
    /// sent as that byte in binary; a text value of at most one character.
    InternalChar,
    /// oid (26)
    Oid,
    /// xid8 (5069), what pg_current_xact_id() returns
    Xid8,
    /// xid (28): a 32-bit transaction id, what `pg_prepared_xacts.transaction`
    /// shows (the low half of our 64-bit xid, as PostgreSQL's
    /// XidFromFullTransactionId)
    Xid,
    /// date (1082): days since 2000-01-01
    Date,
    /// interval (1186): months, days, microseconds
    Interval,
    /// A one-dimensional array of a scalar type (`int4[]` 1007, `text[]` 1009 …).
    Array(ArrayElem),
    /// bytea (17): a byte string
    Bytea,
    /// json (114): validated JSON text, kept as given
    Json,
    /// jsonb (3802): JSON in canonical form
    Jsonb,
    /// uuid (2950)
    Uuid,
    /// inet (869): an IPv4/IPv6 host address with an optional netmask
    Inet,
    /// cidr (650): an IPv4/IPv6 network (no bits right of the mask)
    Cidr,
    /// A literal or parameter whose type is not known yet (705).
    Unknown,
    /// An OID alias type (`regclass`, `regtype`, …): an OID whose text form
    /// is the object's name. The value is a `Value::Oid`; converting to and
    /// from names needs the catalog, so the SQL layer does it (casts and
    /// result rows), not this crate.
    Reg(RegKind),
    /// A user-defined enum type (`CREATE TYPE mood AS ENUM …`), by its
    /// pg_type OID. Values are `Value::Enum` (a label's pg_enum OID); names,
    /// labels and sort order come from [`crate::enumtype`].
    Enum(Oid),
}

/// Which OID alias type a [`SqlType::Reg`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// regclass (2205): a relation.
    Class,
    /// regtype (2206): a type.
    Type,
    /// regproc (24): a function by name.
    Proc,
    /// regprocedure (2202): a function with its argument types.
    Procedure,
    /// regoper (2203): an operator by name.
    Oper,
    /// regoperator (2204): an operator with its argument types.
    Operator,
    /// regnamespace (4089): a schema.
    Namespace,
    /// regrole (4096): a role.
    Role,
}

impl RegKind {
    /// The type's OID.
    pub fn oid(self) -> Oid {
        match self {
            RegKind::Class => 2205,
            RegKind::Type => 2206,
            RegKind::Proc => 24,
            RegKind::Procedure => 2202,
            RegKind::Oper => 2203,
            RegKind::Operator => 2204,
            RegKind::Namespace => 4089,
            RegKind::Role => 4096,
        }
    }
    /// pg_type.typname.
    pub fn typname(self) -> &'static str {
        match self {
            RegKind::Class => "regclass",
            RegKind::Type => "regtype",
            RegKind::Proc => "regproc",
            RegKind::Procedure => "regprocedure",
            RegKind::Oper => "regoper",
            RegKind::Operator => "regoperator",
            RegKind::Namespace => "regnamespace",
            RegKind::Role => "regrole",
        }
    }
    /// Every kind.
    pub const ALL: [RegKind; 8] = [
        RegKind::Class,
        RegKind::Type,
        RegKind::Proc,
        RegKind::Procedure,
        RegKind::Oper,
        RegKind::Operator,
        RegKind::Namespace,
        RegKind::Role,
    ];
}

/// The element type of an array type. Kept as its own small enum so
/// [`SqlType`] stays `Copy`: `SqlType::Array(ArrayElem::Int4)` is `int4[]`.
/// Element typmods (`varchar(10)[]`) are not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArrayElem {
    /// bool[] (1000)
    Bool,
    /// int2[] (1005)
    Int2,
    /// int4[] (1007)
    Int4,
    /// int8[] (1016)
    Int8,
    /// float8[] (1022)
    Float8,
    /// numeric[] (1231)
    Numeric,
    /// text[] (1009)
    Text,
    /// varchar[] (1015)
    Varchar,
    /// bpchar[] (1014)
    Char,
    /// name[] (1003)
    Name,
    /// date[] (1182)
    Date,
    /// timestamp[] (1115)
    Timestamp,
    /// timestamptz[] (1185)
    TimestampTz,
    /// interval[] (1187)
    Interval,
    /// oid[] (1028)
    Oid,
    /// int2vector (22): the catalogs' int2 array (`pg_index.indkey`),
    /// subscripted from 0 and printed space-separated (`1 3`).
    Int2Vector,
    /// oidvector (30): the catalogs' oid array (`pg_proc.proargtypes`).
    OidVector,
    /// bytea[] (1001)
    Bytea,
    /// json[] (199)
    Json,
    /// jsonb[] (3807)
    Jsonb,
    /// uuid[] (2951)
    Uuid,
    /// inet[] (1041)
    Inet,
    /// cidr[] (651)
    Cidr,
    /// An enum type's array (`_mood`), by the element type's OID.
    Enum(Oid),
}

impl ArrayElem {
    /// Every element type (for tables and tests).
    pub const ALL: [ArrayElem; 23] = [
        ArrayElem::Bool,
        ArrayElem::Int2,
        ArrayElem::Int4,
        ArrayElem::Int8,
        ArrayElem::Float8,
        ArrayElem::Numeric,
        ArrayElem::Text,
        ArrayElem::Varchar,
        ArrayElem::Char,
        ArrayElem::Name,
        ArrayElem::Date,
        ArrayElem::Timestamp,
        ArrayElem::TimestampTz,
        ArrayElem::Interval,
        ArrayElem::Oid,
        ArrayElem::Int2Vector,
        ArrayElem::OidVector,
        ArrayElem::Bytea,
        ArrayElem::Json,
        ArrayElem::Jsonb,
        ArrayElem::Uuid,
        ArrayElem::Inet,
        ArrayElem::Cidr,
    ];

    /// True for int2vector and oidvector (0-based, printed without braces).
    pub fn is_vector(self) -> bool {
        matches!(self, ArrayElem::Int2Vector | ArrayElem::OidVector)
    }

    /// The element's scalar type.
    pub fn sql_type(self) -> SqlType {
        match self {
            ArrayElem::Bool => SqlType::Bool,
            ArrayElem::Int2 => SqlType::Int2,
            ArrayElem::Int4 => SqlType::Int4,
            ArrayElem::Int8 => SqlType::Int8,
            ArrayElem::Float8 => SqlType::Float8,
            ArrayElem::Numeric => SqlType::NUMERIC,
            ArrayElem::Text => SqlType::Text,
            ArrayElem::Varchar => SqlType::Varchar(None),
            ArrayElem::Char => SqlType::Char(0),
            ArrayElem::Name => SqlType::Name,
            ArrayElem::Date => SqlType::Date,
            ArrayElem::Timestamp => SqlType::Timestamp,
            ArrayElem::TimestampTz => SqlType::TimestampTz,
            ArrayElem::Interval => SqlType::Interval,
            ArrayElem::Oid | ArrayElem::OidVector => SqlType::Oid,
            ArrayElem::Int2Vector => SqlType::Int2,
            ArrayElem::Bytea => SqlType::Bytea,
            ArrayElem::Json => SqlType::Json,
            ArrayElem::Jsonb => SqlType::Jsonb,
            ArrayElem::Uuid => SqlType::Uuid,
            ArrayElem::Inet => SqlType::Inet,
            ArrayElem::Cidr => SqlType::Cidr,
            ArrayElem::Enum(t) => SqlType::Enum(t),
        }
    }

    /// The element kind for a scalar type; None for types without an array
    /// type here (arrays of arrays, pg_lsn, …).
    pub fn of(t: SqlType) -> Option<ArrayElem> {
        Some(match t {
            SqlType::Bool => ArrayElem::Bool,
            SqlType::Int2 => ArrayElem::Int2,
            SqlType::Int4 => ArrayElem::Int4,
            SqlType::Int8 => ArrayElem::Int8,
            SqlType::Float8 => ArrayElem::Float8,
            SqlType::Numeric(_) => ArrayElem::Numeric,
            SqlType::Text | SqlType::Unknown => ArrayElem::Text,
            SqlType::Varchar(_) => ArrayElem::Varchar,
            SqlType::Char(_) => ArrayElem::Char,
            SqlType::Name => ArrayElem::Name,
            SqlType::Date => ArrayElem::Date,
            SqlType::Timestamp => ArrayElem::Timestamp,
            SqlType::TimestampTz => ArrayElem::TimestampTz,
            SqlType::Interval => ArrayElem::Interval,
            SqlType::Oid => ArrayElem::Oid,
            SqlType::Bytea => ArrayElem::Bytea,
            SqlType::Json => ArrayElem::Json,
            SqlType::Jsonb => ArrayElem::Jsonb,
            SqlType::Uuid => ArrayElem::Uuid,
            SqlType::Inet => ArrayElem::Inet,
            SqlType::Cidr => ArrayElem::Cidr,
            SqlType::Enum(t) => ArrayElem::Enum(t),
            _ => return None,
        })
    }

    /// The array type's OID.
    pub fn array_oid(self) -> Oid {
        match self {
            ArrayElem::Bool => 1000,
            ArrayElem::Int2 => 1005,
            ArrayElem::Int4 => 1007,
            ArrayElem::Int8 => 1016,
            ArrayElem::Float8 => 1022,
            ArrayElem::Numeric => 1231,
            ArrayElem::Text => 1009,
            ArrayElem::Varchar => 1015,
            ArrayElem::Char => 1014,
            ArrayElem::Name => 1003,
            ArrayElem::Date => 1182,
            ArrayElem::Timestamp => 1115,
            ArrayElem::TimestampTz => 1185,
            ArrayElem::Interval => 1187,
            ArrayElem::Oid => 1028,
            ArrayElem::Int2Vector => 22,
            ArrayElem::OidVector => 30,
            ArrayElem::Bytea => 1001,
            ArrayElem::Json => 199,
            ArrayElem::Jsonb => 3807,
            ArrayElem::Uuid => 2951,
            ArrayElem::Inet => 1041,
            ArrayElem::Cidr => 651,
            ArrayElem::Enum(t) => crate::enumtype::get(t).map_or(0, |e| e.array_oid),
        }
    }

    /// The array type for an array OID (float4[] 1021 reads as float8[]).
    pub fn from_array_oid(oid: Oid) -> Option<ArrayElem> {
        if oid == 1021 {
            return Some(ArrayElem::Float8);
        }
        ArrayElem::ALL
            .into_iter()
            .find(|e| e.array_oid() == oid)
            .or_else(|| crate::enumtype::elem_of_array(oid).map(ArrayElem::Enum))
    }

    /// format_type's spelling of the array type (`integer[]`).
    pub fn pg_array_name(self) -> &'static str {
        match self {
            ArrayElem::Bool => "boolean[]",
            ArrayElem::Int2 => "smallint[]",
            ArrayElem::Int4 => "integer[]",
            ArrayElem::Int8 => "bigint[]",
            ArrayElem::Float8 => "double precision[]",
            ArrayElem::Numeric => "numeric[]",
            ArrayElem::Text => "text[]",
            ArrayElem::Varchar => "character varying[]",
            ArrayElem::Char => "character[]",
            ArrayElem::Name => "name[]",
            ArrayElem::Date => "date[]",
            ArrayElem::Timestamp => "timestamp without time zone[]",
            ArrayElem::TimestampTz => "timestamp with time zone[]",
            ArrayElem::Interval => "interval[]",
            ArrayElem::Oid => "oid[]",
            ArrayElem::Int2Vector => "int2vector",
            ArrayElem::OidVector => "oidvector",
            ArrayElem::Bytea => "bytea[]",
            ArrayElem::Json => "json[]",
            ArrayElem::Jsonb => "jsonb[]",
            ArrayElem::Uuid => "uuid[]",
            ArrayElem::Inet => "inet[]",
            ArrayElem::Cidr => "cidr[]",
            ArrayElem::Enum(t) => crate::enumtype::get(t).map_or("???[]", |e| e.array_name),
        }
    }

    /// pg_type.typname of the array type (`_int4`).
    pub fn array_typname(self) -> &'static str {
        match self {
            ArrayElem::Bool => "_bool",
            ArrayElem::Int2 => "_int2",
            ArrayElem::Int4 => "_int4",
            ArrayElem::Int8 => "_int8",
            ArrayElem::Float8 => "_float8",
            ArrayElem::Numeric => "_numeric",
            ArrayElem::Text => "_text",
            ArrayElem::Varchar => "_varchar",
            ArrayElem::Char => "_bpchar",
            ArrayElem::Name => "_name",
            ArrayElem::Date => "_date",
            ArrayElem::Timestamp => "_timestamp",
            ArrayElem::TimestampTz => "_timestamptz",
            ArrayElem::Interval => "_interval",
            ArrayElem::Oid => "_oid",
            ArrayElem::Int2Vector => "int2vector",
            ArrayElem::OidVector => "oidvector",
            ArrayElem::Bytea => "_bytea",
            ArrayElem::Json => "_json",
            ArrayElem::Jsonb => "_jsonb",
            ArrayElem::Uuid => "_uuid",
            ArrayElem::Inet => "_inet",
            ArrayElem::Cidr => "_cidr",
            ArrayElem::Enum(t) => crate::enumtype::get(t).map_or("???", |e| e.array_typname),
        }
    }
}

/// Largest `n` accepted for varchar(n) / char(n) (PostgreSQL's MaxAttrSize / 4 limit is 10485760).
pub const MAX_CHAR_LENGTH: u64 = 10_485_760;

impl SqlType {
    /// The plain numeric type (no precision/scale).
    pub const NUMERIC: SqlType = SqlType::Numeric(None);

    /// The type's OID.
    pub fn oid(self) -> Oid {
        match self {
            SqlType::Bool => 16,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Int8 => 20,
            SqlType::Float8 => 701,
            SqlType::Numeric(_) => 1700,
            SqlType::Text => 25,
            SqlType::Varchar(_) => 1043,
            SqlType::Char(_) => 1042,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::PgLsn => 3220,
            SqlType::Snapshot => 5038,
            SqlType::Void => 2278,
            SqlType::Trigger => 2279,
            SqlType::Record => 2249,
            SqlType::Name => 19,
            SqlType::Refcursor => 1790,
            SqlType::InternalChar => 18,
            SqlType::Oid => 26,
            SqlType::Xid8 => 5069,
            SqlType::Xid => 28,
            SqlType::Date => 1082,
            SqlType::Interval => 1186,
            SqlType::Bytea => 17,
            SqlType::Json => 114,
            SqlType::Jsonb => 3802,
            SqlType::Uuid => 2950,
            SqlType::Inet => 869,
            SqlType::Cidr => 650,
            SqlType::Array(e) => e.array_oid(),
            SqlType::Unknown => 705,
            SqlType::Reg(k) => k.oid(),
            SqlType::Enum(t) => t,
        }
    }

    /// The type for an OID (typmod -1), as sent in Parse or a catalog.
    /// `txid_snapshot` (2970) maps to [`SqlType::Snapshot`]; `float4` (700) is
    /// accepted as float8. None for OIDs we do not know.
    pub fn from_oid(oid: Oid) -> Option<SqlType> {
        Some(match oid {
            16 => SqlType::Bool,
            21 => SqlType::Int2,
            23 => SqlType::Int4,
            20 => SqlType::Int8,
            700 | 701 => SqlType::Float8,
            1700 => SqlType::Numeric(None),
            25 => SqlType::Text,
            1043 => SqlType::Varchar(None),
            1042 => SqlType::Char(0),
            1114 => SqlType::Timestamp,
            1184 => SqlType::TimestampTz,
            3220 => SqlType::PgLsn,
            5038 | 2970 => SqlType::Snapshot,
            2278 => SqlType::Void,
            2249 => SqlType::Record,
            19 => SqlType::Name,
            1790 => SqlType::Refcursor,
            18 => SqlType::InternalChar,
            26 => SqlType::Oid,
            5069 => SqlType::Xid8,
            28 => SqlType::Xid,
            705 => SqlType::Unknown,
            o if RegKind::ALL.iter().any(|k| k.oid() == o) => {
                SqlType::Reg(*RegKind::ALL.iter().find(|k| k.oid() == o)?)
            }
            1082 => SqlType::Date,
            1186 => SqlType::Interval,
            17 => SqlType::Bytea,
            114 => SqlType::Json,
            3802 => SqlType::Jsonb,
            2950 => SqlType::Uuid,
            869 => SqlType::Inet,
            650 => SqlType::Cidr,
            o if crate::enumtype::get(o).is_some() => SqlType::Enum(o),
            o => SqlType::Array(ArrayElem::from_array_oid(o)?),
        })
    }

    /// The type for an OID and a PostgreSQL typmod (as in pg_attribute.atttypmod).
    pub fn from_oid_typmod(oid: Oid, typmod: i32) -> Option<SqlType> {
        let ty = SqlType::from_oid(oid)?;
        Some(match ty {
            SqlType::Varchar(_) if typmod >= 4 => SqlType::Varchar(Some((typmod - 4) as u32)),
            SqlType::Char(_) if typmod >= 4 => SqlType::Char((typmod - 4) as u32),
            SqlType::Numeric(_) if typmod >= 4 => {
                let t = (typmod - 4) as u32;
                SqlType::Numeric(Some(((t >> 16) as u16, (t & 0xffff) as u16)))
            }
            other => other,
        })
    }

    /// RowDescription's type size (-1 variable).
    pub fn typlen(self) -> i16 {
        match self {
            SqlType::Bool => 1,
            SqlType::Int2 => 2,
            SqlType::Int4
            | SqlType::Oid
            | SqlType::Xid
            | SqlType::Date
            | SqlType::Reg(_)
            | SqlType::Enum(_) => 4,
            SqlType::Interval => 16,
            SqlType::Int8
            | SqlType::Float8
            | SqlType::Timestamp
            | SqlType::TimestampTz
            | SqlType::PgLsn
            | SqlType::Xid8 => 8,
            SqlType::Void | SqlType::Trigger => 4,
            SqlType::Uuid => 16,
            SqlType::Name => 64,
            SqlType::InternalChar => 1,
            SqlType::Unknown => -2,
            _ => -1,
        }
    }

    /// RowDescription's type modifier (-1 none; varchar(n)/char(n): n + 4;
    /// numeric(p,s): ((p << 16) | s) + 4).
    pub fn typmod(self) -> i32 {
        match self {
            SqlType::Varchar(Some(n)) => n as i32 + 4,
            SqlType::Char(n) if n > 0 => n as i32 + 4,
            SqlType::Numeric(Some((p, s))) => (((p as i32) << 16) | s as i32) + 4,
            _ => -1,
        }
    }

    /// The type without its modifier (`varchar(10)` → `varchar`), what an
    /// expression over a column of this type has.
    pub fn base(self) -> SqlType {
        match self {
            SqlType::Varchar(_) => SqlType::Varchar(None),
            SqlType::Numeric(_) => SqlType::Numeric(None),
            other => other,
        }
    }

    /// True for int2/int4/int8.
    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
    }

    /// True for the numeric category (ints, numeric, float8).
    pub fn is_numeric_category(self) -> bool {
        matches!(
            self,
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Numeric(_) | SqlType::Float8
        )
    }

    /// True for text, varchar, char and name (the string category).
    pub fn is_text_like(self) -> bool {
        matches!(
            self,
            SqlType::Text
                | SqlType::Varchar(_)
                | SqlType::Char(_)
                | SqlType::Name
                | SqlType::Refcursor
                | SqlType::InternalChar
        )
    }

    /// The name PostgreSQL's `format_type` prints (used in error messages),
    /// with the modifier: `integer`, `character varying(10)`, `numeric(10,2)`.
    pub fn pg_name(self) -> String {
        match self {
            SqlType::Varchar(Some(n)) => format!("character varying({n})"),
            SqlType::Char(n) if n > 0 => format!("character({n})"),
            SqlType::Numeric(Some((p, s))) => format!("numeric({p},{s})"),
            other => other.pg_base_name().to_string(),
        }
    }

    /// [`SqlType::pg_name`] without the modifier (`character varying`, `bpchar`
    /// is printed `character` as PostgreSQL does).
    pub fn pg_base_name(self) -> &'static str {
        match self {
            SqlType::Bool => "boolean",
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Float8 => "double precision",
            SqlType::Numeric(_) => "numeric",
            SqlType::Text => "text",
            SqlType::Varchar(_) => "character varying",
            SqlType::Char(0) => "bpchar",
            SqlType::Char(_) => "character",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::PgLsn => "pg_lsn",
            SqlType::Snapshot => "pg_snapshot",
            SqlType::Void => "void",
            SqlType::Trigger => "trigger",
            SqlType::Record => "record",
            SqlType::Name => "name",
            SqlType::Refcursor => "refcursor",
            SqlType::InternalChar => "\"char\"",
            SqlType::Oid => "oid",
            SqlType::Xid8 => "xid8",
            SqlType::Xid => "xid",
            SqlType::Date => "date",
            SqlType::Interval => "interval",
            SqlType::Bytea => "bytea",
            SqlType::Json => "json",
            SqlType::Jsonb => "jsonb",
            SqlType::Uuid => "uuid",
            SqlType::Inet => "inet",
            SqlType::Cidr => "cidr",
            SqlType::Array(e) => e.pg_array_name(),
            SqlType::Unknown => "unknown",
            SqlType::Reg(k) => k.typname(),
            SqlType::Enum(t) => crate::enumtype::type_name(t),
        }
    }

    /// The element type of an array type (None for scalars).
    pub fn elem(self) -> Option<SqlType> {
        match self {
            SqlType::Array(e) => Some(e.sql_type()),
            _ => None,
        }
    }

    /// The array type whose elements are `self` (None if there is none here).
    pub fn array_of(self) -> Option<SqlType> {
        ArrayElem::of(self).map(SqlType::Array)
    }

    /// The internal type name (pg_type.typname): `int4`, `varchar`, `bpchar`,
    /// `timestamptz` — what `::regtype`-less tools and column names of casts show.
    pub fn typname(self) -> &'static str {
        match self {
            SqlType::Bool => "bool",
            SqlType::Int2 => "int2",
            SqlType::Int4 => "int4",
            SqlType::Int8 => "int8",
            SqlType::Float8 => "float8",
            SqlType::Numeric(_) => "numeric",
            SqlType::Text => "text",
            SqlType::Varchar(_) => "varchar",
            SqlType::Char(_) => "bpchar",
            SqlType::Timestamp => "timestamp",
            SqlType::TimestampTz => "timestamptz",
            SqlType::PgLsn => "pg_lsn",
            SqlType::Snapshot => "pg_snapshot",
            SqlType::Void => "void",
            SqlType::Trigger => "trigger",
            SqlType::Record => "record",
            SqlType::Name => "name",
            SqlType::Refcursor => "refcursor",
            SqlType::InternalChar => "char",
            SqlType::Oid => "oid",
            SqlType::Xid8 => "xid8",
            SqlType::Xid => "xid",
            SqlType::Date => "date",
            SqlType::Interval => "interval",
            SqlType::Bytea => "bytea",
            SqlType::Json => "json",
            SqlType::Jsonb => "jsonb",
            SqlType::Uuid => "uuid",
            SqlType::Inet => "inet",
            SqlType::Cidr => "cidr",
            SqlType::Array(e) => e.array_typname(),
            SqlType::Unknown => "unknown",
            SqlType::Reg(k) => k.typname(),
            SqlType::Enum(t) => crate::enumtype::type_name(t),
        }
    }

    /// A bare type name (`int4`, `integer`, `bpchar`, `double precision`,
    /// `timestamptz`, `pg_lsn` …), case-insensitive. None if unknown.
    pub fn from_name(name: &str) -> Option<SqlType> {
        let lower = name.trim().to_ascii_lowercase();
        let lower = lower
            .strip_prefix("pg_catalog.")
            .unwrap_or(&lower)
            .to_string();
        if let Some(elem) = lower.strip_suffix("[]") {
            return SqlType::from_name(elem)?.array_of();
        }
        if let Some(elem) = lower.strip_prefix('_') {
            return SqlType::from_name(elem)?.array_of();
        }
        Some(match lower.as_str() {
            "bool" | "boolean" => SqlType::Bool,
            "int2" | "smallint" => SqlType::Int2,
            "int" | "int4" | "integer" | "serial" | "serial4" => SqlType::Int4,
            "int8" | "bigint" | "bigserial" | "serial8" => SqlType::Int8,
            "float8" | "float" | "double precision" | "float4" | "real" | "double" => {
                SqlType::Float8
            }
            "numeric" | "decimal" => SqlType::Numeric(None),
            "text" => SqlType::Text,
            "varchar" | "character varying" => SqlType::Varchar(None),
            "bpchar" => SqlType::Char(0),
            "char" | "character" => SqlType::Char(1),
            "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
            "timestamptz" | "timestamp with time zone" => SqlType::TimestampTz,
            "pg_lsn" => SqlType::PgLsn,
            "pg_snapshot" | "txid_snapshot" => SqlType::Snapshot,
            "void" => SqlType::Void,
            "name" => SqlType::Name,
            "refcursor" => SqlType::Refcursor,
            "\"char\"" => SqlType::InternalChar,
            "oid" => SqlType::Oid,
            "xid8" => SqlType::Xid8,
            "xid" => SqlType::Xid,
            "unknown" => SqlType::Unknown,
            "date" => SqlType::Date,
            "interval" => SqlType::Interval,
            "regclass" => SqlType::Reg(RegKind::Class),
            "regtype" => SqlType::Reg(RegKind::Type),
            "regproc" => SqlType::Reg(RegKind::Proc),
            "regprocedure" => SqlType::Reg(RegKind::Procedure),
            "regoper" => SqlType::Reg(RegKind::Oper),
            "regoperator" => SqlType::Reg(RegKind::Operator),
            "regnamespace" => SqlType::Reg(RegKind::Namespace),
            "regrole" => SqlType::Reg(RegKind::Role),
            "bytea" => SqlType::Bytea,
            "json" => SqlType::Json,
            "jsonb" => SqlType::Jsonb,
            "uuid" => SqlType::Uuid,
            "inet" => SqlType::Inet,
            "cidr" => SqlType::Cidr,
            // An enum type: the name as written (a quoted identifier
            // keeps its case), else folded as an unquoted one.
            _ => {
                let t = crate::enumtype::by_name(name.trim())
                    .or_else(|| crate::enumtype::by_name(&lower))?;
                SqlType::Enum(t.oid)
            }
        })
    }

    /// Maps sqlparser's `DataType` (CREATE TABLE column types, `::type`,
    /// `CAST(x AS type)`). Unknown names: 42704 `type "foo" does not exist`.
    /// A bare `bpchar` (a custom name) is [`SqlType::Char`]`(0)`; `char` is char(1).
    pub fn from_data_type(dt: &DataType) -> PgResult<SqlType> {
        fn char_len(len: &Option<CharacterLength>) -> PgResult<Option<u32>> {
            match len {
                None => Ok(None),
                Some(CharacterLength::IntegerLength { length, .. }) => {
                    if *length == 0 {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            "length for type varchar must be at least 1",
                        ));
                    }
                    if *length > MAX_CHAR_LENGTH {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("length for type varchar cannot exceed {MAX_CHAR_LENGTH}"),
                        ));
                    }
                    Ok(Some(*length as u32))
                }
                Some(CharacterLength::Max) => {
                    Err(PgError::syntax("syntax error at or near \"max\""))
                }
            }
        }
        fn numeric(info: &ExactNumberInfo) -> PgResult<SqlType> {
            let (p, s) = match *info {
                ExactNumberInfo::None => return Ok(SqlType::Numeric(None)),
                ExactNumberInfo::Precision(p) => (p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (p, s),
            };
            if !(1..=1000).contains(&p) {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("NUMERIC precision {p} must be between 1 and 1000"),
                ));
            }
            if s > p {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("NUMERIC scale {s} must be between 0 and precision {p}"),
                ));
            }
            Ok(SqlType::Numeric(Some((p as u16, s as u16))))
        }
        Ok(match dt {
            DataType::Bool | DataType::Boolean => SqlType::Bool,
            DataType::Int2(_) | DataType::SmallInt(_) | DataType::TinyInt(_) => SqlType::Int2,
            DataType::Int(_)
            | DataType::Int4(_)
            | DataType::Integer(_)
            | DataType::MediumInt(_) => SqlType::Int4,
            DataType::Int8(_) | DataType::BigInt(_) => SqlType::Int8,
            DataType::Float(_)
            | DataType::Float4
            | DataType::Float8
            | DataType::Real
            | DataType::Double
            | DataType::DoublePrecision
            | DataType::Float64 => SqlType::Float8,
            DataType::Numeric(info) | DataType::Decimal(info) | DataType::Dec(info) => {
                numeric(info)?
            }
            DataType::Text | DataType::String(None) => SqlType::Text,
            DataType::Varchar(len)
            | DataType::CharacterVarying(len)
            | DataType::CharVarying(len) => SqlType::Varchar(char_len(len)?),
            DataType::Char(len) | DataType::Character(len) => {
                SqlType::Char(char_len(len)?.unwrap_or(1))
            }
            DataType::Timestamp(_, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) => {
                SqlType::TimestampTz
            }
            DataType::Timestamp(_, _) => SqlType::Timestamp,
            DataType::Date => SqlType::Date,
            DataType::Interval => SqlType::Interval,
            DataType::Regclass => SqlType::Reg(RegKind::Class),
            DataType::Bytea => SqlType::Bytea,
            DataType::JSON => SqlType::Json,
            DataType::JSONB => SqlType::Jsonb,
            DataType::Uuid => SqlType::Uuid,
            DataType::Array(
                sqlparser::ast::ArrayElemTypeDef::SquareBracket(inner, _)
                | sqlparser::ast::ArrayElemTypeDef::AngleBracket(inner)
                | sqlparser::ast::ArrayElemTypeDef::Parenthesis(inner),
            ) => {
                let elem = SqlType::from_data_type(inner)?;
                elem.array_of().ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("could not find array type for data type {}", elem.pg_name()),
                    )
                })?
            }
            DataType::Custom(name, mods) => {
                // `pg_catalog.int4`: built-in types live in pg_catalog.
                let schema_ok = match name.0.as_slice() {
                    [_] => true,
                    [s, _] => s.value == "pg_catalog" || s.value == "public",
                    _ => false,
                };
                let n = name.to_string();
                let n = match name.0.last() {
                    Some(last) if schema_ok => last.value.as_str(),
                    _ => n.as_str(),
                };
                let ty = SqlType::from_name(n).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("type \"{}\" does not exist", n),
                    )
                })?;
                match (ty, mods.as_slice()) {
                    (SqlType::Char(_), [m]) | (SqlType::Varchar(_), [m]) => {
                        let len: u64 = m.parse().map_err(|_| {
                            PgError::syntax(format!("invalid type modifier \"{m}\""))
                        })?;
                        let len = char_len(&Some(CharacterLength::IntegerLength {
                            length: len,
                            unit: None,
                        }))?;
                        match ty {
                            SqlType::Char(_) => SqlType::Char(len.unwrap_or(1)),
                            _ => SqlType::Varchar(len),
                        }
                    }
                    (ty, []) => ty,
                    (_, _) => {
                        return Err(PgError::syntax(format!(
                            "type modifier is not allowed for type \"{n}\""
                        )));
                    }
                }
            }
            other => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!(
                        "type \"{}\" does not exist",
                        other.to_string().to_lowercase()
                    ),
                ))
            }
        })
    }
}

impl fmt::Display for SqlType {
    /// Same as [`SqlType::pg_name`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pg_name())
    }
}

/// record_out: the text form of an anonymous row, `(a,b)`. A NULL field is
/// empty; a field that is empty or holds a quote, backslash, parenthesis,
/// comma or white space is double-quoted, its quotes and backslashes
/// doubled.
pub fn record_out(fields: &[Option<&str>]) -> String {
    let mut out = String::from("(");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let Some(f) = f else { continue };
        let quote = f.is_empty()
            || f.chars()
                .any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || c.is_ascii_whitespace());
        if quote {
            out.push('"');
            for c in f.chars() {
                if c == '"' || c == '\\' {
                    out.push(c);
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push(')');
    out
}

#[cfg(test)]
mod record_tests {
    use super::record_out;

    #[test]
    fn record_text_form() {
        assert_eq!(record_out(&[Some("s1"), None]), "(s1,)");
        assert_eq!(
            record_out(&[Some("s1"), Some("0/3000060")]),
            "(s1,0/3000060)"
        );
        assert_eq!(
            record_out(&[Some(""), Some("a b"), Some("x\"y")]),
            "(\"\",\"a b\",\"x\"\"y\")"
        );
    }
}
