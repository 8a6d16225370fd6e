//! The node-wide shared state every session holds an `Arc` of: settings,
//! clog, procarray, heap (buffer pool), catalog, parse cache, WAL and the
//! checkpointer.
//!
//! [`Database::open`] assembles it from a data directory:
//!
//! ```text
//!  DIR/ (created if empty)
//!   ├── base/         relation files (smgr)
//!   ├── global/       pg_control (last checkpoint), catalog
//!   ├── pg_twophase/  state files of prepared transactions (twophase.rs)
//!   ├── pg_wal/       WAL segments
//!   └── pg_xact/      clog segments
//! ```
//!
//! and then runs start-up ([`crate::xlog::startup`]): a new cluster gets
//! its first WAL segment and checkpoint; an existing one replays WAL from
//! the control file's checkpoint (crash recovery) — heap pages, relation
//! files, catalog, clog, `next_xid` — and opens the WAL writer at the end
//! of valid WAL. Indexes are in memory: they are rebuilt from the heap after
//! redo. Finally the background checkpointer starts.
//!
//! [`Database::checkpoint`] is `CHECKPOINT`; [`Database::shutdown`] is the
//! clean stop (shutdown checkpoint, after which start-up needs no redo).

use std::sync::{Arc, OnceLock};

use crate::checkpointer::{self, CheckpointKind, CheckpointerState};
use crate::replication::ReplicationState;
use crate::sql::catalog::Catalog;
use crate::sql::parser::ParseCache;
use crate::standby_conflict::StandbyConflicts;
use crate::twophase::TwoPhaseState;
use crate::xlog::ControlFile;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::fileutil::io_error as io_err;
use pgtypes::TransactionId;
use storage::heapam::Heap;
use storage::hio::ExtensionMode;
use storage::xloginsert::XLog;
use txn::clog::Clog;
use txn::procarray::ProcArray;

/// Which role this node plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Accepts writes.
    Primary,
    /// Replays WAL; read-only sessions.
    Standby,
}

/// Shared state of one node.
pub struct Database {
    /// Server-wide settings.
    pub config: Config,
    /// Commit status of every xid.
    pub clog: Clog,
    /// Running transactions and snapshots.
    pub procarray: ProcArray,
    /// Heap pages through the buffer pool.
    pub heap: Heap,
    /// Tables and indexes.
    pub catalog: Catalog,
    /// Parsed statements by query text.
    pub parse_cache: ParseCache,
    /// Prepared transactions (two-phase commit).
    pub twophase: TwoPhaseState,
    /// Walsenders, walreceiver, slots, recovery progress.
    pub replication: ReplicationState,
    /// WAL, set once start-up has replayed it and opened the writer.
    xlog: OnceLock<Arc<XLog>>,
    /// Checkpoint serialisation and the background checkpointer.
    pub checkpointer: CheckpointerState,
    /// Standby sessions replay may have to cancel (standby_conflict.rs).
    pub standby_conflicts: StandbyConflicts,
}

/// Texts kept by the parse cache.
const PARSE_CACHE_SIZE: usize = 4096;

impl Database {
    /// Opens (creating if empty) the data directory named by `config`,
    /// running crash recovery if the last stop was not clean.
    pub fn open(config: Config, role: Role) -> PgResult<Arc<Database>> {
        let dir = config.data_dir.clone();
        for sub in ["", "base", "global", "pg_xact", "pg_wal"] {
            let p = dir.join(sub);
            std::fs::create_dir_all(&p).map_err(|e| io_err("create directory", &p, e))?;
        }
        let ctl = ControlFile::read(&dir)?;
        let clog = Clog::open(&dir)?;
        let mode = ExtensionMode::parse(config.get("relation_extension").unwrap_or("bulk"))
            .unwrap_or_default();
        let heap = Heap::open(&dir, config.shared_buffers_pages(), mode)?;
        let catalog = Catalog::open(&dir)?;
        let max_prepared = config.max_prepared_transactions();
        let max_procs = config.max_connections() + max_prepared + 8;
        // next_xid comes from the checkpoint and every xid replayed after it.
        let next = TransactionId(
            ctl.map(|c| c.next_xid)
                .unwrap_or(0)
                .max(TransactionId::FIRST_NORMAL.0),
        );
        let db = Database {
            procarray: ProcArray::new(max_procs, next),
            config,
            clog,
            heap,
            catalog,
            parse_cache: ParseCache::new(PARSE_CACHE_SIZE),
            twophase: TwoPhaseState::new(max_prepared, Some(&dir)),
            replication: ReplicationState::open(Some(&dir))?,
            xlog: OnceLock::new(),
            checkpointer: CheckpointerState::default(),
            standby_conflicts: StandbyConflicts::default(),
        };
        if role == Role::Standby {
            // A standby replays WAL continuously (standby::startup) instead
            // of the primary's one-shot crash recovery.
            db.replication.begin_recovery();
            db.procarray.set_in_recovery(true);
        } else {
            crate::xlog::startup(&db, ctl)?;
            // The walsender streams from, and base backups read, this writer.
            if let Some(x) = db.xlog() {
                db.replication.set_wal_writer(x.writer().clone());
            }
            // Tables and indexes whose creating transaction never committed
            // (running at a crash) go before anyone can see them.
            crate::sql::ddl::resolve_uncommitted_ddl(&db)?;
        }
        let max_seen = crate::sql::ddl::rebuild_all_indexes(&db)?;
        if max_seen + 1 > db.procarray.next_xid().0 {
            db.procarray.advance_next_xid(TransactionId(max_seen));
        }
        // After redo (which registered PREPAREs and dropped finished ones),
        // before any session: prepared transactions hold their xids as
        // running again.
        crate::twophase::restore_at_startup(&db)?;
        tracing::debug!(
            tables = db.catalog.tables().len(),
            next_xid = db.procarray.next_xid().0,
            "database opened"
        );
        // Slots keep their standbys' xmins across restarts: the horizon
        // holds them before the first session or standby arrives.
        crate::replication::update_replication_xmin(&db);
        let db = Arc::new(db);
        // Pruning removes index entries through the SQL layer; a primary
        // prunes from here on, a standby only once promoted.
        let weak = Arc::downgrade(&db);
        db.heap
            .set_prune_index_hook(Box::new(move |rel, items| match weak.upgrade() {
                Some(db) => crate::sql::ddl::unindex_pruned_tuples(&db, rel, items, false),
                None => Ok(false),
            }));
        if role == Role::Primary {
            db.heap.enable_pruning();
        }
        checkpointer::start(&db).map_err(|e| {
            PgError::new(
                sqlstate::IO_ERROR,
                format!("could not start the checkpointer: {e}"),
            )
        })?;
        Ok(db)
    }

    /// Primary or standby: a standby is in recovery until promoted
    /// ([`Database::finish_recovery`]); the one way to ask (the state is
    /// the single atomic in [`ReplicationState`]).
    pub fn role(&self) -> Role {
        if self.replication.in_recovery() {
            Role::Standby
        } else {
            Role::Primary
        }
    }

    /// Promotion, the database half (the end of StartupXLOG on a standby;
    /// the standby crate stops the walreceiver, replays to the end of valid
    /// WAL and calls this with that end). In order:
    ///
    /// 1. the WAL writer opens at `end` and is installed (heap, catalog,
    ///    walsenders) — nothing writes yet: the role is still standby;
    /// 2. prepared transactions get dummy procs, while snapshots still come
    ///    from KnownAssignedXids (which hold their xids too);
    /// 3. every other KnownAssignedXid — a transaction the old primary left
    ///    running — is marked aborted in the clog, then the procarray leaves
    ///    recovery (KnownAssignedXids emptied, completion counter bumped);
    /// 4. the end-of-recovery checkpoint (control file in production, no
    ///    restartpoint after it);
    /// 5. the role switch: [`ReplicationState`]'s one atomic. From here on
    ///    sessions may write, new sessions report `in_hot_standby = off`;
    /// 6. tables and indexes created by those orphaned transactions are
    ///    removed (`ddl::resolve_uncommitted_ddl`).
    ///
    /// `next_xid` is already past every xid replayed (KnownAssignedXids
    /// tracking advanced it), so xid assignment continues after them.
    pub fn finish_recovery(&self, end: wal::WalPosition, segment_size: u64) -> PgResult<()> {
        if !self.replication.in_recovery() {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "recovery is not in progress",
            ));
        }
        crate::xlog::open_after_recovery(self, end, segment_size)?;
        crate::twophase::restore_at_promotion(self)?;
        let orphans = self.procarray.orphaned_known_assigned();
        for x in &orphans {
            self.clog.set_status(*x, &[], txn::clog::XidStatus::Aborted);
        }
        if !orphans.is_empty() {
            tracing::debug!(
                "marked {} transaction(s) left running by the old primary as aborted",
                orphans.len()
            );
        }
        self.procarray.end_recovery(
            orphans
                .iter()
                .copied()
                .max()
                .unwrap_or(TransactionId::INVALID),
        );
        checkpointer::create_checkpoint(self, CheckpointKind::EndOfRecovery)?;
        self.replication.end_recovery();
        // Pages now change by this node's own writes: pruning may too.
        self.heap.enable_pruning();
        // Creations of the transactions the old primary left running (just
        // marked aborted) are removed, WAL-logged like any DDL.
        crate::sql::ddl::resolve_uncommitted_ddl(self)?;
        Ok(())
    }

    /// The WAL handle (set once start-up finished).
    pub fn xlog(&self) -> Option<&Arc<XLog>> {
        self.xlog.get()
    }

    /// Start-up only: installs the opened WAL.
    pub(crate) fn set_xlog(&self, xlog: Arc<XLog>) {
        let _ = self.xlog.set(xlog);
    }

    /// CHECKPOINT: writes dirty heap pages and clog pages, logs a checkpoint
    /// record and points the control file at it. On a standby: a
    /// restartpoint at the newest replayed checkpoint (nothing if there is
    /// none newer than the last one).
    /// Safe inside the tokio runtime (runs in `block_in_place`).
    pub fn checkpoint(&self) -> PgResult<()> {
        pgtypes::blocking::run_blocking(|| {
            if self.role() == Role::Standby {
                checkpointer::create_restartpoint(self, CheckpointKind::Immediate).map(|_| ())
            } else {
                checkpointer::create_checkpoint(self, CheckpointKind::Immediate).map(|_| ())
            }
        })
    }

    /// Clean shutdown, after the sessions are gone: stops the background
    /// checkpointer, writes the shutdown checkpoint (the next start needs no
    /// redo) and closes the WAL writer. Later writes fail.
    pub fn shutdown(&self) -> PgResult<()> {
        self.checkpointer.stop();
        if self.role() == Role::Standby {
            // The standby's WAL writer belongs to its walreceiver, which
            // closes it.
            return checkpointer::create_restartpoint(self, CheckpointKind::Shutdown).map(|_| ());
        }
        checkpointer::create_checkpoint(self, CheckpointKind::Shutdown)?;
        if let Some(x) = self.xlog() {
            x.writer()
                .shutdown()
                .map_err(storage::xloginsert::wal_error)?;
        }
        Ok(())
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
        let horizon = self.procarray.oldest_xmin();
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

impl Drop for Database {
    fn drop(&mut self) {
        self.checkpointer.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xlog::DbState;
    use txn::clog::XidStatus;

    /// Promotion's database half: the role switches once; the orphaned
    /// KnownAssignedXid is aborted, the prepared one keeps running with a
    /// dummy proc and stays listed; WAL is open, the control file says in
    /// production, and no restartpoint follows.
    #[test]
    fn finish_recovery_switches_role_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = Config::new(dir.path());
        cfg.set("fsync", "off").expect("fsync"); // a throw-away directory
        cfg.set("max_prepared_transactions", "2").expect("setting");
        let db = Database::open(cfg, Role::Standby).expect("open a standby");
        assert_eq!(db.role(), Role::Standby);
        assert!(db.xlog().is_none());
        let t = TransactionId;
        db.procarray.init_known_assigned(&[t(4), t(5)], t(6), t(3));
        crate::twophase::redo_prepare(&*db, 5, &[], 0, "g1", &[]);

        let seg = crate::xlog::segment_size(&db.config, None).expect("segment size");
        db.finish_recovery(wal::WalPosition::initial(seg), seg)
            .expect("promote");
        assert_eq!(db.role(), Role::Primary);
        assert!(!db.replication.in_recovery());
        assert_eq!(db.clog.get_status(t(4)), XidStatus::Aborted);
        assert_eq!(db.clog.get_status(t(5)), XidStatus::InProgress);
        assert!(db.procarray.xid_is_running(t(5)));
        assert!(!db.procarray.xid_is_running(t(4)));
        assert!(db.procarray.known_assigned().is_empty());
        assert_eq!(db.twophase.list()[0].gid, "g1");
        assert!(db.xlog().is_some());
        let ctl = ControlFile::read(dir.path())
            .expect("control file")
            .expect("written");
        assert_eq!(ctl.state, DbState::InProduction);
        assert!(
            checkpointer::create_restartpoint(&db, CheckpointKind::Time)
                .expect("no error")
                .is_none(),
            "no restartpoint after the end-of-recovery checkpoint"
        );
        let e = db
            .finish_recovery(wal::WalPosition::initial(seg), seg)
            .expect_err("only once");
        assert_eq!(e.code, sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE);
    }
}
