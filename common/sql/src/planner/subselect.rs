//! Subqueries, correlation and name scopes across query levels
//! (PostgreSQL's subselect.c, with the part of parse analysis that
//! resolves outer references).
//!
//! ## Levels and correlation
//!
//! Each SELECT block is bound against a [`Level`]: its FROM clause's
//! columns (a `Scope`), the expressions of its merged USING columns, and —
//! when the block is inside a subquery — the [`Outer`] boundary of that
//! subquery. A name the block's own scope lacks is looked up through the
//! boundary in the enclosing level; found there, it becomes an executor
//! parameter: the boundary allocates a slot, records the expression that
//! computes the value in the enclosing level, and the subquery reads
//! `Expr::ExecParam(slot)`. A reference two levels up chains: the middle
//! level records a parameter of its own, and the inner one records an
//! expression that reads it. The recorded expressions become the
//! subplan's `args` (evaluated per outer row before the subquery runs) or
//! a nested loop's `params` (LATERAL).
//!
//! ```text
//!   SELECT … FROM t1 WHERE x > (SELECT avg(y) FROM t2 WHERE t2.k = t1.k)
//!                                                            └─ Level(t2) ─ Outer ─► Level(t1): Column(k)
//!   subplan args = [Column(t1.k)]  →  slot 0  →  t2 filter: Column(k) = ExecParam(0)
//! ```
//!
//! An uncorrelated subquery records nothing and is run once per execution.
//!
//! ## CTEs
//!
//! WITH names are looked up from the innermost level outwards
//! (`cte_parent`). A plain CTE is planned where it is referenced, as a
//! subquery in FROM (PostgreSQL inlines a CTE referenced once, and the
//! rows are the same either way); `MATERIALIZED` and recursive CTEs are
//! planned once into the statement's CTE list and read by CteScan.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use sqlparser::ast;

use super::plannodes::{CteDef, NodeKind, PlanNode, SubPlanDef};
use super::select::{plan_query_level, OutCol};
use crate::expr::{
    bind_comparison, coerce, BinOp, BoundExpr, Expr, ParamTypes, Scope, SubLinkKind, SubPlanExpr,
    Sublink, SublinkHook,
};
use engine::catalog::CatalogView;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;

/// Statement-wide planning state.
pub struct Global<'c, 'v> {
    /// The catalog as the statement sees it.
    pub catalog: &'c CatalogView<'v>,
    /// Subqueries used as expressions, by id.
    pub subplans: RefCell<Vec<SubPlanDef>>,
    /// Materialized CTEs, by id.
    pub ctes: RefCell<Vec<CteDef>>,
    /// Next free executor parameter slot.
    pub next_param: Cell<usize>,
    /// The tables and views the statement names directly (not those a
    /// view it names reads): a view's dependencies.
    pub relations: RefCell<Vec<pgtypes::Oid>>,
    /// Views being expanded, innermost last (a view that reaches itself
    /// is an error, not a stack overflow).
    pub expanding: RefCell<Vec<pgtypes::Oid>>,
}

thread_local! {
    /// While [`collect_relations`] runs: the relations every statement
    /// level named (privilege checks, `crate::aclchk`).
    static NAMED: std::cell::RefCell<Option<Vec<pgtypes::Oid>>> =
        const { std::cell::RefCell::new(None) };
    /// While [`collect_relations`] runs: whether a view was expanded (a
    /// superuser's statement is then checked as the views' owners).
    static VIEW_NAMED: Cell<bool> = const { Cell::new(false) };
    /// While [`collect_relations`] runs: the tables read by a sequential
    /// scan because they were small, with the pages they had.
    static SMALL_SCANS: std::cell::RefCell<Option<Vec<(pgtypes::RelFileId, u32)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Notes that the statement being planned reads `rel` by a sequential
/// scan where a unique index was pinned, because it had only `pages`
/// pages: the plan holds while it has no more (`Planned::sizes_hold`).
pub fn note_small_scan(rel: pgtypes::RelFileId, pages: u32) {
    SMALL_SCANS.with(|s| {
        if let Some(v) = s.borrow_mut().as_mut() {
            v.push((rel, pages));
        }
    });
}

/// Notes that the statement being planned reads a view.
pub fn note_view() {
    VIEW_NAMED.with(|v| v.set(true));
}

/// What [`collect_relations`] gathered besides the planner's answer.
pub struct Collected {
    /// The relations its statement levels named directly (sorted, each
    /// once).
    pub named: Vec<pgtypes::Oid>,
    /// Whether it expanded a view.
    pub view: bool,
    /// See [`note_small_scan`].
    pub small_scans: Vec<(pgtypes::RelFileId, u32)>,
}

/// Runs `f` (planning on this thread) and returns what it returned with
/// the relations its statement levels named directly — each [`Global`]
/// hands its `relations` over when it goes (a view's own query is not
/// among them) —, whether it expanded a view, and the small tables it
/// chose to scan whole.
pub fn collect_relations<R>(f: impl FnOnce() -> R) -> (R, Collected) {
    let outer = NAMED.with(|n| n.borrow_mut().replace(Vec::new()));
    let outer_view = VIEW_NAMED.with(|v| v.replace(false));
    let outer_small = SMALL_SCANS.with(|s| s.borrow_mut().replace(Vec::new()));
    let r = f();
    let mut named = NAMED
        .with(|n| std::mem::replace(&mut *n.borrow_mut(), outer))
        .unwrap_or_default();
    let view = VIEW_NAMED.with(|v| v.replace(outer_view));
    let small_scans = SMALL_SCANS
        .with(|s| std::mem::replace(&mut *s.borrow_mut(), outer_small))
        .unwrap_or_default();
    named.sort_unstable();
    named.dedup();
    (
        r,
        Collected {
            named,
            view,
            small_scans,
        },
    )
}

impl Drop for Global<'_, '_> {
    fn drop(&mut self) {
        let rels = self.relations.get_mut();
        if rels.is_empty() {
            return;
        }
        NAMED.with(|n| {
            if let Some(v) = n.borrow_mut().as_mut() {
                v.extend_from_slice(rels);
            }
        });
    }
}

impl<'c, 'v> Global<'c, 'v> {
    /// Fresh state for one statement.
    pub fn new(catalog: &'c CatalogView<'v>) -> Self {
        Global {
            catalog,
            subplans: RefCell::new(Vec::new()),
            ctes: RefCell::new(Vec::new()),
            next_param: Cell::new(0),
            relations: RefCell::new(Vec::new()),
            expanding: RefCell::new(Vec::new()),
        }
    }
    /// The subplans, CTEs and parameter count collected.
    pub fn into_plans(self) -> super::plannodes::StatementPlans {
        super::plannodes::StatementPlans {
            subplans: self.subplans.take(),
            ctes: self.ctes.take(),
            exec_params: self.next_param.get(),
        }
    }

    /// A new executor parameter slot.
    pub fn alloc_param(&self) -> usize {
        let s = self.next_param.get();
        self.next_param.set(s + 1);
        s
    }
}

/// A WITH entry as seen by name lookup.
pub enum CteBinding {
    /// Planned where referenced.
    Inline {
        /// The CTE's query.
        query: Box<ast::Query>,
        /// Column aliases.
        columns: Vec<String>,
        /// Being planned (a reference inside its own body is not to it).
        busy: Cell<bool>,
    },
    /// Planned once: a CteScan of `id`.
    Materialized {
        /// Index into the statement's CTEs.
        id: usize,
        /// Output columns.
        cols: Vec<OutCol>,
    },
    /// The recursive reference inside a recursive CTE's own body.
    WorkTable {
        /// The CTE.
        id: usize,
        /// Output columns (the non-recursive term's).
        cols: Vec<OutCol>,
        /// Set when the body uses it (otherwise the CTE is not recursive).
        used: Cell<bool>,
    },
}

/// One query level's names (see the module doc).
pub struct Level<'p> {
    /// Columns of the FROM clause (base columns, then merged USING ones).
    pub scope: Scope,
    /// Number of base columns; `scope` entries past it are merged columns.
    pub base_width: usize,
    /// Expression of each merged column (over scope entries).
    pub merged: Vec<Expr>,
    /// The subquery boundary this level is inside, if any.
    pub outer: Option<&'p Outer<'p>>,
    /// WITH entries defined at this level.
    pub ctes: RefCell<Vec<(String, Rc<CteBinding>)>>,
    /// Where enclosing WITH entries are found.
    pub cte_parent: Option<&'p Level<'p>>,
}

impl<'p> Level<'p> {
    /// A level without columns (the statement's root, a WITH holder).
    pub fn empty(outer: Option<&'p Outer<'p>>, cte_parent: Option<&'p Level<'p>>) -> Self {
        Level {
            scope: Scope::new(),
            base_width: 0,
            merged: Vec::new(),
            outer,
            ctes: RefCell::new(Vec::new()),
            cte_parent,
        }
    }

    /// Replaces merged-column references by their expressions over base
    /// columns.
    pub fn subst(&self, e: Expr) -> Expr {
        subst_merged(e, self.base_width, &self.merged)
    }

    /// Resolves a column name here or in an enclosing level; the result
    /// is an expression valid at this level.
    pub fn resolve_column(
        &self,
        qualifier: Option<&str>,
        name: &str,
    ) -> Option<PgResult<(Expr, SqlType)>> {
        match self.scope.resolve(qualifier, name) {
            Ok(i) => Some(Ok((self.subst(Expr::Column(i)), self.scope.columns[i].ty))),
            Err(e) if e.code == sqlstate::AMBIGUOUS_COLUMN => Some(Err(e)),
            Err(_) => self.outer?.resolve(qualifier, name),
        }
    }

    /// Finds a WITH entry by name, innermost first.
    pub fn find_cte(&self, name: &str) -> Option<Rc<CteBinding>> {
        let mut l = Some(self);
        while let Some(level) = l {
            for (n, b) in level.ctes.borrow().iter().rev() {
                if n == name {
                    if let CteBinding::Inline { busy, .. } = b.as_ref() {
                        if busy.get() {
                            continue;
                        }
                    }
                    return Some(b.clone());
                }
            }
            l = level.cte_parent;
        }
        None
    }
}

/// Replaces `Column(i)` for `i >= base` by `merged[i - base]`, recursively.
pub fn subst_merged(e: Expr, base: usize, merged: &[Expr]) -> Expr {
    if merged.is_empty() {
        return e;
    }
    fn go(e: Expr, base: usize, merged: &[Expr]) -> PgResult<Expr> {
        match e {
            Expr::Column(i) if i >= base => match merged.get(i - base) {
                Some(m) => go(m.clone(), base, merged),
                None => Ok(Expr::Column(i)),
            },
            other => other.map_children(&mut |c| go(c, base, merged)),
        }
    }
    // `go` never fails (map_children only propagates the closure's errors).
    match go(e.clone(), base, merged) {
        Ok(x) => x,
        Err(_) => e,
    }
}

/// A subquery boundary: where its outer references go.
pub struct Outer<'p> {
    /// The level the subquery appears in.
    pub parent: &'p Level<'p>,
    /// (slot, expression in the parent level) per outer reference.
    pub args: RefCell<Vec<(usize, Expr)>>,
    /// The statement's slot counter.
    pub next_param: &'p Cell<usize>,
}

impl<'p> Outer<'p> {
    /// A boundary below `parent`.
    pub fn new(parent: &'p Level<'p>, next_param: &'p Cell<usize>) -> Self {
        Outer {
            parent,
            args: RefCell::new(Vec::new()),
            next_param,
        }
    }

    /// Resolves a name in the enclosing levels; an executor parameter.
    pub fn resolve(
        &self,
        qualifier: Option<&str>,
        name: &str,
    ) -> Option<PgResult<(Expr, SqlType)>> {
        let (e, ty) = match self.parent.resolve_column(qualifier, name)? {
            Ok(x) => x,
            Err(err) => return Some(Err(err)),
        };
        let mut args = self.args.borrow_mut();
        if let Some((slot, _)) = args.iter().find(|(_, x)| *x == e) {
            return Some(Ok((Expr::ExecParam(*slot), ty)));
        }
        let slot = self.next_param.get();
        self.next_param.set(slot + 1);
        args.push((slot, e));
        Some(Ok((Expr::ExecParam(slot), ty)))
    }

    /// The recorded (slot, expression) pairs.
    pub fn take_args(&self) -> Vec<(usize, Expr)> {
        std::mem::take(&mut *self.args.borrow_mut())
    }
}

/// True if equal values of `a` and `b` always have equal key encodings
/// (so a hash table on the encoding implements `=`).
pub fn hash_compatible(a: SqlType, b: SqlType) -> bool {
    if a == SqlType::Float8 || b == SqlType::Float8 {
        return false;
    }
    if a.is_integer() && b.is_integer() {
        return true;
    }
    let plain_text = |t: SqlType| t.is_text_like() && !matches!(t, SqlType::Char(_));
    if plain_text(a) && plain_text(b) {
        return true;
    }
    // inet and cidr values encode alike (no cidr flag in the key).
    if matches!(a, SqlType::Inet | SqlType::Cidr) && matches!(b, SqlType::Inet | SqlType::Cidr) {
        return true;
    }
    a.base() == b.base() && !matches!(a, SqlType::Char(_) | SqlType::Numeric(_))
}

/// The binder's way into the planner for one level.
pub struct Hook<'h, 'c, 'v, 'p> {
    /// Statement state.
    pub g: &'h Global<'c, 'v>,
    /// The level being bound.
    pub level: &'h Level<'p>,
}

impl SublinkHook for Hook<'_, '_, '_, '_> {
    fn outer_column(&mut self, qualifier: Option<&str>, name: &str) -> Option<PgResult<BoundExpr>> {
        let r = self.level.outer?.resolve(qualifier, name)?;
        Some(r.map(|(expr, ty)| BoundExpr { expr, ty }))
    }

    fn sublink(&mut self, link: Sublink<'_>, params: &mut ParamTypes) -> PgResult<BoundExpr> {
        let g = self.g;
        let query = match &link {
            Sublink::Exists(q) | Sublink::Scalar(q) | Sublink::Array(q) => *q,
            Sublink::Compare { query, .. } => *query,
        };
        let outer = Outer::new(self.level, &g.next_param);
        let (plan, cols) = plan_query_level(g, query, Some(&outer), Some(self.level), params)?;
        let args = outer.take_args();
        let slots: Vec<usize> = args.iter().map(|(s, _)| *s).collect();
        let arg_exprs: Vec<Expr> = args.into_iter().map(|(_, e)| e).collect();
        let (kind, test, hashable, lhs, ty) = match link {
            Sublink::Exists(_) => (SubLinkKind::Exists, None, false, None, SqlType::Bool),
            Sublink::Scalar(_) => {
                if cols.len() != 1 {
                    return Err(PgError::syntax("subquery must return only one column"));
                }
                (SubLinkKind::Scalar, None, false, None, cols[0].ty)
            }
            Sublink::Array(_) => {
                if cols.len() != 1 {
                    return Err(PgError::syntax("subquery must return only one column"));
                }
                let ty = cols[0].ty.array_of().ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!(
                            "could not find array type for data type {}",
                            cols[0].ty.pg_name()
                        ),
                    )
                })?;
                let elem = match ty {
                    SqlType::Array(e) => e,
                    _ => return Err(PgError::internal("array_of gave a scalar")),
                };
                (SubLinkKind::Array(elem), None, false, None, ty)
            }
            Sublink::Compare { lhs, op, all, .. } => {
                if cols.len() != 1 {
                    return Err(PgError::syntax(if cols.len() > 1 {
                        "subquery has too many columns"
                    } else {
                        "subquery has too few columns"
                    }));
                }
                let rty = cols[0].ty;
                let (lhs_expr, lty) = if lhs.ty == SqlType::Unknown {
                    (coerce(lhs, rty, params)?, rty)
                } else {
                    (lhs.expr, lhs.ty)
                };
                let t = bind_comparison(
                    op,
                    BoundExpr {
                        expr: Expr::Column(0),
                        ty: lty,
                    },
                    BoundExpr {
                        expr: Expr::Column(1),
                        ty: rty,
                    },
                    params,
                )?;
                let plain_eq = matches!(
                    &t.expr,
                    Expr::Binary { op: BinOp::Eq, left, right }
                        if **left == Expr::Column(0) && **right == Expr::Column(1)
                );
                let hashable = op == BinOp::Eq && !all && plain_eq && hash_compatible(lty, rty);
                let kind = if all {
                    SubLinkKind::All
                } else {
                    SubLinkKind::Any
                };
                (
                    kind,
                    Some(t.expr),
                    hashable,
                    Some(Box::new(lhs_expr)),
                    SqlType::Bool,
                )
            }
        };
        let mut subplans = g.subplans.borrow_mut();
        let id = subplans.len();
        subplans.push(SubPlanDef {
            plan,
            kind,
            slots,
            test,
            hashable,
        });
        Ok(BoundExpr {
            expr: Expr::SubPlan(Box::new(SubPlanExpr {
                id,
                kind,
                args: arg_exprs,
                lhs,
            })),
            ty,
        })
    }
}

/// PostgreSQL's rules for a recursive term checked on its plan, before
/// its output types are compared with the non-recursive term's: no
/// aggregate at its own level (42P19).
pub(crate) fn check_recursive_term(node: &PlanNode) -> PgResult<()> {
    let mut n = node;
    loop {
        n = match &n.kind {
            NodeKind::Project { input, .. }
            | NodeKind::Filter { input, .. }
            | NodeKind::Sort { input, .. }
            | NodeKind::Limit { input, .. }
            | NodeKind::Unique { input, .. }
            | NodeKind::HashDistinct { input, .. } => input,
            NodeKind::Agg { grouping, .. } if !grouping.aggs.is_empty() => {
                return Err(PgError::new(
                    "42P19",
                    "aggregate functions are not allowed in a recursive query's recursive term",
                ))
            }
            _ => return Ok(()),
        };
    }
}
