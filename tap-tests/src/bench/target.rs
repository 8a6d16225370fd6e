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

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

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
}

impl Endpoint {
    /// tokio-postgres connection string.
    pub fn connstr(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres connect_timeout=60",
            self.host, self.port
        )
    }

    /// pgbench / psql connection arguments.
    pub fn conn_args(&self) -> Vec<String> {
        vec![
            "-h".into(),
            self.host.clone(),
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
        n.append_conf(&format!("# bench settings\n{}", settings.conf_lines()));
        n.restart();
        n
    })
    .map_err(|e| format!("hotpair standby did not start: {}", first_line(&e)))
}

impl Target {
    /// Starts a hotpair primary with `settings` plus `extra_conf` lines.
    pub fn hotpair(settings: &Settings, extra_conf: &str) -> Target {
        let version = git_version();
        let started = guarded(|| {
            let node = Node::new("hotpair_primary");
            node.init(true);
            node.append_conf(&format!(
                "# bench settings\n{}{extra_conf}",
                settings.conf_lines()
            ));
            node.start();
            node
        });
        match started {
            Ok(node) => {
                let cleanup_id = node.pid().map(|p| cleanup::register(Action::Kill(p)));
                let primary = Endpoint {
                    host: node.host().to_string(),
                    port: node.port(),
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
                Target {
                    kind: Kind::Hotpair,
                    name: "hotpair".into(),
                    primary: Ok(primary),
                    standby,
                    version,
                    inner: Inner::Hotpair {
                        node: Some(node),
                        cleanup_id,
                        standby: standby_node,
                    },
                }
            }
            Err(e) => {
                eprintln!("bench: hotpair primary could not start: {e}");
                Target {
                    kind: Kind::Hotpair,
                    name: "hotpair".into(),
                    primary: Err(format!("hotpair did not start: {}", first_line(&e))),
                    standby: Err("standby: not available (no primary)".into()),
                    version,
                    inner: Inner::Hotpair {
                        node: None,
                        cleanup_id: None,
                        standby: None,
                    },
                }
            }
        }
    }

    /// Starts a PostgreSQL primary + standby with `settings`.
    pub fn postgres(
        bindir: &std::path::Path,
        work_dir: &std::path::Path,
        settings: &Settings,
    ) -> Target {
        match PgPair::start(bindir, work_dir, settings) {
            Ok(pair) => {
                let primary = Ok(Endpoint {
                    host: "127.0.0.1".into(),
                    port: pair.primary.port,
                });
                let standby = match &pair.standby {
                    Ok(s) => Ok(Endpoint {
                        host: "127.0.0.1".into(),
                        port: s.port,
                    }),
                    Err(e) => Err(format!("standby: {}", first_line(e))),
                };
                if let Err(e) = &standby {
                    eprintln!("bench: PostgreSQL standby: {e}");
                }
                Target {
                    kind: Kind::Postgres,
                    name: "PostgreSQL".into(),
                    primary,
                    standby,
                    version: pair.version.clone(),
                    inner: Inner::Postgres(Some(pair)),
                }
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

    /// CPU seconds the primary server has used so far (hotpair: its one
    /// process; PostgreSQL: the postmaster, its reaped children and the
    /// live ones). A steadier measure than wall time on a loaded machine.
    pub fn server_cpu_secs(&self) -> Option<f64> {
        match &self.inner {
            Inner::Hotpair {
                node: Some(node), ..
            } => node.pid().and_then(|p| sysinfo::cpu_secs(p, false)),
            Inner::Postgres(Some(pair)) => {
                let pm = pair.primary.postmaster_pid()?;
                let live: f64 = sysinfo::children(pm)
                    .into_iter()
                    .filter_map(|c| sysinfo::cpu_secs(c, false))
                    .sum();
                Some(sysinfo::cpu_secs(pm, true)? + live)
            }
            _ => None,
        }
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
        if let Err(e) = &result {
            self.mark_down(&format!("did not restart after a crash: {e}"));
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
