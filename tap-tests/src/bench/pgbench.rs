//! Running pgbench and reading its summary.
//!
//! Every run has a deadline: the benchmark duration plus a margin for
//! connecting (hundreds of clients) and ending; past it the process is
//! killed and the run is an error — a server that stops answering must not
//! hang the whole benchmark. stdout and stderr are drained by two threads so
//! a chatty pgbench never blocks on a full pipe.
//!
//! The summary is pgbench 15's (`tps = N (without initial connection
//! time)`), with older spellings accepted (`excluding connections
//! establishing`), and `-C`'s `including reconnection times`. Where several
//! tps lines are printed, the one without connection time wins.
//!
//! pgbench's own CPU is measured for every run ([`Output::cpu_usec`]): a
//! reader must see when the client, not the server, is the limit. With
//! cgroups each pgbench is started inside the bench's `pgbench` cgroup
//! (through `sh -c 'echo $$ > cgroup.procs; exec pgbench …'`, so it is
//! counted from its first instruction); without, the bench's
//! reaped-children time around the run is the measure.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The pgbench executable: `HOTPAIR_BENCH_PGBENCH`, else `pgbench` on PATH,
/// else PostgreSQL 15's bindir. `None` if none runs.
pub fn pgbench_path() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("HOTPAIR_BENCH_PGBENCH") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec![
            PathBuf::from("pgbench"),
            PathBuf::from("/usr/lib/postgresql/15/bin/pgbench"),
        ],
    };
    candidates.into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// What pgbench printed at the end of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Transactions per second (without connection time when printed).
    pub tps: f64,
    /// The words in parentheses after the tps figure.
    pub tps_kind: String,
    /// "number of transactions actually processed".
    pub processed: u64,
    /// "number of failed transactions" (0 when not printed).
    pub failed: u64,
    /// "total number of retries" (with `--max-tries`; 0 when not printed):
    /// serialization and deadlock failures pgbench retried.
    pub retries: u64,
    /// "latency average = X ms".
    pub latency_ms: Option<f64>,
    /// pgbench's own CPU during the run, µs.
    pub client_cpu_usec: Option<u64>,
    /// The server system's CPU during the run, µs (filled by the caller,
    /// who knows which system ran it).
    pub server_cpu_usec: Option<u64>,
}

impl Summary {
    /// Server CPU per transaction, µs.
    pub fn server_us_per_txn(&self) -> Option<f64> {
        per_txn(self.server_cpu_usec, self.processed)
    }

    /// pgbench's CPU per transaction, µs.
    pub fn client_us_per_txn(&self) -> Option<f64> {
        per_txn(self.client_cpu_usec, self.processed)
    }
}

fn per_txn(usec: Option<u64>, processed: u64) -> Option<f64> {
    (processed > 0).then(|| usec.map(|u| u as f64 / processed as f64))?
}

/// A finished pgbench process.
#[derive(Clone, Debug)]
pub struct Output {
    /// Exit status code (`None`: killed by a signal or by the deadline).
    pub status: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall-clock time of the whole process.
    pub elapsed: Duration,
    /// True when the deadline killed it.
    pub timed_out: bool,
    /// pgbench's CPU time (user + system, all threads), µs.
    pub cpu_usec: Option<u64>,
}

impl Output {
    /// The last lines of stderr (then stdout), for an error message.
    pub fn error_tail(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        crate::utils::tail(text.trim(), 6)
    }
}

/// Runs pgbench with `args` (connection arguments included by the caller),
/// killing it after `deadline`. An error only if it could not be started.
pub fn run_raw(
    pgbench: &std::path::Path,
    args: &[String],
    deadline: Duration,
) -> Result<Output, String> {
    if super::cleanup::interrupted() {
        return Err("interrupted".to_string());
    }
    let group = super::cgroup::group("pgbench");
    let cpu_now = || match &group {
        Some(g) => g.usage_usec(),
        None => super::cgroup::reaped_children_usec(),
    };
    let cpu_before = cpu_now();
    let start = Instant::now();
    let mut cmd = match &group {
        Some(g) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg("echo $$ > \"$0\" && exec \"$@\"")
                .arg(g.path.join("cgroup.procs"))
                .arg(pgbench);
            c
        }
        None => Command::new(pgbench),
    };
    let mut child = cmd
        .args(args)
        .env("PGCONNECT_TIMEOUT", "60")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run {}: {e}", pgbench.display()))?;
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out_t = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err_t = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st.code(),
            Ok(None) if start.elapsed() < deadline && !super::cleanup::interrupted() => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                timed_out = true;
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let elapsed = start.elapsed();
    let cpu_usec = cpu_before.and_then(|b| Some(cpu_now()?.saturating_sub(b)));
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr,
        elapsed,
        timed_out,
        cpu_usec,
    })
}

/// Runs a benchmark pgbench and parses its summary. Errors: could not
/// start, timed out, non-zero exit, or no tps line — each with pgbench's
/// last words.
pub fn run(
    pgbench: &std::path::Path,
    args: &[String],
    deadline: Duration,
) -> Result<Summary, String> {
    let out = run_raw(pgbench, args, deadline)?;
    if out.timed_out {
        return Err(format!(
            "pgbench killed after {:?} (no answer)\n{}",
            deadline,
            out.error_tail()
        ));
    }
    if out.status != Some(0) {
        return Err(format!(
            "pgbench exited with {:?}: {}",
            out.status,
            out.error_tail()
        ));
    }
    let mut summary = parse(&out.stdout).ok_or_else(|| {
        if out.stdout.contains("actually processed: 0") {
            "no transaction completed during the run (connection start-up took all of it)"
                .to_string()
        } else {
            format!("no tps in pgbench's output: {}", out.error_tail())
        }
    })?;
    summary.client_cpu_usec = out.cpu_usec;
    Ok(summary)
}

/// Parses pgbench's end-of-run summary; `None` without a tps line.
pub fn parse(stdout: &str) -> Option<Summary> {
    let mut s = Summary::default();
    let mut best_tps: Option<(f64, String, u8)> = None;
    for line in stdout.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            s.processed = leading_number(rest).map(|v| v as u64).unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            s.failed = leading_number(rest).map(|v| v as u64).unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("total number of retries:") {
            s.retries = leading_number(rest).map(|v| v as u64).unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("latency average =") {
            s.latency_ms = leading_number(rest);
        } else if let Some(rest) = line.strip_prefix("tps =") {
            let Some(tps) = leading_number(rest) else {
                continue;
            };
            let kind = rest
                .split_once('(')
                .and_then(|(_, k)| k.strip_suffix(')'))
                .unwrap_or("")
                .to_string();
            // Preference: without connection time > anything else.
            let rank = if kind.contains("without") || kind.contains("excluding") {
                2
            } else {
                1
            };
            if best_tps.as_ref().is_none_or(|(_, _, r)| rank > *r) {
                best_tps = Some((tps, kind, rank));
            }
        }
    }
    let (tps, kind, _) = best_tps?;
    s.tps = tps;
    s.tps_kind = kind;
    Some(s)
}

/// The number at the start of `text` (after spaces), e.g. `" 12.5 ms"` → 12.5.
fn leading_number(text: &str) -> Option<f64> {
    let t = text.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .unwrap_or(t.len());
    t[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pgbench_15_summary() {
        let out = "pgbench (15.4 (Debian 15.4-1))\ntransaction type: <builtin: select only>\nscaling factor: 1\nquery mode: prepared\nnumber of clients: 8\nnumber of threads: 2\nmaximum number of tries: 1\nduration: 1 s\nnumber of transactions actually processed: 41234\nnumber of failed transactions: 3 (0.007%)\nlatency average = 0.193 ms\ninitial connection time = 11.021 ms\ntps = 41357.310322 (without initial connection time)\n";
        let s = parse(out).expect("summary");
        assert_eq!(s.processed, 41234);
        assert_eq!(s.failed, 3);
        assert_eq!(s.latency_ms, Some(0.193));
        assert!((s.tps - 41357.310322).abs() < 1e-6);
        assert_eq!(s.tps_kind, "without initial connection time");
        assert_eq!(s.server_us_per_txn(), None);
    }

    #[test]
    fn cpu_per_transaction() {
        let s = Summary {
            processed: 1000,
            server_cpu_usec: Some(25_000),
            client_cpu_usec: Some(8_000),
            ..Summary::default()
        };
        assert_eq!(s.server_us_per_txn(), Some(25.0));
        assert_eq!(s.client_us_per_txn(), Some(8.0));
        let none = Summary { processed: 0, ..s };
        assert_eq!(none.server_us_per_txn(), None);
    }

    #[test]
    fn prefers_excluding_connections_in_old_output() {
        let out = "number of transactions actually processed: 200/200\ntps = 100.5 (including connections establishing)\ntps = 120.25 (excluding connections establishing)\n";
        let s = parse(out).expect("summary");
        assert_eq!(s.processed, 200);
        assert_eq!(s.tps, 120.25);
    }

    #[test]
    fn no_tps_is_none() {
        assert_eq!(parse("pgbench: error: connection refused\n"), None);
    }
}
