//! Bound expressions: binding sqlparser's AST against a scope of columns and
//! a set of parameters, and evaluating the result.
//!
//! OWNER: sqlv.

use std::sync::Arc;

use sqlparser::ast;

use crate::error::{sqlstate, PgError, PgResult};
use crate::sql::functions::{AggFunc, Func};
use crate::sql::types::SqlType;
use crate::sql::value::{CastMode, Value};
use crate::types::Oid;

pub use crate::sql::functions::{EvalContext, StaticContext, WalLsnKind};

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
}

/// The columns an expression may reference; `Expr::Column(i)` is `columns[i]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// Visible columns, in row order.
    pub columns: Vec<ScopeColumn>,
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
                })
                .collect(),
        }
    }

    /// Adds a column.
    pub fn push(&mut self, table: Option<&str>, name: &str, ty: SqlType) {
        self.columns.push(ScopeColumn {
            table: table.map(str::to_string),
            name: name.to_string(),
            ty,
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
            }
            if found.is_some() {
                return Err(PgError::new(
                    sqlstate::AMBIGUOUS_COLUMN,
                    format!("column reference \"{}\" is ambiguous", name),
                ));
            }
            found = Some(i);
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
}

impl Grouping {
    /// A grouping with these keys (empty for a plain aggregate query).
    pub fn new(group_by: Vec<Expr>) -> Grouping {
        Grouping {
            group_by,
            aggs: Vec::new(),
        }
    }

    /// True if the query aggregates (has aggregates or GROUP BY).
    pub fn is_grouped(&self) -> bool {
        !self.group_by.is_empty() || !self.aggs.is_empty()
    }

    /// Rewrites an expression bound by [`bind_expr_agg`] to read the
    /// post-aggregation row: group-key subtrees → `Agg(j)`, aggregate
    /// placeholders → `Agg(k + i)`; any other column reference is 42803
    /// `column "t.x" must appear in the GROUP BY clause or be used in an
    /// aggregate function`.
    pub fn finalize(&self, expr: Expr, scope: &Scope) -> PgResult<Expr> {
        let _ = (expr, scope);
        todo!("sqlv")
    }
}

/// Binds an expression where aggregates are not allowed (WHERE, VALUES,
/// SET …): 42803 `aggregate functions are not allowed in WHERE`.
pub fn bind_expr(ast: &ast::Expr, scope: &Scope, params: &mut ParamTypes) -> PgResult<BoundExpr> {
    let _ = (ast, scope, params);
    todo!("sqlv")
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
    let _ = (ast, scope, params, grouping);
    todo!("sqlv")
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

/// Implicit coercion of a bound expression to `target` (WHERE operands,
/// function arguments). 42804 if there is no implicit cast.
pub fn coerce(b: BoundExpr, target: SqlType, params: &mut ParamTypes) -> PgResult<Expr> {
    let _ = (b, target, params);
    todo!("sqlv")
}

/// Assignment coercion (see [`bind_assign`]).
pub fn coerce_assign(
    b: BoundExpr,
    target: SqlType,
    params: &mut ParamTypes,
    column: &str,
) -> PgResult<Expr> {
    let _ = (b, target, params, column);
    todo!("sqlv")
}

/// The column name PostgreSQL gives a select-list item without an alias:
/// the column name, the function name, the cast's type name, or `?column?`.
pub fn output_name(ast: &ast::Expr) -> String {
    let _ = ast;
    todo!("sqlv")
}

/// Evaluates `expr` over `row` with bound parameter values.
pub fn eval(
    expr: &Expr,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<Value> {
    let _ = (expr, row, params, ctx, Arc::<str>::from(""));
    todo!("sqlv")
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
pub fn eval_filter(
    expr: &Expr,
    row: &[Value],
    params: &[Value],
    ctx: &mut dyn EvalContext,
) -> PgResult<bool> {
    Ok(eval_bool(expr, row, params, ctx)? == Some(true))
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

    /// Visits every node (pre-order).
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Const(_) | Expr::Column(_) | Expr::Param(_) | Expr::Agg(_) => {}
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
