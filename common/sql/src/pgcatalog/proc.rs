//! `pg_proc`: the built-in functions hotpair implements, with PostgreSQL
//! 15's rows, and what reads them (`regproc` / `regprocedure`,
//! `pg_get_function_arguments` and friends, `obj_description(oid,
//! 'pg_proc')`, `pg_aggregate`, `pg_language`).
//!
//! ## Where the rows come from
//! `proc_data.rs` is generated from a real PostgreSQL 15 by
//! `cargo run -p tap-tests --bin proc_regen`: every `pg_catalog` function
//! whose name is a string literal of this crate, with all of PostgreSQL's
//! overloads, its description and the text PostgreSQL's deparsing
//! functions print for it. That is a superset. [`procs`] keeps an overload
//! when the dispatcher that binds calls of that kind accepts its argument
//! types ([`implemented`]):
//!
//! ```text
//!   prokind 'a'           functions::AggFunc::{from_name, result_type}
//!   prokind 'w'           expr::window::window_arity
//!   proretset             functions::series_accepts, jsonfuncs::resolve_srf
//!   otherwise             functions::resolve_function (pgcatalog, jsonfuncs, network)
//! ```
//!
//! plus the types' I/O functions `pg_type` names (`types::PROCS`) and the
//! functions of the operators and operator families `pg_operator` and
//! `pg_amproc` list (`oprcode`, `amproc`, see `operator.rs`; hotpair
//! binds the operator, not a call of `int4pl` by name). So the
//! listing follows the dispatchers: an overload they start accepting
//! appears, one they drop disappears, and the unit test below fails when a
//! name a dispatcher matches on has no row (regenerate `proc_data.rs`) or
//! a kept row names nothing a dispatcher matches.
//!
//! Polymorphic argument types are probed with a representative
//! (`anyelement` as `integer`, `anyarray` as `integer[]`); pseudo-types
//! hotpair has no values of (`internal`, `cstring`, `anyrange`, …) and
//! types it lacks (`tsvector`, `macaddr`, …) make an overload unimplemented.
//!
//! The filtered list, its `pg_proc` rows and the name index are built once
//! per process on first use ([`OnceLock`]); a query that does not read
//! the function catalog never builds them.
//!
//! Every function is in `pg_catalog` and hotpair has no CREATE FUNCTION,
//! so every listed function is visible on any search path.

use std::collections::HashMap;
use std::sync::OnceLock;

use pgtypes::array::array_value;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::{ArrayElem, SqlType as T};
use pgtypes::value::Value;

use super::proc_data as data;
use super::{defs, types};

/// One `pg_proc` row hotpair implements.
pub struct Proc {
    /// oid.
    pub oid: u32,
    /// proname.
    pub name: &'static str,
    /// prokind: `f`, `a` or `w`.
    pub kind: u8,
    /// proretset.
    pub retset: bool,
    /// prorettype.
    pub rettype: u32,
    /// proargtypes.
    pub argtypes: Vec<u32>,
    /// provariadic (0 when not variadic).
    pub variadic: u32,
    /// The generated row (PostgreSQL's text output per `PROC_COLUMNS`).
    row: &'static [Option<&'static str>],
}

impl Proc {
    fn col(&self, name: &str) -> Option<&'static str> {
        column(data::PROC_COLUMNS, self.row, name)
    }
    /// pg_get_function_arguments.
    pub fn arguments(&self) -> Option<&'static str> {
        self.col("fn_arguments")
    }
    /// pg_get_function_identity_arguments.
    pub fn identity_arguments(&self) -> Option<&'static str> {
        self.col("fn_identity_arguments")
    }
    /// pg_get_function_result.
    pub fn result(&self) -> Option<&'static str> {
        self.col("fn_result")
    }
    /// pg_get_functiondef (None for an aggregate).
    pub fn definition(&self) -> Option<&'static str> {
        self.col("fn_def")
    }
    /// regprocedure's output: `name(argtype,…)`.
    pub fn signature(&self) -> &'static str {
        self.col("fn_signature").unwrap_or(self.name)
    }
    /// pg_get_function_arg_default(oid, argno): argument `argno` (from 1,
    /// counting OUT arguments)'s default, None without one.
    pub fn arg_default(&self, argno: i32) -> Option<String> {
        let all = array_items(self.col("fn_arg_defaults")?);
        let i = usize::try_from(argno).ok()?.checked_sub(1)?;
        all.into_iter().nth(i).flatten()
    }
    /// obj_description(oid, 'pg_proc').
    pub fn description(&self) -> Option<&'static str> {
        self.col("description")
    }
}

fn column(cols: &[&str], row: &'static [Option<&'static str>], name: &str) -> Option<&'static str> {
    let i = cols.iter().position(|c| *c == name)?;
    row.get(i).copied().flatten()
}

/// The functions hotpair implements, by OID.
pub fn procs() -> &'static [Proc] {
    static PROCS: OnceLock<Vec<Proc>> = OnceLock::new();
    PROCS.get_or_init(|| {
        let mut v: Vec<Proc> = data::PROC_ROWS
            .iter()
            .filter_map(|row| parse(row))
            .filter(|p| {
                types::PROCS.iter().any(|t| t.0 == p.oid)
                    || super::operator::is_catalog_function(p.oid)
                    || implemented(p.name, p.kind, p.retset, &p.argtypes, p.variadic)
            })
            .collect();
        v.sort_by_key(|p| p.oid);
        v
    })
}

fn parse(row: &'static [Option<&'static str>]) -> Option<Proc> {
    let c = |n: &str| column(data::PROC_COLUMNS, row, n);
    Some(Proc {
        oid: c("oid")?.parse().ok()?,
        name: c("proname")?,
        kind: *c("prokind")?.as_bytes().first()?,
        retset: c("proretset")? == "true",
        rettype: c("prorettype")?.parse().ok()?,
        argtypes: c("proargtypes")?
            .split_whitespace()
            .map(|a| a.parse().ok())
            .collect::<Option<Vec<u32>>>()?,
        variadic: c("provariadic")?.parse().ok()?,
        row,
    })
}

/// The function with OID `oid`, if hotpair implements it.
pub fn by_oid(oid: u32) -> Option<&'static Proc> {
    let all = procs();
    all.binary_search_by_key(&oid, |p| p.oid)
        .ok()
        .map(|i| &all[i])
}

/// Every function named `name`, by OID.
pub fn by_name(name: &str) -> &'static [&'static Proc] {
    static BY_NAME: OnceLock<HashMap<&'static str, Vec<&'static Proc>>> = OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        let mut m: HashMap<&'static str, Vec<&'static Proc>> = HashMap::new();
        for p in procs() {
            m.entry(p.name).or_default().push(p);
        }
        m
    });
    map.get(name).map(Vec::as_slice).unwrap_or(&[])
}

/// A value of the type a polymorphic or pseudo-type argument is probed
/// with; None for types hotpair has no values of.
pub(crate) fn probe_type(oid: u32) -> Option<T> {
    Some(match oid {
        // "any", anyelement, anynonarray, anycompatible, anycompatiblenonarray
        2276 | 2283 | 2776 | 5077 | 5079 => T::Int4,
        // anyarray, anycompatiblearray
        2277 | 5078 => T::Array(ArrayElem::Int4),
        // anyenum: any enum type
        3500 => T::Enum(PROBE_ENUM),
        // pg_node_tree: hotpair's node trees are text
        194 => T::Text,
        // internal, cstring, record, trigger, anyrange, …: no values.
        o if types::TYPES
            .iter()
            .any(|t| t.oid == o && t.kind == b'p' && o != 2278) =>
        {
            return None
        }
        o => {
            let t = T::from_oid(o)?;
            if matches!(t, T::Enum(_)) {
                return None;
            }
            t
        }
    })
}

/// The enum type OID `anyenum` is probed with (no such type exists; the
/// dispatchers only look at the kind).
const PROBE_ENUM: u32 = u32::MAX - 1;

/// Whether hotpair binds a call of the built-in `name` with these
/// PostgreSQL argument types (see the module doc for who decides).
pub fn implemented(name: &str, kind: u8, retset: bool, argtypes: &[u32], variadic: u32) -> bool {
    let Some(mut args) = argtypes
        .iter()
        .map(|o| probe_type(*o))
        .collect::<Option<Vec<T>>>()
    else {
        return false;
    };
    let accepts = |args: &[T]| -> bool {
        match kind {
            b'a' => match crate::functions::AggFunc::from_name(name) {
                Some(f) => match args.first() {
                    None => name == "count",
                    Some(t) => f.result_type(*t).is_ok(),
                },
                // Ordered-set: (fraction, key) or mode's (key), as the
                // aggregate's own result_type accepts the key.
                None => {
                    use crate::functions::AggFunc;
                    let (multi, key) = match args {
                        [k] => (false, k),
                        [T::Float8, k] => (false, k),
                        [T::Array(_), k] => (true, k),
                        _ => return false,
                    };
                    AggFunc::ordered_set(name, multi).is_some_and(|f| {
                        (f == AggFunc::Mode) == (args.len() == 1) && f.result_type(*key).is_ok()
                    })
                }
            },
            b'w' => crate::expr::window::window_arity(name)
                .is_some_and(|(lo, hi)| (lo..=hi).contains(&args.len())),
            _ if retset => {
                crate::functions::series_accepts(name, args)
                    || matches!(args, [t] if matches!(crate::jsonfuncs::resolve_srf(name, *t), Some(Ok(_))))
                    || crate::functions::resolve_function(name, args).is_ok()
            }
            b'f' => {
                (name == "pg_typeof" && args.len() == 1)
                    || (args.is_empty() && crate::sysviews::lookup_function(name).is_some())
                    || crate::functions::resolve_function(name, args).is_ok()
            }
            _ => false,
        }
    };
    if accepts(&args) {
        return true;
    }
    // An OID alias argument is usually given as a literal naming the
    // object (`nextval('s')`), which some dispatchers take as text.
    if args.iter().any(|a| matches!(a, T::Reg(_))) {
        let literal: Vec<T> = args
            .iter()
            .map(|a| {
                if matches!(a, T::Reg(_)) {
                    T::Unknown
                } else {
                    *a
                }
            })
            .collect();
        if accepts(&literal) {
            return true;
        }
    }
    // VARIADIC text[]: called with the element type.
    if variadic != 0 && variadic != 2276 {
        if let (Some(last), Some(elem)) = (args.last_mut(), probe_type(variadic)) {
            *last = elem;
            return accepts(&args);
        }
    }
    false
}

/// A catalog value from PostgreSQL's text output for a column of type `ty`.
pub(crate) fn value_of(ty: &T, text: Option<&str>) -> Value {
    let Some(s) = text else {
        return Value::Null;
    };
    match ty {
        T::Oid | T::Reg(_) => Value::Oid(s.parse().unwrap_or(0)),
        T::Bool => Value::Bool(s == "true" || s == "t"),
        T::Int2 => Value::Int2(s.parse().unwrap_or(0)),
        T::Int4 => Value::Int4(s.parse().unwrap_or(0)),
        T::Int8 => Value::Int8(s.parse().unwrap_or(0)),
        T::Float8 => Value::Float8(s.parse().unwrap_or(0.0)),
        T::Array(ArrayElem::OidVector) => {
            super::rows::oid_vec(s.split_whitespace().map(|o| o.parse().unwrap_or(0)))
        }
        T::Array(e) => {
            let items = array_items(s)
                .into_iter()
                .map(|i| match (i, e) {
                    (None, _) => Value::Null,
                    (Some(i), ArrayElem::Oid) => Value::Oid(i.parse().unwrap_or(0)),
                    (Some(i), _) => Value::text(&i),
                })
                .collect();
            array_value(*e, items)
        }
        _ => Value::text(s),
    }
}

/// The elements of a one-dimensional array literal (`{a,"b c",NULL}`).
fn array_items(s: &str) -> Vec<Option<String>> {
    let inner = s
        .trim()
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or("");
    let mut out = Vec::new();
    if inner.is_empty() {
        return out;
    }
    let mut chars = inner.chars().peekable();
    loop {
        let mut cur = String::new();
        let mut quoted = false;
        if chars.peek() == Some(&'"') {
            quoted = true;
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            cur.push(n);
                        }
                    }
                    '"' => break,
                    c => cur.push(c),
                }
            }
        }
        for c in chars.by_ref() {
            if c == ',' {
                break;
            }
            cur.push(c);
        }
        out.push(if !quoted && cur == "NULL" {
            None
        } else {
            Some(cur)
        });
        if chars.peek().is_none() {
            break;
        }
    }
    out
}

/// Rows of a generated table as a catalog relation with columns `cols`.
fn table_rows(
    cols: &'static [(&'static str, T)],
    names: &[&str],
    rows: impl Iterator<Item = &'static [Option<&'static str>]>,
) -> Vec<Vec<Value>> {
    let mut out = super::rows::Rows::new(cols);
    for row in rows {
        out.push(
            cols.iter()
                .map(|(n, t)| (*n, value_of(t, column(names, row, n))))
                .collect(),
        );
    }
    out.out
}

/// pg_proc's rows (built once).
pub fn pg_proc_rows() -> &'static [Vec<Value>] {
    static ROWS: OnceLock<Vec<Vec<Value>>> = OnceLock::new();
    ROWS.get_or_init(|| {
        table_rows(
            defs::PG_PROC,
            data::PROC_COLUMNS,
            procs().iter().map(|p| p.row),
        )
    })
}

/// The pg_proc row of a function users created.
pub fn user_proc_row(f: &engine::pg_proc::FunctionSpec) -> Vec<Value> {
    let types: Vec<String> = f.args.iter().map(|a| a.ty.oid().to_string()).collect();
    let quote = |n: &str| {
        if !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            n.to_string()
        } else {
            format!("\"{}\"", n.replace('\\', "\\\\").replace('"', "\\\""))
        }
    };
    let mut names: Vec<String> = f.args.iter().map(|a| quote(&a.name)).collect();
    let mut all_types = None;
    let mut modes = None;
    let params = f.all_params();
    if params.iter().any(|p| p.0 != b'i') {
        names = params.iter().map(|p| quote(p.1)).collect();
        let all: Vec<String> = params.iter().map(|p| p.2.oid().to_string()).collect();
        let m: Vec<String> = params.iter().map(|p| (p.0 as char).to_string()).collect();
        all_types = Some(format!("{{{}}}", all.join(",")));
        modes = Some(format!("{{{}}}", m.join(",")));
    }
    let names = params
        .iter()
        .any(|p| !p.1.is_empty())
        .then(|| format!("{{{}}}", names.join(",")));
    let ndefaults = f.args.iter().filter(|a| a.default.is_some()).count();
    let vals: Vec<(&str, Option<String>)> = vec![
        ("oid", Some(f.oid.to_string())),
        ("proname", Some(f.name.clone())),
        ("pronamespace", Some(f.namespace.to_string())),
        ("proowner", Some(f.owner.to_string())),
        ("prolang", Some(f.lang.to_string())),
        ("procost", Some("100".into())),
        ("prorows", Some(if f.retset { "1000" } else { "0" }.into())),
        (
            "provariadic",
            Some(f.variadic_elem().map_or(0, |t| t.oid()).to_string()),
        ),
        ("prosupport", Some("0".into())),
        ("prokind", Some((f.kind as char).to_string())),
        ("prosecdef", Some(f.secdef.to_string())),
        ("proleakproof", Some("false".into())),
        ("proisstrict", Some(f.strict.to_string())),
        ("proretset", Some(f.retset.to_string())),
        ("provolatile", Some((f.volatility as char).to_string())),
        ("proparallel", Some("u".into())),
        ("pronargs", Some(f.args.len().to_string())),
        ("pronargdefaults", Some(ndefaults.to_string())),
        ("prorettype", Some(f.ret.oid().to_string())),
        ("proargtypes", Some(types.join(" "))),
        ("proallargtypes", all_types),
        ("proargmodes", modes),
        ("proargnames", names),
        ("prosrc", Some(f.body.clone())),
        (
            "proconfig",
            (!f.config.is_empty()).then(|| config_array(&f.config)),
        ),
    ];
    defs::PG_PROC
        .iter()
        .map(|(n, t)| {
            let text = vals
                .iter()
                .find(|(c, _)| c == n)
                .and_then(|(_, v)| v.as_deref());
            value_of(t, text)
        })
        .collect()
}

/// proconfig's text[] form: `{search_path=public,work_mem=64MB}`, an
/// element quoted as array_out quotes it.
fn config_array(config: &[String]) -> String {
    let items: Vec<String> = config
        .iter()
        .map(|e| {
            let plain = !e.is_empty()
                && !e.eq_ignore_ascii_case("null")
                && !e
                    .chars()
                    .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
            if plain {
                e.clone()
            } else {
                format!("\"{}\"", e.replace('\\', "\\\\").replace('"', "\\\""))
            }
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

/// PostgreSQL's `quote_identifier` (keywords aside).
fn quote_ident(s: &str) -> String {
    let plain = s
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// A proconfig value as pg_get_functiondef prints it: a string literal,
/// or for a list setting (search_path) each element one (`SplitGUCList`).
fn config_literal(name: &str, value: &str) -> String {
    let lit = |v: &str| format!("'{}'", v.replace('\'', "''"));
    if !matches!(name, "search_path" | "temp_tablespaces") {
        return lit(value);
    }
    let mut items = Vec::new();
    let mut chars = value.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut item = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        item.push('"');
                    } else {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                chars.next();
            }
        } else {
            while let Some(c) = chars.peek().copied().filter(|c| *c != ',') {
                item.push(c);
                chars.next();
            }
            item = item.trim_end().to_string();
        }
        items.push(lit(&item));
        if chars.next().is_none() {
            break;
        }
    }
    items.join(", ")
}

/// pg_get_function_arguments and friends for a function users created.
pub fn user_function_text(
    f: &engine::pg_proc::FunctionSpec,
    schema: &str,
    which: super::functions::FunctionText,
) -> Option<String> {
    use super::functions::FunctionText as W;
    let params = f.all_params();
    let args = |defaults: bool| -> String {
        params
            .iter()
            .filter(|p| p.0 != b't')
            .map(|&(mode, name, ty, input)| {
                let mut s = if name.is_empty() {
                    ty.pg_name()
                } else {
                    format!("{name} {}", ty.pg_name())
                };
                match mode {
                    // PostgreSQL marks a procedure's modes, IN included.
                    b'i' if f.kind == b'p' => s.insert_str(0, "IN "),
                    b'o' => s.insert_str(0, "OUT "),
                    b'b' => s.insert_str(0, "INOUT "),
                    b'v' => s.insert_str(0, "VARIADIC "),
                    _ => {}
                }
                if defaults {
                    if let Some(d) = input.and_then(|i| f.args[i].default.as_ref()) {
                        s.push_str(&format!(" DEFAULT {}", d.trim()));
                    }
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let result = || -> String {
        if params.iter().any(|p| p.0 == b't') {
            let cols: Vec<String> = f
                .out
                .iter()
                .map(|(n, t)| format!("{n} {}", t.pg_name()))
                .collect();
            return format!("TABLE({})", cols.join(", "));
        }
        let t = f.ret.pg_name();
        if f.retset {
            format!("SETOF {t}")
        } else {
            t
        }
    };
    match which {
        W::Arguments => Some(args(true)),
        W::IdentityArguments => Some(args(false)),
        W::Result if f.kind == b'p' => None,
        W::Result => Some(result()),
        W::SqlBody => None,
        W::Definition => {
            let lang = if f.lang == engine::pg_proc::LANG_SQL {
                "sql"
            } else {
                "plpgsql"
            };
            let mut s = format!(
                "CREATE OR REPLACE {} {}.{}({})\n",
                if f.kind == b'p' {
                    "PROCEDURE"
                } else {
                    "FUNCTION"
                },
                super::quote_ident(schema),
                super::quote_ident(&f.name),
                args(true)
            );
            if f.kind != b'p' {
                s.push_str(&format!(" RETURNS {}\n", result()));
            }
            s.push_str(&format!(" LANGUAGE {lang}\n"));
            let mut opts = String::new();
            match f.volatility {
                b'i' => opts.push_str(" IMMUTABLE"),
                b's' => opts.push_str(" STABLE"),
                _ => {}
            }
            if f.strict {
                opts.push_str(" STRICT");
            }
            if f.secdef {
                opts.push_str(" SECURITY DEFINER");
            }
            if f.retset && f.out.is_empty() {
                // ROWS 1000 is the default: nothing to print.
            }
            if !opts.is_empty() {
                s.push_str(&opts);
                s.push('\n');
            }
            for entry in &f.config {
                let Some((name, value)) = entry.split_once('=') else {
                    continue;
                };
                s.push_str(&format!(
                    " SET {} TO {}\n",
                    quote_ident(name),
                    config_literal(name, value)
                ));
            }
            let tag = if f.kind == b'p' {
                "procedure"
            } else {
                "function"
            };
            s.push_str(&format!("AS ${tag}${}${tag}$\n", f.body));
            Some(s)
        }
    }
}

/// pg_aggregate's rows for the aggregates of [`procs`].
pub fn pg_aggregate_rows() -> Vec<Vec<Value>> {
    table_rows(
        defs::PG_AGGREGATE,
        data::AGGREGATE_COLUMNS,
        data::AGGREGATE_ROWS.iter().copied().filter(|r| {
            column(data::AGGREGATE_COLUMNS, r, "aggfnoid")
                .and_then(|o| o.parse().ok())
                .and_then(by_oid)
                .is_some()
        }),
    )
}

/// pg_language's rows (internal, c, sql, plpgsql).
pub fn pg_language_rows() -> Vec<Vec<Value>> {
    table_rows(
        defs::PG_LANGUAGE,
        data::LANGUAGE_COLUMNS,
        data::LANGUAGE_ROWS.iter().copied(),
    )
}

/// Rows of an information_schema view of the functions (`routines`,
/// `parameters`), keyed by `specific_name` (`name_oid`): those of
/// [`procs`], with the catalog columns naming `database`.
pub fn information_schema_rows(
    cols: &'static [(&'static str, T)],
    names: &[&str],
    rows: &'static [&'static [Option<&'static str>]],
    database: &str,
) -> Vec<Vec<Value>> {
    let kept = rows.iter().copied().filter(|r| {
        column(names, r, "specific_name")
            .and_then(|s| s.rsplit('_').next())
            .and_then(|o| o.parse().ok())
            .and_then(by_oid)
            .is_some()
    });
    let mut out = super::rows::Rows::new(cols);
    for row in kept {
        out.push(
            cols.iter()
                .map(|(n, t)| {
                    let v = column(names, row, n);
                    let v = if n.ends_with("_catalog") && v.is_some() {
                        Some(database)
                    } else {
                        v
                    };
                    (*n, value_of(t, v))
                })
                .collect(),
        );
    }
    out.out
}

fn undefined(text: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("function \"{text}\" does not exist"),
    )
}

/// Splits `[pg_catalog.]name` (a function in another schema does not
/// exist: every built-in is in pg_catalog).
fn function_name(text: &str) -> PgResult<Option<String>> {
    let (schema, name) = super::split_qualified(text)?;
    Ok(match schema.as_deref() {
        None | Some("pg_catalog") => Some(name),
        Some(_) => None,
    })
}

/// `regproc`'s input: a function name that names exactly one function.
pub fn regproc_in(text: &str) -> PgResult<u32> {
    let name = function_name(text)?.ok_or_else(|| undefined(text))?;
    match by_name(&name) {
        [one] => Ok(one.oid),
        [] => Err(undefined(text)),
        _ => Err(PgError::new(
            "42725",
            format!("more than one function named \"{text}\""),
        )),
    }
}

/// `regprocedure`'s input: `name(argtype, …)`.
pub fn regprocedure_in(text: &str) -> PgResult<u32> {
    let t = text.trim();
    let (Some(open), true) = (t.find('('), t.ends_with(')')) else {
        return Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            "expected a left parenthesis",
        ));
    };
    let name = function_name(&t[..open])?;
    let inner = &t[open + 1..t.len() - 1];
    let mut args = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.trim().is_empty() {
        args.push(&inner[start..]);
    }
    let mut oids = Vec::with_capacity(args.len());
    for a in args {
        oids.push(type_oid(a.trim())?);
    }
    let Some(name) = name else {
        return Err(undefined(text));
    };
    by_name(&name)
        .iter()
        .find(|p| p.argtypes == oids)
        .map(|p| p.oid)
        .ok_or_else(|| undefined(text))
}

/// A type name's OID, as regtype's input finds it.
pub(crate) fn type_oid(name: &str) -> PgResult<u32> {
    let unquoted = name
        .strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name);
    let lower = unquoted.to_ascii_lowercase();
    let bare = lower.strip_prefix("pg_catalog.").unwrap_or(&lower);
    if let Some(t) = types::TYPES
        .iter()
        .find(|t| t.name == bare || t.display == bare)
    {
        return Ok(t.oid);
    }
    if let Some(t) = T::from_name(bare) {
        return Ok(t.oid());
    }
    Err(PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("type \"{name}\" does not exist"),
    ))
}

/// `regproc`'s output: the name, schema-qualified when the name alone
/// would not find exactly this function (PostgreSQL's regprocout).
pub fn regproc_out(oid: u32) -> Option<String> {
    let Some(p) = by_oid(oid) else {
        // A support function a listed row names (prosupport, aggtransfn,
        // oprrest, amproc).
        let text = oid.to_string();
        return data::REFERENCED_ROWS
            .iter()
            .find(|r| r.first().copied().flatten() == Some(text.as_str()))
            .and_then(|r| r.get(1).copied().flatten())
            .or_else(|| super::operator::referenced_function(oid))
            .map(str::to_string);
    };
    Some(if by_name(p.name).len() == 1 {
        super::quote_ident(p.name)
    } else {
        format!("pg_catalog.{}", super::quote_ident(p.name))
    })
}

/// `regprocedure`'s output: `name(argtype,…)`.
pub fn regprocedure_out(oid: u32) -> Option<String> {
    by_oid(oid).map(|p| p.signature().to_string())
}

/// pg_description's rows for the functions: (objoid, description).
pub fn descriptions() -> impl Iterator<Item = (u32, &'static str)> {
    procs()
        .iter()
        .filter_map(|p| p.description().map(|d| (p.oid, d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The sources whose `match name { "…" => … }` arms are the
    /// function dispatchers, with the function holding the arms.
    const DISPATCHERS: &[(&str, &str, &str)] = &[
        (
            "functions.rs",
            include_str!("../functions.rs"),
            "pub fn resolve_function(",
        ),
        (
            "functions.rs",
            include_str!("../functions.rs"),
            "pub fn from_name(",
        ),
        (
            "functions.rs",
            include_str!("../functions.rs"),
            "pub const SERIES_FUNCTIONS",
        ),
        (
            "pgcatalog/functions.rs",
            include_str!("functions.rs"),
            "pub fn resolve(",
        ),
        (
            "jsonfuncs.rs",
            include_str!("../jsonfuncs.rs"),
            "pub fn resolve(",
        ),
        (
            "jsonfuncs.rs",
            include_str!("../jsonfuncs.rs"),
            "pub fn resolve_srf(",
        ),
        (
            "network.rs",
            include_str!("../network.rs"),
            "pub fn resolve(",
        ),
        (
            "expr/window.rs",
            include_str!("../expr/window.rs"),
            "pub fn window_arity(",
        ),
        (
            "pgcatalog/aclfuncs.rs",
            include_str!("aclfuncs.rs"),
            "pub fn of(",
        ),
    ];

    /// Names the dispatchers accept that are SQL syntax in PostgreSQL, not
    /// pg_proc functions (or spellings the grammar rewrites).
    const NOT_IN_PG_PROC: &[&str] = &[
        "coalesce",
        "greatest",
        "least",
        "nullif",
        "current_timestamp",
        "current_date",
        "localtimestamp",
        "user",
        "current_role",
        "current_catalog",
        "trim",
    ];

    /// Every `"name"` that starts a match arm (or continues one after
    /// `|`) in the body of a dispatcher.
    fn dispatcher_names() -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (file, src, start) in DISPATCHERS {
            let at = src
                .find(start)
                .unwrap_or_else(|| panic!("{file}: no {start}"));
            let body = &src[at..];
            let end = body.find("\n}\n").unwrap_or(body.len());
            for line in body[..end].lines() {
                let mut t = line.trim().trim_start_matches('|').trim();
                if start.starts_with("pub const") {
                    t = t.trim_start_matches(|c| c != '"');
                }
                while let Some(rest) = t.strip_prefix('"') {
                    let Some(close) = rest.find('"') else { break };
                    let lit = &rest[..close];
                    if lit.is_empty()
                        || !lit
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    {
                        break;
                    }
                    out.insert(lit.to_string());
                    t = rest[close + 1..]
                        .trim_start()
                        .trim_start_matches(['|', ','])
                        .trim_start();
                }
            }
        }
        out.insert("pg_typeof".to_string());
        for v in crate::sysviews::FUNCTION_VIEWS {
            out.insert(v.name.to_string());
        }
        out
    }

    #[test]
    fn generated_rows_parse() {
        for row in data::PROC_ROWS {
            assert!(parse(row).is_some(), "unparsable row {row:?}");
        }
        assert_eq!(pg_proc_rows().len(), procs().len());
    }

    /// The drift check: every function name a dispatcher matches on has a
    /// pg_proc row (else: `cargo run -p tap-tests --bin proc_regen`, or the
    /// name is SQL syntax in PostgreSQL), and every kept row is a name a
    /// dispatcher matches on, a type's I/O function or an operator's or
    /// operator family's function.
    #[test]
    fn pg_proc_matches_the_dispatchers() {
        let names = dispatcher_names();
        let listed: BTreeSet<&str> = procs().iter().map(|p| p.name).collect();
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !listed.contains(n.as_str()) && !NOT_IN_PG_PROC.contains(&n.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "dispatched but not in pg_proc (regenerate proc_data.rs?): {missing:?}"
        );
        let extra: Vec<&str> = procs()
            .iter()
            .filter(|p| !types::PROCS.iter().any(|t| t.0 == p.oid))
            .filter(|p| !crate::pgcatalog::operator::is_catalog_function(p.oid))
            .map(|p| p.name)
            .filter(|n| !names.contains(*n))
            .collect();
        assert!(extra.is_empty(), "in pg_proc but not dispatched: {extra:?}");
        for n in NOT_IN_PG_PROC {
            assert!(!listed.contains(n), "{n} is in pg_proc after all");
        }
    }

    #[test]
    fn io_functions_listed() {
        for (o, name, ..) in types::PROCS {
            assert!(by_oid(*o).is_some_and(|p| p.name == *name), "{name} ({o})");
        }
    }

    #[test]
    fn overloads() {
        let sig = |n: &str| -> Vec<&str> { by_name(n).iter().map(|p| p.signature()).collect() };
        assert_eq!(sig("lower"), ["lower(text)"]);
        assert_eq!(by_name("abs").len(), 6);
        assert!(sig("count").contains(&"count()"));
        assert_eq!(regproc_in("now").ok(), Some(1299));
        assert_eq!(regproc_in("abs").map_err(|e| e.code), Err("42725"));
        assert_eq!(regprocedure_in("abs(integer)").ok(), Some(1397));
        assert_eq!(regproc_out(1397).as_deref(), Some("pg_catalog.abs"));
        assert_eq!(regprocedure_out(1397).as_deref(), Some("abs(integer)"));
        assert_eq!(
            array_items(r#"{a,"b c",NULL,"x\"y"}"#),
            [
                Some("a".into()),
                Some("b c".into()),
                None,
                Some("x\"y".into())
            ]
        );
    }
}
