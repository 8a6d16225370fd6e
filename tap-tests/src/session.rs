//! Long-lived native sessions: one tokio-postgres connection held open for a
//! whole test, the Rust counterpart of `$node->background_psql`.
//!
//! Results come back as text shaped like `psql -XAt` output — columns joined
//! by `|`, rows by `\n`, NULL as the empty string, no headers, no footers,
//! no command tags — so assertions read like PostgreSQL's
//! (`is($result, "1|one", ...)`). Statements go through the simple query
//! protocol, as psql sends them; several statements in one string are one
//! implicit transaction, and their rows are concatenated.
//!
//! A statement that will block (a row lock held by another session, a
//! `pg_sleep`) is started with [`Session::send`], which returns a
//! [`Pending`] at once; the process-wide runtime keeps driving it while the
//! test does other things, and [`Pending::wait`] collects the result.
//! Statements sent later on the same session queue behind it, as they would
//! on one psql.

use std::sync::Arc;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use crate::utils::timeout_default;
use crate::{block_on, runtime};

/// An error a statement (or the connection) ended with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    /// SQLSTATE (`"23505"`), or empty when the failure was not an
    /// ErrorResponse (connection refused, closed, I/O).
    pub code: String,
    /// `ERROR`, `FATAL`, … or empty when not from the server.
    pub severity: String,
    /// The primary message, in PostgreSQL's words.
    pub message: String,
    /// The DETAIL line, if the server sent one.
    pub detail: Option<String>,
    /// The HINT line, if the server sent one.
    pub hint: Option<String>,
}

impl SqlError {
    /// The SQLSTATE, `""` if none.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// Converts a tokio-postgres error, keeping the server's fields.
    pub fn from_driver(e: &tokio_postgres::Error) -> SqlError {
        match e.as_db_error() {
            Some(db) => SqlError {
                code: db.code().code().to_string(),
                severity: db.severity().to_string(),
                message: db.message().to_string(),
                detail: db.detail().map(str::to_string),
                hint: db.hint().map(str::to_string),
            },
            None => SqlError {
                code: String::new(),
                severity: String::new(),
                message: e.to_string(),
                detail: None,
                hint: None,
            },
        }
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.code.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(
                f,
                "{}:  {} (SQLSTATE {})",
                self.severity, self.message, self.code
            )
        }
    }
}

impl std::error::Error for SqlError {}

/// Formats simple-query results as `psql -XAt` prints them.
pub fn format_rows(messages: &[SimpleQueryMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        if let SimpleQueryMessage::Row(row) = m {
            if !out.is_empty() {
                out.push('\n');
            }
            for i in 0..row.len() {
                if i > 0 {
                    out.push('|');
                }
                out.push_str(row.get(i).unwrap_or(""));
            }
        }
    }
    out
}

/// Opens a native connection on the shared runtime (the connection task is
/// spawned there), returning the client and the task.
pub(crate) async fn connect(connstr: &str) -> Result<(Client, JoinHandle<()>), SqlError> {
    let (client, connection) = tokio_postgres::connect(connstr, NoTls)
        .await
        .map_err(|e| SqlError::from_driver(&e))?;
    let task = tokio::spawn(async move {
        // The connection ends with an error when the server goes away; the
        // client's next call reports it, so nothing to log here.
        let _ = connection.await;
    });
    Ok((client, task))
}

/// Runs `sql` on a fresh connection and closes it (`safe_psql`'s model).
pub(crate) fn one_shot(connstr: &str, sql: &str) -> Result<String, SqlError> {
    block_on(async {
        let (client, task) = connect(connstr).await?;
        let result = client.simple_query(sql).await;
        drop(client);
        let _ = task.await;
        result
            .map(|m| format_rows(&m))
            .map_err(|e| SqlError::from_driver(&e))
    })
}

/// A long-lived native connection to a node.
pub struct Session {
    name: String,
    client: Arc<Client>,
    task: JoinHandle<()>,
}

impl Session {
    /// Reads `table` twice and asserts (with `message`) that this
    /// session's cached snapshot was reused: `snapshots_reused` in
    /// `hotpair_stat_snapshots` rose. The caller keeps the node's other
    /// sessions idle meanwhile, so the rise is this session's.
    pub fn prove_snapshot_reuse(&self, table: &str, message: &str) {
        let reused = || -> u64 {
            self.query_safe("SELECT snapshots_reused FROM hotpair_stat_snapshots")
                .parse()
                .expect("counter")
        };
        let before = reused();
        let read = format!("SELECT count(*) FROM {table}");
        self.query_safe(&read);
        self.query_safe(&read);
        assert!(reused() > before, "{message}");
    }

    /// Connects to `connstr`; panics if the connection fails. `name` labels
    /// failure messages (e.g. the node's name).
    pub fn connect(name: &str, connstr: &str) -> Session {
        match Session::try_connect(name, connstr) {
            Ok(s) => s,
            Err(e) => panic!("session on {name}: could not connect ({connstr}): {e}"),
        }
    }

    /// Connects to `connstr`, returning the error (e.g. 57P03 on a standby
    /// not yet consistent).
    pub fn try_connect(name: &str, connstr: &str) -> Result<Session, SqlError> {
        let (client, task) = block_on(connect(connstr))?;
        Ok(Session {
            name: name.to_string(),
            client: Arc::new(client),
            task,
        })
    }

    /// Runs `sql` (simple query protocol) and returns its rows as
    /// `psql -XAt` would print them.
    pub fn query(&self, sql: &str) -> Result<String, SqlError> {
        let run = async {
            let messages = self.client.simple_query(sql).await;
            messages
                .map(|m| format_rows(&m))
                .map_err(|e| SqlError::from_driver(&e))
        };
        match block_on(async { tokio::time::timeout(timeout_default(), run).await }) {
            Ok(result) => result,
            Err(_) => panic!(
                "session on {}: statement still running after {:?}: {sql}",
                self.name,
                timeout_default()
            ),
        }
    }

    /// Like [`query`](Self::query), panicking (with the SQL and the error)
    /// on failure — `$session->query_safe`.
    pub fn query_safe(&self, sql: &str) -> String {
        match self.query(sql) {
            Ok(out) => out,
            Err(e) => panic!("session on {}: query failed: {sql}\n{e}", self.name),
        }
    }

    /// Runs `sql`, expecting it to fail; returns the error, panics (showing
    /// the rows) if it succeeds.
    pub fn query_err(&self, sql: &str) -> SqlError {
        match self.query(sql) {
            Ok(out) => panic!(
                "session on {}: expected an error from: {sql}\ngot rows: {out:?}",
                self.name
            ),
            Err(e) => e,
        }
    }

    /// Starts `sql` without waiting for it; collect the outcome with
    /// [`Pending::wait`]. For statements that block on another session.
    pub fn send(&self, sql: &str) -> Pending {
        let client = Arc::clone(&self.client);
        let text = sql.to_string();
        let handle = runtime().spawn(async move {
            client
                .simple_query(&text)
                .await
                .map(|m| format_rows(&m))
                .map_err(|e| SqlError::from_driver(&e))
        });
        Pending {
            session: self.name.clone(),
            sql: sql.to_string(),
            handle: Some(handle),
        }
    }

    /// Sends a CancelRequest for whatever this session is running (PostgreSQL
    /// ignores it if nothing runs).
    pub fn cancel(&self) {
        let token = self.client.cancel_token();
        if let Err(e) = block_on(token.cancel_query(NoTls)) {
            panic!(
                "session on {}: could not send CancelRequest: {e}",
                self.name
            );
        }
    }

    /// Cancels `pending` (a statement this session started with
    /// [`Session::send`]) until it ends, and returns its outcome. A cancel
    /// that reaches the server before the statement starts is dropped
    /// (every statement starts uncancelled, as in PostgreSQL), so the
    /// cancel is repeated while the statement runs — half a second apart:
    /// a CancelRequest travels on its own connection and is never
    /// acknowledged, so cancels sent in a tight loop could still be in
    /// flight when the statement ends and cancel the session's next one.
    pub fn cancel_until_finished(&self, pending: Pending) -> Result<String, SqlError> {
        let mut last: Option<std::time::Instant> = None;
        crate::wait_until(&format!("{} is cancelled", pending.sql), || {
            if pending.is_finished() {
                return true;
            }
            if last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_millis(500)) {
                self.cancel();
                last = Some(std::time::Instant::now());
            }
            false
        });
        pending.wait()
    }

    /// The tokio-postgres client, for prepared statements, binary results and
    /// COPY (use it inside [`block_on`](crate::block_on)).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// True once the server has closed the connection (or it failed).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Dropping the last client handle sends Terminate; the connection
        // task then ends by itself. Pending statements hold a clone, so a
        // blocked one keeps its connection until it finishes.
        if Arc::strong_count(&self.client) > 1 {
            self.task.abort();
        }
    }
}

/// A statement started with [`Session::send`] that may still be running.
pub struct Pending {
    session: String,
    sql: String,
    handle: Option<JoinHandle<Result<String, SqlError>>>,
}

impl Pending {
    /// True once the statement has completed (successfully or not).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Waits for the statement's outcome, up to
    /// [`timeout_default`](crate::timeout_default); panics on timeout
    /// naming the statement.
    pub fn wait(mut self) -> Result<String, SqlError> {
        let mut handle = self.handle.take().expect("Pending waited twice");
        match block_on(async { tokio::time::timeout(timeout_default(), &mut handle).await }) {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => panic!(
                "session on {}: statement task failed: {e}: {}",
                self.session, self.sql
            ),
            Err(_) => {
                handle.abort();
                panic!(
                    "session on {}: statement still running after {:?}: {}",
                    self.session,
                    timeout_default(),
                    self.sql
                );
            }
        }
    }

    /// Waits and panics if the statement failed; returns its rows.
    pub fn wait_ok(self) -> String {
        let (session, sql) = (self.session.clone(), self.sql.clone());
        match self.wait() {
            Ok(out) => out,
            Err(e) => panic!("session on {session}: query failed: {sql}\n{e}"),
        }
    }
}
