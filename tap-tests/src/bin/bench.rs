//! # bench — hotpair beside PostgreSQL 15 on this machine, in one run
//!
//! ```sh
//! cargo run --release -p tap-tests --bin bench -- [WORKLOAD…] [--quick] [--out docs/benchmarks]
//! ```
//!
//! Workloads (default: all, in this order): `select` (select-only
//! -M prepared over client counts, primary and standby), `idle` (active
//! tps beside idle and mostly-idle connections), `snapshot` (`SELECT 1`,
//! `SELECT txid_current()`), `tpcb` (tpcb-like, 2PC script, 90/10 mix),
//! `connect` (`-C`), `memory` (RSS with idle connections), `commit`
//! (single-row INSERT commits, fsyncs per commit), `latency`
//! (commit-to-visible on the standby), `copy` (concurrent COPY, bulk vs
//! single extension, and `pgbench -i` wall time), `manyidle` (as many idle
//! sessions as the open-file limit allows on one node, primary and
//! standby: open rate, memory, 8 active clients beside them; where
//! PostgreSQL stops starting as `max_connections` grows).
//!
//! Run only when named: `tpch` (TPC-H's 22 queries on both standbys at
//! `--tpch-scale` 0.1 or 1, rows compared, median ms and ratio per query;
//! writes `tpch_results.txt` and `tpch_explain.txt` into `--out`, and
//! alone leaves `results.*` and `targets.txt` as they were).
//!
//! Every pgbench table carries, per system, the server's CPU and
//! pgbench's own CPU per transaction, counted by cgroup v2 where it is
//! writable (`tap_tests::bench::cgroup`).
//! It starts a hotpair primary (harness `Node`, release binaries when built
//! with `--release`) and a PostgreSQL 15 primary + streaming standby
//! (as the `postgres` OS user when run as root) under one temporary work
//! directory, prints a table per workload, writes `results.csv`,
//! `results.json`, one SVG per table and `targets.txt` (each performance
//! target met or missed, with its numbers; also printed) into `--out`, and
//! removes everything it started — also on Ctrl-C. See `tap_tests::bench`.
//!
//! `--profile WORKLOAD:CLIENTS[:standby]` records `perf record -g` of the
//! hotpair server during that point (`bench::profile`). `select --floor`
//! runs every point against a null server too (`bench::nullserver`): what
//! the round trip alone costs a server on this host.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tap_tests::bench::profile::ProfileSpec;
use tap_tests::bench::report::{json_str, Table};
use tap_tests::bench::target::{Kind, Target};
use tap_tests::bench::workloads::{self, Ctx};
use tap_tests::bench::{
    cgroup, cleanup, copy, goals, horizon, latency, manyidle, pg, pgbench, snapme, ssi, svg,
    sysinfo, tpch, RunConfig,
};

/// Every workload, in run order.
const WORKLOADS: [&str; 13] = [
    "select", "idle", "snapshot", "tpcb", "connect", "memory", "commit", "latency", "copy",
    "manyidle", "horizon", "snapme", "ssi",
];

/// Workloads run only when named (too long for the default run).
const NAMED_ONLY: [&str; 1] = ["tpch"];

/// Workloads that write their own result files instead of `results.*`.
const OWN_FILES: [&str; 1] = ["tpch"];

/// Command line of `bench`.
#[derive(Parser, Debug)]
#[command(name = "bench", about = "hotpair vs PostgreSQL 15 benchmarks")]
struct Args {
    /// Workloads to run (default: all but tpch): select idle snapshot tpcb connect memory commit latency copy manyidle horizon snapme ssi; tpch.
    workloads: Vec<String>,

    /// Short durations and small counts: a smoke run of a minute or two.
    #[arg(long)]
    quick: bool,

    /// Directory for results.csv, results.json and the SVG plots.
    #[arg(long, default_value = "docs/benchmarks")]
    out: PathBuf,

    /// Print the tables only; write no files.
    #[arg(long)]
    no_write: bool,

    /// Seconds per pgbench point (overrides the default: 10, or 1 with --quick).
    #[arg(long)]
    duration: Option<u32>,

    /// Client counts of the select workload, comma-separated (e.g. `64,128,256`;
    /// default: 1,2,4,…,256, or 1,8,64,256 with --quick).
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    clients: Vec<u32>,

    /// select, snapme, ssi and manyidle: run the interleaved sequence at each
    /// point this many times; each cell is the median, every round is printed.
    #[arg(long, value_name = "N", default_value_t = 1)]
    rounds: u32,

    /// Do not start hotpair (PostgreSQL only).
    #[arg(long)]
    skip_hotpair: bool,

    /// Do not start PostgreSQL (hotpair only).
    #[arg(long)]
    skip_postgres: bool,

    /// Start the primaries without their standbys (the seed's COPY
    /// experiment ran one server; standby workloads then report skips).
    #[arg(long)]
    no_standby: bool,

    /// pgbench's timed points connect through each server's Unix socket
    /// (pgbench's default when given no -h) instead of TCP to 127.0.0.1.
    #[arg(long)]
    unix: bool,

    /// select: also run each point against a null server (a child of this
    /// program that answers pgbench with canned results, one thread per
    /// connection): the host's floor of a server's CPU per transaction.
    #[arg(long)]
    floor: bool,

    /// Both systems with data checksums (hotpair's `data_checksums = on`
    /// at creation, PostgreSQL's `initdb -k`).
    #[arg(long)]
    data_checksums: bool,

    /// manyidle: idle sessions per node (default: the open-file limit
    /// minus a reserve; 2,000 at most with --quick).
    #[arg(long, value_name = "N")]
    many_idle: Option<u32>,

    /// Keep the work directory (data directories and logs) at the end.
    #[arg(long)]
    keep: bool,

    /// Record a `perf record` (DWARF call graphs) profile of the hotpair server during one
    /// point, WORKLOAD:CLIENTS[:standby] (e.g. `select:64`): writes
    /// perf-WORKLOAD-CLIENTS-NODE.txt (perf report, self time) and .folded
    /// (folded stacks for a flame graph) into --out.
    #[arg(long, value_name = "WORKLOAD:CLIENTS[:standby]")]
    profile: Option<String>,

    /// With --profile: record PostgreSQL at the same point too (system-wide
    /// perf, its processes kept): perf-WORKLOAD-CLIENTS-NODE-postgres.*.
    #[arg(long, requires = "profile")]
    profile_postgres: bool,

    /// tpch: TPC-H scale factor (0.1 or 1; any positive value works).
    #[arg(long, value_name = "SF", default_value_t = 0.1)]
    tpch_scale: f64,

    /// tpch: interleaved rounds per query; each cell is the median.
    #[arg(long, value_name = "N", default_value_t = 3)]
    tpch_rounds: u32,

    /// tpch: statement_timeout per query, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    tpch_timeout: u32,

    /// Only load TPC-H (--tpch-scale) into the server already listening on
    /// 127.0.0.1:PORT (user and database postgres; its tables are replaced),
    /// then exit: a loaded pair to try queries and plans by hand.
    #[arg(long, value_name = "PORT")]
    tpch_load: Option<u16>,

    /// manyidle's holder processes (internal): open idle sessions and
    /// hold them until standard input closes.
    #[arg(long, value_name = "SPEC", hide = true)]
    hold_idle: Option<String>,

    /// The null server of `--floor` (internal): PORT[:SOCKET_DIR], until
    /// standard input closes.
    #[arg(long, value_name = "SPEC", hide = true)]
    null_server: Option<String>,
}

/// Open-file limit the idle-connection workloads want (client sockets in
/// this process, server sockets in hotpair, which inherits it): 100,000
/// sessions and a reserve. Where the hard limit is lower, the hard limit.
const NOFILE_WANTED: u64 = 110_000;

/// The soft open-file limit of this process.
fn nofile_soft() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(3)
                        .and_then(|v| v.parse::<u64>().ok())
                })
        })
        .unwrap_or(0)
}

/// Raises RLIMIT_NOFILE by re-executing this program under `sh -c 'ulimit
/// -n …; exec …'` once (std has no setrlimit, and servers started later
/// inherit the limit).
fn ensure_nofile() {
    let soft = nofile_soft();
    if soft >= NOFILE_WANTED || std::env::var_os("HOTPAIR_BENCH_REEXEC").is_some() {
        if soft < 20000 {
            eprintln!("bench: open-file limit is {soft}; the idle-connection workload may fail at high counts");
        }
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let script = format!(
        "ulimit -n {NOFILE_WANTED} 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; exec \"$0\" \"$@\""
    );
    let err = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env("HOTPAIR_BENCH_REEXEC", "1")
        .exec();
    eprintln!("bench: could not re-exec with a higher open-file limit: {err}");
}

fn main() -> ExitCode {
    let args = Args::parse();
    let profile = match args.profile.as_deref().map(ProfileSpec::parse) {
        None => None,
        Some(Ok(p)) if WORKLOADS.contains(&p.workload.as_str()) => Some(ProfileSpec {
            postgres: args.profile_postgres,
            ..p
        }),
        Some(Ok(p)) => {
            eprintln!(
                "bench: --profile: unknown workload {:?}; choose from {}",
                p.workload,
                WORKLOADS.join(" ")
            );
            return ExitCode::from(2);
        }
        Some(Err(e)) => {
            eprintln!("bench: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(spec) = &args.hold_idle {
        return match manyidle::hold_idle(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(spec) = &args.null_server {
        return match tap_tests::bench::nullserver::serve(spec) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(port) = args.tpch_load {
        if args.tpch_scale.is_nan() || args.tpch_scale <= 0.0 {
            eprintln!("bench: --tpch-scale must be positive");
            return ExitCode::from(2);
        }
        return match tap_tests::bench::tpch::load_into(port, args.tpch_scale) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("bench: --tpch-load: {e}");
                ExitCode::FAILURE
            }
        };
    }
    ensure_nofile();
    let selected: Vec<String> =
        if args.workloads.is_empty() || args.workloads.iter().any(|w| w == "all") {
            WORKLOADS.iter().map(|s| s.to_string()).collect()
        } else {
            for w in &args.workloads {
                if !WORKLOADS.contains(&w.as_str()) && !NAMED_ONLY.contains(&w.as_str()) {
                    eprintln!(
                        "bench: unknown workload {w:?}; choose from {} {}",
                        WORKLOADS.join(" "),
                        NAMED_ONLY.join(" ")
                    );
                    return ExitCode::from(2);
                }
            }
            WORKLOADS
                .iter()
                .chain(NAMED_ONLY.iter())
                .filter(|w| args.workloads.iter().any(|a| a == *w))
                .map(|s| s.to_string())
                .collect()
        };

    // One work directory for everything; removed at the end and on Ctrl-C.
    let work = match tempfile::Builder::new()
        .prefix("hotpair-bench-")
        .tempdir_in(std::env::temp_dir())
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("bench: cannot create a work directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let work_path = work.path().to_path_buf();
    if let Err(e) = pg::set_mode(&work_path, 0o755) {
        eprintln!("bench: {e}");
    }
    let work_cleanup =
        (!args.keep).then(|| cleanup::register(cleanup::Action::RemoveDir(work_path.clone())));
    cleanup::install_signal_handler();
    // Created before any server starts, so every server can be moved in.
    if let Err(why) = cgroup::root() {
        eprintln!("bench: no cgroups ({why}); CPU is read from /proc");
    }
    // Harness nodes live in the work directory and are always hotpair.
    std::env::set_var("HOTPAIR_TAP_TMPDIR", work_path.join("hotpair"));
    std::env::remove_var("HOTPAIR_TAP_POSTGRES_BINDIR");

    let mut cfg = RunConfig::new(args.quick, work_path.clone());
    // Both systems serve TLS (`ssl = on`); runs connect in plain TCP
    // unless a workload asks for TLS (or the caller set PGSSLMODE).
    let tls_dir = work_path.join("tls");
    match tap_tests::bench::tls::write_files(&tls_dir) {
        Ok(()) => cfg.tls = Some(tls_dir),
        Err(e) => eprintln!("bench: no TLS ({e})"),
    }
    if std::env::var_os("PGSSLMODE").is_none() {
        std::env::set_var("PGSSLMODE", "disable");
    }
    if let Some(d) = args.duration {
        cfg.duration = d.max(1);
    }
    if !args.clients.is_empty() {
        cfg.select_clients = args.clients.iter().map(|&c| c.max(1)).collect();
    }
    cfg.select_rounds = args.rounds.max(1);
    cfg.unix = args.unix;
    cfg.floor = args.floor;
    cfg.many_idle = args.many_idle.unwrap_or(0);
    if args.tpch_scale.is_nan() || args.tpch_scale <= 0.0 {
        eprintln!("bench: --tpch-scale must be positive");
        return ExitCode::from(2);
    }
    cfg.tpch_scale = args.tpch_scale;
    cfg.tpch_rounds = args.tpch_rounds.max(1);
    cfg.tpch_timeout = args.tpch_timeout.max(1);
    cfg.out = (!args.no_write).then(|| args.out.clone());
    cfg.standby = !args.no_standby;
    let mut settings = cfg.settings();
    settings.standby = !args.no_standby;
    settings.data_checksums = args.data_checksums;
    let machine = sysinfo::Machine::read();
    let pgbench_path = pgbench::pgbench_path();
    let pgbench_version = pgbench_path
        .as_ref()
        .and_then(|p| std::process::Command::new(p).arg("--version").output().ok())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "pgbench not installed".into());

    // The systems.
    eprintln!(
        "bench: starting hotpair and PostgreSQL (work directory {})",
        work_path.display()
    );
    let hotpair = if args.skip_hotpair {
        Target::unavailable(Kind::Hotpair, "hotpair: skipped (--skip-hotpair)")
    } else {
        Target::hotpair(&settings, "")
    };
    let postgres = match (args.skip_postgres, pg::find_bindir()) {
        (true, _) => Target::unavailable(Kind::Postgres, "PostgreSQL: skipped (--skip-postgres)"),
        (false, None) => Target::unavailable(Kind::Postgres, "PostgreSQL 15 not installed"),
        (false, Some(bindir)) => Target::postgres(&bindir, &work_path, &settings),
    };

    let mut header = vec![
        format!(
            "hotpair benchmark run{}",
            if cfg.quick { " (--quick)" } else { "" }
        ),
        machine.describe(),
        format!(
            "systems: {} | {} | {}",
            hotpair.version,
            if postgres.version.is_empty() {
                "PostgreSQL: n/a"
            } else {
                &postgres.version
            },
            pgbench_version
        ),
        format!(
            "settings (both): {}{}",
            settings.conf_lines().trim().replace('\n', ", "),
            if settings.standby {
                ""
            } else {
                "; no standbys (--no-standby)"
            }
        ),
        pg::defaults_line(),
        format!(
            "pgbench: -n -T {} -j min(clients,2), scale {}, {}; open-file limit {}",
            cfg.duration,
            cfg.scale,
            if cfg.unix {
                "timed points through each server's Unix socket (--unix)"
            } else {
                "TCP 127.0.0.1"
            },
            nofile_soft()
        ),
        cgroup::method(),
    ];
    for t in [&hotpair, &postgres] {
        if t.primary.is_ok() {
            header.push(format!("CPU of {}", t.cpu_method()));
        }
    }
    for t in [&hotpair, &postgres] {
        if let Err(e) = &t.primary {
            header.push(format!("{}: {}", t.name, e));
        } else if let Err(e) = &t.standby {
            header.push(format!("{} {}", t.name, e));
        }
    }
    println!("{}", header.join("\n"));

    let quick = cfg.quick;
    let mut ctx = Ctx::new(cfg, pgbench_path, vec![hotpair, postgres]);
    ctx.profile = profile.map(|p| (p, args.out.clone()));
    let mut tables: Vec<Table> = Vec::new();
    let run_start = std::time::Instant::now();
    for w in &selected {
        if cleanup::interrupted() {
            cleanup::park_forever();
        }
        eprintln!("bench: workload {w}");
        ctx.workload = w.clone();
        let start = std::time::Instant::now();
        let new = match w.as_str() {
            "select" => workloads::select_only(&mut ctx),
            "idle" => workloads::idle(&mut ctx),
            "snapshot" => workloads::snapshot(&mut ctx),
            "tpcb" => workloads::tpcb(&mut ctx),
            "connect" => workloads::connect(&mut ctx),
            "memory" => workloads::memory(&mut ctx),
            "commit" => workloads::commit(&mut ctx),
            "latency" => latency::commit_to_visible(&mut ctx),
            "copy" => copy::copy(&mut ctx),
            "manyidle" => manyidle::many_idle(&mut ctx),
            "horizon" => horizon::horizon(&mut ctx),
            "snapme" => snapme::snapme(&mut ctx),
            "ssi" => ssi::ssi(&mut ctx),
            "tpch" => tpch::tpch(&mut ctx),
            _ => Vec::new(),
        };
        for t in &new {
            print!("{}", t.render());
        }
        eprintln!(
            "bench: workload {w} took {:.0} s",
            start.elapsed().as_secs_f64()
        );
        tables.extend(new);
    }

    if cleanup::interrupted() {
        cleanup::park_forever();
    }
    if let Some((p, _)) = &ctx.profile {
        if !selected.contains(&p.workload) {
            eprintln!("bench: --profile: workload {} was not run", p.workload);
        }
    }
    let goals = goals::evaluate(&tables);
    let goals_text = goals::render(&goals, quick);
    print!("{goals_text}");
    println!(
        "whole run: {:.1} min",
        run_start.elapsed().as_secs_f64() / 60.0
    );
    // Servers down before files are written: a Ctrl-C during writing
    // leaves nothing running.
    for t in ctx.targets.iter_mut() {
        t.shutdown();
    }
    cgroup::remove_root();

    let mut status = ExitCode::SUCCESS;
    let own_files_only = selected.iter().all(|w| OWN_FILES.contains(&w.as_str()));
    if !args.no_write && !own_files_only {
        if let Err(e) = write_results(&args.out, &header, &machine, &tables)
            .and_then(|()| write_goals(&args.out, &header, &goals_text))
        {
            eprintln!("bench: writing results: {e}");
            status = ExitCode::FAILURE;
        } else {
            println!(
                "\nresults: {}/results.csv, results.json, *.svg",
                args.out.display()
            );
        }
    }
    if args.keep {
        println!("work directory kept: {}", work_path.display());
        let _ = work.keep();
    } else if let Some(id) = work_cleanup {
        cleanup::deregister(id);
        drop(work);
    }
    status
}

/// targets.txt: the run header and the performance targets, met or missed.
fn write_goals(out: &std::path::Path, header: &[String], goals: &str) -> Result<(), String> {
    let p = out.join("targets.txt");
    let text = format!("{}\n{}", header.join("\n"), goals);
    std::fs::write(&p, text).map_err(|e| format!("write {}: {e}", p.display()))
}

/// results.csv, results.json and one SVG per table in `out`.
fn write_results(
    out: &std::path::Path,
    header: &[String],
    machine: &sysinfo::Machine,
    tables: &[Table],
) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("mkdir {}: {e}", out.display()))?;
    let mut csv_text = String::new();
    for h in header {
        csv_text.push_str(&format!("# {h}\n"));
    }
    csv_text.push_str("workload,row,x,series,unit,status,value,note\n");
    for t in tables {
        for r in t.csv_rows() {
            csv_text.push_str(&r);
            csv_text.push('\n');
        }
    }
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("write {}: {e}", p.display()))
    };
    write("results.csv", &csv_text)?;
    let json = format!(
        "{{\n  \"date\": {},\n  \"machine\": {{\"nproc\": {}, \"mem_mib\": {}, \"kernel\": {}, \"cpu\": {}}},\n  \"header\": [{}],\n  \"tables\": [\n{}\n  ]\n}}\n",
        json_str(&machine.date),
        machine.nproc,
        machine.mem_mib,
        json_str(&machine.kernel),
        json_str(&machine.cpu),
        header.iter().map(|h| json_str(h)).collect::<Vec<_>>().join(", "),
        tables.iter().map(Table::json).collect::<Vec<_>>().join(",\n")
    );
    write("results.json", &json)?;
    for t in tables {
        write(&format!("{}.svg", t.key), &svg::render(t))?;
    }
    Ok(())
}
