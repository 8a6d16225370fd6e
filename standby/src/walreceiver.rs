//! The walreceiver (walreceiver.c): streams WAL from the primary into the
//! standby's `pg_wal`.
//!
//! ```text
//!  connect (replication=true) → IDENTIFY_SYSTEM
//!  START_REPLICATION [SLOT s] PHYSICAL <end of local WAL>
//!  loop: w → write_raw + flush (fsync) → receive_lsn; reply r
//!        k → reply r if asked
//!        every 100 ms: reply r if replay moved or status interval passed;
//!                      hot_standby_feedback on: h (oldest session xmin) if
//!                      it changed or status interval passed; off: one h
//!                      with xmin 0 per connection (the primary forgets)
//!  any error or disconnect → log, back off (100 ms doubling to 5 s), reconnect
//!  and resume from the local end of WAL
//! ```
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
}

/// How often positions are checked for a reply.
const TICK: Duration = Duration::from_millis(100);
/// Reconnect backoff bounds.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Runs the walreceiver until `shutdown` becomes true.
pub async fn run(
    db: Arc<Node>,
    writer: Arc<WalWriter>,
    cfg: ReceiverConfig,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut backoff = BACKOFF_MIN;
    db.replication()
        .receive_lsn
        .store(writer.flushed_lsn(), Ordering::Relaxed);
    loop {
        if *shutdown.borrow() {
            break;
        }
        let began = Instant::now();
        let r = stream_once(&db, &writer, &cfg, &mut shutdown).await;
        if *shutdown.borrow() {
            break;
        }
        match r {
            Ok(()) => tracing::info!("replication terminated by primary server"),
            Err(e) => tracing::error!("could not receive data from WAL stream: {e}"),
        }
        db.replication()
            .update_receiver(|s| s.status = "waiting".into());
        if began.elapsed() > Duration::from_secs(10) {
            backoff = BACKOFF_MIN;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.changed() => {}
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
/// per connection so the primary forgets what an earlier setting made it
/// hold. `last` is what was last sent on this connection (None: nothing).
fn feedback_due(
    on: bool,
    current: u64,
    last: Option<u64>,
    since_last: Duration,
    interval: Duration,
) -> Option<u64> {
    if !on {
        return last.is_none().then_some(0);
    }
    (last != Some(current) || since_last >= interval).then_some(current)
}

/// One connection: connect, stream until it ends. `Ok` when the primary
/// ended streaming, `Err` on any failure.
async fn stream_once(
    db: &Arc<Node>,
    writer: &Arc<WalWriter>,
    cfg: &ReceiverConfig,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<(), String> {
    let ci = &cfg.conninfo;
    let params = ci.startup_params();
    let mut client = tokio::select! {
        c = Client::connect((ci.host.as_str(), ci.port), &params) => {
            c.map_err(|e| format!("could not connect to the primary server: {e}"))?
        }
        _ = shutdown.changed() => return Ok(()),
    };
    let ident = client
        .query_rows("IDENTIFY_SYSTEM")
        .await
        .map_err(|e| e.to_string())?;
    tracing::debug!("primary IDENTIFY_SYSTEM: {ident:?}");
    let start = writer.insert_lsn();
    let cmd = match &cfg.slot {
        Some(s) => format!("START_REPLICATION SLOT {s} PHYSICAL {start}"),
        None => format!("START_REPLICATION PHYSICAL {start}"),
    };
    client
        .send(FrontendMessage::Query(cmd))
        .await
        .map_err(|e| e.to_string())?;
    loop {
        match client.recv().await.map_err(|e| e.to_string())? {
            BackendMessage::CopyBothResponse { .. } => break,
            BackendMessage::ErrorResponse(e) => {
                return Err(format!("could not start WAL streaming: {}", e.message()))
            }
            BackendMessage::NoticeResponse(_) => {}
            other => {
                return Err(format!(
                    "unexpected response to START_REPLICATION: {other:?}"
                ))
            }
        }
    }
    tracing::info!(
        "started streaming WAL from primary at {start} on timeline {}",
        wal::segment::TIMELINE
    );
    db.replication().set_receiver(Some(WalRcvStat {
        pid: std::process::id() as i32,
        status: "streaming".into(),
        receive_start_lsn: start.0,
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
    loop {
        let msg = tokio::select! {
            m = client.recv() => m,
            _ = tick.tick() => {
                let current = if cfg.hot_standby_feedback {
                    db.procarray().oldest_session_xmin().0
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
            _ = shutdown.changed() => {
                let _ = client.send(FrontendMessage::CopyDone).await;
                return Ok(());
            }
        };
        let msg = match msg {
            Ok(m) => m,
            Err(ClientError::Closed) => return Err("primary closed the connection".into()),
            Err(e) => return Err(e.to_string()),
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
                Err(e) => return Err(format!("invalid replication message: {e}")),
            },
            BackendMessage::CopyDone => {
                let _ = client.send(FrontendMessage::CopyDone).await;
                return Ok(());
            }
            BackendMessage::ErrorResponse(e) => return Err(e.message().to_string()),
            _ => {}
        }
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
