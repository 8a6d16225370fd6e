//! Shared by the in-process SQL tests (`query_engine`, `report_functions`):
//! a sink that renders each row as `a|b|c` (NULL as `NULL`), and a runner
//! of one simple-Query text through a [`Session`].

use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use server::backend::{ExecOutcome, ResultSink};
use sql::session::Session;

/// Collects rows as `|`-joined text.
#[derive(Default)]
pub struct Sink {
    /// The rows so far.
    pub rows: Vec<String>,
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

/// Runs `sql` as a simple Query: the rows of its statements, or the one
/// line `error` renders for the first error.
pub fn run(s: &mut Session, sql: &str, error: fn(&PgError) -> String) -> Vec<String> {
    let stmts = match s.prepare(sql, &[]) {
        Ok(v) => v,
        Err(e) => {
            s.on_error();
            return vec![error(&e)];
        }
    };
    let mut sink = Sink::default();
    for st in &stmts {
        match s.execute(st, &[], &mut sink) {
            Ok(ExecOutcome::Complete(_)) => {}
            Ok(_) => panic!("{sql}: unexpected outcome"),
            Err(e) => {
                s.on_error();
                return vec![error(&e)];
            }
        }
    }
    sink.rows
}

/// An `expected.out` as (query, expected lines) pairs in file order: a
/// line `-- query` opens a pair, the lines after it are its rows.
pub fn parse_expected(text: &str) -> Vec<(String, Vec<String>)> {
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
