//! An ORM's reflection: SQLAlchemy's PostgreSQL inspector (through psycopg
//! 3) and the information_schema queries generic tools send, run by
//! `tap-tests/orm/reflect.py` over `tap-tests/orm/schema.sql` (every object
//! kind an application declares: serial and identity keys, composite and
//! deferrable foreign keys, unique and expression indexes, CHECKs with
//! implicit casts, comments, a view, an enum, a sequence, a second schema),
//! must print the same on a hotpair primary, on its hot standby and on
//! PostgreSQL 15.
//!
//! Skipped, with a message, when PostgreSQL 15 or the Python packages are
//! not installed (`.ci/run` installs both).

use std::path::PathBuf;
use std::process::Command;

use tap_tests::bench::pg;
use tap_tests::Node;

fn orm_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("orm")
}

/// Runs reflect.py against a server; its JSON output.
fn reflect(port: u16) -> String {
    let conninfo = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
    let out = Command::new("python3")
        .arg(orm_dir().join("reflect.py"))
        .arg(&conninfo)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "reflect.py on port {port} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The first line where two outputs differ, with context.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let i = w
        .iter()
        .zip(&g)
        .position(|(a, b)| a != b)
        .unwrap_or(w.len().min(g.len()));
    let from = i.saturating_sub(8);
    format!(
        "PostgreSQL 15, from line {from}:\n{}\n\nhotpair:\n{}",
        w[from..(i + 4).min(w.len())].join("\n"),
        g[from..(i + 4).min(g.len())].join("\n")
    )
}

#[test]
fn sqlalchemy_reflection_matches_postgres() {
    let Some(bindir) = pg::find_bindir() else {
        eprintln!("051_orm_reflection skipped: PostgreSQL 15 is not installed");
        return;
    };
    let have_modules = Command::new("python3")
        .args(["-c", "import psycopg, sqlalchemy"])
        .status()
        .is_ok_and(|s| s.success());
    if !have_modules {
        eprintln!(
            "051_orm_reflection skipped: python3 with psycopg and sqlalchemy is not installed (.ci/run installs them)"
        );
        return;
    }
    let schema = std::fs::read_to_string(orm_dir().join("schema.sql")).expect("schema.sql");

    let node = Node::new("primary");
    node.init(true);
    node.start();
    let standby = Node::standby_of(&node, "standby");
    let (_work, pair) = pg::start_reference(&bindir, node.base_dir(), "orm_pg_");

    let out = node.run_psql(&["-v", "ON_ERROR_STOP=1", "-q"], &schema);
    assert_eq!(out.status, 0, "schema on hotpair: {}", out.stderr);
    let port = pair.primary.port.to_string();
    let args: Vec<String> = [
        "-X",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
    ]
    .iter()
    .chain(&["-U", "postgres", "-d", "postgres"])
    .map(|a| a.to_string())
    .collect();
    let out = tap_tests::psql::run_psql(&args, &schema, None);
    assert_eq!(out.status, 0, "schema on PostgreSQL: {}", out.stderr);
    node.wait_for_replay(&standby);

    let want = reflect(pair.primary.port);
    assert!(
        want.contains("orm_orders"),
        "PostgreSQL's reflection is empty:\n{want}"
    );
    let got = reflect(node.port());
    assert!(
        got == want,
        "the primary's reflection differs: {}",
        first_difference(&want, &got)
    );
    let got = reflect(standby.port());
    assert!(
        got == want,
        "the standby's reflection differs: {}",
        first_difference(&want, &got)
    );
}
