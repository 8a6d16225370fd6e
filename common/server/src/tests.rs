//! Session-loop tests against a scripted backend (`Mock`), so the protocol
//! machinery is exercised independently of the SQL layer: tokio-postgres
//! (simple, extended, binary, portals, cancel), our own client (COPY), raw
//! bytes (framing errors), and shutdown.
//!
//! Mock "SQL" (one command per `;`-separated statement):
//! `rows N` (N rows of int4 n, text t), `echo $1 $2 …` (the parameters back),
//! `fail`, `badparse`, `begin`/`commit`/`rollback`, `copy in`, `copy out`,
//! `sleep` (until cancelled), `notice`, `setapp`, `big N` (N rows of 1 KiB).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::backend::{
    AuthMethod, AuthRequest, Backend, BackendFactory, ConnectionInfo, StatementInfo,
};
use super::backend::{CopyIn, ExecOutcome, FieldDescription, ResultSink};
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::sqltype::SqlType;
use pgtypes::txstatus::TxStatus;
use pgtypes::value::Value;
use pgtypes::Oid;
use protocol::client::testing::{error_code, expect_fatal, until_ready};
use protocol::client::Client;
use protocol::messages::{BackendMessage, Bind, FrontendMessage, Target};
use protocol::ClientError;

struct MockStmt {
    sql: String,
    params: Vec<SqlType>,
    cols: Option<Vec<FieldDescription>>,
}

impl StatementInfo for MockStmt {
    fn param_types(&self) -> &[SqlType] {
        &self.params
    }
    fn columns(&self) -> Option<&[FieldDescription]> {
        self.cols.as_deref()
    }
    fn runs_briefly(&self) -> bool {
        // `sleep` blocks its thread without handing the worker off (like a
        // long scan), `big` and COPY may be long: those leave the worker.
        !(self.sql == "sleep" || self.sql.starts_with("big ") || self.sql.starts_with("copy"))
    }
}

fn col(name: &str, ty: SqlType) -> FieldDescription {
    FieldDescription {
        name: name.into(),
        table_oid: 0,
        column_id: 0,
        ty,
    }
}

fn ty_of(oid: Oid) -> SqlType {
    match oid {
        16 => SqlType::Bool,
        20 => SqlType::Int8,
        21 => SqlType::Int2,
        23 => SqlType::Int4,
        _ => SqlType::Text,
    }
}

fn text(s: &str) -> Value {
    Value::from_text(SqlType::Text, s).unwrap()
}

/// What the mock saw, for assertions.
#[derive(Default)]
struct Log {
    events: Vec<String>,
}

struct Mock {
    status: TxStatus,
    cancel: Arc<AtomicBool>,
    log: Arc<Mutex<Log>>,
}

impl Mock {
    fn log(&self, e: impl Into<String>) {
        self.log.lock().events.push(e.into());
    }
}

impl Backend for Mock {
    type Statement = MockStmt;

    fn prepare(&mut self, sql: &str, param_types: &[Oid]) -> PgResult<Vec<Arc<MockStmt>>> {
        let mut out = Vec::new();
        for part in sql.split(';') {
            let s = part.trim().to_ascii_lowercase();
            if s.is_empty() {
                continue;
            }
            if s == "badparse" {
                return Err(PgError::syntax("syntax error at or near \"badparse\""));
            }
            let (params, cols) = if let Some(n) = s.strip_prefix("rows ") {
                let _ = n;
                (
                    vec![],
                    Some(vec![col("n", SqlType::Int4), col("t", SqlType::Text)]),
                )
            } else if s.starts_with("big ") {
                (vec![], Some(vec![col("b", SqlType::Text)]))
            } else if s.starts_with("echo") {
                let n = s.matches('$').count();
                let params: Vec<SqlType> = (0..n)
                    .map(|i| ty_of(param_types.get(i).copied().unwrap_or(0)))
                    .collect();
                let cols = params
                    .iter()
                    .enumerate()
                    .map(|(i, t)| col(&format!("p{}", i + 1), *t))
                    .collect();
                (params, Some(cols))
            } else {
                (vec![], None)
            };
            out.push(Arc::new(MockStmt {
                sql: s,
                params,
                cols,
            }));
        }
        Ok(out)
    }

    fn execute(
        &mut self,
        stmt: &MockStmt,
        params: &[Value],
        sink: &mut dyn ResultSink,
    ) -> PgResult<ExecOutcome> {
        self.log(format!("execute {}", stmt.sql));
        let s = stmt.sql.as_str();
        if self.status == TxStatus::Failed && s != "rollback" && s != "commit" {
            return Err(PgError::new(
                sqlstate::IN_FAILED_SQL_TRANSACTION,
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let tag = match s {
            "fail" => return Err(PgError::syntax("mock failure")),
            "begin" | "start transaction" => {
                self.status = TxStatus::InBlock;
                "BEGIN".to_string()
            }
            "commit" | "rollback" => {
                let tag = if s == "commit" && self.status != TxStatus::Failed {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                };
                self.status = TxStatus::Idle;
                tag.to_string()
            }
            "copy in" => {
                return Ok(ExecOutcome::CopyIn(CopyIn {
                    columns: 2,
                    binary: false,
                    state: Box::new(0usize),
                }));
            }
            "copy out" => {
                sink.copy_out_start(1);
                sink.copy_data(b"a\n");
                sink.copy_data(b"b\n");
                "COPY 2".to_string()
            }
            "sleep" => {
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                while !self.cancel.load(Ordering::SeqCst) {
                    if std::time::Instant::now() > deadline {
                        return Err(PgError::internal("sleep was never cancelled"));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                return Err(PgError::query_canceled());
            }
            "notice" => {
                sink.notice(PgError::notice(
                    sqlstate::SUCCESSFUL_COMPLETION,
                    "hello notice",
                ));
                "DO".to_string()
            }
            "setapp" => {
                sink.parameter_status("application_name", "changed");
                "SET".to_string()
            }
            _ if s.starts_with("rows ") => {
                let n: i32 = s[5..]
                    .trim()
                    .parse()
                    .map_err(|_| PgError::syntax("bad count"))?;
                for i in 1..=n {
                    sink.row(&[Value::Int4(i), text(&format!("row {i}"))])?;
                }
                format!("SELECT {n}")
            }
            _ if s.starts_with("big ") => {
                let n: i32 = s[4..]
                    .trim()
                    .parse()
                    .map_err(|_| PgError::syntax("bad count"))?;
                let v = text(&"x".repeat(1024));
                for _ in 0..n {
                    sink.row(std::slice::from_ref(&v))?;
                }
                format!("SELECT {n}")
            }
            _ if s.starts_with("echo") => {
                sink.row(params)?;
                "SELECT 1".to_string()
            }
            other => return Err(PgError::syntax(format!("unknown mock command {other}"))),
        };
        Ok(ExecOutcome::Complete(tag))
    }

    fn copy_in_data(&mut self, copy: &mut CopyIn, data: &[u8]) -> PgResult<()> {
        if data.windows(3).any(|w| w == b"BAD") {
            return Err(PgError::new(
                sqlstate::BAD_COPY_FILE_FORMAT,
                "bad copy data",
            ));
        }
        if let Some(n) = copy.state.downcast_mut::<usize>() {
            *n += data.iter().filter(|&&b| b == b'\n').count();
        }
        Ok(())
    }

    fn copy_in_done(&mut self, copy: CopyIn) -> PgResult<String> {
        let n = copy.state.downcast_ref::<usize>().copied().unwrap_or(0);
        Ok(format!("COPY {n}"))
    }

    fn copy_in_fail(&mut self, _copy: CopyIn, message: &str) -> PgError {
        PgError::new(
            sqlstate::QUERY_CANCELED,
            format!("COPY from stdin failed: {message}"),
        )
    }

    fn begin_implicit(&mut self) {
        self.log("begin_implicit");
    }

    fn end_implicit(&mut self, ok: bool) -> PgResult<()> {
        self.log(format!("end_implicit {ok}"));
        Ok(())
    }

    fn on_error(&mut self) {
        self.log("on_error");
        if self.status == TxStatus::InBlock {
            self.status = TxStatus::Failed;
        }
    }

    fn tx_status(&self) -> TxStatus {
        self.status
    }

    fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }
}

struct MockFactory {
    log: Arc<Mutex<Log>>,
    max_message_size: usize,
}

impl BackendFactory for MockFactory {
    type Backend = Mock;
    fn authentication(
        &self,
        params: &[(String, String)],
        conn: ConnectionInfo,
    ) -> PgResult<AuthRequest> {
        let user = params
            .iter()
            .find(|(k, _)| k == "user")
            .map(|(_, v)| v.as_str())
            .unwrap_or("");
        let with = |method, secret: Option<String>| AuthRequest {
            method,
            secret,
            ..AuthRequest::trust()
        };
        // Users named after a method log in with it; their password is "pw".
        Ok(match user {
            "intruder" => {
                return Err(PgError::new(
                    sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                    format!(
                        "no pg_hba.conf entry for host \"{}\", user \"intruder\"",
                        conn.peer.map(|p| p.ip().to_string()).unwrap_or_default()
                    ),
                ))
            }
            "scram" => with(
                AuthMethod::ScramSha256,
                Some(protocol::scram::Verifier::new("pw", 16).to_string()),
            ),
            "scram_unknown" => with(AuthMethod::ScramSha256, None),
            "md5" => with(
                AuthMethod::Md5,
                Some(protocol::md5::md5_verifier("pw", "md5")),
            ),
            "md5_scram" => with(
                AuthMethod::Md5,
                Some(protocol::scram::Verifier::new("pw", 16).to_string()),
            ),
            "password" => with(
                AuthMethod::Password,
                Some(protocol::scram::Verifier::new("pw", 16).to_string()),
            ),
            _ => AuthRequest::trust(),
        })
    }
    fn connect(
        &self,
        params: &[(String, String)],
        _conn: crate::backend::ConnectionInfo,
    ) -> PgResult<Mock> {
        if params.iter().any(|(k, v)| k == "user" && v == "reject") {
            return Err(PgError::new(
                sqlstate::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
            ));
        }
        Ok(Mock {
            status: TxStatus::Idle,
            cancel: Arc::new(AtomicBool::new(false)),
            log: self.log.clone(),
        })
    }
    fn parameter_statuses(&self, params: &[(String, String)]) -> Vec<(String, String)> {
        let app = params
            .iter()
            .find(|(k, _)| k == "application_name")
            .map(|(_, v)| v.clone());
        vec![
            ("server_version".into(), "15.4".into()),
            ("client_encoding".into(), "UTF8".into()),
            ("application_name".into(), app.unwrap_or_default()),
        ]
    }
    fn max_message_size(&self) -> usize {
        self.max_message_size
    }
}

/// A running mock server; shuts down on drop.
struct TestServer {
    addr: std::net::SocketAddr,
    log: Arc<Mutex<Log>>,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    async fn start() -> TestServer {
        let cores = super::SessionCores::new(2, Default::default()).unwrap();
        TestServer::start_on(cores).await
    }

    /// A server whose sessions run on `cores`.
    async fn start_on(cores: Arc<super::SessionCores>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Log::default()));
        let (tx, rx) = oneshot::channel();
        let factory = MockFactory {
            log: log.clone(),
            max_message_size: 1 << 20,
        };
        let shutdown = async move {
            let _ = rx.await;
        };
        let handle = tokio::spawn(super::serve_on(
            factory,
            listener.into(),
            shutdown,
            None,
            cores,
        ));
        TestServer {
            addr,
            log,
            stop: Some(tx),
            handle: Some(handle),
        }
    }

    async fn client(&self) -> Client {
        Client::connect(
            self.addr,
            &[
                ("user", "test"),
                ("database", "db"),
                ("application_name", "t"),
            ],
        )
        .await
        .unwrap()
    }

    async fn pg(&self) -> tokio_postgres::Client {
        let conf = format!(
            "host=127.0.0.1 port={} user=test dbname=db",
            self.addr.port()
        );
        let (client, conn) = tokio_postgres::connect(&conf, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
    }

    async fn shutdown(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            tokio::time::timeout(Duration::from_secs(20), h)
                .await
                .expect("serve returns")
                .unwrap()
                .unwrap();
        }
    }

    fn events(&self) -> Vec<String> {
        self.log.lock().events.clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_reports_parameters_and_key() {
    let srv = TestServer::start().await;
    let c = srv.client().await;
    assert_eq!(c.parameter("server_version"), Some("15.4"));
    assert_eq!(c.parameter("application_name"), Some("t"));
    assert!(c.backend_key().is_some());
    assert_eq!(c.tx_status(), b'I');
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_request_answered_n_then_startup() {
    let srv = TestServer::start().await;
    let mut stream = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    use tokio::io::AsyncReadExt;
    let mut b = BytesMut::new();
    FrontendMessage::SslRequest.encode(&mut b).unwrap();
    stream.write_all(&b).await.unwrap();
    let mut n = [0u8; 1];
    stream.read_exact(&mut n).await.unwrap();
    assert_eq!(&n, b"N");
    let mut c = Client::startup(stream, &[("user", "x")]).await.unwrap();
    assert_eq!(
        c.query_rows("rows 1").await.unwrap(),
        vec![vec![Some("1".into()), Some("row 1".into())]]
    );
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_session_gets_fatal() {
    let srv = TestServer::start().await;
    let err = Client::connect(srv.addr, &[("user", "reject")])
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), Some(sqlstate::TOO_MANY_CONNECTIONS));
    srv.shutdown().await;
}

/// Each password method: the right password logs in, a wrong one (and a
/// user without a verifier) gets 28P01 with the same message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_methods() {
    let srv = TestServer::start().await;
    for user in ["scram", "md5", "md5_scram", "password"] {
        let mut c = Client::connect(srv.addr, &[("user", user), ("password", "pw")])
            .await
            .unwrap_or_else(|e| panic!("{user} logs in: {e}"));
        assert!(c.simple_query("rows 1").await.is_ok(), "{user} served");
        let err = Client::connect(srv.addr, &[("user", user), ("password", "wrong")])
            .await
            .err()
            .expect("wrong password refused");
        assert_eq!(err.code(), Some(sqlstate::INVALID_PASSWORD), "{user}");
        let ClientError::Server(f) = err else {
            panic!()
        };
        assert_eq!(
            f.message(),
            format!("password authentication failed for user \"{user}\"")
        );
    }
    let err = Client::connect(srv.addr, &[("user", "scram_unknown"), ("password", "pw")])
        .await
        .err()
        .expect("no verifier refused");
    assert_eq!(err.code(), Some(sqlstate::INVALID_PASSWORD));
    srv.shutdown().await;
}

/// The authentication hook runs before any backend is made: a client it
/// refuses gets its FATAL (28000) although `connect` would have let it in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_hook_refuses_before_connect() {
    let srv = TestServer::start().await;
    let err = Client::connect(srv.addr, &[("user", "intruder")])
        .await
        .err()
        .expect("refused");
    assert_eq!(
        err.code(),
        Some(sqlstate::INVALID_AUTHORIZATION_SPECIFICATION)
    );
    let mut c = srv.client().await;
    assert!(
        c.simple_query("rows 1").await.is_ok(),
        "others still served"
    );
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_query_rows_errors_and_implicit_transaction() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    let r = c.simple_query("rows 2; rows 1").await.unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].columns, vec!["n", "t"]);
    assert_eq!(r[0].rows.len(), 2);
    assert_eq!(r[0].tag, "SELECT 2");
    assert_eq!(
        r[1].rows,
        vec![vec![Some("1".into()), Some("row 1".into())]]
    );

    srv.log.lock().events.clear();
    let e = c.simple_query("rows 1; fail; rows 2").await.unwrap_err();
    assert_eq!(e.code(), Some(sqlstate::SYNTAX_ERROR));
    let ev = srv.events();
    assert_eq!(
        ev,
        vec![
            "begin_implicit",
            "execute rows 1",
            "execute fail",
            "on_error",
            "end_implicit false"
        ]
    );

    // Empty query.
    c.send(FrontendMessage::Query("  ".into())).await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(msgs[0], BackendMessage::EmptyQueryResponse);

    // A parse error.
    assert_eq!(
        c.simple_query("badparse").await.unwrap_err().code(),
        Some(sqlstate::SYNTAX_ERROR)
    );

    // Transaction block states in ReadyForQuery.
    c.simple_query("begin").await.unwrap();
    assert_eq!(c.tx_status(), b'T');
    assert!(c.simple_query("fail").await.is_err());
    assert_eq!(c.tx_status(), b'E');
    assert_eq!(
        c.simple_query("rows 1").await.unwrap_err().code(),
        Some(sqlstate::IN_FAILED_SQL_TRANSACTION)
    );
    c.simple_query("rollback").await.unwrap();
    assert_eq!(c.tx_status(), b'I');

    // Notices and ParameterStatus from the executor.
    c.simple_query("notice").await.unwrap();
    assert_eq!(c.take_notices()[0].message(), "hello notice");
    c.simple_query("setapp").await.unwrap();
    assert_eq!(c.parameter("application_name"), Some("changed"));
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_postgres_simple_and_extended_binary() {
    let srv = TestServer::start().await;
    let pg = srv.pg().await;
    let msgs = pg.simple_query("rows 3").await.unwrap();
    let rows: Vec<_> = msgs
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(1).unwrap().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(rows, vec!["row 1", "row 2", "row 3"]);

    // Extended protocol, binary parameters and results.
    use tokio_postgres::types::Type;
    let st = pg
        .prepare_typed("echo $1 $2 $3", &[Type::INT4, Type::TEXT, Type::INT8])
        .await
        .unwrap();
    assert_eq!(st.params(), &[Type::INT4, Type::TEXT, Type::INT8]);
    assert_eq!(st.columns().len(), 3);
    let row = pg
        .query_one(&st, &[&42i32, &"héllo", &-7i64])
        .await
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), 42);
    assert_eq!(row.get::<_, &str>(1), "héllo");
    assert_eq!(row.get::<_, i64>(2), -7);
    // NULL parameter.
    let row = pg
        .query_one(&st, &[&None::<i32>, &"x", &1i64])
        .await
        .unwrap();
    assert_eq!(row.get::<_, Option<i32>>(0), None);

    // Unnamed statements via query().
    let rows = pg.query("rows 4", &[]).await.unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3].get::<_, i32>(0), 4);
    assert_eq!(rows[3].get::<_, &str>(1), "row 4");

    // Errors in extended mode; the session stays usable.
    let e = pg.query("fail", &[]).await.unwrap_err();
    assert_eq!(e.code().unwrap().code(), sqlstate::SYNTAX_ERROR);
    assert_eq!(pg.query("rows 1", &[]).await.unwrap().len(), 1);
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portal_suspension_hands_out_chunks() {
    let srv = TestServer::start().await;
    let mut pg = srv.pg().await;
    let tx = pg.transaction().await.unwrap();
    let portal = tx.bind("rows 5", &[]).await.unwrap();
    let a = tx.query_portal(&portal, 2).await.unwrap();
    let b = tx.query_portal(&portal, 2).await.unwrap();
    let c = tx.query_portal(&portal, 2).await.unwrap();
    let d = tx.query_portal(&portal, 2).await.unwrap();
    assert_eq!((a.len(), b.len(), c.len(), d.len()), (2, 2, 1, 0));
    assert_eq!(c[0].get::<_, i32>(0), 5);
    tx.commit().await.unwrap();
    srv.shutdown().await;
}

/// A statement's text-format RowDescription is encoded once and reused;
/// portals of the same statement bound with other result formats still
/// describe their own, and the cached one stays text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portal_row_descriptions_follow_each_binds_formats() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    c.feed(FrontendMessage::Parse {
        name: "r".into(),
        query: "rows 1".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    let cases: [&[i16]; 5] = [&[], &[1], &[0, 1], &[0], &[]];
    for (i, formats) in cases.iter().enumerate() {
        let portal = format!("p{i}");
        c.feed(FrontendMessage::Bind(
            Bind::new(&portal, "r", &[], &[], formats).unwrap(),
        ))
        .await
        .unwrap();
        c.feed(FrontendMessage::Describe {
            target: Target::Portal,
            name: portal,
        })
        .await
        .unwrap();
    }
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    let described: Vec<Vec<i16>> = msgs
        .iter()
        .filter_map(|m| match m {
            BackendMessage::RowDescription(f) => Some(f.iter().map(|f| f.format).collect()),
            _ => None,
        })
        .collect();
    assert_eq!(
        described,
        vec![vec![0, 0], vec![1, 1], vec![0, 1], vec![0, 0], vec![0, 0]],
        "{msgs:?}"
    );

    // A bad result format code is still refused at Bind.
    c.feed(FrontendMessage::Bind(
        Bind::new("", "r", &[], &[], &[2]).unwrap(),
    ))
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert!(
        msgs.iter().any(|m| matches!(m, BackendMessage::ErrorResponse(e) if e.code() == sqlstate::PROTOCOL_VIOLATION)),
        "{msgs:?}"
    );
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_raw_flow_describe_close_and_errors() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    // Parse/Describe/Bind/Execute/Close/Sync on a named statement.
    c.feed(FrontendMessage::Parse {
        name: "s1".into(),
        query: "echo $1".into(),
        param_types: vec![23],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Describe {
        target: Target::Statement,
        name: "s1".into(),
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("p1", "s1", &[0], &[Some(&b"17"[..])], &[]).unwrap(),
    ))
    .await
    .unwrap();
    c.feed(FrontendMessage::Describe {
        target: Target::Portal,
        name: "p1".into(),
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Execute {
        portal: "p1".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Close {
        target: Target::Statement,
        name: "s1".into(),
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    let kinds: Vec<String> = msgs
        .iter()
        .map(|m| format!("{m:?}").chars().take(12).collect())
        .collect();
    assert!(
        matches!(msgs[0], BackendMessage::ParseComplete),
        "{kinds:?}"
    );
    assert_eq!(msgs[1], BackendMessage::ParameterDescription(vec![23]));
    assert!(matches!(msgs[2], BackendMessage::RowDescription(_)));
    assert!(matches!(msgs[3], BackendMessage::BindComplete));
    assert!(matches!(msgs[4], BackendMessage::RowDescription(_)));
    assert_eq!(
        msgs[5],
        BackendMessage::DataRow(vec![Some(Bytes::from_static(b"17"))])
    );
    assert_eq!(msgs[6], BackendMessage::CommandComplete("SELECT 1".into()));
    assert_eq!(msgs[7], BackendMessage::CloseComplete);
    assert_eq!(msgs[8], BackendMessage::ReadyForQuery(b'I'));

    // Duplicate named statement: 42P05; then everything until Sync is skipped.
    c.feed(FrontendMessage::Parse {
        name: "d".into(),
        query: "rows 1".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Parse {
        name: "d".into(),
        query: "rows 1".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("", "d", &[], &[], &[]).unwrap(),
    ))
    .await
    .unwrap();
    c.feed(FrontendMessage::Execute {
        portal: "".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(
        error_code(&msgs),
        Some(sqlstate::DUPLICATE_PREPARED_STATEMENT)
    );

    // Bind with the wrong parameter count.
    c.feed(FrontendMessage::Parse {
        name: "".into(),
        query: "echo $1 $2".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("", "", &[], &[Some(&b"x"[..])], &[]).unwrap(),
    ))
    .await
    .unwrap();
    c.feed(FrontendMessage::Execute {
        portal: "".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    let err = msgs
        .iter()
        .find_map(|m| match m {
            BackendMessage::ErrorResponse(f) => Some(f.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(err.code(), sqlstate::PROTOCOL_VIOLATION);
    assert_eq!(
        err.message(),
        "bind message supplies 1 parameters, but prepared statement \"\" requires 2"
    );

    // Missing statement and portal.
    c.feed(FrontendMessage::Describe {
        target: Target::Statement,
        name: "nope".into(),
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    assert_eq!(
        error_code(&until_ready(&mut c).await),
        Some(sqlstate::INVALID_SQL_STATEMENT_NAME)
    );
    c.feed(FrontendMessage::Execute {
        portal: "nope".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    assert_eq!(
        error_code(&until_ready(&mut c).await),
        Some(sqlstate::INVALID_CURSOR_NAME)
    );

    // Multiple commands in Parse.
    c.feed(FrontendMessage::Parse {
        name: "".into(),
        query: "rows 1; rows 2".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    assert_eq!(
        error_code(&until_ready(&mut c).await),
        Some(sqlstate::SYNTAX_ERROR)
    );

    // Empty statement: EmptyQueryResponse at Execute.
    c.feed(FrontendMessage::Parse {
        name: "".into(),
        query: "".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("", "", &[], &[], &[]).unwrap(),
    ))
    .await
    .unwrap();
    c.feed(FrontendMessage::Describe {
        target: Target::Portal,
        name: "".into(),
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Execute {
        portal: "".into(),
        max_rows: 0,
    })
    .await
    .unwrap();
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(
        msgs,
        vec![
            BackendMessage::ParseComplete,
            BackendMessage::BindComplete,
            BackendMessage::NoData,
            BackendMessage::EmptyQueryResponse,
            BackendMessage::ReadyForQuery(b'I')
        ]
    );
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_in_and_out() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    let tag = c
        .copy_in("copy in", &[b"1\ta\n2\tb\n", b"3\tc\n"])
        .await
        .unwrap();
    assert_eq!(tag, "COPY 3");
    // Many small CopyData messages in one write (batched into one call).
    let chunks: Vec<&[u8]> = (0..1000).map(|_| &b"x\ty\n"[..]).collect();
    assert_eq!(c.copy_in("copy in", &chunks).await.unwrap(), "COPY 1000");
    // A bad chunk fails the COPY; the rest of the data is ignored.
    let e = c
        .copy_in("copy in", &[b"1\n", b"BAD\n", b"3\n"])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(sqlstate::BAD_COPY_FILE_FORMAT));
    // CopyFail from the client.
    c.send(FrontendMessage::Query("copy in".into()))
        .await
        .unwrap();
    assert!(matches!(
        c.recv().await.unwrap(),
        BackendMessage::CopyInResponse { .. }
    ));
    c.send(FrontendMessage::CopyFail("client says no".into()))
        .await
        .unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(error_code(&msgs), Some(sqlstate::QUERY_CANCELED));
    // COPY TO STDOUT.
    let (data, tag) = c.copy_out("copy out").await.unwrap();
    assert_eq!(data, b"a\nb\n");
    assert_eq!(tag, "COPY 2");
    assert_eq!(c.query_rows("rows 1").await.unwrap().len(), 1);
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_result_streams() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    let rows = c.query_rows("big 3000").await.unwrap();
    assert_eq!(rows.len(), 3000);
    assert!(rows
        .iter()
        .all(|r| r[0].as_deref().map(|s| s.len()) == Some(1024)));
    srv.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn works_on_current_thread_runtime() {
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    assert_eq!(c.query_rows("big 500").await.unwrap().len(), 500);
    assert_eq!(c.copy_in("copy in", &[b"1\n"]).await.unwrap(), "COPY 1");
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_stops_a_running_statement() {
    let srv = TestServer::start().await;
    let pg = srv.pg().await;
    let token = pg.cancel_token();
    let running = tokio::spawn(async move {
        let r = pg.simple_query("sleep").await;
        (
            r.map(|_| ())
                .map_err(|e| e.code().map(|c| c.code().to_string())),
            pg,
        )
    });
    // Cancel until it lands (the query may not have started yet).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !running.is_finished() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "cancel never took effect"
        );
        token.cancel_query(tokio_postgres::NoTls).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (res, pg) = running.await.unwrap();
    assert_eq!(res, Err(Some(sqlstate::QUERY_CANCELED.to_string())));
    // A stale flag does not cancel the next statement.
    assert_eq!(pg.query("rows 2", &[]).await.unwrap().len(), 2);
    // A wrong key is ignored.
    let mut c = srv.client().await;
    let (pid, key) = c.backend_key().unwrap();
    protocol::client::cancel_request(srv.addr, pid, key.wrapping_add(1))
        .await
        .unwrap();
    assert_eq!(c.query_rows("rows 1").await.unwrap().len(), 1);
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_ends_only_that_connection() {
    let srv = TestServer::start().await;
    let mut good = srv.client().await;

    // 2 GB length prefix.
    let mut c = srv.client().await;
    let conn = c.connection_mut();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(i32::MAX);
    conn.feed_raw(&b);
    conn.flush().await.unwrap();
    assert_eq!(
        expect_fatal(conn, sqlstate::PROTOCOL_VIOLATION)
            .await
            .message(),
        "invalid message length"
    );

    // Over max_message_size (1 MiB in these tests).
    let mut c = srv.client().await;
    let conn = c.connection_mut();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32((2 << 20) + 4);
    conn.feed_raw(&b);
    conn.flush().await.unwrap();
    assert_eq!(
        expect_fatal(conn, sqlstate::PROTOCOL_VIOLATION)
            .await
            .message(),
        "invalid message length"
    );

    // Unknown message type.
    let mut c = srv.client().await;
    let conn = c.connection_mut();
    conn.feed_raw(b"z\0\0\0\x04");
    conn.flush().await.unwrap();
    assert_eq!(
        expect_fatal(conn, sqlstate::PROTOCOL_VIOLATION)
            .await
            .message(),
        "invalid frontend message type 122"
    );

    // Wrong protocol version at startup.
    let stream = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
    let mut conn = protocol::client::Connection::new(stream);
    let mut b = BytesMut::new();
    b.put_i32(9);
    b.put_i32(2 << 16);
    b.put_u8(0);
    conn.feed_raw(&b);
    conn.flush().await.unwrap();
    assert_eq!(
        expect_fatal(&mut conn, sqlstate::FEATURE_NOT_SUPPORTED)
            .await
            .message(),
        "unsupported frontend protocol 2.0: server supports 3.0 to 3.0"
    );

    // Random bytes as a startup packet and after startup.
    for seed in 0..20u32 {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(12345);
        let bytes: Vec<u8> = (0..64)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let stream = tokio::net::TcpStream::connect(srv.addr).await.unwrap();
        let mut conn = protocol::client::Connection::new(stream);
        conn.feed_raw(&bytes);
        conn.flush().await.unwrap();
        // Whatever comes back, the connection ends (error or close) without
        // hanging: the random "length" is either invalid or unfinished, so
        // close our side to finish it.
        let _ = conn.stream_mut().shutdown().await;
        while tokio::time::timeout(Duration::from_secs(20), conn.recv())
            .await
            .expect("no hang")
            .is_ok()
        {}
        let mut c = srv.client().await;
        c.connection_mut().feed_raw(&bytes);
        let _ = c.connection_mut().flush().await;
        let _ = c.connection_mut().stream_mut().shutdown().await;
        while tokio::time::timeout(Duration::from_secs(20), c.recv())
            .await
            .expect("no hang")
            .is_ok()
        {}
    }

    // Invalid UTF-8 in a Query: 22021, the connection continues.
    let mut c = srv.client().await;
    let conn = c.connection_mut();
    let mut b = BytesMut::new();
    b.put_u8(b'Q');
    b.put_i32(4 + 4);
    b.put_slice(b"a\xff(\0");
    conn.feed_raw(&b);
    conn.flush().await.unwrap();
    let msgs = until_ready(&mut c).await;
    assert_eq!(
        error_code(&msgs),
        Some(sqlstate::CHARACTER_NOT_IN_REPERTOIRE)
    );
    assert_eq!(c.query_rows("rows 1").await.unwrap().len(), 1);

    // The first session never noticed.
    assert_eq!(good.query_rows("rows 2").await.unwrap().len(), 2);
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_terminates_sessions_with_57p01() {
    let srv = TestServer::start().await;
    let mut idle = srv.client().await;
    let addr = srv.addr;
    srv.shutdown().await;
    let m = idle.recv().await.unwrap();
    let BackendMessage::ErrorResponse(f) = m else {
        panic!("{m:?}")
    };
    assert_eq!(f.code(), sqlstate::ADMIN_SHUTDOWN);
    assert_eq!(
        f.message(),
        "terminating connection due to administrator command"
    );
    assert_eq!(f.severity(), "FATAL");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "listener closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_interrupts_a_running_statement() {
    let srv = TestServer::start().await;
    let mut busy = srv.client().await;
    busy.send(FrontendMessage::Query("sleep".into()))
        .await
        .unwrap();
    // Wait until the statement runs.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !srv.events().iter().any(|e| e == "execute sleep") {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    srv.shutdown().await;
    let mut codes = Vec::new();
    while let Ok(m) = busy.recv().await {
        if let BackendMessage::ErrorResponse(f) = m {
            codes.push(f.code().to_string());
        }
    }
    assert_eq!(
        codes,
        vec![sqlstate::ADMIN_SHUTDOWN.to_string()],
        "only the FATAL, no 57014"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_statement_leaves_other_sessions_served() {
    // A statement that keeps its thread busy must not keep the runtime's
    // I/O driver and timers from the other sessions: while it runs, another
    // session's query is answered, and the long one then ends by the
    // cancel (57014), not by the mock's own 20 s limit (XX000). Run inline,
    // a long statement would stall everything whenever the idle worker is
    // parked off the driver; several rounds make that interleaving likely.
    let srv = TestServer::start().await;
    let mut other = srv.client().await;
    for round in 1..=10 {
        let mut busy = srv.client().await;
        let (pid, key) = busy.backend_key().unwrap();
        busy.send(FrontendMessage::Query("sleep".into()))
            .await
            .unwrap();
        while srv
            .events()
            .iter()
            .filter(|e| *e == "execute sleep")
            .count()
            < round
        {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert_eq!(
            other.query_rows("rows 1").await.unwrap().len(),
            1,
            "round {round}: another session answered while the long one runs"
        );
        protocol::client::cancel_request(srv.addr, pid, key)
            .await
            .unwrap();
        let mut codes = Vec::new();
        loop {
            match busy.recv().await.unwrap() {
                BackendMessage::ErrorResponse(f) => codes.push(f.code().to_string()),
                BackendMessage::ReadyForQuery(_) => break,
                _ => {}
            }
        }
        assert_eq!(
            codes,
            vec![sqlstate::QUERY_CANCELED.to_string()],
            "round {round}: the long statement ended by the cancel"
        );
    }
    srv.shutdown().await;
}

#[tokio::test(flavor = "current_thread")]
async fn idle_connection_state_is_small() {
    // The connection task's future (its whole state machine) plus the two
    // idle buffers must stay well under the 64 KiB per-connection budget.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let factory = MockFactory {
        log: Arc::new(Mutex::new(Log::default())),
        max_message_size: 1 << 20,
    };
    let shared = Arc::new(super::postgres::Shared {
        factory,
        cancel: Arc::new(super::CancelRegistry::new()),
        replication: None,
        stop: super::stop::Stop::new(),
        service: tokio::runtime::Handle::current(),
        live: super::postgres::Live::new(),
    });
    let cores = super::SessionCores::new(1, Default::default()).unwrap();
    let seat = cores.place();
    let live = shared.live.enter();
    let fut = super::postgres::run_connection(
        shared,
        crate::stream::ClientStream::Tcp(stream),
        Some(addr),
        rx,
        seat,
        live,
    );
    let size = std::mem::size_of_val(&fut);
    let total = size + super::postgres::READ_BUF_INITIAL + super::postgres::WRITE_BUF_INITIAL;
    eprintln!("connection future {size} bytes, total {total}");
    assert!(
        total < 32 * 1024,
        "connection future {size} bytes, total {total}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portal_tags_match_postgres() {
    // PostgreSQL 15: the last chunk's CommandComplete counts that chunk's
    // rows; executing a finished portal again gives "SELECT 0".
    let srv = TestServer::start().await;
    let mut c = srv.client().await;
    c.feed(FrontendMessage::Parse {
        name: "".into(),
        query: "rows 5".into(),
        param_types: vec![],
    })
    .await
    .unwrap();
    c.feed(FrontendMessage::Bind(
        Bind::new("", "", &[], &[], &[]).unwrap(),
    ))
    .await
    .unwrap();
    for _ in 0..4 {
        c.feed(FrontendMessage::Execute {
            portal: "".into(),
            max_rows: 2,
        })
        .await
        .unwrap();
    }
    c.send(FrontendMessage::Sync).await.unwrap();
    let msgs = until_ready(&mut c).await;
    let shape: Vec<String> = msgs
        .iter()
        .map(|m| match m {
            BackendMessage::DataRow(_) => "D".to_string(),
            BackendMessage::PortalSuspended => "s".to_string(),
            BackendMessage::CommandComplete(t) => t.clone(),
            BackendMessage::ParseComplete => "1".to_string(),
            BackendMessage::BindComplete => "2".to_string(),
            BackendMessage::ReadyForQuery(_) => "Z".to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        vec!["1", "2", "D", "D", "s", "D", "D", "s", "D", "SELECT 1", "SELECT 0", "Z"]
    );
    srv.shutdown().await;
}

/// Runs psql against the mock server with `script` on stdin.
async fn psql(
    addr: std::net::SocketAddr,
    args: &[&str],
    stdin: &str,
) -> Option<std::process::Output> {
    use tokio::io::AsyncWriteExt as _;
    let mut cmd = tokio::process::Command::new("psql");
    cmd.args([
        "-X",
        "-h",
        "127.0.0.1",
        "-p",
        &addr.port().to_string(),
        "-U",
        "test",
        "-d",
        "db",
    ])
    .args(args)
    .env("PGCONNECT_TIMEOUT", "20")
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().ok()?; // psql not installed: skip
    let mut input = child.stdin.take()?;
    input.write_all(stdin.as_bytes()).await.ok()?;
    drop(input);
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    Some(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_psql_talks_to_the_session_loop() {
    let srv = TestServer::start().await;
    let Some(out) = psql(srv.addr, &["-A", "-t", "-c", "rows 3"], "").await else {
        eprintln!("psql not available, skipping");
        return;
    };
    assert!(
        out.status.success(),
        "psql -c: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1|row 1\n2|row 2\n3|row 3\n"
    );

    // A script on stdin with COPY FROM STDIN data inline, COPY TO STDOUT and
    // an error that does not stop the script.
    let script = "rows 1;\ncopy in;\n1\ta\n2\tb\n\\.\ncopy out;\nfail;\nrows 2;\n";
    let out = psql(srv.addr, &["-A", "-t", "-f", "-"], script)
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // psql 15 sends the `\.` line as CopyData too (a COPY parser stops at
    // it); the mock only counts lines, hence 3.
    assert_eq!(
        stdout, "1|row 1\nCOPY 3\na\nb\n1|row 1\n2|row 2\n",
        "stderr: {stderr}"
    );
    assert!(stderr.contains("mock failure"), "{stderr}");
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_sessions_spread_over_the_cores() {
    // 1. Two cores, a balancer that acts on any gap; four clients land
    //    0, 1, 0, 1 by placement.
    let balance = super::cores::Balance {
        tick: Duration::from_millis(20),
        min_gap: 0.0,
    };
    let cores = super::SessionCores::new(2, balance).unwrap();
    let srv = TestServer::start_on(cores.clone()).await;
    let mut clients = Vec::new();
    for _ in 0..4 {
        let c = srv.pg().await;
        c.simple_query("rows 1").await.unwrap();
        clients.push(c);
    }
    let sessions =
        |cores: &super::SessionCores| cores.stats().iter().map(|s| s.sessions).collect::<Vec<_>>();
    assert_eq!(sessions(&cores), vec![2, 2], "placed evenly");

    // 2. The two on core 1 leave: both busy sessions share core 0.
    let c3 = clients.pop().unwrap();
    let c2 = clients.pop().unwrap();
    let c1 = clients.pop().unwrap();
    let c0 = clients.pop().unwrap();
    drop((c1, c3));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while sessions(&cores) != vec![2, 0] {
        assert!(
            tokio::time::Instant::now() < deadline,
            "sessions did not end: {:?}",
            cores.stats()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // 3. Each prepares a statement, then both keep core 0 busy until the
    //    balancer has moved one of them to core 1.
    let mut busy = Vec::new();
    for c in [c0, c2] {
        let stmt = c.prepare("echo $1").await.unwrap();
        let cores = cores.clone();
        busy.push(tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
            while cores.stats()[1].moved_in == 0 {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no move: {:?}",
                    cores.stats()
                );
                c.simple_query("rows 50").await.unwrap();
            }
            (c, stmt)
        }));
    }
    let mut after = Vec::new();
    for b in busy {
        after.push(b.await.unwrap());
    }
    assert_eq!(
        sessions(&cores),
        vec![1, 1],
        "one session moved to the idle core"
    );

    // 4. The moved session kept its state: prepared statements still run.
    for (c, stmt) in &after {
        let rows = c.query(stmt, &[&"moved"]).await.unwrap();
        assert_eq!(rows.len(), 1, "prepared statement survives the move");
    }
    srv.shutdown().await;
}
