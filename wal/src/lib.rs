//! # wal — the write-ahead log
//!
//! Every change hotpair makes is described by a WAL record and the record is
//! made durable before the change is acknowledged (commit) or reaches disk
//! (a dirty page is written only after WAL is flushed up to its page LSN).
//! Crash recovery replays the records; a standby receives the same bytes and
//! replays them too. This crate is the log itself: the position type, the
//! records and their encoding, the segment files, the writer with group
//! commit, the reader, and the replication stream framing. It knows nothing
//! of pages or transactions beyond the numbers in the records (`common`
//! depends on `wal`, never the other way round).
//!
//! ## LSNs and segments
//!
//! An [`Lsn`] is a byte position in one endless stream, printed `X/X` as in
//! PostgreSQL. Unlike PostgreSQL there are no page headers: byte `n` is at
//! offset `n % wal_segment_size` of segment file `n / wal_segment_size`, and
//! records cross segment boundaries freely. WAL starts at segment 1 so that
//! `0/0` stays [`Lsn::INVALID`].
//!
//! ```text
//!  pg_wal/000000010000000000000001        pg_wal/000000010000000000000002
//!  ┌──────┬──────────┬───┬─────────────┐  ┌──────┬──────┬───┬──────────────┐
//!  │ rec  │ rec      │pad│ rec (first  │  │ …rest│ rec  │pad│ 0 0 0 0 0 0 0│
//!  │      │          │   │  part)      │  │      │      │   │ (zero-filled)│
//!  └──────┴──────────┴───┴─────────────┘  └──────┴──────┴───┴──────────────┘
//!  0/1000000                              0/2000000       insert_lsn ↑
//! ```
//!
//! ## Records
//!
//! ```text
//!  ┌─────────┬─────┬──────┬──────┬──────┬──────┬─────┬───────────┬───────┐
//!  │ tot_len │ xid │ prev │ rmid │ info │ 0  0 │ crc │ payload … │ pad   │
//!  │   u32   │ u64 │ u64  │  u8  │  u8  │ u16  │ u32 │           │ to 8  │
//!  └─────────┴─────┴──────┴──────┴──────┴──────┴─────┴───────────┴───────┘
//!   crc = CRC-32 of payload ‖ header bytes 0..24 (crc32fast)
//! ```
//!
//! Records start at 8-byte aligned LSNs; `prev` links each record to the one
//! before it, so stale bytes cannot be mistaken for the continuation of the
//! log. A record's *end LSN* is where the next one starts. Typed records
//! (heap, full-page image, xact, standby, checkpoint, smgr, catalog) live in
//! [`records`]; the envelope in [`record`].
//!
//! ## Writing: insert, flush, group commit
//!
//! [`WalWriter::insert`] encodes the payload and hashes it outside any lock,
//! then takes the insert mutex just long enough to take the next position,
//! finish the CRC with the prev-link and append the bytes to a pending
//! buffer. A flusher thread swaps the buffer out, writes it with `pwrite`,
//! `fdatasync`s each segment it touched and publishes `flushed_lsn`.
//! [`WalWriter::flush`]`(end)` waits until `flushed_lsn ≥ end`. Because the
//! flusher always takes *all* pending bytes, the commits that pile up while
//! one fsync runs are all covered by the next one: group commit, with
//! fsyncs per commit falling as concurrency rises. Lock order and
//! invariants are in [`writer`].
//!
//! ## Reading
//!
//! [`WalReader`] returns records one by one from the segment files and stops
//! at the first position without a valid record — zeroed, torn, CRC failure,
//! bad prev-link, missing segment — reporting [`EndOfWal`] `{ lsn, reason }`;
//! that LSN is where redo ends and the writer continues. [`StreamDecoder`]
//! does the same for bytes arriving in arbitrary chunks (a standby's
//! walreceiver). Neither panics on any input.
//!
//! ## Timelines
//!
//! Promotion forks the log: the new primary writes timeline N+1 from the
//! switch point on, names its segments with N+1 and records the fork in a
//! history file ([`timeline`]). A segment number may then exist under
//! several timelines; the node's history is the highest one present
//! ([`segment::find_segment`]), which is what readers open.
//!
//! ## Replication framing
//!
//! [`replication`] encodes and decodes the CopyData payloads of PostgreSQL's
//! physical replication protocol (`w`, `k`, `r`, `h`) byte for byte.

pub mod reader;
pub mod record;
pub mod records;
pub mod replication;
pub mod segment;
pub mod timeline;
pub mod writer;

// The LSN types live with the other ids (pgtypes); the log re-exports
// them because its whole API speaks in them.
pub use pgtypes::lsn::{AtomicLsn, Lsn, LsnParseError};
pub use reader::{read_raw, read_raw_newest, StreamDecoder, StreamGap, WalPosition, WalReader};
pub use record::{DecodedRecord, EndOfWal, EndReason, RecordHeader};
pub use records::{
    BlockRef, DecodeError, HeapRecord, RmgrId, SmgrRecord, StandbyRecord, WalRecord, XactRecord,
    XlogRecord, BLCKSZ,
};
pub use replication::{
    HotStandbyFeedback, PrimaryKeepalive, ReplicationMessage, StandbyReply, XLogData,
};
pub use segment::DEFAULT_SEGMENT_SIZE;
pub use writer::{WalStats, WalWriter, WalWriterOptions};

/// Errors of the WAL layer.
#[derive(Debug, thiserror::Error)]
pub enum WalError {
    /// A file operation failed.
    #[error("WAL I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A record larger than [`record::MAX_RECORD_LEN`].
    #[error("WAL record of {len} bytes is too large")]
    RecordTooLarge {
        /// Its length.
        len: usize,
    },
    /// Raw WAL that does not continue the written stream.
    #[error("received WAL at {got} but the log ends at {expected}")]
    Gap {
        /// Where the log ends.
        expected: Lsn,
        /// Where the chunk starts.
        got: Lsn,
    },
    /// The writer was shut down.
    #[error("WAL writer is shut down")]
    ShutDown,
    /// An earlier write or fsync failed; WAL can no longer be made durable.
    #[error("WAL writer failed: {0}")]
    Failed(String),
}

#[cfg(test)]
mod tests;
