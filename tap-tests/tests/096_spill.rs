//! Sorts, hash joins and hash aggregations bigger than `work_mem` spill to
//! temporary files (issue 15, item 6):
//!
//! 1. the server's peak resident memory (VmHWM, reset before the query)
//!    grows by less than `BOUND_KIB` for a sort spilled with
//!    `work_mem = 64kB`, and for a window over one partition of the whole
//!    table, and by more for the same queries held in memory (so the
//!    bound tells the two apart);
//! 2. with `work_mem = 64kB`, a sort, a hash join (inner, left, full, semi,
//!    anti), a hash aggregation, DISTINCT and UNION by hashing, INTERSECT
//!    and EXCEPT ALL, windows over a spilled sort (many partitions, and
//!    one partition bigger than `work_mem` read through every kind of
//!    frame and offset), a materialized CTE read
//!    twice and a nested loop's materialized inner side over tables that
//!    do not fit give the
//!    answer they give in memory — and PostgreSQL 15's, when it is
//!    installed — on the primary (the first four on its hot standby too);
//! 3. they did write temporary files (`log_temp_files = 0` logs each one
//!    removed), and no file is left under `base/pgsql_tmp` after each query;
//!    A hash aggregation's budget is `work_mem × hash_mem_multiplier`: it
//!    spills at multiplier 1 and not at 4 over the same groups;
//! 4. `temp_file_limit` stops a query with 53400 and PostgreSQL's message,
//!    its files removed, the session usable;
//! 5. a cancel and `statement_timeout` stop a long cross join and a
//!    spilling sort with 57014, files removed, the session usable;
//! 6. files a crash left in `base/pgsql_tmp` are removed at start-up.

use tap_tests::bench::pg;
use tap_tests::{Node, Session};

/// Rows of the wide table: about 250 bytes each on disk, some 100 MB held
/// as rows in memory.
const ROWS: i64 = 300_000;

/// Peak memory growth allowed to a spilled sort (KiB).
const BOUND_KIB: u64 = 32 * 1024;

const SETUP: &[&str] = &[
    "CREATE TABLE wide (id int, g int, pad text)",
    "INSERT INTO wide SELECT i, (i % 10007) * 7919 % 10007, repeat(chr(97 + i % 26), 200) \
     FROM generate_series(1, 300000) i",
    "CREATE TABLE other (id int, v text)",
    "INSERT INTO other SELECT i, repeat('v', 100 + i % 50) FROM generate_series(1, 300000, 3) i",
    "INSERT INTO other VALUES (NULL, 'no key')",
];

/// The sort: the ordered ids of every wide row, hashed (the sort holds
/// the whole rows, pad included).
const SORT: &str = "SELECT count(*), md5(string_agg(id::text, ',')) \
                    FROM (SELECT id, pad FROM wide ORDER BY g, pad DESC, id) s";

/// A window over one partition of every wide row (pad included, for
/// lag): the WindowAgg holds the whole partition.
const WINDOW: &str =
    "SELECT count(*), sum(r), sum(length(l)) FROM (SELECT row_number() OVER w AS r, \
                      lag(pad, 2, '') OVER w AS l FROM wide WINDOW w AS (ORDER BY g, id)) x";

/// The queries whose answers must not depend on `work_mem`.
const QUERIES: &[&str] = &[
    SORT,
    WINDOW,
    "SELECT count(*), sum(w.id), sum(length(o.v)) FROM wide w JOIN other o ON o.id = w.id",
    "SELECT count(*), count(o.id), sum(length(o.v)) FROM wide w LEFT JOIN other o ON o.id = w.id",
    "SELECT count(*), count(w.id), count(o.id) FROM wide w FULL JOIN other o ON o.id = w.g",
    "SELECT count(*) FROM wide w WHERE EXISTS (SELECT 1 FROM other o WHERE o.id = w.id)",
    "SELECT count(*) FROM wide w WHERE NOT EXISTS (SELECT 1 FROM other o WHERE o.id = w.g)",
    "SELECT count(*), sum(n), sum(m) FROM \
     (SELECT id % 50000 AS k, count(*) AS n, max(length(pad)) AS m FROM wide GROUP BY 1) a",
    "SELECT count(*), sum(n) FROM \
     (SELECT g, id % 3, count(*) AS n FROM wide GROUP BY ROLLUP (g, id % 3)) a",
    "SELECT count(*) FROM (SELECT DISTINCT pad, g FROM wide) d",
    "SELECT count(*), sum(g) FROM (SELECT g, pad FROM wide UNION SELECT id, v FROM other) u",
    "WITH c AS MATERIALIZED (SELECT id, pad FROM wide) \
     SELECT (SELECT count(*) FROM c), (SELECT sum(id) FROM c WHERE pad > 'm')",
    "SELECT count(*), sum(b.id) FROM (SELECT * FROM wide WHERE id <= 20) a \
     JOIN other b ON b.id BETWEEN a.id AND a.id + 2",
    "SELECT count(*), sum(g) FROM (SELECT g, pad FROM wide \
     INTERSECT SELECT id % 10007, repeat(chr(97 + id % 26), 200) FROM other) x",
    "SELECT count(*), sum(g) FROM (SELECT g, pad FROM wide \
     EXCEPT ALL SELECT id % 10007, repeat(chr(97 + id % 26), 200) FROM other) x",
    "SELECT count(*), sum(r), sum(c) FROM (SELECT row_number() OVER (PARTITION BY g ORDER BY id) AS r, \
     count(*) OVER (PARTITION BY g) AS c FROM wide) w",
    // One partition bigger than work_mem, read by every kind of access:
    // offsets both ways, sliding ROWS, RANGE and GROUPS frames, ranks.
    "SELECT count(*), sum(k), sum(s), sum(m), sum(gs), sum(d), count(*) FILTER (WHERE pr < 0.5), \
     sum(lv), sum(nv) FROM (SELECT ntile(7) OVER w AS k, \
     sum(id) OVER (w ROWS BETWEEN 5 PRECEDING AND 5 FOLLOWING) AS s, \
     max(id) OVER (ORDER BY g RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS m, \
     sum(id) OVER (ORDER BY g GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) AS gs, \
     dense_rank() OVER (ORDER BY g DESC) AS d, percent_rank() OVER (ORDER BY g) AS pr, \
     lead(id, 1000, -1) OVER w AS lv, \
     nth_value(id, 3) OVER (w ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS nv \
     FROM wide WINDOW w AS (ORDER BY g, id)) x",
];

fn with_work_mem(session: &Session, work_mem: &str, sql: &str) -> String {
    session.query_safe(&format!("SET work_mem = '{work_mem}'"));
    session.query_safe(sql)
}

#[test]
fn work_mem_spills_to_temporary_files() {
    let node = Node::new("primary");
    node.init(true);
    node.append_conf("shared_buffers = 16MB\nlog_temp_files = 0");
    node.start();
    for sql in SETUP {
        node.safe_sql(sql);
    }
    assert_eq!(node.safe_sql("SELECT count(*) FROM wide"), ROWS.to_string());
    let standby = Node::standby_of(&node, "standby");
    let lsn = node.lsn("write");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));

    // 1. Memory, each query first on a fresh server (memory freed earlier
    //    would hide growth): the spilled sort, and the window over one partition
    //    above a spilled sort, stay under the bound; held in memory they
    //    do not.
    let mut answers = Vec::new();
    for q in [SORT, WINDOW] {
        node.restart();
        let s = node.background_session();
        s.query_safe("SET work_mem = '64kB'");
        node.reset_peak_rss();
        let base = node.rss_kib();
        let answer = s.query_safe(q);
        let spilled = node.peak_rss_kib().saturating_sub(base);
        s.query_safe("SET work_mem = '4GB'");
        node.reset_peak_rss();
        let base = node.rss_kib();
        assert_eq!(s.query_safe(q), answer, "the same answer in memory: {q}");
        let in_memory = node.peak_rss_kib().saturating_sub(base);
        eprintln!("# peak growth: spilled {spilled} KiB, in memory {in_memory} KiB: {q}");
        assert!(
            spilled < BOUND_KIB,
            "spilled, {q} grew the server by {spilled} KiB"
        );
        assert!(
            in_memory > BOUND_KIB,
            "the bound tells the two apart (in memory: {in_memory} KiB): {q}"
        );
        answers.push(answer);
    }

    // 2. The answers in memory (4GB), then spilled (64kB): the same, on
    //    both nodes, and PostgreSQL's when it is here.
    let s = node.background_session();
    let expected: Vec<String> = QUERIES
        .iter()
        .map(|q| with_work_mem(&s, "4GB", q))
        .collect();
    assert_eq!(expected[..2], answers[..]);
    assert!(node.temp_files().is_empty(), "nothing spilled in memory");
    let before = node.log_position();
    let on_standby = standby.background_session();
    for (q, want) in QUERIES.iter().zip(&expected) {
        assert_eq!(&with_work_mem(&s, "64kB", q), want, "spilled: {q}");
        assert!(
            node.temp_files().is_empty(),
            "no temporary file left after {q}"
        );
    }
    // The standby's executor is the same code: the sort, the window and
    // two joins there (the rest would only double the test's time).
    for (q, want) in QUERIES.iter().zip(&expected).take(4) {
        assert_eq!(
            &with_work_mem(&on_standby, "64kB", q),
            want,
            "spilled on the standby: {q}"
        );
        assert!(
            standby.temp_files().is_empty(),
            "no temporary file left on the standby after {q}"
        );
    }
    // 3. They did spill.
    let log = node.log_since(before);
    let logged = log
        .matches("temporary file: path \"base/pgsql_tmp/pgsql_tmp")
        .count();
    assert!(
        logged >= QUERIES.len(),
        "each query wrote temporary files ({logged} logged)"
    );
    // 3b. A hash table may hold work_mem × hash_mem_multiplier: 10,007
    //     groups of `wide` (about 2 MB as counted) spill past 1MB × 1 and
    //     fit in 1MB × 4, with the same answer.
    let groups = "SELECT count(*), sum(n) FROM (SELECT g, count(*) AS n FROM wide GROUP BY g) x";
    s.query_safe("SET work_mem = '1MB'");
    let mut logged_with = Vec::new();
    let mut answers_with = Vec::new();
    for multiplier in ["4", "1"] {
        s.query_safe(&format!("SET hash_mem_multiplier = {multiplier}"));
        let before = node.log_position();
        answers_with.push(s.query_safe(groups));
        logged_with.push(
            node.log_since(before)
                .matches("temporary file: path \"base/pgsql_tmp/pgsql_tmp")
                .count(),
        );
    }
    s.query_safe("RESET hash_mem_multiplier");
    assert_eq!(
        answers_with[0], answers_with[1],
        "the same groups either way"
    );
    assert_eq!(answers_with[0], "10007|300000");
    assert!(
        logged_with[0] == 0 && logged_with[1] > 0,
        "spilled at hash_mem_multiplier 1 only (4, 1): {logged_with:?} temporary files"
    );
    match pg::find_bindir() {
        None => eprintln!("# PostgreSQL 15 not installed: answers compared in memory only"),
        Some(bindir) => {
            let (_work, pair) = pg::start_reference(&bindir, node.base_dir(), "spill_pg_");
            let postgres = Session::connect("postgres", &pair.primary.connstr());
            for sql in SETUP {
                postgres.query_safe(sql);
            }
            for (q, want) in QUERIES.iter().zip(&expected) {
                assert_eq!(
                    &with_work_mem(&postgres, "64kB", q),
                    want,
                    "PostgreSQL's answer: {q}"
                );
            }
        }
    }

    // 4. temp_file_limit.
    s.query_safe("SET work_mem = '64kB'");
    s.query_safe("SET temp_file_limit = '1MB'");
    let e = s.query_err(SORT);
    assert_eq!(e.code(), "53400", "{e:?}");
    assert_eq!(
        e.message,
        "temporary file size exceeds temp_file_limit (1024kB)"
    );
    assert!(node.temp_files().is_empty(), "files removed");
    s.query_safe("RESET temp_file_limit");
    assert_eq!(s.query_safe(SORT), expected[0], "usable after");

    // 5. Cancel and statement_timeout: a cross join that would run for
    //    hours, and a spilling sort.
    let long = "SELECT count(*) FROM wide a CROSS JOIN wide b";
    let pending = s.send(long);
    let cancelled = s.cancel_until_finished(pending);
    assert_eq!(
        cancelled.map_err(|e| e.code().to_string()),
        Err("57014".into()),
        "cross join cancelled"
    );
    s.query_safe("SET statement_timeout = '300ms'");
    for q in [long, "SELECT * FROM wide a, other b ORDER BY a.pad, b.v"] {
        let e = s.query_err(q);
        assert_eq!(e.code(), "57014", "{q}: {e:?}");
        assert_eq!(e.message, "canceling statement due to statement timeout");
        assert!(node.temp_files().is_empty(), "files removed: {q}");
    }
    s.query_safe("RESET statement_timeout");
    assert_eq!(s.query_safe("SELECT 1"), "1", "usable after");
    drop(s);
    drop(on_standby);

    // 6. Files a crash left are removed at start-up.
    node.stop("fast");
    let dir = node.data_dir().join("base/pgsql_tmp");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("pgsql_tmp4242.0"), b"left by a crash").expect("write");
    node.start();
    assert_eq!(node.safe_sql("SELECT 1"), "1");
    assert!(
        node.temp_files().is_empty(),
        "start-up removed the crash's temporary files"
    );
}
