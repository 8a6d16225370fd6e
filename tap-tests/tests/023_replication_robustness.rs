//! Replication robustness: the standby survives being stopped,
//! killed and restarted, the primary restarting under it, and a base backup
//! taken while writers run. Each scenario ends with the standby caught up
//! and a checksum query giving the same answer on both nodes.
//!
//! * `slot_holds_wal_while_standby_is_down` — a physical slot keeps the WAL
//!   a stopped standby still needs (restart_lsn stays, its segment survives
//!   checkpoints across several 1 MB segments); restarted, the standby
//!   catches up; once it has, checkpoints remove the segment.
//! * `standby_reconnects_after_primary_restart` — the walreceiver
//!   reconnects by itself and a long-lived standby session sees new rows.
//! * `standby_survives_sigkill` — SIGKILL during writes, restart, catch up.
//! * `base_backup_under_concurrent_writes` — the copy plus replay equals
//!   the primary.

use std::sync::atomic::{AtomicBool, Ordering};

use tap_tests::{wait_until, Node};

/// A digest of table `t` (count, sums, extremes): equal on both nodes when
/// their contents are.
const CHECKSUM: &str =
    "SELECT count(*), sum(id), sum(v), sum(length(pad)), min(id), max(id) FROM t";

fn primary_node(extra: &str) -> Node {
    let p = Node::new("primary");
    p.init(true);
    p.append_conf("wal_segment_size = 1MB\nmax_prepared_transactions = 10");
    p.append_conf(extra);
    p.start();
    p.safe_sql("CREATE TABLE t (id int primary key, v int, pad text)");
    p
}

/// Waits until the standby replayed everything the primary inserted so far.
fn catch_up(primary: &Node, standby: &Node) {
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(standby, "replay", Some(&lsn));
}

fn same_contents(primary: &Node, standby: &Node) {
    catch_up(primary, standby);
    let want = primary.safe_sql(CHECKSUM);
    assert_eq!(standby.safe_sql(CHECKSUM), want, "standby equals primary");
}

/// Inserts rows `from..from+n` with `pad` bytes of padding each.
fn insert(node: &Node, from: i32, n: i32, pad: i32) {
    node.safe_sql(&format!(
        "INSERT INTO t SELECT g, g % 97, repeat('x', {pad}) FROM generate_series({from}, {}) g",
        from + n - 1
    ));
}

/// The WAL segment file holding `lsn` (timeline 1).
fn segment_file(lsn: &str, seg_size: u64) -> String {
    let l = tap_tests::cluster::parse_lsn(lsn).expect("lsn");
    let segno = l / seg_size;
    let per_id = 0x1_0000_0000 / seg_size;
    format!("{:08X}{:08X}{:08X}", 1, segno / per_id, segno % per_id)
}

#[test]
fn slot_holds_wal_while_standby_is_down() {
    let primary = primary_node("");
    primary.create_physical_slot("s1");
    let standby = Node::new("standby");
    standby.init_from_backup_with_slot(&primary, "s1");
    standby.start();
    insert(&primary, 1, 100, 10);
    same_contents(&primary, &standby);

    standby.stop("fast");
    let slot_lsn = || {
        primary
            .safe_sql("SELECT restart_lsn, active FROM pg_replication_slots WHERE slot_name = 's1'")
    };
    // The walsender notices the standby left.
    wait_until("the slot is inactive", || slot_lsn().ends_with("|f"));
    let held = slot_lsn();
    let held_lsn = held.split('|').next().unwrap_or("").to_string();
    let held_seg = segment_file(&held_lsn, 1 << 20);
    let wal_dir = primary.data_dir().join("pg_wal");
    // About 4 MB of WAL with checkpoints in between: segments before the
    // newest redo point would go, but the slot holds its segment.
    for round in 0..4 {
        insert(&primary, 1000 + round * 1000, 1000, 900);
        primary.safe_sql("CHECKPOINT");
    }
    primary.safe_sql("CHECKPOINT");
    assert_eq!(
        slot_lsn(),
        held,
        "restart_lsn holds while the standby is down"
    );
    assert!(
        wal_dir.join(&held_seg).exists(),
        "segment {held_seg} holding the slot's restart_lsn {held_lsn} was removed"
    );
    let first_now = segment_file(&primary.lsn("insert"), 1 << 20);
    assert_ne!(first_now, held_seg, "WAL crossed segments");

    standby.start();
    same_contents(&primary, &standby);
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM t WHERE id >= 1000"),
        "4000"
    );
    // Caught up: the slot moves on and checkpoints may remove the segment.
    wait_until("the slot advanced", || {
        let now = slot_lsn();
        now.ends_with("|t") && now != held
    });
    insert(&primary, 100_000, 10, 10);
    catch_up(&primary, &standby);
    primary.safe_sql("CHECKPOINT");
    primary.safe_sql("CHECKPOINT");
    assert!(
        !wal_dir.join(&held_seg).exists(),
        "segment {held_seg} removed once the slot no longer needs it"
    );
}

#[test]
fn standby_reconnects_after_primary_restart() {
    let primary = primary_node("");
    let standby = Node::standby_of(&primary, "standby");
    insert(&primary, 1, 100, 10);
    same_contents(&primary, &standby);
    let s = standby.background_session();
    assert_eq!(s.query_safe("SELECT count(*) FROM t"), "100");

    let log_at = standby.log_position();
    primary.restart();
    insert(&primary, 101, 100, 10);
    primary.safe_sql("UPDATE t SET v = v + 1 WHERE id % 3 = 0");
    primary.safe_sql("DELETE FROM t WHERE id % 10 = 0");
    // wait_for_catchup needs the standby streaming again: it reconnected
    // by itself.
    same_contents(&primary, &standby);
    assert!(standby.log_contains_after("started streaming WAL from primary at", log_at));
    assert_eq!(
        s.query_safe("SELECT count(*) FROM t"),
        "180",
        "a long-lived standby session sees the new rows"
    );
}

/// A standby that reconnects exactly at the end of WAL, with nothing new
/// written, is caught up: `pg_stat_replication` says `streaming`, not
/// `catchup` (and `wait_for_catchup`, which needs `streaming`, returns).
#[test]
fn standby_restarted_at_end_of_wal_is_streaming() {
    let primary = primary_node("");
    let standby = Node::standby_of(&primary, "standby");
    insert(&primary, 1, 10, 10);
    same_contents(&primary, &standby);
    standby.restart();
    assert!(
        primary.poll_query_until(
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
            "1"
        ),
        "walsender of a caught-up standby stays in catchup: {}",
        primary.safe_sql("SELECT state, sent_lsn FROM pg_stat_replication")
    );
    same_contents(&primary, &standby);
}

#[test]
fn standby_survives_sigkill() {
    let primary = primary_node("");
    let standby = Node::standby_of(&primary, "standby");
    insert(&primary, 1, 2000, 200);
    same_contents(&primary, &standby);

    // Kill it while a writer runs, write more while it is down.
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let w = sc.spawn(|| {
            let p = primary.background_session();
            let mut i = 10_000;
            while !stop.load(Ordering::Relaxed) {
                p.query_safe(&format!("INSERT INTO t VALUES ({i}, 1, 'w')"));
                p.query_safe(&format!("UPDATE t SET v = v + 1 WHERE id = {}", i - 9_000));
                i += 1;
            }
        });
        wait_until("some writes replayed", || {
            standby
                .sql("SELECT count(*) > 2010 FROM t")
                .is_ok_and(|o| o == "t")
        });
        standby.kill9();
        stop.store(true, Ordering::Relaxed);
        w.join().expect("writer");
    });
    insert(&primary, 50_000, 500, 200);
    standby.start();
    same_contents(&primary, &standby);
    // And again, killed right after catching up.
    standby.kill9();
    insert(&primary, 60_000, 10, 10);
    standby.start();
    same_contents(&primary, &standby);
}

#[test]
fn base_backup_under_concurrent_writes() {
    let primary = primary_node("");
    insert(&primary, 1, 20_000, 100);
    let stop = AtomicBool::new(false);
    let standby = std::thread::scope(|sc| {
        let writers: Vec<_> = (0..2)
            .map(|w| {
                let (primary, stop) = (&primary, &stop);
                sc.spawn(move || {
                    let p = primary.background_session();
                    let mut i = 100_000 + w * 1_000_000;
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        p.query_safe("BEGIN");
                        p.query_safe(&format!(
                            "INSERT INTO t SELECT g, 7, repeat('n', 50) FROM generate_series({i}, {}) g",
                            i + 9
                        ));
                        p.query_safe(&format!(
                            "UPDATE t SET v = v + 1, pad = pad || 'u' WHERE id % 200 = {}",
                            n % 200
                        ));
                        p.query_safe(&format!("DELETE FROM t WHERE id = {}", 1 + n * 7 % 20_000));
                        p.query_safe("COMMIT");
                        i += 10;
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let standby = Node::standby_of(&primary, "standby");
        // Keep writing a little after the backup so replay continues past
        // its end under load.
        insert(&primary, 900_000, 100, 10);
        stop.store(true, Ordering::Relaxed);
        let rounds: u64 = writers.into_iter().map(|w| w.join().expect("writer")).sum();
        assert!(rounds > 0, "writers ran during the backup");
        standby
    });
    same_contents(&primary, &standby);
}

/// Standby WAL segment files present now.
fn segments(node: &Node) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(node.data_dir().join("pg_wal"))
        .expect("pg_wal")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.len() == 24)
        .collect();
    v.sort();
    v
}

/// The LSN of the last "<prefix> X/Y" line in the log after `offset`.
fn logged_lsn(node: &Node, prefix: &str, offset: u64) -> String {
    let log = node.log_content();
    let start = usize::try_from(offset).unwrap_or(0).min(log.len());
    log[start..]
        .lines()
        .filter_map(|l| l.split_once(prefix).map(|(_, r)| r.trim().to_string()))
        .next_back()
        .unwrap_or_else(|| panic!("no {prefix:?} in the log"))
}

#[test]
fn standby_restartpoints() {
    let primary = primary_node("");
    let standby = Node::standby_of(&primary, "standby");
    let first_segment = segments(&standby)[0].clone();
    // A prepared transaction whose PREPARE record will be behind the
    // restartpoint: after a restart it comes back from its state file.
    let p = primary.background_session();
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO t VALUES (-1, 0, 'prepared')");
    let prepared_xid = p.query_safe("SELECT pg_current_xact_id()");
    p.query_safe("PREPARE TRANSACTION 'across_restart'");
    for round in 0..3 {
        insert(&primary, round * 1000, 1000, 900);
    }
    primary.safe_sql("CHECKPOINT");
    insert(&primary, 5000, 10, 10);
    same_contents(&primary, &standby);

    // CHECKPOINT on the standby makes a restartpoint at the primary's
    // checkpoint and removes the standby's older WAL.
    let at = standby.log_position();
    standby.safe_sql("CHECKPOINT");
    assert!(standby.log_contains_after("restartpoint complete: wrote", at));
    let restart_point = logged_lsn(&standby, "recovery restart point at", at);
    assert!(
        !segments(&standby).contains(&first_segment),
        "segment {first_segment} removed by the restartpoint: {:?}",
        segments(&standby)
    );
    // Nothing newer replayed: a second one is skipped.
    let at2 = standby.log_position();
    standby.safe_sql("CHECKPOINT");
    assert!(!standby.log_contains_after("restartpoint complete", at2));

    // A restart begins at the restartpoint, not at the backup's start.
    insert(&primary, 6000, 10, 10);
    catch_up(&primary, &standby);
    let at = standby.log_position();
    standby.restart();
    assert_eq!(logged_lsn(&standby, "redo starts at", at), restart_point);
    same_contents(&primary, &standby);
    // The prepared transaction is still running on the standby.
    let s = standby.background_session();
    assert_eq!(s.query_safe("SELECT count(*) FROM t WHERE id = -1"), "0");
    let snap = s.query_safe("SELECT pg_current_snapshot()");
    let xip = snap.rsplit(':').next().unwrap_or("");
    assert!(
        xip.split(',').any(|x| x == prepared_xid),
        "prepared xid {prepared_xid} running after the restart: {snap}"
    );
    primary.safe_sql("COMMIT PREPARED 'across_restart'");
    catch_up(&primary, &standby);
    assert_eq!(s.query_safe("SELECT count(*) FROM t WHERE id = -1"), "1");
    same_contents(&primary, &standby);
    drop(s);

    // SIGKILL after a restartpoint: the restart replays from it again.
    insert(&primary, 7000, 1000, 900);
    primary.safe_sql("CHECKPOINT");
    catch_up(&primary, &standby);
    standby.safe_sql("CHECKPOINT");
    insert(&primary, 9000, 100, 10);
    standby.kill9();
    insert(&primary, 9100, 100, 10);
    standby.start();
    same_contents(&primary, &standby);

    // The primary restarted (its shutdown checkpoint is the newest one) and
    // idle: a standby restarted at that checkpoint still becomes
    // consistent (the start waits for read-only connections).
    primary.restart();
    catch_up(&primary, &standby);
    standby.safe_sql("CHECKPOINT");
    standby.restart();
    same_contents(&primary, &standby);

    // The background checkpointer makes restartpoints by time too.
    standby.append_conf("checkpoint_timeout = 1");
    standby.restart();
    let at = standby.log_position();
    insert(&primary, 20_000, 10, 10);
    primary.safe_sql("CHECKPOINT");
    standby.wait_for_log("restartpoint starting: time", at);
    standby.wait_for_log("recovery restart point at", at);
}
