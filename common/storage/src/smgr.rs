//! Storage manager (PostgreSQL's smgr/md.c): a relation fork is one file of
//! 8 KiB blocks, `DIR/base/<relfileid>` for the main fork and
//! `DIR/base/<relfileid>_fsm` for the free space map fork.
//!
//! There are no 1 GiB segments: a fork is a single file (64-bit offsets make
//! that fine on every filesystem we run on).
//!
//! ## State
//!
//! Open files are cached in a map `(rel, fork) -> Arc<SmgrFile>`; each keeps
//! its size in blocks in an atomic (`nblocks`), so asking for the size — done
//! on every heap extension and scan start — costs no system call. The cached
//! size is authoritative while the process runs: only `Smgr::zero_extend`
//! (called by the buffer manager's `extend_by`, under the relation extension
//! lock — in recovery too) and [`Smgr::truncate`] (the SQL layer's exclusive
//! lock for TRUNCATE / DROP, or redo) change the file length; [`Smgr::write`]
//! refuses a block past the end. (`Smgr::extend`, appending one page with
//! content, exists only in test builds, for tests that build files by hand.)
//!
//! Reads and writes use positional I/O (`pread` / `pwrite` through
//! `FileExt`), so concurrent block I/O on one file needs no lock.
//!
//! ## Durability
//!
//! Writes are not fsynced one by one: every file written since the last
//! [`Smgr::sync_all`] is remembered in `pending_sync`, and a checkpoint calls
//! `sync_all` after writing out the dirty buffers (PostgreSQL's
//! "register_dirty_segment" / ProcessSyncRequests, in one process).
//!
//! Locks: `files` (map of open files, an RwLock: size lookups share it) and
//! `pending_sync` are leaves, held for a map operation only, never across
//! I/O.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::{StorageError, StorageResult};
use pgtypes::{BlockNumber, ForkNumber, RelFileId, BLCKSZ};

/// The largest block number a relation may reach (PostgreSQL's
/// MaxBlockNumber is 0xFFFFFFFE; `BlockNumber::INVALID` is reserved).
pub const MAX_BLOCKS: u32 = u32::MAX - 1;

/// Extensions of at least this many blocks use `posix_fallocate` instead of
/// writing zero pages.
pub const FALLOCATE_MIN_BLOCKS: u32 = 8;

/// An all-zero block, written when a file is extended without content.
static ZERO_PAGE: [u8; BLCKSZ] = [0u8; BLCKSZ];

/// One open fork file.
struct SmgrFile {
    file: File,
    path: PathBuf,
    /// Size in blocks (cached; see the module doc).
    nblocks: AtomicU32,
}

/// The most pages one [`Smgr::write_run`] system call carries (well under
/// the kernel's IOV_MAX of 1024).
pub const WRITE_RUN_MAX: usize = 128;

/// The storage manager of one data directory.
pub struct Smgr {
    base: PathBuf,
    files: RwLock<HashMap<(RelFileId, ForkNumber), Arc<SmgrFile>>>,
    pending_sync: Mutex<HashSet<(RelFileId, ForkNumber)>>,
}

impl Smgr {
    /// The storage manager for `data_dir`; creates `data_dir/base` if needed.
    pub fn open(data_dir: &Path) -> StorageResult<Smgr> {
        let base = data_dir.join("base");
        std::fs::create_dir_all(&base).map_err(|source| StorageError::Io {
            op: "create directory".into(),
            path: base.clone(),
            source,
        })?;
        Ok(Smgr {
            base,
            files: RwLock::new(HashMap::new()),
            pending_sync: Mutex::new(HashSet::new()),
        })
    }

    /// The path of a fork file.
    pub fn path(&self, rel: RelFileId, fork: ForkNumber) -> PathBuf {
        match fork {
            ForkNumber::Main => self.base.join(rel.0.to_string()),
            ForkNumber::Fsm => self.base.join(format!("{}_fsm", rel.0)),
        }
    }

    /// True if the fork file exists.
    pub fn exists(&self, rel: RelFileId, fork: ForkNumber) -> bool {
        self.files.read().contains_key(&(rel, fork)) || self.path(rel, fork).exists()
    }

    /// Creates an empty fork file (no error if it already exists, as for
    /// redo of a create record).
    pub fn create(&self, rel: RelFileId, fork: ForkNumber) -> StorageResult<()> {
        let path = self.path(rel, fork);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| StorageError::Io {
                op: "create".into(),
                path: path.clone(),
                source,
            })?;
        let f = Self::wrap(file, path)?;
        self.files.write().insert((rel, fork), Arc::new(f));
        self.pending_sync.lock().insert((rel, fork));
        Ok(())
    }

    fn wrap(file: File, path: PathBuf) -> StorageResult<SmgrFile> {
        let len = file
            .metadata()
            .map_err(|source| StorageError::Io {
                op: "stat".into(),
                path: path.clone(),
                source,
            })?
            .len();
        // A torn extension may leave a partial block at the end: it is not
        // part of the relation (the next extension overwrites it).
        let nblocks = (len / BLCKSZ as u64).min(MAX_BLOCKS as u64) as u32;
        Ok(SmgrFile {
            file,
            path,
            nblocks: AtomicU32::new(nblocks),
        })
    }

    /// The open file of a fork, opening it on first use.
    fn file(&self, rel: RelFileId, fork: ForkNumber) -> StorageResult<Arc<SmgrFile>> {
        if let Some(f) = self.files.read().get(&(rel, fork)) {
            return Ok(f.clone());
        }
        let path = self.path(rel, fork);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|source| StorageError::Io {
                op: "open".into(),
                path: path.clone(),
                source,
            })?;
        let f = Arc::new(Self::wrap(file, path)?);
        // Another thread may have opened it meanwhile: keep the first one so
        // there is exactly one cached size per fork.
        Ok(self.files.write().entry((rel, fork)).or_insert(f).clone())
    }

    /// Number of blocks in the fork (0 if the file does not exist).
    pub fn nblocks(&self, rel: RelFileId, fork: ForkNumber) -> StorageResult<u32> {
        // Hot path (every fetch checks its block): shared lock, no Arc clone.
        if let Some(f) = self.files.read().get(&(rel, fork)) {
            return Ok(f.nblocks.load(Ordering::Acquire));
        }
        match self.file(rel, fork) {
            Ok(f) => Ok(f.nblocks.load(Ordering::Acquire)),
            Err(StorageError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }

    /// Reads block `block` into `buf`.
    pub fn read(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &mut [u8; BLCKSZ],
    ) -> StorageResult<()> {
        let f = self.file(rel, fork)?;
        let off = block.0 as u64 * BLCKSZ as u64;
        let mut got = 0;
        while got < BLCKSZ {
            match f.file.read_at(&mut buf[got..], off + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(StorageError::Io {
                        op: format!("read block {} in", block.0),
                        path: f.path.clone(),
                        source,
                    })
                }
            }
        }
        if got < BLCKSZ {
            return Err(StorageError::ShortRead {
                block,
                path: f.path.clone(),
                got,
                want: BLCKSZ,
            });
        }
        Ok(())
    }

    /// Writes block `block`, which must exist (a block past the end is an
    /// error: files grow only through the buffer manager's extension).
    pub fn write(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &[u8; BLCKSZ],
    ) -> StorageResult<()> {
        let f = self.file(rel, fork)?;
        if block.0 >= f.nblocks.load(Ordering::Acquire) {
            // The file grows only through extension (the buffer manager,
            // under the extension lock): a write past the end is a bug.
            return Err(StorageError::Io {
                op: format!("write block {} (beyond end of file) in", block.0),
                path: f.path.clone(),
                source: std::io::Error::other("block beyond end of file"),
            });
        }
        Self::write_at(&f, block, buf, "write")?;
        self.pending_sync.lock().insert((rel, fork));
        Ok(())
    }

    /// Writes the consecutive blocks `first ..= first + pages.len() - 1`,
    /// which must exist, with as few system calls as the kernel allows
    /// (`pwritev`, up to [`WRITE_RUN_MAX`] pages per call): the buffer
    /// manager cleans a bulk extension's victims — a run of a COPY's pages
    /// leaving its ring — this way.
    pub fn write_run(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        first: BlockNumber,
        pages: &[&[u8; BLCKSZ]],
    ) -> StorageResult<()> {
        use std::os::unix::io::AsRawFd;
        let f = self.file(rel, fork)?;
        let end = first.0 as u64 + pages.len() as u64;
        if end > f.nblocks.load(Ordering::Acquire) as u64 {
            return Err(StorageError::Io {
                op: format!("write blocks {}..{end} (beyond end of file) in", first.0),
                path: f.path.clone(),
                source: std::io::Error::other("block beyond end of file"),
            });
        }
        let io_err = |source: std::io::Error, block: u64| StorageError::Io {
            op: format!("write block {block} in"),
            path: f.path.clone(),
            source,
        };
        let total = pages.len() * BLCKSZ;
        let mut done = 0usize;
        while done < total {
            let (page, within) = (done / BLCKSZ, done % BLCKSZ);
            let block = first.0 as u64 + page as u64;
            let off = block * BLCKSZ as u64 + within as u64;
            if within != 0 {
                // A short write ended inside a page: finish that page.
                f.file
                    .write_all_at(&pages[page][within..], off)
                    .map_err(|e| io_err(e, block))?;
                done += BLCKSZ - within;
                continue;
            }
            let iov: Vec<libc::iovec> = pages[page..]
                .iter()
                .take(WRITE_RUN_MAX)
                .map(|p| libc::iovec {
                    iov_base: p.as_ptr() as *mut libc::c_void,
                    iov_len: BLCKSZ,
                })
                .collect();
            let Ok(off) = libc::off_t::try_from(off) else {
                return Err(io_err(std::io::Error::other("offset out of range"), block));
            };
            // SAFETY: every iovec points at a whole page we borrow for the
            // duration of the call (the kernel only reads them); the
            // descriptor belongs to `f.file`, which outlives the call.
            let rc = unsafe {
                libc::pwritev(
                    f.file.as_raw_fd(),
                    iov.as_ptr(),
                    iov.len() as libc::c_int,
                    off,
                )
            };
            match rc {
                n if n > 0 => done += n as usize,
                0 => {
                    return Err(io_err(
                        std::io::Error::from(std::io::ErrorKind::WriteZero),
                        block,
                    ))
                }
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(io_err(e, block));
                    }
                }
            }
        }
        self.pending_sync.lock().insert((rel, fork));
        Ok(())
    }

    fn write_at(
        f: &SmgrFile,
        block: BlockNumber,
        buf: &[u8; BLCKSZ],
        what: &str,
    ) -> StorageResult<()> {
        let off = block.0 as u64 * BLCKSZ as u64;
        f.file
            .write_all_at(buf, off)
            .map_err(|source| StorageError::Io {
                op: format!("{what} block {} in", block.0),
                path: f.path.clone(),
                source,
            })
    }

    /// Appends `buf` as block `block`, which must be the current size: for
    /// tests that build a file by hand (a server grows files only through
    /// the buffer manager's extension, which uses `Smgr::zero_extend`).
    #[cfg(test)]
    pub(crate) fn extend(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &[u8; BLCKSZ],
    ) -> StorageResult<()> {
        let f = self.file(rel, fork)?;
        if block.0 >= MAX_BLOCKS {
            return Err(StorageError::RelationTooBig {
                rel,
                max: MAX_BLOCKS,
            });
        }
        Self::write_at(&f, block, buf, "extend")?;
        f.nblocks.fetch_max(block.0 + 1, Ordering::AcqRel);
        self.pending_sync.lock().insert((rel, fork));
        Ok(())
    }

    /// Extends the fork by `n` zero blocks starting at block `first`, which
    /// must be its current size (the caller holds the relation extension
    /// lock: only [`super::bufmgr::BufMgr::extend_by`] calls this outside
    /// tests). Returns `first`.
    ///
    /// From [`FALLOCATE_MIN_BLOCKS`] blocks on the space is reserved with
    /// `posix_fallocate` (one system call, no data copied: the new range
    /// reads as zeros); fewer blocks are written as zero pages, which is
    /// cheaper than a fallocate for one page and keeps small relations free
    /// of unwritten extents (PostgreSQL's mdzeroextend does the same).
    pub(crate) fn zero_extend(
        &self,
        rel: RelFileId,
        fork: ForkNumber,
        first: BlockNumber,
        n: u32,
    ) -> StorageResult<BlockNumber> {
        let f = self.file(rel, fork)?;
        let cur = f.nblocks.load(Ordering::Acquire);
        if cur != first.0 {
            // Only possible if someone extended or truncated without the
            // extension lock: refuse rather than overwrite or leave a hole.
            return Err(StorageError::Io {
                op: format!("extend from block {} (file has {cur} blocks) in", first.0),
                path: f.path.clone(),
                source: std::io::Error::other("relation size changed under the extension lock"),
            });
        }
        if first.0 as u64 + n as u64 > MAX_BLOCKS as u64 {
            return Err(StorageError::RelationTooBig {
                rel,
                max: MAX_BLOCKS,
            });
        }
        if n >= FALLOCATE_MIN_BLOCKS {
            Self::fallocate(&f, first, n)?;
        } else {
            for i in 0..n {
                Self::write_at(&f, BlockNumber(first.0 + i), &ZERO_PAGE, "extend")?;
            }
        }
        f.nblocks.store(first.0 + n, Ordering::Release);
        self.pending_sync.lock().insert((rel, fork));
        Ok(first)
    }

    /// Reserves blocks `first .. first + n` with posix_fallocate (which
    /// glibc emulates by writing where the filesystem lacks fallocate).
    fn fallocate(f: &SmgrFile, first: BlockNumber, n: u32) -> StorageResult<()> {
        use std::os::unix::io::AsRawFd;
        let off = first.0 as u64 * BLCKSZ as u64;
        let len = n as u64 * BLCKSZ as u64;
        let (Ok(off), Ok(len)) = (libc::off_t::try_from(off), libc::off_t::try_from(len)) else {
            return Err(StorageError::Io {
                op: format!("extend by {n} blocks from block {} in", first.0),
                path: f.path.clone(),
                source: std::io::Error::other("offset out of range"),
            });
        };
        loop {
            // SAFETY: the descriptor belongs to `f.file`, which outlives the
            // call; posix_fallocate touches no memory of ours.
            let rc = unsafe { libc::posix_fallocate(f.file.as_raw_fd(), off, len) };
            match rc {
                0 => return Ok(()),
                libc::EINTR => continue,
                e => {
                    return Err(StorageError::Io {
                        op: format!("extend (fallocate) by {n} blocks from block {} in", first.0),
                        path: f.path.clone(),
                        source: std::io::Error::from_raw_os_error(e),
                    })
                }
            }
        }
    }

    /// Cuts the fork to `nblocks` blocks.
    pub fn truncate(&self, rel: RelFileId, fork: ForkNumber, nblocks: u32) -> StorageResult<()> {
        let f = match self.file(rel, fork) {
            Ok(f) => f,
            Err(StorageError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(())
            }
            Err(e) => return Err(e),
        };
        f.file
            .set_len(nblocks as u64 * BLCKSZ as u64)
            .map_err(|source| StorageError::Io {
                op: "truncate".into(),
                path: f.path.clone(),
                source,
            })?;
        f.nblocks.store(nblocks, Ordering::Release);
        self.pending_sync.lock().insert((rel, fork));
        Ok(())
    }

    /// Removes every fork file of `rel` (missing files are fine).
    pub fn unlink(&self, rel: RelFileId) -> StorageResult<()> {
        for fork in [ForkNumber::Main, ForkNumber::Fsm] {
            self.files.write().remove(&(rel, fork));
            self.pending_sync.lock().remove(&(rel, fork));
            let path = self.path(rel, fork);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(StorageError::Io {
                        op: "remove".into(),
                        path,
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// fsyncs every file written since the last call (checkpoint); returns
    /// how many files it fsynced.
    pub fn sync_all(&self) -> StorageResult<usize> {
        let mut synced = 0;
        let pending: Vec<_> = self.pending_sync.lock().drain().collect();
        for (rel, fork) in pending.iter() {
            let f = match self.file(*rel, *fork) {
                Ok(f) => f,
                // Dropped since it was written: nothing to sync.
                Err(StorageError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    continue
                }
                Err(e) => return Err(e),
            };
            if let Err(source) = f.file.sync_data() {
                // Never retried as if the data were safe: after a failed
                // fsync the kernel may have dropped the dirty pages and a
                // second fsync would succeed ("fsyncgate"). PANIC, and
                // crash recovery replays from the last checkpoint.
                pgtypes::fileutil::data_sync_failed(&f.path, &source);
            }
            synced += 1;
        }
        Ok(synced)
    }

    /// Every relation with a main fork file under `base/` (start-up index
    /// rebuild, tests).
    pub fn list_relations(&self) -> StorageResult<Vec<RelFileId>> {
        let rd = std::fs::read_dir(&self.base).map_err(|source| StorageError::Io {
            op: "read directory".into(),
            path: self.base.clone(),
            source,
        })?;
        let mut rels = Vec::new();
        for entry in rd.flatten() {
            if let Some(n) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            {
                rels.push(RelFileId(n));
            }
        }
        rels.sort();
        Ok(rels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_run_writes_consecutive_blocks_and_stays_inside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Smgr::open(dir.path()).unwrap();
        let rel = RelFileId(16384);
        smgr.create(rel, ForkNumber::Main).unwrap();
        smgr.zero_extend(rel, ForkNumber::Main, BlockNumber(0), 200)
            .unwrap();
        // More pages than one call carries, from block 3.
        let pages: Vec<[u8; BLCKSZ]> = (0..WRITE_RUN_MAX + 10)
            .map(|i| {
                let mut p = [0u8; BLCKSZ];
                p[0] = i as u8;
                p[BLCKSZ - 1] = (i >> 8) as u8 + 1;
                p
            })
            .collect();
        let refs: Vec<&[u8; BLCKSZ]> = pages.iter().collect();
        smgr.write_run(rel, ForkNumber::Main, BlockNumber(3), &refs)
            .unwrap();
        let mut buf = [0u8; BLCKSZ];
        for (i, p) in pages.iter().enumerate() {
            smgr.read(rel, ForkNumber::Main, BlockNumber(3 + i as u32), &mut buf)
                .unwrap();
            assert!(buf == *p, "block {}", 3 + i);
        }
        smgr.read(rel, ForkNumber::Main, BlockNumber(2), &mut buf)
            .unwrap();
        assert!(
            buf.iter().all(|&b| b == 0),
            "block before the run untouched"
        );
        // A run reaching past the end is refused; the file does not grow.
        assert!(smgr
            .write_run(rel, ForkNumber::Main, BlockNumber(199), &refs[..2])
            .is_err());
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 200);
    }

    #[test]
    fn create_extend_read_write_truncate_unlink() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Smgr::open(dir.path()).unwrap();
        let rel = RelFileId(16384);
        assert_eq!(
            smgr.nblocks(rel, ForkNumber::Main).unwrap(),
            0,
            "missing file has 0 blocks"
        );
        smgr.create(rel, ForkNumber::Main).unwrap();
        let mut page = [0u8; BLCKSZ];
        page[0] = 7;
        smgr.extend(rel, ForkNumber::Main, BlockNumber(0), &page)
            .unwrap();
        assert_eq!(
            smgr.zero_extend(rel, ForkNumber::Main, BlockNumber(1), 3)
                .unwrap(),
            BlockNumber(1)
        );
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 4);
        page[1] = 9;
        smgr.write(rel, ForkNumber::Main, BlockNumber(2), &page)
            .unwrap();
        let mut back = [1u8; BLCKSZ];
        smgr.read(rel, ForkNumber::Main, BlockNumber(2), &mut back)
            .unwrap();
        assert_eq!(back[..2], [7, 9]);
        smgr.read(rel, ForkNumber::Main, BlockNumber(1), &mut back)
            .unwrap();
        assert!(
            back.iter().all(|&b| b == 0),
            "zero-extended block reads as zeros"
        );
        let err = smgr
            .read(rel, ForkNumber::Main, BlockNumber(4), &mut back)
            .unwrap_err();
        assert_eq!(
            err.sqlstate(),
            pgtypes::error::sqlstate::IO_ERROR,
            "read past end: {err}"
        );
        smgr.sync_all().unwrap();
        smgr.truncate(rel, ForkNumber::Main, 1).unwrap();
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 1);
        // A fresh Smgr sees the size from the file.
        let smgr2 = Smgr::open(dir.path()).unwrap();
        assert_eq!(smgr2.nblocks(rel, ForkNumber::Main).unwrap(), 1);
        assert_eq!(smgr2.list_relations().unwrap(), vec![rel]);
        smgr.unlink(rel).unwrap();
        assert!(!smgr.exists(rel, ForkNumber::Main));
        let err = smgr
            .read(rel, ForkNumber::Main, BlockNumber(0), &mut back)
            .unwrap_err();
        assert_eq!(err.sqlstate(), "58P01", "read of dropped relation: {err}");
    }
}
