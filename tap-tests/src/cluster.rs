//! [`Node`]: one server process under test, after `PostgreSQL::Test::Cluster`.
//!
//! A node owns a per-test directory, a free port, its data directory and its
//! server log:
//!
//! ```text
//! <target>/tap-tmp/<name>_XXXXXX/      removed on success, kept on panic
//! ├── pgdata/                          the data directory (-D)
//! │   └── hotpair.conf                 written by init / append_conf
//! └── <name>.log                       server stdout + stderr, appended across restarts
//! ```
//!
//! Life cycle: `Node::new(name)` → `init(allows_streaming)` → `append_conf`
//! → `start()` (spawns `primary -D pgdata -p PORT`, waits until the log says
//! "database system is ready to accept connections" or "… ready to accept
//! read-only connections") → queries → `stop(mode)` / `restart()` /
//! `kill9()`; dropping the node kills a still running server.
//!
//! Every method takes `&self` (the child process sits behind a mutex), so a
//! node can be shared with sessions and threads without `mut` ceremony, the
//! way a Perl test passes `$node_primary` around.
//!
//! Query helpers:
//! * [`Node::safe_sql`] / [`Node::sql`]: a fresh native connection per call,
//!   simple query protocol, output as `psql -XAt` prints it.
//! * [`Node::psql`]: the real psql binary, `psql -XAtq -v ON_ERROR_STOP=1 -f -`
//!   fed the SQL on stdin, returning (exit status, stdout, stderr) like
//!   Cluster.pm's `psql`.
//! * [`Node::poll_query_until`]: repeats a query until its output equals the
//!   expected text (`t` by default in Perl; explicit here).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use crate::binaries;
use crate::psql::{run_program, run_psql, PsqlOutput, PsqlSession};
use crate::raw::RawConnection;
use crate::session::{one_shot, Session, SqlError};

/// How every PostgreSQL cluster of the tests and the bench is made: trust
/// (loopback only), superuser `postgres`, UTF8 and the C locale (hotpair
/// compares text bytewise), no fsync of the new files.
pub const PG_INITDB_ARGS: [&str; 8] = [
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
];
use crate::utils::{free_port, tail, timeout_default, POLL_INTERVAL};

/// Log lines that mean a server is up.
const READY_MESSAGES: [&str; 2] = [
    "database system is ready to accept connections",
    "database system is ready to accept read-only connections",
];

/// How `stop` ends the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopMode {
    /// SIGTERM (hotpair) / SIGINT (PostgreSQL): end sessions, write what must
    /// be written, exit cleanly.
    Fast,
    /// SIGKILL: no shutdown work at all (a crash, as far as the data
    /// directory is concerned).
    Immediate,
}

impl From<&str> for StopMode {
    /// `"fast"` or `"immediate"`, as `pg_ctl -m`.
    fn from(mode: &str) -> StopMode {
        match mode {
            "fast" | "smart" => StopMode::Fast,
            "immediate" => StopMode::Immediate,
            other => panic!("unknown stop mode {other:?} (fast, immediate)"),
        }
    }
}

/// Which server program a node runs.
#[derive(Clone, Debug)]
enum Flavor {
    /// hotpair's `primary` binary.
    Hotpair,
    /// Real PostgreSQL from this bindir (reference mode).
    Postgres(PathBuf),
}

/// One server under test.
pub struct Node {
    name: String,
    port: u16,
    host: String,
    flavor: Flavor,
    /// The per-test directory; `None` once kept or removed.
    base: Mutex<Option<tempfile::TempDir>>,
    base_path: PathBuf,
    data_dir: PathBuf,
    log_path: PathBuf,
    child: Mutex<Option<Child>>,
    /// For a standby: the primary's conninfo and the slot (run `standby`).
    upstream: Mutex<Option<(String, Option<String>)>>,
    /// Extra environment of the server process ([`Node::set_env`]).
    env: Mutex<Vec<(String, String)>>,
}

impl Node {
    /// A new node: a free port and an empty per-test directory. Nothing runs
    /// yet; call [`init`](Self::init) then [`start`](Self::start).
    pub fn new(name: &str) -> Node {
        let flavor = match std::env::var_os("HOTPAIR_TAP_POSTGRES_BINDIR") {
            Some(dir) => Flavor::Postgres(PathBuf::from(dir)),
            None => Flavor::Hotpair,
        };
        let root = match std::env::var_os("HOTPAIR_TAP_TMPDIR") {
            Some(dir) => PathBuf::from(dir),
            None => binaries::target_dir().join("tap-tmp"),
        };
        std::fs::create_dir_all(&root).unwrap_or_else(|e| {
            panic!(
                "could not create test directory root {}: {e}",
                root.display()
            )
        });
        let base = tempfile::Builder::new()
            .prefix(&format!("{name}_"))
            .tempdir_in(&root)
            .unwrap_or_else(|e| {
                panic!("could not create a directory under {}: {e}", root.display())
            });
        let base_path = base.path().to_path_buf();
        let port = free_port();
        let node = Node {
            name: name.to_string(),
            port,
            host: "127.0.0.1".to_string(),
            flavor,
            base: Mutex::new(Some(base)),
            data_dir: base_path.join("pgdata"),
            log_path: base_path.join(format!("{name}.log")),
            base_path,
            child: Mutex::new(None),
            upstream: Mutex::new(None),
            env: Mutex::new(Vec::new()),
        };
        eprintln!(
            "# Node {}: port {}, data directory {}, log {}",
            node.name,
            node.port,
            node.data_dir.display(),
            node.log_path.display()
        );
        node
    }

    /// The node's name (labels messages and its log file).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// TCP port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Host the server listens on (`127.0.0.1`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The directory of the node's Unix socket (`unix_socket_directories`).
    pub fn socket_dir(&self) -> &Path {
        &self.base_path
    }

    /// The data directory (`-D`).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The per-test directory holding the data directory and the log.
    pub fn base_dir(&self) -> &Path {
        &self.base_path
    }

    /// The server log file.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// False in reference mode (a real PostgreSQL server): tests skip
    /// checks of hotpair-only features then.
    pub fn is_hotpair(&self) -> bool {
        matches!(self.flavor, Flavor::Hotpair)
    }

    /// A libpq / tokio-postgres connection string for database `postgres`.
    pub fn connstr(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.host, self.port
        )
    }

    /// psql's connection arguments (`-h HOST -p PORT -U postgres -d postgres`).
    pub fn psql_conn_args(&self) -> Vec<String> {
        [
            "-h",
            &self.host,
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// Creates the data directory and its configuration file: the port,
    /// `listen_addresses` and, if `allows_streaming`, walsender and slot
    /// settings. `fsync` stays at the server's default (on): every test
    /// exercises the durable paths — group commit's fdatasync, checkpoint
    /// fsyncs — that crash tests rely on; a test that turns it off says so
    /// with `append_conf` and why (unlike PostgreSQL's Cluster.pm, which
    /// turns it off for every test).
    pub fn init(&self, allows_streaming: bool) {
        let mut conf = String::from("\n# Added by tap-tests Node::init\n");
        conf.push_str(&format!(
            "port = {}\nlisten_addresses = '127.0.0.1'\n",
            self.port
        ));
        if allows_streaming {
            conf.push_str(
                "wal_level = replica\nmax_wal_senders = 10\nmax_replication_slots = 10\n",
            );
        } else {
            conf.push_str("max_wal_senders = 0\n");
        }
        match &self.flavor {
            Flavor::Hotpair => {
                std::fs::create_dir_all(&self.data_dir).unwrap_or_else(|e| {
                    panic!("could not create {}: {e}", self.data_dir.display())
                });
            }
            Flavor::Postgres(bindir) => {
                let out = Command::new(bindir.join("initdb"))
                    .arg("-D")
                    .arg(&self.data_dir)
                    .args(PG_INITDB_ARGS)
                    .output()
                    .unwrap_or_else(|e| panic!("could not run initdb: {e}"));
                assert!(
                    out.status.success(),
                    "initdb failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                conf.push_str(&format!(
                    "unix_socket_directories = '{}'\n",
                    self.base_path.display()
                ));
            }
        }
        self.append_conf(&conf);
    }

    /// The configuration file `append_conf` writes to.
    fn conf_path(&self) -> PathBuf {
        match self.flavor {
            Flavor::Hotpair => self.data_dir.join("hotpair.conf"),
            Flavor::Postgres(_) => self.data_dir.join("postgresql.conf"),
        }
    }

    /// Appends `text` (one or more `name = value` lines) to the node's
    /// configuration file; takes effect at the next start.
    pub fn append_conf(&self, text: &str) {
        let path = self.conf_path();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("could not open {}: {e}", path.display()));
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        f.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("could not write {}: {e}", path.display()));
    }

    /// Starts the server and waits until its log says it accepts
    /// connections; panics, showing the log, if it exits or times out.
    pub fn start(&self) {
        self.start_until(&READY_MESSAGES);
    }

    /// Sets `key=value` in the environment of the server process from its
    /// next start on (hotpair nodes; fault injection uses `LD_PRELOAD`).
    pub fn set_env(&self, key: &str, value: &str) {
        let mut env = self.env.lock().unwrap_or_else(|e| e.into_inner());
        env.retain(|(k, _)| k != key);
        env.push((key.to_string(), value.to_string()));
    }

    /// Starts the server and waits until its log (from now on) holds one of
    /// `lines` — for a node that never says it is ready, such as a standby
    /// with `hot_standby = off` ("consistent recovery state reached").
    pub fn start_until(&self, lines: &[&str]) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = child.as_mut() {
            if let Ok(None) = c.try_wait() {
                panic!("node {}: start called while already running", self.name);
            }
        }
        let offset = self.log_position();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .unwrap_or_else(|e| panic!("could not open log {}: {e}", self.log_path.display()));
        let log_err = log.try_clone().expect("clone log file handle");
        let mut cmd = match &self.flavor {
            Flavor::Hotpair => {
                let upstream = self
                    .upstream
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                let bin = if upstream.is_some() {
                    "standby"
                } else {
                    "primary"
                };
                let mut c = Command::new(binaries::bin_path(bin));
                c.arg("-D")
                    .arg(&self.data_dir)
                    .arg("-p")
                    .arg(self.port.to_string());
                // The node's Unix socket in its own directory, as for
                // PostgreSQL nodes: nothing left in the system's.
                c.arg("-c").arg(format!(
                    "unix_socket_directories={}",
                    self.base_path.display()
                ));
                if let Some((conninfo, slot)) = upstream {
                    c.arg("--primary-conninfo").arg(conninfo);
                    if let Some(s) = slot {
                        c.arg("--slot").arg(s);
                    }
                }
                c.env("RUST_BACKTRACE", "1");
                for (k, v) in self.env.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    c.env(k, v);
                }
                c
            }
            Flavor::Postgres(bindir) => {
                let mut c = Command::new(bindir.join("postgres"));
                c.arg("-D")
                    .arg(&self.data_dir)
                    .arg("-p")
                    .arg(self.port.to_string());
                c
            }
        };
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err));
        eprintln!("# Node {}: starting {:?}", self.name, cmd);
        let spawned = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("node {}: could not start the server: {e}", self.name));
        *child = Some(spawned);

        let deadline = Instant::now() + timeout_default();
        loop {
            let log = self.log_since(offset);
            if lines.iter().any(|m| log.contains(m)) {
                return;
            }
            if let Some(c) = child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    panic!(
                        "node {}: server exited during startup ({status})\nlog {}:\n{}",
                        self.name,
                        self.log_path.display(),
                        tail(&log, 60)
                    );
                }
            }
            if Instant::now() >= deadline {
                panic!(
                    "node {}: server not ready after {:?}\nlog {}:\n{}",
                    self.name,
                    timeout_default(),
                    self.log_path.display(),
                    tail(&log, 60)
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Stops the server: `"fast"` (clean shutdown) or `"immediate"`
    /// (SIGKILL); waits for the process to exit. Panics if it is not running
    /// or does not exit in time.
    pub fn stop(&self, mode: impl Into<StopMode>) {
        let mode = mode.into();
        let mut guard = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let Some(mut child) = guard.take() else {
            panic!(
                "node {}: stop called but the server is not running",
                self.name
            );
        };
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "node {}: stop called but the server had already exited ({status})\nlog:\n{}",
                self.name,
                tail(&self.log_content(), 60)
            );
        }
        match mode {
            StopMode::Fast => {
                let signal = match self.flavor {
                    Flavor::Hotpair => "-TERM",
                    Flavor::Postgres(_) => "-INT",
                };
                send_signal(child.id(), signal);
            }
            StopMode::Immediate => {
                let _ = child.kill();
            }
        }
        let deadline = Instant::now() + timeout_default();
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    eprintln!("# Node {}: stopped ({mode:?}, {status})", self.name);
                    if mode == StopMode::Fast && !status.success() {
                        panic!(
                            "node {}: fast shutdown ended with {status}\nlog:\n{}",
                            self.name,
                            tail(&self.log_content(), 60)
                        );
                    }
                    return;
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_INTERVAL),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "node {}: server did not exit after {mode:?} stop within {:?}\nlog:\n{}",
                        self.name,
                        timeout_default(),
                        tail(&self.log_content(), 60)
                    );
                }
            }
        }
    }

    /// Fast stop, then start.
    pub fn restart(&self) {
        self.stop(StopMode::Fast);
        self.start();
    }

    /// Kills the server with SIGKILL and reaps it (a crash).
    pub fn kill9(&self) {
        self.stop(StopMode::Immediate);
    }

    /// True while the server process is running (it has not exited).
    pub fn is_running(&self) -> bool {
        let mut guard = self.child.lock().unwrap_or_else(|e| e.into_inner());
        matches!(guard.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// The server's resident memory (VmRSS of `/proc/PID/status`, KiB).
    /// Panics if it is not running.
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS")
    }

    /// Sockets in the server's descriptor table (`/proc/PID/fd` entries
    /// that are sockets). Panics if it is not running.
    pub fn open_sockets(&self) -> usize {
        let pid = self.pid().expect("server pid");
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .expect("proc fd")
            .filter_map(Result::ok)
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))
            })
            .count()
    }

    /// The files in the node's temporary-file directory (`base/pgsql_tmp`).
    pub fn temp_files(&self) -> Vec<String> {
        match std::fs::read_dir(self.data_dir().join("base/pgsql_tmp")) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Peak resident memory (VmHWM, KiB) since the last
    /// [`Node::reset_peak_rss`].
    pub fn peak_rss_kib(&self) -> u64 {
        self.status_kib("VmHWM")
    }

    /// Resets the server's VmHWM to its current resident size
    /// (`/proc/PID/clear_refs` 5). Panics if it is not running.
    pub fn reset_peak_rss(&self) {
        let pid = self.pid().expect("server pid");
        std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("clear_refs");
    }

    /// A `/proc/PID/status` size of the server (`VmRSS`, `VmHWM`, …), KiB.
    /// Panics if it is not running.
    pub fn status_kib(&self, field: &str) -> u64 {
        let pid = self.pid().expect("server pid");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
    }

    /// The server's process id, if started.
    pub fn pid(&self) -> Option<u32> {
        self.child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|c| c.id())
    }

    /// Runs `sql` on a new connection and returns its rows as `psql -XAt`
    /// prints them; panics with the error on failure (`safe_psql`).
    pub fn safe_sql(&self, sql: &str) -> String {
        match self.sql(sql) {
            Ok(out) => out,
            Err(e) => panic!("node {}: query failed: {sql}\n{e}", self.name),
        }
    }

    /// Runs `sql` on a new connection; rows as `psql -XAt` prints them, or
    /// the error.
    pub fn sql(&self, sql: &str) -> Result<String, SqlError> {
        one_shot(&self.connstr(), sql)
    }

    /// Runs `sql` through the real psql (`psql -XAtq -v ON_ERROR_STOP=1 -f -`,
    /// SQL on stdin) and returns (exit status, stdout, stderr), each without
    /// a trailing newline — Cluster.pm's `psql`.
    pub fn psql(&self, sql: &str) -> (i32, String, String) {
        let mut args: Vec<String> = ["-XAtq", "-v", "ON_ERROR_STOP=1", "-f", "-"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(self.psql_conn_args());
        let out = run_psql(&args, sql, None);
        let chomp = |s: String| s.strip_suffix('\n').map(str::to_string).unwrap_or(s);
        (out.status, chomp(out.stdout), chomp(out.stderr))
    }

    /// Runs the real psql with `args` (connection arguments are added) and
    /// `stdin`; returns its exit status and full, untrimmed output.
    pub fn run_psql(&self, args: &[&str], stdin: &str) -> PsqlOutput {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(self.psql_conn_args());
        run_psql(&all, stdin, Some(&self.base_path))
    }

    /// Runs `pgbench args…` against the node (connection arguments are
    /// added; pgbench's working files go to the per-test directory) —
    /// Cluster.pm's `pgbench`, minus the output checks, which the test makes.
    pub fn pgbench(&self, args: &[&str]) -> PsqlOutput {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        // pgbench's -d means --debug: the database name goes last.
        let port = self.port.to_string();
        all.extend(
            ["-h", &self.host, "-p", &port, "-U", "postgres", "postgres"]
                .iter()
                .map(|s| s.to_string()),
        );
        run_program("pgbench", &all, "", Some(&self.base_path))
    }

    /// Repeats `sql` on fresh connections until its output equals
    /// `expected` (errors count as not yet); true on success, false (after
    /// printing the last output) on timeout.
    pub fn poll_query_until(&self, sql: &str, expected: &str) -> bool {
        let deadline = Instant::now() + timeout_default();
        loop {
            let last = self.sql(sql);
            if matches!(&last, Ok(out) if out == expected) {
                return true;
            }
            if Instant::now() >= deadline {
                eprintln!(
                    "poll_query_until timed out executing this query:\n{sql}\nexpecting this output:\n{expected}\nlast actual query output:\n{last:?}"
                );
                return false;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// A long-lived native session (tokio-postgres).
    pub fn background_session(&self) -> Session {
        Session::connect(&self.name, &self.connstr())
    }

    /// A long-lived real psql (`psql -XA -f -`) fed on stdin.
    pub fn psql_session(&self) -> PsqlSession {
        let mut args: Vec<String> = ["-XA", "-f", "-"].iter().map(|s| s.to_string()).collect();
        args.extend(self.psql_conn_args());
        PsqlSession::start(&self.name, &args)
    }

    /// A raw TCP connection to the server, for protocol-level tests.
    pub fn raw_connection(&self) -> RawConnection {
        RawConnection::connect(&self.host, self.port)
    }

    /// The whole server log.
    pub fn log_content(&self) -> String {
        self.log_since(0)
    }

    /// Current size of the log: pass it to [`log_contains_after`](Self::log_contains_after)
    /// or [`wait_for_log`](Self::wait_for_log) to look only at later lines.
    pub fn log_position(&self) -> u64 {
        std::fs::metadata(&self.log_path)
            .map(|m| m.len())
            .unwrap_or(0)
    }

    /// The log written since `offset` (a [`log_position`](Self::log_position)).
    pub fn log_since(&self, offset: u64) -> String {
        let bytes = std::fs::read(&self.log_path).unwrap_or_default();
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    /// True if the server log contains `pattern` (plain text).
    pub fn log_contains(&self, pattern: &str) -> bool {
        self.log_contains_after(pattern, 0)
    }

    /// True if the log after byte `offset` contains `pattern`.
    pub fn log_contains_after(&self, pattern: &str, offset: u64) -> bool {
        self.log_since(offset).contains(pattern)
    }

    /// Waits until the log after `offset` contains `pattern`; panics showing
    /// the log on timeout. Returns the log position after the wait.
    pub fn wait_for_log(&self, pattern: &str, offset: u64) -> u64 {
        let deadline = Instant::now() + timeout_default();
        loop {
            if self.log_contains_after(pattern, offset) {
                return self.log_position();
            }
            if Instant::now() >= deadline {
                panic!(
                    "node {}: timed out waiting for {pattern:?} in the log\nlog:\n{}",
                    self.name,
                    tail(&self.log_since(offset), 60)
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Keeps the per-test directory (printing where) instead of removing it.
    fn keep_directory(&self, why: &str) {
        if let Some(dir) = self.base.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let path = dir.keep();
            eprintln!("# Node {}: {why}; keeping {}", self.name, path.display());
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let mut exited_early = None;
        if let Some(mut child) = self.child.lock().unwrap_or_else(|e| e.into_inner()).take() {
            match child.try_wait() {
                Ok(Some(status)) => exited_early = Some(status),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        let log = self.log_content();
        let server_panicked = self.is_hotpair() && log.contains("panicked at");
        if std::thread::panicking()
            || server_panicked
            || std::env::var_os("PG_TEST_NOCLEAN").is_some()
        {
            let why = if std::thread::panicking() {
                "test failed"
            } else {
                "kept on request"
            };
            self.keep_directory(why);
            eprintln!(
                "# Node {} log ({}), last lines:\n{}",
                self.name,
                self.log_path.display(),
                tail(&log, 80)
            );
        }
        if let Some(status) = exited_early {
            eprintln!(
                "# Node {}: server had exited before teardown ({status})",
                self.name
            );
        }
        if server_panicked && !std::thread::panicking() {
            panic!(
                "node {}: the server panicked during the test (see its log above)",
                self.name
            );
        }
        // Otherwise the TempDir in `base` is removed as the struct drops.
    }
}

/// Sends `signal` (e.g. `-TERM`) to `pid` with kill(1); std has no portable
/// signal API and the workspace has no libc dependency.
fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(signal)
        .arg(pid.to_string())
        .status();
    if !matches!(status, Ok(s) if s.success()) {
        eprintln!("# kill {signal} {pid} failed: {status:?}");
    }
}

// ---------------------------------------------------------------------------
// Replication
// ---------------------------------------------------------------------------

impl Node {
    /// `$node->backup($name)`: hotpair standbys take their base backup
    /// themselves when first started on an empty directory, so this only
    /// checks that the node can serve one (it runs and allows streaming).
    pub fn backup(&self, name: &str) {
        assert!(
            self.is_running(),
            "node {}: backup {name} requested but the server is not running",
            self.name
        );
        eprintln!(
            "# Node {}: backup {name} (taken by the standby at its first start)",
            self.name
        );
    }

    /// `init_from_backup($primary, $name, has_streaming => 1)`: makes this
    /// node a standby of `primary`; its first `start` takes the base
    /// backup (the `standby` binary on an empty data directory) and then
    /// streams. `application_name` is the node's name.
    pub fn init_from_backup(&self, primary: &Node, _backup_name: &str, has_streaming: bool) {
        assert!(has_streaming, "only streaming standbys are supported");
        self.set_upstream(primary, None);
    }

    /// A standby of `primary` whose `primary_conninfo` also carries
    /// `extra` (`user=… password=…`, `passfile=…`).
    pub fn init_from_backup_with_conninfo(&self, primary: &Node, extra: &str) {
        self.init_from_backup_through(primary, None, extra);
    }

    /// A standby of `primary`, through replication slot `slot` if given,
    /// with `extra` appended to its `primary_conninfo` (a later key wins:
    /// `port=` of a proxy, keepalive options).
    pub fn init_from_backup_through(&self, primary: &Node, slot: Option<&str>, extra: &str) {
        self.set_upstream(primary, slot.map(str::to_string));
        let mut up = self.upstream.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((conninfo, _)) = up.as_mut() {
            conninfo.push(' ');
            conninfo.push_str(extra);
        }
    }

    /// A standby of `primary` streaming through replication slot `slot`.
    pub fn init_from_backup_with_slot(&self, primary: &Node, slot: &str) {
        self.set_upstream(primary, Some(slot.to_string()));
    }

    fn set_upstream(&self, primary: &Node, slot: Option<String>) {
        assert!(self.is_hotpair(), "standbys need hotpair nodes");
        let conninfo = format!(
            "host={} port={} application_name={}",
            primary.host, primary.port, self.name
        );
        *self.upstream.lock().unwrap_or_else(|e| e.into_inner()) = Some((conninfo, slot));
    }

    /// Runs replication command `cmd` (IDENTIFY_SYSTEM, TIMELINE_HISTORY
    /// n, …) through the real psql on a `replication=true` connection;
    /// (exit status, stdout, stderr).
    pub fn replication_command(&self, cmd: &str) -> (i32, String, String) {
        let conn = format!(
            "host={} port={} user=postgres dbname=postgres replication=true",
            self.host, self.port
        );
        let args: Vec<String> = ["-XAtq", "-v", "ON_ERROR_STOP=1", "-d", &conn, "-c", cmd]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let out = run_psql(&args, "", Some(&self.base_path));
        (out.status, out.stdout, out.stderr)
    }

    /// `CREATE_REPLICATION_SLOT name PHYSICAL RESERVE_WAL` on this node
    /// through a replication connection of the real psql (as
    /// `pg_create_physical_replication_slot(name, true)`); panics on error.
    pub fn create_physical_slot(&self, name: &str) {
        let (status, out, err) = self.replication_command(&format!(
            "CREATE_REPLICATION_SLOT {name} PHYSICAL RESERVE_WAL"
        ));
        assert_eq!(
            status, 0,
            "node {}: could not create slot {name}: {out}{err}",
            self.name
        );
    }

    /// `$node->promote`: asks this standby to become a primary the way
    /// `pg_ctl promote` does — the trigger file `promote` in the data
    /// directory (PostgreSQL also needs SIGUSR1 to look at it) — then waits
    /// until `pg_is_in_recovery()` is false; panics on timeout. The node
    /// keeps its upstream: a hotpair restart runs the `standby` binary,
    /// which starts a data directory without `standby.signal` as a primary.
    pub fn promote(&self) {
        eprintln!("# Node {}: promoting", self.name);
        write_file(&self.data_dir.join("promote"), "");
        if let (Flavor::Postgres(_), Some(pid)) = (&self.flavor, self.pid()) {
            send_signal(pid, "-USR1");
        }
        assert!(
            self.poll_query_until("SELECT pg_is_in_recovery()", "f"),
            "node {}: not promoted\nlog:\n{}",
            self.name,
            tail(&self.log_content(), 60)
        );
    }

    /// `$node->enable_streaming($primary)`: from the next start this
    /// standby streams from `primary` (its `primary_conninfo`), without a
    /// slot.
    /// Makes this stopped node a new standby of `upstream` (a primary or,
    /// cascading, a standby): its data directory emptied, then started —
    /// a base backup of `upstream`, then streaming. What an old primary
    /// needs after a failover when it is not rewound.
    pub fn rebuild_as_standby_of(&self, upstream: &Node) {
        assert!(
            !self.is_running(),
            "node {}: rebuild requested while running",
            self.name
        );
        eprintln!(
            "# Node {}: rebuilding as a standby of {}",
            self.name, upstream.name
        );
        std::fs::remove_dir_all(&self.data_dir)
            .unwrap_or_else(|e| panic!("could not remove {}: {e}", self.data_dir.display()));
        std::fs::create_dir_all(&self.data_dir)
            .unwrap_or_else(|e| panic!("could not create {}: {e}", self.data_dir.display()));
        self.set_upstream(upstream, None);
        self.start();
    }

    /// `rewind --target-pgdata <this node> --source-server <source>
    /// --write-recovery-conf` (PostgreSQL's `command_ok(['pg_rewind', …])`
    /// in its failover tests): this stopped old primary takes the blocks
    /// it changed since the fork from `source`, the new primary, and will
    /// start as a standby (of `source`, or of whatever
    /// [`enable_streaming`](Self::enable_streaming) names). Returns its
    /// output; panics if it fails.
    pub fn rewind(&self, source: &Node) -> String {
        assert!(
            !self.is_running(),
            "node {}: rewind requested while running",
            self.name
        );
        let out = Command::new(binaries::bin_path("rewind"))
            .arg("--target-pgdata")
            .arg(&self.data_dir)
            .arg("--source-server")
            .arg(format!(
                "host={} port={} user=postgres application_name=rewind",
                source.host, source.port
            ))
            .arg("--write-recovery-conf")
            .output()
            .unwrap_or_else(|e| panic!("could not run rewind: {e}"));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!(
            "# Node {}: rewound from {}
{text}",
            self.name, source.name
        );
        assert!(
            out.status.success(),
            "rewind of {} failed:\n{text}",
            self.name
        );
        text
    }

    /// `$node->set_standby_mode`: `standby.signal` in the data directory,
    /// so that the next start (with an upstream) recovers as a standby —
    /// an old primary joining the node promoted in its place.
    pub fn set_standby_mode(&self) {
        write_file(&self.data_dir.join("standby.signal"), "");
    }

    /// `$node->enable_streaming($primary)`: the next start streams from
    /// `primary`.
    pub fn enable_streaming(&self, primary: &Node) {
        self.set_upstream(primary, None);
    }

    /// Re-points this running standby at `new_primary` (a promoted
    /// sibling) and restarts it, as PostgreSQL's 004_timeline_switch.pl
    /// does with `enable_streaming` + `restart`: it then follows the new
    /// primary's timeline. Returns once it serves reads again.
    pub fn follow(&self, new_primary: &Node) {
        eprintln!(
            "# Node {}: following new primary {}",
            self.name, new_primary.name
        );
        self.enable_streaming(new_primary);
        self.restart();
    }

    /// The timeline this node writes (primary) or receives (standby), from
    /// `pg_walfile_name(pg_current_wal_lsn())` on a primary and
    /// `pg_stat_wal_receiver` on a standby that streams; panics if neither
    /// answers.
    pub fn timeline(&self) -> u32 {
        // A primary's timeline is the one it writes: the first eight hex
        // digits of its current segment's name. (pg_control_checkpoint()
        // lags after a fast promotion until the new timeline's first
        // checkpoint completes in the background.)
        let (q, radix) = if self.safe_sql("SELECT pg_is_in_recovery()") == "t" {
            ("SELECT received_tli FROM pg_stat_wal_receiver", 10)
        } else {
            (
                "SELECT substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)",
                16,
            )
        };
        let out = self.safe_sql(q);
        u32::from_str_radix(out.trim(), radix)
            .unwrap_or_else(|_| panic!("node {}: no timeline in {out:?}", self.name))
    }

    /// A new node named `name`, a standby of `primary`, started (base
    /// backup, streaming, consistent).
    pub fn standby_of(primary: &Node, name: &str) -> Node {
        let n = Node::new(name);
        n.init_from_backup(primary, "backup", true);
        n.start();
        n
    }

    /// `$node->lsn($mode)`: `insert`, `write`, `flush` (primary) or
    /// `receive`, `replay` (standby), as `X/X` text.
    pub fn lsn(&self, mode: &str) -> String {
        let f = match mode {
            "insert" => "pg_current_wal_insert_lsn()",
            "write" => "pg_current_wal_lsn()",
            "flush" => "pg_current_wal_flush_lsn()",
            "receive" => "pg_last_wal_receive_lsn()",
            "replay" => "pg_last_wal_replay_lsn()",
            other => panic!("unknown lsn mode {other:?}"),
        };
        self.safe_sql(&format!("SELECT {f}"))
    }

    /// Waits until `standby` has replayed everything inserted into this
    /// node's WAL so far (`wait_for_catchup` in mode `replay` up to the
    /// current insert LSN); for a standby upstream (cascading), up to what
    /// this node has replayed, as Cluster.pm's default target.
    pub fn wait_for_replay(&self, standby: &Node) {
        let lsn = if self.safe_sql("SELECT pg_is_in_recovery()") == "t" {
            self.lsn("replay")
        } else {
            self.lsn("insert")
        };
        self.wait_for_catchup(standby, "replay", Some(&lsn));
    }

    /// Asserts `sql` fails on this node with SQLSTATE `code`; panics with
    /// the rows or the other error otherwise.
    #[track_caller]
    pub fn expect_error(&self, sql: &str, code: &str) {
        match self.sql(sql) {
            Ok(out) => panic!("{}: expected {code} from {sql}, got {out:?}", self.name),
            Err(e) => assert_eq!(e.code(), code, "{}: {sql}: {e}", self.name),
        }
    }

    /// `$node->wait_for_catchup($standby, $mode, $target_lsn)`: polls this
    /// (upstream) node's `pg_stat_replication` until the standby's
    /// `<mode>_lsn` (write, flush, replay) reached `target` (default: this
    /// node's current write LSN) in state `streaming`; on timeout panics
    /// showing the view.
    pub fn wait_for_catchup(&self, standby: &Node, mode: &str, target: Option<&str>) {
        assert!(
            matches!(mode, "sent" | "write" | "flush" | "replay"),
            "unknown catch-up mode {mode:?}"
        );
        let target = match target {
            Some(t) => t.to_string(),
            None => self.lsn("write"),
        };
        let want = parse_lsn(&target).unwrap_or_else(|| panic!("invalid target LSN {target:?}"));
        eprintln!(
            "# Waiting for replication conn {}'s {mode}_lsn to pass {target} on {}",
            standby.name, self.name
        );
        let query = format!(
            "SELECT {mode}_lsn, state FROM pg_stat_replication WHERE application_name = '{}'",
            standby.name
        );
        let deadline = Instant::now() + timeout_default();
        loop {
            if let Ok(out) = self.sql(&query) {
                for line in out.lines() {
                    let mut parts = line.split('|');
                    let lsn = parts.next().and_then(parse_lsn);
                    let state = parts.next().unwrap_or("");
                    if state == "streaming" && lsn.is_some_and(|l| l >= want) {
                        return;
                    }
                }
            }
            if Instant::now() >= deadline {
                let view = self
                    .sql("SELECT * FROM pg_stat_replication")
                    .unwrap_or_else(|e| format!("(query failed: {e:?})"));
                panic!(
                    "timed out waiting for catchup of {} ({mode}_lsn >= {target}) on {}\npg_stat_replication:\n{view}\nstandby log:\n{}",
                    standby.name,
                    self.name,
                    tail(&standby.log_content(), 40)
                );
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }
}

/// Parses `X/X`.
pub fn parse_lsn(s: &str) -> Option<u64> {
    let (hi, lo) = s.trim().split_once('/')?;
    let hi = u64::from_str_radix(hi, 16).ok()?;
    let lo = u64::from_str_radix(lo, 16).ok()?;
    Some((hi << 32) | lo)
}

/// Creates `path` with `contents` (for tests that plant files).
pub fn write_file(path: &Path, contents: &str) {
    let mut f =
        File::create(path).unwrap_or_else(|e| panic!("could not create {}: {e}", path.display()));
    f.write_all(contents.as_bytes())
        .unwrap_or_else(|e| panic!("could not write {}: {e}", path.display()));
}
