//! # Storage: relation files, the buffer pool, heap pages, heap access
//!
//! Bottom-up, one module per PostgreSQL concept:
//!
//! ```text
//!   heapam_xlog  redo of heap, full-page-image and relation-file records
//!     |
//!   heapam   insert / update / delete / fetch / scan; the only writer of heap pages
//!     |      heapam::pruneheap: pruning and VACUUM's heap pass
//!     |  \
//!     |   hio      RelationGetBufferForTuple: target block, FSM, extension
//!     |    |  \
//!     |    |   fsm  free space per page (in memory, see fsm.rs)
//!     |    |
//!   bufmgr   shared_buffers: descriptors, mapping table, clock sweep, pins, IO
//!     |
//!   smgr     DIR/base/<relfileid>[_fsm]: 8 KiB blocks, read/write/extend/truncate
//!
//!   hugemem  large arrays reached at random (the pool's pages, point
//!            maps) on transparent huge pages
//!   bufpage  slotted page layout (header, line pointers, tuples growing down)
//!   htup     tuple header (xmin, xmax, cmin, cmax, ctid, infomask + hint bits)
//!   index    in-memory ordered indexes: encoded key bytes -> tids
//!   heapam_visibility  HeapTupleSatisfies{MVCC,Update,Dirty,Vacuum}
//!   rowcodec / keycodec  row values <-> tuple data, index keys
//!   toast    rows over 2032 bytes: fields compressed (lz4) or moved out of
//!            line into the table's TOAST relation (file id | 0x8000_0000),
//!            chunks written and deleted as ordinary heap tuples by the
//!            row's own transaction, so WAL and MVCC need nothing new
//!   xloginsert  the node's WAL handle (page-change logging, hot records)
//! ```
//!
//! ## Lock order
//!
//! 1. the relation extension lock (hio; per relation, held only to extend),
//! 2. a buffer mapping partition lock (bufmgr; never held while waiting for
//!    IO or taking a content lock),
//! 3. a buffer content lock (one at a time: heapam never holds two page
//!    content locks at once, so there is no page-order rule to keep),
//! 4. the buffer header lock bit in the descriptor's state word (a spin
//!    lock held for a few instructions; nothing is taken under it).
//!
//! The FSM and index locks are leaves: nothing is acquired while they are
//! held, and they are never held across a call into another module.
//!
//! ## Errors
//!
//! Everything below heapam returns [`StorageError`]; it converts into
//! [`PgError`] with PostgreSQL's SQLSTATEs and wording (58030 / 58P01 for
//! file access, XX001 for a corrupted page, 54000 for an oversized row —
//! which, with TOAST, takes a row of many wide indexed columns).

use std::path::PathBuf;

use pgtypes::error::{sqlstate, PgError};
use pgtypes::{BlockNumber, RelFileId};

pub mod bufmgr;
pub mod bufpage;
pub mod fsm;
pub mod heapam;
pub mod heapam_visibility;
pub mod heapam_xlog;
pub mod hio;
pub mod htup;
pub mod hugemem;
pub mod index;
pub mod keycodec;
pub mod pgstat_io;
pub mod rowcodec;
pub mod smgr;
pub mod toast;
pub mod xloginsert;

/// SQLSTATE 54000 (program_limit_exceeded), not in the shared table.
const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
/// SQLSTATE 58P01 (undefined_file), not in the shared table.
const UNDEFINED_FILE: &str = "58P01";
/// SQLSTATE 53400 (configuration_limit_exceeded), not in the shared table.
use pgtypes::error::sqlstate::CONFIGURATION_LIMIT_EXCEEDED;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A file operation failed.
    #[error("could not {op} file \"{}\": {source}", path.display())]
    Io {
        /// What was attempted ("read block 3 in", "open", "extend", ...).
        op: String,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A block could not be read in full (the file is shorter than expected).
    #[error("could not read block {block} in file \"{}\": read only {got} of {want} bytes", path.display())]
    ShortRead {
        /// The block.
        block: BlockNumber,
        /// The file.
        path: PathBuf,
        /// Bytes read.
        got: usize,
        /// Bytes wanted.
        want: usize,
    },
    /// A page failed validation (PageIsVerified) or a line pointer points
    /// outside the page.
    #[error("invalid page in block {block} of relation base/{rel}: {detail}")]
    CorruptedPage {
        /// The relation.
        rel: RelFileId,
        /// The block.
        block: BlockNumber,
        /// What was wrong.
        detail: String,
    },
    /// A page read from disk whose checksum does not match its contents
    /// (`data_checksums`); the WARNING before it gives both values.
    #[error("invalid page in block {block} of relation base/{rel}")]
    ChecksumFailure {
        /// The relation.
        rel: RelFileId,
        /// The block.
        block: BlockNumber,
    },
    /// A tuple address names no tuple (bad offset, unused or dead slot).
    #[error("invalid tuple address ({block},{offset}) in relation base/{rel}")]
    BadTid {
        /// The relation.
        rel: RelFileId,
        /// The block.
        block: BlockNumber,
        /// The line pointer.
        offset: u16,
    },
    /// The row does not fit on one page even after TOAST (indexed columns
    /// stay in line).
    #[error("row is too big: size {size}, maximum size {max}")]
    TupleTooBig {
        /// Tuple size with header.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// Every buffer is pinned: the pool is too small for the concurrency.
    #[error("no unpinned buffers available")]
    NoUnpinnedBuffers,
    /// The relation has reached the largest block number.
    #[error("cannot extend relation base/{rel} beyond {max} blocks")]
    RelationTooBig {
        /// The relation.
        rel: RelFileId,
        /// The limit.
        max: u32,
    },
    /// The WAL flush hook refused (a dirty page may not be written before
    /// its WAL is durable).
    #[error("could not flush WAL up to {lsn}: {message}")]
    WalFlush {
        /// The page LSN that had to be flushed.
        lsn: wal::Lsn,
        /// Why it failed.
        message: String,
    },
}

impl StorageError {
    /// The SQLSTATE PostgreSQL would report.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            StorageError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                UNDEFINED_FILE
            }
            StorageError::Io { source, .. } if is_disk_full(source) => sqlstate::DISK_FULL,
            StorageError::Io { .. } | StorageError::ShortRead { .. } => sqlstate::IO_ERROR,
            StorageError::CorruptedPage { .. }
            | StorageError::ChecksumFailure { .. }
            | StorageError::BadTid { .. } => sqlstate::DATA_CORRUPTED,
            StorageError::TupleTooBig { .. } | StorageError::RelationTooBig { .. } => {
                PROGRAM_LIMIT_EXCEEDED
            }
            StorageError::NoUnpinnedBuffers => CONFIGURATION_LIMIT_EXCEEDED,
            StorageError::WalFlush { .. } => sqlstate::IO_ERROR,
        }
    }
}

/// True for a write that failed because the disk (or the quota) is full.
pub fn is_disk_full(e: &std::io::Error) -> bool {
    // ENOSPC = 28 and EDQUOT = 122 on Linux; std has no stable kind for both.
    matches!(e.raw_os_error(), Some(28) | Some(122))
}

impl From<StorageError> for PgError {
    fn from(e: StorageError) -> PgError {
        let code = e.sqlstate();
        let err = PgError::new(code, e.to_string());
        if code == sqlstate::DISK_FULL {
            err.with_hint("Check free disk space.")
        } else {
            err
        }
    }
}

/// Result of the storage layer.
pub type StorageResult<T> = Result<T, StorageError>;
