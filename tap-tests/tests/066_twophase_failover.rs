//! Prepared transactions across restarts and failovers, ported from
//! PostgreSQL's src/test/recovery/t/009_twophase.pl: two nodes, london and
//! paris, swap the primary's role back and forth (`synchronous_commit =
//! remote_apply` to the other); prepared transactions survive a clean
//! restart, a crash, the standby's restarts while the primary is down,
//! and promotion, and are committed or rolled back on whichever node is
//! the primary then. The old primary, stopped cleanly, rejoins as a
//! standby of the promoted node from its own data directory — no base
//! backup, no rewind: its walsender sent the shutdown checkpoint to the
//! standby before it stopped.
//!
//! What goes wrong without this: a prepared transaction that a
//! transaction manager was promised is lost (or resurrected) by a
//! failover, or the old primary cannot come back without a full copy.

use tap_tests::Node;

/// Makes `primary`'s commits wait until `standby` applied them.
fn sync_to(primary: &Node) {
    primary.safe_sql("ALTER SYSTEM SET synchronous_standby_names = '*'");
    primary.safe_sql("ALTER SYSTEM SET synchronous_commit = 'remote_apply'");
    primary.safe_sql("SELECT pg_reload_conf()");
}

/// `standby` (stopped cleanly or never started as one) joins `primary`.
fn rejoin(standby: &Node, primary: &Node) {
    standby.enable_streaming(primary);
    standby.set_standby_mode();
    standby.start();
    primary.wait_for_replay(standby);
    assert_eq!(standby.safe_sql("SELECT pg_is_in_recovery()"), "t");
}

/// Runs `sql` on `node` without waiting for a synchronous standby (a
/// node just promoted still has `synchronous_standby_names` from its last
/// time as the primary, and its standby is not back yet).
fn local(node: &Node, sql: &str) {
    let s = node.background_session();
    s.query_safe("SET synchronous_commit = local");
    s.query_safe(sql);
}

const PREPARED: &str = "SELECT count(*) FROM pg_prepared_xacts";

#[test]
fn prepared_transactions_across_failovers() {
    let london = Node::new("london");
    london.init(true);
    london.append_conf("max_prepared_transactions = 10");
    london.start();
    let paris = Node::standby_of(&london, "paris");
    paris.stop("fast");
    paris.append_conf("max_prepared_transactions = 10");
    paris.start();
    sync_to(&london);
    london.safe_sql("CREATE TABLE t_009_tbl (id int, msg text)");
    london.wait_for_replay(&paris);

    // Commit and rollback prepared after a clean restart.
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (1, 'issued to london'); SAVEPOINT s1; \
         INSERT INTO t_009_tbl VALUES (2, 'issued to london'); PREPARE TRANSACTION 'xact_009_1'",
    );
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (3, 'issued to london'); SAVEPOINT s1; \
         INSERT INTO t_009_tbl VALUES (4, 'issued to london'); PREPARE TRANSACTION 'xact_009_2'",
    );
    london.stop("fast");
    london.start();
    london.safe_sql("COMMIT PREPARED 'xact_009_1'");
    london.safe_sql("ROLLBACK PREPARED 'xact_009_2'");

    // The same after a crash.
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (5, 'issued to london'); PREPARE TRANSACTION 'xact_009_3'",
    );
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (6, 'issued to london'); PREPARE TRANSACTION 'xact_009_4'",
    );
    london.kill9();
    london.start();
    london.safe_sql("COMMIT PREPARED 'xact_009_3'");
    london.safe_sql("ROLLBACK PREPARED 'xact_009_4'");

    // Replay of several transactions with the same GID, after a crash.
    for id in [7, 8] {
        london.safe_sql(&format!(
            "BEGIN; INSERT INTO t_009_tbl VALUES ({id}, 'issued to london'); PREPARE TRANSACTION 'xact_009_5'"
        ));
        london.safe_sql("COMMIT PREPARED 'xact_009_5'");
    }
    london.kill9();
    london.start();
    assert_eq!(london.safe_sql(PREPARED), "0", "replayed GIDs finished");
    london.wait_for_replay(&paris);
    assert_eq!(
        paris.safe_sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM t_009_tbl"),
        "1,2,5,7,8",
        "the standby saw the same outcomes"
    );

    // A prepared transaction committed on the promoted standby; the old
    // primary, stopped cleanly, rejoins from its own directory.
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (9, 'issued to london'); PREPARE TRANSACTION 'xact_009_6'",
    );
    assert_eq!(paris.safe_sql(PREPARED), "1", "the standby shows it");
    london.stop("fast");
    paris.promote();
    assert_eq!(paris.safe_sql(PREPARED), "1", "survived the promotion");
    local(&paris, "COMMIT PREPARED 'xact_009_6'");
    sync_to(&paris);
    rejoin(&london, &paris);
    assert_eq!(london.timeline(), 2, "london follows paris's timeline");

    // Prepared on paris; the standby (london) restarted cleanly while the
    // primary is down; london promoted commits it.
    paris.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (10, 'issued to paris'); PREPARE TRANSACTION 'xact_009_7'",
    );
    paris.stop("fast");
    london.restart();
    london.promote();
    assert_eq!(london.safe_sql(PREPARED), "1");
    local(&london, "COMMIT PREPARED 'xact_009_7'");
    sync_to(&london);
    rejoin(&paris, &london);

    // Prepared on london; paris (the standby) killed and restarted while
    // the primary is down; paris promoted rolls it back.
    london.safe_sql(
        "BEGIN; INSERT INTO t_009_tbl VALUES (11, 'issued to london'); PREPARE TRANSACTION 'xact_009_8'",
    );
    london.stop("fast");
    paris.kill9();
    paris.start();
    paris.promote();
    assert_eq!(paris.safe_sql(PREPARED), "1");
    local(&paris, "ROLLBACK PREPARED 'xact_009_8'");
    sync_to(&paris);
    rejoin(&london, &paris);
    assert_eq!(london.timeline(), 4, "three promotions: timeline 4");

    // Both nodes agree on every outcome.
    let expected = "1|issued to london\n2|issued to london\n5|issued to london\n7|issued to london\n8|issued to london\n9|issued to london\n10|issued to paris";
    let q = "SELECT id, msg FROM t_009_tbl ORDER BY id";
    assert_eq!(paris.safe_sql(q), expected);
    assert_eq!(london.safe_sql(q), expected);
    assert_eq!(london.safe_sql(PREPARED), "0");
}
