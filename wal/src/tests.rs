//! Reader and writer tests over real segment files: the failures they guard
//! against are a WAL end that is misread after a crash (a torn or corrupted
//! tail taken for records, or valid records lost), records lost or
//! reordered under concurrent insertion, and group commit not sharing
//! fsyncs.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use bytes::Bytes;
use proptest::prelude::*;

use crate::record::{build_record, record_end};
use crate::records::tests::any_record;
use crate::segment::{list_segments, segment_path, MIN_SEGMENT_SIZE};
use crate::*;

const SEG: u64 = MIN_SEGMENT_SIZE; // 4 KiB: many boundary crossings

fn noop(len: usize, fill: u8) -> WalRecord {
    WalRecord::Xlog(XlogRecord::Noop {
        data: Bytes::from(vec![fill; len]),
    })
}

fn commit(xid: u64) -> WalRecord {
    WalRecord::Xact(XactRecord::Commit {
        xid: pgtypes::TransactionId(xid),
        subxids: vec![],
        timestamp_us: 1,
    })
}

/// Waits for `cond`, panicking with `what` after 20 s.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Encodes records as a writer would, from `start`: returns the stream bytes
/// and each record's (start, end).
fn build_stream(recs: &[WalRecord], start: Lsn, seg: u64) -> (Vec<u8>, Vec<(Lsn, Lsn)>) {
    let mut out = Vec::new();
    let mut pos = start;
    let mut prev = Lsn::INVALID;
    let mut spans = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        let (rm, info) = r.rmgr_info();
        let mut payload = Vec::new();
        r.encode_payload(&mut payload);
        let bytes = build_record(i as u64 + 1, prev, rm as u8, info, &payload);
        let is_switch = matches!(r, WalRecord::Xlog(XlogRecord::Switch));
        let end = record_end(pos, bytes.len() as u32, is_switch, seg);
        out.extend_from_slice(&bytes);
        out.resize((end - start) as usize, 0);
        spans.push((pos, end));
        prev = pos;
        pos = end;
    }
    (out, spans)
}

/// Writes `bytes` (stream bytes from `start`) into segment files, creating
/// files only as far as the bytes go (the last one short).
fn write_stream(dir: &Path, start: Lsn, bytes: &[u8], seg: u64) {
    let mut pos = start;
    let mut off = 0;
    while off < bytes.len() {
        let n = ((seg - pos.segment_offset(seg)) as usize).min(bytes.len() - off);
        let f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(segment_path(dir, pos.segment_number(seg), seg))
            .unwrap();
        f.write_all_at(&bytes[off..off + n], pos.segment_offset(seg))
            .unwrap();
        off += n;
        pos += n as u64;
    }
}

fn read_all(dir: &Path, start: Lsn, seg: u64) -> (Vec<DecodedRecord>, EndOfWal) {
    let mut r = WalReader::new(dir, seg).unwrap();
    let mut out = Vec::new();
    for item in r.read_from(start) {
        match item {
            Ok(rec) => out.push(rec),
            Err(e) => return (out, e),
        }
    }
    unreachable!("iterator ends with Err")
}

/// Records that encode to at most 400 bytes (keeps every-offset tests quick).
fn small_record() -> impl Strategy<Value = WalRecord> {
    any_record().prop_filter("small", |r| {
        let mut v = Vec::new();
        r.encode_payload(&mut v);
        v.len() <= 400
    })
}

fn opts(fsync: bool) -> WalWriterOptions {
    WalWriterOptions::new(SEG, fsync)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A stream cut at every byte offset decodes exactly the records wholly
    /// before the cut and then asks for more (streaming) or reports the end
    /// of WAL at the first incomplete record (files); never panics.
    #[test]
    fn cut_at_every_offset(recs in proptest::collection::vec(small_record(), 1..6)) {
        let start = WalPosition::initial(SEG).end;
        let (bytes, spans) = build_stream(&recs, start, SEG);
        let dir = tempfile::tempdir().unwrap();
        for cut in 0..=bytes.len() {
            // Records whose tot_len bytes are all before the cut.
            let complete = spans
                .iter()
                .take_while(|(s, _)| {
                    let o = (*s - start) as usize;
                    let len = u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
                    o + len as usize <= cut
                })
                .count();
            // Streaming: one push of the prefix.
            let mut d = StreamDecoder::new(start, None, SEG);
            d.push(start, &bytes[..cut]).unwrap();
            let mut got = Vec::new();
            while let Some(r) = d.next_record().unwrap() {
                got.push(r.record);
            }
            prop_assert_eq!(&got[..], &recs[..complete], "stream cut at {}", cut);
            // Files: the prefix written, the last file short.
            for f in fs::read_dir(dir.path()).unwrap() {
                fs::remove_file(f.unwrap().path()).unwrap();
            }
            write_stream(dir.path(), start, &bytes[..cut], SEG);
            let (read, end) = read_all(dir.path(), start, SEG);
            prop_assert_eq!(read.len(), complete, "file cut at {}", cut);
            let end_lsn = if complete == 0 { start } else { spans[complete - 1].1 };
            prop_assert_eq!(end.lsn, end_lsn);
            prop_assert!(matches!(end.reason, EndReason::Truncated { .. } | EndReason::MissingSegment { .. }),
                "cut {}: {:?}", cut, end);
        }
    }

    /// Any chunking of a stream decodes the same records.
    #[test]
    fn stream_chunking(recs in proptest::collection::vec(any_record(), 1..8),
                       cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..10)) {
        let start = WalPosition::initial(SEG).end;
        let (bytes, spans) = build_stream(&recs, start, SEG);
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        points.push(0);
        points.push(bytes.len());
        points.sort_unstable();
        let mut d = StreamDecoder::new(start, None, SEG);
        let mut got = Vec::new();
        for w in points.windows(2) {
            d.push(start + w[0] as u64, &bytes[w[0]..w[1]]).unwrap();
            while let Some(r) = d.next_record().unwrap() {
                got.push((r.start_lsn, r.end_lsn, r.record));
            }
        }
        let want: Vec<_> = spans.iter().zip(&recs).map(|((s, e), r)| (*s, *e, r.clone())).collect();
        prop_assert_eq!(got, want);
    }

    /// A byte flipped inside a record's payload is reported as a CRC
    /// failure at that record's LSN; the records before it are intact.
    #[test]
    fn flipped_byte_is_crc_failure(lens in proptest::collection::vec(1usize..3000, 2..8),
                                   victim in any::<prop::sample::Index>(),
                                   byte in any::<prop::sample::Index>()) {
        let recs: Vec<_> = lens.iter().enumerate().map(|(i, l)| noop(*l, i as u8)).collect();
        let start = WalPosition::initial(SEG).end;
        let (mut bytes, spans) = build_stream(&recs, start, SEG);
        let k = victim.index(recs.len());
        let payload_start = (spans[k].0 - start) as usize + record::HEADER_LEN;
        let at = payload_start + byte.index(lens[k]);
        bytes[at] ^= 0x40;
        let dir = tempfile::tempdir().unwrap();
        write_stream(dir.path(), start, &bytes, SEG);
        let (read, end) = read_all(dir.path(), start, SEG);
        prop_assert_eq!(read.len(), k);
        prop_assert_eq!(end.lsn, spans[k].0);
        prop_assert!(matches!(end.reason, EndReason::BadCrc { .. }), "{:?}", end);
        // The streaming decoder agrees.
        let mut d = StreamDecoder::new(start, None, SEG);
        d.push(start, &bytes).unwrap();
        for _ in 0..k {
            prop_assert!(d.next_record().unwrap().is_some());
        }
        let e = d.next_record().unwrap_err();
        prop_assert_eq!(e.lsn, spans[k].0);
    }
}

#[test]
fn garbage_files_never_panic() {
    // Random bytes as WAL: the reader ends somewhere with a reason.
    let dir = tempfile::tempdir().unwrap();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut bytes = vec![0u8; 3 * SEG as usize];
    for b in bytes.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let start = WalPosition::initial(SEG).end;
    write_stream(dir.path(), start, &bytes, SEG);
    let (read, end) = read_all(dir.path(), start, SEG);
    assert!(read.is_empty());
    assert_eq!(end.lsn, start);
}

#[test]
fn writer_reader_round_trip_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let mut want = Vec::new();
    for i in 0..300u64 {
        let rec = match i % 5 {
            0 => commit(i),
            1 => WalRecord::Xlog(XlogRecord::FullPageImage {
                rel: pgtypes::RelFileId(1),
                fork: 0,
                block: pgtypes::BlockNumber(i as u32),
                page: Bytes::from(vec![i as u8; BLCKSZ]),
            }),
            2 => noop((i as usize * 37) % 5000, i as u8),
            3 => WalRecord::Heap(HeapRecord::Insert {
                rel: pgtypes::RelFileId(16384),
                block: pgtypes::BlockNumber(0),
                offset: i as u16,
                tuple: Bytes::from(vec![1; 40]),
                init_page: false,
            }),
            _ => WalRecord::Catalog {
                payload: Bytes::from_static(b"CREATE TABLE t"),
            },
        };
        let (s, e) = w.insert(pgtypes::TransactionId(i), &rec).unwrap();
        assert!(s.is_aligned() && e.is_aligned() && e > s);
        want.push((s, e, i, rec));
    }
    let end = want.last().unwrap().1;
    assert_eq!(w.insert_lsn(), end);
    assert_eq!(w.flush(end).unwrap(), end);
    assert!(w.flushed_lsn() >= end && w.write_lsn() >= end);
    let (read, eow) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    let got: Vec<_> = read
        .iter()
        .map(|r| (r.start_lsn, r.end_lsn, r.header.xid.0, r.record.clone()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(eow.lsn, end);
    assert_eq!(eow.reason, EndReason::Zeroed);
    assert!(
        list_segments(dir.path(), SEG).unwrap().len() > 100,
        "records crossed many segments"
    );
}

#[test]
fn one_mib_segments() {
    let seg = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(
        dir.path(),
        WalWriterOptions::new(seg, false),
        WalPosition::initial(seg),
    )
    .unwrap();
    let mut ends = Vec::new();
    for i in 0..400u64 {
        ends.push(
            w.insert(pgtypes::TransactionId(i), &noop(9000 + i as usize, 7))
                .unwrap(),
        );
    }
    w.flush(Lsn::MAX).unwrap();
    let (read, eow) = read_all(dir.path(), WalPosition::initial(seg).end, seg);
    assert_eq!(read.len(), 400);
    assert_eq!(eow.lsn, ends.last().unwrap().1);
    assert!(list_segments(dir.path(), seg).unwrap().len() >= 4);
}

#[test]
fn torn_tail_then_continue() {
    let dir = tempfile::tempdir().unwrap();
    let start = WalPosition::initial(SEG);
    let mut spans = Vec::new();
    {
        let w = WalWriter::open(dir.path(), opts(true), start).unwrap();
        for i in 0..40u64 {
            spans.push(
                w.insert(pgtypes::TransactionId(i), &noop(700, i as u8))
                    .unwrap(),
            );
        }
        w.shutdown().unwrap();
    }
    // Truncate the last segment in the middle of the last record.
    let (last_s, _) = *spans.last().unwrap();
    let (prev_s, prev_e) = spans[spans.len() - 2];
    let cut = last_s + 100;
    let f = OpenOptions::new()
        .write(true)
        .open(segment_path(dir.path(), cut.segment_number(SEG), SEG))
        .unwrap();
    f.set_len(cut.segment_offset(SEG)).unwrap();
    drop(f);
    let mut r = WalReader::new(dir.path(), SEG).unwrap();
    let n = r.read_from(start.end).take_while(|x| x.is_ok()).count();
    assert_eq!(n, 39);
    let e = r.next_record().unwrap_err();
    assert_eq!(e.lsn, last_s);
    assert!(matches!(e.reason, EndReason::Truncated { .. }), "{e}");
    assert_eq!(
        r.position(),
        WalPosition {
            end: prev_e,
            prev: prev_s
        }
    );
    // Continue writing from the end of valid WAL, as after crash recovery.
    let pos = r.position();
    let w = WalWriter::open(dir.path(), opts(true), pos).unwrap();
    let (_, e2) = w.insert(pgtypes::TransactionId(99), &commit(99)).unwrap();
    w.flush(e2).unwrap();
    drop(w);
    let (read, eow) = read_all(dir.path(), start.end, SEG);
    assert_eq!(read.len(), 40);
    assert_eq!(read[39].record, commit(99));
    assert_eq!(read[39].header.prev, prev_s);
    assert_eq!((eow.lsn, eow.reason), (e2, EndReason::Zeroed));
}

#[test]
fn stale_bytes_after_reopen_are_not_records() {
    // Records written past the point recovery stopped must not reappear
    // after new, shorter records are written over the start of them.
    let dir = tempfile::tempdir().unwrap();
    let start = WalPosition::initial(SEG);
    let mut spans = Vec::new();
    {
        let w = WalWriter::open(dir.path(), opts(false), start).unwrap();
        for i in 0..30u64 {
            spans.push(w.insert(pgtypes::TransactionId(i), &noop(300, 1)).unwrap());
        }
    }
    // Pretend recovery stopped after record 10 (e.g. record 11 was torn).
    let pos = WalPosition {
        end: spans[10].1,
        prev: spans[10].0,
    };
    let w = WalWriter::open(dir.path(), opts(false), pos).unwrap();
    // The same size as the old record 11: the old record 12 would link to it.
    let (s, e) = w
        .insert(pgtypes::TransactionId(500), &noop(300, 2))
        .unwrap();
    assert_eq!((s, e), spans[11]);
    w.flush(e).unwrap();
    drop(w);
    let (read, eow) = read_all(dir.path(), start.end, SEG);
    assert_eq!(read.len(), 12);
    assert_eq!((eow.lsn, eow.reason), (e, EndReason::Zeroed));
}

#[test]
fn concurrent_inserters_all_records_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let w = Arc::new(WalWriter::open(dir.path(), opts(true), WalPosition::initial(SEG)).unwrap());
    let threads = 8u64;
    let per = 150u64;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..per {
                    let xid = t * 1000 + i + 1;
                    let rec = if i % 3 == 0 {
                        noop((xid % 900) as usize, t as u8)
                    } else {
                        commit(xid)
                    };
                    let (s, e) = w.insert(pgtypes::TransactionId(xid), &rec).unwrap();
                    if i % 2 == 0 {
                        assert!(w.flush(e).unwrap() >= e);
                    }
                    mine.push((s, xid, rec));
                }
                mine
            })
        })
        .collect();
    let mut want: Vec<_> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    w.flush(Lsn::MAX).unwrap();
    want.sort_by_key(|x| x.0);
    let (read, eow) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    let got: Vec<_> = read
        .into_iter()
        .map(|r| (r.start_lsn, r.header.xid.0, r.record))
        .collect();
    assert_eq!(got.len() as u64, threads * per);
    assert_eq!(got, want);
    assert_eq!(eow.lsn, w.insert_lsn());
    // Each thread's records are in its own order.
    for t in 0..threads {
        let xs: Vec<_> = got
            .iter()
            .filter(|x| x.1 / 1000 == t)
            .map(|x| x.1)
            .collect();
        assert!(xs.windows(2).all(|p| p[0] < p[1]));
    }
}

#[test]
fn group_commit_shares_one_fsync() {
    // Hold the flusher, let N committers queue up, release it: all N are
    // made durable by a single round.
    let dir = tempfile::tempdir().unwrap();
    let w = Arc::new(WalWriter::open(dir.path(), opts(true), WalPosition::initial(SEG)).unwrap());
    let n = 16;
    w.pause_flusher(true);
    let before = w.stats();
    let barrier = Arc::new(Barrier::new(n + 1));
    let handles: Vec<_> = (0..n as u64)
        .map(|i| {
            let (w, b) = (Arc::clone(&w), Arc::clone(&barrier));
            std::thread::spawn(move || {
                b.wait();
                let (_, e) = w
                    .insert(pgtypes::TransactionId(i + 1), &commit(i + 1))
                    .unwrap();
                w.flush(e).unwrap();
            })
        })
        .collect();
    barrier.wait();
    wait_until("all committers waiting", || w.waiting() == n);
    w.pause_flusher(false);
    for h in handles {
        h.join().unwrap();
    }
    let after = w.stats();
    assert_eq!(after.records - before.records, n as u64);
    assert_eq!(after.writes - before.writes, 1, "one flusher round");
    // One fsync, or two if the batch crossed into the next segment.
    let fsyncs = after.fsyncs - before.fsyncs;
    assert!((1..=2).contains(&fsyncs), "{fsyncs} fsyncs for {n} commits");
}

#[test]
fn group_commit_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let w = Arc::new(
        WalWriter::open(
            dir.path(),
            WalWriterOptions::new(1 << 20, true),
            WalPosition::initial(1 << 20),
        )
        .unwrap(),
    );
    let (threads, per) = (32u64, 10u64);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                for i in 0..per {
                    let (_, e) = w
                        .insert(pgtypes::TransactionId(t * 100 + i), &commit(t * 100 + i))
                        .unwrap();
                    w.flush(e).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = w.stats();
    assert_eq!(s.records, threads * per);
    assert!(
        s.fsyncs < threads * per,
        "{} fsyncs for {} commits",
        s.fsyncs,
        threads * per
    );
}

#[test]
fn synchronous_commits_never_wait_for_the_flusher_thread() {
    // Committers lead every round themselves: one that finds a round under
    // way is woken by its leader (covered, or to lead the next round) and
    // never hands the work to the flusher thread. With a writer delay far
    // beyond the test, any round of the flusher's would have been asked for
    // by a committer.
    let dir = tempfile::tempdir().unwrap();
    let mut o = WalWriterOptions::new(16 << 20, true);
    o.writer_delay = Duration::from_secs(3600);
    let w = Arc::new(WalWriter::open(dir.path(), o, WalPosition::initial(16 << 20)).unwrap());
    let (threads, per) = (16u64, 20u64);
    let barrier = Arc::new(Barrier::new(threads as usize));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (w, b) = (Arc::clone(&w), Arc::clone(&barrier));
            std::thread::spawn(move || {
                b.wait();
                for i in 0..per {
                    let x = t * 100 + i + 1;
                    let (_, e) = w.insert(pgtypes::TransactionId(x), &commit(x)).unwrap();
                    assert!(w.flush(e).unwrap() >= e);
                    assert!(w.flushed_lsn() >= e, "returned before durable");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = w.stats();
    assert_eq!(s.records, threads * per);
    assert_eq!(w.flusher_writes(), 0, "the flusher thread wrote a round");
    assert!(s.writes >= 1 && s.fsyncs == s.writes);
}

#[test]
fn fsync_off_skips_sync_and_async_commit_is_written_by_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(false);
    o.writer_delay = Duration::from_millis(5);
    let w = WalWriter::open(dir.path(), o, WalPosition::initial(SEG)).unwrap();
    let (_, e) = w.insert(pgtypes::TransactionId(1), &commit(1)).unwrap();
    // No flush call: the flusher writes it within wal_writer_delay.
    wait_until("background write", || w.flushed_lsn() >= e);
    let (_, e2) = w.insert(pgtypes::TransactionId(2), &commit(2)).unwrap();
    w.request_flush(e2);
    wait_until("requested flush", || w.flushed_lsn() >= e2);
    assert_eq!(w.stats().fsyncs, 0);
    let (read, _) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    assert_eq!(read.len(), 2);
}

#[test]
fn flushed_watch_for_async_waiters() {
    let dir = tempfile::tempdir().unwrap();
    let w = Arc::new(WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap());
    let mut rx = w.subscribe_flushed();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, e) = w.insert(pgtypes::TransactionId(1), &commit(1)).unwrap();
    let w2 = Arc::clone(&w);
    let t = std::thread::spawn(move || w2.flush(e).unwrap());
    let seen = rt.block_on(async { *rx.wait_for(|l| *l >= e).await.unwrap() });
    assert!(seen >= e);
    t.join().unwrap();
}

/// A committer that finds a round under way joins it: the flusher is
/// asked to cover its record, so the async wait ends without anyone else
/// leading; with no round under way it is told to lead.
#[test]
fn a_commit_joins_a_round_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let w = Arc::new(WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, e1) = w.insert(pgtypes::TransactionId(1), &commit(1)).unwrap();
    assert_eq!(w.join_round(e1), None, "no round under way: lead it");
    w.flush(e1).unwrap();
    assert_eq!(w.join_round(e1), None, "durable: nothing to join");

    let (_, e2) = w.insert(pgtypes::TransactionId(2), &commit(2)).unwrap();
    let round = w.hold_round();
    assert_eq!(w.join_round(e2), Some(e2), "a round under way: join");
    let wait = w.wait_flushed(e2);
    drop(round);
    let flushed = rt.block_on(wait).unwrap();
    assert!(flushed >= e2, "the flusher covered the joined commit");
}

/// The written LSN is published before the fsync, for a standby's replay.
#[test]
fn written_watch_moves_with_each_round() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let rx = w.subscribe_written();
    let (_, e) = w.insert(pgtypes::TransactionId(1), &commit(1)).unwrap();
    assert!(*rx.borrow() < e, "not written yet");
    w.flush(e).unwrap();
    assert!(*rx.borrow() >= e, "published");
    assert!(w.write_lsn() >= e, "write LSN too");
}

#[test]
fn switch_record_ends_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    w.insert(pgtypes::TransactionId(0), &commit(1)).unwrap();
    let (s, e) = w
        .insert(
            pgtypes::TransactionId(0),
            &WalRecord::Xlog(XlogRecord::Switch),
        )
        .unwrap();
    assert_eq!(e, Lsn::from_segment(s.segment_number(SEG) + 1, SEG));
    let (s2, e2) = w.insert(pgtypes::TransactionId(0), &commit(2)).unwrap();
    assert_eq!(s2, e);
    w.flush(e2).unwrap();
    let (read, eow) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    assert_eq!(read.len(), 3);
    assert_eq!(read[1].end_lsn, e);
    assert_eq!(read[2].start_lsn, e);
    assert_eq!(eow.lsn, e2);
}

#[test]
fn read_limit_and_retry() {
    // A standby's startup process reads only up to the flushed LSN and
    // retries when it moves.
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let spans: Vec<_> = (0..20u64)
        .map(|i| w.insert(pgtypes::TransactionId(i), &noop(500, 3)).unwrap())
        .collect();
    w.flush(Lsn::MAX).unwrap();
    let mut r = WalReader::new(dir.path(), SEG).unwrap();
    r.seek(WalPosition::initial(SEG).end, None);
    r.set_read_limit(spans[5].1 + 10);
    for _ in 0..6 {
        r.next_record().unwrap();
    }
    let e = r.next_record().unwrap_err();
    assert_eq!(e.lsn, spans[6].0);
    assert!(matches!(e.reason, EndReason::ReadLimit { .. }));
    r.set_read_limit(Lsn::MAX);
    for (s, _) in &spans[6..] {
        assert_eq!(r.next_record().unwrap().start_lsn, *s);
    }
    assert_eq!(r.next_record().unwrap_err().reason, EndReason::Zeroed);
    // Tailing: more WAL appears, the same reader continues.
    let (s, _) = w.insert(pgtypes::TransactionId(0), &commit(9)).unwrap();
    w.flush(Lsn::MAX).unwrap();
    assert_eq!(r.next_record().unwrap().start_lsn, s);
}

#[test]
fn prev_link_checked() {
    let start = WalPosition::initial(SEG).end;
    let (bytes, spans) = build_stream(&[commit(1), commit(2)], start, SEG);
    let mut d = StreamDecoder::new(start, Some(Lsn(12345)), SEG);
    d.push(start, &bytes).unwrap();
    let e = d.next_record().unwrap_err();
    assert_eq!(
        e.reason,
        EndReason::BadPrevLink {
            expected: Lsn(12345),
            found: Lsn::INVALID
        }
    );
    let mut d = StreamDecoder::new(spans[1].0, Some(spans[0].0), SEG);
    d.push(start, &bytes).unwrap();
    assert_eq!(d.next_record().unwrap().unwrap().record, commit(2));
    assert_eq!(
        e.to_string(),
        format!("record with incorrect prev-link 0/0 at {start} (expected 0/3039)")
    );
}

#[test]
fn write_raw_mirrors_a_primary() {
    // The walreceiver path: bytes read raw from the primary's files, pushed
    // in odd chunks with overlaps, give the standby an identical log.
    let pdir = tempfile::tempdir().unwrap();
    let sdir = tempfile::tempdir().unwrap();
    let start = WalPosition::initial(SEG);
    let p = WalWriter::open(pdir.path(), opts(false), start).unwrap();
    for i in 0..100u64 {
        p.insert(
            pgtypes::TransactionId(i),
            &noop((i as usize * 53) % 2000, i as u8),
        )
        .unwrap();
    }
    let end = p.flush(Lsn::MAX).unwrap();
    let s = WalWriter::open(sdir.path(), opts(true), start).unwrap();
    let mut dec = StreamDecoder::new(start.end, None, SEG);
    let mut pos = start.end;
    let mut step = 1u64;
    let mut buf = vec![0u8; 5000];
    let mut decoded = 0;
    while pos < end {
        // Resend up to 100 bytes already sent (overlap) plus `step` new
        // ones; a raw read never crosses a segment end.
        let from = Lsn(pos
            .0
            .saturating_sub(100)
            .max(pos.segment_start(SEG).0)
            .max(start.end.0));
        let want = ((pos - from) as usize + step as usize)
            .min(buf.len())
            .min((end - from) as usize);
        let n = read_raw(pdir.path(), SEG, from, &mut buf[..want]).unwrap();
        s.write_raw(from, &buf[..n]).unwrap();
        dec.push(from, &buf[..n]).unwrap();
        while dec.next_record().unwrap().is_some() {
            decoded += 1;
        }
        assert!(from + n as u64 > pos, "progress");
        pos = from + n as u64;
        step = step * 7 % 4999 + 1;
    }
    assert_eq!(s.flush(end).unwrap(), end);
    assert_eq!(decoded, 100);
    assert!(matches!(
        s.write_raw(end + 8, b"x"),
        Err(WalError::Gap { .. })
    ));
    let (a, ea) = read_all(pdir.path(), start.end, SEG);
    let (b, eb) = read_all(sdir.path(), start.end, SEG);
    assert_eq!(a, b);
    assert_eq!(ea, eb);
}

#[test]
fn remove_old_segments() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    for i in 0..50u64 {
        w.insert(pgtypes::TransactionId(i), &noop(1000, 0)).unwrap();
    }
    let end = w.flush(Lsn::MAX).unwrap();
    let redo = Lsn::from_segment(5, SEG) + 100;
    let before = list_segments(dir.path(), SEG).unwrap();
    assert_eq!(before[0], 1);
    assert_eq!(w.remove_segments_before(redo).unwrap(), 4);
    assert_eq!(list_segments(dir.path(), SEG).unwrap()[0], 5);
    // Never beyond what is flushed.
    w.remove_segments_before(Lsn::MAX).unwrap();
    assert_eq!(
        list_segments(dir.path(), SEG).unwrap()[0],
        end.segment_number(SEG)
    );
    let mut r = WalReader::new(dir.path(), SEG).unwrap();
    r.seek(Lsn::from_segment(1, SEG), None);
    assert_eq!(
        r.next_record().unwrap_err().reason,
        EndReason::MissingSegment { segno: 1 }
    );
    let mut out = [0u8; 8];
    assert_eq!(
        read_raw(dir.path(), SEG, Lsn::from_segment(1, SEG), &mut out)
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::NotFound
    );
}

#[test]
fn shutdown_refuses_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let (_, e) = w.insert(pgtypes::TransactionId(1), &commit(1)).unwrap();
    assert_eq!(w.shutdown().unwrap(), e);
    assert!(matches!(
        w.insert(pgtypes::TransactionId(2), &commit(2)),
        Err(WalError::ShutDown)
    ));
    assert_eq!(w.shutdown().unwrap(), e);
}

#[test]
fn small_buffer_limit_applies_back_pressure() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(false);
    o.buffer_limit = 2048;
    let w = Arc::new(WalWriter::open(dir.path(), o, WalPosition::initial(SEG)).unwrap());
    let hs: Vec<_> = (0..4u64)
        .map(|t| {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                for i in 0..100 {
                    w.insert(pgtypes::TransactionId(t), &noop(500 + i, 1))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    w.flush(Lsn::MAX).unwrap();
    let (read, _) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    assert_eq!(read.len(), 400);
    assert!(w.stats().writes > 10);
}

#[test]
fn record_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let r = w.insert_payload(
        pgtypes::TransactionId(0),
        0,
        0x20,
        &vec![0u8; record::MAX_RECORD_LEN as usize],
    );
    assert!(matches!(r, Err(WalError::RecordTooLarge { .. })));
}

#[test]
fn writer_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<WalWriter>();
    assert_send_sync::<WalReader>();
    assert_send_sync::<StreamDecoder>();
}

#[test]
fn write_failure_fails_waiters_instead_of_hanging() {
    // Make the next segment impossible to create: a directory in its place.
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    fs::create_dir(segment_path(dir.path(), 2, SEG)).unwrap();
    let mut last = Lsn::INVALID;
    for i in 0..10u64 {
        last = w
            .insert(pgtypes::TransactionId(i), &noop(1000, 1))
            .unwrap()
            .1;
    }
    assert!(last.segment_number(SEG) >= 2);
    assert!(matches!(w.flush(last), Err(WalError::Failed(_))));
    assert!(matches!(
        w.insert(pgtypes::TransactionId(0), &commit(1)),
        Err(WalError::Failed(_))
    ));
    assert!(w.shutdown().is_err());
}

#[test]
fn write_behind_makes_wal_durable_without_a_flush_request() {
    // A writer delay of an hour: only write-behind can write anything.
    let dir = tempfile::tempdir().unwrap();
    let mut o = WalWriterOptions::new(1 << 20, true);
    o.writer_delay = Duration::from_secs(3600);
    o.flush_after = 64 << 10;
    let w = WalWriter::open(dir.path(), o, WalPosition::initial(1 << 20)).unwrap();
    let start = w.insert_lsn();
    let mut ends = Vec::new();
    for i in 0..100u64 {
        ends.push(
            w.insert(pgtypes::TransactionId(i), &noop(1000, 1))
                .unwrap()
                .1,
        );
    }
    // The insert that took the pending bytes past 64 kB asked for a round;
    // nobody called flush.
    let crossed = ends
        .iter()
        .copied()
        .find(|e| *e - start >= 64 << 10)
        .unwrap();
    wait_until("write-behind", || w.flushed_lsn() >= crossed);
    assert!(w.stats().fsyncs >= 1);
    let (read, _) = read_all(dir.path(), start, 1 << 20);
    assert!(read.len() >= 60, "{} records on disk", read.len());
}

#[test]
fn write_behind_off_leaves_wal_to_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = WalWriterOptions::new(1 << 20, false);
    o.writer_delay = Duration::from_secs(3600);
    o.flush_after = 0;
    let w = WalWriter::open(dir.path(), o, WalPosition::initial(1 << 20)).unwrap();
    let start = w.insert_lsn();
    let mut last = start;
    for i in 0..100u64 {
        last = w
            .insert(pgtypes::TransactionId(i), &noop(1000, 1))
            .unwrap()
            .1;
    }
    // Nothing asked for a round: nothing was written (the flusher only
    // wakes for requests, and the delay is an hour).
    assert_eq!(w.flushed_lsn(), start);
    assert_eq!(w.flush(last).unwrap(), last);
}

/// A timeline switch in mid-segment (a standby following a promotion):
/// the segment holding the switch point exists under both timelines, the
/// new copy holds the old bytes up to the switch and the new records
/// after it, later segments carry only the new timeline, and a reader
/// (which takes the highest timeline of each segment) reads one unbroken
/// chain across the switch. A switch anywhere but the flushed end is
/// refused, as is one to an older timeline.
#[test]
fn switch_timeline_continues_in_a_copy() {
    use pgtypes::TimeLineId;
    let dir = tempfile::tempdir().unwrap();
    let w = WalWriter::open(dir.path(), opts(false), WalPosition::initial(SEG)).unwrap();
    let mut last = Lsn::INVALID;
    for i in 0..5u8 {
        last = w
            .insert(pgtypes::TransactionId::INVALID, &noop(700, i))
            .unwrap()
            .1;
    }
    w.flush(last).unwrap();
    assert_eq!(w.timeline(), crate::segment::TIMELINE);
    assert!(
        w.switch_timeline(TimeLineId(2), last + 8).is_err(),
        "not the end"
    );
    let at = last;
    w.switch_timeline(TimeLineId(2), at).unwrap();
    assert!(w.switch_timeline(TimeLineId(2), last).is_err(), "not newer");
    assert_eq!(w.timeline(), TimeLineId(2));
    for i in 0..20u8 {
        last = w
            .insert(pgtypes::TransactionId::INVALID, &noop(700, 100 + i))
            .unwrap()
            .1;
    }
    w.flush(last).unwrap();
    let switch_seg = at.segment_number(SEG);
    let files = crate::segment::list_segment_files(dir.path(), SEG).unwrap();
    assert!(files.iter().all(|(t, _)| t.0 <= 2));
    let tli1: Vec<u64> = files
        .iter()
        .filter(|(t, _)| t.0 == 1)
        .map(|(_, s)| *s)
        .collect();
    let tli2: Vec<u64> = files
        .iter()
        .filter(|(t, _)| t.0 == 2)
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(tli1.last(), Some(&switch_seg), "{files:?}");
    assert_eq!(tli2.first(), Some(&switch_seg), "{files:?}");
    assert!(tli2.len() > 2, "{files:?}");
    let (recs, end) = read_all(dir.path(), WalPosition::initial(SEG).end, SEG);
    assert_eq!(recs.len(), 25, "one chain across the switch: {end}");
    assert_eq!(end.lsn, last);
    w.shutdown().unwrap();
}
