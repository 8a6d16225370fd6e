//! # primary — the postmaster of a hotpair primary node
//!
//! `primary -D DIR -p PORT [-c name=value]…` is what `postgres -D DIR` is to
//! PostgreSQL: it reads `DIR/hotpair.conf` and the `-c` overrides
//! ([`common::config::Config::load`]), opens (creating if empty) the data
//! directory ([`common::database::Database::open`]), listens on
//! `listen_addresses`:`port` and hands the listener to the session loop
//! ([`common::server::serve`]) until SIGINT or SIGTERM asks for a fast
//! shutdown; once every session has ended it writes a shutdown checkpoint
//! ([`Database::checkpoint`]: dirty pages, clog, next xid) and exits.
//!
//! ```text
//!   args ──► Config::load ──► logging ──► bind ──► Database::open ──► serve ──┐
//!                                                                ▲            │
//!                                              SIGINT / SIGTERM ─┘ (shutdown) │
//!   exit 0 ◄── "database system is shut down" ◄── checkpoint ◄───────────────┘
//! ```
//!
//! The log goes to stderr, one line per event in PostgreSQL's shape
//! (`2024-05-01 12:00:00.123 UTC [4242] LOG:  message`), because tests and
//! operators wait on PostgreSQL's words: "database system is ready to accept
//! connections", "received fast shutdown request", "database system is shut
//! down". Any startup failure (bad configuration, unusable data directory,
//! port in use) is logged once as FATAL and the process exits with status 1;
//! nothing here panics on outside input.

mod logging;

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use common::config::Config;
use common::database::{Database, Role};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

/// Command line of the `primary` binary.
#[derive(Parser, Debug)]
#[command(
    name = "primary",
    version,
    about = "hotpair primary node (accepts reads and writes)"
)]
struct Args {
    /// Data directory: holds hotpair.conf, relation files and WAL; created if empty.
    #[arg(short = 'D', long = "data-dir", value_name = "DIR")]
    data_dir: PathBuf,

    /// TCP port to listen on (overrides `port` from hotpair.conf and -c).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    port: Option<u16>,

    /// Set a configuration parameter, as in hotpair.conf (repeatable; later wins).
    #[arg(short = 'c', value_name = "NAME=VALUE")]
    settings: Vec<String>,

    /// Address to listen on (overrides `listen_addresses`); `*` means all IPv4 addresses.
    #[arg(long = "listen", value_name = "ADDR")]
    listen: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();

    // The configuration decides the log filter (`log_min_messages`), so load
    // it first and report a failure only once logging is up.
    let mut overrides = args.settings.clone();
    if let Some(listen) = &args.listen {
        overrides.push(format!("listen_addresses={listen}"));
    }
    if let Some(port) = args.port {
        overrides.push(format!("port={port}"));
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

    let runtime = match common::server::build_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(fatal = true, "{e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!(fatal = true, "{message}");
            ExitCode::FAILURE
        }
    }
}

/// Opens the database, listens, serves until a shutdown signal. The error is
/// the FATAL line to log.
async fn run(config: Config) -> Result<(), String> {
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

    let db = Database::open(config, Role::Primary).map_err(|e| e.message.clone())?;
    tracing::info!("database system is ready to accept connections");

    // The running-xacts timer for hot standbys.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let timer = tokio::spawn(primary::standby_log::run(Arc::clone(&db), stop_rx));
    let handler = primary::walsender::WalSender::new(Arc::clone(&db));
    let served =
        common::server::serve_replicated(Arc::clone(&db), listener, shutdown, handler).await;
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
fn listen_address(config: &Config) -> Result<SocketAddr, String> {
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
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
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
