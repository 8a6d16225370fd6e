//! TPC-H on the standbys: the 22 queries with the spec's validation
//! parameters, on hotpair's standby beside PostgreSQL 15's, same data,
//! same `shared_buffers` and `work_mem` (`bench tpch [--tpch-scale 1]`).
//!
//! ```text
//!   per system (hotpair, then PostgreSQL), on the primary:
//!     CREATE TABLE × 8 (the spec's schema)
//!     COPY … FROM STDIN  ◄── dbgen::Generator, streamed in 1 MB chunks
//!                            (orders and lineitem on two connections at once)
//!     primary keys, foreign-key indexes (dbgen::INDEXES), ANALYZE
//!     CHECKPOINT, standby caught up, CHECKPOINT on it, sync
//!   on the standbys:
//!     EXPLAIN of each query (both systems) ──► tpch_explain.txt
//!     rounds × (Q1 … Q22 × (hotpair, PostgreSQL))     interleaved
//!   table: rows, median ms of each, ratio, rows equal? ──► tpch_results.txt
//! ```
//!
//! Every query runs with `statement_timeout` (`--tpch-timeout`, 300 s); the
//! client also gives up 30 s after it, cancels and reconnects, so one query
//! never hangs the run. A query that errors or times out on a system is
//! not run there again in later rounds (its error is recorded verbatim). A
//! result set is compared as text, row by row in order (every TPC-H query
//! but Q6, Q14, Q17 and Q19 — single rows — orders its output); when the
//! texts differ the table says whether the rows are equal in another order
//! or equal after rounding numbers to 2 decimals, else where they first
//! differ.
//!
//! PostgreSQL runs at its defaults otherwise (parallel query on: up to two
//! workers per Gather on this machine's two cores); hotpair runs a
//! statement on one core.

pub mod dbgen;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use super::report::{Cell, Chart, Table};
use super::target::{first_line, Endpoint};
use super::workloads::{median, Ctx};
use crate::block_on;

/// The 22 queries, PostgreSQL syntax, validation parameters (Q11's
/// fraction is `:fraction`, 0.0001 / SF).
pub const QUERIES: [&str; 22] = [
    include_str!("queries/q1.sql"),
    include_str!("queries/q2.sql"),
    include_str!("queries/q3.sql"),
    include_str!("queries/q4.sql"),
    include_str!("queries/q5.sql"),
    include_str!("queries/q6.sql"),
    include_str!("queries/q7.sql"),
    include_str!("queries/q8.sql"),
    include_str!("queries/q9.sql"),
    include_str!("queries/q10.sql"),
    include_str!("queries/q11.sql"),
    include_str!("queries/q12.sql"),
    include_str!("queries/q13.sql"),
    include_str!("queries/q14.sql"),
    include_str!("queries/q15.sql"),
    include_str!("queries/q16.sql"),
    include_str!("queries/q17.sql"),
    include_str!("queries/q18.sql"),
    include_str!("queries/q19.sql"),
    include_str!("queries/q20.sql"),
    include_str!("queries/q21.sql"),
    include_str!("queries/q22.sql"),
];

/// `work_mem` of every query session, both systems.
pub const WORK_MEM: &str = "4MB";

/// Query `n` (1-based) as sent: its comment line dropped, parameters in.
pub fn query_text(n: usize, sf: f64) -> String {
    let fraction = format!("{:.10}", 0.0001 / sf);
    let fraction = fraction.trim_end_matches('0').trim_end_matches('.');
    QUERIES[n - 1]
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(":fraction", fraction)
}

/// A server error as the server sent it (`ERROR 42601: message`), else
/// the driver's words.
fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// A connection and its driver task.
struct Conn {
    client: Client,
    task: tokio::task::JoinHandle<()>,
}

impl Conn {
    async fn open(ep: &Endpoint) -> Result<Conn, String> {
        let (client, connection) = tokio_postgres::connect(&ep.connstr(), NoTls)
            .await
            .map_err(|e| format!("connect to {}:{}: {}", ep.host, ep.port, error_text(&e)))?;
        let task = tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn { client, task })
    }

    async fn exec(&self, sql: &str) -> Result<Vec<String>, String> {
        let msgs = self
            .client
            .simple_query(sql)
            .await
            .map_err(|e| error_text(&e))?;
        Ok(rows_of(&msgs))
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Rows as text lines, columns joined by `|`, NULL as `\N`.
fn rows_of(msgs: &[SimpleQueryMessage]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("\\N"))
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

/// What loading one system did.
#[derive(Debug, Default)]
struct Load {
    /// Seconds to generate and COPY the tables.
    copy_secs: f64,
    /// Seconds for the keys and indexes.
    index_secs: f64,
    /// Seconds for ANALYZE.
    analyze_secs: f64,
    /// Statements that failed, with the error.
    errors: Vec<(String, String)>,
    /// Rows per table after the load.
    counts: Vec<(String, String)>,
}

/// `bench --tpch-load PORT`: [`load`] into the server on 127.0.0.1:PORT;
/// a line on what it took, or the first failure.
pub fn load_into(port: u16, sf: f64) -> Result<String, String> {
    let ep = Endpoint {
        host: "127.0.0.1".into(),
        port,
        socket_dir: None,
    };
    let l = load(&ep, sf)?;
    if let Some((stmt, e)) = l.errors.first() {
        return Err(format!("{stmt}: {e}"));
    }
    Ok(format!(
        "TPC-H scale {sf} loaded: COPY {:.1} s, keys and indexes {:.1} s, ANALYZE {:.1} s",
        l.copy_secs, l.index_secs, l.analyze_secs
    ))
}

/// Creates the schema on `ep`, streams every table in, adds the keys and
/// indexes, ANALYZE.
fn load(ep: &Endpoint, sf: f64) -> Result<Load, String> {
    block_on(async {
        let mut report = Load::default();
        let conn = Conn::open(ep).await?;
        for t in dbgen::TABLES.iter().rev() {
            conn.exec(&format!("DROP TABLE IF EXISTS {t}")).await?;
        }
        for stmt in dbgen::SCHEMA.split(';').filter(|s| !s.trim().is_empty()) {
            conn.exec(stmt.trim()).await?;
        }
        let start = Instant::now();
        let second = Conn::open(ep).await?;
        for table in dbgen::TABLES {
            if table == "lineitem" {
                continue; // with orders
            }
            let mut g = dbgen::Generator::new(table, sf);
            let mut bufs = vec![Vec::new(), Vec::new()];
            let stmt = format!("COPY {table} FROM STDIN");
            let mut main = Box::pin(
                conn.client
                    .copy_in::<_, Bytes>(stmt.as_str())
                    .await
                    .map_err(|e| format!("COPY {table}: {}", error_text(&e)))?,
            );
            let mut lines = if table == "orders" {
                Some(Box::pin(
                    second
                        .client
                        .copy_in::<_, Bytes>("COPY lineitem FROM STDIN")
                        .await
                        .map_err(|e| format!("COPY lineitem: {}", error_text(&e)))?,
                ))
            } else {
                None
            };
            while g.fill(&mut bufs) {
                let chunk = Bytes::from(std::mem::take(&mut bufs[0]));
                main.send(chunk)
                    .await
                    .map_err(|e| format!("COPY {table} data: {}", error_text(&e)))?;
                if let Some(l) = lines.as_mut() {
                    let chunk = Bytes::from(std::mem::take(&mut bufs[1]));
                    l.send(chunk)
                        .await
                        .map_err(|e| format!("COPY lineitem data: {}", error_text(&e)))?;
                }
            }
            main.as_mut()
                .finish()
                .await
                .map_err(|e| format!("COPY {table} end: {}", error_text(&e)))?;
            if let Some(mut l) = lines {
                l.as_mut()
                    .finish()
                    .await
                    .map_err(|e| format!("COPY lineitem end: {}", error_text(&e)))?;
            }
        }
        report.copy_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        for stmt in dbgen::INDEXES {
            if let Err(e) = conn.exec(stmt).await {
                eprintln!("bench: tpch: {stmt}: {e}");
                report.errors.push((stmt.to_string(), e));
            }
        }
        report.index_secs = start.elapsed().as_secs_f64();
        let start = Instant::now();
        if let Err(e) = conn.exec("ANALYZE").await {
            eprintln!("bench: tpch: ANALYZE: {e}");
            report.errors.push(("ANALYZE".into(), e));
        }
        report.analyze_secs = start.elapsed().as_secs_f64();
        for t in dbgen::TABLES {
            let n = conn
                .exec(&format!("SELECT count(*) FROM {t}"))
                .await
                .map(|r| r.join(""))
                .unwrap_or_else(|e| e);
            report.counts.push((t.to_string(), n));
        }
        Ok(report)
    })
}

/// One query on one system over the rounds.
#[derive(Debug, Default, Clone)]
struct Outcome {
    /// Milliseconds of each completed round.
    ms: Vec<f64>,
    /// The first round's rows.
    rows: Option<Vec<String>>,
    /// The error (or timeout) that stopped it, verbatim.
    error: Option<String>,
}

/// A session on a standby for the timed queries.
struct QuerySession {
    ep: Endpoint,
    conn: Option<Conn>,
    timeout: Duration,
}

impl QuerySession {
    async fn ensure(&mut self) -> Result<&Conn, String> {
        let alive = self.conn.as_ref().is_some_and(|c| !c.client.is_closed());
        if !alive {
            let c = Conn::open(&self.ep).await?;
            c.exec(&format!(
                "SET statement_timeout = {}",
                self.timeout.as_millis()
            ))
            .await?;
            c.exec(&format!("SET work_mem = '{WORK_MEM}'")).await?;
            self.conn = Some(c);
        }
        self.conn
            .as_ref()
            .ok_or_else(|| "no connection".to_string())
    }

    /// Runs `sql`: its rows and milliseconds. Gives up 30 s past the
    /// statement timeout (a server that ignores it): cancels, drops the
    /// connection.
    async fn run(&mut self, sql: &str) -> Result<(Vec<String>, f64), String> {
        let guard = self.timeout + Duration::from_secs(30);
        let conn = self.ensure().await?;
        let start = Instant::now();
        match tokio::time::timeout(guard, conn.client.simple_query(sql)).await {
            Ok(Ok(msgs)) => Ok((rows_of(&msgs), start.elapsed().as_secs_f64() * 1e3)),
            Ok(Err(e)) => Err(error_text(&e)),
            Err(_) => {
                let token = conn.client.cancel_token();
                let _ = token.cancel_query(NoTls).await;
                self.conn = None;
                Err(format!(
                    "no answer {} s after the statement timeout; cancelled",
                    guard.as_secs() - self.timeout.as_secs()
                ))
            }
        }
    }
}

/// How two result sets compare: "yes", or what differs.
fn compare(hp: &[String], pg: &[String]) -> String {
    if hp == pg {
        return "yes".into();
    }
    let round = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .map(|r| {
                r.split('|')
                    .map(|f| match f.parse::<f64>() {
                        Ok(v) if f.contains('.') => format!("{v:.2}"),
                        _ => f.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect()
    };
    let (rh, rp) = (round(hp), round(pg));
    if rh == rp {
        return "yes, to 2 decimals".into();
    }
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    if sorted(hp) == sorted(pg) {
        return "same rows, other order".into();
    }
    if sorted(&rh) == sorted(&rp) {
        return "same rows to 2 decimals, other order".into();
    }
    let i = hp.iter().zip(pg).take_while(|(a, b)| a == b).count();
    let cut = |s: Option<&String>| {
        s.map(|s| s.chars().take(90).collect::<String>())
            .unwrap_or_else(|| "(none)".into())
    };
    format!(
        "no: {} rows vs {}; row {} differs: hotpair `{}` / PostgreSQL `{}`",
        hp.len(),
        pg.len(),
        i + 1,
        cut(hp.get(i)),
        cut(pg.get(i))
    )
}

/// The workload (`tpch`).
pub fn tpch(ctx: &mut Ctx) -> Vec<Table> {
    let sf = ctx.cfg.tpch_scale;
    let rounds = ctx.cfg.tpch_rounds.max(1);
    let timeout = Duration::from_secs(u64::from(ctx.cfg.tpch_timeout.max(1)));
    let mut table = Table::new(
        "tpch",
        &format!("TPC-H scale {sf} on the standbys: median ms per query"),
        "ms",
        "query",
        &["hotpair standby", "PostgreSQL standby"],
        Chart::Bars,
    )
    .ratio(0, 1, "hp/PG");
    for q in 1..=22 {
        table.row(&format!("Q{q}"), q as f64);
    }
    let n = ctx.targets.len();
    let mut notes: Vec<String> = Vec::new();
    let mut sessions: Vec<Option<QuerySession>> = Vec::new();
    for t in 0..n {
        let name = ctx.targets[t].name.clone();
        let prepared = (|| -> Result<QuerySession, String> {
            let primary = ctx.targets[t].primary()?.clone();
            let standby = ctx.targets[t].standby()?.clone();
            eprintln!("bench: tpch: loading scale {sf} into {name}");
            let l = load(&primary, sf)?;
            ctx.settle(t)?;
            notes.push(format!(
                "{name}: COPY {:.1} s, keys and indexes {:.1} s, ANALYZE {:.1} s; rows {}",
                l.copy_secs,
                l.index_secs,
                l.analyze_secs,
                l.counts
                    .iter()
                    .map(|(t, c)| format!("{t} {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            for (stmt, e) in &l.errors {
                notes.push(format!("{name}: {stmt}: {e}"));
            }
            Ok(QuerySession {
                ep: standby,
                conn: None,
                timeout,
            })
        })();
        match prepared {
            Ok(s) => sessions.push(Some(s)),
            Err(e) => {
                eprintln!("bench: tpch: {name}: {e}");
                notes.push(format!("{name}: not run: {e}"));
                for q in 1..=22 {
                    table.set(
                        &format!("Q{q}"),
                        q as f64,
                        t,
                        Cell::Failed(first_line(&e).to_string()),
                    );
                }
                sessions.push(None);
            }
        }
        ctx.check_alive(t, "tpch");
    }

    // EXPLAIN of every query on both standbys.
    let mut explain = String::new();
    let _ = writeln!(
        explain,
        "TPC-H scale {sf}: EXPLAIN of each query on each standby (bench tpch)\n"
    );
    for q in 1..=22 {
        let sql = query_text(q, sf);
        let _ = writeln!(explain, "==================== Q{q} ====================");
        let _ = writeln!(explain, "{}\n", sql.trim());
        for (t, s) in sessions.iter_mut().enumerate() {
            let Some(s) = s.as_mut() else { continue };
            let plan = block_on(s.run(&format!("EXPLAIN {sql}")))
                .map(|(rows, _)| rows.join("\n"))
                .unwrap_or_else(|e| format!("(EXPLAIN failed: {e})"));
            let _ = writeln!(explain, "---- {} ----\n{plan}\n", ctx.targets[t].name);
        }
    }

    // The timed rounds, interleaved.
    let mut out: Vec<Vec<Outcome>> = vec![vec![Outcome::default(); n]; 22];
    for r in 0..rounds {
        for q in 1..=22 {
            let sql = query_text(q, sf);
            for (t, s) in sessions.iter_mut().enumerate() {
                let Some(s) = s.as_mut() else { continue };
                let o = &mut out[q - 1][t];
                if o.error.is_some() {
                    continue;
                }
                match block_on(s.run(&sql)) {
                    Ok((rows, ms)) => {
                        eprintln!(
                            "bench: tpch: round {} Q{q} {}: {ms:.0} ms, {} rows",
                            r + 1,
                            ctx.targets[t].name,
                            rows.len()
                        );
                        o.ms.push(ms);
                        if o.rows.is_none() {
                            o.rows = Some(rows);
                        }
                    }
                    Err(e) => {
                        eprintln!(
                            "bench: tpch: round {} Q{q} {}: {e}",
                            r + 1,
                            ctx.targets[t].name
                        );
                        o.error = Some(e);
                    }
                }
            }
        }
    }
    for t in 0..n {
        ctx.check_alive(t, "tpch");
    }

    // The table.
    let hp = ctx
        .targets
        .iter()
        .position(|t| t.kind == super::target::Kind::Hotpair);
    let pg = ctx
        .targets
        .iter()
        .position(|t| t.kind == super::target::Kind::Postgres);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "| query | rows | hotpair ms | PostgreSQL ms | ratio | rows equal? |"
    );
    let _ = writeln!(text, "|---|---:|---:|---:|---:|---|");
    let (mut hp_total, mut pg_total, mut both) = (0.0, 0.0, 0);
    let mut over_2x: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    for q in 1..=22 {
        let label = format!("Q{q}");
        let cell = |t: Option<usize>| -> (Option<f64>, String) {
            let Some(t) = t else {
                return (None, "n/a".into());
            };
            let o = &out[q - 1][t];
            match (&o.error, median(&o.ms)) {
                (Some(e), None) => (None, format!("error: {e}")),
                (_, Some(m)) => (Some(m), format!("{m:.0}")),
                (None, None) => (None, "not run".into()),
            }
        };
        let (hms, htext) = cell(hp);
        let (pms, ptext) = cell(pg);
        for (t, v) in [(hp, hms), (pg, pms)] {
            let Some(t) = t else { continue };
            let o = &out[q - 1][t];
            match (v, &o.error) {
                (Some(v), _) => table.set(&label, q as f64, t, Cell::Value(v, None)),
                (None, Some(e)) => table.set(&label, q as f64, t, Cell::Failed(e.clone())),
                _ => {}
            }
            if let Some(e) = &o.error {
                failures.push(format!("Q{q} on {}: {e}", ctx.targets[t].name));
            }
        }
        let rows_hp = hp.and_then(|t| out[q - 1][t].rows.clone());
        let rows_pg = pg.and_then(|t| out[q - 1][t].rows.clone());
        let equal = match (&rows_hp, &rows_pg) {
            (Some(a), Some(b)) => compare(a, b),
            (None, _) => hp
                .and_then(|t| out[q - 1][t].error.clone())
                .map(|e| format!("error: {e}"))
                .unwrap_or_else(|| "not run".into()),
            (_, None) => "no PostgreSQL result".into(),
        };
        let rows = rows_pg
            .as_ref()
            .or(rows_hp.as_ref())
            .map(|r| r.len().to_string())
            .unwrap_or_else(|| "-".into());
        let ratio = match (hms, pms) {
            (Some(a), Some(b)) if b > 0.0 => {
                hp_total += a;
                pg_total += b;
                both += 1;
                if a > 2.0 * b {
                    over_2x.push(format!("Q{q} {:.2}×", a / b));
                }
                format!("{:.2}", a / b)
            }
            _ => "-".into(),
        };
        let htext = if htext.starts_with("error") {
            "error".into()
        } else {
            htext
        };
        let ptext = if ptext.starts_with("error") {
            "error".into()
        } else {
            ptext
        };
        let _ = writeln!(
            text,
            "| Q{q} | {rows} | {htext} | {ptext} | {ratio} | {} |",
            equal.replace('|', "\\|")
        );
        if !equal.starts_with("yes") && rows_hp.is_some() && rows_pg.is_some() {
            table.set(
                &label,
                q as f64,
                hp.unwrap_or(0),
                Cell::Value(hms.unwrap_or(0.0), Some(format!("rows differ: {equal}"))),
            );
        }
    }
    let hp_failed = hp.map_or(0, |t| {
        (0..22)
            .filter(|&q| out[q][t].ms.is_empty() || out[q][t].error.is_some())
            .count()
    });
    let _ = writeln!(
        text,
        "| total ({both} queries both ran) | | {hp_total:.0} | {pg_total:.0} | {} | |",
        if pg_total > 0.0 {
            format!("{:.2}", hp_total / pg_total)
        } else {
            "-".into()
        }
    );
    let mut goals = String::new();
    let _ = writeln!(
        goals,
        "target total ≤ PostgreSQL's: {} ({} of 22 queries ran on hotpair; total {hp_total:.0} ms vs {pg_total:.0} ms over the {both} both ran)",
        if hp_failed == 0 && hp_total <= pg_total {
            "met"
        } else {
            "missed"
        },
        22 - hp_failed
    );
    let _ = writeln!(
        goals,
        "target no query worse than 2×: {}{}",
        if over_2x.is_empty() && hp_failed == 0 {
            "met"
        } else {
            "missed"
        },
        if over_2x.is_empty() {
            String::new()
        } else {
            format!(" (over 2×: {})", over_2x.join(", "))
        }
    );
    let mut report = String::new();
    let _ = writeln!(
        report,
        "TPC-H scale {sf} on the standbys (bench tpch --tpch-scale {sf})"
    );
    let _ = writeln!(report, "{}", super::sysinfo::Machine::read().describe());
    let _ = writeln!(
        report,
        "systems: {}",
        ctx.targets
            .iter()
            .map(|t| t.version.clone())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        report,
        "settings (both): {}, work_mem {WORK_MEM}, statement_timeout {} s; PostgreSQL otherwise at its defaults (parallel query on)",
        ctx.cfg.settings().shared_buffers,
        timeout.as_secs()
    );
    let _ = writeln!(
        report,
        "{rounds} interleaved rounds (hotpair, PostgreSQL per query), median ms; client wall time of the simple-query round trip, rows included\n"
    );
    report.push_str(&text);
    report.push('\n');
    report.push_str(&goals);
    if !failures.is_empty() {
        let _ = writeln!(report, "\nerrors (verbatim):");
        for f in &failures {
            let _ = writeln!(report, "  {f}");
        }
    }
    let _ = writeln!(report, "\nload:");
    for n in &notes {
        let _ = writeln!(report, "  {n}");
    }
    let _ = writeln!(report, "\nevery round (ms):");
    for q in 1..=22 {
        let runs = |t: Option<usize>| {
            t.map(|t| {
                out[q - 1][t]
                    .ms
                    .iter()
                    .map(|m| format!("{m:.0}"))
                    .collect::<Vec<_>>()
                    .join(" / ")
            })
            .unwrap_or_default()
        };
        let _ = writeln!(
            report,
            "  Q{q}: hotpair {} | PostgreSQL {}",
            runs(hp),
            runs(pg)
        );
    }
    println!("\n== TPC-H scale {sf} ==\n{report}");
    if let Some(dir) = &ctx.cfg.out {
        let suffix = if (sf - 0.1).abs() < 1e-9 {
            String::new()
        } else {
            format!("_sf{sf}")
        };
        let write = |name: String, body: &str| {
            let p = dir.join(name);
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&p, body)) {
                eprintln!("bench: tpch: write {}: {e}", p.display());
            } else {
                println!("tpch: wrote {}", p.display());
            }
        };
        write(format!("tpch_results{suffix}.txt"), &report);
        write(format!("tpch_explain{suffix}.txt"), &explain);
    }
    for n in notes {
        table.note(n);
    }
    table.note(goals.trim_end().replace('\n', "; "));
    vec![table]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_take_their_parameters() {
        let q11 = query_text(11, 0.1);
        assert!(q11.contains("* 0.001\n"), "fraction at scale 0.1: {q11}");
        assert!(!query_text(1, 1.0).contains("--"), "comment dropped");
    }

    #[test]
    fn comparison_names_the_difference() {
        let a = vec!["1|2.500000".to_string(), "2|3".to_string()];
        let b = vec!["1|2.5000000000".to_string(), "2|3".to_string()];
        assert_eq!(compare(&a, &a), "yes", "equal");
        assert_eq!(compare(&a, &b), "yes, to 2 decimals", "rounded");
        let c = vec!["2|3".to_string(), "1|2.500000".to_string()];
        assert_eq!(compare(&a, &c), "same rows, other order", "order");
        assert!(compare(&a, &a[..1]).starts_with("no: 2 rows vs 1"), "fewer");
    }
}
