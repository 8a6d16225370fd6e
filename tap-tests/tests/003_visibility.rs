//! Row visibility between long-lived sessions, and the snapshot cache.
//!
//! hotpair caches a snapshot until some transaction that had an xid
//! completes (`xact_completion_count`). If a completion forgot to bump that
//! counter, a session that has been reusing a cached snapshot would never
//! see new rows — the bug PostgreSQL shipped on standbys in 2020, missed
//! because every test query ran in a fresh psql. So these checks run in
//! sessions held open for the whole test: uncommitted rows stay invisible,
//! a commit is visible in the other session's *next statement* under READ
//! COMMITTED and not under REPEATABLE READ until it ends, a rollback leaves
//! nothing, and `hotpair_stat_snapshots` proves the cache was reused between
//! commits and recomputed after one. The same scenario then runs through
//! two real psql processes, checking psql's own output.

use tap_tests::{line, Node, Session};

/// (snapshots_computed, snapshots_reused, xact_completion_count).
fn snapshot_stats(s: &Session) -> (u64, u64, u64) {
    let out =
        s.query_safe("SELECT snapshots_computed, snapshots_reused, xact_completion_count FROM hotpair_stat_snapshots");
    let v: Vec<u64> = out
        .split('|')
        .map(|x| x.parse().expect("numeric counter"))
        .collect();
    assert_eq!(
        v.len(),
        3,
        "three counters in hotpair_stat_snapshots: {out:?}"
    );
    (v[0], v[1], v[2])
}

#[test]
fn visibility_between_native_sessions() {
    // 1. A primary with an empty table; two sessions open for the whole test.
    let node = Node::new("primary");
    node.init(false);
    node.start();
    node.safe_sql("CREATE TABLE test_visibility (id int PRIMARY KEY, data text NOT NULL)");
    let writer = node.background_session();
    let reader = node.background_session();
    let select = "SELECT id, data FROM test_visibility ORDER BY id";

    assert_eq!(reader.query_safe(select), "", "empty table");

    // 2. An uncommitted insert is visible only to its own session.
    writer.query_safe("BEGIN");
    writer.query_safe("INSERT INTO test_visibility VALUES (1, 'first insert')");
    assert_eq!(
        writer.query_safe(select),
        "1|first insert",
        "own uncommitted insert visible"
    );
    assert_eq!(
        reader.query_safe(select),
        "",
        "uncommitted insert invisible"
    );

    // 3. After COMMIT the other session's next statement sees it.
    writer.query_safe("COMMIT");
    assert_eq!(
        reader.query_safe(select),
        "1|first insert",
        "committed insert visible in next statement"
    );

    // 4. READ COMMITTED: a commit is seen by the next statement inside an
    //    open block, too.
    reader.query_safe("BEGIN");
    assert_eq!(
        reader.query_safe("SELECT count(*) FROM test_visibility"),
        "1",
        "count at block start"
    );
    writer.query_safe("INSERT INTO test_visibility VALUES (2, 'second insert')");
    assert_eq!(
        reader.query_safe(select),
        "1|first insert\n2|second insert",
        "read committed sees a commit mid-block"
    );
    reader.query_safe("COMMIT");

    // 5. An uncommitted UPDATE and DELETE are invisible; after COMMIT they show.
    writer.query_safe("BEGIN");
    writer.query_safe("UPDATE test_visibility SET data = 'first update' WHERE id = 1");
    writer.query_safe("DELETE FROM test_visibility WHERE id = 2");
    assert_eq!(
        reader.query_safe(select),
        "1|first insert\n2|second insert",
        "uncommitted update and delete invisible"
    );
    writer.query_safe("COMMIT");
    assert_eq!(
        reader.query_safe(select),
        "1|first update",
        "committed update and delete visible"
    );

    // 6. REPEATABLE READ keeps its first snapshot until the block ends.
    reader.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(
        reader.query_safe(select),
        "1|first update",
        "repeatable read first snapshot"
    );
    writer.query_safe("INSERT INTO test_visibility VALUES (3, 'third insert')");
    assert_eq!(
        reader.query_safe(select),
        "1|first update",
        "repeatable read does not see a later commit"
    );
    reader.query_safe("COMMIT");
    assert_eq!(
        reader.query_safe(select),
        "1|first update\n3|third insert",
        "visible after repeatable read ends"
    );

    // 7. ROLLBACK leaves nothing behind, for either session.
    writer.query_safe("BEGIN");
    writer.query_safe("INSERT INTO test_visibility VALUES (4, 'rolled back')");
    writer.query_safe("UPDATE test_visibility SET data = 'rolled back' WHERE id = 1");
    writer.query_safe("ROLLBACK");
    let after_rollback = "1|first update\n3|third insert";
    assert_eq!(
        reader.query_safe(select),
        after_rollback,
        "rollback invisible to the other session"
    );
    assert_eq!(
        writer.query_safe(select),
        after_rollback,
        "rollback invisible to its own session"
    );
    // The rolled-back key is free again.
    writer.query_safe("INSERT INTO test_visibility VALUES (4, 'fourth insert')");

    if !node.is_hotpair() {
        return; // hotpair_stat_snapshots is hotpair's own view
    }

    // 8. With no commits, repeated SELECTs reuse the cached snapshot: the
    //    reused counter grows, the computed counter does not.
    reader.query_safe(select); // warm the cache after step 7's commit
    let (computed_before, reused_before, completions_before) = snapshot_stats(&reader);
    for _ in 0..3 {
        reader.query_safe(select);
    }
    let (computed_after, reused_after, completions_after) = snapshot_stats(&reader);
    assert!(
        reused_after > reused_before,
        "snapshots_reused grows across SELECTs without commits"
    );
    assert_eq!(
        computed_after, computed_before,
        "no snapshot recomputed without a commit"
    );
    assert_eq!(
        completions_after, completions_before,
        "no completions while only reading"
    );

    // 9. A commit elsewhere invalidates the cache: the reader's next SELECT
    //    recomputes and sees the row.
    writer.query_safe("INSERT INTO test_visibility VALUES (5, 'fifth insert')");
    assert_eq!(
        reader.query_safe("SELECT data FROM test_visibility WHERE id = 5"),
        "fifth insert",
        "commit visible to the reader's next statement after cached snapshots"
    );
    let (computed_final, _, completions_final) = snapshot_stats(&reader);
    assert!(
        completions_final > completions_after,
        "xact_completion_count bumped by the commit"
    );
    assert!(
        computed_final > computed_after,
        "snapshot recomputed after a commit"
    );

    node.stop("fast");
}

#[test]
fn visibility_between_psql_sessions() {
    // 1. A primary with an empty table; one psql per role, open throughout,
    //    fed on stdin as in PostgreSQL's 021_row_visibility.pl.
    let node = Node::new("primary");
    node.init(false);
    node.start();
    node.safe_sql("CREATE TABLE test_visibility (data text NOT NULL)");
    let mut psql_writer = node.psql_session();
    let mut psql_reader = node.psql_session();
    let select = "SELECT * FROM test_visibility ORDER BY data;";

    psql_reader.query_until(select, line("(0 rows)"));

    // 2. An INSERT committed by another connection is visible.
    node.safe_sql("INSERT INTO test_visibility VALUES ('first insert')");
    let out = psql_reader.query_until(select, "first insert\n(1 row)");
    assert!(
        out.contains("data\nfirst insert\n(1 row)"),
        "insert visible: {out:?}"
    );

    // 3. An uncommitted UPDATE is invisible.
    let out = psql_writer.query_until(
        "BEGIN;\nUPDATE test_visibility SET data = 'first update' RETURNING data;",
        line("UPDATE 1"),
    );
    assert!(
        out.contains("BEGIN\ndata\nfirst update\n(1 row)\nUPDATE 1"),
        "UPDATE RETURNING output: {out:?}"
    );
    let out = psql_reader.query_until(select, "(1 row)");
    assert!(
        out.contains("first insert\n(1 row)"),
        "uncommitted update invisible: {out:?}"
    );

    // 4. COMMIT makes it visible to the reader's next statement.
    psql_writer.query_until("COMMIT;", line("COMMIT"));
    let out = psql_reader.query_until(select, "(1 row)");
    assert!(
        out.contains("first update\n(1 row)"),
        "committed update visible: {out:?}"
    );

    // 5. A rolled-back DELETE changes nothing.
    psql_writer.query_until(
        "BEGIN;\nDELETE FROM test_visibility;\nROLLBACK;",
        line("ROLLBACK"),
    );
    let out = psql_reader.query_until(select, "(1 row)");
    assert!(
        out.contains("first update\n(1 row)"),
        "rolled back delete invisible: {out:?}"
    );

    // 6. Banner-delimited queries return exactly one statement's output.
    assert_eq!(
        psql_reader.query("SELECT count(*) FROM test_visibility;"),
        "count\n1\n(1 row)",
        "banner query"
    );
    assert_eq!(psql_reader.take_stderr(), "", "no errors in the reader");

    assert_eq!(psql_writer.quit(), 0, "writer psql exits cleanly");
    assert_eq!(psql_reader.quit(), 0, "reader psql exits cleanly");
    node.stop("fast");
}
