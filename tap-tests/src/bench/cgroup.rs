//! CPU accounting by cgroup: what a server and pgbench cost per transaction.
//!
//! Reading a server's CPU from /proc misses work: a PostgreSQL backend
//! that exits during a point is counted only once the postmaster has
//! reaped it, its helper processes come and go, and pgbench's own CPU is
//! invisible. A cgroup counts every task that was ever in it, exited or
//! not, so the bench puts each server and every pgbench in one:
//!
//! ```text
//! <v2 mount><the bench's own cgroup>/hotpair-bench-<pid>/   created at start
//! ├── hotpair/primary, hotpair/standby      the server process (moved in
//! │                                         right after each start)
//! ├── postgres/primary, postgres/standby    the postmaster, then its
//! │                                         children: every later backend
//! │                                         is forked inside
//! ├── idle-hotpair/…                        the idle workload's own pair
//! └── pgbench                               each pgbench, from its exec on
//! ```
//!
//! A system's CPU during a point is `usage_usec` of its directory's
//! `cpu.stat` after minus before: cgroup v2 counts descendants, so the
//! system's line covers both of its nodes (a commit's cost includes the
//! standby's replay). Only the always-present `cpu.stat` is used; no
//! controller is enabled, so the tree works under any parent.
//!
//! When the v2 hierarchy is missing or not writable, [`root`] is an error
//! with the reason, the bench falls back to /proc (and says so in its
//! header), and pgbench's CPU comes from the bench's reaped-children time.
//!
//! The tree is removed at the end ([`remove_tree`], leaves first) and from
//! the Ctrl-C path ([`super::cleanup`]), after the servers are gone: a
//! cgroup with live tasks cannot be removed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::cleanup::{self, Action};

/// One cgroup directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Its directory under the v2 mount.
    pub path: PathBuf,
}

impl Group {
    /// Moves process `pid` (all its threads) into this group.
    pub fn attach(&self, pid: u32) -> Result<(), String> {
        let procs = self.path.join("cgroup.procs");
        std::fs::write(&procs, pid.to_string())
            .map_err(|e| format!("write {pid} to {}: {e}", procs.display()))
    }

    /// CPU time used by every task that has been in this group or below
    /// it, in µs.
    pub fn usage_usec(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.path.join("cpu.stat")).ok()?;
        parse_usage_usec(&text)
    }

    /// The processes in this group now.
    pub fn procs(&self) -> Vec<u32> {
        std::fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// The child group `name` (a `/`-separated relative path), created
    /// with its parents if missing.
    pub fn child(&self, name: &str) -> Result<Group, String> {
        let path = self.path.join(name);
        std::fs::create_dir_all(&path).map_err(|e| format!("mkdir {}: {e}", path.display()))?;
        Ok(Group { path })
    }
}

/// `usage_usec` from a `cpu.stat` text.
pub fn parse_usage_usec(cpu_stat: &str) -> Option<u64> {
    cpu_stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == "usage_usec").then(|| v.trim().parse().ok())?
    })
}

/// The v2 path of a process from its `/proc/PID/cgroup` text (the
/// `0::/path` line); `None` on a v1-only system.
pub fn parse_proc_cgroup(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().to_string())
}

/// Where the cgroup2 file system is mounted, from a
/// `/proc/self/mountinfo` text (`… mount-point … - cgroup2 …`).
pub fn parse_cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        // Fields: id parent major:minor root mount-point …
        left.split_whitespace().nth(4).map(PathBuf::from)
    })
}

/// The bench's cgroup tree, created once: `Ok(root)` or why there is none.
pub fn root() -> Result<&'static Group, &'static str> {
    static ROOT: OnceLock<Result<Group, String>> = OnceLock::new();
    ROOT.get_or_init(create_root)
        .as_ref()
        .map_err(String::as_str)
}

fn create_root() -> Result<Group, String> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("read /proc/self/mountinfo: {e}"))?;
    let mount = parse_cgroup2_mount(&mountinfo)
        .ok_or_else(|| "no cgroup2 file system mounted".to_string())?;
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| parse_proc_cgroup(&t))
        .ok_or_else(|| "this process has no cgroup v2 path".to_string())?;
    let path = mount
        .join(own.trim_start_matches('/'))
        .join(format!("hotpair-bench-{}", std::process::id()));
    std::fs::create_dir(&path).map_err(|e| {
        format!(
            "cgroup v2 not writable here (mkdir {}: {e})",
            path.display()
        )
    })?;
    let group = Group { path };
    // Registered before anything can move in, so Ctrl-C removes it too.
    cleanup::register(Action::RemoveCgroup(group.path.clone()));
    if group.usage_usec().is_none() {
        let _ = std::fs::remove_dir(&group.path);
        return Err(format!(
            "{}/cpu.stat has no usage_usec",
            group.path.display()
        ));
    }
    Ok(group)
}

/// The group `name` under the bench's root (created), or `None` without
/// cgroups.
pub fn group(name: &str) -> Option<Group> {
    let root = root().ok()?;
    match root.child(name) {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("bench: cgroup: {e}");
            None
        }
    }
}

/// Moves a process tree into `group`: `pid` first, then its children as
/// they are now (anything it forks after the first move is born inside).
pub fn attach_tree(group: &Group, pid: u32) -> Result<(), String> {
    group.attach(pid)?;
    for child in super::sysinfo::children(pid) {
        // A child may exit between listing and moving: not an error.
        if let Err(e) = group.attach(child) {
            if std::path::Path::new(&format!("/proc/{child}")).exists() {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Removes the cgroup tree at `path`, deepest directories first, waiting
/// up to `wait` for exiting tasks to leave. An error names what is left.
pub fn remove_tree(path: &Path, wait: Duration) -> Result<(), String> {
    let deadline = Instant::now() + wait;
    loop {
        let mut dirs = Vec::new();
        collect_dirs(path, &mut dirs);
        // Deepest first: a cgroup with child cgroups cannot be removed.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        let mut left = Vec::new();
        for d in &dirs {
            if let Err(e) = std::fs::remove_dir(d) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    left.push(format!("{} ({e})", d.display()));
                }
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            let procs = Group {
                path: path.to_path_buf(),
            };
            return Err(format!(
                "could not remove {}; still there: {}; processes in the root: {:?}",
                path.display(),
                left.join(", "),
                procs.procs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `path` and every directory below it (cgroup directories hold only
/// interface files besides their children).
fn collect_dirs(path: &Path, out: &mut Vec<PathBuf>) {
    if !path.is_dir() {
        return;
    }
    if let Ok(rd) = std::fs::read_dir(path) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                collect_dirs(&e.path(), out);
            }
        }
    }
    out.push(path.to_path_buf());
}

/// Removes the bench's tree now (end of a normal run; every server has
/// been stopped) and forgets its cleanup registration.
pub fn remove_root() {
    if let Ok(root) = root() {
        match remove_tree(&root.path, Duration::from_secs(10)) {
            Ok(()) => cleanup::deregister_where(
                |a| matches!(a, Action::RemoveCgroup(p) if *p == root.path),
            ),
            Err(e) => eprintln!("bench: {e}"),
        }
    }
}

/// The header line: how server and pgbench CPU are measured.
pub fn method() -> String {
    match root() {
        Ok(g) => format!(
            "CPU per transaction: cgroup v2 cpu.stat usage_usec of each system (both nodes, every process ever in it) and of pgbench; tree {}",
            g.path.display()
        ),
        Err(why) => format!(
            "CPU per transaction: /proc fallback ({why}): hotpair's process, PostgreSQL's postmaster with its reaped and live children; pgbench from the bench's reaped-children time"
        ),
    }
}

/// CPU time (µs) of the children this process has reaped (`cutime +
/// cstime` of /proc/self/stat): pgbench's CPU once waited for, when there
/// are no cgroups. Clock ticks of 10 ms.
pub fn reaped_children_usec() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let f: Vec<u64> = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .skip(13)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    Some((f.first()? + f.get(1)?) * 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_stat() {
        let text = "usage_usec 1266518\nuser_usec 1266000\nsystem_usec 518\nnice_usec 0\n";
        assert_eq!(parse_usage_usec(text), Some(1_266_518));
        assert_eq!(parse_usage_usec("user_usec 5\n"), None);
        assert_eq!(parse_usage_usec("usage_usec x\n"), None);
    }

    #[test]
    fn parses_proc_cgroup() {
        let hybrid = "9:name=systemd:/\n4:memory:/a/b\n1:cpu:/\n0::/\n";
        assert_eq!(parse_proc_cgroup(hybrid).as_deref(), Some("/"));
        assert_eq!(
            parse_proc_cgroup("0::/user.slice/session-1.scope\n").as_deref(),
            Some("/user.slice/session-1.scope")
        );
        assert_eq!(parse_proc_cgroup("4:memory:/a\n"), None);
    }

    #[test]
    fn finds_cgroup2_mount() {
        let mi = "30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu\n\
                  38 25 0:34 / /sys/fs/cgroup/unified rw,relatime shared:17 - cgroup2 cgroup2 rw\n";
        assert_eq!(
            parse_cgroup2_mount(mi),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            parse_cgroup2_mount("30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw\n"),
            None
        );
    }

    #[test]
    fn own_reaped_children_time_reads() {
        assert!(reaped_children_usec().is_some());
    }
}
