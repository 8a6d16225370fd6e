//! Data checksums (`data_checksums`, fixed when the data directory is
//! created): every page carries a checksum, checked on every read.
//!
//! 1. A primary created with `data_checksums = on` shows it, as an
//!    internal setting that neither SET nor ALTER SYSTEM may change
//!    (55P02); its standby, made from a base backup, has it too.
//! 2. With checksums, the first hint-bit change of a page after a
//!    checkpoint logs a full-page image (torn-page protection for a change
//!    that has no WAL record of its own); without them it logs nothing.
//! 3. The stopped directory passes `checksums --check`; after one byte of
//!    a table's page is flipped on disk, the check names that file and
//!    block and exits 1.
//! 4. Started again, a read of that page fails with XX001 `invalid page in
//!    block 0 of relation base/N`, the log has PostgreSQL's "page
//!    verification failed" WARNING, and other tables and sessions go on.
//! 5. `ignore_checksum_failure = on` (reload) lets the read through.
//! 6. A directory created without checksums keeps them off whatever `-c`
//!    says later, and the check refuses it.

use std::process::Command;

use tap_tests::binaries::bin_path;
use tap_tests::Node;

/// `checksums --check -D dir`: (success, stdout, stderr).
fn check(node: &Node) -> (bool, String, String) {
    let out = Command::new(bin_path("checksums"))
        .arg("--check")
        .arg("-D")
        .arg(node.data_dir())
        .output()
        .expect("run checksums");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fpi(node: &Node) -> i64 {
    node.safe_sql("SELECT wal_fpi FROM pg_stat_wal")
        .parse()
        .expect("wal_fpi")
}

/// Loads 500 rows in one transaction, checkpoints (the pages reach disk
/// with no hint bits: nobody has read them), then reads them all (hint
/// bits set on every page): how many images that read logged.
fn images_logged_by_hints(node: &Node, table: &str) -> i64 {
    node.safe_sql(&format!(
        "CREATE TABLE {table} (id int, pad text); \
         INSERT INTO {table} SELECT g, repeat('h', 100) FROM generate_series(1, 500) g"
    ));
    node.safe_sql("CHECKPOINT");
    let before = fpi(node);
    assert_eq!(
        node.safe_sql(&format!("SELECT count(*) FROM {table}")),
        "500"
    );
    fpi(node) - before
}

#[test]
fn data_checksums_detect_corruption() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("data_checksums = on\nshared_buffers = 1MB");
    primary.start();

    // 1. The setting.
    assert_eq!(primary.safe_sql("SHOW data_checksums"), "on");
    assert_eq!(
        primary.safe_sql("SELECT context FROM pg_settings WHERE name = 'data_checksums'"),
        "internal"
    );
    primary.expect_error("SET data_checksums = off", "55P02");
    primary.expect_error("ALTER SYSTEM SET data_checksums = off", "55P02");

    primary.safe_sql(
        "CREATE TABLE t (id int PRIMARY KEY, v text); \
         INSERT INTO t SELECT g, 'value ' || g FROM generate_series(1, 1000) g; \
         CREATE TABLE u (id int); INSERT INTO u VALUES (1), (2), (3)",
    );
    primary.backup("b");
    let standby = Node::new("standby");
    standby.init_from_backup(&primary, "b", true);
    standby.start();
    primary.wait_for_catchup(&standby, "replay", None);
    assert_eq!(standby.safe_sql("SHOW data_checksums"), "on");
    assert_eq!(standby.safe_sql("SELECT count(*) FROM t"), "1000");
    standby.stop("fast");

    // 2. Hint bits log an image with checksums.
    assert!(
        images_logged_by_hints(&primary, "hinted") > 0,
        "a page's first hint-bit change after a checkpoint logs its image"
    );

    // 3. The offline check, before and after one flipped byte.
    let relfile = primary.safe_sql("SELECT relfilenode FROM pg_class WHERE relname = 't'");
    primary.safe_sql("CHECKPOINT");
    primary.stop("fast");
    let (ok, out, err) = check(&primary);
    assert!(ok, "clean directory: {out}{err}");
    assert!(out.contains("Bad checksums:  0"), "{out}");
    let path = primary.data_dir().join("base").join(&relfile);
    let mut bytes = std::fs::read(&path).expect("read table file");
    assert!(bytes.len() >= 8192, "table t has a page on disk");
    // The top byte of block 0's pd_prune_xid: the page stays sane for
    // its header check and its rows are untouched (step 5 reads them all).
    bytes[31] ^= 0x40;
    std::fs::write(&path, &bytes).expect("write table file");
    let (ok, out, err) = check(&primary);
    assert!(!ok, "a flipped byte fails the check: {out}");
    assert!(out.contains("Bad checksums:  1"), "{out}");
    assert!(
        err.contains(&format!("base/{relfile}\", block 0: calculated checksum")),
        "{err}"
    );

    // 4. Reading the damaged page.
    primary.start();
    let log_at = primary.log_position();
    match primary.sql("SELECT * FROM t") {
        Ok(out) => panic!("corrupt page read without error: {out:.80}"),
        Err(e) => {
            assert_eq!(e.code(), "XX001", "{e}");
            assert!(
                e.to_string().contains(&format!(
                    "invalid page in block 0 of relation base/{relfile}"
                )),
                "{e}"
            );
        }
    }
    assert!(
        primary.log_contains_after("page verification failed, calculated checksum", log_at),
        "the WARNING is logged"
    );
    assert!(
        primary.log_contains("while rebuilding its indexes"),
        "the start-up index rebuild skipped the page and said so"
    );
    assert_eq!(primary.safe_sql("SELECT count(*) FROM u"), "3");
    // The page stays unusable for the next reader too (not cached as valid).
    primary.expect_error("SELECT count(*) FROM t", "XX001");

    // 5. ignore_checksum_failure.
    primary.append_conf("ignore_checksum_failure = on");
    primary.safe_sql("SELECT pg_reload_conf()");
    tap_tests::wait_until("ignore_checksum_failure reloaded", || {
        primary.sql("SHOW ignore_checksum_failure").ok().as_deref() == Some("on")
    });
    assert_eq!(primary.safe_sql("SELECT count(*) FROM t"), "1000");
    primary.stop("fast");

    // 6. Without checksums.
    let plain = Node::new("plain");
    plain.init(false);
    plain.append_conf("shared_buffers = 1MB");
    plain.start();
    assert_eq!(plain.safe_sql("SHOW data_checksums"), "off");
    assert_eq!(
        images_logged_by_hints(&plain, "hinted"),
        0,
        "without checksums hint bits log nothing"
    );
    plain.stop("fast");
    plain.append_conf("data_checksums = on");
    plain.start();
    assert_eq!(
        plain.safe_sql("SHOW data_checksums"),
        "off",
        "the directory's choice, not the setting's"
    );
    plain.stop("fast");
    let (ok, _, err) = check(&plain);
    assert!(!ok);
    assert!(
        err.contains("data checksums are not enabled in cluster"),
        "{err}"
    );
}
