//! The seed's horizon case: one session holding an old
//! snapshot, 8 clients running tpcb-like, thousands of idle connections —
//! how often pruning recomputes the removable horizon, and what the
//! writers get.
//!
//! ```text
//!   own hotpair primary (max_connections = N + 100, cgroup horizon-hotpair)
//!   pgbench -i; open N idle sessions (RawIdleSet)
//!   point "no old snapshot":   tpcb-like -M prepared -c 8  → tps, recomputes/s
//!   one session: BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT … (held)
//!   point "old snapshot held": tpcb-like -M prepared -c 8  → tps, recomputes/s
//! ```
//!
//! Recomputes come from `hotpair_stat_snapshots` (horizon_recomputes,
//! horizon_recomputes_avoided), read before and after each point; a build
//! without those columns (before GlobalVis) shows them as skipped. Run an
//! older build with `HOTPAIR_BIN_DIR=dir` to compare.
//!
//! While the old snapshot is held every page whose dead versions were
//! deleted after it sits between GlobalVis's two bounds: the question is
//! whether each access to such a page rescans every session's xmin (N + 9
//! of them) or at most one access per completed transaction does.

use std::time::Duration;

use super::idle::RawIdleSet;
use super::manyidle::skip_rows;
use super::report::{Cell, Chart, Table};
use super::target::{first_line, guarded, Endpoint, Kind, Target};
use super::workloads::{index_of, Ctx, CPU_NOTE};
use crate::Session;

/// Series of the table.
const SERIES: [(&str, &str); 5] = [
    ("idle sessions", "count"),
    ("tpcb-like, 8 clients", "tps"),
    ("horizon recomputes", "per s"),
    ("recomputes avoided", "per s"),
    ("recomputes per transaction", "x"),
];

/// Connects in flight per source address while opening.
const PARALLEL_PER_SOURCE: usize = 32;
/// Idle sessions per loopback source address.
const SESSIONS_PER_SOURCE: usize = 5_000;

/// The workload (`horizon`): `--many-idle N` sets the idle count
/// (default 10,000; 1,000 with `--quick`).
pub fn horizon(ctx: &mut Ctx) -> Vec<Table> {
    let n = match ctx.cfg.many_idle {
        0 if ctx.cfg.quick => 1_000,
        0 => 10_000,
        n => n,
    };
    let mut table = Table::new(
        "horizon",
        &format!(
            "{n} idle sessions, tpcb-like at 8 clients, with and without one old snapshot held"
        ),
        "tps",
        "point",
        &SERIES.map(|(s, _)| s),
        Chart::Bars,
    )
    .with_cpu(&[1]);
    for (i, (_, unit)) in SERIES.iter().enumerate() {
        table = table.series_unit(i, unit);
    }
    let rows = ["no old snapshot", "old snapshot held"];
    let mut settings = ctx.cfg.settings();
    settings.max_connections = n + 100;
    settings.standby = false;
    match index_of(ctx, Kind::Hotpair).map(|t| ctx.targets[t].primary().err()) {
        Some(None) => {
            let target = Target::hotpair_in(&settings, "", "horizon-hotpair");
            if let Err(why) = target.primary() {
                skip_rows(&mut table, &rows, &why);
            } else {
                ctx.targets.push(target);
                let t = ctx.targets.len() - 1;
                if let Err(e) = guarded(|| measure(ctx, &mut table, t, n, &rows)) {
                    table.set(rows[0], 0.0, 0, Cell::Failed(first_line(&e).to_string()));
                }
                let mut target = ctx.targets.remove(t);
                target.shutdown();
            }
        }
        Some(Some(why)) => skip_rows(&mut table, &rows, &why),
        None => skip_rows(&mut table, &rows, "hotpair not in this run"),
    }
    table.note(
        "old snapshot: one session in BEGIN ISOLATION LEVEL REPEATABLE READ that read pgbench_branches, held through the point",
    );
    table.note(format!(
        "active: pgbench -M prepared (tpcb-like) -c 8 -j 2 -T {} s after an untimed select-only warm-up; recomputes from hotpair_stat_snapshots",
        ctx.cfg.duration
    ));
    table.note(CPU_NOTE);
    vec![table]
}

/// The recompute counters, or why there are none.
fn counters(ep: &Endpoint) -> Result<(f64, f64), String> {
    let out = ep
        .sql("SELECT horizon_recomputes, horizon_recomputes_avoided FROM hotpair_stat_snapshots")?;
    let nums: Vec<f64> = out
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    match nums[..] {
        [a, b] => Ok((a, b)),
        _ => Err(format!(
            "unexpected hotpair_stat_snapshots: {}",
            first_line(&out)
        )),
    }
}

fn measure(ctx: &Ctx, table: &mut Table, t: usize, n: u32, rows: &[&str]) -> Result<(), String> {
    let ep = ctx.targets[t].primary()?.clone();
    let pgbench = ctx.pgbench.clone().ok_or("pgbench not installed")?;
    let mut args = ep.conn_args();
    args.extend(["-i", "-q", "-s", &ctx.cfg.scale.to_string(), "postgres"].map(String::from));
    let out = super::pgbench::run_raw(&pgbench, &args, Duration::from_secs(1800))?;
    if out.status != Some(0) {
        return Err(format!("pgbench -i failed: {}", out.error_tail()));
    }
    ep.sql("VACUUM")?;
    ep.sql("CHECKPOINT")?;
    if let Err(e) = ctx.warm_up(&ep) {
        eprintln!("bench: horizon: warm-up: {e}");
    }
    let sources = (n as usize).div_ceil(SESSIONS_PER_SOURCE).max(2);
    eprintln!("bench: horizon: opening {n} idle sessions");
    let (mut set, report) = RawIdleSet::open(
        &ep,
        n as usize,
        sources,
        PARALLEL_PER_SOURCE,
        ctx.cfg.min_mem_available_mib,
    );
    if let Some(why) = &report.stopped {
        eprintln!("bench: horizon: {why}");
    }
    let tpcb = ["-M", "prepared"].map(String::from);
    let mut holder: Option<Session> = None;
    for (i, row) in rows.iter().enumerate() {
        table.set(
            row,
            0.0,
            0,
            Cell::Value(report.opened as f64, report.stopped.clone()),
        );
        if i == 1 {
            let s =
                Session::try_connect("old-snapshot", &ep.connstr()).map_err(|e| e.to_string())?;
            s.query("BEGIN ISOLATION LEVEL REPEATABLE READ")
                .map_err(|e| e.to_string())?;
            s.query("SELECT sum(bbalance) FROM pgbench_branches")
                .map_err(|e| e.to_string())?;
            holder = Some(s);
        }
        let before = counters(&ep);
        let point = ctx.point_summary(&ep, 8, &tpcb);
        let after = counters(&ep);
        table.set_point(row, 0.0, 1, &point);
        match (before, after, &point) {
            (Ok(b), Ok(a), Ok(p)) => {
                let secs = f64::from(ctx.cfg.duration.max(1));
                table.set(row, 0.0, 2, Cell::Value((a.0 - b.0) / secs, None));
                table.set(row, 0.0, 3, Cell::Value((a.1 - b.1) / secs, None));
                if p.processed > 0 {
                    table.set(
                        row,
                        0.0,
                        4,
                        Cell::Value((a.0 - b.0) / p.processed as f64, None),
                    );
                }
            }
            (Err(e), _, _) | (_, Err(e), _) => {
                for s in 2..5 {
                    table.set(row, 0.0, s, Cell::Skipped(e.clone()));
                }
            }
            _ => {}
        }
    }
    if let Some(s) = holder {
        let _ = s.query("COMMIT");
    }
    set.close();
    Ok(())
}
