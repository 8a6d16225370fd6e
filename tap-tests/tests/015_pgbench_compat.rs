//! The pgbench compatibility matrix: real pgbench 15, unchanged, against a
//! hotpair primary and its hot standby, in every mode users will try.
//!
//! pgbench exercises each protocol path differently. `-M simple` sends
//! Query messages; `-M extended` sends an unnamed Parse/Bind/Execute per
//! statement with untyped (`0`) parameters; `-M prepared` parses each
//! statement once per connection as `P_n` and then only binds. `-i` uses
//! `COPY … FROM STDIN WITH (FREEZE ON)` (client-side generate, `g`) or
//! `INSERT … SELECT … generate_series` (server-side, `G`), then `VACUUM`
//! and `ALTER TABLE … ADD PRIMARY KEY`. Without `-n` every run first
//! vacuums two tables and truncates the history — on a standby those fail
//! and pgbench carries on, as against PostgreSQL. `-C` opens a connection
//! per transaction. The seeds' two-phase script ends each transaction with
//! `PREPARE TRANSACTION 'ptx_:client_id'` and `COMMIT PREPARED`.
//!
//! Each run must exit 0 and report every transaction processed and
//! "number of failed transactions: 0". After the writes, the TPC-B
//! invariant (every balance sum equals the history's) holds on both nodes.
//!
//! Skipped (with a printed reason) only when pgbench is not installed.

use tap_tests::bench::pgbench;
use tap_tests::cluster::write_file;
use tap_tests::Node;

/// Clients of the two-phase runs; max_prepared_transactions must cover them.
const TWO_PHASE_CLIENTS: [u32; 2] = [8, 32];

/// A custom read-write script: variables, a sleep, several statements in an
/// explicit transaction (the tpcb-like updates spelled out).
const CUSTOM_RW: &str = "\
\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
\\sleep 1 ms
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

/// A custom read-only script (for the standby too): several statements,
/// a range scan, an aggregate, a result stored with \gset and tested.
const CUSTOM_RO: &str = "\
\\set aid random(1, 100000 * :scale)
\\set n random(1, 10)
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \\gset
\\if :bal > -100000000
SELECT count(*) FROM pgbench_branches;
\\endif
BEGIN;
SELECT sum(tbalance) FROM pgbench_tellers WHERE bid = 1;
SELECT aid, abalance FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid::int + :n ORDER BY aid;
END;
\\sleep 1 ms
";

/// Runs pgbench on `node`; asserts exit 0, `transactions` processed (when
/// given) and no failed transactions. Returns stdout.
fn run_clean(node: &Node, args: &[&str], transactions: Option<u32>, what: &str) -> String {
    let out = node.pgbench(args);
    assert_eq!(
        out.status, 0,
        "{what}: pgbench exit status\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    if let Some(t) = transactions {
        let processed = format!("number of transactions actually processed: {t}/{t}");
        assert!(
            out.stdout.contains(&processed),
            "{what}: all {t} transactions processed\n{}",
            out.stdout
        );
    }
    assert!(
        out.stdout
            .contains("number of failed transactions: 0 (0.000%)"),
        "{what}: no failed transactions\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !out.stderr.contains("error"),
        "{what}: pgbench reported no error\n{}",
        out.stderr
    );
    out.stdout
}

/// Runs `pgbench -i` with `extra` arguments; asserts success, the step
/// report naming `generate`, and the four tables' row counts.
fn init(node: &Node, extra: &[&str], generate: &str) {
    let mut args = vec!["-i", "-s", "1"];
    args.extend_from_slice(extra);
    let out = node.pgbench(&args);
    assert_eq!(
        out.status, 0,
        "pgbench {args:?}\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stderr.contains(generate) && out.stderr.contains("primary keys"),
        "pgbench {args:?} ran {generate} and primary keys:\n{}",
        out.stderr
    );
    assert_eq!(
        node.safe_sql(
            "SELECT count(*) FROM pgbench_accounts; SELECT count(*) FROM pgbench_tellers; \
             SELECT count(*) FROM pgbench_branches; SELECT count(*) FROM pgbench_history"
        ),
        "100000\n10\n1\n0",
        "row counts after pgbench {args:?}"
    );
}

/// The TPC-B invariant on `node`: sum(abalance) = sum(delta) and
/// sum(tbalance) = sum(bbalance) (= sum(delta) too unless `simple_update`
/// ran: that script updates only accounts and history).
fn assert_balanced(node: &Node, simple_update: bool, what: &str) {
    let sums = node.safe_sql(
        "SELECT sum(abalance) FROM pgbench_accounts; SELECT sum(tbalance) FROM pgbench_tellers; \
         SELECT sum(bbalance) FROM pgbench_branches; SELECT sum(delta) FROM pgbench_history",
    );
    let v: Vec<&str> = sums.lines().collect();
    assert_eq!(v.len(), 4, "{what}: four sums");
    assert_eq!(v[0], v[3], "{what}: sum(abalance) = sum(delta)");
    assert_eq!(v[1], v[2], "{what}: sum(tbalance) = sum(bbalance)");
    if !simple_update {
        assert_eq!(v[1], v[3], "{what}: sum(tbalance) = sum(delta)");
    }
}

#[test]
fn pgbench_compatibility_matrix() {
    if pgbench::pgbench_path().is_none() {
        eprintln!("# skipping 015_pgbench_compat: pgbench is not installed (apt-get install postgresql-client-15)");
        return;
    }

    // 1. A primary allowing enough prepared transactions, and a standby.
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 64\nmax_connections = 100");
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    for (name, text) in [
        ("rw.sql", CUSTOM_RW),
        ("ro.sql", CUSTOM_RO),
        ("2pc.sql", tap_tests::bench::workloads::SCRIPT_2PC),
    ] {
        write_file(&primary.base_dir().join(name), text);
        write_file(&standby.base_dir().join(name), text);
    }

    // 2. Initialisation: server-side generate (-I dtGvp), then the default
    //    steps (dtgvp: COPY FROM STDIN WITH (FREEZE ON)), which drop and
    //    recreate what the first made.
    init(&primary, &["-I", "dtGvp"], "server-side generate");
    init(&primary, &[], "client-side generate");

    // 3. The built-in scripts in every query mode; the first run without
    //    -n (pgbench's own VACUUMs and TRUNCATE of the history).
    let mut first = true;
    for builtin in ["tpcb-like", "select-only"] {
        for mode in ["simple", "extended", "prepared"] {
            let mut args = vec!["-b", builtin, "-M", mode, "-c", "4", "-j", "2", "-t", "20"];
            if !first {
                args.push("-n");
            }
            first = false;
            run_clean(&primary, &args, Some(80), &format!("{builtin} -M {mode}"));
        }
    }
    assert_balanced(&primary, false, "after the built-in scripts");

    // 4. Custom scripts in every mode.
    for mode in ["simple", "extended", "prepared"] {
        let args = ["-n", "-f", "rw.sql", "-M", mode, "-c", "4", "-t", "20"];
        run_clean(&primary, &args, Some(80), &format!("custom rw -M {mode}"));
        let args = ["-n", "-f", "ro.sql", "-M", mode, "-c", "4", "-t", "20"];
        run_clean(&primary, &args, Some(80), &format!("custom ro -M {mode}"));
    }

    // 5. A new connection per transaction.
    run_clean(
        &primary,
        &["-n", "-C", "-c", "4", "-t", "20"],
        Some(80),
        "tpcb-like -C",
    );
    run_clean(
        &primary,
        &["-n", "-C", "-S", "-M", "prepared", "-c", "4", "-t", "20"],
        Some(80),
        "select-only -C -M prepared",
    );

    // 6. The seeds' two-phase script.
    for clients in TWO_PHASE_CLIENTS {
        let c = clients.to_string();
        run_clean(
            &primary,
            &["-n", "-f", "2pc.sql", "-c", &c, "-j", "2", "-t", "10"],
            Some(clients * 10),
            &format!("two-phase script, {clients} clients"),
        );
    }
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM pg_prepared_xacts"),
        "0",
        "no prepared transaction left behind"
    );
    assert_balanced(&primary, false, "after custom, -C and two-phase runs");

    // 7. simple-update (accounts and history only) in every mode.
    for mode in ["simple", "extended", "prepared"] {
        let args = [
            "-n",
            "-b",
            "simple-update",
            "-M",
            mode,
            "-c",
            "4",
            "-j",
            "2",
            "-t",
            "20",
        ];
        run_clean(
            &primary,
            &args,
            Some(80),
            &format!("simple-update -M {mode}"),
        );
    }
    assert_balanced(&primary, true, "after simple-update");

    // 8. The standby, caught up: select-only in every mode, the read-only
    //    script, -C, and the same invariant.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    assert_balanced(&standby, true, "standby after catch-up");
    for mode in ["simple", "extended", "prepared"] {
        let args = ["-n", "-S", "-M", mode, "-c", "4", "-j", "2", "-t", "20"];
        run_clean(
            &standby,
            &args,
            Some(80),
            &format!("standby select-only -M {mode}"),
        );
        let args = ["-n", "-f", "ro.sql", "-M", mode, "-c", "4", "-t", "20"];
        run_clean(
            &standby,
            &args,
            Some(80),
            &format!("standby custom ro -M {mode}"),
        );
    }
    run_clean(
        &standby,
        &["-n", "-C", "-S", "-c", "4", "-t", "20"],
        Some(80),
        "standby select-only -C",
    );

    // 9. Without -n on the standby: pgbench's VACUUMs and TRUNCATE fail as
    //    on a PostgreSQL standby, pgbench says it carries on, and the run
    //    itself is clean.
    let out = standby.pgbench(&["-S", "-c", "2", "-t", "10"]);
    assert_eq!(out.status, 0, "standby run without -n\n{}", out.stderr);
    assert!(
        out.stderr.contains("cannot execute VACUUM during recovery")
            && out
                .stderr
                .contains("cannot execute TRUNCATE TABLE in a read-only transaction")
            && out
                .stderr
                .contains("ignoring this error and continuing anyway"),
        "standby refuses pgbench's VACUUM and TRUNCATE as PostgreSQL does:\n{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains("number of transactions actually processed: 20/20"),
        "standby run without -n processed everything:\n{}",
        out.stdout
    );
}
