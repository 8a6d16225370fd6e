//! inet and cidr: an IPv4 or IPv6 address with a netmask length
//! (PostgreSQL's `utils/adt/network.c`, `inet_net_pton.c`,
//! `inet_net_ntop.c`, `inet_cidr_ntop.c`).
//!
//! One [`Inet`] serves both types; the SQL type (and so the
//! [`crate::value::Value`] variant) decides what differs:
//!
//! * input — inet takes `a.b.c.d[/n]` (all four octets unless `/n` is
//!   given) and IPv6 text; cidr also takes the classful abbreviations
//!   (`10`, `128.1`, hex `0x0a`) and rejects bits set right of the mask
//!   (`invalid cidr value`, DETAIL `Value has bits set to right of mask.`);
//! * output — inet omits `/32` and `/128`, cidr always prints the mask
//!   length. IPv6 text compresses the longest (first) run of two or more
//!   zero groups to `::` and prints IPv4-compatible and IPv4-mapped
//!   addresses with a dotted tail (`::1.2.3.4`, `::ffff:1.2.3.4`);
//! * binary — family byte (2 = IPv4, 3 = IPv6, PostgreSQL's `PGSQL_AF_*`),
//!   bits, is_cidr, address length, address bytes.
//!
//! Ordering is `network_cmp`: family, then the network part over the
//! shorter of the two mask lengths, then the mask length, then the whole
//! address. [`Inet::key_bytes`] is an encoding whose byte order is that
//! order (property-tested), for index keys.
//!
//! Input here is byte-oriented like the C parsers it follows: no
//! whitespace is trimmed and every malformed string is 22P02
//! `invalid input syntax for type inet: "…"` (or `cidr`).

use std::cmp::Ordering;

use bytes::{BufMut, BytesMut};

use crate::error::{sqlstate, PgError, PgResult};

/// PostgreSQL's `PGSQL_AF_INET`, the family byte of IPv4 values on the wire.
pub const PGSQL_AF_INET: u8 = 2;
/// PostgreSQL's `PGSQL_AF_INET6`.
pub const PGSQL_AF_INET6: u8 = 3;

/// An inet or cidr value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inet {
    /// IPv6 (16 address bytes) rather than IPv4 (the first 4 bytes).
    pub v6: bool,
    /// Netmask length: 0..=32 for IPv4, 0..=128 for IPv6.
    pub bits: u8,
    /// The address in network byte order; bytes past the family's length are 0.
    pub addr: [u8; 16],
}

fn bad_input(s: &str, cidr: bool) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!(
            "invalid input syntax for type {}: \"{}\"",
            if cidr { "cidr" } else { "inet" },
            s
        ),
    )
}

fn invalid_param(msg: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn out_of_range() -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "result is out of range",
    )
}

/// The byte at `i`, 0 past the end (the C parsers' NUL terminator).
fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// One decimal number of a dotted IPv4 address, starting at the digit
/// `ch`, stored as `dst[n]`: `Some(true)` when the address ends after it
/// (end of input or `/`), `Some(false)` when a `.` follows, None when it
/// is malformed (over 255, a fifth number, another character).
fn dotted_octet(
    b: &[u8],
    p: &mut usize,
    ch: &mut u8,
    dst: &mut [u8; 16],
    n: &mut usize,
) -> Option<bool> {
    let mut tmp: u32 = 0;
    loop {
        tmp = tmp * 10 + u32::from(ch.wrapping_sub(b'0'));
        if tmp > 255 {
            return None;
        }
        *ch = at(b, *p);
        *p += 1;
        if !ch.is_ascii_digit() {
            break;
        }
    }
    if *n == 4 {
        return None;
    }
    dst[*n] = tmp as u8;
    *n += 1;
    if *ch == 0 || *ch == b'/' {
        return Some(true);
    }
    if *ch != b'.' {
        return None;
    }
    Some(false)
}

/// An IPv4 `/bits` suffix after `n` address bytes, `ch` being the
/// character after them: -1 when there is none, None when it is
/// malformed or over 32.
fn mask_bits(b: &[u8], p: &mut usize, ch: &mut u8, n: usize) -> Option<i32> {
    if !(*ch == b'/' && at(b, *p).is_ascii_digit() && n > 0) {
        return Some(-1);
    }
    *ch = at(b, *p);
    *p += 1;
    let mut bits: i32 = 0;
    loop {
        bits = bits
            .saturating_mul(10)
            .saturating_add(i32::from(ch.wrapping_sub(b'0')));
        *ch = at(b, *p);
        *p += 1;
        if !ch.is_ascii_digit() {
            break;
        }
    }
    if *ch != 0 || bits > 32 {
        return None;
    }
    Some(bits)
}

/// `inet_net_pton_ipv4`: inet's IPv4 form. Returns the mask length.
fn pton_ipv4_inet(b: &[u8], dst: &mut [u8; 16]) -> Option<u8> {
    let mut p = 0;
    let mut n = 0usize;
    let mut ch;
    loop {
        ch = at(b, p);
        p += 1;
        if !ch.is_ascii_digit() {
            break;
        }
        if dotted_octet(b, &mut p, &mut ch, dst, &mut n)? {
            break;
        }
    }
    let mut bits = mask_bits(b, &mut p, &mut ch, n)?;
    // The C code stops at a NUL; here the string's end must have been reached.
    if ch != 0 || p != b.len() + 1 {
        return None;
    }
    if bits == -1 {
        if n == 4 {
            bits = 32;
        } else {
            return None;
        }
    }
    if n == 0 || (bits / 8) as usize > n {
        return None;
    }
    Some(bits as u8)
}

/// `inet_cidr_pton_ipv4`: cidr's IPv4 form, with classful defaults.
fn pton_ipv4_cidr(b: &[u8], dst: &mut [u8; 16]) -> Option<u8> {
    let mut p = 0;
    let mut n = 0usize;
    let mut ch = at(b, p);
    p += 1;
    if ch == b'0' && matches!(at(b, p), b'x' | b'X') && at(b, p + 1).is_ascii_hexdigit() {
        // Hexadecimal: a nybble string.
        p += 1;
        let mut dirty = 0;
        let mut tmp: u8 = 0;
        loop {
            ch = at(b, p);
            p += 1;
            if !ch.is_ascii_hexdigit() {
                break;
            }
            let v = (ch as char).to_digit(16)? as u8;
            tmp = if dirty == 0 { v } else { (tmp << 4) | v };
            dirty += 1;
            if dirty == 2 {
                if n == 4 {
                    return None;
                }
                dst[n] = tmp;
                n += 1;
                dirty = 0;
            }
        }
        if dirty != 0 {
            if n == 4 {
                return None;
            }
            dst[n] = tmp << 4;
            n += 1;
        }
    } else if ch.is_ascii_digit() {
        loop {
            if dotted_octet(b, &mut p, &mut ch, dst, &mut n)? {
                break;
            }
            ch = at(b, p);
            p += 1;
            if !ch.is_ascii_digit() {
                return None;
            }
        }
    } else {
        return None;
    }
    let mut bits = mask_bits(b, &mut p, &mut ch, n)?;
    if ch != 0 || p != b.len() + 1 || n == 0 {
        return None;
    }
    if bits == -1 {
        let first = dst[0];
        bits = if first >= 240 {
            32
        } else if first >= 224 {
            8
        } else if first >= 192 {
            24
        } else if first >= 128 {
            16
        } else {
            8
        };
        if bits < (n * 8) as i32 {
            bits = (n * 8) as i32;
        }
        if bits == 8 && first == 224 {
            bits = 4;
        }
    }
    Some(bits as u8)
}

/// `getbits`: a mask length 0..=128 without leading zeros, to the end.
fn getbits(b: &[u8]) -> Option<i32> {
    if b.is_empty() {
        return None;
    }
    let mut val: i32 = 0;
    for (n, &ch) in b.iter().enumerate() {
        if !ch.is_ascii_digit() {
            return None;
        }
        if n != 0 && val == 0 {
            return None;
        }
        val = val * 10 + (ch - b'0') as i32;
        if val > 128 {
            return None;
        }
    }
    Some(val)
}

/// `getv4`: a dotted IPv4 tail of an IPv6 address, optionally `/bits`.
fn getv4(b: &[u8], dst: &mut [u8], bits: &mut i32) -> bool {
    let mut o = 0usize;
    let mut val: u32 = 0;
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        let ch = b[i];
        i += 1;
        if ch.is_ascii_digit() {
            if n != 0 && val == 0 {
                return false;
            }
            n += 1;
            val = val * 10 + (ch - b'0') as u32;
            if val > 255 {
                return false;
            }
            continue;
        }
        if ch == b'.' || ch == b'/' {
            if o > 3 {
                return false;
            }
            dst[o] = val as u8;
            o += 1;
            if ch == b'/' {
                return match getbits(&b[i..]) {
                    Some(v) => {
                        *bits = v;
                        true
                    }
                    None => false,
                };
            }
            val = 0;
            n = 0;
            continue;
        }
        return false;
    }
    if n == 0 || o > 3 {
        return false;
    }
    dst[o] = val as u8;
    true
}

/// `inet_cidr_pton_ipv6`: IPv6 text, optionally `/bits` (default 128).
fn pton_ipv6(b: &[u8], dst: &mut [u8; 16]) -> Option<u8> {
    let mut tmp = [0u8; 16];
    let mut tp = 0usize;
    let mut colonp: Option<usize> = None;
    let mut p = 0usize;
    if at(b, 0) == b':' {
        p = 1;
        if at(b, 1) != b':' {
            return None;
        }
    }
    let mut curtok = p;
    let mut saw_xdigit = false;
    let mut val: u32 = 0;
    let mut digits = 0;
    let mut bits: i32 = -1;
    while p < b.len() {
        let ch = b[p];
        p += 1;
        if let Some(d) = (ch as char).to_digit(16) {
            val = (val << 4) | d;
            digits += 1;
            if digits > 4 {
                return None;
            }
            saw_xdigit = true;
            continue;
        }
        if ch == b':' {
            curtok = p;
            if !saw_xdigit {
                if colonp.is_some() {
                    return None;
                }
                colonp = Some(tp);
                continue;
            } else if p == b.len() {
                return None;
            }
            if tp + 2 > 16 {
                return None;
            }
            tmp[tp] = (val >> 8) as u8;
            tmp[tp + 1] = val as u8;
            tp += 2;
            saw_xdigit = false;
            digits = 0;
            val = 0;
            continue;
        }
        if ch == b'.' && tp + 4 <= 16 && getv4(&b[curtok..], &mut tmp[tp..tp + 4], &mut bits) {
            tp += 4;
            saw_xdigit = false;
            break;
        }
        if ch == b'/' {
            if let Some(v) = getbits(&b[p..]) {
                bits = v;
                break;
            }
        }
        return None;
    }
    if saw_xdigit {
        if tp + 2 > 16 {
            return None;
        }
        tmp[tp] = (val >> 8) as u8;
        tmp[tp + 1] = val as u8;
        tp += 2;
    }
    if bits == -1 {
        bits = 128;
    }
    if let Some(c) = colonp {
        if tp == 16 {
            return None;
        }
        let n = tp - c;
        for i in 1..=n {
            tmp[16 - i] = tmp[c + n - i];
            tmp[c + n - i] = 0;
        }
        tp = 16;
    }
    if tp != 16 {
        return None;
    }
    *dst = tmp;
    Some(bits as u8)
}

/// The mask of `bits` leading ones over 16 bytes.
fn mask_bytes(bits: u8) -> [u8; 16] {
    let mut m = [0u8; 16];
    for (i, b) in m.iter_mut().enumerate() {
        let from = i * 8;
        let bits = bits as usize;
        *b = if bits >= from + 8 {
            0xff
        } else if bits > from {
            0xffu8 << (8 - (bits - from))
        } else {
            0
        };
    }
    m
}

/// `bitncmp`: compares the first `n` bits of two addresses.
fn bitncmp(a: &[u8; 16], b: &[u8; 16], n: u8) -> Ordering {
    let whole = (n / 8) as usize;
    match a[..whole].cmp(&b[..whole]) {
        Ordering::Equal => {}
        o => return o,
    }
    let rest = n % 8;
    if rest == 0 {
        return Ordering::Equal;
    }
    let m = 0xffu8 << (8 - rest);
    (a[whole] & m).cmp(&(b[whole] & m))
}

/// `bitncommon`: how many leading bits (at most `n`) two addresses share.
fn bitncommon(a: &[u8; 16], b: &[u8; 16], n: u8) -> u8 {
    let mut common = 0u8;
    for i in 0..16 {
        let x = a[i] ^ b[i];
        if x != 0 {
            common += x.leading_zeros() as u8;
            break;
        }
        common += 8;
    }
    common.min(n)
}

impl Inet {
    /// The family's number of address bytes (4 or 16).
    pub fn addr_len(&self) -> usize {
        if self.v6 {
            16
        } else {
            4
        }
    }

    /// The family's maximum mask length (32 or 128).
    pub fn max_bits(&self) -> u8 {
        if self.v6 {
            128
        } else {
            32
        }
    }

    /// `family()`: 4 or 6.
    pub fn family(&self) -> i32 {
        if self.v6 {
            6
        } else {
            4
        }
    }

    /// A host address (full mask length), as inet_client_addr() gives it.
    pub fn from_ip(ip: std::net::IpAddr) -> Inet {
        let mut addr = [0u8; 16];
        match ip {
            std::net::IpAddr::V4(a) => {
                addr[..4].copy_from_slice(&a.octets());
                Inet {
                    v6: false,
                    bits: 32,
                    addr,
                }
            }
            std::net::IpAddr::V6(a) => Inet {
                v6: true,
                bits: 128,
                addr: a.octets(),
            },
        }
    }

    /// inet_in (`cidr: false`) / cidr_in (`cidr: true`).
    pub fn parse(s: &str, cidr: bool) -> PgResult<Inet> {
        let b = s.as_bytes();
        let v6 = b.contains(&b':');
        let mut addr = [0u8; 16];
        let bits = if v6 {
            pton_ipv6(b, &mut addr)
        } else if cidr {
            pton_ipv4_cidr(b, &mut addr)
        } else {
            pton_ipv4_inet(b, &mut addr)
        };
        let max = if v6 { 128 } else { 32 };
        let bits = match bits {
            Some(n) if n <= max => n,
            _ => return Err(bad_input(s, cidr)),
        };
        let v = Inet { v6, bits, addr };
        if cidr && !v.host_bits_zero() {
            return Err(PgError::new(
                sqlstate::INVALID_TEXT_REPRESENTATION,
                format!("invalid cidr value: \"{s}\""),
            )
            .with_detail("Value has bits set to right of mask."));
        }
        Ok(v)
    }

    /// `addressOK`: no bit is set right of the mask.
    pub fn host_bits_zero(&self) -> bool {
        let m = mask_bytes(self.bits);
        self.addr.iter().zip(m).all(|(a, m)| a & !m == 0)
    }

    /// The address with the host bits cleared (`network()`, the cidr cast).
    pub fn network(&self) -> Inet {
        let m = mask_bytes(self.bits);
        let mut addr = self.addr;
        for (a, m) in addr.iter_mut().zip(m) {
            *a &= m;
        }
        Inet { addr, ..*self }
    }

    /// `broadcast()`: the host bits set.
    pub fn broadcast(&self) -> Inet {
        let m = mask_bytes(self.bits);
        let mut addr = self.addr;
        for (a, m) in addr[..self.addr_len()].iter_mut().zip(m) {
            *a |= !m;
        }
        Inet { addr, ..*self }
    }

    /// `netmask()`: the mask as an address of full length.
    pub fn netmask(&self) -> Inet {
        let mut addr = mask_bytes(self.bits);
        addr[self.addr_len()..].fill(0);
        Inet {
            v6: self.v6,
            bits: self.max_bits(),
            addr,
        }
    }

    /// `hostmask()`: the inverted mask as an address of full length.
    pub fn hostmask(&self) -> Inet {
        let m = mask_bytes(self.bits);
        let mut addr = [0u8; 16];
        for (a, m) in addr[..self.addr_len()].iter_mut().zip(m) {
            *a = !m;
        }
        Inet {
            v6: self.v6,
            bits: self.max_bits(),
            addr,
        }
    }

    /// `set_masklen()`: -1 means the family's maximum; out of range is
    /// 22023 `invalid mask length: n`. `cidr` clears the host bits.
    pub fn set_masklen(&self, bits: i32, cidr: bool) -> PgResult<Inet> {
        let bits = if bits == -1 {
            self.max_bits() as i32
        } else {
            bits
        };
        if bits < 0 || bits > self.max_bits() as i32 {
            return Err(invalid_param(&format!("invalid mask length: {bits}")));
        }
        let v = Inet {
            bits: bits as u8,
            ..*self
        };
        Ok(if cidr { v.network() } else { v })
    }

    /// `network_cmp`: family, network part, mask length, whole address.
    pub fn cmp_net(&self, o: &Inet) -> Ordering {
        if self.v6 != o.v6 {
            return self.v6.cmp(&o.v6);
        }
        bitncmp(&self.addr, &o.addr, self.bits.min(o.bits))
            .then(self.bits.cmp(&o.bits))
            .then(bitncmp(&self.addr, &o.addr, self.max_bits()))
    }

    /// `<<` (`or_equal`: `<<=`): `self` is within the network `o`.
    pub fn sub(&self, o: &Inet, or_equal: bool) -> bool {
        self.v6 == o.v6
            && (if or_equal {
                self.bits >= o.bits
            } else {
                self.bits > o.bits
            })
            && bitncmp(&self.addr, &o.addr, o.bits) == Ordering::Equal
    }

    /// `&&`: either network contains the other.
    pub fn overlaps(&self, o: &Inet) -> bool {
        self.v6 == o.v6 && bitncmp(&self.addr, &o.addr, self.bits.min(o.bits)) == Ordering::Equal
    }

    /// `~`: every address bit inverted, the mask length kept.
    pub fn not(&self) -> Inet {
        let mut addr = [0u8; 16];
        for (d, s) in addr[..self.addr_len()].iter_mut().zip(self.addr) {
            *d = !s;
        }
        Inet { addr, ..*self }
    }

    /// `&` / `|`: bitwise over addresses of one family; the result has the
    /// larger mask length. Different families: 22023.
    pub fn bitop(&self, o: &Inet, or: bool) -> PgResult<Inet> {
        if self.v6 != o.v6 {
            return Err(invalid_param(if or {
                "cannot OR inet values of different sizes"
            } else {
                "cannot AND inet values of different sizes"
            }));
        }
        let mut addr = self.addr;
        for (d, s) in addr.iter_mut().zip(o.addr) {
            if or {
                *d |= s
            } else {
                *d &= s
            }
        }
        Ok(Inet {
            v6: self.v6,
            bits: self.bits.max(o.bits),
            addr,
        })
    }

    fn as_u128(&self) -> u128 {
        if self.v6 {
            u128::from_be_bytes(self.addr)
        } else {
            u32::from_be_bytes([self.addr[0], self.addr[1], self.addr[2], self.addr[3]]) as u128
        }
    }

    fn with_u128(&self, v: u128) -> Inet {
        let mut addr = [0u8; 16];
        if self.v6 {
            addr = v.to_be_bytes();
        } else {
            addr[..4].copy_from_slice(&(v as u32).to_be_bytes());
        }
        Inet { addr, ..*self }
    }

    /// `inet + int8` (and `inet - int8` with the addend negated): 22003
    /// `result is out of range` if the address leaves the family's range.
    pub fn add(&self, addend: i64) -> PgResult<Inet> {
        let a = self.as_u128();
        let r = if addend >= 0 {
            a.checked_add(addend as u128)
        } else {
            a.checked_sub(addend.unsigned_abs() as u128)
        };
        match r {
            Some(r) if self.v6 || r <= u32::MAX as u128 => Ok(self.with_u128(r)),
            _ => Err(out_of_range()),
        }
    }

    /// `inet - int8`.
    pub fn sub_int(&self, n: i64) -> PgResult<Inet> {
        if n == i64::MIN {
            // -n does not fit an int8; PostgreSQL negates in two's
            // complement, leaving i64::MIN.
            return self.add(n);
        }
        self.add(-n)
    }

    /// `inet - inet` → int8: the difference of the addresses, computed in
    /// the family's width as PostgreSQL's `inetmi` does; 22003 if it does
    /// not fit an int8, 22023 for different families.
    pub fn minus(&self, o: &Inet) -> PgResult<i64> {
        if self.v6 != o.v6 {
            return Err(invalid_param(
                "cannot subtract inet values of different sizes",
            ));
        }
        if !self.v6 {
            return Ok(self.as_u128() as i64 - o.as_u128() as i64);
        }
        let d = self.as_u128().wrapping_sub(o.as_u128()) as i128;
        i64::try_from(d).map_err(|_| out_of_range())
    }

    /// `inet_merge()`: the smallest network containing both (22023 for
    /// different families).
    pub fn merge(&self, o: &Inet) -> PgResult<Inet> {
        if self.v6 != o.v6 {
            return Err(invalid_param(
                "cannot merge addresses from different families",
            ));
        }
        let bits = bitncommon(&self.addr, &o.addr, self.bits.min(o.bits));
        Ok(Inet { bits, ..*self }.network())
    }

    /// Appends the text form: inet_out (`cidr: false`) / cidr_out.
    pub fn write_text(&self, out: &mut BytesMut, cidr: bool) {
        self.write_addr(out);
        if cidr || self.bits != self.max_bits() {
            use std::fmt::Write;
            let _ = write!(out, "/{}", self.bits);
        }
    }

    /// `host()`: the address alone, never a mask length.
    pub fn host_text(&self) -> String {
        let mut b = BytesMut::new();
        self.write_addr(&mut b);
        String::from_utf8_lossy(&b).into_owned()
    }

    /// `text(inet)`: the address and always the mask length.
    pub fn show_text(&self) -> String {
        let mut b = BytesMut::new();
        self.write_text(&mut b, true);
        String::from_utf8_lossy(&b).into_owned()
    }

    /// The address part of `inet_net_ntop`.
    fn write_addr(&self, out: &mut BytesMut) {
        // Straight into `out` (BytesMut is fmt::Write): no allocation.
        use std::fmt::Write;
        let s = out;
        if !self.v6 {
            let a = &self.addr;
            let _ = write!(s, "{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
            return;
        }
        let words: [u16; 8] =
            std::array::from_fn(|i| u16::from_be_bytes([self.addr[2 * i], self.addr[2 * i + 1]]));
        // The first longest run of zero words (length ≥ 2) becomes `::`.
        let (mut best, mut best_len) = (None::<usize>, 0usize);
        let mut i = 0;
        while i < 8 {
            if words[i] == 0 {
                let start = i;
                while i < 8 && words[i] == 0 {
                    i += 1;
                }
                if best.is_none() || i - start > best_len {
                    best = Some(start);
                    best_len = i - start;
                }
            } else {
                i += 1;
            }
        }
        if best_len < 2 {
            best = None;
        }
        for i in 0..8 {
            if let Some(b) = best {
                if i >= b && i < b + best_len {
                    if i == b {
                        s.put_u8(b':');
                    }
                    continue;
                }
            }
            if i != 0 {
                s.put_u8(b':');
            }
            // An encapsulated IPv4 address: ::a.b.c.d or ::ffff:a.b.c.d.
            if i == 6
                && best == Some(0)
                && (best_len == 6
                    || (best_len == 7 && words[7] != 1)
                    || (best_len == 5 && words[5] == 0xffff))
            {
                let a = &self.addr;
                let _ = write!(s, "{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
                return;
            }
            let _ = write!(s, "{:x}", words[i]);
        }
        if let Some(b) = best {
            if b + best_len == 8 {
                s.put_u8(b':');
            }
        }
    }

    /// `abbrev(cidr)`: `inet_cidr_ntop`, which drops the octets and groups
    /// right of the mask (`10.1/16`, `2001:db8::/32`).
    pub fn abbrev_cidr(&self) -> String {
        use std::fmt::Write;
        let bits = self.bits as usize;
        let mut s = String::new();
        if !self.v6 {
            if bits == 0 {
                s.push('0');
            }
            let whole = bits / 8;
            for i in 0..whole {
                let _ = write!(s, "{}", self.addr[i]);
                if i + 1 < whole {
                    s.push('.');
                }
            }
            let b = bits % 8;
            if b > 0 {
                if !s.is_empty() {
                    s.push('.');
                }
                let m = (((1u32 << b) - 1) << (8 - b)) as u8;
                let _ = write!(s, "{}", self.addr[whole] & m);
            }
            let _ = write!(s, "/{}", bits);
            return s;
        }
        if bits == 0 {
            s.push_str("::");
        } else {
            let inbuf = self.network().addr;
            let mut words = bits.div_ceil(16);
            if words == 1 {
                words = 2;
            }
            let (mut zero_s, mut zero_l, mut tmp_s, mut tmp_l) = (0usize, 0usize, 0usize, 0usize);
            for i in (0..words * 2).step_by(2) {
                if inbuf[i] | inbuf[i + 1] == 0 {
                    if tmp_l == 0 {
                        tmp_s = i / 2;
                    }
                    tmp_l += 1;
                } else if tmp_l != 0 && zero_l < tmp_l {
                    zero_s = tmp_s;
                    zero_l = tmp_l;
                    tmp_l = 0;
                }
            }
            if tmp_l != 0 && zero_l < tmp_l {
                zero_s = tmp_s;
                zero_l = tmp_l;
            }
            let is_ipv4 = zero_l != words
                && zero_s == 0
                && (zero_l == 6
                    || (zero_l == 5 && inbuf[10] == 0xff && inbuf[11] == 0xff)
                    || (zero_l == 7 && inbuf[14] != 0 && inbuf[15] != 1));
            let mut si = 0usize;
            for p in 0..words {
                if zero_l != 0 && p >= zero_s && p < zero_s + zero_l {
                    if p == zero_s {
                        s.push(':');
                    }
                    if p == words - 1 {
                        s.push(':');
                    }
                    si += 2;
                    continue;
                }
                if is_ipv4 && p > 5 {
                    s.push(if p == 6 { ':' } else { '.' });
                    let _ = write!(s, "{}", inbuf[si]);
                    si += 1;
                    if p != 7 || bits > 120 {
                        s.push('.');
                        let _ = write!(s, "{}", inbuf[si]);
                        si += 1;
                    }
                } else {
                    if !s.is_empty() {
                        s.push(':');
                    }
                    let _ = write!(s, "{:x}", (inbuf[si] as u16) << 8 | inbuf[si + 1] as u16);
                    si += 2;
                }
            }
        }
        let _ = write!(s, "/{}", bits);
        s
    }

    /// inet_send / cidr_send.
    pub fn write_binary(&self, out: &mut BytesMut, cidr: bool) {
        out.put_u8(if self.v6 {
            PGSQL_AF_INET6
        } else {
            PGSQL_AF_INET
        });
        out.put_u8(self.bits);
        out.put_u8(cidr as u8);
        out.put_u8(self.addr_len() as u8);
        out.put_slice(&self.addr[..self.addr_len()]);
    }

    /// inet_recv / cidr_recv, with their 22P03 errors.
    pub fn from_binary(b: &[u8], cidr: bool) -> PgResult<Inet> {
        let ty = if cidr { "cidr" } else { "inet" };
        let bad = |what: &str| {
            PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                format!("invalid {what} in external \"{ty}\" value"),
            )
        };
        let short = || {
            PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "insufficient data left in message",
            )
        };
        let [family, bits, _is_cidr, nb, rest @ ..] = b else {
            return Err(short());
        };
        let v6 = match *family {
            PGSQL_AF_INET => false,
            PGSQL_AF_INET6 => true,
            _ => return Err(bad("address family")),
        };
        let (max, len) = if v6 { (128, 16) } else { (32, 4) };
        if *bits > max {
            return Err(bad("bits"));
        }
        if *nb as usize != len {
            return Err(bad("length"));
        }
        if rest.len() < len {
            return Err(short());
        }
        if rest.len() > len {
            return Err(PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "incorrect binary data format",
            ));
        }
        let mut addr = [0u8; 16];
        addr[..len].copy_from_slice(rest);
        let v = Inet {
            v6,
            bits: *bits,
            addr,
        };
        if cidr && !v.host_bits_zero() {
            return Err(PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "invalid external \"cidr\" value",
            )
            .with_detail("Value has bits set to right of mask."));
        }
        Ok(v)
    }

    /// The storage form: family (4 or 6), bits, the address bytes.
    pub fn write_stored(&self, out: &mut Vec<u8>) {
        out.push(self.family() as u8);
        out.push(self.bits);
        out.extend_from_slice(&self.addr[..self.addr_len()]);
    }

    /// Reads [`Inet::write_stored`]'s form: the value and the bytes used;
    /// None if malformed.
    pub fn read_stored(b: &[u8]) -> Option<(Inet, usize)> {
        let (&fam, rest) = b.split_first()?;
        let (&bits, rest) = rest.split_first()?;
        let (v6, len, max) = match fam {
            4 => (false, 4, 32),
            6 => (true, 16, 128),
            _ => return None,
        };
        if bits > max || rest.len() < len {
            return None;
        }
        let mut addr = [0u8; 16];
        addr[..len].copy_from_slice(&rest[..len]);
        Some((Inet { v6, bits, addr }, 2 + len))
    }

    /// An order-preserving key: `memcmp` of two keys is [`Inet::cmp_net`].
    ///
    /// ```text
    /// family (4 / 6)
    /// the first `bits` address bits as 2-bit symbols (0 → 01, 1 → 10),
    ///   then the terminator 00, packed four to a byte, padded with 00
    /// the whole address (4 or 16 bytes)
    /// ```
    /// A shorter network that is a prefix of a longer one meets the
    /// terminator where the other has a bit, so it sorts first, as
    /// network_cmp orders by mask length after the common prefix.
    pub fn key_bytes(&self, out: &mut Vec<u8>) {
        out.push(self.family() as u8);
        let mut acc = 0u8;
        let mut n = 0;
        for i in 0..self.bits as usize {
            let bit = (self.addr[i / 8] >> (7 - i % 8)) & 1;
            acc = (acc << 2) | (bit + 1);
            n += 1;
            if n == 4 {
                out.push(acc);
                acc = 0;
                n = 0;
            }
        }
        // The terminator (00) and padding.
        out.push(if n == 0 { 0 } else { acc << (2 * (4 - n)) });
        out.extend_from_slice(&self.addr[..self.addr_len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn out(s: &str, cidr: bool) -> String {
        let v = Inet::parse(s, cidr).unwrap_or_else(|e| panic!("{s}: {e}"));
        let mut b = BytesMut::new();
        v.write_text(&mut b, cidr);
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn text_forms_match_postgres() {
        // Each pair checked against PostgreSQL 15.
        for (s, want) in [
            ("192.168.1.5", "192.168.1.5"),
            ("192.168.1.5/24", "192.168.1.5/24"),
            ("10/8", "10.0.0.0/8"),
            ("10.1/16", "10.1.0.0/16"),
            ("::1", "::1"),
            ("::", "::"),
            ("::/0", "::/0"),
            ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"),
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::1.2.3.4", "::1.2.3.4"),
            ("::1:0", "::0.1.0.0"),
            ("::2", "::2"),
            ("1::", "1::"),
            ("::ffff:102:304/120", "::ffff:1.2.3.4/120"),
        ] {
            assert_eq!(out(s, false), want, "{s}");
        }
        for (s, want) in [
            ("10", "10.0.0.0/8"),
            ("128.1", "128.1.0.0/16"),
            ("192.168.1", "192.168.1.0/24"),
            ("224", "224.0.0.0/4"),
            ("224.1", "224.1.0.0/16"),
            ("240", "240.0.0.0/32"),
            ("0x0a", "10.0.0.0/8"),
            ("10.1.2.3", "10.1.2.3/32"),
            ("2001:db8::/32", "2001:db8::/32"),
            ("::1", "::1/128"),
        ] {
            assert_eq!(out(s, true), want, "{s}");
        }
    }

    #[test]
    fn bad_input_matches_postgres() {
        for s in [
            "",
            "x",
            " 1.2.3.4",
            "1.2.3.4 ",
            "1.2.3",
            "1.2.3.4/33",
            "1.2.3.256",
            "1.2.3.4.5",
            "1.2.3.4/",
            ":1::",
            "1:2:3:4:5:6:7:8:9",
            "1::2::3",
            "12345::",
            "::1/129",
            "::1/01",
            "1.2.3.4/24x",
        ] {
            let e = Inet::parse(s, false).unwrap_err();
            assert_eq!(e.code, "22P02", "{s}");
            assert_eq!(
                e.message,
                format!("invalid input syntax for type inet: \"{s}\""),
                "{s}"
            );
        }
        let e = Inet::parse("10.1.2.3/8", true).unwrap_err();
        assert_eq!(e.message, "invalid cidr value: \"10.1.2.3/8\"");
        assert_eq!(
            e.detail.as_deref(),
            Some("Value has bits set to right of mask.")
        );
    }

    #[test]
    fn abbrev_cidr_matches_postgres() {
        for (s, want) in [
            ("10.1.0.0/16", "10.1/16"),
            ("10.0.0.0/8", "10/8"),
            ("0.0.0.0/0", "0/0"),
            ("10.1.2.0/23", "10.1.2/23"),
            ("2001:db8::/32", "2001:db8/32"),
            ("::/0", "::/0"),
            ("2001:db8::1/128", "2001:db8::1/128"),
        ] {
            let v = Inet::parse(s, true).unwrap();
            assert_eq!(v.abbrev_cidr(), want, "{s}");
        }
    }

    fn arb_inet() -> impl Strategy<Value = Inet> {
        (any::<bool>(), any::<[u8; 16]>(), 0u8..=128).prop_map(|(v6, mut addr, bits)| {
            // Few distinct bytes make shared prefixes likely.
            for b in addr.iter_mut() {
                *b &= 0x81;
            }
            if !v6 {
                addr[4..].fill(0);
            }
            let bits = if v6 { bits } else { bits % 33 };
            Inet { v6, bits, addr }
        })
    }

    proptest! {
        #[test]
        fn text_round_trip(v in arb_inet(), cidr in any::<bool>()) {
            let v = if cidr { v.network() } else { v };
            let mut b = BytesMut::new();
            v.write_text(&mut b, cidr);
            let s = String::from_utf8(b.to_vec()).unwrap();
            prop_assert_eq!(Inet::parse(&s, cidr).unwrap(), v, "{}", s);
            let mut bin = BytesMut::new();
            v.write_binary(&mut bin, cidr);
            prop_assert_eq!(Inet::from_binary(&bin, cidr).unwrap(), v);
            let mut st = Vec::new();
            v.write_stored(&mut st);
            prop_assert_eq!(Inet::read_stored(&st), Some((v, st.len())));
        }

        #[test]
        fn key_order_is_network_cmp(a in arb_inet(), b in arb_inet()) {
            let (mut ka, mut kb) = (Vec::new(), Vec::new());
            a.key_bytes(&mut ka);
            b.key_bytes(&mut kb);
            prop_assert_eq!(ka.cmp(&kb), a.cmp_net(&b), "{:?} {:?}", a, b);
        }

        #[test]
        fn parse_never_panics(s in "[0-9a-fA-Fx:./ ]{0,40}", cidr in any::<bool>()) {
            let _ = Inet::parse(&s, cidr);
        }
    }
}
