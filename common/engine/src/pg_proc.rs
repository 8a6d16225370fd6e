//! User-defined functions (PostgreSQL's `catalog/pg_proc.c` for rows that
//! CREATE FUNCTION makes): a name, typed parameters, a result type, a
//! language (`sql` or `plpgsql`) and the body's source text.
//!
//! The catalog keeps each function as a [`FunctionSpec`] in its own map,
//! keyed by OID (overloads share a name). It changes through the
//! catalog's change path (`CreateFunction`, which CREATE OR REPLACE also
//! uses with the existing OID, and `DropFunction`): WAL-logged, replayed
//! by a standby, persisted in the catalog file as one `function` line (a
//! file from before functions existed has none and still reads).
//!
//! The catalog stores the source only; parsing, validation and execution
//! belong to the SQL layer (`sql::plpgsql`, `sql::proc`), which caches
//! what it derives from the source by OID and catalog version.
//!
//! ## Invariants
//!
//! 1. A function's OID never changes, not even on CREATE OR REPLACE, so
//!    plans that bound a call by OID see the new body (their catalog
//!    version check re-plans them anyway).
//! 2. A function created by a transaction that may still roll back carries
//!    its xid (`creator`) until that transaction is known committed; a
//!    rollback drops it again (or puts back the replaced definition), and
//!    start-up drops one whose creator never committed
//!    (`crate::indexing::resolve_uncommitted_ddl`). Like an enum type, an
//!    uncommitted function is already visible to other sessions.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::{esc, type_from_catalog, type_to_catalog, unesc};
use pgtypes::sqltype::SqlType;
use pgtypes::{Oid, TransactionId};

/// pg_language.oid of `sql`.
pub const LANG_SQL: Oid = 14;
/// pg_language.oid of `plpgsql` (PostgreSQL 15's, made by `initdb`).
pub const LANG_PLPGSQL: Oid = 13563;

/// One parameter of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionArg {
    /// The name (empty: unnamed, reachable as `$n` only).
    pub name: String,
    /// The type.
    pub ty: SqlType,
    /// DEFAULT expression's text, if any.
    pub default: Option<String>,
}

/// A function's definition (its pg_proc row).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSpec {
    /// pg_proc.oid.
    pub oid: Oid,
    /// proname.
    pub name: String,
    /// pronamespace.
    pub namespace: Oid,
    /// proowner.
    pub owner: Oid,
    /// prokind: `f` (function) or `p` (procedure).
    pub kind: u8,
    /// prolang ([`LANG_SQL`] or [`LANG_PLPGSQL`]).
    pub lang: Oid,
    /// provolatile: `i`, `s` or `v`.
    pub volatility: u8,
    /// proisstrict (RETURNS NULL ON NULL INPUT).
    pub strict: bool,
    /// proretset (SETOF / TABLE).
    pub retset: bool,
    /// prorettype (`Void` for RETURNS void, `Record` for TABLE (…)).
    pub ret: SqlType,
    /// The input parameters, in order.
    pub args: Vec<FunctionArg>,
    /// The output columns: OUT / INOUT parameters or RETURNS TABLE (…)'s
    /// columns, in order (empty otherwise).
    pub out: Vec<(String, SqlType)>,
    /// proargmodes: one of `i`, `o`, `b` (INOUT), `v` (VARIADIC), `t`
    /// (TABLE) per parameter as declared. Empty: `args` are IN and `out`
    /// TABLE columns (a definition from before modes were kept).
    pub modes: Vec<u8>,
    /// prosrc: the body as written between the quotes.
    pub body: String,
    /// prosecdef: SECURITY DEFINER (the call runs as `owner`).
    pub secdef: bool,
    /// proconfig: the SET clauses, each `name=value` (the name in
    /// lower case), applied for the call's duration.
    pub config: Vec<String>,
    /// The (sub)transaction that created or replaced it (INVALID: committed).
    pub creator: TransactionId,
}

impl FunctionSpec {
    /// The input parameter types.
    pub fn arg_types(&self) -> Vec<SqlType> {
        self.args.iter().map(|a| a.ty).collect()
    }

    /// Every parameter as declared: (mode, name, type, input index), the
    /// input index being the position in `args` of an IN / INOUT /
    /// VARIADIC one.
    pub fn all_params(&self) -> Vec<(u8, &str, SqlType, Option<usize>)> {
        let mut out = Vec::with_capacity(self.args.len() + self.out.len());
        let (mut i, mut o) = (0, 0);
        let legacy: Vec<u8>;
        let modes = if self.modes.is_empty() {
            legacy = std::iter::repeat_n(b'i', self.args.len())
                .chain(std::iter::repeat_n(b't', self.out.len()))
                .collect();
            &legacy
        } else {
            &self.modes
        };
        for m in modes {
            match m {
                b'o' | b't' => {
                    if let Some((n, t)) = self.out.get(o) {
                        out.push((*m, n.as_str(), *t, None));
                    }
                    o += 1;
                }
                _ => {
                    if let Some(a) = self.args.get(i) {
                        out.push((*m, a.name.as_str(), a.ty, Some(i)));
                    }
                    i += 1;
                    if *m == b'b' {
                        o += 1;
                    }
                }
            }
        }
        out
    }

    /// The parameters a call passes arguments for: the inputs, and for a
    /// procedure its OUT parameters too, in declaration order (PostgreSQL
    /// 14+: `CALL p(1, NULL)` gives the OUT parameter an argument, which
    /// is ignored). An OUT parameter has no DEFAULT; CREATE PROCEDURE
    /// keeps defaults and VARIADIC last, so they stay last here too.
    pub fn call_args(&self) -> std::borrow::Cow<'_, [FunctionArg]> {
        if self.kind != b'p' || !self.modes.contains(&b'o') {
            return std::borrow::Cow::Borrowed(&self.args);
        }
        std::borrow::Cow::Owned(
            self.all_params()
                .into_iter()
                .map(|(_, name, ty, input)| FunctionArg {
                    name: name.to_string(),
                    ty,
                    default: input
                        .and_then(|i| self.args.get(i))
                        .and_then(|a| a.default.clone()),
                })
                .collect(),
        )
    }

    /// True if an argument type list in a command naming the function
    /// (DROP, ALTER, GRANT … `f(types)`) names this one: its input types,
    /// or for a procedure also every parameter's, OUT ones included, as
    /// PostgreSQL 14+ accepts.
    pub fn named_by_types(&self, types: &[SqlType]) -> bool {
        let inputs = self.args.iter().map(|a| a.ty);
        inputs.eq(types.iter().copied())
            || (self.kind == b'p'
                && self
                    .call_args()
                    .iter()
                    .map(|a| a.ty)
                    .eq(types.iter().copied()))
    }

    /// The inputs among a call's arguments (one per [`Self::call_args`]):
    /// a procedure's OUT arguments dropped.
    pub fn inputs_of<'v, T: Clone>(&self, call: &'v [T]) -> std::borrow::Cow<'v, [T]> {
        if self.kind != b'p' || !self.modes.contains(&b'o') {
            return std::borrow::Cow::Borrowed(call);
        }
        std::borrow::Cow::Owned(
            self.all_params()
                .into_iter()
                .zip(call)
                .filter(|((_, _, _, input), _)| input.is_some())
                .map(|(_, v)| v.clone())
                .collect(),
        )
    }

    /// The position among [`Self::call_args`] of the VARIADIC parameter.
    pub fn call_variadic_arg(&self) -> Option<usize> {
        // A procedure's CALL counts its OUT parameters too, and VARIADIC
        // is then the last parameter of all (CREATE PROCEDURE checks it).
        let outs = self.modes.iter().filter(|m| **m == b'o').count();
        let n = if self.kind == b'p' {
            self.args.len() + outs
        } else {
            self.args.len()
        };
        self.variadic_arg()
            .map(|i| if n == self.args.len() { i } else { n - 1 })
    }

    /// The input position of the VARIADIC parameter (always the last
    /// input), if the function has one.
    pub fn variadic_arg(&self) -> Option<usize> {
        self.modes
            .contains(&b'v')
            .then(|| self.args.len().checked_sub(1))
            .flatten()
    }

    /// provariadic: the element type of the VARIADIC parameter's array.
    pub fn variadic_elem(&self) -> Option<SqlType> {
        self.variadic_arg()
            .and_then(|i| self.args.get(i))
            .and_then(|a| a.ty.elem())
    }

    /// The input position of output column `k` (an INOUT parameter's).
    pub fn inout_arg(&self, k: usize) -> Option<usize> {
        let mut o = 0;
        for (m, _, _, i) in self.all_params() {
            if matches!(m, b'o' | b't' | b'b') {
                if o == k {
                    return if m == b'b' { i } else { None };
                }
                o += 1;
            }
        }
        None
    }

    /// `name(type, …)` as PostgreSQL prints a function in messages.
    pub fn signature(&self) -> String {
        let types: Vec<String> = self.args.iter().map(|a| a.ty.pg_name()).collect();
        format!("{}({})", self.name, types.join(","))
    }
}

/// A function in the catalog: its definition and the creation mark,
/// which clears once the clog says the transaction committed.
#[derive(Debug)]
pub struct FunctionDef {
    /// The definition.
    pub spec: FunctionSpec,
    /// The creating xid until known committed (0 after).
    pub creator: AtomicU64,
}

impl FunctionDef {
    /// The in-catalog form of `spec`.
    pub fn new(spec: FunctionSpec) -> FunctionDef {
        FunctionDef {
            creator: AtomicU64::new(spec.creator.0),
            spec,
        }
    }

    /// The definition with its current mark (what the file and WAL keep).
    pub fn current_spec(&self) -> FunctionSpec {
        let mut s = self.spec.clone();
        s.creator = TransactionId(self.creator.load(Ordering::Acquire));
        s
    }
}

/// A type's catalog spelling; `record` (RETURNS TABLE with several
/// columns) is spelled out, as the table catalog has no use for it.
fn ty_out(t: SqlType) -> String {
    match t {
        SqlType::Record => "record".to_string(),
        t => type_to_catalog(t),
    }
}

fn ty_in(s: &str) -> Option<SqlType> {
    match s {
        "record" => Some(SqlType::Record),
        "trigger" => Some(SqlType::Trigger),
        s => type_from_catalog(s),
    }
}

/// One line of the catalog file and WAL: `function <oid> <namespace>
/// <owner> <kind> <lang> <volatility> <strict> <retset> <ret type>
/// <creator> <body> <nargs> (<name> <type> <default or ->)… <nout> (<name>
/// <type>)…`, strings escaped.
pub(crate) fn push_function(out: &mut String, f: &FunctionSpec) {
    out.push_str(&format!(
        "function {} {} {} {} {} {} {} {} {} {} {} {} {}",
        f.oid,
        f.namespace,
        f.owner,
        f.kind as char,
        f.lang,
        f.volatility as char,
        u8::from(f.strict),
        u8::from(f.retset),
        ty_out(f.ret),
        f.creator.0,
        esc(&f.name),
        esc(&f.body),
        f.args.len(),
    ));
    for a in &f.args {
        out.push_str(&format!(
            " {} {} {}",
            esc(&a.name),
            ty_out(a.ty),
            a.default
                .as_deref()
                .map_or_else(|| "-".to_string(), |d| esc(&format!("={d}")))
        ));
    }
    out.push_str(&format!(" {}", f.out.len()));
    for (n, t) in &f.out {
        out.push_str(&format!(" {} {}", esc(n), ty_out(*t)));
    }
    if !f.modes.is_empty() {
        out.push_str(&format!(" modes {}", String::from_utf8_lossy(&f.modes)));
    }
    if f.secdef {
        out.push_str(" secdef");
    }
    if !f.config.is_empty() {
        out.push_str(&format!(" config {}", f.config.len()));
        for c in &f.config {
            out.push_str(&format!(" {}", esc(c)));
        }
    }
    out.push('\n');
}

/// Parses [`push_function`]'s line; never panics.
pub(crate) fn parse_function(line: &str) -> Result<FunctionSpec, String> {
    let g: Vec<&str> = line.split(' ').collect();
    let ["function", oid, ns, owner, kind, lang, vol, strict, retset, ret, creator, name, body, nargs, rest @ ..] =
        g.as_slice()
    else {
        return Err(format!("unrecognized line {line:?}"));
    };
    let num = |s: &str| s.parse::<u32>().map_err(|_| format!("bad number {s:?}"));
    let ty = |s: &str| ty_in(s).ok_or_else(|| format!("bad type {s:?}"));
    let byte = |s: &str| match s.as_bytes() {
        [b] => Ok(*b),
        _ => Err(format!("bad flag {s:?}")),
    };
    let nargs: usize = nargs
        .parse()
        .map_err(|_| "bad argument count".to_string())?;
    if rest.len() < nargs * 3 + 1 {
        return Err("truncated function line".into());
    }
    let mut args = Vec::with_capacity(nargs);
    for a in rest[..nargs * 3].chunks(3) {
        let default = match a[2] {
            "-" => None,
            d => Some(
                unesc(d)?
                    .strip_prefix('=')
                    .ok_or("bad default")?
                    .to_string(),
            ),
        };
        args.push(FunctionArg {
            name: unesc(a[0])?,
            ty: ty(a[1])?,
            default,
        });
    }
    let rest = &rest[nargs * 3..];
    let nout: usize = rest[0]
        .parse()
        .map_err(|_| "bad column count".to_string())?;
    // Optional sections follow the columns (lines from before them lack
    // them): `modes <chars>`, `secdef`, `config <n> <setting>…`.
    let cols = rest
        .get(1..1 + nout * 2)
        .ok_or("bad function line length")?;
    let mut modes = Vec::new();
    let mut secdef = false;
    let mut config = Vec::new();
    let mut tail = &rest[1 + nout * 2..];
    while let Some((&word, more)) = tail.split_first() {
        match word {
            "modes" => {
                let (m, more) = more.split_first().ok_or("bad argument modes")?;
                modes = m.as_bytes().to_vec();
                if !modes
                    .iter()
                    .all(|b| matches!(b, b'i' | b'o' | b'b' | b'v' | b't'))
                {
                    return Err("bad argument modes".into());
                }
                tail = more;
            }
            "secdef" => {
                secdef = true;
                tail = more;
            }
            "config" => {
                let (n, more) = more.split_first().ok_or("bad config")?;
                let n: usize = n.parse().map_err(|_| "bad config count".to_string())?;
                let items = more.get(..n).ok_or("truncated config")?;
                for i in items {
                    config.push(unesc(i)?);
                }
                tail = &more[n..];
            }
            _ => return Err("bad function line length".into()),
        }
    }
    let mut out = Vec::with_capacity(nout);
    for c in cols.chunks(2) {
        out.push((unesc(c[0])?, ty(c[1])?));
    }
    Ok(FunctionSpec {
        oid: num(oid)?,
        namespace: num(ns)?,
        owner: num(owner)?,
        kind: byte(kind)?,
        lang: num(lang)?,
        volatility: byte(vol)?,
        strict: *strict == "1",
        retset: *retset == "1",
        ret: ty(ret)?,
        creator: TransactionId(creator.parse::<u64>().map_err(|_| "bad xid".to_string())?),
        name: unesc(name)?,
        body: unesc(body)?,
        args,
        out,
        modes,
        secdef,
        config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_line_round_trips() {
        let f = FunctionSpec {
            oid: 16390,
            name: "snap me".into(),
            namespace: 2200,
            owner: 10,
            kind: b'f',
            lang: LANG_PLPGSQL,
            volatility: b'v',
            strict: true,
            retset: false,
            ret: SqlType::Record,
            args: vec![
                FunctionArg {
                    name: "p_ret".into(),
                    ty: SqlType::Int4,
                    default: Some("1 + 2".into()),
                },
                FunctionArg {
                    name: String::new(),
                    ty: SqlType::Text,
                    default: None,
                },
            ],
            out: vec![("a".into(), SqlType::Int8)],
            modes: b"ivo".to_vec(),
            body: "BEGIN\n  RETURN 1; -- 100% — über\nEND".into(),
            secdef: true,
            config: vec!["search_path=a, \"b c\"".into(), "work_mem=64MB".into()],
            creator: TransactionId(42),
        };
        let mut s = String::new();
        push_function(&mut s, &f);
        assert_eq!(parse_function(s.trim_end()).unwrap(), f);
        assert!(parse_function("function 1 2").is_err());
    }
}
