//! What each session is doing, for `pg_stat_activity` (PostgreSQL's
//! backend_status.c).
//!
//! Every session owns one [`BackendEntry`], registered in the node's
//! [`BackendStatusArray`] for its lifetime (unregistered on drop). The
//! session writes its entry at the edges of a statement and a
//! transaction: the state, the statement's text (an `Arc` of the parsed
//! statement's text: a reference count, no copy, so the point-select path
//! pays two uncontended lock round trips per statement) and the
//! timestamps. Readers (`pg_stat_activity`) copy every entry under its
//! lock; no entry lock is held while another is taken, and the array's
//! lock only guards the list, so readers never block a session for long.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;

/// `pg_stat_activity.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendState {
    /// Waiting for a command.
    Idle,
    /// Running a statement.
    Active,
    /// In a transaction block, between statements.
    IdleInTransaction,
    /// In a failed transaction block, between statements.
    IdleInTransactionAborted,
}

impl BackendState {
    /// The text pg_stat_activity shows.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendState::Idle => "idle",
            BackendState::Active => "active",
            BackendState::IdleInTransaction => "idle in transaction",
            BackendState::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

/// One session's row (the parts that change are behind the entry's lock).
#[derive(Clone)]
pub struct BackendStatus {
    /// pid (the session's BackendKeyData pid).
    pub pid: i32,
    /// The session user.
    pub user: String,
    /// The database.
    pub database: String,
    /// `application_name`.
    pub application_name: String,
    /// The client's address (None: not a network connection).
    pub client: Option<SocketAddr>,
    /// The server's address the client connected to (None: not known).
    pub server: Option<SocketAddr>,
    /// The client came through the Unix-domain socket (client_port -1).
    pub unix_socket: bool,
    /// The connection's TLS parameters (None: no TLS), for `pg_stat_ssl`.
    pub ssl: Option<Arc<pgtypes::ssl::SslInfo>>,
    /// backend_start (PostgreSQL microseconds since 2000-01-01 UTC).
    pub backend_start: i64,
    /// xact_start (None outside a transaction).
    pub xact_start: Option<i64>,
    /// query_start of the last statement (None before the first).
    pub query_start: Option<i64>,
    /// state_change.
    pub state_change: i64,
    /// state.
    pub state: BackendState,
    /// The session's cancel flag (what a CancelRequest and
    /// `pg_cancel_backend()` set; None: cannot be cancelled).
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
    /// What ends the session with FATAL 57P01, for
    /// `pg_terminate_backend()` (the protocol loop's handle; None: a
    /// session not driven by one, which cannot be terminated).
    pub terminate: Option<TerminateHandle>,
    /// What the session waits for beyond locks and the client
    /// (`wait_event_type`, `wait_event`), e.g. `("IPC", "SyncRep")`.
    pub wait_event: Option<(&'static str, &'static str)>,
    /// The current or last statement's text (shared with the statement:
    /// no copy per statement).
    pub query: QueryText,
}

/// Ends one session (see [`BackendStatus::terminate`]).
pub type TerminateHandle = Arc<dyn Fn() + Send + Sync>;

/// A statement's text as the session holds it.
pub type QueryText = Arc<dyn AsRef<str> + Send + Sync>;

/// An empty [`QueryText`].
pub fn no_query() -> QueryText {
    Arc::new(String::new())
}

/// A session's registered entry.
pub struct BackendEntry {
    status: Mutex<BackendStatus>,
    array: Arc<BackendStatusArray>,
    id: u64,
}

impl BackendEntry {
    /// Changes the row.
    pub fn update(&self, f: impl FnOnce(&mut BackendStatus)) {
        f(&mut self.status.lock());
    }

    /// A copy of the row.
    pub fn get(&self) -> BackendStatus {
        self.status.lock().clone()
    }
}

impl Drop for BackendEntry {
    fn drop(&mut self) {
        self.array.entries.lock().remove(&self.id);
    }
}

/// The node's sessions, in the order they connected.
#[derive(Default)]
pub struct BackendStatusArray {
    entries: Mutex<BTreeMap<u64, std::sync::Weak<BackendEntry>>>,
    next: Mutex<u64>,
}

impl BackendStatusArray {
    /// Registers a session with its first row; the entry unregisters
    /// itself when dropped.
    pub fn register(self: &Arc<Self>, status: BackendStatus) -> Arc<BackendEntry> {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        let e = Arc::new(BackendEntry {
            status: Mutex::new(status),
            array: self.clone(),
            id,
        });
        self.entries.lock().insert(id, Arc::downgrade(&e));
        e
    }

    /// Every session's row, in connection order.
    pub fn snapshot(&self) -> Vec<BackendStatus> {
        let live: Vec<Arc<BackendEntry>> = self
            .entries
            .lock()
            .values()
            .filter_map(|w| w.upgrade())
            .collect();
        live.iter().map(|e| e.get()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pid: i32) -> BackendStatus {
        BackendStatus {
            pid,
            user: "u".into(),
            database: "d".into(),
            application_name: String::new(),
            client: None,
            server: None,
            unix_socket: false,
            ssl: None,
            backend_start: 0,
            xact_start: None,
            query_start: None,
            state_change: 0,
            state: BackendState::Idle,
            wait_event: None,
            cancel: None,
            terminate: None,
            query: no_query(),
        }
    }

    #[test]
    fn entries_come_and_go() {
        let a = Arc::new(BackendStatusArray::default());
        let e1 = a.register(row(1));
        let e2 = a.register(row(2));
        e2.update(|s| {
            s.state = BackendState::Active;
            s.query = Arc::new("select 1".to_string());
        });
        let rows = a.snapshot();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].state, BackendState::Active);
        assert_eq!((*rows[1].query).as_ref(), "select 1");
        drop(e1);
        assert_eq!(a.snapshot().len(), 1);
        drop(e2);
        assert!(a.snapshot().is_empty());
    }
}
