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
        let result = match (target.primary(), target.standby()) {
            (Err(e), _) | (_, Err(e)) => {
                for l in labels {
                    table.set(l, 0.0, t, Cell::Skipped(e.clone()));
                }
                continue;
            }
            (Ok(p), Ok(s)) => {
                let (p, s) = (p.clone(), s.clone());
                guarded(|| {
                    p.sql("DROP TABLE IF EXISTS bench_visible")?;
                    p.sql("CREATE TABLE bench_visible (id int PRIMARY KEY)")?;
                    target.wait_standby_catchup()?;
                    block_on(measure(&p.connstr(), &s.connstr(), n))
                })
                .and_then(|r| r)
            }
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
    vec![table]
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
