//! Configuration reload requests: what SIGHUP is to PostgreSQL's
//! postmaster. `SELECT pg_reload_conf()` calls [`request`] (PostgreSQL's
//! function signals the postmaster and returns at once; so does this);
//! the node's reload task waits in [`requested`] and on SIGHUP, then
//! re-reads `pg_hba.conf`. One process is one node, so the signal is
//! process-wide, like a Unix signal.

use std::sync::OnceLock;

/// What applies a new `log_min_messages` (the binary's log filter).
type LogHook = Box<dyn Fn(&str) + Send + Sync>;

use tokio::sync::Notify;

fn signal() -> &'static Notify {
    static N: OnceLock<Notify> = OnceLock::new();
    N.get_or_init(Notify::new)
}

/// Asks the node to reload its configuration files.
pub fn request() {
    signal().notify_one();
}

/// Resolves at the next [`request`] (or at once for one made while no
/// task waited).
pub async fn requested() {
    signal().notified().await
}

fn log_hook() -> &'static OnceLock<LogHook> {
    static H: OnceLock<LogHook> = OnceLock::new();
    &H
}

/// Registers what applies `log_min_messages` on reload (the binary's
/// logging set-up, once; later calls are ignored).
pub fn on_log_min_messages(f: LogHook) {
    let _ = log_hook().set(f);
}

/// Applies a reloaded `log_min_messages` (nothing if no hook was
/// registered, e.g. when `RUST_LOG` fixed the filter).
pub fn log_min_messages(value: &str) {
    if let Some(f) = log_hook().get() {
        f(value);
    }
}
