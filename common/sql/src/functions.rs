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

use pgtypes::array::{array_value, ArrayValue};
use pgtypes::datetime;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::formatting;
use pgtypes::interval::{self, Interval};
use pgtypes::numeric::Numeric;
use pgtypes::sqltype::{ArrayElem, RegKind, SqlType};
use pgtypes::timestamp::{self as ts_fields, TimeKind};
use pgtypes::value::{cmp_sql, PgSnapshot, Value};

use crate::expr::BinOp;
use crate::regexp;

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
    /// pg_reload_conf(): asks the node to re-read its configuration files
    /// (as SIGHUP does). Default: true, nothing to reload.
    fn reload_conf(&self) -> bool {
        true
    }
    /// pg_stat_reset_shared(target): zeroes one group of cluster-wide
    /// counters ("io": `pg_stat_io`). Default: 0A000 (no node).
    fn reset_shared_stats(&mut self, target: &str) -> PgResult<()> {
        let _ = target;
        Err(PgError::unsupported("statistics are not available here"))
    }
    /// pg_cancel_backend(pid): sets that session's cancel flag, as a
    /// CancelRequest does; false if no session has the pid. Default: no
    /// sessions.
    fn cancel_backend(&mut self, pid: i32) -> PgResult<bool> {
        let _ = pid;
        Ok(false)
    }
    /// pg_terminate_backend(pid, timeout): ends that session with FATAL
    /// 57P01; with a timeout (milliseconds), waits for it to be gone.
    /// Default: no sessions.
    fn terminate_backend(&mut self, pid: i32, timeout_ms: i64) -> PgResult<bool> {
        let _ = (pid, timeout_ms);
        Ok(false)
    }
    /// A WARNING or NOTICE for the client, sent when the statement is
    /// done. Default: dropped.
    fn notice(&mut self, notice: PgError) {
        let _ = notice;
    }
    /// pg_promote(wait, wait_seconds): asks a standby to promote; with
    /// `wait`, true once promoted or false after `wait_seconds`. Default:
    /// 55000, as on a primary.
    fn promote(&mut self, wait: bool, wait_seconds: i32) -> PgResult<bool> {
        let _ = (wait, wait_seconds);
        Err(not_in_recovery())
    }
    /// pg_create_physical_replication_slot: the slot's `restart_lsn` if
    /// WAL was reserved at once. Default: 0A000 (no node).
    fn create_physical_replication_slot(
        &mut self,
        name: &str,
        reserve: bool,
        temporary: bool,
    ) -> PgResult<Option<u64>> {
        let _ = (name, reserve, temporary);
        Err(PgError::unsupported(
            "replication slots are not available here",
        ))
    }
    /// pg_drop_replication_slot. Default: 0A000 (no node).
    fn drop_replication_slot(&mut self, name: &str) -> PgResult<()> {
        let _ = name;
        Err(PgError::unsupported(
            "replication slots are not available here",
        ))
    }
    /// nextval / currval / setval / lastval (`crate::sequence`). Default:
    /// 0A000 (no session).
    fn sequence(
        &mut self,
        f: SeqFunc,
        name: Option<&str>,
        value: Option<(i64, bool)>,
    ) -> PgResult<i64> {
        let _ = (f, name, value);
        Err(PgError::unsupported(
            "sequence functions are not available here",
        ))
    }
    /// pg_relation_size(regclass): bytes of the relation's main fork; NULL
    /// (None) if there is no relation with that OID, as in PostgreSQL.
    fn relation_size(&self, oid: u32) -> PgResult<Option<i64>> {
        let _ = oid;
        Ok(None)
    }
    /// pg_blocking_pids(pid): the processes whose transaction the session
    /// `pid` waits for. Default: none.
    fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        let _ = pid;
        Vec::new()
    }
    /// The statement's view of the catalog (`crate::pgcatalog`); None
    /// outside a session.
    fn pg_catalog(&self) -> Option<Arc<crate::pgcatalog::CatalogSnapshot>> {
        None
    }
    /// WAL positions for the pg_*_lsn() functions; None returns NULL.
    /// On a standby `Current`/`Insert`/`Flush` should raise 55000
    /// "recovery is in progress" (as PostgreSQL does) — return the error.
    fn wal_lsn(&self, which: WalLsnKind) -> PgResult<Option<u64>> {
        let _ = which;
        Ok(None)
    }
    /// pg_walfile_name(lsn): the segment file holding `lsn` on the
    /// current timeline; None returns NULL, and a standby returns 55000.
    fn walfile_name(&self, lsn: u64) -> PgResult<Option<String>> {
        let _ = lsn;
        Ok(None)
    }
    /// pg_backend_pid().
    /// The connection's (client, server) socket addresses, for
    /// inet_client_addr() and friends; None each where not a TCP session.
    fn connection_addrs(&self) -> (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>) {
        (None, None)
    }
    fn backend_pid(&self) -> i32 {
        0
    }
    /// current_user / current_role / user: the role SET ROLE chose, else
    /// the session user.
    fn current_user(&self) -> String {
        match self.setting("role") {
            Some(r) if r != "none" => r,
            _ => self.session_user(),
        }
    }
    /// session_user: the session's user (SET SESSION AUTHORIZATION moves
    /// it, SET ROLE does not).
    fn session_user(&self) -> String {
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
    /// The current value of an executor parameter (a correlated outer
    /// column of a subquery, or a nested loop's join key): see
    /// `crate::executor::subplan`. Default: none exist outside a query.
    fn exec_param(&self, slot: usize) -> PgResult<pgtypes::value::Value> {
        Err(PgError::internal(format!(
            "executor parameter {slot} is not set"
        )))
    }
    /// Evaluates subplan `id` of the running statement with its
    /// correlation values `args` and, for ANY/ALL, the left operand `lhs`.
    fn subplan(
        &mut self,
        id: usize,
        args: &[pgtypes::value::Value],
        lhs: &pgtypes::value::Value,
    ) -> PgResult<pgtypes::value::Value> {
        let _ = (args, lhs);
        Err(PgError::internal(format!("subplan {id} outside a query")))
    }
    /// Calls the user-defined function `oid` (`crate::fmgr`): its
    /// statements run under the session's transaction. Default: 0A000
    /// (no session to run them in).
    fn call_user_function(&mut self, oid: pgtypes::Oid, args: &[Value]) -> PgResult<Value> {
        let _ = (oid, args);
        Err(PgError::unsupported(
            "user-defined functions cannot be called here",
        ))
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

/// The four sequence functions (evaluated by `crate::sequence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeqFunc {
    /// nextval(name).
    Nextval,
    /// currval(name).
    Currval,
    /// setval(name, value [, is_called]).
    Setval,
    /// lastval().
    Lastval,
}

/// A built-in scalar function, resolved at bind time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// A function users created (CREATE FUNCTION), by pg_proc OID: run
    /// through [`EvalContext::call_user_function`] (`crate::fmgr`).
    User(pgtypes::Oid),
    /// enum_first(anyenum): the type's first label (the argument's value is ignored).
    EnumFirst(pgtypes::Oid),
    /// enum_last(anyenum).
    EnumLast(pgtypes::Oid),
    /// enum_range(anyenum [, anyenum]): every label, or those between two
    /// (a NULL bound is open).
    EnumRange(pgtypes::Oid),
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
    /// nextval(regclass) / currval / setval(regclass, int8 [, bool]) /
    /// lastval() → int8
    Sequence(SeqFunc),
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
    /// pg_reload_conf() → bool
    PgReloadConf,
    /// pg_stat_reset_shared(target text) → void
    PgStatResetShared,
    /// pg_create_physical_replication_slot(slot_name name,
    /// immediately_reserve bool DEFAULT false, temporary bool DEFAULT
    /// false) → record (slot_name name, lsn pg_lsn)
    PgCreatePhysicalReplicationSlot,
    /// pg_drop_replication_slot(slot_name name) → void
    PgDropReplicationSlot,
    /// pg_cancel_backend(pid)
    PgCancelBackend,
    /// pg_terminate_backend(pid, timeout int8 DEFAULT 0)
    PgTerminateBackend,
    /// pg_size_pretty(int8) → text: `8192 bytes`, `20 kB`, …
    PgSizePretty,
    /// A catalog function (`crate::pgcatalog::functions`).
    Catalog(crate::pgcatalog::functions::CatFunc),
    /// pg_relation_size(regclass) / pg_table_size → int8: bytes of the main
    /// fork (the bench's table MB/s)
    PgRelationSize,
    /// pg_database_size(name) → int8: the sum of the tables' sizes (one
    /// database; another name is 3D000).
    PgDatabaseSize,
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
    /// session_user.
    SessionUser,
    /// current_schema() → name ("public")
    CurrentSchema,
    /// pg_current_wal_lsn() etc. → pg_lsn
    WalLsn(WalLsnKind),
    /// pg_wal_lsn_diff(pg_lsn, pg_lsn) → numeric
    WalLsnDiff,
    WalFileName,
    /// to_hex(int) → text
    ToHex,
    /// Trailing-space removal used for bpchar comparisons (internal).
    BpcharStrip,
    /// `ARRAY[a, b, …]` (elements already of the element type; NULLs kept)
    MakeArray(ArrayElem),
    /// `ARRAY[ARRAY[…], …]`: sub-arrays (NULLs skipped) stacked as one
    /// more dimension
    StackArrays(ArrayElem),
    /// `a[i][j]…` → element (NULL outside the bounds, or when the number of
    /// subscripts is not the array's dimensions)
    ArraySubscript,
    /// `a[lo:hi][lo:hi]…` → array (a pair per subscript; missing bounds are
    /// i32::MIN / i32::MAX)
    ArraySlice,
    /// `x op ANY(array)` / `x op ALL(array)`, with SQL's NULL rules
    ArrayCmp {
        /// The comparison.
        op: BinOp,
        /// ALL instead of ANY.
        all: bool,
    },
    /// `a @> b` (`contained: false`) / `a <@ b` (`contained: true`)
    ArrayContains {
        /// `<@`: the left array is contained in the right one.
        contained: bool,
    },
    /// `a && b`: the arrays share an element
    ArrayOverlap,
    /// `x AT TIME ZONE zone` (UTC names only): timestamp ↔ timestamptz
    AtTimeZone,
    /// make_timestamp(y, m, d, h, mi, s float8) → timestamp
    MakeTimestamp,
    /// array_length(anyarray, int4) → int4
    ArrayLength,
    /// array_lower(anyarray, int4) → int4
    ArrayLower,
    /// array_upper(anyarray, int4) → int4
    ArrayUpper,
    /// cardinality(anyarray) → int4
    Cardinality,
    /// array_ndims(anyarray) → int4
    ArrayNdims,
    /// array_dims(anyarray) → text (`[1:2][1:3]`)
    ArrayDims,
    /// array_append(anyarray, anyelement) / `array || elem`
    ArrayAppend,
    /// array_prepend(anyelement, anyarray) / `elem || array`
    ArrayPrepend,
    /// array_cat(anyarray, anyarray) / `array || array`
    ArrayCat,
    /// array_position(anyarray, anyelement) → int4
    ArrayPosition,
    /// array_remove(anyarray, anyelement): the array without the elements
    /// not distinct from the second argument
    ArrayRemove,
    /// array_replace(anyarray, anyelement, anyelement)
    ArrayReplace,
    /// array_to_string(anyarray, text[, null_text]) → text
    ArrayToString,
    /// string_to_array(text, delimiter[, null_text]) → text[]
    StringToArray,
    /// unnest(anyarray): a set-returning function; the planner expands it
    /// in a select list (called elsewhere it is 0A000)
    Unnest,
    /// date_trunc(text, timestamp/timestamptz/interval)
    DateTrunc,
    /// extract(field FROM x) → numeric (`numeric: true`) / date_part(text, x) → float8
    DatePart {
        /// extract's numeric result instead of date_part's float8.
        numeric: bool,
    },
    /// age(timestamp, timestamp) → interval
    Age,
    /// age(timestamp): from midnight of the current date
    AgeToday,
    /// make_date(int4, int4, int4) → date
    MakeDate,
    /// make_interval(years, months, weeks, days, hours, mins, secs)
    MakeInterval,
    /// current_date → date
    CurrentDate,
    /// justify_hours(interval) / justify_days(interval) / justify_interval
    Justify {
        /// Whole days out of hours.
        hours: bool,
        /// Whole months out of days.
        days: bool,
    },
    /// to_char(timestamp/timestamptz/interval/number, text) → text
    ToChar,
    /// to_date(text, text) → date
    ToDate,
    /// to_timestamp(text, text) → timestamptz
    ToTimestamp,
    /// to_timestamp(float8) → timestamptz (Unix epoch seconds)
    ToTimestampEpoch,
    /// to_number(text, text) → numeric
    ToNumber,
    /// split_part(text, text, int4) → text
    SplitPart,
    /// `~` `~*` `!~` `!~*`
    RegexMatch {
        /// `~*`
        icase: bool,
        /// `!~`
        negated: bool,
    },
    /// regexp_match(text, text[, flags]) → text[]
    RegexpMatch,
    /// regexp_replace(text, pattern, replacement[, flags]) → text
    RegexpReplace,
    /// substring(text from pattern) → text
    SubstringRegex,
    /// `x [NOT] SIMILAR TO pattern [ESCAPE e]` (args: x, pattern, escape)
    SimilarTo {
        /// NOT SIMILAR TO
        negated: bool,
    },
    /// `x [NOT] [I]LIKE pattern ESCAPE e` (args: x, pattern, escape)
    LikeEscape {
        /// ILIKE
        icase: bool,
        /// NOT LIKE
        negated: bool,
    },
    /// initcap(text)
    Initcap,
    /// lpad(text, int4[, fill])
    Lpad,
    /// rpad(text, int4[, fill])
    Rpad,
    /// concat_ws(sep, any…) (NULL arguments after the separator skipped)
    ConcatWs,
    /// format(fmt, any…): `%s`, `%I`, `%L`, `%%`, with `n$` positions,
    /// the `-` flag and widths
    Format,
    /// reverse(text)
    Reverse,
    /// starts_with(text, text) → bool
    StartsWith,
    /// translate(text, from, to)
    Translate,
    /// chr(int4) → text
    Chr,
    /// ascii(text) → int4
    Ascii,
    /// md5(text) → text (hex digest)
    Md5,
    /// md5(bytea) → text
    Md5Bytea,
    /// length(bytea) / octet_length(bytea) → int4 (bytes)
    ByteaLength,
    /// encode(bytea, format) → text (hex, base64, escape)
    Encode,
    /// decode(text, format) → bytea
    Decode,
    /// pg_column_size(any) → int4: the bytes the value takes as stored
    /// (a value read from a table reports its stored, compressed size)
    PgColumnSize,
    /// sign(float8 | numeric)
    Sign,
    /// power(a, b) and the `^` operator, float8 or numeric
    Power,
    /// A json / jsonb operator or function (`crate::jsonfuncs`).
    Json(crate::jsonfuncs::JsonFunc),
    /// gen_random_uuid() → uuid (version 4)
    GenRandomUuid,
    /// An inet / cidr operator or function (`crate::network`).
    Net(crate::network::NetFunc),
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
    /// string_agg(text, delimiter)
    StringAgg,
    /// array_agg(x) (NULL inputs kept)
    ArrayAgg,
    /// stddev_samp(x) / stddev(x)
    StddevSamp,
    /// stddev_pop(x)
    StddevPop,
    /// var_samp(x) / variance(x)
    VarSamp,
    /// var_pop(x)
    VarPop,
    /// json_agg(x) / jsonb_agg(x) (NULL inputs kept, as null)
    JsonAgg {
        /// jsonb_agg.
        jsonb: bool,
    },
    /// json_object_agg(k, v) / jsonb_object_agg(k, v)
    JsonObjectAgg {
        /// jsonb_object_agg.
        jsonb: bool,
    },
    /// percentile_cont(fraction) WITHIN GROUP (ORDER BY x): interpolated
    PercentileCont {
        /// The fraction is an array: one result per element.
        multi: bool,
    },
    /// percentile_disc(fraction) WITHIN GROUP (ORDER BY x): an input value
    PercentileDisc {
        /// The fraction is an array: one result per element.
        multi: bool,
    },
    /// mode() WITHIN GROUP (ORDER BY x): the most frequent value
    Mode,
    /// bit_and(x) / bit_or(x) / bit_xor(x) over integers
    Bit(BitOp),
    /// corr(y, x), covar_pop / covar_samp and the regr_* family over
    /// float8 pairs (rows with either NULL skipped)
    Regr(RegrFunc),
}

/// The result a two-variable statistics aggregate computes from its sums
/// (PostgreSQL's float8_regr_* final functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegrFunc {
    /// regr_count: the pairs (bigint)
    Count,
    /// regr_sxx: Σ(x − x̄)²
    Sxx,
    /// regr_syy: Σ(y − ȳ)²
    Syy,
    /// regr_sxy: Σ(x − x̄)(y − ȳ)
    Sxy,
    /// regr_avgx
    AvgX,
    /// regr_avgy
    AvgY,
    /// regr_r2: the square of the correlation
    R2,
    /// regr_slope of the least-squares line
    Slope,
    /// regr_intercept of the least-squares line
    Intercept,
    /// covar_pop
    CovarPop,
    /// covar_samp
    CovarSamp,
    /// corr
    Corr,
}

impl RegrFunc {
    fn name(self) -> &'static str {
        match self {
            RegrFunc::Count => "regr_count",
            RegrFunc::Sxx => "regr_sxx",
            RegrFunc::Syy => "regr_syy",
            RegrFunc::Sxy => "regr_sxy",
            RegrFunc::AvgX => "regr_avgx",
            RegrFunc::AvgY => "regr_avgy",
            RegrFunc::R2 => "regr_r2",
            RegrFunc::Slope => "regr_slope",
            RegrFunc::Intercept => "regr_intercept",
            RegrFunc::CovarPop => "covar_pop",
            RegrFunc::CovarSamp => "covar_samp",
            RegrFunc::Corr => "corr",
        }
    }

    /// The result from the sums [N, Σx, Sxx, Σy, Syy, Sxy].
    fn finish(self, m: &[f64; 6]) -> Value {
        let [n, sx, sxx, sy, syy, sxy] = *m;
        let f = |x: f64| Value::Float8(x);
        if self != RegrFunc::Count && (n < 1.0 || (self == RegrFunc::CovarSamp && n < 2.0)) {
            return Value::Null;
        }
        match self {
            RegrFunc::Count => Value::Int8(n as i64),
            RegrFunc::Sxx => f(sxx),
            RegrFunc::Syy => f(syy),
            RegrFunc::Sxy => f(sxy),
            RegrFunc::AvgX => f(sx / n),
            RegrFunc::AvgY => f(sy / n),
            RegrFunc::CovarPop => f(sxy / n),
            RegrFunc::CovarSamp => f(sxy / (n - 1.0)),
            RegrFunc::Corr if sxx == 0.0 || syy == 0.0 => Value::Null,
            RegrFunc::Corr => f(sxy / (sxx * syy).sqrt()),
            RegrFunc::R2 if sxx == 0.0 => Value::Null,
            RegrFunc::R2 if syy == 0.0 => f(1.0),
            RegrFunc::R2 => f((sxy * sxy) / (sxx * syy)),
            RegrFunc::Slope | RegrFunc::Intercept if sxx == 0.0 => Value::Null,
            RegrFunc::Slope => f(sxy / sxx),
            RegrFunc::Intercept => f((sy - sx * sxy / sxx) / n),
        }
    }
}

/// The operation of bit_and / bit_or / bit_xor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// bit_and
    And,
    /// bit_or
    Or,
    /// bit_xor
    Xor,
}

impl BitOp {
    fn apply(self, a: i128, b: i128) -> i128 {
        match self {
            BitOp::And => a & b,
            BitOp::Or => a | b,
            BitOp::Xor => a ^ b,
        }
    }
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
            "bit_and" => AggFunc::Bit(BitOp::And),
            "bit_or" => AggFunc::Bit(BitOp::Or),
            "bit_xor" => AggFunc::Bit(BitOp::Xor),
            "regr_count" => AggFunc::Regr(RegrFunc::Count),
            "regr_sxx" => AggFunc::Regr(RegrFunc::Sxx),
            "regr_syy" => AggFunc::Regr(RegrFunc::Syy),
            "regr_sxy" => AggFunc::Regr(RegrFunc::Sxy),
            "regr_avgx" => AggFunc::Regr(RegrFunc::AvgX),
            "regr_avgy" => AggFunc::Regr(RegrFunc::AvgY),
            "regr_r2" => AggFunc::Regr(RegrFunc::R2),
            "regr_slope" => AggFunc::Regr(RegrFunc::Slope),
            "regr_intercept" => AggFunc::Regr(RegrFunc::Intercept),
            "covar_pop" => AggFunc::Regr(RegrFunc::CovarPop),
            "covar_samp" => AggFunc::Regr(RegrFunc::CovarSamp),
            "corr" => AggFunc::Regr(RegrFunc::Corr),
            "bool_or" => AggFunc::BoolOr,
            "string_agg" => AggFunc::StringAgg,
            "array_agg" => AggFunc::ArrayAgg,
            "stddev" | "stddev_samp" => AggFunc::StddevSamp,
            "stddev_pop" => AggFunc::StddevPop,
            "variance" | "var_samp" => AggFunc::VarSamp,
            "var_pop" => AggFunc::VarPop,
            "json_agg" => AggFunc::JsonAgg { jsonb: false },
            "jsonb_agg" => AggFunc::JsonAgg { jsonb: true },
            "json_object_agg" => AggFunc::JsonObjectAgg { jsonb: false },
            "jsonb_object_agg" => AggFunc::JsonObjectAgg { jsonb: true },
            _ => return None,
        })
    }

    /// The ordered-set aggregate named `name` (called with `WITHIN
    /// GROUP`); `multi`: its direct argument is an array of fractions.
    pub fn ordered_set(name: &str, multi: bool) -> Option<AggFunc> {
        Some(match name {
            "percentile_cont" => AggFunc::PercentileCont { multi },
            "percentile_disc" => AggFunc::PercentileDisc { multi },
            "mode" => AggFunc::Mode,
            _ => return None,
        })
    }

    /// Called with `WITHIN GROUP (ORDER BY …)` (an ordered-set aggregate).
    pub fn is_ordered_set(self) -> bool {
        matches!(
            self,
            AggFunc::PercentileCont { .. } | AggFunc::PercentileDisc { .. } | AggFunc::Mode
        )
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
            AggFunc::StringAgg => "string_agg",
            AggFunc::ArrayAgg => "array_agg",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::VarSamp => "var_samp",
            AggFunc::VarPop => "var_pop",
            AggFunc::JsonAgg { jsonb: false } => "json_agg",
            AggFunc::JsonAgg { jsonb: true } => "jsonb_agg",
            AggFunc::JsonObjectAgg { jsonb: false } => "json_object_agg",
            AggFunc::JsonObjectAgg { jsonb: true } => "jsonb_object_agg",
            AggFunc::PercentileCont { .. } => "percentile_cont",
            AggFunc::PercentileDisc { .. } => "percentile_disc",
            AggFunc::Mode => "mode",
            AggFunc::Bit(BitOp::And) => "bit_and",
            AggFunc::Bit(BitOp::Or) => "bit_or",
            AggFunc::Bit(BitOp::Xor) => "bit_xor",
            AggFunc::Regr(f) => f.name(),
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
                T::Interval => T::Interval,
                _ => return no(),
            },
            AggFunc::Avg => match arg {
                T::Int2 | T::Int4 | T::Int8 | T::Numeric(_) => T::NUMERIC,
                T::Float8 => T::Float8,
                T::Interval => T::Interval,
                _ => return no(),
            },
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
                match arg {
                    T::Int2 | T::Int4 | T::Int8 | T::Numeric(_) => T::NUMERIC,
                    T::Float8 => T::Float8,
                    _ => return no(),
                }
            }
            AggFunc::StringAgg => match arg {
                a if a.is_text_like() => T::Text,
                _ => return no(),
            },
            AggFunc::ArrayAgg => match arg.array_of() {
                Some(t) => t,
                // array_agg(anyarray): one more dimension.
                None if matches!(arg, T::Array(_)) => arg,
                None => return no(),
            },
            AggFunc::Min | AggFunc::Max => match arg {
                T::Void | T::Snapshot | T::Bool | T::Json | T::Jsonb | T::Uuid => return no(),
                T::Char(_) => T::Char(0),
                T::Varchar(_) | T::Name => T::Text,
                other => other.base(),
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => match arg {
                T::Bool => T::Bool,
                _ => return no(),
            },
            AggFunc::Bit(_) => match arg {
                T::Int2 | T::Int4 | T::Int8 => arg,
                _ => return no(),
            },
            AggFunc::Regr(f) => match (numeric_rank(arg), f) {
                (None, _) => return no(),
                (Some(_), RegrFunc::Count) => T::Int8,
                (Some(_), _) => T::Float8,
            },
            AggFunc::JsonAgg { jsonb } | AggFunc::JsonObjectAgg { jsonb } => {
                if jsonb {
                    T::Jsonb
                } else {
                    T::Json
                }
            }
            // The argument is the WITHIN GROUP key, already float8 or
            // interval for percentile_cont.
            AggFunc::PercentileCont { multi } => {
                let t = match arg {
                    T::Float8 | T::Interval => arg,
                    _ => return no(),
                };
                match (multi, t.array_of()) {
                    (false, _) => t,
                    (true, Some(a)) => a,
                    (true, None) => return no(),
                }
            }
            AggFunc::PercentileDisc { .. } | AggFunc::Mode => {
                let t = match arg {
                    T::Void | T::Snapshot | T::Json => return no(),
                    T::Char(_) => T::Char(0),
                    T::Varchar(_) | T::Name => T::Text,
                    other => other.base(),
                };
                match (
                    self == AggFunc::PercentileDisc { multi: true },
                    t.array_of(),
                ) {
                    (false, _) => t,
                    (true, Some(a)) => a,
                    (true, None) => return no(),
                }
            }
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
    /// `agg(x ORDER BY …)`: inputs are buffered with their sort keys and fed
    /// in order when the group finishes.
    ordered: Option<Box<Ordered>>,
}

/// Buffered inputs of an aggregate with an ORDER BY.
#[derive(Clone, Debug)]
struct Ordered {
    /// (descending, nulls first) per sort key.
    order: Vec<(bool, bool)>,
    /// (sort keys, value, extra arguments) per input row.
    rows: Vec<(Vec<Value>, Value, Vec<Value>)>,
}

#[derive(Clone, Debug)]
enum AccState {
    None,
    Int(i128),
    Num(Numeric),
    Float(f64),
    Val(Value),
    Bool(bool),
    Interval(Interval),
    /// string_agg's text so far.
    Text(String),
    /// array_agg's and json_agg's elements.
    List(Vec<Value>),
    /// json_object_agg's (key, value) pairs.
    Pairs(Vec<(Value, Value)>),
    /// Variance over integers/numerics: Σx and Σx² exactly.
    NumMoments(Numeric, Numeric),
    /// Variance over float8 (Youngs–Cramer, as PostgreSQL): Σx and Σ(x-mean)².
    FloatMoments(f64, f64),
    /// An ordered-set aggregate's non-NULL inputs in sorted order, and its
    /// fraction (direct argument).
    Sorted(Vec<Value>, Value),
    /// Two-variable statistics: N, Σx, Sxx, Σy, Syy, Sxy (Youngs–Cramer).
    Regr([f64; 6]),
}

/// One input row of an aggregate call, evaluated by the executor (see
/// [`crate::expr::AggCall::inputs`]).
#[derive(Clone, Debug)]
pub struct AggInput {
    /// The aggregated argument (NULL for count(*)).
    pub value: Value,
    /// Further arguments (string_agg's delimiter).
    pub extra: Vec<Value>,
    /// ORDER BY keys inside the call.
    pub keys: Vec<Value>,
}

impl Accumulator {
    /// A fresh accumulator for `func` over inputs of type `arg_ty`.
    pub fn new(func: AggFunc, arg_ty: SqlType) -> Accumulator {
        Accumulator {
            func,
            arg_ty,
            state: AccState::None,
            count: 0,
            ordered: None,
        }
    }

    /// A fresh accumulator for a bound aggregate call (its ORDER BY included).
    pub fn for_call(call: &crate::expr::AggCall) -> Accumulator {
        let mut a = Accumulator::new(call.func, call.arg_ty);
        if !call.order_by.is_empty() {
            a.ordered = Some(Box::new(Ordered {
                order: call
                    .order_by
                    .iter()
                    .map(|o| (o.desc, o.nulls_first))
                    .collect(),
                rows: Vec::new(),
            }));
        }
        a
    }

    /// Feeds one evaluated input row (FILTER already applied by the caller).
    pub fn feed(&mut self, input: AggInput) -> PgResult<()> {
        if let Some(o) = &mut self.ordered {
            o.rows.push((input.keys, input.value, input.extra));
            return Ok(());
        }
        self.update_with(&input.value, &input.extra)
    }

    /// The aggregate.
    pub fn func(&self) -> AggFunc {
        self.func
    }

    /// Whether [`Accumulator::combine`] can merge two of `func`'s states
    /// (PostgreSQL's aggcombinefn): the aggregates a parallel plan may
    /// split.
    pub fn combinable(func: AggFunc) -> bool {
        matches!(
            func,
            AggFunc::CountStar
                | AggFunc::Count
                | AggFunc::Sum
                | AggFunc::Avg
                | AggFunc::Min
                | AggFunc::Max
                | AggFunc::BoolAnd
                | AggFunc::BoolOr
                | AggFunc::Bit(_)
        )
    }

    /// Merges `other`, the same aggregate's state over other rows of the
    /// group, into this one: the result is as if every row had been fed
    /// here (float sums up to rounding order, as in PostgreSQL).
    pub fn combine(&mut self, other: Accumulator) -> PgResult<()> {
        if !Self::combinable(self.func) || self.ordered.is_some() || other.ordered.is_some() {
            return Err(PgError::internal(format!(
                "{} cannot be combined",
                self.func.name()
            )));
        }
        self.count += other.count;
        let overflow = || {
            PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "value overflows numeric format",
            )
        };
        let mine = std::mem::replace(&mut self.state, AccState::None);
        self.state = match (mine, other.state) {
            (s, AccState::None) | (AccState::None, s) => s,
            (AccState::Int(a), AccState::Int(b)) if matches!(self.func, AggFunc::Bit(_)) => {
                let AggFunc::Bit(op) = self.func else {
                    return Err(PgError::internal("bit aggregate"));
                };
                AccState::Int(op.apply(a, b))
            }
            (AccState::Int(a), AccState::Int(b)) => {
                AccState::Int(a.checked_add(b).ok_or_else(overflow)?)
            }
            (AccState::Num(a), AccState::Num(b)) => AccState::Num(a.checked_add(b)?),
            (AccState::Float(a), AccState::Float(b)) => AccState::Float(a + b),
            (AccState::Interval(a), AccState::Interval(b)) => AccState::Interval(a.checked_add(b)?),
            (AccState::Val(a), AccState::Val(b)) => {
                let o = cmp_sql(&b, &a).unwrap_or(Ordering::Equal);
                let take_b = (self.func == AggFunc::Min && o == Ordering::Less)
                    || (self.func == AggFunc::Max && o == Ordering::Greater);
                AccState::Val(if take_b { b } else { a })
            }
            (AccState::Bool(a), AccState::Bool(b)) => AccState::Bool(match self.func {
                AggFunc::BoolAnd => a && b,
                _ => a || b,
            }),
            _ => {
                return Err(PgError::internal(format!(
                    "{}: states of different kinds",
                    self.func.name()
                )))
            }
        };
        Ok(())
    }

    /// A combinable state as two values (PostgreSQL's serialfn): the rows
    /// counted, and the running value — NULL before any, an integer sum
    /// as its 16 bytes, otherwise the value itself. What a parallel
    /// aggregation writes of a partial group when the groups do not fit.
    pub fn partial_state(&self) -> PgResult<[Value; 2]> {
        if !Self::combinable(self.func) || self.ordered.is_some() {
            return Err(PgError::internal(format!(
                "{} has no partial state",
                self.func.name()
            )));
        }
        let state = match &self.state {
            AccState::None => Value::Null,
            AccState::Int(i) => Value::Bytea(i.to_be_bytes().to_vec().into()),
            AccState::Num(n) => Value::Numeric(*n),
            AccState::Float(f) => Value::Float8(*f),
            AccState::Interval(i) => Value::Interval(*i),
            AccState::Val(v) => v.clone(),
            AccState::Bool(b) => Value::Bool(*b),
            _ => {
                return Err(PgError::internal(format!(
                    "{}: a state with no partial form",
                    self.func.name()
                )))
            }
        };
        Ok([Value::Int8(self.count), state])
    }

    /// Sets the state [`Accumulator::partial_state`] wrote (on a fresh
    /// accumulator of the same call).
    pub fn set_partial_state(&mut self, count: &Value, state: &Value) -> PgResult<()> {
        let bad = || PgError::internal(format!("{}: a damaged partial state", self.func.name()));
        let Value::Int8(count) = count else {
            return Err(bad());
        };
        self.count = *count;
        self.state = match (self.func, state) {
            (_, Value::Null) => AccState::None,
            (AggFunc::Min | AggFunc::Max, v) => AccState::Val(v.clone()),
            (_, Value::Bytea(b)) => {
                AccState::Int(i128::from_be_bytes(b[..].try_into().map_err(|_| bad())?))
            }
            (_, Value::Numeric(n)) => AccState::Num(*n),
            (_, Value::Float8(f)) => AccState::Float(*f),
            (_, Value::Interval(i)) => AccState::Interval(*i),
            (_, Value::Bool(b)) => AccState::Bool(*b),
            _ => return Err(bad()),
        };
        Ok(())
    }

    /// Feeds one input value (count(*) ignores it; NULLs are skipped otherwise).
    pub fn update(&mut self, v: &Value) -> PgResult<()> {
        self.update_with(v, &[])
    }

    /// Feeds one input value with the call's further arguments.
    pub fn update_with(&mut self, v: &Value, extra: &[Value]) -> PgResult<()> {
        if self.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(());
        }
        if let AggFunc::JsonObjectAgg { .. } = self.func {
            crate::jsonfuncs::object_agg_key(v)?;
            self.count += 1;
            let val = extra.first().cloned().unwrap_or(Value::Null);
            match &mut self.state {
                AccState::Pairs(l) => l.push((v.clone(), val)),
                _ => self.state = AccState::Pairs(vec![(v.clone(), val)]),
            }
            return Ok(());
        }
        if let AggFunc::Regr(_) = self.func {
            // float8_regr_accum: (y, x), a pair with a NULL skipped.
            let (Value::Float8(y), Some(Value::Float8(x))) = (v, extra.first()) else {
                return Ok(());
            };
            let (y, x) = (*y, *x);
            self.count += 1;
            let mut m = match self.state {
                AccState::Regr(m) => m,
                _ => [0.0; 6],
            };
            let old_n = m[0];
            m[0] += 1.0;
            m[1] += x;
            m[3] += y;
            if old_n > 0.0 {
                let tx = x * m[0] - m[1];
                let ty = y * m[0] - m[3];
                let scale = 1.0 / (m[0] * old_n);
                m[2] += tx * tx * scale;
                m[4] += ty * ty * scale;
                m[5] += tx * ty * scale;
            } else {
                if !x.is_finite() {
                    (m[2], m[5]) = (f64::NAN, f64::NAN);
                }
                if !y.is_finite() {
                    (m[4], m[5]) = (f64::NAN, f64::NAN);
                }
            }
            self.state = AccState::Regr(m);
            return Ok(());
        }
        if matches!(self.func, AggFunc::ArrayAgg | AggFunc::JsonAgg { .. }) {
            // array_agg keeps NULL elements.
            self.count += 1;
            match &mut self.state {
                AccState::List(l) => l.push(v.clone()),
                _ => self.state = AccState::List(vec![v.clone()]),
            }
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        match self.func {
            AggFunc::CountStar
            | AggFunc::Count
            | AggFunc::ArrayAgg
            | AggFunc::JsonAgg { .. }
            | AggFunc::JsonObjectAgg { .. }
            | AggFunc::Regr(_) => {}
            AggFunc::Bit(op) => {
                let x = v.as_i64().unwrap_or(0) as i128;
                self.state = match self.state {
                    AccState::Int(a) => AccState::Int(op.apply(a, x)),
                    _ => AccState::Int(x),
                };
            }
            AggFunc::PercentileCont { .. } | AggFunc::PercentileDisc { .. } | AggFunc::Mode => {
                // In sorted order (the call's ORDER BY is its WITHIN
                // GROUP key); the fraction is the first row's.
                match &mut self.state {
                    AccState::Sorted(l, _) => l.push(v.clone()),
                    _ => {
                        let fraction = extra.first().cloned().unwrap_or(Value::Null);
                        self.state = AccState::Sorted(vec![v.clone()], fraction);
                    }
                }
            }
            AggFunc::StringAgg => {
                let s = v.as_str().unwrap_or("");
                match &mut self.state {
                    AccState::Text(t) => {
                        if let Some(Value::Text(d)) = extra.first() {
                            check_enlarge(t.len(), d.len())?;
                            t.push_str(d);
                        }
                        check_enlarge(t.len(), s.len())?;
                        t.push_str(s);
                    }
                    _ => self.state = AccState::Text(s.to_string()),
                }
            }
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
                match v {
                    Value::Float8(x) => {
                        let (sx, sxx) = match self.state {
                            AccState::FloatMoments(a, b) => (a, b),
                            _ => (0.0, 0.0),
                        };
                        let n = self.count as f64;
                        let sx2 = sx + x;
                        let sxx2 = if self.count > 1 {
                            let tmp = x * n - sx2;
                            sxx + tmp * tmp / (n * (n - 1.0))
                        } else {
                            0.0
                        };
                        self.state = AccState::FloatMoments(sx2, sxx2);
                    }
                    other => {
                        let x = match other {
                            Value::Numeric(n) => *n,
                            o => Numeric::from_i64(o.as_i64().unwrap_or(0)),
                        };
                        let (sum, sumsq) = match &self.state {
                            AccState::NumMoments(a, b) => (*a, *b),
                            _ => (Numeric::ZERO, Numeric::ZERO),
                        };
                        self.state = AccState::NumMoments(
                            sum.checked_add(x)?,
                            sumsq.checked_add(x.checked_mul(x)?)?,
                        );
                    }
                }
            }
            AggFunc::Sum | AggFunc::Avg => {
                // The running state in place (the common case per row).
                match (&mut self.state, v) {
                    (AccState::Num(a), Value::Numeric(n)) => {
                        *a = a.checked_add(*n)?;
                        return Ok(());
                    }
                    (AccState::Float(a), Value::Float8(f)) => {
                        *a += f;
                        return Ok(());
                    }
                    _ => {}
                }
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
                    (AccState::None, Value::Interval(iv)) => AccState::Interval(*iv),
                    (AccState::Interval(a), Value::Interval(iv)) => {
                        AccState::Interval(a.checked_add(*iv)?)
                    }
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
        if let Some(o) = &self.ordered {
            let mut rows: Vec<&(Vec<Value>, Value, Vec<Value>)> = o.rows.iter().collect();
            rows.sort_by(|a, b| {
                for (i, (desc, nulls_first)) in o.order.iter().enumerate() {
                    let (x, y) = (&a.0[i], &b.0[i]);
                    let ord = match (x.is_null(), y.is_null()) {
                        (true, true) => Ordering::Equal,
                        (true, false) => {
                            if *nulls_first {
                                Ordering::Less
                            } else {
                                Ordering::Greater
                            }
                        }
                        (false, true) => {
                            if *nulls_first {
                                Ordering::Greater
                            } else {
                                Ordering::Less
                            }
                        }
                        _ => {
                            let c = cmp_sql(x, y).unwrap_or(Ordering::Equal);
                            if *desc {
                                c.reverse()
                            } else {
                                c
                            }
                        }
                    };
                    if ord != Ordering::Equal {
                        return ord;
                    }
                }
                Ordering::Equal
            });
            let mut plain = Accumulator::new(self.func, self.arg_ty);
            for (_, v, extra) in rows {
                plain.update_with(v, extra)?;
            }
            return plain.finish();
        }
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
                AccState::Interval(iv) => Value::Interval(*iv),
                _ => Value::Null,
            },
            AggFunc::Avg => match &self.state {
                AccState::Interval(iv) => Value::Interval(iv.div_f64(self.count as f64)?),
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
            AggFunc::StringAgg => match &self.state {
                AccState::Text(t) => Value::Text(Arc::from(t.as_str())),
                _ => Value::Null,
            },
            AggFunc::ArrayAgg => match &self.state {
                AccState::List(l) => match self.arg_ty {
                    SqlType::Array(elem) => stack_aggregated(elem, l)?,
                    ty => array_value(ArrayElem::of(ty).unwrap_or(ArrayElem::Text), l.clone()),
                },
                _ => Value::Null,
            },
            AggFunc::StddevSamp | AggFunc::StddevPop | AggFunc::VarSamp | AggFunc::VarPop => {
                self.finish_variance()?
            }
            AggFunc::JsonAgg { jsonb } => match &self.state {
                AccState::List(l) => crate::jsonfuncs::agg_result(l, jsonb)?,
                _ => Value::Null,
            },
            AggFunc::JsonObjectAgg { jsonb } => match &self.state {
                AccState::Pairs(l) => crate::jsonfuncs::object_agg_result(l, jsonb)?,
                _ => Value::Null,
            },
            AggFunc::Regr(f) => match &self.state {
                AccState::Regr(m) => f.finish(m),
                _ => f.finish(&[0.0; 6]),
            },
            AggFunc::Bit(_) => match (&self.state, self.arg_ty) {
                (AccState::Int(a), SqlType::Int2) => Value::Int2(*a as i16),
                (AccState::Int(a), SqlType::Int4) => Value::Int4(*a as i32),
                (AccState::Int(a), _) => Value::Int8(*a as i64),
                _ => Value::Null,
            },
            AggFunc::PercentileCont { .. } | AggFunc::PercentileDisc { .. } | AggFunc::Mode => {
                match &self.state {
                    AccState::Sorted(values, fraction) => {
                        ordered_set_result(self.func, self.arg_ty, values, fraction)?
                    }
                    _ => Value::Null,
                }
            }
        })
    }

    fn finish_variance(&self) -> PgResult<Value> {
        let sample = matches!(self.func, AggFunc::StddevSamp | AggFunc::VarSamp);
        let root = matches!(self.func, AggFunc::StddevSamp | AggFunc::StddevPop);
        let n = self.count;
        if n == 0 || (sample && n == 1) {
            return Ok(Value::Null);
        }
        match &self.state {
            AccState::FloatMoments(_, sxx) => {
                let d = if sample { n - 1 } else { n } as f64;
                let var = sxx / d;
                Ok(Value::Float8(if root { var.sqrt() } else { var }))
            }
            AccState::NumMoments(sum, sumsq) => {
                let nn = Numeric::from_i64(n);
                // N·Σx² − (Σx)², over N(N−1) or N², at PostgreSQL's division scale.
                let num = nn
                    .checked_mul(*sumsq)?
                    .checked_sub(sum.checked_mul(*sum)?)?;
                if num.signum() <= 0 {
                    return Ok(Value::Numeric(Numeric::ZERO));
                }
                let den = if sample {
                    nn.checked_mul(Numeric::from_i64(n - 1))?
                } else {
                    nn.checked_mul(nn)?
                };
                let var = num.checked_div(den)?;
                Ok(Value::Numeric(if root { numeric_sqrt(var)? } else { var }))
            }
            _ => Ok(Value::Null),
        }
    }
}

/// Square root of a non-negative numeric at its own scale, rounded half up
/// (falls back to float8 when the scaled integer would overflow).
fn numeric_sqrt(v: Numeric) -> PgResult<Numeric> {
    let scale = v.scale();
    let m = v.mantissa();
    if m <= 0 {
        return Ok(Numeric::ZERO);
    }
    // sqrt(m / 10^s) at scale s = isqrt(m · 10^s) / 10^s.
    let scaled = 10i128
        .checked_pow(scale as u32)
        .and_then(|p| m.checked_mul(p));
    match scaled {
        Some(n) => {
            let n = n as u128;
            let mut r = (n as f64).sqrt() as u128;
            while r * r > n {
                r -= 1;
            }
            while (r + 1) * (r + 1) <= n {
                r += 1;
            }
            if n - r * r > r {
                r += 1;
            }
            Numeric::new(r as i128, scale)
        }
        None => Numeric::from_f64(v.to_f64().sqrt())?.rescale(scale),
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

pub(crate) fn no_function(name: &str, args: &[SqlType]) -> PgError {
    let list: Vec<&str> = args.iter().map(|t| t.pg_base_name()).collect();
    crate::parse_func::undefined_routine(&format!("{}({})", name, list.join(", ")))
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
    if let (T::Array(a), T::Array(b)) = (from, to) {
        // An array coerces as its elements do (PostgreSQL's array coercion).
        return can_coerce_implicit(a.sql_type(), b.sql_type());
    }
    matches!(
        (from, to),
        (T::Timestamp, T::TimestampTz)
            | (T::Date, T::Timestamp | T::TimestampTz)
            | (T::Int2 | T::Int4 | T::Int8, T::Oid)
            | (T::Xid8, T::Xid8)
            | (T::Int2 | T::Int4 | T::Int8 | T::Oid, T::Reg(_))
            | (T::Reg(_), T::Oid)
            | (T::Cidr, T::Inet)
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
                        | (SqlType::Date, SqlType::TimestampTz)
                        | (SqlType::TimestampTz, SqlType::Date)
                ) {
                    SqlType::TimestampTz
                } else if matches!(
                    (c, t),
                    (SqlType::Date, SqlType::Timestamp) | (SqlType::Timestamp, SqlType::Date)
                ) {
                    SqlType::Timestamp
                } else if matches!(
                    (c, t),
                    (SqlType::Reg(_), SqlType::Oid) | (SqlType::Oid, SqlType::Reg(_))
                ) {
                    SqlType::Oid
                } else if matches!(
                    (c, t),
                    (SqlType::Inet, SqlType::Cidr) | (SqlType::Cidr, SqlType::Inet)
                ) {
                    SqlType::Inet
                } else if let (SqlType::Array(a), SqlType::Array(b)) = (c, t) {
                    // Arrays meet where their elements do (an implicit
                    // array coercion: int[] to numeric[]).
                    common_type(&[a.sql_type(), b.sql_type()])?.array_of()?
                } else if matches!(c, SqlType::Oid | SqlType::Reg(_))
                    && matches!(t, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
                {
                    // Integers cast implicitly to oid and the reg* types.
                    c
                } else if matches!(t, SqlType::Oid | SqlType::Reg(_))
                    && matches!(c, SqlType::Int2 | SqlType::Int4 | SqlType::Int8)
                {
                    t
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
    if let Some(s) = crate::pgcatalog::functions::resolve(name, args) {
        return Ok(s);
    }
    if let Some(s) = crate::network::resolve(name, args) {
        return Ok(s);
    }
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
        "length" | "octet_length" if n == 1 && args[0] == T::Bytea => {
            sig(Func::ByteaLength, &[T::Bytea], T::Int4)
        }
        "md5" if n == 1 && args[0] == T::Bytea => sig(Func::Md5Bytea, &[T::Bytea], T::Text),
        "encode" => sig(Func::Encode, &[T::Bytea, T::Text], T::Text),
        "decode" => sig(Func::Decode, &[T::Text, T::Text], T::Bytea),
        "pg_column_size" if n == 1 => Ok(FuncSig {
            func: Func::PgColumnSize,
            arg_types: vec![if args[0] == T::Unknown {
                T::Text
            } else {
                args[0]
            }],
            ret: T::Int4,
        }),
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
        "substring" if n == 2 && (args[1].is_text_like() || args[1] == T::Unknown) => {
            sig(Func::SubstringRegex, &[T::Text, T::Text], T::Text)
        }
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
        "sqrt" if n == 1 => match num_arg(false) {
            Some(t) => sig(Func::Sqrt, &[t], t),
            None => Err(no_function(name, args)),
        },
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
        "gen_random_uuid" => none(Func::GenRandomUuid, T::Uuid),
        "now" | "current_timestamp" | "transaction_timestamp" => none(Func::Now, T::TimestampTz),
        "statement_timestamp" => none(Func::StatementTimestamp, T::TimestampTz),
        "clock_timestamp" => none(Func::ClockTimestamp, T::TimestampTz),
        "localtimestamp" => none(Func::LocalTimestamp, T::Timestamp),
        "version" => none(Func::Version, T::Text),
        "pg_sleep" => sig(Func::PgSleep, &[T::Float8], T::Void),
        "nextval" if n == 1 => sig(Func::Sequence(SeqFunc::Nextval), &[T::Text], T::Int8),
        "currval" if n == 1 => sig(Func::Sequence(SeqFunc::Currval), &[T::Text], T::Int8),
        "setval" if n == 2 || n == 3 => sig(
            Func::Sequence(SeqFunc::Setval),
            &[T::Text, T::Int8, T::Bool][..n],
            T::Int8,
        ),
        "lastval" => none(Func::Sequence(SeqFunc::Lastval), T::Int8),
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
        "pg_reload_conf" => none(Func::PgReloadConf, T::Bool),
        "pg_stat_reset_shared" if n == 1 => sig(Func::PgStatResetShared, &[T::Text], T::Void),
        "pg_create_physical_replication_slot" if (1..=3).contains(&n) => sig(
            Func::PgCreatePhysicalReplicationSlot,
            &[T::Name, T::Bool, T::Bool][..n],
            T::Record,
        ),
        "pg_drop_replication_slot" if n == 1 => {
            sig(Func::PgDropReplicationSlot, &[T::Name], T::Void)
        }
        "pg_cancel_backend" if n == 1 => sig(Func::PgCancelBackend, &[T::Int4], T::Bool),
        "pg_terminate_backend" if (1..=2).contains(&n) => {
            sig(Func::PgTerminateBackend, &[T::Int4, T::Int8][..n], T::Bool)
        }
        "pg_relation_size" | "pg_table_size" | "pg_total_relation_size" if n == 1 => {
            sig(Func::PgRelationSize, &[T::Reg(RegKind::Class)], T::Int8)
        }
        "pg_database_size" if n == 1 => sig(Func::PgDatabaseSize, &[T::Name], T::Int8),
        "pg_size_pretty" if n == 1 => sig(Func::PgSizePretty, &[T::Int8], T::Text),
        "current_setting" if n == 1 => sig(Func::CurrentSetting, &[T::Text], T::Text),
        "current_setting" => sig(Func::CurrentSettingMissingOk, &[T::Text, T::Bool], T::Text),
        "pg_backend_pid" => none(Func::PgBackendPid, T::Int4),
        "current_database" | "current_catalog" => none(Func::CurrentDatabase, T::Name),
        "current_user" | "user" | "current_role" => none(Func::CurrentUser, T::Name),
        "session_user" => none(Func::SessionUser, T::Name),
        "current_schema" => none(Func::CurrentSchema, T::Name),
        "pg_current_wal_lsn" => none(Func::WalLsn(WalLsnKind::Current), T::PgLsn),
        "pg_current_wal_insert_lsn" => none(Func::WalLsn(WalLsnKind::Insert), T::PgLsn),
        "pg_current_wal_flush_lsn" => none(Func::WalLsn(WalLsnKind::Flush), T::PgLsn),
        "pg_last_wal_receive_lsn" => none(Func::WalLsn(WalLsnKind::Receive), T::PgLsn),
        "pg_last_wal_replay_lsn" => none(Func::WalLsn(WalLsnKind::Replay), T::PgLsn),
        "pg_wal_lsn_diff" => sig(Func::WalLsnDiff, &[T::PgLsn, T::PgLsn], T::NUMERIC),
        "pg_walfile_name" => sig(Func::WalFileName, &[T::PgLsn], T::Text),
        "array_length" | "array_lower" | "array_upper" if n == 2 => {
            let a = array_arg(name, args, 0)?;
            let f = match name {
                "array_length" => Func::ArrayLength,
                "array_lower" => Func::ArrayLower,
                _ => Func::ArrayUpper,
            };
            sig(f, &[a, T::Int4], T::Int4)
        }
        "enum_first" | "enum_last" | "enum_range" if (1..=2).contains(&n) => {
            let ty = match (args.first(), args.get(1)) {
                (Some(T::Enum(a)), None) if name != "enum_range" || n == 1 => *a,
                (Some(T::Enum(a)), Some(T::Enum(b))) if a == b && name == "enum_range" => *a,
                (Some(T::Enum(a)), Some(T::Unknown)) | (Some(T::Unknown), Some(T::Enum(a)))
                    if name == "enum_range" =>
                {
                    *a
                }
                _ => return Err(no_function(name, args)),
            };
            let e = T::Enum(ty);
            let types = vec![e; n];
            Ok(FuncSig {
                func: match name {
                    "enum_first" => Func::EnumFirst(ty),
                    "enum_last" => Func::EnumLast(ty),
                    _ => Func::EnumRange(ty),
                },
                arg_types: types,
                ret: if name == "enum_range" {
                    T::Array(pgtypes::sqltype::ArrayElem::Enum(ty))
                } else {
                    e
                },
            })
        }
        "cardinality" | "array_ndims" if n == 1 => {
            let a = array_arg(name, args, 0)?;
            let f = match name {
                "cardinality" => Func::Cardinality,
                _ => Func::ArrayNdims,
            };
            sig(f, &[a], T::Int4)
        }
        "array_dims" if n == 1 => {
            let a = array_arg(name, args, 0)?;
            sig(Func::ArrayDims, &[a], T::Text)
        }
        "array_append" | "array_position" if n == 2 => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().unwrap_or(T::Text);
            if name == "array_append" {
                sig(Func::ArrayAppend, &[a, e], a)
            } else {
                sig(Func::ArrayPosition, &[a, e], T::Int4)
            }
        }
        "array_remove" if n == 2 => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().unwrap_or(T::Text);
            sig(Func::ArrayRemove, &[a, e], a)
        }
        "array_replace" if n == 3 => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().unwrap_or(T::Text);
            sig(Func::ArrayReplace, &[a, e, e], a)
        }
        "array_prepend" if n == 2 => {
            let a = array_arg(name, args, 1)?;
            let e = a.elem().unwrap_or(T::Text);
            sig(Func::ArrayPrepend, &[e, a], a)
        }
        "array_cat" if n == 2 => {
            let a = match (args[0], args[1]) {
                (a @ T::Array(_), _) | (T::Unknown, a @ T::Array(_)) => a,
                _ => return Err(no_function(name, args)),
            };
            sig(Func::ArrayCat, &[a, a], a)
        }
        "array_to_string" if n == 2 || n == 3 => {
            let a = array_arg(name, args, 0)?;
            sig(Func::ArrayToString, &[a, T::Text, T::Text][..n], T::Text)
        }
        "string_to_array" if n == 2 || n == 3 => sig(
            Func::StringToArray,
            &[T::Text, T::Text, T::Text][..n],
            T::Array(ArrayElem::Text),
        ),
        "unnest" if n == 1 => {
            let a = array_arg(name, args, 0)?;
            sig(Func::Unnest, &[a], a.elem().unwrap_or(T::Text))
        }
        "date_trunc" if n == 2 => {
            let t = match args[1] {
                T::Timestamp => T::Timestamp,
                T::Interval => T::Interval,
                T::Date | T::TimestampTz | T::Unknown => T::TimestampTz,
                _ => return Err(no_function(name, args)),
            };
            sig(Func::DateTrunc, &[T::Text, t], t)
        }
        "date_part" | "extract" if n == 2 => {
            let t = match args[1] {
                t @ (T::Timestamp | T::TimestampTz | T::Date | T::Interval) => t,
                T::Unknown => T::TimestampTz,
                _ => return Err(no_function(name, args)),
            };
            let numeric = name == "extract";
            sig(
                Func::DatePart { numeric },
                &[T::Text, t],
                if numeric { T::NUMERIC } else { T::Float8 },
            )
        }
        "age" if n == 1 || n == 2 => {
            let t = if args
                .iter()
                .all(|a| matches!(a, T::Timestamp | T::Date | T::Unknown))
            {
                T::Timestamp
            } else {
                T::TimestampTz
            };
            let f = if n == 1 { Func::AgeToday } else { Func::Age };
            sig(f, &[t, t][..n], T::Interval)
        }
        "make_date" => sig(Func::MakeDate, &[T::Int4, T::Int4, T::Int4], T::Date),
        "make_timestamp" => sig(
            Func::MakeTimestamp,
            &[T::Int4, T::Int4, T::Int4, T::Int4, T::Int4, T::Float8],
            T::Timestamp,
        ),
        "make_interval" if n <= 7 => sig(
            Func::MakeInterval,
            &[
                T::Int4,
                T::Int4,
                T::Int4,
                T::Int4,
                T::Int4,
                T::Int4,
                T::Float8,
            ][..n],
            T::Interval,
        ),
        "current_date" => none(Func::CurrentDate, T::Date),
        "justify_hours" | "justify_days" | "justify_interval" => sig(
            Func::Justify {
                hours: name != "justify_days",
                days: name != "justify_hours",
            },
            &[T::Interval],
            T::Interval,
        ),
        "to_char" if n == 2 => {
            let t = match args[0] {
                T::Date | T::Unknown => T::Timestamp,
                t @ (T::Timestamp | T::TimestampTz | T::Interval) => t,
                t @ (T::Int2 | T::Int4 | T::Int8 | T::Float8) => t,
                T::Numeric(_) => T::NUMERIC,
                _ => return Err(no_function(name, args)),
            };
            sig(Func::ToChar, &[t, T::Text], T::Text)
        }
        "to_date" => sig(Func::ToDate, &[T::Text, T::Text], T::Date),
        "to_timestamp" if n == 2 => sig(Func::ToTimestamp, &[T::Text, T::Text], T::TimestampTz),
        "to_timestamp" => sig(Func::ToTimestampEpoch, &[T::Float8], T::TimestampTz),
        "to_number" => sig(Func::ToNumber, &[T::Text, T::Text], T::NUMERIC),
        "split_part" => sig(Func::SplitPart, &[T::Text, T::Text, T::Int4], T::Text),
        "regexp_match" if n == 2 || n == 3 => sig(
            Func::RegexpMatch,
            &[T::Text, T::Text, T::Text][..n],
            T::Array(ArrayElem::Text),
        ),
        "regexp_replace" if n == 3 || n == 4 => sig(
            Func::RegexpReplace,
            &[T::Text, T::Text, T::Text, T::Text][..n],
            T::Text,
        ),
        "initcap" => sig(Func::Initcap, &[T::Text], T::Text),
        "lpad" | "rpad" if n == 2 || n == 3 => sig(
            if name == "lpad" {
                Func::Lpad
            } else {
                Func::Rpad
            },
            &[T::Text, T::Int4, T::Text][..n],
            T::Text,
        ),
        "format" if n >= 1 => Ok(text_then_any(Func::Format, args)),
        "concat_ws" if n >= 1 => Ok(text_then_any(Func::ConcatWs, args)),
        "reverse" => sig(Func::Reverse, &[T::Text], T::Text),
        "starts_with" => sig(Func::StartsWith, &[T::Text, T::Text], T::Bool),
        "translate" => sig(Func::Translate, &[T::Text, T::Text, T::Text], T::Text),
        "chr" => sig(Func::Chr, &[T::Int4], T::Text),
        "ascii" => sig(Func::Ascii, &[T::Text], T::Int4),
        "md5" => sig(Func::Md5, &[T::Text], T::Text),
        "sign" if n == 1 => match num_arg(false) {
            Some(t) => sig(Func::Sign, &[t], t),
            None => Err(no_function(name, args)),
        },
        "power" | "pow" if n == 2 => {
            let t = power_type(args[0], args[1]).ok_or_else(|| no_function(name, args))?;
            sig(Func::Power, &[t, t], t)
        }
        "to_hex" if n == 1 => match args[0] {
            T::Int8 => sig(Func::ToHex, &[T::Int8], T::Text),
            _ => sig(Func::ToHex, &[T::Int4], T::Text),
        },
        _ => match crate::jsonfuncs::resolve(name, args) {
            Some(s)
                if s.arg_types.len() == n
                    && args
                        .iter()
                        .zip(&s.arg_types)
                        .all(|(a, p)| can_coerce_implicit(*a, *p)) =>
            {
                Ok(s)
            }
            _ => Err(no_function(name, args)),
        },
    }
}

/// The set-returning functions the planner binds itself, in FROM or as a
/// whole target-list item (`planner::bind_series`).
pub const SERIES_FUNCTIONS: &[&str] = &[
    "generate_series",
    "generate_subscripts",
    "unnest",
    "pg_partition_ancestors",
];

/// Whether `planner::bind_series` binds `name(args)`: generate_series over
/// integers (int4 or int8) or over timestamps with an interval step,
/// unnest of an array, pg_partition_ancestors of a relation. `pg_proc`
/// lists these signatures (`crate::pgcatalog::proc`).
pub fn series_accepts(name: &str, args: &[SqlType]) -> bool {
    use SqlType as T;
    match (name, args) {
        ("generate_series", [_, _] | [_, _, _]) => {
            let ints = args
                .iter()
                .all(|a| matches!(a, T::Int2 | T::Int4 | T::Int8 | T::Unknown));
            let times = matches!(
                args,
                [
                    T::Timestamp | T::TimestampTz,
                    T::Timestamp | T::TimestampTz,
                    T::Interval
                ]
            );
            ints || times
        }
        ("unnest", [T::Array(_)]) => true,
        ("generate_subscripts", [T::Array(_), d] | [T::Array(_), d, T::Bool | T::Unknown]) => {
            can_coerce_implicit(*d, T::Int4)
        }
        ("pg_partition_ancestors", [a]) => can_coerce_implicit(*a, T::Reg(RegKind::Class)),
        _ => false,
    }
}

/// The array type of argument `i` of a polymorphic array function (42883
/// when it is not an array).
fn array_arg(name: &str, args: &[SqlType], i: usize) -> PgResult<SqlType> {
    match args.get(i) {
        Some(t @ SqlType::Array(_)) => Ok(*t),
        _ => Err(no_function(name, args)),
    }
}

fn text_arg(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn bytea_arg(v: &Value) -> &[u8] {
    match v {
        Value::Bytea(b) => b,
        _ => &[],
    }
}

fn unknown_encoding(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("unrecognized encoding: \"{name}\""),
    )
}

/// pg_column_size of a value computed in a query (not read from a table):
/// PostgreSQL's datum size — the fixed length, or a varlena's bytes plus
/// its header (1 byte up to 126 bytes of data, else 4).
fn datum_size(v: &Value) -> usize {
    let len = v.sql_type().typlen();
    if len > 0 {
        return len as usize;
    }
    let mut b = bytes::BytesMut::new();
    match v {
        Value::Text(s) => return varlena_size(s.len()),
        Value::Bytea(b) => return varlena_size(b.len()),
        // inet_struct: family, bits, the address bytes.
        Value::Inet(a) | Value::Cidr(a) => return varlena_size(2 + a.addr_len()),
        _ => v.write_binary(&mut b),
    }
    varlena_size(b.len())
}

fn varlena_size(n: usize) -> usize {
    if n <= 126 {
        n + 1
    } else {
        n + 4
    }
}

fn int_arg(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn too_large() -> PgError {
    PgError::new("54000", "requested length too large")
}

/// PostgreSQL's MaxAllocSize: no value (text, bytea, array) may be larger
/// than 1 GB less one byte, header included.
const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// A value of `len` bytes about to be built in one piece (`||`): over
/// MaxAllocSize it is PostgreSQL's palloc error, XX000 `invalid memory
/// alloc request size N` (N counting the 4-byte header).
pub(crate) fn check_alloc(len: usize) -> PgResult<()> {
    let request = len.saturating_add(4);
    if request > MAX_ALLOC_SIZE {
        return Err(PgError::new(
            sqlstate::INTERNAL_ERROR,
            format!("invalid memory alloc request size {request}"),
        ));
    }
    Ok(())
}

/// Appending `more` bytes to a buffer of `have` (an aggregate's string):
/// past MaxAllocSize, PostgreSQL's enlargeStringInfo error.
fn check_enlarge(have: usize, more: usize) -> PgResult<()> {
    if more >= MAX_ALLOC_SIZE.saturating_sub(have) {
        return Err(PgError::new("54000", "out of memory").with_detail(format!(
            "Cannot enlarge string buffer containing {have} bytes by {more} more bytes."
        )));
    }
    Ok(())
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

/// enum_first / enum_last / enum_range over the type `t` (PostgreSQL's
/// enum.c: the type comes from the argument's type, not its value).
fn enum_func(func: Func, t: pgtypes::Oid, args: &[Value]) -> PgResult<Value> {
    let ty = pgtypes::enumtype::get(t).ok_or_else(|| {
        PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("type with OID {t} does not exist"),
        )
    })?;
    let label = |l: &pgtypes::enumtype::EnumLabel| Value::Enum(l.oid);
    let empty = || {
        PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("enum {} contains no values", ty.name),
        )
    };
    Ok(match func {
        Func::EnumFirst(_) => ty.labels.first().map(label).ok_or_else(empty)?,
        Func::EnumLast(_) => ty.labels.last().map(label).ok_or_else(empty)?,
        _ => {
            let bound = |i: usize| match args.get(i) {
                Some(Value::Enum(o)) if args.len() == 2 => Some(*o),
                _ => None,
            };
            let (lo, hi) = (bound(0), bound(1));
            let items: Vec<Value> = ty
                .labels
                .iter()
                .skip_while(|l| lo.is_some_and(|o| l.oid != o))
                .scan(false, |done, l| {
                    if *done {
                        return None;
                    }
                    *done = hi == Some(l.oid);
                    Some(label(l))
                })
                .collect();
            // lo after hi: PostgreSQL gives an empty array.
            let items = match (lo, hi) {
                (Some(a), Some(b)) if pgtypes::enumtype::cmp_labels(a, b).is_gt() => Vec::new(),
                _ => items,
            };
            Value::Array(std::sync::Arc::new(pgtypes::array::ArrayValue::new(
                pgtypes::sqltype::ArrayElem::Enum(t),
                items,
            )))
        }
    })
}

/// Calls a resolved function on evaluated arguments (already coerced to the
/// signature's types). Strict functions return NULL on any NULL argument.
pub fn call(func: Func, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    // Non-strict functions first.
    match func {
        Func::User(oid) => return ctx.call_user_function(oid, args),
        Func::Catalog(f) => return crate::pgcatalog::functions::call(f, args, ctx),
        Func::Json(f) => return crate::jsonfuncs::call(f, args),
        Func::Net(f) => return crate::network::call(f, args, ctx),
        Func::EnumFirst(t) | Func::EnumLast(t) | Func::EnumRange(t) => {
            return enum_func(func, t, args)
        }
        Func::MakeArray(elem) => return Ok(array_value(elem, args.to_vec())),
        Func::StackArrays(elem) => return stack_arrays(elem, args),
        Func::ArrayCmp { op, all } => return Ok(array_compare(op, all, &args[0], &args[1])),
        Func::ArrayAppend | Func::ArrayPrepend | Func::ArrayCat => {
            return array_concat(func, &args[0], &args[1])
        }
        Func::ArrayRemove | Func::ArrayReplace => return array_replace(func, args),
        Func::Format => {
            let Some(fmt) = args.first().and_then(Value::as_str) else {
                return Ok(Value::Null);
            };
            return Ok(Value::Text(Arc::from(format_text(fmt, &args[1..])?)));
        }
        Func::ConcatWs => {
            let Some(sep) = args.first().and_then(Value::as_str) else {
                return Ok(Value::Null);
            };
            let mut out = String::new();
            let mut first = true;
            for a in &args[1..] {
                if a.is_null() {
                    continue;
                }
                if !first {
                    out.push_str(sep);
                }
                first = false;
                match a {
                    Value::Text(t) => out.push_str(t),
                    other => out.push_str(&other.to_text_string()),
                }
            }
            return Ok(Value::Text(Arc::from(out)));
        }
        Func::ArrayToString | Func::StringToArray if args.len() == 3 && args[2].is_null() => {
            return call(func, &args[..2], ctx);
        }
        Func::StringToArray if !args[0].is_null() && args[1].is_null() => {
            // A NULL delimiter splits into characters.
            let items = text_arg(&args[0])
                .chars()
                .map(|c| Value::Text(Arc::from(c.to_string())))
                .collect();
            return Ok(array_value(ArrayElem::Text, items));
        }
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
        Func::ByteaLength => Value::Int4(bytea_arg(&args[0]).len() as i32),
        Func::Md5Bytea => text(pgtypes::md5::md5_hex(bytea_arg(&args[0]))),
        Func::Encode => {
            let b = bytea_arg(&args[0]);
            match text_arg(&args[1]).to_ascii_lowercase().as_str() {
                "hex" => {
                    let mut out = bytes::BytesMut::with_capacity(b.len() * 2);
                    pgtypes::bytea::write_hex(&mut out, b);
                    text(String::from_utf8_lossy(&out).into_owned())
                }
                "base64" => text(pgtypes::bytea::encode_base64(b)),
                "escape" => text(pgtypes::bytea::encode_escape(b)),
                other => return Err(unknown_encoding(other)),
            }
        }
        Func::Decode => {
            let s = text_arg(&args[0]);
            let b = match text_arg(&args[1]).to_ascii_lowercase().as_str() {
                "hex" => pgtypes::bytea::decode_hex(s.as_bytes())?,
                "base64" => pgtypes::bytea::decode_base64(s)?,
                "escape" => pgtypes::bytea::decode_escape(s.as_bytes())?,
                other => return Err(unknown_encoding(other)),
            };
            Value::Bytea(Arc::from(b))
        }
        Func::PgColumnSize => Value::Int4(datum_size(&args[0]) as i32),
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
            Value::Numeric(n) if n.signum() < 0 => {
                return Err(PgError::new(
                    "2201F",
                    "cannot take square root of a negative number",
                ))
            }
            Value::Numeric(n) => Value::Numeric(sqrt_numeric(*n)?),
            other => other.clone(),
        },
        Func::Mod => crate::expr::arith(crate::expr::BinOp::Mod, &args[0], &args[1])?,
        Func::Random => Value::Float8(ctx.random()),
        Func::GenRandomUuid => {
            let mut b = [0u8; 16];
            rand::fill(&mut b[..]);
            Value::Uuid(pgtypes::uuid::v4_from_bytes(b))
        }
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
        Func::PgReloadConf => Value::Bool(ctx.reload_conf()),
        Func::PgStatResetShared => match args.first().and_then(Value::as_str) {
            Some(target) => {
                ctx.reset_shared_stats(target)?;
                Value::Void
            }
            None => Value::Null,
        },
        Func::PgCreatePhysicalReplicationSlot => {
            let Some(name) = args.first().and_then(Value::as_str) else {
                return Ok(Value::Null);
            };
            let flag = |i: usize| args.get(i).and_then(Value::as_bool);
            let (Some(reserve), Some(temporary)) = (
                flag(1).or((args.len() < 2).then_some(false)),
                flag(2).or((args.len() < 3).then_some(false)),
            ) else {
                return Ok(Value::Null);
            };
            let lsn = ctx.create_physical_replication_slot(name, reserve, temporary)?;
            let lsn = lsn.map(|l| pgtypes::lsn::Lsn(l).to_string());
            Value::Text(pgtypes::sqltype::record_out(&[Some(name), lsn.as_deref()]).into())
        }
        Func::PgDropReplicationSlot => match args.first().and_then(Value::as_str) {
            Some(name) => {
                ctx.drop_replication_slot(name)?;
                Value::Void
            }
            None => Value::Null,
        },
        Func::PgCancelBackend => match args.first() {
            Some(Value::Int4(pid)) => Value::Bool(ctx.cancel_backend(*pid)?),
            _ => Value::Null,
        },
        Func::PgTerminateBackend => match (args.first(), args.get(1)) {
            (Some(Value::Int4(pid)), None) => Value::Bool(ctx.terminate_backend(*pid, 0)?),
            (Some(Value::Int4(pid)), Some(Value::Int8(t))) => {
                Value::Bool(ctx.terminate_backend(*pid, *t)?)
            }
            _ => Value::Null,
        },
        Func::PgPromote => {
            let wait = args.first().and_then(Value::as_bool).unwrap_or(true);
            let secs = match args.get(1) {
                Some(Value::Int4(s)) => *s,
                _ => 60,
            };
            Value::Bool(ctx.promote(wait, secs)?)
        }
        Func::PgSizePretty => text(size_pretty(args[0].as_i64().unwrap_or(0))),
        Func::PgDatabaseSize => match &args[0] {
            Value::Text(name) if **name == *ctx.current_database() => {
                let mut total = 0;
                if let Some(snap) = ctx.pg_catalog() {
                    for t in &snap.tables {
                        total += ctx.relation_size(t.oid)?.unwrap_or(0);
                    }
                }
                Value::Int8(total)
            }
            Value::Text(name) => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_DATABASE,
                    format!("database \"{name}\" does not exist"),
                ))
            }
            _ => Value::Null,
        },
        Func::PgRelationSize => match &args[0] {
            Value::Oid(o) => ctx.relation_size(*o)?.map_or(Value::Null, Value::Int8),
            _ => Value::Null,
        },
        Func::Sequence(f) => {
            let name = args.first().map(text_arg);
            let value = match (args.get(1), args.get(2)) {
                (Some(Value::Int8(v)), called) => {
                    Some((*v, called.and_then(Value::as_bool).unwrap_or(true)))
                }
                _ => None,
            };
            Value::Int8(ctx.sequence(f, name, value)?)
        }
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
        Func::CurrentDatabase => text(ctx.current_database()),
        Func::CurrentUser => text(ctx.current_user()),
        Func::SessionUser => text(ctx.session_user()),
        Func::CurrentSchema => match ctx.pg_catalog() {
            Some(s) => match s.path.first().and_then(|ns| s.namespace_name(*ns)) {
                Some(n) => Value::text(n),
                None => Value::Null,
            },
            None => Value::text("public"),
        },
        Func::WalLsn(which) => match ctx.wal_lsn(which)? {
            Some(l) => Value::PgLsn(l),
            None => Value::Null,
        },
        Func::WalFileName => match &args[0] {
            Value::PgLsn(l) => match ctx.walfile_name(*l)? {
                Some(name) => Value::text(&name),
                None => Value::Null,
            },
            _ => Value::Null,
        },
        Func::WalLsnDiff => match (&args[0], &args[1]) {
            (Value::PgLsn(a), Value::PgLsn(b)) => {
                Value::Numeric(Numeric::from_i128(*a as i128 - *b as i128))
            }
            _ => Value::Null,
        },
        Func::ArraySubscript => match &args[0] {
            Value::Array(a) => {
                let subs: Vec<i64> = args[1..].iter().map(int_arg).collect();
                a.get_at(&subs)
            }
            _ => Value::Null,
        },
        Func::ArraySlice => match &args[0] {
            Value::Array(a) => {
                let bounds: Vec<(i64, i64)> = args[1..]
                    .chunks(2)
                    .map(|p| (int_arg(&p[0]), p.get(1).map_or(i64::MAX, int_arg)))
                    .collect();
                Value::Array(Arc::new(a.slice(&bounds)))
            }
            _ => Value::Null,
        },
        Func::ArrayContains { contained } => match (&args[0], &args[1]) {
            (Value::Array(a), Value::Array(b)) => {
                let (big, small) = if contained { (b, a) } else { (a, b) };
                Value::Bool(small.items.iter().all(|x| {
                    big.items
                        .iter()
                        .any(|y| cmp_sql(x, y) == Some(Ordering::Equal))
                }))
            }
            _ => Value::Null,
        },
        Func::ArrayOverlap => match (&args[0], &args[1]) {
            (Value::Array(a), Value::Array(b)) => Value::Bool(a.items.iter().any(|x| {
                b.items
                    .iter()
                    .any(|y| cmp_sql(x, y) == Some(Ordering::Equal))
            })),
            _ => Value::Null,
        },
        Func::AtTimeZone => {
            let zone = text_arg(&args[1]).trim().to_ascii_lowercase();
            if !matches!(
                zone.as_str(),
                "utc" | "gmt" | "z" | "zulu" | "etc/utc" | "uct" | "universal"
            ) {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("time zone \"{}\" not recognized", text_arg(&args[1])),
                ));
            }
            match &args[0] {
                Value::Timestamp(t) => Value::TimestampTz(*t),
                Value::TimestampTz(t) => Value::Timestamp(*t),
                _ => Value::Null,
            }
        }
        Func::MakeTimestamp => {
            let f = |i: usize| int_arg(&args[i]);
            let secs = match &args[5] {
                Value::Float8(x) => *x,
                other => other.as_i64().unwrap_or(0) as f64,
            };
            let bad = || {
                PgError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    format!(
                        "date field value out of range: {}-{:02}-{:02}",
                        f(0),
                        f(1),
                        f(2)
                    ),
                )
            };
            let d = ts_fields::make_date(
                i32::try_from(f(0)).map_err(|_| bad())?,
                i32::try_from(f(1)).map_err(|_| bad())?,
                i32::try_from(f(2)).map_err(|_| bad())?,
            )?;
            let (h, mi) = (f(3), f(4));
            if !(0..=24).contains(&h) || !(0..60).contains(&mi) || !(0.0..=60.0).contains(&secs) {
                return Err(PgError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    format!(
                        "time field value out of range: {}:{:02}:{}",
                        h,
                        mi,
                        Value::Float8(secs).to_text_string()
                    ),
                ));
            }
            let us = (h * 3600 + mi * 60) * datetime::USECS_PER_SEC + (secs * 1e6).round() as i64;
            let t = (d as i64)
                .checked_mul(datetime::USECS_PER_DAY)
                .and_then(|x| x.checked_add(us))
                .filter(|t| datetime::timestamp_in_range(*t))
                .ok_or_else(interval::timestamp_out_of_range)?;
            Value::Timestamp(t)
        }
        Func::ArrayLength | Func::ArrayLower | Func::ArrayUpper => match &args[0] {
            Value::Array(a) => {
                let d = int_arg(&args[1]);
                let dims = a.dims();
                match usize::try_from(d - 1).ok().and_then(|k| dims.get(k)) {
                    Some(dim) => Value::Int4(match func {
                        Func::ArrayLength => dim.len,
                        Func::ArrayLower => dim.lower,
                        // Bounds keep lower + length within int4 (PostgreSQL's
                        // ArrayCheckBounds); computed wide all the same.
                        _ => (dim.lower as i64 + dim.len as i64 - 1) as i32,
                    }),
                    None => Value::Null,
                }
            }
            _ => Value::Null,
        },
        Func::Cardinality => match &args[0] {
            Value::Array(a) => Value::Int4(a.items.len() as i32),
            _ => Value::Null,
        },
        Func::ArrayNdims => match &args[0] {
            Value::Array(a) if a.ndims() > 0 => Value::Int4(a.ndims() as i32),
            _ => Value::Null,
        },
        Func::ArrayDims => match &args[0] {
            Value::Array(a) if a.ndims() > 0 => {
                let out: String = a
                    .dims()
                    .iter()
                    .map(|d| format!("[{}:{}]", d.lower, d.lower as i64 + d.len as i64 - 1))
                    .collect();
                text(out)
            }
            _ => Value::Null,
        },
        Func::ArrayPosition => match &args[0] {
            Value::Array(a) if a.ndims() > 1 => {
                return Err(PgError::unsupported(
                    "searching for elements in multidimensional arrays is not supported",
                ))
            }
            Value::Array(a) => a
                .items
                .iter()
                .position(|x| cmp_sql(x, &args[1]) == Some(Ordering::Equal))
                .map_or(Value::Null, |i| Value::Int4(a.lower + i as i32)),
            _ => Value::Null,
        },
        Func::ArrayToString => match &args[0] {
            Value::Array(a) => {
                let delim = text_arg(&args[1]);
                let null_text = args.get(2).map(text_arg);
                let mut out = String::new();
                let mut first = true;
                for x in &a.items {
                    let piece = if x.is_null() {
                        match null_text {
                            Some(t) => t.to_string(),
                            None => continue,
                        }
                    } else {
                        x.to_text_string()
                    };
                    if !first {
                        out.push_str(delim);
                    }
                    first = false;
                    out.push_str(&piece);
                }
                text(out)
            }
            _ => Value::Null,
        },
        Func::StringToArray => {
            let s = text_arg(&args[0]);
            let delim = text_arg(&args[1]);
            let null_text = args.get(2).map(text_arg);
            let to_value = |p: &str| {
                if Some(p) == null_text {
                    Value::Null
                } else {
                    Value::Text(Arc::from(p))
                }
            };
            let items: Vec<Value> = if s.is_empty() {
                Vec::new()
            } else if delim.is_empty() {
                vec![to_value(s)]
            } else {
                s.split(delim).map(to_value).collect()
            };
            array_value(ArrayElem::Text, items)
        }
        Func::Unnest => {
            return Err(PgError::unsupported(
                "set-valued function called in context that cannot accept a set",
            ))
        }
        Func::DateTrunc => {
            let unit = text_arg(&args[0]);
            match &args[1] {
                Value::Timestamp(t) => {
                    Value::Timestamp(ts_fields::trunc_timestamp(unit, *t, TimeKind::Timestamp)?)
                }
                Value::TimestampTz(t) => {
                    Value::TimestampTz(ts_fields::trunc_timestamp(unit, *t, TimeKind::TimestampTz)?)
                }
                Value::Interval(iv) => Value::Interval(ts_fields::trunc_interval(unit, *iv)?),
                _ => Value::Null,
            }
        }
        Func::DatePart { numeric } => {
            let unit = text_arg(&args[0]);
            let n = match &args[1] {
                Value::Timestamp(t) => ts_fields::extract_timestamp(unit, *t, TimeKind::Timestamp)?,
                Value::TimestampTz(t) => {
                    ts_fields::extract_timestamp(unit, *t, TimeKind::TimestampTz)?
                }
                Value::Date(d) => ts_fields::extract_date(unit, *d)?,
                Value::Interval(iv) => Some(ts_fields::extract_interval(unit, *iv)?),
                _ => None,
            };
            match n {
                None => Value::Null,
                Some(n) if numeric => Value::Numeric(n),
                Some(n) => Value::Float8(n.to_f64()),
            }
        }
        Func::Age => match (&args[0], &args[1]) {
            (
                Value::Timestamp(a) | Value::TimestampTz(a),
                Value::Timestamp(b) | Value::TimestampTz(b),
            ) => Value::Interval(interval::age(*a, *b)?),
            _ => Value::Null,
        },
        Func::AgeToday => match &args[0] {
            Value::Timestamp(b) | Value::TimestampTz(b) => {
                let today = ctx
                    .transaction_timestamp()
                    .div_euclid(datetime::USECS_PER_DAY)
                    * datetime::USECS_PER_DAY;
                Value::Interval(interval::age(today, *b)?)
            }
            _ => Value::Null,
        },
        Func::MakeDate => Value::Date(ts_fields::make_date(
            int_arg(&args[0]) as i32,
            int_arg(&args[1]) as i32,
            int_arg(&args[2]) as i32,
        )?),
        Func::MakeInterval => {
            let f = |i: usize| args.get(i).map(int_arg).unwrap_or(0);
            let secs = match args.get(6) {
                Some(Value::Float8(x)) => *x,
                _ => 0.0,
            };
            let months = f(0)
                .checked_mul(12)
                .and_then(|y| y.checked_add(f(1)))
                .and_then(|m| i32::try_from(m).ok())
                .ok_or_else(interval::interval_out_of_range)?;
            let days = f(2)
                .checked_mul(7)
                .and_then(|w| w.checked_add(f(3)))
                .and_then(|d| i32::try_from(d).ok())
                .ok_or_else(interval::interval_out_of_range)?;
            let micros = (f(4) as f64 * 3600.0 + f(5) as f64 * 60.0 + secs) * 1e6;
            if !micros.is_finite() || micros.abs() >= 9.2e18 {
                return Err(interval::interval_out_of_range());
            }
            Value::Interval(Interval::new(months, days, micros.round() as i64))
        }
        Func::CurrentDate => Value::Date(datetime::timestamp_to_date(ctx.transaction_timestamp())),
        Func::Justify { hours, days } => match &args[0] {
            Value::Interval(iv) => {
                let mut r = *iv;
                if hours {
                    r = r.justify_hours();
                }
                if days {
                    let extra = r.days / 30;
                    r.months = r
                        .months
                        .checked_add(extra)
                        .ok_or_else(interval::interval_out_of_range)?;
                    r.days -= extra * 30;
                    if r.months > 0 && r.days < 0 {
                        r.days += 30;
                        r.months -= 1;
                    } else if r.months < 0 && r.days > 0 {
                        r.days -= 30;
                        r.months += 1;
                    }
                }
                Value::Interval(r)
            }
            _ => Value::Null,
        },
        Func::ToChar => to_char(&args[0], text_arg(&args[1]))?,
        Func::ToDate => Value::Date(datetime::timestamp_to_date(formatting::parse_timestamp(
            text_arg(&args[0]),
            text_arg(&args[1]),
        )?)),
        Func::ToTimestamp => Value::TimestampTz(formatting::parse_timestamp(
            text_arg(&args[0]),
            text_arg(&args[1]),
        )?),
        Func::ToTimestampEpoch => {
            let secs = match &args[0] {
                Value::Float8(f) => *f,
                other => other.as_i64().unwrap_or(0) as f64,
            };
            if secs.is_nan() {
                return Err(PgError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    "timestamp cannot be NaN",
                ));
            }
            if secs.is_infinite() {
                Value::TimestampTz(if secs > 0.0 {
                    datetime::TS_INFINITY
                } else {
                    datetime::TS_NEG_INFINITY
                })
            } else {
                let us = (secs * 1e6).round() - datetime::UNIX_TO_PG_EPOCH_SECS as f64 * 1e6;
                if !(-2.1e17..9.2e18).contains(&us) || !datetime::timestamp_in_range(us as i64) {
                    return Err(PgError::new(
                        sqlstate::DATETIME_FIELD_OVERFLOW,
                        format!(
                            "timestamp out of range: \"{}\"",
                            Value::Float8(secs).to_text_string()
                        ),
                    ));
                }
                Value::TimestampTz(us as i64)
            }
        }
        Func::ToNumber => Value::Numeric(formatting::parse_number(
            text_arg(&args[0]),
            text_arg(&args[1]),
        )?),
        Func::SplitPart => {
            let s = text_arg(&args[0]);
            let d = text_arg(&args[1]);
            let n = int_arg(&args[2]);
            if n == 0 {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    "field position must not be zero",
                ));
            }
            let parts: Vec<&str> = if d.is_empty() {
                vec![s]
            } else {
                s.split(d).collect()
            };
            let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
            let piece = if s.is_empty() {
                ""
            } else {
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| parts.get(i))
                    .copied()
                    .unwrap_or("")
            };
            Value::Text(Arc::from(piece))
        }
        Func::RegexMatch { icase, negated } => {
            Value::Bool(regexp::is_match(text_arg(&args[0]), text_arg(&args[1]), icase)? != negated)
        }
        Func::RegexpMatch => {
            let flags = args.get(2).map(text_arg).unwrap_or("");
            match regexp::regexp_match(text_arg(&args[0]), text_arg(&args[1]), flags)? {
                Some(groups) => array_value(
                    ArrayElem::Text,
                    groups
                        .into_iter()
                        .map(|g| g.map_or(Value::Null, |s| Value::Text(Arc::from(s))))
                        .collect(),
                ),
                None => Value::Null,
            }
        }
        Func::RegexpReplace => text(regexp::regexp_replace(
            text_arg(&args[0]),
            text_arg(&args[1]),
            text_arg(&args[2]),
            args.get(3).map(text_arg).unwrap_or(""),
        )?),
        Func::SubstringRegex => match regexp::substring(text_arg(&args[0]), text_arg(&args[1]))? {
            Some(s) => text(s),
            None => Value::Null,
        },
        Func::SimilarTo { negated } => {
            let esc = match args.get(2) {
                Some(e) => regexp::escape_char(text_arg(e))?,
                None => Some('\\'),
            };
            let re = regexp::similar_to_regex(text_arg(&args[1]), esc)?;
            let r = regexp::compile(&re, regexp::Flags::default())?;
            Value::Bool(r.is_match(text_arg(&args[0])) != negated)
        }
        Func::LikeEscape { icase, negated } => {
            let esc = regexp::escape_char(text_arg(&args[2]))?;
            Value::Bool(
                regexp::like_match(text_arg(&args[0]), text_arg(&args[1]), esc, icase)? != negated,
            )
        }
        Func::Initcap => {
            let mut out = String::new();
            let mut prev_alnum = false;
            for c in text_arg(&args[0]).chars() {
                if prev_alnum {
                    out.extend(c.to_lowercase());
                } else {
                    out.extend(c.to_uppercase());
                }
                prev_alnum = c.is_alphanumeric();
            }
            text(out)
        }
        Func::Lpad | Func::Rpad => {
            let s = text_arg(&args[0]);
            let len = int_arg(&args[1]).max(0) as usize;
            if len > (1 << 28) {
                return Err(too_large());
            }
            let fill = args.get(2).map(text_arg).unwrap_or(" ");
            let have = s.chars().count();
            if have >= len {
                text(s.chars().take(len).collect())
            } else if fill.is_empty() {
                text(s.to_string())
            } else {
                let pad: String = fill.chars().cycle().take(len - have).collect();
                if func == Func::Lpad {
                    text(pad + s)
                } else {
                    text(s.to_string() + &pad)
                }
            }
        }
        Func::Reverse => text(text_arg(&args[0]).chars().rev().collect()),
        Func::StartsWith => Value::Bool(text_arg(&args[0]).starts_with(text_arg(&args[1]))),
        Func::Translate => {
            let from: Vec<char> = text_arg(&args[1]).chars().collect();
            let to: Vec<char> = text_arg(&args[2]).chars().collect();
            let mut out = String::new();
            for c in text_arg(&args[0]).chars() {
                match from.iter().position(|f| *f == c) {
                    Some(i) => {
                        if let Some(t) = to.get(i) {
                            out.push(*t);
                        }
                    }
                    None => out.push(c),
                }
            }
            text(out)
        }
        Func::Chr => {
            let n = int_arg(&args[0]);
            match u32::try_from(n).ok().and_then(char::from_u32) {
                Some(c) if n != 0 => text(c.to_string()),
                _ if n == 0 => {
                    return Err(PgError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        "null character not permitted",
                    ))
                }
                _ => {
                    return Err(PgError::new(
                        sqlstate::PROGRAM_LIMIT_EXCEEDED,
                        "requested character too large for encoding: ".to_string() + &n.to_string(),
                    ))
                }
            }
        }
        Func::Ascii => Value::Int4(text_arg(&args[0]).chars().next().map_or(0, |c| c as i32)),
        Func::Md5 => text(pgtypes::md5::md5_hex(text_arg(&args[0]).as_bytes())),
        Func::Sign => match &args[0] {
            Value::Float8(f) => Value::Float8(if *f > 0.0 {
                1.0
            } else if *f < 0.0 {
                -1.0
            } else {
                0.0
            }),
            Value::Numeric(n) => Value::Numeric(Numeric::from_i64(n.signum() as i64)),
            other => return Err(PgError::internal(format!("sign of {}", other.sql_type()))),
        },
        Func::Power => power(&args[0], &args[1])?,
        Func::ToHex => {
            let v = match &args[0] {
                Value::Int4(i) => *i as u32 as u64,
                other => other.as_i64().unwrap_or(0) as u64,
            };
            text(format!("{:x}", v))
        }
        Func::User(_)
        | Func::Catalog(_)
        | Func::Json(_)
        | Func::Net(_)
        | Func::Coalesce
        | Func::Concat
        | Func::Greatest
        | Func::Least
        | Func::Nullif
        | Func::CurrentSettingMissingOk
        | Func::MakeArray(_)
        | Func::StackArrays(_)
        | Func::ArrayCmp { .. }
        | Func::ArrayAppend
        | Func::ArrayPrepend
        | Func::ArrayCat
        | Func::ArrayRemove
        | Func::ArrayReplace
        | Func::EnumFirst(_)
        | Func::EnumLast(_)
        | Func::EnumRange(_)
        | Func::ConcatWs
        | Func::Format => Value::Null,
    })
}

/// format(fmt, args…) (PostgreSQL's text_format): `%[n$][-][width]s`,
/// `I` (quote_ident; NULL is an error), `L` (quote_literal; NULL prints
/// `NULL`) and `%%`. The width `*` form is not supported.
fn format_text(fmt: &str, args: &[Value]) -> PgResult<String> {
    let bad = |m: &str| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, m.to_string());
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    let mut next_arg = 0usize;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // [n$][-][width]type
        let mut digits = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            digits.push(*d);
            chars.next();
        }
        let mut position = None;
        if !digits.is_empty() && chars.peek() == Some(&'$') {
            chars.next();
            let n: usize = digits.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                bad("format specifies argument 0, but arguments are numbered from 1")
            })?;
            position = Some(n - 1);
            digits.clear();
        }
        let mut left = false;
        if digits.is_empty() {
            if chars.peek() == Some(&'-') {
                left = true;
                chars.next();
            }
            if chars.peek() == Some(&'*') {
                return Err(PgError::unsupported("format width * is not supported"));
            }
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
        }
        let width: usize = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad("number is out of range"))?
        };
        let Some(kind) = chars.next() else {
            return Err(bad("unterminated format() type specifier")
                .with_hint("For a single \"%\" use \"%%\"."));
        };
        let i = position.unwrap_or(next_arg);
        next_arg = i + 1;
        let Some(arg) = args.get(i) else {
            return Err(bad("too few arguments for format()"));
        };
        let text = match (kind, arg) {
            ('s', Value::Null) => String::new(),
            ('s', v) => v.to_text_string(),
            ('I', Value::Null) => {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ))
            }
            ('I', v) => crate::pgcatalog::quote_ident(&v.to_text_string()),
            ('L', Value::Null) => "NULL".to_string(),
            ('L', v) => quote_literal(&v.to_text_string()),
            (k, _) => {
                return Err(
                    bad(&format!("unrecognized format() type specifier \"{k}\""))
                        .with_hint("For a single \"%\" use \"%%\"."),
                )
            }
        };
        let pad = width.saturating_sub(text.chars().count());
        if left {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&text);
        }
    }
    Ok(out)
}

/// quote_literal: single quotes doubled; with a backslash, backslashes
/// doubled and an `E` prefix.
fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// pg_size_pretty: bytes below 10 kB, then kB, MB, GB, TB, PB, each
/// used below 20 × 1024 − 1 of it and rounded half away from zero, as
/// PostgreSQL 15 prints them.
pub fn size_pretty(mut size: i64) -> String {
    // (name, limit, rounds, unit bits)
    const UNITS: [(&str, i64, bool, u32); 6] = [
        ("bytes", 10 * 1024, false, 0),
        ("kB", 20 * 1024 - 1, true, 10),
        ("MB", 20 * 1024 - 1, true, 20),
        ("GB", 20 * 1024 - 1, true, 30),
        ("TB", 20 * 1024 - 1, true, 40),
        ("PB", 20 * 1024 - 1, true, 50),
    ];
    for (i, &(name, limit, round, bits)) in UNITS.iter().enumerate() {
        let last = i + 1 == UNITS.len();
        if last || size.unsigned_abs() < limit as u64 {
            if round {
                size = (size + if size < 0 { -1 } else { 1 }) / 2;
            }
            return format!("{size} {name}");
        }
        let (_, _, next_round, next_bits) = UNITS[i + 1];
        let shift = next_bits - bits - u32::from(next_round) + u32::from(round);
        size /= 1i64 << shift;
    }
    String::new()
}

/// `x op ANY/ALL(array)`: ANY is true if some comparison is true, else
/// NULL if some was NULL, else false; ALL is the dual. An empty array gives
/// false (ANY) / true (ALL) even for a NULL `x`.
/// `x op ANY / ALL (arr)`: NULL when undecided by the non-NULL elements.
pub(crate) fn array_compare(op: BinOp, all: bool, x: &Value, arr: &Value) -> Value {
    let Value::Array(a) = arr else {
        return Value::Null;
    };
    match array_compare_by(op, all, &a.items, |item| cmp_sql(x, item)) {
        Some(b) => Value::Bool(b),
        None => Value::Null,
    }
}

/// ANY / ALL over `items` with `cmp` comparing the left operand to one
/// element (None: NULL): decided by the first element that settles it,
/// else NULL if an element compared as NULL, else `all`.
pub(crate) fn array_compare_by(
    op: BinOp,
    all: bool,
    items: &[Value],
    mut cmp: impl FnMut(&Value) -> Option<Ordering>,
) -> Option<bool> {
    let mut saw_null = false;
    for item in items {
        match cmp(item).map(|o| crate::expr::cmp_holds(op, o)) {
            Some(b) if b != all => return Some(!all),
            Some(_) => {}
            None => saw_null = true,
        }
    }
    (!saw_null).then_some(all)
}

/// array_append / array_prepend / array_cat (and `||` on arrays): a NULL
/// array acts as an empty one; a NULL element is appended as NULL; an
/// element goes onto an empty or one-dimensional array only (22000, as in
/// PostgreSQL), keeping its lower bound.
fn array_concat(func: Func, a: &Value, b: &Value) -> PgResult<Value> {
    let arr = |v: &Value| -> Option<ArrayValue> {
        match v {
            Value::Array(x) => Some((**x).clone()),
            _ => None,
        }
    };
    let one_dim = |x: &ArrayValue| -> PgResult<()> {
        if x.ndims() > 1 {
            return Err(PgError::new(
                sqlstate::DATA_EXCEPTION,
                "argument must be empty or one-dimensional array",
            ));
        }
        Ok(())
    };
    Ok(match func {
        Func::ArrayAppend => match (arr(a), b) {
            (Some(mut x), e) => {
                one_dim(&x)?;
                x.items.push(e.clone());
                Value::Array(Arc::new(x))
            }
            (None, e) => match ArrayElem::of(e.sql_type()) {
                Some(el) => array_value(el, vec![e.clone()]),
                None => Value::Null,
            },
        },
        Func::ArrayPrepend => match (a, arr(b)) {
            (e, Some(mut x)) => {
                one_dim(&x)?;
                x.items.insert(0, e.clone());
                Value::Array(Arc::new(x))
            }
            (e, None) => match ArrayElem::of(e.sql_type()) {
                Some(el) => array_value(el, vec![e.clone()]),
                None => Value::Null,
            },
        },
        _ => match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                Value::Array(Arc::new(pgtypes::array::concat(x, y)?))
            }
            (Value::Array(_), _) => a.clone(),
            (_, Value::Array(_)) => b.clone(),
            _ => Value::Null,
        },
    })
}

/// An ordered-set aggregate's result over its sorted non-NULL `values`
/// (PostgreSQL's percentile_cont_final, percentile_disc_final,
/// mode_final): NULL without values or for a NULL fraction; an array of
/// fractions gives an array of the same shape.
fn ordered_set_result(
    func: AggFunc,
    arg_ty: SqlType,
    values: &[Value],
    fraction: &Value,
) -> PgResult<Value> {
    let one = |p: &Value| -> PgResult<Value> {
        let Value::Float8(p) = *p else {
            return Ok(Value::Null);
        };
        if !(0.0..=1.0).contains(&p) {
            return Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "percentile value {} is not between 0 and 1",
                    Value::Float8(p).to_text_string()
                ),
            ));
        }
        let n = values.len();
        if let AggFunc::PercentileDisc { .. } = func {
            let row = (p * n as f64).ceil() as usize;
            return Ok(values[row.clamp(1, n) - 1].clone());
        }
        let at = p * (n - 1) as f64;
        let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
        let frac = at - lo as f64;
        Ok(match (&values[lo], &values[hi.min(n - 1)]) {
            (a, _) if lo == hi => a.clone(),
            (Value::Float8(a), Value::Float8(b)) => Value::Float8(a + (b - a) * frac),
            (Value::Interval(a), Value::Interval(b)) => {
                Value::Interval(a.checked_add(b.checked_sub(*a)?.mul_f64(frac)?)?)
            }
            (a, _) => a.clone(),
        })
    };
    if values.is_empty() {
        return Ok(Value::Null);
    }
    if func == AggFunc::Mode {
        // The longest run of equal values; the first such run on a tie.
        let (mut best, mut best_len, mut start) = (0usize, 0usize, 0usize);
        for i in 1..=values.len() {
            let run_ends =
                i == values.len() || cmp_sql(&values[i], &values[start]) != Some(Ordering::Equal);
            if run_ends {
                if i - start > best_len {
                    (best, best_len) = (start, i - start);
                }
                start = i;
            }
        }
        return Ok(values[best].clone());
    }
    match fraction {
        Value::Array(ps) => {
            let Some(elem) = ArrayElem::of(arg_ty.base()) else {
                return Ok(Value::Null);
            };
            let items = ps.items.iter().map(one).collect::<PgResult<Vec<_>>>()?;
            Ok(Value::Array(Arc::new(ps.same_shape(elem, items))))
        }
        p => one(p),
    }
}

/// array_agg over arrays: the inputs stacked as one more dimension; they
/// must all be non-NULL, non-empty and of one shape (PostgreSQL's errors).
fn stack_aggregated(elem: ArrayElem, inputs: &[Value]) -> PgResult<Value> {
    // Checked in input order, as PostgreSQL accumulates: the first input
    // sets the shape.
    let mut parts: Vec<&ArrayValue> = Vec::with_capacity(inputs.len());
    let mut shape = Vec::new();
    for v in inputs {
        let Value::Array(a) = v else {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "cannot accumulate null arrays",
            ));
        };
        if parts.is_empty() {
            if a.items.is_empty() {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "cannot accumulate empty arrays",
                ));
            }
            shape = a.dims();
        } else if a.dims() != shape {
            return Err(PgError::new(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                "cannot accumulate arrays of different dimensionality",
            ));
        }
        parts.push(a);
    }
    Ok(match pgtypes::array::stack(elem, &parts)? {
        Some(a) => Value::Array(Arc::new(a)),
        None => Value::Null,
    })
}

/// array_remove / array_replace: the elements not distinct from `args[1]`
/// dropped (one dimension only, as in PostgreSQL) or replaced by `args[2]`;
/// a NULL array gives NULL.
fn array_replace(func: Func, args: &[Value]) -> PgResult<Value> {
    let Value::Array(a) = &args[0] else {
        return Ok(Value::Null);
    };
    let matches = |x: &Value| match (x.is_null(), args[1].is_null()) {
        (true, true) => true,
        (false, false) => cmp_sql(x, &args[1]) == Some(Ordering::Equal),
        _ => false,
    };
    if func == Func::ArrayReplace {
        let items = a
            .items
            .iter()
            .map(|x| {
                if matches(x) {
                    args[2].clone()
                } else {
                    x.clone()
                }
            })
            .collect();
        return Ok(Value::Array(Arc::new(a.same_shape(a.elem, items))));
    }
    if a.ndims() > 1 {
        return Err(PgError::unsupported(
            "removing elements from multidimensional arrays is not supported",
        ));
    }
    let items: Vec<Value> = a.items.iter().filter(|x| !matches(x)).cloned().collect();
    let lower = if items.is_empty() { 1 } else { a.lower };
    let mut out = ArrayValue::new(a.elem, items);
    out.lower = lower;
    Ok(Value::Array(Arc::new(out)))
}

/// `ARRAY[ARRAY[…], …]`: the sub-arrays stacked as one more dimension; a
/// NULL counts as empty, and all of them empty gives the empty array.
fn stack_arrays(elem: ArrayElem, args: &[Value]) -> PgResult<Value> {
    let parts: Vec<Option<&ArrayValue>> = args
        .iter()
        .map(|v| match v {
            Value::Array(a) if !a.items.is_empty() => Some(&**a),
            _ => None,
        })
        .collect();
    if parts.iter().all(Option::is_none) {
        return Ok(array_value(elem, Vec::new()));
    }
    let stacked = match parts.into_iter().collect::<Option<Vec<_>>>() {
        Some(parts) => pgtypes::array::stack(elem, &parts)?,
        None => None,
    };
    match stacked {
        Some(a) => Ok(Value::Array(Arc::new(a))),
        None => Err(PgError::new(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            "multidimensional arrays must have array expressions with matching dimensions",
        )),
    }
}

/// to_char for each argument type.
fn to_char(v: &Value, fmt: &str) -> PgResult<Value> {
    let text = |s: String| Value::Text(Arc::from(s));
    Ok(match v {
        Value::Timestamp(t) => match formatting::format_timestamp(*t, false, fmt) {
            Some(s) => text(s),
            None => Value::Null,
        },
        Value::TimestampTz(t) => match formatting::format_timestamp(*t, true, fmt) {
            Some(s) => text(s),
            None => Value::Null,
        },
        Value::Interval(iv) => text(formatting::format_interval(*iv, fmt)),
        Value::Numeric(n) => {
            let post = formatting::number_template_scale(fmt)?;
            text(formatting::format_number(
                &formatting::numeric_digits(*n, post)?,
                fmt,
            )?)
        }
        Value::Float8(f) => {
            let post = formatting::number_template_scale(fmt)?;
            text(formatting::format_number(
                &formatting::float_digits(*f, post),
                fmt,
            )?)
        }
        other => match other.as_i64() {
            Some(i) => {
                let post = formatting::number_template_scale(fmt)?;
                let n = Numeric::from_i64(i);
                text(formatting::format_number(
                    &formatting::numeric_digits(n, post)?,
                    fmt,
                )?)
            }
            None => Value::Null,
        },
    })
}

/// Float helper exposed for the evaluator: an overflow check on a float result.
pub fn check_float(f: f64) -> PgResult<Value> {
    float_result(f)
}

/// The type `power(a, b)` / `a ^ b` works in: numeric when either side is
/// numeric (and the other an integer, numeric or untyped literal), else
/// float8 — PostgreSQL's resolution over `numeric ^ numeric` and
/// `float8 ^ float8`.
pub fn power_type(a: SqlType, b: SqlType) -> Option<SqlType> {
    let numeric_ok =
        |t: SqlType| t.is_integer() || matches!(t, SqlType::Numeric(_) | SqlType::Unknown);
    let float_ok = |t: SqlType| {
        t.is_integer() || matches!(t, SqlType::Numeric(_) | SqlType::Float8 | SqlType::Unknown)
    };
    if (matches!(a, SqlType::Numeric(_)) || matches!(b, SqlType::Numeric(_)))
        && numeric_ok(a)
        && numeric_ok(b)
    {
        return Some(SqlType::NUMERIC);
    }
    (float_ok(a) && float_ok(b)).then_some(SqlType::Float8)
}

fn power_error(msg: &str) -> PgError {
    PgError::new("2201F", msg)
}

/// float8 and numeric power with PostgreSQL's errors.
fn power(a: &Value, b: &Value) -> PgResult<Value> {
    match (a, b) {
        (Value::Float8(x), Value::Float8(y)) => {
            if *x == 0.0 && *y < 0.0 {
                return Err(power_error("zero raised to a negative power is undefined"));
            }
            if *x < 0.0 && y.is_finite() && y.fract() != 0.0 {
                return Err(power_error(
                    "a negative number raised to a non-integer power yields a complex result",
                ));
            }
            let r = x.powf(*y);
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: overflow",
                ));
            }
            if r == 0.0 && *x != 0.0 && x.is_finite() && y.is_finite() {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: underflow",
                ));
            }
            Ok(Value::Float8(r))
        }
        (Value::Numeric(x), Value::Numeric(y)) => Ok(Value::Numeric(numeric_power(*x, *y)?)),
        _ => Err(PgError::internal("power of mixed types")),
    }
}

/// numeric ^ numeric: exact for an integer exponent (while the mantissa
/// fits), through float8 otherwise; the result scale follows PostgreSQL's
/// power_var (at least 16 significant digits, at least the operands'
/// scales).
fn numeric_power(x: Numeric, y: Numeric) -> PgResult<Numeric> {
    if x.is_zero() && y.signum() < 0 {
        return Err(power_error("zero raised to a negative power is undefined"));
    }
    let yi = (y.scale() == 0 || y.mantissa() % 10i128.pow(y.scale() as u32) == 0)
        .then(|| y.mantissa() / 10i128.pow(y.scale() as u32));
    if x.signum() < 0 && yi.is_none() {
        return Err(power_error(
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let xf = x.to_f64();
    let yf = y.to_f64();
    // An integer exponent keeps 16 places; any other 16 significant
    // digits (from the truncated decimal log of the result).
    let places = match yi {
        Some(_) => 16,
        None if x.is_zero() => 16,
        None => 16 - (yf * xf.abs().log10()).trunc() as i64,
    };
    let rscale = places
        .max(x.scale() as i64)
        .max(y.scale() as i64)
        .clamp(0, 1000) as u16;
    if let Some(e) = yi {
        if (0..=64).contains(&e) {
            // Exact: mantissa^e at scale*e, then rounded to rscale.
            let mut m: Option<i128> = Some(1);
            for _ in 0..e {
                m = m.and_then(|v| v.checked_mul(x.mantissa()));
            }
            let sc = (x.scale() as u64) * (e as u64);
            if let (Some(m), true) = (m, sc <= 38) {
                if let Ok(n) = Numeric::new(m, sc as u16) {
                    if let Ok(r) = n.rescale(rscale) {
                        return Ok(r);
                    }
                }
            }
        }
    }
    let r = xf.powf(yf);
    if !r.is_finite() {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "value overflows numeric format",
        ));
    }
    f64_at_scale(r, rscale)
}

/// A float8 result as numeric at `scale`, from all 17 significant digits a
/// float8 holds (`Numeric::from_f64` keeps 15).
fn f64_at_scale(r: f64, scale: u16) -> PgResult<Numeric> {
    match Numeric::parse(&format!("{r:.16e}")) {
        Some(Ok(n)) => match n.rescale(scale) {
            Ok(n) => Ok(n),
            Err(_) => Numeric::from_f64(r)?.rescale(scale),
        },
        _ => Numeric::from_f64(r)?.rescale(scale),
    }
}

/// Integer square root (floor).
fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = (n as f64).sqrt() as u128;
    while x.checked_mul(x).is_none_or(|sq| sq > n) {
        x -= 1;
    }
    while (x + 1).checked_mul(x + 1).is_some_and(|sq| sq <= n) {
        x += 1;
    }
    x
}

/// numeric sqrt at PostgreSQL's scale: 16 significant digits counted from
/// the result's base-10000 weight (`sweight = (weight + 1) * 4 / 2 - 1`),
/// at least the argument's scale; rounded half up.
fn sqrt_numeric(n: Numeric) -> PgResult<Numeric> {
    if n.is_zero() {
        return n.rescale(n.scale().max(16));
    }
    let m = n.mantissa().unsigned_abs();
    // Decimal weight: the power of ten of the first digit.
    let digits = m.ilog10() as i64;
    let dweight = digits - n.scale() as i64;
    let weight = dweight.div_euclid(4);
    let sweight = (weight + 1) * 4 / 2 - 1;
    let rscale = (16 - sweight).max(n.scale() as i64).clamp(0, 1000) as u16;
    // sqrt(m / 10^s) * 10^r = sqrt(m * 10^(2r - s)).
    let exact = 10u128
        .checked_pow((2 * rscale as u32).saturating_sub(n.scale() as u32))
        .filter(|_| 2 * rscale as u32 >= n.scale() as u32)
        .and_then(|p| m.checked_mul(p))
        .and_then(|big| {
            let q = isqrt(big);
            // Round half up: q + 1 when (q + ½)² ≤ big, i.e. (2q+1)² ≤ 4·big.
            let up = big
                .checked_mul(4)
                .and_then(|b4| (2 * q + 1).checked_mul(2 * q + 1).map(|s| s <= b4));
            up.map(|up| if up { q + 1 } else { q })
        })
        .and_then(|q| i128::try_from(q).ok())
        .and_then(|q| Numeric::new(q, rscale).ok());
    match exact {
        Some(r) => Ok(r),
        None => f64_at_scale(n.to_f64().sqrt(), rscale),
    }
}

/// A variadic text function whose first argument is text and the others
/// any type (unknown literals as text): format(), concat_ws().
fn text_then_any(func: Func, args: &[SqlType]) -> FuncSig {
    FuncSig {
        func,
        arg_types: args
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if *t == SqlType::Unknown || i == 0 {
                    SqlType::Text
                } else {
                    *t
                }
            })
            .collect(),
        ret: SqlType::Text,
    }
}

#[cfg(test)]
mod size_pretty_tests {
    use super::size_pretty;

    #[test]
    fn matches_postgres() {
        // Values checked against PostgreSQL 15's pg_size_pretty.
        assert_eq!(size_pretty(0), "0 bytes");
        assert_eq!(size_pretty(8192), "8192 bytes");
        assert_eq!(size_pretty(10239), "10239 bytes");
        assert_eq!(size_pretty(10240), "10 kB");
        assert_eq!(size_pretty(10752), "11 kB");
        assert_eq!(size_pretty(20 * 1024 * 1024), "20 MB");
        assert_eq!(size_pretty(-10240), "-10 kB");
        assert_eq!(size_pretty(1_000_000_000_000), "931 GB");
    }
}
