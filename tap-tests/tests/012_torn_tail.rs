//! A torn or corrupted end of WAL ends redo cleanly.
//!
//! A crash can leave the last WAL record half written (the OS wrote some of
//! its pages) or garbled. Start-up must treat the first record that is not
//! complete and CRC-valid as the end of WAL: replay everything before it,
//! say where it stopped, never panic, and let the writer continue from
//! there — so that later commits and restarts work and no stale bytes of
//! the torn record are ever read as a record again.
//!
//! The test cuts the last segment in the middle of the last record (a
//! COMMIT), restarts, writes, then flips a byte inside the new last COMMIT
//! and restarts again.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use tap_tests::Node;

/// Size of a COMMIT record without subxids: 28-byte header + xid, time,
/// count (8 + 8 + 4), padded to 8.
const COMMIT_RECORD_LEN: u64 = 48;
const SEGMENT_SIZE: u64 = 1 << 20;

fn parse_lsn(s: &str) -> u64 {
    let (hi, lo) = s.trim().split_once('/').expect("an LSN");
    (u64::from_str_radix(hi, 16).unwrap() << 32) | u64::from_str_radix(lo, 16).unwrap()
}

fn fmt_lsn(l: u64) -> String {
    format!("{:X}/{:X}", l >> 32, l & 0xFFFF_FFFF)
}

/// The segment file holding byte `lsn` and the offset in it.
fn segment_of(node: &Node, lsn: u64) -> (PathBuf, u64) {
    let segno = lsn / SEGMENT_SIZE;
    let per_id = 0x1_0000_0000 / SEGMENT_SIZE;
    let name = format!("00000001{:08X}{:08X}", segno / per_id, segno % per_id);
    (
        node.data_dir().join("pg_wal").join(name),
        lsn % SEGMENT_SIZE,
    )
}

/// Inserts `id` in its own transaction; returns the end LSN of its COMMIT.
fn insert_and_commit(node: &Node, id: i32) -> u64 {
    node.safe_sql(&format!("INSERT INTO t VALUES ({id}, 'row {id}')"));
    parse_lsn(&node.safe_sql("SELECT pg_current_wal_insert_lsn()"))
}

#[test]
fn torn_and_corrupt_tail() {
    // 1. Some committed rows; the last one's COMMIT is the last record.
    let node = Node::new("primary");
    node.init(false);
    node.append_conf("wal_segment_size = 1MB\n");
    node.start();
    node.safe_sql("CREATE TABLE t (id int PRIMARY KEY, note text)");
    for id in 1..=20 {
        insert_and_commit(&node, id);
    }
    let end = insert_and_commit(&node, 21);
    let flushed = parse_lsn(&node.safe_sql("SELECT pg_current_wal_flush_lsn()"));
    assert_eq!(flushed, end, "the COMMIT is flushed (synchronous_commit)");
    node.stop("immediate");

    // 2. Cut the segment in the middle of that COMMIT record.
    let commit_start = end - COMMIT_RECORD_LEN;
    let (seg, off) = segment_of(&node, commit_start + COMMIT_RECORD_LEN / 2);
    let f = OpenOptions::new()
        .write(true)
        .open(&seg)
        .expect("last segment");
    f.set_len(off).unwrap();
    drop(f);

    // 3. Start-up replays up to the torn record and says where WAL ended.
    let pos = node.log_position();
    node.start();
    assert!(
        node.log_contains_after(&format!("at {}", fmt_lsn(commit_start)), pos),
        "end of WAL reported at the torn record {}",
        fmt_lsn(commit_start)
    );
    assert!(
        node.log_contains_after("redo done at", pos),
        "redo finished"
    );
    assert!(!node.log_contains("panicked"), "no panic");
    assert_eq!(
        node.safe_sql("SELECT count(*), max(id) FROM t"),
        "20|20",
        "everything before the torn COMMIT is there, its row is not"
    );

    // 4. Later writes and a clean restart work; the row can be written again.
    insert_and_commit(&node, 21);
    insert_and_commit(&node, 22);
    node.restart();
    assert_eq!(
        node.safe_sql("SELECT count(*), max(id) FROM t"),
        "22|22",
        "writes after the torn tail survive a restart"
    );

    // 5. Flip a byte inside the payload of the last COMMIT: a CRC failure
    //    ends redo at that record.
    insert_and_commit(&node, 23);
    let end = insert_and_commit(&node, 24);
    node.stop("immediate");
    let commit_start = end - COMMIT_RECORD_LEN;
    let (seg, off) = segment_of(&node, commit_start + 36);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&seg)
        .expect("last segment");
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, off).unwrap();
    b[0] ^= 0x5A;
    f.write_all_at(&b, off).unwrap();
    drop(f);
    let pos = node.log_position();
    node.start();
    assert!(
        node.log_contains_after(
            &format!(
                "incorrect resource manager data checksum in record at {}",
                fmt_lsn(commit_start)
            ),
            pos
        ),
        "CRC failure reported at {}",
        fmt_lsn(commit_start)
    );
    assert_eq!(
        node.safe_sql("SELECT count(*), max(id) FROM t"),
        "23|23",
        "the corrupted COMMIT's row is gone, the one before it is there"
    );
    insert_and_commit(&node, 25);
    node.restart();
    assert_eq!(
        node.safe_sql("SELECT count(*), max(id) FROM t"),
        "24|25",
        "writes after the corrupt tail survive a restart"
    );
}
