//! The query engine against PostgreSQL 15's own answers.
//!
//! `query_engine/queries.sql` holds one query a line over the tables of
//! `query_engine/setup.sql`: joins of every kind (with NULLs and empty
//! tables, ON against WHERE on outer joins, USING / NATURAL), subqueries
//! (scalar, correlated, IN / NOT IN with NULLs, EXISTS, ANY / ALL,
//! LATERAL, in FROM), CTEs (plain, materialized, recursive), set
//! operations with ALL, VALUES, DISTINCT ON, NULLS FIRST/LAST, FETCH
//! FIRST, GROUP BY forms, and the errors PostgreSQL raises for them.
//! `query_engine/expected.out` is what PostgreSQL 15 returned for each,
//! written by `query_engine/expected.sh` — never edited by hand. The
//! failure this guards against is any difference a client could see in
//! the rows or the SQLSTATE: a query without a top-level ORDER BY is
//! compared as a multiset, since its row order is not defined.

use std::sync::Arc;

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use server::backend::{ExecOutcome, ResultSink};
use sql::session::Session;

#[derive(Default)]
struct Sink {
    rows: Vec<String>,
}

impl ResultSink for Sink {
    fn row(&mut self, values: &[Value]) -> PgResult<()> {
        let cells: Vec<String> = values
            .iter()
            .map(|v| {
                if v.is_null() {
                    "NULL".to_string()
                } else {
                    v.to_text_string()
                }
            })
            .collect();
        self.rows.push(cells.join("|"));
        Ok(())
    }
    fn notice(&mut self, _notice: PgError) {}
    fn parameter_status(&mut self, _name: &str, _value: &str) {}
    fn copy_out_start(&mut self, _columns: usize) {}
    fn copy_data(&mut self, _data: &[u8]) {}
}

/// Rows of a simple Query of one statement, or `ERROR <sqlstate>`.
fn run(s: &mut Session, sql: &str) -> Vec<String> {
    let stmts = match s.prepare(sql, &[]) {
        Ok(v) => v,
        Err(e) => {
            s.on_error();
            return vec![format!("ERROR {}", e.code)];
        }
    };
    let mut sink = Sink::default();
    for st in &stmts {
        match s.execute(st, &[], &mut sink) {
            Ok(ExecOutcome::Complete(_)) => {}
            Ok(_) => panic!("{sql}: unexpected outcome"),
            Err(e) => {
                s.on_error();
                return vec![format!("ERROR {}", e.code)];
            }
        }
    }
    sink.rows
}

fn open_node() -> (tempfile::TempDir, Arc<Node>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "4MB").unwrap();
    let node = Node::open(cfg, Role::Primary).unwrap();
    (dir, node)
}

/// (query, expected lines) from expected.out.
fn expected() -> Vec<(String, Vec<String>)> {
    let text = include_str!("query_engine/expected.out");
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(q) = line.strip_prefix("-- ") {
            out.push((q.to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(line.to_string());
        }
    }
    out
}

#[test]
fn queries_match_postgresql() {
    let (_dir, node) = open_node();
    let mut s = Session::new(node.clone(), &[("user".into(), "u".into())]).unwrap();

    // 1. The tables, as setup.sql makes them.
    for line in include_str!("query_engine/setup.sql").lines() {
        if line.trim().is_empty() {
            continue;
        }
        let r = run(&mut s, line);
        assert!(
            !r.first().is_some_and(|x| x.starts_with("ERROR")),
            "{line}: {r:?}"
        );
    }

    // 2. Every query: PostgreSQL's rows (or SQLSTATE).
    let cases = expected();
    assert!(cases.len() > 80, "expected.out has every query");
    let mut failures = Vec::new();
    for (q, want) in &cases {
        let mut got = run(&mut s, q);
        let mut want = want.clone();
        if !q.to_ascii_lowercase().contains("order by") {
            got.sort();
            want.sort();
        }
        if got != want {
            failures.push(format!("{q}\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} queries differ from PostgreSQL:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
