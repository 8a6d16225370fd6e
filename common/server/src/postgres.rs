//! One client connection from startup to Terminate (PostgreSQL's
//! `BackendInitialize` + `PostgresMain`): the startup exchange, then a loop
//! that reads a message, runs it against the [`Backend`] and buffers the
//! answer.
//!
//! ```text
//!  [SSLRequest ──▶ S, TLS handshake]  (one deadline: authentication_timeout)
//!  startup ──▶ AuthenticationOk, ParameterStatus*, BackendKeyData, Z
//!  loop:  Q  ──▶ [T] D* C | I | E  … Z            (one write per Query)
//!         P/B/D/E/C/H … S ──▶ 1 2 t T n D* s C 3 … Z (one write per Sync)
//!         E with COPY FROM STDIN ──▶ G, then d* c|f ──▶ C | E
//! ```
//!
//! Invariants:
//! * Output goes into one buffer, written when the client must see it: at
//!   ReadyForQuery (end of a Query, Sync), on Flush, before waiting for COPY
//!   data, and mid-statement when a result grows past [`FLUSH_ABOVE`] (only
//!   on a multi-threaded runtime, where the statement runs in
//!   `block_in_place` and may block on the socket).
//! * An idle session holds no I/O buffers: while it waits for its client
//!   its read and output buffers are back in its thread's pool (`bufpool`),
//!   and it waits for readability, not on a read into a buffer. A busy
//!   session takes them back per message batch (no allocation). Buffers
//!   that grew past [`BUF_SHRINK_ABOVE`] are freed, not pooled. No thread
//!   per connection.
//! * Backend calls are synchronous and may block (lock waits, WAL flush) or
//!   run long (scans, DDL, COPY). A call that may run long leaves the
//!   runtime worker first ([`run_blocking`], `block_in_place`); only short,
//!   bounded calls — statements whose [`StatementInfo::runs_briefly`] is
//!   true, parsing a short text, ending an implicit transaction — run
//!   inline on the connection's task ([`run_call`]), and their few real
//!   waits (row locks, WAL flush, `pg_sleep`) hand the worker off
//!   themselves through [`pgtypes::blocking::run_blocking`]. Why it matters: a
//!   worker busy in a long call does not poll tokio's I/O driver, and when
//!   the other workers are parked on their condition variable rather than
//!   on the driver, no socket or timer of any session is serviced until the
//!   call returns — every other client of the node stalls behind one long
//!   statement. Handing the worker off per call is not free either (a
//!   thread hand-off per statement, which select-only `-M prepared` feels
//!   most: docs/benchmarks.md), hence the split.
//! * After an error in an extended-protocol message everything up to Sync is
//!   discarded. Stray CopyData/CopyDone/CopyFail (a client still sending
//!   after a COPY failed) are ignored, as PostgreSQL does.
//! * Nothing here panics on client input; framing errors end only this
//!   connection, after a FATAL ErrorResponse.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::stream::{peer_text, ClientStream};
use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use tokio_util::codec::Decoder;
use tracing::{debug, error, info};

use super::backend::{AuthMethod, AuthRequest, Backend, BackendFactory, StatementInfo};
use super::backend::{CopyIn, ExecOutcome, FieldDescription, ResultSink};
use super::cancel::{CancelKey, CancelRegistry};
use super::cores::Seat;
use super::stop::{Stop, StopWatch};
use super::values::{check_format, decode_param, write_value};
use pgtypes::blocking::run_blocking;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::txstatus::TxStatus;
use pgtypes::value::Value;
use protocol::codec::{MessageError, ProtocolError, ServerCodec};
use protocol::messages::*;

/// Read buffer size (the same as the output buffer's, so that one pool
/// serves both).
pub const READ_BUF_INITIAL: usize = 8192;
/// Output buffer size.
pub const WRITE_BUF_INITIAL: usize = 8192;
/// Buffers larger than this are replaced by small ones when empty.
pub const BUF_SHRINK_ABOVE: usize = 64 * 1024;
/// A statement's output is written to the socket once it exceeds this.
pub const FLUSH_ABOVE: usize = 256 * 1024;
/// How long a client may take to send its startup packet.
/// How long we try to deliver the final FATAL at shutdown.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(5);

/// What every connection of one server shares.
pub(crate) struct Shared<F> {
    /// Makes backends.
    pub factory: F,
    /// Cancel keys of live sessions.
    pub cancel: Arc<CancelRegistry>,
    /// Where `replication=true` connections go (None: normal sessions).
    pub replication: Option<Arc<dyn super::ReplicationHandler>>,
    /// The server's stop signal, as sessions wait for it.
    pub stop: Arc<Stop>,
    /// The runtime of the accept loop, where replication connections go.
    pub service: tokio::runtime::Handle,
    /// Connections not yet ended, for shutdown to wait on.
    pub live: Arc<Live>,
}

/// The number of connections not yet ended. A connection's task may move
/// between cores (and a replication connection to the service runtime), so
/// shutdown waits on this count rather than on task handles.
pub(crate) struct Live {
    count: AtomicUsize,
    zero: tokio::sync::Notify,
}

/// One live connection; counted until dropped (also when its task panics).
pub(crate) struct LiveGuard(Arc<Live>);

impl Live {
    pub(crate) fn new() -> Arc<Live> {
        Arc::new(Live {
            count: AtomicUsize::new(0),
            zero: tokio::sync::Notify::new(),
        })
    }

    /// Counts a new connection.
    pub(crate) fn enter(self: &Arc<Self>) -> LiveGuard {
        self.count.fetch_add(1, Ordering::SeqCst);
        LiveGuard(self.clone())
    }

    /// Connections not yet ended.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Waits until every connection has ended.
    pub(crate) async fn all_ended(&self) {
        loop {
            let ended = self.zero.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            ended.await;
        }
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.zero.notify_waiters();
        }
    }
}

/// Per-thread pools of idle I/O buffers. A session gives its (empty) read
/// and output buffers back whenever it waits for its client and takes
/// them again when the client speaks: idle sessions hold no buffers, and a
/// busy one pays a thread-local push and pop per round trip, not an
/// allocation. A buffer that grew past [`BUF_SHRINK_ABOVE`] is freed
/// instead, so one big result does not stay pooled.
mod bufpool {
    use std::cell::RefCell;

    use bytes::BytesMut;

    use super::{BUF_SHRINK_ABOVE, READ_BUF_INITIAL, WRITE_BUF_INITIAL};

    /// Buffers kept per thread (of both kinds together).
    const KEEP: usize = 64;

    thread_local! {
        static POOL: RefCell<Vec<BytesMut>> = const { RefCell::new(Vec::new()) };
    }

    /// An empty buffer with room for at least `cap` bytes.
    pub(super) fn take(cap: usize) -> BytesMut {
        let found = POOL.with(|p| {
            let mut p = p.borrow_mut();
            let i = p.iter().rposition(|b| b.capacity() >= cap)?;
            Some(p.swap_remove(i))
        });
        found.unwrap_or_else(|| BytesMut::with_capacity(cap))
    }

    /// Returns `buf` (emptied) to the pool, or frees it.
    pub(super) fn give(mut buf: BytesMut) {
        buf.clear();
        // A read buffer's messages were split off its front (the codec
        // hands them out as `Bytes` of the same allocation), leaving a view
        // of what remains; once they are all dropped the whole allocation
        // is this handle's again. Without this the pool would hold the
        // shrunken view and the next `take` would allocate a fresh buffer,
        // twice per statement (the buffer and its shared header).
        let _ = buf.try_reclaim(READ_BUF_INITIAL.max(WRITE_BUF_INITIAL));
        if buf.capacity() == 0 || buf.capacity() > BUF_SHRINK_ABOVE {
            return;
        }
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < KEEP {
                p.push(buf);
            }
        });
    }
}

/// Longest query text parsed inline: parsing and planning cost grows with
/// the text, and a multi-megabyte INSERT … VALUES must not hold a worker.
const PARSE_INLINE_MAX: usize = 8 * 1024;

/// Runs a backend call: inline when `brief` (bounded work whose waits hand
/// the worker off themselves), else through [`run_blocking`]. See the
/// module doc for why long calls must not run inline.
fn run_call<R>(brief: bool, f: impl FnOnce() -> R) -> R {
    if brief {
        f()
    } else {
        run_blocking(f)
    }
}

/// What reading produced.
enum Input {
    Msg(FrontendMessage),
    Bad(MessageError),
    Eof,
    Shutdown,
    /// No message came within the wait limit given to [`Wire::read`].
    IdleTimeout,
    /// Standby replay signalled a recovery conflict while waiting
    /// ([`Wire::read_waking`] only).
    Interrupt,
}

/// Why a connection ends early.
enum Close {
    /// The socket failed or the client went away.
    Io(io::Error),
    /// A framing error: send it as FATAL, then close.
    Protocol(ProtocolError),
    /// Server shutdown: send 57P01, then close.
    Shutdown,
}

impl From<io::Error> for Close {
    fn from(e: io::Error) -> Close {
        Close::Io(e)
    }
}

impl From<ProtocolError> for Close {
    fn from(e: ProtocolError) -> Close {
        match e {
            ProtocolError::Io(e) => Close::Io(e),
            e => Close::Protocol(e),
        }
    }
}

/// The socket side of a connection: buffers, codec, shutdown signal.
struct Wire {
    stream: ClientStream,
    codec: ServerCodec,
    rbuf: BytesMut,
    out: BytesMut,
    /// A message decoded ahead (while batching CopyData) and not yet handled.
    pending: Option<Result<FrontendMessage, MessageError>>,
    /// The server's stop signal (see [`super::stop`]: no shared lock per wait).
    stop: StopWatch,
    /// The backend's `client_write_wait` report, taken once per
    /// connection (not per statement: no allocation on the hot path).
    write_wait: Option<Arc<dyn Fn(bool) + Send + Sync>>,
    /// True on a multi-thread runtime (a session core), where a statement
    /// may leave the async context to write a large result mid-way.
    multi_thread: bool,
    /// Parking the socket while idle ([`crate::park`]); None: never.
    parking: Option<Parking>,
    /// The socket's new descriptor after it came back from the parking
    /// lot, for the backend ([`Backend::socket_moved`]).
    moved_fd: Option<std::os::fd::RawFd>,
}

/// When a session parks its socket: after [`PARK_AFTER`] idle, while the
/// node holds at least `above` client sockets in its descriptor table
/// (live connections less parked ones).
struct Parking {
    lot: &'static crate::park::Lot,
    above: usize,
    live: Arc<Live>,
}

/// How long a session is idle before it parks its socket (when parking
/// is due): long enough that a client in a loop of statements never
/// parks between them.
const PARK_AFTER: Duration = Duration::from_millis(100);

impl Parking {
    fn due(&self) -> bool {
        held_sockets(&self.live, self.lot) >= self.above
    }
}

/// Client sockets the node holds in its descriptor table: live
/// connections less parked ones.
pub(crate) fn held_sockets(live: &Live, lot: &crate::park::Lot) -> usize {
    live.count().saturating_sub(lot.parked())
}

impl Wire {
    fn new(stream: ClientStream, codec: ServerCodec, stop: StopWatch) -> Wire {
        let multi_thread = matches!(
            tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()),
            Ok(tokio::runtime::RuntimeFlavor::MultiThread)
        );
        Wire {
            stream,
            codec,
            rbuf: BytesMut::new(),
            out: bufpool::take(WRITE_BUF_INITIAL),
            pending: None,
            stop,
            write_wait: None,
            multi_thread,
            parking: None,
            moved_fd: None,
        }
    }

    /// True when a complete message (or a decoded one) is already here:
    /// the session is not at an idle point.
    fn has_input(&self) -> bool {
        self.pending.is_some() || !self.rbuf.is_empty()
    }

    /// Checked after every message, so it must be cheap: one atomic load
    /// of a flag nobody writes until shutdown.
    fn shutting_down(&self) -> bool {
        self.stop.is_stopped()
    }

    async fn read(&mut self) -> Result<Input, ProtocolError> {
        self.read_within(None).await
    }

    /// The next message if it is already here (decoded ahead, or complete
    /// in the read buffer). The session loop asks this before building a
    /// [`Wire::read_waking`] future: an extended-protocol statement is
    /// four messages in one packet, and that future — its timers, its
    /// `select!` and their drops — cost more than decoding the message.
    fn buffered(&mut self) -> Result<Option<Input>, ProtocolError> {
        if let Some(p) = self.pending.take() {
            return Ok(Some(to_input(p)));
        }
        Ok(self.codec.decode(&mut self.rbuf)?.map(to_input))
    }

    /// [`Wire::read`], giving up with [`Input::IdleTimeout`] when the
    /// socket stays silent for `limit` (only time spent waiting on it
    /// counts; buffered messages come back at once).
    async fn read_within(&mut self, limit: Option<Duration>) -> Result<Input, ProtocolError> {
        self.read_waking(limit, None, false).await
    }

    /// [`Wire::read_within`] that also returns [`Input::Interrupt`] when
    /// `wake` is signalled (a standby snapshot conflict) before a message
    /// is complete. With `park`, a session idle for [`PARK_AFTER`] parks
    /// its socket when parking is due ([`Parking`]); the session's loop
    /// passes it, the reads inside a statement (COPY) do not.
    async fn read_waking(
        &mut self,
        limit: Option<Duration>,
        wake: Option<&tokio::sync::Notify>,
        park: bool,
    ) -> Result<Input, ProtocolError> {
        let woken = async {
            match wake {
                Some(w) => w.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(woken);
        let idle = async {
            match limit {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(idle);
        loop {
            if let Some(input) = self.buffered()? {
                return Ok(input);
            }
            if self.shutting_down() {
                return Ok(Input::Shutdown);
            }
            if self.rbuf.is_empty() && !self.stream.is_tls() {
                // A busy client's next statement is usually in the socket
                // already (it was sent while this one's answer was being
                // read): try it before handing the buffers back, so a
                // session that never waits keeps them instead of returning
                // and retaking both per statement. (`try_read_buf` makes no
                // system call while the runtime knows the socket is not
                // readable.)
                if self.rbuf.capacity() != 0 && self.rbuf.try_reclaim(READ_BUF_INITIAL) {
                    match self.stream.try_read_buf(&mut self.rbuf) {
                        Ok(0) => return Ok(Input::Eof),
                        Ok(_) => continue,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                // Idle: the buffers go back to the thread's pool while the
                // client is silent, so an idle session holds none. (A TLS
                // session keeps its read buffer and reads with `read_buf`:
                // socket readiness says nothing of plaintext rustls holds,
                // and rustls keeps record buffers of its own anyway.)
                bufpool::give(std::mem::take(&mut self.rbuf));
                if self.out.is_empty() {
                    bufpool::give(std::mem::take(&mut self.out));
                }
                let park_due = park && self.parking.as_ref().is_some_and(Parking::due);
                let park_timer = async {
                    if park_due {
                        tokio::time::sleep(PARK_AFTER).await
                    } else {
                        std::future::pending().await
                    }
                };
                let parking = tokio::select! {
                    biased;
                    _ = self.stop.wait_or_nudge() => {
                        if self.shutting_down() {
                            return Ok(Input::Shutdown);
                        }
                        // Nudged: parking may have become due.
                        continue;
                    }
                    r = self.stream.readable() => { r?; false }
                    _ = &mut idle, if limit.is_some() => return Ok(Input::IdleTimeout),
                    _ = &mut woken, if wake.is_some() => return Ok(Input::Interrupt),
                    () = park_timer, if park_due => true,
                };
                if parking {
                    // Idle and the node is short of descriptors: wait in
                    // the parking lot, with the same ways out.
                    let Some(lot) = self.parking.as_ref().map(|p| p.lot) else {
                        continue;
                    };
                    let Some((kind, fd)) = self.stream.take_for_park()? else {
                        continue;
                    };
                    let mut parked = match lot.park(fd) {
                        Ok(p) => p,
                        Err((fd, e)) => {
                            debug!("could not park an idle session's socket: {e}");
                            self.stream.unpark(kind, fd)?;
                            continue;
                        }
                    };
                    let mut back = None;
                    let early = tokio::select! {
                        biased;
                        _ = self.stop.wait() => Some(Input::Shutdown),
                        r = parked.wait() => {
                            back = Some(r);
                            None
                        }
                        _ = &mut idle, if limit.is_some() => Some(Input::IdleTimeout),
                        _ = &mut woken, if wake.is_some() => Some(Input::Interrupt),
                    };
                    let fd = match back {
                        Some(r) => r?,
                        None => parked.recall().await?,
                    };
                    self.stream.unpark(kind, fd)?;
                    self.moved_fd = self.stream.tcp_fd();
                    if let Some(input) = early {
                        return Ok(input);
                    }
                }
                self.rbuf = bufpool::take(READ_BUF_INITIAL);
                if self.out.capacity() == 0 {
                    self.out = bufpool::take(WRITE_BUF_INITIAL);
                }
                match self.stream.try_read_buf(&mut self.rbuf) {
                    Ok(0) => return Ok(Input::Eof),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
                continue;
            }
            if self.rbuf.capacity() - self.rbuf.len() < 512 {
                self.rbuf.reserve(READ_BUF_INITIAL);
            }
            tokio::select! {
                biased;
                _ = self.stop.wait() => return Ok(Input::Shutdown),
                r = self.stream.read_buf(&mut self.rbuf) => {
                    if r? == 0 {
                        return Ok(Input::Eof);
                    }
                }
                _ = &mut idle, if limit.is_some() => return Ok(Input::IdleTimeout),
                _ = &mut woken, if wake.is_some() => return Ok(Input::Interrupt),
            }
        }
    }

    /// Writes the output buffer.
    async fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            tokio::select! {
                biased;
                r = async {
                    self.stream.write_all(&self.out).await?;
                    self.stream.flush().await
                } => r?,
                _ = self.stop.wait() => {
                    return Err(io::Error::other("shutdown while writing to client"));
                }
            }
            self.out.clear();
        }
        if self.out.capacity() > BUF_SHRINK_ABOVE {
            self.out = bufpool::take(WRITE_BUF_INITIAL);
        }
        Ok(())
    }

    /// Runs the server side of a TLS handshake on this TCP connection and
    /// returns the wire over the TLS stream. Bytes already buffered stay
    /// (the caller refuses them: they came unencrypted).
    async fn start_tls(self, ctx: &crate::tls::TlsContext) -> io::Result<Wire> {
        let Wire {
            stream,
            codec,
            rbuf,
            out,
            pending,
            stop,
            write_wait,
            multi_thread,
            parking,
            moved_fd,
        } = self;
        let ClientStream::Tcp(tcp) = stream else {
            return Err(io::Error::other("TLS requested on a non-TCP socket"));
        };
        let tls = ctx
            .acceptor()
            .accept(crate::tls::TlsSocket::new(tcp))
            .await?;
        Ok(Wire {
            stream: ClientStream::Tls(Box::new(tls)),
            codec,
            rbuf,
            out,
            pending,
            stop,
            write_wait,
            multi_thread,
            parking,
            moved_fd,
        })
    }

    /// Best-effort final message before closing.
    async fn goodbye(&mut self, e: &PgError) {
        write_error(&mut self.out, e);
        let _ = tokio::time::timeout(GOODBYE_TIMEOUT, async {
            self.stream.write_all(&self.out).await?;
            self.stream.flush().await
        })
        .await;
        self.out.clear();
        let _ = tokio::time::timeout(GOODBYE_TIMEOUT, self.stream.shutdown()).await;
    }
}

fn to_input(item: Result<FrontendMessage, MessageError>) -> Input {
    match item {
        Ok(m) => Input::Msg(m),
        Err(e) => Input::Bad(e),
    }
}

/// Serves one accepted connection to its end. Never panics on input.
/// Runs on the connection's core (`seat`); `live` counts it until it ends.
pub(crate) async fn run_connection<F: BackendFactory>(
    shared: Arc<Shared<F>>,
    stream: ClientStream,
    peer: Option<SocketAddr>,
    shutdown: watch::Receiver<bool>,
    seat: Seat,
    live: LiveGuard,
) {
    // `shutdown` only travels on to a walsender (its API); the session
    // itself waits on `shared.stop`.
    let policy = shared.factory.connection_policy();
    let began = std::time::Instant::now();
    let received = match peer {
        Some(p) => format!("connection received: host={} port={}", p.ip(), p.port()),
        None => "connection received: host=[local]".to_string(),
    };
    if policy.log_connections {
        info!("{received}");
    } else {
        debug!("{received}");
    }
    let peer_s = peer_text(peer);
    let _ = stream.set_nodelay(true);
    let tcp_fd = stream.tcp_fd();
    if let Some(fd) = tcp_fd {
        // SO_KEEPALIVE and the server's values, before the startup packet:
        // a client that vanishes during authentication is found too.
        if let Err(e) = protocol::sockopt::set_keepalives(fd, &policy.keepalives) {
            debug!("could not set TCP keepalive options: {e}");
        }
    }
    let local = stream.local_addr();
    let stream_uid = stream.peer_uid();
    let mut wire = Wire::new(
        stream,
        ServerCodec::new(shared.factory.max_message_size()),
        shared.stop.subscribe(),
    );

    // Startup phase: the startup packet, a TLS handshake before it if the
    // client asks and TLS is on, all within authentication_timeout (a
    // client that stalls anywhere here is dropped at the deadline).
    let deadline = tokio::time::Instant::now() + policy.authentication_timeout;
    let mut tls: Option<Arc<crate::tls::TlsContext>> = None;
    let params = loop {
        match tokio::time::timeout_at(deadline, startup(&shared, &mut wire, tls.is_some())).await {
            Err(_) => {
                debug!("incomplete startup packet from {peer_s}");
                return;
            }
            Ok(Ok(Startup::Params(params))) => break params,
            Ok(Ok(Startup::Done)) => return,
            Ok(Ok(Startup::Tls(ctx))) => {
                let had_data = !wire.rbuf.is_empty();
                wire = match tokio::time::timeout_at(deadline, wire.start_tls(&ctx)).await {
                    Ok(Ok(w)) => w,
                    Ok(Err(e)) => {
                        info!("could not accept SSL connection: {e}");
                        return;
                    }
                    Err(_) => {
                        debug!("incomplete SSL handshake from {peer_s}");
                        return;
                    }
                };
                tls = Some(ctx);
                if had_data {
                    // Bytes that came with the SSLRequest were not
                    // encrypted: perhaps injected by a man in the middle.
                    let e = PgError::fatal(
                        sqlstate::PROTOCOL_VIOLATION,
                        "received unencrypted data after SSL request",
                    )
                    .with_detail("This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.");
                    finish(&mut wire, Close::Protocol(ProtocolError::Fatal(e)), &peer_s).await;
                    return;
                }
            }
            Ok(Err(close)) => {
                finish(&mut wire, close, &peer_s).await;
                return;
            }
        }
    };
    let ssl_info = wire.stream.tls().map(|t| Arc::new(crate::tls::ssl_info(t)));

    // Authentication (ClientAuthentication) comes first, for replication
    // connections too: pg_hba.conf decides the method, then the exchange.
    let conn_info = super::backend::ConnectionInfo {
        peer,
        peer_uid: stream_uid,
        local,
        ssl: ssl_info.is_some(),
        ssl_info,
        verifies_clients: tls.as_ref().is_some_and(|t| t.verifies_clients()),
        tcp_fd,
    };
    let request = match shared.factory.authentication(&params, conn_info.clone()) {
        Ok(r) => r,
        Err(e) => {
            info!("connection from {peer_s} rejected: {}", e.message);
            wire.goodbye(&fatal(e)).await;
            return;
        }
    };
    let user = startup_param(&params, "user").to_string();
    let left = policy
        .authentication_timeout
        .saturating_sub(began.elapsed());
    let binding = Binding {
        ssl: tls.is_some(),
        end_point: tls.as_ref().and_then(|t| t.end_point().map(|h| h.to_vec())),
    };
    match tokio::time::timeout(left, authenticate(&mut wire, &request, &user, &binding)).await {
        Ok(Ok(())) => {}
        Ok(Err(AuthFailure::Closed)) => return,
        Ok(Err(AuthFailure::Fatal(e))) => {
            wire.goodbye(&fatal(e)).await;
            return;
        }
        Err(_) => {
            let e = PgError::new(
                pgtypes::error::sqlstate::QUERY_CANCELED,
                "canceling authentication due to timeout",
            );
            info!("connection from {peer_s}: {}", e.message);
            wire.goodbye(&fatal(e)).await;
            return;
        }
    }
    let replication = super::is_replication_request(&params);
    if policy.log_connections {
        let mut line = if replication {
            format!("replication connection authorized: user={user}")
        } else {
            format!(
                "connection authorized: user={user} database={}",
                match startup_param(&params, "database") {
                    "" => user.as_str(),
                    d => d,
                }
            )
        };
        let app = startup_param(&params, "application_name");
        if !app.is_empty() {
            line.push_str(&format!(" application_name={app}"));
        }
        if let Some(ssl) = &conn_info.ssl_info {
            line.push_str(&format!(
                " SSL enabled (protocol={}, cipher={}, bits={})",
                ssl.version, ssl.cipher, ssl.bits
            ));
        }
        info!("{line}");
    }
    let farewell = policy.log_disconnections.then(|| Farewell {
        began,
        user: user.clone(),
        database: match startup_param(&params, "database") {
            "" => user.clone(),
            d => d.to_string(),
        },
        peer,
    });
    if let Some(e) = request.after {
        info!(
            "connection from {peer_s} refused after authentication: {}",
            e.message
        );
        wire.goodbye(&fatal(e)).await;
        return;
    }

    if let Some(handler) = &shared.replication {
        if super::is_replication_request(&params) {
            // A walsender is a long-running service, not a session: it runs
            // on the service runtime and leaves this core.
            drop(seat);
            let stream = match wire.stream.into_std() {
                Ok(s) => s,
                Err(e) => {
                    debug!("could not hand over replication connection from {peer_s}: {e}");
                    return;
                }
            };
            let handler = handler.clone();
            let buffered = wire.rbuf;
            // Not counted among the live connections: a primary's
            // walsenders outlive the sessions, to send the shutdown
            // checkpoint; the node waits for them after writing it
            // (`ReplicationState::num_walsenders`).
            drop(live);
            drop(shared.service.spawn(async move {
                match stream.into_tokio() {
                    Ok(stream) => {
                        let conn = super::ReplicationConnection {
                            stream,
                            buffered,
                            params,
                            peer,
                            shutdown,
                        };
                        handler.handle(conn).await;
                    }
                    Err(e) => {
                        debug!("could not register replication connection from {peer_s}: {e}")
                    }
                }
            }));
            return;
        }
    }

    // The backend. Making one is brief (a procarray slot, the session's
    // settings), so it runs inline: a hand-off per connection would halve
    // the accept rate.
    let backend = match shared.factory.connect(&params, conn_info) {
        Ok(b) => b,
        Err(e) => {
            let e = fatal(e);
            info!("connection from {peer_s} rejected: {e}");
            wire.goodbye(&e).await;
            return;
        }
    };
    let flag = backend.cancel_flag();
    let key = shared.cancel.register(flag.clone());
    let mut backend = backend;
    backend.set_backend_pid(key.pid);
    backend.set_terminator(wire.stop.terminator(flag.clone()));
    wire.write_wait = backend.client_write_wait();
    backend.enable_async_waits();
    wire.parking = crate::park::lot().map(|lot| Parking {
        lot,
        above: policy.park_above,
        live: shared.live.clone(),
    });
    let param = |k: &str| {
        params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    debug!(
        "connection authorized: user={} database={} application_name={} pid={}",
        param("user"),
        param("database"),
        param("application_name"),
        key.pid
    );

    let out = &mut wire.out;
    let _ = BackendMessage::AuthenticationOk.encode(out);
    for (name, value) in shared.factory.parameter_statuses(&params) {
        let value = backend.setting(&name).unwrap_or(value);
        let _ = write_parameter_status(out, &name, &value);
    }
    let _ = BackendMessage::BackendKeyData {
        pid: key.pid,
        key: key.key,
    }
    .encode(out);
    write_ready_for_query(out, backend.tx_status().byte());

    let conflict = backend.conflict_signal();
    let mut session = SessionLoop {
        wire,
        backend,
        cancel: flag,
        conflict,
        statements: NameMap::default(),
        portals: NameMap::default(),
        ignore_till_sync: false,
        spare_params: Vec::new(),
        seat,
    };
    if let Err(e) = session.wire.flush().await {
        finish(&mut session.wire, Close::Io(e), &peer_s).await;
        return;
    }
    // The session goes on as a task of its own on this core: this one's
    // state machine is sized for the startup phase (TLS handshake,
    // authentication exchanges) and would otherwise stay allocated for
    // the session's life — about 8 KiB per idle session.
    drop(tokio::spawn(drive(
        session,
        Owned {
            _key: key,
            peer: peer_s,
            farewell,
            _live: live,
        },
    )));
}

fn fatal(mut e: PgError) -> PgError {
    e.severity = pgtypes::error::Severity::Fatal;
    e
}

fn startup_param<'a>(params: &'a [(String, String)], name: &str) -> &'a str {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or("")
}

/// How an authentication exchange ended without success.
enum AuthFailure {
    /// The client went away (psql does this to prompt for a password).
    Closed,
    /// Send this FATAL and close.
    Fatal(PgError),
}

/// 28P01 for `user`, logged with its detail (which the client never sees:
/// no user enumeration).
fn password_failed(user: &str, detail: &str, req: &AuthRequest) -> AuthFailure {
    let line = req
        .hba_line
        .as_deref()
        .map(|l| format!("\n\tConnection matched {l}"))
        .unwrap_or_default();
    info!("password authentication failed for user \"{user}\"\nDETAIL:  {detail}{line}");
    AuthFailure::Fatal(PgError::new(
        sqlstate::INVALID_PASSWORD,
        format!("password authentication failed for user \"{user}\""),
    ))
}

/// Reads the client's next PasswordMessage body.
async fn read_password_message(wire: &mut Wire, expect: &str) -> Result<bytes::Bytes, AuthFailure> {
    match wire.read().await {
        Ok(Input::Msg(FrontendMessage::PasswordMessage(b))) => Ok(b),
        Ok(Input::Msg(other)) => Err(AuthFailure::Fatal(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            format!("expected {expect} response, got message type {other:?}"),
        ))),
        Ok(Input::Bad(e)) => Err(AuthFailure::Fatal(e.error)),
        Ok(Input::Shutdown) => Err(AuthFailure::Fatal(PgError::new(
            sqlstate::ADMIN_SHUTDOWN,
            "terminating connection due to administrator command",
        ))),
        Ok(_) | Err(_) => Err(AuthFailure::Closed),
    }
}

async fn send_auth(wire: &mut Wire, m: BackendMessage) -> Result<(), AuthFailure> {
    let _ = m.encode(&mut wire.out);
    wire.flush().await.map_err(|_| AuthFailure::Closed)
}

/// A cleartext password response: the text before its NUL.
fn cleartext(body: &[u8]) -> Result<&str, AuthFailure> {
    let text = body.strip_suffix(&[0]).unwrap_or(body);
    if text.contains(&0) {
        return Err(AuthFailure::Fatal(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            "invalid password packet size",
        )));
    }
    std::str::from_utf8(text).map_err(|_| {
        AuthFailure::Fatal(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            "invalid password packet",
        ))
    })
}

/// Runs the exchange `req` asks for (everything before AuthenticationOk,
/// which the caller sends: a walsender sends its own). Nothing here
/// panics on client input.
/// What SCRAM may bind to.
struct Binding {
    /// The connection uses TLS.
    ssl: bool,
    /// The server certificate's `tls-server-end-point` hash (TLS only).
    end_point: Option<Vec<u8>>,
}

async fn authenticate(
    wire: &mut Wire,
    req: &AuthRequest,
    user: &str,
    binding: &Binding,
) -> Result<(), AuthFailure> {
    use protocol::{md5, scram};
    let secret = req.secret.as_deref();
    let scram_secret = secret.and_then(scram::Verifier::parse);
    let no_secret = || {
        req.failure_detail
            .clone()
            .unwrap_or_else(|| format!("User \"{user}\" has no password assigned."))
    };
    match req.method {
        AuthMethod::Trust => return Ok(()),
        AuthMethod::Password => {
            send_auth(wire, BackendMessage::AuthenticationCleartextPassword).await?;
            let body = read_password_message(wire, "password").await?;
            let given = cleartext(&body)?;
            let ok = match (secret, &scram_secret) {
                (_, Some(v)) => v.matches(given),
                (Some(s), None) if md5::is_md5_verifier(s) => md5::md5_verifier(given, user) == s,
                _ => return Err(password_failed(user, &no_secret(), req)),
            };
            if !ok {
                return Err(password_failed(
                    user,
                    &format!("Password does not match for user \"{user}\"."),
                    req,
                ));
            }
        }
        AuthMethod::Md5 if scram_secret.is_none() => {
            let mut salt = [0u8; 4];
            rand::fill(&mut salt[..]);
            send_auth(wire, BackendMessage::AuthenticationMD5Password { salt }).await?;
            let body = read_password_message(wire, "password").await?;
            let given = cleartext(&body)?;
            let Some(s) = secret.filter(|s| md5::is_md5_verifier(s)) else {
                return Err(password_failed(user, &no_secret(), req));
            };
            if md5::md5_response(s, salt) != given {
                return Err(password_failed(
                    user,
                    &format!("Password does not match for user \"{user}\"."),
                    req,
                ));
            }
        }
        AuthMethod::Md5 | AuthMethod::ScramSha256 => {
            // Over TLS SCRAM-SHA-256-PLUS comes first, as PostgreSQL
            // lists it.
            let mut mechanisms = Vec::with_capacity(2);
            if binding.ssl && binding.end_point.is_some() {
                mechanisms.push(scram::SCRAM_SHA_256_PLUS.to_string());
            }
            mechanisms.push(scram::SCRAM_SHA_256.to_string());
            send_auth(wire, BackendMessage::AuthenticationSASL { mechanisms }).await?;
            let body = read_password_message(wire, "SASL").await?;
            let malformed = |detail: &str| {
                AuthFailure::Fatal(
                    PgError::new(sqlstate::PROTOCOL_VIOLATION, "malformed SCRAM message")
                        .with_detail(detail),
                )
            };
            // SASLInitialResponse: mechanism\0, Int32 length (-1: none), data.
            let nul = body
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(|| malformed("The message is empty."))?;
            let plus = &body[..nul] == scram::SCRAM_SHA_256_PLUS.as_bytes();
            if !(plus && binding.ssl && binding.end_point.is_some())
                && &body[..nul] != scram::SCRAM_SHA_256.as_bytes()
            {
                return Err(AuthFailure::Fatal(PgError::new(
                    sqlstate::PROTOCOL_VIOLATION,
                    "client selected an invalid SASL authentication mechanism",
                )));
            }
            let rest = &body[nul + 1..];
            let (len, data) = rest
                .split_first_chunk::<4>()
                .ok_or_else(|| malformed("The message is empty."))?;
            if i32::from_be_bytes(*len) as i64 != data.len() as i64 {
                return Err(malformed("The message length does not match."));
            }
            let mut server = scram::ScramServer::new(scram_secret.clone(), user)
                .with_channel_binding(
                    binding.ssl,
                    if plus {
                        binding.end_point.clone()
                    } else {
                        None
                    },
                );
            let scram_err = |e: scram::ScramError| {
                match e {
                scram::ScramError::Malformed(d) => malformed(&d),
                scram::ScramError::Unsupported(m) => {
                    AuthFailure::Fatal(PgError::new(sqlstate::PROTOCOL_VIOLATION, m))
                }
                scram::ScramError::Negotiation => AuthFailure::Fatal(
                    PgError::new(
                        sqlstate::PROTOCOL_VIOLATION,
                        "SCRAM channel binding negotiation error",
                    )
                    .with_detail("The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding."),
                ),
                scram::ScramError::BindingFailed => AuthFailure::Fatal(PgError::new(
                    sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                    "SCRAM channel binding check failed",
                )),
                scram::ScramError::Failed => password_failed(
                    user,
                    &if scram_secret.is_some() {
                        format!("Password does not match for user \"{user}\".")
                    } else if secret.is_some() {
                        format!("User \"{user}\" does not have a valid SCRAM secret.")
                    } else {
                        no_secret()
                    },
                    req,
                ),
            }
            };
            let first = server.client_first(data).map_err(scram_err)?;
            send_auth(
                wire,
                BackendMessage::AuthenticationSASLContinue(bytes::Bytes::from(first.into_bytes())),
            )
            .await?;
            let body = read_password_message(wire, "SASL").await?;
            let fin = server.client_final(&body).map_err(scram_err)?;
            if req.failure_detail.is_some() {
                return Err(password_failed(user, &no_secret(), req));
            }
            let _ = BackendMessage::AuthenticationSASLFinal(bytes::Bytes::from(fin.into_bytes()))
                .encode(&mut wire.out);
            return Ok(());
        }
    }
    if req.failure_detail.is_some() {
        return Err(password_failed(user, &no_secret(), req));
    }
    Ok(())
}

/// What a session carries with it from core to core besides its loop.
struct Owned {
    /// Its cancel registration (unregistered when the session ends).
    _key: CancelKey,
    /// The client, for logs ([`peer_text`]).
    peer: String,
    /// `log_disconnections`: what the line at the end says.
    farewell: Option<Farewell>,
    /// Counts the connection as live until it ends.
    _live: LiveGuard,
}

/// The `log_disconnections` line of a session (PostgreSQL's wording).
struct Farewell {
    began: std::time::Instant,
    user: String,
    database: String,
    peer: Option<SocketAddr>,
}

impl Farewell {
    fn line(&self) -> String {
        let t = self.began.elapsed();
        let ms = t.as_millis();
        let (h, m, sec, milli) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        let host = match self.peer {
            Some(p) => format!("host={} port={}", p.ip(), p.port()),
            None => "host=[local]".into(),
        };
        format!(
            "disconnection: session time: {h}:{m:02}:{sec:02}.{milli:03} user={} database={} {host}",
            self.user, self.database
        )
    }
}

/// Runs `session` to its end, or until it moves to another core: then its
/// socket leaves this core's event loop and the session goes on as a new
/// task there, with all its state.
fn drive<B: Backend>(
    mut session: SessionLoop<B>,
    owned: Owned,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let peer = owned.peer.clone();
        match session.run().await {
            Ok(Exit::Ended) => {}
            Ok(Exit::Move) => {
                let SessionLoop {
                    wire,
                    backend,
                    cancel,
                    conflict,
                    statements,
                    portals,
                    ignore_till_sync,
                    spare_params,
                    seat,
                } = session;
                let Wire {
                    stream,
                    codec,
                    rbuf,
                    out,
                    pending,
                    stop,
                    write_wait,
                    multi_thread,
                    parking,
                    moved_fd,
                } = wire;
                let stream = match stream.into_std() {
                    Ok(s) => s,
                    Err(e) => {
                        debug!("connection to {peer} lost while moving it: {e}");
                        return;
                    }
                };
                let cores = seat.cores().clone();
                cores.spawn(seat.core(), async move {
                    let stream = match stream.into_tokio() {
                        Ok(s) => s,
                        Err(e) => {
                            debug!("connection to {peer} lost while moving it: {e}");
                            return;
                        }
                    };
                    let session = SessionLoop {
                        wire: Wire {
                            stream,
                            codec,
                            rbuf,
                            out,
                            pending,
                            stop,
                            write_wait,
                            multi_thread,
                            parking,
                            moved_fd,
                        },
                        backend,
                        cancel,
                        conflict,
                        statements,
                        portals,
                        ignore_till_sync,
                        spare_params,
                        seat,
                    };
                    drive(session, owned).await
                });
                return;
            }
            Err(close) => finish(&mut session.wire, close, &peer).await,
        }
        // Dropping the backend aborts any open transaction and frees its slot.
        drop(session);
        match &owned.farewell {
            Some(f) => info!("{}", f.line()),
            None => debug!("disconnection: host={peer}"),
        }
        drop(owned);
    })
}

/// Ends a connection for `close`, telling the client why where possible.
async fn finish(wire: &mut Wire, close: Close, peer: &str) {
    match close {
        Close::Io(e) => debug!("connection to {peer} lost: {e}"),
        Close::Protocol(e) => {
            let pg = e.to_pg_error();
            // PostgreSQL logs these as the FATAL it sends the client.
            match &pg.detail {
                Some(d) => error!(fatal = true, "{} (client {peer})\nDETAIL:  {d}", pg.message),
                None => error!(fatal = true, "{} (client {peer})", pg.message),
            }
            wire.goodbye(&pg).await;
        }
        Close::Shutdown => {
            let pg = PgError::fatal(
                sqlstate::ADMIN_SHUTDOWN,
                "terminating connection due to administrator command",
            );
            wire.goodbye(&pg).await;
        }
    }
}

/// How the startup exchange went on.
enum Startup {
    /// The Startup message came.
    Params(Vec<(String, String)>),
    /// The connection is done (CancelRequest, EOF).
    Done,
    /// 'S' was sent: run the TLS handshake, then read on.
    Tls(Arc<crate::tls::TlsContext>),
}

/// The startup exchange up to the Startup message or a TLS handshake
/// (`ssl_done`: one already ran).
async fn startup<F: BackendFactory>(
    shared: &Shared<F>,
    wire: &mut Wire,
    ssl_done: bool,
) -> Result<Startup, Close> {
    loop {
        match wire.read().await? {
            Input::Msg(FrontendMessage::SslRequest) if ssl_done => {
                // PostgreSQL reads a second request as a protocol version.
                let e = PgError::fatal(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0",
                );
                return Err(Close::Protocol(ProtocolError::Fatal(e)));
            }
            Input::Msg(FrontendMessage::SslRequest) => {
                // TLS over TCP only, as PostgreSQL (never on a Unix socket).
                let ctx = if wire.stream.is_tcp() {
                    shared.factory.tls()
                } else {
                    None
                };
                if let Some(ctx) = ctx {
                    wire.out.extend_from_slice(b"S");
                    wire.flush().await?;
                    return Ok(Startup::Tls(ctx));
                }
                wire.out.extend_from_slice(b"N");
                wire.flush().await?;
                if !wire.rbuf.is_empty() {
                    let e = PgError::fatal(
                        sqlstate::PROTOCOL_VIOLATION,
                        "received unencrypted data after SSL request",
                    )
                    .with_detail("This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.");
                    return Err(Close::Protocol(ProtocolError::Fatal(e)));
                }
            }
            Input::Msg(FrontendMessage::GssEncRequest) => {
                // No GSSAPI: 'N' and the client continues as it chooses.
                wire.out.extend_from_slice(b"N");
                wire.flush().await?;
            }
            Input::Msg(FrontendMessage::CancelRequest { pid, key }) => {
                if shared.cancel.cancel(pid, key) {
                    debug!("cancel request for pid {pid} accepted");
                } else {
                    debug!("cancel request for pid {pid} ignored: no such session or wrong key");
                }
                return Ok(Startup::Done);
            }
            Input::Msg(FrontendMessage::Startup { params }) => return Ok(Startup::Params(params)),
            Input::Msg(other) => {
                let e = PgError::fatal(
                    sqlstate::PROTOCOL_VIOLATION,
                    format!("unexpected message during startup: {other:?}"),
                );
                return Err(Close::Protocol(ProtocolError::Fatal(e)));
            }
            Input::Bad(e) => return Err(Close::Protocol(ProtocolError::Fatal(e.error))),
            // (No wait limit here, so no IdleTimeout either.)
            Input::Eof | Input::IdleTimeout | Input::Interrupt => return Ok(Startup::Done),
            Input::Shutdown => return Err(Close::Shutdown),
        }
    }
}

/// A named or unnamed prepared statement; `None` for an empty query string.
type Stmt<B> = Option<Arc<Prepared<<B as Backend>::Statement>>>;

/// A prepared statement as the session loop keeps it: the backend's
/// statement, and its RowDescription for all-text results encoded at the
/// first Describe that needs it (a statement's columns never change once
/// known, and clients that describe every execution — libpq's
/// `PQexecPrepared` does — would otherwise encode it every time).
struct Prepared<S> {
    stmt: Arc<S>,
    text_row_description: std::sync::OnceLock<bytes::Bytes>,
}

impl<S: StatementInfo> Prepared<S> {
    fn new(stmt: Arc<S>) -> Arc<Self> {
        Arc::new(Prepared {
            stmt,
            text_row_description: std::sync::OnceLock::new(),
        })
    }

    /// Writes RowDescription (or NoData) for results in `formats`.
    fn describe_rows(&self, out: &mut BytesMut, formats: &[i16]) -> PgResult<()> {
        let Some(cols) = self.stmt.columns() else {
            write_simple(out, b'n');
            return Ok(());
        };
        if formats.iter().any(|&f| f != 0) {
            return write_row_description(out, cols, formats);
        }
        if let Some(b) = self.text_row_description.get() {
            out.extend_from_slice(b);
            return Ok(());
        }
        let mut b = BytesMut::new();
        write_row_description(&mut b, cols, &[])?;
        out.extend_from_slice(&b);
        let _ = self.text_row_description.set(b.freeze());
        Ok(())
    }
}

/// A bound statement waiting for (more) Execute.
struct Portal<B: Backend> {
    stmt: Stmt<B>,
    params: Vec<Value>,
    /// Result formats as Bind sent them (none: all text; one: for all
    /// columns; else one each), read through [`format_of`].
    formats: ResultFormats,
    state: PortalState,
}

enum PortalState {
    /// Not executed yet.
    Ready,
    /// Executed with a row limit: its encoded DataRows, handed out in chunks.
    Buffered {
        rows: BytesMut,
        ends: Vec<usize>,
        next: usize,
        tag: String,
    },
    /// Ran to completion.
    Done { tag: String },
}

/// Prepared statements or portals by name. The unnamed one (""), which
/// most drivers use for every statement they do not keep and libpq for
/// every portal, has its own slot: no hashing for it at each Bind, Describe
/// and Execute (hashing and comparing names was 6 % of the server's CPU
/// in pgbench select-only).
struct NameMap<V> {
    unnamed: Option<V>,
    /// Hashed with [`pgtypes::hash::KeyHasher`]: a statement name is
    /// looked up per Bind, and SipHash cost more than the lookup.
    named: HashMap<String, V, pgtypes::hash::KeyBuild>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            unnamed: None,
            named: HashMap::default(),
        }
    }
}

impl<V> NameMap<V> {
    fn get(&self, name: &str) -> Option<&V> {
        if name.is_empty() {
            self.unnamed.as_ref()
        } else {
            self.named.get(name)
        }
    }
    fn get_mut(&mut self, name: &str) -> Option<&mut V> {
        if name.is_empty() {
            self.unnamed.as_mut()
        } else {
            self.named.get_mut(name)
        }
    }
    fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    fn insert(&mut self, name: String, v: V) {
        if name.is_empty() {
            self.unnamed = Some(v);
        } else {
            self.named.insert(name, v);
        }
    }
    fn remove(&mut self, name: &str) {
        if name.is_empty() {
            self.unnamed = None;
        } else {
            self.named.remove(name);
        }
    }
    fn clear(&mut self) {
        self.unnamed = None;
        self.named.clear();
    }
}

/// The per-connection state after startup.
struct SessionLoop<B: Backend> {
    wire: Wire,
    backend: B,
    cancel: Arc<AtomicBool>,
    /// Standby snapshot conflicts wake the idle loop through this.
    conflict: Option<Arc<tokio::sync::Notify>>,
    statements: NameMap<Stmt<B>>,
    portals: NameMap<Portal<B>>,
    ignore_till_sync: bool,
    /// The parameter list of the last portal executed, emptied, for the
    /// next Bind to fill: a prepared statement's Bind otherwise allocates
    /// one per execution. Kept only while small ([`SPARE_PARAMS_MAX`]).
    spare_params: Vec<Value>,
    /// Where the session runs, and its load counters there.
    seat: Seat,
}

/// The longest parameter list a session keeps for reuse: a bulk INSERT's
/// thousands of parameters are not held between statements.
const SPARE_PARAMS_MAX: usize = 64;

/// How [`SessionLoop::run`] ended without an error.
enum Exit {
    /// Terminate or end of input.
    Ended,
    /// The balancer moved the session to another core ([`Seat::claim_move`]).
    Move,
}

/// The ResultSink the executor writes into: DataRows go straight into the
/// connection's output buffer (or into a portal's buffer when Execute has a
/// row limit); everything else always into the output buffer.
struct RowSink<'a> {
    out: &'a mut BytesMut,
    /// Result formats: empty = all text, one = for all, else per column.
    formats: &'a [i16],
    /// For a row-limited Execute: where rows go and where each ends.
    portal: Option<(&'a mut BytesMut, &'a mut Vec<usize>)>,
    /// For mid-statement flushes (multi-threaded runtime only).
    stream: Option<&'a mut ClientStream>,
    /// Reports a mid-statement flush waiting for the client
    /// ([`Backend::client_write_wait`]).
    write_wait: Option<&'a (dyn Fn(bool) + Send + Sync)>,
    /// A flush waiting for the client also ends at a termination
    /// (`pg_terminate_backend`, shutdown): the connection is then closed.
    stop: Option<&'a StopWatch>,
    rows: u64,
    flushed: bool,
    copy_out: bool,
    io_failed: bool,
}

impl<'a> RowSink<'a> {
    fn new(
        out: &'a mut BytesMut,
        formats: &'a [i16],
        stream: Option<&'a mut ClientStream>,
    ) -> RowSink<'a> {
        RowSink {
            out,
            formats,
            portal: None,
            stream,
            write_wait: None,
            stop: None,
            rows: 0,
            flushed: false,
            copy_out: false,
            io_failed: false,
        }
    }

    /// Writes the output so far to the socket. A long statement already
    /// runs outside the worker (`run_blocking`); a brief one that still
    /// produced this much output (results over `FLUSH_ABOVE`) leaves the
    /// async context here with `block_in_place` before blocking on the write.
    fn maybe_flush(&mut self) {
        if self.out.len() < FLUSH_ABOVE || self.io_failed {
            return;
        }
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let wait = self.write_wait;
        let stop = self.stop;
        let res = tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async {
                // Backpressure: a client that does not read blocks the
                // statement here, with at most FLUSH_ABOVE (plus a row)
                // buffered. Shown as ClientWrite only once the socket
                // refused more (a quick write is no wait).
                let write = async {
                    stream.write_all(self.out).await?;
                    stream.flush().await
                };
                futures_util::pin_mut!(write);
                match futures_util::poll!(&mut write) {
                    std::task::Poll::Ready(r) => r,
                    std::task::Poll::Pending => {
                        if let Some(w) = wait {
                            w(true);
                        }
                        let r = match stop {
                            Some(stop) => tokio::select! {
                                r = &mut write => r,
                                () = stop.wait() => Err(io::Error::other("terminated while the client was not reading")),
                            },
                            None => write.await,
                        };
                        if let Some(w) = wait {
                            w(false);
                        }
                        r
                    }
                }
            })
        });
        match res {
            Ok(()) => {
                self.out.clear();
                self.flushed = true;
            }
            Err(e) => {
                debug!("could not send data to client: {e}");
                self.io_failed = true;
            }
        }
    }

    fn connection_lost() -> PgError {
        PgError::new(
            sqlstate::CONNECTION_FAILURE,
            "could not send data to client",
        )
    }
}

/// A portal's result formats as Bind sent them — none (all text), one for
/// all columns, or one each — read through [`format_of`]. The first two,
/// what libpq and most drivers send, need no list of their own.
#[derive(Default)]
enum ResultFormats {
    #[default]
    Text,
    All([i16; 1]),
    Each(Vec<i16>),
}

impl ResultFormats {
    fn from_codes(codes: Codes<'_>) -> ResultFormats {
        match codes.len() {
            0 => ResultFormats::Text,
            1 => ResultFormats::All([codes.get(0)]),
            _ => ResultFormats::Each(codes.to_vec()),
        }
    }

    fn as_slice(&self) -> &[i16] {
        match self {
            ResultFormats::Text => &[],
            ResultFormats::All(one) => one,
            ResultFormats::Each(each) => each,
        }
    }
}

/// PostgreSQL's rule for a list of format codes ([`format_code`]).
#[inline]
fn format_of(formats: &[i16], i: usize) -> i16 {
    format_code(formats.len(), i, |k| formats[k])
}

impl ResultSink for RowSink<'_> {
    fn binary_column(&self, i: usize) -> bool {
        format_of(self.formats, i) == 1
    }
    fn row(&mut self, values: &[Value]) -> PgResult<()> {
        if self.io_failed {
            return Err(Self::connection_lost());
        }
        let formats = self.formats;
        let buf: &mut BytesMut = match &mut self.portal {
            Some((rows, _)) => rows,
            None => self.out,
        };
        let mut w = DataRowWriter::begin(buf, values.len())?;
        for (i, v) in values.iter().enumerate() {
            if matches!(v, Value::Null) {
                w.null();
            } else {
                let binary = format_of(formats, i) == 1;
                let _ = w.value_with::<()>(|b| {
                    write_value(b, v, binary);
                    Ok(())
                });
            }
        }
        w.finish()?;
        self.rows += 1;
        match &mut self.portal {
            Some((rows, ends)) => ends.push(rows.len()),
            None => self.maybe_flush(),
        }
        Ok(())
    }

    fn notice(&mut self, notice: PgError) {
        write_error(self.out, &notice);
    }

    fn parameter_status(&mut self, name: &str, value: &str) {
        let _ = write_parameter_status(self.out, name, value);
    }

    fn copy_out_start(&mut self, columns: usize) {
        self.copy_out = true;
        let _ = write_copy_response_text(self.out, b'H', columns);
    }

    fn copy_data(&mut self, data: &[u8]) {
        if self.io_failed {
            return;
        }
        let _ = write_copy_data(self.out, data);
        self.maybe_flush();
    }
}

/// Appends a RowDescription for `columns` with result `formats`.
fn write_row_description(
    out: &mut BytesMut,
    columns: &[FieldDescription],
    formats: &[i16],
) -> PgResult<()> {
    let s = begin_row_description(out, columns.len())?;
    for (i, c) in columns.iter().enumerate() {
        write_field_info(
            out,
            &c.name,
            c.table_oid,
            c.column_id,
            c.ty.oid(),
            c.ty.typlen(),
            c.ty.typmod(),
            format_of(formats, i),
        );
    }
    finish_message(out, s)
}

fn protocol_violation(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

/// How a statement run ended, for the caller to finish the protocol part.
enum RunEnd {
    /// CommandComplete (or EmptyQueryResponse, tag "") has been written.
    Done(String),
    /// Rows were buffered in a portal (row-limited Execute).
    Buffered {
        rows: BytesMut,
        ends: Vec<usize>,
        tag: String,
    },
}

impl<B: Backend> SessionLoop<B> {
    async fn run(&mut self) -> Result<Exit, Close> {
        // When the messages being worked through began: the time is
        // charged to the core once they are (nothing more buffered, or
        // ReadyForQuery sent), not per message — an extended-protocol
        // statement is four messages in one packet, and each clock read
        // costs about as much as the balancer's counters are worth.
        let mut busy_since: Option<Instant> = None;
        loop {
            // idle_in_transaction_session_timeout: only while a transaction
            // block is open and the client owes us its next message.
            // Likewise a standby snapshot conflict can only end a session
            // that is inside a transaction block; outside one nothing is
            // waited on, so autocommit traffic pays nothing for it.
            let read = match self.wire.buffered() {
                Ok(Some(input)) => Ok(input),
                Ok(None) => {
                    let (idle_limit, wake) = match self.backend.tx_status() {
                        TxStatus::Idle => (None, None),
                        _ => (
                            self.backend.idle_in_transaction_timeout(),
                            self.conflict.as_deref(),
                        ),
                    };
                    self.wire.read_waking(idle_limit, wake, true).await
                }
                Err(e) => Err(e),
            };
            if let Some(fd) = self.wire.moved_fd.take() {
                self.backend.socket_moved(fd);
            }
            let msg = match read? {
                Input::Msg(m) => m,
                Input::Eof => return Ok(Exit::Ended),
                Input::Interrupt => match self.backend.idle_interrupt() {
                    Some(e) => return Err(Close::Protocol(ProtocolError::Fatal(e))),
                    None => continue,
                },
                Input::Bad(e) => {
                    self.message_error(e).await?;
                    continue;
                }
                Input::Shutdown => return Err(Close::Shutdown),
                Input::IdleTimeout => {
                    let e = PgError::fatal(
                        sqlstate::IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
                        "terminating connection due to idle-in-transaction timeout",
                    );
                    return Err(Close::Protocol(ProtocolError::Fatal(e)));
                }
            };
            if self.ignore_till_sync
                && !matches!(msg, FrontendMessage::Sync | FrontendMessage::Terminate)
            {
                continue;
            }
            let began = *busy_since.get_or_insert_with(Instant::now);
            // ReadyForQuery went out: the client owes the next message.
            let mut ready = false;
            let res = match msg {
                FrontendMessage::Query(sql) => {
                    self.simple_query(&sql).await?;
                    write_ready_for_query(&mut self.wire.out, self.backend.tx_status().byte());
                    self.wire.flush().await?;
                    ready = true;
                    Ok(())
                }
                FrontendMessage::Parse {
                    name,
                    query,
                    param_types,
                } => self.parse(name, &query, &param_types),
                FrontendMessage::Bind(b) => self.bind(&b),
                FrontendMessage::Describe { target, name } => self.describe(target, &name),
                FrontendMessage::Execute { portal, max_rows } => {
                    self.execute(&portal, max_rows).await?
                }
                FrontendMessage::Close { target, name } => {
                    match target {
                        Target::Statement => {
                            self.statements.remove(&name);
                        }
                        Target::Portal => {
                            self.portals.remove(&name);
                        }
                    }
                    write_simple(&mut self.wire.out, b'3');
                    Ok(())
                }
                FrontendMessage::Sync => {
                    self.ignore_till_sync = false;
                    if self.backend.tx_status() == TxStatus::Idle {
                        // Portals live until the end of their transaction.
                        self.portals.clear();
                    }
                    write_ready_for_query(&mut self.wire.out, self.backend.tx_status().byte());
                    self.wire.flush().await?;
                    ready = true;
                    Ok(())
                }
                FrontendMessage::Flush => {
                    self.wire.flush().await?;
                    Ok(())
                }
                // A client still sending after its COPY failed: ignore.
                FrontendMessage::CopyData(_)
                | FrontendMessage::CopyDone
                | FrontendMessage::CopyFail(_) => Ok(()),
                FrontendMessage::Terminate => return Ok(Exit::Ended),
                FrontendMessage::PasswordMessage(_) => {
                    return Err(Close::Protocol(ProtocolError::UnknownType(b'p')));
                }
                other => {
                    let e = PgError::fatal(
                        sqlstate::PROTOCOL_VIOLATION,
                        format!("unexpected message {other:?}"),
                    );
                    return Err(Close::Protocol(ProtocolError::Fatal(e)));
                }
            };
            if let Err(e) = res {
                self.extended_error(e);
            }
            if self.wire.shutting_down() {
                return Err(Close::Shutdown);
            }
            if ready || !self.wire.has_input() {
                self.seat.ran(began.elapsed());
                busy_since = None;
            }
            // Move only at an idle point: nothing of the client's is
            // buffered, so nothing is read on one core and answered on
            // another.
            if ready && !self.wire.has_input() && self.seat.claim_move().is_some() {
                return Ok(Exit::Move);
            }
        }
    }

    /// Awaits what the last backend call left (a commit that joined a
    /// group WAL flush, see [`Backend::pending_wait`]) and finishes it.
    /// Other sessions of this core run while it waits: this is how a
    /// commit leaves the thread without a hand-off.
    async fn settle(&mut self) -> PgResult<()> {
        // A group flush may be followed by a wait for synchronous standbys:
        // each finished wait may leave the next.
        while let Some(wait) = self.backend.pending_wait() {
            wait.await;
            let r = self.backend.finish_wait();
            if let Some(mut n) = self.backend.wait_notice() {
                if self.wire.shutting_down() {
                    // Terminated, not cancelled: PostgreSQL's WARNING, and
                    // the statement's result is not sent (the caller
                    // closes the connection on a 57014 during shutdown).
                    n.code = sqlstate::ADMIN_SHUTDOWN;
                    n.message = "canceling the wait for synchronous replication and terminating connection due to administrator command".into();
                    write_error(&mut self.wire.out, &n);
                    r?;
                    return Err(PgError::new(
                        sqlstate::QUERY_CANCELED,
                        "canceling statement due to user request",
                    ));
                }
                write_error(&mut self.wire.out, &n);
            }
            r?;
        }
        Ok(())
    }

    /// An error in an extended-protocol message: report, discard until Sync.
    fn extended_error(&mut self, e: PgError) {
        debug!("extended query error: {e}");
        write_error(&mut self.wire.out, &e);
        self.backend.on_error();
        self.ignore_till_sync = true;
    }

    /// A well-framed message with a bad body.
    async fn message_error(&mut self, e: MessageError) -> Result<(), Close> {
        if self.ignore_till_sync && e.tag != b'S' {
            return Ok(());
        }
        debug!("bad message {:?}: {}", e.tag as char, e.error);
        match e.tag {
            b'Q' => {
                write_error(&mut self.wire.out, &e.error);
                self.backend.on_error();
                write_ready_for_query(&mut self.wire.out, self.backend.tx_status().byte());
                self.wire.flush().await?;
            }
            b'd' | b'c' | b'f' => {}
            _ => self.extended_error(e.error),
        }
        Ok(())
    }

    /// A simple Query: each statement in turn, several as one implicit
    /// transaction; the first error ends the string.
    async fn simple_query(&mut self, sql: &str) -> Result<(), Close> {
        self.cancel.store(false, Ordering::SeqCst);
        // As in PostgreSQL, a simple Query drops the unnamed statement/portal.
        self.statements.remove("");
        self.portals.remove("");
        let brief = sql.len() <= PARSE_INLINE_MAX;
        let stmts = match run_call(brief, || self.backend.prepare(sql, &[])) {
            Ok(s) => s,
            Err(e) => {
                debug!("statement error: {e}");
                write_error(&mut self.wire.out, &e);
                self.backend.on_error();
                return Ok(());
            }
        };
        if stmts.is_empty() {
            write_empty_query_response(&mut self.wire.out);
            return Ok(());
        }
        let implicit = stmts.len() > 1;
        if implicit {
            self.backend.begin_implicit();
        }
        let mut ok = true;
        for stmt in &stmts {
            let res = self.run_statement(stmt, &[], &[], None, true).await?;
            if let Err(e) = res {
                debug!("statement error: {e}");
                write_error(&mut self.wire.out, &e);
                self.backend.on_error();
                ok = false;
                break;
            }
            if self.wire.shutting_down() {
                break;
            }
        }
        if implicit {
            // Ending the implicit transaction may commit: its WAL flush wait
            // hands the worker off itself, like COMMIT's.
            let backend = &mut self.backend;
            let ended = run_call(true, || backend.end_implicit(ok));
            let settled = self.settle().await;
            if let Err(e) = ended.and(settled) {
                write_error(&mut self.wire.out, &e);
                self.backend.on_error();
            }
        }
        Ok(())
    }

    /// Runs one statement: RowDescription (if `describe`), rows, COPY,
    /// CommandComplete. With `limit_rows` the rows are buffered instead and
    /// returned for the portal to hand out. On error, whatever this
    /// statement wrote that has not reached the client yet is withdrawn
    /// except rows (PostgreSQL sends the rows it produced before the error).
    async fn run_statement(
        &mut self,
        stmt: &B::Statement,
        params: &[Value],
        formats: &[i16],
        limit_rows: Option<()>,
        describe: bool,
    ) -> Result<PgResult<RunEnd>, Close> {
        let start = self.wire.out.len();
        if describe {
            if let Some(cols) = stmt.columns() {
                if let Err(e) = write_row_description(&mut self.wire.out, cols, formats) {
                    return Ok(Err(e));
                }
            }
        }
        let desc_end = self.wire.out.len();
        let multi = self.wire.multi_thread;
        let mut rows_buf = BytesMut::new();
        let mut ends = Vec::new();
        let wire = &mut self.wire;
        let backend = &mut self.backend;
        let brief = stmt.runs_briefly();
        let (outcome, copy_out, rows, flushed, io_failed) = run_call(brief, || {
            let stream = if multi && limit_rows.is_none() {
                Some(&mut wire.stream)
            } else {
                None
            };
            let mut sink = RowSink::new(&mut wire.out, formats, stream);
            sink.write_wait = wire.write_wait.as_deref().filter(|_| multi);
            sink.stop = Some(&wire.stop);
            if limit_rows.is_some() {
                sink.portal = Some((&mut rows_buf, &mut ends));
            }
            let outcome = backend.execute(stmt, params, &mut sink);
            (
                outcome,
                sink.copy_out,
                sink.rows,
                sink.flushed,
                sink.io_failed,
            )
        });
        if io_failed {
            return Err(Close::Io(io::Error::other("could not send data to client")));
        }
        // A commit that joined a group flush finishes before its
        // CommandComplete is written.
        let outcome = match (outcome, self.settle().await) {
            (Ok(o), Err(e)) => {
                if let ExecOutcome::CopyIn(copy) = o {
                    self.backend.copy_in_fail(copy, &e.message);
                }
                Err(e)
            }
            (o, _) => o,
        };
        match outcome {
            Ok(ExecOutcome::Complete(tag)) => {
                if copy_out {
                    write_simple(&mut self.wire.out, b'c');
                }
                if limit_rows.is_some() {
                    return Ok(Ok(RunEnd::Buffered {
                        rows: rows_buf,
                        ends,
                        tag,
                    }));
                }
                if let Err(e) = write_command_complete(&mut self.wire.out, &tag) {
                    return Ok(Err(e));
                }
                Ok(Ok(RunEnd::Done(tag)))
            }
            Ok(ExecOutcome::Empty) => {
                write_empty_query_response(&mut self.wire.out);
                Ok(Ok(RunEnd::Done(String::new())))
            }
            Ok(ExecOutcome::CopyIn(copy)) => match self.copy_in(copy).await? {
                Ok(tag) => match self
                    .settle()
                    .await
                    .and_then(|()| write_command_complete(&mut self.wire.out, &tag))
                {
                    Ok(()) => Ok(Ok(RunEnd::Done(tag))),
                    Err(e) => Ok(Err(e)),
                },
                Err(e) => Ok(Err(e)),
            },
            Err(e) if e.code == sqlstate::QUERY_CANCELED && self.wire.shutting_down() => {
                // Cancelled by the shutdown, not by the user: the client gets
                // only the FATAL 57P01, as from PostgreSQL.
                Err(Close::Shutdown)
            }
            Err(e) => {
                if rows == 0 && !flushed && !copy_out && self.wire.out.len() >= desc_end {
                    // Nothing of this statement reached the client: drop its
                    // RowDescription so the error stands alone — but not
                    // the NOTICEs its functions raised before failing
                    // (PostgreSQL sends those as they happen).
                    let notices = self.wire.out.split_off(desc_end);
                    self.wire.out.truncate(start);
                    self.wire.out.unsplit(notices);
                }
                Ok(Err(e))
            }
        }
    }

    /// COPY FROM STDIN: CopyInResponse, then CopyData fed to the backend as
    /// it arrives (all CopyData already buffered go in one blocking call),
    /// until CopyDone or CopyFail.
    async fn copy_in(&mut self, mut copy: CopyIn) -> Result<PgResult<String>, Close> {
        let columns = copy.columns;
        let format = if copy.binary { 1 } else { 0 };
        let s = begin_message(&mut self.wire.out, b'G');
        {
            use bytes::BufMut;
            let out = &mut self.wire.out;
            out.put_i8(format);
            out.put_i16(columns.min(i16::MAX as usize) as i16);
            for _ in 0..columns.min(i16::MAX as usize) {
                out.put_i16(format as i16);
            }
        }
        if let Err(e) = finish_message(&mut self.wire.out, s) {
            return Ok(Err(self.backend.copy_in_fail(copy, &e.message)));
        }
        self.wire.flush().await?;
        loop {
            let msg = match self.wire.read().await? {
                Input::Msg(m) => m,
                Input::Bad(e) => {
                    let err = self.backend.copy_in_fail(copy, &e.error.message);
                    let _ = err;
                    return Ok(Err(e.error));
                }
                // (No wait limit here, so no IdleTimeout either.)
                Input::Eof | Input::IdleTimeout | Input::Interrupt => {
                    let _ = self
                        .backend
                        .copy_in_fail(copy, "unexpected EOF on client connection");
                    return Err(Close::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "EOF during COPY",
                    )));
                }
                Input::Shutdown => {
                    let _ = self.backend.copy_in_fail(copy, "server shutdown");
                    return Err(Close::Shutdown);
                }
            };
            match msg {
                FrontendMessage::CopyData(data) => {
                    let wire = &mut self.wire;
                    let backend = &mut self.backend;
                    let res = run_blocking(|| -> Result<PgResult<()>, ProtocolError> {
                        if let Err(e) = backend.copy_in_data(&mut copy, &data) {
                            return Ok(Err(e));
                        }
                        // Feed whatever further CopyData is already here.
                        loop {
                            match wire.codec.decode(&mut wire.rbuf) {
                                Ok(Some(Ok(FrontendMessage::CopyData(d)))) => {
                                    if let Err(e) = backend.copy_in_data(&mut copy, &d) {
                                        return Ok(Err(e));
                                    }
                                }
                                Ok(Some(other)) => {
                                    wire.pending = Some(other);
                                    return Ok(Ok(()));
                                }
                                Ok(None) => return Ok(Ok(())),
                                Err(e) => return Err(e),
                            }
                        }
                    });
                    match res {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => return Ok(Err(e)),
                        Err(pe) => return Err(pe.into()),
                    }
                }
                FrontendMessage::CopyDone => {
                    let backend = &mut self.backend;
                    return Ok(run_blocking(|| backend.copy_in_done(copy)));
                }
                FrontendMessage::CopyFail(m) => {
                    return Ok(Err(self.backend.copy_in_fail(copy, &m)))
                }
                // PostgreSQL ignores these during COPY IN.
                FrontendMessage::Flush | FrontendMessage::Sync => {}
                FrontendMessage::Terminate => {
                    let _ = self.backend.copy_in_fail(copy, "client terminated");
                    return Err(Close::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "Terminate during COPY",
                    )));
                }
                other => {
                    let tag = frontend_tag(&other);
                    let _ = self.backend.copy_in_fail(copy, "unexpected message");
                    return Ok(Err(protocol_violation(format!(
                        "unexpected message type 0x{tag:02X} during COPY from stdin"
                    ))));
                }
            }
        }
    }

    fn parse(&mut self, name: String, query: &str, param_types: &[u32]) -> PgResult<()> {
        if !name.is_empty() && self.statements.contains_key(&name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_PREPARED_STATEMENT,
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        let backend = &mut self.backend;
        let brief = query.len() <= PARSE_INLINE_MAX;
        let mut stmts = run_call(brief, || backend.prepare(query, param_types))?;
        if stmts.len() > 1 {
            return Err(PgError::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        self.statements.insert(name, stmts.pop().map(Prepared::new));
        write_simple(&mut self.wire.out, b'1');
        Ok(())
    }

    fn bind(&mut self, msg: &Bind) -> PgResult<()> {
        let (portal, statement) = (msg.portal(), msg.statement());
        let (param_formats, params) = (msg.param_formats(), msg.params());
        let result_formats = msg.result_formats();
        let stmt = self
            .statements
            .get(statement)
            .ok_or_else(|| no_statement(statement))?
            .clone();
        if !portal.is_empty() && self.portals.contains_key(portal) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_CURSOR,
                format!("portal \"{portal}\" already exists"),
            ));
        }
        let types = stmt.as_ref().map(|s| s.stmt.param_types()).unwrap_or(&[]);
        if param_formats.len() > 1 && param_formats.len() != params.len() {
            return Err(protocol_violation(format!(
                "bind message has {} parameter formats but {} parameters",
                param_formats.len(),
                params.len()
            )));
        }
        if params.len() != types.len() {
            return Err(protocol_violation(format!(
                "bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                params.len(),
                statement,
                types.len()
            )));
        }
        let mut values = std::mem::take(&mut self.spare_params);
        values.reserve(params.len());
        for (i, (p, ty)) in params.zip(types).enumerate() {
            let f = param_formats.format_of(i);
            check_format(f)?;
            values.push(decode_param(*ty, p, f, i)?);
        }
        let ncols = stmt
            .as_ref()
            .and_then(|s| s.stmt.columns())
            .map(|c| c.len())
            .unwrap_or(0);
        if result_formats.len() > 1 && result_formats.len() != ncols {
            return Err(protocol_violation(format!(
                "bind message has {} result formats but query has {} columns",
                result_formats.len(),
                ncols
            )));
        }
        if ncols > 0 {
            for f in result_formats.iter() {
                check_format(f)?;
            }
        }
        self.portals.insert(
            portal.to_string(),
            Portal {
                stmt,
                params: values,
                formats: ResultFormats::from_codes(result_formats),
                state: PortalState::Ready,
            },
        );
        write_simple(&mut self.wire.out, b'2');
        Ok(())
    }

    fn describe(&mut self, target: Target, name: &str) -> PgResult<()> {
        let out = &mut self.wire.out;
        match target {
            Target::Statement => {
                let stmt = self
                    .statements
                    .get(name)
                    .ok_or_else(|| no_statement(name))?;
                let types = stmt.as_ref().map(|s| s.stmt.param_types()).unwrap_or(&[]);
                write_parameter_description(out, types.iter().map(|t| t.oid()))?;
                match stmt {
                    Some(s) => s.describe_rows(out, &[])?,
                    None => write_simple(out, b'n'),
                }
            }
            Target::Portal => {
                let p = self.portals.get(name).ok_or_else(|| no_portal(name))?;
                match &p.stmt {
                    Some(s) => s.describe_rows(out, p.formats.as_slice())?,
                    None => write_simple(out, b'n'),
                }
            }
        }
        Ok(())
    }

    /// Execute: runs the portal on its first Execute; with a row limit the
    /// rows are buffered and handed out `max_rows` at a time.
    async fn execute(&mut self, name: &str, max_rows: i32) -> Result<PgResult<()>, Close> {
        let Some(portal) = self.portals.get_mut(name) else {
            return Ok(Err(no_portal(name)));
        };
        if let PortalState::Ready = portal.state {
            self.cancel.store(false, Ordering::SeqCst);
            let Some(stmt) = portal.stmt.clone() else {
                portal.state = PortalState::Done { tag: String::new() };
                write_empty_query_response(&mut self.wire.out);
                return Ok(Ok(()));
            };
            let params = std::mem::take(&mut portal.params);
            let formats = std::mem::take(&mut portal.formats);
            let limit = if max_rows > 0 { Some(()) } else { None };
            let res = self
                .run_statement(&stmt.stmt, &params, formats.as_slice(), limit, false)
                .await?;
            if params.capacity() <= SPARE_PARAMS_MAX {
                let mut params = params;
                params.clear();
                self.spare_params = params;
            }
            let Some(portal) = self.portals.get_mut(name) else {
                return Ok(Ok(()));
            };
            portal.formats = formats;
            match res {
                Err(e) => {
                    portal.state = PortalState::Done { tag: String::new() };
                    return Ok(Err(e));
                }
                Ok(RunEnd::Done(tag)) => {
                    portal.state = PortalState::Done { tag };
                    return Ok(Ok(()));
                }
                Ok(RunEnd::Buffered { rows, ends, tag }) => {
                    portal.state = PortalState::Buffered {
                        rows,
                        ends,
                        next: 0,
                        tag,
                    };
                }
            }
        }
        let Some(portal) = self.portals.get_mut(name) else {
            return Ok(Ok(()));
        };
        let out = &mut self.wire.out;
        match &mut portal.state {
            PortalState::Ready => {}
            PortalState::Buffered {
                rows,
                ends,
                next,
                tag,
            } => {
                let from_row = *next;
                let to_row = if max_rows > 0 {
                    (from_row + max_rows as usize).min(ends.len())
                } else {
                    ends.len()
                };
                let from = if from_row == 0 { 0 } else { ends[from_row - 1] };
                let to = if to_row == 0 { 0 } else { ends[to_row - 1] };
                out.extend_from_slice(&rows[from..to]);
                *next = to_row;
                if to_row < ends.len() {
                    write_simple(out, b's');
                } else {
                    let tag = std::mem::take(tag);
                    let complete = select_tag(&tag, to_row - from_row);
                    let r = write_command_complete(out, &complete);
                    portal.state = PortalState::Done { tag };
                    if let Err(e) = r {
                        return Ok(Err(e));
                    }
                }
            }
            PortalState::Done { tag } => {
                // Executing a finished portal again yields no more rows.
                let complete = select_tag(tag, 0);
                if complete.is_empty() {
                    write_empty_query_response(out);
                } else if let Err(e) = write_command_complete(out, &complete) {
                    return Ok(Err(e));
                }
            }
        }
        Ok(Ok(()))
    }
}

/// `SELECT n` for the rows of the last chunk of a suspended portal (what
/// PostgreSQL reports); other tags unchanged.
fn select_tag(tag: &str, rows: usize) -> String {
    if tag.starts_with("SELECT") {
        format!("SELECT {rows}")
    } else {
        tag.to_string()
    }
}

fn no_statement(name: &str) -> PgError {
    if name.is_empty() {
        PgError::new(
            sqlstate::INVALID_SQL_STATEMENT_NAME,
            "unnamed prepared statement does not exist",
        )
    } else {
        PgError::new(
            sqlstate::INVALID_SQL_STATEMENT_NAME,
            format!("prepared statement \"{name}\" does not exist"),
        )
    }
}

fn no_portal(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_CURSOR_NAME,
        format!("portal \"{name}\" does not exist"),
    )
}

/// The type byte of a frontend message (for error texts).
fn frontend_tag(m: &FrontendMessage) -> u8 {
    match m {
        FrontendMessage::Query(_) => b'Q',
        FrontendMessage::Parse { .. } => b'P',
        FrontendMessage::Bind { .. } => b'B',
        FrontendMessage::Describe { .. } => b'D',
        FrontendMessage::Execute { .. } => b'E',
        FrontendMessage::Close { .. } => b'C',
        FrontendMessage::Sync => b'S',
        FrontendMessage::Flush => b'H',
        FrontendMessage::CopyData(_) => b'd',
        FrontendMessage::CopyDone => b'c',
        FrontendMessage::CopyFail(_) => b'f',
        FrontendMessage::Terminate => b'X',
        FrontendMessage::PasswordMessage(_) => b'p',
        _ => 0,
    }
}

#[cfg(test)]
mod name_map_tests {
    use super::NameMap;

    #[test]
    fn unnamed_and_named_entries_are_separate() {
        let mut m: NameMap<u32> = NameMap::default();
        assert!(!m.contains_key(""));
        m.insert(String::new(), 1);
        m.insert("p".into(), 2);
        assert_eq!(m.get(""), Some(&1));
        assert_eq!(m.get("p"), Some(&2));
        *m.get_mut("").unwrap() = 3;
        assert_eq!(m.get(""), Some(&3));
        m.insert(String::new(), 4);
        assert_eq!(m.get(""), Some(&4), "a new unnamed one replaces the old");
        m.remove("");
        assert!(!m.contains_key(""));
        assert!(m.contains_key("p"));
        m.insert(String::new(), 5);
        m.clear();
        assert!(m.get("").is_none() && m.get("p").is_none());
    }
}
