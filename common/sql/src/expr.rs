//! Bound expressions: binding sqlparser's AST against a scope of columns and
//! a set of parameters (PostgreSQL's parse analysis, `parse_expr.c` /
//! `parse_oper.c` / `parse_coerce.c` in miniature), and evaluating the result
//! (`execExprInterp.c`).
//!
//! ```text
//!  ast::Expr ──bind_expr──▶ BoundExpr { expr: Expr, ty: SqlType } ──eval──▶ Value
//!               │  Scope: columns (table qualifier, name, type) → Column(i)
//!               │  ParamTypes: $n types, given by the client or inferred
//!               └  Grouping: aggregates → Agg(i), GROUP BY keys (finalize)
//! ```
//!
//! Typing follows PostgreSQL where pgbench, psql and the TAP tests can see it:
//! * Literals: integers are int4, else int8, else numeric; decimals are
//!   numeric; strings are `unknown` until context gives them a type (then
//!   they are parsed with that type's input function, at bind time, so
//!   `1 + 'a'` fails with 22P02 like PostgreSQL). `-<literal>` is folded.
//! * Parameters: a client-given OID fixes the type; otherwise the first
//!   context fixes it (`aid = $1` → int4, `$1 + 1` → int4, `name = $1` →
//!   varchar, `$1::int8` → int8, function arguments); unresolved ones are text.
//! * Operators: numerics promote int2 < int4 < int8 < numeric < float8;
//!   comparisons across numeric types need no cast (`cmp_sql` compares int4
//!   with int8 exactly, so `int4col = $1::int8` keeps the shape an index
//!   lookup recognises, see [`Expr::as_column_eq`]); `||` takes text and any
//!   type; char(n) compares without trailing spaces. No match: 42883
//!   `operator does not exist: integer = text`.
//! * Assignment (INSERT/UPDATE targets, [`bind_assign`]) allows PostgreSQL's
//!   assignment casts (int8 → int4 with a range check, numeric → int,
//!   anything → text) and applies varchar(n)/char(n)/numeric(p,s).
//!
//! Evaluation is a tree walk over `&[Value]` rows with three-valued logic.
//! Operands that are columns, parameters or constants are borrowed, not
//! cloned, so `aid = $1` and integer arithmetic allocate nothing. Overflow is
//! 22003 ("integer out of range"), division by zero 22012. Constant
//! subexpressions are folded at bind time. Session-dependent functions go
//! through [`EvalContext`].

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use sqlparser::ast;

use crate::functions::{self, AggFunc, Func};
use crate::pgcatalog::functions::CatFunc;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::numeric::Numeric;
use pgtypes::sqltype::SqlType;
use pgtypes::value::{self, CastMode, Value};
use pgtypes::Oid;

pub mod window;

pub use crate::functions::{EvalContext, StaticContext, WalLsnKind};

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `NOT x`
    Not,
}

/// Binary operators (operand types were unified by the binder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-` (also pg_lsn - pg_lsn → numeric)
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates)
    Div,
    /// `%`
    Mod,
    /// `||`
    Concat,
    /// `=`
    Eq,
    /// `<>` / `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND` (three-valued)
    And,
    /// `OR` (three-valued)
    Or,
    /// `IS DISTINCT FROM`
    IsDistinctFrom,
    /// `IS NOT DISTINCT FROM`
    IsNotDistinctFrom,
}

/// A bound expression tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// A column of the input row, by position in the [`Scope`].
    Column(usize),
    /// A parameter, 0-based (`$1` is `Param(0)`).
    Param(usize),
    /// A unary operator.
    Unary {
        /// Operator.
        op: UnaryOp,
        /// Operand.
        arg: Box<Expr>,
    },
    /// A binary operator.
    Binary {
        /// Operator.
        op: BinOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// A built-in function call.
    Func {
        /// The function.
        func: Func,
        /// Arguments, already of the signature's types.
        args: Vec<Expr>,
    },
    /// A cast.
    Cast {
        /// Operand.
        arg: Box<Expr>,
        /// Target type.
        to: SqlType,
        /// Explicit or assignment semantics.
        mode: CastMode,
    },
    /// `x IS [NOT] NULL`
    IsNull {
        /// Operand.
        arg: Box<Expr>,
        /// IS NOT NULL.
        negated: bool,
    },
    /// `x IS [NOT] TRUE/FALSE`
    IsBool {
        /// Operand.
        arg: Box<Expr>,
        /// TRUE or FALSE.
        value: bool,
        /// IS NOT.
        negated: bool,
    },
    /// `x [NOT] IN (a, b, …)`
    InList {
        /// Operand.
        arg: Box<Expr>,
        /// Candidates.
        list: Vec<Expr>,
        /// NOT IN.
        negated: bool,
    },
    /// `x [NOT] BETWEEN low AND high`
    Between {
        /// Operand.
        arg: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// NOT BETWEEN.
        negated: bool,
    },
    /// `x [NOT] [I]LIKE pattern`
    Like {
        /// Operand.
        arg: Box<Expr>,
        /// Pattern (`%`, `_`, `\` escapes).
        pattern: Box<Expr>,
        /// NOT LIKE.
        negated: bool,
        /// ILIKE.
        case_insensitive: bool,
    },
    /// `CASE [operand] WHEN … THEN … [ELSE …] END`
    Case {
        /// The simple-CASE operand.
        operand: Option<Box<Expr>>,
        /// (condition or comparand, result) pairs.
        whens: Vec<(Expr, Expr)>,
        /// ELSE result (NULL if absent).
        else_result: Option<Box<Expr>>,
    },
    /// An aggregate's result or a group key in a grouped query: reads
    /// `row[i]` of the post-aggregation row (see [`Grouping`]).
    Agg(usize),
    /// A window function's result while binding (index into
    /// [`Grouping::windows`]); the planner turns it into the column its
    /// WindowAgg node appends.
    WindowFunc(usize),
    /// A `grouping(…)` call while binding (index into
    /// [`Grouping::grouping_calls`]); finalized to the Agg node's column.
    GroupingFunc(usize),
    /// An executor parameter: a correlated outer column of a subquery or
    /// a nested loop's join key, set by the node that owns the slot.
    ExecParam(usize),
    /// A subquery used as an expression (EXISTS, scalar, ANY/ALL).
    SubPlan(Box<SubPlanExpr>),
}

/// What kind of subquery a [`SubPlanExpr`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubLinkKind {
    /// `EXISTS (…)`
    Exists,
    /// `(SELECT x …)`: NULL for no row, 21000 for more than one.
    Scalar,
    /// `ARRAY(SELECT x …)`: every row's value, in order, as an array of
    /// this element type.
    Array(pgtypes::sqltype::ArrayElem),
    /// `lhs op ANY (…)`, `lhs IN (…)`.
    Any,
    /// `lhs op ALL (…)`.
    All,
}

/// A subquery in an expression: which subplan of the statement, the
/// values of its correlation parameters, and the left operand of ANY/ALL.
#[derive(Clone, Debug, PartialEq)]
pub struct SubPlanExpr {
    /// Index into the statement's subplans.
    pub id: usize,
    /// Its kind.
    pub kind: SubLinkKind,
    /// One expression per correlation parameter, over the current row.
    pub args: Vec<Expr>,
    /// ANY/ALL: the left operand.
    pub lhs: Option<Box<Expr>>,
}

/// How a binder reaches the planner for what it cannot bind alone: names
/// of an enclosing query (correlation) and subqueries.
pub trait SublinkHook {
    /// A column of an enclosing query, as an expression valid here (an
    /// [`Expr::ExecParam`]); None if no enclosing query has it.
    fn outer_column(&mut self, qualifier: Option<&str>, name: &str) -> Option<PgResult<BoundExpr>>;
    /// Plans a subquery used as an expression.
    fn sublink(&mut self, link: Sublink<'_>, params: &mut ParamTypes) -> PgResult<BoundExpr>;
}

/// A subquery found while binding.
pub enum Sublink<'q> {
    /// `EXISTS (q)`
    Exists(&'q ast::Query),
    /// `(q)`
    Scalar(&'q ast::Query),
    /// `ARRAY(q)`
    Array(&'q ast::Query),
    /// `lhs op ANY (q)` (`IN` is `= ANY`); `all` for ALL.
    Compare {
        /// Left operand, bound.
        lhs: BoundExpr,
        /// Comparison operator.
        op: BinOp,
        /// ALL rather than ANY.
        all: bool,
        /// The subquery.
        query: &'q ast::Query,
    },
}

/// An expression with its result type.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundExpr {
    /// The tree.
    pub expr: Expr,
    /// Its type (`Unknown` for an uncoerced string literal or parameter).
    pub ty: SqlType,
}

/// One column visible to an expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeColumn {
    /// Table name or alias that qualifies it (`t` in `t.col`), if any.
    pub table: Option<String>,
    /// Column name (lower case unless it was quoted).
    pub name: String,
    /// Column type.
    pub ty: SqlType,
    /// Reachable only as `table.name` (a USING / NATURAL column of one
    /// side of a join: the unqualified name means the merged column).
    pub qualified_only: bool,
    /// The one column of a scalar set-returning function, which its
    /// FROM alias also names (PostgreSQL's whole-row reference to a
    /// function returning a scalar: `jsonb_array_elements(x) AS e` … `e`).
    pub whole_row: bool,
}

/// The columns an expression may reference; `Expr::Column(i)` is `columns[i]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// Visible columns, in row order.
    pub columns: Vec<ScopeColumn>,
    /// The relation OID of each table or catalog in FROM, by the name that
    /// qualifies it: the value of its `tableoid` system column.
    pub rel_oids: Vec<(String, u32)>,
}

impl Scope {
    /// An empty scope (SELECT without FROM).
    pub fn new() -> Scope {
        Scope::default()
    }

    /// A scope of one table's columns, qualified by `table` (name or alias).
    pub fn for_table(table: &str, columns: &[(String, SqlType)]) -> Scope {
        Scope {
            columns: columns
                .iter()
                .map(|(n, t)| ScopeColumn {
                    table: Some(table.to_string()),
                    name: n.clone(),
                    ty: *t,
                    qualified_only: false,
                    whole_row: false,
                })
                .collect(),
            rel_oids: Vec::new(),
        }
    }

    /// The `tableoid` system column: the OID of the relation `qualifier`
    /// names, or of the one relation in FROM when unqualified (42702 when
    /// there are several). None when no relation answers.
    pub fn tableoid(&self, qualifier: Option<&str>) -> PgResult<Option<u32>> {
        let mut hits = self
            .rel_oids
            .iter()
            .filter(|(q, _)| qualifier.is_none_or(|w| w == q));
        let first = hits.next().map(|(_, o)| *o);
        if first.is_some() && hits.next().is_some() {
            return Err(PgError::new(
                sqlstate::AMBIGUOUS_COLUMN,
                "column reference \"tableoid\" is ambiguous",
            ));
        }
        Ok(first)
    }

    /// Adds a column.
    pub fn push(&mut self, table: Option<&str>, name: &str, ty: SqlType) {
        self.columns.push(ScopeColumn {
            table: table.map(str::to_string),
            name: name.to_string(),
            ty,
            qualified_only: false,
            whole_row: false,
        });
    }

    /// Finds `name` (optionally qualified): 42703 `column "x" does not exist`
    /// (`column t.x does not exist` when qualified), 42702 `column reference
    /// "x" is ambiguous`.
    pub fn resolve(&self, qualifier: Option<&str>, name: &str) -> PgResult<usize> {
        let mut found = None;
        for (i, c) in self.columns.iter().enumerate() {
            if c.name != name {
                continue;
            }
            if let Some(q) = qualifier {
                if c.table.as_deref() != Some(q) {
                    continue;
                }
            } else if c.qualified_only {
                continue;
            }
            if found.is_some() {
                return Err(PgError::new(
                    sqlstate::AMBIGUOUS_COLUMN,
                    format!("column reference \"{}\" is ambiguous", name),
                ));
            }
            found = Some(i);
        }
        if found.is_none() && qualifier.is_none() {
            found = self
                .columns
                .iter()
                .position(|c| c.whole_row && c.table.as_deref() == Some(name));
        }
        found.ok_or_else(|| match qualifier {
            Some(q) if !self.columns.iter().any(|c| c.table.as_deref() == Some(q)) => PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("missing FROM-clause entry for table \"{}\"", q),
            ),
            Some(q) => PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column {}.{} does not exist", q, name),
            ),
            None => PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{}\" does not exist", name),
            ),
        })
    }
}

/// Parameter types of a statement: given by the client (Parse OIDs) or
/// inferred from context while binding.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamTypes {
    types: Vec<Option<SqlType>>,
}

impl ParamTypes {
    /// No parameters known yet (all inferred).
    pub fn new() -> ParamTypes {
        ParamTypes::default()
    }

    /// From Parse's OIDs: 0 (and 705 unknown) means "infer"; an unknown OID
    /// is 42704 `type with OID n does not exist`.
    pub fn from_oids(oids: &[Oid]) -> PgResult<ParamTypes> {
        let mut types = Vec::with_capacity(oids.len());
        for &o in oids {
            types.push(match o {
                0 | 705 => None,
                o => Some(SqlType::from_oid(o).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("type with OID {} does not exist", o),
                    )
                })?),
            });
        }
        Ok(ParamTypes { types })
    }

    /// The known type of `$idx+1`, if fixed or inferred so far.
    pub fn get(&self, idx: usize) -> Option<SqlType> {
        self.types.get(idx).copied().flatten()
    }

    /// Records the type of `$idx+1` (first inference wins).
    pub fn set(&mut self, idx: usize, ty: SqlType) {
        if self.types.len() <= idx {
            self.types.resize(idx + 1, None);
        }
        if self.types[idx].is_none() {
            self.types[idx] = Some(ty);
        }
    }

    /// Makes sure `$idx+1` is counted (referenced but maybe untyped).
    pub fn note(&mut self, idx: usize) {
        if self.types.len() <= idx {
            self.types.resize(idx + 1, None);
        }
    }

    /// Number of parameters ($n referenced or given).
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Final types for ParameterDescription and decoding: unresolved → text.
    pub fn finish(&self) -> Vec<SqlType> {
        self.types
            .iter()
            .map(|t| t.unwrap_or(SqlType::Text))
            .collect()
    }
}

/// One aggregate call collected while binding a grouped query.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    /// The aggregate.
    pub func: AggFunc,
    /// Its argument over the input row (None for count(*)).
    pub arg: Option<Expr>,
    /// Argument type.
    pub arg_ty: SqlType,
    /// `agg(DISTINCT x)`.
    pub distinct: bool,
    /// Result type.
    pub ty: SqlType,
    /// Arguments after the first (string_agg's delimiter), over the input row.
    pub extra_args: Vec<Expr>,
    /// `FILTER (WHERE …)` over the input row: rows where it is not true are
    /// not fed to the aggregate.
    pub filter: Option<Expr>,
    /// `agg(x ORDER BY …)`: the order inputs are fed in.
    pub order_by: Vec<AggOrder>,
}

/// One ORDER BY key inside an aggregate call.
#[derive(Clone, Debug, PartialEq)]
pub struct AggOrder {
    /// The key over the input row.
    pub expr: Expr,
    /// DESC.
    pub desc: bool,
    /// NULLS FIRST (default: last for ASC, first for DESC).
    pub nulls_first: bool,
}

impl AggCall {
    /// A call fed its argument alone: no FILTER, no further arguments, no
    /// ORDER BY, not DISTINCT (the executor feeds it without building an
    /// [`functions::AggInput`]).
    pub fn is_plain(&self) -> bool {
        self.filter.is_none()
            && self.extra_args.is_empty()
            && self.order_by.is_empty()
            && !self.distinct
    }

    /// Evaluates this call's inputs for one input row with `eval`: None
    /// when the FILTER rejects the row. The executor feeds the result to
    /// [`functions::Accumulator::feed`] (after its DISTINCT check on `value`).
    pub fn inputs(
        &self,
        eval: &mut dyn FnMut(&Expr) -> PgResult<Value>,
    ) -> PgResult<Option<functions::AggInput>> {
        if let Some(f) = &self.filter {
            if eval(f)? != Value::Bool(true) {
                return Ok(None);
            }
        }
        let value = match &self.arg {
            Some(e) => eval(e)?,
            None => Value::Null,
        };
        let extra = self
            .extra_args
            .iter()
            .map(&mut *eval)
            .collect::<PgResult<Vec<_>>>()?;
        let keys = self
            .order_by
            .iter()
            .map(|o| eval(&o.expr))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(Some(functions::AggInput { value, extra, keys }))
    }

    /// Every expression of the call (argument, extra arguments, FILTER,
    /// ORDER BY keys), for walks over a plan.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.arg
            .iter()
            .chain(self.extra_args.iter())
            .chain(self.filter.iter())
            .chain(self.order_by.iter().map(|o| &o.expr))
    }
}

/// Aggregation state of a SELECT being bound: the GROUP BY keys (bound
/// over the input scope) and the aggregates found so far.
///
/// The post-aggregation row the executor builds for each group is
/// `[key_0 … key_{k-1}, agg_0 … agg_{n-1}]`; finalized expressions read it
/// through [`Expr::Agg`] (`Agg(j)` = key j, `Agg(k + i)` = aggregate i).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grouping {
    /// GROUP BY keys over the input row.
    pub group_by: Vec<Expr>,
    /// Aggregate calls over the input row.
    pub aggs: Vec<AggCall>,
    /// GROUPING SETS / ROLLUP / CUBE: each set lists the indexes of the
    /// `group_by` keys it groups by (None: one set of every key).
    pub sets: Option<Vec<Vec<usize>>>,
    /// `grouping(…)` calls: the `group_by` indexes of their arguments. The
    /// Agg node appends one column per call after the aggregates.
    pub grouping_calls: Vec<Vec<usize>>,
    /// Window function calls found while binding (taken out by the
    /// planner before the Agg node is built).
    pub windows: Vec<window::WindowCall>,
    /// The query's WINDOW clause, for `OVER w` and `OVER (w …)`.
    pub named_windows: Vec<(String, ast::WindowSpec)>,
    /// Binding HAVING / GROUP BY: window functions are not allowed.
    pub no_windows: Option<&'static str>,
}

impl Grouping {
    /// A grouping with these keys (empty for a plain aggregate query).
    pub fn new(group_by: Vec<Expr>) -> Grouping {
        Grouping {
            group_by,
            ..Default::default()
        }
    }

    /// True if the query aggregates (has aggregates or GROUP BY).
    pub fn is_grouped(&self) -> bool {
        !self.group_by.is_empty() || !self.aggs.is_empty() || self.sets.is_some()
    }

    /// Rewrites an expression bound by [`bind_expr_agg`] to read the
    /// post-aggregation row: group-key subtrees → `Agg(j)`, aggregate
    /// placeholders → `Agg(k + i)`; any other column reference is 42803
    /// `column "t.x" must appear in the GROUP BY clause or be used in an
    /// aggregate function`.
    pub fn finalize(&self, expr: Expr, scope: &Scope) -> PgResult<Expr> {
        let k = self.group_by.len();
        if let Some(j) = self.group_by.iter().position(|g| *g == expr) {
            return Ok(Expr::Agg(j));
        }
        match expr {
            Expr::Agg(i) => Ok(Expr::Agg(k + i)),
            Expr::GroupingFunc(i) => Ok(Expr::Agg(k + self.aggs.len() + i)),
            Expr::Column(c) => {
                let name = match scope.columns.get(c) {
                    Some(ScopeColumn {
                        table: Some(t),
                        name,
                        ..
                    }) => format!("{t}.{name}"),
                    Some(col) => col.name.clone(),
                    None => format!("#{c}"),
                };
                Err(PgError::new(
                    sqlstate::GROUPING_ERROR,
                    format!("column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"),
                ))
            }
            other => other.map_children(&mut |e| self.finalize(e, scope)),
        }
    }
}

/// Binding state for one expression.
struct Binder<'a> {
    scope: &'a Scope,
    params: &'a mut ParamTypes,
    grouping: Option<&'a mut Grouping>,
    /// Inside an aggregate's argument (nested aggregates are an error).
    in_agg: bool,
    /// Inside a window function's arguments or window definition.
    in_window: bool,
    /// Inside a window definition (PARTITION BY, ORDER BY, frame).
    in_window_def: bool,
    /// Subqueries and outer references (None: both are 0A000 / 42703).
    hook: Option<&'a mut dyn SublinkHook>,
}

fn unsupported_expr(what: &str) -> PgError {
    PgError::unsupported(format!("{what} is not supported"))
}

fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

fn no_operator(op: &str, l: SqlType, r: SqlType) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_FUNCTION,
        format!("operator does not exist: {} {} {}", l.pg_base_name(), op, r.pg_base_name()),
    )
    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
}

/// The symbol of a binary operator (`=` for the DISTINCT tests, as the
/// error messages name their operator).
pub(crate) fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::Concat => "||",
        BinOp::Eq | BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom => "=",
        BinOp::NotEq => "<>",
        BinOp::Lt => "<",
        BinOp::LtEq => "<=",
        BinOp::Gt => ">",
        BinOp::GtEq => ">=",
        BinOp::And => "AND",
        BinOp::Or => "OR",
    }
}

/// Parses a numeric literal as PostgreSQL types it: int4, else int8, else numeric.
fn number_literal(s: &str) -> PgResult<BoundExpr> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        if let Ok(v) = s.parse::<i32>() {
            return Ok(BoundExpr {
                expr: Expr::Const(Value::Int4(v)),
                ty: SqlType::Int4,
            });
        }
        if let Ok(v) = s.parse::<i64>() {
            return Ok(BoundExpr {
                expr: Expr::Const(Value::Int8(v)),
                ty: SqlType::Int8,
            });
        }
    }
    match Numeric::parse(s) {
        Some(Ok(n)) => Ok(BoundExpr {
            expr: Expr::Const(Value::Numeric(n)),
            ty: SqlType::NUMERIC,
        }),
        // Beyond our numeric's 38 digits (e.g. 1e308): keep the text as an
        // untyped literal so `1e308::float8` still works.
        Some(Err(_)) => Ok(BoundExpr {
            expr: Expr::Const(Value::text(s)),
            ty: SqlType::Unknown,
        }),
        None => Err(PgError::syntax(format!("syntax error at or near \"{s}\""))),
    }
}

fn parse_placeholder(p: &str) -> PgResult<usize> {
    let n: usize = p
        .strip_prefix('$')
        .and_then(|d| d.parse().ok())
        .filter(|n| *n >= 1 && *n <= 65535)
        .ok_or_else(|| PgError::syntax(format!("syntax error at or near \"{p}\"")))?;
    Ok(n - 1)
}

/// The type a parameter gets when it is coerced to `target`.
fn param_type_for(target: SqlType) -> SqlType {
    match target {
        SqlType::Char(_) => SqlType::Char(0),
        SqlType::Unknown => SqlType::Text,
        // A name, looked up when the statement runs (`$1::regclass` with
        // 'public.t' sent as text, as drivers do).
        SqlType::Reg(_) => SqlType::Text,
        other => other.base(),
    }
}

/// Assignment coercion of `b` to `target` without error reporting: None
/// if no assignment cast exists (ALTER COLUMN … TYPE words its own error).
pub fn try_coerce_assign(
    b: BoundExpr,
    target: SqlType,
    params: &mut ParamTypes,
) -> PgResult<Option<Expr>> {
    try_coerce(b, target, params, CastMode::Assignment)
}

/// Coercion without error reporting: None if no cast of `mode`'s strength exists.
fn try_coerce(
    b: BoundExpr,
    target: SqlType,
    params: &mut ParamTypes,
    mode: CastMode,
) -> PgResult<Option<Expr>> {
    if target == SqlType::Unknown || b.ty == target {
        return Ok(Some(b.expr));
    }
    if b.ty == SqlType::Unknown {
        return Ok(Some(match b.expr {
            Expr::Param(i) => {
                let pt = param_type_for(target);
                params.set(i, pt);
                let actual = params.get(i).unwrap_or(pt);
                if actual == target {
                    Expr::Param(i)
                } else if matches!(target, SqlType::Reg(_)) && actual.is_text_like() {
                    reg_in_expr(Expr::Param(i), target)
                } else {
                    Expr::Cast {
                        arg: Box::new(Expr::Param(i)),
                        to: target,
                        mode: CastMode::Assignment,
                    }
                }
            }
            Expr::Const(Value::Null) => Expr::Const(Value::Null),
            e @ Expr::Const(Value::Text(_)) if matches!(target, SqlType::Reg(_)) => {
                reg_in_expr(e, target)
            }
            Expr::Const(Value::Text(s)) => Expr::Const(Value::from_text(target, &s)?),
            other => Expr::Cast {
                arg: Box::new(other),
                to: target,
                mode: CastMode::Assignment,
            },
        }));
    }
    // Same base type and target without a modifier: nothing to do.
    if b.ty.base() == target && !matches!(target, SqlType::Char(_)) {
        return Ok(Some(b.expr));
    }
    let ok = match mode {
        CastMode::Explicit => value::can_cast(b.ty, target),
        CastMode::Assignment => {
            functions::can_coerce_implicit(b.ty, target) || can_assign(b.ty, target)
        }
    };
    if !ok {
        return Ok(None);
    }
    Ok(Some(fold_cast(b.expr, target, mode)?))
}

/// Text → an OID alias type (`'accounts'::regclass`): a number folds
/// now; a name is looked up in the catalog when the statement runs.
fn reg_in_expr(e: Expr, target: SqlType) -> Expr {
    let SqlType::Reg(kind) = target else {
        return e;
    };
    if let Expr::Const(Value::Text(s)) = &e {
        if let Ok(v) = Value::from_text(target, s) {
            return Expr::Const(v);
        }
    }
    Expr::Func {
        func: Func::Catalog(CatFunc::RegIn(kind)),
        args: vec![e],
    }
}

/// PostgreSQL's assignment-only casts among our types.
fn can_assign(from: SqlType, to: SqlType) -> bool {
    use SqlType as T;
    if to.is_text_like() {
        return true;
    }
    if functions::numeric_rank(from).is_some() && functions::numeric_rank(to).is_some() {
        return true;
    }
    matches!(
        (from, to),
        (T::TimestampTz, T::Timestamp) | (T::Int8, T::Oid) | (T::Inet, T::Cidr)
    )
}

/// Wraps `e` in a cast, evaluating it now when `e` is a constant.
fn fold_cast(e: Expr, to: SqlType, mode: CastMode) -> PgResult<Expr> {
    if let Expr::Const(v) = &e {
        return Ok(Expr::Const(value::cast_with(v, to, mode)?));
    }
    Ok(Expr::Cast {
        arg: Box::new(e),
        to,
        mode,
    })
}

/// Implicit coercion of a bound expression to `target` (WHERE operands,
/// function arguments). 42804 if there is no implicit cast.
pub fn coerce(b: BoundExpr, target: SqlType, params: &mut ParamTypes) -> PgResult<Expr> {
    let from = b.ty;
    if b.ty != SqlType::Unknown && !functions::can_coerce_implicit(b.ty, target) {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "cannot coerce type {} to {}",
                from.pg_name(),
                target.pg_name()
            ),
        ));
    }
    match try_coerce(b, target, params, CastMode::Assignment)? {
        Some(e) => Ok(e),
        None => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "cannot coerce type {} to {}",
                from.pg_name(),
                target.pg_name()
            ),
        )),
    }
}

/// Assignment coercion (see [`bind_assign`]).
pub fn coerce_assign(
    b: BoundExpr,
    target: SqlType,
    params: &mut ParamTypes,
    column: &str,
) -> PgResult<Expr> {
    let from = b.ty;
    match try_coerce(b, target, params, CastMode::Assignment)? {
        Some(e) => Ok(e),
        None => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "column \"{}\" is of type {} but expression is of type {}",
                column,
                target.pg_name(),
                from.pg_name()
            ),
        )
        .with_hint("You will need to rewrite or cast the expression.")),
    }
}

/// Binds an expression where aggregates are not allowed (WHERE, VALUES,
/// SET …): 42803 `aggregate functions are not allowed in WHERE`.
pub fn bind_expr(ast: &ast::Expr, scope: &Scope, params: &mut ParamTypes) -> PgResult<BoundExpr> {
    Binder {
        scope,
        params,
        grouping: None,
        in_agg: false,
        in_window: false,
        in_window_def: false,
        hook: None,
    }
    .bind(ast)
}

/// Binds a select-list / HAVING / ORDER BY expression, collecting aggregate
/// calls into `grouping` (placeholders `Agg(i)` relative to `grouping.aggs`).
/// Call [`Grouping::finalize`] on the result if the query is grouped.
pub fn bind_expr_agg(
    ast: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
    grouping: &mut Grouping,
) -> PgResult<BoundExpr> {
    Binder {
        scope,
        params,
        grouping: Some(grouping),
        in_agg: false,
        in_window: false,
        in_window_def: false,
        hook: None,
    }
    .bind(ast)
}

/// Binds an expression that may contain subqueries and references to an
/// enclosing query's columns, both resolved through `hook`; aggregates
/// are collected into `grouping` when given.
pub fn bind_expr_hooked(
    ast: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
    grouping: Option<&mut Grouping>,
    hook: &mut dyn SublinkHook,
) -> PgResult<BoundExpr> {
    Binder {
        scope,
        params,
        grouping,
        in_agg: false,
        in_window: false,
        in_window_def: false,
        hook: Some(hook),
    }
    .bind(ast)
}

/// Types `l op r` for two bound operands as the binder types a comparison
/// (the test of `x IN (subquery)` / `x op ANY (…)`).
pub fn bind_comparison(
    op: BinOp,
    l: BoundExpr,
    r: BoundExpr,
    params: &mut ParamTypes,
) -> PgResult<BoundExpr> {
    let scope = Scope::new();
    Binder {
        scope: &scope,
        params,
        grouping: None,
        in_agg: false,
        in_window: false,
        in_window_def: false,
        hook: None,
    }
    .compare(op, l, r)
}

/// Binds an expression and coerces it to `target` (an untyped literal or
/// parameter takes the type; otherwise an implicit cast).
pub fn bind_expr_as(
    ast: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
    target: SqlType,
) -> PgResult<Expr> {
    let b = bind_expr(ast, scope, params)?;
    coerce(b, target, params)
}

/// Binds a value for an INSERT/UPDATE target column of type `target`
/// (assignment context): 42804 `column "c" is of type integer but expression
/// is of type text` when no assignment cast exists; varchar(n) checks (22001).
pub fn bind_assign(
    ast: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
    target: SqlType,
    column: &str,
) -> PgResult<Expr> {
    let b = bind_expr(ast, scope, params)?;
    coerce_assign(b, target, params, column)
}

/// Binds a condition (WHERE, HAVING-less filters): the result must be
/// boolean (42804 `argument of WHERE must be type boolean, not type integer`);
/// an untyped literal or parameter becomes bool.
pub fn bind_condition(
    ast: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
    clause: &str,
) -> PgResult<Expr> {
    let b = bind_expr(ast, scope, params)?;
    require_bool(b, params, clause)
}

fn require_bool(b: BoundExpr, params: &mut ParamTypes, what: &str) -> PgResult<Expr> {
    match b.ty {
        SqlType::Bool => Ok(b.expr),
        SqlType::Unknown => coerce(b, SqlType::Bool, params),
        other => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument of {} must be type boolean, not type {}",
                what,
                other.pg_name()
            ),
        )),
    }
}

impl Binder<'_> {
    fn bind(&mut self, e: &ast::Expr) -> PgResult<BoundExpr> {
        use ast::Expr as A;
        match e {
            A::Identifier(id) => {
                let name = ident_name(id);
                match self.scope.resolve(None, &name) {
                    Ok(i) => Ok(BoundExpr {
                        expr: Expr::Column(i),
                        ty: self.scope.columns[i].ty,
                    }),
                    Err(err) => {
                        if err.code != sqlstate::AMBIGUOUS_COLUMN {
                            if let Some(h) = self.hook.as_deref_mut() {
                                if let Some(r) = h.outer_column(None, &name) {
                                    return r;
                                }
                            }
                        }
                        if name == "tableoid" && err.code == sqlstate::UNDEFINED_COLUMN {
                            if let Some(o) = self.scope.tableoid(None)? {
                                return Ok(BoundExpr {
                                    expr: Expr::Const(Value::Oid(o)),
                                    ty: SqlType::Oid,
                                });
                            }
                        }
                        // SQL-standard niladic functions parsed as identifiers.
                        if id.quote_style.is_none() {
                            if let Some(b) = self.niladic(&name)? {
                                return Ok(b);
                            }
                        }
                        Err(err)
                    }
                }
            }
            A::CompoundIdentifier(parts) => {
                let n = parts.len();
                if n < 2 {
                    return Err(PgError::syntax("invalid column reference"));
                }
                let col = ident_name(&parts[n - 1]);
                let table = ident_name(&parts[n - 2]);
                let i = match self.scope.resolve(Some(&table), &col) {
                    Ok(i) => i,
                    Err(err) => {
                        if col == "tableoid" && err.code == sqlstate::UNDEFINED_COLUMN {
                            if let Some(o) = self.scope.tableoid(Some(&table))? {
                                return Ok(BoundExpr {
                                    expr: Expr::Const(Value::Oid(o)),
                                    ty: SqlType::Oid,
                                });
                            }
                        }
                        if err.code != sqlstate::AMBIGUOUS_COLUMN {
                            if let Some(h) = self.hook.as_deref_mut() {
                                if let Some(r) = h.outer_column(Some(&table), &col) {
                                    return r;
                                }
                            }
                        }
                        return Err(err);
                    }
                };
                Ok(BoundExpr {
                    expr: Expr::Column(i),
                    ty: self.scope.columns[i].ty,
                })
            }
            A::Value(v) => self.literal(v),
            A::TypedString { data_type, value } => {
                let ty = SqlType::from_data_type(data_type)?;
                Ok(BoundExpr {
                    expr: Expr::Const(Value::from_text(ty, value)?),
                    ty,
                })
            }
            A::Nested(inner) => self.bind(inner),
            A::Collate { expr, collation } => {
                // Text compares bytewise (the C collation), which is what
                // `default`, `C` and `POSIX` mean here.
                let name = collation
                    .0
                    .last()
                    .map(|i| i.value.clone())
                    .unwrap_or_default();
                let schema_ok = collation.0.len() == 1
                    || (collation.0.len() == 2 && collation.0[0].value == "pg_catalog");
                if !schema_ok || !matches!(name.as_str(), "default" | "C" | "POSIX" | "ucs_basic") {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("collation \"{collation}\" for encoding \"UTF8\" does not exist"),
                    ));
                }
                let b = self.bind(expr)?;
                if b.ty != SqlType::Unknown && !b.ty.is_text_like() {
                    return Err(PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!("collations are not supported by type {}", b.ty.pg_name()),
                    ));
                }
                Ok(b)
            }
            A::UnaryOp { op, expr } => self.unary(*op, expr),
            A::BinaryOp { left, op, right } => self.binary_ast(left, op, right),
            A::IsNull(x) | A::IsNotNull(x) => {
                let b = self.bind(x)?;
                Ok(BoundExpr {
                    expr: Expr::IsNull {
                        arg: Box::new(b.expr),
                        negated: matches!(e, A::IsNotNull(_)),
                    },
                    ty: SqlType::Bool,
                })
            }
            A::IsTrue(x)
            | A::IsNotTrue(x)
            | A::IsFalse(x)
            | A::IsNotFalse(x)
            | A::IsUnknown(x)
            | A::IsNotUnknown(x) => {
                let b = self.bind(x)?;
                let arg = require_bool(b, self.params, "IS TRUE")?;
                let expr = match e {
                    A::IsTrue(_) => Expr::IsBool {
                        arg: Box::new(arg),
                        value: true,
                        negated: false,
                    },
                    A::IsNotTrue(_) => Expr::IsBool {
                        arg: Box::new(arg),
                        value: true,
                        negated: true,
                    },
                    A::IsFalse(_) => Expr::IsBool {
                        arg: Box::new(arg),
                        value: false,
                        negated: false,
                    },
                    A::IsNotFalse(_) => Expr::IsBool {
                        arg: Box::new(arg),
                        value: false,
                        negated: true,
                    },
                    A::IsUnknown(_) => Expr::IsNull {
                        arg: Box::new(arg),
                        negated: false,
                    },
                    _ => Expr::IsNull {
                        arg: Box::new(arg),
                        negated: true,
                    },
                };
                Ok(BoundExpr {
                    expr,
                    ty: SqlType::Bool,
                })
            }
            A::IsDistinctFrom(l, r) | A::IsNotDistinctFrom(l, r) => {
                let op = if matches!(e, A::IsDistinctFrom(..)) {
                    BinOp::IsDistinctFrom
                } else {
                    BinOp::IsNotDistinctFrom
                };
                let (l, r) = (self.bind(l)?, self.bind(r)?);
                self.compare(op, l, r)
            }
            A::InList {
                expr,
                list,
                negated,
            } => {
                let arg = self.bind(expr)?;
                let items = list
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<PgResult<Vec<_>>>()?;
                let mut types = vec![arg.ty];
                types.extend(items.iter().map(|b| b.ty));
                let t = functions::common_type(&types).ok_or_else(|| {
                    PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        "IN types cannot be matched".to_string(),
                    )
                })?;
                // Text-like operands compare as text, a bpchar's trailing
                // spaces dropped (as `=` does).
                let (arg, list) = if t.is_text_like() {
                    let arg = self.text_operand(arg)?;
                    let list = items
                        .into_iter()
                        .map(|b| self.text_operand(b))
                        .collect::<PgResult<Vec<_>>>()?;
                    (arg, list)
                } else {
                    let arg = self.coerce_operand(arg, t)?;
                    let list = items
                        .into_iter()
                        .map(|b| self.coerce_operand(b, t))
                        .collect::<PgResult<Vec<_>>>()?;
                    (arg, list)
                };
                Ok(BoundExpr {
                    expr: Expr::InList {
                        arg: Box::new(arg),
                        list,
                        negated: *negated,
                    },
                    ty: SqlType::Bool,
                })
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let arg = self.bind(expr)?;
                let low = self.bind(low)?;
                let high = self.bind(high)?;
                let t = functions::common_type(&[arg.ty, low.ty, high.ty])
                    .ok_or_else(|| no_operator(">=", arg.ty, low.ty))?;
                let t = if t.is_text_like() { SqlType::Text } else { t };
                let arg = self.coerce_operand(arg, t)?;
                let low = self.coerce_operand(low, t)?;
                let high = self.coerce_operand(high, t)?;
                Ok(BoundExpr {
                    expr: Expr::Between {
                        arg: Box::new(arg),
                        low: Box::new(low),
                        high: Box::new(high),
                        negated: *negated,
                    },
                    ty: SqlType::Bool,
                })
            }
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            }
            | A::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let icase = matches!(e, A::ILike { .. });
                match escape_char {
                    Some(esc) => {
                        let args = vec![
                            self.bind(expr)?,
                            self.bind(pattern)?,
                            BoundExpr {
                                expr: Expr::Const(Value::text(esc)),
                                ty: SqlType::Text,
                            },
                        ];
                        self.call_func(
                            Func::LikeEscape {
                                icase,
                                negated: *negated,
                            },
                            args,
                            &[SqlType::Text, SqlType::Text, SqlType::Text],
                            SqlType::Bool,
                        )
                    }
                    None => self.like(expr, pattern, *negated, icase),
                }
            }
            A::SimilarTo {
                negated,
                expr,
                pattern,
                escape_char,
            } => {
                let mut args = vec![self.bind(expr)?, self.bind(pattern)?];
                let mut types = vec![SqlType::Text, SqlType::Text];
                if let Some(esc) = escape_char {
                    args.push(BoundExpr {
                        expr: Expr::Const(Value::text(esc)),
                        ty: SqlType::Text,
                    });
                    types.push(SqlType::Text);
                }
                self.call_func(
                    Func::SimilarTo { negated: *negated },
                    args,
                    &types,
                    SqlType::Bool,
                )
            }
            A::Interval(iv) => self.interval_literal(iv),
            A::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let t = self.bind(timestamp)?;
                let (from, to) = match t.ty {
                    SqlType::Timestamp => (SqlType::Timestamp, SqlType::TimestampTz),
                    SqlType::TimestampTz | SqlType::Unknown | SqlType::Date => {
                        (SqlType::TimestampTz, SqlType::Timestamp)
                    }
                    other => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_FUNCTION,
                            format!(
                                "function timezone(unknown, {}) does not exist",
                                other.pg_name()
                            ),
                        ))
                    }
                };
                let z = self.bind(time_zone)?;
                self.call_func(Func::AtTimeZone, vec![t, z], &[from, SqlType::Text], to)
            }
            A::Array(arr) => {
                let elems = arr
                    .elem
                    .iter()
                    .map(|x| self.bind(x))
                    .collect::<PgResult<Vec<_>>>()?;
                self.array_constructor(elems)
            }
            A::Subscript { .. } => {
                // `a[i][j]…` is one access of as many subscripts, innermost
                // first in the tree.
                let mut subs = Vec::new();
                let mut base = e;
                while let A::Subscript { expr, subscript } = base {
                    subs.push(subscript.as_ref());
                    base = expr;
                }
                subs.reverse();
                let arr = self.bind(base)?;
                self.subscript(arr, &subs)
            }
            A::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | A::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, A::AllOp { .. });
                let op = match compare_op {
                    ast::BinaryOperator::Eq => BinOp::Eq,
                    ast::BinaryOperator::NotEq => BinOp::NotEq,
                    ast::BinaryOperator::Lt => BinOp::Lt,
                    ast::BinaryOperator::LtEq => BinOp::LtEq,
                    ast::BinaryOperator::Gt => BinOp::Gt,
                    ast::BinaryOperator::GtEq => BinOp::GtEq,
                    other => {
                        return Err(PgError::unsupported(format!(
                            "operator not supported with ANY/ALL: {other}"
                        )))
                    }
                };
                let l = self.bind(left)?;
                // `x op ANY (SELECT …)`: a sublink; otherwise an array.
                if let ast::Expr::Subquery(q) = right.as_ref() {
                    return self.sublink_compare(l, op, all, q);
                }
                let r = self.bind(right)?;
                self.array_compare(op, all, l, r)
            }
            A::Extract { field, expr, .. } => {
                let unit = match field {
                    ast::DateTimeField::Custom(i) => ident_name(i),
                    other => other.to_string().to_lowercase(),
                };
                let args = vec![
                    BoundExpr {
                        expr: Expr::Const(Value::text(&unit)),
                        ty: SqlType::Text,
                    },
                    self.bind(expr)?,
                ];
                self.call("extract", args)
            }
            A::Cast {
                expr,
                data_type,
                format: None,
                kind,
            } => {
                if matches!(kind, ast::CastKind::TryCast | ast::CastKind::SafeCast) {
                    return Err(unsupported_expr("TRY_CAST"));
                }
                let to = SqlType::from_data_type(data_type)?;
                // `ARRAY[]::int[]`: the cast gives the empty array its type.
                if let (A::Array(a), SqlType::Array(_)) = (expr.as_ref(), to) {
                    if a.elem.is_empty() {
                        return Ok(BoundExpr {
                            expr: Expr::Const(Value::from_text(to, "{}")?),
                            ty: to,
                        });
                    }
                }
                let b = self.bind(expr)?;
                self.explicit_cast(b, to)
            }
            A::Function(f) => self.function(f),
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind(expr)?];
                args.push(match substring_from {
                    Some(f) => self.bind(f)?,
                    None => BoundExpr {
                        expr: Expr::Const(Value::Int4(1)),
                        ty: SqlType::Int4,
                    },
                });
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                self.call("substring", args)
            }
            A::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(unsupported_expr("TRIM with a character list"));
                }
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                let mut args = vec![self.bind(expr)?];
                if let Some(w) = trim_what {
                    args.push(self.bind(w)?);
                }
                self.call(name, args)
            }
            A::Position { expr, r#in } => {
                let args = vec![self.bind(r#in)?, self.bind(expr)?];
                self.call("strpos", args)
            }
            A::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => {
                let a = vec![self.bind(expr)?];
                self.call("ceil", a)
            }
            A::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => {
                let a = vec![self.bind(expr)?];
                self.call("floor", a)
            }
            A::Case {
                operand,
                conditions,
                results,
                else_result,
            } => self.case(
                operand.as_deref(),
                conditions,
                results,
                else_result.as_deref(),
            ),
            A::Subquery(q) => self.sublink_scalar_or_exists(q, false),
            A::Exists { subquery, negated } => {
                let b = self.sublink_scalar_or_exists(subquery, true)?;
                Ok(if *negated { not(b) } else { b })
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } if matches!(expr.as_ref(), A::Tuple(_)) => {
                let e = row_in_subquery(expr, subquery)?;
                let b = self.bind(&e)?;
                Ok(if *negated { not(b) } else { b })
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let lhs = self.bind(expr)?;
                let b = self.sublink_compare(lhs, BinOp::Eq, false, subquery)?;
                Ok(if *negated { not(b) } else { b })
            }
            other => Err(PgError::unsupported(format!(
                "expression not supported: {other}"
            ))),
        }
    }

    fn sublink_scalar_or_exists(&mut self, q: &ast::Query, exists: bool) -> PgResult<BoundExpr> {
        let Some(h) = self.hook.as_deref_mut() else {
            return Err(unsupported_expr("subquery"));
        };
        let link = if exists {
            Sublink::Exists(q)
        } else {
            Sublink::Scalar(q)
        };
        h.sublink(link, self.params)
    }

    fn sublink_compare(
        &mut self,
        lhs: BoundExpr,
        op: BinOp,
        all: bool,
        query: &ast::Query,
    ) -> PgResult<BoundExpr> {
        let Some(h) = self.hook.as_deref_mut() else {
            return Err(unsupported_expr("subquery"));
        };
        h.sublink(
            Sublink::Compare {
                lhs,
                op,
                all,
                query,
            },
            self.params,
        )
    }

    /// `current_timestamp`, `current_user` … written without parentheses.
    fn niladic(&mut self, name: &str) -> PgResult<Option<BoundExpr>> {
        match name {
            "current_timestamp" | "current_user" | "session_user" | "user" | "current_role"
            | "localtimestamp" | "current_catalog" | "current_schema" | "current_date" => {
                Ok(Some(self.call(name, Vec::new())?))
            }
            _ => Ok(None),
        }
    }

    fn literal(&mut self, v: &ast::Value) -> PgResult<BoundExpr> {
        use ast::Value as V;
        Ok(match v {
            V::Number(s, _) => number_literal(s)?,
            V::SingleQuotedString(s)
            | V::EscapedStringLiteral(s)
            | V::UnicodeStringLiteral(s)
            | V::NationalStringLiteral(s)
            | V::TripleSingleQuotedString(s) => BoundExpr {
                expr: Expr::Const(Value::Text(Arc::from(s.as_str()))),
                ty: SqlType::Unknown,
            },
            V::DollarQuotedString(d) => BoundExpr {
                expr: Expr::Const(Value::Text(Arc::from(d.value.as_str()))),
                ty: SqlType::Unknown,
            },
            V::Boolean(b) => BoundExpr {
                expr: Expr::Const(Value::Bool(*b)),
                ty: SqlType::Bool,
            },
            V::Null => BoundExpr {
                expr: Expr::Const(Value::Null),
                ty: SqlType::Unknown,
            },
            V::Placeholder(p) => {
                let i = parse_placeholder(p)?;
                self.params.note(i);
                BoundExpr {
                    expr: Expr::Param(i),
                    ty: self.params.get(i).unwrap_or(SqlType::Unknown),
                }
            }
            V::DoubleQuotedString(s) => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{s}\" does not exist"),
                ))
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "literal not supported: {other}"
                )))
            }
        })
    }

    fn unary(&mut self, op: ast::UnaryOperator, x: &ast::Expr) -> PgResult<BoundExpr> {
        use ast::UnaryOperator as U;
        match op {
            U::Minus => {
                // Fold -<number literal> so -2147483648 is an int4.
                if let ast::Expr::Value(ast::Value::Number(s, _)) = x {
                    return number_literal(&format!("-{s}"));
                }
                let b = self.bind(x)?;
                let b = if b.ty == SqlType::Unknown {
                    self.coerce_to(b, SqlType::Float8)?
                } else {
                    b
                };
                if !b.ty.is_numeric_category() && b.ty != SqlType::Interval {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("operator does not exist: - {}", b.ty.pg_base_name()),
                    )
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."));
                }
                let ty = b.ty.base();
                if let Expr::Const(v) = &b.expr {
                    return Ok(BoundExpr {
                        expr: Expr::Const(negate(v)?),
                        ty,
                    });
                }
                Ok(BoundExpr {
                    expr: Expr::Unary {
                        op: UnaryOp::Neg,
                        arg: Box::new(b.expr),
                    },
                    ty,
                })
            }
            U::Plus => {
                let b = self.bind(x)?;
                if !b.ty.is_numeric_category() && b.ty != SqlType::Unknown {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_FUNCTION,
                        format!("operator does not exist: + {}", b.ty.pg_base_name()),
                    ));
                }
                Ok(b)
            }
            U::PGBitwiseNot => {
                let b = self.bind(x)?;
                if !crate::network::is_network(b.ty) {
                    return Err(PgError::unsupported(format!(
                        "operator not supported: ~ {}",
                        b.ty.pg_base_name()
                    )));
                }
                self.call_func(
                    Func::Net(crate::network::NetFunc::Not),
                    vec![b],
                    &[SqlType::Inet],
                    SqlType::Inet,
                )
            }
            U::Not => {
                let b = self.bind(x)?;
                let arg = require_bool(b, self.params, "NOT")?;
                Ok(BoundExpr {
                    expr: Expr::Unary {
                        op: UnaryOp::Not,
                        arg: Box::new(arg),
                    },
                    ty: SqlType::Bool,
                })
            }
            other => Err(PgError::unsupported(format!(
                "operator not supported: {other}"
            ))),
        }
    }

    fn coerce_to(&mut self, b: BoundExpr, t: SqlType) -> PgResult<BoundExpr> {
        let e = coerce(b, t, self.params)?;
        Ok(BoundExpr { expr: e, ty: t })
    }

    /// Coerces an operand to a comparison type `t` where cross-type
    /// comparison needs no cast (numerics, text-likes): only unknowns change.
    fn coerce_operand(&mut self, b: BoundExpr, t: SqlType) -> PgResult<Expr> {
        if b.ty == SqlType::Unknown {
            return coerce(b, t, self.params);
        }
        if (b.ty.is_numeric_category() && t.is_numeric_category())
            || (b.ty.is_text_like() && t.is_text_like())
            || (is_datetime(b.ty) && is_datetime(t))
            || b.ty == t
        {
            return Ok(b.expr);
        }
        coerce(b, t, self.params)
    }

    fn binary_ast(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> PgResult<BoundExpr> {
        use ast::BinaryOperator as B;
        // `OPERATOR(pg_catalog.~)`: the built-in operator of that name.
        if let B::PGCustomBinaryOperator(parts) = op {
            let schema_ok = match parts.as_slice() {
                [_] => true,
                [s, _] => s == "pg_catalog",
                _ => false,
            };
            let name = parts.last().map(String::as_str).unwrap_or("");
            let builtin = match name {
                "+" => Some(B::Plus),
                "-" => Some(B::Minus),
                "*" => Some(B::Multiply),
                "/" => Some(B::Divide),
                "%" => Some(B::Modulo),
                "||" => Some(B::StringConcat),
                "=" => Some(B::Eq),
                "<>" | "!=" => Some(B::NotEq),
                "<" => Some(B::Lt),
                "<=" => Some(B::LtEq),
                ">" => Some(B::Gt),
                ">=" => Some(B::GtEq),
                "~" => Some(B::PGRegexMatch),
                "~*" => Some(B::PGRegexIMatch),
                "!~" => Some(B::PGRegexNotMatch),
                "!~*" => Some(B::PGRegexNotIMatch),
                "~~" => Some(B::PGLikeMatch),
                "~~*" => Some(B::PGILikeMatch),
                "!~~" => Some(B::PGNotLikeMatch),
                "!~~*" => Some(B::PGNotILikeMatch),
                "@>" => Some(B::AtArrow),
                "<@" => Some(B::ArrowAt),
                "&&" => Some(B::PGOverlap),
                "^" => Some(B::PGExp),
                "<<" => Some(B::PGBitwiseShiftLeft),
                ">>" => Some(B::PGBitwiseShiftRight),
                "&" => Some(B::BitwiseAnd),
                "|" => Some(B::BitwiseOr),
                "<<=" | ">>=" => Some(B::Custom(name.to_string())),
                _ => None,
            };
            return match builtin {
                Some(b) if schema_ok => self.binary_ast(left, &b, right),
                _ => {
                    let (l, r) = (self.bind(left)?, self.bind(right)?);
                    Err(no_operator(&parts.join("."), l.ty, r.ty))
                }
            };
        }
        if let Some(e) = row_comparison(left, op, right)? {
            return self.bind(&e);
        }
        let op = match op {
            B::Plus => BinOp::Add,
            B::Minus => BinOp::Sub,
            B::Multiply => BinOp::Mul,
            B::Divide => BinOp::Div,
            B::Modulo => BinOp::Mod,
            B::StringConcat => BinOp::Concat,
            B::Eq => BinOp::Eq,
            B::NotEq => BinOp::NotEq,
            B::Lt => BinOp::Lt,
            B::LtEq => BinOp::LtEq,
            B::Gt => BinOp::Gt,
            B::GtEq => BinOp::GtEq,
            B::And => BinOp::And,
            B::Or => BinOp::Or,
            B::Arrow
            | B::LongArrow
            | B::HashArrow
            | B::HashLongArrow
            | B::Question
            | B::QuestionAnd
            | B::QuestionPipe
            | B::HashMinus => {
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                return self.json_operator(&op.to_string(), l, r);
            }
            B::PGBitwiseShiftLeft
            | B::PGBitwiseShiftRight
            | B::BitwiseAnd
            | B::BitwiseOr
            | B::Custom(_) => {
                let name = match op {
                    B::PGBitwiseShiftLeft => "<<",
                    B::PGBitwiseShiftRight => ">>",
                    B::BitwiseAnd => "&",
                    B::BitwiseOr => "|",
                    B::Custom(s) => s.as_str(),
                    _ => "",
                };
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                if crate::network::is_network(l.ty) || crate::network::is_network(r.ty) {
                    return self.net_operator(name, l, r);
                }
                return Err(PgError::unsupported(format!(
                    "operator not supported: {op}"
                )));
            }
            B::AtArrow | B::ArrowAt | B::PGOverlap => {
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                if crate::network::is_network(l.ty) || crate::network::is_network(r.ty) {
                    return self.net_operator(&op.to_string(), l, r);
                }
                if l.ty == SqlType::Jsonb || r.ty == SqlType::Jsonb {
                    return self.json_operator(&op.to_string(), l, r);
                }
                let func = match op {
                    B::AtArrow => Func::ArrayContains { contained: false },
                    B::ArrowAt => Func::ArrayContains { contained: true },
                    _ => Func::ArrayOverlap,
                };
                let t = match (l.ty, r.ty) {
                    (a @ SqlType::Array(_), b) if b == a || b == SqlType::Unknown => a,
                    (SqlType::Unknown, b @ SqlType::Array(_)) => b,
                    _ => return Err(no_operator(&op.to_string(), l.ty, r.ty)),
                };
                return self.call_func(func, vec![l, r], &[t, t], SqlType::Bool);
            }
            B::PGExp => {
                let (l, r) = (self.bind(left)?, self.bind(right)?);
                let t = crate::functions::power_type(l.ty, r.ty)
                    .ok_or_else(|| no_operator("^", l.ty, r.ty))?;
                return self.call_func(Func::Power, vec![l, r], &[t, t], t);
            }
            B::PGRegexMatch | B::PGRegexIMatch | B::PGRegexNotMatch | B::PGRegexNotIMatch => {
                let icase = matches!(op, B::PGRegexIMatch | B::PGRegexNotIMatch);
                let negated = matches!(op, B::PGRegexNotMatch | B::PGRegexNotIMatch);
                let args = vec![self.bind(left)?, self.bind(right)?];
                return self.call_func(
                    Func::RegexMatch { icase, negated },
                    args,
                    &[SqlType::Text, SqlType::Text],
                    SqlType::Bool,
                );
            }
            B::PGLikeMatch | B::PGILikeMatch | B::PGNotLikeMatch | B::PGNotILikeMatch => {
                let negated = matches!(op, B::PGNotLikeMatch | B::PGNotILikeMatch);
                let ci = matches!(op, B::PGILikeMatch | B::PGNotILikeMatch);
                return self.like(left, right, negated, ci);
            }
            other => {
                return Err(PgError::unsupported(format!(
                    "operator not supported: {other}"
                )))
            }
        };
        let l = self.bind(left)?;
        let r = self.bind(right)?;
        self.binary(op, l, r)
    }

    fn binary(&mut self, op: BinOp, l: BoundExpr, r: BoundExpr) -> PgResult<BoundExpr> {
        match op {
            BinOp::And | BinOp::Or => {
                let what = if op == BinOp::And { "AND" } else { "OR" };
                let l = require_bool(l, self.params, what)?;
                let r = require_bool(r, self.params, what)?;
                Ok(BoundExpr {
                    expr: Expr::Binary {
                        op,
                        left: Box::new(l),
                        right: Box::new(r),
                    },
                    ty: SqlType::Bool,
                })
            }
            BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => {
                self.compare(op, l, r)
            }
            BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom => self.compare(op, l, r),
            BinOp::Concat if l.ty == SqlType::Jsonb || r.ty == SqlType::Jsonb => {
                self.json_operator("||", l, r)
            }
            BinOp::Sub if l.ty == SqlType::Jsonb => self.json_operator("-", l, r),
            BinOp::Add | BinOp::Sub
                if crate::network::is_network(l.ty) || crate::network::is_network(r.ty) =>
            {
                self.net_operator(op_symbol(op), l, r)
            }
            BinOp::Concat if is_array(l.ty) || is_array(r.ty) => self.array_concat(l, r),
            BinOp::Concat
                if (l.ty == SqlType::Bytea
                    && matches!(r.ty, SqlType::Bytea | SqlType::Unknown))
                    || (r.ty == SqlType::Bytea && l.ty == SqlType::Unknown) =>
            {
                let l = self.coerce_operand(l, SqlType::Bytea)?;
                let r = self.coerce_operand(r, SqlType::Bytea)?;
                Ok(BoundExpr {
                    expr: Expr::Binary {
                        op,
                        left: Box::new(l),
                        right: Box::new(r),
                    },
                    ty: SqlType::Bytea,
                })
            }
            BinOp::Concat => {
                let (lt, rt) = (l.ty, r.ty);
                let texty = |t: SqlType| t.is_text_like() || t == SqlType::Unknown;
                if !texty(lt) && !texty(rt) {
                    return Err(no_operator("||", lt, rt));
                }
                let l = self.text_operand(l)?;
                let r = self.text_operand(r)?;
                Ok(BoundExpr {
                    expr: Expr::Binary {
                        op,
                        left: Box::new(l),
                        right: Box::new(r),
                    },
                    ty: SqlType::Text,
                })
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                let (lt, rt) = (l.ty, r.ty);
                if lt == SqlType::Unknown && rt == SqlType::Unknown {
                    return Err(PgError::new(
                        "42725",
                        format!("operator is not unique: unknown {} unknown", op_symbol(op)),
                    )
                    .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts."));
                }
                if op == BinOp::Sub && (lt == SqlType::PgLsn || rt == SqlType::PgLsn) {
                    let l = self.coerce_operand(l, SqlType::PgLsn)?;
                    let r = self.coerce_operand(r, SqlType::PgLsn)?;
                    return Ok(BoundExpr {
                        expr: Expr::Binary {
                            op,
                            left: Box::new(l),
                            right: Box::new(r),
                        },
                        ty: SqlType::NUMERIC,
                    });
                }
                if let Some(b) = self.datetime_arith(op, &l, &r)? {
                    return Ok(b);
                }
                let lt2 = if lt == SqlType::Unknown { rt } else { lt };
                let rt2 = if rt == SqlType::Unknown { lt } else { rt };
                let (Some(a), Some(b)) =
                    (functions::numeric_rank(lt2), functions::numeric_rank(rt2))
                else {
                    return Err(no_operator(op_symbol(op), lt, rt));
                };
                let t = if a >= b { lt2.base() } else { rt2.base() };
                if op == BinOp::Mod && t == SqlType::Float8 {
                    return Err(no_operator("%", lt, rt));
                }
                let l = coerce(l, t, self.params)?;
                let r = coerce(r, t, self.params)?;
                let expr = Expr::Binary {
                    op,
                    left: Box::new(l),
                    right: Box::new(r),
                };
                // Fold constant arithmetic (errors such as overflow surface at bind, as in PostgreSQL).
                let expr = fold_const(expr)?;
                Ok(BoundExpr { expr, ty: t })
            }
        }
    }

    /// An inet/cidr operator (`<<`, `&&`, `+` …), see `crate::network`.
    fn net_operator(&mut self, op: &str, l: BoundExpr, r: BoundExpr) -> PgResult<BoundExpr> {
        let Some((f, types, ret, swap)) = crate::network::resolve_operator(op, l.ty, r.ty) else {
            return Err(no_operator(op, l.ty, r.ty));
        };
        let args = if swap { vec![r, l] } else { vec![l, r] };
        self.call_func(Func::Net(f), args, &types, ret)
    }

    /// A json operator (`->`, `@>`, jsonb `||` …), see `crate::jsonfuncs`.
    fn json_operator(&mut self, op: &str, l: BoundExpr, r: BoundExpr) -> PgResult<BoundExpr> {
        let Some((f, types, ret, swap)) = crate::jsonfuncs::resolve_operator(op, l.ty, r.ty) else {
            return Err(no_operator(op, l.ty, r.ty));
        };
        let args = if swap { vec![r, l] } else { vec![l, r] };
        self.call_func(Func::Json(f), args, &types, ret)
    }

    fn text_operand(&mut self, b: BoundExpr) -> PgResult<Expr> {
        match b.ty {
            SqlType::Unknown => coerce(b, SqlType::Text, self.params),
            SqlType::Char(_) => Ok(bpchar_strip(b.expr)),
            t if t.is_text_like() => Ok(b.expr),
            // An OID alias type's text is the name (its output function).
            SqlType::Reg(kind) => Ok(Expr::Func {
                func: Func::Catalog(CatFunc::RegOut(kind)),
                args: vec![b.expr],
            }),
            _ => fold_cast(b.expr, SqlType::Text, CastMode::Explicit),
        }
    }

    fn compare(&mut self, op: BinOp, l: BoundExpr, r: BoundExpr) -> PgResult<BoundExpr> {
        let (lt, rt) = (l.ty, r.ty);
        // json has no comparison operators (jsonb has).
        if lt == SqlType::Json || rt == SqlType::Json {
            return Err(no_operator(op_symbol(op), lt, rt));
        }
        // xid has `=` and `<>` only (32-bit xids wrap around).
        if (lt == SqlType::Xid || rt == SqlType::Xid)
            && matches!(op, BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq)
        {
            return Err(no_operator(op_symbol(op), lt, rt));
        }
        let target = match (lt, rt) {
            (SqlType::Unknown, SqlType::Unknown) => SqlType::Text,
            // varchar has no `=` of its own: PostgreSQL resolves texteq, so an
            // unknown operand becomes text.
            (SqlType::Unknown, SqlType::Varchar(_)) | (SqlType::Varchar(_), SqlType::Unknown) => {
                SqlType::Text
            }
            (SqlType::Unknown, t) | (t, SqlType::Unknown) => param_type_for(t),
            (a, b) if a.is_numeric_category() && b.is_numeric_category() => {
                if functions::numeric_rank(a) >= functions::numeric_rank(b) {
                    a.base()
                } else {
                    b.base()
                }
            }
            (a, b) if a.is_text_like() && b.is_text_like() => {
                if matches!((a, b), (SqlType::Char(_), SqlType::Char(_))) {
                    SqlType::Char(0)
                } else {
                    SqlType::Text
                }
            }
            (a, b) if a == b || a.base() == b.base() => a.base(),
            (
                SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date,
                SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date,
            ) => SqlType::TimestampTz,
            (SqlType::Oid, b) if b.is_integer() => SqlType::Oid,
            (a, SqlType::Oid) if a.is_integer() => SqlType::Oid,
            // The OID alias types compare as OIDs.
            (SqlType::Oid | SqlType::Reg(_), SqlType::Oid | SqlType::Reg(_)) => SqlType::Oid,
            // cidr is binary-coercible to inet.
            (SqlType::Inet | SqlType::Cidr, SqlType::Inet | SqlType::Cidr) => SqlType::Inet,
            (SqlType::Reg(_), b) if b.is_integer() => SqlType::Oid,
            (a, SqlType::Reg(_)) if a.is_integer() => SqlType::Oid,
            _ => return Err(no_operator(op_symbol(op), lt, rt)),
        };
        if target == SqlType::Bool
            && op != BinOp::Eq
            && op != BinOp::NotEq
            && !matches!(op, BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom)
        {
            // bool < bool exists in PostgreSQL too; allowed.
        }
        let mut l = self.coerce_operand(l, target)?;
        let mut r = self.coerce_operand(r, target)?;
        // bpchar semantics: trailing spaces are insignificant (char vs char),
        // and char → text drops them (char vs text).
        let strip = bpchar_strip;
        let l_char = matches!(lt, SqlType::Char(_))
            || (lt == SqlType::Unknown && matches!(target, SqlType::Char(_)));
        let r_char = matches!(rt, SqlType::Char(_))
            || (rt == SqlType::Unknown && matches!(target, SqlType::Char(_)));
        if l_char {
            l = strip(l);
        }
        if r_char {
            r = strip(r);
        }
        let expr = fold_const(Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        })?;
        Ok(BoundExpr {
            expr,
            ty: SqlType::Bool,
        })
    }

    fn like(
        &mut self,
        x: &ast::Expr,
        pattern: &ast::Expr,
        negated: bool,
        ci: bool,
    ) -> PgResult<BoundExpr> {
        let a = self.bind(x)?;
        let p = self.bind(pattern)?;
        if !(a.ty.is_text_like() || a.ty == SqlType::Unknown)
            || !(p.ty.is_text_like() || p.ty == SqlType::Unknown)
        {
            return Err(no_operator(if ci { "~~*" } else { "~~" }, a.ty, p.ty));
        }
        let a = self.text_operand(a)?;
        let p = self.text_operand(p)?;
        Ok(BoundExpr {
            expr: Expr::Like {
                arg: Box::new(a),
                pattern: Box::new(p),
                negated,
                case_insensitive: ci,
            },
            ty: SqlType::Bool,
        })
    }

    fn explicit_cast(&mut self, b: BoundExpr, to: SqlType) -> PgResult<BoundExpr> {
        // The OID alias types convert to and from names through the catalog.
        if let SqlType::Reg(_) = to {
            let literal = b.ty == SqlType::Unknown && matches!(b.expr, Expr::Const(_));
            if literal || b.ty.is_text_like() {
                return Ok(BoundExpr {
                    expr: reg_in_expr(b.expr, to),
                    ty: to,
                });
            }
        }
        let b = match b.ty {
            SqlType::Reg(kind) if to.is_text_like() => {
                let named = BoundExpr {
                    expr: Expr::Func {
                        func: Func::Catalog(CatFunc::RegOut(kind)),
                        args: vec![b.expr],
                    },
                    ty: SqlType::Text,
                };
                if to == SqlType::Text {
                    return Ok(named);
                }
                named
            }
            _ => b,
        };
        if b.ty == SqlType::Unknown {
            if let Expr::Param(i) = b.expr {
                let pt = param_type_for(to);
                self.params.set(i, pt);
                let actual = self.params.get(i);
                let expr = if actual == Some(to) {
                    Expr::Param(i)
                } else if matches!(to, SqlType::Reg(_)) && actual.is_some_and(|t| t.is_text_like())
                {
                    reg_in_expr(Expr::Param(i), to)
                } else {
                    Expr::Cast {
                        arg: Box::new(Expr::Param(i)),
                        to,
                        mode: CastMode::Explicit,
                    }
                };
                return Ok(BoundExpr { expr, ty: to });
            }
            if let Expr::Const(Value::Text(s)) = &b.expr {
                // A literal's input function with the typmod, explicit semantics for strings.
                let v = match to {
                    t if t.is_text_like() => value::cast(&Value::Text(s.clone()), to)?,
                    _ => Value::from_text(to, s)?,
                };
                return Ok(BoundExpr {
                    expr: Expr::Const(v),
                    ty: to,
                });
            }
        }
        let b = if matches!(b.ty, SqlType::Char(_))
            && matches!(to, SqlType::Text | SqlType::Varchar(_))
        {
            BoundExpr {
                expr: bpchar_strip(b.expr),
                ty: SqlType::Text,
            }
        } else {
            b
        };
        if b.ty != SqlType::Unknown && !value::can_cast(b.ty, to) {
            return Err(PgError::new(
                "42846",
                format!("cannot cast type {} to {}", b.ty.pg_name(), to.pg_name()),
            ));
        }
        Ok(BoundExpr {
            expr: fold_cast(b.expr, to, CastMode::Explicit)?,
            ty: to,
        })
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::Expr],
        results: &[ast::Expr],
        else_result: Option<&ast::Expr>,
    ) -> PgResult<BoundExpr> {
        let op = match operand {
            Some(o) => Some(self.bind(o)?),
            None => None,
        };
        let mut conds = Vec::with_capacity(conditions.len());
        for c in conditions {
            let b = self.bind(c)?;
            conds.push(b);
        }
        let mut res = Vec::with_capacity(results.len());
        for r in results {
            res.push(self.bind(r)?);
        }
        let els = match else_result {
            Some(e) => Some(self.bind(e)?),
            None => None,
        };
        let mut types: Vec<SqlType> = res.iter().map(|b| b.ty).collect();
        if let Some(e) = &els {
            types.push(e.ty);
        }
        let t = functions::common_type(&types).ok_or_else(|| {
            PgError::new(sqlstate::DATATYPE_MISMATCH, "CASE types cannot be matched")
        })?;
        let t = t.base();
        let (operand, cmp_t) = match op {
            Some(o) => {
                let mut ts = vec![o.ty];
                ts.extend(conds.iter().map(|c| c.ty));
                let ct = functions::common_type(&ts).ok_or_else(|| {
                    PgError::new(sqlstate::DATATYPE_MISMATCH, "CASE types cannot be matched")
                })?;
                (Some(Box::new(self.coerce_operand(o, ct)?)), Some(ct))
            }
            None => (None, None),
        };
        let mut whens = Vec::with_capacity(conds.len());
        for (c, r) in conds.into_iter().zip(res) {
            let c = match cmp_t {
                Some(ct) => self.coerce_operand(c, ct)?,
                None => require_bool(c, self.params, "CASE/WHEN")?,
            };
            whens.push((c, coerce(r, t, self.params)?));
        }
        let else_result = match els {
            Some(e) => Some(Box::new(coerce(e, t, self.params)?)),
            None => None,
        };
        Ok(BoundExpr {
            expr: Expr::Case {
                operand,
                whens,
                else_result,
            },
            ty: t,
        })
    }

    fn function(&mut self, f: &ast::Function) -> PgResult<BoundExpr> {
        let name = match f.name.0.last() {
            Some(i) => ident_name(i),
            None => return Err(PgError::syntax("empty function name")),
        };
        if !f.within_group.is_empty() {
            return self.ordered_set_aggregate(f, &name);
        }
        // `s.f(…)`: a built-in for pg_catalog, a user function of `s`
        // otherwise (`crate::parse_func`).
        let schema = match f.name.0.as_slice() {
            [_] => None,
            [s, _] | [_, s, _] => Some(ident_name(s)),
            _ => {
                return Err(PgError::syntax(format!(
                    "improper qualified name (too many dotted names): {}",
                    f.name
                )))
            }
        };
        let schema = schema.as_deref();
        let mut agg_order: Vec<ast::OrderByExpr> = Vec::new();
        let (args, distinct, star) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false, false),
            ast::FunctionArguments::Subquery(q) => {
                if f.name.0.len() == 1 && name == "array" {
                    let Some(h) = self.hook.as_deref_mut() else {
                        return Err(unsupported_expr("subquery"));
                    };
                    return h.sublink(Sublink::Array(q), self.params);
                }
                return Err(unsupported_expr("subquery"));
            }
            ast::FunctionArguments::List(list) => {
                for c in &list.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(keys) => agg_order = keys.clone(),
                        _ => return Err(unsupported_expr("function argument clauses")),
                    }
                }
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                if list
                    .args
                    .iter()
                    .any(|a| matches!(a, ast::FunctionArg::Named { .. }))
                {
                    return self.call_named(schema, &name, &list.args);
                }
                let mut args = Vec::new();
                let mut star = false;
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => args.push(e),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        _ => {
                            return Err(unsupported_expr(
                                "named or qualified-wildcard function argument",
                            ))
                        }
                    }
                }
                (args, distinct, star)
            }
        };
        if let Some(over) = &f.over {
            return self.window_function(
                &name,
                &args,
                distinct,
                star,
                AggClauses {
                    filter: f.filter.as_deref(),
                    order: &agg_order,
                },
                over,
            );
        }
        if name == "grouping" && self.grouping.is_some() && !args.is_empty() {
            return self.grouping_call(&args);
        }
        if AggFunc::ordered_set(&name, false).is_some() && schema.is_none_or(|s| s == "pg_catalog")
        {
            // Without WITHIN GROUP no signature matches (PostgreSQL's 42883).
            let mut types = Vec::with_capacity(args.len());
            for a in &args {
                types.push(self.bind(a)?.ty);
            }
            return Err(functions::no_function(&name, &types));
        }
        if let Some(agg) = AggFunc::from_name(&name) {
            return self.aggregate(
                agg,
                &name,
                &args,
                distinct,
                star,
                AggClauses {
                    filter: f.filter.as_deref(),
                    order: &agg_order,
                },
            );
        }
        if f.filter.is_some() {
            return Err(PgError::syntax(format!(
                "FILTER specified, but {name} is not an aggregate function"
            )));
        }
        if !agg_order.is_empty() {
            return Err(PgError::syntax(format!(
                "ORDER BY specified, but {name} is not an aggregate function"
            )));
        }
        if star {
            return Err(PgError::syntax(format!(
                "{name}(*) specified, but {name} is not an aggregate function"
            )));
        }
        if distinct {
            return Err(PgError::syntax(format!(
                "DISTINCT specified, but {name} is not an aggregate function"
            )));
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.bind(a)?);
        }
        if name == "pg_typeof" && bound.len() == 1 {
            let t = bound[0].ty;
            let shown = if t == SqlType::Unknown {
                "unknown".to_string()
            } else {
                t.pg_name()
            };
            return Ok(BoundExpr {
                expr: Expr::Const(Value::Text(Arc::from(shown))),
                ty: SqlType::Text,
            });
        }
        // A type name called as a function is a cast (`date(ts)`,
        // `numeric(x)`), when no function of that name exists.
        if bound.len() == 1
            && schema.is_none()
            && functions::resolve_function(&name, &[bound[0].ty]).is_err()
            && crate::parse_func::resolve_user(&name, None, &[bound[0].ty]).is_none()
        {
            if let Some(to) = SqlType::from_name(&name).filter(|t| *t != SqlType::Unknown) {
                let b = bound.pop().ok_or_else(|| PgError::internal("argument"))?;
                return self.explicit_cast(b, to);
            }
        }
        self.call_in(schema, &name, bound)
    }

    fn call(&mut self, name: &str, args: Vec<BoundExpr>) -> PgResult<BoundExpr> {
        self.call_in(None, name, args)
    }

    /// A call of `name` (qualified by `schema`): a built-in unless the
    /// schema is a user's, else a user function.
    fn call_in(
        &mut self,
        schema: Option<&str>,
        name: &str,
        args: Vec<BoundExpr>,
    ) -> PgResult<BoundExpr> {
        let types: Vec<SqlType> = args.iter().map(|b| b.ty).collect();
        let builtin = match schema {
            None | Some("pg_catalog") => functions::resolve_function(name, &types),
            Some(s) => Err(crate::parse_func::undefined_routine(&format!(
                "{}({})",
                crate::parse_func::qualified(Some(s), name),
                types
                    .iter()
                    .map(|t| t.pg_base_name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        };
        let user_schema = schema.filter(|s| *s != "pg_catalog");
        let sig = match builtin {
            Ok(sig) => sig,
            Err(e) if schema == Some("pg_catalog") => return Err(e),
            Err(e) => match crate::parse_func::resolve_user(name, user_schema, &types) {
                Some(r) => {
                    let crate::parse_func::UserCall {
                        sig,
                        defaults,
                        variadic_from,
                    } = r?;
                    let mut args = args;
                    if let Some(vi) = variadic_from {
                        // The trailing arguments become the VARIADIC array.
                        let elem_ty = sig.arg_types.get(vi).and_then(|t| t.elem());
                        let (Some(elem_ty), true) = (elem_ty, vi < args.len()) else {
                            return Err(PgError::internal("variadic call"));
                        };
                        let mut elems = Vec::with_capacity(args.len() - vi);
                        for b in args.split_off(vi) {
                            elems.push(BoundExpr {
                                expr: self.coerce_operand_func(b, elem_ty)?,
                                ty: elem_ty,
                            });
                        }
                        args.push(self.array_constructor(elems)?);
                    }
                    for d in defaults {
                        args.push(self.bind(&d)?);
                    }
                    let mut out = Vec::with_capacity(args.len());
                    for (b, t) in args.into_iter().zip(&sig.arg_types) {
                        out.push(self.coerce_operand_func(b, *t)?);
                    }
                    return Ok(BoundExpr {
                        expr: crate::parse_func::inline_or_call(sig.func, out),
                        ty: sig.ret,
                    });
                }
                None => return Err(e),
            },
        };
        let mut out = Vec::with_capacity(args.len());
        for (b, t) in args.into_iter().zip(&sig.arg_types) {
            out.push(self.coerce_operand_func(b, *t)?);
        }
        Ok(BoundExpr {
            expr: Expr::Func {
                func: sig.func,
                args: out,
            },
            ty: sig.ret,
        })
    }

    /// A call in named (`f(a => 1)`, `f(a := 1)`) or mixed notation: user
    /// functions only, as PostgreSQL's built-ins mostly have no parameter
    /// names.
    fn call_named(
        &mut self,
        schema: Option<&str>,
        name: &str,
        list: &[ast::FunctionArg],
    ) -> PgResult<BoundExpr> {
        let mut bound = Vec::with_capacity(list.len());
        let mut names = Vec::with_capacity(list.len());
        // `f(…, VARIADIC array)`: the array is the variadic parameter.
        let mut variadic_at = None;
        for (k, a) in list.iter().enumerate() {
            if let ast::FunctionArg::Named {
                name: n,
                arg: ast::FunctionArgExpr::Expr(e),
                ..
            } = a
            {
                if n.value == crate::parser::VARIADIC_ARG {
                    if k + 1 != list.len() {
                        return Err(PgError::syntax("syntax error at or near \"VARIADIC\""));
                    }
                    variadic_at = Some(k);
                    names.push(None);
                    bound.push(self.bind(e)?);
                    continue;
                }
            }
            let (n, e) = match a {
                ast::FunctionArg::Named {
                    name,
                    arg: ast::FunctionArgExpr::Expr(e),
                    operator:
                        ast::FunctionArgOperator::RightArrow | ast::FunctionArgOperator::Assignment,
                } => (Some(name.value.clone()), e),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    if names.iter().any(Option::is_some) {
                        return Err(PgError::syntax(
                            "positional argument cannot follow named argument",
                        ));
                    }
                    (None, e)
                }
                _ => return Err(unsupported_expr("this kind of function argument")),
            };
            names.push(n);
            bound.push(self.bind(e)?);
        }
        let types: Vec<(Option<String>, SqlType)> =
            names.into_iter().zip(bound.iter().map(|b| b.ty)).collect();
        let (sig, order) =
            crate::parse_func::resolve_user_named(name, schema, &types, variadic_at)?;
        let mut given: Vec<Option<BoundExpr>> = bound.into_iter().map(Some).collect();
        let mut out = Vec::with_capacity(order.len());
        for (src, t) in order.into_iter().zip(&sig.arg_types) {
            let b =
                match src {
                    crate::parse_func::ArgSource::Given(i) => given
                        .get_mut(i)
                        .and_then(Option::take)
                        .ok_or_else(|| PgError::internal("argument used twice"))?,
                    crate::parse_func::ArgSource::Default(d) => self.bind(&d)?,
                };
            out.push(self.coerce_operand_func(b, *t)?);
        }
        Ok(BoundExpr {
            expr: crate::parse_func::inline_or_call(sig.func, out),
            ty: sig.ret,
        })
    }

    fn coerce_operand_func(&mut self, b: BoundExpr, t: SqlType) -> PgResult<Expr> {
        match (b.ty, t) {
            // bpchar → text drops trailing spaces.
            (SqlType::Char(_), SqlType::Text) => Ok(bpchar_strip(b.expr)),
            (a, t) if a.is_text_like() && t.is_text_like() => Ok(b.expr),
            _ => coerce(b, t, self.params),
        }
    }

    fn aggregate(
        &mut self,
        func: AggFunc,
        name: &str,
        args: &[&ast::Expr],
        distinct: bool,
        star: bool,
        clauses: AggClauses<'_>,
    ) -> PgResult<BoundExpr> {
        self.check_aggregate_allowed()?;
        let call = self.agg_call(func, name, args, distinct, star, clauses, false)?;
        self.add_aggregate(call)
    }

    /// 42803 for an aggregate inside another one's arguments, or where no
    /// grouping is under way (WHERE).
    fn check_aggregate_allowed(&self) -> PgResult<()> {
        if self.in_agg {
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate function calls cannot be nested",
            ));
        }
        if self.grouping.is_none() {
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate functions are not allowed in WHERE",
            ));
        }
        Ok(())
    }

    /// `call` as one of the query's aggregates (one slot per distinct call).
    fn add_aggregate(&mut self, call: AggCall) -> PgResult<BoundExpr> {
        let ty = call.ty;
        let grouping = self
            .grouping
            .as_deref_mut()
            .ok_or_else(|| PgError::internal("no grouping"))?;
        let idx = match grouping.aggs.iter().position(|a| *a == call) {
            Some(i) => i,
            None => {
                grouping.aggs.push(call);
                grouping.aggs.len() - 1
            }
        };
        Ok(BoundExpr {
            expr: Expr::Agg(idx),
            ty,
        })
    }

    /// `percentile_cont(f) WITHIN GROUP (ORDER BY x)`, `percentile_disc`,
    /// `mode()`: an aggregate of the WITHIN GROUP key (float8 or interval
    /// for percentile_cont), fed in that order, whose direct argument (a
    /// fraction, or an array of them) is its further argument.
    fn ordered_set_aggregate(&mut self, f: &ast::Function, name: &str) -> PgResult<BoundExpr> {
        if f.over.is_some() {
            return Err(PgError::unsupported(format!(
                "OVER is not supported for ordered-set aggregate {name}"
            )));
        }
        let direct: Vec<&ast::Expr> = match &f.args {
            ast::FunctionArguments::None => Vec::new(),
            ast::FunctionArguments::List(list)
                if list.clauses.is_empty() && list.duplicate_treatment.is_none() =>
            {
                let mut v = Vec::new();
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => v.push(e),
                        _ => return Err(unsupported_expr("this ordered-set aggregate argument")),
                    }
                }
                v
            }
            _ => return Err(unsupported_expr("this ordered-set aggregate argument")),
        };
        self.check_aggregate_allowed()?;
        let was_in_agg = self.in_agg;
        self.in_agg = true;
        let parts = self.ordered_set_parts(f, name, &direct);
        self.in_agg = was_in_agg;
        let call = parts?;
        self.add_aggregate(call)
    }

    /// 42883 for a WITHIN GROUP call no ordered-set aggregate accepts,
    /// naming the direct arguments' and the keys' types as PostgreSQL does.
    fn no_ordered_set(
        &mut self,
        f: &ast::Function,
        name: &str,
        direct: &[SqlType],
    ) -> PgResult<PgError> {
        let mut types = direct.to_vec();
        for k in &f.within_group {
            types.push(self.bind(&k.expr)?.ty);
        }
        Ok(functions::no_function(name, &types))
    }

    /// The parts of an ordered-set aggregate call, bound over the input row.
    fn ordered_set_parts(
        &mut self,
        f: &ast::Function,
        name: &str,
        direct: &[&ast::Expr],
    ) -> PgResult<AggCall> {
        let mut direct_args = Vec::new();
        let mut direct_types = Vec::new();
        let mut multi = false;
        for d in direct {
            let b = self.bind(d)?;
            direct_types.push(b.ty);
            multi = matches!(b.ty, SqlType::Array(_));
            let want = if multi {
                SqlType::Array(pgtypes::sqltype::ArrayElem::Float8)
            } else {
                SqlType::Float8
            };
            let fraction =
                matches!(b.ty, SqlType::Unknown) || functions::can_coerce_implicit(b.ty, want);
            direct_args.push(if fraction {
                Some(self.coerce_operand_func(b, want)?)
            } else {
                None
            });
        }
        let func = match AggFunc::ordered_set(name, multi) {
            Some(func)
                if direct_args.len() == usize::from(func != AggFunc::Mode)
                    && direct_args.iter().all(Option::is_some)
                    && f.within_group.len() == 1 =>
            {
                func
            }
            _ => return Err(self.no_ordered_set(f, name, &direct_types)?),
        };
        let direct_args: Vec<Expr> = direct_args.into_iter().flatten().collect();
        let key = &f.within_group[0];
        let (_, filter, order_by) =
            self.aggregate_clauses(func, &[], f.filter.as_deref(), std::slice::from_ref(key))?;
        let b = self.bind(&key.expr)?;
        let b = match (func, b.ty) {
            (AggFunc::PercentileCont { .. }, SqlType::Interval) => b,
            (AggFunc::PercentileCont { .. }, t)
                if t == SqlType::Unknown || functions::can_coerce_implicit(t, SqlType::Float8) =>
            {
                self.coerce_to(b, SqlType::Float8)?
            }
            (AggFunc::PercentileCont { .. }, _) => {
                return Err(self.no_ordered_set(f, name, &direct_types)?)
            }
            (_, SqlType::Unknown) => self.coerce_to(b, SqlType::Text)?,
            _ => b,
        };
        let ty = match func.result_type(b.ty) {
            Ok(t) => t,
            Err(_) => return Err(self.no_ordered_set(f, name, &direct_types)?),
        };
        Ok(AggCall {
            func,
            arg: Some(b.expr),
            arg_ty: b.ty,
            distinct: false,
            ty,
            extra_args: direct_args,
            filter,
            order_by,
        })
    }

    /// Binds an aggregate call's parts; `window`: it is a window
    /// aggregate, whose arguments may hold plain aggregates.
    #[allow(clippy::too_many_arguments)]
    fn agg_call(
        &mut self,
        func: AggFunc,
        name: &str,
        args: &[&ast::Expr],
        distinct: bool,
        star: bool,
        clauses: AggClauses<'_>,
        window: bool,
    ) -> PgResult<AggCall> {
        let AggClauses { filter, order } = clauses;
        let was_in_agg = self.in_agg;
        let (func, arg, arg_ty) = if star {
            if func != AggFunc::Count || !args.is_empty() {
                return Err(PgError::syntax(format!(
                    "{name}(*) must be used to call a parameterless aggregate function"
                )));
            }
            (AggFunc::CountStar, None, SqlType::Unknown)
        } else {
            let want = if matches!(
                func,
                AggFunc::StringAgg | AggFunc::JsonObjectAgg { .. } | AggFunc::Regr(_)
            ) {
                2
            } else {
                1
            };
            if args.len() != want {
                let types: Vec<&str> = Vec::new();
                return Err(PgError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("function {}({}) does not exist", name, types.join(", ")),
                ));
            }
            self.in_agg = !window;
            let b = self.bind(args[0]);
            self.in_agg = was_in_agg;
            let mut b = b?;
            if b.ty == SqlType::Unknown {
                let t = match func {
                    AggFunc::Count
                    | AggFunc::Min
                    | AggFunc::Max
                    | AggFunc::StringAgg
                    | AggFunc::ArrayAgg
                    | AggFunc::JsonAgg { .. }
                    | AggFunc::JsonObjectAgg { .. } => SqlType::Text,
                    AggFunc::BoolAnd | AggFunc::BoolOr => SqlType::Bool,
                    _ => SqlType::Float8,
                };
                b = self.coerce_to(b, t)?;
            }
            if matches!(b.ty, SqlType::Char(_)) && matches!(func, AggFunc::Min | AggFunc::Max) {
                b.ty = SqlType::Char(0);
            }
            if matches!(func, AggFunc::Regr(_)) {
                // corr(float8, float8) and its family: numbers are cast.
                self.in_agg = !window;
                let x = self.bind(args[1]);
                self.in_agg = was_in_agg;
                let x = x?.ty;
                let number =
                    |t: SqlType| t == SqlType::Unknown || functions::numeric_rank(t).is_some();
                if !number(b.ty) || !number(x) {
                    return Err(functions::no_function(name, &[b.ty, x]));
                }
                b = self.coerce_to(b, SqlType::Float8)?;
            }
            let ty = b.ty;
            (func, Some(b.expr), ty)
        };
        let ty = func.result_type(arg_ty)?;
        // The other parts of the call are over the input row too.
        self.in_agg = !window;
        let rest = self.aggregate_clauses(func, args, filter, order);
        self.in_agg = was_in_agg;
        let (extra_args, filter, order_by) = rest?;
        if distinct && order_by.iter().any(|o| Some(&o.expr) != arg.as_ref()) {
            return Err(PgError::new(
                "42P10",
                "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
            ));
        }
        Ok(AggCall {
            func,
            arg,
            arg_ty,
            distinct,
            ty,
            extra_args,
            filter,
            order_by,
        })
    }
}

impl Binder<'_> {
    /// Binds string_agg's delimiter, FILTER and ORDER BY of an aggregate call.
    #[allow(clippy::type_complexity)]
    fn aggregate_clauses(
        &mut self,
        func: AggFunc,
        args: &[&ast::Expr],
        filter: Option<&ast::Expr>,
        order: &[ast::OrderByExpr],
    ) -> PgResult<(Vec<Expr>, Option<Expr>, Vec<AggOrder>)> {
        let mut extra = Vec::new();
        if func == AggFunc::StringAgg {
            if let Some(d) = args.get(1) {
                let b = self.bind(d)?;
                extra.push(self.coerce_operand_func(b, SqlType::Text)?);
            }
        }
        if let AggFunc::Regr(_) = func {
            if let Some(d) = args.get(1) {
                let b = self.bind(d)?;
                extra.push(self.coerce_operand_func(b, SqlType::Float8)?);
            }
        }
        if let AggFunc::JsonObjectAgg { .. } = func {
            if let Some(d) = args.get(1) {
                let b = self.bind(d)?;
                let b = if b.ty == SqlType::Unknown {
                    self.coerce_to(b, SqlType::Text)?
                } else {
                    b
                };
                extra.push(b.expr);
            }
        }
        let filter = match filter {
            Some(f) => {
                let b = self.bind(f)?;
                Some(require_bool(b, self.params, "FILTER")?)
            }
            None => None,
        };
        let mut keys = Vec::with_capacity(order.len());
        for o in order {
            let b = self.bind(&o.expr)?;
            let expr = if b.ty == SqlType::Unknown {
                coerce(b, SqlType::Text, self.params)?
            } else {
                b.expr
            };
            let desc = o.asc == Some(false);
            keys.push(AggOrder {
                expr,
                desc,
                nulls_first: o.nulls_first.unwrap_or(desc),
            });
        }
        Ok((extra, filter, keys))
    }

    /// Binds a call to a known function with fixed argument types.
    fn call_func(
        &mut self,
        func: Func,
        args: Vec<BoundExpr>,
        types: &[SqlType],
        ret: SqlType,
    ) -> PgResult<BoundExpr> {
        let mut out = Vec::with_capacity(args.len());
        for (b, t) in args.into_iter().zip(types) {
            out.push(self.coerce_operand_func(b, *t)?);
        }
        let all_const = out.iter().all(|e| matches!(e, Expr::Const(_)));
        let expr = Expr::Func { func, args: out };
        // Fold calls over constants that do not depend on the session.
        if all_const && !matches!(func, Func::Unnest) {
            let v = eval(&expr, &[], &[], &mut StaticContext)?;
            return Ok(BoundExpr {
                expr: Expr::Const(v),
                ty: ret,
            });
        }
        Ok(BoundExpr { expr, ty: ret })
    }

    /// `INTERVAL '…' [unit]`.
    fn interval_literal(&mut self, iv: &ast::Interval) -> PgResult<BoundExpr> {
        let b = self.bind(&iv.value)?;
        let text = match &b.expr {
            Expr::Const(Value::Text(s)) => s.to_string(),
            Expr::Const(v) if !v.is_null() => v.to_text_string(),
            _ => {
                let e = coerce(b, SqlType::Interval, self.params)?;
                return Ok(BoundExpr {
                    expr: e,
                    ty: SqlType::Interval,
                });
            }
        };
        // A trailing unit qualifies a bare number: INTERVAL '2' DAY.
        let text = match &iv.leading_field {
            Some(f) if text.trim().parse::<f64>().is_ok() => {
                format!("{} {}", text.trim(), f.to_string().to_lowercase())
            }
            _ => text,
        };
        Ok(BoundExpr {
            expr: Expr::Const(Value::from_text(SqlType::Interval, &text)?),
            ty: SqlType::Interval,
        })
    }

    /// `arr[…][…]…`: an element when every subscript is an index, else a
    /// slice, where an index `i` means `1:i` (PostgreSQL's rule).
    fn subscript(&mut self, arr: BoundExpr, subs: &[&ast::Subscript]) -> PgResult<BoundExpr> {
        let SqlType::Array(elem) = arr.ty else {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    arr.ty.pg_name()
                ),
            ));
        };
        if subs.len() > pgtypes::array::MAXDIM {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "number of array dimensions ({}) exceeds the maximum allowed ({})",
                    subs.len(),
                    pgtypes::array::MAXDIM
                ),
            ));
        }
        let at = arr.ty;
        let int = |v: i32| BoundExpr {
            expr: Expr::Const(Value::Int4(v)),
            ty: SqlType::Int4,
        };
        let slice = subs
            .iter()
            .any(|s| matches!(s, ast::Subscript::Slice { .. }));
        let mut args = vec![arr];
        for sub in subs {
            match sub {
                ast::Subscript::Index { index } if !slice => args.push(self.bind(index)?),
                ast::Subscript::Index { index } => {
                    args.push(int(1));
                    args.push(self.bind(index)?);
                }
                ast::Subscript::Slice {
                    lower_bound,
                    upper_bound,
                    stride: None,
                } => {
                    for (b, dflt) in [(lower_bound, i32::MIN), (upper_bound, i32::MAX)] {
                        args.push(match b {
                            Some(x) => self.bind(x)?,
                            None => int(dflt),
                        });
                    }
                }
                _ => return Err(unsupported_expr("array slice with a stride")),
            }
        }
        let mut types = vec![SqlType::Int4; args.len()];
        types[0] = at;
        if slice {
            self.call_func(Func::ArraySlice, args, &types, at)
        } else {
            self.call_func(Func::ArraySubscript, args, &types, elem.sql_type())
        }
    }

    /// `ARRAY[e1, e2, …]`: the elements' common type decides the array type.
    fn array_constructor(&mut self, elems: Vec<BoundExpr>) -> PgResult<BoundExpr> {
        if elems.is_empty() {
            return Err(
                PgError::new("42P18", "cannot determine type of empty array").with_hint(
                    "Explicitly cast to the desired type, for example ARRAY[]::integer[].",
                ),
            );
        }
        let types: Vec<SqlType> = elems.iter().map(|b| b.ty).collect();
        let t = functions::common_type(&types).ok_or_else(|| {
            PgError::new(sqlstate::DATATYPE_MISMATCH, "ARRAY types cannot be matched")
        })?;
        if let SqlType::Array(elem) = t {
            // ARRAY[[…], […]] / ARRAY[ARRAY[…], …]: one more dimension.
            let types = vec![t; elems.len()];
            return self.call_func(Func::StackArrays(elem), elems, &types, t);
        }
        let t = if t == SqlType::Unknown {
            SqlType::Text
        } else {
            t.base()
        };
        let Some(at @ SqlType::Array(elem)) = t.array_of() else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("could not find array type for data type {}", t.pg_name()),
            ));
        };
        let types = vec![elem.sql_type(); elems.len()];
        self.call_func(Func::MakeArray(elem), elems, &types, at)
    }

    /// `x op ANY(array)` / `x op ALL(array)`.
    fn array_compare(
        &mut self,
        op: BinOp,
        all: bool,
        l: BoundExpr,
        r: BoundExpr,
    ) -> PgResult<BoundExpr> {
        let elem_ty = match (l.ty, r.ty) {
            (_, SqlType::Array(e)) => e.sql_type(),
            (SqlType::Unknown, SqlType::Unknown) => SqlType::Text,
            (t, SqlType::Unknown) => t.base(),
            (_, other) => {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "op ANY/ALL (array) requires array on right side, not {}",
                        other.pg_name()
                    ),
                ))
            }
        };
        let arr_ty = elem_ty
            .array_of()
            .ok_or_else(|| no_operator(op_symbol(op), l.ty, r.ty))?;
        // The comparison must exist between x and an element.
        let probe_l = BoundExpr {
            expr: Expr::Const(Value::Null),
            ty: l.ty,
        };
        let probe_r = BoundExpr {
            expr: Expr::Const(Value::Null),
            ty: elem_ty,
        };
        self.compare(op, probe_l, probe_r)?;
        // bpchar against text elements: as text, trailing spaces dropped.
        let l_expr = if matches!(l.ty, SqlType::Char(_)) && !matches!(elem_ty, SqlType::Char(_)) {
            self.text_operand(l)?
        } else {
            self.coerce_operand(l, elem_ty)?
        };
        let r_expr = self.coerce_operand(r, arr_ty)?;
        self.call_func(
            Func::ArrayCmp { op, all },
            vec![
                BoundExpr {
                    expr: l_expr,
                    ty: elem_ty,
                },
                BoundExpr {
                    expr: r_expr,
                    ty: arr_ty,
                },
            ],
            &[elem_ty, arr_ty],
            SqlType::Bool,
        )
    }

    /// `||` with an array on either side: array_cat, array_append or array_prepend.
    fn array_concat(&mut self, l: BoundExpr, r: BoundExpr) -> PgResult<BoundExpr> {
        let (lt, rt) = (l.ty, r.ty);
        let (func, types, ret) = match (lt, rt) {
            (a @ SqlType::Array(_), b @ SqlType::Array(_)) => {
                if a != b {
                    return Err(no_operator("||", lt, rt));
                }
                (Func::ArrayCat, [a, a], a)
            }
            (a @ SqlType::Array(_), SqlType::Unknown)
            | (SqlType::Unknown, a @ SqlType::Array(_)) => (Func::ArrayCat, [a, a], a),
            (a @ SqlType::Array(e), _) => (Func::ArrayAppend, [a, e.sql_type()], a),
            (_, a @ SqlType::Array(e)) => (Func::ArrayPrepend, [e.sql_type(), a], a),
            _ => return Err(no_operator("||", lt, rt)),
        };
        self.call_func(func, vec![l, r], &types, ret)
    }

    /// Arithmetic involving date, timestamp(tz) or interval: None when
    /// neither side is one of them (the numeric rules apply).
    fn datetime_arith(
        &mut self,
        op: BinOp,
        l: &BoundExpr,
        r: &BoundExpr,
    ) -> PgResult<Option<BoundExpr>> {
        use SqlType as T;
        let (lt, rt) = (l.ty, r.ty);
        let dt = |t: SqlType| matches!(t, T::Date | T::Timestamp | T::TimestampTz | T::Interval);
        if !dt(lt) && !dt(rt) {
            return Ok(None);
        }
        // An untyped literal: a timestamp plus '…' is an interval, interval
        // times '…' a number; otherwise it takes the other side's type.
        let resolve = |me: SqlType, other: SqlType| -> PgResult<SqlType> {
            if me != T::Unknown {
                return Ok(me);
            }
            Ok(match (op, other) {
                (BinOp::Add, T::Timestamp | T::TimestampTz) => T::Interval,
                (BinOp::Mul | BinOp::Div, T::Interval) => T::Float8,
                (BinOp::Add, T::Date) => {
                    return Err(PgError::new(
                        "42725",
                        format!("operator is not unique: {} + unknown", other.pg_base_name()),
                    )
                    .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts."))
                }
                _ => other,
            })
        };
        let (a, b) = (resolve(lt, rt)?, resolve(rt, lt)?);
        let int = |t: SqlType| matches!(t, T::Int2 | T::Int4);
        let ts = |t: SqlType| matches!(t, T::Timestamp | T::TimestampTz);
        let (ta, tb, ret) = match (op, a, b) {
            (BinOp::Add | BinOp::Sub, T::Date, i) if int(i) => (T::Date, T::Int4, T::Date),
            (BinOp::Add, i, T::Date) if int(i) => (T::Int4, T::Date, T::Date),
            (BinOp::Sub, T::Date, T::Date) => (T::Date, T::Date, T::Int4),
            (BinOp::Add | BinOp::Sub, T::Date, T::Interval) => {
                (T::Timestamp, T::Interval, T::Timestamp)
            }
            (BinOp::Add, T::Interval, T::Date) => (T::Interval, T::Timestamp, T::Timestamp),
            (BinOp::Add | BinOp::Sub, t, T::Interval) if ts(t) => (t, T::Interval, t),
            (BinOp::Add, T::Interval, t) if ts(t) => (T::Interval, t, t),
            (BinOp::Sub, x, y) if (ts(x) || x == T::Date) && (ts(y) || y == T::Date) => {
                let t = if x == T::TimestampTz || y == T::TimestampTz {
                    T::TimestampTz
                } else {
                    T::Timestamp
                };
                (t, t, T::Interval)
            }
            (BinOp::Add | BinOp::Sub, T::Interval, T::Interval) => {
                (T::Interval, T::Interval, T::Interval)
            }
            (BinOp::Mul | BinOp::Div, T::Interval, n) if n.is_numeric_category() => {
                (T::Interval, T::Float8, T::Interval)
            }
            (BinOp::Mul, n, T::Interval) if n.is_numeric_category() => {
                (T::Float8, T::Interval, T::Interval)
            }
            _ => return Err(no_operator(op_symbol(op), lt, rt)),
        };
        let lx = coerce(l.clone(), ta, self.params)?;
        let rx = coerce(r.clone(), tb, self.params)?;
        let expr = fold_const(Expr::Binary {
            op,
            left: Box::new(lx),
            right: Box::new(rx),
        })?;
        Ok(Some(BoundExpr { expr, ty: ret }))
    }
}

/// FILTER and ORDER BY of an aggregate call, as written.
#[derive(Clone, Copy)]
struct AggClauses<'a> {
    filter: Option<&'a ast::Expr>,
    order: &'a [ast::OrderByExpr],
}

fn is_array(t: SqlType) -> bool {
    matches!(t, SqlType::Array(_))
}

fn is_datetime(t: SqlType) -> bool {
    matches!(t, SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz)
}

/// `NOT b` of a boolean.
fn not(b: BoundExpr) -> BoundExpr {
    BoundExpr {
        expr: Expr::Unary {
            op: UnaryOp::Not,
            arg: Box::new(b.expr),
        },
        ty: SqlType::Bool,
    }
}

/// bpchar → text: trailing spaces are dropped (folded for constants).
fn bpchar_strip(e: Expr) -> Expr {
    match e {
        Expr::Const(Value::Text(s)) => Expr::Const(Value::Text(Arc::from(s.trim_end_matches(' ')))),
        e => Expr::Func {
            func: Func::BpcharStrip,
            args: vec![e],
        },
    }
}

fn negate(v: &Value) -> PgResult<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int2(x) => Value::Int2(
            x.checked_neg()
                .ok_or_else(|| value::int_out_of_range(SqlType::Int2))?,
        ),
        Value::Int4(x) => Value::Int4(
            x.checked_neg()
                .ok_or_else(|| value::int_out_of_range(SqlType::Int4))?,
        ),
        Value::Int8(x) => Value::Int8(
            x.checked_neg()
                .ok_or_else(|| value::int_out_of_range(SqlType::Int8))?,
        ),
        Value::Numeric(n) => Value::Numeric(n.checked_neg()?),
        Value::Float8(f) => Value::Float8(-f),
        Value::Interval(iv) => Value::Interval(iv.checked_neg()?),
        other => {
            return Err(PgError::internal(format!(
                "cannot negate {}",
                other.sql_type()
            )))
        }
    })
}

/// Evaluates a node now when all its operands are constants (and it has no
/// side effects), so `1 + 1` and `'a' = 'a'` cost nothing per row.
fn fold_const(e: Expr) -> PgResult<Expr> {
    if let Expr::Binary { left, right, .. } = &e {
        if matches!(**left, Expr::Const(_)) && matches!(**right, Expr::Const(_)) {
            let v = eval(&e, &[], &[], &mut StaticContext)?;
            return Ok(Expr::Const(v));
        }
    }
    Ok(e)
}

/// The column name a cast to `t` gives (FigureColname: the type name as
/// written, so `x::jsonb[]` is `jsonb`).
fn cast_column_name(t: SqlType) -> &'static str {
    match t {
        SqlType::Array(e) if !e.is_vector() => e.sql_type().typname(),
        other => other.typname(),
    }
}

/// The column name PostgreSQL gives a select-list item without an alias:
/// the column name, the function name, the cast's type name, or `?column?`.
pub fn output_name(ast: &ast::Expr) -> String {
    fn name(e: &ast::Expr) -> Option<String> {
        use ast::Expr as A;
        match e {
            A::Identifier(i) => Some(ident_name(i)),
            A::CompoundIdentifier(p) => p.last().map(ident_name),
            A::Function(f) => f.name.0.last().map(ident_name),
            A::Nested(x) => name(x),
            // A cast names its column after the type unless its operand has a
            // stronger name (FigureColname: a cast of a cast takes the outer type).
            A::Cast {
                expr, data_type, ..
            } => (!matches!(**expr, A::Cast { .. } | A::TypedString { .. }))
                .then(|| name(expr))
                .flatten()
                .or_else(|| {
                    Some(match SqlType::from_data_type(data_type) {
                        Ok(t) => cast_column_name(t).to_string(),
                        Err(_) => data_type.to_string().to_lowercase(),
                    })
                }),
            A::TypedString { data_type, .. } => Some(match SqlType::from_data_type(data_type) {
                Ok(t) => cast_column_name(t).to_string(),
                Err(_) => data_type.to_string().to_lowercase(),
            }),
            A::Value(ast::Value::Boolean(_)) => Some("bool".to_string()),
            A::Case { .. } => Some("case".to_string()),
            A::Substring { .. } => Some("substring".to_string()),
            A::Trim { .. } => Some("btrim".to_string()),
            A::Position { .. } => Some("position".to_string()),
            A::Ceil { .. } => Some("ceil".to_string()),
            A::Floor { .. } => Some("floor".to_string()),
            A::Exists { .. } => Some("exists".to_string()),
            A::Extract { .. } => Some("extract".to_string()),
            A::Interval(_) => Some("interval".to_string()),
            A::Array(_) => Some("array".to_string()),
            A::Subscript { expr, .. } => name(expr),
            A::SimilarTo { .. } => None,
            // A scalar subquery is named after its one output column.
            A::Subquery(q) => match q.body.as_ref() {
                ast::SetExpr::Select(s) => match s.projection.first() {
                    Some(ast::SelectItem::ExprWithAlias { alias, .. }) => Some(ident_name(alias)),
                    Some(ast::SelectItem::UnnamedExpr(e)) => name(e),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }
    name(ast).unwrap_or_else(|| "?column?".to_string())
}

/// An operand by reference where possible (columns, parameters and
/// constants are not cloned: the hot `aid = $1` path allocates nothing).
#[inline]
fn operand<'r>(
    e: &'r Expr,
    row: &'r [Value],
    params: &'r [Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Cow<'r, Value>> {
    Ok(match e {
        Expr::Const(v) => Cow::Borrowed(v),
        Expr::Column(i) | Expr::Agg(i) => Cow::Borrowed(row.get(*i).ok_or_else(|| bad_column(*i))?),
        Expr::Param(i) => Cow::Borrowed(params.get(*i).ok_or_else(|| no_param(*i))?),
        other => Cow::Owned(eval(other, row, params, ctx)?),
    })
}

/// Evaluates `e` over `row`, borrowing a column, parameter or constant
/// instead of cloning it (the per-row path of aggregate arguments).
#[inline]
pub fn eval_ref<'r>(
    e: &'r Expr,
    row: &'r [Value],
    params: &'r [Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Cow<'r, Value>> {
    operand(e, row, params, ctx)
}

fn bad_column(i: usize) -> PgError {
    PgError::internal(format!("column {i} is not in the row"))
}

fn no_param(i: usize) -> PgError {
    PgError::new("42P02", format!("there is no parameter ${}", i + 1))
}

/// Arithmetic on two values of the same (binder-unified) type; NULL in, NULL out.
pub fn arith(op: BinOp, a: &Value, b: &Value) -> PgResult<Value> {
    use Value as V;
    let div0 = || PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero");
    macro_rules! int_op {
        ($x:expr, $y:expr, $ctor:path, $ty:expr) => {{
            let (x, y) = ($x, $y);
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => {
                    if y == 0 {
                        return Err(div0());
                    }
                    x.checked_div(y)
                }
                BinOp::Mod => {
                    if y == 0 {
                        return Err(div0());
                    }
                    // MIN % -1 is 0 in PostgreSQL, not an overflow.
                    Some(x.checked_rem(y).unwrap_or(0))
                }
                _ => return Err(PgError::internal("bad arithmetic operator")),
            };
            $ctor(r.ok_or_else(|| value::int_out_of_range($ty))?)
        }};
    }
    Ok(match (a, b) {
        (V::Null, _) | (_, V::Null) => V::Null,
        (V::Int4(x), V::Int4(y)) => int_op!(*x, *y, V::Int4, SqlType::Int4),
        (V::Int8(x), V::Int8(y)) => int_op!(*x, *y, V::Int8, SqlType::Int8),
        (V::Int2(x), V::Int2(y)) => int_op!(*x, *y, V::Int2, SqlType::Int2),
        (V::Numeric(x), V::Numeric(y)) => V::Numeric(match op {
            BinOp::Add => x.checked_add(*y)?,
            BinOp::Sub => x.checked_sub(*y)?,
            BinOp::Mul => x.checked_mul(*y)?,
            BinOp::Div => x.checked_div(*y)?,
            BinOp::Mod => x.checked_rem(*y)?,
            _ => return Err(PgError::internal("bad arithmetic operator")),
        }),
        (V::Float8(x), V::Float8(y)) => {
            let (x, y) = (*x, *y);
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return Err(div0());
                    }
                    x / y
                }
                _ => return Err(PgError::internal("bad arithmetic operator")),
            };
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: overflow",
                ));
            }
            if r == 0.0
                && matches!(op, BinOp::Mul | BinOp::Div)
                && x != 0.0
                && y.is_finite()
                && (op == BinOp::Div || y != 0.0)
            {
                return Err(PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    "value out of range: underflow",
                ));
            }
            V::Float8(r)
        }
        (V::PgLsn(x), V::PgLsn(y)) if op == BinOp::Sub => {
            V::Numeric(Numeric::from_i128(*x as i128 - *y as i128))
        }
        (V::Date(_), _)
        | (_, V::Date(_))
        | (V::Interval(_), _)
        | (_, V::Interval(_))
        | (V::Timestamp(_) | V::TimestampTz(_), V::Timestamp(_) | V::TimestampTz(_)) => {
            datetime_arith(op, a, b)?
        }
        (x, y) => {
            // Mixed widths (should not happen after binding): promote and retry.
            let (tx, ty) = (x.sql_type(), y.sql_type());
            match (functions::numeric_rank(tx), functions::numeric_rank(ty)) {
                (Some(rx), Some(ry)) if rx != ry => {
                    let t = if rx > ry { tx } else { ty };
                    return arith(op, &value::cast(x, t)?, &value::cast(y, t)?);
                }
                _ => return Err(no_operator(op_symbol(op), tx, ty)),
            }
        }
    })
}

/// Date, timestamp and interval arithmetic on values the binder typed
/// (see `Binder::datetime_arith`).
fn datetime_arith(op: BinOp, a: &Value, b: &Value) -> PgResult<Value> {
    use pgtypes::datetime as dt;
    use pgtypes::interval as iv;
    use Value as V;
    let date_out = || PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range");
    let add_days = |d: i32, n: i64| -> PgResult<Value> {
        if d == dt::DATE_INFINITY || d == dt::DATE_NEG_INFINITY {
            return Ok(V::Date(d));
        }
        let r = d as i64 + n;
        if !dt::date_in_range(r) {
            return Err(date_out());
        }
        Ok(V::Date(r as i32))
    };
    let num = |v: &Value| -> f64 {
        match v {
            V::Float8(f) => *f,
            V::Numeric(n) => n.to_f64(),
            other => other.as_i64().unwrap_or(0) as f64,
        }
    };
    Ok(match (op, a, b) {
        (BinOp::Add, V::Date(d), n) | (BinOp::Add, n, V::Date(d)) if n.as_i64().is_some() => {
            add_days(*d, n.as_i64().unwrap_or(0))?
        }
        (BinOp::Sub, V::Date(d), n) if n.as_i64().is_some() => {
            add_days(*d, -n.as_i64().unwrap_or(0))?
        }
        (BinOp::Sub, V::Date(x), V::Date(y)) => {
            let inf = |d: i32| d == dt::DATE_INFINITY || d == dt::DATE_NEG_INFINITY;
            if inf(*x) || inf(*y) {
                return Err(PgError::new(
                    sqlstate::DATETIME_FIELD_OVERFLOW,
                    "cannot subtract infinite dates",
                ));
            }
            V::Int4(x - y)
        }
        (BinOp::Add, V::Timestamp(t), V::Interval(i))
        | (BinOp::Add, V::Interval(i), V::Timestamp(t)) => {
            V::Timestamp(iv::add_to_timestamp(*t, *i)?)
        }
        (BinOp::Add, V::TimestampTz(t), V::Interval(i))
        | (BinOp::Add, V::Interval(i), V::TimestampTz(t)) => {
            V::TimestampTz(iv::add_to_timestamp(*t, *i)?)
        }
        (BinOp::Sub, V::Timestamp(t), V::Interval(i)) => {
            V::Timestamp(iv::add_to_timestamp(*t, i.checked_neg()?)?)
        }
        (BinOp::Sub, V::TimestampTz(t), V::Interval(i)) => {
            V::TimestampTz(iv::add_to_timestamp(*t, i.checked_neg()?)?)
        }
        (BinOp::Sub, V::Timestamp(x) | V::TimestampTz(x), V::Timestamp(y) | V::TimestampTz(y)) => {
            V::Interval(iv::timestamp_diff(*x, *y)?)
        }
        (BinOp::Add, V::Interval(x), V::Interval(y)) => V::Interval(x.checked_add(*y)?),
        (BinOp::Sub, V::Interval(x), V::Interval(y)) => V::Interval(x.checked_sub(*y)?),
        (BinOp::Mul, V::Interval(x), n) | (BinOp::Mul, n, V::Interval(x)) => {
            V::Interval(x.mul_f64(num(n))?)
        }
        (BinOp::Div, V::Interval(x), n) => V::Interval(x.div_f64(num(n))?),
        _ => return Err(no_operator(op_symbol(op), a.sql_type(), b.sql_type())),
    })
}

/// LIKE matching (`%` any run, `_` one character, `\` escapes the next).
pub fn like_match(s: &str, p: &str, ci: bool) -> PgResult<bool> {
    crate::regexp::like_match(s, p, Some('\\'), ci)
}

fn truth(v: &Value) -> PgResult<Option<bool>> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        other => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument must be type boolean, not type {}",
                other.sql_type()
            ),
        )),
    }
}

fn compare_values(op: BinOp, a: &Value, b: &Value) -> Value {
    match op {
        BinOp::IsDistinctFrom | BinOp::IsNotDistinctFrom => {
            let same = match (a.is_null(), b.is_null()) {
                (true, true) => true,
                (true, false) | (false, true) => false,
                _ => value::cmp_sql(a, b) == Some(Ordering::Equal),
            };
            Value::Bool(same == (op == BinOp::IsNotDistinctFrom))
        }
        _ => match value::cmp_sql(a, b) {
            None => Value::Null,
            Some(o) => Value::Bool(cmp_holds(op, o)),
        },
    }
}

/// Whether comparison `op` (=, <>, <, <=, >, >=) holds for operands that
/// compare as `o`.
#[inline]
pub(crate) fn cmp_holds(op: BinOp, o: Ordering) -> bool {
    match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::NotEq => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::LtEq => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

/// Evaluates `expr` over `row` with bound parameter values.
pub fn eval(
    expr: &Expr,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Value> {
    Ok(match expr {
        Expr::Const(v) => v.clone(),
        Expr::Column(i) | Expr::Agg(i) => row.get(*i).ok_or_else(|| bad_column(*i))?.clone(),
        Expr::Param(i) => params.get(*i).ok_or_else(|| no_param(*i))?.clone(),
        Expr::ExecParam(k) => ctx.exec_param(*k)?,
        Expr::WindowFunc(_) | Expr::GroupingFunc(_) => {
            return Err(PgError::internal("unplanned window or grouping() call"))
        }
        Expr::SubPlan(sp) => {
            let mut args = Vec::with_capacity(sp.args.len());
            for a in &sp.args {
                args.push(eval(a, row, params, ctx)?);
            }
            let lhs = match &sp.lhs {
                Some(l) => eval(l, row, params, ctx)?,
                None => Value::Null,
            };
            ctx.subplan(sp.id, &args, &lhs)?
        }
        Expr::Binary { op, left, right } => match op {
            BinOp::And | BinOp::Or => {
                let is_and = *op == BinOp::And;
                let l = truth(&*operand(left, row, params, ctx)?)?;
                // Short-circuit: FALSE AND x = FALSE, TRUE OR x = TRUE.
                if l == Some(!is_and) {
                    return Ok(Value::Bool(!is_and));
                }
                let r = truth(&*operand(right, row, params, ctx)?)?;
                match (l, r) {
                    (_, Some(v)) if v != is_and => Value::Bool(v),
                    (Some(_), Some(_)) => Value::Bool(is_and),
                    _ => Value::Null,
                }
            }
            BinOp::Eq
            | BinOp::NotEq
            | BinOp::Lt
            | BinOp::LtEq
            | BinOp::Gt
            | BinOp::GtEq
            | BinOp::IsDistinctFrom
            | BinOp::IsNotDistinctFrom => {
                let a = operand(left, row, params, ctx)?;
                let b = operand(right, row, params, ctx)?;
                compare_values(*op, &a, &b)
            }
            BinOp::Concat => {
                let a = operand(left, row, params, ctx)?;
                let b = operand(right, row, params, ctx)?;
                match (&*a, &*b) {
                    (Value::Null, _) | (_, Value::Null) => Value::Null,
                    (Value::Bytea(x), Value::Bytea(y)) => {
                        crate::functions::check_alloc(x.len() + y.len())?;
                        let mut v = Vec::with_capacity(x.len() + y.len());
                        v.extend_from_slice(x);
                        v.extend_from_slice(y);
                        Value::Bytea(Arc::from(v))
                    }
                    (x, y) => {
                        let (xs, ys) = (x.as_str().unwrap_or(""), y.as_str().unwrap_or(""));
                        crate::functions::check_alloc(xs.len() + ys.len())?;
                        let mut s = String::with_capacity(xs.len() + ys.len());
                        s.push_str(xs);
                        s.push_str(ys);
                        Value::Text(Arc::from(s))
                    }
                }
            }
            _ => {
                let a = operand(left, row, params, ctx)?;
                let b = operand(right, row, params, ctx)?;
                arith(*op, &a, &b)?
            }
        },
        Expr::Unary { op, arg } => {
            let v = operand(arg, row, params, ctx)?;
            match op {
                UnaryOp::Neg => negate(&v)?,
                UnaryOp::Not => match truth(&v)? {
                    Some(b) => Value::Bool(!b),
                    None => Value::Null,
                },
            }
        }
        Expr::Func { func, args } => {
            if args.len() <= 3 {
                let mut buf = [Value::Null, Value::Null, Value::Null];
                for (slot, a) in buf.iter_mut().zip(args) {
                    *slot = eval(a, row, params, ctx)?;
                }
                functions::call(*func, &buf[..args.len()], ctx)?
            } else {
                let vals = args
                    .iter()
                    .map(|a| eval(a, row, params, ctx))
                    .collect::<PgResult<Vec<_>>>()?;
                functions::call(*func, &vals, ctx)?
            }
        }
        Expr::Cast { arg, to, mode } => {
            let v = operand(arg, row, params, ctx)?;
            value::cast_with(&v, *to, *mode)?
        }
        Expr::IsNull { arg, negated } => {
            let v = operand(arg, row, params, ctx)?;
            Value::Bool(v.is_null() != *negated)
        }
        Expr::IsBool {
            arg,
            value,
            negated,
        } => {
            let v = operand(arg, row, params, ctx)?;
            let is = truth(&v)? == Some(*value);
            Value::Bool(is != *negated)
        }
        Expr::InList { arg, list, negated } => {
            let a = operand(arg, row, params, ctx)?;
            if a.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            for item in list {
                let b = operand(item, row, params, ctx)?;
                match value::cmp_sql(&a, &b) {
                    Some(Ordering::Equal) => return Ok(Value::Bool(!*negated)),
                    None => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Value::Null
            } else {
                Value::Bool(*negated)
            }
        }
        Expr::Between {
            arg,
            low,
            high,
            negated,
        } => {
            let a = operand(arg, row, params, ctx)?;
            let lo = operand(low, row, params, ctx)?;
            let hi = operand(high, row, params, ctx)?;
            let ge = value::cmp_sql(&a, &lo).map(|o| o != Ordering::Less);
            let le = value::cmp_sql(&a, &hi).map(|o| o != Ordering::Greater);
            let r = match (ge, le) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            match r {
                Some(b) => Value::Bool(b != *negated),
                None => Value::Null,
            }
        }
        Expr::Like {
            arg,
            pattern,
            negated,
            case_insensitive,
        } => match eval_like(arg, pattern, *negated, *case_insensitive, row, params, ctx)? {
            Some(b) => Value::Bool(b),
            None => Value::Null,
        },
        Expr::Case {
            operand: op,
            whens,
            else_result,
        } => {
            let subject = match op {
                Some(o) => Some(eval(o, row, params, ctx)?),
                None => None,
            };
            for (w, t) in whens {
                let hit = match &subject {
                    Some(s) => {
                        let c = operand(w, row, params, ctx)?;
                        value::cmp_sql(s, &c) == Some(Ordering::Equal)
                    }
                    None => truth(&*operand(w, row, params, ctx)?)? == Some(true),
                };
                if hit {
                    return eval(t, row, params, ctx);
                }
            }
            match else_result {
                Some(e) => eval(e, row, params, ctx)?,
                None => Value::Null,
            }
        }
    })
}

/// Evaluates a condition: Some(true)/Some(false), None for NULL.
pub fn eval_bool(
    expr: &Expr,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Option<bool>> {
    match eval(expr, row, params, ctx)? {
        Value::Bool(b) => Ok(Some(b)),
        Value::Null => Ok(None),
        other => Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument of WHERE must be type boolean, not type {}",
                other.sql_type()
            ),
        )),
    }
}

/// A WHERE filter: true only when the condition is TRUE (NULL rejects).
///
/// The per-row path of every scan and join filter, so its common shapes
/// skip building a boolean [`Value`]: an AND passes when both sides pass
/// (a NULL or FALSE side rejects, and as in PostgreSQL's qual evaluation
/// the right side is not evaluated after the left one rejects), and a
/// comparison or BETWEEN of plain operands compares them in place; an OR
/// passes when either side passes.
pub fn eval_filter(
    expr: &Expr,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<bool> {
    match expr {
        Expr::Binary {
            op: BinOp::And,
            left,
            right,
        } => Ok(eval_filter(left, row, params, ctx)? && eval_filter(right, row, params, ctx)?),
        // TRUE exactly when a side is TRUE (NULL OR FALSE is not); the
        // right side is not evaluated after a TRUE left one, as in `eval`.
        Expr::Binary {
            op: BinOp::Or,
            left,
            right,
        } => Ok(eval_filter(left, row, params, ctx)? || eval_filter(right, row, params, ctx)?),
        Expr::Like {
            arg,
            pattern,
            negated,
            case_insensitive,
        } => Ok(
            eval_like(arg, pattern, *negated, *case_insensitive, row, params, ctx)? == Some(true),
        ),
        Expr::Binary {
            op: op @ (BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq),
            left,
            right,
        } => {
            let holds = |o: Option<Ordering>| o.is_some_and(|o| cmp_holds(*op, o));
            if let (Some(a), Some(b)) = (plain(left, row, params), plain(right, row, params)) {
                return Ok(holds(value::cmp_sql(a, b)));
            }
            // A char(n) column against text: its blank-stripped text in
            // place, not a stripped copy per row.
            if let (Some(a), Some(Value::Text(b))) =
                (stripped(left, row), plain(right, row, params))
            {
                return Ok(holds(a.map(|a| a.as_bytes().cmp(b.as_bytes()))));
            }
            let a = operand(left, row, params, ctx)?;
            let b = operand(right, row, params, ctx)?;
            Ok(holds(value::cmp_sql(&a, &b)))
        }
        Expr::Between {
            arg,
            low,
            high,
            negated: false,
        } => {
            if let (Some(a), Some(lo), Some(hi)) = (
                plain(arg, row, params),
                plain(low, row, params),
                plain(high, row, params),
            ) {
                return Ok(value::cmp_sql(a, lo).is_some_and(|o| o != Ordering::Less)
                    && value::cmp_sql(a, hi).is_some_and(|o| o != Ordering::Greater));
            }
            let a = operand(arg, row, params, ctx)?;
            let lo = operand(low, row, params, ctx)?;
            if value::cmp_sql(&a, &lo).is_none_or(|o| o == Ordering::Less) {
                return Ok(false);
            }
            let hi = operand(high, row, params, ctx)?;
            Ok(value::cmp_sql(&a, &hi).is_some_and(|o| o != Ordering::Greater))
        }
        // `x [NOT] IN (text constants)`, a char(n) column stripped in
        // place: IN holds on a match, is NULL (rejects) on a NULL among
        // the others, NOT IN the reverse.
        Expr::InList { arg, list, negated } => {
            if let Some(x) = stripped(arg, row) {
                let Some(x) = x else { return Ok(false) };
                let (mut hit, mut saw_null, mut other) = (false, false, false);
                for item in list {
                    match plain(item, row, params) {
                        Some(Value::Text(t)) if x.as_bytes() == t.as_bytes() => {
                            hit = true;
                            break;
                        }
                        Some(Value::Text(_)) => {}
                        Some(Value::Null) => saw_null = true,
                        _ => {
                            other = true;
                            break;
                        }
                    }
                }
                if !other {
                    return Ok(if hit {
                        !*negated
                    } else {
                        *negated && !saw_null
                    });
                }
            }
            Ok(eval_bool(expr, row, params, ctx)? == Some(true))
        }
        // `x op ANY / ALL (array constant)`, a char(n) column stripped in
        // place.
        Expr::Func {
            func: Func::ArrayCmp { op, all },
            args,
        } if args.len() == 2 => {
            let arr = match plain(&args[1], row, params) {
                Some(v) => Cow::Borrowed(v),
                None => Cow::Owned(eval(&args[1], row, params, ctx)?),
            };
            if let (Some(x), Value::Array(a)) = (stripped(&args[0], row), &*arr) {
                if let Some(r) = text_array_compare(*op, *all, x, &a.items) {
                    return Ok(r == Some(true));
                }
            }
            let x = operand(&args[0], row, params, ctx)?;
            Ok(functions::array_compare(*op, *all, &x, &arr) == Value::Bool(true))
        }
        _ => Ok(eval_bool(expr, row, params, ctx)? == Some(true)),
    }
}

/// `functions::array_compare` of a borrowed text (None: NULL) against
/// text elements: Some(result, None for NULL), or None when an element is
/// not text.
fn text_array_compare(
    op: BinOp,
    all: bool,
    x: Option<&str>,
    items: &[Value],
) -> Option<Option<bool>> {
    if !items
        .iter()
        .all(|i| matches!(i, Value::Text(_) | Value::Null))
    {
        return None;
    }
    Some(functions::array_compare_by(op, all, items, |item| {
        match (x, item) {
            (Some(x), Value::Text(t)) => Some(x.as_bytes().cmp(t.as_bytes())),
            _ => None,
        }
    }))
}

/// `arg [NOT] [I]LIKE pattern`: None (NULL) unless both are text.
fn eval_like(
    arg: &Expr,
    pattern: &Expr,
    negated: bool,
    ci: bool,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Option<bool>> {
    let a = operand(arg, row, params, ctx)?;
    let p = operand(pattern, row, params, ctx)?;
    Ok(match (&*a, &*p) {
        (Value::Text(s), Value::Text(pt)) => Some(like_match(s, pt, ci)? != negated),
        _ => None,
    })
}

/// `bpchar_strip(column)` over a text column: the column's text without
/// its trailing blanks, borrowed (Some(None) for NULL); None for any other
/// expression.
#[inline]
fn stripped<'r>(e: &Expr, row: &'r [Value]) -> Option<Option<&'r str>> {
    let Expr::Func {
        func: Func::BpcharStrip,
        args,
    } = e
    else {
        return None;
    };
    match (args.as_slice(), row) {
        ([Expr::Column(i)], row) => match row.get(*i)? {
            Value::Text(t) => Some(Some(t.trim_end_matches(' '))),
            Value::Null => Some(None),
            _ => None,
        },
        _ => None,
    }
}

/// A constant, column or parameter by reference (None for anything to
/// evaluate, or a column or parameter out of range: the caller's general
/// path reports that).
#[inline(always)]
fn plain<'r>(e: &'r Expr, row: &'r [Value], params: &'r [Value]) -> Option<&'r Value> {
    match e {
        Expr::Const(v) => Some(v),
        Expr::Column(i) | Expr::Agg(i) => row.get(*i),
        Expr::Param(i) => params.get(*i),
        _ => None,
    }
}

impl Expr {
    /// Splits a condition on AND into its conjuncts.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            if let Expr::Binary {
                op: BinOp::And,
                left,
                right,
            } = e
            {
                walk(left, out);
                walk(right, out);
            } else {
                out.push(e);
            }
        }
        walk(self, &mut out);
        out
    }

    /// True if the expression reads a column of the input row.
    pub fn references_columns(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            if matches!(e, Expr::Column(_)) {
                found = true;
            }
        });
        found
    }

    /// If this is `col = v` (or `v = col`) with `v` free of column references
    /// — the shape an index lookup uses — returns (column index, v). Integer
    /// widening casts on the column side are looked through (int keys are
    /// normalised to int8 by the key codec).
    pub fn as_column_eq(&self) -> Option<(usize, &Expr)> {
        fn col_of(e: &Expr) -> Option<usize> {
            match e {
                Expr::Column(i) => Some(*i),
                Expr::Cast {
                    arg,
                    to: SqlType::Int8 | SqlType::Int4,
                    ..
                } => match arg.as_ref() {
                    Expr::Column(i) => Some(*i),
                    _ => None,
                },
                _ => None,
            }
        }
        if let Expr::Binary {
            op: BinOp::Eq,
            left,
            right,
        } = self
        {
            if let Some(c) = col_of(left) {
                if !right.references_columns() {
                    return Some((c, right));
                }
            }
            if let Some(c) = col_of(right) {
                if !left.references_columns() {
                    return Some((c, left));
                }
            }
        }
        None
    }

    /// Rebuilds the node with `f` applied to each direct child.
    pub fn map_children(self, f: &mut dyn FnMut(Expr) -> PgResult<Expr>) -> PgResult<Expr> {
        let bx = |e: Box<Expr>, f: &mut dyn FnMut(Expr) -> PgResult<Expr>| -> PgResult<Box<Expr>> {
            Ok(Box::new(f(*e)?))
        };
        Ok(match self {
            e @ (Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::WindowFunc(_)
            | Expr::GroupingFunc(_)
            | Expr::ExecParam(_)) => e,
            Expr::SubPlan(sp) => {
                let sp = *sp;
                Expr::SubPlan(Box::new(SubPlanExpr {
                    id: sp.id,
                    kind: sp.kind,
                    args: sp.args.into_iter().map(&mut *f).collect::<PgResult<_>>()?,
                    lhs: match sp.lhs {
                        Some(l) => Some(bx(l, f)?),
                        None => None,
                    },
                }))
            }
            Expr::Unary { op, arg } => Expr::Unary {
                op,
                arg: bx(arg, f)?,
            },
            Expr::Binary { op, left, right } => Expr::Binary {
                op,
                left: bx(left, f)?,
                right: bx(right, f)?,
            },
            Expr::Func { func, args } => Expr::Func {
                func,
                args: args.into_iter().map(&mut *f).collect::<PgResult<_>>()?,
            },
            Expr::Cast { arg, to, mode } => Expr::Cast {
                arg: bx(arg, f)?,
                to,
                mode,
            },
            Expr::IsNull { arg, negated } => Expr::IsNull {
                arg: bx(arg, f)?,
                negated,
            },
            Expr::IsBool {
                arg,
                value,
                negated,
            } => Expr::IsBool {
                arg: bx(arg, f)?,
                value,
                negated,
            },
            Expr::InList { arg, list, negated } => Expr::InList {
                arg: bx(arg, f)?,
                list: list.into_iter().map(&mut *f).collect::<PgResult<_>>()?,
                negated,
            },
            Expr::Between {
                arg,
                low,
                high,
                negated,
            } => Expr::Between {
                arg: bx(arg, f)?,
                low: bx(low, f)?,
                high: bx(high, f)?,
                negated,
            },
            Expr::Like {
                arg,
                pattern,
                negated,
                case_insensitive,
            } => Expr::Like {
                arg: bx(arg, f)?,
                pattern: bx(pattern, f)?,
                negated,
                case_insensitive,
            },
            Expr::Case {
                operand,
                whens,
                else_result,
            } => Expr::Case {
                operand: match operand {
                    Some(o) => Some(bx(o, f)?),
                    None => None,
                },
                whens: whens
                    .into_iter()
                    .map(|(w, t)| Ok((f(w)?, f(t)?)))
                    .collect::<PgResult<_>>()?,
                else_result: match else_result {
                    Some(e) => Some(bx(e, f)?),
                    None => None,
                },
            },
        })
    }

    /// True for a subexpression the binder would have folded into a
    /// constant (evaluating it, and raising its errors, at bind time) had
    /// its parameters been constants: operators and casts over parameters
    /// and constants only, at least one parameter under them. A shape's
    /// template evaluates these once per text before running it, so its
    /// literals fail where the constants would have (session.rs).
    pub fn folds_over_params(&self) -> bool {
        fn pure(e: &Expr) -> Option<bool> {
            match e {
                Expr::Const(_) => Some(false),
                Expr::Param(_) => Some(true),
                Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => pure(arg),
                Expr::Binary { left, right, .. } => Some(pure(left)? | pure(right)?),
                _ => None,
            }
        }
        !matches!(self, Expr::Param(_)) && pure(self) == Some(true)
    }

    /// Visits every node mutably, children first (post-order): a node `f`
    /// replaces is not descended into.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::WindowFunc(_)
            | Expr::GroupingFunc(_)
            | Expr::ExecParam(_) => {}
            Expr::SubPlan(sp) => {
                sp.args.iter_mut().for_each(|a| a.walk_mut(f));
                if let Some(l) = &mut sp.lhs {
                    l.walk_mut(f);
                }
            }
            Expr::Unary { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::IsNull { arg, .. }
            | Expr::IsBool { arg, .. } => arg.walk_mut(f),
            Expr::Binary { left, right, .. } => {
                left.walk_mut(f);
                right.walk_mut(f);
            }
            Expr::Func { args, .. } => args.iter_mut().for_each(|a| a.walk_mut(f)),
            Expr::InList { arg, list, .. } => {
                arg.walk_mut(f);
                list.iter_mut().for_each(|a| a.walk_mut(f));
            }
            Expr::Between { arg, low, high, .. } => {
                arg.walk_mut(f);
                low.walk_mut(f);
                high.walk_mut(f);
            }
            Expr::Like { arg, pattern, .. } => {
                arg.walk_mut(f);
                pattern.walk_mut(f);
            }
            Expr::Case {
                operand,
                whens,
                else_result,
            } => {
                if let Some(o) = operand {
                    o.walk_mut(f);
                }
                for (w, t) in whens {
                    w.walk_mut(f);
                    t.walk_mut(f);
                }
                if let Some(e) = else_result {
                    e.walk_mut(f);
                }
            }
        }
        f(self);
    }

    /// Visits every node (pre-order).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::WindowFunc(_)
            | Expr::GroupingFunc(_)
            | Expr::ExecParam(_) => {}
            Expr::SubPlan(sp) => {
                sp.args.iter().for_each(|a| a.walk(f));
                if let Some(l) = &sp.lhs {
                    l.walk(f);
                }
            }
            Expr::Unary { arg, .. }
            | Expr::Cast { arg, .. }
            | Expr::IsNull { arg, .. }
            | Expr::IsBool { arg, .. } => arg.walk(f),
            Expr::Binary { left, right, .. } => {
                left.walk(f);
                right.walk(f);
            }
            Expr::Func { args, .. } => args.iter().for_each(|a| a.walk(f)),
            Expr::InList { arg, list, .. } => {
                arg.walk(f);
                list.iter().for_each(|a| a.walk(f));
            }
            Expr::Between { arg, low, high, .. } => {
                arg.walk(f);
                low.walk(f);
                high.walk(f);
            }
            Expr::Like { arg, pattern, .. } => {
                arg.walk(f);
                pattern.walk(f);
            }
            Expr::Case {
                operand,
                whens,
                else_result,
            } => {
                if let Some(o) = operand {
                    o.walk(f);
                }
                for (w, t) in whens {
                    w.walk(f);
                    t.walk(f);
                }
                if let Some(e) = else_result {
                    e.walk(f);
                }
            }
        }
    }
}

/// `(a, b) = (c, d)` as `a = c AND b = d`, `<>` as `a <> c OR b <> d`,
/// `<` as `a < c OR (a = c AND b < d)` (SQL's row comparison, NULLs
/// included); None when not a row comparison.
fn row_comparison(
    left: &ast::Expr,
    op: &ast::BinaryOperator,
    right: &ast::Expr,
) -> PgResult<Option<ast::Expr>> {
    use ast::BinaryOperator as B;
    let (ast::Expr::Tuple(l), ast::Expr::Tuple(r)) = (left, right) else {
        return Ok(None);
    };
    if l.len() != r.len() {
        return Err(PgError::syntax(
            "unequal number of entries in row expressions",
        ));
    }
    let pair = |a: &ast::Expr, op: B, b: &ast::Expr| {
        ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
            left: Box::new(a.clone()),
            op,
            right: Box::new(b.clone()),
        }))
    };
    let join = match op {
        B::Eq => B::And,
        B::NotEq => B::Or,
        B::Lt | B::LtEq | B::Gt | B::GtEq if !l.is_empty() => {
            // Ordered: the first pair that is not equal decides (NULL if
            // it compares NULL): a1 < b1 OR (a1 = b1 AND (… an <= bn)),
            // the strict operator for every pair but the last.
            let strict = match op {
                B::Lt | B::LtEq => B::Lt,
                _ => B::Gt,
            };
            let n = l.len();
            let mut acc = pair(&l[n - 1], op.clone(), &r[n - 1]);
            for i in (0..n - 1).rev() {
                acc = ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
                    left: Box::new(pair(&l[i], strict.clone(), &r[i])),
                    op: B::Or,
                    right: Box::new(ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
                        left: Box::new(pair(&l[i], B::Eq, &r[i])),
                        op: B::And,
                        right: Box::new(acc),
                    }))),
                }));
            }
            return Ok(Some(acc));
        }
        other => {
            return Err(PgError::unsupported(format!(
                "row comparison with {other} is not supported"
            )))
        }
    };
    let mut out: Option<ast::Expr> = None;
    for (a, b) in l.iter().zip(r) {
        let c = ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
            left: Box::new(a.clone()),
            op: op.clone(),
            right: Box::new(b.clone()),
        }));
        out = Some(match out {
            None => c,
            Some(prev) => ast::Expr::BinaryOp {
                left: Box::new(prev),
                op: join.clone(),
                right: Box::new(c),
            },
        });
    }
    Ok(out.map(|e| ast::Expr::Nested(Box::new(e))))
}

/// `(a, b) IN (SELECT x, y …)` through EXISTS over the subquery as a
/// derived table: true when a row matches, NULL when none does but some
/// comparison is NULL, false otherwise — the IN sublink's three values.
fn row_in_subquery(lhs: &ast::Expr, q: &ast::Query) -> PgResult<ast::Expr> {
    let ast::Expr::Tuple(items) = lhs else {
        return Err(PgError::internal("row IN without a row"));
    };
    let cols: Vec<String> = (1..=items.len())
        .map(|i| format!("\"?rowin{i}\""))
        .collect();
    let cmp = items
        .iter()
        .zip(&cols)
        .map(|(e, c)| format!("{c} = ({e})"))
        .collect::<Vec<_>>()
        .join(" AND ");
    let from = format!("FROM ({q}) AS \"?rowin\"({})", cols.join(", "));
    let text = format!(
        "CASE WHEN EXISTS (SELECT 1 {from} WHERE {cmp}) THEN true \
         WHEN EXISTS (SELECT 1 {from} WHERE ({cmp}) IS NULL) THEN NULL::boolean \
         ELSE false END"
    );
    crate::parser::parse_expr_text(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn parse(sql: &str) -> ast::Expr {
        Parser::new(&PostgreSqlDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap()
    }

    fn accounts() -> Scope {
        Scope::for_table(
            "pgbench_accounts",
            &[
                ("aid".into(), SqlType::Int4),
                ("bid".into(), SqlType::Int4),
                ("abalance".into(), SqlType::Int4),
                ("filler".into(), SqlType::Char(84)),
                ("name".into(), SqlType::Varchar(Some(10))),
                ("big".into(), SqlType::Int8),
            ],
        )
    }

    fn row() -> Vec<Value> {
        vec![
            Value::Int4(7),
            Value::Int4(1),
            Value::Int4(-5),
            Value::text(&format!("x{}", " ".repeat(83))),
            Value::Null,
            Value::Int8(1 << 40),
        ]
    }

    fn ev_with(sql: &str, params: &[Value]) -> PgResult<Value> {
        let scope = accounts();
        let mut pt = ParamTypes::new();
        let b = bind_expr(&parse(sql), &scope, &mut pt)?;
        eval(&b.expr, &row(), params, &mut StaticContext)
    }

    fn ev(sql: &str) -> PgResult<Value> {
        ev_with(sql, &[])
    }

    fn text(sql: &str) -> String {
        match ev(sql) {
            Ok(v) if v.is_null() => "NULL".into(),
            Ok(v) => v.to_text_string(),
            Err(e) => panic!("{sql}: {e}"),
        }
    }

    fn err(sql: &str) -> (String, &'static str) {
        match ev(sql) {
            Ok(v) => panic!("{sql}: expected an error, got {v:?}"),
            Err(e) => (e.message.clone(), e.code),
        }
    }

    #[test]
    fn literals_and_arithmetic() {
        assert_eq!(ev("1 + 1").unwrap(), Value::Int4(2));
        assert_eq!(ev("-2147483648").unwrap(), Value::Int4(i32::MIN));
        assert_eq!(ev("2147483648").unwrap(), Value::Int8(2147483648));
        assert_eq!(text("1.50"), "1.50");
        assert_eq!(text("1/3::numeric"), "0.33333333333333333333");
        assert_eq!(text("1.5::numeric / 0.003"), "500.0000000000000000");
        assert_eq!(text("7 / 2"), "3");
        assert_eq!(text("-7 % 3"), "-1");
        assert_eq!(text("1 + 2.5"), "3.5");
        assert_eq!(text("1 + 2.5::float8"), "3.5");
        assert_eq!(text("0.1::float8 + 0.2::float8"), "0.30000000000000004");
        assert_eq!(text("abalance + 1"), "-4");
        assert_eq!(text("big * 2"), "2199023255552");
        assert_eq!(text("aid + big"), "1099511627783");
        assert_eq!(text("-abalance"), "5");
        assert_eq!(
            err("2147483647 + 1"),
            ("integer out of range".into(), "22003")
        );
        assert_eq!(
            err("9223372036854775807 + 1"),
            ("bigint out of range".into(), "22003")
        );
        assert_eq!(err("1 / 0"), ("division by zero".into(), "22012"));
        assert_eq!(err("1.0 / 0"), ("division by zero".into(), "22012"));
        assert_eq!(err("aid / (bid - 1)"), ("division by zero".into(), "22012"));
        assert_eq!(
            err("1 + 'a'"),
            (
                "invalid input syntax for type integer: \"a\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err("1 = 'a'::text"),
            ("operator does not exist: integer = text".into(), "42883")
        );
        assert_eq!(
            err("1e308::float8 * 10"),
            ("value out of range: overflow".into(), "22003")
        );
    }

    #[test]
    fn three_valued_logic() {
        assert_eq!(text("null = 1"), "NULL");
        assert_eq!(text("null and false"), "f");
        assert_eq!(text("null and true"), "NULL");
        assert_eq!(text("null or true"), "t");
        assert_eq!(text("null or false"), "NULL");
        assert_eq!(text("not (null = 1)"), "NULL");
        assert_eq!(text("1 in (2, null)"), "NULL");
        assert_eq!(text("1 in (1, null)"), "t");
        assert_eq!(text("1 not in (2, 3)"), "t");
        assert_eq!(text("null is null"), "t");
        assert_eq!(text("name is null"), "t");
        assert_eq!(text("aid is not null"), "t");
        assert_eq!(text("(null = 1) is not true"), "t");
        assert_eq!(text("null is distinct from 1"), "t");
        assert_eq!(text("null is not distinct from null"), "t");
        assert_eq!(text("aid between 1 and 10"), "t");
        assert_eq!(text("aid not between 1 and 5"), "t");
        assert_eq!(text("aid between null and 10"), "NULL");
        assert_eq!(text("aid between 8 and null"), "f");
    }

    #[test]
    fn text_functions() {
        assert_eq!(text("'ab'::char(4) || 'x'"), "abx");
        assert_eq!(text("length('ab  '::char(4))"), "2");
        assert_eq!(text("'ab'::char(4) = 'ab  '"), "t");
        assert_eq!(text("'ab'::char(4)"), "ab  ");
        assert_eq!(text("'abcdef'::varchar(3)"), "abc");
        assert_eq!(text("length(filler)"), "1");
        assert_eq!(text("filler = 'x'"), "t");
        assert_eq!(text("substr('abcdef', 0, 3)"), "ab");
        assert_eq!(text("substr('abcdef', -1)"), "abcdef");
        assert_eq!(text("substring('abcdef' from 2 for 2)"), "bc");
        assert_eq!(text("substring('abcdef', 3)"), "cdef");
        assert_eq!(text("'x' || 1"), "x1");
        assert_eq!(text("1 || 'x'"), "1x");
        assert_eq!(text("upper('héllo')"), "HÉLLO");
        assert_eq!(text("lower('ABC')"), "abc");
        assert_eq!(text("repeat('ab', 3)"), "ababab");
        assert_eq!(text("char_length('héllo')"), "5");
        assert_eq!(text("'abc' like 'a%'"), "t");
        assert_eq!(text("'abc' like 'a_'"), "f");
        assert_eq!(text("'abc' not like '%c'"), "f");
        assert_eq!(text("'ABC' ilike 'a%c'"), "t");
        assert_eq!(text("'a%c' like 'a\\%c'"), "t");
        assert_eq!(text("trim('  x  ')"), "x");
        assert_eq!(text("position('c' in 'abc')"), "3");
        assert_eq!(text("concat('a', null, 1)"), "a1");
    }

    #[test]
    fn other_functions() {
        assert_eq!(text("coalesce(null, 2)"), "2");
        assert_eq!(text("coalesce(name, 'none')"), "none");
        assert_eq!(text("greatest(1, 2.5, null)"), "2.5");
        assert_eq!(text("least(3, 2)"), "2");
        assert_eq!(text("nullif(1, 1)"), "NULL");
        assert_eq!(text("abs(-5)"), "5");
        assert_eq!(text("abs(abalance)"), "5");
        assert_eq!(text("round(2.5)"), "3");
        assert_eq!(text("round(2.5::float8)"), "2");
        assert_eq!(text("round(1.2345, 2)"), "1.23");
        assert_eq!(text("mod(7, 3)"), "1");
        assert_eq!(text("pg_typeof(1)"), "integer");
        assert_eq!(text("pg_typeof(1.5)"), "numeric");
        assert_eq!(text("pg_typeof(name)"), "character varying(10)");
        assert_eq!(text("pg_typeof(sqrt(4))"), "double precision");
        assert!(text("version()").starts_with("PostgreSQL 15"));
        assert_eq!(text("now() is not null"), "t");
        assert_eq!(text("current_timestamp <= clock_timestamp()"), "t");
        assert_eq!(text("current_user"), "postgres");
        assert_eq!(text("pg_is_in_recovery()"), "f");
        assert_eq!(text("random() < 1.0"), "t");
        assert_eq!(text("pg_wal_lsn_diff('0/100', '0/10')"), "240");
        assert_eq!(text("'0/100'::pg_lsn - '0/10'"), "240");
        assert_eq!(text("'0/100'::pg_lsn > '0/FF'"), "t");
        assert_eq!(
            text("case when aid = 7 then 'seven' else 'other' end"),
            "seven"
        );
        assert_eq!(text("case aid when 1 then 'one' end"), "NULL");
        assert_eq!(text("case when false then 1 else 2.5 end"), "2.5");
        assert_eq!(
            text("'2024-01-02 03:04:05'::timestamptz"),
            "2024-01-02 03:04:05+00"
        );
        assert_eq!(
            text("timestamp '2024-01-02 03:04:05.5'"),
            "2024-01-02 03:04:05.5"
        );
        assert_eq!(text("'2024-01-02'::timestamp < '2024-01-03'"), "t");
        assert_eq!(
            err("foo(1)"),
            ("function foo(integer) does not exist".into(), "42883")
        );
        assert_eq!(
            err("length(1)"),
            ("function length(integer) does not exist".into(), "42883")
        );
        assert_eq!(
            err("current_setting('nope')"),
            (
                "unrecognized configuration parameter \"nope\"".into(),
                "42704"
            )
        );
        assert_eq!(text("current_setting('nope', true)"), "NULL");
    }

    #[test]
    fn casts() {
        assert_eq!(text("2.5::float8::int"), "2");
        assert_eq!(text("3.5::float8::int"), "4");
        assert_eq!(text("(-2.5)::numeric::int"), "-3");
        assert_eq!(text("'42'::int + 1"), "43");
        assert_eq!(text("cast('t' as boolean)"), "t");
        assert_eq!(text("1::bool"), "t");
        assert_eq!(text("true::int"), "1");
        assert_eq!(text("aid::text || 'x'"), "7x");
        assert_eq!(text("filler::text"), "x");
        assert_eq!(text("1.999::int"), "2");
        assert_eq!(
            err("100000::int2"),
            ("smallint out of range".into(), "22003")
        );
    }

    #[test]
    fn cast_errors() {
        assert_eq!(
            err("'abc'::int"),
            (
                "invalid input syntax for type integer: \"abc\"".into(),
                "22P02"
            )
        );
        assert_eq!(
            err("'99999999999'::int"),
            (
                "value \"99999999999\" is out of range for type integer".into(),
                "22003"
            )
        );
        assert_eq!(err("big::int"), ("integer out of range".into(), "22003"));
        assert_eq!(
            err("'x'::bool"),
            (
                "invalid input syntax for type boolean: \"x\"".into(),
                "22P02"
            )
        );
        assert_eq!(err("1::timestamp").1, "42846");
    }

    #[test]
    fn columns_and_scope_errors() {
        assert_eq!(ev("aid").unwrap(), Value::Int4(7));
        assert_eq!(ev("pgbench_accounts.aid").unwrap(), Value::Int4(7));
        assert_eq!(ev("\"aid\"").unwrap(), Value::Int4(7));
        assert_eq!(err("x"), ("column \"x\" does not exist".into(), "42703"));
        assert_eq!(
            err("pgbench_accounts.x"),
            ("column pgbench_accounts.x does not exist".into(), "42703")
        );
        assert_eq!(err("t.aid").1, "42P01");
        let mut scope = accounts();
        scope.push(Some("b"), "aid", SqlType::Int4);
        let e = bind_expr(&parse("aid"), &scope, &mut ParamTypes::new()).unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.code),
            ("column reference \"aid\" is ambiguous", "42702")
        );
        assert!(bind_expr(&parse("b.aid"), &scope, &mut ParamTypes::new()).is_ok());
    }

    #[test]
    fn parameter_inference() {
        let scope = accounts();
        let cases: &[(&str, &[SqlType])] = &[
            ("aid = $1", &[SqlType::Int4]),
            ("$1 = aid", &[SqlType::Int4]),
            ("$1 + 1", &[SqlType::Int4]),
            ("$1", &[SqlType::Text]),
            ("abalance + $1 > $2", &[SqlType::Int4, SqlType::Int4]),
            ("name = $2", &[SqlType::Text, SqlType::Text]),
            ("filler = $1", &[SqlType::Char(0)]),
            ("aid between $1 and $2", &[SqlType::Int4, SqlType::Int4]),
            ("aid in ($1, $2)", &[SqlType::Int4, SqlType::Int4]),
            ("$1::int8", &[SqlType::Int8]),
            ("length($1)", &[SqlType::Text]),
            ("pg_sleep($1)", &[SqlType::Float8]),
            ("$1 and true", &[SqlType::Bool]),
        ];
        for (sql, want) in cases {
            let mut pt = ParamTypes::new();
            bind_expr(&parse(sql), &scope, &mut pt).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(&pt.finish(), want, "{sql}");
        }
        // Client-fixed types win: aid (int4) = $1 (int8).
        let mut pt = ParamTypes::from_oids(&[20]).unwrap();
        let b = bind_expr(&parse("aid = $1"), &scope, &mut pt).unwrap();
        assert_eq!(pt.finish(), vec![SqlType::Int8]);
        assert_eq!(
            eval(&b.expr, &row(), &[Value::Int8(7)], &mut StaticContext).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(b.expr.as_column_eq().map(|(c, _)| c), Some(0));
        // The hot path: aid = $1 binds to a plain comparison.
        let mut pt = ParamTypes::new();
        let b = bind_expr(&parse("aid = $1"), &scope, &mut pt).unwrap();
        assert_eq!(
            b.expr,
            Expr::Binary {
                op: BinOp::Eq,
                left: Box::new(Expr::Column(0)),
                right: Box::new(Expr::Param(0))
            }
        );
        assert_eq!(
            eval(&b.expr, &row(), &[Value::Int4(8)], &mut StaticContext).unwrap(),
            Value::Bool(false)
        );
        assert_eq!(
            eval(&b.expr, &row(), &[Value::Null], &mut StaticContext).unwrap(),
            Value::Null
        );
        // $1 + $2 is ambiguous.
        let e = bind_expr(&parse("$1 + $2"), &scope, &mut ParamTypes::new()).unwrap_err();
        assert_eq!(e.code, "42725");
        assert!(ParamTypes::from_oids(&[999_999]).is_err());
    }

    #[test]
    fn assignment() {
        let scope = Scope::new();
        let mut pt = ParamTypes::new();
        let e = bind_assign(
            &parse("'abcd'"),
            &scope,
            &mut pt,
            SqlType::Varchar(Some(3)),
            "a",
        )
        .unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.code),
            ("value too long for type character varying(3)", "22001")
        );
        let e = bind_assign(&parse("'abc'"), &scope, &mut pt, SqlType::Int4, "a").unwrap_err();
        assert_eq!(e.code, "22P02");
        let e =
            bind_assign(&parse("'abc'::text"), &scope, &mut pt, SqlType::Int4, "a").unwrap_err();
        assert_eq!(
            e.message,
            "column \"a\" is of type integer but expression is of type text"
        );
        assert_eq!(e.code, "42804");
        let x = bind_assign(&parse("'ab'"), &scope, &mut pt, SqlType::Char(4), "a").unwrap();
        assert_eq!(x, Expr::Const(Value::text("ab  ")));
        let x = bind_assign(&parse("3000000000"), &scope, &mut pt, SqlType::Int4, "a");
        assert_eq!(x.unwrap_err().message, "integer out of range");
        let x = bind_assign(&parse("2.5"), &scope, &mut pt, SqlType::Int4, "a").unwrap();
        assert_eq!(x, Expr::Const(Value::Int4(3)));
        // A parameter takes the column's type; a varchar(n) length is checked at run time.
        let mut pt = ParamTypes::new();
        let x = bind_assign(
            &parse("$1"),
            &scope,
            &mut pt,
            SqlType::Varchar(Some(3)),
            "a",
        )
        .unwrap();
        assert_eq!(pt.finish(), vec![SqlType::Varchar(None)]);
        let e = eval(&x, &[], &[Value::text("abcd")], &mut StaticContext).unwrap_err();
        assert_eq!(e.code, "22001");
        let x = bind_assign(
            &parse("$1"),
            &scope,
            &mut ParamTypes::new(),
            SqlType::Int4,
            "a",
        )
        .unwrap();
        assert_eq!(x, Expr::Param(0));
    }

    #[test]
    fn aggregates() {
        let scope = accounts();
        let mut g = Grouping::new(Vec::new());
        let mut pt = ParamTypes::new();
        let c = bind_expr_agg(&parse("count(*)"), &scope, &mut pt, &mut g).unwrap();
        let s = bind_expr_agg(&parse("sum(abalance) + 1"), &scope, &mut pt, &mut g).unwrap();
        let s8 = bind_expr_agg(&parse("sum(big)"), &scope, &mut pt, &mut g).unwrap();
        let m = bind_expr_agg(&parse("max(aid)"), &scope, &mut pt, &mut g).unwrap();
        let a = bind_expr_agg(&parse("avg(aid)"), &scope, &mut pt, &mut g).unwrap();
        assert_eq!(
            (c.ty, s.ty, s8.ty, m.ty, a.ty),
            (
                SqlType::Int8,
                SqlType::Int8,
                SqlType::NUMERIC,
                SqlType::Int4,
                SqlType::NUMERIC
            )
        );
        assert_eq!(g.aggs.len(), 5);
        let bare = bind_expr_agg(&parse("aid"), &scope, &mut pt, &mut g).unwrap();
        let e = g.finalize(bare.expr, &scope).unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.code),
            ("column \"pgbench_accounts.aid\" must appear in the GROUP BY clause or be used in an aggregate function", "42803")
        );
        // Run the aggregates over three rows.
        let mut accs: Vec<_> = g
            .aggs
            .iter()
            .map(|a| functions::Accumulator::new(a.func, a.arg_ty))
            .collect();
        for (aid, bal) in [(1, 10), (2, 20), (4, -1)] {
            let r = vec![
                Value::Int4(aid),
                Value::Int4(1),
                Value::Int4(bal),
                Value::Null,
                Value::Null,
                Value::Int8(5),
            ];
            for (acc, call) in accs.iter_mut().zip(&g.aggs) {
                let v = match &call.arg {
                    Some(e) => eval(e, &r, &[], &mut StaticContext).unwrap(),
                    None => Value::Null,
                };
                acc.update(&v).unwrap();
            }
        }
        let post: Vec<Value> = accs.iter().map(|a| a.finish().unwrap()).collect();
        let out = |b: &BoundExpr| {
            eval(
                &g.finalize(b.expr.clone(), &scope).unwrap(),
                &post,
                &[],
                &mut StaticContext,
            )
            .unwrap()
            .to_text_string()
        };
        assert_eq!(out(&c), "3");
        assert_eq!(out(&s), "30");
        assert_eq!(out(&s8), "15");
        assert_eq!(out(&m), "4");
        assert_eq!(out(&a), "2.3333333333333333");
        // GROUP BY bid: the key is Agg(0), aggregates follow.
        let key = bind_expr(&parse("bid"), &scope, &mut pt).unwrap().expr;
        let mut g = Grouping::new(vec![key]);
        let b = bind_expr_agg(&parse("bid"), &scope, &mut pt, &mut g).unwrap();
        let n = bind_expr_agg(&parse("count(aid)"), &scope, &mut pt, &mut g).unwrap();
        assert_eq!(g.finalize(b.expr, &scope).unwrap(), Expr::Agg(0));
        assert_eq!(g.finalize(n.expr, &scope).unwrap(), Expr::Agg(1));
        // Aggregates are not allowed in WHERE, nor nested.
        assert_eq!(
            bind_expr(&parse("count(*) > 1"), &scope, &mut pt)
                .unwrap_err()
                .code,
            "42803"
        );
        assert_eq!(
            bind_expr_agg(&parse("sum(count(*))"), &scope, &mut pt, &mut g)
                .unwrap_err()
                .code,
            "42803"
        );
        // Empty input: count 0, sum NULL.
        let acc = functions::Accumulator::new(AggFunc::Sum, SqlType::Int4);
        assert_eq!(acc.finish().unwrap(), Value::Null);
        let acc = functions::Accumulator::new(AggFunc::CountStar, SqlType::Unknown);
        assert_eq!(acc.finish().unwrap(), Value::Int8(0));
    }

    #[test]
    fn output_names() {
        for (sql, want) in [
            ("aid", "aid"),
            ("t.aid", "aid"),
            ("count(*)", "count"),
            ("1", "?column?"),
            ("'a'", "?column?"),
            ("1::int", "int4"),
            ("aid::text", "aid"),
            ("now()", "now"),
            ("current_timestamp", "current_timestamp"),
            ("true", "bool"),
            ("case when true then 1 end", "case"),
            ("1 + 1", "?column?"),
            ("'x'::varchar(3)", "varchar"),
        ] {
            assert_eq!(output_name(&parse(sql)), want, "{sql}");
        }
    }

    #[test]
    fn like_matcher() {
        let m = |s: &str, p: &str| like_match(s, p, false).unwrap();
        assert!(m("", "%"));
        assert!(m("abc", "%b%"));
        assert!(!m("abc", "%d%"));
        assert!(m("aXbXc", "a%b%c"));
        assert!(m("a_c", "a\\_c"));
        assert!(!m("abc", "a\\_c"));
        assert!(m("mississippi", "%iss%ppi"));
        assert!(m("grüße", "gr_ße"));
        assert!(like_match("ab\\", "ab\\", false).is_err());
    }
}
