//! `pg_operator`: the built-in operators hotpair implements, with
//! PostgreSQL 15's rows, and the index operator classes over them
//! (`pg_opclass`, `pg_opfamily`, `pg_amop`, `pg_amproc`), their
//! descriptions (`obj_description(oid, 'pg_operator')`), `regoper` /
//! `regoperator`, and the default operator class of an index column
//! (`pg_index.indclass`).
//!
//! ## Where the rows come from
//! `operator_data.rs` is generated from a real PostgreSQL 15 by
//! `cargo run -p tap-tests --bin proc_regen` (the run that regenerates
//! `proc_data.rs`): every `pg_catalog` operator whose argument and result
//! types hotpair's `pg_type` lists (read from a running hotpair, so a new
//! type brings its operators at the next run), and the operator classes
//! and families of hotpair's index access methods (`pg_am`: btree) for
//! those types. That is a superset. [`operators`] keeps an operator when
//! hotpair's expression binder (`crate::expr`) binds `l OP r` (`OP r`
//! for a prefix operator) with operands of its argument types to its
//! result type ([`implemented`]):
//!
//! ```text
//!   operator_data.rs ──types in pg_type──▶ rows
//!        │                                   │ parse "l OP r", bind with
//!        │                                   │ l: oprleft, r: oprright
//!        ▼                                   ▼
//!   OPERATOR_ROWS ─────────────▶ kept iff bound type = oprresult
//!                                   │
//!                                   ├─▶ pg_operator, pg_description
//!                                   ├─▶ pg_proc keeps their oprcode
//!                                   └─▶ pg_amop rows naming them
//! ```
//!
//! An operator over a type hotpair has no values of (`real` is a
//! `double precision` in hotpair, `aclitem`, `tid`, `record`, …) is not
//! kept. Operator classes are kept when the btree comparison operators
//! of their input type (`=` and `<`, strategies 3 and 1) are kept, their
//! families when one of their classes is, `pg_amop` rows when their
//! family and operator are, `pg_amproc` rows when their family is and
//! hotpair has values of both types.
//!
//! So the listing follows the binder: an operator it starts accepting
//! appears at the next start, one it drops disappears, and the unit test
//! below fails when a symbol the binder dispatches on has no row
//! (regenerate the data) or a kept row's symbol is not dispatched.
//!
//! The function implementing each kept operator (`oprcode`, `int4pl`)
//! and the support functions of the kept families (`amproc`,
//! `btint4cmp`) are in `proc_data.rs` and kept in `pg_proc` because
//! their operator or family is (`super::proc`), though hotpair does not
//! accept calls of them by name. The selectivity estimators the
//! operators name (`oprrest`, `oprjoin`: `eqsel`) are not in `pg_proc`;
//! `regproc` prints their names.
//!
//! Rows are in PostgreSQL's heap order (what its unordered scans return,
//! which psql's `\dAf` shows through an unordered `string_agg`).
//! Everything is built once per process on first use ([`OnceLock`]); the
//! rows are static, so the catalogs are keyed by `oid`
//! (`SystemView::key`): `WHERE oid = …` builds one row.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType as T;
use pgtypes::value::Value;

use super::operator_data as data;
use super::{defs, proc, types};

/// A generated row: its fields (None for NULL).
type Row = Vec<Option<&'static str>>;

/// The fields of a compact generated row (tab-separated, `\N` NULL).
fn fields(row: &'static str) -> Row {
    row.split('\t')
        .map(|f| if f == "\\N" { None } else { Some(f) })
        .collect()
}

fn column(cols: &[&str], row: &[Option<&'static str>], name: &str) -> Option<&'static str> {
    let i = cols.iter().position(|c| *c == name)?;
    row.get(i).copied().flatten()
}

fn oid_col(cols: &[&str], row: &[Option<&'static str>], name: &str) -> u32 {
    column(cols, row, name)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// One `pg_operator` row hotpair implements.
pub struct Operator {
    /// oid.
    pub oid: u32,
    /// oprname.
    pub name: &'static str,
    /// oprkind: `b` infix, `l` prefix.
    pub kind: u8,
    /// oprleft (0 for a prefix operator).
    pub left: u32,
    /// oprright.
    pub right: u32,
    /// oprresult.
    pub result: u32,
    /// oprcode: the implementing function's OID.
    pub code: u32,
    row: Row,
}

impl Operator {
    /// regoperator's output: `name(lefttype,righttype)`.
    pub fn signature(&self) -> &'static str {
        column(data::OPERATOR_COLUMNS, &self.row, "opr_signature").unwrap_or(self.name)
    }
    /// regoper's output in PostgreSQL: the bare name when it names one
    /// operator there, else qualified (`pg_catalog.+`).
    pub fn regoper(&self) -> &'static str {
        column(data::OPERATOR_COLUMNS, &self.row, "opr_regoper").unwrap_or(self.name)
    }
    /// obj_description(oid, 'pg_operator').
    pub fn description(&self) -> Option<&'static str> {
        column(data::OPERATOR_COLUMNS, &self.row, "description")
    }
}

fn parse_operator(row: &'static str) -> Option<Operator> {
    let row = fields(row);
    let c = |n: &str| column(data::OPERATOR_COLUMNS, &row, n);
    Some(Operator {
        oid: c("oid")?.parse().ok()?,
        name: c("oprname")?,
        kind: *c("oprkind")?.as_bytes().first()?,
        left: c("oprleft")?.parse().ok()?,
        right: c("oprright")?.parse().ok()?,
        result: c("oprresult")?.parse().ok()?,
        code: c("oprcode")?.parse().ok()?,
        row,
    })
}

/// The operators hotpair implements, in PostgreSQL's heap order.
pub fn operators() -> &'static [Operator] {
    static OPS: OnceLock<Vec<Operator>> = OnceLock::new();
    OPS.get_or_init(|| {
        data::OPERATOR_ROWS
            .iter()
            .filter_map(|r| parse_operator(r))
            .filter(|o| implemented(o.name, o.kind, o.left, o.right, o.result))
            .collect()
    })
}

/// The operator with OID `oid`, if hotpair implements it.
pub fn by_oid(oid: u32) -> Option<&'static Operator> {
    static BY_OID: OnceLock<HashMap<u32, usize>> = OnceLock::new();
    let all = operators();
    let map = BY_OID.get_or_init(|| all.iter().enumerate().map(|(i, o)| (o.oid, i)).collect());
    map.get(&oid).map(|i| &all[*i])
}

/// Every operator named `name`.
pub fn by_name(name: &str) -> Vec<&'static Operator> {
    operators().iter().filter(|o| o.name == name).collect()
}

/// Whether `oid` is the function of an operator hotpair implements
/// (`oprcode`) or a support function of a listed operator family
/// (`amproc`): `super::proc` lists those.
pub fn is_catalog_function(oid: u32) -> bool {
    static CODES: OnceLock<HashSet<u32>> = OnceLock::new();
    CODES
        .get_or_init(|| {
            let amproc = amproc_rows()
                .iter()
                .map(|r| oid_col(data::AMPROC_COLUMNS, r, "amproc"));
            operators().iter().map(|o| o.code).chain(amproc).collect()
        })
        .contains(&oid)
}

/// The type hotpair gives values of type `oid`, when it has values of
/// exactly that type (not of another it maps the type to, as `real` to
/// `double precision`); pseudo-types as `super::proc` probes them.
fn value_type(oid: u32) -> Option<T> {
    let t = proc::probe_type(oid)?;
    let pseudo = types::TYPES.iter().any(|r| r.oid == oid && r.kind == b'p');
    (pseudo || t.oid() == oid).then_some(t)
}

/// Whether hotpair's binder binds `l name r` (`name r` for a prefix
/// operator) with operands of types `left` and `right` to a value of
/// type `result`.
pub fn implemented(name: &str, kind: u8, left: u32, right: u32, result: u32) -> bool {
    let Some(rt) = value_type(right) else {
        return false;
    };
    let mut scope = crate::expr::Scope::new();
    let text = match kind {
        b'b' => {
            let Some(lt) = value_type(left) else {
                return false;
            };
            scope.push(None, "l", lt);
            format!("l {name} r")
        }
        b'l' => format!("{name} r"),
        _ => return false,
    };
    scope.push(None, "r", rt);
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let Ok(ast) = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_expr())
    else {
        return false;
    };
    // The parse must be the operator itself, not a reading of its
    // characters as other operators (`l *< r`).
    let shape_ok = match (&ast, kind) {
        (sqlparser::ast::Expr::BinaryOp { left, right, .. }, b'b') => {
            matches!(**left, sqlparser::ast::Expr::Identifier(_))
                && matches!(**right, sqlparser::ast::Expr::Identifier(_))
        }
        (sqlparser::ast::Expr::UnaryOp { expr, .. }, b'l') => {
            matches!(**expr, sqlparser::ast::Expr::Identifier(_))
        }
        _ => false,
    };
    if !shape_ok {
        return false;
    }
    let mut params = crate::expr::ParamTypes::new();
    let Ok(bound) = crate::expr::bind_expr(&ast, &scope, &mut params) else {
        return false;
    };
    let pseudo_result = types::TYPES
        .iter()
        .any(|r| r.oid == result && r.kind == b'p');
    pseudo_result || bound.ty.oid() == result
}

/// The kept operator classes: `(oid, row)`, in heap order.
fn opclasses() -> &'static [(u32, Row)] {
    static ROWS: OnceLock<Vec<(u32, Row)>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let cols = data::OPCLASS_COLUMNS;
        let amops = amop_candidates();
        data::OPCLASS_ROWS
            .iter()
            .map(|r| fields(r))
            .filter(|r| {
                let family = oid_col(cols, r, "opcfamily");
                let intype = oid_col(cols, r, "opcintype");
                // `=` and `<` of the input type: a btree class's essence.
                [3, 1].iter().all(|strategy| {
                    amops.iter().any(|a| {
                        a.family == family
                            && a.left == intype
                            && a.right == intype
                            && a.strategy == *strategy
                    })
                })
            })
            .map(|r| (oid_col(cols, &r, "oid"), r))
            .collect()
    })
}

/// A pg_amop row whose operator is kept.
struct Amop {
    family: u32,
    left: u32,
    right: u32,
    strategy: u32,
    row: Row,
}

fn amop_candidates() -> &'static [Amop] {
    static ROWS: OnceLock<Vec<Amop>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let cols = data::AMOP_COLUMNS;
        data::AMOP_ROWS
            .iter()
            .map(|r| fields(r))
            .filter(|r| by_oid(oid_col(cols, r, "amopopr")).is_some())
            .map(|r| Amop {
                family: oid_col(cols, &r, "amopfamily"),
                left: oid_col(cols, &r, "amoplefttype"),
                right: oid_col(cols, &r, "amoprighttype"),
                strategy: oid_col(cols, &r, "amopstrategy"),
                row: r,
            })
            .collect()
    })
}

/// The families of the kept operator classes.
fn families() -> &'static HashSet<u32> {
    static SET: OnceLock<HashSet<u32>> = OnceLock::new();
    SET.get_or_init(|| {
        opclasses()
            .iter()
            .map(|(_, r)| oid_col(data::OPCLASS_COLUMNS, r, "opcfamily"))
            .collect()
    })
}

/// The default operator class of access method `am` for a column of
/// type `type_oid` (PostgreSQL's GetDefaultOpClass: the default class
/// of the type, else of the type it is binary-coercible to: `varchar`
/// → `text`, an array → `anyarray`); 0 when there is none.
pub fn default_opclass(am: u32, type_oid: u32) -> u32 {
    static DEFAULTS: OnceLock<HashMap<(u32, u32), u32>> = OnceLock::new();
    let map = DEFAULTS.get_or_init(|| {
        let cols = data::OPCLASS_COLUMNS;
        opclasses()
            .iter()
            .filter(|(_, r)| column(cols, r, "opcdefault") == Some("true"))
            .map(|(o, r)| {
                (
                    (oid_col(cols, r, "opcmethod"), oid_col(cols, r, "opcintype")),
                    *o,
                )
            })
            .collect()
    });
    let is_array = types::TYPES
        .iter()
        .any(|t| t.oid == type_oid && t.category == b'A');
    let fallback = match type_oid {
        1043 => 25,
        _ if is_array => 2277,
        _ => 0,
    };
    map.get(&(am, type_oid))
        .or_else(|| map.get(&(am, fallback)))
        .copied()
        .unwrap_or(0)
}

/// A keyed scan's row filter: every row, or the one whose `oid` is `key`.
fn keyed(key: Option<u32>, oid: u32) -> bool {
    key.is_none_or(|k| k == oid)
}

/// Rows of generated fields as a catalog relation with columns `cols`.
fn table_rows<'a>(
    cols: &'static [(&'static str, T)],
    names: &[&str],
    rows: impl Iterator<Item = &'a Row>,
) -> Vec<Vec<Value>> {
    let mut out = super::rows::Rows::new(cols);
    for row in rows {
        out.push(
            cols.iter()
                .map(|(n, t)| (*n, proc::value_of(t, column(names, row, n))))
                .collect(),
        );
    }
    out.out
}

/// pg_operator's rows (the one with OID `key` for a keyed scan).
pub fn pg_operator_rows(key: Option<u32>) -> Vec<Vec<Value>> {
    table_rows(
        defs::PG_OPERATOR,
        data::OPERATOR_COLUMNS,
        operators()
            .iter()
            .filter(|o| keyed(key, o.oid))
            .map(|o| &o.row),
    )
}

/// pg_opclass's rows.
pub fn pg_opclass_rows(key: Option<u32>) -> Vec<Vec<Value>> {
    table_rows(
        defs::PG_OPCLASS,
        data::OPCLASS_COLUMNS,
        opclasses()
            .iter()
            .filter(|(o, _)| keyed(key, *o))
            .map(|(_, r)| r),
    )
}

/// pg_opfamily's rows.
pub fn pg_opfamily_rows(key: Option<u32>) -> Vec<Vec<Value>> {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    let rows = ROWS.get_or_init(|| {
        data::OPFAMILY_ROWS
            .iter()
            .map(|r| fields(r))
            .filter(|r| families().contains(&oid_col(data::OPFAMILY_COLUMNS, r, "oid")))
            .collect()
    });
    table_rows(
        defs::PG_OPFAMILY,
        data::OPFAMILY_COLUMNS,
        rows.iter()
            .filter(|r| keyed(key, oid_col(data::OPFAMILY_COLUMNS, r, "oid"))),
    )
}

/// pg_amop's rows.
pub fn pg_amop_rows(key: Option<u32>) -> Vec<Vec<Value>> {
    table_rows(
        defs::PG_AMOP,
        data::AMOP_COLUMNS,
        amop_candidates()
            .iter()
            .filter(|a| families().contains(&a.family))
            .filter(|a| keyed(key, oid_col(data::AMOP_COLUMNS, &a.row, "oid")))
            .map(|a| &a.row),
    )
}

/// The kept pg_amproc rows.
fn amproc_rows() -> &'static [Row] {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    let cols = data::AMPROC_COLUMNS;
    ROWS.get_or_init(|| {
        data::AMPROC_ROWS
            .iter()
            .map(|r| fields(r))
            .filter(|r| {
                families().contains(&oid_col(cols, r, "amprocfamily"))
                    && value_type(oid_col(cols, r, "amproclefttype")).is_some()
                    && value_type(oid_col(cols, r, "amprocrighttype")).is_some()
            })
            .collect()
    })
}

/// pg_amproc's rows.
pub fn pg_amproc_rows(key: Option<u32>) -> Vec<Vec<Value>> {
    let cols = data::AMPROC_COLUMNS;
    table_rows(
        defs::PG_AMPROC,
        cols,
        amproc_rows()
            .iter()
            .filter(|r| keyed(key, oid_col(cols, r, "oid"))),
    )
}

/// pg_description's rows for the operators: (objoid, description).
pub fn descriptions() -> impl Iterator<Item = (u32, &'static str)> {
    operators()
        .iter()
        .filter_map(|o| o.description().map(|d| (o.oid, d)))
}

/// regproc's output for a function the operator rows name but pg_proc
/// does not list (`eqsel`).
pub fn referenced_function(oid: u32) -> Option<&'static str> {
    let oid = oid.to_string();
    data::REFERENCED_ROWS.iter().find_map(|r| {
        let f = fields(r);
        (f.first().copied().flatten() == Some(oid.as_str()))
            .then(|| f.get(1).copied().flatten())
            .flatten()
    })
}

fn undefined(text: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("operator does not exist: {text}"),
    )
}

/// Splits `[pg_catalog.]name` (an operator in another schema does not
/// exist: every built-in is in pg_catalog).
fn operator_name(text: &str) -> Option<&str> {
    let t = text.trim();
    match t.strip_prefix("pg_catalog.") {
        Some(rest) => Some(rest),
        None if t.contains('.') && t.len() > 1 => None,
        None => Some(t),
    }
}

/// `regoper`'s input: an operator name that names exactly one operator
/// (in PostgreSQL's catalog: a name PostgreSQL has more operators of, over
/// types hotpair lacks, is as ambiguous here).
pub fn regoper_in(text: &str) -> PgResult<u32> {
    let Some(name) = operator_name(text) else {
        return Err(undefined(text));
    };
    match by_name(name).as_slice() {
        [one] if !one.regoper().contains('.') => Ok(one.oid),
        [] => Err(undefined(text)),
        _ => Err(PgError::new(
            "42725",
            format!("more than one operator named {text}"),
        )),
    }
}

/// `regoperator`'s input: `name(lefttype,righttype)`, `NONE` for a
/// prefix operator's left.
pub fn regoperator_in(text: &str) -> PgResult<u32> {
    let t = text.trim();
    let (Some(open), true) = (t.find('('), t.ends_with(')')) else {
        return Err(PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            "expected a left parenthesis",
        ));
    };
    let inner = &t[open + 1..t.len() - 1];
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    let arg_type = |a: &str| -> PgResult<u32> {
        if a.eq_ignore_ascii_case("none") {
            Ok(0)
        } else {
            proc::type_oid(a)
        }
    };
    let mut oids = Vec::with_capacity(args.len());
    for a in &args {
        oids.push(arg_type(a)?);
    }
    let (left, right) = match oids.as_slice() {
        [l, r] => (*l, *r),
        [_] => {
            return Err(PgError::new("42P02", "missing argument")
                .with_hint("Use NONE to denote the missing argument of a unary operator."))
        }
        _ => {
            return Err(PgError::new("54023", "too many arguments")
                .with_hint("Provide two argument types for operator."))
        }
    };
    let Some(name) = operator_name(&t[..open]) else {
        return Err(undefined(text));
    };
    by_name(name)
        .into_iter()
        .find(|o| o.left == left && o.right == right)
        .map(|o| o.oid)
        .ok_or_else(|| undefined(text))
}

/// `regoper`'s output: PostgreSQL's (the name, qualified when it names
/// more than one operator).
pub fn regoper_out(oid: u32) -> Option<String> {
    by_oid(oid).map(|o| o.regoper().to_string())
}

/// `regoperator`'s output: `name(lefttype,righttype)`.
pub fn regoperator_out(oid: u32) -> Option<String> {
    by_oid(oid).map(|o| o.signature().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The operator symbols the binder dispatches on: `OPERATOR(…)`'s
    /// table in `expr.rs` (every infix operator the parser gives the
    /// binder) and the json operators of `jsonfuncs::resolve_operator`.
    /// The string literals of match-arm patterns (`"+" | "-" =>`) in `code`.
    fn quoted_patterns(code: &str, out: &mut BTreeSet<String>) {
        for line in code.lines() {
            let mut rest = line.trim();
            while let Some(r) = rest.strip_prefix('"') {
                let Some(close) = r.find('"') else { break };
                out.insert(r[..close].to_string());
                rest = r[close + 1..]
                    .trim_start()
                    .trim_start_matches('|')
                    .trim_start();
            }
        }
    }

    fn dispatched() -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let expr = include_str!("../expr.rs");
        let at = expr
            .find("let builtin = match name {")
            .expect("expr.rs: the OPERATOR(…) table");
        let body = &expr[at..];
        let end = body.find("_ => None").expect("end of the table");
        quoted_patterns(&body[..end], &mut out);
        let json = include_str!("../jsonfuncs.rs");
        let at = json
            .find("pub fn resolve_operator(")
            .expect("jsonfuncs.rs: resolve_operator");
        let body = &json[at..];
        let end = body.find("\n}\n").unwrap_or(body.len());
        quoted_patterns(&body[..end], &mut out);
        out
    }

    /// Symbols the binder accepts that are not pg_operator names in
    /// PostgreSQL (the parser's spelling of another one).
    const NOT_IN_PG_OPERATOR: &[&str] = &["!="];

    #[test]
    fn generated_rows_parse() {
        for r in data::OPERATOR_ROWS {
            assert!(parse_operator(r).is_some(), "unparsable {r:?}");
            assert_eq!(fields(r).len(), data::OPERATOR_COLUMNS.len(), "{r:?}");
        }
        for (rows, cols) in [
            (data::OPCLASS_ROWS, data::OPCLASS_COLUMNS),
            (data::OPFAMILY_ROWS, data::OPFAMILY_COLUMNS),
            (data::AMOP_ROWS, data::AMOP_COLUMNS),
            (data::AMPROC_ROWS, data::AMPROC_COLUMNS),
        ] {
            for r in rows {
                assert_eq!(fields(r).len(), cols.len(), "{r:?}");
            }
        }
    }

    /// The drift check: every symbol the binder dispatches on names a
    /// kept operator (else: `cargo run -p tap-tests --bin proc_regen`),
    /// and every kept operator's symbol is dispatched (or is `-` / `+`,
    /// the prefix operators of the grammar).
    #[test]
    fn pg_operator_matches_the_binder() {
        let names = dispatched();
        assert!(names.contains("+") && names.contains("->"), "{names:?}");
        let listed: BTreeSet<&str> = operators().iter().map(|o| o.name).collect();
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !listed.contains(n.as_str()) && !NOT_IN_PG_OPERATOR.contains(&n.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "dispatched but not in pg_operator (regenerate operator_data.rs?): {missing:?}"
        );
        let extra: Vec<&str> = operators()
            .iter()
            .filter(|o| !(o.kind == b'l' && matches!(o.name, "-" | "+")))
            .map(|o| o.name)
            .filter(|n| !names.contains(*n))
            .collect();
        assert!(
            extra.is_empty(),
            "in pg_operator but not dispatched: {extra:?}"
        );
    }

    #[test]
    fn operator_functions_in_pg_proc() {
        for o in operators() {
            assert!(
                proc::by_oid(o.code).is_some(),
                "{}: oprcode {} not in pg_proc",
                o.signature(),
                o.code
            );
        }
        for r in amproc_rows() {
            let f = oid_col(data::AMPROC_COLUMNS, r, "amproc");
            assert!(proc::by_oid(f).is_some(), "amproc {f} not in pg_proc");
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(regoperator_in("+(integer,integer)").ok(), Some(551));
        assert_eq!(regoperator_in("+(int4,int4)").ok(), Some(551));
        assert_eq!(regoperator_in("-(NONE,integer)").ok(), Some(558));
        assert_eq!(regoperator_out(551).as_deref(), Some("+(integer,integer)"));
        assert_eq!(regoper_out(551).as_deref(), Some("pg_catalog.+"));
        assert_eq!(regoper_in("+").map_err(|e| e.code), Err("42725"));
        // Unique among hotpair's operators, not among PostgreSQL's.
        assert_eq!(regoper_in("?|").map_err(|e| e.code), Err("42725"));
        assert_eq!(regoper_in("#-").ok(), Some(3287));
        assert!(by_oid(96).is_some(), "int4 = int4");
        // real is double precision in hotpair: no real operators.
        assert!(by_name("+").iter().all(|o| o.left != 700 && o.right != 700));
        assert_eq!(default_opclass(super::super::BTREE_AM, 23), 1978);
        assert_eq!(default_opclass(super::super::BTREE_AM, 25), 3126);
        assert_eq!(default_opclass(super::super::BTREE_AM, 1043), 3126);
        assert_eq!(default_opclass(super::super::BTREE_AM, 2950), 10065);
    }
}
