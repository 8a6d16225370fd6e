//! The `numeric` type: an exact decimal kept as a scaled 128-bit integer.
//!
//! PostgreSQL's numeric is arbitrary precision (base-10000 digits). hotpair
//! keeps `mantissa × 10^-scale` with an `i128` mantissa (38 significant
//! digits) and a display scale up to [`MAX_SCALE`]; that covers what
//! `sum(int8)`, `avg(int)` and money-like columns need. Results that do not
//! fit raise 22003 "value overflows numeric format" instead of losing digits.
//! NaN and ±Infinity are not represented (input of them is 0A000).
//!
//! Invariants:
//! * `scale` is the *display* scale (PostgreSQL's dscale): `1.50` keeps scale 2
//!   and prints `1.50`. Equality, ordering and hashing are by value
//!   (`1.5 == 1.50`), as PostgreSQL's `numeric_eq` / `hash_numeric`.
//! * The mantissa is stored as two `u64` halves so the struct is 8-aligned and
//!   [`crate::value::Value`] stays 32 bytes (an `i128` field would force
//!   16-byte alignment and a 48-byte `Value`).
//!
//! Rounding follows PostgreSQL: round half away from zero (numeric → int,
//! numeric(p,s) typmods, division), division result scale from
//! `select_div_scale` (at least 16 significant digits).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::error::{sqlstate, PgError, PgResult};

/// Largest display scale we keep (digits after the point).
pub const MAX_SCALE: u16 = 38;

/// PostgreSQL's NUMERIC_MIN_SIG_DIGITS: division keeps at least this many significant digits.
const MIN_SIG_DIGITS: i32 = 16;

/// An exact decimal `mantissa × 10^-scale`.
#[derive(Clone, Copy)]
pub struct Numeric {
    lo: u64,
    hi: i64,
    scale: u16,
}

/// 10^0 ..= 10^38 (every power of ten an i128 holds), computed once at
/// compile time: rescaling is on the per-row path of every numeric sum.
const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// 10^n for n in 0..=38 (fits i128); None beyond.
#[inline]
fn pow10(n: u32) -> Option<i128> {
    POW10.get(n as usize).copied()
}

fn overflow() -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "value overflows numeric format",
    )
}

/// Divides `n` by `d` (d != 0), rounding half away from zero.
fn div_round(n: i128, d: i128) -> Option<i128> {
    let q = n.checked_div(d)?;
    let r = n.checked_rem(d)?;
    if r == 0 {
        return Some(q);
    }
    // Compare 2|r| with |d| without overflow: |r| >= |d| - |r|.
    let ar = r.unsigned_abs();
    let ad = d.unsigned_abs();
    if ar >= ad - ar {
        let neg = (n < 0) != (d < 0);
        if neg {
            q.checked_sub(1)
        } else {
            q.checked_add(1)
        }
    } else {
        Some(q)
    }
}

impl Numeric {
    /// Zero with scale 0.
    pub const ZERO: Numeric = Numeric {
        lo: 0,
        hi: 0,
        scale: 0,
    };

    /// `mantissa × 10^-scale`. Panics never; a scale above [`MAX_SCALE`] is an error.
    pub fn new(mantissa: i128, scale: u16) -> PgResult<Numeric> {
        if scale > MAX_SCALE {
            return Err(overflow());
        }
        Ok(Numeric::from_parts(mantissa, scale))
    }

    fn from_parts(m: i128, scale: u16) -> Numeric {
        Numeric {
            lo: m as u64,
            hi: (m >> 64) as i64,
            scale,
        }
    }

    /// The scaled integer.
    pub fn mantissa(self) -> i128 {
        ((self.hi as i128) << 64) | self.lo as i128
    }

    /// The display scale.
    pub fn scale(self) -> u16 {
        self.scale
    }

    /// An integer as numeric (scale 0).
    pub fn from_i64(v: i64) -> Numeric {
        Numeric::from_parts(v as i128, 0)
    }

    /// An i128 as numeric (scale 0).
    pub fn from_i128(v: i128) -> Numeric {
        Numeric::from_parts(v, 0)
    }

    /// Sign: -1, 0 or 1.
    pub fn signum(self) -> i32 {
        self.mantissa().signum() as i32
    }

    /// True if zero.
    pub fn is_zero(self) -> bool {
        self.mantissa() == 0
    }

    /// The same value with `scale` digits after the point, rounding half away
    /// from zero when digits are dropped.
    pub fn rescale(self, scale: u16) -> PgResult<Numeric> {
        if scale > MAX_SCALE {
            return Err(overflow());
        }
        let m = self.mantissa();
        let m = match scale.cmp(&self.scale) {
            Ordering::Equal => m,
            Ordering::Greater => {
                let f = pow10((scale - self.scale) as u32).ok_or_else(overflow)?;
                m.checked_mul(f).ok_or_else(overflow)?
            }
            Ordering::Less => {
                let f = pow10((self.scale - scale) as u32).ok_or_else(overflow)?;
                div_round(m, f).ok_or_else(overflow)?
            }
        };
        Ok(Numeric::from_parts(m, scale))
    }

    /// The value with trailing fractional zeros removed (canonical form for
    /// hashing and keys).
    pub fn normalized(self) -> Numeric {
        let mut m = self.mantissa();
        let mut s = self.scale;
        while s > 0 && m % 10 == 0 {
            m /= 10;
            s -= 1;
        }
        Numeric::from_parts(m, s)
    }

    /// Applies a `numeric(precision, scale)` typmod: rounds to `scale` and
    /// checks the integer digits (22003 "numeric field overflow").
    pub fn apply_typmod(self, precision: u16, scale: u16) -> PgResult<Numeric> {
        let r = self.rescale(scale)?;
        let int_digits_allowed = precision as i32 - scale as i32;
        let limit = if int_digits_allowed >= 0 {
            pow10((int_digits_allowed + scale as i32) as u32)
        } else {
            None
        };
        let ok = match limit {
            Some(l) => r.mantissa().unsigned_abs() < l.unsigned_abs(),
            None => true,
        };
        if !ok {
            let detail = if int_digits_allowed > 0 {
                format!(
                    "A field with precision {precision}, scale {scale} must round to an absolute value less than 10^{int_digits_allowed}."
                )
            } else {
                format!(
                    "A field with precision {precision}, scale {scale} must round to an absolute value less than 1."
                )
            };
            return Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                "numeric field overflow",
            )
            .with_detail(detail));
        }
        Ok(r)
    }

    /// Parses PostgreSQL numeric input: `[+-]digits[.digits][e[+-]digits]`,
    /// surrounding whitespace allowed. None on a syntax error.
    pub fn parse(s: &str) -> Option<PgResult<Numeric>> {
        let t = s.trim_matches(|c: char| c.is_ascii_whitespace()).as_bytes();
        let (neg, body) = match t.first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let mut i = 0;
        let mut digits: Vec<u8> = Vec::new();
        let mut frac = 0i64;
        let mut seen_digit = false;
        while i < body.len() && body[i].is_ascii_digit() {
            digits.push(body[i] - b'0');
            i += 1;
            seen_digit = true;
        }
        if i < body.len() && body[i] == b'.' {
            i += 1;
            while i < body.len() && body[i].is_ascii_digit() {
                digits.push(body[i] - b'0');
                frac += 1;
                i += 1;
                seen_digit = true;
            }
        }
        if !seen_digit {
            return None;
        }
        let mut exp: i64 = 0;
        if i < body.len() && (body[i] == b'e' || body[i] == b'E') {
            i += 1;
            let eneg = match body.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while i < body.len() && body[i].is_ascii_digit() {
                exp = exp
                    .saturating_mul(10)
                    .saturating_add((body[i] - b'0') as i64);
                i += 1;
            }
            if i == start {
                return None;
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != body.len() {
            return None;
        }
        Some(Numeric::from_digits(neg, &digits, frac - exp))
    }

    /// Builds from decimal digits (most significant first) and a scale that
    /// may be negative (trailing zeros to append).
    fn from_digits(neg: bool, digits: &[u8], scale: i64) -> PgResult<Numeric> {
        let first_nz = digits.iter().position(|&d| d != 0);
        let digits = match first_nz {
            Some(p) => &digits[p..],
            None => &[][..],
        };
        // Accumulate the magnitude in u128 so i128::MIN's magnitude fits.
        let mut u: u128 = 0;
        for &d in digits {
            u = u
                .checked_mul(10)
                .and_then(|m| m.checked_add(d as u128))
                .ok_or_else(overflow)?;
        }
        let mut m: i128 = if neg {
            0i128.checked_sub_unsigned(u).ok_or_else(overflow)?
        } else {
            i128::try_from(u).map_err(|_| overflow())?
        };
        let mut scale = scale;
        if scale < 0 {
            if m != 0 {
                let f = pow10((-scale) as u32).ok_or_else(overflow)?;
                m = m.checked_mul(f).ok_or_else(overflow)?;
            }
            scale = 0;
        }
        if scale > MAX_SCALE as i64 {
            // Drop digits beyond our maximum scale (rounding), as long as the
            // value keeps its magnitude.
            let drop = scale - MAX_SCALE as i64;
            m = match pow10(drop.min(39) as u32) {
                Some(f) => div_round(m, f).ok_or_else(overflow)?,
                None => 0,
            };
            scale = MAX_SCALE as i64;
        }
        Ok(Numeric::from_parts(m, scale as u16))
    }

    /// Adds.
    pub fn checked_add(self, other: Numeric) -> PgResult<Numeric> {
        if self.scale == other.scale {
            let m = self.mantissa().checked_add(other.mantissa());
            return Ok(Numeric::from_parts(m.ok_or_else(overflow)?, self.scale));
        }
        let s = self.scale.max(other.scale);
        let a = self.rescale(s)?.mantissa();
        let b = other.rescale(s)?.mantissa();
        Ok(Numeric::from_parts(
            a.checked_add(b).ok_or_else(overflow)?,
            s,
        ))
    }

    /// Subtracts.
    pub fn checked_sub(self, other: Numeric) -> PgResult<Numeric> {
        if self.scale == other.scale {
            let m = self.mantissa().checked_sub(other.mantissa());
            return Ok(Numeric::from_parts(m.ok_or_else(overflow)?, self.scale));
        }
        let s = self.scale.max(other.scale);
        let a = self.rescale(s)?.mantissa();
        let b = other.rescale(s)?.mantissa();
        Ok(Numeric::from_parts(
            a.checked_sub(b).ok_or_else(overflow)?,
            s,
        ))
    }

    /// Multiplies (result scale = sum of scales, capped at [`MAX_SCALE`]).
    pub fn checked_mul(self, other: Numeric) -> PgResult<Numeric> {
        let m = self
            .mantissa()
            .checked_mul(other.mantissa())
            .ok_or_else(overflow)?;
        let s = self.scale as u32 + other.scale as u32;
        if s > MAX_SCALE as u32 {
            let f = pow10(s - MAX_SCALE as u32).ok_or_else(overflow)?;
            return Ok(Numeric::from_parts(
                div_round(m, f).ok_or_else(overflow)?,
                MAX_SCALE,
            ));
        }
        Ok(Numeric::from_parts(m, s as u16))
    }

    /// Base-10000 weight and first digit of |self| (PostgreSQL's var->weight
    /// of the first nonzero digit and that digit); (0, 0) for zero.
    fn weight_first_digit(self) -> (i32, i128) {
        let m = self.mantissa().unsigned_abs();
        if m == 0 {
            return (0, 0);
        }
        // Pad the fraction to a multiple of 4 digits so groups align with the point.
        let pad = (4 - self.scale as u32 % 4) % 4;
        let frac_groups = (self.scale as u32 + pad) / 4;
        // m * 10^pad may overflow u128; count groups on digits instead.
        let ndigits = count_digits(m) + pad;
        let ngroups = ndigits.div_ceil(4);
        let weight = ngroups as i32 - 1 - frac_groups as i32;
        // First group: the top (ndigits - 4*(ngroups-1)) digits of m*10^pad.
        let top_len = ndigits - 4 * (ngroups - 1);
        let drop = ndigits - top_len; // digits of m*10^pad below the first group
        let first = if drop >= pad {
            m / 10u128.pow(drop - pad)
        } else {
            m * 10u128.pow(pad - drop)
        };
        (weight, first as i128)
    }

    /// Divides with PostgreSQL's result scale (22012 on division by zero).
    pub fn checked_div(self, other: Numeric) -> PgResult<Numeric> {
        if other.is_zero() {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        let (w1, f1) = self.weight_first_digit();
        let (w2, f2) = other.weight_first_digit();
        let mut qweight = w1 - w2;
        if f1 <= f2 {
            qweight -= 1;
        }
        let mut rscale = MIN_SIG_DIGITS - qweight * 4;
        rscale = rscale.max(self.scale as i32).max(other.scale as i32).max(0);
        rscale = rscale.min(MAX_SCALE as i32);
        self.div_scale(other, rscale as u16)
    }

    /// Divides, rounding the result to `rscale` digits.
    pub fn div_scale(self, other: Numeric, rscale: u16) -> PgResult<Numeric> {
        if other.is_zero() {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        // result = a/10^sa / (b/10^sb) = a * 10^(sb - sa) / b; scaled by 10^rscale:
        // q = a * 10^(rscale + sb - sa) / b
        let a = self.mantissa();
        let b = other.mantissa();
        let e = rscale as i32 + other.scale as i32 - self.scale as i32;
        let q = if e >= 0 {
            let f = pow10(e as u32).ok_or_else(overflow)?;
            let n = a.checked_mul(f).ok_or_else(overflow)?;
            div_round(n, b).ok_or_else(overflow)?
        } else {
            let f = pow10((-e) as u32).ok_or_else(overflow)?;
            match b.checked_mul(f) {
                Some(d) => div_round(a, d).ok_or_else(overflow)?,
                None => 0,
            }
        };
        Ok(Numeric::from_parts(q, rscale))
    }

    /// Remainder with the sign of the dividend (truncating division).
    pub fn checked_rem(self, other: Numeric) -> PgResult<Numeric> {
        if other.is_zero() {
            return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
        }
        let s = self.scale.max(other.scale);
        let a = self.rescale(s)?.mantissa();
        let b = other.rescale(s)?.mantissa();
        Ok(Numeric::from_parts(a.checked_rem(b).unwrap_or(0), s))
    }

    /// Negates.
    pub fn checked_neg(self) -> PgResult<Numeric> {
        Ok(Numeric::from_parts(
            self.mantissa().checked_neg().ok_or_else(overflow)?,
            self.scale,
        ))
    }

    /// Absolute value.
    pub fn abs(self) -> PgResult<Numeric> {
        if self.mantissa() < 0 {
            self.checked_neg()
        } else {
            Ok(self)
        }
    }

    /// Rounds half away from zero to an integer, if it fits in i64.
    pub fn to_i64_round(self) -> Option<i64> {
        let r = self.rescale(0).ok()?;
        i64::try_from(r.mantissa()).ok()
    }

    /// Nearest f64 (via the decimal text, which Rust parses correctly rounded).
    pub fn to_f64(self) -> f64 {
        let mut buf = [0u8; 64];
        let n = self.write_to(&mut buf);
        std::str::from_utf8(&buf[..n])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0)
    }

    /// From a float8 as PostgreSQL does (15 significant digits, `%.15g`).
    /// NaN and infinities: 0A000 (hotpair's numeric has no special values).
    pub fn from_f64(f: f64) -> PgResult<Numeric> {
        if f.is_nan() {
            return Err(PgError::unsupported("cannot convert NaN to numeric"));
        }
        if f.is_infinite() {
            return Err(PgError::unsupported("cannot convert infinity to numeric"));
        }
        let s = format!("{:.14e}", f);
        let n = match Numeric::parse(&s) {
            Some(r) => r?,
            None => return Err(overflow()),
        };
        Ok(n.normalized())
    }

    /// Writes the text form into `buf` and returns the length (at most 41
    /// bytes: sign, 39 digits and a point, or sign, `0.` and 38 digits).
    pub fn write_to(self, buf: &mut [u8; 64]) -> usize {
        // Worst case: sign + "0." + 38 digits = 41, or sign + 39 digits + "." = 41.
        let m = self.mantissa();
        let mut digits = [0u8; 40];
        let mut u = m.unsigned_abs();
        let mut nd = 0;
        loop {
            digits[nd] = b'0' + (u % 10) as u8;
            u /= 10;
            nd += 1;
            if u == 0 {
                break;
            }
        }
        // digits[0..nd] are least significant first.
        let scale = self.scale as usize;
        let mut n = 0;
        if m < 0 {
            buf[n] = b'-';
            n += 1;
        }
        if nd <= scale {
            buf[n] = b'0';
            n += 1;
        } else {
            for i in (scale..nd).rev() {
                buf[n] = digits[i];
                n += 1;
            }
        }
        if scale > 0 {
            buf[n] = b'.';
            n += 1;
            for i in (0..scale).rev() {
                buf[n] = if i < nd { digits[i] } else { b'0' };
                n += 1;
            }
        }
        n
    }

    /// Appends PostgreSQL's binary form (ndigits, weight, sign, dscale,
    /// base-10000 digits).
    pub fn write_binary(self, out: &mut bytes::BytesMut) {
        use bytes::BufMut;
        let m = self.mantissa();
        let scale = self.scale as usize;
        // Decimal digits of |m|, most significant first.
        let mut digits = [0u8; 40];
        let mut u = m.unsigned_abs();
        let mut nd = 0;
        while u != 0 {
            digits[nd] = (u % 10) as u8;
            u /= 10;
            nd += 1;
        }
        digits[..nd].reverse();
        let int_len = nd.saturating_sub(scale);
        let frac_len = scale; // fractional digits, left-padded with zeros when nd < scale
                              // Digit at position p (0 = first integer digit), p may be negative for
                              // leading pad; fractional digits follow.
        let digit_at = |pos: isize| -> u8 {
            // pos counts from the first integer digit; integer part has int_len digits
            // ending at pos int_len - 1; fraction occupies int_len .. int_len + frac_len.
            if pos < 0 {
                return 0;
            }
            let pos = pos as usize;
            // Full digit string: [zeros if nd < scale][digits]
            let lead = (int_len + frac_len).saturating_sub(nd);
            if pos < lead || pos >= int_len + frac_len {
                0
            } else {
                digits[pos - lead]
            }
        };
        let int_groups = int_len.div_ceil(4);
        let frac_groups = frac_len.div_ceil(4);
        let mut groups: [i16; 24] = [0; 24];
        let mut ng = 0;
        // Integer groups: the first group may be partial (left pad).
        let int_pad = int_groups * 4 - int_len;
        for g in 0..int_groups + frac_groups {
            let mut v: i16 = 0;
            for k in 0..4 {
                let pos = (g * 4 + k) as isize - int_pad as isize;
                v = v * 10 + digit_at(pos) as i16;
            }
            groups[ng] = v;
            ng += 1;
        }
        let mut weight = int_groups as i32 - 1;
        // Strip leading zero groups (adjusting the weight) and trailing ones.
        let mut start = 0;
        while start < ng && groups[start] == 0 {
            start += 1;
            weight -= 1;
        }
        let mut end = ng;
        while end > start && groups[end - 1] == 0 {
            end -= 1;
        }
        if start == end {
            weight = 0;
        }
        out.put_i16((end - start) as i16);
        out.put_i16(weight as i16);
        out.put_u16(if m < 0 { 0x4000 } else { 0 });
        out.put_u16(self.scale);
        for g in &groups[start..end] {
            out.put_i16(*g);
        }
    }

    /// Parses PostgreSQL's binary form (22P03 on malformed input, 0A000 for
    /// NaN/Infinity, 22003 when it does not fit).
    pub fn from_binary(b: &[u8]) -> PgResult<Numeric> {
        let bad = || {
            PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "invalid numeric in binary input",
            )
        };
        if b.len() < 8 {
            return Err(PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "insufficient data left in message",
            ));
        }
        let ndigits = i16::from_be_bytes([b[0], b[1]]);
        let weight = i16::from_be_bytes([b[2], b[3]]) as i32;
        let sign = u16::from_be_bytes([b[4], b[5]]);
        let dscale = u16::from_be_bytes([b[6], b[7]]);
        if ndigits < 0 || b.len() != 8 + 2 * ndigits as usize {
            return Err(bad());
        }
        match sign {
            0x0000 | 0x4000 => {}
            0xC000 | 0xD000 | 0xF000 => {
                return Err(PgError::unsupported(
                    "numeric NaN and infinity are not supported",
                ))
            }
            _ => return Err(bad()),
        }
        if dscale > 0x3FFF {
            return Err(bad());
        }
        // Expand the base-10000 digits to decimal digits: the value is the
        // integer `dec` × 10^-frac (plus implied trailing integer zeros).
        let nd = ndigits as usize;
        let mut dec: Vec<u8> = Vec::with_capacity(nd * 4 + 4);
        for i in 0..nd {
            let d = i16::from_be_bytes([b[8 + 2 * i], b[9 + 2 * i]]);
            if !(0..10000).contains(&d) {
                return Err(bad());
            }
            let d = d as u16;
            dec.extend_from_slice(&[
                (d / 1000) as u8,
                (d / 100 % 10) as u8,
                (d / 10 % 10) as u8,
                (d % 10) as u8,
            ]);
        }
        let e4 = weight - (ndigits as i32 - 1);
        let mut frac: i64 = 0;
        if e4 >= 0 {
            if nd > 0 {
                if e4 as usize * 4 > 160 {
                    return Err(overflow());
                }
                dec.extend(std::iter::repeat_n(0u8, e4 as usize * 4));
            }
        } else {
            frac = -(e4 as i64) * 4;
        }
        // Round or pad to the display scale.
        let target = dscale.min(MAX_SCALE) as i64;
        let mut round_up = false;
        if frac > target {
            let drop = (frac - target) as usize;
            if drop > dec.len() {
                dec.clear();
            } else {
                round_up = dec[dec.len() - drop] >= 5;
                dec.truncate(dec.len() - drop);
            }
        } else {
            dec.extend(std::iter::repeat_n(0u8, (target - frac) as usize));
        }
        let mut m: i128 = 0;
        for &d in dec.iter().skip_while(|&&d| d == 0) {
            m = m
                .checked_mul(10)
                .and_then(|m| m.checked_add(d as i128))
                .ok_or_else(overflow)?;
        }
        if round_up {
            m = m.checked_add(1).ok_or_else(overflow)?;
        }
        let n = Numeric::from_parts(m, target as u16);
        Ok(if sign == 0x4000 { n.checked_neg()? } else { n })
    }
}

/// Number of decimal digits of a nonzero u128.
fn count_digits(mut m: u128) -> u32 {
    let mut n = 0;
    while m != 0 {
        m /= 10;
        n += 1;
    }
    n
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Numeric {
    /// By value, whatever the scales.
    fn cmp(&self, other: &Numeric) -> Ordering {
        if self.scale == other.scale {
            return self.mantissa().cmp(&other.mantissa());
        }
        let s = self.scale.max(other.scale);
        match (self.rescale(s), other.rescale(s)) {
            (Ok(a), Ok(b)) => a.mantissa().cmp(&b.mantissa()),
            // Rescaling overflowed: that side's magnitude exceeds anything the
            // other side can be, so its sign decides.
            (Err(_), _) => {
                if self.mantissa() < 0 {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (_, Err(_)) => {
                if other.mantissa() < 0 {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
        }
    }
}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let n = self.normalized();
        n.mantissa().hash(state);
        n.scale.hash(state);
    }
}

impl fmt::Display for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        let n = self.write_to(&mut buf);
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Numeric {
        Numeric::parse(s).unwrap().unwrap()
    }

    #[test]
    fn parse_and_print() {
        for (i, o) in [
            ("0", "0"),
            ("1.50", "1.50"),
            ("-0.001", "-0.001"),
            (" 12 ", "12"),
            ("1e5", "100000"),
            ("1.5e-3", "0.0015"),
            (".5", "0.5"),
            ("5.", "5"),
            ("-0", "0"),
            ("+7.0", "7.0"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
        ] {
            assert_eq!(n(i).to_string(), o, "{i}");
        }
        for bad in ["", "abc", "1.2.3", "e5", "1e", "--1", "."] {
            assert!(Numeric::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn arithmetic() {
        assert_eq!(n("1.5").checked_add(n("2.25")).unwrap().to_string(), "3.75");
        assert_eq!(
            n("1.5").checked_sub(n("2.25")).unwrap().to_string(),
            "-0.75"
        );
        assert_eq!(
            n("1.5").checked_mul(n("2.25")).unwrap().to_string(),
            "3.375"
        );
        assert_eq!(
            n("1").checked_div(n("3")).unwrap().to_string(),
            "0.33333333333333333333"
        );
        assert_eq!(
            n("10").checked_div(n("4")).unwrap().to_string(),
            "2.5000000000000000"
        );
        assert_eq!(
            n("1000000000").checked_div(n("3")).unwrap().to_string(),
            "333333333.33333333"
        );
        assert_eq!(
            n("7").checked_div(n("7")).unwrap().to_string(),
            "1.00000000000000000000"
        );
        assert_eq!(
            n("2").checked_div(n("3")).unwrap().to_string(),
            "0.66666666666666666667"
        );
        assert_eq!(n("7.5").checked_rem(n("2")).unwrap().to_string(), "1.5");
        assert_eq!(n("-7").checked_rem(n("2")).unwrap().to_string(), "-1");
        assert!(n("1").checked_div(Numeric::ZERO).is_err());
        assert_eq!(n("2.5").to_i64_round(), Some(3));
        assert_eq!(n("-2.5").to_i64_round(), Some(-3));
        assert_eq!(n("1.0"), n("1.000"));
        assert!(n("1.01") > n("1.001"));
    }

    #[test]
    fn typmod() {
        assert_eq!(n("1.005").apply_typmod(5, 2).unwrap().to_string(), "1.01");
        let e = n("1000").apply_typmod(5, 2).unwrap_err();
        assert_eq!(e.message, "numeric field overflow");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "A field with precision 5, scale 2 must round to an absolute value less than 10^3."
            )
        );
    }

    #[test]
    fn float_conversion() {
        assert_eq!(Numeric::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(
            Numeric::from_f64(1e20).unwrap().to_string(),
            "100000000000000000000"
        );
        assert_eq!(Numeric::from_f64(-2.5).unwrap().to_string(), "-2.5");
        assert_eq!(n("0.1").to_f64(), 0.1);
    }

    #[test]
    fn binary_round_trip_examples() {
        for s in [
            "0",
            "1",
            "-1",
            "10000",
            "12345.6789",
            "0.0001",
            "0.00001",
            "1.50",
            "-99999999.99",
            "1e30",
        ] {
            let v = n(s);
            let mut b = bytes::BytesMut::new();
            v.write_binary(&mut b);
            let back = Numeric::from_binary(&b).unwrap();
            assert_eq!(back.to_string(), v.to_string(), "{s}");
        }
        // 12345.6789 in PostgreSQL: ndigits 2, weight 1, dscale 4, digits 1 2345 6789 → 3 digits
        let mut b = bytes::BytesMut::new();
        n("12345.6789").write_binary(&mut b);
        assert_eq!(
            &b[..],
            &[0, 3, 0, 1, 0, 0, 0, 4, 0, 1, 0x09, 0x29, 0x1a, 0x85]
        );
    }
}
