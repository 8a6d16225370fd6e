//! A system under test: hotpair or PostgreSQL, its primary and standby
//! endpoints, and the few operations workloads need beyond connecting
//! (SQL on either node, waiting for the standby, sampling memory,
//! restarting hotpair with another setting).
//!
//! hotpair runs through the harness [`Node`] (release binaries when the
//! bench is a release build: the harness builds and finds the `primary`
//! binary in the bench executable's own profile directory). The harness
//! reports failures by panicking — right for tests — so every call into it
//! here is wrapped in `catch_unwind` and turned into an error string: a
//! hotpair that cannot start makes its cells "failed", not the run abort.
//!
//! The hotpair standby ([`start_hotpair_standby`]) is a harness standby
//! node of the primary (base backup, streaming) restarted once with the
//! bench settings; it is stopped before the primary.
//!
//! Each target owns a cgroup ([`super::cgroup`]) with a `primary` and a
//! `standby` child; every (re)start moves the new server processes in, so
//! [`Target::cpu_usec`] is the whole system's CPU, exited processes
//! included.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::cgroup::{self, Group};
use super::cleanup::{self, Action};
use super::pg::PgPair;
use super::sysinfo::{self, ServerMem};
use super::Settings;
use crate::session::one_shot;
use crate::Node;

/// Which system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// hotpair.
    Hotpair,
    /// PostgreSQL 15.
    Postgres,
}

/// Host and port of one server.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Host (127.0.0.1).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// The directory of its Unix socket (`.s.PGSQL.<port>`), if it has one.
    pub socket_dir: Option<String>,
}

impl Endpoint {
    /// tokio-postgres connection string.
    pub fn connstr(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres connect_timeout=60",
            self.host, self.port
        )
    }

    /// pgbench / psql connection arguments (TCP).
    pub fn conn_args(&self) -> Vec<String> {
        self.conn_args_over(false)
    }

    /// pgbench / psql connection arguments, through the Unix socket when
    /// `unix` (and the server has one), else over TCP.
    pub fn conn_args_over(&self, unix: bool) -> Vec<String> {
        let host = match (unix, &self.socket_dir) {
            (true, Some(dir)) => dir.clone(),
            _ => self.host.clone(),
        };
        vec![
            "-h".into(),
            host,
            "-p".into(),
            self.port.to_string(),
            "-U".into(),
            "postgres".into(),
        ]
    }

    /// One statement on a fresh connection, rows as `psql -XAt` prints them.
    pub fn sql(&self, sql: &str) -> Result<String, String> {
        one_shot(&self.connstr(), sql).map_err(|e| e.to_string())
    }
}

enum Inner {
    Hotpair {
        node: Option<Node>,
        cleanup_id: Option<u64>,
        /// The standby node and its cleanup registration (boxed: a Node
        /// is large).
        standby: Option<Box<(Node, Option<u64>)>>,
    },
    Postgres(Option<PgPair>),
}

/// A system under test.
pub struct Target {
    /// hotpair or PostgreSQL.
    pub kind: Kind,
    /// Display name ("hotpair", "PostgreSQL").
    pub name: String,
    /// The primary, or why it is not running.
    pub primary: Result<Endpoint, String>,
    /// The standby, or why there is none.
    pub standby: Result<Endpoint, String>,
    /// Version string for the header.
    pub version: String,
    /// The system's cgroup (`None`: no cgroups, or moving a server in
    /// failed; CPU then comes from /proc).
    cgroup: Option<Group>,
    /// Why there is no cgroup, for the header.
    cgroup_why: String,
    inner: Inner,
}

/// The message of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "panic".to_string()
    }
}

/// Runs `f`, turning a panic into an error message.
pub fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()))
}

/// A hotpair standby of `primary` with the bench `settings`: base backup
/// and streaming at its first start, then a restart with the settings
/// appended (an empty data directory is needed for the backup, so they
/// cannot be written before).
pub fn start_hotpair_standby(primary: &Node, settings: &Settings) -> Result<Node, String> {
    guarded(|| {
        let n = Node::standby_of(primary, "hotpair_standby");
        n.append_conf(&format!(
            "# bench settings\n{}{}",
            settings.conf_lines(),
            settings.tls_lines(false)
        ));
        n.restart();
        n
    })
    .map_err(|e| format!("hotpair standby did not start: {}", first_line(&e)))
}

impl Target {
    /// Starts a hotpair primary with `settings` plus `extra_conf` lines,
    /// accounted in the cgroup `hotpair`.
    pub fn hotpair(settings: &Settings, extra_conf: &str) -> Target {
        Target::hotpair_in(settings, extra_conf, "hotpair")
    }

    /// [`Target::hotpair`] accounted in the cgroup `cgroup_name` (a second
    /// pair beside the first must not share its account).
    pub fn hotpair_in(settings: &Settings, extra_conf: &str, cgroup_name: &str) -> Target {
        let version = git_version();
        let started = guarded(|| {
            let node = Node::new("hotpair_primary");
            node.init(true);
            node.append_conf(&format!(
                "# bench settings\n{}{extra_conf}",
                settings.hotpair_conf_lines()
            ));
            // The default pg_hba.conf (written at first start when there is
            // none) trusts 127.0.0.1 only, as initdb's; the many-sessions
            // workloads connect from 127.0.0.2 and up; `connect` logs one
            // role in with SCRAM.
            let hba = node.data_dir().join("pg_hba.conf");
            std::fs::write(
                &hba,
                format!(
                    "host all {} 127.0.0.0/8 scram-sha-256\nlocal all all trust\nhost all all 127.0.0.0/8 trust\nlocal replication all trust\nhost replication all 127.0.0.0/8 trust\n",
                    super::workloads::SCRAM_ROLE
                ),
            )
            .expect("write pg_hba.conf");
            node.start();
            node
        });
        match started {
            Ok(node) => {
                let cleanup_id = node.pid().map(|p| cleanup::register(Action::Kill(p)));
                let primary = Endpoint {
                    host: node.host().to_string(),
                    port: node.port(),
                    socket_dir: Some(node.socket_dir().display().to_string()),
                };
                let started = if settings.standby {
                    start_hotpair_standby(&node, settings)
                } else {
                    Err("standby: not started (--no-standby)".to_string())
                };
                let (standby, standby_node) = match started {
                    Ok(s) => {
                        let id = s.pid().map(|p| cleanup::register(Action::Kill(p)));
                        let ep = Endpoint {
                            host: s.host().to_string(),
                            port: s.port(),
                            socket_dir: Some(s.socket_dir().display().to_string()),
                        };
                        (Ok(ep), Some(Box::new((s, id))))
                    }
                    Err(e) => {
                        if settings.standby {
                            eprintln!("bench: {e}");
                        }
                        (Err(e), None)
                    }
                };
                let mut target = Target {
                    kind: Kind::Hotpair,
                    name: "hotpair".into(),
                    primary: Ok(primary),
                    standby,
                    version,
                    cgroup: None,
                    cgroup_why: String::new(),
                    inner: Inner::Hotpair {
                        node: Some(node),
                        cleanup_id,
                        standby: standby_node,
                    },
                };
                target.join_cgroup(cgroup_name);
                target
            }
            Err(e) => {
                eprintln!("bench: hotpair primary could not start: {e}");
                Target {
                    kind: Kind::Hotpair,
                    name: "hotpair".into(),
                    primary: Err(format!("hotpair did not start: {}", first_line(&e))),
                    standby: Err("standby: not available (no primary)".into()),
                    version,
                    cgroup: None,
                    cgroup_why: "not started".into(),
                    inner: Inner::Hotpair {
                        node: None,
                        cleanup_id: None,
                        standby: None,
                    },
                }
            }
        }
    }

    /// Starts a PostgreSQL primary + standby with `settings`, accounted in
    /// the cgroup `postgres`.
    pub fn postgres(
        bindir: &std::path::Path,
        work_dir: &std::path::Path,
        settings: &Settings,
    ) -> Target {
        Target::postgres_in(bindir, work_dir, settings, "postgres")
    }

    /// [`Target::postgres`] accounted in the cgroup `cgroup_name`.
    pub fn postgres_in(
        bindir: &std::path::Path,
        work_dir: &std::path::Path,
        settings: &Settings,
        cgroup_name: &str,
    ) -> Target {
        match PgPair::start(bindir, work_dir, settings) {
            Ok(pair) => {
                let socket_dir = Some(pair.socket_dir().display().to_string());
                let primary = Ok(Endpoint {
                    host: "127.0.0.1".into(),
                    port: pair.primary.port,
                    socket_dir: socket_dir.clone(),
                });
                let standby = match &pair.standby {
                    Ok(s) => Ok(Endpoint {
                        host: "127.0.0.1".into(),
                        port: s.port,
                        socket_dir,
                    }),
                    Err(e) => Err(format!("standby: {}", first_line(e))),
                };
                if let Err(e) = &standby {
                    eprintln!("bench: PostgreSQL standby: {e}");
                }
                let mut target = Target {
                    kind: Kind::Postgres,
                    name: "PostgreSQL".into(),
                    primary,
                    standby,
                    version: pair.version.clone(),
                    cgroup: None,
                    cgroup_why: String::new(),
                    inner: Inner::Postgres(Some(pair)),
                };
                target.join_cgroup(cgroup_name);
                target
            }
            Err(e) => {
                eprintln!("bench: PostgreSQL could not start: {e}");
                Target::unavailable(
                    Kind::Postgres,
                    &format!("PostgreSQL did not start: {}", first_line(&e)),
                )
            }
        }
    }

    /// A target that is not there (PostgreSQL not installed…): every cell
    /// of it becomes a skip with `why`.
    pub fn unavailable(kind: Kind, why: &str) -> Target {
        Target {
            kind,
            name: match kind {
                Kind::Hotpair => "hotpair".into(),
                Kind::Postgres => "PostgreSQL".into(),
            },
            primary: Err(why.to_string()),
            standby: Err(why.to_string()),
            version: String::new(),
            cgroup: None,
            cgroup_why: "not started".into(),
            inner: match kind {
                Kind::Hotpair => Inner::Hotpair {
                    node: None,
                    cleanup_id: None,
                    standby: None,
                },
                Kind::Postgres => Inner::Postgres(None),
            },
        }
    }

    /// The primary's endpoint or the reason it has none.
    pub fn primary(&self) -> Result<&Endpoint, String> {
        self.primary.as_ref().map_err(Clone::clone)
    }

    /// The standby's endpoint or the reason it has none.
    pub fn standby(&self) -> Result<&Endpoint, String> {
        self.standby.as_ref().map_err(Clone::clone)
    }

    /// Waits (up to 5 minutes) until the standby has replayed everything
    /// the primary had written when this was called.
    pub fn wait_standby_catchup(&self) -> Result<(), String> {
        let standby = self.standby()?;
        let lsn = self.primary()?.sql("SELECT pg_current_wal_lsn()")?;
        let query = format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn");
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let last = standby.sql(&query);
            if matches!(&last, Ok(t) if t == "t") {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "standby did not reach {lsn} in 300 s (last: {last:?})"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Server memory now (hotpair: the process's RSS; PostgreSQL: private
    /// memory summed over the postmaster and its children).
    pub fn memory(&self) -> Result<ServerMem, String> {
        match &self.inner {
            Inner::Hotpair {
                node: Some(node), ..
            } => node
                .pid()
                .and_then(sysinfo::single_process)
                .ok_or_else(|| "cannot read the hotpair process's memory".to_string()),
            Inner::Postgres(Some(pair)) => pair
                .primary
                .postmaster_pid()
                .and_then(sysinfo::process_tree)
                .ok_or_else(|| "cannot read PostgreSQL's processes' memory".to_string()),
            _ => Err(self.primary().err().unwrap_or_default()),
        }
    }

    /// Creates the system's cgroup `name` and moves its servers in; on
    /// failure CPU is read from /proc and [`Target::cpu_method`] says why.
    fn join_cgroup(&mut self, name: &str) {
        self.cgroup = match cgroup::root() {
            Ok(_) => cgroup::group(name),
            Err(why) => {
                self.cgroup_why = why.to_string();
                None
            }
        };
        if self.cgroup.is_some() {
            self.attach_servers();
        } else if self.cgroup_why.is_empty() {
            self.cgroup_why = format!("could not create cgroup {name}");
        }
    }

    /// Moves the servers running now into the system's cgroup: after every
    /// start, since a restarted server is a new process outside it.
    fn attach_servers(&mut self) {
        let Some(group) = self.cgroup.clone() else {
            return;
        };
        let mut moves: Vec<(&str, u32)> = Vec::new();
        match &self.inner {
            Inner::Hotpair { node, standby, .. } => {
                moves.extend(node.as_ref().and_then(Node::pid).map(|p| ("primary", p)));
                moves.extend(
                    standby
                        .as_ref()
                        .and_then(|b| b.0.pid())
                        .map(|p| ("standby", p)),
                );
            }
            Inner::Postgres(Some(pair)) => {
                moves.extend(pair.primary.postmaster_pid().map(|p| ("primary", p)));
                if let Ok(s) = &pair.standby {
                    moves.extend(s.postmaster_pid().map(|p| ("standby", p)));
                }
            }
            Inner::Postgres(None) => {}
        }
        for (node, pid) in moves {
            let r = group.child(node).and_then(|g| cgroup::attach_tree(&g, pid));
            if let Err(e) = r {
                eprintln!(
                    "bench: {}: CPU from /proc instead of a cgroup: {e}",
                    self.name
                );
                self.cgroup_why = e;
                self.cgroup = None;
                return;
            }
        }
    }

    /// How this system's CPU is measured, for the header.
    pub fn cpu_method(&self) -> String {
        match &self.cgroup {
            Some(g) => format!("{}: cgroup {}", self.name, g.path.display()),
            None => format!("{}: /proc ({})", self.name, self.cgroup_why),
        }
    }

    /// Memory of one node now ([`Target::memory`] for the primary).
    pub fn node_memory(&self, standby: bool) -> Result<ServerMem, String> {
        if !standby {
            return self.memory();
        }
        match &self.inner {
            Inner::Hotpair {
                standby: Some(b), ..
            } => {
                b.0.pid()
                    .and_then(sysinfo::single_process)
                    .ok_or_else(|| "cannot read the hotpair standby's memory".to_string())
            }
            Inner::Postgres(Some(pair)) => pair
                .standby
                .as_ref()
                .ok()
                .and_then(|s| s.postmaster_pid())
                .and_then(sysinfo::process_tree)
                .ok_or_else(|| "cannot read the PostgreSQL standby's memory".to_string()),
            _ => Err(self.standby().err().unwrap_or_default()),
        }
    }

    /// The open-file limit (soft) of a node's server process.
    pub fn node_nofile(&self, standby: bool) -> Option<u64> {
        let pid = match &self.inner {
            Inner::Hotpair {
                node, standby: sb, ..
            } => {
                if standby {
                    sb.as_ref().and_then(|b| b.0.pid())
                } else {
                    node.as_ref().and_then(Node::pid)
                }
            }
            Inner::Postgres(Some(pair)) => {
                if standby {
                    pair.standby.as_ref().ok().and_then(|s| s.postmaster_pid())
                } else {
                    pair.primary.postmaster_pid()
                }
            }
            Inner::Postgres(None) => None,
        }?;
        let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
        sysinfo::parse_nofile_soft(&limits)
    }

    /// CPU time (µs) the system — primary and standby — has used so far:
    /// its cgroup's `usage_usec` (every process ever in it), or without
    /// one the sum of [`Target::node_cpu_usec`] over its nodes.
    pub fn cpu_usec(&self) -> Option<u64> {
        if let Some(g) = &self.cgroup {
            return g.usage_usec();
        }
        let primary = self.node_cpu_usec(false)?;
        Some(primary + self.node_cpu_usec(true).unwrap_or(0))
    }

    /// CPU time (µs) of one node: its cgroup, or /proc (hotpair: the
    /// process; PostgreSQL: the postmaster, its reaped and its live
    /// children — a backend that exited but was not yet reaped is missed).
    pub fn node_cpu_usec(&self, standby: bool) -> Option<u64> {
        let node = if standby { "standby" } else { "primary" };
        if let Some(g) = &self.cgroup {
            return Group {
                path: g.path.join(node),
            }
            .usage_usec();
        }
        let secs = match &self.inner {
            Inner::Hotpair {
                node: primary,
                standby: sb,
                ..
            } => {
                let pid = if standby {
                    sb.as_ref().and_then(|b| b.0.pid())
                } else {
                    primary.as_ref().and_then(Node::pid)
                };
                sysinfo::cpu_secs(pid?, false)?
            }
            Inner::Postgres(Some(pair)) => {
                let server = if standby {
                    pair.standby.as_ref().ok()?
                } else {
                    &pair.primary
                };
                let pm = server.postmaster_pid()?;
                let live: f64 = sysinfo::children(pm)
                    .into_iter()
                    .filter_map(|c| sysinfo::cpu_secs(c, false))
                    .sum();
                sysinfo::cpu_secs(pm, true)? + live
            }
            _ => return None,
        };
        Some((secs * 1e6) as u64)
    }

    /// CPU seconds the primary has used so far (its cgroup, else /proc).
    pub fn server_cpu_secs(&self) -> Option<f64> {
        self.node_cpu_usec(false).map(|u| u as f64 / 1e6)
    }

    /// hotpair only: the primary server's process id.
    pub fn hotpair_pid(&self) -> Option<u32> {
        match &self.inner {
            Inner::Hotpair {
                node: Some(node), ..
            } => node.pid(),
            _ => None,
        }
    }

    /// hotpair only: appends `conf` and restarts the primary (e.g.
    /// `relation_extension = single`). An error if the server does not come
    /// back (e.g. it rejects the setting) — the target is then down.
    pub fn restart_with(&mut self, conf: &str) -> Result<(), String> {
        let Inner::Hotpair {
            node: Some(node),
            cleanup_id,
            ..
        } = &mut self.inner
        else {
            return Err(format!("{}: restart_with is for hotpair", self.name));
        };
        if let Some(id) = cleanup_id.take() {
            cleanup::deregister(id);
        }
        let result = guarded(|| {
            node.append_conf(conf);
            node.restart();
        });
        *cleanup_id = node.pid().map(|p| cleanup::register(Action::Kill(p)));
        self.attach_servers();
        result.map_err(|e| first_line(&e).to_string())
    }

    /// Crashes the primary (SIGKILL; PostgreSQL: `pg_ctl stop -m
    /// immediate`) and starts it again; returns what the server logged
    /// from the crash on (its crash recovery). The target is down if it
    /// does not come back.
    pub fn crash_restart(&mut self) -> Result<String, String> {
        let result = match &mut self.inner {
            Inner::Hotpair {
                node: Some(node),
                cleanup_id,
                ..
            } => {
                if let Some(id) = cleanup_id.take() {
                    cleanup::deregister(id);
                }
                let pos = node.log_position() as usize;
                let r = guarded(|| {
                    node.kill9();
                    node.start();
                });
                *cleanup_id = node.pid().map(|p| cleanup::register(Action::Kill(p)));
                r.map(|()| node.log_content().get(pos..).unwrap_or("").to_string())
                    .map_err(|e| first_line(&e).to_string())
            }
            Inner::Postgres(Some(pair)) => pair.crash_restart_primary(),
            _ => Err(self.primary().err().unwrap_or_default()),
        };
        match &result {
            Ok(_) => self.attach_servers(),
            Err(e) => self.mark_down(&format!("did not restart after a crash: {e}")),
        }
        result
    }

    /// Is the primary's server process still alive (hotpair) — after a
    /// failed workload, to tell a crash from an error.
    pub fn is_alive(&self) -> bool {
        match &self.inner {
            Inner::Hotpair {
                node: Some(node), ..
            } => node.is_running(),
            Inner::Hotpair { node: None, .. } => false,
            Inner::Postgres(p) => p.is_some(),
        }
    }

    /// The last lines of the primary's server log.
    pub fn log_tail(&self, n: usize) -> String {
        match &self.inner {
            Inner::Hotpair {
                node: Some(node), ..
            } => crate::utils::tail(&node.log_content(), n),
            Inner::Postgres(Some(pair)) => pair.primary.log_tail(n),
            _ => String::new(),
        }
    }

    /// Marks the primary down (after a crash) so later workloads skip it.
    pub fn mark_down(&mut self, why: &str) {
        self.primary = Err(why.to_string());
        self.standby = Err(why.to_string());
    }

    /// Stops the servers (also done on drop).
    pub fn shutdown(&mut self) {
        match &mut self.inner {
            Inner::Hotpair {
                node,
                cleanup_id,
                standby,
            } => {
                // The standby first, so it does not log the primary going.
                if let Some((s, id)) = standby.take().map(|b| *b) {
                    if let Err(e) = guarded(move || drop(s)) {
                        eprintln!("bench: hotpair standby teardown: {}", first_line(&e));
                    }
                    if let Some(id) = id {
                        cleanup::deregister(id);
                    }
                }
                if let Some(n) = node.take() {
                    // The harness's drop panics when the server log shows a
                    // panic; report it instead of aborting the teardown.
                    let log_panicked = n.log_content().contains("panicked at");
                    if log_panicked {
                        eprintln!(
                            "bench: the hotpair server log shows a panic; log tail:\n{}",
                            crate::utils::tail(&n.log_content(), 40)
                        );
                    }
                    if let Err(e) = guarded(move || drop(n)) {
                        eprintln!("bench: hotpair teardown: {}", first_line(&e));
                    }
                }
                if let Some(id) = cleanup_id.take() {
                    cleanup::deregister(id);
                }
            }
            Inner::Postgres(pair) => {
                if let Some(mut p) = pair.take() {
                    p.stop();
                }
            }
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The first line of a (multi-line) message.
pub fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// `git rev-parse --short HEAD` of the workspace, for the header.
fn git_version() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::binaries::workspace_dir())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| format!("hotpair {}", String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| "hotpair".into())
}
