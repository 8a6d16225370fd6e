//! # bench — hotpair beside PostgreSQL 15, one program, one run
//!
//! The library half of the `bench` binary (`tap-tests/src/bin/bench.rs`):
//! it starts a hotpair primary (through the harness [`crate::Node`]) and a
//! PostgreSQL 15 primary + streaming standby with matched settings, runs the
//! workloads on both, and reports each as a table
//! (hotpair | PostgreSQL | ratio), a results file and an SVG plot.
//!
//! ```text
//!   bin/bench.rs ── args, rlimit, Ctrl-C ──► Bench::run
//!        │
//!        ├── target.rs   Target: a system under test (hotpair | PostgreSQL),
//!        │               its primary / standby endpoints, memory sampling
//!        │     └── pg.rs PgPair: initdb, pg_basebackup -R, pg_ctl (as `postgres`)
//!        ├── workloads.rs / copy.rs / latency.rs / idle.rs / redo.rs /
//!        │   manyidle.rs / horizon.rs / snapme.rs / ssi.rs / tpch/
//!        │               one function per workload, filling a Table
//!        ├── nullserver.rs  select --floor: a PostgreSQL-wire server doing
//!        │               nothing, the host's floor of a server's CPU
//!        ├── cgroup.rs   CPU per system and of pgbench, by cgroup v2
//!        ├── pgbench.rs  runs pgbench with a deadline and parses its summary
//!        ├── profile.rs  --profile: perf record -g of hotpair during one point
//!        ├── goals.rs    the targets: met / missed, with the numbers
//!        ├── report.rs   Table (rows × series, ratios), text, CSV, JSON
//!        ├── svg.rs      a small SVG writer: line (log2 x) and grouped bars
//!        ├── sysinfo.rs  the machine header; RSS / PSS / private memory
//!        └── cleanup.rs  what must be stopped and removed, even on Ctrl-C
//! ```
//!
//! ## Rules the program keeps
//!
//! * **Same run, same settings.** Both systems get the same
//!   `shared_buffers`, `fsync`, `synchronous_commit`, `max_connections` and
//!   `max_prepared_transactions` ([`Settings`]) and are driven by the same
//!   client (pgbench over TCP to 127.0.0.1 — through the Unix socket with
//!   `--unix` — or tokio-postgres). PostgreSQL
//!   runs otherwise at its defaults ([`pg::where_to_listen`] is all it
//!   gets besides).
//! * **CPU is counted, not guessed.** Every pgbench point reports the
//!   server system's CPU and pgbench's own per transaction, from cgroups
//!   that hold every process each system ever ran ([`cgroup`]); a reader
//!   sees when pgbench, not the server, was the limit; with `--floor` the
//!   null server shows what the host alone charges any server.
//! * **A failure is a result.** A workload that fails on one system records
//!   the error in its cell, prints it and the run goes on; what a target
//!   cannot run (no standby) is a *skip* with the reason printed.
//! * **Nothing is left behind.** Every server and directory is owned by a
//!   guard that stops / removes it on drop, and [`cleanup`] does the same
//!   from a Ctrl-C / SIGTERM handler for whatever is still registered.
//! * **Nothing hangs.** Every pgbench has a deadline (its duration plus a
//!   margin) after which it is killed and the point recorded as failed.

pub mod cgroup;
pub mod cleanup;
pub mod copy;
pub mod goals;
pub mod horizon;
pub mod idle;
pub mod latency;
pub mod manyidle;
pub mod nullserver;
pub mod pg;
pub mod pgbench;
pub mod profile;
pub mod redo;
pub mod report;
pub mod snapme;
pub mod ssi;
pub mod svg;
pub mod sysinfo;
pub mod target;
pub mod tls;
pub mod tpch;
pub mod workloads;

use std::path::PathBuf;

/// The settings both systems run with, written to `hotpair.conf` and
/// `postgresql.conf` alike.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `shared_buffers`, as written in the config file (`256MB`).
    pub shared_buffers: String,
    /// `fsync` (on: every commit benchmark here is about durable commits).
    pub fsync: bool,
    /// `synchronous_commit`.
    pub synchronous_commit: bool,
    /// `max_connections`: the largest idle count plus the active clients.
    pub max_connections: u32,
    /// `max_prepared_transactions`: at least the 2PC script's client count.
    pub max_prepared_transactions: u32,
    /// Start a streaming standby beside each primary (`--no-standby`: the
    /// primaries alone, as the seed's COPY experiment ran).
    pub standby: bool,
    /// Data checksums (`--data-checksums`): hotpair's `data_checksums =
    /// on` when its data directory is created, PostgreSQL's `initdb -k`.
    pub data_checksums: bool,
    /// The directory of the TLS certificate both serve (`tls`); None:
    /// no TLS.
    pub tls: Option<PathBuf>,
}

impl Settings {
    /// The settings as `name = value` lines of a config file.
    pub fn conf_lines(&self) -> String {
        let onoff = |b: bool| if b { "on" } else { "off" };
        format!(
            "shared_buffers = {}\nfsync = {}\nsynchronous_commit = {}\nmax_connections = {}\nmax_prepared_transactions = {}\n{}",
            self.shared_buffers,
            onoff(self.fsync),
            onoff(self.synchronous_commit),
            self.max_connections,
            self.max_prepared_transactions,
            // Both primaries keep 4 GB of WAL for their standby: a standby
            // that lags under a bulk load (COPY, pgbench -i) must not find
            // its next segment removed by a checkpoint.
            "wal_keep_size = 4096MB\n"
        )
    }

    /// [`Settings::conf_lines`] for a hotpair primary: with data checksums
    /// it also asks for them (read when the data directory is created).
    pub fn hotpair_conf_lines(&self) -> String {
        let mut s = self.conf_lines();
        s.push_str(&self.tls_lines(false));
        if self.data_checksums {
            s.push_str("data_checksums = on\n");
        }
        s
    }

    /// The lines that serve TLS (`pg`: PostgreSQL's, else hotpair's).
    pub fn tls_lines(&self, pg: bool) -> String {
        self.tls
            .as_deref()
            .map(|d| tls::conf_lines(d, pg))
            .unwrap_or_default()
    }
}

/// Everything a workload needs to know about the run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// `--quick`: short durations and small counts (a smoke run).
    pub quick: bool,
    /// Seconds per pgbench point (`-T`).
    pub duration: u32,
    /// pgbench scale factor for the read / tpcb-like workloads.
    pub scale: u32,
    /// Client counts of the select-only curve.
    pub select_clients: Vec<u32>,
    /// Interleaved rounds per select-only point (`--rounds`); each cell is
    /// the median of its rounds.
    pub select_rounds: u32,
    /// `--unix`: pgbench's timed points (and their warm-ups) connect
    /// through each server's Unix socket, as pgbench does when given no
    /// `-h`, instead of TCP to 127.0.0.1.
    pub unix: bool,
    /// `--floor`: select-only also runs each point against the null
    /// server ([`nullserver`]), the host's floor of a server's CPU.
    pub floor: bool,
    /// Idle connection counts of the idle-connection workload.
    pub idle_counts: Vec<u32>,
    /// Idle counts of its "mostly idle" variant (a subset: each point
    /// costs two runs per system).
    pub mostly_idle_counts: Vec<u32>,
    /// Seconds per point of the idle workloads (20 points per variant and
    /// system: shorter than `duration` keeps the full run within 25 min).
    pub idle_duration: u32,
    /// Idle connections for the memory workload.
    pub memory_idle: u32,
    /// Idle sessions of the many-connections workload (`--many-idle`; 0:
    /// as many as the open-file limit allows).
    pub many_idle: u32,
    /// Standbys are started (not `--no-standby`).
    pub standby: bool,
    /// Client counts of the commit-throughput workload.
    pub commit_clients: Vec<u32>,
    /// Commits measured by the commit-to-visible workload.
    pub latency_commits: u32,
    /// COPY: files loaded per run (each by one COPY).
    pub copy_files: u32,
    /// COPY: rows per file (100,000; 25,000 with --quick).
    pub copy_rows: u32,
    /// COPY: client counts.
    pub copy_clients: Vec<u32>,
    /// COPY: runs per cell, the median reported (3; 1 with --quick).
    pub copy_reps: u32,
    /// Scale of the timed `pgbench -i`.
    pub init_scale: u32,
    /// Root of every directory the run creates.
    pub work_dir: PathBuf,
    /// Where the scripts for pgbench are written.
    pub script_dir: PathBuf,
    /// Refuse to open more idle connections when MemAvailable falls below
    /// this many MiB (the machine is shared).
    pub min_mem_available_mib: u64,
    /// Where [`tls::write_files`] put the certificate (None: no TLS).
    pub tls: Option<PathBuf>,
    /// TPC-H scale factor (`--tpch-scale`, 0.1).
    pub tpch_scale: f64,
    /// TPC-H: interleaved rounds per query, the median reported (3).
    pub tpch_rounds: u32,
    /// TPC-H: `statement_timeout` per query, seconds (300).
    pub tpch_timeout: u32,
    /// Where workloads that write their own files put them (`--out`;
    /// None with `--no-write`).
    pub out: Option<PathBuf>,
}

impl RunConfig {
    /// The full run (`quick = false`) or the smoke run.
    pub fn new(quick: bool, work_dir: PathBuf) -> RunConfig {
        let script_dir = work_dir.join("scripts");
        if quick {
            RunConfig {
                quick,
                duration: 1,
                scale: 1,
                select_clients: vec![1, 8, 64, 256],
                select_rounds: 1,
                unix: false,
                floor: false,
                idle_counts: vec![0, 100, 1000],
                mostly_idle_counts: vec![0, 1000],
                idle_duration: 1,
                memory_idle: 1000,
                many_idle: 0,
                standby: true,
                commit_clients: vec![1, 8, 32, 128],
                latency_commits: 100,
                copy_files: 8,
                copy_rows: 25_000,
                copy_clients: vec![1, 2, 4, 8],
                copy_reps: 1,
                init_scale: 2,
                work_dir,
                script_dir,
                min_mem_available_mib: 3072,
                tls: None,
                tpch_scale: 0.1,
                tpch_rounds: 3,
                tpch_timeout: 300,
                out: None,
            }
        } else {
            RunConfig {
                quick,
                duration: 10,
                scale: 10,
                select_clients: vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
                select_rounds: 1,
                unix: false,
                floor: false,
                idle_counts: vec![0, 100, 1000, 5000, 10000],
                mostly_idle_counts: vec![0, 1000, 10000],
                idle_duration: 5,
                memory_idle: 10000,
                many_idle: 0,
                standby: true,
                commit_clients: vec![1, 8, 32, 128],
                latency_commits: 1000,
                copy_files: 16,
                copy_rows: 100_000,
                copy_clients: vec![1, 2, 4, 8],
                copy_reps: 3,
                init_scale: 20,
                work_dir,
                script_dir,
                min_mem_available_mib: 3072,
                tls: None,
                tpch_scale: 0.1,
                tpch_rounds: 3,
                tpch_timeout: 300,
                out: None,
            }
        }
    }

    /// The settings both systems get for this run.
    pub fn settings(&self) -> Settings {
        let max_idle = self
            .idle_counts
            .iter()
            .copied()
            .chain([self.memory_idle])
            .max()
            .unwrap_or(0);
        Settings {
            shared_buffers: "256MB".to_string(),
            fsync: true,
            synchronous_commit: true,
            max_connections: max_idle + 300,
            max_prepared_transactions: 100,
            standby: true,
            data_checksums: false,
            tls: self.tls.clone(),
        }
    }

    /// pgbench `-j`: two threads (the machine's cores), never more than clients.
    pub fn threads(clients: u32) -> u32 {
        clients.clamp(1, 2)
    }
}
