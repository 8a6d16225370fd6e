//! A table much larger than shared_buffers survives a crash.
//!
//! With 1 MB of shared buffers (128 pages) and a table of several hundred
//! pages, dirty pages are evicted and written throughout the load — each
//! only after WAL is flushed up to its LSN — while others are still only in
//! memory when the server is killed. A checkpoint in the middle moves the
//! redo point, so the first change of every page after it carries a
//! full-page image. Redo must then rebuild every page: extending the
//! relation where the file is shorter than the WAL says, skipping changes
//! already on disk (page LSN), restoring images. Every committed row must be
//! back with its last value, and the primary key must agree with the heap.

use tap_tests::Node;

/// What the table holds, computed by SQL (compared before and after).
fn summary(node: &Node) -> String {
    let all = node.safe_sql("SELECT count(*), sum(id), sum(length(pad)) FROM big");
    let ys = node.safe_sql("SELECT count(*) FROM big WHERE length(pad) = 450");
    format!("{all}|{ys}")
}

#[test]
fn big_table_survives_kill9() {
    // 1. A small buffer pool and a table of ~450 pages (8000 rows of about
    //    440 bytes, 18 to a page).
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("shared_buffers = 1MB\nfull_page_writes = on\n");
    node.start();
    node.safe_sql("CREATE TABLE big (id int PRIMARY KEY, pad text NOT NULL)");
    node.safe_sql("INSERT INTO big SELECT g, repeat('x', 400) FROM generate_series(1, 8000) g");

    // 2. A checkpoint in the middle, then more changes all over the table:
    //    updates that move rows to other pages, more inserts, deletes.
    node.safe_sql("CHECKPOINT");
    assert!(
        node.log_contains("checkpoint complete: wrote"),
        "checkpoint logged"
    );
    node.safe_sql("UPDATE big SET pad = repeat('y', 450) WHERE id % 3 = 0");
    node.safe_sql("INSERT INTO big SELECT g, repeat('z', 300) FROM generate_series(8001, 12000) g");
    node.safe_sql("DELETE FROM big WHERE id % 10 = 7");
    for id in (1..12000).step_by(997) {
        node.safe_sql(&format!(
            "UPDATE big SET pad = 'single {id}' WHERE id = {id}"
        ));
    }
    node.safe_sql("BEGIN; DELETE FROM big WHERE id < 5000; ROLLBACK");
    let before = summary(&node);

    // 3. Crash and restart: redo rebuilds everything.
    node.kill9();
    node.start();
    assert!(node.log_contains("redo starts at"), "crash recovery ran");
    assert_eq!(summary(&node), before, "every committed change is back");

    // 4. The primary key agrees with the heap.
    let s = node.background_session();
    for id in (1..12000).step_by(37) {
        let expect = if id % 10 == 7 { "0" } else { "1" };
        assert_eq!(
            s.query_safe(&format!("SELECT count(*) FROM big WHERE id = {id}")),
            expect,
            "key lookup of {id}"
        );
    }
    assert_eq!(
        s.query_safe("SELECT pad FROM big WHERE id = 998"),
        "single 998",
        "single-row update replayed"
    );
    let e = s
        .query("INSERT INTO big VALUES (3, 'dup')")
        .expect_err("duplicate refused");
    assert_eq!(e.code(), "23505", "unique index rebuilt");
}
