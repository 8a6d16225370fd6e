//! Sessions that share one core's thread must never wait on each other
//! through it.
//!
//! With `session_cores = 1` every session of the node runs on the same
//! event-loop thread. A call that waits — a row lock held by another
//! session, a deadlock between two of them, a commit's WAL flush,
//! `pg_sleep`, a long scan, DDL, COPY waiting for its data — must leave the
//! thread to the others: in particular to the very session it waits for,
//! which has to read its client's COMMIT on that thread. If a wait blocked
//! the thread, each scenario below would hang (the row lock and deadlock
//! cases forever, the others until the waiting statement ended), so each
//! asserts that another session is answered *while* the waiting statement
//! is still running.

use tap_tests::raw;
use tap_tests::Node;

/// A started primary whose sessions all share one core.
fn one_core_node() -> Node {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("session_cores = 1\ndeadlock_timeout = 100ms\n");
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY, n int NOT NULL)");
    node.safe_sql("INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g");
    node
}

#[test]
fn row_lock_wait_leaves_the_holder_served() {
    let node = one_core_node();
    let holder = node.background_session();
    let waiter = node.background_session();

    // 1. The holder updates a row in an open block; the waiter's update of
    //    the same row waits for it.
    holder.query_safe("BEGIN");
    holder.query_safe("UPDATE t SET n = n + 1 WHERE id = 1");
    let waiting = waiter.send("UPDATE t SET n = n + 1 WHERE id = 1");

    // 2. The holder, on the same thread, still reads and commits.
    assert_eq!(
        holder.query_safe("SELECT n FROM t WHERE id = 1"),
        "1",
        "holder answered while another session waits for its row lock"
    );
    assert!(
        !waiting.is_finished(),
        "waiter still waits before the commit"
    );
    holder.query_safe("COMMIT");

    // 3. The waiter proceeds on the committed row.
    assert_eq!(waiting.wait(), Ok(String::new()), "waiter proceeds");
    assert_eq!(
        node.safe_sql("SELECT n FROM t WHERE id = 1"),
        "2",
        "both applied"
    );
}

#[test]
fn unique_insert_wait_leaves_the_inserter_served() {
    let node = one_core_node();
    let inserter = node.background_session();
    let waiter = node.background_session();

    // 1. An uncommitted insert of key 100; a second insert of it waits.
    inserter.query_safe("BEGIN");
    inserter.query_safe("INSERT INTO t VALUES (100, 0)");
    let waiting = waiter.send("INSERT INTO t VALUES (100, 1)");

    // 2. The inserter is served and rolls back; the waiter's insert wins.
    assert_eq!(
        inserter.query_safe("SELECT count(*) FROM t"),
        "11",
        "inserter answered"
    );
    inserter.query_safe("ROLLBACK");
    assert_eq!(waiting.wait(), Ok(String::new()), "second insert succeeds");
    assert_eq!(
        node.safe_sql("SELECT n FROM t WHERE id = 100"),
        "1",
        "its row stays"
    );
}

#[test]
fn deadlock_between_sessions_of_one_thread_is_detected() {
    let node = one_core_node();
    let a = node.background_session();
    let b = node.background_session();

    // 1. a locks row 1, b locks row 2.
    a.query_safe("BEGIN");
    a.query_safe("UPDATE t SET n = 10 WHERE id = 1");
    b.query_safe("BEGIN");
    b.query_safe("UPDATE t SET n = 20 WHERE id = 2");

    // 2. Each then wants the other's row: one of them gets 40P01, the
    //    other proceeds once the victim's transaction is gone.
    let a_wait = a.send("UPDATE t SET n = 11 WHERE id = 2");
    let b_wait = b.send("UPDATE t SET n = 21 WHERE id = 1");
    let (ra, rb) = (a_wait.wait(), b_wait.wait());
    let codes: Vec<&str> = [&ra, &rb]
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.code()))
        .collect();
    assert_eq!(
        codes,
        vec!["40P01"],
        "exactly one deadlock victim: {ra:?} {rb:?}"
    );
    a.query_safe("ROLLBACK");
    b.query_safe("ROLLBACK");
}

#[test]
fn sleeping_scanning_and_copying_sessions_leave_the_thread() {
    let node = one_core_node();
    let other = node.background_session();

    // 1. pg_sleep: another session is answered while it sleeps.
    let sleeper = node.background_session();
    let sleeping = sleeper.send("SELECT pg_sleep(600)");
    assert_eq!(
        other.query_safe("SELECT 1"),
        "1",
        "answered beside pg_sleep"
    );
    assert!(!sleeping.is_finished(), "pg_sleep still running");
    let cancelled = sleeper.cancel_until_finished(sleeping);
    assert_eq!(
        cancelled.map_err(|e| e.code().to_string()),
        Err("57014".into()),
        "sleep cancelled"
    );

    // 2. A long scan: likewise.
    let scanner = node.background_session();
    let scanning = scanner.send("SELECT count(*) FROM generate_series(1, 2000000000) g");
    assert_eq!(
        other.query_safe("SELECT 2"),
        "2",
        "answered beside a long scan"
    );
    assert!(!scanning.is_finished(), "scan still running");
    let cancelled = scanner.cancel_until_finished(scanning);
    assert_eq!(
        cancelled.map_err(|e| e.code().to_string()),
        Err("57014".into()),
        "scan cancelled"
    );

    // 3. COPY FROM STDIN whose client has not sent its data yet.
    let mut copier = node.raw_connection();
    copier.startup();
    copier.send(&raw::query(b"COPY t FROM STDIN"));
    let copy_in = copier
        .read_message()
        .expect("CopyInResponse")
        .expect("open");
    assert_eq!(copy_in.tag, b'G', "COPY waits for data");
    assert_eq!(
        other.query_safe("SELECT 3"),
        "3",
        "answered while COPY waits for data"
    );
    copier.send(&raw::message(b'd', b"200\t7\n"));
    copier.send(&raw::message(b'c', b""));
    assert!(
        matches!(copier.outcome(), raw::Outcome::Ready),
        "COPY completes"
    );
    assert_eq!(
        node.safe_sql("SELECT n FROM t WHERE id = 200"),
        "7",
        "copied row"
    );
}

#[test]
fn committing_writers_and_ddl_share_the_thread() {
    let node = one_core_node();

    // 1. Writers committing at once (each commit waits for its WAL flush)
    //    and a session building an index, all on one thread, all finish.
    node.safe_sql("CREATE TABLE w (id int PRIMARY KEY, v int)");
    std::thread::scope(|scope| {
        for k in 0..4 {
            let node = &node;
            scope.spawn(move || {
                let s = node.background_session();
                for i in 0..50 {
                    s.query_safe(&format!("INSERT INTO w VALUES ({}, {i})", k * 1000 + i));
                }
            });
        }
        let node = &node;
        scope.spawn(move || {
            let s = node.background_session();
            s.query_safe("CREATE INDEX w_v ON w (v)");
        });
    });
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM w"),
        "200",
        "every commit landed"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM w WHERE v = 7"),
        "4",
        "index answers"
    );
}

#[test]
fn commits_joining_a_group_flush_are_visible_when_acknowledged() {
    let node = one_core_node();
    node.safe_sql("CREATE TABLE g (id int PRIMARY KEY, k int NOT NULL)");
    let joins = || -> i64 {
        node.safe_sql("SELECT wal_group_joins FROM hotpair_stat_wal")
            .parse()
            .expect("wal_group_joins is a number")
    };
    let joins_before = joins();

    // 1. Eight writers on the one thread commit single-row inserts while a
    //    ninth session runs CHECKPOINTs (which wait for every commit
    //    between its record and its clog update — a joined commit holds
    //    that across its await). After each acknowledged commit an
    //    observer, another session on the same thread, must already see
    //    the row. Writers go on in rounds until some commit has joined a
    //    flush under way (a wait of its own kind, so it cannot be forced).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut next_id = 0;
    let mut rounds = 0;
    while joins() == joins_before || rounds == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no commit joined a group flush within 60 s ({rounds} rounds)"
        );
        rounds += 1;
        let base = next_id;
        next_id += 8 * 25;
        std::thread::scope(|scope| {
            for k in 0..8 {
                let node = &node;
                scope.spawn(move || {
                    let writer = node.background_session();
                    let observer = node.background_session();
                    for i in 0..25 {
                        let id = base + k * 25 + i;
                        writer.query_safe(&format!("INSERT INTO g VALUES ({id}, {k})"));
                        assert_eq!(
                            observer.query_safe(&format!("SELECT count(*) FROM g WHERE id = {id}")),
                            "1",
                            "acknowledged commit {id} visible to another session"
                        );
                    }
                });
            }
            let node = &node;
            scope.spawn(move || {
                let s = node.background_session();
                for _ in 0..5 {
                    s.query_safe("CHECKPOINT");
                }
            });
        });
    }

    // 2. Everything acknowledged is there, and survives a crash.
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM g"),
        next_id.to_string(),
        "every commit landed"
    );
    node.kill9();
    node.start();
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM g"),
        next_id.to_string(),
        "every acknowledged commit survives a crash"
    );
}
