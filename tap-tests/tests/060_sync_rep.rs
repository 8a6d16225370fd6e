//! Synchronous replication (replication.md, "Synchronous replication"),
//! ported from PostgreSQL's src/test/recovery/t/007_sync_rep.pl with two
//! standbys, plus the waits themselves: `sync_priority` / `sync_state` of
//! `pg_stat_replication` for the old list syntax, `*`, `FIRST n`, `ANY n`
//! while standbys come and go; a commit that blocks (wait event `SyncRep`)
//! while its only synchronous standby is down, invisible to other sessions,
//! and completes once the standby is back; a cancelled wait (PostgreSQL's
//! WARNING, the commit stands); a reload emptying the names releases every
//! waiter; `pg_cancel_backend()` ends a wait like a CancelRequest;
//! `synchronous_commit = local` does not wait; `remote_apply` makes
//! each commit visible on the standby the moment COMMIT returns; PREPARE
//! TRANSACTION and COMMIT PREPARED wait too.
//!
//! What goes wrong without this: a commit acknowledged to the client but
//! lost when the primary fails over to a standby that never got it, or a
//! read on the standby right after a `remote_apply` commit that misses it.

use tap_tests::{wait_until, Node};

const CHECK: &str =
    "SELECT application_name, sync_priority, sync_state FROM pg_stat_replication ORDER BY application_name";

/// Sets `synchronous_standby_names` through ALTER SYSTEM and a reload.
fn set_names(primary: &Node, names: &str) {
    primary.safe_sql(&format!(
        "ALTER SYSTEM SET synchronous_standby_names = '{names}'"
    ));
    primary.safe_sql("SELECT pg_reload_conf()");
}

/// `test_sync_state`: waits until pg_stat_replication shows `expected`,
/// after installing `setting` if given.
fn sync_state(primary: &Node, expected: &str, msg: &str, setting: Option<&str>) {
    if let Some(s) = setting {
        set_names(primary, s);
    }
    assert!(
        primary.poll_query_until(CHECK, expected),
        "{msg}: pg_stat_replication is\n{}",
        primary.safe_sql(CHECK)
    );
}

/// Waits until `n` sessions of `primary` wait for synchronous standbys.
fn wait_for_syncrep_waiters(primary: &Node, n: usize) {
    let q = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND wait_event_type = 'IPC' AND state = 'active'";
    assert!(
        primary.poll_query_until(q, &n.to_string()),
        "expected {n} SyncRep waiters; pg_stat_activity:\n{}",
        primary.safe_sql(
            "SELECT pid, state, wait_event_type, wait_event, query FROM pg_stat_activity"
        )
    );
}

#[test]
fn sync_rep() {
    // 1. A primary and two standbys (application_name = their names).
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 5\n");
    primary.start();
    primary.safe_sql("CREATE TABLE t (a int)");
    let standby1 = Node::standby_of(&primary, "standby1");
    let standby2 = Node::standby_of(&primary, "standby2");
    primary.wait_for_replay(&standby1);
    primary.wait_for_replay(&standby2);
    assert_eq!(
        primary.safe_sql(CHECK),
        "standby1|0|async\nstandby2|0|async",
        "no synchronous standbys by default"
    );

    // 2. sync_state and sync_priority for each form of the setting.
    sync_state(
        &primary,
        "standby1|1|sync\nstandby2|2|potential",
        "old syntax of synchronous_standby_names",
        Some("standby1,standby2"),
    );
    sync_state(
        &primary,
        "standby1|1|sync\nstandby2|1|potential",
        "asterisk in synchronous_standby_names",
        Some("*"),
    );
    sync_state(
        &primary,
        "standby1|1|sync\nstandby2|2|sync",
        "2 synchronous standbys",
        Some("2(standby1,standby2)"),
    );
    sync_state(
        &primary,
        "standby1|0|async\nstandby2|2|sync",
        "num_sync exceeds the num of potential sync standbys",
        Some("3(standby0,standby2)"),
    );
    sync_state(
        &primary,
        "standby1|2|potential\nstandby2|1|sync",
        "priority-based sync replication specified by FIRST keyword",
        Some("FIRST 1 (standby2, \"STANDBY1\")"),
    );
    // The sync standby goes: the potential one takes over; back, it is
    // sync again.
    standby2.stop("fast");
    sync_state(
        &primary,
        "standby1|2|sync",
        "potential standby is promoted to sync",
        None,
    );
    standby2.start();
    sync_state(
        &primary,
        "standby1|2|potential\nstandby2|1|sync",
        "reconnected standby is sync again",
        None,
    );
    sync_state(
        &primary,
        "standby1|1|quorum\nstandby2|1|quorum",
        "2 quorum",
        Some("ANY 2(standby1, standby2)"),
    );
    sync_state(
        &primary,
        "standby1|1|quorum\nstandby2|1|quorum",
        "all standbys are quorum candidates",
        Some("ANY 1(*)"),
    );
    sync_state(
        &primary,
        "standby1|0|async\nstandby2|0|async",
        "unlisted standbys are async",
        Some("standby0"),
    );

    // 3. Bad values: PostgreSQL's errors; SET is refused.
    let e = primary
        .sql("ALTER SYSTEM SET synchronous_standby_names = 'FIRST (a'")
        .unwrap_err();
    assert_eq!(e.code(), "42601", "syntax error code: {e}");
    assert!(
        e.to_string()
            .contains("invalid value for parameter \"synchronous_standby_names\": \"FIRST (a\""),
        "syntax error message: {e}"
    );
    let e = primary
        .sql("ALTER SYSTEM SET synchronous_standby_names = 'FIRST 0 (a)'")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("number of synchronous standbys (0) must be greater than zero"),
        "num_sync 0: {e}"
    );
    primary.expect_error("SET synchronous_standby_names = 'a'", "55P02");
    primary.expect_error("SET synchronous_commit = 'remote'", "22023");

    // 4. The only sync standby is down: a commit waits (and stays
    //    invisible) until it is back, then completes.
    set_names(&primary, "standby1");
    sync_state(
        &primary,
        "standby1|1|sync\nstandby2|0|async",
        "standby1 sync",
        None,
    );
    standby1.stop("fast");
    let writer = primary.background_session();
    let pending = writer.send("INSERT INTO t VALUES (1)");
    wait_for_syncrep_waiters(&primary, 1);
    assert!(!pending.is_finished(), "commit waits for the sync standby");
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t"),
        "0",
        "waiting commit invisible to others"
    );
    standby1.start();
    pending.wait_ok();
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t"),
        "1",
        "commit visible once confirmed"
    );
    primary.wait_for_replay(&standby1);
    assert_eq!(
        standby1.safe_sql("SELECT count(*) FROM t"),
        "1",
        "row on the standby"
    );

    // 5. Cancelling the wait: PostgreSQL's WARNING, COMMIT succeeds, the
    //    row is visible locally.
    standby1.stop("fast");
    let mut psql = primary.psql_session();
    psql.send("INSERT INTO t VALUES (2);");
    wait_for_syncrep_waiters(&primary, 1);
    psql.interrupt();
    let out = psql.wait_for("INSERT 0 1");
    assert!(out.contains("INSERT 0 1"), "commit reported: {out}");
    // psql reading a script stops after a cancel (as it does with
    // PostgreSQL); the WARNING is on its stderr.
    let mut stderr = String::new();
    wait_until("the cancel WARNING", || {
        stderr.push_str(&psql.take_stderr());
        stderr.contains("DETAIL")
    });
    psql.quit();
    assert!(
        stderr.contains("WARNING:  canceling wait for synchronous replication due to user request"),
        "cancel warning: {stderr}"
    );
    assert!(
        stderr.contains("DETAIL:  The transaction has already committed locally, but might not have been replicated to the standby."),
        "cancel detail: {stderr}"
    );
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t WHERE a = 2"),
        "1",
        "cancelled commit visible locally"
    );

    // 5b. pg_cancel_backend() ends a wait the same way.
    let victim = primary.background_session();
    let pid = victim.query_safe("SELECT pg_backend_pid()");
    let pending = victim.send("INSERT INTO t VALUES (8)");
    wait_for_syncrep_waiters(&primary, 1);
    assert_eq!(
        primary.safe_sql(&format!("SELECT pg_cancel_backend({pid})")),
        "t",
        "pg_cancel_backend finds the waiting session"
    );
    pending.wait_ok();
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t WHERE a = 8"),
        "1",
        "commit cancelled by pg_cancel_backend visible"
    );
    assert_eq!(
        primary.safe_sql("SELECT pg_cancel_backend(1)"),
        "f",
        "no such backend"
    );

    // 6. synchronous_commit = local and off do not wait.
    let local = primary.background_session();
    local.query_safe("SET synchronous_commit = local");
    local.query_safe("INSERT INTO t VALUES (3)");
    local.query_safe("SET synchronous_commit = off");
    local.query_safe("INSERT INTO t VALUES (4)");
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t WHERE a IN (3, 4)"),
        "2",
        "local / off commits did not wait"
    );

    // 7. Two-phase commit waits too (PREPARE and COMMIT PREPARED).
    let tp = primary.background_session();
    tp.query_safe("BEGIN");
    tp.query_safe("INSERT INTO t VALUES (5)");
    let prep = tp.send("PREPARE TRANSACTION 'p1'");
    wait_for_syncrep_waiters(&primary, 1);
    assert!(!prep.is_finished(), "PREPARE waits");

    // 8. Emptying synchronous_standby_names releases every waiter.
    let pending = writer.send("INSERT INTO t VALUES (6)");
    wait_for_syncrep_waiters(&primary, 2);
    set_names(&primary, "");
    prep.wait_ok();
    pending.wait_ok();
    assert_eq!(
        primary.safe_sql("SHOW synchronous_standby_names"),
        "",
        "reloaded value shown"
    );
    set_names(&primary, "standby1");
    wait_until("synchronous_standby_names reloaded", || {
        primary.safe_sql("SHOW synchronous_standby_names") == "standby1"
    });
    let fin = tp.send("COMMIT PREPARED 'p1'");
    wait_for_syncrep_waiters(&primary, 1);
    standby1.start();
    fin.wait_ok();
    sync_state(
        &primary,
        "standby1|1|sync\nstandby2|0|async",
        "standby1 back",
        None,
    );

    // 9. remote_apply: each commit visible on the standby as soon as
    //    COMMIT returns — to new sessions and to a long-lived one.
    primary.safe_sql("CREATE TABLE ra (a int)");
    primary.wait_for_replay(&standby1);
    let reader = standby1.background_session();
    let w = primary.background_session();
    w.query_safe("SET synchronous_commit = remote_apply");
    for i in 1..=50 {
        w.query_safe(&format!("INSERT INTO ra VALUES ({i})"));
        assert_eq!(
            reader.query_safe("SELECT count(*) FROM ra"),
            i.to_string(),
            "remote_apply commit {i} visible to a long-lived standby session"
        );
        if i % 10 == 0 {
            assert_eq!(
                standby1.safe_sql("SELECT max(a) FROM ra"),
                i.to_string(),
                "remote_apply commit {i} visible to a new standby session"
            );
        }
    }
    // remote_write and on complete with the standby up.
    w.query_safe("SET synchronous_commit = remote_write");
    w.query_safe("INSERT INTO ra VALUES (100)");
    w.query_safe("SET synchronous_commit = on");
    w.query_safe("INSERT INTO ra VALUES (101)");
    let lag = primary.safe_sql(
        "SELECT write_lsn IS NOT NULL AND flush_lsn IS NOT NULL AND replay_lsn IS NOT NULL FROM pg_stat_replication WHERE application_name = 'standby1'",
    );
    assert_eq!(lag, "t", "positions shown");

    // 10. A fast shutdown ends a waiting commit with PostgreSQL's
    //     termination WARNING; the commit survives the restart.
    standby1.stop("fast");
    let mut psql = primary.psql_session();
    psql.send("INSERT INTO t VALUES (7);");
    wait_for_syncrep_waiters(&primary, 1);
    primary.stop("fast");
    let mut stderr = String::new();
    wait_until("the termination WARNING", || {
        stderr.push_str(&psql.take_stderr());
        stderr.contains("DETAIL")
    });
    assert!(
        stderr.contains("WARNING:  canceling the wait for synchronous replication and terminating connection due to administrator command"),
        "termination warning: {stderr}"
    );
    psql.quit();
    set_names_offline(&primary);
    primary.start();
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM t WHERE a = 7"),
        "1",
        "terminated wait: committed locally"
    );
}

/// Clears `synchronous_standby_names` in a stopped node's
/// postgresql.auto.conf.
fn set_names_offline(node: &Node) {
    let auto = node.data_dir().join("postgresql.auto.conf");
    let text = std::fs::read_to_string(&auto).unwrap_or_default();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("synchronous_standby_names"))
        .collect();
    std::fs::write(&auto, kept.join("\n") + "\n").expect("write postgresql.auto.conf");
}
