//! A PostgreSQL 15 primary and streaming standby in the work directory.
//!
//! ```text
//! <work>/pg/                    owned by `postgres` (0700) when we run as root
//! ├── primary/                  initdb; postgresql.conf + the bench settings
//! ├── primary.log               pg_ctl -l
//! ├── standby/                  pg_basebackup -R -X stream (standby.signal,
//! │                             primary_conninfo in postgresql.auto.conf)
//! └── standby.log
//! ```
//!
//! PostgreSQL refuses to run as root, so when the bench runs as root every
//! PostgreSQL program (initdb, pg_ctl, pg_basebackup) is started with the
//! uid / gid of the `postgres` OS user (`CommandExt::uid`); otherwise as the
//! current user. Both servers listen on 127.0.0.1 only (no Unix socket) so
//! clients reach them exactly as they reach hotpair.
//!
//! [`PgPair`] is the guard: dropping it runs `pg_ctl stop -m fast` for each
//! running server (immediate if fast fails), and each server is registered
//! in [`super::cleanup`] while it runs so Ctrl-C stops it too.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::cleanup::{self, Action};
use super::Settings;
use crate::utils::free_port;

/// Where PostgreSQL 15's programs are: `HOTPAIR_BENCH_PG_BINDIR`, else
/// `/usr/lib/postgresql/15/bin` if it has `postgres`.
pub fn find_bindir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HOTPAIR_BENCH_PG_BINDIR") {
        return Some(PathBuf::from(dir));
    }
    let dir = PathBuf::from("/usr/lib/postgresql/15/bin");
    dir.join("postgres").is_file().then_some(dir)
}

/// The effective uid of this process (from /proc/self/status).
pub fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// uid and gid of the OS user `name`, from /etc/passwd.
pub fn os_user(name: &str) -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        if f.len() >= 4 && f[0] == name {
            Some((f[2].parse().ok()?, f[3].parse().ok()?))
        } else {
            None
        }
    })
}

/// One PostgreSQL server of the pair.
#[derive(Debug)]
pub struct PgServer {
    /// The data directory.
    pub data_dir: PathBuf,
    /// The server log (`pg_ctl -l`).
    pub log_path: PathBuf,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// Cleanup registration while running.
    cleanup_id: Option<u64>,
}

impl PgServer {
    /// A libpq connection string for the `postgres` user and database.
    pub fn connstr(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }
}

impl PgServer {
    /// The postmaster's pid (first line of `postmaster.pid`).
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data_dir.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// The last `n` lines of the server log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        crate::utils::tail(&text, n)
    }
}

/// A PostgreSQL primary and (when the base backup worked) its streaming
/// standby; stopped on drop.
pub struct PgPair {
    bindir: PathBuf,
    /// `Some((uid, gid))` when the programs run as `postgres`.
    user: Option<(u32, u32)>,
    /// The primary.
    pub primary: PgServer,
    /// The standby, or why there is none.
    pub standby: Result<PgServer, String>,
    /// `pg --version` of the server.
    pub version: String,
}

impl PgPair {
    /// Where both servers' Unix sockets are: the primary's data directory
    /// (the standby's configuration is a copy of the primary's; their
    /// socket files differ by port).
    pub fn socket_dir(&self) -> &Path {
        &self.primary.data_dir
    }

    /// initdb + start a primary with `settings`, then pg_basebackup and start
    /// a standby. A failed standby is recorded (`standby` = `Err`), a failed
    /// primary is an error.
    pub fn start(bindir: &Path, work_dir: &Path, settings: &Settings) -> Result<PgPair, String> {
        let user = match effective_uid() {
            Some(0) => Some(os_user("postgres").ok_or_else(|| {
                "running as root and there is no `postgres` OS user to run PostgreSQL as"
                    .to_string()
            })?),
            _ => None,
        };
        let root = work_dir.join("pg");
        std::fs::create_dir_all(&root).map_err(|e| format!("mkdir {}: {e}", root.display()))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", root.display()))?;
        }
        set_mode(&root, 0o700)?;

        let version = Command::new(bindir.join("postgres"))
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let mut pair = PgPair {
            bindir: bindir.to_path_buf(),
            user,
            primary: PgServer {
                data_dir: root.join("primary"),
                log_path: root.join("primary.log"),
                port: free_port(),
                cleanup_id: None,
            },
            standby: Err("not started".to_string()),
            version,
        };

        // 1. initdb and the primary's configuration.
        pair.run(
            "initdb",
            pair.command("initdb")
                .arg("-D")
                .arg(&pair.primary.data_dir)
                .args(crate::cluster::PG_INITDB_ARGS)
                .args(settings.data_checksums.then_some("-k")),
        )?;
        let conf = format!(
            "\n# Added by hotpair bench\n{}{}{}",
            where_to_listen(pair.primary.port, &pair.primary.data_dir),
            settings.conf_lines(),
            settings.tls_lines(true)
        );
        append(&pair.primary.data_dir.join("postgresql.conf"), &conf)?;
        // initdb trusts 127.0.0.1 only; the many-sessions workload connects
        // from 127.0.0.2 and up (hotpair's target adds the same line).
        append(
            &pair.primary.data_dir.join("pg_hba.conf"),
            "host all all 127.0.0.0/8 trust\nlocal all all trust\n",
        )?;
        // `connect` logs one role in with SCRAM: its line goes first.
        let hba = pair.primary.data_dir.join("pg_hba.conf");
        let old =
            std::fs::read_to_string(&hba).map_err(|e| format!("read {}: {e}", hba.display()))?;
        std::fs::write(
            &hba,
            format!(
                "host all {} 127.0.0.0/8 scram-sha-256\n{old}",
                super::workloads::SCRAM_ROLE
            ),
        )
        .map_err(|e| format!("write {}: {e}", hba.display()))?;

        // 2. Start it.
        pair.pg_ctl_start(false)?;

        // 3. The standby: base backup with -R, own port, start.
        if !settings.standby {
            pair.standby = Err("not started (--no-standby)".to_string());
            return Ok(pair);
        }
        let standby = PgServer {
            data_dir: root.join("standby"),
            log_path: root.join("standby.log"),
            port: free_port(),
            cleanup_id: None,
        };
        let backup = pair.run(
            "pg_basebackup",
            pair.command("pg_basebackup")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &pair.primary.port.to_string(),
                    "-U",
                    "postgres",
                ])
                .arg("-D")
                .arg(&standby.data_dir)
                .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]),
        );
        pair.standby = match backup {
            Err(e) => Err(format!("pg_basebackup failed: {e}")),
            Ok(()) => {
                append(
                    &standby.data_dir.join("postgresql.conf"),
                    &format!("\n# standby\nport = {}\n", standby.port),
                )?;
                Ok(standby)
            }
        };
        if pair.standby.is_ok() {
            if let Err(e) = pair.pg_ctl_start(true) {
                pair.standby = Err(e);
            }
        }
        Ok(pair)
    }

    /// A command for PostgreSQL program `prog`, run as `postgres` if needed,
    /// from the pg root directory (the caller's cwd may be unreadable).
    fn command(&self, prog: &str) -> Command {
        let root = self.primary.data_dir.parent().unwrap_or(Path::new("/"));
        command_as(&self.bindir, self.user, root, prog)
    }

    /// Runs `cmd`, mapping a failure to a message with its output.
    fn run(&self, what: &str, cmd: &mut Command) -> Result<(), String> {
        run_cmd(what, cmd).map(|_| ())
    }

    fn pg_ctl_start(&mut self, standby: bool) -> Result<(), String> {
        let (data_dir, log_path) = {
            let s = self.server(standby)?;
            (s.data_dir.clone(), s.log_path.clone())
        };
        let result = self.run(
            "pg_ctl start",
            self.command("pg_ctl")
                .args(["start", "-w", "-t", "300", "-D"])
                .arg(&data_dir)
                .arg("-l")
                .arg(&log_path),
        );
        if let Err(e) = result {
            let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(format!("{e}\nlog:\n{}", crate::utils::tail(&tail, 30)));
        }
        let id = cleanup::register(Action::PgStop {
            pg_ctl: self.bindir.join("pg_ctl"),
            data_dir,
            uid_gid: self.user,
        });
        self.server_mut(standby)?.cleanup_id = Some(id);
        Ok(())
    }

    fn server(&self, standby: bool) -> Result<&PgServer, String> {
        if standby {
            self.standby.as_ref().map_err(Clone::clone)
        } else {
            Ok(&self.primary)
        }
    }

    fn server_mut(&mut self, standby: bool) -> Result<&mut PgServer, String> {
        if standby {
            self.standby.as_mut().map_err(|e| e.clone())
        } else {
            Ok(&mut self.primary)
        }
    }

    /// Stops one server (`pg_ctl stop -m fast`, immediate if that fails).
    fn stop_server(&mut self, standby: bool) {
        let (data_dir, id) = match self.server_mut(standby) {
            Ok(s) => (s.data_dir.clone(), s.cleanup_id.take()),
            Err(_) => return,
        };
        let Some(id) = id else { return };
        let fast = self.run(
            "pg_ctl stop",
            self.command("pg_ctl")
                .args(["stop", "-m", "fast", "-w", "-t", "120", "-D"])
                .arg(&data_dir),
        );
        if let Err(e) = fast {
            eprintln!("bench: {e}; stopping immediately");
            let _ = self.run(
                "pg_ctl stop",
                self.command("pg_ctl")
                    .args(["stop", "-m", "immediate", "-w", "-D"])
                    .arg(&data_dir),
            );
        }
        cleanup::deregister(id);
    }

    /// Crashes the primary (`pg_ctl stop -m immediate`: every process
    /// exits at once, nothing is written) and starts it again, which runs
    /// crash recovery; returns the primary's log from the crash on.
    pub fn crash_restart_primary(&mut self) -> Result<String, String> {
        let data_dir = self.primary.data_dir.clone();
        let from = std::fs::metadata(&self.primary.log_path)
            .map(|m| m.len() as usize)
            .unwrap_or(0);
        self.run(
            "pg_ctl stop -m immediate",
            self.command("pg_ctl")
                .args(["stop", "-m", "immediate", "-w", "-D"])
                .arg(&data_dir),
        )?;
        if let Some(id) = self.primary.cleanup_id.take() {
            cleanup::deregister(id);
        }
        self.pg_ctl_start(false)?;
        let log = std::fs::read_to_string(&self.primary.log_path)
            .map_err(|e| format!("read {}: {e}", self.primary.log_path.display()))?;
        Ok(log.get(from..).unwrap_or("").to_string())
    }

    /// Stops both servers (standby first).
    pub fn stop(&mut self) {
        self.stop_server(true);
        self.stop_server(false);
    }
}

impl Drop for PgPair {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The only lines besides [`Settings::conf_lines`] either PostgreSQL gets:
/// where to listen. Everything else is PostgreSQL 15's default — streaming
/// needs nothing more (`wal_level = replica`, `max_wal_senders = 10` and
/// `hot_standby = on` are the defaults).
pub fn where_to_listen(port: u16, socket_dir: &Path) -> String {
    format!(
        "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n",
        socket_dir.display()
    )
}

/// The header line saying how PostgreSQL is configured.
pub fn defaults_line() -> String {
    "PostgreSQL: initdb -A trust -E UTF8 --locale=C (hotpair compares bytewise, as the C collation does), \
     then its defaults apart from the matched settings above and port / listen_addresses = '127.0.0.1' / \
     unix_socket_directories (the primary's data directory, for --unix) and pg_hba trusting 127.0.0.0/8 and local; the standby is pg_basebackup -R -X stream"
        .to_string()
}

/// PostgreSQL program `prog` from `bindir`, as `user` when given, run in
/// `root` (the caller's cwd may be unreadable to that user).
fn command_as(bindir: &Path, user: Option<(u32, u32)>, root: &Path, prog: &str) -> Command {
    let mut cmd = Command::new(bindir.join(prog));
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
        cmd.env("HOME", root);
    }
    cmd.current_dir(root);
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `cmd`; its stdout, or a message with its output.
fn run_cmd(what: &str, cmd: &mut Command) -> Result<String, String> {
    let out: Output = cmd
        .output()
        .map_err(|e| format!("could not run {what}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// One `max_connections` tried by [`probe_max_connections`].
#[derive(Clone, Debug)]
pub struct Probe {
    /// The value tried.
    pub max_connections: u32,
    /// `postgres -C shared_memory_size` for it, MB.
    pub shared_memory_mb: Option<u64>,
    /// Start-up time, or why it did not start (PostgreSQL's own words).
    pub result: Result<std::time::Duration, String>,
}

/// Starts (and stops) a fresh PostgreSQL primary with each of `counts` as
/// `max_connections` and `settings` otherwise, until one does not start.
/// A value whose shared memory would leave less than `min_avail_mib` of
/// MemAvailable is not started (the machine is shared): the reason is
/// recorded and the probe ends there.
pub fn probe_max_connections(
    bindir: &Path,
    work_dir: &Path,
    settings: &Settings,
    counts: &[u32],
    min_avail_mib: u64,
) -> Result<Vec<Probe>, String> {
    let user = match effective_uid() {
        Some(0) => Some(
            os_user("postgres")
                .ok_or_else(|| "running as root and there is no `postgres` OS user".to_string())?,
        ),
        _ => None,
    };
    let root = work_dir.join("pg-probe");
    std::fs::create_dir_all(&root).map_err(|e| format!("mkdir {}: {e}", root.display()))?;
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&root, Some(uid), Some(gid))
            .map_err(|e| format!("chown {}: {e}", root.display()))?;
    }
    set_mode(&root, 0o700)?;
    let data = root.join("data");
    let cmd = |prog: &str| command_as(bindir, user, &root, prog);
    run_cmd(
        "initdb",
        cmd("initdb")
            .arg("-D")
            .arg(&data)
            .args(crate::cluster::PG_INITDB_ARGS),
    )?;
    append(
        &data.join("postgresql.conf"),
        &format!(
            "\n# Added by hotpair bench\n{}{}",
            where_to_listen(free_port(), &data),
            settings.conf_lines()
        ),
    )?;
    let mut out = Vec::new();
    for &n in counts {
        let setting = format!("max_connections={n}");
        let shmem = run_cmd(
            "postgres -C shared_memory_size",
            cmd("postgres")
                .args(["-C", "shared_memory_size", "-D"])
                .arg(&data)
                .args(["-c", &setting]),
        );
        let shared_memory_mb = match &shmem {
            Ok(text) => text.trim().trim_end_matches("MB").trim().parse().ok(),
            Err(e) => {
                out.push(Probe {
                    max_connections: n,
                    shared_memory_mb: None,
                    result: Err(fatal_lines(e)),
                });
                break;
            }
        };
        let avail = super::sysinfo::meminfo_kib("MemAvailable").unwrap_or(0) / 1024;
        if let Some(mb) = shared_memory_mb {
            if avail < mb + min_avail_mib {
                out.push(Probe {
                    max_connections: n,
                    shared_memory_mb,
                    result: Err(format!(
                        "not started: {mb} MB of shared memory would leave less than {min_avail_mib} MiB of MemAvailable ({avail} MiB)"
                    )),
                });
                break;
            }
        }
        let log = root.join(format!("start-{n}.log"));
        let started = std::time::Instant::now();
        let r = run_cmd(
            "pg_ctl start",
            cmd("pg_ctl")
                .args(["start", "-w", "-t", "300", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-o", &format!("-c {setting}")]),
        );
        let elapsed = started.elapsed();
        // Registered even after a failed start: pg_ctl may have given up
        // waiting on a server that still comes up.
        let id = cleanup::register(Action::PgStop {
            pg_ctl: bindir.join("pg_ctl"),
            data_dir: data.clone(),
            uid_gid: user,
        });
        let _ = run_cmd(
            "pg_ctl stop",
            cmd("pg_ctl")
                .args(["stop", "-m", "fast", "-w", "-t", "120", "-D"])
                .arg(&data),
        );
        cleanup::deregister(id);
        let result = r.map(|_| elapsed).map_err(|e| {
            let logged = std::fs::read_to_string(&log).unwrap_or_default();
            let fatal = fatal_lines(&logged);
            if fatal.is_empty() {
                fatal_lines(&e)
            } else {
                fatal
            }
        });
        let failed = result.is_err();
        out.push(Probe {
            max_connections: n,
            shared_memory_mb,
            result,
        });
        if failed {
            break;
        }
    }
    Ok(out)
}

/// The FATAL / DETAIL / HINT lines of a PostgreSQL log or error output
/// (the whole text's last lines when it has none).
pub fn fatal_lines(text: &str) -> String {
    let picked: Vec<&str> = text
        .lines()
        .filter(|l| {
            ["FATAL:", "DETAIL:", "HINT:", "PANIC:"]
                .iter()
                .any(|k| l.contains(k))
        })
        .map(|l| l.split_once(']').map_or(l, |(_, rest)| rest).trim())
        .collect();
    if picked.is_empty() {
        crate::utils::tail(text.trim(), 3)
    } else {
        picked.join(" / ")
    }
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| format!("open {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("write {}: {e}", path.display()))
}

/// chmod.
pub fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

/// A PostgreSQL 15 primary to compare with, in a temporary directory
/// (under `base` when given: a test node's base directory, removed with
/// it): fsync off, 128MB of shared buffers, no standby. The directories are
/// opened to the `postgres` user PostgreSQL runs as when we are root. The
/// directory must outlive the pair: keep both.
pub fn try_start_reference(
    bindir: &Path,
    base: Option<&Path>,
    prefix: &str,
) -> Result<(tempfile::TempDir, PgPair), String> {
    let builder = {
        let mut b = tempfile::Builder::new();
        b.prefix(prefix);
        b
    };
    let work = match base {
        Some(b) => builder.tempdir_in(b),
        None => builder.tempdir(),
    }
    .map_err(|e| format!("temp dir for PostgreSQL: {e}"))?;
    for dir in base.into_iter().chain([work.path()]) {
        set_mode(dir, 0o755).map_err(|e| format!("chmod {}: {e}", dir.display()))?;
    }
    let settings = Settings {
        shared_buffers: "128MB".to_string(),
        fsync: false,
        synchronous_commit: false,
        max_connections: 20,
        max_prepared_transactions: 0,
        standby: false,
        data_checksums: false,
        tls: None,
    };
    let pair = PgPair::start(bindir, work.path(), &settings)
        .map_err(|e| format!("could not start PostgreSQL 15: {e}"))?;
    Ok((work, pair))
}

/// [`try_start_reference`] for a test, under the node directory `base`
/// (panics on failure).
pub fn start_reference(bindir: &Path, base: &Path, prefix: &str) -> (tempfile::TempDir, PgPair) {
    try_start_reference(bindir, Some(base), prefix).unwrap_or_else(|e| panic!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_fatal_lines() {
        let log = "2026-12-02 02:44:15.995 UTC [19091] LOG:  starting\n\
                   2026-12-02 02:44:15.996 UTC [19091] FATAL:  could not map anonymous shared memory: Cannot allocate memory\n\
                   2026-12-02 02:44:15.996 UTC [19091] HINT:  This error usually means that PostgreSQL's request exceeded\n";
        assert_eq!(
            fatal_lines(log),
            "FATAL:  could not map anonymous shared memory: Cannot allocate memory / HINT:  This error usually means that PostgreSQL's request exceeded"
        );
        assert_eq!(
            fatal_lines("postgres: invalid value\n"),
            "postgres: invalid value"
        );
    }
}
