//! `cargo run -p tap-tests --bin soak -- --minutes 10 --threads 16`: the
//! protocol soak of `tap_tests::soak` at full length — a fresh primary and
//! hot standby under mutated protocol traffic from many connections while
//! a ledger of commits runs, then both nodes checked serving and equal.
//! Prints the counts for docs/benchmarks.md; exits non-zero (a panic with
//! the seed) on any failure.

use std::time::Duration;

use clap::Parser;

/// Command line of `soak`.
#[derive(Parser, Debug)]
#[command(name = "soak", about = "mutated-protocol soak of a hotpair pair")]
struct Args {
    /// Minutes of mutated traffic.
    #[arg(long, default_value_t = 10.0)]
    minutes: f64,
    /// Connections at a time.
    #[arg(long, default_value_t = 16)]
    threads: usize,
    /// Seed (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
}

fn main() {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let opts = tap_tests::soak::SoakOptions {
        duration: Duration::from_secs_f64(args.minutes.max(0.0) * 60.0),
        threads: args.threads.max(1),
        seed,
    };
    let started = std::time::Instant::now();
    let r = tap_tests::soak::run(opts);
    println!(
        "soak seed {seed}: {:.1} min, {} threads: {} conversations, {} bytes sent, \
         {} messages back ({} errors, {} statements completed), {} ledger commits; \
         both nodes serving and equal",
        started.elapsed().as_secs_f64() / 60.0,
        opts.threads,
        r.conversations,
        r.bytes_sent,
        r.messages_read,
        r.errors_read,
        r.statements_completed,
        r.ledger_commits
    );
}
