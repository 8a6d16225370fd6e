//! # Write-ahead logging on a node (PostgreSQL's xlog.c / xloginsert.c)
//!
//! The `wal` crate is the log itself (records, segments, the writer with
//! group commit, the reader). This module is what a node does with it:
//!
//! * [`XLog`] — the node's handle on WAL: the [`WalWriter`], the current
//!   checkpoint's redo point (for full-page-write decisions) and the
//!   settings `full_page_writes` / `synchronous_commit`. Heap, catalog,
//!   smgr and xact code insert records through it.
//! * [`PageInsert`] — the protocol for logging a page change (below).
//! * [`ControlFile`] — `DIR/global/pg_control`: where the last checkpoint
//!   is, its redo point, and whether the node was shut down cleanly.
//! * [`startup`] — StartupXLOG: read the control file, find the checkpoint,
//!   replay WAL from its redo point with [`crate::redo::apply`], open the
//!   writer at the end of valid WAL.
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
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{RwLock, RwLockReadGuard};
use wal::records::{
    XLOG_FPI, XLOG_HEAP2_MULTI_INSERT, XLOG_HEAP_DELETE, XLOG_HEAP_HOT_UPDATE, XLOG_HEAP_INIT_PAGE,
    XLOG_HEAP_INSERT, XLOG_HEAP_UPDATE, XLOG_XACT_ABORT, XLOG_XACT_COMMIT,
};
use wal::{
    Lsn, RmgrId, WalPosition, WalReader, WalRecord, WalWriter, WalWriterOptions, XlogRecord,
};

use crate::database::Database;
use crate::storage::bufmgr::WalFlush;
use crate::storage::bufpage::Page;
use pgtypes::blocking::run_blocking;
use pgtypes::config::Config;
use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::fileutil::{io_error, write_atomic};
use pgtypes::{BufferTag, TransactionId};

/// Maps a WAL error to the error a statement reports (PostgreSQL PANICs on
/// a WAL write failure; we fail the statement and every later write).
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
    /// Checkpoints completed (any kind).
    pub checkpoints: AtomicU64,
}

/// The node's handle on WAL (see the module docs).
pub struct XLog {
    writer: Arc<WalWriter>,
    /// The redo point of the current checkpoint: pages whose LSN is at or
    /// before it get a full-page image at their next change.
    redo_ptr: RwLock<Lsn>,
    full_page_writes: bool,
    synchronous_commit: bool,
    /// Held shared by a committing transaction from before its commit
    /// record until its clog update; a checkpoint takes it exclusively
    /// after choosing its redo point, before flushing the clog.
    delay_chkpt: RwLock<()>,
    /// Oldest LSN a replication slot still needs (0 = none): checkpoints
    /// keep the segments from there on.
    slot_keep: AtomicU64,
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
    /// Wraps an open writer; `redo_ptr` is the last checkpoint's redo point.
    pub fn new(writer: WalWriter, redo_ptr: Lsn, config: &Config) -> XLog {
        XLog {
            writer: Arc::new(writer),
            redo_ptr: RwLock::new(redo_ptr),
            full_page_writes: config.bool("full_page_writes"),
            synchronous_commit: config
                .get("synchronous_commit")
                .map(synchronous_commit_on)
                .unwrap_or(true),
            delay_chkpt: RwLock::new(()),
            slot_keep: AtomicU64::new(0),
            counters: XLogCounters::default(),
        }
    }

    /// The writer.
    pub fn writer(&self) -> &Arc<WalWriter> {
        &self.writer
    }

    /// The current checkpoint's redo point.
    pub fn redo_ptr(&self) -> Lsn {
        *self.redo_ptr.read()
    }

    /// Replication slots: the oldest restart LSN any slot needs,
    /// or `None`. Checkpoints do not remove WAL from there on.
    pub fn set_slot_keep_lsn(&self, lsn: Option<Lsn>) {
        self.slot_keep
            .store(lsn.map(|l| l.0).unwrap_or(0), Ordering::Release);
    }

    /// See [`XLog::set_slot_keep_lsn`].
    pub fn slot_keep_lsn(&self) -> Option<Lsn> {
        match self.slot_keep.load(Ordering::Acquire) {
            0 => None,
            l => Some(Lsn(l)),
        }
    }

    /// The server-wide `synchronous_commit` (sessions may override).
    pub fn synchronous_commit(&self) -> bool {
        self.synchronous_commit
    }

    /// Checkpoint only: moves the redo point to the current insert position
    /// under the lock held exclusively (see the module docs); returns it.
    pub(crate) fn advance_redo_ptr(&self) -> Lsn {
        let mut r = self.redo_ptr.write();
        let lsn = self.writer.insert_lsn();
        *r = lsn;
        lsn
    }

    /// DELAY_CHKPT_START: a commit (or COMMIT PREPARED) holds this from
    /// before inserting its record until the clog records the commit.
    pub fn delay_checkpoint(&self) -> DelayCheckpoint<'_> {
        DelayCheckpoint(self.delay_chkpt.read())
    }

    /// Checkpoint only: waits until every commit that may have inserted its
    /// record before the new redo point has set its clog bits.
    pub(crate) fn wait_for_delaying_commits(&self) {
        drop(self.delay_chkpt.write());
    }

    /// Inserts a record that changes no page (xact, smgr, catalog,
    /// checkpoint); returns its end LSN.
    pub fn insert(&self, xid: TransactionId, record: &WalRecord) -> PgResult<Lsn> {
        self.writer
            .insert(xid.0, record)
            .map(|(_, end)| end)
            .map_err(wal_error)
    }

    /// XLogFlush: waits until WAL is durable up to `lsn` (group commit). Safe
    /// inside the tokio runtime (runs in `block_in_place`).
    pub fn flush(&self, lsn: Lsn) -> PgResult<()> {
        if self.writer.flushed_lsn() >= lsn {
            return Ok(());
        }
        run_blocking(|| self.writer.flush(lsn))
            .map(|_| ())
            .map_err(wal_error)
    }

    /// Starts logging a page change (see the module docs).
    pub fn begin_page_change(&self) -> PageInsert<'_> {
        PageInsert {
            xlog: self,
            redo: self.redo_ptr.read(),
        }
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
            self.writer.request_flush(end);
        }
        Ok(end)
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
        with_payload(|p| {
            encode_xact_end(p, xid, subxids, pgtypes::datetime::now_usecs());
            self.writer
                .insert_payload(xid.0, RmgrId::Xact as u8, info, p)
                .map(|(_, end)| end)
                .map_err(wal_error)
        })
    }
}

/// A commit in progress that a checkpoint must wait for (see
/// [`XLog::delay_checkpoint`]); drop it once the clog is set.
pub struct DelayCheckpoint<'a>(#[allow(dead_code)] RwLockReadGuard<'a, ()>);

/// `synchronous_commit` values that mean "wait for the flush" (PostgreSQL
/// also has local / remote_write / remote_apply: all wait locally here).
pub fn synchronous_commit_on(v: &str) -> bool {
    !matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "off" | "false" | "no" | "0"
    )
}

/// The bufmgr's WAL-before-data hook: a dirty page is written only after
/// WAL is flushed up to its LSN.
pub struct WalFlushHook(pub Arc<WalWriter>);

impl WalFlush for WalFlushHook {
    fn flush_upto(&self, lsn: Lsn) -> Result<(), String> {
        if self.0.flushed_lsn() >= lsn {
            return Ok(());
        }
        run_blocking(|| self.0.flush(lsn))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn needs_flush(&self, lsn: Lsn) -> bool {
        self.0.flushed_lsn() < lsn
    }
}

/// One page change being logged: holds the redo-point lock shared (see the
/// module docs). Drop it after setting the page LSN.
pub struct PageInsert<'a> {
    xlog: &'a XLog,
    redo: RwLockReadGuard<'a, Lsn>,
}

impl PageInsert<'_> {
    /// Logs a full-page image of `page` (its state *before* the change about
    /// to be made) if `full_page_writes` is on, the page was last changed at
    /// or before the redo point, and the change does not re-initialise the
    /// page.
    pub fn before_change(&self, tag: BufferTag, page: &Page, will_init: bool) -> PgResult<()> {
        if will_init || !self.xlog.full_page_writes || page.lsn() > *self.redo {
            return Ok(());
        }
        with_payload(|p| {
            p.extend_from_slice(&tag.rel.0.to_le_bytes());
            p.push(tag.fork as u8);
            p.extend_from_slice(&tag.block.0.to_le_bytes());
            p.extend_from_slice(&page.0);
            self.xlog
                .writer
                .insert_payload(0, RmgrId::Xlog as u8, XLOG_FPI, p)
                .map_err(wal_error)
        })?;
        self.xlog.counters.fpi.fetch_add(1, Ordering::Relaxed);
        Ok(())
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
            self.xlog
                .writer
                .insert_payload(xid.0, rmid as u8, info, p)
                .map(|(_, end)| end)
                .map_err(wal_error)
        })
    }
}

/// The `hotpair_stat_wal` row (see `sql::planner::STAT_WAL_COLUMNS`):
/// records, full-page images, bytes, write rounds, fsyncs, flush waits,
/// checkpoints — since start-up; zeros without WAL.
pub fn stat_wal_row(db: &Database) -> [u64; 7] {
    match db.xlog() {
        Some(x) => {
            let s = x.writer().stats();
            [
                s.records,
                x.counters.fpi.load(Ordering::Relaxed),
                s.bytes,
                s.writes,
                s.fsyncs,
                s.flush_waits,
                x.counters.checkpoints.load(Ordering::Relaxed),
            ]
        }
        None => [0; 7],
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

/// Heap2 MULTI_INSERT header; follow with [`encode_multi_insert_tuple`]
/// `count` times.
pub fn encode_multi_insert_head(
    p: &mut Vec<u8>,
    rel: u32,
    block: u32,
    count: u32,
    init_page: bool,
) -> (RmgrId, u8) {
    p.extend_from_slice(&rel.to_le_bytes());
    p.extend_from_slice(&block.to_le_bytes());
    p.extend_from_slice(&count.to_le_bytes());
    (
        RmgrId::Heap2,
        XLOG_HEAP2_MULTI_INSERT | if init_page { XLOG_HEAP_INIT_PAGE } else { 0 },
    )
}

/// One tuple of a multi-insert.
pub fn encode_multi_insert_tuple(p: &mut Vec<u8>, offset: u16, tuple: &[u8]) {
    p.extend_from_slice(&offset.to_le_bytes());
    put_bytes(p, tuple);
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

// ---------------------------------------------------------------------------
// The control file
// ---------------------------------------------------------------------------

/// Size of `global/pg_control` on disk (one sector: written atomically by
/// the device, and we also write it via temp file + rename).
pub const CONTROL_FILE_SIZE: usize = 512;
const CONTROL_MAGIC: &[u8; 8] = b"HPCTRL01";
const CONTROL_BODY: usize = 8 + 4 + 8 + 8 + 8 + 4 + 8 + 8 + 8;

/// DBState: what the node was doing when the control file was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbState {
    /// Cleanly shut down (the checkpoint is a shutdown checkpoint).
    ShutDown,
    /// Running; a start-up finding this state after a stop crashed.
    InProduction,
    /// A standby's restartpoint (DB_IN_ARCHIVE_RECOVERY): `checkpoint` and
    /// `redo` are those of a replayed checkpoint of the primary, and a
    /// restarted standby replays from `redo` instead of its backup's start.
    InArchiveRecovery,
}

/// `DIR/global/pg_control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlFile {
    /// Shut down or in production.
    pub state: DbState,
    /// Start of the last checkpoint record.
    pub checkpoint: Lsn,
    /// That checkpoint's redo point.
    pub redo: Lsn,
    /// next_xid at that checkpoint.
    pub next_xid: u64,
    /// next OID at that checkpoint.
    pub next_oid: u32,
    /// `wal_segment_size` the cluster was created with.
    pub segment_size: u64,
    /// When this file was written (µs since 2000-01-01 UTC).
    pub time_us: i64,
    /// Standby (`InArchiveRecovery`): replay had reached here when the
    /// restartpoint wrote the buffers, so the files may hold changes up to
    /// here and hot standby must not open before replay passes it
    /// (minRecoveryPoint). Invalid on a primary.
    pub min_recovery_point: Lsn,
}

/// Why a control file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlFileError {
    /// Shorter than the fixed layout.
    #[error("control file is {0} bytes, expected {CONTROL_FILE_SIZE}")]
    BadSize(usize),
    /// Not our magic.
    #[error("control file has an unknown format (wrong magic number)")]
    BadMagic,
    /// CRC mismatch.
    #[error("incorrect checksum in control file")]
    BadCrc,
    /// A field out of range.
    #[error("invalid data in control file: {0}")]
    BadValue(&'static str),
}

impl ControlFile {
    /// Path of the control file in a data directory.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("global").join("pg_control")
    }

    /// The on-disk bytes.
    pub fn encode(&self) -> [u8; CONTROL_FILE_SIZE] {
        let mut b = [0u8; CONTROL_FILE_SIZE];
        let mut o = 0;
        let mut put = |v: &[u8]| {
            b[o..o + v.len()].copy_from_slice(v);
            o += v.len();
        };
        put(CONTROL_MAGIC);
        put(&(match self.state {
            DbState::ShutDown => 1u32,
            DbState::InProduction => 2u32,
            DbState::InArchiveRecovery => 3u32,
        })
        .to_le_bytes());
        put(&self.checkpoint.0.to_le_bytes());
        put(&self.redo.0.to_le_bytes());
        put(&self.next_xid.to_le_bytes());
        put(&self.next_oid.to_le_bytes());
        put(&self.segment_size.to_le_bytes());
        put(&self.time_us.to_le_bytes());
        put(&self.min_recovery_point.0.to_le_bytes());
        let crc = crc32fast::hash(&b[..CONTROL_BODY]);
        b[CONTROL_BODY..CONTROL_BODY + 4].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parses and checks the on-disk bytes.
    pub fn decode(b: &[u8]) -> Result<ControlFile, ControlFileError> {
        if b.len() < CONTROL_BODY + 4 {
            return Err(ControlFileError::BadSize(b.len()));
        }
        if &b[..8] != CONTROL_MAGIC {
            return Err(ControlFileError::BadMagic);
        }
        let crc = u32::from_le_bytes([
            b[CONTROL_BODY],
            b[CONTROL_BODY + 1],
            b[CONTROL_BODY + 2],
            b[CONTROL_BODY + 3],
        ]);
        if crc != crc32fast::hash(&b[..CONTROL_BODY]) {
            return Err(ControlFileError::BadCrc);
        }
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let state = match u32_at(8) {
            1 => DbState::ShutDown,
            2 => DbState::InProduction,
            3 => DbState::InArchiveRecovery,
            _ => return Err(ControlFileError::BadValue("state")),
        };
        let c = ControlFile {
            state,
            checkpoint: Lsn(u64_at(12)),
            redo: Lsn(u64_at(20)),
            next_xid: u64_at(28),
            next_oid: u32_at(36),
            segment_size: u64_at(40),
            time_us: u64_at(48) as i64,
            min_recovery_point: Lsn(u64_at(56)),
        };
        if wal::segment::check_segment_size(c.segment_size).is_err() {
            return Err(ControlFileError::BadValue("wal_segment_size"));
        }
        if !c.checkpoint.is_valid() || c.redo > c.checkpoint {
            return Err(ControlFileError::BadValue("checkpoint location"));
        }
        Ok(c)
    }

    /// Reads the control file; `None` if there is none (a new cluster).
    pub fn read(data_dir: &Path) -> PgResult<Option<ControlFile>> {
        let p = Self::path(data_dir);
        match fs::read(&p) {
            Ok(b) => ControlFile::decode(&b).map(Some).map_err(|e| {
                PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!("could not use control file \"{}\": {e}", p.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error("read file", &p, e)),
        }
    }

    /// Writes the control file atomically (`fsync = off` skips the syncs).
    pub fn write(&self, data_dir: &Path, fsync: bool) -> PgResult<()> {
        write_atomic(&Self::path(data_dir), &self.encode(), fsync)
    }
}

/// `2024-05-01 12:00:00 UTC` for a time in µs since 2000-01-01 UTC (log
/// lines).
pub fn format_log_time(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let days = secs.div_euclid(86_400) + pgtypes::datetime::days_from_civil(2000, 1, 1);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = pgtypes::datetime::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

// ---------------------------------------------------------------------------
// Start-up (StartupXLOG)
// ---------------------------------------------------------------------------

/// What start-up found and did, for the caller and tests.
#[derive(Debug, Clone)]
pub struct StartupOutcome {
    /// Records replayed (0 after a clean shutdown).
    pub records_replayed: u64,
    /// Where replay began, if it did.
    pub redo_start: Option<Lsn>,
    /// Where valid WAL ends (the writer continues here).
    pub end_of_wal: Lsn,
    /// Why the reader stopped there (None for a new cluster).
    pub end_reason: Option<wal::EndOfWal>,
}

/// The WAL directory of a data directory.
pub fn wal_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("pg_wal")
}

/// The cluster's segment size: the control file's, else the setting.
pub fn segment_size(config: &Config, ctl: Option<&ControlFile>) -> PgResult<u64> {
    if let Some(c) = ctl {
        return Ok(c.segment_size);
    }
    let raw = config.get("wal_segment_size").unwrap_or("16MB");
    let size = pgtypes::config::parse_bytes(raw).unwrap_or(0);
    wal::segment::check_segment_size_setting(size)
        .map_err(|e| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, e))?;
    Ok(size)
}

/// Writer options from the configuration.
pub fn writer_options(config: &Config, segment_size: u64) -> WalWriterOptions {
    WalWriterOptions::new(segment_size, config.bool("fsync"))
}

/// Reads the checkpoint record at `lsn` (the control file's).
pub fn read_checkpoint_record(
    dir: &Path,
    segment_size: u64,
    lsn: Lsn,
) -> PgResult<(XlogRecord, Lsn)> {
    let invalid = |why: String| {
        PgError::new(
            sqlstate::DATA_CORRUPTED,
            format!("could not locate a valid checkpoint record at {lsn}: {why}"),
        )
    };
    let mut r = WalReader::new(dir, segment_size).map_err(|e| invalid(e.to_string()))?;
    r.seek(lsn, None);
    match r.next_record() {
        Ok(rec) => match rec.record {
            WalRecord::Xlog(x @ XlogRecord::Checkpoint { .. }) => Ok((x, rec.end_lsn)),
            other => Err(invalid(format!("found {other}"))),
        },
        Err(e) => Err(invalid(e.to_string())),
    }
}

/// StartupXLOG for a primary: replays WAL from the control file's
/// checkpoint (or creates WAL for a new cluster), opens the writer at the
/// end of valid WAL and installs it in `db` (heap, catalog, bufmgr hook).
/// `ctl` is the control file read by the caller (`None`: new cluster).
pub fn startup(db: &Database, ctl: Option<ControlFile>) -> PgResult<StartupOutcome> {
    let data_dir = db.config.data_dir.clone();
    let dir = wal_dir(&data_dir);
    fs::create_dir_all(&dir).map_err(|e| io_error("create directory", &dir, e))?;
    let seg = segment_size(&db.config, ctl.as_ref())?;
    let Some(ctl) = ctl else {
        // A new cluster: there must be no WAL yet.
        let existing = wal::segment::list_segments(&dir, seg)
            .map_err(|e| io_error("read directory", &dir, e))?;
        if !existing.is_empty() {
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!(
                    "could not find control file \"{}\" but WAL exists",
                    ControlFile::path(&data_dir).display()
                ),
            ));
        }
        let pos = WalPosition::initial(seg);
        let writer =
            WalWriter::open(&dir, writer_options(&db.config, seg), pos).map_err(wal_error)?;
        install(db, XLog::new(writer, pos.end, &db.config));
        crate::checkpointer::create_checkpoint(db, crate::checkpointer::CheckpointKind::Initial)?;
        return Ok(StartupOutcome {
            records_replayed: 0,
            redo_start: None,
            end_of_wal: pos.end,
            end_reason: None,
        });
    };

    match ctl.state {
        DbState::ShutDown => tracing::info!(
            "database system was shut down at {}",
            format_log_time(ctl.time_us)
        ),
        DbState::InProduction => tracing::info!(
            "database system was interrupted; last known up at {}",
            format_log_time(ctl.time_us)
        ),
        DbState::InArchiveRecovery => tracing::info!(
            "database system was interrupted while in recovery at log time {}",
            format_log_time(ctl.time_us)
        ),
    }
    let (ckpt, _) = read_checkpoint_record(&dir, seg, ctl.checkpoint)?;
    let (redo, shutdown_ckpt) = match ckpt {
        XlogRecord::Checkpoint {
            redo,
            next_xid,
            next_oid,
            online,
            ..
        } => {
            db.procarray
                .advance_next_xid(TransactionId(next_xid.saturating_sub(1)));
            db.catalog.advance_next_oid(next_oid);
            (redo, !online)
        }
        _ => (ctl.redo, false),
    };
    if ctl.state != DbState::ShutDown {
        tracing::info!(
            "database system was not properly shut down; automatic recovery in progress"
        );
    }

    let mut reader = WalReader::new(&dir, seg).map_err(|e| io_error("open WAL in", &dir, e))?;
    reader.seek(redo, None);
    let mut started: Option<(Lsn, Instant)> = None;
    let mut last = Lsn::INVALID;
    let mut replayed = 0u64;
    let end = loop {
        match reader.next_record() {
            Ok(rec) => {
                let is_own_checkpoint = rec.start_lsn == ctl.checkpoint && shutdown_ckpt;
                if started.is_none() && !is_own_checkpoint {
                    tracing::info!("redo starts at {}", rec.start_lsn);
                    started = Some((rec.start_lsn, Instant::now()));
                }
                crate::redo::apply(db, &rec).map_err(|e| {
                    PgError::new(
                        e.code,
                        format!(
                            "WAL redo at {} for {} failed: {}",
                            rec.start_lsn, rec.record, e.message
                        ),
                    )
                })?;
                if started.is_some() {
                    replayed += 1;
                }
                last = rec.start_lsn;
            }
            Err(e) => break e,
        }
    };
    if started.is_some() || !matches!(end.reason, wal::EndReason::Zeroed) {
        tracing::info!("{end}");
    }
    if let Some((from, t0)) = started {
        let secs = t0.elapsed().as_secs_f64();
        let mb = end.lsn.distance_from(from) as f64 / (1024.0 * 1024.0);
        tracing::info!(
            "redo done at {last} system usage: elapsed: {secs:.3} s; {replayed} records, {mb:.2} MB of WAL, {:.1} MB/s",
            if secs > 0.0 { mb / secs } else { 0.0 }
        );
    }
    let pos = reader.position();
    let writer = WalWriter::open(&dir, writer_options(&db.config, seg), pos).map_err(wal_error)?;
    install(db, XLog::new(writer, redo, &db.config));
    db.checkpointer.set_last_redo(redo);
    if started.is_some() {
        crate::checkpointer::create_checkpoint(
            db,
            crate::checkpointer::CheckpointKind::EndOfRecovery,
        )?;
    } else {
        // Clean start: from now on a crash needs recovery.
        ControlFile {
            state: DbState::InProduction,
            time_us: pgtypes::datetime::now_usecs(),
            min_recovery_point: Lsn::INVALID,
            ..ctl
        }
        .write(&data_dir, db.config.bool("fsync"))?;
    }
    Ok(StartupOutcome {
        records_replayed: replayed,
        redo_start: started.map(|s| s.0),
        end_of_wal: pos.end,
        end_reason: Some(end),
    })
}

/// Promotion: opens the writer at `pos` — the end of the last valid record
/// a standby replayed; anything after it (a torn record the walreceiver
/// had half received) is cut off — and installs it as the node's WAL
/// (heap, catalog, bufmgr flush hook, walsenders). The redo point is `pos`
/// itself: every page changed before it gets a full-page image at its next
/// change until the end-of-recovery checkpoint moves the redo point.
pub(crate) fn open_after_recovery(db: &Database, pos: WalPosition, seg: u64) -> PgResult<()> {
    let dir = wal_dir(&db.config.data_dir);
    let writer = WalWriter::open(&dir, writer_options(&db.config, seg), pos).map_err(wal_error)?;
    install(db, XLog::new(writer, pos.end, &db.config));
    Ok(())
}

/// Installs an open XLog into the database and its components.
fn install(db: &Database, xlog: XLog) {
    let xlog = Arc::new(xlog);
    db.heap
        .set_wal_flush(Arc::new(WalFlushHook(xlog.writer().clone())));
    db.heap.set_xlog(xlog.clone());
    db.catalog.set_xlog(xlog.clone());
    db.replication.set_wal_writer(xlog.writer().clone());
    db.set_xlog(xlog);
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use wal::{HeapRecord, XactRecord};

    fn decode(rm: RmgrId, info: u8, p: &[u8]) -> WalRecord {
        WalRecord::decode(rm as u8, info, &Bytes::copy_from_slice(p)).unwrap()
    }

    #[test]
    fn hot_encoders_match_wal_records() {
        let mut p = Vec::new();
        let (rm, info) = encode_heap_insert(&mut p, 7, 3, 2, b"tuple", true);
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Insert {
                rel: 7,
                block: 3,
                offset: 2,
                tuple: Bytes::from_static(b"tuple"),
                init_page: true
            })
        );
        p.clear();
        let (rm, info) = encode_multi_insert_head(&mut p, 7, 4, 2, false);
        encode_multi_insert_tuple(&mut p, 1, b"a");
        encode_multi_insert_tuple(&mut p, 2, b"bb");
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::MultiInsert {
                rel: 7,
                block: 4,
                tuples: vec![
                    (1, Bytes::from_static(b"a")),
                    (2, Bytes::from_static(b"bb"))
                ],
                init_page: false
            })
        );
        p.clear();
        let (rm, info) = encode_heap_prune(&mut p, 7, 6, 4321, &[3], &[1, 2]);
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Prune {
                rel: 7,
                block: 6,
                latest_removed_xid: 4321,
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
                rel: 7,
                block: 5,
                offset: 9,
                xmax: 1234,
                infobits: 1
            })
        );
        p.clear();
        let (rm, info) = encode_heap_update(&mut p, 7, (1, 2), (3, 4), 99, 2, true, b"new");
        assert_eq!(
            decode(rm, info, &p),
            WalRecord::Heap(HeapRecord::Update {
                rel: 7,
                old_block: 1,
                old_offset: 2,
                new_block: 3,
                new_offset: 4,
                xmax: 99,
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
                xid: 10,
                subxids: vec![11],
                timestamp_us: 5
            })
        );
    }

    fn sample() -> ControlFile {
        ControlFile {
            state: DbState::InProduction,
            checkpoint: Lsn(0x100_0028),
            redo: Lsn(0x100_0000),
            next_xid: 1234,
            next_oid: 16390,
            segment_size: 16 << 20,
            time_us: 768_000_000_000_000,
            min_recovery_point: Lsn::INVALID,
        }
    }

    #[test]
    fn control_file_round_trip_and_atomic_write() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("global")).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), None);
        let c = sample();
        c.write(dir.path(), true).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c));
        assert!(!dir.path().join("global/pg_control.tmp").exists());
        let c2 = ControlFile {
            state: DbState::ShutDown,
            ..c
        };
        c2.write(dir.path(), false).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c2));
        let c2 = ControlFile {
            state: DbState::InArchiveRecovery,
            min_recovery_point: Lsn(0x100_0100),
            ..c
        };
        c2.write(dir.path(), false).unwrap();
        assert_eq!(ControlFile::read(dir.path()).unwrap(), Some(c2));
    }

    #[test]
    fn corrupted_control_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("global")).unwrap();
        sample().write(dir.path(), false).unwrap();
        let p = ControlFile::path(dir.path());
        let mut b = fs::read(&p).unwrap();
        b[20] ^= 0x40;
        fs::write(&p, &b).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert_eq!(e.code, sqlstate::DATA_CORRUPTED);
        assert!(
            e.message.contains("incorrect checksum in control file"),
            "{}",
            e.message
        );
        fs::write(&p, &b[..30]).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert!(
            e.message.contains("control file is 30 bytes"),
            "{}",
            e.message
        );
        fs::write(&p, vec![0u8; CONTROL_FILE_SIZE]).unwrap();
        let e = ControlFile::read(dir.path()).unwrap_err();
        assert!(e.message.contains("wrong magic number"), "{}", e.message);
        // Every single-byte flip of the body is caught, never a panic.
        let good = sample().encode();
        for i in 0..CONTROL_BODY + 4 {
            let mut b = good;
            b[i] ^= 0x01;
            assert!(ControlFile::decode(&b).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn log_time_format() {
        assert_eq!(format_log_time(0), "2000-01-01 00:00:00 UTC");
        assert_eq!(
            format_log_time(86_400_000_000 + 3_723_000_000),
            "2000-01-02 01:02:03 UTC"
        );
    }
}
