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
    for sub in ["primary", "standby"] {
        if let Err(e) = std::fs::create_dir_all(a.dir.join(sub)) {
            eprintln!("could not create {}: {e}", a.dir.join(sub).display());
            std::process::exit(1);
        }
    }
    let plog = a.dir.join("primary.log");
    let slog = a.dir.join("standby.log");
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
    // The slot may already exist from an earlier run: ignore failure.
    let _ = Command::new("psql")
        .args([
            "-XAtq",
            "-h",
            "127.0.0.1",
            "-p",
            &a.primary_port.to_string(),
            "-U",
            "postgres",
            "-d",
            "replication=true",
            "-c",
            &format!("CREATE_REPLICATION_SLOT {} PHYSICAL RESERVE_WAL", a.slot),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let sdata = a.dir.join("standby").display().to_string();
    let mut standby = match spawn(
        "standby",
        &[
            "-D".into(),
            sdata,
            "-p".into(),
            a.standby_port.to_string(),
            "--primary-conninfo".into(),
            format!(
                "host=127.0.0.1 port={} application_name=pair_standby",
                a.primary_port
            ),
            "--slot".into(),
            a.slot.clone(),
        ],
        &slog,
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("could not start standby: {e}");
            stop(&mut primary, "primary");
            std::process::exit(1);
        }
    };
    if !wait_ready(&slog, "ready to accept read-only connections", &mut standby) {
        eprintln!("standby not ready; see {}", slog.display());
        stop(&mut standby, "standby");
        stop(&mut primary, "primary");
        std::process::exit(1);
    }
    println!(
        "primary: psql -h 127.0.0.1 -p {} -U postgres",
        a.primary_port
    );
    println!(
        "standby: psql -h 127.0.0.1 -p {} -U postgres",
        a.standby_port
    );
    println!("logs: {} {}", plog.display(), slog.display());
    println!("Ctrl-C stops both.");
    rt.block_on(async {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    });
    println!("stopping the standby, then the primary");
    let ok = stop(&mut standby, "standby") & stop(&mut primary, "primary");
    if !ok {
        std::process::exit(1);
    }
    println!("both stopped");
}
