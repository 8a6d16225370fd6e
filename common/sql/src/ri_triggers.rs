//! FOREIGN KEY enforcement (PostgreSQL's `utils/adt/ri_triggers.c`).
//!
//! ## Events, fired at the end of the statement
//!
//! The executor does not check a foreign key while it writes a row: it
//! queues an [`RiEvent`] on the statement's [`Ectx`] (PostgreSQL's AFTER
//! ROW triggers), and [`after_statement`] fires the queue when the
//! statement's writes are done — so a statement that inserts a parent and
//! its child, or deletes a parent and re-inserts its key, sees its own
//! whole effect, as in PostgreSQL.
//!
//! ```text
//!   INSERT / UPDATE of a referencing row   → Check   (the key must exist)
//!   DELETE / key UPDATE of a referenced row → Parent  (by the action:
//!       NO ACTION, RESTRICT → no referencing row may remain
//!       CASCADE             → DELETE / UPDATE the referencing rows
//!       SET NULL / DEFAULT  → UPDATE them)
//! ```
//!
//! Actions run as SQL statements through the planner and executor
//! (`DELETE FROM c WHERE fk = $1`), so a cascade's own writes queue and fire
//! their own events: chains of cascades need nothing more. Checks of a
//! constraint that is deferred (`DEFERRABLE INITIALLY DEFERRED`) move to
//! the session's list, fired at COMMIT ([`fire_deferred`]); actions are
//! never deferred (PostgreSQL's rule).
//!
//! ## Concurrency without row locks
//!
//! PostgreSQL's checks take FOR KEY SHARE on the parent row. hotpair has no
//! tuple locks; both sides look with SnapshotDirty instead and wait for
//! the transactions they find in progress:
//!
//! * the referencing side needs a version of the parent key that is live —
//!   committed or its own, and not being deleted; a running inserter or
//!   deleter of it is waited for and the lookup repeated;
//! * the referenced side needs no referencing version that is live or in
//!   progress; a running inserter is waited for and the check repeated
//!   (after a CASCADE, the action is repeated with a new snapshot).
//!
//! Whichever side writes first, the other waits for it and then sees its
//! outcome, so no committed child ever lacks its parent. The one
//! difference from PostgreSQL: when both have written before either
//! checks, each waits for the other and the deadlock detector cancels
//! one (40P01) where PostgreSQL would let the child's insert through.

use std::sync::Arc;

use engine::catalog::{ConstraintSpec, FkAction, TableDef};
use engine::indexing::index_key;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::{cast_assign, Value};
use pgtypes::ItemPointer;
use storage::heapam::DirtyState;
use storage::heapam_visibility::VisibilityContext;

use crate::executor::Ectx;

/// One queued foreign key event (see the module doc).
#[derive(Clone, Debug)]
pub enum RiEvent {
    /// A referencing row was inserted, or its key changed: the key must
    /// exist in the referenced table.
    Check {
        /// The referencing table (the version the write used).
        table: Arc<TableDef>,
        /// The constraint's position in `table.constraints`.
        con: usize,
        /// The new key, in the constraint's column order.
        key: Vec<Value>,
    },
    /// A referenced row was deleted (`new` None) or its key changed.
    Parent {
        /// The referenced table.
        parent: Arc<TableDef>,
        /// The referencing table.
        child: Arc<TableDef>,
        /// The constraint's position in `child.constraints`.
        con: usize,
        /// The old key, in the referenced columns' constraint order.
        old: Vec<Value>,
        /// The new key (UPDATE).
        new: Option<Vec<Value>>,
    },
    /// A row event of a deferred constraint trigger (`CREATE CONSTRAINT
    /// TRIGGER … INITIALLY DEFERRED`, or one `SET CONSTRAINTS` deferred):
    /// its function runs at COMMIT like a deferred foreign key check.
    Trigger(crate::trigger::AfterEvent),
}

impl RiEvent {
    /// The constraint the event belongs to.
    fn constraint(&self) -> Option<&ConstraintSpec> {
        match self {
            RiEvent::Check { table, con, .. } => table.constraints.get(*con),
            RiEvent::Parent { child, con, .. } => child.constraints.get(*con),
            RiEvent::Trigger(_) => None,
        }
    }
    /// True if the event is a check that waits for COMMIT.
    fn deferred(&self, ec: &Ectx<'_>) -> bool {
        self.deferred_under(&ec.constraint_modes)
    }

    /// True if the event is a check that waits for COMMIT under `modes`
    /// (`SET CONSTRAINTS`).
    pub fn deferred_under(&self, modes: &crate::executor::ConstraintModes) -> bool {
        if let RiEvent::Trigger(e) = self {
            return e.deferred_under(modes);
        }
        let Some(c) = self.constraint() else {
            return false;
        };
        let is_check = match self {
            RiEvent::Check { .. } => true,
            RiEvent::Trigger(_) => false,
            RiEvent::Parent {
                new, child, con, ..
            } => child
                .constraints
                .get(*con)
                .and_then(|c| c.foreign.as_ref())
                .is_some_and(|f| {
                    let a = if new.is_some() {
                        f.on_update
                    } else {
                        f.on_delete
                    };
                    a == FkAction::NoAction
                }),
        };
        is_check && c.deferrable && modes.deferred(&c.name, c.initially_deferred)
    }
}

/// The key of constraint columns `cols` in `row`; None when a column is
/// NULL (MATCH SIMPLE: such a row references nothing).
fn key_of(row: &[Value], cols: &[usize]) -> Option<Vec<Value>> {
    let mut k = Vec::with_capacity(cols.len());
    for c in cols {
        match row.get(*c) {
            None | Some(Value::Null) => return None,
            Some(v) => k.push(v.clone()),
        }
    }
    Some(k)
}

/// True if the key at `cols` of `row` has both NULL and non-NULL
/// columns (what MATCH FULL refuses).
pub fn mixes_nulls(row: &[Value], cols: &[usize]) -> bool {
    let nulls = cols
        .iter()
        .filter(|c| row.get(**c).is_none_or(Value::is_null))
        .count();
    nulls > 0 && nulls < cols.len()
}

/// 23503 for a MATCH FULL key mixing NULL and non-NULL columns.
pub fn match_full_violation(table: &str, constraint: &str) -> PgError {
    PgError::new(
        sqlstate::FOREIGN_KEY_VIOLATION,
        format!(
            "insert or update on table \"{table}\" violates foreign key constraint \"{constraint}\""
        ),
    )
    .with_detail("MATCH FULL does not allow mixing of null and nonnull key values.")
}

/// Queues the checks a new or updated row of `table` needs (`old`: the
/// version an UPDATE replaced; a key it keeps needs no check). A MATCH
/// FULL key mixing NULLs fails at once.
pub fn queue_child_checks(
    ec: &mut Ectx<'_>,
    table: &Arc<TableDef>,
    row: &[Value],
    old: Option<&[Value]>,
) -> PgResult<()> {
    for (i, c) in table.constraints.iter().enumerate() {
        if c.foreign.is_none() {
            continue;
        }
        if c.match_full && mixes_nulls(row, &c.columns) {
            return Err(match_full_violation(&table.name, &c.name));
        }
        let Some(key) = key_of(row, &c.columns) else {
            continue;
        };
        if let Some(old) = old {
            if key_of(old, &c.columns).as_ref() == Some(&key) {
                continue;
            }
        }
        ec.ri_events.push(RiEvent::Check {
            table: table.clone(),
            con: i,
            key,
        });
    }
    Ok(())
}

/// True if any constraint of `table` is a foreign key (writers skip the
/// queueing work otherwise).
pub fn has_foreign_keys(table: &TableDef) -> bool {
    table.constraints.iter().any(|c| c.foreign.is_some())
}

/// Queues the events a deleted (`new` None) or updated row of `parent`
/// causes in each referencing table of `children`.
pub fn queue_parent_events(
    ec: &mut Ectx<'_>,
    parent: &Arc<TableDef>,
    children: &[Arc<TableDef>],
    old: &[Value],
    new: Option<&[Value]>,
) {
    for child in children {
        for (i, c) in child.constraints.iter().enumerate() {
            let Some(f) = c.foreign.as_ref().filter(|f| f.table == parent.oid) else {
                continue;
            };
            let Some(old_key) = key_of(old, &f.columns) else {
                continue;
            };
            let new_key = match new {
                Some(n) => {
                    let k = key_of(n, &f.columns);
                    if k.as_ref() == Some(&old_key) {
                        continue; // the key did not change
                    }
                    Some(k.unwrap_or_else(|| vec![Value::Null; f.columns.len()]))
                }
                None => None,
            };
            ec.ri_events.push(RiEvent::Parent {
                parent: parent.clone(),
                child: child.clone(),
                con: i,
                old: old_key,
                new: new_key,
            });
        }
    }
}

/// Fires the statement's queued events, and those the actions queue in
/// turn; deferred checks move to `ec.ri_deferred`.
pub fn after_statement(ec: &mut Ectx<'_>) -> PgResult<()> {
    while !ec.ri_events.is_empty() {
        let events = std::mem::take(&mut ec.ri_events);
        // The checks and actions see everything the statement wrote.
        ec.xact.command_counter_increment();
        let mut now = Vec::with_capacity(events.len());
        for ev in events {
            if ev.deferred(ec) {
                ec.ri_deferred.push(ev);
            } else {
                now.push(ev);
            }
        }
        fire_all(ec, now)?;
    }
    Ok(())
}

/// Fires deferred checks (COMMIT, or SET CONSTRAINTS … IMMEDIATE).
pub fn fire_deferred(ec: &mut Ectx<'_>, events: Vec<RiEvent>) -> PgResult<()> {
    ec.xact.command_counter_increment();
    fire_all(ec, events)
}

/// Fires `events` in order; the NO ACTION / RESTRICT checks of one
/// constraint are taken together at the first of them, so a table without
/// an index on the referencing columns is read once for all of them.
fn fire_all(ec: &mut Ectx<'_>, events: Vec<RiEvent>) -> PgResult<()> {
    let mut events: Vec<Option<RiEvent>> = events.into_iter().map(Some).collect();
    for i in 0..events.len() {
        ec.check_interrupts()?;
        let Some(ev) = events[i].take() else { continue };
        let Some((child, con, no_action)) = unreferenced_check(&ev) else {
            fire(ec, &ev)?;
            continue;
        };
        let RiEvent::Parent { parent, old, .. } = ev else {
            continue;
        };
        let mut keys = vec![old];
        for slot in events.iter_mut().skip(i + 1) {
            let same = slot
                .as_ref()
                .and_then(unreferenced_check)
                .is_some_and(|(c, k, n)| c.oid == child.oid && k == con && n == no_action);
            if same {
                if let Some(RiEvent::Parent { old, .. }) = slot.take() {
                    keys.push(old);
                }
            }
        }
        check_unreferenced_all(ec, &parent, &child, con, keys, no_action)?;
    }
    Ok(())
}

/// For a NO ACTION / RESTRICT check of the referenced side: (referencing
/// table, constraint position, NO ACTION).
fn unreferenced_check(ev: &RiEvent) -> Option<(Arc<TableDef>, usize, bool)> {
    let RiEvent::Parent {
        child, con, new, ..
    } = ev
    else {
        return None;
    };
    let f = child.constraints.get(*con)?.foreign.as_ref()?;
    let action = if new.is_some() {
        f.on_update
    } else {
        f.on_delete
    };
    match action {
        FkAction::NoAction => Some((child.clone(), *con, true)),
        FkAction::Restrict => Some((child.clone(), *con, false)),
        _ => None,
    }
}

/// [`check_unreferenced`] for several old keys of one constraint: one read
/// of the referencing table when it has no index on the key columns.
fn check_unreferenced_all(
    ec: &mut Ectx<'_>,
    parent: &Arc<TableDef>,
    child: &Arc<TableDef>,
    con: usize,
    keys: Vec<Vec<Value>>,
    no_action: bool,
) -> PgResult<()> {
    let Some(c) = child.constraints.get(con) else {
        return Ok(());
    };
    if keys.len() == 1 || key_index(child, &c.columns).is_some() {
        for k in &keys {
            check_unreferenced(ec, parent, child, con, k, no_action)?;
        }
        return Ok(());
    }
    let tids = versions_with_keys(ec, child, &c.columns, &keys)?;
    for (k, tids) in keys.iter().zip(tids) {
        // Nothing holds the key: done without a second look. Anything else
        // (a live or in-progress version) goes through the one-key check,
        // which waits, re-reads, and reports.
        if !tids.is_empty() {
            check_unreferenced(ec, parent, child, con, k, no_action)?;
        }
    }
    Ok(())
}

fn fire(ec: &mut Ectx<'_>, ev: &RiEvent) -> PgResult<()> {
    match ev {
        RiEvent::Check { table, con, key } => check_referenced(ec, table, *con, key),
        RiEvent::Trigger(e) => crate::trigger::fire_event(ec, e),
        RiEvent::Parent {
            parent,
            child,
            con,
            old,
            new,
        } => {
            let Some(f) = child.constraints.get(*con).and_then(|c| c.foreign.as_ref()) else {
                return Ok(());
            };
            let action = if new.is_some() {
                f.on_update
            } else {
                f.on_delete
            };
            match action {
                FkAction::NoAction | FkAction::Restrict => {
                    let no_action = action == FkAction::NoAction;
                    check_unreferenced(ec, parent, child, *con, old, no_action)
                }
                FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault => {
                    referential_action(ec, child, *con, old, new.as_deref(), action)
                }
            }
        }
    }
}

/// The referenced table of constraint `con` of `table`, as this session
/// sees it now.
fn referenced_table(ec: &Ectx<'_>, oid: pgtypes::Oid) -> Option<Arc<TableDef>> {
    let t = ec.db.catalog().by_oid(oid)?;
    Some(t.version_for(ec.xact.own().xids, ec.db.clog()))
}

/// `(a, b)=(1, 2)` for messages.
fn key_text(names: &[&str], key: &[Value]) -> String {
    let vals: Vec<String> = key
        .iter()
        .map(|v| {
            if v.is_null() {
                "null".into()
            } else {
                v.to_text_string()
            }
        })
        .collect();
    format!("({})=({})", names.join(", "), vals.join(", "))
}

fn column_names<'a>(t: &'a TableDef, cols: &[usize]) -> Vec<&'a str> {
    cols.iter()
        .filter_map(|c| t.columns.get(*c))
        .map(|c| c.name.as_str())
        .collect()
}

/// A row of `t`'s width with `key` at `cols` (cast to their types) and
/// NULL elsewhere: what `index_key` takes.
fn key_row(t: &TableDef, cols: &[usize], key: &[Value]) -> PgResult<Vec<Value>> {
    let mut row = vec![Value::Null; t.columns.len()];
    for (c, v) in cols.iter().zip(key) {
        let ty = t
            .columns
            .get(*c)
            .ok_or_else(|| PgError::internal("foreign key column out of range"))?
            .ty;
        row[*c] = if v.is_null() {
            Value::Null
        } else {
            cast_assign(v, ty)?
        };
    }
    Ok(row)
}

/// What SnapshotDirty finds among the versions at `tids`.
enum Found {
    Live,
    Wait(pgtypes::TransactionId),
    None,
}

fn dirty_any(ec: &mut Ectx<'_>, t: &TableDef, tids: &[ItemPointer]) -> PgResult<Found> {
    let snapshot = ec.xact.statement_snapshot();
    let own = ec.xact.own();
    let cx = VisibilityContext {
        snapshot: &snapshot,
        own,
        clog: ec.db.clog(),
        procarray: ec.db.procarray(),
        serializable: None,
    };
    let mut wait = None;
    for tid in tids {
        match ec.db.heap().fetch_dirty(t.rel, *tid, &cx)? {
            DirtyState::Live => return Ok(Found::Live),
            DirtyState::InProgress(x) => wait = wait.or(Some(x)),
            DirtyState::Dead => {}
        }
    }
    Ok(match wait {
        Some(x) => Found::Wait(x),
        None => Found::None,
    })
}

/// A ready index of `t` on exactly the columns `cols` (in any order).
fn key_index(t: &TableDef, cols: &[usize]) -> Option<Arc<engine::catalog::IndexDef>> {
    let mut sorted = cols.to_vec();
    sorted.sort_unstable();
    t.indexes.list().into_iter().find(|ix| {
        let mut s = ix.spec.columns.clone();
        s.sort_unstable();
        s == sorted && ix.spec.is_plain() && ix.is_ready()
    })
}

/// For each of `keys`, the versions of `t` whose columns `cols` hold it,
/// from one read of every version of the table.
fn versions_with_keys(
    ec: &Ectx<'_>,
    t: &TableDef,
    cols: &[usize],
    keys: &[Vec<Value>],
) -> PgResult<Vec<Vec<ItemPointer>>> {
    let text = |row: &[Value]| -> String {
        let mut s = String::new();
        for c in cols {
            if let Some(v) = row.get(*c) {
                s.push_str(&v.to_text_string());
            }
            s.push('\u{0}');
        }
        s
    };
    let mut wanted = std::collections::HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        wanted.entry(text(&key_row(t, cols, k)?)).or_insert(i);
    }
    let mut out = vec![Vec::new(); keys.len()];
    let types = t.types();
    let mut cur = Vec::with_capacity(types.len());
    ec.db.heap().scan_all(t.rel, &mut |tid, data| {
        t.decode_into(data, &types, &mut cur, ec.db.heap())?;
        if cols.iter().any(|c| cur.get(*c).is_none_or(Value::is_null)) {
            return Ok(());
        }
        if let Some(&i) = wanted.get(&text(&cur)) {
            out[i].push(tid);
        }
        Ok(())
    })?;
    Ok(out)
}

/// The versions of `t` whose columns `cols` hold `key`: through an index
/// on exactly those columns when there is one, else by reading every
/// version of the table.
fn versions_with_key(
    ec: &Ectx<'_>,
    t: &TableDef,
    cols: &[usize],
    key: &[Value],
) -> PgResult<Vec<ItemPointer>> {
    let row = key_row(t, cols, key)?;
    let ix = key_index(t, cols);
    let mut tids = Vec::new();
    if let Some(ix) = ix {
        let mut kb = Vec::with_capacity(16);
        if index_key(t, &ix, &row, &mut kb)? {
            ix.index.lookup(&kb, &mut |tid| tids.push(tid));
        }
        return Ok(tids);
    }
    let types = t.types();
    let mut cur = Vec::with_capacity(types.len());
    ec.db.heap().scan_all(t.rel, &mut |tid, data| {
        t.decode_into(data, &types, &mut cur, ec.db.heap())?;
        if cols.iter().all(|c| cur.get(*c) == row.get(*c)) {
            tids.push(tid);
        }
        Ok(())
    })?;
    Ok(tids)
}

/// The referencing side: the key of constraint `con` of `table` must be
/// live in the referenced table.
fn check_referenced(
    ec: &mut Ectx<'_>,
    table: &Arc<TableDef>,
    con: usize,
    key: &[Value],
) -> PgResult<()> {
    let Some(c) = table.constraints.get(con) else {
        return Ok(());
    };
    let Some(f) = &c.foreign else {
        return Ok(());
    };
    let violation = |parent: &str| {
        PgError::new(
            sqlstate::FOREIGN_KEY_VIOLATION,
            format!(
                "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                table.name, c.name
            ),
        )
        .with_detail(format!(
            "Key {} is not present in table \"{parent}\".",
            key_text(&column_names(table, &c.columns), key)
        ))
    };
    loop {
        let Some(parent) = referenced_table(ec, f.table) else {
            return Err(violation("?"));
        };
        let tids = versions_with_key(ec, &parent, &f.columns, key)?;
        match dirty_any(ec, &parent, &tids)? {
            Found::Live => return Ok(()),
            Found::Wait(x) => ec.wait_for(x)?,
            Found::None => return Err(violation(&parent.name)),
        }
    }
}

/// NO ACTION / RESTRICT: no referencing row may hold the old key (NO
/// ACTION: unless the referenced table holds the key again).
fn check_unreferenced(
    ec: &mut Ectx<'_>,
    parent: &Arc<TableDef>,
    child: &Arc<TableDef>,
    con: usize,
    old: &[Value],
    no_action: bool,
) -> PgResult<()> {
    let Some(c) = child.constraints.get(con) else {
        return Ok(());
    };
    let Some(f) = &c.foreign else {
        return Ok(());
    };
    loop {
        if no_action {
            let tids = versions_with_key(ec, parent, &f.columns, old)?;
            if matches!(dirty_any(ec, parent, &tids)?, Found::Live) {
                return Ok(());
            }
        }
        let tids = versions_with_key(ec, child, &c.columns, old)?;
        match dirty_any(ec, child, &tids)? {
            Found::None => return Ok(()),
            Found::Wait(x) => ec.wait_for(x)?,
            Found::Live => {
                return Err(PgError::new(
                    sqlstate::FOREIGN_KEY_VIOLATION,
                    format!(
                        "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                        parent.name, c.name, child.name
                    ),
                )
                .with_detail(format!(
                    "Key {} is still referenced from table \"{}\".",
                    key_text(&column_names(parent, &f.columns), old),
                    child.name
                )))
            }
        }
    }
}

fn quote(name: &str) -> String {
    crate::pgcatalog::quote_ident(name)
}

/// CASCADE / SET NULL / SET DEFAULT: one SQL statement over the
/// referencing rows, repeated after waiting for any transaction still
/// inserting such a row.
fn referential_action(
    ec: &mut Ectx<'_>,
    child: &Arc<TableDef>,
    con: usize,
    old: &[Value],
    new: Option<&[Value]>,
    action: FkAction,
) -> PgResult<()> {
    let Some(c) = child.constraints.get(con) else {
        return Ok(());
    };
    let mut params: Vec<Value> = Vec::new();
    let mut types = Vec::new();
    let mut set = Vec::new();
    for (i, col) in c.columns.iter().enumerate() {
        let name = quote(&child.columns[*col].name);
        match (action, new) {
            (FkAction::Cascade, Some(n)) => {
                params.push(n.get(i).cloned().unwrap_or(Value::Null));
                types.push(child.columns[*col].ty);
                set.push(format!("{name} = ${}", params.len()));
            }
            (FkAction::SetNull, _) => set.push(format!("{name} = NULL")),
            (FkAction::SetDefault, _) => set.push(format!("{name} = DEFAULT")),
            _ => {}
        }
    }
    let mut conds = Vec::new();
    for (i, col) in c.columns.iter().enumerate() {
        params.push(old.get(i).cloned().unwrap_or(Value::Null));
        types.push(child.columns[*col].ty);
        conds.push(format!(
            "{} = ${}",
            quote(&child.columns[*col].name),
            params.len()
        ));
    }
    // Qualified: the statement must reach this table whatever the
    // session's search path.
    let schema = ec
        .db
        .catalog()
        .view(&[], ec.db.clog())
        .schema_name(child.namespace)
        .unwrap_or_default();
    let table = format!("{}.{}", quote(&schema), quote(&child.name));
    let sql = if set.is_empty() {
        format!("DELETE FROM {table} WHERE {}", conds.join(" AND "))
    } else {
        format!(
            "UPDATE {table} SET {} WHERE {}",
            set.join(", "),
            conds.join(" AND ")
        )
    };
    let params: Vec<Value> = params
        .iter()
        .zip(&types)
        .map(|(v, t)| {
            if v.is_null() {
                Ok(Value::Null)
            } else {
                cast_assign(v, *t)
            }
        })
        .collect::<PgResult<_>>()?;
    // Bounded: each round follows a transaction that committed meanwhile.
    for _ in 0..1000 {
        crate::executor::run_internal_dml(ec, &sql, &params, types.as_slice())?;
        ec.xact.command_counter_increment();
        // A referencing row some running transaction is inserting was not
        // seen by the statement: wait for it, and act again.
        let tids = versions_with_key(ec, child, &c.columns, old)?;
        match dirty_any(ec, child, &tids)? {
            Found::None => return Ok(()),
            Found::Wait(x) => ec.wait_for(x)?,
            Found::Live if ec.xact.isolation().uses_transaction_snapshot() => {
                return Err(PgError::new(
                    sqlstate::SERIALIZATION_FAILURE,
                    "could not serialize access due to concurrent update",
                ))
            }
            // A key SET NULL / SET DEFAULT left on a row: possible only if
            // the default is the old key; the row's own check decides.
            Found::Live if action != FkAction::Cascade || new.is_some() => return Ok(()),
            Found::Live => {}
        }
    }
    Err(PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    ))
}
