//! The executor: runs bound plans against the heap and the indexes.
//!
//! ## Contexts
//!
//! A statement runs with two pieces of state kept apart so the borrow
//! checker lets a heap scan call back into expression evaluation:
//!
//! * [`Vis`] — what the statement sees: its snapshot, a copy of the
//!   session's own xids and the command id at statement start. Heap reads
//!   build a [`VisibilityContext`] from it.
//! * [`Ectx`] — the mutable side: the session's [`Xact`] (xid assignment,
//!   waits), the cancel flag, parameters, timestamps. It implements
//!   [`EvalContext`] for session functions (`txid_current()`,
//!   `pg_current_snapshot()`, `now()`, `pg_sleep()`, `current_setting()`).
//!
//! Writes build a fresh context from `Xact::own()` (it includes an xid
//! assigned mid-statement), reads use [`Vis`]: a row this command inserted
//! is invisible either way (cmin = curcid), which is PostgreSQL's Halloween
//! protection.
//!
//! ## Writers (DESIGN §3)
//!
//! UPDATE / DELETE call `Heap::update` / `Heap::delete` and act on the
//! [`TmResult`]:
//!
//! ```text
//!   Ok             → maintain indexes, count the row
//!   SelfModified   → skip (this command already changed it)
//!   BeingModified  → wait for xmax (XactLockTableWait, 40P01 on deadlock),
//!                    then retry the same version
//!   Updated{ctid}  → READ COMMITTED: fetch the newer version, re-check the
//!                    WHERE clause on it, recompute the new row from it and
//!                    retry there (EvalPlanQual-lite);
//!                    REPEATABLE READ: 40001
//!   Deleted        → READ COMMITTED: skip; REPEATABLE READ: 40001
//! ```
//!
//! ## Unique indexes
//!
//! A new row version's key is checked against every version under that
//! key with SnapshotDirty (`Heap::fetch_dirty`): Live → 23505,
//! InProgress(xid) → wait for xid and re-check, Dead → ignore. The check and
//! the index insertion run under the index's stripe lock for the key, so
//! two inserters of one key serialise: the second sees the first's entry,
//! waits for its transaction, and fails with 23505 if it committed. An
//! UPDATE that keeps the key skips the check (its old version still holds
//! the key against everyone else).
//!
//! ## INSERT … ON CONFLICT
//!
//! Speculative insertion on the same machinery ([`insert_on_conflict`]):
//! pre-check the arbiter keys with SnapshotDirty (wait for a running
//! inserter, then check again), take the conflict path on a live version,
//! otherwise insert the heap tuple and claim each arbiter key with a
//! re-check under its stripe lock; a key taken in between makes the tuple
//! dead at once (`Heap::kill_own_insert`, xmax = its own xmin) and the row
//! starts over. No stripe lock is held across the heap insert (pruning
//! takes a buffer lock, then stripes).
//!
//! Locks: a shared [`engine::catalog::RelLock`] per table for the
//! statement, an index stripe briefly; none is held while waiting for a
//! transaction except the relation lock (which never blocks other
//! statements).

pub mod agg;
pub mod ctescan;
pub mod execnodes;
pub mod hashjoin;
pub mod mergejoin;
pub mod nestloop;
pub mod scan;
pub mod setop;
pub mod sort;
pub mod spill;
pub mod subplan;
pub mod window;

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::expr::{eval, eval_filter, EvalContext, Expr};
use crate::planner::{Access, InsertSource, Plan, QueryPlan};
use engine::catalog::{IndexDef, TableDef};
use engine::indexing::{header_dead_to_all, index_key};
use engine::pg_trigger::TriggerRel;
use engine::xact::Xact;
use engine::Engine;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::{RegKind, SqlType};
use pgtypes::value::{cast_assign, PgSnapshot, Value};
use pgtypes::{CommandId, ItemPointer, TransactionId};
use server::backend::FieldDescription;
use storage::heapam::{DirtyState, TmResult};
use storage::heapam_visibility::{OwnXact, VisibilityContext};
use storage::hio::BulkInsertState;
use storage::keycodec::encode_key_value;
use storage::rowcodec::{encode_row, toasted_fields, NoToast};
use storage::toast::{self, Formed, ToastCompression, Toaster};
use txn::lmgr::WaitLimits;
use txn::predicate::{SxactId, Target};
use txn::snapshot::Snapshot;

/// Rows between cancel / timeout checks.
const CHECK_EVERY: u32 = 256;
/// Rows per `Heap::multi_insert` batch (INSERT … SELECT, COPY).
pub const BATCH_ROWS: usize = 1000;

/// Buffers a session's finished executor nodes hand back
/// ([`execnodes::ExecNode::recycle`]) for the nodes of its next
/// statements: a prepared point query then allocates no lookup key, tid
/// list or rows per execution, as nothing else about it changes between
/// executions. Only capacity is kept — a buffer is cleared when it comes
/// back — so nothing one statement read reaches the next; the pool is
/// the session's own and keeps a few small buffers of each kind.
#[derive(Default)]
pub struct ExecBuffers {
    rows: Vec<Vec<Value>>,
    bytes: Vec<Vec<u8>>,
    tids: Vec<Vec<ItemPointer>>,
}

/// Buffers of each kind [`ExecBuffers`] keeps.
const POOLED: usize = 4;
/// Elements a pooled buffer may hold room for: a large one (a range
/// scan's tid batch, a long key) goes back to the allocator.
const POOLED_CAPACITY: usize = 256;

/// Keeps `buf`, cleared, in `pool` if it is worth keeping.
fn pool_put<T>(pool: &mut Vec<Vec<T>>, mut buf: Vec<T>) {
    if buf.capacity() == 0 || buf.capacity() > POOLED_CAPACITY || pool.len() >= POOLED {
        return;
    }
    buf.clear();
    pool.push(buf);
}

impl ExecBuffers {
    /// An empty row buffer.
    pub fn row(&mut self) -> Vec<Value> {
        self.rows.pop().unwrap_or_default()
    }
    /// An empty byte buffer (an index key).
    pub fn bytes(&mut self) -> Vec<u8> {
        self.bytes.pop().unwrap_or_default()
    }
    /// An empty tid list.
    pub fn tids(&mut self) -> Vec<ItemPointer> {
        self.tids.pop().unwrap_or_default()
    }
    /// Takes a row buffer back.
    pub fn put_row(&mut self, row: Vec<Value>) {
        pool_put(&mut self.rows, row);
    }
    /// Takes a byte buffer back.
    pub fn put_bytes(&mut self, bytes: Vec<u8>) {
        pool_put(&mut self.bytes, bytes);
    }
    /// Takes a tid list back.
    pub fn put_tids(&mut self, tids: Vec<ItemPointer>) {
        pool_put(&mut self.tids, tids);
    }
}

/// What a statement sees (see the module doc).
pub struct Vis {
    /// The statement's snapshot.
    pub snapshot: Arc<Snapshot>,
    /// The session's own xids at statement start.
    pub own: Vec<TransactionId>,
    /// The command id of this statement.
    pub curcid: CommandId,
    /// SERIALIZABLE: the transaction's predicate-lock record; reads take
    /// SIRead locks and check for rw-conflicts under it.
    pub serializable: Option<SxactId>,
}

impl Vis {
    /// Takes the statement snapshot from `xact`.
    pub fn take(xact: &mut Xact) -> Vis {
        let snapshot = xact.statement_snapshot();
        Vis::with_snapshot(xact, snapshot)
    }

    /// Takes the statement snapshot with SERIALIZABLE's checks: refused
    /// during recovery, READ ONLY DEFERRABLE waits for a safe snapshot
    /// (`cancel` ends the wait).
    pub fn take_checked(xact: &mut Xact, cancel: &AtomicBool) -> PgResult<Vis> {
        let snapshot = xact.checked_statement_snapshot(cancel)?;
        Ok(Vis::with_snapshot(xact, snapshot))
    }

    fn with_snapshot(xact: &Xact, snapshot: Arc<Snapshot>) -> Vis {
        let serializable = xact.sxact();
        let own = xact.own();
        Vis {
            snapshot,
            own: own.xids.to_vec(),
            curcid: own.curcid,
            serializable,
        }
    }

    /// PredicateLockRelation: a SERIALIZABLE scan of all of `table` reads
    /// every row, present and future.
    pub fn lock_relation(&self, db: &Engine, table: &TableDef) {
        if let Some(me) = self.serializable {
            db.procarray()
                .predicate()
                .lock(me, Target::Relation(table.rel));
        }
    }

    /// A SERIALIZABLE read of a range of `index`'s keys (a lookup of its
    /// leading columns): a lock on the whole index, which every insert
    /// into it checks.
    pub fn lock_index(&self, db: &Engine, index: &IndexDef) {
        if let Some(me) = self.serializable {
            db.procarray()
                .predicate()
                .lock(me, Target::Index(index.spec.oid));
        }
    }

    /// A SERIALIZABLE index lookup of `key` in `index`: a lock on the key,
    /// found or not (the btree leaf page's lock in PostgreSQL).
    pub fn lock_index_key(&self, db: &Engine, index: &IndexDef, key: &[u8]) {
        if let Some(me) = self.serializable {
            db.procarray()
                .predicate()
                .lock(me, Target::IndexKey(index.spec.oid, key_hash(key)));
        }
    }

    /// The visibility context for reads.
    pub fn cx<'a>(&'a self, db: &'a Engine) -> VisibilityContext<'a> {
        VisibilityContext {
            snapshot: &self.snapshot,
            own: OwnXact {
                xids: &self.own,
                curcid: self.curcid,
            },
            clog: db.clog(),
            procarray: db.procarray(),
            serializable: self.serializable,
        }
    }
}

/// The hash an index-key SIRead lock is taken and checked under.
pub fn key_hash(key: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    h.finish()
}

/// CheckForSerializableConflictIn for a SERIALIZABLE writer: `targets`
/// (finest first) are being written.
pub fn serializable_conflict_in(ec: &Ectx<'_>, targets: &[Target]) -> PgResult<()> {
    match ec.xact.sxact() {
        Some(me) => ec.db.procarray().predicate().check_conflict_in(me, targets),
        None => Ok(()),
    }
}

/// `SET CONSTRAINTS { ALL | name, … } { DEFERRED | IMMEDIATE }` in effect
/// for the transaction (for deferrable constraints only).
#[derive(Clone, Debug, Default)]
pub struct ConstraintModes {
    /// `SET CONSTRAINTS ALL …`: deferred (true) or immediate.
    pub all: Option<bool>,
    /// Per constraint name, set after the last `ALL`.
    pub named: Vec<(String, bool)>,
}

impl ConstraintModes {
    /// Whether constraint `name` (deferred by default if
    /// `initially_deferred`) is deferred now.
    pub fn deferred(&self, name: &str, initially_deferred: bool) -> bool {
        if let Some((_, d)) = self.named.iter().rev().find(|(n, _)| n == name) {
            return *d;
        }
        self.all.unwrap_or(initially_deferred)
    }
}

/// Which signal pg_signal_backend's checks are for (the messages differ).
#[derive(Clone, Copy)]
enum Signal {
    /// pg_cancel_backend().
    Cancel,
    /// pg_terminate_backend().
    Terminate,
}

/// Session settings as functions see them.
pub trait SettingsView {
    /// `current_setting(name)`.
    fn get_setting(&self, name: &str) -> Option<String>;
    /// current_user: `role` unless it is `none`, else
    /// `session_authorization` (every statement a function runs asks).
    fn current_user(&self) -> String {
        match self.get_setting("role") {
            Some(r) if r != "none" => r,
            _ => self
                .get_setting("session_authorization")
                .unwrap_or_else(|| "postgres".to_string()),
        }
    }
    /// `lock_timeout`, when set (not 0).
    fn lock_timeout(&self) -> Option<Duration>;
    /// Every setting: (name, value, description), as `SHOW ALL` lists them.
    fn show_all(&self) -> Vec<(String, String, String)> {
        Vec::new()
    }
}

/// The mutable side of a running statement (see the module doc).
pub struct Ectx<'a> {
    /// The node.
    pub db: &'a Engine,
    /// The session's transaction.
    pub xact: &'a mut Xact,
    /// CancelRequest flag.
    pub cancel: &'a AtomicBool,
    /// Bound parameter values.
    pub params: &'a [Value],
    /// Session settings.
    pub settings: &'a dyn SettingsView,
    /// The schemas unqualified names resolve in (the session's
    /// `search_path`, resolved; `engine::namespace`).
    pub path: Arc<[pgtypes::Oid]>,
    /// statement_timestamp().
    pub stmt_ts: i64,
    /// transaction_timestamp().
    pub xact_ts: i64,
    /// statement_timeout deadline.
    pub deadline: Option<Instant>,
    /// pg_backend_pid().
    pub backend_pid: i32,
    /// The statement's snapshot (pg_current_snapshot()).
    pub snapshot: Option<Arc<Snapshot>>,
    /// Subplans, CTEs and executor parameters of the running query
    /// (installed by [`run_query`] when its plan has any).
    pub query: Option<Box<subplan::QueryState>>,
    /// The session's currval / lastval state (None: sequence functions
    /// fail, as outside a session).
    pub sequences: Option<&'a mut crate::sequence::SessionSequences>,
    /// The session's plans of statements functions run (`crate::spi`;
    /// None: plan every time).
    pub plans: Option<&'a mut crate::spi::PlanCache>,
    /// The session's executor buffers (None: nodes allocate their own).
    pub buffers: Option<&'a mut ExecBuffers>,
    /// Foreign key events the statement queued, fired when its writes are
    /// done (`crate::ri_triggers`).
    pub ri_events: Vec<crate::ri_triggers::RiEvent>,
    /// Checks of deferred constraints, for the session to fire at COMMIT.
    pub ri_deferred: Vec<crate::ri_triggers::RiEvent>,
    /// AFTER ROW trigger events the statement queued, fired when its
    /// writes are done (`crate::trigger`).
    pub trigger_events: Vec<crate::trigger::AfterEvent>,
    /// `SET CONSTRAINTS` of the transaction.
    pub constraint_modes: ConstraintModes,
    /// Rows the statement wrote to tables with transition-table triggers:
    /// (table, event, OLD, NEW) (`crate::trigger`).
    pub transition_rows: Vec<crate::trigger::TransitionRow>,
    /// User triggers do not fire (the DELETE a TRUNCATE in a transaction
    /// block runs; its TRUNCATE triggers fire instead).
    pub skip_user_triggers: bool,
    /// WARNINGs and NOTICEs functions raised, for the session to send
    /// once the statement is done.
    pub notices: Vec<PgError>,
    /// Settings a running function's SET clauses and SECURITY DEFINER
    /// (`role`) hold for its call, by canonical name, innermost last;
    /// they shadow the session's (`crate::fmgr`).
    pub function_settings: Vec<(String, String)>,
    /// Bytes of temporary files the session holds (`temp_file_limit`;
    /// `spill`); None outside a session (a context of its own is counted
    /// alone). An Option so a statement's context allocates nothing.
    pub temp_usage: Option<Arc<spill::TempUsage>>,
    /// Set while a keyed catalog scan builds its rows
    /// ([`crate::pgcatalog::ViewContext::relation_key`]).
    view_key: Option<u32>,
    /// The same by name ([`crate::pgcatalog::ViewContext::relation_name_key`]).
    view_name_key: Option<String>,
    /// The session's cursors (`crate::portalcmds`), for pg_cursors.
    pub portals: Option<crate::portalcmds::Portals>,
    /// A procedure or DO block running here may COMMIT and ROLLBACK
    /// (PostgreSQL's non-atomic context): set by the session for a CALL
    /// or DO outside a transaction block, kept by a CALL inside one,
    /// cleared by every function call and trigger (`crate::fmgr`).
    pub nonatomic: bool,
    /// Rows a node's filter rejected (scans, Result, joins' other
    /// conditions: `removed[1]`); EXPLAIN ANALYZE's wrapper
    /// (`execnodes::Instrumented`) takes what one node added. Counting
    /// is a plain add, so nodes count whether or not anyone reads it.
    pub removed: [u64; 2],
    /// The shared page counters of the parallel scans this participant
    /// reads its share of (set while a parallel aggregation's input runs,
    /// `agg::Parallel`); each `parallel` SeqScan takes its own.
    pub parallel_scan: Option<Arc<scan::ParallelScans>>,
    /// Parallel scans read every page (a hashed side built together
    /// that did not fit is built again by each participant alone).
    pub serial_scans: bool,
    /// Where the participants of a parallel aggregation meet to emit the
    /// unmatched inner rows of a right or full hash join once
    /// (`hashjoin::ParallelJoins`); set with `parallel_scan`.
    pub parallel_joins: Option<Arc<hashjoin::ParallelJoins>>,
    /// A parallel aggregation's session holds the shared relation lock of
    /// every table its participants read (`agg::Parallel`): their scans
    /// do not take it again, which could wait behind a TRUNCATE / DROP
    /// queued for the session's own lock and never end.
    pub locks_held: bool,
    ticks: u32,
    catalog_snapshot: std::cell::OnceCell<Arc<crate::pgcatalog::CatalogSnapshot>>,
}

impl<'a> Ectx<'a> {
    /// A context for a statement run from inside this one (a function's
    /// SPI call, a nested DML): the same transaction, session state,
    /// timestamps, deadline and SPI plan cache, its own `params`, reading
    /// under `snapshot`.
    pub fn nested<'b>(&'b mut self, params: &'b [Value], snapshot: Arc<Snapshot>) -> Ectx<'b> {
        let mut sub = Ectx::new(
            self.db,
            &mut *self.xact,
            self.cancel,
            params,
            self.settings,
            self.stmt_ts,
            self.xact_ts,
            self.deadline,
            self.backend_pid,
        );
        sub.sequences = self.sequences.as_deref_mut();
        sub.plans = self.plans.as_deref_mut();
        sub.buffers = self.buffers.as_deref_mut();
        sub.constraint_modes = self.constraint_modes.clone();
        sub.skip_user_triggers = self.skip_user_triggers;
        sub.path = self.path.clone();
        sub.function_settings = self.function_settings.clone();
        sub.snapshot = Some(snapshot);
        sub.portals = self.portals.clone();
        sub.nonatomic = self.nonatomic;
        sub.temp_usage = self.temp_usage.clone();
        sub
    }

    /// A context for one statement.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        db: &'a Engine,
        xact: &'a mut Xact,
        cancel: &'a AtomicBool,
        params: &'a [Value],
        settings: &'a dyn SettingsView,
        stmt_ts: i64,
        xact_ts: i64,
        deadline: Option<Instant>,
        backend_pid: i32,
    ) -> Ectx<'a> {
        Ectx {
            db,
            xact,
            cancel,
            params,
            settings,
            path: engine::namespace::default_path(),
            stmt_ts,
            xact_ts,
            deadline,
            backend_pid,
            snapshot: None,
            query: None,
            sequences: None,
            plans: None,
            buffers: None,
            function_settings: Vec::new(),
            ri_events: Vec::new(),
            ri_deferred: Vec::new(),
            trigger_events: Vec::new(),
            skip_user_triggers: false,
            transition_rows: Vec::new(),
            constraint_modes: ConstraintModes::default(),
            notices: Vec::new(),
            view_key: None,
            view_name_key: None,
            portals: None,
            nonatomic: false,
            removed: [0; 2],
            parallel_scan: None,
            serial_scans: false,
            parallel_joins: None,
            locks_held: false,
            ticks: 0,
            catalog_snapshot: std::cell::OnceCell::new(),
            temp_usage: None,
        }
    }

    /// The statement's catalog snapshot (`crate::pgcatalog`), taken on
    /// first use: every catalog relation and function of one statement
    /// sees the same catalog.
    pub fn pg_catalog(&self) -> Arc<crate::pgcatalog::CatalogSnapshot> {
        self.catalog_snapshot
            .get_or_init(|| {
                Arc::new(crate::pgcatalog::CatalogSnapshot::take(
                    self.db,
                    self.xact.own().xids,
                    self.db.clog(),
                    &self.path,
                ))
            })
            .clone()
    }

    /// pg_signal_backend's checks: the session with `pid` if this user
    /// may signal it; None (with PostgreSQL's WARNING) if no session has
    /// that pid.
    fn signal_target(
        &mut self,
        pid: i32,
        signal: Signal,
    ) -> PgResult<Option<engine::backend_status::BackendStatus>> {
        let Some(target) = self
            .db
            .backend_status()
            .snapshot()
            .into_iter()
            .find(|s| s.pid == pid)
        else {
            self.notices.push(PgError::warning(
                sqlstate::WARNING,
                format!("PID {pid} is not a PostgreSQL backend process"),
            ));
            return Ok(None);
        };
        let me = EvalContext::current_user(self);
        let cat = self.db.catalog();
        // A node without roles (made before they existed) calls every
        // session a superuser, as the session's own check does.
        let superuser = |name: &str| {
            cat.role(name)
                .map_or(cat.roles().is_empty(), |r| r.superuser)
        };
        if !superuser(&me) {
            if superuser(&target.user) {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    match signal {
                        Signal::Cancel => "must be a superuser to cancel superuser query",
                        Signal::Terminate => "must be a superuser to terminate superuser process",
                    },
                ));
            }
            // has_privs_of_role(me, target) or of pg_signal_backend.
            let mine = cat
                .role(&me)
                .map(|r| cat.member_closure(r.oid, true))
                .unwrap_or_default();
            let theirs = cat.role(&target.user).map(|r| r.oid);
            let allowed = target.user == me
                || theirs.is_some_and(|o| mine.contains(&o))
                || mine.contains(&engine::acl::PG_SIGNAL_BACKEND);
            if !allowed {
                return Err(PgError::new(
                    sqlstate::INSUFFICIENT_PRIVILEGE,
                    match signal {
                        Signal::Cancel => "must be a member of the role whose query is being canceled or member of pg_signal_backend",
                        Signal::Terminate => "must be a member of the role whose process is being terminated or member of pg_signal_backend",
                    },
                ));
            }
        }
        Ok(Some(target))
    }

    /// Raises 57014 when canceled or past statement_timeout.
    pub fn check_interrupts(&self) -> PgResult<()> {
        if self.cancel.load(AtomicOrdering::Relaxed) {
            return Err(PgError::query_canceled());
        }
        if let Some(d) = self.deadline {
            if Instant::now() >= d {
                return Err(PgError::statement_timeout());
            }
        }
        Ok(())
    }

    /// Counts a row; checks interrupts every [`CHECK_EVERY`] rows.
    #[inline]
    pub fn tick(&mut self) -> PgResult<()> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(CHECK_EVERY) {
            self.check_interrupts()?;
        }
        Ok(())
    }

    pub(crate) fn wait_for(&mut self, xid: TransactionId) -> PgResult<()> {
        let limits = self.wait_limits();
        self.xact.wait_for_xid(xid, self.cancel, limits)
    }

    /// The statement's deadline and the session's `lock_timeout`, for a
    /// lock wait.
    pub fn wait_limits(&self) -> WaitLimits {
        WaitLimits {
            statement: self.deadline,
            lock_timeout: self.settings.lock_timeout(),
        }
    }

    fn eval(&mut self, e: &Expr, row: &[Value]) -> PgResult<Value> {
        let p = self.params;
        eval(e, row, p, self)
    }

    fn filter(&mut self, e: &Option<Expr>, row: &[Value]) -> PgResult<bool> {
        match e {
            None => Ok(true),
            Some(e) => {
                let p = self.params;
                eval_filter(e, row, p, self)
            }
        }
    }
}

impl crate::pgcatalog::ViewContext for Ectx<'_> {
    fn engine(&self) -> &Engine {
        self.db
    }
    fn pg_catalog(&self) -> Arc<crate::pgcatalog::CatalogSnapshot> {
        Ectx::pg_catalog(self)
    }
    fn settings_all(&self) -> Vec<(String, String, String)> {
        self.settings.show_all()
    }
    fn database(&self) -> String {
        EvalContext::current_database(self)
    }
    fn relation_key(&self) -> Option<u32> {
        self.view_key
    }
    fn relation_name_key(&self) -> Option<&str> {
        self.view_name_key.as_deref()
    }
    fn current_user(&self) -> Option<String> {
        Some(EvalContext::current_user(self))
    }
    fn cursors(&self) -> Vec<Vec<Value>> {
        self.portals
            .as_ref()
            .map(crate::portalcmds::view_rows)
            .unwrap_or_default()
    }
}

impl Ectx<'_> {
    /// CheckSlotPermissions: the slot functions need a superuser or a role
    /// with REPLICATION (its own attribute, not inherited).
    fn check_slot_permissions(&self) -> PgResult<()> {
        let me = EvalContext::current_user(self);
        let cat = self.db.catalog();
        let allowed = cat
            .role(&me)
            .map_or(cat.roles().is_empty(), |r| r.superuser || r.replication);
        if allowed {
            Ok(())
        } else {
            Err(PgError::new(
                sqlstate::INSUFFICIENT_PRIVILEGE,
                "must be superuser or replication role to use replication slots",
            ))
        }
    }
}

impl EvalContext for Ectx<'_> {
    fn call_user_function(&mut self, oid: pgtypes::Oid, args: &[Value]) -> PgResult<Value> {
        crate::fmgr::call(self, oid, args)
    }
    fn blocking_pids(&self, pid: i32) -> Vec<i32> {
        self.db.procarray().blocking_pids(pid)
    }
    fn statement_timestamp(&self) -> i64 {
        self.stmt_ts
    }
    fn sequence(
        &mut self,
        f: crate::sequence::SeqFunc,
        name: Option<&str>,
        value: Option<(i64, bool)>,
    ) -> PgResult<i64> {
        let limits = self.wait_limits();
        let Some(ss) = self.sequences.as_deref_mut() else {
            return Err(PgError::unsupported(
                "sequence functions are not available here",
            ));
        };
        let read_only = ss.read_only || self.db.role() == engine::Role::Standby;
        let (xact, cancel) = (&*self.xact, self.cancel);
        let own = xact.own();
        let view = self
            .db
            .catalog()
            .view(own.xids, self.db.clog())
            .with_path(&self.path);
        let mut wait = |x| xact.wait_for_xid(x, cancel, limits);
        let mut w = crate::sequence::SeqWait {
            own: own.xids,
            wait: &mut wait,
        };
        crate::sequence::call(self.db, ss, f, name, value, read_only, &view, &mut w)
    }
    fn transaction_timestamp(&self) -> i64 {
        self.xact_ts
    }
    fn txid_current(&mut self) -> PgResult<u64> {
        Ok(self.xact.top_xid_assign()?.0)
    }
    fn txid_current_if_assigned(&self) -> Option<u64> {
        let x = self.xact.top_xid();
        x.is_valid().then_some(x.0)
    }
    fn current_snapshot(&mut self) -> PgResult<PgSnapshot> {
        let s = match &self.snapshot {
            Some(s) => s.clone(),
            None => self.xact.statement_snapshot(),
        };
        Ok(PgSnapshot {
            xmin: s.xmin.0,
            xmax: s.xmax.0,
            xip: s.xip.iter().map(|x| x.0).collect(),
        })
    }
    fn sleep(&mut self, secs: f64) -> PgResult<()> {
        if secs.is_nan() || secs <= 0.0 {
            return Ok(());
        }
        let end = Instant::now() + std::time::Duration::from_secs_f64(secs.min(1.0e6));
        pgtypes::blocking::run_blocking(|| loop {
            self.check_interrupts()?;
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(10)));
        })
    }
    fn current_user(&self) -> String {
        // A SECURITY DEFINER call (or a `SET role` clause) overrides the
        // session's role (`crate::fmgr`).
        match self
            .function_settings
            .iter()
            .rev()
            .find(|(n, _)| n == "role")
        {
            Some((_, r)) if r != "none" => r.clone(),
            Some(_) => self.session_user(),
            None => self.settings.current_user(),
        }
    }
    fn setting(&self, name: &str) -> Option<String> {
        if name.eq_ignore_ascii_case("transaction_isolation") {
            return Some(crate::parser::isolation_name(self.xact.isolation()).to_string());
        }
        if !self.function_settings.is_empty() {
            let canonical = crate::utility::canonical_name(name);
            if let Some((_, v)) = self
                .function_settings
                .iter()
                .rev()
                .find(|(n, _)| *n == canonical)
            {
                return Some(v.clone());
            }
        }
        self.settings.get_setting(name)
    }
    fn backend_pid(&self) -> i32 {
        self.backend_pid
    }
    fn connection_addrs(&self) -> (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>) {
        self.db
            .backend_status()
            .snapshot()
            .into_iter()
            .find(|s| s.pid == self.backend_pid)
            .map_or((None, None), |s| (s.client, s.server))
    }
    fn is_in_recovery(&self) -> bool {
        self.db.replication().in_recovery()
    }
    fn cancel_backend(&mut self, pid: i32) -> PgResult<bool> {
        let Some(target) = self.signal_target(pid, Signal::Cancel)? else {
            return Ok(false);
        };
        Ok(match target.cancel {
            Some(flag) => {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                true
            }
            None => false,
        })
    }
    fn terminate_backend(&mut self, pid: i32, timeout_ms: i64) -> PgResult<bool> {
        if timeout_ms < 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "\"timeout\" must not be negative",
            ));
        }
        let Some(target) = self.signal_target(pid, Signal::Terminate)? else {
            return Ok(false);
        };
        let Some(terminate) = target.terminate else {
            return Ok(false);
        };
        terminate();
        if timeout_ms == 0 {
            return Ok(true);
        }
        // pg_wait_until_termination: poll until the session is gone.
        let end = Instant::now() + Duration::from_millis(timeout_ms as u64);
        let status = self.db.backend_status().clone();
        let gone = pgtypes::blocking::run_blocking(|| loop {
            if !status.snapshot().iter().any(|s| s.pid == pid) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        });
        if !gone {
            self.notices.push(PgError::warning(
                sqlstate::WARNING,
                format!(
                    "backend with PID {pid} did not terminate within {timeout_ms} milliseconds"
                ),
            ));
        }
        Ok(gone)
    }
    fn notice(&mut self, n: PgError) {
        self.notices.push(n);
    }
    fn create_physical_replication_slot(
        &mut self,
        name: &str,
        reserve: bool,
        temporary: bool,
    ) -> PgResult<Option<u64>> {
        self.check_slot_permissions()?;
        if temporary {
            return Err(PgError::unsupported(
                "temporary replication slots are not supported",
            ));
        }
        let slot = engine::replication::create_physical_slot(self.db, name, reserve)?;
        Ok(slot.restart_lsn.is_valid().then_some(slot.restart_lsn.0))
    }
    fn drop_replication_slot(&mut self, name: &str) -> PgResult<()> {
        self.check_slot_permissions()?;
        engine::replication::drop_slot(self.db, name)
    }
    fn reset_shared_stats(&mut self, target: &str) -> PgResult<()> {
        // pgstat_reset_shared_counters (PostgreSQL 16's targets); only
        // pg_stat_io's counters can be reset here, the other targets have
        // nothing that resets.
        match target {
            "io" => {
                self.db.heap().bufmgr().io_stats().reset();
                Ok(())
            }
            "archiver" | "bgwriter" | "recovery_prefetch" | "wal" => Ok(()),
            _ => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("unrecognized reset target: \"{target}\""),
            )
            .with_hint(
                "Target must be \"archiver\", \"bgwriter\", \"io\", \"recovery_prefetch\", or \"wal\".",
            )),
        }
    }
    fn reload_conf(&self) -> bool {
        // As pg_reload_conf's kill(postmaster, SIGHUP): the node's reload
        // task, which SIGHUP wakes as well.
        server::reload::request();
        true
    }
    fn promote(&mut self, wait: bool, wait_seconds: i32) -> PgResult<bool> {
        // As xlogfuncs.c's pg_promote: the startup process notices the
        // request (the standby crate), this backend only asks and polls.
        if !self.db.replication().in_recovery() {
            return Err(crate::functions::not_in_recovery());
        }
        if wait_seconds <= 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "\"wait_seconds\" must not be negative or zero",
            ));
        }
        self.db.replication().request_promote();
        if !wait {
            return Ok(true);
        }
        let end = Instant::now() + std::time::Duration::from_secs(wait_seconds as u64);
        pgtypes::blocking::run_blocking(|| loop {
            if !self.db.replication().in_recovery() {
                return Ok(true);
            }
            self.check_interrupts()?;
            if Instant::now() >= end {
                tracing::warn!(
                    "server did not promote within {wait_seconds} second{}",
                    if wait_seconds == 1 { "" } else { "s" }
                );
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        })
    }
    fn relation_size(&self, oid: u32) -> PgResult<Option<i64>> {
        // Another transaction's uncommitted table does not exist here.
        let snap = self.pg_catalog();
        Ok(match snap.relation(oid) {
            Some(crate::pgcatalog::RelRef::Table(t)) => {
                let blocks = self.db.heap().nblocks(t.rel)?;
                Some(i64::from(blocks) * pgtypes::BLCKSZ as i64)
            }
            // Indexes live in memory; catalogs are projections.
            Some(_) => Some(0),
            None => None,
        })
    }
    fn pg_catalog(&self) -> Option<Arc<crate::pgcatalog::CatalogSnapshot>> {
        Some(Ectx::pg_catalog(self))
    }
    fn wal_lsn(&self, which: crate::functions::WalLsnKind) -> PgResult<Option<u64>> {
        self.db.replication().wal_lsn(which)
    }
    fn walfile_name(&self, lsn: u64) -> PgResult<Option<String>> {
        self.db.replication().walfile_name(lsn)
    }
    fn check_cancel(&self) -> PgResult<()> {
        self.check_interrupts()
    }
    fn exec_param(&self, slot: usize) -> PgResult<Value> {
        self.get_exec_param(slot)
    }
    fn subplan(&mut self, id: usize, args: &[Value], lhs: &Value) -> PgResult<Value> {
        self.eval_subplan(id, args, lhs)
    }
}

// ---------------------------------------------------------------------------
// Row sources
// ---------------------------------------------------------------------------

/// Callback for each qualifying row: (context, tid, row).
pub type RowFn<'f, 'a> =
    dyn FnMut(&mut Ectx<'a>, ItemPointer, &mut Vec<Value>) -> PgResult<ControlFlow<()>> + 'f;

/// Evaluates an index lookup key; None when it can match nothing (NULL,
/// or a value that does not fit the column type).
fn eval_lookup_key(
    ec: &mut Ectx<'_>,
    key: &[Expr],
    types: &[SqlType],
    out: &mut Vec<u8>,
) -> PgResult<bool> {
    out.clear();
    let p = ec.params;
    for (e, ty) in key.iter().zip(types) {
        // A parameter or constant (a point query's key) is borrowed.
        let v = crate::expr::eval_ref(e, &[], p, ec)?;
        if v.is_null() {
            return Ok(false);
        }
        let same_kind = v.sql_type() == *ty
            || (v.sql_type().is_integer() && ty.is_integer())
            || (v.sql_type().is_text_like()
                && ty.is_text_like()
                && !matches!(ty, SqlType::Char(_)));
        if same_kind {
            encode_key_value(&v, out);
        } else {
            match cast_assign(&v, *ty) {
                Ok(c) => encode_key_value(&c, out),
                Err(_) => return Ok(false),
            }
        }
    }
    Ok(true)
}

/// A join's other conditions (`qual`, over the joined row `out`): true
/// when they pass; a rejected pair counts in `ec.removed[1]` (EXPLAIN
/// ANALYZE's "Rows Removed by Join Filter"). Every join node asks here.
pub fn join_qual_passes(
    qual: Option<&crate::expr::Expr>,
    out: &[Value],
    ec: &mut Ectx<'_>,
) -> PgResult<bool> {
    let Some(q) = qual else {
        return Ok(true);
    };
    let p = ec.params;
    let pass = crate::expr::eval_filter(q, out, p, ec)?;
    if !pass {
        ec.removed[1] += 1;
    }
    Ok(pass)
}

/// The removable horizon under which the version at `tid` is dead to
/// every snapshot, present and future (`None`: some snapshot may need it):
/// its inserter aborted, or its deleter committed before the horizon,
/// asked through GlobalVis with the scan's own `snapshot`. Its page can
/// then be pruned, which removes it and its index entries (index scans
/// ask on the way: PostgreSQL's kill_prior_tuple). An empty slot is not
/// dead: its version's entries went before it was freed, and an entry
/// still naming it is about to go or to be reused.
pub fn dead_to_all(
    db: &Engine,
    rel: pgtypes::RelFileId,
    tid: ItemPointer,
    snapshot: &Snapshot,
) -> PgResult<Option<TransactionId>> {
    match db.heap().fetch_any(rel, tid, |h, _| *h)? {
        Some(h) => {
            // GlobalVis: the cached bound first (one atomic load); only a
            // version it does not call dead asks `prune_horizon`, which
            // recomputes at most once per snapshot — never a scan of every
            // session's xmin per lookup.
            let bound = db.procarray().removable_bound();
            if header_dead_to_all(db, &h, bound)? {
                return Ok(Some(bound));
            }
            let xid = if h.xmax.is_valid() { h.xmax } else { h.xmin };
            match db.procarray().prune_horizon(xid, snapshot) {
                Some(horizon) if header_dead_to_all(db, &h, horizon)? => Ok(Some(horizon)),
                _ => Ok(None),
            }
        }
        None => Ok(None),
    }
}

/// Runs `f` for every row of `table` that `vis` sees and `filter` accepts,
/// through `access`.
pub fn scan_table<'a>(
    ec: &mut Ectx<'a>,
    vis: &Vis,
    table: &TableDef,
    access: &Access,
    filter: &Option<Expr>,
    f: &mut RowFn<'_, 'a>,
) -> PgResult<()> {
    let db = ec.db;
    let cx = vis.cx(db);
    let types = table.types();
    let mut row: Vec<Value> = Vec::with_capacity(types.len());
    match access {
        Access::SeqScan => {
            vis.lock_relation(db, table);
            db.heap().scan(table.rel, &cx, &mut |tid, data| {
                ec.tick()?;
                table.decode_into(data, &types, &mut row, db.heap())?;
                if !ec.filter(filter, &row)? {
                    return Ok(ControlFlow::Continue(()));
                }
                f(ec, tid, &mut row)
            })
        }
        Access::Index {
            index,
            key,
            key_types,
        } => {
            let mut kb = Vec::with_capacity(16);
            if !eval_lookup_key(ec, key, key_types, &mut kb)? {
                return Ok(());
            }
            let mut tids: Vec<ItemPointer> = Vec::new();
            index.index.lookup(&kb, &mut |t| tids.push(t));
            vis.lock_index_key(db, index, &kb);
            // TestForOldSnapshot on the "index page" (txn::old_snapshot).
            db.procarray().old_snapshot().test_relation(
                cx.snapshot,
                table.rel.0,
                db.procarray().subtrans(),
            )?;
            for tid in tids {
                ec.tick()?;
                let found = db.heap().fetch(table.rel, tid, &cx, |data| {
                    table.decode_into(data, &types, &mut row, db.heap())
                })?;
                match found {
                    None => {
                        // Invisible to us; if dead to everyone, prune its
                        // page, which drops its entries too, so later
                        // lookups do not pay for it (kill_prior_tuple).
                        if let Some(h) = dead_to_all(db, table.rel, tid, cx.snapshot)? {
                            db.heap().prune_block(
                                table.rel,
                                tid.block,
                                h,
                                db.clog(),
                                db.procarray(),
                            )?;
                        }
                        continue;
                    }
                    Some(r) => r?,
                }
                if !ec.filter(filter, &row)? {
                    continue;
                }
                if let ControlFlow::Break(()) = f(ec, tid, &mut row)? {
                    break;
                }
            }
            Ok(())
        }
    }
}

fn eval_count(
    ec: &mut Ectx<'_>,
    e: Option<&Expr>,
    what: &str,
    code: &'static str,
) -> PgResult<Option<u64>> {
    let Some(e) = e else { return Ok(None) };
    match ec.eval(e, &[])? {
        Value::Null => Ok(None),
        v => {
            let n = v.as_i64().unwrap_or(0);
            if n < 0 {
                return Err(PgError::new(code, format!("{what} must not be negative")));
            }
            Ok(Some(n as u64))
        }
    }
}

/// Runs a query, calling `emit` with each output row as the plan tree
/// produces it (`executor::execnodes`). Returns the number of rows.
pub fn run_query<'a>(
    ec: &mut Ectx<'a>,
    vis: &Vis,
    plan: &QueryPlan,
    emit: &mut dyn FnMut(&mut Ectx<'a>, &[Value]) -> PgResult<()>,
) -> PgResult<u64> {
    let saved = if plan.shared.needs_state() {
        Some(
            ec.query
                .replace(Box::new(subplan::QueryState::new(plan.shared.clone(), vis))),
        )
    } else {
        None
    };
    let result = (|| {
        let mut root = execnodes::build(&plan.root, vis);
        let mut n = 0u64;
        while root.next(ec)? {
            emit(ec, root.row())?;
            n += 1;
        }
        if let Some(pool) = ec.buffers.as_deref_mut() {
            root.recycle(pool);
        }
        Ok(n)
    })();
    if let Some(s) = saved {
        ec.query = s;
    }
    result
}

/// The result columns of an OID alias type (`regclass` …): their values
/// are OIDs and print as names (see [`print_reg_columns`]).
pub fn reg_columns(cols: &[FieldDescription]) -> Vec<(usize, RegKind)> {
    cols.iter()
        .enumerate()
        .filter_map(|(i, c)| match c.ty {
            SqlType::Reg(k) => Some((i, k)),
            _ => None,
        })
        .collect()
}

/// A result row with its OID alias columns replaced by their names: the
/// output function of those types, which needs the catalog.
pub fn print_reg_columns(ec: &Ectx<'_>, regs: &[(usize, RegKind)], row: &[Value]) -> Vec<Value> {
    let snap = ec.pg_catalog();
    let mut out = row.to_vec();
    for &(i, kind) in regs {
        if let Some(Value::Oid(o)) = out.get(i) {
            let name = crate::pgcatalog::reg_out(&snap, kind, *o);
            out[i] = Value::text(&name);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------

/// 23502 for a NULL in a NOT NULL column.
pub fn check_not_null(table: &TableDef, row: &[Value]) -> PgResult<()> {
    for (c, v) in table.columns.iter().zip(row) {
        if c.not_null && v.is_null() {
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(format!("Failing row contains ({}).", row_text(table, row))));
        }
    }
    Ok(())
}

/// NOT NULL, then the CHECK constraints (`crate::tablecmds::check_row`).
pub fn check_row(table: &TableDef, row: &[Value], cx: &mut dyn EvalContext) -> PgResult<()> {
    check_not_null(table, row)?;
    crate::tablecmds::check_row(table, row, cx)
}

/// The `Failing row contains (…)` text: the visible columns' values.
pub fn row_text(table: &TableDef, row: &[Value]) -> String {
    row.iter()
        .zip(&table.columns)
        .filter(|(_, c)| !c.dropped)
        .map(|(v, _)| {
            if v.is_null() {
                "null".to_string()
            } else {
                v.to_text_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Encodes a row for the heap, TOAST-ing it when the tuple would be too
/// big ([`storage::toast`]): chunks are written by `xid` in the current
/// command. `reuse`: pointer datums of the version being updated for
/// columns the new version keeps. Indexed columns stay in line.
fn form_tuple(
    ec: &Ectx<'_>,
    table: &TableDef,
    row: &[Value],
    reuse: &[(usize, Vec<u8>)],
    xid: TransactionId,
    out: &mut Vec<u8>,
) -> PgResult<Formed> {
    let indexes = table.indexes.list();
    let toaster = Toaster {
        heap: ec.db.heap(),
        rel: table.rel,
        xid,
        cid: ec.xact.curcid(),
        compression: ToastCompression::default(),
    };
    toaster.form_tuple(
        row,
        reuse,
        &|c| indexes.iter().any(|ix| ix.spec.uses_column(c)),
        out,
    )
}

/// True if a table of these column types can hold TOAST datums.
fn toastable(types: &[SqlType]) -> bool {
    types.iter().any(|t| {
        t.is_text_like() || matches!(t, SqlType::Bytea | SqlType::Array(_) | SqlType::Unknown)
    })
}

/// The TOAST datums of the stored version at `tid`.
fn stored_toast_datums(
    ec: &Ectx<'_>,
    table: &TableDef,
    tid: ItemPointer,
    types: &[SqlType],
) -> PgResult<Vec<(usize, Vec<u8>)>> {
    if !toastable(types) {
        return Ok(Vec::new());
    }
    Ok(ec
        .db
        .heap()
        .fetch_any(table.rel, tid, |_, data| toasted_fields(data, types))?
        .transpose()?
        .unwrap_or_default())
}

/// The out-of-line values of the old version that the new version keeps
/// as they are (its column is unchanged): their pointers are reused.
fn reusable_pointers(
    old: &[(usize, Vec<u8>)],
    cur: &[Value],
    new_row: &[Value],
) -> Vec<(usize, Vec<u8>)> {
    old.iter()
        .filter(|(c, d)| toast::is_pointer(d) && cur.get(*c) == new_row.get(*c))
        .cloned()
        .collect()
}

/// After an UPDATE or DELETE by `xid`: deletes the chunks of the old
/// version's out-of-line values that no newer version points to.
fn delete_dropped_toast(
    ec: &Ectx<'_>,
    vis: &Vis,
    old: &[(usize, Vec<u8>)],
    kept: &[(usize, Vec<u8>)],
    xid: TransactionId,
) -> PgResult<()> {
    let dropped = toast::dropped_pointers(old, kept);
    if dropped.is_empty() {
        return Ok(());
    }
    let own = ec.xact.own();
    let cx = VisibilityContext {
        snapshot: &vis.snapshot,
        own,
        clog: ec.db.clog(),
        procarray: ec.db.procarray(),
        serializable: None,
    };
    for d in &dropped {
        toast::delete_external(ec.db.heap(), d, xid, &cx)?;
    }
    Ok(())
}

/// Kills the chunks written for a version that was not stored.
fn kill_written_toast(ec: &Ectx<'_>, formed: &Formed, xid: TransactionId) -> PgResult<()> {
    for d in &formed.written {
        toast::kill_own_external(ec.db.heap(), d, xid, ec.xact.curcid())?;
    }
    Ok(())
}

/// Makes every value carry exactly its column's type (encode_row requires
/// it): assignment casts where the runtime type differs.
pub fn conform_row(table: &TableDef, row: &mut [Value]) -> PgResult<()> {
    for (c, v) in table.columns.iter().zip(row.iter_mut()) {
        if v.is_null() {
            continue;
        }
        let vt = v.sql_type();
        let same = vt == c.ty
            || (vt.is_text_like()
                && matches!(c.ty, SqlType::Text | SqlType::Varchar(None) | SqlType::Name))
            || (vt == SqlType::Numeric(None) && matches!(c.ty, SqlType::Numeric(None)));
        if !same {
            *v = cast_assign(v, c.ty).map_err(|e| match e.code {
                sqlstate::INVALID_TEXT_REPRESENTATION | sqlstate::DATATYPE_MISMATCH => e,
                _ => e,
            })?;
        }
    }
    Ok(())
}

fn unique_violation(table: &TableDef, ix: &IndexDef, row: &[Value]) -> PgError {
    PgError::new(
        sqlstate::UNIQUE_VIOLATION,
        format!(
            "duplicate key value violates unique constraint \"{}\"",
            ix.spec.name
        ),
    )
    .with_detail(format!(
        "{} already exists.",
        crate::indexcmds::key_description(table, ix, row)
    ))
}

/// Adds the index entries of a new row version at `tid`, checking unique
/// indexes. `old_row` is the previous version for an UPDATE (a unique key
/// it keeps needs no check).
pub fn insert_index_entries(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &TableDef,
    row: &[Value],
    tid: ItemPointer,
    old_row: Option<&[Value]>,
) -> PgResult<()> {
    if table.indexes.is_empty() {
        return Ok(());
    }
    let mut kb = Vec::with_capacity(16);
    let mut okb = Vec::new();
    for ix in table.indexes.list() {
        if !index_key(table, &ix, row, &mut kb)? {
            if !ix.spec.unique {
                // NULL keys are still entries of a plain index, but lookups
                // never match them; skip.
            }
            continue;
        }
        let keeps_key = match old_row {
            Some(o) => index_key(table, &ix, o, &mut okb)? && okb == kb,
            None => false,
        };
        // A SERIALIZABLE writer: readers that looked this key up (found
        // or not) read before this write. (No hash for anyone else.) An
        // UPDATE that keeps the key adds no key to the index: whoever read
        // the row it replaces holds that version's tuple lock, checked by
        // the heap (PostgreSQL's HOT update checks no index either); a
        // reader of an older version has no direct dependency on it.
        if let (Some(me), false) = (ec.xact.sxact(), keeps_key) {
            ec.db.procarray().predicate().check_conflict_in(
                me,
                &[
                    Target::IndexKey(ix.spec.oid, key_hash(&kb)),
                    Target::Index(ix.spec.oid),
                ],
            )?;
        }
        if !ix.spec.unique || keeps_key {
            ix.index.insert(&kb, tid);
            continue;
        }
        unique_insert(ec, vis, table, &ix, &kb, tid, row)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn unique_insert(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &TableDef,
    ix: &IndexDef,
    key: &[u8],
    tid: ItemPointer,
    row: &[Value],
) -> PgResult<()> {
    loop {
        match unique_check(ec, vis, table, ix, key, Some(tid))? {
            UniqueCheck::Free => return Ok(()),
            UniqueCheck::Live(_) => return Err(unique_violation(table, ix, row)),
            UniqueCheck::Wait(x) => ec.wait_for(x)?,
        }
    }
}

/// What a unique index holds under one key, as SnapshotDirty sees it.
enum UniqueCheck {
    /// No live or in-progress version (the entry was added, if asked).
    Free,
    /// A live version at this tid.
    Live(ItemPointer),
    /// A version some running transaction inserted or deletes.
    Wait(TransactionId),
}

/// Checks `key` of the unique index `ix` against every version under it
/// with SnapshotDirty, holding the key's stripe lock; when nothing
/// conflicts and `insert` names a new version, adds its entry under the
/// same lock (so two inserters of one key serialise).
fn unique_check(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &TableDef,
    ix: &IndexDef,
    key: &[u8],
    insert: Option<ItemPointer>,
) -> PgResult<UniqueCheck> {
    let db = ec.db;
    let mut tids = Vec::new();
    let _stripe = ix.stripe(key).lock();
    ix.index.lookup(key, &mut |t| {
        if Some(t) != insert {
            tids.push(t)
        }
    });
    let own = ec.xact.own();
    let cx = VisibilityContext {
        snapshot: &vis.snapshot,
        own,
        clog: db.clog(),
        procarray: db.procarray(),
        serializable: None,
    };
    for t in &tids {
        match db.heap().fetch_dirty(table.rel, *t, &cx)? {
            DirtyState::Dead => {}
            DirtyState::Live => return Ok(UniqueCheck::Live(*t)),
            DirtyState::InProgress(x) => return Ok(UniqueCheck::Wait(x)),
        }
    }
    if let Some(tid) = insert {
        ix.index.insert(key, tid);
    }
    Ok(UniqueCheck::Free)
}

/// 21000 for a second ON CONFLICT DO UPDATE of one row in one command.
fn affect_row_twice() -> PgError {
    PgError::new(
        sqlstate::CARDINALITY_VIOLATION,
        "ON CONFLICT DO UPDATE command cannot affect row a second time",
    )
    .with_hint(
        "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
    )
}

/// Inserts one proposed row of an INSERT … ON CONFLICT — PostgreSQL's
/// speculative insertion:
///
/// ```text
///  loop:
///    pre-check each arbiter key (SnapshotDirty):
///      in progress → wait for that transaction, loop
///      live        → DO NOTHING: done; DO UPDATE: update that row
///                    (concurrently changed → loop)
///    insert the heap tuple, then each arbiter entry under its stripe lock
///      with a re-check: a key that appeared meanwhile → kill our tuple
///      (xmax = own xid, dead to everyone at once), loop
///    the other indexes as a plain INSERT
/// ```
///
/// Returns the number of rows inserted or updated (0 or 1); RETURNING
/// rows go to `ret`.
fn insert_on_conflict(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &Arc<TableDef>,
    oc: &crate::planner::OnConflictPlan,
    row: Vec<Value>,
    ret: &mut dyn FnMut(&mut Ectx<'_>, &[Value]) -> PgResult<()>,
) -> PgResult<u64> {
    use crate::planner::ConflictAction;
    let indexes = table.indexes.list();
    let arbiters: Vec<&Arc<IndexDef>> = indexes
        .iter()
        .filter(|ix| ix.spec.unique && oc.arbiters.contains(&ix.spec.name))
        .collect();
    let mut kb = Vec::with_capacity(16);
    let mut buf = Vec::with_capacity(128);
    let types = table.types();
    let rr = ec.xact.isolation().uses_transaction_snapshot();
    'retry: loop {
        ec.check_interrupts()?;
        // Pre-check.
        let mut conflict = None;
        for ix in &arbiters {
            if !index_key(table, ix, &row, &mut kb)? {
                continue; // a NULL key, or a row outside a partial index, conflicts with nothing
            }
            match unique_check(ec, vis, table, ix, &kb, None)? {
                UniqueCheck::Free => {}
                UniqueCheck::Wait(x) => {
                    ec.wait_for(x)?;
                    continue 'retry;
                }
                UniqueCheck::Live(t) => {
                    conflict = Some(t);
                    break;
                }
            }
        }
        if let Some(tid) = conflict {
            let ConflictAction::Update {
                assignments,
                filter,
            } = &oc.action
            else {
                return Ok(0);
            };
            // The existing version, whoever's.
            let mut existing = Vec::with_capacity(types.len());
            let header = ec.db.heap().fetch_any(table.rel, tid, |h, data| {
                table
                    .decode_into(data, &types, &mut existing, ec.db.heap())
                    .map(|_| *h)
            })?;
            let Some(header) = header else {
                continue 'retry; // pruned meanwhile
            };
            let header = header?;
            let own = ec.xact.own();
            let mine = own.is_current(header.xmin);
            if mine && header.cmin == own.curcid {
                return Err(affect_row_twice());
            }
            if rr && !mine {
                let cx = vis.cx(ec.db);
                if ec.db.heap().fetch(table.rel, tid, &cx, |_| ())?.is_none() {
                    return Err(serialization_failure());
                }
            }
            // The row the expressions see: existing, then EXCLUDED.
            let mut both = existing.clone();
            both.extend(row.iter().cloned());
            if let Some(f) = filter {
                let pr = ec.params;
                if !eval_filter(f, &both, pr, ec)? {
                    return Ok(0);
                }
            }
            let mut new_row = existing.clone();
            for (c, e) in assignments {
                new_row[*c] = ec.eval(e, &both)?;
            }
            if crate::trigger::has_triggers(table) {
                // BEFORE UPDATE ROW triggers on the update path.
                let cols: Vec<usize> = assignments.iter().map(|(c, _)| *c).collect();
                match crate::trigger::before_row(
                    ec,
                    table,
                    engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                    Some(&existing),
                    Some(new_row),
                    &cols,
                )? {
                    Some(r) => new_row = r,
                    None => return Ok(0),
                }
            }
            conform_row(table, &mut new_row)?;
            check_row(table, &new_row, ec)?;
            let xid = ec.xact.assign_xid()?;
            let types = table.types();
            let old_toast = stored_toast_datums(ec, table, tid, &types)?;
            let kept = reusable_pointers(&old_toast, &existing, &new_row);
            let formed = form_tuple(ec, table, &new_row, &kept, xid, &mut buf)?;
            let (res, newtid) = {
                let own = ec.xact.own();
                let cx = VisibilityContext {
                    snapshot: &vis.snapshot,
                    own,
                    clog: ec.db.clog(),
                    procarray: ec.db.procarray(),
                    serializable: None,
                };
                ec.db.heap().update(table.rel, tid, &buf, xid, &cx)?
            };
            if res != TmResult::Ok {
                kill_written_toast(ec, &formed, xid)?;
            }
            match res {
                TmResult::Ok => {
                    let nt =
                        newtid.ok_or_else(|| PgError::internal("update returned no new tid"))?;
                    serializable_conflict_in(ec, &tuple_targets(table, tid))?;
                    delete_dropped_toast(ec, vis, &old_toast, &kept, xid)?;
                    insert_index_entries(ec, vis, table, &new_row, nt, Some(&existing))?;
                    crate::ri_triggers::queue_child_checks(ec, table, &new_row, Some(&existing))?;
                    crate::ri_triggers::queue_parent_events(
                        ec,
                        table,
                        &oc.referenced_by,
                        &existing,
                        Some(&new_row),
                    );
                    if crate::trigger::has_triggers(table) {
                        let cols: Vec<usize> = assignments.iter().map(|(c, _)| *c).collect();
                        crate::trigger::queue_after_row(
                            ec,
                            table,
                            engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                            Some(&existing),
                            Some(&new_row),
                            &cols,
                        )?;
                    }
                    ret(ec, &new_row)?;
                    return Ok(1);
                }
                TmResult::SelfModified => return Err(affect_row_twice()),
                TmResult::Invisible if mine => return Err(affect_row_twice()),
                TmResult::Invisible => continue 'retry,
                TmResult::BeingModified { xmax } => {
                    ec.wait_for(xmax)?;
                    continue 'retry;
                }
                TmResult::Updated { .. } | TmResult::Deleted => {
                    if rr {
                        return Err(serialization_failure());
                    }
                    continue 'retry;
                }
            }
        }
        // No conflict seen: insert, then claim each arbiter key.
        let xid = ec.xact.assign_xid()?;
        let cid = ec.xact.curcid();
        let formed = form_tuple(ec, table, &row, &[], xid, &mut buf)?;
        serializable_conflict_in(ec, &[Target::Relation(table.rel)])?;
        let tid = ec.db.heap().insert(table.rel, &buf, xid, cid)?;
        for ix in &arbiters {
            if !index_key(table, ix, &row, &mut kb)? {
                continue; // no entry (a NULL key, a partial index's other rows)
            }
            match unique_check(ec, vis, table, ix, &kb, Some(tid))? {
                UniqueCheck::Free => {}
                UniqueCheck::Live(_) | UniqueCheck::Wait(_) => {
                    // Lost the race: super-delete, start over (the
                    // pre-check waits or takes the conflict path).
                    ec.db.heap().kill_own_insert(table.rel, tid, xid, cid)?;
                    kill_written_toast(ec, &formed, xid)?;
                    continue 'retry;
                }
            }
        }
        insert_index_entries_except(ec, vis, table, &row, tid, &oc.arbiters)?;
        crate::ri_triggers::queue_child_checks(ec, table, &row, None)?;
        if crate::trigger::has_triggers(table) {
            crate::trigger::queue_after_row(
                ec,
                table,
                engine::pg_trigger::TRIGGER_TYPE_INSERT,
                None,
                Some(&row),
                &[],
            )?;
        }
        ret(ec, &row)?;
        return Ok(1);
    }
}

/// [`insert_index_entries`] for a new row whose entries in the indexes
/// named `done` are already made.
fn insert_index_entries_except(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    table: &TableDef,
    row: &[Value],
    tid: ItemPointer,
    done: &[String],
) -> PgResult<()> {
    let mut kb = Vec::with_capacity(16);
    for ix in table.indexes.list() {
        if done.contains(&ix.spec.name) && ix.spec.unique {
            continue;
        }
        if !index_key(table, &ix, row, &mut kb)? {
            continue;
        }
        if !ix.spec.unique {
            ix.index.insert(&kb, tid);
            continue;
        }
        unique_insert(ec, vis, table, &ix, &kb, tid, row)?;
    }
    Ok(())
}

/// Rows waiting for one `multi_insert`.
pub struct InsertBatch {
    data: Vec<u8>,
    ends: Vec<usize>,
    rows: Vec<Vec<Value>>,
    /// Insert with xmin FROZEN (COPY FREEZE).
    pub frozen: bool,
    /// A bulk load (COPY, INSERT … SELECT): batches go through one
    /// BulkInsertState and its BULKWRITE ring, made at the first flush.
    bulk_load: bool,
    bulk: Option<BulkInsertState>,
    /// Keep each row's values for after the heap insert (index entries,
    /// RETURNING). A COPY into a table without indexes turns it off and
    /// keeps only the encoded rows.
    pub keep_rows: bool,
}

impl InsertBatch {
    /// An empty batch; `bulk_load` for COPY and INSERT … SELECT (a ring of
    /// buffers, so the load does not evict the rest of the pool).
    pub fn new(frozen: bool, bulk_load: bool) -> InsertBatch {
        InsertBatch {
            data: Vec::new(),
            ends: Vec::new(),
            rows: Vec::new(),
            frozen,
            bulk_load,
            bulk: None,
            keep_rows: true,
        }
    }
    /// Rows pending.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    /// Adds a finished row (NOT NULL checked, types conformed).
    pub fn push(&mut self, row: Vec<Value>) {
        encode_row(&row, &mut self.data);
        self.ends.push(self.data.len());
        if self.keep_rows {
            self.rows.push(row);
        }
    }
    /// [`InsertBatch::push`] of a borrowed row (COPY reuses its row
    /// buffer): copied only if the batch keeps rows.
    pub fn push_values(&mut self, row: &[Value]) {
        encode_row(row, &mut self.data);
        self.ends.push(self.data.len());
        if self.keep_rows {
            self.rows.push(row.to_vec());
        }
    }
    /// True when the batch should be flushed.
    pub fn full(&self) -> bool {
        self.ends.len() >= BATCH_ROWS || self.data.len() >= 512 * 1024
    }

    /// Inserts the pending rows and their index entries; calls `returned`
    /// for each inserted row.
    pub fn flush(
        &mut self,
        ec: &mut Ectx<'_>,
        vis: &Vis,
        table: &Arc<TableDef>,
        returned: &mut dyn FnMut(&mut Ectx<'_>, &[Value]) -> PgResult<()>,
    ) -> PgResult<u64> {
        if self.ends.is_empty() {
            return Ok(0);
        }
        let xid = ec.xact.assign_xid()?;
        let cid = ec.xact.curcid();
        // heap_insert's CheckForSerializableConflictIn: the relation.
        serializable_conflict_in(ec, &[Target::Relation(table.rel)])?;
        // Rows too big for a page are TOAST-ed now (their chunks written
        // by this transaction and command) and inserted in their new form.
        let mut toasted: Vec<Option<Vec<u8>>> = vec![None; self.ends.len()];
        let mut start = 0;
        for (i, &e) in self.ends.iter().enumerate() {
            if storage::htup::HEADER_SIZE + (e - start) > toast::TOAST_TUPLE_THRESHOLD {
                let row = match self.rows.get(i) {
                    Some(r) => r.clone(),
                    None => storage::rowcodec::decode_row(
                        &self.data[start..e],
                        &table.types(),
                        &NoToast,
                    )?,
                };
                let mut out = Vec::new();
                form_tuple(ec, table, &row, &[], xid, &mut out)?;
                toasted[i] = Some(out);
            }
            start = e;
        }
        let mut slices: Vec<&[u8]> = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for (&e, t) in self.ends.iter().zip(&toasted) {
            slices.push(match t {
                Some(t) => t,
                None => &self.data[start..e],
            });
            start = e;
        }
        let tids = if slices.len() == 1 && !self.frozen {
            vec![ec.db.heap().insert(table.rel, slices[0], xid, cid)?]
        } else if self.bulk_load {
            let heap = &ec.db.heap();
            let bulk = self.bulk.get_or_insert_with(|| heap.bulk_insert_state());
            heap.multi_insert_bulk(table.rel, &slices, xid, cid, self.frozen, bulk)?
        } else {
            ec.db
                .heap()
                .multi_insert(table.rel, &slices, xid, cid, self.frozen)?
        };
        drop(slices);
        // Without kept rows (a COPY into a table without indexes) there
        // are no index entries to make and nothing to return.
        let fks = crate::ri_triggers::has_foreign_keys(table);
        let trg = crate::trigger::has_triggers(table);
        for (row, tid) in self.rows.iter().zip(tids) {
            insert_index_entries(ec, vis, table, row, tid, None)?;
            if fks {
                crate::ri_triggers::queue_child_checks(ec, table, row, None)?;
            }
            if trg {
                crate::trigger::queue_after_row(
                    ec,
                    table,
                    engine::pg_trigger::TRIGGER_TYPE_INSERT,
                    None,
                    Some(row),
                    &[],
                )?;
            }
            returned(ec, row)?;
        }
        let n = self.ends.len() as u64;
        self.data.clear();
        self.ends.clear();
        self.rows.clear();
        Ok(n)
    }
}

/// The targets an update or delete of the version at `tid` writes into,
/// finest first (heap_update / heap_delete's conflict-in check).
fn tuple_targets(table: &TableDef, tid: ItemPointer) -> [Target; 3] {
    [
        Target::Tuple(table.rel, tid.block.0, tid.offset),
        Target::Page(table.rel, tid.block.0),
        Target::Relation(table.rel),
    ]
}

fn serialization_failure() -> PgError {
    PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    )
}

fn serialization_failure_delete() -> PgError {
    PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent delete",
    )
}

/// What a write attempt on one row version decided.
enum WriteStep {
    Done(Option<ItemPointer>),
    Skip,
    /// Follow the update chain to this newer version (READ COMMITTED),
    /// which the given xid must have inserted.
    Follow(ItemPointer, TransactionId),
}

fn decide(
    ec: &mut Ectx<'_>,
    res: TmResult,
    newtid: Option<ItemPointer>,
    update: bool,
) -> PgResult<Option<WriteStep>> {
    let rr = ec.xact.isolation().uses_transaction_snapshot();
    Ok(Some(match res {
        TmResult::Ok => WriteStep::Done(newtid),
        TmResult::SelfModified | TmResult::Invisible => WriteStep::Skip,
        TmResult::BeingModified { xmax } => {
            ec.wait_for(xmax)?;
            return Ok(None); // retry the same version
        }
        TmResult::Updated { ctid, xmax } => {
            if rr {
                return Err(serialization_failure());
            }
            WriteStep::Follow(ctid, xmax)
        }
        TmResult::Deleted => {
            if rr {
                return Err(if update {
                    serialization_failure()
                } else {
                    serialization_failure_delete()
                });
            }
            WriteStep::Skip
        }
    }))
}

/// Fetches the version at `tid` regardless of snapshot (the newer version
/// an updater left), decoding it into `row`. False if there is none — or
/// if what is there was not inserted by `updater` (PostgreSQL's priorXmax
/// check): the newer version was pruned and its slot reused by another
/// row, so the chain ends here.
fn fetch_newer(
    ec: &Ectx<'_>,
    table: &TableDef,
    tid: ItemPointer,
    updater: TransactionId,
    types: &[SqlType],
    row: &mut Vec<Value>,
) -> PgResult<bool> {
    match ec.db.heap().fetch_any(table.rel, tid, |h, data| {
        (h.xmin == updater).then(|| table.decode_into(data, types, row, ec.db.heap()))
    })? {
        None | Some(None) => Ok(false),
        Some(Some(r)) => {
            r?;
            Ok(true)
        }
    }
}

/// The first row of an UPDATE … FROM / DELETE … USING join for the
/// target row `target`, or None when nothing joins it.
fn dml_join_row(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    j: &crate::planner::modifytable::DmlJoin,
    target: &[Value],
) -> PgResult<Option<Vec<Value>>> {
    for (slot, col) in &j.params {
        let v = target.get(*col).cloned().unwrap_or(Value::Null);
        ec.set_exec_param(*slot, v)?;
    }
    let mut node = execnodes::build(&j.plan.root, vis);
    Ok(if node.next(ec)? {
        Some(node.row().to_vec())
    } else {
        None
    })
}

/// Installs the query state a write statement's subqueries and joins
/// run with (the statement's `Ectx` is dropped after it, state and all).
fn enter_state(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    shared: &Arc<crate::planner::plannodes::StatementPlans>,
) {
    if shared.needs_state() {
        ec.query = Some(Box::new(subplan::QueryState::new(shared.clone(), vis)));
    }
}

/// Runs a DML plan, then fires the foreign key events its writes queued
/// (`crate::ri_triggers`). Returns (rows affected). RETURNING rows go to
/// `emit`.
pub fn run_dml<'a>(
    ec: &mut Ectx<'a>,
    vis: &Vis,
    plan: &Plan,
    emit: &mut dyn FnMut(&mut Ectx<'_>, &[Value]) -> PgResult<()>,
) -> PgResult<u64> {
    let stmt_trigger = statement_trigger_target(plan);
    // INSERT … ON CONFLICT DO UPDATE fires the UPDATE statement triggers
    // too: BEFORE after INSERT's, AFTER before INSERT's.
    let conflict_update = match (plan, &stmt_trigger) {
        (Plan::Insert(p), Some(_)) => match p.on_conflict.as_ref().map(|oc| &oc.action) {
            Some(crate::planner::ConflictAction::Update { assignments, .. }) => {
                Some(assignments.iter().map(|(c, _)| *c).collect::<Vec<usize>>())
            }
            _ => None,
        },
        _ => None,
    };
    if let Some((t, op, cols)) = &stmt_trigger {
        crate::trigger::fire_statement(ec, TriggerRel::table(t), *op, true, cols)?;
        if let Some(uc) = &conflict_update {
            crate::trigger::fire_statement(
                ec,
                TriggerRel::table(t),
                engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                true,
                uc,
            )?;
        }
    }
    let n = modify_table(ec, vis, plan, emit)?;
    crate::ri_triggers::after_statement(ec)?;
    if let Some((t, op, cols)) = &stmt_trigger {
        crate::trigger::fire_after_rows(ec)?;
        if let Some(uc) = &conflict_update {
            crate::trigger::fire_statement(
                ec,
                TriggerRel::table(t),
                engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                false,
                uc,
            )?;
        }
        crate::trigger::fire_statement(ec, TriggerRel::table(t), *op, false, cols)?;
    }
    Ok(n)
}

/// Runs `sql`, an INSERT / UPDATE / DELETE the system issues on the
/// statement's behalf (a foreign key's action), with `params` of `types`,
/// under a new snapshot and command id, as PostgreSQL's SPI does.
pub(crate) fn run_internal_dml(
    ec: &mut Ectx<'_>,
    sql: &str,
    params: &[Value],
    types: &[SqlType],
) -> PgResult<u64> {
    let crate::parser::Stmt::Sql(stmt) = crate::parser::parse_one(sql)? else {
        return Err(PgError::internal("internal statement did not parse"));
    };
    let oids: Vec<pgtypes::Oid> = types.iter().map(|t| t.oid()).collect();
    let planned = loop {
        let planned = {
            let own = ec.xact.own();
            let view = ec
                .db
                .catalog()
                .view(own.xids, ec.db.clog())
                .with_path(&ec.path);
            crate::planner::plan_statement(&view, &stmt, &oids)?
        };
        let target = planned.plan.target_table().cloned();
        match target {
            Some(t)
                if crate::tablerewrite::rewriting_xid(ec.xact.own().xids, &t).is_some()
                    && crate::tablerewrite::wait_for_rewrite(
                        ec.xact,
                        &t,
                        ec.cancel,
                        ec.wait_limits(),
                    )? => {}
            _ => break planned,
        }
    };
    let vis = Vis::take(ec.xact);
    let mut sub = ec.nested(params, vis.snapshot.clone());
    let n = run_dml(&mut sub, &vis, &planned.plan, &mut |_, _| Ok(()))?;
    let deferred = std::mem::take(&mut sub.ri_deferred);
    drop(sub);
    ec.ri_deferred.extend(deferred);
    Ok(n)
}

/// The table, event and SET columns of a DML plan whose table has
/// triggers (`crate::trigger`).
fn statement_trigger_target(plan: &Plan) -> Option<(Arc<TableDef>, u16, Vec<usize>)> {
    use engine::pg_trigger::*;
    let (t, op, cols) = match plan {
        Plan::Insert(p) => (&p.table, TRIGGER_TYPE_INSERT, Vec::new()),
        Plan::Update(p) => (
            &p.table,
            TRIGGER_TYPE_UPDATE,
            update_columns(&p.assignments, p.join.as_ref().map(|j| &j.assignments[..])),
        ),
        Plan::Delete(p) => (&p.table, TRIGGER_TYPE_DELETE, Vec::new()),
        // A view's statement triggers fire in `view_dml`.
        Plan::Query(_) | Plan::ViewDml(_) => return None,
    };
    crate::trigger::has_triggers(t).then(|| (t.clone(), op, cols))
}

/// The columns an UPDATE's SET list names (UPDATE OF triggers).
fn update_columns(a: &[(usize, Expr)], join: Option<&[(usize, Expr)]>) -> Vec<usize> {
    a.iter()
        .chain(join.unwrap_or(&[]).iter())
        .map(|(c, _)| *c)
        .collect()
}

/// The writes of a DML plan (see [`run_dml`]).
fn modify_table<'a>(
    ec: &mut Ectx<'a>,
    vis: &Vis,
    plan: &Plan,
    emit: &mut dyn FnMut(&mut Ectx<'_>, &[Value]) -> PgResult<()>,
) -> PgResult<u64> {
    match plan {
        Plan::Query(_) => Err(PgError::internal("run_dml on a query")),
        Plan::ViewDml(p) => view_dml(ec, vis, p, emit),
        Plan::Insert(p) => {
            enter_state(ec, vis, &p.shared);
            let table = &p.table;
            let _lock = table.lock.shared();
            table.check_not_dropped()?;
            crate::tablerewrite::check_not_rewriting(ec.xact.own().xids, table)?;
            let width = table.columns.len();
            // A table with triggers writes row by row: a BEFORE trigger's
            // queries see the rows inserted before, as in PostgreSQL.
            let row_by_row = crate::trigger::has_triggers(table);
            let bulk_load = matches!(p.source, InsertSource::Query(_));
            let mut batch = InsertBatch::new(false, bulk_load);
            let mut count = 0u64;
            let mut ret = |ec: &mut Ectx<'_>, row: &[Value]| -> PgResult<()> {
                if let Some(r) = &p.returning {
                    let mut out = Vec::with_capacity(r.len());
                    for e in r {
                        let pr = ec.params;
                        out.push(eval(e, row, pr, ec)?);
                    }
                    emit(ec, &out)?;
                }
                Ok(())
            };
            // Builds a full row from source values (None = DEFAULT).
            let build = |ec: &mut Ectx<'_>,
                         vals: &mut dyn Iterator<Item = Option<Value>>|
             -> PgResult<Option<Vec<Value>>> {
                let mut row: Vec<Option<Value>> = vec![None; width];
                for (c, v) in p.target_cols.iter().zip(vals) {
                    row[*c] = v;
                }
                let mut out = Vec::with_capacity(width);
                for (c, v) in row.into_iter().enumerate() {
                    out.push(match v {
                        Some(v) => v,
                        None => match &p.defaults[c] {
                            Some(d) => ec.eval(d, &[])?,
                            None => Value::Null,
                        },
                    });
                }
                let Some(mut out) = crate::trigger::before_row(
                    ec,
                    table,
                    engine::pg_trigger::TRIGGER_TYPE_INSERT,
                    None,
                    Some(out),
                    &[],
                )?
                else {
                    return Ok(None);
                };
                conform_row(table, &mut out)?;
                check_row(table, &out, ec)?;
                Ok(Some(out))
            };
            match &p.source {
                InsertSource::Values(rows) => {
                    for r in rows {
                        ec.tick()?;
                        let mut vals = Vec::with_capacity(r.len());
                        for e in r {
                            vals.push(match e {
                                Some(e) => Some(ec.eval(e, &[])?),
                                None => None,
                            });
                        }
                        let Some(row) = build(ec, &mut vals.into_iter())? else {
                            continue;
                        };
                        if let Some(oc) = &p.on_conflict {
                            count += insert_on_conflict(ec, vis, table, oc, row, &mut ret)?;
                            continue;
                        }
                        batch.push(row);
                        if batch.full() || row_by_row {
                            count += batch.flush(ec, vis, table, &mut ret)?;
                        }
                    }
                }
                InsertSource::Query(q) => {
                    let mut err: Option<PgError> = None;
                    run_query(ec, vis, q, &mut |ec, out| {
                        let Some(row) = build(ec, &mut out.iter().cloned().map(Some))? else {
                            return Ok(());
                        };
                        if let Some(oc) = &p.on_conflict {
                            ec.tick()?;
                            count += insert_on_conflict(ec, vis, table, oc, row, &mut ret)?;
                            return Ok(());
                        }
                        batch.push(row);
                        if batch.full() || row_by_row {
                            match batch.flush(ec, vis, table, &mut ret) {
                                Ok(n) => count += n,
                                Err(e) => {
                                    err = Some(e.clone());
                                    return Err(e);
                                }
                            }
                        }
                        Ok(())
                    })?;
                    if let Some(e) = err {
                        return Err(e);
                    }
                }
            }
            count += batch.flush(ec, vis, table, &mut ret)?;
            Ok(count)
        }
        Plan::Update(p) => {
            enter_state(ec, vis, &p.shared);
            let table = &p.table;
            let _lock = table.lock.shared();
            table.check_not_dropped()?;
            crate::tablerewrite::check_not_rewriting(ec.xact.own().xids, table)?;
            let types = table.types();
            let mut count = 0u64;
            let mut newer: Vec<Value> = Vec::with_capacity(types.len());
            let mut buf: Vec<u8> = Vec::with_capacity(128);
            let fks = crate::ri_triggers::has_foreign_keys(table);
            let trg = crate::trigger::has_triggers(table);
            let set_cols = if trg {
                update_columns(&p.assignments, p.join.as_ref().map(|j| &j.assignments[..]))
            } else {
                Vec::new()
            };
            scan_table(ec, vis, table, &p.access, &p.filter, &mut |ec, tid, row| {
                let mut tid = tid;
                let mut cur: &mut Vec<Value> = row;
                loop {
                    // The new version from the current one.
                    let mut new_row = cur.clone();
                    for (c, e) in &p.assignments {
                        new_row[*c] = ec.eval(e, cur)?;
                    }
                    if let Some(j) = &p.join {
                        let Some(jrow) = dml_join_row(ec, vis, j, cur)? else {
                            return Ok(ControlFlow::Continue(()));
                        };
                        for (c, e) in &j.assignments {
                            new_row[*c] = ec.eval(e, &jrow)?;
                        }
                    }
                    if trg {
                        match crate::trigger::before_row(
                            ec,
                            table,
                            engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                            Some(cur),
                            Some(new_row),
                            &set_cols,
                        )? {
                            Some(r) => new_row = r,
                            None => return Ok(ControlFlow::Continue(())),
                        }
                    }
                    conform_row(table, &mut new_row)?;
                    check_row(table, &new_row, ec)?;
                    let xid = ec.xact.assign_xid()?;
                    let old_toast = stored_toast_datums(ec, table, tid, &types)?;
                    let kept = reusable_pointers(&old_toast, cur, &new_row);
                    let formed = form_tuple(ec, table, &new_row, &kept, xid, &mut buf)?;
                    let (res, newtid) = {
                        let own = ec.xact.own();
                        let cx = VisibilityContext {
                            snapshot: &vis.snapshot,
                            own,
                            clog: ec.db.clog(),
                            procarray: ec.db.procarray(),
                            serializable: None,
                        };
                        ec.db.heap().update(table.rel, tid, &buf, xid, &cx)?
                    };
                    if res != TmResult::Ok {
                        kill_written_toast(ec, &formed, xid)?;
                    }
                    match decide(ec, res, newtid, true)? {
                        None => continue,
                        Some(WriteStep::Skip) => return Ok(ControlFlow::Continue(())),
                        Some(WriteStep::Done(nt)) => {
                            let nt =
                                nt.ok_or_else(|| PgError::internal("update returned no new tid"))?;
                            serializable_conflict_in(ec, &tuple_targets(table, tid))?;
                            delete_dropped_toast(ec, vis, &old_toast, &kept, xid)?;
                            insert_index_entries(ec, vis, table, &new_row, nt, Some(cur))?;
                            if fks {
                                crate::ri_triggers::queue_child_checks(
                                    ec,
                                    table,
                                    &new_row,
                                    Some(cur),
                                )?;
                            }
                            if !p.referenced_by.is_empty() {
                                crate::ri_triggers::queue_parent_events(
                                    ec,
                                    table,
                                    &p.referenced_by,
                                    cur,
                                    Some(&new_row),
                                );
                            }
                            if trg {
                                crate::trigger::queue_after_row(
                                    ec,
                                    table,
                                    engine::pg_trigger::TRIGGER_TYPE_UPDATE,
                                    Some(cur),
                                    Some(&new_row),
                                    &set_cols,
                                )?;
                            }
                            count += 1;
                            if let Some(r) = &p.returning {
                                let mut out = Vec::with_capacity(r.len());
                                for e in r {
                                    out.push(ec.eval(e, &new_row)?);
                                }
                                emit(ec, &out)?;
                            }
                            return Ok(ControlFlow::Continue(()));
                        }
                        Some(WriteStep::Follow(ctid, updater)) => {
                            if !fetch_newer(ec, table, ctid, updater, &types, &mut newer)? {
                                return Ok(ControlFlow::Continue(()));
                            }
                            if !ec.filter(&p.filter, &newer)? {
                                return Ok(ControlFlow::Continue(()));
                            }
                            tid = ctid;
                            std::mem::swap(cur, &mut newer);
                            cur = &mut *cur;
                        }
                    }
                }
            })?;
            Ok(count)
        }
        Plan::Delete(p) => {
            enter_state(ec, vis, &p.shared);
            let table = &p.table;
            let _lock = table.lock.shared();
            table.check_not_dropped()?;
            crate::tablerewrite::check_not_rewriting(ec.xact.own().xids, table)?;
            let types = table.types();
            let mut count = 0u64;
            let mut newer: Vec<Value> = Vec::with_capacity(types.len());
            let trg = crate::trigger::has_triggers(table);
            scan_table(ec, vis, table, &p.access, &p.filter, &mut |ec, tid, row| {
                let mut tid = tid;
                loop {
                    if let Some(j) = &p.join {
                        if dml_join_row(ec, vis, j, row)?.is_none() {
                            return Ok(ControlFlow::Continue(()));
                        }
                    }
                    if trg
                        && crate::trigger::before_row(
                            ec,
                            table,
                            engine::pg_trigger::TRIGGER_TYPE_DELETE,
                            Some(row),
                            None,
                            &[],
                        )?
                        .is_none()
                    {
                        return Ok(ControlFlow::Continue(()));
                    }
                    let xid = ec.xact.assign_xid()?;
                    let res = {
                        let own = ec.xact.own();
                        let cx = VisibilityContext {
                            snapshot: &vis.snapshot,
                            own,
                            clog: ec.db.clog(),
                            procarray: ec.db.procarray(),
                            serializable: None,
                        };
                        ec.db.heap().delete(table.rel, tid, xid, &cx)?
                    };
                    match decide(ec, res, None, false)? {
                        None => continue,
                        Some(WriteStep::Skip) => return Ok(ControlFlow::Continue(())),
                        Some(WriteStep::Done(_)) => {
                            serializable_conflict_in(ec, &tuple_targets(table, tid))?;
                            let old_toast = stored_toast_datums(ec, table, tid, &types)?;
                            delete_dropped_toast(ec, vis, &old_toast, &[], xid)?;
                            if !p.referenced_by.is_empty() {
                                crate::ri_triggers::queue_parent_events(
                                    ec,
                                    table,
                                    &p.referenced_by,
                                    row,
                                    None,
                                );
                            }
                            if trg {
                                crate::trigger::queue_after_row(
                                    ec,
                                    table,
                                    engine::pg_trigger::TRIGGER_TYPE_DELETE,
                                    Some(row),
                                    None,
                                    &[],
                                )?;
                            }
                            count += 1;
                            if let Some(r) = &p.returning {
                                let mut out = Vec::with_capacity(r.len());
                                for e in r {
                                    out.push(ec.eval(e, row)?);
                                }
                                emit(ec, &out)?;
                            }
                            return Ok(ControlFlow::Continue(()));
                        }
                        Some(WriteStep::Follow(ctid, updater)) => {
                            if !fetch_newer(ec, table, ctid, updater, &types, &mut newer)? {
                                return Ok(ControlFlow::Continue(()));
                            }
                            if !ec.filter(&p.filter, &newer)? {
                                return Ok(ControlFlow::Continue(()));
                            }
                            tid = ctid;
                            std::mem::swap(row, &mut newer);
                        }
                    }
                }
            })?;
            Ok(count)
        }
    }
}

/// INSERT / UPDATE / DELETE on a view with INSTEAD OF triggers
/// (`planner::viewdml`): the view's BEFORE statement triggers, the
/// INSTEAD OF triggers for each source row, the AFTER statement
/// triggers. Returns the rows no trigger skipped.
fn view_dml(
    ec: &mut Ectx<'_>,
    vis: &Vis,
    p: &crate::planner::viewdml::ViewDmlPlan,
    emit: &mut dyn FnMut(&mut Ectx<'_>, &[Value]) -> PgResult<()>,
) -> PgResult<u64> {
    use crate::planner::viewdml::ViewRows;
    use engine::pg_trigger::{TRIGGER_TYPE_DELETE, TRIGGER_TYPE_UPDATE};
    enter_state(ec, vis, &p.shared);
    let view = &p.view;
    let rel = TriggerRel::view(view);
    let set_cols = if p.op == TRIGGER_TYPE_UPDATE {
        p.set_columns()
    } else {
        Vec::new()
    };
    crate::trigger::fire_statement(ec, rel, p.op, true, &set_cols)?;
    let width = view.columns.len();
    let mut count = 0u64;
    // One row: the triggers, then the count and RETURNING.
    let mut one =
        |ec: &mut Ectx<'_>, old: Option<Vec<Value>>, new: Option<Vec<Value>>| -> PgResult<()> {
            ec.tick()?;
            let Some(row) = crate::trigger::instead_row(ec, view, p.op, old.as_deref(), new)?
            else {
                return Ok(());
            };
            count += 1;
            if let Some(r) = &p.returning {
                let row = match (&old, p.op) {
                    (Some(o), TRIGGER_TYPE_DELETE) => o,
                    _ => &row,
                };
                let mut out = Vec::with_capacity(r.len());
                for e in r {
                    out.push(ec.eval(e, row)?);
                }
                emit(ec, &out)?;
            }
            Ok(())
        };
    // A value as its view column's type (assignment rules).
    let conform = |v: Value, c: usize| -> PgResult<Value> {
        match view.columns.get(c) {
            Some(col) if !v.is_null() && v.sql_type() != col.ty => {
                pgtypes::value::cast_assign(&v, col.ty)
            }
            _ => Ok(v),
        }
    };
    match &p.rows {
        ViewRows::Insert {
            target_cols,
            source,
        } => {
            let build = |vals: &mut dyn Iterator<Item = Value>| -> PgResult<Vec<Value>> {
                let mut row = vec![Value::Null; width];
                for (c, v) in target_cols.iter().zip(vals) {
                    row[*c] = conform(v, *c)?;
                }
                Ok(row)
            };
            match source {
                InsertSource::Values(rows) => {
                    for r in rows {
                        let mut vals = Vec::with_capacity(r.len());
                        for e in r {
                            vals.push(match e {
                                Some(e) => ec.eval(e, &[])?,
                                None => Value::Null,
                            });
                        }
                        let row = build(&mut vals.into_iter())?;
                        one(ec, None, Some(row))?;
                    }
                }
                InsertSource::Query(q) => {
                    run_query(ec, vis, q, &mut |ec, out| {
                        let row = build(&mut out.iter().cloned())?;
                        one(ec, None, Some(row))
                    })?;
                }
            }
        }
        ViewRows::Scan { query, set } => {
            run_query(ec, vis, query, &mut |ec, out| {
                let old: Vec<Value> = out.iter().take(width).cloned().collect();
                let new = if p.op == TRIGGER_TYPE_UPDATE {
                    let mut new = old.clone();
                    for (c, k) in set {
                        let v = out.get(*k).cloned().unwrap_or(Value::Null);
                        new[*c] = conform(v, *c)?;
                    }
                    Some(new)
                } else {
                    None
                };
                one(ec, Some(old), new)
            })?;
        }
    }
    crate::trigger::fire_statement(ec, rel, p.op, false, &set_cols)?;
    Ok(count)
}
