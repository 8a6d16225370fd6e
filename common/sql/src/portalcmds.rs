//! SQL-level cursors (PostgreSQL's `portalcmds.c` and the fetch half of
//! `pquery.c`): `DECLARE`, `FETCH`, `MOVE`, `CLOSE` and the `pg_cursors`
//! view.
//!
//! ## A cursor is a suspended plan
//!
//! DECLARE plans its query, takes the statement snapshot and keeps both
//! with the running executor tree ([`execnodes`]): FETCH pulls the rows it
//! needs from the tree and leaves it where it stopped, so a forward-only
//! cursor over a large table holds one page's rows at a time, whatever
//! its size. Every FETCH runs in a fresh `Ectx` of the session (its
//! cancel flag, `statement_timeout`), under the snapshot of DECLARE: rows
//! written later in the transaction, by this session or others, are not
//! seen. While such a cursor is open the transaction keeps its xmin
//! published between statements (`Xact::set_snapshot_registered`), so
//! pruning keeps the row versions the cursor may still read.
//!
//! ```text
//!            DECLARE                FETCH n                COMMIT
//!   plan + snapshot ──▶ Live{node} ──pull n rows──▶ … ──▶ WITH HOLD: Held{rows}
//!                                                        otherwise: dropped
//! ```
//!
//! ## Positions
//!
//! As in PostgreSQL, a cursor is before the first row (0), on row k, or
//! after the last row (n + 1); `at_start` / `at_end` / `portal_pos` are
//! PortalData's fields and [`Cursor::fetch`] is DoPortalRunFetch over
//! PortalRunSelect, so counts, MOVE's results and the NO SCROLL errors are
//! PostgreSQL's. Going backward needs a source that can give rows again:
//!
//! * a plan PostgreSQL could run backward (ExecSupportsBackwardScan: scans,
//!   Sort, VALUES, function scans, LIMIT / UNION ALL over those) is
//!   re-run from the start under the same snapshot and skipped forward —
//!   memory stays bounded, a backward step costs a rescan;
//! * any other plan of a SCROLL cursor keeps the rows it produced
//!   (PostgreSQL adds a Material node on top);
//! * NO SCROLL cursors (and DECLARE without SCROLL over a plan that
//!   cannot go backward) refuse: 0A000 "cursor can only scan forward".
//!
//! ## Transactions
//!
//! A cursor belongs to the (sub)transaction level that declared it:
//! ROLLBACK TO SAVEPOINT drops those declared after the savepoint, RELEASE
//! hands them to the parent, the end of the transaction drops them —
//! except WITH HOLD cursors, which just before COMMIT run to the end into
//! memory ([`Cursor::persist`]; PersistHoldablePortal: all rows if the
//! cursor can scroll, the rows after its position otherwise) and then live
//! outside transactions until CLOSE or the end of the session. A ROLLBACK
//! drops the WITH HOLD cursors its transaction declared.
//!
//! The session keeps its cursors in a [`Portals`] list, shared with the
//! statements that describe a FETCH (its row description is the cursor's)
//! and with the executor (`pg_cursors`).

use std::sync::Arc;

use parking_lot::Mutex;

use crate::executor::execnodes::{self, Node};
use crate::executor::subplan::QueryState;
use crate::executor::{Ectx, Vis};
use crate::parser::cursorstmt::{FetchDirection, FETCH_ALL};
use crate::planner::plannodes::{NodeKind, PlanNode};
use crate::planner::QueryPlan;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::value::Value;
use server::backend::FieldDescription;

/// A session's open cursors (SQL's and PL/pgSQL's), shared.
pub type Portals = Arc<Mutex<PortalList>>;

/// The open cursors, in the order they were declared, and the counter of
/// `<unnamed portal N>` names (per session, as PostgreSQL's backend-wide
/// one).
#[derive(Default)]
pub struct PortalList {
    list: Vec<Cursor>,
    unnamed: u32,
}

impl PortalList {
    /// A new `<unnamed portal N>` name (PostgreSQL's CreateNewPortal).
    pub fn unnamed_name(&mut self) -> String {
        loop {
            self.unnamed += 1;
            let name = format!("<unnamed portal {}>", self.unnamed);
            if !self.list.iter().any(|c| c.name == name) {
                return name;
            }
        }
    }

    /// Closes the cursor named `name`; false if there is none.
    pub fn close(&mut self, name: &str) -> bool {
        let before = self.list.len();
        self.list.retain(|c| c.name != name);
        self.list.len() != before
    }
}

impl std::ops::Deref for PortalList {
    type Target = Vec<Cursor>;
    fn deref(&self) -> &Vec<Cursor> {
        &self.list
    }
}

impl std::ops::DerefMut for PortalList {
    fn deref_mut(&mut self) -> &mut Vec<Cursor> {
        &mut self.list
    }
}

/// Where fetched rows go (None: MOVE, or rows skipped on the way).
pub type Dest<'d> = Option<&'d mut dyn FnMut(&[Value]) -> PgResult<()>>;

/// One open cursor (PostgreSQL's PortalData, for a cursor).
pub struct Cursor {
    /// Its name.
    pub name: String,
    /// The statement that declared it (pg_cursors.statement).
    pub statement: String,
    /// WITH HOLD.
    pub holdable: bool,
    /// BINARY.
    pub binary: bool,
    /// It may move backward (SCROLL, or a plan that can).
    pub scrollable: bool,
    /// statement_timestamp() of DECLARE.
    pub creation_time: i64,
    /// Its result columns.
    pub columns: Vec<FieldDescription>,
    /// The tables and views its query names.
    pub reads: Vec<pgtypes::Oid>,
    /// The subtransaction level that owns it; None once a WITH HOLD
    /// cursor outlived its transaction.
    pub depth: Option<usize>,
    at_start: bool,
    at_end: bool,
    portal_pos: u64,
    /// The executor's position: 0 before the first row, k on row k,
    /// total + 1 after the last.
    pos: u64,
    source: Source,
}

/// Where a cursor's rows come from.
enum Source {
    /// The plan, running in the declaring transaction.
    Live(Box<Live>),
    /// Materialized at COMMIT: `rows[i]` is row `base + 1 + i`; the last.
    Held { rows: Vec<Vec<Value>>, base: u64 },
}

/// How a live cursor gives rows again.
enum Replay {
    /// Not at all (NO SCROLL).
    Forward,
    /// By running the plan again from the start.
    Rescan,
    /// From the rows it kept.
    Keep(Vec<Vec<Value>>),
}

/// A plan suspended between FETCHes.
///
/// Field order matters: `node` borrows `plan` and `vis` (through the
/// `Arc`s, whose contents never move) and is dropped first.
struct Live {
    node: Option<Node<'static>>,
    state: Option<Box<QueryState>>,
    /// Rows the current run of the plan produced.
    produced: u64,
    /// The current run ended.
    done: bool,
    replay: Replay,
    params: Vec<Value>,
    vis: Arc<Vis>,
    plan: Arc<QueryPlan>,
}

// SAFETY: `Node<'static>` is `Box<dyn ExecNode>` without a `Send` bound
// only because the trait object does not carry one; every node type holds
// plan references, values and heap-scan buffers (no `Rc`, no cells), and
// the session that owns the cursor moves between threads only as a whole.
unsafe impl Send for Live {}

impl Live {
    /// Starts (or restarts) the plan.
    fn start(&mut self) {
        self.node = None;
        let plan: &QueryPlan = &self.plan;
        let vis: &Vis = &self.vis;
        let node = execnodes::build(&plan.root, vis);
        // SAFETY: `node` borrows `*self.plan` and `*self.vis`, which live
        // in `Arc`s this struct owns and never replaces; `node` is dropped
        // before them (field order, and `start` drops the old node first).
        let node: Node<'static> = unsafe { std::mem::transmute::<Node<'_>, Node<'static>>(node) };
        self.node = Some(node);
        self.state = plan
            .shared
            .needs_state()
            .then(|| Box::new(QueryState::new(plan.shared.clone(), vis)));
        self.produced = 0;
        self.done = false;
    }

    /// The next row of the current run.
    fn pull(&mut self, ec: &mut Ectx<'_>) -> PgResult<Option<Vec<Value>>> {
        if self.done {
            return Ok(None);
        }
        let Some(node) = self.node.as_mut() else {
            return Ok(None);
        };
        let saved = std::mem::replace(&mut ec.query, self.state.take());
        let r = node.next(ec);
        self.state = std::mem::replace(&mut ec.query, saved);
        if r? {
            self.produced += 1;
            let row = node.row().to_vec();
            if let Replay::Keep(kept) = &mut self.replay {
                kept.push(row.clone());
            }
            Ok(Some(row))
        } else {
            self.done = true;
            self.node = None;
            Ok(None)
        }
    }

    /// Rows `from ..= to` (1-based) in order, fewer at the end.
    fn rows(
        &mut self,
        ec: &mut Ectx<'_>,
        from: u64,
        to: u64,
        emit: &mut dyn FnMut(&[Value]) -> PgResult<()>,
    ) -> PgResult<u64> {
        let mut n = 0;
        if let Replay::Keep(kept) = &self.replay {
            let have = kept.len() as u64;
            let mut k = from;
            while k <= to && k <= have {
                if let Replay::Keep(kept) = &self.replay {
                    emit(&kept[(k - 1) as usize])?;
                }
                n += 1;
                k += 1;
            }
            while k <= to {
                match self.pull(ec)? {
                    Some(row) => emit(&row)?,
                    None => break,
                }
                n += 1;
                k += 1;
            }
            return Ok(n);
        }
        if from <= self.produced {
            match self.replay {
                Replay::Rescan => self.start(),
                _ => return Err(PgError::internal("cursor cannot give rows again")),
            }
        }
        while self.produced + 1 < from {
            if self.pull(ec)?.is_none() {
                return Ok(0);
            }
        }
        while self.produced < to {
            match self.pull(ec)? {
                Some(row) => emit(&row)?,
                None => break,
            }
            n += 1;
        }
        Ok(n)
    }
}

/// ExecSupportsBackwardScan over hotpair's plan nodes.
fn supports_backward(node: &PlanNode) -> bool {
    match &node.kind {
        NodeKind::SeqScan { .. }
        | NodeKind::IndexScan { .. }
        | NodeKind::FunctionScan { .. }
        | NodeKind::Unnest { .. }
        | NodeKind::JsonSrf { .. }
        | NodeKind::UserFunction { .. }
        | NodeKind::SequenceScan { .. }
        | NodeKind::Values { .. }
        | NodeKind::CteScan { .. }
        | NodeKind::Sort { .. } => true,
        NodeKind::Filter { input, .. }
        | NodeKind::Project { input, .. }
        | NodeKind::Ordinality { input }
        | NodeKind::Limit { input, .. } => supports_backward(input),
        NodeKind::Append { inputs } => inputs.iter().all(supports_backward),
        _ => false,
    }
}

/// What DECLARE gives [`Cursor::declare`].
pub struct Declared {
    /// Name.
    pub name: String,
    /// pg_cursors.statement.
    pub statement: String,
    /// WITH HOLD.
    pub holdable: bool,
    /// BINARY.
    pub binary: bool,
    /// SCROLL / NO SCROLL / neither.
    pub scroll: Option<bool>,
    /// DECLARE's statement_timestamp().
    pub creation_time: i64,
    /// The declaring subtransaction level.
    pub depth: usize,
    /// The tables and views its query names (DDL on them fails while it
    /// runs).
    pub reads: Vec<pgtypes::Oid>,
}

impl Cursor {
    /// A cursor over `plan`, read under `vis`, not started yet.
    pub fn declare(d: Declared, plan: QueryPlan, vis: Vis, params: Vec<Value>) -> Cursor {
        let backward = supports_backward(&plan.root);
        let scrollable = d.scroll.unwrap_or(backward);
        let replay = match (scrollable, backward) {
            (false, _) => Replay::Forward,
            (true, true) => Replay::Rescan,
            (true, false) => Replay::Keep(Vec::new()),
        };
        let mut live = Live {
            node: None,
            state: None,
            produced: 0,
            done: false,
            replay,
            params,
            vis: Arc::new(vis),
            plan: Arc::new(plan),
        };
        live.start();
        let columns = live.plan.columns.clone();
        Cursor::new(d, scrollable, columns, Source::Live(Box::new(live)))
    }

    /// A cursor before its first row.
    fn new(
        d: Declared,
        scrollable: bool,
        columns: Vec<FieldDescription>,
        source: Source,
    ) -> Cursor {
        Cursor {
            name: d.name,
            statement: d.statement,
            holdable: d.holdable,
            binary: d.binary,
            scrollable,
            creation_time: d.creation_time,
            columns,
            reads: d.reads,
            depth: Some(d.depth),
            at_start: true,
            at_end: false,
            portal_pos: 0,
            pos: 0,
            source,
        }
    }

    /// A cursor over rows already computed (a PL/pgSQL OPEN runs its
    /// query at once): it belongs to transaction level `depth` and closes
    /// at the end of the transaction like a declared one.
    pub fn materialized(
        d: Declared,
        columns: Vec<FieldDescription>,
        rows: Vec<Vec<Value>>,
    ) -> Cursor {
        let scrollable = d.scroll.unwrap_or(true);
        Cursor::new(d, scrollable, columns, Source::Held { rows, base: 0 })
    }

    /// True while it runs in its transaction (it needs that
    /// transaction's snapshot kept).
    pub fn is_live(&self) -> bool {
        matches!(self.source, Source::Live(_))
    }

    /// What its FETCHes run with: the snapshot and parameters of DECLARE
    /// (None once held).
    pub fn exec_inputs(&self) -> Option<(Arc<Vis>, Vec<Value>)> {
        match &self.source {
            Source::Live(l) => Some((l.vis.clone(), l.params.clone())),
            Source::Held { .. } => None,
        }
    }

    /// pg_cursors' row.
    pub fn view_row(&self) -> Vec<Value> {
        vec![
            Value::text(&self.name),
            Value::text(&self.statement),
            Value::Bool(self.holdable),
            Value::Bool(self.binary),
            Value::Bool(self.scrollable),
            Value::TimestampTz(self.creation_time),
        ]
    }

    /// Rows `from ..= to` in order.
    fn source_rows(
        &mut self,
        ec: &mut Ectx<'_>,
        from: u64,
        to: u64,
        emit: &mut dyn FnMut(&[Value]) -> PgResult<()>,
    ) -> PgResult<u64> {
        if from > to || from == 0 {
            return Ok(0);
        }
        match &mut self.source {
            Source::Live(l) => l.rows(ec, from, to, emit),
            Source::Held { rows, base } => {
                if from <= *base {
                    return Err(PgError::internal("cursor cannot give rows again"));
                }
                let first = (from - *base - 1) as usize;
                let mut n = 0;
                for row in rows.iter().skip(first) {
                    if *base + 1 + (first as u64) + n > to {
                        break;
                    }
                    emit(row)?;
                    n += 1;
                }
                Ok(n)
            }
        }
    }

    fn no_scroll_error() -> PgError {
        PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "cursor can only scan forward",
        )
        .with_hint("Declare it with SCROLL option to enable backward scan.")
    }

    /// PortalRunSelect: up to `count` rows (0: none; [`FETCH_ALL`]: all)
    /// forward or backward from the current position.
    fn run_select(
        &mut self,
        ec: &mut Ectx<'_>,
        forward: bool,
        count: i64,
        dest: Dest<'_>,
    ) -> PgResult<u64> {
        let mut sink_none = |_: &[Value]| Ok(());
        let emit: &mut dyn FnMut(&[Value]) -> PgResult<()> = match dest {
            Some(d) => d,
            None => &mut sink_none,
        };
        if forward {
            if self.at_end || count <= 0 {
                return Ok(0);
            }
            let want = count as u64;
            let to = self.pos.saturating_add(want);
            let n = self.source_rows(ec, self.pos + 1, to, emit)?;
            if n > 0 {
                self.at_start = false;
            }
            if count == FETCH_ALL || n < want {
                self.at_end = true;
                self.pos += n + 1;
            } else {
                self.pos += n;
            }
            self.portal_pos += n;
            Ok(n)
        } else {
            if !self.scrollable {
                return Err(Cursor::no_scroll_error());
            }
            if self.at_start || count <= 0 {
                return Ok(0);
            }
            let want = count as u64;
            let first = self.pos.saturating_sub(want).max(1);
            let mut rows = Vec::new();
            let last = self.pos.saturating_sub(1);
            self.source_rows(ec, first, last, &mut |r| {
                rows.push(r.to_vec());
                Ok(())
            })?;
            let n = rows.len() as u64;
            for r in rows.iter().rev() {
                emit(r)?;
            }
            if n > 0 && self.at_end {
                self.at_end = false;
                self.portal_pos += 1;
            }
            if count == FETCH_ALL || n < want {
                self.at_start = true;
                self.portal_pos = 0;
                self.pos = 0;
            } else {
                self.portal_pos -= n;
                self.pos -= n;
            }
            Ok(n)
        }
    }

    /// DoPortalRewind.
    fn rewind(&mut self) -> PgResult<()> {
        if self.at_start && !self.at_end {
            return Ok(());
        }
        if !self.scrollable {
            return Err(Cursor::no_scroll_error());
        }
        self.at_start = true;
        self.at_end = false;
        self.portal_pos = 0;
        self.pos = 0;
        Ok(())
    }

    /// DoPortalRunFetch: FETCH (rows to `dest`) or MOVE (`dest` None);
    /// the count for the command tag.
    pub fn fetch(
        &mut self,
        ec: &mut Ectx<'_>,
        mut direction: FetchDirection,
        mut count: i64,
        dest: Dest<'_>,
    ) -> PgResult<u64> {
        use FetchDirection::*;
        let is_move = dest.is_none();
        match direction {
            Forward if count < 0 => {
                direction = Backward;
                count = -count;
            }
            Backward if count < 0 => {
                direction = Forward;
                count = -count;
            }
            Absolute => {
                if count > 0 {
                    let c = count as u64;
                    if c - 1 < self.portal_pos / 2 {
                        self.rewind()?;
                        if count > 1 {
                            self.run_select(ec, true, count - 1, None)?;
                        }
                    } else {
                        let mut pos = self.portal_pos;
                        if self.at_end {
                            pos += 1;
                        }
                        if c <= pos {
                            self.run_select(ec, false, (pos - c + 1) as i64, None)?;
                        } else if c > pos + 1 {
                            self.run_select(ec, true, (c - pos - 1) as i64, None)?;
                        }
                    }
                    return self.run_select(ec, true, 1, dest);
                } else if count < 0 {
                    self.run_select(ec, true, FETCH_ALL, None)?;
                    if count < -1 {
                        self.run_select(ec, false, -count - 1, None)?;
                    }
                    return self.run_select(ec, false, 1, dest);
                } else {
                    self.rewind()?;
                    return self.run_select(ec, true, 0, dest);
                }
            }
            Relative => {
                if count > 0 {
                    if count > 1 {
                        self.run_select(ec, true, count - 1, None)?;
                    }
                    return self.run_select(ec, true, 1, dest);
                } else if count < 0 {
                    if count < -1 {
                        self.run_select(ec, false, -count - 1, None)?;
                    }
                    return self.run_select(ec, false, 1, dest);
                }
                direction = Forward;
            }
            _ => {}
        }
        let mut forward = direction == Forward;
        if count == 0 {
            let on_row = !self.at_start && !self.at_end;
            if is_move {
                return Ok(on_row as u64);
            }
            if on_row {
                self.run_select(ec, false, 1, None)?;
                count = 1;
                forward = true;
            }
        }
        if !forward && count == FETCH_ALL && is_move {
            let mut result = self.portal_pos;
            if result > 0 && !self.at_end {
                result -= 1;
            }
            self.rewind()?;
            return Ok(result);
        }
        self.run_select(ec, forward, count, dest)
    }

    /// PersistHoldablePortal, just before COMMIT: the rows a WITH HOLD
    /// cursor can still return, into memory (all of them if it scrolls,
    /// the ones after its position otherwise).
    pub fn persist(&mut self, ec: &mut Ectx<'_>) -> PgResult<()> {
        let Source::Live(live) = &mut self.source else {
            return Ok(());
        };
        let mut rows = Vec::new();
        let base;
        if self.scrollable {
            base = 0;
            if !matches!(live.replay, Replay::Keep(_)) {
                live.start();
            }
            live.rows(ec, 1, u64::MAX, &mut |r| {
                rows.push(r.to_vec());
                Ok(())
            })?;
        } else {
            base = live.produced;
            if !self.at_end {
                live.rows(ec, base + 1, u64::MAX, &mut |r| {
                    rows.push(r.to_vec());
                    Ok(())
                })?;
            }
        }
        self.source = Source::Held { rows, base };
        Ok(())
    }
}

/// FETCH / MOVE on the open cursor `name` from inside a function (a
/// PL/pgSQL FETCH, which may name a cursor its caller declared): the
/// cursor is taken out of the list while it runs (its plan may read
/// pg_cursors) and runs in a nested context with its own parameters and
/// snapshot. Returns the count and the cursor's columns.
pub fn fetch_named(
    ec: &mut Ectx<'_>,
    portals: &Portals,
    name: &str,
    direction: FetchDirection,
    count: i64,
    dest: Dest<'_>,
) -> PgResult<(u64, Vec<FieldDescription>)> {
    let (i, mut cursor) = {
        let mut g = portals.lock();
        let i = g
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| no_such_cursor(name))?;
        (i, g.remove(i))
    };
    let r = match cursor.exec_inputs() {
        Some((vis, params)) => {
            let mut sub = ec.nested(&params, vis.snapshot.clone());
            let r = cursor.fetch(&mut sub, direction, count, dest);
            let notices = std::mem::take(&mut sub.notices);
            drop(sub);
            ec.notices.extend(notices);
            r
        }
        None => cursor.fetch(ec, direction, count, dest),
    };
    let columns = cursor.columns.clone();
    let mut g = portals.lock();
    let at = i.min(g.len());
    g.insert(at, cursor);
    r.map(|n| (n, columns))
}

/// 34000.
pub fn no_such_cursor(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_CURSOR_NAME,
        format!("cursor \"{name}\" does not exist"),
    )
}

/// 42P03.
pub fn duplicate_cursor(name: &str) -> PgError {
    PgError::new(
        sqlstate::DUPLICATE_CURSOR,
        format!("cursor \"{name}\" already exists"),
    )
}

/// The result columns of cursor `name`, if it is open (a FETCH's row
/// description).
pub fn columns_of(portals: &Portals, name: &str) -> Option<Vec<FieldDescription>> {
    portals
        .lock()
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.columns.clone())
}

/// pg_cursors' rows.
pub fn view_rows(portals: &Portals) -> Vec<Vec<Value>> {
    portals.lock().iter().map(Cursor::view_row).collect()
}
