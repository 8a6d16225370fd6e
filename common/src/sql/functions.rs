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
//!
//! OWNER: sqlv.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{sqlstate, PgError, PgResult};
use crate::sql::datetime;
use crate::sql::numeric::Numeric;
use crate::sql::types::SqlType;
use crate::sql::value::{cmp_sql, PgSnapshot, Value};

/// `version()`'s result.
pub const VERSION_STRING: &str = concat!(
    "PostgreSQL 15.4 (hotpair ",
    env!("CARGO_PKG_VERSION"),
    ") on x86_64-pc-linux-gnu, compiled by rustc, 64-bit"
);

/// Which WAL position a `pg_*_lsn()` function asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalLsnKind {
    /// pg_current_wal_lsn(): written up to (PostgreSQL: write position).
    Current,
    /// pg_current_wal_insert_lsn()
    Insert,
    /// pg_current_wal_flush_lsn()
    Flush,
    /// pg_last_wal_receive_lsn() (standby; NULL on a primary)
    Receive,
    /// pg_last_wal_replay_lsn() (standby; NULL on a primary)
    Replay,
}

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
    /// current_user / session_user / user.
    fn current_user(&self) -> String {
        "postgres".to_string()
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
    /// md5(text) is not provided; abs(x) → same type
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
    /// pg_snapshot_xmin(snapshot) / txid_snapshot_xmin → xid8/int8
    SnapshotXmin,
    /// pg_snapshot_xmax(snapshot) / txid_snapshot_xmax
    SnapshotXmax,
    /// pg_is_in_recovery() → bool
    PgIsInRecovery,
    /// current_setting(text) → text
    CurrentSetting,
    /// current_setting(text, bool missing_ok) → text
    CurrentSettingMissingOk,
    /// pg_backend_pid() → int4
    PgBackendPid,
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
    /// pg_typeof(any) → text (regtype printed as its name)
    PgTypeof,
    /// to_char-less helper: pg_postmaster_start_time is not provided;
    /// to_hex(int) → text
    ToHex,
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
                    (AccState::Num(a), Value::Numeric(n)) => AccState::Num(a.add(*n)?),
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
                AccState::Int(a) => {
                    Value::Numeric(Numeric::from_i128(*a).div(Numeric::from_i64(self.count))?)
                }
                AccState::Num(n) => Value::Numeric(n.div(Numeric::from_i64(self.count))?),
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

/// Resolves a scalar function by (lower-case) name and argument types.
/// Unknown-typed arguments (string literals, untyped parameters) match any
/// parameter type. 42883 `function foo(integer) does not exist` otherwise.
pub fn resolve_function(name: &str, args: &[SqlType]) -> PgResult<FuncSig> {
    let _ = (name, args);
    todo!("sqlv")
}

/// Calls a resolved function on evaluated arguments (already coerced to the
/// signature's types). Strict functions return NULL on any NULL argument.
pub fn call(func: Func, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    let _ = (func, args, ctx, Arc::<str>::from(""));
    todo!("sqlv")
}
