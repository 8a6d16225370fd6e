//! User triggers (PostgreSQL's `commands/trigger.c`): CREATE / DROP
//! TRIGGER, ALTER TABLE … ENABLE / DISABLE TRIGGER, and firing.
//!
//! ## Definitions
//!
//! A trigger is part of its table's definition
//! ([`engine::pg_trigger::TriggerSpec`] in `TableSpec::triggers`): the DDL
//! here computes the table's new definition and applies it through
//! `crate::tablecmds::alter_definition`, so it is WAL-logged, replayed,
//! undone by ROLLBACK and dropped with its table like any ALTER TABLE. The
//! function must be a `RETURNS trigger` function; DROP FUNCTION refuses
//! (2BP01) while a trigger uses it.
//!
//! A view's triggers are part of the view's definition the same way
//! (`ViewSpec::triggers`, changed through `crate::view::alter_view`):
//! INSTEAD OF row triggers and statement triggers, with PostgreSQL's
//! refusals for the rest. Firing sees a table or a view as a
//! [`TriggerRel`].
//!
//! ## Firing
//!
//! ```text
//!   run_dml ─► BEFORE STATEMENT triggers
//!              modify_table, per row:
//!                 BEFORE ROW triggers ─► the row they return is written
//!                                        (NULL: the row is skipped, not counted)
//!                 heap write, index entries, FK events
//!                 AFTER ROW triggers ─► queued on the statement (Ectx::trigger_events)
//!              FK events (ri_triggers::after_statement)
//!              command counter bump; the queued AFTER ROW events, in order
//!              AFTER STATEMENT triggers
//! ```
//!
//! INSERT / UPDATE / DELETE on a view with an INSTEAD OF trigger for the
//! event (`planner::viewdml`, `executor::view_dml`) fire the view's
//! statement triggers around the rows and [`instead_row`] for each: the
//! function does the writing, and a NULL from it means the row was not
//! processed.
//!
//! Within one event, triggers fire in name order (PostgreSQL's rule); a
//! disabled trigger does not fire; `UPDATE OF cols` fires when the
//! statement's SET list names one of the columns; a WHEN condition is
//! evaluated over NEW / OLD before the function runs (for AFTER ROW
//! triggers when the event is queued, as PostgreSQL does). Statement-level
//! triggers fire even when no row is touched.
//!
//! The function runs through `crate::fmgr::call_trigger`, which shares the
//! user-function nesting limit: a trigger that writes its own table
//! recurses until 54001 "stack depth limit exceeded", as in PostgreSQL.
//! Every statement the function runs is a nested statement
//! (`Ectx::nested`) with its own event queue, fired at its own end.
//!
//! The same functions serve COPY FROM (`crate::copy`: statement triggers
//! at its start and end, BEFORE ROW per record, AFTER ROW events kept
//! across its chunks), INSERT … ON CONFLICT DO UPDATE's update path, and
//! TRUNCATE (`session::truncate_in_block` fires the TRUNCATE statement
//! triggers around the emptying; `Ectx::skip_user_triggers` silences the
//! DELETE it empties with).
//!
//! ## Transition tables
//!
//! The rows a statement writes to a table with a `REFERENCING OLD / NEW
//! TABLE` AFTER trigger are kept on `Ectx::transition_rows`; calling such
//! a trigger pushes them, as named tables, on a thread-local frame stack
//! the planner consults ([`transition_relation`]) while the function's
//! statements are planned.
//!
//! ## Constraint triggers
//!
//! A constraint trigger ([`TriggerDeferral`] on its spec) fires like an
//! AFTER ROW trigger unless it is deferred (INITIALLY DEFERRED, or `SET
//! CONSTRAINTS` says so under its name): then its event joins the
//! deferred foreign key checks (`RiEvent::Trigger` on `Ectx::ri_deferred`)
//! and shares their life — kept per subtransaction by the session, fired
//! by `SET CONSTRAINTS … IMMEDIATE` or at COMMIT ([`fire_event`]), an
//! error there aborting the transaction.
//!
//! Nothing here runs during WAL replay: a standby applies the rows a
//! trigger wrote as the primary's WAL records, never the trigger.

use std::sync::Arc;

use crate::ddl::DdlCtx;
use crate::executor::Ectx;
use crate::parser::trigstmt::{CreateTrigger, TrigStmt};
use crate::parser::{lex_spans, Tok};
use engine::catalog::{ColumnDef, TableDef};
use engine::pg_trigger::*;
use engine::view::ViewSpec;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::value::Value;

// ---------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------

/// Runs CREATE / DROP TRIGGER and ALTER TABLE … ENABLE / DISABLE TRIGGER.
pub fn execute(cx: &mut DdlCtx<'_>, stmt: &TrigStmt) -> PgResult<String> {
    match stmt {
        TrigStmt::Create(c) => create(cx, c)?,
        TrigStmt::Drop {
            if_exists,
            name,
            table,
        } => drop_trigger(cx, *if_exists, name, table)?,
        TrigStmt::Enable {
            table,
            enabled,
            name,
        } => enable(cx, table, *enabled, name.as_deref())?,
    }
    Ok(stmt.tag().to_string())
}

/// What CREATE / DROP TRIGGER name: a table or a view.
enum Owner {
    Table(Arc<TableDef>),
    View(Arc<ViewSpec>),
}

impl Owner {
    fn rel(&self) -> TriggerRel<'_> {
        match self {
            Owner::Table(t) => TriggerRel::table(t),
            Owner::View(v) => TriggerRel::view(v),
        }
    }
    /// Gives the relation the trigger list `triggers` (a definition
    /// change, transactional and WAL-logged like any ALTER).
    fn set_triggers(&self, cx: &mut DdlCtx<'_>, triggers: Vec<TriggerSpec>) -> PgResult<()> {
        match self {
            Owner::Table(t) => {
                let mut spec = t.spec();
                spec.triggers = triggers;
                crate::tablecmds::alter_definition(cx, t, spec).map(|_| ())
            }
            Owner::View(v) => {
                let mut spec = (**v).clone();
                spec.triggers = triggers;
                crate::view::alter_view(cx, v, spec)
            }
        }
    }
}

/// The table or view `name` (None: neither exists).
fn find_owner(cx: &DdlCtx<'_>, q: &crate::namespace::QualName) -> Option<Owner> {
    let view = cx.catalog();
    if let Some(t) = crate::namespace::find_table(&view, q) {
        return Some(Owner::Table(t));
    }
    crate::namespace::find_view(&view, q).map(Owner::View)
}

fn owner_of(cx: &DdlCtx<'_>, name: &str) -> PgResult<Owner> {
    let q = crate::namespace::QualName::parse_text(name)?;
    match find_owner(cx, &q) {
        Some(o) => Ok(o),
        None => crate::namespace::table(&cx.catalog(), &q).map(Owner::Table),
    }
}

/// PostgreSQL's `"v" is a view` with the reason as DETAIL.
fn view_cannot(name: &str, detail: &str) -> PgError {
    PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{name}\" is a view")).with_detail(detail)
}

/// CREATE TRIGGER needs the TRIGGER privilege on the table (PostgreSQL's
/// `pg_class_aclcheck(…, ACL_TRIGGER)`); DROP TRIGGER and ALTER TABLE …
/// ENABLE / DISABLE TRIGGER need its ownership (`owner`, `drop`).
fn check_table_rights(cx: &DdlCtx<'_>, oid: pgtypes::Oid, owner: bool, drop: bool) -> PgResult<()> {
    let u = crate::privileges::AclUser::of(cx.db, cx.user);
    if u.superuser {
        return Ok(());
    }
    let cv = cx.catalog();
    let Some(rel) = crate::privileges::relation_info(&cv, oid) else {
        return Ok(());
    };
    if owner {
        crate::privileges::check_owner(&cv, &u, &rel)
    } else if drop {
        // DROP TRIGGER's object is the trigger: "relation" in the message.
        if u.has_privs_of(crate::privileges::relation_owner(&cv, rel.oid)) {
            Ok(())
        } else {
            Err(crate::privileges::not_owner("relation", &rel.name))
        }
    } else {
        crate::privileges::check_relation(
            &cv,
            &u,
            &rel,
            engine::acl::ACL_TRIGGER,
            crate::privileges::ColumnUse::default(),
        )
    }
}

fn undefined_trigger(name: &str, table: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("trigger \"{name}\" for table \"{table}\" does not exist"),
    )
}

fn create(cx: &mut DdlCtx<'_>, c: &CreateTrigger) -> PgResult<()> {
    let owner = owner_of(cx, &c.table)?;
    let table = owner.rel();
    // PostgreSQL's checks, in its order: what the relation kind allows,
    // the right to create, then the trigger type.
    if table.is_view {
        if c.timing != TRIGGER_TYPE_INSTEAD && c.row {
            return Err(view_cannot(
                table.name,
                "Views cannot have row-level BEFORE or AFTER triggers.",
            ));
        }
        if c.events & TRIGGER_TYPE_TRUNCATE != 0 {
            return Err(view_cannot(
                table.name,
                "Views cannot have TRUNCATE triggers.",
            ));
        }
    } else if c.timing == TRIGGER_TYPE_INSTEAD {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("\"{}\" is a table", table.name),
        )
        .with_detail("Tables cannot have INSTEAD OF triggers."));
    }
    check_table_rights(cx, table.oid, false, false)?;
    if c.constraint && c.or_replace {
        return Err(PgError::unsupported(
            "CREATE OR REPLACE CONSTRAINT TRIGGER is not supported",
        ));
    }
    if c.row && c.events & TRIGGER_TYPE_TRUNCATE != 0 {
        return Err(PgError::unsupported(
            "TRUNCATE FOR EACH ROW triggers are not supported",
        ));
    }
    if c.timing == TRIGGER_TYPE_INSTEAD {
        let refuse = |msg: &str| {
            Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                msg.to_string(),
            ))
        };
        if !c.row {
            return refuse("INSTEAD OF triggers must be FOR EACH ROW");
        }
        if c.when.is_some() {
            return refuse("INSTEAD OF triggers cannot have WHEN conditions");
        }
        if !c.columns.is_empty() {
            return refuse("INSTEAD OF triggers cannot have column lists");
        }
    }
    if table.is_view && (c.old_table.is_some() || c.new_table.is_some()) {
        return Err(view_cannot(
            table.name,
            "Triggers on views cannot have transition tables.",
        ));
    }
    check_transition_tables(c)?;
    let mut columns = Vec::with_capacity(c.columns.len());
    for n in &c.columns {
        let Some(i) = table
            .columns
            .iter()
            .position(|col| !col.dropped && col.name == *n)
        else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{n}\" of relation \"{}\" does not exist",
                    table.name
                ),
            ));
        };
        if columns.contains(&i) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{n}\" specified more than once"),
            ));
        }
        columns.push(i);
    }
    let when = match &c.when {
        Some(w) => {
            // The error cursor: the first offending reference.
            let at = |start: usize| {
                let chars = w.get(..start).map_or(0, |p| p.chars().count());
                c.when_at.saturating_add(u32::try_from(chars).unwrap_or(0))
            };
            let refs = row_refs(w)?;
            let bad = |msg: &str, f: &dyn Fn(bool) -> bool| {
                refs.iter().find(|r| f(r.0)).map(|r| {
                    PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, msg).with_position(at(r.2))
                })
            };
            let err = if !c.row {
                bad(
                    "statement trigger's WHEN condition cannot reference column values",
                    &|_| true,
                )
            } else if c.events & TRIGGER_TYPE_INSERT != 0 {
                bad(
                    "INSERT trigger's WHEN condition cannot reference OLD values",
                    &|new| !new,
                )
            } else {
                None
            };
            let err = err.or_else(|| {
                (c.row && c.events & TRIGGER_TYPE_DELETE != 0)
                    .then(|| {
                        bad(
                            "DELETE trigger's WHEN condition cannot reference NEW values",
                            &|new| new,
                        )
                    })
                    .flatten()
            });
            if let Some(e) = err {
                return Err(e);
            }
            // It must bind over the table's columns.
            let (sql, refs) = rewrite_when(w, table.columns)?;
            let types: Vec<pgtypes::Oid> = refs
                .iter()
                .map(|(_, c)| table.columns[*c].ty.oid())
                .collect();
            let crate::parser::Stmt::Sql(stmt) = crate::parser::parse_one(&sql)? else {
                return Err(PgError::syntax("syntax error in WHEN condition"));
            };
            crate::planner::plan_statement(&cx.catalog(), &stmt, &types)?;
            Some(w.clone())
        }
        None => None,
    };
    let func = trigger_function(cx, c)?;
    let mut triggers = table.triggers.to_vec();
    let tgtype = c.timing | c.events | if c.row { TRIGGER_TYPE_ROW } else { 0 };
    let existing = triggers.iter().position(|t| t.name == c.name);
    let oid = match existing {
        Some(i) if c.or_replace && triggers[i].constraint.is_some() => {
            return Err(PgError::new(
                sqlstate::DUPLICATE_OBJECT,
                format!(
                    "trigger \"{}\" for relation \"{}\" is a constraint trigger",
                    c.name, table.name
                ),
            ))
        }
        Some(i) if c.or_replace => triggers[i].oid,
        Some(_) => {
            return Err(PgError::new(
                sqlstate::DUPLICATE_OBJECT,
                format!(
                    "trigger \"{}\" for relation \"{}\" already exists",
                    c.name, table.name
                ),
            ))
        }
        None => cx.db.catalog().allocate_oid(),
    };
    let t = TriggerSpec {
        oid,
        name: c.name.clone(),
        func,
        tgtype,
        enabled: b'O',
        columns,
        args: c.args.clone(),
        when,
        old_table: c.old_table.clone(),
        new_table: c.new_table.clone(),
        constraint: c.constraint.then(|| TriggerDeferral {
            oid: cx.db.catalog().allocate_oid(),
            deferrable: c.deferrable || c.initially_deferred,
            initially_deferred: c.initially_deferred,
        }),
    };
    match existing {
        Some(i) => triggers[i] = t,
        None => triggers.push(t),
    }
    owner.set_triggers(cx, triggers)
}

/// PostgreSQL's rules for `REFERENCING OLD / NEW TABLE AS`, in its order.
fn check_transition_tables(c: &CreateTrigger) -> PgResult<()> {
    let bad = |state, msg: &str| Err(PgError::new(state, msg.to_string()));
    for (is_new, name) in [(false, &c.old_table), (true, &c.new_table)] {
        if name.is_none() {
            continue;
        }
        if c.timing != 0 {
            return bad(
                sqlstate::INVALID_OBJECT_DEFINITION,
                "transition table name can only be specified for an AFTER trigger",
            );
        }
        if c.events & TRIGGER_TYPE_TRUNCATE != 0 {
            return bad(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "TRUNCATE triggers with transition tables are not supported",
            );
        }
        let events = [
            TRIGGER_TYPE_INSERT,
            TRIGGER_TYPE_UPDATE,
            TRIGGER_TYPE_DELETE,
        ]
        .iter()
        .filter(|b| c.events & **b != 0)
        .count();
        if events != 1 {
            return bad(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "transition tables cannot be specified for triggers with more than one event",
            );
        }
        if !c.columns.is_empty() {
            return bad(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "transition tables cannot be specified for triggers with column lists",
            );
        }
        if is_new && c.events & (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE) == 0 {
            return bad(
                sqlstate::INVALID_OBJECT_DEFINITION,
                "NEW TABLE can only be specified for an INSERT or UPDATE trigger",
            );
        }
        if !is_new && c.events & (TRIGGER_TYPE_DELETE | TRIGGER_TYPE_UPDATE) == 0 {
            return bad(
                sqlstate::INVALID_OBJECT_DEFINITION,
                "OLD TABLE can only be specified for a DELETE or UPDATE trigger",
            );
        }
    }
    if c.old_table.is_some() && c.old_table == c.new_table {
        return bad(
            sqlstate::INVALID_OBJECT_DEFINITION,
            "OLD TABLE name and NEW TABLE name cannot be the same",
        );
    }
    Ok(())
}

/// The OID of the `RETURNS trigger` function `name()` (`schema.name()`).
fn trigger_function(cx: &DdlCtx<'_>, c: &CreateTrigger) -> PgResult<pgtypes::Oid> {
    let item = crate::parser::funcstmt::FuncRef {
        schema: c.func_schema.clone(),
        name: c.func.clone(),
        args: Some(Vec::new()),
    };
    let spec = crate::functioncmds::lookup_ref(&cx.catalog(), "function", &item)?;
    if spec.ret != SqlType::Trigger {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("function {} must return type trigger", spec.name),
        ));
    }
    // The creator must be allowed to EXECUTE it (CreateTrigger's check;
    // the trigger then runs it whoever writes).
    crate::fmgr::may_execute(cx.db, cx.xact.own().xids, cx.user, &spec)?;
    Ok(spec.oid)
}

fn drop_trigger(cx: &mut DdlCtx<'_>, if_exists: bool, name: &str, table: &str) -> PgResult<()> {
    let q = crate::namespace::QualName::parse_text(table)?;
    let owner = match find_owner(cx, &q) {
        Some(o) => o,
        None if if_exists => {
            cx.notices.push(PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!("relation \"{}\" does not exist, skipping", q.display()),
            ));
            return Ok(());
        }
        None => return Err(engine::catalog::undefined_table(&q.display())),
    };
    let t = owner.rel();
    let mut triggers = t.triggers.to_vec();
    let Some(i) = triggers.iter().position(|x| x.name == name) else {
        if if_exists {
            cx.notices.push(PgError::notice(
                sqlstate::SUCCESSFUL_COMPLETION,
                format!(
                    "trigger \"{name}\" for relation \"{}\" does not exist, skipping",
                    t.name
                ),
            ));
            return Ok(());
        }
        return Err(undefined_trigger(name, t.name));
    };
    check_table_rights(cx, t.oid, false, true)?;
    triggers.remove(i);
    owner.set_triggers(cx, triggers)
}

fn enable(cx: &mut DdlCtx<'_>, table: &str, enabled: u8, name: Option<&str>) -> PgResult<()> {
    let t = match owner_of(cx, table)? {
        Owner::Table(t) => t,
        Owner::View(v) => {
            let action = match enabled {
                b'D' => "DISABLE TRIGGER",
                b'A' => "ENABLE ALWAYS TRIGGER",
                b'R' => "ENABLE REPLICA TRIGGER",
                _ => "ENABLE TRIGGER",
            };
            let all = if name.is_none() { " ALL" } else { "" };
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!(
                    "ALTER action {action}{all} cannot be performed on relation \"{}\"",
                    v.name
                ),
            )
            .with_detail("This operation is not supported for views."));
        }
    };
    check_table_rights(cx, t.oid, true, false)?;
    let mut spec = t.spec();
    let mut found = false;
    for tg in &mut spec.triggers {
        if name.is_none_or(|n| n == tg.name) {
            tg.enabled = enabled;
            found = true;
        }
    }
    if let (Some(n), false) = (name, found) {
        return Err(undefined_trigger(n, &t.name));
    }
    crate::tablecmds::alter_definition(cx, &t, spec)?;
    Ok(())
}

/// 2BP01 if a trigger uses function `oid` (DROP FUNCTION without CASCADE).
pub(crate) fn check_function_unused(
    cx: &DdlCtx<'_>,
    oid: pgtypes::Oid,
    signature: &str,
) -> PgResult<()> {
    let users: Vec<String> = function_users(cx, oid)
        .into_iter()
        .map(|(_, u)| format!("{u} depends on function {signature}"))
        .collect();
    if users.is_empty() {
        return Ok(());
    }
    Err(PgError::new(
        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot drop function {signature} because other objects depend on it"),
    )
    .with_detail(users.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
}

/// The triggers whose function is `oid`, on the tables and views this
/// transaction sees (and is not dropping), as PostgreSQL describes them
/// (`trigger t on table s.x`, the relation qualified unless the search
/// path finds it), with their relation's OID.
pub(crate) fn function_users(cx: &DdlCtx<'_>, oid: pgtypes::Oid) -> Vec<(pgtypes::Oid, String)> {
    let view = cx.catalog();
    let own = cx.xact.own().xids;
    let mut users = Vec::new();
    for t in view.catalog().tables() {
        // Tables this transaction dropped (DROP TABLE t; DROP FUNCTION f
        // in one block) and ones it cannot see use nothing.
        if cx.dropping_tables.contains(&t.oid) || !t.visible_to(own, cx.db.clog()) {
            continue;
        }
        for tg in t.triggers.iter().filter(|tg| tg.func == oid) {
            users.push((t.oid, trigger_desc(&view, tg, TriggerRel::table(&t))));
        }
    }
    for v in view.views() {
        for tg in v.triggers.iter().filter(|tg| tg.func == oid) {
            users.push((v.oid, trigger_desc(&view, tg, TriggerRel::view(&v))));
        }
    }
    users
}

/// `trigger name on table|view rel` (getObjectDescription's words).
fn trigger_desc(
    cv: &engine::catalog::CatalogView<'_>,
    tg: &TriggerSpec,
    rel: TriggerRel<'_>,
) -> String {
    let visible = crate::namespace::relation_visible(cv, rel.namespace, rel.name);
    format!(
        "trigger {} on {} {}",
        tg.name,
        if rel.is_view { "view" } else { "table" },
        crate::namespace::qualified_display(cv, rel.namespace, rel.name, visible)
    )
}

// ---------------------------------------------------------------------------
// WHEN conditions
// ---------------------------------------------------------------------------

/// The `new.col` / `old.col` references of `text`, in order.
fn row_refs(text: &str) -> PgResult<Vec<(bool, String, usize, usize)>> {
    let toks = lex_spans(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if let (Tok::Word(w), Some(Tok::Punct('.')), Some(Tok::Word(c) | Tok::Ident(c))) = (
            &toks[i].0,
            toks.get(i + 1).map(|t| &t.0),
            toks.get(i + 2).map(|t| &t.0),
        ) {
            if w == "new" || w == "old" {
                out.push((w == "new", c.clone(), toks[i].1, toks[i + 2].2));
                i += 3;
                continue;
            }
        }
        i += 1;
    }
    Ok(out)
}

/// `SELECT (cond)` with each `new.col` / `old.col` replaced by `$n`, and
/// what each `$n` reads: (from NEW, column position).
fn rewrite_when(text: &str, columns: &[ColumnDef]) -> PgResult<(String, Vec<(bool, usize)>)> {
    let mut sql = String::from("SELECT (");
    let mut refs: Vec<(bool, usize)> = Vec::new();
    let mut last = 0;
    for (new, col, start, end) in row_refs(text)? {
        let Some(c) = columns.iter().position(|x| !x.dropped && x.name == col) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column {}.{col} does not exist",
                    if new { "new" } else { "old" }
                ),
            ));
        };
        let k = match refs.iter().position(|r| *r == (new, c)) {
            Some(k) => k + 1,
            None => {
                refs.push((new, c));
                refs.len()
            }
        };
        sql.push_str(text.get(last..start).unwrap_or(""));
        sql.push_str(&format!("${k}"));
        last = end;
    }
    sql.push_str(text.get(last..).unwrap_or(""));
    sql.push(')');
    Ok((sql, refs))
}

fn when_passes(
    ec: &mut Ectx<'_>,
    columns: &[ColumnDef],
    text: &str,
    old: Option<&[Value]>,
    new: Option<&[Value]>,
) -> PgResult<bool> {
    let (sql, refs) = rewrite_when(text, columns)?;
    let mut vals = Vec::with_capacity(refs.len());
    let mut types = Vec::with_capacity(refs.len());
    for (is_new, c) in refs {
        let row = if is_new { new } else { old };
        vals.push(row.and_then(|r| r.get(c)).cloned().unwrap_or(Value::Null));
        types.push(columns[c].ty);
    }
    let r = crate::spi::execute(
        ec,
        &sql,
        &vals,
        &types,
        crate::spi::SnapshotMode::Caller,
        Some(1),
    )?;
    Ok(matches!(
        r.rows.first().and_then(|r| r.first()),
        Some(Value::Bool(true))
    ))
}

// ---------------------------------------------------------------------------
// Firing
// ---------------------------------------------------------------------------

/// What a trigger function is told (PostgreSQL's TriggerData): the
/// trigger, its table or view, the event and the rows.
pub struct TriggerData<'a> {
    /// The trigger.
    pub trigger: &'a TriggerSpec,
    /// Its table (the version the statement writes) or view.
    pub rel: TriggerRel<'a>,
    /// TG_WHEN: `BEFORE`, `AFTER` or `INSTEAD OF`.
    pub when: &'static str,
    /// TG_LEVEL: `ROW` or `STATEMENT`.
    pub level: &'static str,
    /// TG_OP: `INSERT`, `UPDATE`, `DELETE` or `TRUNCATE`.
    pub op: &'static str,
    /// TG_TABLE_SCHEMA.
    pub schema: String,
    /// NEW (INSERT / UPDATE row triggers).
    pub new: Option<Vec<Value>>,
    /// OLD (UPDATE / DELETE row triggers).
    pub old: Option<Vec<Value>>,
}

// ---------------------------------------------------------------------------
// Transition tables
// ---------------------------------------------------------------------------

/// A row a statement wrote to a table one of whose AFTER triggers names
/// transition tables (`REFERENCING OLD / NEW TABLE AS`).
#[derive(Clone, Debug)]
pub struct TransitionRow {
    /// The table.
    table: pgtypes::Oid,
    /// The event (`TRIGGER_TYPE_INSERT` …).
    op: u16,
    old: Option<Vec<Value>>,
    new: Option<Vec<Value>>,
}

use crate::transition::{Transition, TRANSITIONS};

/// True if `table` has an enabled AFTER trigger for `op` with transition
/// tables (its rows are then kept for them).
fn wants_transition_rows(table: &TableDef, op: u16) -> bool {
    table.triggers.iter().any(|t| {
        t.is_enabled()
            && t.on(op)
            && !t.before()
            && !t.instead()
            && (t.old_table.is_some() || t.new_table.is_some())
    })
}

/// The transition tables trigger `td` names, from the statement's rows.
fn transition_frame(ec: &Ectx<'_>, td: &TriggerData<'_>) -> Vec<Transition> {
    let t = td.trigger;
    if td.when != "AFTER" || (t.old_table.is_none() && t.new_table.is_none()) {
        return Vec::new();
    }
    let columns = td.rel.columns;
    let live: Vec<usize> = (0..columns.len())
        .filter(|c| !columns[*c].dropped)
        .collect();
    let cols: Vec<(String, SqlType)> = live
        .iter()
        .map(|c| (columns[*c].name.clone(), columns[*c].ty))
        .collect();
    let mut out = Vec::new();
    for (name, new) in [(&t.old_table, false), (&t.new_table, true)] {
        let Some(name) = name else { continue };
        let rows: Vec<Vec<Value>> = ec
            .transition_rows
            .iter()
            .filter(|r| r.table == td.rel.oid && op_name(r.op) == td.op)
            .filter_map(|r| if new { r.new.as_ref() } else { r.old.as_ref() })
            .map(|row| {
                live.iter()
                    .map(|c| row.get(*c).cloned().unwrap_or(Value::Null))
                    .collect()
            })
            .collect();
        out.push((name.clone(), cols.clone(), Arc::new(rows)));
    }
    out
}

/// One queued AFTER ROW event.
#[derive(Clone, Debug)]
pub struct AfterEvent {
    table: Arc<TableDef>,
    /// Position in `table.triggers`.
    trigger: usize,
    op: u16,
    old: Option<Vec<Value>>,
    new: Option<Vec<Value>>,
}

impl AfterEvent {
    /// True if the event belongs to a deferrable constraint trigger that
    /// is deferred under `modes` (its constraint name is the trigger's).
    pub fn deferred_under(&self, modes: &crate::executor::ConstraintModes) -> bool {
        self.table
            .triggers
            .get(self.trigger)
            .and_then(|t| t.constraint.map(|c| (t, c)))
            .is_some_and(|(t, c)| c.deferrable && modes.deferred(&t.name, c.initially_deferred))
    }
}

fn op_name(op: u16) -> &'static str {
    match op {
        TRIGGER_TYPE_INSERT => "INSERT",
        TRIGGER_TYPE_UPDATE => "UPDATE",
        TRIGGER_TYPE_DELETE => "DELETE",
        _ => "TRUNCATE",
    }
}

/// True if `table` has any trigger (the executor's cheap test).
pub fn has_triggers(table: &TableDef) -> bool {
    !table.triggers.is_empty()
}

/// When a trigger fires relative to its event.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timing {
    Before,
    After,
    Instead,
}

/// The enabled `triggers` for `op` at `timing` and `row` level, in name
/// order; `updated` filters UPDATE OF.
fn matching(
    triggers: &[TriggerSpec],
    op: u16,
    timing: Timing,
    row: bool,
    updated: &[usize],
) -> Vec<usize> {
    let mut v: Vec<usize> = triggers
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            t.is_enabled()
                && t.on(op)
                && t.before() == (timing == Timing::Before)
                && t.instead() == (timing == Timing::Instead)
                && t.row() == row
                && (op != TRIGGER_TYPE_UPDATE
                    || t.columns.is_empty()
                    || t.columns.iter().any(|c| updated.contains(c)))
        })
        .map(|(i, _)| i)
        .collect();
    v.sort_by(|a, b| triggers[*a].name.cmp(&triggers[*b].name));
    v
}

fn schema_of(ec: &Ectx<'_>, namespace: pgtypes::Oid) -> String {
    ec.db
        .catalog()
        .view(&[], ec.db.clog())
        .schema_name(namespace)
        .unwrap_or_else(|| "public".to_string())
}

fn call(ec: &mut Ectx<'_>, td: &TriggerData<'_>) -> PgResult<Option<Vec<Value>>> {
    let frame = transition_frame(ec, td);
    TRANSITIONS.with(|t| t.borrow_mut().push(frame));
    let r = crate::fmgr::call_trigger(ec, td);
    TRANSITIONS.with(|t| t.borrow_mut().pop());
    r
}

/// BEFORE ROW triggers of an INSERT (`old` None), UPDATE or DELETE (`new`
/// None): the row to write (for DELETE: the old row, meaning "go ahead"),
/// or None to skip it.
pub fn before_row(
    ec: &mut Ectx<'_>,
    table: &TableDef,
    op: u16,
    old: Option<&[Value]>,
    new: Option<Vec<Value>>,
    updated: &[usize],
) -> PgResult<Option<Vec<Value>>> {
    if ec.skip_user_triggers {
        return Ok(new.or_else(|| old.map(|o| o.to_vec())));
    }
    row_chain(
        ec,
        TriggerRel::table(table),
        Timing::Before,
        op,
        old,
        new,
        updated,
    )
}

/// The INSTEAD OF row triggers of `view` for `op` (PostgreSQL's
/// ExecIR{Insert,Update,Delete}Triggers): the row the last returned (for
/// DELETE: OLD), or None when one returned NULL — the row then counts as
/// not processed.
pub fn instead_row(
    ec: &mut Ectx<'_>,
    view: &ViewSpec,
    op: u16,
    old: Option<&[Value]>,
    new: Option<Vec<Value>>,
) -> PgResult<Option<Vec<Value>>> {
    row_chain(
        ec,
        TriggerRel::view(view),
        Timing::Instead,
        op,
        old,
        new,
        &[],
    )
}

/// Fires `rel`'s row triggers at `timing` (BEFORE or INSTEAD OF) for
/// `op` in name order, each given the row the one before returned (WHEN
/// checked first): that row at the end (DELETE: OLD), None as soon as one
/// returns NULL.
fn row_chain(
    ec: &mut Ectx<'_>,
    rel: TriggerRel<'_>,
    timing: Timing,
    op: u16,
    old: Option<&[Value]>,
    new: Option<Vec<Value>>,
    updated: &[usize],
) -> PgResult<Option<Vec<Value>>> {
    let list = matching(rel.triggers, op, timing, true, updated);
    let mut new = new;
    if list.is_empty() {
        return Ok(new.or_else(|| old.map(|o| o.to_vec())));
    }
    let schema = schema_of(ec, rel.namespace);
    for i in list {
        let t = &rel.triggers[i];
        if let Some(w) = &t.when {
            if !when_passes(ec, rel.columns, w, old, new.as_deref())? {
                continue;
            }
        }
        let td = TriggerData {
            trigger: t,
            rel,
            when: if timing == Timing::Instead {
                "INSTEAD OF"
            } else {
                "BEFORE"
            },
            level: "ROW",
            op: op_name(op),
            schema: schema.clone(),
            new: new.clone(),
            old: old.map(|o| o.to_vec()),
        };
        match call(ec, &td)? {
            None => return Ok(None),
            Some(mut r) if op != TRIGGER_TYPE_DELETE => {
                conform_returned(rel.columns, &mut r)?;
                new = Some(r);
            }
            Some(_) => {}
        }
    }
    Ok(new.or_else(|| old.map(|o| o.to_vec())))
}

/// A row a trigger returned, as the relation's types.
fn conform_returned(columns: &[ColumnDef], row: &mut [Value]) -> PgResult<()> {
    if row.len() != columns.len() {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            "returned row structure does not match the structure of the triggering table",
        ));
    }
    for (v, c) in row.iter_mut().zip(columns) {
        if !v.is_null() && v.sql_type() != c.ty && !c.dropped {
            *v = pgtypes::value::cast_assign(v, c.ty)?;
        }
    }
    Ok(())
}

/// Queues the AFTER ROW events of a row just written.
pub fn queue_after_row(
    ec: &mut Ectx<'_>,
    table: &Arc<TableDef>,
    op: u16,
    old: Option<&[Value]>,
    new: Option<&[Value]>,
    updated: &[usize],
) -> PgResult<()> {
    if ec.skip_user_triggers {
        return Ok(());
    }
    if wants_transition_rows(table, op) {
        ec.transition_rows.push(TransitionRow {
            table: table.oid,
            op,
            old: old.map(|o| o.to_vec()),
            new: new.map(|n| n.to_vec()),
        });
    }
    for i in matching(&table.triggers, op, Timing::After, true, updated) {
        if let Some(w) = &table.triggers[i].when {
            if !when_passes(ec, &table.columns, w, old, new)? {
                continue;
            }
        }
        let ev = AfterEvent {
            table: table.clone(),
            trigger: i,
            op,
            old: old.map(|o| o.to_vec()),
            new: new.map(|n| n.to_vec()),
        };
        if ev.deferred_under(&ec.constraint_modes) {
            // Fired at COMMIT (or SET CONSTRAINTS … IMMEDIATE) with the
            // deferred foreign key checks.
            ec.ri_deferred
                .push(crate::ri_triggers::RiEvent::Trigger(ev));
        } else {
            ec.trigger_events.push(ev);
        }
    }
    Ok(())
}

/// The statement-level triggers of `table` (a table or view) for `op` at
/// BEFORE (`before`) or AFTER.
pub fn fire_statement(
    ec: &mut Ectx<'_>,
    table: TriggerRel<'_>,
    op: u16,
    before: bool,
    updated: &[usize],
) -> PgResult<()> {
    if ec.skip_user_triggers {
        return Ok(());
    }
    let timing = if before {
        Timing::Before
    } else {
        Timing::After
    };
    let list = matching(table.triggers, op, timing, false, updated);
    if list.is_empty() {
        return Ok(());
    }
    if !before {
        // The statement's writes are visible to its AFTER triggers.
        ec.xact.command_counter_increment();
    }
    let schema = schema_of(ec, table.namespace);
    for i in list {
        let t = &table.triggers[i];
        if let Some(w) = &t.when {
            if !when_passes(ec, table.columns, w, None, None)? {
                continue;
            }
        }
        let td = TriggerData {
            trigger: t,
            rel: table,
            when: if before { "BEFORE" } else { "AFTER" },
            level: "STATEMENT",
            op: op_name(op),
            schema: schema.clone(),
            new: None,
            old: None,
        };
        call(ec, &td)?;
    }
    Ok(())
}

/// Fires the statement's queued AFTER ROW events, in the order queued
/// (the statement's writes made visible first).
pub fn fire_after_rows(ec: &mut Ectx<'_>) -> PgResult<()> {
    if ec.trigger_events.is_empty() {
        return Ok(());
    }
    ec.xact.command_counter_increment();
    let events = std::mem::take(&mut ec.trigger_events);
    let mut schema: Option<(pgtypes::Oid, String)> = None;
    for e in events {
        let s = match &schema {
            Some((ns, s)) if *ns == e.table.namespace => s.clone(),
            _ => {
                let s = schema_of(ec, e.table.namespace);
                schema = Some((e.table.namespace, s.clone()));
                s
            }
        };
        let Some(t) = e.table.triggers.get(e.trigger) else {
            continue;
        };
        let td = TriggerData {
            trigger: t,
            rel: TriggerRel::table(&e.table),
            when: "AFTER",
            level: "ROW",
            op: op_name(e.op),
            schema: s,
            new: e.new,
            old: e.old,
        };
        call(ec, &td)?;
    }
    Ok(())
}

/// Fires one AFTER ROW event queued earlier (a deferred constraint
/// trigger's, at COMMIT or SET CONSTRAINTS … IMMEDIATE).
pub fn fire_event(ec: &mut Ectx<'_>, e: &AfterEvent) -> PgResult<()> {
    let Some(t) = e.table.triggers.get(e.trigger) else {
        return Ok(());
    };
    let td = TriggerData {
        trigger: t,
        rel: TriggerRel::table(&e.table),
        when: "AFTER",
        level: "ROW",
        op: op_name(e.op),
        schema: schema_of(ec, e.table.namespace),
        new: e.new.clone(),
        old: e.old.clone(),
    };
    call(ec, &td)?;
    Ok(())
}

/// True if `table` has an enabled TRUNCATE trigger.
pub fn has_truncate_triggers(table: &TableDef) -> bool {
    table
        .triggers
        .iter()
        .any(|t| t.is_enabled() && t.on(TRIGGER_TYPE_TRUNCATE))
}

/// Removes the triggers that use function `oid` from every table (DROP
/// FUNCTION … CASCADE); returns the NOTICE lines' objects.
pub(crate) fn drop_function_triggers(
    cx: &mut DdlCtx<'_>,
    oid: pgtypes::Oid,
) -> PgResult<Vec<String>> {
    let mut out = Vec::new();
    let tables = cx.catalog().catalog().tables();
    for t in tables {
        if !t.triggers.iter().any(|tg| tg.func == oid) {
            continue;
        }
        let mut spec = t.spec();
        let cv = cx.catalog();
        for tg in spec.triggers.iter().filter(|tg| tg.func == oid) {
            out.push(trigger_desc(&cv, tg, TriggerRel::table(&t)));
        }
        spec.triggers.retain(|tg| tg.func != oid);
        crate::tablecmds::alter_definition(cx, &t, spec)?;
    }
    let views = cx.catalog().views();
    for v in views {
        if !v.triggers.iter().any(|tg| tg.func == oid) {
            continue;
        }
        let cv = cx.catalog();
        for tg in v.triggers.iter().filter(|tg| tg.func == oid) {
            out.push(trigger_desc(&cv, tg, TriggerRel::view(&v)));
        }
        let kept = v
            .triggers
            .iter()
            .filter(|tg| tg.func != oid)
            .cloned()
            .collect();
        Owner::View(v).set_triggers(cx, kept)?;
    }
    Ok(out)
}
