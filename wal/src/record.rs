//! The record envelope (PostgreSQL's `XLogRecord`): header, CRC, alignment,
//! and the one function that recognises a record in a run of bytes.
//!
//! ```text
//!  offset  size  field
//!   0       4    tot_len   header + payload, bytes (not counting padding)
//!   4       8    xid       transaction that wrote the record (0 = none)
//!  12       8    prev      LSN of the previous record (back-link)
//!  20       1    rmid      resource manager (RmgrId)
//!  21       1    info      record kind within the rmgr, plus flag bits
//!  22       2    reserved  always zero
//!  24       4    crc       CRC-32 (crc32fast) of payload ‖ header[0..24]
//!  28       …    payload   tot_len - 28 bytes, encoded by `records`
//!   …     0..7   padding   zeros up to the next multiple of 8
//! ```
//!
//! All integers are little-endian. The CRC is computed, as PostgreSQL does,
//! over the payload first and then over the header bytes that precede the
//! crc field; this lets a writer hash the (possibly large) payload *before*
//! it takes the insert lock and finish the CRC with 24 header bytes once the
//! prev-link is known inside it.
//!
//! Every record starts at an 8-byte aligned LSN; the next record starts at
//! `align8(start + tot_len)`. An `XLOG_SWITCH` record instead ends at the
//! next segment boundary: the rest of its segment is zeros and unused.
//!
//! `try_decode` is shared by the file reader and the streaming decoder; it
//! validates in the order PostgreSQL's `ValidXLogRecordHeader` does —
//! length, then header fields and prev-link (so garbage is rejected before
//! we wait for `tot_len` bytes that will never come), then CRC — and never
//! panics on any input.

use bytes::Bytes;

use crate::records::{DecodeError, RmgrId, WalRecord, XLOG_SWITCH};
use pgtypes::lsn::Lsn;
use pgtypes::TransactionId;

/// Size of the fixed record header.
pub const HEADER_LEN: usize = 28;
/// Offset of the crc field inside the header.
const CRC_OFFSET: usize = 24;
/// Largest accepted `tot_len`. A length beyond this is treated as garbage
/// (end of WAL); the biggest real records (multi-insert, full-page image)
/// are a few pages.
pub const MAX_RECORD_LEN: u32 = 64 << 20;

/// The fixed header of every record, as decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Header plus payload length in bytes (padding excluded).
    pub tot_len: u32,
    /// The writing transaction's xid, invalid if none.
    pub xid: TransactionId,
    /// Start LSN of the previous record.
    pub prev: Lsn,
    /// Resource manager id ([`RmgrId`] as u8).
    pub rmid: u8,
    /// Record kind and flag bits within the resource manager.
    pub info: u8,
    /// The stored CRC.
    pub crc: u32,
}

impl RecordHeader {
    /// Writes the 28 header bytes (with `self.crc`).
    pub fn write_to(&self, out: &mut [u8; HEADER_LEN]) {
        out[0..4].copy_from_slice(&self.tot_len.to_le_bytes());
        out[4..12].copy_from_slice(&self.xid.0.to_le_bytes());
        out[12..20].copy_from_slice(&self.prev.0.to_le_bytes());
        out[20] = self.rmid;
        out[21] = self.info;
        out[22] = 0;
        out[23] = 0;
        out[24..28].copy_from_slice(&self.crc.to_le_bytes());
    }

    /// Parses 28 header bytes; checks only the reserved bytes.
    fn parse(b: &[u8; HEADER_LEN]) -> Result<RecordHeader, &'static str> {
        if b[22] != 0 || b[23] != 0 {
            return Err("reserved header bytes are not zero");
        }
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        Ok(RecordHeader {
            tot_len: u32_at(0),
            xid: TransactionId(u64_at(4)),
            prev: Lsn(u64_at(12)),
            rmid: b[20],
            info: b[21],
            crc: u32_at(CRC_OFFSET),
        })
    }

    /// True for an `XLOG_SWITCH` record, which ends at a segment boundary.
    pub fn is_switch(&self) -> bool {
        self.rmid == RmgrId::Xlog as u8 && self.info == XLOG_SWITCH
    }
}

/// The LSN after a record that starts at `start` (where the next one starts).
pub fn record_end(start: Lsn, tot_len: u32, is_switch: bool, segment_size: u64) -> Lsn {
    let end = (start + u64::from(tot_len)).align();
    if is_switch && end.segment_offset(segment_size) != 0 {
        Lsn::from_segment(end.segment_number(segment_size) + 1, segment_size)
    } else {
        end
    }
}

/// Computes the CRC of a record: `payload ‖ header[0..24]`, given a hasher
/// that has already consumed the payload.
pub fn finish_crc(mut payload_hasher: crc32fast::Hasher, header: &[u8; HEADER_LEN]) -> u32 {
    payload_hasher.update(&header[..CRC_OFFSET]);
    payload_hasher.finalize()
}

/// Builds a complete record (header + payload, no padding) — for tests and
/// for callers who want bytes without a writer.
pub fn build_record(xid: u64, prev: Lsn, rmid: u8, info: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = RecordHeader {
        tot_len: (HEADER_LEN + payload.len()) as u32,
        xid: TransactionId(xid),
        prev,
        rmid,
        info,
        crc: 0,
    };
    let mut hb = [0u8; HEADER_LEN];
    h.write_to(&mut hb);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(payload);
    h.crc = finish_crc(hasher, &hb);
    h.write_to(&mut hb);
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&hb);
    out.extend_from_slice(payload);
    out
}

/// One record read back from WAL.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRecord {
    /// Where the record starts.
    pub start_lsn: Lsn,
    /// Where the next record starts (end of the record, aligned; the next
    /// segment boundary for a switch record).
    pub end_lsn: Lsn,
    /// The fixed header.
    pub header: RecordHeader,
    /// The typed record.
    pub record: WalRecord,
}

/// Why a reader stopped. Everything except [`EndReason::Zeroed`],
/// [`EndReason::MissingSegment`] and [`EndReason::ReadLimit`] means the
/// bytes at that LSN are not a valid record (torn write, corruption, stale
/// data): recovery treats all of them as the end of WAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// The length field is zero: nothing was ever written here (the clean
    /// end of a pre-allocated segment).
    Zeroed,
    /// The WAL (file or received stream) ends inside the record.
    Truncated {
        /// Bytes the record needed from its start.
        wanted: u64,
        /// Bytes that were there.
        got: u64,
    },
    /// The segment file holding the next byte does not exist.
    MissingSegment {
        /// Its segment number.
        segno: u64,
    },
    /// The length field is out of range.
    InvalidLength {
        /// The length found.
        len: u32,
    },
    /// A header field is impossible (reserved bytes, unknown resource manager).
    InvalidHeader {
        /// What was wrong.
        what: &'static str,
    },
    /// The prev-link does not point at the previous record.
    BadPrevLink {
        /// The previous record's start.
        expected: Lsn,
        /// The link found in this record.
        found: Lsn,
    },
    /// The CRC does not match.
    BadCrc {
        /// CRC stored in the record.
        stored: u32,
        /// CRC computed over the bytes.
        computed: u32,
    },
    /// The CRC matched but the payload does not decode (a bug or a version
    /// mismatch rather than a torn write).
    Undecodable(DecodeError),
    /// The reader was told not to read at or beyond this LSN (a standby's
    /// flushed position); retry after it advances.
    ReadLimit {
        /// The limit.
        limit: Lsn,
    },
    /// Reading a segment file failed.
    Io(String),
}

/// The end of readable WAL: where and why a reader stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(*.lsn, .reason))]
pub struct EndOfWal {
    /// Start LSN of the record that could not be read (= end of the valid WAL).
    pub lsn: Lsn,
    /// Why.
    pub reason: EndReason,
}

/// PostgreSQL's wording where it has one ("invalid record length at 0/…").
fn describe(lsn: Lsn, r: &EndReason) -> String {
    match r {
        EndReason::Zeroed => format!("invalid record length at {lsn}: wanted {HEADER_LEN}, got 0"),
        EndReason::Truncated { wanted, got } => {
            format!("unexpected end of WAL at {lsn}: record needs {wanted} bytes, found {got}")
        }
        EndReason::MissingSegment { segno } => {
            format!("WAL segment {segno} holding {lsn} does not exist")
        }
        EndReason::InvalidLength { len } => {
            format!("invalid record length at {lsn}: wanted {HEADER_LEN}, got {len}")
        }
        EndReason::InvalidHeader { what } => format!("invalid record header at {lsn}: {what}"),
        EndReason::BadPrevLink { expected, found } => {
            format!("record with incorrect prev-link {found} at {lsn} (expected {expected})")
        }
        EndReason::BadCrc { .. } => {
            format!("incorrect resource manager data checksum in record at {lsn}")
        }
        EndReason::Undecodable(e) => format!("invalid record payload at {lsn}: {e}"),
        EndReason::ReadLimit { limit } => {
            format!("WAL at {lsn} is beyond the readable limit {limit}")
        }
        EndReason::Io(e) => format!("could not read WAL at {lsn}: {e}"),
    }
}

/// The outcome of looking for a record at the front of a byte run.
pub(crate) enum Decoded {
    /// A complete record; it occupied `tot_len` bytes of the run.
    Record(DecodedRecord),
    /// The run holds only a prefix; at least this many bytes are needed.
    NeedMore(u64),
    /// Not a valid record.
    Bad(EndReason),
}

/// Looks for a record starting at `start` in `buf` (which begins at `start`
/// and may hold more than one record). `expected_prev` is the start of the
/// previous record, if known. The record's payload is copied once into a
/// `Bytes` that the typed record's tuples and pages slice without copying.
pub(crate) fn try_decode(
    buf: &[u8],
    start: Lsn,
    expected_prev: Option<Lsn>,
    segment_size: u64,
) -> Decoded {
    if buf.len() < 4 {
        // Even a prefix of zeros tells us nothing yet: a length of 0 needs
        // all four bytes to be known.
        return Decoded::NeedMore(4);
    }
    let tot_len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if tot_len == 0 {
        return Decoded::Bad(EndReason::Zeroed);
    }
    if (tot_len as usize) < HEADER_LEN || tot_len > MAX_RECORD_LEN {
        return Decoded::Bad(EndReason::InvalidLength { len: tot_len });
    }
    let Some(hb) = buf.get(..HEADER_LEN) else {
        return Decoded::NeedMore(HEADER_LEN as u64);
    };
    let mut harr = [0u8; HEADER_LEN];
    harr.copy_from_slice(hb);
    let header = match RecordHeader::parse(&harr) {
        Ok(h) => h,
        Err(what) => return Decoded::Bad(EndReason::InvalidHeader { what }),
    };
    if RmgrId::from_u8(header.rmid).is_none() {
        return Decoded::Bad(EndReason::InvalidHeader {
            what: "invalid resource manager ID",
        });
    }
    if let Some(expected) = expected_prev {
        if header.prev != expected {
            return Decoded::Bad(EndReason::BadPrevLink {
                expected,
                found: header.prev,
            });
        }
    }
    let Some(rec) = buf.get(..tot_len as usize) else {
        return Decoded::NeedMore(u64::from(tot_len));
    };
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&rec[HEADER_LEN..]);
    let computed = finish_crc(hasher, &harr);
    if computed != header.crc {
        return Decoded::Bad(EndReason::BadCrc {
            stored: header.crc,
            computed,
        });
    }
    let payload = Bytes::copy_from_slice(&rec[HEADER_LEN..]);
    match WalRecord::decode(header.rmid, header.info, &payload) {
        Ok(record) => Decoded::Record(DecodedRecord {
            start_lsn: start,
            end_lsn: record_end(start, tot_len, header.is_switch(), segment_size),
            header,
            record,
        }),
        Err(e) => Decoded::Bad(EndReason::Undecodable(e)),
    }
}
