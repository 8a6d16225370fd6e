//! Timeline switches (replication.md, "Timelines"), ported from
//! PostgreSQL's src/test/recovery/t/004_timeline_switch.pl: a primary and
//! two standbys; the primary goes away, standby 1 is promoted (timeline
//! 2), standby 2 is re-pointed at it, fetches the history file, switches
//! timeline at the fork point and keeps up — data equal, new commits seen,
//! also by a session opened on standby 2 before the switch (its cached
//! snapshot must be invalidated by commits replayed on the new timeline).
//!
//! What goes wrong without this: a promoted standby that stays on timeline
//! 1 cannot be followed (its WAL and the old primary's would be mixed
//! under the same names), and a standby that does not check the history
//! could replay a branch it has already left behind. Bad input is part of
//! it: a garbage history file on the new primary is refused by the
//! follower with PostgreSQL's message and never written; a standby pointed
//! at an unrelated system refuses it; a standby that replayed past the
//! fork point refuses with "requested timeline 2 is not a child of this
//! server's history" — each staying up and serving reads.

use tap_tests::Node;

const COUNT: &str = "SELECT count(*) FROM tab_int";

/// The names in `node`'s pg_wal, sorted.
fn wal_files(node: &Node) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(node.data_dir().join("pg_wal"))
        .expect("pg_wal")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// Waits until `node`'s log, after `offset`, contains `pattern`.
fn wait_log(node: &Node, pattern: &str, offset: u64) {
    node.wait_for_log(pattern, offset);
}

#[test]
fn standby_follows_promoted_sibling() {
    // 1. A primary and two standbys, with data.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_int (a int); INSERT INTO tab_int SELECT generate_series(1, 1000)",
    );
    let standby_1 = Node::standby_of(&primary, "standby_1");
    let standby_2 = Node::standby_of(&primary, "standby_2");
    primary.wait_for_replay(&standby_1);
    primary.wait_for_replay(&standby_2);
    assert_eq!(standby_1.timeline(), 1, "standby 1 on timeline 1");
    assert_eq!(standby_2.timeline(), 1, "standby 2 on timeline 1");

    // 2. The primary goes away; standby 2 waits for standby 1.
    primary.stop("fast");
    standby_2.stop("fast");

    // 3. Standby 1 becomes the primary of timeline 2.
    standby_1.promote();
    // The new timeline's first checkpoint (in the background after a fast
    // promotion) records it in the control file.
    assert!(
        standby_1.poll_query_until(
            "SELECT timeline_id, prev_timeline_id FROM pg_control_checkpoint()",
            "2|1"
        ),
        "control file records the new timeline"
    );
    let history_path = standby_1.data_dir().join("pg_wal/00000002.history");
    let history = std::fs::read_to_string(&history_path).expect("00000002.history written");
    let mut fields = history.trim_end().split('\t');
    assert_eq!(fields.next(), Some("1"), "parent timeline: {history:?}");
    let fork = fields.next().expect("switch point").to_string();
    assert!(
        tap_tests::cluster::parse_lsn(&fork).is_some(),
        "{history:?}"
    );
    assert_eq!(fields.next(), Some("no recovery target specified"));
    assert!(
        standby_1.log_contains("selected new timeline ID: 2"),
        "promotion logs the new timeline"
    );
    // The walsender speaks of timeline 2 (psql, as pg_basebackup and a
    // PostgreSQL standby would ask).
    let (st, out, err) = standby_1.replication_command("IDENTIFY_SYSTEM");
    assert_eq!(st, 0, "{err}");
    assert_eq!(out.split('|').nth(1), Some("2"), "IDENTIFY_SYSTEM: {out}");
    let (st, out, err) = standby_1.replication_command("TIMELINE_HISTORY 2");
    assert_eq!(st, 0, "{err}");
    assert!(
        out.starts_with("00000002.history|1\t"),
        "TIMELINE_HISTORY: {out:?}"
    );
    let (st, _, err) = standby_1.replication_command("TIMELINE_HISTORY 3");
    assert_ne!(st, 0);
    assert!(
        err.contains("could not open file \"pg_wal/00000003.history\""),
        "{err}"
    );
    let (st, _, err) = standby_1.replication_command("START_REPLICATION 0/1000000 TIMELINE 3");
    assert_ne!(st, 0);
    assert!(
        err.contains("requested timeline 3 is not in this server's history"),
        "{err}"
    );
    let (st, _, err) = standby_1.replication_command("START_REPLICATION 1/0 TIMELINE 1");
    assert_ne!(st, 0);
    assert!(
        err.contains("requested starting point 1/0 on timeline 1 is not in this server's history")
            && err.contains(&format!("forked from timeline 1 at {fork}")),
        "{err}"
    );
    assert!(
        wal_files(&standby_1)
            .iter()
            .any(|f| f.starts_with("00000002") && f.len() == 24),
        "segments of timeline 2: {:?}",
        wal_files(&standby_1)
    );

    // 4. Bad input: a garbage history file on the new primary. Standby 2,
    // pointed at it, refuses it with PostgreSQL's words and writes
    // nothing; it serves reads on timeline 1 meanwhile.
    std::fs::write(&history_path, "this is not a history file\n").expect("garbage");
    let offset = standby_2.log_position();
    standby_2.enable_streaming(&standby_1);
    standby_2.start();
    wait_log(
        &standby_2,
        "syntax error in history file: this is not a history file",
        offset,
    );
    assert!(
        !wal_files(&standby_2).contains(&"00000002.history".to_string()),
        "garbage history not written: {:?}",
        wal_files(&standby_2)
    );
    assert_eq!(standby_2.safe_sql(COUNT), "1000", "standby 2 serves reads");

    // 5. A session on standby 2 opened before the switch.
    let long_lived = standby_2.background_session();
    assert_eq!(long_lived.query_safe(COUNT), "1000", "before the switch");

    // 6. The good history back: standby 2 follows (retrying by itself).
    let offset = standby_2.log_position();
    std::fs::write(&history_path, &history).expect("history restored");
    wait_log(&standby_2, "new target timeline is 2", offset);
    assert_eq!(
        std::fs::read_to_string(standby_2.data_dir().join("pg_wal/00000002.history"))
            .expect("history fetched"),
        history,
        "standby 2 has the same history file"
    );

    // 7. New commits on the new primary reach standby 2 — and the
    // long-lived session (PostgreSQL's check: count 2000 on standby 2).
    standby_1.safe_sql("INSERT INTO tab_int SELECT generate_series(1001, 2000)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(
        standby_2.safe_sql(COUNT),
        "2000",
        "check content of standby 2"
    );
    assert_eq!(
        long_lived.query_safe(COUNT),
        "2000",
        "long-lived session sees commits of the new timeline"
    );
    assert_eq!(
        standby_1.safe_sql("SELECT sum(a) FROM tab_int"),
        standby_2.safe_sql("SELECT sum(a) FROM tab_int"),
        "data equal"
    );
    assert_eq!(standby_2.timeline(), 2, "standby 2 receives timeline 2");
    assert_eq!(
        standby_2.safe_sql("SELECT receive_start_tli, received_tli FROM pg_stat_wal_receiver"),
        "2|2"
    );
    // One more, on the cached snapshot path again.
    standby_1.safe_sql("INSERT INTO tab_int VALUES (2001)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(long_lived.query_safe(COUNT), "2001", "and the next one");

    // 8. A restart of standby 2 stays on timeline 2.
    standby_2.restart();
    standby_1.safe_sql("INSERT INTO tab_int VALUES (2002)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(standby_2.safe_sql(COUNT), "2002", "after a restart");
    assert_eq!(standby_2.timeline(), 2);

    // 9. Bad input: an unrelated system. Standby 2 pointed at another
    // cluster's primary refuses it and keeps serving what it has.
    let other = Node::new("other");
    other.init(true);
    other.start();
    let offset = standby_2.log_position();
    standby_2.stop("fast");
    standby_2.enable_streaming(&other);
    standby_2.start();
    wait_log(
        &standby_2,
        "database system identifier differs between the primary and standby",
        offset,
    );
    assert_eq!(standby_2.safe_sql(COUNT), "2002", "still serving reads");
    assert_eq!(
        standby_2.safe_sql("SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'"),
        "0",
        "not streaming from the other system"
    );
}

/// A standby that replayed past the fork point cannot follow: standby 1
/// stops early, the primary writes more (standby 2 replays it), standby 1
/// is promoted without that WAL. Standby 2, re-pointed at it, refuses with
/// PostgreSQL's message and stays up serving what it has.
#[test]
fn diverged_standby_refuses() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_int (a int); INSERT INTO tab_int SELECT generate_series(1, 10)",
    );
    let standby_1 = Node::standby_of(&primary, "standby_1");
    let standby_2 = Node::standby_of(&primary, "standby_2");
    primary.wait_for_replay(&standby_1);
    primary.wait_for_replay(&standby_2);

    standby_1.stop("fast");
    primary.safe_sql("INSERT INTO tab_int VALUES (11)");
    primary.wait_for_replay(&standby_2);
    primary.stop("fast");

    // Standby 1 comes back without a primary and is promoted at its own
    // end of WAL, before what standby 2 has replayed.
    standby_1.start();
    standby_1.promote();
    assert_eq!(standby_1.safe_sql(COUNT), "10");

    let offset = standby_2.log_position();
    standby_2.follow(&standby_1);
    wait_log(
        &standby_2,
        "requested timeline 2 is not a child of this server's history",
        offset,
    );
    assert_eq!(standby_2.safe_sql(COUNT), "11", "still serving its reads");
    assert_eq!(
        standby_2.safe_sql("SELECT pg_is_in_recovery()"),
        "t",
        "still a standby"
    );
    // Nothing of the new timeline was written on it.
    assert!(
        !wal_files(&standby_2)
            .iter()
            .any(|f| f.starts_with("00000002") && f.len() == 24),
        "no timeline-2 segments: {:?}",
        wal_files(&standby_2)
    );
}

/// Re-pointing without a restart (PostgreSQL 13+): a new
/// `primary_conninfo` in the configuration file and `pg_reload_conf()`
/// make the walreceiver reconnect to the promoted sibling and follow its
/// timeline; a session opened before sees the new primary's commits. A
/// bad value sent with SIGHUP keeps the old one, and streaming goes on.
#[test]
fn reload_repoints_standby() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_int (a int); INSERT INTO tab_int SELECT generate_series(1, 100)",
    );
    let standby_1 = Node::standby_of(&primary, "standby_1");
    let standby_2 = Node::standby_of(&primary, "standby_2");
    primary.wait_for_replay(&standby_1);
    primary.wait_for_replay(&standby_2);
    let long_lived = standby_2.background_session();
    assert_eq!(long_lived.query_safe(COUNT), "100");

    primary.stop("fast");
    standby_1.promote();

    let offset = standby_2.log_position();
    standby_2.append_conf(&format!(
        "primary_conninfo = 'host={} port={} application_name=standby_2'",
        standby_1.host(),
        standby_1.port()
    ));
    assert_eq!(standby_2.safe_sql("SELECT pg_reload_conf()"), "t");
    wait_log(
        &standby_2,
        "parameter \"primary_conninfo\" changed to",
        offset,
    );
    wait_log(&standby_2, "new target timeline is 2", offset);
    standby_1.safe_sql("INSERT INTO tab_int SELECT generate_series(101, 200)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(
        long_lived.query_safe(COUNT),
        "200",
        "same session, new primary"
    );
    assert_eq!(standby_2.timeline(), 2);

    // A bad value by SIGHUP: logged, the old one kept.
    let offset = standby_2.log_position();
    standby_2.append_conf("primary_conninfo = 'port=notaport'");
    let pid = standby_2.pid().expect("standby 2 runs");
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .expect("kill -HUP");
    assert!(status.success());
    wait_log(
        &standby_2,
        "received SIGHUP, reloading configuration files",
        offset,
    );
    wait_log(&standby_2, "keeping the old value", offset);
    standby_1.safe_sql("INSERT INTO tab_int VALUES (201)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(long_lived.query_safe(COUNT), "201", "still streaming");
}

/// A standby behind the fork point: standby 2 stops early, the primary
/// writes more (standby 1 receives it), standby 1 is promoted. Standby 2,
/// re-pointed, first streams the rest of timeline 1 from the new primary
/// — up to the switch point, where the walsender ends the copy and names
/// timeline 2 — then switches and streams timeline 2.
#[test]
fn lagging_standby_streams_old_timeline_then_switches() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_int (a int); INSERT INTO tab_int SELECT generate_series(1, 10)",
    );
    let standby_1 = Node::standby_of(&primary, "standby_1");
    let standby_2 = Node::standby_of(&primary, "standby_2");
    primary.wait_for_replay(&standby_1);
    primary.wait_for_replay(&standby_2);

    standby_2.stop("fast");
    primary.safe_sql("INSERT INTO tab_int SELECT generate_series(11, 5000)");
    primary.wait_for_replay(&standby_1);
    primary.stop("fast");
    standby_1.promote();
    standby_1.safe_sql("INSERT INTO tab_int VALUES (5001)");

    let offset = standby_2.log_position();
    standby_2.enable_streaming(&standby_1);
    standby_2.start();
    wait_log(&standby_2, "started streaming WAL from primary at", offset);
    wait_log(&standby_2, "End of WAL reached on timeline 1", offset);
    wait_log(&standby_2, "new target timeline is 2", offset);
    let log = standby_2.log_since(offset);
    let streamed_old = log.lines().any(|l| {
        l.contains("started streaming WAL from primary at") && l.ends_with("on timeline 1")
    });
    assert!(
        streamed_old,
        "streamed timeline 1 from the new primary first"
    );
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(
        standby_2.safe_sql(COUNT),
        "5001",
        "old timeline's rest and the new one"
    );
    assert_eq!(
        standby_1.safe_sql("SELECT sum(a) FROM tab_int"),
        standby_2.safe_sql("SELECT sum(a) FROM tab_int"),
        "data equal"
    );
}
