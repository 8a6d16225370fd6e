//! In-process streaming: a primary `Node` with a WAL writer and the
//! walsender, a base backup taken by the standby's client, then the
//! walreceiver and continuous redo. Transaction records are inserted
//! directly into the primary's WAL (the SQL layer's WAL logging is not
//! needed to test the stream and the replay of completions), then a
//! promotion that must cut off a half-received record.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::TransactionId;
use standby::conninfo::ConnInfo;
use wal::{Lsn, WalPosition, WalRecord, WalWriter, WalWriterOptions, XactRecord};

const SEG: u64 = 1 << 20;

fn wait(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn open(dir: &std::path::Path, role: Role, extra: &[String]) -> Arc<Node> {
    let mut o = vec!["fsync=off".to_string()];
    o.extend_from_slice(extra);
    let c = Config::load(dir, &o).unwrap();
    Node::open(c, role).unwrap()
}

#[test]
fn stream_base_backup_and_replay_completions() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let pdir = tempfile::tempdir().unwrap();
    let sdir = tempfile::tempdir().unwrap();
    let primary = open(pdir.path(), Role::Primary, &[]);
    let pw = Arc::new(
        WalWriter::open(
            pdir.path().join("pg_wal"),
            WalWriterOptions::new(SEG, false),
            WalPosition::initial(SEG),
        )
        .unwrap(),
    );
    primary.replication().set_wal_writer(pw.clone());
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let handler = common::walsender::WalSender::new(primary.clone());
    let server = rt.spawn(common::postmaster::serve(
        primary.clone(),
        listener,
        async move {
            let _ = stop_rx.wait_for(|v| *v).await;
        },
        Some(handler),
    ));

    // A transaction running across the backup: xid 3 stays open.
    let commit = |xid: u64| {
        let (_, end) = pw
            .insert(
                TransactionId(xid),
                &WalRecord::Xact(XactRecord::Commit {
                    xid: TransactionId(xid),
                    subxids: vec![],
                    timestamp_us: 0,
                }),
            )
            .unwrap();
        pw.flush(end).unwrap();
        end
    };
    commit(3);

    let ci = ConnInfo::parse(&format!("host=127.0.0.1 port={port} application_name=sb1")).unwrap();
    let sd = sdir.path().join("data");
    let mut progressed = false;
    let label = rt
        .block_on(standby::basebackup::take(&ci, &sd, |_, _| {
            progressed = true
        }))
        .unwrap();
    assert!(progressed);
    assert!(label.end > label.start);
    assert!(sd.join("pg_wal").is_dir());

    let sb = open(&sd, Role::Standby, &[]);
    let swal = sd.join("pg_wal");
    let mut r = wal::WalReader::new(&swal, SEG).unwrap();
    r.seek(label.start, None);
    while r.next_record().is_ok() {}
    let sw =
        Arc::new(WalWriter::open(&swal, WalWriterOptions::new(SEG, false), r.position()).unwrap());
    sb.replication().set_wal_writer(sw.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let replay = standby::startup::Replay::new(sb.clone(), label.end, None);
    let h = rt.handle().clone();
    let thread = {
        let (w, s) = (sw.clone(), stop.clone());
        std::thread::spawn(move || standby::startup::run(replay, w, label.start, s, h, &|| {}))
    };
    let (rstop_tx, rstop_rx) = tokio::sync::watch::channel(false);
    let recv = rt.spawn(standby::walreceiver::run(
        sb.clone(),
        sw.clone(),
        tokio::sync::watch::channel(standby::walreceiver::ReceiverConfig {
            conninfo: ci,
            conninfo_text: String::new(),
            slot: None,
            status_interval: Duration::from_secs(10),
            hot_standby_feedback: false,
            receiver_timeout: None,
            target_timeline: standby::walreceiver::TargetTimeline::Latest,
        })
        .1,
        rstop_rx,
    ));
    wait("consistency", || {
        sb.replication().consistent.load(Ordering::Acquire)
    });

    // Each completion replayed bumps the standby's counter and removes the
    // xid from KnownAssignedXids.
    for xid in 10..20u64 {
        let before = sb.procarray().xact_completion_count();
        let end = commit(xid);
        wait("replay", || {
            sb.replication().replay_lsn.load(Ordering::Relaxed) >= end
        });
        assert!(
            sb.procarray().xact_completion_count() > before,
            "commit of {xid} bumped the counter"
        );
        assert!(!sb
            .procarray()
            .known_assigned()
            .contains(&TransactionId(xid)));
        assert_eq!(
            sb.clog().get_status(TransactionId(xid)),
            txn::clog::XidStatus::Committed
        );
    }
    // The primary sees the standby's positions.
    wait("pg_stat_replication replay", || {
        sql::sysviews::stat_replication(primary.replication())
            .first()
            .is_some_and(|r| r[7] == pgtypes::value::Value::PgLsn(pw.flushed_lsn().0))
    });
    let _ = rstop_tx.send(true);
    rt.block_on(recv).unwrap();

    // Promotion with a torn tail: the standby holds (flushed) the first
    // half of a record the walreceiver never finished receiving. Replay
    // ends before it, and the new writer cuts it off.
    let (start, end) = pw
        .insert(
            TransactionId(50),
            &WalRecord::Xact(XactRecord::Commit {
                xid: TransactionId(50),
                subxids: (51..150).map(pgtypes::TransactionId).collect(),
                timestamp_us: 0,
            }),
        )
        .unwrap();
    pw.flush(end).unwrap();
    assert_eq!(sw.insert_lsn(), start, "the standby had everything before");
    let bytes = std::fs::read(wal::segment::segment_path(
        &pdir.path().join("pg_wal"),
        start.0 / SEG,
        SEG,
    ))
    .unwrap();
    let off = (start.0 % SEG) as usize;
    let record = &bytes[off..off + end.distance_from(start) as usize];
    sw.write_raw(start, &record[..record.len() / 2]).unwrap();
    sw.flush(sw.insert_lsn()).unwrap();
    assert!(sw.flushed_lsn() > start);
    sb.replication().request_promote();
    let ended = thread.join().unwrap();
    let standby::startup::Ended::Promote { end: wal_end } = ended else {
        panic!("replay ended without promoting: {ended:?}");
    };
    assert_eq!(wal_end.end, start, "replay stops at the last valid record");
    standby::promote::finish(&sb, &sw, wal_end).unwrap();
    assert_eq!(sb.role(), Role::Primary);
    assert_ne!(
        sb.clog().get_status(TransactionId(50)),
        txn::clog::XidStatus::Committed
    );
    // The WAL reads cleanly from the backup's start through the
    // end-of-recovery checkpoint, which follows the cut directly.
    let writer = sb.xlog().writer().unwrap().clone();
    let mut r = wal::WalReader::new(&swal, SEG).unwrap();
    r.seek(label.start, None);
    let mut last = None;
    while let Ok(rec) = r.next_record() {
        assert!(rec.start_lsn != start || !matches!(rec.record, WalRecord::Xact(_)));
        last = Some(rec);
    }
    let last = last.unwrap();
    assert_eq!(
        last.start_lsn, start,
        "the checkpoint is written at the cut"
    );
    assert!(matches!(
        last.record,
        WalRecord::Xlog(wal::XlogRecord::Checkpoint { online: false, .. })
    ));
    assert_eq!(r.position().end, writer.insert_lsn());
    stop.store(true, Ordering::Relaxed);
    let _ = stop_tx.send(true);
    rt.block_on(server).unwrap().unwrap();
    let _ = Lsn::INVALID;
}
