//! SQL-level cursors end to end (`sql::portalcmds`): a forward cursor over
//! a large table, fetched 1000 rows at a time, a WITH HOLD cursor across
//! COMMIT while another session deletes, the same reading cursors on the
//! hot standby, and psql's view of the command tags.
//!
//! It guards against a cursor that materialises its whole result at
//! DECLARE (the server's memory would grow with the table), against a held
//! cursor that reads the table again after COMMIT (it would miss the rows
//! another session deleted since), and against cursors that need a
//! writable node.

use tap_tests::Node;

const ROWS: u64 = 200_000;

#[test]
fn cursors_stream_hold_their_snapshot_and_run_on_the_standby() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(&format!(
        "CREATE TABLE big (id int PRIMARY KEY, pad text);
         INSERT INTO big SELECT g, repeat('x', 300) FROM generate_series(1, {ROWS}) AS g;
         CREATE TABLE small (id int);
         INSERT INTO small SELECT generate_series(1, 10);"
    ));
    let standby = Node::standby_of(&primary, "standby");
    let s = primary.background_session();

    // 1. A forward-only cursor over 200k rows (~60 MB of row data),
    //    fetched 1000 at a time: every row arrives once, in order, and
    //    the server's resident memory does not grow with the table.
    s.query_safe("BEGIN");
    s.query_safe("DECLARE big_c NO SCROLL CURSOR FOR SELECT id, pad FROM big");
    let first = s.query_safe("FETCH 1000 FROM big_c");
    assert_eq!(first.lines().count(), 1000, "first batch has 1000 rows");
    let before = primary.rss_kib();
    let mut seen = 1000u64;
    let mut max_rss = before;
    loop {
        let batch = s.query_safe("FETCH 1000 FROM big_c");
        if batch.is_empty() {
            break;
        }
        seen += batch.lines().count() as u64;
        max_rss = max_rss.max(primary.rss_kib());
    }
    assert_eq!(seen, ROWS, "cursor returned every row once");
    assert!(
        max_rss < before + 32 * 1024,
        "RSS grew by {} KiB while fetching (bound 32 MiB): rows are not materialised",
        max_rss - before
    );
    assert_eq!(
        s.query_safe("FETCH 1000 FROM big_c"),
        "",
        "fetch after the end returns nothing"
    );
    s.query_safe("COMMIT");

    // 2. A cursor in a transaction reads under its DECLARE snapshot while
    //    another session deletes and commits.
    s.query_safe("BEGIN");
    s.query_safe("DECLARE snap_c CURSOR FOR SELECT id FROM small ORDER BY id");
    primary.safe_sql("DELETE FROM small WHERE id > 8");
    assert_eq!(
        s.query_safe("FETCH ALL FROM snap_c"),
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n10",
        "open cursor keeps its snapshot"
    );
    s.query_safe("COMMIT");

    // 3. WITH HOLD survives COMMIT and keeps the snapshot of DECLARE while
    //    another session deletes rows.
    s.query_safe("BEGIN");
    s.query_safe("DECLARE held CURSOR WITH HOLD FOR SELECT id FROM small ORDER BY id");
    assert_eq!(
        s.query_safe("FETCH 2 FROM held"),
        "1\n2",
        "held: first rows"
    );
    s.query_safe("COMMIT");
    primary.safe_sql("DELETE FROM small WHERE id > 4");
    assert_eq!(
        s.query_safe("SELECT name, is_holdable FROM pg_cursors"),
        "held|t",
        "held cursor listed after COMMIT"
    );
    assert_eq!(
        s.query_safe("FETCH ALL FROM held"),
        "3\n4\n5\n6\n7\n8",
        "held cursor returns the rows of its snapshot"
    );
    assert_eq!(
        s.query_safe("FETCH BACKWARD 2 FROM held"),
        "8\n7",
        "held cursor scrolls back"
    );
    s.query_safe("CLOSE held");
    assert_eq!(
        s.query_err("FETCH held").code(),
        "34000",
        "closed cursor is gone"
    );

    // 4. Hot standby: read-only cursors, including WITH HOLD.
    primary.wait_for_replay(&standby);
    let r = standby.background_session();
    r.query_safe("BEGIN");
    r.query_safe("DECLARE sc CURSOR FOR SELECT id FROM big ORDER BY id");
    assert_eq!(
        r.query_safe("FETCH 3 FROM sc"),
        "1\n2\n3",
        "standby: FETCH 3"
    );
    assert_eq!(
        r.query_safe("FETCH LAST FROM sc"),
        ROWS.to_string(),
        "standby: FETCH LAST"
    );
    assert_eq!(
        r.query_safe("FETCH PRIOR FROM sc"),
        (ROWS - 1).to_string(),
        "standby: FETCH PRIOR"
    );
    r.query_safe("COMMIT");
    r.query_safe("DECLARE sh CURSOR WITH HOLD FOR SELECT id FROM small ORDER BY id");
    assert_eq!(
        r.query_safe("FETCH ALL FROM sh"),
        "1\n2\n3\n4",
        "standby: WITH HOLD outside a block"
    );
    assert_eq!(
        r.query_err("DECLARE nb CURSOR FOR SELECT 1").code(),
        "25P01",
        "standby: DECLARE outside a block"
    );

    // 5. psql: the command tags.
    let out = primary.run_psql(
        &["-X", "-f", "-"],
        "BEGIN;\n\
         DECLARE p SCROLL CURSOR FOR SELECT id FROM small ORDER BY id;\n\
         MOVE FORWARD 3 IN p;\n\
         FETCH 1 FROM p;\n\
         MOVE ALL IN p;\n\
         CLOSE p;\n\
         COMMIT;\n",
    );
    assert_eq!(out.status, 0, "psql: {}", out.stderr);
    for tag in [
        "DECLARE CURSOR",
        "MOVE 3",
        "MOVE 0",
        "CLOSE CURSOR",
        "COMMIT",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == tag),
            "psql shows tag {tag}:\n{}",
            out.stdout
        );
    }
    assert!(out.stdout.contains("(1 row)"), "psql shows the fetched row");
}
