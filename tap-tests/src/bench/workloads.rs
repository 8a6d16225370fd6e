//! The pgbench-driven workloads (a–g) and the [`Ctx`] every
//! workload runs in.
//!
//! Each workload function takes the context, runs its points on every
//! target (hotpair first, then PostgreSQL, so both see the same machine
//! state within minutes of each other) and returns one or more [`Table`]s.
//! A point that fails becomes a `Failed` cell with pgbench's last words; a
//! target that cannot run a point at all (no standby, did not start) gives
//! `Skipped` cells with the reason.
//!
//! pgbench always runs with `-n` (no vacuum before the run: the standby
//! cannot vacuum and both systems should see the same sequence), with
//! `-j min(clients, 2)` threads and a deadline of its duration plus a
//! margin ([`super::pgbench`]).
//!
//! Every timed point also measures the CPU of the system it ran on (both
//! nodes, [`Target::cpu_usec`]) and of pgbench itself; each table shows
//! both per transaction beside the tps ([`Table::with_cpu`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::idle::IdlePool;
use super::nullserver::NullServer;
use super::pgbench;
use super::profile::{self, ProfileSpec};
use super::report::{Cell, Chart, Table};
use super::target::{first_line, guarded, Endpoint, Kind, Target};
use super::RunConfig;

/// Everything the workloads share.
pub struct Ctx {
    /// Durations, counts, directories.
    pub cfg: RunConfig,
    /// pgbench, if installed.
    pub pgbench: Option<PathBuf>,
    /// The systems: hotpair first, then PostgreSQL.
    pub targets: Vec<Target>,
    /// Per target: result of `pgbench -i` at the run's scale (None: not yet).
    initialized: Vec<Option<Result<(), String>>>,
    /// The workload running now (its command-line name), for `--profile`.
    pub workload: String,
    /// `--profile`: the point to record, and where the files go.
    pub profile: Option<(ProfileSpec, PathBuf)>,
    /// Set once the profiled point ran (only the first match is recorded).
    profiled: std::cell::Cell<bool>,
    /// The same for PostgreSQL's recording (`--profile-postgres`).
    profiled_postgres: std::cell::Cell<bool>,
}

/// The tpcb-like transaction of pgbench, ended by two-phase commit (the
/// seed's `pgbench-write-2pc.sql`); run with `-M simple` so `:client_id`
/// is substituted inside the quoted gid.
pub const SCRIPT_2PC: &str = "\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
PREPARE TRANSACTION 'ptx_:client_id';
COMMIT PREPARED 'ptx_:client_id';
";

impl Ctx {
    /// A context over `targets`.
    pub fn new(cfg: RunConfig, pgbench: Option<PathBuf>, targets: Vec<Target>) -> Ctx {
        let n = targets.len();
        Ctx {
            cfg,
            pgbench,
            targets,
            initialized: vec![None; n],
            workload: String::new(),
            profile: None,
            profiled: std::cell::Cell::new(false),
            profiled_postgres: std::cell::Cell::new(false),
        }
    }

    /// Starts `perf record` if `ep` with `clients` is the `--profile` point
    /// (hotpair's, and with `--profile-postgres` PostgreSQL's too; the
    /// first match of each only).
    fn maybe_start_profile(
        &self,
        ep: &Endpoint,
        clients: u32,
        seconds: u32,
    ) -> Option<profile::Recording> {
        let (spec, out) = self.profile.as_ref()?;
        if spec.workload != self.workload || spec.clients != clients {
            return None;
        }
        let kind = self.targets.iter().find_map(|t| {
            let node = if spec.standby { &t.standby } else { &t.primary };
            node.as_ref()
                .is_ok_and(|n| n.port == ep.port)
                .then_some(t.kind)
        })?;
        if kind == Kind::Postgres {
            if !spec.postgres || self.profiled_postgres.get() {
                return None;
            }
            self.profiled_postgres.set(true);
            eprintln!(
                "bench: --profile-postgres: recording PostgreSQL during {} with {clients} clients",
                self.workload
            );
            return profile::start_postgres(spec, seconds, out)
                .map_err(|e| eprintln!("bench: --profile: {e}"))
                .ok();
        }
        if self.profiled.get() {
            return None;
        }
        self.profiled.set(true);
        let Some(pid) = profile::pid_listening_on(ep.port) else {
            eprintln!("bench: --profile: no process listens on port {}", ep.port);
            return None;
        };
        eprintln!(
            "bench: --profile: recording hotpair (pid {pid}) during {} with {clients} clients",
            self.workload
        );
        match profile::start(spec, pid, seconds, out) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("bench: --profile: {e}");
                None
            }
        }
    }

    /// Writes `text` as script `name` in the script directory; its path.
    pub fn script(&self, name: &str, text: &str) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&self.cfg.script_dir)
            .map_err(|e| format!("mkdir {}: {e}", self.cfg.script_dir.display()))?;
        let path = self.cfg.script_dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
        Ok(path)
    }

    fn pgbench(&self) -> Result<&Path, String> {
        self.pgbench
            .as_deref()
            .ok_or_else(|| "pgbench not installed".to_string())
    }

    /// `pgbench -i -s scale` on target `t`'s primary (once per run), then
    /// waits for its standby to catch up.
    pub fn ensure_initialized(&mut self, t: usize) -> Result<(), String> {
        if let Some(r) = &self.initialized[t] {
            return r.clone();
        }
        let r = self.init_tables(t, self.cfg.scale).map(|_| ());
        self.initialized[t] = Some(r.clone());
        r
    }

    /// Runs `pgbench -i -s scale -q` (all default steps) on target `t`;
    /// returns its wall time. Resets the "initialized" memo to this scale.
    pub fn init_tables(&mut self, t: usize, scale: u32) -> Result<Duration, String> {
        let pgbench = self.pgbench()?.to_path_buf();
        let ep = self.targets[t].primary()?.clone();
        let mut args = ep.conn_args();
        args.extend([
            "-i".into(),
            "-q".into(),
            "-s".into(),
            scale.to_string(),
            "postgres".into(),
        ]);
        let out = pgbench::run_raw(&pgbench, &args, Duration::from_secs(1800))?;
        if out.timed_out || out.status != Some(0) {
            return Err(format!(
                "pgbench -i -s {scale} failed ({:?}): {}",
                out.status,
                out.error_tail()
            ));
        }
        self.initialized[t] = if scale == self.cfg.scale {
            Some(Ok(()))
        } else {
            None
        };
        if self.targets[t].standby.is_ok() {
            self.targets[t].wait_standby_catchup()?;
        }
        self.settle(t)?;
        Ok(out.elapsed)
    }

    /// After a load, lets target `t` settle before anything is timed: a
    /// CHECKPOINT on the primary and (a restartpoint) on the standby, then
    /// `sync`. Without it the load's dirty pages — written by the servers'
    /// bulk-write rings into the OS page cache — are written back by the
    /// kernel some 30 s later, in the middle of whichever points run then.
    /// The same for both systems.
    pub fn settle(&self, t: usize) -> Result<(), String> {
        let target = &self.targets[t];
        target.primary()?.sql("CHECKPOINT")?;
        if let Ok(standby) = target.standby() {
            target.wait_standby_catchup()?;
            standby.sql("CHECKPOINT")?;
        }
        let status = std::process::Command::new("sync")
            .status()
            .map_err(|e| format!("sync: {e}"))?;
        if !status.success() {
            return Err(format!("sync failed: {status}"));
        }
        Ok(())
    }

    /// One timed pgbench point against `ep`: `-n -T duration -c clients
    /// -j min(clients,2)` plus `extra`; its summary with the server
    /// system's and pgbench's CPU, or the failure.
    pub fn point_summary(
        &self,
        ep: &Endpoint,
        clients: u32,
        extra: &[String],
    ) -> Result<pgbench::Summary, String> {
        self.point_summary_for(ep, clients, extra, self.cfg.duration)
    }

    /// [`point_summary`](Self::point_summary) for `seconds`.
    pub fn point_summary_for(
        &self,
        ep: &Endpoint,
        clients: u32,
        extra: &[String],
        seconds: u32,
    ) -> Result<pgbench::Summary, String> {
        let pgbench = self.pgbench()?;
        // Hundreds of clients need more than a one-second run (--quick) to
        // get past their backends' start-up at all.
        let duration = seconds.max((1 + clients / 32).min(3));
        let mut args = ep.conn_args_over(self.cfg.unix);
        args.extend([
            "-n".into(),
            "-T".into(),
            duration.to_string(),
            "-c".into(),
            clients.to_string(),
            "-j".into(),
            RunConfig::threads(clients).to_string(),
        ]);
        args.extend(extra.iter().cloned());
        args.push("postgres".into());
        let deadline = Duration::from_secs(u64::from(duration) + 90 + u64::from(clients) / 4);
        let recording = self.maybe_start_profile(ep, clients, duration);
        let target = self.target_of(ep);
        let cpu_before = target.and_then(Target::cpu_usec);
        let mut result = pgbench::run(pgbench, &args, deadline);
        if let Ok(s) = &mut result {
            let after = target.and_then(Target::cpu_usec);
            s.server_cpu_usec = cpu_before.and_then(|b| Some(after?.saturating_sub(b)));
        }
        if let Some(r) = recording {
            match r.finish() {
                Ok(files) => {
                    for f in files {
                        println!("profile: {}", f.display());
                    }
                }
                Err(e) => eprintln!("bench: --profile: {e}"),
            }
        }
        result
    }

    /// The target `ep` is a node of (by port).
    fn target_of(&self, ep: &Endpoint) -> Option<&Target> {
        self.targets.iter().find(|t| {
            [&t.primary, &t.standby]
                .iter()
                .any(|n| n.as_ref().is_ok_and(|n| n.port == ep.port))
        })
    }

    /// An untimed select-only run against `ep` (8 clients, 3 s: at the
    /// run's scale every accounts page is read many times over), so the
    /// node's buffer pool holds the tables before anything is timed.
    pub fn warm_up(&self, ep: &Endpoint) -> Result<(), String> {
        let pgbench = self.pgbench()?;
        let mut args = ep.conn_args_over(self.cfg.unix);
        args.extend(strings(&[
            "-n", "-S", "-M", "prepared", "-T", "3", "-c", "8", "-j", "2",
        ]));
        args.push("postgres".into());
        pgbench::run(pgbench, &args, Duration::from_secs(60)).map(|_| ())
    }

    /// After a workload on target `t`: if its server died, say so once,
    /// show the log, and mark it down for the rest of the run.
    pub fn check_alive(&mut self, t: usize, workload: &str) {
        let target = &mut self.targets[t];
        if target.primary.is_ok() && !target.is_alive() {
            eprintln!(
                "bench: {} server is gone after {workload}; log tail:\n{}",
                target.name,
                target.log_tail(30)
            );
            target.mark_down(&format!("{} crashed during {workload}", target.name));
        }
    }
}

/// A value cell from a pgbench summary, remarking failed transactions.
pub fn summary_cell(s: &pgbench::Summary) -> Cell {
    let remark = (s.failed > 0).then(|| format!("{} failed transactions", s.failed));
    Cell::Value(s.tps, remark)
}

/// The note every table with CPU series carries.
pub const CPU_NOTE: &str = "server CPU: the whole system (primary + standby) during the point, per pgbench transaction; pgbench CPU: pgbench's own (near threads × 1e6 / tps µs, its threads never waited: pgbench, not the server, was the limit)";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Runs `f` for every target whose primary is up; an error or panic of
/// `f` goes to `on_error(t, message, false)`, a target that is down to
/// `on_error(t, why, true)` (a skip); the server is checked afterwards.
pub fn for_each_target(
    ctx: &mut Ctx,
    workload: &str,
    mut f: impl FnMut(&mut Ctx, usize) -> Result<(), String>,
    mut on_error: impl FnMut(usize, String, bool),
) {
    for t in 0..ctx.targets.len() {
        if let Err(why) = ctx.targets[t].primary() {
            on_error(t, why, true);
            continue;
        }
        let r = guarded(|| f(ctx, t));
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) | Err(e) => on_error(t, e, false),
        }
        ctx.check_alive(t, workload);
    }
}

/// Marks every empty cell of `series` in `table` as failed / skipped with `why`.
pub fn fill(table: &mut Table, series: &[usize], why: &str, skipped: bool) {
    for row in &mut table.rows {
        for &s in series {
            if let Some(c) = row.cells.get_mut(s) {
                if matches!(c, Cell::Empty) {
                    *c = if skipped {
                        Cell::Skipped(why.to_string())
                    } else {
                        Cell::Failed(why.to_string())
                    };
                }
            }
        }
    }
}

/// Pre-creates rows so failures can fill them.
fn rows(table: &mut Table, labels: impl IntoIterator<Item = (String, f64)>) {
    for (l, x) in labels {
        table.row(&l, x);
    }
}

/// a. select-only `-M prepared` over the client counts, primary and standby.
pub fn select_only(ctx: &mut Ctx) -> Vec<Table> {
    // `--floor`: the null server runs every point too, after the four
    // nodes of its round (series 4).
    let null = if ctx.cfg.floor {
        match NullServer::start(&ctx.cfg.work_dir.join("null")) {
            Ok(n) => Some(n),
            Err(e) => {
                eprintln!("bench: --floor: {e}");
                None
            }
        }
    } else {
        None
    };
    let mut series = vec![
        "hotpair primary",
        "hotpair standby",
        "PostgreSQL primary",
        "PostgreSQL standby",
    ];
    series.extend(null.as_ref().map(|_| "null server"));
    let mut table = Table::new(
        "select_only",
        "select-only -M prepared (pgbench -S)",
        "tps",
        "clients",
        &series,
        Chart::LineLog2,
    )
    .ratio(0, 2, "hp/PG primary")
    .ratio(1, 3, "hp/PG standby")
    .ratio(1, 0, "hp standby/primary")
    .ratio(3, 2, "PG standby/primary");
    if null.is_some() {
        table = table.ratio(4, 2, "null/PG primary");
    }
    let cpu_series: Vec<usize> = (0..series.len()).collect();
    let mut table = table.with_cpu(&cpu_series);
    let clients = ctx.cfg.select_clients.clone();
    rows(
        &mut table,
        clients.iter().map(|c| (c.to_string(), f64::from(*c))),
    );
    // Both systems are loaded first, then the points interleave — at each
    // client count hotpair's primary, PostgreSQL's primary, hotpair's
    // standby, PostgreSQL's standby — so a slow spell of the shared VM
    // (seen lasting minutes) hits both systems' points at that count
    // rather than one system's whole series.
    let mut ready = vec![false; ctx.targets.len()];
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "select-only",
        |ctx, t| {
            ctx.ensure_initialized(t)?;
            ready[t] = true;
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut table, &[t * 2, t * 2 + 1], &e, skip);
    }
    // Every node starts its first timed point with the tables in its own
    // buffer pool: a load leaves the primary's pages in the OS cache (its
    // bulk-write ring) while a standby's replay put them in shared buffers,
    // so without this the first points measured the primary's warm-up.
    for t in (0..ctx.targets.len()).filter(|&t| ready[t]) {
        for ep in [ctx.targets[t].primary(), ctx.targets[t].standby()]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
        {
            if let Err(e) = ctx.warm_up(&ep) {
                eprintln!("bench: warm-up of {}:{} failed: {e}", ep.host, ep.port);
            }
        }
    }
    // With `--rounds N` the whole interleaved sequence at a count runs N
    // times (primary, standby, primary, standby, …) and the cell is the
    // median: one slow spell of the VM then moves one round, not the
    // verdict. Every round's value is printed as it comes.
    let rounds = ctx.cfg.select_rounds.max(1);
    let series_names = table.series.clone();
    for &c in &clients {
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); series_names.len()];
        let mut cpu_values: Vec<Vec<(Option<f64>, Option<f64>)>> =
            vec![Vec::new(); series_names.len()];
        let mut failures: Vec<Option<Cell>> = vec![None; series_names.len()];
        for round in 1..=rounds {
            for n in 0..2 {
                for t in (0..ctx.targets.len()).filter(|&t| ready[t]) {
                    let series = t * 2 + n;
                    let node = if n == 0 {
                        ctx.targets[t].primary().cloned()
                    } else {
                        ctx.targets[t].standby().cloned()
                    };
                    let snaps_before = snapshot_counters(&ctx.targets[t], node.as_ref().ok());
                    // The node's own CPU beside the system's: the idle
                    // peer's share shows what it does meanwhile.
                    let own = |c: &Ctx| c.targets[t].node_cpu_usec(n == 1);
                    let own_before = own(ctx);
                    let (cell, summary) = match &node {
                        Ok(ep) => {
                            match ctx.point_summary(ep, c, &strings(&["-S", "-M", "prepared"])) {
                                Ok(s) => (summary_cell(&s), Some(s)),
                                Err(e) => (Cell::Failed(e), None),
                            }
                        }
                        Err(why) => (Cell::Skipped(why.clone()), None),
                    };
                    let own_used = own_before.and_then(|b| Some(own(ctx)?.saturating_sub(b)));
                    let snaps_after = snapshot_counters(&ctx.targets[t], node.as_ref().ok());
                    if let Some(s) = &summary {
                        cpu_values[series].push((s.server_us_per_txn(), s.client_us_per_txn()));
                    }
                    if rounds > 1 {
                        let snap_text = match (snaps_before, snaps_after) {
                            (Some((c0, r0)), Some((c1, r1))) => format!(
                                "; snapshots computed {} reused {}",
                                c1.saturating_sub(c0),
                                r1.saturating_sub(r0)
                            ),
                            _ => String::new(),
                        };
                        print_round(
                            c,
                            (round, rounds),
                            series_names.get(series).map(String::as_str).unwrap_or("?"),
                            &cell,
                            summary.as_ref(),
                            own_used,
                            &snap_text,
                        );
                    }
                    match cell.value() {
                        Some(v) => values[series].push(v),
                        None => failures[series] = Some(cell),
                    }
                }
            }
            if let Some(null) = &null {
                let series = 4;
                let before = null.cpu_usec();
                let (cell, summary) = match ctx.point_summary(
                    null.endpoint(),
                    c,
                    &strings(&["-S", "-M", "prepared"]),
                ) {
                    Ok(mut s) => {
                        s.server_cpu_usec =
                            before.and_then(|b| Some(null.cpu_usec()?.saturating_sub(b)));
                        (summary_cell(&s), Some(s))
                    }
                    Err(e) => (Cell::Failed(e), None),
                };
                if let Some(s) = &summary {
                    cpu_values[series].push((s.server_us_per_txn(), s.client_us_per_txn()));
                }
                if rounds > 1 {
                    let own = summary.as_ref().and_then(|s| s.server_cpu_usec);
                    print_round(
                        c,
                        (round, rounds),
                        "null server",
                        &cell,
                        summary.as_ref(),
                        own,
                        "",
                    );
                }
                match cell.value() {
                    Some(v) => values[series].push(v),
                    None => failures[series] = Some(cell),
                }
            }
        }
        for (series, vals) in values.iter().enumerate() {
            let cell = match (median(vals), failures[series].take()) {
                (Some(m), _) if rounds > 1 => {
                    Cell::Value(m, Some(format!("median of {} rounds", vals.len())))
                }
                (Some(m), _) => Cell::Value(m, None),
                (None, Some(f)) => f,
                (None, None) => continue,
            };
            table.set(&c.to_string(), f64::from(c), series, cell);
            // CPU cells: the median over the rounds, like the tps.
            let med = |pick: usize| {
                let v: Vec<f64> = cpu_values[series]
                    .iter()
                    .filter_map(|p| if pick == 0 { p.0 } else { p.1 })
                    .collect();
                median(&v)
            };
            if !cpu_values[series].is_empty() {
                let (server, client) = (med(0), med(1));
                table.set_cpu_values(&c.to_string(), f64::from(c), series, server, client);
            }
        }
    }
    for t in (0..ctx.targets.len()).filter(|&t| ready[t]) {
        ctx.check_alive(t, "select-only");
    }
    table.note(format!(
        "scale {}, -T {} s per point, -j min(clients, 2), {}{}",
        ctx.cfg.scale,
        ctx.cfg.duration,
        if ctx.cfg.unix {
            "through each server's Unix socket"
        } else {
            "over TCP to 127.0.0.1"
        },
        if rounds > 1 {
            format!("; median of {rounds} interleaved rounds per point")
        } else {
            String::new()
        }
    ));
    table.note(CPU_NOTE);
    if null.is_some() {
        table.note(
            "null server: a child of the bench answering pgbench with canned results, \
             one thread per connection, blocking reads (bench::nullserver): its CPU per \
             transaction is what the round trip alone costs a server on this host",
        );
    }
    vec![table]
}

/// One round's line of a select-only point: tps, the CPU per transaction
/// of the whole system, of this node and of pgbench, and `extra`.
fn print_round(
    clients: u32,
    (round, rounds): (u32, u32),
    series: &str,
    cell: &Cell,
    summary: Option<&pgbench::Summary>,
    own_usec: Option<u64>,
    extra: &str,
) {
    let shown = cell
        .value()
        .map(|v| format!("{v:.0} tps"))
        .unwrap_or_else(|| "no value".into());
    let cpu_text = match summary {
        Some(s) if s.processed > 0 => format!(
            "; CPU us/tx: system {}, this node {}, pgbench {}",
            opt_num(s.server_us_per_txn()),
            opt_num(own_usec.map(|u| u as f64 / s.processed as f64)),
            opt_num(s.client_us_per_txn()),
        ),
        _ => String::new(),
    };
    println!("select c={clients} round {round}/{rounds}: {series}: {shown}{cpu_text}{extra}");
}

/// `12.3` or `-`.
fn opt_num(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.1}"))
}

/// hotpair's `(snapshots_computed, snapshots_reused)` on `ep` (None for
/// PostgreSQL, which has no such view): a standby should reuse its cached
/// snapshot as the primary does while nothing commits.
pub fn snapshot_counters(target: &Target, ep: Option<&Endpoint>) -> Option<(u64, u64)> {
    if target.kind != Kind::Hotpair {
        return None;
    }
    let text = ep?
        .sql("SELECT snapshots_computed, snapshots_reused FROM hotpair_stat_snapshots")
        .ok()?;
    let (c, r) = text.trim().split_once('|')?;
    Some((c.parse().ok()?, r.parse().ok()?))
}

/// One benchmark point measured `rounds` times, interleaved over hotpair
/// and PostgreSQL (targets 0 and 1, those `ready`), so that a slow spell of
/// the VM hits both: `run(ctx, t)` measures once (choosing its endpoint; a
/// `Cell` error is a skip or failure). Row `row` of `table` then gets, per
/// target, the median of `value` over the rounds that succeeded and the
/// median CPU per transaction; a target with no success shows its last
/// failure. Every round is printed when there are several. Returns each
/// target's summaries (for derived series).
#[allow(clippy::too_many_arguments)]
pub fn interleaved_point(
    ctx: &Ctx,
    table: &mut Table,
    row: &str,
    x: f64,
    ready: &[bool],
    rounds: u32,
    value: impl Fn(&pgbench::Summary) -> f64,
    mut run: impl FnMut(&Ctx, usize) -> Result<pgbench::Summary, Cell>,
) -> Vec<Vec<pgbench::Summary>> {
    let n = ctx.targets.len().min(2);
    let mut sums: Vec<Vec<pgbench::Summary>> = vec![Vec::new(); n];
    let mut failed: Vec<Option<Cell>> = vec![None; n];
    for round in 1..=rounds.max(1) {
        for t in (0..n).filter(|&t| ready.get(t).copied().unwrap_or(false)) {
            match run(ctx, t) {
                Ok(sum) => {
                    if sum.failed > 0 {
                        eprintln!("bench: {row}: {} failed transactions", sum.failed);
                    }
                    if rounds > 1 {
                        println!(
                            "{} {row} round {round}/{rounds}: {}: {:.0}; server CPU {} µs/txn",
                            table.key,
                            table.series.get(t).map(String::as_str).unwrap_or("?"),
                            value(&sum),
                            opt_num(sum.server_us_per_txn())
                        );
                    }
                    sums[t].push(sum);
                }
                Err(cell) => failed[t] = Some(cell),
            }
        }
    }
    for t in 0..n {
        let vals: Vec<f64> = sums[t].iter().map(&value).collect();
        match (median(&vals), failed[t].take()) {
            (Some(m), _) => {
                let remark = (rounds > 1).then(|| format!("median of {} rounds", vals.len()));
                table.set(row, x, t, Cell::Value(m, remark));
                let med = |f: fn(&pgbench::Summary) -> Option<f64>| {
                    median(&sums[t].iter().filter_map(f).collect::<Vec<_>>())
                };
                table.set_cpu_values(
                    row,
                    x,
                    t,
                    med(pgbench::Summary::server_us_per_txn),
                    med(pgbench::Summary::client_us_per_txn),
                );
            }
            (None, Some(cell)) => table.set(row, x, t, cell),
            (None, None) => {}
        }
    }
    sums
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// b. idle connections (truly idle, then "mostly idle") beside 1 and 8
/// active select-only clients.
pub fn idle(ctx: &mut Ctx) -> Vec<Table> {
    let active = [1u32, 8];
    let seconds = ctx.cfg.idle_duration;
    let mut tables = Vec::new();
    for mostly in [false, true] {
        let counts = if mostly {
            ctx.cfg.mostly_idle_counts.clone()
        } else {
            ctx.cfg.idle_counts.clone()
        };
        let (key, title) = if mostly {
            (
                "mostly_idle",
                "active select-only tps beside I mostly-idle connections (sleep 100ms; SELECT 1)",
            )
        } else {
            ("idle", "active select-only tps beside I idle connections")
        };
        let mut table = Table::new(
            key,
            title,
            "tps",
            "idle / active",
            &[
                "hotpair",
                "PostgreSQL",
                "hotpair vs I=0",
                "PostgreSQL vs I=0",
                "hotpair mostly-idle served",
                "PostgreSQL mostly-idle served",
            ][..if mostly { 6 } else { 4 }],
            Chart::Bars,
        )
        .series_unit(2, "x")
        .series_unit(3, "x")
        .series_unit(4, "stmt/s")
        .series_unit(5, "stmt/s")
        .ratio(0, 1, "hp/PG")
        .with_cpu(&[0, 1]);
        let label = |i: u32, a: u32| format!("I={i} active={a}");
        for &a in &active {
            for &i in &counts {
                table.row(&label(i, a), f64::from(i));
            }
        }
        let mut errors = Vec::new();
        for_each_target(
            ctx,
            key,
            |ctx, t| {
                ctx.ensure_initialized(t)?;
                let ep = ctx.targets[t].primary()?.clone();
                let mut pool = IdlePool::new();
                for &i in &counts {
                    if let Err(e) = pool.grow_to(&ep, i, ctx.cfg.min_mem_available_mib) {
                        for &a in &active {
                            table.set(&label(i, a), f64::from(i), t, Cell::Failed(e.clone()));
                        }
                        // Larger I cannot work either.
                        fill(
                            &mut table,
                            &[t],
                            &format!("not run: {}", first_line(&e)),
                            true,
                        );
                        break;
                    }
                    if mostly {
                        pool.start_mostly_idle();
                    }
                    for &a in &active {
                        let (before, started) = (pool.statements_done(), Instant::now());
                        let r = ctx.point_summary_for(
                            &ep,
                            a,
                            &strings(&["-S", "-M", "prepared"]),
                            seconds,
                        );
                        let served = (pool.statements_done() - before) as f64
                            / started.elapsed().as_secs_f64().max(1e-3);
                        table.set_point(&label(i, a), f64::from(i), t, &r);
                        if mostly {
                            table.set(&label(i, a), f64::from(i), 4 + t, Cell::Value(served, None));
                        }
                    }
                    if mostly {
                        pool.stop_mostly_idle();
                    }
                }
                pool.close();
                Ok(())
            },
            |t, e, skip| errors.push((t, e, skip)),
        );
        for (t, e, skip) in errors {
            fill(&mut table, &[t], &e, skip);
        }
        // Ratios to I = 0, per system and active count.
        for t in 0..2 {
            for &a in &active {
                let base = table
                    .rows
                    .iter()
                    .find(|r| r.label == label(0, a))
                    .and_then(|r| r.cells[t].value());
                for &i in &counts {
                    let r = table.row(&label(i, a), f64::from(i));
                    let v = table.rows[r].cells[t].value();
                    table.rows[r].cells[2 + t] = match (v, base) {
                        (Some(v), Some(b)) if b > 0.0 => Cell::Value(v / b, None),
                        _ => Cell::Empty,
                    };
                }
            }
        }
        table.note(format!(
            "idle connections held open by the bench (tokio-postgres); active: pgbench -S -M prepared -T {} s",
            seconds
        ));
        if mostly {
            table.note(
                "mostly-idle served: SELECT 1s the mostly-idle connections completed during the point \
                 (closed loops: each sleeps 100 ms after its answer); the server CPU per \
                 transaction includes serving them",
            );
        }
        table.note(CPU_NOTE);
        tables.push(table);
    }
    tables
}

/// c. snapshot-heavy: `SELECT 1` and `SELECT txid_current()`, -M prepared,
/// 8 clients.
pub fn snapshot(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "snapshot",
        "snapshot-heavy scripts, -M prepared, 8 clients",
        "tps",
        "script",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .with_cpu(&[0, 1]);
    let scripts = [
        ("SELECT 1", "select1.sql"),
        ("SELECT txid_current()", "txid_current.sql"),
    ];
    rows(
        &mut table,
        scripts.iter().map(|(s, _)| (s.to_string(), 0.0)),
    );
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "snapshot",
        |ctx, t| {
            let ep = ctx.targets[t].primary()?.clone();
            for (sql, file) in scripts {
                let path = ctx.script(file, &format!("{sql};\n"))?;
                let r = ctx.point_summary(
                    &ep,
                    8,
                    &[
                        "-M".into(),
                        "prepared".into(),
                        "-f".into(),
                        path.display().to_string(),
                    ],
                );
                table.set_point(sql, 0.0, t, &r);
            }
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut table, &[t], &e, skip);
    }
    table.note(CPU_NOTE);
    vec![table]
}

/// d. tpcb-like at 1, 8, 32 clients; the 2PC script at 8 and 32; 90 %
/// select-only + 10 % tpcb-like at 64.
pub fn tpcb(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "tpcb",
        "read-write: tpcb-like, -M simple select-only and tpcb-like, two-phase commit, 90/10 mix (fsync on)",
        "tps",
        "workload",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .with_cpu(&[0, 1]);
    let mut points: Vec<(String, u32, Vec<String>)> = Vec::new();
    for c in [1, 8, 32] {
        points.push((
            format!("tpcb-like c={c}"),
            c,
            strings(&["-b", "tpcb-like", "-M", "prepared"]),
        ));
    }
    // Simple mode: every statement a query text with its literals inline,
    // as pgbench's default and ORMs that inline values send it.
    for c in [1, 8, 32] {
        points.push((
            format!("select-only -M simple c={c}"),
            c,
            strings(&["-S", "-M", "simple"]),
        ));
    }
    for c in [1, 8, 32] {
        points.push((
            format!("tpcb-like -M simple c={c}"),
            c,
            strings(&["-b", "tpcb-like", "-M", "simple"]),
        ));
    }
    for c in [8, 32] {
        points.push((
            format!("2PC c={c}"),
            c,
            strings(&["-M", "simple", "-f", "@2PC"]),
        ));
    }
    points.push((
        "90% select + 10% tpcb c=64".into(),
        64,
        strings(&["-b", "select-only@9", "-b", "tpcb-like@1", "-M", "prepared"]),
    ));
    rows(
        &mut table,
        points.iter().map(|(l, c, _)| (l.clone(), f64::from(*c))),
    );
    let mut errors = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for_each_target(
        ctx,
        "tpcb",
        |ctx, t| {
            ctx.ensure_initialized(t)?;
            let ep = ctx.targets[t].primary()?.clone();
            let script = ctx.script("2pc.sql", SCRIPT_2PC)?;
            for (label, c, args) in &points {
                let mut args = args.clone();
                for a in args.iter_mut() {
                    if a == "@2PC" {
                        *a = script.display().to_string();
                    }
                }
                if args.iter().any(|a| a == "-f") {
                    args.extend(["-s".into(), ctx.cfg.scale.to_string()]);
                }
                let r = ctx.point_summary(&ep, *c, &args);
                table.set_point(label, f64::from(*c), t, &r);
            }
            // What the run left behind: pruning keeps the hot tables small.
            if let Ok(sizes) = ep.sql(TABLE_PAGES) {
                notes.push(format!(
                    "{}: pages of pgbench_branches|tellers|accounts after the run: {sizes}",
                    ctx.targets[t].name
                ));
            }
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut table, &[t], &e, skip);
    }
    table.note(format!(
        "scale {}, -T {} s per point",
        ctx.cfg.scale, ctx.cfg.duration
    ));
    for n in notes {
        table.note(n);
    }
    table.note(CPU_NOTE);
    vec![table]
}

/// The sizes in pages of pgbench's updated tables, `b|t|a`.
const TABLE_PAGES: &str = "SELECT pg_relation_size('pgbench_branches') / 8192, \
     pg_relation_size('pgbench_tellers') / 8192, pg_relation_size('pgbench_accounts') / 8192";

/// e. connection overhead: `-C` (a new connection per transaction) with
/// `SELECT 1` at 8 clients.
pub fn connect(ctx: &mut Ctx) -> Vec<Table> {
    let mut table = Table::new(
        "connect",
        "connection overhead: pgbench -C, SELECT 1, 8 clients",
        "tps",
        "workload",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .with_cpu(&[0, 1]);
    let label = "-C SELECT 1 c=8";
    let scram = "-C SELECT 1 c=8, SCRAM-SHA-256";
    let tls = "-C SELECT 1 c=8, TLS";
    let scram_tls = "-C SELECT 1 c=8, SCRAM-SHA-256 over TLS";
    table.row(label, 8.0);
    table.row(scram, 8.0);
    let with_tls = ctx.cfg.tls.is_some();
    if with_tls {
        table.row(tls, 8.0);
        table.row(scram_tls, 8.0);
    }
    // Select-only over TLS beside the same in plain TCP.
    let mut select = Table::new(
        "tls_select",
        "select-only over TLS: pgbench -S -M prepared, scale as the select workload",
        "tps",
        "clients",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG")
    .with_cpu(&[0, 1]);
    const SELECT_CLIENTS: [u32; 2] = [2, 32];
    for c in SELECT_CLIENTS {
        select.row(&format!("{c} plain"), c as f64);
        if with_tls {
            select.row(&format!("{c} TLS"), c as f64);
        }
    }
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "connect",
        |ctx, t| {
            let ep = ctx.targets[t].primary()?.clone();
            let path = ctx.script("select1.sql", "SELECT 1;\n")?;
            let args = ["-C".into(), "-f".into(), path.display().to_string()];
            let r = ctx.point_summary(&ep, 8, &args);
            table.set_point(label, 8.0, t, &r);
            // The same through a password: both systems' pg_hba.conf ask
            // SCRAM_ROLE for scram-sha-256 (Target setup), and the
            // verifier is made with each system's default iterations.
            ep.sql(&format!(
                "DROP ROLE IF EXISTS {SCRAM_ROLE}; SET password_encryption = 'scram-sha-256'; CREATE ROLE {SCRAM_ROLE} LOGIN PASSWORD '{SCRAM_PASSWORD}'"
            ))?;
            let mut with_user = args.to_vec();
            with_user.extend(["-U".to_string(), SCRAM_ROLE.to_string()]);
            std::env::set_var("PGPASSWORD", SCRAM_PASSWORD);
            let r = ctx.point_summary(&ep, 8, &with_user);
            table.set_point(scram, 8.0, t, &r);
            if with_tls {
                let r = over_tls(|| ctx.point_summary(&ep, 8, &args));
                table.set_point(tls, 8.0, t, &r);
                let r = over_tls(|| ctx.point_summary(&ep, 8, &with_user));
                table.set_point(scram_tls, 8.0, t, &r);
            }
            std::env::remove_var("PGPASSWORD");
            ctx.ensure_initialized(t)?;
            let sel = ["-S".to_string(), "-M".into(), "prepared".into()];
            for c in SELECT_CLIENTS {
                let r = ctx.point_summary(&ep, c, &sel);
                select.set_point(&format!("{c} plain"), c as f64, t, &r);
                if with_tls {
                    let r = over_tls(|| ctx.point_summary(&ep, c, &sel));
                    select.set_point(&format!("{c} TLS"), c as f64, t, &r);
                }
            }
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut table, &[t], &e, skip);
        fill(&mut select, &[t], &e, skip);
    }
    table.note("tps including connection time (a connection per transaction)");
    if with_tls {
        table.note(TLS_NOTE);
        select.note(TLS_NOTE);
    }
    select.note(CPU_NOTE);
    table.note(format!(
        "SCRAM-SHA-256: role {SCRAM_ROLE}, its verifier made by each system at its default scram_iterations (4096), pg_hba.conf line `host all {SCRAM_ROLE} 127.0.0.0/8 scram-sha-256` first"
    ));
    table.note(CPU_NOTE);
    vec![table, select]
}

const TLS_NOTE: &str = "TLS: both servers `ssl = on` with the same self-signed ECDSA P-256 certificate (rcgen); pgbench with PGSSLMODE=require (TLS 1.3), PGSSLMODE=disable otherwise";

/// Runs `f` with pgbench connecting over TLS (`PGSSLMODE=require`).
fn over_tls<T>(f: impl FnOnce() -> T) -> T {
    let old = std::env::var_os("PGSSLMODE");
    std::env::set_var("PGSSLMODE", "require");
    let r = f();
    match old {
        Some(v) => std::env::set_var("PGSSLMODE", v),
        None => std::env::remove_var("PGSSLMODE"),
    }
    r
}

/// The role the `connect` workload logs in as with a password; both
/// systems' pg_hba.conf ask it for SCRAM-SHA-256.
pub const SCRAM_ROLE: &str = "bench_scram";
const SCRAM_PASSWORD: &str = "bench-password";

/// f. server memory with 0 and N idle connections, and per connection.
pub fn memory(ctx: &mut Ctx) -> Vec<Table> {
    let n = ctx.cfg.memory_idle;
    let mut total = Table::new(
        "memory_total",
        "server memory (hotpair: RSS of its one process; PostgreSQL: private memory of all its processes)",
        "MiB",
        "connections",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let mut per = Table::new(
        "memory_per_connection",
        "memory per idle connection",
        "KiB",
        "",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let l0 = "0 idle".to_string();
    let ln = format!("{n} idle");
    let lper = format!("per connection ({n} idle)");
    total.row(&l0, 0.0);
    total.row(&ln, f64::from(n));
    per.row(&lper, f64::from(n));
    let mut errors = Vec::new();
    let mut notes = Vec::new();
    for_each_target(
        ctx,
        "memory",
        |ctx, t| {
            let target = &ctx.targets[t];
            let ep = target.primary()?.clone();
            let m0 = target.memory()?;
            total.set(&l0, 0.0, t, Cell::Value(m0.kib as f64 / 1024.0, None));
            let mut pool = IdlePool::new();
            let grown = pool.grow_to(&ep, n, ctx.cfg.min_mem_available_mib);
            let open = pool.len() as u32;
            let m1 = target.memory();
            pool.close();
            let m1 = m1?;
            let remark = grown.as_ref().err().map(|e| first_line(e).to_string());
            if open == 0 {
                return Err(grown.err().unwrap_or_else(|| "no connection opened".into()));
            }
            let label_n = if open == n {
                ln.clone()
            } else {
                format!("{open} idle")
            };
            total.set(
                &label_n,
                f64::from(open),
                t,
                Cell::Value(m1.kib as f64 / 1024.0, remark.clone()),
            );
            let per_kib = (m1.kib as f64 - m0.kib as f64) / f64::from(open);
            per.set(&lper, f64::from(n), t, Cell::Value(per_kib, remark));
            notes.push(format!(
                "{}: {} → {} processes counted; PSS {} → {} MiB",
                target.name,
                m0.processes,
                m1.processes,
                m0.pss / 1024,
                m1.pss / 1024
            ));
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut total, &[t], &e, skip);
        fill(&mut per, &[t], &e, skip);
    }
    for n in notes {
        total.note(n);
    }
    vec![total, per]
}

/// g. commit throughput: single-row INSERT transactions (fsync on) and
/// fsyncs per commit where the server counts them.
pub fn commit(ctx: &mut Ctx) -> Vec<Table> {
    let clients = ctx.cfg.commit_clients.clone();
    let mut tps = Table::new(
        "commit",
        "commit throughput: single-row INSERT transactions, fsync on",
        "tps",
        "clients",
        &["hotpair", "PostgreSQL"],
        Chart::LineLog2,
    )
    .ratio(0, 1, "hp/PG")
    .with_cpu(&[0, 1]);
    let mut fsyncs = Table::new(
        "commit_fsyncs",
        "WAL fsyncs per commit (group commit)",
        "fsyncs/commit",
        "clients",
        &["hotpair", "PostgreSQL"],
        Chart::LineLog2,
    );
    rows(
        &mut tps,
        clients.iter().map(|c| (c.to_string(), f64::from(*c))),
    );
    rows(
        &mut fsyncs,
        clients.iter().map(|c| (c.to_string(), f64::from(*c))),
    );
    let mut errors = Vec::new();
    for_each_target(
        ctx,
        "commit",
        |ctx, t| {
            let ep = ctx.targets[t].primary()?.clone();
            ep.sql("DROP TABLE IF EXISTS bench_commit")?;
            ep.sql("CREATE TABLE bench_commit (c int NOT NULL, v int NOT NULL)")?;
            let path = ctx.script(
                "commit.sql",
                "INSERT INTO bench_commit VALUES (:client_id, 1);\n",
            )?;
            for &c in &clients {
                let before = wal_syncs(&ep);
                let s = ctx.point_summary(
                    &ep,
                    c,
                    &[
                        "-M".into(),
                        "prepared".into(),
                        "-f".into(),
                        path.display().to_string(),
                    ],
                );
                let label = c.to_string();
                match s {
                    Ok(s) => {
                        tps.set(&label, f64::from(c), t, summary_cell(&s));
                        tps.set_cpu(&label, f64::from(c), t, &s);
                        let cell = match (before, settled_wal_syncs(&ep)) {
                            (Ok(b), Ok(a)) if s.processed > 0 => {
                                Cell::Value(a.saturating_sub(b) as f64 / s.processed as f64, None)
                            }
                            (Err(e), _) | (_, Err(e)) => Cell::Skipped(e),
                            _ => Cell::Skipped("no transactions".into()),
                        };
                        fsyncs.set(&label, f64::from(c), t, cell);
                    }
                    Err(e) => {
                        tps.set(&label, f64::from(c), t, Cell::Failed(e.clone()));
                        fsyncs.set(&label, f64::from(c), t, Cell::Skipped("run failed".into()));
                    }
                }
            }
            Ok(())
        },
        |t, e, skip| errors.push((t, e, skip)),
    );
    for (t, e, skip) in errors {
        fill(&mut tps, &[t], &e, skip);
        fill(&mut fsyncs, &[t], &e, skip);
    }
    fsyncs.note("PostgreSQL: pg_stat_wal.wal_sync; hotpair: the same view when it has one");
    tps.note(CPU_NOTE);
    // Durability's other number: how fast a crash's WAL is replayed.
    let mut tables = vec![tps, fsyncs];
    tables.extend(super::redo::redo_speed(ctx));
    tables
}

/// `pg_stat_wal.wal_sync`, or why it cannot be read.
fn wal_syncs(ep: &Endpoint) -> Result<u64, String> {
    let v = ep
        .sql("SELECT wal_sync FROM pg_stat_wal")
        .map_err(|e| format!("no WAL fsync counter ({})", first_line(&e)))?;
    v.trim()
        .parse()
        .map_err(|_| format!("unexpected wal_sync value {v:?}"))
}

/// `wal_sync` once exiting backends have flushed their statistics: read
/// until two reads 200 ms apart agree (at most 3 s).
fn settled_wal_syncs(ep: &Endpoint) -> Result<u64, String> {
    let mut last = wal_syncs(ep)?;
    for _ in 0..15 {
        std::thread::sleep(Duration::from_millis(200));
        let now = wal_syncs(ep)?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    Ok(last)
}

/// Which target index holds `kind`.
pub fn index_of(ctx: &Ctx, kind: Kind) -> Option<usize> {
    ctx.targets.iter().position(|t| t.kind == kind)
}
