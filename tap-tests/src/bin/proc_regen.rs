//! `cargo run -p tap-tests --bin proc_regen`: regenerates
//! `common/sql/src/pgcatalog/proc_data.rs`, the PostgreSQL 15 catalog rows
//! of the built-in functions (`pg_proc`, their `pg_description`,
//! `pg_aggregate` and `pg_language`, and their `information_schema.routines`
//! and `information_schema.parameters` rows), from real PostgreSQL 15.
//!
//! Which functions: every `pg_catalog` function whose name is a string
//! literal in hotpair's SQL layer (`common/sql/src/**/*.rs`), so every name a
//! dispatcher matches on is there, with all of PostgreSQL's overloads. That
//! is a superset: `sql::pgcatalog::proc` keeps only the overloads the
//! dispatchers really accept, and its unit test fails when a dispatcher
//! accepts a name this file lacks (run this again then).
//!
//! Beside the catalog columns each row carries what PostgreSQL's
//! `pg_get_function_arguments`, `pg_get_function_identity_arguments`,
//! `pg_get_function_result`, `pg_get_functiondef`,
//! `pg_get_function_arg_default` and `regprocedure`'s output print for it, so hotpair answers those exactly without
//! deparsing `proargdefaults` or naming pseudo-types.
//!
//! It starts a throwaway PostgreSQL primary (as `sql_regen` does), or uses
//! the server at `--port` on 127.0.0.1 (user `postgres`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use tap_tests::bench::pg;

/// Regenerates common/sql/src/pgcatalog/proc_data.rs from PostgreSQL 15.
#[derive(Parser, Debug)]
struct Args {
    /// Use the PostgreSQL 15 server listening on this port of 127.0.0.1
    /// (user `postgres`) instead of starting one.
    #[arg(long)]
    port: Option<u16>,
    /// PostgreSQL's bindir (default: `HOTPAIR_BENCH_PG_BINDIR`, else
    /// `/usr/lib/postgresql/15/bin`).
    #[arg(long)]
    bindir: Option<PathBuf>,
}

/// pg_proc's columns, in PostgreSQL 15's order; regproc columns as OIDs.
const PROC_COLUMNS: &[(&str, &str)] = &[
    ("oid", "p.oid"),
    ("proname", "p.proname"),
    ("pronamespace", "p.pronamespace"),
    ("proowner", "p.proowner"),
    ("prolang", "p.prolang"),
    ("procost", "p.procost"),
    ("prorows", "p.prorows"),
    ("provariadic", "p.provariadic"),
    ("prosupport", "p.prosupport::oid"),
    ("prokind", "p.prokind"),
    ("prosecdef", "p.prosecdef"),
    ("proleakproof", "p.proleakproof"),
    ("proisstrict", "p.proisstrict"),
    ("proretset", "p.proretset"),
    ("provolatile", "p.provolatile"),
    ("proparallel", "p.proparallel"),
    ("pronargs", "p.pronargs"),
    ("pronargdefaults", "p.pronargdefaults"),
    ("prorettype", "p.prorettype"),
    ("proargtypes", "p.proargtypes"),
    ("proallargtypes", "p.proallargtypes"),
    ("proargmodes", "p.proargmodes"),
    ("proargnames", "p.proargnames"),
    ("proargdefaults", "p.proargdefaults"),
    ("protrftypes", "p.protrftypes"),
    ("prosrc", "p.prosrc"),
    ("probin", "p.probin"),
    ("prosqlbody", "p.prosqlbody"),
    ("proconfig", "p.proconfig"),
    ("proacl", "p.proacl"),
    (
        "fn_arguments",
        "pg_catalog.pg_get_function_arguments(p.oid)",
    ),
    (
        "fn_identity_arguments",
        "pg_catalog.pg_get_function_identity_arguments(p.oid)",
    ),
    ("fn_result", "pg_catalog.pg_get_function_result(p.oid)"),
    ("fn_signature", "p.oid::pg_catalog.regprocedure"),
    (
        "fn_arg_defaults",
        "CASE WHEN p.pronargdefaults > 0 THEN ARRAY(SELECT pg_catalog.pg_get_function_arg_default(p.oid, n) \
         FROM pg_catalog.generate_series(1, coalesce(pg_catalog.array_length(p.proallargtypes, 1), p.pronargs)) n ORDER BY n) END",
    ),
    (
        "fn_def",
        "CASE WHEN p.prokind <> 'a' THEN pg_catalog.pg_get_functiondef(p.oid) END",
    ),
    ("description", "d.description"),
];

/// pg_aggregate's columns (PostgreSQL 15); regproc columns as OIDs.
const AGGREGATE_COLUMNS: &[(&str, &str)] = &[
    ("aggfnoid", "a.aggfnoid::oid"),
    ("aggkind", "a.aggkind"),
    ("aggnumdirectargs", "a.aggnumdirectargs"),
    ("aggtransfn", "a.aggtransfn::oid"),
    ("aggfinalfn", "a.aggfinalfn::oid"),
    ("aggcombinefn", "a.aggcombinefn::oid"),
    ("aggserialfn", "a.aggserialfn::oid"),
    ("aggdeserialfn", "a.aggdeserialfn::oid"),
    ("aggmtransfn", "a.aggmtransfn::oid"),
    ("aggminvtransfn", "a.aggminvtransfn::oid"),
    ("aggmfinalfn", "a.aggmfinalfn::oid"),
    ("aggfinalextra", "a.aggfinalextra"),
    ("aggmfinalextra", "a.aggmfinalextra"),
    ("aggfinalmodify", "a.aggfinalmodify"),
    ("aggmfinalmodify", "a.aggmfinalmodify"),
    ("aggsortop", "a.aggsortop"),
    ("aggtranstype", "a.aggtranstype"),
    ("aggtransspace", "a.aggtransspace"),
    ("aggmtranstype", "a.aggmtranstype"),
    ("aggmtransspace", "a.aggmtransspace"),
    ("agginitval", "a.agginitval"),
    ("aggminitval", "a.aggminitval"),
];

/// pg_language's columns (PostgreSQL 15); regproc columns as OIDs.
const LANGUAGE_COLUMNS: &[(&str, &str)] = &[
    ("oid", "l.oid"),
    ("lanname", "l.lanname"),
    ("lanowner", "l.lanowner"),
    ("lanispl", "l.lanispl"),
    ("lanpltrusted", "l.lanpltrusted"),
    ("lanplcallfoid", "l.lanplcallfoid::oid"),
    ("laninline", "l.laninline::oid"),
    ("lanvalidator", "l.lanvalidator::oid"),
    ("lanacl", "l.lanacl"),
];

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(path) => {
            println!("proc_regen: wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("proc_regen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let src = root.join("common/sql/src");
    let mut names = BTreeSet::new();
    scan_literals(&src, &mut names)?;
    let out = src.join("pgcatalog/proc_data.rs");

    // A server: the one at --port, or a throwaway primary.
    let mut pair = None;
    let mut work = None;
    let port = match args.port {
        Some(p) => p,
        None => {
            let bindir = args
                .bindir
                .or_else(pg::find_bindir)
                .ok_or("PostgreSQL 15 not found (install postgresql-15 or pass --bindir)")?;
            let (w, p) = pg::try_start_reference(&bindir, None, "proc_regen_")?;
            let port = p.primary.port;
            pair = Some(p);
            work = Some(w);
            port
        }
    };
    let result = tap_tests::block_on(query_all(port, &names));
    if let Some(mut p) = pair {
        p.stop();
    }
    drop(work);
    let text = result?;
    std::fs::write(&out, text).map_err(|e| format!("write {}: {e}", out.display()))?;
    Ok(out)
}

/// Every string literal that could be a function name (`"[a-z_][a-z0-9_]*"`)
/// in the `.rs` files under `dir`.
fn scan_literals(dir: &Path, names: &mut BTreeSet<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("read {}: {e}", dir.display()))?;
    for e in entries {
        let path = e.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            scan_literals(&path, names)?;
        } else if path.extension().is_some_and(|x| x == "rs")
            && path.file_name().is_some_and(|f| f != "proc_data.rs")
        {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("read {}: {e}", path.display()))?;
            for (i, piece) in text.split('"').enumerate() {
                let ident = !piece.is_empty()
                    && piece
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
                    && piece
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if i % 2 == 1 && ident {
                    names.insert(piece.to_string());
                }
            }
        }
    }
    Ok(())
}

async fn query_all(port: u16, names: &BTreeSet<String>) -> Result<String, String> {
    let conn = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
    let (client, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("connect to port {port}: {e}"))?;
    tokio::spawn(connection);
    let version = rows(&client, "SELECT pg_catalog.version()").await?;
    let version = version
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_default();
    if !version.starts_with("PostgreSQL 15") {
        return Err(format!("not PostgreSQL 15: {version}"));
    }
    let list = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    let procs = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_proc p \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = p.oid \
               AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0 \
             WHERE p.pronamespace = 11 AND p.proname = ANY (ARRAY[{list}]::pg_catalog.name[]) \
             ORDER BY p.oid",
            select_list(PROC_COLUMNS)
        ),
    )
    .await?;
    let aggregates = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_aggregate a JOIN pg_catalog.pg_proc p ON p.oid = a.aggfnoid \
             WHERE p.pronamespace = 11 AND p.proname = ANY (ARRAY[{list}]::pg_catalog.name[]) \
             ORDER BY 1",
            select_list(AGGREGATE_COLUMNS)
        ),
    )
    .await?;
    let languages = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_language l ORDER BY 1",
            select_list(LANGUAGE_COLUMNS)
        ),
    )
    .await?;
    // The names (regproc's output) of the support functions those rows
    // name (prosupport, aggtransfn, …), which hotpair does not list
    // itself but prints by name as PostgreSQL does.
    let referenced = rows(
        &client,
        &format!(
            "SELECT DISTINCT f::pg_catalog.oid::pg_catalog.text, f::pg_catalog.text FROM ( \
               SELECT p.prosupport AS f FROM pg_catalog.pg_proc p \
                 WHERE p.pronamespace = 11 AND p.proname = ANY (ARRAY[{list}]::pg_catalog.name[]) \
               UNION SELECT unnest(ARRAY[a.aggtransfn, a.aggfinalfn, a.aggcombinefn, \
                 a.aggserialfn, a.aggdeserialfn, a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]) \
                 FROM pg_catalog.pg_aggregate a JOIN pg_catalog.pg_proc p ON p.oid = a.aggfnoid \
                 WHERE p.pronamespace = 11 AND p.proname = ANY (ARRAY[{list}]::pg_catalog.name[]) \
             ) s WHERE f <> 0 ORDER BY 1"
        ),
    )
    .await?;
    // information_schema's views of the same functions: every column, as
    // text (catalog columns hold this database's name, which hotpair
    // replaces with its own).
    let routines_where = format!(
        "specific_schema = 'pg_catalog' AND routine_name::pg_catalog.name = ANY (ARRAY[{list}]::pg_catalog.name[])"
    );
    let (routine_cols, routines) = rows_with_columns(
        &client,
        &format!(
            "SELECT * FROM information_schema.routines WHERE {routines_where} ORDER BY specific_name"
        ),
    )
    .await?;
    let (parameter_cols, parameters) = rows_with_columns(
        &client,
        &format!(
            "SELECT * FROM information_schema.parameters WHERE specific_name IN \
             (SELECT specific_name FROM information_schema.routines WHERE {routines_where}) \
             ORDER BY specific_name, ordinal_position"
        ),
    )
    .await?;

    let mut out = String::new();
    out.push_str(
        "//! GENERATED by `cargo run -p tap-tests --bin proc_regen` from PostgreSQL 15;\n\
         //! do not edit. The `pg_proc` rows (with each function's description and\n\
         //! what `pg_get_function_arguments`, `…_identity_arguments`, `…_result` and\n\
         //! `pg_get_functiondef` print), `pg_aggregate` and `pg_language` rows of the\n\
         //! built-in functions whose names hotpair's SQL layer mentions, as\n\
         //! PostgreSQL's text output (None for NULL). `super::proc` keeps the\n\
         //! overloads hotpair implements.\n\n",
    );
    let _ = writeln!(out, "//! Source: {version}\n");
    table(&mut out, "PROC", PROC_COLUMNS, &procs);
    table(&mut out, "AGGREGATE", AGGREGATE_COLUMNS, &aggregates);
    table(&mut out, "LANGUAGE", LANGUAGE_COLUMNS, &languages);
    table(
        &mut out,
        "REFERENCED",
        &[("oid", ""), ("regproc", "")],
        &referenced,
    );
    let names = |cols: &[String]| {
        cols.iter()
            .map(|c| (c.clone(), String::new()))
            .collect::<Vec<_>>()
    };
    let routine_cols = names(&routine_cols);
    let parameter_cols = names(&parameter_cols);
    table(&mut out, "ROUTINES", &refs(&routine_cols), &routines);
    table(&mut out, "PARAMETERS", &refs(&parameter_cols), &parameters);
    Ok(out)
}

fn refs(cols: &[(String, String)]) -> Vec<(&str, &str)> {
    cols.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

fn select_list(cols: &[(&str, &str)]) -> String {
    cols.iter()
        .map(|(name, expr)| format!("({expr})::pg_catalog.text AS {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn rows(
    client: &tokio_postgres::Client,
    sql: &str,
) -> Result<Vec<Vec<Option<String>>>, String> {
    let msgs = client
        .simple_query(sql)
        .await
        .map_err(|e| format!("{e}: {sql}"))?;
    let mut out = Vec::new();
    for m in msgs {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            out.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
        }
    }
    Ok(out)
}

/// The column names and rows of a query (every value as text).
async fn rows_with_columns(
    client: &tokio_postgres::Client,
    sql: &str,
) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), String> {
    let msgs = client
        .simple_query(sql)
        .await
        .map_err(|e| format!("{e}: {sql}"))?;
    let mut cols = Vec::new();
    let mut out = Vec::new();
    for m in msgs {
        match m {
            tokio_postgres::SimpleQueryMessage::RowDescription(d) => {
                cols = d.iter().map(|c| c.name().to_string()).collect();
            }
            tokio_postgres::SimpleQueryMessage::Row(r) => {
                if cols.is_empty() {
                    cols = r.columns().iter().map(|c| c.name().to_string()).collect();
                }
                out.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
            }
            _ => {}
        }
    }
    Ok((cols, out))
}

/// `pub static {NAME}_COLUMNS` and `pub static {NAME}_ROWS`.
fn table(out: &mut String, name: &str, cols: &[(&str, &str)], rows: &[Vec<Option<String>>]) {
    let _ = writeln!(out, "/// The columns of [`{name}_ROWS`].");
    let _ = writeln!(out, "pub static {name}_COLUMNS: &[&str] = &[");
    for (c, _) in cols {
        let _ = writeln!(out, "    {c:?},");
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "/// {} rows.", rows.len());
    let _ = writeln!(out, "pub static {name}_ROWS: &[&[Option<&str>]] = &[");
    for r in rows {
        out.push_str("    &[");
        for (i, v) in r.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match v {
                Some(s) => {
                    let _ = write!(out, "Some({s:?})");
                }
                None => out.push_str("None"),
            }
        }
        out.push_str("],\n");
    }
    let _ = writeln!(out, "];\n");
}
