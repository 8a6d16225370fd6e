//! Promotion of a hot standby (replication.md, "Promotion"): the primary
//! dies, the standby becomes a primary with everything committed, without
//! what the old primary left running, with its prepared transaction still
//! prepared — and sessions that were open on the standby carry on as
//! sessions of a primary. Then restarts (fast and SIGKILL) of the promoted
//! node, the `promote` trigger file, pg_promote()'s variants and errors,
//! and a new standby made from the promoted node.

use tap_tests::{line, raw, Node};

/// A primary with `max_prepared_transactions` and a started standby.
fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 10");
    primary.start();
    primary.safe_sql("CREATE TABLE t (id int PRIMARY KEY, v text)");
    // As in PostgreSQL, the standby needs max_prepared_transactions at
    // least the primary's to promote with prepared transactions; the
    // first start takes the base backup, the setting applies from the
    // restart.
    let standby = Node::standby_of(&primary, "standby");
    standby.stop("fast");
    standby.append_conf("max_prepared_transactions = 10");
    standby.start();
    (primary, standby)
}

const IDS: &str = "SELECT id FROM t ORDER BY id";

/// The expected output of [`IDS`].
fn ids(list: &[u32]) -> String {
    list.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`IDS`] in a psql session: the rows are the lines before "(N rows)".
fn psql_ids(ps: &mut tap_tests::PsqlSession, list: &[u32]) {
    let out = ps.query_until(&format!("{IDS};"), line(&format!("({} rows)", list.len())));
    assert!(out.contains(&format!("id\n{}\n(", ids(list))), "{out}");
}

#[test]
fn promote_after_primary_crash() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    primary.safe_sql("BEGIN; INSERT INTO t VALUES (100, 'prepared'); PREPARE TRANSACTION 'p1'");
    // A transaction the primary never finishes; a later commit flushes
    // (and so ships) its insert record.
    let open = primary.background_session();
    open.query_safe("BEGIN");
    open.query_safe("INSERT INTO t VALUES (200, 'open')");
    let open_xid: u64 = open
        .query_safe("SELECT txid_current()")
        .parse()
        .expect("xid");
    primary.safe_sql("INSERT INTO t VALUES (4, 'd')");
    primary.wait_for_replay(&standby);

    // Sessions that live through the promotion: native and psql.
    let s = standby.background_session();
    let mut ps = standby.psql_session();
    assert_eq!(s.query_safe("SELECT pg_is_in_recovery()"), "t");
    assert_eq!(s.query_safe(IDS), ids(&[1, 2, 3, 4]));
    psql_ids(&mut ps, &[1, 2, 3, 4]);
    assert_eq!(
        s.query_err("INSERT INTO t VALUES (9, 'x')").code(),
        "25006",
        "read-only before promotion"
    );

    // A transaction block begun during recovery stays read-only.
    let block = standby.background_session();
    block.query_safe("BEGIN");
    assert_eq!(block.query_safe("SHOW transaction_read_only"), "on");

    primary.kill9();
    drop(open);
    let offset = standby.log_position();
    assert_eq!(standby.safe_sql("SELECT pg_promote()"), "t");
    // The lines may reach the log file just after pg_promote() answers
    // (the last is written once the node is out of recovery): wait.
    for line in [
        "received promote request",
        "redo done at",
        "archive recovery complete",
        "database system is ready to accept connections",
    ] {
        standby.wait_for_log(line, offset);
    }
    // The new timeline's first checkpoint: in the background after a fast
    // promotion (the standby restarted, so its control file is a
    // restartpoint), before the switch otherwise.
    standby.wait_for_log("checkpoint starting:", offset);

    // The open sessions: a primary now, every committed row, not the open
    // transaction's, and writable.
    assert_eq!(s.query_safe("SELECT pg_is_in_recovery()"), "f");
    ps.query_until("SELECT pg_is_in_recovery();", line("f"));
    // As in PostgreSQL, the last replayed / received positions stay.
    assert_eq!(
        s.query_safe(
            "SELECT pg_last_wal_replay_lsn() IS NOT NULL AND pg_last_wal_receive_lsn() IS NOT NULL"
        ),
        "t"
    );
    assert_eq!(s.query_safe(IDS), ids(&[1, 2, 3, 4]));
    s.query_safe("INSERT INTO t VALUES (5, 'e')");
    psql_ids(&mut ps, &[1, 2, 3, 4, 5]);
    // The open transaction is aborted, not running: its key is free at
    // once (a running holder would make this wait; lock_timeout turns a
    // regression into an error instead of a hang).
    ps.query_until("SET lock_timeout = '10s';", line("SET"));
    ps.query_until("INSERT INTO t VALUES (200, 'reused');", line("INSERT 0 1"));
    // New xids continue after every xid the old primary used.
    let new_xid: u64 = s.query_safe("SELECT txid_current()").parse().expect("xid");
    assert!(new_xid > open_xid, "xid {new_xid} after {open_xid}");

    assert_eq!(
        block.query_err("INSERT INTO t VALUES (300, 'x')").code(),
        "25006"
    );
    block.query_safe("ROLLBACK");
    assert_eq!(block.query_safe("SHOW transaction_read_only"), "off");
    drop(block);

    // The prepared transaction survived as a prepared transaction.
    assert_eq!(standby.safe_sql("SELECT gid FROM pg_prepared_xacts"), "p1");
    assert_eq!(s.query_safe("SELECT count(*) FROM t WHERE id = 100"), "0");
    standby.safe_sql("COMMIT PREPARED 'p1'");
    assert_eq!(s.query_safe(IDS), ids(&[1, 2, 3, 4, 5, 100, 200]));

    // A new session: a primary's defaults.
    let n = standby.background_session();
    assert_eq!(n.query_safe("SHOW transaction_read_only"), "off");
    n.query_safe("INSERT INTO t VALUES (6, 'f')");
    drop((s, n));
    ps.quit();

    // pg_promote() again: not in recovery.
    let e = standby.sql("SELECT pg_promote()").expect_err("55000");
    assert_eq!(e.code(), "55000");
    assert!(e.to_string().contains("recovery is not in progress"), "{e}");

    // Restarts run it as a primary from its own data directory.
    assert!(!standby.data_dir().join("standby.signal").exists());
    let offset = standby.log_position();
    standby.restart();
    assert!(!standby.log_contains_after("entering standby mode", offset));
    assert!(!standby.log_contains_after("started streaming WAL", offset));
    assert_eq!(standby.safe_sql("SELECT pg_is_in_recovery()"), "f");
    assert_eq!(standby.safe_sql(IDS), ids(&[1, 2, 3, 4, 5, 6, 100, 200]));
    standby.safe_sql("INSERT INTO t VALUES (7, 'g')");
    standby.kill9();
    standby.start();
    assert_eq!(standby.safe_sql(IDS), ids(&[1, 2, 3, 4, 5, 6, 7, 100, 200]));
    standby.safe_sql("INSERT INTO t VALUES (8, 'h')");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "10");
}

/// The `in_hot_standby` ParameterStatus values received up to the next
/// ReadyForQuery.
fn hot_standby_reports(raw: &mut raw::RawConnection) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let m = raw.read_message().expect("read").expect("connection open");
        match m.tag {
            b'Z' => return seen,
            b'E' => panic!("error: {:?}", m.error_fields()),
            b'S' => {
                let mut parts = m.body.split(|&b| b == 0);
                if parts.next() == Some(b"in_hot_standby".as_slice()) {
                    let v = parts.next().unwrap_or_default();
                    seen.push(String::from_utf8_lossy(v).into_owned());
                }
            }
            _ => {}
        }
    }
}

/// `pg_ctl promote`'s way: the trigger file, with the primary still up.
/// Afterwards pg_promote() fails on both nodes (neither is in recovery),
/// and a SIGKILL of the promoted node loses nothing.
#[test]
fn promote_by_trigger_file() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t VALUES (1, 'a')");
    primary.wait_for_replay(&standby);
    // A walsender on a standby (cascading replication) answers too.
    let repl = |node: &Node| {
        let conn = format!(
            "host={} port={} user=postgres dbname=postgres replication=true",
            node.host(),
            node.port()
        );
        let args: Vec<String> = ["-XAtq", "-d", &conn, "-c", "IDENTIFY_SYSTEM"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        tap_tests::psql::run_psql(&args, "", None)
    };
    let out = repl(&standby);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.stdout.split('|').nth(1), Some("1"), "timeline 1");
    // A session open across the promotion is told in_hot_standby's change.
    let mut raw = standby.raw_connection();
    raw.send(&raw::startup(
        raw::PROTOCOL_3_0,
        &[("user", "postgres"), ("database", "postgres")],
    ));
    assert_eq!(hot_standby_reports(&mut raw), vec!["on".to_string()]);
    standby.promote();
    let out = repl(&standby);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.stdout.split('|').nth(1), Some("2"), "timeline 2");
    raw.send(&raw::query(b"SELECT 1"));
    assert_eq!(hot_standby_reports(&mut raw), vec!["off".to_string()]);
    raw.send(&raw::query(b"SELECT 1"));
    assert!(hot_standby_reports(&mut raw).is_empty(), "reported once");
    assert!(!standby.data_dir().join("promote").exists());
    assert!(!standby.data_dir().join("standby.signal").exists());
    assert!(!standby.data_dir().join("backup_label").exists());
    assert!(standby.data_dir().join("backup_label.old").exists());
    assert!(standby.log_contains("received promote request"));
    standby.safe_sql("INSERT INTO t VALUES (2, 'b')");
    assert_eq!(standby.safe_sql(IDS), ids(&[1, 2]));
    for node in [&primary, &standby] {
        let e = node.sql("SELECT pg_promote(true, 5)").expect_err("55000");
        assert_eq!(e.code(), "55000", "{}", node.name());
        assert_eq!(e.message, "recovery is not in progress");
        let (status, _, stderr) = node.psql("SELECT pg_promote()");
        assert_ne!(status, 0);
        assert!(
            stderr.contains(
                "HINT:  Recovery control functions can only be executed during recovery."
            ),
            "{stderr}"
        );
    }
    // A crash straight after promotion: crash recovery as a primary keeps
    // the promoted node's commit.
    drop(raw);
    standby.kill9();
    standby.start();
    assert_eq!(standby.safe_sql("SELECT pg_is_in_recovery()"), "f");
    assert_eq!(standby.safe_sql(IDS), ids(&[1, 2]));
}

/// pg_promote(false) returns at once; the promotion follows. A bad
/// wait_seconds is refused before anything is asked.
#[test]
fn pg_promote_without_waiting() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t VALUES (1, 'a')");
    primary.wait_for_replay(&standby);
    let e = standby
        .sql("SELECT pg_promote(true, 0)")
        .expect_err("22023");
    assert_eq!(e.code(), "22023");
    assert_eq!(standby.safe_sql("SELECT pg_is_in_recovery()"), "t");
    assert_eq!(standby.safe_sql("SELECT pg_promote(false)"), "t");
    assert!(standby.poll_query_until("SELECT pg_is_in_recovery()", "f"));
    standby.safe_sql("INSERT INTO t VALUES (2, 'b')");
    assert_eq!(standby.safe_sql(IDS), ids(&[1, 2]));
}

/// The promoted node serves a new standby: base backup, streaming, rows
/// written after the backup arrive.
#[test]
fn new_standby_of_promoted_node() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t VALUES (1, 'a')");
    primary.wait_for_replay(&standby);
    primary.stop("fast");
    assert_eq!(standby.safe_sql("SELECT pg_promote(true, 60)"), "t");
    standby.safe_sql("INSERT INTO t VALUES (2, 'b')");
    let second = Node::standby_of(&standby, "second");
    standby.safe_sql("INSERT INTO t VALUES (3, 'c')");
    standby.wait_for_replay(&second);
    assert_eq!(second.safe_sql(IDS), ids(&[1, 2, 3]));
    assert_eq!(second.safe_sql("SELECT pg_is_in_recovery()"), "t");
}
