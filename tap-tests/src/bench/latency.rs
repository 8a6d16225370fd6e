//! h. Commit-to-visible latency: how long after COMMIT returns on the
//! primary a long-lived standby session first sees the row.
//!
//! One session on the primary inserts row `i` (autocommit, so the INSERT's
//! return is the commit's acknowledgement); from that instant one session
//! on the standby — opened once, kept for all commits, as in the September
//! 2020 bug's test — runs a prepared `SELECT count(*) … WHERE id = $1` in a
//! tight loop until it returns 1. The next commit starts only after the row
//! was seen. Median and p99 over N commits.
//!
//! A long-lived session is the point: a standby that caches its snapshot
//! and fails to invalidate it on replay never sees the row, which shows here
//! as a timeout (10 s per commit) rather than a latency.
//!
//! Replay throughput (second table): while 8 standby sessions run point
//! SELECTs on the table being written, the primary inserts
//! `latency_commits × 500` rows of 200 bytes in 10,000-row statements; the
//! WAL between the start and end LSN, divided by the time from the first
//! insert until the standby's replay LSN reaches the end, is the replay
//! rate (bounded by how fast the primary writes: its rate is shown too).

use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use super::report::{Cell, Chart, Table};
use super::target::{first_line, guarded};
use super::workloads::Ctx;
use crate::block_on;

/// Per-commit visibility timeout.
const VISIBLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the measurement on every target with a standby.
pub fn commit_to_visible(ctx: &mut Ctx) -> Vec<Table> {
    let n = ctx.cfg.latency_commits;
    let mut table = Table::new(
        "commit_to_visible",
        &format!("commit-to-visible latency on the standby ({n} commits)"),
        "ms",
        "statistic",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let labels = ["median", "p99", "max"];
    for l in labels {
        table.row(l, 0.0);
    }
    for t in 0..ctx.targets.len() {
        let target = &ctx.targets[t];
        let Some(result) = on_pair(target, &mut table, &labels, t, |p, s| {
            p.sql("DROP TABLE IF EXISTS bench_visible")?;
            p.sql("CREATE TABLE bench_visible (id int PRIMARY KEY)")?;
            target.wait_standby_catchup()?;
            block_on(measure(&p.connstr(), &s.connstr(), n))
        }) else {
            continue;
        };
        match result {
            Ok(mut lat) => {
                lat.sort_by(|a, b| a.total_cmp(b));
                let pick = |q: f64| lat[((lat.len() as f64 - 1.0) * q).round() as usize];
                table.set("median", 0.0, t, Cell::Value(pick(0.5), None));
                table.set("p99", 0.0, t, Cell::Value(pick(0.99), None));
                table.set("max", 0.0, t, Cell::Value(pick(1.0), None));
            }
            Err(e) => {
                for l in labels {
                    table.set(l, 0.0, t, Cell::Failed(first_line(&e).to_string()));
                }
            }
        }
        ctx.check_alive(t, "commit-to-visible");
    }
    table.note("asynchronous streaming replication; the standby session is opened once and polls without sleeping");
    vec![table, replay_throughput(ctx)]
}

/// Concurrent standby readers during the replay measurement.
const REPLAY_READERS: usize = 8;

/// The replay-throughput table (see the module docs).
fn replay_throughput(ctx: &mut Ctx) -> Table {
    let rows = u64::from(ctx.cfg.latency_commits) * 500;
    let mut table = Table::new(
        "replay_throughput",
        &format!(
            "standby replay while {REPLAY_READERS} standby clients read ({rows} inserted rows)"
        ),
        "MB/s",
        "rate",
        &["hotpair", "PostgreSQL"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    let labels = ["replay", "primary WAL"];
    for l in labels {
        table.row(l, 0.0);
    }
    let mut reads = Vec::new();
    for t in 0..ctx.targets.len() {
        let target = &ctx.targets[t];
        let Some(result) = on_pair(target, &mut table, &labels, t, |p, s| {
            p.sql("DROP TABLE IF EXISTS bench_replay")?;
            p.sql("CREATE TABLE bench_replay (id int PRIMARY KEY, pad text)")?;
            p.sql("INSERT INTO bench_replay SELECT g, 'seed' FROM generate_series(1, 1000) g")?;
            target.wait_standby_catchup()?;
            block_on(measure_replay(&p.connstr(), &s.connstr(), rows))
        }) else {
            continue;
        };
        match result {
            Ok(r) => {
                table.set("replay", 0.0, t, Cell::Value(r.replay_mb_s, None));
                table.set("primary WAL", 0.0, t, Cell::Value(r.write_mb_s, None));
                reads.push(format!(
                    "{}: {:.0} MB of WAL, {:.0} standby reads/s",
                    target.name, r.mb, r.reads_per_s
                ));
            }
            Err(e) => {
                for l in labels {
                    table.set(l, 0.0, t, Cell::Failed(first_line(&e).to_string()));
                }
            }
        }
        ctx.check_alive(t, "replay throughput");
    }
    table.note(
        "replay = WAL bytes / time from the first insert until the standby replayed them; \
         it cannot exceed the primary's WAL rate",
    );
    for r in reads {
        table.note(r);
    }
    table
}

/// One replay measurement.
struct ReplayResult {
    mb: f64,
    replay_mb_s: f64,
    write_mb_s: f64,
    reads_per_s: f64,
}

/// The first column of the first row of a simple query, as text.
async fn text_value(c: &tokio_postgres::Client, sql: &str) -> Result<String, String> {
    for m in c
        .simple_query(sql)
        .await
        .map_err(|e| format!("{sql}: {e}"))?
    {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            return Ok(r.get(0).unwrap_or("").to_string());
        }
    }
    Err(format!("{sql}: no row"))
}

fn lsn(text: &str) -> Result<u64, String> {
    crate::cluster::parse_lsn(text).ok_or_else(|| format!("not an LSN: {text:?}"))
}

async fn measure_replay(primary: &str, standby: &str, rows: u64) -> Result<ReplayResult, String> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let (pc, pconn) = tokio_postgres::connect(primary, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let pt = tokio::spawn(pconn);
    let (sc, sconn) = tokio_postgres::connect(standby, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let st = tokio::spawn(sconn);
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let mut readers = Vec::new();
    for r in 0..REPLAY_READERS {
        let (c, conn) = tokio_postgres::connect(standby, NoTls)
            .await
            .map_err(|e| format!("reader {r}: {e}"))?;
        tokio::spawn(conn);
        let (stop, reads) = (stop.clone(), reads.clone());
        readers.push(tokio::spawn(async move {
            let q = c
                .prepare("SELECT count(*) FROM bench_replay WHERE id = $1")
                .await
                .map_err(|e| e.to_string())?;
            let mut id = r as i32 + 1;
            while !stop.load(Ordering::Relaxed) {
                c.query_one(&q, &[&id]).await.map_err(|e| e.to_string())?;
                reads.fetch_add(1, Ordering::Relaxed);
                id = (id * 7 + 13) % 1000 + 1;
            }
            Ok::<(), String>(())
        }));
    }
    let start = lsn(&text_value(&pc, "SELECT pg_current_wal_lsn()").await?)?;
    let t0 = Instant::now();
    let batch = 10_000u64;
    let mut next = 1001u64;
    while next < 1001 + rows {
        let last = (next + batch - 1).min(1000 + rows);
        pc.simple_query(&format!(
            "INSERT INTO bench_replay SELECT g, repeat('r', 200) FROM generate_series({next}, {last}) g"
        ))
        .await
        .map_err(|e| format!("insert: {e}"))?;
        next = last + 1;
    }
    let end = lsn(&text_value(&pc, "SELECT pg_current_wal_lsn()").await?)?;
    let t_write = t0.elapsed();
    let reads_before = reads.load(Ordering::Relaxed);
    loop {
        let replayed = lsn(&text_value(&sc, "SELECT pg_last_wal_replay_lsn()").await?)?;
        if replayed >= end {
            break;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            return Err("the standby did not replay the inserts within 600 s".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let t_replay = t0.elapsed();
    let total_reads = reads.load(Ordering::Relaxed).max(reads_before);
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await.map_err(|e| e.to_string())??;
    }
    drop(pc);
    drop(sc);
    let _ = pt.await;
    let _ = st.await;
    let mb = end.saturating_sub(start) as f64 / (1024.0 * 1024.0);
    Ok(ReplayResult {
        mb,
        replay_mb_s: mb / t_replay.as_secs_f64().max(1e-9),
        write_mb_s: mb / t_write.as_secs_f64().max(1e-9),
        reads_per_s: total_reads as f64 / t_replay.as_secs_f64().max(1e-9),
    })
}

/// The latencies in ms of `n` commits.
async fn measure(primary: &str, standby: &str, n: u32) -> Result<Vec<f64>, String> {
    let (pc, pconn) = tokio_postgres::connect(primary, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let pt = tokio::spawn(pconn);
    let (sc, sconn) = tokio_postgres::connect(standby, NoTls)
        .await
        .map_err(|e| e.to_string())?;
    let st = tokio::spawn(sconn);
    let insert = pc
        .prepare("INSERT INTO bench_visible VALUES ($1)")
        .await
        .map_err(|e| format!("prepare on primary: {e}"))?;
    let probe = sc
        .prepare("SELECT count(*) FROM bench_visible WHERE id = $1")
        .await
        .map_err(|e| format!("prepare on standby: {e}"))?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 1..=n as i32 {
        pc.execute(&insert, &[&i])
            .await
            .map_err(|e| format!("insert {i}: {e}"))?;
        let t0 = Instant::now();
        loop {
            let row = sc
                .query_one(&probe, &[&i])
                .await
                .map_err(|e| format!("probe {i}: {e}"))?;
            let seen: i64 = row.try_get(0).map_err(|e| e.to_string())?;
            if seen == 1 {
                break;
            }
            if t0.elapsed() > VISIBLE_TIMEOUT {
                return Err(format!(
                    "row {i} not visible to the long-lived standby session after {VISIBLE_TIMEOUT:?}"
                ));
            }
        }
        out.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    drop(pc);
    drop(sc);
    let _ = pt.await;
    let _ = st.await;
    Ok(out)
}

/// Runs `f` with the primary and standby of `target` (panics turned into
/// errors). When either node is missing, every row of `labels` in column
/// `t` is marked skipped with the reason and `None` is returned.
fn on_pair<T>(
    target: &super::target::Target,
    table: &mut Table,
    labels: &[&str],
    t: usize,
    f: impl FnOnce(&super::target::Endpoint, &super::target::Endpoint) -> Result<T, String>,
) -> Option<Result<T, String>> {
    match (target.primary(), target.standby()) {
        (Err(e), _) | (_, Err(e)) => {
            for l in labels {
                table.set(l, 0.0, t, Cell::Skipped(e.clone()));
            }
            None
        }
        (Ok(p), Ok(s)) => Some(guarded(|| f(p, s)).and_then(|r| r)),
    }
}
