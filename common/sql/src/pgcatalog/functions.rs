//! The catalog functions tools call (`format_type`, `pg_get_indexdef`,
//! `pg_table_is_visible`, `pg_get_userbyid`, `to_regclass`, …) and the
//! text conversions of the OID alias types. Resolved by
//! `crate::functions::resolve_function` through [`resolve`] into
//! `Func::Catalog`; evaluated by [`call`] against the statement's
//! [`CatalogSnapshot`].
//!
//! Privileges are not modelled yet: the `has_*_privilege`
//! functions answer true, as they do for a superuser. Comments exist on
//! tables and columns (`obj_description`, `col_description`), and the
//! built-in functions and operators have PostgreSQL's descriptions
//! (`obj_description(oid, 'pg_proc')`, `obj_description(oid,
//! 'pg_operator')`); the other description functions
//! answer NULL. The function-describing functions
//! (`pg_get_function_arguments`, `pg_get_functiondef`, …) print
//! PostgreSQL's text, kept with each function's row (`proc.rs`).

use std::sync::Arc;

use pgtypes::array::array_value;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::{ArrayElem, RegKind, SqlType as T};
use pgtypes::value::Value;
use sqlparser::ast;

use engine::catalog::{IndexDef, TableDef};

use super::*;
use crate::functions::{EvalContext, Func, FuncSig};

/// A catalog function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CatFunc {
    /// format_type(oid, int4) → text
    FormatType,
    /// pg_get_userbyid(oid) → name
    GetUserById,
    /// pg_table_is_visible(oid) → bool
    TableIsVisible,
    /// pg_type_is_visible and the other *_is_visible(oid) → bool: true
    /// for everything that exists (all in pg_catalog or public).
    OtherIsVisible,
    /// pg_get_indexdef(oid [, int4, bool]) → text
    GetIndexDef,
    /// pg_get_constraintdef(oid [, bool]) → text
    GetConstraintDef,
    /// pg_get_expr(pg_node_tree, oid [, bool]) → text
    GetExpr,
    /// pg_get_viewdef(oid | text [, bool | int4]) → text
    GetViewDef,
    /// obj_description(oid [, catalog name]) → text: an object's comment.
    ObjDescription,
    /// col_description(oid, int4) → text: a column's comment.
    ColDescription,
    /// shobj_description(oid, name) → text: a role's or database's
    /// comment.
    ShobjDescription,
    /// pg_get_triggerdef(oid [, bool]) → text
    GetTriggerDef,
    /// Functions answering NULL: pg_get_statisticsobjdef_columns,
    /// pg_get_ruledef.
    Null,
    /// has_*_privilege / pg_has_role (`super::aclfuncs`).
    HasPrivilege(super::aclfuncs::PrivFn),
    /// pg_relation_is_publishable → false.
    False,
    /// pg_get_serial_sequence(table text, column text) → text: the
    /// sequence a serial or identity column owns, schema-qualified.
    GetSerialSequence,
    /// pg_partition_ancestors(regclass): the relation and its ancestors;
    /// hotpair has no partitions, so exactly the relation itself.
    PartitionAncestors,
    /// pg_encoding_to_char(int4) → name
    EncodingToChar,
    /// quote_ident(text) → text
    QuoteIdent,
    /// current_schemas(bool) → name[]
    CurrentSchemas,
    /// pg_indexes_size(regclass) → int8 (indexes are in memory: 0)
    IndexesSize,
    /// text → reg* (casts and literals)
    RegIn(RegKind),
    /// reg* → text
    RegOut(RegKind),
    /// to_regclass(text) etc.: like RegIn but NULL when nothing matches.
    ToReg(RegKind),
    /// pg_function_is_visible(oid) → bool (NULL for no such function).
    FunctionIsVisible,
    /// pg_blocking_pids(int4) → int4[].
    BlockingPids,
    /// pg_get_function_arg_default(oid, int4) → text.
    FunctionArgDefault,
    /// pg_get_function_arguments, pg_get_function_identity_arguments,
    /// pg_get_function_result, pg_get_functiondef,
    /// pg_get_function_sqlbody (oid) → text: PostgreSQL's text (`proc.rs`).
    FunctionText(FunctionText),
}

/// Which text of a function [`CatFunc::FunctionText`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionText {
    /// pg_get_function_arguments.
    Arguments,
    /// pg_get_function_identity_arguments.
    IdentityArguments,
    /// pg_get_function_result.
    Result,
    /// pg_get_functiondef (42809 for an aggregate).
    Definition,
    /// pg_get_function_sqlbody: NULL (no built-in has a SQL body).
    SqlBody,
}

/// Resolves `name(args)` if it is a catalog function.
pub fn resolve(name: &str, args: &[T]) -> Option<FuncSig> {
    let n = args.len();
    let s = |f: CatFunc, arg_types: &[T], ret: T| {
        Some(FuncSig {
            func: Func::Catalog(f),
            arg_types: arg_types.to_vec(),
            ret,
        })
    };
    // Any argument types (privilege checks take names or OIDs).
    let any = |f: CatFunc, ret: T| {
        Some(FuncSig {
            func: Func::Catalog(f),
            arg_types: args
                .iter()
                .map(|a| if *a == T::Unknown { T::Text } else { *a })
                .collect(),
            ret,
        })
    };
    match name {
        "format_type" if n == 2 => s(CatFunc::FormatType, &[T::Oid, T::Int4], T::Text),
        "pg_get_userbyid" if n == 1 => s(CatFunc::GetUserById, &[T::Oid], T::Name),
        "pg_blocking_pids" if n == 1 => {
            s(CatFunc::BlockingPids, &[T::Int4], T::Array(ArrayElem::Int4))
        }
        "pg_table_is_visible" if n == 1 => s(CatFunc::TableIsVisible, &[T::Oid], T::Bool),
        "pg_function_is_visible" if n == 1 => s(CatFunc::FunctionIsVisible, &[T::Oid], T::Bool),
        "pg_get_function_arg_default" if n == 2 => {
            s(CatFunc::FunctionArgDefault, &[T::Oid, T::Int4], T::Text)
        }
        "pg_get_function_arguments"
        | "pg_get_function_identity_arguments"
        | "pg_get_function_result"
        | "pg_get_functiondef"
        | "pg_get_function_sqlbody"
            if n == 1 =>
        {
            let which = match name {
                "pg_get_function_arguments" => FunctionText::Arguments,
                "pg_get_function_identity_arguments" => FunctionText::IdentityArguments,
                "pg_get_function_result" => FunctionText::Result,
                "pg_get_functiondef" => FunctionText::Definition,
                _ => FunctionText::SqlBody,
            };
            s(CatFunc::FunctionText(which), &[T::Oid], T::Text)
        }
        "pg_type_is_visible"
        | "pg_operator_is_visible"
        | "pg_opclass_is_visible"
        | "pg_opfamily_is_visible"
        | "pg_collation_is_visible"
        | "pg_conversion_is_visible"
        | "pg_statistics_obj_is_visible"
        | "pg_ts_parser_is_visible"
        | "pg_ts_dict_is_visible"
        | "pg_ts_template_is_visible"
        | "pg_ts_config_is_visible"
            if n == 1 =>
        {
            s(CatFunc::OtherIsVisible, &[T::Oid], T::Bool)
        }
        "pg_get_indexdef" if n == 1 => s(CatFunc::GetIndexDef, &[T::Oid], T::Text),
        "pg_get_indexdef" if n == 3 => {
            s(CatFunc::GetIndexDef, &[T::Oid, T::Int4, T::Bool], T::Text)
        }
        "pg_get_constraintdef" if n == 1 => s(CatFunc::GetConstraintDef, &[T::Oid], T::Text),
        "pg_get_constraintdef" if n == 2 => {
            s(CatFunc::GetConstraintDef, &[T::Oid, T::Bool], T::Text)
        }
        "pg_get_viewdef" if (1..=2).contains(&n) => any(CatFunc::GetViewDef, T::Text),
        "pg_get_expr" if n == 2 => s(CatFunc::GetExpr, &[T::Text, T::Oid], T::Text),
        "pg_get_expr" if n == 3 => s(CatFunc::GetExpr, &[T::Text, T::Oid, T::Bool], T::Text),
        "obj_description" if n == 1 => s(CatFunc::ObjDescription, &[T::Oid], T::Text),
        "obj_description" if n == 2 => s(CatFunc::ObjDescription, &[T::Oid, T::Name], T::Text),
        "col_description" if n == 2 => s(CatFunc::ColDescription, &[T::Oid, T::Int4], T::Text),
        "shobj_description" if n == 2 => s(CatFunc::ShobjDescription, &[T::Oid, T::Name], T::Text),
        "pg_get_triggerdef" if n == 1 => s(CatFunc::GetTriggerDef, &[T::Oid], T::Text),
        "pg_get_triggerdef" if n == 2 => s(CatFunc::GetTriggerDef, &[T::Oid, T::Bool], T::Text),
        "pg_get_statisticsobjdef_columns" | "pg_get_ruledef" if (1..=3).contains(&n) => {
            any(CatFunc::Null, T::Text)
        }
        f if super::aclfuncs::PrivFn::of(f, n).is_some() => match super::aclfuncs::PrivFn::of(f, n)
        {
            Some(p) => any(CatFunc::HasPrivilege(p), T::Bool),
            None => None,
        },
        "pg_get_serial_sequence" if n == 2 => {
            s(CatFunc::GetSerialSequence, &[T::Text, T::Text], T::Text)
        }
        "pg_partition_ancestors" if n == 1 => s(
            CatFunc::PartitionAncestors,
            &[T::Reg(RegKind::Class)],
            T::Reg(RegKind::Class),
        ),
        "pg_relation_is_publishable" if n == 1 => {
            s(CatFunc::False, &[T::Reg(RegKind::Class)], T::Bool)
        }
        "quote_ident" if n == 1 => s(CatFunc::QuoteIdent, &[T::Text], T::Text),
        "pg_encoding_to_char" if n == 1 => s(CatFunc::EncodingToChar, &[T::Int4], T::Name),
        "current_schemas" if n == 1 => s(
            CatFunc::CurrentSchemas,
            &[T::Bool],
            T::Array(ArrayElem::Name),
        ),
        "pg_indexes_size" if n == 1 => s(CatFunc::IndexesSize, &[T::Reg(RegKind::Class)], T::Int8),
        "to_regclass" if n == 1 => s(
            CatFunc::ToReg(RegKind::Class),
            &[T::Text],
            T::Reg(RegKind::Class),
        ),
        "to_regtype" if n == 1 => s(
            CatFunc::ToReg(RegKind::Type),
            &[T::Text],
            T::Reg(RegKind::Type),
        ),
        "to_regnamespace" if n == 1 => s(
            CatFunc::ToReg(RegKind::Namespace),
            &[T::Text],
            T::Reg(RegKind::Namespace),
        ),
        "to_regrole" if n == 1 => s(
            CatFunc::ToReg(RegKind::Role),
            &[T::Text],
            T::Reg(RegKind::Role),
        ),
        "to_regproc" if n == 1 => s(
            CatFunc::ToReg(RegKind::Proc),
            &[T::Text],
            T::Reg(RegKind::Proc),
        ),
        "to_regprocedure" if n == 1 => s(
            CatFunc::ToReg(RegKind::Procedure),
            &[T::Text],
            T::Reg(RegKind::Procedure),
        ),
        "to_regoper" if n == 1 => s(
            CatFunc::ToReg(RegKind::Oper),
            &[T::Text],
            T::Reg(RegKind::Oper),
        ),
        "to_regoperator" if n == 1 => s(
            CatFunc::ToReg(RegKind::Operator),
            &[T::Text],
            T::Reg(RegKind::Operator),
        ),
        _ => None,
    }
}

pub(super) fn snapshot(ctx: &dyn EvalContext) -> PgResult<Arc<CatalogSnapshot>> {
    ctx.pg_catalog()
        .ok_or_else(|| PgError::unsupported("the catalog is not available here"))
}

pub(super) fn oid_arg(v: &Value) -> Option<u32> {
    match v {
        Value::Oid(o) => Some(*o),
        Value::Int4(i) => Some(*i as u32),
        Value::Int8(i) => Some(*i as u32),
        _ => None,
    }
}

fn text(s: &str) -> Value {
    Value::text(s)
}

/// Evaluates a catalog function (NULL arguments handled here).
pub fn call(f: CatFunc, args: &[Value], ctx: &mut dyn EvalContext) -> PgResult<Value> {
    let first_null = args.first().is_none_or(Value::is_null);
    Ok(match f {
        CatFunc::Null => Value::Null,
        CatFunc::GetViewDef => {
            let s = snapshot(ctx)?;
            let rel = match args.first() {
                Some(Value::Text(name)) => {
                    let (schema, name) = split_qualified(name)?;
                    s.relation_by_name(schema.as_deref(), &name)
                }
                Some(v) => oid_arg(v).and_then(|o| s.relation(o)),
                None => None,
            };
            let pretty = matches!(args.get(1), Some(Value::Bool(true)) | Some(Value::Int4(_)));
            match rel {
                Some(RelRef::View(v)) => text(&super::ruleutils::view_definition(&s, v, pretty)),
                _ => Value::Null,
            }
        }
        CatFunc::HasPrivilege(p) => super::aclfuncs::call(p, args, ctx)?,
        CatFunc::False => Value::Bool(false),
        CatFunc::PartitionAncestors => args.first().cloned().unwrap_or(Value::Null),
        CatFunc::IndexesSize => {
            if first_null {
                Value::Null
            } else {
                Value::Int8(0)
            }
        }
        CatFunc::FormatType => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let typmod = match args.get(1) {
                    Some(Value::Int4(m)) => *m,
                    _ => -1,
                };
                text(&format_type(o, typmod))
            }
        },
        CatFunc::GetSerialSequence => {
            let (Some(Value::Text(table)), Some(Value::Text(column))) = (args.first(), args.get(1))
            else {
                return Ok(Value::Null);
            };
            let snap = snapshot(ctx)?;
            let (schema, name) = split_qualified(table)?;
            let t = match snap.relation_by_name(schema.as_deref(), &name) {
                Some(RelRef::Table(t)) => t.clone(),
                _ => return Err(engine::catalog::undefined_table(table)),
            };
            if t.column_index(column).is_none() {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!(
                        "column \"{column}\" of relation \"{}\" does not exist",
                        t.name
                    ),
                ));
            }
            let owned = snap.relations().into_iter().find_map(|r| match r {
                RelRef::Sequence(q)
                    if q.spec
                        .owned_by
                        .as_ref()
                        .is_some_and(|(ot, oc)| *ot == t.key() && oc.as_str() == &**column) =>
                {
                    Some((q.spec.namespace, q.spec.name.clone()))
                }
                _ => None,
            });
            match owned {
                Some((ns, q)) => text(&format!(
                    "{}.{}",
                    quote_ident(snap.namespace_name(ns).unwrap_or("")),
                    quote_ident(&q)
                )),
                None => Value::Null,
            }
        }
        CatFunc::FunctionIsVisible => match args.first().and_then(oid_arg) {
            Some(o) if super::proc::by_oid(o).is_some() => Value::Bool(true),
            Some(o) => {
                let s = snapshot(ctx)?;
                match s.function(o) {
                    Some(f) => Value::Bool(super::function_visible(&s, f)),
                    None => Value::Null,
                }
            }
            _ => Value::Null,
        },
        CatFunc::FunctionArgDefault => {
            let p = args.first().and_then(oid_arg).and_then(super::proc::by_oid);
            match (p, args.get(1)) {
                (Some(p), Some(Value::Int4(n))) => {
                    p.arg_default(*n).map(|d| text(&d)).unwrap_or(Value::Null)
                }
                _ => Value::Null,
            }
        }
        CatFunc::FunctionText(which) => {
            let oid = args.first().and_then(oid_arg);
            let Some(p) = oid.and_then(super::proc::by_oid) else {
                let snap = snapshot(ctx)?;
                let f = oid.and_then(|o| snap.function(o));
                return Ok(f
                    .and_then(|f| {
                        let schema = snap.namespace_name(f.namespace).unwrap_or("public");
                        super::proc::user_function_text(f, schema, which)
                    })
                    .map(|t| text(&t))
                    .unwrap_or(Value::Null));
            };
            let t = match which {
                FunctionText::Arguments => p.arguments(),
                FunctionText::IdentityArguments => p.identity_arguments(),
                FunctionText::Result => p.result(),
                FunctionText::SqlBody => None,
                FunctionText::Definition if p.kind == b'a' => {
                    return Err(PgError::new(
                        sqlstate::WRONG_OBJECT_TYPE,
                        format!("\"{}\" is an aggregate function", p.name),
                    ))
                }
                FunctionText::Definition => p.definition(),
            };
            t.map(text).unwrap_or(Value::Null)
        }
        CatFunc::ObjDescription | CatFunc::ColDescription | CatFunc::ShobjDescription => {
            let Some(o) = args.first().and_then(oid_arg) else {
                return Ok(Value::Null);
            };
            // A function's description: obj_description(oid, 'pg_proc'),
            // or obj_description(oid) for an OID no relation has; an
            // operator's: obj_description(oid, 'pg_operator').
            if f == CatFunc::ObjDescription {
                let class = match args.get(1) {
                    Some(Value::Text(c)) => Some(&**c),
                    _ => None,
                };
                if class == Some("pg_proc") || class.is_none() {
                    if let Some(d) = super::proc::by_oid(o).and_then(|p| p.description()) {
                        return Ok(text(d));
                    }
                }
                if class == Some("pg_operator") {
                    return Ok(super::operator::by_oid(o)
                        .and_then(|op| op.description())
                        .map(text)
                        .unwrap_or(Value::Null));
                }
            }
            let (sub, class) = match f {
                CatFunc::ColDescription => match args.get(1) {
                    Some(Value::Int4(n)) => (*n, Some(PG_CLASS)),
                    _ => return Ok(Value::Null),
                },
                CatFunc::ShobjDescription => match args.get(1) {
                    Some(Value::Text(c)) => match shared_catalog_oid(c) {
                        Some(k) => (0, Some(k)),
                        None => return Ok(Value::Null),
                    },
                    _ => return Ok(Value::Null),
                },
                _ => match args.get(1) {
                    Some(Value::Text(c)) => match local_catalog_oid(c) {
                        Some(k) => (0, Some(k)),
                        None => return Ok(Value::Null),
                    },
                    _ => (0, None),
                },
            };
            let snap = snapshot(ctx)?;
            snap.description(o, class, sub)
                .map(text)
                .unwrap_or(Value::Null)
        }
        CatFunc::QuoteIdent => match args.first() {
            Some(Value::Text(t)) => text(&quote_ident(t)),
            _ => Value::Null,
        },
        CatFunc::EncodingToChar => match args.first() {
            Some(Value::Int4(6)) => text("UTF8"),
            Some(Value::Int4(0)) => text("SQL_ASCII"),
            Some(Value::Null) | None => Value::Null,
            Some(_) => text(""),
        },
        CatFunc::CurrentSchemas => {
            if first_null {
                return Ok(Value::Null);
            }
            let implicit = matches!(args.first(), Some(Value::Bool(true)));
            let mut items = Vec::new();
            let snap = snapshot(ctx)?;
            let order = if implicit {
                snap.search_order()
            } else {
                snap.path.clone()
            };
            for ns in order {
                items.push(text(snap.namespace_name(ns).unwrap_or("")));
            }
            array_value(ArrayElem::Name, items)
        }
        CatFunc::BlockingPids => match args.first() {
            Some(Value::Int4(pid)) => array_value(
                ArrayElem::Int4,
                ctx.blocking_pids(*pid)
                    .into_iter()
                    .map(Value::Int4)
                    .collect(),
            ),
            _ => Value::Null,
        },
        CatFunc::GetUserById => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let s = snapshot(ctx)?;
                text(
                    &s.role_name(o)
                        .unwrap_or_else(|| format!("unknown (OID={o})")),
                )
            }
        },
        CatFunc::TableIsVisible => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let s = snapshot(ctx)?;
                match s.relation(o) {
                    None => Value::Null,
                    Some(r) => Value::Bool(
                        s.relation_by_name(None, r.name())
                            .is_some_and(|v| v.oid() == o),
                    ),
                }
            }
        },
        CatFunc::OtherIsVisible => {
            if first_null {
                Value::Null
            } else {
                Value::Bool(true)
            }
        }
        CatFunc::GetIndexDef => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let s = snapshot(ctx)?;
                let column = match args.get(1) {
                    Some(Value::Int4(c)) => *c,
                    _ => 0,
                };
                let pretty = matches!(args.get(2), Some(Value::Bool(true)));
                match s.relation(o) {
                    Some(RelRef::Index(t, ix)) if column == 0 => {
                        text(&index_def(&s, t, ix, pretty))
                    }
                    Some(RelRef::Index(t, ix)) => match crate::indexcmds::key_column_text(
                        t,
                        &ix.spec,
                        (column - 1).max(0) as usize,
                        pretty,
                    ) {
                        Some(c) => text(&c),
                        None => Value::Null,
                    },
                    _ => Value::Null,
                }
            }
        },
        CatFunc::GetTriggerDef => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let s = snapshot(ctx)?;
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                let found = s.relations().into_iter().find_map(|r| {
                    let t = r.trigger_rel()?;
                    t.triggers
                        .iter()
                        .find(|tg| tg.oid == o)
                        .map(|tg| super::ruleutils::trigger_definition(&s, t, tg, pretty))
                });
                found.map_or(Value::Null, |d| text(&d))
            }
        },
        CatFunc::GetConstraintDef => match oid_arg(args.first().unwrap_or(&Value::Null)) {
            None => Value::Null,
            Some(o) => {
                let s = snapshot(ctx)?;
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                match s.constraints().iter().find(|c| c.oid == o) {
                    Some(c) => text(&c.definition(&s, pretty)),
                    None => Value::Null,
                }
            }
        },
        CatFunc::GetExpr => match (args.first(), args.get(1).and_then(oid_arg)) {
            (Some(Value::Text(expr)), Some(_)) if index_node_tree(expr).is_some() => {
                let Some((pred, index)) = index_node_tree(expr) else {
                    return Ok(Value::Null);
                };
                let pretty = matches!(args.get(2), Some(Value::Bool(true)));
                let s = snapshot(ctx)?;
                match s.relation(index) {
                    Some(RelRef::Index(t, ix)) => {
                        let v = if pred {
                            crate::indexcmds::predicate_text(t, &ix.spec, pretty)
                        } else {
                            crate::indexcmds::exprs_text(t, &ix.spec, pretty)
                        };
                        v.map(|v| text(&v)).unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                }
            }
            (Some(Value::Text(expr)), Some(rel)) => {
                let s = snapshot(ctx)?;
                // The only expressions kept are column DEFAULTs: find the
                // column for its type.
                let ty = s
                    .tables
                    .iter()
                    .find(|t| t.oid == rel)
                    .and_then(|t| {
                        t.columns
                            .iter()
                            .find(|c| c.default.as_deref() == Some(&**expr))
                            .map(|c| c.ty)
                    })
                    .unwrap_or(T::Text);
                text(&deparse_default(expr, ty, Some(&s)))
            }
            _ => Value::Null,
        },
        CatFunc::RegIn(kind) => match args.first() {
            Some(Value::Text(t)) => {
                let s = snapshot(ctx)?;
                Value::Oid(reg_in(&s, kind, t)?)
            }
            Some(v) if !v.is_null() => Value::Oid(oid_arg(v).unwrap_or(0)),
            _ => Value::Null,
        },
        CatFunc::ToReg(kind) => match args.first() {
            Some(Value::Text(t)) => {
                let s = snapshot(ctx)?;
                match reg_in(&s, kind, t) {
                    Ok(o) => Value::Oid(o),
                    Err(e) if e.code == sqlstate::INVALID_TEXT_REPRESENTATION => return Err(e),
                    // to_regprocedure('f(nosuchtype)'): PostgreSQL 15
                    // reports the type; to_regoperator a missing or
                    // extra argument too.
                    Err(e)
                        if matches!(kind, RegKind::Procedure | RegKind::Operator)
                            && e.code == sqlstate::UNDEFINED_OBJECT =>
                    {
                        return Err(e)
                    }
                    Err(e) if kind == RegKind::Operator && matches!(e.code, "42P02" | "54023") => {
                        return Err(e)
                    }
                    Err(_) => Value::Null,
                }
            }
            _ => Value::Null,
        },
        CatFunc::RegOut(kind) => match args.first().and_then(oid_arg) {
            Some(o) => {
                let s = snapshot(ctx)?;
                text(&reg_out(&s, kind, o))
            }
            None => Value::Null,
        },
    })
}

/// format_type: PostgreSQL's display name of a type with its modifier.
pub fn format_type(oid: u32, typmod: i32) -> String {
    if let Some(t) = T::from_oid_typmod(oid, typmod) {
        if t.oid() == oid && typmod >= 0 {
            return t.pg_name();
        }
    }
    match type_row(oid) {
        Some(t) => t.display.to_string(),
        None => "???".to_string(),
    }
}

/// pg_index.indexprs / indpred of an index: hotpair keeps no node trees,
/// so these name the index (`{INDEXPRS :indexrelid 16390}`) and
/// `pg_get_expr` prints its expressions or predicate from the catalog.
pub fn index_node_tree_text(pred: bool, index: u32) -> String {
    if pred {
        format!("{{INDPRED :indexrelid {index}}}")
    } else {
        format!("{{INDEXPRS :indexrelid {index}}}")
    }
}

/// (is a predicate, index oid) of an [`index_node_tree_text`].
fn index_node_tree(s: &str) -> Option<(bool, u32)> {
    let (pred, rest) = if let Some(r) = s.strip_prefix("{INDPRED :indexrelid ") {
        (true, r)
    } else {
        (false, s.strip_prefix("{INDEXPRS :indexrelid ")?)
    };
    Some((pred, rest.strip_suffix('}')?.parse().ok()?))
}

/// `CREATE [UNIQUE] INDEX name ON schema.t USING btree (a, lower(b) DESC)
/// [WHERE (pred)]` (pretty: the operators' own parentheses left out, as
/// psql's `\d` shows it).
pub fn index_def(snap: &CatalogSnapshot, t: &TableDef, ix: &IndexDef, pretty: bool) -> String {
    let keys = crate::indexcmds::key_texts(t, &ix.spec, pretty);
    let keys: Vec<String> = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            let o = ix.spec.options.get(i).copied().unwrap_or(0);
            let desc = o & 1 != 0;
            let nulls_first = o & 2 != 0;
            let mut k = k;
            if desc {
                k.push_str(" DESC");
                if !nulls_first {
                    k.push_str(" NULLS LAST");
                }
            } else if nulls_first {
                k.push_str(" NULLS FIRST");
            }
            k
        })
        .collect();
    let mut out = format!(
        "CREATE {}INDEX {} ON {}.{} USING btree ({})",
        if ix.spec.unique { "UNIQUE " } else { "" },
        quote_ident(&ix.spec.name),
        quote_ident(snap.namespace_name(t.namespace).unwrap_or("")),
        quote_ident(&t.name),
        keys.join(", ")
    );
    if let Some(p) = crate::indexcmds::predicate_text(t, &ix.spec, pretty) {
        out.push_str(&format!(" WHERE {p}"));
    }
    out
}

/// A column DEFAULT as PostgreSQL's `pg_get_expr` prints it: constants
/// with their type (`'x'::text`, `'-1'::integer`), unsigned numbers bare,
/// calls as written. Falls back to the stored text.
///
/// With the statement's catalog snapshot, a sequence named in `nextval`
/// prints as a `regclass` does: bare when the search path finds it,
/// qualified otherwise.
pub fn deparse_default(text: &str, ty: T, snap: Option<&CatalogSnapshot>) -> String {
    match crate::parser::parse_expr_text(text) {
        Ok(e) => deparse(&e, ty, snap),
        Err(_) => text.to_string(),
    }
}

fn literal_type(n: &str) -> &'static str {
    if n.contains(['.', 'e', 'E']) {
        "numeric"
    } else if n.parse::<i32>().is_ok() {
        "integer"
    } else if n.parse::<i64>().is_ok() {
        "bigint"
    } else {
        "numeric"
    }
}

fn deparse(e: &ast::Expr, ty: T, snap: Option<&CatalogSnapshot>) -> String {
    use ast::{Expr as E, Value as V};
    match e {
        E::Value(V::Number(n, _)) => n.clone(),
        E::Value(V::SingleQuotedString(s)) => {
            let shown = pgtypes::value::Value::from_text(ty, s)
                .map(|v| v.to_text_string())
                .unwrap_or_else(|_| s.clone());
            // The constant's type without its modifier (`'abc'::bpchar`).
            let label = match ty {
                T::Char(_) => T::Char(0),
                t => t.base(),
            };
            format!("'{}'::{}", shown.replace('\'', "''"), label.pg_base_name())
        }
        E::Value(V::Boolean(b)) => b.to_string(),
        E::Value(V::Null) => "NULL".to_string(),
        E::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match &**expr {
            E::Value(V::Number(n, _)) => format!("'-{n}'::{}", literal_type(n)),
            other => format!("(- {})", deparse(other, ty, snap)),
        },
        E::Nested(inner) => deparse(inner, ty, snap),
        E::Function(f) => {
            let name = f.name.to_string().to_lowercase();
            match name.as_str() {
                "current_timestamp" | "current_date" | "current_time" | "localtimestamp"
                | "localtime" | "current_user" | "session_user" | "current_role"
                    if matches!(f.args, ast::FunctionArguments::None) =>
                {
                    name.to_uppercase()
                }
                // A sequence's name argument is a regclass.
                "nextval" => match &f.args {
                    ast::FunctionArguments::List(l) => match l.args.as_slice() {
                        // `'s'` or `'s'::regclass`.
                        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))]
                            if string_literal(arg).is_some() =>
                        {
                            let seq = string_literal(arg).unwrap_or_default();
                            let shown = snap
                                .and_then(|s| {
                                    let oid = reg_in(s, RegKind::Class, seq).ok()?;
                                    Some(reg_out(s, RegKind::Class, oid))
                                })
                                .unwrap_or_else(|| seq.to_string());
                            format!("nextval('{}'::regclass)", shown.replace('\'', "''"))
                        }
                        _ => e.to_string(),
                    },
                    _ => e.to_string(),
                },
                _ => e.to_string(),
            }
        }
        other => other.to_string(),
    }
}

/// The text of a string literal, through casts (`'s'::regclass`).
fn string_literal(e: &ast::Expr) -> Option<&str> {
    match e {
        ast::Expr::Value(ast::Value::SingleQuotedString(s)) => Some(s),
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => string_literal(expr),
        _ => None,
    }
}

/// A CHECK expression of a table with `columns` as `pg_get_constraintdef`
/// prints its inside (see [`super::ruleutils::check_text`]).
pub fn deparse_check(text: &str, columns: &[engine::catalog::ColumnDef], pretty: bool) -> String {
    let cols: Vec<(String, T)> = columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
    match crate::parser::parse_expr_text(text) {
        Ok(e) => super::ruleutils::check_text(&e, &cols, pretty),
        Err(_) => text.to_string(),
    }
}

/// PostgreSQL's keywords that `quote_ident` quotes (every category but
/// the unreserved one).
pub fn is_reserved_keyword(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "all",
        "analyse",
        "analyze",
        "and",
        "any",
        "array",
        "as",
        "asc",
        "asymmetric",
        "authorization",
        "between",
        "bigint",
        "binary",
        "bit",
        "boolean",
        "both",
        "case",
        "cast",
        "char",
        "character",
        "check",
        "coalesce",
        "collate",
        "collation",
        "column",
        "concurrently",
        "constraint",
        "create",
        "cross",
        "current_catalog",
        "current_date",
        "current_role",
        "current_schema",
        "current_time",
        "current_timestamp",
        "current_user",
        "dec",
        "decimal",
        "default",
        "deferrable",
        "desc",
        "distinct",
        "do",
        "else",
        "end",
        "except",
        "exists",
        "extract",
        "false",
        "fetch",
        "float",
        "for",
        "foreign",
        "freeze",
        "from",
        "full",
        "grant",
        "greatest",
        "group",
        "grouping",
        "having",
        "ilike",
        "in",
        "initially",
        "inner",
        "inout",
        "int",
        "integer",
        "intersect",
        "interval",
        "into",
        "is",
        "isnull",
        "join",
        "lateral",
        "leading",
        "least",
        "left",
        "like",
        "limit",
        "localtime",
        "localtimestamp",
        "national",
        "natural",
        "nchar",
        "none",
        "normalize",
        "not",
        "notnull",
        "null",
        "nullif",
        "numeric",
        "offset",
        "on",
        "only",
        "or",
        "order",
        "out",
        "outer",
        "overlaps",
        "overlay",
        "placing",
        "position",
        "precision",
        "primary",
        "real",
        "references",
        "returning",
        "right",
        "row",
        "select",
        "session_user",
        "setof",
        "similar",
        "smallint",
        "some",
        "substring",
        "symmetric",
        "table",
        "tablesample",
        "then",
        "time",
        "timestamp",
        "to",
        "trailing",
        "treat",
        "trim",
        "true",
        "union",
        "unique",
        "user",
        "using",
        "values",
        "varchar",
        "variadic",
        "verbose",
        "when",
        "where",
        "window",
        "with",
        "xmlattributes",
        "xmlconcat",
        "xmlelement",
        "xmlexists",
        "xmlforest",
        "xmlnamespaces",
        "xmlparse",
        "xmlpi",
        "xmlroot",
        "xmlserialize",
        "xmltable",
    ];
    WORDS.binary_search(&s).is_ok()
}

/// pg_class's OID (col_description's catalog).
const PG_CLASS: u32 = engine::comment::PG_CLASS;

/// The OID of a catalog obj_description names (pg_description's).
fn local_catalog_oid(name: &str) -> Option<u32> {
    use engine::comment as c;
    Some(match name {
        "pg_class" => c::PG_CLASS,
        "pg_namespace" => c::PG_NAMESPACE,
        "pg_type" => c::PG_TYPE,
        "pg_constraint" => c::PG_CONSTRAINT,
        _ => return None,
    })
}

/// The OID of a shared catalog shobj_description names.
fn shared_catalog_oid(name: &str) -> Option<u32> {
    use engine::comment as c;
    Some(match name {
        "pg_authid" => c::PG_AUTHID,
        "pg_database" => c::PG_DATABASE,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_found() {
        assert!(is_reserved_keyword("all"));
        assert!(is_reserved_keyword("xmltable"));
        assert!(is_reserved_keyword("select"));
        assert!(is_reserved_keyword("user"));
        assert!(!is_reserved_keyword("accounts"));
    }

    #[test]
    fn defaults_deparse_like_postgres() {
        assert_eq!(deparse_default("0", T::NUMERIC, None), "0");
        assert_eq!(deparse_default("-1", T::Int4, None), "'-1'::integer");
        assert_eq!(deparse_default("'x'", T::Text, None), "'x'::text");
        assert_eq!(
            deparse_default("'x'", T::Varchar(Some(3)), None),
            "'x'::character varying"
        );
        assert_eq!(deparse_default("now()", T::TimestampTz, None), "now()");
        assert_eq!(
            deparse_default("current_timestamp", T::TimestampTz, None),
            "CURRENT_TIMESTAMP"
        );
    }

    #[test]
    fn format_type_matches_postgres() {
        assert_eq!(format_type(23, -1), "integer");
        assert_eq!(format_type(1043, 24), "character varying(20)");
        assert_eq!(format_type(1700, (12 << 16 | 2) + 4), "numeric(12,2)");
        assert_eq!(format_type(1184, -1), "timestamp with time zone");
        assert_eq!(format_type(1007, -1), "integer[]");
        assert_eq!(format_type(18, -1), "\"char\"");
    }
}
