//! `pg_get_viewdef`: a view's query printed the way PostgreSQL's
//! `ruleutils.c` prints it — every column qualified with its relation
//! (or alias), `SELECT *` expanded, output names given with `AS` where
//! they differ, string literals with their type (`'x'::text`), one
//! clause per line with PostgreSQL's indentation.
//!
//! PostgreSQL deparses the analysed query tree; hotpair deparses the
//! stored sqlparser AST, resolving unqualified column names against the
//! FROM items' columns as the catalog snapshot knows them. Two modes, as
//! PostgreSQL's: not pretty (`pg_get_viewdef(v)`, pg_views) wraps every
//! operator and join in parentheses; pretty (`pg_get_viewdef(v, true)`,
//! psql's `\d+`) leaves out those the operator precedence makes
//! unnecessary. Shapes it does not know are printed as sqlparser writes
//! them.
//!
//! [`not_updatable`] is the rewriter's answer to INSERT / UPDATE / DELETE
//! on a view (PostgreSQL's `view_query_is_auto_updatable`), used by the
//! planner and information_schema.views.
//!
//! Next: `functions.rs` calls [`view_definition`]; `rows.rs` shows it in
//! pg_views.

use sqlparser::ast;

use super::{quote_ident, CatalogSnapshot, RelRef};
use engine::view::ViewSpec;
use pgtypes::error::{sqlstate, PgError};
use pgtypes::sqltype::SqlType;

/// pg_get_viewdef's text for `view` (ends with `;`).
pub fn view_definition(snap: &CatalogSnapshot, view: &ViewSpec, pretty: bool) -> String {
    let q = match crate::parser::parse_view_query(&view.query) {
        Ok(q) => q,
        Err(_) => return format!(" {};", view.query),
    };
    let d = Deparser {
        snap: Some(snap),
        pretty,
        qualify: true,
    };
    let names: Vec<String> = view.columns.iter().map(|c| c.name.clone()).collect();
    let mut out = String::new();
    d.query(&q, &names, 0, &mut out);
    out.push(';');
    out
}

/// One expression over a single table's columns, as `pg_get_expr` and
/// `pg_get_indexdef` print it (column names unqualified).
pub fn expr_text(e: &ast::Expr, pretty: bool) -> String {
    let d = Deparser {
        snap: None,
        pretty,
        qualify: false,
    };
    d.expr(e, &[], 0, 0)
}

/// A CHECK constraint's expression over a table's columns (`columns`:
/// name and type of each), as `pg_get_constraintdef` prints its inside:
/// column names bare, the casts PostgreSQL's parser adds shown
/// (`balance >= (0)::numeric`, `(code)::text = 'x'::text`).
pub fn check_text(e: &ast::Expr, columns: &[(String, SqlType)], pretty: bool) -> String {
    let d = Deparser {
        snap: None,
        pretty,
        qualify: false,
    };
    let rel = Rel {
        qual: String::new(),
        cols: columns.iter().map(|(n, _)| n.clone()).collect(),
        types: columns.iter().map(|(_, t)| Some(*t)).collect(),
    };
    d.expr(e, &[rel], 0, 0)
}

/// pg_get_triggerdef's text for trigger `tg` of `table` (PostgreSQL's
/// `pg_get_triggerdef_worker`): events in INSERT, DELETE, UPDATE [OF …],
/// TRUNCATE order; the table always schema-qualified unless `pretty`
/// (then only when not visible); WHEN over `old.` / `new.`; arguments as
/// string literals.
pub fn trigger_definition(
    snap: &CatalogSnapshot,
    table: engine::pg_trigger::TriggerRel<'_>,
    tg: &engine::pg_trigger::TriggerSpec,
    pretty: bool,
) -> String {
    use engine::pg_trigger::*;
    let mut out = format!(
        "CREATE {}TRIGGER {} ",
        if tg.constraint.is_some() {
            "CONSTRAINT "
        } else {
            ""
        },
        quote_ident(&tg.name)
    );
    out.push_str(if tg.before() {
        "BEFORE"
    } else if tg.instead() {
        "INSTEAD OF"
    } else {
        "AFTER"
    });
    let mut first = true;
    for (bit, word) in [
        (TRIGGER_TYPE_INSERT, "INSERT"),
        (TRIGGER_TYPE_DELETE, "DELETE"),
        (TRIGGER_TYPE_UPDATE, "UPDATE"),
        (TRIGGER_TYPE_TRUNCATE, "TRUNCATE"),
    ] {
        if !tg.on(bit) {
            continue;
        }
        out.push_str(if first { " " } else { " OR " });
        out.push_str(word);
        first = false;
        if bit == TRIGGER_TYPE_UPDATE && !tg.columns.is_empty() {
            let cols: Vec<String> = tg
                .columns
                .iter()
                .filter_map(|c| table.columns.get(*c))
                .map(|c| quote_ident(&c.name))
                .collect();
            out.push_str(" OF ");
            out.push_str(&cols.join(", "));
        }
    }
    let schema = quote_ident(snap.namespace_name(table.namespace).unwrap_or("public"));
    let rel = if pretty {
        super::reg_out(snap, super::RegKind::Class, table.oid)
    } else {
        format!("{schema}.{}", quote_ident(table.name))
    };
    out.push_str(&format!(" ON {rel} "));
    if let Some(c) = &tg.constraint {
        if !c.deferrable {
            out.push_str("NOT ");
        }
        out.push_str("DEFERRABLE INITIALLY ");
        out.push_str(if c.initially_deferred {
            "DEFERRED "
        } else {
            "IMMEDIATE "
        });
    }
    if tg.old_table.is_some() || tg.new_table.is_some() {
        out.push_str("REFERENCING ");
        if let Some(o) = &tg.old_table {
            out.push_str(&format!("OLD TABLE AS {} ", quote_ident(o)));
        }
        if let Some(n) = &tg.new_table {
            out.push_str(&format!("NEW TABLE AS {} ", quote_ident(n)));
        }
    }
    out.push_str(if tg.row() {
        "FOR EACH ROW "
    } else {
        "FOR EACH STATEMENT "
    });
    if let Some(w) = &tg.when {
        let text = match crate::parser::parse_expr_text(w) {
            Ok(e) => {
                let d = Deparser {
                    snap: None,
                    pretty,
                    qualify: false,
                };
                let rel = |qual: &str| Rel {
                    qual: qual.to_string(),
                    cols: Vec::new(),
                    types: table
                        .columns
                        .iter()
                        .filter(|c| !c.dropped)
                        .map(|c| Some(c.ty))
                        .collect(),
                };
                let mut rels = [rel("old"), rel("new")];
                for r in &mut rels {
                    r.cols = table
                        .columns
                        .iter()
                        .filter(|c| !c.dropped)
                        .map(|c| c.name.clone())
                        .collect();
                }
                d.expr(&e, &rels, 0, 0)
            }
            Err(_) => w.clone(),
        };
        out.push_str(&format!("WHEN ({text}) "));
    }
    let func = match snap.function(tg.func) {
        Some(f) if snap.search_order().contains(&f.namespace) => quote_ident(&f.name),
        Some(f) => format!(
            "{}.{}",
            quote_ident(snap.namespace_name(f.namespace).unwrap_or("")),
            quote_ident(&f.name)
        ),
        None => tg.func.to_string(),
    };
    let args: Vec<String> = tg
        .args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "''")))
        .collect();
    out.push_str(&format!("EXECUTE FUNCTION {func}({})", args.join(", ")));
    out
}

/// INSERT / UPDATE / DELETE on a view (`verb`: "insert into", "update",
/// "delete from"): 55000 with PostgreSQL's reason why the view is not
/// automatically updatable. A view that is (one table, no aggregates …)
/// is not writable here either: 0A000.
pub fn not_updatable(view: &ViewSpec, verb: &str) -> PgError {
    let reason = match crate::parser::parse_view_query(&view.query) {
        Ok(q) => not_updatable_reason(&q),
        Err(_) => None,
    };
    let Some(reason) = reason else {
        return PgError::unsupported(format!(
            "cannot {verb} view \"{}\": automatically updatable views are not supported",
            view.name
        ));
    };
    let (what, event) = match verb {
        "insert into" => ("inserting into", "INSERT"),
        "update" => ("updating", "UPDATE"),
        _ => ("deleting from", "DELETE"),
    };
    PgError::new(
        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("cannot {verb} view \"{}\"", view.name),
    )
    .with_detail(reason)
    .with_hint(format!(
        "To enable {what} the view, provide an INSTEAD OF {event} trigger or an unconditional ON {event} DO INSTEAD rule."
    ))
}

/// PostgreSQL's view_query_is_auto_updatable, for the shapes it checks
/// first (None: the view would be automatically updatable).
pub fn not_updatable_reason(q: &ast::Query) -> Option<&'static str> {
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return Some(
            "Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.",
        );
    };
    if q.with.is_some() {
        return Some("Views containing WITH are not automatically updatable.");
    }
    if sel.distinct.is_some() {
        return Some("Views containing DISTINCT are not automatically updatable.");
    }
    if matches!(&sel.group_by, ast::GroupByExpr::Expressions(g, _) if !g.is_empty()) {
        return Some("Views containing GROUP BY are not automatically updatable.");
    }
    if sel.having.is_some() {
        return Some("Views containing HAVING are not automatically updatable.");
    }
    if q.limit.is_some() || q.offset.is_some() {
        return Some("Views containing LIMIT or OFFSET are not automatically updatable.");
    }
    if sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return Some(
            "Views that do not select from a single table or view are not automatically updatable.",
        );
    }
    let text = sel
        .projection
        .iter()
        .map(|p| p.to_string().to_lowercase())
        .collect::<Vec<_>>()
        .join(",");
    if ["count(", "sum(", "avg(", "min(", "max("]
        .iter()
        .any(|f| text.contains(f))
    {
        return Some("Views that return aggregate functions are not automatically updatable.");
    }
    None
}

/// An identifier as the planner names it (unquoted: lower case).
fn ident_name(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// The relation name of a possibly qualified name.
fn object_name(n: &ast::ObjectName) -> String {
    n.0.last().map(ident_name).unwrap_or_default()
}

struct Deparser<'a> {
    /// None for an expression over one table's columns (an index's).
    snap: Option<&'a CatalogSnapshot>,
    pretty: bool,
    /// Columns printed with their relation's name (a query's), or bare
    /// (one table's expression).
    qualify: bool,
}

/// A FROM item's name and columns (with their types where known).
struct Rel {
    qual: String,
    cols: Vec<String>,
    types: Vec<Option<SqlType>>,
}

/// Operator precedence, loosest first (PostgreSQL's grammar order).
fn prec(op: &ast::BinaryOperator) -> u8 {
    use ast::BinaryOperator as B;
    match op {
        B::Or => 1,
        B::And => 2,
        B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq => 4,
        B::Plus | B::Minus => 7,
        B::Multiply | B::Divide | B::Modulo => 8,
        _ => 6,
    }
}

impl Deparser<'_> {
    fn rel_columns(&self, name: &str) -> Vec<(String, Option<SqlType>)> {
        match self.snap.and_then(|s| s.relation_by_name(None, name)) {
            Some(RelRef::Table(t)) => t
                .columns
                .iter()
                .filter(|c| !c.dropped)
                .map(|c| (c.name.clone(), Some(c.ty)))
                .collect(),
            Some(RelRef::View(v)) => v.columns.iter().map(|c| (c.name.clone(), None)).collect(),
            Some(RelRef::System(v)) => v
                .columns
                .iter()
                .map(|(n, t)| (n.to_string(), Some(*t)))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn collect_rels(&self, tf: &ast::TableFactor, rels: &mut Vec<Rel>) {
        match tf {
            ast::TableFactor::Table { name, alias, .. } => {
                let rel = object_name(name);
                let (mut cols, types): (Vec<String>, Vec<Option<SqlType>>) =
                    self.rel_columns(&rel).into_iter().unzip();
                let qual = match alias {
                    Some(a) => {
                        for (c, n) in cols.iter_mut().zip(&a.columns) {
                            *c = ident_name(n);
                        }
                        ident_name(&a.name)
                    }
                    None => rel,
                };
                rels.push(Rel { qual, cols, types });
            }
            ast::TableFactor::Derived {
                alias: Some(a),
                subquery,
                ..
            } => {
                let cols = match subquery.body.as_ref() {
                    ast::SetExpr::Select(s) => s
                        .projection
                        .iter()
                        .filter_map(|p| match p {
                            ast::SelectItem::ExprWithAlias { alias, .. } => Some(ident_name(alias)),
                            ast::SelectItem::UnnamedExpr(ast::Expr::Identifier(i)) => {
                                Some(ident_name(i))
                            }
                            ast::SelectItem::UnnamedExpr(ast::Expr::CompoundIdentifier(v)) => {
                                v.last().map(ident_name)
                            }
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                rels.push(Rel {
                    qual: ident_name(&a.name),
                    types: vec![None; cols.len()],
                    cols,
                });
            }
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.collect_rels(&table_with_joins.relation, rels);
                for j in &table_with_joins.joins {
                    self.collect_rels(&j.relation, rels);
                }
            }
            _ => {}
        }
    }

    fn qualify(&self, rels: &[Rel], col: &str) -> String {
        match rels.iter().find(|r| r.cols.iter().any(|c| c == col)) {
            Some(r) if self.qualify => format!("{}.{}", quote_ident(&r.qual), quote_ident(col)),
            _ => quote_ident(col),
        }
    }

    /// The type of a column reference, a literal or an operator over them
    /// (None: not known here; a string literal is `Unknown`).
    fn type_of(&self, e: &ast::Expr, rels: &[Rel]) -> Option<SqlType> {
        use ast::Expr as E;
        let column = |qual: Option<String>, col: String| {
            rels.iter()
                .filter(|r| qual.as_ref().is_none_or(|q| *q == r.qual))
                .find_map(|r| {
                    let i = r.cols.iter().position(|c| *c == col)?;
                    r.types.get(i).copied().flatten()
                })
        };
        match e {
            E::Identifier(i) => column(None, ident_name(i)),
            E::CompoundIdentifier(v) if v.len() >= 2 => column(
                Some(ident_name(&v[v.len() - 2])),
                ident_name(&v[v.len() - 1]),
            ),
            E::Value(ast::Value::Number(n, _)) => Some(number_type(n)),
            E::Value(ast::Value::SingleQuotedString(_)) => Some(SqlType::Unknown),
            E::Value(ast::Value::Boolean(_)) => Some(SqlType::Bool),
            E::Nested(inner) => self.type_of(inner, rels),
            E::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } => self.type_of(expr, rels),
            E::Cast { data_type, .. } => SqlType::from_data_type(data_type).ok(),
            E::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                match op {
                    B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => {
                        let (l, r) = (self.type_of(left, rels)?, self.type_of(right, rels)?);
                        let rank = crate::functions::numeric_rank;
                        match (rank(l), rank(r)) {
                            (Some(a), Some(b)) => Some(if a >= b { l.base() } else { r.base() }),
                            _ => None,
                        }
                    }
                    B::StringConcat => Some(SqlType::Text),
                    _ => Some(SqlType::Bool),
                }
            }
            _ => None,
        }
    }

    /// The cast PostgreSQL's operator resolution puts on `side` (of type
    /// `own`) when the other side has type `other`, if any.
    fn coercion(
        &self,
        side: &ast::Expr,
        own: Option<SqlType>,
        other: Option<SqlType>,
    ) -> Option<SqlType> {
        use ast::Expr as E;
        let (own, other) = (own?, other?.base());
        let integer = |t: SqlType| matches!(t, SqlType::Int2 | SqlType::Int4 | SqlType::Int8);
        let literal = matches!(side, E::Value(_) | E::UnaryOp { .. } | E::Nested(_));
        match own {
            // A number meets float8: it is cast.
            o if literal && other == SqlType::Float8 && (integer(o) || o == SqlType::NUMERIC) => {
                Some(SqlType::Float8)
            }
            // An integer meets numeric: it is cast (literal or column).
            o if integer(o) && other == SqlType::NUMERIC => Some(other),
            // A varchar column meets text: compared as text.
            SqlType::Varchar(_) if other.is_text_like() || other == SqlType::Unknown => {
                Some(SqlType::Text)
            }
            _ => None,
        }
    }

    /// One side of a binary operator: with the cast its type needs, and a
    /// string literal labelled with the other side's type.
    fn operand(
        &self,
        side: &ast::Expr,
        other: &ast::Expr,
        rels: &[Rel],
        p: u8,
        right: bool,
        indent: usize,
    ) -> String {
        let own = self.type_of(side, rels);
        let other_ty = self.type_of(other, rels);
        if let (ast::Expr::Value(ast::Value::SingleQuotedString(s)), Some(t)) = (side, other_ty) {
            let t = match t {
                SqlType::Varchar(_) | SqlType::Unknown => SqlType::Text,
                SqlType::Char(_) => SqlType::Char(0),
                t => t.base(),
            };
            let shown = pgtypes::value::Value::from_text(t, s)
                .map(|v| v.to_text_string())
                .unwrap_or_else(|_| s.clone());
            // A constant's type has no modifier: bpchar, not character.
            let label = match t {
                SqlType::Char(_) => t.pg_base_name().to_string(),
                t => super::functions::format_type(t.oid(), -1),
            };
            return format!("'{}'::{label}", shown.replace('\'', "''"));
        }
        match self.coercion(side, own, other_ty) {
            None => match strip_nested(side) {
                // An operator under an operator: PostgreSQL's pretty mode
                // leaves out the parentheses only where arithmetic
                // precedence makes them unnecessary.
                ast::Expr::BinaryOp { op, .. } if prec(op) >= 4 => {
                    let cp = prec(op);
                    let arithmetic = |q: u8| q == 7 || q == 8;
                    let bare = arithmetic(cp) && arithmetic(p) && (cp > p || (cp == p && !right));
                    let inner = self.expr(strip_nested(side), rels, 0, indent);
                    if self.pretty && !bare {
                        format!("({inner})")
                    } else {
                        inner
                    }
                }
                _ => self.expr(side, rels, if right { p + 1 } else { p }, indent),
            },
            Some(t) => {
                let inner = self.expr(side, rels, 10, indent);
                let ty = super::functions::format_type(t.oid(), -1);
                if self.pretty {
                    format!("{inner}::{ty}")
                } else {
                    format!("({inner})::{ty}")
                }
            }
        }
    }

    fn query(&self, q: &ast::Query, names: &[String], indent: usize, out: &mut String) {
        let pad = |n: usize| " ".repeat(n + indent);
        let ast::SetExpr::Select(sel) = q.body.as_ref() else {
            out.push_str(&format!(" {}", q));
            return;
        };
        let mut rels = Vec::new();
        for twj in &sel.from {
            self.collect_rels(&twj.relation, &mut rels);
            for j in &twj.joins {
                self.collect_rels(&j.relation, &mut rels);
            }
        }
        out.push_str(" SELECT ");
        if sel.distinct.is_some() {
            out.push_str("DISTINCT ");
        }
        // The select list, `*` expanded.
        let mut items: Vec<(String, Option<String>, Option<&ast::Expr>)> = Vec::new();
        for p in &sel.projection {
            match p {
                ast::SelectItem::Wildcard(_) => {
                    for r in &rels {
                        for c in &r.cols {
                            let text = format!("{}.{}", quote_ident(&r.qual), quote_ident(c));
                            if !items.iter().any(|(t, _, _)| t.ends_with(&format!(".{c}"))) {
                                items.push((text, Some(c.clone()), None));
                            }
                        }
                    }
                }
                ast::SelectItem::QualifiedWildcard(n, _) => {
                    let qual = object_name(n);
                    if let Some(r) = rels.iter().find(|r| r.qual == qual) {
                        for c in &r.cols {
                            let text = format!("{}.{}", quote_ident(&r.qual), quote_ident(c));
                            items.push((text, Some(c.clone()), None));
                        }
                    }
                }
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    let own = match e {
                        ast::Expr::Identifier(i) => Some(ident_name(i)),
                        ast::Expr::CompoundIdentifier(v) => v.last().map(ident_name),
                        _ => None,
                    };
                    items.push((self.expr(e, &rels, 0, indent), own, Some(e)));
                }
            }
        }
        let list: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, (text, own, _))| match names.get(i) {
                Some(n) if own.as_deref() != Some(n.as_str()) => {
                    format!("{text} AS {}", quote_ident(n))
                }
                _ => text.clone(),
            })
            .collect();
        out.push_str(&list.join(&format!(",\n{}", pad(4))));
        if !sel.from.is_empty() {
            out.push_str(&format!("\n{}FROM ", pad(3)));
            let froms: Vec<String> = sel
                .from
                .iter()
                .map(|twj| self.join_tree(twj, &rels, indent))
                .collect();
            out.push_str(&froms.join(&format!(",\n{}", pad(4))));
        }
        if let Some(w) = &sel.selection {
            out.push_str(&format!(
                "\n{}WHERE {}",
                pad(2),
                self.expr(w, &rels, 0, indent)
            ));
        }
        let target = |e: &ast::Expr| -> String {
            if let ast::Expr::Value(ast::Value::Number(n, _)) = e {
                if let Some((t, _, _)) = n.parse::<usize>().ok().and_then(|i| items.get(i - 1)) {
                    return t.clone();
                }
            }
            self.expr(e, &rels, 0, indent)
        };
        if let ast::GroupByExpr::Expressions(g, _) = &sel.group_by {
            if !g.is_empty() {
                let g: Vec<String> = g.iter().map(target).collect();
                out.push_str(&format!("\n{}GROUP BY {}", pad(2), g.join(", ")));
            }
        }
        if let Some(h) = &sel.having {
            out.push_str(&format!(
                "\n{}HAVING {}",
                pad(1),
                self.expr(h, &rels, 0, indent)
            ));
        }
        if let Some(ob) = &q.order_by {
            let o: Vec<String> = ob
                .exprs
                .iter()
                .map(|o| {
                    let mut s = target(&o.expr);
                    if o.asc == Some(false) {
                        s.push_str(" DESC");
                    }
                    match o.nulls_first {
                        Some(true) if o.asc != Some(false) => s.push_str(" NULLS FIRST"),
                        Some(false) if o.asc == Some(false) => s.push_str(" NULLS LAST"),
                        _ => {}
                    }
                    s
                })
                .collect();
            out.push_str(&format!("\n{}ORDER BY {}", pad(2), o.join(", ")));
        }
        if let Some(o) = &q.offset {
            out.push_str(&format!(
                "\n{}OFFSET {}",
                pad(1),
                self.expr(&o.value, &rels, 0, indent)
            ));
        }
        if let Some(l) = &q.limit {
            out.push_str(&format!(
                "\n{}LIMIT {}",
                pad(1),
                self.expr(l, &rels, 0, indent)
            ));
        }
    }

    fn factor(&self, tf: &ast::TableFactor, rels: &[Rel], indent: usize) -> String {
        match tf {
            ast::TableFactor::Table { name, alias, .. } => {
                let mut s = quote_ident(&object_name(name));
                if let Some(a) = alias {
                    s.push(' ');
                    s.push_str(&quote_ident(&ident_name(&a.name)));
                    if !a.columns.is_empty() {
                        let c: Vec<String> = a
                            .columns
                            .iter()
                            .map(|c| quote_ident(&ident_name(c)))
                            .collect();
                        s.push_str(&format!("({})", c.join(", ")));
                    }
                }
                s
            }
            ast::TableFactor::Derived {
                subquery, alias, ..
            } => {
                let mut s = String::from("(");
                self.query(subquery, &[], indent + 8, &mut s);
                s.push(')');
                if let Some(a) = alias {
                    s.push(' ');
                    s.push_str(&quote_ident(&ident_name(&a.name)));
                }
                s
            }
            ast::TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.join_tree(table_with_joins, rels, indent),
            other => other.to_string(),
        }
    }

    fn join_tree(&self, twj: &ast::TableWithJoins, rels: &[Rel], indent: usize) -> String {
        let mut s = self.factor(&twj.relation, rels, indent);
        for j in &twj.joins {
            let (kw, cons) = match &j.join_operator {
                ast::JoinOperator::Inner(c) => ("JOIN", Some(c)),
                ast::JoinOperator::LeftOuter(c) => ("LEFT JOIN", Some(c)),
                ast::JoinOperator::RightOuter(c) => ("RIGHT JOIN", Some(c)),
                ast::JoinOperator::FullOuter(c) => ("FULL JOIN", Some(c)),
                ast::JoinOperator::CrossJoin => ("CROSS JOIN", None),
                _ => ("JOIN", None),
            };
            let right = self.factor(&j.relation, rels, indent);
            let cond = match cons {
                Some(ast::JoinConstraint::On(e)) => {
                    format!(" ON {}", self.paren_top(e, rels, indent))
                }
                Some(ast::JoinConstraint::Using(cols)) => {
                    let c: Vec<String> = cols.iter().map(|c| quote_ident(&ident_name(c))).collect();
                    format!(" USING ({})", c.join(", "))
                }
                _ => String::new(),
            };
            let joined = format!("{s}\n{}{kw} {right}{cond}", " ".repeat(indent + 5));
            s = if self.pretty {
                joined
            } else {
                format!("({joined})")
            };
        }
        s
    }

    /// A join condition: not pretty, PostgreSQL wraps it once more.
    fn paren_top(&self, e: &ast::Expr, rels: &[Rel], indent: usize) -> String {
        let s = self.expr(e, rels, 0, indent);
        if self.pretty {
            s
        } else {
            format!("({s})")
        }
    }

    fn op(&self, text: String, p: u8, outer: u8) -> String {
        if !self.pretty || p < outer {
            format!("({text})")
        } else {
            text
        }
    }

    fn literal(&self, v: &ast::Value) -> String {
        match v {
            ast::Value::SingleQuotedString(s) => format!("'{}'::text", s.replace('\'', "''")),
            ast::Value::Boolean(b) => b.to_string(),
            ast::Value::Null => "NULL".into(),
            other => other.to_string(),
        }
    }

    fn expr(&self, e: &ast::Expr, rels: &[Rel], outer: u8, indent: usize) -> String {
        use ast::Expr as E;
        let x = |e: &ast::Expr, p: u8| self.expr(e, rels, p, indent);
        match e {
            E::Identifier(i) => self.qualify(rels, &ident_name(i)),
            E::CompoundIdentifier(v) => v
                .iter()
                .map(|i| quote_ident(&ident_name(i)))
                .collect::<Vec<_>>()
                .join("."),
            E::Value(v) => self.literal(v),
            E::Nested(inner) => x(inner, outer),
            E::BinaryOp { left, op, right } => {
                let p = prec(op);
                let sym = match op {
                    ast::BinaryOperator::And => "AND".to_string(),
                    ast::BinaryOperator::Or => "OR".to_string(),
                    ast::BinaryOperator::StringConcat => "||".to_string(),
                    o => o.to_string(),
                };
                if p <= 2 {
                    // AND / OR: one list, as PostgreSQL's BoolExpr.
                    let mut items = Vec::new();
                    flatten_bool(e, op, &mut items);
                    let parts: Vec<String> = items.iter().map(|i| x(i, p)).collect();
                    return self.op(parts.join(&format!(" {sym} ")), p, outer);
                }
                let text = format!(
                    "{} {sym} {}",
                    self.operand(left, right, rels, p, false, indent),
                    self.operand(right, left, rels, p, true, indent)
                );
                self.op(text, p, outer)
            }
            E::UnaryOp {
                op: ast::UnaryOperator::Minus,
                expr,
            } if matches!(expr.as_ref(), E::Value(ast::Value::Number(..))) => {
                // The parser folds a negative number into a constant.
                let E::Value(ast::Value::Number(n, _)) = expr.as_ref() else {
                    return String::new();
                };
                let ty = super::functions::format_type(number_type(n).oid(), -1);
                format!("'-{n}'::{ty}")
            }
            E::UnaryOp { op, expr } => match op {
                ast::UnaryOperator::Not => self.op(format!("NOT {}", x(expr, 3)), 3, outer),
                ast::UnaryOperator::Minus => self.op(format!("- {}", x(expr, 9)), 9, outer),
                _ => format!("{op}{}", x(expr, 9)),
            },
            E::IsNull(a) => self.op(format!("{} IS NULL", x(a, 5)), 5, outer),
            E::IsDistinctFrom(a, b) => self.op(
                format!("{} IS DISTINCT FROM {}", x(a, 5), x(b, 5)),
                5,
                outer,
            ),
            E::IsNotNull(a) => self.op(format!("{} IS NOT NULL", x(a, 5)), 5, outer),
            E::Like {
                negated,
                expr,
                pattern,
                ..
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let ci = matches!(e, E::ILike { .. });
                let sym = match (negated, ci) {
                    (false, false) => "~~",
                    (true, false) => "!~~",
                    (false, true) => "~~*",
                    (true, true) => "!~~*",
                };
                self.op(format!("{} {sym} {}", x(expr, 6), x(pattern, 7)), 6, outer)
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (a, b) = (x(expr, 5), x(expr, 5));
                let ge = self.op(format!("{a} >= {}", x(low, 5)), 4, 3);
                let le = self.op(format!("{b} <= {}", x(high, 5)), 4, 3);
                if *negated {
                    let lt = self.op(format!("{a} < {}", x(low, 5)), 4, 2);
                    let gt = self.op(format!("{b} > {}", x(high, 5)), 4, 2);
                    self.op(format!("{lt} OR {gt}"), 1, outer)
                } else {
                    self.op(format!("{ge} AND {le}"), 2, outer)
                }
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let items: Vec<String> = list.iter().map(|i| x(i, 0)).collect();
                let (op, f) = if *negated {
                    ("<>", "ALL")
                } else {
                    ("=", "ANY")
                };
                self.op(
                    format!("{} {op} {f} (ARRAY[{}])", x(expr, 5), items.join(", ")),
                    4,
                    outer,
                )
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let mut s = String::new();
                self.query(subquery, &[], indent + 8, &mut s);
                let kw = if *negated { "NOT IN" } else { "IN" };
                // PostgreSQL parenthesises an IN sublink in either mode.
                let t = format!("({} {kw} ({s}))", x(expr, 5));
                if *negated {
                    self.op(format!("NOT {t}"), 3, outer)
                } else {
                    t
                }
            }
            E::Exists { subquery, negated } => {
                let mut s = String::new();
                self.query(subquery, &[], indent + 8, &mut s);
                let t = format!("EXISTS ({s})");
                if *negated {
                    self.op(format!("NOT {t}"), 3, outer)
                } else {
                    t
                }
            }
            E::Subquery(q) => {
                let mut s = String::new();
                self.query(q, &[], indent + 8, &mut s);
                format!("({s})")
            }
            E::Cast {
                expr, data_type, ..
            } => {
                let ty = SqlType::from_data_type(data_type)
                    .map(|t| super::functions::format_type(t.oid(), t.typmod()))
                    .unwrap_or_else(|_| data_type.to_string().to_lowercase());
                match expr.as_ref() {
                    E::Value(ast::Value::SingleQuotedString(s)) => {
                        format!("'{}'::{ty}", s.replace('\'', "''"))
                    }
                    inner => format!("({})::{ty}", x(inner, 0)),
                }
            }
            E::Function(f) => {
                let name = object_name(&f.name);
                let args = match &f.args {
                    ast::FunctionArguments::List(l) => l
                        .args
                        .iter()
                        .map(|a| match a {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => {
                                "*".to_string()
                            }
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => x(e, 0),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => String::new(),
                };
                let distinct = matches!(
                    &f.args,
                    ast::FunctionArguments::List(l)
                        if matches!(l.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct))
                );
                let fname = match name.as_str() {
                    "coalesce" | "greatest" | "least" | "nullif" => name.to_uppercase(),
                    _ => name.clone(),
                };
                let mut s = format!("{fname}({}{args})", if distinct { "DISTINCT " } else { "" });
                if let Some(ast::WindowType::WindowSpec(w)) = &f.over {
                    let mut parts = Vec::new();
                    if !w.partition_by.is_empty() {
                        let p: Vec<String> = w.partition_by.iter().map(|e| x(e, 0)).collect();
                        parts.push(format!("PARTITION BY {}", p.join(", ")));
                    }
                    if !w.order_by.is_empty() {
                        let o: Vec<String> = w
                            .order_by
                            .iter()
                            .map(|o| {
                                let mut t = x(&o.expr, 0);
                                if o.asc == Some(false) {
                                    t.push_str(" DESC");
                                }
                                t
                            })
                            .collect();
                        parts.push(format!("ORDER BY {}", o.join(", ")));
                    }
                    s.push_str(&format!(" OVER ({})", parts.join(" ")));
                }
                s
            }
            E::Case {
                operand,
                conditions,
                results,
                else_result,
            } => {
                let mut s = String::from("CASE");
                if let Some(o) = operand {
                    s.push_str(&format!(" {}", x(o, 0)));
                }
                for (c, r) in conditions.iter().zip(results) {
                    s.push_str(&format!(" WHEN {} THEN {}", x(c, 0), x(r, 0)));
                }
                if let Some(e) = else_result {
                    s.push_str(&format!(" ELSE {}", x(e, 0)));
                }
                s.push_str(" END");
                s
            }
            other => other.to_string(),
        }
    }
}

/// The type of a numeric literal: integer, bigint, or numeric.
fn number_type(n: &str) -> SqlType {
    if n.contains(['.', 'e', 'E']) {
        SqlType::NUMERIC
    } else if n.parse::<i32>().is_ok() {
        SqlType::Int4
    } else if n.parse::<i64>().is_ok() {
        SqlType::Int8
    } else {
        SqlType::NUMERIC
    }
}

/// An expression without its redundant parentheses.
fn strip_nested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => strip_nested(inner),
        other => other,
    }
}

/// The operands of a chain of one boolean operator, left to right, as
/// PostgreSQL's grammar builds its list: `a AND b AND c` (and `(a AND b)
/// AND c`) is one list of three; `a AND (b AND c)` keeps its right side.
fn flatten_bool<'e>(e: &'e ast::Expr, op: &ast::BinaryOperator, out: &mut Vec<&'e ast::Expr>) {
    match strip_nested(e) {
        ast::Expr::BinaryOp { left, op: o, right } if o == op => {
            flatten_bool(left, op, out);
            out.push(right);
        }
        other => out.push(other),
    }
}
