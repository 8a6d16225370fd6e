//! In-process tests of the SQL layer: sessions driven directly through the
//! [`Session`] contract with a recording [`ResultSink`], the way the
//! protocol loop drives them (simple query = prepare + execute each
//! statement, several statements in one implicit transaction).
//!
//! They guard the SQL layer's behaviour: command tags, READ
//! COMMITTED vs REPEATABLE READ visibility across two sessions, concurrent
//! updates that both apply, deadlock detection, unique violations that wait
//! for an in-progress inserter, COPY round trips, failed-block rules,
//! snapshot reuse, and everything `pgbench -i` and its scripts send.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::node::Node;
use engine::Role;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::txstatus::TxStatus;
use pgtypes::value::Value;
use pgtypes::ProcNumber;
use server::backend::{ExecOutcome, ResultSink};
use sql::session::Session;

#[derive(Default)]
struct Sink {
    rows: Vec<Vec<String>>,
    notices: Vec<PgError>,
    params: Vec<(String, String)>,
    copy: Vec<u8>,
    copy_cols: Option<usize>,
}

fn text(v: &Value) -> String {
    if v.is_null() {
        "NULL".into()
    } else {
        v.to_text_string()
    }
}

impl ResultSink for Sink {
    fn row(&mut self, values: &[Value]) -> PgResult<()> {
        self.rows.push(values.iter().map(text).collect());
        Ok(())
    }
    fn notice(&mut self, notice: PgError) {
        self.notices.push(notice);
    }
    fn parameter_status(&mut self, name: &str, value: &str) {
        self.params.push((name.into(), value.into()));
    }
    fn copy_out_start(&mut self, columns: usize) {
        self.copy_cols = Some(columns);
    }
    fn copy_data(&mut self, data: &[u8]) {
        self.copy.extend_from_slice(data);
    }
}

fn open_db() -> (tempfile::TempDir, Arc<Node>) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "2MB").unwrap();
    cfg.set("deadlock_timeout", "100ms").unwrap();
    let db = Node::open(cfg, Role::Primary).unwrap();
    (dir, db)
}

fn session(db: &Arc<Node>) -> Session {
    Session::new(db.clone(), &[("user".into(), "u".into())]).unwrap()
}

/// Result of one simple Query: the tags and the rows of all statements.
#[derive(Debug, Default)]
pub(crate) struct Res {
    pub(crate) tags: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
    pub(crate) notices: Vec<PgError>,
}

/// Runs a simple Query the way the protocol loop does.
fn q_sink(s: &mut Session, sql: &str, sink: &mut Sink) -> PgResult<Vec<String>> {
    let stmts = match s.prepare(sql, &[]) {
        Ok(v) => v,
        Err(e) => {
            s.on_error();
            return Err(e);
        }
    };
    let multi = stmts.len() > 1;
    if multi {
        s.begin_implicit();
    }
    let mut tags = Vec::new();
    for st in &stmts {
        match s.execute(st, &[], sink) {
            Ok(ExecOutcome::Complete(t)) => tags.push(t),
            Ok(ExecOutcome::Empty) => tags.push(String::new()),
            Ok(ExecOutcome::CopyIn(c)) => {
                let e = s.copy_in_fail(c, "no data in this test");
                s.on_error();
                if multi {
                    let _ = s.end_implicit(false);
                }
                return Err(e);
            }
            Err(e) => {
                s.on_error();
                if multi {
                    let _ = s.end_implicit(false);
                }
                return Err(e);
            }
        }
    }
    if multi {
        s.end_implicit(true)?;
    }
    Ok(tags)
}

pub(crate) fn q(s: &mut Session, sql: &str) -> PgResult<Res> {
    let mut sink = Sink::default();
    let tags = q_sink(s, sql, &mut sink)?;
    Ok(Res {
        tags,
        rows: sink.rows,
        notices: sink.notices,
    })
}

#[track_caller]
pub(crate) fn ok(s: &mut Session, sql: &str) -> Res {
    match q(s, sql) {
        Ok(r) => r,
        Err(e) => panic!("{sql}: {e} {:?}", e.detail),
    }
}

#[track_caller]
pub(crate) fn tag(s: &mut Session, sql: &str) -> String {
    ok(s, sql).tags.pop().unwrap_or_default()
}

#[track_caller]
pub(crate) fn err(s: &mut Session, sql: &str) -> PgError {
    match q(s, sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e,
    }
}

#[track_caller]
fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    ok(s, sql).rows
}

#[track_caller]
fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0][0].clone()
}

/// Extended protocol: Parse with inferred types, Bind, Execute.
fn exec_params(
    s: &mut Session,
    sql: &str,
    params: &[Value],
) -> PgResult<(String, Vec<Vec<String>>)> {
    let stmts = s.prepare(sql, &[]).inspect_err(|_| s.on_error())?;
    let mut sink = Sink::default();
    match s.execute(&stmts[0], params, &mut sink) {
        Ok(ExecOutcome::Complete(t)) => Ok((t, sink.rows)),
        Ok(_) => Ok((String::new(), sink.rows)),
        Err(e) => {
            s.on_error();
            Err(e)
        }
    }
}

/// COPY FROM STDIN with the given chunks.
fn copy_in(s: &mut Session, sql: &str, chunks: &[&[u8]]) -> PgResult<String> {
    let stmts = s.prepare(sql, &[])?;
    let mut sink = Sink::default();
    let mut copy = match s.execute(&stmts[0], &[], &mut sink) {
        Ok(ExecOutcome::CopyIn(c)) => c,
        Ok(_) => panic!("not a COPY FROM"),
        Err(e) => {
            s.on_error();
            return Err(e);
        }
    };
    for c in chunks {
        if let Err(e) = s.copy_in_data(&mut copy, c) {
            s.on_error();
            return Err(e);
        }
    }
    s.copy_in_done(copy).inspect_err(|_| s.on_error())
}

/// Waits (bounded) until some proc waits for a transaction.
fn wait_until_someone_waits(db: &Node) {
    let start = Instant::now();
    loop {
        let waiting = (0..db.procarray().max_procs() as u32)
            .any(|p| db.procarray().lmgr().waiting_for(ProcNumber(p)).is_some());
        if waiting {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nobody started waiting"
        );
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn statement_tags() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    assert_eq!(
        tag(
            &mut s,
            "create table t (id int primary key, v text not null default 'x', n int8)"
        ),
        "CREATE TABLE"
    );
    let r = ok(&mut s, "create table if not exists t (a int)");
    assert_eq!(r.tags, ["CREATE TABLE"]);
    assert_eq!(r.notices[0].code, sqlstate::DUPLICATE_TABLE);
    assert_eq!(
        r.notices[0].message,
        "relation \"t\" already exists, skipping"
    );
    let e = err(&mut s, "create table t (a int)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (sqlstate::DUPLICATE_TABLE, "relation \"t\" already exists")
    );
    assert_eq!(
        tag(&mut s, "insert into t values (1, 'a', 10), (2, 'b', 20)"),
        "INSERT 0 2"
    );
    assert_eq!(tag(&mut s, "insert into t (id) values (3)"), "INSERT 0 1");
    assert_eq!(one(&mut s, "select v from t where id = 3"), "x");
    assert_eq!(
        tag(&mut s, "update t set n = n + 1 where id <= 2"),
        "UPDATE 2"
    );
    assert_eq!(tag(&mut s, "delete from t where id = 3"), "DELETE 1");
    assert_eq!(tag(&mut s, "select * from t"), "SELECT 2");
    assert_eq!(
        rows(&mut s, "select id, n from t order by id desc"),
        vec![vec!["2", "21"], vec!["1", "11"]]
    );
    let r = ok(
        &mut s,
        "insert into t values (7, 'q', null) returning id, v || '!' as w",
    );
    assert_eq!(
        (r.tags[0].as_str(), r.rows.clone()),
        ("INSERT 0 1", vec![vec!["7".to_string(), "q!".to_string()]])
    );
    let r = ok(&mut s, "update t set v = 'z' where id = 7 returning v");
    assert_eq!(r.rows, vec![vec!["z"]]);
    let r = ok(&mut s, "delete from t where id = 7 returning *");
    assert_eq!(r.rows, vec![vec!["7", "z", "NULL"]]);
    assert_eq!(tag(&mut s, "create index t_v on t (v)"), "CREATE INDEX");
    assert_eq!(
        tag(&mut s, "create unique index if not exists t_n on t (n)"),
        "CREATE INDEX"
    );
    assert_eq!(
        ok(&mut s, "create unique index if not exists t_n on t (n)")
            .notices
            .len(),
        1
    );
    assert_eq!(tag(&mut s, "create table u (a int, b int)"), "CREATE TABLE");
    assert_eq!(
        tag(&mut s, "alter table u add primary key (a)"),
        "ALTER TABLE"
    );
    let e = err(&mut s, "alter table u add primary key (b)");
    assert_eq!(e.code, sqlstate::INVALID_TABLE_DEFINITION);
    assert_eq!(tag(&mut s, "truncate u"), "TRUNCATE TABLE");
    assert_eq!(tag(&mut s, "truncate table t, u"), "TRUNCATE TABLE");
    assert_eq!(tag(&mut s, "vacuum"), "VACUUM");
    assert_eq!(tag(&mut s, "vacuum analyze u"), "VACUUM");
    assert_eq!(tag(&mut s, "analyze u"), "ANALYZE");
    assert_eq!(tag(&mut s, "checkpoint"), "CHECKPOINT");
    assert_eq!(tag(&mut s, "set application_name = 'me'"), "SET");
    assert_eq!(one(&mut s, "show application_name"), "me");
    assert_eq!(tag(&mut s, "reset application_name"), "RESET");
    assert_eq!(one(&mut s, "show application_name"), "");
    assert_eq!(one(&mut s, "show transaction_isolation"), "read committed");
    assert!(rows(&mut s, "show all").len() > 10);
    assert_eq!(tag(&mut s, "begin"), "BEGIN");
    assert_eq!(tag(&mut s, "savepoint a"), "SAVEPOINT");
    assert_eq!(tag(&mut s, "release a"), "RELEASE");
    assert_eq!(tag(&mut s, "savepoint b"), "SAVEPOINT");
    assert_eq!(tag(&mut s, "rollback to b"), "ROLLBACK");
    assert_eq!(tag(&mut s, "commit"), "COMMIT");
    assert_eq!(
        tag(&mut s, "start transaction isolation level repeatable read"),
        "START TRANSACTION"
    );
    assert_eq!(one(&mut s, "show transaction_isolation"), "repeatable read");
    assert_eq!(tag(&mut s, "end"), "COMMIT");
    assert_eq!(tag(&mut s, "begin"), "BEGIN");
    assert_eq!(tag(&mut s, "abort"), "ROLLBACK");
    let r = ok(&mut s, "commit");
    assert_eq!(r.tags, ["COMMIT"]);
    assert_eq!(r.notices[0].code, sqlstate::NO_ACTIVE_SQL_TRANSACTION);
    assert_eq!(tag(&mut s, "drop table t, u"), "DROP TABLE");
    let e = err(&mut s, "drop table t");
    assert_eq!(
        (e.code, e.message.as_str()),
        (sqlstate::UNDEFINED_TABLE, "table \"t\" does not exist")
    );
    let r = ok(&mut s, "drop table if exists t");
    assert_eq!(r.notices[0].message, "table \"t\" does not exist, skipping");
    let e = err(&mut s, "select * from nosuch");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            sqlstate::UNDEFINED_TABLE,
            "relation \"nosuch\" does not exist"
        )
    );
    // Outside a block PREPARE TRANSACTION only warns (even when disabled).
    let r = ok(&mut s, "prepare transaction 'x'");
    assert_eq!(r.tags, ["ROLLBACK"]);
    assert_eq!(r.notices[0].code, sqlstate::NO_ACTIVE_SQL_TRANSACTION);
    ok(&mut s, "begin");
    let e = err(&mut s, "prepare transaction 'x'");
    assert_eq!(e.code, sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE);
    assert_eq!(e.message, "prepared transactions are disabled");
    assert_eq!(q(&mut s, "").unwrap().tags, [""]);
    assert_eq!(s.tx_status(), TxStatus::Idle);
}

#[test]
fn selects() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    assert_eq!(one(&mut s, "select 1 + 2"), "3");
    assert_eq!(
        rows(&mut s, "select 1 as a, 'x' as b"),
        vec![vec!["1", "x"]]
    );
    ok(&mut s, "create table t (a int, b text)");
    ok(
        &mut s,
        "insert into t values (3, 'c'), (1, 'a'), (null, 'n'), (2, 'b'), (2, 'bb')",
    );
    assert_eq!(
        rows(&mut s, "select a from t order by a"),
        vec![vec!["1"], vec!["2"], vec!["2"], vec!["3"], vec!["NULL"]]
    );
    assert_eq!(
        rows(&mut s, "select a from t order by a desc limit 2"),
        vec![vec!["NULL"], vec!["3"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "select a from t order by 1 nulls first limit 1 offset 0"
        ),
        vec![vec!["NULL"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "select b as x from t where a = 2 or a = 3 order by x"
        ),
        vec![vec!["b"], vec!["bb"], vec!["c"]]
    );
    assert_eq!(
        rows(&mut s, "select count(*), sum(a), min(b), max(a) from t"),
        vec![vec!["5", "8", "a", "3"]]
    );
    assert_eq!(
        rows(&mut s, "select count(*) from t where a > 100"),
        vec![vec!["0"]]
    );
    assert_eq!(
        rows(&mut s, "select a, count(*) from t group by a order by a"),
        vec![
            vec!["1", "1"],
            vec!["2", "2"],
            vec!["3", "1"],
            vec!["NULL", "1"]
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "select x from generate_series(1, 3) as g(x) where x <> 2"
        ),
        vec![vec!["1"], vec!["3"]]
    );
    assert_eq!(
        one(
            &mut s,
            "select sum(aid) from generate_series(1, 100) as aid"
        ),
        "5050"
    );
    // A set-returning function in the target list of a SELECT without FROM.
    assert_eq!(
        rows(&mut s, "select generate_series(1, 3)"),
        vec![vec!["1"], vec!["2"], vec!["3"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "select generate_series(1, 5, 2) as x, 'a' as y order by x desc"
        ),
        vec![vec!["5", "a"], vec!["3", "a"], vec!["1", "a"]]
    );
    ok(&mut s, "create table srf (n int primary key)");
    ok(&mut s, "insert into srf select generate_series(1, 100)");
    assert_eq!(one(&mut s, "select count(*) from srf"), "100");
    assert_eq!(
        err(&mut s, "select generate_series(1, 2) + 1").code,
        sqlstate::FEATURE_NOT_SUPPORTED
    );
    let e = err(&mut s, "select nosuch from t");
    assert_eq!(e.code, sqlstate::UNDEFINED_COLUMN);
    let (t, r) = exec_params(
        &mut s,
        "select b from t where a = $1 order by b",
        &[Value::Int4(2)],
    )
    .unwrap();
    assert_eq!(
        (t.as_str(), r),
        (
            "SELECT 2",
            vec![vec!["b".to_string()], vec!["bb".to_string()]]
        )
    );
}

#[test]
fn failed_block_rejects_until_rollback() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table t (a int primary key)");
    ok(&mut s, "begin");
    ok(&mut s, "insert into t values (1)");
    let e = err(&mut s, "select * from nosuch");
    assert_eq!(e.code, sqlstate::UNDEFINED_TABLE);
    assert_eq!(s.tx_status(), TxStatus::Failed);
    let e = err(&mut s, "select 1");
    assert_eq!(e.code, sqlstate::IN_FAILED_SQL_TRANSACTION);
    assert_eq!(
        e.message,
        "current transaction is aborted, commands ignored until end of transaction block"
    );
    let e = err(&mut s, "selec 1");
    assert_eq!(e.code, sqlstate::SYNTAX_ERROR);
    assert_eq!(s.tx_status(), TxStatus::Failed);
    // COMMIT of a failed block rolls back.
    assert_eq!(tag(&mut s, "commit"), "ROLLBACK");
    assert_eq!(s.tx_status(), TxStatus::Idle);
    assert_eq!(one(&mut s, "select count(*) from t"), "0");
    // ROLLBACK TO a savepoint recovers.
    ok(&mut s, "begin");
    ok(&mut s, "insert into t values (1)");
    ok(&mut s, "savepoint s");
    let e = err(&mut s, "insert into t values (1)");
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    err(&mut s, "insert into t values (2)");
    ok(&mut s, "rollback to savepoint s");
    ok(&mut s, "insert into t values (2)");
    ok(&mut s, "commit");
    assert_eq!(
        rows(&mut s, "select a from t order by a"),
        vec![vec!["1"], vec!["2"]]
    );
    // A multi-statement query is one transaction: an error undoes it all.
    let e = err(&mut s, "insert into t values (3); insert into t values (1)");
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    assert_eq!(one(&mut s, "select count(*) from t"), "2");
    assert_eq!(
        ok(
            &mut s,
            "insert into t values (3); insert into t values (4); select count(*) from t"
        )
        .rows,
        vec![vec!["4"]]
    );
    // DDL then use in one query.
    let r = ok(
        &mut s,
        "create table m (x int); insert into m values (5); select * from m",
    );
    assert_eq!(r.rows, vec![vec!["5"]]);
}

#[test]
fn read_committed_and_repeatable_read() {
    let (_d, db) = open_db();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "create table t (id int primary key, v int)");
    ok(&mut a, "insert into t values (1, 1)");
    // Uncommitted rows are invisible to others.
    ok(&mut a, "begin");
    ok(&mut a, "insert into t values (2, 2)");
    assert_eq!(
        one(&mut b, "select count(*) from t"),
        "1",
        "uncommitted insert invisible"
    );
    assert_eq!(
        one(&mut a, "select count(*) from t"),
        "2",
        "own insert visible"
    );
    // RR snapshot taken at its first statement.
    ok(&mut b, "begin isolation level repeatable read");
    assert_eq!(one(&mut b, "select count(*) from t"), "1");
    ok(&mut a, "commit");
    assert_eq!(
        one(&mut b, "select count(*) from t"),
        "1",
        "RR does not see a later commit"
    );
    ok(&mut b, "commit");
    assert_eq!(
        one(&mut b, "select count(*) from t"),
        "2",
        "visible after RR ends"
    );
    // RC sees commits in its next statement.
    ok(&mut b, "begin");
    assert_eq!(one(&mut b, "select v from t where id = 1"), "1");
    ok(&mut a, "update t set v = 10 where id = 1");
    assert_eq!(
        one(&mut b, "select v from t where id = 1"),
        "10",
        "RC sees the commit in the next statement"
    );
    ok(&mut b, "commit");
    // ROLLBACK leaves nothing.
    ok(&mut a, "begin");
    ok(&mut a, "insert into t values (3, 3)");
    ok(&mut a, "update t set v = 99");
    ok(&mut a, "rollback");
    assert_eq!(
        rows(&mut b, "select id, v from t order by id"),
        vec![vec!["1", "10"], vec!["2", "2"]]
    );
    // RR write conflict: 40001.
    ok(&mut b, "begin isolation level repeatable read");
    assert_eq!(one(&mut b, "select v from t where id = 2"), "2");
    ok(&mut a, "update t set v = v + 1 where id = 2");
    let e = err(&mut b, "update t set v = v + 1 where id = 2");
    assert_eq!(e.code, sqlstate::SERIALIZATION_FAILURE);
    assert_eq!(
        e.message,
        "could not serialize access due to concurrent update"
    );
    ok(&mut b, "rollback");
}

#[test]
fn snapshot_reuse_is_visible_in_stats() {
    let (_d, db) = open_db();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "create table t (a int)");
    ok(&mut a, "insert into t values (1)");
    let stat = |s: &mut Session| -> (i64, i64, i64) {
        let r = rows(s, "select snapshots_computed, snapshots_reused, xact_completion_count from hotpair_stat_snapshots");
        (
            r[0][0].parse().unwrap(),
            r[0][1].parse().unwrap(),
            r[0][2].parse().unwrap(),
        )
    };
    let s0 = stat(&mut b);
    for _ in 0..5 {
        ok(&mut b, "select * from t");
    }
    let s1 = stat(&mut b);
    assert!(
        s1.1 >= s0.1 + 5,
        "snapshots reused across SELECTs: {s0:?} -> {s1:?}"
    );
    assert_eq!(s1.2, s0.2, "no completion counted");
    ok(&mut a, "insert into t values (2)");
    let s2 = stat(&mut b);
    assert!(s2.0 > s1.0, "recomputed after a commit: {s1:?} -> {s2:?}");
    assert!(s2.2 > s1.2);
}

#[test]
fn concurrent_increments_both_apply() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table c (id int primary key, n int)");
    ok(&mut s, "insert into c values (1, 0)");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut s = session(&db);
                for _ in 0..25 {
                    ok(&mut s, "begin");
                    ok(&mut s, "update c set n = n + 1 where id = 1");
                    ok(&mut s, "commit");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(one(&mut s, "select n from c where id = 1"), "100");
    // And one waiting on an explicit holder.
    ok(&mut s, "begin");
    ok(&mut s, "update c set n = n + 1 where id = 1");
    let db2 = db.clone();
    let h = std::thread::spawn(move || {
        let mut s2 = session(&db2);
        ok(&mut s2, "update c set n = n + 10 where id = 1")
    });
    wait_until_someone_waits(&db);
    ok(&mut s, "commit");
    assert_eq!(h.join().unwrap().tags, ["UPDATE 1"]);
    assert_eq!(one(&mut s, "select n from c"), "111");
}

#[test]
fn deadlock_is_detected() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table d (id int primary key, n int)");
    ok(&mut s, "insert into d values (1, 0), (2, 0)");
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "begin");
    ok(&mut a, "update d set n = n + 1 where id = 1");
    ok(&mut b, "begin");
    ok(&mut b, "update d set n = n + 1 where id = 2");
    let ha = std::thread::spawn(move || {
        let r = q(&mut a, "update d set n = n + 1 where id = 2");
        let end = q(&mut a, if r.is_ok() { "commit" } else { "rollback" });
        (r.map(|x| x.tags), end.is_ok())
    });
    wait_until_someone_waits(&db);
    let rb = q(&mut b, "update d set n = n + 1 where id = 1");
    let _ = q(&mut b, if rb.is_ok() { "commit" } else { "rollback" });
    let (ra, _) = ha.join().unwrap();
    let errs: Vec<&PgError> = [ra.as_ref().err(), rb.as_ref().err()]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(errs.len(), 1, "exactly one victim: {ra:?} {rb:?}");
    assert_eq!(errs[0].code, sqlstate::DEADLOCK_DETECTED);
}

#[test]
fn row_lock_waits_end_at_lock_timeout_and_statement_timeout() {
    let (_d, db) = open_db();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "create table lt (id int primary key, n int)");
    ok(&mut a, "insert into lt values (1, 0)");
    ok(&mut a, "begin");
    ok(&mut a, "update lt set n = 1 where id = 1");
    // A waiting UPDATE gives up at lock_timeout (55P03)…
    ok(&mut b, "set lock_timeout = '30ms'");
    let e = err(&mut b, "update lt set n = 2 where id = 1");
    assert_eq!(e.code, sqlstate::LOCK_NOT_AVAILABLE);
    assert_eq!(e.message, "canceling statement due to lock timeout");
    // …in a transaction block, which is then aborted as on any error.
    ok(&mut b, "begin");
    let e = err(&mut b, "delete from lt where id = 1");
    assert_eq!(e.code, sqlstate::LOCK_NOT_AVAILABLE);
    assert_eq!(err(&mut b, "select 1").code, "25P02");
    ok(&mut b, "rollback");
    // statement_timeout ends a wait too (it is checked while waiting, not
    // only between rows), and a unique-key wait as well as a row wait.
    ok(&mut b, "set lock_timeout = 0");
    ok(&mut b, "set statement_timeout = '30ms'");
    let e = err(&mut b, "update lt set n = 2 where id = 1");
    assert_eq!(e.code, "57014");
    assert_eq!(e.message, "canceling statement due to statement timeout");
    ok(&mut a, "insert into lt values (2, 0)");
    let e = err(&mut b, "insert into lt values (2, 9)");
    assert_eq!(e.code, "57014");
    ok(&mut b, "set statement_timeout = 0");
    // The holder is untouched: it commits, and the waiter's retry works.
    ok(&mut a, "commit");
    ok(&mut b, "update lt set n = n + 10 where id = 1");
    assert_eq!(one(&mut b, "select n from lt where id = 1"), "11");
}

#[test]
fn duplicate_keys() {
    let (_d, db) = open_db();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "create table k (id int primary key, v text)");
    ok(&mut a, "insert into k values (1, 'a')");
    let e = err(&mut a, "insert into k values (1, 'b')");
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    assert_eq!(
        e.message,
        "duplicate key value violates unique constraint \"k_pkey\""
    );
    assert_eq!(e.detail.as_deref(), Some("Key (id)=(1) already exists."));
    let e = err(&mut a, "insert into k values (null, 'b')");
    assert_eq!(e.code, sqlstate::NOT_NULL_VIOLATION);
    // Update into an existing key.
    ok(&mut a, "insert into k values (2, 'b')");
    assert_eq!(
        err(&mut a, "update k set id = 1 where id = 2").code,
        sqlstate::UNIQUE_VIOLATION
    );
    // Delete then re-insert in one transaction is fine.
    ok(
        &mut a,
        "begin; delete from k where id = 2; insert into k values (2, 'c'); commit",
    );
    // Waiting on an in-progress inserter: it commits → 23505.
    ok(&mut a, "begin");
    ok(&mut a, "insert into k values (5, 'x')");
    let db2 = db.clone();
    let h = std::thread::spawn(move || {
        let mut s = session(&db2);
        q(&mut s, "insert into k values (5, 'y')").map(|r| r.tags)
    });
    wait_until_someone_waits(&db);
    ok(&mut a, "commit");
    let e = h.join().unwrap().unwrap_err();
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    // … it aborts → the waiter inserts.
    ok(&mut a, "begin");
    ok(&mut a, "insert into k values (6, 'x')");
    let db2 = db.clone();
    let h = std::thread::spawn(move || {
        let mut s = session(&db2);
        q(&mut s, "insert into k values (6, 'y')").map(|r| r.tags)
    });
    wait_until_someone_waits(&db);
    ok(&mut a, "rollback");
    assert_eq!(h.join().unwrap().unwrap(), ["INSERT 0 1"]);
    assert_eq!(one(&mut b, "select v from k where id = 6"), "y");
    // Building a unique index over duplicates fails and leaves no index.
    ok(&mut a, "create table dup (a int)");
    ok(&mut a, "insert into dup values (1), (1)");
    let e = err(&mut a, "alter table dup add primary key (a)");
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    assert_eq!(e.message, "could not create unique index \"dup_pkey\"");
    ok(&mut a, "insert into dup values (1)");
}

#[test]
fn copy_round_trips() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(
        &mut s,
        "create table c (id int primary key, t text, f float8, b bool)",
    );
    let n = copy_in(
        &mut s,
        "copy c from stdin",
        &[
            b"1\thello\t1.5\tt\n2\t\\N\t",
            b"-2\tf\n3\ttab\\there\t0\tf\n\\.\n",
        ],
    )
    .unwrap();
    assert_eq!(n, "COPY 3");
    let n = copy_in(
        &mut s,
        "copy c (id, t) from stdin with (format csv, header)",
        &[b"id,t\n4,\"a,b\"\"c\"\n5,\n6,\"\"\n"],
    )
    .unwrap();
    assert_eq!(n, "COPY 3");
    assert_eq!(one(&mut s, "select t from c where id = 4"), "a,b\"c");
    assert_eq!(one(&mut s, "select t is null from c where id = 5"), "t");
    assert_eq!(one(&mut s, "select t from c where id = 6"), "");
    let mut sink = Sink::default();
    let tags = q_sink(&mut s, "copy c to stdout", &mut sink).unwrap();
    assert_eq!(tags, ["COPY 6"]);
    assert_eq!(sink.copy_cols, Some(4));
    let text_out = sink.copy.clone();
    assert!(String::from_utf8_lossy(&text_out).contains("3\ttab\\there\t0\tf\n"));
    let mut sink = Sink::default();
    q_sink(
        &mut s,
        "copy (select id, t from c where id >= 4 order by id) to stdout with (format csv)",
        &mut sink,
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&sink.copy),
        "4,\"a,b\"\"c\"\n5,\n6,\"\"\n"
    );
    // Text round trip into a copy of the table.
    ok(
        &mut s,
        "create table c2 (id int primary key, t text, f float8, b bool)",
    );
    assert_eq!(
        copy_in(&mut s, "copy c2 from stdin", &[&text_out]).unwrap(),
        "COPY 6"
    );
    assert_eq!(
        rows(&mut s, "select * from c2 order by id"),
        rows(&mut s, "select * from c order by id")
    );
    // Errors.
    let e = copy_in(&mut s, "copy c from stdin", &[b"7\tx\t1\tt\n8\n"]).unwrap_err();
    assert_eq!(e.code, sqlstate::BAD_COPY_FILE_FORMAT);
    assert!(e.detail.clone().unwrap_or_default().contains("line 2"));
    let e = copy_in(&mut s, "copy c from stdin", &[b"x\ty\t1\tt\n"]).unwrap_err();
    assert_eq!(e.code, sqlstate::INVALID_TEXT_REPRESENTATION);
    let e = copy_in(&mut s, "copy c from stdin", &[b"1\ty\t1\tt\n"]).unwrap_err();
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    let e = copy_in(&mut s, "copy c from stdin with (freeze on)", &[]).unwrap_err();
    assert_eq!(e.code, sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE);
    assert_eq!(one(&mut s, "select count(*) from c"), "6");
}

/// Everything `pgbench -i` (default steps, client-side generation) and its
/// built-in scripts send, in order, as pgbench 15 sends it.
#[test]
fn pgbench_init_and_scripts() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let naccounts = 1000;
    ok(
        &mut s,
        "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    );
    ok(&mut s, "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))");
    ok(&mut s, "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)");
    ok(&mut s, "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)");
    ok(&mut s, "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)");
    ok(&mut s, "begin");
    ok(
        &mut s,
        "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    );
    ok(
        &mut s,
        "insert into pgbench_branches(bid,bbalance) values(1,0)",
    );
    for t in 1..=10 {
        ok(
            &mut s,
            &format!("insert into pgbench_tellers(tid,bid,tbalance) values ({t},1,0)"),
        );
    }
    let mut data = Vec::new();
    for a in 1..=naccounts {
        data.extend_from_slice(format!("{a}\t1\t0\t\n").as_bytes());
    }
    let chunks: Vec<&[u8]> = data.chunks(777).collect();
    assert_eq!(
        copy_in(
            &mut s,
            "copy pgbench_accounts from stdin with (freeze on)",
            &chunks
        )
        .unwrap(),
        format!("COPY {naccounts}")
    );
    ok(&mut s, "commit");
    for t in [
        "pgbench_branches",
        "pgbench_tellers",
        "pgbench_accounts",
        "pgbench_history",
    ] {
        assert_eq!(tag(&mut s, &format!("vacuum analyze {t}")), "VACUUM");
    }
    for (t, c) in [
        ("pgbench_branches", "bid"),
        ("pgbench_tellers", "tid"),
        ("pgbench_accounts", "aid"),
    ] {
        assert_eq!(
            tag(&mut s, &format!("alter table {t} add primary key ({c})")),
            "ALTER TABLE"
        );
    }
    // pgbench run start-up.
    assert_eq!(one(&mut s, "select count(*) from pgbench_branches"), "1");
    // pgbench's partitioning probe: public is the second schema on the
    // path, no partition strategy, no partitions (as PostgreSQL answers).
    let probe = rows(&mut s, "select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1");
    assert_eq!(probe.len(), 1, "{probe:?}");
    assert_eq!((probe[0][0].as_str(), probe[0][2].as_str()), ("2", "0"));
    assert_eq!(s.tx_status(), TxStatus::Idle);
    ok(&mut s, "vacuum pgbench_branches");
    ok(&mut s, "vacuum pgbench_tellers");
    ok(&mut s, "truncate pgbench_history");
    // tpcb-like, simple protocol (literal values, trailing semicolons).
    for i in 0..20 {
        let (aid, tid, delta) = (1 + (i * 37) % naccounts, 1 + i % 10, i - 10);
        ok(&mut s, "BEGIN;");
        ok(
            &mut s,
            &format!(
                "UPDATE pgbench_accounts SET abalance = abalance + {delta} WHERE aid = {aid};"
            ),
        );
        ok(
            &mut s,
            &format!("SELECT abalance FROM pgbench_accounts WHERE aid = {aid};"),
        );
        ok(
            &mut s,
            &format!("UPDATE pgbench_tellers SET tbalance = tbalance + {delta} WHERE tid = {tid};"),
        );
        ok(
            &mut s,
            &format!("UPDATE pgbench_branches SET bbalance = bbalance + {delta} WHERE bid = 1;"),
        );
        ok(&mut s, &format!("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ({tid}, 1, {aid}, {delta}, CURRENT_TIMESTAMP);"));
        ok(&mut s, "END;");
    }
    // Prepared protocol (parameters), select-only and tpcb-like.
    let upd = s
        .prepare(
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
            &[],
        )
        .unwrap();
    let sel = s
        .prepare("SELECT abalance FROM pgbench_accounts WHERE aid = $1;", &[])
        .unwrap();
    let hist = s
        .prepare("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);", &[])
        .unwrap();
    assert_eq!(sel[0].columns().unwrap()[0].name, "abalance");
    let mut sink = Sink::default();
    for i in 0..20 {
        let aid = Value::Int4(1 + i);
        match s
            .execute(&upd[0], &[Value::Int4(5), aid.clone()], &mut sink)
            .unwrap()
        {
            ExecOutcome::Complete(t) => assert_eq!(t, "UPDATE 1"),
            _ => panic!(),
        }
        match s
            .execute(&sel[0], std::slice::from_ref(&aid), &mut sink)
            .unwrap()
        {
            ExecOutcome::Complete(t) => assert_eq!(t, "SELECT 1"),
            _ => panic!(),
        }
        match s
            .execute(
                &hist[0],
                &[Value::Int4(1), Value::Int4(1), aid, Value::Int4(5)],
                &mut sink,
            )
            .unwrap()
        {
            ExecOutcome::Complete(t) => assert_eq!(t, "INSERT 0 1"),
            _ => panic!(),
        }
    }
    assert_eq!(one(&mut s, "select count(*) from pgbench_history"), "40");
    let total: i64 = (0..20).map(|i| i - 10).sum::<i64>() + 20 * 5;
    assert_eq!(
        one(&mut s, "select sum(abalance) from pgbench_accounts"),
        total.to_string()
    );
    assert_eq!(
        one(&mut s, "select bbalance from pgbench_branches"),
        ((0..20).map(|i| i - 10).sum::<i64>()).to_string()
    );
    // -I G: server-side generation.
    ok(
        &mut s,
        "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    );
    ok(&mut s, "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 1) as bid");
    ok(&mut s, "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, 10) as tid");
    let r = ok(&mut s, "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 5000) as aid");
    assert_eq!(r.tags, ["INSERT 0 5000"]);
    assert_eq!(
        one(
            &mut s,
            "select abalance from pgbench_accounts where aid = 4999"
        ),
        "0"
    );
    assert_eq!(
        one(
            &mut s,
            "select length(filler) from pgbench_accounts where aid = 1"
        ),
        "0"
    );
    // Restart: the catalog and the indexes come back.
    drop(s);
    let cfg = (*db.config()).clone();
    db.checkpoint().unwrap();
    drop(db);
    let db = Node::open(cfg, Role::Primary).unwrap();
    let mut s = session(&db);
    assert_eq!(one(&mut s, "select count(*) from pgbench_accounts"), "5000");
    assert_eq!(
        one(&mut s, "select bid from pgbench_accounts where aid = 4321"),
        "1"
    );
    let e = err(
        &mut s,
        "insert into pgbench_accounts values (4321, 1, 0, '')",
    );
    assert_eq!(e.code, sqlstate::UNIQUE_VIOLATION);
    ok(
        &mut s,
        "update pgbench_accounts set abalance = 1 where aid = 1",
    );
}

#[test]
fn restart_indexes_only_versions_someone_could_see() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table h (id int primary key, n int)");
    ok(&mut s, "insert into h values (1, 0), (2, 0), (3, 0)");
    for _ in 0..50 {
        ok(&mut s, "update h set n = n + 1 where id = 1");
    }
    ok(&mut s, "begin; update h set n = 99 where id = 2; rollback");
    ok(&mut s, "delete from h where id = 3");
    let entries = |db: &Arc<Node>| {
        let t = db.catalog().table("h").unwrap();
        let list = t.indexes.list();
        list[0].index.len()
    };
    assert!(entries(&db) > 3, "dead versions are indexed until cleaned");
    drop(s);
    let cfg = (*db.config()).clone();
    db.checkpoint().unwrap();
    drop(db);
    let db = Node::open(cfg, Role::Primary).unwrap();
    // One entry per live row: the 50 superseded versions of 1, the aborted
    // version of 2 and the deleted 3 are dead to every snapshot to come.
    assert_eq!(entries(&db), 2);
    let mut s = session(&db);
    assert_eq!(one(&mut s, "select n from h where id = 1"), "50");
    assert_eq!(one(&mut s, "select n from h where id = 2"), "0");
    assert_eq!(one(&mut s, "select count(*) from h where id = 3"), "0");
    ok(&mut s, "insert into h values (3, 3)");
    assert_eq!(
        err(&mut s, "insert into h values (1, 0)").code,
        sqlstate::UNIQUE_VIOLATION
    );
}

#[test]
fn truncate_in_a_block_rolls_back() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut other = session(&db);
    ok(&mut s, "create table tr (id int primary key, v text)");
    ok(&mut s, "insert into tr values (1, 'a'), (2, 'b'), (3, 'c')");
    // ROLLBACK brings the rows back; others see them all along.
    ok(&mut s, "begin");
    assert_eq!(tag(&mut s, "truncate tr"), "TRUNCATE TABLE");
    assert_eq!(one(&mut s, "select count(*) from tr"), "0");
    assert_eq!(one(&mut other, "select count(*) from tr"), "3");
    ok(&mut s, "rollback");
    assert_eq!(one(&mut s, "select count(*) from tr"), "3");
    // A failing multi-statement string is one implicit transaction too.
    assert_eq!(
        err(&mut s, "truncate tr; select 1/0").code,
        sqlstate::DIVISION_BY_ZERO
    );
    assert_eq!(one(&mut s, "select count(*) from tr"), "3");
    // COPY FREEZE after it is accepted; its rows stay invisible to others
    // until COMMIT, and go with a ROLLBACK.
    ok(&mut s, "begin");
    ok(&mut s, "truncate tr");
    assert_eq!(
        copy_in(&mut s, "copy tr from stdin (freeze)", &[b"7\tx\n"]).unwrap(),
        "COPY 1"
    );
    assert_eq!(one(&mut other, "select count(*) from tr"), "3");
    ok(&mut s, "rollback");
    assert_eq!(one(&mut other, "select count(*) from tr"), "3");
    assert_eq!(one(&mut other, "select count(*) from tr where id = 7"), "0");
    // COMMIT: the old rows are gone, the new one is there.
    ok(&mut s, "begin");
    ok(&mut s, "truncate tr");
    copy_in(&mut s, "copy tr from stdin (freeze)", &[b"7\tx\n"]).unwrap();
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select count(*) from tr"), "1");
    assert_eq!(one(&mut other, "select v from tr where id = 7"), "x");
    // A table with no pages (pgbench -i's pattern) is truncated physically
    // and COPY FREEZE stays a frozen load.
    ok(&mut s, "create table fresh (a int)");
    ok(&mut s, "begin");
    ok(&mut s, "truncate fresh");
    copy_in(&mut s, "copy fresh from stdin (freeze)", &[b"1\n2\n"]).unwrap();
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select count(*) from fresh"), "2");
    // Outside a block TRUNCATE stays the physical one.
    assert_eq!(tag(&mut s, "truncate tr"), "TRUNCATE TABLE");
    assert_eq!(one(&mut other, "select count(*) from tr"), "0");
}

#[test]
fn drop_table_in_a_block_happens_at_commit() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut other = session(&db);
    for t in ["d1", "d2", "d3", "d4"] {
        ok(&mut s, &format!("create table {t} (a int)"));
        ok(&mut s, &format!("insert into {t} values (1), (2)"));
    }
    // ROLLBACK keeps the table and its rows.
    ok(&mut s, "begin");
    assert_eq!(tag(&mut s, "drop table d1"), "DROP TABLE");
    assert_eq!(err(&mut s, "drop table d1").code, sqlstate::UNDEFINED_TABLE);
    ok(&mut s, "rollback");
    assert_eq!(one(&mut other, "select count(*) from d1"), "2");
    // COMMIT drops it.
    ok(&mut s, "begin");
    ok(&mut s, "drop table if exists d1, nosuch");
    ok(&mut s, "commit");
    assert_eq!(
        err(&mut other, "select * from d1").code,
        sqlstate::UNDEFINED_TABLE
    );
    // ROLLBACK TO a savepoint before the DROP undoes it; RELEASE keeps it.
    ok(&mut s, "begin");
    ok(&mut s, "savepoint a");
    ok(&mut s, "drop table d2");
    ok(&mut s, "rollback to a");
    ok(&mut s, "savepoint b");
    ok(&mut s, "drop table d3");
    ok(&mut s, "release b");
    ok(&mut s, "savepoint c");
    ok(&mut s, "rollback to c");
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select count(*) from d2"), "2");
    assert_eq!(
        err(&mut other, "select * from d3").code,
        sqlstate::UNDEFINED_TABLE
    );
    // A failing multi-statement string rolls its DROP back.
    assert_eq!(
        err(&mut s, "drop table d4; select 1/0").code,
        sqlstate::DIVISION_BY_ZERO
    );
    assert_eq!(one(&mut other, "select count(*) from d4"), "2");
    // DROP then CREATE of the same name in one block (a common migration).
    ok(&mut s, "begin");
    ok(&mut s, "drop table d4");
    ok(&mut s, "create table d4 (b text)");
    ok(&mut s, "insert into d4 values ('x')");
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select b from d4"), "x");
    // A table created in the block goes at once.
    ok(&mut s, "begin");
    ok(&mut s, "create table d5 (a int)");
    ok(&mut s, "drop table d5");
    ok(&mut s, "create table d5 (c int)");
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select count(c) from d5"), "0");
}

#[test]
fn copy_freeze_rules() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table f (a int)");
    // Not created/truncated in this transaction.
    let e = copy_in(&mut s, "copy f from stdin (freeze)", &[b"1\n"]).unwrap_err();
    assert_eq!(e.code, sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE);
    ok(&mut s, "begin");
    ok(&mut s, "truncate f");
    assert_eq!(
        copy_in(&mut s, "copy f from stdin (freeze)", &[b"1\n2\n"]).unwrap(),
        "COPY 2"
    );
    ok(&mut s, "commit");
    assert_eq!(one(&mut s, "select count(*) from f"), "2");
    // An aborted COPY FREEZE leaves none of its rows behind, and the
    // rolled-back TRUNCATE gives the old ones back, as in PostgreSQL.
    ok(&mut s, "begin");
    ok(&mut s, "truncate f");
    copy_in(&mut s, "copy f from stdin (freeze)", &[b"1\n2\n3\n"]).unwrap();
    ok(&mut s, "rollback");
    assert_eq!(one(&mut s, "select count(*) from f"), "2");
    // Into a table created in the transaction the load is frozen; a
    // ROLLBACK removes the table with its rows.
    ok(&mut s, "begin");
    ok(&mut s, "create table g (a int)");
    copy_in(&mut s, "copy g from stdin (freeze)", &[b"1\n"]).unwrap();
    ok(&mut s, "rollback");
    assert_eq!(
        err(&mut s, "select count(*) from g").code,
        sqlstate::UNDEFINED_TABLE
    );
}

#[test]
fn create_table_rolls_back_and_is_private_until_commit() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut other = session(&db);
    let missing = |o: &mut Session, sql: &str| {
        assert_eq!(err(o, sql).code, sqlstate::UNDEFINED_TABLE, "{sql}");
    };
    // ROLLBACK: gone, catalog entry and file; others never saw it.
    ok(&mut s, "begin");
    ok(
        &mut s,
        "create table c1 (id int primary key, v text unique)",
    );
    ok(&mut s, "insert into c1 values (1, 'a')");
    assert_eq!(one(&mut s, "select v from c1 where id = 1"), "a");
    missing(&mut other, "select * from c1");
    missing(&mut other, "insert into c1 values (2, 'b')");
    missing(&mut other, "drop table c1");
    let rel = db.catalog().get("c1").unwrap().rel;
    ok(&mut s, "rollback");
    missing(&mut s, "select * from c1");
    assert!(db.catalog().get("c1").is_none());
    assert!(!db.catalog().index_exists("c1_pkey"));
    assert!(
        !db.heap().smgr().exists(rel, pgtypes::ForkNumber::Main),
        "relation file removed"
    );
    // COMMIT: everyone's.
    ok(&mut s, "begin");
    ok(&mut s, "create table c1 (id int primary key)");
    ok(&mut s, "insert into c1 values (7)");
    missing(&mut other, "select * from c1");
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select id from c1"), "7");
    // Savepoints: ROLLBACK TO undoes, RELEASE hands over to the parent.
    ok(&mut s, "begin");
    ok(&mut s, "savepoint a");
    ok(&mut s, "create table c2 (a int)");
    ok(&mut s, "rollback to a");
    assert!(db.catalog().get("c2").is_none());
    ok(&mut s, "savepoint b");
    ok(&mut s, "create table c3 (a int)");
    ok(&mut s, "insert into c3 values (3)");
    ok(&mut s, "release b");
    ok(&mut s, "savepoint c");
    ok(&mut s, "create table c2 (b int)");
    ok(&mut s, "rollback to c");
    ok(&mut s, "commit");
    assert_eq!(one(&mut other, "select a from c3"), "3");
    missing(&mut other, "select * from c2");
    // An error in a savepoint, then ROLLBACK TO: the creation is undone.
    ok(&mut s, "begin");
    ok(&mut s, "savepoint d");
    ok(&mut s, "create table c2 (a int)");
    err(&mut s, "select 1/0");
    ok(&mut s, "rollback to d");
    assert!(db.catalog().get("c2").is_none());
    ok(&mut s, "commit");
    // A failing multi-statement string is one implicit transaction.
    assert_eq!(
        err(
            &mut s,
            "create table c4 (a int); insert into c4 values (1); select 1/0"
        )
        .code,
        sqlstate::DIVISION_BY_ZERO
    );
    missing(&mut s, "select * from c4");
    ok(&mut s, "create table c4 (a int); insert into c4 values (1)");
    assert_eq!(one(&mut other, "select a from c4"), "1");
    // A failed block: ROLLBACK (or COMMIT, which rolls back) removes it.
    ok(&mut s, "begin");
    ok(&mut s, "create table c5 (a int)");
    err(&mut s, "select 1/0");
    assert_eq!(tag(&mut s, "commit"), "ROLLBACK");
    missing(&mut s, "select * from c5");
    // PREPARE TRANSACTION refuses (0A000) and the creation rolls back.
    ok(&mut s, "begin");
    ok(&mut s, "create table c6 (a int)");
    assert_eq!(
        err(&mut s, "prepare transaction 'p1'").code,
        sqlstate::FEATURE_NOT_SUPPORTED
    );
    assert_eq!(s.tx_status(), TxStatus::Idle);
    missing(&mut s, "select * from c6");
    // A session that goes away mid-transaction takes its creation along.
    let mut gone = session(&db);
    ok(&mut gone, "begin");
    ok(&mut gone, "create table c7 (a int)");
    drop(gone);
    assert!(db.catalog().get("c7").is_none());
    ok(&mut other, "create table c7 (a int)");
}

#[test]
fn create_index_and_primary_key_roll_back() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut other = session(&db);
    ok(&mut s, "create table ix (a int, b int)");
    ok(&mut s, "insert into ix values (1, 1), (2, 1)");
    ok(&mut s, "begin");
    ok(&mut s, "create index ix_b on ix (b)");
    ok(&mut s, "alter table ix add primary key (a)");
    assert!(db.catalog().index_exists("ix_b"));
    assert!(db.catalog().get("ix").unwrap().columns[0].not_null);
    ok(&mut s, "rollback");
    assert!(!db.catalog().index_exists("ix_b"));
    assert!(!db.catalog().index_exists("ix_pkey"));
    // The key's NOT NULL went with it.
    ok(&mut other, "insert into ix values (null, 2), (1, 3)");
    ok(&mut s, "delete from ix where a is null or b = 3");
    // Committed, they stay; ROLLBACK TO removes only the later one.
    ok(&mut s, "begin");
    ok(&mut s, "create unique index ix_a on ix (a)");
    ok(&mut s, "savepoint x");
    ok(&mut s, "create index ix_b on ix (b)");
    ok(&mut s, "rollback to x");
    ok(&mut s, "commit");
    assert!(db.catalog().index_exists("ix_a"));
    assert!(!db.catalog().index_exists("ix_b"));
    assert_eq!(
        err(&mut other, "insert into ix values (1, 9)").code,
        sqlstate::UNIQUE_VIOLATION
    );
}

#[test]
fn deferred_plan_sees_only_own_uncommitted_tables() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut other = session(&db);
    // The protocol loop describes each statement of a Query when it runs
    // it; the SELECT's plan is made after the CREATE ran, uncommitted.
    let stmts = s
        .prepare(
            "create table dp (a int); insert into dp values (5); select a from dp",
            &[],
        )
        .unwrap();
    s.begin_implicit();
    let mut sink = Sink::default();
    for st in &stmts {
        if st.text().starts_with("select") {
            let cols = st.columns().expect("described");
            assert_eq!(cols[0].name, "a");
        }
        s.execute(st, &[], &mut sink).unwrap();
    }
    assert_eq!(sink.rows, vec![vec!["5".to_string()]]);
    // Before the implicit transaction commits, another session's
    // statement can neither describe nor run it.
    let e = other.prepare("select a from dp", &[]).unwrap_err();
    assert_eq!(e.code, sqlstate::UNDEFINED_TABLE);
    other.on_error();
    let theirs = other.prepare("select 1; select a from dp", &[]).unwrap();
    assert!(theirs[1].columns().is_none());
    s.end_implicit(true).unwrap();
    assert_eq!(one(&mut other, "select a from dp"), "5");
}

/// Copies a data directory as it is on disk: what a crash leaves.
fn crash_image(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            crash_image(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn uncommitted_creation_does_not_survive_a_crash() {
    let (d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table keep (a int)");
    ok(&mut s, "create index keep_a on keep (a)");
    ok(&mut s, "begin");
    ok(&mut s, "create table lost (id int primary key)");
    ok(&mut s, "insert into lost values (1)");
    ok(&mut s, "create index keep_lost on keep (a)");
    ok(&mut s, "alter table keep add primary key (a)");
    // The catalog file (written with every change) holds both, marked with
    // the running xid; the crash image is taken mid-transaction.
    let image = tempfile::tempdir().unwrap();
    crash_image(d.path(), image.path());
    let rel = db.catalog().get("lost").unwrap().rel;
    let mut cfg = (*db.config()).clone();
    cfg.data_dir = image.path().to_path_buf();
    let db2 = Node::open(cfg.clone(), Role::Primary).unwrap();
    assert!(db2.catalog().get("lost").is_none());
    assert!(
        !db2.heap().smgr().exists(rel, pgtypes::ForkNumber::Main),
        "relation file removed"
    );
    assert!(!db2.catalog().index_exists("keep_lost"));
    assert!(db2.catalog().index_exists("keep_a"));
    // The uncommitted primary key went, and with it its NOT NULL.
    assert!(!db2.catalog().index_exists("keep_pkey"));
    assert!(!db2.catalog().get("keep").unwrap().columns[0].not_null);
    let mut s2 = session(&db2);
    ok(&mut s2, "create table lost (b text)");
    drop(s2);
    drop(db2);
    // The removal was logged: a second crash recovery agrees.
    let db3 = Node::open(cfg, Role::Primary).unwrap();
    let mut s3 = session(&db3);
    assert_eq!(one(&mut s3, "select count(b) from lost"), "0");
    assert!(!db3.catalog().index_exists("keep_lost"));
    ok(&mut s, "rollback");
}

#[test]
fn session_functions_and_settings() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "begin");
    let x1 = one(&mut s, "select txid_current()");
    let x2 = one(&mut s, "select pg_current_xact_id()");
    assert_eq!(x1, x2);
    let snap = one(&mut s, "select pg_current_snapshot()");
    assert!(snap.contains(':'), "{snap}");
    let n1 = one(&mut s, "select now()");
    let n2 = one(&mut s, "select now()");
    assert_eq!(n1, n2, "now() is the transaction timestamp");
    ok(&mut s, "commit");
    let mut sink = Sink::default();
    q_sink(&mut s, "set application_name to 'app'", &mut sink).unwrap();
    assert_eq!(
        sink.params,
        vec![("application_name".to_string(), "app".to_string())]
    );
    assert_eq!(
        one(&mut s, "select current_setting('application_name')"),
        "app"
    );
    let e = err(&mut s, "set shared_buffers = '1MB'");
    assert_eq!(e.code, sqlstate::CANT_CHANGE_RUNTIME_PARAM);
    let e = err(&mut s, "show nosuch");
    assert_eq!(e.code, sqlstate::UNDEFINED_OBJECT);
    ok(
        &mut s,
        "set default_transaction_isolation = 'repeatable read'",
    );
    ok(&mut s, "begin");
    assert_eq!(one(&mut s, "show transaction_isolation"), "repeatable read");
    ok(&mut s, "commit");
    ok(&mut s, "begin read only");
    assert_eq!(
        err(&mut s, "create table ro (a int)").code,
        sqlstate::READ_ONLY_SQL_TRANSACTION
    );
    ok(&mut s, "rollback");
}

/// Commits so far that waited for their WAL flush.
fn sync_commit_count(db: &Node) -> u64 {
    db.xlog()
        .counters
        .sync_commits
        .load(std::sync::atomic::Ordering::Relaxed)
}

/// A transaction whose xid came only from txid_current() wrote nothing a
/// crash could lose: its commit does not wait for a WAL flush (PostgreSQL
/// skips the flush when the transaction wrote no WAL). One that wrote
/// rows still waits, also after such a transaction.
#[test]
fn commit_without_writes_does_not_wait_for_flush() {
    let (_dir, db) = open_db();
    let mut s = session(&db);
    let sync_commits = || sync_commit_count(&db);
    ok(&mut s, "create table t (a int)");
    let c0 = sync_commits();
    ok(&mut s, "select txid_current()");
    ok(&mut s, "begin");
    ok(&mut s, "select txid_current()");
    ok(&mut s, "commit");
    assert_eq!(sync_commits(), c0, "no writes: asynchronous commit");
    ok(&mut s, "begin");
    ok(&mut s, "select txid_current()");
    ok(&mut s, "insert into t values (1)");
    ok(&mut s, "commit");
    assert_eq!(sync_commits(), c0 + 1, "a write: synchronous commit");
    ok(&mut s, "select txid_current()");
    assert_eq!(sync_commits(), c0 + 1, "the flag ends with its transaction");
}

/// `SET LOCAL` and rolled-back `SET`s of the settings the transaction
/// machine keeps its own copy of (`synchronous_commit`,
/// `default_transaction_isolation`) end with their transaction, as every
/// other setting does — checked by what the commits actually do.
#[test]
fn set_local_ends_with_the_transaction() {
    let (_dir, db) = open_db();
    let mut s = session(&db);
    let sync_commits = || sync_commit_count(&db);
    ok(&mut s, "create table t (a int)");

    // SET LOCAL applies to its own commit, then ends.
    let c0 = sync_commits();
    ok(&mut s, "begin");
    ok(&mut s, "set local synchronous_commit = off");
    ok(&mut s, "insert into t values (1)");
    ok(&mut s, "commit");
    assert_eq!(sync_commits(), c0, "SET LOCAL off: asynchronous commit");
    assert_eq!(one(&mut s, "show synchronous_commit"), "on");
    ok(&mut s, "insert into t values (2)");
    assert_eq!(sync_commits(), c0 + 1, "after COMMIT: synchronous again");

    // A session-level SET in a rolled-back transaction is undone.
    ok(&mut s, "begin");
    ok(&mut s, "set synchronous_commit = off");
    ok(&mut s, "rollback");
    ok(&mut s, "insert into t values (3)");
    assert_eq!(sync_commits(), c0 + 2, "after ROLLBACK: synchronous again");

    // A session-level SET that commits stays; RESET ALL ends it.
    ok(&mut s, "begin");
    ok(&mut s, "set synchronous_commit = off");
    ok(&mut s, "commit");
    ok(&mut s, "insert into t values (4)");
    assert_eq!(sync_commits(), c0 + 2, "committed SET stays");
    ok(&mut s, "reset all");
    ok(&mut s, "insert into t values (5)");
    assert_eq!(sync_commits(), c0 + 3, "RESET ALL");

    // The same for default_transaction_isolation.
    ok(&mut s, "begin");
    ok(
        &mut s,
        "set local default_transaction_isolation = 'repeatable read'",
    );
    ok(&mut s, "commit");
    ok(&mut s, "begin");
    assert_eq!(one(&mut s, "show transaction_isolation"), "read committed");
    ok(&mut s, "commit");
    ok(
        &mut s,
        "set default_transaction_isolation = 'repeatable read'",
    );
    ok(&mut s, "begin");
    assert_eq!(one(&mut s, "show transaction_isolation"), "repeatable read");
    ok(&mut s, "commit");
    ok(&mut s, "reset default_transaction_isolation");
    ok(&mut s, "begin");
    assert_eq!(one(&mut s, "show transaction_isolation"), "read committed");
    ok(&mut s, "commit");
}

/// `statement_timeout` is mirrored into the session once per change (not
/// read per statement): SET, RESET, SET LOCAL and a rolled-back SET must
/// all reach the next statement's deadline.
#[test]
fn statement_timeout_follows_set_reset_and_transactions() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let timed_out = |s: &mut Session| {
        let e = err(s, "SELECT pg_sleep(30)");
        assert_eq!(e.code, sqlstate::QUERY_CANCELED, "{e}");
        assert_eq!(e.message, "canceling statement due to statement timeout");
    };
    ok(&mut s, "SET statement_timeout = '50ms'");
    timed_out(&mut s);
    ok(&mut s, "RESET statement_timeout");
    ok(&mut s, "SELECT pg_sleep(0.1)");

    ok(&mut s, "BEGIN");
    ok(&mut s, "SET LOCAL statement_timeout = 50");
    timed_out(&mut s);
    ok(&mut s, "ROLLBACK");
    ok(&mut s, "SELECT pg_sleep(0.1)");

    ok(&mut s, "BEGIN");
    ok(&mut s, "SET statement_timeout = 50");
    ok(&mut s, "ROLLBACK");
    ok(&mut s, "SELECT pg_sleep(0.1)");

    ok(&mut s, "SET statement_timeout = 50");
    ok(&mut s, "BEGIN");
    ok(&mut s, "SET statement_timeout = 0");
    ok(&mut s, "COMMIT");
    ok(&mut s, "SELECT pg_sleep(0.1)");

    // From the startup packet's options.
    let mut s2 = Session::new(
        db.clone(),
        &[
            ("user".into(), "u".into()),
            ("options".into(), "-c statement_timeout=50".into()),
        ],
    )
    .unwrap();
    timed_out(&mut s2);
}

/// Every index entry of `table` points at a slot that is empty or holds a
/// version with that very key: no entry reaches a different row (after
/// pruning freed slots and inserts reused them).
fn assert_indexes_exact(db: &Node, table: &str) {
    let t = db.catalog().table(table).unwrap();
    let types = t.types();
    for ix in t.indexes.list() {
        let mut entries = Vec::new();
        ix.index.range(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            &mut |k, tid| {
                entries.push((k.to_vec(), tid));
                std::ops::ControlFlow::Continue(())
            },
        );
        for (k, tid) in entries {
            let row = db
                .heap()
                .fetch_any(t.rel, tid, |_, data| {
                    let mut row = Vec::new();
                    storage::rowcodec::decode_row_into(data, &types, &mut row, db.heap()).unwrap();
                    row
                })
                .unwrap();
            if let Some(row) = row {
                let mut kb = Vec::new();
                assert!(engine::indexing::index_key(&t, &ix, &row, &mut kb).unwrap());
                assert_eq!(kb, k, "index entry at {tid} reaches a row with another key");
            }
        }
    }
}

fn relation_pages(s: &mut Session, table: &str) -> i64 {
    one(s, &format!("select pg_relation_size('{table}')"))
        .parse::<i64>()
        .unwrap()
        / 8192
}

/// Table `b (id int primary key, v int, pad text)` with ten rows, v = 0:
/// what the pruning tests update over and over.
fn ten_row_table(s: &mut Session) {
    ok(s, "create table b (id int primary key, v int, pad text)");
    ok(
        s,
        "insert into b select g, 0, repeat('x', 60) from generate_series(1, 10) g",
    );
}

/// Opportunistic pruning: 5,000 updates of one row, with no other
/// transaction, leave the table a few pages; the row and every other row
/// read back through the index and through a scan.
#[test]
fn hot_row_updates_keep_the_table_small() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ten_row_table(&mut s);
    for _ in 0..5000 {
        ok(&mut s, "update b set v = v + 1 where id = 3");
    }
    let pages = relation_pages(&mut s, "b");
    assert!(pages <= 3, "{pages} pages after 5,000 updates");
    assert_eq!(one(&mut s, "select v from b where id = 3"), "5000");
    assert_eq!(one(&mut s, "select sum(v) from b"), "5000");
    assert_eq!(one(&mut s, "select count(*) from b"), "10");
    assert_indexes_exact(&db, "b");
}

/// Indexes on expressions and partial indexes under pruning: updates
/// that move rows in and out of the predicate and change the key leave
/// exactly one entry per live version, found by its computed key.
#[test]
fn expression_and_partial_index_entries_stay_exact() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ten_row_table(&mut s);
    ok(
        &mut s,
        "create unique index b_pad on b (lower(pad || id)) where v % 2 = 0",
    );
    ok(&mut s, "create index b_v on b ((v * 10))");
    for i in 0..2000 {
        ok(
            &mut s,
            &format!("update b set v = v + 1, pad = 'P{i}' where id = 3"),
        );
    }
    ok(&mut s, "update b set v = 1 where id = 4");
    ok(&mut s, "delete from b where id = 5");
    assert_indexes_exact(&db, "b");
    assert_eq!(
        one(
            &mut s,
            "select id from b where lower(pad || id) = 'p19993' and v % 2 = 0"
        ),
        "3"
    );
    assert_eq!(one(&mut s, "select id from b where v * 10 = 20000"), "3");
    assert_eq!(one(&mut s, "select count(*) from b where v * 10 = 0"), "7");
    assert_eq!(
        one(
            &mut s,
            "select count(*) from b where lower(pad || id) = repeat('x', 60) || '4' and v % 2 = 0"
        ),
        "0",
        "a row moved out of the predicate"
    );
}

/// An open REPEATABLE READ transaction keeps the versions its snapshot
/// sees: pruning stops at its horizon, the table grows, and the old
/// snapshot still reads its row (index and scan). Once it ends, pruning
/// resumes: more updates reuse the space instead of growing the table.
#[test]
fn old_snapshot_holds_pruning_back() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    let mut old = session(&db);
    ten_row_table(&mut s);
    ok(&mut old, "begin isolation level repeatable read");
    assert_eq!(one(&mut old, "select v from b where id = 2"), "0");
    for _ in 0..1000 {
        ok(&mut s, "update b set v = v + 1 where id = 2");
    }
    assert_eq!(
        one(&mut old, "select v from b where id = 2"),
        "0",
        "the old snapshot still reads its version through the index"
    );
    assert_eq!(one(&mut old, "select sum(v) from b"), "0", "and by a scan");
    let held = relation_pages(&mut s, "b");
    assert!(held >= 8, "1,000 versions kept: {held} pages");
    ok(&mut old, "commit");
    for _ in 0..3000 {
        ok(&mut s, "update b set v = v + 1 where id = 2");
    }
    let after = relation_pages(&mut s, "b");
    assert!(
        after <= held,
        "pruning resumed: {after} pages, {held} before"
    );
    assert_eq!(one(&mut s, "select v from b where id = 2"), "4000");
    assert_indexes_exact(&db, "b");
}

/// VACUUM frees the space of deleted rows and publishes it in the FSM: new
/// rows fill it instead of extending the table, and index lookups stay
/// exact — a deleted key finds nothing, a new key its own row — although
/// new rows took the deleted rows' line pointers.
#[test]
fn vacuum_then_insert_reuses_space_and_index_stays_exact() {
    let (_d, db) = open_db();
    let mut s = session(&db);
    ok(&mut s, "create table r (id int primary key, t text)");
    ok(
        &mut s,
        "insert into r select g, repeat('a', 100) from generate_series(1, 2000) g",
    );
    ok(&mut s, "delete from r where id % 2 = 0");
    assert_eq!(tag(&mut s, "vacuum r"), "VACUUM");
    let size = relation_pages(&mut s, "r");
    for i in 0..1000 {
        ok(
            &mut s,
            &format!("insert into r values ({}, repeat('b', 100))", 10_001 + i),
        );
    }
    assert_eq!(
        relation_pages(&mut s, "r"),
        size,
        "1,000 new rows fit where 1,000 were deleted"
    );
    assert_indexes_exact(&db, "r");
    for id in (1..=2000).chain(10_001..=11_000) {
        let want = if id <= 2000 && id % 2 == 0 { 0 } else { 1 };
        let r = rows(&mut s, &format!("select id, t from r where id = {id}"));
        assert_eq!(r.len(), want, "lookup of {id}: {r:?}");
        if let Some(row) = r.first() {
            assert_eq!(row[0], id.to_string());
            assert_eq!(row[1].as_bytes()[0], if id > 2000 { b'b' } else { b'a' });
        }
    }
    assert_eq!(one(&mut s, "select count(*) from r"), "2000");
}

/// A prepared transaction holds the horizon like a running one (its xid
/// stays in the procarray on a dummy proc): while it waits, updates by
/// others are not pruned and the row it deleted stays for it; once it
/// commits, pruning resumes and the deleted row is gone for good.
#[test]
fn prepared_transaction_holds_the_horizon() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config::new(dir.path());
    cfg.set("shared_buffers", "2MB").unwrap();
    cfg.set("max_prepared_transactions", "2").unwrap();
    let db = Node::open(cfg, Role::Primary).unwrap();
    let mut s = session(&db);
    let mut p = session(&db);
    ten_row_table(&mut s);
    ok(&mut p, "begin");
    ok(&mut p, "delete from b where id = 9");
    ok(&mut p, "prepare transaction 'holds'");
    drop(p);
    for _ in 0..1000 {
        ok(&mut s, "update b set v = v + 1 where id = 2");
    }
    let held = relation_pages(&mut s, "b");
    assert!(
        held >= 8,
        "nothing pruned behind the prepared xid: {held} pages"
    );
    assert_eq!(one(&mut s, "select count(*) from b"), "10");
    ok(&mut s, "commit prepared 'holds'");
    for _ in 0..3000 {
        ok(&mut s, "update b set v = v + 1 where id = 2");
    }
    assert!(relation_pages(&mut s, "b") <= held, "pruning resumed");
    assert_eq!(one(&mut s, "select count(*) from b"), "9");
    assert_eq!(one(&mut s, "select v from b where id = 2"), "4000");
    assert_indexes_exact(&db, "b");
}
