//! CREATE [OR REPLACE] FUNCTION / PROCEDURE and DROP FUNCTION / PROCEDURE
//! (PostgreSQL's `commands/functioncmds.c`).
//!
//! A function is a catalog object ([`engine::pg_proc`]): CREATE checks the
//! definition, compiles a PL/pgSQL body (a syntax error is 42601 at CREATE,
//! as PostgreSQL's validator reports it) or parses a LANGUAGE sql body, and
//! applies a `CreateFunction` change, WAL-logged so a standby can run the
//! function after replay. Transactions work as for enum types
//! (`crate::typecmds`): the change happens at once and
//! [`PendingDdl::CreateFunction`], [`PendingDdl::ReplaceFunction`] and
//! [`PendingDdl::DropFunction`] say how to undo it at ROLLBACK (or ROLLBACK
//! TO SAVEPOINT). A function another transaction created is invisible to
//! calls until that transaction commits (`CatalogView::functions`).
//!
//! OUT / INOUT parameters and RETURNS TABLE (…) make the function's
//! output columns (`FunctionSpec::out`, proargmodes in `modes`); with
//! several the result type is record. `RETURNS trigger` functions are made
//! here and fired by `crate::trigger`.
//!
//! SECURITY DEFINER and SET clauses are kept in the definition
//! (`prosecdef`, `proconfig` as `name=value` texts, a later clause for the
//! same setting replacing the earlier one as PostgreSQL's `GUCArrayAdd`
//! does); `crate::fmgr` applies them around each call. SET … FROM
//! CURRENT is turned into the session's value before the statement runs
//! ([`resolve_from_current`]).
//!
//! Not supported (0A000): VARIADIC parameters, OUT parameters of
//! procedures, languages other than sql and plpgsql.

use crate::ddl::{DdlCtx, PendingDdl};
use crate::parser::funcstmt::{
    AlterFunction, ArgMode, CreateFunction, FuncRef, FuncSet, FuncStmt, Returns,
};
use engine::catalog::CatalogChange;
use engine::pg_proc::{FunctionArg, FunctionSpec, LANG_PLPGSQL, LANG_SQL};
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::TransactionId;

fn definition_error(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_FUNCTION_DEFINITION, msg)
}

/// A parameter or result type as written.
fn type_of(text: &str) -> PgResult<SqlType> {
    match text.trim().to_ascii_lowercase().as_str() {
        "void" => Ok(SqlType::Void),
        "trigger" => Ok(SqlType::Trigger),
        "event_trigger" => Err(PgError::unsupported(
            "event trigger functions are not supported",
        )),
        "record" => Err(PgError::unsupported(
            "functions returning record are not supported",
        )),
        _ => crate::parser::parse_type_text(text),
    }
}

/// The result type OUT parameters make: the one's type, or record.
fn out_result(outs: &[(String, SqlType)]) -> SqlType {
    match outs {
        [(_, t)] => *t,
        _ => SqlType::Record,
    }
}

/// The language's pg_language OID.
pub fn language_oid(name: &str) -> PgResult<u32> {
    match name {
        "sql" => Ok(LANG_SQL),
        "plpgsql" => Ok(LANG_PLPGSQL),
        _ => Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("language \"{name}\" does not exist"),
        )),
    }
}

/// Runs CREATE / DROP FUNCTION or PROCEDURE.
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &FuncStmt) -> PgResult<String> {
    match stmt {
        FuncStmt::Create(c) => create(cx, c)?,
        FuncStmt::Drop {
            procedure,
            if_exists,
            items,
            cascade,
        } => {
            for item in items {
                drop_one(cx, *procedure, *if_exists, *cascade, item)?;
            }
        }
        FuncStmt::Alter {
            procedure,
            item,
            action,
        } => alter(cx, *procedure, item, action)?,
        FuncStmt::Do { .. } | FuncStmt::Call { .. } => {
            return Err(PgError::internal("DO / CALL are not DDL"))
        }
    }
    Ok(stmt.tag().to_string())
}

fn create(cx: &mut DdlCtx<'_>, c: &CreateFunction) -> PgResult<()> {
    let Some(language) = &c.language else {
        return Err(definition_error("no language specified"));
    };
    let lang = language_oid(language)?;
    let Some(body) = &c.body else {
        return Err(definition_error("no function body specified"));
    };
    let mut args = Vec::with_capacity(c.args.len());
    let mut outs: Vec<(String, SqlType)> = Vec::new();
    let mut modes = Vec::with_capacity(c.args.len());
    let mut seen_default = false;
    let mut seen_variadic = false;
    for a in &c.args {
        if matches!(a.mode, ArgMode::In | ArgMode::InOut) && seen_variadic {
            return Err(definition_error(
                "VARIADIC parameter must be the last input parameter",
            ));
        }
        // OUT after VARIADIC or after a default would be ambiguous in a
        // CALL, which passes OUT arguments too.
        if matches!(a.mode, ArgMode::Out | ArgMode::InOut) && c.procedure && seen_variadic {
            return Err(definition_error(
                "VARIADIC parameter must be the last parameter",
            ));
        }
        if a.mode == ArgMode::Out && c.procedure && seen_default {
            return Err(definition_error(
                "procedure OUT parameters cannot appear after one with a default value",
            ));
        }
        modes.push(match a.mode {
            ArgMode::In => b'i',
            ArgMode::Out => b'o',
            ArgMode::InOut => b'b',
            ArgMode::Variadic => b'v',
        });
        let ty = type_of(&a.ty)?;
        if a.mode == ArgMode::Variadic {
            if ty.elem().is_none() {
                return Err(definition_error("VARIADIC parameter must be an array"));
            }
            seen_variadic = true;
        }
        if ty == SqlType::Trigger {
            return Err(PgError::unsupported(format!(
                "{} functions cannot accept type trigger",
                if lang == LANG_SQL { "SQL" } else { "PL/pgSQL" }
            )));
        }
        if matches!(a.mode, ArgMode::Out | ArgMode::InOut) {
            outs.push((a.name.clone().unwrap_or_default(), ty));
        }
        if a.mode == ArgMode::Out {
            if a.default.is_some() {
                return Err(definition_error(
                    "only input parameters can have default values",
                ));
            }
            continue;
        }
        if ty == SqlType::Void {
            return Err(definition_error(format!(
                "{} functions cannot accept type void",
                if lang == LANG_SQL { "SQL" } else { "PL/pgSQL" }
            )));
        }
        if a.default.is_some() {
            seen_default = true;
        } else if seen_default {
            return Err(definition_error(
                "input parameters after one with a default value must also have defaults",
            ));
        }
        let name = a.name.clone().unwrap_or_default();
        if !name.is_empty() && args.iter().any(|x: &FunctionArg| x.name == name) {
            return Err(definition_error(format!(
                "parameter name \"{name}\" used more than once"
            )));
        }
        args.push(FunctionArg {
            name,
            ty,
            default: a.default.clone(),
        });
    }
    let (ret, retset, out) = match (&c.returns, c.procedure) {
        (Some(_), true) => return Err(definition_error("procedures cannot have a RETURNS clause")),
        // A procedure with output parameters returns one record of them.
        (None, true) if outs.is_empty() => (SqlType::Void, false, Vec::new()),
        (None, true) => (SqlType::Record, false, outs.clone()),
        (None, false) if outs.is_empty() => {
            return Err(definition_error("function result type must be specified"))
        }
        (None, false) => (out_result(&outs), false, outs.clone()),
        (Some(Returns::Type { setof, ty }), false) if !outs.is_empty() => {
            let want = out_result(&outs);
            let given = if ty.trim().eq_ignore_ascii_case("record") {
                SqlType::Record
            } else {
                type_of(ty)?
            };
            if given != want {
                return Err(definition_error(format!(
                    "function result type must be {} because of OUT parameters",
                    want.pg_name()
                )));
            }
            (want, *setof, outs.clone())
        }
        (Some(Returns::Type { setof, ty }), false) => (type_of(ty)?, *setof, Vec::new()),
        (Some(Returns::Table(cols)), false) => {
            let mut out = Vec::with_capacity(cols.len());
            for (n, t) in cols {
                out.push((n.clone(), type_of(t)?));
                modes.push(b't');
            }
            let ret = match out.as_slice() {
                [(_, t)] => *t,
                _ => SqlType::Record,
            };
            (ret, true, out)
        }
    };
    if ret == SqlType::Trigger && (lang == LANG_SQL || retset) {
        return Err(PgError::new(
            sqlstate::INVALID_FUNCTION_DEFINITION,
            "SQL functions cannot return type trigger",
        ));
    }
    let db = cx.db;
    let user = crate::privileges::AclUser::of(db, cx.user);
    let owner = user.oid;
    let namespace = {
        let cv = cx.catalog();
        let q = crate::namespace::QualName {
            schema: c.schema.clone(),
            name: c.name.clone(),
        };
        let ns = crate::namespace::creation_namespace(&cv, &q)?;
        if !user.superuser {
            crate::privileges::check_create_in(&cv, &user, ns)?;
        }
        ns
    };
    let mut spec = FunctionSpec {
        oid: 0,
        name: c.name.clone(),
        namespace,
        owner,
        kind: if c.procedure { b'p' } else { b'f' },
        lang,
        volatility: c.volatility.unwrap_or(b'v'),
        strict: c.strict.unwrap_or(false),
        retset,
        ret,
        args,
        out,
        modes: if modes.iter().all(|m| *m == b'i') {
            Vec::new()
        } else {
            modes
        },
        body: body.clone(),
        secdef: c.security_definer,
        config: apply_config(Vec::new(), &c.config)?,
        creator: TransactionId::INVALID,
    };
    // The body must parse (PostgreSQL validates at CREATE).
    if lang == LANG_PLPGSQL {
        crate::plpgsql::validate(&spec)?;
    } else {
        for s in crate::parser::split_statements(body) {
            crate::parser::parse_one(s)?;
        }
    }
    let types = spec.arg_types();
    let existing = db.catalog().functions().into_iter().find(|f| {
        f.spec.name == spec.name
            && f.spec.namespace == spec.namespace
            && f.spec.arg_types() == types
    });
    match existing {
        Some(old) if !c.or_replace => {
            let _ = old;
            Err(PgError::new(
                sqlstate::DUPLICATE_FUNCTION,
                format!(
                    "{} \"{}\" already exists with same argument types",
                    if c.procedure { "procedure" } else { "function" },
                    spec.name
                ),
            ))
        }
        Some(old) => {
            let before = old.current_spec();
            if before.kind != spec.kind {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    "cannot change routine kind",
                )
                .with_detail(format!(
                    "\"{}\" is a {}.",
                    spec.name,
                    if before.kind == b'p' {
                        "procedure"
                    } else {
                        "function"
                    }
                )));
            }
            if before.ret != spec.ret || before.retset != spec.retset {
                return Err(
                    definition_error("cannot change return type of existing function")
                        .with_hint(format!("Use DROP FUNCTION {} first.", before.signature())),
                );
            }
            let u = crate::privileges::AclUser::of(db, cx.user);
            if !u.superuser && !u.has_privs_of(before.owner) {
                return Err(crate::privileges::not_owner(
                    if c.procedure { "procedure" } else { "function" },
                    &spec.name,
                ));
            }
            cx.xact.assign_xid()?;
            spec.oid = before.oid;
            spec.owner = before.owner;
            db.catalog()
                .apply_catalog_change(&CatalogChange::CreateFunction(spec))?;
            cx.pending
                .push(PendingDdl::ReplaceFunction(Box::new(before)));
            Ok(())
        }
        None => {
            spec.oid = db.catalog().allocate_oid();
            spec.creator = cx.xact.assign_xid()?;
            let oid = spec.oid;
            db.catalog()
                .apply_catalog_change(&CatalogChange::CreateFunction(spec))?;
            cx.pending.push(PendingDdl::CreateFunction(oid));
            Ok(())
        }
    }
}

fn drop_one(
    cx: &mut DdlCtx<'_>,
    procedure: bool,
    if_exists: bool,
    cascade: bool,
    item: &FuncRef,
) -> PgResult<()> {
    let what = if procedure { "procedure" } else { "function" };
    let Some(spec) = find_ref(&cx.catalog(), what, item)? else {
        if if_exists {
            cx.notices.push(PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("{what} {} does not exist, skipping", shown_ref(item)?),
            ));
            return Ok(());
        }
        return Err(not_found(what, item)?);
    };
    let u = crate::privileges::AclUser::of(cx.db, cx.user);
    if !u.superuser && !u.has_privs_of(spec.owner) {
        return Err(crate::privileges::not_owner(what, &spec.name));
    }
    let gone = drop_function(cx, spec, cascade)?;
    if !gone.is_empty() {
        cx.notices.push(crate::ddl::cascade_notice(&gone));
    }
    Ok(())
}

/// Drops function `spec` (DROP FUNCTION, or its schema's DROP …
/// CASCADE): the triggers using it with `cascade` (else 2BP01 while
/// any does), its privileges, its pg_proc row — undone at ROLLBACK.
/// Returns the triggers that went (for the caller's NOTICE).
pub(crate) fn drop_function(
    cx: &mut DdlCtx<'_>,
    spec: FunctionSpec,
    cascade: bool,
) -> PgResult<Vec<String>> {
    let gone = if cascade {
        crate::trigger::drop_function_triggers(cx, spec.oid)?
    } else {
        crate::trigger::check_function_unused(cx, spec.oid, &spec.signature())?;
        Vec::new()
    };
    cx.xact.assign_xid()?;
    crate::aclchk::drop_privileges(
        cx,
        engine::comment::CommentKey::object(engine::comment::PG_PROC, spec.oid),
    )?;
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::DropFunction { oid: spec.oid })?;
    cx.pending.push(PendingDdl::DropFunction(Box::new(spec)));
    Ok(gone)
}

/// ALTER FUNCTION | PROCEDURE | ROUTINE: the changed definition replaces
/// the old one under the same OID, WAL-logged and undone at ROLLBACK as
/// CREATE OR REPLACE is.
fn alter(
    cx: &mut DdlCtx<'_>,
    procedure: Option<bool>,
    item: &FuncRef,
    action: &AlterFunction,
) -> PgResult<()> {
    let what = match procedure {
        Some(true) => "procedure",
        Some(false) => "function",
        None => "routine",
    };
    let before = lookup_ref(&cx.catalog(), what, item)?;
    let kind = if before.kind == b'p' {
        "procedure"
    } else {
        "function"
    };
    let u = crate::privileges::AclUser::of(cx.db, cx.user);
    if !u.superuser && !u.has_privs_of(before.owner) {
        return Err(crate::privileges::not_owner(kind, &before.name));
    }
    let mut spec = before.clone();
    match action {
        AlterFunction::Rename(new) => {
            check_free(cx, &before, new, before.namespace, kind)?;
            spec.name = new.clone();
        }
        AlterFunction::SetSchema(schema) => {
            let cv = cx.catalog();
            let ns = cv
                .schema_oid(schema)
                .ok_or_else(|| engine::catalog::undefined_schema(schema))?;
            if !u.superuser {
                crate::privileges::check_create_in(&cv, &u, ns)?;
            }
            check_free(cx, &before, &before.name, ns, kind)?;
            spec.namespace = ns;
        }
        AlterFunction::Owner(role) => {
            let Some(r) = cx.db.catalog().role(role) else {
                return Err(engine::catalog::undefined_role(role));
            };
            if !u.superuser && !u.has_privs_of(r.oid) {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    format!("must be member of role \"{role}\""),
                ));
            }
            spec.owner = r.oid;
        }
        AlterFunction::Options {
            volatility,
            strict,
            security,
            config,
        } => {
            if let Some(v) = volatility {
                spec.volatility = *v;
            }
            if let Some(s) = strict {
                spec.strict = *s;
            }
            if let Some(s) = security {
                spec.secdef = *s;
            }
            spec.config = apply_config(std::mem::take(&mut spec.config), config)?;
        }
    }
    if spec == before {
        return Ok(());
    }
    cx.xact.assign_xid()?;
    let (oid, old_owner, new_owner) = (spec.oid, before.owner, spec.owner);
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateFunction(spec))?;
    cx.pending
        .push(PendingDdl::ReplaceFunction(Box::new(before)));
    if old_owner != new_owner {
        // aclnewowner: the old owner's items in an explicit list become
        // the new owner's (a default list follows the owner by itself).
        let key = engine::comment::CommentKey::object(engine::comment::PG_PROC, oid);
        if let Some(acl) = cx.catalog().privileges(&key).and_then(|e| e.acl) {
            let acl = crate::aclchk::new_owner_acl(acl, old_owner, new_owner);
            crate::aclchk::set_privileges(
                cx,
                key,
                engine::acl::PrivEntry {
                    owner: 0,
                    acl: Some(acl),
                },
            )?;
        }
    }
    Ok(())
}

/// 42723 if schema `ns` already has a function `name` with the argument
/// types of `f` (RENAME, SET SCHEMA).
fn check_free(
    cx: &DdlCtx<'_>,
    f: &FunctionSpec,
    name: &str,
    ns: pgtypes::Oid,
    kind: &str,
) -> PgResult<()> {
    let types = f.arg_types();
    let clash = cx.catalog().functions().into_iter().any(|g| {
        g.spec.oid != f.oid
            && g.spec.name == name
            && g.spec.namespace == ns
            && g.spec.arg_types() == types
    });
    if !clash {
        return Ok(());
    }
    let schema = cx
        .catalog()
        .schema_name(ns)
        .unwrap_or_else(|| "public".into());
    Err(PgError::new(
        sqlstate::DUPLICATE_FUNCTION,
        format!(
            "{kind} {name}({}) already exists in schema \"{schema}\"",
            types
                .iter()
                .map(|t| t.pg_name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// The statement with each `SET name FROM CURRENT` replaced by the
/// session's value of the setting (`get`), as PostgreSQL's
/// `ExtractSetVariableArgs` reads it at CREATE / ALTER.
pub fn resolve_from_current(
    stmt: &FuncStmt,
    get: &dyn Fn(&str) -> Option<String>,
) -> PgResult<FuncStmt> {
    let resolve = |sets: &[FuncSet]| -> PgResult<Vec<FuncSet>> {
        sets.iter()
            .map(|s| match s {
                FuncSet::FromCurrent(name) => match get(name) {
                    Some(v) => Ok(FuncSet::Set(name.clone(), Some(v))),
                    None => Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    )),
                },
                s => Ok(s.clone()),
            })
            .collect()
    };
    let mut out = stmt.clone();
    match &mut out {
        FuncStmt::Create(c) => c.config = resolve(&c.config)?,
        FuncStmt::Alter {
            action: AlterFunction::Options { config, .. },
            ..
        } => *config = resolve(config)?,
        _ => {}
    }
    Ok(out)
}

/// proconfig after `sets` (PostgreSQL's `GUCArrayAdd` / `GUCArrayDelete`
/// / `GUCArrayReset`): each SET checked as SET would check it (an unknown
/// setting is 42704, a bad value 22023) and stored as `name=value` under
/// the setting's canonical name, replacing an earlier entry for it in place.
pub fn apply_config(mut config: Vec<String>, sets: &[FuncSet]) -> PgResult<Vec<String>> {
    let entry_name = |e: &str| e.split_once('=').map_or(e, |(n, _)| n).to_string();
    for s in sets {
        match s {
            FuncSet::Set(name, Some(value)) => {
                let mut scratch =
                    crate::utility::SessionSettings::new(&pgtypes::config::Config::new(""));
                let (canonical, _) = scratch.set(name, Some(value), false, false)?;
                let entry = format!("{canonical}={value}");
                match config.iter().position(|e| entry_name(e) == canonical) {
                    Some(i) => config[i] = entry,
                    None => config.push(entry),
                }
            }
            FuncSet::Set(name, None) | FuncSet::Reset(name) => {
                let canonical = crate::utility::canonical_name(name);
                config.retain(|e| entry_name(e) != canonical);
            }
            FuncSet::ResetAll => config.clear(),
            FuncSet::FromCurrent(name) => {
                return Err(PgError::internal(format!(
                    "SET {name} FROM CURRENT was not resolved"
                )))
            }
        }
    }
    Ok(config)
}

/// The function `item` names for a statement on a `what` (`function`,
/// `procedure`, `routine`): PostgreSQL's `LookupFuncWithArgs` errors
/// (42883, 42725 for an ambiguous name without arguments, 42809 for the
/// wrong kind).
pub(crate) fn lookup_ref(
    cv: &engine::catalog::CatalogView<'_>,
    what: &str,
    item: &FuncRef,
) -> PgResult<FunctionSpec> {
    match find_ref(cv, what, item)? {
        Some(spec) => Ok(spec),
        None => Err(not_found(what, item)?),
    }
}

/// The argument types `item` lists (None: no list).
fn ref_types(item: &FuncRef) -> PgResult<Option<Vec<SqlType>>> {
    match &item.args {
        Some(a) => Ok(Some(a.iter().map(|t| type_of(t)).collect::<PgResult<_>>()?)),
        None => Ok(None),
    }
}

/// `item` as messages show it: `[schema.]name[(types)]`.
fn shown_ref(item: &FuncRef) -> PgResult<String> {
    let name = crate::parse_func::qualified(item.schema.as_deref(), &item.name);
    Ok(match ref_types(item)? {
        Some(t) => format!(
            "{name}({})",
            t.iter().map(|t| t.pg_name()).collect::<Vec<_>>().join(", ")
        ),
        None => name,
    })
}

/// 42883 for a reference that matches nothing.
fn not_found(what: &str, item: &FuncRef) -> PgResult<PgError> {
    Ok(match item.args {
        Some(_) => PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("{what} {} does not exist", shown_ref(item)?),
        ),
        None => PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!(
                "could not find a {what} named \"{}\"",
                crate::parse_func::qualified(item.schema.as_deref(), &item.name)
            ),
        ),
    })
}

/// The function `item` names, None if none (PostgreSQL's
/// `LookupFuncWithArgs`): in its schema when qualified (3F000 if there is
/// no such schema), else in the first schema of the search path with a
/// match; 42725 for a name without arguments that several share, 42809
/// for the wrong kind.
fn find_ref(
    cv: &engine::catalog::CatalogView<'_>,
    what: &str,
    item: &FuncRef,
) -> PgResult<Option<FunctionSpec>> {
    let types = ref_types(item)?;
    let schemas: Vec<pgtypes::Oid> = match &item.schema {
        Some(s) => vec![cv
            .schema_oid(s)
            .ok_or_else(|| engine::catalog::undefined_schema(s))?],
        None => cv.path().to_vec(),
    };
    let all: Vec<_> = cv
        .functions()
        .into_iter()
        .filter(|f| f.spec.name == item.name)
        .filter(|f| types.as_ref().is_none_or(|t| f.spec.named_by_types(t)))
        .collect();
    let candidates: Vec<_> = schemas
        .iter()
        .map(|ns| {
            all.iter()
                .filter(|f| f.spec.namespace == *ns)
                .collect::<Vec<_>>()
        })
        .find(|c| !c.is_empty())
        .unwrap_or_default();
    let spec = match candidates.as_slice() {
        [f] => f.current_spec(),
        [] => return Ok(None),
        _ => {
            return Err(PgError::new(
                sqlstate::AMBIGUOUS_FUNCTION,
                format!("{what} name \"{}\" is not unique", item.name),
            )
            .with_hint(format!(
                "Specify the argument list to select the {what} unambiguously."
            )))
        }
    };
    let wrong = match what {
        "procedure" => spec.kind != b'p',
        "function" => spec.kind == b'p',
        _ => false,
    };
    if wrong {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("{} is not a {what}", spec.signature()),
        ));
    }
    Ok(Some(spec))
}

/// PendingDdl for functions: the transaction committed.
pub(crate) fn commit_pending(db: &Engine, p: &PendingDdl) {
    if let PendingDdl::CreateFunction(oid) = p {
        if let Some(f) = db.catalog().function(*oid) {
            f.creator.store(0, std::sync::atomic::Ordering::Release);
        }
    }
}

/// PendingDdl for functions: the (sub)transaction rolled back.
pub(crate) fn abort_pending(db: &Engine, p: PendingDdl) {
    let change = match p {
        PendingDdl::CreateFunction(oid) => {
            if db.catalog().function(oid).is_none() {
                return;
            }
            CatalogChange::DropFunction { oid }
        }
        PendingDdl::ReplaceFunction(before) => CatalogChange::CreateFunction(*before),
        PendingDdl::DropFunction(mut spec) => {
            if db.catalog().function(spec.oid).is_some() {
                return;
            }
            spec.creator = TransactionId::INVALID;
            CatalogChange::CreateFunction(*spec)
        }
        _ => return,
    };
    if let Err(e) = db.catalog().apply_catalog_change(&change) {
        tracing::warn!(
            "could not undo a function change after rollback: {}",
            e.message
        );
    }
}
