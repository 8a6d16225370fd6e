//! The WAL writer: insertion, flushing with group commit, and a flusher
//! thread (PostgreSQL's `XLogInsert` / `XLogFlush` / walwriter, simplified).
//!
//! ```text
//!  session threads                          flusher thread ("walwriter")
//!  ───────────────                          ────────────────────────────
//!  encode payload, CRC payload  (no lock)   wakes for asynchronous commits
//!  ┌ insert lock ───────────────┐           (wal_writer_delay), write-behind
//!  │ start = insert_pos         │           (flush_after bytes pending), a
//!  │ finish CRC with prev-link  │           full buffer, a WAL switch, or a
//!  │ append header+payload+pad  │           segment to pre-allocate — never
//!  │                            │           for a synchronous commit
//!  │ insert_pos = end           │
//!  └────────────────────────────┘
//!  flush(end):
//!    round lock free? ── yes ──▶ do the round here:
//!        │                         swap `buf` with spare (insert lock),
//!        no                        pwrite, fdatasync, flushed_lsn = end of
//!        ▼                         batch; let go of the round lock; wake
//!    join `waiters`, park          the covered waiters + one uncovered
//!    woken: covered → return;      (it leads the next round)
//!           not → lead the next round
//! ```
//!
//! **Group commit.** A round always takes *everything* inserted so far,
//! writes it and syncs once (PostgreSQL's XLogFlush likewise writes up to
//! the insert position, not just to its own record). A committer that finds
//! nobody flushing does the round itself, as a PostgreSQL backend does in
//! XLogFlush — no hand-off to another thread and back, which costs two
//! wake-ups per commit. While a round syncs, more sessions insert, find the
//! round lock taken and park in `waiters` with their target LSN. The
//! leader, once it lets go of the round lock ([`end_round`]), unparks each
//! waiter its fsync covered and exactly one that it did not; that one leads
//! the next round, which covers every waiter still parked (all inserted
//! before it swapped the buffer), with one fsync. With N concurrent
//! committers fsyncs per commit therefore tend to 1/N of what a single
//! committer needs, without any artificial delay, and each commit costs
//! one wake-up at most. Nobody asks the flusher thread for help: if a
//! waiter did, the flusher would wake for every waiting commit and then take
//! the rounds itself, handing every commit back across threads. Neither a
//! condvar's `notify_all` (whose waiters are woken one after another as
//! each takes and drops its mutex, and most of whom would find the next
//! round taken and sleep again) nor any other lock is involved.
//! `stats().fsyncs` counts the syncs.
//!
//! **Locks**, in the only orders they are ever nested: `round` → `insert`
//! and `round` → `waiters` (a failing round wakes everyone); `signal` is
//! taken alone and nothing is taken under `waiters`; `create` is taken
//! alone (pre-allocation) or under `round` (a round that needs a segment
//! nobody created yet). `round` is held by whoever does
//! a round (it owns the open segment files); `insert` guards the pending
//! buffer and the insert position and is held only to append bytes (a
//! memcpy plus 24 bytes of CRC) or to swap the buffer; `signal` carries
//! requests to the flusher thread; `waiters` lists parked committers and
//! is held only to push or to pick who to wake (the unparking happens
//! after it is dropped). The LSNs are also published in atomics, so
//! `insert_lsn()`, `write_lsn()` and `flushed_lsn()` take no lock.
//!
//! **Invariants.** `flushed_lsn ≤ write_lsn ≤ insert_lsn`; every byte below
//! `insert_lsn` is in the pending buffer or written to its segment file;
//! every byte below `flushed_lsn` is durable (with `fsync = on`). The
//! pending buffer holds at most about `buffer_limit` bytes: an inserter that
//! finds it full asks for a write and waits for the flusher to take it.
//!
//! **Write-behind.** Every `flush_after` bytes (1 MiB, PostgreSQL's
//! `wal_writer_flush_after`) pending since the last round, the inserter that
//! crossed the mark asks the flusher thread for a round, which writes and
//! syncs them while the sessions go on inserting. A transaction that
//! writes a lot of WAL (COPY: about 14 MB per 100,000-row file) then finds
//! most of it durable at commit and syncs only its tail, instead of writing
//! and syncing all of it on its commit path while the other core sits idle.
//!
//! **Segments.** A round creates segment files on first use (zero-filled,
//! see `segment`); as soon as the current one is in use the flusher thread
//! pre-allocates the next — asked by a committer's round, after it woke its
//! waiters — so a commit rarely waits for a zero-fill. Pre-allocation holds
//! the `create` lock, not the round lock, so rounds go on during the
//! zero-fill.
//!
//! **Failures.** If a write or sync fails, WAL can no longer be made durable.
//! A server's writer ([`WalWriterOptions::panic_on_failure`]) PANICs, as
//! PostgreSQL does: the process aborts and the restart's crash recovery
//! finds what is durable. Otherwise (tests, tools) the writer enters a
//! failed state in which every later insert and flush returns
//! [`WalError::Failed`].
//!
//! **Timelines.** New segments are created under the writer's timeline
//! ([`WalWriterOptions::timeline`]); opening on a newer timeline than the
//! segment holding `pos.end` copies that segment under the new name up to
//! `pos.end` (promotion), and [`WalWriter::switch_timeline`] does the same
//! for a running standby's writer under the round, insert and create locks
//! (in that order), with nothing pending. See `segment` for why readers
//! then find the right file.
//!
//! **Opening.** [`WalWriter::open`] continues at the end of valid WAL found by
//! recovery ([`WalPosition`]): it zeroes the current segment from that point
//! on and deletes any later segments, so bytes of a torn tail can never be
//! mistaken for records written after the restart.

use pgtypes::fileutil::fsync_dir;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::sync::watch;

use crate::reader::WalPosition;
use crate::record::{finish_crc, record_end, RecordHeader, HEADER_LEN, MAX_RECORD_LEN};
use crate::records::{RmgrId, WalRecord, XLOG_SWITCH};
use crate::segment::{
    adopt_segment, check_segment_size, create_segment, remove_segments_after,
    remove_segments_before, segment_path_tli, zero_fill,
};
use crate::WalError;
use pgtypes::lsn::{AtomicLsn, Lsn};
use pgtypes::{TimeLineId, TransactionId};

/// Settings of a [`WalWriter`].
#[derive(Debug, Clone)]
pub struct WalWriterOptions {
    /// `wal_segment_size` in bytes (power of two).
    pub segment_size: u64,
    /// `fsync`: sync WAL to disk before reporting it flushed. Off only for
    /// tests that say so: a crash of the machine may then lose commits.
    pub fsync: bool,
    /// `wal_writer_delay`: how often pending WAL is written without a flush
    /// request (asynchronous commits).
    pub writer_delay: Duration,
    /// `wal_buffers`: pending bytes beyond which inserters wait for the
    /// flusher.
    pub buffer_limit: usize,
    /// `wal_writer_flush_after`: once this many bytes are pending the
    /// flusher thread writes and syncs them in the background (write-
    /// behind), so a large transaction's commit syncs only its tail. 0
    /// turns write-behind off.
    pub flush_after: usize,
    /// The timeline new segments are named with (see `segment`).
    pub timeline: TimeLineId,
    /// A failed write, fsync or segment creation PANICs the process
    /// ([`pgtypes::fileutil::panic_abort`]) instead of only putting the
    /// writer in its failed state: what a server wants (PostgreSQL PANICs
    /// there, and the restart's crash recovery finds what is durable);
    /// tests of the failed state and tools leave it off.
    pub panic_on_failure: bool,
}

impl WalWriterOptions {
    /// Options with PostgreSQL-like defaults for the rest (200 ms writer
    /// delay, 16 MiB of buffers, write-behind every 1 MiB).
    pub fn new(segment_size: u64, fsync: bool) -> WalWriterOptions {
        WalWriterOptions {
            segment_size,
            fsync,
            writer_delay: Duration::from_millis(200),
            buffer_limit: 16 << 20,
            flush_after: 1 << 20,
            timeline: crate::segment::TIMELINE,
            panic_on_failure: false,
        }
    }

    /// The same options writing timeline `tli`.
    pub fn with_timeline(mut self, tli: TimeLineId) -> WalWriterOptions {
        self.timeline = tli;
        self
    }

    /// The same options, PANICking on a failure (a server's writer; see
    /// [`WalWriterOptions::panic_on_failure`]).
    pub fn panicking(mut self) -> WalWriterOptions {
        self.panic_on_failure = true;
        self
    }
}

/// Counters since the writer was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Records inserted.
    pub records: u64,
    /// Bytes inserted (records, padding and raw writes).
    pub bytes: u64,
    /// Flusher rounds that wrote something.
    pub writes: u64,
    /// `fdatasync` calls on segment files.
    pub fsyncs: u64,
    /// `flush` calls that had to wait.
    pub flush_waits: u64,
    /// Segment files created.
    pub segments_created: u64,
}

#[derive(Default)]
struct Counters {
    records: AtomicU64,
    bytes: AtomicU64,
    writes: AtomicU64,
    fsyncs: AtomicU64,
    flush_waits: AtomicU64,
    segments_created: AtomicU64,
    /// Threads waiting in `flush` right now.
    waiting: AtomicUsize,
    /// Rounds of the flusher thread that wrote something (the rest were
    /// committers' own).
    flusher_writes: AtomicU64,
}

/// Guarded by `Shared::insert`.
struct InsertState {
    /// Bytes inserted but not yet taken by the flusher; starts at `buf_start`.
    buf: Vec<u8>,
    buf_start: Lsn,
    /// Where the next record starts.
    insert_pos: Lsn,
    /// Start of the last record inserted (the next record's prev-link).
    prev: Lsn,
    /// Set by `shutdown`: no more inserts.
    closed: bool,
}

/// Guarded by `Shared::signal`.
struct Signal {
    /// Highest LSN some session asked to have flushed.
    requested: Lsn,
    shutdown: bool,
    /// A committer that flushed by itself found the next segment should be
    /// created: the flusher thread does it, off the commit path.
    prealloc: bool,
}

struct Shared {
    dir: PathBuf,
    opts: WalWriterOptions,
    /// `fsync` as now in force ([`WalWriter::set_fsync`]; `opts.fsync` is
    /// the value at open).
    fsync: AtomicBool,
    insert: Mutex<InsertState>,
    /// Inserters waiting for buffer space (with `insert`).
    space_cv: Condvar,
    signal: Mutex<Signal>,
    signal_cv: Condvar,
    /// Committers asleep in `flush` while a round runs (see [`end_round`]).
    waiters: Mutex<Vec<Arc<FlushWaiter>>>,
    /// Whoever writes and syncs a batch holds this: the flusher thread, or
    /// a committer that found nobody flushing (see [`WalWriter::flush`]).
    round: Mutex<FlushState>,
    /// Held while a segment file is created (zero-filled and synced): by
    /// the flusher thread pre-allocating the next segment *without* the
    /// round lock, so rounds (commits, write-behind) go on meanwhile; or
    /// by a round that needs a segment that does not exist yet (taken
    /// under `round`, never the other way round).
    create: Mutex<()>,
    /// Highest segment known to exist (created or pre-allocated).
    prealloc: AtomicU64,
    /// The timeline new segments are created under (changes only in
    /// [`WalWriter::switch_timeline`], under the round and create locks).
    tli: AtomicU32,
    insert_lsn: AtomicLsn,
    write_lsn: AtomicLsn,
    flushed_lsn: AtomicLsn,
    failed: AtomicBool,
    /// Rounds ended so far (see [`end_round`]): a waiter that saw a round
    /// under way sleeps only if no round has ended since it looked.
    rounds_ended: AtomicU64,
    /// Test hook: no round runs while set (read without a lock, so the
    /// commit path pays nothing for it).
    paused: AtomicBool,
    failure: Mutex<Option<String>>,
    watch: watch::Sender<Lsn>,
    /// The written LSN, published before the round's fsync — only while
    /// someone subscribes ([`WalWriter::subscribe_written`]: a standby's
    /// replay, which may apply WAL the kernel has but the disk may not).
    written: watch::Sender<Lsn>,
    stats: Counters,
}

/// Appends records to WAL and makes them durable; see the module docs.
pub struct WalWriter {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for WalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalWriter")
            .field("dir", &self.shared.dir)
            .field("insert_lsn", &self.insert_lsn())
            .field("flushed_lsn", &self.flushed_lsn())
            .finish()
    }
}

thread_local! {
    /// Per-thread payload encoding buffer: inserting allocates nothing once warm.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl WalWriter {
    /// Opens the WAL in `dir` (created if missing) to continue at `pos` —
    /// the end of valid WAL as found by recovery, or
    /// [`WalPosition::initial`] for a new cluster. Anything in the WAL after
    /// `pos.end` is destroyed (see the module docs), so `pos` must really be
    /// the end.
    pub fn open(
        dir: impl AsRef<Path>,
        opts: WalWriterOptions,
        pos: WalPosition,
    ) -> Result<WalWriter, WalError> {
        check_segment_size(opts.segment_size)?;
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)?;
        let seg = opts.segment_size;
        if !pos.end.is_valid() {
            return Err(WalError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "WAL end position is 0/0",
            )));
        }
        let segno = pos.end.segment_number(seg);
        let tli = opts.timeline;
        // Later segments hold nothing valid (recovery stopped before them,
        // or they are the old timeline's past the switch point).
        remove_segments_after(&dir, segno, seg)?;
        // A new timeline starts in a copy of the old one's segment.
        adopt_segment(
            &dir,
            tli,
            segno,
            seg,
            pos.end.segment_offset(seg),
            opts.fsync,
        )?;
        let mut f = create_segment(&dir, tli, segno, seg, opts.fsync)?;
        if clear_tail(&mut f, pos.end.segment_offset(seg), seg)? && opts.fsync {
            f.sync_data()?;
        }
        if opts.fsync {
            fsync_dir(&dir)?;
        }
        let (watch, _) = watch::channel(pos.end);
        let (written, _) = watch::channel(pos.end);
        let shared = Arc::new(Shared {
            dir,
            insert: Mutex::new(InsertState {
                buf: Vec::with_capacity(1 << 20),
                buf_start: pos.end,
                insert_pos: pos.end,
                prev: pos.prev,
                closed: false,
            }),
            space_cv: Condvar::new(),
            signal: Mutex::new(Signal {
                requested: pos.end,
                shutdown: false,
                prealloc: false,
            }),
            signal_cv: Condvar::new(),
            waiters: Mutex::new(Vec::new()),
            round: Mutex::new(FlushState {
                files: Vec::new(),
                spare: Vec::with_capacity(1 << 20),
            }),
            create: Mutex::new(()),
            prealloc: AtomicU64::new(segno),
            tli: AtomicU32::new(tli.0),
            insert_lsn: AtomicLsn::new(pos.end),
            write_lsn: AtomicLsn::new(pos.end),
            flushed_lsn: AtomicLsn::new(pos.end),
            failed: AtomicBool::new(false),
            rounds_ended: AtomicU64::new(0),
            paused: AtomicBool::new(false),
            failure: Mutex::new(None),
            watch,
            written,
            stats: Counters::default(),
            fsync: AtomicBool::new(opts.fsync),
            opts,
        });
        let s2 = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("walwriter".into())
            .spawn(move || Flusher { shared: s2 }.run())?;
        Ok(WalWriter {
            shared,
            flusher: Mutex::new(Some(handle)),
        })
    }

    /// Appends `record`, written by transaction `xid` (invalid for none); returns
    /// its start LSN and end LSN (where the next record starts — the LSN a
    /// commit waits to be flushed and a page is stamped with).
    pub fn insert(&self, xid: TransactionId, record: &WalRecord) -> Result<(Lsn, Lsn), WalError> {
        let (rm, info) = record.rmgr_info();
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            s.clear();
            record.encode_payload(&mut s);
            let r = self.insert_payload(xid, rm as u8, info, &s);
            if s.capacity() > (1 << 20) {
                *s = Vec::new();
            }
            r
        })
    }

    /// Appends a record with an already encoded payload.
    pub fn insert_payload(
        &self,
        xid: TransactionId,
        rmid: u8,
        info: u8,
        payload: &[u8],
    ) -> Result<(Lsn, Lsn), WalError> {
        let tot_len = HEADER_LEN + payload.len();
        if tot_len > MAX_RECORD_LEN as usize {
            return Err(WalError::RecordTooLarge { len: tot_len });
        }
        let tot_len = tot_len as u32;
        let is_switch = rmid == RmgrId::Xlog as u8 && info == XLOG_SWITCH;
        // Hash the payload before taking the lock; the header (with the
        // prev-link only known under the lock) is hashed last.
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(payload);
        let sh = &*self.shared;
        let mut st = sh.insert.lock();
        self.wait_for_space(&mut st)?;
        let start = st.insert_pos;
        let mut header = RecordHeader {
            tot_len,
            xid,
            prev: st.prev,
            rmid,
            info,
            crc: 0,
        };
        let mut hb = [0u8; HEADER_LEN];
        header.write_to(&mut hb);
        header.crc = finish_crc(hasher, &hb);
        header.write_to(&mut hb);
        let end = record_end(start, tot_len, is_switch, sh.opts.segment_size);
        let before = st.buf.len();
        st.buf.extend_from_slice(&hb);
        st.buf.extend_from_slice(payload);
        let padded = st.buf.len() + (end - start - u64::from(tot_len)) as usize;
        st.buf.resize(padded, 0);
        st.insert_pos = end;
        st.prev = start;
        sh.insert_lsn.store(end, Ordering::Release);
        let behind = self.crossed_flush_after(before, st.buf.len());
        drop(st);
        sh.stats.records.fetch_add(1, Ordering::Relaxed);
        sh.stats.bytes.fetch_add(end - start, Ordering::Relaxed);
        if is_switch || behind {
            // The switch exists to finish the segment: write it out now.
            // Write-behind: see `crossed_flush_after`.
            self.request_flush(end);
        }
        Ok((start, end))
    }

    /// Appends WAL received from a primary at `lsn` (the standby's
    /// walreceiver). Bytes before the current insert position are skipped
    /// (already written: a reconnect resends from a segment start); a chunk
    /// starting after it is a gap and refused. Make it durable with
    /// [`WalWriter::flush`]. Do not mix with [`WalWriter::insert`] on one
    /// writer: after promotion, reopen the writer at the end of replayed WAL.
    pub fn write_raw(&self, lsn: Lsn, data: &[u8]) -> Result<(), WalError> {
        let sh = &*self.shared;
        let mut st = sh.insert.lock();
        self.wait_for_space(&mut st)?;
        if lsn > st.insert_pos {
            return Err(WalError::Gap {
                expected: st.insert_pos,
                got: lsn,
            });
        }
        let end = lsn + data.len() as u64;
        if end <= st.insert_pos {
            return Ok(());
        }
        let new = &data[(st.insert_pos - lsn) as usize..];
        let before = st.buf.len();
        st.buf.extend_from_slice(new);
        st.insert_pos = end;
        sh.insert_lsn.store(end, Ordering::Release);
        let behind = self.crossed_flush_after(before, st.buf.len());
        drop(st);
        sh.stats
            .bytes
            .fetch_add(new.len() as u64, Ordering::Relaxed);
        if behind {
            self.request_flush(end);
        }
        Ok(())
    }

    /// Write-behind (PostgreSQL's `wal_writer_flush_after`): true when an
    /// append took the pending buffer from below `flush_after` bytes to at
    /// least that, i.e. once per `flush_after` bytes between two rounds —
    /// the caller then asks the flusher thread for a round. Without it a
    /// large transaction (a COPY writing 14 MB of WAL) would leave everything
    /// in the buffer for its commit to write and sync — tens of milliseconds
    /// on the commit path, with the other core idle meanwhile. Small
    /// transactions never reach the threshold between two commits.
    fn crossed_flush_after(&self, before: usize, after: usize) -> bool {
        let limit = self.shared.opts.flush_after;
        limit > 0 && before < limit && after >= limit
    }

    /// Under the insert lock: fail if the writer is broken or closed; wait
    /// while the pending buffer is full.
    fn wait_for_space(
        &self,
        st: &mut parking_lot::MutexGuard<'_, InsertState>,
    ) -> Result<(), WalError> {
        let sh = &*self.shared;
        loop {
            self.check_failed()?;
            if st.closed {
                return Err(WalError::ShutDown);
            }
            if st.buf.len() < sh.opts.buffer_limit {
                return Ok(());
            }
            // Lock order insert → signal.
            {
                let mut sig = sh.signal.lock();
                sig.requested = sig.requested.max(st.insert_pos);
            }
            sh.signal_cv.notify_one();
            sh.space_cv.wait(st);
        }
    }

    fn check_failed(&self) -> Result<(), WalError> {
        check_failed(&self.shared)
    }

    /// Asks the flusher to write and sync WAL up to `upto` without waiting
    /// (asynchronous commit; the flusher also writes every `writer_delay`).
    pub fn request_flush(&self, upto: Lsn) {
        let target = upto.min(self.insert_lsn());
        if target <= self.flushed_lsn() {
            return;
        }
        let sh = &*self.shared;
        {
            let mut sig = sh.signal.lock();
            if sig.requested >= target {
                return;
            }
            sig.requested = target;
        }
        sh.signal_cv.notify_one();
    }

    /// Blocks until WAL is durable up to `upto` (capped at the insert
    /// position: nothing beyond it exists); returns the flushed LSN. Many
    /// concurrent callers share one fsync (group commit).
    pub fn flush(&self, upto: Lsn) -> Result<Lsn, WalError> {
        let sh = &*self.shared;
        let target = upto.min(self.insert_lsn());
        let flushed = self.flushed_lsn();
        if flushed >= target {
            return Ok(flushed);
        }
        self.check_failed()?;
        sh.stats.flush_waits.fetch_add(1, Ordering::Relaxed);
        sh.stats.waiting.fetch_add(1, Ordering::SeqCst);
        let r = self.flush_until(target);
        sh.stats.waiting.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// The body of [`WalWriter::flush`]. Like PostgreSQL's XLogFlush, a
    /// committer that finds nobody writing does the round itself — no
    /// hand-off to the flusher thread and back, which costs two wake-ups
    /// per commit at low concurrency. One that finds a round under way
    /// parks until that round's leader wakes it — because its record is
    /// durable, or to lead the next round: everything inserted meanwhile
    /// shares that next fsync, which is the group commit.
    fn flush_until(&self, target: Lsn) -> Result<Lsn, WalError> {
        let sh = &*self.shared;
        loop {
            let flushed = self.flushed_lsn();
            if flushed >= target {
                return Ok(flushed);
            }
            self.check_failed()?;
            // Read before trying the round lock: if a round ends after the
            // try fails, the count has moved and we do not sleep.
            let rounds = sh.rounds_ended.load(Ordering::SeqCst);
            if !sh.paused.load(Ordering::Acquire) {
                if let Some(mut st) = sh.round.try_lock() {
                    if self.flushed_lsn() < target {
                        let r = round(sh, &mut st);
                        // Failed before the waiters wake, so none of them
                        // tries the broken file again.
                        if let Err(e) = &r {
                            fail(sh, format!("could not write or sync WAL: {e}"));
                        }
                        end_round(sh, st);
                        if let Ok(true) = r {
                            sh.signal.lock().prealloc = true;
                            sh.signal_cv.notify_one();
                        }
                    }
                    continue;
                }
            }
            // A round is under way (or rounds are paused). Nobody else is
            // asked to help: when it ends, its leader wakes every waiter it
            // covered plus one it did not, who leads the next round for all
            // who still wait (PostgreSQL's LWLockAcquireOrWait on
            // WALWriteLock in XLogFlush, without waking the whole queue).
            let me = Arc::new(FlushWaiter {
                target,
                thread: std::thread::current(),
                woken: AtomicBool::new(false),
            });
            {
                let mut ws = sh.waiters.lock();
                // `end_round` bumps `rounds_ended` before it takes this
                // lock, so a round that ended since we looked is seen here
                // and we do not sleep through it.
                if self.flushed_lsn() >= target
                    || sh.failed.load(Ordering::Acquire)
                    || sh.rounds_ended.load(Ordering::SeqCst) != rounds
                {
                    continue;
                }
                ws.push(Arc::clone(&me));
            }
            // The timeout is only a backstop.
            let deadline = std::time::Instant::now() + Duration::from_millis(10);
            while !me.woken.load(Ordering::Acquire) {
                let now = std::time::Instant::now();
                if now >= deadline {
                    sh.waiters.lock().retain(|w| !Arc::ptr_eq(w, &me));
                    break;
                }
                std::thread::park_timeout(deadline - now);
            }
        }
    }

    /// For a committer that must not block its thread: when a round is
    /// under way and WAL is not yet durable up to `upto`, asks the flusher
    /// to cover `upto` next (so the wait never depends on another
    /// committer leading) and returns the target to await with
    /// [`WalWriter::wait_flushed`]: the commit *joins* the group flush.
    /// `None` when there is nothing to wait for or no round is running —
    /// then the caller leads one itself with [`WalWriter::flush`], as
    /// PostgreSQL's XLogFlush does, because handing the round to the
    /// flusher thread would cost two wake-ups where leading costs none.
    pub fn join_round(&self, upto: Lsn) -> Option<Lsn> {
        let target = upto.min(self.insert_lsn());
        if self.flushed_lsn() >= target || !self.shared.round.is_locked() {
            return None;
        }
        // If the round ended between the check and here, the request still
        // makes the flusher cover `target`: no wake-up is lost.
        self.request_flush(target);
        Some(target)
    }

    /// Waits without blocking a thread until WAL is durable up to `target`
    /// (from [`WalWriter::join_round`]); fails as [`WalWriter::flush`] does
    /// when the writer broke meanwhile. Every round's end publishes the
    /// flushed LSN, and a failure publishes too, so the future wakes for
    /// either.
    pub fn wait_flushed(
        &self,
        target: Lsn,
    ) -> impl std::future::Future<Output = Result<Lsn, WalError>> + Send + 'static {
        let mut rx = self.subscribe_flushed();
        let sh = Arc::clone(&self.shared);
        async move {
            loop {
                let flushed = sh.flushed_lsn.load(Ordering::Acquire);
                if flushed >= target {
                    return Ok(flushed);
                }
                check_failed(&sh)?;
                if rx.changed().await.is_err() {
                    // The writer is gone (shut down).
                    check_failed(&sh)?;
                    return Err(WalError::ShutDown);
                }
            }
        }
    }

    /// Where the next record will start (`pg_current_wal_insert_lsn`).
    pub fn insert_lsn(&self) -> Lsn {
        self.shared.insert_lsn.load(Ordering::Acquire)
    }

    /// WAL handed to the kernel up to here (`pg_current_wal_lsn`).
    pub fn write_lsn(&self) -> Lsn {
        self.shared.write_lsn.load(Ordering::Acquire)
    }

    /// WAL durable up to here (`pg_current_wal_flush_lsn`); the walsender
    /// never sends beyond it.
    pub fn flushed_lsn(&self) -> Lsn {
        self.shared.flushed_lsn.load(Ordering::Acquire)
    }

    /// A watch of the flushed LSN, for async waiters (the walsender):
    /// `rx.wait_for(|l| *l >= lsn).await`.
    pub fn subscribe_flushed(&self) -> watch::Receiver<Lsn> {
        self.shared.watch.subscribe()
    }

    /// A watch of the written LSN ([`WalWriter::write_lsn`]), published as
    /// soon as a round has handed its WAL to the kernel, before its fsync.
    /// A standby's replay follows it: it reads WAL through the page cache
    /// and applies it while the walreceiver's fsync runs, which takes the
    /// fsync out of commit-to-visible. What keeps that safe is
    /// WAL-before-data: no page changed by such WAL reaches the disk before
    /// the WAL does (`storage::xloginsert::XLog::set_recovery_wal`).
    pub fn subscribe_written(&self) -> watch::Receiver<Lsn> {
        self.shared.written.subscribe()
    }

    /// `fsync` changed by a reload: rounds from now on sync or not. Turned
    /// off, PostgreSQL's warning applies: a crash of the machine may lose
    /// commits reported durable.
    pub fn set_fsync(&self, on: bool) {
        self.shared.fsync.store(on, Ordering::Relaxed);
    }

    /// The timeline this writer writes (`IDENTIFY_SYSTEM`'s).
    pub fn timeline(&self) -> TimeLineId {
        TimeLineId(self.shared.tli.load(Ordering::Acquire))
    }

    /// Continues the WAL on timeline `tli` from `at` (a standby's
    /// walreceiver following a promotion, whose new primary ended the old
    /// timeline at `at`). Everything received must be flushed and end
    /// exactly at `at`: the caller refuses a switch behind what it holds.
    /// The segment holding `at` is copied under the new timeline's name up
    /// to `at` (see `segment`), later segments of older timelines are
    /// deleted, and new segments carry `tli`. Readers holding the old
    /// segment open must reopen it ([`crate::WalReader::forget_file`]).
    pub fn switch_timeline(&self, tli: TimeLineId, at: Lsn) -> Result<(), WalError> {
        let sh = &*self.shared;
        let mut round = sh.round.lock();
        let st = sh.insert.lock();
        let flushed = sh.flushed_lsn.load(Ordering::Acquire);
        if st.insert_pos != at || !st.buf.is_empty() || flushed != at {
            return Err(WalError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot switch to timeline {tli} at {at}: WAL is written up to {} and flushed up to {flushed}",
                    st.insert_pos
                ),
            )));
        }
        let current = TimeLineId(sh.tli.load(Ordering::Acquire));
        if tli <= current {
            return Err(WalError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("cannot switch from timeline {current} to timeline {tli}"),
            )));
        }
        let _create = sh.create.lock();
        round.files.clear();
        let seg = sh.opts.segment_size;
        let segno = at.segment_number(seg);
        remove_segments_after(&sh.dir, segno, seg)?;
        adopt_segment(
            &sh.dir,
            tli,
            segno,
            seg,
            at.segment_offset(seg),
            sh.fsync.load(Ordering::Relaxed),
        )?;
        create_segment(&sh.dir, tli, segno, seg, sh.fsync.load(Ordering::Relaxed))?;
        sh.tli.store(tli.0, Ordering::Release);
        sh.prealloc.store(segno, Ordering::Release);
        drop(st);
        Ok(())
    }

    /// The segment size.
    pub fn segment_size(&self) -> u64 {
        self.shared.opts.segment_size
    }

    /// The `pg_wal` directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        let c = &self.shared.stats;
        WalStats {
            records: c.records.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            fsyncs: c.fsyncs.load(Ordering::Relaxed),
            flush_waits: c.flush_waits.load(Ordering::Relaxed),
            segments_created: c.segments_created.load(Ordering::Relaxed),
        }
    }

    /// Deletes segment files wholly before the segment holding `lsn` (a
    /// checkpoint's redo point, lowered by `wal_keep_size` and slots).
    /// Never removes the segment being written or anything unflushed.
    /// Returns how many files were removed.
    pub fn remove_segments_before(&self, lsn: Lsn) -> Result<usize, WalError> {
        let seg = self.shared.opts.segment_size;
        let keep_from = lsn.min(self.flushed_lsn()).segment_number(seg);
        Ok(remove_segments_before(
            &self.shared.dir,
            keep_from,
            seg,
            self.shared.fsync.load(Ordering::Relaxed),
        )?)
    }

    /// Flushes everything, stops the flusher and refuses further inserts.
    /// Called by `Drop` too; calling it twice is harmless.
    pub fn shutdown(&self) -> Result<Lsn, WalError> {
        let sh = &*self.shared;
        sh.insert.lock().closed = true;
        {
            let mut sig = sh.signal.lock();
            sig.shutdown = true;
            sh.paused.store(false, Ordering::Release);
        }
        sh.signal_cv.notify_one();
        if let Some(h) = self.flusher.lock().take() {
            if h.join().is_err() {
                tracing::error!("WAL writer thread panicked");
            }
        }
        self.check_failed()?;
        Ok(self.flushed_lsn())
    }

    /// Test hook: hold the round lock, as a round under way does.
    #[cfg(test)]
    pub(crate) fn hold_round(&self) -> impl Drop + '_ {
        self.shared.round.lock()
    }

    /// Test hook: stop the flusher from taking new work.
    #[cfg(test)]
    pub(crate) fn pause_flusher(&self, paused: bool) {
        let sh = &*self.shared;
        sh.paused.store(paused, Ordering::Release);
        drop(sh.signal.lock());
        sh.signal_cv.notify_one();
        // Committers waiting for the pause to end lead the next round.
        sh.rounds_ended.fetch_add(1, Ordering::SeqCst);
        wake_all(sh);
    }

    /// Test hook: rounds of the flusher thread that wrote something.
    #[cfg(test)]
    pub(crate) fn flusher_writes(&self) -> u64 {
        self.shared.stats.flusher_writes.load(Ordering::Relaxed)
    }

    /// Test hook: threads blocked in `flush` now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.shared.stats.waiting.load(Ordering::SeqCst)
    }
}

impl Drop for WalWriter {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!("WAL writer shut down with an error: {e}");
        }
    }
}

/// Zeroes `[from, segment_size)` of a segment where it is not already zero.
/// Returns whether anything was written.
fn clear_tail(f: &mut File, from: u64, segment_size: u64) -> io::Result<bool> {
    let mut buf = vec![0u8; 256 << 10];
    let mut pos = from;
    let mut first_dirty = None;
    while pos < segment_size {
        let n = ((segment_size - pos) as usize).min(buf.len());
        let got = f.read_at(&mut buf[..n], pos)?;
        if got == 0 {
            break;
        }
        if buf[..got].iter().any(|b| *b != 0) {
            first_dirty = Some(pos);
            break;
        }
        pos += got as u64;
    }
    match first_dirty {
        Some(p) => {
            zero_fill(f, p, segment_size)?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The open segment files and spare buffer of whoever does a round.
struct FlushState {
    /// Open segment files, most recent last (at most two kept).
    files: Vec<(u64, File)>,
    /// The buffer handed back to inserters at the next swap.
    spare: Vec<u8>,
}

/// The flusher thread ("walwriter"): rounds for asynchronous commits and
/// full buffers, and segment pre-allocation.
struct Flusher {
    shared: Arc<Shared>,
}

/// Puts the writer in its failed state and wakes everyone who waits.
/// Err once the writer has failed (see [`fail`]).
fn check_failed(sh: &Shared) -> Result<(), WalError> {
    if sh.failed.load(Ordering::Acquire) {
        let msg = sh.failure.lock().clone().unwrap_or_default();
        return Err(WalError::Failed(msg));
    }
    Ok(())
}

fn fail(sh: &Shared, msg: String) {
    if sh.opts.panic_on_failure {
        pgtypes::fileutil::panic_abort(&msg);
    }
    tracing::error!("{msg}");
    *sh.failure.lock() = Some(msg);
    sh.failed.store(true, Ordering::Release);
    wake_all(sh);
    // Committers awaiting the flushed LSN (`wait_flushed`) see it too.
    sh.watch.send_modify(|_| {});
    // Unblock inserters waiting for space; they will see the failure.
    drop(sh.insert.lock());
    sh.space_cv.notify_all();
}

/// What woke the flusher thread.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Work {
    /// Write and sync what is pending (then pre-allocate if due).
    Round,
    /// Only create the next segment.
    Preallocate,
    /// A last round, then exit.
    Shutdown,
}

impl Flusher {
    fn run(self) {
        let shared = Arc::clone(&self.shared);
        // A panic here (a bug) must not leave committers waiting forever.
        // Pre-allocation is only ahead of need: when it fails (disk full,
        // the directory gone) the segment is created again on the write
        // path when a round needs it, and *that* failure PANICs. Here it
        // is a warning, logged once per run of failures.
        let mut prealloc_failing = false;
        let mut prealloc = |sh: &Shared| match preallocate(sh) {
            Ok(()) => prealloc_failing = false,
            Err(e) => {
                if !std::mem::replace(&mut prealloc_failing, true) {
                    tracing::warn!("could not pre-allocate WAL segment: {e}");
                }
            }
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loop {
            let work = self.wait_for_work();
            if work == Work::Preallocate {
                // Asked by a committer's round: only the zero-fill (its
                // rounds are the committers' own to lead).
                prealloc(&shared);
                continue;
            }
            let shutdown = work == Work::Shutdown;
            let mut st = shared.round.lock();
            let written = shared.write_lsn.load(Ordering::Acquire);
            let r = round(&shared, &mut st);
            if shared.write_lsn.load(Ordering::Acquire) != written {
                shared.stats.flusher_writes.fetch_add(1, Ordering::Relaxed);
            }
            // Waiters covered by this round go before any zero-fill.
            end_round(&shared, st);
            match r {
                Ok(true) => {
                    // Without the round lock: commits and write-behind
                    // rounds go on while the segment is zero-filled.
                    prealloc(&shared);
                }
                Ok(false) => {}
                Err(e) => return Err(format!("could not write or sync WAL: {e}")),
            }
            if shutdown {
                return Ok(());
            }
        }));
        let msg = match r {
            Ok(Ok(())) => return,
            Ok(Err(msg)) => msg,
            Err(_) => "WAL writer thread panicked".to_string(),
        };
        fail(&shared, msg);
    }

    /// Sleeps until there is something to write and a reason to write it
    /// now (a flush request, the writer delay elapsed), a segment to
    /// pre-allocate, or shutdown.
    fn wait_for_work(&self) -> Work {
        let sh = &*self.shared;
        let mut sig = sh.signal.lock();
        let mut timed_out = false;
        loop {
            if sig.shutdown {
                return Work::Shutdown;
            }
            let paused = sh.paused.load(Ordering::Acquire);
            let flushed = sh.flushed_lsn.load(Ordering::Acquire);
            let pending = sh.insert_lsn.load(Ordering::Acquire) > flushed;
            if !paused && pending && (sig.requested > flushed || timed_out) {
                return Work::Round;
            }
            if std::mem::take(&mut sig.prealloc) && !paused {
                return Work::Preallocate;
            }
            timed_out = sh
                .signal_cv
                .wait_for(&mut sig, sh.opts.writer_delay)
                .timed_out();
        }
    }
}

/// One round: takes the pending buffer, writes it, syncs it and publishes
/// the new flushed LSN; the caller wakes the waiters with [`end_round`]
/// once it lets go of the round lock. Returns whether the next segment
/// should now be pre-allocated (it does not exist yet).
fn round(sh: &Shared, st: &mut FlushState) -> io::Result<bool> {
    let (buf, start) = {
        let mut ins = sh.insert.lock();
        let start = ins.buf_start;
        let buf = std::mem::replace(&mut ins.buf, std::mem::take(&mut st.spare));
        ins.buf_start = ins.insert_pos;
        sh.space_cv.notify_all();
        (buf, start)
    };
    let seg = sh.opts.segment_size;
    if buf.is_empty() {
        st.spare = buf;
        return Ok(needs_prealloc(sh));
    }
    let end = start + buf.len() as u64;
    let mut pos = start;
    let mut off = 0usize;
    while off < buf.len() {
        let segno = pos.segment_number(seg);
        let seg_off = pos.segment_offset(seg);
        let n = ((seg - seg_off) as usize).min(buf.len() - off);
        let f = st.file(sh, segno)?;
        f.write_all_at(&buf[off..off + n], seg_off)?;
        off += n;
        pos += n as u64;
        if off == buf.len() {
            // Everything is in the kernel: a standby's replay may read it
            // while the fsync runs (see `subscribe_written`).
            sh.write_lsn.store(end, Ordering::Release);
            if sh.written.receiver_count() > 0 {
                sh.written.send_replace(end);
            }
        }
        // Each segment written is synced once: when the batch leaves it,
        // or at the end of the batch for the last one.
        if sh.fsync.load(Ordering::Relaxed) {
            st.file(sh, segno)?.sync_data()?;
            sh.stats.fsyncs.fetch_add(1, Ordering::Relaxed);
        }
    }
    sh.flushed_lsn.store(end, Ordering::Release);
    sh.stats.writes.fetch_add(1, Ordering::Relaxed);
    let mut buf = buf;
    buf.clear();
    st.spare = buf;
    Ok(needs_prealloc(sh))
}

/// True once the next segment does not exist yet: a whole segment ahead.
/// (Waiting until the current one is half used is too late: a zero-fill
/// takes about as long as a bulk load needs to write half a segment, so a
/// COPY would make many of its segments on the flush path itself — under
/// the round lock, stalling every commit.)
fn needs_prealloc(sh: &Shared) -> bool {
    let seg = sh.opts.segment_size;
    let end = sh.flushed_lsn.load(Ordering::Acquire);
    sh.prealloc.load(Ordering::Acquire) <= end.segment_number(seg)
}

/// Creates the next segment ahead of need, so a commit rarely waits for a
/// zero-fill. Holds only the creation lock, not the round lock: a 16 MiB
/// zero-fill and its sync take tens of milliseconds, during which rounds
/// (commits, write-behind) continue in the current segment.
fn preallocate(sh: &Shared) -> io::Result<()> {
    let _create = sh.create.lock();
    if needs_prealloc(sh) {
        let cur = sh
            .flushed_lsn
            .load(Ordering::Acquire)
            .segment_number(sh.opts.segment_size);
        create_segment(
            &sh.dir,
            TimeLineId(sh.tli.load(Ordering::Acquire)),
            cur + 1,
            sh.opts.segment_size,
            sh.fsync.load(Ordering::Relaxed),
        )?;
        sh.stats.segments_created.fetch_add(1, Ordering::Relaxed);
        sh.prealloc.fetch_max(cur + 1, Ordering::AcqRel);
    }
    Ok(())
}

/// A committer asleep in `flush` (its thread parked until `woken`).
struct FlushWaiter {
    target: Lsn,
    thread: std::thread::Thread,
    woken: AtomicBool,
}

impl FlushWaiter {
    fn wake(&self) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// Wakes every committer asleep in `flush` (failure, end of a pause).
fn wake_all(sh: &Shared) {
    for w in std::mem::take(&mut *sh.waiters.lock()) {
        w.wake();
    }
}

/// Lets go of the round lock and wakes, each directly, the committers
/// asleep in `flush` whose target is now durable, plus one whose target is
/// not: it leads the next round, which covers everyone still asleep (they
/// all inserted before it starts). Waking only these avoids a herd racing
/// for the round lock and going back to sleep, and a chain of wake-ups
/// passed from one woken thread to the next (a condvar's notify_all
/// requeued on its mutex). `rounds_ended` moves before `waiters` is taken,
/// which makes a waiter's check-then-sleep in `flush_until` race-free.
fn end_round(sh: &Shared, st: parking_lot::MutexGuard<'_, FlushState>) {
    drop(st);
    sh.rounds_ended.fetch_add(1, Ordering::SeqCst);
    if sh.stats.waiting.load(Ordering::SeqCst) > 0 {
        let flushed = sh.flushed_lsn.load(Ordering::Acquire);
        let mut wake = Vec::new();
        let mut leader = None;
        sh.waiters.lock().retain(|w| {
            if w.target <= flushed {
                wake.push(Arc::clone(w));
                false
            } else if leader.is_none() {
                leader = Some(Arc::clone(w));
                false
            } else {
                true
            }
        });
        // Outside the lock: arriving waiters need not wait for the
        // wake-ups. The next leader last: the covered commits are on their
        // way first, and what is inserted meanwhile joins its round.
        for w in wake.into_iter().chain(leader) {
            w.wake();
        }
    }
    let flushed = sh.flushed_lsn.load(Ordering::Acquire);
    if *sh.watch.borrow() != flushed {
        sh.watch.send_replace(flushed);
    }
}

impl FlushState {
    /// The open file of segment `segno`, creating the segment if needed.
    fn file(&mut self, sh: &Shared, segno: u64) -> io::Result<&File> {
        if let Some(i) = self.files.iter().position(|(s, _)| *s == segno) {
            return Ok(&self.files[i].1);
        }
        // A pre-allocation of this very segment may be under way: the
        // creation lock waits for it (same temporary file name).
        let f = {
            let _create = sh.create.lock();
            let tli = TimeLineId(sh.tli.load(Ordering::Acquire));
            let existed = segno <= sh.prealloc.load(Ordering::Acquire)
                && segment_path_tli(&sh.dir, tli, segno, sh.opts.segment_size).exists();
            let f = create_segment(
                &sh.dir,
                tli,
                segno,
                sh.opts.segment_size,
                sh.fsync.load(Ordering::Relaxed),
            )?;
            if !existed {
                sh.stats.segments_created.fetch_add(1, Ordering::Relaxed);
            }
            sh.prealloc.fetch_max(segno, Ordering::AcqRel);
            f
        };
        if self.files.len() >= 2 {
            self.files.remove(0);
        }
        self.files.push((segno, f));
        Ok(&self.files[self.files.len() - 1].1)
    }
}
