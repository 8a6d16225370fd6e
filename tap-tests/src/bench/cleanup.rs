//! What must be stopped and removed when the program ends — normally, by a
//! panic, or by Ctrl-C / SIGTERM.
//!
//! Normal and panicking exits are covered by guards' `Drop` (a
//! [`crate::Node`] kills its server, [`super::pg::PgPair`] runs
//! `pg_ctl stop`, the work directory is a `TempDir`). A signal skips every
//! `Drop`, so each guard also *registers* what it owns here, and the signal
//! handler ([`install_signal_handler`]) runs [`run_all`]: SIGKILL to
//! registered processes, `pg_ctl stop -m immediate` for registered
//! PostgreSQL data directories, then removal of the bench's cgroups and of
//! the registered directories — in that order, because neither a cgroup
//! with live processes nor a data directory a server still writes into can
//! be removed. Guards deregister when they clean up
//! themselves, so nothing is done twice.
//!
//! One mutex guards the registry; it is never held while a guard's own
//! cleanup runs.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// One thing to undo.
#[derive(Clone, Debug)]
pub enum Action {
    /// A server process to SIGKILL.
    Kill(u32),
    /// A PostgreSQL data directory to `pg_ctl stop -m immediate`: the
    /// command to run (already set up to run as the right user).
    PgStop {
        /// `pg_ctl` path.
        pg_ctl: PathBuf,
        /// The data directory.
        data_dir: PathBuf,
        /// The OS user to run it as (`None`: the current user).
        uid_gid: Option<(u32, u32)>,
    },
    /// A directory to remove recursively.
    RemoveDir(PathBuf),
    /// The bench's cgroup tree ([`super::cgroup`]), removed once the
    /// processes in it are gone.
    RemoveCgroup(PathBuf),
}

static REGISTRY: Mutex<Vec<(u64, Action)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// True once Ctrl-C / SIGTERM arrived: no new pgbench starts, running ones
/// are killed, and failures are no longer printed (they are the teardown's).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Registers `action`; returns the id to [`deregister`] it with.
pub fn register(action: Action) -> u64 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((id, action));
    id
}

/// Forgets the action `id` (its owner cleaned up itself).
pub fn deregister(id: u64) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(i, _)| *i != id);
}

/// Forgets every action `f` matches.
pub fn deregister_where(f: impl Fn(&Action) -> bool) {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|(_, a)| !f(a));
}

/// Runs every registered action (processes first, then PostgreSQL stops,
/// then cgroups and directories) and empties the registry.
pub fn run_all() {
    let actions: Vec<Action> = {
        let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        reg.drain(..).map(|(_, a)| a).collect()
    };
    for a in &actions {
        if let Action::Kill(pid) = a {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
    for a in &actions {
        if let Action::PgStop {
            pg_ctl,
            data_dir,
            uid_gid,
        } = a
        {
            let mut cmd = Command::new(pg_ctl);
            cmd.args(["stop", "-m", "immediate", "-w", "-D"])
                .arg(data_dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            if let Some((uid, gid)) = uid_gid {
                use std::os::unix::process::CommandExt;
                cmd.uid(*uid).gid(*gid);
            }
            let _ = cmd.status();
        }
    }
    for a in &actions {
        if let Action::RemoveCgroup(path) = a {
            // pg_ctl stop -m immediate returns once the postmaster is gone;
            // its children may take a moment longer to leave the cgroup.
            if let Err(e) = super::cgroup::remove_tree(path, std::time::Duration::from_secs(10)) {
                eprintln!("bench: {e}");
            }
        }
    }
    for a in &actions {
        if let Action::RemoveDir(dir) = a {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Called by the main thread when it sees [`interrupted`]: waits for the
/// handler to finish the cleanup and exit the process.
pub fn park_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Installs a Ctrl-C / SIGTERM handler on the harness runtime that prints
/// a line, runs [`run_all`] and exits with 130 (SIGINT) or 143 (SIGTERM).
pub fn install_signal_handler() {
    use tokio::signal::unix::{signal, SignalKind};
    crate::runtime().spawn(async {
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            eprintln!("bench: could not install signal handlers; Ctrl-C may leave servers running");
            return;
        };
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        INTERRUPTED.store(true, Ordering::Relaxed);
        eprintln!("\nbench: interrupted; stopping servers and removing the work directory");
        // The cleanup runs external commands; keep it off the runtime threads.
        let _ = tokio::task::spawn_blocking(run_all).await;
        std::process::exit(code);
    });
}
