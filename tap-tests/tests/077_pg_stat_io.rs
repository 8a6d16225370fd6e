//! `pg_stat_io` counts the buffer IO each kind of process does.
//!
//! PostgreSQL 16's view (PostgreSQL 15 has none, so there is no golden):
//! reads, writes, extends, hits, evictions, ring reuses and fsyncs per
//! backend type and context. A counter that is never bumped, or bumped
//! under the wrong backend type or context, reads as a stuck or misplaced
//! number here. With `shared_buffers` at 1 MB (128 buffers):
//!
//! 1. the view's shape: a row per backend type and context, NULL where
//!    PostgreSQL tracks no such operation (a checkpointer never reads);
//! 2. a load through INSERT … SELECT extends in "bulkwrite";
//! 3. a sequential scan of a table four times the pool reads and reuses
//!    its ring's buffers in "bulkread";
//! 4. scans of small tables (no ring) that together exceed the pool read
//!    and evict in "normal"; scanning a cached one again only hits;
//! 5. CHECKPOINT makes the checkpointer write and fsync;
//! 6. `pg_stat_reset_shared('io')` zeroes the counters and moves
//!    `stats_reset`; an unknown target is 22023;
//! 7. a standby's replay counts as "startup": it reads pages its pool had
//!    evicted.

use tap_tests::Node;

/// One counter of `pg_stat_io` (0 when NULL).
fn counter(node: &Node, backend: &str, context: &str, column: &str) -> i64 {
    let out = node.safe_sql(&format!(
        "SELECT coalesce({column}, 0) FROM pg_stat_io \
         WHERE backend_type = '{backend}' AND object = 'relation' AND context = '{context}'"
    ));
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{backend}/{context}/{column}: {out:?}"))
}

#[test]
fn pg_stat_io_counts_buffer_io() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("shared_buffers = 1MB");
    primary.start();

    // 1. Shape.
    assert_eq!(
        primary.safe_sql(
            "SELECT backend_type, context FROM pg_stat_io WHERE object = 'relation' \
             ORDER BY backend_type, context"
        ),
        "checkpointer|normal\n\
         client backend|bulkread\nclient backend|bulkwrite\n\
         client backend|normal\nclient backend|vacuum\n\
         startup|bulkread\nstartup|bulkwrite\nstartup|normal\nstartup|vacuum",
        "one row per backend type and context"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT reads IS NULL, hits IS NULL, evictions IS NULL, extends IS NULL, \
             writes IS NULL, read_time IS NULL, write_time, op_bytes \
             FROM pg_stat_io WHERE backend_type = 'checkpointer'"
        ),
        "t|t|t|t|f|t|0|8192",
        "checkpointer: no reads, hits, evictions or extends; times 0"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT reuses IS NULL, fsyncs IS NULL FROM pg_stat_io \
             WHERE backend_type = 'client backend' AND context IN ('normal', 'bulkread') \
             ORDER BY context"
        ),
        "f|t\nt|f",
        "reuses only with a ring, fsyncs only in normal"
    );

    // 2. A load of ~5 MB through INSERT … SELECT (a bulk-write ring).
    let extends = counter(&primary, "client backend", "bulkwrite", "extends");
    primary.safe_sql("CREATE TABLE big (id int, pad text)");
    primary.safe_sql("INSERT INTO big SELECT g, repeat('x', 400) FROM generate_series(1, 12000) g");
    let pages: i64 = primary
        .safe_sql("SELECT pg_relation_size('big') / 8192")
        .parse()
        .expect("pages");
    assert!(
        pages > 4 * 128,
        "big is four times the pool ({pages} pages)"
    );
    assert!(
        counter(&primary, "client backend", "bulkwrite", "extends") - extends >= pages / 2,
        "the load extended big in bulkwrite"
    );

    // 3. A sequential scan of big: a bulk-read ring.
    let reads = counter(&primary, "client backend", "bulkread", "reads");
    let reuses = counter(&primary, "client backend", "bulkread", "reuses");
    assert_eq!(primary.safe_sql("SELECT count(*) FROM big"), "12000");
    assert!(
        counter(&primary, "client backend", "bulkread", "reads") - reads >= pages / 2,
        "the scan read big in bulkread"
    );
    assert!(
        counter(&primary, "client backend", "bulkread", "reuses") > reuses,
        "the scan reused its ring's buffers"
    );

    // 4. Ten tables of ~25 pages (under a quarter of the pool: no ring),
    //    250 pages in all.
    for i in 0..10 {
        primary.safe_sql(&format!("CREATE TABLE small{i} (id int, pad text)"));
        primary.safe_sql(&format!(
            "INSERT INTO small{i} SELECT g, repeat('y', 400) FROM generate_series(1, 400) g"
        ));
    }
    let reads = counter(&primary, "client backend", "normal", "reads");
    let evictions = counter(&primary, "client backend", "normal", "evictions");
    for _ in 0..2 {
        for i in 0..10 {
            assert_eq!(
                primary.safe_sql(&format!("SELECT count(*) FROM small{i}")),
                "400",
                "small{i} scanned"
            );
        }
    }
    assert!(
        counter(&primary, "client backend", "normal", "reads") > reads,
        "scans without a ring read in normal"
    );
    assert!(
        counter(&primary, "client backend", "normal", "evictions") > evictions,
        "and evicted in normal"
    );
    // small9 was scanned last: cached. Scanning it again only hits.
    let hits = counter(&primary, "client backend", "normal", "hits");
    let reads = counter(&primary, "client backend", "normal", "reads");
    assert_eq!(primary.safe_sql("SELECT count(*) FROM small9"), "400");
    assert!(
        counter(&primary, "client backend", "normal", "hits") - hits >= 20,
        "a cached table's scan hits"
    );
    assert_eq!(
        counter(&primary, "client backend", "normal", "reads"),
        reads,
        "a cached table's scan reads nothing"
    );

    // 5. CHECKPOINT: the checkpointer writes the dirty pages and fsyncs.
    primary.safe_sql("UPDATE small0 SET pad = 'z'");
    let writes = counter(&primary, "checkpointer", "normal", "writes");
    let fsyncs = counter(&primary, "checkpointer", "normal", "fsyncs");
    primary.safe_sql("CHECKPOINT");
    assert!(
        counter(&primary, "checkpointer", "normal", "writes") > writes,
        "checkpoint: checkpointer writes"
    );
    assert!(
        counter(&primary, "checkpointer", "normal", "fsyncs") > fsyncs,
        "checkpoint: checkpointer fsyncs"
    );

    // 6. Reset.
    let reset = primary.safe_sql("SELECT max(stats_reset) FROM pg_stat_io");
    primary.safe_sql("SELECT pg_stat_reset_shared('io')");
    assert_eq!(
        primary.safe_sql(
            "SELECT sum(coalesce(writes, 0) + coalesce(extends, 0) + coalesce(evictions, 0) \
             + coalesce(reuses, 0) + coalesce(fsyncs, 0)) FROM pg_stat_io \
             WHERE backend_type <> 'client backend'"
        ),
        "0",
        "reset zeroed the counters"
    );
    assert_eq!(
        primary.safe_sql(&format!(
            "SELECT min(stats_reset) > '{reset}' FROM pg_stat_io"
        )),
        "t",
        "stats_reset moved"
    );
    primary.expect_error("SELECT pg_stat_reset_shared('nonsense')", "22023");

    // 7. A standby with the same small pool: replay reads evicted pages.
    primary.backup("backup");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "backup", true);
    standby.start();
    standby.stop("fast");
    standby.append_conf("shared_buffers = 1MB");
    standby.start();
    // Two passes over big: the first logs a full-page image of each page
    // (written over the buffer, no read), the second plain records for
    // pages the standby's 128 buffers no longer hold.
    let reads = counter(&standby, "startup", "normal", "reads");
    primary.safe_sql("UPDATE big SET id = id + 1");
    primary.safe_sql("UPDATE big SET id = id + 1");
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql("SELECT sum(id) FROM big"),
        primary.safe_sql("SELECT sum(id) FROM big"),
        "standby caught up"
    );
    assert!(
        counter(&standby, "startup", "normal", "reads") > reads,
        "standby: replay (startup) reads evicted pages"
    );
    assert!(
        counter(&standby, "client backend", "bulkread", "reads") > 0,
        "standby: a session's scan of big reads in bulkread"
    );
}
