//! Parallel aggregation (`sql::planner::parallel`, `executor::agg`): an
//! aggregation over a big scan runs as Finalize ← Gather ← Partial ←
//! Parallel Seq Scan on the primary and on the standby, gives the serial
//! answer (also with `max_parallel_workers_per_gather = 0`; a right
//! join's unmatched rows counted once, not once per participant), stops with
//! its workers at statement_timeout, builds a big hashed side together
//! (Parallel Hash; each alone past work_mem), and fails with any participant's
//! error (division by zero on the first or the last page), leaving the
//! session usable. Groups past work_mem: each participant holds no more
//! than its budget and the merge goes partition by partition, so the
//! server's peak memory stays under a bound it passes with the groups
//! held, with the serial answer and no temporary file left.
//! The golden scripts `parallel_aggregate` and `parallel_outer_join`
//! compare the rows with PostgreSQL's.
//!
//! * `big_aggregations_run_in_parallel_on_both_nodes`
//! * `parallel_groups_past_work_mem_stay_bounded`

use tap_tests::Node;

/// Peak memory growth allowed to a parallel aggregation past work_mem
/// (KiB); held in memory, its 150,000 groups in each of three
/// participants pass it.
const BOUND_KIB: u64 = 32 * 1024;

#[test]
fn big_aggregations_run_in_parallel_on_both_nodes() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE big (id int, grp int, qty int, note text); \
         INSERT INTO big SELECT g, g % 5, g % 100, 'note ' || g FROM generate_series(1, 300000) g; \
         CREATE TABLE dim (grp int PRIMARY KEY, name text); \
         INSERT INTO dim SELECT g, 'g' || g FROM generate_series(0, 4) g; \
         CREATE TABLE dim_all (grp int); INSERT INTO dim_all SELECT generate_series(0, 9); \
         CREATE TABLE side (id int, w int); \
         INSERT INTO side SELECT g % 50000, g FROM generate_series(1, 100000) g; ANALYZE",
    );
    let standby = Node::standby_of(&primary, "standby");
    primary.wait_for_replay(&standby);
    let query = "SELECT d.name, count(*), sum(b.qty) FROM big b JOIN dim d ON d.grp = b.grp \
                 GROUP BY d.name ORDER BY d.name";
    // g % 5 = k: 60,000 rows; qty = g % 100 sums to 60,000 * (k + 47.5 ± …).
    let expected = primary.safe_sql(&format!("SET max_parallel_workers_per_gather = 0; {query}"));
    assert_eq!(expected.lines().count(), 5, "{expected}");
    for node in [&primary, &standby] {
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {query}"));
        for part in [
            "Finalize HashAggregate",
            "Gather",
            "Workers Planned: 2",
            "Partial HashAggregate",
            "Parallel Seq Scan on big",
        ] {
            assert!(plan.contains(part), "{}: no {part} in\n{plan}", node.name());
        }
        assert_eq!(node.safe_sql(query), expected, "{}", node.name());
        let serial = node.safe_sql(&format!("SET max_parallel_workers_per_gather = 0; {query}"));
        assert_eq!(serial, expected, "{}", node.name());

        // An outer join keeping the small side's rows (TPC-H Q13's
        // shape): each participant probes its share against its own
        // copy of `dim_all` (grp 0..4, and 5..9 that no `big` row
        // matches), and an unmatched row is counted once, not once per
        // participant.
        let outer = "SELECT d.grp, count(b.id), sum(b.qty) FROM big b \
                     RIGHT JOIN dim_all d ON d.grp = b.grp GROUP BY d.grp ORDER BY d.grp";
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {outer}"));
        for part in ["Gather", "Hash Right Join", "Parallel Seq Scan on big"] {
            assert!(plan.contains(part), "{}: no {part} in\n{plan}", node.name());
        }
        let got = node.safe_sql(outer);
        let serial = node.safe_sql(&format!("SET max_parallel_workers_per_gather = 0; {outer}"));
        assert_eq!(got, serial, "{}", node.name());
        assert_eq!(
            got.lines().filter(|l| l.ends_with("|0|")).count(),
            5,
            "{}: grp 5..9 unmatched once each:\n{got}",
            node.name()
        );

        // A hashed side driven by a big scan of its own is built by all
        // participants together (Parallel Hash), and, past work_mem,
        // by each alone: the serial answer either way.
        let together = "SELECT b.grp, count(*), sum(s.w) FROM big b JOIN side s ON s.id = b.id \
                        GROUP BY b.grp ORDER BY b.grp";
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {together}"));
        for part in [
            "Parallel Hash Join",
            "Parallel Hash\n",
            "Parallel Seq Scan on big",
            "Parallel Seq Scan on side",
        ] {
            assert!(plan.contains(part), "{}: no {part} in\n{plan}", node.name());
        }
        let serial = node.safe_sql(&format!(
            "SET max_parallel_workers_per_gather = 0; {together}"
        ));
        assert_eq!(serial.lines().count(), 5, "{serial}");
        assert_eq!(node.safe_sql(together), serial, "{}", node.name());
        let small = node.safe_sql(&format!("SET work_mem = '64kB'; {together}"));
        assert_eq!(small, serial, "{}: past work_mem", node.name());

        // A slow filter: statement_timeout stops the session and its
        // workers; the next statement of the session runs.
        let slow = "SELECT count(*) FROM big WHERE md5(repeat(note, 4000)) < 'a'";
        let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {slow}"));
        assert!(plan.contains("Parallel Seq Scan on big"), "{plan}");
        let out = node.run_psql(
            &["-XAtq", "-f", "-"],
            &format!("SET statement_timeout = '200ms';\n{slow};\nRESET statement_timeout;\nSELECT count(*) FROM big;\n"),
        );
        assert!(
            out.stderr
                .contains("canceling statement due to statement timeout"),
            "{}: {}",
            node.name(),
            out.stderr
        );
        assert_eq!(out.stdout.trim(), "300000", "{}", node.name());

        // An error in any participant's share (a worker's, or the
        // session's) is the statement's; the session runs on.
        for bad in [
            "SELECT grp, sum(100 / (id - 7)) FROM big GROUP BY grp",
            "SELECT grp, sum(100 / (id - 299990)) FROM big GROUP BY grp",
        ] {
            let out = node.run_psql(
                &["-XAtq", "-f", "-"],
                &format!(
                    "{bad};
SELECT count(*) FROM big;
"
                ),
            );
            assert!(
                out.stderr.contains("division by zero"),
                "{}: {bad}: {}",
                node.name(),
                out.stderr
            );
            assert_eq!(out.stdout.trim(), "300000", "{}", node.name());
        }
    }
}

#[test]
fn parallel_groups_past_work_mem_stay_bounded() {
    let node = Node::new("primary");
    node.init(true);
    node.append_conf("log_temp_files = 0");
    node.start();
    node.safe_sql(
        "CREATE TABLE many (k int, v int); \
         INSERT INTO many SELECT g % 150000, g FROM generate_series(1, 600000) g; ANALYZE many",
    );
    let standby = Node::standby_of(&node, "standby");
    node.wait_for_replay(&standby);
    // Every participant meets nearly every key: 150,000 groups each.
    let query = "SELECT count(*), sum(n), sum(s), sum(lo), max(hi), sum(a) FROM \
                 (SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v::text) AS hi, \
                 avg(v) AS a FROM many GROUP BY k) x";
    let plan = node.safe_sql(&format!("EXPLAIN (COSTS OFF) {query}"));
    for part in [
        "Finalize HashAggregate",
        "Partial HashAggregate",
        "Parallel Seq Scan on many",
    ] {
        assert!(plan.contains(part), "no {part} in\n{plan}");
    }
    let serial = node.safe_sql(&format!("SET max_parallel_workers_per_gather = 0; {query}"));
    assert!(serial.starts_with("150000|600000|"), "{serial}");

    // Each measurement on a fresh server (memory freed earlier would
    // hide growth): spilled, then held.
    let mut growth = Vec::new();
    for work_mem in ["64kB", "4GB"] {
        node.restart();
        let s = node.background_session();
        s.query_safe(&format!("SET work_mem = '{work_mem}'"));
        node.reset_peak_rss();
        let base = node.rss_kib();
        let before = node.log_position();
        assert_eq!(s.query_safe(query), serial, "work_mem {work_mem}");
        growth.push(node.peak_rss_kib().saturating_sub(base));
        let spilled = node
            .log_since(before)
            .contains("temporary file: path \"base/pgsql_tmp/pgsql_tmp");
        assert_eq!(
            spilled,
            work_mem == "64kB",
            "spilled at work_mem {work_mem}"
        );
        assert!(
            node.temp_files().is_empty(),
            "no temporary file left (work_mem {work_mem})"
        );
    }
    eprintln!(
        "# peak growth: spilled {} KiB, held {} KiB",
        growth[0], growth[1]
    );
    assert!(growth[0] < BOUND_KIB, "spilled, grew by {} KiB", growth[0]);
    assert!(
        growth[1] > BOUND_KIB,
        "the bound tells the two apart: held, grew by {} KiB",
        growth[1]
    );
    node.wait_for_replay(&standby);
    let got = standby.safe_sql(&format!("SET work_mem = '64kB'; {query}"));
    assert_eq!(got, serial, "on the standby");
}
