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

    /// New cluster only (as initdb -A): authentication method of the
    /// pg_hba.conf written, for local and host lines.
    #[arg(short = 'A', long = "auth", value_name = "METHOD")]
    auth: Option<String>,

    /// New cluster only: method of the pg_hba.conf host (TCP) lines.
    #[arg(long = "auth-host", value_name = "METHOD")]
    auth_host: Option<String>,

    /// New cluster only: method of the pg_hba.conf local (Unix socket) lines.
    #[arg(long = "auth-local", value_name = "METHOD")]
    auth_local: Option<String>,

    /// New cluster only: read the bootstrap superuser's password from the
    /// first line of FILE.
    #[arg(long = "pwfile", value_name = "FILE")]
    pwfile: Option<PathBuf>,

    /// New cluster only: name of the bootstrap superuser (default postgres).
    #[arg(short = 'U', long = "username", value_name = "NAME")]
    username: Option<String>,
}

const AUTH_METHODS: &[&str] = &[
    "trust",
    "reject",
    "scram-sha-256",
    "md5",
    "password",
    "peer",
];

/// initdb's part for a new cluster: writes `DIR/pg_hba.conf` and
/// `DIR/pg_ident.conf` (unless they are there) and returns the bootstrap superuser to create. On an
/// existing cluster the flags are ignored and the default is returned.
fn init_cluster(args: &Args) -> Result<common::auth::Bootstrap, String> {
    let mut boot = common::auth::Bootstrap::default();
    let new_cluster = matches!(common::xlog::ControlFile::read(&args.data_dir), Ok(None));
    if !new_cluster {
        return Ok(boot);
    }
    if let Some(u) = &args.username {
        if u.is_empty() || u.starts_with("pg_") {
            return Err(format!(
                "superuser name \"{u}\" is disallowed; role names cannot begin with \"pg_\""
            ));
        }
        boot.user = u.clone();
    }
    let host = args.auth_host.clone().or_else(|| args.auth.clone());
    let local = args.auth_local.clone().or_else(|| args.auth.clone());
    for m in [&host, &local].into_iter().flatten() {
        if !AUTH_METHODS.contains(&m.as_str()) {
            return Err(format!("invalid authentication method \"{m}\""));
        }
    }
    if let Some(f) = &args.pwfile {
        let text = std::fs::read_to_string(f)
            .map_err(|e| format!("could not open file \"{}\" for reading: {e}", f.display()))?;
        let pw = text.lines().next().unwrap_or("").to_string();
        if pw.is_empty() {
            return Err(format!("password file \"{}\" is empty", f.display()));
        }
        boot.password = Some(pw);
    }
    let needs_password =
        |m: &Option<String>| matches!(m.as_deref(), Some("scram-sha-256" | "md5" | "password"));
    if (needs_password(&host) || needs_password(&local)) && boot.password.is_none() {
        return Err(
            "must specify a password for the superuser to enable password authentication".into(),
        );
    }
    let ident = args.data_dir.join("pg_ident.conf");
    if !ident.exists() {
        std::fs::create_dir_all(&args.data_dir)
            .and_then(|_| std::fs::write(&ident, server::ident::initial_file()))
            .map_err(|e| format!("could not write file \"{}\": {e}", ident.display()))?;
    }
    let hba = args.data_dir.join("pg_hba.conf");
    if hba.exists() {
        return Ok(boot);
    }
    if host.is_none() || local.is_none() {
        eprintln!("primary: warning: enabling \"trust\" authentication for local connections");
        eprintln!("primary: hint: You can change this by editing pg_hba.conf or using the option -A, or --auth-local and --auth-host, the next time you run initdb.");
    }
    let text = server::hba::initial_file(
        local.as_deref().unwrap_or("trust"),
        host.as_deref().unwrap_or("trust"),
    );
    std::fs::create_dir_all(&args.data_dir)
        .and_then(|_| std::fs::write(&hba, text))
        .map_err(|e| format!("could not write file \"{}\": {e}", hba.display()))?;
    Ok(boot)
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

    let boot = match init_cluster(&args) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(fatal = true, "{e}");
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
    match runtime.block_on(common::postmaster::run_primary_with(config, boot)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!(fatal = true, "{message}");
            ExitCode::FAILURE
        }
    }
}
