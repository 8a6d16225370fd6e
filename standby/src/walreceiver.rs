//! The walreceiver (walreceiver.c): streams WAL from the primary into the
//! standby's `pg_wal`.
//!
//! ```text
//!  connect (replication=true) → IDENTIFY_SYSTEM: same system identifier?
//!    primary on a newer timeline → TIMELINE_HISTORY for each missing
//!    history file (checked, then written); our timeline must be in its
//!    history and we must not be past its switch point
//!  START_REPLICATION [SLOT s] PHYSICAL <end of local WAL> TIMELINE <ours>
//!  loop: w → write_raw + flush (fsync) → receive_lsn; reply r
//!        k → reply r if asked
//!        replay finished a transaction (applied_xact_end): reply r at once
//!          (a remote_apply commit on the primary waits for it)
//!        every 100 ms: reply r if replay moved or status interval passed;
//!                      hot_standby_feedback on: h (oldest xmin of the sessions
//!                      and of cascaded standbys) if
//!                      it changed or status interval passed; off: one h
//!                      with xmin 0 per connection (the primary forgets)
//!  any error or disconnect → log, back off (100 ms doubling to 5 s; 100 ms
//!  again after a connection that streamed), reconnect and resume from the
//!  local end of WAL
//! ```
//!
//! ## Following a promotion
//!
//! A primary promoted from a sibling standby runs timeline N+1 whose
//! history says where N ended. Asked for timeline N, it streams N up to
//! that switch point, then ends the copy and names the next timeline and
//! where it starts. The walreceiver then switches its WAL writer to the
//! new timeline at that point ([`WalWriter::switch_timeline`]) and asks
//! again, on the same connection, for the new timeline — `recovery_target_
//! timeline = 'latest'` (the default); `current` stays on the timeline it
//! has. The startup thread sees the writer's timeline change and reopens
//! the segment it reads (the same number is now the new timeline's file);
//! replay itself goes on with the same state, so commits replayed after
//! the switch bump the completion counter like any other.
//!
//! A standby that already holds WAL of timeline N past the switch point
//! has diverged: it refuses with PostgreSQL's "requested timeline N+1 is
//! not a child of this server's history", keeps its WAL as it is, stays up
//! serving reads and tries again after the backoff (an operator may
//! re-point it). A primary of another system (different system
//! identifier) is refused the same way, before anything is received.
//!
//! WAL is acknowledged as flushed only after [`WalWriter::flush`] returned:
//! the primary's slot may then drop it. The local end of WAL is the
//! writer's insert position (bytes already received are skipped by
//! [`WalWriter::write_raw`] if the primary resends them).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::node::Node;
use engine::replication::WalRcvStat;
use pgtypes::TimeLineId;
use protocol::client::{Client, ClientError};
use protocol::messages::{BackendMessage, FrontendMessage};
use tokio::sync::watch;
use wal::replication::pg_now;
use wal::replication::HotStandbyFeedback;
use wal::{Lsn, ReplicationMessage, StandbyReply, WalWriter};

use crate::conninfo::ConnInfo;

/// Walreceiver settings.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    /// Where the primary is.
    pub conninfo: ConnInfo,
    /// The raw conninfo (shown in `pg_stat_wal_receiver`).
    pub conninfo_text: String,
    /// `primary_slot_name`.
    pub slot: Option<String>,
    /// `wal_receiver_status_interval`.
    pub status_interval: Duration,
    /// `hot_standby_feedback`: report the oldest xmin of this standby's
    /// sessions so the primary keeps the row versions they may need.
    pub hot_standby_feedback: bool,
    /// `recovery_target_timeline`.
    pub target_timeline: TargetTimeline,
    /// `wal_receiver_timeout` (`None`: 0, never): a primary silent this long
    /// is given up on; at half of it the standby asks for a reply.
    pub receiver_timeout: Option<Duration>,
}

impl ReceiverConfig {
    /// Whether going from `old` to this configuration needs a new
    /// connection: the primary or the slot changed. The other settings
    /// apply on the running one.
    pub fn repointed(&self, old: &ReceiverConfig) -> bool {
        self.conninfo_text != old.conninfo_text || self.slot != old.slot
    }
}

/// How often positions are checked for a reply.
const TICK: Duration = Duration::from_millis(100);
/// Reconnect backoff bounds.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Runs the walreceiver until `shutdown` becomes true. A new value in
/// `config` (a configuration reload that changed `primary_conninfo` or
/// `primary_slot_name`) ends the current connection and connects with it
/// at once — PostgreSQL's walreceiver exits and is restarted for that.
pub async fn run(
    db: Arc<Node>,
    writer: Arc<WalWriter>,
    mut config: watch::Receiver<ReceiverConfig>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut backoff = BACKOFF_MIN;
    let mut retried_at_once = false;
    db.replication()
        .receive_lsn
        .store(writer.flushed_lsn(), Ordering::Relaxed);
    loop {
        if *shutdown.borrow() {
            break;
        }
        let cfg = config.borrow_and_update().clone();
        let began = Instant::now();
        let mut streamed = false;
        let r = stream_once(
            &db,
            &writer,
            &cfg,
            &mut config,
            &mut shutdown,
            &mut streamed,
        )
        .await;
        if *shutdown.borrow() {
            break;
        }
        let changed = config.borrow().repointed(&cfg);
        match r {
            Ok(()) if changed => {}
            Ok(()) => tracing::info!("replication terminated by primary server"),
            Err(e) if e.refused => tracing::error!("{}", e.message),
            Err(e) => tracing::error!("could not receive data from WAL stream: {}", e.message),
        }
        db.replication()
            .update_receiver(|s| s.status = "waiting".into());
        if changed {
            tracing::info!("primary_conninfo or primary_slot_name changed: reconnecting");
            backoff = BACKOFF_MIN;
            continue;
        }
        // The primary was reachable and streamed: the next attempt goes
        // out promptly (a cascading upstream promoted ends the connection
        // on purpose, and its standbys should follow at once).
        if streamed || began.elapsed() > Duration::from_secs(10) {
            backoff = BACKOFF_MIN;
        }
        // After a connection that streamed, the first attempt goes out
        // with no wait at all (the end of a timeline is the common case:
        // following a promotion is then one round trip sooner); the next
        // failure waits as usual, so an upstream that keeps ending
        // connections is never retried in a tight loop.
        if streamed && !retried_at_once {
            retried_at_once = true;
            continue;
        }
        retried_at_once = false;
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.changed() => {}
            _ = config_changed(&mut config) => {}
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
    db.replication().set_receiver(None);
}

fn reply(writer: &WalWriter, db: &Node, requested: bool) -> FrontendMessage {
    let flushed = writer.flushed_lsn();
    // Replay may run ahead of the flush (it follows the written LSN); the
    // primary is told what is applied *and* durable, so apply never
    // passes flush in pg_stat_replication, as in PostgreSQL.
    let applied = db
        .replication()
        .replay_lsn
        .load(Ordering::Relaxed)
        .min(flushed);
    let m = ReplicationMessage::StandbyReply(StandbyReply {
        write_lsn: writer.insert_lsn(),
        flush_lsn: flushed,
        apply_lsn: applied,
        send_time: pg_now(),
        reply_requested: requested,
    });
    FrontendMessage::CopyData(m.to_bytes())
}

/// The xmin this standby holds: its sessions' oldest, and what its own
/// cascaded standbys report (their feedback and slots), which it passes
/// up (0: none).
fn feedback_xmin(db: &Node) -> u64 {
    let sessions = db.procarray().oldest_session_xmin().0;
    match (sessions, db.replication().required_xmin()) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// An `h` message carrying `xmin` (0: hold nothing).
fn feedback(xmin: u64) -> FrontendMessage {
    let m = ReplicationMessage::HotStandbyFeedback(HotStandbyFeedback {
        send_time: pg_now(),
        xmin,
        catalog_xmin: 0,
    });
    FrontendMessage::CopyData(m.to_bytes())
}

/// What hot-standby feedback to send now, if any (XLogWalRcvSendHSFeedback):
/// with `hot_standby_feedback` on, the oldest xmin of the standby's sessions
/// when it changed or the status interval passed; off, one invalid xmin
/// per connection (and after a reload turned it off) so the primary
/// forgets what an earlier setting made it hold. `last` is what was last sent on this connection (None: nothing).
fn feedback_due(
    on: bool,
    current: u64,
    last: Option<u64>,
    since_last: Duration,
    interval: Duration,
) -> Option<u64> {
    if !on {
        // Once per connection, and once more after a reload turned it off.
        return (last != Some(0)).then_some(0);
    }
    (last != Some(current) || since_last >= interval).then_some(current)
}

/// Why a connection ended badly.
#[derive(Debug)]
pub struct Failure {
    /// The message logged.
    pub message: String,
    /// Refused on purpose (another system, a diverged timeline): logged as
    /// is, without "could not receive data from WAL stream".
    pub refused: bool,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            refused: false,
        }
    }
}

fn refuse(message: String) -> Failure {
    Failure {
        message,
        refused: true,
    }
}

/// How far this standby follows new timelines (`recovery_target_timeline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetTimeline {
    /// `latest`: every promotion of its primary.
    Latest,
    /// `current`: the timeline it has now.
    Current,
    /// Up to this timeline.
    Id(TimeLineId),
}

impl TargetTimeline {
    /// Parses the setting (already validated by the configuration).
    pub fn parse(v: &str) -> TargetTimeline {
        match v.to_ascii_lowercase().as_str() {
            "current" => TargetTimeline::Current,
            other => match other.parse::<u32>() {
                Ok(n) if n > 0 => TargetTimeline::Id(TimeLineId(n)),
                _ => TargetTimeline::Latest,
            },
        }
    }

    /// Whether a switch from `from` to `to` is wanted.
    fn follows(self, from: TimeLineId, to: TimeLineId) -> bool {
        match self {
            TargetTimeline::Latest => true,
            TargetTimeline::Current => to == from,
            TargetTimeline::Id(t) => to <= t,
        }
    }
}

/// The "not a child" refusal (PostgreSQL's words).
fn not_a_child(requested: TimeLineId, detail: String) -> Failure {
    refuse(format!(
        "requested timeline {requested} is not a child of this server's history\nDETAIL:  {detail}"
    ))
}

/// Checks that this standby — WAL up to `end` on timeline `ours` — can
/// follow `history` (the primary's timeline's): ours is an ancestor and it
/// ended no earlier than `end`.
pub fn check_child(
    history: &wal::timeline::TimeLineHistory,
    ours: TimeLineId,
    end: Lsn,
) -> Result<(), Failure> {
    let target = history.tip();
    if target == ours {
        return Ok(());
    }
    match history.switch_point(ours) {
        Some((switch, _)) if end <= switch => Ok(()),
        Some((switch, _)) => Err(not_a_child(
            target,
            format!(
                "Latest WAL location is at {end} on timeline {ours}, but in the history of the requested timeline, the server forked off from that timeline at {switch}."
            ),
        )),
        None => Err(not_a_child(
            target,
            format!("Timeline {ours} is not in the history of timeline {target}."),
        )),
    }
}

/// TIMELINE_HISTORY `tli`: the file's raw content.
async fn fetch_history(client: &mut Client, tli: TimeLineId) -> Result<Vec<u8>, String> {
    client
        .send(FrontendMessage::Query(format!("TIMELINE_HISTORY {tli}")))
        .await
        .map_err(|e| e.to_string())?;
    let mut content = None;
    let mut error = None;
    loop {
        match client.recv().await.map_err(|e| e.to_string())? {
            BackendMessage::DataRow(v) => {
                content = v.get(1).cloned().flatten().map(|b| b.to_vec());
            }
            BackendMessage::ErrorResponse(e) => error = Some(e.message().to_string()),
            BackendMessage::ReadyForQuery(_) => break,
            _ => {}
        }
    }
    if let Some(e) = error {
        return Err(format!(
            "could not receive timeline history file from the primary server: {e}"
        ));
    }
    content.ok_or_else(|| {
        "could not receive timeline history file from the primary server: no content".to_string()
    })
}

/// IDENTIFY_SYSTEM and the timeline checks (see the module docs); fetches
/// missing history files. Returns the primary's timeline.
async fn identify(
    db: &Node,
    writer: &WalWriter,
    client: &mut Client,
    target: TargetTimeline,
) -> Result<TimeLineId, Failure> {
    let ident = client
        .query_rows("IDENTIFY_SYSTEM")
        .await
        .map_err(|e| e.to_string())?;
    tracing::debug!("primary IDENTIFY_SYSTEM: {ident:?}");
    let row = ident
        .first()
        .ok_or_else(|| "IDENTIFY_SYSTEM returned no row".to_string())?;
    let field = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let (sysid, tli) = (field(0), field(1));
    let ours = common::xlog::system_identifier(db).to_string();
    if sysid != ours {
        return Err(refuse(format!(
            "database system identifier differs between the primary and standby\nDETAIL:  The primary's identifier is {sysid}, the standby's identifier is {ours}."
        )));
    }
    let primary_tli = tli
        .parse::<u32>()
        .ok()
        .filter(|t| *t > 0)
        .map(TimeLineId)
        .ok_or_else(|| format!("invalid timeline in IDENTIFY_SYSTEM: \"{tli}\""))?;
    let current = writer.timeline();
    if primary_tli < current {
        return Err(refuse(format!(
            "highest timeline {primary_tli} of the primary is behind recovery timeline {current}"
        )));
    }
    if primary_tli > current {
        let dir = writer.dir();
        fetch_histories(db, dir, client, current, primary_tli).await?;
        if target.follows(current, primary_tli) {
            let history =
                wal::timeline::read_history(dir, primary_tli).map_err(|e| refuse(e.to_string()))?;
            check_child(&history, current, writer.flushed_lsn())?;
        }
    }
    Ok(primary_tli)
}

/// WalRcvFetchTimeLineHistoryFiles: the history files of the timelines
/// after `current` up to `newest` that `dir` lacks, fetched from the
/// primary, checked and written.
async fn fetch_histories(
    db: &Node,
    dir: &std::path::Path,
    client: &mut Client,
    current: TimeLineId,
    newest: TimeLineId,
) -> Result<(), Failure> {
    for t in (current.0 + 1)..=newest.0 {
        let t = TimeLineId(t);
        if wal::timeline::history_path(dir, t).exists() {
            continue;
        }
        tracing::info!("fetching timeline history file for timeline {t} from primary server");
        let content = fetch_history(client, t).await?;
        let fsync = db.config().bool("fsync");
        tokio::task::block_in_place(|| wal::timeline::write_history_file(dir, t, &content, fsync))
            .map_err(|e| {
                let hint = e
                    .hint()
                    .map(|h| format!("\nHINT:  {h}"))
                    .unwrap_or_default();
                refuse(format!("{e}{hint}"))
            })?;
    }
    Ok(())
}

/// One connection: connect, stream until it ends (or `config` changes). `Ok` when the primary
/// ended streaming, `Err` on any failure.
async fn stream_once(
    db: &Arc<Node>,
    writer: &Arc<WalWriter>,
    cfg: &ReceiverConfig,
    config: &mut watch::Receiver<ReceiverConfig>,
    shutdown: &mut watch::Receiver<bool>,
    streamed: &mut bool,
) -> Result<(), Failure> {
    let ci = &cfg.conninfo;
    let params = ci.startup_params();
    // Connecting and identifying are bounded by wal_receiver_timeout too:
    // a primary whose path went silent may accept the TCP connection (or
    // a middlebox may) and never answer.
    let setup = async {
        let mut client = ci
            .connect(&params)
            .await
            .map_err(|e| Failure::from(format!("could not connect to the primary server: {e}")))?;
        identify(db, writer, &mut client, cfg.target_timeline).await?;
        Ok::<_, Failure>(client)
    };
    let bounded = async {
        match cfg.receiver_timeout {
            Some(t) => tokio::time::timeout(t, setup).await.unwrap_or_else(|_| {
                Err(Failure::from(
                    "could not connect to the primary server: timeout expired".to_string(),
                ))
            }),
            None => setup.await,
        }
    };
    let mut client = tokio::select! {
        c = bounded => c?,
        _ = shutdown.changed() => return Ok(()),
        _ = config_changed(config) => return Ok(()),
    };
    loop {
        let tli = writer.timeline();
        let start = writer.insert_lsn();
        match stream_timeline(
            db,
            writer,
            cfg,
            &mut client,
            config,
            shutdown,
            start,
            tli,
            streamed,
        )
        .await?
        {
            Some((next, at)) => {
                tracing::info!("replication terminated by primary server\nDETAIL:  End of WAL reached on timeline {tli} at {at}.");
                if !cfg.target_timeline.follows(tli, next) {
                    return Err(refuse(format!(
                        "not following timeline {next}: recovery_target_timeline stays on timeline {tli}"
                    )));
                }
                let flushed = writer.flushed_lsn();
                if flushed != at {
                    return Err(not_a_child(
                        next,
                        format!(
                            "Latest WAL location is at {flushed} on timeline {tli}, but in the history of the requested timeline, the server forked off from that timeline at {at}."
                        ),
                    ));
                }
                // The upstream switched while we streamed (a cascading
                // standby following its own primary): its history may be
                // new to us.
                fetch_histories(db, writer.dir(), &mut client, tli, next).await?;
                let w = writer.clone();
                tokio::task::block_in_place(|| w.switch_timeline(next, at))
                    .map_err(|e| format!("could not switch to timeline {next}: {e}"))?;
                tracing::info!("new timeline {next} forked off current timeline {tli} at {at}");
            }
            None => return Ok(()),
        }
    }
}

/// START_REPLICATION on timeline `tli` from `start`; streams until the
/// primary or shutdown ends it. `Some((next timeline, its start))` when the
/// primary ended a timeline that is not its newest.
// The connection, what it streams and the two signals that end it.
#[allow(clippy::too_many_arguments)]
async fn stream_timeline(
    db: &Arc<Node>,
    writer: &Arc<WalWriter>,
    cfg: &ReceiverConfig,
    client: &mut Client,
    config: &mut watch::Receiver<ReceiverConfig>,
    shutdown: &mut watch::Receiver<bool>,
    start: Lsn,
    tli: TimeLineId,
    streamed: &mut bool,
) -> Result<Option<(TimeLineId, Lsn)>, Failure> {
    let ci = &cfg.conninfo;
    let cmd = match &cfg.slot {
        Some(s) => format!("START_REPLICATION SLOT {s} PHYSICAL {start} TIMELINE {tli}"),
        None => format!("START_REPLICATION PHYSICAL {start} TIMELINE {tli}"),
    };
    client
        .send(FrontendMessage::Query(cmd))
        .await
        .map_err(|e| e.to_string())?;
    loop {
        match client.recv().await.map_err(|e| e.to_string())? {
            BackendMessage::CopyBothResponse { .. } => break,
            BackendMessage::ErrorResponse(e) => {
                return Err(format!("could not start WAL streaming: {}", e.message()).into())
            }
            BackendMessage::NoticeResponse(_) => {}
            // Nothing to stream: the primary answers with the next
            // timeline at once.
            BackendMessage::RowDescription(_) => return Ok(read_next_timeline(client).await?),
            other => {
                return Err(format!("unexpected response to START_REPLICATION: {other:?}").into())
            }
        }
    }
    tracing::info!("started streaming WAL from primary at {start} on timeline {tli}");
    *streamed = true;
    db.replication().set_receiver(Some(WalRcvStat {
        pid: std::process::id() as i32,
        status: "streaming".into(),
        receive_start_lsn: start.0,
        receive_start_tli: tli.0,
        received_tli: tli.0,
        written_lsn: writer.insert_lsn().0,
        flushed_lsn: writer.flushed_lsn().0,
        latest_end_lsn: 0,
        slot_name: cfg.slot.clone().unwrap_or_default(),
        sender_host: ci.host.clone(),
        sender_port: i32::from(ci.port),
        conninfo: cfg.conninfo_text.clone(),
    }));
    let mut last_reply = Instant::now();
    let mut last_applied = Lsn::INVALID;
    let mut sent_xmin: Option<u64> = None;
    let mut last_feedback = Instant::now();
    let mut tick = tokio::time::interval(TICK);
    // The settings a reload may change without a reconnection.
    let mut live = cfg.clone();
    // wal_receiver_timeout: when the primary last sent anything, and
    // whether this silence was already answered with a ping.
    let mut last_recv = Instant::now();
    let mut pinged = false;
    loop {
        let cfg = &live;
        let msg = tokio::select! {
            m = client.recv() => m,
            _ = tick.tick() => {
                if let Some(t) = cfg.receiver_timeout {
                    let silent = last_recv.elapsed();
                    if silent >= t {
                        return Err("terminating walreceiver due to timeout".to_string().into());
                    }
                    if silent >= t / 2 && !pinged {
                        // WalRcvComputeNextWakeup's ping: ask for a reply.
                        client.send(reply(writer, db, true)).await.map_err(|e| e.to_string())?;
                        pinged = true;
                    }
                }
                let current = if cfg.hot_standby_feedback {
                    feedback_xmin(db)
                } else {
                    0
                };
                if let Some(x) = feedback_due(
                    cfg.hot_standby_feedback,
                    current,
                    sent_xmin,
                    last_feedback.elapsed(),
                    cfg.status_interval,
                ) {
                    client.send(feedback(x)).await.map_err(|e| e.to_string())?;
                    tracing::debug!("sending hot standby feedback xmin {x}");
                    sent_xmin = Some(x);
                    last_feedback = Instant::now();
                }
                let applied = db.replication().replay_lsn.load(Ordering::Relaxed);
                if applied != last_applied || last_reply.elapsed() >= cfg.status_interval {
                    last_applied = applied;
                    client.send(reply(writer, db, false)).await.map_err(|e| e.to_string())?;
                    last_reply = Instant::now();
                }
                continue;
            }
            _ = db.replication().applied_xact_end.notified() => {
                // Replay finished a transaction: report the apply position
                // now (WalRcvForceReply), for `remote_apply` commits.
                let applied = db.replication().replay_lsn.load(Ordering::Relaxed);
                if applied != last_applied {
                    last_applied = applied;
                    client.send(reply(writer, db, false)).await.map_err(|e| e.to_string())?;
                    last_reply = Instant::now();
                }
                continue;
            }
            _ = shutdown.changed() => {
                let _ = client.send(FrontendMessage::CopyDone).await;
                return Ok(None);
            }
            _ = config_changed(config) => {
                let now = config.borrow_and_update().clone();
                if now.repointed(cfg) {
                    // Re-pointed: this connection ends, `run` connects anew.
                    let _ = client.send(FrontendMessage::CopyDone).await;
                    return Ok(None);
                }
                // hot_standby_feedback / wal_receiver_status_interval:
                // in force from the next tick, on this connection.
                live = now;
                continue;
            }
        };
        if msg.is_ok() {
            last_recv = Instant::now();
            pinged = false;
        }
        let msg = match msg {
            Ok(m) => m,
            Err(ClientError::Closed) => {
                return Err("primary closed the connection".to_string().into())
            }
            Err(e) => return Err(e.to_string().into()),
        };
        match msg {
            BackendMessage::CopyData(b) => match ReplicationMessage::decode(&b) {
                Ok(ReplicationMessage::XLogData(x)) => {
                    let w = writer.clone();
                    let end = tokio::task::block_in_place(|| {
                        w.write_raw(x.start, &x.data)?;
                        w.flush(w.insert_lsn())
                    })
                    .map_err(|e| format!("could not write received WAL: {e}"))?;
                    db.replication().receive_lsn.store(end, Ordering::Relaxed);
                    db.replication().update_receiver(|s| {
                        s.written_lsn = end.0;
                        s.flushed_lsn = end.0;
                        s.latest_end_lsn = x.wal_end.0;
                    });
                    client
                        .send(reply(writer, db, false))
                        .await
                        .map_err(|e| e.to_string())?;
                    last_reply = Instant::now();
                }
                Ok(ReplicationMessage::Keepalive(k)) => {
                    db.replication()
                        .update_receiver(|s| s.latest_end_lsn = k.wal_end.0);
                    if k.reply_requested {
                        client
                            .send(reply(writer, db, false))
                            .await
                            .map_err(|e| e.to_string())?;
                        last_reply = Instant::now();
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(format!("invalid replication message: {e}").into()),
            },
            BackendMessage::CopyDone => {
                client
                    .send(FrontendMessage::CopyDone)
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok(read_next_timeline(client).await?);
            }
            BackendMessage::ErrorResponse(e) => return Err(e.message().to_string().into()),
            _ => {}
        }
    }
}

/// After the copy ended: the primary's optional row (next_tli,
/// next_tli_startpos), up to ReadyForQuery.
async fn read_next_timeline(client: &mut Client) -> Result<Option<(TimeLineId, Lsn)>, String> {
    let mut next = None;
    loop {
        match client.recv().await.map_err(|e| e.to_string())? {
            BackendMessage::DataRow(v) => {
                let text = |i: usize| {
                    v.get(i)
                        .cloned()
                        .flatten()
                        .map(|b| String::from_utf8_lossy(&b).to_string())
                        .unwrap_or_default()
                };
                let tli = text(0)
                    .parse::<u32>()
                    .ok()
                    .filter(|t| *t > 0)
                    .map(TimeLineId);
                let at = text(1).parse::<Lsn>().ok();
                match (tli, at) {
                    (Some(t), Some(a)) => next = Some((t, a)),
                    _ => {
                        return Err(format!(
                            "invalid end-of-timeline row from the primary: {v:?}"
                        ))
                    }
                }
            }
            BackendMessage::ErrorResponse(e) => return Err(e.message().to_string()),
            BackendMessage::ReadyForQuery(_) => return Ok(next),
            _ => {}
        }
    }
}

/// Resolves when the configuration is re-pointed (a reload changed
/// `primary_conninfo` / `primary_slot_name`). A configuration whose
/// sender is gone never changes again: pending forever, not a change
/// every poll (which would reconnect in a loop).
async fn config_changed(config: &mut watch::Receiver<ReceiverConfig>) {
    if config.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On: sent at the first chance, when the xmin changes and every
    /// status interval; off: once, invalid, per connection.
    #[test]
    fn feedback_schedule() {
        let i = Duration::from_secs(10);
        let short = Duration::from_millis(100);
        assert_eq!(feedback_due(true, 7, None, short, i), Some(7), "first");
        assert_eq!(feedback_due(true, 7, Some(7), short, i), None, "unchanged");
        assert_eq!(feedback_due(true, 9, Some(7), short, i), Some(9), "changed");
        assert_eq!(
            feedback_due(true, 0, Some(7), short, i),
            Some(0),
            "released"
        );
        assert_eq!(feedback_due(true, 7, Some(7), i, i), Some(7), "interval");
        assert_eq!(feedback_due(false, 7, None, short, i), Some(0), "off: once");
        assert_eq!(
            feedback_due(false, 7, Some(0), i, i),
            None,
            "off: only once"
        );
    }
}
