//! Writers that collide: row locks, deadlocks, unique keys, cancellation.
//!
//! Each scenario makes one session wait on another's open transaction — the
//! paths where lost updates, hung sessions and duplicate keys come from. A
//! waiting UPDATE must re-check the newest row version after the holder
//! commits (READ COMMITTED) so no increment is lost, or fail with 40001
//! (REPEATABLE READ); a cycle of waits must be broken with 40P01 rather than
//! hang; an insert that meets an uncommitted duplicate must wait for its
//! inserter and then fail (23505) or succeed depending on how it ended; and
//! a CancelRequest must interrupt a running statement (57014). The tests
//! never assume which session reaches the server first: every outcome they
//! assert holds for any interleaving.

use tap_tests::Node;

/// A started primary with `conf` appended to its configuration.
fn started_node(conf: &str) -> Node {
    let node = Node::new("primary");
    node.init(false);
    node.append_conf(conf);
    node.start();
    node
}

#[test]
fn concurrent_increments() {
    // 1. A counter row and two sessions.
    let node = started_node("");
    node.safe_sql("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)");
    node.safe_sql("INSERT INTO counter VALUES (1, 0)");
    let s1 = node.background_session();
    let s2 = node.background_session();

    // 2. s1 increments in an open block; s2's increment, in a block too,
    //    waits for s1's row lock.
    s1.query_safe("BEGIN");
    s1.query_safe("UPDATE counter SET n = n + 1 WHERE id = 1");
    s2.query_safe("BEGIN");
    let s2_update = s2.send("UPDATE counter SET n = n + 1 WHERE id = 1");

    // 3. s1 commits; s2's update proceeds on the new version and commits.
    s1.query_safe("COMMIT");
    assert_eq!(
        s2_update.wait(),
        Ok(String::new()),
        "waiting update succeeds after the holder commits"
    );
    s2.query_safe("COMMIT");
    assert_eq!(
        node.safe_sql("SELECT n FROM counter WHERE id = 1"),
        "2",
        "both increments applied"
    );

    // 4. Many sessions incrementing at once lose nothing.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                let s = node.background_session();
                for _ in 0..25 {
                    s.query_safe("UPDATE counter SET n = n + 1 WHERE id = 1");
                }
            });
        }
    });
    assert_eq!(
        node.safe_sql("SELECT n FROM counter WHERE id = 1"),
        "102",
        "100 concurrent increments applied"
    );

    // 5. REPEATABLE READ: updating a row changed by a transaction that
    //    committed after the snapshot fails with a serialization error.
    s2.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(
        s2.query_safe("SELECT n FROM counter WHERE id = 1"),
        "102",
        "repeatable read snapshot taken"
    );
    s1.query_safe("UPDATE counter SET n = n + 1 WHERE id = 1");
    let err = s2.query_err("UPDATE counter SET n = n + 1 WHERE id = 1");
    assert_eq!(
        err.code(),
        "40001",
        "concurrent update under repeatable read: {err}"
    );
    s2.query_safe("ROLLBACK");
    assert_eq!(
        node.safe_sql("SELECT n FROM counter WHERE id = 1"),
        "103",
        "only the committed increment applied"
    );

    node.stop("fast");
}

#[test]
fn deadlock_detected() {
    // 1. Two accounts, two sessions, each locking one row.
    let node = started_node("deadlock_timeout = 100ms");
    node.safe_sql("CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)");
    node.safe_sql("INSERT INTO accounts VALUES (1, 100), (2, 100)");
    let s1 = node.background_session();
    let s2 = node.background_session();
    s1.query_safe("BEGIN");
    s1.query_safe("UPDATE accounts SET balance = balance - 10 WHERE id = 1");
    s2.query_safe("BEGIN");
    s2.query_safe("UPDATE accounts SET balance = balance - 10 WHERE id = 2");

    // 2. Each now wants the other's row: a cycle of waits.
    let s1_update = s1.send("UPDATE accounts SET balance = balance + 10 WHERE id = 2");
    let s2_update = s2.send("UPDATE accounts SET balance = balance + 10 WHERE id = 1");
    let r1 = s1_update.wait();
    let r2 = s2_update.wait();

    // 3. Exactly one is the victim (40P01); the other proceeds.
    let (victim, survivor, expected) = match (&r1, &r2) {
        (Err(e), Ok(_)) => {
            assert_eq!(e.code(), "40P01", "s1 failed with deadlock_detected: {e}");
            (&s1, &s2, "1|110\n2|90")
        }
        (Ok(_), Err(e)) => {
            assert_eq!(e.code(), "40P01", "s2 failed with deadlock_detected: {e}");
            (&s2, &s1, "1|90\n2|110")
        }
        _ => panic!(
            "exactly one session must be chosen as the deadlock victim: s1 {r1:?}, s2 {r2:?}"
        ),
    };
    let err = victim.query_err("SELECT 1");
    assert_eq!(err.code(), "25P02", "victim's block is aborted");
    victim.query_safe("ROLLBACK");
    survivor.query_safe("COMMIT");

    // 4. The survivor's transfer is complete, the victim's absent.
    assert_eq!(
        node.safe_sql("SELECT id, balance FROM accounts ORDER BY id"),
        expected,
        "survivor's transfer applied"
    );

    node.stop("fast");
}

#[test]
fn duplicate_keys() {
    // 1. A table with a primary key and a unique index.
    let node = started_node("");
    node.safe_sql("CREATE TABLE uniq (k int PRIMARY KEY, v text, email text)");
    node.safe_sql("CREATE UNIQUE INDEX uniq_email ON uniq (email)");
    node.safe_sql("INSERT INTO uniq VALUES (1, 'a', 'a@example.com')");

    // 2. Committed duplicates are rejected.
    let err = node
        .sql("INSERT INTO uniq VALUES (1, 'b', 'b@example.com')")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "duplicate primary key: {err}");
    let err = node
        .sql("INSERT INTO uniq VALUES (2, 'b', 'a@example.com')")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "duplicate unique index key: {err}");
    let err = node
        .sql("INSERT INTO uniq VALUES (3, 'c', NULL), (3, 'd', NULL)")
        .unwrap_err();
    assert_eq!(err.code(), "23505", "duplicate within one statement: {err}");

    // 3. An insert meeting an uncommitted duplicate waits, then fails when
    //    the other inserter commits.
    let s1 = node.background_session();
    let s2 = node.background_session();
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO uniq VALUES (10, 's1', NULL)");
    let s2_insert = s2.send("INSERT INTO uniq VALUES (10, 's2', NULL)");
    s1.query_safe("COMMIT");
    let err = s2_insert.wait().unwrap_err();
    assert_eq!(
        err.code(),
        "23505",
        "waiting insert fails after the conflicting insert commits: {err}"
    );

    // 4. … and succeeds when the other inserter rolls back.
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO uniq VALUES (11, 's1', NULL)");
    let s2_insert = s2.send("INSERT INTO uniq VALUES (11, 's2', NULL)");
    s1.query_safe("ROLLBACK");
    assert_eq!(
        s2_insert.wait(),
        Ok(String::new()),
        "waiting insert succeeds after the conflicting insert rolls back"
    );
    assert_eq!(
        node.safe_sql("SELECT v FROM uniq WHERE k IN (10, 11) ORDER BY k"),
        "s1\ns2",
        "winners of the races"
    );

    // 5. A deleted-and-committed key can be reused.
    node.safe_sql("DELETE FROM uniq WHERE k = 1");
    node.safe_sql("INSERT INTO uniq VALUES (1, 'again', 'a@example.com')");
    assert_eq!(
        node.safe_sql("SELECT v FROM uniq WHERE k = 1"),
        "again",
        "key reusable after delete"
    );

    node.stop("fast");
}

#[test]
fn cancel_request() {
    // 1. A session running a long statement.
    let node = started_node("");
    let s = node.background_session();
    let sleep = s.send("SELECT pg_sleep(60)");

    // 2. CancelRequest interrupts it with 57014.
    let err = s.cancel_until_finished(sleep).unwrap_err();
    assert_eq!(err.code(), "57014", "canceled statement: {err}");
    assert!(
        err.message
            .contains("canceling statement due to user request"),
        "cancel message: {err}"
    );

    // 3. The session is usable afterwards, also inside a block.
    assert_eq!(s.query_safe("SELECT 1"), "1", "session works after cancel");
    s.query_safe("BEGIN");
    let sleep = s.send("SELECT pg_sleep(60)");
    assert_eq!(
        s.cancel_until_finished(sleep).unwrap_err().code(),
        "57014",
        "canceled inside a block"
    );
    assert_eq!(
        s.query_err("SELECT 1").code(),
        "25P02",
        "block aborted by the cancel"
    );
    s.query_safe("ROLLBACK");
    assert_eq!(
        s.query_safe("SELECT 2"),
        "2",
        "session works after rollback"
    );

    node.stop("fast");
}

/// `idle_in_transaction_session_timeout` ends a session that leaves a
/// transaction block open and silent (FATAL 25P03, its locks released),
/// and leaves alone a session idle outside a transaction for just as long.
#[test]
fn idle_in_transaction_timeout() {
    let node = started_node("");
    node.safe_sql("CREATE TABLE held (id int PRIMARY KEY, n int)");
    node.safe_sql("INSERT INTO held VALUES (1, 0)");
    let outside = node.background_session();
    let inside = node.background_session();
    outside.query_safe("SET idle_in_transaction_session_timeout = '200ms'");
    inside.query_safe("SET idle_in_transaction_session_timeout = '200ms'");
    assert_eq!(
        inside.query_safe("SHOW idle_in_transaction_session_timeout"),
        "200ms"
    );
    inside.query_safe("BEGIN");
    inside.query_safe("UPDATE held SET n = 1 WHERE id = 1");
    tap_tests::utils::wait_until("the idle transaction's session closes", || {
        inside.is_closed()
    });
    assert!(
        node.log_contains("terminating connection due to idle-in-transaction timeout"),
        "FATAL logged"
    );
    // Its transaction rolled back, so its row lock is gone: this does not wait.
    node.safe_sql("UPDATE held SET n = n + 10 WHERE id = 1");
    assert_eq!(node.safe_sql("SELECT n FROM held"), "10");
    // Idle outside a transaction at least as long: still served.
    assert_eq!(outside.query_safe("SELECT 1"), "1");
    node.stop("fast");
}
