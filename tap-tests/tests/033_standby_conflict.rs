//! Standby snapshot conflicts and hot_standby_feedback (PostgreSQL's
//! 031_recovery_conflict.pl, snapshot part, and the feedback half of
//! hot standby). The failure guarded against: replay of a prune record
//! removes row versions that a standby query's snapshot still needs, and
//! the query silently reads a page where they are gone — wrong answers.
//! Either the primary must not remove them (hot_standby_feedback holds its
//! horizon at the standby's oldest snapshot) or replay must cancel the
//! query first (after max_standby_streaming_delay), with SQLSTATE 40001.
//!
//! * `feedback_holds_primary_horizon` — feedback on, delay 0: the standby's
//!   REPEATABLE READ snapshot shows in the primary's
//!   `pg_stat_replication.backend_xmin`; UPDATE + VACUUM on the primary
//!   remove nothing it needs, so even at delay 0 it is not cancelled and
//!   still reads its old answer; once it ends, the xmin is released and
//!   VACUUM removes the dead versions.
//! * `feedback_through_slot` — with a physical slot the xmin is held by
//!   the slot (`pg_replication_slots.xmin`), not the walsender.
//! * `conflict_cancels_old_snapshot` — feedback off, small delay: a running
//!   statement of an old-snapshot transaction fails with 40001 "canceling
//!   statement due to conflict with recovery"; a session idle in such a
//!   transaction is terminated (FATAL 40001); other sessions and replay
//!   carry on and the standby ends equal to the primary;
//!   `pg_stat_database_conflicts.confl_snapshot` counts both.

use tap_tests::{wait_until, Node, Session};

const CHECKSUM: &str = "SELECT count(*), sum(id), sum(v) FROM t";

/// A primary with table `t` (10 rows), logging VACUUM's counts (debug1).
fn primary_node() -> Node {
    let p = Node::new("primary");
    p.init(true);
    p.append_conf("log_min_messages = debug1");
    p.start();
    p.safe_sql("CREATE TABLE t (id int primary key, v int)");
    p.safe_sql("INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g");
    p
}

/// A standby of `primary` restarted with `conf`.
fn standby_node(primary: &Node, slot: Option<&str>, conf: &str) -> Node {
    let s = Node::new("standby");
    match slot {
        Some(name) => {
            primary.create_physical_slot(name);
            s.init_from_backup_with_slot(primary, name);
        }
        None => s.init_from_backup(primary, "backup", true),
    }
    s.start();
    s.stop("fast");
    s.append_conf(conf);
    s.start();
    s
}

fn catch_up(primary: &Node, standby: &Node) {
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(standby, "replay", Some(&lsn));
}

/// The xmin of the session's current snapshot, as PostgreSQL's 32-bit xid.
fn snapshot_xmin32(s: &Session) -> String {
    let x: u64 = s
        .query_safe("SELECT pg_snapshot_xmin(pg_current_snapshot())")
        .parse()
        .expect("xid8");
    (x as u32).to_string()
}

fn conflicts(standby: &Node) -> String {
    standby.safe_sql("SELECT confl_snapshot FROM pg_stat_database_conflicts")
}

#[test]
fn feedback_holds_primary_horizon() {
    let primary = primary_node();
    let standby = standby_node(
        &primary,
        None,
        "hot_standby_feedback = on\nmax_standby_streaming_delay = 0\nwal_receiver_status_interval = 1s",
    );
    catch_up(&primary, &standby);

    // 1. A REPEATABLE READ transaction on the standby holds a snapshot.
    let s1 = standby.background_session();
    s1.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(s1.query_safe("SELECT sum(v) FROM t"), "0", "old snapshot");
    let xmin = snapshot_xmin32(&s1);

    // 2. Its xmin reaches the primary through hot-standby feedback.
    assert!(
        primary.poll_query_until(
            "SELECT backend_xmin FROM pg_stat_replication WHERE application_name = 'standby'",
            &xmin
        ),
        "backend_xmin shows the standby's snapshot xmin"
    );

    // 3. UPDATE + VACUUM on the primary: the horizon holds, nothing the
    //    snapshot needs is removed, so replay has nothing to cancel even
    //    with max_standby_streaming_delay = 0.
    let offset = primary.log_position();
    primary.safe_sql("UPDATE t SET v = v + 1");
    primary.safe_sql("VACUUM t");
    primary.wait_for_log("vacuum of \"t\": removed 0 dead row versions", offset);
    catch_up(&primary, &standby);
    assert_eq!(
        s1.query_safe("SELECT sum(v) FROM t"),
        "0",
        "old snapshot still reads its versions"
    );
    assert_eq!(conflicts(&standby), "0", "no conflict");

    // 4. Ending the transaction releases the xmin; VACUUM then removes the
    //    dead versions, and replay applies the prune.
    s1.query_safe("COMMIT");
    assert!(
        primary.poll_query_until(
            "SELECT backend_xmin IS NULL FROM pg_stat_replication WHERE application_name = 'standby'",
            "t"
        ),
        "xmin released"
    );
    let offset = primary.log_position();
    primary.safe_sql("VACUUM t");
    primary.wait_for_log("vacuum of \"t\": removed 10 dead row versions", offset);
    catch_up(&primary, &standby);
    assert_eq!(
        standby.safe_sql(CHECKSUM),
        primary.safe_sql(CHECKSUM),
        "standby equals primary"
    );
    assert_eq!(s1.query_safe("SELECT sum(v) FROM t"), "10", "new rows");
}

#[test]
fn feedback_through_slot() {
    let primary = primary_node();
    let standby = standby_node(
        &primary,
        Some("sb1"),
        "hot_standby_feedback = on\nwal_receiver_status_interval = 1s",
    );
    catch_up(&primary, &standby);
    let s1 = standby.background_session();
    s1.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    s1.query_safe("SELECT count(*) FROM t");
    let xmin = snapshot_xmin32(&s1);
    assert!(
        primary.poll_query_until(
            "SELECT xmin FROM pg_replication_slots WHERE slot_name = 'sb1'",
            &xmin
        ),
        "slot xmin shows the standby's snapshot xmin"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT backend_xmin IS NULL FROM pg_stat_replication WHERE application_name = 'standby'"
        ),
        "t",
        "with a slot the walsender holds no xmin itself"
    );
    s1.query_safe("COMMIT");
    assert!(
        primary.poll_query_until(
            "SELECT xmin IS NULL FROM pg_replication_slots WHERE slot_name = 'sb1'",
            "t"
        ),
        "slot xmin released"
    );
}

#[test]
fn conflict_cancels_old_snapshot() {
    let primary = primary_node();
    let standby = standby_node(
        &primary,
        None,
        "hot_standby_feedback = off\nmax_standby_streaming_delay = 100ms",
    );
    catch_up(&primary, &standby);
    assert!(
        primary.poll_query_until(
            "SELECT backend_xmin IS NULL FROM pg_stat_replication WHERE application_name = 'standby'",
            "t"
        ),
        "no feedback xmin"
    );

    // 1. A statement running in an old-snapshot transaction is cancelled.
    let s1 = standby.background_session();
    let other = standby.background_session();
    s1.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(s1.query_safe("SELECT sum(v) FROM t"), "0", "old snapshot");
    let running = s1.send("SELECT pg_sleep(600)");
    let offset = standby.log_position();
    primary.safe_sql("UPDATE t SET v = v + 1");
    primary.safe_sql("VACUUM t");
    let e = running.wait().expect_err("cancelled by the conflict");
    assert_eq!(e.code(), "40001", "{e:?}");
    assert_eq!(
        e.message, "canceling statement due to conflict with recovery",
        "{e:?}"
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("User query might have needed to see row versions that must be removed."),
        "{e:?}"
    );
    standby.wait_for_log(
        "User query might have needed to see row versions that must be removed",
        offset,
    );
    s1.query_safe("ROLLBACK");
    catch_up(&primary, &standby);
    assert_eq!(s1.query_safe("SELECT sum(v) FROM t"), "10", "new snapshot");

    // 2. A session idle in an old-snapshot transaction is terminated.
    let s2 = standby.background_session();
    s2.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(s2.query_safe("SELECT sum(v) FROM t"), "10");
    let offset = standby.log_position();
    primary.safe_sql("UPDATE t SET v = v + 1");
    primary.safe_sql("VACUUM t");
    standby.wait_for_log(
        "terminating connection due to conflict with recovery",
        offset,
    );
    wait_until("the conflicting session is closed", || s2.is_closed());

    // 3. Other sessions and replay carry on; the standby equals the primary.
    catch_up(&primary, &standby);
    assert_eq!(
        other.query_safe(CHECKSUM),
        primary.safe_sql(CHECKSUM),
        "standby equals primary"
    );
    assert_eq!(other.query_safe("SELECT sum(v) FROM t"), "20");
    assert_eq!(conflicts(&standby), "2", "both conflicts counted");
}
