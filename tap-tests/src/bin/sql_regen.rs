//! `cargo run -p tap-tests --bin sql_regen [NAME…]`: regenerates the golden
//! SQL files' expected outputs (`tap-tests/sql/expected/NAME.out`) from
//! real PostgreSQL 15.
//!
//! It starts a throwaway PostgreSQL primary and streaming standby the way
//! the bench does (`bench::pg::PgPair`: initdb with the harness's
//! `PG_INITDB_ARGS`, programs run as the `postgres` OS user when we are
//! root, TCP on 127.0.0.1 only), runs each script through `psql -X -a -q`
//! in a fresh database with hotpair's default session settings
//! (`regress::REFERENCE_PGOPTIONS`), writes its output as the expected
//! file, and runs the script's read-only part on the standby, which must
//! print the same (a script that writes after its marker fails here).
//! Without names it regenerates every `*.sql` in `tap-tests/sql`, pending
//! or not. It exits 1 if a standby output differed; the files are written
//! anyway, so `git diff tap-tests/sql/expected` shows what changed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tap_tests::bench::{pg, Settings};
use tap_tests::regress;

/// Regenerates tap-tests/sql/expected/*.out from PostgreSQL 15.
#[derive(Parser, Debug)]
struct Args {
    /// Scripts to regenerate (names without `.sql`); all when none.
    names: Vec<String>,
    /// PostgreSQL's bindir (default: `HOTPAIR_BENCH_PG_BINDIR`, else
    /// `/usr/lib/postgresql/15/bin`).
    #[arg(long)]
    bindir: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(bindir) = args.bindir.or_else(pg::find_bindir) else {
        eprintln!("sql_regen: PostgreSQL 15 not found (install postgresql-15 or pass --bindir)");
        return ExitCode::FAILURE;
    };
    let dir = regress::sql_dir();
    let names = if args.names.is_empty() {
        match regress::script_names(&dir) {
            Ok(n) => n,
            Err(e) => {
                eprintln!("sql_regen: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        args.names
    };
    let work = match tempfile::Builder::new().prefix("sql_regen_").tempdir() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("sql_regen: temp dir: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The work directory must be reachable by the `postgres` user.
    let _ = pg::set_mode(work.path(), 0o755);
    let settings = Settings {
        shared_buffers: "128MB".to_string(),
        fsync: false,
        synchronous_commit: true,
        max_connections: 20,
        max_prepared_transactions: 0,
        standby: true,
        data_checksums: false,
        tls: None,
    };
    let mut pair = match pg::PgPair::start(&bindir, work.path(), &settings) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sql_regen: could not start PostgreSQL: {e}");
            return ExitCode::FAILURE;
        }
    };
    let standby_port = match &pair.standby {
        Ok(s) => s.port,
        Err(e) => {
            eprintln!("sql_regen: no PostgreSQL standby: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "sql_regen: {} on ports {} (primary) and {standby_port} (standby)",
        pair.version, pair.primary.port
    );
    let result = regress::regenerate(&dir, &names, pair.primary.port, standby_port);
    pair.stop();
    match result {
        Err(e) => {
            eprintln!("sql_regen: {e}");
            ExitCode::FAILURE
        }
        Ok(done) => {
            let mut ok = true;
            for r in done {
                let what = if r.changed { "updated" } else { "unchanged" };
                println!("{:<24} {what}", r.name);
                if let Some(diff) = r.standby_diff {
                    ok = false;
                    println!(
                        "{}: the read-only part printed something else on the standby:\n{diff}",
                        r.name
                    );
                }
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
