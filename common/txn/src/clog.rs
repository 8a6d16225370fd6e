//! # The commit log (clog.c, pg_xact)
//!
//! Two bits per transaction id record whether it is in progress, committed,
//! aborted or sub-committed. The bits live in 8 KiB pages (32,768 xids per
//! page) stored in segment files `DIR/pg_xact/XXXX` of 32 pages each, exactly
//! PostgreSQL's layout: byte `(xid % 32768) / 4` of a page, bit shift
//! `(xid % 4) * 2` inside that byte.
//!
//! ```text
//!   xid ──► page = xid / 32768 ──► segment file = page / 32  (pg_xact/%04X)
//!                                  offset      = (page % 32) * 8192
//! ```
//!
//! ## Cache and concurrency
//!
//! Pages are cached in memory as arrays of `AtomicU64` words (32 xids per
//! word), so a status read is a hash lookup plus one atomic load under a
//! shared lock, and a status write is one compare-and-swap under the same
//! shared lock: commits never serialize on the clog. The map lock is taken
//! exclusively only to load a page from disk or evict a clean one.
//!
//! * A page absent from disk (beyond the end of its file, or a missing file)
//!   reads as zeros, i.e. every xid "in progress".
//! * A page is marked dirty *after* its bits change; [`Clog::flush`] clears the
//!   flag *before* copying the bits, so a change racing with a flush leaves the
//!   page dirty for the next one — nothing is lost.
//! * Only clean pages are evicted (at most [`MAX_CACHED_PAGES`] are kept while
//!   clean ones exist).
//! * `FROZEN` and `BOOTSTRAP` are always committed; `INVALID` reads as aborted
//!   (PostgreSQL's TransactionLogFetch).
//!
//! Locks: `pages` (RwLock) is a leaf for status reads and writes; `io`
//! (Mutex) serializes flushes and is taken before `pages`, never after.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use pgtypes::error::{sqlstate, PgError, PgResult};
use pgtypes::{TransactionId, BLCKSZ};

/// Xids whose status fits in one page (two bits each).
pub const CLOG_XACTS_PER_PAGE: u64 = (BLCKSZ as u64) * 4;
/// Pages per segment file (SLRU_PAGES_PER_SEGMENT).
pub const CLOG_PAGES_PER_SEGMENT: u64 = 32;
/// Soft bound on cached pages (2 MiB); dirty pages are never evicted.
pub const MAX_CACHED_PAGES: usize = 256;

const WORDS_PER_PAGE: usize = BLCKSZ / 8;

/// Final (or not) state of a transaction: two bits per xid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidStatus {
    /// Not finished (or crashed before finishing: treated as aborted once no
    /// proc has it).
    InProgress,
    /// Committed.
    Committed,
    /// Aborted.
    Aborted,
    /// A subtransaction whose parent is still deciding.
    SubCommitted,
}

impl XidStatus {
    /// The two on-disk bits (TRANSACTION_STATUS_*).
    fn bits(self) -> u64 {
        match self {
            XidStatus::InProgress => 0,
            XidStatus::Committed => 1,
            XidStatus::Aborted => 2,
            XidStatus::SubCommitted => 3,
        }
    }
    fn from_bits(bits: u64) -> XidStatus {
        match bits & 3 {
            0 => XidStatus::InProgress,
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::SubCommitted,
        }
    }
}

/// One cached clog page.
struct ClogPage {
    /// 1024 little-endian words; xid `i` of the page is at bits `(i%32)*2` of
    /// word `i/32` (the same bytes as PostgreSQL's page once serialized LE).
    words: Box<[AtomicU64]>,
    /// Set after a change, cleared by flush before copying.
    dirty: AtomicBool,
}

impl ClogPage {
    fn from_bytes(bytes: &[u8]) -> ClogPage {
        let words = (0..WORDS_PER_PAGE)
            .map(|w| {
                let mut b = [0u8; 8];
                if let Some(src) = bytes.get(w * 8..w * 8 + 8) {
                    b.copy_from_slice(src);
                }
                AtomicU64::new(u64::from_le_bytes(b))
            })
            .collect();
        ClogPage {
            words,
            dirty: AtomicBool::new(false),
        }
    }
    fn to_bytes(&self, out: &mut [u8]) {
        for (w, word) in self.words.iter().enumerate() {
            out[w * 8..w * 8 + 8].copy_from_slice(&word.load(Ordering::Acquire).to_le_bytes());
        }
    }
}

/// Two bits per xid in files under `DIR/pg_xact`, with cached pages.
pub struct Clog {
    dir: PathBuf,
    pages: RwLock<HashMap<u64, Arc<ClogPage>>>,
    io: Mutex<()>,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> PgError {
    PgError::new(
        sqlstate::IO_ERROR,
        format!("could not {what} file \"{}\": {e}", path.display()),
    )
}

impl Clog {
    /// Opens (creating if needed) the clog under `dir`.
    pub fn open(dir: &Path) -> PgResult<Clog> {
        let dir = dir.join("pg_xact");
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create directory for", &dir, e))?;
        Ok(Clog {
            dir,
            pages: RwLock::new(HashMap::new()),
            io: Mutex::new(()),
        })
    }

    fn locate(xid: TransactionId) -> (u64, usize, u32) {
        let page = xid.0 / CLOG_XACTS_PER_PAGE;
        let in_page = xid.0 % CLOG_XACTS_PER_PAGE;
        (page, (in_page / 32) as usize, ((in_page % 32) * 2) as u32)
    }

    fn segment_path(&self, page: u64) -> PathBuf {
        self.dir
            .join(format!("{:04X}", page / CLOG_PAGES_PER_SEGMENT))
    }

    /// Reads one page from its segment file; missing bytes read as zeros.
    fn read_page(&self, page: u64) -> PgResult<ClogPage> {
        let path = self.segment_path(page);
        let mut buf = vec![0u8; BLCKSZ];
        match File::open(&path) {
            Ok(mut f) => {
                let off = (page % CLOG_PAGES_PER_SEGMENT) * BLCKSZ as u64;
                f.seek(SeekFrom::Start(off))
                    .map_err(|e| io_error("seek in", &path, e))?;
                let mut filled = 0;
                while filled < BLCKSZ {
                    match f.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(io_error("read", &path, e)),
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error("open", &path, e)),
        }
        Ok(ClogPage::from_bytes(&buf))
    }

    /// Runs `f` on the cached page, loading it first if needed.
    fn with_page<R>(&self, page: u64, f: impl Fn(&ClogPage) -> R) -> PgResult<R> {
        {
            let pages = self.pages.read();
            if let Some(p) = pages.get(&page) {
                return Ok(f(p));
            }
        }
        // Read outside the map lock; a racing loader may win, then we drop ours.
        let loaded = self.read_page(page)?;
        let mut pages = self.pages.write();
        if !pages.contains_key(&page) {
            if pages.len() >= MAX_CACHED_PAGES {
                let victim = pages
                    .iter()
                    .filter(|(_, p)| !p.dirty.load(Ordering::Acquire) && Arc::strong_count(p) == 1)
                    .map(|(n, _)| *n)
                    .min();
                if let Some(v) = victim {
                    pages.remove(&v);
                }
            }
            pages.insert(page, Arc::new(loaded));
        }
        match pages.get(&page) {
            Some(p) => Ok(f(p)),
            None => Err(PgError::internal("clog page vanished while loading")),
        }
    }

    /// The status of `xid`. FROZEN and BOOTSTRAP are always committed.
    pub fn get_status(&self, xid: TransactionId) -> XidStatus {
        if xid == TransactionId::FROZEN || xid == TransactionId::BOOTSTRAP {
            return XidStatus::Committed;
        }
        if !xid.is_normal() {
            return XidStatus::Aborted;
        }
        let (page, word, shift) = Self::locate(xid);
        match self.with_page(page, |p| {
            XidStatus::from_bits(p.words[word].load(Ordering::Acquire) >> shift)
        }) {
            Ok(s) => s,
            Err(e) => {
                // No way to report from here: log once, and answer "in
                // progress", which makes the row invisible rather than wrong.
                tracing::error!(
                    "could not access status of transaction {xid}: {}",
                    e.message
                );
                XidStatus::InProgress
            }
        }
    }

    fn set_one(&self, xid: TransactionId, status: XidStatus) -> PgResult<()> {
        if !xid.is_normal() {
            return Ok(());
        }
        let (page, word, shift) = Self::locate(xid);
        self.with_page(page, |p| {
            let bits = status.bits() << shift;
            let mask = 3u64 << shift;
            let _ = p.words[word].fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                Some((w & !mask) | bits)
            });
            p.dirty.store(true, Ordering::Release);
        })
    }

    /// Records the final status of a transaction tree (top xid + subxids).
    ///
    /// The top-level xid is set first: a reader that sees a subxid committed
    /// therefore also sees its parent committed.
    pub fn set_status(&self, xid: TransactionId, subxids: &[TransactionId], status: XidStatus) {
        for x in std::iter::once(xid).chain(subxids.iter().copied()) {
            if let Err(e) = self.set_one(x, status) {
                tracing::error!("could not record status of transaction {x}: {}", e.message);
            }
        }
    }

    /// The newest xid whose status is recorded (committed, aborted or
    /// sub-committed), on disk or in the cache; INVALID when none is.
    ///
    /// After a clean shutdown (clog flushed) this + 1 is a safe `next_xid`:
    /// every assigned xid ends committed or aborted, so no xid above it is in
    /// any row.
    pub fn latest_recorded_xid(&self) -> PgResult<TransactionId> {
        let mut best = TransactionId::INVALID;
        let last_in = |page: u64, p: &ClogPage| -> Option<TransactionId> {
            for w in (0..WORDS_PER_PAGE).rev() {
                let word = p.words[w].load(Ordering::Acquire);
                if word != 0 {
                    let slot = (63 - word.leading_zeros()) / 2;
                    return Some(TransactionId(
                        page * CLOG_XACTS_PER_PAGE + w as u64 * 32 + slot as u64,
                    ));
                }
            }
            None
        };
        for (&n, p) in self.pages.read().iter() {
            if let Some(x) = last_in(n, p) {
                best = best.max(x);
            }
        }
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| io_error("read directory", &self.dir, e))?;
        let mut segs: Vec<u64> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| u64::from_str_radix(e.file_name().to_str()?, 16).ok())
            .collect();
        segs.sort_unstable();
        // The newest non-empty segment decides (older ones hold older xids).
        for seg in segs.into_iter().rev() {
            let mut found = None;
            for page in (seg * CLOG_PAGES_PER_SEGMENT..(seg + 1) * CLOG_PAGES_PER_SEGMENT).rev() {
                let p = self.read_page(page)?;
                if let Some(x) = last_in(page, &p) {
                    found = Some(x);
                    break;
                }
            }
            if let Some(x) = found {
                best = best.max(x);
                break;
            }
        }
        Ok(best)
    }

    /// Writes dirty pages to disk (checkpoint, clean shutdown) and fsyncs the
    /// segment files written.
    pub fn flush(&self) -> PgResult<()> {
        let _io = self.io.lock();
        let mut dirty: Vec<(u64, Arc<ClogPage>)> = self
            .pages
            .read()
            .iter()
            .filter(|(_, p)| p.dirty.load(Ordering::Acquire))
            .map(|(n, p)| (*n, Arc::clone(p)))
            .collect();
        dirty.sort_by_key(|(n, _)| *n);
        let mut buf = vec![0u8; BLCKSZ];
        let mut open: Option<(u64, File, PathBuf)> = None;
        for (page, p) in &dirty {
            let seg = page / CLOG_PAGES_PER_SEGMENT;
            if open.as_ref().map(|(s, _, _)| *s) != Some(seg) {
                if let Some((_, f, path)) = open.take() {
                    if let Err(e) = f.sync_all() {
                        // PANIC, never retried (see `fileutil::data_sync_failed`).
                        pgtypes::fileutil::data_sync_failed(&path, &e);
                    }
                }
                let path = self.segment_path(*page);
                let f = OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| io_error("open", &path, e))?;
                open = Some((seg, f, path));
            }
            if let Some((_, f, path)) = open.as_mut() {
                p.dirty.store(false, Ordering::Release);
                p.to_bytes(&mut buf);
                let off = (page % CLOG_PAGES_PER_SEGMENT) * BLCKSZ as u64;
                let res = f.seek(SeekFrom::Start(off)).and_then(|_| f.write_all(&buf));
                if let Err(e) = res {
                    p.dirty.store(true, Ordering::Release);
                    return Err(io_error("write", path, e));
                }
            }
        }
        if let Some((_, f, path)) = open.take() {
            if let Err(e) = f.sync_all() {
                // PANIC, never retried (see `fileutil::data_sync_failed`).
                pgtypes::fileutil::data_sync_failed(&path, &e);
            }
        }
        if !dirty.is_empty() {
            if let Ok(d) = File::open(&self.dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_xids() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.get_status(TransactionId::FROZEN), XidStatus::Committed);
        assert_eq!(
            clog.get_status(TransactionId::BOOTSTRAP),
            XidStatus::Committed
        );
        assert_eq!(clog.get_status(TransactionId::INVALID), XidStatus::Aborted);
        assert_eq!(clog.latest_recorded_xid().unwrap(), TransactionId::INVALID);
        clog.set_status(TransactionId(40), &[], XidStatus::Aborted);
        assert_eq!(
            clog.latest_recorded_xid().unwrap(),
            TransactionId(40),
            "from the cache"
        );
        assert_eq!(clog.get_status(TransactionId(3)), XidStatus::InProgress);
    }

    #[test]
    fn set_and_get_across_pages_and_persist() {
        let dir = tempfile::tempdir().unwrap();
        let xids: Vec<u64> = vec![
            3, 4, 5, 31, 32, 33, 32767, 32768, 32769, 1_048_575, 1_048_576, 5_000_000,
        ];
        {
            let clog = Clog::open(dir.path()).unwrap();
            for (i, &x) in xids.iter().enumerate() {
                let st = match i % 3 {
                    0 => XidStatus::Committed,
                    1 => XidStatus::Aborted,
                    _ => XidStatus::SubCommitted,
                };
                clog.set_status(TransactionId(x), &[], st);
            }
            // A sub-committed xid later commits: bits are replaced, not or-ed.
            clog.set_status(TransactionId(5), &[TransactionId(31)], XidStatus::Committed);
            clog.flush().unwrap();
        }
        let clog = Clog::open(dir.path()).unwrap();
        for (i, &x) in xids.iter().enumerate() {
            let want = match (x, i % 3) {
                (5, _) | (31, _) => XidStatus::Committed,
                (_, 0) => XidStatus::Committed,
                (_, 1) => XidStatus::Aborted,
                _ => XidStatus::SubCommitted,
            };
            assert_eq!(clog.get_status(TransactionId(x)), want, "xid {x}");
        }
        assert_eq!(clog.get_status(TransactionId(6)), XidStatus::InProgress);
        assert_eq!(
            clog.latest_recorded_xid().unwrap(),
            TransactionId(5_000_000)
        );
        assert!(dir.path().join("pg_xact/0000").exists());
        // 5_000_000 / 32768 / 32 = segment 4
        assert!(dir.path().join("pg_xact/0004").exists());
    }

    #[test]
    fn eviction_keeps_data() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        let n = (MAX_CACHED_PAGES as u64 + 20) * CLOG_XACTS_PER_PAGE;
        let mut x = 3;
        while x < n {
            clog.set_status(TransactionId(x), &[], XidStatus::Committed);
            x += CLOG_XACTS_PER_PAGE;
        }
        clog.flush().unwrap();
        let mut x = 3;
        while x < n {
            assert_eq!(clog.get_status(TransactionId(x)), XidStatus::Committed);
            assert_eq!(clog.get_status(TransactionId(x + 1)), XidStatus::InProgress);
            x += CLOG_XACTS_PER_PAGE;
        }
    }
}
