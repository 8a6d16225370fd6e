//! The machine header of a run and memory sampling of server processes,
//! all from /proc.
//!
//! Memory is counted the way each system's architecture asks for:
//!
//! * hotpair is one process: its `VmRSS` (`/proc/PID/status`) and `Pss`
//!   (`/proc/PID/smaps_rollup`).
//! * PostgreSQL is a postmaster plus one process per connection that share
//!   `shared_buffers` and the executable: what a connection costs is its
//!   backend's *private* memory, `Private_Clean + Private_Dirty` of
//!   smaps_rollup, summed over the postmaster and all its children (shared
//!   pages would otherwise be counted once per backend).

use std::time::{SystemTime, UNIX_EPOCH};

/// The machine a run happened on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Online CPUs.
    pub nproc: usize,
    /// MemTotal in MiB.
    pub mem_mib: u64,
    /// Kernel release.
    pub kernel: String,
    /// CPU model name.
    pub cpu: String,
    /// UTC date and time of the run (ISO 8601).
    pub date: String,
}

impl Machine {
    /// Reads /proc.
    pub fn read() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        let nproc = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Machine {
            nproc,
            mem_mib: meminfo_kib("MemTotal").unwrap_or(0) / 1024,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            cpu,
            date: utc_now(),
        }
    }

    /// One header line.
    pub fn describe(&self) -> String {
        format!(
            "machine: {} CPUs ({}), {} MiB memory, Linux {}; date {}",
            self.nproc, self.cpu, self.mem_mib, self.kernel, self.date
        )
    }
}

/// A field of /proc/meminfo in KiB.
pub fn meminfo_kib(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, field)
}

/// `Name:   1234 kB` → 1234 from a /proc text.
fn kib_field(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() == field {
            v.split_whitespace().next()?.parse().ok()
        } else {
            None
        }
    })
}

/// Now, as `YYYY-MM-DDTHH:MM:SSZ` (civil date from days since the epoch,
/// Howard Hinnant's algorithm; no date crate needed).
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Memory of one process, KiB.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcMem {
    /// Resident set size.
    pub rss: u64,
    /// Proportional set size.
    pub pss: u64,
    /// Private_Clean + Private_Dirty.
    pub private: u64,
}

/// Reads `/proc/PID/smaps_rollup` (and VmRSS).
pub fn proc_mem(pid: u32) -> Option<ProcMem> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    Some(ProcMem {
        rss: kib_field(&rollup, "Rss")?,
        pss: kib_field(&rollup, "Pss").unwrap_or(0),
        private: kib_field(&rollup, "Private_Clean").unwrap_or(0)
            + kib_field(&rollup, "Private_Dirty").unwrap_or(0),
    })
}

/// CPU seconds (user + system) `pid` has used so far, from
/// /proc/PID/stat; with `reaped`, plus what its exited and waited-for
/// children used (PostgreSQL's backends, once the postmaster reaped them).
pub fn cpu_secs(pid: u32, reaped: bool) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<u64> = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // utime, stime, cutime, cstime (clock ticks of 1/100 s on Linux).
    let ticks = f.first()? + f.get(1)? + if reaped { f.get(2)? + f.get(3)? } else { 0 };
    Some(ticks as f64 / 100.0)
}

/// Children of `parent` (from /proc/*/stat's ppid field).
pub fn children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces; split after ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// The soft `Max open files` of a `/proc/PID/limits` text.
pub fn parse_nofile_soft(limits: &str) -> Option<u64> {
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// The soft open-file limit of this process.
pub fn own_nofile_soft() -> Option<u64> {
    parse_nofile_soft(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

/// A memory sample of a whole server.
#[derive(Clone, Copy, Debug, Default)]
pub struct ServerMem {
    /// The number the memory workload reports, KiB: hotpair's RSS, or
    /// PostgreSQL's summed private memory.
    pub kib: u64,
    /// Processes counted.
    pub processes: usize,
    /// hotpair: PSS (KiB); PostgreSQL: summed PSS.
    pub pss: u64,
}

/// hotpair: one process.
pub fn single_process(pid: u32) -> Option<ServerMem> {
    let m = proc_mem(pid)?;
    Some(ServerMem {
        kib: m.rss,
        processes: 1,
        pss: m.pss,
    })
}

/// PostgreSQL: postmaster + children, private memory summed.
pub fn process_tree(postmaster: u32) -> Option<ServerMem> {
    let root = proc_mem(postmaster)?;
    let mut total = ServerMem {
        kib: root.private,
        processes: 1,
        pss: root.pss,
    };
    for child in children(postmaster) {
        if let Some(m) = proc_mem(child) {
            total.kib += m.private;
            total.pss += m.pss;
            total.processes += 1;
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_memory_and_date() {
        let m = proc_mem(std::process::id()).expect("own smaps_rollup");
        assert!(m.rss > 0);
        let d = utc_now();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.starts_with("20"), "{d}");
    }

    #[test]
    fn nofile_limit() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max cpu time              unlimited            unlimited            seconds   \n\
                    Max open files            20000                20000                files     \n";
        assert_eq!(parse_nofile_soft(text), Some(20000));
        assert_eq!(parse_nofile_soft("Max processes 5 5\n"), None);
    }

    #[test]
    fn kib_fields() {
        assert_eq!(kib_field("Rss:    12 kB\nPss: 7 kB\n", "Pss"), Some(7));
    }
}
