//! # Inserting WAL (PostgreSQL's xloginsert.c and the insert half of xlog.c)
//!
//! The `wal` crate is the log itself (records, segments, the writer with
//! group commit, the reader). This module is how the layers above insert
//! into it:
//!
//! * [`XLog`] — the node's handle on WAL: the [`WalWriter`], the current
//!   checkpoint's redo point (for full-page-write decisions) and the
//!   settings `full_page_writes` / `synchronous_commit`
//!   ([`SynchronousCommit`]: what a commit waits for — the standby part
//!   is `engine::syncrep`'s). Heap, catalog,
//!   smgr and xact code insert records through it.
//! * [`PageInsert`] — the protocol for logging a page change (below).
//! * the payload encoders of the hot records (heap changes, commit, abort).
//!
//! The control file and start-up (replay, then opening the writer) belong
//! to the node: `common::xlog`.
//!
//! ## Logging a page change
//!
//! ```text
//!   content lock X ─┐
//!   let ins = xlog.begin_page_change()      redo-point lock (shared)
//!   ins.before_change(tag, &page, init)     FPI of the *before* image if the
//!                                           page LSN ≤ redo point
//!   change the page; buf.mark_dirty()       dirty BEFORE the record exists
//!   let end = ins.insert(xid, rmid, info, payload)
//!   page.set_lsn(end)                       under the content lock
//!   drop(ins) ; drop(content lock) ─────────┘
//! ```
//!
//! *Why the buffer is marked dirty before the record is inserted:* a
//! checkpoint takes its redo point (the insert position) and only then
//! scans the buffer pool for dirty pages. A change whose record lies before
//! the redo point was therefore marked dirty before the scan and is written
//! by the checkpoint (which waits for our content lock, so the write includes
//! the change and its LSN). Replay from the redo point never needs it.
//!
//! *Why the redo-point lock:* the decision "does this page need a
//! full-page image" compares the page LSN with the redo point. The
//! checkpoint moves the redo point under the lock held exclusively, so a
//! change either finishes all its records before the new redo point or sees
//! it — the first change of every page after a redo point carries an image
//! (PostgreSQL re-checks RedoRecPtr under its insertion lock for the same
//! reason). The lock is held shared for the few microseconds of the insert;
//! the checkpoint holds it exclusively only to read the insert position.
//!
//! The image is the page *before* the change, logged as its own record just
//! before the change record. Redo restores images unconditionally (a torn
//! page on disk is never trusted) and then replays the change on top. A
//! change that initialises its page (`XLOG_HEAP_INIT_PAGE`: the first tuple
//! of an empty page) needs no image: redo rebuilds the page from nothing.
//!
//! Payloads of the hot records (heap changes, commit, abort) are encoded
//! here into a per-thread buffer in exactly the `wal::records` layout and
//! handed to [`WalWriter::insert_payload`]: no allocation per record once
//! warm. A unit test decodes each with `WalRecord::decode` to keep the two
//! in step.
//!
//! ## Commits and checkpoints
//!
//! A committing transaction holds the *delay-checkpoint lock* shared from
//! before inserting its commit record until its clog bits are set
//! (PostgreSQL's `DELAY_CHKPT_START`); the checkpointer takes it
//! exclusively after choosing its redo point and before flushing the clog.
//! Without it a commit record could land just before the redo point while
//! its clog update comes after the checkpoint flushed the clog — recovery
//! would start after the commit record and lose an acknowledged commit.
//!
//! ## Lock order
//!
//! buffer content lock → redo-point lock (shared) → the writer's insert
//! lock (inside `wal`). The delay-checkpoint lock (shared) is taken with no
//! buffer lock held and is held across the commit's WAL flush. The
//! checkpointer takes the redo-point lock and then the delay-checkpoint
//! lock exclusively, one after the other, holding nothing else.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{ArcRwLockReadGuard, RawRwLock, RwLock, RwLockReadGuard};
use wal::records::{
    offsets_consecutive, MultiInsertFlags, XLOG_FPI, XLOG_HEAP2_MULTI_INSERT, XLOG_HEAP_DELETE,
    XLOG_HEAP_HOT_UPDATE, XLOG_HEAP_INIT_PAGE, XLOG_HEAP_INSERT, XLOG_HEAP_UPDATE, XLOG_XACT_ABORT,
    XLOG_XACT_COMMIT,
};
use wal::{AtomicLsn, Lsn, RmgrId, WalRecord, WalWriter};

use crate::bufmgr::WalFlush;
use crate::bufpage::Page;
use pgtypes::blocking::run_blocking;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{BufferTag, TransactionId};

/// Maps a WAL error to the error a statement reports. A failed WAL write
/// or fsync never gets here on a server: its writer PANICs
/// (`WalWriterOptions::panicking`); a writer without that option fails the
/// statement and every later write.
pub fn wal_error(e: wal::WalError) -> PgError {
    PgError::new(sqlstate::IO_ERROR, format!("could not write to WAL: {e}"))
}

/// Counters for `hotpair_stat_wal` beyond the writer's own.
#[derive(Debug, Default)]
pub struct XLogCounters {
    /// Full-page images logged.
    pub fpi: AtomicU64,
    /// Commit records that waited for a flush.
    pub sync_commits: AtomicU64,
    /// Of those, commits that joined a group flush already under way and
    /// awaited it without blocking their thread
    /// ([`XLog::log_commit_or_join`]).
    pub group_joins: AtomicU64,
    /// Checkpoints completed (any kind).
    pub checkpoints: AtomicU64,
}

/// The node's handle on WAL (see the module docs). It exists from the
/// node's first moment, in recovery mode: replay and a standby's
/// continuous redo insert nothing, so until [`XLog::start_inserting`]
/// (the end of crash recovery, or a promotion) page changes are not logged
/// and an insert is an error. Heap and catalog take it when they are
/// built; nothing is installed into them later.
pub struct XLog {
    /// The writer inserts go to: set once, when recovery ends.
    writer: OnceLock<Arc<WalWriter>>,
    /// A standby's received WAL (the walreceiver's writer), which replay
    /// may apply once written, before it is flushed: page writes flush it
    /// first (WAL-before-data, [`XLog::set_recovery_wal`]).
    recovery_wal: OnceLock<Arc<WalWriter>>,
    /// The redo point of the current checkpoint: pages whose LSN is at or
    /// before it get a full-page image at their next change.
    redo_ptr: RwLock<Lsn>,
    /// `full_page_writes`, changed by a reload ([`XLog::set_full_page_writes`]).
    full_page_writes: std::sync::atomic::AtomicBool,
    synchronous_commit: SynchronousCommit,
    /// Held shared by a committing transaction from before its commit
    /// record until its clog update; a checkpoint takes it exclusively
    /// after choosing its redo point, before flushing the clog.
    delay_chkpt: Arc<RwLock<()>>,
    /// Oldest LSN a replication slot still needs (0 = none): checkpoints
    /// keep the segments from there on.
    slot_keep: AtomicLsn,
    /// `data_checksums` (the cluster's): a hint-bit change logs a full-page
    /// image first ([`PageInsert::image_for_hint`]).
    data_checksums: bool,
    /// Counters.
    pub counters: XLogCounters,
}

impl std::fmt::Debug for XLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XLog")
            .field("writer", &self.writer)
            .field("redo_ptr", &*self.redo_ptr.read())
            .finish()
    }
}

thread_local! {
    /// Per-thread payload buffer (hot records are encoded here).
    static PAYLOAD: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the thread's (cleared) payload buffer.
fn with_payload<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    PAYLOAD.with(|p| {
        let mut p = p.borrow_mut();
        p.clear();
        let r = f(&mut p);
        if p.capacity() > (1 << 20) {
            *p = Vec::new();
        }
        r
    })
}

impl XLog {
    /// The handle in recovery mode, with `full_page_writes` and
    /// `synchronous_commit` as configured.
    pub fn new(config: &Config) -> XLog {
        let mut x = XLog::with_settings(config.bool("full_page_writes"), true);
        x.synchronous_commit = config
            .get("synchronous_commit")
            .and_then(SynchronousCommit::parse)
            .unwrap_or(SynchronousCommit::On);
        x.data_checksums = config.bool("data_checksums");
        x
    }

    /// Whether the cluster has page checksums (`data_checksums`, fixed at
    /// initialisation and carried by the control file).
    pub fn data_checksums(&self) -> bool {
        self.data_checksums
    }

    /// `full_page_writes` changed by a reload: changes logged from now on
    /// follow it (a page changed while it was off gets its image at its
    /// first change after the next checkpoint, as in PostgreSQL).
    pub fn set_full_page_writes(&self, on: bool) {
        self.full_page_writes.store(on, Ordering::Relaxed);
    }

    /// The handle in recovery mode with explicit settings (tests, tools).
    pub fn with_settings(full_page_writes: bool, synchronous_commit: bool) -> XLog {
        XLog {
            writer: OnceLock::new(),
            recovery_wal: OnceLock::new(),
            redo_ptr: RwLock::new(Lsn::INVALID),
            full_page_writes: std::sync::atomic::AtomicBool::new(full_page_writes),
            synchronous_commit: if synchronous_commit {
                SynchronousCommit::On
            } else {
                SynchronousCommit::Off
            },
            delay_chkpt: Arc::new(RwLock::new(())),
            slot_keep: AtomicLsn::new(Lsn::INVALID),
            data_checksums: false,
            counters: XLogCounters::default(),
        }
    }

    /// Recovery is over: inserts go to `writer` from now on, full-page
    /// decisions start from `redo_ptr` (the last checkpoint's redo point).
    /// Once only; returns the writer now in use.
    pub fn start_inserting(&self, writer: WalWriter, redo_ptr: Lsn) -> &Arc<WalWriter> {
        *self.redo_ptr.write() = redo_ptr;
        self.writer.get_or_init(|| Arc::new(writer))
    }

    /// True once recovery is over and records may be inserted; in
    /// recovery mode changes arrive by replay and are not logged.
    pub fn inserting(&self) -> bool {
        self.writer.get().is_some()
    }

    /// The writer, once inserting has started.
    pub fn writer(&self) -> Option<&Arc<WalWriter>> {
        self.writer.get()
    }

    /// The writer for an insert: refused while in recovery, as
    /// PostgreSQL refuses WAL insertion before the end of recovery.
    fn insert_writer(&self) -> PgResult<&Arc<WalWriter>> {
        self.writer.get().ok_or_else(|| {
            PgError::new(
                sqlstate::INTERNAL_ERROR,
                "cannot make new WAL entries during recovery",
            )
        })
    }

    /// The current checkpoint's redo point.
    pub fn redo_ptr(&self) -> Lsn {
        *self.redo_ptr.read()
    }

    /// Replication slots: the oldest restart LSN any slot needs,
    /// or `None`. Checkpoints do not remove WAL from there on.
    pub fn set_slot_keep_lsn(&self, lsn: Option<Lsn>) {
        self.slot_keep
            .store(lsn.unwrap_or(Lsn::INVALID), Ordering::Release);
    }

    /// See [`XLog::set_slot_keep_lsn`].
    pub fn slot_keep_lsn(&self) -> Option<Lsn> {
        Some(self.slot_keep.load(Ordering::Acquire)).filter(|l| l.is_valid())
    }

    /// The server-wide `synchronous_commit` (sessions may override).
    pub fn synchronous_commit(&self) -> SynchronousCommit {
        self.synchronous_commit
    }

    /// Checkpoint only: moves the redo point to the current insert position
    /// under the lock held exclusively (see the module docs); returns it.
    pub fn advance_redo_ptr(&self) -> Lsn {
        let mut r = self.redo_ptr.write();
        if let Some(w) = self.writer.get() {
            *r = w.insert_lsn();
        }
        *r
    }

    /// DELAY_CHKPT_START: a commit (or COMMIT PREPARED) holds this from
    /// before inserting its record until the clog records the commit.
    ///
    /// The guard is owned and may cross an await: a commit that joins a
    /// group flush holds it while its session task waits. Because such a
    /// holder may be a task parked on this very thread, a commit never
    /// blocks its thread on the lock: when a checkpoint is waiting for it
    /// (try fails), the wait goes through [`run_blocking`], which hands the
    /// thread's other tasks elsewhere, so the parked holder can finish.
    pub fn delay_checkpoint(&self) -> DelayCheckpoint {
        let guard = match self.delay_chkpt.try_read_arc() {
            Some(g) => g,
            None => run_blocking(|| self.delay_chkpt.read_arc()),
        };
        DelayCheckpoint(guard)
    }

    /// Checkpoint only: waits until every commit that may have inserted its
    /// record before the new redo point has set its clog bits.
    pub fn wait_for_delaying_commits(&self) {
        drop(self.delay_chkpt.write());
    }

    /// Inserts a record that changes no page (xact, smgr, catalog,
    /// checkpoint); returns its end LSN.
    pub fn insert(&self, xid: TransactionId, record: &WalRecord) -> PgResult<Lsn> {
        self.insert_writer()?
            .insert(xid, record)
            .map(|(_, end)| end)
            .map_err(wal_error)
    }

    /// XLogFlush: waits until WAL is durable up to `lsn` (group commit). Safe
    /// inside the tokio runtime (runs in `block_in_place`).
    pub fn flush(&self, lsn: Lsn) -> PgResult<()> {
        let Some(w) = self.writer.get() else {
            return Ok(()); // nothing was inserted
        };
        if w.flushed_lsn() >= lsn {
            return Ok(());
        }
        run_blocking(|| w.flush(lsn)).map(|_| ()).map_err(wal_error)
    }

    /// Starts logging a page change (see the module docs); `None` in
    /// recovery mode, where page changes are not logged.
    pub fn begin_page_change(&self) -> Option<PageInsert<'_>> {
        let writer = self.writer.get()?;
        Some(PageInsert {
            xlog: self,
            writer,
            redo: self.redo_ptr.read(),
        })
    }

    /// Writes the commit record of `xid` (and its committed subxids) and,
    /// with `sync`, waits until it is durable; otherwise asks the flusher to
    /// write it soon (asynchronous commit). Returns the record's end.
    pub fn log_commit(
        &self,
        xid: TransactionId,
        subxids: &[TransactionId],
        sync: bool,
    ) -> PgResult<Lsn> {
        let end = self.log_xact_end(XLOG_XACT_COMMIT, xid, subxids)?;
        if sync {
            self.counters.sync_commits.fetch_add(1, Ordering::Relaxed);
            self.flush(end)?;
        } else {
            self.insert_writer()?.request_flush(end);
        }
        Ok(end)
    }

    /// A synchronous commit for a caller that can wait without blocking
    /// its thread (a session task): writes the commit record of `xid`;
    /// when a group flush is already under way, joins it and returns the
    /// LSN to await with [`XLog::wait_flushed`] instead of blocking;
    /// otherwise flushes as [`XLog::log_commit`] does (leading the round
    /// on this thread). Returns the record's end and the join target.
    pub fn log_commit_or_join(
        &self,
        xid: TransactionId,
        subxids: &[TransactionId],
    ) -> PgResult<(Lsn, Option<Lsn>)> {
        let end = self.log_xact_end(XLOG_XACT_COMMIT, xid, subxids)?;
        self.counters.sync_commits.fetch_add(1, Ordering::Relaxed);
        let writer = self.insert_writer()?;
        if let Some(target) = writer.join_round(end) {
            self.counters.group_joins.fetch_add(1, Ordering::Relaxed);
            return Ok((end, Some(target)));
        }
        self.flush(end)?;
        Ok((end, None))
    }

    /// Waits, without blocking a thread, until WAL is durable up to
    /// `target` (from [`XLog::log_commit_or_join`]).
    pub fn wait_flushed(
        &self,
        target: Lsn,
    ) -> impl std::future::Future<Output = PgResult<()>> + Send + 'static {
        let wait = self.writer.get().map(|w| w.wait_flushed(target));
        async move {
            match wait {
                Some(w) => w.await.map(|_| ()).map_err(wal_error),
                None => Ok(()),
            }
        }
    }

    /// Writes the abort record of `xid` and `subxids`. No flush: an abort
    /// lost in a crash is still an abort.
    pub fn log_abort(&self, xid: TransactionId, subxids: &[TransactionId]) -> PgResult<Lsn> {
        self.log_xact_end(XLOG_XACT_ABORT, xid, subxids)
    }

    fn log_xact_end(
        &self,
        info: u8,
        xid: TransactionId,
        subxids: &[TransactionId],
    ) -> PgResult<Lsn> {
        let writer = self.insert_writer()?;
        with_payload(|p| {
            encode_xact_end(p, xid, subxids, pgtypes::datetime::now_usecs());
            writer
                .insert_payload(xid, RmgrId::Xact as u8, info, p)
                .map(|(_, end)| end)
                .map_err(wal_error)
        })
    }
}

impl XLog {
    /// The `hotpair_stat_wal` row: records, full-page images, bytes, write
    /// rounds, fsyncs, flush waits, checkpoints — since start-up.
    pub fn stat_row(&self) -> [u64; 8] {
        let Some(w) = self.writer.get() else {
            return [0; 8];
        };
        let s = w.stats();
        [
            s.records,
            self.counters.fpi.load(Ordering::Relaxed),
            s.bytes,
            s.writes,
            s.fsyncs,
            s.flush_waits,
            self.counters.checkpoints.load(Ordering::Relaxed),
            self.counters.group_joins.load(Ordering::Relaxed),
        ]
    }
}

/// A commit in progress that a checkpoint must wait for (see
/// [`XLog::delay_checkpoint`]); drop it once the clog is set.
pub struct DelayCheckpoint(#[allow(dead_code)] ArcRwLockReadGuard<RawRwLock, ()>);

/// `synchronous_commit`: what a commit waits for before it is reported
/// (PostgreSQL's SyncCommitLevel, in its order: each level waits for
/// everything the ones before it wait for). Every level but `Off` waits
/// for the local flush; the `Remote*` levels and `On` also wait for the
/// synchronous standbys, when `synchronous_standby_names` names any
/// (`engine::syncrep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SynchronousCommit {
    /// No wait at all: the flusher writes the record soon.
    Off,
    /// The local flush only.
    Local,
    /// The local flush, and the standbys have written the record.
    RemoteWrite,
    /// The local flush, and the standbys have flushed the record.
    On,
    /// The local flush, and the standbys have replayed the record (a
    /// query there sees the commit).
    RemoteApply,
}

impl SynchronousCommit {
    /// A setting's text (the boolean spellings as PostgreSQL accepts them).
    pub fn parse(v: &str) -> Option<SynchronousCommit> {
        Some(match v.trim().to_ascii_lowercase().as_str() {
            "off" | "false" | "no" | "0" => SynchronousCommit::Off,
            "local" => SynchronousCommit::Local,
            "remote_write" => SynchronousCommit::RemoteWrite,
            "on" | "true" | "yes" | "1" => SynchronousCommit::On,
            "remote_apply" => SynchronousCommit::RemoteApply,
            _ => return None,
        })
    }

    /// Whether the commit waits for its record's local flush.
    pub fn waits_locally(self) -> bool {
        self != SynchronousCommit::Off
    }
}

/// The bufmgr's WAL-before-data hook: a dirty page is written only after
/// WAL is flushed up to its LSN. In recovery mode there is nothing to
/// flush: replay changes pages only with WAL that is already durable.
impl XLog {
    /// On a standby: the walreceiver's writer. Replay applies WAL as soon
    /// as it is written (`WalWriter::subscribe_written`), so a page may
    /// carry a change whose WAL is not yet durable; from now on writing
    /// such a page flushes that WAL first, as a primary's page writes do.
    /// Set once, before replay starts.
    pub fn set_recovery_wal(&self, writer: Arc<WalWriter>) {
        let _ = self.recovery_wal.set(writer);
    }

    /// The WAL a page's LSN refers to: the inserting writer, or during a
    /// standby's recovery the received WAL.
    fn page_wal(&self) -> Option<&Arc<WalWriter>> {
        self.writer.get().or_else(|| self.recovery_wal.get())
    }
}

impl WalFlush for XLog {
    fn flush_upto(&self, lsn: Lsn) -> Result<(), String> {
        let Some(w) = self.page_wal() else {
            return Ok(());
        };
        if w.flushed_lsn() >= lsn {
            return Ok(());
        }
        run_blocking(|| w.flush(lsn))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn needs_flush(&self, lsn: Lsn) -> bool {
        self.page_wal().is_some_and(|w| w.flushed_lsn() < lsn)
    }
}

/// One page change being logged: holds the redo-point lock shared (see the
/// module docs). Drop it after setting the page LSN.
pub struct PageInsert<'a> {
    xlog: &'a XLog,
    writer: &'a Arc<WalWriter>,
    redo: RwLockReadGuard<'a, Lsn>,
}

impl PageInsert<'_> {
    /// Logs a full-page image of `page` (its state *before* the change about
    /// to be made) if `full_page_writes` is on, the page was last changed at
    /// or before the redo point, and the change does not re-initialise the
    /// page.
    pub fn before_change(&self, tag: BufferTag, page: &Page, will_init: bool) -> PgResult<()> {
        if will_init {
            return Ok(());
        }
        self.image_if_needed(tag, page).map(|_| ())
    }

    /// XLogSaveBufferForHint: with `data_checksums`, a page about to be
    /// dirtied for hint bits alone gets a full-page image when it is the
    /// page's first change since the redo point, so that a write torn by a
    /// crash (which would fail its checksum) is overwritten by replay.
    /// Returns the image's end LSN, the page's new LSN (set it before
    /// dropping this insert), or `None` when no image was needed. Hold the
    /// page's content lock exclusively and mark the buffer dirty before
    /// dropping this insert (the redo point cannot move meanwhile).
    pub fn image_for_hint(&self, tag: BufferTag, page: &Page) -> PgResult<Option<Lsn>> {
        self.image_if_needed(tag, page)
    }

    /// Logs an image of `page` if `full_page_writes` is on and the page was
    /// last changed at or before the redo point; returns its end LSN.
    fn image_if_needed(&self, tag: BufferTag, page: &Page) -> PgResult<Option<Lsn>> {
        if !self.xlog.full_page_writes.load(Ordering::Relaxed) || page.lsn() > *self.redo {
            return Ok(None);
        }
        let end = with_payload(|p| {
            p.extend_from_slice(&tag.rel.0.to_le_bytes());
            p.push(tag.fork as u8);
            p.extend_from_slice(&tag.block.0.to_le_bytes());
            p.extend_from_slice(&page.0);
            self.writer
                .insert_payload(TransactionId(0), RmgrId::Xlog as u8, XLOG_FPI, p)
                .map(|(_, end)| end)
                .map_err(wal_error)
        })?;
        self.xlog.counters.fpi.fetch_add(1, Ordering::Relaxed);
        Ok(Some(end))
    }

    /// Inserts the change record: `build` encodes the payload into a reused
    /// buffer and returns its (rmgr, info). Returns the record's end LSN —
    /// the new page LSN.
    pub fn insert(
        &self,
        xid: TransactionId,
        build: impl FnOnce(&mut Vec<u8>) -> (RmgrId, u8),
    ) -> PgResult<Lsn> {
        with_payload(|p| {
            let (rmid, info) = build(p);
            self.writer
                .insert_payload(xid, rmid as u8, info, p)
                .map(|(_, end)| end)
                .map_err(wal_error)
        })
    }
}

// ---------------------------------------------------------------------------
// Payload encoders for hot records, byte for byte `wal::records`' layout.
// ---------------------------------------------------------------------------

fn put_bytes(p: &mut Vec<u8>, b: &[u8]) {
    p.extend_from_slice(&(b.len() as u32).to_le_bytes());
    p.extend_from_slice(b);
}

/// Heap INSERT: (rmid, info) and the payload.
pub fn encode_heap_insert(
    p: &mut Vec<u8>,
    rel: u32,
    block: u32,
    offset: u16,
    tuple: &[u8],
    init_page: bool,
) -> (RmgrId, u8) {
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&block.to_le_bytes());
    p.extend_from_slice(&offset.to_le_bytes());
    put_bytes(p, tuple);
    (
        RmgrId::Heap,
        XLOG_HEAP_INSERT | if init_page { XLOG_HEAP_INIT_PAGE } else { 0 },
    )
}

/// What the tuples of a multi-insert share and redo cannot rebuild from
/// the record's xid and the tuples' addresses (see
/// `wal::HeapRecord::MultiInsert`).
#[derive(Clone, Copy, Debug)]
pub struct MultiInsertHeader {
    /// xmin is frozen rather than the record's xid.
    pub frozen: bool,
    /// The inserting command.
    pub cmin: u32,
    /// The infomask of every tuple.
    pub infomask: u16,
}

/// Heap2 MULTI_INSERT of `tuples`, (line pointer, data after the header)
/// pairs on page `block`; iterated twice (the layout depends on whether
/// the offsets are consecutive), so it should be cheap to clone.
pub fn encode_multi_insert<'t>(
    p: &mut Vec<u8>,
    rel: u32,
    block: u32,
    h: MultiInsertHeader,
    init_page: bool,
    tuples: impl Iterator<Item = (u16, &'t [u8])> + Clone,
) -> (RmgrId, u8) {
    let consecutive = offsets_consecutive(tuples.clone().map(|(o, _)| o));
    let mut flags = if consecutive {
        MultiInsertFlags::CONSECUTIVE
    } else {
        0
    };
    if h.frozen {
        flags |= MultiInsertFlags::FROZEN;
    }
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&block.to_le_bytes());
    p.push(flags);
    p.extend_from_slice(&h.cmin.to_le_bytes());
    p.extend_from_slice(&h.infomask.to_le_bytes());
    // A page holds far fewer tuples than u16::MAX, each shorter than a page.
    let count_at = p.len();
    p.extend_from_slice(&0u16.to_le_bytes());
    let mut count = 0u16;
    for (off, data) in tuples {
        // Consecutive offsets: only the first is logged.
        if !consecutive || count == 0 {
            p.extend_from_slice(&off.to_le_bytes());
        }
        p.extend_from_slice(&(data.len() as u16).to_le_bytes());
        p.extend_from_slice(data);
        count += 1;
    }
    if count == 0 {
        p.extend_from_slice(&0u16.to_le_bytes()); // the (unused) first offset
    }
    p[count_at..count_at + 2].copy_from_slice(&count.to_le_bytes());
    (
        RmgrId::Heap2,
        XLOG_HEAP2_MULTI_INSERT | if init_page { XLOG_HEAP_INIT_PAGE } else { 0 },
    )
}

/// Heap2 PRUNE (the layout of `wal::HeapRecord::Prune`): line pointers
/// made dead and unused on one page; `latest_removed_xid` is the newest
/// xid whose outcome made a removed version dead. No redirects (no HOT
/// chains yet).
pub fn encode_heap_prune(
    p: &mut Vec<u8>,
    rel: u32,
    block: u32,
    latest_removed_xid: u64,
    dead: &[u16],
    unused: &[u16],
) -> (RmgrId, u8) {
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&block.to_le_bytes());
    p.extend_from_slice(&latest_removed_xid.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes()); // redirected: none
    for list in [dead, unused] {
        p.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for o in list {
            p.extend_from_slice(&o.to_le_bytes());
        }
    }
    (RmgrId::Heap2, wal::records::XLOG_HEAP2_PRUNE)
}

/// Heap DELETE (also the first step of a cross-page update: the old
/// version claimed with xmax, ctid = itself).
pub fn encode_heap_delete(
    p: &mut Vec<u8>,
    rel: u32,
    block: u32,
    offset: u16,
    xmax: u64,
    infobits: u8,
) -> (RmgrId, u8) {
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&block.to_le_bytes());
    p.extend_from_slice(&offset.to_le_bytes());
    p.extend_from_slice(&xmax.to_le_bytes());
    p.push(infobits);
    (RmgrId::Heap, XLOG_HEAP_DELETE)
}

/// Heap UPDATE / HOT_UPDATE. An empty `new_tuple` means "link only" (the
/// last step of a cross-page update, whose new version was logged by its
/// own INSERT record).
#[allow(clippy::too_many_arguments)]
pub fn encode_heap_update(
    p: &mut Vec<u8>,
    rel: u32,
    old: (u32, u16),
    new: (u32, u16),
    xmax: u64,
    old_infobits: u8,
    hot: bool,
    new_tuple: &[u8],
) -> (RmgrId, u8) {
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&old.0.to_le_bytes());
    p.extend_from_slice(&old.1.to_le_bytes());
    p.extend_from_slice(&new.0.to_le_bytes());
    p.extend_from_slice(&new.1.to_le_bytes());
    p.extend_from_slice(&xmax.to_le_bytes());
    p.push(old_infobits);
    put_bytes(p, new_tuple);
    (
        RmgrId::Heap,
        if hot {
            XLOG_HEAP_HOT_UPDATE
        } else {
            XLOG_HEAP_UPDATE
        },
    )
}

/// Xact COMMIT / ABORT payload.
pub fn encode_xact_end(p: &mut Vec<u8>, xid: TransactionId, subxids: &[TransactionId], ts: i64) {
    p.extend_from_slice(&xid.0.to_le_bytes());
    p.extend_from_slice(&ts.to_le_bytes());
    p.extend_from_slice(&(subxids.len() as u32).to_le_bytes());
    for s in subxids {
        p.extend_from_slice(&s.0.to_le_bytes());
    }
}

/// Infobits of heap DELETE / UPDATE records (our heap AM's definition).
pub mod infobits {
    /// The old version's xmin was known committed (hint carried along).
    pub const XMIN_COMMITTED: u8 = 0x01;
    /// The old version was HOT-updated (new version on the same page).
    pub const HOT_UPDATED: u8 = 0x02;
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use wal::{HeapRecord, XactRecord};

    fn decode(rm: RmgrId, info: u8, p: &[u8]) -> WalRecord {
        WalRecord::decode(rm as u8, info, &Bytes::copy_from_slice(p)).unwrap()
    }

    /// On a standby replay may apply WAL that is written but not flushed:
    /// a page carrying such a change must flush the received WAL before it
    /// is written (WAL-before-data), and only the received WAL.
    #[test]
    fn recovery_page_writes_flush_the_received_wal_first() {
        let dir = tempfile::tempdir().unwrap();
        let seg = 1 << 20;
        let writer = Arc::new(
            WalWriter::open(
                dir.path().join("pg_wal"),
                wal::WalWriterOptions::new(seg, false),
                wal::WalPosition::initial(seg),
            )
            .unwrap(),
        );
        let xlog = XLog::with_settings(true, true);
        let start = writer.insert_lsn();
        let end = start + 100;
        writer.write_raw(start, &[0u8; 100]).unwrap();
        assert!(
            !xlog.needs_flush(end),
            "without received WAL nothing is flushed for a page"
        );
        xlog.set_recovery_wal(writer.clone());
        assert!(xlog.needs_flush(end), "received WAL not yet durable");
        xlog.flush_upto(end).unwrap();
        assert!(writer.flushed_lsn() >= end, "page write flushed it first");
        assert!(!xlog.needs_flush(end), "durable now");
    }

    #[test]
    fn hot_encoders_match_wal_records() {
        let mut p = Vec::new();
        let (rm, info) = encode_heap_insert(&mut p, 7, 3, 2, b"tuple", true);
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Insert {
                rel: pgtypes::RelFileId(7),
                block: pgtypes::BlockNumber(3),
                offset: 2,
                tuple: Bytes::from_static(b"tuple"),
                init_page: true
            })
        );
        p.clear();
        for (offsets, frozen) in [([1u16, 2], false), ([3, 1], true), ([5, 6], true)] {
            let h = MultiInsertHeader {
                frozen,
                cmin: 3,
                infomask: 0x0900,
            };
            let data: [&[u8]; 2] = [b"a", b"bb"];
            let (rm, info) =
                encode_multi_insert(&mut p, 7, 4, h, false, offsets.into_iter().zip(data));
            let rec = WalRecord::Heap(HeapRecord::MultiInsert {
                rel: pgtypes::RelFileId(7),
                block: pgtypes::BlockNumber(4),
                frozen,
                cmin: pgtypes::CommandId(3),
                infomask: 0x0900,
                tuples: vec![
                    (offsets[0], Bytes::from_static(b"a")),
                    (offsets[1], Bytes::from_static(b"bb")),
                ],
                init_page: false,
            });
            assert_eq!(decode(rm, info, &p), rec, "{offsets:?}");
            let mut canonical = Vec::new();
            rec.encode_payload(&mut canonical);
            assert_eq!(p, canonical, "{offsets:?}: the same bytes as wal's encoder");
            p.clear();
            let none: [(u16, &[u8]); 0] = [];
            let (rm, info) = encode_multi_insert(&mut p, 7, 4, h, true, none.into_iter());
            let WalRecord::Heap(HeapRecord::MultiInsert { tuples, .. }) = decode(rm, info, &p)
            else {
                panic!("not a multi-insert");
            };
            assert!(tuples.is_empty(), "no tuples");
            p.clear();
        }
        p.clear();
        let (rm, info) = encode_heap_prune(&mut p, 7, 6, 4321, &[3], &[1, 2]);
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Prune {
                rel: pgtypes::RelFileId(7),
                block: pgtypes::BlockNumber(6),
                latest_removed_xid: TransactionId(4321),
                redirected: vec![],
                dead: vec![3],
                unused: vec![1, 2]
            })
        );
        p.clear();
        let (rm, info) = encode_heap_delete(&mut p, 7, 5, 9, 1234, 1);
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Delete {
                rel: pgtypes::RelFileId(7),
                block: pgtypes::BlockNumber(5),
                offset: 9,
                xmax: TransactionId(1234),
                infobits: 1
            })
        );
        p.clear();
        let (rm, info) = encode_heap_update(&mut p, 7, (1, 2), (3, 4), 99, 2, true, b"new");
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Update {
                rel: pgtypes::RelFileId(7),
                old_block: pgtypes::BlockNumber(1),
                old_offset: 2,
                new_block: pgtypes::BlockNumber(3),
                new_offset: 4,
                xmax: TransactionId(99),
                old_infobits: 2,
                hot: true,
                init_page: false,
                new_tuple: Bytes::from_static(b"new")
            })
        );
        p.clear();
        encode_xact_end(&mut p, TransactionId(10), &[TransactionId(11)], 5);
        assert_eq!(
            decode(RmgrId::Xact, XLOG_XACT_COMMIT, &p),
            WalRecord::Xact(XactRecord::Commit {
                xid: TransactionId(10),
                subxids: vec![TransactionId(11)],
                timestamp_us: 5
            })
        );
    }
}
