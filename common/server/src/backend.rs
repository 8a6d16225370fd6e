//! What the session loop needs from the SQL layer, as a trait: the
//! contract of `sql::session::Session` (which implements it) made
//! generic so that the protocol machinery can also be driven by another
//! command processor (a walsender for `replication=true` connections, or the
//! scripted backend of the server's own tests).
//!
//! The methods are synchronous: the SQL layer may block (lock waits, WAL
//! flush) or run long (scans, DDL, COPY). The session loop hands its core's
//! worker off (`block_in_place`) around such calls and runs only
//! statements that [`StatementInfo::runs_briefly`] inline; see
//! [`super::postgres`] and [`super::cores`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pgtypes::error::{PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::txstatus::TxStatus;
use pgtypes::value::Value;
use pgtypes::Oid;

/// A prepared statement as the session loop sees it.
pub trait StatementInfo: Send + Sync + 'static {
    /// Parameter types ($1 … $n).
    fn param_types(&self) -> &[SqlType];
    /// Result columns, or None for statements that return no rows.
    fn columns(&self) -> Option<&[FieldDescription]>;
    /// True if executing it is short, bounded work whose only waits go
    /// through [`pgtypes::blocking::run_blocking`]: the session loop then runs it
    /// inline on the connection's task instead of handing the runtime
    /// worker off first. The default (false) is always safe.
    fn runs_briefly(&self) -> bool {
        false
    }
}

/// One client session's command processor. See
/// `sql::session::Session` for the meaning of each method.
pub trait Backend: Send + 'static {
    /// The prepared statement type.
    type Statement: StatementInfo;
    /// Parses `sql` (several statements possible).
    fn prepare(&mut self, sql: &str, param_types: &[Oid]) -> PgResult<Vec<Arc<Self::Statement>>>;
    /// Runs one statement.
    fn execute(
        &mut self,
        stmt: &Self::Statement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<ExecOutcome>;
    /// Feeds one CopyData message.
    fn copy_in_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> PgResult<()>;
    /// CopyDone.
    fn copy_in_done(&mut self, copy: CopyIn) -> PgResult<String>;
    /// CopyFail.
    fn copy_in_fail(&mut self, copy: CopyIn, message: &str) -> pgtypes::error::PgError;
    /// Before the first statement of a multi-statement simple query.
    fn begin_implicit(&mut self);
    /// After the last one (`ok` false after an error).
    fn end_implicit(&mut self, ok: bool) -> PgResult<()>;
    /// After an error inside a statement.
    fn on_error(&mut self);
    /// ReadyForQuery status.
    fn tx_status(&self) -> TxStatus;
    /// How long the client may leave a transaction block open without
    /// sending anything (`idle_in_transaction_session_timeout`); `None`:
    /// no limit.
    fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        None
    }
    /// The flag a CancelRequest sets.
    fn cancel_flag(&self) -> Arc<AtomicBool>;
    /// What standby replay signals on a snapshot conflict; the loop also
    /// waits on it while the client owes its next message.
    fn conflict_signal(&self) -> Option<Arc<tokio::sync::Notify>> {
        None
    }
    /// Called with `true` while a statement's output waits for the client
    /// to read (the socket is full: `pg_stat_activity` shows wait event
    /// `Client` / `ClientWrite`), and with `false` when it no longer does.
    fn client_write_wait(&self) -> Option<Arc<dyn Fn(bool) + Send + Sync>> {
        None
    }
    /// Replay signalled a conflict while the session was idle: the FATAL
    /// error that ends the connection, if the session must go.
    fn idle_interrupt(&mut self) -> Option<pgtypes::error::PgError> {
        None
    }
    /// Called once by the session loop, which awaits
    /// [`Backend::pending_wait`] after every call that may commit: the
    /// backend may from now on leave such a wait instead of blocking its
    /// thread. Backends driven by anything else never leave one.
    fn enable_async_waits(&mut self) {}
    /// What the last call left to wait for before its result may be sent
    /// (a commit that joined a group WAL flush): the loop awaits it — other
    /// sessions of the core run meanwhile — then calls
    /// [`Backend::finish_wait`].
    fn pending_wait(&mut self) -> Option<PendingWait> {
        None
    }
    /// Ends what [`Backend::pending_wait`] waited for (the commit becomes
    /// visible); an error replaces the call's result.
    fn finish_wait(&mut self) -> PgResult<()> {
        Ok(())
    }
    /// A WARNING the finished wait left for the client (a cancelled wait
    /// for synchronous standbys), sent before the command completes.
    fn wait_notice(&mut self) -> Option<PgError> {
        None
    }
    /// Tells the backend the pid announced in BackendKeyData.
    fn set_backend_pid(&mut self, _pid: i32) {}
    /// Hands the backend what ends its session (FATAL 57P01 at the
    /// session's next wait or interrupt check), for
    /// `pg_terminate_backend()` to call.
    fn set_terminator(&mut self, _terminate: Arc<dyn Fn() + Send + Sync>) {}
    /// The client's TCP socket has a new descriptor number (it came back
    /// from the parking lot, [`crate::park`]): the same socket, its
    /// options kept ([`ConnectionInfo::tcp_fd`] named the old number).
    fn socket_moved(&mut self, _fd: std::os::fd::RawFd) {}
    /// The session's value of a setting (startup `options` may have changed
    /// it), used for the initial ParameterStatus messages; `None` keeps the
    /// factory's value.
    fn setting(&self, _name: &str) -> Option<String> {
        None
    }
}

/// A wait a backend call left for the session loop (see
/// [`Backend::pending_wait`]).
pub type PendingWait = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// How a client must prove who it is (the exchange the session loop runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthMethod {
    /// Let the client in without asking (AuthenticationOk at once).
    Trust,
    /// AuthenticationCleartextPassword.
    Password,
    /// AuthenticationMD5Password (SCRAM instead when the role's verifier
    /// is a SCRAM one, as PostgreSQL does).
    Md5,
    /// SASL with SCRAM-SHA-256.
    ScramSha256,
}

/// What [`BackendFactory::authentication`] decided for a connection.
#[derive(Clone, Debug)]
pub struct AuthRequest {
    /// The exchange to run.
    pub method: AuthMethod,
    /// The role's stored verifier (`SCRAM-SHA-256$…` or `md5…`); None when
    /// the role does not exist or has no password: the exchange still
    /// runs (against a mock verifier) and fails, so a client cannot tell
    /// an unknown user from a wrong password.
    pub secret: Option<String>,
    /// Why the exchange must fail even with a matching password (an
    /// expired password), or why there is no secret: the DETAIL of the
    /// server log line, never sent to the client.
    pub failure_detail: Option<String>,
    /// The error to end the connection with after a successful exchange
    /// (role may not log in, no replication privilege).
    pub after: Option<PgError>,
    /// The pg_hba.conf line that chose the method, for the log
    /// ("Connection matched pg_hba.conf line N: …").
    pub hba_line: Option<String>,
}

impl AuthRequest {
    /// Trust, nothing to check afterwards.
    pub fn trust() -> AuthRequest {
        AuthRequest {
            method: AuthMethod::Trust,
            secret: None,
            failure_detail: None,
            after: None,
            hba_line: None,
        }
    }
}

/// The connection as authentication sees it.
#[derive(Clone, Debug)]
pub struct ConnectionInfo {
    /// The client's address (None: a Unix-domain socket).
    pub peer: Option<std::net::SocketAddr>,
    /// The effective user id of a Unix-socket client's process (`peer`
    /// authentication).
    pub peer_uid: Option<u32>,
    /// The server's address the client connected to (None if the socket
    /// could not say).
    pub local: Option<std::net::SocketAddr>,
    /// True if the connection uses TLS.
    pub ssl: bool,
    /// The TLS parameters and client certificate (`pg_stat_ssl`, `cert`
    /// authentication); None without TLS.
    pub ssl_info: Option<std::sync::Arc<pgtypes::ssl::SslInfo>>,
    /// The server checks client certificates (`ssl_ca_file` is set):
    /// `clientcert` and `cert` need it.
    pub verifies_clients: bool,
    /// The TCP socket's descriptor (None: a Unix-domain socket), open for
    /// the connection's life: the session applies its `tcp_keepalives_*`
    /// settings to it and SHOW reads them back, as PostgreSQL does.
    pub tcp_fd: Option<std::os::fd::RawFd>,
}

/// Makes backends for new connections and tells the server what to report.
pub trait BackendFactory: Send + Sync + 'static {
    /// The backend type.
    type Backend: Backend;
    /// The authentication hook (ClientAuthentication): how the client on
    /// `conn` with these startup parameters proves who it is, before any
    /// backend is made (replication connections too, before they are
    /// handed over). An error (28000 no pg_hba.conf entry, reject) is sent
    /// as FATAL and the connection closed. The default is `trust`.
    fn authentication(
        &self,
        _params: &[(String, String)],
        _conn: ConnectionInfo,
    ) -> PgResult<AuthRequest> {
        Ok(AuthRequest::trust())
    }
    /// A backend for the client on `conn` that sent these startup
    /// parameters (and passed [`BackendFactory::authentication`]). An error is sent as
    /// FATAL and the connection closed (53300, 57P03 …). Runs inline on
    /// the session's core: it must be brief and never wait.
    fn connect(&self, params: &[(String, String)], conn: ConnectionInfo)
        -> PgResult<Self::Backend>;
    /// The ParameterStatus messages sent after AuthenticationOk.
    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)>;
    /// The `max_message_size` setting, in bytes.
    fn max_message_size(&self) -> usize;
    /// The TLS context for a client's SSLRequest (None: answer `N`).
    /// Read once per SSLRequest, so a reload takes effect for new
    /// connections.
    fn tls(&self) -> Option<std::sync::Arc<crate::tls::TlsContext>> {
        None
    }
    /// How many per-core session runtimes to run (`session_cores`; 0: one
    /// per CPU).
    fn session_cores(&self) -> usize {
        0
    }
    /// What to log about connections and how long authentication may take
    /// (read once per connection).
    fn connection_policy(&self) -> ConnectionPolicy {
        ConnectionPolicy::default()
    }
}

/// PostgreSQL's `log_connections`, `log_disconnections` and
/// `authentication_timeout`.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionPolicy {
    /// Log `connection received` and `connection authorized` lines.
    pub log_connections: bool,
    /// Log a `disconnection: session time: …` line when a session ends.
    pub log_disconnections: bool,
    /// How long the startup packet and authentication may take together.
    pub authentication_timeout: std::time::Duration,
    /// The server's `tcp_keepalives_*` and `tcp_user_timeout`, set on each
    /// TCP connection as it is accepted (a session's own values replace
    /// them once it starts).
    pub keepalives: protocol::sockopt::Keepalives,
    /// Idle sessions park their sockets ([`crate::park`]) while the
    /// node holds at least this many client sockets in its descriptor
    /// table (0: always).
    pub park_above: usize,
}

impl Default for ConnectionPolicy {
    fn default() -> ConnectionPolicy {
        ConnectionPolicy {
            log_connections: false,
            log_disconnections: false,
            authentication_timeout: std::time::Duration::from_secs(60),
            keepalives: protocol::sockopt::Keepalives::default(),
            park_above: crate::park::descriptor_limit() / 2,
        }
    }
}

/// One column of a RowDescription.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDescription {
    /// Column name (`?column?` when unnamed, as PostgreSQL).
    pub name: String,
    /// Table OID or 0.
    pub table_oid: Oid,
    /// Column number or 0.
    pub column_id: i16,
    /// The type.
    pub ty: SqlType,
}

/// Where results go. The protocol loop implements it, writing DataRow,
/// CopyData and NoticeResponse straight into its output buffer.
pub trait ResultSink {
    /// One result row (formats were fixed at Bind).
    fn row(&mut self, values: &[Value]) -> PgResult<()>;
    /// True if result column `i` goes out in binary format (Bind asked
    /// for it): a value whose text form needs the server's state (a
    /// `regclass` printed by name) is converted only for text columns.
    fn binary_column(&self, i: usize) -> bool {
        let _ = i;
        false
    }
    /// A notice or warning to send before the command completes.
    fn notice(&mut self, notice: PgError);
    /// A run-time parameter changed (SET application_name …): ParameterStatus.
    fn parameter_status(&mut self, name: &str, value: &str);
    /// COPY TO STDOUT is starting: CopyOutResponse with `columns` text columns.
    fn copy_out_start(&mut self, columns: usize);
    /// One CopyData chunk of COPY TO STDOUT.
    fn copy_data(&mut self, data: &[u8]);
}

/// What executing a statement produced.
pub enum ExecOutcome {
    /// The command completed with this tag (`INSERT 0 1`, `SELECT 3`, `BEGIN`).
    Complete(String),
    /// An empty query string (EmptyQueryResponse).
    Empty,
    /// COPY FROM STDIN: send CopyInResponse, feed CopyData to
    /// [`Backend::copy_in_data`], then [`Backend::copy_in_done`] or
    /// [`Backend::copy_in_fail`].
    CopyIn(CopyIn),
}

/// An open COPY FROM STDIN.
pub struct CopyIn {
    /// Number of columns (for CopyInResponse).
    pub columns: usize,
    /// True for binary COPY (not supported: always false).
    pub binary: bool,
    /// The executor's state (opaque to the protocol loop).
    pub state: Box<dyn std::any::Any + Send>,
}
