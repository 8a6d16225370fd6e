//! # standby — a hot standby node
//!
//! `standby -D DIR -p PORT --primary-conninfo 'host=… port=… application_name=…'
//! [--slot NAME] [-c name=value]…`
//!
//! ```text
//!  DIR empty? ── yes ─▶ BASE_BACKUP from the primary (progress on stdout),
//!       │               write hotpair.conf (primary_conninfo, primary_slot_name,
//!       │               port) and standby.signal
//!       ▼
//!  Config::load ─▶ no standby.signal (promoted)? ─ yes ─▶ common::postmaster::run_primary
//!       ▼
//!  bind ─▶ Node::open(Standby) ─▶ WAL writer at end of local WAL
//!       ─▶ startup thread (redo from the last restartpoint, else from
//!          backup_label's start) + walreceiver task
//!       ─▶ serve read-only sessions (57P03 until consistent) until SIGINT/SIGTERM
//!          ├─ promotion (pg_promote(), DIR/promote): the startup thread
//!          │  stops the walreceiver, replays to the end of valid WAL and
//!          │  makes the node a primary (standby::promote); the running-xacts
//!          │  timer starts, walsenders are served
//!       ─▶ stop receiving and replaying, shutdown restartpoint (promoted:
//!          shutdown checkpoint)
//! ```
//!
//! Where a (re)start begins: `global/pg_control` in state
//! `InArchiveRecovery` was written by this standby's last restartpoint —
//! replay starts at its redo point and the standby is consistent once it has
//! replayed past both its minimum recovery point and the end of the WAL it
//! had already received (pages on disk may hold any of those changes).
//! Otherwise (the primary's control file from the base backup) replay
//! starts at the backup's start and is consistent past the backup's end.

#[path = "../../primary/src/logging.rs"]
mod logging;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use common::node::Node;
use common::xlog::{ControlFile, DbState};
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use server::BackendFactory;
use sql::session::Session;
use standby::basebackup::{self, BackupLabel};
use standby::conninfo::ConnInfo;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use wal::{WalPosition, WalReader, WalWriter, WalWriterOptions};

/// Command line of the `standby` binary.
#[derive(Parser, Debug)]
#[command(
    name = "standby",
    version,
    about = "hotpair hot standby node (read-only until promoted)"
)]
struct Args {
    /// Data directory; if empty, a base backup of the primary is taken into it.
    #[arg(short = 'D', long = "data-dir", value_name = "DIR")]
    data_dir: PathBuf,
    /// TCP port to listen on.
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    port: Option<u16>,
    /// Connection string of the primary (remembered in hotpair.conf).
    #[arg(long = "primary-conninfo", value_name = "CONNINFO")]
    primary_conninfo: Option<String>,
    /// Replication slot on the primary (remembered in hotpair.conf).
    #[arg(long = "slot", value_name = "NAME")]
    slot: Option<String>,
    /// Set a configuration parameter (repeatable).
    #[arg(short = 'c', value_name = "NAME=VALUE")]
    settings: Vec<String>,
}

fn dir_is_empty(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut rd) => rd.next().is_none(),
        Err(_) => true,
    }
}

fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = match server::build_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("FATAL:  {e}");
            return ExitCode::FAILURE;
        }
    };
    if dir_is_empty(&args.data_dir) {
        logging::init(None);
        let Some(ci_text) = &args.primary_conninfo else {
            tracing::error!(
                fatal = true,
                "data directory \"{}\" is empty and no --primary-conninfo was given",
                args.data_dir.display()
            );
            return ExitCode::FAILURE;
        };
        let ci = match ConnInfo::parse(ci_text) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(fatal = true, "invalid primary_conninfo: {e}");
                return ExitCode::FAILURE;
            }
        };
        println!(
            "taking a base backup of {}:{} into {}",
            ci.host,
            ci.port,
            args.data_dir.display()
        );
        let mut last_pct = u64::MAX;
        let r = rt.block_on(basebackup::take(&ci, &args.data_dir, |done, total| {
            let pct = (done * 100).checked_div(total).unwrap_or(100);
            if pct != last_pct {
                last_pct = pct;
                println!("{} / {} kB ({pct}%)", done / 1024, total / 1024);
            }
        }));
        let label = match r {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(fatal = true, "{e}");
                return ExitCode::FAILURE;
            }
        };
        println!(
            "base backup completed: WAL {} to {}",
            label.start, label.end
        );
        let mut conf = String::from("# written by standby at base backup\n");
        conf.push_str(&format!("primary_conninfo = {}\n", quote(ci_text)));
        if let Some(s) = &args.slot {
            conf.push_str(&format!("primary_slot_name = {}\n", quote(s)));
        }
        conf.push_str(&format!("wal_segment_size = {}\n", label.segment_size));
        if let Some(p) = args.port {
            conf.push_str(&format!("port = {p}\n"));
        }
        for s in &args.settings {
            if let Some((k, v)) = s.split_once('=') {
                conf.push_str(&format!("{} = {}\n", k.trim(), quote(v.trim())));
            }
        }
        if let Err(e) = std::fs::write(args.data_dir.join("hotpair.conf"), conf)
            .and_then(|_| std::fs::write(args.data_dir.join("standby.signal"), ""))
        {
            tracing::error!(fatal = true, "could not write configuration: {e}");
            return ExitCode::FAILURE;
        }
    }

    let mut overrides = args.settings.clone();
    if let Some(p) = args.port {
        overrides.push(format!("port={p}"));
    }
    if let Some(c) = &args.primary_conninfo {
        overrides.push(format!("primary_conninfo={c}"));
    }
    if let Some(s) = &args.slot {
        overrides.push(format!("primary_slot_name={s}"));
    }
    let config = Config::load(&args.data_dir, &overrides);
    logging::init(config.as_ref().ok().and_then(|c| c.get("log_min_messages")));
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(fatal = true, "{}", e.message);
            return ExitCode::FAILURE;
        }
    };
    if !config
        .data_dir
        .join(standby::promote::STANDBY_SIGNAL_FILE)
        .exists()
    {
        // Promoted (or never a standby): the data directory is a
        // primary's; no standby connection is attempted.
        return match rt.block_on(common::postmaster::run_primary(config)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => {
                tracing::error!(fatal = true, "{m}");
                ExitCode::FAILURE
            }
        };
    }
    match rt.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            tracing::error!(fatal = true, "{m}");
            ExitCode::FAILURE
        }
    }
}

/// Refuses sessions until replay is consistent, or always with
/// `hot_standby = off` until promoted (57P03, PostgreSQL's two
/// messages), then makes normal sessions (read-only while the role is
/// Standby, read-write once promoted).
struct StandbyFactory {
    /// The node's own sessions, once connections are accepted.
    sessions: common::postmaster::Sessions,
    /// `hot_standby`, read once: it can only change with a restart.
    hot_standby: bool,
}

impl BackendFactory for StandbyFactory {
    type Backend = Session;
    fn authentication(
        &self,
        params: &[(String, String)],
        conn: server::ConnectionInfo,
    ) -> PgResult<server::AuthRequest> {
        self.sessions.authentication(params, conn)
    }
    fn connect(
        &self,
        params: &[(String, String)],
        conn: server::ConnectionInfo,
    ) -> PgResult<Session> {
        let db = self.sessions.node();
        if !self.hot_standby && db.role() == Role::Standby {
            return Err(PgError::fatal(
                sqlstate::CANNOT_CONNECT_NOW,
                "the database system is not accepting connections",
            )
            .with_detail("Hot standby mode is disabled."));
        }
        if !db.replication().consistent.load(Ordering::Acquire) {
            return Err(PgError::fatal(
                sqlstate::CANNOT_CONNECT_NOW,
                "the database system is not yet accepting connections",
            )
            .with_detail("Consistent recovery state has not been yet reached."));
        }
        self.sessions.connect(params, conn)
    }
    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)> {
        self.sessions.parameter_statuses(params)
    }
    fn max_message_size(&self) -> usize {
        self.sessions.max_message_size()
    }
    fn session_cores(&self) -> usize {
        self.sessions.session_cores()
    }
    fn connection_policy(&self) -> server::ConnectionPolicy {
        self.sessions.connection_policy()
    }
    fn tls(&self) -> Option<std::sync::Arc<server::tls::TlsContext>> {
        self.sessions.tls()
    }
}

/// End of valid WAL from `start` (where the writer continues).
fn end_of_wal(dir: &Path, seg: u64, start: wal::Lsn) -> WalPosition {
    let Ok(mut r) = WalReader::new(dir, seg) else {
        return WalPosition {
            end: start,
            prev: wal::Lsn::INVALID,
        };
    };
    r.seek(start, None);
    while r.next_record().is_ok() {}
    r.position()
}

/// Where replay starts, the minimum recovery point (the end of local WAL
/// raises it) and the segment size:
/// * the control file of this standby's last restartpoint;
/// * else the backup label of the base backup that made the directory
///   (also one `rewind` wrote);
/// * else the control file of a primary — an old primary started as a
///   standby of the node promoted in its place (PostgreSQL's
///   standby.signal on a former primary's directory): replay from its last
///   checkpoint's redo point; if it had diverged from the new primary, the
///   walreceiver refuses the new timeline ("not a child").
fn recovery_start(
    dir: &Path,
    ctl: Option<&ControlFile>,
) -> Result<(wal::Lsn, wal::Lsn, u64), String> {
    if let Some(c) = ctl.filter(|c| c.state == DbState::InArchiveRecovery) {
        return Ok((c.redo, c.min_recovery_point, c.segment_size));
    }
    if let Some(l) = BackupLabel::read(dir) {
        return Ok((l.start, l.end, l.segment_size));
    }
    match ctl {
        Some(c) => Ok((c.redo, wal::Lsn::INVALID, c.segment_size)),
        None => Err(format!(
            "could not read \"{}\": this data directory was not made by a completed base backup",
            dir.join(basebackup::BACKUP_LABEL).display()
        )),
    }
}

async fn run(config: Config) -> Result<(), String> {
    let dir = config.data_dir.clone();
    let ctl = ControlFile::read(&dir).map_err(|e| e.message.clone())?;
    let (start, min_recovery_point, seg) = recovery_start(&dir, ctl.as_ref())?;
    let ci_text = config.get("primary_conninfo").unwrap_or("").to_string();
    let ci = ConnInfo::parse(&ci_text).map_err(|e| format!("invalid primary_conninfo: {e}"))?;
    let slot = config
        .get("primary_slot_name")
        .filter(|s| !s.is_empty())
        .map(|s| s.to_string());
    let status_interval = status_interval(&config);

    let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
    let addr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), config.port());
    let addr = match config.get("listen_addresses") {
        Some("*") => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), config.port()),
        Some(a) if a != "localhost" => a
            .parse::<IpAddr>()
            .map(|ip| SocketAddr::new(ip, config.port()))
            .unwrap_or(addr),
        _ => addr,
    };
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("could not bind IPv4 address \"{}\": {e}", addr.ip()))?;
    tracing::info!(
        "listening on IPv4 address \"{}\", port {}",
        addr.ip(),
        addr.port()
    );

    // Held until the function returns: after the shutdown restartpoint.
    let _pid_file = common::postmaster::PidFile::acquire(&dir, addr.port())?;
    let db = Node::open(config, Role::Standby).map_err(|e| e.message.clone())?;
    common::auth::spawn_reload_task(&db).map_err(|e| e.to_string())?;
    tracing::info!("entering standby mode");
    let wal_dir = dir.join("pg_wal");
    let pos = tokio::task::block_in_place(|| end_of_wal(&wal_dir, seg, start));
    let min_recovery_point = min_recovery_point.max(pos.end);
    db.checkpointer().set_last_redo(start);
    if !ctl.is_some_and(|c| c.state == DbState::InArchiveRecovery) {
        // Until its first restartpoint, where this standby's crash
        // recovery starts is in backup_label, not the control file.
        db.checkpointer().set_needs_restartpoint();
    }
    let fsync = db.config().bool("fsync");
    // The timeline of the WAL received last (its segment's), at least the
    // control file's.
    let tli = common::xlog::wal_timeline(&wal_dir, pos.end, seg)
        .max(ctl.map_or(wal::segment::TIMELINE, |c| c.timeline));
    let writer = Arc::new(
        WalWriter::open(
            &wal_dir,
            WalWriterOptions::new(seg, fsync)
                .with_timeline(tli)
                .panicking(),
            pos,
        )
        .map_err(|e| format!("could not open WAL: {e}"))?,
    );
    db.replication().set_wal_writer(writer.clone());
    // Replay applies received WAL once written; page writes flush it first.
    db.engine().xlog().set_recovery_wal(writer.clone());

    let stop = Arc::new(AtomicBool::new(false));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (rcv_cfg_tx, rcv_cfg_rx) =
        tokio::sync::watch::channel(standby::walreceiver::ReceiverConfig {
            conninfo: ci,
            conninfo_text: ci_text,
            slot,
            status_interval,
            hot_standby_feedback: db.config().bool("hot_standby_feedback"),
            receiver_timeout: receiver_timeout(&db.config()),
            target_timeline: standby::walreceiver::TargetTimeline::parse(
                db.config()
                    .get("recovery_target_timeline")
                    .unwrap_or("latest"),
            ),
        });
    let receiver = Arc::new(Receiver {
        stop: stop_tx,
        task: parking_lot::Mutex::new(Some(tokio::spawn(standby::walreceiver::run(
            db.clone(),
            writer.clone(),
            rcv_cfg_rx,
            stop_rx,
        )))),
    });
    // SIGHUP and pg_reload_conf(): the walreceiver follows the reloaded
    // configuration.
    let reloader = tokio::spawn(reload_loop(db.clone(), rcv_cfg_tx));
    // Heap, catalog, smgr and full-page-image records go through the same
    // redo as crash recovery; transaction and running-xacts records are
    // handled by the replay loop itself (clog, KnownAssignedXids, and the
    // completion-counter bump).
    let redo: standby::startup::RedoHook = Arc::new(common::redo::apply);
    let replay = standby::startup::Replay::new(db.clone(), min_recovery_point, Some(redo));
    let handle = tokio::runtime::Handle::current();
    // The startup thread reports a finished promotion here: the node then
    // runs what a primary runs besides sessions (the running-xacts timer).
    let (promoted_tx, promoted_rx) = tokio::sync::oneshot::channel::<()>();
    let replay_thread = {
        let (w, s, r, d) = (writer.clone(), stop.clone(), receiver.clone(), db.clone());
        std::thread::Builder::new()
            .name("startup".into())
            .spawn(move || {
                // Replay's buffer IO is the startup process's in pg_stat_io.
                let _io = storage::pgstat_io::as_backend(storage::pgstat_io::BackendType::Startup);
                let rt = handle.clone();
                let stop_receiver = move || r.stop_blocking(&rt);
                let ended =
                    standby::startup::run(replay, w.clone(), start, s, handle, &stop_receiver);
                if let standby::startup::Ended::Promote { end } = ended {
                    if let Err(e) = standby::promote::finish(&d, &w, end) {
                        // As PostgreSQL's startup process: FATAL, the
                        // server stops; a restart (standby.signal is gone)
                        // finishes as a primary by crash recovery.
                        tracing::error!(fatal = true, "promotion failed: {}", e.message);
                        std::process::exit(1);
                    }
                    let _ = promoted_tx.send(());
                }
            })
            .map_err(|e| e.to_string())?
    };
    let (timer_stop_tx, timer_stop_rx) = tokio::sync::watch::channel(false);
    let timer = {
        let db = db.clone();
        tokio::spawn(async move {
            // The old-snapshot tick runs from the start (a standby's own
            // snapshots age too: replay lets old ones lose versions), the
            // running-xacts timer once the node is a primary.
            let tick = common::old_snapshot_tick::run(db.clone(), timer_stop_rx.clone());
            let log = async move {
                if promoted_rx.await.is_ok() {
                    common::standby_log::run(db, timer_stop_rx).await;
                }
            };
            tokio::join!(tick, log);
        })
    };
    let shutdown = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::info!("received fast shutdown request");
    };
    // Replication connections go to the walsender, which refuses them
    // while in recovery and serves them once promoted.
    let (unix, _socket_file) = common::postmaster::unix_listener(&db.config()).unzip();
    let served = server::serve_replicated(
        StandbyFactory {
            sessions: common::postmaster::Sessions::new(db.clone()),
            hot_standby: db.config().bool("hot_standby"),
        },
        server::Listeners {
            tcp: listener,
            unix,
        },
        shutdown,
        Some(common::walsender::WalSender::new(db.clone())),
    )
    .await;
    {
        let r = receiver.clone();
        let h = tokio::runtime::Handle::current();
        tokio::task::block_in_place(|| r.stop_blocking(&h));
    }
    stop.store(true, Ordering::Relaxed);
    let _ = tokio::task::block_in_place(|| replay_thread.join());
    reloader.abort();
    let _ = timer_stop_tx.send(true);
    timer.abort();
    let _ = timer.await;
    // A standby: the shutdown restartpoint (the next start replays from
    // there); promoted: the shutdown checkpoint.
    if let Err(e) = tokio::task::block_in_place(|| db.shutdown()) {
        tracing::error!("shutdown checkpoint failed: {}", e.message);
    }
    common::walsender::wait_stopped(&db).await;
    let _ = writer.shutdown();
    served.map_err(|e| format!("could not accept connections: {e}"))?;
    tracing::info!("database system is shut down");
    Ok(())
}

/// `wal_receiver_timeout` (`None`: 0, never).
fn receiver_timeout(c: &Config) -> Option<Duration> {
    let ms = c.int("wal_receiver_timeout");
    (ms > 0).then(|| Duration::from_millis(ms as u64))
}

/// `wal_receiver_status_interval`, at least a second.
fn status_interval(c: &Config) -> Duration {
    Duration::from_secs(c.int("wal_receiver_status_interval").max(1) as u64)
}

/// Keeps the walreceiver's settings equal to the node's configuration as
/// reloads change it ([`Node::reload`] logs each change): a new
/// `primary_conninfo` or `primary_slot_name` makes the walreceiver
/// reconnect with it; `hot_standby_feedback`, `wal_receiver_timeout` and
/// `wal_receiver_status_interval` apply to the running connection. A
/// `primary_conninfo` that does not parse keeps the old one and logs why.
async fn reload_loop(
    db: Arc<Node>,
    cfg: tokio::sync::watch::Sender<standby::walreceiver::ReceiverConfig>,
) {
    let mut reloaded = db.subscribe_config();
    while reloaded.changed().await.is_ok() {
        let c = db.config();
        let ci_text = c.get("primary_conninfo").unwrap_or("").to_string();
        let ci = if ci_text == cfg.borrow().conninfo_text {
            None
        } else {
            match ConnInfo::parse(&ci_text) {
                Ok(ci) => Some(ci),
                Err(e) => {
                    tracing::error!(
                        "invalid value for parameter \"primary_conninfo\": \"{ci_text}\": {e}; keeping the old value"
                    );
                    continue;
                }
            }
        };
        let slot = c
            .get("primary_slot_name")
            .filter(|s| !s.is_empty())
            .map(|s| s.to_string());
        let (feedback, interval) = (c.bool("hot_standby_feedback"), status_interval(&c));
        let timeout = receiver_timeout(&c);
        cfg.send_if_modified(|r| {
            let mut changed = false;
            if let Some(ci) = ci {
                r.conninfo = ci;
                r.conninfo_text = ci_text;
                changed = true;
            }
            if r.slot != slot {
                r.slot = slot;
                changed = true;
            }
            if r.hot_standby_feedback != feedback
                || r.status_interval != interval
                || r.receiver_timeout != timeout
            {
                r.hot_standby_feedback = feedback;
                r.status_interval = interval;
                r.receiver_timeout = timeout;
                changed = true;
            }
            changed
        });
    }
}

/// The walreceiver task and its stop signal; stopped once, by shutdown or
/// by promotion (whichever comes first).
struct Receiver {
    stop: tokio::sync::watch::Sender<bool>,
    task: parking_lot::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Receiver {
    /// Stops the walreceiver and waits until it has ended; blocking (call
    /// it outside async code or inside `block_in_place`). The lock is held
    /// while waiting, so a second caller (shutdown racing a promotion) also
    /// returns only once the walreceiver is gone.
    fn stop_blocking(&self, rt: &tokio::runtime::Handle) {
        let _ = self.stop.send(true);
        let mut task = self.task.lock();
        if let Some(t) = task.take() {
            let _ = rt.block_on(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(hot_standby: bool) -> (tempfile::TempDir, StandbyFactory) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = Config::new(dir.path());
        cfg.set("fsync", "off").expect("fsync"); // a throw-away directory
        let db = Node::open(cfg, Role::Standby).expect("open a standby database");
        (
            dir,
            StandbyFactory {
                sessions: common::postmaster::Sessions::new(db),
                hot_standby,
            },
        )
    }

    /// Before replay is consistent a standby refuses sessions with
    /// PostgreSQL's FATAL 57P03 and its DETAIL; once consistent it serves
    /// them; with hot_standby off it refuses them with the other message —
    /// until it is promoted.
    #[test]
    fn sessions_wait_for_consistency() {
        let (_dir, f) = factory(true);
        let params = [("user".to_string(), "u".to_string())];
        let conn = server::ConnectionInfo {
            peer: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 5432))),
            peer_uid: None,
            local: None,
            ssl: false,
            ssl_info: None,
            verifies_clients: false,
            tcp_fd: None,
        };
        let e = f
            .connect(&params, conn.clone())
            .err()
            .expect("refused before consistency");
        assert_eq!(e.code, sqlstate::CANNOT_CONNECT_NOW);
        assert_eq!(
            e.message,
            "the database system is not yet accepting connections"
        );
        assert_eq!(
            e.detail.as_deref(),
            Some("Consistent recovery state has not been yet reached.")
        );
        f.sessions
            .node()
            .replication()
            .consistent
            .store(true, Ordering::Release);
        assert!(
            f.connect(&params, conn.clone()).is_ok(),
            "served once consistent"
        );

        let (_dir, off) = factory(false);
        off.sessions
            .node()
            .replication()
            .consistent
            .store(true, Ordering::Release);
        let e = off
            .connect(&params, conn.clone())
            .err()
            .expect("refused with hot_standby off");
        assert_eq!(e.code, sqlstate::CANNOT_CONNECT_NOW);
        assert_eq!(e.detail.as_deref(), Some("Hot standby mode is disabled."));

        // Promoted, the node serves sessions whatever hot_standby says.
        let seg =
            common::xlog::segment_size(&off.sessions.node().config(), None).expect("segment size");
        off.sessions
            .node()
            .finish_recovery(WalPosition::initial(seg), seg)
            .expect("promote");
        assert!(
            off.connect(&params, conn.clone()).is_ok(),
            "served once promoted"
        );
    }
}
