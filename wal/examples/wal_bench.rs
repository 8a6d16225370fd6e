//! Group-commit benchmark for the WAL writer: N threads each loop
//! `insert(heap insert) + insert(commit) + flush(commit end)` — what a
//! single-row INSERT transaction does to WAL — with fsync on, and report
//! commits/s and fsyncs per commit. Then measure decode speed (redo reading
//! WAL) in MB/s.
//!
//! Run by hand, in release: `cargo run --release -p wal --example wal_bench
//! [seconds-per-run] [dir]`. The directory defaults to a temp dir; point it at
//! the disk you care about.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use wal::{
    HeapRecord, Lsn, WalPosition, WalReader, WalRecord, WalWriter, WalWriterOptions, XactRecord,
    DEFAULT_SEGMENT_SIZE,
};

fn main() -> anyhow_free::Result {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let base = match args.get(2) {
        Some(d) => tempfile::tempdir_in(d)?,
        None => tempfile::tempdir()?,
    };
    let seg = DEFAULT_SEGMENT_SIZE;
    println!(
        "WAL group commit, fsync=on, wal_segment_size=16MB, {secs}s per run, dir {}",
        base.path().display()
    );
    println!(
        "{:>8} {:>12} {:>12} {:>14} {:>12}",
        "threads", "commits", "commits/s", "fsyncs/commit", "avg µs"
    );
    for threads in [1usize, 8, 32] {
        let dir = base.path().join(format!("pg_wal_{threads}"));
        let w = Arc::new(WalWriter::open(
            &dir,
            WalWriterOptions::new(seg, true),
            WalPosition::initial(seg),
        )?);
        // Warm up: create the first segments outside the measurement.
        let (_, e) = w.insert(
            pgtypes::TransactionId(0),
            &WalRecord::Xlog(wal::XlogRecord::Noop { data: Bytes::new() }),
        )?;
        w.flush(e)?;
        let stop = Arc::new(AtomicBool::new(false));
        let commits = Arc::new(AtomicU64::new(0));
        let before = w.stats();
        let t0 = Instant::now();
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (w, stop, commits) = (Arc::clone(&w), Arc::clone(&stop), Arc::clone(&commits));
                std::thread::spawn(move || -> Result<(), wal::WalError> {
                    let tuple = Bytes::from(vec![7u8; 60]);
                    let mut xid = (t as u64) << 40;
                    while !stop.load(Ordering::Relaxed) {
                        xid += 1;
                        let ins = WalRecord::Heap(HeapRecord::Insert {
                            rel: pgtypes::ids::RelFileId(16384),
                            block: pgtypes::ids::BlockNumber(t as u32),
                            offset: 1,
                            tuple: tuple.clone(),
                            init_page: false,
                        });
                        w.insert(pgtypes::TransactionId(xid), &ins)?;
                        let commit = WalRecord::Xact(XactRecord::Commit {
                            xid: pgtypes::ids::TransactionId(xid),
                            subxids: vec![],
                            timestamp_us: 0,
                        });
                        let (_, end) = w.insert(pgtypes::TransactionId(xid), &commit)?;
                        w.flush(end)?;
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().map_err(|_| "thread panicked")??;
        }
        let el = t0.elapsed().as_secs_f64();
        let after = w.stats();
        let n = commits.load(Ordering::Relaxed);
        let fsyncs = after.fsyncs - before.fsyncs;
        println!(
            "{:>8} {:>12} {:>12.0} {:>14.3} {:>12.1}",
            threads,
            n,
            n as f64 / el,
            fsyncs as f64 / n.max(1) as f64,
            el * 1e6 * threads as f64 / n.max(1) as f64
        );
    }

    // Decode speed: write ~128 MiB of mixed records (fsync off), read back.
    let dir = base.path().join("pg_wal_redo");
    let w = WalWriter::open(
        &dir,
        WalWriterOptions::new(seg, false),
        WalPosition::initial(seg),
    )?;
    let page = Bytes::from(vec![3u8; wal::BLCKSZ]);
    let tuple = Bytes::from(vec![7u8; 100]);
    let mut i = 0u64;
    while w.insert_lsn() - WalPosition::initial(seg).end < 128 << 20 {
        i += 1;
        let rec = match i % 20 {
            0 => WalRecord::Xlog(wal::XlogRecord::FullPageImage {
                rel: pgtypes::ids::RelFileId(1),
                fork: 0,
                block: pgtypes::ids::BlockNumber(i as u32),
                page: page.clone(),
            }),
            1..=9 => WalRecord::Heap(HeapRecord::Insert {
                rel: pgtypes::ids::RelFileId(1),
                block: pgtypes::ids::BlockNumber((i / 50) as u32),
                offset: (i % 50) as u16,
                tuple: tuple.clone(),
                init_page: false,
            }),
            _ => WalRecord::Xact(XactRecord::Commit {
                xid: pgtypes::ids::TransactionId(i),
                subxids: vec![],
                timestamp_us: 0,
            }),
        };
        w.insert(pgtypes::TransactionId(i), &rec)?;
    }
    let end = w.flush(Lsn::MAX)?;
    drop(w);
    let mut r = WalReader::new(&dir, seg)?;
    let t0 = Instant::now();
    let mut n = 0u64;
    let mut eow = None;
    for rec in r.read_from(WalPosition::initial(seg).end) {
        match rec {
            Ok(_) => n += 1,
            Err(e) => eow = Some(e),
        }
    }
    let el = t0.elapsed().as_secs_f64();
    let mb = (end - WalPosition::initial(seg).end) as f64 / (1 << 20) as f64;
    println!(
        "decode: {n} records, {mb:.0} MiB in {el:.2}s = {:.0} MB/s ({:.0} records/s); stopped: {}",
        mb / el,
        n as f64 / el,
        eow.map(|e| e.to_string()).unwrap_or_default()
    );
    Ok(())
}

/// Examples may not add dependencies; a boxed error is enough here.
mod anyhow_free {
    /// Result of `main`.
    pub type Result = std::result::Result<(), Box<dyn std::error::Error>>;
}
