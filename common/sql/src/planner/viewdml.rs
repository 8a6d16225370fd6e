//! INSERT / UPDATE / DELETE on a view with INSTEAD OF triggers
//! (PostgreSQL's rewriter leaving a view as the result relation when a
//! trigger will do the work, and `ExecModifyTable` calling
//! `ExecIR*Triggers` for each row).
//!
//! The view holds no rows, so the plan is a source of rows and a list of
//! what the triggers get:
//!
//! - INSERT: the VALUES rows or the query, bound as for a table
//!   ([`super::insert_source`]) over the view's columns; a column not
//!   listed, or DEFAULT, is NULL (views have no defaults here).
//! - UPDATE / DELETE: a query over the view, `SELECT v.c1, …, v.cn
//!   [, SET values] FROM <target> [, FROM / USING items] [WHERE …]`, whose
//!   first n columns are OLD; for UPDATE, NEW is OLD with the SET columns
//!   replaced by the values after it.
//!
//! The executor (`executor::modify_table`) fires the view's statement
//! triggers around the rows and runs the INSTEAD OF triggers for each; a
//! row counts (and goes to RETURNING) only if no trigger returned NULL.
//! RETURNING reads the row the last trigger returned (DELETE: OLD).
//!
//! A view without an INSTEAD OF trigger for the event never gets here: it
//! is not updatable (`planner::dml_target`).

use std::sync::Arc;

use sqlparser::ast;

use super::{
    bind_returning, ident_name, insert_source, is_default_keyword, object_name, plan_query,
    subselect, InsertSource, QueryPlan,
};
use crate::expr::{Expr, ParamTypes, Scope};
use engine::catalog::CatalogView;
use engine::pg_trigger::{TRIGGER_TYPE_DELETE, TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE};
use engine::view::ViewSpec;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use server::backend::FieldDescription;

/// A bound INSERT / UPDATE / DELETE whose target is a view with an
/// INSTEAD OF trigger for it.
#[derive(Debug)]
pub struct ViewDmlPlan {
    /// The view (with its triggers).
    pub view: Arc<ViewSpec>,
    /// `TRIGGER_TYPE_INSERT`, `_UPDATE` or `_DELETE`.
    pub op: u16,
    /// Where the rows come from.
    pub rows: ViewRows,
    /// RETURNING over the view's row.
    pub returning: Option<Vec<Expr>>,
    /// RowDescription of RETURNING.
    pub columns: Vec<FieldDescription>,
    /// Subqueries of VALUES and RETURNING.
    pub shared: Arc<super::StatementPlans>,
}

/// The rows of a [`ViewDmlPlan`].
#[derive(Debug)]
pub enum ViewRows {
    /// INSERT: the view column of each source value, and the source.
    Insert {
        /// View column of each source column.
        target_cols: Vec<usize>,
        /// VALUES or a query.
        source: InsertSource,
    },
    /// UPDATE / DELETE: the rows of the view the statement touches, OLD
    /// first.
    Scan {
        /// The query.
        query: Box<QueryPlan>,
        /// UPDATE: (view column, position of its new value in the row).
        set: Vec<(usize, usize)>,
    },
}

impl ViewDmlPlan {
    /// The view columns an UPDATE sets (written columns, for privileges).
    pub fn set_columns(&self) -> Vec<usize> {
        match &self.rows {
            ViewRows::Insert { target_cols, .. } => target_cols.clone(),
            ViewRows::Scan { set, .. } => set.iter().map(|(c, _)| *c).collect(),
        }
    }
}

/// The view `name` if it has an INSTEAD OF trigger for `op`.
pub(super) fn instead_target(
    catalog: &CatalogView<'_>,
    name: &ast::ObjectName,
    op: u16,
) -> PgResult<Option<Arc<ViewSpec>>> {
    let q = crate::namespace::QualName::of(name)?;
    if crate::namespace::find_table(catalog, &q).is_some() {
        return Ok(None);
    }
    Ok(crate::namespace::find_view(catalog, &q).filter(|v| v.has_instead_trigger(op)))
}

/// The name a statement's columns reach the target by: its alias, else
/// its bare name.
fn target_alias(name: &ast::ObjectName, alias: Option<&ast::Ident>) -> String {
    alias.map(ident_name).unwrap_or_else(|| object_name(name))
}

fn returning(
    g: &subselect::Global<'_, '_>,
    view: &ViewSpec,
    alias: &str,
    items: Option<&[ast::SelectItem]>,
    params: &mut ParamTypes,
) -> PgResult<(Option<Vec<Expr>>, Vec<FieldDescription>)> {
    let cols: Vec<(String, SqlType)> = view
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.ty))
        .collect();
    let scope = Scope::for_table(alias, &cols);
    bind_returning(g, items, (view.oid, &view.columns), &scope, params)
}

/// INSERT INTO view.
pub(super) fn plan_insert(
    catalog: &CatalogView<'_>,
    view: Arc<ViewSpec>,
    ins: &ast::Insert,
    params: &mut ParamTypes,
) -> PgResult<ViewDmlPlan> {
    // A view has no unique index to infer an arbiter from: only a DO
    // NOTHING without a target stands (and never skips a row).
    match &ins.on {
        Some(ast::OnInsert::OnConflict(oc)) if oc.conflict_target.is_some() => {
            return Err(super::no_arbiter())
        }
        Some(ast::OnInsert::OnConflict(oc))
            if !matches!(oc.action, ast::OnConflictAction::DoNothing) =>
        {
            return Err(super::no_inference());
        }
        Some(ast::OnInsert::OnConflict(_)) | None => {}
        Some(_) => return Err(PgError::syntax("syntax error at or near \"DUPLICATE\"")),
    }
    let g = subselect::Global::new(catalog);
    let (target_cols, source) = insert_source(catalog, &g, ins, &view.columns, &view.name, params)?;
    let alias = ins
        .table_alias
        .as_ref()
        .map(ident_name)
        .unwrap_or_else(|| view.name.clone());
    let (returning, columns) = returning(&g, &view, &alias, ins.returning.as_deref(), params)?;
    let shared = super::insert_plans(g, &source)?;
    Ok(ViewDmlPlan {
        view,
        op: TRIGGER_TYPE_INSERT,
        rows: ViewRows::Insert {
            target_cols,
            source,
        },
        returning,
        columns,
        shared,
    })
}

/// What UPDATE / DELETE on a view read and return.
pub(super) struct ScanStmt<'a> {
    /// The target (a view with a trigger for the event).
    pub target: &'a ast::TableWithJoins,
    /// UPDATE's SET list (empty for DELETE).
    pub assignments: &'a [ast::Assignment],
    /// FROM / USING items.
    pub from: &'a [ast::TableWithJoins],
    /// WHERE.
    pub selection: Option<&'a ast::Expr>,
    /// RETURNING.
    pub returning: Option<&'a [ast::SelectItem]>,
}

/// UPDATE / DELETE on `view` (`op`).
pub(super) fn plan_scan(
    catalog: &CatalogView<'_>,
    view: Arc<ViewSpec>,
    op: u16,
    s: &ScanStmt<'_>,
    params: &mut ParamTypes,
) -> PgResult<ViewDmlPlan> {
    let ast::TableFactor::Table { name, alias, .. } = &s.target.relation else {
        return Err(PgError::unsupported("only a plain view can be the target"));
    };
    let alias = target_alias(name, alias.as_ref().map(|a| &a.name));
    let q = |n: &str| crate::pgcatalog::quote_ident(n);
    let mut select: Vec<String> = view
        .columns
        .iter()
        .map(|c| format!("{}.{}", q(&alias), q(&c.name)))
        .collect();
    let mut set = Vec::with_capacity(s.assignments.len());
    for a in s.assignments {
        let n = match &a.target {
            ast::AssignmentTarget::ColumnName(n) => object_name(n),
            ast::AssignmentTarget::Tuple(_) => {
                return Err(PgError::unsupported(
                    "multiple-column UPDATE assignments are not supported",
                ))
            }
        };
        let Some(c) = view.columns.iter().position(|col| col.name == n) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{n}\" of relation \"{}\" does not exist",
                    view.name
                ),
            ));
        };
        if set.iter().any(|(k, _)| *k == c) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("multiple assignments to same column \"{n}\""),
            ));
        }
        let col = &view.columns[c];
        let ty = crate::pgcatalog::functions::format_type(col.ty.oid(), col.ty.typmod());
        // A literal or parameter takes the column's type, as in an
        // assignment; anything else keeps its own and is cast on write.
        let value = match &a.value {
            e if is_default_keyword(e) => format!("CAST(NULL AS {ty})"),
            e @ (ast::Expr::Value(_) | ast::Expr::TypedString { .. }) => {
                format!("CAST({e} AS {ty})")
            }
            e => format!("({e})"),
        };
        set.push((c, select.len()));
        select.push(value);
    }
    let mut sql = format!("SELECT {} FROM {}", select.join(", "), s.target);
    for f in s.from {
        sql.push_str(&format!(", {f}"));
    }
    if let Some(w) = s.selection {
        sql.push_str(&format!(" WHERE {w}"));
    }
    let query = crate::parser::parse_view_query(&sql)?;
    let plan = plan_query(catalog, &query, params)?;
    for (c, k) in &set {
        let (from, to) = (plan.columns[*k].ty, view.columns[*c].ty);
        if from != to && !pgtypes::value::can_cast(from, to) {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "column \"{}\" is of type {} but expression is of type {}",
                    view.columns[*c].name,
                    to.pg_name(),
                    from.pg_name()
                ),
            )
            .with_hint("You will need to rewrite or cast the expression."));
        }
    }
    let g = subselect::Global::new(catalog);
    let (returning, columns) = match returning(&g, &view, &alias, s.returning, params) {
        Err(e)
            if !s.from.is_empty()
                && (e.code == sqlstate::UNDEFINED_TABLE || e.code == sqlstate::UNDEFINED_COLUMN) =>
        {
            return Err(PgError::unsupported(
                "RETURNING of UPDATE … FROM / DELETE … USING on a view can name only the view's columns",
            ))
        }
        r => r?,
    };
    let shared = Arc::new(g.into_plans());
    if shared.needs_state() {
        return Err(PgError::unsupported(
            "subqueries in RETURNING of UPDATE / DELETE on a view are not supported",
        ));
    }
    debug_assert!(op == TRIGGER_TYPE_UPDATE || op == TRIGGER_TYPE_DELETE);
    Ok(ViewDmlPlan {
        view,
        op,
        rows: ViewRows::Scan {
            query: Box::new(plan),
            set,
        },
        returning,
        columns,
        shared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_is_the_bare_name_without_one() {
        let n = ast::ObjectName(vec![ast::Ident::new("public"), ast::Ident::new("v")]);
        assert_eq!(target_alias(&n, None), "v");
        assert_eq!(target_alias(&n, Some(&ast::Ident::new("x"))), "x");
    }
}
