//! `cargo run -p tap-tests --bin proc_regen`: regenerates the built-in
//! catalog data from real PostgreSQL 15, in one run:
//!
//! * `common/sql/src/pgcatalog/proc_data.rs`: the rows of the built-in
//!   functions (`pg_proc`, their `pg_description`, `pg_aggregate` and
//!   `pg_language`, and their `information_schema.routines` and
//!   `information_schema.parameters` rows);
//! * `common/sql/src/pgcatalog/operator_data.rs`: the operators and the
//!   index operator classes (`pg_operator` with each operator's
//!   description, `pg_opclass`, `pg_opfamily`, `pg_amop`, `pg_amproc`).
//!
//! Which functions: every `pg_catalog` function whose name is a string
//! literal in hotpair's SQL layer (`common/sql/src/**/*.rs`), so every name a
//! dispatcher matches on is there, with all of PostgreSQL's overloads, plus
//! the function implementing each listed operator (`oprcode`) and the
//! support functions of the listed operator families (`amproc`). That
//! is a superset: `sql::pgcatalog::proc` keeps only the overloads the
//! dispatchers really accept (and the functions of the operators and
//! operator families kept),
//! and its unit test fails when a dispatcher accepts a name this file
//! lacks (run this again then).
//!
//! Which operators: every `pg_catalog` operator whose argument and result
//! types are all types hotpair's own `pg_type` lists, read from a
//! throwaway hotpair primary (so a type added to hotpair brings its
//! operators at the next run); operator classes and families of the index
//! access methods hotpair's `pg_am` lists, for those types, with their
//! `pg_amop` / `pg_amproc` rows. `sql::pgcatalog::operator` keeps the
//! operators hotpair's expression binder accepts. These rows are in
//! PostgreSQL's heap order (`ctid`), the order its unordered scans return
//! them in (psql's `\dAf` aggregates them without ORDER BY).
//!
//! Beside the catalog columns each row carries what PostgreSQL's
//! `pg_get_function_arguments`, `pg_get_function_identity_arguments`,
//! `pg_get_function_result`, `pg_get_functiondef`,
//! `pg_get_function_arg_default` and `regprocedure`'s output print for it
//! (an operator: `regoper`'s and `regoperator`'s output), so hotpair
//! answers those exactly
//! without deparsing `proargdefaults` or naming pseudo-types.
//!
//! It starts a throwaway PostgreSQL primary (as `sql_regen` does), or uses
//! the server at `--port` on 127.0.0.1 (user `postgres`); and a throwaway
//! hotpair primary (the harness builds it), or the one at `--hotpair-port`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use tap_tests::bench::pg;

/// Regenerates common/sql/src/pgcatalog/{proc_data,operator_data}.rs from
/// PostgreSQL 15.
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
    /// Read hotpair's `pg_type` and `pg_am` from the hotpair server on this
    /// port of 127.0.0.1 instead of starting one.
    #[arg(long)]
    hotpair_port: Option<u16>,
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

/// pg_operator's columns (PostgreSQL 15); regproc columns as OIDs.
const OPERATOR_COLUMNS: &[(&str, &str)] = &[
    ("oid", "o.oid"),
    ("oprname", "o.oprname"),
    ("oprnamespace", "o.oprnamespace"),
    ("oprowner", "o.oprowner"),
    ("oprkind", "o.oprkind"),
    ("oprcanmerge", "o.oprcanmerge"),
    ("oprcanhash", "o.oprcanhash"),
    ("oprleft", "o.oprleft"),
    ("oprright", "o.oprright"),
    ("oprresult", "o.oprresult"),
    ("oprcom", "o.oprcom"),
    ("oprnegate", "o.oprnegate"),
    ("oprcode", "o.oprcode::oid"),
    ("oprrest", "o.oprrest::oid"),
    ("oprjoin", "o.oprjoin::oid"),
    ("opr_signature", "o.oid::pg_catalog.regoperator"),
    ("opr_regoper", "o.oid::pg_catalog.regoper"),
    ("description", "d.description"),
];

/// pg_opclass's columns (PostgreSQL 15).
const OPCLASS_COLUMNS: &[(&str, &str)] = &[
    ("oid", "c.oid"),
    ("opcmethod", "c.opcmethod"),
    ("opcname", "c.opcname"),
    ("opcnamespace", "c.opcnamespace"),
    ("opcowner", "c.opcowner"),
    ("opcfamily", "c.opcfamily"),
    ("opcintype", "c.opcintype"),
    ("opcdefault", "c.opcdefault"),
    ("opckeytype", "c.opckeytype"),
];

/// pg_opfamily's columns (PostgreSQL 15).
const OPFAMILY_COLUMNS: &[(&str, &str)] = &[
    ("oid", "f.oid"),
    ("opfmethod", "f.opfmethod"),
    ("opfname", "f.opfname"),
    ("opfnamespace", "f.opfnamespace"),
    ("opfowner", "f.opfowner"),
];

/// pg_amop's columns (PostgreSQL 15).
const AMOP_COLUMNS: &[(&str, &str)] = &[
    ("oid", "a.oid"),
    ("amopfamily", "a.amopfamily"),
    ("amoplefttype", "a.amoplefttype"),
    ("amoprighttype", "a.amoprighttype"),
    ("amopstrategy", "a.amopstrategy"),
    ("amoppurpose", "a.amoppurpose"),
    ("amopopr", "a.amopopr"),
    ("amopmethod", "a.amopmethod"),
    ("amopsortfamily", "a.amopsortfamily"),
];

/// pg_amproc's columns (PostgreSQL 15); regproc columns as OIDs.
const AMPROC_COLUMNS: &[(&str, &str)] = &[
    ("oid", "a.oid"),
    ("amprocfamily", "a.amprocfamily"),
    ("amproclefttype", "a.amproclefttype"),
    ("amprocrighttype", "a.amprocrighttype"),
    ("amprocnum", "a.amprocnum"),
    ("amproc", "a.amproc::oid"),
];

/// What hotpair's own catalog says it has: the `pg_type` OIDs and the
/// index access methods' OIDs.
struct HotpairCatalog {
    types: Vec<u32>,
    index_ams: Vec<u32>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(paths) => {
            for path in paths {
                println!("proc_regen: wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("proc_regen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<Vec<PathBuf>, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let src = root.join("common/sql/src");
    let mut names = BTreeSet::new();
    scan_literals(&src, &mut names)?;
    let proc_out = src.join("pgcatalog/proc_data.rs");
    let oper_out = src.join("pgcatalog/operator_data.rs");

    let hotpair = hotpair_catalog(args.hotpair_port)?;

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
    let result = tap_tests::block_on(query_all(port, &names, &hotpair));
    if let Some(mut p) = pair {
        p.stop();
    }
    drop(work);
    let (procs, operators) = result?;
    std::fs::write(&proc_out, procs).map_err(|e| format!("write {}: {e}", proc_out.display()))?;
    std::fs::write(&oper_out, operators)
        .map_err(|e| format!("write {}: {e}", oper_out.display()))?;
    Ok(vec![proc_out, oper_out])
}

/// hotpair's `pg_type` OIDs and index access methods, from the server at
/// `port` or from a throwaway primary.
fn hotpair_catalog(port: Option<u16>) -> Result<HotpairCatalog, String> {
    let mut node = None;
    let conn = match port {
        Some(p) => format!("host=127.0.0.1 port={p} user=postgres dbname=postgres"),
        None => {
            let n = tap_tests::Node::new("proc_regen_hotpair");
            n.init(false);
            n.start();
            let c = n.connstr();
            node = Some(n);
            c
        }
    };
    let result = tap_tests::block_on(async {
        let (client, connection) = tokio_postgres::connect(&conn, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("connect to hotpair ({conn}): {e}"))?;
        tokio::spawn(connection);
        let oids = |rows: Vec<Vec<Option<String>>>| -> Result<Vec<u32>, String> {
            rows.iter()
                .map(|r| {
                    r.first()
                        .cloned()
                        .flatten()
                        .and_then(|o| o.parse().ok())
                        .ok_or_else(|| format!("bad oid row {r:?}"))
                })
                .collect()
        };
        let types = oids(rows(&client, "SELECT oid FROM pg_catalog.pg_type ORDER BY 1").await?)?;
        let index_ams = oids(
            rows(
                &client,
                "SELECT oid FROM pg_catalog.pg_am WHERE amtype = 'i' ORDER BY 1",
            )
            .await?,
        )?;
        Ok::<_, String>(HotpairCatalog { types, index_ams })
    });
    if let Some(n) = node {
        n.stop("fast");
    }
    let c = result?;
    if c.types.is_empty() || c.index_ams.is_empty() {
        return Err("hotpair lists no types or no index access methods".to_string());
    }
    Ok(c)
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
            && path
                .file_name()
                .is_some_and(|f| f != "proc_data.rs" && f != "operator_data.rs")
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

async fn query_all(
    port: u16,
    names: &BTreeSet<String>,
    hotpair: &HotpairCatalog,
) -> Result<(String, String), String> {
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
    let oid_array = |oids: &[u32]| {
        let list = oids
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        format!("'{{{list}}}'::pg_catalog.oid[]")
    };
    let types = oid_array(&hotpair.types);
    let ams = oid_array(&hotpair.index_ams);
    // The operators over hotpair's types (a prefix operator's oprleft is 0).
    let operators_where = format!(
        "o.oprnamespace = 11 AND (o.oprleft = 0 OR o.oprleft = ANY ({types})) \
         AND o.oprright = ANY ({types}) AND o.oprresult = ANY ({types})"
    );
    let opclasses_where = format!(
        "c.opcnamespace = 11 AND c.opcmethod = ANY ({ams}) AND c.opcintype = ANY ({types})"
    );
    let families =
        format!("SELECT c.opcfamily FROM pg_catalog.pg_opclass c WHERE {opclasses_where}");
    let amprocs_where = format!(
        "a.amprocfamily IN ({families}) \
         AND a.amproclefttype = ANY ({types}) AND a.amprocrighttype = ANY ({types})"
    );
    let procs = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_proc p \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = p.oid \
               AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0 \
             WHERE p.pronamespace = 11 AND (p.proname = ANY (ARRAY[{list}]::pg_catalog.name[]) \
               OR p.oid IN (SELECT o.oprcode FROM pg_catalog.pg_operator o WHERE {operators_where}) \
               OR p.oid IN (SELECT a.amproc FROM pg_catalog.pg_amproc a WHERE {amprocs_where})) \
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

    let operators = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_operator o \
             LEFT JOIN pg_catalog.pg_description d ON d.objoid = o.oid \
               AND d.classoid = 'pg_catalog.pg_operator'::pg_catalog.regclass AND d.objsubid = 0 \
             WHERE {operators_where} ORDER BY o.ctid",
            select_list(OPERATOR_COLUMNS)
        ),
    )
    .await?;
    let opclasses = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_opclass c WHERE {opclasses_where} ORDER BY c.ctid",
            select_list(OPCLASS_COLUMNS)
        ),
    )
    .await?;
    let opfamilies = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_opfamily f WHERE f.oid IN ({families}) ORDER BY f.ctid",
            select_list(OPFAMILY_COLUMNS)
        ),
    )
    .await?;
    let amops = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_amop a WHERE a.amopfamily IN ({families}) \
             AND a.amoplefttype = ANY ({types}) AND a.amoprighttype = ANY ({types}) \
             AND a.amopopr IN (SELECT o.oid FROM pg_catalog.pg_operator o WHERE {operators_where}) \
             ORDER BY a.ctid",
            select_list(AMOP_COLUMNS)
        ),
    )
    .await?;
    let amprocs = rows(
        &client,
        &format!(
            "SELECT {} FROM pg_catalog.pg_amproc a WHERE {amprocs_where} ORDER BY a.ctid",
            select_list(AMPROC_COLUMNS)
        ),
    )
    .await?;
    // regproc's output for the selectivity estimators the operators name
    // (oprrest, oprjoin), which pg_proc does not list.
    let oper_referenced = rows(
        &client,
        &format!(
            "SELECT DISTINCT f::pg_catalog.oid::pg_catalog.text, f::pg_catalog.text FROM ( \
               SELECT o.oprrest AS f FROM pg_catalog.pg_operator o WHERE {operators_where} \
               UNION SELECT o.oprjoin FROM pg_catalog.pg_operator o WHERE {operators_where} \
             ) s WHERE f <> 0 ORDER BY 1"
        ),
    )
    .await?;
    let mut ops = String::new();
    ops.push_str(
        "//! GENERATED by `cargo run -p tap-tests --bin proc_regen` from PostgreSQL 15;\n\
         //! do not edit. The `pg_operator` rows (with each operator's description\n\
         //! and `regoper` / `regoperator` output) of the built-in operators over\n\
         //! the types hotpair's `pg_type` lists, and the `pg_opclass`, `pg_opfamily`,\n\
         //! `pg_amop` and `pg_amproc` rows of hotpair's index access methods for\n\
         //! those types, as PostgreSQL's text output: one string per row, its\n\
         //! fields separated by tabs, `\\N` for NULL.\n\
         //! `super::operator` keeps the operators hotpair's binder accepts.\n\n",
    );
    let _ = writeln!(ops, "//! Source: {version}\n");
    compact_table(&mut ops, "OPERATOR", OPERATOR_COLUMNS, &operators)?;
    compact_table(&mut ops, "OPCLASS", OPCLASS_COLUMNS, &opclasses)?;
    compact_table(&mut ops, "OPFAMILY", OPFAMILY_COLUMNS, &opfamilies)?;
    compact_table(&mut ops, "AMOP", AMOP_COLUMNS, &amops)?;
    compact_table(&mut ops, "AMPROC", AMPROC_COLUMNS, &amprocs)?;
    compact_table(
        &mut ops,
        "REFERENCED",
        &[("oid", ""), ("regproc", "")],
        &oper_referenced,
    )?;

    let mut out = String::new();
    out.push_str(
        "//! GENERATED by `cargo run -p tap-tests --bin proc_regen` from PostgreSQL 15;\n\
         //! do not edit. The `pg_proc` rows (with each function's description and\n\
         //! what `pg_get_function_arguments`, `…_identity_arguments`, `…_result` and\n\
         //! `pg_get_functiondef` print), `pg_aggregate` and `pg_language` rows of the\n\
         //! built-in functions whose names hotpair's SQL layer mentions and of\n\
         //! the operators' and operator families' functions (`oprcode`,\n\
         //! `amproc`), as PostgreSQL's text output\n\
         //! (None for NULL). `super::proc` keeps the overloads hotpair implements.\n\n",
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
    Ok((out, ops))
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

/// `pub static {NAME}_COLUMNS` and `pub static {NAME}_ROWS`, each row one
/// string of tab-separated fields (`\N` for NULL): a third of [`table`]'s
/// size for short values. Values holding a tab, a newline or a backslash
/// are refused (the reader splits without unescaping).
fn compact_table(
    out: &mut String,
    name: &str,
    cols: &[(&str, &str)],
    rows: &[Vec<Option<String>>],
) -> Result<(), String> {
    let _ = writeln!(out, "/// The columns of [`{name}_ROWS`].");
    let _ = writeln!(out, "pub static {name}_COLUMNS: &[&str] = &[");
    for (c, _) in cols {
        let _ = writeln!(out, "    {c:?},");
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(
        out,
        "/// {} rows: fields separated by tabs, `\\N` for NULL.",
        rows.len()
    );
    let _ = writeln!(out, "pub static {name}_ROWS: &[&str] = &[");
    for r in rows {
        let mut line = String::new();
        for (i, v) in r.iter().enumerate() {
            if i > 0 {
                line.push('\t');
            }
            match v {
                Some(s) if s.contains(['\t', '\n', '\\']) => {
                    return Err(format!("{name}: value {s:?} needs escaping"));
                }
                Some(s) => line.push_str(s),
                None => line.push_str("\\N"),
            }
        }
        let _ = writeln!(out, "    {line:?},");
    }
    let _ = writeln!(out, "];\n");
    Ok(())
}
