//! How a node serves its clients: the server crate's postmaster and
//! session loop over SQL sessions of this node ([`Sessions`], the
//! [`BackendFactory`]), with the ParameterStatus set PostgreSQL reports;
//! and [`run_primary`], the primary's whole serve loop, shared by the
//! `primary` binary and a promoted standby's restart (the `standby`
//! binary on a data directory without `standby.signal` runs exactly this):
//! open the data directory as a primary (crash recovery if needed), serve
//! SQL and replication connections, log running-xacts records for hot
//! standbys, and write the shutdown checkpoint at a fast shutdown.
//!
//! ```text
//!   bind ──► Node::open(Primary) ──► "ready to accept connections"
//!        ──► serve (sessions + walsenders) + running-xacts timer
//!        ──► SIGINT/SIGTERM ──► shutdown checkpoint ──► "shut down"
//! ```

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use std::path::PathBuf;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::PgResult;
use server::{self, BackendFactory, ReplicationHandler};
use sql::session::Session;

/// Makes a SQL [`Session`] for each new connection to a node.
#[derive(Clone)]
pub struct Sessions {
    node: Arc<Node>,
}

impl Sessions {
    /// The factory of `node`'s sessions.
    pub fn new(node: Arc<Node>) -> Sessions {
        Sessions { node }
    }

    /// The node the sessions run on.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }
}

/// Serves SQL clients of `node` on `listener` until `shutdown` completes;
/// `replication=true` connections go to `replication` (a walsender).
pub async fn serve(
    node: Arc<Node>,
    listener: impl Into<server::Listeners>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    replication: Option<Arc<dyn ReplicationHandler>>,
) -> std::io::Result<()> {
    server::serve_replicated(Sessions::new(node), listener, shutdown, replication).await
}

/// Settings reported to every client (PostgreSQL's GUC_REPORT set).
const REPORTED: &[&str] = &[
    "server_version",
    "server_encoding",
    "client_encoding",
    "DateStyle",
    "integer_datetimes",
    "standard_conforming_strings",
    "TimeZone",
    "IntervalStyle",
    "is_superuser",
];

impl BackendFactory for Sessions {
    type Backend = Session;

    fn authentication(
        &self,
        params: &[(String, String)],
        conn: server::ConnectionInfo,
    ) -> PgResult<server::AuthRequest> {
        crate::auth::authentication(&self.node, params, conn)
    }

    fn connect(
        &self,
        params: &[(String, String)],
        conn: server::ConnectionInfo,
    ) -> PgResult<Session> {
        let mut s = Session::new(self.node.clone(), params)?;
        s.set_client(conn.peer, conn.local);
        s.set_socket(conn.tcp_fd);
        if conn.ssl_info.is_some() {
            s.set_ssl(conn.ssl_info);
        }
        Ok(s)
    }

    fn tls(&self) -> Option<Arc<server::tls::TlsContext>> {
        self.node.tls().current()
    }

    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)> {
        let startup = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let mut out: Vec<(String, String)> = REPORTED
            .iter()
            .map(|name| {
                // Session-settable values the client sent win over the
                // server's; server-fixed ones never come from the client.
                let client = match *name {
                    "client_encoding" | "DateStyle" | "TimeZone" | "IntervalStyle" => startup(name),
                    _ => None,
                };
                let value = client.unwrap_or_else(|| {
                    self.node.config().get(name).unwrap_or_default().to_string()
                });
                (name.to_string(), value)
            })
            .collect();
        out.push((
            "application_name".into(),
            startup("application_name").unwrap_or_default(),
        ));
        out.push((
            "session_authorization".into(),
            startup("user").unwrap_or_default(),
        ));
        let standby = if self.node.role() == Role::Standby {
            "on"
        } else {
            "off"
        };
        out.push(("in_hot_standby".into(), standby.into()));
        out
    }

    fn max_message_size(&self) -> usize {
        self.node.config().max_message_size()
    }

    fn session_cores(&self) -> usize {
        self.node.config().int("session_cores").max(0) as usize
    }

    fn connection_policy(&self) -> server::ConnectionPolicy {
        let c = self.node.config();
        server::ConnectionPolicy {
            log_connections: c.bool("log_connections"),
            log_disconnections: c.bool("log_disconnections"),
            authentication_timeout: std::time::Duration::from_secs(
                u64::try_from(c.int("authentication_timeout"))
                    .unwrap_or(60)
                    .max(1),
            ),
            keepalives: sql::session::keepalives_of(&c),
            park_above: match usize::try_from(c.int("park_idle_sessions_above")) {
                Ok(n) => n,
                Err(_) => server::park::descriptor_limit() / 2,
            },
        }
    }
}

/// Opens the database, listens, serves until a shutdown signal. The error is
/// the FATAL line to log.
pub async fn run_primary(config: Config) -> Result<(), String> {
    run_primary_with(config, crate::auth::Bootstrap::default()).await
}

/// [`run_primary`], creating `boot` as the bootstrap superuser if the
/// cluster has no role yet.
pub async fn run_primary_with(config: Config, boot: crate::auth::Bootstrap) -> Result<(), String> {
    let addr = listen_address(&config)?;
    // Install the signal handlers before announcing readiness, so a test that
    // sends SIGTERM right after "ready" is never lost to the default action.
    let shutdown =
        shutdown_signal().map_err(|e| format!("could not install signal handlers: {e}"))?;

    // Bind before opening the data directory: a port conflict then fails fast
    // without touching the data. Connections queue in the backlog until
    // `serve` accepts them.
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        format!(
            "could not bind IPv4 address \"{}\": {e}\ncould not create any TCP/IP sockets",
            addr.ip()
        )
    })?;
    tracing::info!(
        "listening on IPv4 address \"{}\", port {}",
        addr.ip(),
        addr.port()
    );

    let unix = unix_listener(&config);
    // Held until the function returns: after the shutdown checkpoint.
    let _pid_file = PidFile::acquire(&config.data_dir, addr.port())?;
    let db = Node::open(config, Role::Primary).map_err(|e| e.message.clone())?;
    crate::auth::ensure_bootstrap_superuser(&db, &boot).map_err(|e| e.message.clone())?;
    crate::auth::spawn_reload_task(&db)
        .map_err(|e| format!("could not install signal handlers: {e}"))?;
    tracing::info!("database system is ready to accept connections");

    // The running-xacts timer for hot standbys.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let ost_tick = tokio::spawn(crate::old_snapshot_tick::run(
        Arc::clone(&db),
        stop_rx.clone(),
    ));
    let timer = tokio::spawn(crate::standby_log::run(Arc::clone(&db), stop_rx));
    let handler = crate::walsender::WalSender::new(Arc::clone(&db));
    let (unix, _socket_file) = unix.unzip();
    let listeners = server::Listeners {
        tcp: listener,
        unix,
    };
    let served = serve(Arc::clone(&db), listeners, shutdown, Some(handler)).await;
    let _ = stop_tx.send(true);
    let _ = timer.await;
    let _ = ost_tick.await;
    served.map_err(|e| format!("could not accept connections: {e}"))?;

    // Every session has ended: the shutdown checkpoint writes dirty pages
    // and clog, logs a shutdown checkpoint record and closes WAL, so the
    // next start needs no redo.
    tracing::info!("shutting down");
    db.shutdown()
        .map_err(|e| format!("shutdown checkpoint failed: {}", e.message))?;
    crate::walsender::wait_stopped(&db).await;
    tracing::info!("database system is shut down");
    Ok(())
}

/// A Unix-domain socket file, removed when the server stops.
pub struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The Unix-domain socket `DIR/.s.PGSQL.PORT` in the first directory of
/// `unix_socket_directories` (PostgreSQL's file name, so `psql` without
/// `-h` finds it), with `unix_socket_permissions`. A file left by a
/// server that is gone (nothing accepts on it) is replaced; a missing
/// directory or a live server there only costs the socket (logged): TCP
/// is served either way.
pub fn unix_listener(config: &Config) -> Option<(tokio::net::UnixListener, SocketFile)> {
    let spec = config.get("unix_socket_directories").unwrap_or("");
    let mut dirs = spec.split(',').map(str::trim).filter(|s| !s.is_empty());
    let dir = dirs.next()?;
    if dirs.next().is_some() {
        tracing::warn!(
            "unix_socket_directories \"{spec}\": only the first directory \"{dir}\" is used"
        );
    }
    let path = std::path::Path::new(dir).join(format!(".s.PGSQL.{}", config.port()));
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(&path).is_ok() {
            tracing::warn!(
                "could not create Unix-domain socket \"{}\": is another server already running on port {}?",
                path.display(),
                config.port()
            );
            return None;
        }
        let _ = std::fs::remove_file(&path);
    }
    let listener = match tokio::net::UnixListener::bind(&path) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(
                "could not bind Unix address \"{}\": {e}\ncould not create Unix-domain socket in directory \"{dir}\"",
                path.display()
            );
            return None;
        }
    };
    let file = SocketFile(path.clone());
    let mode = config.get("unix_socket_permissions").unwrap_or("0777");
    match u32::from_str_radix(mode.trim_start_matches("0o"), 8) {
        Ok(m) if m <= 0o777 => {
            use std::os::unix::fs::PermissionsExt;
            if let Err(e) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)) {
                tracing::warn!(
                    "could not set permissions of file \"{}\": {e}",
                    path.display()
                );
            }
        }
        _ => tracing::warn!("invalid value for parameter \"unix_socket_permissions\": \"{mode}\""),
    }
    tracing::info!("listening on Unix socket \"{}\"", path.display());
    Some((listener, file))
}

/// The socket address from `listen_addresses` and `port`. PostgreSQL accepts
/// a list; we serve one listener, so the first entry wins (logged if more).
pub fn listen_address(config: &Config) -> Result<SocketAddr, String> {
    let port = config.port();
    let spec = config.get("listen_addresses").unwrap_or("localhost");
    let mut entries = spec.split(',').map(str::trim).filter(|s| !s.is_empty());
    let first = entries.next().unwrap_or("localhost");
    if entries.next().is_some() {
        tracing::warn!("listen_addresses \"{spec}\": only the first address \"{first}\" is used");
    }
    let ip = match first {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        "*" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        other => other.parse::<IpAddr>().map_err(|_| {
            format!("invalid value for parameter \"listen_addresses\": \"{other}\"")
        })?,
    };
    Ok(SocketAddr::new(ip, port))
}

/// A future that resolves at the first SIGINT or SIGTERM, both of which mean
/// a fast shutdown here (PostgreSQL: SIGINT fast, SIGTERM smart; we have no
/// smart mode, so both end sessions and stop).
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        tracing::info!("received fast shutdown request");
    })
}

/// `DIR/postmaster.pid`, PostgreSQL's lock file: the pid, the data
/// directory and the port, one a line. A running server holds an
/// exclusive advisory lock on it (`flock`) for as long as it runs, so a
/// second server — or a tool that must not touch a live directory, like
/// `rewind` — finds the lock taken. The kernel drops the lock when the
/// process ends, however it ends: a file left by a SIGKILL is stale and
/// is simply taken over; a clean stop removes it.
pub struct PidFile {
    /// Held open: closing it would release the lock.
    _file: std::fs::File,
    path: PathBuf,
}

/// Name of the lock file in the data directory.
pub const PID_FILE: &str = "postmaster.pid";

impl PidFile {
    /// Takes the lock of `data_dir` (created if missing) and writes this
    /// process's line; PostgreSQL's "lock file … already exists" if a
    /// live server holds it.
    pub fn acquire(data_dir: &std::path::Path, port: u16) -> Result<PidFile, String> {
        use std::io::Write;
        std::fs::create_dir_all(data_dir).map_err(|e| {
            format!(
                "could not create data directory \"{}\": {e}",
                data_dir.display()
            )
        })?;
        let path = data_dir.join(PID_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("could not create lock file \"{}\": {e}", path.display()))?;
        if let Some(pid) = lock_holder(&file, &path)? {
            return Err(format!(
                "lock file \"{PID_FILE}\" already exists\nHINT:  Is another postmaster (PID {pid}) running in data directory \"{}\"?",
                data_dir.display()
            ));
        }
        let text = format!("{}\n{}\n{port}\n", std::process::id(), data_dir.display());
        file.set_len(0)
            .and_then(|_| file.write_all(text.as_bytes()))
            .and_then(|_| file.sync_all())
            .map_err(|e| format!("could not write lock file \"{}\": {e}", path.display()))?;
        Ok(PidFile { _file: file, path })
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        // A clean stop: the directory is free again.
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(
                "could not remove lock file \"{}\": {e}",
                self.path.display()
            );
        }
    }
}

/// Tries the lock of an open `postmaster.pid`: `Some(pid text)` if a live
/// server holds it, `None` once this process holds it.
fn lock_holder(file: &std::fs::File, path: &std::path::Path) -> Result<Option<String>, String> {
    match file.try_lock() {
        Ok(()) => Ok(None),
        Err(std::fs::TryLockError::WouldBlock) => {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            Ok(Some(text.lines().next().unwrap_or("?").trim().to_string()))
        }
        Err(std::fs::TryLockError::Error(e)) => {
            Err(format!("could not lock file \"{PID_FILE}\": {e}"))
        }
    }
}

/// Whether a server runs on `data_dir`, for tools that must not touch a
/// live directory: `Some(pid)` if its `postmaster.pid` is locked. Holds
/// nothing: a stale or absent file is `None`, and nothing is written.
pub fn running_server(data_dir: &std::path::Path) -> Result<Option<String>, String> {
    let path = data_dir.join(PID_FILE);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("could not open file \"{}\": {e}", path.display())),
    };
    let holder = lock_holder(&file, &path)?;
    if holder.is_none() {
        let _ = file.unlock();
    }
    Ok(holder)
}
