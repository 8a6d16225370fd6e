//! The postmaster and the per-connection session loop (postgres.c).
//!
//! [`serve`] accepts TCP connections and spawns one task per connection
//! ([`postgres`]): startup (SSLRequest/GSSENCRequest answered `N`, trust
//! authentication, ParameterStatus, BackendKeyData), then the simple and
//! extended query protocols and COPY over a [`Session`](crate::sql::session::Session).
//! A CancelRequest on a fresh connection sets the target session's cancel
//! flag through the [`cancel`] registry.
//!
//! ```text
//!   serve ── accept ──▶ task: run_connection ──▶ Backend (Session)
//!     │                        ▲ watch(shutdown)
//!     └─ shutdown future ──────┘ + cancel_all()
//! ```
//!
//! Shutdown: when the `shutdown` future completes the listener is dropped
//! (no new connections), every session's cancel flag is set (so running
//! statements stop), idle sessions get FATAL 57P01 "terminating connection
//! due to administrator command", and `serve` returns once every
//! connection task has ended.
//!
//! Isolation: each connection is its own task; an error or even a panic in
//! one ends only that task (the JoinSet reaps it and logs).
//!
//! [`serve_with`] is the same loop over any [`BackendFactory`], so a
//! walsender (for `replication=true` connections) or a test double can
//! reuse the protocol machinery.

pub mod backend;
pub mod cancel;
pub mod postgres;
mod values;

#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{error, warn};

pub use backend::{Backend, BackendFactory, StatementInfo};
pub use cancel::CancelRegistry;

use crate::database::Database;
use postgres::{run_connection, Shared};

/// Serves clients of `db` on `listener` until `shutdown` completes, then
/// terminates every session (FATAL 57P01) and returns.
pub async fn serve(
    db: Arc<Database>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(db, listener, shutdown).await
}

/// [`serve`] over any [`BackendFactory`].
pub async fn serve_with<F: BackendFactory>(
    factory: F,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        factory,
        cancel: CancelRegistry::new(),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks: JoinSet<()> = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            _ = &mut shutdown => break,
            Some(res) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = res {
                    error!("connection task failed: {e}");
                }
            }
            res = listener.accept() => match res {
                Ok((stream, peer)) => {
                    tasks.spawn(run_connection(shared.clone(), stream, peer, stop_rx.clone()));
                }
                Err(e) => {
                    // EMFILE and friends: back off briefly instead of spinning.
                    warn!("could not accept new connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    shared.cancel.cancel_all();
    while let Some(res) = tasks.join_next().await {
        if let Err(e) = res {
            error!("connection task failed: {e}");
        }
    }
    Ok(())
}
