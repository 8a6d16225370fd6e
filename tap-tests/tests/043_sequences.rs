//! Sequences across failures (`engine::sequence`): nextval is WAL-logged
//! ahead of use, so neither a SIGKILL of the primary nor a promotion of its
//! standby ever hands out a value twice; nextval is not rolled back; a
//! sequence whose CREATE rolls back (or was running at a crash) is gone on
//! both nodes; serial columns number rows on the new primary after a
//! failover without colliding with the old primary's rows.
//!
//! * `values_survive_crash_without_reuse`
//! * `promotion_never_reuses_a_value`
//! * `sequence_ddl_is_transactional_and_replayed`
//! * `alter_sequence_survives_crash_and_promotion`: ALTER SEQUENCE's new
//!   definition and RESTART counter are logged, so neither a crash nor a
//!   promotion goes back to the old counter or the old increment.
//! * `alter_sequence_is_transactional`: an uncommitted ALTER SEQUENCE is
//!   invisible to other sessions and to the standby, holds off their
//!   nextval until it ends, and is undone by ROLLBACK, ROLLBACK TO and a
//!   crash, with the counter before it when it replaced the counter.

use tap_tests::Node;

fn pair() -> (Node, Node) {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE SEQUENCE s; CREATE TABLE t (id serial PRIMARY KEY, v int)");
    let standby = Node::standby_of(&primary, "standby");
    (primary, standby)
}

fn nextval(node: &Node, seq: &str) -> i64 {
    node.safe_sql(&format!("SELECT nextval('{seq}')"))
        .parse()
        .expect("nextval returns a number")
}

#[test]
fn values_survive_crash_without_reuse() {
    let (primary, _standby) = pair();
    // 1. Values handed out, some in transactions that roll back.
    let mut seen = Vec::new();
    for i in 0..50 {
        if i % 7 == 0 {
            seen.push(
                primary
                    .safe_sql("BEGIN; SELECT nextval('s'); ROLLBACK")
                    .parse::<i64>()
                    .unwrap_or(0),
            );
        }
        seen.push(nextval(&primary, "s"));
    }
    let max = *seen.iter().max().unwrap_or(&0);
    // 2. SIGKILL: the next value lies past every one handed out.
    primary.kill9();
    primary.start();
    let after = nextval(&primary, "s");
    assert!(after > max, "after crash: {after} > {max}");
    // 3. currval is per session: a new session has none.
    match primary.sql("SELECT currval('s')") {
        Ok(out) => panic!("currval in a new session returned {out}"),
        Err(e) => assert_eq!(e.code(), "55000", "{e}"),
    }
    // 4. A clean restart keeps going too.
    primary.restart();
    assert!(nextval(&primary, "s") > after, "after restart");
}

#[test]
fn promotion_never_reuses_a_value() {
    let (primary, standby) = pair();
    primary.safe_sql("INSERT INTO t (v) SELECT g FROM generate_series(1, 40) g");
    let mut max = 0;
    for _ in 0..45 {
        max = max.max(nextval(&primary, "s"));
    }
    primary.wait_for_replay(&standby);
    // The standby serves reads, not nextval.
    match standby.sql("SELECT nextval('s')") {
        Ok(out) => panic!("nextval on a standby returned {out}"),
        Err(e) => assert_eq!(e.code(), "25006", "{e}"),
    }
    primary.kill9();
    standby.promote();
    let after = nextval(&standby, "s");
    assert!(after > max, "after promotion: {after} > {max}");
    // The serial column numbers new rows past the old primary's.
    standby.safe_sql("INSERT INTO t (v) VALUES (41), (42)");
    assert_eq!(standby.safe_sql("SELECT count(DISTINCT id) FROM t"), "42");
}

#[test]
fn sequence_ddl_is_transactional_and_replayed() {
    let (primary, standby) = pair();
    primary.safe_sql("BEGIN; CREATE SEQUENCE gone; SELECT nextval('gone'); ROLLBACK");
    primary.safe_sql("BEGIN; DROP SEQUENCE s; ROLLBACK");
    primary.safe_sql("CREATE SEQUENCE down INCREMENT BY -5 MAXVALUE 100 START WITH 100");
    assert_eq!(nextval(&primary, "down"), 100);
    assert_eq!(nextval(&primary, "down"), 95);
    primary.wait_for_replay(&standby);
    for node in [&primary, &standby] {
        match node.sql("SELECT currval('gone')") {
            Ok(out) => panic!("{}: rolled-back sequence answered {out}", node.name()),
            Err(e) => assert_eq!(e.code(), "42P01", "{}: {e}", node.name()),
        }
    }
    assert_eq!(nextval(&primary, "s"), 1, "DROP rolled back: s kept");
    // A sequence created by a transaction running at a crash is gone.
    let sess = primary.background_session();
    sess.query_safe("BEGIN");
    sess.query_safe("CREATE SEQUENCE orphan");
    primary.safe_sql("SELECT nextval('s')");
    primary.wait_for_replay(&standby);
    primary.kill9();
    drop(sess);
    primary.start();
    primary.safe_sql("CREATE SEQUENCE orphan START 7");
    assert_eq!(nextval(&primary, "orphan"), 7);
    // DROP TABLE takes its serial sequence along, on both nodes.
    primary.safe_sql("DROP TABLE t");
    primary.wait_for_replay(&standby);
    primary.safe_sql("CREATE SEQUENCE t_id_seq");
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql("SELECT count(*) FROM (SELECT 1) x"), "1");
}

#[test]
fn alter_sequence_survives_crash_and_promotion() {
    let (primary, standby) = pair();
    for _ in 0..40 {
        nextval(&primary, "s");
    }
    // 1. RESTART and a new increment: the next values follow them.
    primary.safe_sql("ALTER SEQUENCE s RESTART WITH 1000 INCREMENT BY 10 MAXVALUE 100000");
    let mut max = 0;
    for i in 0..5 {
        let v = nextval(&primary, "s");
        assert_eq!(v, 1000 + 10 * i, "value {i} after RESTART");
        max = v;
    }
    // 2. SIGKILL: the counter continues past the restarted values, by 10.
    primary.kill9();
    primary.start();
    let after = nextval(&primary, "s");
    assert!(after > max, "after crash: {after} > {max}");
    assert_eq!((after - 1000) % 10, 0, "increment kept across the crash");
    max = after;
    // 3. RENAME is replayed; the standby shows the new definition.
    primary.safe_sql("ALTER SEQUENCE s RENAME TO s2");
    for _ in 0..3 {
        max = max.max(nextval(&primary, "s2"));
    }
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql(
            "SELECT increment_by || ' ' || max_value FROM pg_sequences WHERE sequencename = 's2'"
        ),
        "10 100000",
        "standby sees the altered definition"
    );
    // 4. Promotion: the new primary hands out values past the old one's.
    primary.kill9();
    standby.promote();
    let promoted = nextval(&standby, "s2");
    assert!(promoted > max, "after promotion: {promoted} > {max}");
    // 5. A sequence created and renamed by a transaction that rolls back
    //    is gone under both names.
    standby.safe_sql("BEGIN; CREATE SEQUENCE tmp; ALTER SEQUENCE tmp RENAME TO tmp2; ROLLBACK");
    for name in ["tmp", "tmp2"] {
        match standby.sql(&format!("SELECT nextval('{name}')")) {
            Ok(out) => panic!("rolled-back sequence {name} answered {out}"),
            Err(e) => assert_eq!(e.code(), "42P01", "{name}: {e}"),
        }
    }
}

#[test]
fn alter_sequence_is_transactional() {
    let (primary, standby) = pair();
    for _ in 0..3 {
        nextval(&primary, "s");
    }
    let def =
        "SELECT seqincrement || ' ' || seqmax FROM pg_sequence WHERE seqrelid = 's'::regclass";
    // 1. Uncommitted: others (the standby too) see the old definition, and
    //    another session's nextval waits for the ALTER's end.
    let alter = primary.background_session();
    alter.query_safe("BEGIN");
    alter.query_safe("ALTER SEQUENCE s RESTART WITH 500 INCREMENT BY 5 MAXVALUE 9000");
    assert_eq!(alter.query_safe("SELECT nextval('s')"), "500");
    assert_eq!(alter.query_safe(def), "5 9000");
    assert_eq!(
        primary.safe_sql(def),
        "1 9223372036854775807",
        "others see the committed def"
    );
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql(def),
        "1 9223372036854775807",
        "so does the standby"
    );
    let other = primary.background_session();
    let waiting = other.send("SELECT nextval('s')");
    assert!(
        primary.poll_query_until(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
            "1"
        ),
        "nextval waits for the ALTER"
    );
    // 2. ROLLBACK: the old definition and counter are back, everywhere.
    alter.query_safe("ROLLBACK");
    assert_eq!(
        waiting.wait_ok(),
        "4",
        "the waiter continues the old counter"
    );
    assert_eq!(nextval(&primary, "s"), 5);
    primary.wait_for_replay(&standby);
    assert_eq!(standby.safe_sql(def), "1 9223372036854775807");
    // 3. ROLLBACK TO a savepoint undoes only the ALTER after it; a RENAME
    //    keeps the counter running; COMMIT publishes the rest.
    primary.safe_sql(
        "BEGIN; ALTER SEQUENCE s INCREMENT BY 10; SAVEPOINT a; \
         ALTER SEQUENCE s INCREMENT BY 100; ROLLBACK TO a; \
         ALTER SEQUENCE s RENAME TO s_renamed; SELECT nextval('s_renamed'); COMMIT",
    );
    assert_eq!(nextval(&primary, "s_renamed"), 25);
    primary.wait_for_replay(&standby);
    assert_eq!(
        standby.safe_sql("SELECT increment_by FROM pg_sequences WHERE sequencename = 's_renamed'"),
        "10"
    );
    // 4. A crash with the ALTER uncommitted: start-up puts the committed
    //    definition and counter back; no value is handed out twice.
    let doomed = primary.background_session();
    doomed.query_safe("BEGIN");
    doomed.query_safe("ALTER SEQUENCE s_renamed RESTART WITH 1 INCREMENT BY 1");
    doomed.query_safe("ALTER SEQUENCE s_renamed RENAME TO x");
    assert_eq!(doomed.query_safe("SELECT nextval('x')"), "1");
    primary.kill9();
    drop(doomed);
    primary.start();
    let after = nextval(&primary, "s_renamed");
    assert!(after > 25, "after the crash: {after} > 25");
    assert_eq!((after - 25) % 10, 0, "increment 10 kept: {after}");
}
