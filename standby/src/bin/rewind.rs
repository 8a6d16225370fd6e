//! # rewind — pg_rewind for hotpair
//!
//! `rewind --target-pgdata DIR --source-server CONNINFO
//! [--write-recovery-conf] [--dry-run] [--progress]`
//!
//! Makes the stopped (or crashed) old primary in `DIR` a copy of the
//! server at `CONNINFO` — its new primary after a failover — by copying
//! only what changed since their timelines forked, so that `standby -D DIR`
//! can follow it. The work is `standby::rewind` (its module docs describe
//! it); this is the command line. Messages go to stdout as pg_rewind's do
//! (`rewind: …`), errors to stderr; exit 0 also when nothing needed
//! rewinding.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use standby::conninfo::ConnInfo;
use standby::rewind::{self, Options};

/// Command line of the `rewind` binary (pg_rewind's flags).
#[derive(Parser, Debug)]
#[command(
    name = "rewind",
    version,
    about = "synchronize a hotpair data directory with another one that was forked from it"
)]
struct Args {
    /// Existing data directory to modify (the old primary's; stopped).
    #[arg(short = 'D', long = "target-pgdata", value_name = "DIRECTORY")]
    target_pgdata: PathBuf,
    /// Source server to synchronize with (a replication connection is made).
    #[arg(long = "source-server", value_name = "CONNSTR")]
    source_server: String,
    /// Write primary_conninfo to hotpair.conf and standby.signal, so the
    /// target starts as a standby of the source.
    #[arg(short = 'R', long = "write-recovery-conf")]
    write_recovery_conf: bool,
    /// Stop before modifying anything.
    #[arg(short = 'n', long = "dry-run")]
    dry_run: bool,
    /// Write progress messages while copying.
    #[arg(short = 'P', long = "progress")]
    progress: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let source = match ConnInfo::parse(&args.source_server) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rewind: error: invalid --source-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opts = Options {
        target: args.target_pgdata,
        source,
        source_text: args.source_server,
        write_recovery_conf: args.write_recovery_conf,
        dry_run: args.dry_run,
        progress: args.progress,
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rewind: error: could not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut log = |m: &str| println!("rewind: {m}");
    match rt.block_on(rewind::run(&opts, &mut log)) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rewind: error: {e}");
            ExitCode::FAILURE
        }
    }
}
