//! Configuration reload requests: what SIGHUP is to PostgreSQL's
//! postmaster. `SELECT pg_reload_conf()` calls [`request`] (PostgreSQL's
//! function signals the postmaster and returns at once; so does this);
//! the node's reload task waits in [`requested`] and on SIGHUP, then
//! re-reads `pg_hba.conf`. One process is one node, so the signal is
//! process-wide, like a Unix signal.

use std::sync::OnceLock;

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
