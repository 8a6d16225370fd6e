//! INSERT … ON CONFLICT under concurrency, and on the standby.
//!
//! An upsert that checks for its key, finds none and inserts races every
//! other inserter of that key: without PostgreSQL's speculative insertion
//! (insert, claim the key in the unique index with a re-check, and take the
//! conflict path when someone got there first) two sessions upserting the
//! same keys would fail with 23505 or lose an increment. Here two sessions
//! upsert the same keys over and over, and every statement must report all
//! its rows (`INSERT 0 n` counts inserted plus updated rows), no increment
//! may be lost, and a DO NOTHING race must insert each key exactly once. An
//! upsert that meets an uncommitted insert of its key waits for it and then
//! updates (the inserter committed) or inserts (it rolled back). The
//! standby, replaying ordinary heap records, shows the same final rows.
//! No assertion depends on which session reaches the server first.

use tap_tests::session::Session;
use tap_tests::Node;
use tokio_postgres::SimpleQueryMessage;

/// Runs `sql` and returns the row count of its CommandComplete.
fn command_count(s: &Session, sql: &str) -> u64 {
    let msgs =
        tap_tests::block_on(s.client().simple_query(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    msgs.iter()
        .find_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{sql}: no CommandComplete"))
}

#[test]
fn concurrent_upserts() {
    // 1. A primary with a standby; a table keyed by k.
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    primary.safe_sql("CREATE TABLE kv (k int PRIMARY KEY, n int NOT NULL)");
    primary.safe_sql("CREATE TABLE once (k int PRIMARY KEY, who text NOT NULL)");
    primary.backup("b");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "b", true);
    standby.start();

    // 2. Two sessions upsert keys 1..20 fifty times each: every statement
    //    counts all 20 rows, and every key ends at exactly 100.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let s = primary.background_session();
                for _ in 0..50 {
                    let n = command_count(
                        &s,
                        "INSERT INTO kv SELECT g, 1 FROM generate_series(1, 20) g \
                         ON CONFLICT (k) DO UPDATE SET n = kv.n + EXCLUDED.n",
                    );
                    assert_eq!(n, 20, "upsert counts inserted plus updated rows");
                }
            });
        }
    });
    assert_eq!(
        primary.safe_sql("SELECT count(*), min(n), max(n), sum(n) FROM kv"),
        "20|100|100|2000",
        "no upsert lost or duplicated"
    );

    // 3. DO NOTHING race: each key inserted exactly once in total.
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = ["s1", "s2"]
            .into_iter()
            .map(|who| {
                let primary = &primary;
                scope.spawn(move || {
                    let s = primary.background_session();
                    let mut total = 0;
                    for k in 1..=200 {
                        total += command_count(
                            &s,
                            &format!(
                                "INSERT INTO once VALUES ({k}, '{who}') ON CONFLICT DO NOTHING"
                            ),
                        );
                    }
                    total
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("session thread"))
            .collect()
    });
    assert_eq!(
        counts.iter().sum::<u64>(),
        200,
        "DO NOTHING inserted each key once"
    );
    assert_eq!(
        primary.safe_sql("SELECT count(*), count(DISTINCT k) FROM once"),
        "200|200",
        "one row per key"
    );

    // 4. An upsert meeting an uncommitted insert of its key waits, then
    //    takes the update path when the inserter commits…
    let s1 = primary.background_session();
    let s2 = primary.background_session();
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO kv VALUES (100, 1)");
    let upsert = s2.send(
        "INSERT INTO kv VALUES (100, 10) ON CONFLICT (k) DO UPDATE SET n = kv.n + EXCLUDED.n RETURNING n",
    );
    s1.query_safe("COMMIT");
    assert_eq!(upsert.wait(), Ok("11".to_string()), "updated after commit");

    // 5. …and the insert path when it rolls back.
    s1.query_safe("BEGIN");
    s1.query_safe("INSERT INTO kv VALUES (101, 1)");
    let upsert = s2.send(
        "INSERT INTO kv VALUES (101, 10) ON CONFLICT (k) DO UPDATE SET n = kv.n + EXCLUDED.n RETURNING n",
    );
    s1.query_safe("ROLLBACK");
    assert_eq!(
        upsert.wait(),
        Ok("10".to_string()),
        "inserted after rollback"
    );

    // 6. Inside one transaction the same key twice is 21000.
    let err = s2.query_err(
        "INSERT INTO kv VALUES (1, 1), (1, 2) ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n",
    );
    assert_eq!(err.code(), "21000", "row affected twice: {err}");

    // 7. The standby shows the same rows.
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(&standby, "replay", Some(&lsn));
    let all = "SELECT k, n FROM kv ORDER BY k";
    assert_eq!(
        standby.safe_sql(all),
        primary.safe_sql(all),
        "standby replayed the upserts"
    );
    assert_eq!(
        standby.safe_sql("SELECT count(*) FROM once"),
        "200",
        "standby has every DO NOTHING insert"
    );

    standby.stop("fast");
    primary.stop("fast");
}
