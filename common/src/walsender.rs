//! # The walsender (walsender.c): replication connections on the primary
//!
//! A client that connects with the startup parameter `replication=true` is
//! handed here by the session loop ([`server::ReplicationHandler`]).
//! It speaks PostgreSQL's replication command language over simple Query
//! messages:
//!
//! ```text
//!  IDENTIFY_SYSTEM                      → systemid, timeline, xlogpos, dbname
//!  CREATE_REPLICATION_SLOT s PHYSICAL [RESERVE_WAL]
//!                                       → slot_name, consistent_point, …
//!  DROP_REPLICATION_SLOT s [WAIT]
//!  BASE_BACKUP [PROGRESS] [LABEL 'x']   → see basebackup.rs
//!  TIMELINE_HISTORY n                   → filename, content (bytea)
//!  LIST_DATA_FILES                      → (path, size) per file of global/,
//!                                         base/, pg_xact/, pg_twophase/
//!  READ_DATA_FILE 'path' offset length  → data (bytea; NULL: no such file)
//!  START_REPLICATION [SLOT s] [PHYSICAL] X/X [TIMELINE n]
//!       → CopyBothResponse, then      w (XLogData) / k (keepalive)   ──▶
//!                                     r (status) / h (feedback)      ◀──
//!       until the client sends CopyDone or goes away; for a timeline
//!       that is not the server's own (an ancestor in its history):
//!       up to that timeline's switch point, then CopyDone ──▶, the
//!       client's CopyDone ◀──, and a row (next_tli, next_tli_startpos)
//! ```
//!
//! ## Timelines
//!
//! The server's timeline is its WAL writer's. `START_REPLICATION … TIMELINE
//! n` with an older `n` is a standby still on the timeline this server was
//! promoted from: it gets the WAL of `n` up to the switch point recorded in
//! the server's history (read from the server's own segment files, which
//! hold the old timeline's bytes up to there), then the end-of-timeline
//! exchange above, after which it switches and asks again on the next
//! timeline — PostgreSQL's walsender, with its errors: a timeline not in
//! the history ("requested timeline n is not in this server's history"), a
//! start past the switch point ("requested starting point X/X on timeline
//! n is not in this server's history"). A start exactly at the switch
//! point skips the streaming and answers with the row at once.
//!
//! ## Streaming invariants
//!
//! * Nothing beyond the writer's **flushed** LSN is ever sent: a standby
//!   never holds WAL the primary could lose in a crash. The sender waits on
//!   [`wal::WalWriter::subscribe_flushed`] when it has caught up.
//! * WAL is read from the segment files ([`wal::read_raw`]), at most
//!   [`MAX_SEND_SIZE`] per message and never across a segment boundary. A
//!   removed segment ends the stream with PostgreSQL's error ("requested WAL
//!   segment … has already been removed").
//! * The socket is split: a reader task decodes `r`/`h`/CopyDone and
//!   publishes positions into the walsender's [`WalSndStat`] (the
//!   `pg_stat_replication` row), advances the slot and releases the
//!   commits waiting for synchronous standbys (`engine::syncrep`,
//!   SyncRepReleaseWaiters); the sending loop owns the write half only.
//!   They share nothing else.
//! * **Shutdown.** At a primary's shutdown the walsenders outlive the
//!   sessions: they send up to the shutdown checkpoint (the node marks it
//!   with `ReplicationState::set_wal_final` once flushed) and end when the
//!   standby has confirmed flushing it, or after [`WAL_SENDER_TIMEOUT`];
//!   the node waits for them ([`wait_stopped`]). So a standby promoted in
//!   the stopped primary's place holds all its WAL, and the old primary
//!   can follow it without a rewind — PostgreSQL's WalSndWaitStopping.
//!   A standby's walsenders end at once (it logs nothing).
//! * Keepalives go out every [`KEEPALIVE_INTERVAL`] without traffic, with
//!   `reply_requested` set once half of `wal_sender_timeout` passed without
//!   a reply; after the full timeout the walsender ends.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::node::Node;
use bytes::BytesMut;
use engine::replication::{WalSndStat, WalSndState};
use pgtypes::error::{sqlstate, PgError};
use pgtypes::TimeLineId;
use protocol::codec::ServerCodec;
use protocol::messages::{
    write_command_complete, write_error, write_parameter_status, write_ready_for_query,
    BackendMessage, DataRowWriter, FrontendMessage,
};
use server::stream::ClientStream;
use server::{ReplicationConnection, ReplicationHandler};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::io::{ReadHalf, WriteHalf};

type OwnedReadHalf = ReadHalf<ClientStream>;
type OwnedWriteHalf = WriteHalf<ClientStream>;
use tokio::sync::{mpsc, watch};
use tokio_util::codec::Decoder;
use wal::replication::XLogData;
use wal::{Lsn, ReplicationMessage};

use crate::basebackup;

/// Largest XLogData payload (PostgreSQL's MAX_SEND_SIZE is 16 pages).
pub const MAX_SEND_SIZE: usize = 128 * 1024;
/// Keepalive period without other traffic.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);

/// `wal_sender_timeout`'s default: a standby silent this long is dropped.
pub const WAL_SENDER_TIMEOUT: Duration = Duration::from_secs(60);

/// `wal_sender_timeout` as configured (`None`: 0, never).
fn sender_timeout(db: &Node) -> Option<Duration> {
    let ms = db.config().int("wal_sender_timeout");
    (ms > 0).then(|| Duration::from_millis(ms as u64))
}
/// How often a draining walsender looks for the shutdown checkpoint and
/// the standby's confirmation.
const DRAIN_POLL: Duration = Duration::from_millis(20);

/// Waits until every walsender has ended — at a primary's shutdown, after
/// the shutdown checkpoint: each sends it and waits for its standby to
/// confirm, at most [`WAL_SENDER_TIMEOUT`].
pub async fn wait_stopped(db: &Node) {
    let deadline =
        Instant::now() + sender_timeout(db).unwrap_or(WAL_SENDER_TIMEOUT) + Duration::from_secs(1);
    while db.replication().num_walsenders() > 0 && Instant::now() < deadline {
        tokio::time::sleep(DRAIN_POLL).await;
    }
}

static NEXT_PID: AtomicI32 = AtomicI32::new(50_000);

/// The [`ReplicationHandler`] of a primary.
pub struct WalSender {
    db: Arc<Node>,
}

impl WalSender {
    /// A handler serving replication connections of `db`.
    pub fn new(db: Arc<Node>) -> Arc<WalSender> {
        Arc::new(WalSender { db })
    }
}

impl ReplicationHandler for WalSender {
    fn handle(&self, conn: ReplicationConnection) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(run(self.db.clone(), conn))
    }
}

/// The replication connection's socket side.
pub(crate) struct Conn {
    /// The read half; lent to the reader task while streaming.
    pub rd: Option<OwnedReadHalf>,
    pub wr: OwnedWriteHalf,
    pub codec: ServerCodec,
    pub rbuf: BytesMut,
    pub out: BytesMut,
}

impl Conn {
    fn new(stream: ClientStream, buffered: BytesMut, max_message_size: usize) -> Conn {
        let (rd, wr) = tokio::io::split(stream);
        Conn {
            rd: Some(rd),
            wr,
            codec: ServerCodec::new_started(max_message_size),
            rbuf: buffered,
            out: BytesMut::with_capacity(8192),
        }
    }

    /// Next frontend message; None at EOF or on a framing error.
    async fn read(&mut self) -> Option<FrontendMessage> {
        let rd = self.rd.as_mut()?;
        read_message(&mut self.codec, rd, &mut self.rbuf).await
    }

    /// Writes the output buffer, giving up once `deadline` (asked again
    /// whenever it passes: a reply may have moved it) has passed with the
    /// socket still not taking the bytes — a peer behind a dead path that
    /// stopped reading. PostgreSQL's WalSndWriteData checks the timeout in
    /// the same wait. One `write` per wake-up, so giving up mid-buffer
    /// never loses track of what went out (the connection ends anyway).
    async fn flush_within(
        &mut self,
        deadline: impl Fn() -> Option<Instant>,
    ) -> Result<(), FlushEnd> {
        while !self.out.is_empty() {
            let dl = deadline();
            tokio::select! {
                r = self.wr.write(&self.out) => match r {
                    Ok(0) | Err(_) => return Err(FlushEnd::Closed),
                    Ok(n) => {
                        let _ = self.out.split_to(n);
                    }
                },
                _ = sleep_until_opt(dl), if dl.is_some() => {
                    if deadline().is_some_and(|d| Instant::now() >= d) {
                        return Err(FlushEnd::TimedOut);
                    }
                }
            }
        }
        loop {
            let dl = deadline();
            tokio::select! {
                r = self.wr.flush() => return r.map_err(|_| FlushEnd::Closed),
                _ = sleep_until_opt(dl), if dl.is_some() => {
                    if deadline().is_some_and(|d| Instant::now() >= d) {
                        return Err(FlushEnd::TimedOut);
                    }
                }
            }
        }
    }

    /// Writes the output buffer.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        if !self.out.is_empty() {
            self.wr.write_all(&self.out).await?;
            // A TLS stream may keep what it encrypted until flushed.
            self.wr.flush().await?;
            self.out.clear();
        }
        Ok(())
    }
}

/// Why a bounded flush ([`Conn::flush_within`]) ended early.
#[derive(Debug, PartialEq, Eq)]
enum FlushEnd {
    /// The connection failed or was closed.
    Closed,
    /// The peer took nothing until the deadline.
    TimedOut,
}

/// Sleeps until `at` (forever when None; callers guard the branch).
async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
        None => std::future::pending().await,
    }
}

async fn read_message(
    codec: &mut ServerCodec,
    rd: &mut OwnedReadHalf,
    rbuf: &mut BytesMut,
) -> Option<FrontendMessage> {
    loop {
        match codec.decode(rbuf) {
            Ok(Some(Ok(m))) => return Some(m),
            Ok(Some(Err(e))) => {
                tracing::warn!("invalid message on replication connection: {}", e.error);
                return None;
            }
            Err(e) => {
                tracing::debug!("replication connection: {e}");
                return None;
            }
            Ok(None) => {}
        }
        if rbuf.capacity() - rbuf.len() < 1024 {
            rbuf.reserve(8192);
        }
        match rd.read_buf(rbuf).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> &'a str {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or("")
}

/// Serves one replication connection to its end.
async fn run(db: Arc<Node>, rc: ReplicationConnection) {
    let _ = rc.stream.set_nodelay(true);
    let peer = rc.peer;
    let mut conn = Conn::new(rc.stream, rc.buffered, db.config().max_message_size());
    let appname = param(&rc.params, "application_name").to_string();
    let user = param(&rc.params, "user");
    if db
        .catalog()
        .role(user)
        .is_some_and(|r| !r.superuser && !r.replication)
    {
        let e = PgError::fatal(
            sqlstate::INSUFFICIENT_PRIVILEGE,
            "must be superuser or replication role to start walsender",
        );
        write_error(&mut conn.out, &e);
        let _ = conn.flush().await;
        return;
    }
    let max_senders = db.config().int("max_wal_senders").max(0) as usize;
    if db.replication().num_walsenders() >= max_senders {
        let e = PgError::fatal(
            sqlstate::TOO_MANY_CONNECTIONS,
            format!(
                "number of requested standby connections exceeds max_wal_senders (currently {max_senders})"
            ),
        );
        write_error(&mut conn.out, &e);
        let _ = conn.flush().await;
        return;
    }
    let pid = NEXT_PID.fetch_add(1, Ordering::Relaxed);
    let addr = peer.map(|p| p.ip().to_string()).unwrap_or_default();
    let stat = Arc::new(WalSndStat::new(pid, &appname, &addr));
    db.replication().register_walsender(stat.clone());
    struct Unregister(Arc<Node>, Arc<WalSndStat>);
    impl Drop for Unregister {
        fn drop(&mut self) {
            self.0.replication().unregister_walsender(&self.1);
            // Its feedback xmin (no slot) stops holding the horizon.
            engine::replication::update_replication_xmin(&self.0);
        }
    }
    let _unregister = Unregister(db.clone(), stat.clone());

    let _ = BackendMessage::AuthenticationOk.encode(&mut conn.out);
    let in_hot_standby = if db.replication().in_recovery() {
        "on"
    } else {
        "off"
    };
    for (k, v) in [
        ("server_version", "15.4"),
        ("server_encoding", "UTF8"),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("standard_conforming_strings", "on"),
        ("application_name", appname.as_str()),
        ("in_hot_standby", in_hot_standby),
    ] {
        let _ = write_parameter_status(&mut conn.out, k, v);
    }
    let _ = BackendMessage::BackendKeyData { pid, key: 0 }.encode(&mut conn.out);
    write_ready_for_query(&mut conn.out, b'I');
    if conn.flush().await.is_err() {
        return;
    }
    tracing::debug!("replication connection authorized: application_name={appname} pid={pid}");
    let mut shutdown = rc.shutdown;
    loop {
        let msg = tokio::select! {
            m = conn.read() => m,
            _ = shutdown.changed() => None,
        };
        let Some(msg) = msg else { return };
        match msg {
            FrontendMessage::Query(sql) => {
                let r = command(&db, &mut conn, &stat, sql.trim(), &mut shutdown).await;
                match r {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Close) => return,
                    Err(e) => write_error(&mut conn.out, &e),
                }
                write_ready_for_query(&mut conn.out, b'I');
                if conn.flush().await.is_err() {
                    return;
                }
            }
            FrontendMessage::Terminate => return,
            FrontendMessage::Sync | FrontendMessage::Flush => {}
            _ => {
                let e = PgError::fatal(
                    sqlstate::PROTOCOL_VIOLATION,
                    "extended query protocol not supported in a replication connection",
                );
                write_error(&mut conn.out, &e);
                let _ = conn.flush().await;
                return;
            }
        }
    }
}

/// What the command loop does next.
pub(crate) enum Flow {
    Continue,
    Close,
}

/// Replication command words, case-insensitive.
fn words(sql: &str) -> Vec<String> {
    sql.trim_end_matches(';')
        .split_whitespace()
        .map(|w| w.to_string())
        .collect()
}

fn syntax_error(sql: &str) -> PgError {
    PgError::syntax(format!("syntax error in replication command \"{sql}\""))
}

/// A result column `name` of type `oid`, in text format.
pub(crate) fn field_info(name: &str, oid: u32) -> protocol::messages::FieldInfo {
    protocol::messages::FieldInfo {
        name: name.to_string(),
        table_oid: 0,
        column_id: 0,
        type_oid: oid,
        type_len: -1,
        type_mod: -1,
        format: 0,
    }
}

/// Writes a one-row result of text columns.
pub(crate) fn write_row(
    out: &mut BytesMut,
    cols: &[(&str, u32)],
    vals: &[Option<&str>],
    tag: &str,
) {
    let fields = cols.iter().map(|(n, oid)| field_info(n, *oid)).collect();
    let _ = BackendMessage::RowDescription(fields).encode(out);
    if let Ok(mut w) = DataRowWriter::begin(out, vals.len()) {
        for v in vals {
            match v {
                Some(s) => w.value(s.as_bytes()),
                None => w.null(),
            }
        }
        let _ = w.finish();
    }
    let _ = write_command_complete(out, tag);
}

/// OIDs used in replication results.
pub(crate) const TEXT_OID: u32 = 25;
pub(crate) const INT4_OID: u32 = 23;
pub(crate) const INT8_OID: u32 = 20;
pub(crate) const BYTEA_OID: u32 = 17;

async fn command(
    db: &Arc<Node>,
    conn: &mut Conn,
    stat: &Arc<WalSndStat>,
    sql: &str,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<Flow, PgError> {
    let w = words(sql);
    let upper: Vec<String> = w.iter().map(|s| s.to_ascii_uppercase()).collect();
    let up: Vec<&str> = upper.iter().map(|s| s.as_str()).collect();
    match up.as_slice() {
        [] => {
            let _ = BackendMessage::EmptyQueryResponse.encode(&mut conn.out);
            Ok(Flow::Continue)
        }
        ["IDENTIFY_SYSTEM"] => {
            let pos = wal_writer(db)?.flushed_lsn();
            let sysid = system_identifier(db);
            write_row(
                &mut conn.out,
                &[
                    ("systemid", TEXT_OID),
                    ("timeline", INT4_OID),
                    ("xlogpos", TEXT_OID),
                    ("dbname", TEXT_OID),
                ],
                &[
                    Some(&sysid.to_string()),
                    Some(&wal_writer(db)?.timeline().to_string()),
                    Some(&pos.to_string()),
                    None,
                ],
                "IDENTIFY_SYSTEM",
            );
            Ok(Flow::Continue)
        }
        ["SHOW", name] => {
            let name = name.to_ascii_lowercase();
            let v = db
                .config()
                .get(&name)
                .map(|s| s.to_string())
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    )
                })?;
            write_row(&mut conn.out, &[(&name, TEXT_OID)], &[Some(&v)], "SHOW");
            Ok(Flow::Continue)
        }
        ["CREATE_REPLICATION_SLOT", _, rest @ ..] => {
            let name = w[1].trim_matches('"').to_string();
            let mut reserve = false;
            let mut physical = false;
            for r in rest {
                match *r {
                    "PHYSICAL" => physical = true,
                    "RESERVE_WAL" | "(RESERVE_WAL)" => reserve = true,
                    "TEMPORARY" => {}
                    _ => {}
                }
            }
            if !physical {
                return Err(PgError::unsupported(
                    "only physical replication slots are supported",
                ));
            }
            let lsn = engine::replication::create_physical_slot(db, &name, reserve)?.restart_lsn;
            tracing::info!("created replication slot \"{name}\"");
            let cp = lsn.is_valid().then(|| lsn.to_string());
            write_row(
                &mut conn.out,
                &[
                    ("slot_name", TEXT_OID),
                    ("consistent_point", TEXT_OID),
                    ("snapshot_name", TEXT_OID),
                    ("output_plugin", TEXT_OID),
                ],
                &[Some(&name), cp.as_deref(), None, None],
                "CREATE_REPLICATION_SLOT",
            );
            Ok(Flow::Continue)
        }
        ["DROP_REPLICATION_SLOT", _] | ["DROP_REPLICATION_SLOT", _, "WAIT"] => {
            let name = w[1].trim_matches('"');
            engine::replication::drop_slot(db, name)?;
            let _ = write_command_complete(&mut conn.out, "DROP_REPLICATION_SLOT");
            Ok(Flow::Continue)
        }
        ["BASE_BACKUP", ..] => {
            stat.set_state(WalSndState::Backup);
            let r = basebackup::send(db, conn, &up[1..]).await;
            stat.set_state(WalSndState::Startup);
            r?;
            Ok(Flow::Continue)
        }
        ["TIMELINE_HISTORY", n] => {
            let tli = n
                .parse::<u32>()
                .ok()
                .filter(|t| *t > 0)
                .map(TimeLineId)
                .ok_or_else(|| syntax_error(sql))?;
            let writer = wal_writer(db)?;
            let name = wal::timeline::history_file_name(tli);
            let path = wal::timeline::history_path(writer.dir(), tli);
            let content = std::fs::read(&path).map_err(|e| {
                let code = if e.kind() == std::io::ErrorKind::NotFound {
                    "58P01"
                } else {
                    sqlstate::IO_ERROR
                };
                PgError::new(
                    code,
                    format!("could not open file \"pg_wal/{name}\": {}", os_message(&e)),
                )
            })?;
            write_history_row(&mut conn.out, &name, &content);
            Ok(Flow::Continue)
        }
        ["LIST_DATA_FILES"] => {
            tokio::task::block_in_place(|| basebackup::write_file_list(db, &mut conn.out))?;
            Ok(Flow::Continue)
        }
        ["READ_DATA_FILE", _, offset, length] => {
            let path = w[1].trim_matches('\'');
            let (Ok(offset), Ok(length)) = (offset.parse::<u64>(), length.parse::<u64>()) else {
                return Err(syntax_error(sql));
            };
            let data = tokio::task::block_in_place(|| {
                basebackup::read_data_file(db, path, offset, length)
            })?;
            write_file_row(&mut conn.out, data.as_deref());
            Ok(Flow::Continue)
        }
        ["START_REPLICATION", rest @ ..] => {
            let mut slot = None;
            let mut start = None;
            let mut timeline = None;
            let mut i = 0;
            while i < rest.len() {
                match rest[i] {
                    "SLOT" => {
                        slot = w.get(i + 2).map(|s| s.trim_matches('"').to_string());
                        i += 2;
                    }
                    "PHYSICAL" => i += 1,
                    "TIMELINE" => {
                        let t = rest
                            .get(i + 1)
                            .and_then(|t| t.parse::<u32>().ok())
                            .ok_or_else(|| syntax_error(sql))?;
                        timeline = Some(TimeLineId(t));
                        i += 2;
                    }
                    "LOGICAL" => {
                        return Err(PgError::unsupported("logical replication is not supported"))
                    }
                    lsn => {
                        start = Some(lsn.parse::<Lsn>().map_err(|_| syntax_error(sql))?);
                        i += 1;
                    }
                }
            }
            let start = start.ok_or_else(|| syntax_error(sql))?;
            stream(db, conn, stat, slot, start, timeline, shutdown).await
        }
        _ => Err(syntax_error(sql)),
    }
}

/// The node's WAL writer, or an error if WAL is not open.
pub(crate) fn wal_writer(db: &Node) -> Result<Arc<wal::WalWriter>, PgError> {
    db.replication().wal_writer().ok_or_else(|| {
        PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "WAL is not available on this server",
        )
    })
}

/// The system identifier: created once per cluster in
/// `global/system_identifier` (when a primary first opens its data
/// directory, written and fsynced with its directory: a power cut must not
/// give the cluster a new identity its standbys would refuse), copied by
/// base backups.
pub fn system_identifier(db: &Node) -> u64 {
    let p = db
        .config()
        .data_dir
        .join("global")
        .join("system_identifier");
    if let Some(v) = std::fs::read_to_string(&p)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        return v;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let v = (now << 12) | u64::from(std::process::id() & 0xfff);
    let fsync = db.config().bool("fsync");
    if let Err(e) = pgtypes::fileutil::write_atomic(&p, format!("{v}\n").as_bytes(), fsync) {
        tracing::warn!("could not write the system identifier: {}", e.message);
    }
    v
}

/// What the reader task learned from the standby.
enum FromStandby {
    /// CopyDone: the standby ends streaming.
    Done,
    /// The connection ended.
    Gone,
}

/// Lag tracking: when each sent position left, so a later reply covering
/// it gives the write / flush / replay lag (LagTrackerWrite/Read).
struct LagTracker {
    sent: VecDeque<(Lsn, Instant)>,
    last: [Lsn; 3],
}

impl LagTracker {
    fn new() -> LagTracker {
        LagTracker {
            sent: VecDeque::new(),
            last: [Lsn::INVALID; 3],
        }
    }
    fn record(&mut self, lsn: Lsn) {
        if self.sent.len() >= 4096 {
            self.sent.pop_front();
        }
        self.sent.push_back((lsn, Instant::now()));
    }
    /// Lag for `kind` (0 write, 1 flush, 2 replay) at reported `pos`.
    fn lag(&mut self, kind: usize, pos: Lsn) -> Option<Duration> {
        if pos <= self.last[kind] {
            return None;
        }
        self.last[kind] = pos;
        let t = self
            .sent
            .iter()
            .rev()
            .find(|(l, _)| *l <= pos)
            .map(|(_, t)| *t)?;
        if kind == 2 {
            while self.sent.front().is_some_and(|(l, _)| *l <= pos) {
                self.sent.pop_front();
            }
        }
        Some(t.elapsed())
    }
}

/// The OS error text without Rust's " (os error N)" suffix, as
/// PostgreSQL's `%m`.
fn os_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// TIMELINE_HISTORY's result: the file name (text) and its content
/// (declared bytea and sent as the raw bytes, as PostgreSQL does).
fn write_history_row(out: &mut BytesMut, name: &str, content: &[u8]) {
    let _ = BackendMessage::RowDescription(vec![
        field_info("filename", TEXT_OID),
        field_info("content", BYTEA_OID),
    ])
    .encode(out);
    if let Ok(mut w) = DataRowWriter::begin(out, 2) {
        w.value(name.as_bytes());
        w.value(content);
        let _ = w.finish();
    }
    let _ = write_command_complete(out, "TIMELINE_HISTORY");
}

/// READ_DATA_FILE's result: one bytea column `data` sent as the raw
/// bytes (NULL for a file that does not exist).
fn write_file_row(out: &mut BytesMut, data: Option<&[u8]>) {
    let _ = BackendMessage::RowDescription(vec![protocol::messages::FieldInfo {
        name: "data".to_string(),
        table_oid: 0,
        column_id: 0,
        type_oid: BYTEA_OID,
        type_len: -1,
        type_mod: -1,
        format: 0,
    }])
    .encode(out);
    if let Ok(mut w) = DataRowWriter::begin(out, 1) {
        match data {
            Some(d) => w.value(d),
            None => w.null(),
        }
        let _ = w.finish();
    }
    let _ = write_command_complete(out, "READ_DATA_FILE");
}

/// Where streaming of a requested timeline must stop: `None` for the
/// server's own timeline, `Some((switch point, next timeline))` for an
/// ancestor (PostgreSQL's StartReplication checks, with its errors).
pub fn timeline_end(
    dir: &std::path::Path,
    current: TimeLineId,
    requested: Option<TimeLineId>,
    start: Lsn,
) -> Result<Option<(Lsn, TimeLineId)>, PgError> {
    let Some(req) = requested.filter(|t| t.0 != 0 && *t != current) else {
        return Ok(None);
    };
    let not_in_history = || {
        PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("requested timeline {req} is not in this server's history"),
        )
    };
    if req > current {
        return Err(not_in_history());
    }
    let history = wal::timeline::read_history(dir, current).map_err(crate::xlog::history_error)?;
    let (switch, next) = history.switch_point(req).ok_or_else(not_in_history)?;
    if switch < start {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("requested starting point {start} on timeline {req} is not in this server's history"),
        )
        .with_detail(format!(
            "This server's history forked from timeline {req} at {switch}."
        )));
    }
    Ok(Some((switch, next)))
}

/// The end-of-timeline row: the next timeline and where it starts.
fn write_next_timeline(out: &mut BytesMut, next: TimeLineId, start: Lsn) {
    write_row(
        out,
        &[("next_tli", INT8_OID), ("next_tli_startpos", TEXT_OID)],
        &[Some(&next.to_string()), Some(&start.to_string())],
        "START_STREAMING",
    );
}

/// START_REPLICATION: CopyBoth until the standby ends it or goes away.
async fn stream(
    db: &Arc<Node>,
    conn: &mut Conn,
    stat: &Arc<WalSndStat>,
    slot: Option<String>,
    start: Lsn,
    timeline: Option<TimeLineId>,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<Flow, PgError> {
    let writer = wal_writer(db)?;
    let seg = writer.segment_size();
    let flushed = writer.flushed_lsn();
    let mut ends = timeline_end(writer.dir(), writer.timeline(), timeline, start)?;
    // A cascading walsender (this node is a standby) watches its WAL's
    // timeline while it streams the current one: the node may follow its
    // own primary's promotion or be promoted itself.
    let cascading = db.replication().in_recovery() && ends.is_none();
    let streamed = writer.timeline();
    if let Some((switch, next)) = ends {
        if start == switch {
            // Nothing of the old timeline to send (PostgreSQL skips the
            // COPY too).
            write_next_timeline(&mut conn.out, next, switch);
            return Ok(Flow::Continue);
        }
    }
    if start > flushed {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "requested starting point {start} is ahead of the WAL flush position of this server {flushed}"
            ),
        ));
    }
    if let Some(s) = &slot {
        db.replication().slots.acquire(s)?;
        // A slot created without RESERVE_WAL starts reserving now.
        db.replication().slots.advance(s, start, seg)?;
    }
    struct Release(Arc<Node>, Option<String>);
    impl Drop for Release {
        fn drop(&mut self) {
            if let Some(s) = &self.1 {
                self.0.replication().slots.release(s);
            }
        }
    }
    let _release = Release(db.clone(), slot.clone());

    let _ = BackendMessage::CopyBothResponse {
        format: 0,
        column_formats: vec![],
    }
    .encode(&mut conn.out);
    conn.flush().await.map_err(|_| closed())?;
    stat.set_state(WalSndState::Catchup);
    stat.sent_lsn.store(start, Ordering::Relaxed);
    tracing::info!(
        "walsender for \"{}\" started streaming at {start}",
        stat.application_name
    );

    // The reader task owns the read half for the duration of streaming.
    let (tx, mut rx) = mpsc::channel::<FromStandby>(4);
    let lag = Arc::new(parking_lot::Mutex::new(LagTracker::new()));
    let last_reply = Arc::new(parking_lot::Mutex::new(Instant::now()));
    let reader = {
        let mut codec = std::mem::replace(&mut conn.codec, ServerCodec::new_started(0));
        let mut rbuf = std::mem::take(&mut conn.rbuf);
        // The task owns the read half and hands it back when it ends.
        let rd = conn.rd.take().ok_or_else(closed)?;
        let stat = stat.clone();
        let db = db.clone();
        let slot = slot.clone();
        let lag = lag.clone();
        let last_reply = last_reply.clone();
        tokio::spawn(async move {
            let mut rd = rd;
            let why = loop {
                let Some(m) = read_message(&mut codec, &mut rd, &mut rbuf).await else {
                    break FromStandby::Gone;
                };
                match m {
                    FrontendMessage::CopyData(b) => {
                        *last_reply.lock() = Instant::now();
                        match ReplicationMessage::decode(&b) {
                            Ok(ReplicationMessage::StandbyReply(r)) => {
                                apply_reply(&db, &stat, slot.as_deref(), &lag, r, seg);
                                // SyncRepReleaseWaiters.
                                db.replication().release_sync_waiters();
                            }
                            Ok(ReplicationMessage::HotStandbyFeedback(h)) => {
                                engine::replication::process_hot_standby_feedback(
                                    &db,
                                    &stat,
                                    slot.as_deref(),
                                    h.xmin,
                                );
                            }
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!("invalid standby message: {e}");
                                break FromStandby::Gone;
                            }
                        }
                    }
                    FrontendMessage::CopyDone => break FromStandby::Done,
                    FrontendMessage::Terminate => break FromStandby::Gone,
                    _ => {}
                }
            };
            let _ = tx.send(why).await;
            (codec, rbuf, rd)
        })
    };

    // 0 (never) still bounds the shutdown drain by the default.
    let timeout_setting = sender_timeout(db);
    let timeout = timeout_setting.unwrap_or(WAL_SENDER_TIMEOUT);
    let mut flushed_rx = writer.subscribe_flushed();
    let mut recovery_end = db.replication().subscribe_recovery_end();
    let mut sent = start;
    let mut buf = vec![0u8; MAX_SEND_SIZE];
    let mut last_send = Instant::now();
    let mut sent_done = false;
    // Shutdown of a primary: keep sending until the shutdown checkpoint
    // is out and the standby confirmed flushing it (or the timeout).
    let mut drain: Option<Instant> = None;
    let mut flushed_closed = false;
    // A standby silent for wal_sender_timeout is dropped, also while a
    // write waits on its full socket.
    let reply_deadline = || timeout_setting.map(|t| *last_reply.lock() + t);
    let timed_out = || {
        tracing::info!("terminating walsender process due to replication timeout");
        Ok(Flow::Close)
    };
    let outcome: Result<Flow, PgError> = loop {
        if *shutdown.borrow() {
            if drain.is_none() {
                stat.set_state(WalSndState::Stopping);
                if db.replication().in_recovery() {
                    // A standby logs nothing at shutdown.
                    break Ok(Flow::Close);
                }
                drain = Some(Instant::now() + timeout);
            }
            let all_sent = db.replication().wal_final() && sent >= writer.flushed_lsn();
            let confirmed = stat.flush_lsn.load(Ordering::Acquire) >= sent;
            if (all_sent && confirmed) || drain.is_some_and(|d| Instant::now() >= d) {
                break Ok(Flow::Close);
            }
        }
        if cascading {
            match cascade_change(db, &writer, streamed, sent) {
                CascadeChange::None => {}
                CascadeChange::EndAt(switch, next) => ends = Some((switch, next)),
                CascadeChange::Reconnect => {
                    tracing::info!(
                        "terminating walsender process to force cascaded standby to update timeline and reconnect"
                    );
                    break Ok(Flow::Close);
                }
            }
        }
        let flushed = match ends {
            Some((switch, _)) => writer.flushed_lsn().min(switch),
            None => writer.flushed_lsn(),
        };
        if let Some((switch, _)) = ends {
            if sent >= switch && !sent_done {
                // End of the old timeline: CopyDone, then wait for the
                // standby's.
                let _ = BackendMessage::CopyDone.encode(&mut conn.out);
                match conn.flush_within(reply_deadline).await {
                    Ok(()) => {}
                    Err(FlushEnd::Closed) => break Ok(Flow::Close),
                    Err(FlushEnd::TimedOut) => break timed_out(),
                }
                sent_done = true;
                tracing::debug!("end of streamed timeline at {switch}");
            }
        }
        if sent < flushed {
            let want = (flushed.distance_from(sent) as usize).min(MAX_SEND_SIZE);
            let n = match wal::read_raw_newest(
                writer.dir(),
                seg,
                writer.timeline(),
                sent,
                &mut buf[..want],
            ) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    break Err(PgError::new(
                        "58P01",
                        format!(
                            "requested WAL segment {} has already been removed",
                            wal::segment::walfile_name(sent, seg)
                        ),
                    ));
                }
                Err(e) => {
                    break Err(PgError::new(
                        sqlstate::IO_ERROR,
                        format!("could not read WAL at {sent}: {e}"),
                    ))
                }
            };
            if n == 0 {
                break Err(PgError::new(
                    sqlstate::IO_ERROR,
                    format!("could not read WAL at {sent}: unexpected end of segment file"),
                ));
            }
            let mut payload = BytesMut::with_capacity(n + 25);
            XLogData::encode_header(sent, flushed, wal::replication::pg_now(), &mut payload);
            payload.extend_from_slice(&buf[..n]);
            let _ = BackendMessage::CopyData(payload.freeze()).encode(&mut conn.out);
            sent += n as u64;
            lag.lock().record(sent);
            stat.sent_lsn.store(sent, Ordering::Relaxed);
            // Write as we go so the standby gets data while we read more.
            if conn.out.len() >= MAX_SEND_SIZE || sent >= flushed {
                match conn.flush_within(reply_deadline).await {
                    Ok(()) => {}
                    Err(FlushEnd::Closed) => break Ok(Flow::Close),
                    Err(FlushEnd::TimedOut) => break timed_out(),
                }
                last_send = Instant::now();
            }
            if sent >= writer.flushed_lsn() && drain.is_none() {
                stat.set_state(WalSndState::Streaming);
            }
            // Let the reader's messages through between bursts.
            if let Ok(why) = rx.try_recv() {
                break Ok(end_of_stream(why));
            }
            if reply_deadline().is_some_and(|d| Instant::now() >= d) {
                break timed_out();
            }
            continue;
        }
        // Caught up — also when the standby started right at the end of
        // WAL and nothing was sent yet (PostgreSQL's WalSndCaughtUp).
        if drain.is_none() {
            stat.set_state(WalSndState::Streaming);
        }
        let since_reply = last_reply.lock().elapsed();
        if timeout_setting.is_some() && since_reply >= timeout {
            break timed_out();
        }
        let wait = KEEPALIVE_INTERVAL.saturating_sub(last_send.elapsed());
        tokio::select! {
            r = flushed_rx.changed(), if !flushed_closed => {
                if r.is_err() {
                    // The writer closed: at shutdown, after the last flush.
                    if drain.is_none() {
                        break Ok(Flow::Close);
                    }
                    flushed_closed = true;
                }
            }
            why = rx.recv() => {
                break Ok(end_of_stream(why.unwrap_or(FromStandby::Gone)));
            }
            _ = shutdown.changed(), if drain.is_none() => {}
            // Promoted: the check at the top ends the stream at once.
            r = recovery_end.changed(), if cascading => {
                if r.is_err() {
                    break Ok(Flow::Close);
                }
            }
            // Draining: the shutdown checkpoint and the standby's reply
            // are looked for often.
            _ = tokio::time::sleep(DRAIN_POLL), if drain.is_some() => {}
            _ = tokio::time::sleep(wait), if !sent_done => {
                let ka = ReplicationMessage::Keepalive(wal::PrimaryKeepalive {
                    wal_end: writer.flushed_lsn(),
                    send_time: wal::replication::pg_now(),
                    reply_requested: since_reply >= timeout / 2,
                });
                let _ = BackendMessage::CopyData(ka.to_bytes()).encode(&mut conn.out);
                match conn.flush_within(reply_deadline).await {
                    Ok(()) => {}
                    Err(FlushEnd::Closed) => break Ok(Flow::Close),
                    Err(FlushEnd::TimedOut) => break timed_out(),
                }
                last_send = Instant::now();
            }
        }
    };
    // Stop the reader and take the read half back.
    let done = matches!(outcome, Ok(Flow::Continue));
    if done {
        if !sent_done {
            let _ = BackendMessage::CopyDone.encode(&mut conn.out);
        }
        match ends {
            Some((switch, next)) if sent_done => write_next_timeline(&mut conn.out, next, switch),
            _ => {
                let _ = write_command_complete(&mut conn.out, "START_REPLICATION");
            }
        }
    }
    stat.set_state(WalSndState::Startup);
    if !done {
        // The connection ends: stop the reader wherever it is.
        reader.abort();
        return outcome.map(|_| Flow::Close);
    }
    // CopyDone: the reader has finished; take the read half back.
    match reader.await {
        Ok((codec, rbuf, rd)) => {
            conn.codec = codec;
            conn.rbuf = rbuf;
            conn.rd = Some(rd);
            outcome
        }
        Err(_) => Ok(Flow::Close),
    }
}

/// What changed under a cascading walsender streaming timeline
/// `streamed` (see [`cascade_change`]).
enum CascadeChange {
    None,
    /// The standby switched to timeline `.1` at `.0`: streaming ends there
    /// with the end-of-timeline exchange, as for a historic timeline.
    EndAt(Lsn, TimeLineId),
    /// The standby was promoted, or switched behind what was already sent:
    /// the cascaded standby must reconnect and ask again (PostgreSQL's
    /// walsender exits in both cases).
    Reconnect,
}

/// WalSndLoop's checks for a cascading walsender: has the node left
/// recovery, or has its WAL (`writer`) moved past timeline `streamed`
/// after `sent` was sent?
fn cascade_change(
    db: &Node,
    writer: &Arc<wal::WalWriter>,
    streamed: TimeLineId,
    sent: Lsn,
) -> CascadeChange {
    let current = db.replication().wal_writer();
    if !db.replication().in_recovery() || !current.is_some_and(|w| Arc::ptr_eq(&w, writer)) {
        return CascadeChange::Reconnect;
    }
    let now = writer.timeline();
    if now == streamed {
        return CascadeChange::None;
    }
    match timeline_end(writer.dir(), now, Some(streamed), Lsn::INVALID) {
        Ok(Some((switch, next))) if sent <= switch => CascadeChange::EndAt(switch, next),
        _ => CascadeChange::Reconnect,
    }
}

fn end_of_stream(why: FromStandby) -> Flow {
    match why {
        FromStandby::Done => Flow::Continue,
        FromStandby::Gone => Flow::Close,
    }
}

fn closed() -> PgError {
    PgError::new(sqlstate::CONNECTION_FAILURE, "connection to client lost")
}

fn apply_reply(
    db: &Node,
    stat: &WalSndStat,
    slot: Option<&str>,
    lag: &parking_lot::Mutex<LagTracker>,
    r: wal::StandbyReply,
    seg: u64,
) {
    let mut lt = lag.lock();
    for (i, (pos, dst, lag_dst)) in [
        (r.write_lsn, &stat.write_lsn, &stat.write_lag_us),
        (r.flush_lsn, &stat.flush_lsn, &stat.flush_lag_us),
        (r.apply_lsn, &stat.replay_lsn, &stat.replay_lag_us),
    ]
    .into_iter()
    .enumerate()
    {
        if !pos.is_valid() {
            continue;
        }
        dst.store(pos, Ordering::Relaxed);
        if let Some(l) = lt.lag(i, pos) {
            lag_dst.store(l.as_micros() as u64, Ordering::Relaxed);
        }
    }
    drop(lt);
    if let (Some(s), true) = (slot, r.flush_lsn.is_valid()) {
        if let Err(e) = db.replication().slots.advance(s, r.flush_lsn, seg) {
            tracing::warn!("could not advance replication slot \"{s}\": {}", e.message);
        }
    }
}
