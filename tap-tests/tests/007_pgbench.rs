//! pgbench against a real `primary` process.
//!
//! `pgbench -i` is a tour of DDL and bulk loading (DROP TABLE IF EXISTS with
//! several names, CREATE TABLE … WITH (fillfactor), TRUNCATE, COPY FROM STDIN
//! of 100,000 rows, VACUUM, ALTER TABLE ADD PRIMARY KEY), and its built-in
//! scripts are concurrent read-modify-write transactions in all three query
//! modes. A lost update, a phantom or missing history row, or a statement
//! pgbench needs but the server rejects shows up as a failed run or as the
//! TPC-B invariant breaking: after any number of tpcb-like transactions the
//! balances of accounts, tellers and branches and the deltas in history all
//! sum to the same number.

use tap_tests::Node;

/// sum(abalance), sum(tbalance), sum(bbalance), sum(delta), count(history),
/// one per line (several statements in one query; no scalar subqueries).
fn balances(node: &Node) -> Vec<String> {
    node.safe_sql(
        "SELECT sum(abalance) FROM pgbench_accounts; SELECT sum(tbalance) FROM pgbench_tellers; \
         SELECT sum(bbalance) FROM pgbench_branches; SELECT sum(delta) FROM pgbench_history; \
         SELECT count(*) FROM pgbench_history",
    )
    .lines()
    .map(str::to_string)
    .collect()
}

/// Runs pgbench and checks it processed every transaction without failures.
fn run_clean(node: &Node, args: &[&str], transactions: u32, what: &str) {
    let out = node.pgbench(args);
    assert_eq!(
        out.status, 0,
        "{what}: pgbench exit status\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let processed =
        format!("number of transactions actually processed: {transactions}/{transactions}");
    assert!(
        out.stdout.contains(&processed),
        "{what}: all transactions processed\n{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("number of failed transactions: 0 (0.000%)"),
        "{what}: no failed transactions\n{}",
        out.stdout
    );
}

#[test]
fn pgbench() {
    // 1. A running primary.
    let node = Node::new("primary");
    node.init(false);
    node.start();

    // 2. pgbench -i builds and fills the four tables.
    let out = node.pgbench(&["-i", "-s", "1"]);
    assert_eq!(
        out.status, 0,
        "pgbench -i exit status\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stderr.contains("done in"),
        "pgbench -i finished: {}",
        out.stderr
    );
    assert_eq!(
        node.safe_sql(
            "SELECT count(*) FROM pgbench_accounts; SELECT count(*) FROM pgbench_tellers; \
             SELECT count(*) FROM pgbench_branches; SELECT count(*) FROM pgbench_history"
        ),
        "100000\n10\n1\n0",
        "pgbench -i row counts"
    );

    // 3. pgbench -i again drops and recreates everything.
    let out = node.pgbench(&["-i", "-s", "1"]);
    assert_eq!(
        out.status, 0,
        "second pgbench -i exit status\nstderr:\n{}",
        out.stderr
    );
    assert_eq!(
        node.safe_sql("SELECT count(*) FROM pgbench_accounts"),
        "100000",
        "reinitialised accounts"
    );

    // 4. tpcb-like with concurrent clients in each query mode; the first run
    //    also does pgbench's pre-run VACUUM and TRUNCATE of history.
    run_clean(
        &node,
        &["-c", "4", "-j", "2", "-t", "50", "-M", "simple"],
        200,
        "tpcb-like simple",
    );
    run_clean(
        &node,
        &["-n", "-c", "4", "-j", "2", "-t", "50", "-M", "extended"],
        200,
        "tpcb-like extended",
    );
    run_clean(
        &node,
        &["-n", "-c", "4", "-j", "2", "-t", "50", "-M", "prepared"],
        200,
        "tpcb-like prepared",
    );

    // 5. The TPC-B invariant: every balance sum equals the history's.
    let b = balances(&node);
    assert_eq!(b.len(), 5, "five aggregates: {b:?}");
    assert_eq!(b[4], "600", "one history row per transaction");
    assert!(
        b[0] == b[3] && b[1] == b[3] && b[2] == b[3],
        "accounts, tellers, branches and history balances agree: {b:?}"
    );

    // 6. The other built-in scripts run clean; simple-update keeps accounts
    //    and history in step.
    run_clean(
        &node,
        &[
            "-n",
            "-b",
            "simple-update",
            "-c",
            "4",
            "-j",
            "2",
            "-t",
            "50",
            "-M",
            "prepared",
        ],
        200,
        "simple-update",
    );
    run_clean(
        &node,
        &[
            "-n",
            "-b",
            "select-only",
            "-c",
            "4",
            "-j",
            "2",
            "-t",
            "50",
            "-M",
            "extended",
        ],
        200,
        "select-only",
    );
    let b = balances(&node);
    assert_eq!(b[4], "800", "history rows after simple-update");
    assert_eq!(b[0], b[3], "accounts balance equals history deltas: {b:?}");

    node.stop("fast");
}
