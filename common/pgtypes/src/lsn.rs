//! Log sequence numbers.
//!
//! An [`Lsn`] is a byte position in the one, endless WAL stream. Byte `n` of
//! the stream lives in segment file `n / wal_segment_size` at offset
//! `n % wal_segment_size`; there are no page headers, so the position of a
//! record *is* its LSN and `end - start` is exactly the bytes it occupies.
//!
//! It prints and parses as PostgreSQL's `pg_lsn` does: the high and low 32
//! bits in upper-case hex, separated by a slash (`0/16B3748`). Parsing
//! accepts what `pg_lsn_in` accepts: 1 to 8 hex digits, `/`, 1 to 8 hex
//! digits, nothing else.
//!
//! Arithmetic never panics: `+` saturates at `u64::MAX` and `-` between two
//! LSNs saturates at 0, because LSNs also arrive from the network (a
//! standby's reply, `START_REPLICATION X/X`) and a hostile value must not
//! take the server down. Use the `checked_*` forms where overflow means a bug
//! you want to see.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Records (and therefore LSNs of record starts) are aligned to this many bytes.
pub const WAL_ALIGN: u64 = 8;

/// A position in the WAL stream (bytes since the beginning of time).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    /// `0/0`: no position. No record ever starts here (WAL begins in segment 1).
    pub const INVALID: Lsn = Lsn(0);
    /// The largest LSN; useful as "no limit".
    pub const MAX: Lsn = Lsn(u64::MAX);

    /// True unless this is [`Lsn::INVALID`].
    pub fn is_valid(self) -> bool {
        self != Lsn::INVALID
    }

    /// The number of the segment file holding byte `self`.
    pub fn segment_number(self, segment_size: u64) -> u64 {
        self.0 / segment_size
    }

    /// The offset of byte `self` inside its segment file.
    pub fn segment_offset(self, segment_size: u64) -> u64 {
        self.0 % segment_size
    }

    /// The first byte of the segment holding `self`.
    pub fn segment_start(self, segment_size: u64) -> Lsn {
        Lsn(self.0 - self.segment_offset(segment_size))
    }

    /// The LSN of the first byte of segment `segno`.
    pub fn from_segment(segno: u64, segment_size: u64) -> Lsn {
        Lsn(segno.saturating_mul(segment_size))
    }

    /// Rounds up to the record alignment ([`WAL_ALIGN`]), saturating.
    pub fn align(self) -> Lsn {
        Lsn(self.0.saturating_add(WAL_ALIGN - 1) & !(WAL_ALIGN - 1))
    }

    /// True if `self` is a multiple of [`WAL_ALIGN`].
    pub fn is_aligned(self) -> bool {
        self.0.is_multiple_of(WAL_ALIGN)
    }

    /// `self + bytes`, or `None` on overflow.
    pub fn checked_add(self, bytes: u64) -> Option<Lsn> {
        self.0.checked_add(bytes).map(Lsn)
    }

    /// `self - bytes`, or `None` below zero.
    pub fn checked_sub(self, bytes: u64) -> Option<Lsn> {
        self.0.checked_sub(bytes).map(Lsn)
    }

    /// Bytes from `earlier` to `self`, or 0 if `earlier` is later.
    pub fn distance_from(self, earlier: Lsn) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// The high 32 bits (PostgreSQL's "xlogid", the part before the slash).
    pub fn hi(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The low 32 bits (the part after the slash).
    pub fn lo(self) -> u32 {
        self.0 as u32
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.hi(), self.lo())
    }
}

impl fmt::Debug for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lsn({self})")
    }
}

/// The error for a string that is not an `X/X` LSN.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input syntax for type pg_lsn: \"{0}\"")]
pub struct LsnParseError(pub String);

impl FromStr for Lsn {
    type Err = LsnParseError;

    fn from_str(s: &str) -> Result<Lsn, LsnParseError> {
        let bad = || LsnParseError(s.to_string());
        let (hi, lo) = s.split_once('/').ok_or_else(bad)?;
        let part = |p: &str| -> Result<u64, LsnParseError> {
            if p.is_empty() || p.len() > 8 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            u64::from_str_radix(p, 16).map_err(|_| bad())
        };
        Ok(Lsn((part(hi)? << 32) | part(lo)?))
    }
}

impl From<u64> for Lsn {
    fn from(v: u64) -> Lsn {
        Lsn(v)
    }
}

impl From<Lsn> for u64 {
    fn from(l: Lsn) -> u64 {
        l.0
    }
}

impl Add<u64> for Lsn {
    type Output = Lsn;
    /// Saturating: a hostile LSN from the network must not panic the server.
    fn add(self, rhs: u64) -> Lsn {
        Lsn(self.0.saturating_add(rhs))
    }
}

impl AddAssign<u64> for Lsn {
    fn add_assign(&mut self, rhs: u64) {
        *self = *self + rhs;
    }
}

impl Sub<Lsn> for Lsn {
    type Output = u64;
    /// Bytes between two LSNs, saturating at 0.
    fn sub(self, rhs: Lsn) -> u64 {
        self.distance_from(rhs)
    }
}

/// An LSN shared between threads: the one way positions (insert, write,
/// flush, sent, replayed, a slot's keep point) are published. The
/// orderings are the caller's, as with the integer atomics it wraps.
#[derive(Debug, Default)]
pub struct AtomicLsn(AtomicU64);

impl AtomicLsn {
    /// An atomic holding `lsn`.
    pub const fn new(lsn: Lsn) -> AtomicLsn {
        AtomicLsn(AtomicU64::new(lsn.0))
    }

    /// The current value.
    pub fn load(&self, order: Ordering) -> Lsn {
        Lsn(self.0.load(order))
    }

    /// Replaces the value.
    pub fn store(&self, lsn: Lsn, order: Ordering) {
        self.0.store(lsn.0, order)
    }

    /// Raises the value to `lsn` if it is lower; returns the previous one.
    pub fn fetch_max(&self, lsn: Lsn, order: Ordering) -> Lsn {
        Lsn(self.0.fetch_max(lsn.0, order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prints_like_postgres() {
        assert_eq!(Lsn(0x16B3748).to_string(), "0/16B3748");
        assert_eq!(Lsn(0).to_string(), "0/0");
        assert_eq!(Lsn(0x1_0000_0000).to_string(), "1/0");
        assert_eq!(Lsn(u64::MAX).to_string(), "FFFFFFFF/FFFFFFFF");
    }

    #[test]
    fn parses_like_postgres() {
        assert_eq!("0/16B3748".parse::<Lsn>(), Ok(Lsn(0x16B3748)));
        assert_eq!("0/16b3748".parse::<Lsn>(), Ok(Lsn(0x16B3748)));
        assert_eq!("A/0".parse::<Lsn>(), Ok(Lsn(0xA_0000_0000)));
        assert_eq!("FFFFFFFF/FFFFFFFF".parse::<Lsn>(), Ok(Lsn::MAX));
        for bad in [
            "",
            "/",
            "0/",
            "/0",
            "0",
            "0/0/0",
            "123456789/0",
            "0/123456789",
            "g/0",
            " 0/0",
            "0/0 ",
            "+1/0",
            "-1/0",
        ] {
            assert!(bad.parse::<Lsn>().is_err(), "{bad:?} must not parse");
        }
        let e = "x".parse::<Lsn>().unwrap_err();
        assert_eq!(e.to_string(), "invalid input syntax for type pg_lsn: \"x\"");
    }

    #[test]
    fn segments_and_alignment() {
        let seg = 16 << 20;
        let l = Lsn(3 * seg + 100);
        assert_eq!(l.segment_number(seg), 3);
        assert_eq!(l.segment_offset(seg), 100);
        assert_eq!(l.segment_start(seg), Lsn(3 * seg));
        assert_eq!(Lsn::from_segment(3, seg), Lsn(3 * seg));
        assert_eq!(Lsn(9).align(), Lsn(16));
        assert_eq!(Lsn(16).align(), Lsn(16));
        assert_eq!(Lsn::MAX.align(), Lsn(!7));
        assert_eq!(Lsn::MAX + 5, Lsn::MAX);
        assert_eq!(Lsn(5) - Lsn(9), 0);
        assert_eq!(Lsn(9) - Lsn(5), 4);
        assert!(Lsn(1) < Lsn(2));
        assert_eq!(Lsn(1).checked_add(u64::MAX), None);
    }

    proptest! {
        #[test]
        fn print_parse_round_trip(v in any::<u64>()) {
            let l = Lsn(v);
            prop_assert_eq!(l.to_string().parse::<Lsn>(), Ok(l));
        }

        #[test]
        fn parse_never_panics(s in ".{0,24}") {
            let _ = s.parse::<Lsn>();
        }
    }
}
