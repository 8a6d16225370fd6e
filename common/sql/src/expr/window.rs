//! Window function calls and `grouping()` while binding (PostgreSQL's
//! `parse_func.c` / `parse_agg.c` transformWindowFuncCall, in miniature).
//!
//! A call with `OVER` binds to an [`Expr::WindowFunc`] placeholder and a
//! [`WindowCall`] pushed onto [`Grouping::windows`]: the function, its
//! arguments, and its window — PARTITION BY keys, ORDER BY keys and frame,
//! all over the row the window sees (the FROM row, or in a grouped query
//! the post-aggregation row, where they are finalized like the select
//! list). `OVER w` takes the WINDOW clause's definition as it is; `OVER (w
//! ORDER BY …)` copies its PARTITION BY and may add an ORDER BY and frame,
//! with PostgreSQL's rules and errors. The planner sorts the input by the
//! window's keys and puts a WindowAgg node (`executor::window`) above it.
//!
//! Frames are kept as PostgreSQL states them: the default is `RANGE
//! UNBOUNDED PRECEDING` to `CURRENT ROW` (the current row and its peers;
//! without ORDER BY every row of the partition is a peer). An offset of
//! ROWS / GROUPS is an int8 expression; an offset of RANGE is bound as the
//! bound's value — `key - offset` (or `+`, by direction) over the row — so
//! the executor only compares it with the other rows' keys.

use sqlparser::ast;

use super::{AggCall, AggClauses, AggOrder, Binder, BoundExpr, Expr};
use crate::functions::AggFunc;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;

const WINDOWING_ERROR: &str = "42P20";

/// The window functions (and aggregates used as window functions).
#[derive(Clone, Debug, PartialEq)]
pub enum WinFunc {
    /// row_number()
    RowNumber,
    /// rank()
    Rank,
    /// dense_rank()
    DenseRank,
    /// percent_rank()
    PercentRank,
    /// cume_dist()
    CumeDist,
    /// ntile(n)
    Ntile,
    /// lag(x [, offset [, default]])
    Lag,
    /// lead(x [, offset [, default]])
    Lead,
    /// first_value(x)
    FirstValue,
    /// last_value(x)
    LastValue,
    /// nth_value(x, n)
    NthValue,
    /// An aggregate over the frame.
    Agg(AggCall),
}

/// ROWS, RANGE or GROUPS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    /// Physical rows.
    Rows,
    /// Peers by ORDER BY value.
    Range,
    /// Peer groups.
    Groups,
}

/// One end of a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    /// UNBOUNDED PRECEDING
    UnboundedPreceding,
    /// n PRECEDING (ROWS / GROUPS: the count, int8; RANGE: the bound's
    /// value over the row)
    Preceding(Expr),
    /// CURRENT ROW
    CurrentRow,
    /// n FOLLOWING (as Preceding)
    Following(Expr),
    /// UNBOUNDED FOLLOWING
    UnboundedFollowing,
}

/// A window frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Units.
    pub units: FrameUnits,
    /// Start.
    pub start: FrameBound,
    /// End.
    pub end: FrameBound,
}

impl Frame {
    /// PostgreSQL's default frame.
    pub fn default_frame() -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        }
    }
}

/// One bound window function call.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    /// The function.
    pub func: WinFunc,
    /// Its arguments (not for aggregates: those are in the AggCall).
    pub args: Vec<Expr>,
    /// Result type.
    pub ty: SqlType,
    /// PARTITION BY keys.
    pub partition: Vec<Expr>,
    /// ORDER BY keys.
    pub order: Vec<AggOrder>,
    /// The frame.
    pub frame: Frame,
}

impl WindowCall {
    /// Rebuilds every expression of the call with `f`.
    pub fn map_exprs(self, f: &mut dyn FnMut(Expr) -> PgResult<Expr>) -> PgResult<WindowCall> {
        let func = match self.func {
            WinFunc::Agg(a) => WinFunc::Agg(AggCall {
                arg: a.arg.map(&mut *f).transpose()?,
                extra_args: a
                    .extra_args
                    .into_iter()
                    .map(&mut *f)
                    .collect::<PgResult<_>>()?,
                filter: a.filter.map(&mut *f).transpose()?,
                order_by: a
                    .order_by
                    .into_iter()
                    .map(|o| {
                        Ok(AggOrder {
                            expr: f(o.expr)?,
                            ..o
                        })
                    })
                    .collect::<PgResult<_>>()?,
                ..a
            }),
            other => other,
        };
        let bound = |b: FrameBound, f: &mut dyn FnMut(Expr) -> PgResult<Expr>| {
            Ok::<_, PgError>(match b {
                FrameBound::Preceding(e) => FrameBound::Preceding(f(e)?),
                FrameBound::Following(e) => FrameBound::Following(f(e)?),
                other => other,
            })
        };
        let frame = Frame {
            units: self.frame.units,
            start: bound(self.frame.start, f)?,
            end: bound(self.frame.end, f)?,
        };
        Ok(WindowCall {
            func,
            args: self
                .args
                .into_iter()
                .map(&mut *f)
                .collect::<PgResult<_>>()?,
            ty: self.ty,
            partition: self
                .partition
                .into_iter()
                .map(&mut *f)
                .collect::<PgResult<_>>()?,
            order: self
                .order
                .into_iter()
                .map(|o| {
                    Ok(AggOrder {
                        expr: f(o.expr)?,
                        ..o
                    })
                })
                .collect::<PgResult<_>>()?,
            frame,
        })
    }

    /// Visits every expression of the call.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        if let WinFunc::Agg(a) = &self.func {
            a.exprs().for_each(&mut *f);
        }
        self.args.iter().for_each(&mut *f);
        self.partition.iter().for_each(&mut *f);
        self.order.iter().for_each(|o| f(&o.expr));
        for b in [&self.frame.start, &self.frame.end] {
            if let FrameBound::Preceding(e) | FrameBound::Following(e) = b {
                f(e);
            }
        }
    }
}

fn windowing(msg: impl Into<String>) -> PgError {
    PgError::new(WINDOWING_ERROR, msg)
}

/// Resolves the WINDOW clause of a SELECT: each definition may build on
/// an earlier one (`WINDOW a AS (…), b AS (a ORDER BY …)`).
pub fn resolve_named_windows(
    defs: &[ast::NamedWindowDefinition],
) -> PgResult<Vec<(String, ast::WindowSpec)>> {
    let mut out: Vec<(String, ast::WindowSpec)> = Vec::new();
    for ast::NamedWindowDefinition(name, expr) in defs {
        let n = super::ident_name(name);
        if out.iter().any(|(x, _)| *x == n) {
            return Err(windowing(format!("window \"{n}\" is already defined")));
        }
        let spec = match expr {
            ast::NamedWindowExpr::NamedWindow(base) => {
                let b = super::ident_name(base);
                lookup(&out, &b)?.clone()
            }
            ast::NamedWindowExpr::WindowSpec(s) => merge(&out, s)?,
        };
        out.push((n, spec));
    }
    Ok(out)
}

fn lookup<'a>(named: &'a [(String, ast::WindowSpec)], name: &str) -> PgResult<&'a ast::WindowSpec> {
    named
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s)
        .ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("window \"{name}\" does not exist"),
            )
        })
}

/// `(w ORDER BY … frame)`: w's PARTITION BY, with PostgreSQL's checks.
fn merge(named: &[(String, ast::WindowSpec)], s: &ast::WindowSpec) -> PgResult<ast::WindowSpec> {
    let Some(base) = &s.window_name else {
        return Ok(s.clone());
    };
    let name = super::ident_name(base);
    let b = lookup(named, &name)?;
    if !s.partition_by.is_empty() {
        return Err(windowing(format!(
            "cannot override PARTITION BY clause of window \"{name}\""
        )));
    }
    if !s.order_by.is_empty() && !b.order_by.is_empty() {
        return Err(windowing(format!(
            "cannot override ORDER BY clause of window \"{name}\""
        )));
    }
    if b.window_frame.is_some() {
        let e = windowing(format!(
            "cannot copy window \"{name}\" because it has a frame clause"
        ));
        return Err(if s.order_by.is_empty() && s.window_frame.is_none() {
            e.with_hint("Omit the parentheses in this OVER clause.")
        } else {
            e
        });
    }
    Ok(ast::WindowSpec {
        window_name: None,
        partition_by: b.partition_by.clone(),
        order_by: if s.order_by.is_empty() {
            b.order_by.clone()
        } else {
            s.order_by.clone()
        },
        window_frame: s.window_frame.clone(),
    })
}

impl Binder<'_> {
    /// Binds `name(args) OVER …`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn window_function(
        &mut self,
        name: &str,
        args: &[&ast::Expr],
        distinct: bool,
        star: bool,
        clauses: AggClauses<'_>,
        over: &ast::WindowType,
    ) -> PgResult<BoundExpr> {
        let Some(grouping) = self.grouping.as_deref() else {
            return Err(windowing("window functions are not allowed in WHERE"));
        };
        if let Some(what) = grouping.no_windows {
            return Err(windowing(format!(
                "window functions are not allowed in {what}"
            )));
        }
        if self.in_agg {
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate function calls cannot contain window function calls",
            ));
        }
        if self.in_window_def {
            return Err(windowing(
                "window functions are not allowed in window definitions",
            ));
        }
        if self.in_window {
            return Err(windowing("window function calls cannot be nested"));
        }
        let spec = match over {
            ast::WindowType::NamedWindow(id) => {
                lookup(&grouping.named_windows, &super::ident_name(id))?.clone()
            }
            ast::WindowType::WindowSpec(s) => merge(&grouping.named_windows, s)?,
        };
        self.in_window = true;
        let r = self.window_call(name, args, distinct, star, clauses, &spec);
        self.in_window = false;
        let call = r?;
        let ty = call.ty;
        let grouping = self
            .grouping
            .as_deref_mut()
            .ok_or_else(|| PgError::internal("no grouping"))?;
        let idx = match grouping.windows.iter().position(|w| *w == call) {
            Some(i) => i,
            None => {
                grouping.windows.push(call);
                grouping.windows.len() - 1
            }
        };
        Ok(BoundExpr {
            expr: Expr::WindowFunc(idx),
            ty,
        })
    }

    fn window_call(
        &mut self,
        name: &str,
        args: &[&ast::Expr],
        distinct: bool,
        star: bool,
        clauses: AggClauses<'_>,
        spec: &ast::WindowSpec,
    ) -> PgResult<WindowCall> {
        let agg = AggFunc::from_name(name);
        if distinct {
            return Err(PgError::unsupported(
                "DISTINCT is not implemented for window functions",
            ));
        }
        if !clauses.order.is_empty() {
            return Err(PgError::unsupported(
                "aggregate ORDER BY is not implemented for window functions",
            ));
        }
        if agg.is_none() && clauses.filter.is_some() {
            return Err(PgError::unsupported(
                "FILTER is not implemented for non-aggregate window functions",
            ));
        }
        let (func, args, ty) = match agg {
            Some(a) => {
                let call = self.agg_call(a, name, args, false, star, clauses, true)?;
                let ty = call.ty;
                (WinFunc::Agg(call), Vec::new(), ty)
            }
            None => {
                if star {
                    return Err(PgError::syntax(format!(
                        "{name}(*) specified, but {name} is not an aggregate function"
                    )));
                }
                let mut bound = Vec::with_capacity(args.len());
                for a in args {
                    bound.push(self.bind(a)?);
                }
                self.window_args(name, bound)?
            }
        };
        self.in_window_def = true;
        let r = self.window_definition(spec);
        self.in_window_def = false;
        let (partition, order, frame) = r?;
        Ok(WindowCall {
            func,
            args,
            ty,
            partition,
            order,
            frame,
        })
    }

    fn window_definition(
        &mut self,
        spec: &ast::WindowSpec,
    ) -> PgResult<(Vec<Expr>, Vec<AggOrder>, Frame)> {
        let mut partition = Vec::with_capacity(spec.partition_by.len());
        for p in &spec.partition_by {
            let b = self.bind(p)?;
            partition.push(self.sortable(b)?);
        }
        let mut order = Vec::with_capacity(spec.order_by.len());
        let mut order_types = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            let b = self.bind(&o.expr)?;
            order_types.push(b.ty);
            let desc = o.asc == Some(false);
            order.push(AggOrder {
                expr: self.sortable(b)?,
                desc,
                nulls_first: o.nulls_first.unwrap_or(desc),
            });
        }
        let frame = match &spec.window_frame {
            None => Frame::default_frame(),
            Some(f) => self.frame(f, spec, &order)?,
        };
        Ok((partition, order, frame))
    }

    fn sortable(&mut self, b: BoundExpr) -> PgResult<Expr> {
        if b.ty == SqlType::Unknown {
            super::coerce(b, SqlType::Text, self.params)
        } else {
            Ok(b.expr)
        }
    }

    fn window_args(
        &mut self,
        name: &str,
        mut bound: Vec<BoundExpr>,
    ) -> PgResult<(WinFunc, Vec<Expr>, SqlType)> {
        let n = bound.len();
        let no_function = |bound: &[BoundExpr]| {
            let types: Vec<String> = bound
                .iter()
                .map(|b| {
                    if b.ty == SqlType::Unknown {
                        "unknown".to_string()
                    } else {
                        b.ty.pg_name()
                    }
                })
                .collect();
            PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {}({}) does not exist", name, types.join(", ")),
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
        };
        let simple = |f: WinFunc, ty: SqlType| (f, Vec::new(), ty);
        if window_arity(name).is_some_and(|(lo, hi)| n < lo || n > hi) {
            return Err(no_function(&bound));
        }
        Ok(match name {
            "row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" => match name {
                "row_number" => simple(WinFunc::RowNumber, SqlType::Int8),
                "rank" => simple(WinFunc::Rank, SqlType::Int8),
                "dense_rank" => simple(WinFunc::DenseRank, SqlType::Int8),
                "percent_rank" => simple(WinFunc::PercentRank, SqlType::Float8),
                _ => simple(WinFunc::CumeDist, SqlType::Float8),
            },
            "ntile" => {
                let b = bound.remove(0);
                let e = self.coerce_operand_func(b, SqlType::Int4)?;
                (WinFunc::Ntile, vec![e], SqlType::Int4)
            }
            "lag" | "lead" | "first_value" | "last_value" | "nth_value" => {
                let mut it = bound.into_iter();
                let mut x = it.next().ok_or_else(|| PgError::internal("argument"))?;
                if x.ty == SqlType::Unknown {
                    x = self.coerce_to(x, SqlType::Text)?;
                }
                let ty = x.ty;
                let mut out = vec![x.expr];
                if let Some(off) = it.next() {
                    out.push(self.coerce_operand_func(off, SqlType::Int4)?);
                }
                if let Some(def) = it.next() {
                    out.push(super::coerce(def, ty, self.params)?);
                }
                let f = match name {
                    "lag" => WinFunc::Lag,
                    "lead" => WinFunc::Lead,
                    "first_value" => WinFunc::FirstValue,
                    "last_value" => WinFunc::LastValue,
                    _ => WinFunc::NthValue,
                };
                (f, out, ty)
            }
            _ => {
                return Err(PgError::new(
                    "42809",
                    format!(
                    "OVER specified, but {name} is not a window function nor an aggregate function"
                ),
                ))
            }
        })
    }

    fn frame(
        &mut self,
        f: &ast::WindowFrame,
        spec: &ast::WindowSpec,
        order: &[AggOrder],
    ) -> PgResult<Frame> {
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let end_ast = f
            .end_bound
            .clone()
            .unwrap_or(ast::WindowFrameBound::CurrentRow);
        use ast::WindowFrameBound as B;
        match (&f.start_bound, &end_ast) {
            (B::Following(None), _) => {
                return Err(windowing("frame start cannot be UNBOUNDED FOLLOWING"))
            }
            (_, B::Preceding(None)) => {
                return Err(windowing("frame end cannot be UNBOUNDED PRECEDING"))
            }
            (B::CurrentRow, B::Preceding(Some(_))) => {
                return Err(windowing(
                    "frame starting from current row cannot have preceding rows",
                ))
            }
            (B::Following(Some(_)), B::Preceding(Some(_)) | B::CurrentRow) => {
                return Err(windowing(
                    "frame starting from following row cannot have preceding rows",
                ))
            }
            _ => {}
        }
        if units == FrameUnits::Groups && order.is_empty() {
            return Err(windowing("GROUPS mode requires an ORDER BY clause"));
        }
        let start = self.frame_bound(units, &f.start_bound, spec, order)?;
        let end = self.frame_bound(units, &end_ast, spec, order)?;
        Ok(Frame { units, start, end })
    }

    fn frame_bound(
        &mut self,
        units: FrameUnits,
        b: &ast::WindowFrameBound,
        spec: &ast::WindowSpec,
        order: &[AggOrder],
    ) -> PgResult<FrameBound> {
        use ast::WindowFrameBound as B;
        let (off, preceding) = match b {
            B::CurrentRow => return Ok(FrameBound::CurrentRow),
            B::Preceding(None) => return Ok(FrameBound::UnboundedPreceding),
            B::Following(None) => return Ok(FrameBound::UnboundedFollowing),
            B::Preceding(Some(e)) => (e, true),
            B::Following(Some(e)) => (e, false),
        };
        let e = if units == FrameUnits::Range {
            if order.len() != 1 {
                return Err(windowing(
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                ));
            }
            let key = &spec.order_by[0].expr;
            let minus = preceding != order[0].desc;
            let ast_e = ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(key.clone()))),
                op: if minus {
                    ast::BinaryOperator::Minus
                } else {
                    ast::BinaryOperator::Plus
                },
                right: Box::new(ast::Expr::Nested(off.clone())),
            };
            self.bind(&ast_e)?.expr
        } else {
            let b = self.bind(off)?;
            super::coerce(b, SqlType::Int8, self.params)?
        };
        Ok(if preceding {
            FrameBound::Preceding(e)
        } else {
            FrameBound::Following(e)
        })
    }

    /// Binds `grouping(a, b, …)` in a grouped query.
    pub(super) fn grouping_call(&mut self, args: &[&ast::Expr]) -> PgResult<BoundExpr> {
        if self.in_agg {
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate function calls cannot contain grouping operations",
            ));
        }
        let mut keys = Vec::with_capacity(args.len());
        for a in args {
            let b = self.bind(a)?;
            let grouping = self
                .grouping
                .as_deref()
                .ok_or_else(|| PgError::internal("no grouping"))?;
            match grouping.group_by.iter().position(|g| *g == b.expr) {
                Some(i) => keys.push(i),
                None => {
                    return Err(PgError::new(
                        sqlstate::GROUPING_ERROR,
                        "arguments to GROUPING must be grouping expressions of the associated query level",
                    ))
                }
            }
        }
        let grouping = self
            .grouping
            .as_deref_mut()
            .ok_or_else(|| PgError::internal("no grouping"))?;
        let idx = match grouping.grouping_calls.iter().position(|k| *k == keys) {
            Some(i) => i,
            None => {
                grouping.grouping_calls.push(keys);
                grouping.grouping_calls.len() - 1
            }
        };
        Ok(BoundExpr {
            expr: Expr::GroupingFunc(idx),
            ty: SqlType::Int4,
        })
    }
}

/// The window functions (those that are not aggregates) and how many
/// arguments each takes, (fewest, most): what `window_args` binds and
/// `pg_proc` lists (`crate::pgcatalog::proc`).
pub fn window_arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" => (0, 0),
        "ntile" | "first_value" | "last_value" => (1, 1),
        "nth_value" => (2, 2),
        "lag" | "lead" => (1, 3),
        _ => return None,
    })
}
