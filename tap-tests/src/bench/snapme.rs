//! The seeds' snapme experiment, as written: a VOLATILE PL/pgSQL
//! function whose loop runs `EXECUTE 'SELECT 1'` p_loop times, called
//! from many pgbench clients. In READ COMMITTED every statement of a
//! VOLATILE function takes a new snapshot, so each call takes p_loop
//! snapshots: the run measures how fast a node hands out snapshots to
//! busy sessions — on a primary and on a standby (KnownAssignedXids) —
//! and, with the `txid_current` variant, while every client holds an xid.
//!
//! ```text
//!   CREATE FUNCTION snapme(p_ret int, p_loop int) … (on each primary;
//!                                                    the standby replays it)
//!   per client count c in 1, 2, 8, 64, interleaved hotpair / PostgreSQL:
//!     primary  SELECT snapme(17, 1000);                       -M prepared
//!     standby  SELECT snapme(17, 1000);                       -M prepared
//!     primary  BEGIN; SELECT txid_current();
//!              SELECT snapme(17, 1000); COMMIT;               -M prepared
//! ```
//!
//! The value is snapshots per second: calls per second × p_loop (the
//! loop's snapshots; the calling statement's own is left out on both
//! systems). For hotpair a third series shows the snapshots a call
//! actually took, counted by `hotpair_stat_snapshots` (computed + reused)
//! around the point — p_loop plus the calling statement's. The CPU
//! columns are per call. `--profile snapme:8` records where hotpair's
//! time goes (docs/benchmarks.md, "snapme").

use super::report::{Cell, Chart, Table};
use super::workloads::{
    for_each_target, interleaved_point, median, snapshot_counters, Ctx, CPU_NOTE,
};

/// Statements per call: the seed's `snapme(17, 1000)`.
pub const P_LOOP: u32 = 1000;

/// The seed's function, verbatim but for OR REPLACE.
const FUNCTION: &str = "CREATE OR REPLACE FUNCTION snapme(p_ret int, p_loop int) RETURNS int \
     VOLATILE LANGUAGE plpgsql AS $$BEGIN FOR x in 1..p_loop LOOP EXECUTE 'SELECT 1'; \
     END LOOP; RETURN p_ret; END;$$";

/// One kind of point: its row-label prefix, whether it runs on the
/// standby, its script.
struct Script {
    label: &'static str,
    standby: bool,
    file: &'static str,
    text: String,
}

fn scripts() -> [Script; 3] {
    let call = format!("SELECT snapme(17, {P_LOOP});\n");
    [
        Script {
            label: "primary",
            standby: false,
            file: "snapme.sql",
            text: call.clone(),
        },
        Script {
            label: "standby",
            standby: true,
            file: "snapme.sql",
            text: call.clone(),
        },
        Script {
            label: "primary, txid_current",
            standby: false,
            file: "snapme_txid.sql",
            text: format!("BEGIN;\nSELECT txid_current();\n{call}COMMIT;\n"),
        },
    ]
}

/// The workload (`snapme`).
pub fn snapme(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "snapme",
        &format!("snapme: SELECT snapme(17, {P_LOOP}) — snapshots per second"),
        "snapshots/s",
        "node, clients",
        &["hotpair", "PostgreSQL", "hotpair snapshots per call"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .series_unit(2, "count")
    .with_cpu(&[0, 1]);
    let clients: Vec<u32> = if ctx.cfg.quick {
        vec![1, 8]
    } else {
        vec![1, 2, 8, 64]
    };
    let scripts = scripts();
    let label = |s: &Script, c: u32| format!("{}, {c}", s.label);
    for s in &scripts {
        for &c in &clients {
            table.row(&label(s, c), f64::from(c));
        }
    }
    let mut ready = vec![false; ctx.targets.len()];
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "snapme",
        |ctx, t| {
            ctx.targets[t].primary()?.sql(FUNCTION)?;
            if ctx.targets[t].standby().is_ok() {
                ctx.targets[t].wait_standby_catchup()?;
            }
            ready[t] = true;
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        for r in &mut table.rows {
            r.cells[t] = if skip {
                Cell::Skipped(e.clone())
            } else {
                Cell::Failed(e.clone())
            };
        }
    }
    // Interleaved: at each point hotpair, then PostgreSQL, `--rounds`
    // times, so a slow spell of the VM hits both; each cell is the median.
    let rounds = ctx.cfg.select_rounds.max(1);
    for s in &scripts {
        let path = match ctx.script(s.file, &s.text) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("bench: snapme: {e}");
                return vec![table];
            }
        };
        let args: Vec<String> = ["-M", "prepared", "-f"]
            .iter()
            .map(|a| a.to_string())
            .chain([path.display().to_string()])
            .collect();
        for &c in &clients {
            let row = label(s, c);
            // hotpair's snapshots per call, counted around each round.
            let mut per_call: Vec<f64> = Vec::new();
            interleaved_point(
                ctx,
                &mut table,
                &row,
                f64::from(c),
                &ready,
                rounds,
                |sum| sum.tps * f64::from(P_LOOP),
                |ctx, t| {
                    let node = if s.standby {
                        ctx.targets[t].standby()
                    } else {
                        ctx.targets[t].primary()
                    };
                    let ep = node.cloned().map_err(Cell::Skipped)?;
                    let before = snapshot_counters(&ctx.targets[t], Some(&ep));
                    let sum = ctx.point_summary(&ep, c, &args).map_err(Cell::Failed)?;
                    let after = snapshot_counters(&ctx.targets[t], Some(&ep));
                    if let (Some(b), Some(a)) = (before, after) {
                        if sum.processed > 0 {
                            let taken = (a.0 + a.1).saturating_sub(b.0 + b.1);
                            per_call.push(taken as f64 / sum.processed as f64);
                        }
                    }
                    Ok(sum)
                },
            );
            if let Some(m) = median(&per_call) {
                table.set(&row, f64::from(c), 2, Cell::Value(m, None));
            }
        }
    }
    table.note(format!(
        "pgbench -M prepared -T {} s per point, hotpair then PostgreSQL at each{}; snapshots/s = calls/s × {P_LOOP} (the loop's EXECUTEs)",
        ctx.cfg.duration,
        if rounds > 1 {
            format!(", {rounds} interleaved rounds, median")
        } else {
            String::new()
        }
    ));
    table.note("hotpair snapshots per call: hotpair_stat_snapshots (computed + reused) around the point, per call");
    table.note(format!(
        "{CPU_NOTE}; here a transaction is one call ({P_LOOP} snapshots)"
    ));
    vec![table]
}
