//! Row visibility on a hot standby for sessions that live for the whole
//! test — PostgreSQL's src/test/recovery/t/021_row_visibility.pl, written
//! after the September 2020 bug: replay of a commit did not bump
//! `xact_completion_count`, so a standby session reusing its cached
//! snapshot never saw new rows. Every check runs in one long-lived session
//! per node, after `wait_for_catchup(replay)`.
//!
//! Both variants run every step, the two prepared transactions included
//! (`max_prepared_transactions = 10` on the primary).

use tap_tests::Node;

fn setup() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 10");
    primary.start();
    primary.safe_sql("CREATE TABLE test_visibility (data text)");
    primary.backup("my_backup");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "my_backup", true);
    standby.start();
    (primary, standby)
}

#[test]
fn row_visibility_native_sessions() {
    let (primary, standby) = setup();
    let p = primary.background_session();
    let s = standby.background_session();
    let select = "SELECT * FROM test_visibility ORDER BY data";
    let catchup = || {
        let lsn = primary.lsn("insert");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    };
    assert_eq!(s.query_safe("SELECT pg_is_in_recovery()"), "t");

    // 1. Empty table invisible rows: nothing.
    catchup();
    assert_eq!(s.query_safe(select), "", "data not visible yet");

    // 2. Insert on the primary: visible on the standby after catch-up.
    p.query_safe("INSERT INTO test_visibility VALUES ('first insert')");
    catchup();
    assert_eq!(s.query_safe(select), "first insert", "insert visible");

    // 3. An uncommitted UPDATE is invisible on the standby.
    p.query_safe("BEGIN");
    p.query_safe("UPDATE test_visibility SET data = 'first update' RETURNING data");
    catchup();
    assert_eq!(
        s.query_safe(select),
        "first insert",
        "uncommitted update invisible"
    );

    // 4. After COMMIT it is visible in the standby session's next statement.
    p.query_safe("COMMIT");
    catchup();
    assert_eq!(
        s.query_safe(select),
        "first update",
        "committed update visible"
    );

    // 5. Two prepared transactions.
    p.query_safe("DELETE FROM test_visibility");
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO test_visibility VALUES ('inserted in 2pc1')");
    p.query_safe("PREPARE TRANSACTION 'will_commit'");
    p.query_safe("BEGIN");
    p.query_safe("INSERT INTO test_visibility VALUES ('inserted in 2pc2')");
    p.query_safe("PREPARE TRANSACTION 'will_abort'");
    catchup();
    assert_eq!(s.query_safe(select), "", "prepared transactions invisible");

    // 6. COMMIT PREPARED / ROLLBACK PREPARED from other connections.
    primary.safe_sql("COMMIT PREPARED 'will_commit'");
    primary.safe_sql("ROLLBACK PREPARED 'will_abort'");
    catchup();
    assert_eq!(
        s.query_safe(select),
        "inserted in 2pc1",
        "only the committed one visible"
    );
}

#[test]
fn row_visibility_psql_sessions() {
    let (primary, standby) = setup();
    let mut p = primary.psql_session();
    let mut s = standby.psql_session();
    let select = "SELECT * FROM test_visibility ORDER BY data;";
    let catchup = || {
        let lsn = primary.lsn("insert");
        primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    };
    catchup();
    s.query_until(select, tap_tests::line("(0 rows)"));
    p.query_until(
        "INSERT INTO test_visibility VALUES ('first insert');",
        tap_tests::line("INSERT 0 1"),
    );
    catchup();
    s.query_until(select, tap_tests::line("(1 row)"));
    p.query_until("BEGIN;", tap_tests::line("BEGIN"));
    p.query_until(
        "UPDATE test_visibility SET data = 'first update';",
        tap_tests::line("UPDATE 1"),
    );
    catchup();
    let out = s.query_until(select, tap_tests::line("(1 row)"));
    assert!(
        out.contains("first insert"),
        "uncommitted update invisible: {out}"
    );
    p.query_until("COMMIT;", tap_tests::line("COMMIT"));
    catchup();
    let out = s.query_until(select, tap_tests::line("(1 row)"));
    assert!(
        out.contains("first update"),
        "committed update visible: {out}"
    );

    // Two prepared transactions: invisible while prepared.
    p.query_until("DELETE FROM test_visibility;", tap_tests::line("DELETE 1"));
    p.query_until("BEGIN;", tap_tests::line("BEGIN"));
    p.query_until(
        "INSERT INTO test_visibility VALUES ('inserted in 2pc1');",
        tap_tests::line("INSERT 0 1"),
    );
    p.query_until(
        "PREPARE TRANSACTION 'will_commit';",
        tap_tests::line("PREPARE TRANSACTION"),
    );
    p.query_until("BEGIN;", tap_tests::line("BEGIN"));
    p.query_until(
        "INSERT INTO test_visibility VALUES ('inserted in 2pc2');",
        tap_tests::line("INSERT 0 1"),
    );
    p.query_until(
        "PREPARE TRANSACTION 'will_abort';",
        tap_tests::line("PREPARE TRANSACTION"),
    );
    catchup();
    s.query_until(select, tap_tests::line("(0 rows)"));

    // COMMIT PREPARED / ROLLBACK PREPARED: only the committed one visible.
    p.query_until(
        "COMMIT PREPARED 'will_commit';",
        tap_tests::line("COMMIT PREPARED"),
    );
    p.query_until(
        "ROLLBACK PREPARED 'will_abort';",
        tap_tests::line("ROLLBACK PREPARED"),
    );
    catchup();
    let out = s.query_until(select, tap_tests::line("(1 row)"));
    assert!(
        out.contains("inserted in 2pc1") && !out.contains("2pc2"),
        "only the committed prepared transaction visible: {out}"
    );
}
