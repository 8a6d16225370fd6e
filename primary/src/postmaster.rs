//! The primary's postmaster loop, shared by the `primary` binary and a
//! promoted standby's restart (the `standby` binary on a data directory
//! without `standby.signal` runs exactly this): open the data directory as
//! a primary (crash recovery if needed), serve SQL and replication
//! connections, log running-xacts records for hot standbys, and write the
//! shutdown checkpoint at a fast shutdown.
//!
//! ```text
//!   bind ──► Node::open(Primary) ──► "ready to accept connections"
//!        ──► serve (sessions + walsenders) + running-xacts timer
//!        ──► SIGINT/SIGTERM ──► shutdown checkpoint ──► "shut down"
//! ```

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

/// Opens the database, listens, serves until a shutdown signal. The error is
/// the FATAL line to log.
pub async fn run(config: Config) -> Result<(), String> {
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

    let db = Node::open(config, Role::Primary).map_err(|e| e.message.clone())?;
    tracing::info!("database system is ready to accept connections");

    // The running-xacts timer for hot standbys.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let timer = tokio::spawn(crate::standby_log::run(Arc::clone(&db), stop_rx));
    let handler = crate::walsender::WalSender::new(Arc::clone(&db));
    let served =
        common::postmaster::serve(Arc::clone(&db), listener, shutdown, Some(handler)).await;
    let _ = stop_tx.send(true);
    let _ = timer.await;
    served.map_err(|e| format!("could not accept connections: {e}"))?;

    // Every session has ended: the shutdown checkpoint writes dirty pages
    // and clog, logs a shutdown checkpoint record and closes WAL, so the
    // next start needs no redo.
    tracing::info!("shutting down");
    db.shutdown()
        .map_err(|e| format!("shutdown checkpoint failed: {}", e.message))?;
    tracing::info!("database system is shut down");
    Ok(())
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
