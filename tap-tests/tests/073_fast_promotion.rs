//! Fast promotion (replication.md, "Promotion"; common::checkpointer,
//! "Promotion"): a standby whose control file is one of its restartpoints
//! takes writes as soon as its role switches — no end-of-recovery
//! checkpoint first — and the new timeline's first checkpoint runs in the
//! background ("checkpoint starting: force"). A SIGKILL straight after the
//! promotion loses nothing: crash recovery replays from the restartpoint
//! across the timeline switch.

use tap_tests::Node;

/// The LSN after `prefix` on the last log line after `offset` that has it.
fn logged_lsn(node: &Node, prefix: &str, offset: u64) -> Option<u64> {
    node.log_since(offset)
        .lines()
        .filter_map(|l| l.split_once(prefix).map(|(_, r)| r.trim().to_string()))
        .next_back()
        .and_then(|s| {
            let s = s.split_whitespace().next()?.to_string();
            tap_tests::cluster::parse_lsn(&s)
        })
}

#[test]
fn fast_promotion_survives_sigkill() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY, v text)");
    primary.safe_sql("INSERT INTO t SELECT g, 'before' FROM generate_series(1, 100) g");

    // 1. A fresh standby makes its first restartpoint by itself, as soon
    //    as it is consistent: its control file, not backup_label, now
    //    says where its crash recovery starts.
    let standby = Node::standby_of(&primary, "standby");
    standby.wait_for_log("recovery restart point at", 0);
    assert!(
        standby.log_contains("restartpoint starting: force"),
        "first restartpoint asked for, not waited for by time"
    );

    // 2. Changes replayed after that restartpoint — enough dirty pages
    //    that timeline 2's first checkpoint takes a while to write them,
    //    so the SIGKILL below comes before it completes — then the
    //    primary dies.
    primary.safe_sql("INSERT INTO t SELECT g, repeat('r', 200) FROM generate_series(101, 3000) g");
    primary.safe_sql("INSERT INTO t SELECT g, 'replayed' FROM generate_series(3001, 100000) g");
    primary.safe_sql("UPDATE t SET v = 'updated' WHERE id % 7 = 0");
    primary.wait_for_replay(&standby);
    primary.kill9();

    // 3. Promotion: no end-of-recovery checkpoint before the switch; the
    //    first checkpoint of timeline 2 is asked of the checkpointer.
    let at = standby.log_position();
    standby.promote();
    assert!(
        !standby.log_contains_after("checkpoint starting: end-of-recovery", at),
        "fast promotion: no end-of-recovery checkpoint\n{}",
        standby.log_since(at)
    );
    standby.safe_sql("INSERT INTO t VALUES (200000, 'after promotion')");

    // 4. SIGKILL at once, then a start as a primary.
    standby.kill9();
    let log = standby.log_since(at);
    let checkpointed = log.contains("checkpoint complete");
    let history = std::fs::read_to_string(standby.data_dir().join("pg_wal/00000002.history"))
        .expect("00000002.history");
    let fork = history
        .split('\t')
        .nth(1)
        .and_then(tap_tests::cluster::parse_lsn)
        .expect("switch point in the history file");
    let at = standby.log_position();
    standby.start();
    assert_eq!(standby.safe_sql("SELECT pg_is_in_recovery()"), "f");
    assert_eq!(
        standby.safe_sql(
            "SELECT count(*), count(*) FILTER (WHERE v = 'updated'), \
             count(*) FILTER (WHERE v = 'after promotion') FROM t"
        ),
        "100001|14285|1",
        "every replayed change and the promoted node's commit kept"
    );
    // Where crash recovery began says whether the kill beat timeline 2's
    // first checkpoint: before the fork, it began at the restartpoint on
    // timeline 1 and crossed the switch (the path under test; the data
    // checks above are its proof). The log alone cannot say: the
    // checkpoint updates the control file before it logs "checkpoint
    // complete", so a kill between the two leaves the log silent while
    // recovery starts past the fork — but a logged completion must mean
    // recovery started past it.
    let redo = logged_lsn(&standby, "redo starts at", at).expect("crash recovery ran");
    if checkpointed {
        assert!(redo >= fork, "a completed checkpoint is where redo starts");
    }
    eprintln!(
        "# crash recovery began {} the fork",
        if redo < fork { "before" } else { "after" }
    );
    assert_eq!(
        standby.safe_sql("SELECT timeline_id FROM pg_control_checkpoint()"),
        "2",
        "the node goes on on timeline 2"
    );
    standby.safe_sql("INSERT INTO t VALUES (200001, 'after restart')");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "100002");
}

/// The new timeline's first checkpoint runs in the background after a
/// fast promotion, and records the switch in the control file.
#[test]
fn first_checkpoint_of_new_timeline_in_background() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int)");
    let standby = Node::standby_of(&primary, "standby");
    standby.wait_for_log("recovery restart point at", 0);
    primary.safe_sql("INSERT INTO t VALUES (1)");
    primary.wait_for_replay(&standby);
    primary.stop("fast");
    let at = standby.log_position();
    standby.safe_sql("SELECT pg_promote()");
    assert!(standby.poll_query_until("SELECT pg_is_in_recovery()", "f"));
    standby.wait_for_log("checkpoint starting: force", at);
    standby.wait_for_log("checkpoint complete", at);
    assert_eq!(
        standby.safe_sql("SELECT timeline_id, prev_timeline_id FROM pg_control_checkpoint()"),
        "2|1",
        "the background checkpoint records the new timeline"
    );
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "1");
}
