//! Cascading replication (replication.md, "Cascading replication"):
//! standbys that serve base backups and WAL to further standbys, as
//! PostgreSQL's src/test/recovery/t/001_stream_rep.pl (its standby_2 is a
//! standby of a standby) and 004_timeline_switch.pl with the follower
//! behind a cascade.
//!
//! A primary, standby 1 and standby 2 of it, and standby 3 of standby 2
//! (its base backup taken from standby 2, streaming through a slot made on
//! standby 2). Checked:
//! * commits on the primary reach standby 3 through standby 2, also in a
//!   session standby 3 opened earlier (its cached snapshot is dropped by
//!   commits replayed from a cascaded stream);
//! * standby 2 shows standby 3 in `pg_stat_replication` and answers
//!   IDENTIFY_SYSTEM with the primary's system identifier;
//! * standby 2's slot keeps the WAL standby 3 has not received across
//!   standby 2's restartpoints;
//! * `hot_standby_feedback` turned on by a reload on standbys 2 and 3: a
//!   snapshot held on standby 3 holds the primary's horizon through
//!   standby 2 (the primary's `backend_xmin` for standby 2), and ending it
//!   releases it;
//! * the primary dies, standby 1 is promoted, standby 2 is re-pointed at
//!   it by a reload: standby 2 switches to timeline 2 and so does standby
//!   3 behind it, on the same connection (end of the streamed timeline);
//! * standby 2 itself is promoted: standby 3 reconnects and follows it to
//!   timeline 3.
//!
//! What goes wrong without this: a standby refuses replication
//! connections, so every standby must stream from the primary; a cascaded
//! standby stays on the old timeline after a failover, or its upstream
//! removes WAL it still needs.

use tap_tests::{wait_until, Node};

const COUNT: &str = "SELECT count(*) FROM tab_int";

/// Sets `name = value` through ALTER SYSTEM and a reload.
fn set_reload(node: &Node, name: &str, value: &str) {
    node.safe_sql(&format!("ALTER SYSTEM SET {name} = '{value}'"));
    node.safe_sql("SELECT pg_reload_conf()");
}

#[test]
fn cascade_serves_follows_and_holds() {
    // 1. The primary (small segments, so that restartpoints remove some).
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("wal_segment_size = 1MB");
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_int (a int); INSERT INTO tab_int SELECT generate_series(1, 1000)",
    );
    let standby_1 = Node::standby_of(&primary, "standby_1");
    let standby_2 = Node::standby_of(&primary, "standby_2");
    primary.wait_for_replay(&standby_2);
    // Standbys 1 and 2 stream from the primary without slots: like
    // PostgreSQL's, its checkpoints keep only wal_keep_size for them. Step
    // 3 writes and checkpoints faster than a loaded machine may stream, so
    // the primary keeps enough (set now, after the base backups, so the
    // standbys' own restartpoints still remove segments).
    primary.append_conf("wal_keep_size = 64MB");
    assert_eq!(primary.safe_sql("SELECT pg_reload_conf()"), "t");

    // 2. Standby 3 from standby 2: a base backup of a standby, then WAL
    // through a slot on standby 2.
    standby_2.create_physical_slot("standby_3_slot");
    let standby_3 = Node::new("standby_3");
    standby_3.init_from_backup_with_slot(&standby_2, "standby_3_slot");
    standby_3.start();
    assert_eq!(standby_3.safe_sql(COUNT), "1000", "standby 3 has the data");
    assert_eq!(standby_3.safe_sql("SELECT pg_is_in_recovery()"), "t");
    let long_lived = standby_3.background_session();
    assert_eq!(long_lived.query_safe(COUNT), "1000");

    primary.safe_sql("INSERT INTO tab_int SELECT generate_series(1001, 2000)");
    primary.wait_for_replay(&standby_2);
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(standby_3.safe_sql(COUNT), "2000", "through the cascade");
    assert_eq!(long_lived.query_safe(COUNT), "2000", "long-lived session");
    assert_eq!(
        standby_2.safe_sql("SELECT application_name, state FROM pg_stat_replication ORDER BY 1"),
        "standby_3|streaming",
        "standby 2's walsender"
    );
    assert_eq!(
        standby_2.safe_sql("SELECT slot_name, active FROM pg_replication_slots"),
        "standby_3_slot|t"
    );
    let (st, out, err) = standby_2.replication_command("IDENTIFY_SYSTEM");
    assert_eq!(st, 0, "{err}");
    let (_, primary_id, _) = primary.replication_command("IDENTIFY_SYSTEM");
    assert_eq!(
        out.split('|').take(2).collect::<Vec<_>>(),
        primary_id.split('|').take(2).collect::<Vec<_>>(),
        "same system identifier and timeline"
    );

    // 3. The slot on standby 2 keeps what standby 3 has not received.
    standby_3.stop("fast");
    let restart_lsn = standby_2.safe_sql("SELECT restart_lsn FROM pg_replication_slots");
    for i in 0..4 {
        primary.safe_sql(&format!(
            "INSERT INTO tab_int SELECT generate_series(2001, 22000); DELETE FROM tab_int WHERE a > 2000; CHECKPOINT -- {i}"
        ));
    }
    primary.wait_for_replay(&standby_2);
    standby_2.safe_sql("CHECKPOINT");
    assert!(
        standby_2.log_contains("restartpoint complete"),
        "standby 2 made a restartpoint"
    );
    assert_eq!(
        standby_2.safe_sql("SELECT restart_lsn FROM pg_replication_slots"),
        restart_lsn,
        "the slot did not move while its standby was away"
    );
    standby_3.start();
    primary.wait_for_replay(&standby_2);
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(
        standby_3.safe_sql(COUNT),
        "2000",
        "caught up after its absence"
    );
    let long_lived = standby_3.background_session();

    // 4. Feedback through the cascade, turned on by reloads.
    set_reload(&standby_2, "hot_standby_feedback", "on");
    set_reload(&standby_3, "hot_standby_feedback", "on");
    let holder = standby_3.background_session();
    holder.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    holder.query_safe(COUNT);
    let held = "SELECT backend_xmin IS NOT NULL FROM pg_stat_replication WHERE application_name = 'standby_2'";
    assert!(
        primary.poll_query_until(held, "t"),
        "standby 3's snapshot holds the primary's horizon through standby 2"
    );
    holder.query_safe("COMMIT");
    assert!(
        primary.poll_query_until(held, "f"),
        "released when the snapshot ends"
    );

    // 5. The primary dies; standby 1 is promoted; standby 2 is re-pointed
    // by a reload and follows, and standby 3 with it.
    primary.stop("immediate");
    standby_1.promote();
    assert_eq!(standby_1.timeline(), 2);
    let offset_3 = standby_3.log_position();
    let conninfo = format!(
        "host={} port={} application_name=standby_2",
        standby_1.host(),
        standby_1.port()
    );
    set_reload(&standby_2, "primary_conninfo", &conninfo);
    standby_1.safe_sql("INSERT INTO tab_int SELECT generate_series(2001, 3000)");
    standby_1.wait_for_replay(&standby_2);
    assert_eq!(standby_2.timeline(), 2, "standby 2 follows");
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(standby_3.safe_sql(COUNT), "3000", "standby 3 follows too");
    assert_eq!(long_lived.query_safe(COUNT), "3000", "long-lived session");
    wait_until("standby 3 receives timeline 2", || {
        standby_3.timeline() == 2
    });
    assert!(
        standby_3.log_contains_after("new target timeline is 2", offset_3),
        "standby 3 switched at the end of the streamed timeline"
    );
    assert!(
        std::fs::metadata(standby_3.data_dir().join("pg_wal/00000002.history")).is_ok(),
        "the history file reached standby 3 through standby 2"
    );

    // 6. Standby 2 promoted: standby 3 reconnects and follows it.
    standby_2.promote();
    assert_eq!(standby_2.timeline(), 3);
    standby_2.safe_sql("INSERT INTO tab_int SELECT generate_series(3001, 3500)");
    standby_2.wait_for_replay(&standby_3);
    assert_eq!(standby_3.safe_sql(COUNT), "3500");
    assert_eq!(long_lived.query_safe(COUNT), "3500");
    wait_until("standby 3 receives timeline 3", || {
        standby_3.timeline() == 3
    });
    assert_eq!(
        standby_2.safe_sql("SELECT sum(a) FROM tab_int"),
        standby_3.safe_sql("SELECT sum(a) FROM tab_int"),
        "data equal"
    );
}
