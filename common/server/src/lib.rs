//! The postmaster and the per-connection session loop (postgres.c).
//!
//! [`serve`] accepts TCP connections, and Unix-domain ones when its
//! [`Listeners`] has a socket (`unix_socket_directories`; a
//! [`stream::ClientStream`] is either kind, through the session loop, the
//! cross-core moves and the walsender alike), and spawns one task per connection
//! on one of the per-core session runtimes ([`cores`]), which runs the
//! session loop ([`postgres`]): startup (SSLRequest answered `S` and a TLS
//! handshake when `ssl` is on and the socket is TCP — [`tls`] — else `N`;
//! GSSENCRequest answered `N`; authentication, ParameterStatus,
//! BackendKeyData), then the simple and
//! extended query protocols and COPY over a [`Backend`] (a SQL session on a
//! node; this crate knows nothing of SQL).
//! A CancelRequest on a fresh connection sets the target session's cancel
//! flag through the [`cancel`] registry.
//!
//! ```text
//!   serve ── accept ──▶ core k: run_connection ──▶ Backend (Session)
//!     │    (service runtime)   ▲ Stop (per-session waker slot; walsender: watch)
//!     └─ shutdown future ──────┘ + cancel_all(), then wait for Live = 0
//! ```
//!
//! Shutdown: when the `shutdown` future completes the listener is dropped
//! (no new connections), every session's cancel flag is set (so running
//! statements stop), idle sessions get FATAL 57P01 "terminating connection
//! due to administrator command", and `serve` returns once every
//! connection task has ended.
//!
//! Isolation: each connection is its own task; an error or even a panic in
//! one ends only that task (its `LiveGuard` still counts it as ended). A
//! connection's startup runs in one task and its session loop in the next
//! (so the startup's larger state is freed), and a session that moves to
//! another core continues as a new task, so shutdown waits on the count of
//! live connections, not on task handles.
//!
//! Idle sessions: while the node holds many client sockets, a session idle
//! for 100 ms parks its socket outside the process's descriptor table
//! ([`park`]: io_uring direct descriptors) and gets it back when its
//! client speaks, hangs up, or the session must be reached — how one
//! process holds more connections than its open-file limit.
//!
//! [`serve`] runs the same loop over any [`BackendFactory`], so a
//! test double (or a standby's factory that refuses connections before
//! consistency) can reuse the protocol machinery.
//!
//! Replication connections: [`serve_replicated`] takes a
//! [`ReplicationHandler`]. A client whose startup packet carries
//! `replication=true` (or `on`, `yes`, `1`, `database`) is handed over
//! whole — socket, bytes already read, startup parameters, shutdown signal —
//! right after the startup packet; the handler (the primary's walsender)
//! runs its own sub-protocol. Without a handler such a client gets a normal
//! SQL session.

pub mod backend;
pub mod cancel;
pub mod cores;
pub mod hba;
pub mod ident;
pub mod park;
pub mod postgres;
pub mod reload;
pub mod stream;
pub mod tls;

/// The password verifiers roles store, for the SQL layer (which reaches
/// the protocol crate's SCRAM and md5 code through this crate).
pub mod auth_verifiers {
    /// A new SCRAM-SHA-256 verifier of `password` (random salt).
    pub fn scram_verifier(password: &str, iterations: u32) -> String {
        protocol::scram::Verifier::new(password, iterations).to_string()
    }

    /// The md5 verifier of `password` for `role`.
    pub fn md5_verifier(password: &str, role: &str) -> String {
        protocol::md5::md5_verifier(password, role)
    }

    /// True if `text` is already a verifier (stored as given).
    pub fn is_verifier(text: &str) -> bool {
        protocol::md5::is_md5_verifier(text) || protocol::scram::Verifier::parse(text).is_some()
    }
}
mod stop;
mod values;

#[cfg(test)]
mod tests;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::warn;

pub use backend::{
    AuthMethod, AuthRequest, Backend, BackendFactory, ConnectionInfo, ConnectionPolicy,
    StatementInfo,
};
pub use cancel::CancelRegistry;
pub use cores::SessionCores;
/// The keepalive options of a client's TCP socket, for the session that
/// owns the socket ([`backend::ConnectionInfo::tcp_fd`]): layers above
/// reach the socket through the server, never the protocol crate.
pub use protocol::sockopt;

use postgres::{run_connection, Live, Shared};

/// The node's tokio runtime: multi-threaded, with `TOKIO_WORKER_THREADS`
/// workers when that is set (the number of CPUs otherwise). The variable
/// is parsed here rather than by tokio, which panics on a value it cannot
/// read (even an empty one); here that is an error the binary reports.
pub fn build_runtime() -> Result<tokio::runtime::Runtime, String> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    b.enable_all();
    if let Some(v) = std::env::var_os("TOKIO_WORKER_THREADS") {
        let v = v.to_string_lossy();
        match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => {
                b.worker_threads(n);
            }
            _ => {
                return Err(format!(
                    "invalid value for environment variable TOKIO_WORKER_THREADS: \"{v}\" (a positive integer)"
                ))
            }
        }
    }
    b.build()
        .map_err(|e| format!("could not start the runtime: {e}"))
}

/// When the node's held client sockets reach the parking threshold, tells
/// idle sessions to look again: one idle since before parking was due
/// would otherwise keep its descriptor until its next statement.
fn nudge_when_parking_is_due<F: BackendFactory>(shared: &Shared<F>, nudged: &mut bool) {
    let Some(lot) = park::lot() else {
        return;
    };
    let held = postgres::held_sockets(&shared.live, lot);
    let above = shared.factory.connection_policy().park_above;
    if !*nudged && held >= above {
        shared.stop.nudge();
        *nudged = true;
    } else if *nudged && held < above / 2 {
        *nudged = false;
    }
}

/// A connection that asked for replication, handed to a [`ReplicationHandler`].
pub struct ReplicationConnection {
    /// The socket, after the startup packet.
    pub stream: stream::ClientStream,
    /// Bytes already read from the socket beyond the startup packet.
    pub buffered: BytesMut,
    /// The startup parameters.
    pub params: Vec<(String, String)>,
    /// The client's address (None: a Unix-domain socket).
    pub peer: Option<SocketAddr>,
    /// Becomes `true` when the server shuts down.
    pub shutdown: watch::Receiver<bool>,
}

/// Runs replication connections (the walsender).
pub trait ReplicationHandler: Send + Sync + 'static {
    /// Serves `conn` to its end (authentication onwards).
    fn handle(&self, conn: ReplicationConnection) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// True if a startup `replication` parameter value asks for a walsender.
pub fn is_replication_request(params: &[(String, String)]) -> bool {
    params.iter().any(|(k, v)| {
        k == "replication"
            && matches!(
                v.to_ascii_lowercase().as_str(),
                "true" | "on" | "yes" | "1" | "database"
            )
    })
}

/// The sockets a server accepts clients on: TCP, and a Unix-domain
/// socket (`unix_socket_directories`) if there is one.
pub struct Listeners {
    /// TCP (`listen_addresses`, `port`).
    pub tcp: TcpListener,
    /// `DIR/.s.PGSQL.PORT`.
    pub unix: Option<tokio::net::UnixListener>,
}

impl From<TcpListener> for Listeners {
    fn from(tcp: TcpListener) -> Listeners {
        Listeners { tcp, unix: None }
    }
}

/// Serves clients of `factory` on `listener` until `shutdown` completes,
/// then terminates every session (FATAL 57P01) and returns.
pub async fn serve<F: BackendFactory>(
    factory: F,
    listener: impl Into<Listeners>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_replicated(factory, listener, shutdown, None).await
}

/// [`serve`], with replication connections handed to `replication`
/// (refused when there is none). Sessions run on the factory's
/// [`BackendFactory::session_cores`] per-core runtimes ([`cores`]); the
/// accept loop, the balancer and replication connections run on the
/// calling runtime.
pub async fn serve_replicated<F: BackendFactory>(
    factory: F,
    listener: impl Into<Listeners>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    replication: Option<Arc<dyn ReplicationHandler>>,
) -> std::io::Result<()> {
    let cores = SessionCores::new(factory.session_cores(), cores::Balance::default())?;
    serve_on(factory, listener.into(), shutdown, replication, cores).await
}

/// [`serve_replicated`] on the given session runtimes.
pub async fn serve_on<F: BackendFactory>(
    factory: F,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
    replication: Option<Arc<dyn ReplicationHandler>>,
    cores: Arc<SessionCores>,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        factory,
        cancel: Arc::new(CancelRegistry::new()),
        replication,
        stop: stop::Stop::new(),
        service: tokio::runtime::Handle::current(),
        live: Live::new(),
    });
    // Two forms of one signal: sessions wait on `shared.stop` (no shared
    // lock per socket wait, see `stop`), a walsender on the watch it is
    // handed with its connection.
    let (stop_tx, stop_rx) = watch::channel(false);
    let balancer = tokio::spawn(cores.clone().balance());
    tokio::pin!(shutdown);
    let Listeners {
        tcp: listener,
        unix,
    } = listeners;
    // Whether idle sessions were told that parking became due (told
    // again after the held sockets fell below half the threshold).
    let mut nudged = false;
    let accept_unix = || async {
        match &unix {
            Some(l) => l.accept().await.map(|(s, _)| s),
            None => std::future::pending().await,
        }
    };
    loop {
        let (stream, peer) = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            res = listener.accept() => match res {
                Ok((stream, peer)) => (stream::ClientStream::Tcp(stream), Some(peer)),
                Err(e) => {
                    // EMFILE and friends: back off briefly instead of spinning.
                    warn!("could not accept new connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            res = accept_unix() => match res {
                Ok(stream) => (stream::ClientStream::Unix(stream), None),
                Err(e) => {
                    warn!("could not accept new connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // The socket leaves this runtime's epoll for its core's.
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                warn!("could not hand over a new connection: {e}");
                continue;
            }
        };
        let seat = cores.place();
        let live = shared.live.enter();
        nudge_when_parking_is_due(&shared, &mut nudged);
        let (shared, stop_rx) = (shared.clone(), stop_rx.clone());
        cores.spawn(seat.core(), async move {
            match stream.into_tokio() {
                Ok(stream) => run_connection(shared, stream, peer, stop_rx, seat, live).await,
                Err(e) => warn!("could not register a new connection: {e}"),
            }
        });
    }
    drop(listener);
    drop(unix);
    let _ = stop_tx.send(true);
    shared.stop.stop();
    shared.cancel.cancel_all();
    shared.live.all_ended().await;
    balancer.abort();
    Ok(())
}
