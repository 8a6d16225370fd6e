//! A small async client of the v3 protocol: connect, startup, simple query,
//! COPY, and raw message send/receive. The standby's walreceiver uses it
//! (startup with `replication=true`, then raw messages for CopyBoth), and
//! tests use it where tokio-postgres hides the bytes.
//!
//! Not a general driver: trust, cleartext-password, md5 and SCRAM-SHA-256
//! authentication (SCRAM-SHA-256-PLUS over TLS when the server offers it),
//! TLS as libpq's `sslmode` asks ([`super::tls`]), results in text format
//! as `Option<String>`.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, ToSocketAddrs};
use tokio_util::codec::{Decoder, Encoder};

use super::codec::{ClientCodec, ProtocolError};
use super::messages::{BackendMessage, ErrorFields, FieldInfo, FrontendMessage};
use super::scram;
use super::sockopt::Keepalives;
use super::tls::{ClientTls, SslMode};

fn need_password(password: &Option<String>) -> Result<&str, ClientError> {
    password.as_deref().ok_or_else(|| {
        ClientError::Unexpected("server asked for a password and none was given".into())
    })
}

/// What can go wrong on the client side.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed or a message was malformed.
    #[error("{0}")]
    Protocol(#[from] ProtocolError),
    /// The server reported an error (ErrorResponse).
    #[error("{0}")]
    Server(ErrorFields),
    /// The server closed the connection.
    #[error("server closed the connection unexpectedly")]
    Closed,
    /// TLS negotiation or handshake failed (libpq's wording).
    #[error("{0}")]
    Tls(String),
    /// The server sent a message that does not fit the exchange.
    #[error("unexpected message from server: {0}")]
    Unexpected(String),
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> ClientError {
        ClientError::Protocol(ProtocolError::Io(e))
    }
}

impl ClientError {
    /// The SQLSTATE of a server error.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Server(f) => Some(f.code()),
            _ => None,
        }
    }
}

/// A failed [`Client::connect_ssl`]: the error, and whether `prefer`
/// tries again in clear (TLS was in use and failed or was refused).
struct SslFailure {
    error: ClientError,
    retry_in_clear: bool,
}

/// The result of one statement of a simple query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryResult {
    /// Column names (empty for statements without rows).
    pub columns: Vec<String>,
    /// The rows, text format, `None` for NULL.
    pub rows: Vec<Vec<Option<String>>>,
    /// The CommandComplete tag ("" for an empty query).
    pub tag: String,
}

/// A TCP connection with TCP_NODELAY and, if asked, keepalives.
async fn tcp_connect(
    addr: impl ToSocketAddrs,
    keepalives: Option<&Keepalives>,
) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    if let Some(k) = keepalives {
        use std::os::fd::AsRawFd;
        crate::sockopt::set_keepalives(stream.as_raw_fd(), k)?;
    }
    Ok(stream)
}

/// A connected, authenticated session.
pub struct Client {
    conn: Connection,
    parameters: HashMap<String, String>,
    backend_key: Option<(i32, i32)>,
    tx_status: u8,
    notices: Vec<ErrorFields>,
}

impl Client {
    /// Connects to `addr` and runs the startup exchange with `params`
    /// (`user`, `database`, `application_name`, `replication` …). A
    /// `password` entry answers the server's password request (cleartext,
    /// md5 or SCRAM-SHA-256) and is not sent as a startup parameter.
    pub async fn connect(
        addr: impl ToSocketAddrs,
        params: &[(&str, &str)],
    ) -> Result<Client, ClientError> {
        Client::connect_with(addr, params, None).await
    }

    /// [`Client::connect`] with `SO_KEEPALIVE` and the given keepalive
    /// options on the socket (libpq's `keepalives*`; None: none).
    async fn connect_with(
        addr: impl ToSocketAddrs,
        params: &[(&str, &str)],
        keepalives: Option<&Keepalives>,
    ) -> Result<Client, ClientError> {
        let stream = tcp_connect(addr, keepalives).await?;
        Client::startup(stream, params).await
    }

    /// [`Client::connect`] with TLS as `tls.mode` asks; `host` is the
    /// name (or address) the server's certificate must carry for
    /// `verify-full`. libpq's fallbacks, one retry on a new connection
    /// each: `allow` starts in clear and tries TLS when the server
    /// refuses the session (an ErrorResponse, e.g. a `hostssl`-only
    /// pg_hba.conf); `prefer` starts with SSLRequest, stays in clear on
    /// the same connection when the server answers `N`, and tries again
    /// in clear when the handshake fails or the server refuses the
    /// session over TLS (e.g. a `hostnossl` line). `keepalives`: libpq's
    /// `keepalives*` options for every socket this opens (None: off).
    pub async fn connect_tls(
        addr: impl ToSocketAddrs + Clone,
        host: &str,
        params: &[(&str, &str)],
        tls: &ClientTls,
        keepalives: Option<&Keepalives>,
    ) -> Result<Client, ClientError> {
        let ka = keepalives;
        let config = match (&tls.config, tls.mode) {
            (None, _) | (_, SslMode::Disable) => {
                return Client::connect_with(addr, params, ka).await
            }
            (Some(c), _) => c.clone(),
        };
        match tls.mode {
            SslMode::Allow => match Client::connect_with(addr.clone(), params, ka).await {
                Err(ClientError::Server(_)) => {
                    Client::connect_ssl(addr, host, params, config, tls.mode, ka)
                        .await
                        .map_err(|f| f.error)
                }
                r => r,
            },
            SslMode::Prefer => {
                match Client::connect_ssl(addr.clone(), host, params, config, tls.mode, ka).await {
                    Err(f) if f.retry_in_clear => Client::connect_with(addr, params, ka).await,
                    r => r.map_err(|f| f.error),
                }
            }
            _ => Client::connect_ssl(addr, host, params, config, tls.mode, ka)
                .await
                .map_err(|f| f.error),
        }
    }

    /// One connection that starts with SSLRequest.
    async fn connect_ssl(
        addr: impl ToSocketAddrs,
        host: &str,
        params: &[(&str, &str)],
        config: std::sync::Arc<rustls::ClientConfig>,
        mode: SslMode,
        keepalives: Option<&Keepalives>,
    ) -> Result<Client, SslFailure> {
        let plain = |error: ClientError| SslFailure {
            error,
            retry_in_clear: false,
        };
        let mut stream = tcp_connect(addr, keepalives)
            .await
            .map_err(|e| plain(e.into()))?;
        // SSLRequest: length 8, code 1234.5679.
        stream
            .write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
            .await
            .map_err(|e| plain(e.into()))?;
        let mut answer = [0u8; 1];
        stream
            .read_exact(&mut answer)
            .await
            .map_err(|e| plain(e.into()))?;
        let socket = match answer[0] {
            b'S' => {
                let name =
                    rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|_| {
                        plain(ClientError::Unexpected(format!(
                            "invalid host name for TLS: \"{host}\""
                        )))
                    })?;
                let tls = tokio_rustls::TlsConnector::from(config)
                    .connect(name, stream)
                    .await
                    .map_err(|e| SslFailure {
                        error: ClientError::Tls(format!("SSL error: {e}")),
                        retry_in_clear: mode == SslMode::Prefer,
                    })?;
                Socket::Tls(Box::new(tls))
            }
            b'N' if !mode.requires_tls() => {
                return Client::startup_on(Socket::Plain(stream), params)
                    .await
                    .map_err(plain)
            }
            b'N' => {
                return Err(plain(ClientError::Tls(
                    "server does not support SSL, but SSL was required".into(),
                )))
            }
            b => {
                return Err(plain(ClientError::Tls(format!(
                    "received invalid response to SSL negotiation: {}",
                    b as char
                ))))
            }
        };
        Client::startup_on(socket, params)
            .await
            .map_err(|error| SslFailure {
                retry_in_clear: mode == SslMode::Prefer && matches!(error, ClientError::Server(_)),
                error,
            })
    }

    /// Runs the startup exchange on an open stream.
    pub async fn startup(
        stream: TcpStream,
        params: &[(&str, &str)],
    ) -> Result<Client, ClientError> {
        Client::startup_on(Socket::Plain(stream), params).await
    }

    /// Runs the startup exchange on an open (possibly TLS) socket.
    pub async fn startup_on(
        socket: Socket,
        params: &[(&str, &str)],
    ) -> Result<Client, ClientError> {
        let binding = socket.end_point_hash();
        let mut conn = Connection::on(socket);
        let password = params
            .iter()
            .find(|(k, _)| *k == "password")
            .map(|(_, v)| v.to_string());
        let startup_params = params
            .iter()
            .filter(|(k, _)| *k != "password")
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        conn.send(&FrontendMessage::Startup {
            params: startup_params,
        })
        .await?;
        let mut client = Client {
            conn,
            parameters: HashMap::new(),
            backend_key: None,
            tx_status: b'I',
            notices: Vec::new(),
        };
        let mut scram_state: Option<scram::ScramClient> = None;
        loop {
            match client.recv().await? {
                BackendMessage::AuthenticationOk => {}
                BackendMessage::AuthenticationCleartextPassword => {
                    let pw = need_password(&password)?;
                    let mut body = pw.as_bytes().to_vec();
                    body.push(0);
                    client
                        .send(FrontendMessage::PasswordMessage(Bytes::from(body)))
                        .await?;
                }
                BackendMessage::AuthenticationMD5Password { salt } => {
                    let pw = need_password(&password)?;
                    let user = params
                        .iter()
                        .find(|(k, _)| *k == "user")
                        .map(|(_, v)| *v)
                        .unwrap_or("");
                    let verifier = super::md5::md5_verifier(pw, user);
                    let mut body = super::md5::md5_response(&verifier, salt).into_bytes();
                    body.push(0);
                    client
                        .send(FrontendMessage::PasswordMessage(Bytes::from(body)))
                        .await?;
                }
                BackendMessage::AuthenticationSASL { mechanisms } => {
                    let pw = need_password(&password)?;
                    if !mechanisms.iter().any(|m| m == scram::SCRAM_SHA_256) {
                        return Err(ClientError::Unexpected(format!(
                            "none of the server's SASL authentication mechanisms are supported: {mechanisms:?}"
                        )));
                    }
                    // Over TLS: bind when the server offers -PLUS, else
                    // say we could have ('y', so a stripped offer fails).
                    let plus = mechanisms.iter().any(|m| m == scram::SCRAM_SHA_256_PLUS);
                    let cb = match &binding {
                        Some(Some(hash)) if plus => scram::ClientBinding::EndPoint(hash.clone()),
                        Some(_) => scram::ClientBinding::Unused,
                        None => scram::ClientBinding::None,
                    };
                    let s = scram::ScramClient::with_binding(pw, cb);
                    let first = s.client_first();
                    let mut body = BytesMut::new();
                    body.extend_from_slice(s.mechanism().as_bytes());
                    body.extend_from_slice(&[0]);
                    body.extend_from_slice(&(first.len() as i32).to_be_bytes());
                    body.extend_from_slice(first.as_bytes());
                    client
                        .send(FrontendMessage::PasswordMessage(body.freeze()))
                        .await?;
                    scram_state = Some(s);
                }
                BackendMessage::AuthenticationSASLContinue(data) => {
                    let s = scram_state.as_mut().ok_or_else(|| {
                        ClientError::Unexpected("SASLContinue without SASL".into())
                    })?;
                    let fin = s
                        .server_first(&data)
                        .map_err(|e| ClientError::Unexpected(format!("SCRAM: {e:?}")))?;
                    client
                        .send(FrontendMessage::PasswordMessage(Bytes::from(
                            fin.into_bytes(),
                        )))
                        .await?;
                }
                BackendMessage::AuthenticationSASLFinal(data) => {
                    let s = scram_state
                        .as_ref()
                        .ok_or_else(|| ClientError::Unexpected("SASLFinal without SASL".into()))?;
                    s.server_final(&data)
                        .map_err(|e| ClientError::Unexpected(format!("SCRAM: {e:?}")))?;
                }
                BackendMessage::ParameterStatus { name, value } => {
                    client.parameters.insert(name, value);
                }
                BackendMessage::BackendKeyData { pid, key } => {
                    client.backend_key = Some((pid, key))
                }
                BackendMessage::NoticeResponse(n) => client.notices.push(n),
                BackendMessage::ErrorResponse(e) => return Err(ClientError::Server(e)),
                BackendMessage::ReadyForQuery(s) => {
                    client.tx_status = s;
                    return Ok(client);
                }
                other => return Err(ClientError::Unexpected(format!("{other:?} during startup"))),
            }
        }
    }

    /// A run-time parameter the server reported (ParameterStatus).
    pub fn parameter(&self, name: &str) -> Option<&str> {
        self.parameters.get(name).map(|s| s.as_str())
    }

    /// The (pid, secret key) from BackendKeyData, for [`cancel_request`].
    pub fn backend_key(&self) -> Option<(i32, i32)> {
        self.backend_key
    }

    /// The last ReadyForQuery status: `I`, `T` or `E`.
    pub fn tx_status(&self) -> u8 {
        self.tx_status
    }

    /// Notices received so far; drains them.
    pub fn take_notices(&mut self) -> Vec<ErrorFields> {
        std::mem::take(&mut self.notices)
    }

    /// Buffers a message without sending it.
    pub async fn feed(&mut self, msg: FrontendMessage) -> Result<(), ClientError> {
        self.conn.feed(&msg)
    }

    /// Sends what is buffered.
    pub async fn flush(&mut self) -> Result<(), ClientError> {
        self.conn.flush().await
    }

    /// Sends one message now.
    pub async fn send(&mut self, msg: FrontendMessage) -> Result<(), ClientError> {
        self.conn.send(&msg).await
    }

    /// Receives the next message, whatever it is ([`ClientError::Closed`] at
    /// end of stream). ReadyForQuery updates [`Client::tx_status`].
    pub async fn recv(&mut self) -> Result<BackendMessage, ClientError> {
        let m = self.conn.recv().await?;
        if let BackendMessage::ReadyForQuery(s) = m {
            self.tx_status = s;
        }
        Ok(m)
    }

    /// Runs a simple query (possibly several statements) and returns one
    /// result per statement. On an ErrorResponse, reads on to
    /// ReadyForQuery and returns the error. COPY statements are refused
    /// (use [`Client::copy_in`], [`Client::copy_out`] or raw messages).
    pub async fn simple_query(&mut self, sql: &str) -> Result<Vec<QueryResult>, ClientError> {
        self.send(FrontendMessage::Query(sql.to_string())).await?;
        let mut results = Vec::new();
        let mut current = QueryResult::default();
        let mut error = None;
        loop {
            match self.recv().await? {
                BackendMessage::RowDescription(fields) => {
                    current.columns = fields.into_iter().map(|f: FieldInfo| f.name).collect();
                }
                BackendMessage::DataRow(values) => {
                    current.rows.push(values.iter().map(text).collect())
                }
                BackendMessage::CommandComplete(tag) => {
                    current.tag = tag;
                    results.push(std::mem::take(&mut current));
                }
                BackendMessage::EmptyQueryResponse => results.push(std::mem::take(&mut current)),
                BackendMessage::ErrorResponse(e) => error = Some(e),
                BackendMessage::NoticeResponse(n) => self.notices.push(n),
                BackendMessage::ParameterStatus { name, value } => {
                    self.parameters.insert(name, value);
                }
                BackendMessage::ReadyForQuery(_) => break,
                BackendMessage::CopyInResponse { .. } => {
                    self.send(FrontendMessage::CopyFail(
                        "COPY not supported by simple_query".into(),
                    ))
                    .await?;
                }
                other @ (BackendMessage::CopyOutResponse { .. }
                | BackendMessage::CopyBothResponse { .. }) => {
                    return Err(ClientError::Unexpected(format!(
                        "{other:?} in simple_query"
                    )));
                }
                BackendMessage::CopyData(_) | BackendMessage::CopyDone => {}
                other => {
                    return Err(ClientError::Unexpected(format!(
                        "{other:?} in simple_query"
                    )))
                }
            }
        }
        match error {
            Some(e) => Err(ClientError::Server(e)),
            None => Ok(results),
        }
    }

    /// The rows of a single-statement query (convenience for tests).
    pub async fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, ClientError> {
        let mut results = self.simple_query(sql).await?;
        Ok(results.pop().map(|r| r.rows).unwrap_or_default())
    }

    /// Runs `COPY … FROM STDIN` sending `chunks` as CopyData; returns the tag.
    pub async fn copy_in(&mut self, sql: &str, chunks: &[&[u8]]) -> Result<String, ClientError> {
        self.send(FrontendMessage::Query(sql.to_string())).await?;
        let mut tag = None;
        let mut error = None;
        loop {
            match self.recv().await? {
                BackendMessage::CopyInResponse { .. } => {
                    for c in chunks {
                        self.feed(FrontendMessage::CopyData(Bytes::copy_from_slice(c)))
                            .await?;
                    }
                    self.send(FrontendMessage::CopyDone).await?;
                }
                BackendMessage::CommandComplete(t) => tag = Some(t),
                BackendMessage::ErrorResponse(e) => error = Some(e),
                BackendMessage::NoticeResponse(n) => self.notices.push(n),
                BackendMessage::ReadyForQuery(_) => break,
                BackendMessage::RowDescription(_)
                | BackendMessage::DataRow(_)
                | BackendMessage::EmptyQueryResponse => {}
                other => return Err(ClientError::Unexpected(format!("{other:?} in copy_in"))),
            }
        }
        match (error, tag) {
            (Some(e), _) => Err(ClientError::Server(e)),
            (None, Some(t)) => Ok(t),
            (None, None) => Err(ClientError::Unexpected(
                "COPY ended without a command tag".into(),
            )),
        }
    }

    /// Runs `COPY … TO STDOUT`; returns the data and the tag.
    pub async fn copy_out(&mut self, sql: &str) -> Result<(Vec<u8>, String), ClientError> {
        self.send(FrontendMessage::Query(sql.to_string())).await?;
        let mut data = Vec::new();
        let mut tag = String::new();
        let mut error = None;
        loop {
            match self.recv().await? {
                BackendMessage::CopyOutResponse { .. } | BackendMessage::CopyDone => {}
                BackendMessage::CopyData(d) => data.extend_from_slice(&d),
                BackendMessage::CommandComplete(t) => tag = t,
                BackendMessage::ErrorResponse(e) => error = Some(e),
                BackendMessage::NoticeResponse(n) => self.notices.push(n),
                BackendMessage::ReadyForQuery(_) => break,
                other => return Err(ClientError::Unexpected(format!("{other:?} in copy_out"))),
            }
        }
        match error {
            Some(e) => Err(ClientError::Server(e)),
            None => Ok((data, tag)),
        }
    }

    /// Sends Terminate and closes the connection.
    pub async fn terminate(mut self) -> Result<(), ClientError> {
        self.send(FrontendMessage::Terminate).await?;
        Ok(())
    }

    /// The raw connection, for callers that speak a sub-protocol themselves.
    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

fn text(v: &Option<Bytes>) -> Option<String> {
    v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned())
}

/// Sends a CancelRequest for the session with this key on a new connection
/// (the server answers nothing and closes it).
pub async fn cancel_request(
    addr: impl ToSocketAddrs,
    pid: i32,
    key: i32,
) -> Result<(), ClientError> {
    let stream = TcpStream::connect(addr).await?;
    let mut conn = Connection::new(stream);
    conn.send(&FrontendMessage::CancelRequest { pid, key })
        .await?;
    // Wait for the server to close, so the cancel has been processed when
    // this returns.
    while conn.recv().await.is_ok() {}
    Ok(())
}

/// A socket with the client codec: buffered writes, framed reads. Used
/// without `Framed` so that no Sink machinery is needed.
pub struct Connection {
    stream: Socket,
    codec: ClientCodec,
    rbuf: BytesMut,
    wbuf: BytesMut,
}

/// A client connection's socket: plain TCP or TLS over it.
pub enum Socket {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Socket {
    /// None without TLS; over TLS the server certificate's
    /// `tls-server-end-point` hash, if its algorithm has one.
    pub fn end_point_hash(&self) -> Option<Option<Vec<u8>>> {
        match self {
            Socket::Plain(_) => None,
            Socket::Tls(t) => Some(
                t.get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .and_then(|c| super::x509::end_point_hash(c)),
            ),
        }
    }

    /// True over TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Socket::Tls(_))
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_flush(cx),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Socket::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Socket::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl Connection {
    /// Wraps a connected stream.
    pub fn new(stream: TcpStream) -> Connection {
        Connection::on(Socket::Plain(stream))
    }

    /// Wraps a connected (possibly TLS) socket.
    pub fn on(stream: Socket) -> Connection {
        Connection {
            stream,
            codec: ClientCodec::default(),
            rbuf: BytesMut::with_capacity(8192),
            wbuf: BytesMut::with_capacity(8192),
        }
    }
    /// Buffers a message.
    pub fn feed(&mut self, msg: &FrontendMessage) -> Result<(), ClientError> {
        self.codec.encode(msg, &mut self.wbuf)?;
        Ok(())
    }
    /// Appends raw bytes to the output (tests use it to send garbage).
    pub fn feed_raw(&mut self, bytes: &[u8]) {
        self.wbuf.extend_from_slice(bytes);
    }
    /// Writes what is buffered.
    pub async fn flush(&mut self) -> Result<(), ClientError> {
        self.stream.write_all(&self.wbuf).await?;
        self.wbuf.clear();
        self.stream.flush().await?;
        Ok(())
    }
    /// Buffers and writes one message.
    pub async fn send(&mut self, msg: &FrontendMessage) -> Result<(), ClientError> {
        self.feed(msg)?;
        self.flush().await
    }
    /// The next backend message; [`ClientError::Closed`] at end of stream.
    pub async fn recv(&mut self) -> Result<BackendMessage, ClientError> {
        loop {
            if let Some(m) = self.codec.decode(&mut self.rbuf)? {
                return Ok(m);
            }
            if self.rbuf.capacity() - self.rbuf.len() < 1024 {
                self.rbuf.reserve(8192);
            }
            if self.stream.read_buf(&mut self.rbuf).await? == 0 {
                return Err(ClientError::Closed);
            }
        }
    }
    /// The socket.
    pub fn stream_mut(&mut self) -> &mut Socket {
        &mut self.stream
    }
}

/// Helpers for tests that drive the protocol by hand with this client
/// (`server::tests`, `tests/protocol_e2e.rs`): one copy, so the unit and the
/// end-to-end tests read replies the same way. They panic with what they
/// saw — test code only — and never wait longer than [`testing::TIMEOUT`].
///
/// The TAP harness's blocking raw client (`tap-tests/src/raw.rs`) stays on
/// its own: the harness is a black box that also runs against real
/// PostgreSQL, so it links nothing of the server.
pub mod testing {
    use std::time::Duration;

    use super::{Client, ClientError, Connection};
    use crate::messages::{BackendMessage, ErrorFields};

    /// The longest a helper waits for one message.
    pub const TIMEOUT: Duration = Duration::from_secs(30);

    /// Reads messages up to and including the next ReadyForQuery.
    pub async fn until_ready(c: &mut Client) -> Vec<BackendMessage> {
        let mut out = Vec::new();
        loop {
            let m = tokio::time::timeout(TIMEOUT, c.recv())
                .await
                .unwrap_or_else(|_| panic!("no ReadyForQuery within {TIMEOUT:?}; got {out:?}"))
                .unwrap_or_else(|e| panic!("connection failed: {e}; got {out:?}"));
            let done = matches!(m, BackendMessage::ReadyForQuery(_));
            out.push(m);
            if done {
                return out;
            }
        }
    }

    /// The first ErrorResponse among `msgs`.
    pub fn first_error(msgs: &[BackendMessage]) -> Option<&ErrorFields> {
        msgs.iter().find_map(|m| match m {
            BackendMessage::ErrorResponse(f) => Some(f),
            _ => None,
        })
    }

    /// The SQLSTATE of the first ErrorResponse among `msgs`.
    pub fn error_code(msgs: &[BackendMessage]) -> Option<&str> {
        first_error(msgs).map(ErrorFields::code)
    }

    /// Expects a FATAL ErrorResponse with SQLSTATE `code`, then the end of
    /// the connection; returns the error.
    pub async fn expect_fatal(c: &mut Connection, code: &str) -> ErrorFields {
        let m = tokio::time::timeout(TIMEOUT, c.recv())
            .await
            .expect("an ErrorResponse in time")
            .expect("an ErrorResponse before the connection ends");
        let BackendMessage::ErrorResponse(f) = m else {
            panic!("expected ErrorResponse, got {m:?}")
        };
        assert_eq!(f.code(), code, "{f}");
        assert_eq!(f.severity(), "FATAL", "{f}");
        let end = tokio::time::timeout(TIMEOUT, c.recv())
            .await
            .expect("the connection ends in time");
        assert!(
            matches!(
                end,
                Err(ClientError::Closed) | Err(ClientError::Protocol(_))
            ),
            "closed after FATAL: {end:?}"
        );
        f
    }
}
