//! Plan expressions back to SQL text, as PostgreSQL's `ruleutils.c`
//! prints them for EXPLAIN (`deparse_expression`, not pretty): every
//! operator in parentheses (`(a = 1)`, `((a > 1) AND (b < 2))`),
//! constants with the type label PostgreSQL gives them (`10`,
//! `'abc'::text`, `'2020-01-01'::date`, `'-5'::integer`), columns by
//! name, qualified with their FROM item's alias when asked.
//!
//! A plan expression reads its node's input row by position
//! (`Expr::Column(i)`), so printing it needs the names of that row's
//! columns: [`Deparser::columns`] computes them for any node from its
//! children, the way PostgreSQL resolves a Var through the child plan's
//! target list.
//!
//! ```text
//!   scan with a RangeEntry  →  Var a.id, Var a.owner, …
//!   join                    →  outer columns ++ inner columns
//!   Project / Agg           →  its expressions: a column stays a Var,
//!                              anything else is printed (`count(o.id)`)
//!   Filter, Sort, Limit …   →  the input's columns
//! ```
//!
//! A parent reading a computed column of its child prints the child's
//! expression in parentheses (`Sort Key: (count(o.id)) DESC`), as
//! ruleutils does for a Var that resolves to a non-Var target entry.
//!
//! Qualification follows EXPLAIN's rule: conditions of a scan are printed
//! unqualified (`Filter: (amount > 10)`), everything else (join
//! conditions, sort and group keys, filters above a scan) is qualified
//! when the statement reads more than one FROM item (PostgreSQL: more
//! than one range table entry), and a nested loop's outer values inside
//! its inner side always are (`Index Cond: (id = o.account_id)`).

use std::collections::HashMap;

use super::plannodes::{NodeKind, PlanNode, StatementPlans};
use crate::expr::{AggCall, BinOp, Expr, UnaryOp};
use crate::functions::Func;
use crate::pgcatalog::quote_ident;
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

/// How a node's output column is named when an expression reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Col {
    /// A column of a FROM item: its alias and name.
    Var {
        /// The alias (or relation name) that qualifies it.
        rel: String,
        /// Its name.
        name: String,
    },
    /// A computed column: the expression's text.
    Expr(String),
}

impl Col {
    /// The text a reference to the column prints: the (qualified) name,
    /// or the expression in parentheses.
    pub fn text(&self, prefix: bool) -> String {
        match self {
            Col::Var { rel, name } if prefix => {
                format!("{}.{}", quote_ident(rel), quote_ident(name))
            }
            Col::Var { name, .. } => quote_ident(name),
            Col::Expr(t) => format!("({t})"),
        }
    }

    /// The text of the column as a key of its own (sort and group keys
    /// print the child's expression itself, without parentheses).
    pub fn key_text(&self, prefix: bool) -> String {
        match self {
            Col::Expr(t) => t.clone(),
            v => v.text(prefix),
        }
    }
}

/// Prints one statement's plan expressions (see the module doc).
pub struct Deparser<'a> {
    /// Subplans, for `(SubPlan n)`.
    shared: Option<&'a StatementPlans>,
    /// Qualify column names outside scans: the statement reads more than
    /// one FROM item.
    pub prefix: bool,
    /// A nested loop's parameter slots: the outer value's text.
    params: HashMap<usize, String>,
}

impl<'a> Deparser<'a> {
    /// A deparser for the statement whose tree is `root` (with its
    /// subplans and CTEs in `shared`).
    pub fn new(root: &PlanNode, shared: Option<&'a StatementPlans>) -> Deparser<'a> {
        let mut trees: Vec<&PlanNode> = vec![root];
        if let Some(s) = shared {
            trees.extend(s.subplans.iter().map(|p| &p.plan));
            trees.extend(s.ctes.iter().map(|c| &c.plan));
        }
        let mut rels = 0;
        for t in &trees {
            count_rels(t, &mut rels);
        }
        let mut d = Deparser {
            shared,
            prefix: rels > 1,
            params: HashMap::new(),
        };
        for t in &trees {
            d.note_params(t);
        }
        d
    }

    /// Records the text of every nested loop's parameters, outermost
    /// first (an inner loop's outer side may read an outer loop's).
    fn note_params(&mut self, node: &PlanNode) {
        if let NodeKind::NestLoop { outer, params, .. } = &node.kind {
            let cols = self.columns(outer);
            for (slot, e) in params {
                let text = self.expr(e, &cols, true);
                self.params.insert(*slot, text);
            }
        }
        for c in node.children() {
            self.note_params(c);
        }
    }

    /// The names of `node`'s output columns (exactly `node.width` of them).
    pub fn columns(&self, node: &PlanNode) -> Vec<Col> {
        let mut cols = self.columns_of(node);
        cols.resize(node.width, Col::Expr("?column?".into()));
        cols
    }

    fn columns_of(&self, node: &PlanNode) -> Vec<Col> {
        if let Some(rte) = &node.rte {
            return rte
                .columns
                .iter()
                .map(|c| Col::Var {
                    rel: rte.alias.clone(),
                    name: c.clone(),
                })
                .collect();
        }
        let of = |e: &Expr, input: &[Col]| match e {
            Expr::Column(i) | Expr::Agg(i) => input
                .get(*i)
                .cloned()
                .unwrap_or_else(|| Col::Expr("?column?".into())),
            e => Col::Expr(self.expr(e, input, self.prefix)),
        };
        match &node.kind {
            NodeKind::SeqScan { table, .. } | NodeKind::IndexScan { table, .. } => table
                .columns
                .iter()
                .map(|c| Col::Var {
                    rel: table.name.clone(),
                    name: c.name.clone(),
                })
                .collect(),
            NodeKind::Filter { input, .. }
            | NodeKind::Gather { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Unique { input, .. }
            | NodeKind::HashDistinct { input, .. }
            | NodeKind::Limit { input, .. } => self.columns(input),
            NodeKind::Ordinality { input } => {
                let mut c = self.columns(input);
                c.push(Col::Expr("ordinality".into()));
                c
            }
            NodeKind::Zip { inputs } => inputs.iter().flat_map(|i| self.columns(i)).collect(),
            NodeKind::Project { input, exprs } => {
                let input = self.columns(input);
                exprs.iter().map(|e| of(e, &input)).collect()
            }
            NodeKind::NestLoop {
                outer, inner, kind, ..
            }
            | NodeKind::HashJoin {
                outer, inner, kind, ..
            }
            | NodeKind::MergeJoin {
                outer, inner, kind, ..
            } => {
                let mut c = self.columns(outer);
                if !kind.outer_only() {
                    c.extend(self.columns(inner));
                }
                c
            }
            NodeKind::Agg { grouping, .. } => {
                let input = node.agg_input().map_or_else(Vec::new, |i| self.columns(i));
                let mut c: Vec<Col> = grouping.group_by.iter().map(|e| of(e, &input)).collect();
                c.extend(
                    grouping
                        .aggs
                        .iter()
                        .map(|a| Col::Expr(self.agg(a, &input, self.prefix))),
                );
                for call in &grouping.grouping_calls {
                    let args: Vec<String> = call
                        .iter()
                        .filter_map(|k| grouping.group_by.get(*k))
                        .map(|e| self.expr(e, &input, self.prefix))
                        .collect();
                    c.push(Col::Expr(format!("GROUPING({})", args.join(", "))));
                }
                c
            }
            NodeKind::WindowAgg { input, funcs, .. } => {
                let mut c = self.columns(input);
                let input = c.clone();
                for w in funcs {
                    let (name, args) = match &w.func {
                        crate::expr::window::WinFunc::Agg(a) => {
                            let t = self.agg(a, &input, self.prefix);
                            c.push(Col::Expr(format!("{t} OVER (?)")));
                            continue;
                        }
                        f => (win_name(f), &w.args),
                    };
                    let args: Vec<String> = args
                        .iter()
                        .map(|a| self.expr(a, &input, self.prefix))
                        .collect();
                    c.push(Col::Expr(format!("{name}({}) OVER (?)", args.join(", "))));
                }
                c
            }
            NodeKind::Append { inputs } => {
                inputs.first().map(|i| self.columns(i)).unwrap_or_default()
            }
            NodeKind::SetOp { left, .. } => self.columns(left),
            NodeKind::RecursiveUnion { nonrec, .. } => self.columns(nonrec),
            _ => Vec::new(),
        }
    }

    /// `e`, reading a row named by `cols`; `prefix`: qualify columns.
    pub fn expr(&self, e: &Expr, cols: &[Col], prefix: bool) -> String {
        let x = |e: &Expr| self.expr(e, cols, prefix);
        match e {
            Expr::Const(v) => const_text(v),
            Expr::Column(i) | Expr::Agg(i) => match cols.get(*i) {
                Some(c) => c.text(prefix),
                None => "?column?".into(),
            },
            Expr::Param(i) => format!("${}", i + 1),
            Expr::ExecParam(s) => match self.params.get(s) {
                Some(t) => t.clone(),
                None => format!("${s}"),
            },
            Expr::Unary { op, arg } => match op {
                UnaryOp::Neg => format!("(- {})", x(arg)),
                UnaryOp::Not => format!("(NOT {})", x(arg)),
            },
            Expr::Binary { op, left, right } => match op {
                BinOp::And | BinOp::Or => {
                    let mut items = Vec::new();
                    flatten(e, *op, &mut items);
                    let sep = if *op == BinOp::And { " AND " } else { " OR " };
                    let parts: Vec<String> = items.into_iter().map(x).collect();
                    format!("({})", parts.join(sep))
                }
                BinOp::IsDistinctFrom => format!("({} IS DISTINCT FROM {})", x(left), x(right)),
                BinOp::IsNotDistinctFrom => {
                    format!("(NOT ({} IS DISTINCT FROM {}))", x(left), x(right))
                }
                op => format!("({} {} {})", x(left), op_symbol(*op), x(right)),
            },
            Expr::Func { func, args } => self.func(*func, args, cols, prefix),
            Expr::Cast { arg, to, .. } => {
                let ty = type_name(*to);
                match arg.as_ref() {
                    Expr::Const(v) if !v.is_null() => {
                        format!("{}::{ty}", quote_literal(&v.to_text_string()))
                    }
                    a => format!("({})::{ty}", x(a)),
                }
            }
            Expr::IsNull { arg, negated } => {
                let not = if *negated { " NOT" } else { "" };
                format!("({} IS{not} NULL)", x(arg))
            }
            Expr::IsBool {
                arg,
                value,
                negated,
            } => {
                let not = if *negated { " NOT" } else { "" };
                let v = if *value { "TRUE" } else { "FALSE" };
                format!("({} IS{not} {v})", x(arg))
            }
            Expr::InList { arg, list, negated } => {
                let (op, q) = if *negated {
                    ("<>", "ALL")
                } else {
                    ("=", "ANY")
                };
                format!(
                    "({} {op} {q} ({}))",
                    x(arg),
                    self.array_text(list, cols, prefix)
                )
            }
            Expr::Between {
                arg,
                low,
                high,
                negated,
            } => {
                let (a, l, h) = (x(arg), x(low), x(high));
                if *negated {
                    format!("(({a} < {l}) OR ({a} > {h}))")
                } else {
                    format!("(({a} >= {l}) AND ({a} <= {h}))")
                }
            }
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => {
                let op = match (negated, case_insensitive) {
                    (false, false) => "~~",
                    (true, false) => "!~~",
                    (false, true) => "~~*",
                    (true, true) => "!~~*",
                };
                format!("({} {op} {})", x(arg), x(pattern))
            }
            Expr::Case {
                operand,
                whens,
                else_result,
            } => {
                let mut s = String::from("CASE");
                if let Some(o) = operand {
                    s.push_str(&format!(" {}", x(o)));
                }
                for (c, r) in whens {
                    s.push_str(&format!(" WHEN {} THEN {}", x(c), x(r)));
                }
                if let Some(e) = else_result {
                    s.push_str(&format!(" ELSE {}", x(e)));
                }
                s.push_str(" END");
                s
            }
            Expr::WindowFunc(_) | Expr::GroupingFunc(_) => "?column?".into(),
            Expr::SubPlan(sp) => {
                let def = self.shared.and_then(|s| s.subplans.get(sp.id));
                let hashed = def.is_some_and(|d| d.hashable && d.slots.is_empty());
                // PostgreSQL 15 prints an ANY / ALL sublink as the subplan
                // alone too: its test lives inside it.
                let name = format!("SubPlan {}", sp.id + 1);
                if hashed {
                    format!("(hashed {name})")
                } else {
                    format!("({name})")
                }
            }
        }
    }

    /// An IN list: an array constant when every item is a constant
    /// (`'{1,2}'::integer[]`), else `ARRAY[a, b]`.
    fn array_text(&self, list: &[Expr], cols: &[Col], prefix: bool) -> String {
        let consts: Option<Vec<&Value>> = list
            .iter()
            .map(|e| match e {
                Expr::Const(v) => Some(v),
                _ => None,
            })
            .collect();
        if let Some(vals) = consts.filter(|v| !v.is_empty()) {
            let ty = vals.iter().find(|v| !v.is_null()).map(|v| v.sql_type());
            if let Some(ty) = ty {
                let items: Vec<String> = vals
                    .iter()
                    .map(|v| {
                        if v.is_null() {
                            "NULL".to_string()
                        } else {
                            array_item(&v.to_text_string())
                        }
                    })
                    .collect();
                let text = format!("{{{}}}", items.join(","));
                return format!("{}::{}[]", quote_literal(&text), type_name(ty));
            }
        }
        let items: Vec<String> = list.iter().map(|e| self.expr(e, cols, prefix)).collect();
        format!("ARRAY[{}]", items.join(", "))
    }

    fn func(&self, func: Func, args: &[Expr], cols: &[Col], prefix: bool) -> String {
        let a: Vec<String> = args.iter().map(|e| self.expr(e, cols, prefix)).collect();
        if let Func::RegexMatch { icase, negated } = func {
            let op = match (negated, icase) {
                (false, false) => "~",
                (false, true) => "~*",
                (true, false) => "!~",
                (true, true) => "!~*",
            };
            if let [l, r] = a.as_slice() {
                return format!("({l} {op} {r})");
            }
        }
        format!("{}({})", func_name(func), a.join(", "))
    }

    /// An aggregate call as PostgreSQL prints it: `count(*)`,
    /// `sum(DISTINCT x)`, `string_agg(x, ','::text ORDER BY y)`,
    /// `count(*) FILTER (WHERE (x > 1))`.
    pub fn agg(&self, a: &AggCall, cols: &[Col], prefix: bool) -> String {
        let x = |e: &Expr| self.expr(e, cols, prefix);
        if a.func.is_ordered_set() {
            // `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`.
            let direct: Vec<String> = a.extra_args.iter().map(x).collect();
            let keys: Vec<String> = a
                .order_by
                .iter()
                .map(|o| format!("{}{}", x(&o.expr), order_suffix(o.desc, o.nulls_first)))
                .collect();
            let mut s = format!(
                "{}({}) WITHIN GROUP (ORDER BY {})",
                a.func.name(),
                direct.join(", "),
                keys.join(", ")
            );
            if let Some(f) = &a.filter {
                s.push_str(&format!(" FILTER (WHERE {})", x(f)));
            }
            return s;
        }
        let mut args: Vec<String> = a.arg.iter().map(x).collect();
        args.extend(a.extra_args.iter().map(x));
        let mut s = format!("{}(", a.func.name());
        if a.distinct {
            s.push_str("DISTINCT ");
        }
        if args.is_empty() {
            s.push('*');
        } else {
            s.push_str(&args.join(", "));
        }
        if !a.order_by.is_empty() {
            let keys: Vec<String> = a
                .order_by
                .iter()
                .map(|o| format!("{}{}", x(&o.expr), order_suffix(o.desc, o.nulls_first)))
                .collect();
            s.push_str(&format!(" ORDER BY {}", keys.join(", ")));
        }
        s.push(')');
        if let Some(f) = &a.filter {
            s.push_str(&format!(" FILTER (WHERE {})", x(f)));
        }
        s
    }
}

/// The number of FROM items the tree reads (PostgreSQL's range table
/// size, near enough: it also counts join entries).
fn count_rels(node: &PlanNode, n: &mut usize) {
    if node.rte.is_some()
        || matches!(
            node.kind,
            NodeKind::SeqScan { .. } | NodeKind::IndexScan { .. }
        )
    {
        *n += 1;
    }
    for c in node.children() {
        count_rels(c, n);
    }
}

fn flatten<'e>(e: &'e Expr, op: BinOp, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Binary { op: o, left, right } if *o == op => {
            flatten(left, op, out);
            flatten(right, op, out);
        }
        other => out.push(other),
    }
}

/// ` DESC`, ` NULLS FIRST` … as a sort key's options print (the defaults
/// left out).
pub fn order_suffix(desc: bool, nulls_first: bool) -> &'static str {
    match (desc, nulls_first) {
        (false, false) => "",
        (false, true) => " NULLS FIRST",
        (true, true) => " DESC",
        (true, false) => " DESC NULLS LAST",
    }
}

/// An operator as the deparser prints it (the binder's symbols; the
/// DISTINCT tests are words).
fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom => "IS DISTINCT FROM",
        op => crate::expr::op_symbol(op),
    }
}

/// A type's name in a cast or a constant's label (`integer`, `text`,
/// `date`, `character varying`).
fn type_name(t: SqlType) -> String {
    let t = match t {
        SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Numeric(_) => t,
        t => t.base(),
    };
    crate::pgcatalog::functions::format_type(t.oid(), t.typmod())
}

fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// An element of an array literal, quoted when it must be.
fn array_item(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.eq_ignore_ascii_case("null")
        && !s
            .chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// A constant as PostgreSQL's deparser prints it (`get_const_expr`):
/// a non-negative int4 and a float-looking numeric bare, a Boolean as
/// `true` / `false`, anything else quoted with its type (`'abc'::text`,
/// `'-5'::integer`, `'10'::bigint`, `'2020-01-01'::date`), NULL as
/// `NULL::type`.
pub fn const_text(v: &Value) -> String {
    if v.is_null() {
        return "NULL".into();
    }
    let t = v.to_text_string();
    match v {
        Value::Int4(n) if *n >= 0 => t,
        Value::Bool(b) => b.to_string(),
        Value::Numeric(_) if t.starts_with(|c: char| c.is_ascii_digit()) && t.contains('.') => t,
        _ => format!("{}::{}", quote_literal(&t), type_name(v.sql_type())),
    }
}

fn win_name(f: &crate::expr::window::WinFunc) -> &'static str {
    use crate::expr::window::WinFunc as W;
    match f {
        W::RowNumber => "row_number",
        W::Rank => "rank",
        W::DenseRank => "dense_rank",
        W::PercentRank => "percent_rank",
        W::CumeDist => "cume_dist",
        W::Ntile => "ntile",
        W::Lag => "lag",
        W::Lead => "lead",
        W::FirstValue => "first_value",
        W::LastValue => "last_value",
        W::NthValue => "nth_value",
        W::Agg(a) => a.func.name(),
    }
}

/// The SQL name of a built-in function: PostgreSQL's for the common
/// ones, else the variant's name in snake case.
pub(super) fn func_name(f: Func) -> String {
    let known = match f {
        Func::Length => "length",
        Func::LengthBpchar => "length",
        Func::OctetLength => "octet_length",
        Func::Repeat => "repeat",
        Func::Upper => "upper",
        Func::Lower => "lower",
        Func::Substr2 | Func::Substr3 => "substr",
        Func::Concat => "concat",
        Func::Btrim => "btrim",
        Func::Ltrim => "ltrim",
        Func::Rtrim => "rtrim",
        Func::Replace => "replace",
        Func::Strpos => "strpos",
        Func::Left => "\"left\"",
        Func::Right => "\"right\"",
        Func::Abs => "abs",
        Func::Coalesce => "COALESCE",
        Func::Nullif => "NULLIF",
        Func::Greatest => "GREATEST",
        Func::Least => "LEAST",
        Func::Round => "round",
        Func::Floor => "floor",
        Func::Ceil => "ceil",
        Func::Trunc => "trunc",
        Func::Sqrt => "sqrt",
        Func::Mod => "mod",
        Func::Random => "random",
        Func::Now => "now",
        Func::Version => "version",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    let debug = format!("{f:?}");
    let variant: String = debug
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let mut out = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(rel: &str, name: &str) -> Col {
        Col::Var {
            rel: rel.into(),
            name: name.into(),
        }
    }

    #[test]
    fn constants_print_as_postgres_labels_them() {
        assert_eq!(const_text(&Value::Int4(10)), "10");
        assert_eq!(const_text(&Value::Int4(-5)), "'-5'::integer");
        assert_eq!(const_text(&Value::Int8(10)), "'10'::bigint");
        assert_eq!(const_text(&Value::text("it's")), "'it''s'::text");
        assert_eq!(const_text(&Value::Bool(true)), "true");
        assert_eq!(const_text(&Value::Null), "NULL");
    }

    #[test]
    fn operators_are_parenthesised_and_columns_qualified() {
        let d = Deparser {
            shared: None,
            prefix: true,
            params: HashMap::new(),
        };
        let cols = [
            col("a", "id"),
            col("a", "owner"),
            Col::Expr("count(o.id)".into()),
        ];
        let e = Expr::Binary {
            op: BinOp::And,
            left: Box::new(Expr::Binary {
                op: BinOp::Gt,
                left: Box::new(Expr::Column(0)),
                right: Box::new(Expr::Const(Value::Int4(1))),
            }),
            right: Box::new(Expr::Binary {
                op: BinOp::Eq,
                left: Box::new(Expr::Column(1)),
                right: Box::new(Expr::Const(Value::text("x"))),
            }),
        };
        assert_eq!(
            d.expr(&e, &cols, true),
            "((a.id > 1) AND (a.owner = 'x'::text))"
        );
        assert_eq!(
            d.expr(&e, &cols, false),
            "((id > 1) AND (owner = 'x'::text))"
        );
        let gt = Expr::Binary {
            op: BinOp::Gt,
            left: Box::new(Expr::Column(2)),
            right: Box::new(Expr::Const(Value::Int8(1))),
        };
        assert_eq!(d.expr(&gt, &cols, true), "((count(o.id)) > '1'::bigint)");
        let inl = Expr::InList {
            arg: Box::new(Expr::Column(0)),
            list: vec![Expr::Const(Value::Int4(1)), Expr::Const(Value::Int4(2))],
            negated: false,
        };
        assert_eq!(
            d.expr(&inl, &cols, false),
            "(id = ANY ('{1,2}'::integer[]))"
        );
        assert_eq!(func_name(Func::PgBackendPid), "pg_backend_pid");
    }
}
