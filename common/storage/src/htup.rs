//! Heap tuple header (PostgreSQL's htup_details.h), 32 bytes, then the row
//! data (opaque bytes: the SQL layer encodes rows).
//!
//! ```text
//!  0        8        16     20     24          28       30        32
//!  +--------+--------+------+------+-----------+--------+---------+------- - -
//!  | xmin   | xmax   | cmin | cmax | ctid.block|ctid.off|infomask | data ...
//!  +--------+--------+------+------+-----------+--------+---------+------- - -
//! ```
//!
//! * 64-bit xids: no epoch, no wraparound, no freezing. An xmin of
//!   [`TransactionId::FROZEN`] is committed for everyone.
//! * cmin and cmax both fit (no combo command ids): a tuple inserted and
//!   deleted by the same transaction keeps both.
//! * `ctid` points at the tuple itself, or — after an update — at the newer
//!   version. A deleted (not updated) tuple keeps `ctid` = itself.
//! * Hint bits (`XMIN_COMMITTED` …) cache a final clog answer. They are set
//!   only with the page's content lock held exclusively (heapam defers hints
//!   found under a share lock and applies them with a non-blocking exclusive
//!   try-lock; a hint not set is simply found again next time). They are
//!   facts about an xid, so setting one is always safe as long as the xid in
//!   the header is still the one that was checked.

use pgtypes::{BlockNumber, CommandId, ItemPointer, TransactionId};

/// Size of the tuple header.
pub const HEADER_SIZE: usize = 32;

/// xmin is known committed (hint).
pub const XMIN_COMMITTED: u16 = 0x0100;
/// xmin is known aborted (hint).
pub const XMIN_INVALID: u16 = 0x0200;
/// xmax is known committed (hint).
pub const XMAX_COMMITTED: u16 = 0x0400;
/// xmax is known aborted or unset (hint).
pub const XMAX_INVALID: u16 = 0x0800;
/// xmax only locks the row (SELECT … FOR UPDATE); it does not delete it.
pub const XMAX_LOCK_ONLY: u16 = 0x0080;
/// This version was created by an UPDATE (HEAP_UPDATED).
pub const UPDATED: u16 = 0x2000;
/// The next version lives on the same page (HEAP_HOT_UPDATED-ish; no HOT
/// chains are followed yet, indexes point at every version).
pub const HOT_UPDATED: u16 = 0x4000;
/// This version was put on the same page as its predecessor.
pub const ONLY_TUPLE: u16 = 0x8000;

/// Every hint bit.
pub const HINT_BITS: u16 = XMIN_COMMITTED | XMIN_INVALID | XMAX_COMMITTED | XMAX_INVALID;

/// A decoded tuple header (a copy: 32 bytes, no allocation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleHeader {
    /// Inserting transaction.
    pub xmin: TransactionId,
    /// Deleting / updating / locking transaction, or INVALID.
    pub xmax: TransactionId,
    /// Inserting command.
    pub cmin: CommandId,
    /// Deleting command, or INVALID.
    pub cmax: CommandId,
    /// This tuple, or its newer version.
    pub ctid: ItemPointer,
    /// Flags and hint bits.
    pub infomask: u16,
}

impl TupleHeader {
    /// A fresh header for an insert at `self_tid` (the ctid is filled in by
    /// [`TupleHeader::write`] callers once the offset is known).
    pub fn new_insert(xmin: TransactionId, cmin: CommandId) -> TupleHeader {
        TupleHeader {
            xmin,
            xmax: TransactionId::INVALID,
            cmin,
            cmax: CommandId::INVALID,
            ctid: ItemPointer::default(),
            infomask: XMAX_INVALID,
        }
    }

    /// Decodes the header at the start of `tuple`; `None` if too short
    /// (a corrupt line pointer length).
    pub fn read(tuple: &[u8]) -> Option<TupleHeader> {
        let h: &[u8; HEADER_SIZE] = tuple.get(..HEADER_SIZE)?.try_into().ok()?;
        let u64_at = |o: usize| {
            u64::from_le_bytes([
                h[o],
                h[o + 1],
                h[o + 2],
                h[o + 3],
                h[o + 4],
                h[o + 5],
                h[o + 6],
                h[o + 7],
            ])
        };
        let u32_at = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let u16_at = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]);
        Some(TupleHeader {
            xmin: TransactionId(u64_at(0)),
            xmax: TransactionId(u64_at(8)),
            cmin: CommandId(u32_at(16)),
            cmax: CommandId(u32_at(20)),
            ctid: ItemPointer {
                block: BlockNumber(u32_at(24)),
                offset: u16_at(28),
            },
            infomask: u16_at(30),
        })
    }

    /// Encodes into the first [`HEADER_SIZE`] bytes of `tuple` (which the
    /// caller sized: at least a header).
    pub fn write(&self, tuple: &mut [u8]) {
        let Some(h) = tuple.get_mut(..HEADER_SIZE) else {
            return;
        };
        h[0..8].copy_from_slice(&self.xmin.0.to_le_bytes());
        h[8..16].copy_from_slice(&self.xmax.0.to_le_bytes());
        h[16..20].copy_from_slice(&self.cmin.0.to_le_bytes());
        h[20..24].copy_from_slice(&self.cmax.0.to_le_bytes());
        h[24..28].copy_from_slice(&self.ctid.block.0.to_le_bytes());
        h[28..30].copy_from_slice(&self.ctid.offset.to_le_bytes());
        h[30..32].copy_from_slice(&self.infomask.to_le_bytes());
    }

    /// ORs hint bits into the infomask stored in `tuple` (exclusive content
    /// lock held).
    pub fn set_hint_bits_in(tuple: &mut [u8], bits: u16) {
        if let Some(m) = tuple.get_mut(30..32) {
            let v = u16::from_le_bytes([m[0], m[1]]) | (bits & HINT_BITS);
            m.copy_from_slice(&v.to_le_bytes());
        }
    }

    /// True when xmax does not delete the row: unset, known aborted, or a
    /// lock only.
    pub fn xmax_is_invalid(&self) -> bool {
        self.infomask & XMAX_INVALID != 0 || !self.xmax.is_valid()
    }

    /// True for a frozen xmin (always committed).
    pub fn xmin_frozen(&self) -> bool {
        self.xmin == TransactionId::FROZEN || self.xmin == TransactionId::BOOTSTRAP
    }
}

/// The row data after the header.
pub fn tuple_data(tuple: &[u8]) -> &[u8] {
    tuple.get(HEADER_SIZE..).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let h = TupleHeader {
            xmin: TransactionId(0x0102_0304_0506_0708),
            xmax: TransactionId(42),
            cmin: CommandId(3),
            cmax: CommandId(u32::MAX),
            ctid: ItemPointer {
                block: BlockNumber(77),
                offset: 12,
            },
            infomask: XMIN_COMMITTED | UPDATED,
        };
        let mut buf = [0u8; 40];
        h.write(&mut buf);
        assert_eq!(TupleHeader::read(&buf), Some(h));
        TupleHeader::set_hint_bits_in(&mut buf, XMAX_INVALID | UPDATED);
        let h2 = TupleHeader::read(&buf).unwrap();
        assert_eq!(
            h2.infomask,
            XMIN_COMMITTED | UPDATED | XMAX_INVALID,
            "only hint bits are ORed in"
        );
        assert_eq!(TupleHeader::read(&buf[..31]), None);
        assert_eq!(tuple_data(&buf).len(), 8);
    }
}
