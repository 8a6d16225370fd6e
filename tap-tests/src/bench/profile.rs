//! `--profile WORKLOAD:CLIENTS[:standby]`: a `perf record -g` profile of the
//! hotpair server during one benchmark point, so the slowest case can be
//! looked at on a quiet machine without setting anything up by hand.
//!
//! The first point of workload `WORKLOAD` (`select`, `tpcb`, `snapshot`,
//! `idle`, …) run with `CLIENTS` pgbench clients against hotpair — its
//! primary, or with `:standby` its standby — is recorded: `perf record
//! --call-graph dwarf -F 250 -p PID` runs beside pgbench for the point's
//! duration (DWARF unwinding: release builds have no frame pointers, and
//! `-g` alone would cut every stack at the first Rust frame). The server
//! is found by the port it listens on (`/proc/net/tcp` → socket inode →
//! `/proc/PID/fd`), so the harness needs no change. Written to the output
//! directory, named after the point (`perf-select-64-primary.*`):
//!
//! * `.txt` — `perf report --stdio --no-children` (self time), top lines;
//! * `.folded` — one line per distinct stack, `frame;frame;… count`
//!   (Brendan Gregg's folded format: `flamegraph.pl`, speedscope and
//!   inferno read it);
//! * `.data` is removed (large; rerun to get it).
//!
//! perf missing, or not allowed (`kernel.perf_event_paranoid`), is
//! reported and the benchmark goes on without the profile.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Which point to profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileSpec {
    /// Workload name as on the command line (`select`).
    pub workload: String,
    /// pgbench client count of the point.
    pub clients: u32,
    /// The standby instead of the primary.
    pub standby: bool,
    /// Also record PostgreSQL at the same point (`--profile-postgres`).
    pub postgres: bool,
}

impl ProfileSpec {
    /// Parses `select:64` / `select:64:standby`.
    pub fn parse(s: &str) -> Result<ProfileSpec, String> {
        let mut parts = s.split(':');
        let workload = parts.next().unwrap_or("").to_string();
        let clients = parts
            .next()
            .and_then(|c| c.parse::<u32>().ok())
            .ok_or_else(|| format!("--profile {s:?}: expected WORKLOAD:CLIENTS[:standby]"))?;
        let standby = match parts.next() {
            None | Some("primary") => false,
            Some("standby") => true,
            Some(other) => return Err(format!("--profile {s:?}: unknown node {other:?}")),
        };
        if workload.is_empty() || parts.next().is_some() {
            return Err(format!(
                "--profile {s:?}: expected WORKLOAD:CLIENTS[:standby]"
            ));
        }
        Ok(ProfileSpec {
            workload,
            clients,
            standby,
            postgres: false,
        })
    }

    /// File stem of the outputs.
    pub fn stem(&self) -> String {
        format!(
            "perf-{}-{}-{}",
            self.workload,
            self.clients,
            if self.standby { "standby" } else { "primary" }
        )
    }
}

/// A running `perf record`.
pub struct Recording {
    child: Child,
    data: PathBuf,
    stem: String,
    out: PathBuf,
    /// Keep only samples of this command (a system-wide recording).
    comm: Option<&'static str>,
}

/// The pid of the process listening on TCP `port` (IPv4 or IPv6).
pub fn pid_listening_on(port: u16) -> Option<u32> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st … uid timeout inode
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let p = local
                .rsplit(':')
                .next()
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            if p == Some(port) && *state == "0A" {
                inodes.push(format!("socket:[{inode}]"));
            }
        }
    }
    if inodes.is_empty() {
        return None;
    }
    let procs = std::fs::read_dir("/proc").ok()?;
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if inodes.iter().any(|i| Path::new(i) == target) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

/// Starts `perf record -g` on `pid` for `seconds`, writing into `out`.
pub fn start(spec: &ProfileSpec, pid: u32, seconds: u32, out: &Path) -> Result<Recording, String> {
    record(spec.stem(), &["-p", &pid.to_string()], None, seconds, out)
}

/// Starts a system-wide `perf record -g` for `seconds` whose report keeps
/// PostgreSQL's processes only (`comm` postgres: the postmaster and every
/// backend, which a per-pid recording could not follow as pgbench
/// connects), named `STEM-postgres`.
pub fn start_postgres(spec: &ProfileSpec, seconds: u32, out: &Path) -> Result<Recording, String> {
    let stem = format!("{}-postgres", spec.stem());
    record(stem, &["-a"], Some("postgres"), seconds, out)
}

fn record(
    stem: String,
    target: &[&str],
    comm: Option<&'static str>,
    seconds: u32,
    out: &Path,
) -> Result<Recording, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("mkdir {}: {e}", out.display()))?;
    let data = out.join(format!("{stem}.data"));
    let child = Command::new("perf")
        .args(["record", "--call-graph", "dwarf,16384", "-F", "250"])
        .args(target)
        .arg("-o")
        .arg(&data)
        .args(["--", "sleep", &seconds.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run perf: {e}"))?;
    Ok(Recording {
        child,
        data,
        stem,
        out: out.to_path_buf(),
        comm,
    })
}

impl Recording {
    /// Waits for perf, then writes the report and the folded stacks;
    /// returns their paths.
    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        let out = self
            .child
            .wait_with_output()
            .map_err(|e| format!("perf record: {e}"))?;
        if !out.status.success() || !self.data.exists() {
            return Err(format!(
                "perf record failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let comm: Vec<&str> = match self.comm {
            Some(c) => vec!["--comm", c],
            None => Vec::new(),
        };
        let report = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--percent-limit",
                "0.5",
                "-g",
                "none",
            ])
            .args(&comm)
            .arg("-i")
            .arg(&self.data)
            .output()
            .map_err(|e| format!("perf report: {e}"))?;
        let txt = self.out.join(format!("{}.txt", self.stem));
        std::fs::write(&txt, &report.stdout)
            .map_err(|e| format!("write {}: {e}", txt.display()))?;
        let script = Command::new("perf")
            .arg("script")
            .args(&comm)
            .arg("-i")
            .arg(&self.data)
            .output()
            .map_err(|e| format!("perf script: {e}"))?;
        let folded = self.out.join(format!("{}.folded", self.stem));
        std::fs::write(&folded, fold(&String::from_utf8_lossy(&script.stdout)))
            .map_err(|e| format!("write {}: {e}", folded.display()))?;
        let _ = std::fs::remove_file(&self.data);
        Ok(vec![txt, folded])
    }
}

/// `perf script` output → folded stacks (`root;…;leaf count`, most
/// frequent first). A sample is a header line (`comm pid … cycles:`), then
/// one line per frame (`addr symbol (dso)`, leaf first), then a blank line.
pub fn fold(script: &str) -> String {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut frames: Vec<String> = Vec::new();
    let mut comm = String::new();
    let mut flush = |comm: &str, frames: &mut Vec<String>| {
        if !comm.is_empty() || !frames.is_empty() {
            let mut stack: Vec<&str> = vec![comm];
            stack.extend(frames.iter().rev().map(String::as_str));
            *counts.entry(stack.join(";")).or_insert(0) += 1;
        }
        frames.clear();
    };
    for line in script.lines() {
        if line.trim().is_empty() {
            flush(&comm, &mut frames);
            comm.clear();
        } else if line.starts_with(|c: char| c.is_whitespace()) {
            // "\t    55d0c0 symbol+0x1f (/path/dso)"
            let t = line.trim();
            let sym = t.split_once(' ').map(|(_, s)| s).unwrap_or(t);
            let sym = match sym.rfind(" (") {
                Some(i) => &sym[..i],
                None => sym,
            };
            let sym = match sym.rfind("+0x") {
                Some(i) => &sym[..i],
                None => sym,
            };
            frames.push(sym.replace(';', ":"));
        } else {
            flush(&comm, &mut frames);
            comm = line.split_whitespace().next().unwrap_or("").to_string();
        }
    }
    flush(&comm, &mut frames);
    let mut v: Vec<(String, u64)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut s = String::new();
    for (stack, n) in v {
        s.push_str(&format!("{stack} {n}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        assert_eq!(
            ProfileSpec::parse("select:64").unwrap(),
            ProfileSpec {
                workload: "select".into(),
                clients: 64,
                standby: false,
                postgres: false,
            }
        );
        assert!(ProfileSpec::parse("select:64:standby").unwrap().standby);
        assert!(ProfileSpec::parse("select").is_err());
        assert!(ProfileSpec::parse("select:x").is_err());
        assert!(ProfileSpec::parse("select:8:elsewhere").is_err());
    }

    #[test]
    fn folds_perf_script_output() {
        let script = "tokio-rt 123 456.7: 1001 cycles:\n\
                      \t    aaaa leaf+0x10 (/bin/primary)\n\
                      \t    bbbb caller (/bin/primary)\n\
                      \n\
                      tokio-rt 123 456.8: 1001 cycles:\n\
                      \t    aaaa leaf+0x22 (/bin/primary)\n\
                      \t    bbbb caller (/bin/primary)\n\
                      \n";
        assert_eq!(fold(script), "tokio-rt;caller;leaf 2\n");
    }

    #[test]
    fn finds_a_listening_socket() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(pid_listening_on(port), Some(std::process::id()));
    }
}
