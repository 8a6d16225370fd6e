//! `old_snapshot_threshold` (txn::old_snapshot): VACUUM may remove row
//! versions that only snapshots older than the threshold still need, and
//! such a snapshot that then reads what was taken from it fails with 72000
//! `snapshot too old` — and only then. PostgreSQL 9.6–16 failed any old
//! snapshot reading a page changed after it (an insert was enough), and
//! removed the feature in 17; these tests pin the precise rule. The
//! threshold is 0 (every snapshot is old at once, as in PostgreSQL's
//! tests), so VACUUM removes versions as soon as their deleter committed.
//!
//! * `removed_rows_fail_the_old_snapshot` — a REPEATABLE READ snapshot
//!   whose rows VACUUM removed fails on its next scan and index scan
//!   (hotpair has no index-only scans: its indexes live in memory with no
//!   visibility map; an index scan is the path that reads no heap page when
//!   the entry is gone).
//! * `changes_that_remove_nothing_it_sees_do_not_fail` — inserts into the
//!   page, and the removal of versions inserted after the snapshot, leave
//!   the old snapshot's reads right; a long report over one table succeeds
//!   while another table's dead rows are removed early under it.
//! * `off_keeps_what_old_snapshots_need` — at -1 (the default) VACUUM keeps
//!   the versions and the old snapshot reads them.
//! * `standby_old_snapshots_fail_only_where_rows_went` — with the setting
//!   on a standby, replay neither waits for nor cancels snapshots older
//!   than it (`max_standby_streaming_delay = -1` would wait for ever);
//!   those that then read a removed row they would have seen fail with
//!   72000, on a scan and an index lookup, and the others read on (one
//!   whose table only gained a row, one taken after the delete).

use tap_tests::{Node, Session};

fn primary_with(threshold: &str) -> Node {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf(&format!("old_snapshot_threshold = {threshold}"));
    primary.start();
    primary
}

/// `name(id int primary key, v int)` with rows 1..=10 (one page).
fn table(node: &Node, name: &str) {
    node.safe_sql(&format!(
        "CREATE TABLE {name} (id int PRIMARY KEY, v int); \
         INSERT INTO {name} SELECT g, g * 10 FROM generate_series(1, 10) g"
    ));
}

fn repeatable_read(node: &Node, name: &str) -> Session {
    let s = Session::connect(name, &node.connstr());
    s.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    s
}

#[test]
fn removed_rows_fail_the_old_snapshot() {
    let primary = primary_with("0");
    assert_eq!(primary.safe_sql("SHOW old_snapshot_threshold"), "0");
    assert_eq!(
        primary.safe_sql(
            "SELECT context, unit FROM pg_settings WHERE name = 'old_snapshot_threshold'"
        ),
        "postmaster|min",
        "restart-only, in minutes"
    );
    table(&primary, "a");
    table(&primary, "e");

    // 1. Two old snapshots: one scans a, one looks e up by its key.
    let scan = repeatable_read(&primary, "scan");
    assert_eq!(scan.query_safe("SELECT count(*), sum(v) FROM a"), "10|550");
    let lookup = repeatable_read(&primary, "lookup");
    assert_eq!(lookup.query_safe("SELECT v FROM e WHERE id = 3"), "30");

    // 2. Another session deletes rows; VACUUM removes them early.
    primary.safe_sql("DELETE FROM a WHERE id <= 5");
    primary.safe_sql("DELETE FROM e WHERE id = 3");
    primary.safe_sql("VACUUM a, e");
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM a"),
        "5",
        "new snapshots see the delete"
    );

    // 3. The scan's next read of the page fails.
    let e = scan.query_err("SELECT count(*), sum(v) FROM a");
    assert_eq!(e.code(), "72000", "seq scan: {e}");
    assert_eq!(e.message, "snapshot too old", "PostgreSQL's message");
    scan.query_safe("ROLLBACK");

    // 4. The index scan finds no entry (pruning removed it with the
    //    version) and fails instead of answering nothing.
    let e = lookup.query_err("SELECT v FROM e WHERE id = 3");
    assert_eq!(e.code(), "72000", "index scan: {e}");
    lookup.query_safe("ROLLBACK");

    // 5. New snapshots are not old: the same reads succeed.
    assert_eq!(scan.query_safe("SELECT count(*), sum(v) FROM a"), "5|400");
    assert_eq!(
        lookup.query_safe("SELECT count(*) FROM e WHERE id = 3"),
        "0"
    );
}

#[test]
fn changes_that_remove_nothing_it_sees_do_not_fail() {
    let primary = primary_with("0");
    table(&primary, "b");
    table(&primary, "c");
    table(&primary, "d");

    // 1. A long REPEATABLE READ report starts.
    let report = repeatable_read(&primary, "report");
    assert_eq!(
        report.query_safe("SELECT count(*), sum(v) FROM b"),
        "10|550"
    );
    assert_eq!(
        report.query_safe("SELECT count(*), sum(v) FROM c"),
        "10|550"
    );

    // 2. Inserts into b's page: its LSN moves past the snapshot's, nothing
    //    is removed — PostgreSQL 16 failed here.
    primary.safe_sql("INSERT INTO b SELECT g, g FROM generate_series(11, 20) g");
    primary.safe_sql("VACUUM b");
    assert_eq!(
        report.query_safe("SELECT count(*), sum(v) FROM b"),
        "10|550",
        "insert only: the old rows, no error"
    );
    assert_eq!(report.query_safe("SELECT v FROM b WHERE id = 4"), "40");

    // 3. Versions inserted after the snapshot, then deleted and removed
    //    early: the report never saw them.
    primary.safe_sql("DELETE FROM b WHERE id > 10");
    primary.safe_sql("VACUUM b");
    assert_eq!(
        report.query_safe("SELECT count(*), sum(v) FROM b"),
        "10|550",
        "removed versions it never saw: no error"
    );
    assert_eq!(
        report.query_safe("SELECT count(*) FROM b WHERE id = 15"),
        "0",
        "index scan over a removed version it never saw"
    );

    // 4. Table d's dead rows are removed early while the report keeps
    //    reading c: it needs nothing from d.
    primary.safe_sql("DELETE FROM d WHERE id <= 5");
    primary.safe_sql("VACUUM d");
    for _ in 0..3 {
        assert_eq!(
            report.query_safe("SELECT count(*), sum(v) FROM c"),
            "10|550",
            "report over c"
        );
        assert_eq!(report.query_safe("SELECT v FROM c WHERE id = 2"), "20");
    }
    // The removal was early indeed: reading d now fails.
    let e = report.query_err("SELECT count(*) FROM d");
    assert_eq!(e.code(), "72000", "d's rows were removed early: {e}");
    report.query_safe("ROLLBACK");
}

#[test]
fn off_keeps_what_old_snapshots_need() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    assert_eq!(primary.safe_sql("SHOW old_snapshot_threshold"), "-1");
    table(&primary, "f");
    let old = repeatable_read(&primary, "old");
    assert_eq!(old.query_safe("SELECT count(*), sum(v) FROM f"), "10|550");
    primary.safe_sql("DELETE FROM f WHERE id <= 5");
    primary.safe_sql("VACUUM f");
    assert_eq!(
        old.query_safe("SELECT count(*), sum(v) FROM f"),
        "10|550",
        "VACUUM kept the rows the old snapshot needs"
    );
    assert_eq!(old.query_safe("SELECT v FROM f WHERE id = 3"), "30");
    old.query_safe("COMMIT");
}

#[test]
fn standby_old_snapshots_fail_only_where_rows_went() {
    // The setting is the standby's: the primary prunes as usual.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    table(&primary, "g");
    table(&primary, "h");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "backup", true);
    standby.start(); // takes the base backup
    standby.stop("fast");
    // Without the setting, replay would wait for ever for the snapshots
    // below (max_standby_streaming_delay = -1).
    standby.append_conf(
        "old_snapshot_threshold = 0\nmax_standby_streaming_delay = -1\nhot_standby_feedback = off",
    );
    standby.start();
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SHOW old_snapshot_threshold"), "0");

    // 1. Old standby snapshots: one scans g, one looks g up by its key, one
    //    reads only h.
    let scan = repeatable_read(&standby, "scan");
    assert_eq!(scan.query_safe("SELECT count(*), sum(v) FROM g"), "10|550");
    let lookup = repeatable_read(&standby, "lookup");
    assert_eq!(lookup.query_safe("SELECT v FROM g WHERE id = 3"), "30");
    let other = repeatable_read(&standby, "other");
    assert_eq!(other.query_safe("SELECT count(*), sum(v) FROM h"), "10|550");

    // 2. The primary deletes from g; a standby snapshot taken after the
    //    delete never saw those rows. Then VACUUM removes them and an insert
    //    changes h's page.
    primary.safe_sql("DELETE FROM g WHERE id <= 5");
    primary.wait_for_replay(&standby);
    let after = repeatable_read(&standby, "after");
    assert_eq!(after.query_safe("SELECT count(*), sum(v) FROM g"), "5|400");
    primary.safe_sql("VACUUM g");
    primary.safe_sql("INSERT INTO h VALUES (11, 110)");
    // Replay did not wait for the old snapshots.
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT count(*) FROM g"), "5", "replayed");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM h"), "11", "replayed");

    // 3. The snapshots that would have seen the removed rows fail, on the
    //    scan and on the index lookup, with 72000 — not 40001, not wrong
    //    rows.
    let e = scan.query_err("SELECT count(*), sum(v) FROM g");
    assert_eq!(e.code(), "72000", "scan: {e}");
    assert!(e.to_string().contains("snapshot too old"), "{e}");
    let e = lookup.query_err("SELECT v FROM g WHERE id = 3");
    assert_eq!(e.code(), "72000", "index lookup: {e}");
    // 4. No false positives: h's page changed under `other` but lost
    //    nothing; g lost only rows `after` never saw.
    assert_eq!(
        other.query_safe("SELECT count(*), sum(v) FROM h"),
        "10|550",
        "h: the old snapshot still reads it"
    );
    assert_eq!(
        after.query_safe("SELECT count(*), sum(v) FROM g"),
        "5|400",
        "g: removed rows were deleted before this snapshot"
    );
    for s in [&scan, &lookup, &other, &after] {
        s.query_safe("ROLLBACK");
    }
    assert_eq!(
        standby.safe_sql(
            "SELECT confl_snapshot FROM pg_stat_database_conflicts \
             WHERE datname = current_database()"
        ),
        "0",
        "nobody was cancelled"
    );
}
