//! Issue 20's benchmark: what SERIALIZABLE costs beside REPEATABLE READ,
//! on hotpair and on PostgreSQL 15 — tps, and how often a transaction
//! meets a serialization failure (40001) and has to be retried.
//!
//! ```text
//!   per isolation level (REPEATABLE READ, SERIALIZABLE),
//!   per script (tpcb-like; transfer), per client count (1, 8, 32),
//!   interleaved hotpair / PostgreSQL, --rounds times:
//!     pgbench -M prepared --max-tries 100 -f script
//!       tpcb-like:  pgbench's built-in body in BEGIN ISOLATION LEVEL …; END
//!       transfer:   read two of 1,000 hot accounts, move an amount from one
//!                   to the other (the randomised check of tap test 078)
//! ```
//!
//! pgbench retries a transaction that fails with 40001 (or 40P01) up to
//! `--max-tries` times; the failure rate is its "total number of retries"
//! (plus transactions that failed every try) per 100 transactions
//! processed. Both systems run at scale `--scale` with fsync on; PostgreSQL
//! at its defaults. The target: tps at least PostgreSQL's at
//! each level, and no more failures than PostgreSQL's.

use super::report::{Cell, Chart, Table};
use super::workloads::{fill, for_each_target, interleaved_point, median, Ctx, CPU_NOTE};

/// pgbench's tries per transaction: enough that a retried transaction
/// almost never fails for good.
const MAX_TRIES: u32 = 100;

/// tpcb-like's body (pgbench's built-in script) at `level`.
fn tpcb(level: &str) -> String {
    format!(
        "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN ISOLATION LEVEL {level};
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"
    )
}

/// A transfer between two of the first 1,000 accounts at `level`: both
/// balances read first (the check an application makes), then both
/// written — the read/write pattern whose interleavings SSI must order.
fn transfer(level: &str) -> String {
    format!(
        "\\set a random(1, 1000)
\\set b random(1, 1000)
\\set amount random(1, 100)
BEGIN ISOLATION LEVEL {level};
SELECT abalance FROM pgbench_accounts WHERE aid = :a;
SELECT abalance FROM pgbench_accounts WHERE aid = :b;
UPDATE pgbench_accounts SET abalance = abalance - :amount WHERE aid = :a;
UPDATE pgbench_accounts SET abalance = abalance + :amount WHERE aid = :b;
END;
"
    )
}

/// The workload (`ssi`).
pub fn ssi(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "ssi",
        "serializable: tpcb-like and transfers at REPEATABLE READ and SERIALIZABLE (fsync on)",
        "tps",
        "workload",
        &[
            "hotpair",
            "PostgreSQL",
            "hotpair 40001 retries",
            "PostgreSQL 40001 retries",
        ],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .series_unit(2, "per 100 txn")
    .series_unit(3, "per 100 txn")
    .with_cpu(&[0, 1]);
    let clients: Vec<u32> = if ctx.cfg.quick {
        vec![1, 8]
    } else {
        vec![1, 8, 32]
    };
    let mut points: Vec<(String, String, String)> = Vec::new();
    for (level, short) in [("REPEATABLE READ", "rr"), ("SERIALIZABLE", "ser")] {
        points.push((
            format!("tpcb-like {level}"),
            format!("ssi_tpcb_{short}.sql"),
            tpcb(level),
        ));
        points.push((
            format!("transfer {level}"),
            format!("ssi_transfer_{short}.sql"),
            transfer(level),
        ));
    }
    let label = |name: &str, c: u32| format!("{name} c={c}");
    for (name, _, _) in &points {
        for &c in &clients {
            table.row(&label(name, c), f64::from(c));
        }
    }
    let mut ready = vec![false; ctx.targets.len()];
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "ssi",
        |ctx, t| {
            ctx.ensure_initialized(t)?;
            ready[t] = true;
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut table, &[t], &e, skip);
    }
    let rounds = ctx.cfg.select_rounds.max(1);
    for (name, file, text) in &points {
        let path = match ctx.script(file, text) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("bench: ssi: {e}");
                return vec![table];
            }
        };
        let args: Vec<String> = vec![
            "-M".into(),
            "prepared".into(),
            "--max-tries".into(),
            MAX_TRIES.to_string(),
            "-f".into(),
            path.display().to_string(),
        ];
        for &c in &clients {
            let row = label(name, c);
            let sums = interleaved_point(
                ctx,
                &mut table,
                &row,
                f64::from(c),
                &ready,
                rounds,
                |sum| sum.tps,
                |ctx, t| {
                    let ep = ctx.targets[t].primary().cloned().map_err(Cell::Skipped)?;
                    ctx.point_summary(&ep, c, &args).map_err(Cell::Failed)
                },
            );
            for (t, sums) in sums.iter().enumerate() {
                let rates: Vec<f64> = sums
                    .iter()
                    .filter(|s| s.processed > 0)
                    .map(|s| 100.0 * (s.retries + s.failed) as f64 / s.processed as f64)
                    .collect();
                if let Some(m) = median(&rates) {
                    table.set(&row, f64::from(c), 2 + t, Cell::Value(m, None));
                }
            }
        }
    }
    for t in (0..ctx.targets.len()).filter(|&t| ready[t]) {
        ctx.check_alive(t, "ssi");
    }
    table.note(format!(
        "scale {}, pgbench -M prepared --max-tries {MAX_TRIES} -T {} s per point, hotpair then PostgreSQL at each{}",
        ctx.cfg.scale,
        ctx.cfg.duration,
        if rounds > 1 {
            format!(", {rounds} interleaved rounds, median")
        } else {
            String::new()
        }
    ));
    table.note(
        "40001 retries: pgbench's total number of retries (serialization and deadlock failures) plus transactions that failed every try, per 100 processed",
    );
    table.note(CPU_NOTE);
    vec![table]
}
