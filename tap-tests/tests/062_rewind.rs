//! `rewind` (pg_rewind for hotpair; replication.md "Rewinding the old
//! primary"), after PostgreSQL's src/bin/pg_rewind/t/001_basic.pl: a
//! primary and a standby; the standby is promoted while the old primary
//! goes on writing — inserts, updates, a new table, a dropped table — and
//! is then stopped cleanly or killed. `rewind --write-recovery-conf`
//! against the new primary makes the old one a standby of it: started as
//! `standby -D old`, it streams from the new primary, its tables equal the
//! new primary's, the diverged writes are gone and later writes arrive.
//!
//! What goes wrong without it: the old primary's WAL past the fork point
//! makes it refuse the new timeline ("requested timeline 2 is not a child
//! of this server's history"), and the only way back was a full base
//! backup. A rewind that misses a changed block, a dropped or created
//! file, the catalog or the clog leaves a standby whose data differs from
//! its primary's — the table comparisons below catch that. Bad input: a
//! running target, an unrelated source system, `--dry-run` and a target
//! that did not diverge ("no rewind required", exit 0) all leave every
//! file of the target as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use tap_tests::Node;

/// The rows of the test tables as text, for comparing nodes.
const KEEP: &str = "SELECT string_agg(a::text || ':' || b, ',' ORDER BY a) FROM tab_keep";
const DROPPED: &str = "SELECT count(*), sum(a) FROM tab_drop";

/// Runs `rewind` on `target`'s directory against `source`; (exit code,
/// stdout, stderr).
fn rewind(target: &Node, source: &Node, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(tap_tests::binaries::bin_path("rewind"))
        .arg("--target-pgdata")
        .arg(target.data_dir())
        .arg("--source-server")
        .arg(format!(
            "host={} port={} user=postgres application_name=rewind",
            source.host(),
            source.port()
        ))
        .args(extra)
        .output()
        .expect("run rewind");
    let r = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    eprintln!("# rewind {extra:?}: exit {}\n{}{}", r.0, r.1, r.2);
    r
}

/// Every file under `dir` with its content and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, SystemTime)>) {
        for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let p = e.path();
            let md = e.metadata().expect("metadata");
            if md.is_dir() {
                walk(&p, out);
            } else {
                let content = std::fs::read(&p).expect("read");
                out.insert(p, (content, md.modified().expect("mtime")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

#[track_caller]
fn assert_unchanged(before: &BTreeMap<PathBuf, (Vec<u8>, SystemTime)>, dir: &Path, what: &str) {
    let after = snapshot(dir);
    let names =
        |m: &BTreeMap<PathBuf, (Vec<u8>, SystemTime)>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(before), names(&after), "{what}: same files");
    for (p, v) in before {
        assert!(after.get(p) == Some(v), "{what}: {} changed", p.display());
    }
}

/// Primary with data, its standby caught up; the standby is promoted while
/// the primary keeps running and diverges.
/// `conf` goes into the primary's configuration (and so the standby's
/// base backup) before the first start.
fn diverged_pair(prefix: &str, conf: &str, diverged_rows: u32) -> (Node, Node) {
    // 1. A primary with tables and a standby.
    let primary = Node::new(&format!("{prefix}_old"));
    primary.init(true);
    primary.append_conf(conf);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_keep (a int PRIMARY KEY, b text); \
         INSERT INTO tab_keep SELECT g, 'common' FROM generate_series(1, 1000) g; \
         CREATE TABLE tab_drop (a int); \
         INSERT INTO tab_drop SELECT generate_series(1, 500); \
         CHECKPOINT",
    );
    let standby = Node::standby_of(&primary, &format!("{prefix}_new"));
    primary.safe_sql(
        "INSERT INTO tab_keep SELECT g, 'before fork' FROM generate_series(1001, 1100) g",
    );
    // A transaction running at the fork, whose insert is older than the
    // last checkpoint: it commits on the old primary only, and a read there
    // sets the hint bit XMIN_COMMITTED on a page no later WAL names.
    primary.safe_sql("CREATE TABLE tab_hint (a int)");
    let running = primary.background_session();
    running.query_safe("BEGIN");
    running.query_safe("INSERT INTO tab_hint SELECT generate_series(1, 10)");
    primary.safe_sql("CHECKPOINT");
    primary.wait_for_replay(&standby);

    // 2. The standby becomes the new primary (timeline 2); the old one
    // does not know and goes on: inserts, updates, deletes, a new table,
    // a dropped table.
    standby.promote();
    running.query_safe("COMMIT");
    drop(running);
    assert_eq!(
        primary.safe_sql("SELECT count(*) FROM tab_hint"),
        "10",
        "hint bits set"
    );
    primary.safe_sql(&format!(
        "INSERT INTO tab_keep SELECT g, 'diverged' FROM generate_series(1101, {}) g; \
         UPDATE tab_keep SET b = 'diverged update' WHERE a % 7 = 0; \
         DELETE FROM tab_keep WHERE a BETWEEN 10 AND 20; \
         CREATE TABLE tab_new (a int); INSERT INTO tab_new SELECT generate_series(1, 100); \
         DROP TABLE tab_drop",
        1100 + diverged_rows
    ));

    // 3. The new primary's own writes after the fork.
    standby.safe_sql(
        "INSERT INTO tab_keep SELECT g, 'new primary' FROM generate_series(5001, 5200) g; \
         UPDATE tab_keep SET b = 'updated on new' WHERE a % 11 = 0",
    );
    (primary, standby)
}

/// The old primary, rewound and started as a standby of `new`, has
/// `new`'s data and none of its own diverged writes.
fn check_follows(old: &Node, new: &Node) {
    old.enable_streaming(new);
    old.start();
    new.wait_for_replay(old);
    assert_eq!(
        old.safe_sql(KEEP),
        new.safe_sql(KEEP),
        "tab_keep equals the new primary's"
    );
    assert_eq!(
        old.safe_sql(DROPPED),
        "500|125250",
        "table dropped after the fork is back"
    );
    old.expect_error("SELECT count(*) FROM tab_new", "42P01");
    assert_eq!(
        old.safe_sql("SELECT count(*) FROM tab_hint"),
        new.safe_sql("SELECT count(*) FROM tab_hint"),
        "a commit after the fork is not visible through a stale hint bit"
    );
    assert_eq!(new.safe_sql("SELECT count(*) FROM tab_hint"), "0");
    assert_eq!(
        old.safe_sql("SELECT count(*) FROM tab_keep WHERE b LIKE 'diverged%'"),
        "0",
        "diverged writes gone"
    );
    assert_eq!(
        old.safe_sql("SELECT pg_is_in_recovery()"),
        "t",
        "the old primary runs as a standby"
    );
    // Later writes on the new primary arrive.
    new.safe_sql("INSERT INTO tab_keep SELECT g, 'later' FROM generate_series(6001, 6050) g");
    new.wait_for_replay(old);
    assert_eq!(
        old.safe_sql("SELECT count(*) FROM tab_keep WHERE b = 'later'"),
        "50",
        "later writes seen"
    );
    assert_eq!(old.safe_sql(KEEP), new.safe_sql(KEEP), "still equal");
}

#[test]
fn rewind_cleanly_stopped_old_primary() {
    let (old, new) = diverged_pair("clean", "", 1900);
    let other = Node::new("clean_other");
    other.init(true);
    other.start();

    // 4. A running target is refused, nothing written.
    let before = snapshot(old.data_dir());
    let (code, _, err) = rewind(&old, &new, &["--write-recovery-conf"]);
    assert_ne!(code, 0, "running target refused");
    assert!(
        err.contains("target server must be shut down cleanly"),
        "{err}"
    );
    // A second server on the directory is refused the same way.
    let second = Command::new(tap_tests::binaries::bin_path("primary"))
        .arg("-D")
        .arg(old.data_dir())
        .arg("-p")
        .arg("0")
        .output()
        .expect("run primary");
    let second_err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "second server refused");
    assert!(
        second_err.contains("lock file \"postmaster.pid\" already exists")
            && second_err.contains(&format!(
                "Is another postmaster (PID {})",
                old.pid().expect("pid")
            )),
        "{second_err}"
    );
    old.stop("fast");

    // 5. An unrelated system is refused; --dry-run writes nothing.
    assert_eq!(
        snapshot(old.data_dir()).len(),
        before.len() - 1,
        "only postmaster.pid went away at the stop"
    );
    let before = snapshot(old.data_dir());
    let (code, _, err) = rewind(&old, &other, &["--write-recovery-conf"]);
    assert_ne!(code, 0, "unrelated system refused");
    assert!(
        err.contains("source and target clusters are from different systems"),
        "{err}"
    );
    assert_unchanged(&before, old.data_dir(), "unrelated source");
    let (code, out, _) = rewind(&old, &new, &["--dry-run", "--write-recovery-conf"]);
    assert_eq!(code, 0, "dry run succeeds");
    assert!(out.contains("servers diverged at WAL location"), "{out}");
    assert!(
        out.contains("rewinding from last common checkpoint at"),
        "{out}"
    );
    assert_unchanged(&before, old.data_dir(), "dry run");

    // 6. The rewind.
    let (code, out, err) = rewind(&old, &new, &["--write-recovery-conf", "--progress"]);
    assert_eq!(code, 0, "rewind: {err}");
    assert!(
        out.contains("servers diverged at WAL location") && out.contains("on timeline 1"),
        "{out}"
    );
    assert!(
        out.contains("kB") && out.contains("copied"),
        "progress lines: {out}"
    );
    assert!(out.trim_end().ends_with("rewind: Done!"), "{out}");
    assert!(
        old.data_dir().join("standby.signal").exists(),
        "standby.signal written"
    );
    let conf = std::fs::read_to_string(old.data_dir().join("hotpair.conf")).expect("hotpair.conf");
    assert!(
        conf.contains(&format!(
            "primary_conninfo = 'host={} port={}",
            new.host(),
            new.port()
        )),
        "{conf}"
    );

    // 7. It follows the new primary.
    check_follows(&old, &new);

    // 8. Rewinding it again: it did not diverge — exit 0, nothing written.
    old.stop("fast");
    let before = snapshot(old.data_dir());
    let (code, out, err) = rewind(&old, &new, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("source and target cluster are on the same timeline")
            && out.contains("no rewind required"),
        "{out}"
    );
    assert_unchanged(&before, old.data_dir(), "no rewind required");
    old.start();
    new.wait_for_replay(&old);
    assert_eq!(
        old.safe_sql(KEEP),
        new.safe_sql(KEEP),
        "restarts and follows"
    );
}

#[test]
fn rewind_killed_old_primary() {
    // 1 MB segments and a few MB of diverged WAL: the cut removes whole
    // segments past the fork point's.
    let (old, new) = diverged_pair("kill9", "wal_segment_size = 1MB", 30_000);
    let segments = |n: &Node| {
        std::fs::read_dir(n.data_dir().join("pg_wal"))
            .expect("pg_wal")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.len() == 24)
            .collect::<Vec<_>>()
    };
    // 4. Killed: no shutdown checkpoint, WAL past the last checkpoint.
    old.kill9();
    let old_tli1 = segments(&old);
    let (code, out, err) = rewind(&old, &new, &["--write-recovery-conf"]);
    assert_eq!(code, 0, "rewind after SIGKILL: {err}");
    assert!(
        out.contains("rewinding from last common checkpoint at"),
        "{out}"
    );
    let fork = out
        .split("servers diverged at WAL location ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(tap_tests::cluster::parse_lsn)
        .expect("fork point printed");
    let segno = fork >> 20;
    let fork_segment = format!("00000001{:08X}{:08X}", segno / 4096, segno % 4096);
    let kept = segments(&old);
    assert!(
        old_tli1.iter().any(|f| f.as_str() > fork_segment.as_str()),
        "the old primary had segments past the fork's: {old_tli1:?} ({fork_segment})"
    );
    assert!(
        kept.iter().all(|f| f.as_str() <= fork_segment.as_str()),
        "segments past the fork's removed: {kept:?} ({fork_segment})"
    );
    check_follows(&old, &new);
}

#[test]
fn standby_stopped_before_fork_needs_no_rewind() {
    // 1. A primary and two standbys; standby 2 stops, standby 1 catches up
    // and is promoted: standby 2's WAL ends at or before the fork point.
    let primary = Node::new("nodiv_primary");
    primary.init(true);
    primary.start();
    primary.safe_sql(
        "CREATE TABLE tab_keep (a int PRIMARY KEY, b text); \
         INSERT INTO tab_keep SELECT g, 'common' FROM generate_series(1, 100) g",
    );
    let s1 = Node::standby_of(&primary, "nodiv_s1");
    let s2 = Node::standby_of(&primary, "nodiv_s2");
    primary.wait_for_replay(&s2);
    s2.stop("fast");
    primary.stop("fast");
    s1.promote();
    s1.safe_sql("INSERT INTO tab_keep SELECT g, 'new' FROM generate_series(101, 200) g");

    // 2. No rewind required, nothing written, exit 0 — with
    // --write-recovery-conf (not a dry run) only its files, as pg_rewind.
    let before = snapshot(s2.data_dir());
    let (code, out, err) = rewind(&s2, &s1, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("servers diverged at WAL location"), "{out}");
    assert!(out.contains("no rewind required"), "{out}");
    assert_unchanged(&before, s2.data_dir(), "no rewind required");
    let (code, _, err) = rewind(&s2, &s1, &["--write-recovery-conf", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_unchanged(&before, s2.data_dir(), "no rewind required, dry run");
    let (code, _, err) = rewind(&s2, &s1, &["--write-recovery-conf"]);
    assert_eq!(code, 0, "{err}");
    let mut after = snapshot(s2.data_dir());
    let conf = s2.data_dir().join("hotpair.conf");
    let text = String::from_utf8_lossy(&after[&conf].0).into_owned();
    assert!(
        text.contains(&format!(
            "primary_conninfo = 'host={} port={}",
            s1.host(),
            s1.port()
        )),
        "{text}"
    );
    let mut before = before;
    for f in [conf, s2.data_dir().join("standby.signal")] {
        before.remove(&f);
        after.remove(&f);
    }
    assert!(before == after, "only the recovery configuration written");

    // 3. Bad input to the commands rewind uses: paths outside the copied
    // directories are refused with pg_read_binary_file's errors.
    for (path, msg) in [
        ("/etc/passwd", "absolute path not allowed"),
        (
            "base/../../x",
            "path must be in or below the current directory",
        ),
        ("hotpair.conf", "is not in a directory a base backup copies"),
    ] {
        let (st, _, err) = s1.replication_command(&format!("READ_DATA_FILE '{path}' 0 10"));
        assert_ne!(st, 0, "{path} refused");
        assert!(err.contains(msg), "{path}: {err}");
    }
    let (st, out, err) = s1.replication_command("LIST_DATA_FILES");
    assert_eq!(st, 0, "{err}");
    assert!(out.contains("global/catalog|"), "{out}");

    // 4. It follows the new primary as it is.
    s2.enable_streaming(&s1);
    s2.start();
    s1.wait_for_replay(&s2);
    assert_eq!(s2.safe_sql(KEEP), s1.safe_sql(KEEP), "standby 2 follows");
}
