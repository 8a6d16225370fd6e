//! # primary — the postmaster of a hotpair primary node
//!
//! `primary -D DIR -p PORT [-c name=value]…` is what `postgres -D DIR` is to
//! PostgreSQL: it reads `DIR/hotpair.conf` and the `-c` overrides
//! ([`pgtypes::config::Config::load`]), opens (creating if empty) the data
//! directory ([`common::node::Node::open`]), listens on
//! `listen_addresses`:`port` and hands the listener to the session loop
//! ([`common::postmaster::serve`]) until SIGINT or SIGTERM asks for a fast
//! shutdown; once every session has ended it writes a shutdown checkpoint
//! ([`common::node::Node::checkpoint`]: dirty pages, clog, next xid) and exits. That
//! loop is [`common::postmaster::run_primary`], in the library so a promoted
//! standby's restart runs the same one.
//!
//! ```text
//!   args ──► Config::load ──► logging ──► bind ──► Node::open ──► serve ──┐
//!                                                                ▲            │
//!                                              SIGINT / SIGTERM ─┘ (shutdown) │
//!   exit 0 ◄── "database system is shut down" ◄── checkpoint ◄───────────────┘
//! ```
//!
//! The log goes to stderr, one line per event in PostgreSQL's shape
//! (`2024-05-01 12:00:00.123 UTC [4242] LOG:  message`), because tests and
//! operators wait on PostgreSQL's words: "database system is ready to accept
//! connections", "received fast shutdown request", "database system is shut
//! down". Any startup failure (bad configuration, unusable data directory,
//! port in use) is logged once as FATAL and the process exits with status 1;
//! nothing here panics on outside input.

mod logging;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use pgtypes::config::Config;

/// Command line of the `primary` binary.
#[derive(Parser, Debug)]
#[command(
    name = "primary",
    version,
    about = "hotpair primary node (accepts reads and writes)"
)]
struct Args {
    /// Data directory: holds hotpair.conf, relation files and WAL; created if empty.
    #[arg(short = 'D', long = "data-dir", value_name = "DIR")]
    data_dir: PathBuf,

    /// TCP port to listen on (overrides `port` from hotpair.conf and -c).
    #[arg(short = 'p', long = "port", value_name = "PORT")]
    port: Option<u16>,

    /// Set a configuration parameter, as in hotpair.conf (repeatable; later wins).
    #[arg(short = 'c', value_name = "NAME=VALUE")]
    settings: Vec<String>,

    /// Address to listen on (overrides `listen_addresses`); `*` means all IPv4 addresses.
    #[arg(long = "listen", value_name = "ADDR")]
    listen: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();

    // The configuration decides the log filter (`log_min_messages`), so load
    // it first and report a failure only once logging is up.
    let mut overrides = args.settings.clone();
    if let Some(listen) = &args.listen {
        overrides.push(format!("listen_addresses={listen}"));
    }
    if let Some(port) = args.port {
        overrides.push(format!("port={port}"));
    }
    let config = Config::load(&args.data_dir, &overrides);
    logging::init(config.as_ref().ok().and_then(|c| c.get("log_min_messages")));
    let config = match config {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(fatal = true, "{}", e.message);
            return ExitCode::FAILURE;
        }
    };

    let runtime = match server::build_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(fatal = true, "{e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(common::postmaster::run_primary(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!(fatal = true, "{message}");
            ExitCode::FAILURE
        }
    }
}
