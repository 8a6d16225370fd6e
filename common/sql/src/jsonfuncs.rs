//! The json and jsonb operators and functions (PostgreSQL's `jsonfuncs.c`
//! and `json.c` / `jsonb.c` builders).
//!
//! Values come from [`pgtypes::json`]: a jsonb is a canonical [`Jsonb`]
//! tree; a json is its input text, re-parsed here when an operator needs to
//! look inside (members are returned as their original text, so
//! `'{"a": [1,  2]}'::json -> 'a'` is `[1,  2]`, as in PostgreSQL).
//!
//! * Operators (`->`, `->>`, `#>`, `#>>`, `@>`, `<@`, `?`, `?|`, `?&`,
//!   `||`, `-`, `#-`) are resolved by [`resolve_operator`] into a
//!   [`JsonFunc`] the binder calls like any function; comparison operators
//!   on jsonb are the generic ones (`cmp_sql` uses jsonb's btree order).
//! * Scalar functions resolve in [`resolve`] (called by
//!   `functions::resolve_function` for names it does not know).
//! * Aggregates (`json_agg`, `jsonb_agg`, `json_object_agg`,
//!   `jsonb_object_agg`) keep their inputs in the generic accumulator and
//!   build the result with [`agg_result`].
//! * Set-returning functions (`jsonb_array_elements`, `jsonb_each`,
//!   `jsonb_object_keys` and their json / `_text` forms) are [`JsonSrf`]s:
//!   the planner makes a scan node of them and [`srf_rows`] produces the rows.
//!
//! Conversions of SQL values to JSON ([`to_jsonb`], [`to_json_text`])
//! follow `datum_to_json`: numbers as numbers (NaN and infinities as
//! strings), booleans, timestamps in ISO 8601 with a `T`, arrays as
//! arrays, json/jsonb embedded, anything else as its text in a string.

use std::sync::Arc;

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::json::{self, escape_json, Jsonb, Node, NodeKind};
use pgtypes::sqltype::{ArrayElem, SqlType};
use pgtypes::value::Value;

use crate::functions::{Func, FuncSig};

/// A json/jsonb operator or function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonFunc {
    /// `->` / `->>` (`text`: the `->>` form) with a key or an index.
    Get {
        /// `->>`: the result is text.
        text: bool,
    },
    /// `#>` / `#>>` with a text[] path.
    GetPath {
        /// `#>>`: the result is text.
        text: bool,
    },
    /// `@>` (`<@` swaps the arguments at bind time).
    Contains,
    /// `?`
    Exists,
    /// `?|` (`all`: false) and `?&` (`all`: true).
    ExistsArray {
        /// `?&`
        all: bool,
    },
    /// jsonb `||`
    Concat,
    /// jsonb `-` text / int / text[]
    Delete,
    /// jsonb `#-` text[]
    DeletePath,
    /// json[b]_build_object(variadic "any")
    BuildObject {
        /// jsonb result.
        jsonb: bool,
    },
    /// json[b]_build_array(variadic "any")
    BuildArray {
        /// jsonb result.
        jsonb: bool,
    },
    /// to_json / to_jsonb
    ToJson {
        /// jsonb result.
        jsonb: bool,
    },
    /// json[b]_array_length
    ArrayLength,
    /// json[b]_typeof
    Typeof,
    /// jsonb_pretty
    Pretty,
    /// jsonb_set(target, path, new[, create_missing])
    Set,
    /// json[b]_strip_nulls
    StripNulls,
}

/// A set-returning json function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonSrf {
    /// json[b]_array_elements[_text]: one `value` column.
    ArrayElements {
        /// The `_text` form.
        text: bool,
    },
    /// json[b]_each[_text]: `key`, `value`.
    Each {
        /// The `_text` form.
        text: bool,
    },
    /// json[b]_object_keys: one column.
    ObjectKeys,
}

/// A set-returning call's function, argument type and the name it was called by.
#[derive(Clone, Debug, PartialEq)]
pub struct SrfCall {
    /// Which function.
    pub func: JsonSrf,
    /// json or jsonb.
    pub arg_ty: SqlType,
    /// The function's name (EXPLAIN, default column name).
    pub name: &'static str,
}

fn err(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn is_json(t: SqlType) -> bool {
    matches!(t, SqlType::Json | SqlType::Jsonb)
}

const TEXT_ARRAY: SqlType = SqlType::Array(ArrayElem::Text);

/// Resolves a json operator: the function, the operand types to coerce
/// to (after swapping for `<@`), the result type, and whether the
/// operands swap. None when the operands are not json.
pub fn resolve_operator(
    op: &str,
    l: SqlType,
    r: SqlType,
) -> Option<(JsonFunc, [SqlType; 2], SqlType, bool)> {
    use SqlType as T;
    let textish = |t: SqlType| t.is_text_like() || t == T::Unknown;
    Some(match op {
        "->" | "->>" if is_json(l) => {
            let text = op == "->>";
            let ret = if text { T::Text } else { l };
            let rt = if r.is_integer() {
                T::Int4
            } else if textish(r) {
                T::Text
            } else {
                return None;
            };
            (JsonFunc::Get { text }, [l, rt], ret, false)
        }
        "#>" | "#>>" if is_json(l) => {
            let text = op == "#>>";
            let ret = if text { T::Text } else { l };
            (JsonFunc::GetPath { text }, [l, TEXT_ARRAY], ret, false)
        }
        "@>" | "<@"
            if (l == T::Jsonb && matches!(r, T::Jsonb | T::Unknown))
                || (r == T::Jsonb && l == T::Unknown) =>
        {
            (
                JsonFunc::Contains,
                [T::Jsonb, T::Jsonb],
                T::Bool,
                op == "<@",
            )
        }
        "?" if l == T::Jsonb && textish(r) => {
            (JsonFunc::Exists, [T::Jsonb, T::Text], T::Bool, false)
        }
        "?|" | "?&" if l == T::Jsonb => (
            JsonFunc::ExistsArray { all: op == "?&" },
            [T::Jsonb, TEXT_ARRAY],
            T::Bool,
            false,
        ),
        "||" if (l == T::Jsonb && matches!(r, T::Jsonb | T::Unknown))
            || (r == T::Jsonb && l == T::Unknown) =>
        {
            (JsonFunc::Concat, [T::Jsonb, T::Jsonb], T::Jsonb, false)
        }
        "-" if l == T::Jsonb => {
            let rt = if r.is_integer() {
                T::Int4
            } else if textish(r) {
                T::Text
            } else if r == TEXT_ARRAY {
                TEXT_ARRAY
            } else {
                return None;
            };
            (JsonFunc::Delete, [T::Jsonb, rt], T::Jsonb, false)
        }
        "#-" if l == T::Jsonb => (
            JsonFunc::DeletePath,
            [T::Jsonb, TEXT_ARRAY],
            T::Jsonb,
            false,
        ),
        _ => return None,
    })
}

/// Resolves a json function by name and argument types (None: not a json function).
pub fn resolve(name: &str, args: &[SqlType]) -> Option<FuncSig> {
    use SqlType as T;
    let n = args.len();
    let jtype = |jsonb: bool| if jsonb { T::Jsonb } else { T::Json };
    let variadic = || -> Vec<SqlType> {
        args.iter()
            .map(|t| if *t == T::Unknown { T::Text } else { *t })
            .collect()
    };
    let one = |f: JsonFunc, t: SqlType, ret: SqlType| -> Option<FuncSig> {
        (n == 1 && (args[0] == t || args[0] == T::Unknown)).then(|| FuncSig {
            func: Func::Json(f),
            arg_types: vec![t],
            ret,
        })
    };
    let sig = |f: JsonFunc, arg_types: Vec<SqlType>, ret: SqlType| {
        Some(FuncSig {
            func: Func::Json(f),
            arg_types,
            ret,
        })
    };
    match name {
        "json_build_object" | "jsonb_build_object" => {
            let jsonb = name.starts_with("jsonb");
            sig(JsonFunc::BuildObject { jsonb }, variadic(), jtype(jsonb))
        }
        "json_build_array" | "jsonb_build_array" => {
            let jsonb = name.starts_with("jsonb");
            sig(JsonFunc::BuildArray { jsonb }, variadic(), jtype(jsonb))
        }
        "to_json" | "to_jsonb" if n == 1 => {
            let jsonb = name == "to_jsonb";
            sig(JsonFunc::ToJson { jsonb }, variadic(), jtype(jsonb))
        }
        "json_array_length" => one(JsonFunc::ArrayLength, T::Json, T::Int4),
        "jsonb_array_length" => one(JsonFunc::ArrayLength, T::Jsonb, T::Int4),
        "json_typeof" => one(JsonFunc::Typeof, T::Json, T::Text),
        "jsonb_typeof" => one(JsonFunc::Typeof, T::Jsonb, T::Text),
        "jsonb_pretty" => one(JsonFunc::Pretty, T::Jsonb, T::Text),
        "json_strip_nulls" => one(JsonFunc::StripNulls, T::Json, T::Json),
        "jsonb_strip_nulls" => one(JsonFunc::StripNulls, T::Jsonb, T::Jsonb),
        "jsonb_set" if n == 3 || n == 4 => sig(
            JsonFunc::Set,
            [T::Jsonb, TEXT_ARRAY, T::Jsonb, T::Bool][..n].to_vec(),
            T::Jsonb,
        ),
        _ => None,
    }
}

/// The set-returning json function called `name` with an argument of
/// type `arg`, if it is one.
pub fn resolve_srf(name: &str, arg: SqlType) -> Option<PgResult<SrfCall>> {
    let (func, jsonb, static_name): (JsonSrf, bool, &'static str) = match name {
        "json_array_elements" => (
            JsonSrf::ArrayElements { text: false },
            false,
            "json_array_elements",
        ),
        "jsonb_array_elements" => (
            JsonSrf::ArrayElements { text: false },
            true,
            "jsonb_array_elements",
        ),
        "json_array_elements_text" => (
            JsonSrf::ArrayElements { text: true },
            false,
            "json_array_elements_text",
        ),
        "jsonb_array_elements_text" => (
            JsonSrf::ArrayElements { text: true },
            true,
            "jsonb_array_elements_text",
        ),
        "json_each" => (JsonSrf::Each { text: false }, false, "json_each"),
        "jsonb_each" => (JsonSrf::Each { text: false }, true, "jsonb_each"),
        "json_each_text" => (JsonSrf::Each { text: true }, false, "json_each_text"),
        "jsonb_each_text" => (JsonSrf::Each { text: true }, true, "jsonb_each_text"),
        "json_object_keys" => (JsonSrf::ObjectKeys, false, "json_object_keys"),
        "jsonb_object_keys" => (JsonSrf::ObjectKeys, true, "jsonb_object_keys"),
        _ => return None,
    };
    let want = if jsonb { SqlType::Jsonb } else { SqlType::Json };
    if arg != want && arg != SqlType::Unknown {
        return Some(Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {name}({}) does not exist", arg.pg_name()),
        )
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        )));
    }
    Some(Ok(SrfCall {
        func,
        arg_ty: want,
        name: static_name,
    }))
}

impl SrfCall {
    /// Output columns (name, type).
    pub fn columns(&self) -> Vec<(String, SqlType)> {
        let value_ty = match self.func {
            JsonSrf::ArrayElements { text: true } | JsonSrf::Each { text: true } => SqlType::Text,
            _ => self.arg_ty,
        };
        match self.func {
            JsonSrf::ArrayElements { .. } => vec![("value".into(), value_ty)],
            JsonSrf::Each { .. } => vec![("key".into(), SqlType::Text), ("value".into(), value_ty)],
            JsonSrf::ObjectKeys => vec![(self.name.to_string(), SqlType::Text)],
        }
    }

    /// True when the single column is named after the function (so a
    /// table alias renames it, as for a scalar function in PostgreSQL).
    pub fn column_named_by_alias(&self) -> bool {
        self.func == JsonSrf::ObjectKeys
    }
}

// ---------------------------------------------------------------------------
// A json document: either a jsonb tree or a json text with its parse.
// ---------------------------------------------------------------------------

/// A json value parsed for reading (spans into `text`).
struct JsonDoc {
    text: Arc<str>,
    root: Node,
}

impl JsonDoc {
    fn parse(text: &Arc<str>) -> PgResult<JsonDoc> {
        Ok(JsonDoc {
            text: text.clone(),
            root: json::parse(text, true)?,
        })
    }
    fn slice(&self, n: &Node) -> &str {
        &self.text[n.start..n.end]
    }
}

/// A member of a json object by key (the last of duplicates, as PostgreSQL).
fn node_field<'a>(n: &'a Node, key: &str) -> Option<&'a Node> {
    match &n.kind {
        NodeKind::Object(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

fn index_of(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { i + len as i64 } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

fn node_elem(n: &Node, i: i64) -> Option<&Node> {
    match &n.kind {
        NodeKind::Array(items) => index_of(items.len(), i).map(|i| &items[i]),
        _ => None,
    }
}

/// `jsonb -> int`: a top-level scalar is a one-element pseudo-array there,
/// as in PostgreSQL (`'"s"'::jsonb -> 0` is `"s"`).
fn jsonb_elem(j: &Jsonb, i: i64) -> Option<&Jsonb> {
    match j {
        Jsonb::Array(items) => index_of(items.len(), i).map(|i| &items[i]),
        Jsonb::Object(_) => None,
        scalar => index_of(1, i).map(|_| scalar),
    }
}

/// A json node as `->>` shows it: strings de-escaped, null as SQL NULL.
fn node_text(doc: &JsonDoc, n: &Node) -> Value {
    match &n.kind {
        NodeKind::Null => Value::Null,
        NodeKind::String(s) => Value::Text(Arc::from(s.as_str())),
        _ => Value::Text(Arc::from(doc.slice(n))),
    }
}

/// A jsonb value as `->>` shows it.
fn jsonb_text(j: &Jsonb) -> Value {
    match j {
        Jsonb::Null => Value::Null,
        Jsonb::String(s) => Value::Text(Arc::from(s.as_str())),
        other => Value::Text(Arc::from(other.to_text())),
    }
}

fn jsonb_value(j: Jsonb) -> Value {
    Value::Jsonb(Arc::new(j))
}

fn text_items(v: &Value) -> Vec<Option<String>> {
    match v {
        Value::Array(a) => a
            .items
            .iter()
            .map(|i| (!i.is_null()).then(|| i.to_text_string()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Evaluates a json function (strict ones see no NULL argument: the
/// caller returns NULL first, except for the builders).
pub fn call(f: JsonFunc, args: &[Value]) -> PgResult<Value> {
    match f {
        JsonFunc::BuildObject { jsonb } => return build_object(args, jsonb),
        JsonFunc::BuildArray { jsonb } => return build_array(args, jsonb),
        _ => {}
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    Ok(match f {
        JsonFunc::BuildObject { .. } | JsonFunc::BuildArray { .. } => Value::Null,
        JsonFunc::ToJson { jsonb } => {
            if jsonb {
                jsonb_value(to_jsonb(&args[0])?)
            } else {
                let mut s = String::new();
                to_json_text(&args[0], &mut s);
                Value::Json(Arc::from(s))
            }
        }
        JsonFunc::Get { text } => match &args[0] {
            Value::Jsonb(j) => {
                let got = match &args[1] {
                    Value::Text(k) => j.get(k),
                    other => jsonb_elem(j, other.as_i64().unwrap_or(0)),
                };
                match got {
                    None => Value::Null,
                    Some(v) if text => jsonb_text(v),
                    Some(v) => jsonb_value(v.clone()),
                }
            }
            Value::Json(s) => {
                let doc = JsonDoc::parse(s)?;
                let got = match &args[1] {
                    Value::Text(k) => node_field(&doc.root, k),
                    other => node_elem(&doc.root, other.as_i64().unwrap_or(0)),
                };
                match got {
                    None => Value::Null,
                    Some(n) if text => node_text(&doc, n),
                    Some(n) => Value::Json(Arc::from(doc.slice(n))),
                }
            }
            _ => Value::Null,
        },
        JsonFunc::GetPath { text } => {
            let path = text_items(&args[1]);
            match &args[0] {
                Value::Jsonb(j) => {
                    let mut cur: &Jsonb = j;
                    for p in &path {
                        let Some(p) = p else { return Ok(Value::Null) };
                        let next = match cur {
                            Jsonb::Object(_) => cur.get(p),
                            Jsonb::Array(_) => match p.trim().parse::<i64>() {
                                Ok(i) => jsonb_elem(cur, i),
                                Err(_) => None,
                            },
                            _ => None,
                        };
                        match next {
                            Some(n) => cur = n,
                            None => return Ok(Value::Null),
                        }
                    }
                    if text {
                        jsonb_text(cur)
                    } else {
                        jsonb_value(cur.clone())
                    }
                }
                Value::Json(s) => {
                    let doc = JsonDoc::parse(s)?;
                    let mut cur = &doc.root;
                    for p in &path {
                        let Some(p) = p else { return Ok(Value::Null) };
                        let next = match &cur.kind {
                            NodeKind::Object(_) => node_field(cur, p),
                            NodeKind::Array(_) => match p.trim().parse::<i64>() {
                                Ok(i) => node_elem(cur, i),
                                Err(_) => None,
                            },
                            _ => None,
                        };
                        match next {
                            Some(n) => cur = n,
                            None => return Ok(Value::Null),
                        }
                    }
                    if text {
                        node_text(&doc, cur)
                    } else {
                        Value::Json(Arc::from(doc.slice(cur)))
                    }
                }
                _ => Value::Null,
            }
        }
        JsonFunc::Contains => {
            let (Value::Jsonb(a), Value::Jsonb(b)) = (&args[0], &args[1]) else {
                return Ok(Value::Null);
            };
            Value::Bool(json::contains(a, b))
        }
        JsonFunc::Exists => {
            let (Value::Jsonb(a), Value::Text(k)) = (&args[0], &args[1]) else {
                return Ok(Value::Null);
            };
            Value::Bool(json::exists(a, k))
        }
        JsonFunc::ExistsArray { all } => {
            let Value::Jsonb(a) = &args[0] else {
                return Ok(Value::Null);
            };
            let keys: Vec<String> = text_items(&args[1]).into_iter().flatten().collect();
            Value::Bool(if all {
                keys.iter().all(|k| json::exists(a, k))
            } else {
                keys.iter().any(|k| json::exists(a, k))
            })
        }
        JsonFunc::Concat => {
            let (Value::Jsonb(a), Value::Jsonb(b)) = (&args[0], &args[1]) else {
                return Ok(Value::Null);
            };
            jsonb_value(concat(a, b))
        }
        JsonFunc::Delete => {
            let Value::Jsonb(a) = &args[0] else {
                return Ok(Value::Null);
            };
            jsonb_value(delete(a, &args[1])?)
        }
        JsonFunc::DeletePath => {
            let Value::Jsonb(a) = &args[0] else {
                return Ok(Value::Null);
            };
            if a.is_scalar() {
                return Err(err("cannot delete path in scalar"));
            }
            let path = text_items(&args[1]);
            if path.is_empty() {
                return Ok(args[0].clone());
            }
            let mut out = (**a).clone();
            delete_path(&mut out, &path, 0)?;
            jsonb_value(out)
        }
        JsonFunc::ArrayLength => match &args[0] {
            Value::Jsonb(j) => match &**j {
                Jsonb::Array(a) => Value::Int4(a.len() as i32),
                Jsonb::Object(_) => return Err(err("cannot get array length of a non-array")),
                _ => return Err(err("cannot get array length of a scalar")),
            },
            Value::Json(s) => match JsonDoc::parse(s)?.root.kind {
                NodeKind::Array(a) => Value::Int4(a.len() as i32),
                NodeKind::Object(_) => return Err(err("cannot get array length of a non-array")),
                _ => return Err(err("cannot get array length of a scalar")),
            },
            _ => Value::Null,
        },
        JsonFunc::Typeof => match &args[0] {
            Value::Jsonb(j) => Value::text(j.type_name()),
            Value::Json(s) => Value::text(match json::parse(s, false)?.kind {
                NodeKind::Null => "null",
                NodeKind::Bool(_) => "boolean",
                NodeKind::Number => "number",
                NodeKind::String(_) => "string",
                NodeKind::Array(_) => "array",
                NodeKind::Object(_) => "object",
            }),
            _ => Value::Null,
        },
        JsonFunc::Pretty => match &args[0] {
            Value::Jsonb(j) => Value::Text(Arc::from(j.pretty())),
            _ => Value::Null,
        },
        JsonFunc::StripNulls => match &args[0] {
            Value::Jsonb(j) => jsonb_value(strip_nulls(j)),
            Value::Json(s) => {
                let doc = JsonDoc::parse(s)?;
                let mut out = String::new();
                strip_nulls_json(&doc, &doc.root, &mut out);
                Value::Json(Arc::from(out))
            }
            _ => Value::Null,
        },
        JsonFunc::Set => {
            let (Value::Jsonb(target), Value::Jsonb(new)) = (&args[0], &args[2]) else {
                return Ok(Value::Null);
            };
            let create = args.get(3).and_then(Value::as_bool).unwrap_or(true);
            if target.is_scalar() {
                return Err(err("cannot set path in scalar"));
            }
            let path = text_items(&args[1]);
            if path.is_empty() {
                return Ok(args[0].clone());
            }
            let mut out = (**target).clone();
            set_path(&mut out, &path, 0, new, create)?;
            jsonb_value(out)
        }
    })
}

/// jsonb `||`.
fn concat(a: &Jsonb, b: &Jsonb) -> Jsonb {
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut m = x.clone();
            m.extend(y.iter().cloned());
            Jsonb::Object(json::canonical_object(m))
        }
        _ => {
            let as_items = |v: &Jsonb| match v {
                Jsonb::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            let mut items = as_items(a);
            items.extend(as_items(b));
            Jsonb::Array(items)
        }
    }
}

/// jsonb `-` text / int / text[].
fn delete(a: &Jsonb, what: &Value) -> PgResult<Jsonb> {
    let scalar = || err("cannot delete from scalar");
    match what {
        Value::Int4(i) => match a {
            Jsonb::Array(items) => {
                let mut items = items.clone();
                if let Some(i) = index_of(items.len(), *i as i64) {
                    items.remove(i);
                }
                Ok(Jsonb::Array(items))
            }
            Jsonb::Object(_) => Err(err("cannot delete from object using integer index")),
            _ => Err(scalar()),
        },
        other => {
            let keys: Vec<String> = match other {
                Value::Text(k) => vec![k.to_string()],
                arr => text_items(arr).into_iter().flatten().collect(),
            };
            match a {
                Jsonb::Object(m) => Ok(Jsonb::Object(
                    m.iter()
                        .filter(|(k, _)| !keys.contains(k))
                        .cloned()
                        .collect(),
                )),
                Jsonb::Array(items) => Ok(Jsonb::Array(
                    items
                        .iter()
                        .filter(|i| !matches!(i, Jsonb::String(s) if keys.contains(s)))
                        .cloned()
                        .collect(),
                )),
                _ => Err(scalar()),
            }
        }
    }
}

fn path_index(p: &str, level: usize) -> PgResult<i64> {
    p.trim().parse::<i64>().map_err(|_| {
        PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!(
                "path element at position {} is not an integer: \"{p}\"",
                level + 1
            ),
        )
    })
}

fn null_path(level: usize) -> PgError {
    err(format!("path element at position {} is null", level + 1))
}

/// jsonb `#-`: removes the member at `path` (nothing if it is missing).
fn delete_path(j: &mut Jsonb, path: &[Option<String>], level: usize) -> PgResult<()> {
    let Some(Some(p)) = path.get(level) else {
        return Err(null_path(level));
    };
    let last = level + 1 == path.len();
    match j {
        Jsonb::Object(m) => {
            if let Some(i) = m.iter().position(|(k, _)| k == p) {
                if last {
                    m.remove(i);
                } else {
                    delete_path(&mut m[i].1, path, level + 1)?;
                }
            }
        }
        Jsonb::Array(items) => {
            let idx = path_index(p, level)?;
            if let Some(i) = index_of(items.len(), idx) {
                if last {
                    items.remove(i);
                } else {
                    delete_path(&mut items[i], path, level + 1)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// jsonb_set's setPath.
fn set_path(
    j: &mut Jsonb,
    path: &[Option<String>],
    level: usize,
    new: &Jsonb,
    create: bool,
) -> PgResult<()> {
    let Some(Some(p)) = path.get(level) else {
        return Err(null_path(level));
    };
    let last = level + 1 == path.len();
    match j {
        Jsonb::Object(m) => match m.iter().position(|(k, _)| k == p) {
            Some(i) if last => m[i].1 = new.clone(),
            Some(i) => set_path(&mut m[i].1, path, level + 1, new, create)?,
            None if last && create => {
                m.push((p.clone(), new.clone()));
                let all = std::mem::take(m);
                *m = json::canonical_object(all);
            }
            None => {}
        },
        Jsonb::Array(items) => {
            let idx = path_index(p, level)?;
            let n = items.len() as i64;
            let pos = if idx < 0 {
                if -idx > n {
                    None // before the start
                } else {
                    Some(idx + n)
                }
            } else {
                Some(idx.min(n))
            };
            match pos {
                None => {
                    if last && create {
                        items.insert(0, new.clone());
                    }
                }
                Some(i) if i < n => {
                    if last {
                        items[i as usize] = new.clone();
                    } else {
                        set_path(&mut items[i as usize], path, level + 1, new, create)?;
                    }
                }
                Some(_) => {
                    if last && create {
                        items.push(new.clone());
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// jsonb_strip_nulls: object members whose value is null go, recursively.
fn strip_nulls(j: &Jsonb) -> Jsonb {
    match j {
        Jsonb::Object(m) => Jsonb::Object(
            m.iter()
                .filter(|(_, v)| !matches!(v, Jsonb::Null))
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Jsonb::Array(items) => Jsonb::Array(items.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// json_strip_nulls: the text re-emitted without whitespace, null members dropped.
fn strip_nulls_json(doc: &JsonDoc, n: &Node, out: &mut String) {
    match &n.kind {
        NodeKind::Object(m) => {
            out.push('{');
            let mut first = true;
            for (k, v) in m {
                if matches!(v.kind, NodeKind::Null) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                escape_json(out, k);
                out.push(':');
                strip_nulls_json(doc, v, out);
            }
            out.push('}');
        }
        NodeKind::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                strip_nulls_json(doc, v, out);
            }
            out.push(']');
        }
        _ => out.push_str(doc.slice(n)),
    }
}

// ---------------------------------------------------------------------------
// SQL values to JSON
// ---------------------------------------------------------------------------

/// A timestamp/date's JSON text (ISO 8601 with `T`, `+00:00` offsets).
fn iso_datetime(v: &Value) -> String {
    let s = v.to_text_string();
    if s.ends_with("infinity") {
        return s;
    }
    let mut s = s.replacen(' ', "T", 1);
    if matches!(v, Value::TimestampTz(_)) {
        let b = s.as_bytes();
        let n = b.len();
        if n >= 3 && (b[n - 3] == b'+' || b[n - 3] == b'-') {
            s.push_str(":00");
        }
    }
    s
}

/// Appends `v` as json text (datum_to_json).
pub fn to_json_text(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Numeric(_) | Value::Oid(_) => {
            out.push_str(&v.to_text_string())
        }
        Value::Float8(f) => {
            let s = v.to_text_string();
            if f.is_finite() {
                out.push_str(&s);
            } else {
                escape_json(out, &s);
            }
        }
        Value::Json(s) => out.push_str(s),
        Value::Jsonb(j) => j.write(out),
        Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_) => {
            escape_json(out, &iso_datetime(v))
        }
        Value::Array(a) => {
            // One JSON array per dimension, nested (to_json's array_dim_to_json).
            fn nested(items: &[Value], dims: &[pgtypes::array::Dim], out: &mut String) {
                out.push('[');
                let width = items.len() / dims.first().map_or(1, |d| d.len.max(1) as usize);
                for (i, part) in items.chunks(width.max(1)).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if dims.len() > 1 {
                        nested(part, &dims[1..], out);
                    } else {
                        to_json_text(&part[0], out);
                    }
                }
                out.push(']');
            }
            nested(&a.items, &a.dims(), out);
        }
        Value::Text(s) => escape_json(out, s),
        other => escape_json(out, &other.to_text_string()),
    }
}

/// `v` as jsonb (to_jsonb).
pub fn to_jsonb(v: &Value) -> PgResult<Jsonb> {
    Ok(match v {
        Value::Null => Jsonb::Null,
        Value::Bool(b) => Jsonb::Bool(*b),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Numeric(_) | Value::Oid(_) => {
            Jsonb::Number(json::canonical_number(&v.to_text_string())?)
        }
        Value::Float8(f) => {
            let s = v.to_text_string();
            if f.is_finite() {
                Jsonb::Number(json::canonical_number(&s)?)
            } else {
                Jsonb::String(s)
            }
        }
        Value::Json(s) => json::parse_jsonb(s)?,
        Value::Jsonb(j) => (**j).clone(),
        Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_) => {
            Jsonb::String(iso_datetime(v))
        }
        Value::Array(a) => {
            fn nested(items: &[Value], dims: &[pgtypes::array::Dim]) -> PgResult<Jsonb> {
                if dims.len() <= 1 {
                    return Ok(Jsonb::Array(
                        items.iter().map(to_jsonb).collect::<PgResult<_>>()?,
                    ));
                }
                let width = (items.len() / dims[0].len.max(1) as usize).max(1);
                Ok(Jsonb::Array(
                    items
                        .chunks(width)
                        .map(|part| nested(part, &dims[1..]))
                        .collect::<PgResult<_>>()?,
                ))
            }
            nested(&a.items, &a.dims())?
        }
        Value::Text(s) => Jsonb::String(s.to_string()),
        other => Jsonb::String(other.to_text_string()),
    })
}

/// An object key from a SQL value: scalars only, their text.
fn key_text(v: &Value) -> PgResult<String> {
    match v {
        Value::Array(_) | Value::Json(_) | Value::Jsonb(_) => Err(err(
            "key value must be scalar, not array, composite, or json",
        )),
        Value::Bool(b) => Ok((if *b { "true" } else { "false" }).to_string()),
        other => Ok(other.to_text_string()),
    }
}

fn build_object(args: &[Value], jsonb: bool) -> PgResult<Value> {
    if !args.len().is_multiple_of(2) {
        return Err(
            err("argument list must have even number of elements").with_hint(format!(
                "The arguments of {}() must consist of alternating keys and values.",
                if jsonb {
                    "jsonb_build_object"
                } else {
                    "json_build_object"
                }
            )),
        );
    }
    if jsonb {
        let mut m = Vec::with_capacity(args.len() / 2);
        for (i, pair) in args.chunks(2).enumerate() {
            if pair[0].is_null() {
                return Err(err(format!("argument {}: key must not be null", 2 * i + 1)));
            }
            m.push((key_text(&pair[0])?, to_jsonb(&pair[1])?));
        }
        return Ok(jsonb_value(Jsonb::Object(json::canonical_object(m))));
    }
    let mut out = String::from("{");
    for (i, pair) in args.chunks(2).enumerate() {
        if pair[0].is_null() {
            return Err(err(format!("argument {} cannot be null", 2 * i + 1))
                .with_hint("Object keys should be text."));
        }
        if i > 0 {
            out.push_str(", ");
        }
        escape_json(&mut out, &key_text(&pair[0])?);
        out.push_str(" : ");
        to_json_text(&pair[1], &mut out);
    }
    out.push('}');
    Ok(Value::Json(Arc::from(out)))
}

fn build_array(args: &[Value], jsonb: bool) -> PgResult<Value> {
    if jsonb {
        return Ok(jsonb_value(Jsonb::Array(
            args.iter().map(to_jsonb).collect::<PgResult<_>>()?,
        )));
    }
    let mut out = String::from("[");
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        to_json_text(a, &mut out);
    }
    out.push(']');
    Ok(Value::Json(Arc::from(out)))
}

// ---------------------------------------------------------------------------
// Aggregates
// ---------------------------------------------------------------------------

/// json_agg / jsonb_agg over the inputs (NULLs included as null).
pub fn agg_result(values: &[Value], jsonb: bool) -> PgResult<Value> {
    if jsonb {
        return Ok(jsonb_value(Jsonb::Array(
            values.iter().map(to_jsonb).collect::<PgResult<_>>()?,
        )));
    }
    let mut out = String::from("[");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
            // json_agg_transfn's whitespace before a structured element.
            if matches!(v, Value::Array(_)) {
                out.push_str("\n ");
            }
        }
        to_json_text(v, &mut out);
    }
    out.push(']');
    Ok(Value::Json(Arc::from(out)))
}

/// The key check of json[b]_object_agg's transition (22023 for a NULL key).
pub fn object_agg_key(key: &Value) -> PgResult<()> {
    if key.is_null() {
        return Err(err("field name must not be null"));
    }
    Ok(())
}

/// json_object_agg / jsonb_object_agg over (key, value) pairs.
pub fn object_agg_result(pairs: &[(Value, Value)], jsonb: bool) -> PgResult<Value> {
    if jsonb {
        let mut m = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            m.push((key_text(k)?, to_jsonb(v)?));
        }
        return Ok(jsonb_value(Jsonb::Object(json::canonical_object(m))));
    }
    let mut out = String::from("{ ");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        escape_json(&mut out, &key_text(k)?);
        out.push_str(" : ");
        to_json_text(v, &mut out);
    }
    out.push_str(" }");
    Ok(Value::Json(Arc::from(out)))
}

// ---------------------------------------------------------------------------
// Set-returning functions
// ---------------------------------------------------------------------------

/// All rows of a set-returning json function over `arg` (NULL: none).
pub fn srf_rows(call: &SrfCall, arg: &Value) -> PgResult<Vec<Vec<Value>>> {
    let name = call.name;
    match arg {
        Value::Jsonb(j) => {
            let scalar_or = |obj: &str, arr: &str, scalar: &str| -> PgError {
                err(match &**j {
                    Jsonb::Object(_) => obj.to_string(),
                    Jsonb::Array(_) => arr.to_string(),
                    _ => scalar.to_string(),
                })
            };
            match call.func {
                JsonSrf::ArrayElements { text } => match &**j {
                    Jsonb::Array(items) => Ok(items
                        .iter()
                        .map(|v| {
                            vec![if text {
                                jsonb_text(v)
                            } else {
                                jsonb_value(v.clone())
                            }]
                        })
                        .collect()),
                    Jsonb::Object(_) => Err(err("cannot extract elements from an object")),
                    _ => Err(err("cannot extract elements from a scalar")),
                },
                JsonSrf::Each { text } => match &**j {
                    Jsonb::Object(m) => Ok(m
                        .iter()
                        .map(|(k, v)| {
                            vec![
                                Value::text(k),
                                if text {
                                    jsonb_text(v)
                                } else {
                                    jsonb_value(v.clone())
                                },
                            ]
                        })
                        .collect()),
                    _ => Err(err(format!("cannot call {name} on a non-object"))),
                },
                JsonSrf::ObjectKeys => match &**j {
                    Jsonb::Object(m) => Ok(m.iter().map(|(k, _)| vec![Value::text(k)]).collect()),
                    _ => Err(scalar_or(
                        "",
                        &format!("cannot call {name} on an array"),
                        &format!("cannot call {name} on a scalar"),
                    )),
                },
            }
        }
        Value::Json(s) => {
            let doc = JsonDoc::parse(s)?;
            let slice = |n: &Node| Value::Json(Arc::from(doc.slice(n)));
            match (call.func, &doc.root.kind) {
                (JsonSrf::ArrayElements { text }, NodeKind::Array(items)) => Ok(items
                    .iter()
                    .map(|n| vec![if text { node_text(&doc, n) } else { slice(n) }])
                    .collect()),
                (JsonSrf::ArrayElements { .. }, NodeKind::Object(_)) => {
                    Err(err(format!("cannot call {name} on a non-array")))
                }
                (JsonSrf::ArrayElements { .. }, _) => {
                    Err(err(format!("cannot call {name} on a scalar")))
                }
                (JsonSrf::Each { text }, NodeKind::Object(m)) => Ok(m
                    .iter()
                    .map(|(k, n)| {
                        vec![
                            Value::text(k),
                            if text { node_text(&doc, n) } else { slice(n) },
                        ]
                    })
                    .collect()),
                (JsonSrf::Each { .. }, NodeKind::Array(_)) => {
                    Err(err("cannot deconstruct an array as an object"))
                }
                (JsonSrf::Each { .. }, _) => Err(err("cannot deconstruct a scalar")),
                (JsonSrf::ObjectKeys, NodeKind::Object(m)) => {
                    Ok(m.iter().map(|(k, _)| vec![Value::text(k)]).collect())
                }
                (JsonSrf::ObjectKeys, NodeKind::Array(_)) => {
                    Err(err(format!("cannot call {name} on an array")))
                }
                (JsonSrf::ObjectKeys, _) => Err(err(format!("cannot call {name} on a scalar"))),
            }
        }
        _ => Ok(Vec::new()),
    }
}
