//! Failover under load (replication.md, "Failover"), the scenario issue 18
//! asks for, run for several rounds on one cluster whose roles rotate:
//!
//! ```text
//!  round k:   P (primary) ──sync, remote_apply──▶ A ──cascade──▶ B
//!             writers insert ledger rows and bump per-writer counters
//!             SIGKILL P mid-run
//!             promote A (new timeline); B, streaming from A, follows it
//!             P is rewound against A and rejoins as a standby of B
//!  round k+1: A ──sync──▶ B ──cascade──▶ P
//! ```
//!
//! After each failover: every commit a writer saw acknowledged is on the
//! new primary (a `remote_apply` commit returns only once A applied it),
//! none twice (the ledger's primary key; each counter equals the
//! acknowledged updates, or one more for the update in flight at the
//! kill), and once the standbys caught up, the tables are equal on all
//! three nodes. A long-lived session on B sees the new primary's commits.
//!
//! The cascade keeps B from ever being ahead of A, so B can always follow
//! (a standby attached to the dead primary directly might hold WAL the
//! promoted one never got, and would be refused as "not a child").
//!
//! `HOTPAIR_FAILOVER_ROUNDS` sets the number of rounds (default 10).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tap_tests::{wait_until, Node, Session};

const WRITERS: i64 = 4;

/// What one writer saw acknowledged.
#[derive(Default)]
struct Ledger {
    /// Ledger ids whose INSERT's COMMIT returned.
    acked: Vec<i64>,
    /// The id in flight when the connection failed (may or may not be
    /// committed).
    in_doubt: Option<i64>,
    /// Counter updates acknowledged.
    updates: i64,
}

/// Writer `w`: inserts ids `base + i` and bumps its counter, each in its
/// own transaction with `synchronous_commit = remote_apply`, until the
/// primary dies. Reports progress through `progress`.
fn writer(
    connstr: String,
    w: i64,
    base: i64,
    progress: Arc<std::sync::atomic::AtomicI64>,
) -> Ledger {
    let mut l = Ledger::default();
    let Ok(s) = Session::try_connect("writer", &connstr) else {
        return l;
    };
    if s.query("SET synchronous_commit = remote_apply").is_err() {
        return l;
    }
    for i in 0.. {
        let id = base + w * 1_000_000 + i;
        let sql = format!(
            "BEGIN; INSERT INTO ledger VALUES ({id}, {w}, repeat('x', {})); UPDATE counters SET n = n + 1 WHERE w = {w}; COMMIT",
            (id % 97) + 1
        );
        match s.query(&sql) {
            Ok(_) => {
                l.acked.push(id);
                l.updates += 1;
                progress.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                l.in_doubt = Some(id);
                return l;
            }
        }
    }
    l
}

/// A summary that differs if any row differs.
const CHECKSUM: &str = "SELECT (SELECT count(*) || ':' || coalesce(sum(id), 0) || ':' || coalesce(sum(length(payload) * (id % 1009)), 0) FROM ledger) || '/' || (SELECT string_agg(w || '=' || n, ',' ORDER BY w) FROM counters)";

fn sync_standby(primary: &Node, standby: &Node) {
    primary.safe_sql(&format!(
        "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 ({})'",
        standby.name()
    ));
    primary.safe_sql("SELECT pg_reload_conf()");
    let q = format!(
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = '{}'",
        standby.name()
    );
    assert!(
        primary.poll_query_until(&q, "sync"),
        "{} is the synchronous standby of {}",
        standby.name(),
        primary.name()
    );
}

#[test]
fn failover_rounds_lose_nothing() {
    let rounds: usize = std::env::var("HOTPAIR_FAILOVER_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let nodes = [
        Node::new("node_a"),
        Node::new("node_b"),
        Node::new("node_c"),
    ];
    nodes[0].init(true);
    nodes[0].start();
    nodes[0].safe_sql(
        "CREATE TABLE ledger (id bigint PRIMARY KEY, w int, payload text); \
         CREATE TABLE counters (w int PRIMARY KEY, n bigint); \
         INSERT INTO counters SELECT g, 0 FROM generate_series(0, 3) g",
    );
    nodes[1].init_from_backup(&nodes[0], "backup", true);
    nodes[1].start();
    nodes[2].init_from_backup(&nodes[1], "backup", true);
    nodes[2].start();

    // Acknowledged updates per writer, summed over the rounds.
    let mut updates = [0i64; WRITERS as usize];
    let mut in_flight = [0i64; WRITERS as usize];
    let mut all_acked: Vec<i64> = Vec::new();
    let (mut p, mut a, mut b) = (0usize, 1usize, 2usize);
    for round in 0..rounds {
        let (primary, sync, cascade) = (&nodes[p], &nodes[a], &nodes[b]);
        eprintln!(
            "# round {round}: primary {}, sync {}, cascade {}",
            primary.name(),
            sync.name(),
            cascade.name()
        );
        sync_standby(primary, sync);
        let long_lived = cascade.background_session();
        let before = long_lived.query_safe("SELECT count(*) FROM ledger");

        // Writers until the kill.
        let progress = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let base = (round as i64 + 1) * 10_000_000;
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (c, pr) = (primary.connstr(), progress.clone());
                std::thread::spawn(move || writer(c, w, base, pr))
            })
            .collect();
        wait_until("the writers committed some transactions", || {
            progress.load(Ordering::Relaxed) >= 40
        });
        primary.kill9();
        let ledgers: Vec<Ledger> = handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect();

        // Promote the synchronous standby; the cascaded one follows it.
        sync.promote();
        sync.safe_sql("ALTER SYSTEM RESET synchronous_standby_names");
        sync.safe_sql("SELECT pg_reload_conf()");
        let present: std::collections::HashSet<i64> = sync
            .safe_sql("SELECT id FROM ledger")
            .lines()
            .filter_map(|l| l.parse().ok())
            .collect();
        for (w, l) in ledgers.iter().enumerate() {
            for id in &l.acked {
                assert!(
                    present.contains(id),
                    "round {round}: acknowledged commit {id} of writer {w} lost"
                );
            }
            all_acked.extend(&l.acked);
            updates[w] += l.updates;
            if let Some(id) = l.in_doubt {
                if present.contains(&id) {
                    in_flight[w] += 1;
                }
            }
        }
        for id in &all_acked {
            assert!(present.contains(id), "an earlier round's commit {id} lost");
        }
        let counters = sync.safe_sql("SELECT w, n FROM counters ORDER BY w");
        for line in counters.lines() {
            let mut f = line.split('|');
            let w: usize = f.next().and_then(|v| v.parse().ok()).expect("w");
            let n: i64 = f.next().and_then(|v| v.parse().ok()).expect("n");
            assert_eq!(
                n,
                updates[w] + in_flight[w],
                "round {round}: writer {w}'s counter is its acknowledged updates (+ the one in doubt that committed)"
            );
        }
        assert_eq!(
            sync.safe_sql("SELECT count(*) = count(DISTINCT id) FROM ledger"),
            "t"
        );

        // New commits reach the cascaded standby (now streaming from the
        // new primary) and its long-lived session.
        sync.safe_sql(&format!(
            "INSERT INTO ledger VALUES ({}, -1, 'after failover')",
            base + 9_000_000
        ));
        sync.wait_for_replay(cascade);
        let after = long_lived.query_safe("SELECT count(*) FROM ledger");
        assert!(
            after.parse::<i64>().unwrap_or(0) > before.parse::<i64>().unwrap_or(0),
            "round {round}: long-lived session on {} sees the new primary's commits ({before} → {after})",
            cascade.name()
        );
        drop(long_lived);

        // The old primary, killed mid-run (it may hold WAL the new
        // timeline does not), is rewound against the new primary and
        // rejoins behind the cascaded standby.
        primary.rewind(sync);
        primary.enable_streaming(cascade);
        primary.start();
        sync.wait_for_replay(cascade);
        cascade.wait_for_replay(primary);
        let sums: Vec<String> = [sync, cascade, primary]
            .iter()
            .map(|n| n.safe_sql(CHECKSUM))
            .collect();
        assert!(
            sums.iter().all(|s| *s == sums[0]),
            "round {round}: tables equal on all three nodes: {sums:?}"
        );
        (p, a, b) = (a, b, p);
    }
}
