//! TOAST end to end: values far larger than a page (100 KB, 10 MB and
//! 200 MB of text and bytea) are compressed and stored out of line in the
//! table's TOAST relation, by ordinary WAL-logged heap inserts, so a
//! streaming standby replays them and answers the same. An UPDATE of
//! another column reuses the out-of-line value (the TOAST relation does
//! not grow); DELETE + VACUUM frees its chunks (a new value of the same
//! size reuses the space); and a primary killed with SIGKILL in the middle
//! of a big toasted insert comes back with no trace of the row, visible
//! or partial. The guarded failures: a row that cannot exist without a
//! second relation, replication of that relation, and chunks outliving or
//! predating their row.

use std::path::Path;

use tap_tests::{wait_until, Node};

/// Bytes of the TOAST relations (files numbered 2^31 and above) under
/// `base/`.
fn toast_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir.join("base")).expect("base/") {
        let e = e.expect("dir entry");
        let name = e.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_ok_and(|n| n >= 0x8000_0000) {
            total += e.metadata().expect("stat").len();
        }
    }
    total
}

fn caught_up(primary: &Node, standby: &Node) {
    let lsn = primary.lsn("insert");
    primary.wait_for_catchup(standby, "replay", Some(&lsn));
}

/// id, lengths and md5s of every row (never the values themselves).
const DIGEST: &str = "SELECT string_agg(id || ':' || coalesce(length(t), -1) || ':' \
     || coalesce(octet_length(b), -1) || ':' || coalesce(md5(t), '-') || ':' \
     || coalesce(md5(b), '-'), ' ' ORDER BY id) FROM big";

#[test]
fn toasted_values_round_trip_replicate_and_clean_up() {
    let primary = Node::new("primary");
    primary.init(true);
    // The standby may fall far behind during the 200 MB inserts and the
    // crash: keep the WAL it still needs.
    primary.append_conf("wal_keep_size = 4GB\n");
    primary.start();
    let standby = Node::standby_of(&primary, "standby");

    // 1. A 5 MB incompressible-ish seed (md5 hex), and the table.
    primary.safe_sql("CREATE TABLE seed (s text)");
    primary.safe_sql(
        "INSERT INTO seed SELECT string_agg(md5(i::text), '') FROM generate_series(1, 160000) i",
    );
    primary.safe_sql("CREATE TABLE big (id int PRIMARY KEY, n int, t text, b bytea)");

    // 2. 100 KB, 10 MB and 200 MB values of both types.
    primary.safe_sql(
        "INSERT INTO big SELECT 1, 0, substr(s, 1, 100000), \
         decode(substr(s, 1, 200000), 'hex') FROM seed",
    );
    primary.safe_sql(
        "INSERT INTO big SELECT 2, 0, substr(s || s, 1, 10000000), \
         decode(substr(s || s || s || s, 1, 20000000), 'hex') FROM seed",
    );
    primary.safe_sql("INSERT INTO big SELECT 3, 0, repeat(s, 40), repeat(s, 40)::bytea FROM seed");
    assert_eq!(
        primary.safe_sql("SELECT id, length(t), octet_length(b) FROM big ORDER BY id"),
        "1|100000|100000\n2|10000000|10000000\n3|204800000|204800000",
        "lengths on the primary"
    );
    assert_eq!(
        primary.safe_sql(
            "SELECT md5(t) = (SELECT md5(repeat(s, 40)) FROM seed), \
             md5(b) = (SELECT md5(repeat(s, 40)::bytea) FROM seed) FROM big WHERE id = 3"
        ),
        "t|t",
        "the 200 MB values read back unchanged"
    );
    let digest = primary.safe_sql(DIGEST);
    caught_up(&primary, &standby);
    assert_eq!(
        standby.safe_sql(DIGEST),
        digest,
        "the standby reads the same values"
    );

    // 3. An UPDATE of another column reuses the out-of-line values.
    let before = toast_bytes(primary.data_dir());
    assert!(
        before > 100_000_000,
        "values are out of line: {before} bytes"
    );
    primary.safe_sql("UPDATE big SET n = n + 1");
    assert_eq!(
        toast_bytes(primary.data_dir()),
        before,
        "UPDATE of another column does not rewrite toasted values"
    );
    assert_eq!(primary.safe_sql(DIGEST), digest, "values unchanged");

    // 4. DELETE + VACUUM frees the chunks: the same value again fits in
    // the freed space.
    primary.safe_sql("DELETE FROM big WHERE id = 2");
    primary.safe_sql("VACUUM big");
    let after_vacuum = toast_bytes(primary.data_dir());
    primary.safe_sql(
        "INSERT INTO big SELECT 4, 0, substr(s || s, 1, 10000000), \
         decode(substr(s || s || s || s, 1, 20000000), 'hex') FROM seed",
    );
    let grown = toast_bytes(primary.data_dir()) - after_vacuum;
    assert!(
        grown < 2_000_000,
        "a deleted value's chunks are reused after VACUUM (grew {grown} bytes)"
    );
    caught_up(&primary, &standby);
    assert_eq!(
        standby.safe_sql(DIGEST),
        primary.safe_sql(DIGEST),
        "standby after delete, vacuum and insert"
    );

    // 5. SIGKILL in the middle of a 200 MB toasted insert.
    let start = toast_bytes(primary.data_dir());
    std::thread::scope(|sc| {
        let inserter = sc.spawn(|| {
            primary
                .sql("INSERT INTO big SELECT 5, 0, repeat(s, 40), repeat(s, 40)::bytea FROM seed")
        });
        wait_until("the big insert writing chunks", || {
            toast_bytes(primary.data_dir()) > start + 20_000_000
        });
        primary.kill9();
        assert!(
            inserter.join().expect("inserter").is_err(),
            "the insert died"
        );
    });
    primary.start();
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM big WHERE id = 5"),
        "0",
        "no row from the killed insert"
    );
    assert_eq!(
        primary.safe_sql("SELECT string_agg(id::text, ',' ORDER BY id) FROM big"),
        "1,3,4",
        "the committed rows, nothing else"
    );
    let digest = primary.safe_sql(DIGEST);
    caught_up(&primary, &standby);
    assert_eq!(standby.safe_sql(DIGEST), digest, "standby after the crash");

    // 6. TRUNCATE empties the TOAST relations (the seed's too), on both
    // nodes.
    primary.safe_sql("TRUNCATE big");
    primary.safe_sql("TRUNCATE seed");
    assert_eq!(toast_bytes(primary.data_dir()), 0, "TRUNCATE empties TOAST");
    caught_up(&primary, &standby);
    assert_eq!(toast_bytes(standby.data_dir()), 0, "and on the standby");
}
