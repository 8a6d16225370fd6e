//! Schema DDL (PostgreSQL's schemacmds.c): CREATE / DROP / ALTER SCHEMA
//! and `ALTER TABLE | VIEW … SET SCHEMA`.
//!
//! A schema is a catalog object (`engine::namespace`); its relations name
//! it by OID. CREATE SCHEMA is transactional like CREATE TABLE: the
//! schema carries its creator's xid, other sessions do not see it until
//! that commits, and ROLLBACK removes it ([`PendingDdl::CreateSchema`]).
//! DROP SCHEMA is decided at COMMIT like DROP TABLE in a block: RESTRICT
//! refuses a schema that holds anything (2BP01, PostgreSQL's DETAIL);
//! CASCADE queues the drops of its tables, views and sequences, then the
//! schema's own ([`PendingDdl::DropSchema`]), so ROLLBACK keeps them all.
//!
//! `SET SCHEMA` moves a table (with its indexes and owned sequences: they
//! follow the table's schema) or a view: an ALTER of its definition with
//! a new namespace, transactional as every ALTER TABLE. ALTER SCHEMA …
//! RENAME TO / OWNER TO change the schema's row at once as a version
//! marked with the altering xid (`SchemaSpec::altered_by`): other
//! transactions see the row before it (under the old name), their ALTER /
//! DROP of the schema waits for it, ROLLBACK puts the row back
//! ([`PendingDdl::AlterSchema`]) and so does start-up after a crash.

use sqlparser::ast;

use crate::ddl::{DdlCtx, PendingDdl};
use crate::namespace::QualName;
pub use crate::parser::schemastmt::SchemaStmt;
use engine::catalog::{undefined_schema, CatalogChange};
use engine::namespace::{SchemaDef, SchemaSpec, BUILTIN_SCHEMAS};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{Oid, TransactionId};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Runs a [`SchemaStmt`].
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &SchemaStmt) -> PgResult<String> {
    match stmt {
        SchemaStmt::Rename { name, to } => {
            let def = schema_for_alter(cx, name)?;
            if cx.catalog().schema_oid(to).is_some() || cx.db.catalog().schema(to).is_some() {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_SCHEMA,
                    format!("schema \"{to}\" already exists"),
                ));
            }
            reserved_name(to)?;
            let mut spec = def.spec.unmarked();
            spec.name = to.clone();
            alter_schema(cx, &def, spec)?;
        }
        SchemaStmt::Owner { name, role } => {
            let def = schema_for_alter(cx, name)?;
            let mut spec = def.spec.unmarked();
            spec.owner = role_oid(cx, role)?;
            alter_schema(cx, &def, spec)?;
        }
        SchemaStmt::SetSchema {
            kind,
            if_exists,
            name,
            schema,
        } => {
            let q = QualName::parse_text(name)?;
            let view = cx.catalog();
            let ns = view
                .schema_oid(schema)
                .ok_or_else(|| undefined_schema(schema))?;
            let table = crate::namespace::find_table(&cx.catalog(), &q);
            let relview = crate::namespace::find_view(&cx.catalog(), &q);
            match (table, relview) {
                (Some(t), _) => crate::tablecmds::set_table_schema(cx, &t, ns, schema)?,
                (None, Some(v)) => crate::view::set_view_schema(cx, &v, ns, schema)?,
                (None, None) if *if_exists => cx.notices.push(PgError::notice(
                    sqlstate::UNDEFINED_TABLE,
                    format!("relation \"{}\" does not exist, skipping", q.display()),
                )),
                (None, None) => return Err(engine::catalog::undefined_table(&q.display())),
            }
            return Ok(format!("ALTER {kind}"));
        }
    }
    Ok(stmt.tag())
}

/// A schema users created, by name (a built-in one: 42501 as PostgreSQL
/// answers a non-owner; a missing one: 3F000), after waiting for another
/// transaction's uncommitted ALTER SCHEMA of it to end (PostgreSQL's
/// ALTER SCHEMA and DROP SCHEMA lock the schema): its current row.
fn user_schema(cx: &DdlCtx<'_>, name: &str) -> PgResult<SchemaSpec> {
    Ok(schema_for_alter(cx, name)?.current_spec())
}

/// The catalog entry of [`user_schema`].
fn schema_for_alter(cx: &DdlCtx<'_>, name: &str) -> PgResult<Arc<SchemaDef>> {
    if BUILTIN_SCHEMAS.iter().any(|s| s.1 == name) {
        return Err(PgError::new(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            format!("must be owner of schema {name}"),
        ));
    }
    loop {
        let oid = cx
            .catalog()
            .schema_oid(name)
            .ok_or_else(|| undefined_schema(name))?;
        let def = cx
            .db
            .catalog()
            .schema_by_oid(oid)
            .ok_or_else(|| undefined_schema(name))?;
        let x = TransactionId(def.altered_by.load(Ordering::Acquire));
        if !x.is_valid() || cx.xact.own().xids.binary_search(&x).is_ok() || committed(cx, x) {
            return Ok(def);
        }
        cx.xact.wait_for_xid(x, cx.cancel, cx.limits)?;
        // Ended without committing and its session did not undo it (it
        // went away): put the committed row back, as start-up would.
        // Its session may be undoing it at the same moment: whichever
        // comes second finds the row already back and changes nothing.
        if def.altered_by.load(Ordering::Acquire) == x.0 && !committed(cx, x) {
            if let Err(e) = engine::indexing::undo_schema_alter(cx.db, &def) {
                tracing::debug!("schema undo raced with its session's: {}", e.message);
            }
        }
    }
}

fn committed(cx: &DdlCtx<'_>, x: TransactionId) -> bool {
    cx.db.clog().get_status(x) == txn::clog::XidStatus::Committed
}

/// ALTER SCHEMA's new row `spec` for schema `def`: applied at once as an
/// uncommitted version others do not see (unless this transaction
/// created the schema), undone at ROLLBACK ([`PendingDdl::AlterSchema`]).
fn alter_schema(cx: &mut DdlCtx<'_>, def: &SchemaDef, mut spec: SchemaSpec) -> PgResult<()> {
    let xid = cx.xact.assign_xid()?;
    let before = def.current_spec();
    let creator = TransactionId(def.creator.load(Ordering::Acquire));
    if creator.is_valid() && !committed(cx, creator) {
        // Created by this transaction: nobody else sees it anyway.
    } else if before.altered_by.is_valid() {
        // Already altered by this transaction: others still see the
        // committed row.
        spec.altered_by = before.altered_by;
        spec.previous = before.previous.clone();
    } else {
        spec.altered_by = xid;
        spec.previous = Some(Box::new(before.unmarked()));
    }
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterSchema {
            old_name: def.spec.name.clone(),
            spec,
        })?;
    cx.pending.push(PendingDdl::AlterSchema {
        oid: def.spec.oid,
        before,
    });
    Ok(())
}

/// COMMIT of a [`PendingDdl::AlterSchema`]: the mark goes.
pub(crate) fn commit_pending(db: &engine::Engine, oid: Oid) {
    if let Some(s) = db.catalog().schema_by_oid(oid) {
        s.altered_by.store(0, Ordering::Release);
    }
}

/// ROLLBACK of a [`PendingDdl::AlterSchema`]: the row before it comes back.
pub(crate) fn abort_pending(db: &engine::Engine, oid: Oid, before: SchemaSpec) {
    let Some(s) = db.catalog().schema_by_oid(oid) else {
        return;
    };
    let r = db
        .catalog()
        .apply_catalog_change(&CatalogChange::AlterSchema {
            old_name: s.spec.name.clone(),
            spec: before,
        });
    if let Err(e) = r {
        tracing::warn!(
            "could not undo ALTER SCHEMA \"{}\" after its rollback: {}",
            s.spec.name,
            e.message
        );
    }
}

/// `pg_` names are reserved for system schemas (42939).
fn reserved_name(name: &str) -> PgResult<()> {
    if name.starts_with("pg_") {
        return Err(PgError::new(
            sqlstate::RESERVED_NAME,
            format!("unacceptable schema name \"{name}\""),
        )
        .with_detail("The prefix \"pg_\" is reserved for system schemas."));
    }
    Ok(())
}

fn role_oid(cx: &DdlCtx<'_>, role: &str) -> PgResult<Oid> {
    cx.db
        .catalog()
        .role(role)
        .map(|r| r.oid)
        .ok_or_else(|| engine::catalog::undefined_role(role))
}

/// CREATE SCHEMA [IF NOT EXISTS] name [AUTHORIZATION role].
pub fn create_schema(
    cx: &mut DdlCtx<'_>,
    name: &ast::SchemaName,
    if_not_exists: bool,
) -> PgResult<String> {
    let (name, owner) = match name {
        ast::SchemaName::Simple(n) => (QualName::of(n)?.name, None),
        ast::SchemaName::UnnamedAuthorization(r) => {
            let r = crate::planner::ident_name(r);
            (r.clone(), Some(r))
        }
        ast::SchemaName::NamedAuthorization(n, r) => {
            (QualName::of(n)?.name, Some(crate::planner::ident_name(r)))
        }
    };
    let owner = match owner {
        Some(r) => role_oid(cx, &r)?,
        None => role_oid(cx, cx.user)?,
    };
    let taken = cx.catalog().schema_oid(&name).is_some() || cx.db.catalog().schema(&name).is_some();
    if taken {
        let msg = format!("schema \"{name}\" already exists");
        if if_not_exists {
            cx.notices.push(PgError::notice(
                sqlstate::DUPLICATE_SCHEMA,
                format!("{msg}, skipping"),
            ));
            return Ok("CREATE SCHEMA".into());
        }
        return Err(PgError::new(sqlstate::DUPLICATE_SCHEMA, msg));
    }
    reserved_name(&name)?;
    let creator = cx.xact.assign_xid()?;
    let spec = SchemaSpec {
        oid: cx.db.catalog().allocate_oid(),
        name: name.clone(),
        owner,
        creator,
        altered_by: TransactionId::INVALID,
        previous: None,
    };
    cx.db
        .catalog()
        .apply_catalog_change(&CatalogChange::CreateSchema(spec))?;
    cx.pending.push(PendingDdl::CreateSchema(name));
    Ok("CREATE SCHEMA".into())
}

/// DROP SCHEMA [IF EXISTS] name, … [CASCADE | RESTRICT].
pub fn drop_schemas(
    cx: &mut DdlCtx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> PgResult<String> {
    let mut found: Vec<SchemaSpec> = Vec::new();
    for n in names {
        let name = QualName::of(n)?.name;
        match cx.catalog().schema_oid(&name) {
            Some(_) if BUILTIN_SCHEMAS.iter().any(|s| s.1 == name) => {
                return Err(PgError::new(
                    sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop schema {name} because it is required by the database system"
                    ),
                ));
            }
            Some(_) => found.push(user_schema(cx, &name)?),
            None => cx.notices.push(crate::ddl::missing_to_drop(
                "schema",
                sqlstate::INVALID_SCHEMA_NAME,
                &name,
                if_exists,
            )?),
        }
    }
    let oids: Vec<Oid> = found.iter().map(|s| s.oid).collect();
    // What the schemas hold, as this session sees it: (kind, name) for
    // the messages, and the objects to drop.
    let view = cx.catalog();
    let tables: Vec<_> = cx
        .db
        .catalog()
        .tables()
        .into_iter()
        .filter(|t| oids.contains(&t.namespace))
        .filter_map(|t| view.get_in(t.namespace, &t.name))
        .collect();
    let views: Vec<_> = view
        .views()
        .into_iter()
        .filter(|v| oids.contains(&v.namespace))
        .collect();
    let owned = |s: &engine::sequence::SequenceDef| {
        s.spec
            .owned_by
            .as_ref()
            .is_some_and(|(t, _)| tables.iter().any(|x| x.key() == *t))
    };
    let sequences: Vec<_> = cx
        .db
        .catalog()
        .sequences()
        .into_iter()
        .filter(|s| oids.contains(&s.spec.namespace) && !owned(s))
        .filter(|s| {
            let x = s.creator.load(std::sync::atomic::Ordering::Acquire);
            x == 0 || cx.xact.own().xids.binary_search(&TransactionId(x)).is_ok()
        })
        .collect();
    let functions: Vec<_> = view
        .functions()
        .into_iter()
        .filter(|f| oids.contains(&f.spec.namespace))
        .map(|f| f.current_spec())
        .collect();
    let mut objects: Vec<(Oid, String)> = Vec::new();
    let schema_of = |ns: Oid| {
        found
            .iter()
            .find(|s| s.oid == ns)
            .map(|s| s.name.clone())
            .unwrap_or_default()
    };
    for t in &tables {
        objects.push((
            t.oid,
            format!("table {}.{}", schema_of(t.namespace), t.name),
        ));
    }
    for v in &views {
        objects.push((v.oid, format!("view {}.{}", schema_of(v.namespace), v.name)));
    }
    for s in &sequences {
        objects.push((
            s.spec.oid,
            format!("sequence {}.{}", schema_of(s.spec.namespace), s.spec.name),
        ));
    }
    // Triggers elsewhere using the functions go too: (description, what
    // it depends on).
    let mut users: Vec<(String, String)> = Vec::new();
    for f in &functions {
        // getObjectDescription calls a procedure a function too.
        let desc = format!("function {}.{}", schema_of(f.namespace), f.signature());
        for (rel, u) in crate::trigger::function_users(cx, f.oid) {
            let dropped = tables.iter().any(|t| t.oid == rel) || views.iter().any(|v| v.oid == rel);
            if !dropped {
                users.push((u, desc.clone()));
            }
        }
        objects.push((f.oid, desc));
    }
    objects.sort_by_key(|o| o.0);
    let mut described: Vec<String> = objects.into_iter().map(|o| o.1).collect();
    if !described.is_empty() && !cascade {
        let first = &found[0].name;
        let detail: Vec<String> = described
            .iter()
            .map(|d| format!("{d} depends on schema {first}"))
            .chain(users.iter().map(|(u, f)| format!("{u} depends on {f}")))
            .collect();
        return Err(PgError::new(
            sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop schema {first} because other objects depend on it"),
        )
        .with_detail(detail.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
    }
    described.extend(users.into_iter().map(|(u, _)| u));
    if !described.is_empty() {
        cx.notices.push(crate::ddl::cascade_notice(&described));
    }
    // Foreign keys of other schemas' tables into these go now (CASCADE).
    crate::ddl::drop_table_dependents(cx, &tables, true)?;
    let view_oids: Vec<Oid> = views.iter().map(|v| v.oid).collect();
    let roots: Vec<_> = tables
        .iter()
        .map(|t| (t.oid, t.name.clone(), "table"))
        .chain(views.iter().map(|v| (v.oid, v.name.clone(), "view")))
        .collect();
    let mut dependents =
        crate::view::check_dependents(cx.db, &roots, true, &cx.dropping_views, &mut Vec::new())?;
    dependents.extend(view_oids);
    dependents.sort_unstable();
    dependents.dedup();
    let pending = crate::view::drop_view_oids(cx.db, cx.xact.own().xids, &dependents);
    cx.dropping_views.extend(&dependents);
    cx.pending.extend(pending);
    for f in functions {
        crate::functioncmds::drop_function(cx, f, true)?;
    }
    for t in tables {
        cx.pending.push(PendingDdl::Drop(t));
    }
    for s in sequences {
        cx.pending.push(PendingDdl::DropSequence(s.spec.key()));
    }
    for s in found {
        cx.pending.push(PendingDdl::DropSchema(s.name));
    }
    Ok("DROP SCHEMA".into())
}
