//! i. Bulk load: the seed's COPY experiment and `pgbench -i` wall time.
//!
//! Files of `copy_rows` rows of `repeat(random()::text, 5)` (generated here,
//! in memory, with the shortest round-trip float text PostgreSQL 15 prints)
//! are loaded with `COPY copy_t FROM STDIN` into one table `(data text not
//! null)` by 1, 2, 4 and 8 concurrent clients; every run loads all
//! `copy_files` files (client k takes files k, k+n, …), so the total data is
//! the same per run. Reported: seconds and table MB/s (`pg_relation_size`
//! / seconds, the seed's "tbl-MBs"; input bytes / seconds for every
//! system when one of them lacks pg_relation_size, so ratios compare like
//! with like — the table's title and note say which).
//!
//! hotpair runs with `relation_extension = bulk` and `= single`
//! (restarting the primary to change it, and back to bulk after); a server
//! that rejects the setting makes the `single` column a skip.
//!
//! One run loads the whole input in about a second, so one slow spell of
//! a shared machine could decide a cell. Each cell is therefore the median
//! of `copy_reps` runs (3), and the systems take turns: repetition r runs
//! bulk, single and PostgreSQL — the order rotated by r — each at every
//! client count. The mode changes (restarts) per repetition, not per
//! cell, which keeps the whole workload within a few minutes. Every run's
//! seconds are printed to stderr — with the server's and the client's CPU
//! seconds, the server threads' run-queue wait (ready, but no core free)
//! and how long the clients waited after their last CopyData (the server
//! parsing what the sockets still buffer, then the commit) — and listed in the seconds table's note. Each run starts with
//! a CHECKPOINT, outside the timed part, so no checkpoint falls inside it,
//! and once the standby (if any) has replayed everything, so the previous
//! run's replay does not compete with it for the cores.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::NoTls;

use super::report::{Cell, Chart, Table};
use super::sysinfo;
use super::target::{first_line, guarded, Endpoint, Kind};
use super::workloads::Ctx;
use crate::block_on;

/// One file of `rows` lines of `repeat(random()::text, 5)`, from `seed`.
pub fn generate_file(rows: u32, seed: u64) -> Bytes {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::with_capacity(rows as usize * 90);
    for _ in 0..rows {
        // xorshift64*: good enough for filler text.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        let t = format!("{r}");
        for _ in 0..5 {
            out.push_str(&t);
        }
        out.push('\n');
    }
    Bytes::from(out)
}

/// Loads `files` with `clients` concurrent COPYs into a fresh `copy_t`
/// and checks the row count afterwards.
fn copy_run(
    ep: &Endpoint,
    files: &[Bytes],
    clients: u32,
    rows_per_file: u32,
    server_cpu: &dyn Fn() -> Option<f64>,
    server_pid: Option<u32>,
    settle: &dyn Fn() -> Result<(), String>,
) -> Result<CopyRun, String> {
    ep.sql("DROP TABLE IF EXISTS copy_t")?;
    ep.sql("CREATE TABLE copy_t (data text NOT NULL)")?;
    // Every run starts right after a checkpoint: one run writes about
    // 230 MB of WAL, less than the distance that triggers a checkpoint,
    // so none lands inside a timed run (where it decided a cell's time by
    // whether it happened to fall in it or not), for every system alike.
    ep.sql("CHECKPOINT")?;
    settle()?;
    let connstr = ep.connstr();
    let elapsed = block_on(async {
        let mut conns = Vec::new();
        for _ in 0..clients {
            let (c, conn) = tokio_postgres::connect(&connstr, NoTls)
                .await
                .map_err(|e| e.to_string())?;
            conns.push((std::sync::Arc::new(c), tokio::spawn(conn)));
        }
        let cpu0 = server_cpu();
        let rq0 = server_pid.and_then(run_queue_wait_secs);
        // The client's share: this process does nothing else meanwhile.
        let me = std::process::id();
        let client0 = sysinfo::cpu_secs(me, false);
        let start = Instant::now();
        let mut tasks = Vec::new();
        for (k, (client, _)) in conns.iter().enumerate() {
            let mine: Vec<Bytes> = files
                .iter()
                .skip(k)
                .step_by(clients as usize)
                .cloned()
                .collect();
            let client = std::sync::Arc::clone(client);
            tasks.push(tokio::spawn(async move {
                // Time from the last CopyData to CommandComplete: the
                // COPY's end, mostly its commit (WAL flush).
                let mut ending = Duration::ZERO;
                for f in mine {
                    let sink = client
                        .copy_in::<_, Bytes>("COPY copy_t FROM STDIN")
                        .await
                        .map_err(|e| format!("COPY: {e}"))?;
                    let mut sink = Box::pin(sink);
                    let mut off = 0;
                    while off < f.len() {
                        let end = (off + (1 << 20)).min(f.len());
                        sink.send(f.slice(off..end))
                            .await
                            .map_err(|e| format!("COPY data: {e}"))?;
                        off = end;
                    }
                    let end = Instant::now();
                    sink.as_mut()
                        .finish()
                        .await
                        .map_err(|e| format!("COPY end: {e}"))?;
                    ending += end.elapsed();
                }
                Ok::<Duration, String>(ending)
            }));
        }
        let mut ending = Duration::ZERO;
        for t in tasks {
            ending += t.await.map_err(|e| e.to_string())??;
        }
        let elapsed = start.elapsed();
        let cpu = cpu0.and_then(|c0| Some(server_cpu()? - c0));
        let rq = rq0.and_then(|r0| Some(run_queue_wait_secs(server_pid?)? - r0));
        let client = client0.and_then(|c0| Some(sysinfo::cpu_secs(me, false)? - c0));
        drop(conns);
        let ending = ending.as_secs_f64() / f64::from(clients.max(1));
        Ok::<_, String>((elapsed, cpu, client, ending, rq))
    })?;
    let (elapsed, cpu, client_cpu, ending, run_queue) = elapsed;
    let count = ep.sql("SELECT count(*) FROM copy_t")?;
    let expected = files.len() as u64 * u64::from(rows_per_file);
    if count.trim() != expected.to_string() {
        return Err(format!("copy_t has {count} rows, expected {expected}"));
    }
    let table_bytes = ep
        .sql("SELECT pg_relation_size('copy_t')")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    Ok(CopyRun {
        seconds: elapsed.as_secs_f64(),
        table_bytes,
        cpu,
        client_cpu,
        ending,
        run_queue,
    })
}

/// Seconds the threads of process `pid` have waited on a run queue so far
/// (`/proc/PID/task/*/schedstat`, second field): time the server was ready
/// to run but had no core — on a shared 2-core machine often a large part
/// of a COPY's wall time. Threads that exited are not counted.
fn run_queue_wait_secs(pid: u32) -> Option<f64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut ns = 0u64;
    for t in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(t.path().join("schedstat")) else {
            continue;
        };
        ns += text
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some(ns as f64 / 1e9)
}

/// One timed load of every file.
#[derive(Clone, Debug)]
struct CopyRun {
    seconds: f64,
    /// `pg_relation_size('copy_t')` afterwards, if the server has it.
    table_bytes: Option<u64>,
    /// Server CPU seconds during the load, if known.
    cpu: Option<f64>,
    /// CPU seconds of this process (the COPY clients) during the load.
    client_cpu: Option<f64>,
    /// Seconds each client waited for its COPYs to end (CopyDone to
    /// CommandComplete), averaged over the clients: the server finishing
    /// what is still buffered in the sockets (several MB), then the commit.
    ending: f64,
    /// Seconds the server's threads waited for a core (hotpair only).
    run_queue: Option<f64>,
}

/// The median of `v` (the mean of the middle two for an even count); 0 for
/// none.
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The COPY tables (seconds, MB/s, server CPU) and the `pgbench -i`
/// wall-time table; each COPY cell is the median of `copy_reps` runs.
pub fn copy(ctx: &mut Ctx) -> Vec<Table> {
    let series = ["hotpair bulk", "hotpair single", "PostgreSQL"];
    // Seconds and server CPU are costs (single and PG over bulk), MB/s a
    // rate (bulk over the others).
    let table = |key: &str, title: &str, unit: &str, cost: bool| {
        let t = Table::new(key, title, unit, "clients", &series, Chart::Bars);
        if cost {
            t.ratio(1, 0, "single/bulk").ratio(2, 0, "PG/bulk")
        } else {
            t.ratio(0, 1, "bulk/single").ratio(0, 2, "bulk/PG")
        }
    };
    let mut secs = table(
        "copy_seconds",
        "concurrent COPY into one table: seconds",
        "s",
        true,
    );
    // Server CPU per run: on a loaded machine (other builds, the client in
    // this process) wall time wanders; the server's CPU seconds much less.
    let mut cpu = table(
        "copy_server_cpu",
        "concurrent COPY into one table: server CPU seconds",
        "cpu-s",
        true,
    );
    let mut mbs = table(
        "copy",
        "concurrent COPY into one table: table MB/s",
        "MB/s",
        false,
    );
    let clients = ctx.cfg.copy_clients.clone();
    for &c in &clients {
        secs.row(&c.to_string(), f64::from(c));
        cpu.row(&c.to_string(), f64::from(c));
        mbs.row(&c.to_string(), f64::from(c));
    }
    let files: Vec<Bytes> = (0..ctx.cfg.copy_files)
        .map(|i| generate_file(ctx.cfg.copy_rows, u64::from(i) + 1))
        .collect();
    let total_mb = files.iter().map(|f| f.len()).sum::<usize>() as f64 / 1e6;
    let input_bytes: u64 = files.iter().map(|f| f.len() as u64).sum();
    let reps = ctx.cfg.copy_reps.max(1);

    // (target index, series, hotpair setting to restart with)
    let mut plan: Vec<(usize, usize, Option<&str>)> = Vec::new();
    for (t, target) in ctx.targets.iter().enumerate() {
        match target.kind {
            Kind::Hotpair => {
                plan.push((t, 0, Some("bulk")));
                plan.push((t, 1, Some("single")));
            }
            Kind::Postgres => plan.push((t, 2, None)),
        }
    }
    // Every run of every cell, [series][client index]; failures and skips
    // per cell.
    let mut runs: Vec<Vec<Vec<CopyRun>>> = vec![vec![Vec::new(); clients.len()]; series.len()];
    let mut failed: Vec<Vec<Vec<String>>> = vec![vec![Vec::new(); clients.len()]; series.len()];
    let mut skipped: Vec<Option<String>> = vec![None; series.len()];
    // The relation_extension each hotpair target runs with now ("bulk"
    // as started).
    let mut mode: Vec<&str> = vec!["bulk"; ctx.targets.len()];
    // Repetition r runs the systems in the plan's order rotated by r, each
    // at every client count: one slow spell of the shared machine lands on
    // one run of several cells instead of deciding a cell, and no system
    // always runs first. A mode change costs a restart, so the modes change
    // per repetition, not per cell.
    for rep in 0..reps {
        let mut order = plan.clone();
        order.rotate_left(rep as usize % plan.len().max(1));
        for (t, s, setting) in order {
            if skipped[s].is_some() {
                continue;
            }
            if let Err(why) = ctx.targets[t].primary() {
                skipped[s] = Some(why);
                continue;
            }
            if let Some(value) = setting {
                if mode[t] != value {
                    if let Err(e) =
                        ctx.targets[t].restart_with(&format!("relation_extension = {value}\n"))
                    {
                        let why =
                            format!("relation_extension = {value} rejected or restart failed: {e}");
                        eprintln!("bench: {why}");
                        skipped[s] = Some(why);
                        // Try to get the default back for what follows.
                        let _ = ctx.targets[t].restart_with("relation_extension = bulk\n");
                        mode[t] = "bulk";
                        continue;
                    }
                    mode[t] = value;
                }
            }
            let ep = match ctx.targets[t].primary() {
                Ok(ep) => ep.clone(),
                Err(e) => {
                    skipped[s] = Some(e);
                    continue;
                }
            };
            for (ci, &c) in clients.iter().enumerate() {
                let target = &ctx.targets[t];
                let server_cpu = || target.server_cpu_secs();
                let pid = target.hotpair_pid();
                // The standby replays each load's 230 MB of WAL after the
                // primary wrote it: wait until it has, so the last run's
                // replay does not compete for the cores with this one.
                let settle = || match target.standby() {
                    Ok(_) => target.wait_standby_catchup(),
                    Err(_) => Ok(()),
                };
                match guarded(|| {
                    copy_run(&ep, &files, c, ctx.cfg.copy_rows, &server_cpu, pid, &settle)
                })
                .and_then(|r| r)
                {
                    Ok(run) => {
                        let secs =
                            |v: Option<f64>| v.map_or("-".to_string(), |u| format!("{u:.3} s"));
                        eprintln!(
                            "bench: copy rep {} {} {c} clients: {:.3} s, server cpu {}, server run-queue wait {}, client cpu {}, after-send wait {:.3} s per client",
                            rep + 1,
                            series[s],
                            run.seconds,
                            secs(run.cpu),
                            secs(run.run_queue),
                            secs(run.client_cpu),
                            run.ending
                        );
                        runs[s][ci].push(run);
                    }
                    Err(e) => failed[s][ci].push(first_line(&e).to_string()),
                }
                ctx.check_alive(t, "copy");
            }
            let _ = ctx.targets[t]
                .primary()
                .map(|ep| ep.sql("DROP TABLE IF EXISTS copy_t"));
        }
    }
    for (t, m) in mode.iter().enumerate() {
        if *m != "bulk" {
            if let Err(e) = ctx.targets[t].restart_with("relation_extension = bulk\n") {
                eprintln!("bench: restart back to relation_extension = bulk failed: {e}");
                ctx.targets[t].mark_down(&format!("restart failed: {e}"));
            }
        }
    }

    // MB/s from table bytes only if every run has them, so that every
    // ratio compares like with like.
    let all_table = runs
        .iter()
        .flatten()
        .flatten()
        .all(|r| r.table_bytes.is_some());
    let mut every_run = Vec::new();
    for s in 0..series.len() {
        let mut cells_text = Vec::new();
        for (ci, &c) in clients.iter().enumerate() {
            let label = c.to_string();
            let x = f64::from(c);
            let rs = &runs[s][ci];
            if rs.is_empty() {
                let cell = match (&skipped[s], failed[s][ci].first()) {
                    (_, Some(e)) => Cell::Failed(e.clone()),
                    (Some(why), None) => Cell::Skipped(why.clone()),
                    (None, None) => continue,
                };
                secs.set(&label, x, s, cell.clone());
                mbs.set(&label, x, s, cell);
                continue;
            }
            // A cell with some failed runs keeps the median of the others
            // and says so.
            let remark = failed[s][ci].first().map(|e| {
                format!(
                    "{} of {} runs failed: {e}",
                    failed[s][ci].len(),
                    failed[s][ci].len() + rs.len()
                )
            });
            let seconds: Vec<f64> = rs.iter().map(|r| r.seconds).collect();
            secs.set(&label, x, s, Cell::Value(median(&seconds), remark.clone()));
            let rates: Vec<f64> = rs
                .iter()
                .map(|r| {
                    let bytes = if all_table {
                        r.table_bytes.unwrap_or(input_bytes)
                    } else {
                        input_bytes
                    };
                    bytes as f64 / 1e6 / r.seconds
                })
                .collect();
            mbs.set(&label, x, s, Cell::Value(median(&rates), remark));
            let used: Vec<f64> = rs.iter().filter_map(|r| r.cpu).collect();
            if !used.is_empty() {
                cpu.set(&label, x, s, Cell::Value(median(&used), None));
            }
            cells_text.push(format!(
                "{c}: {}",
                seconds
                    .iter()
                    .map(|v| format!("{v:.2}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        if !cells_text.is_empty() {
            every_run.push(format!("{} {}", series[s], cells_text.join(", ")));
        }
    }
    let note = format!(
        "{} files x {} rows of repeat(random()::text, 5) ({total_mb:.0} MB of input) per run",
        ctx.cfg.copy_files, ctx.cfg.copy_rows
    );
    let reps_note = format!(
        "each cell: the median of {reps} runs; the systems take turns within each repetition \
         (bulk, single, PostgreSQL at every client count, the order rotated per repetition)"
    );
    for t in [&mut secs, &mut cpu, &mut mbs] {
        t.note(note.clone());
        t.note(reps_note.clone());
    }
    secs.note(format!(
        "every run, seconds, by clients: {}",
        every_run.join("; ")
    ));
    cpu.note("server CPU = user + system seconds of the server process(es) during the timed COPYs");
    if all_table {
        mbs.note("MB/s = pg_relation_size('copy_t') / seconds (the seed's tbl-MBs)");
    } else {
        mbs.title = "concurrent COPY into one table: input MB/s".to_string();
        mbs.note(
            "MB/s = input bytes / seconds for every system: a server here has no pg_relation_size",
        );
    }

    // pgbench -i -s N wall time (all default steps).
    let scale = ctx.cfg.init_scale;
    let mut init = Table::new(
        "pgbench_init",
        &format!("pgbench -i -s {scale} wall time"),
        "s",
        "",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let label = format!("pgbench -i -s {scale}");
    init.row(&label, 0.0);
    for t in 0..ctx.targets.len() {
        let cell = match guarded(|| ctx.init_tables(t, scale)).and_then(|r| r) {
            Ok(d) => Cell::Value(d.as_secs_f64(), None),
            Err(e) if ctx.targets[t].primary.is_err() => Cell::Skipped(e),
            Err(e) => Cell::Failed(e),
        };
        init.set(&label, 0.0, t, cell);
        ctx.check_alive(t, "pgbench -i");
    }
    vec![mbs, secs, cpu, init]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_rows_look_like_repeat_random() {
        let f = generate_file(3, 7);
        let text = std::str::from_utf8(&f).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        for l in lines {
            assert!(l.starts_with('0'), "{l}");
            let unit = &l[..l.len() / 5];
            assert_eq!(unit.repeat(5), l);
        }
        assert_ne!(generate_file(3, 7), generate_file(3, 8));
    }
}
