//! The node: the engine's shared state (settings, clog, procarray, heap
//! and buffer pool, catalog, prepared transactions, replication state,
//! WAL), the parse cache its sessions share, and the checkpointer.
//!
//! [`Node::open`] assembles it from a data directory in one pass — the
//! engine first (its WAL handle in recovery mode, heap and catalog built
//! with it), then start-up:
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
//! [`Node::checkpoint`] is `CHECKPOINT`; [`Node::shutdown`] is the
//! clean stop (shutdown checkpoint, after which start-up needs no redo).

use std::sync::Arc;

use crate::checkpointer::{self, CheckpointKind, CheckpointerState};
use crate::xlog::ControlFile;
use engine::{Engine, Role};
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::TransactionId;
use sql::parser::ParseCache;

/// One node: its engine, the parse cache its sessions share and the
/// checkpointer. Built in one pass by [`Node::open`]; derefs to the
/// [`Engine`] for the layers' shared state.
pub struct Node {
    engine: Arc<Engine>,
    /// Parsed statements by query text.
    parse_cache: ParseCache,
    /// Checkpoint serialisation and the background checkpointer.
    checkpointer: CheckpointerState,
    /// pg_hba.conf as loaded (replaced whole on reload).
    hba: crate::auth::HbaState,
    /// The TLS context of `ssl = on` (replaced whole on reload).
    tls: server::tls::TlsState,
}

impl std::ops::Deref for Node {
    type Target = Engine;
    fn deref(&self) -> &Engine {
        &self.engine
    }
}

/// `data_checksums` as the data directory has it: the control file's (a
/// `-c` value that differs is ignored, with a warning), or for a new
/// directory the setting (initdb's `--data-checksums`). Folded into the
/// configuration, so `SHOW data_checksums` and every layer read the
/// directory's value.
fn with_data_checksums(mut config: Config, ctl: Option<&ControlFile>) -> PgResult<Config> {
    let asked = config.bool("data_checksums");
    let on =
        match ctl {
            Some(c) => {
                if asked != c.data_checksums {
                    tracing::warn!(
                    "data_checksums = {} ignored: the data directory was created with checksums {}",
                    if asked { "on" } else { "off" },
                    if c.data_checksums { "enabled" } else { "disabled" }
                );
                }
                c.data_checksums
            }
            None => asked,
        };
    config.set("data_checksums", if on { "on" } else { "off" })?;
    config.fold();
    Ok(config)
}

/// Texts kept by the parse cache.
const PARSE_CACHE_SIZE: usize = 4096;

impl Node {
    /// Opens (creating if empty) the data directory named by `config`,
    /// running crash recovery if the last stop was not clean.
    pub fn open(config: Config, role: Role) -> PgResult<Arc<Node>> {
        // Index expressions are SQL: the engine computes their keys (redo,
        // the start-up rebuild) through the SQL layer's binder.
        sql::indexcmds::install();
        let ctl = ControlFile::read(&config.data_dir)?;
        let config = with_data_checksums(config, ctl.as_ref())?;
        // next_xid comes from the checkpoint and every xid replayed after it.
        let next = TransactionId(ctl.map(|c| c.next_xid).unwrap_or(0));
        let hba = crate::auth::HbaState::load(&config)?;
        let tls = server::tls::TlsState::load(&config)
            .map_err(|m| PgError::new(sqlstate::CONFIG_FILE_ERROR, m))?;
        let db = Node {
            hba,
            tls,
            engine: Engine::open(config, role, next)?,
            parse_cache: ParseCache::new(PARSE_CACHE_SIZE),
            checkpointer: CheckpointerState::default(),
        };
        {
            let dir = db.config().data_dir.clone();
            db.replication()
                .set_control_reader(engine::replication::ControlReader(Box::new(move || {
                    ControlFile::read(&dir).ok().flatten().map(|c| {
                        engine::replication::CheckpointInfo {
                            checkpoint_lsn: c.checkpoint,
                            redo_lsn: c.redo,
                            timeline: c.timeline,
                            prev_timeline: c.prev_timeline,
                            next_xid: c.next_xid,
                            next_oid: c.next_oid,
                            time_us: c.time_us,
                            segment_size: c.segment_size,
                        }
                    })
                })));
        }
        if role == Role::Primary {
            // The cluster's identity, made durable before any standby can
            // ask for it (a standby's comes with its base backup).
            crate::xlog::system_identifier(&db);
            crate::xlog::startup(&db, ctl)?;
            // Tables and indexes whose creating transaction never committed
            // (running at a crash) go before anyone can see them.
            engine::indexing::resolve_uncommitted_ddl(&db)?;
        }
        let max_seen = engine::indexing::rebuild_all_indexes(&db)?;
        if max_seen + 1 > db.procarray().next_xid().0 {
            db.procarray().advance_next_xid(TransactionId(max_seen));
        }
        // After redo (which registered PREPAREs and dropped finished ones),
        // before any session: prepared transactions hold their xids as
        // running again.
        engine::twophase::restore_at_startup(db.engine().as_ref())?;
        tracing::debug!(
            tables = db.catalog().tables().len(),
            next_xid = db.procarray().next_xid().0,
            "database opened"
        );
        // Slots keep their standbys' xmins across restarts: the horizon
        // holds them before the first session or standby arrives.
        engine::replication::update_replication_xmin(&db);
        db.replication().set_sync_standby_names(
            db.config().get("synchronous_standby_names").unwrap_or(""),
            sync_standby_names(&db.config()),
        );
        let db = Arc::new(db);
        // A primary prunes from here on, a standby only once promoted.
        if role == Role::Primary {
            db.heap().enable_pruning();
        }
        checkpointer::start(&db).map_err(|e| {
            PgError::new(
                sqlstate::IO_ERROR,
                format!("could not start the checkpointer: {e}"),
            )
        })?;
        Ok(db)
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
    ///    removed (`engine::indexing::resolve_uncommitted_ddl`).
    ///
    /// `next_xid` is already past every xid replayed (KnownAssignedXids
    /// tracking advanced it), so xid assignment continues after them.
    pub fn finish_recovery(&self, end: wal::WalPosition, segment_size: u64) -> PgResult<()> {
        if !self.replication().in_recovery() {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "recovery is not in progress",
            ));
        }
        crate::xlog::open_after_recovery(self, end, segment_size, true)?;
        engine::twophase::restore_at_promotion(self.engine.as_ref())?;
        let orphans = self.procarray().orphaned_known_assigned();
        for x in &orphans {
            self.clog()
                .set_status(*x, &[], txn::clog::XidStatus::Aborted);
        }
        if !orphans.is_empty() {
            tracing::debug!(
                "marked {} transaction(s) left running by the old primary as aborted",
                orphans.len()
            );
        }
        self.procarray().end_recovery(
            orphans
                .iter()
                .copied()
                .max()
                .unwrap_or(TransactionId::INVALID),
        );
        // Fast promotion when the control file is a restartpoint of this
        // standby (crash recovery would replay from it across the timeline
        // switch); otherwise the end-of-recovery checkpoint first.
        let fast = checkpointer::end_recovery_fast(self)?;
        if !fast {
            checkpointer::create_checkpoint(self, CheckpointKind::EndOfRecovery)?;
        }
        self.replication().end_recovery();
        // Pages now change by this node's own writes: pruning may too.
        self.heap().enable_pruning();
        // Creations of the transactions the old primary left running (just
        // marked aborted) are removed, WAL-logged like any DDL.
        engine::indexing::resolve_uncommitted_ddl(self)?;
        if fast {
            // Standbys following the new timeline learn at once that the
            // old primary's unfinished transactions are over.
            if let Err(e) = engine::replication::log_running_xacts(self) {
                tracing::warn!("could not log running transactions: {}", e.message);
            }
            // The new timeline's first checkpoint, in the background.
            self.checkpointer().request(CheckpointKind::Force);
        }
        Ok(())
    }

    /// The engine's shared state, for sessions and the replication ends.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The loaded client authentication rules.
    pub fn hba(&self) -> &crate::auth::HbaState {
        &self.hba
    }

    /// The TLS context (`ssl*` settings), reloaded with pg_hba.conf.
    pub fn tls(&self) -> &server::tls::TlsState {
        &self.tls
    }

    /// Parsed statements by query text, shared by the node's sessions.
    pub fn parse_cache(&self) -> &ParseCache {
        &self.parse_cache
    }

    /// The checkpointer's state (request lock, replayed checkpoints).
    pub fn checkpointer(&self) -> &CheckpointerState {
        &self.checkpointer
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
    /// checkpointer, logs the sequences' real counters (so they continue
    /// without the gap a crash leaves), writes the shutdown checkpoint (the
    /// next start needs no redo) and closes the WAL writer. Later writes
    /// fail.
    pub fn shutdown(&self) -> PgResult<()> {
        self.checkpointer.stop();
        if self.role() == Role::Standby {
            // The standby's WAL writer belongs to its walreceiver, which
            // closes it.
            return checkpointer::create_restartpoint(self, CheckpointKind::Shutdown).map(|_| ());
        }
        self.engine.catalog().settle_sequences()?;
        checkpointer::create_checkpoint(self, CheckpointKind::Shutdown)?;
        // Walsenders send the shutdown checkpoint before they end, so a
        // standby promoted in this node's place has all of its WAL and
        // this node can follow it without a rewind (PostgreSQL's
        // WalSndWaitStopping / WalSndDone).
        self.replication().set_wal_final();
        if let Some(w) = self.xlog().writer() {
            w.shutdown().map_err(storage::xloginsert::wal_error)?;
        }
        Ok(())
    }
}

impl sql::NodeServices for Node {
    fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }
    fn parse_cache(&self) -> &ParseCache {
        &self.parse_cache
    }
    fn checkpoint(&self) -> PgResult<()> {
        Node::checkpoint(self)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.checkpointer.stop();
    }
}

/// `synchronous_standby_names` of `config`, parsed (None: empty; a bad
/// value never gets this far — loading the configuration checks it).
fn sync_standby_names(config: &Config) -> Option<pgtypes::syncrep_gram::SyncStandbyNames> {
    let v = config.get("synchronous_standby_names").unwrap_or("");
    pgtypes::syncrep_gram::parse_sync_standby_names(v)
        .ok()
        .flatten()
}

impl Node {
    /// SIGHUP and `pg_reload_conf()` (PostgreSQL's ProcessConfigFile): the
    /// configuration files are read again ([`Config::reload`]); a file
    /// with an error changes nothing and says why. Otherwise every setting
    /// that may change without a restart takes its new value — read
    /// through [`Engine::config`] from now on, by sessions at their next
    /// statement, and pushed here to what keeps a copy: the WAL writer's
    /// `fsync`, `synchronous_standby_names`, the log filter, pg_hba.conf
    /// and the TLS context (re-read at every reload, as PostgreSQL's are);
    /// the walreceiver follows through [`Engine::subscribe_config`]. A
    /// restart-only setting keeps its value and is reported pending.
    pub fn reload(&self) {
        tracing::info!("received SIGHUP, reloading configuration files");
        let running = self.config();
        match running.reload() {
            Ok(r) => {
                for name in &r.needs_restart {
                    tracing::info!(
                        "parameter \"{name}\" cannot be changed without restarting the server"
                    );
                }
                for (name, value) in &r.applied {
                    tracing::info!("parameter \"{name}\" changed to \"{value}\"");
                }
                let config = r.config;
                let fsync = config.bool("fsync");
                if let Some(w) = self.engine().xlog().writer() {
                    w.set_fsync(fsync);
                }
                if let Some(w) = self.replication().wal_writer() {
                    w.set_fsync(fsync);
                }
                server::reload::log_min_messages(config.get("log_min_messages").unwrap_or("info"));
                self.replication().set_sync_standby_names(
                    config.get("synchronous_standby_names").unwrap_or(""),
                    sync_standby_names(&config),
                );
                self.engine().install_config(config);
            }
            Err(e) => tracing::error!(
                "configuration file \"{}\" contains errors; no changes were applied: {}",
                running.data_dir.join("hotpair.conf").display(),
                e.message
            ),
        }
        let config = self.config();
        self.hba().reload(&config);
        self.tls().reload(&config);
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
        let db = Node::open(cfg, Role::Standby).expect("open a standby");
        assert_eq!(db.role(), Role::Standby);
        assert!(db.xlog().writer().is_none());
        let t = TransactionId;
        db.procarray()
            .init_known_assigned(&[t(4), t(5)], false, t(6), t(3));
        engine::twophase::redo_prepare(db.engine().as_ref(), TransactionId(5), &[], 0, "g1", &[]);

        let seg = crate::xlog::segment_size(&db.config(), None).expect("segment size");
        db.finish_recovery(wal::WalPosition::initial(seg), seg)
            .expect("promote");
        assert_eq!(db.role(), Role::Primary);
        assert!(!db.replication().in_recovery());
        assert_eq!(db.clog().get_status(t(4)), XidStatus::Aborted);
        assert_eq!(db.clog().get_status(t(5)), XidStatus::InProgress);
        assert!(db.procarray().xid_is_running(t(5)));
        assert!(!db.procarray().xid_is_running(t(4)));
        assert!(db.procarray().known_assigned().is_empty());
        assert_eq!(db.twophase().list()[0].gid, "g1");
        assert!(db.xlog().writer().is_some());
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
