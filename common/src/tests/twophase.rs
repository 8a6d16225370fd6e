//! Two-phase commit through SQL sessions as the protocol loop drives
//! them: PREPARE, COMMIT / ROLLBACK PREPARED from other sessions,
//! pg_prepared_xacts, restarts and crashes with prepared transactions.

use std::sync::Arc;

use crate::node::Node;
use crate::tests::sql::{err, ok, q, tag};
use engine::Role;
use pgtypes::config::Config;
use pgtypes::testutil::wait_until;
use pgtypes::txstatus::TxStatus;
use pgtypes::ProcNumber;
use sql::session::Session;

#[track_caller]
fn one(s: &mut Session, sql: &str) -> String {
    let r = ok(s, sql).rows;
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0].join("|")
}

fn open(dir: &std::path::Path) -> Arc<Node> {
    let mut cfg = Config::new(dir);
    cfg.set("shared_buffers", "2MB").unwrap();
    cfg.set("max_prepared_transactions", "2").unwrap();
    // fsync off: restarts here drop and reopen a Node in the same
    // process; the page cache is never lost.
    cfg.set("fsync", "off").unwrap();
    Node::open(cfg, Role::Primary).unwrap()
}

fn session(db: &Arc<Node>, user: &str) -> Session {
    Session::new(
        db.clone(),
        &[
            ("user".into(), user.into()),
            ("database".into(), "shop".into()),
        ],
    )
    .unwrap()
}

fn someone_waits(db: &Node) -> bool {
    (0..db.procarray().max_procs() as u32)
        .any(|p| db.procarray().lmgr().waiting_for(ProcNumber(p)).is_some())
}

/// Column b of t in key order, comma-separated.
fn bs(s: &mut Session) -> String {
    let r = ok(s, "select b from t order by a").rows;
    r.iter()
        .map(|r| r[0].as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn completions(s: &mut Session) -> i64 {
    one(
        s,
        "select xact_completion_count from hotpair_stat_snapshots",
    )
    .parse()
    .unwrap()
}

#[test]
fn tags_messages_and_view() {
    let d = tempfile::tempdir().unwrap();
    let db = open(d.path());
    let mut a = session(&db, "alice");
    let mut b = session(&db, "bob");
    ok(&mut a, "create table t (a int primary key, b int)");
    ok(&mut a, "insert into t values (1, 1), (2, 2)");

    // Outside a block: a warning and ROLLBACK.
    let r = ok(&mut a, "prepare transaction 'x'");
    assert_eq!(r.tags, ["ROLLBACK"]);
    assert_eq!(
        (r.notices[0].code, r.notices[0].message.as_str()),
        ("25P01", "there is no transaction in progress")
    );

    let c0 = completions(&mut b);
    ok(&mut a, "begin");
    ok(&mut a, "insert into t values (3, 3)");
    ok(&mut a, "update t set b = 20 where a = 2");
    let a_xid = one(&mut a, "select pg_current_xact_id()");
    assert_eq!(
        tag(&mut a, "prepare transaction 'x'"),
        "PREPARE TRANSACTION"
    );
    assert_eq!(a.tx_status(), TxStatus::Idle);
    assert_eq!(completions(&mut b), c0, "PREPARE bumps nothing");
    assert_eq!(one(&mut b, "select count(*) from t"), "2");
    assert_eq!(one(&mut b, "select b from t where a = 2"), "2");
    assert_eq!(
        one(&mut a, "select count(*) from t"),
        "2",
        "not even to its session"
    );
    assert_eq!(
        one(
            &mut b,
            "select gid, owner, database, prepared <= now() from pg_prepared_xacts"
        ),
        "x|alice|shop|t"
    );
    let cols = ok(&mut b, "select * from pg_prepared_xacts").rows;
    assert_eq!(cols[0].len(), 5);
    // `transaction` is PostgreSQL's xid (32 bits), equal to the xid
    // pg_current_xact_id() showed inside the transaction.
    assert_eq!(
        one(
            &mut b,
            "select pg_typeof(transaction)::text from pg_prepared_xacts"
        ),
        "xid"
    );
    assert_eq!(
        one(
            &mut b,
            &format!("select count(*) from pg_prepared_xacts where transaction = '{a_xid}'::xid")
        ),
        "1"
    );
    // Like PostgreSQL's xid: equality only.
    let e = err(
        &mut b,
        "select * from pg_prepared_xacts order by transaction",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "42883",
            "could not identify an ordering operator for type xid"
        )
    );
    let e = err(
        &mut b,
        "select 1 from pg_prepared_xacts where transaction < '5'::xid",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        ("42883", "operator does not exist: xid < xid")
    );

    // Duplicate gid: 42710, rolled back, the session is idle.
    ok(&mut b, "begin");
    ok(&mut b, "insert into t values (4, 4)");
    let e = err(&mut b, "prepare transaction 'x'");
    assert_eq!(
        (e.code, e.message.as_str()),
        ("42710", "transaction identifier \"x\" is already in use")
    );
    assert_eq!(b.tx_status(), TxStatus::Idle);
    assert_eq!(one(&mut b, "select count(*) from t where a = 4"), "0");

    // A failed block: PREPARE rolls back.
    ok(&mut b, "begin");
    err(&mut b, "select 1/0");
    assert_eq!(tag(&mut b, "prepare transaction 'y'"), "ROLLBACK");
    assert_eq!(b.tx_status(), TxStatus::Idle);
    // COMMIT PREPARED is not a transaction exit: 25P02 in a failed block.
    ok(&mut b, "begin");
    err(&mut b, "select 1/0");
    assert_eq!(err(&mut b, "commit prepared 'x'").code, "25P02");
    ok(&mut b, "rollback");

    let e = err(&mut b, "commit prepared 'nope'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "42704",
            "prepared transaction with identifier \"nope\" does not exist"
        )
    );
    assert_eq!(err(&mut b, "rollback prepared 'nope'").code, "42704");
    ok(&mut b, "begin");
    let e = err(&mut b, "commit prepared 'x'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "25001",
            "COMMIT PREPARED cannot run inside a transaction block"
        )
    );
    ok(&mut b, "rollback");
    let e = err(&mut b, "select 1; rollback prepared 'x'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "25001",
            "ROLLBACK PREPARED cannot run inside a transaction block"
        )
    );

    // Too many (max 2): 53200.
    ok(&mut b, "begin");
    assert_eq!(
        tag(&mut b, "prepare transaction 'ro'"),
        "PREPARE TRANSACTION"
    );
    ok(&mut b, "begin");
    let e = err(&mut b, "prepare transaction 'ro2'");
    assert_eq!(e.code, "53200");
    assert_eq!(one(&mut b, "select count(*) from pg_prepared_xacts"), "2");
    assert_eq!(tag(&mut b, "commit prepared 'ro'"), "COMMIT PREPARED");

    // A concurrent UPDATE of the prepared row waits until COMMIT
    // PREPARED, then sees the committed row.
    let mut c = session(&db, "carol");
    let c1 = completions(&mut b);
    std::thread::scope(|sc| {
        let t = sc.spawn(|| q(&mut c, "update t set b = b + 10 where a = 2").map(|r| r.tags));
        wait_until("the UPDATE waits", || someone_waits(&db));
        assert!(!t.is_finished());
        assert_eq!(tag(&mut b, "commit prepared 'x'"), "COMMIT PREPARED");
        assert_eq!(t.join().unwrap().unwrap(), ["UPDATE 1"]);
    });
    // One completion for COMMIT PREPARED, one for the UPDATE.
    assert_eq!(completions(&mut b), c1 + 2);
    assert_eq!(one(&mut b, "select b from t where a = 2"), "30");
    assert_eq!(one(&mut b, "select b from t where a = 3"), "3");
    assert_eq!(one(&mut b, "select count(*) from pg_prepared_xacts"), "0");

    // ROLLBACK PREPARED discards; the key is free again.
    ok(&mut a, "begin");
    ok(&mut a, "insert into t values (5, 5)");
    ok(&mut a, "update t set b = 100 where a = 1");
    assert_eq!(
        tag(&mut a, "prepare transaction 'r'"),
        "PREPARE TRANSACTION"
    );
    let c2 = completions(&mut b);
    assert_eq!(tag(&mut b, "rollback prepared 'r'"), "ROLLBACK PREPARED");
    assert_eq!(completions(&mut b), c2 + 1);
    assert_eq!(one(&mut b, "select count(*) from t where a = 5"), "0");
    assert_eq!(one(&mut b, "select b from t where a = 1"), "1");
    ok(&mut b, "insert into t values (5, 50)");

    // Inside a multi-statement Query without BEGIN: warning, prepared.
    let r = ok(
        &mut a,
        "insert into t values (9, 9); prepare transaction 'w'; select 1",
    );
    assert_eq!(r.tags, ["INSERT 0 1", "PREPARE TRANSACTION", "SELECT 1"]);
    assert_eq!(r.notices[0].code, "25P01");
    assert_eq!(one(&mut b, "select gid from pg_prepared_xacts"), "w");
    assert_eq!(tag(&mut b, "commit prepared 'w'"), "COMMIT PREPARED");
    assert_eq!(one(&mut b, "select b from t where a = 9"), "9");
}

#[test]
fn survives_restart_still_locked() {
    let d = tempfile::tempdir().unwrap();
    let db = open(d.path());
    let mut a = session(&db, "alice");
    ok(&mut a, "create table t (a int primary key, b int)");
    ok(&mut a, "insert into t values (1, 1), (2, 2)");
    ok(&mut a, "begin");
    ok(&mut a, "insert into t values (3, 3)");
    ok(&mut a, "update t set b = 10 where a = 1");
    assert_eq!(
        tag(&mut a, "prepare transaction 'k'"),
        "PREPARE TRANSACTION"
    );
    ok(&mut a, "begin");
    ok(&mut a, "delete from t where a = 2");
    assert_eq!(
        tag(&mut a, "prepare transaction 'gone'"),
        "PREPARE TRANSACTION"
    );
    let xid = one(
        &mut a,
        "select transaction from pg_prepared_xacts where gid = 'k'",
    );
    drop(a);
    let cfg = (*db.config()).clone();
    db.checkpoint().unwrap();
    drop(db);

    let db = Node::open(cfg, Role::Primary).unwrap();
    let mut b = session(&db, "bob");
    assert_eq!(
        one(
            &mut b,
            "select transaction, owner, database from pg_prepared_xacts where gid = 'k'"
        ),
        format!("{xid}|alice|shop")
    );
    assert_eq!(one(&mut b, "select count(*) from pg_prepared_xacts"), "2");
    // Still invisible, still locked.
    assert_eq!(one(&mut b, "select count(*) from t"), "2");
    assert_eq!(one(&mut b, "select b from t where a = 1"), "1");
    let mut c = session(&db, "carol");
    std::thread::scope(|sc| {
        let t = sc.spawn(|| q(&mut c, "update t set b = b + 1 where a = 1").map(|r| r.tags));
        wait_until("the UPDATE waits", || someone_waits(&db));
        assert!(!t.is_finished());
        assert_eq!(tag(&mut b, "commit prepared 'k'"), "COMMIT PREPARED");
        assert_eq!(t.join().unwrap().unwrap(), ["UPDATE 1"]);
    });
    assert_eq!(one(&mut b, "select b from t where a = 1"), "11");
    assert_eq!(one(&mut b, "select count(*) from t where a = 3"), "1");
    assert_eq!(tag(&mut b, "rollback prepared 'gone'"), "ROLLBACK PREPARED");
    assert_eq!(one(&mut b, "select count(*) from t where a = 2"), "1");
    assert_eq!(one(&mut b, "select count(*) from pg_prepared_xacts"), "0");
    assert!(
        std::fs::read_dir(d.path().join(engine::twophase::STATE_DIR))
            .unwrap()
            .next()
            .is_none(),
        "state files removed"
    );
}

/// A crash (the database dropped without a shutdown checkpoint): a
/// PREPARE before the last checkpoint comes back from its state file,
/// one after it from WAL, and a COMMIT PREPARED after the checkpoint is
/// replayed (no resurrection).
#[test]
fn crash_recovery_from_wal_and_state_files() {
    let d = tempfile::tempdir().unwrap();
    let db = open(d.path());
    let mut a = session(&db, "alice");
    ok(&mut a, "create table t (a int primary key, b int)");
    ok(&mut a, "insert into t values (1, 1), (2, 2), (3, 3)");
    ok(
        &mut a,
        "begin; update t set b = 10 where a = 1; prepare transaction 'before'",
    );
    ok(
        &mut a,
        "begin; update t set b = 20 where a = 2; prepare transaction 'done'",
    );
    ok(&mut a, "checkpoint");
    ok(&mut a, "commit prepared 'done'");
    ok(
        &mut a,
        "begin; update t set b = 30 where a = 3; prepare transaction 'after'",
    );
    drop(a);
    drop(db);

    let db = open(d.path());
    let mut b = session(&db, "bob");
    let gids = ok(
        &mut b,
        "select gid, owner from pg_prepared_xacts order by gid",
    )
    .rows;
    assert_eq!(
        gids,
        vec![vec!["after", "alice"], vec!["before", "alice"]],
        "both prepared transactions recovered, the finished one not"
    );
    assert_eq!(bs(&mut b), "1,20,3");
    let mut c = session(&db, "carol");
    std::thread::scope(|sc| {
        let t = sc.spawn(|| q(&mut c, "update t set b = b + 1 where a = 3").map(|r| r.tags));
        wait_until("the UPDATE waits", || someone_waits(&db));
        assert!(!t.is_finished());
        assert_eq!(tag(&mut b, "commit prepared 'after'"), "COMMIT PREPARED");
        assert_eq!(t.join().unwrap().unwrap(), ["UPDATE 1"]);
    });
    assert_eq!(
        tag(&mut b, "rollback prepared 'before'"),
        "ROLLBACK PREPARED"
    );
    drop(b);
    drop(c);
    drop(db);

    let db = open(d.path());
    let mut b = session(&db, "bob");
    assert_eq!(one(&mut b, "select count(*) from pg_prepared_xacts"), "0");
    assert_eq!(bs(&mut b), "1,20,31");
}
