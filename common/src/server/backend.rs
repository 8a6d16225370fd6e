//! What the session loop needs from the SQL layer, as a trait: the
//! contract of [`crate::sql::session::Session`] (which implements it) made
//! generic so that the protocol machinery can also be driven by another
//! command processor (a walsender for `replication=true` connections, or the
//! scripted backend of the server's own tests).
//!
//! The methods are synchronous: the SQL layer may block (lock waits, WAL
//! flush) or run long (scans, DDL, COPY). The session loop hands the
//! runtime worker off (`block_in_place`) around such calls and runs only
//! statements that [`StatementInfo::runs_briefly`] inline; see
//! [`super::postgres`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::node::Node;
use crate::sql::session::{
    CopyIn, ExecOutcome, FieldDescription, PreparedStatement, ResultSink, Session,
};
use engine::standby_conflict::ConflictSignal;
use engine::xact::TxStatus;
use engine::Role;
use pgtypes::error::PgResult;
use pgtypes::sqltype::SqlType;
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
/// [`crate::sql::session::Session`] for the meaning of each method.
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
    fn conflict_signal(&self) -> Option<Arc<ConflictSignal>> {
        None
    }
    /// Replay signalled a conflict while the session was idle: the FATAL
    /// error that ends the connection, if the session must go.
    fn idle_interrupt(&mut self) -> Option<pgtypes::error::PgError> {
        None
    }
    /// Tells the backend the pid announced in BackendKeyData.
    fn set_backend_pid(&mut self, _pid: i32) {}
    /// The session's value of a setting (startup `options` may have changed
    /// it), used for the initial ParameterStatus messages; `None` keeps the
    /// factory's value.
    fn setting(&self, _name: &str) -> Option<String> {
        None
    }
}

/// Makes backends for new connections and tells the server what to report.
pub trait BackendFactory: Send + Sync + 'static {
    /// The backend type.
    type Backend: Backend;
    /// A backend for a client that sent these startup parameters. An error
    /// is sent as FATAL and the connection closed (53300, 57P03 …).
    fn connect(&self, params: &[(String, String)]) -> PgResult<Self::Backend>;
    /// The ParameterStatus messages sent after AuthenticationOk.
    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)>;
    /// The `max_message_size` setting, in bytes.
    fn max_message_size(&self) -> usize;
}

impl StatementInfo for PreparedStatement {
    fn param_types(&self) -> &[SqlType] {
        PreparedStatement::param_types(self)
    }
    fn columns(&self) -> Option<&[FieldDescription]> {
        PreparedStatement::columns(self)
    }
    fn runs_briefly(&self) -> bool {
        PreparedStatement::runs_briefly(self)
    }
}

impl Backend for Session {
    type Statement = PreparedStatement;
    fn prepare(&mut self, sql: &str, param_types: &[Oid]) -> PgResult<Vec<Arc<PreparedStatement>>> {
        Session::prepare(self, sql, param_types)
    }
    fn execute(
        &mut self,
        stmt: &PreparedStatement,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<ExecOutcome> {
        Session::execute(self, stmt, params, sink)
    }
    fn copy_in_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> PgResult<()> {
        Session::copy_in_data(self, copy, data)
    }
    fn copy_in_done(&mut self, copy: CopyIn) -> PgResult<String> {
        Session::copy_in_done(self, copy)
    }
    fn copy_in_fail(&mut self, copy: CopyIn, message: &str) -> pgtypes::error::PgError {
        Session::copy_in_fail(self, copy, message)
    }
    fn begin_implicit(&mut self) {
        Session::begin_implicit(self)
    }
    fn end_implicit(&mut self, ok: bool) -> PgResult<()> {
        Session::end_implicit(self, ok)
    }
    fn on_error(&mut self) {
        Session::on_error(self)
    }
    fn tx_status(&self) -> TxStatus {
        Session::tx_status(self)
    }
    fn idle_in_transaction_timeout(&self) -> Option<std::time::Duration> {
        Session::idle_in_transaction_timeout(self)
    }
    fn cancel_flag(&self) -> Arc<AtomicBool> {
        Session::cancel_flag(self)
    }
    fn conflict_signal(&self) -> Option<Arc<ConflictSignal>> {
        Session::conflict_signal(self)
    }
    fn idle_interrupt(&mut self) -> Option<pgtypes::error::PgError> {
        Session::idle_interrupt(self)
    }
    fn set_backend_pid(&mut self, pid: i32) {
        Session::set_backend_pid(self, pid)
    }
    fn setting(&self, name: &str) -> Option<String> {
        Session::setting(self, name)
    }
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

impl BackendFactory for Arc<Node> {
    type Backend = Session;

    fn connect(&self, params: &[(String, String)]) -> PgResult<Session> {
        Session::new(self.clone(), params)
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
                let value =
                    client.unwrap_or_else(|| self.config.get(name).unwrap_or_default().to_string());
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
        let standby = if self.role() == Role::Standby {
            "on"
        } else {
            "off"
        };
        out.push(("in_hot_standby".into(), standby.into()));
        out
    }

    fn max_message_size(&self) -> usize {
        self.config.max_message_size()
    }
}
