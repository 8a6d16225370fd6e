//! Real pgbench runs unchanged against a hotpair primary and keeps the
//! TPC-B invariants.
//!
//! pgbench is how the seeds measure everything and how users will first
//! try hotpair. Its initialisation uses the less common corners of the
//! protocol and SQL (`COPY … FROM STDIN WITH (FREEZE ON)`, `VACUUM`,
//! `ALTER TABLE … ADD PRIMARY KEY` after the load, `TRUNCATE` of the history
//! before a run), and the tpcb-like script is five simple-protocol
//! statements between `BEGIN` and `END`. A server that loses an
//! update under concurrency, applies one twice, or aborts a transaction
//! pgbench does not notice, breaks the invariant checked here: every
//! transaction adds the same `delta` to one account, one teller and one
//! branch and records it in the history, so the four sums are equal and the
//! history has one row per processed transaction.
//!
//! The same sums are checked on a hot standby of the primary once it has
//! replayed everything: replay must apply each update and insert exactly
//! once, and the standby's snapshot must see all of them.
//!
//! Skipped (with a printed reason) only when pgbench is not installed;
//! `.ci/run` installs it.

use std::time::Duration;

use tap_tests::bench::pgbench;
use tap_tests::{timeout_default, Node};

/// pgbench's connection arguments for `node`, then `args`, then the database.
fn pgbench_args(node: &Node, args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "-h",
        node.host(),
        "-p",
        &node.port().to_string(),
        "-U",
        "postgres",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(args.iter().map(|s| s.to_string()));
    v.push("postgres".to_string());
    v
}

#[test]
fn pgbench_tpcb_like_keeps_balances() {
    let Some(pgbench_bin) = pgbench::pgbench_path() else {
        eprintln!("# skipping 010_pgbench: pgbench is not installed (apt-get install postgresql-client-15)");
        return;
    };
    let deadline: Duration = timeout_default();

    // 1. A primary and its hot standby.
    let node = Node::new("primary");
    node.init(true);
    node.start();
    let standby = Node::standby_of(&node, "standby");

    // 2. pgbench -i -s 1 with the default steps (drop, create, client-side
    //    COPY FREEZE, vacuum, primary keys).
    let init = pgbench::run_raw(
        &pgbench_bin,
        &pgbench_args(&node, &["-i", "-s", "1"]),
        deadline,
    )
    .expect("pgbench -i starts");
    assert_eq!(
        init.status,
        Some(0),
        "pgbench -i -s 1 succeeds\nstdout:\n{}\nstderr:\n{}",
        init.stdout,
        init.stderr
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM pgbench_accounts"),
        "100000",
        "100,000 accounts after pgbench -i -s 1"
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM pgbench_branches"),
        "1",
        "one branch after pgbench -i -s 1"
    );

    // 3. 200 tpcb-like transactions from 4 clients, with pgbench's own
    //    VACUUM and TRUNCATE before the run (no -n).
    let run = pgbench::run_raw(
        &pgbench_bin,
        &pgbench_args(&node, &["-c", "4", "-j", "2", "-t", "50"]),
        deadline,
    )
    .expect("pgbench starts");
    assert_eq!(
        run.status,
        Some(0),
        "pgbench -c 4 -t 50 succeeds\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let summary = pgbench::parse(&run.stdout)
        .unwrap_or_else(|| panic!("pgbench printed a summary:\n{}", run.stdout));
    assert_eq!(summary.processed, 200, "200 transactions processed");
    assert_eq!(summary.failed, 0, "no failed transactions");

    // 4. On both nodes (the standby once it replayed everything): every
    //    delta was applied once to an account, a teller and a branch, and
    //    recorded once in the history.
    let lsn = node.lsn("insert");
    node.wait_for_catchup(&standby, "replay", Some(&lsn));
    for n in [&node, &standby] {
        let what = n.name();
        let abalance = n.safe_sql("SELECT sum(abalance) FROM pgbench_accounts");
        let bbalance = n.safe_sql("SELECT sum(bbalance) FROM pgbench_branches");
        let tbalance = n.safe_sql("SELECT sum(tbalance) FROM pgbench_tellers");
        let delta = n.safe_sql("SELECT sum(delta) FROM pgbench_history");
        assert_eq!(abalance, delta, "{what}: sum(abalance) = sum(delta)");
        assert_eq!(bbalance, delta, "{what}: sum(bbalance) = sum(delta)");
        assert_eq!(tbalance, delta, "{what}: sum(tbalance) = sum(delta)");
        assert_eq!(
            n.safe_sql("SELECT count(*) FROM pgbench_history"),
            summary.processed.to_string(),
            "{what}: one history row per processed transaction"
        );
    }
}
