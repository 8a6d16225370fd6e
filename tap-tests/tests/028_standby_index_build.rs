//! Indexes a standby builds while replaying: CREATE INDEX / ADD PRIMARY KEY
//! replayed over a loaded table (built from the heap in one sorted run, as
//! on the primary), rows replayed into them afterwards, and the rebuild at
//! the standby's restart — every lookup on the standby answers what the
//! primary answers, duplicates and NULL keys included.

use tap_tests::Node;

/// The same questions on both nodes, each answered through an index.
const PROBES: [&str; 7] = [
    "SELECT v FROM t WHERE id = 1",
    "SELECT v FROM t WHERE id = 1234",
    "SELECT count(*) FROM t WHERE id = 999999",
    "SELECT count(*) FROM t WHERE v = 7",
    "SELECT count(*) FROM t WHERE v = 0",
    "SELECT count(*) FROM t WHERE v IS NULL",
    "SELECT count(*), sum(id) FROM t",
];

fn answers(n: &Node) -> Vec<String> {
    PROBES.iter().map(|q| n.safe_sql(q)).collect()
}

fn caught_up(primary: &Node, standby: &Node) {
    let lsn = primary.lsn("write");
    primary.wait_for_catchup(standby, "replay", Some(&lsn));
}

#[test]
fn standby_indexes_answer_like_the_primary() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.start();
    let standby = Node::standby_of(&primary, "standby");

    // Loaded before any index exists, in key order (as pgbench -i loads
    // its tables before adding the primary keys); v repeats and is NULL
    // for every 10th row.
    primary.safe_sql("CREATE TABLE t (id int NOT NULL, v int)");
    primary.safe_sql(
        "INSERT INTO t SELECT g, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 13 END \
         FROM generate_series(1, 5000) g",
    );
    primary.safe_sql("ALTER TABLE t ADD PRIMARY KEY (id)");
    primary.safe_sql("CREATE INDEX t_v ON t (v)");
    caught_up(&primary, &standby);
    let expected = answers(&primary);
    assert_eq!(
        expected[3],
        (1..=5000)
            .filter(|g| g % 10 != 0 && g % 13 == 7)
            .count()
            .to_string()
    );
    assert_eq!(expected[5], "500");
    assert_eq!(answers(&standby), expected, "indexes built by replay");

    // Rows replayed into the built indexes: new keys, updates, deletes.
    primary.safe_sql("INSERT INTO t VALUES (999999, 7), (5001, NULL)");
    primary.safe_sql("UPDATE t SET v = 0 WHERE id % 100 = 1");
    primary.safe_sql("DELETE FROM t WHERE id BETWEEN 2000 AND 2099");
    caught_up(&primary, &standby);
    let expected = answers(&primary);
    assert_eq!(expected[2], "1");
    assert_eq!(
        answers(&standby),
        expected,
        "rows replayed into the indexes"
    );

    // A restart rebuilds every index from the heap.
    standby.restart();
    caught_up(&primary, &standby);
    assert_eq!(answers(&standby), expected, "indexes rebuilt at restart");
}
