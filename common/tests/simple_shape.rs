//! Simple-mode texts run through their shape's template.
//!
//! A text such as `SELECT abalance FROM pgbench_accounts WHERE aid = 48213`
//! is normalised to `… WHERE aid = $1` and, once the session has checked
//! the template against one exact text of the shape, later texts of the
//! shape skip the parser and the planner: their literals are bound as the
//! template's parameters. The failure this guards against is a literal
//! that behaves differently as a parameter — another result type or
//! column name, another error, `ORDER BY 1` read as a value, a typed
//! literal losing its type. Every check compares a text run through a
//! warmed session (template) with the same text run as the first of its
//! shape in a fresh session (exact text, parsed and planned as before).

use std::sync::Arc;
use std::time::Instant;

use common::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::{PgError, PgResult};
use pgtypes::value::Value;
use server::backend::{ExecOutcome, ResultSink};
use sql::session::Session;

#[derive(Default)]
struct Sink {
    rows: Vec<Vec<String>>,
}

impl ResultSink for Sink {
    fn row(&mut self, values: &[Value]) -> PgResult<()> {
        self.rows.push(
            values
                .iter()
                .map(|v| {
                    if v.is_null() {
                        "NULL".to_string()
                    } else {
                        v.to_text_string()
                    }
                })
                .collect(),
        );
        Ok(())
    }
    fn notice(&mut self, _notice: PgError) {}
    fn parameter_status(&mut self, _name: &str, _value: &str) {}
    fn copy_out_start(&mut self, _columns: usize) {}
    fn copy_data(&mut self, _data: &[u8]) {}
}

/// What a client sees of one simple Query.
#[derive(Debug, PartialEq)]
struct Outcome {
    /// RowDescription: (name, type OID) per column.
    columns: Option<Vec<(String, u32)>>,
    tag: Option<String>,
    rows: Vec<Vec<String>>,
    /// SQLSTATE and message of the error, if any.
    error: Option<(String, String)>,
}

/// A simple Query of one statement, the way the protocol loop runs it;
/// also returns the text the statement ran as (the template's when the
/// shape path was taken).
fn run(s: &mut Session, sql: &str) -> (Outcome, String) {
    let fail = |s: &mut Session, e: PgError, columns| {
        s.on_error();
        Outcome {
            columns,
            tag: None,
            rows: Vec::new(),
            error: Some((e.code.to_string(), e.message.clone())),
        }
    };
    let stmts = match s.prepare(sql, &[]) {
        Ok(v) => v,
        Err(e) => return (fail(s, e, None), String::new()),
    };
    assert_eq!(stmts.len(), 1, "{sql}: one statement");
    let st = &stmts[0];
    let ran_as = st.text().to_string();
    let mut sink = Sink::default();
    let result = s.execute(st, &[], &mut sink);
    let columns = st
        .columns()
        .map(|c| c.iter().map(|f| (f.name.clone(), f.ty.oid())).collect());
    match result {
        Ok(ExecOutcome::Complete(t)) => (
            Outcome {
                columns,
                tag: Some(t),
                rows: sink.rows,
                error: None,
            },
            ran_as,
        ),
        Ok(_) => panic!("{sql}: unexpected outcome"),
        Err(e) => (fail(s, e, None), ran_as),
    }
}

fn open_node() -> (tempfile::TempDir, Arc<Node>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "4MB").unwrap();
    let node = Node::open(cfg, Role::Primary).unwrap();
    (dir, node)
}

fn session(node: &Arc<Node>) -> Session {
    Session::new(node.clone(), &[("user".into(), "u".into())]).unwrap()
}

#[track_caller]
fn ok(s: &mut Session, sql: &str) -> Outcome {
    let (o, _) = run(s, sql);
    assert!(o.error.is_none(), "{sql}: {:?}", o.error);
    o
}

/// Runs `sql` once in a fresh session (the first text of its shape runs
/// as it is), then `warm` (a text of the same shape, which proves it) and
/// `sql` twice in another session. Checks that every run of `sql` looks
/// the same to the client, and whether the last one ran through the
/// template.
#[track_caller]
fn same(node: &Arc<Node>, warm: &str, sql: &str, via_template: bool) -> Outcome {
    let mut fresh = session(node);
    let (expected, ran_as) = run(&mut fresh, sql);
    assert!(
        !ran_as.contains('$'),
        "{sql}: first of its shape runs exact"
    );
    drop(fresh);
    let mut warmed = session(node);
    let _ = run(&mut warmed, warm);
    let mut last = String::new();
    for round in 0..2 {
        let (got, ran_as) = run(&mut warmed, sql);
        assert_eq!(
            got, expected,
            "{sql} (round {round}): same as the exact text"
        );
        last = ran_as;
    }
    assert_eq!(
        last.contains('$'),
        via_template,
        "{sql}: template used ({last})"
    );
    expected
}

#[test]
fn literals_as_parameters_behave_as_constants() {
    let (_dir, node) = open_node();
    let mut s = session(&node);

    // 1. Tables: a pgbench-like one with a primary key, and one per type.
    ok(
        &mut s,
        "create table acc (aid int not null primary key, bid int, abalance int, filler char(84))",
    );
    ok(
        &mut s,
        "insert into acc (aid, bid, abalance) select g, 1, g * 10 from generate_series(1, 100) as g",
    );
    ok(
        &mut s,
        "create table t (a int, b text, c varchar(3), d timestamp, e char(5), f boolean, n numeric(10,2))",
    );

    // 2. pgbench's select-only statement: results per value.
    for aid in [1, 2, 57, 100, 101] {
        let o = same(
            &node,
            "SELECT abalance FROM acc WHERE aid = 48213;",
            &format!("SELECT abalance FROM acc WHERE aid = {aid};"),
            true,
        );
        let expected: Vec<Vec<String>> = if aid <= 100 {
            vec![vec![(aid * 10).to_string()]]
        } else {
            vec![]
        };
        assert_eq!(o.rows, expected, "abalance of {aid}");
    }

    // 3. Column names and types of constants: ?column? with the literal's
    //    type, integer division, int8 and numeric constants.
    for (warm, sql, via) in [
        ("select 5", "select 1", true),
        ("select 'q'", "select 'a'", true),
        ("select 2.5", "select 1.5", true),
        ("select 3000000000", "select 2147483649", true),
        ("select 4 / 3", "select 1 / 2", true),
        ("select 7.0 / 2", "select 1.0 / 3", true),
        (
            "select 1 as one, 'x' as s",
            "select 2 as one, 'y' as s",
            true,
        ),
        ("select -4", "select -5", true),
        ("select 'x' || 'y'", "select 'a' || 'b'", true),
        ("select 'x' = 'y'", "select 'a' = 'a'", true),
        ("select 'xyz' like 'x%'", "select 'abc' like 'b%'", true),
        ("select 1.5 + 1", "select 2.25 + 7", true),
        ("select -2147483648, 1", "select -2147483648, 2", true),
        ("select 2147483648", "select 2147483648", false),
    ] {
        same(&node, warm, sql, via);
    }
    let o = same(&node, "select 5", "select 1 / 2", true);
    assert_eq!(
        o.rows,
        vec![vec!["0".to_string()]],
        "1/2 is integer division"
    );
    let o = same(&node, "select 'q'", "select 'a'", true);
    assert_eq!(
        o.columns,
        Some(vec![("?column?".to_string(), 25)]),
        "a string constant is a text ?column?"
    );
    let o = same(&node, "select 3000000000", "select 2147483649", true);
    assert_eq!(o.columns, Some(vec![("?column?".to_string(), 20)]), "int8");
    let o = same(&node, "select 2.5", "select 1.5", true);
    assert_eq!(
        o.columns,
        Some(vec![("?column?".to_string(), 1700)]),
        "numeric"
    );

    // 4. ORDER BY 1 is a column position, not a value.
    let o = same(
        &node,
        "select aid, abalance from acc where aid < 9 order by 1 desc",
        "select aid, abalance from acc where aid < 4 order by 1 desc",
        true,
    );
    assert_eq!(o.rows[0][0], "3", "ORDER BY 1 sorts by aid");
    let o = same(
        &node,
        "select aid, abalance from acc where aid < 9 order by 1 desc",
        "select aid, abalance from acc where aid < 4 order by 2",
        true,
    );
    assert_eq!(o.rows[0][0], "1", "ORDER BY 2 is another shape");
    let o = same(
        &node,
        "select aid from acc where aid > 3 order by aid limit 2",
        "select aid from acc where aid > 50 order by aid limit 1",
        true,
    );
    assert_eq!(o.rows.len(), 1, "LIMIT stays a constant");

    // 5. Typed literals keep their type; untyped strings take the
    //    column's.
    ok(&mut s, "insert into t (a, d) values (1, '2020-01-01')");
    same(
        &node,
        "insert into t (a, d) values (2, '2021-12-31')",
        "insert into t (a, d) values (3, '2022-02-28')",
        true,
    );
    let o = same(
        &node,
        "select a from t where d = timestamp '2019-01-01' and a = 9",
        "select a from t where d = timestamp '2020-01-01' and a = 1",
        true,
    );
    assert_eq!(o.rows.len(), 1, "timestamp literal matched");
    let o = same(
        &node,
        "select a, d from t where d = '2019-01-01'",
        "select a, d from t where d = '2020-01-01'",
        true,
    );
    assert_eq!(
        o.columns.as_ref().map(|c| c[1].1),
        Some(1114),
        "timestamp column"
    );
    same(
        &node,
        "select d from t where a = 2",
        "select d from t where a = 1",
        true,
    );
    // A typed date literal stays in the template; the integer beside it
    // becomes a parameter.
    let o = same(
        &node,
        "select date '2019-01-01', 1",
        "select date '2020-01-01', 2",
        true,
    );
    assert_eq!(
        o.rows,
        [["2020-01-01".to_string(), "2".to_string()]],
        "date literal kept"
    );
    same(
        &node,
        "select a from t where d = '2020-01-01'::timestamp and a = 1",
        "select a from t where d = '2020-01-01'::timestamp and a = 2",
        true,
    );

    // 6. The same position with a string and with an integer: two shapes,
    //    each right.
    let o = same(
        &node,
        "select abalance from acc where aid = '4'",
        "select abalance from acc where aid = '5'",
        true,
    );
    assert_eq!(
        o.rows,
        vec![vec!["50".to_string()]],
        "string compared as int"
    );
    let o = same(
        &node,
        "select abalance from acc where aid = 4",
        "select abalance from acc where aid = 6",
        true,
    );
    assert_eq!(o.rows, vec![vec!["60".to_string()]], "int");
    same(
        &node,
        "select abalance from acc where aid = '4'",
        "select abalance from acc where aid = 'x'",
        false,
    );

    // 7. Errors: the same SQLSTATE and message as from the constant, every
    //    time. Constants fold (and fail) at bind time, even where no row
    //    would evaluate them: a text whose literals would fail there takes
    //    the exact path.
    for _ in 0..3 {
        let o = same(&node, "select 1 / 2", "select 1 / 0", false);
        assert_eq!(
            o.error.as_ref().map(|e| e.0.as_str()),
            Some("22012"),
            "division by zero"
        );
    }
    let o = same(&node, "select 1 + 2", "select 2147483647 + 1", false);
    assert_eq!(o.error.map(|e| e.0), Some("22003".to_string()), "overflow");
    let o = same(
        &node,
        "insert into t (a, d) values (2, '2021-12-31')",
        "insert into t (a, d) values (4, 'garbage')",
        false,
    );
    assert_eq!(
        o.error.map(|e| e.0),
        Some("22007".to_string()),
        "bad timestamp"
    );
    let o = same(
        &node,
        "insert into t (a, c) values (2, 'ab')",
        "insert into t (a, c) values (4, 'abcd')",
        false,
    );
    assert_eq!(o.error.map(|e| e.0), Some("22001".to_string()), "too long");
    let o = same(
        &node,
        "update t set c = 'ab' where a = 99999",
        "update t set c = 'abcd' where a = 99999",
        false,
    );
    assert_eq!(
        o.error.map(|e| e.0),
        Some("22001".to_string()),
        "too long even when no row is updated"
    );
    ok(&mut s, "create table empty (a int primary key)");
    let o = same(
        &node,
        "select a from empty where a = 4 / 2",
        "select a from empty where a = 4 / 0",
        false,
    );
    assert_eq!(
        o.error.map(|e| e.0),
        Some("22012".to_string()),
        "division by zero with no rows"
    );
    same(
        &node,
        "select a from empty where a = 4 / 2",
        "select a from empty where a = 9 / 3",
        true,
    );
    // A statement estimated to cost much (a scan of 100,000 rows) is
    // planned with its constants each time; a small table's scan is not.
    ok(&mut s, "create table big (a int, b int)");
    ok(
        &mut s,
        "insert into big select g, g % 7 from generate_series(1, 100000) g",
    );
    ok(&mut s, "analyze big");
    let o = same(
        &node,
        "select count(*) from big where b in (1, 2)",
        "select count(*) from big where b in (3, 4)",
        false,
    );
    assert_eq!(o.rows, vec![vec!["28572".to_string()]]);
    same(
        &node,
        "select a from empty where a + 0 in (1, 2)",
        "select a from empty where a + 0 in (3, 4)",
        true,
    );
    same(
        &node,
        "insert into t (a, c) values (2, 'ab')",
        "insert into t (a, c) values (4, 'abc   ')",
        true,
    );
    same(&node, "select 1 + 2", "select 1 + 'x'", false);

    // 8. char(n), boolean and numeric(p,s) columns.
    same(
        &node,
        "insert into t (a, e, f, n) values (5, 'ab', 't', 1.234)",
        "insert into t (a, e, f, n) values (6, 'cd', 'false', 12.345)",
        true,
    );
    let o = same(
        &node,
        "select a, e, f, n from t where e = 'zz' and f = 'f'",
        "select a, e, f, n from t where e = 'cd' and f = 'false'",
        true,
    );
    assert_eq!(
        o.rows.len(),
        3,
        "char and bool literals compare (three INSERTs)"
    );
    same(
        &node,
        "select a from t where n > 1 and n < 100.5",
        "select a from t where n > 2 and n < 13",
        true,
    );

    // 9. INSERT … VALUES with many rows, and IN lists of two lengths.
    let values = |base: i32| {
        (0..50)
            .map(|i| format!("({}, 'row {}')", base + i, base + i))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let o = same(
        &node,
        &format!("insert into t (a, b) values {}", values(1000)),
        &format!("insert into t (a, b) values {}", values(2000)),
        true,
    );
    assert_eq!(o.tag.as_deref(), Some("INSERT 0 50"), "fifty rows");
    let o = same(
        &node,
        "select b from t where a in (1000, 1001, 1002) order by a",
        "select b from t where a in (2000, 2049, 7) order by a",
        true,
    );
    // Each INSERT of `same` ran three times.
    assert_eq!(o.rows.len(), 6, "2000 and 2049, three times each");
    let o = same(
        &node,
        "select b from t where a in (1000, 1001) order by a",
        "select b from t where a in (2000, 2001) order by a",
        true,
    );
    assert_eq!(o.rows.len(), 6, "IN with two values is its own shape");

    // 10. UPDATE and DELETE as pgbench and ORMs write them.
    same(
        &node,
        "UPDATE acc SET abalance = abalance + -5 WHERE aid = 10",
        "UPDATE acc SET abalance = abalance + 3 WHERE aid = 11",
        true,
    );
    let o = same(
        &node,
        "delete from t where a = 99998 returning b",
        "delete from t where a = 99999 returning b",
        true,
    );
    assert_eq!(o.columns, Some(vec![("b".to_string(), 25)]), "RETURNING");
    ok(&mut s, "delete from t where a = 2047 returning b");
    let (o, ran_as) = run(&mut s, "delete from t where a = 2048 returning b");
    assert!(ran_as.contains('$'), "DELETE through the template");
    assert_eq!(o.tag.as_deref(), Some("DELETE 3"), "rows deleted");

    // 11. Texts the normaliser leaves alone still run.
    let stmts = s.prepare("select 1; select 2", &[]).expect("parse");
    assert_eq!(stmts.len(), 2, "two statements, not normalised");
    assert!(
        stmts.iter().all(|st| !st.text().contains('$')),
        "exact texts"
    );
    ok(&mut s, "select 1 -- a comment");
    ok(&mut s, "select e'a\\tb'");
}

#[test]
fn shapes_follow_the_catalog_and_the_transaction() {
    let (_dir, node) = open_node();
    let mut s = session(&node);

    // 1. A proven shape, then the table is dropped and made again with a
    //    text column: the shape is checked again and the exact text's
    //    error is reported.
    ok(&mut s, "create table r (a int, b int)");
    ok(&mut s, "insert into r values (1, 2)");
    ok(&mut s, "select b from r where a = 1");
    let (o, ran_as) = run(&mut s, "select b from r where a = 2");
    assert!(ran_as.contains('$'), "template in use");
    assert!(o.error.is_none(), "no error");
    ok(&mut s, "drop table r");
    ok(&mut s, "create table r (a text, b int)");
    let (o, _) = run(&mut s, "select b from r where a = 3");
    assert_eq!(
        o.error.map(|e| e.0),
        Some("42883".to_string()),
        "text = integer has no operator"
    );
    let (o, _) = run(&mut s, "select b from r where a = '3'");
    assert!(o.error.is_none(), "string literal fits the text column");

    // 2. Inside a failed transaction block the shape path gives way to
    //    25P02 like any statement.
    ok(&mut s, "begin");
    let (o, _) = run(&mut s, "select 1 / 0");
    assert_eq!(
        o.error.map(|e| e.0),
        Some("22012".to_string()),
        "error in block"
    );
    let (o, _) = run(&mut s, "select b from r where a = '4'");
    assert_eq!(
        o.error.map(|e| e.0),
        Some("25P02".to_string()),
        "failed block"
    );
    ok(&mut s, "rollback");

    // 3. Extended protocol: Parse of a text with literals describes no
    //    parameters and binds none.
    for v in [1, 2] {
        let stmts = s
            .prepare(&format!("select {v} + 1 as x"), &[])
            .expect("parse");
        assert!(stmts[0].param_types().is_empty(), "no parameters");
        let mut sink = Sink::default();
        s.execute(&stmts[0], &[], &mut sink).expect("execute");
        assert_eq!(sink.rows, vec![vec![(v + 1).to_string()]], "bound literal");
    }
}

/// Per-statement cost of pgbench's select in simple mode: every text a
/// miss of the text cache (parse + plan; a comment keeps the text from
/// being normalised), a shape hit, and a prepared statement executed with
/// a parameter (pgbench -M prepared). Run with
/// `cargo test --release -p common --test simple_shape -- --ignored --nocapture`.
#[test]
#[ignore]
fn simple_select_timing() {
    let (_dir, node) = open_node();
    let mut s = session(&node);
    ok(
        &mut s,
        "create table pgbench_accounts (aid int not null primary key, bid int, abalance int, filler char(84))",
    );
    ok(
        &mut s,
        "insert into pgbench_accounts (aid, bid, abalance) select g, 1, 0 from generate_series(1, 100000) as g",
    );
    let n = 200_000u32;
    let mut aid = 1u32;
    let mut next = || {
        aid = aid.wrapping_mul(1_103_515_245).wrapping_add(12_345) % 100_000 + 1;
        aid
    };
    let time = |label: &str, f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        let per = start.elapsed().as_nanos() as f64 / f64::from(n) / 1000.0;
        println!("{label:<34} {per:>7.2} µs/statement");
    };
    for round in 0..3 {
        println!("round {round}");
        time("exact text (parse + plan)", &mut || {
            for _ in 0..n {
                let sql = format!(
                    "/* x */ SELECT abalance FROM pgbench_accounts WHERE aid = {};",
                    next()
                );
                let _ = run(&mut s, &sql);
            }
        });
        time("shape hit (-M simple)", &mut || {
            for _ in 0..n {
                let sql = format!(
                    "SELECT abalance FROM pgbench_accounts WHERE aid = {};",
                    next()
                );
                let _ = run(&mut s, &sql);
            }
        });
        let stmts = s
            .prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1", &[])
            .expect("prepare");
        time("prepared, bound parameter", &mut || {
            for _ in 0..n {
                let mut sink = Sink::default();
                let v = Value::Int4(next() as i32);
                let _ = s.execute(&stmts[0], &[v], &mut sink);
            }
        });
    }
}
