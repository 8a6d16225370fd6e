//! The FROM clause: relations, joins, and where each condition runs
//! (PostgreSQL's parse_clause.c for names, initsplan.c / joinpath.c for
//! placement and join methods, in miniature).
//!
//! ## Names
//!
//! Every FROM item (table, subquery, function, VALUES, CTE) is a *rel*
//! with a contiguous range of *base columns*; a join's row is its left
//! input's columns followed by its right input's, so the whole FROM row
//! is every rel's columns in textual order. The scope lists those base
//! columns, then one *merged* column per `USING` / `NATURAL` column: the
//! unqualified name means the merged column (the left value for INNER and
//! LEFT joins, the right one for RIGHT, `COALESCE(left, right)` for FULL),
//! while `a.id` and `b.id` still reach each side. `SELECT *` lists merged
//! columns first, then each side's other columns, as PostgreSQL does.
//!
//! ## Placement (the invariants)
//!
//! Conditions are bound over the whole FROM row and split into conjuncts;
//! each goes as deep as it may:
//!
//! 1. A WHERE conjunct goes into a join input when it references only that
//!    input's rels and the input is not the NULL-extended side of an outer
//!    join (a WHERE condition on the nullable side must see the NULLs);
//!    otherwise it is a join condition of an INNER join, or a filter above
//!    an outer join.
//! 2. An ON conjunct of an INNER join is placed as a WHERE conjunct. An ON
//!    conjunct of a LEFT join that references only the right side filters
//!    the right input (those rows then just do not match); anything else
//!    in ON stays a join condition, never a filter of the preserved side.
//! 3. At a base table, the conjuncts become the scan's filter, and an
//!    index lookup when they pin every column of an index.
//!
//! ## Join methods
//!
//! Join conditions of the form `left expr = right expr` on hash-compatible
//! types become hash keys: a hash join (every join type, RIGHT and FULL
//! too); an inner join hashes whichever input is estimated smaller. When
//! the keys pin an index of an inner base table and an index lookup per
//! outer row is estimated cheaper than reading the table into a hash
//! table, an index nested loop looks the inner rows up instead. Otherwise,
//! and for LATERAL items, a nested loop.
//!
//! ## Join order and estimates
//!
//! A run of inner joins is reordered by cost (`JoinPlanner::join_order`):
//! every left-deep order for up to ten inputs, greedy beyond. The row
//! estimates behind it come from `ANALYZE`'s statistics through
//! [`super::selfuncs`] (PostgreSQL's defaults for a table never analysed).
//! Outer joins keep their place: an outer join is one input of the run.
//!
//! The run's column equalities form equivalence classes (`EqClasses`):
//! `a = b AND b = c` adds the implied `a = c`, so inputs the text only
//! connects through a third are joined directly when that is cheaper
//! (TPC-H Q5's customer and nation), and each join of the run, whose
//! sides already hold their members equal, keeps one equality per class
//! (as a hash key and in its estimate). A hash join hashes the input
//! estimated smaller; an outer join turns around for it (Hash Right
//! Join). A scan's conditions run cheapest first (`costsize::order_quals`).

use std::sync::Arc;

use sqlparser::ast;

use super::plannodes::{JoinKind, NodeKind, PlanNode, RangeEntry};
use super::select::{plan_query_level, OutCol};
use super::selfuncs::{
    clause_selectivity, clauselist_selectivity, column_of, eq_selectivity, eqjoin_selectivity,
    ndistinct, ColRef, ColumnSource, NoColumns, TableColumns,
};
use super::subselect::{hash_compatible, CteBinding, Global, Hook, Level, Outer};
use super::{choose_access_reading, ident_name, object_name, Access};
use crate::expr::{
    bind_comparison, bind_expr_hooked, coerce, BinOp, BoundExpr, Expr, ParamTypes, Scope,
    ScopeColumn,
};
use crate::functions::Func;
use engine::catalog::TableDef;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::Oid;

/// 42P10 invalid_column_reference.
const INVALID_COLUMN_REFERENCE: &str = "42P10";

/// One FROM item.
pub struct Rel {
    /// First base column.
    pub start: usize,
    /// Number of columns.
    pub width: usize,
    /// Its rows (None for a table: the scan is made with its filter).
    pub node: Option<PlanNode>,
    /// The table, for a table.
    pub table: Option<Arc<TableDef>>,
    /// LATERAL references: (slot, expression over earlier base columns).
    pub lateral: Vec<(usize, Expr)>,
    /// Its name and column names, given to its scan (EXPLAIN).
    pub rte: Arc<RangeEntry>,
}

/// The join structure of a FROM clause.
pub enum JoinTree {
    /// A rel.
    Rel(usize),
    /// A join.
    Join {
        /// Type.
        kind: JoinKind,
        /// Left input.
        left: Box<JoinTree>,
        /// Right input.
        right: Box<JoinTree>,
        /// ON (bound after the whole FROM is known).
        on_ast: Option<Box<ast::Expr>>,
        /// Conditions from USING / NATURAL and the bound ON, as conjuncts.
        on: Vec<Expr>,
    },
}

/// A FROM clause, named and not yet planned.
pub struct From {
    /// The join tree (None: no FROM).
    pub tree: Option<JoinTree>,
    /// The rels.
    pub rels: Vec<Rel>,
    /// Base columns then merged columns.
    pub scope: Scope,
    /// Number of base columns.
    pub base_width: usize,
    /// Expressions of merged columns.
    pub merged: Vec<Expr>,
    /// `SELECT *`: scope entries in output order.
    pub star: Vec<usize>,
    /// (table oid, column number) of each base column from a table.
    pub origins: Vec<Option<(Oid, i16)>>,
}

impl From {
    /// Inner-joins the one rel of `sub` (a FROM clause of a single table,
    /// read in a scope of its own) to this FROM clause as a hidden item:
    /// its columns become base columns after the existing ones, reachable
    /// by no name and not part of `*` (the IN-subquery pull-up of
    /// `sublink_join`). Merged columns move past them. Returns the new
    /// rel's first column, or None (nothing changed) when `sub` is not a
    /// single rel.
    pub fn add_hidden(&mut self, mut sub: From) -> Option<usize> {
        let (Some(JoinTree::Rel(0)), 1, true) =
            (sub.tree.as_ref(), sub.rels.len(), sub.merged.is_empty())
        else {
            return None;
        };
        let tree = self.tree.take()?;
        let mut rel = sub.rels.pop()?;
        let base = self.base_width;
        let w = rel.width;
        // Merged columns (numbered from `base`) move up by `w`.
        let bump =
            |e: Expr| map_columns(e, &mut |i| Expr::Column(if i >= base { i + w } else { i }));
        self.merged = std::mem::take(&mut self.merged)
            .into_iter()
            .map(bump)
            .collect();
        for s in self.star.iter_mut() {
            if *s >= base {
                *s += w;
            }
        }
        fn bump_tree(t: &mut JoinTree, bump: &dyn Fn(Expr) -> Expr) {
            if let JoinTree::Join {
                left, right, on, ..
            } = t
            {
                bump_tree(left, bump);
                bump_tree(right, bump);
                for e in on.iter_mut() {
                    *e = bump(std::mem::replace(
                        e,
                        Expr::Const(pgtypes::value::Value::Null),
                    ));
                }
            }
        }
        let mut tree = tree;
        bump_tree(&mut tree, &bump);
        let hidden = sub.scope.columns.iter().take(w).map(|c| ScopeColumn {
            table: None,
            name: c.name.clone(),
            ty: c.ty,
            qualified_only: true,
            whole_row: false,
        });
        self.scope.columns.splice(base..base, hidden);
        let origins = sub.origins.into_iter().take(w);
        let at = base.min(self.origins.len());
        self.origins.splice(at..at, origins);
        rel.start = base;
        let r = self.rels.len();
        self.rels.push(rel);
        self.base_width = base + w;
        self.tree = Some(JoinTree::Join {
            kind: JoinKind::Inner,
            left: Box::new(tree),
            right: Box::new(JoinTree::Rel(r)),
            on_ast: None,
            on: Vec::new(),
        });
        Some(base)
    }
}

/// What one item contributes while the FROM clause is being read.
struct Part {
    tree: JoinTree,
    star: Vec<usize>,
}

/// Reads a FROM clause.
pub fn read_from(
    g: &Global<'_, '_>,
    items: &[ast::TableWithJoins],
    ctx: &Level<'_>,
    params: &mut ParamTypes,
) -> PgResult<From> {
    let mut f = From {
        tree: None,
        rels: Vec::new(),
        scope: Scope::new(),
        base_width: 0,
        merged: Vec::new(),
        star: Vec::new(),
        origins: Vec::new(),
    };
    // Merged columns are numbered after every base column, which are not
    // all known yet: collect them apart and renumber at the end.
    let mut m = Merged::default();
    let mut acc: Option<Part> = None;
    for twj in items {
        let p = read_twj(g, twj, ctx, params, &mut f, &mut m)?;
        acc = Some(match acc {
            None => p,
            Some(a) => cross(a, p),
        });
    }
    // Renumber merged columns: MERGED_BASE + k → base_width + k.
    let base = f.scope.columns.len();
    f.base_width = base;
    let fix = |e: Expr| renumber(e, base);
    for (k, col) in m.cols.into_iter().enumerate() {
        let _ = k;
        f.scope.columns.push(col);
    }
    f.merged = m.exprs.into_iter().map(fix).collect();
    if let Some(p) = acc {
        f.star = p.star.into_iter().map(|i| renumber_idx(i, base)).collect();
        let mut t = p.tree;
        fix_tree(&mut t, base);
        f.tree = Some(t);
    }
    Ok(f)
}

/// Merged columns are numbered from here while the FROM is read.
const MERGED_BASE: usize = 1 << 40;

/// The largest equivalence class whose implied equalities are added (a
/// class of n members implies n(n-1)/2 of them).
const MAX_EC_MEMBERS: usize = 8;

#[derive(Default)]
struct Merged {
    cols: Vec<ScopeColumn>,
    exprs: Vec<Expr>,
}

fn renumber_idx(i: usize, base: usize) -> usize {
    if i >= MERGED_BASE {
        base + (i - MERGED_BASE)
    } else {
        i
    }
}

fn renumber(e: Expr, base: usize) -> Expr {
    map_columns(e, &mut |i| Expr::Column(renumber_idx(i, base)))
}

fn fix_tree(t: &mut JoinTree, base: usize) {
    if let JoinTree::Join {
        left, right, on, ..
    } = t
    {
        fix_tree(left, base);
        fix_tree(right, base);
        for e in on.iter_mut() {
            *e = renumber(
                std::mem::replace(e, Expr::Const(pgtypes::value::Value::Null)),
                base,
            );
        }
    }
}

/// Rewrites every `Column(i)` with `f(i)`.
pub fn map_columns(e: Expr, f: &mut dyn FnMut(usize) -> Expr) -> Expr {
    fn go(e: Expr, f: &mut dyn FnMut(usize) -> Expr) -> PgResult<Expr> {
        match e {
            Expr::Column(i) => Ok(f(i)),
            other => other.map_children(&mut |c| go(c, f)),
        }
    }
    match go(e, f) {
        Ok(x) => x,
        Err(_) => Expr::Const(pgtypes::value::Value::Null),
    }
}

/// Shifts column references down by `by` (into a join input's row).
pub fn shift(e: Expr, by: usize) -> Expr {
    map_columns(e, &mut |i| Expr::Column(i.saturating_sub(by)))
}

fn cross(a: Part, b: Part) -> Part {
    let mut star = a.star;
    star.extend(b.star);
    Part {
        tree: JoinTree::Join {
            kind: JoinKind::Inner,
            left: Box::new(a.tree),
            right: Box::new(b.tree),
            on_ast: None,
            on: Vec::new(),
        },
        star,
    }
}

fn read_twj(
    g: &Global<'_, '_>,
    twj: &ast::TableWithJoins,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &mut From,
    m: &mut Merged,
) -> PgResult<Part> {
    let mut acc = read_factor(g, &twj.relation, ctx, params, f, m)?;
    for j in &twj.joins {
        let right = read_factor(g, &j.relation, ctx, params, f, m)?;
        use ast::JoinOperator as J;
        let (kind, constraint) = match &j.join_operator {
            J::Inner(c) => (JoinKind::Inner, Some(c)),
            J::LeftOuter(c) => (JoinKind::Left, Some(c)),
            J::RightOuter(c) => (JoinKind::Right, Some(c)),
            J::FullOuter(c) => (JoinKind::Full, Some(c)),
            J::CrossJoin => (JoinKind::Inner, None),
            _ => return Err(PgError::unsupported("this kind of join is not supported")),
        };
        acc = join(acc, right, kind, constraint, f, m, params)?;
    }
    Ok(acc)
}

/// The scope entry reached by `name` unqualified among `star`.
fn find_visible(f: &From, m: &Merged, star: &[usize], name: &str) -> Option<usize> {
    let col = |i: usize| -> &ScopeColumn {
        if i >= MERGED_BASE {
            &m.cols[i - MERGED_BASE]
        } else {
            &f.scope.columns[i]
        }
    };
    let mut hits = star
        .iter()
        .copied()
        .filter(|&i| !col(i).qualified_only && col(i).name == name);
    let first = hits.next()?;
    Some(first)
}

fn entry(f: &From, m: &Merged, i: usize) -> ScopeColumn {
    if i >= MERGED_BASE {
        m.cols[i - MERGED_BASE].clone()
    } else {
        f.scope.columns[i].clone()
    }
}

fn entry_mut<'a>(f: &'a mut From, m: &'a mut Merged, i: usize) -> &'a mut ScopeColumn {
    if i >= MERGED_BASE {
        &mut m.cols[i - MERGED_BASE]
    } else {
        &mut f.scope.columns[i]
    }
}

#[allow(clippy::too_many_arguments)]
fn join(
    left: Part,
    right: Part,
    kind: JoinKind,
    constraint: Option<&ast::JoinConstraint>,
    f: &mut From,
    m: &mut Merged,
    params: &mut ParamTypes,
) -> PgResult<Part> {
    let mut on = Vec::new();
    let mut on_ast = None;
    let names: Vec<String> = match constraint {
        Some(ast::JoinConstraint::Using(cols)) => cols.iter().map(ident_name).collect(),
        Some(ast::JoinConstraint::Natural) => left
            .star
            .iter()
            .map(|&i| entry(f, m, i))
            .filter(|c| !c.qualified_only)
            .map(|c| c.name)
            .filter(|n| find_visible(f, m, &right.star, n).is_some())
            .collect(),
        Some(ast::JoinConstraint::On(e)) => {
            on_ast = Some(Box::new(e.clone()));
            Vec::new()
        }
        Some(ast::JoinConstraint::None) | None => {
            if kind != JoinKind::Inner && constraint.is_some() {
                return Err(PgError::syntax("syntax error at or near \"JOIN\""));
            }
            Vec::new()
        }
    };
    let mut star = Vec::new();
    let mut used_l = Vec::new();
    let mut used_r = Vec::new();
    for n in &names {
        let li = find_visible(f, m, &left.star, n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{n}\" specified in USING clause does not exist in left table"),
            )
        })?;
        let ri = find_visible(f, m, &right.star, n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{n}\" specified in USING clause does not exist in right table"),
            )
        })?;
        let (lt, rt) = (entry(f, m, li).ty, entry(f, m, ri).ty);
        let eq = bind_comparison(
            BinOp::Eq,
            BoundExpr {
                expr: Expr::Column(li),
                ty: lt,
            },
            BoundExpr {
                expr: Expr::Column(ri),
                ty: rt,
            },
            params,
        )?;
        on.push(eq.expr);
        let (expr, ty) = match kind {
            JoinKind::Right => (Expr::Column(ri), rt),
            JoinKind::Full => {
                let ty = crate::functions::common_type(&[lt, rt]).unwrap_or(lt);
                let l = coerce(
                    BoundExpr {
                        expr: Expr::Column(li),
                        ty: lt,
                    },
                    ty,
                    params,
                )?;
                let r = coerce(
                    BoundExpr {
                        expr: Expr::Column(ri),
                        ty: rt,
                    },
                    ty,
                    params,
                )?;
                (coalesce(l, r), ty)
            }
            _ => (Expr::Column(li), lt),
        };
        entry_mut(f, m, li).qualified_only = true;
        entry_mut(f, m, ri).qualified_only = true;
        m.cols.push(ScopeColumn {
            table: None,
            name: n.clone(),
            ty,
            qualified_only: false,
            whole_row: false,
        });
        m.exprs.push(expr);
        star.push(MERGED_BASE + m.cols.len() - 1);
        used_l.push(li);
        used_r.push(ri);
    }
    star.extend(left.star.iter().filter(|i| !used_l.contains(i)));
    star.extend(right.star.iter().filter(|i| !used_r.contains(i)));
    Ok(Part {
        tree: JoinTree::Join {
            kind,
            left: Box::new(left.tree),
            right: Box::new(right.tree),
            on_ast,
            on,
        },
        star,
    })
}

/// `COALESCE(a, b)` as a CASE.
fn coalesce(a: Expr, b: Expr) -> Expr {
    Expr::Case {
        operand: None,
        whens: vec![(
            Expr::IsNull {
                arg: Box::new(a.clone()),
                negated: true,
            },
            a,
        )],
        else_result: Some(Box::new(b)),
    }
}

fn add_rel(
    f: &mut From,
    qualifier: &str,
    cols: &[(String, SqlType)],
    origins: Option<(Oid, usize)>,
    node: Option<PlanNode>,
    table: Option<Arc<TableDef>>,
    lateral: Vec<(usize, Expr)>,
) -> Part {
    let start = f.scope.columns.len();
    for (i, (n, t)) in cols.iter().enumerate() {
        if engine::catalog::is_dropped_name(n) {
            // A dropped column keeps its place in the row but no name
            // reaches it, and `*` skips it.
            f.scope.columns.push(crate::expr::ScopeColumn {
                table: None,
                name: n.clone(),
                ty: *t,
                qualified_only: true,
                whole_row: false,
            });
        } else {
            f.scope.push(Some(qualifier), n, *t);
        }
        f.origins
            .push(origins.map(|(oid, _)| (oid, (i + 1) as i16)));
    }
    let rte = Arc::new(RangeEntry {
        alias: qualifier.to_string(),
        columns: cols.iter().map(|(n, _)| n.clone()).collect(),
    });
    let node = node.map(|n| n.with_rte(rte.clone()));
    let r = f.rels.len();
    f.rels.push(Rel {
        start,
        width: cols.len(),
        node,
        table,
        lateral,
        rte,
    });
    Part {
        tree: JoinTree::Rel(r),
        star: (start..start + cols.len())
            .filter(|&i| !engine::catalog::is_dropped_name(&cols[i - start].0))
            .collect(),
    }
}

/// Column names after an alias's column list (`AS t(a, b)`).
fn aliased(
    names: Vec<(String, SqlType)>,
    alias: Option<&ast::TableAlias>,
    what: &str,
) -> PgResult<Vec<(String, SqlType)>> {
    let mut names = names;
    if let Some(a) = alias {
        // Dropped columns take no alias.
        let visible: Vec<usize> = (0..names.len())
            .filter(|&i| !engine::catalog::is_dropped_name(&names[i].0))
            .collect();
        if a.columns.len() > visible.len() {
            return Err(PgError::new(
                INVALID_COLUMN_REFERENCE,
                format!(
                    "table \"{}\" has {} columns available but {} columns specified",
                    ident_name(&a.name),
                    visible.len(),
                    a.columns.len()
                ),
            ));
        }
        for (i, c) in visible.into_iter().zip(&a.columns) {
            names[i].0 = ident_name(c);
        }
    }
    let _ = what;
    Ok(names)
}

/// A level for LATERAL references: the columns read so far.
fn lateral_level<'p>(f: &From, m: &Merged, ctx: &'p Level<'p>) -> Level<'p> {
    let mut scope = f.scope.clone();
    let base = scope.columns.len();
    for c in &m.cols {
        scope.columns.push(c.clone());
    }
    let merged = m.exprs.iter().cloned().map(|e| renumber(e, base)).collect();
    Level {
        scope,
        base_width: base,
        merged,
        outer: ctx.outer,
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: Some(ctx),
    }
}

fn read_factor(
    g: &Global<'_, '_>,
    tf: &ast::TableFactor,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &mut From,
    m: &mut Merged,
) -> PgResult<Part> {
    match tf {
        ast::TableFactor::Table {
            name,
            alias,
            args,
            with_ordinality,
            ..
        } => {
            let rel = object_name(name);
            if let Some(args) = args {
                let fargs: Vec<&ast::FunctionArg> = args.args.iter().collect();
                let call = FunctionCall {
                    name: &rel,
                    schema: call_schema(name),
                    args: &fargs,
                    ordinality: *with_ordinality,
                    target_list: false,
                };
                return function_rel(g, &call, alias.as_ref(), ctx, params, f, m);
            }
            let qual = alias
                .as_ref()
                .map(|a| ident_name(&a.name))
                .unwrap_or_else(|| rel.clone());
            if name.0.len() == 1 {
                if let Some(b) = ctx.find_cte(&rel) {
                    return cte_rel(g, &b, &qual, alias.as_ref(), ctx, params, f);
                }
                // A transition table of the running trigger function.
                if let Some((cols, rows)) = crate::transition::transition_relation(&rel) {
                    let n = cols.len();
                    let nrows = rows.len() as f64;
                    let rows = rows
                        .iter()
                        .map(|r| r.iter().cloned().map(crate::expr::Expr::Const).collect())
                        .collect();
                    let node = PlanNode::new(NodeKind::Values { rows }, n, nrows.max(1.0));
                    let cols = aliased(cols, alias.as_ref(), &qual)?;
                    return Ok(add_rel(f, &qual, &cols, None, Some(node), None, Vec::new()));
                }
            }
            // `information_schema.x` names only the view; an unqualified
            // name is looked up in pg_catalog first (PostgreSQL's implicit
            // head of every search path).
            let qname = crate::namespace::QualName::of(name)?;
            let system = crate::sysviews::lookup_in(qname.schema.as_deref(), &rel);
            if let Some(view) = system {
                let cols: Vec<(String, SqlType)> = view
                    .columns
                    .iter()
                    .map(|(c, t)| (c.to_string(), *t))
                    .collect();
                let cols = aliased(cols, alias.as_ref(), &rel)?;
                let n = cols.len();
                f.scope.rel_oids.push((qual.clone(), view.oid));
                if crate::privileges::superuser_only_relation(view.oid).is_some() {
                    // A catalog only superusers may read.
                    g.relations.borrow_mut().push(view.oid);
                }
                let node = PlanNode::new(NodeKind::SystemView(view), n, 10.0);
                return Ok(add_rel(f, &qual, &cols, None, Some(node), None, Vec::new()));
            }
            let Some(table) = crate::namespace::find_table(g.catalog, &qname) else {
                if let Some(seq) = crate::namespace::find_sequence(g.catalog, &qname) {
                    g.relations.borrow_mut().push(seq.spec.oid);
                    let cols = vec![
                        ("last_value".to_string(), SqlType::Int8),
                        ("log_cnt".to_string(), SqlType::Int8),
                        ("is_called".to_string(), SqlType::Bool),
                    ];
                    let cols = aliased(cols, alias.as_ref(), &rel)?;
                    let node = PlanNode::new(
                        NodeKind::SequenceScan {
                            oid: seq.spec.oid,
                            name: seq.spec.name.clone(),
                        },
                        3,
                        1.0,
                    );
                    return Ok(add_rel(f, &qual, &cols, None, Some(node), None, Vec::new()));
                }
                let view = crate::namespace::find_view(g.catalog, &qname)
                    .ok_or_else(|| engine::catalog::undefined_table(&qname.display()))?;
                let (node, cols) = view_rel(g, &view, params)?;
                let cols = aliased(cols, alias.as_ref(), &rel)?;
                return Ok(add_rel(f, &qual, &cols, None, Some(node), None, Vec::new()));
            };
            g.relations.borrow_mut().push(table.oid);
            f.scope.rel_oids.push((qual.clone(), table.oid));
            let cols: Vec<(String, SqlType)> = table
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.ty))
                .collect();
            let cols = aliased(cols, alias.as_ref(), &rel)?;
            let oid = table.oid;
            Ok(add_rel(
                f,
                &qual,
                &cols,
                Some((oid, 0)),
                None,
                Some(table),
                Vec::new(),
            ))
        }
        ast::TableFactor::Function {
            name, args, alias, ..
        } => {
            let fargs: Vec<&ast::FunctionArg> = args.iter().collect();
            function_rel(
                g,
                &FunctionCall {
                    name: &object_name(name),
                    schema: call_schema(name),
                    args: &fargs,
                    ordinality: false,
                    target_list: false,
                },
                alias.as_ref(),
                ctx,
                params,
                f,
                m,
            )
        }
        ast::TableFactor::UNNEST {
            alias,
            array_exprs,
            with_offset: false,
            with_ordinality,
            ..
        } => {
            let fargs: Vec<ast::FunctionArg> = array_exprs
                .iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                .collect();
            let fargs: Vec<&ast::FunctionArg> = fargs.iter().collect();
            let call = FunctionCall {
                name: "unnest",
                schema: None,
                args: &fargs,
                ordinality: *with_ordinality,
                target_list: false,
            };
            function_rel(g, &call, alias.as_ref(), ctx, params, f, m)
        }
        ast::TableFactor::TableFunction {
            expr: ast::Expr::Function(func),
            alias,
        } => {
            let fargs: Vec<&ast::FunctionArg> = match &func.args {
                ast::FunctionArguments::List(l) => l.args.iter().collect(),
                _ => Vec::new(),
            };
            function_rel(
                g,
                &FunctionCall {
                    name: &object_name(&func.name),
                    schema: call_schema(&func.name),
                    args: &fargs,
                    ordinality: false,
                    target_list: false,
                },
                alias.as_ref(),
                ctx,
                params,
                f,
                m,
            )
        }
        ast::TableFactor::Derived {
            lateral,
            subquery,
            alias,
        } => {
            let Some(alias) = alias else {
                return Err(PgError::syntax("subquery in FROM must have an alias")
                    .with_hint("For example, FROM (SELECT ...) [AS] foo."));
            };
            let (node, cols, lat) = if *lateral {
                let lvl = lateral_level(f, m, ctx);
                let outer = Outer::new(&lvl, &g.next_param);
                let (node, cols) = plan_query_level(g, subquery, Some(&outer), Some(ctx), params)?;
                (node, cols, outer.take_args())
            } else {
                let (node, cols) = plan_query_level(g, subquery, ctx.outer, Some(ctx), params)?;
                (node, cols, Vec::new())
            };
            let cols: Vec<(String, SqlType)> = cols.into_iter().map(|c| (c.name, c.ty)).collect();
            let cols = aliased(cols, Some(alias), "subquery")?;
            let qual = ident_name(&alias.name);
            Ok(add_rel(f, &qual, &cols, None, Some(node), None, lat))
        }
        ast::TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } => {
            if alias.is_some() {
                return Err(PgError::unsupported(
                    "an alias on a parenthesized join is not supported",
                ));
            }
            read_twj(g, table_with_joins, ctx, params, f, m)
        }
        _ => Err(PgError::unsupported(
            "this kind of FROM item is not supported",
        )),
    }
}

/// A view in FROM: its stored query planned as a subquery (PostgreSQL's
/// rewriter puts the `_RETURN` rule's query in the view's range-table
/// entry), with the view's column names. The query sees neither the outer
/// query's CTEs nor its columns.
fn view_rel(
    g: &Global<'_, '_>,
    view: &engine::view::ViewSpec,
    params: &mut ParamTypes,
) -> PgResult<(PlanNode, Vec<(String, SqlType)>)> {
    g.relations.borrow_mut().push(view.oid);
    super::subselect::note_view();
    if g.expanding.borrow().contains(&view.oid) {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!(
                "infinite recursion detected in rules for relation \"{}\"",
                view.name
            ),
        ));
    }
    let query = crate::parser::parse_view_query(&view.query)?;
    let mark = g.relations.borrow().len();
    g.expanding.borrow_mut().push(view.oid);
    let root = Level::empty(None, None);
    let r = plan_query_level(g, &query, None, Some(&root), params);
    g.expanding.borrow_mut().pop();
    // Only the view itself is a relation the statement names.
    g.relations.borrow_mut().truncate(mark);
    let (node, cols) = r?;
    let cols = cols
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let name = view
                .columns
                .get(i)
                .map(|d| d.name.clone())
                .unwrap_or(c.name);
            (name, c.ty)
        })
        .collect();
    Ok((node, cols))
}

fn cte_rel(
    g: &Global<'_, '_>,
    b: &CteBinding,
    qual: &str,
    alias: Option<&ast::TableAlias>,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &mut From,
) -> PgResult<Part> {
    let (node, cols) = match b {
        CteBinding::Inline {
            query,
            columns,
            busy,
        } => {
            busy.set(true);
            let r = plan_query_level(g, query, None, Some(ctx), params);
            busy.set(false);
            let (node, mut cols) = r?;
            for (c, n) in cols.iter_mut().zip(columns) {
                c.name = n.clone();
            }
            (node, cols)
        }
        CteBinding::Materialized { id, cols } => {
            let name = g
                .ctes
                .borrow()
                .get(*id)
                .map(|c| c.name.clone())
                .unwrap_or_default();
            (
                PlanNode::new(NodeKind::CteScan { cte: *id, name }, cols.len(), 100.0),
                cols.clone(),
            )
        }
        CteBinding::WorkTable { id, cols, used } => {
            used.set(true);
            (
                PlanNode::new(NodeKind::WorkTableScan { cte: *id }, cols.len(), 10.0),
                cols.clone(),
            )
        }
    };
    let cols: Vec<(String, SqlType)> = cols.into_iter().map(|c: OutCol| (c.name, c.ty)).collect();
    let cols = aliased(cols, alias, qual)?;
    Ok(add_rel(f, qual, &cols, None, Some(node), None, Vec::new()))
}

/// A function called in FROM.
struct FunctionCall<'a> {
    /// Its name.
    name: &'a str,
    /// Its schema qualifier, if any (a user schema's: only user
    /// functions).
    schema: Option<String>,
    /// Its arguments.
    args: &'a [&'a ast::FunctionArg],
    /// `WITH ORDINALITY`: a second column numbering the rows.
    ordinality: bool,
    /// Moved here from a target list (`SELECT f()`): a user function
    /// with several result columns yields one record column.
    target_list: bool,
}

/// The name of the FROM item the planner makes of a target list's
/// set-returning functions: `ROWS FROM (f(…), g(…))`, each argument an
/// `ast::Expr::Function`. No parsed statement can name it (it has a space).
pub(crate) const ROWS_FROM: &str = "rows from";

/// A bound function scan, before it joins the FROM list.
struct FunctionScan {
    /// The FROM item's name.
    qualifier: String,
    /// Its columns.
    cols: Vec<(String, SqlType)>,
    node: PlanNode,
    /// Lateral references: (slot, expression over earlier FROM items).
    lateral: Vec<(usize, Expr)>,
    /// One column standing for the whole row (a scalar function's row).
    whole_row: bool,
}

/// The schema a function call in FROM is qualified with.
fn call_schema(n: &ast::ObjectName) -> Option<String> {
    match n.0.as_slice() {
        [s, _] | [_, s, _] => Some(ident_name(s)),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn function_rel(
    g: &Global<'_, '_>,
    call: &FunctionCall<'_>,
    alias: Option<&ast::TableAlias>,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &mut From,
    m: &Merged,
) -> PgResult<Part> {
    let scan = if call.name == ROWS_FROM {
        rows_from(g, call.args, alias, ctx, params, f, m)?
    } else {
        function_scan(g, call, alias, ctx, params, f, m)?
    };
    let start = f.scope.columns.len();
    let part = add_rel(
        f,
        &scan.qualifier,
        &scan.cols,
        None,
        Some(scan.node),
        None,
        scan.lateral,
    );
    if scan.whole_row {
        if let Some(c) = f.scope.columns.get_mut(start) {
            c.whole_row = true;
        }
    }
    Ok(part)
}

/// `ROWS FROM (f(…), …) [AS] alias (c1, …)`: the functions' scans zipped.
fn rows_from(
    g: &Global<'_, '_>,
    args: &[&ast::FunctionArg],
    alias: Option<&ast::TableAlias>,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &From,
    m: &Merged,
) -> PgResult<FunctionScan> {
    let mut cols = Vec::new();
    let mut inputs = Vec::new();
    let mut lateral = Vec::new();
    for a in args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Function(func))) = a
        else {
            return Err(PgError::internal("ROWS FROM wants function calls"));
        };
        let fargs: Vec<&ast::FunctionArg> = match &func.args {
            ast::FunctionArguments::List(l) => l.args.iter().collect(),
            _ => Vec::new(),
        };
        let name = object_name(&func.name);
        let call = FunctionCall {
            name: &name,
            schema: call_schema(&func.name),
            args: &fargs,
            ordinality: false,
            target_list: true,
        };
        let scan = function_scan(g, &call, None, ctx, params, f, m)?;
        cols.extend(scan.cols);
        lateral.extend(scan.lateral);
        inputs.push(scan.node);
    }
    let cols = match alias {
        Some(a) => aliased(cols, Some(a), ROWS_FROM)?,
        None => cols,
    };
    let rows = inputs.iter().map(|n| n.rows).fold(1.0, f64::max);
    Ok(FunctionScan {
        qualifier: alias
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| ROWS_FROM.to_string()),
        node: PlanNode::new(NodeKind::Zip { inputs }, cols.len(), rows),
        cols,
        lateral,
        whole_row: false,
    })
}

fn function_scan(
    g: &Global<'_, '_>,
    call: &FunctionCall<'_>,
    alias: Option<&ast::TableAlias>,
    ctx: &Level<'_>,
    params: &mut ParamTypes,
    f: &From,
    m: &Merged,
) -> PgResult<FunctionScan> {
    let (name, args) = (call.name, call.args);
    // A system view called as a function (`pg_control_checkpoint()`).
    if let (Some(view), true) = (crate::sysviews::lookup_function(name), args.is_empty()) {
        let cols: Vec<(String, SqlType)> = view
            .columns
            .iter()
            .map(|(c, t)| (c.to_string(), *t))
            .collect();
        let cols = aliased(cols, alias, name)?;
        let qualifier = alias
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| name.to_string());
        let n = cols.len();
        return Ok(FunctionScan {
            qualifier,
            cols,
            node: PlanNode::new(NodeKind::SystemView(view), n, 1.0),
            lateral: Vec::new(),
            whole_row: false,
        });
    }
    // Function arguments may reference earlier FROM items (implicitly
    // LATERAL, as in PostgreSQL).
    let lvl = lateral_level(f, m, ctx);
    let outer = Outer::new(&lvl, &g.next_param);
    let arg_level = Level::empty(Some(&outer), Some(ctx));
    let mut hook = Hook {
        g,
        level: &arg_level,
    };
    if let Some(scan) = json_srf_scan(name, args, alias, params, &mut hook, &outer)? {
        return Ok(scan);
    }
    if let Some(scan) = user_function_scan(call, alias, params, &mut hook, &outer)? {
        return Ok(scan);
    }
    if call.schema.as_deref().is_some_and(|s| s != "pg_catalog") {
        return Err(PgError::internal("a qualified call bound no user function"));
    }
    let (kind, ty) = super::bind_series(name, args, params, &mut |e, params| {
        bind_expr_hooked(e, &Scope::new(), params, None, &mut hook)
    })?;
    let lateral = outer.take_args();
    let (qualifier, cname) = match alias {
        Some(a) => {
            let t = ident_name(&a.name);
            let c = a
                .columns
                .first()
                .map(ident_name)
                .unwrap_or_else(|| t.clone());
            (t, c)
        }
        None => (name.to_string(), name.to_string()),
    };
    let rows = if name == "unnest" { 100.0 } else { 1000.0 };
    let mut cols = vec![(cname, ty)];
    let mut node = PlanNode::new(kind, 1, rows);
    if call.ordinality {
        let oname = alias
            .and_then(|a| a.columns.get(1))
            .map(ident_name)
            .unwrap_or_else(|| "ordinality".to_string());
        cols.push((oname, SqlType::Int8));
        node = PlanNode::new(
            NodeKind::Ordinality {
                input: Box::new(node),
            },
            2,
            rows,
        );
    }
    Ok(FunctionScan {
        qualifier,
        cols,
        node,
        lateral,
        whole_row: false,
    })
}

/// A user-defined function in FROM (`FROM f(…) [AS] t (c, …)`): its
/// result columns are its OUT / TABLE columns, or one column named after
/// the function (the alias, if given) standing for the whole row. None if
/// `name` is a built-in's or no user function's.
fn user_function_scan(
    call: &FunctionCall<'_>,
    alias: Option<&ast::TableAlias>,
    params: &mut ParamTypes,
    hook: &mut Hook<'_, '_, '_, '_>,
    outer: &Outer<'_>,
) -> PgResult<Option<FunctionScan>> {
    let name = call.name;
    let qualified = call.schema.as_deref().filter(|s| *s != "pg_catalog");
    if qualified.is_none()
        && (crate::functions::SERIES_FUNCTIONS.contains(&name) || name == "generate_subscripts")
    {
        return Ok(None);
    }
    let fname = match qualified {
        Some(s) => vec![
            ast::Ident::with_quote('"', s),
            ast::Ident::with_quote('"', name),
        ],
        None => vec![ast::Ident::new(name)],
    };
    let expr = ast::Expr::Function(ast::Function {
        name: ast::ObjectName(fname),
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: call.args.iter().map(|a| (*a).clone()).collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    });
    let b = crate::parse_func::with_set_functions(|| {
        bind_expr_hooked(&expr, &Scope::new(), params, None, hook)
    });
    let b = match b {
        Ok(b) => b,
        // Not a function at all: the built-in paths report it (a CALL
        // names only procedures: its error as it is).
        Err(e)
            if e.code == sqlstate::UNDEFINED_FUNCTION
                && !crate::parse_func::calling()
                && qualified.is_none() =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let Expr::Func {
        func: Func::User(oid),
        ..
    } = &b.expr
    else {
        return Ok(None);
    };
    let Some(def) = crate::parse_func::visible(*oid) else {
        return Ok(None);
    };
    let spec = &def.spec;
    let lateral = outer.take_args();
    let qualifier = alias
        .map(|a| ident_name(&a.name))
        .unwrap_or_else(|| name.to_string());
    let single = spec.out.len() <= 1 && spec.ret != SqlType::Record;
    if spec.ret == SqlType::Record && spec.out.is_empty() {
        return Err(PgError::syntax(
            "a column definition list is required for functions returning \"record\"",
        ));
    }
    let as_record = call.target_list && !single;
    let cols = if as_record {
        vec![(name.to_string(), SqlType::Record)]
    } else if single && spec.out.is_empty() {
        let cname = alias
            .map(|a| {
                a.columns
                    .first()
                    .map(ident_name)
                    .unwrap_or_else(|| ident_name(&a.name))
            })
            .unwrap_or_else(|| name.to_string());
        vec![(cname, spec.ret)]
    } else {
        aliased(crate::parse_func::result_columns(spec, name), alias, name)?
    };
    let rows = if spec.retset { 1000.0 } else { 1.0 };
    let mut node = PlanNode::new(
        NodeKind::UserFunction {
            call: b.expr,
            name: name.to_string(),
            as_record,
        },
        cols.len(),
        rows,
    );
    let mut cols = cols;
    if call.ordinality {
        let oname = alias
            .and_then(|a| a.columns.get(cols.len()))
            .map(ident_name)
            .unwrap_or_else(|| "ordinality".to_string());
        cols.push((oname, SqlType::Int8));
        node = PlanNode::new(
            NodeKind::Ordinality {
                input: Box::new(node),
            },
            cols.len(),
            rows,
        );
    }
    Ok(Some(FunctionScan {
        qualifier,
        whole_row: cols.len() == 1,
        cols,
        node,
        lateral,
    }))
}

/// A set-returning json function in FROM (`jsonb_each(x) AS t(k, v)`):
/// None if `name` is not one.
fn json_srf_scan(
    name: &str,
    args: &[&ast::FunctionArg],
    alias: Option<&ast::TableAlias>,
    params: &mut ParamTypes,
    hook: &mut Hook<'_, '_, '_, '_>,
    outer: &Outer<'_>,
) -> PgResult<Option<FunctionScan>> {
    if crate::jsonfuncs::resolve_srf(name, SqlType::Unknown).is_none() {
        return Ok(None);
    }
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] = args else {
        return Err(PgError::new(
            pgtypes::error::sqlstate::UNDEFINED_FUNCTION,
            format!("function {name} with this number of arguments does not exist"),
        ));
    };
    let b = bind_expr_hooked(e, &Scope::new(), params, None, hook)?;
    let call = match crate::jsonfuncs::resolve_srf(name, b.ty) {
        Some(r) => r?,
        None => return Ok(None),
    };
    let arg = crate::expr::coerce(b, call.arg_ty, params)?;
    let lateral = outer.take_args();
    let mut cols = call.columns();
    let qualifier = match alias {
        Some(a) => {
            let t = ident_name(&a.name);
            if call.column_named_by_alias() && a.columns.is_empty() {
                cols[0].0 = t.clone();
            }
            t
        }
        None => name.to_string(),
    };
    let cols = aliased(cols, alias, name)?;
    let whole_row = cols.len() == 1;
    let node = PlanNode::new(NodeKind::JsonSrf { call, arg }, cols.len(), 100.0);
    Ok(Some(FunctionScan {
        qualifier,
        cols,
        node,
        lateral,
        whole_row,
    }))
}

// ---------------------------------------------------------------------------
// Placement and join methods
// ---------------------------------------------------------------------------

/// Collects the inputs of the top run of inner joins of `t` in textual
/// order (a rel, or any other join kept whole), and those joins'
/// conditions.
fn inner_units<'t>(t: &'t JoinTree, units: &mut Vec<&'t JoinTree>, ons: &mut Vec<Expr>) {
    match t {
        JoinTree::Join {
            kind: JoinKind::Inner,
            left,
            right,
            on,
            ..
        } => {
            ons.extend(on.iter().cloned());
            inner_units(left, units, ons);
            inner_units(right, units, ons);
        }
        other => units.push(other),
    }
}

/// A copy of `t` with its join conditions renumbered by `f`.
fn renumbered(t: &JoinTree, f: &dyn Fn(Expr) -> Expr) -> JoinTree {
    match t {
        JoinTree::Rel(r) => JoinTree::Rel(*r),
        JoinTree::Join {
            kind,
            left,
            right,
            on,
            ..
        } => JoinTree::Join {
            kind: *kind,
            left: Box::new(renumbered(left, f)),
            right: Box::new(renumbered(right, f)),
            on_ast: None,
            on: on.iter().cloned().map(f).collect(),
        },
    }
}

/// Builds plans for a read FROM clause.
pub struct JoinPlanner<'a, 'g, 'c, 'v> {
    /// Statement state (parameter slots for index nested loops).
    pub g: &'g Global<'c, 'v>,
    /// The rels (nodes are taken as they are placed).
    pub rels: &'a mut [Rel],
    /// Type of each base column.
    pub types: Vec<SqlType>,
    /// Per rel: its table with the catalog's statistics (None for other
    /// FROM items), for row estimates.
    tables: Vec<Option<TableColumns>>,
    /// The top run of inner joins' equivalence classes while
    /// [`Self::build_top`] orders and builds it (None otherwise).
    ec: Option<EqClasses>,
    /// Per base column: read above the rel that holds it (None: all
    /// are). A table scan's estimated row width counts only these.
    needed: Option<Vec<bool>>,
}

/// Column equalities of a run of inner joins as classes of columns known
/// equal (PostgreSQL's EquivalenceClasses, for plain columns): `a = b AND
/// b = c` puts a, b and c in one class and implies `a = c`.
///
/// Invariant while set: every pair of a class's members has an equality
/// among the run's conditions (the implied ones added), each placed at
/// the lowest join that reads both; so at a join of the run whose sides
/// are whole units, the members on one side are already equal, and one
/// equality per class across the sides says everything the others say.
#[derive(Clone, Debug)]
struct EqClasses {
    /// Class of each column position (None: in no class).
    of: Vec<Option<u32>>,
    /// The run's units (rel masks).
    units: Vec<Mask>,
    /// Per class: every member is restricted to one constant (`a = 5`
    /// for each, among the run's restrictions), so no join of the run
    /// needs the class's equality (PostgreSQL drops it too).
    constant: Vec<bool>,
}

/// Bit mask of rels.
type Mask = u64;

/// A nested loop's (slot, outer expression) pairs.
type NestParams = Vec<(usize, Expr)>;

impl<'a, 'g, 'c, 'v> JoinPlanner<'a, 'g, 'c, 'v> {
    /// A planner for `rels`, whose base columns have `types`.
    pub fn new(
        g: &'g Global<'c, 'v>,
        rels: &'a mut [Rel],
        types: Vec<SqlType>,
    ) -> JoinPlanner<'a, 'g, 'c, 'v> {
        let tables = rels
            .iter()
            .map(|r| r.table.clone().map(|t| TableColumns::new(g.catalog, t)))
            .collect();
        JoinPlanner {
            g,
            rels,
            types,
            tables,
            ec: None,
            needed: None,
        }
    }

    /// Estimates each table scan's row width from the base columns
    /// `needed` above the joins (the join conditions' columns are added
    /// by [`Self::build_top`]).
    pub fn with_needed(mut self, needed: Vec<bool>) -> Self {
        self.needed = Some(needed);
        self
    }
}

impl ColumnSource for JoinPlanner<'_, '_, '_, '_> {
    fn col(&self, i: usize) -> Option<ColRef<'_>> {
        let r = self.rel_of(i)?;
        self.tables.get(r)?.as_ref()?.column(i - self.rels[r].start)
    }
}

/// Output rows of a join of `l` and `r` input rows keeping `sel` of the
/// cross product (PostgreSQL's calc_joinrel_size_estimate).
fn join_rows(kind: JoinKind, l: f64, r: f64, sel: f64) -> f64 {
    let n = l * r * sel;
    match kind {
        JoinKind::Inner => n,
        JoinKind::Left => n.max(l),
        JoinKind::Right => n.max(r),
        JoinKind::Full => n.max(l).max(r),
        JoinKind::Semi => l * (r * sel).min(1.0),
        JoinKind::Anti => l * (1.0 - (r * sel).min(1.0)),
    }
    .max(1.0)
}

/// Relative costs of the planner's join decisions, in units of one row
/// read by a sequential scan.
mod cost {
    /// One index descent (per outer row of an index nested loop).
    pub const INDEX_PROBE: f64 = 25.0;
    /// One row fetched through an index (a random heap access).
    pub const INDEX_FETCH: f64 = 4.0;
    /// One row put into a hash table.
    pub const HASH_BUILD: f64 = 2.0;
    /// One row looked up in a hash table.
    pub const HASH_PROBE: f64 = 1.0;
    /// One row a join hands up.
    pub const OUTPUT: f64 = 0.2;
}

impl JoinPlanner<'_, '_, '_, '_> {
    fn rel_of(&self, col: usize) -> Option<usize> {
        self.rels
            .iter()
            .position(|r| col >= r.start && col < r.start + r.width)
    }

    /// The rels an expression reads.
    pub fn refs(&self, e: &Expr) -> Mask {
        let mut m = 0;
        e.walk(&mut |x| {
            if let Expr::Column(i) = x {
                if let Some(r) = self.rel_of(*i) {
                    m |= 1 << r;
                }
            }
        });
        m
    }

    fn mask(t: &JoinTree) -> Mask {
        match t {
            JoinTree::Rel(r) => 1 << r,
            JoinTree::Join { left, right, .. } => Self::mask(left) | Self::mask(right),
        }
    }

    fn start(&self, t: &JoinTree) -> usize {
        match t {
            JoinTree::Rel(r) => self.rels[*r].start,
            JoinTree::Join { left, .. } => self.start(left),
        }
    }

    fn key_type(&self, e: &Expr) -> Option<SqlType> {
        key_type(e, &self.types)
    }

    /// `a = b` of two different columns whose types hash alike (equality
    /// of such types is transitive): the two positions.
    fn column_equality(&self, q: &Expr) -> Option<(usize, usize)> {
        let (Expr::Column(a), Expr::Column(b)) = eq_operands(q)? else {
            return None;
        };
        let (ta, tb) = (self.types.get(*a)?, self.types.get(*b)?);
        (a != b && hash_compatible(*ta, *tb)).then_some((*a, *b))
    }

    /// The equivalence classes of `quals`' column equalities (members in
    /// ascending order; classes of two or more), and the equalities they
    /// imply that `quals` lacks (classes up to [`MAX_EC_MEMBERS`]).
    fn equivalence_classes(&self, quals: &[&Expr]) -> (Vec<Vec<usize>>, Vec<Expr>) {
        let mut parent: Vec<usize> = (0..self.types.len()).collect();
        fn root(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let mut have = Vec::new();
        for q in quals {
            if let Some((a, b)) = self.column_equality(q) {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
                have.push((a.min(b), a.max(b)));
            }
        }
        let mut classes: Vec<Vec<usize>> = Vec::new();
        let mut index: std::collections::HashMap<usize, usize> = Default::default();
        for c in 0..parent.len() {
            let r = root(&mut parent, c);
            if r == c && !have.iter().any(|&(a, b)| a == c || b == c) {
                continue;
            }
            let i = *index.entry(r).or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            });
            classes[i].push(c);
        }
        classes.retain(|m| m.len() > 1);
        let mut implied = Vec::new();
        for m in classes.iter().filter(|m| m.len() <= MAX_EC_MEMBERS) {
            for (i, &a) in m.iter().enumerate() {
                for &b in &m[i + 1..] {
                    if !have.contains(&(a, b)) {
                        implied.push(Expr::Binary {
                            op: BinOp::Eq,
                            left: Box::new(Expr::Column(a)),
                            right: Box::new(Expr::Column(b)),
                        });
                    }
                }
            }
        }
        (classes, implied)
    }

    /// The class of a column equality while classes are set.
    fn ec_of(&self, q: &Expr) -> Option<u32> {
        let ec = self.ec.as_ref()?;
        let (a, b) = self.column_equality(q)?;
        let ca = ec.of.get(a).copied().flatten()?;
        (ec.of.get(b).copied().flatten() == Some(ca)).then_some(ca)
    }

    /// Whether a join of sides `lm` and `rm` is one of the run's, whole
    /// units on each side (where one equality per class suffices).
    fn joins_units(&self, lm: Mask, rm: Mask) -> bool {
        let Some(ec) = &self.ec else { return false };
        let whole = |side: Mask| {
            side != 0
                && ec
                    .units
                    .iter()
                    .filter(|&&u| u & side != 0)
                    .all(|&u| u & !side == 0)
        };
        whole(lm) && whole(rm)
    }

    /// `conds` (the conditions joining two sides of the run) with one
    /// equality per equivalence class: the others are implied; none for
    /// a class of columns all restricted to one constant.
    fn one_per_class(&self, conds: Vec<Expr>) -> Vec<Expr> {
        let mut seen = Vec::new();
        let constant = |c: u32| {
            self.ec
                .as_ref()
                .and_then(|ec| ec.constant.get(c as usize).copied())
                .unwrap_or(false)
        };
        conds
            .into_iter()
            .filter(|q| match self.ec_of(q) {
                Some(c) if seen.contains(&c) || constant(c) => false,
                Some(c) => {
                    seen.push(c);
                    true
                }
                None => true,
            })
            .collect()
    }

    /// PostgreSQL's extract_restriction_or_clauses: an OR over several
    /// rels whose every arm has conditions on one rel alone implies the OR
    /// of those conditions, a restriction that rel's scan can apply (TPC-H
    /// Q19: `(p_brand = 'Brand#12' AND p_size BETWEEN 1 AND 5 AND l_… ) OR
    /// …` keeps a few parts before the join). The original OR stays; the
    /// derived one only removes rows it would remove too. Conditions that
    /// call anything but plain operators (a function with side effects,
    /// a subquery) are not repeated.
    fn restriction_ors(&self, mut quals: Vec<Expr>) -> Vec<Expr> {
        fn plain(e: &Expr) -> bool {
            let mut ok = true;
            e.walk(&mut |x| match x {
                Expr::SubPlan(_) | Expr::Agg(_) | Expr::WindowFunc(_) | Expr::GroupingFunc(_) => {
                    ok = false
                }
                Expr::Func { func, .. } if !matches!(func, Func::BpcharStrip) => ok = false,
                _ => {}
            });
            ok
        }
        let mut derived = Vec::new();
        for q in &quals {
            if !matches!(q, Expr::Binary { op: BinOp::Or, .. }) {
                continue;
            }
            let mask = self.refs(q);
            if mask.count_ones() < 2 {
                continue;
            }
            let mut arms = Vec::new();
            or_arms(q, &mut arms);
            for r in 0..self.rels.len() {
                if mask & (1 << r) == 0 {
                    continue;
                }
                let per_arm: Option<Vec<Expr>> = arms
                    .iter()
                    .map(|arm| {
                        and_all(
                            arm.conjuncts()
                                .into_iter()
                                .filter(|c| self.refs(c) == 1 << r && plain(c))
                                .cloned()
                                .collect(),
                        )
                    })
                    .collect();
                if let Some(d) = per_arm.and_then(|v| {
                    v.into_iter().reduce(|a, b| Expr::Binary {
                        op: BinOp::Or,
                        left: Box::new(a),
                        right: Box::new(b),
                    })
                }) {
                    derived.push(d);
                }
            }
        }
        quals.extend(derived);
        quals
    }

    /// Plans the whole FROM tree `t` with `quals` (as [`Self::build`]).
    ///
    /// A run of three or more inner joins (comma lists, `JOIN … ON`,
    /// `CROSS JOIN`) is joined in the order [`Self::join_order`] finds
    /// cheapest, which never plans a cross product a condition can avoid
    /// (psql's `pg_class c, pg_class c2, pg_index i WHERE c.oid =
    /// i.indrelid AND i.indexrelid = c2.oid` joins `c`, `i`, `c2`). The
    /// reordered rels get new column positions for the build; a column
    /// permutation on top gives back the textual row.
    pub fn build_top(&mut self, t: &JoinTree, quals: Vec<Expr>) -> PgResult<PlanNode> {
        let quals = self.restriction_ors(quals);
        self.add_join_columns(t, &quals);
        // The units to order: the inputs of the top run of inner joins
        // (a rel, or an outer join kept whole).
        let mut units: Vec<&JoinTree> = Vec::new();
        let mut ons = Vec::new();
        inner_units(t, &mut units, &mut ons);
        let quals = with_implied_equalities(quals, &ons, &self.types);
        let n = self.rels.len();
        if units.len() < 2 || n > 64 || self.rels.iter().any(|r| !r.lateral.is_empty()) {
            return self.build(t, quals);
        }
        let umask: Vec<Mask> = units.iter().map(|u| Self::mask(u)).collect();
        if umask.iter().fold(0, |a, m| a | m) != (1u64 << n) - 1 {
            return self.build(t, quals);
        }
        // Equivalence classes: the equalities they imply join inputs no
        // written condition connects (TPC-H Q5's customer and nation,
        // equal through supplier's s_nationkey).
        let mut quals = quals;
        let all: Vec<&Expr> = quals.iter().chain(&ons).collect();
        let (classes, implied) = self.equivalence_classes(&all);
        if !classes.is_empty() && classes.iter().all(|m| m.len() <= MAX_EC_MEMBERS) {
            let mut of = vec![None; self.types.len()];
            for (i, m) in classes.iter().enumerate() {
                for &c in m {
                    of[c] = Some(i as u32);
                }
            }
            // A class whose members all equal one constant.
            let constant = classes
                .iter()
                .map(|m| {
                    let of_member = |c: usize| {
                        quals
                            .iter()
                            .filter_map(column_constant)
                            .find(|(col, _)| *col == c)
                            .map(|(_, k)| k)
                    };
                    let first = m.first().and_then(|&c| of_member(c));
                    first.is_some() && m.iter().all(|&c| of_member(c) == first)
                })
                .collect();
            self.ec = Some(EqClasses {
                of,
                units: umask.clone(),
                constant,
            });
            quals.extend(implied);
        }
        let built = self.build_run(t, quals, ons, &units, &umask);
        self.ec = None;
        built
    }

    /// [`Self::build_top`] for a run of inner joins of two or more
    /// `units`, with the equivalence classes set.
    fn build_run(
        &mut self,
        t: &JoinTree,
        quals: Vec<Expr>,
        ons: Vec<Expr>,
        units: &[&JoinTree],
        umask: &[Mask],
    ) -> PgResult<PlanNode> {
        let n = self.rels.len();
        let all: Vec<&Expr> = quals.iter().chain(&ons).collect();
        let masks: Vec<Mask> = all.iter().map(|q| self.refs(q)).collect();
        let order = self.join_order(units, umask, &all, &masks);
        if order.iter().copied().eq(0..units.len()) {
            return self.build(t, quals);
        }
        // New positions: the units in `order`, contiguous from where the
        // textual first one starts, each keeping its own layout.
        let old_starts: Vec<usize> = self.rels.iter().map(|r| r.start).collect();
        let base = self.start(units[0]);
        let mut map: Vec<usize> = (0..self.types.len()).collect();
        let mut pos = base;
        for &u in &order {
            let from = self.start(units[u]);
            let mut width = 0;
            for r in (0..n).filter(|r| umask[u] & (1 << r) != 0) {
                let at = pos + (old_starts[r] - from);
                for c in 0..self.rels[r].width {
                    if let Some(m) = map.get_mut(old_starts[r] + c) {
                        *m = at + c;
                    }
                }
                self.rels[r].start = at;
                width = width.max(at + self.rels[r].width - pos);
            }
            pos += width;
        }
        let width = pos - base;
        let old_types = self.types.clone();
        for (i, &m) in map.iter().enumerate() {
            if let (Some(t), Some(&ty)) = (self.types.get_mut(m), old_types.get(i)) {
                *t = ty;
            }
        }
        let old_needed = self.needed.clone();
        if let (Some(need), Some(old)) = (self.needed.as_mut(), old_needed.as_ref()) {
            for (i, &m) in map.iter().enumerate() {
                if let (Some(n), Some(&o)) = (need.get_mut(m), old.get(i)) {
                    *n = o;
                }
            }
        }
        if let Some(ec) = self.ec.as_mut() {
            let mut of = vec![None; ec.of.len()];
            for (i, c) in ec.of.iter().enumerate() {
                if let Some(slot) = map.get(i).and_then(|&m| of.get_mut(m)) {
                    *slot = *c;
                }
            }
            ec.of = of;
        }
        let renumber =
            |e: Expr| map_columns(e, &mut |i| Expr::Column(map.get(i).copied().unwrap_or(i)));
        let all: Vec<Expr> = quals.into_iter().chain(ons).map(renumber).collect();
        let mut tree = renumbered(units[order[0]], &renumber);
        for &u in &order[1..] {
            tree = JoinTree::Join {
                kind: JoinKind::Inner,
                left: Box::new(tree),
                right: Box::new(renumbered(units[u], &renumber)),
                on_ast: None,
                on: Vec::new(),
            };
        }
        let built = self.build(&tree, all);
        for (r, s) in self.rels.iter_mut().zip(&old_starts) {
            r.start = *s;
        }
        self.types = old_types;
        self.needed = old_needed;
        let node = built?;
        let rows = node.rows;
        let exprs = (base..base + width)
            .map(|i| Expr::Column(map.get(i).copied().unwrap_or(i) - base))
            .collect();
        Ok(PlanNode::new(
            NodeKind::Project {
                input: Box::new(node),
                exprs,
            },
            width,
            rows,
        ))
    }

    /// Rows of a join unit before its own conditions: a table's rows, a
    /// FROM item's estimate, the largest input of an outer join kept whole.
    fn unit_rows(&self, t: &JoinTree) -> f64 {
        match t {
            JoinTree::Rel(r) => match (
                self.tables.get(*r).and_then(|t| t.as_ref()),
                &self.rels[*r].node,
            ) {
                (Some(tc), _) => tc.rows(),
                (None, Some(n)) => n.rows.max(1.0),
                (None, None) => 1.0,
            },
            JoinTree::Join { left, right, .. } => self.unit_rows(left).max(self.unit_rows(right)),
        }
    }

    /// What reading unit `t` with its own conditions `local` costs: a
    /// lookup when they pin an index (or its leading columns), else the
    /// `base` rows read in order.
    fn access_cost(&self, t: &JoinTree, local: &[Expr], base: f64) -> f64 {
        let JoinTree::Rel(r) = t else { return base };
        let (Some(tc), Some(p)) = (
            self.tables.get(*r).and_then(|t| t.as_ref()),
            and_all(
                local
                    .iter()
                    .map(|q| shift(q.clone(), self.rels[*r].start))
                    .collect(),
            ),
        ) else {
            return base;
        };
        match choose_access_reading(&tc.table, &p) {
            Access::Index { index, key, .. } => {
                let lookup =
                    cost::INDEX_PROBE + key_rows(tc, &index, key.len()) * cost::INDEX_FETCH;
                lookup.min(base)
            }
            Access::SeqScan => base,
        }
    }

    /// The selectivity of join conditions `conds` with what unique keys
    /// say: where the column equalities across rels pin every column of a
    /// unique index of a table on one side, each row of the other side
    /// matches at most one of its rows, and (as through a foreign key,
    /// PostgreSQL's get_foreign_key_join_selectivity) about one: the
    /// equalities keep 1 / rows of that table rather than the product of
    /// their own estimates, which treats correlated key columns (TPC-H's
    /// `ps_partkey = l_partkey AND ps_suppkey = l_suppkey`) as independent.
    fn join_selectivity(&self, conds: &[Expr]) -> f64 {
        let sel = clauselist_selectivity(conds, self);
        let mut pinned: Vec<(usize, usize)> = Vec::new();
        let mut other: Vec<Expr> = Vec::new();
        for c in conds {
            let cross = match c {
                Expr::Binary {
                    op: BinOp::Eq,
                    left,
                    right,
                } => match (left.as_ref(), right.as_ref()) {
                    (Expr::Column(a), Expr::Column(b)) => {
                        match (self.rel_of(*a), self.rel_of(*b)) {
                            (Some(ra), Some(rb)) if ra != rb => {
                                pinned.push((ra, a - self.rels[ra].start));
                                pinned.push((rb, b - self.rels[rb].start));
                                true
                            }
                            _ => false,
                        }
                    }
                    _ => false,
                },
                _ => false,
            };
            if !cross {
                other.push(c.clone());
            }
        }
        let keyed = pinned
            .iter()
            .map(|&(r, _)| r)
            .filter_map(|r| {
                let tc = self.tables.get(r)?.as_ref()?;
                tc.table
                    .indexes
                    .list()
                    .iter()
                    .filter(|ix| ix.is_ready() && ix.spec.unique && ix.spec.predicate.is_none())
                    .any(|ix| {
                        ix.spec.is_plain()
                            && ix.spec.columns.iter().all(|c| pinned.contains(&(r, *c)))
                    })
                    .then(|| 1.0 / tc.rows().max(1.0))
            })
            .reduce(f64::min);
        match keyed {
            Some(k) => sel.max(k * clauselist_selectivity(&other, self)),
            None => sel,
        }
    }

    /// Rows per lookup when unit `t` (a table) can be read through an
    /// index whose every column `conn` pins to an expression over `outer`
    /// (an index nested loop); None when no index fits.
    fn index_probe_rows(&self, t: &JoinTree, outer: Mask, conn: &[Expr]) -> Option<f64> {
        let JoinTree::Rel(r) = t else { return None };
        let tc = self.tables.get(*r)?.as_ref()?;
        let start = self.rels[*r].start;
        let mut pinned = Vec::new();
        for q in conn {
            let Expr::Binary {
                op: BinOp::Eq,
                left,
                right,
            } = q
            else {
                continue;
            };
            for (a, b) in [(left, right), (right, left)] {
                if let Expr::Column(c) = a.as_ref() {
                    let m = self.refs(b);
                    if self.rel_of(*c) == Some(*r) && m != 0 && m & !outer == 0 {
                        pinned.push(c - start);
                    }
                }
            }
        }
        tc.table
            .indexes
            .list()
            .iter()
            .filter(|ix| ix.is_ready() && ix.spec.is_plain() && ix.spec.predicate.is_none())
            .filter_map(|ix| {
                let n = ix
                    .spec
                    .columns
                    .iter()
                    .take_while(|c| pinned.contains(c))
                    .count();
                (n > 0).then(|| key_rows(tc, ix, n))
            })
            .reduce(f64::min)
    }

    /// The order to join `units` in (the inputs of a run of inner joins;
    /// `umask[u]` its rels; `quals` with their rel masks): the cheapest
    /// left-deep order by the estimates, every order tried for up to ten
    /// units (dynamic programming over the sets joined so far), the
    /// cheapest next unit at each step beyond. A step costs a hash join
    /// (the table read, the smaller side hashed, the larger probed) or an
    /// index nested loop where an index fits, whichever is cheaper; a
    /// step no condition connects is a cross product, which costs the
    /// rows it makes and so comes last unless nothing else can.
    fn join_order(
        &self,
        units: &[&JoinTree],
        umask: &[Mask],
        quals: &[&Expr],
        masks: &[Mask],
    ) -> Vec<usize> {
        let k = units.len();
        let (mut rows, mut scan) = (Vec::with_capacity(k), Vec::with_capacity(k));
        for u in 0..k {
            let local: Vec<Expr> = quals
                .iter()
                .zip(masks)
                .filter(|(_, &m)| m != 0 && m & !umask[u] == 0)
                .map(|(q, _)| (*q).clone())
                .collect();
            let base = self.unit_rows(units[u]);
            scan.push(self.access_cost(units[u], &local, base));
            rows.push((base * clauselist_selectivity(&local, self)).max(1.0));
        }
        // (cost, rows out) of joining unit `u` to the set `s` of `srows`.
        let step = |s: Mask, srows: f64, u: usize| -> (f64, f64) {
            let conn: Vec<Expr> = quals
                .iter()
                .zip(masks)
                .filter(|(_, &m)| m & s != 0 && m & umask[u] != 0 && m & !(s | umask[u]) == 0)
                .map(|(q, _)| (*q).clone())
                .collect();
            let conn = self.one_per_class(conn);
            if conn.is_empty() {
                let out = srows * rows[u];
                return (scan[u] + out, out);
            }
            let out = (srows * rows[u] * self.join_selectivity(&conn)).max(1.0);
            let hash = scan[u]
                + rows[u].min(srows) * cost::HASH_BUILD
                + rows[u].max(srows) * cost::HASH_PROBE;
            let index = self
                .index_probe_rows(units[u], s, &conn)
                .map_or(f64::INFINITY, |p| {
                    srows * (cost::INDEX_PROBE + p * cost::INDEX_FETCH)
                });
            (hash.min(index) + out * cost::OUTPUT, out)
        };
        let set_of = |bits: usize| -> Mask {
            (0..k)
                .filter(|u| bits & (1 << u) != 0)
                .fold(0, |m, u| m | umask[u])
        };
        if k <= 10 {
            // best[bits]: (cost, rows, last unit, previous bits).
            let full = (1usize << k) - 1;
            let mut best: Vec<Option<(f64, f64, usize)>> = vec![None; full + 1];
            for u in 0..k {
                best[1 << u] = Some((scan[u], rows[u], u));
            }
            for bits in 1..=full {
                let Some((c, r, _)) = best[bits] else {
                    continue;
                };
                let s = set_of(bits);
                for u in (0..k).filter(|u| bits & (1 << u) == 0) {
                    let (sc, out) = step(s, r, u);
                    let next = bits | (1 << u);
                    if best[next].is_none_or(|b| c + sc < b.0) {
                        best[next] = Some((c + sc, out, u));
                    }
                }
            }
            let mut order = Vec::with_capacity(k);
            let mut bits = full;
            while bits != 0 {
                let Some((_, _, u)) = best[bits] else { break };
                order.push(u);
                bits &= !(1 << u);
            }
            order.reverse();
            if order.len() == k {
                return order;
            }
        }
        // Greedy: the cheapest start, then the cheapest next step.
        let first = (0..k)
            .min_by(|a, b| rows[*a].total_cmp(&rows[*b]))
            .unwrap_or(0);
        let mut order = vec![first];
        let (mut s, mut r) = (umask[first], rows[first]);
        let mut left: Vec<usize> = (0..k).filter(|u| *u != first).collect();
        while !left.is_empty() {
            let (i, (_, out)) = left
                .iter()
                .map(|&u| step(s, r, u))
                .enumerate()
                .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                .unwrap_or((0, (0.0, r)));
            let u = left.remove(i);
            order.push(u);
            s |= umask[u];
            r = out;
        }
        order
    }

    /// Plans `t` with `quals` (conjuncts over base columns that only read
    /// `t`'s rels) applied; the result's row is `t`'s base columns.
    pub fn build(&mut self, t: &JoinTree, quals: Vec<Expr>) -> PgResult<PlanNode> {
        match t {
            JoinTree::Rel(r) => self.build_rel(*r, quals),
            JoinTree::Join {
                kind,
                left,
                right,
                on,
                ..
            } => {
                let (lm, rm) = (Self::mask(left), Self::mask(right));
                let kind = *kind;
                let mut lq = Vec::new();
                let mut rq = Vec::new();
                let mut jq = Vec::new();
                let mut post = Vec::new();
                for q in quals {
                    let m = self.refs(&q);
                    if m & !lm == 0 && matches!(kind, JoinKind::Inner | JoinKind::Left) {
                        lq.push(q);
                    } else if m & !rm == 0 && matches!(kind, JoinKind::Inner | JoinKind::Right) {
                        rq.push(q);
                    } else if kind == JoinKind::Inner {
                        jq.push(q);
                    } else {
                        post.push(q);
                    }
                }
                for q in on.iter().cloned() {
                    let m = self.refs(&q);
                    match kind {
                        JoinKind::Inner if m != 0 && m & !lm == 0 => lq.push(q),
                        JoinKind::Inner if m != 0 && m & !rm == 0 => rq.push(q),
                        JoinKind::Left if m != 0 && m & !rm == 0 => rq.push(q),
                        JoinKind::Right if m != 0 && m & !lm == 0 => lq.push(q),
                        _ => jq.push(q),
                    }
                }
                let ls = self.start(left);
                let rs = self.start(right);
                let lwidth: usize = self
                    .rels
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| lm & (1 << i) != 0)
                    .map(|(_, r)| r.width)
                    .sum();
                // Across two sides of the run, one equality per class.
                let jq = if kind == JoinKind::Inner && self.joins_units(lm, rm) {
                    self.one_per_class(jq)
                } else {
                    jq
                };
                // Hash keys: `l = r` across the two sides.
                let mut okeys = Vec::new();
                let mut ikeys = Vec::new();
                let mut rest = Vec::new();
                for q in jq {
                    if let Expr::Binary {
                        op: BinOp::Eq,
                        left: a,
                        right: b,
                    } = &q
                    {
                        let (ma, mb) = (self.refs(a), self.refs(b));
                        let pair = if ma != 0 && mb != 0 && ma & !lm == 0 && mb & !rm == 0 {
                            Some(((**a).clone(), (**b).clone()))
                        } else if ma != 0 && mb != 0 && mb & !lm == 0 && ma & !rm == 0 {
                            Some(((**b).clone(), (**a).clone()))
                        } else {
                            None
                        };
                        if let Some((o, i)) = pair {
                            let ok = match (self.key_type(&o), self.key_type(&i)) {
                                (Some(x), Some(y)) => hash_compatible(x, y),
                                _ => false,
                            };
                            if ok {
                                okeys.push(o);
                                ikeys.push(i);
                                rest.push(q);
                                continue;
                            }
                        }
                    }
                    rest.push(q);
                }
                // `rest` still holds the key equalities (for the nested
                // loop forms); a hash join drops them below.
                let lateral = match right.as_ref() {
                    JoinTree::Rel(r) => !self.rels[*r].lateral.is_empty(),
                    _ => false,
                };
                let left_node = self.build(left, lq)?;
                let node = if lateral {
                    if !matches!(kind, JoinKind::Inner | JoinKind::Left) {
                        return Err(PgError::new(
                            INVALID_COLUMN_REFERENCE,
                            "invalid reference to FROM-clause entry",
                        )
                        .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference."));
                    }
                    let JoinTree::Rel(r) = right.as_ref() else {
                        return Err(PgError::internal("lateral join input"));
                    };
                    let lat = std::mem::take(&mut self.rels[*r].lateral);
                    let mut nl_params = Vec::new();
                    for (slot, e) in lat {
                        if self.refs(&e) & !lm != 0 {
                            return Err(PgError::unsupported(
                                "a LATERAL reference to this FROM item is not supported",
                            ));
                        }
                        nl_params.push((slot, shift(e, ls)));
                    }
                    let right_node = self.build(right, rq)?;
                    self.nestloop(left_node, right_node, kind, rest, ls, nl_params)
                } else if !okeys.is_empty() {
                    match self.index_nestloop(&left_node, right, kind, &okeys, &ikeys, &rq, ls)? {
                        Some((inner, nl_params)) => {
                            self.nestloop(left_node, inner, kind, rest, ls, nl_params)
                        }
                        None => {
                            let right_node = self.build(right, rq)?;
                            let keyset: Vec<Expr> = okeys
                                .iter()
                                .zip(&ikeys)
                                .map(|(o, i)| Expr::Binary {
                                    op: BinOp::Eq,
                                    left: Box::new(o.clone()),
                                    right: Box::new(i.clone()),
                                })
                                .collect();
                            let non_key: Vec<Expr> = rest
                                .into_iter()
                                .filter(|q| {
                                    !keyset.contains(q) && !keyset.iter().any(|k| swapped(k) == *q)
                                })
                                .collect();
                            let mut sel = clauselist_selectivity(&non_key, self);
                            for (o, i) in okeys.iter().zip(&ikeys) {
                                sel *= eqjoin_selectivity(o, i, self);
                            }
                            let all: Vec<Expr> = keyset.iter().chain(&non_key).cloned().collect();
                            let sel = sel.max(self.join_selectivity(&all));
                            let qual: Vec<Expr> =
                                non_key.into_iter().map(|q| shift(q, ls)).collect();
                            let rows = join_rows(kind, left_node.rows, right_node.rows, sel);
                            let classes: Vec<Option<u8>> = okeys
                                .iter()
                                .zip(&ikeys)
                                .map(|(o, i)| {
                                    let (a, b) = (self.key_type(o)?, self.key_type(i)?);
                                    merge_class(a).filter(|&c| merge_class(b) == Some(c))
                                })
                                .collect();
                            // The inner side's distinct keys, for a semi join
                            // that may hash them alone.
                            let inner_groups = (kind == JoinKind::Semi && qual.is_empty())
                                .then(|| self.distinct_rows(&ikeys, right_node.rows));
                            let okeys: Vec<Expr> =
                                okeys.into_iter().map(|e| shift(e, ls)).collect();
                            let ikeys: Vec<Expr> =
                                ikeys.into_iter().map(|e| shift(e, rs)).collect();
                            match merge_order(&left_node, &right_node, &okeys, &ikeys, &classes) {
                                Some(perm) => merge_join(
                                    left_node,
                                    right_node,
                                    kind,
                                    perm.iter().map(|&p| okeys[p].clone()).collect(),
                                    perm.iter().map(|&p| ikeys[p].clone()).collect(),
                                    and_all(qual),
                                    rows,
                                ),
                                None => match inner_groups {
                                    Some(groups) => semi_or_unique_inner(
                                        left_node, right_node, okeys, ikeys, rows, groups,
                                    ),
                                    None => hash_join(
                                        left_node,
                                        right_node,
                                        kind,
                                        okeys,
                                        ikeys,
                                        and_all(qual),
                                        rows,
                                    ),
                                },
                            }
                        }
                    }
                } else {
                    let right_node = self.build(right, rq)?;
                    // One row at most on the inner side of a join that
                    // is not a table's scan: made the outer one, that
                    // join runs once and the row is not read again per
                    // row it makes (PostgreSQL's costs choose the same).
                    // A table's scan stays outer, where a parallel
                    // aggregation can share its pages out.
                    let turn = kind == JoinKind::Inner
                        && right_node.rows <= 1.0
                        && left_node.rows > 1.0
                        && !matches!(
                            left_node.kind,
                            NodeKind::SeqScan { .. } | NodeKind::IndexScan { .. }
                        );
                    let node = self.nestloop(left_node, right_node, kind, rest, ls, Vec::new());
                    if turn {
                        turned_nestloop(node)
                    } else {
                        node
                    }
                };
                let _ = lwidth;
                Ok(
                    match and_all(post.into_iter().map(|q| shift(q, ls)).collect()) {
                        Some(pred) => filter(node, pred),
                        None => node,
                    },
                )
            }
        }
    }

    /// Distinct values of `keys` (columns of this run) among `rows` rows:
    /// the product of their columns' distinct counts (a key that is not a
    /// column: a tenth of the rows), at most `rows`.
    pub(super) fn distinct_rows(&self, keys: &[Expr], rows: f64) -> f64 {
        let mut groups: f64 = 1.0;
        for k in keys {
            groups *= match column_of(k).and_then(|i| self.col(i)) {
                Some(c) => ndistinct(&c),
                None => (rows / 10.0).max(1.0),
            };
        }
        groups.min(rows).max(1.0)
    }

    fn nestloop(
        &self,
        left: PlanNode,
        right: PlanNode,
        kind: JoinKind,
        quals: Vec<Expr>,
        ls: usize,
        params: Vec<(usize, Expr)>,
    ) -> PlanNode {
        // A parameterized inner side already gives the rows per outer
        // row its keys match.
        let sel = if params.is_empty() {
            self.join_selectivity(&quals)
        } else {
            1.0
        };
        let rows = join_rows(kind, left.rows, right.rows, sel);
        let width = kind.row_width(left.width, right.width);
        PlanNode::new(
            NodeKind::NestLoop {
                outer: Box::new(left),
                inner: Box::new(right),
                kind,
                qual: and_all(quals.into_iter().map(|q| shift(q, ls)).collect()),
                params,
            },
            width,
            rows,
        )
    }

    /// An index lookup on the inner side per outer row, when the outer
    /// side is small and the keys pin an index of an inner base table.
    #[allow(clippy::too_many_arguments)]
    pub fn index_nestloop(
        &mut self,
        left: &PlanNode,
        right: &JoinTree,
        kind: JoinKind,
        okeys: &[Expr],
        ikeys: &[Expr],
        rq: &[Expr],
        ls: usize,
    ) -> PgResult<Option<(PlanNode, NestParams)>> {
        if !matches!(
            kind,
            JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
        ) {
            return Ok(None);
        }
        let JoinTree::Rel(r) = right else {
            return Ok(None);
        };
        let Some(table) = self.rels[*r].table.clone() else {
            if left.rows > 10.0 {
                return Ok(None);
            }
            return Ok(self.keyed_view_nestloop(*r, okeys, ikeys, rq, ls));
        };
        let rs = self.rels[*r].start;
        // Inner key columns that are plain columns of the table.
        let mut eqs: Vec<(usize, &Expr)> = Vec::new();
        for (o, i) in okeys.iter().zip(ikeys) {
            if let Expr::Column(c) = i {
                eqs.push((c - rs, o));
            }
        }
        if eqs.is_empty() {
            return Ok(None);
        }
        // Pretend the outer keys are parameters to reuse choose_access.
        let mut slots = Vec::new();
        let mut conj = Vec::new();
        for (c, o) in &eqs {
            let slot = self.g.alloc_param();
            slots.push((slot, shift((*o).clone(), ls)));
            conj.push(Expr::Binary {
                op: BinOp::Eq,
                left: Box::new(Expr::Column(*c)),
                right: Box::new(Expr::ExecParam(slot)),
            });
        }
        let probe = and_all(conj).unwrap_or(Expr::Const(pgtypes::value::Value::Bool(true)));
        let Access::Index {
            index,
            key,
            key_types,
        } = choose_access_reading(&table, &probe)
        else {
            return Ok(None);
        };
        let used: Vec<usize> = key
            .iter()
            .filter_map(|k| match k {
                Expr::ExecParam(s) => Some(*s),
                _ => None,
            })
            .collect();
        let params: Vec<(usize, Expr)> = slots
            .into_iter()
            .filter(|(s, _)| used.contains(s))
            .collect();
        // Rows per probe: the table's rows the key equalities keep.
        let Some(tc) = self.tables.get(*r).and_then(|t| t.as_ref()) else {
            return Ok(None);
        };
        let table_rows = tc.rows();
        let per_probe = key_rows(tc, &index, key.len());
        let local: Vec<Expr> = rq.iter().cloned().map(|q| shift(q, rs)).collect();
        let filtered = table_rows * clauselist_selectivity(&local, tc);
        // An index lookup per outer row, or one scan of the table into a
        // hash table.
        let probe_cost = left.rows * (cost::INDEX_PROBE + per_probe * cost::INDEX_FETCH);
        let hash_cost = table_rows + filtered * cost::HASH_BUILD + left.rows * cost::HASH_PROBE;
        if probe_cost >= hash_cost {
            return Ok(None);
        }
        let filter = and_all(local);
        // The key's rows, as many as its own conditions keep.
        let rows = (per_probe * filtered / table_rows.max(1.0)).max(1.0);
        self.rels[*r].node = None;
        let mut node = PlanNode::new(
            NodeKind::IndexScan {
                table: table.clone(),
                index,
                key,
                key_types,
                filter,
                needed: None,
                layout: Default::default(),
            },
            table.columns.len(),
            rows,
        )
        .with_rte(self.rels[*r].rte.clone());
        if let Some(w) = self.handed_up_width(*r) {
            node.byte_width = w;
        }
        Ok(Some((node, params)))
    }

    /// [`Self::index_nestloop`] for a catalog with a key column (see
    /// `SystemView::key`) joined on it: per outer row, only the rows of
    /// the relation the outer key names are built.
    fn keyed_view_nestloop(
        &mut self,
        r: usize,
        okeys: &[Expr],
        ikeys: &[Expr],
        rq: &[Expr],
        ls: usize,
    ) -> Option<(PlanNode, NestParams)> {
        let rs = self.rels[r].start;
        let NodeKind::SystemView(view) = &self.rels[r].node.as_ref()?.kind else {
            return None;
        };
        let view: &'static crate::sysviews::SystemView = view;
        let kc = view
            .key
            .and_then(|k| view.columns.iter().position(|(c, _)| *c == k))?;
        let (o, _) = okeys
            .iter()
            .zip(ikeys)
            .find(|(_, i)| matches!(i, Expr::Column(c) if c.checked_sub(rs) == Some(kc)))?;
        let width = self.rels[r].node.as_ref()?.width;
        let slot = self.g.alloc_param();
        let pred = and_all(rq.iter().cloned().map(|q| shift(q, rs)).collect());
        self.rels[r].node = None;
        let scan = PlanNode::new(
            NodeKind::KeyedView {
                view,
                key: Expr::ExecParam(slot),
            },
            width,
            1.0,
        )
        .with_rte(self.rels[r].rte.clone());
        let node = match pred {
            Some(p) => filter(scan, p),
            None => scan,
        };
        Some((node, vec![(slot, shift(o.clone(), ls))]))
    }

    /// Adds to [`Self::needed`] the columns the joins read: conditions
    /// over more than one rel, and every ON condition. A rel reading
    /// others (LATERAL) makes every column needed.
    fn add_join_columns(&mut self, t: &JoinTree, quals: &[Expr]) {
        if self.rels.iter().any(|r| !r.lateral.is_empty()) {
            self.needed = None;
        }
        let Some(mut need) = self.needed.take() else {
            return;
        };
        let mut mark = |e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Column(i) = x {
                    if let Some(n) = need.get_mut(*i) {
                        *n = true;
                    }
                }
            })
        };
        for q in quals {
            if self.refs(q).count_ones() > 1 {
                mark(q);
            }
        }
        fn ons(t: &JoinTree, f: &mut dyn FnMut(&Expr)) {
            if let JoinTree::Join {
                left, right, on, ..
            } = t
            {
                on.iter().for_each(&mut *f);
                ons(left, f);
                ons(right, f);
            }
        }
        ons(t, &mut mark);
        self.needed = Some(need);
    }

    /// The estimated width of rel `r`'s rows as handed up: its needed
    /// columns' (None: unknown, the whole row's).
    fn handed_up_width(&self, r: usize) -> Option<u32> {
        let need = self.needed.as_ref()?;
        let tc = self.tables.get(r)?.as_ref()?;
        let start = self.rels[r].start;
        Some(tc.width_of(&|c| need.get(start + c).copied().unwrap_or(true)))
    }

    fn build_rel(&mut self, r: usize, quals: Vec<Expr>) -> PgResult<PlanNode> {
        let start = self.rels[r].start;
        let quals: Vec<Expr> = quals.into_iter().map(|q| shift(q, start)).collect();
        let (rows, table_rows, pages, avg_width) = match self.tables.get(r).and_then(|t| t.as_ref())
        {
            Some(tc) => (
                (tc.rows() * clauselist_selectivity(&quals, tc)).max(1.0),
                tc.rows(),
                tc.pages(),
                tc.avg_width(),
            ),
            None => (1.0, 1.0, 0, None),
        };
        let mut quals = quals;
        super::costsize::order_quals(&mut quals);
        let pred = and_all(quals);
        if let Some(table) = self.rels[r].table.clone() {
            let rte = self.rels[r].rte.clone();
            let width = table.columns.len();
            let mut access = match &pred {
                Some(p) => choose_access_reading(&table, p),
                None => Access::SeqScan,
            };
            // A range of an index's leading columns: only when it keeps
            // few enough rows to beat reading the table in order.
            if let (Access::Index { index, key, .. }, Some(tc)) =
                (&access, self.tables.get(r).and_then(|t| t.as_ref()))
            {
                if key.len() < index.spec.columns.len()
                    && key_rows(tc, index, key.len()) * cost::INDEX_FETCH > table_rows
                {
                    access = Access::SeqScan;
                }
            }
            // A unique key pinned whole on a table of a few pages: reading
            // them costs less than the index's random pages. The plan
            // holds while the table stays that small (the caches plan
            // again past it: `Planned::sizes_hold`).
            if let Access::Index { index, key, .. } = &access {
                let quals = pred.as_ref().map_or(0, |p| p.conjuncts().len());
                if index.spec.unique
                    && key.len() == index.spec.columns.len()
                    && super::costsize::whole_scan_beats_unique_lookup(pages, table_rows, quals)
                {
                    super::subselect::note_small_scan(table.rel, pages);
                    access = Access::SeqScan;
                }
            }
            let mut scan = match access {
                Access::SeqScan => PlanNode::new(
                    NodeKind::SeqScan {
                        table,
                        filter: pred,
                        needed: None,
                        filter_first: None,
                        parallel: false,
                    },
                    width,
                    rows,
                )
                .with_scan(table_rows, pages, avg_width)
                .with_rte(rte),
                Access::Index {
                    index,
                    key,
                    key_types,
                } => {
                    let rows = if index.spec.unique && key.len() == index.spec.columns.len() {
                        1.0
                    } else {
                        rows
                    };
                    PlanNode::new(
                        NodeKind::IndexScan {
                            table,
                            index,
                            key,
                            key_types,
                            filter: pred,
                            needed: None,
                            layout: Default::default(),
                        },
                        width,
                        rows,
                    )
                    .with_rte(rte)
                }
            };
            if let Some(w) = self.handed_up_width(r) {
                scan.byte_width = w;
            }
            return Ok(scan);
        }
        let mut node = self.rels[r]
            .node
            .take()
            .ok_or_else(|| PgError::internal("FROM item planned twice"))?;
        // A catalog with a key column and `key = constant` among the
        // quals builds only that relation's rows.
        if let (NodeKind::SystemView(view), Some(p)) = (&node.kind, &pred) {
            let view: &'static crate::sysviews::SystemView = view;
            let key_col = view
                .key
                .and_then(|k| view.columns.iter().position(|(c, _)| *c == k));
            let name_col = view
                .name_key
                .and_then(|k| view.columns.iter().position(|(c, _)| *c == k));
            let conj = p.conjuncts();
            let key = key_col
                .and_then(|kc| {
                    conj.iter()
                        .filter_map(|c| c.as_column_eq())
                        .find(|(c, _)| *c == kc)
                        .map(|(_, e)| e.clone())
                })
                .or_else(|| {
                    let nc = name_col?;
                    conj.iter().find_map(|c| name_literal(c, nc))
                });
            if let Some(key) = key {
                node = PlanNode::new(NodeKind::KeyedView { view, key }, node.width, 1.0)
                    .with_rte(self.rels[r].rte.clone());
            }
        }
        Ok(match pred {
            Some(p) => filter(node, p),
            None => node,
        })
    }
}

/// A conjunct that pins column `col` to one name: `col = 'x'`, or a
/// regular expression that matches only one string, `col ~ '^(x)$'` or
/// `'^x$'` with no metacharacter inside (what psql sends for `\d x`).
fn name_literal(c: &Expr, col: usize) -> Option<Expr> {
    let strip = |e: &Expr| -> Option<usize> {
        match e {
            Expr::Column(i) => Some(*i),
            Expr::Cast { arg, .. } => match arg.as_ref() {
                Expr::Column(i) => Some(*i),
                _ => None,
            },
            _ => None,
        }
    };
    match c {
        Expr::Binary {
            op: BinOp::Eq,
            left,
            right,
        } => match (strip(left), right.as_ref()) {
            (Some(i), Expr::Const(v @ pgtypes::value::Value::Text(_))) if i == col => {
                Some(Expr::Const(v.clone()))
            }
            _ => None,
        },
        Expr::Func {
            func:
                Func::RegexMatch {
                    icase: false,
                    negated: false,
                },
            args,
        } => {
            let [l, Expr::Const(pgtypes::value::Value::Text(p))] = args.as_slice() else {
                return None;
            };
            if strip(l) != Some(col) {
                return None;
            }
            let inner = p.strip_prefix('^')?.strip_suffix('$')?;
            let inner = inner
                .strip_prefix('(')
                .and_then(|x| x.strip_suffix(')'))
                .unwrap_or(inner);
            let literal =
                !inner.is_empty() && !inner.chars().any(|ch| ".^$*+?()[]{}|\\".contains(ch));
            literal.then(|| Expr::Const(pgtypes::value::Value::text(inner)))
        }
        _ => None,
    }
}

/// WHERE conjuncts plus those they imply through equal columns: with
/// `a = 5` and `a = b` (columns of one type), `b = 5` too — so a scan of
/// `b`'s FROM item can use the constant (PostgreSQL's equivalence
/// classes, for constants). `joins` are further conditions that hold
/// wherever the WHERE clause does (the ON conditions of the top run of
/// inner joins): their equalities carry constants too; `a = 5`, `a = b`,
/// `b = c` give `c = 5` in whatever order they come.
pub fn with_implied_equalities(
    mut quals: Vec<Expr>,
    joins: &[Expr],
    types: &[SqlType],
) -> Vec<Expr> {
    let mut consts: Vec<(usize, Expr)> = Vec::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for q in quals.iter().chain(joins) {
        if let Some((a, c)) = column_constant(q) {
            consts.push((a, c.clone()));
        } else if let Some((Expr::Column(a), Expr::Column(b))) = eq_operands(q) {
            if types.get(*a) == types.get(*b) {
                pairs.push((*a, *b));
            }
        }
    }
    // To a fixed point: each pass derives a constant or ends.
    loop {
        let mut derived_any = false;
        for &(a, b) in &pairs {
            let known = |c: usize| consts.iter().find(|(x, _)| *x == c).map(|(_, e)| e.clone());
            let derived = match (known(a), known(b)) {
                (Some(c), None) => Some((b, c)),
                (None, Some(c)) => Some((a, c)),
                _ => None,
            };
            if let Some((col, c)) = derived {
                consts.push((col, c.clone()));
                quals.push(Expr::Binary {
                    op: BinOp::Eq,
                    left: Box::new(Expr::Column(col)),
                    right: Box::new(c),
                });
                derived_any = true;
            }
        }
        if !derived_any {
            return quals;
        }
    }
}

/// The two sides of an equality `l = r`.
fn eq_operands(q: &Expr) -> Option<(&Expr, &Expr)> {
    match q {
        Expr::Binary {
            op: BinOp::Eq,
            left,
            right,
        } => Some((left, right)),
        _ => None,
    }
}

/// The constant `q` equates column `col` to, for `col = const`.
fn column_constant(q: &Expr) -> Option<(usize, &Expr)> {
    match eq_operands(q)? {
        (Expr::Column(a), c @ Expr::Const(_)) | (c @ Expr::Const(_), Expr::Column(a)) => {
            Some((*a, c))
        }
        _ => None,
    }
}

/// The static type of a join key over a row of `types`, where evident.
pub fn key_type(e: &Expr, types: &[SqlType]) -> Option<SqlType> {
    match e {
        Expr::Column(i) => types.get(*i).copied(),
        Expr::Cast { to, .. } => Some(*to),
        Expr::Const(v) if !v.is_null() => Some(v.sql_type()),
        Expr::Func {
            func: Func::BpcharStrip,
            ..
        } => Some(SqlType::Text),
        _ => None,
    }
}

/// `b = a` for `a = b`.
fn swapped(e: &Expr) -> Expr {
    match e {
        Expr::Binary { op, left, right } => Expr::Binary {
            op: *op,
            left: right.clone(),
            right: left.clone(),
        },
        other => other.clone(),
    }
}

/// ANDs conjuncts together (None for none).
pub fn and_all(mut v: Vec<Expr>) -> Option<Expr> {
    let first = if v.is_empty() {
        return None;
    } else {
        v.remove(0)
    };
    Some(v.into_iter().fold(first, |acc, e| Expr::Binary {
        op: BinOp::And,
        left: Box::new(acc),
        right: Box::new(e),
    }))
}

/// The arms of an OR (nested ORs flattened).
fn or_arms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Binary {
            op: BinOp::Or,
            left,
            right,
        } => {
            or_arms(left, out);
            or_arms(right, out);
        }
        e => out.push(e),
    }
}

/// PostgreSQL's find_duplicate_ors: a condition that every arm of an OR
/// requires is taken out of it — `(a AND b) OR (a AND c)` is `a AND (b
/// OR c)` (three-valued logic distributes too), so a join condition
/// repeated in each arm (TPC-H Q19's `p_partkey = l_partkey`) becomes a
/// join key instead of a filter over a cross product. Returns conjuncts.
pub fn factor_ors(e: Expr) -> Vec<Expr> {
    if !matches!(e, Expr::Binary { op: BinOp::Or, .. }) {
        return vec![e];
    }
    let mut list = Vec::new();
    or_arms(&e, &mut list);
    let conj: Vec<Vec<Expr>> = list
        .iter()
        .map(|a| a.conjuncts().into_iter().cloned().collect())
        .collect();
    // `a = b` and `b = a` are one condition.
    let same = |x: &Expr, y: &Expr| {
        x == y || matches!(y, Expr::Binary { op: BinOp::Eq, .. }) && swapped(y) == *x
    };
    let mut common: Vec<Expr> = Vec::new();
    for c in &conj[0] {
        if !common.iter().any(|k| same(k, c))
            && conj[1..].iter().all(|a| a.iter().any(|x| same(c, x)))
        {
            common.push(c.clone());
        }
    }
    if common.is_empty() {
        return vec![e];
    }
    let mut rests = Vec::with_capacity(conj.len());
    for a in conj {
        let rest = a
            .into_iter()
            .filter(|c| !common.iter().any(|k| same(k, c)))
            .collect();
        match and_all(rest) {
            Some(r) => rests.push(r),
            // An arm that is only the common part: the OR is implied.
            None => return common,
        }
    }
    let first = rests.remove(0);
    common.push(rests.into_iter().fold(first, |acc, r| Expr::Binary {
        op: BinOp::Or,
        left: Box::new(acc),
        right: Box::new(r),
    }));
    common
}

/// A Filter node over `node`.
pub fn filter(node: PlanNode, pred: Expr) -> PlanNode {
    let (w, rows) = (
        node.width,
        (node.rows * clause_selectivity(&pred, &NoColumns)).max(1.0),
    );
    PlanNode::new(
        NodeKind::Filter {
            input: Box::new(node),
            pred,
        },
        w,
        rows,
    )
}

/// The order `node`'s rows arrive in, as far as the planner can prove
/// it, most significant key first: a Sort's keys; an index read whole
/// (its columns ascending); carried through filters, limits, projections
/// of columns, and the outer side of a merge join that emits outer rows
/// in their order (not RIGHT / FULL, whose unmatched inner rows come out
/// of turn).
pub fn output_order(node: &PlanNode) -> Vec<super::SortKey> {
    let asc = |column| super::SortKey {
        column,
        desc: false,
        nulls_first: false,
    };
    match &node.kind {
        NodeKind::Sort { keys, .. } => keys.clone(),
        NodeKind::IndexScan { index, key, .. } if key.is_empty() && index.spec.is_plain() => {
            index.spec.columns.iter().map(|&c| asc(c)).collect()
        }
        NodeKind::Filter { input, .. } | NodeKind::Limit { input, .. } => output_order(input),
        NodeKind::Project { input, exprs } => {
            let mut out = Vec::new();
            for k in output_order(input) {
                match exprs.iter().position(|e| *e == Expr::Column(k.column)) {
                    Some(j) => out.push(super::SortKey { column: j, ..k }),
                    None => break,
                }
            }
            out
        }
        NodeKind::MergeJoin { outer, kind, .. }
            if matches!(
                kind,
                JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti
            ) =>
        {
            output_order(outer)
        }
        _ => Vec::new(),
    }
}

/// Key types a merge join may compare: the same class on both sides, one
/// whose index order, sort order and `=` agree (integers of one width,
/// text, dates and timestamps).
fn merge_class(t: SqlType) -> Option<u8> {
    Some(match t {
        SqlType::Int2 => 1,
        SqlType::Int4 => 2,
        SqlType::Int8 => 3,
        SqlType::Text | SqlType::Varchar(_) => 4,
        SqlType::Date => 5,
        SqlType::Timestamp => 6,
        SqlType::TimestampTz => 7,
        _ => return None,
    })
}

/// When both inputs already arrive sorted ascending, NULLs last, on the
/// join keys (column keys, `classes` all mergeable), the order of the key
/// pairs that order follows: a merge join needs no hash table and keeps
/// the outer order. None otherwise.
fn merge_order(
    left: &PlanNode,
    right: &PlanNode,
    okeys: &[Expr],
    ikeys: &[Expr],
    classes: &[Option<u8>],
) -> Option<Vec<usize>> {
    if okeys.is_empty() || classes.iter().any(Option::is_none) {
        return None;
    }
    let (lo, ro) = (output_order(left), output_order(right));
    if lo.len() < okeys.len() || ro.len() < okeys.len() {
        return None;
    }
    let mut perm = Vec::with_capacity(okeys.len());
    for (l, r) in lo.iter().zip(&ro).take(okeys.len()) {
        if l.desc || r.desc || l.nulls_first || r.nulls_first {
            return None;
        }
        let p = (0..okeys.len()).find(|&p| {
            !perm.contains(&p)
                && okeys[p] == Expr::Column(l.column)
                && ikeys[p] == Expr::Column(r.column)
        })?;
        perm.push(p);
    }
    Some(perm)
}

/// A merge join of `outer` and `inner`, both sorted on their keys (in
/// that order; see [`merge_order`]).
pub fn merge_join(
    outer: PlanNode,
    inner: PlanNode,
    kind: JoinKind,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    qual: Option<Expr>,
    rows: f64,
) -> PlanNode {
    let width = kind.row_width(outer.width, inner.width);
    PlanNode::new(
        NodeKind::MergeJoin {
            outer: Box::new(outer),
            inner: Box::new(inner),
            kind,
            outer_keys,
            inner_keys,
            qual,
        },
        width,
        rows,
    )
}

/// A hash join of `outer` and `inner` (keys over each one's row, `qual`
/// over the joined row). An inner join whose inner input is estimated
/// larger than its outer one hashes the outer input instead (PostgreSQL
/// hashes the smaller side), with a permutation on top that gives back
/// the outer-then-inner row.
pub fn hash_join(
    outer: PlanNode,
    inner: PlanNode,
    kind: JoinKind,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    qual: Option<Expr>,
    rows: f64,
) -> PlanNode {
    let (lw, rw) = (outer.width, inner.width);
    // Hash the input estimated smaller: an outer join turns around (a
    // LEFT join hashing its preserved side is PostgreSQL's Hash Right
    // Join), a permutation on top restores the row.
    let swapped_kind = match kind {
        JoinKind::Inner => Some(JoinKind::Inner),
        JoinKind::Left => Some(JoinKind::Right),
        JoinKind::Right => Some(JoinKind::Left),
        JoinKind::Full => Some(JoinKind::Full),
        _ => None,
    };
    if let (Some(kind), true) = (swapped_kind, inner.rows > 2.0 * outer.rows) {
        return swapped_hash_join(outer, inner, kind, outer_keys, inner_keys, qual, rows);
    }
    let width = kind.row_width(lw, rw);
    PlanNode::new(
        NodeKind::HashJoin {
            outer: Box::new(outer),
            inner: Box::new(inner),
            kind,
            outer_keys,
            inner_keys,
            qual,
            inner_needed: None,
        },
        width,
        rows,
    )
}

/// A semi join on hash keys alone: the hash semi join, or — when its
/// costs say so, PostgreSQL's JOIN_UNIQUE_INNER — an inner hash join with
/// the inner side's distinct keys (a HashAggregate of `groups` rows), cut
/// back to the outer row. The keys are the whole join condition, so each
/// outer row meets at most one distinct key: the same rows either way.
pub(super) fn semi_or_unique_inner(
    outer: PlanNode,
    inner: PlanNode,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    rows: f64,
    groups: f64,
) -> PlanNode {
    let width = outer.width;
    let unique = |outer: PlanNode, inner: PlanNode| {
        let k = inner_keys.len();
        let keys = super::select::project(inner, inner_keys.clone());
        let distinct = PlanNode::new(
            NodeKind::HashDistinct {
                input: Box::new(keys),
                columns: (0..k).collect(),
            },
            k,
            groups,
        );
        hash_join(
            outer,
            distinct,
            JoinKind::Inner,
            outer_keys.clone(),
            (0..k).map(Expr::Column).collect(),
            None,
            rows,
        )
    };
    // Costed over stand-ins of the two inputs (plans are not copied).
    let semi_cost = hash_join(
        cost_standin(&outer),
        cost_standin(&inner),
        JoinKind::Semi,
        outer_keys.clone(),
        inner_keys.clone(),
        None,
        rows,
    )
    .total_cost;
    if unique(cost_standin(&outer), cost_standin(&inner)).total_cost < semi_cost {
        let joined = unique(outer, inner);
        super::select::project(joined, (0..width).map(Expr::Column).collect())
    } else {
        hash_join(
            outer,
            inner,
            JoinKind::Semi,
            outer_keys,
            inner_keys,
            None,
            rows,
        )
    }
}

/// A node with `n`'s shape and costs and no work of its own, for costing a
/// plan shape above `n` without building it twice.
fn cost_standin(n: &PlanNode) -> PlanNode {
    PlanNode {
        kind: NodeKind::Values { rows: Vec::new() },
        width: n.width,
        rows: n.rows,
        startup_cost: n.startup_cost,
        total_cost: n.total_cost,
        byte_width: n.byte_width,
        rte: None,
    }
}

/// The hash join of `outer` and `inner` with the sides turned around:
/// `outer` is hashed, `inner` probes, and a permutation on top gives back
/// the outer-then-inner row. `kind` is the turned join's (a LEFT join's
/// is RIGHT); keys and `qual` are over the original sides.
pub fn swapped_hash_join(
    outer: PlanNode,
    inner: PlanNode,
    kind: JoinKind,
    outer_keys: Vec<Expr>,
    inner_keys: Vec<Expr>,
    qual: Option<Expr>,
    rows: f64,
) -> PlanNode {
    let (lw, rw) = (outer.width, inner.width);
    let swapped = PlanNode::new(
        NodeKind::HashJoin {
            outer: Box::new(inner),
            inner: Box::new(outer),
            kind,
            outer_keys: inner_keys,
            inner_keys: outer_keys,
            qual: qual.map(|q| turn_columns(q, lw, rw)),
            inner_needed: None,
        },
        lw + rw,
        rows,
    );
    turned_back(swapped, lw, rw)
}

/// `e` over an outer-then-inner row of widths `lw` and `rw`, rewritten
/// for the joined row of the sides turned around (inner, then outer).
fn turn_columns(e: Expr, lw: usize, rw: usize) -> Expr {
    map_columns(e, &mut |i| {
        Expr::Column(if i < lw { i + rw } else { i - lw })
    })
}

/// `node`, an inner nested loop without parameters, with its sides
/// turned around (and a permutation on top giving back its row).
fn turned_nestloop(node: PlanNode) -> PlanNode {
    let rows = node.rows;
    let NodeKind::NestLoop {
        outer,
        inner,
        kind,
        qual,
        params,
    } = node.kind
    else {
        return node;
    };
    let (lw, rw) = (outer.width, inner.width);
    let swapped = PlanNode::new(
        NodeKind::NestLoop {
            outer: inner,
            inner: outer,
            kind,
            qual: qual.map(|q| turn_columns(q, lw, rw)),
            params,
        },
        lw + rw,
        rows,
    );
    turned_back(swapped, lw, rw)
}

/// A permutation over `swapped`, a join of sides turned around, giving
/// back the outer-then-inner row.
fn turned_back(swapped: PlanNode, lw: usize, rw: usize) -> PlanNode {
    let rows = swapped.rows;
    let exprs = (0..lw)
        .map(|i| Expr::Column(rw + i))
        .chain((0..rw).map(Expr::Column))
        .collect();
    PlanNode::new(
        NodeKind::Project {
            input: Box::new(swapped),
            exprs,
        },
        lw + rw,
        rows,
    )
}

/// Rows of `tc` one lookup of the first `n` key columns of `index` finds.
fn key_rows(tc: &TableColumns, index: &engine::catalog::IndexDef, n: usize) -> f64 {
    if index.spec.unique && n == index.spec.columns.len() {
        return 1.0;
    }
    let mut rows = tc.rows();
    for c in index.spec.columns.iter().take(n) {
        if let Some(cr) = tc.column(*c) {
            rows *= eq_selectivity(&cr, None);
        }
    }
    rows.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eq(a: usize, b: usize) -> Expr {
        Expr::Binary {
            op: BinOp::Eq,
            left: Box::new(Expr::Column(a)),
            right: Box::new(Expr::Column(b)),
        }
    }

    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }
    }

    #[test]
    fn conditions_every_or_arm_requires_are_taken_out() {
        // (0=1 AND 2=3) OR (1=0 AND 4=5): 0=1 AND (2=3 OR 4=5).
        let e = bin(
            BinOp::Or,
            bin(BinOp::And, eq(0, 1), eq(2, 3)),
            bin(BinOp::And, eq(1, 0), eq(4, 5)),
        );
        assert_eq!(
            factor_ors(e),
            vec![eq(0, 1), bin(BinOp::Or, eq(2, 3), eq(4, 5))]
        );
        // An arm that is only the common part: the OR is implied.
        let e = bin(BinOp::Or, eq(0, 1), bin(BinOp::And, eq(0, 1), eq(2, 3)));
        assert_eq!(factor_ors(e), vec![eq(0, 1)]);
        // Nothing in common: unchanged.
        let e = bin(BinOp::Or, eq(0, 1), eq(2, 3));
        assert_eq!(factor_ors(e.clone()), vec![e]);
    }
}
