//! # checksums — pg_checksums --check for hotpair
//!
//! `checksums --check -D DIR`
//!
//! Checks the page checksums of every relation file in the stopped data
//! directory `DIR` (created with `-c data_checksums=on`), as
//! `pg_checksums --check` does, and prints pg_checksums' summary. Exit 0
//! when every page passed, 1 when one failed or the check could not run.
//! The work is `common::checksums` (its module docs say what is checked);
//! this is the command line. Enabling or disabling checksums on an
//! existing directory (`--enable` / `--disable`) is not built.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Command line of the `checksums` binary (pg_checksums' flags).
#[derive(Parser, Debug)]
#[command(
    name = "checksums",
    version,
    about = "verify data checksums in a stopped hotpair data directory"
)]
struct Args {
    /// The data directory (stopped).
    #[arg(short = 'D', long = "pgdata", value_name = "DATADIR")]
    pgdata: PathBuf,
    /// Check the checksums (the default and only mode).
    #[arg(short = 'c', long = "check")]
    check: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let _ = args.check;
    let report = match common::checksums::verify(&args.pgdata) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("checksums: error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for b in &report.bad {
        eprintln!(
            "checksums: error: checksum verification failed in file \"{}\", block {}: calculated checksum {:X} but block contains {:X}",
            args.pgdata.join(&b.file).display(),
            b.block,
            b.calculated,
            b.stored
        );
    }
    for f in &report.partial {
        eprintln!(
            "checksums: warning: file \"{}\" ends in a partial block, not checked",
            args.pgdata.join(f).display()
        );
    }
    println!("Checksum operation completed");
    println!("Files scanned:   {}", report.files);
    println!("Blocks scanned:  {}", report.blocks);
    println!("Bad checksums:  {}", report.bad.len());
    println!("Data checksum version: 1");
    if report.bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
