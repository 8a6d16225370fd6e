//! Built-in functions and aggregates.
//!
//! Functions are resolved once, at bind time, by name and argument types
//! ([`resolve_function`]) into a [`Func`] with the argument types the binder
//! must coerce to and the result type; evaluation ([`call`]) then dispatches
//! on the enum — no name lookup per row.
//!
//! Session-dependent functions (`now()`, `txid_current()`, `pg_sleep()`,
//! `current_setting()`, WAL positions …) go through [`EvalContext`], which the
//! statement layer implements for a session. [`StaticContext`] is a
//! session-less implementation for tests and constant folding.
//!
//! Aggregates (`count`, `sum`, `min`, `max`, `avg`) are [`AggFunc`]s with
//! PostgreSQL's result types (count → bigint, sum(int2/int4) → bigint,
//! sum(int8) → numeric, sum(float8) → float8, sum(numeric) → numeric,
//! avg(int*) → numeric, avg(float8) → float8, min/max → input type); the
//! executor feeds an [`Accumulator`] per group.

use std::cmp::Ordering;
use std::sync::Arc;

use pgtypes::datetime;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::numeric::Numeric;
use pgtypes::sqltype::SqlType;
use pgtypes::value::{cmp_sql, PgSnapshot, Value};

/// `version()`'s result.
pub const VERSION_STRING: &str = concat!(
    "PostgreSQL 15.4 (hotpair ",
    env!("CARGO_PKG_VERSION"),
    ") on x86_64-pc-linux-gnu, compiled by rustc, 64-bit"
);

pub use engine::replication::WalLsnKind;

/// What expression evaluation needs from the session. The statement layer
/// implements it; every method has a sensible default so tests and constant
/// folding can use [`StaticContext`].
pub trait EvalContext {
    /// statement_timestamp() / now() within a statement: µs since 2000-01-01 UTC.
    fn statement_timestamp(&self) -> i64 {
        datetime::now_usecs()
    }
    /// transaction_timestamp() / now() / CURRENT_TIMESTAMP: µs since 2000-01-01 UTC.
    fn transaction_timestamp(&self) -> i64 {
        datetime::now_usecs()
    }
    /// clock_timestamp(): the current wall clock.
    fn clock_timestamp(&self) -> i64 {
        datetime::now_usecs()
    }
    /// txid_current() / pg_current_xact_id(): assigns an xid if needed.
    /// Default: 0A000 (no transaction machinery).
    fn txid_current(&mut self) -> PgResult<u64> {
        Err(PgError::unsupported("txid_current() is not available here"))
    }
    /// txid_current_if_assigned() / pg_current_xact_id_if_assigned().
    fn txid_current_if_assigned(&self) -> Option<u64> {
        None
    }
    /// pg_current_snapshot() / txid_current_snapshot().
    fn current_snapshot(&mut self) -> PgResult<PgSnapshot> {
        Err(PgError::unsupported(
            "pg_current_snapshot() is not available here",
        ))
    }
    /// pg_sleep(secs): sleeps, polling for cancellation (57014).
    fn sleep(&mut self, secs: f64) -> PgResult<()> {
        if secs > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
        }
        Ok(())
    }
    /// current_setting(name) / SHOW: None if the setting does not exist.
    fn setting(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }
    /// pg_is_in_recovery().
    fn is_in_recovery(&self) -> bool {
        false
    }
    /// pg_promote(wait, wait_seconds): asks a standby to promote; with
    /// `wait`, true once promoted or false after `wait_seconds`. Default:
    /// 55000, as on a primary.
    fn promote(&mut self, wait: bool, wait_seconds: i32) -> PgResult<bool> {
        let _ = (wait, wait_seconds);
        Err(not_in_recovery())
    }
    /// pg_relation_size(name): bytes of the relation's main fork; 42P01 if
    /// there is no such relation.
    fn relation_size(&self, name: &str) -> PgResult<i64> {
        Err(PgError::new(
            sqlstate::UNDEFINED_TABLE,
            format!("relation \"{name}\" does not exist"),
        ))
    }
    /// WAL positions for the pg_*_lsn() functions; None returns NULL.
    /// On a standby `Current`/`Insert`/`Flush` should raise 55000
    /// "recovery is in progress" (as PostgreSQL does) — return the error.
    fn wal_lsn(&self, which: WalLsnKind) -> PgResult<Option<u64>> {
        let _ = which;
        Ok(None)
    }
    /// pg_backend_pid().
    fn backend_pid(&self) -> i32 {
        0
    }
    /// current_user / session_user / user: the session's role.
    fn current_user(&self) -> String {
        self.setting("session_authorization")
            .unwrap_or_else(|| "postgres".to_string())
    }
    /// current_database().
    fn current_database(&self) -> String {
        "postgres".to_string()
    }
    /// Raises 57014 if the statement was canceled; called in long loops.
    fn check_cancel(&self) -> PgResult<()> {
        Ok(())
    }
    /// random(): a uniform float in [0, 1). Default: a thread-local xorshift.
    fn random(&mut self) -> f64 {
        thread_random()
    }
}

/// A session-less [`EvalContext`] (all defaults): for tests, constant
/// folding and column DEFAULTs that do not need a session.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticContext;

impl EvalContext for StaticContext {}

/// A fast thread-local PRNG (xorshift64*), seeded from the clock and thread.
pub fn thread_random() -> f64 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x9E37_79B9_7F4A_7C15);
            let addr = &x as *const u64 as u64;
            x = (t ^ addr.rotate_left(32)) | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// A built-in scalar function, resolved at bind time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// length(text) / char_length / character_length → int4 (characters; bpchar ignores trailing spaces)
    Length,
    /// length(bpchar): trailing spaces do not count.
    LengthBpchar,
    /// octet_length(text) → int4
    OctetLength,
    /// repeat(text, int4) → text
    Repeat,
    /// upper(text) → text
    Upper,
    /// lower(text) → text
    Lower,
    /// substr/substring(text, int4) → text
    Substr2,
    /// substr/substring(text, int4, int4) → text
    Substr3,
    /// concat(any…) → text (NULLs skipped)
    Concat,
    /// btrim/trim(text[, chars]) → text
    Btrim,
    /// ltrim(text[, chars])
    Ltrim,
    /// rtrim(text[, chars])
    Rtrim,
    /// replace(text, from, to)
    Replace,
    /// position(sub in text) / strpos(text, sub) → int4; args (haystack, needle)
    Strpos,
    /// left(text, int4)
    Left,
    /// right(text, int4)
    Right,
    /// abs(x) → same type
    Abs,
    /// coalesce(a, b, …) (args already coerced to one type)
    Coalesce,
    /// nullif(a, b)
    Nullif,
    /// greatest(a, b, …)
    Greatest,
    /// least(a, b, …)
    Least,
    /// round(x) / round(numeric, int4)
    Round,
    /// floor(x)
    Floor,
    /// ceil(x) / ceiling(x)
    Ceil,
    /// trunc(x)
    Trunc,
    /// sqrt(float8)
    Sqrt,
    /// mod(a, b)
    Mod,
    /// random() → float8
    Random,
    /// now() / CURRENT_TIMESTAMP / transaction_timestamp() → timestamptz
    Now,
    /// statement_timestamp() → timestamptz
    StatementTimestamp,
    /// clock_timestamp() → timestamptz
    ClockTimestamp,
    /// LOCALTIMESTAMP → timestamp
    LocalTimestamp,
    /// version() → text
    Version,
    /// pg_sleep(float8) → void
    PgSleep,
    /// txid_current() → int8
    TxidCurrent,
    /// txid_current_if_assigned() → int8
    TxidCurrentIfAssigned,
    /// pg_current_xact_id() → xid8
    PgCurrentXactId,
    /// pg_current_xact_id_if_assigned() → xid8
    PgCurrentXactIdIfAssigned,
    /// pg_current_snapshot() / txid_current_snapshot() → pg_snapshot
    CurrentSnapshot,
    /// pg_snapshot_xmin(snapshot) → xid8 (`int8: true` for txid_snapshot_xmin → int8)
    SnapshotXmin {
        /// Return int8 instead of xid8.
        int8: bool,
    },
    /// pg_snapshot_xmax(snapshot) → xid8 (`int8: true` for txid_snapshot_xmax)
    SnapshotXmax {
        /// Return int8 instead of xid8.
        int8: bool,
    },
    /// pg_is_in_recovery() → bool
    PgIsInRecovery,
    /// pg_promote(wait bool DEFAULT true, wait_seconds int4 DEFAULT 60) → bool
    PgPromote,
    /// pg_relation_size(regclass) / pg_table_size → int8: bytes of the main
    /// fork (the bench's table MB/s)
    PgRelationSize,
    /// current_setting(text) → text
    CurrentSetting,
    /// current_setting(text, bool missing_ok) → text
    CurrentSettingMissingOk,
    /// pg_backend_pid() → int4
    PgBackendPid,
    /// pg_reload_conf(): asks the node to re-read pg_hba.conf.
    PgReloadConf,
    /// current_database() → name
    CurrentDatabase,
    /// current_user / session_user / user / current_role → name
    CurrentUser,
    /// current_schema() → name ("public")
    CurrentSchema,
    /// pg_current_wal_lsn() etc. → pg_lsn
    WalLsn(WalLsnKind),
    /// pg_wal_lsn_diff(pg_lsn, pg_lsn) → numeric
    WalLsnDiff,
    /// to_hex(int) → text
    ToHex,
    /// Trailing-space removal used for bpchar comparisons (internal).
    BpcharStrip,
}

/// A resolved function: what to call, what to coerce the arguments to, and
/// the result type.
#[derive(Clone, Debug, PartialEq)]
pub struct FuncSig {
    /// The function.
    pub func: Func,
    /// Target type per argument (the binder coerces each argument to it).
    pub arg_types: Vec<SqlType>,
    /// Result type.
    pub ret: SqlType,
}

/// A built-in aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// count(*)
    CountStar,
    /// count(x): non-NULL inputs
    Count,
    /// sum(x)
    Sum,
    /// min(x)
    Min,
    /// max(x)
    Max,
    /// avg(x)
    Avg,
    /// bool_and(x) / every(x)
    BoolAnd,
    /// bool_or(x)
    BoolOr,
}

impl AggFunc {
    /// The aggregate named `name` (lower case), if it is one.
    pub fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "avg" => AggFunc::Avg,
            "bool_and" | "every" => AggFunc::BoolAnd,
            "bool_or" => AggFunc::BoolOr,
            _ => return None,
        })
    }

    /// The name as written in SQL (for messages and column names).
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::CountStar | AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
            AggFunc::BoolAnd => "bool_and",
            AggFunc::BoolOr => "bool_or",
        }
    }

    /// PostgreSQL's result type for an input type (42883 if the aggregate
    /// does not accept it). `arg` is ignored for count(*). An `unknown`
    /// argument is treated as text.
    pub fn result_type(self, arg: SqlType) -> PgResult<SqlType> {
        use SqlType as T;
        let arg = if arg == T::Unknown { T::Text } else { arg };
        let no = || {
            Err(PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {}({}) does not exist", self.name(), arg.pg_base_name()),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
        };
        Ok(match self {
            AggFunc::CountStar | AggFunc::Count => T::Int8,
            AggFunc::Sum => match arg {
                T::Int2 | T::Int4 => T::Int8,
                T::Int8 | T::Numeric(_) => T::NUMERIC,
                T::Float8 => T::Float8,
                _ => return no(),
            },
            AggFunc::Avg => match arg {
                T::Int2 | T::Int4 | T::Int8 | T::Numeric(_) => T::NUMERIC,
                T::Float8 => T::Float8,
                _ => return no(),
            },
            AggFunc::Min | AggFunc::Max => match arg {
                T::Void | T::Snapshot | T::Bool => return no(),
                T::Char(_) => T::Char(0),
                T::Varchar(_) | T::Name => T::Text,
                other => other.base(),
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => match arg {
                T::Bool => T::Bool,
                _ => return no(),
            },
        })
    }
}

/// Running state of one aggregate over one group.
#[derive(Clone, Debug)]
pub struct Accumulator {
    func: AggFunc,
    arg_ty: SqlType,
    state: AccState,
    count: i64,
}

#[derive(Clone, Debug)]
enum AccState {
    None,
    Int(i128),
    Num(Numeric),
    Float(f64),
    Val(Value),
    Bool(bool),
}

impl Accumulator {
    /// A fresh accumulator for `func` over inputs of type `arg_ty`.
    pub fn new(func: AggFunc, arg_ty: SqlType) -> Accumulator {
        Accumulator {
            func,
            arg_ty,
            state: AccState::None,
            count: 0,
        }
    }

    /// The aggregate.
    pub fn func(&self) -> AggFunc {
        self.func
    }

    /// Feeds one input value (count(*) ignores it; NULLs are skipped otherwise).
    pub fn update(&mut self, v: &Value) -> PgResult<()> {
        if self.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match self.func {
            AggFunc::CountStar | AggFunc::Count => {}
            AggFunc::Sum | AggFunc::Avg => {
                let state = std::mem::replace(&mut self.state, AccState::None);
                self.state = match (state, v) {
                    (AccState::None, Value::Int2(_) | Value::Int4(_) | Value::Int8(_)) => {
                        AccState::Int(v.as_i64().unwrap_or(0) as i128)
                    }
                    (AccState::Int(a), Value::Int2(_) | Value::Int4(_) | Value::Int8(_)) => {
                        AccState::Int(a.checked_add(v.as_i64().unwrap_or(0) as i128).ok_or_else(
                            || {
                                PgError::new(
                                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                                    "value overflows numeric format",
                                )
                            },
                        )?)
                    }
                    (AccState::None, Value::Numeric(n)) => AccState::Num(*n),
                    (AccState::Num(a), Value::Numeric(n)) => AccState::Num(a.checked_add(*n)?),
                    (AccState::None, Value::Float8(f)) => AccState::Float(*f),
                    (AccState::Float(a), Value::Float8(f)) => AccState::Float(a + f),
                    (_, other) => {
                        return Err(PgError::internal(format!(
                            "{}: unexpected input of type {}",
                            self.func.name(),
                            other.sql_type()
                        )))
                    }
                };
            }
            AggFunc::Min | AggFunc::Max => {
                let replace = match &self.state {
                    AccState::Val(cur) => {
                        let o = cmp_sql(v, cur).unwrap_or(Ordering::Equal);
                        (self.func == AggFunc::Min && o == Ordering::Less)
                            || (self.func == AggFunc::Max && o == Ordering::Greater)
                    }
                    _ => true,
                };
                if replace {
                    self.state = AccState::Val(v.clone());
                }
            }
            AggFunc::BoolAnd | AggFunc::BoolOr => {
                let b = v.as_bool().unwrap_or(false);
                self.state = AccState::Bool(match self.state {
                    AccState::Bool(a) if self.func == AggFunc::BoolAnd => a && b,
                    AccState::Bool(a) => a || b,
                    _ => b,
                });
            }
        }
        Ok(())
    }

    /// The aggregate's result (count of nothing = 0, others NULL).
    pub fn finish(&self) -> PgResult<Value> {
        let overflow = || PgError::new(sqlstate::NUMERIC_VALUE_OUT_OF_RANGE, "bigint out of range");
        Ok(match self.func {
            AggFunc::CountStar | AggFunc::Count => Value::Int8(self.count),
            AggFunc::Sum => match &self.state {
                AccState::None => Value::Null,
                AccState::Int(a) if matches!(self.arg_ty, SqlType::Int2 | SqlType::Int4) => {
                    Value::Int8(i64::try_from(*a).map_err(|_| overflow())?)
                }
                AccState::Int(a) => Value::Numeric(Numeric::from_i128(*a)),
                AccState::Num(n) => Value::Numeric(*n),
                AccState::Float(f) => Value::Float8(*f),
                _ => Value::Null,
            },
            AggFunc::Avg => match &self.state {
                AccState::None => Value::Null,
                AccState::Int(a) => Value::Numeric(
                    Numeric::from_i128(*a).checked_div(Numeric::from_i64(self.count))?,
                ),
                AccState::Num(n) => Value::Numeric(n.checked_div(Numeric::from_i64(self.count))?),
                AccState::Float(f) => Value::Float8(f / self.count as f64),
                _ => Value::Null,
            },
            AggFunc::Min | AggFunc::Max => match &self.state {
                AccState::Val(v) => v.clone(),
                _ => Value::Null,
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => match self.state {
                AccState::Bool(b) => Value::Bool(b),
                _ => Value::Null,
            },
        })
    }
}

/// PostgreSQL's error for a recovery control function (pg_promote) on a
/// node that is not in recovery.
pub fn not_in_recovery() -> PgError {
    PgError::new(
        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
        "recovery is not in progress",
    )
    .with_hint("Recovery control functions can only be executed during recovery.")
}

fn no_function(name: &str, args: &[SqlType]) -> PgError {
    let list: Vec<&str> = args.iter().map(|t| t.pg_base_name()).collect();
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("function {}({}) does not exist", name, list.join(", ")),
    )
    .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

/// Position of a type in the numeric promotion order (int2 < int4 < int8 <
/// numeric < float8), None outside the numeric category.
pub fn numeric_rank(t: SqlType) -> Option<u8> {
    Some(match t {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        SqlType::Int8 => 2,
        SqlType::Numeric(_) => 3,
        SqlType::Float8 => 4,
        _ => return None,
    })
}

/// True if a value of type `from` may be implicitly coerced to `to`
/// (PostgreSQL's implicit casts among the types we have).
pub fn can_coerce_implicit(from: SqlType, to: SqlType) -> bool {
    use SqlType as T;
    if from.base() == to.base() || from == T::Unknown {
        return true;
    }
    if let (Some(a), Some(b)) = (numeric_rank(from), numeric_rank(to)) {
        return a <= b;
    }
    if from.is_text_like() && to.is_text_like() {
        return true;
    }
    matches!(
        (from, to),
        (T::Timestamp, T::TimestampTz) | (T::Int2 | T::Int4 | T::Int8, T::Oid) | (T::Xid8, T::Xid8)
    )
}

/// The common type of several expressions (CASE branches, COALESCE,
/// GREATEST, IN lists): unknowns take the others' type (text if all are
/// unknown), numerics promote, text-likes unify to text. None if there is
/// no common type (the caller reports 42804).
pub fn common_type(types: &[SqlType]) -> Option<SqlType> {
    let mut cur: Option<SqlType> = None;
    for &t in types {
        if t == SqlType::Unknown {
            continue;
        }
        cur = Some(match cur {
            None => t,
            Some(c) if c == t => c,
            Some(c) => {
                if let (Some(a), Some(b)) = (numeric_rank(c), numeric_rank(t)) {
                    if a >= b {
                        c.base()
                    } else {
                        t.base()
                    }
                } else if c.is_text_like() && t.is_text_like() {
                    if c.base() == t.base() {
                        c.base()
                    } else {
                        SqlType::Text
                    }
                } else if matches!(
                    (c, t),
                    (SqlType::Timestamp, SqlType::TimestampTz)
                        | (SqlType::TimestampTz, SqlType::Timestamp)
                ) {
                    SqlType::TimestampTz
                } else {
                    return None;
                }
            }
        });
    }
    Some(cur.unwrap_or(SqlType::Text))
}

/// Resolves a scalar function by (lower-case) name and argument types.
/// Unknown-typed arguments (string literals, untyped parameters) match any
/// parameter type. 42883 `function foo(integer) does not exist` otherwise.
/// (`pg_typeof` is handled by the binder, which knows argument types.)
pub fn resolve_function(name: &str, args: &[SqlType]) -> PgResult<FuncSig> {
    use SqlType as T;
    let n = args.len();
    let sig = |func: Func, arg_types: &[SqlType], ret: SqlType| -> PgResult<FuncSig> {
        if arg_types.len() != args.len()
            || !args
                .iter()
                .zip(arg_types)
                .all(|(a, p)| can_coerce_implicit(*a, *p))
        {
            return Err(no_function(name, args));
        }
        Ok(FuncSig {
            func,
            arg_types: arg_types.to_vec(),
            ret,
        })
    };
    let none = |func: Func, ret: SqlType| sig(func, &[], ret);
    // Numeric functions choose their signature from the argument's category.
    let num_arg = |allow_int: bool| -> Option<SqlType> {
        match args.first().copied() {
            Some(T::Unknown) => Some(T::Float8),
            Some(t @ (T::Int2 | T::Int4 | T::Int8)) => Some(if allow_int { t } else { T::Float8 }),
            Some(T::Numeric(_)) => Some(T::NUMERIC),
            Some(T::Float8) => Some(T::Float8),
            _ => None,
        }
    };
    match name {
        "length" | "char_length" | "character_length" if n == 1 => {
            if matches!(args[0], T::Char(_)) {
                sig(Func::LengthBpchar, &[T::Char(0)], T::Int4)
            } else {
                sig(Func::Length, &[T::Text], T::Int4)
            }
        }
        "octet_length" => sig(Func::OctetLength, &[T::Text], T::Int4),
        "repeat" => sig(Func::Repeat, &[T::Text, T::Int4], T::Text),
        "upper" => sig(Func::Upper, &[T::Text], T::Text),
        "lower" => sig(Func::Lower, &[T::Text], T::Text),
        "substr" | "substring" if n == 2 => sig(Func::Substr2, &[T::Text, T::Int4], T::Text),
        "substr" | "substring" => sig(Func::Substr3, &[T::Text, T::Int4, T::Int4], T::Text),
        "concat" => Ok(FuncSig {
            func: Func::Concat,
            arg_types: args
                .iter()
                .map(|t| if *t == T::Unknown { T::Text } else { *t })
                .collect(),
            ret: T::Text,
        }),
        "btrim" | "trim" if n == 1 => sig(Func::Btrim, &[T::Text], T::Text),
        "btrim" | "trim" => sig(Func::Btrim, &[T::Text, T::Text], T::Text),
        "ltrim" if n == 1 => sig(Func::Ltrim, &[T::Text], T::Text),
        "ltrim" => sig(Func::Ltrim, &[T::Text, T::Text], T::Text),
        "rtrim" if n == 1 => sig(Func::Rtrim, &[T::Text], T::Text),
        "rtrim" => sig(Func::Rtrim, &[T::Text, T::Text], T::Text),
        "replace" => sig(Func::Replace, &[T::Text, T::Text, T::Text], T::Text),
        "strpos" => sig(Func::Strpos, &[T::Text, T::Text], T::Int4),
        "left" => sig(Func::Left, &[T::Text, T::Int4], T::Text),
        "right" => sig(Func::Right, &[T::Text, T::Int4], T::Text),
        "abs" if n == 1 => match num_arg(true) {
            Some(t) => sig(Func::Abs, &[t], t),
            None => Err(no_function(name, args)),
        },
        "coalesce" | "greatest" | "least" | "nullif" if n >= 1 => {
            if name == "nullif" && n != 2 {
                return Err(no_function(name, args));
            }
            let t = common_type(args).ok_or_else(|| {
                PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "{} types {} and {} cannot be matched",
                        name.to_uppercase(),
                        args[0].pg_base_name(),
                        args.iter()
                            .find(|a| **a != args[0])
                            .unwrap_or(&args[0])
                            .pg_base_name()
                    ),
                )
            })?;
            let func = match name {
                "coalesce" => Func::Coalesce,
                "greatest" => Func::Greatest,
                "least" => Func::Least,
                _ => Func::Nullif,
            };
            Ok(FuncSig {
                func,
                arg_types: vec![t; n],
                ret: t,
            })
        }
        "round" | "trunc" if n == 2 => sig(
            if name == "round" {
                Func::Round
            } else {
                Func::Trunc
            },
            &[T::NUMERIC, T::Int4],
            T::NUMERIC,
        ),
        "round" | "floor" | "ceil" | "ceiling" | "trunc" if n == 1 => match num_arg(false) {
            Some(t) => sig(
                match name {
                    "round" => Func::Round,
                    "floor" => Func::Floor,
                    "trunc" => Func::Trunc,
                    _ => Func::Ceil,
                },
                &[t],
                t,
            ),
            None => Err(no_function(name, args)),
        },
        "sqrt" => sig(Func::Sqrt, &[T::Float8], T::Float8),
        "mod" if n == 2 => {
            let t = common_type(args).filter(|t| t.is_integer() || matches!(t, T::Numeric(_)));
            match t {
                Some(t) if args.iter().all(|a| can_coerce_implicit(*a, t)) => {
                    sig(Func::Mod, &[t, t], t)
                }
                _ => Err(no_function(name, args)),
            }
        }
        "random" => none(Func::Random, T::Float8),
        "now" | "current_timestamp" | "transaction_timestamp" => none(Func::Now, T::TimestampTz),
        "statement_timestamp" => none(Func::StatementTimestamp, T::TimestampTz),
        "clock_timestamp" => none(Func::ClockTimestamp, T::TimestampTz),
        "localtimestamp" => none(Func::LocalTimestamp, T::Timestamp),
        "version" => none(Func::Version, T::Text),
        "pg_sleep" => sig(Func::PgSleep, &[T::Float8], T::Void),
        "txid_current" => none(Func::TxidCurrent, T::Int8),
        "txid_current_if_assigned" => none(Func::TxidCurrentIfAssigned, T::Int8),
        "pg_current_xact_id" => none(Func::PgCurrentXactId, T::Xid8),
        "pg_current_xact_id_if_assigned" => none(Func::PgCurrentXactIdIfAssigned, T::Xid8),
        "pg_current_snapshot" | "txid_current_snapshot" => none(Func::CurrentSnapshot, T::Snapshot),
        "pg_snapshot_xmin" => sig(Func::SnapshotXmin { int8: false }, &[T::Snapshot], T::Xid8),
        "pg_snapshot_xmax" => sig(Func::SnapshotXmax { int8: false }, &[T::Snapshot], T::Xid8),
        "txid_snapshot_xmin" => sig(Func::SnapshotXmin { int8: true }, &[T::Snapshot], T::Int8),
        "txid_snapshot_xmax" => sig(Func::SnapshotXmax { int8: true }, &[T::Snapshot], T::Int8),
        "pg_is_in_recovery" => none(Func::PgIsInRecovery, T::Bool),
        "pg_promote" if n <= 2 => sig(Func::PgPromote, &[T::Bool, T::Int4][..n], T::Bool),
        "pg_relation_size" | "pg_table_size" | "pg_total_relation_size" if n == 1 => {
            sig(Func::PgRelationSize, &[T::Text], T::Int8)
        }
        "current_setting" if n == 1 => sig(Func::CurrentSetting, &[T::Text], T::Text),
        "current_setting" => sig(Func::CurrentSettingMissingOk, &[T::Text, T::Bool], T::Text),
        "pg_backend_pid" => none(Func::PgBackendPid, T::Int4),
        "pg_reload_conf" => none(Func::PgReloadConf, T::Bool),
        "current_database" | "current_catalog" => none(Func::CurrentDatabase, T::Name),
        "current_user" | "session_user" | "user" | "current_role" => {
            none(Func::CurrentUser, T::Name)
        }
        "current_schema" => none(Func::CurrentSchema, T::Name),
        "pg_current_wal_lsn" => none(Func::WalLsn(WalLsnKind::Current), T::PgLsn),
        "pg_current_wal_insert_lsn" => none(Func::WalLsn(WalLsnKind::Insert), T::PgLsn),
        "pg_current_wal_flush_lsn" => none(Func::WalLsn(WalLsnKind::Flush), T::PgLsn),
        "pg_last_wal_receive_lsn" => none(Func::WalLsn(WalLsnKind::Receive), T::PgLsn),
        "pg_last_wal_replay_lsn" => none(Func::WalLsn(WalLsnKind::Replay), T::PgLsn),
        "pg_wal_lsn_diff" => sig(Func::WalLsnDiff, &[T::PgLsn, T::PgLsn], T::NUMERIC),
        "to_hex" if n == 1 => match args[0] {
            T::Int8 => sig(Func::ToHex, &[T::Int8], T::Text),
            _ => sig(Func::ToHex, &[T::Int4], T::Text),
        },
        _ => Err(no_function(name, args)),
    }
}

fn text_arg(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn int_arg(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn too_large() -> PgError {
    PgError::new("54000", "requested length too large")
}

/// Characters of `s` from 1-based position `start` for `len` characters
/// (None = to the end), as PostgreSQL's text_substr.
fn substr(s: &str, start: i64, len: Option<i64>) -> PgResult<String> {
    let end = match len {
        Some(l) if l < 0 => {
            return Err(PgError::new(
                "22011",
                "negative substring length not allowed",
            ));
        }
        Some(l) => Some(start.saturating_add(l)),
        None => None,
    };
    let from = start.max(1);
    if let Some(e) = end {
        if e <= from {
            return Ok(String::new());
        }
    }
    let skip = (from - 1) as usize;
    Ok(match end {
        Some(e) => s.chars().skip(skip).take((e - from) as usize).collect(),
        None => s.chars().skip(skip).collect(),
    })
}

fn trim_chars<'a>(s: &'a str, set: Option<&str>, left: bool, right: bool) -> &'a str {
    let pred = |c: char| match set {
        Some(set) => set.contains(c),
        None => c == ' ',
    };
    let mut t = s;
    if left {
        t = t.trim_start_matches(pred);
    }
    if right {
        t = t.trim_end_matches(pred);
    }
    t
}

fn float_result(f: f64) -> PgResult<Value> {
    if f.is_infinite() {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow",
        ));
    }
    Ok(Value::Float8(f))
}

/// Calls a resolved function on evaluated arguments (already coerced to the
/// signature's types). Strict functions return NULL on any NULL argument.
pub fn call(func: Func, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    // Non-strict functions first.
    match func {
        Func::Coalesce => {
            return Ok(args
                .iter()
                .find(|v| !v.is_null())
                .cloned()
                .unwrap_or(Value::Null))
        }
        Func::Concat => {
            let mut out = String::new();
            for a in args {
                if !a.is_null() {
                    match a {
                        Value::Text(s) => out.push_str(s),
                        other => out.push_str(&other.to_text_string()),
                    }
                }
            }
            return Ok(Value::Text(Arc::from(out)));
        }
        Func::Greatest | Func::Least => {
            let mut best: Option<&Value> = None;
            for a in args.iter().filter(|v| !v.is_null()) {
                let better = match best {
                    None => true,
                    Some(b) => {
                        let o = cmp_sql(a, b).unwrap_or(Ordering::Equal);
                        if func == Func::Greatest {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    }
                };
                if better {
                    best = Some(a);
                }
            }
            return Ok(best.cloned().unwrap_or(Value::Null));
        }
        Func::Nullif => {
            let (a, b) = (&args[0], &args[1]);
            return Ok(if cmp_sql(a, b) == Some(Ordering::Equal) {
                Value::Null
            } else {
                a.clone()
            });
        }
        Func::CurrentSettingMissingOk => {
            if args[0].is_null() {
                return Ok(Value::Null);
            }
            let name = text_arg(&args[0]).to_ascii_lowercase();
            return Ok(match ctx.setting(&name) {
                Some(v) => Value::Text(Arc::from(v)),
                None if args[1].as_bool() == Some(true) => Value::Null,
                None => {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{}\"", name),
                    ))
                }
            });
        }
        _ => {}
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let text = |s: String| Value::Text(Arc::from(s));
    Ok(match func {
        Func::Length => Value::Int4(text_arg(&args[0]).chars().count() as i32),
        Func::LengthBpchar => {
            Value::Int4(text_arg(&args[0]).trim_end_matches(' ').chars().count() as i32)
        }
        Func::OctetLength => Value::Int4(text_arg(&args[0]).len() as i32),
        Func::BpcharStrip => Value::Text(Arc::from(text_arg(&args[0]).trim_end_matches(' '))),
        Func::Repeat => {
            let s = text_arg(&args[0]);
            let n = int_arg(&args[1]).max(0) as usize;
            if s.len().saturating_mul(n) > (1 << 30) - 1 {
                return Err(too_large());
            }
            text(s.repeat(n))
        }
        Func::Upper => text(text_arg(&args[0]).to_uppercase()),
        Func::Lower => text(text_arg(&args[0]).to_lowercase()),
        Func::Substr2 => text(substr(text_arg(&args[0]), int_arg(&args[1]), None)?),
        Func::Substr3 => text(substr(
            text_arg(&args[0]),
            int_arg(&args[1]),
            Some(int_arg(&args[2])),
        )?),
        Func::Btrim | Func::Ltrim | Func::Rtrim => {
            let set = args.get(1).map(text_arg);
            let s = text_arg(&args[0]);
            let t = trim_chars(s, set, func != Func::Rtrim, func != Func::Ltrim);
            Value::Text(Arc::from(t))
        }
        Func::Replace => {
            let from = text_arg(&args[1]);
            if from.is_empty() {
                args[0].clone()
            } else {
                text(text_arg(&args[0]).replace(from, text_arg(&args[2])))
            }
        }
        Func::Strpos => {
            let h = text_arg(&args[0]);
            let n = text_arg(&args[1]);
            Value::Int4(match h.find(n) {
                Some(byte) => h[..byte].chars().count() as i32 + 1,
                None => 0,
            })
        }
        Func::Left | Func::Right => {
            let s = text_arg(&args[0]);
            let n = int_arg(&args[1]);
            let count = s.chars().count() as i64;
            let take = if n >= 0 {
                n.min(count)
            } else {
                (count + n).max(0)
            };
            let out: String = if func == Func::Left {
                s.chars().take(take as usize).collect()
            } else {
                s.chars().skip((count - take) as usize).collect()
            };
            text(out)
        }
        Func::Abs => match &args[0] {
            Value::Int2(v) => Value::Int2(
                v.checked_abs()
                    .ok_or_else(|| pgtypes::value::int_out_of_range(SqlType::Int2))?,
            ),
            Value::Int4(v) => Value::Int4(
                v.checked_abs()
                    .ok_or_else(|| pgtypes::value::int_out_of_range(SqlType::Int4))?,
            ),
            Value::Int8(v) => Value::Int8(
                v.checked_abs()
                    .ok_or_else(|| pgtypes::value::int_out_of_range(SqlType::Int8))?,
            ),
            Value::Numeric(n) => Value::Numeric(n.abs()?),
            Value::Float8(f) => Value::Float8(f.abs()),
            other => return Err(PgError::internal(format!("abs of {}", other.sql_type()))),
        },
        Func::Round | Func::Floor | Func::Ceil | Func::Trunc => match &args[0] {
            Value::Float8(f) => Value::Float8(match func {
                // float8 round() is rint(): half to even, as PostgreSQL.
                Func::Round => f.round_ties_even(),
                Func::Floor => f.floor(),
                Func::Ceil => f.ceil(),
                _ => f.trunc(),
            }),
            Value::Numeric(n) => {
                let places = args.get(1).map(int_arg).unwrap_or(0).clamp(-38, 38);
                let keep = places.max(0) as u16;
                let r = match func {
                    Func::Round => n.rescale(keep)?,
                    _ => {
                        // Truncate toward zero / floor / ceil at `keep` places.
                        let t = if n.scale() > keep {
                            let f = 10i128.pow((n.scale() - keep) as u32);
                            let m = n.mantissa();
                            let q = m / f;
                            let rem = m % f;
                            let q = match func {
                                Func::Floor if rem < 0 => q - 1,
                                Func::Ceil if rem > 0 => q + 1,
                                _ => q,
                            };
                            Numeric::new(q, keep)?
                        } else {
                            *n
                        };
                        if args.len() == 2 {
                            t.rescale(keep)?
                        } else {
                            t
                        }
                    }
                };
                Value::Numeric(r)
            }
            other => other.clone(),
        },
        Func::Sqrt => match &args[0] {
            Value::Float8(f) if *f < 0.0 => {
                return Err(PgError::new(
                    "2201F",
                    "cannot take square root of a negative number",
                ))
            }
            Value::Float8(f) => Value::Float8(f.sqrt()),
            other => other.clone(),
        },
        Func::Mod => crate::expr::arith(crate::expr::BinOp::Mod, &args[0], &args[1])?,
        Func::Random => Value::Float8(ctx.random()),
        Func::Now => Value::TimestampTz(ctx.transaction_timestamp()),
        Func::StatementTimestamp => Value::TimestampTz(ctx.statement_timestamp()),
        Func::ClockTimestamp => Value::TimestampTz(ctx.clock_timestamp()),
        Func::LocalTimestamp => Value::Timestamp(ctx.transaction_timestamp()),
        Func::Version => Value::Text(Arc::from(VERSION_STRING)),
        Func::PgSleep => {
            let secs = match &args[0] {
                Value::Float8(f) => *f,
                other => other.as_i64().unwrap_or(0) as f64,
            };
            ctx.sleep(if secs.is_nan() { 0.0 } else { secs })?;
            Value::Void
        }
        Func::TxidCurrent => Value::Int8(
            i64::try_from(ctx.txid_current()?)
                .map_err(|_| PgError::internal("xid out of range"))?,
        ),
        Func::TxidCurrentIfAssigned => match ctx.txid_current_if_assigned() {
            Some(x) => Value::Int8(x as i64),
            None => Value::Null,
        },
        Func::PgCurrentXactId => Value::Xid8(ctx.txid_current()?),
        Func::PgCurrentXactIdIfAssigned => match ctx.txid_current_if_assigned() {
            Some(x) => Value::Xid8(x),
            None => Value::Null,
        },
        Func::CurrentSnapshot => Value::Snapshot(Arc::new(ctx.current_snapshot()?)),
        Func::SnapshotXmin { int8 } | Func::SnapshotXmax { int8 } => match &args[0] {
            Value::Snapshot(s) => {
                let x = if matches!(func, Func::SnapshotXmin { .. }) {
                    s.xmin
                } else {
                    s.xmax
                };
                if int8 {
                    Value::Int8(x as i64)
                } else {
                    Value::Xid8(x)
                }
            }
            _ => Value::Null,
        },
        Func::PgIsInRecovery => Value::Bool(ctx.is_in_recovery()),
        Func::PgPromote => {
            let wait = args.first().and_then(Value::as_bool).unwrap_or(true);
            let secs = match args.get(1) {
                Some(Value::Int4(s)) => *s,
                _ => 60,
            };
            Value::Bool(ctx.promote(wait, secs)?)
        }
        Func::PgRelationSize => Value::Int8(ctx.relation_size(text_arg(&args[0]))?),
        Func::CurrentSetting => {
            let name = text_arg(&args[0]).to_ascii_lowercase();
            match ctx.setting(&name) {
                Some(v) => Value::Text(Arc::from(v)),
                None => {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{}\"", name),
                    ))
                }
            }
        }
        Func::PgBackendPid => Value::Int4(ctx.backend_pid()),
        Func::PgReloadConf => {
            // As PostgreSQL: signal the postmaster and return at once.
            server::reload::request();
            Value::Bool(true)
        }
        Func::CurrentDatabase => text(ctx.current_database()),
        Func::CurrentUser => text(ctx.current_user()),
        Func::CurrentSchema => Value::text("public"),
        Func::WalLsn(which) => match ctx.wal_lsn(which)? {
            Some(l) => Value::PgLsn(l),
            None => Value::Null,
        },
        Func::WalLsnDiff => match (&args[0], &args[1]) {
            (Value::PgLsn(a), Value::PgLsn(b)) => {
                Value::Numeric(Numeric::from_i128(*a as i128 - *b as i128))
            }
            _ => Value::Null,
        },
        Func::ToHex => {
            let v = match &args[0] {
                Value::Int4(i) => *i as u32 as u64,
                other => other.as_i64().unwrap_or(0) as u64,
            };
            text(format!("{:x}", v))
        }
        Func::Coalesce
        | Func::Concat
        | Func::Greatest
        | Func::Least
        | Func::Nullif
        | Func::CurrentSettingMissingOk => Value::Null,
    })
}

/// Float helper exposed for the evaluator: an overflow check on a float result.
pub fn check_float(f: f64) -> PgResult<Value> {
    float_result(f)
}
