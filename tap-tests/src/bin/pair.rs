//! `cargo run --release --bin pair`: a primary on 15432 and a hot standby
//! on 15433 under `./pair-data` (flags change both), the psql commands to
//! reach them printed, both stopped on Ctrl-C (SIGINT), started again from
//! the existing data on the next run.
//!
//! The primary's data directory is `DIR/primary`, the standby's
//! `DIR/standby`; an empty standby directory takes a base backup of the
//! primary at its first start, through the physical slot `--slot` (created
//! on the primary if missing, so the primary keeps the WAL a stopped
//! standby still needs). Logs are appended to `DIR/primary.log` and
//! `DIR/standby.log`.
//!
//! `--standbys N` runs N standbys: standby k > 1 in `DIR/standby_k`, port
//! `--standby-port + k - 1`, slot `SLOT_k`, application_name
//! `pair_standby_k` (the first keeps the names above). `--cascade` makes
//! the last of them (N ≥ 2) a standby of the first, with its slot there.
//! `--sync` makes the primary's directly attached standbys synchronous
//! (`synchronous_standby_names = 'FIRST 1 (…)'` in the listed order,
//! through ALTER SYSTEM; a run without `--sync` resets it).
//!
//! Stopping: Ctrl-C sends SIGINT to the whole foreground process group,
//! SIGTERM only to `pair`; either way `pair` sends SIGINT (a fast shutdown)
//! to the standby, waits for it, then to the primary, and exits 0 once both
//! exited cleanly. The servers are found next to this executable; the
//! first start builds them there (`cargo build --release -p primary -p
//! standby`, a no-op when they are up to date), so a fresh checkout's
//! `cargo run --release --bin pair` works.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;

/// Command line of `pair`.
#[derive(Parser, Debug)]
#[command(name = "pair", about = "run a hotpair primary and hot standby")]
struct Args {
    /// Directory holding both data directories and logs.
    #[arg(long, default_value = "pair-data")]
    dir: PathBuf,
    /// Primary port.
    #[arg(long, default_value_t = 15432)]
    primary_port: u16,
    /// Standby port.
    #[arg(long, default_value_t = 15433)]
    standby_port: u16,
    /// Replication slot used by the standby.
    #[arg(long, default_value = "pair_standby")]
    slot: String,
    /// Number of standbys.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=32))]
    standbys: u16,
    /// The last standby streams from the first (needs --standbys 2 or more).
    #[arg(long)]
    cascade: bool,
    /// Synchronous replication to the standbys attached to the primary.
    #[arg(long)]
    sync: bool,
}

/// One standby of the run.
struct StandbySpec {
    /// `standby`, `standby_2`, …: its directory and log under DIR.
    name: String,
    port: u16,
    slot: String,
    application_name: String,
    /// Port of the node it streams from.
    upstream_port: u16,
    /// Upstream's name, for the printed line.
    upstream: String,
}

/// The standbys `a` asks for.
fn standby_specs(a: &Args) -> Vec<StandbySpec> {
    let n = a.standbys;
    (1..=n)
        .map(|k| {
            let (name, slot, application_name) = if k == 1 {
                (
                    "standby".to_string(),
                    a.slot.clone(),
                    "pair_standby".to_string(),
                )
            } else {
                (
                    format!("standby_{k}"),
                    format!("{}_{k}", a.slot),
                    format!("pair_standby_{k}"),
                )
            };
            let cascaded = a.cascade && k == n && n >= 2;
            StandbySpec {
                name,
                port: a.standby_port.saturating_add(k - 1),
                slot,
                application_name,
                upstream_port: if cascaded {
                    a.standby_port
                } else {
                    a.primary_port
                },
                upstream: if cascaded { "standby" } else { "primary" }.to_string(),
            }
        })
        .collect()
}

/// Runs one statement with psql on `port` (`replication` connects with
/// `replication=true`); true on success.
fn psql(port: u16, replication: bool, sql: &str) -> bool {
    let db = if replication {
        "replication=true"
    } else {
        "postgres"
    };
    Command::new("psql")
        .args([
            "-XAtq",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "-d",
            db,
            "-c",
            sql,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn spawn(bin: &str, args: &[String], log: &std::path::Path) -> std::io::Result<Child> {
    // Next to this executable, built (or brought up to date) first: a
    // fresh checkout's `cargo run --release --bin pair` builds only pair.
    let dir = tap_tests::binaries::bin_dir();
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let from = f.metadata().map(|m| m.len()).unwrap_or(0);
    READY_FROM.with(|r| r.set(from));
    let f2 = f.try_clone()?;
    Command::new(dir.join(bin))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(f))
        .stderr(Stdio::from(f2))
        .spawn()
}

thread_local! {
    /// Log size when the last server was spawned: readiness is looked for
    /// after it (the logs keep earlier runs).
    static READY_FROM: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn wait_ready(log: &std::path::Path, what: &str, child: &mut Child) -> bool {
    let from = READY_FROM.with(|r| r.get()) as usize;
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline {
        let text = std::fs::read(log).unwrap_or_default();
        if String::from_utf8_lossy(&text[from.min(text.len())..]).contains(what) {
            return true;
        }
        if let Ok(Some(st)) = child.try_wait() {
            eprintln!("server exited ({st}); see {}", log.display());
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Sends SIGINT to `child` (kill(1): the workspace has no libc) and waits
/// for it; true if it exited with success.
fn stop(child: &mut Child, name: &str) -> bool {
    if let Ok(Some(st)) = child.try_wait() {
        eprintln!("{name} had already exited ({st})");
        return st.success();
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    match child.wait() {
        Ok(st) => {
            if !st.success() {
                eprintln!("{name} exited with {st}");
            }
            st.success()
        }
        Err(e) => {
            eprintln!("could not wait for {name}: {e}");
            false
        }
    }
}

fn main() {
    let a = Args::parse();
    // Signal handlers first, so a Ctrl-C during start-up still stops both.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("could not start the runtime: {e}");
            std::process::exit(1);
        }
    };
    let signals = rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        Ok::<_, std::io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    });
    let (mut int, mut term) = match signals {
        Ok(s) => s,
        Err(e) => {
            eprintln!("could not install signal handlers: {e}");
            std::process::exit(1);
        }
    };
    if a.cascade && a.standbys < 2 {
        eprintln!("--cascade needs --standbys 2 or more");
        std::process::exit(2);
    }
    let specs = standby_specs(&a);
    for sub in std::iter::once("primary").chain(specs.iter().map(|s| s.name.as_str())) {
        if let Err(e) = std::fs::create_dir_all(a.dir.join(sub)) {
            eprintln!("could not create {}: {e}", a.dir.join(sub).display());
            std::process::exit(1);
        }
    }
    let plog = a.dir.join("primary.log");
    let pdata = a.dir.join("primary").display().to_string();
    let mut primary = match spawn(
        "primary",
        &["-D".into(), pdata, "-p".into(), a.primary_port.to_string()],
        &plog,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("could not start primary (build it with cargo build --release): {e}");
            std::process::exit(1);
        }
    };
    if !wait_ready(&plog, "ready to accept connections", &mut primary) {
        stop(&mut primary, "primary");
        std::process::exit(1);
    }
    let names: Vec<&str> = specs
        .iter()
        .filter(|s| s.upstream == "primary")
        .map(|s| s.application_name.as_str())
        .collect();
    let sync_sql = if a.sync {
        format!(
            "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 ({})'",
            names.join(", ")
        )
    } else {
        "ALTER SYSTEM RESET synchronous_standby_names".to_string()
    };
    if !(psql(a.primary_port, false, &sync_sql)
        && psql(a.primary_port, false, "SELECT pg_reload_conf()"))
    {
        eprintln!(
            "could not set synchronous_standby_names on the primary; see {}",
            plog.display()
        );
    }
    // Started in order: a cascaded standby's upstream (the first) is up
    // before it.
    let mut running: Vec<(Child, String)> = Vec::new();
    let stop_all = |running: &mut Vec<(Child, String)>, primary: &mut Child| {
        let mut ok = true;
        while let Some((mut c, name)) = running.pop() {
            ok &= stop(&mut c, &name);
        }
        ok & stop(primary, "primary")
    };
    for spec in &specs {
        // The slot may already exist from an earlier run: ignore failure.
        psql(
            spec.upstream_port,
            true,
            &format!("CREATE_REPLICATION_SLOT {} PHYSICAL RESERVE_WAL", spec.slot),
        );
        let log = a.dir.join(format!("{}.log", spec.name));
        let data = a.dir.join(&spec.name).display().to_string();
        let child = spawn(
            "standby",
            &[
                "-D".into(),
                data,
                "-p".into(),
                spec.port.to_string(),
                "--primary-conninfo".into(),
                format!(
                    "host=127.0.0.1 port={} application_name={}",
                    spec.upstream_port, spec.application_name
                ),
                "--slot".into(),
                spec.slot.clone(),
            ],
            &log,
        );
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                eprintln!("could not start {}: {e}", spec.name);
                stop_all(&mut running, &mut primary);
                std::process::exit(1);
            }
        };
        if !wait_ready(&log, "ready to accept read-only connections", &mut child) {
            eprintln!("{} not ready; see {}", spec.name, log.display());
            running.push((child, spec.name.clone()));
            stop_all(&mut running, &mut primary);
            std::process::exit(1);
        }
        running.push((child, spec.name.clone()));
    }
    println!(
        "primary: psql -h 127.0.0.1 -p {} -U postgres",
        a.primary_port
    );
    for spec in &specs {
        let how = match (spec.upstream.as_str(), a.sync) {
            ("primary", true) => " (synchronous candidate)".to_string(),
            ("primary", false) => String::new(),
            (up, _) => format!(" (cascading from {up})"),
        };
        println!(
            "{}: psql -h 127.0.0.1 -p {} -U postgres{how}",
            spec.name, spec.port
        );
    }
    let logs: Vec<String> = std::iter::once(plog.display().to_string())
        .chain(
            specs
                .iter()
                .map(|s| a.dir.join(format!("{}.log", s.name)).display().to_string()),
        )
        .collect();
    println!("logs: {}", logs.join(" "));
    println!("Ctrl-C stops all.");
    rt.block_on(async {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    });
    println!("stopping the standbys, then the primary");
    if !stop_all(&mut running, &mut primary) {
        std::process::exit(1);
    }
    println!("all stopped");
}
