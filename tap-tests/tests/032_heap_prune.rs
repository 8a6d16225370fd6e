//! Heap pruning end to end: pgbench's tpcb-like updates on a primary with
//! a streaming standby attached. Pruning keeps the hot tables small; the
//! primary is killed with SIGKILL in the middle of the run and restarted
//! (crash recovery replays the PRUNE records, then the inserts that reused
//! the slots they freed); the standby replays the same records and keeps
//! its own indexes in step. After catch-up both nodes answer every row the
//! same, through the index and through a scan, and the indexes of the
//! standby never reach a different row than the key asked for.

use std::sync::atomic::{AtomicBool, Ordering};

use tap_tests::{wait_until, Node};

/// Per-table checksums, each read by a sequential scan.
const SCANS: [&str; 4] = [
    "SELECT count(*), sum(bid), sum(bbalance) FROM pgbench_branches",
    "SELECT count(*), sum(tid), sum(tbalance) FROM pgbench_tellers",
    "SELECT count(*), sum(aid), sum(abalance) FROM pgbench_accounts",
    "SELECT count(*), sum(delta) FROM pgbench_history",
];

/// Every branch and teller (scale 1: one branch, ten tellers), and a
/// spread of accounts, one primary-key lookup each (the key is echoed: a
/// lookup that reached another row would show it).
fn lookups(n: &Node) -> String {
    let mut sql = String::new();
    for b in 1..=1 {
        sql.push_str(&format!(
            "SELECT bid, bbalance FROM pgbench_branches WHERE bid = {b};\n"
        ));
    }
    for t in 1..=10 {
        sql.push_str(&format!(
            "SELECT tid, tbalance FROM pgbench_tellers WHERE tid = {t};\n"
        ));
    }
    for a in (1..=100_000).step_by(997) {
        sql.push_str(&format!(
            "SELECT aid, abalance FROM pgbench_accounts WHERE aid = {a};\n"
        ));
    }
    let out = n.run_psql(&["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"], &sql);
    assert_eq!(out.status, 0, "lookups failed: {}", out.stderr);
    out.stdout
}

fn scans(n: &Node) -> Vec<String> {
    SCANS.iter().map(|q| n.safe_sql(q)).collect()
}

fn pages(n: &Node, table: &str) -> u64 {
    n.safe_sql(&format!("SELECT pg_relation_size('{table}')"))
        .parse::<u64>()
        .expect("a size")
        / 8192
}

fn caught_up(primary: &Node, standby: &Node) {
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(standby, "replay", Some(&lsn));
}

fn tpcb(primary: &Node, transactions: &str) {
    let out = primary.pgbench(&["-n", "-c", "4", "-j", "2", "-t", transactions]);
    assert_eq!(out.status, 0, "pgbench failed: {}", out.stderr);
}

#[test]
fn pruning_survives_crash_and_replays_on_the_standby() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    let out = primary.pgbench(&["-i", "-s", "1"]);
    assert_eq!(out.status, 0, "pgbench -i failed: {}", out.stderr);

    // A first run, then one killed half-way.
    tpcb(&primary, "500");
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let runner = sc.spawn(|| {
            // Runs until the primary dies under it.
            while !stop.load(Ordering::Relaxed) {
                let _ = primary.pgbench(&["-n", "-c", "4", "-j", "2", "-t", "200"]);
            }
        });
        wait_until("tpcb-like transactions in the middle of a run", || {
            primary
                .sql("SELECT count(*) > 3000 FROM pgbench_history")
                .is_ok_and(|o| o == "t")
        });
        primary.kill9();
        stop.store(true, Ordering::Relaxed);
        runner.join().expect("pgbench runner");
    });
    // Crash recovery replays the prunes and the inserts into freed slots.
    primary.start();
    tpcb(&primary, "500");

    let branches = pages(&primary, "pgbench_branches");
    let tellers = pages(&primary, "pgbench_tellers");
    let history = primary.safe_sql("SELECT count(*) FROM pgbench_history");
    let txns: u64 = history.parse().expect("a count");
    assert!(txns >= 5000, "{txns} transactions");
    eprintln!(
        "# after {txns} transactions: pgbench_branches {branches} pages, pgbench_tellers {tellers} pages, pgbench_accounts {} pages",
        pages(&primary, "pgbench_accounts")
    );
    // Without pruning every transaction leaves a dead branch and teller
    // version behind: thousands of versions, dozens of pages each (the
    // margin is for bulk extension, which may add pages at once).
    assert!(
        branches <= 8,
        "pgbench_branches: {branches} pages after {txns} updates"
    );
    assert!(
        tellers <= 8,
        "pgbench_tellers: {tellers} pages after {txns} updates"
    );

    caught_up(&primary, &standby);
    let want = scans(&primary);
    assert_eq!(scans(&standby), want, "scans equal after catch-up");
    let want = lookups(&primary);
    assert_eq!(
        want.lines().count(),
        1 + 10 + 101,
        "one row per lookup: {want}"
    );
    assert_eq!(
        lookups(&standby),
        want,
        "index lookups equal after catch-up"
    );
    let standby_branches = pages(&standby, "pgbench_branches");
    assert!(
        standby_branches <= 8,
        "the standby's copy is pruned too: {standby_branches} pages"
    );

    // A restarted standby rebuilds its indexes from the pruned heap. (It
    // reconnects exactly at the end of WAL and nothing more is written:
    // its walsender must still say "streaming", which catching up needs.)
    standby.restart();
    caught_up(&primary, &standby);
    assert_eq!(lookups(&standby), want, "after the standby's restart");
}

fn horizon_counters(s: &tap_tests::Session) -> (u64, u64) {
    let out = s.query_safe(
        "SELECT horizon_recomputes, horizon_recomputes_avoided FROM hotpair_stat_snapshots",
    );
    let v: Vec<u64> = out
        .split('|')
        .map(|x| x.parse().expect("numeric counter"))
        .collect();
    assert_eq!(v.len(), 2, "two counters: {out:?}");
    (v[0], v[1])
}

/// GlobalVis (transactions.md, "Horizons"): while an old REPEATABLE READ
/// snapshot holds the horizon back, a session scanning full pages whose
/// deleters are newer than that snapshot but older than its own recomputes
/// the horizon once for its snapshot, not once per scan; after the next
/// completion a newer snapshot recomputes again.
#[test]
fn horizon_recomputed_once_per_snapshot() {
    let node = Node::new("primary");
    node.init(false);
    node.start();
    if !node.is_hotpair() {
        return; // hotpair_stat_snapshots is hotpair's own view
    }
    node.safe_sql("CREATE TABLE h (a int, pad text)");
    node.safe_sql("INSERT INTO h VALUES (1, repeat('x', 1500))");
    let old = node.background_session();
    old.query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(old.query_safe("SELECT count(*) FROM h"), "1");
    // Twenty versions of 1.5 KB: full pages whose deleters are all newer
    // than the old snapshot.
    let w = node.background_session();
    for _ in 0..20 {
        w.query_safe("UPDATE h SET a = a + 1");
    }
    let s = node.background_session();
    let (r0, a0) = horizon_counters(&s);
    assert_eq!(s.query_safe("SELECT count(*) FROM h"), "1");
    let (r1, a1) = horizon_counters(&s);
    assert!(
        r1 > r0,
        "a full page between the bounds recomputes: {r0} -> {r1}"
    );
    // No completion since: the same snapshot generation, no recompute.
    for _ in 0..5 {
        assert_eq!(s.query_safe("SELECT count(*) FROM h"), "1");
    }
    let (r2, a2) = horizon_counters(&s);
    assert_eq!(r2, r1, "no second recompute for one snapshot");
    assert!(a2 >= a1 + 5, "recomputes avoided: {a0} -> {a1} -> {a2}");
    // The old snapshot goes (read-only: no completion); the next
    // completion gives a newer snapshot, which may recompute once more.
    old.query_safe("COMMIT");
    w.query_safe("UPDATE h SET a = a + 1");
    assert_eq!(s.query_safe("SELECT count(*) FROM h"), "1");
    let (r3, _) = horizon_counters(&s);
    assert!(r3 > r2, "a newer snapshot recomputes: {r2} -> {r3}");
}
