//! Disk faults injected into a running primary (issue 21 items 1 and 2),
//! through the `faultfs` LD_PRELOAD library (`common/faultfs`): its rules
//! file makes the node's write, extension or fsync calls on matching files
//! fail with a chosen errno while the test runs.
//!
//! A ledger of acknowledged commits is kept on the client side; after
//! every fault it must be present in full — on the primary, and at the end
//! on a hot standby that streamed through all of it, whose table then
//! equals the primary's.
//!
//! 1. A table that cannot grow (ENOSPC on extension of `base/` files)
//!    fails the statement with 53100 `could not extend file …: No space
//!    left on device`; the server goes on, other sessions read, and once
//!    space is back the same insert works.
//! 2. A checkpoint that cannot write its buffers (EIO on `base/` writes)
//!    fails and says so in the log; the server goes on, and the next
//!    checkpoint succeeds.
//! 3. A failed fsync of a data file at a checkpoint PANICs (never retried
//!    as if the data were safe: PostgreSQL's `data_sync_retry = off`);
//!    the restart replays WAL from the last checkpoint.
//! 4. A failed fsync of WAL at commit PANICs; the commit is not
//!    acknowledged; the restart recovers everything acknowledged before.
//! 5. WAL that cannot be written (ENOSPC on `pg_wal/`) PANICs likewise.

use std::path::PathBuf;

use tap_tests::binaries::faultfs_path;
use tap_tests::{wait_until, Node};

/// The node's faultfs rules file.
struct Faults(PathBuf);

impl Faults {
    /// Loads faultfs into `node` from its next start, with no rules yet.
    fn install(node: &Node) -> Faults {
        let f = Faults(node.base_dir().join("faultfs.rules"));
        f.set("");
        node.set_env("LD_PRELOAD", &faultfs_path().display().to_string());
        node.set_env("HOTPAIR_FAULTFS", &f.0.display().to_string());
        f
    }

    /// Replaces the rules (atomically: the node reads them at every call).
    fn set(&self, rules: &str) {
        let tmp = self.0.with_extension("tmp");
        std::fs::write(&tmp, rules).expect("write rules");
        std::fs::rename(&tmp, &self.0).expect("rename rules");
    }
}

/// Acknowledged commits, by id.
struct Ledger(Vec<i64>);

impl Ledger {
    /// Inserts rows `from..from+n` one transaction each; records those
    /// whose COMMIT was acknowledged. Stops at the first failure.
    fn insert(&mut self, node: &Node, from: i64, n: i64) -> Result<(), String> {
        for id in from..from + n {
            node.sql(&format!("INSERT INTO ledger VALUES ({id}, 'row {id}')"))
                .map_err(|e| e.to_string())?;
            self.0.push(id);
        }
        Ok(())
    }

    /// Every acknowledged id is in the table.
    fn check(&self, node: &Node, when: &str) {
        let ids: Vec<String> = self.0.iter().map(|i| i.to_string()).collect();
        let present = node.safe_sql(&format!(
            "SELECT count(*) FROM ledger WHERE id IN ({})",
            ids.join(",")
        ));
        assert_eq!(
            present,
            self.0.len().to_string(),
            "{when}: every acknowledged commit is present"
        );
    }
}

/// Waits until the node's process has exited (a PANIC aborts it).
fn wait_for_exit(node: &Node, what: &str) {
    wait_until(what, || !node.is_running());
}

/// Sets `rule`, runs `trigger` (which must fail), waits for the PANIC
/// (the process exits, `expect` in its log), clears the rule, restarts
/// (crash recovery) and checks the ledger.
fn panic_and_recover(
    node: &Node,
    faults: &Faults,
    ledger: &Ledger,
    rule: &str,
    expect: &str,
    trigger: impl FnOnce(),
) {
    let at = node.log_position();
    faults.set(rule);
    trigger();
    wait_for_exit(node, &format!("{rule:?} PANICs"));
    assert!(
        node.log_contains_after(expect, at),
        "{}",
        node.log_since(at)
    );
    faults.set("");
    node.start();
    ledger.check(node, &format!("after the PANIC of {rule:?}"));
}

#[test]
fn disk_faults_end_in_postgresql_behaviour() {
    let primary = Node::new("primary");
    primary.init(true);
    primary.append_conf("fsync = on\nshared_buffers = 1MB");
    let faults = Faults::install(&primary);
    primary.start();
    primary.safe_sql("CREATE TABLE ledger (id bigint PRIMARY KEY, note text)");
    // A hot standby (without faults) streams throughout; after the faults
    // and the PANICs it has every acknowledged commit and equals the
    // primary.
    let standby = Node::standby_of(&primary, "standby");
    let mut ledger = Ledger(Vec::new());
    ledger
        .insert(&primary, 1, 20)
        .expect("inserts without faults");

    // 1. Disk full for data files.
    faults.set("extend ENOSPC /base/\n");
    match primary
        .sql("INSERT INTO ledger SELECT g, repeat('x', 300) FROM generate_series(1000, 4000) g")
    {
        Ok(out) => panic!("an insert that must extend the table succeeded: {out}"),
        Err(e) => {
            assert_eq!(e.code(), "53100", "{e}");
            let text = e.to_string();
            assert!(text.contains("could not extend"), "{text}");
            assert!(text.contains("No space left on device"), "{text}");
        }
    }
    assert_eq!(primary.safe_sql("SELECT count(*) FROM ledger"), "20");
    faults.set("");
    primary
        .sql("INSERT INTO ledger SELECT g, repeat('x', 300) FROM generate_series(1000, 4000) g")
        .expect("the same insert once space is back");
    ledger.0.extend(1000..=4000);
    ledger.check(&primary, "after disk full");

    // 2. A checkpoint that cannot write.
    ledger.insert(&primary, 21, 5).expect("inserts");
    let at = primary.log_position();
    faults.set("write EIO /base/\n");
    assert!(
        primary.sql("CHECKPOINT").is_err(),
        "a checkpoint whose writes fail reports it"
    );
    assert!(
        primary.log_contains_after("could not write block", at),
        "the failed write is logged"
    );
    assert!(primary.is_running(), "a failed data write is not a PANIC");
    faults.set("");
    primary.safe_sql("CHECKPOINT");
    ledger.check(&primary, "after a failed checkpoint");

    // 3. fsync of a data file fails at a checkpoint: PANIC.
    ledger.insert(&primary, 26, 5).expect("inserts");
    panic_and_recover(
        &primary,
        &faults,
        &ledger,
        "fsync EIO /base/\n",
        "PANIC:  could not fsync file",
        || assert!(primary.sql("CHECKPOINT").is_err()),
    );

    // 4. fsync of WAL fails at commit: PANIC, commit not acknowledged.
    panic_and_recover(
        &primary,
        &faults,
        &ledger,
        "fsync EIO /pg_wal/\n",
        "PANIC:  could not write or sync WAL",
        || {
            assert!(
                Ledger(Vec::new()).insert(&primary, 31, 1).is_err(),
                "a commit whose WAL fsync failed is not acknowledged"
            )
        },
    );

    // 5. WAL cannot be written (disk full): PANIC.
    panic_and_recover(
        &primary,
        &faults,
        &ledger,
        "write ENOSPC /pg_wal/\n",
        "No space left on device",
        || assert!(Ledger(Vec::new()).insert(&primary, 40, 1).is_err()),
    );
    ledger
        .insert(&primary, 41, 3)
        .expect("inserts after recovery");
    ledger.check(&primary, "at the end");
    primary.wait_for_replay(&standby);
    ledger.check(&standby, "on the standby at the end");
    let sum = "SELECT count(*), md5(string_agg(id || ':' || note, ',' ORDER BY id)) FROM ledger";
    assert_eq!(
        standby.safe_sql(sum),
        primary.safe_sql(sum),
        "the standby equals the primary"
    );
    standby.stop("fast");
    primary.stop("fast");
}
