//! The planner: binds a parsed statement (sqlparser AST) against the
//! catalog into a [`Plan`] the executor runs.
//!
//! Binding resolves names (42P01 / 42703), types every expression through
//! `sql::expr` (which also infers parameter types) and collects
//! aggregates; a SELECT becomes a tree of [`plannodes::PlanNode`]s:
//! `select.rs` (one query block: FROM, WHERE, GROUP BY, HAVING, windows,
//! DISTINCT, ORDER BY, LIMIT), `fromclause.rs` (the FROM list, join order
//! and join methods by cost, access paths), `selfuncs.rs` (row estimates
//! from `ANALYZE`'s statistics), `subselect.rs` / `sublink_join.rs`
//! (subqueries, EXISTS as semi / anti joins), `window.rs`, `costsize.rs`
//! (EXPLAIN's costs), `narrow.rs` (the columns each scan decodes) and
//! `explain.rs` / `deparse.rs` (EXPLAIN's text and JSON). INSERT, UPDATE
//! and DELETE plan their row source the same way (`modifytable.rs`,
//! `viewdml.rs`).
//!
//! A plan remembers the catalog version it was bound under; the session
//! re-binds a prepared statement when the catalog changed since. Plans are
//! immutable and shared (`Arc`), so a prepared statement executed many times
//! (pgbench `-M prepared`) binds once. The single-table primary-key lookup
//! keeps its own short path (an index lookup whose key is evaluated once
//! per execution), which pgbench -S runs.
//!
//! docs/architecture/sql.md is the long form.

pub mod costsize;
pub mod deparse;
pub mod explain;
pub mod fromclause;
pub mod modifytable;
pub mod narrow;
pub mod parallel;
pub mod plannodes;
pub mod select;
pub mod selfuncs;
pub mod sublink_join;
pub mod subselect;
pub mod viewdml;
pub mod window;

use std::sync::Arc;

use sqlparser::ast;

use crate::expr::{bind_assign, coerce, output_name, BinOp, BoundExpr, Expr, ParamTypes, Scope};
use engine::catalog::{CatalogView, IndexDef, TableDef};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::Oid;
use plannodes::{NodeKind, PlanNode, StatementPlans};
use server::backend::FieldDescription;

/// An identifier as PostgreSQL folds it: unquoted → lower case.
pub fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// The relation name of a possibly qualified name (one schema: the
/// qualifier is ignored).
pub fn object_name(n: &ast::ObjectName) -> String {
    n.0.last().map(ident_name).unwrap_or_default()
}

/// Access path of a table.
#[derive(Debug)]
pub enum Access {
    /// Every visible row.
    SeqScan,
    /// The rows under one key of an index.
    Index {
        /// The index.
        index: Arc<IndexDef>,
        /// One expression per index column (no column references).
        key: Vec<Expr>,
        /// The type of each index column (keys are cast to it).
        key_types: Vec<SqlType>,
    },
}

/// One ORDER BY key over the projected row (output plus hidden columns).
#[derive(Debug, Clone)]
pub struct SortKey {
    /// Column of the projected row.
    pub column: usize,
    /// DESC.
    pub desc: bool,
    /// NULLS FIRST (default: true for DESC, false for ASC).
    pub nulls_first: bool,
}

/// A bound SELECT: a plan tree (`plannodes`) and what it refers to.
#[derive(Debug)]
pub struct QueryPlan {
    /// The root of the plan tree; its rows are the result rows.
    pub root: PlanNode,
    /// Subplans, CTEs and executor parameter slots of the statement.
    pub shared: Arc<StatementPlans>,
    /// RowDescription.
    pub columns: Vec<FieldDescription>,
}

impl QueryPlan {
    /// EXPLAIN's lines for the tree (no costs yet).
    pub fn explain(&self) -> Vec<String> {
        self.explain_with(true)
    }

    /// EXPLAIN's lines; `rows` false for `EXPLAIN (COSTS OFF)`.
    pub fn explain_with(&self, rows: bool) -> Vec<String> {
        let opts = explain::ExplainOptions {
            costs: rows,
            ..Default::default()
        };
        explain::text_lines(self, &opts, None)
    }

    /// True if running it is bounded by the statement's text.
    /// `small`: see [`plannodes::PlanNode::runs_briefly`].
    pub fn runs_briefly(&self, small: &[(pgtypes::RelFileId, u32)]) -> bool {
        self.shared.subplans.is_empty()
            && self.shared.ctes.is_empty()
            && self.root.runs_briefly(small)
    }

    /// The estimated cost of running it once: the tree's, its subplans'
    /// and its CTEs' (a subplan counted once, not per outer row).
    pub fn total_cost(&self) -> f64 {
        self.root.total_cost
            + self
                .shared
                .subplans
                .iter()
                .map(|sp| sp.plan.total_cost)
                .sum::<f64>()
            + self
                .shared
                .ctes
                .iter()
                .map(|c| c.plan.total_cost)
                .sum::<f64>()
    }

    pub(crate) fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        self.root.for_each_expr(f);
        for sp in &self.shared.subplans {
            sp.plan.for_each_expr(f);
            sp.test.iter().for_each(&mut *f);
        }
        for c in &self.shared.ctes {
            c.plan.for_each_expr(f);
        }
    }
}

/// Where INSERT rows come from.
#[derive(Debug)]
pub enum InsertSource {
    /// VALUES rows; `None` is DEFAULT. Each row has one entry per target
    /// column, already coerced to the column type.
    Values(Vec<Vec<Option<Expr>>>),
    /// INSERT … SELECT: output columns map to the target columns in order.
    Query(Box<QueryPlan>),
}

/// A bound INSERT.
#[derive(Debug)]
pub struct InsertPlan {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Table column of each source column.
    pub target_cols: Vec<usize>,
    /// Rows.
    pub source: InsertSource,
    /// DEFAULT expression per table column (None = NULL).
    pub defaults: Vec<Option<Expr>>,
    /// RETURNING expressions over the new row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
    /// Subqueries of the VALUES rows and RETURNING.
    pub shared: Arc<StatementPlans>,
    /// ON CONFLICT: what to do with a row whose key an arbiter index
    /// already holds.
    pub on_conflict: Option<OnConflictPlan>,
}

/// INSERT … ON CONFLICT (PostgreSQL's speculative insertion; the executor
/// side is `executor::insert_on_conflict`).
#[derive(Debug)]
pub struct OnConflictPlan {
    /// Names of the arbiter indexes: the unique indexes matching the
    /// conflict target, every unique index for a DO NOTHING without one.
    pub arbiters: Vec<String>,
    /// DO NOTHING or DO UPDATE.
    pub action: ConflictAction,
    /// The tables with a FOREIGN KEY to the target (DO UPDATE may change
    /// a referenced key).
    pub referenced_by: Vec<Arc<TableDef>>,
}

/// The action of ON CONFLICT.
#[derive(Debug)]
pub enum ConflictAction {
    /// DO NOTHING: the proposed row is dropped.
    Nothing,
    /// DO UPDATE SET … [WHERE …]: expressions over the existing row
    /// followed by the proposed one (`EXCLUDED`).
    Update {
        /// (column, new value).
        assignments: Vec<(usize, Expr)>,
        /// WHERE: a row it rejects is left alone (and not counted).
        filter: Option<Expr>,
    },
}

/// A bound UPDATE.
#[derive(Debug)]
pub struct UpdatePlan {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Rows to change.
    pub access: Access,
    /// WHERE over the old row.
    pub filter: Option<Expr>,
    /// (column, new value over the old row).
    pub assignments: Vec<(usize, Expr)>,
    /// UPDATE … FROM: the FROM items, run per target row (its
    /// assignments replace `assignments`).
    pub join: Option<Box<modifytable::DmlJoin>>,
    /// RETURNING over the new row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
    /// Subqueries of WHERE, SET and RETURNING (the join's, with FROM).
    pub shared: Arc<StatementPlans>,
    /// The tables with a FOREIGN KEY to this one (a key change fires their
    /// actions; `crate::ri_triggers`).
    pub referenced_by: Vec<Arc<TableDef>>,
}

/// A bound DELETE.
#[derive(Debug)]
pub struct DeletePlan {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Rows to delete.
    pub access: Access,
    /// WHERE (the part that reads only the target).
    pub filter: Option<Expr>,
    /// DELETE … USING: the USING items; a target row is deleted only if
    /// they join it.
    pub join: Option<Box<modifytable::DmlJoin>>,
    /// RETURNING over the deleted row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
    /// Subqueries of WHERE and RETURNING (the join's, with USING).
    pub shared: Arc<StatementPlans>,
    /// The tables with a FOREIGN KEY to this one.
    pub referenced_by: Vec<Arc<TableDef>>,
}

/// A bound statement.
#[derive(Debug)]
pub enum Plan {
    /// SELECT.
    Query(Box<QueryPlan>),
    /// INSERT.
    Insert(InsertPlan),
    /// UPDATE.
    Update(UpdatePlan),
    /// DELETE.
    Delete(DeletePlan),
    /// INSERT / UPDATE / DELETE on a view with INSTEAD OF triggers.
    ViewDml(viewdml::ViewDmlPlan),
}

impl Plan {
    /// The table an INSERT / UPDATE / DELETE writes (None: a query, or a
    /// view whose triggers write).
    pub fn target_table(&self) -> Option<&Arc<TableDef>> {
        match self {
            Plan::Insert(p) => Some(&p.table),
            Plan::Update(p) => Some(&p.table),
            Plan::Delete(p) => Some(&p.table),
            Plan::Query(_) | Plan::ViewDml(_) => None,
        }
    }
    /// The command: `SELECT`, `INSERT`, `UPDATE` or `DELETE`.
    pub fn command(&self) -> &'static str {
        use engine::pg_trigger::{TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE};
        match self {
            Plan::Query(_) => "SELECT",
            Plan::Insert(_) => "INSERT",
            Plan::Update(_) => "UPDATE",
            Plan::Delete(_) => "DELETE",
            Plan::ViewDml(p) => match p.op {
                TRIGGER_TYPE_INSERT => "INSERT",
                TRIGGER_TYPE_UPDATE => "UPDATE",
                _ => "DELETE",
            },
        }
    }
}

/// A plan with what the protocol needs to describe it.
#[derive(Debug)]
pub struct Planned {
    /// The plan.
    pub plan: Plan,
    /// Final parameter types.
    pub param_types: Vec<SqlType>,
    /// Result columns (None: no rows).
    pub columns: Option<Vec<FieldDescription>>,
    /// Catalog version it was bound under.
    pub catalog_version: u64,
    /// The tables, views and sequences the statement names (sorted; the
    /// target of INSERT / UPDATE / DELETE only if it also reads it in
    /// FROM / USING or a subquery): what its SELECT rights are checked on.
    pub reads: Vec<Oid>,
    /// UPDATE / DELETE with WHERE or RETURNING, INSERT with RETURNING:
    /// the statement reads its target too.
    pub reads_target: bool,
    /// The statement reads a view: even a superuser's statement is then
    /// checked as each view's owner ([`crate::aclchk::check_planned`]).
    pub reads_view: bool,
    /// The statement calls a user-defined function (`crate::fmgr`): its
    /// work is not bounded by the text.
    pub calls_functions: bool,
    /// Tables it reads whole although a unique index was pinned, because
    /// they had these few pages (`subselect::note_small_scan`).
    pub small_scans: Vec<(pgtypes::RelFileId, u32)>,
}

impl Planned {
    /// Whether the small tables it scans whole are still no bigger: a
    /// cached plan that fails this is planned again, so a table that
    /// grew is read through its index (PostgreSQL plans each simple
    /// query afresh, and autovacuum's ANALYZE invalidates cached plans as
    /// tables grow).
    pub fn sizes_hold(&self, catalog: &engine::catalog::Catalog) -> bool {
        self.small_scans
            .iter()
            .all(|&(rel, pages)| catalog.relation_pages(rel).is_none_or(|p| p <= pages))
    }

    /// The user function a `SELECT * FROM f(…)` calls (what a CALL runs
    /// through, `crate::spi::call`).
    pub fn called_routine(&self) -> Option<Oid> {
        let Plan::Query(q) = &self.plan else {
            return None;
        };
        let mut node = &q.root;
        loop {
            match &node.kind {
                NodeKind::Project { input, .. } => node = input,
                NodeKind::UserFunction {
                    call:
                        Expr::Func {
                            func: crate::functions::Func::User(oid),
                            ..
                        },
                    ..
                } => return Some(*oid),
                _ => return None,
            }
        }
    }

    /// True if the statement writes (needs an xid, command counter bump).
    pub fn writes(&self) -> bool {
        !matches!(self.plan, Plan::Query(_))
    }

    /// The estimated cost of a query (see [`QueryPlan::total_cost`]); 0
    /// for other statements.
    pub fn total_cost(&self) -> f64 {
        match &self.plan {
            Plan::Query(q) => q.total_cost(),
            _ => 0.0,
        }
    }

    /// True if the statement's work is bounded by its own text, not by the
    /// size of a table: no FROM (or a one-row system view), one key of a
    /// unique index, an INSERT of VALUES. The session loop runs such
    /// statements inline on the connection's task; anything else (scans,
    /// ranges, generate_series, INSERT … SELECT) may run long and leaves
    /// the runtime worker first (see server/postgres.rs).
    pub fn runs_briefly(&self) -> bool {
        if self.calls_functions {
            return false;
        }
        let unique_key = |a: &Access| matches!(a, Access::Index { index, .. } if index.spec.unique);
        match &self.plan {
            Plan::Query(q) => q.runs_briefly(&self.small_scans),
            Plan::Insert(i) => matches!(i.source, InsertSource::Values(_)),
            Plan::Update(u) => u.join.is_none() && unique_key(&u.access),
            Plan::Delete(d) => d.join.is_none() && unique_key(&d.access),
            // Its triggers run statements.
            Plan::ViewDml(_) => false,
        }
    }
}

impl Planned {
    /// Visits the root of every expression the plan evaluates (use
    /// [`Expr::walk`] for their nodes); column defaults, which come from
    /// the catalog, are left out.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&Expr)) {
        fn access(a: &Access, f: &mut dyn FnMut(&Expr)) {
            if let Access::Index { key, .. } = a {
                key.iter().for_each(&mut *f);
            }
        }
        fn query(q: &QueryPlan, f: &mut dyn FnMut(&Expr)) {
            q.for_each_expr(f);
        }
        let returning = |r: &Option<Vec<Expr>>, f: &mut dyn FnMut(&Expr)| {
            r.iter().flatten().for_each(f);
        };
        match &self.plan {
            Plan::Query(q) => query(q, f),
            Plan::Insert(i) => {
                match &i.source {
                    InsertSource::Values(rows) => rows.iter().flatten().flatten().for_each(&mut *f),
                    InsertSource::Query(q) => query(q, f),
                }
                if let Some(OnConflictPlan {
                    action:
                        ConflictAction::Update {
                            assignments,
                            filter,
                        },
                    ..
                }) = &i.on_conflict
                {
                    assignments.iter().for_each(|(_, e)| f(e));
                    filter.iter().for_each(&mut *f);
                }
                returning(&i.returning, f);
            }
            Plan::Update(u) => {
                access(&u.access, f);
                u.filter.iter().for_each(&mut *f);
                u.assignments.iter().for_each(|(_, e)| f(e));
                if let Some(j) = &u.join {
                    j.plan.for_each_expr(f);
                    j.assignments.iter().for_each(|(_, e)| f(e));
                }
                returning(&u.returning, f);
            }
            Plan::Delete(d) => {
                access(&d.access, f);
                d.filter.iter().for_each(&mut *f);
                if let Some(j) = &d.join {
                    j.plan.for_each_expr(f);
                }
                returning(&d.returning, f);
            }
            Plan::ViewDml(v) => {
                match &v.rows {
                    viewdml::ViewRows::Insert {
                        source: InsertSource::Values(rows),
                        ..
                    } => rows.iter().flatten().flatten().for_each(&mut *f),
                    viewdml::ViewRows::Insert {
                        source: InsertSource::Query(q),
                        ..
                    } => query(q, f),
                    viewdml::ViewRows::Scan { query: q, .. } => query(q, f),
                }
                returning(&v.returning, f);
            }
        }
    }
}

/// True for the statements [`plan_statement`] handles.
pub fn is_plannable(stmt: &ast::Statement) -> bool {
    matches!(
        stmt,
        ast::Statement::Query(_)
            | ast::Statement::Explain { .. }
            | ast::Statement::Insert(_)
            | ast::Statement::Update { .. }
            | ast::Statement::Delete(_)
    )
}

/// Binds a DML statement. `param_oids` are Parse's types (0 = infer).
pub fn plan_statement(
    catalog: &CatalogView<'_>,
    stmt: &ast::Statement,
    param_oids: &[Oid],
) -> PgResult<Planned> {
    let catalog_version = catalog.version();
    let mut params = ParamTypes::from_oids(param_oids)?;
    let reads_target = match stmt {
        ast::Statement::Insert(i) => i.returning.is_some(),
        ast::Statement::Update {
            selection,
            returning,
            ..
        } => selection.is_some() || returning.is_some(),
        ast::Statement::Delete(d) => d.selection.is_some() || d.returning.is_some(),
        _ => false,
    };
    let (plan, collected) = crate::parse_func::with_functions(catalog, || {
        subselect::collect_relations(|| plan_one(catalog, stmt, &mut params))
    });
    let subselect::Collected {
        named: reads,
        view: reads_view,
        small_scans,
    } = collected;
    let plan = plan?;
    let columns = match &plan {
        Plan::Query(q) => Some(q.columns.clone()),
        Plan::Insert(p) => p.returning.as_ref().map(|_| p.columns.clone()),
        Plan::Update(p) => p.returning.as_ref().map(|_| p.columns.clone()),
        Plan::Delete(p) => p.returning.as_ref().map(|_| p.columns.clone()),
        Plan::ViewDml(p) => p.returning.as_ref().map(|_| p.columns.clone()),
    };
    let mut planned = Planned {
        plan,
        param_types: params.finish(),
        columns,
        catalog_version,
        reads,
        reads_target,
        reads_view,
        calls_functions: false,
        small_scans,
    };
    let mut calls = false;
    planned.for_each_expr(&mut |e| {
        e.walk(&mut |n| {
            if let Expr::Func {
                func: crate::functions::Func::User(_),
                ..
            } = n
            {
                calls = true;
            }
        })
    });
    planned.calls_functions = calls;
    Ok(planned)
}

/// The plan of one DML statement ([`plan_statement`]'s body).
fn plan_one(
    catalog: &CatalogView<'_>,
    stmt: &ast::Statement,
    params: &mut ParamTypes,
) -> PgResult<Plan> {
    let plan = match stmt {
        ast::Statement::Query(q) => Plan::Query(Box::new(plan_query(catalog, q, params)?)),
        ast::Statement::Insert(ins) => {
            use engine::pg_trigger::TRIGGER_TYPE_INSERT;
            match viewdml::instead_target(catalog, &ins.table_name, TRIGGER_TYPE_INSERT)? {
                Some(v) => Plan::ViewDml(viewdml::plan_insert(catalog, v, ins, params)?),
                None => Plan::Insert(plan_insert(catalog, ins, params)?),
            }
        }
        ast::Statement::Update {
            table,
            assignments,
            from,
            selection,
            returning,
        } => match instead_scan_target(catalog, table, engine::pg_trigger::TRIGGER_TYPE_UPDATE)? {
            Some(v) => Plan::ViewDml(viewdml::plan_scan(
                catalog,
                v,
                engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                &viewdml::ScanStmt {
                    target: table,
                    assignments,
                    from: from.as_slice(),
                    selection: selection.as_ref(),
                    returning: returning.as_deref(),
                },
                params,
            )?),
            None => Plan::Update(plan_update(
                catalog,
                table,
                from.as_ref(),
                assignments,
                selection.as_ref(),
                returning.as_deref(),
                params,
            )?),
        },
        ast::Statement::Delete(d) => {
            let op = engine::pg_trigger::TRIGGER_TYPE_DELETE;
            let from = match &d.from {
                ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
            };
            let view = match from.as_slice() {
                [t] if d.tables.is_empty() && d.limit.is_none() && d.order_by.is_empty() => {
                    instead_scan_target(catalog, t, op)?.map(|v| (t, v))
                }
                _ => None,
            };
            match view {
                Some((t, v)) => Plan::ViewDml(viewdml::plan_scan(
                    catalog,
                    v,
                    op,
                    &viewdml::ScanStmt {
                        target: t,
                        assignments: &[],
                        from: d.using.as_deref().unwrap_or(&[]),
                        selection: d.selection.as_ref(),
                        returning: d.returning.as_deref(),
                    },
                    params,
                )?),
                None => Plan::Delete(plan_delete(catalog, d, params)?),
            }
        }
        ast::Statement::Explain {
            statement,
            analyze,
            options,
            format,
            ..
        } => {
            let opts =
                explain_options(*analyze, format.as_ref(), options.as_deref().unwrap_or(&[]))?;
            Plan::Query(Box::new(plan_explain(catalog, statement, opts, params)?))
        }
        _ => return Err(PgError::internal("statement is not plannable")),
    };
    Ok(plan)
}

pub(crate) fn table_scope(t: &TableDef, alias: &str) -> Scope {
    let cols: Vec<(String, SqlType)> = t.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
    let mut s = Scope::for_table(alias, &cols);
    hide_dropped(&mut s, t, 0);
    s
}

/// Makes the dropped columns of `t` (at `start` in `s`) unreachable by name.
fn hide_dropped(s: &mut Scope, t: &TableDef, start: usize) {
    for (i, c) in t.columns.iter().enumerate() {
        if c.dropped {
            if let Some(sc) = s.columns.get_mut(start + i) {
                sc.table = None;
                sc.qualified_only = true;
            }
        }
    }
}

fn field(name: String, ty: SqlType) -> FieldDescription {
    FieldDescription {
        name,
        table_oid: 0,
        column_id: 0,
        ty,
    }
}

/// Output type of a select-list expression: `unknown` becomes text, as in
/// PostgreSQL.
pub(crate) fn output_expr(
    b: crate::expr::BoundExpr,
    params: &mut ParamTypes,
) -> PgResult<(Expr, SqlType)> {
    if b.ty == SqlType::Unknown {
        Ok((coerce(b, SqlType::Text, params)?, SqlType::Text))
    } else {
        let ty = b.ty;
        Ok((b.expr, ty))
    }
}

pub(crate) fn const_i64(e: &ast::Expr) -> Option<i64> {
    match e {
        ast::Expr::Value(ast::Value::Number(n, _)) => n.parse().ok(),
        _ => None,
    }
}

/// A view query's output columns (name, type) and the relations it names.
pub type ViewShape = (Vec<(String, SqlType)>, Vec<Oid>);

/// Binds a view's query as CREATE VIEW does: its output columns, and the
/// tables and views it names (its dependencies, sorted, no duplicates).
pub fn describe_view_query(catalog: &CatalogView<'_>, q: &ast::Query) -> PgResult<ViewShape> {
    let g = subselect::Global::new(catalog);
    let root_level = subselect::Level::empty(None, None);
    let mut params = ParamTypes::from_oids(&[])?;
    let (_, cols) = select::plan_query_level(&g, q, None, Some(&root_level), &mut params)?;
    let mut deps = g.relations.take();
    deps.retain(|&o| crate::privileges::superuser_only_relation(o).is_none());
    deps.sort_unstable();
    deps.dedup();
    Ok((cols.into_iter().map(|c| (c.name, c.ty)).collect(), deps))
}

/// Binds a SELECT (also the source of INSERT … SELECT and COPY (query))
/// into a plan tree (`planner::select`).
pub fn plan_query(
    catalog: &CatalogView<'_>,
    q: &ast::Query,
    params: &mut ParamTypes,
) -> PgResult<QueryPlan> {
    let g = subselect::Global::new(catalog);
    let root_level = subselect::Level::empty(None, None);
    let (root, cols) = select::plan_query_level(&g, q, None, Some(&root_level), params)?;
    let columns = cols
        .into_iter()
        .map(|c| {
            let mut f = field(c.name, c.ty);
            if let Some((oid, col)) = c.origin {
                f.table_oid = oid;
                f.column_id = col;
            }
            f
        })
        .collect();
    let mut root = root;
    let mut shared = StatementPlans {
        subplans: g.subplans.take(),
        ctes: g.ctes.take(),
        exec_params: g.next_param.get(),
    };
    parallel::parallelize(&mut root);
    // Uncorrelated subplans (initplans) and materialized CTEs run once,
    // in the session, like the main tree (TPC-H Q15's revenue view).
    for sp in shared.subplans.iter_mut().filter(|s| s.slots.is_empty()) {
        parallel::parallelize(&mut sp.plan);
    }
    for cte in shared.ctes.iter_mut() {
        parallel::parallelize(&mut cte.plan);
    }
    // Narrowed last: a join parallelize turned around (TPC-H Q14's)
    // keeps only the columns read of its new inner side.
    narrow::narrow_statement(&mut root, &mut shared);
    Ok(QueryPlan {
        root,
        shared: Arc::new(shared),
        columns,
    })
}

/// EXPLAIN of a SELECT as a query returning the `QUERY PLAN` column: the
/// plan tree, one node a line (FORMAT JSON: one json value). Without
/// ANALYZE the lines are made here; with it a [`NodeKind::ExplainAnalyze`]
/// node runs the query when executed and makes them from what it measured.
fn plan_explain(
    catalog: &CatalogView<'_>,
    stmt: &ast::Statement,
    opts: explain::ExplainOptions,
    params: &mut ParamTypes,
) -> PgResult<QueryPlan> {
    let ast::Statement::Query(q) = stmt else {
        return Err(PgError::unsupported(
            "EXPLAIN of this statement is not supported",
        ));
    };
    let started = std::time::Instant::now();
    let plan = plan_query(catalog, q, params)?;
    let planning_ms = started.elapsed().as_secs_f64() * 1000.0;
    let ty = if opts.json {
        SqlType::Json
    } else {
        SqlType::Text
    };
    let columns = vec![field("QUERY PLAN".to_string(), ty)];
    if opts.analyze {
        return Ok(QueryPlan {
            root: PlanNode::new(
                NodeKind::ExplainAnalyze {
                    plan: Box::new(plan),
                    opts,
                    planning_ms,
                },
                1,
                1.0,
            ),
            shared: Arc::new(StatementPlans::default()),
            columns,
        });
    }
    let rows: Vec<Vec<Expr>> = if opts.json {
        vec![vec![Expr::Const(pgtypes::value::Value::Json(
            explain::json_text(&plan, &opts, None).into(),
        ))]]
    } else {
        plan.explain_with(opts.costs)
            .into_iter()
            .map(|l| vec![Expr::Const(pgtypes::value::Value::text(&l))])
            .collect()
    };
    let n = rows.len();
    Ok(QueryPlan {
        root: PlanNode::new(NodeKind::Values { rows }, 1, n as f64),
        shared: Arc::new(StatementPlans::default()),
        columns,
    })
}

/// EXPLAIN's options: ANALYZE (the keyword or the option), COSTS, TIMING,
/// SUMMARY, FORMAT TEXT / JSON; 22023 for others PostgreSQL has and
/// hotpair does not (VERBOSE, BUFFERS, WAL, SETTINGS, FORMAT XML / YAML).
fn explain_options(
    analyze: bool,
    format: Option<&ast::AnalyzeFormat>,
    options: &[ast::UtilityOption],
) -> PgResult<explain::ExplainOptions> {
    let mut o = explain::ExplainOptions {
        analyze,
        ..Default::default()
    };
    let mut timing = None;
    let mut summary = None;
    let bad = |msg: String| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg);
    let format_of = |f: &str| -> PgResult<bool> {
        match f.to_ascii_lowercase().as_str() {
            "text" => Ok(false),
            "json" => Ok(true),
            "xml" | "yaml" => Err(PgError::unsupported(format!(
                "EXPLAIN (FORMAT {}) is not supported",
                f.to_ascii_uppercase()
            ))),
            other => Err(bad(format!(
                "unrecognized value for EXPLAIN option \"format\": \"{other}\""
            ))),
        }
    };
    if let Some(f) = format {
        o.json = format_of(&f.to_string())?;
    }
    for opt in options {
        let name = opt.name.value.to_ascii_lowercase();
        let arg = opt
            .arg
            .as_ref()
            .map(|a| a.to_string().trim_matches('\'').to_string());
        let flag = || -> PgResult<bool> {
            match arg.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("on" | "true" | "1") => Ok(true),
                Some("off" | "false" | "0") => Ok(false),
                Some(_) => Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("{name} requires a Boolean value"),
                )),
            }
        };
        match name.as_str() {
            "analyze" => o.analyze = flag()?,
            "costs" => o.costs = flag()?,
            "timing" => timing = Some(flag()?),
            "summary" => summary = Some(flag()?),
            "format" => o.json = format_of(arg.as_deref().unwrap_or(""))?,
            "verbose" | "buffers" | "wal" | "settings" => {
                if flag()? {
                    return Err(PgError::unsupported(format!(
                        "EXPLAIN option {} is not supported",
                        name.to_ascii_uppercase()
                    )));
                }
            }
            other => {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("unrecognized EXPLAIN option \"{other}\""),
                ));
            }
        }
    }
    if timing == Some(true) && !o.analyze {
        return Err(bad("EXPLAIN option TIMING requires ANALYZE".into()));
    }
    o.timing = timing.unwrap_or(true);
    o.summary = summary.unwrap_or(o.analyze);
    Ok(o)
}

/// ORDER BY `name` where `name` is an output column (and not, more
/// specifically, an input column with a different meaning — PostgreSQL
/// prefers output names for a bare identifier).
/// 42883 for a type with equality but no ordering: xid, as in PostgreSQL
/// (32-bit xids wrap around, so `<` would lie).
pub(crate) fn no_ordering_for(ty: SqlType) -> PgResult<()> {
    if ty == SqlType::Xid || ty == SqlType::Json {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!(
                "could not identify an ordering operator for type {}",
                ty.pg_base_name()
            ),
        )
        .with_hint("Use an explicit ordering operator or modify the query."));
    }
    Ok(())
}

/// 42883 for a GROUP BY / DISTINCT key of a type without `=` (json).
pub(crate) fn no_equality_for(ty: SqlType) -> PgResult<()> {
    if ty == SqlType::Json {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!(
                "could not identify an equality operator for type {}",
                ty.pg_base_name()
            ),
        ));
    }
    Ok(())
}

/// Binds an expression of an INSERT / UPDATE / DELETE over `scope`, with
/// subqueries allowed (their plans go into `g`).
fn bind_dml(
    g: &subselect::Global<'_, '_>,
    e: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
) -> PgResult<BoundExpr> {
    let level = subselect::Level {
        scope: scope.clone(),
        base_width: scope.columns.len(),
        merged: Vec::new(),
        outer: None,
        ctes: std::cell::RefCell::new(Vec::new()),
        cte_parent: None,
    };
    let mut hook = subselect::Hook { g, level: &level };
    crate::expr::bind_expr_hooked(e, scope, params, None, &mut hook)
}

fn bind_where(
    g: &subselect::Global<'_, '_>,
    w: &ast::Expr,
    scope: &Scope,
    params: &mut ParamTypes,
) -> PgResult<Expr> {
    let b = bind_dml(g, w, scope, params)?;
    if b.ty != SqlType::Bool && b.ty != SqlType::Unknown {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "argument of WHERE must be type boolean, not type {}",
                b.ty.pg_base_name()
            ),
        ));
    }
    coerce(b, SqlType::Bool, params)
}

/// A set-returning function call that makes up a whole target-list item.
pub(crate) struct TargetSrf {
    /// The item's index.
    pub item: usize,
    /// The function's name.
    pub name: String,
    /// The call.
    pub call: ast::Function,
}

/// The set-returning function calls that make up whole items of a target
/// list (`SELECT generate_series(1, 3) [AS x]`, `SELECT unnest(a),
/// generate_subscripts(a, 1) FROM t`), in order; 0A000 for one nested in
/// an expression of a FROM-less SELECT (PostgreSQL's target-list SRF
/// rules go further).
pub(crate) fn target_list_srfs(
    items: &[ast::SelectItem],
    has_from: bool,
) -> PgResult<Vec<TargetSrf>> {
    let mut found = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let e = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        match e {
            ast::Expr::Function(f)
                if is_target_srf(&object_name(&f.name)) || is_user_srf_call(&f.name) =>
            {
                found.push(TargetSrf {
                    item: i,
                    name: object_name(&f.name),
                    call: f.clone(),
                });
            }
            // (A FROM-less SELECT only: elsewhere the text may be a
            // subquery's, which is fine.)
            _ if !has_from && {
                let t = e.to_string().to_ascii_lowercase();
                t.contains("generate_series(")
                    || t.contains("unnest(")
                    || t.contains("generate_subscripts(")
            } =>
            {
                return Err(PgError::unsupported(
                    "a set-returning function inside an expression of a target list is not supported; call it in FROM (… FROM generate_series(…) AS g)",
                ));
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The set-returning functions a target list may call (one column each).
fn is_target_srf(name: &str) -> bool {
    matches!(
        name,
        "generate_series"
            | "generate_subscripts"
            | "unnest"
            | "json_array_elements"
            | "jsonb_array_elements"
            | "json_array_elements_text"
            | "jsonb_array_elements_text"
            | "json_object_keys"
            | "jsonb_object_keys"
    )
}

/// `generate_subscripts(a, dim [, reverse])` is `generate_series(
/// array_lower(a, dim), array_upper(a, dim))` (downward with `reverse`
/// true): these are the series' arguments.
fn subscript_series(args: &[&ast::FunctionArg]) -> PgResult<Vec<ast::FunctionArg>> {
    let exprs: Vec<&ast::Expr> = args
        .iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Ok(e),
            _ => Err(PgError::unsupported(
                "named or wildcard arguments to generate_subscripts",
            )),
        })
        .collect::<PgResult<_>>()?;
    let (array, dim, reverse) = match exprs.as_slice() {
        [a, d] => (*a, *d, None),
        [a, d, r] => (*a, *d, Some(*r)),
        _ => {
            return Err(PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                "function generate_subscripts with this number of arguments does not exist",
            ))
        }
    };
    let call = |f: &str| {
        ast::Expr::Function(ast::Function {
            name: ast::ObjectName(vec![ast::Ident::new(f)]),
            parameters: ast::FunctionArguments::None,
            args: ast::FunctionArguments::List(ast::FunctionArgumentList {
                duplicate_treatment: None,
                args: vec![
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(array.clone())),
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(dim.clone())),
                ],
                clauses: Vec::new(),
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: Vec::new(),
        })
    };
    let (lo, hi) = (call("array_lower"), call("array_upper"));
    let exprs = match reverse {
        None => vec![lo, hi],
        // reverse: from the upper bound down by 1 (up by 1 when false).
        Some(r) => {
            let dir = |then: i64| ast::Expr::Value(ast::Value::Number(then.to_string(), false));
            let step = ast::Expr::Case {
                operand: None,
                conditions: vec![r.clone()],
                results: vec![dir(-1)],
                else_result: Some(Box::new(dir(1))),
            };
            let first = ast::Expr::Case {
                operand: None,
                conditions: vec![r.clone()],
                results: vec![hi.clone()],
                else_result: Some(Box::new(lo.clone())),
            };
            let last = ast::Expr::Case {
                operand: None,
                conditions: vec![r.clone()],
                results: vec![lo],
                else_result: Some(Box::new(hi)),
            };
            vec![first, last, step]
        }
    };
    Ok(exprs
        .into_iter()
        .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
        .collect())
}

/// Binds a set-returning function in FROM (`generate_series(start,
/// stop[, step])` over integers or timestamps, `unnest(array)`): the scan
/// node and its column type; `bind` binds each argument (it may reach
/// earlier FROM items: LATERAL).
pub(crate) fn bind_series(
    name: &str,
    args: &[&ast::FunctionArg],
    params: &mut ParamTypes,
    bind: &mut dyn FnMut(&ast::Expr, &mut ParamTypes) -> PgResult<BoundExpr>,
) -> PgResult<(NodeKind, SqlType)> {
    if name == "generate_subscripts" {
        return bind_series(
            "generate_series",
            &subscript_series(args)?.iter().collect::<Vec<_>>(),
            params,
            bind,
        );
    }
    if !crate::functions::SERIES_FUNCTIONS.contains(&name) {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {name} does not exist"),
        ));
    }
    let mut bound = Vec::new();
    for a in args {
        let e = match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => e,
            _ => {
                return Err(PgError::unsupported(format!(
                    "named or wildcard arguments to {name}"
                )))
            }
        };
        bound.push(bind(e, params)?);
    }
    if name == "unnest" {
        return bind_unnest(bound);
    }
    if name == "pg_partition_ancestors" {
        // The relation and its ancestors: hotpair has no partitions, so
        // one row, the relation itself.
        let [rel] = <[BoundExpr; 1]>::try_from(bound).map_err(|_| {
            PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                "function pg_partition_ancestors with this number of arguments does not exist",
            )
        })?;
        let ty = SqlType::Reg(pgtypes::sqltype::RegKind::Class);
        let rel = coerce(rel, ty, params)?;
        return Ok((
            NodeKind::Values {
                rows: vec![vec![rel]],
            },
            ty,
        ));
    }
    if !(2..=3).contains(&bound.len()) {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            "function generate_series with this number of arguments does not exist",
        ));
    }
    if let Some(series) = timestamp_series(&bound, params)? {
        return Ok(series);
    }
    let mut ty = SqlType::Int4;
    for b in &bound {
        match b.ty {
            SqlType::Int2 | SqlType::Int4 | SqlType::Unknown => {}
            SqlType::Int8 => ty = SqlType::Int8,
            other => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_FUNCTION,
                    format!("function generate_series({}) does not exist", other.pg_base_name()),
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
            }
        }
    }
    let mut it = bound.into_iter();
    let start = coerce(
        it.next().ok_or_else(|| PgError::internal("arg"))?,
        ty,
        params,
    )?;
    let stop = coerce(
        it.next().ok_or_else(|| PgError::internal("arg"))?,
        ty,
        params,
    )?;
    let step = match it.next() {
        Some(b) => Some(coerce(b, ty, params)?),
        None => None,
    };
    Ok((
        NodeKind::FunctionScan {
            start,
            stop,
            step,
            ty,
        },
        ty,
    ))
}

/// `generate_series(start, stop, step interval)` over timestamps (dates
/// read as timestamptz, as PostgreSQL resolves them): None for the integer
/// forms.
fn timestamp_series(
    bound: &[BoundExpr],
    params: &mut ParamTypes,
) -> PgResult<Option<(NodeKind, SqlType)>> {
    let timey = |t: SqlType| {
        matches!(
            t,
            SqlType::Timestamp | SqlType::TimestampTz | SqlType::Date | SqlType::Interval
        )
    };
    if !bound.iter().any(|b| timey(b.ty)) {
        return Ok(None);
    }
    let [start, stop, step] = bound else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            "function generate_series with this number of arguments does not exist",
        ));
    };
    let ty = if start.ty == SqlType::Timestamp
        && matches!(stop.ty, SqlType::Timestamp | SqlType::Unknown)
    {
        SqlType::Timestamp
    } else {
        SqlType::TimestampTz
    };
    let start = coerce(start.clone(), ty, params)?;
    let stop = coerce(stop.clone(), ty, params)?;
    let step = coerce(step.clone(), SqlType::Interval, params)?;
    Ok(Some((
        NodeKind::FunctionScan {
            start,
            stop,
            step: Some(step),
            ty,
        },
        ty,
    )))
}

/// `unnest(array)` in FROM or as a whole target-list item.
fn bind_unnest(bound: Vec<BoundExpr>) -> PgResult<(NodeKind, SqlType)> {
    let Ok([b]) = <[BoundExpr; 1]>::try_from(bound) else {
        return Err(PgError::unsupported(
            "unnest with other than one array argument is not supported",
        ));
    };
    let Some(ty) = b.ty.elem() else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function unnest({}) does not exist", b.ty.pg_name()),
        )
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
    };
    Ok((NodeKind::Unnest { array: b.expr, ty }, ty))
}

/// Picks an index whose every key has an equality conjunct with a
/// column-free expression — a key column `c = v`, a key expression
/// `expr = v` with the same bound expression — and whose predicate, for
/// a partial index, the filter implies (each of its conjuncts is one of
/// the filter's); unique indexes (the primary key first) win.
/// [`choose_access`] for a read: when no index's key is pinned whole, a
/// plain index whose leading columns are (the longest such prefix) and
/// whose other columns are NOT NULL (a row with a NULL key column has no
/// entry), read as a range of its keys. The caller decides whether that beats a
/// sequential scan.
pub fn choose_access_reading(table: &TableDef, filter: &Expr) -> Access {
    let full = choose_access(table, filter);
    if !matches!(full, Access::SeqScan) {
        return full;
    }
    let conj = filter.conjuncts();
    let eqs: Vec<(usize, &Expr)> = conj.iter().filter_map(|c| c.as_column_eq()).collect();
    let mut best: Option<(Arc<IndexDef>, Vec<Expr>)> = None;
    for ix in table.indexes.list() {
        if !ix.is_ready() || !ix.spec.is_plain() || ix.spec.predicate.is_some() {
            continue;
        }
        let key: Vec<Expr> = ix
            .spec
            .columns
            .iter()
            .map_while(|c| {
                eqs.iter()
                    .find(|(col, _)| col == c)
                    .map(|(_, e)| (*e).clone())
            })
            .collect();
        // A row with a NULL key column has no entry: the columns after
        // the prefix must be NOT NULL, or the range would miss rows.
        let rest_not_null = ix.spec.columns[key.len()..]
            .iter()
            .all(|c| table.columns.get(*c).is_some_and(|c| c.not_null));
        if !key.is_empty() && rest_not_null && best.as_ref().is_none_or(|b| key.len() > b.1.len()) {
            best = Some((ix, key));
        }
    }
    match best {
        Some((index, key)) => {
            let key_types = index.spec.columns[..key.len()]
                .iter()
                .map(|c| table.columns[*c].ty)
                .collect();
            Access::Index {
                index,
                key,
                key_types,
            }
        }
        None => Access::SeqScan,
    }
}

pub fn choose_access(table: &TableDef, filter: &Expr) -> Access {
    let conj = filter.conjuncts();
    let eqs: Vec<(usize, &Expr)> = conj.iter().filter_map(|c| c.as_column_eq()).collect();
    // `expr = v` with a column-free `v`: candidates for expression keys.
    let expr_eqs: Vec<(&Expr, &Expr)> = conj
        .iter()
        .filter_map(|c| match c {
            Expr::Binary {
                op: BinOp::Eq,
                left,
                right,
            } => {
                if !right.references_columns() && left.references_columns() {
                    Some((left.as_ref(), right.as_ref()))
                } else if !left.references_columns() && right.references_columns() {
                    Some((right.as_ref(), left.as_ref()))
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect();
    if eqs.is_empty() && expr_eqs.is_empty() {
        return Access::SeqScan;
    }
    /// (rank, index, key, key types) of the best index so far.
    type Choice = (u8, Arc<IndexDef>, Vec<Expr>, Vec<SqlType>);
    let mut best: Option<Choice> = None;
    for ix in table.indexes.list() {
        if !ix.is_ready() {
            continue;
        }
        let mut key = Vec::with_capacity(ix.spec.columns.len());
        let key_types: Vec<SqlType> = if ix.spec.is_plain() {
            for c in &ix.spec.columns {
                match eqs.iter().find(|(col, _)| col == c) {
                    Some((_, e)) => key.push((*e).clone()),
                    None => break,
                }
            }
            ix.spec
                .columns
                .iter()
                .map(|c| table.columns[*c].ty)
                .collect()
        } else {
            let Some(b) = crate::indexcmds::bound(table, &ix) else {
                continue;
            };
            let Some(b) = b.as_any().downcast_ref::<crate::indexcmds::BoundIndex>() else {
                continue;
            };
            if !b.predicate_conjuncts().iter().all(|p| conj.contains(p)) {
                continue;
            }
            for k in &b.keys {
                let found = match k {
                    Expr::Column(c) => eqs.iter().find(|(col, _)| col == c).map(|(_, e)| *e),
                    _ => expr_eqs.iter().find(|(l, _)| *l == k).map(|(_, e)| *e),
                };
                match found {
                    Some(e) => key.push(e.clone()),
                    None => break,
                }
            }
            b.types.clone()
        };
        if key.len() != ix.spec.columns.len() {
            continue;
        }
        let rank = if ix.spec.primary {
            3
        } else if ix.spec.unique {
            2
        } else {
            1
        };
        if best.as_ref().is_none_or(|b| rank > b.0) {
            best = Some((rank, ix, key, key_types));
        }
    }
    match best {
        Some((_, index, key, key_types)) => Access::Index {
            index,
            key,
            key_types,
        },
        None => Access::SeqScan,
    }
}

pub(crate) fn bind_returning(
    g: &subselect::Global<'_, '_>,
    items: Option<&[ast::SelectItem]>,
    (rel, columns): (Oid, &[engine::catalog::ColumnDef]),
    scope: &Scope,
    params: &mut ParamTypes,
) -> PgResult<(Option<Vec<Expr>>, Vec<FieldDescription>)> {
    let Some(items) = items else {
        return Ok((None, Vec::new()));
    };
    let mut exprs = Vec::new();
    let mut cols = Vec::new();
    for item in items {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_, _) => {
                for (i, c) in columns.iter().enumerate() {
                    if c.dropped {
                        continue;
                    }
                    exprs.push(Expr::Column(i));
                    let mut f = field(c.name.clone(), c.ty);
                    f.table_oid = rel;
                    f.column_id = (i + 1) as i16;
                    cols.push(f);
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let b = bind_dml(g, e, scope, params)?;
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => output_name(e),
                };
                let (expr, ty) = output_expr(b, params)?;
                let mut f = field(name, ty);
                if let Expr::Column(i) = &expr {
                    if *i < columns.len() {
                        f.table_oid = rel;
                        f.column_id = (*i + 1) as i16;
                    }
                }
                exprs.push(expr);
                cols.push(f);
            }
        }
    }
    Ok((Some(exprs), cols))
}

/// The statement plans an INSERT runs with (those of VALUES and
/// RETURNING); with a query as the source, RETURNING may not have
/// subqueries.
pub(crate) fn insert_plans(
    g: subselect::Global<'_, '_>,
    source: &InsertSource,
) -> PgResult<Arc<StatementPlans>> {
    let shared = Arc::new(g.into_plans());
    if matches!(source, InsertSource::Query(_)) && shared.needs_state() {
        return Err(PgError::unsupported(
            "subqueries in RETURNING of INSERT … SELECT are not supported",
        ));
    }
    Ok(shared)
}

/// The statement plans an UPDATE / DELETE runs with: the join's when it
/// has FROM / USING items (then the rest may not have subqueries).
fn dml_plans(
    g: subselect::Global<'_, '_>,
    join: Option<&modifytable::DmlJoin>,
) -> PgResult<Arc<StatementPlans>> {
    let own = g.into_plans();
    match join {
        Some(j) => {
            if own.needs_state() {
                return Err(PgError::unsupported(
                    "subqueries outside WHERE and SET of UPDATE … FROM / DELETE … USING are not supported",
                ));
            }
            Ok(j.plan.shared.clone())
        }
        None => Ok(Arc::new(own)),
    }
}

/// 428C9 for a value other than DEFAULT written to a GENERATED ALWAYS
/// identity column (`what`: "insert" or "update").
fn refuse_always_identity(col: &engine::catalog::ColumnDef, what: &str) -> PgResult<()> {
    if col.identity != Some('a') {
        return Ok(());
    }
    let detail = format!(
        "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
        col.name
    );
    Err(if what == "insert" {
        PgError::new(
            sqlstate::GENERATED_ALWAYS,
            format!(
                "cannot insert a non-DEFAULT value into column \"{}\"",
                col.name
            ),
        )
        .with_detail(detail)
        .with_hint("Use OVERRIDING SYSTEM VALUE to override.")
    } else {
        PgError::new(
            sqlstate::GENERATED_ALWAYS,
            format!("column \"{}\" can only be updated to DEFAULT", col.name),
        )
        .with_detail(detail)
    })
}

/// Binds each column's DEFAULT (None = NULL).
pub fn bind_defaults(table: &TableDef, params: &mut ParamTypes) -> PgResult<Vec<Option<Expr>>> {
    let mut out = Vec::with_capacity(table.columns.len());
    for c in &table.columns {
        match &c.default {
            None => out.push(None),
            Some(text) => {
                let ast = crate::parser::parse_expr_text(text)?;
                out.push(Some(bind_assign(
                    &ast,
                    &Scope::new(),
                    params,
                    c.ty,
                    &c.name,
                )?));
            }
        }
    }
    Ok(out)
}

/// The target columns and rows of an INSERT into a relation with
/// `columns` (a table's or a view's), each value coerced to its column.
pub(crate) fn insert_source(
    catalog: &CatalogView<'_>,
    g: &subselect::Global<'_, '_>,
    ins: &ast::Insert,
    columns: &[engine::catalog::ColumnDef],
    relname: &str,
    params: &mut ParamTypes,
) -> PgResult<(Vec<usize>, InsertSource)> {
    // `OVERRIDING {SYSTEM | USER} VALUE`, marked in the column list.
    let mut listed: Vec<&ast::Ident> = ins.columns.iter().collect();
    let overriding = match listed.last().map(|c| c.value.as_str()) {
        Some(m @ (crate::parser::OVERRIDING_SYSTEM | crate::parser::OVERRIDING_USER)) => {
            let m = m.to_string();
            listed.pop();
            Some(m)
        }
        _ => None,
    };
    let system_value = overriding.as_deref() == Some(crate::parser::OVERRIDING_SYSTEM);
    let user_value = overriding.as_deref() == Some(crate::parser::OVERRIDING_USER);
    let target_cols: Vec<usize> = if listed.is_empty() {
        (0..columns.len())
            .filter(|c| !columns[*c].dropped)
            .collect()
    } else {
        let mut v = Vec::new();
        for c in listed.iter().copied() {
            let n = ident_name(c);
            let i = columns
                .iter()
                .position(|c| c.name == n && !c.dropped)
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{n}\" of relation \"{relname}\" does not exist"),
                    )
                })?;
            if v.contains(&i) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!("column \"{n}\" specified more than once"),
                ));
            }
            v.push(i);
        }
        v
    };
    let source = match ins.source.as_deref() {
        None => InsertSource::Values(vec![Vec::new()]), // DEFAULT VALUES
        Some(q) => match q.body.as_ref() {
            ast::SetExpr::Values(vals) if q.order_by.is_none() && q.limit.is_none() => {
                let scope = Scope::new();
                let mut rows = Vec::with_capacity(vals.rows.len());
                for row in &vals.rows {
                    if row.len() > target_cols.len() {
                        return Err(PgError::syntax(
                            "INSERT has more expressions than target columns",
                        ));
                    }
                    if row.len() < target_cols.len() && !listed.is_empty() {
                        return Err(PgError::syntax(
                            "INSERT has more target columns than expressions",
                        ));
                    }
                    let mut out = Vec::with_capacity(row.len());
                    for (e, &c) in row.iter().zip(&target_cols) {
                        let col = &columns[c];
                        // OVERRIDING USER VALUE: identity columns take
                        // their sequence's value whatever was written.
                        if is_default_keyword(e) || (user_value && col.identity.is_some()) {
                            out.push(None);
                        } else {
                            if !system_value {
                                refuse_always_identity(col, "insert")?;
                            }
                            let b = bind_dml(g, e, &scope, params)?;
                            out.push(Some(crate::expr::coerce_assign(
                                b, col.ty, params, &col.name,
                            )?));
                        }
                    }
                    rows.push(out);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let qp = plan_query(catalog, q, params)?;
                if qp.columns.len() > target_cols.len() {
                    return Err(PgError::syntax(
                        "INSERT has more expressions than target columns",
                    ));
                }
                if qp.columns.len() < target_cols.len() && !listed.is_empty() {
                    return Err(PgError::syntax(
                        "INSERT has more target columns than expressions",
                    ));
                }
                for (f, &c) in qp.columns.iter().zip(&target_cols) {
                    let col = &columns[c];
                    if user_value && col.identity.is_some() {
                        return Err(PgError::unsupported(
                            "INSERT … SELECT with OVERRIDING USER VALUE is not supported; use VALUES",
                        ));
                    }
                    if !system_value {
                        refuse_always_identity(col, "insert")?;
                    }
                    if !pgtypes::value::can_cast(f.ty, col.ty) {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            format!(
                                "column \"{}\" is of type {} but expression is of type {}",
                                col.name,
                                col.ty.pg_name(),
                                f.ty.pg_name()
                            ),
                        )
                        .with_hint("You will need to rewrite or cast the expression."));
                    }
                }
                InsertSource::Query(Box::new(qp))
            }
        },
    };
    Ok((target_cols, source))
}

fn plan_insert(
    catalog: &CatalogView<'_>,
    ins: &ast::Insert,
    params: &mut ParamTypes,
) -> PgResult<InsertPlan> {
    let g = subselect::Global::new(catalog);
    let table = dml_target(catalog, &ins.table_name, "insert into")?;
    let alias = ins
        .table_alias
        .as_ref()
        .map(ident_name)
        .unwrap_or_else(|| table.name.clone());
    let (target_cols, source) =
        insert_source(catalog, &g, ins, &table.columns, &table.name, params)?;
    let defaults = bind_defaults(&table, params)?;
    let scope = table_scope(&table, &alias);
    let (returning, columns) = bind_returning(
        &g,
        ins.returning.as_deref(),
        (table.oid, &table.columns),
        &scope,
        params,
    )?;
    let on_conflict = match &ins.on {
        None => None,
        Some(ast::OnInsert::OnConflict(oc)) => {
            Some(plan_on_conflict(&g, &table, &alias, oc, params)?)
        }
        Some(_) => return Err(PgError::syntax("syntax error at or near \"DUPLICATE\"")),
    };
    let shared = insert_plans(g, &source)?;
    Ok(InsertPlan {
        table,
        target_cols,
        source,
        defaults,
        returning,
        columns,
        shared,
        on_conflict,
    })
}

/// Binds ON CONFLICT: infers the arbiter indexes from the conflict target
/// and binds DO UPDATE over the target row followed by `EXCLUDED` (an
/// unqualified name both have is ambiguous, as in PostgreSQL).
fn plan_on_conflict(
    g: &subselect::Global<'_, '_>,
    table: &Arc<TableDef>,
    alias: &str,
    oc: &ast::OnConflict,
    params: &mut ParamTypes,
) -> PgResult<OnConflictPlan> {
    let unique: Vec<_> = table
        .indexes
        .list()
        .into_iter()
        .filter(|ix| ix.spec.unique)
        .collect();
    let arbiters: Vec<String> = match &oc.conflict_target {
        None => {
            if matches!(oc.action, ast::OnConflictAction::DoUpdate(_)) {
                return Err(no_inference());
            }
            unique.iter().map(|ix| ix.spec.name.clone()).collect()
        }
        Some(ast::ConflictTarget::Columns(cols)) => {
            let mut want = Vec::new();
            for c in cols {
                let n = ident_name(c);
                let i = table.column_index(&n).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!("column \"{n}\" does not exist"),
                    )
                })?;
                if !want.contains(&i) {
                    want.push(i);
                }
            }
            let found: Vec<String> = unique
                .iter()
                .filter(|ix| {
                    ix.spec.is_plain()
                        && ix.spec.columns.len() == want.len()
                        && want.iter().all(|c| ix.spec.columns.contains(c))
                })
                .map(|ix| ix.spec.name.clone())
                .collect();
            if found.is_empty() {
                return Err(no_arbiter());
            }
            found
        }
        Some(ast::ConflictTarget::OnConstraint(name))
            if name
                .0
                .last()
                .is_some_and(|i| i.value.starts_with(crate::parser::CONFLICT_INFERENCE)) =>
        {
            // An inference with expressions or WHERE (the parser's form).
            let text = name.0.last().map(|i| i.value.as_str()).unwrap_or("");
            let inference = text
                .strip_prefix(crate::parser::CONFLICT_INFERENCE)
                .unwrap_or(text);
            crate::indexcmds::infer_arbiters(table, inference)?
        }
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let n = object_name(name);
            match table
                .indexes
                .list()
                .into_iter()
                .find(|ix| ix.spec.name == n)
            {
                Some(ix) if ix.spec.unique => vec![n],
                Some(_) => return Err(no_arbiter()),
                None => {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!(
                            "constraint \"{n}\" for table \"{}\" does not exist",
                            table.name
                        ),
                    ))
                }
            }
        }
    };
    let action = match &oc.action {
        ast::OnConflictAction::DoNothing => ConflictAction::Nothing,
        ast::OnConflictAction::DoUpdate(du) => {
            let mut scope = table_scope(table, alias);
            let start = scope.columns.len();
            for c in &table.columns {
                scope.columns.push(crate::expr::ScopeColumn {
                    table: Some("excluded".to_string()),
                    name: c.name.clone(),
                    ty: c.ty,
                    qualified_only: false,
                    whole_row: false,
                });
            }
            hide_dropped(&mut scope, table, start);
            let mut assignments = Vec::new();
            let mut defaults: Option<Vec<Option<Expr>>> = None;
            for a in &du.assignments {
                let n = match &a.target {
                    ast::AssignmentTarget::ColumnName(n) => object_name(n),
                    ast::AssignmentTarget::Tuple(_) => {
                        return Err(PgError::unsupported(
                            "multiple-column UPDATE assignments are not supported",
                        ))
                    }
                };
                let c = table.column_index(&n).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{n}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    )
                })?;
                if assignments.iter().any(|(x, _)| *x == c) {
                    return Err(PgError::new(
                        sqlstate::DUPLICATE_COLUMN,
                        format!("multiple assignments to same column \"{n}\""),
                    ));
                }
                let col = &table.columns[c];
                let e = if is_default_keyword(&a.value) {
                    if defaults.is_none() {
                        defaults = Some(bind_defaults(table, params)?);
                    }
                    defaults
                        .as_ref()
                        .and_then(|d| d[c].clone())
                        .unwrap_or(Expr::Const(pgtypes::value::Value::Null))
                } else {
                    let b = bind_dml(g, &a.value, &scope, params)?;
                    crate::expr::coerce_assign(b, col.ty, params, &col.name)?
                };
                assignments.push((c, e));
            }
            let filter = match &du.selection {
                Some(w) => Some(bind_where(g, w, &scope, params)?),
                None => None,
            };
            ConflictAction::Update {
                assignments,
                filter,
            }
        }
    };
    Ok(OnConflictPlan {
        arbiters,
        action,
        referenced_by: g.catalog.referencing(table.oid),
    })
}

/// 42601 for ON CONFLICT DO UPDATE without a conflict target.
pub(crate) fn no_inference() -> PgError {
    PgError::syntax("ON CONFLICT DO UPDATE requires inference specification or constraint name")
        .with_hint("For example, ON CONFLICT (column_name).")
}

pub(crate) fn no_arbiter() -> PgError {
    PgError::new(
        sqlstate::INVALID_COLUMN_REFERENCE,
        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
    )
}

pub(crate) fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

/// The view with an INSTEAD OF trigger for `op` that an UPDATE / DELETE
/// target names, if it is one.
fn instead_scan_target(
    catalog: &CatalogView<'_>,
    twj: &ast::TableWithJoins,
    op: u16,
) -> PgResult<Option<Arc<engine::view::ViewSpec>>> {
    match &twj.relation {
        ast::TableFactor::Table {
            name, args: None, ..
        } if twj.joins.is_empty() => viewdml::instead_target(catalog, name, op),
        _ => Ok(None),
    }
}

/// True if the call `name` (maybe schema-qualified) reaches a
/// set-returning user function.
fn is_user_srf_call(name: &ast::ObjectName) -> bool {
    match name.0.as_slice() {
        [f] => crate::parse_func::is_user_srf(&ident_name(f), None),
        [s, f] | [_, s, f] => crate::parse_func::is_user_srf(&ident_name(f), Some(&ident_name(s))),
        _ => false,
    }
}

/// The table an INSERT / UPDATE / DELETE writes (`verb`: "insert into",
/// "update", "delete from"); a view is not automatically updatable here.
fn dml_target(
    catalog: &CatalogView<'_>,
    rel: &ast::ObjectName,
    verb: &str,
) -> PgResult<Arc<TableDef>> {
    let q = crate::namespace::QualName::of(rel)?;
    if let Some(t) = crate::namespace::find_table(catalog, &q) {
        return Ok(t);
    }
    match crate::namespace::find_view(catalog, &q) {
        Some(v) => Err(crate::pgcatalog::ruleutils::not_updatable(&v, verb)),
        None => Err(engine::catalog::undefined_table(&q.display())),
    }
}

fn single_table(
    twj: &ast::TableWithJoins,
    catalog: &CatalogView<'_>,
    verb: &str,
) -> PgResult<(Arc<TableDef>, String)> {
    if !twj.joins.is_empty() {
        return Err(PgError::unsupported("joins are not supported"));
    }
    match &twj.relation {
        ast::TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } => {
            let t = dml_target(catalog, name, verb)?;
            let a = alias
                .as_ref()
                .map(|a| ident_name(&a.name))
                .unwrap_or_else(|| object_name(name));
            Ok((t, a))
        }
        _ => Err(PgError::unsupported("only a plain table can be the target")),
    }
}

fn plan_update(
    catalog: &CatalogView<'_>,
    target: &ast::TableWithJoins,
    from: Option<&ast::TableWithJoins>,
    assignments: &[ast::Assignment],
    selection: Option<&ast::Expr>,
    returning: Option<&[ast::SelectItem]>,
    params: &mut ParamTypes,
) -> PgResult<UpdatePlan> {
    let (table, alias) = single_table(target, catalog, "update")?;
    let scope = table_scope(&table, &alias);
    let g = subselect::Global::new(catalog);
    let mut defaults: Option<Vec<Option<Expr>>> = None;
    let mut assigns = Vec::new();
    let mut seen = Vec::new();
    let mut join_values: Vec<(usize, &ast::Expr)> = Vec::new();
    for a in assignments {
        let names = match &a.target {
            ast::AssignmentTarget::ColumnName(n) => vec![object_name(n)],
            ast::AssignmentTarget::Tuple(_) => {
                return Err(PgError::unsupported(
                    "multiple-column UPDATE assignments are not supported",
                ))
            }
        };
        let n = &names[0];
        let c = table.column_index(n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{n}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )
        })?;
        if seen.contains(&c) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("multiple assignments to same column \"{n}\""),
            ));
        }
        seen.push(c);
        let col = &table.columns[c];
        if !is_default_keyword(&a.value) {
            refuse_always_identity(col, "update")?;
        }
        if from.is_some() && !is_default_keyword(&a.value) {
            join_values.push((c, &a.value));
            continue;
        }
        let e = if is_default_keyword(&a.value) {
            if defaults.is_none() {
                defaults = Some(bind_defaults(&table, params)?);
            }
            defaults
                .as_ref()
                .and_then(|d| d[c].clone())
                .unwrap_or(Expr::Const(pgtypes::value::Value::Null))
        } else {
            let b = bind_dml(&g, &a.value, &scope, params)?;
            crate::expr::coerce_assign(b, col.ty, params, &col.name)?
        };
        assigns.push((c, e));
    }
    let (filter, join) = match from {
        Some(f) => {
            let (filter, join) = modifytable::plan_dml_join(
                catalog,
                &table,
                &alias,
                std::slice::from_ref(f),
                selection,
                &join_values,
                params,
            )?;
            (filter, Some(Box::new(join)))
        }
        None => match selection {
            Some(w) => (Some(bind_where(&g, w, &scope, params)?), None),
            None => (None, None),
        },
    };
    let access = match &filter {
        Some(f) => choose_access(&table, f),
        None => Access::SeqScan,
    };
    let (returning, columns) =
        bind_returning(&g, returning, (table.oid, &table.columns), &scope, params)?;
    let shared = dml_plans(g, join.as_deref())?;
    let referenced_by = catalog.referencing(table.oid);
    Ok(UpdatePlan {
        table,
        access,
        filter,
        assignments: assigns,
        join,
        returning,
        columns,
        shared,
        referenced_by,
    })
}

fn plan_delete(
    catalog: &CatalogView<'_>,
    d: &ast::Delete,
    params: &mut ParamTypes,
) -> PgResult<DeletePlan> {
    if !d.tables.is_empty() || d.limit.is_some() || !d.order_by.is_empty() {
        return Err(PgError::unsupported(
            "DELETE with USING, LIMIT or several tables is not supported",
        ));
    }
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    let twj = match from.as_slice() {
        [t] => t,
        _ => {
            return Err(PgError::unsupported(
                "DELETE from several tables is not supported",
            ))
        }
    };
    let (table, alias) = single_table(twj, catalog, "delete from")?;
    let scope = table_scope(&table, &alias);
    let g = subselect::Global::new(catalog);
    let (filter, join) = match &d.using {
        Some(items) => {
            let (filter, join) = modifytable::plan_dml_join(
                catalog,
                &table,
                &alias,
                items,
                d.selection.as_ref(),
                &[],
                params,
            )?;
            (filter, Some(Box::new(join)))
        }
        None => match &d.selection {
            Some(w) => (Some(bind_where(&g, w, &scope, params)?), None),
            None => (None, None),
        },
    };
    let access = match &filter {
        Some(f) => choose_access(&table, f),
        None => Access::SeqScan,
    };
    let (returning, columns) = bind_returning(
        &g,
        d.returning.as_deref(),
        (table.oid, &table.columns),
        &scope,
        params,
    )?;
    let shared = dml_plans(g, join.as_deref())?;
    let referenced_by = catalog.referencing(table.oid);
    Ok(DeletePlan {
        table,
        access,
        filter,
        join,
        returning,
        columns,
        shared,
        referenced_by,
    })
}
