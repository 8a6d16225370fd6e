//! A client session's SQL state: the contract between the protocol loop
//! (`server`) and the SQL layer. OWNER: Q2. The protocol helper (P) codes
//! against exactly these signatures.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::database::Database;
use crate::error::{PgError, PgResult};
use crate::sql::types::SqlType;
use crate::sql::value::Value;
use crate::types::Oid;
use crate::xact::TxStatus;

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
    /// A notice or warning to send before the command completes.
    fn notice(&mut self, notice: PgError);
    /// A run-time parameter changed (SET application_name …): ParameterStatus.
    fn parameter_status(&mut self, name: &str, value: &str);
    /// COPY TO STDOUT is starting: CopyOutResponse with `columns` text columns.
    fn copy_out_start(&mut self, columns: usize);
    /// One CopyData chunk of COPY TO STDOUT.
    fn copy_data(&mut self, data: &[u8]);
}

/// A parsed, described statement (Parse, or one statement of a Query).
pub struct PreparedStatement {
    _private: (),
}

impl PreparedStatement {
    /// Parameter types ($1 … $n), inferred where the client sent 0.
    pub fn param_types(&self) -> &[SqlType] {
        todo!("Q2")
    }
    /// Result columns, or None for statements that return no rows.
    pub fn columns(&self) -> Option<&[FieldDescription]> {
        todo!("Q2")
    }
    /// The original text (for logs and pg_stat-like views).
    pub fn text(&self) -> &str {
        todo!("Q2")
    }
}

/// What executing a statement produced.
pub enum ExecOutcome {
    /// The command completed with this tag (`INSERT 0 1`, `SELECT 3`, `BEGIN`).
    Complete(String),
    /// An empty query string (EmptyQueryResponse).
    Empty,
    /// COPY FROM STDIN: send CopyInResponse, feed CopyData to
    /// [`Session::copy_in_data`], then [`Session::copy_in_done`] or
    /// [`Session::copy_in_fail`].
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

/// A session. Not shared between tasks.
pub struct Session {
    _private: (),
}

impl Session {
    /// A new session for a client that sent these startup parameters
    /// (user, database, application_name, options …). Takes a proc slot:
    /// 53300 "sorry, too many clients already" when none is free.
    pub fn new(db: Arc<Database>, startup_params: &[(String, String)]) -> PgResult<Session> {
        let _ = (db, startup_params);
        todo!("Q2")
    }
    /// Parses `sql` (possibly several statements) with the parse cache.
    /// `param_types` are the OIDs from Parse (0 = infer).
    pub fn prepare(&mut self, sql: &str, param_types: &[Oid]) -> PgResult<Vec<Arc<PreparedStatement>>> {
        let _ = (sql, param_types);
        todo!("Q2")
    }
    /// Runs one statement with bound parameter values.
    pub fn execute(&mut self, stmt: &PreparedStatement, params: &[Value], sink: &mut dyn ResultSink) -> PgResult<ExecOutcome> {
        let _ = (stmt, params, sink);
        todo!("Q2")
    }
    /// Feeds one CopyData message.
    pub fn copy_in_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> PgResult<()> {
        let _ = (copy, data);
        todo!("Q2")
    }
    /// CopyDone: finishes the COPY, returning its tag (`COPY n`).
    pub fn copy_in_done(&mut self, copy: CopyIn) -> PgResult<String> {
        let _ = copy;
        todo!("Q2")
    }
    /// CopyFail: aborts the COPY with the client's message (57014).
    pub fn copy_in_fail(&mut self, copy: CopyIn, message: &str) -> PgError {
        let _ = (copy, message);
        todo!("Q2")
    }
    /// A simple-query string with several statements runs as one implicit
    /// transaction: called before its first and after its last statement.
    pub fn begin_implicit(&mut self) {
        todo!("Q2")
    }
    /// See [`Session::begin_implicit`]; `ok` is false after an error.
    pub fn end_implicit(&mut self, ok: bool) -> PgResult<()> {
        let _ = ok;
        todo!("Q2")
    }
    /// After an error inside a statement: abort or mark the block failed.
    pub fn on_error(&mut self) {
        todo!("Q2")
    }
    /// ReadyForQuery status.
    pub fn tx_status(&self) -> TxStatus {
        todo!("Q2")
    }
    /// Set by a CancelRequest; the executor polls it and raises 57014.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        todo!("Q2")
    }
}
