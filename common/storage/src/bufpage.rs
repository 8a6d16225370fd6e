//! Slotted page layout (PostgreSQL's bufpage.h / bufpage.c), 8 KiB.
//!
//! ```text
//!  0        8    10    12      14      16        18          20    24         32
//!  +--------+-----+-----+-------+-------+---------+-----------+-----+----------+
//!  | pd_lsn |cksum|flags|pd_lower|pd_upper|pd_special|size|vers | pad |prune_xid |
//!  +--------+-----+-----+-------+-------+---------+-----------+-----+----------+
//!  | line pointer 1 | line pointer 2 | ... -> (pd_lower)                         |
//!  |                                                                            |
//!  |                          free space                                        |
//!  |                                                                            |
//!  |                   (pd_upper) <- ... | tuple 2 | tuple 1 |  special (none)  |
//!  +----------------------------------------------------------------------------+
//! ```
//!
//! * All integers are little-endian. `pd_lsn` is the LSN of the last WAL
//!   record that changed the page; `pd_prune_xid` is the oldest
//!   xmax set on the page since it was last pruned (PageSetPrunable; 0:
//!   nothing to prune) — the heap's "is pruning worth a look" test.
//! * Pruning ([`Page::prune_execute`]) turns line pointers of dead tuples
//!   into LP_UNUSED (or LP_DEAD) and defragments the page
//!   (PageRepairFragmentation); the tuples left keep their offsets.
//!   PD_HAS_FREE_LINES then tells [`Page::add_item_with`] to reuse the
//!   first unused line pointer before appending one; redo places a tuple
//!   at the offset its record names ([`Page::add_item_at`]).
//! * A line pointer ("item id") is 4 bytes, packed as in PostgreSQL:
//!   `lp_off:15 | lp_flags:2 | lp_len:15` (offset in bits 0-14, flags in
//!   15-16, length in 17-31). Offsets are 1-based ([`FIRST_OFFSET`]).
//! * Tuples start at MAXALIGN (8-byte) offsets and grow down from
//!   `pd_special` (= BLCKSZ for heap pages: no special space).
//!
//! Invariants of a valid initialised page, checked by [`Page::verify`] on
//! every read from disk (PageIsVerified) so a corrupt page is an error, never
//! a panic: `HEADER_SIZE <= pd_lower <= pd_upper <= pd_special <= BLCKSZ`,
//! `pd_special` MAXALIGNed, the size/version word matches, no unknown flag
//! bits. An all-zero page is valid and "new" (a block extended but never
//! initialised, e.g. after a crash during extension). Item accessors also
//! bound-check each line pointer against `[pd_upper, pd_special)`, so even a
//! page corrupted in memory cannot make them read outside the page.

use wal::Lsn;

use pgtypes::BLCKSZ;

/// Size of the page header.
pub const HEADER_SIZE: usize = 32;
/// Size of one line pointer.
pub const ITEM_ID_SIZE: usize = 4;
/// The first line pointer number.
pub const FIRST_OFFSET: u16 = 1;
/// Layout version stored in the low byte of the size/version word.
pub const PAGE_LAYOUT_VERSION: u16 = 0x48; // 'H' for hotpair
/// Alignment of tuples on the page.
pub const MAXALIGN: usize = 8;
/// PD_HAS_FREE_LINES: some line pointers are unused (after pruning).
pub const PD_HAS_FREE_LINES: u16 = 0x0001;
/// PD_PAGE_FULL: an update did not find room on this page.
pub const PD_PAGE_FULL: u16 = 0x0002;
/// PD_ALL_VISIBLE: every tuple is visible to everyone (future use).
pub const PD_ALL_VISIBLE: u16 = 0x0004;
const PD_VALID_FLAG_BITS: u16 = 0x0007;

const OFF_LSN: usize = 0;
const OFF_CHECKSUM: usize = 8;
const OFF_FLAGS: usize = 10;
const OFF_LOWER: usize = 12;
const OFF_UPPER: usize = 14;
const OFF_SPECIAL: usize = 16;
const OFF_VERSION: usize = 18;
const OFF_PRUNE_XID: usize = 24;

/// Rounds up to [`MAXALIGN`].
pub const fn maxalign(n: usize) -> usize {
    (n + MAXALIGN - 1) & !(MAXALIGN - 1)
}

/// State of a line pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpFlags {
    /// Unused (free to reuse); length 0.
    Unused = 0,
    /// Points at a tuple.
    Normal = 1,
    /// HOT redirect to another line pointer (offset = target, len 0).
    Redirect = 2,
    /// Dead, storage reclaimed or not.
    Dead = 3,
}

/// A decoded line pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemId {
    /// Byte offset of the tuple in the page.
    pub off: u16,
    /// State.
    pub flags: LpFlags,
    /// Tuple length in bytes.
    pub len: u16,
}

impl ItemId {
    fn decode(w: u32) -> ItemId {
        let flags = match (w >> 15) & 3 {
            0 => LpFlags::Unused,
            1 => LpFlags::Normal,
            2 => LpFlags::Redirect,
            _ => LpFlags::Dead,
        };
        ItemId {
            off: (w & 0x7fff) as u16,
            flags,
            len: ((w >> 17) & 0x7fff) as u16,
        }
    }
    fn encode(self) -> u32 {
        (self.off as u32 & 0x7fff)
            | ((self.flags as u32) << 15)
            | ((self.len as u32 & 0x7fff) << 17)
    }
}

/// Why an item could not be returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemError {
    /// The offset is past the last line pointer, or the slot is not Normal.
    NoSuchItem,
    /// The line pointer points outside the tuple area: a corrupt page.
    Corrupted,
}

/// Why a page failed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageCorruption {
    /// pd_lower / pd_upper / pd_special out of order or out of range.
    BadPointers {
        /// pd_lower
        lower: u16,
        /// pd_upper
        upper: u16,
        /// pd_special
        special: u16,
    },
    /// The size/version word is not ours.
    BadVersion(u16),
    /// Unknown flag bits.
    BadFlags(u16),
}

impl std::fmt::Display for PageCorruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageCorruption::BadPointers {
                lower,
                upper,
                special,
            } => {
                write!(f, "page header pointers out of range (lower {lower}, upper {upper}, special {special})")
            }
            PageCorruption::BadVersion(v) => {
                write!(f, "unexpected page size/version word 0x{v:04X}")
            }
            PageCorruption::BadFlags(v) => write!(f, "unknown page flags 0x{v:04X}"),
        }
    }
}

/// One 8 KiB page, 8-byte aligned so tuple headers are naturally aligned.
#[repr(C, align(8))]
#[derive(Clone)]
pub struct Page(pub [u8; BLCKSZ]);

impl Default for Page {
    fn default() -> Page {
        Page([0u8; BLCKSZ])
    }
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("lsn", &self.lsn())
            .field("lower", &self.lower())
            .field("upper", &self.upper())
            .field("nitems", &self.max_offset())
            .finish()
    }
}

impl Page {
    fn u16_at(&self, off: usize) -> u16 {
        u16::from_le_bytes([self.0[off], self.0[off + 1]])
    }
    fn set_u16_at(&mut self, off: usize, v: u16) {
        self.0[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn u64_at(&self, off: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.0[off..off + 8]);
        u64::from_le_bytes(b)
    }

    /// PageInit: an empty heap page (no special space).
    pub fn init(&mut self) {
        self.0.fill(0);
        self.set_u16_at(OFF_LOWER, HEADER_SIZE as u16);
        self.set_u16_at(OFF_UPPER, BLCKSZ as u16);
        self.set_u16_at(OFF_SPECIAL, BLCKSZ as u16);
        self.set_u16_at(OFF_VERSION, BLCKSZ as u16 | PAGE_LAYOUT_VERSION);
    }

    /// PageIsNew: never initialised (all-zero header).
    pub fn is_new(&self) -> bool {
        self.upper() == 0
    }

    /// PageIsVerified: checks the header of a page read from disk. An
    /// all-zero page passes (it is new).
    pub fn verify(&self) -> Result<(), PageCorruption> {
        if self.is_new() {
            // PostgreSQL accepts a new page only if it is entirely zero.
            if self.0.iter().all(|&b| b == 0) {
                return Ok(());
            }
        }
        let (lower, upper, special) = (self.lower(), self.upper(), self.special());
        let version = self.u16_at(OFF_VERSION);
        if version != (BLCKSZ as u16 | PAGE_LAYOUT_VERSION) {
            return Err(PageCorruption::BadVersion(version));
        }
        if (lower as usize) < HEADER_SIZE
            || lower > upper
            || upper > special
            || special as usize > BLCKSZ
            || special as usize != maxalign(special as usize)
            || !(lower as usize - HEADER_SIZE).is_multiple_of(ITEM_ID_SIZE)
        {
            return Err(PageCorruption::BadPointers {
                lower,
                upper,
                special,
            });
        }
        let flags = self.flags();
        if flags & !PD_VALID_FLAG_BITS != 0 {
            return Err(PageCorruption::BadFlags(flags));
        }
        Ok(())
    }

    /// LSN of the last WAL record that changed the page.
    pub fn lsn(&self) -> Lsn {
        Lsn(self.u64_at(OFF_LSN))
    }
    /// PageSetLSN.
    pub fn set_lsn(&mut self, lsn: Lsn) {
        self.0[OFF_LSN..OFF_LSN + 8].copy_from_slice(&lsn.0.to_le_bytes());
    }
    /// pd_checksum: the checksum written with the page when the cluster
    /// has `data_checksums` (0 otherwise; see [`Page::compute_checksum`]).
    pub fn checksum(&self) -> u16 {
        self.u16_at(OFF_CHECKSUM)
    }

    /// pg_checksum_page's role: the checksum of this page as block `block`
    /// of its fork, computed as if pd_checksum were 0. CRC-32C is not used
    /// here: crc32fast's CRC-32 (IEEE) is hardware-accelerated (PCLMULQDQ)
    /// and already a dependency, where PostgreSQL needed an algorithm a C
    /// compiler would vectorise portably. The block number is folded in, so
    /// a page written to the wrong place fails too; the result is never 0
    /// (as PostgreSQL's), so a zeroed field never passes by accident.
    pub fn compute_checksum(&self, block: u32) -> u16 {
        let mut h = crc32fast::Hasher::new();
        h.update(&self.0[..OFF_CHECKSUM]);
        h.update(&[0, 0]);
        h.update(&self.0[OFF_CHECKSUM + 2..]);
        let c = h.finalize() ^ block;
        ((c % 65535) + 1) as u16
    }

    /// PageSetChecksumInplace: stores [`Page::compute_checksum`]. Call on a
    /// copy about to be written (the buffer's page may gain hint bits under
    /// a share lock elsewhere: see the buffer manager's write path).
    pub fn set_checksum(&mut self, block: u32) {
        let c = self.compute_checksum(block);
        self.set_u16_at(OFF_CHECKSUM, c);
    }

    /// The checksum test of PageIsVerified: a new (all-zero) page passes;
    /// otherwise `Err((calculated, stored))` when they differ.
    pub fn verify_checksum(&self, block: u32) -> Result<(), (u16, u16)> {
        if self.is_new() && self.0.iter().all(|&b| b == 0) {
            return Ok(());
        }
        let (calc, stored) = (self.compute_checksum(block), self.checksum());
        if calc == stored {
            Ok(())
        } else {
            Err((calc, stored))
        }
    }
    /// pd_flags.
    pub fn flags(&self) -> u16 {
        self.u16_at(OFF_FLAGS)
    }
    /// Sets flag bits.
    pub fn set_flags(&mut self, bits: u16) {
        let f = self.flags() | bits;
        self.set_u16_at(OFF_FLAGS, f);
    }
    /// Clears flag bits.
    pub fn clear_flags(&mut self, bits: u16) {
        let f = self.flags() & !bits;
        self.set_u16_at(OFF_FLAGS, f);
    }
    /// pd_lower: end of the line pointer array.
    pub fn lower(&self) -> u16 {
        self.u16_at(OFF_LOWER)
    }
    /// pd_upper: start of the tuple area.
    pub fn upper(&self) -> u16 {
        self.u16_at(OFF_UPPER)
    }
    /// pd_special: start of the special space (BLCKSZ for heap pages).
    pub fn special(&self) -> u16 {
        self.u16_at(OFF_SPECIAL)
    }
    /// pd_prune_xid: oldest xid that may have left prunable tuples.
    pub fn prune_xid(&self) -> u64 {
        self.u64_at(OFF_PRUNE_XID)
    }
    /// PageSetPrunable: lowers pd_prune_xid to `xid` if older.
    pub fn set_prunable(&mut self, xid: u64) {
        let cur = self.prune_xid();
        if cur == 0 || xid < cur {
            self.0[OFF_PRUNE_XID..OFF_PRUNE_XID + 8].copy_from_slice(&xid.to_le_bytes());
        }
    }

    /// PageGetMaxOffsetNumber: number of line pointers (0 for a new page).
    pub fn max_offset(&self) -> u16 {
        let lower = self.lower() as usize;
        if lower <= HEADER_SIZE {
            0
        } else {
            ((lower - HEADER_SIZE) / ITEM_ID_SIZE) as u16
        }
    }

    /// PageGetItemId (1-based), `None` past the end.
    pub fn item_id(&self, offset: u16) -> Option<ItemId> {
        if offset < FIRST_OFFSET || offset > self.max_offset() {
            return None;
        }
        let at = HEADER_SIZE + (offset as usize - 1) * ITEM_ID_SIZE;
        if at + ITEM_ID_SIZE > BLCKSZ {
            return None;
        }
        let w = u32::from_le_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]]);
        Some(ItemId::decode(w))
    }

    fn set_item_id(&mut self, offset: u16, id: ItemId) {
        let at = HEADER_SIZE + (offset as usize - 1) * ITEM_ID_SIZE;
        self.0[at..at + ITEM_ID_SIZE].copy_from_slice(&id.encode().to_le_bytes());
    }

    /// Marks a Normal line pointer dead (keeps its storage; pruning would
    /// reclaim it).
    pub fn set_item_dead(&mut self, offset: u16) -> Result<(), ItemError> {
        let mut id = self.item_id(offset).ok_or(ItemError::NoSuchItem)?;
        id.flags = LpFlags::Dead;
        self.set_item_id(offset, id);
        Ok(())
    }

    fn item_range(&self, offset: u16) -> Result<std::ops::Range<usize>, ItemError> {
        let id = self.item_id(offset).ok_or(ItemError::NoSuchItem)?;
        if id.flags != LpFlags::Normal {
            return Err(ItemError::NoSuchItem);
        }
        let (start, end) = (id.off as usize, id.off as usize + id.len as usize);
        if start < self.upper() as usize
            || end > self.special() as usize
            || end > BLCKSZ
            || id.len == 0
        {
            return Err(ItemError::Corrupted);
        }
        Ok(start..end)
    }

    /// PageGetItem of a Normal line pointer, bound-checked.
    pub fn item(&self, offset: u16) -> Result<&[u8], ItemError> {
        let r = self.item_range(offset)?;
        Ok(&self.0[r])
    }

    /// Mutable PageGetItem (same length: tuples never grow in place).
    pub fn item_mut(&mut self, offset: u16) -> Result<&mut [u8], ItemError> {
        let r = self.item_range(offset)?;
        Ok(&mut self.0[r])
    }

    /// PageGetFreeSpace: room for one more tuple of this many bytes
    /// (MAXALIGNed) including its line pointer; 0 if none.
    pub fn free_space(&self) -> usize {
        let (lower, upper) = (self.lower() as usize, self.upper() as usize);
        (upper.saturating_sub(lower)).saturating_sub(ITEM_ID_SIZE)
    }

    /// PageGetHeapFreeSpace: like [`Page::free_space`] but 0 once the page
    /// has [`MAX_ITEMS_PER_PAGE`] line pointers and none is free.
    pub fn heap_free_space(&self) -> usize {
        if self.is_new() {
            return BLCKSZ - HEADER_SIZE - ITEM_ID_SIZE;
        }
        if self.max_offset() as usize >= MAX_ITEMS_PER_PAGE && self.flags() & PD_HAS_FREE_LINES == 0
        {
            return 0;
        }
        self.free_space()
    }

    /// True if an item of `len` bytes fits.
    pub fn fits(&self, len: usize) -> bool {
        !self.is_new() && self.heap_free_space() >= maxalign(len)
    }

    /// PageAddItem: puts an item of `len` bytes on the page — in the first
    /// unused line pointer if pruning left some (PD_HAS_FREE_LINES), else in
    /// a new one — calls `fill` with the (zeroed) item bytes and returns the
    /// offset number; `None` if it does not fit. The page must be
    /// initialised.
    pub fn add_item_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Option<u16> {
        let offset = self.next_item_offset();
        self.add_item_at(offset, len, fill)
    }

    /// The offset [`Page::add_item_with`] would use now: the first unused
    /// line pointer if pruning left some (PD_HAS_FREE_LINES), else the one
    /// after the last. (A caller that must know the offset before filling
    /// the item — a tuple's own ctid — asks here, then uses
    /// [`Page::add_item_at`].)
    pub fn next_item_offset(&mut self) -> u16 {
        if self.flags() & PD_HAS_FREE_LINES != 0 {
            match (FIRST_OFFSET..=self.max_offset()).find(|&o| {
                self.item_id(o)
                    .is_some_and(|id| id.flags == LpFlags::Unused)
            }) {
                Some(o) => return o,
                // The hint was stale: no search next time.
                None => self.clear_flags(PD_HAS_FREE_LINES),
            }
        }
        self.max_offset() + 1
    }

    /// PageAddItem with an explicit offset (redo, which must put the tuple
    /// where the WAL record says): `offset` is an unused line pointer or
    /// the one after the last. `None` if that slot is taken or the item
    /// does not fit.
    pub fn add_item_at(
        &mut self,
        offset: u16,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Option<u16> {
        if len == 0 || len > MAX_ITEM_SIZE || !self.fits(len) {
            return None;
        }
        let n = self.max_offset();
        let reuse = offset >= FIRST_OFFSET && offset <= n;
        if reuse {
            if self.item_id(offset)?.flags != LpFlags::Unused {
                return None;
            }
        } else if offset != n + 1 || n as usize >= MAX_ITEMS_PER_PAGE {
            return None;
        }
        let upper = self.upper() as usize - maxalign(len);
        let lower = self.lower() as usize + if reuse { 0 } else { ITEM_ID_SIZE };
        if lower > upper {
            return None;
        }
        self.set_item_id(
            offset,
            ItemId {
                off: upper as u16,
                flags: LpFlags::Normal,
                len: len as u16,
            },
        );
        self.set_u16_at(OFF_LOWER, lower as u16);
        self.set_u16_at(OFF_UPPER, upper as u16);
        let item = &mut self.0[upper..upper + maxalign(len)];
        item.fill(0);
        fill(&mut item[..len]);
        Some(offset)
    }

    /// PageAddItem with the bytes given.
    pub fn add_item(&mut self, data: &[u8]) -> Option<u16> {
        self.add_item_with(data.len(), |b| b.copy_from_slice(data))
    }

    /// heap_page_prune_execute: the line pointers in `dead` become LP_DEAD
    /// and those in `unused` LP_UNUSED (both lose their storage), then the
    /// page is defragmented ([`Page::repair_fragmentation`]). Offsets that
    /// do not exist are an error; an offset already in the target state is
    /// fine (redo of a record onto a page that has it). The tuples of every
    /// other line pointer keep their offsets and bytes. The primary and
    /// redo run exactly this on the same page, so they lay it out the same.
    pub fn prune_execute(&mut self, dead: &[u16], unused: &[u16]) -> Result<(), ItemError> {
        for (list, flags) in [(dead, LpFlags::Dead), (unused, LpFlags::Unused)] {
            for &o in list {
                self.item_id(o).ok_or(ItemError::NoSuchItem)?;
                self.set_item_id(
                    o,
                    ItemId {
                        off: 0,
                        flags,
                        len: 0,
                    },
                );
            }
        }
        if !unused.is_empty() {
            self.set_flags(PD_HAS_FREE_LINES);
        }
        self.repair_fragmentation()
    }

    /// PageRepairFragmentation: moves every Normal tuple to the end of the
    /// page, highest storage address first, so the free space is one hole
    /// between the line pointers and the tuples, and zeroes the hole.
    /// Offsets do not change.
    /// A line pointer pointing outside the tuple area, or tuples that
    /// overlap, are an error (a corrupt page: the caller reports it).
    pub fn repair_fragmentation(&mut self) -> Result<(), ItemError> {
        let mut items: Vec<(u16, usize, usize)> = Vec::with_capacity(self.max_offset() as usize);
        for o in FIRST_OFFSET..=self.max_offset() {
            if self
                .item_id(o)
                .is_some_and(|id| id.flags == LpFlags::Normal)
            {
                let r = self.item_range(o)?;
                items.push((o, r.start, r.end - r.start));
            }
        }
        // Highest first: each tuple moves up (or stays), never over a tuple
        // not yet moved.
        items.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut upper = self.special() as usize;
        for (o, start, len) in items {
            let need = maxalign(len);
            if upper < need || upper - need < start {
                return Err(ItemError::Corrupted); // overlapping tuples
            }
            upper -= need;
            self.0.copy_within(start..start + len, upper);
            self.0[upper + len..upper + need].fill(0); // alignment padding
            self.set_item_id(
                o,
                ItemId {
                    off: upper as u16,
                    flags: LpFlags::Normal,
                    len: len as u16,
                },
            );
        }
        self.set_u16_at(OFF_UPPER, upper as u16);
        // The hole holds stale tuple bytes; zeroed, a pruned page is the
        // same bytes on the primary and after redo (and compresses).
        let lower = self.lower() as usize;
        self.0[lower..upper].fill(0);
        Ok(())
    }

    /// Sets pd_prune_xid (0: nothing left to prune).
    pub fn set_prune_xid(&mut self, xid: u64) {
        self.0[OFF_PRUNE_XID..OFF_PRUNE_XID + 8].copy_from_slice(&xid.to_le_bytes());
    }
}

/// The largest item a page can hold (one item on an empty page).
pub const MAX_ITEM_SIZE: usize = (BLCKSZ - HEADER_SIZE - ITEM_ID_SIZE) & !(MAXALIGN - 1);

/// MaxHeapTuplesPerPage: the most line pointers a heap page gets (each tuple
/// has at least a MAXALIGNed header).
pub const MAX_ITEMS_PER_PAGE: usize =
    (BLCKSZ - HEADER_SIZE) / (maxalign(super::htup::HEADER_SIZE) + ITEM_ID_SIZE);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_page() {
        let mut p = Page::default();
        assert!(p.is_new());
        assert!(p.verify().is_ok(), "all-zero page is valid");
        assert!(!p.fits(10), "a new page takes nothing before init");
        p.init();
        assert!(p.verify().is_ok());
        assert_eq!(p.max_offset(), 0);
        assert_eq!(p.free_space(), BLCKSZ - HEADER_SIZE - ITEM_ID_SIZE);
        assert_eq!(p.item(1), Err(ItemError::NoSuchItem));
        assert_eq!(
            p.add_item(&[0u8; MAX_ITEM_SIZE]),
            Some(1),
            "max item fits an empty page"
        );
        assert_eq!(p.add_item(&[1]), None);
    }

    #[test]
    fn lp_packing_roundtrip() {
        for (off, flags, len) in [
            (0, LpFlags::Unused, 0),
            (8184, LpFlags::Normal, 8),
            (32767, LpFlags::Dead, 32767),
        ] {
            let id = ItemId { off, flags, len };
            assert_eq!(ItemId::decode(id.encode()), id);
        }
    }

    #[test]
    fn nonzero_uninitialised_page_is_corrupt() {
        let mut p = Page::default();
        p.0[100] = 1;
        assert!(p.verify().is_err());
    }

    #[test]
    fn corrupt_line_pointer_is_error_not_panic() {
        let mut p = Page::default();
        p.init();
        let o = p.add_item(b"hello").unwrap();
        // Point the item past the end of the page.
        p.set_item_id(
            o,
            ItemId {
                off: 8190,
                flags: LpFlags::Normal,
                len: 100,
            },
        );
        assert_eq!(p.item(o), Err(ItemError::Corrupted));
        p.set_item_id(
            o,
            ItemId {
                off: 10,
                flags: LpFlags::Normal,
                len: 5,
            },
        );
        assert_eq!(
            p.item(o),
            Err(ItemError::Corrupted),
            "item inside the line pointer array"
        );
    }

    proptest! {
        #[test]
        fn insert_random_items_read_back(items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..600), 1..80)) {
            let mut p = Page::default();
            p.init();
            let mut stored = Vec::new();
            for it in &items {
                let before = p.free_space();
                match p.add_item(it) {
                    Some(o) => {
                        prop_assert_eq!(o as usize, stored.len() + 1);
                        stored.push(it.clone());
                    }
                    None => prop_assert!(before < maxalign(it.len()), "refused with room left"),
                }
                prop_assert!(p.verify().is_ok());
            }
            prop_assert_eq!(p.max_offset() as usize, stored.len());
            // Round trip through bytes, as through disk.
            let copy = Page(p.0);
            prop_assert!(copy.verify().is_ok());
            for (i, it) in stored.iter().enumerate() {
                prop_assert_eq!(copy.item(i as u16 + 1).unwrap(), &it[..]);
            }
        }

        #[test]
        fn corrupted_header_is_detected(lower in any::<u16>(), upper in any::<u16>(), special in any::<u16>(), version in any::<u16>(), flags in any::<u16>()) {
            let mut p = Page::default();
            p.init();
            p.add_item(b"some tuple").unwrap();
            p.set_u16_at(OFF_LOWER, lower);
            p.set_u16_at(OFF_UPPER, upper);
            p.set_u16_at(OFF_SPECIAL, special);
            p.set_u16_at(OFF_VERSION, version);
            p.set_u16_at(OFF_FLAGS, flags);
            let valid = version == (BLCKSZ as u16 | PAGE_LAYOUT_VERSION)
                && lower as usize >= HEADER_SIZE && lower <= upper && upper <= special
                && special as usize <= BLCKSZ && special % 8 == 0
                && (lower as usize - HEADER_SIZE).is_multiple_of(ITEM_ID_SIZE)
                && flags & !PD_VALID_FLAG_BITS == 0;
            prop_assert_eq!(p.verify().is_ok(), valid);
            // Whatever the header says, accessors never panic.
            for o in 0..=p.max_offset().min(3000) {
                let _ = p.item(o);
            }
            let _ = p.heap_free_space();
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), BLCKSZ)) {
            let mut p = Page::default();
            p.0.copy_from_slice(&bytes);
            if p.verify().is_ok() {
                for o in 0..=p.max_offset() {
                    let _ = p.item(o);
                }
                let _ = p.add_item(b"x");
            }
        }
    }
}
