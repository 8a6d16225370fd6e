//! The planner: binds a parsed DML statement (sqlparser AST) against the
//! catalog into a [`Plan`] the executor runs.
//!
//! Binding resolves names (42P01 / 42703), types every expression through
//! `sql::expr` (which also infers parameter types), collects aggregates,
//! and picks an access path:
//!
//! * **index lookup** when the WHERE clause has `col = <expression without
//!   columns>` conjuncts covering every column of a ready index (a unique
//!   one, the primary key first). The key expressions are evaluated once per
//!   execution (they may be parameters); every row version under the key is
//!   fetched with the statement's snapshot and the whole WHERE clause is
//!   still applied, so the choice never changes results;
//! * **sequential scan** otherwise.
//!
//! A plan remembers the catalog version it was bound under; the session
//! re-binds a prepared statement when the catalog changed since. Plans are
//! immutable and shared (`Arc`), so a prepared statement executed many times
//! (pgbench `-M prepared`) binds once.
//!
//! Supported: SELECT with one table, `generate_series(a, b[, step])` (in
//! FROM, or as a whole target-list item of a SELECT without FROM),
//! the `hotpair_stat_snapshots` and `pg_prepared_xacts` views, or no FROM;
//! WHERE; projections with aliases and `*`; aggregates with optional GROUP
//! BY / HAVING; ORDER BY output names, positions or expressions with
//! ASC/DESC and NULLS FIRST/LAST (PostgreSQL's defaults: NULLs sort as larger than everything);
//! LIMIT / OFFSET (constants or parameters); DISTINCT. INSERT (VALUES with
//! DEFAULT, column lists, INSERT … SELECT, RETURNING), UPDATE and DELETE
//! (WHERE, RETURNING). Joins, subqueries, set operations and CTEs are 0A000.

use std::sync::Arc;

use sqlparser::ast;

use crate::expr::{
    bind_assign, bind_expr, bind_expr_agg, coerce, output_name, Expr, Grouping, ParamTypes, Scope,
};
use engine::catalog::{CatalogView, IndexDef, TableDef};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::Oid;
use server::backend::FieldDescription;

/// 42P10 invalid_column_reference.
const INVALID_COLUMN_REFERENCE: &str = "42P10";

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

/// Where rows come from.
#[derive(Debug)]
pub enum Source {
    /// One empty row (SELECT without FROM).
    Single,
    /// A table, read through `access`.
    Table {
        /// The table.
        table: Arc<TableDef>,
        /// How.
        access: Access,
    },
    /// `generate_series(start, stop[, step])`: one column.
    Series {
        /// Start (over the empty scope).
        start: Expr,
        /// Stop.
        stop: Expr,
        /// Step (default 1).
        step: Option<Expr>,
        /// int4 or int8.
        ty: SqlType,
    },
    /// A system view ([`crate::sysviews`]): its rows as of the scan.
    SystemView(&'static crate::sysviews::SystemView),
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

/// A bound SELECT.
#[derive(Debug)]
pub struct QueryPlan {
    /// Input rows.
    pub source: Source,
    /// Width of the input row.
    pub input_width: usize,
    /// WHERE over the input row.
    pub filter: Option<Expr>,
    /// Aggregation, if the query aggregates.
    pub grouping: Option<Grouping>,
    /// HAVING over the post-aggregation row.
    pub having: Option<Expr>,
    /// Output expressions followed by hidden sort expressions; over the
    /// input row, or the post-aggregation row when grouped.
    pub targets: Vec<Expr>,
    /// Number of visible output columns (`targets[..visible]`).
    pub visible: usize,
    /// ORDER BY.
    pub sort: Vec<SortKey>,
    /// SELECT DISTINCT.
    pub distinct: bool,
    /// LIMIT (int8 over the empty scope), None = all.
    pub limit: Option<Expr>,
    /// OFFSET.
    pub offset: Option<Expr>,
    /// RowDescription.
    pub columns: Vec<FieldDescription>,
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
    /// RETURNING over the new row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
}

/// A bound DELETE.
#[derive(Debug)]
pub struct DeletePlan {
    /// Target table.
    pub table: Arc<TableDef>,
    /// Rows to delete.
    pub access: Access,
    /// WHERE.
    pub filter: Option<Expr>,
    /// RETURNING over the deleted row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
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
}

impl Planned {
    /// True if the statement writes (needs an xid, command counter bump).
    pub fn writes(&self) -> bool {
        !matches!(self.plan, Plan::Query(_))
    }

    /// True if the statement's work is bounded by its own text, not by the
    /// size of a table: no FROM (or a one-row system view), one key of a
    /// unique index, an INSERT of VALUES. The session loop runs such
    /// statements inline on the connection's task; anything else (scans,
    /// ranges, generate_series, INSERT … SELECT) may run long and leaves
    /// the runtime worker first (see server/postgres.rs).
    pub fn runs_briefly(&self) -> bool {
        let unique_key = |a: &Access| matches!(a, Access::Index { index, .. } if index.spec.unique);
        match &self.plan {
            Plan::Query(q) => match &q.source {
                Source::Single | Source::SystemView(_) => true,
                Source::Table { access, .. } => unique_key(access),
                Source::Series { .. } => false,
            },
            Plan::Insert(i) => matches!(i.source, InsertSource::Values(_)),
            Plan::Update(u) => unique_key(&u.access),
            Plan::Delete(d) => unique_key(&d.access),
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
            match &q.source {
                Source::Table { access: a, .. } => access(a, f),
                Source::Series {
                    start, stop, step, ..
                } => {
                    f(start);
                    f(stop);
                    step.iter().for_each(&mut *f);
                }
                Source::Single | Source::SystemView(_) => {}
            }
            q.filter.iter().for_each(&mut *f);
            if let Some(g) = &q.grouping {
                g.group_by.iter().for_each(&mut *f);
                g.aggs
                    .iter()
                    .filter_map(|a| a.arg.as_ref())
                    .for_each(&mut *f);
            }
            q.having.iter().for_each(&mut *f);
            q.targets.iter().for_each(&mut *f);
            q.limit.iter().for_each(&mut *f);
            q.offset.iter().for_each(&mut *f);
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
                returning(&i.returning, f);
            }
            Plan::Update(u) => {
                access(&u.access, f);
                u.filter.iter().for_each(&mut *f);
                u.assignments.iter().for_each(|(_, e)| f(e));
                returning(&u.returning, f);
            }
            Plan::Delete(d) => {
                access(&d.access, f);
                d.filter.iter().for_each(&mut *f);
                returning(&d.returning, f);
            }
        }
    }
}

/// True for the statements [`plan_statement`] handles.
pub fn is_plannable(stmt: &ast::Statement) -> bool {
    matches!(
        stmt,
        ast::Statement::Query(_)
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
    let plan = match stmt {
        ast::Statement::Query(q) => Plan::Query(Box::new(plan_query(catalog, q, &mut params)?)),
        ast::Statement::Insert(ins) => Plan::Insert(plan_insert(catalog, ins, &mut params)?),
        ast::Statement::Update {
            table,
            assignments,
            from,
            selection,
            returning,
        } => {
            if from.is_some() {
                return Err(PgError::unsupported("UPDATE … FROM is not supported"));
            }
            Plan::Update(plan_update(
                catalog,
                table,
                assignments,
                selection.as_ref(),
                returning.as_deref(),
                &mut params,
            )?)
        }
        ast::Statement::Delete(d) => Plan::Delete(plan_delete(catalog, d, &mut params)?),
        _ => return Err(PgError::internal("statement is not plannable")),
    };
    let columns = match &plan {
        Plan::Query(q) => Some(q.columns.clone()),
        Plan::Insert(p) => p.returning.as_ref().map(|_| p.columns.clone()),
        Plan::Update(p) => p.returning.as_ref().map(|_| p.columns.clone()),
        Plan::Delete(p) => p.returning.as_ref().map(|_| p.columns.clone()),
    };
    Ok(Planned {
        plan,
        param_types: params.finish(),
        columns,
        catalog_version,
    })
}

fn table_scope(t: &TableDef, alias: &str) -> Scope {
    let cols: Vec<(String, SqlType)> = t.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
    Scope::for_table(alias, &cols)
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
fn output_expr(b: crate::expr::BoundExpr, params: &mut ParamTypes) -> PgResult<(Expr, SqlType)> {
    if b.ty == SqlType::Unknown {
        Ok((coerce(b, SqlType::Text, params)?, SqlType::Text))
    } else {
        let ty = b.ty;
        Ok((b.expr, ty))
    }
}

fn const_i64(e: &ast::Expr) -> Option<i64> {
    match e {
        ast::Expr::Value(ast::Value::Number(n, _)) => n.parse().ok(),
        _ => None,
    }
}

/// Binds a SELECT (also the source of INSERT … SELECT and COPY (query)).
pub fn plan_query(
    catalog: &CatalogView<'_>,
    q: &ast::Query,
    params: &mut ParamTypes,
) -> PgResult<QueryPlan> {
    if q.with.is_some() {
        return Err(PgError::unsupported("WITH queries are not supported"));
    }
    if q.fetch.is_some() || !q.locks.is_empty() {
        return Err(PgError::unsupported(
            "FETCH FIRST and FOR UPDATE/SHARE are not supported",
        ));
    }
    let select = match q.body.as_ref() {
        ast::SetExpr::Select(s) => s.as_ref(),
        ast::SetExpr::Values(v) => return plan_values_query(v, q, params),
        ast::SetExpr::Query(inner)
            if q.order_by.is_none() && q.limit.is_none() && q.offset.is_none() =>
        {
            return plan_query(catalog, inner, params)
        }
        _ => {
            return Err(PgError::unsupported(
                "set operations and subqueries are not supported",
            ))
        }
    };
    if select.into.is_some() {
        return Err(PgError::unsupported("SELECT INTO is not supported"));
    }
    let distinct = match &select.distinct {
        None => false,
        Some(ast::Distinct::Distinct) => true,
        Some(ast::Distinct::On(_)) => {
            return Err(PgError::unsupported("SELECT DISTINCT ON is not supported"))
        }
    };

    // A set-returning function in the target list of a SELECT without
    // FROM (`SELECT generate_series(1, 3)`, `INSERT … SELECT
    // generate_series(…)`): PostgreSQL runs the target list once per row
    // the function returns, which is a scan of the series with the call
    // replaced by its column.
    let srf = if select.from.is_empty() {
        target_list_series(&select.projection)?
    } else {
        None
    };
    let rewritten;
    let select = match &srf {
        Some((item, _)) => {
            let mut s = select.clone();
            let column = ast::Expr::Identifier(ast::Ident::new("generate_series"));
            s.projection[*item] = match &s.projection[*item] {
                ast::SelectItem::ExprWithAlias { alias, .. } => ast::SelectItem::ExprWithAlias {
                    expr: column,
                    alias: alias.clone(),
                },
                _ => ast::SelectItem::UnnamedExpr(column),
            };
            rewritten = s;
            &rewritten
        }
        None => select,
    };

    // FROM.
    let (mut source, scope, table) = match select.from.as_slice() {
        [] => match &srf {
            Some((_, args)) => {
                let args: Vec<&ast::FunctionArg> = args.iter().collect();
                bind_table_function("generate_series", &args, None, params)?
            }
            None => (Source::Single, Scope::new(), None),
        },
        [twj] => {
            if !twj.joins.is_empty() {
                return Err(PgError::unsupported("joins are not supported"));
            }
            bind_from(catalog, &twj.relation, params)?
        }
        _ => {
            return Err(PgError::unsupported(
                "more than one FROM item is not supported",
            ))
        }
    };
    let input_width = scope.columns.len();

    // WHERE.
    let filter = match &select.selection {
        Some(w) => Some(bind_where(w, &scope, params)?),
        None => None,
    };

    // Projection (aggregates collected into `grouping`).
    let group_keys: Vec<Expr> = match &select.group_by {
        ast::GroupByExpr::Expressions(exprs, mods) => {
            if !mods.is_empty() {
                return Err(PgError::unsupported("GROUP BY modifiers are not supported"));
            }
            let mut keys = Vec::new();
            for e in exprs {
                // GROUP BY n: the n-th select item.
                let ast_e = match const_i64(e) {
                    Some(n) => match select.projection.get((n.max(1) - 1) as usize) {
                        Some(ast::SelectItem::UnnamedExpr(x))
                        | Some(ast::SelectItem::ExprWithAlias { expr: x, .. })
                            if n >= 1 =>
                        {
                            x
                        }
                        _ => {
                            return Err(PgError::new(
                                INVALID_COLUMN_REFERENCE,
                                format!("GROUP BY position {n} is not in select list"),
                            ))
                        }
                    },
                    None => e,
                };
                keys.push(bind_expr(ast_e, &scope, params)?.expr);
            }
            keys
        }
        ast::GroupByExpr::All(_) => {
            return Err(PgError::unsupported("GROUP BY ALL is not supported"))
        }
    };
    let mut grouping = Grouping::new(group_keys);
    let mut targets = Vec::new();
    let mut columns = Vec::new();
    let mut output_names: Vec<String> = Vec::new();
    let mut target_asts: Vec<Option<&ast::Expr>> = Vec::new();
    for item in &select.projection {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_, _) => {
                if let ast::SelectItem::QualifiedWildcard(name, _) = item {
                    let q = object_name(name);
                    if !scope
                        .columns
                        .iter()
                        .any(|c| c.table.as_deref() == Some(q.as_str()))
                    {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("missing FROM-clause entry for table \"{q}\""),
                        ));
                    }
                }
                if scope.columns.is_empty() {
                    return Err(PgError::syntax(
                        "SELECT * with no tables specified is not valid",
                    ));
                }
                for (i, c) in scope.columns.iter().enumerate() {
                    targets.push(Expr::Column(i));
                    let mut f = field(c.name.clone(), c.ty);
                    if let Some(t) = &table {
                        set_origin(&mut f, t, i);
                    }
                    columns.push(f);
                    output_names.push(c.name.clone());
                    target_asts.push(None);
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let b = bind_expr_agg(e, &scope, params, &mut grouping)?;
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => output_name(e),
                };
                let (expr, ty) = output_expr(b, params)?;
                let mut f = field(name.clone(), ty);
                if let (Expr::Column(i), Some(t)) = (&expr, &table) {
                    set_origin(&mut f, t, *i);
                }
                targets.push(expr);
                columns.push(f);
                output_names.push(name);
                target_asts.push(Some(e));
            }
        }
    }
    let visible = targets.len();

    // HAVING.
    let having = match &select.having {
        Some(h) => {
            let b = bind_expr_agg(h, &scope, params, &mut grouping)?;
            Some(coerce(b, SqlType::Bool, params)?)
        }
        None => None,
    };

    // ORDER BY: output position, output name, or an expression (hidden column).
    let mut sort = Vec::new();
    if let Some(ob) = &q.order_by {
        for o in &ob.exprs {
            let desc = o.asc == Some(false);
            let nulls_first = o.nulls_first.unwrap_or(desc);
            let column = if let Some(n) = const_i64(&o.expr) {
                if n < 1 || n as usize > visible {
                    return Err(PgError::new(
                        INVALID_COLUMN_REFERENCE,
                        format!("ORDER BY position {n} is not in select list"),
                    ));
                }
                n as usize - 1
            } else if let Some(i) = order_by_output_name(&o.expr, &output_names, &scope) {
                i
            } else if let Some(i) = target_asts.iter().position(|t| *t == Some(&o.expr)) {
                i
            } else {
                if distinct {
                    return Err(PgError::new(
                        INVALID_COLUMN_REFERENCE,
                        "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                    ));
                }
                let b = bind_expr_agg(&o.expr, &scope, params, &mut grouping)?;
                no_ordering_for(b.ty)?;
                targets.push(b.expr);
                targets.len() - 1
            };
            if let Some(c) = columns.get(column) {
                no_ordering_for(c.ty)?;
            }
            sort.push(SortKey {
                column,
                desc,
                nulls_first,
            });
        }
    }

    // Aggregation: rewrite everything to read the post-aggregation row.
    let (grouping, having) = if grouping.is_grouped() {
        let mut fin = Vec::with_capacity(targets.len());
        for t in targets.drain(..) {
            fin.push(grouping.finalize(t, &scope)?);
        }
        targets = fin;
        let having = match having {
            Some(h) => Some(grouping.finalize(h, &scope)?),
            None => None,
        };
        (Some(grouping), having)
    } else {
        if having.is_some() {
            // HAVING without aggregates or GROUP BY: PostgreSQL treats the
            // query as grouped (one group); do the same.
            let g = Grouping::new(Vec::new());
            let mut fin = Vec::with_capacity(targets.len());
            for t in targets.drain(..) {
                fin.push(g.finalize(t, &scope)?);
            }
            targets = fin;
            let h = match having {
                Some(h) => Some(g.finalize(h, &scope)?),
                None => None,
            };
            (Some(g), h)
        } else {
            (None, None)
        }
    };

    let limit = match &q.limit {
        Some(ast::Expr::Value(ast::Value::Null)) | None => None,
        Some(l) => Some(bind_count(l, params)?),
    };
    let offset = match &q.offset {
        Some(o) => Some(bind_count(&o.value, params)?),
        None => None,
    };

    // Access path for a table.
    if let (Source::Table { table, access }, Some(f)) = (&mut source, &filter) {
        *access = choose_access(table, f);
    }

    Ok(QueryPlan {
        source,
        input_width,
        filter,
        grouping,
        having,
        targets,
        visible,
        sort,
        distinct,
        limit,
        offset,
        columns,
    })
}

fn set_origin(f: &mut FieldDescription, t: &TableDef, col: usize) {
    if col < t.columns.len() {
        f.table_oid = t.oid;
        f.column_id = (col + 1) as i16;
    }
}

/// ORDER BY `name` where `name` is an output column (and not, more
/// specifically, an input column with a different meaning — PostgreSQL
/// prefers output names for a bare identifier).
/// 42883 for a type with equality but no ordering: xid, as in PostgreSQL
/// (32-bit xids wrap around, so `<` would lie).
fn no_ordering_for(ty: SqlType) -> PgResult<()> {
    if ty == SqlType::Xid {
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

fn order_by_output_name(e: &ast::Expr, names: &[String], _scope: &Scope) -> Option<usize> {
    if let ast::Expr::Identifier(id) = e {
        let n = ident_name(id);
        let mut hits = names.iter().enumerate().filter(|(_, x)| **x == n);
        let first = hits.next()?.0;
        return Some(first);
    }
    None
}

/// `VALUES (…), (…)` as a query (e.g. `INSERT … VALUES` goes elsewhere;
/// this is `SELECT * FROM (VALUES …)`-less top-level VALUES).
fn plan_values_query(
    v: &ast::Values,
    q: &ast::Query,
    params: &mut ParamTypes,
) -> PgResult<QueryPlan> {
    if q.order_by.is_some() || q.limit.is_some() || q.offset.is_some() || v.rows.len() != 1 {
        return Err(PgError::unsupported(
            "VALUES lists with several rows as a query are not supported",
        ));
    }
    let scope = Scope::new();
    let mut targets = Vec::new();
    let mut columns = Vec::new();
    for (i, e) in v.rows[0].iter().enumerate() {
        let b = bind_expr(e, &scope, params)?;
        let (expr, ty) = output_expr(b, params)?;
        targets.push(expr);
        columns.push(field(format!("column{}", i + 1), ty));
    }
    Ok(QueryPlan {
        source: Source::Single,
        input_width: 0,
        filter: None,
        grouping: None,
        having: None,
        visible: targets.len(),
        targets,
        sort: Vec::new(),
        distinct: false,
        limit: None,
        offset: None,
        columns,
    })
}

fn bind_count(e: &ast::Expr, params: &mut ParamTypes) -> PgResult<Expr> {
    let b = bind_expr(e, &Scope::new(), params)?;
    coerce(b, SqlType::Int8, params)
}

fn bind_where(w: &ast::Expr, scope: &Scope, params: &mut ParamTypes) -> PgResult<Expr> {
    let b = bind_expr(w, scope, params)?;
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

fn bind_from(
    catalog: &CatalogView<'_>,
    tf: &ast::TableFactor,
    params: &mut ParamTypes,
) -> PgResult<(Source, Scope, Option<Arc<TableDef>>)> {
    match tf {
        ast::TableFactor::Table {
            name, alias, args, ..
        } => {
            let rel = object_name(name);
            if let Some(args) = args {
                let fargs: Vec<&ast::FunctionArg> = args.args.iter().collect();
                return bind_table_function(&rel, &fargs, alias.as_ref(), params);
            }
            if let (Some(view), None) = (crate::sysviews::lookup(&rel), catalog.get(&rel)) {
                let a = alias
                    .as_ref()
                    .map(|a| ident_name(&a.name))
                    .unwrap_or_else(|| rel.clone());
                let mut scope = Scope::new();
                for (c, ty) in view.columns {
                    scope.push(Some(&a), c, *ty);
                }
                return Ok((Source::SystemView(view), scope, None));
            }
            let table = catalog.table(&rel)?;
            let a = alias
                .as_ref()
                .map(|a| ident_name(&a.name))
                .unwrap_or_else(|| rel.clone());
            let mut scope = table_scope(&table, &a);
            if let Some(al) = alias {
                for (i, c) in al.columns.iter().enumerate() {
                    if let Some(sc) = scope.columns.get_mut(i) {
                        sc.name = ident_name(c);
                    }
                }
            }
            Ok((
                Source::Table {
                    table: table.clone(),
                    access: Access::SeqScan,
                },
                scope,
                Some(table),
            ))
        }
        ast::TableFactor::Function {
            name, args, alias, ..
        } => {
            let fargs: Vec<&ast::FunctionArg> = args.iter().collect();
            bind_table_function(&object_name(name), &fargs, alias.as_ref(), params)
        }
        ast::TableFactor::TableFunction {
            expr: ast::Expr::Function(f),
            alias,
        } => {
            let fargs: Vec<&ast::FunctionArg> = match &f.args {
                ast::FunctionArguments::List(l) => l.args.iter().collect(),
                _ => Vec::new(),
            };
            bind_table_function(&object_name(&f.name), &fargs, alias.as_ref(), params)
        }
        ast::TableFactor::Derived { .. } => {
            Err(PgError::unsupported("subqueries in FROM are not supported"))
        }
        _ => Err(PgError::unsupported(
            "this kind of FROM item is not supported",
        )),
    }
}

/// The one `generate_series(…)` call that makes up a whole item of a
/// target list (`SELECT generate_series(1, 3) [AS x]`): its item index and
/// arguments. `None` without one; 0A000 for a call nested in an expression
/// or for several (PostgreSQL's target-list SRF rules go further).
fn target_list_series(
    items: &[ast::SelectItem],
) -> PgResult<Option<(usize, Vec<ast::FunctionArg>)>> {
    let mut found = None;
    for (i, item) in items.iter().enumerate() {
        let e = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => continue,
        };
        let top = match e {
            ast::Expr::Function(f) if object_name(&f.name) == "generate_series" => Some(f),
            _ => None,
        };
        match top {
            Some(f) => {
                if found.is_some() {
                    return Err(PgError::unsupported(
                        "more than one generate_series in a target list is not supported",
                    ));
                }
                let args = match &f.args {
                    ast::FunctionArguments::List(l) => l.args.clone(),
                    _ => Vec::new(),
                };
                found = Some((i, args));
            }
            None if e
                .to_string()
                .to_ascii_lowercase()
                .contains("generate_series(") =>
            {
                return Err(PgError::unsupported(
                    "generate_series inside an expression of a target list is not supported; use FROM generate_series(…) AS g",
                ));
            }
            None => {}
        }
    }
    Ok(found)
}

fn bind_table_function(
    name: &str,
    args: &[&ast::FunctionArg],
    alias: Option<&ast::TableAlias>,
    params: &mut ParamTypes,
) -> PgResult<(Source, Scope, Option<Arc<TableDef>>)> {
    if let (Some(view), true) = (crate::sysviews::lookup_function(name), args.is_empty()) {
        let a = alias
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| name.to_string());
        let mut scope = Scope::new();
        for (c, ty) in view.columns {
            scope.push(Some(&a), c, *ty);
        }
        return Ok((Source::SystemView(view), scope, None));
    }
    if name != "generate_series" {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {name} does not exist"),
        ));
    }
    if !(2..=3).contains(&args.len()) {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            "function generate_series with this number of arguments does not exist",
        ));
    }
    let scope0 = Scope::new();
    let mut bound = Vec::new();
    for a in args {
        let e = match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => e,
            _ => {
                return Err(PgError::unsupported(
                    "named or wildcard arguments to generate_series",
                ))
            }
        };
        bound.push(bind_expr(e, &scope0, params)?);
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
    // `AS g(x)` names the column x; `AS x` names both (a scalar function).
    let (tname, cname) = match alias {
        Some(a) => {
            let t = ident_name(&a.name);
            let c = a
                .columns
                .first()
                .map(ident_name)
                .unwrap_or_else(|| t.clone());
            (t, c)
        }
        None => ("generate_series".to_string(), "generate_series".to_string()),
    };
    let mut scope = Scope::new();
    scope.push(Some(&tname), &cname, ty);
    Ok((
        Source::Series {
            start,
            stop,
            step,
            ty,
        },
        scope,
        None,
    ))
}

/// Picks an index whose every column has an equality conjunct with a
/// column-free expression; unique indexes (the primary key first) win.
pub fn choose_access(table: &TableDef, filter: &Expr) -> Access {
    let conj = filter.conjuncts();
    let eqs: Vec<(usize, &Expr)> = conj.iter().filter_map(|c| c.as_column_eq()).collect();
    if eqs.is_empty() {
        return Access::SeqScan;
    }
    let mut best: Option<(u8, Arc<IndexDef>, Vec<Expr>)> = None;
    for ix in table.indexes.list() {
        if !ix.is_ready() {
            continue;
        }
        let mut key = Vec::with_capacity(ix.spec.columns.len());
        for c in &ix.spec.columns {
            match eqs.iter().find(|(col, _)| col == c) {
                Some((_, e)) => key.push((*e).clone()),
                None => break,
            }
        }
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
            best = Some((rank, ix, key));
        }
    }
    match best {
        Some((_, index, key)) => {
            let key_types = index
                .spec
                .columns
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

fn bind_returning(
    items: Option<&[ast::SelectItem]>,
    table: &Arc<TableDef>,
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
                for (i, c) in table.columns.iter().enumerate() {
                    exprs.push(Expr::Column(i));
                    let mut f = field(c.name.clone(), c.ty);
                    set_origin(&mut f, table, i);
                    cols.push(f);
                }
            }
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let b = bind_expr(e, scope, params)?;
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => output_name(e),
                };
                let (expr, ty) = output_expr(b, params)?;
                let mut f = field(name, ty);
                if let Expr::Column(i) = &expr {
                    set_origin(&mut f, table, *i);
                }
                exprs.push(expr);
                cols.push(f);
            }
        }
    }
    Ok((Some(exprs), cols))
}

/// Binds each column's DEFAULT (None = NULL).
pub fn bind_defaults(table: &TableDef, params: &mut ParamTypes) -> PgResult<Vec<Option<Expr>>> {
    let mut out = Vec::with_capacity(table.columns.len());
    for c in &table.columns {
        match &c.default {
            None => out.push(None),
            Some(text) => {
                let ast = parse_expr_text(text)?;
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

/// Parses a stored expression (a column DEFAULT).
pub fn parse_expr_text(text: &str) -> PgResult<ast::Expr> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| PgError::syntax(format!("invalid DEFAULT expression \"{text}\": {e}")))
}

fn plan_insert(
    catalog: &CatalogView<'_>,
    ins: &ast::Insert,
    params: &mut ParamTypes,
) -> PgResult<InsertPlan> {
    if ins.on.is_some() {
        return Err(PgError::unsupported("ON CONFLICT is not supported"));
    }
    let table = catalog.table(&object_name(&ins.table_name))?;
    let alias = ins
        .table_alias
        .as_ref()
        .map(ident_name)
        .unwrap_or_else(|| table.name.clone());
    let target_cols: Vec<usize> = if ins.columns.is_empty() {
        (0..table.columns.len()).collect()
    } else {
        let mut v = Vec::new();
        for c in &ins.columns {
            let n = ident_name(c);
            let i = table.column_index(&n).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!(
                        "column \"{n}\" of relation \"{}\" does not exist",
                        table.name
                    ),
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
                    if row.len() < target_cols.len() && !ins.columns.is_empty() {
                        return Err(PgError::syntax(
                            "INSERT has more target columns than expressions",
                        ));
                    }
                    let mut out = Vec::with_capacity(row.len());
                    for (e, &c) in row.iter().zip(&target_cols) {
                        if is_default_keyword(e) {
                            out.push(None);
                        } else {
                            let col = &table.columns[c];
                            out.push(Some(bind_assign(e, &scope, params, col.ty, &col.name)?));
                        }
                    }
                    rows.push(out);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let qp = plan_query(catalog, q, params)?;
                if qp.visible > target_cols.len() {
                    return Err(PgError::syntax(
                        "INSERT has more expressions than target columns",
                    ));
                }
                if qp.visible < target_cols.len() && !ins.columns.is_empty() {
                    return Err(PgError::syntax(
                        "INSERT has more target columns than expressions",
                    ));
                }
                for (f, &c) in qp.columns.iter().zip(&target_cols) {
                    let col = &table.columns[c];
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
    let defaults = bind_defaults(&table, params)?;
    let scope = table_scope(&table, &alias);
    let (returning, columns) = bind_returning(ins.returning.as_deref(), &table, &scope, params)?;
    Ok(InsertPlan {
        table,
        target_cols,
        source,
        defaults,
        returning,
        columns,
    })
}

fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

fn single_table(
    twj: &ast::TableWithJoins,
    catalog: &CatalogView<'_>,
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
            let rel = object_name(name);
            let t = catalog.table(&rel)?;
            let a = alias.as_ref().map(|a| ident_name(&a.name)).unwrap_or(rel);
            Ok((t, a))
        }
        _ => Err(PgError::unsupported("only a plain table can be the target")),
    }
}

fn plan_update(
    catalog: &CatalogView<'_>,
    target: &ast::TableWithJoins,
    assignments: &[ast::Assignment],
    selection: Option<&ast::Expr>,
    returning: Option<&[ast::SelectItem]>,
    params: &mut ParamTypes,
) -> PgResult<UpdatePlan> {
    let (table, alias) = single_table(target, catalog)?;
    let scope = table_scope(&table, &alias);
    let mut defaults: Option<Vec<Option<Expr>>> = None;
    let mut assigns = Vec::new();
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
        if assigns.iter().any(|(x, _)| *x == c) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("multiple assignments to same column \"{n}\""),
            ));
        }
        let col = &table.columns[c];
        let e = if is_default_keyword(&a.value) {
            if defaults.is_none() {
                defaults = Some(bind_defaults(&table, params)?);
            }
            defaults
                .as_ref()
                .and_then(|d| d[c].clone())
                .unwrap_or(Expr::Const(pgtypes::value::Value::Null))
        } else {
            bind_assign(&a.value, &scope, params, col.ty, &col.name)?
        };
        assigns.push((c, e));
    }
    let filter = match selection {
        Some(w) => Some(bind_where(w, &scope, params)?),
        None => None,
    };
    let access = match &filter {
        Some(f) => choose_access(&table, f),
        None => Access::SeqScan,
    };
    let (returning, columns) = bind_returning(returning, &table, &scope, params)?;
    Ok(UpdatePlan {
        table,
        access,
        filter,
        assignments: assigns,
        returning,
        columns,
    })
}

fn plan_delete(
    catalog: &CatalogView<'_>,
    d: &ast::Delete,
    params: &mut ParamTypes,
) -> PgResult<DeletePlan> {
    if d.using.is_some() || !d.tables.is_empty() || d.limit.is_some() || !d.order_by.is_empty() {
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
    let (table, alias) = single_table(twj, catalog)?;
    let scope = table_scope(&table, &alias);
    let filter = match &d.selection {
        Some(w) => Some(bind_where(w, &scope, params)?),
        None => None,
    };
    let access = match &filter {
        Some(f) => choose_access(&table, f),
        None => Access::SeqScan,
    };
    let (returning, columns) = bind_returning(d.returning.as_deref(), &table, &scope, params)?;
    Ok(DeletePlan {
        table,
        access,
        filter,
        returning,
        columns,
    })
}
