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
//! hotpair runs twice, with `relation_extension = bulk` and `= single`
//! (restarting the primary in between, and back to bulk after); a server
//! that rejects the setting makes the `single` column a skip.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::NoTls;

use super::report::{Cell, Chart, Table};
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

/// Loads `files` with `clients` concurrent COPYs into a fresh `copy_t`;
/// returns (seconds, table bytes if the server has `pg_relation_size`,
/// server CPU seconds over the same span if `server_cpu` can tell).
fn copy_run(
    ep: &Endpoint,
    files: &[Bytes],
    clients: u32,
    rows_per_file: u32,
    server_cpu: &dyn Fn() -> Option<f64>,
) -> Result<(f64, Option<u64>, Option<f64>), String> {
    ep.sql("DROP TABLE IF EXISTS copy_t")?;
    ep.sql("CREATE TABLE copy_t (data text NOT NULL)")?;
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
                    sink.as_mut()
                        .finish()
                        .await
                        .map_err(|e| format!("COPY end: {e}"))?;
                }
                Ok::<(), String>(())
            }));
        }
        for t in tasks {
            t.await.map_err(|e| e.to_string())??;
        }
        let elapsed = start.elapsed();
        let cpu = cpu0.and_then(|c0| Some(server_cpu()? - c0));
        drop(conns);
        Ok::<(Duration, Option<f64>), String>((elapsed, cpu))
    })?;
    let (elapsed, cpu) = elapsed;
    let count = ep.sql("SELECT count(*) FROM copy_t")?;
    let expected = files.len() as u64 * u64::from(rows_per_file);
    if count.trim() != expected.to_string() {
        return Err(format!("copy_t has {count} rows, expected {expected}"));
    }
    let table_bytes = ep
        .sql("SELECT pg_relation_size('copy_t')")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    Ok((elapsed.as_secs_f64(), table_bytes, cpu))
}

/// The COPY tables (seconds, MB/s) and the `pgbench -i` wall-time table.
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
    // (row label, clients, series, seconds, table bytes): MB/s cells are set
    // at the end, from table bytes only if every run has them, so that
    // every ratio compares like with like.
    let mut done: Vec<(String, u32, usize, f64, Option<u64>)> = Vec::new();

    // (target index, series, hotpair setting to restart with)
    let mut plan: Vec<(usize, usize, Option<&str>)> = Vec::new();
    for (t, target) in ctx.targets.iter().enumerate() {
        match target.kind {
            Kind::Hotpair => {
                plan.push((t, 0, None));
                plan.push((t, 1, Some("single")));
            }
            Kind::Postgres => plan.push((t, 2, None)),
        }
    }
    for (t, s, setting) in plan {
        if let Err(why) = ctx.targets[t].primary() {
            for &c in &clients {
                secs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(why.clone()));
                mbs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(why.clone()));
            }
            continue;
        }
        if let Some(value) = setting {
            if let Err(e) = ctx.targets[t].restart_with(&format!("relation_extension = {value}\n"))
            {
                let why = format!("relation_extension = {value} rejected or restart failed: {e}");
                eprintln!("bench: {why}");
                for &c in &clients {
                    secs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(why.clone()));
                    mbs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(why.clone()));
                }
                // Try to get the default back for the workloads after this.
                let _ = ctx.targets[t].restart_with("relation_extension = bulk\n");
                continue;
            }
        }
        let ep = match ctx.targets[t].primary() {
            Ok(ep) => ep.clone(),
            Err(e) => {
                for &c in &clients {
                    secs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(e.clone()));
                    mbs.set(&c.to_string(), f64::from(c), s, Cell::Skipped(e.clone()));
                }
                continue;
            }
        };
        for &c in &clients {
            let label = c.to_string();
            let target = &ctx.targets[t];
            let server_cpu = || target.server_cpu_secs();
            match guarded(|| copy_run(&ep, &files, c, ctx.cfg.copy_rows, &server_cpu))
                .and_then(|r| r)
            {
                Ok((seconds, table_bytes, used)) => {
                    secs.set(&label, f64::from(c), s, Cell::Value(seconds, None));
                    if let Some(used) = used {
                        cpu.set(&label, f64::from(c), s, Cell::Value(used, None));
                    }
                    done.push((label.clone(), c, s, seconds, table_bytes));
                }
                Err(e) => {
                    let e = first_line(&e).to_string();
                    secs.set(&label, f64::from(c), s, Cell::Failed(e.clone()));
                    mbs.set(&label, f64::from(c), s, Cell::Failed(e));
                }
            }
            ctx.check_alive(t, "copy");
        }
        let _ = ctx.targets[t]
            .primary()
            .map(|ep| ep.sql("DROP TABLE IF EXISTS copy_t"));
        if setting.is_some() {
            if let Err(e) = ctx.targets[t].restart_with("relation_extension = bulk\n") {
                eprintln!("bench: restart back to relation_extension = bulk failed: {e}");
                ctx.targets[t].mark_down(&format!("restart failed: {e}"));
            }
        }
    }
    let note = format!(
        "{} files x {} rows of repeat(random()::text, 5) ({total_mb:.0} MB of input) per run",
        ctx.cfg.copy_files, ctx.cfg.copy_rows
    );
    secs.note(note.clone());
    cpu.note(note.clone());
    cpu.note("server CPU = user + system seconds of the server process(es) during the timed COPYs");
    mbs.note(note);
    let all_table = done.iter().all(|d| d.4.is_some());
    for (label, c, series, seconds, table_bytes) in done {
        let bytes = if all_table {
            table_bytes.unwrap_or(input_bytes)
        } else {
            input_bytes
        };
        mbs.set(
            &label,
            f64::from(c),
            series,
            Cell::Value(bytes as f64 / 1e6 / seconds, None),
        );
    }
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
