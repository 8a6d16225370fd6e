//! Power cuts that lose every write not yet fsynced (issue 21 item 3).
//!
//! The primary runs with the `faultfs` library in its journal mode: every
//! change to a file of its data directory is journaled with what it
//! destroys, every fsync after it. A power cut is SIGKILL plus
//! `faultfs_journal::power_cut`, which undoes every change no later fsync
//! covered — of the file for its contents, of its directory for files
//! created or renamed — as a kernel's page and dentry caches would lose
//! them.
//!
//! Each round, four clients run a mixed load — tpcb-like transactions
//! (an account update and a history row), COPY batches, DDL (a new table
//! with a row), two-phase commits, the odd CHECKPOINT — and log what was
//! acknowledged. At a random count of acknowledged operations the power
//! goes. The node must then start (crash recovery), and hold:
//!
//! * every acknowledged commit: history rows, copied rows, tables and
//!   their rows, two-phase rows (a PREPARE acknowledged without its
//!   COMMIT PREPARED is still prepared or committed);
//! * no partial transaction: the accounts' balances sum to the history's
//!   deltas, and no copied batch is there in part;
//! * indexes that agree with the heap: each history row found by key.
//!
//! A hot standby streams from the primary all along; after each round, once
//! it has replayed the recovered primary's WAL, the same checks hold on it
//! and its tables' checksums equal the primary's (it was never sent WAL a
//! cut took away).
//!
//! `HOTPAIR_POWER_CUTS` sets the rounds (5 in the suite; the 50 by
//! hand), `HOTPAIR_POWER_CUT_SEED` the seed (printed, to replay a failure).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::SinkExt;
use tap_tests::binaries::faultfs_path;
use tap_tests::faultfs_journal::power_cut;
use tap_tests::{block_on, wait_until, Node, Session};

const ACCOUNTS: i64 = 50;
const COPY_BATCH: i64 = 40;

/// What the clients were told was done.
#[derive(Default)]
struct Ledger {
    /// (history id, account, delta) of acknowledged tpcb-like commits.
    history: Vec<(i64, i64, i64)>,
    /// First ids of acknowledged COPY batches.
    copies: Vec<i64>,
    /// Acknowledged CREATE TABLE ddl_N + its row.
    tables: Vec<i64>,
    /// Acknowledged COMMIT PREPARED of row N.
    committed_2pc: Vec<i64>,
    /// Acknowledged PREPARE whose COMMIT PREPARED was not acknowledged.
    prepared_2pc: Vec<i64>,
    /// Everything acknowledged (the cut trigger).
    total: usize,
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One client's loop until the node goes away; ids come from disjoint
/// ranges per client and round.
fn client(
    node: &Node,
    worker: i64,
    round: i64,
    seed: u64,
    ledger: Arc<Mutex<Ledger>>,
    stop: Arc<AtomicBool>,
) {
    let Ok(s) = Session::try_connect("load", &node.connstr()) else {
        return;
    };
    let mut rng = Rng(seed ^ (worker as u64 + 1).wrapping_mul(0x9E37_79B9));
    let base = (round * 10 + worker) * 1_000_000;
    let mut n = 0i64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let id = base + n;
        let ok = match rng.below(20) {
            0..=12 => {
                let acct = rng.below(ACCOUNTS as u64) as i64 + 1;
                let delta = rng.below(2001) as i64 - 1000;
                let r = s.query(&format!(
                    "BEGIN; UPDATE accounts SET bal = bal + {delta} WHERE id = {acct}; \
                     INSERT INTO history VALUES ({id}, {acct}, {delta}); COMMIT"
                ));
                r.map(|_| ledger.lock().unwrap().history.push((id, acct, delta)))
                    .is_ok()
            }
            13..=15 => {
                let rows: String = (0..COPY_BATCH)
                    .map(|k| format!("{}\t{id}\tbatch row {k}\n", id * 100 + k))
                    .collect();
                let r = block_on(async {
                    let sink = s.client().copy_in("COPY copied FROM STDIN").await?;
                    futures_util::pin_mut!(sink);
                    sink.send(Bytes::from(rows)).await?;
                    sink.finish().await
                });
                r.map(|_| ledger.lock().unwrap().copies.push(id)).is_ok()
            }
            16 => s
                .query(&format!(
                    "CREATE TABLE ddl_{id} (id bigint PRIMARY KEY, note text); \
                     INSERT INTO ddl_{id} VALUES ({id}, 'made by DDL')"
                ))
                .map(|_| ledger.lock().unwrap().tables.push(id))
                .is_ok(),
            17..=18 => {
                let prepared = s
                    .query(&format!(
                        "BEGIN; INSERT INTO twopc VALUES ({id}); PREPARE TRANSACTION 'p_{id}'"
                    ))
                    .is_ok();
                if prepared {
                    ledger.lock().unwrap().prepared_2pc.push(id);
                    if s.query(&format!("COMMIT PREPARED 'p_{id}'")).is_ok() {
                        let mut l = ledger.lock().unwrap();
                        l.prepared_2pc.retain(|&p| p != id);
                        l.committed_2pc.push(id);
                    }
                }
                prepared
            }
            _ => s.query("CHECKPOINT").is_ok(),
        };
        if !ok {
            return;
        }
        ledger.lock().unwrap().total += 1;
    }
}

/// Whole-table checksums compared between primary and standby.
const CHECKSUMS: &[&str] = &[
    "SELECT md5(string_agg(id || ':' || bal, ',' ORDER BY id)) FROM accounts",
    "SELECT md5(string_agg(hid || ':' || acct || ':' || delta, ',' ORDER BY hid)) FROM history",
    "SELECT md5(string_agg(id || ':' || batch || ':' || note, ',' ORDER BY id)) FROM copied",
    "SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM twopc",
    "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relname LIKE 'ddl_%' AND relkind = 'r'",
];

fn count(node: &Node, sql: &str) -> i64 {
    node.safe_sql(sql)
        .parse()
        .unwrap_or_else(|_| panic!("{sql}"))
}

/// Everything the ledger promises, and no partial transaction.
fn verify(node: &Node, l: &Ledger, round: i64) {
    let ids: Vec<String> = l.history.iter().map(|h| h.0.to_string()).collect();
    if !ids.is_empty() {
        assert_eq!(
            count(
                node,
                &format!(
                    "SELECT count(*) FROM history WHERE hid IN ({})",
                    ids.join(",")
                )
            ),
            ids.len() as i64,
            "round {round}: every acknowledged tpcb-like commit is present"
        );
        for h in l.history.iter().step_by(7) {
            assert_eq!(
                node.safe_sql(&format!(
                    "SELECT acct || ':' || delta FROM history WHERE hid = {}",
                    h.0
                )),
                format!("{}:{}", h.1, h.2),
                "round {round}: history row {} found by its key",
                h.0
            );
        }
    }
    assert_eq!(
        node.safe_sql("SELECT coalesce(sum(bal), 0) = (SELECT coalesce(sum(delta), 0) FROM history) FROM accounts"),
        "t",
        "round {round}: balances sum to the history's deltas (no partial transaction)"
    );
    assert_eq!(
        node.safe_sql(&format!(
            "SELECT count(*) FROM (SELECT batch, count(*) FROM copied GROUP BY batch HAVING count(*) <> {COPY_BATCH}) p"
        )),
        "0",
        "round {round}: no COPY batch is there in part"
    );
    for b in &l.copies {
        assert_eq!(
            count(
                node,
                &format!("SELECT count(*) FROM copied WHERE batch = {b}")
            ),
            COPY_BATCH,
            "round {round}: acknowledged COPY batch {b}"
        );
    }
    for t in &l.tables {
        assert_eq!(
            node.safe_sql(&format!("SELECT note FROM ddl_{t} WHERE id = {t}")),
            "made by DDL",
            "round {round}: acknowledged CREATE TABLE ddl_{t} and its row"
        );
    }
    for c in &l.committed_2pc {
        assert_eq!(
            count(node, &format!("SELECT count(*) FROM twopc WHERE id = {c}")),
            1,
            "round {round}: acknowledged COMMIT PREPARED of {c}"
        );
    }
    for p in &l.prepared_2pc {
        let prepared = count(
            node,
            &format!("SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'p_{p}'"),
        );
        let committed = count(node, &format!("SELECT count(*) FROM twopc WHERE id = {p}"));
        assert_eq!(
            prepared + committed,
            1,
            "round {round}: acknowledged PREPARE of {p} is still prepared or committed"
        );
    }
}

#[test]
fn acknowledged_commits_survive_power_cuts() {
    let rounds: i64 = std::env::var("HOTPAIR_POWER_CUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let seed: u64 = std::env::var("HOTPAIR_POWER_CUT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    eprintln!("# power cuts: {rounds} rounds, HOTPAIR_POWER_CUT_SEED={seed}");
    let mut rng = Rng(seed);

    let node = Node::new("primary");
    node.init(true);
    node.append_conf("fsync = on\nmax_prepared_transactions = 20\nshared_buffers = 1MB");
    let journal = node.base_dir().join("faultfs.journal");
    node.set_env("LD_PRELOAD", &faultfs_path().display().to_string());
    node.set_env("HOTPAIR_FAULTFS_JOURNAL", &journal.display().to_string());
    node.set_env(
        "HOTPAIR_FAULTFS_ROOT",
        &node.data_dir().display().to_string(),
    );
    node.start();
    node.safe_sql(&format!(
        "CREATE TABLE accounts (id bigint PRIMARY KEY, bal bigint NOT NULL); \
         INSERT INTO accounts SELECT g, 0 FROM generate_series(1, {ACCOUNTS}) g; \
         CREATE TABLE history (hid bigint PRIMARY KEY, acct bigint, delta bigint); \
         CREATE TABLE copied (id bigint PRIMARY KEY, batch bigint, note text); \
         CREATE TABLE twopc (id bigint PRIMARY KEY); \
         CHECKPOINT"
    ));

    // A hot standby streams throughout: WAL is sent only once flushed, so
    // it never holds what a cut took from the primary, and after each
    // round it must equal the recovered primary.
    let standby = Node::standby_of(&node, "standby");

    let mut all = Ledger::default();
    let mut undone_total = 0usize;
    for round in 0..rounds {
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let target = 20 + rng.below(150) as usize;
        let round_seed = rng.next();
        let node_ref = &node;
        std::thread::scope(|sc| {
            for w in 0..4 {
                let (l, st) = (ledger.clone(), stop.clone());
                sc.spawn(move || client(node_ref, w, round, round_seed, l, st));
            }
            wait_until("the load reaches the cut point", || {
                ledger.lock().unwrap().total >= target
            });
            // The power goes: the process dies, unsynced writes are lost.
            node.stop("immediate");
            stop.store(true, Ordering::Relaxed);
        });
        let undone = power_cut(&journal).expect("undo unsynced writes");
        undone_total += undone.writes + undone.creates + undone.renames;
        eprintln!("# round {round}: cut after {target} operations, undid {undone:?}");
        node.start();
        let l = ledger.lock().unwrap();
        all.history.extend(&l.history);
        all.copies.extend(&l.copies);
        all.tables.extend(&l.tables);
        all.committed_2pc.extend(&l.committed_2pc);
        all.prepared_2pc.extend(&l.prepared_2pc);
        verify(&node, &all, round);
        // Settle the in-doubt two-phase transactions for the next round.
        for p in std::mem::take(&mut all.prepared_2pc) {
            let gid = format!("p_{p}");
            if count(
                &node,
                &format!("SELECT count(*) FROM pg_prepared_xacts WHERE gid = '{gid}'"),
            ) == 1
            {
                node.safe_sql(&format!("COMMIT PREPARED '{gid}'"));
            }
            all.committed_2pc.push(p);
        }
        node.wait_for_replay(&standby);
        verify(&standby, &all, round);
        for sql in CHECKSUMS {
            assert_eq!(
                standby.safe_sql(sql),
                node.safe_sql(sql),
                "round {round}: the standby equals the primary: {sql}"
            );
        }
    }
    assert!(
        undone_total > 0,
        "the power cuts lost unsynced writes (else the test proves nothing)"
    );
    standby.stop("fast");
    node.stop("fast");
}
