//! Subtransactions across replay and promotion, ported from PostgreSQL's
//! src/test/recovery/t/012_subtransactions.pl (whose PL/pgSQL function
//! `hs_subxids` becomes SAVEPOINTs written out): transactions with more
//! subtransactions than a proc caches (64; the snapshot then overflows to
//! pg_subtrans), some rolled back to a savepoint, committed or prepared on
//! the primary; a session on the standby sees exactly the committed
//! subtransactions; after the primary dies and the standby is promoted,
//! the prepared ones commit or roll back there with the same outcome —
//! also after a crash of the promoted node.
//!
//! What goes wrong without this: rows of a subtransaction rolled back to
//! a savepoint appear on the standby (or rows of a committed one are
//! missing) once the subxid cache overflows, or a prepared transaction's
//! subtransactions are forgotten by the promoted node.

use tap_tests::Node;

/// `BEGIN`, rows `from..from + n` each in its own savepoint `s<i>`, then
/// `ROLLBACK TO s<keep>` (rows from `from + keep` on are undone), then
/// `end` (`COMMIT` or `PREPARE TRANSACTION …`).
fn many_subxacts(from: i32, n: i32, keep: i32, end: &str) -> String {
    let mut sql = String::from("BEGIN;");
    for i in 0..n {
        sql.push_str(&format!(
            "SAVEPOINT s{i}; INSERT INTO t_012_tbl VALUES ({});",
            from + i
        ));
    }
    sql.push_str(&format!("ROLLBACK TO SAVEPOINT s{keep}; {end}"));
    sql
}

const SUMMARY: &str = "SELECT count(*), coalesce(sum(id), 0) FROM t_012_tbl";

/// count|sum of the integers `from..to`.
fn rows(ranges: &[(i64, i64)]) -> String {
    let count: i64 = ranges.iter().map(|(a, b)| b - a).sum();
    let sum: i64 = ranges.iter().map(|(a, b)| (*a..*b).sum::<i64>()).sum();
    format!("{count}|{sum}")
}

#[test]
fn subtransactions_survive_replay_and_promotion() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("max_prepared_transactions = 10");
    primary.start();
    let standby = Node::standby_of(&primary, "standby");
    standby.stop("fast");
    standby.append_conf("max_prepared_transactions = 10");
    standby.start();
    primary.safe_sql("CREATE TABLE t_012_tbl (id int)");

    // A committed transaction with 201 subtransactions, 101 of them kept.
    primary.safe_sql(&many_subxacts(0, 201, 101, "COMMIT"));
    // A prepared one (ids 1000..1150 kept) and one still open.
    primary.safe_sql(&many_subxacts(
        1000,
        201,
        150,
        "PREPARE TRANSACTION 'xact_012_1'",
    ));
    let open = primary.background_session();
    for stmt in many_subxacts(5000, 100, 80, "SELECT 1").split(';') {
        if !stmt.trim().is_empty() {
            open.query_safe(stmt);
        }
    }
    primary.safe_sql("INSERT INTO t_012_tbl VALUES (-1)"); // ships the open one's records
    primary.wait_for_replay(&standby);
    let committed = rows(&[(0, 101), (-1, 0)]);
    let reader = standby.background_session();
    assert_eq!(
        reader.query_safe(SUMMARY),
        committed,
        "standby: committed subxacts only"
    );
    assert_eq!(primary.safe_sql(SUMMARY), committed, "primary agrees");

    // The primary dies; the standby is promoted: the open transaction is
    // gone, the prepared one still prepared, then committed.
    primary.kill9();
    drop(open);
    standby.promote();
    assert_eq!(reader.query_safe(SUMMARY), committed, "after promotion");
    standby.safe_sql("COMMIT PREPARED 'xact_012_1'");
    let with_prepared = rows(&[(0, 101), (-1, 0), (1000, 1150)]);
    assert_eq!(reader.query_safe(SUMMARY), with_prepared);

    // On the promoted node: one prepared with 201 subxacts, a crash, then
    // ROLLBACK PREPARED; and one committed after the crash.
    standby.safe_sql(&many_subxacts(
        2000,
        201,
        10,
        "PREPARE TRANSACTION 'xact_012_2'",
    ));
    standby.kill9();
    standby.start();
    assert_eq!(
        standby.safe_sql("SELECT gid FROM pg_prepared_xacts"),
        "xact_012_2"
    );
    standby.safe_sql("ROLLBACK PREPARED 'xact_012_2'");
    standby.safe_sql(&many_subxacts(3000, 201, 200, "COMMIT"));
    assert_eq!(
        standby.safe_sql(SUMMARY),
        rows(&[(0, 101), (-1, 0), (1000, 1150), (3000, 3200)])
    );
    // The rows rolled back to a savepoint are not there, and the
    // subtransactions' rows of the open transaction never were.
    assert_eq!(
        standby.safe_sql(
            "SELECT count(*) FROM t_012_tbl WHERE id BETWEEN 101 AND 200 OR id >= 5000 OR id BETWEEN 2000 AND 2999"
        ),
        "0"
    );
}
