//! The buffer manager (PostgreSQL's bufmgr.c / freelist.c / buf_table.c):
//! `shared_buffers` 8 KiB pages cached in memory, shared by every session.
//!
//! ## Structures
//!
//! ```text
//!  mapping: 128 partitions      descs[N]: state word + tag       pages[N]
//!  RwLock<HashMap<tag, id>> --> AtomicU32 state                   RwLock<Page>
//!                               | refcount:18 | usage:4 | flags |  (content lock)
//! ```
//!
//! * **State word** (one `AtomicU32` per buffer): refcount (pins), usage
//!   count (clock sweep, max 5) and the flags `LOCKED` (the buffer header
//!   lock, a spin bit), `DIRTY`, `JUST_DIRTIED`, `VALID` (page contents are
//!   good), `TAG_VALID` (the buffer is in the mapping table),
//!   `IO_IN_PROGRESS`, `IO_ERROR`. Pin and unpin are CAS loops on this word
//!   that wait while `LOCKED` is set; they allocate nothing (hot path).
//! * **Tag** (rel, fork, block) lives in atomics beside the state word. It
//!   is set only on a buffer that is in no mapping (TAG_VALID clear) and
//!   pinned by the setter alone, under the header lock and the new tag's
//!   partition lock; so anyone holding a pin on a TAG_VALID buffer reads a
//!   stable tag.
//! * **Mapping table**: [`NUM_PARTITIONS`] `RwLock<HashMap<BufferTag, u32>>`.
//!   A lookup pins the buffer *while holding the partition lock* (shared);
//!   unmapping a victim re-checks "refcount == 1 (mine) and not dirty"
//!   while holding the partition lock exclusively — so a buffer found in
//!   the table can never be unmapped or re-tagged under its new pinner.
//! * **Content lock**: `pages[id]`, a parking_lot `RwLock<Page>`. Readers of
//!   tuples hold it shared; page changes hold it exclusively; writing a dirty
//!   page to disk holds it shared (so the page cannot change mid-write).
//!
//! ## Invariants
//!
//! * A pinned buffer is never evicted or re-tagged.
//! * A buffer is readable (VALID) only after its read IO finished; readers
//!   of a buffer whose IO is in progress wait on an IO condition variable
//!   (striped by buffer id) and, if that IO failed, retry it themselves.
//! * A dirty page is written only after [`WalFlush::flush_upto`] its page
//!   LSN returned (the WAL-before-data rule; `crate::xloginsert::WalFlushHook`).
//! * `DIRTY` is cleared after a write only if the page was not dirtied again
//!   during the write (`JUST_DIRTIED`, cleared when the write starts).
//!
//! ## A miss: victim first (PostgreSQL 16's BufferAlloc)
//!
//! ```text
//!  1. partition(new) S: lookup                  hit → pin, done
//!  2. no lock: victim = clock sweep / ring, pinned (refcount 1)
//!     no lock: dirty? flush WAL to its LSN, write it (content lock S)
//!  3. partition(old) X + header lock: still only our pin, clean, same tag?
//!        no  → unpin, back to 2 (another victim)
//!        yes → remove old mapping; refcount 1, usage 1, TAG_VALID clear
//!  4. partition(new) X: mapped meanwhile?
//!        yes → pin theirs; our victim back unpinned, usage 0, unmapped
//!        no  → insert; tag := new; TAG_VALID | IO_IN_PROGRESS (ours)
//!  5. no lock: read the block, VALID, wake the IO waiters
//! ```
//!
//! At most one partition lock is held at any time ([`BufMgr::map_buffer`],
//! [`BufMgr::get_clean_victim`], [`BufMgr::unmap_victim`]). Between steps
//! 3 and 4 the victim is pinned by us and in no mapping: nobody can reach
//! it (lookups go through the table, the clock sweep and the rings skip
//! pinned buffers, a checkpoint looks only at VALID dirty buffers, dropping
//! a relation only at TAG_VALID ones). The two races this opens:
//!
//! * **Two sessions miss on the same block.** Both find no mapping in 1,
//!   both make a victim ready; step 4 is serialised by the new partition
//!   lock, so exactly one inserts. The other sees the entry, pins that
//!   buffer under the same lock (so it cannot be evicted before the pin
//!   lands) and gives its own victim back; if the winner's read is still
//!   in progress the loser waits on the IO like any other reader. The
//!   block is mapped once and read once.
//! * **The victim is re-pinned or re-dirtied.** Someone may find the
//!   victim through its old mapping after step 2 (it is still mapped while
//!   we write it) and pin it, or write to it. Step 3 checks refcount,
//!   DIRTY and IO_IN_PROGRESS under the old partition lock exclusively and
//!   the header lock: a pin taken by a lookup happens under that partition
//!   lock shared, so it is either visible to the check, or the lookup comes
//!   after the removal and misses. A buffer that fails the check is
//!   unpinned untouched and another victim taken.
//!
//! A write error in step 2 unpins the victim and fails the read; nothing
//! was unmapped. Extension ([`BufMgr::extend_by`]) uses steps 2-3 the same
//! way and maps its new blocks under the extension lock.
//!
//! ## Lock order
//!
//! relation extension lock → one mapping partition lock → buffer header
//! lock. A content lock is never
//! taken while a partition lock is held, and callers of
//! [`BufMgr::read_buffer`] must hold no content lock (eviction may need to
//! take one shared to write a dirty victim). [`BufMgr::extend_by`] takes
//! the content locks of the new pages only after releasing the extension
//! lock, and a content lock on a page nobody else can reach yet (a clean
//! unmapped victim) never waits.
//!
//! ## Extension
//!
//! A relation's file grows only through [`BufMgr::extend_by`] (and
//! [`BufMgr::extend_to`], its redo form), which finds and cleans victim
//! buffers *before* taking the relation extension lock, holds that lock
//! only to read the size, map the new blocks IO_IN_PROGRESS and grow the
//! file, and ends the IOs after releasing it. See its doc for the steps.
//!
//! ## Replacement
//!
//! Clock sweep over all buffers (no free list: unused buffers, and victims
//! given back after a lost race, have usage count 0 and no pins, so the
//! sweep takes them first). A pin bumps the
//! usage count up to [`MAX_USAGE_COUNT`]; the hand decrements it; a buffer
//! with no pins and usage 0 is the victim. After a full circle of pinned
//! buffers the allocation fails with "no unpinned buffers available".
//!
//! ## IO statistics
//!
//! Hits, reads, writes, extensions, evictions, ring reuses and fsyncs are
//! counted per backend type and context for `pg_stat_io`
//! ([`crate::pgstat_io`]): a relaxed add on a per-thread stripe, no lock.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use wal::Lsn;

use super::bufpage::Page;
use super::hugemem::HugeSlice;
use super::pgstat_io::{IoContext, IoOp, IoStats};
use super::smgr::Smgr;
use super::{StorageError, StorageResult};
use pgtypes::{BlockNumber, BufferTag, ForkNumber, RelFileId};

/// Partitions of the buffer mapping table (NUM_BUFFER_PARTITIONS).
pub const NUM_PARTITIONS: usize = 128;
/// Highest usage count (BM_MAX_USAGE_COUNT).
pub const MAX_USAGE_COUNT: u32 = 5;
/// IO wait condition variables, shared by buffers with equal id modulo this.
const IO_STRIPES: usize = 64;
/// Relation extension locks, shared by relations with equal id modulo this.
const EXTENSION_LOCK_STRIPES: usize = 64;

const REFCOUNT_ONE: u32 = 1;
const REFCOUNT_MASK: u32 = (1 << 18) - 1;
const USAGE_SHIFT: u32 = 18;
const USAGE_ONE: u32 = 1 << USAGE_SHIFT;
const USAGE_MASK: u32 = 0xF << USAGE_SHIFT;
const BM_LOCKED: u32 = 1 << 22;
const BM_DIRTY: u32 = 1 << 23;
const BM_VALID: u32 = 1 << 24;
const BM_TAG_VALID: u32 = 1 << 25;
const BM_IO_IN_PROGRESS: u32 = 1 << 26;
const BM_IO_ERROR: u32 = 1 << 27;
const BM_JUST_DIRTIED: u32 = 1 << 28;

fn refcount(s: u32) -> u32 {
    s & REFCOUNT_MASK
}
fn usage(s: u32) -> u32 {
    (s & USAGE_MASK) >> USAGE_SHIFT
}

/// The WAL-before-data hook: before a dirty page is written, WAL must be
/// durable up to the page's LSN (installed by start-up once WAL is open).
pub trait WalFlush: Send + Sync {
    /// Blocks until WAL is flushed at least up to `lsn`.
    fn flush_upto(&self, lsn: Lsn) -> Result<(), String>;
    /// XLogNeedsFlush: true if writing a page with LSN `lsn` would have to
    /// flush WAL first (a bulk read rejects such a ring buffer).
    fn needs_flush(&self, lsn: Lsn) -> bool;
}

/// The hook before WAL is open (redo, unit tests): nothing to flush.
pub struct NoWal;

impl WalFlush for NoWal {
    fn flush_upto(&self, _lsn: Lsn) -> Result<(), String> {
        Ok(())
    }
    fn needs_flush(&self, _lsn: Lsn) -> bool {
        false
    }
}

/// How [`BufMgr::read_buffer_mode`] fills a buffer that is not cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// Read the block from disk and verify its header.
    Normal,
    /// Do not read: the caller just extended the file and will initialise
    /// the page (RBM_ZERO_AND_LOCK); the buffer comes back all-zero.
    Zero,
    /// Redo of a record that replaces the whole page (a full-page image or a
    /// page-initialising record): the block is not read from disk (it may be
    /// torn); a cached copy is returned as it is, for the caller to
    /// overwrite. Only recovery, which owns the relation, uses it.
    Overwrite,
}

/// A small multiplicative hasher for buffer tags (the std SipHash costs more
/// than the rest of a lookup).
#[derive(Default)]
pub struct TagHasher(u64);

impl Hasher for TagHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64)
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64)
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as u64)
    }
}

type TagMap = HashMap<BufferTag, u32, BuildHasherDefault<TagHasher>>;

fn tag_hash(tag: &BufferTag) -> u64 {
    let x = ((tag.rel.0 as u64) << 32 | tag.block.0 as u64) ^ ((tag.fork as u64) << 61);
    // splitmix64 finaliser: spreads consecutive blocks over partitions.
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One buffer descriptor.
struct BufferDesc {
    state: AtomicU32,
    tag_rel: AtomicU32,
    tag_block: AtomicU32,
    tag_fork: AtomicU8,
}

/// Counters for tests and monitoring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufMgrStats {
    /// Blocks read from disk.
    pub reads: u64,
    /// Blocks written to disk.
    pub writes: u64,
    /// Buffers re-used for another page.
    pub evictions: u64,
}

/// The buffer pool.
pub struct BufMgr {
    smgr: Arc<Smgr>,
    descs: Box<[BufferDesc]>,
    /// On huge pages (see `hugemem`): each statement reads pages at random.
    pages: HugeSlice<RwLock<Page>>,
    mapping: Box<[RwLock<TagMap>]>,
    clock_hand: AtomicU64,
    io_cv: Box<[(Mutex<()>, Condvar)]>,
    ext_locks: Box<[ExtensionLock]>,
    wal: RwLock<Arc<dyn WalFlush>>,
    reads: AtomicU64,
    writes: AtomicU64,
    evictions: AtomicU64,
    io: IoStats,
    /// `data_checksums`: pages get a checksum as they are written and are
    /// checked as they are read (set once at start-up, from the control
    /// file).
    checksums: AtomicBool,
    /// `ignore_checksum_failure`: a checksum failure is a WARNING and the
    /// page is used (if its header is sane).
    ignore_checksum_failure: AtomicBool,
    /// Checksum failures met by reads (pg_stat_database.checksum_failures).
    checksum_failures: AtomicU64,
    /// When the last one was met (µs since 2000-01-01; 0: never).
    checksum_last_failure: AtomicI64,
}

/// A pinned buffer: while it lives the buffer keeps its page. Dropping it
/// unpins. Holds no content lock by itself: use [`BufferRef::read`] /
/// [`BufferRef::write`].
pub struct BufferRef<'a> {
    mgr: &'a BufMgr,
    id: u32,
    tag: BufferTag,
}

impl<'a> BufferRef<'a> {
    /// The page this buffer holds.
    pub fn tag(&self) -> BufferTag {
        self.tag
    }
    /// The block number.
    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }
    /// The buffer id (for tests and debugging).
    pub fn id(&self) -> u32 {
        self.id
    }
    /// Takes the content lock shared.
    pub fn read(&self) -> RwLockReadGuard<'a, Page> {
        self.mgr.pages[self.id as usize].read()
    }
    /// Takes the content lock exclusively.
    pub fn write(&self) -> RwLockWriteGuard<'a, Page> {
        self.mgr.pages[self.id as usize].write()
    }
    /// Takes the content lock exclusively if nobody holds it (hint bits).
    pub fn try_write(&self) -> Option<RwLockWriteGuard<'a, Page>> {
        self.mgr.pages[self.id as usize].try_write()
    }
    /// MarkBufferDirty: call with the content lock held exclusively, after
    /// changing the page.
    pub fn mark_dirty(&self) {
        self.mgr.set_flags(self.id, BM_DIRTY | BM_JUST_DIRTIED);
    }
}

impl Drop for BufferRef<'_> {
    fn drop(&mut self) {
        self.mgr.unpin(self.id);
    }
}

impl BufMgr {
    /// A pool of `nbuffers` pages over `smgr`.
    pub fn new(smgr: Arc<Smgr>, nbuffers: usize) -> BufMgr {
        let nbuffers = nbuffers.clamp(16, REFCOUNT_MASK as usize);
        let per_part = nbuffers / NUM_PARTITIONS * 2 + 8;
        BufMgr {
            smgr,
            descs: (0..nbuffers)
                .map(|_| BufferDesc {
                    state: AtomicU32::new(0),
                    tag_rel: AtomicU32::new(0),
                    tag_block: AtomicU32::new(0),
                    tag_fork: AtomicU8::new(0),
                })
                .collect(),
            // SAFETY: an all-zero `RwLock<Page>` is an unlocked lock over
            // a zeroed page (`pool_pages_may_start_zeroed` checks it).
            pages: unsafe { HugeSlice::zeroed(nbuffers) },
            mapping: (0..NUM_PARTITIONS)
                .map(|_| {
                    RwLock::new(TagMap::with_capacity_and_hasher(
                        per_part,
                        Default::default(),
                    ))
                })
                .collect(),
            clock_hand: AtomicU64::new(0),
            io_cv: (0..IO_STRIPES)
                .map(|_| (Mutex::new(()), Condvar::new()))
                .collect(),
            ext_locks: (0..EXTENSION_LOCK_STRIPES)
                .map(|_| ExtensionLock::default())
                .collect(),
            wal: RwLock::new(Arc::new(NoWal)),
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            io: IoStats::default(),
            checksums: AtomicBool::new(false),
            ignore_checksum_failure: AtomicBool::new(false),
            checksum_failures: AtomicU64::new(0),
            checksum_last_failure: AtomicI64::new(0),
        }
    }

    /// Turns page checksums on or off (start-up only: `data_checksums` is
    /// the cluster's, from its control file).
    pub fn set_checksums(&self, on: bool) {
        self.checksums.store(on, Ordering::Relaxed);
    }

    /// Whether pages carry checksums.
    pub fn checksums(&self) -> bool {
        self.checksums.load(Ordering::Relaxed)
    }

    /// `ignore_checksum_failure` (start-up and reload).
    pub fn set_ignore_checksum_failure(&self, on: bool) {
        self.ignore_checksum_failure.store(on, Ordering::Relaxed);
    }

    /// Checksum failures met so far, and when the last was
    /// (pg_stat_database's `checksum_failures`, `checksum_last_failure`).
    pub fn checksum_failures(&self) -> (u64, Option<i64>) {
        let at = self.checksum_last_failure.load(Ordering::Relaxed);
        (
            self.checksum_failures.load(Ordering::Relaxed),
            (at != 0).then_some(at),
        )
    }

    /// PageIsVerifiedExtended for a page just read as `tag`: with
    /// checksums, the checksum first (a failure is a WARNING in the server
    /// log, then an error unless `ignore_checksum_failure`), then the
    /// header.
    fn verify_read(&self, page: &Page, tag: BufferTag) -> StorageResult<()> {
        let mut checksum_failed = false;
        if self.checksums() {
            if let Err((calc, stored)) = page.verify_checksum(tag.block.0) {
                tracing::warn!(
                    "page verification failed, calculated checksum {calc} but expected {stored}"
                );
                self.checksum_failures.fetch_add(1, Ordering::Relaxed);
                self.checksum_last_failure
                    .store(pgtypes::datetime::now_usecs(), Ordering::Relaxed);
                checksum_failed = !self.ignore_checksum_failure.load(Ordering::Relaxed);
            }
        }
        match page.verify() {
            Ok(()) if !checksum_failed => Ok(()),
            Ok(()) => Err(StorageError::ChecksumFailure {
                rel: tag.rel,
                block: tag.block,
            }),
            Err(c) => Err(StorageError::CorruptedPage {
                rel: tag.rel,
                block: tag.block,
                detail: c.to_string(),
            }),
        }
    }

    /// PageSetChecksumCopy: the bytes to write for `page` as block `block`
    /// — with checksums, a copy carrying its checksum (the buffer's page is
    /// only share-locked while it is written); else the page itself.
    fn page_to_write<'p>(&self, page: &'p Page, block: u32) -> std::borrow::Cow<'p, Page> {
        if !self.checksums() {
            return std::borrow::Cow::Borrowed(page);
        }
        let mut copy = page.clone();
        copy.set_checksum(block);
        std::borrow::Cow::Owned(copy)
    }

    /// Installs the WAL flush hook.
    pub fn set_wal_flush(&self, hook: Arc<dyn WalFlush>) {
        *self.wal.write() = hook;
    }

    /// The storage manager underneath.
    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// Number of buffers.
    pub fn nbuffers(&self) -> usize {
        self.descs.len()
    }

    /// IO counters.
    pub fn stats(&self) -> BufMgrStats {
        BufMgrStats {
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }

    /// The `pg_stat_io` counters.
    pub fn io_stats(&self) -> &IoStats {
        &self.io
    }

    /// Fsyncs every relation file written since the last call (a
    /// checkpoint's [`Smgr::sync_all`]), counting the fsyncs.
    pub fn sync_relations(&self) -> StorageResult<()> {
        let n = self.smgr.sync_all()?;
        self.io.count(IoContext::Normal, IoOp::Fsync, n as u64);
        Ok(())
    }

    /// How many buffers one operation may keep pinned at once (bounds bulk
    /// extension so the pool cannot be pinned full).
    pub fn max_pins_per_backend(&self) -> usize {
        (self.descs.len() / 8).max(1)
    }

    // ---- state word -------------------------------------------------------

    fn state(&self, id: u32) -> &AtomicU32 {
        &self.descs[id as usize].state
    }

    /// LockBufHdr: spins until the LOCKED bit is ours; returns the state
    /// (with LOCKED set).
    fn lock_header(&self, id: u32) -> u32 {
        let st = self.state(id);
        let mut spins = 0u32;
        loop {
            let old = st.fetch_or(BM_LOCKED, Ordering::Acquire);
            if old & BM_LOCKED == 0 {
                return old | BM_LOCKED;
            }
            backoff(&mut spins);
        }
    }

    /// UnlockBufHdr: stores `state` without LOCKED.
    fn unlock_header(&self, id: u32, state: u32) {
        self.state(id).store(state & !BM_LOCKED, Ordering::Release);
    }

    /// Applies `f` to the state word with a CAS loop that waits out the
    /// header lock. Returns the new state.
    fn update_state(&self, id: u32, f: impl Fn(u32) -> u32) -> u32 {
        let st = self.state(id);
        let mut old = st.load(Ordering::Relaxed);
        let mut spins = 0u32;
        loop {
            if old & BM_LOCKED != 0 {
                backoff(&mut spins);
                old = st.load(Ordering::Relaxed);
                continue;
            }
            let new = f(old);
            match st.compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return new,
                Err(cur) => old = cur,
            }
        }
    }

    /// PinBuffer: +1 refcount, +1 usage (capped). No allocation.
    fn pin(&self, id: u32) -> u32 {
        self.update_state(id, |s| {
            let mut n = s + REFCOUNT_ONE;
            if usage(s) < MAX_USAGE_COUNT {
                n += USAGE_ONE;
            }
            n
        })
    }

    /// PinBuffer for an operation with a ring ([`BufferAccessStrategy`]):
    /// the usage count goes up to 1 at most, so pages touched only by a
    /// bulk operation stay the clock sweep's (and the ring's) first pick
    /// instead of pushing everybody else's pages out.
    fn pin_for(&self, id: u32, strategy: Option<&BufferAccessStrategy>) -> u32 {
        if strategy.is_none() {
            return self.pin(id);
        }
        self.update_state(id, |s| {
            let mut n = s + REFCOUNT_ONE;
            if usage(s) == 0 {
                n += USAGE_ONE;
            }
            n
        })
    }

    /// UnpinBuffer.
    fn unpin(&self, id: u32) {
        self.update_state(id, |s| s - REFCOUNT_ONE);
    }

    fn set_flags(&self, id: u32, bits: u32) {
        self.update_state(id, |s| s | bits);
    }

    fn tag_of(&self, id: u32) -> BufferTag {
        let d = &self.descs[id as usize];
        BufferTag {
            rel: RelFileId(d.tag_rel.load(Ordering::Relaxed)),
            fork: if d.tag_fork.load(Ordering::Relaxed) == 0 {
                ForkNumber::Main
            } else {
                ForkNumber::Fsm
            },
            block: BlockNumber(d.tag_block.load(Ordering::Relaxed)),
        }
    }

    fn set_tag(&self, id: u32, tag: BufferTag) {
        let d = &self.descs[id as usize];
        d.tag_rel.store(tag.rel.0, Ordering::Relaxed);
        d.tag_block.store(tag.block.0, Ordering::Relaxed);
        d.tag_fork.store(tag.fork as u8, Ordering::Relaxed);
    }

    fn partition(tag: &BufferTag) -> usize {
        (tag_hash(tag) % NUM_PARTITIONS as u64) as usize
    }

    // ---- IO waits ---------------------------------------------------------

    /// WaitIO: sleeps until IO_IN_PROGRESS is clear.
    fn wait_io(&self, id: u32) {
        let (m, cv) = &self.io_cv[id as usize % IO_STRIPES];
        let mut g = m.lock();
        // Checked under the stripe mutex; the finisher clears the bit and
        // then takes the mutex to notify, so the wake-up cannot be lost.
        while self.state(id).load(Ordering::Acquire) & BM_IO_IN_PROGRESS != 0 {
            cv.wait(&mut g);
        }
    }

    /// TerminateBufferIO: clears IO_IN_PROGRESS, sets/clears flags, wakes
    /// waiters.
    /// With `clean`, DIRTY is cleared too unless the page was dirtied again
    /// since the write started (JUST_DIRTIED), atomically under the header
    /// lock.
    fn terminate_io(&self, id: u32, set: u32, clear: u32, clean: bool) {
        let st = self.lock_header(id);
        let mut st = (st & !(BM_IO_IN_PROGRESS | clear)) | set;
        if clean && st & BM_JUST_DIRTIED == 0 {
            st &= !BM_DIRTY;
        }
        self.unlock_header(id, st);
        let (m, cv) = &self.io_cv[id as usize % IO_STRIPES];
        let _g = m.lock();
        cv.notify_all();
    }

    // ---- reading ----------------------------------------------------------

    /// ReadBuffer: pins the buffer holding `tag`, reading it from disk if
    /// needed. The caller must hold no content lock.
    pub fn read_buffer(&self, tag: BufferTag) -> StorageResult<BufferRef<'_>> {
        self.read_buffer_mode(tag, ReadMode::Normal, None)
    }

    /// The buffer of `tag` pinned if the pool holds it valid (a hit, counted
    /// as [`BufMgr::read_buffer`] counts one); None, nothing pinned,
    /// otherwise. A block in the pool exists (truncation forgets a block's
    /// buffer before it shortens the file), so a caller that must not read
    /// past the end asks the file's length only on a None.
    pub fn read_buffer_cached(&self, tag: BufferTag) -> Option<BufferRef<'_>> {
        let (id, st) = self.pin_if_mapped(&tag, None)?;
        if st & BM_VALID == 0 {
            self.unpin(id);
            return None;
        }
        self.io.count(IoContext::Normal, IoOp::Hit, 1);
        Some(BufferRef { mgr: self, id, tag })
    }

    /// ReadBufferExtended: with a [`ReadMode`], and with the ring of a bulk
    /// operation if it has one (a miss then takes its victim from the ring,
    /// and any pin raises the usage count to 1 at most).
    pub fn read_buffer_mode(
        &self,
        tag: BufferTag,
        mode: ReadMode,
        strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<BufferRef<'_>> {
        let id = self.buffer_alloc(tag, mode, strategy)?;
        Ok(BufferRef { mgr: self, id, tag })
    }

    /// BufferAlloc: returns the pinned id of a buffer holding `tag`, valid.
    fn buffer_alloc(
        &self,
        tag: BufferTag,
        mode: ReadMode,
        strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<u32> {
        let ctx = IoContext::for_strategy(strategy.as_deref().map(|s| s.kind));
        match self.map_buffer(tag, strategy)? {
            Mapped::Hit(id, st) => {
                self.io.count(ctx, IoOp::Hit, 1);
                self.finish_hit(id, st, tag, mode, ctx)
            }
            Mapped::Miss(id) => match self.do_read_io(id, tag, mode, ctx) {
                Ok(()) => Ok(id),
                Err(e) => {
                    self.unpin(id);
                    Err(e)
                }
            },
        }
    }

    /// The fast path of a lookup: the buffer mapped to `tag`, pinned
    /// under the partition's shared lock; (id, state after our pin).
    fn pin_if_mapped(
        &self,
        tag: &BufferTag,
        strategy: Option<&BufferAccessStrategy>,
    ) -> Option<(u32, u32)> {
        let map = self.mapping[Self::partition(tag)].read();
        let &id = map.get(tag)?;
        Some((id, self.pin_for(id, strategy)))
    }

    /// The mapping half of BufferAlloc: pins the buffer mapped to `tag`
    /// ([`Mapped::Hit`], state after our pin), or maps a victim to it and
    /// returns it pinned with IO_IN_PROGRESS owned by the caller
    /// ([`Mapped::Miss`]; the caller must end that IO).
    ///
    /// PostgreSQL 16's order (BufferAlloc → GetVictimBuffer →
    /// InvalidateVictimBuffer): look the tag up under its partition lock
    /// shared; on a miss release it, take a victim and make it clean and
    /// unmapped under the *old* tag's partition lock alone
    /// ([`BufMgr::get_clean_victim`]), then take the *new* tag's partition
    /// lock alone to insert. Never two partition locks at once; see the
    /// module doc for why the two races in between are harmless.
    fn map_buffer(
        &self,
        tag: BufferTag,
        mut strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<Mapped> {
        let part = Self::partition(&tag);
        if let Some((id, st)) = self.pin_if_mapped(&tag, strategy.as_deref()) {
            return Ok(Mapped::Hit(id, st));
        }

        // Miss: a victim pinned by us alone, clean and mapped to nothing
        // (no partition lock held while we search, write and unmap it).
        let victim = self.get_clean_victim(strategy.as_deref_mut(), false)?;

        // The new partition alone. Somebody else may have mapped our page
        // while we had no lock: use theirs and give the victim back.
        let mut map = self.mapping[part].write();
        if let Some(&id) = map.get(&tag) {
            let st = self.pin_for(id, strategy.as_deref());
            drop(map);
            self.give_back_victim(victim);
            return Ok(Mapped::Hit(id, st));
        }
        let st = self.lock_header(victim);
        self.set_tag(victim, tag);
        map.insert(tag, victim);
        // Our pin and usage count (set by the unmapping), mapped, our IO
        // in progress.
        self.unlock_header(
            victim,
            (st & (REFCOUNT_MASK | USAGE_MASK)) | BM_TAG_VALID | BM_IO_IN_PROGRESS,
        );
        drop(map);
        Ok(Mapped::Miss(victim))
    }

    /// The page was mapped: make sure it is valid (wait for, or redo, its
    /// read IO). `st` is the state after our pin.
    fn finish_hit(
        &self,
        id: u32,
        st: u32,
        tag: BufferTag,
        mode: ReadMode,
        ctx: IoContext,
    ) -> StorageResult<u32> {
        let mut st = st;
        loop {
            if st & BM_VALID != 0 {
                // ReadMode::Zero on a cached page: never wipe it. Someone
                // mapped the block before us, and may already have
                // initialised it and put tuples on it (a wipe would lose
                // those rows). An all-zero page is what the caller asked for;
                // anything else is PostgreSQL's "unexpected data beyond EOF".
                if mode == ReadMode::Zero && !self.pages[id as usize].read().is_new() {
                    self.unpin(id);
                    return Err(beyond_eof(tag));
                }
                return Ok(id);
            }
            let locked = self.lock_header(id);
            if locked & BM_VALID != 0 {
                self.unlock_header(id, locked);
                st = locked;
                continue;
            }
            if locked & BM_IO_IN_PROGRESS != 0 {
                self.unlock_header(id, locked);
                self.wait_io(id);
                st = self.state(id).load(Ordering::Acquire);
                continue;
            }
            // Not valid and nobody reading: a previous read failed. Retry it.
            self.unlock_header(id, locked | BM_IO_IN_PROGRESS);
            return match self.do_read_io(id, tag, mode, ctx) {
                Ok(()) => Ok(id),
                Err(e) => {
                    self.unpin(id);
                    Err(e)
                }
            };
        }
    }

    /// Fills the page of `id` (whose IO_IN_PROGRESS we own) and ends the IO.
    fn do_read_io(
        &self,
        id: u32,
        tag: BufferTag,
        mode: ReadMode,
        ctx: IoContext,
    ) -> StorageResult<()> {
        let res = {
            // Uncontended: nobody touches the contents before VALID.
            let mut page = self.pages[id as usize].write();
            match mode {
                ReadMode::Zero | ReadMode::Overwrite => {
                    page.0.fill(0);
                    Ok(())
                }
                ReadMode::Normal => {
                    self.reads.fetch_add(1, Ordering::Relaxed);
                    self.io.count(ctx, IoOp::Read, 1);
                    self.smgr
                        .read(tag.rel, tag.fork, tag.block, &mut page.0)
                        .and_then(|()| self.verify_read(&page, tag))
                }
            }
        };
        match res {
            Ok(()) => {
                self.terminate_io(id, BM_VALID, BM_IO_ERROR, false);
                Ok(())
            }
            Err(e) => {
                self.terminate_io(id, BM_IO_ERROR, BM_VALID, false);
                Err(e)
            }
        }
    }

    /// StrategyGetBuffer: a buffer with no pins, returned pinned (refcount
    /// 1), and whether it came from the ring of `strategy`. With a ring,
    /// its next slot is tried first (GetBufferFromRing: reused if nobody
    /// pins it and its usage count is at most 1, i.e. only the ring's owner
    /// used it since); otherwise the clock sweep's pick (usage 0) — which
    /// then takes that ring slot (AddBufferToRing).
    fn get_victim(
        &self,
        strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<(u32, bool)> {
        let Some(s) = strategy else {
            return self.clock_sweep().map(|id| (id, false));
        };
        s.current = (s.current + 1) % s.buffers.len();
        let id = s.buffers[s.current];
        if id != NO_BUFFER {
            let st = self.lock_header(id);
            if refcount(st) == 0 && usage(st) <= 1 {
                self.unlock_header(id, st + REFCOUNT_ONE);
                return Ok((id, true));
            }
            self.unlock_header(id, st);
        }
        let id = self.clock_sweep()?;
        s.buffers[s.current] = id;
        Ok((id, false))
    }

    /// A victim (see [`BufMgr::get_victim`]) the caller may write out if it
    /// is dirty, or `None` when a bulk read's ring buffer was rejected
    /// (StrategyRejectBuffer: dirty with WAL not yet flushed up to its LSN —
    /// a scan would rather take another buffer than wait for a WAL flush);
    /// the caller then asks again.
    fn get_writable_victim(
        &self,
        mut strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<Option<(u32, bool)>> {
        let (victim, from_ring) = self.get_victim(strategy.as_deref_mut())?;
        let Some(s) = strategy else {
            return Ok(Some((victim, from_ring)));
        };
        if !from_ring
            || s.kind != StrategyKind::BulkRead
            || self.state(victim).load(Ordering::Acquire) & BM_DIRTY == 0
        {
            return Ok(Some((victim, from_ring)));
        }
        let lsn = self.pages[victim as usize].read().lsn();
        if !self.wal.read().needs_flush(lsn) {
            return Ok(Some((victim, from_ring)));
        }
        // Leave it to the clock sweep (or the checkpointer) and free the slot.
        s.buffers[s.current] = NO_BUFFER;
        self.unpin(victim);
        Ok(None)
    }

    /// The clock sweep: a buffer with no pins and usage 0 (decrementing
    /// usage counts on the way), returned pinned (refcount 1).
    fn clock_sweep(&self) -> StorageResult<u32> {
        let n = self.descs.len() as u64;
        let mut tries = n;
        loop {
            let id = (self.clock_hand.fetch_add(1, Ordering::Relaxed) % n) as u32;
            let st = self.lock_header(id);
            if refcount(st) == 0 {
                if usage(st) > 0 {
                    self.unlock_header(id, st - USAGE_ONE);
                    tries = n;
                } else {
                    self.unlock_header(id, st + REFCOUNT_ONE);
                    return Ok(id);
                }
            } else {
                self.unlock_header(id, st);
                tries -= 1;
                if tries == 0 {
                    return Err(StorageError::NoUnpinnedBuffers);
                }
            }
        }
    }

    // ---- writing ----------------------------------------------------------

    /// FlushBuffer: writes the page of `id` (which the caller has pinned) if
    /// dirty, WAL first. Returns whether it wrote.
    fn flush_buffer(&self, id: u32, ctx: IoContext) -> StorageResult<bool> {
        // StartBufferIO(for output).
        loop {
            let st = self.lock_header(id);
            if st & BM_DIRTY == 0 || st & BM_VALID == 0 {
                self.unlock_header(id, st);
                return Ok(false);
            }
            if st & BM_IO_IN_PROGRESS != 0 {
                self.unlock_header(id, st);
                self.wait_io(id);
                continue;
            }
            self.unlock_header(id, (st | BM_IO_IN_PROGRESS) & !BM_JUST_DIRTIED);
            break;
        }
        let tag = self.tag_of(id);
        let res = {
            // Share lock: the page cannot change while it is written.
            let page = self.pages[id as usize].read();
            let lsn = page.lsn();
            let wal = self.wal.read().clone();
            wal.flush_upto(lsn)
                .map_err(|message| StorageError::WalFlush { lsn, message })
                .and_then(|()| {
                    let out = self.page_to_write(&page, tag.block.0);
                    self.smgr.write(tag.rel, tag.fork, tag.block, &out.0)
                })
        };
        match res {
            Ok(()) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.io.count(ctx, IoOp::Write, 1);
                self.terminate_io(id, 0, BM_IO_ERROR, true);
                Ok(true)
            }
            Err(e) => {
                tracing::warn!(
                    "could not write block {} of relation base/{}: {e}",
                    tag.block,
                    tag.rel
                );
                self.terminate_io(id, BM_IO_ERROR, 0, false);
                Err(e)
            }
        }
    }

    /// Writes every dirty buffer (checkpoint, clean shutdown); returns how
    /// many were written. Does not fsync: see [`Smgr::sync_all`].
    pub fn flush_all(&self) -> StorageResult<usize> {
        let mut written = 0;
        for id in 0..self.descs.len() as u32 {
            let st = self.state(id).load(Ordering::Relaxed);
            if st & (BM_DIRTY | BM_VALID) != (BM_DIRTY | BM_VALID) {
                continue;
            }
            // Pin under the header lock so the buffer cannot be re-tagged.
            let st = self.lock_header(id);
            if st & (BM_DIRTY | BM_VALID) != (BM_DIRTY | BM_VALID) {
                self.unlock_header(id, st);
                continue;
            }
            self.unlock_header(id, st + REFCOUNT_ONE);
            let r = self.flush_buffer(id, IoContext::Normal);
            self.unpin(id);
            if r? {
                written += 1;
            }
        }
        Ok(written)
    }

    // ---- relation-level ---------------------------------------------------

    /// DropRelationBuffers: forgets (without writing) every buffer of `rel`
    /// (all forks) with block >= `from_block`. Waits for transient pins.
    pub fn drop_relation_buffers(&self, rel: RelFileId, from_block: u32) {
        for id in 0..self.descs.len() as u32 {
            loop {
                let st = self.state(id).load(Ordering::Acquire);
                let tag = self.tag_of(id);
                // Unlocked pre-check, as PostgreSQL does: a buffer re-tagged
                // to our relation concurrently would be a new page of it,
                // which the caller's lock on the relation rules out.
                if st & BM_TAG_VALID == 0 || tag.rel != rel || tag.block.0 < from_block {
                    break;
                }
                let part = Self::partition(&tag);
                let mut map = self.mapping[part].write();
                let st = self.lock_header(id);
                if st & BM_TAG_VALID == 0 || self.tag_of(id) != tag {
                    self.unlock_header(id, st);
                    break;
                }
                if refcount(st) > 0 {
                    // A scan or flusher holds it for a moment.
                    self.unlock_header(id, st);
                    drop(map);
                    std::thread::yield_now();
                    continue;
                }
                map.remove(&tag);
                self.unlock_header(id, 0);
                break;
            }
        }
    }

    /// The relation extension lock of `rel` (LockRelationForExtension).
    /// Stripes are shared by relations with equal id modulo
    /// `EXTENSION_LOCK_STRIPES`, as PostgreSQL's extension lock slots are.
    pub(crate) fn lock_extension(&self, rel: RelFileId) -> MutexGuard<'_, ()> {
        let l = &self.ext_locks[rel.0 as usize % EXTENSION_LOCK_STRIPES];
        if let Some(g) = l.mutex.try_lock() {
            return g;
        }
        l.waiters.fetch_add(1, Ordering::Relaxed);
        let g = l.mutex.lock();
        l.waiters.fetch_sub(1, Ordering::Relaxed);
        g
    }

    /// RelationExtensionLockWaiterCount: sessions waiting right now for
    /// `rel`'s extension lock (hio extends by more pages when it is high).
    pub fn extension_lock_waiters(&self, rel: RelFileId) -> u32 {
        self.ext_locks[rel.0 as usize % EXTENSION_LOCK_STRIPES]
            .waiters
            .load(Ordering::Relaxed)
    }

    /// ExtendBufferedRelBy: extends `rel`'s fork by up to `n` blocks and
    /// returns the first new block and the new buffers, pinned,
    /// **exclusively locked** and all-zero (PageIsNew), in block order; the
    /// caller initialises the pages it fills (RBM_ZERO_AND_LOCK) and may drop
    /// the others uninitialised (whoever locks a new page first initialises
    /// it).
    ///
    /// Fewer than `n` blocks come back when the per-operation pin limit
    /// ([`BufMgr::max_pins_per_backend`]) or the pool (every other buffer
    /// pinned) allows no more — never zero: with no buffer to be had at all
    /// the error is "no unpinned buffers available".
    ///
    /// The steps (PostgreSQL 16's ExtendBufferedRelShared):
    ///
    /// 1. *No lock held*: take `n` victim buffers, write the dirty ones out
    ///    (WAL flushed up to their page LSN first; consecutive blocks in one
    ///    system call, [`BufMgr::get_clean_victims`]), remove them from the
    ///    mapping table and zero them. They are pinned by us alone and
    ///    mapped to nothing, so nobody else can reach them.
    /// 2. *Under the relation extension lock*: read the relation's size,
    ///    map every new block to one of our victims with IO_IN_PROGRESS
    ///    (anyone reading the block from now on waits for that IO), grow
    ///    the file (`posix_fallocate` from 8 blocks on, zero pages below).
    /// 3. *Lock released*: take each page's content lock, then end its IO
    ///    (VALID). Whoever waited on the IO now waits on the content lock
    ///    and sees the page only once the caller initialised it.
    ///
    /// The extension lock thus covers a size lookup, a few mapping-table
    /// inserts and one system call — no victim search, no page write, no
    /// WAL flush. With [`ExtendFlags::VICTIMS_UNDER_LOCK`] (the `single`
    /// setting) step 1 happens under the lock and step 3 before it is
    /// released: PostgreSQL 15's one-page-at-a-time behaviour, kept so the
    /// two can be measured side by side.
    ///
    /// Only the caller ends the IOs it started; if growing the file fails,
    /// every block it mapped is unmapped again (or, when a reader already
    /// waits on it, left invalid with IO_ERROR for the next extension of
    /// the same block to take over), and every victim is released.
    pub fn extend_by(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        n: usize,
        flags: ExtendFlags,
        strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<(BlockNumber, Vec<LockedBuffer<'_>>)> {
        // With a ring, never more pages than it has slots: the victims of
        // one extension must not push each other out of the ring.
        let cap = strategy.as_deref().map_or(usize::MAX, |s| s.buffers.len());
        let n = n.clamp(1, self.max_pins_per_backend().min(cap));
        let ctx = IoContext::for_strategy(strategy.as_deref().map(|s| s.kind));
        if flags.contains(ExtendFlags::VICTIMS_UNDER_LOCK) {
            let ext = self.lock_extension(rel);
            return self.extend_locked(rel, fork, n as u32, Some(ext), strategy);
        }
        // Step 1: victims, with no lock held.
        let victims = self.get_clean_victims(n, strategy)?;
        // Step 2: under the extension lock.
        let ext = self.lock_extension(rel);
        let first = match self.smgr.nblocks(rel, fork) {
            Ok(f) => f,
            Err(e) => {
                drop(ext);
                self.release_victims(&victims);
                return Err(e);
            }
        };
        let count = victims.len() as u32;
        if first as u64 + count as u64 > super::smgr::MAX_BLOCKS as u64 {
            drop(ext);
            self.release_victims(&victims);
            return Err(StorageError::RelationTooBig {
                rel,
                max: super::smgr::MAX_BLOCKS,
            });
        }
        let mut ids: Vec<u32> = Vec::with_capacity(victims.len());
        let mut res = Ok(());
        for (i, &victim) in victims.iter().enumerate() {
            let tag = BufferTag {
                rel,
                fork,
                block: BlockNumber(first + i as u32),
            };
            match self.map_victim(victim, tag) {
                Ok(id) => ids.push(id),
                Err(e) => {
                    // map_victim released victims[i] already (it found the
                    // block mapped and took that buffer over instead).
                    self.release_victims(&victims[i + 1..]);
                    res = Err(e);
                    break;
                }
            }
        }
        let res = res.and_then(|()| {
            self.smgr
                .zero_extend(rel, fork, BlockNumber(first), count)
                .map(|_| ())
        });
        drop(ext);
        if let Err(e) = res {
            for (i, id) in ids.into_iter().enumerate() {
                self.abandon_extension(id, BlockNumber(first + i as u32));
            }
            return Err(e);
        }
        self.io.count(ctx, IoOp::Extend, count as u64);
        // Step 3: lock, then end the IO.
        Ok((
            BlockNumber(first),
            self.finish_extension(rel, fork, first, ids),
        ))
    }

    /// ExtendBufferedRelTo (redo): makes sure block `block` of `rel`'s fork
    /// exists, extending the relation through [`BufMgr::extend_by`] as often
    /// as needed, and returns that block's buffer, pinned. A block that
    /// already existed is read with `mode`; one this call created comes back
    /// all-zero whatever the mode. The blocks between the old end and
    /// `block` are left all-zero (PageIsNew): later records fill them, or a
    /// later truncation cuts them off again.
    pub fn extend_to(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        block: BlockNumber,
        mode: ReadMode,
    ) -> StorageResult<BufferRef<'_>> {
        let tag = BufferTag { rel, fork, block };
        loop {
            let n = self.smgr.nblocks(rel, fork)?;
            if block.0 < n {
                return self.read_buffer_mode(tag, mode, None);
            }
            let want = (block.0 - n + 1) as usize;
            let (_, bufs) = self.extend_by(rel, fork, want, ExtendFlags::NONE, None)?;
            for LockedBuffer { page, buf } in bufs {
                drop(page);
                if buf.block() == block {
                    return Ok(buf);
                }
            }
        }
    }

    /// The pre-PostgreSQL-16 extension, all under the extension lock `ext`
    /// (held by the caller, released when this returns): map each new block
    /// (victim search, dirty-victim write and zeroing included), grow the
    /// file, lock the pages and end their IO.
    fn extend_locked(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        n: u32,
        ext: Option<MutexGuard<'_, ()>>,
        mut strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<(BlockNumber, Vec<LockedBuffer<'_>>)> {
        let ctx = IoContext::for_strategy(strategy.as_deref().map(|s| s.kind));
        let first = self.smgr.nblocks(rel, fork)?;
        if first as u64 + n as u64 > super::smgr::MAX_BLOCKS as u64 {
            return Err(StorageError::RelationTooBig {
                rel,
                max: super::smgr::MAX_BLOCKS,
            });
        }
        let mut ids: Vec<u32> = Vec::with_capacity(n as usize);
        let mut res = Ok(());
        for i in 0..n {
            let tag = BufferTag {
                rel,
                fork,
                block: BlockNumber(first + i),
            };
            let mapped = self
                .map_buffer(tag, strategy.as_deref_mut())
                .and_then(|m| match m {
                    Mapped::Miss(id) => {
                        self.pages[id as usize].write().0.fill(0);
                        Ok(id)
                    }
                    Mapped::Hit(id, _) => self.take_over(id, tag),
                });
            match mapped {
                Ok(id) => ids.push(id),
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        let res = res.and_then(|()| {
            self.smgr
                .zero_extend(rel, fork, BlockNumber(first), n)
                .map(|_| ())
        });
        if let Err(e) = res {
            for (i, id) in ids.into_iter().enumerate() {
                self.abandon_extension(id, BlockNumber(first + i as u32));
            }
            return Err(e);
        }
        self.io.count(ctx, IoOp::Extend, n as u64);
        let bufs = self.finish_extension(rel, fork, first, ids);
        drop(ext);
        Ok((BlockNumber(first), bufs))
    }

    /// Step 3 of an extension: content lock first, then VALID (which wakes
    /// the IO waiters), for each new block.
    fn finish_extension(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        first: u32,
        ids: Vec<u32>,
    ) -> Vec<LockedBuffer<'_>> {
        let mut bufs = Vec::with_capacity(ids.len());
        for (i, id) in ids.into_iter().enumerate() {
            let page = self.pages[id as usize].write();
            self.terminate_io(id, BM_VALID, BM_IO_ERROR, false);
            let tag = BufferTag {
                rel,
                fork,
                block: BlockNumber(first + i as u32),
            };
            bufs.push(LockedBuffer {
                page,
                buf: BufferRef { mgr: self, id, tag },
            });
        }
        bufs
    }

    /// GetVictimBuffer: a buffer pinned by us alone, clean and removed
    /// from the mapping table (TAG_VALID clear); all-zero if `zero` (an
    /// extension wants that; a read overwrites the page anyway). Nobody can
    /// find it: a lookup goes through the mapping table, the clock sweep
    /// and every ring skip pinned buffers, and the checkpointer only looks
    /// at valid dirty ones.
    ///
    /// The victim is pinned first (clock sweep or ring), then written if
    /// dirty (WAL first) with no lock but its content lock shared, then
    /// unmapped under its old partition lock alone
    /// ([`BufMgr::unmap_victim`]); if it was pinned or dirtied again in
    /// between, it is let go and another one taken.
    fn get_clean_victim(
        &self,
        mut strategy: Option<&mut BufferAccessStrategy>,
        zero: bool,
    ) -> StorageResult<u32> {
        let ctx = IoContext::for_strategy(strategy.as_deref().map(|s| s.kind));
        loop {
            let Some((victim, from_ring)) = self.get_writable_victim(strategy.as_deref_mut())?
            else {
                continue;
            };
            if let Err(e) = self.flush_buffer(victim, ctx) {
                self.unpin(victim);
                return Err(e);
            }
            if self.unmap_victim(victim, ctx, from_ring, zero) {
                return Ok(victim);
            }
            self.unpin(victim);
        }
    }

    /// Up to `n` victims as [`BufMgr::get_clean_victim`] makes them (fewer
    /// under pin pressure, never none), for a bulk extension: all are taken
    /// first, then the dirty ones are written out in runs of consecutive
    /// blocks, one system call per run ([`BufMgr::flush_buffers`]) — a
    /// COPY's ring hands back the pages it filled one ring ago, in block
    /// order, so 64 victims are typically one 512 kB write instead of 64.
    fn get_clean_victims(
        &self,
        n: usize,
        mut strategy: Option<&mut BufferAccessStrategy>,
    ) -> StorageResult<Vec<u32>> {
        let ctx = IoContext::for_strategy(strategy.as_deref().map(|s| s.kind));
        let mut got: Vec<u32> = Vec::with_capacity(n);
        let mut from_ring: Vec<bool> = Vec::with_capacity(n);
        while got.len() < n {
            match self.get_writable_victim(strategy.as_deref_mut()) {
                Ok(Some((v, r))) => {
                    got.push(v);
                    from_ring.push(r);
                }
                Ok(None) => {}
                // Pin pressure: extend by what we could get.
                Err(StorageError::NoUnpinnedBuffers) if !got.is_empty() => break,
                Err(e) => {
                    self.release_victims(&got);
                    return Err(e);
                }
            }
        }
        if let Err(e) = self.flush_buffers(&got, ctx) {
            self.release_victims(&got);
            return Err(e);
        }
        let mut clean: Vec<u32> = Vec::with_capacity(got.len());
        for (i, &v) in got.iter().enumerate() {
            if self.unmap_victim(v, ctx, from_ring[i], true) {
                clean.push(v);
                continue;
            }
            // Pinned, dirtied or in use meanwhile: another one instead.
            self.unpin(v);
            match self.get_clean_victim(strategy.as_deref_mut(), true) {
                Ok(r) => clean.push(r),
                Err(StorageError::NoUnpinnedBuffers) if !clean.is_empty() => {}
                Err(e) => {
                    self.release_victims(&clean);
                    self.release_victims(&got[i + 1..]);
                    return Err(e);
                }
            }
        }
        Ok(clean)
    }

    /// Under the victim's header lock (`st`): is it still ours to reuse —
    /// only our pin, not dirtied or under IO again since we wrote it, and
    /// still mapped (or not) to the tag we saw before writing?
    fn victim_unchanged(&self, victim: u32, st: u32, old_valid: bool, old_tag: BufferTag) -> bool {
        refcount(st) == 1
            && st & (BM_DIRTY | BM_IO_IN_PROGRESS) == 0
            && (st & BM_TAG_VALID != 0) == old_valid
            && self.tag_of(victim) == old_tag
    }

    /// InvalidateVictimBuffer, for a victim we pinned and (if it was dirty)
    /// wrote: removes it from the mapping table under its old partition
    /// lock (the only partition lock taken) and, if `zero`, zeroes it,
    /// keeping our pin. False — nothing changed — when it cannot be used:
    /// pinned by someone else, dirtied again or under IO meanwhile, or
    /// re-tagged before we looked. A valid page given up counts as an
    /// eviction, or as a reuse when it came from our ring (`from_ring`).
    fn unmap_victim(&self, victim: u32, ctx: IoContext, from_ring: bool, zero: bool) -> bool {
        let st = self.state(victim).load(Ordering::Acquire);
        let old_tag = self.tag_of(victim);
        let old_valid = st & BM_TAG_VALID != 0;
        let mut map = old_valid.then(|| self.mapping[Self::partition(&old_tag)].write());
        let st = self.lock_header(victim);
        if !self.victim_unchanged(victim, st, old_valid, old_tag) {
            self.unlock_header(victim, st);
            return false;
        }
        if let Some(m) = map.as_mut() {
            m.remove(&old_tag);
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
        // Our pin, usage 1, mapped to nothing, contents invalid.
        self.unlock_header(victim, REFCOUNT_ONE | USAGE_ONE);
        drop(map);
        if st & BM_VALID != 0 {
            let op = if from_ring { IoOp::Reuse } else { IoOp::Evict };
            self.io.count(ctx, op, 1);
        }
        if zero {
            self.pages[victim as usize].write().0.fill(0);
        }
        true
    }

    /// FlushBuffer for several buffers we have pinned: the dirty ones are
    /// written, WAL first, consecutive blocks of one fork in one
    /// [`Smgr::write_run`]. A page whose content lock is not free at once
    /// (someone is using the page) is skipped and stays dirty — its caller
    /// then finds it unusable as a victim — so we never wait for one page
    /// lock while holding another.
    fn flush_buffers(&self, ids: &[u32], ctx: IoContext) -> StorageResult<()> {
        // StartBufferIO(for output) on each dirty valid one not under IO.
        let mut mine: Vec<(BufferTag, u32)> = Vec::with_capacity(ids.len());
        for &id in ids {
            let st = self.lock_header(id);
            if st & (BM_DIRTY | BM_VALID) != (BM_DIRTY | BM_VALID) || st & BM_IO_IN_PROGRESS != 0 {
                self.unlock_header(id, st);
                continue;
            }
            self.unlock_header(id, (st | BM_IO_IN_PROGRESS) & !BM_JUST_DIRTIED);
            mine.push((self.tag_of(id), id));
        }
        mine.sort_unstable_by_key(|(t, _)| (t.rel.0, t.fork as u8, t.block.0));
        let mut first_err = None;
        let mut rest = mine.as_slice();
        while let Some(&(tag, _)) = rest.first() {
            let len = rest
                .iter()
                .enumerate()
                .take(super::smgr::WRITE_RUN_MAX)
                .take_while(|(k, (t, _))| {
                    t.rel == tag.rel && t.fork == tag.fork && t.block.0 == tag.block.0 + *k as u32
                })
                .count();
            let (run, tail) = rest.split_at(len);
            rest = tail;
            // Share locks, taken without waiting; the run is cut at the
            // first page that is busy (that one's IO ends unwritten).
            let mut pages = Vec::with_capacity(run.len());
            for &(_, id) in run {
                match self.pages[id as usize].try_read() {
                    Some(g) => pages.push(g),
                    None => break,
                }
            }
            let written = pages.len();
            let res = if written == 0 {
                Ok(())
            } else {
                let lsn = pages.iter().map(|p| p.lsn()).max().unwrap_or_default();
                let wal = self.wal.read().clone();
                wal.flush_upto(lsn)
                    .map_err(|message| StorageError::WalFlush { lsn, message })
                    .and_then(|()| {
                        let out: Vec<std::borrow::Cow<'_, Page>> = pages
                            .iter()
                            .enumerate()
                            .map(|(k, p)| self.page_to_write(p, tag.block.0 + k as u32))
                            .collect();
                        let raw: Vec<&[u8; pgtypes::BLCKSZ]> = out.iter().map(|p| &p.0).collect();
                        self.smgr.write_run(tag.rel, tag.fork, tag.block, &raw)
                    })
            };
            drop(pages);
            for (k, &(_, id)) in run.iter().enumerate() {
                if k >= written {
                    // Busy: not written, still dirty, IO over.
                    self.terminate_io(id, 0, 0, false);
                } else if res.is_ok() {
                    self.writes.fetch_add(1, Ordering::Relaxed);
                    self.io.count(ctx, IoOp::Write, 1);
                    self.terminate_io(id, 0, BM_IO_ERROR, true);
                } else {
                    self.terminate_io(id, BM_IO_ERROR, 0, false);
                }
            }
            if let Err(e) = res {
                tracing::warn!(
                    "could not write blocks {}..{} of relation base/{}: {e}",
                    tag.block,
                    tag.block.0 + written as u32,
                    tag.rel
                );
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Gives back victims of [`BufMgr::get_clean_victim`] that were not
    /// used: unpinned and unmapped, they are the clock sweep's first pick.
    fn release_victims(&self, victims: &[u32]) {
        for &id in victims {
            self.unpin(id);
        }
    }

    /// Gives back one clean unmapped victim that lost the race to map its
    /// block (StrategyFreeBuffer): unpinned with usage 0, so the clock
    /// sweep's next pass takes it first. Only our pin can be on it: it is
    /// in no mapping, and the sweep and the rings skip pinned buffers.
    fn give_back_victim(&self, id: u32) {
        self.update_state(id, |s| (s - REFCOUNT_ONE) & !USAGE_MASK);
    }

    /// Maps the new block `tag` (caller holds the extension lock) to our
    /// clean unmapped `victim`, with IO_IN_PROGRESS owned by us. If the
    /// block is mapped already (a failed extension left it, or a reader
    /// tried it beyond EOF), the victim is released and that buffer taken
    /// over instead. Returns the buffer id used.
    fn map_victim(&self, victim: u32, tag: BufferTag) -> StorageResult<u32> {
        let part = Self::partition(&tag);
        let mut map = self.mapping[part].write();
        if let Some(&id) = map.get(&tag) {
            self.pin(id);
            drop(map);
            self.unpin(victim);
            return self.take_over(id, tag);
        }
        let st = self.lock_header(victim);
        self.set_tag(victim, tag);
        map.insert(tag, victim);
        self.unlock_header(
            victim,
            (st & (REFCOUNT_MASK | USAGE_MASK)) | BM_TAG_VALID | BM_IO_IN_PROGRESS,
        );
        Ok(victim)
    }

    /// A buffer already mapped to the not-yet-existing block `tag`, pinned
    /// by us (caller holds the extension lock): take its IO over once any
    /// IO in progress ends, and zero it. A valid page with content there is
    /// PostgreSQL's "unexpected data beyond EOF".
    fn take_over(&self, id: u32, tag: BufferTag) -> StorageResult<u32> {
        loop {
            let locked = self.lock_header(id);
            if locked & BM_IO_IN_PROGRESS != 0 {
                self.unlock_header(id, locked);
                self.wait_io(id);
                continue;
            }
            self.unlock_header(id, (locked | BM_IO_IN_PROGRESS) & !BM_VALID);
            let was_valid = locked & BM_VALID != 0;
            let mut page = self.pages[id as usize].write();
            if was_valid && !page.is_new() {
                drop(page);
                self.terminate_io(id, BM_VALID, 0, false);
                self.unpin(id);
                return Err(beyond_eof(tag));
            }
            page.0.fill(0);
            return Ok(id);
        }
    }

    /// Undoes the mapping of a block whose extension failed (our IO in
    /// progress, our pin): unmapped if nobody else holds it, else left
    /// invalid with IO_ERROR (its waiters retry the read and fail; the next
    /// extension of the block takes it over). Either way the IO ends.
    fn abandon_extension(&self, id: u32, block: BlockNumber) {
        let tag = self.tag_of(id);
        debug_assert_eq!(tag.block, block);
        let mut map = self.mapping[Self::partition(&tag)].write();
        let st = self.lock_header(id);
        if refcount(st) == 1 && st & BM_TAG_VALID != 0 {
            map.remove(&tag);
            // Unpinned, unmapped, no IO: nobody else pinned it, so nobody
            // waits for the IO either.
            self.unlock_header(id, st & USAGE_MASK);
            return;
        }
        self.unlock_header(id, st);
        drop(map);
        self.terminate_io(id, BM_IO_ERROR, BM_VALID, false);
        self.unpin(id);
    }

    /// Checks the mapping table against the buffer headers (tests, with no
    /// operation in flight): every entry points at a buffer that is
    /// TAG_VALID with that tag, in the tag's partition; no buffer is mapped
    /// twice; every TAG_VALID buffer is in the table. Returns what is wrong.
    pub fn check_mapping(&self) -> Result<(), String> {
        let mut seen = vec![None::<BufferTag>; self.descs.len()];
        for (p, part) in self.mapping.iter().enumerate() {
            for (tag, &id) in part.read().iter() {
                if Self::partition(tag) != p {
                    return Err(format!("{tag:?} in partition {p}"));
                }
                let Some(slot) = seen.get_mut(id as usize) else {
                    return Err(format!("{tag:?} maps to buffer {id}, out of range"));
                };
                if let Some(other) = slot.replace(*tag) {
                    return Err(format!("buffer {id} mapped twice: {other:?} and {tag:?}"));
                }
                let st = self.state(id).load(Ordering::Acquire);
                if st & BM_TAG_VALID == 0 || self.tag_of(id) != *tag {
                    return Err(format!(
                        "{tag:?} maps to buffer {id} holding {:?} (tag valid: {})",
                        self.tag_of(id),
                        st & BM_TAG_VALID != 0
                    ));
                }
            }
        }
        for (id, slot) in seen.iter().enumerate() {
            let st = self.state(id as u32).load(Ordering::Acquire);
            if st & BM_TAG_VALID != 0 && slot.is_none() {
                return Err(format!(
                    "buffer {id} is tag-valid for {:?} but not in the table",
                    self.tag_of(id as u32)
                ));
            }
        }
        Ok(())
    }

    /// Diagnostic: (refcount, usage, dirty, valid) of a buffer.
    pub fn debug_state(&self, id: u32) -> (u32, u32, bool, bool) {
        let s = self.state(id).load(Ordering::Acquire);
        (refcount(s), usage(s), s & BM_DIRTY != 0, s & BM_VALID != 0)
    }
}

/// Options of [`BufMgr::extend_by`] (PostgreSQL's `EB_*` flags; only what
/// hotpair needs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtendFlags(u32);

impl ExtendFlags {
    /// The PostgreSQL 16 path: victims outside the extension lock.
    pub const NONE: ExtendFlags = ExtendFlags(0);
    /// `relation_extension = single`: take, clean and zero each victim and
    /// end each IO while holding the extension lock (PostgreSQL 15).
    pub const VICTIMS_UNDER_LOCK: ExtendFlags = ExtendFlags(1);

    /// True if every flag of `other` is set.
    pub fn contains(self, other: ExtendFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ExtendFlags {
    type Output = ExtendFlags;
    fn bitor(self, rhs: ExtendFlags) -> ExtendFlags {
        ExtendFlags(self.0 | rhs.0)
    }
}

/// An empty ring slot.
const NO_BUFFER: u32 = u32::MAX;

/// The kinds of [`BufferAccessStrategy`] (PostgreSQL's BufferAccessStrategyType,
/// without VACUUM, which hotpair does not have yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    /// BAS_BULKREAD: a sequential scan of a relation larger than a quarter
    /// of the pool; a 256 kB ring; a dirty ring buffer that would need a WAL
    /// flush is rejected (left to the clock sweep) rather than written.
    BulkRead,
    /// BAS_BULKWRITE: COPY and INSERT … SELECT; a 16 MB ring whose dirty
    /// buffers the operation writes out itself (WAL flushed first) before
    /// reusing them.
    BulkWrite,
}

impl StrategyKind {
    /// Ring size in buffers (GetAccessStrategy).
    fn ring_buffers(self) -> usize {
        match self {
            StrategyKind::BulkRead => 256 * 1024 / pgtypes::BLCKSZ,
            StrategyKind::BulkWrite => 16 * 1024 * 1024 / pgtypes::BLCKSZ,
        }
    }
}

/// A buffer access strategy (freelist.c): the ring of buffers one bulk
/// operation recycles, so that a COPY or a big sequential scan does not
/// push every other page out of `shared_buffers` — and, for a bulk write,
/// pays for writing out its own dirty pages instead of leaving them to
/// whoever needs a buffer next.
///
/// Owned by one operation (one session, never shared): plain fields, no
/// locks. The slots hold buffer ids, filled lazily as the operation needs
/// victims; a slot's buffer may have been taken by someone else since, and
/// is reused only if it is unpinned with usage count ≤ 1 (see
/// [`BufMgr::get_victim`]). Pins taken through a strategy raise the usage
/// count to 1 at most.
#[derive(Debug)]
pub struct BufferAccessStrategy {
    kind: StrategyKind,
    buffers: Box<[u32]>,
    current: usize,
}

impl BufferAccessStrategy {
    /// The kind of ring.
    pub fn kind(&self) -> StrategyKind {
        self.kind
    }
    /// Number of slots.
    pub fn ring_size(&self) -> usize {
        self.buffers.len()
    }
}

impl BufMgr {
    /// GetAccessStrategy: a ring for one bulk operation, of the kind's size
    /// but at most an eighth of the pool (PostgreSQL's cap).
    pub fn access_strategy(&self, kind: StrategyKind) -> BufferAccessStrategy {
        let n = kind.ring_buffers().min(self.nbuffers() / 8).max(1);
        BufferAccessStrategy {
            kind,
            buffers: vec![NO_BUFFER; n].into_boxed_slice(),
            current: 0,
        }
    }

    /// Whether a sequential scan of `nblocks` blocks should use a
    /// [`StrategyKind::BulkRead`] ring (PostgreSQL's initscan: the relation
    /// is larger than a quarter of the pool).
    pub fn scan_wants_ring(&self, nblocks: u32) -> bool {
        nblocks as usize > self.nbuffers() / 4
    }
}

/// One relation extension lock slot: the lock, and how many sessions wait
/// for it (RelationExtensionLockWaiterCount).
#[derive(Default)]
struct ExtensionLock {
    mutex: Mutex<()>,
    waiters: AtomicU32,
}

/// What [`BufMgr::map_buffer`] found.
enum Mapped {
    /// Already mapped: (id, state after our pin).
    Hit(u32, u32),
    /// A victim now mapped to the tag, pinned, our IO in progress.
    Miss(u32),
}

/// A page pinned and locked exclusively (a new page from
/// [`BufMgr::extend_by`], or hio's insertion target). Field order matters:
/// the lock is released before the pin.
pub struct LockedBuffer<'a> {
    /// The content lock.
    pub page: RwLockWriteGuard<'a, Page>,
    /// The pin.
    pub buf: BufferRef<'a>,
}

/// PostgreSQL's "unexpected data beyond EOF in block %u of relation %s".
fn beyond_eof(tag: BufferTag) -> StorageError {
    StorageError::CorruptedPage {
        rel: tag.rel,
        block: tag.block,
        detail: "unexpected data beyond EOF".into(),
    }
}

/// Spin a little, then yield (a header lock is held for a few instructions,
/// but its holder may be descheduled on our 2-core machines).
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// The pool's pages start as zeroed memory (`HugeSlice::zeroed`):
    /// valid only while a new unlocked `RwLock<Page>` is all zero bytes.
    #[test]
    fn pool_pages_may_start_zeroed() {
        let fresh = RwLock::new(Page::default());
        let size = std::mem::size_of::<RwLock<Page>>();
        // SAFETY: reads `size` bytes of a live value; RwLock<Page> is a
        // word of lock state and the page bytes, with no padding.
        let bytes = unsafe {
            std::slice::from_raw_parts((&fresh as *const RwLock<Page>).cast::<u8>(), size)
        };
        assert!(bytes.iter().all(|&b| b == 0));
        assert_eq!(
            size,
            std::mem::size_of::<usize>() + std::mem::size_of::<Page>()
        );
        let (_d, p) = pool(64);
        assert!(p.pages.iter().all(|pg| pg.read().0.iter().all(|&b| b == 0)));
    }

    fn pool(n: usize) -> (tempfile::TempDir, Arc<BufMgr>) {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Arc::new(Smgr::open(dir.path()).unwrap());
        (dir, Arc::new(BufMgr::new(smgr, n)))
    }

    fn tag(rel: u32, block: u32) -> BufferTag {
        BufferTag {
            rel: RelFileId(rel),
            fork: ForkNumber::Main,
            block: BlockNumber(block),
        }
    }

    /// Writes a page whose first item is (block, version).
    fn stamp(page: &mut Page, block: u32, version: u64) {
        page.init();
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&block.to_le_bytes());
        b[4..].copy_from_slice(&version.to_le_bytes());
        page.add_item(&b).unwrap();
    }

    fn read_stamp(page: &Page) -> (u32, u64) {
        let it = page.item(1).unwrap();
        (
            u32::from_le_bytes(it[..4].try_into().unwrap()),
            u64::from_le_bytes(it[4..12].try_into().unwrap()),
        )
    }

    #[test]
    fn data_survives_eviction() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(1);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        // 64 blocks through a 16-buffer pool.
        while bm.smgr().nblocks(rel, ForkNumber::Main).unwrap() < 64 {
            let (first, bufs) = bm
                .extend_by(rel, ForkNumber::Main, 16, ExtendFlags::NONE, None)
                .unwrap();
            assert!(
                !bufs.is_empty() && bufs.len() <= bm.max_pins_per_backend(),
                "extension bounded by the pin limit"
            );
            assert_eq!(bufs[0].buf.block(), first);
            for LockedBuffer { mut page, buf } in bufs {
                assert!(page.is_new(), "a new page is all-zero");
                stamp(&mut page, buf.block().0, 1);
                buf.mark_dirty();
            }
        }
        let n = bm.smgr().nblocks(rel, ForkNumber::Main).unwrap();
        for blk in 0..n {
            let b = bm.read_buffer(tag(1, blk)).unwrap();
            let mut p = b.write();
            stamp(&mut p, blk, 2);
            b.mark_dirty();
        }
        for blk in 0..n {
            let b = bm.read_buffer(tag(1, blk)).unwrap();
            assert_eq!(
                read_stamp(&b.read()),
                (blk, 2),
                "block {blk} after eviction"
            );
        }
        assert!(bm.stats().evictions > 0, "pool of 16 evicted");
        assert!(bm.stats().writes > 0, "dirty victims were written");
        // Checkpoint then a fresh pool reads the same.
        bm.flush_all().unwrap();
        bm.smgr().sync_all().unwrap();
        let bm2 = BufMgr::new(bm.smgr().clone(), 16);
        for blk in 0..n {
            let b = bm2.read_buffer(tag(1, blk)).unwrap();
            assert_eq!(read_stamp(&b.read()), (blk, 2));
        }
    }

    /// Extends `rel` by `n` pages one at a time (through `ring` if given),
    /// each stamped, with page LSN `lsn(block)`, and dirty.
    fn load(
        bm: &BufMgr,
        rel: u32,
        n: u32,
        flags: ExtendFlags,
        mut ring: Option<&mut BufferAccessStrategy>,
        lsn: impl Fn(u32) -> u64,
    ) {
        let rel = RelFileId(rel);
        for _ in 0..n {
            let (_, bufs) = bm
                .extend_by(rel, ForkNumber::Main, 1, flags, ring.as_deref_mut())
                .unwrap();
            for LockedBuffer { mut page, buf } in bufs {
                stamp(&mut page, buf.block().0, 1);
                page.set_lsn(Lsn(lsn(buf.block().0)));
                buf.mark_dirty();
            }
        }
    }

    /// Reads every block of `rel` below `n`; returns how many had to be
    /// read from disk (were not cached).
    fn misses(bm: &BufMgr, rel: u32, n: u32) -> u64 {
        let before = bm.stats().reads;
        for blk in 0..n {
            let b = bm.read_buffer(tag(rel, blk)).unwrap();
            assert_eq!(read_stamp(&b.read()).0, blk, "block {blk} of rel {rel}");
        }
        bm.stats().reads - before
    }

    #[test]
    fn bulk_write_ring_leaves_the_pool_cached() {
        for flags in [ExtendFlags::NONE, ExtendFlags::VICTIMS_UNDER_LOCK] {
            // 256 buffers: a BULKWRITE ring of 256 / 8 = 32.
            let (_d, bm) = pool(256);
            for rel in [1, 2] {
                bm.smgr().create(RelFileId(rel), ForkNumber::Main).unwrap();
            }
            // Everybody else's pages: 128 blocks, cached and used twice.
            load(&bm, 1, 128, flags, None, |_| 0);
            bm.flush_all().unwrap();
            assert_eq!(misses(&bm, 1, 128), 0, "{flags:?}: table cached");

            // A load of 1000 pages (4x the pool) through one ring.
            let mut ring = bm.access_strategy(StrategyKind::BulkWrite);
            assert_eq!(ring.ring_size(), 32, "ring capped at 1/8 of the pool");
            let writes = bm.stats().writes;
            load(&bm, 2, 1000, flags, Some(&mut ring), |_| 0);
            assert!(
                bm.stats().writes - writes >= 1000 - 32,
                "{flags:?}: the load wrote its own dirty ring buffers"
            );
            assert!(
                misses(&bm, 1, 128) <= 128 / 10,
                "{flags:?}: a load through a ring leaves most of the pool cached"
            );
            assert!(misses(&bm, 2, 1000) > 0, "the loaded pages read back");

            // The same load without a ring sweeps the pool clean.
            load(&bm, 2, 1000, flags, None, |_| 0);
            assert!(
                misses(&bm, 1, 128) > 64,
                "{flags:?}: a load without a ring evicts the pool"
            );
        }
    }

    /// A WAL hook that remembers each flush it had to do and how many pages
    /// the pool had written at that moment.
    #[derive(Default)]
    struct RecordingWal {
        bm: std::sync::OnceLock<std::sync::Weak<BufMgr>>,
        flushed: AtomicU64,
        flushes: Mutex<Vec<(u64, u64)>>,
    }

    impl WalFlush for RecordingWal {
        fn flush_upto(&self, lsn: Lsn) -> Result<(), String> {
            if self.needs_flush(lsn) {
                let writes = self
                    .bm
                    .get()
                    .and_then(|w| w.upgrade())
                    .map_or(0, |bm| bm.stats().writes);
                self.flushes.lock().push((lsn.0, writes));
                self.flushed.fetch_max(lsn.0, Ordering::SeqCst);
            }
            Ok(())
        }
        fn needs_flush(&self, lsn: Lsn) -> bool {
            lsn.0 > self.flushed.load(Ordering::SeqCst)
        }
    }

    fn recording(bm: &Arc<BufMgr>, flushed: u64) -> Arc<RecordingWal> {
        let wal = Arc::new(RecordingWal::default());
        let _ = wal.bm.set(Arc::downgrade(bm));
        wal.flushed.store(flushed, Ordering::SeqCst);
        bm.set_wal_flush(wal.clone());
        wal
    }

    #[test]
    fn ring_buffers_are_written_only_after_their_wal_flush() {
        for flags in [ExtendFlags::NONE, ExtendFlags::VICTIMS_UNDER_LOCK] {
            let (_d, bm) = pool(256);
            let wal = recording(&bm, 0);
            bm.smgr().create(RelFileId(2), ForkNumber::Main).unwrap();
            let mut ring = bm.access_strategy(StrategyKind::BulkWrite);
            // Block b changed by WAL ending at b + 1, none of it flushed.
            load(&bm, 2, 100, flags, Some(&mut ring), |b| u64::from(b) + 1);
            // Extensions 33..100 reuse the ring's buffers in order: block k
            // (LSN k + 1) is written as the k-th write, right after WAL was
            // flushed up to k + 1 — never before.
            let expected: Vec<(u64, u64)> = (0..68).map(|k| (k + 1, k)).collect();
            assert_eq!(
                *wal.flushes.lock(),
                expected,
                "{flags:?}: each ring buffer written after the WAL flush to its LSN"
            );
            assert_eq!(bm.stats().writes, 68, "{flags:?}: 68 ring buffers written");
        }
    }

    #[test]
    fn bulk_read_ring_rejects_buffers_that_need_a_wal_flush() {
        let (_d, bm) = pool(256);
        bm.smgr().create(RelFileId(3), ForkNumber::Main).unwrap();
        load(&bm, 3, 100, ExtendFlags::NONE, None, |_| 0);
        bm.flush_all().unwrap();
        // A fresh pool: nothing cached; WAL flushed up to 10.
        let bm = Arc::new(BufMgr::new(bm.smgr().clone(), 256));
        let wal = recording(&bm, 10);
        assert!(bm.scan_wants_ring(100), "100 blocks > a quarter of 256");
        assert!(!bm.scan_wants_ring(64), "64 blocks is not");
        let mut ring = bm.access_strategy(StrategyKind::BulkRead);
        assert_eq!(ring.ring_size(), 32);
        for blk in 0..96 {
            let b = bm
                .read_buffer_mode(tag(3, blk), ReadMode::Normal, Some(&mut ring))
                .unwrap();
            // The scan dirties what it reads (hint bits): blocks 0..32 with
            // WAL already flushed, blocks 32..64 with WAL not yet flushed.
            if blk < 64 {
                let mut p = b.write();
                p.set_lsn(Lsn(if blk < 32 { 5 } else { 50 }));
                b.mark_dirty();
            }
        }
        assert!(wal.flushes.lock().is_empty(), "a scan never flushes WAL");
        assert_eq!(
            bm.stats().writes,
            32,
            "dirty ring buffers without WAL to flush are written and reused"
        );
        for blk in 32..64 {
            let b = bm.read_buffer(tag(3, blk)).unwrap();
            let (_, _, dirty, valid) = bm.debug_state(b.id());
            assert!(
                dirty && valid,
                "block {blk}: rejected ring buffer still cached and dirty"
            );
        }
    }

    #[test]
    fn pin_prevents_eviction() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(2);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        bm.smgr()
            .zero_extend(rel, ForkNumber::Main, BlockNumber(0), 100)
            .unwrap();
        let pinned = bm.read_buffer(tag(2, 0)).unwrap();
        let id = pinned.id();
        for blk in 1..100 {
            let b = bm.read_buffer(tag(2, blk)).unwrap();
            assert_ne!(b.id(), id, "pinned buffer was reused");
        }
        assert_eq!(bm.tag_of(id), tag(2, 0));
        assert_eq!(bm.debug_state(id).0, 1);
        drop(pinned);
        assert_eq!(bm.debug_state(id).0, 0);
    }

    #[test]
    fn all_pinned_is_an_error() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(3);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        bm.smgr()
            .zero_extend(rel, ForkNumber::Main, BlockNumber(0), 17)
            .unwrap();
        let held: Vec<_> = (0..16)
            .map(|b| bm.read_buffer(tag(3, b)).unwrap())
            .collect();
        let err = bm.read_buffer(tag(3, 16)).err().expect("pool exhausted");
        assert!(matches!(err, StorageError::NoUnpinnedBuffers));
        drop(held);
        assert!(bm.read_buffer(tag(3, 16)).is_ok());
    }

    #[test]
    fn corrupt_page_is_error_and_retryable() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(4);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        let mut p = Page::default();
        p.init();
        p.0[12] = 0xff; // pd_lower garbage
        p.0[13] = 0xff;
        bm.smgr()
            .extend(rel, ForkNumber::Main, BlockNumber(0), &p.0)
            .unwrap();
        for _ in 0..2 {
            let err = bm.read_buffer(tag(4, 0)).err().expect("corrupt");
            assert_eq!(
                err.sqlstate(),
                pgtypes::error::sqlstate::DATA_CORRUPTED,
                "{err}"
            );
        }
        p.init();
        bm.smgr()
            .write(rel, ForkNumber::Main, BlockNumber(0), &p.0)
            .unwrap();
        assert!(
            bm.read_buffer(tag(4, 0)).is_ok(),
            "a fixed page reads after a failed read"
        );
    }

    #[test]
    fn drop_relation_buffers_forgets_pages() {
        let (_d, bm) = pool(32);
        let rel = RelFileId(5);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        let (_, bufs) = bm
            .extend_by(rel, ForkNumber::Main, 3, ExtendFlags::NONE, None)
            .unwrap();
        for b in bufs {
            let LockedBuffer { mut page, buf } = b;
            stamp(&mut page, buf.block().0, 1);
            buf.mark_dirty();
        }
        bm.drop_relation_buffers(rel, 1);
        bm.smgr().truncate(rel, ForkNumber::Main, 1).unwrap();
        assert_eq!(
            read_stamp(&bm.read_buffer(tag(5, 0)).unwrap().read()),
            (0, 1),
            "block 0 kept"
        );
        assert!(bm.read_buffer(tag(5, 1)).is_err(), "block 1 gone");
        assert_eq!(bm.flush_all().unwrap(), 1, "only block 0 still dirty");
    }

    /// A new block is visible (nblocks grew) as soon as extend_by
    /// returns, but nobody sees it before the extender initialised it and
    /// let go of its lock; and a "zero" read never wipes a filled page.
    #[test]
    fn new_pages_are_locked_until_the_extender_lets_go() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(8);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        let (first, mut bufs) = bm
            .extend_by(rel, ForkNumber::Main, 1, ExtendFlags::NONE, None)
            .unwrap();
        assert_eq!(bm.smgr().nblocks(rel, ForkNumber::Main).unwrap(), 1);
        let reader = {
            let bm = bm.clone();
            std::thread::spawn(move || {
                let b = bm.read_buffer(tag(8, first.0)).unwrap();
                let page = b.read();
                read_stamp(&page)
            })
        };
        let LockedBuffer { mut page, buf } = bufs.pop().unwrap();
        stamp(&mut page, first.0, 7);
        buf.mark_dirty();
        drop(page);
        drop(buf);
        assert_eq!(reader.join().unwrap(), (0, 7), "reader saw the filled page");
        let err = bm
            .read_buffer_mode(tag(8, 0), ReadMode::Zero, None)
            .err()
            .expect("zero read of a filled page");
        assert!(err.to_string().contains("beyond EOF"), "{err}");
        assert_eq!(
            read_stamp(&bm.read_buffer(tag(8, 0)).unwrap().read()),
            (0, 7),
            "not wiped"
        );
    }

    /// Extenders racing on one relation get disjoint blocks, every
    /// block of the file comes from exactly one extension, and both paths
    /// (victims outside and under the lock) agree.
    #[test]
    fn concurrent_extenders_get_disjoint_blocks() {
        for flags in [ExtendFlags::NONE, ExtendFlags::VICTIMS_UNDER_LOCK] {
            let (_d, bm) = pool(64);
            let rel = RelFileId(9);
            bm.smgr().create(rel, ForkNumber::Main).unwrap();
            let hs: Vec<_> = (0..4u32)
                .map(|t| {
                    let bm = bm.clone();
                    std::thread::spawn(move || {
                        let mut mine = Vec::new();
                        for round in 0..40u32 {
                            let n = 1 + ((t + round) % 5) as usize;
                            let (first, bufs) =
                                bm.extend_by(rel, ForkNumber::Main, n, flags, None).unwrap();
                            assert!(!bufs.is_empty() && bufs.len() <= n);
                            for (i, LockedBuffer { mut page, buf }) in bufs.into_iter().enumerate()
                            {
                                assert_eq!(buf.block().0, first.0 + i as u32, "consecutive");
                                assert!(page.is_new(), "a new page is all-zero");
                                stamp(&mut page, buf.block().0, u64::from(t));
                                buf.mark_dirty();
                                mine.push(buf.block().0);
                            }
                        }
                        mine
                    })
                })
                .collect();
            let mut all: Vec<u32> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
            all.sort_unstable();
            let n = bm.smgr().nblocks(rel, ForkNumber::Main).unwrap();
            assert_eq!(
                all,
                (0..n).collect::<Vec<_>>(),
                "{flags:?}: disjoint, no gaps"
            );
            for blk in 0..n {
                let b = bm.read_buffer(tag(9, blk)).unwrap();
                assert_eq!(
                    read_stamp(&b.read()).0,
                    blk,
                    "{flags:?}: block {blk} kept its page"
                );
            }
            for id in 0..bm.nbuffers() as u32 {
                assert_eq!(bm.debug_state(id).0, 0, "pin leaked on buffer {id}");
            }
        }
    }

    /// With most of the pool pinned, an extension returns as many
    /// blocks as there are buffers left (fewer than asked, never zero), and
    /// with none left it fails without growing the file.
    #[test]
    fn extension_under_pin_pressure_returns_fewer_pages() {
        let (_d, bm) = pool(32);
        let other = RelFileId(10);
        let rel = RelFileId(11);
        bm.smgr().create(other, ForkNumber::Main).unwrap();
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        // Asking for more than the pin limit is capped at the limit.
        let limit = bm.max_pins_per_backend();
        let (_, bufs) = bm
            .extend_by(rel, ForkNumber::Main, limit + 10, ExtendFlags::NONE, None)
            .unwrap();
        assert_eq!(bufs.len(), limit, "capped at the pin limit");
        drop(bufs);
        // Pin all but three buffers.
        bm.smgr()
            .zero_extend(other, ForkNumber::Main, BlockNumber(0), 29)
            .unwrap();
        let held: Vec<_> = (0..29)
            .map(|b| bm.read_buffer(tag(10, b)).unwrap())
            .collect();
        let before = bm.smgr().nblocks(rel, ForkNumber::Main).unwrap();
        let (first, bufs) = bm
            .extend_by(rel, ForkNumber::Main, 4, ExtendFlags::NONE, None)
            .unwrap();
        assert_eq!(first.0, before);
        assert_eq!(bufs.len(), 3, "fewer than asked: what the pool had");
        assert_eq!(
            bm.smgr().nblocks(rel, ForkNumber::Main).unwrap(),
            before + 3
        );
        let err = bm
            .extend_by(rel, ForkNumber::Main, 1, ExtendFlags::NONE, None)
            .err()
            .expect("every buffer pinned");
        assert!(matches!(err, StorageError::NoUnpinnedBuffers), "{err}");
        assert_eq!(
            bm.smgr().nblocks(rel, ForkNumber::Main).unwrap(),
            before + 3,
            "a failed extension does not grow the file"
        );
        drop(bufs);
        drop(held);
        for id in 0..bm.nbuffers() as u32 {
            assert_eq!(bm.debug_state(id).0, 0, "pin leaked on buffer {id}");
        }
    }

    /// A reader of a block whose extension is in progress (mapped
    /// IO_IN_PROGRESS, the file not yet grown) waits for that IO instead of
    /// reading past the end of the file, and then sees the extender's page.
    #[test]
    fn readers_of_a_block_being_extended_wait_for_the_io() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(12);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        // Play the extender by hand, stopped between steps 2 and 3.
        let victim = bm.get_clean_victim(None, true).unwrap();
        let ext = bm.lock_extension(rel);
        let id = bm.map_victim(victim, tag(12, 0)).unwrap();
        let started = Arc::new(AtomicBool::new(false));
        let reader = {
            let (bm, started) = (bm.clone(), started.clone());
            std::thread::spawn(move || {
                started.store(true, Ordering::Release);
                let b = bm.read_buffer(tag(12, 0)).unwrap();
                let page = b.read();
                read_stamp(&page)
            })
        };
        // The reader gets as far as waiting on our IO: its pin shows up.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !(started.load(Ordering::Acquire) && bm.debug_state(id).0 == 2) {
            assert!(std::time::Instant::now() < deadline, "reader never pinned");
            std::thread::yield_now();
        }
        assert!(!reader.is_finished(), "reader waits for the IO");
        bm.smgr()
            .zero_extend(rel, ForkNumber::Main, BlockNumber(0), 1)
            .unwrap();
        drop(ext);
        let mut bufs = bm.finish_extension(rel, ForkNumber::Main, 0, vec![id]);
        let LockedBuffer { mut page, buf } = bufs.pop().unwrap();
        stamp(&mut page, 0, 9);
        buf.mark_dirty();
        drop(page);
        drop(buf);
        assert_eq!(
            reader.join().unwrap(),
            (0, 9),
            "the reader saw the filled page"
        );
        assert_eq!(bm.stats().reads, 0, "nobody read the block from disk");
    }

    /// Threads reading the same uncached block at once: one reads it from
    /// disk, the others wait for that IO (or hit afterwards) — never a
    /// second read, never an invalid page.
    #[test]
    fn concurrent_readers_of_one_block_share_the_io() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(7);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        let mut p = Page::default();
        stamp(&mut p, 0, 42);
        bm.smgr()
            .extend(rel, ForkNumber::Main, BlockNumber(0), &p.0)
            .unwrap();
        for round in 0..20 {
            bm.drop_relation_buffers(rel, 0);
            let reads_before = bm.stats().reads;
            let barrier = Arc::new(std::sync::Barrier::new(6));
            let hs: Vec<_> = (0..6)
                .map(|_| {
                    let (bm, barrier) = (bm.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        let b = bm.read_buffer(tag(7, 0)).unwrap();
                        let page = b.read();
                        read_stamp(&page)
                    })
                })
                .collect();
            for h in hs {
                assert_eq!(h.join().unwrap(), (0, 42), "round {round}: valid page");
            }
            assert_eq!(
                bm.stats().reads - reads_before,
                1,
                "round {round}: one read for six readers"
            );
        }
    }

    /// Relation `relno` with `nblocks` pages, each stamped with its block
    /// number and a zero counter (dirty in the pool).
    fn stamped_relation(bm: &BufMgr, relno: u32, nblocks: u32) {
        let rel = RelFileId(relno);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        bm.smgr()
            .zero_extend(rel, ForkNumber::Main, BlockNumber(0), nblocks)
            .unwrap();
        for blk in 0..nblocks {
            let b = bm.read_buffer(tag(relno, blk)).unwrap();
            stamp(&mut b.write(), blk, 0);
            b.mark_dirty();
        }
    }

    /// Many threads read-modify-write counters on more pages than the pool
    /// holds; every increment must survive eviction.
    #[test]
    fn concurrent_readers_writers_beyond_pool() {
        let (_d, bm) = pool(16);
        let nblocks = 64u32;
        stamped_relation(&bm, 6, nblocks);
        let threads = 6;
        let rounds = 300u32;
        let failed = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let bm = bm.clone();
                let failed = failed.clone();
                let done = done.clone();
                std::thread::spawn(move || {
                    let mut x = t as u32 * 7919 + 1;
                    for _ in 0..rounds {
                        x = x.wrapping_mul(1103515245).wrapping_add(12345);
                        let blk = (x >> 8) % nblocks;
                        let b = match bm.read_buffer(tag(6, blk)) {
                            Ok(b) => b,
                            Err(StorageError::NoUnpinnedBuffers) => continue,
                            Err(e) => panic!("{e}"),
                        };
                        let mut p = b.write();
                        let (bb, v) = read_stamp(&p);
                        if bb != blk {
                            failed.store(true, Ordering::Relaxed);
                        }
                        stamp(&mut p, blk, v + 1);
                        b.mark_dirty();
                        drop(p);
                        done.fetch_add(1, Ordering::Relaxed);
                        // Readers too.
                        let other = (blk + 1) % nblocks;
                        if let Ok(o) = bm.read_buffer(tag(6, other)) {
                            if read_stamp(&o.read()).0 != other {
                                failed.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(
            !failed.load(Ordering::Relaxed),
            "a buffer held the wrong block"
        );
        let total: u64 = (0..nblocks)
            .map(|blk| read_stamp(&bm.read_buffer(tag(6, blk)).unwrap().read()).1)
            .sum();
        assert_eq!(
            total,
            done.load(Ordering::Relaxed),
            "every increment survived eviction"
        );
        for id in 0..bm.nbuffers() as u32 {
            assert_eq!(bm.debug_state(id).0, 0, "pin leaked on buffer {id}");
        }
    }

    /// The miss path of [`BufMgr::map_buffer`] under stress: 8 threads read
    /// random blocks of a relation four times the size of a 16-buffer pool
    /// (some through a bulk-read ring), a third of the reads turn into
    /// writes. Every victim is found, written, unmapped under its old
    /// partition and mapped under the new one with no lock held across —
    /// so a block may be missed by two threads at once (one of them gives
    /// its victim back), and a victim may be pinned or dirtied again before
    /// it is unmapped (it is let go). Every read must see its own block,
    /// every increment must survive, and at the end the mapping table must
    /// agree with the buffer headers, with no buffer mapped twice.
    #[test]
    fn victim_first_mapping_under_stress() {
        let (_d, bm) = pool(16);
        let nblocks = 64u32;
        stamped_relation(&bm, 9, nblocks);
        let hits_before = bm.io_stats().snapshot();
        let threads = 8u32;
        let rounds = 2000u32;
        let wrong = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (bm, wrong, done) = (bm.clone(), wrong.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut ring = (t % 4 == 3).then(|| bm.access_strategy(StrategyKind::BulkRead));
                    let mut x = t.wrapping_mul(2_654_435_761).wrapping_add(17);
                    for i in 0..rounds {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        let blk = x % nblocks;
                        let b =
                            match bm.read_buffer_mode(tag(9, blk), ReadMode::Normal, ring.as_mut())
                            {
                                Ok(b) => b,
                                // 8 threads cannot pin 16 buffers full, but a
                                // sweep may meet them all pinned for a moment.
                                Err(StorageError::NoUnpinnedBuffers) => continue,
                                Err(e) => panic!("read of block {blk}: {e}"),
                            };
                        if i % 3 == 0 {
                            let mut p = b.write();
                            let (bb, v) = read_stamp(&p);
                            if bb != blk {
                                wrong.fetch_add(1, Ordering::Relaxed);
                            }
                            stamp(&mut p, blk, v + 1);
                            b.mark_dirty();
                            done.fetch_add(1, Ordering::Relaxed);
                        } else if read_stamp(&b.read()).0 != blk {
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(
            wrong.load(Ordering::Relaxed),
            0,
            "every read saw its own block"
        );
        for id in 0..bm.nbuffers() as u32 {
            assert_eq!(bm.debug_state(id).0, 0, "pin leaked on buffer {id}");
        }
        if let Err(e) = bm.check_mapping() {
            panic!("mapping table against buffer headers: {e}");
        }
        let total: u64 = (0..nblocks)
            .map(|blk| read_stamp(&bm.read_buffer(tag(9, blk)).unwrap().read()).1)
            .sum();
        assert_eq!(
            total,
            done.load(Ordering::Relaxed),
            "every increment survived eviction"
        );
        let io = bm.io_stats().snapshot();
        let n = IoContext::Normal as usize;
        assert!(
            io[0][n][IoOp::Evict as usize] > hits_before[0][n][IoOp::Evict as usize],
            "evictions counted"
        );
        assert!(
            io[0][n][IoOp::Write as usize] > hits_before[0][n][IoOp::Write as usize],
            "dirty victims' writes counted"
        );
        assert!(
            io[0][IoContext::BulkRead as usize][IoOp::Read as usize] > 0,
            "ring reads counted in bulkread"
        );
    }

    /// Two sessions missing on the same block at once: one maps it, the
    /// other finds the mapping when it comes to insert, gives its victim
    /// back and waits for the first one's read. One read from disk, one
    /// mapping, no pin left, the victim reusable.
    #[test]
    fn racing_misses_on_one_block_map_it_once() {
        let (_d, bm) = pool(16);
        let rel = RelFileId(10);
        bm.smgr().create(rel, ForkNumber::Main).unwrap();
        let mut p = Page::default();
        for blk in 0..4 {
            stamp(&mut p, blk, 7);
            bm.smgr()
                .extend(rel, ForkNumber::Main, BlockNumber(blk), &p.0)
                .unwrap();
        }
        for round in 0..50 {
            bm.drop_relation_buffers(rel, 0);
            let barrier = Arc::new(std::sync::Barrier::new(8));
            let hs: Vec<_> = (0..8)
                .map(|t| {
                    let (bm, barrier) = (bm.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        let blk = t % 2;
                        let b = bm.read_buffer(tag(10, blk)).unwrap();
                        let st = read_stamp(&b.read());
                        (blk, st)
                    })
                })
                .collect();
            for h in hs {
                let (blk, st) = h.join().unwrap();
                assert_eq!(st, (blk, 7), "round {round}: block {blk} read right");
            }
            if let Err(e) = bm.check_mapping() {
                panic!("round {round}: {e}");
            }
            for id in 0..bm.nbuffers() as u32 {
                assert_eq!(bm.debug_state(id).0, 0, "round {round}: pin leaked on {id}");
            }
        }
    }
}
