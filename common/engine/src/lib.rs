//! # engine — transactions, the catalog and replication state over storage
//!
//! The layer between storage and SQL (PostgreSQL's `access/transam` xact
//! half, `catalog/`, `replication/` state and `storage/ipc/standby.c`):
//!
//! * [`xact`] — a session's transaction machine: blocks, savepoints,
//!   isolation levels, commit and abort with their WAL records;
//!   [`twophase`] — PREPARE TRANSACTION and its dummy procs;
//!   [`xact_redo`] — replay of every transaction completion, the one
//!   routine crash recovery and a standby share;
//! * [`catalog`] — tables and indexes (the relation cache), WAL-logged
//!   changes; [`indexing`] — index maintenance that storage, redo and
//!   start-up need without SQL, catalog redo, and the engine's answer to
//!   storage's `HeapRedoHooks` (a standby's indexes and conflicts);
//! * [`replication`] — walsenders, the walreceiver, slots, recovery
//!   progress and the role; [`syncrep`] — commits waiting for synchronous
//!   standbys, released by their replies; [`standby_conflict`] —
//!   cancelling standby sessions whose snapshots replay must overrun;
//! * [`view`] — views: a named query with its columns and dependencies;
//!   [`pg_enum`] — enum types and their labels; [`pg_proc`] — functions
//!   users created (their source; the SQL layer runs them);
//! * [`statistics`] — what ANALYZE learned (pg_statistic), kept by the
//!   catalog and read by the planner.
//!
//! [`Engine`] is the state all of these share on one node: settings, clog,
//! procarray, heap, catalog, prepared transactions, replication state, WAL
//! and the standby sessions replay may cancel. The node (`common::Node`)
//! builds it, runs start-up over it and hands `Arc<Engine>` to sessions;
//! nothing here knows the node, the checkpointer or SQL sessions.
//!
//! ## Invariants
//!
//! 1. Every transaction completion — commit, abort, COMMIT / ROLLBACK
//!    PREPARED, on the primary or replayed — updates the clog first, then
//!    removes the xids from the procarray and bumps its completion counter
//!    under ProcArrayLock held exclusively ([`xact`], [`xact_redo`]).
//! 2. The WAL handle exists from the engine's first moment, in recovery
//!    mode (heap and catalog are built with it); it inserts exactly when
//!    the node may write: from the end of start-up on a primary, from
//!    promotion on a standby.
//! 3. The role changes once, standby to primary, through
//!    [`replication::ReplicationState`]'s one atomic.
//!
//! Lock order (above storage's): relation lock → buffer content lock →
//! ProcArrayLock; catalog locks are leaves.
//!
//! Next: `sql`, which plans and runs statements over this.

use std::sync::{Arc, Weak};

use pgtypes::config::Config;
use pgtypes::error::PgResult;
use pgtypes::fileutil::io_error;
use pgtypes::TransactionId;
use storage::heapam::pruneheap::PruneIndexHook;
use storage::heapam::Heap;
use storage::hio::ExtensionMode;
use storage::smgr::Smgr;
use storage::xloginsert::XLog;
use txn::clog::Clog;
use txn::procarray::ProcArray;

use catalog::Catalog;
use replication::ReplicationState;
use standby_conflict::StandbyConflicts;
use twophase::TwoPhaseState;

pub mod acl;
pub mod backend_status;
pub mod catalog;
pub mod comment;
pub mod indexing;
pub mod namespace;
pub mod pg_enum;
pub mod pg_proc;
pub mod pg_trigger;
pub mod replication;
pub mod sequence;
pub mod standby_conflict;
pub mod statistics;
pub mod syncrep;
pub mod twophase;
pub mod view;
pub mod xact;
pub mod xact_redo;

/// Which role this node plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Accepts writes.
    Primary,
    /// Replays WAL; read-only sessions.
    Standby,
}

/// The shared state of one node's engine (see the crate docs). Fields
/// are private to this crate; the layers above use the accessors.
pub struct Engine {
    /// Server-wide settings: replaced whole on reload
    /// ([`Engine::install_config`]).
    config: parking_lot::RwLock<Arc<Config>>,
    /// Bumped by every [`Engine::install_config`]: sessions compare it at
    /// statement start and take the reloaded values.
    config_generation: std::sync::atomic::AtomicU64,
    /// The same generation, for tasks that wait for a reload
    /// ([`Engine::subscribe_config`]).
    config_watch: tokio::sync::watch::Sender<u64>,
    /// Commit status of every xid.
    clog: Clog,
    /// Running transactions and snapshots.
    procarray: ProcArray,
    /// Heap pages through the buffer pool.
    heap: Heap,
    /// Tables and indexes.
    catalog: Catalog,
    /// Prepared transactions (two-phase commit).
    twophase: TwoPhaseState,
    /// Walsenders, walreceiver, slots, recovery progress.
    replication: ReplicationState,
    /// WAL: in recovery mode until start-up or promotion opens its writer.
    xlog: Arc<XLog>,
    /// Standby sessions replay may have to cancel (standby_conflict.rs).
    standby_conflicts: StandbyConflicts,
    /// What each session is doing (pg_stat_activity; backend_status.rs).
    backend_status: Arc<backend_status::BackendStatusArray>,
}

/// Where queries write temporary files (sorts, hash joins and hash
/// aggregations past `work_mem`; `sql::executor::spill`), relative to the
/// data directory, as PostgreSQL's `base/pgsql_tmp`.
pub const TEMP_DIR: &str = "base/pgsql_tmp";

impl Engine {
    /// Builds the engine's state from the data directory named by
    /// `config` (created if empty): clog, heap and buffer pool, catalog,
    /// procarray (xid assignment resumes at `next_xid`), prepared
    /// transactions and replication slots. A standby starts in recovery.
    /// No WAL is replayed here: that is the node's start-up.
    ///
    /// Built in one pass: the WAL handle first (recovery mode), then heap
    /// and catalog with it, and the heap with its prune hook — index
    /// maintenance on this engine, reached through the weak reference
    /// `Arc::new_cyclic` hands out while the engine is being built.
    pub fn open(config: Config, role: Role, next_xid: TransactionId) -> PgResult<Arc<Engine>> {
        let dir = config.data_dir.clone();
        for sub in ["", "base", "global", "pg_xact", "pg_wal"] {
            let p = dir.join(sub);
            std::fs::create_dir_all(&p).map_err(|e| io_error("create directory", &p, e))?;
        }
        // Temporary files a crash left behind (PostgreSQL's
        // RemovePgTempFiles): no query of this run owns them.
        match std::fs::remove_dir_all(dir.join(TEMP_DIR)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("could not remove temporary files in \"{TEMP_DIR}\": {e}"),
        }
        // WAL first, in recovery mode: heap and catalog log through it
        // once start-up (or promotion) opens its writer.
        let xlog = Arc::new(XLog::new(&config));
        let clog = Clog::open(&dir)?;
        let mode = ExtensionMode::parse(config.get("relation_extension").unwrap_or("bulk"))
            .unwrap_or_default();
        let smgr = Arc::new(Smgr::open(&dir)?);
        let catalog = Catalog::open(&dir, xlog.clone())?;
        let replication = ReplicationState::open(Some(&dir))?;
        let max_prepared = config.max_prepared_transactions();
        let max_procs = config.max_connections() + max_prepared + 8;
        let next = next_xid.max(TransactionId::FIRST_NORMAL);
        let old_snapshot_threshold = config.int("old_snapshot_threshold");
        let pred_limits = txn::predicate::Limits {
            per_transaction: config.int("max_pred_locks_per_transaction"),
            per_relation: config.int("max_pred_locks_per_relation"),
            per_page: config.int("max_pred_locks_per_page"),
            // PostgreSQL's pool of SERIALIZABLEXACTs: ten per slot.
            max_sxacts: (config.max_connections() + max_prepared) * 10,
        };
        let engine = Arc::new_cyclic(|me: &Weak<Engine>| {
            // Pruning removes the index entries of the versions it frees
            // (on a primary; a standby's follow replay instead).
            let me = me.clone();
            let prune_hook: Box<PruneIndexHook> = Box::new(move |rel, items| match me.upgrade() {
                Some(e) => indexing::unindex_pruned_tuples(&e, rel, items, false),
                None => Ok(false),
            });
            Engine {
                procarray: ProcArray::new(max_procs, next)
                    .with_old_snapshot_threshold(old_snapshot_threshold),
                heap: Heap::with_smgr(
                    smgr,
                    config.shared_buffers_pages(),
                    mode,
                    xlog.clone(),
                    Some(prune_hook),
                ),
                config: parking_lot::RwLock::new(Arc::new(config)),
                config_generation: std::sync::atomic::AtomicU64::new(0),
                config_watch: tokio::sync::watch::Sender::new(0),
                clog,
                catalog,
                twophase: TwoPhaseState::new(max_prepared, Some(&dir)),
                replication,
                xlog,
                standby_conflicts: StandbyConflicts::default(),
                backend_status: Arc::default(),
            }
        });
        engine.procarray.predicate().set_limits(pred_limits);
        engine
            .procarray
            .predicate()
            .set_serial_dir(dir.join("pg_serial"));
        engine
            .heap
            .bufmgr()
            .set_ignore_checksum_failure(engine.config().bool("ignore_checksum_failure"));
        // Snapshots' LSN for old_snapshot_threshold: the insert position
        // once the node writes WAL (0 before: every page reaches the
        // precise test); during recovery the replay position (every record
        // replayed later ends past it).
        // Relation sizes for the planner's row estimates.
        let weak = Arc::downgrade(&engine);
        engine.catalog.set_relation_sizes(Box::new(move |rel| {
            weak.upgrade().and_then(|e| e.heap.nblocks(rel).ok())
        }));
        let x = Arc::clone(&engine.xlog);
        let weak = Arc::downgrade(&engine);
        engine.procarray.old_snapshot().set_lsn_sources(
            Box::new(move || x.writer().map_or(wal::Lsn::INVALID, |w| w.insert_lsn())),
            Box::new(move || {
                weak.upgrade().map_or(wal::Lsn::INVALID, |e| {
                    e.replication
                        .replay_lsn
                        .load(std::sync::atomic::Ordering::Acquire)
                })
            }),
        );
        if role == Role::Standby {
            // A standby replays WAL continuously instead of the primary's
            // one-shot crash recovery.
            engine.replication.begin_recovery();
            engine.procarray.set_in_recovery(true);
        }
        Ok(engine)
    }

    /// Primary or standby: a standby is in recovery until promoted
    /// ([`Engine::finish_recovery`]); the one way to ask (the state is
    /// the single atomic in [`ReplicationState`]).
    pub fn role(&self) -> Role {
        if self.replication.in_recovery() {
            Role::Standby
        } else {
            Role::Primary
        }
    }

    /// Server-wide settings, as last loaded or reloaded.
    pub fn config(&self) -> Arc<Config> {
        self.config.read().clone()
    }

    /// How many times the configuration was reloaded: a session whose
    /// copy is older takes the new values ([`Config::rebased`]).
    pub fn config_generation(&self) -> u64 {
        self.config_generation
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Installs a reloaded configuration (SIGHUP): the settings read
    /// through [`Engine::config`] change at once; `full_page_writes`
    /// reaches the WAL handle and `ignore_checksum_failure` the buffer
    /// manager here.
    pub fn install_config(&self, config: Config) {
        self.xlog
            .set_full_page_writes(config.bool("full_page_writes"));
        self.heap
            .bufmgr()
            .set_ignore_checksum_failure(config.bool("ignore_checksum_failure"));
        *self.config.write() = Arc::new(config);
        let gen = self
            .config_generation
            .fetch_add(1, std::sync::atomic::Ordering::Release)
            + 1;
        self.config_watch.send_replace(gen);
    }

    /// Changes at every [`Engine::install_config`] (the walreceiver's
    /// settings follow the configuration this way).
    pub fn subscribe_config(&self) -> tokio::sync::watch::Receiver<u64> {
        self.config_watch.subscribe()
    }

    /// Commit status of every xid.
    pub fn clog(&self) -> &Clog {
        &self.clog
    }

    /// Running transactions and snapshots.
    pub fn procarray(&self) -> &ProcArray {
        &self.procarray
    }

    /// Heap pages through the buffer pool.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    /// Tables and indexes.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Prepared transactions (two-phase commit).
    pub fn twophase(&self) -> &TwoPhaseState {
        &self.twophase
    }

    /// Walsenders, walreceiver, slots, recovery progress and the role.
    pub fn replication(&self) -> &ReplicationState {
        &self.replication
    }

    /// Standby sessions replay may have to cancel.
    pub fn standby_conflicts(&self) -> &StandbyConflicts {
        &self.standby_conflicts
    }

    /// The sessions' rows of pg_stat_activity (backend_status.rs).
    pub fn backend_status(&self) -> &Arc<backend_status::BackendStatusArray> {
        &self.backend_status
    }

    /// The WAL handle (in recovery mode until start-up or promotion opens
    /// its writer: [`XLog::writer`]).
    pub fn xlog(&self) -> &Arc<XLog> {
        &self.xlog
    }

    /// VACUUM (`tables` empty: all tables). For each table, under its
    /// shared relation lock, the heap pass ([`Heap::vacuum_relation`]):
    /// every page pruned against the current horizon — dead versions lose
    /// their index entries and their line pointers become reusable — and
    /// every page's free space recorded in the FSM, so inserts reuse it.
    ///
    /// There is no separate index pass: pruning removes a version's
    /// entries before it frees the slot, which is the only safe order (an
    /// index pass that checked a tid and then removed its entry could
    /// remove the entry of a newer version of the same key that reused the
    /// slot in between). Entries of a page a concurrent index build kept
    /// from being pruned go at that page's next prune.
    ///
    /// Returns the number of versions removed.
    pub fn vacuum(&self, tables: &[String]) -> PgResult<usize> {
        let list = if tables.is_empty() {
            self.catalog.tables()
        } else {
            tables
                .iter()
                .map(|t| self.catalog.table(t))
                .collect::<PgResult<Vec<_>>>()?
        };
        // TransactionIdLimitedForOldSnapshots: with old_snapshot_threshold
        // on, versions only snapshots older than it need go too.
        let horizon = self
            .procarray
            .limit_for_old_snapshots(self.procarray.oldest_xmin());
        let mut removed = 0;
        for t in list {
            let _lock = t.lock.shared();
            if t.check_not_dropped().is_err() {
                continue;
            }
            let st = self
                .heap
                .vacuum_relation(t.rel, horizon, &self.clog, &self.procarray)?;
            removed += st.removed;
            tracing::debug!(
                "vacuum of \"{}\": removed {} dead row versions, {} are dead but not yet removable",
                t.name,
                st.removed,
                st.recently_dead
            );
        }
        Ok(removed)
    }
}
