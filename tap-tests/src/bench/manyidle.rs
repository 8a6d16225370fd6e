//! Many idle sessions on one node: how fast they are accepted, what they
//! cost in memory, and whether 8 active clients keep their throughput
//! beside them — on a hotpair primary, on its standby, and on PostgreSQL;
//! then where PostgreSQL stops starting as `max_connections` grows.
//!
//! ```text
//!   own hotpair pair (max_connections = N + 100, cgroup idle-hotpair)
//!   for node in primary, standby:
//!       warm-up; pgbench -S -M prepared -c 8            → tps without
//!       RSS/PSS; open N sessions (RawIdleSet, K source
//!       addresses, timed)                               → sessions/s
//!       RSS/PSS                                         → KiB per session
//!       pgbench -S -M prepared -c 8                     → tps with, ratio
//!       close
//!   PostgreSQL primary (max_connections = N + 100): the same, stopped early
//!       by the MemAvailable floor (a process per session)
//!   PostgreSQL max_connections 10k, 20k, 50k, 100k, 200k, 262,144:
//!       shared_memory_size, start / the error
//! ```
//!
//! Open files: every session is a socket in the server and one on the
//! client side, and both inherit this process's RLIMIT_NOFILE (raised to
//! its hard limit at start). A hotpair node holds more sessions than that
//! limit by parking idle ones' sockets outside its descriptor table
//! (`server::park`); PostgreSQL's sessions are sockets of separate
//! processes. The client side spreads a count beyond its own limit over
//! child processes of this binary (`--hold-idle`, [`HeldSessions`]), each
//! under the limit with source addresses of its own. The default N is the
//! limit minus [`FD_RESERVE`]; `--many-idle N` asks for another count (the
//! issue's 100,000). A count the machine cannot hold stops where it
//! fails, and the table says why.
//!
//! The pair is the workload's own, not the run's: the run's servers keep
//! the `max_connections` every other workload is compared at, and
//! PostgreSQL would need gigabytes of shared memory for this one's.

use std::time::Duration;

use super::idle::{OpenReport, RawIdleSet};
use super::pg;
use super::report::{Cell, Chart, Table};
use super::sysinfo::{self, ServerMem};
use super::target::{first_line, guarded, Endpoint, Kind, Target};
use super::workloads::{index_of, Ctx, CPU_NOTE};

/// File descriptors kept free below the open-file limit for everything
/// that is not an idle session (data and WAL files, logs, the listener,
/// pgbench's 8 connections, the walsender, the runtime's own).
pub const FD_RESERVE: u64 = 600;

/// Idle sessions per loopback source address: below the ephemeral port
/// range's ~28,000 ports with room for the rest of the run.
const SESSIONS_PER_SOURCE: usize = 5_000;

/// Connects in flight per source address while opening.
const PARALLEL_PER_SOURCE: usize = 32;

/// The issue's memory bound for 100,000 idle sessions.
const BOUND_100K_MIB: f64 = 1536.0;

/// The `max_connections` values PostgreSQL is started with; the last is
/// one above PostgreSQL's compiled-in cap (MAX_BACKENDS, 2^18 - 1).
pub const PG_MAX_CONNECTIONS: [u32; 6] = [10_000, 20_000, 50_000, 100_000, 200_000, 262_144];

/// Series of the main table.
const SERIES: [(&str, &str); 10] = [
    ("idle sessions", "count"),
    ("open rate", "sessions/s"),
    ("memory before", "MiB"),
    ("memory with sessions", "MiB"),
    ("PSS with sessions", "MiB"),
    ("per session", "KiB"),
    ("projected at 100,000", "MiB"),
    ("8 clients, no idle", "tps"),
    ("8 clients, with idle", "tps"),
    ("with / without", "x"),
];

/// The default session count: the open-file limit of this process (the
/// servers inherit it) minus the reserve.
pub fn default_count() -> u32 {
    let limit = sysinfo::own_nofile_soft().unwrap_or(1024);
    limit
        .saturating_sub(FD_RESERVE)
        .clamp(100, u64::from(u32::MAX)) as u32
}

/// The workload (`manyidle`).
pub fn many_idle(ctx: &mut Ctx) -> Vec<Table> {
    let n = match ctx.cfg.many_idle {
        0 if ctx.cfg.quick => default_count().min(2_000),
        0 => default_count(),
        n => n,
    };
    let mut table = Table::new(
        "many_idle",
        &format!("{n} idle sessions on one node: open rate, memory, 8 active clients beside them"),
        "tps",
        "node",
        &SERIES.map(|(s, _)| s),
        Chart::Bars,
    )
    .with_cpu(&[7, 8]);
    for (i, (_, unit)) in SERIES.iter().enumerate() {
        table = table.series_unit(i, unit);
    }
    let mut settings = ctx.cfg.settings();
    settings.max_connections = n + 100;
    settings.standby = ctx.cfg.standby;

    // hotpair: its own pair, primary then standby.
    let hp_rows = ["hotpair primary", "hotpair standby"];
    match index_of(ctx, Kind::Hotpair).map(|t| ctx.targets[t].primary().err()) {
        Some(None) => {
            eprintln!(
                "bench: manyidle: starting a hotpair pair with max_connections = {}",
                n + 100
            );
            let target = Target::hotpair_in(&settings, "", "idle-hotpair");
            run_system(ctx, &mut table, target, &hp_rows, n);
        }
        Some(Some(why)) => skip_rows(&mut table, &hp_rows, &why),
        None => skip_rows(&mut table, &hp_rows, "hotpair not in this run"),
    }

    // PostgreSQL: a primary of its own, then the start-up probe.
    let pg_rows = ["PostgreSQL primary"];
    let mut probe = Table::new(
        "pg_max_connections",
        "PostgreSQL 15 start-up as max_connections grows (shared_buffers as matched)",
        "MB",
        "max_connections",
        &["shared_memory_size", "start-up time"],
        Chart::Bars,
    )
    .series_unit(1, "s");
    let pg_up = index_of(ctx, Kind::Postgres).map(|t| ctx.targets[t].primary().err());
    match (pg_up, pg::find_bindir()) {
        (Some(None), Some(bindir)) => {
            let mut pg_settings = settings.clone();
            pg_settings.standby = false;
            let dir = ctx.cfg.work_dir.join("manyidle");
            let started = std::fs::create_dir_all(&dir)
                .map_err(|e| format!("mkdir {}: {e}", dir.display()))
                .and_then(|()| pg::set_mode(&dir, 0o755));
            match started {
                Ok(()) => {
                    let target = Target::postgres_in(&bindir, &dir, &pg_settings, "idle-postgres");
                    run_system(ctx, &mut table, target, &pg_rows, n);
                }
                Err(e) => skip_rows(&mut table, &pg_rows, &e),
            }
            run_probe(ctx, &mut probe, &bindir, &settings);
        }
        (Some(Some(why)), _) => {
            skip_rows(&mut table, &pg_rows, &why);
            probe.note(format!("not run: {why}"));
        }
        _ => {
            skip_rows(&mut table, &pg_rows, "PostgreSQL not in this run");
            probe.note("not run: PostgreSQL not in this run");
        }
    }

    table.note(format!(
        "sessions: bare sockets that completed the startup handshake, from loopback source addresses 127.0.0.2 on ({SESSIONS_PER_SOURCE} per address, {PARALLEL_PER_SOURCE} connects in flight per address; past this process's open-file limit in holder processes with addresses of their own); open-file limit {} (server and bench)",
        sysinfo::own_nofile_soft().map_or("?".into(), |l| l.to_string())
    ));
    table.note(
        "memory: hotpair RSS / PSS of its one process; PostgreSQL private memory / PSS summed over its processes",
    );
    table.note(format!(
        "projected at 100,000 = memory before + 100,000 × per session (the bound is {BOUND_100K_MIB:.0} MiB)"
    ));
    table.note(format!(
        "active: pgbench -S -M prepared -c 8 -j 2 -T {} s, after an untimed warm-up",
        ctx.cfg.duration
    ));
    table.note(CPU_NOTE);
    vec![table, probe]
}

/// Marks every series of `rows` skipped for `why`.
pub(super) fn skip_rows(table: &mut Table, rows: &[&str], why: &str) {
    for r in rows {
        for s in 0..table.series.len() {
            table.set(r, 0.0, s, Cell::Skipped(why.to_string()));
        }
    }
}

/// Measures every node of `target` (row names: primary, then standby).
fn run_system(ctx: &mut Ctx, table: &mut Table, target: Target, rows: &[&str], n: u32) {
    if let Err(why) = target.primary() {
        skip_rows(table, rows, &why);
        return;
    }
    // Kept in the context while it runs so points find its CPU account.
    ctx.targets.push(target);
    let t = ctx.targets.len() - 1;
    let r = guarded(|| -> Result<(), String> {
        let ep = ctx.targets[t].primary()?.clone();
        let pgbench = ctx.pgbench.clone().ok_or("pgbench not installed")?;
        let mut args = ep.conn_args();
        args.extend(["-i", "-q", "-s", &ctx.cfg.scale.to_string(), "postgres"].map(String::from));
        let out = super::pgbench::run_raw(&pgbench, &args, Duration::from_secs(1800))?;
        if out.status != Some(0) {
            return Err(format!("pgbench -i failed: {}", out.error_tail()));
        }
        if ctx.targets[t].standby().is_ok() {
            ctx.targets[t].wait_standby_catchup()?;
        }
        ep.sql("CHECKPOINT")?;
        Ok(())
    })
    .and_then(|r| r);
    if let Err(e) = r {
        for row in rows {
            table.set(
                row,
                0.0,
                0,
                Cell::Failed(format!("setup: {}", first_line(&e))),
            );
        }
    } else {
        for (i, row) in rows.iter().enumerate() {
            let standby = i == 1;
            let ep = if standby {
                ctx.targets[t].standby().cloned()
            } else {
                ctx.targets[t].primary().cloned()
            };
            match ep {
                Ok(ep) => {
                    if let Err(e) = guarded(|| measure_node(ctx, table, t, standby, &ep, row, n)) {
                        table.set(row, 0.0, 0, Cell::Failed(first_line(&e).to_string()));
                    }
                }
                Err(why) => skip_rows(table, &[row], &why),
            }
        }
    }
    let mut target = ctx.targets.remove(t);
    target.shutdown();
}

/// One node: tps without, open the sessions, memory, tps with, close.
fn measure_node(
    ctx: &Ctx,
    table: &mut Table,
    t: usize,
    standby: bool,
    ep: &Endpoint,
    row: &str,
    n: u32,
) {
    let target = &ctx.targets[t];
    let active = ["-S", "-M", "prepared"].map(String::from);
    if let Err(e) = ctx.warm_up(ep) {
        eprintln!("bench: manyidle: warm-up of {row}: {e}");
    }
    // Rounds (`--rounds`): without, open, with, close — each "with"
    // beside its own "without", so that a slow spell of the machine
    // does not read as the sessions' cost; the median round is shown.
    let rounds = ctx.cfg.select_rounds.max(1);
    let mut pairs = Vec::new();
    for round in 0..rounds {
        let without = ctx.point_summary(ep, 8, &active);
        let mem = |m: &ServerMem| m.kib as f64 / 1024.0;
        let before = target.node_memory(standby);
        eprintln!("bench: manyidle: {row}: opening {n} sessions");
        let (set, report) = HeldSessions::open(ep, n as usize, ctx.cfg.min_mem_available_mib);
        // Let the server finish whatever the last sessions started.
        std::thread::sleep(Duration::from_secs(1));
        let after = target.node_memory(standby);
        eprintln!(
            "bench: manyidle: {row}: {} sessions in {:.2} s ({:.0}/s){}",
            report.opened,
            report.elapsed.as_secs_f64(),
            report.rate(),
            report
                .stopped
                .as_deref()
                .map(|s| format!("; {s}"))
                .unwrap_or_default()
        );
        if round == 0 {
            table.set(
                row,
                0.0,
                0,
                Cell::Value(report.opened as f64, report.stopped.clone()),
            );
            if report.opened > 0 {
                table.set(row, 0.0, 1, Cell::Value(report.rate(), None));
            }
            match (&before, &after) {
                (Ok(b), Ok(a)) => {
                    table.set(row, 0.0, 2, Cell::Value(mem(b), None));
                    table.set(row, 0.0, 3, Cell::Value(mem(a), None));
                    table.set(row, 0.0, 4, Cell::Value(a.pss as f64 / 1024.0, None));
                    if report.opened > 0 {
                        let per_kib = (a.kib as f64 - b.kib as f64) / report.opened as f64;
                        table.set(row, 0.0, 5, Cell::Value(per_kib, None));
                        let projected = mem(b) + per_kib * 100_000.0 / 1024.0;
                        let verdict = if projected <= BOUND_100K_MIB {
                            "under the bound"
                        } else {
                            "over the bound"
                        };
                        table.set(row, 0.0, 6, Cell::Value(projected, Some(verdict.into())));
                    }
                }
                (Err(e), _) | (_, Err(e)) => table.set(row, 0.0, 2, Cell::Failed(e.clone())),
            }
        }
        let with = ctx.point_summary(ep, 8, &active);
        if let (Ok(w), Ok(wo)) = (&with, &without) {
            eprintln!(
                "bench: manyidle: {row}: round {}: 8 clients {:.0} tps without, {:.0} with ({:.3}x)",
                round + 1,
                wo.tps,
                w.tps,
                w.tps / wo.tps.max(1e-9)
            );
        }
        drop(set);
        wait_sessions_gone(ep);
        let opened = report.opened;
        pairs.push((without, with));
        if opened == 0 {
            break;
        }
    }
    let mut ratios: Vec<(f64, usize)> = pairs
        .iter()
        .enumerate()
        .filter_map(|(i, (wo, w))| match (wo, w) {
            (Ok(wo), Ok(w)) if wo.tps > 0.0 => Some((w.tps / wo.tps, i)),
            _ => None,
        })
        .collect();
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    let pick = ratios.get(ratios.len() / 2).map_or(0, |&(_, i)| i);
    if let Some((without, with)) = pairs.get(pick) {
        table.set_point(row, 0.0, 7, without);
        table.set_point(row, 0.0, 8, with);
    }
    if let Some(&(median, _)) = ratios.get(ratios.len() / 2) {
        let remark = (ratios.len() > 1).then(|| {
            let mut all: Vec<f64> = pairs
                .iter()
                .filter_map(|(wo, w)| match (wo, w) {
                    (Ok(wo), Ok(w)) if wo.tps > 0.0 => Some(w.tps / wo.tps),
                    _ => None,
                })
                .collect();
            all.iter_mut()
                .for_each(|r| *r = (*r * 1000.0).round() / 1000.0);
            format!("median of {} rounds: {all:?}", all.len())
        });
        table.set(row, 0.0, 9, Cell::Value(median, remark));
    }
}

/// Waits (up to a minute) until the sessions just closed have ended on
/// the server, so the next point does not share the machine with their
/// teardown.
fn wait_sessions_gone(ep: &Endpoint) {
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < until {
        let n = ep
            .sql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok());
        if n.is_some_and(|n| n < 100) {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Idle sessions held by this process, or by child processes of this
/// binary when one process's open-file limit is too small for them.
pub enum HeldSessions {
    /// In this process.
    Here(RawIdleSet),
    /// In children (`bench --hold-idle`), which hold them until their
    /// standard input closes.
    Children(Vec<std::process::Child>),
}

impl HeldSessions {
    /// Opens `n` sessions to `ep`, in child processes when this one's
    /// open-file limit cannot hold them all; each child's sessions come
    /// from source addresses of its own, [`SESSIONS_PER_SOURCE`] each.
    pub fn open(ep: &Endpoint, n: usize, min_avail_mib: u64) -> (HeldSessions, OpenReport) {
        let per_process = (sysinfo::own_nofile_soft()
            .unwrap_or(1024)
            .saturating_sub(FD_RESERVE) as usize)
            .max(100);
        if n <= per_process {
            let sources = n.div_ceil(SESSIONS_PER_SOURCE).max(2);
            let (set, report) =
                RawIdleSet::open(ep, n, sources, PARALLEL_PER_SOURCE, min_avail_mib);
            return (HeldSessions::Here(set), report);
        }
        let children = n.div_ceil(per_process);
        let each = n.div_ceil(children);
        let sources = each.div_ceil(SESSIONS_PER_SOURCE).max(1);
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                let report = OpenReport {
                    stopped: Some(format!("current_exe: {e}")),
                    ..OpenReport::default()
                };
                return (HeldSessions::Children(Vec::new()), report);
            }
        };
        let start = std::time::Instant::now();
        let mut spawned = Vec::new();
        let mut report = OpenReport::default();
        for k in 0..children {
            let count = each.min(n - k * each);
            let spec = format!(
                "{}:{}:{count}:{}:{sources}:{min_avail_mib}",
                ep.host,
                ep.port,
                k * sources
            );
            match std::process::Command::new(&exe)
                .arg("--hold-idle")
                .arg(&spec)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
            {
                Ok(c) => spawned.push(c),
                Err(e) => {
                    report.stopped.get_or_insert(format!("spawn a holder: {e}"));
                }
            }
        }
        for c in &mut spawned {
            let line = c.stdout.take().map(|out| {
                let mut line = String::new();
                let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
                line
            });
            match line
                .as_deref()
                .map(str::trim)
                .and_then(|l| l.strip_prefix("opened "))
            {
                Some(rest) => {
                    let (count, why) = rest.split_once(' ').unwrap_or((rest, ""));
                    report.opened += count.parse::<usize>().unwrap_or(0);
                    if !why.is_empty() {
                        report.stopped.get_or_insert(why.to_string());
                    }
                }
                None => {
                    report
                        .stopped
                        .get_or_insert("a holder process failed".into());
                }
            }
        }
        report.elapsed = start.elapsed();
        (HeldSessions::Children(spawned), report)
    }
}

impl Drop for HeldSessions {
    fn drop(&mut self) {
        match self {
            HeldSessions::Here(set) => set.close(),
            HeldSessions::Children(children) => {
                for c in children.iter_mut() {
                    drop(c.stdin.take());
                }
                for c in children.iter_mut() {
                    let _ = c.wait();
                }
            }
        }
    }
}

/// The child side (`bench --hold-idle HOST:PORT:N:FIRST:SOURCES:MINAVAIL`):
/// opens N sessions from SOURCES addresses starting at 127.0.0.(2 +
/// FIRST), prints `opened COUNT [why it stopped]`, and holds them until
/// standard input closes.
pub fn hold_idle(spec: &str) -> Result<(), String> {
    let parts: Vec<&str> = spec.split(':').collect();
    let [host, port, n, first, sources, min_avail] = parts[..] else {
        return Err(format!(
            "--hold-idle {spec}: expected HOST:PORT:N:FIRST:SOURCES:MINAVAIL"
        ));
    };
    let num = |v: &str| {
        v.parse::<usize>()
            .map_err(|e| format!("--hold-idle {spec}: {v}: {e}"))
    };
    let ep = Endpoint {
        host: host.to_string(),
        port: port
            .parse()
            .map_err(|e| format!("--hold-idle {spec}: {port}: {e}"))?,
        socket_dir: None,
    };
    let (set, report) = RawIdleSet::open_from(
        &ep,
        num(n)?,
        num(first)?,
        num(sources)?,
        PARALLEL_PER_SOURCE,
        num(min_avail)? as u64,
    );
    println!(
        "opened {} {}",
        report.opened,
        report.stopped.unwrap_or_default().replace('\n', " ")
    );
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    drop(set);
    Ok(())
}

/// The PostgreSQL start-up probe.
fn run_probe(ctx: &Ctx, probe: &mut Table, bindir: &std::path::Path, settings: &super::Settings) {
    eprintln!("bench: manyidle: PostgreSQL start-up at max_connections {PG_MAX_CONNECTIONS:?}");
    let mut s = settings.clone();
    s.standby = false;
    let counts: &[u32] = if ctx.cfg.quick {
        &PG_MAX_CONNECTIONS[..2]
    } else {
        &PG_MAX_CONNECTIONS
    };
    match pg::probe_max_connections(
        bindir,
        &ctx.cfg.work_dir,
        &s,
        counts,
        ctx.cfg.min_mem_available_mib,
    ) {
        Ok(probes) => {
            for p in probes {
                let label = p.max_connections.to_string();
                let x = f64::from(p.max_connections);
                if let Some(mb) = p.shared_memory_mb {
                    probe.set(&label, x, 0, Cell::Value(mb as f64, None));
                }
                match p.result {
                    Ok(d) => probe.set(
                        &label,
                        x,
                        1,
                        Cell::Value(d.as_secs_f64(), Some("started".into())),
                    ),
                    Err(e) => {
                        if p.shared_memory_mb.is_none() {
                            probe.set(&label, x, 0, Cell::Failed(e.clone()));
                        }
                        probe.set(&label, x, 1, Cell::Failed(e));
                    }
                }
            }
        }
        Err(e) => probe.note(format!("probe failed: {e}")),
    }
    probe.note(
        "each value: postgres -C shared_memory_size, then pg_ctl start -w and stop; the probe ends at the first value that does not start",
    );
}
