//! `cargo run --release --bin pair`: a primary on 15432 and a hot standby
//! on 15433 under `./pair-data` (flags change both), the psql commands to
//! reach them printed, both stopped on Ctrl-C (SIGINT), started again from
//! the existing data on the next run.
//!
//! The primary's data directory is `DIR/primary`, the standby's
//! `DIR/standby`; an empty standby directory takes a base backup of the
//! primary at its first start. Logs go to `DIR/primary.log` and
//! `DIR/standby.log`.

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
    let exe = std::env::current_exe()?;
    let dir = exe.parent().map(|p| p.to_path_buf()).unwrap_or_default();
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let f2 = f.try_clone()?;
    Command::new(dir.join(bin))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(f))
        .stderr(Stdio::from(f2))
        .spawn()
}

fn wait_ready(log: &std::path::Path, what: &str, child: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline {
        if std::fs::read_to_string(log).is_ok_and(|s| s.contains(what)) {
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

fn main() {
    let a = Args::parse();
    let _ = std::fs::create_dir_all(a.dir.join("primary"));
    let _ = std::fs::create_dir_all(a.dir.join("standby"));
    let plog = a.dir.join("primary.log");
    let slog = a.dir.join("standby.log");
    let _ = std::fs::write(&plog, "");
    let _ = std::fs::write(&slog, "");
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
        let _ = primary.kill();
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
            let _ = primary.kill();
            std::process::exit(1);
        }
    };
    if !wait_ready(&slog, "ready to accept read-only connections", &mut standby) {
        eprintln!("standby not ready; see {}", slog.display());
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
    // Ctrl-C reaches the whole foreground process group: both servers get
    // SIGINT (a fast shutdown) and we wait for them.
    let _ = standby.wait();
    let _ = primary.wait();
}
